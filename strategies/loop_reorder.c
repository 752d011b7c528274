/*
 * loop_reorder (9, operator): exchange two loops of a nest.
 *
 * Sites: every pair of loops of every nest (nested nests included).
 * Parameters: `loops=X,Y`, X outer of Y in the nest. Exactness: exact when
 * every dependence keeps its order (deps.c); reassociating when only the
 * order of a + or * accumulation changes (two reduction loops of a sum);
 * pairs that would change results otherwise are not candidates.
 */
#include "kit.h"

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (leir__skip_nest(c, r)) continue;
    uint32_t n = r->nest->nloops;
    if (n < 2) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_LOOP_REORDER_LOOPS,
                   "the nest has %u loop%s; a reorder needs two", n, n == 1 ? "" : "s");
      continue;
    }
    const leir__deps *d = leir__nest_deps(c, i);
    if (!d || !d->ok) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_NEST_UNANALYSABLE,
                   "the dependences of this nest cannot be analysed (more than 64 loops)");
      continue;
    }
    uint8_t order[64], sig[64] = {0};
    for (uint32_t a = 0; a < n && leir__more(c); a++) {
      for (uint32_t b = a + 1; b < n && leir__more(c); b++) {
        for (uint32_t k = 0; k < n; k++) order[k] = (uint8_t)k;
        order[a] = (uint8_t)b;
        order[b] = (uint8_t)a;
        int cls = leir__order_class(d, order, sig, n);
        const char *x = leir__loop_name(c, r, a), *y = leir__loop_name(c, r, b);
        if (cls < 0) {
          if (c->mode == LEIR__MODE_EXPLAIN) {
            snprintf(c->site, sizeof c->site, "nest=%s loops=%s,%s", r->label, x, y);
            leir__reject(c, c->site, LEIR__R_LOOP_DEPENDENCE,
                         "exchanging %s and %s reverses the order of dependent iterations "
                         "(a value computed at one iteration is used at a later one)",
                         x, y);
          }
          continue;
        }
        leir__emit(c, (leir_exactness)cls, "nest=%s loops=%s,%s", r->label, x, y);
        /* a swap is symmetric: accept the pair in either order */
        if (c->mode == LEIR__MODE_MATCH)
          leir__emit(c, (leir_exactness)cls, "nest=%s loops=%s,%s", r->label, y, x);
      }
    }
  }
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  uint32_t n;
  const leir__tok *t = leir__ps_get(ps, LEIR__K_LOOPS, &n);
  int a = r && n == 2 ? leir__ps_loop(c, r, &t[0]) : -1;
  int b = r && n == 2 ? leir__ps_loop(c, r, &t[1]) : -1;
  leir_nest *m = r ? leir__nest_at(out, r->path, r->depth) : NULL;
  if (!m || a < 0 || b < 0) return LEIR_ERR_INTERNAL;
  leir__loop tmp = m->loops[a];
  m->loops[a] = m->loops[b];
  m->loops[b] = tmp;
  return LEIR_OK;
}

const leir__strategy_impl leir__loop_reorder = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOPS),
    .required = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOPS),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_loop_facts,
};
