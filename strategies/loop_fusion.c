/*
 * loop_fusion (12, operator): merge two adjacent loops L^{d}_{O} T^{m}_{X}
 * of a nest whose variables are only ever used together as O*m+X into one
 * loop T^{d*m}_{X}, replacing every O*m+X (and a parenthesized (O*m+X)) by
 * X. The inverse of loop_split and of the splits inside loop_tiling.
 *
 * Sites: every adjacent pair of every nest where the outer loop is serial
 * (L), both variables occur only in O*m+X forms (also m*O+X, X+O*m,
 * X+m*O), at least once, and the fused loop keeps the limits of its kind
 * (B axis limits, V <= vector width, U <= 1024; a P/V/B loop must have
 * independent iterations). The iteration order is unchanged: always exact.
 * Parameters: `loops=O,X`.
 */
#include "kit.h"
#include "visit.h"

/* Does e have the form O*m+X (one of four spellings)? */
static bool is_pattern(const leir_expr *e, uint32_t o, uint32_t x, int64_t m) {
  if (e->kind != LEIR_EXPR_BINARY || e->op != LEIR_OP_ADD) return false;
  for (int side = 0; side < 2; side++) {
    const leir_expr *prod = e->kids[side], *var = e->kids[1 - side];
    if (var->kind != LEIR_EXPR_VAR || var->sym != x) continue;
    if (prod->kind != LEIR_EXPR_BINARY || prod->op != LEIR_OP_MUL) continue;
    for (int s2 = 0; s2 < 2; s2++) {
      const leir_expr *v = prod->kids[s2], *num = prod->kids[1 - s2];
      if (v->kind == LEIR_EXPR_VAR && v->sym == o && num->kind == LEIR_EXPR_NUMBER &&
          num->u.num->is_int && num->u.num->ival == m)
        return true;
    }
  }
  return false;
}

static bool is_pattern_node(const leir_expr *e, uint32_t o, uint32_t x, int64_t m) {
  if (e->kind == LEIR_EXPR_PAREN) return is_pattern(e->kids[0], o, x, m);
  return is_pattern(e, o, x, m);
}

typedef struct fuse {
  leir_program *p; /* replace: where the new variables are built */
  uint32_t o, x;
  int64_t m;
  uint32_t hits;
} fuse;

/* Counts pattern occurrences; stops when O or X is used outside one. */
static int uses_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  fuse *f = v->ud;
  const leir_expr *e = *slot;
  if (is_pattern_node(e, f->o, f->x, f->m)) {
    f->hits++;
    return LEIR__VISIT_SKIP;
  }
  if (e->kind == LEIR_EXPR_VAR && (e->sym == f->o || e->sym == f->x)) return LEIR__VISIT_STOP;
  return LEIR__VISIT_NEXT;
}

static bool nest_ok(const leir_nest *n, uint32_t o, uint32_t x, int64_t m, uint32_t *hits) {
  fuse f = {NULL, o, x, m, 0};
  leir__visit v = LEIR__VISIT_INIT(uses_node, &f);
  bool ok = leir__visit_nest(&v, n);
  *hits += f.hits;
  return ok;
}

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (leir__skip_nest(c, r)) continue;
    uint32_t n = r->nest->nloops;
    if (n < 2) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_LOOP_FUSION_LOOPS,
                   "the nest has %u loop%s; fusion needs two adjacent loops", n,
                   n == 1 ? "" : "s");
      continue;
    }
    for (uint32_t k = 0; k + 1 < n && leir__more(c); k++) {
      const leir__loop *o = &r->nest->loops[k], *x = &r->nest->loops[k + 1];
      const char *on = leir__loop_name(c, r, k), *xn = leir__loop_name(c, r, k + 1);
      if (c->mode == LEIR__MODE_EXPLAIN)
        snprintf(c->site, sizeof c->site, "nest=%s loops=%s,%s", r->label, on, xn);
      if (o->kind != LEIR_LOOP_SERIAL) {
        LEIR__REJECT(c, c->site, LEIR__R_LOOP_FUSION_OUTER_KIND,
                     "the outer loop %s is %c, not a serial L loop", on,
                     leir__loop_kind_letters[o->kind]);
        continue;
      }
      uint32_t hits = 0;
      if (!nest_ok(r->nest, o->sym, x->sym, x->extent, &hits) || hits == 0) {
        LEIR__REJECT(c, c->site, LEIR__R_LOOP_FUSION_PATTERN,
                     "%s and %s are not only used together as %s*%lld+%s", on, xn, on,
                     (long long)x->extent, xn);
        continue;
      }
      int64_t ext;
      if (__builtin_mul_overflow(o->extent, x->extent, &ext) || ext > 2147483647) {
        LEIR__REJECT(c, c->site, LEIR__R_LOOP_EXTENT, "the fused extent is too large");
        continue;
      }
      if (x->kind == LEIR_LOOP_PARALLEL || x->kind == LEIR_LOOP_VECTORIZED ||
          x->kind == LEIR_LOOP_BOUND) {
        /* iterations of the fused loop are independent when those of both
         * loops are (different O: disjoint blocks; same O: different X) */
        char why[256];
        if (!leir__loop_independent(c->a, r->nest, k, why, sizeof why) ||
            !leir__loop_independent(c->a, r->nest, k + 1, why, sizeof why)) {
          LEIR__REJECT(c, c->site, LEIR__R_LOOP_NOT_PARALLEL_SAFE,
                       "the fused loop would be %c but its iterations are not independent (%s)",
                       leir__loop_kind_letters[x->kind], why);
          continue;
        }
      }
      if (x->kind == LEIR_LOOP_VECTORIZED && ext > (int64_t)c->o.vector_width) {
        LEIR__REJECT(c, c->site, LEIR__R_LOOP_VECTOR_WIDTH,
                     "the fused V loop would have extent %lld, above the vector width %u",
                     (long long)ext, c->o.vector_width);
        continue;
      }
      if (x->kind == LEIR_LOOP_UNROLLED && ext > 1024) {
        LEIR__REJECT(c, c->site, LEIR__R_LOOP_UNROLL_EXTENT,
                     "the fused U loop would have extent %lld, above 1024", (long long)ext);
        continue;
      }
      if (x->kind == LEIR_LOOP_BOUND) {
        leir__axis ax = leir__axis_of(xn);
        const char *why = "";
        if (ax != LEIR__AXIS_NONE &&
            !leir__axis_fits(c->p, c->p->nests[r->path[0]], ax, ext, x->sym, &why)) {
          LEIR__REJECT(c, c->site, LEIR__R_LOOP_AXIS_LIMIT, "the fused bound loop %s: %s", xn, why);
          continue;
        }
      }
      leir__emit(c, LEIR_EXACT, "nest=%s loops=%s,%s", r->label, on, xn);
    }
  }
}

static int replace_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  fuse *f = v->ud;
  if (!is_pattern_node(*slot, f->o, f->x, f->m)) return LEIR__VISIT_NEXT;
  *slot = leir__mk_var(f->p, f->x);
  return LEIR__VISIT_SKIP;
}

static void replace_nest(leir_program *p, leir_nest *n, uint32_t o, uint32_t x, int64_t m) {
  fuse f = {p, o, x, m, 0};
  leir__visit v = LEIR__VISIT_INIT(replace_node, &f);
  leir__visit_nest(&v, n);
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  uint32_t nl;
  const leir__tok *lt = leir__ps_get(ps, LEIR__K_LOOPS, &nl);
  int k = r && nl == 2 ? leir__ps_loop(c, r, &lt[0]) : -1;
  if (k < 0 || (uint32_t)k + 1 >= r->nest->nloops) return LEIR_ERR_INTERNAL;
  leir_nest *m = leir__nest_at(out, r->path, r->depth);
  leir__loop o = m->loops[k], x = m->loops[k + 1];
  replace_nest(out, m, o.sym, x.sym, x.extent);
  x.extent *= o.extent;
  for (uint32_t j = (uint32_t)k; j + 1 < m->nloops; j++) m->loops[j] = m->loops[j + 1];
  m->loops[k] = x;
  m->nloops--;
  return LEIR_OK;
}

const leir__strategy_impl leir__loop_fusion = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOPS),
    .required = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOPS),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_loop_facts,
};
