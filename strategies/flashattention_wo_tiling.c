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
  uint32_t s, pp, o;
  const leir_nest *m;          /* the product nest */
  uint32_t h;                  /* h's index in m */
  uint32_t from[LEIR__MAX_LOOPS], to[LEIR__MAX_LOOPS]; /* loop renaming m -> softmax */
  uint32_t nmap;
  bool p_first;                /* P*V (else V*P) */
} flash;

static const leir_expr *unparen(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e;
}

static int loop_of(const leir_nest *n, const leir_expr *e) {
  if (e->kind != LEIR_EXPR_VAR) return -1;
  for (uint32_t k = 0; k < n->nloops; k++)
    if (n->loops[k].sym == e->sym) return (int)k;
  return -1;
}

static bool product_at(const leir__sctx *c, flash *fl, char *why, size_t cap) {
  uint32_t t = fl->mx.t + 3;
  if (t >= c->p->nnests) {
    snprintf(why, cap, "no nest follows the normalization (nest %u)", t - 1);
    return false;
  }
  const leir_nest *m = c->p->nests[t];
  const leir_nest *dn = c->p->nests[t - 1];
  const leir_expr *plhs = dn->items[0].eq->lhs;
  fl->m = m;
  if (m->nitems != 1 || !m->items[0].eq || m->nloops > 64 || m->nloops != plhs->n + 1) {
    snprintf(why, cap, "nest %u is not one equation over P's loops and one more", t);
    return false;
  }
  const leir_equation *eq = m->items[0].eq;
  const leir_expr *r = unparen(eq->rhs), *lhs = eq->lhs;
  const leir_expr *pr = NULL, *v = NULL;
  if (r->kind == LEIR_EXPR_BINARY && r->op == LEIR_OP_ADD && lhs->dtype <= LEIR_F64) {
    const leir_expr *a = unparen(r->kids[0]), *b = unparen(r->kids[1]);
    if (a->kind == LEIR_EXPR_TENSOR && a->sym == lhs->sym &&
        leir__expr_equal(c->p, a, c->p, lhs) && b->kind == LEIR_EXPR_BINARY &&
        b->op == LEIR_OP_MUL) {
      const leir_expr *x = unparen(b->kids[0]), *y = unparen(b->kids[1]);
      if (x->kind == LEIR_EXPR_TENSOR && x->sym == fl->pp) {
        pr = x;
        v = y;
        fl->p_first = true;
      } else if (y->kind == LEIR_EXPR_TENSOR && y->sym == fl->pp) {
        pr = y;
        v = x;
        fl->p_first = false;
      }
    }
  }
  if (!pr || leir__expr_reads_tensor(v, fl->pp, NULL)) {
    snprintf(why, cap, "the equation of nest %u is not O=O+%s*V", t, leir__name(c, fl->pp));
    return false;
  }
  /* q -> u, loop by loop */
  uint64_t seen = 0;
  fl->nmap = 0;
  int kq = -1;
  for (uint32_t j = 0; j < pr->n; j++) {
    int qi = loop_of(m, pr->kids[j]), ui = loop_of(dn, plhs->kids[j]);
    if (qi < 0 || ui < 0 || (seen >> qi & 1) || m->loops[qi].extent != dn->loops[ui].extent) {
      snprintf(why, cap, "subscript %u of %s in nest %u is not a loop variable matching its "
               "definition", j + 1, leir__name(c, fl->pp), t);
      return false;
    }
    seen |= 1ull << qi;
    fl->from[fl->nmap] = m->loops[qi].sym;
    fl->to[fl->nmap++] = dn->loops[ui].sym;
    if ((uint32_t)ui == fl->mx.k) kq = qi;
  }
  uint32_t h = 0;
  while (seen >> h & 1) h++;
  fl->h = h;
  /* o: every loop but kq, once each */
  uint64_t oseen = 0;
  bool ok = lhs->n + 1 == m->nloops && kq >= 0;
  for (uint32_t j = 0; ok && j < lhs->n; j++) {
    int oi = loop_of(m, lhs->kids[j]);
    ok = oi >= 0 && oi != kq && !(oseen >> oi & 1);
    if (ok) oseen |= 1ull << oi;
  }
  if (!ok) {
    snprintf(why, cap, "the subscript of %s is not one loop variable for every loop of nest %u "
             "but the contracted one", leir__name(c, lhs->sym), t);
    return false;
  }
  uint32_t o = lhs->sym;
  if (o == fl->mx.m || o == fl->s || o == fl->pp || leir__expr_reads_tensor(v, o, NULL) ||
      leir__expr_reads_tensor(v, fl->mx.m, NULL) || leir__expr_reads_tensor(v, fl->s, NULL) ||
      leir__expr_reads_tensor(leir__stream_x(&fl->mx), o, NULL)) {
    snprintf(why, cap, "V or X reads a tensor of the softmax or the product");
    return false;
  }
  uint32_t ei = eq->id < c->a->nids ? c->a->eq_index[eq->id] : LEIR__NONE;
  if (ei == LEIR__NONE || c->a->eqs[ei].init != LEIR__INIT_ZERO) {
    snprintf(why, cap, "%s does not start from the implicit 0", leir__name(c, o));
    return false;
  }
  fl->o = o;
  return true;
}

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
  if (!product_at(c, fl, why, cap)) return false;
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

typedef struct renamer {
  const flash *fl;
  uint32_t hsym, hnew;
} renamer;

static int rename_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  const renamer *rn = v->ud;
  leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_VAR) return LEIR__VISIT_NEXT;
  if (e->sym == rn->hsym) {
    e->sym = rn->hnew;
    return LEIR__VISIT_NEXT;
  }
  for (uint32_t k = 0; k < rn->fl->nmap; k++)
    if (e->sym == rn->fl->from[k]) {
      e->sym = rn->fl->to[k];
      break;
    }
  return LEIR__VISIT_NEXT;
}

static leir_expr *renamed(leir_program *out, const leir_expr *e, const renamer *rn) {
  leir_expr *x = leir__copy_expr(out, out, e);
  leir__visit v = LEIR__VISIT_INIT(rename_node, (void *)rn);
  leir__visit_expr(&v, &x);
  return x;
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
  const leir_expr *ml = src->items[0].eq->lhs, *x = src->items[0].eq->rhs->kids[1];
  const leir_nest *m = out->nests[t + 3];
  const leir_equation *meq = m->items[0].eq;
  const leir_expr *mr = unparen(meq->rhs);
  const leir_expr *mul = unparen(mr->kids[1]);
  const leir_expr *v = unparen(mul->kids[fl.p_first ? 1 : 0]);

  uint64_t next = c->next_tensor;
  uint32_t f = leir__tensor_sym(out, next++);
  leir__stream_accum acc, gacc, wacc, uacc;
  leir__stream_accum_for(out, ml, fl.s, &next, &acc);
  gacc.sym = leir__tensor_sym(out, next++);
  wacc.sym = leir__tensor_sym(out, next++);
  gacc.dtype = acc.dtype;
  wacc.dtype = ml->dtype;
  gacc.fresh = wacc.fresh = true;
  leir__stream_accum_for(out, meq->lhs, meq->lhs->sym, &next, &uacc);
  renamer rn = {&fl, m->loops[fl.h].sym, m->loops[fl.h].sym};
  for (uint32_t k = 0; k < src->nloops; k++)
    if (src->loops[k].sym == rn.hsym) rn.hnew = leir__fresh_loop(out, src, 0, NULL, 0);
  leir__loop hloop = {LEIR_LOOP_SERIAL, rn.hnew, m->loops[fl.h].extent, LEIR__NOPOS};
#define O_ (renamed(out, meq->lhs, &rn))
#define U_ (leir__stream_acc(out, O_, &uacc))
#define V_ (renamed(out, v, &rn))
#define M_ (leir__stream_tensor(out, ml, ml->sym))
#define F_ (leir__stream_tensor(out, ml, f))
#define G_ (leir__stream_acc(out, ml, &gacc))
#define W_ (leir__stream_acc(out, ml, &wacc))
#define T_ (leir__stream_acc(out, ml, &acc))
#define HNEST(body_lhs, body_rhs)                                                    \
  do {                                                                             \
    hn = leir__new_nest(out, 1, 1);                                                \
    hn->loops[0] = hloop;                                                          \
    leir__stream_set_eq(out, hn, 0, body_lhs, body_rhs);                           \
  } while (0)
  leir_nest *hn;
  uint32_t at = 0;
  leir_nest *rows = leir__stream_nest_without(out, src, (int)fl.mx.k, acc.fresh ? 6 : 5);
  leir__stream_init(out, rows, 0, ml, &acc);
  at = 2;
  HNEST(U_, leir__mk_int(out, 0));
  rows->items[at].nest = hn;
  rows->items[at++].eq = NULL;

  leir_nest *run = leir__stream_nest_of(out, src, fl.mx.k, 6);
  leir__stream_set_eq(out, run, 0, F_, leir__stream_call2(out, LEIR_OP_MAX, M_,
                                                          leir__copy_expr(out, out, x)));
  leir_expr *same = leir__new_expr(out, LEIR_EXPR_COMPARE, LEIR_OP_NONE, 2);
  same->kids[0] = F_;
  same->kids[1] = M_;
  same->u.cmp_ops[0] = LEIR_OP_EQ;
  leir__stream_set_eq(
      out, run, 1, G_,
      leir__stream_ite(out, same, leir__mk_int(out, 1),
                       leir__stream_call1(out, LEIR_OP_EXP, leir__mk_bin(out, LEIR_OP_SUB, M_, F_))));
  leir__stream_set_eq(
      out, run, 2, W_,
      leir__stream_ite(out, leir__stream_is_neg_inf(out, F_), leir__mk_int(out, 0),
                       leir__stream_call1(out, LEIR_OP_EXP,
                                          leir__mk_bin(out, LEIR_OP_SUB,
                                                       leir__copy_expr(out, out, x), F_))));
  leir__stream_set_eq(out, run, 3, T_,
                      leir__mk_bin(out, LEIR_OP_ADD, leir__mk_bin(out, LEIR_OP_MUL, T_, G_), W_));
  leir_expr *wv = fl.p_first ? leir__mk_bin(out, LEIR_OP_MUL, W_, V_)
                             : leir__mk_bin(out, LEIR_OP_MUL, V_, W_);
  HNEST(U_, leir__mk_bin(out, LEIR_OP_ADD, leir__mk_bin(out, LEIR_OP_MUL, U_, G_), wv));
  run->items[4].nest = hn;
  run->items[4].eq = NULL;
  leir__stream_set_eq(out, run, 5, M_, F_);
  rows->items[at].nest = run;
  rows->items[at++].eq = NULL;
  if (acc.fresh) leir__stream_copy_back(out, rows, at++, ml, fl.s, &acc);

  HNEST(O_, leir__mk_bin(out, LEIR_OP_DIV, U_, T_));
  rows->items[at].nest = hn;
  rows->items[at].eq = NULL;
#undef O_
#undef U_
#undef V_
#undef M_
#undef F_
#undef G_
#undef W_
#undef T_
#undef HNEST
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
