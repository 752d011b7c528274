/*
 * loop_unrolling (13, operator): mark a serial loop U.
 *
 * Sites: every L loop of every nest with extent <= 1024 (spec §3 limit).
 * Unrolling never changes the order of iterations: always exact.
 * Parameters: `loop=X`. (The reference also overwrites B/P/V kinds; a
 * kind change of an annotated loop is not an unrolling, so only L loops
 * are candidates.)
 */
#include "loop_sites.h"

static void site(leir__sctx *c, const leir__nref *r, uint32_t k) {
  const leir__loop *l = &r->nest->loops[k];
  if (l->extent > 1024) {
    LEIR__REJECT(c, leir__site_loop(c, r, k), LEIR__R_LOOP_UNROLL_EXTENT,
                 "extent %lld is above the unrolling limit of 1024", (long long)l->extent);
    return;
  }
  leir__emit(c, LEIR_EXACT, "nest=%s loop=%s", r->label, leir__loop_name(c, r, k));
}

static void enumerate(leir__sctx *c) { leir__each_serial_loop(c, LEIR__R_LOOP_UNROLLING_LOOPS, site); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__apply_loop_kind(c, ps, out, LEIR_LOOP_UNROLLED);
}

const leir__strategy_impl leir__loop_unrolling = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP),
    .required = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_loop_facts,
};
