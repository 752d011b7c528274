/*
 * loop_vectorization (15, operator): mark a short serial loop V.
 *
 * Sites: every L loop of every nest whose iterations are independent
 * (leir__loop_independent, the backends' rule)
 * and whose extent is at most the vector width (options.vector_width,
 * default 8; the reference uses 4). Exact. Parameters: `loop=X`.
 */
#include "engine.h"

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (leir__skip_nest(c, r)) continue;
    if (r->nest->nloops == 0)
      LEIR__REJECT(c, leir__site_nest(c, r), "loop_vectorization.loops", "the nest has no loops");
    for (uint32_t k = 0; k < r->nest->nloops && leir__more(c); k++) {
      const leir__loop *l = &r->nest->loops[k];
      if (l->kind != LEIR_LOOP_SERIAL) {
        LEIR__REJECT(c, leir__site_loop(c, r, k), "loop.kind",
                     "the loop is %c, not a serial L loop", leir__loop_kind_letters[l->kind]);
        continue;
      }
      if (l->extent > (int64_t)c->o.vector_width) {
        LEIR__REJECT(c, leir__site_loop(c, r, k), "loop.vector-width",
                     "extent %lld is above the vector width %u", (long long)l->extent,
                     c->o.vector_width);
        continue;
      }
      char why[256];
      if (!leir__loop_independent(c->a, r->nest, k, why, sizeof why)) {
        LEIR__REJECT(c, leir__site_loop(c, r, k), "loop.not-parallel-safe",
                     "%s, so its iterations cannot run as SIMD lanes", why);
        continue;
      }
      leir__emit(c, LEIR_EXACT, "nest=%s loop=%s", r->label, leir__loop_name(c, r, k));
    }
  }
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  int k = r ? leir__ps_loop(c, r, leir__ps_get(ps, LEIR__K_LOOP, NULL)) : -1;
  if (k < 0) return LEIR_ERR_INTERNAL;
  leir__nest_at(out, r->path, r->depth)->loops[k].kind = LEIR_LOOP_VECTORIZED;
  return LEIR_OK;
}

const leir__strategy_impl leir__loop_vectorization = {
    LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP),
    LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP), enumerate, apply};
