/*
 * loop_binding (16, operator): bind a serial loop X to a GPU axis: the
 * loop becomes B^{n}_{<axis>X} (`ty` + `a` = `tya`), renamed everywhere in
 * the nest (a numbered suffix if that name is taken in the nest).
 *
 * Sites: every L loop of every nest whose iterations are independent
 * (leir__loop_independent, the backends' rule).
 * Parameters: `loop=X axis=A`, A in tx ty tz bx by bz, every axis that no
 * other loop of the same top-level nest uses and whose limits hold
 * (spec/strategies.md §3: threads x,y <= 1024, z <= 64, at most 1024
 * threads per block; blocks y,z <= 65535). Exact.
 */
#include <string.h>

#include "loop_sites.h"

static void site(leir__sctx *c, const leir__nref *r, uint32_t k) {
  const leir__loop *l = &r->nest->loops[k];
  if (!leir__loop_independent_or_reject(c, r, k,
                                        "it cannot be bound to GPU threads or blocks"))
    return;
  const leir_nest *tree = c->p->nests[r->path[0]];
  for (int a = 0; a < 6 && leir__more(c); a++) {
    const char *why = "";
    if (!leir__axis_fits(c->p, tree, (leir__axis)a, l->extent, LEIR__NOSYM, &why)) {
      if (c->mode == LEIR__MODE_EXPLAIN) {
        snprintf(c->site, sizeof c->site, "nest=%s loop=%s axis=%s", r->label,
                 leir__loop_name(c, r, k), leir__axis_names[a]);
        leir__reject(c, c->site, LEIR__R_LOOP_AXIS_LIMIT, "%s", why);
      }
      continue;
    }
    leir__emit(c, LEIR_EXACT, "nest=%s loop=%s axis=%s", r->label, leir__loop_name(c, r, k),
               leir__axis_names[a]);
  }
}

static void enumerate(leir__sctx *c) { leir__each_serial_loop(c, LEIR__R_LOOP_BINDING_LOOPS, site); }

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  int k = r ? leir__ps_loop(c, r, leir__ps_get(ps, LEIR__K_LOOP, NULL)) : -1;
  const leir__tok *ax = leir__ps_get(ps, LEIR__K_AXIS, NULL);
  if (k < 0 || !ax || ax->len != 2) return LEIR_ERR_INTERNAL;
  leir_nest *m = leir__nest_at(out, r->path, r->depth);
  uint32_t old = m->loops[k].sym;
  char name[128];
  snprintf(name, sizeof name, "%.2s%s", ax->s, leir__sym_name(out, old));
  uint32_t sym = leir__fresh_loop_named(out, out->nests[r->path[0]], name);
  m->loops[k].kind = LEIR_LOOP_BOUND;
  leir__rename_var(m, old, sym);
  return LEIR_OK;
}

const leir__strategy_impl leir__loop_binding = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP) | LEIR__KEY(LEIR__K_AXIS),
    .required = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP) | LEIR__KEY(LEIR__K_AXIS),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_loop_facts,
};
