/*
 * Between expressions and the algebra: atoms (the non-polynomial
 * subexpressions), an expression as a rational function (conv), and
 * polynomials and rational functions built back into expressions.
 */
#include "algebra.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algebra_internal.h"

/* ---- atoms --------------------------------------------------------------- */

static uint32_t atom_id(leir__alg *a, leir_expr *e) {
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__print_expr(&b, a->p, e);
  if (b.failed || !b.data) {
    leir__sb_release(&b);
    fail(a, LEIR__ALG_NOMEM);
  }
  leir__sb_putc(&b, 0);
  for (uint32_t i = 0; i < a->natoms; i++)
    if (strcmp(a->keys[i], b.data) == 0) {
      leir__sb_release(&b);
      return i;
    }
  if (a->natoms >= MAX_ATOMS) {
    leir__sb_release(&b);
    fail(a, LEIR__ALG_LIMIT);
  }
  uint32_t cap = a->cap_atoms;
  a->atoms = leir__alg_grow(a, a->atoms, a->natoms, &cap, sizeof *a->atoms);
  uint32_t cap2 = a->cap_atoms;
  a->keys = leir__alg_grow(a, a->keys, a->natoms, &cap2, sizeof *a->keys);
  a->cap_atoms = cap;
  char *key = leir__arena_strndup(&a->arena, b.data, b.len - 1);
  leir__sb_release(&b);
  if (!key) fail(a, LEIR__ALG_NOMEM);
  a->atoms[a->natoms] = e;
  a->keys[a->natoms] = key;
  return a->natoms++;
}

const leir_expr *leir__alg_strip(const leir_expr *e) {
  while (e && e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e;
}

bool leir__alg_contains_inf(const leir_expr *e, unsigned depth) {
  if (!e || depth > MAX_DEPTH) return depth > MAX_DEPTH;
  if (e->kind == LEIR_EXPR_INF) return true;
  if (e->kind == LEIR_EXPR_TENSOR) return false; /* subscripts are indices */
  for (uint32_t i = 0; i < e->n; i++)
    if (leir__alg_contains_inf(e->kids[i], depth + 1)) return true;
  return false;
}

/* integer exponent of a power node, or false */
bool leir__alg_int_exponent(const leir_expr *e, int64_t *n) {
  e = leir__alg_strip(e);
  bool neg = false;
  while (e && e->kind == LEIR_EXPR_NEG) {
    neg = !neg;
    e = leir__alg_strip(e->kids[0]);
  }
  if (!e || e->kind != LEIR_EXPR_NUMBER) return false;
  rat r;
  if (!leir__alg_rat_of_lexeme(e->u.num->lexeme, e->u.num->len, &r) || r.d != 1 || r.n > MAX_POW)
    return false;
  *n = neg ? -r.n : r.n;
  return true;
}


/* a copy of e with arithmetic arguments in canonical form */
static leir_expr *canon_atom(leir__alg *a, const leir_expr *e) {
  leir_expr *c;
  if (a->flat || e->kind == LEIR_EXPR_TENSOR || e->kind == LEIR_EXPR_VAR ||
      e->kind == LEIR_EXPR_NUMBER)
    return chk(a, leir__copy_expr(a->p, a->p, e));
  c = chk(a, leir__new_expr(a->p, (leir_expr_kind)e->kind, (leir_op)e->op, e->n));
  for (uint32_t i = 0; i < e->n; i++) {
    const leir_expr *k = e->kids[i];
    if (e->op == LEIR_OP_IF_THEN_ELSE && i == 0)
      c->kids[i] = chk(a, leir__copy_expr(a->p, a->p, k));
    else {
      leir__rf r = leir__alg_conv(a, k);
      c->kids[i] = leir__alg_rf_build(a, &r);
    }
  }
  return c;
}

leir__rf leir__alg_rf_of(leir__poly *n, leir__poly *d) { return (leir__rf){n, d}; }

static leir__rf rf_atom(leir__alg *a, const leir_expr *e) {
  uint32_t id = atom_id(a, canon_atom(a, e));
  return leir__alg_rf_of(leir__alg_poly_atom(a, id, 1), leir__alg_poly_const(a, RONE));
}

static leir__rf rf_add(leir__alg *a, leir__rf x, leir__rf y, bool sub) {
  if (leir__alg_poly_eq(x.den, y.den))
    return leir__alg_rf_of(leir__alg_poly_add(a, x.num, y.num, sub), x.den);
  return leir__alg_rf_of(leir__alg_poly_add(a, leir__alg_poly_mul(a, x.num, y.den),
                                            leir__alg_poly_mul(a, y.num, x.den), sub),
                         leir__alg_poly_mul(a, x.den, y.den));
}

static leir__rf rf_mul(leir__alg *a, leir__rf x, leir__rf y) {
  return leir__alg_rf_of(leir__alg_poly_mul(a, x.num, y.num), leir__alg_poly_mul(a, x.den, y.den));
}

static leir__rf rf_div(leir__alg *a, leir__rf x, leir__rf y) {
  if (leir__alg_poly_is_zero(y.num)) fail(a, LEIR__ALG_REFUSED);
  return leir__alg_rf_of(leir__alg_poly_mul(a, x.num, y.den), leir__alg_poly_mul(a, x.den, y.num));
}

leir__rf leir__alg_conv(leir__alg *a, const leir_expr *e) {
  if (++a->depth > MAX_DEPTH) fail(a, LEIR__ALG_LIMIT);
  leir__rf r;
  switch (e->kind) {
  case LEIR_EXPR_NUMBER: {
    rat v;
    if (leir__alg_rat_of_lexeme(e->u.num->lexeme, e->u.num->len, &v))
      r = leir__alg_rf_of(leir__alg_poly_const(a, v), leir__alg_poly_const(a, RONE));
    else
      r = rf_atom(a, e);
    break;
  }
  case LEIR_EXPR_INF:
  case LEIR_EXPR_COMPARE:
  case LEIR_EXPR_AND:
  case LEIR_EXPR_OR:
    fail(a, LEIR__ALG_REFUSED);
  case LEIR_EXPR_PAREN:
    r = leir__alg_conv(a, e->kids[0]);
    break;
  case LEIR_EXPR_NEG:
    r = leir__alg_conv(a, e->kids[0]);
    r.num = leir__alg_poly_scale(a, r.num, (rat){-1, 1});
    break;
  case LEIR_EXPR_BINARY:
    switch (e->op) {
    case LEIR_OP_ADD:
    case LEIR_OP_SUB:
      r = rf_add(a, leir__alg_conv(a, e->kids[0]), leir__alg_conv(a, e->kids[1]),
                 e->op == LEIR_OP_SUB);
      break;
    case LEIR_OP_MUL:
      r = rf_mul(a, leir__alg_conv(a, e->kids[0]), leir__alg_conv(a, e->kids[1]));
      break;
    case LEIR_OP_DIV:
      r = rf_div(a, leir__alg_conv(a, e->kids[0]), leir__alg_conv(a, e->kids[1]));
      break;
    case LEIR_OP_POW: {
      int64_t n;
      if (leir__alg_int_exponent(e->kids[1], &n)) {
        leir__rf b = leir__alg_conv(a, e->kids[0]);
        if (n < 0) {
          if (leir__alg_poly_is_zero(b.num)) fail(a, LEIR__ALG_REFUSED);
          b = leir__alg_rf_of(b.den, b.num);
          n = -n;
        }
        r = leir__alg_rf_of(leir__alg_poly_pow(a, b.num, n), leir__alg_poly_pow(a, b.den, n));
      } else {
        r = rf_atom(a, e);
      }
      break;
    }
    default: /* //, % */
      r = rf_atom(a, e);
    }
    break;
  default: /* TENSOR, VAR, CALL */
    r = rf_atom(a, e);
  }
  a->depth--;
  return r;
}

/* ---- building expressions ------------------------------------------------ */

/* atom ranks by key text: the canonical variable order of the output */
static uint32_t *atom_ranks(leir__alg *a) {
  uint32_t *order = aalloc(a, (a->natoms + 1) * sizeof *order);
  uint32_t *rank = aalloc(a, (a->natoms + 1) * sizeof *rank);
  for (uint32_t i = 0; i < a->natoms; i++) order[i] = i;
  for (uint32_t i = 1; i < a->natoms; i++) { /* insertion sort: at most MAX_ATOMS */
    uint32_t v = order[i], j = i;
    while (j > 0 && strcmp(a->keys[order[j - 1]], a->keys[v]) > 0) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = v;
  }
  for (uint32_t i = 0; i < a->natoms; i++) rank[order[i]] = i;
  return rank;
}

/* The polynomial with atoms renamed to their ranks: normalising it gives
 * the canonical term order. Atom ids are restored through `order`. */
static leir__poly *by_rank(leir__alg *a, const leir__poly *q, const uint32_t *rank) {
  leir__poly *r = leir__alg_poly_new(a, q->n);
  for (uint32_t i = 0; i < q->n; i++) {
    term t = q->t[i];
    fpow *f = aalloc(a, (t.nf + 1) * sizeof *f);
    for (uint32_t k = 0; k < t.nf; k++) {
      fpow v = {rank[t.f[k].atom], t.f[k].e};
      uint32_t j = k;
      while (j > 0 && f[j - 1].atom > v.atom) {
        f[j] = f[j - 1];
        j--;
      }
      f[j] = v;
    }
    t.f = f;
    r->t[i] = t;
  }
  if (r->n > 1) qsort(r->t, r->n, sizeof *r->t, leir__alg_term_qcmp);
  return r;
}

leir_expr *leir__alg_mk_bin(leir__alg *a, leir_op op, leir_expr *x, leir_expr *y) {
  return chk(a, leir__new_binary(a->p, op, x, y));
}

leir_expr *leir__alg_mk_int(leir__alg *a, int64_t v) { return chk(a, leir__new_int(a->p, v)); }

leir_expr *leir__alg_atom_expr(leir__alg *a, uint32_t id) {
  return chk(a, leir__copy_expr(a->p, a->p, a->atoms[id]));
}

/* n/d (n >= 0, reduced) as an exact decimal literal when d divides a
 * power of ten (d = 2^i 5^j: 0.5, 1.6732631921768188, 0.0000125); false
 * otherwise or when it does not fit in int64 digits */
bool leir__alg_decimal_of(int64_t n, int64_t d, char *buf, size_t cap) {
  int64_t p10 = 1;
  int k = 0;
  while (p10 % d != 0) {
    if (k == 18) return false;
    p10 *= 10;
    k++;
  }
  int64_t m;
  if (__builtin_mul_overflow(n, p10 / d, &m)) return false;
  char digits[24];
  int len = snprintf(digits, sizeof digits, "%lld", (long long)m);
  if (len == k)
    snprintf(buf, cap, "0.%s", digits);
  else if (len < k) /* 0.000ddd */
    snprintf(buf, cap, "0.%0*d%s", k - len, 0, digits);
  else
    snprintf(buf, cap, "%.*s.%s", len - k, digits, digits + len - k);
  return true;
}

/* |c| * monomial (negated in its first factor when `neg`: -3*x parses as
 * (-3)*x, so no parentheses appear), atoms given by rank (map `order`).
 * A coefficient n/d with d = 2^i 5^j is written as its exact decimal
 * (0.5*x, as the workloads write constants), others as n*x/d. */
static leir_expr *term_expr(leir__alg *a, const term *t, const uint32_t *order, bool neg) {
  leir_expr *e = NULL;
  int64_t n = t->c.n < 0 ? -t->c.n : t->c.n;
  char dec[64];
  bool decimal = t->c.d != 1 && leir__alg_decimal_of(n, t->c.d, dec, sizeof dec);
  if (decimal) e = chk(a, leir__new_number(a->p, dec, strlen(dec)));
  else if (n != 1 || t->nf == 0) e = leir__alg_mk_int(a, n);
  for (uint32_t i = 0; i < t->nf; i++) {
    leir_expr *f = leir__alg_atom_expr(a, order ? order[t->f[i].atom] : t->f[i].atom);
    if (t->f[i].e > 1) f = leir__alg_mk_bin(a, LEIR_OP_POW, f, leir__alg_mk_int(a, t->f[i].e));
    if (!e && neg) {
      f = chk(a, leir__new_unary(a->p, LEIR_EXPR_NEG, f));
      neg = false;
    }
    e = e ? leir__alg_mk_bin(a, LEIR_OP_MUL, e, f) : f;
  }
  if (neg) { /* the coefficient came first */
    if (e->kind == LEIR_EXPR_BINARY) {
      /* the leftmost leaf of the left-leaning product is the number */
      leir_expr *cur = e;
      while (cur->kids[0]->kind == LEIR_EXPR_BINARY) cur = cur->kids[0];
      cur->kids[0] = chk(a, leir__new_unary(a->p, LEIR_EXPR_NEG, cur->kids[0]));
    } else {
      e = chk(a, leir__new_unary(a->p, LEIR_EXPR_NEG, e));
    }
  }
  if (t->c.d != 1 && !decimal) e = leir__alg_mk_bin(a, LEIR_OP_DIV, e, leir__alg_mk_int(a, t->c.d));
  return e;
}

/* canonical sum of the terms of q (q already in rank form when order) */
static leir_expr *sum_expr(leir__alg *a, const leir__poly *q, const uint32_t *order) {
  if (q->n == 0) return leir__alg_mk_int(a, 0);
  leir_expr *e = NULL;
  for (uint32_t i = 0; i < q->n; i++) {
    bool neg = q->t[i].c.n < 0;
    leir_expr *t = term_expr(a, &q->t[i], order, neg && !e);
    if (!e)
      e = t;
    else
      e = leir__alg_mk_bin(a, neg ? LEIR_OP_SUB : LEIR_OP_ADD, e, t);
  }
  return e;
}

leir_expr *leir__alg_poly_build(leir__alg *a, const leir__poly *q) {
  uint32_t *rank = atom_ranks(a);
  uint32_t *order = aalloc(a, (a->natoms + 1) * sizeof *order);
  for (uint32_t i = 0; i < a->natoms; i++) order[rank[i]] = i;
  return sum_expr(a, by_rank(a, q, rank), order);
}

/* leading coefficient in the canonical (rank) order */
rat leir__alg_lead_coef(leir__alg *a, const leir__poly *q) {
  return by_rank(a, q, atom_ranks(a))->t[0].c;
}

/* den with leading coefficient 1 (num scaled to match); den constant folds */
leir__rf leir__alg_rf_monic(leir__alg *a, leir__rf r) {
  if (leir__alg_poly_is_zero(r.num)) return leir__alg_rf_of(r.num, leir__alg_poly_const(a, RONE));
  rat inv = leir__alg_rinv(a, leir__alg_lead_coef(a, r.den));
  return leir__alg_rf_of(leir__alg_poly_scale(a, r.num, inv), leir__alg_poly_scale(a, r.den, inv));
}

leir_expr *leir__alg_rf_build(leir__alg *a, const leir__rf *rf) {
  leir__rf r = leir__alg_rf_monic(a, *rf);
  leir_expr *n = leir__alg_poly_build(a, r.num);
  if (leir__alg_poly_is_const(r.den)) return n;
  return leir__alg_mk_bin(a, LEIR_OP_DIV, n, leir__alg_poly_build(a, r.den));
}
