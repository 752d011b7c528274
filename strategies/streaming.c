/*
 * Sites and builders of the streaming strategies (streaming.h).
 */
#include "streaming.h"

#include <math.h>
#include <stdlib.h>

#include "algebra.h"
#include "visit.h"

static const leir_expr *unparen(const leir_expr *e) {
  while (e && e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e;
}

static bool is_single_eq_nest(const leir_nest *n) {
  return n->nitems == 1 && n->items[0].eq != NULL && n->nloops > 0;
}

static bool reads(const leir_expr *e, uint32_t sym) {
  return leir__expr_reads_tensor(e, sym, NULL);
}

static bool same_access(const leir_program *p, const leir_expr *a, const leir_expr *b) {
  a = unparen(a);
  b = unparen(b);
  return a->kind == LEIR_EXPR_TENSOR && b->kind == LEIR_EXPR_TENSOR && a->sym == b->sym &&
         leir__expr_equal(p, a, p, b);
}

/* Loop index of a plain loop-variable entry, or -1. */
static int loop_of(const leir_nest *n, const leir_expr *e) {
  if (e->kind != LEIR_EXPR_VAR) return -1;
  for (uint32_t k = 0; k < n->nloops; k++)
    if (n->loops[k].sym == e->sym) return (int)k;
  return -1;
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

static bool nest_uses(const leir_nest *n, uint32_t sym) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].nest ? nest_uses(n->items[k].nest, sym)
                         : reads(n->items[k].eq->lhs, sym) || reads(n->items[k].eq->rhs, sym))
      return true;
  }
  return false;
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

/* ---- the prefix-array forms ------------------------------------------- */

void leir__stream_prefix_layout(const leir__stream_max *mx, leir__stream_prefix *pl) {
  const leir_nest *n = mx->n;
  const leir_expr *lhs = mx->eq->lhs;
  const leir_expr *xs = mx->eq->rhs->n == 2 ? unparen(mx->eq->rhs->kids[1]) : NULL;
  pl->rank = lhs->n + 1;
  pl->kpos = lhs->n;
  pl->ksym = n->loops[mx->k].sym;
  pl->last = n->loops[mx->k].extent - 1;
  /* X's subscript when X reads every loop once, as a plain variable */
  bool like_x = xs && xs->kind == LEIR_EXPR_TENSOR && xs->n == n->nloops && n->nloops <= 64;
  uint64_t seen = 0;
  for (uint32_t j = 0; like_x && j < xs->n; j++) {
    int at = loop_of(n, xs->kids[j]);
    like_x = at >= 0 && !(seen >> at & 1);
    if (!like_x) break;
    seen |= 1ull << at;
    pl->from[j] = -1;
    if ((uint32_t)at == mx->k) {
      pl->kpos = j;
      continue;
    }
    for (uint32_t i = 0; i < lhs->n; i++)
      if (lhs->kids[i]->kind == LEIR_EXPR_VAR && lhs->kids[i]->sym == n->loops[at].sym)
        pl->from[j] = (int32_t)i;
  }
  if (like_x) return;
  for (uint32_t j = 0; j < lhs->n; j++) pl->from[j] = (int32_t)j;
  pl->from[lhs->n] = -1;
  pl->kpos = lhs->n;
}

leir_expr *leir__stream_prefix_access(leir_program *out, const leir__stream_prefix *pl,
                                      uint32_t sym, uint8_t dt, uint8_t sc,
                                      const leir_expr *row, leir_expr *k) {
  leir_expr *e = leir__new_tensor(out, sym, (leir_dtype)dt, (leir_scope)sc, pl->rank);
  for (uint32_t j = 0; j < pl->rank; j++)
    e->kids[j] = pl->from[j] < 0 ? k : leir__copy_expr(out, out, row->kids[pl->from[j]]);
  return e;
}

static bool nest_writes(const leir_nest *n, uint32_t sym) {
  for (uint32_t k = 0; k < n->nitems; k++)
    if (n->items[k].nest ? nest_writes(n->items[k].nest, sym) : n->items[k].eq->lhs->sym == sym)
      return true;
  return false;
}

/* sym, written by top-level nest `own` only, used by no nest before it */
static bool own_tensor(const leir__sctx *c, uint32_t sym, uint32_t own, char *why, size_t cap) {
  if (c->known[sym]) {
    snprintf(why, cap, "%s is a signature variable (a prefix array changes its shape)",
             leir__name(c, sym));
    return false;
  }
  for (uint32_t t = 0; t < c->p->nnests; t++) {
    if (t == own) continue;
    if (nest_writes(c->p->nests[t], sym) || (t < own && nest_uses(c->p->nests[t], sym))) {
      snprintf(why, cap, "nest %u %s %s", t, t < own ? "uses" : "writes", leir__name(c, sym));
      return false;
    }
  }
  return true;
}

bool leir__stream_prefix_ok(const leir__sctx *c, const leir__stream_max *mx, uint32_t s,
                            bool online, char *why, size_t cap) {
  return own_tensor(c, mx->m, mx->t, why, cap) &&
         (!online || own_tensor(c, s, mx->t + 1, why, cap));
}

/* Can a value be -inf (NI_NEG) or +inf (NI_POS)? */
enum { NI_NEG = 1, NI_POS = 2, NI_BOTH = 3, NI_VISITING = 0x40, NI_DONE = 0x80 };

typedef struct inf_memo {
  const leir__sctx *c;
  uint8_t *state; /* by symbol */
  uint32_t nsym;
} inf_memo;

static unsigned inf_sym(inf_memo *m, uint32_t sym, unsigned depth);

static unsigned swap_inf(unsigned f) { return (f & NI_NEG ? NI_POS : 0) | (f & NI_POS ? NI_NEG : 0); }

/* a divisor proven nonzero from numbers and declared domains */
static bool nonzero(const leir__sctx *c, const leir_expr *e) {
  e = unparen(e);
  if (e->kind == LEIR_EXPR_NUMBER) return e->u.num->value != 0;
  leir_program *s = leir__program_new(2048);
  leir__alg *a = s ? leir__alg_new(s, 64) : NULL;
  leir_expr *copy = a ? leir__copy_expr(s, c->p, e) : NULL;
  bool ok = false;
  if (copy) {
    for (uint32_t i = 0; i < c->p->nsig; i++) {
      const leir__decl *d = &c->p->sig[i];
      uint32_t sym = leir__sym_find(s, leir__sym_name(c->p, d->sym), leir__sym_len(c->p, d->sym));
      if (sym == LEIR__NOSYM) continue;
      if (d->domain == LEIR_DOMAIN_POSITIVE) leir__alg_assume_positive(a, sym);
      else if (d->domain == LEIR_DOMAIN_VALUE) leir__alg_assume_range(a, sym, d->dom_a, d->dom_a);
      else if (d->domain == LEIR_DOMAIN_RANGE || d->domain == LEIR_DOMAIN_UNIFORM)
        leir__alg_assume_range(a, sym, d->dom_a, d->dom_b);
    }
    ok = leir__alg_nonzero(a, copy);
  }
  leir__alg_free(a);
  leir_program_free(s);
  return ok;
}

/* self: the left-hand tensor of the equation being read, whose read as an
 * operand of max (min) is its implicit initial value -inf (+inf) */
static unsigned inf_expr(inf_memo *m, const leir_expr *e, uint32_t self, unsigned depth) {
  if (depth > 200) return NI_BOTH;
  switch ((leir_expr_kind)e->kind) {
  case LEIR_EXPR_NUMBER: return isfinite(e->u.num->value) ? 0 : e->u.num->value < 0 ? NI_NEG : NI_POS;
  case LEIR_EXPR_INF: return NI_POS;
  case LEIR_EXPR_VAR:
  case LEIR_EXPR_COMPARE:
  case LEIR_EXPR_AND:
  case LEIR_EXPR_OR: return 0;
  case LEIR_EXPR_TENSOR: return e->sym == self ? 0 : inf_sym(m, e->sym, depth + 1);
  case LEIR_EXPR_PAREN: return inf_expr(m, e->kids[0], self, depth + 1);
  case LEIR_EXPR_NEG: return swap_inf(inf_expr(m, e->kids[0], self, depth + 1));
  case LEIR_EXPR_BINARY: {
    unsigned a = inf_expr(m, e->kids[0], self, depth + 1);
    unsigned b = inf_expr(m, e->kids[1], self, depth + 1);
    switch ((leir_op)e->op) {
    case LEIR_OP_ADD: return a | b;
    case LEIR_OP_SUB: return a | swap_inf(b);
    case LEIR_OP_MUL: return a | b ? NI_BOTH : 0;
    case LEIR_OP_DIV: return a | b || !nonzero(m->c, e->kids[1]) ? NI_BOTH : 0;
    case LEIR_OP_POW: {
      const leir_expr *p = unparen(e->kids[1]);
      return a | b || p->kind != LEIR_EXPR_NUMBER || p->u.num->value < 0 ? NI_BOTH : 0;
    }
    default: return a | b ? NI_BOTH : 0; /* // and % of finite values */
    }
  }
  case LEIR_EXPR_CALL: {
    unsigned any = 0, all = NI_BOTH;
    for (uint32_t i = 0; i < e->n; i++) {
      if (e->op == LEIR_OP_IF_THEN_ELSE && i == 0) continue; /* the condition */
      const leir_expr *k = unparen(e->kids[i]);
      unsigned f = k->kind == LEIR_EXPR_TENSOR && k->sym == self
                       ? (e->op == LEIR_OP_MAX ? NI_NEG : e->op == LEIR_OP_MIN ? NI_POS : 0)
                       : inf_expr(m, k, self, depth + 1);
      any |= f;
      all &= f;
    }
    switch ((leir_op)e->op) {
    case LEIR_OP_MAX: return (all & NI_NEG) | (any & NI_POS);
    case LEIR_OP_MIN: return (any & NI_NEG) | (all & NI_POS);
    case LEIR_OP_IF_THEN_ELSE: return any;
    case LEIR_OP_EXP: return NI_POS;                 /* overflow; never -inf */
    case LEIR_OP_LOG: return NI_NEG | (any & NI_POS); /* log(0) */
    case LEIR_OP_SQRT:
    case LEIR_OP_ABS: return any ? NI_POS : 0;
    case LEIR_OP_ERF: return 0;
    default: return NI_BOTH;
    }
  }
  }
  return NI_BOTH;
}

static unsigned inf_sym(inf_memo *m, uint32_t sym, unsigned depth) {
  if (sym >= m->nsym || depth > 200) return NI_BOTH;
  if (m->state[sym] & NI_DONE) return m->state[sym] & NI_BOTH;
  if (m->state[sym] & NI_VISITING) return 0; /* a cycle: induction */
  m->state[sym] = NI_VISITING;
  const leir__sctx *c = m->c;
  unsigned f = 0;
  bool written = false;
  for (uint32_t i = 0; i < c->nnests; i++) {
    const leir_nest *n = c->nests[i].nest;
    for (uint32_t k = 0; k < n->nitems; k++) {
      const leir_equation *eq = n->items[k].eq;
      if (!eq || eq->lhs->sym != sym) continue;
      written = true;
      f |= inf_expr(m, eq->rhs, sym, depth + 1);
    }
  }
  if (!written) /* an input: drawn from its domain, finite but a declared value */
    for (uint32_t i = 0; i < c->p->nsig; i++)
      if (c->p->sig[i].sym == sym && c->p->sig[i].domain == LEIR_DOMAIN_VALUE &&
          !isfinite(c->p->sig[i].dom_a))
        f |= c->p->sig[i].dom_a < 0 ? NI_NEG : NI_POS;
  m->state[sym] = (uint8_t)(NI_DONE | f);
  return f;
}

bool leir__stream_may_be_neg_inf(const leir__sctx *c, const leir_expr *x) {
  inf_memo m = {c, calloc(c->p->syms.count ? c->p->syms.count : 1, 1), c->p->syms.count};
  if (!m.state) return true;
  bool neg = inf_expr(&m, x, LEIR__NOSYM, 0) & NI_NEG;
  free(m.state);
  return neg;
}

static leir_expr *k_minus_1(leir_program *out, const leir__stream_prefix *pl) {
  return leir__mk_bin(out, LEIR_OP_SUB, leir__mk_var(out, pl->ksym), leir__mk_int(out, 1));
}

/* k-1<0 */
static leir_expr *first_k(leir_program *out, const leir__stream_prefix *pl) {
  leir_expr *e = leir__new_expr(out, LEIR_EXPR_COMPARE, LEIR_OP_NONE, 2);
  e->kids[0] = k_minus_1(out, pl);
  e->kids[1] = leir__mk_int(out, 0);
  e->u.cmp_ops[0] = LEIR_OP_LT;
  return e;
}

void leir__stream_prefix_scan(leir_program *out, const leir_equation *meq,
                              const leir__stream_prefix *pl, uint32_t t_sym, uint8_t t_dtype,
                              uint8_t t_scope, bool guard, leir_nest *into) {
  const leir_expr *ml = meq->lhs, *x = meq->rhs->kids[1];
#define MK_ (leir__stream_prefix_access(out, pl, ml->sym, ml->dtype, ml->scope, ml, leir__mk_var(out, pl->ksym)))
#define MK1_ (leir__stream_prefix_access(out, pl, ml->sym, ml->dtype, ml->scope, ml, k_minus_1(out, pl)))
#define TK_ (leir__stream_prefix_access(out, pl, t_sym, t_dtype, t_scope, ml, leir__mk_var(out, pl->ksym)))
#define TK1_ (leir__stream_prefix_access(out, pl, t_sym, t_dtype, t_scope, ml, k_minus_1(out, pl)))
#define X_ (leir__copy_expr(out, out, x))
  /* M_{..k..}=max(if_then_else(k-1<0,-inf,M_{..k-1..}),X) */
  leir__stream_set_eq(out, into, 0, MK_,
                      leir__stream_call2(out, LEIR_OP_MAX,
                                         leir__stream_ite(out, first_k(out, pl),
                                                          leir__stream_neg_inf(out), MK1_),
                                         X_));
  /* T_{..k..}=if_then_else(k-1<0,1,T_{..k-1..})
   *           *exp(if_then_else(k-1<0,-inf,M_{..k-1..})-M_{..k..})+exp(X-M_{..k..}) */
  leir_expr *scale = leir__stream_call1(
      out, LEIR_OP_EXP,
      leir__mk_bin(out, LEIR_OP_SUB,
                   leir__stream_ite(out, first_k(out, pl), leir__stream_neg_inf(out), MK1_), MK_));
  leir_expr *rhs = leir__mk_bin(
      out, LEIR_OP_ADD,
      leir__mk_bin(out, LEIR_OP_MUL,
                   leir__stream_ite(out, first_k(out, pl), leir__mk_int(out, 1), TK1_), scale),
      leir__stream_call1(out, LEIR_OP_EXP, leir__mk_bin(out, LEIR_OP_SUB, X_, MK_)));
  if (guard) /* if_then_else(M_{..k..}==-inf,0,...) */
    rhs = leir__stream_ite(out, leir__stream_is_neg_inf(out, MK_), leir__mk_int(out, 0), rhs);
  leir__stream_set_eq(out, into, 1, TK_, rhs);
#undef MK_
#undef MK1_
#undef TK_
#undef TK1_
#undef X_
}

typedef struct prefix_reads_ud {
  leir_program *out;
  const leir__stream_prefix *pl;
  uint32_t sym, new_sym;
  uint8_t dt, sc;
} prefix_reads_ud;

static int prefix_read_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  prefix_reads_ud *u = v->ud;
  const leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_TENSOR || e->sym != u->sym || e->n + 1 != u->pl->rank)
    return LEIR__VISIT_NEXT;
  *slot = leir__stream_prefix_access(u->out, u->pl, u->new_sym, u->dt, u->sc, e,
                                     leir__mk_int(u->out, u->pl->last));
  return LEIR__VISIT_SKIP;
}

void leir__stream_prefix_reads(leir_program *out, uint32_t from, const leir__stream_prefix *pl,
                               uint32_t sym, uint32_t new_sym, uint8_t dt, uint8_t sc) {
  prefix_reads_ud u = {out, pl, sym, new_sym, dt, sc};
  leir__visit v = LEIR__VISIT_INIT(prefix_read_node, &u);
  for (uint32_t t = from; t < out->nnests; t++) leir__visit_nest(&v, out->nests[t]);
}

bool leir__stream_prefix_cot(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps) {
  leir__cot_generic_facts(b, d);
  const leir_program *before, *after;
  leir__diff_programs(d, &before, &after);
  const leir__tok *nt = leir__ps_get(ps, LEIR__K_NEST, NULL);
  int64_t t;
  if (!nt || !leir__tok_int(nt, &t) || t < 0 || (uint64_t)t >= before->nnests ||
      (uint64_t)t >= after->nnests)
    return true;
  const leir_nest *src = before->nests[t], *scan = after->nests[t];
  if (!is_single_eq_nest(src)) return true;
  const leir_expr *m = src->items[0].eq->lhs;
  /* the reduction loop: the one M's subscript does not name */
  for (uint32_t k = 0; k < src->nloops; k++) {
    bool named = false;
    for (uint32_t j = 0; j < m->n; j++)
      named = named || (m->kids[j]->kind == LEIR_EXPR_VAR && m->kids[j]->sym == src->loops[k].sym);
    if (named) continue;
    leir__sb_puts(b, " (the prefix array");
    if (scan->nitems > 1) leir__sb_putc(b, 's');
    for (uint32_t i = 0; i < scan->nitems; i++) {
      if (!scan->items[i].eq) continue;
      leir__sb_puts(b, i ? " and " : " ");
      leir__print_expr(b, after, scan->items[i].eq->lhs);
    }
    leir__sb_printf(b,
                    " %s a value for each of the %lld iterations of the reduced loop %.*s: "
                    "%lld times the memory of one running value per row)",
                    scan->nitems > 1 ? "keep" : "keeps", (long long)src->loops[k].extent, (int)leir__sym_len(before, src->loops[k].sym),
                    leir__sym_name(before, src->loops[k].sym), (long long)src->loops[k].extent);
    break;
  }
  return true;
}

/* acc=native and lanes=L: what the accumulator costs in precision */
static void native_cot(leir__strbuf *b, const leir_program *before, const leir__pstep *ps) {
  const leir__tok *nt = leir__ps_get(ps, LEIR__K_NEST, NULL);
  int64_t t, lanes = 0;
  if (!nt || !leir__tok_int(nt, &t) || t < 0 || (uint64_t)t + 1 >= before->nnests) return;
  const leir_nest *sum = before->nests[t + 1];
  if (!is_single_eq_nest(sum)) return;
  const leir_expr *s = sum->items[0].eq->lhs;
  const char *dt = leir_dtype_name((leir_dtype)s->dtype);
  const leir__tok *lt = leir__ps_get(ps, LEIR__K_LANES, NULL);
  if (lt) leir__tok_int(lt, &lanes);
  leir__sb_printf(b, " (the running sum is kept in %s, the dtype of %.*s, as the reference keeps it: "
                  "each element costs a rounding of the sum in %s, and each growth of the running "
                  "maximum one more for the rescaling, where an f64 accumulator rounds to %s once, "
                  "at the end",
                  dt, (int)leir__sym_len(before, s->sym), leir__sym_name(before, s->sym), dt, dt);
  if (lanes > 1)
    leir__sb_printf(b, "; the row is reduced in %lld interleaved lanes, each with its own running "
                    "maximum and sum, combined once per row with one rescaling per lane, so the "
                    "lanes can run as vector lanes",
                    (long long)lanes);
  leir__sb_putc(b, ')');
}

bool leir__stream_cot(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps) {
  bool prefix = leir__ps_get(ps, LEIR__K_STATE, NULL) != NULL;
  bool native = leir__ps_get(ps, LEIR__K_ACC, NULL) != NULL;
  if (!prefix && !native) return false; /* the generic facts */
  if (prefix) leir__stream_prefix_cot(b, d, ps);
  else leir__cot_generic_facts(b, d);
  if (native) {
    const leir_program *before, *after;
    leir__diff_programs(d, &before, &after);
    native_cot(b, before, ps);
  }
  return true;
}

/* ---- the product with the softmax output (flash attention) ----------- */

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
