/*
 * loop_parallelization (14, operator): mark a serial loop P.
 *
 * Sites: every L loop of every nest whose iterations are independent
 * (leir__loop_independent, the rule the backends apply to P/V/B loops), so
 * the annotation is legal for any backend (spec/leir.md §3.2). Values do not change: exact.
 * Parameters: `loop=X`.
 */
#include "loop_sites.h"

static void site(leir__sctx *c, const leir__nref *r, uint32_t k) {
  if (!leir__loop_independent_or_reject(c, r, k, "its iterations cannot run in parallel")) return;
  leir__emit(c, LEIR_EXACT, "nest=%s loop=%s", r->label, leir__loop_name(c, r, k));
}

static void enumerate(leir__sctx *c) { leir__each_serial_loop(c, LEIR__R_LOOP_PARALLELIZATION_LOOPS, site); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__apply_loop_kind(c, ps, out, LEIR_LOOP_PARALLEL);
}

const leir__strategy_impl leir__loop_parallelization = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP),
    .required = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_loop_facts,
};
