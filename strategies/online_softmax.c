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
 * Sites: a #40 site at nest N (streaming.h) whose nest N+2 has the same
 * loops and computes P_u=exp(X-M_s)/S_s with the same X and s, u one
 * distinct loop variable per loop (each iteration writes its own element,
 * so moving k inside changes no value). Parameter: `nest=N` (the site
 * spans N..N+2). Reassociating (the rescaled sum).
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
  }
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1) return LEIR_ERR_INTERNAL;
  leir__stream_max mx;
  uint32_t s, pp;
  leir__rule rule;
  char why[256];
  if (!site(c, r, &mx, &s, &pp, &rule, why, sizeof why)) return LEIR_ERR_INTERNAL;
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
    .keys = LEIR__KEY(LEIR__K_NEST),
    .required = LEIR__KEY(LEIR__K_NEST),
    .enumerate = enumerate,
    .apply = apply,
    .cot = NULL,
    .span = 3,
};
