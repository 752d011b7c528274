/* Sites of the loop-annotation strategies (see loop_sites.h). */
#include "loop_sites.h"

#include <stdio.h>

void leir__each_serial_loop(leir__sctx *c, leir__rule no_loops,
                            void (*site)(leir__sctx *c, const leir__nref *r, uint32_t k)) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (leir__skip_nest(c, r)) continue;
    if (r->nest->nloops == 0)
      LEIR__REJECT(c, leir__site_nest(c, r), no_loops, "the nest has no loops");
    for (uint32_t k = 0; k < r->nest->nloops && leir__more(c); k++) {
      const leir__loop *l = &r->nest->loops[k];
      if (l->kind != LEIR_LOOP_SERIAL) {
        LEIR__REJECT(c, leir__site_loop(c, r, k), LEIR__R_LOOP_KIND,
                     "the loop is %c, not a serial L loop", leir__loop_kind_letters[l->kind]);
        continue;
      }
      site(c, r, k);
    }
  }
}

uint32_t leir__split_factors(const leir__sctx *c, int64_t n, int64_t *out, uint32_t cap) {
  if (!(c->o.flags & LEIR_CANDIDATES_ALL_DIVISORS)) return leir__divisors(n, out, cap);
  /* the pairs (d, n/d) with d <= sqrt(n), then their cofactors, ascending */
  int64_t small[256];
  uint32_t k = leir__divisors(n, small, cap < 256 ? cap : 256), m = 0;
  for (uint32_t i = 0; i < k && m < cap; i++) out[m++] = small[i];
  for (uint32_t i = k; i-- > 0 && m < cap;)
    if (small[i] != n / small[i]) out[m++] = n / small[i];
  return m;
}

bool leir__loop_independent_or_reject(leir__sctx *c, const leir__nref *r, uint32_t k,
                                      const char *consequence) {
  char why[256];
  if (leir__loop_independent(c->a, r->nest, k, why, sizeof why)) return true;
  LEIR__REJECT(c, leir__site_loop(c, r, k), LEIR__R_LOOP_NOT_PARALLEL_SAFE, "%s, so %s", why,
               consequence);
  return false;
}

leir_status leir__apply_loop_kind(leir__sctx *c, const leir__pstep *ps, leir_program *out,
                                  leir_loop_kind kind) {
  const leir__nref *r = leir__ps_nest(c, ps);
  int k = r ? leir__ps_loop(c, r, leir__ps_get(ps, LEIR__K_LOOP, NULL)) : -1;
  if (k < 0) return LEIR_ERR_INTERNAL;
  leir__nest_at(out, r->path, r->depth)->loops[k].kind = (uint8_t)kind;
  return LEIR_OK;
}
