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
 *
 * Partial fusion (LEIR_CANDIDATES_PARTIAL_FUSION, outside the reference's
 * domain): when the two nests cannot share all their loops (different
 * inner loops, or a dependence over an inner loop: softmax's row maximum
 * is complete only after its whole row), they may still share their first
 * K loops: `L_a L_c[e1;]; L_a L_d[e2;];` becomes `L_a[L_c[e1;]; L_d[e2;];];`,
 * each nest's remaining loops a nested nest of the fused one (its items
 * directly when it has no loops left). Offered for the largest K that
 * passes the tests above over the K shared loops, as `nest=N depth=K`,
 * without `scopes` (set_storage_scope changes them afterwards); a loop
 * inside the second nest named like one of the shared loops refuses the
 * site (it would shadow it). Exact, as the full fusion.
 */
#include <setjmp.h>
#include <stdlib.h>

#include "dependence.h"
#include "error.h"
#include "kit.h"
#include "visit.h"

static void fuse(leir_program *out, uint32_t t, uint32_t depth);

/* A P/V/B loop of the fused nest that the backends would not accept (the
 * CPU and CUDA legality test, leir__dep_loop_independent, run on the fused
 * program): its index, or -1; why gets the reason. */
static int rejected_parallel_loop(leir__sctx *c, uint32_t t, uint32_t depth, char *why,
                                  size_t cap) {
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
  fuse(q, 0, depth);
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

/* Does a loop inside n have the name of one of m's first `shared` loops?
 * At the top (n itself) only n's loops from `shared` on count: its first
 * `shared` loops become m's. */
static bool inner_loop_clash(const leir_nest *n, const leir_nest *m, uint32_t shared, bool top) {
  for (uint32_t i = top ? shared : 0; i < n->nloops; i++)
    for (uint32_t j = 0; j < shared; j++)
      if (n->loops[i].sym == m->loops[j].sym) return true;
  for (uint32_t k = 0; k < n->nitems; k++)
    if (n->items[k].nest && inner_loop_clash(n->items[k].nest, m, shared, false)) return true;
  return false;
}

/* Do nests x and y have the same first k loops (extents, kinds, GPU axes)? */
static bool same_loops(const leir_nest *x, const leir_nest *y, uint32_t k) {
  if (k == 0 || x->nloops < k || y->nloops < k) return false;
  for (uint32_t j = 0; j < k; j++)
    if (x->loops[j].extent != y->loops[j].extent || x->loops[j].kind != y->loops[j].kind ||
        (x->loops[j].kind == LEIR_LOOP_BOUND && x->loops[j].sym != y->loops[j].sym))
      return false;
  return true;
}

/* The largest k < min(loops) over which nests t and t+1 fuse (the tests of
 * the full fusion over k shared loops), or 0. */
static uint32_t partial_depth(leir__sctx *c, uint32_t t) {
  const leir_nest *x = c->p->nests[t], *y = c->p->nests[t + 1];
  uint32_t k = x->nloops < y->nloops ? x->nloops : y->nloops;
  if (k == x->nloops && k == y->nloops) k--; /* k == both: the full fusion */
  char why[256];
  for (; k > 0 && c->status == LEIR_OK; k--) {
    if (!same_loops(x, y, k) || inner_loop_clash(y, x, k, true)) continue;
    if (!leir__dep_nests_fusable(c->a, t, t + 1, k, why, sizeof why)) continue;
    if (rejected_parallel_loop(c, t, k, why, sizeof why) >= 0) continue;
    return k;
  }
  return 0;
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

/* Why nests t and t+1 cannot share all their loops: the rule (msg in
 * why), or -1 when they can. */
static int full_fusion_refusal(leir__sctx *c, const leir__nref *r, uint32_t t, char *why,
                               size_t cap) {
  const leir_nest *x = c->p->nests[t], *y = c->p->nests[t + 1];
  if (x->nloops != y->nloops || !same_loops(x, y, x->nloops)) {
    snprintf(why, cap,
             "nests %u and %u do not have the same loops (number, extents, kinds, GPU axes)", t,
             t + 1);
    return LEIR__R_GRAPH_LOOPS_DIFFER;
  }
  if (inner_loop_clash(y, x, x->nloops, true)) {
    snprintf(why, cap, "a nest inside nest %u has a loop named like a loop of nest %u", t + 1, t);
    return LEIR__R_GRAPH_NAMES;
  }
  char dep[256];
  dep[0] = '\0';
  if (!leir__dep_nests_fusable(c->a, t, t + 1, x->nloops, dep, sizeof dep)) {
    snprintf(why, cap, "nests %u and %u cannot share their loops: %s", t, t + 1, dep);
    return LEIR__R_GRAPH_DEPENDENCE;
  }
  int k = rejected_parallel_loop(c, t, x->nloops, dep, sizeof dep);
  if (k >= 0) {
    snprintf(why, cap, "fused, the %c loop %s would not be independent: %s",
             leir__loop_kind_letters[x->loops[k].kind], leir__loop_name(c, r, (uint32_t)k), dep);
    return LEIR__R_GRAPH_PARALLEL;
  }
  return -1;
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
    char why[512];
    why[0] = '\0';
    int rule = full_fusion_refusal(c, r, t, why, sizeof why);
    if (c->status != LEIR_OK) return;
    if (rule >= 0) {
      LEIR__REJECT(c, leir__site_nest(c, r), (leir__rule)rule, "%s", why);
      /* the shared leading loops only, where all of them cannot be */
      if (c->o.flags & LEIR_CANDIDATES_PARTIAL_FUSION) {
        uint32_t k = partial_depth(c, t);
        if (c->status != LEIR_OK) return;
        if (k) leir__emit(c, LEIR_EXACT, "nest=%s depth=%u", r->label, k);
      }
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
  uint32_t n; /* the shared loops */
} renamer;

static int rename_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  renamer *rn = v->ud;
  leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_VAR) return LEIR__VISIT_NEXT;
  for (uint32_t k = 0; k < rn->n; k++)
    if (e->sym == rn->from->loops[k].sym) {
      e->sym = rn->to->loops[k].sym;
      break;
    }
  return LEIR__VISIT_NEXT;
}

/* Nest x's part inside the shared loops: a nest of its loops from `depth`
 * on holding its items, or NULL when it has no loops left (its items go
 * into the fused nest directly). */
static leir_nest *inner_part(leir_program *out, const leir_nest *x, uint32_t depth) {
  if (x->nloops == depth) return NULL;
  leir_nest *n = leir__new_nest(out, x->nloops - depth, x->nitems);
  if (!n) return NULL;
  for (uint32_t k = depth; k < x->nloops; k++) n->loops[k - depth] = x->loops[k];
  for (uint32_t k = 0; k < x->nitems; k++) n->items[k] = x->items[k];
  return n;
}

/* Appends x's part inside the shared loops to m's items at *at. */
static void put_part(leir_nest *m, uint32_t *at, const leir_nest *x, leir_nest *part) {
  if (part) {
    m->items[*at].eq = NULL;
    m->items[(*at)++].nest = part;
    return;
  }
  for (uint32_t k = 0; k < x->nitems; k++) m->items[(*at)++] = x->items[k];
}

/* Fuses top-level nests t and t+1 of `out` over their first `depth` loops
 * (all of them: the full fusion; builders longjmp on failure). */
static void fuse(leir_program *out, uint32_t t, uint32_t depth) {
  leir_nest *x = out->nests[t], *y = out->nests[t + 1];
  /* simultaneous renaming: every VAR is looked up in y's original loops */
  renamer rn = {y, x, depth};
  leir__visit v = LEIR__VISIT_INIT(rename_node, &rn);
  leir__visit_nest(&v, y);
  leir_nest *px = inner_part(out, x, depth), *py = inner_part(out, y, depth);
  if ((x->nloops > depth && !px) || (y->nloops > depth && !py)) return;
  uint32_t items = (px ? 1 : x->nitems) + (py ? 1 : y->nitems);
  leir_nest *m = leir__new_nest(out, depth, items);
  if (!m) return;
  for (uint32_t k = 0; k < depth; k++) m->loops[k] = x->loops[k];
  uint32_t at = 0;
  put_part(m, &at, x, px);
  put_part(m, &at, y, py);
  out->nests[t] = m;
  leir__program_remove_nest(out, t + 1);
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1 || r->path[0] + 1 >= out->nnests) return LEIR_ERR_INTERNAL;
  uint32_t t = r->path[0];
  uint32_t before = out->nnests;
  const leir__tok *dt = leir__ps_get(ps, LEIR__K_DEPTH, NULL);
  uint32_t depth = out->nests[t]->nloops;
  if (dt) {
    /* a candidate of the list (partial_depth checked it) */
    int64_t v;
    if (!leir__tok_int(dt, &v) || v < 1 || v > (int64_t)depth ||
        v > (int64_t)out->nests[t + 1]->nloops)
      return LEIR_ERR_INTERNAL;
    depth = (uint32_t)v;
  }
  fuse(out, t, depth);
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
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_SCOPES) | LEIR__KEY(LEIR__K_DEPTH),
    .required = LEIR__KEY(LEIR__K_NEST),
    .enumerate = enumerate,
    .apply = apply,
    .cot = NULL,
    .span = 2,
};
