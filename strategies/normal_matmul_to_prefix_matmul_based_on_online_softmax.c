/*
 * normal_matmul_to_prefix_matmul_based_on_online_softmax (43, math; the
 * 44th strategy, which the reference describes but never implements): the
 * product with the output of an online softmax becomes a running, rescaled
 * accumulation inside the softmax's pass, so the softmax matrix P is never
 * stored. It is the second half of flashattention_wo_tiling: applied to
 * what online_softmax makes of a softmax followed by O=O+P*V, it gives
 * the program flashattention_wo_tiling makes of the original (up to fresh
 * names).
 *
 *   R[M_s=-inf;T_s=0;
 *     L^{N}_{k}[F_s=max(M_s,X);
 *               W_s=if_then_else(F_s==-inf,0,exp(X-F_s));
 *               T_s=if_then_else(F_s==M_s,T_s+W_s,T_s*exp(M_s-F_s)+W_s);
 *               M_s=F_s;];
 *     S_s=T_s;                          (only when T is S's f64 accumulator)
 *     L^{N}_{k}[P_u=exp(X-M_s)/S_s;];];
 *   L2[O_o=O_o+P_q*V_v;];
 * becomes the flash-attention nest of flashattention_wo_tiling.c.
 *
 * Sites: a top-level nest N of exactly online_softmax's form (checked by
 * rebuilding it from the tensors it names and comparing the text: M, T, F,
 * W, S, X, P, the loops), X reading none of M, S, T, F, W, P; u one
 * distinct loop variable per loop around P's equation; nest N+1 the product
 * (streaming.h: leir__stream_product_at); P no signature variable and used
 * by no other nest. Parameter: `nest=N` (the site spans N and N+1).
 * Reassociating.
 */
#include <setjmp.h>
#include <stdlib.h>

#include "streaming.h"

typedef struct online {
  uint32_t t;
  const leir_nest *rows, *pass, *norm;
  const leir_expr *ml, *x, *plhs;
  uint32_t m, s, acc, f, w, pp;
  leir__loop loops[LEIR__MAX_LOOPS]; /* rows' loops, then k */
  uint32_t nloops;
  leir__stream_product pr;
} online;

static bool is_tensor(const leir_expr *e) { return e && e->kind == LEIR_EXPR_TENSOR; }

/* Rebuilds online_softmax's nest from o's pieces in a scratch clone of p
 * and compares it with the nest as printed. */
static bool same_as_rebuilt(const leir__sctx *c, const online *o) {
  leir_program *q = NULL;
  if (leir_program_clone(&q, c->p) != LEIR_OK) {
    leir_error_clear();
    return false;
  }
  jmp_buf jb;
  volatile bool same = false;
  leir__strbuf want = LEIR__STRBUF_INIT, have = LEIR__STRBUF_INIT;
  if (setjmp(jb)) goto done;
  q->oom_jmp = &jb;
  const leir_nest *pn = o->pass;
  leir__stream_accum acc = {o->acc, pn->items[2].eq->lhs->dtype, o->acc != o->s};
  bool fresh = acc.fresh;
  leir_nest *rows = leir__new_nest(q, o->rows->nloops, fresh ? 5 : 4);
  for (uint32_t k = 0; k < o->rows->nloops; k++) rows->loops[k] = o->rows->loops[k];
  leir__stream_init(q, rows, 0, o->ml, &acc);
  leir_nest *run = leir__new_nest(q, 1, 4);
  run->loops[0] = pn->loops[0];
  leir__stream_running(q, run, 0, o->ml, o->x, o->f, o->w, &acc);
  uint32_t at = 2;
  rows->items[at].nest = run;
  rows->items[at++].eq = NULL;
  if (fresh) leir__stream_copy_back(q, rows, at++, o->ml, o->s, &acc);
  rows->items[at].nest = (leir_nest *)o->norm;
  rows->items[at].eq = NULL;
  leir__print_nest(&want, q, rows, NULL);
  leir__print_nest(&have, c->p, o->rows, NULL);
  same = !want.failed && !have.failed && want.len == have.len &&
         memcmp(want.data, have.data, want.len) == 0;
done:
  q->oom_jmp = NULL;
  leir__sb_release(&want);
  leir__sb_release(&have);
  leir_program_free(q);
  return same;
}

static bool reads_any(const leir_expr *x, const uint32_t *syms, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (leir__expr_reads_tensor(x, syms[i], NULL)) return true;
  return false;
}

/* The online-softmax nest at t: its pieces, or false with why. */
static bool online_at(const leir__sctx *c, uint32_t t, online *o, char *why, size_t cap) {
  const leir_nest *n = c->p->nests[t];
  o->t = t;
  o->rows = n;
  bool ok = n->nloops >= 1 && n->nloops + 1 < LEIR__MAX_LOOPS &&
            (n->nitems == 4 || n->nitems == 5) && n->items[0].eq && n->items[1].eq &&
            n->items[2].nest && n->items[n->nitems - 1].nest &&
            (n->nitems == 4 || n->items[3].eq);
  if (ok) {
    o->pass = n->items[2].nest;
    o->norm = n->items[n->nitems - 1].nest;
    ok = o->pass->nloops == 1 && o->pass->nitems == 4 && o->norm->nloops == 1 &&
         o->norm->nitems == 1 && o->norm->items[0].eq &&
         o->pass->loops[0].sym == o->norm->loops[0].sym &&
         o->pass->loops[0].extent == o->norm->loops[0].extent;
    for (uint32_t i = 0; ok && i < 4; i++) ok = o->pass->items[i].eq != NULL;
  }
  if (ok) {
    const leir_equation *e0 = o->pass->items[0].eq;
    o->ml = n->items[0].eq->lhs;
    o->m = o->ml->sym;
    o->acc = n->items[1].eq->lhs->sym;
    ok = e0->rhs->kind == LEIR_EXPR_CALL && e0->rhs->op == LEIR_OP_MAX && e0->rhs->n == 2 &&
         is_tensor(o->pass->items[1].eq->lhs);
    if (ok) {
      o->f = e0->lhs->sym;
      o->x = e0->rhs->kids[1];
      o->w = o->pass->items[1].eq->lhs->sym;
      const leir_equation *pe = o->norm->items[0].eq;
      o->plhs = pe->lhs;
      o->pp = pe->lhs->sym;
      const leir_expr *r = pe->rhs;
      ok = r->kind == LEIR_EXPR_BINARY && r->op == LEIR_OP_DIV && is_tensor(r->kids[1]);
      if (ok) o->s = r->kids[1]->sym;
      ok = ok && (n->nitems == 4 ? o->acc == o->s : o->acc != o->s);
    }
  }
  if (!ok) {
    snprintf(why, cap, "nest %u does not have the form online_softmax gives", t);
    return false;
  }
  /* the loops around P's equation, and u one distinct variable per loop */
  o->nloops = 0;
  for (uint32_t k = 0; k < n->nloops; k++) o->loops[o->nloops++] = n->loops[k];
  o->loops[o->nloops++] = o->pass->loops[0];
  uint64_t seen = 0;
  ok = o->plhs->n == o->nloops && o->nloops <= 64;
  for (uint32_t j = 0; ok && j < o->plhs->n; j++) {
    const leir_expr *e = o->plhs->kids[j];
    int at = -1;
    for (uint32_t k = 0; e->kind == LEIR_EXPR_VAR && k < o->nloops; k++)
      if (o->loops[k].sym == e->sym) at = (int)k;
    ok = at >= 0 && !(seen >> at & 1);
    if (ok) seen |= 1ull << at;
  }
  uint32_t mine[6] = {o->m, o->s, o->acc, o->f, o->w, o->pp};
  if (!ok || reads_any(o->x, mine, 6)) {
    snprintf(why, cap, "the subscript of %s is not one distinct loop variable per loop, or X "
             "reads a tensor of the pass", leir__name(c, o->pp));
    return false;
  }
  if (!same_as_rebuilt(c, o)) {
    snprintf(why, cap, "nest %u is not exactly the nest online_softmax gives", t);
    return false;
  }
  return true;
}

static bool site(const leir__sctx *c, const leir__nref *r, online *o, leir__rule *rule, char *why,
                 size_t cap) {
  *rule = LEIR__R_STREAM_NOT_ONLINE;
  if (!online_at(c, r->path[0], o, why, cap)) return false;
  *rule = LEIR__R_STREAM_NO_PRODUCT;
  if (!leir__stream_product_at(c, o->t + 1, o->loops, o->nloops, o->plhs,
                               o->pass->loops[0].sym, o->m, o->s, o->x, &o->pr, why, cap))
    return false;
  *rule = LEIR__R_STREAM_USED;
  if (leir__stream_used_outside(c, o->pp, o->t, o->t + 1)) {
    snprintf(why, cap, "%s is a signature variable or another nest uses it",
             leir__name(c, o->pp));
    return false;
  }
  return true;
}

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (r->depth != 1 || leir__skip_nest(c, r)) continue;
    online o;
    leir__rule rule;
    char why[256];
    if (!site(c, r, &o, &rule, why, sizeof why)) {
      LEIR__REJECT(c, leir__site_nest(c, r), rule, "%s", why);
      continue;
    }
    if (c->status != LEIR_OK) return;
    leir__emit(c, LEIR_REASSOCIATING, "nest=%s", r->label);
  }
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1) return LEIR_ERR_INTERNAL;
  online o;
  leir__rule rule;
  char why[256];
  if (!site(c, r, &o, &rule, why, sizeof why)) return LEIR_ERR_INTERNAL;
  uint32_t t = o.t;
  const leir_nest *n = out->nests[t];
  const leir_nest *pass = n->items[2].nest;
  /* the softmax's loops as one nest: the rows', then k */
  leir_nest *src = leir__new_nest(out, o.nloops, 0);
  for (uint32_t k = 0; k < o.nloops; k++) src->loops[k] = o.loops[k];
  const leir_expr *ml = n->items[0].eq->lhs, *x = pass->items[0].eq->rhs->kids[1];
  leir_nest *rows = leir__stream_flash_build(c, out, src, o.nloops - 1, ml, x, o.s, &o.pr);
  out->nests[t] = rows;
  leir__program_remove_nest(out, t + 1);
  return LEIR_OK;
}

const leir__strategy_impl leir__normal_matmul_to_prefix_matmul_based_on_online_softmax = {
    .keys = LEIR__KEY(LEIR__K_NEST),
    .required = LEIR__KEY(LEIR__K_NEST),
    .enumerate = enumerate,
    .apply = apply,
    .cot = NULL,
    .span = 2,
};
