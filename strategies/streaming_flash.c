/*
 * The product with the softmax output of the streaming strategies
 * (streaming.h): the site O_o=O_o+P_q*V_v and the flash-attention nest
 * that folds it into the running maximum and sum.
 */
#include "streaming.h"

#include <math.h>
#include <stdlib.h>

#include "algebra.h"
#include "streaming_util.h"
#include "visit.h"

static int loop_in(const leir__loop *loops, uint32_t n, const leir_expr *e) {
  if (e->kind != LEIR_EXPR_VAR) return -1;
  for (uint32_t k = 0; k < n; k++)
    if (loops[k].sym == e->sym) return (int)k;
  return -1;
}

bool leir__stream_product_at(const leir__sctx *c, uint32_t t, const leir__loop *ploops,
                             uint32_t nploops, const leir_expr *plhs, uint32_t ksym, uint32_t msym,
                             uint32_t ssym, const leir_expr *x, leir__stream_product *fl,
                             char *why, size_t cap) {
  if (t >= c->p->nnests) {
    snprintf(why, cap, "no nest follows the normalization (nest %u)", t - 1);
    return false;
  }
  const leir_nest *m = c->p->nests[t];
  fl->t = t;
  fl->pp = plhs->sym;
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
    int qi = loop_of(m, pr->kids[j]), ui = loop_in(ploops, nploops, plhs->kids[j]);
    if (qi < 0 || ui < 0 || (seen >> qi & 1) || m->loops[qi].extent != ploops[ui].extent) {
      snprintf(why, cap, "subscript %u of %s in nest %u is not a loop variable matching its "
               "definition", j + 1, leir__name(c, fl->pp), t);
      return false;
    }
    seen |= 1ull << qi;
    fl->from[fl->nmap] = m->loops[qi].sym;
    fl->to[fl->nmap++] = ploops[ui].sym;
    if (ploops[ui].sym == ksym) kq = qi;
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
  if (o == msym || o == ssym || o == fl->pp || leir__expr_reads_tensor(v, o, NULL) ||
      leir__expr_reads_tensor(v, msym, NULL) || leir__expr_reads_tensor(v, ssym, NULL) ||
      leir__expr_reads_tensor(x, o, NULL)) {
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

typedef struct renamer {
  const leir__stream_product *fl;
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

leir_nest *leir__stream_flash_build(const leir__sctx *c, leir_program *out, const leir_nest *src,
                                   uint32_t k, const leir_expr *ml, const leir_expr *x,
                                   uint32_t s, const leir__stream_product *fl) {
  const leir_nest *m = out->nests[fl->t];
  const leir_equation *meq = m->items[0].eq;
  const leir_expr *mr = unparen(meq->rhs);
  const leir_expr *mul = unparen(mr->kids[1]);
  const leir_expr *v = unparen(mul->kids[fl->p_first ? 1 : 0]);
  uint64_t next = c->next_tensor;
  uint32_t f = leir__tensor_sym(out, next++);
  leir__stream_accum acc, gacc, wacc, uacc;
  leir__stream_accum_for(out, ml, s, &next, &acc);
  gacc.sym = leir__tensor_sym(out, next++);
  wacc.sym = leir__tensor_sym(out, next++);
  gacc.dtype = acc.dtype;
  wacc.dtype = ml->dtype;
  gacc.fresh = wacc.fresh = true;
  leir__stream_accum_for(out, meq->lhs, meq->lhs->sym, &next, &uacc);
  renamer rn = {fl, m->loops[fl->h].sym, m->loops[fl->h].sym};
  for (uint32_t k = 0; k < src->nloops; k++)
    if (src->loops[k].sym == rn.hsym) rn.hnew = leir__fresh_loop(out, src, 0, NULL, 0);
  leir__loop hloop = {LEIR_LOOP_SERIAL, rn.hnew, m->loops[fl->h].extent, LEIR__NOPOS};
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
  leir_nest *rows = leir__stream_nest_without(out, src, (int)k, acc.fresh ? 6 : 5);
  leir__stream_init(out, rows, 0, ml, &acc);
  at = 2;
  HNEST(U_, leir__mk_int(out, 0));
  rows->items[at].nest = hn;
  rows->items[at++].eq = NULL;

  leir_nest *run = leir__stream_nest_of(out, src, k, 6);
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
  leir_expr *wv = fl->p_first ? leir__mk_bin(out, LEIR_OP_MUL, W_, V_)
                             : leir__mk_bin(out, LEIR_OP_MUL, V_, W_);
  HNEST(U_, leir__mk_bin(out, LEIR_OP_ADD, leir__mk_bin(out, LEIR_OP_MUL, U_, G_), wv));
  run->items[4].nest = hn;
  run->items[4].eq = NULL;
  leir__stream_set_eq(out, run, 5, M_, F_);
  rows->items[at].nest = run;
  rows->items[at++].eq = NULL;
  if (acc.fresh) leir__stream_copy_back(out, rows, at++, ml, s, &acc);

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
  return rows;
}
