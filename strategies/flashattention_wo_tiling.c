/*
 * flashattention_wo_tiling (42, math): softmax followed by the product with
 * V becomes one nest per row that keeps a running maximum, a running sum and
 * a running, rescaled output row, so the softmax matrix P is never stored:
 *
 *   L[M_s=max(M_s,X);];  L[S_s=S_s+exp(X-M_s);];  L[P_u=exp(X-M_s)/S_s;];
 *   L2[O_o=O_o+P_q*V_v;];                       (or V_v*P_q)
 * becomes (R = the softmax loops without the reduction loop k; h the
 * product's output column loop, extent H)
 *   R[M_s=-inf;S_s=0;L^{H}_{h}[O_o=0;];
 *     L^{N}_{k}[F_s=max(M_s,X);
 *               G_s=if_then_else(F_s==M_s,1,exp(M_s-F_s));
 *               W_s=if_then_else(F_s==-inf,0,exp(X-F_s));
 *               S_s=S_s*G_s+W_s;
 *               L^{H}_{h}[O_o=O_o*G_s+W_s*V_v;];
 *               M_s=F_s;];
 *     L^{H}_{h}[O_o=O_o/S_s;];];
 * with the product's loop variables renamed to the softmax's through P's
 * subscripts (q -> u), h kept unless it clashes (then a fresh name), and F,
 * G, W fresh tensors with M's dtype and scope. When S or O is narrower than
 * f64, the sum, the factor G and the output row run in fresh f64
 * tensors T and U (T, U in place of S, O; S_s=T_s after the k nest and
 * O_o=U_o/T_s at the end; streaming.h). The output is normalized
 * once at the end (FlashAttention-2). The reference's version (7.20) keeps
 * prefix arrays over k and mis-scales the running output; it is MISMATCH on
 * all of its own outputs.
 *
 * The -inf guard: while a row's running maximum F is still -inf (a masked
 * prefix) the new weight W is 0 and the rescale factor G is 1 (F==M), so S
 * and O stay 0 instead of exp(-inf - -inf) = NaN; the first finite element
 * rescales them by exp(-inf - F) = 0. G is 1 whenever the maximum did not
 * grow, so a step costs one exp (W) as the original's sum does.
 *
 * Sites: an online_softmax site at nest N (streaming.h) whose nest N+3 is
 * one equation O_o=O_o+P_q*V_v (or V_v*P_q) from the implicit 0: q one
 * distinct loop variable per entry (extents as in P's definition), the
 * product's loops those of q and one more, h; o one distinct loop variable
 * for every product loop but the one q maps to k; V reads none of M, S, P,
 * O; P is no signature variable and no other nest uses it. Parameter:
 * `nest=N` (the site spans N..N+3). Reassociating.
 */
#include "streaming.h"

typedef struct flash {
  leir__stream_max mx;
  uint32_t s, pp;
  leir__stream_product pr;
} flash;

static bool site(const leir__sctx *c, const leir__nref *r, flash *fl, leir__rule *rule, char *why,
                 size_t cap) {
  leir__stream_max *mx = &fl->mx;
  if (!leir__stream_max_at(c, r->path[0], false, mx, rule, why, cap)) return false;
  if (mx->n->nloops < 2) {
    *rule = LEIR__R_STREAM_ROWS;
    snprintf(why, cap, "%s has no row loop (a scalar maximum)", leir__name(c, mx->m));
    return false;
  }
  *rule = LEIR__R_STREAM_NO_SUM;
  if (!leir__stream_sum_at(c, mx, mx->t + 1, &fl->s, why, cap)) return false;
  *rule = LEIR__R_STREAM_NO_NORMALIZE;
  if (!leir__stream_div_at(c, mx, fl->s, mx->t + 2, &fl->pp, why, cap)) return false;
  *rule = LEIR__R_STREAM_NO_PRODUCT;
  const leir_nest *dn = c->p->nests[mx->t + 2];
  if (!leir__stream_product_at(c, mx->t + 3, dn->loops, dn->nloops, dn->items[0].eq->lhs,
                               mx->n->loops[mx->k].sym, mx->m, fl->s, leir__stream_x(mx),
                               &fl->pr, why, cap))
    return false;
  *rule = LEIR__R_STREAM_USED;
  if (leir__stream_used_outside(c, fl->pp, mx->t, mx->t + 3)) {
    snprintf(why, cap, "%s is a signature variable or another nest uses it",
             leir__name(c, fl->pp));
    return false;
  }
  return true;
}

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (r->depth != 1 || leir__skip_nest(c, r)) continue;
    flash fl;
    leir__rule rule;
    char why[256];
    if (!site(c, r, &fl, &rule, why, sizeof why)) {
      LEIR__REJECT(c, leir__site_nest(c, r), rule, "%s", why);
      continue;
    }
    leir__emit(c, LEIR_REASSOCIATING, "nest=%s", r->label);
  }
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1) return LEIR_ERR_INTERNAL;
  flash fl;
  leir__rule rule;
  char why[256];
  if (!site(c, r, &fl, &rule, why, sizeof why)) return LEIR_ERR_INTERNAL;
  uint32_t t = fl.mx.t;
  const leir_nest *src = out->nests[t];
  const leir_equation *eq = src->items[0].eq;
  leir_nest *rows = leir__stream_flash_build(c, out, src, fl.mx.k, eq->lhs, eq->rhs->kids[1],
                                             fl.s, &fl.pr);
  out->nests[t] = rows;
  leir__program_remove_nest(out, t + 3);
  leir__program_remove_nest(out, t + 2);
  leir__program_remove_nest(out, t + 1);
  return LEIR_OK;
}

const leir__strategy_impl leir__flashattention_wo_tiling = {
    .keys = LEIR__KEY(LEIR__K_NEST),
    .required = LEIR__KEY(LEIR__K_NEST),
    .enumerate = enumerate,
    .apply = apply,
    .cot = NULL,
    .span = 4,
};
