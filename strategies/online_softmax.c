/*
 * online_softmax (41, math): a softmax written as three nests (maximum, sum
 * of exponentials, normalization) becomes one nest over the rows whose
 * normalizers come from one pass with a running maximum and a rescaled
 * running sum, followed by the pass that writes the output:
 *
 *   L[M_s=max(M_s,X);];
 *   L[S_s=S_s+exp(X-M_s);];
 *   L[P_u=exp(X-M_s)/S_s;];
 * becomes (R = the loops without the reduction loop k, in their order)
 *   R[M_s=-inf;S_s=0;
 *     L^{N}_{k}[F_s=max(M_s,X);
 *               S_s=if_then_else(F_s==-inf,0,S_s*exp(M_s-F_s)+exp(X-F_s));
 *               M_s=F_s;];
 *     L^{N}_{k}[P_u=exp(X-M_s)/S_s;];];
 * F is a fresh tensor with M's dtype and scope. When S is narrower than
 * f64 the sum runs in a fresh f64 tensor T (T in place of S, then S_s=T_s;
 * after the first inner nest; streaming.h). Each row reads X twice
 * instead of three times, in one kernel; M and S end with the same values
 * as before. The -inf guard is that of #40 (a masked prefix keeps S at 0).
 *
 * state=prefix: the reference's form (7.19): the scan nest of #40's
 * prefix form (prefix arrays M_{..k..} and T_{..k..} over k, guarded where
 * X can be -inf), the sum nest dropped, and the normalization (and every
 * later nest) reading M_{..N-1..} and T_{..N-1..} for M_s and S_s:
 *   L[M_{..k..}=max(...);T_{..k..}=...;];
 *   L[P_u=exp(X-M_{..N-1..})/T_{..N-1..};];
 * Both arrays cost N elements per row where the running form keeps one;
 * S disappears, so it must be no signature variable, written by nest N+1
 * only (and M as for #40; stream.prefix-shape).
 *
 * acc=native (with or without state=prefix): the sum in S's own dtype
 * instead of f64, the reference's spelling (S itself in the running form;
 * T in S's dtype in the prefix form); refused where S is f64
 * (stream.acc-f64). acc=native lanes=8: the running pass in 8 interleaved
 * lanes on a V loop, combined per row (apply_lanes; stream.lanes where N
 * is no multiple of 8 above 8). docs/streaming.md.
 *
 * Sites: a #40 site at nest N (streaming.h) whose nest N+2 has the same
 * loops and computes P_u=exp(X-M_s)/S_s with the same X and s, u one
 * distinct loop variable per loop (each iteration writes its own element,
 * so moving k inside changes no value). Parameters: `nest=N` (the site
 * spans N..N+2; with state=prefix also the later nests that read M or S),
 * `state=prefix`, `acc=native`, `lanes=8`. Reassociating (the rescaled sum).
 */
#include "streaming.h"

/* The lane count of acc=native lanes=L: 8 floats, one AVX register of
 * f32 (two SSE ones); more lanes would only add rescalings at the end. */
#define LANES 8

static bool site(const leir__sctx *c, const leir__nref *r, leir__stream_max *mx, uint32_t *s,
                 uint32_t *pp, leir__rule *rule, char *why, size_t cap) {
  if (!leir__stream_max_at(c, r->path[0], false, mx, rule, why, cap)) return false;
  if (mx->n->nloops < 2) {
    *rule = LEIR__R_STREAM_ROWS;
    snprintf(why, cap, "%s has no row loop (a scalar maximum)", leir__name(c, mx->m));
    return false;
  }
  *rule = LEIR__R_STREAM_NO_SUM;
  if (!leir__stream_sum_at(c, mx, mx->t + 1, s, why, cap)) return false;
  *rule = LEIR__R_STREAM_NO_NORMALIZE;
  return leir__stream_div_at(c, mx, *s, mx->t + 2, pp, why, cap);
}

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (r->depth != 1 || leir__skip_nest(c, r)) continue;
    leir__stream_max mx;
    uint32_t s, pp;
    leir__rule rule;
    char why[256];
    if (!site(c, r, &mx, &s, &pp, &rule, why, sizeof why)) {
      LEIR__REJECT(c, leir__site_nest(c, r), rule, "%s", why);
      continue;
    }
    leir__emit(c, LEIR_REASSOCIATING, "nest=%s", r->label);
    bool prefix = leir__stream_prefix_ok(c, &mx, s, true, why, sizeof why);
    if (prefix) leir__emit(c, LEIR_REASSOCIATING, "nest=%s state=prefix", r->label);
    else LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_STREAM_PREFIX_SHAPE, "%s", why);
    /* the same forms with the sum in the program's dtype (the reference's),
     * and the lane-parallel running form */
    if (leir__stream_sum_is_f64(c, mx.t + 1)) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_STREAM_ACC_F64,
                   "%s is f64: acc=native would be the f64 candidate again", leir__name(c, s));
      continue;
    }
    leir__emit(c, LEIR_REASSOCIATING, "nest=%s acc=native", r->label);
    if (prefix) leir__emit(c, LEIR_REASSOCIATING, "nest=%s state=prefix acc=native", r->label);
    int64_t n = mx.n->loops[mx.k].extent;
    if (n % LANES || n <= LANES)
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_STREAM_LANES,
                   "the reduced loop has %lld iterations, not a multiple of %d above it",
                   (long long)n, LANES);
    else
      leir__emit(c, LEIR_REASSOCIATING, "nest=%s acc=native lanes=%d", r->label, LANES);
  }
}

/* state=prefix: the scan nest, the sum nest dropped, M and S read at N-1 */
static leir_status apply_prefix(leir__sctx *c, const leir__stream_max *mx, uint32_t s,
                                bool native, leir_program *out) {
  uint32_t t = mx->t;
  const leir_nest *src = out->nests[t];
  const leir_equation *meq = src->items[0].eq;
  leir__stream_prefix pl;
  leir__stream_prefix_layout(mx, &pl);
  uint32_t tsym = leir__tensor_sym(out, c->next_tensor);
  const leir_expr *slhs = out->nests[t + 1]->items[0].eq->lhs;
  uint8_t tdt = native ? slhs->dtype : LEIR_F64, tsc = slhs->scope;
  bool guard = leir__stream_may_be_neg_inf(c, leir__stream_x(mx));
  leir_nest *scan = leir__stream_nest_without(out, src, -1, 2);
  for (uint32_t k = 0; k < src->nloops; k++) scan->loops[k].pos = src->loops[k].pos;
  leir__stream_prefix_scan(out, meq, &pl, tsym, tdt, tsc, guard, scan);
  leir__stream_prefix_reads(out, t + 2, &pl, mx->m, mx->m, meq->lhs->dtype, meq->lhs->scope);
  leir__stream_prefix_reads(out, t + 2, &pl, s, tsym, tdt, tsc);
  out->nests[t] = scan;
  leir__program_remove_nest(out, t + 1);
  return LEIR_OK;
}

/* An access of tensor sym (dtype dt, local) with row's subscript and the
 * lane variable l appended. */
static leir_expr *lane_access(leir_program *out, const leir_expr *row, uint32_t sym, uint8_t dt,
                              uint32_t l) {
  leir_expr *e = leir__new_tensor(out, sym, (leir_dtype)dt, LEIR_SCOPE_LOCAL, row->n + 1);
  for (uint32_t j = 0; j < row->n; j++) e->kids[j] = leir__copy_expr(out, out, row->kids[j]);
  e->kids[row->n] = leir__mk_var(out, l);
  return e;
}

/* max(F,-3.4028234663852886e38): F, or float's lowest finite value where F
 * is -inf. Narrow equations compute in float (docs/verification.md), so
 * the literal is finite whatever the dtype. */
static leir_expr *clamped(leir_program *out, const leir_expr *like, uint32_t f) {
  static const char lowest[] = "3.4028234663852886e38";
  return leir__stream_call2(
      out, LEIR_OP_MAX, leir__stream_tensor(out, like, f),
      leir__new_unary(out, LEIR_EXPR_NEG, leir__new_number(out, lowest, sizeof lowest - 1)));
}

/* The running equations of one lane, without a branch (if_then_else is
 * lazy, a branch in C, and the CPU backend compiles without loop
 * if-conversion, so a V loop with one does not vectorize):
 *   F=max(G,X); W=exp(X-max(F,lowest)); H=H*exp(G-max(F,lowest))+W; G=F;
 * While F is -inf (a masked prefix) X and G are -inf too, so both
 * exponents are -inf and H stays 0 where exp(-inf - -inf) would be NaN;
 * once F is finite, max(F,lowest) is F and an unchanged maximum scales H
 * by exp(0) = 1 exactly: the values of leir__stream_running's guarded
 * form, at two exps per element instead of one (in vector lanes). */
static void lane_running(leir_program *out, leir_nest *body, const leir_expr *glike,
                         const leir_expr *x, uint32_t f, uint32_t w,
                         const leir__stream_accum *t) {
#define G_ (leir__stream_tensor(out, glike, glike->sym))
#define F_ (leir__stream_tensor(out, glike, f))
#define W_ (leir__stream_tensor(out, glike, w))
#define H_ (leir__stream_acc(out, glike, t))
#define X_ (leir__copy_expr(out, out, x))
  leir__stream_set_eq(out, body, 0, F_, leir__stream_call2(out, LEIR_OP_MAX, G_, X_));
  leir__stream_set_eq(out, body, 1, W_,
                      leir__stream_call1(out, LEIR_OP_EXP,
                                         leir__mk_bin(out, LEIR_OP_SUB, X_, clamped(out, glike, f))));
  leir_expr *scale = leir__stream_call1(
      out, LEIR_OP_EXP, leir__mk_bin(out, LEIR_OP_SUB, G_, clamped(out, glike, f)));
  leir__stream_set_eq(out, body, 2, H_,
                      leir__mk_bin(out, LEIR_OP_ADD, leir__mk_bin(out, LEIR_OP_MUL, H_, scale), W_));
  leir__stream_set_eq(out, body, 3, G_, F_);
#undef G_
#undef F_
#undef W_
#undef H_
#undef X_
}

/* acc=native lanes=L: R[ V^{L}_{l}[G_{s,l}=-inf;H_{s,l}=0;];
 *                        L^{N/L}_{j}V^{L}_{l}[running equations on G, H with k=j*L+l];
 *                        M_s=-inf; L^{L}_{l}[M_s=max(M_s,G_{s,l});];
 *                        S_s=0; L^{L}_{l}[S_s=S_s+H_{s,l}*exp(G_{s,l}-M_s);];
 *                        L^{N}_{k}[P_u=exp(X-M_s)/S_s;]; ]
 * (the running equations: lane_running). Each lane is the running form of
 * one interleaved slice of the row (an element's rounding happens in its
 * lane's sum, in S's dtype); a lane that saw only -inf contributes 0 (its
 * H is 0 and exp(-inf - M) is 0) unless M is -inf too, the entirely masked
 * row, where S and P are NaN as in the original. The lane tensors are
 * local: L values per row. */
static leir_status apply_lanes(leir__sctx *c, const leir__stream_max *mx, uint32_t s,
                               leir_program *out) {
  uint32_t t = mx->t;
  const leir_nest *src = out->nests[t];
  const leir_equation *eq = src->items[0].eq;
  const leir_expr *ml = eq->lhs, *slhs = out->nests[t + 1]->items[0].eq->lhs;
  uint8_t mdt = ml->dtype, sdt = slhs->dtype;
  uint64_t next = c->next_tensor;
  uint32_t g = leir__tensor_sym(out, next++), h = leir__tensor_sym(out, next++);
  uint32_t f = leir__tensor_sym(out, next++), w = leir__tensor_sym(out, next++);
  uint32_t j = leir__fresh_loop(out, src, 0, NULL, 0);
  uint32_t l = leir__fresh_loop(out, src, 0, &j, 1);
  const leir__loop *kl = &src->loops[mx->k];
  leir__loop lane = {LEIR_LOOP_VECTORIZED, l, LANES, LEIR__NOPOS};
  leir__loop outer = {LEIR_LOOP_SERIAL, j, kl->extent / LANES, LEIR__NOPOS};
  leir__stream_accum hacc = {h, sdt, true};
  leir_expr *glike = lane_access(out, ml, g, mdt, l);

  leir_nest *rows = leir__stream_nest_without(out, src, (int)mx->k, 7);
  for (uint32_t k = 0, i = 0; k < src->nloops; k++)
    if (k != mx->k) rows->loops[i++].pos = src->loops[k].pos;
  /* the lanes' initial values */
  leir_nest *init = leir__new_nest(out, 1, 2);
  init->loops[0] = lane;
  leir__stream_init(out, init, 0, glike, &hacc);
  /* the running pass, one lane per V iteration */
  leir_nest *run = leir__new_nest(out, 1, 1);
  run->loops[0] = outer;
  leir_nest *inner = leir__new_nest(out, 1, 4);
  inner->loops[0] = lane;
  lane_running(out, inner, glike, eq->rhs->kids[1], f, w, &hacc);
  run->items[0].nest = inner;
  run->items[0].eq = NULL;
  leir_expr *kexpr = leir__mk_bin(out, LEIR_OP_ADD,
                                  leir__mk_bin(out, LEIR_OP_MUL, leir__mk_var(out, j),
                                               leir__mk_int(out, LANES)),
                                  leir__mk_var(out, l));
  leir__subst_var(out, run, kl->sym, kexpr);
  /* M_s=-inf; L^{L}_{l}[M_s=max(M_s,G_{s,l});] */
  leir_nest *mcomb = leir__new_nest(out, 1, 1);
  mcomb->loops[0] = lane;
  mcomb->loops[0].kind = LEIR_LOOP_SERIAL;
  leir__stream_set_eq(out, mcomb, 0, leir__copy_expr(out, out, ml),
                      leir__stream_call2(out, LEIR_OP_MAX, leir__copy_expr(out, out, ml),
                                         lane_access(out, ml, g, mdt, l)));
  /* S_s=0; L^{L}_{l}[S_s=S_s+H_{s,l}*exp(G_{s,l}-M_s);] (no guard: a lane that saw only
   * -inf has H=0 and adds 0*exp(-inf - M) = 0 while M is finite; where M is -inf the row is
   * masked entirely and S is NaN, as the original's exp(-inf - -inf) makes it) */
  leir_nest *scomb = leir__new_nest(out, 1, 1);
  scomb->loops[0] = mcomb->loops[0];
  leir_expr *sl = leir__stream_tensor(out, ml, s);
  sl->dtype = sdt;
  sl->scope = slhs->scope;
  leir_expr *part = leir__mk_bin(
      out, LEIR_OP_MUL, lane_access(out, ml, h, sdt, l),
      leir__stream_call1(out, LEIR_OP_EXP,
                         leir__mk_bin(out, LEIR_OP_SUB, lane_access(out, ml, g, mdt, l),
                                      leir__copy_expr(out, out, ml))));
  leir_expr *sr = leir__copy_expr(out, out, sl);
  leir__stream_set_eq(out, scomb, 0, sl, leir__mk_bin(out, LEIR_OP_ADD, sr, part));
  leir_nest *norm = leir__stream_nest_of(out, src, mx->k, 1);
  norm->items[0] = out->nests[t + 2]->items[0];
  rows->items[0].nest = init;
  rows->items[1].nest = run;
  leir__stream_set_eq(out, rows, 2, leir__copy_expr(out, out, ml), leir__stream_neg_inf(out));
  rows->items[3].nest = mcomb;
  leir__stream_set_eq(out, rows, 4, leir__copy_expr(out, out, sl), leir__mk_int(out, 0));
  rows->items[5].nest = scomb;
  rows->items[6].nest = norm;
  for (uint32_t i = 0; i < 7; i++)
    if (rows->items[i].nest) rows->items[i].eq = NULL;
  out->nests[t] = rows;
  leir__program_remove_nest(out, t + 2);
  leir__program_remove_nest(out, t + 1);
  return LEIR_OK;
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1) return LEIR_ERR_INTERNAL;
  leir__stream_max mx;
  uint32_t s, pp;
  leir__rule rule;
  char why[256];
  if (!site(c, r, &mx, &s, &pp, &rule, why, sizeof why)) return LEIR_ERR_INTERNAL;
  bool native = leir__ps_get(ps, LEIR__K_ACC, NULL) != NULL;
  if (leir__ps_get(ps, LEIR__K_STATE, NULL)) return apply_prefix(c, &mx, s, native, out);
  if (leir__ps_get(ps, LEIR__K_LANES, NULL)) return apply_lanes(c, &mx, s, out);
  uint32_t t = mx.t;
  const leir_nest *src = out->nests[t];
  const leir_equation *eq = src->items[0].eq;
  uint64_t next = c->next_tensor;
  uint32_t f = leir__tensor_sym(out, next++);
  uint32_t w = leir__tensor_sym(out, next++);
  leir__stream_accum acc;
  if (native)
    leir__stream_accum_native(s, out->nests[t + 1]->items[0].eq->lhs->dtype, &acc);
  else
    leir__stream_accum_for(out, eq->lhs, s, &next, &acc);

  uint32_t nitems = acc.fresh ? 5 : 4, at = 2;
  leir_nest *rows = leir__stream_nest_without(out, src, (int)mx.k, nitems);
  for (uint32_t k = 0, j = 0; k < src->nloops; k++)
    if (k != mx.k) rows->loops[j++].pos = src->loops[k].pos;
  leir__stream_init(out, rows, 0, eq->lhs, &acc);
  leir_nest *run = leir__stream_nest_of(out, src, mx.k, 4);
  leir__stream_running(out, run, 0, eq->lhs, eq->rhs->kids[1], f, w, &acc);
  rows->items[at].nest = run;
  rows->items[at++].eq = NULL;
  if (acc.fresh) leir__stream_copy_back(out, rows, at++, eq->lhs, s, &acc);
  leir_nest *norm = leir__stream_nest_of(out, src, mx.k, 1);
  norm->items[0] = out->nests[t + 2]->items[0];
  rows->items[at].nest = norm;
  rows->items[at].eq = NULL;
  out->nests[t] = rows;
  leir__program_remove_nest(out, t + 2);
  leir__program_remove_nest(out, t + 1);
  return LEIR_OK;
}

const leir__strategy_impl leir__online_softmax = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_STATE) | LEIR__KEY(LEIR__K_ACC) |
            LEIR__KEY(LEIR__K_LANES),
    .required = LEIR__KEY(LEIR__K_NEST),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__stream_cot,
    .span = 255, /* state=prefix also rewrites the later reads of M and S */
};
