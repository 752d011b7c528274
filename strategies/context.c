/*
 * The context a strategy enumerates in: the program's analysis, every nest
 * with its path and label, the fresh-name counter; the step parameters as
 * the strategies read them.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kit.h"
#include "options.h"

/* ---- nests ------------------------------------------------------------------ */

typedef LEIR__VEC(leir__nref) nref_vec;

static bool add_nest(nref_vec *v, const leir_nest *n, const uint32_t *path, uint32_t depth,
                     uint32_t outer, int32_t parent) {
  if (depth > LEIR__MAX_PATH) return true; /* too deep to address: not a site */
  uint32_t me = (uint32_t)v->len;
  leir__nref *r = LEIR__VEC_PUSH(v);
  if (!r) return false;
  memset(r, 0, sizeof *r);
  r->nest = n;
  r->depth = depth;
  memcpy(r->path, path, depth * sizeof *path);
  r->outer = outer;
  r->parent = parent;
  size_t off = 0;
  for (uint32_t k = 0; k < depth; k++)
    off += (size_t)snprintf(r->label + off, sizeof r->label - off, k ? ".%u" : "%u", path[k]);
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].nest)
      r->has_nested = true;
    else
      r->neqs++;
  }
  uint32_t sub[LEIR__MAX_PATH + 1];
  memcpy(sub, path, depth * sizeof *path);
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (!n->items[k].nest) continue;
    sub[depth] = k;
    if (!add_nest(v, n->items[k].nest, sub, depth + 1, outer + n->nloops, (int32_t)me))
      return false;
  }
  return true;
}

void leir__sctx_free(leir__sctx *c) {
  if (!c) return;
  if (c->deps) {
    for (uint32_t i = 0; i < c->nnests; i++) {
      if (c->deps[i]) free(c->deps[i]->w);
      free(c->deps[i]);
    }
  }
  free(c->deps);
  free(c->nests);
  free(c->known);
  leir__analysis_free(c->a);
  leir__sb_release(&c->sb);
  free(c);
}

leir_status leir__sctx_new(leir__sctx **out, const leir_program *p,
                           const leir_candidates_options *opts) {
  *out = NULL;
  leir_candidates_options o;
  leir_status ost = LEIR__OPTIONS_READ(leir_candidates_options, &o, opts,
                                       LEIR_CANDIDATES_OPTIONS_INIT);
  if (ost != LEIR_OK) return ost;
  if (o.vector_width == 0) o.vector_width = 8;
  if (o.strategy < -1 || o.strategy >= LEIR__NSTRATEGIES)
    return leir__error_arg(NULL, "strategy index %d is out of range", (int)o.strategy);
  leir__sctx *c = calloc(1, sizeof *c);
  if (!c) return leir__error_nomem();
  c->p = p;
  c->o = o;
  leir_status st = leir__analyze_program(p, NULL, &c->a);
  if (st != LEIR_OK) {
    free(c);
    return st;
  }
  uint32_t nsym = p->syms.count ? p->syms.count : 1;
  c->known = calloc(nsym, sizeof *c->known);
  if (!c->known) goto nomem;
  for (uint32_t b = 0; b < c->a->nbuffers; b++)
    if (c->a->buffers[b].decl != LEIR__NONE) c->known[c->a->buffers[b].sym] = true;
  nref_vec v = LEIR__VEC_INIT;
  for (uint32_t t = 0; t < p->nnests; t++) {
    uint32_t path[1] = {t};
    if (!add_nest(&v, p->nests[t], path, 1, 0, -1)) {
      free(v.data);
      goto nomem;
    }
  }
  c->nests = v.data;
  c->nnests = (uint32_t)v.len;
  c->deps = calloc(c->nnests ? c->nnests : 1, sizeof *c->deps);
  if (!c->deps) goto nomem;
  c->next_tensor = leir__first_fresh_tensor(p);
  *out = c;
  return LEIR_OK;
nomem:
  leir__sctx_free(c);
  return leir__error_nomem();
}

/* ---- step parameters ------------------------------------------------------------ */

bool leir__tok_int(const leir__tok *t, int64_t *v) {
  if (!t || t->len == 0 || t->len > 18) return false;
  int64_t x = 0;
  for (uint32_t i = 0; i < t->len; i++) {
    if (t->s[i] < '0' || t->s[i] > '9') return false;
    x = x * 10 + (t->s[i] - '0');
  }
  *v = x;
  return true;
}

bool leir__tok_eq(const leir__tok *t, const char *s) {
  return t && strlen(s) == t->len && memcmp(t->s, s, t->len) == 0;
}

const leir__tok *leir__ps_get(const leir__pstep *ps, leir__key k, uint32_t *ntok) {
  for (uint32_t i = 0; i < ps->nparams; i++)
    if (ps->params[i].key == k) {
      if (ntok) *ntok = ps->params[i].ntok;
      return &ps->toks[ps->params[i].tok0];
    }
  if (ntok) *ntok = 0;
  return NULL;
}

const leir__nref *leir__ps_nest(const leir__sctx *c, const leir__pstep *ps) {
  uint32_t n;
  const leir__tok *t = leir__ps_get(ps, LEIR__K_NEST, &n);
  if (!t || n != 1) return NULL;
  for (uint32_t i = 0; i < c->nnests; i++)
    if (strlen(c->nests[i].label) == t->len && memcmp(c->nests[i].label, t->s, t->len) == 0)
      return &c->nests[i];
  return NULL;
}

int leir__ps_loop(const leir__sctx *c, const leir__nref *r, const leir__tok *t) {
  if (!t) return -1;
  for (uint32_t i = 0; i < r->nest->nloops; i++) {
    uint32_t sym = r->nest->loops[i].sym;
    if (leir__sym_len(c->p, sym) == t->len && memcmp(leir__sym_name(c->p, sym), t->s, t->len) == 0)
      return (int)i;
  }
  return -1;
}

uint32_t leir__ps_tensor(const leir__sctx *c, const leir__tok *t) {
  if (!t) return LEIR__NOSYM;
  return leir__sym_find(c->p, t->s, t->len);
}

leir_nest *leir__nest_at(const leir_program *p, const uint32_t *path, uint32_t depth) {
  if (depth == 0 || path[0] >= p->nnests) return NULL;
  leir_nest *n = p->nests[path[0]];
  for (uint32_t k = 1; k < depth; k++) {
    if (path[k] >= n->nitems || !n->items[path[k]].nest) return NULL;
    n = n->items[path[k]].nest;
  }
  return n;
}
