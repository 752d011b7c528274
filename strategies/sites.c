/*
 * Site iterators: the nests, equations and sub-expressions a strategy
 * visits, in program order, with their site strings and their lookup from
 * a step's parameters (nest=N eq=K expr=P).
 */
#include <stdio.h>
#include <string.h>

#include "kit.h"
#include "visit.h"

void leir__each_nest(leir__sctx *c, bool (*fn)(leir__sctx *c, const leir__nref *r, void *ud),
                     void *ud) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    if (leir__skip_nest(c, &c->nests[i])) continue;
    if (!fn(c, &c->nests[i], ud)) return;
  }
}

typedef struct eq_walk {
  bool (*fn)(leir__sctx *c, const leir__eqsite *s, void *ud);
  void *ud;
} eq_walk;

static bool eqs_of_nest(leir__sctx *c, const leir__nref *r, void *ud) {
  eq_walk *w = ud;
  for (uint32_t k = 0; k < r->nest->nitems && leir__more(c); k++) {
    if (r->nest->items[k].nest) continue;
    leir__eqsite s = {r, k, r->nest->items[k].eq};
    if (!w->fn(c, &s, w->ud)) return false;
  }
  return true;
}

void leir__each_equation(leir__sctx *c,
                         bool (*fn)(leir__sctx *c, const leir__eqsite *s, void *ud), void *ud) {
  eq_walk w = {fn, ud};
  leir__each_nest(c, eqs_of_nest, &w);
}

typedef struct x_walk {
  leir__sctx *c;
  leir__xsite x;
  bool (*fn)(leir__sctx *c, const leir__xsite *x, void *ud);
  void *ud;
} x_walk;

static int visit_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  x_walk *w = v->ud;
  if (v->depth + 1 > LEIR__MAX_XPATH) return LEIR__VISIT_SKIP; /* too deep to name */
  if (!leir__more(w->c)) return LEIR__VISIT_STOP;
  w->x.e = *slot;
  w->x.parent = parent;
  w->x.depth = v->depth + 1;
  w->x.path[0] = v->side;
  memcpy(w->x.path + 1, v->path, v->depth * sizeof *v->path);
  w->x.in_subscript = v->tensors > 0;
  return w->fn(w->c, &w->x, w->ud) ? LEIR__VISIT_NEXT : LEIR__VISIT_STOP;
}

void leir__each_subexpr(leir__sctx *c, const leir__eqsite *s,
                        bool (*fn)(leir__sctx *c, const leir__xsite *x, void *ud), void *ud) {
  x_walk w;
  memset(&w, 0, sizeof w);
  w.c = c;
  w.x.eq = *s;
  w.fn = fn;
  w.ud = ud;
  leir__visit v = LEIR__VISIT_INIT(visit_node, &w);
  v.side = 0;
  if (!leir__visit_const(&v, s->eq->lhs)) return;
  v.side = 1;
  leir__visit_const(&v, s->eq->rhs);
}

const char *leir__site_eq(leir__sctx *c, const leir__eqsite *s) {
  snprintf(c->site, sizeof c->site, "nest=%s eq=%u", s->r->label, s->item);
  return c->site;
}

void leir__xpath_format(const leir__xsite *x, char *buf, size_t cap) {
  size_t off = 0;
  if (cap) buf[0] = '\0';
  for (uint32_t k = 0; k < x->depth && off < cap; k++)
    off += (size_t)snprintf(buf + off, cap - off, k ? ".%u" : "%u", x->path[k]);
}

const char *leir__site_expr(leir__sctx *c, const leir__xsite *x) {
  int n = snprintf(c->site, sizeof c->site, "nest=%s eq=%u expr=", x->eq.r->label, x->eq.item);
  if (n > 0 && (size_t)n < sizeof c->site)
    leir__xpath_format(x, c->site + n, sizeof c->site - (size_t)n);
  return c->site;
}

bool leir__ps_eq(const leir__sctx *c, const leir__nref *r, const leir__pstep *ps,
                 leir__eqsite *out) {
  (void)c;
  int64_t k;
  if (!r || !leir__tok_int(leir__ps_get(ps, LEIR__K_EQ, NULL), &k)) return false;
  if (k < 0 || (uint64_t)k >= r->nest->nitems || !r->nest->items[k].eq) return false;
  out->r = r;
  out->item = (uint32_t)k;
  out->eq = r->nest->items[k].eq;
  return true;
}

leir_expr **leir__expr_slot(leir_nest *m, uint32_t item, const uint32_t *path, uint32_t depth) {
  if (!m || item >= m->nitems || !m->items[item].eq || depth == 0 || path[0] > 1) return NULL;
  leir_equation *eq = m->items[item].eq;
  leir_expr **slot = path[0] == 0 ? &eq->lhs : &eq->rhs;
  for (uint32_t k = 1; k < depth; k++) {
    if (path[k] >= (*slot)->n) return NULL;
    slot = &(*slot)->kids[path[k]];
  }
  return slot;
}

leir_expr **leir__ps_expr_slot(leir_nest *m, uint32_t item, const leir__pstep *ps) {
  const leir__tok *t = leir__ps_get(ps, LEIR__K_EXPR, NULL);
  if (!t) return NULL;
  uint32_t path[LEIR__MAX_XPATH], depth = 0;
  uint32_t i = 0;
  while (i < t->len) {
    uint32_t j = i;
    while (j < t->len && t->s[j] != '.') j++;
    leir__tok part = {t->s + i, j - i};
    int64_t v;
    if (depth == LEIR__MAX_XPATH || !leir__tok_int(&part, &v) || v > UINT32_MAX) return NULL;
    path[depth++] = (uint32_t)v;
    i = j + 1;
  }
  return leir__expr_slot(m, item, path, depth);
}
