/*
 * dead_code_elimination (7, graph): remove a top-level nest none of whose
 * results reaches an output.
 *
 * Sites: every top-level nest that writes no signature variable (input or
 * output of the program) and none of whose written tensors is read by a
 * later top-level nest (a read is any tensor access but a left-hand side:
 * values, subscripts and self-updates `X=X+...` all count). Reads are
 * matched by name, which only keeps more nests alive: a nest is removed
 * only when no later nest mentions what it writes as a read. Nests whose
 * removal would make an earlier nest dead are removed one step at a time.
 * Unlike the reference this never fabricates dead code and never removes a
 * write to an output (spec/strategies.md §3). Parameters: `nest=N` (top
 * level). Exact: the outputs are computed by the same operations.
 */
#include <stdlib.h>
#include <string.h>

#include "kit.h"
#include "visit.h"

typedef struct scan {
  uint8_t *mark; /* by symbol */
  uint8_t bit;
  bool lhs_only; /* mark only left-hand roots (writes) */
} scan;

/* Marks the tensors nest n reads (or, with lhs_only, writes). */
static int mark_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  scan *s = v->ud;
  const leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_TENSOR) return LEIR__VISIT_NEXT;
  bool is_lhs = parent == NULL && v->side == 0 && v->depth == 0;
  if (is_lhs == s->lhs_only) s->mark[e->sym] |= s->bit;
  return LEIR__VISIT_NEXT;
}

static void mark_nest(const leir_nest *n, uint8_t *mark, uint8_t bit, bool lhs_only) {
  scan s = {mark, bit, lhs_only};
  leir__visit v = LEIR__VISIT_INIT(mark_node, &s);
  leir__visit_nest(&v, n);
}

enum { READ_LATER = 1, WRITTEN_HERE = 2 };

static void enumerate(leir__sctx *c) {
  const leir_program *p = c->p;
  uint32_t nsym = p->syms.count ? p->syms.count : 1;
  uint8_t *mark = calloc(nsym, 1);
  bool *dead = calloc(p->nnests ? p->nnests : 1, sizeof *dead);
  uint32_t *why = calloc(p->nnests ? p->nnests : 1, sizeof *why);
  if (!mark || !dead || !why) {
    c->status = LEIR_ERR_NOMEM;
    goto done;
  }
  /* backwards: a nest is dead when nothing it writes is known or read later */
  for (uint32_t t = p->nnests; t-- > 0;) {
    const leir_nest *n = p->nests[t];
    mark_nest(n, mark, WRITTEN_HERE, true);
    bool live = false;
    why[t] = LEIR__NOSYM;
    for (uint32_t s = 0; s < p->syms.count; s++) {
      if (!(mark[s] & WRITTEN_HERE)) continue;
      if (!live && (c->known[s] || (mark[s] & READ_LATER))) {
        live = true;
        why[t] = s;
      }
      mark[s] &= (uint8_t)~WRITTEN_HERE;
    }
    dead[t] = !live;
    mark_nest(n, mark, READ_LATER, false);
  }
  /* forwards, in program order */
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (r->depth != 1 || leir__skip_nest(c, r)) continue;
    uint32_t t = r->path[0];
    if (dead[t]) {
      leir__emit(c, LEIR_EXACT, "nest=%s", r->label);
      continue;
    }
    uint32_t s = why[t];
    if (s == LEIR__NOSYM) continue;
    LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_DEAD_CODE_LIVE,
                 c->known[s] ? "the nest writes %s, a variable of the program's signature"
                             : "the nest writes %s, which a later nest reads",
                 leir__name(c, s));
  }
done:
  free(mark);
  free(dead);
  free(why);
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1) return LEIR_ERR_INTERNAL;
  leir__program_remove_nest(out, r->path[0]);
  return LEIR_OK;
}

const leir__strategy_impl leir__dead_code_elimination = {
    .keys = LEIR__KEY(LEIR__K_NEST),
    .required = LEIR__KEY(LEIR__K_NEST),
    .enumerate = enumerate,
    .apply = apply,
    .cot = NULL,
};
