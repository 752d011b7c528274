/*
 * loop_tiling (10, operator): tile two adjacent loops X (extent n1) and Y
 * (extent n2) of a nest: L^{d1}_{o1} L^{d2}_{o2} X^{n1/d1} Y^{n2/d2}, with
 * X -> o1*(n1/d1)+X and Y -> o2*(n2/d2)+Y everywhere in the nest.
 *
 * Sites: every adjacent pair of every nest whose extents both have a
 * divisor pair, where the new order keeps the dependences (deps.c; a
 * reassociating candidate when two reduction loops of a sum are tiled).
 * Parameters: `loops=X,Y factors=d1,d2`, the outer (tile-count) extents,
 * every divisor 1 < d <= sqrt(n) (the reference's domain; every 1 < d < n with
 * LEIR_CANDIDATES_ALL_DIVISORS). New loop names
 * start at alphabet position (number of loops + 1), as in the reference.
 */
#include "kit.h"
#include "loop_sites.h"

#define MAXDIV 256

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (leir__skip_nest(c, r)) continue;
    uint32_t n = r->nest->nloops;
    if (n < 2) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_LOOP_TILING_LOOPS,
                   "the nest has %u loop%s; tiling needs two adjacent loops", n,
                   n == 1 ? "" : "s");
      continue;
    }
    const leir__deps *d = leir__nest_deps(c, i);
    if (!d || !d->ok || n > 62) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_NEST_UNANALYSABLE,
                   "the dependences of this nest cannot be analysed");
      continue;
    }
    for (uint32_t k = 0; k + 1 < n && leir__more(c); k++) {
      const leir__loop *x = &r->nest->loops[k], *y = &r->nest->loops[k + 1];
      const char *xn = leir__loop_name(c, r, k), *yn = leir__loop_name(c, r, k + 1);
      int64_t d1[MAXDIV], d2[MAXDIV];
      uint32_t n1 = leir__split_factors(c, x->extent, d1, MAXDIV);
      uint32_t n2 = leir__split_factors(c, y->extent, d2, MAXDIV);
      if (!n1 || !n2) {
        if (c->mode == LEIR__MODE_EXPLAIN) {
          snprintf(c->site, sizeof c->site, "nest=%s loops=%s,%s", r->label, xn, yn);
          const leir__loop *bad = n1 ? y : x;
          leir__reject(c, c->site, LEIR__R_LOOP_NO_DIVISOR,
                       "extent %lld of loop %s has no divisor pair (d, n/d) with 1 < d <= sqrt(n)",
                       (long long)bad->extent, n1 ? yn : xn);
        }
        continue;
      }
      /* digits of the new order: ..., X.outer, Y.outer, X.inner, Y.inner, ... */
      uint8_t order[64], sig[64];
      uint32_t m = 0;
      for (uint32_t j = 0; j < n; j++) {
        if (j == k) {
          order[m] = (uint8_t)k, sig[m++] = 0;
          order[m] = (uint8_t)(k + 1), sig[m++] = 0;
          order[m] = (uint8_t)k, sig[m++] = 1;
          order[m] = (uint8_t)(k + 1), sig[m++] = 1;
          j++;
        } else {
          order[m] = (uint8_t)j, sig[m++] = 0;
        }
      }
      int cls = leir__order_class(d, order, sig, m);
      if (cls < 0) {
        if (c->mode == LEIR__MODE_EXPLAIN) {
          snprintf(c->site, sizeof c->site, "nest=%s loops=%s,%s", r->label, xn, yn);
          leir__reject(c, c->site, LEIR__R_LOOP_DEPENDENCE,
                       "tiling %s and %s reorders dependent iterations", xn, yn);
        }
        continue;
      }
      for (uint32_t a = 0; a < n1 && leir__more(c); a++)
        for (uint32_t b = 0; b < n2 && leir__more(c); b++)
          leir__emit(c, (leir_exactness)cls, "nest=%s loops=%s,%s factors=%lld,%lld", r->label,
                     xn, yn, (long long)d1[a], (long long)d2[b]);
    }
  }
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  uint32_t nl, nf;
  const leir__tok *lt = leir__ps_get(ps, LEIR__K_LOOPS, &nl);
  const leir__tok *ft = leir__ps_get(ps, LEIR__K_FACTORS, &nf);
  int k = r && nl == 2 ? leir__ps_loop(c, r, &lt[0]) : -1;
  int64_t f1, f2;
  if (k < 0 || nf != 2 || !leir__tok_int(&ft[0], &f1) || !leir__tok_int(&ft[1], &f2))
    return LEIR_ERR_INTERNAL;
  leir_nest *m = leir__nest_at(out, r->path, r->depth);
  leir_nest *tree = out->nests[r->path[0]];
  uint32_t n = m->nloops;
  leir__loop x = m->loops[k], y = m->loops[k + 1];
  int64_t i1 = x.extent / f1, i2 = y.extent / f2;
  uint32_t o1 = leir__fresh_loop(out, tree, (uint64_t)n + 1, NULL, 0);
  uint32_t o2 = leir__fresh_loop(out, tree, (uint64_t)n + 1, &o1, 1);
  leir__loop *loops = leir__palloc(out, (n + 2) * sizeof *loops);
  for (uint32_t j = 0, w = 0; j < n; j++) {
    if (j == (uint32_t)k) {
      loops[w++] = (leir__loop){LEIR_LOOP_SERIAL, o1, f1, LEIR__NOPOS};
      loops[w++] = (leir__loop){LEIR_LOOP_SERIAL, o2, f2, LEIR__NOPOS};
      loops[w] = x;
      loops[w++].extent = i1;
      loops[w] = y;
      loops[w++].extent = i2;
      j++;
    } else {
      loops[w++] = m->loops[j];
    }
  }
  m->loops = loops;
  m->nloops = n + 2;
  leir_expr *e1 = leir__mk_bin(out, LEIR_OP_ADD,
                               leir__mk_bin(out, LEIR_OP_MUL, leir__mk_var(out, o1), leir__mk_int(out, i1)),
                               leir__mk_var(out, x.sym));
  leir_expr *e2 = leir__mk_bin(out, LEIR_OP_ADD,
                               leir__mk_bin(out, LEIR_OP_MUL, leir__mk_var(out, o2), leir__mk_int(out, i2)),
                               leir__mk_var(out, y.sym));
  leir__subst_var(out, m, x.sym, e1);
  leir__subst_var(out, m, y.sym, e2);
  return LEIR_OK;
}

const leir__strategy_impl leir__loop_tiling = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOPS) | LEIR__KEY(LEIR__K_FACTORS),
    .required = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOPS) | LEIR__KEY(LEIR__K_FACTORS),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_loop_facts,
};
