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
 * Sites: a #40 site at nest N (streaming.h) whose nest N+2 has the same
 * loops and computes P_u=exp(X-M_s)/S_s with the same X and s, u one
 * distinct loop variable per loop (each iteration writes its own element,
 * so moving k inside changes no value). Parameters: `nest=N` (the site
 * spans N..N+2; with state=prefix also the later nests that read M or S)
 * and `state=prefix`. Reassociating (the rescaled sum).
 */
#include "streaming.h"

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
    if (!leir__stream_prefix_ok(c, &mx, s, true, why, sizeof why)) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_STREAM_PREFIX_SHAPE, "%s", why);
      continue;
    }
    leir__emit(c, LEIR_REASSOCIATING, "nest=%s state=prefix", r->label);
  }
}

/* state=prefix: the scan nest, the sum nest dropped, M and S read at N-1 */
static leir_status apply_prefix(leir__sctx *c, const leir__stream_max *mx, uint32_t s,
                                leir_program *out) {
  uint32_t t = mx->t;
  const leir_nest *src = out->nests[t];
  const leir_equation *meq = src->items[0].eq;
  leir__stream_prefix pl;
  leir__stream_prefix_layout(mx, &pl);
  uint32_t tsym = leir__tensor_sym(out, c->next_tensor);
  uint8_t tdt = LEIR_F64, tsc = out->nests[t + 1]->items[0].eq->lhs->scope;
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

static bool cot(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps) {
  if (!leir__ps_get(ps, LEIR__K_STATE, NULL)) return false;
  return leir__stream_prefix_cot(b, d, ps);
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1) return LEIR_ERR_INTERNAL;
  leir__stream_max mx;
  uint32_t s, pp;
  leir__rule rule;
  char why[256];
  if (!site(c, r, &mx, &s, &pp, &rule, why, sizeof why)) return LEIR_ERR_INTERNAL;
  if (leir__ps_get(ps, LEIR__K_STATE, NULL)) return apply_prefix(c, &mx, s, out);
  uint32_t t = mx.t;
  const leir_nest *src = out->nests[t];
  const leir_equation *eq = src->items[0].eq;
  uint64_t next = c->next_tensor;
  uint32_t f = leir__tensor_sym(out, next++);
  uint32_t w = leir__tensor_sym(out, next++);
  leir__stream_accum acc;
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
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_STATE),
    .required = LEIR__KEY(LEIR__K_NEST),
    .enumerate = enumerate,
    .apply = apply,
    .cot = cot,
    .span = 255, /* state=prefix also rewrites the later reads of M and S */
};
