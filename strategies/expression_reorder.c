/*
 * expression_reorder (8, graph): swap two adjacent top-level nests.
 *
 * Sites: every top-level nest N with a next nest N+1 such that no element
 * one of them writes is read or written by the other (index sets, not
 * names: leir__dep_nests_commute of lib/dependence.c), and the two do not
 * write one buffer when either write is an accumulation with an implicit
 * initialization (which depends on which equation writes the buffer
 * first; spec/leir.md §3.4). The reference only checks that no output name of N is an input
 * name of N+1, which misses anti and output dependences. Parameters:
 * `nest=N` (the site spans N and N+1). Exact: every element sees the same
 * operations in the same order.
 */
#include "dependence.h"
#include "kit.h"

/* A buffer written by both top-level nests, one of the writes an
 * accumulation with an implicit initialization (its symbol), or
 * LEIR__NOSYM. Plain writes of one buffer are left to the element test. */
static uint32_t shared_write(const leir__analysis *a, uint32_t n1, uint32_t n2) {
  for (uint32_t i = 0; i < a->neqs; i++) {
    if (a->eqs[i].top != n1) continue;
    for (uint32_t j = 0; j < a->neqs; j++)
      if (a->eqs[j].top == n2 && a->eqs[j].lhs_buffer == a->eqs[i].lhs_buffer &&
          (a->eqs[i].init != LEIR__INIT_NONE || a->eqs[j].init != LEIR__INIT_NONE))
        return a->eqs[i].eq->lhs->sym;
  }
  return LEIR__NOSYM;
}

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (r->depth != 1 || leir__skip_nest(c, r)) continue;
    uint32_t t = r->path[0];
    if (t + 1 >= c->p->nnests) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_GRAPH_LAST_NEST,
                   "nest %u is the last nest; there is no next nest to swap it with", t);
      continue;
    }
    uint32_t s = shared_write(c->a, t, t + 1);
    if (s != LEIR__NOSYM) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_GRAPH_SAME_BUFFER,
                   "nests %u and %u both write %s", t, t + 1, leir__name(c, s));
      continue;
    }
    if (!leir__dep_nests_commute(c->a, t, t + 1)) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_GRAPH_DEPENDENCE,
                   "nest %u reads or writes an element that nest %u writes (or the reverse)",
                   t + 1, t);
      continue;
    }
    leir__emit(c, LEIR_EXACT, "nest=%s", r->label);
  }
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1 || r->path[0] + 1 >= out->nnests) return LEIR_ERR_INTERNAL;
  uint32_t t = r->path[0];
  leir_nest *tmp = out->nests[t];
  out->nests[t] = out->nests[t + 1];
  out->nests[t + 1] = tmp;
  return LEIR_OK;
}

const leir__strategy_impl leir__expression_reorder = {
    .keys = LEIR__KEY(LEIR__K_NEST),
    .required = LEIR__KEY(LEIR__K_NEST),
    .enumerate = enumerate,
    .apply = apply,
    .cot = NULL,
    .span = 2,
};
