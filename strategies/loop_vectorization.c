/*
 * loop_vectorization (15, operator): mark a short serial loop V.
 *
 * Sites: every L loop of every nest whose iterations are independent
 * (leir__loop_independent, the backends' rule)
 * and whose extent is at most the vector width (options.vector_width,
 * default 8; the reference uses 4). Exact. Parameters: `loop=X`.
 */
#include "loop_sites.h"

static void site(leir__sctx *c, const leir__nref *r, uint32_t k) {
  const leir__loop *l = &r->nest->loops[k];
  if (l->extent > (int64_t)c->o.vector_width) {
    LEIR__REJECT(c, leir__site_loop(c, r, k), LEIR__R_LOOP_VECTOR_WIDTH,
                 "extent %lld is above the vector width %u", (long long)l->extent,
                 c->o.vector_width);
    return;
  }
  if (!leir__loop_independent_or_reject(c, r, k, "its iterations cannot run as SIMD lanes"))
    return;
  leir__emit(c, LEIR_EXACT, "nest=%s loop=%s", r->label, leir__loop_name(c, r, k));
}

static void enumerate(leir__sctx *c) { leir__each_serial_loop(c, LEIR__R_LOOP_VECTORIZATION_LOOPS, site); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  return leir__apply_loop_kind(c, ps, out, LEIR_LOOP_VECTORIZED);
}

const leir__strategy_impl leir__loop_vectorization = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP),
    .required = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_loop_facts,
};
