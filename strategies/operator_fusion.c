/*
 * operator_fusion (0, graph): put the items of two consecutive top-level
 * nests with the same loops into one nest: `L[e1;];L[e2;];` becomes
 * `L[e1;e2;];`, the second nest's loop variables renamed to the first's.
 *
 * Sites: every top-level nest N with a next nest N+1 such that
 *  - both have the same number of loops with the same extents and kinds
 *    (bound loops also the same name, i.e. the same GPU axis);
 *  - no loop inside a nested nest of N+1 has the name of one of N's loops;
 *  - no dependence from an iteration of N to one of N+1 is reversed
 *    (leir__dep_nests_fusable of lib/dependence.c, on index sets: a
 *    producer writing X_{a} and a consumer reading X_{a+1} do not fuse);
 *  - every P, V or B loop of the fused nest passes the backends' own
 *    independence test (leir__dep_loop_independent on the fused nest,
 *    analysed alone, tensors of other nests as inputs:
 *    enclosing loops held, as the CPU backend does, and for B also none
 *    held, as the CUDA backend does), so both accept the result.
 * The reference also accepts only pairs without reductions and changes the
 * scope of tensors not used later to a random `l` or `s` (outputs
 * included); libleir fuses reductions when the dependences allow it and
 * does not change scopes unless asked. Parameters: `nest=N` (the site spans
 * N and N+1), and optionally `scopes=S1,...` (each s or l, every
 * combination) for the tensors the two nests write that no other nest uses,
 * in order of first write (the reference's storage choice: such a tensor
 * lives only inside the fused nest; an output's scope letter is ignored,
 * spec/leir.md §2); not offered when there are more than 4. Exact: every
 * element sees the same operations in the same order.
 */
#include <setjmp.h>
#include <stdlib.h>

#include "dependence.h"
#include "error.h"
#include "kit.h"
#include "visit.h"

static void fuse(leir_program *out, uint32_t t);

/* A P/V/B loop of the fused nest that the backends would not accept (the
 * CPU and CUDA legality test, leir__dep_loop_independent, run on the fused
 * program): its index, or -1; why gets the reason. */
static int rejected_parallel_loop(leir__sctx *c, uint32_t t, char *why, size_t cap) {
  const leir_nest *x = c->p->nests[t];
  bool any = false;
  for (uint32_t k = 0; k < x->nloops; k++)
    if (x->loops[k].kind == LEIR_LOOP_PARALLEL || x->loops[k].kind == LEIR_LOOP_VECTORIZED ||
        x->loops[k].kind == LEIR_LOOP_BOUND)
      any = true;
  if (!any) return -1;
  /* the two nests alone (linear in their size, whatever the program's):
   * tensors the rest of the program writes become inputs, and the test
   * only looks at the fused nest's accesses */
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__print_nest(&b, c->p, c->p->nests[t], NULL);
  leir__print_nest(&b, c->p, c->p->nests[t + 1], NULL);
  leir_program *q = NULL;
  leir_status st = b.failed ? LEIR_ERR_NOMEM : leir_program_parse(&q, b.data, b.len, NULL);
  leir__sb_release(&b);
  if (st != LEIR_OK) {
    leir_error_clear();
    if (st == LEIR_ERR_NOMEM) c->status = LEIR_ERR_NOMEM;
    snprintf(why, cap, "the two nests cannot be analysed alone");
    return 0;
  }
  jmp_buf jb;
  if (setjmp(jb)) {
    leir_program_free(q);
    c->status = LEIR_ERR_NOMEM;
    return 0;
  }
  q->oom_jmp = &jb;
  fuse(q, 0);
  q->oom_jmp = NULL;
  leir__analysis *a = NULL;
  if (leir_program_infer_signature(q) != LEIR_OK || leir__analyze_program(q, NULL, &a) != LEIR_OK) {
    leir_error_clear();
    leir_program_free(q);
    snprintf(why, cap, "the fused nest cannot be analysed alone");
    return 0;
  }
  int found = -1;
  const leir_nest *m = q->nests[0];
  for (uint32_t k = 0; k < m->nloops && found < 0; k++) {
    uint8_t kind = m->loops[k].kind;
    if (kind != LEIR_LOOP_PARALLEL && kind != LEIR_LOOP_VECTORIZED && kind != LEIR_LOOP_BOUND)
      continue;
    if (m->loops[k].extent <= 1) continue;
    /* the CPU backend's test (enclosing loops held) for every kind, and the
     * CUDA one (nothing held) for bound loops */
    if (!leir__dep_loop_independent(a, m, k, LEIR__HOLD_ENCLOSING, NULL, why, cap) ||
        (kind == LEIR_LOOP_BOUND &&
         !leir__dep_loop_independent(a, m, k, LEIR__HOLD_NONE, NULL, why, cap)))
      found = (int)k;
  }
  leir__analysis_free(a);
  leir_program_free(q);
  return found;
}

/* Does a nest inside n (not n itself) have a loop named by one of m's? */
static bool inner_loop_clash(const leir_nest *n, const leir_nest *m, bool top) {
  if (!top)
    for (uint32_t i = 0; i < n->nloops; i++)
      for (uint32_t j = 0; j < m->nloops; j++)
        if (n->loops[i].sym == m->loops[j].sym) return true;
  for (uint32_t k = 0; k < n->nitems; k++)
    if (n->items[k].nest && inner_loop_clash(n->items[k].nest, m, false)) return true;
  return false;
}

#define LEIR__FUSION_MAX_SCOPES 4

static bool tensor_in(const leir_expr *e, uint32_t sym) {
  if (e->kind == LEIR_EXPR_TENSOR && e->sym == sym) return true;
  for (uint32_t k = 0; k < e->n; k++)
    if (tensor_in(e->kids[k], sym)) return true;
  return false;
}

static bool nest_uses(const leir_nest *n, uint32_t sym) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].nest ? nest_uses(n->items[k].nest, sym)
                         : tensor_in(n->items[k].eq->lhs, sym) || tensor_in(n->items[k].eq->rhs, sym))
      return true;
  }
  return false;
}

/* The tensors written directly by equations of nests t and t+1 (in order of
 * first write) that no other nest uses; 0 when there are more than
 * LEIR__FUSION_MAX_SCOPES. */
static uint32_t local_tensors(const leir_program *p, uint32_t t, uint32_t *out) {
  uint32_t k = 0;
  for (uint32_t m = t; m <= t + 1; m++) {
    const leir_nest *n = p->nests[m];
    for (uint32_t i = 0; i < n->nitems; i++) {
      if (!n->items[i].eq) continue;
      uint32_t sym = n->items[i].eq->lhs->sym;
      bool seen = false;
      for (uint32_t j = 0; j < k; j++) seen = seen || out[j] == sym;
      if (seen) continue;
      bool later = false;
      for (uint32_t q = 0; q < p->nnests && !later; q++)
        if (q != t && q != t + 1) later = nest_uses(p->nests[q], sym);
      if (later) continue;
      if (k == LEIR__FUSION_MAX_SCOPES) return 0;
      out[k++] = sym;
    }
  }
  return k;
}

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (r->depth != 1 || leir__skip_nest(c, r)) continue;
    uint32_t t = r->path[0];
    if (t + 1 >= c->p->nnests) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_GRAPH_LAST_NEST,
                   "nest %u is the last nest; there is no next nest to fuse it with", t);
      continue;
    }
    const leir_nest *x = c->p->nests[t], *y = c->p->nests[t + 1];
    bool same = x->nloops == y->nloops && x->nloops > 0;
    for (uint32_t k = 0; same && k < x->nloops; k++)
      same = x->loops[k].extent == y->loops[k].extent && x->loops[k].kind == y->loops[k].kind &&
             (x->loops[k].kind != LEIR_LOOP_BOUND || x->loops[k].sym == y->loops[k].sym);
    if (!same) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_GRAPH_LOOPS_DIFFER,
                   "nests %u and %u do not have the same loops (number, extents, kinds, GPU axes)",
                   t, t + 1);
      continue;
    }
    if (inner_loop_clash(y, x, true)) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_GRAPH_NAMES,
                   "a nest inside nest %u has a loop named like a loop of nest %u", t + 1, t);
      continue;
    }
    char why[256];
    why[0] = '\0';
    if (!leir__dep_nests_fusable(c->a, t, t + 1, x->nloops, why, sizeof why)) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_GRAPH_DEPENDENCE,
                   "nests %u and %u cannot share their loops: %s", t, t + 1, why);
      continue;
    }
    int k = rejected_parallel_loop(c, t, why, sizeof why);
    if (k >= 0) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_GRAPH_PARALLEL,
                   "fused, the %c loop %s would not be independent: %s",
                   leir__loop_kind_letters[x->loops[k].kind], leir__loop_name(c, r, (uint32_t)k),
                   why);
      continue;
    }
    if (c->status != LEIR_OK) return;
    leir__emit(c, LEIR_EXACT, "nest=%s", r->label);
    /* the reference's storage choice: tensors of the fused nest that no
     * other nest uses become s or l (every combination, up to 4 tensors) */
    uint32_t loc[LEIR__FUSION_MAX_SCOPES];
    uint32_t nloc = local_tensors(c->p, t, loc);
    for (uint32_t bits = 0; nloc && bits < (1u << nloc) && leir__more(c); bits++) {
      char sc[LEIR__FUSION_MAX_SCOPES * 2 + 1];
      for (uint32_t j = 0; j < nloc; j++) {
        sc[2 * j] = (bits >> (nloc - 1 - j) & 1) ? 'l' : 's';
        sc[2 * j + 1] = j + 1 < nloc ? ',' : '\0';
      }
      leir__emit(c, LEIR_EXACT, "nest=%s scopes=%s", r->label, sc);
    }
  }
}

typedef struct renamer {
  const leir_nest *from, *to;
} renamer;

static int rename_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  renamer *rn = v->ud;
  leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_VAR) return LEIR__VISIT_NEXT;
  for (uint32_t k = 0; k < rn->from->nloops; k++)
    if (e->sym == rn->from->loops[k].sym) {
      e->sym = rn->to->loops[k].sym;
      break;
    }
  return LEIR__VISIT_NEXT;
}

/* Fuses top-level nests t and t+1 of `out` (builders longjmp on failure). */
static void fuse(leir_program *out, uint32_t t) {
  leir_nest *x = out->nests[t], *y = out->nests[t + 1];
  /* simultaneous renaming: every VAR is looked up in y's original loops */
  renamer rn = {y, x};
  leir__visit v = LEIR__VISIT_INIT(rename_node, &rn);
  leir__visit_nest(&v, y);
  leir_nest *m = leir__new_nest(out, x->nloops, x->nitems + y->nitems);
  if (!m) return;
  for (uint32_t k = 0; k < x->nloops; k++) m->loops[k] = x->loops[k];
  for (uint32_t k = 0; k < x->nitems; k++) m->items[k] = x->items[k];
  for (uint32_t k = 0; k < y->nitems; k++) m->items[x->nitems + k] = y->items[k];
  out->nests[t] = m;
  leir__program_remove_nest(out, t + 1);
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1 || r->path[0] + 1 >= out->nnests) return LEIR_ERR_INTERNAL;
  uint32_t t = r->path[0];
  uint32_t before = out->nnests;
  fuse(out, t);
  if (out->nnests != before - 1) return LEIR_ERR_NOMEM;
  leir_nest *m = out->nests[t];
  uint32_t nsc = 0;
  const leir__tok *sc = leir__ps_get(ps, LEIR__K_SCOPES, &nsc);
  if (sc) {
    uint32_t loc[LEIR__FUSION_MAX_SCOPES];
    uint32_t k = local_tensors(c->p, t, loc);
    if (k != nsc) return LEIR_ERR_INTERNAL;
    for (uint32_t j = 0; j < k; j++) {
      uint32_t sym = leir__sym_find(out, leir__name(c, loc[j]), leir__sym_len(c->p, loc[j]));
      leir__set_tensor_scope(m, sym, sc[j].s[0] == 'l' ? LEIR_SCOPE_LOCAL : LEIR_SCOPE_SHARED);
    }
  }
  return LEIR_OK;
}

const leir__strategy_impl leir__operator_fusion = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_SCOPES),
    .required = LEIR__KEY(LEIR__K_NEST),
    .enumerate = enumerate,
    .apply = apply,
    .cot = NULL,
    .span = 2,
};
