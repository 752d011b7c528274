/*
 * Sites and builders of the streaming strategies (streaming.h). The
 * prefix-array forms and the CoT are in streaming_prefix.c, the product
 * with the softmax output in streaming_flash.c; small helpers the three
 * share in streaming_util.h.
 */
#include "streaming.h"

#include <math.h>
#include <stdlib.h>

#include "algebra.h"
#include "streaming_util.h"
#include "visit.h"


static bool same_access(const leir_program *p, const leir_expr *a, const leir_expr *b) {
  a = unparen(a);
  b = unparen(b);
  return a->kind == LEIR_EXPR_TENSOR && b->kind == LEIR_EXPR_TENSOR && a->sym == b->sym &&
         leir__expr_equal(p, a, p, b);
}

static bool same_loops(const leir_nest *a, const leir_nest *b) {
  if (a->nloops != b->nloops) return false;
  for (uint32_t k = 0; k < a->nloops; k++)
    if (a->loops[k].sym != b->loops[k].sym || a->loops[k].extent != b->loops[k].extent ||
        a->loops[k].kind != b->loops[k].kind)
      return false;
  return true;
}

bool leir__stream_max_at(const leir__sctx *c, uint32_t t, bool nary, leir__stream_max *out,
                         leir__rule *rule, char *why, size_t cap) {
  const leir_nest *n = c->p->nests[t];
  *rule = LEIR__R_STREAM_NOT_MAX;
  if (!is_single_eq_nest(n)) {
    snprintf(why, cap, "nest %u is not one equation directly under its loops", t);
    return false;
  }
  const leir_equation *eq = n->items[0].eq;
  const leir_expr *r = eq->rhs, *lhs = eq->lhs;
  if (r->kind != LEIR_EXPR_CALL || r->op != LEIR_OP_MAX || r->n < 2 || (!nary && r->n != 2) ||
      !same_access(c->p, r->kids[0], lhs)) {
    snprintf(why, cap, "the equation of nest %u is not %s_s=max(%s_s,X)", t,
             leir__name(c, lhs->sym), leir__name(c, lhs->sym));
    return false;
  }
  for (uint32_t k = 1; k < r->n; k++)
    if (reads(r->kids[k], lhs->sym)) {
      snprintf(why, cap, "X reads %s itself", leir__name(c, lhs->sym));
      return false;
    }
  if (lhs->dtype > LEIR_F64) {
    snprintf(why, cap, "%s is not a floating-point tensor", leir__name(c, lhs->sym));
    return false;
  }
  uint32_t ei = eq->id < c->a->nids ? c->a->eq_index[eq->id] : LEIR__NONE;
  if (ei == LEIR__NONE || c->a->eqs[ei].init != LEIR__INIT_NEG_INF) {
    snprintf(why, cap,
             "%s does not start from the implicit -inf (it is known or written earlier)",
             leir__name(c, lhs->sym));
    return false;
  }
  *rule = LEIR__R_STREAM_ROWS;
  uint64_t seen = 0;
  for (uint32_t j = 0; j < lhs->n; j++) {
    int k = loop_of(n, lhs->kids[j]);
    if (k < 0 || k >= 64 || (seen >> k & 1)) {
      snprintf(why, cap, "subscript %u of %s is not a distinct loop variable", j + 1,
               leir__name(c, lhs->sym));
      return false;
    }
    seen |= 1ull << k;
  }
  if (n->nloops > 64 || lhs->n + 1 != n->nloops) {
    snprintf(why, cap, "%s reduces over %u loops; one reduction loop is needed",
             leir__name(c, lhs->sym), n->nloops - lhs->n);
    return false;
  }
  uint32_t k = 0;
  while (seen >> k & 1) k++;
  if (n->loops[k].kind != LEIR_LOOP_SERIAL && n->loops[k].kind != LEIR_LOOP_UNROLLED) {
    snprintf(why, cap, "the reduction loop %s is a %c loop, not L or U",
             leir__sym_name(c->p, n->loops[k].sym), leir__loop_kind_letters[n->loops[k].kind]);
    return false;
  }
  out->t = t;
  out->n = n;
  out->eq = eq;
  out->m = lhs->sym;
  out->k = k;
  return true;
}

/* exp(X - M_s) with the site's X and M_s, parentheses ignored? */
static bool is_exp_x_minus_m(const leir__sctx *c, const leir__stream_max *mx, const leir_expr *e) {
  e = unparen(e);
  if (e->kind != LEIR_EXPR_CALL || e->op != LEIR_OP_EXP || e->n != 1) return false;
  const leir_expr *d = unparen(e->kids[0]);
  if (d->kind != LEIR_EXPR_BINARY || d->op != LEIR_OP_SUB) return false;
  return leir__expr_equal(c->p, unparen(d->kids[0]), c->p, unparen(leir__stream_x(mx))) &&
         same_access(c->p, d->kids[1], mx->eq->lhs);
}

bool leir__stream_sum_at(const leir__sctx *c, const leir__stream_max *mx, uint32_t t,
                         uint32_t *s, char *why, size_t cap) {
  if (t >= c->p->nnests) {
    snprintf(why, cap, "no nest follows nest %u", mx->t);
    return false;
  }
  const leir_nest *n = c->p->nests[t];
  if (!is_single_eq_nest(n) || !same_loops(n, mx->n)) {
    snprintf(why, cap, "nest %u is not one equation over the loops of nest %u", t, mx->t);
    return false;
  }
  const leir_equation *eq = n->items[0].eq;
  const leir_expr *r = unparen(eq->rhs), *lhs = eq->lhs;
  const leir_expr *ml = mx->eq->lhs;
  bool ok = r->kind == LEIR_EXPR_BINARY && r->op == LEIR_OP_ADD &&
            same_access(c->p, r->kids[0], lhs) && is_exp_x_minus_m(c, mx, r->kids[1]) &&
            lhs->sym != mx->m && lhs->n == ml->n && lhs->dtype == ml->dtype;
  for (uint32_t j = 0; ok && j < lhs->n; j++)
    ok = leir__expr_equal(c->p, lhs->kids[j], c->p, ml->kids[j]);
  if (!ok) {
    snprintf(why, cap, "the equation of nest %u is not S_s=S_s+exp(X-%s_s) with X of nest %u", t,
             leir__name(c, mx->m), mx->t);
    return false;
  }
  if (reads(leir__stream_x(mx), lhs->sym)) {
    snprintf(why, cap, "X reads %s", leir__name(c, lhs->sym));
    return false;
  }
  uint32_t ei = eq->id < c->a->nids ? c->a->eq_index[eq->id] : LEIR__NONE;
  if (ei == LEIR__NONE || c->a->eqs[ei].init != LEIR__INIT_ZERO) {
    snprintf(why, cap, "%s does not start from the implicit 0", leir__name(c, lhs->sym));
    return false;
  }
  *s = lhs->sym;
  return true;
}

bool leir__stream_div_at(const leir__sctx *c, const leir__stream_max *mx, uint32_t s, uint32_t t,
                         uint32_t *pp, char *why, size_t cap) {
  if (t >= c->p->nnests) {
    snprintf(why, cap, "no nest follows nest %u", t - 1);
    return false;
  }
  const leir_nest *n = c->p->nests[t];
  if (!is_single_eq_nest(n) || !same_loops(n, mx->n)) {
    snprintf(why, cap, "nest %u is not one equation over the loops of nest %u", t, mx->t);
    return false;
  }
  const leir_equation *eq = n->items[0].eq;
  const leir_expr *r = unparen(eq->rhs), *lhs = eq->lhs;
  bool ok = r->kind == LEIR_EXPR_BINARY && r->op == LEIR_OP_DIV &&
            is_exp_x_minus_m(c, mx, r->kids[0]);
  if (ok) {
    const leir_expr *d = unparen(r->kids[1]);
    ok = d->kind == LEIR_EXPR_TENSOR && d->sym == s && d->n == mx->eq->lhs->n;
    for (uint32_t j = 0; ok && j < d->n; j++)
      ok = leir__expr_equal(c->p, d->kids[j], c->p, mx->eq->lhs->kids[j]);
  }
  if (!ok) {
    snprintf(why, cap, "the equation of nest %u is not P=exp(X-%s_s)/%s_s", t,
             leir__name(c, mx->m), leir__name(c, s));
    return false;
  }
  uint64_t seen = 0;
  ok = lhs->n == n->nloops && n->nloops <= 64 && lhs->sym != mx->m && lhs->sym != s &&
       !reads(leir__stream_x(mx), lhs->sym);
  for (uint32_t j = 0; ok && j < lhs->n; j++) {
    int k = loop_of(n, lhs->kids[j]);
    ok = k >= 0 && !(seen >> k & 1);
    if (ok) seen |= 1ull << k;
  }
  if (!ok) {
    snprintf(why, cap,
             "the subscript of %s is not one distinct loop variable per loop (or X reads it)",
             leir__name(c, lhs->sym));
    return false;
  }
  *pp = lhs->sym;
  return true;
}


bool leir__stream_used_outside(const leir__sctx *c, uint32_t sym, uint32_t from, uint32_t to) {
  if (c->known[sym]) return true;
  for (uint32_t t = 0; t < c->p->nnests; t++)
    if ((t < from || t > to) && nest_uses(c->p->nests[t], sym)) return true;
  return false;
}

/* ---- builders --------------------------------------------------------- */

leir_expr *leir__stream_tensor(leir_program *out, const leir_expr *like, uint32_t sym) {
  leir_expr *e = leir__copy_expr(out, out, like);
  e->sym = sym;
  e->pos = LEIR__NOPOS;
  return e;
}

leir_expr *leir__stream_ite(leir_program *out, leir_expr *cond, leir_expr *a, leir_expr *b) {
  leir_expr *e = leir__new_call(out, LEIR_OP_IF_THEN_ELSE, 3);
  e->kids[0] = cond;
  e->kids[1] = a;
  e->kids[2] = b;
  return e;
}

leir_expr *leir__stream_neg_inf(leir_program *out) {
  return leir__new_unary(out, LEIR_EXPR_NEG, leir__new_expr(out, LEIR_EXPR_INF, LEIR_OP_NONE, 0));
}

leir_expr *leir__stream_is_neg_inf(leir_program *out, leir_expr *a) {
  leir_expr *e = leir__new_expr(out, LEIR_EXPR_COMPARE, LEIR_OP_NONE, 2);
  e->kids[0] = a;
  e->kids[1] = leir__stream_neg_inf(out);
  e->u.cmp_ops[0] = LEIR_OP_EQ;
  return e;
}

leir_expr *leir__stream_call1(leir_program *out, leir_op fn, leir_expr *a) {
  leir_expr *e = leir__new_call(out, fn, 1);
  e->kids[0] = a;
  return e;
}

leir_expr *leir__stream_call2(leir_program *out, leir_op fn, leir_expr *a, leir_expr *b) {
  leir_expr *e = leir__new_call(out, fn, 2);
  e->kids[0] = a;
  e->kids[1] = b;
  return e;
}

leir_nest *leir__stream_nest_without(leir_program *out, const leir_nest *n, int skip,
                                     uint32_t nitems) {
  uint32_t nl = n->nloops - (skip >= 0 ? 1 : 0);
  leir_nest *m = leir__new_nest(out, nl, nitems);
  uint32_t j = 0;
  for (uint32_t k = 0; k < n->nloops; k++)
    if ((int)k != skip) {
      m->loops[j] = n->loops[k];
      m->loops[j].pos = LEIR__NOPOS;
      j++;
    }
  return m;
}

leir_nest *leir__stream_nest_of(leir_program *out, const leir_nest *n, uint32_t k,
                                uint32_t nitems) {
  leir_nest *m = leir__new_nest(out, 1, nitems);
  m->loops[0] = n->loops[k];
  m->loops[0].pos = LEIR__NOPOS;
  return m;
}

void leir__stream_set_eq(leir_program *out, leir_nest *n, uint32_t item, leir_expr *lhs,
                         leir_expr *rhs) {
  n->items[item].eq = leir__new_equation(out, lhs, rhs);
  n->items[item].nest = NULL;
}

leir_expr *leir__stream_acc(leir_program *out, const leir_expr *like, const leir__stream_accum *a) {
  leir_expr *e = leir__stream_tensor(out, like, a->sym);
  e->dtype = a->dtype;
  return e;
}

void leir__stream_accum_for(leir_program *out, const leir_expr *like, uint32_t sym,
                            uint64_t *next, leir__stream_accum *a) {
  if (like->dtype == LEIR_F64) {
    a->sym = sym;
    a->dtype = LEIR_F64;
    a->fresh = false;
  } else {
    a->sym = leir__tensor_sym(out, (*next)++);
    a->dtype = LEIR_F64;
    a->fresh = true;
  }
}

void leir__stream_accum_native(uint32_t s, uint8_t dt, leir__stream_accum *a) {
  a->sym = s;
  a->dtype = dt;
  a->fresh = false;
}

bool leir__stream_sum_is_f64(const leir__sctx *c, uint32_t t) {
  return c->p->nests[t]->items[0].eq->lhs->dtype == LEIR_F64;
}

void leir__stream_running(leir_program *out, leir_nest *body, uint32_t at, const leir_expr *mlhs,
                          const leir_expr *x, uint32_t f, uint32_t w,
                          const leir__stream_accum *t) {
#define M_ (leir__stream_tensor(out, mlhs, mlhs->sym))
#define F_ (leir__stream_tensor(out, mlhs, f))
#define W_ (leir__stream_tensor(out, mlhs, w))
#define T_ (leir__stream_acc(out, mlhs, t))
#define X_ (leir__copy_expr(out, out, x))
  /* F_s=max(M_s,X) */
  leir__stream_set_eq(out, body, at, F_, leir__stream_call2(out, LEIR_OP_MAX, M_, X_));
  /* W_s=if_then_else(F_s==-inf,0,exp(X-F_s)) */
  leir__stream_set_eq(
      out, body, at + 1, W_,
      leir__stream_ite(out, leir__stream_is_neg_inf(out, F_), leir__mk_int(out, 0),
                       leir__stream_call1(out, LEIR_OP_EXP, leir__mk_bin(out, LEIR_OP_SUB, X_, F_))));
  /* T_s=if_then_else(F_s==M_s,T_s+W_s,T_s*exp(M_s-F_s)+W_s) */
  leir_expr *same = leir__new_expr(out, LEIR_EXPR_COMPARE, LEIR_OP_NONE, 2);
  same->kids[0] = F_;
  same->kids[1] = M_;
  same->u.cmp_ops[0] = LEIR_OP_EQ;
  leir_expr *resc = leir__mk_bin(out, LEIR_OP_MUL, T_,
                                 leir__stream_call1(out, LEIR_OP_EXP,
                                                    leir__mk_bin(out, LEIR_OP_SUB, M_, F_)));
  leir__stream_set_eq(out, body, at + 2, T_,
                      leir__stream_ite(out, same, leir__mk_bin(out, LEIR_OP_ADD, T_, W_),
                                       leir__mk_bin(out, LEIR_OP_ADD, resc, W_)));
  /* M_s=F_s */
  leir__stream_set_eq(out, body, at + 3, M_, F_);
#undef M_
#undef F_
#undef W_
#undef T_
#undef X_
}

void leir__stream_init(leir_program *out, leir_nest *n, uint32_t at, const leir_expr *mlhs,
                       const leir__stream_accum *t) {
  leir__stream_set_eq(out, n, at, leir__stream_tensor(out, mlhs, mlhs->sym),
                      leir__stream_neg_inf(out));
  leir__stream_set_eq(out, n, at + 1, leir__stream_acc(out, mlhs, t), leir__mk_int(out, 0));
}

void leir__stream_copy_back(leir_program *out, leir_nest *n, uint32_t at, const leir_expr *mlhs,
                            uint32_t s, const leir__stream_accum *t) {
  leir__stream_set_eq(out, n, at, leir__stream_tensor(out, mlhs, s),
                      leir__stream_acc(out, mlhs, t));
}

