/*
 * The strategy engine: one context per program (analysis, nests, fresh
 * names), the three enumeration modes (list, match, explain), and the
 * public entry points candidates / apply / explain / ground.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "error.h"
#include "options.h"

struct leir_candidates {
  leir__sctx *ctx; /* bound to the listed program */
  size_t n, cap;
  leir_step *steps;
  leir__arena text;
};

struct leir_explanation {
  int strategy;
  size_t ncand;
  size_t n, cap;
  leir_reason *r;
  leir__arena text;
};

/* ---- context -------------------------------------------------------------- */

static bool add_nest(leir__sctx *c, uint32_t *cap, const leir_nest *n, const uint32_t *path,
                     uint32_t depth, uint32_t outer, int32_t parent) {
  if (depth > LEIR__MAX_PATH) return true; /* too deep to address: not a site */
  if (c->nnests == *cap) {
    uint32_t nc = *cap ? *cap * 2 : 16;
    leir__nref *v = realloc(c->nests, nc * sizeof *v);
    if (!v) return false;
    c->nests = v;
    *cap = nc;
  }
  uint32_t me = c->nnests++;
  leir__nref *r = &c->nests[me];
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
    if (!add_nest(c, cap, n->items[k].nest, sub, depth + 1, outer + n->nloops, (int32_t)me))
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
  if (o.strategy < -1 || o.strategy >= LEIR_STRATEGY_COUNT)
    return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0,
                       "strategy index %d is out of range", (int)o.strategy);
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
  uint32_t cap = 0;
  for (uint32_t t = 0; t < p->nnests; t++) {
    uint32_t path[1] = {t};
    if (!add_nest(c, &cap, p->nests[t], path, 1, 0, -1)) goto nomem;
  }
  c->deps = calloc(c->nnests ? c->nnests : 1, sizeof *c->deps);
  if (!c->deps) goto nomem;
  c->next_tensor = leir__first_fresh_tensor(p);
  *out = c;
  return LEIR_OK;
nomem:
  leir__sctx_free(c);
  return leir__error_nomem();
}

void leir__sctx_run(leir__sctx *c, int s) {
  const leir__strategy_impl *impl = leir__strategies[s].impl;
  c->strategy = s;
  if (impl && leir__more(c)) impl->enumerate(c);
}

/* ---- emission ---------------------------------------------------------------- */

static void add_reason(leir__sctx *c, int applies, const char *site, const char *rule,
                       const char *msg, size_t msg_len) {
  leir_explanation *e = c->ex;
  if (!e) return;
  if (e->n == e->cap) {
    size_t nc = e->cap ? e->cap * 2 : 16;
    leir_reason *v = realloc(e->r, nc * sizeof *v);
    if (!v) {
      c->status = LEIR_ERR_NOMEM;
      return;
    }
    e->r = v;
    e->cap = nc;
  }
  char *s1 = leir__arena_strndup(&e->text, site, strlen(site));
  char *s2 = leir__arena_strndup(&e->text, rule, strlen(rule));
  char *s3 = leir__arena_strndup(&e->text, msg, msg_len);
  if (!s1 || !s2 || !s3) {
    c->status = LEIR_ERR_NOMEM;
    return;
  }
  leir_reason *r = &e->r[e->n++];
  r->applies = applies;
  r->site = s1;
  r->rule = s2;
  r->message = s3;
}

static void list_push(leir__sctx *c, leir_exactness cls) {
  struct leir_candidates *l = c->list;
  if (c->o.max_candidates && l->n >= c->o.max_candidates) {
    c->status = leir__error(LEIR_ERR_LIMIT, "limit.candidates", NULL, 0, 0,
                            "more than %llu candidates (max_candidates)",
                            (unsigned long long)c->o.max_candidates);
    return;
  }
  if (l->n == l->cap) {
    size_t nc = l->cap ? l->cap * 2 : 64;
    leir_step *v = realloc(l->steps, nc * sizeof *v);
    if (!v) {
      c->status = LEIR_ERR_NOMEM;
      return;
    }
    l->steps = v;
    l->cap = nc;
  }
  char *t = leir__arena_strndup(&l->text, c->sb.data, c->sb.len);
  if (!t) {
    c->status = LEIR_ERR_NOMEM;
    return;
  }
  leir_step *s = &l->steps[l->n++];
  s->strategy = (uint16_t)c->strategy;
  s->exactness = (uint8_t)cls;
  s->owned = 0;
  s->len = (uint32_t)c->sb.len;
  s->text = t;
}

void leir__emit(leir__sctx *c, leir_exactness cls, const char *fmt, ...) {
  if (!leir__more(c)) return;
  c->sb.len = 0;
  leir__sb_puts(&c->sb, leir__strategies[c->strategy].info.name);
  leir__sb_putc(&c->sb, ' ');
  va_list ap;
  va_start(ap, fmt);
  leir__sb_vprintf(&c->sb, fmt, ap);
  va_end(ap);
  if (c->sb.failed) {
    c->status = LEIR_ERR_NOMEM;
    return;
  }
  switch (c->mode) {
    case LEIR__MODE_LIST: list_push(c, cls); break;
    case LEIR__MODE_MATCH:
      if (c->sb.len == c->want_len && memcmp(c->sb.data, c->want, c->want_len) == 0) {
        c->found = true;
        c->found_class = cls;
      }
      break;
    case LEIR__MODE_EXPLAIN: {
      c->ex->ncand++;
      char msg[64];
      snprintf(msg, sizeof msg, " (%s)", leir_exactness_name(cls));
      size_t params = strlen(leir__strategies[c->strategy].info.name) + 1;
      char site[256];
      snprintf(site, sizeof site, "%.*s", (int)(c->sb.len - params), c->sb.data + params);
      leir__sb_puts(&c->sb, msg);
      add_reason(c, 1, site, "", c->sb.data, c->sb.len);
      break;
    }
  }
}

void leir__reject(leir__sctx *c, const char *site, const char *rule, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  add_reason(c, 0, site, rule, msg, strlen(msg));
}

const char *leir__site_nest(leir__sctx *c, const leir__nref *r) {
  snprintf(c->site, sizeof c->site, "nest=%s", r->label);
  return c->site;
}

const char *leir__site_loop(leir__sctx *c, const leir__nref *r, uint32_t loop) {
  snprintf(c->site, sizeof c->site, "nest=%s loop=%s", r->label, leir__loop_name(c, r, loop));
  return c->site;
}

const char *leir__site_tensor(leir__sctx *c, const leir__nref *r, uint32_t sym) {
  if (r)
    snprintf(c->site, sizeof c->site, "nest=%s tensor=%s", r->label, leir__name(c, sym));
  else
    snprintf(c->site, sizeof c->site, "tensor=%s", leir__name(c, sym));
  return c->site;
}

/* ---- step parameters against the program ------------------------------------ */

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

/* ---- applying --------------------------------------------------------------------- */

static leir_status apply_parsed(leir__sctx *c, const leir__pstep *ps, leir_program **out) {
  *out = NULL;
  const leir__strategy_impl *impl = leir__strategies[ps->strategy].impl;
  if (!impl)
    return leir__error(LEIR_ERR_UNSUPPORTED, "strategy.not-implemented",
                       leir__strategies[ps->strategy].info.name, 0, 0,
                       "%s is not implemented in this version of libleir",
                       leir__strategies[ps->strategy].info.name);
  leir_program *q = NULL;
  leir_status st = leir_program_clone(&q, c->p);
  if (st != LEIR_OK) return st;
  jmp_buf jb;
  if (setjmp(jb)) {
    leir_program_free(q);
    return leir__error_nomem();
  }
  q->oom_jmp = &jb;
  st = impl->apply(c, ps, q);
  q->oom_jmp = NULL;
  if (st != LEIR_OK) {
    leir_program_free(q);
    return st;
  }
  *out = q;
  return LEIR_OK;
}

/* Why a step is not among the candidates: the explanation of the same site. */
static leir_status not_applicable(leir__sctx *c, const leir__pstep *ps, const char *text) {
  leir_explanation ex;
  memset(&ex, 0, sizeof ex);
  leir__arena_init(&ex.text, 1024);
  c->mode = LEIR__MODE_EXPLAIN;
  c->ex = &ex;
  c->found = false;
  leir__sctx_run(c, ps->strategy);
  c->ex = NULL;
  const leir_reason *best = NULL;
  size_t best_len = 0;
  for (size_t i = 0; i < ex.n; i++) {
    const leir_reason *r = &ex.r[i];
    size_t sl = strlen(r->site);
    if (r->applies || !sl || sl <= best_len) continue;
    /* the site's parameters must all appear in the step */
    const char *at = strstr(text, r->site);
    if (at && at > text && at[-1] == ' ' && (at[sl] == ' ' || at[sl] == '\0')) {
      best = r;
      best_len = sl;
    }
  }
  if (!best)
    for (size_t i = 0; i < ex.n && !best; i++)
      if (!ex.r[i].applies && !ex.r[i].site[0]) best = &ex.r[i];
  leir_status st;
  if (best)
    st = leir__error(LEIR_ERR_NOT_APPLICABLE, best->rule, best->site, 0, 0,
                     "'%s' does not apply: %s", text, best->message);
  else
    st = leir__error(LEIR_ERR_NOT_APPLICABLE, "step.not-a-candidate", leir__strategies[ps->strategy].info.name,
                     0, 0,
                     "'%s' does not apply: the program has no such site or the parameters are "
                     "outside the strategy's domain (see 'leir explain %s')",
                     text, leir__strategies[ps->strategy].info.name);
  free(ex.r);
  leir__arena_release(&ex.text);
  return st;
}

/* Validates step text `text` (canonical) on context c; sets *cls. */
static leir_status validate(leir__sctx *c, const leir__pstep *ps, const char *text, size_t len,
                            leir_exactness *cls) {
  if (!leir__strategies[ps->strategy].impl)
    return leir__error(LEIR_ERR_UNSUPPORTED, "strategy.not-implemented",
                       leir__strategies[ps->strategy].info.name, 0, 0,
                       "%s is not implemented in this version of libleir",
                       leir__strategies[ps->strategy].info.name);
  c->mode = LEIR__MODE_MATCH;
  c->want = text;
  c->want_len = len;
  c->want_nest = leir__ps_get(ps, LEIR__K_NEST, NULL);
  c->want_tensor = leir__ps_get(ps, LEIR__K_TENSOR, NULL);
  c->found = false;
  leir__sctx_run(c, ps->strategy);
  c->want_nest = c->want_tensor = NULL;
  if (c->status != LEIR_OK) return c->status == LEIR_ERR_NOMEM ? leir__error_nomem() : c->status;
  if (!c->found) return not_applicable(c, ps, text);
  *cls = c->found_class;
  return LEIR_OK;
}

leir_status leir_step_apply(leir_program **out, const leir_program *program, const leir_step *step,
                            leir_exactness *exactness) {
  if (!out || !program || !step)
    return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0, "NULL argument");
  *out = NULL;
  leir__pstep ps;
  leir_status st = leir__step_parse_text(&ps, step->text, step->len);
  if (st != LEIR_OK) return st;
  leir__sctx *c;
  st = leir__sctx_new(&c, program, NULL);
  if (st != LEIR_OK) return st;
  leir_exactness cls = LEIR_EXACT;
  st = validate(c, &ps, step->text, step->len, &cls);
  if (st == LEIR_OK) st = apply_parsed(c, &ps, out);
  if (st == LEIR_OK && exactness) *exactness = cls;
  leir__sctx_free(c);
  return st;
}

/* ---- candidates ------------------------------------------------------------------- */

static leir_status list_new(struct leir_candidates **out, leir__sctx *c) {
  struct leir_candidates *l = calloc(1, sizeof *l);
  if (!l) return leir__error_nomem();
  l->ctx = c;
  leir__arena_init(&l->text, 4096);
  *out = l;
  return LEIR_OK;
}

void leir_candidates_free(leir_candidates *l) {
  if (!l) return;
  leir__sctx_free(l->ctx);
  free(l->steps);
  leir__arena_release(&l->text);
  free(l);
}

static leir_status run_list(leir__sctx *c, struct leir_candidates *l) {
  c->mode = LEIR__MODE_LIST;
  c->list = l;
  if (c->o.strategy >= 0) {
    leir__sctx_run(c, c->o.strategy);
  } else {
    for (int s = 0; s < LEIR_STRATEGY_COUNT && c->status == LEIR_OK; s++) leir__sctx_run(c, s);
  }
  c->list = NULL;
  if (c->status == LEIR_ERR_NOMEM) return leir__error_nomem();
  return c->status;
}

leir_status leir_candidates_list(leir_candidates **out, const leir_program *program,
                                 const leir_candidates_options *opts) {
  if (!out || !program)
    return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0, "NULL argument");
  *out = NULL;
  leir__sctx *c;
  leir_status st = leir__sctx_new(&c, program, opts);
  if (st != LEIR_OK) return st;
  struct leir_candidates *l = NULL;
  st = list_new(&l, c);
  if (st != LEIR_OK) {
    leir__sctx_free(c);
    return st;
  }
  st = run_list(c, l);
  if (st != LEIR_OK) {
    leir_candidates_free(l);
    return st;
  }
  *out = l;
  return LEIR_OK;
}

size_t leir_candidates_count(const leir_candidates *l) { return l ? l->n : 0; }

const leir_step *leir_candidates_step(const leir_candidates *l, size_t i) {
  return l && i < l->n ? &l->steps[i] : NULL;
}

leir_exactness leir_candidates_exactness(const leir_candidates *l, size_t i) {
  return l && i < l->n ? (leir_exactness)l->steps[i].exactness : LEIR_EXACT;
}

leir_status leir_candidates_apply(leir_program **out, const leir_candidates *l, size_t i) {
  if (!out || !l || i >= l->n)
    return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0, "no candidate %zu", i);
  *out = NULL;
  leir__pstep ps;
  leir_status st = leir__step_parse_text(&ps, l->steps[i].text, l->steps[i].len);
  if (st != LEIR_OK) return st;
  return apply_parsed(l->ctx, &ps, out);
}

/* ---- explanations ------------------------------------------------------------------- */

leir_status leir_strategy_explain(leir_explanation **out, const leir_program *program,
                                  size_t strategy) {
  if (!out || !program || strategy >= LEIR_STRATEGY_COUNT)
    return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0,
                       "NULL argument or strategy index out of range");
  *out = NULL;
  leir_explanation *e = calloc(1, sizeof *e);
  if (!e) return leir__error_nomem();
  e->strategy = (int)strategy;
  leir__arena_init(&e->text, 1024);
  leir__sctx *c;
  leir_status st = leir__sctx_new(&c, program, NULL);
  if (st != LEIR_OK) {
    leir_explanation_free(e);
    return st;
  }
  c->mode = LEIR__MODE_EXPLAIN;
  c->ex = e;
  if (!leir__strategies[strategy].impl) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s is not implemented in this version of libleir",
             leir__strategies[strategy].info.name);
    add_reason(c, 0, "", "strategy.not-implemented", msg, strlen(msg));
  } else {
    leir__sctx_run(c, (int)strategy);
  }
  st = c->status == LEIR_ERR_NOMEM ? leir__error_nomem() : c->status;
  leir__sctx_free(c);
  if (st != LEIR_OK) {
    leir_explanation_free(e);
    return st;
  }
  *out = e;
  return LEIR_OK;
}

void leir_explanation_free(leir_explanation *e) {
  if (!e) return;
  free(e->r);
  leir__arena_release(&e->text);
  free(e);
}

size_t leir_explanation_candidates(const leir_explanation *e) { return e ? e->ncand : 0; }
size_t leir_explanation_count(const leir_explanation *e) { return e ? e->n : 0; }

const leir_reason *leir_explanation_get(const leir_explanation *e, size_t i) {
  return e && i < e->n ? &e->r[i] : NULL;
}

leir_status leir_explanation_text(const leir_explanation *e, char **out, size_t *out_len) {
  if (!e || !out) return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0, "NULL argument");
  leir__strbuf b = LEIR__STRBUF_INIT;
  const char *name = leir__strategies[e->strategy].info.name;
  if (e->ncand)
    leir__sb_printf(&b, "%s applies: %zu candidate%s\n", name, e->ncand, e->ncand == 1 ? "" : "s");
  else
    leir__sb_printf(&b, "%s does not apply\n", name);
  for (size_t i = 0; i < e->n; i++) {
    const leir_reason *r = &e->r[i];
    if (r->applies)
      leir__sb_printf(&b, "  candidate: %s\n", r->message);
    else if (r->site[0])
      leir__sb_printf(&b, "  %s: %s [%s]\n", r->site, r->message, r->rule);
    else
      leir__sb_printf(&b, "  %s [%s]\n", r->message, r->rule);
  }
  *out = leir__sb_finish(&b, out_len);
  return *out ? LEIR_OK : leir__error_nomem();
}

/* ---- grounding ------------------------------------------------------------------------ */

leir_status leir_ground(leir_candidates **out, const leir_program *before,
                        const leir_program *after, const leir_candidates_options *opts) {
  if (!out || !before || !after)
    return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0, "NULL argument");
  *out = NULL;
  /* Compare under one interface: `after` borrows `before`'s signature. */
  leir_program *target = NULL;
  leir_status st = leir_program_clone(&target, after);
  if (st != LEIR_OK) return st;
  if (!after->nsig && before->nsig) {
    leir_tensor_decl decls[256];
    size_t n = leir_program_signature_count(before);
    if (n <= 256) {
      for (size_t i = 0; i < n; i++) leir_program_signature_get(before, i, &decls[i]);
      if (leir_program_set_signature(target, decls, n) != LEIR_OK) leir_error_clear();
    }
  }
  uint64_t want = leir_program_hash_alpha(target);
  leir_program_free(target);
  leir_candidates *all;
  st = leir_candidates_list(&all, before, opts);
  if (st != LEIR_OK) return st;
  struct leir_candidates *hits = NULL;
  st = list_new(&hits, all->ctx);
  if (st != LEIR_OK) {
    leir_candidates_free(all);
    return st;
  }
  all->ctx = NULL; /* moved to `hits` */
  for (size_t i = 0; i < all->n && st == LEIR_OK; i++) {
    leir__pstep ps;
    leir_program *q = NULL;
    st = leir__step_parse_text(&ps, all->steps[i].text, all->steps[i].len);
    if (st == LEIR_OK) st = apply_parsed(hits->ctx, &ps, &q);
    if (st != LEIR_OK) break;
    if (leir_program_hash_alpha(q) == want) {
      hits->ctx->strategy = all->steps[i].strategy;
      hits->ctx->sb.len = 0;
      leir__sb_put(&hits->ctx->sb, all->steps[i].text, all->steps[i].len);
      hits->ctx->list = hits;
      list_push(hits->ctx, (leir_exactness)all->steps[i].exactness);
      hits->ctx->list = NULL;
      if (hits->ctx->status != LEIR_OK) st = leir__error_nomem();
    }
    leir_program_free(q);
  }
  leir_candidates_free(all);
  if (st != LEIR_OK) {
    leir_candidates_free(hits);
    return st;
  }
  *out = hits;
  return LEIR_OK;
}

/* ---- chain of thought ------------------------------------------------------------------ */

leir_status leir_step_cot(char **out, size_t *out_len, const leir_program *program,
                          const leir_step *step) {
  if (!out || !program || !step)
    return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0, "NULL argument");
  *out = NULL;
  leir_program *after = NULL;
  leir_status st = leir_step_apply(&after, program, step, NULL);
  if (st != LEIR_OK) return st;
  leir__pstep ps;
  st = leir__step_parse_text(&ps, step->text, step->len);
  leir__strbuf b = LEIR__STRBUF_INIT;
  if (st == LEIR_OK) st = leir__cot(&b, program, after, &ps);
  leir_program_free(after);
  if (st != LEIR_OK) {
    leir__sb_release(&b);
    return st;
  }
  *out = leir__sb_finish(&b, out_len);
  return *out ? LEIR_OK : leir__error_nomem();
}
