/*
 * normal_loop_summation_on_exp_to_prefix_summation_on_exp (40, math): a max
 * reduction and the sum of exponentials after it become one pass with a
 * running maximum and a rescaled running sum.
 *
 *   L[M_s=max(M_s,X);];
 *   L[S_s=S_s+exp(X-M_s);];
 * becomes
 *   L'[M_s=-inf;S_s=0;];
 *   L[F_s=max(M_s,X);
 *     S_s=if_then_else(F_s==-inf,0,S_s*exp(M_s-F_s)+exp(X-F_s));
 *     M_s=F_s;];
 * where L' is L without the reduction loop and F a fresh tensor with M's
 * dtype and scope. When S is narrower than f64 the sum runs in a fresh f64
 * tensor T instead (T_s=0 in the first nest, T in place of S in the
 * second) and a third nest L'[S_s=T_s;] stores it (streaming.h). M and S end with the maximum and the sum as before, so
 * the nests that read them are unchanged. The running values live in the
 * row's own elements: no array over the reduction axis is materialized (the
 * reference keeps prefix arrays M_{s,k} and T_{s,k}, 7.18).
 *
 * The -inf guard: while every element of a row so far is -inf (a masked
 * prefix), F is -inf and S stays 0 instead of exp(-inf - -inf) = NaN; the
 * first finite element rescales the 0 by exp(-inf - F) = 0.
 *
 * state=prefix: the reference's form (7.18), prefix arrays over k, one
 * nest instead of two:
 *   L[M_{..k..}=max(if_then_else(k-1<0,-inf,M_{..k-1..}),X);
 *     T_{..k..}=if_then_else(k-1<0,1,T_{..k-1..})
 *              *exp(if_then_else(k-1<0,-inf,M_{..k-1..})-M_{..k..})+exp(X-M_{..k..});];
 *   L'[S_s=T_{..N-1..};];
 * M itself gains the axis k (leir__stream_prefix_layout) and every later
 * read M_s becomes M_{..N-1..}; T is fresh (S's dtype when f64, else f64).
 * Both arrays cost N elements per row where the running form keeps one.
 * Where X can be -inf (leir__stream_may_be_neg_inf: a mask, a log, ...)
 * T's right side is guarded, if_then_else(M_{..k..}==-inf,0,...): the
 * reference's exp(-inf - -inf) is NaN on a masked prefix. Needs M to be
 * no signature variable, written by nest N only and used by no nest
 * before it (stream.prefix-shape).
 *
 * acc=native (with or without state=prefix): the sum in S's own dtype
 * instead of f64, as the reference writes it (S itself in the running
 * form, no copy back; T in S's dtype in the prefix form): a rounding per
 * element in f32/f16; refused where S is f64 (stream.acc-f64).
 *
 * Sites: every top-level nest N that is a max reduction (streaming.h) with
 * at least one row loop, followed by nest N+1 with the same loops computing
 * S_s=S_s+exp(X-M_s) with the same X and subscript s, from the implicit 0.
 * Parameters: `nest=N` (the site spans N and N+1; with state=prefix also
 * the later nests that read M), `state=prefix` and `acc=native`. Reassociating: the sum
 * is accumulated with rescaling.
 */
#include "streaming.h"

static bool site(const leir__sctx *c, const leir__nref *r, leir__stream_max *mx, uint32_t *s,
                 leir__rule *rule, char *why, size_t cap) {
  if (!leir__stream_max_at(c, r->path[0], false, mx, rule, why, cap)) return false;
  if (mx->n->nloops < 2) {
    *rule = LEIR__R_STREAM_ROWS;
    snprintf(why, cap, "%s has no row loop (a scalar maximum)", leir__name(c, mx->m));
    return false;
  }
  *rule = LEIR__R_STREAM_NO_SUM;
  return leir__stream_sum_at(c, mx, mx->t + 1, s, why, cap);
}

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (r->depth != 1 || leir__skip_nest(c, r)) continue;
    leir__stream_max mx;
    uint32_t s;
    leir__rule rule;
    char why[256];
    if (!site(c, r, &mx, &s, &rule, why, sizeof why)) {
      LEIR__REJECT(c, leir__site_nest(c, r), rule, "%s", why);
      continue;
    }
    leir__emit(c, LEIR_REASSOCIATING, "nest=%s", r->label);
    bool prefix = leir__stream_prefix_ok(c, &mx, s, false, why, sizeof why);
    if (prefix) leir__emit(c, LEIR_REASSOCIATING, "nest=%s state=prefix", r->label);
    else LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_STREAM_PREFIX_SHAPE, "%s", why);
    /* the same forms with the sum in the program's dtype (the reference's) */
    if (leir__stream_sum_is_f64(c, mx.t + 1)) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_STREAM_ACC_F64,
                   "%s is f64: acc=native would be the f64 candidate again", leir__name(c, s));
      continue;
    }
    leir__emit(c, LEIR_REASSOCIATING, "nest=%s acc=native", r->label);
    if (prefix) leir__emit(c, LEIR_REASSOCIATING, "nest=%s state=prefix acc=native", r->label);
  }
}

/* state=prefix: the scan nest, S_s=T_{..N-1..}, the later reads of M */
static leir_status apply_prefix(leir__sctx *c, const leir__stream_max *mx, bool native,
                                leir_program *out) {
  uint32_t t = mx->t;
  const leir_nest *src = out->nests[t];
  const leir_equation *meq = src->items[0].eq, *seq = out->nests[t + 1]->items[0].eq;
  leir__stream_prefix pl;
  leir__stream_prefix_layout(mx, &pl);
  uint32_t tsym = leir__tensor_sym(out, c->next_tensor);
  uint8_t tdt = native ? seq->lhs->dtype : LEIR_F64, tsc = seq->lhs->scope;
  bool guard = leir__stream_may_be_neg_inf(c, leir__stream_x(mx));
  leir_nest *scan = leir__stream_nest_without(out, src, -1, 2);
  for (uint32_t k = 0; k < src->nloops; k++) scan->loops[k].pos = src->loops[k].pos;
  leir__stream_prefix_scan(out, meq, &pl, tsym, tdt, tsc, guard, scan);
  leir_nest *back = leir__stream_nest_without(out, src, (int)mx->k, 1);
  leir__stream_set_eq(out, back, 0, leir__copy_expr(out, out, seq->lhs),
                      leir__stream_prefix_access(out, &pl, tsym, tdt, tsc, meq->lhs,
                                                 leir__mk_int(out, pl.last)));
  leir__stream_prefix_reads(out, t + 2, &pl, mx->m, mx->m, meq->lhs->dtype, meq->lhs->scope);
  out->nests[t] = scan;
  out->nests[t + 1] = back;
  return LEIR_OK;
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1) return LEIR_ERR_INTERNAL;
  leir__stream_max mx;
  uint32_t s;
  leir__rule rule;
  char why[256];
  if (!site(c, r, &mx, &s, &rule, why, sizeof why)) return LEIR_ERR_INTERNAL;
  bool native = leir__ps_get(ps, LEIR__K_ACC, NULL) != NULL;
  if (leir__ps_get(ps, LEIR__K_STATE, NULL)) return apply_prefix(c, &mx, native, out);
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

  leir_nest *init = leir__stream_nest_without(out, src, (int)mx.k, 2);
  leir__stream_init(out, init, 0, eq->lhs, &acc);
  leir_nest *run = leir__stream_nest_without(out, src, -1, 4);
  for (uint32_t k = 0; k < src->nloops; k++) run->loops[k].pos = src->loops[k].pos;
  leir__stream_running(out, run, 0, eq->lhs, eq->rhs->kids[1], f, w, &acc);
  out->nests[t] = init;
  out->nests[t + 1] = run;
  if (acc.fresh) {
    leir_nest *back = leir__stream_nest_without(out, src, (int)mx.k, 1);
    leir__stream_copy_back(out, back, 0, eq->lhs, s, &acc);
    if (!leir__program_insert_nest(out, t + 2, back)) return LEIR_ERR_NOMEM;
  }
  return LEIR_OK;
}

const leir__strategy_impl leir__normal_loop_summation_on_exp_to_prefix_summation_on_exp = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_STATE) | LEIR__KEY(LEIR__K_ACC),
    .required = LEIR__KEY(LEIR__K_NEST),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__stream_cot,
    .span = 255, /* state=prefix also rewrites the later reads of M */
};
