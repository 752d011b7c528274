/*
 * Sites shared by the loop-annotation strategies (loop_unrolling,
 * loop_parallelization, loop_vectorization, loop_binding): each marks one
 * serial loop of a nest with another kind, so they visit the same loops,
 * reject the same way, and apply the same way.
 */
#ifndef LEIR_STRATEGIES_LOOP_SITES_H
#define LEIR_STRATEGIES_LOOP_SITES_H

#include "kit.h"

/* Calls site(c, r, k) for every L loop k of every nest r the context
 * visits, after rejecting nests without loops (rule `no_loops`, the
 * strategy's "STRATEGY.loops") and loops of another kind (rule "loop.kind"). */
void leir__each_serial_loop(leir__sctx *c, leir__rule no_loops,
                            void (*site)(leir__sctx *c, const leir__nref *r, uint32_t k));

/* True when the iterations of loop k are independent (leir__loop_independent,
 * the rule the backends apply to P/V/B loops); otherwise rejects the site
 * with rule "loop.not-parallel-safe": "<why>, so <consequence>". */
bool leir__loop_independent_or_reject(leir__sctx *c, const leir__nref *r, uint32_t k,
                                      const char *consequence);

/* Outer extents loop_split and loop_tiling offer for extent n, ascending:
 * 1 < d <= sqrt(n) (the reference), or with LEIR_CANDIDATES_ALL_DIVISORS
 * every 1 < d < n. At most cap. */
uint32_t leir__split_factors(const leir__sctx *c, int64_t n, int64_t *out, uint32_t cap);

/* Applies `loop=X` of `nest=N`: the loop becomes `kind`. */
leir_status leir__apply_loop_kind(leir__sctx *c, const leir__pstep *ps, leir_program *out,
                                  leir_loop_kind kind);

#endif
