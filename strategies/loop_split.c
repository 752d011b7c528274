/*
 * loop_split (11, operator): split loop X (extent n) of a nest into
 * L^{d}_{o} X^{n/d}, with X -> o*(n/d)+X everywhere in the nest.
 *
 * Sites: every loop of every nest whose extent has a divisor pair; the
 * iteration order does not change, so every split is exact (reduction
 * loops included; the reference splits only loops of the output's
 * subscript). Parameters: `loop=X factor=d`, the outer extent, every
 * divisor 1 < d <= sqrt(n) (every 1 < d < n with
 * LEIR_CANDIDATES_ALL_DIVISORS, leir__split_factors). The new loop is named at alphabet position
 * (number of loops + 1), skipping names the nest uses.
 */
#include "kit.h"
#include "loop_sites.h"

#define MAXDIV 256

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (leir__skip_nest(c, r)) continue;
    if (r->nest->nloops == 0)
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_LOOP_SPLIT_LOOPS, "the nest has no loops");
    for (uint32_t k = 0; k < r->nest->nloops && leir__more(c); k++) {
      int64_t dv[MAXDIV];
      uint32_t nd = leir__split_factors(c, r->nest->loops[k].extent, dv, MAXDIV);
      if (!nd) {
        LEIR__REJECT(c, leir__site_loop(c, r, k), LEIR__R_LOOP_NO_DIVISOR,
                     "extent %lld has no divisor pair (d, n/d) with 1 < d <= sqrt(n)",
                     (long long)r->nest->loops[k].extent);
        continue;
      }
      for (uint32_t j = 0; j < nd && leir__more(c); j++)
        leir__emit(c, LEIR_EXACT, "nest=%s loop=%s factor=%lld", r->label,
                   leir__loop_name(c, r, k), (long long)dv[j]);
    }
  }
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  int k = r ? leir__ps_loop(c, r, leir__ps_get(ps, LEIR__K_LOOP, NULL)) : -1;
  int64_t f;
  if (k < 0 || !leir__tok_int(leir__ps_get(ps, LEIR__K_FACTOR, NULL), &f) || f < 1)
    return LEIR_ERR_INTERNAL;
  leir_nest *m = leir__nest_at(out, r->path, r->depth);
  uint32_t n = m->nloops;
  leir__loop x = m->loops[k];
  int64_t inner = x.extent / f;
  uint32_t o = leir__fresh_loop(out, out->nests[r->path[0]], (uint64_t)n + 1, NULL, 0);
  leir__loop *loops = leir__palloc(out, (n + 1) * sizeof *loops);
  for (uint32_t j = 0, w = 0; j < n; j++) {
    if (j == (uint32_t)k) {
      loops[w++] = (leir__loop){LEIR_LOOP_SERIAL, o, f, LEIR__NOPOS};
      loops[w] = x;
      loops[w++].extent = inner;
    } else {
      loops[w++] = m->loops[j];
    }
  }
  m->loops = loops;
  m->nloops = n + 1;
  leir_expr *e = leir__mk_bin(out, LEIR_OP_ADD,
                              leir__mk_bin(out, LEIR_OP_MUL, leir__mk_var(out, o), leir__mk_int(out, inner)),
                              leir__mk_var(out, x.sym));
  leir__subst_var(out, m, x.sym, e);
  return LEIR_OK;
}

const leir__strategy_impl leir__loop_split = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP) | LEIR__KEY(LEIR__K_FACTOR),
    .required = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP) | LEIR__KEY(LEIR__K_FACTOR),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_loop_facts,
};
