/*
 * The AC-canonical hash of an expression: equal for expressions equal up to
 * associativity and commutativity of + and * (and signs), XXH3 underneath.
 */
#include "algebra.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algebra_internal.h"
#include "vec.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* ---- AC-canonical hash ---------------------------------------------------- */

enum { ACT_SUM = 1, ACT_PROD, ACT_NEG, ACT_NODE, ACT_INV };

static uint64_t ac_rec(const leir_program *p, const leir_expr *e, unsigned depth);

static int u64cmp(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

typedef struct hvec {
  uint64_t *v;
  uint32_t n, cap;
  bool oom;
} hvec;

static void hpush(hvec *h, uint64_t x) {
  if (h->oom) return;
  if (!leir__vec_grow32((void **)&h->v, &h->cap, (size_t)h->n + 1, sizeof *h->v, 8)) {
    h->oom = true;
    return;
  }
  h->v[h->n++] = x;
}

static uint64_t mix2(uint64_t tag, uint64_t x) {
  uint64_t b[2] = {tag, x};
  return XXH3_64bits(b, sizeof b);
}

/* The hash of |e| with e's sign pulled out of products and quotients
 * (x*(-y) = -(x*y) and (-x)/y = -(x/y) exactly in floating point): *neg
 * says whether e is the negation of what the hash describes. Sums carry no
 * sign of their own (their terms do). A chain of * and / is the multiset
 * of its factors, divisors marked (x*(y/z) = (x*y)/z = (x/z)*y). */
static uint64_t signed_rec(const leir_program *p, const leir_expr *e, bool *neg, unsigned depth);

static void sum_terms(const leir_program *p, const leir_expr *e, bool neg, hvec *h, unsigned depth) {
  e = leir__alg_strip(e);
  if (depth < MAX_DEPTH && e->kind == LEIR_EXPR_BINARY && (e->op == LEIR_OP_ADD || e->op == LEIR_OP_SUB)) {
    sum_terms(p, e->kids[0], neg, h, depth + 1);
    sum_terms(p, e->kids[1], e->op == LEIR_OP_SUB ? !neg : neg, h, depth + 1);
    return;
  }
  if (depth < MAX_DEPTH && e->kind == LEIR_EXPR_NEG) {
    sum_terms(p, e->kids[0], !neg, h, depth + 1);
    return;
  }
  bool s = false;
  uint64_t x = signed_rec(p, e, &s, depth + 1);
  hpush(h, neg != s ? mix2(ACT_NEG, x) : x);
}

/* the hash of a NUMBER node of value v (numbers compare by value: 2, 2.0
 * and 2e0 are one double) */
static uint64_t number_hash(double v) {
  uint64_t w[2] = {(uint64_t)LEIR_EXPR_NUMBER << 16, 0};
  if (v == 0) v = 0.0;
  w[1] = XXH3_64bits(&v, sizeof v);
  return XXH3_64bits_withSeed(w, sizeof w, ACT_NODE);
}

/* is v a power of two (then x/v and x*(1/v) round the same real) */
static bool pow2(double v) {
  int ex;
  return v > 0 && isfinite(v) && frexp(v, &ex) == 0.5 && isfinite(1 / v) && 1 / v != 0;
}

/* factors of a chain of * and /, divisors marked as inverses; factors 1
 * dropped (x*1 = x/1 = x) and divisions by a power of two written as
 * products (x/2 = 0.5*x): both exact in floating point */
static void prod_factors(const leir_program *p, const leir_expr *e, hvec *h, bool *neg, bool inv,
                         unsigned depth) {
  e = leir__alg_strip(e);
  if (e->kind == LEIR_EXPR_NUMBER) {
    double v = e->u.num->value;
    if (v == 1) return;
    if (inv && pow2(v)) {
      hpush(h, number_hash(1 / v));
      return;
    }
  }
  if (depth < MAX_DEPTH && e->kind == LEIR_EXPR_BINARY &&
      (e->op == LEIR_OP_MUL || e->op == LEIR_OP_DIV)) {
    prod_factors(p, e->kids[0], h, neg, inv, depth + 1);
    prod_factors(p, e->kids[1], h, neg, e->op == LEIR_OP_DIV ? !inv : inv, depth + 1);
    return;
  }
  bool s = false;
  uint64_t x = signed_rec(p, e, &s, depth + 1);
  hpush(h, inv ? mix2(ACT_INV, x) : x);
  *neg = *neg != s;
}

static uint64_t chain_hash(uint64_t tag, hvec *h) {
  if (h->oom) {
    free(h->v);
    return 0;
  }
  if (h->n == 1) { /* a chain of one is the operand itself */
    uint64_t x = h->v[0];
    free(h->v);
    return x;
  }
  qsort(h->v, h->n, sizeof *h->v, u64cmp);
  uint64_t r = XXH3_64bits_withSeed(h->v, h->n * sizeof *h->v, tag);
  free(h->v);
  return r;
}

/* the arguments of a max (min) call, nested max (min) calls flattened */
static void minmax_args(const leir_program *p, const leir_expr *e, leir_op op, hvec *h,
                        unsigned depth) {
  for (uint32_t i = 0; i < e->n; i++) {
    const leir_expr *k = leir__alg_strip(e->kids[i]);
    if (depth < MAX_DEPTH && k->kind == LEIR_EXPR_CALL && k->op == op && k->dtype == e->dtype)
      minmax_args(p, k, op, h, depth + 1);
    else
      hpush(h, ac_rec(p, k, depth + 1));
  }
}

static uint64_t signed_rec(const leir_program *p, const leir_expr *e, bool *neg, unsigned depth) {
  e = leir__alg_strip(e);
  *neg = false;
  if (!e) return 0;
  if (depth > MAX_DEPTH * 4) return 1; /* deeper than any parse allows; still deterministic */
  if ((e->kind == LEIR_EXPR_BINARY && (e->op == LEIR_OP_ADD || e->op == LEIR_OP_SUB)) ||
      e->kind == LEIR_EXPR_NEG) {
    /* -x is the one-term sum (-x); -(-x) is x */
    hvec h = {0};
    sum_terms(p, e, false, &h, depth);
    if (h.n == 1 && !h.oom && e->kind == LEIR_EXPR_NEG) {
      /* a negated single term: its sign, not a sum */
      free(h.v);
      bool s = false;
      uint64_t x = signed_rec(p, e->kids[0], &s, depth + 1);
      *neg = !s;
      return x;
    }
    return chain_hash(ACT_SUM, &h);
  }
  if (e->kind == LEIR_EXPR_BINARY && (e->op == LEIR_OP_MUL || e->op == LEIR_OP_DIV)) {
    hvec h = {0};
    prod_factors(p, e, &h, neg, false, depth);
    if (!h.oom && h.n == 0) { /* 1*1 */
      free(h.v);
      return number_hash(1);
    }
    return chain_hash(ACT_PROD, &h);
  }
  if (e->kind == LEIR_EXPR_NUMBER) return number_hash(e->u.num->value);
  hvec h = {0};
  hpush(&h, ((uint64_t)e->kind << 16) | ((uint64_t)e->op << 8) | e->dtype);
  if (e->kind == LEIR_EXPR_CALL && (e->op == LEIR_OP_MAX || e->op == LEIR_OP_MIN)) {
    /* fmax/fmin (leir.md): commutative and associative, so the multiset of
     * the arguments of a nest of one of them */
    minmax_args(p, e, e->op, &h, depth + 1);
    if (!h.oom) qsort(h.v + 1, h.n - 1, sizeof *h.v, u64cmp);
    uint64_t r = h.oom ? 0 : XXH3_64bits_withSeed(h.v, h.n * sizeof *h.v, ACT_NODE);
    free(h.v);
    return r;
  }
  if ((e->kind == LEIR_EXPR_TENSOR || e->kind == LEIR_EXPR_VAR) && e->sym != LEIR__NOSYM)
    hpush(&h, XXH3_64bits(leir__sym_name(p, e->sym), leir__sym_len(p, e->sym)));
  if (e->kind == LEIR_EXPR_COMPARE) hpush(&h, XXH3_64bits(e->u.cmp_ops, e->n ? e->n - 1 : 0));
  for (uint32_t i = 0; i < e->n; i++) hpush(&h, ac_rec(p, e->kids[i], depth + 1));
  uint64_t r = h.oom ? 0 : XXH3_64bits_withSeed(h.v, h.n * sizeof *h.v, ACT_NODE);
  free(h.v);
  return r;
}

static uint64_t ac_rec(const leir_program *p, const leir_expr *e, unsigned depth) {
  bool neg = false;
  uint64_t x = signed_rec(p, e, &neg, depth);
  return neg ? mix2(ACT_NEG, x) : x;
}

uint64_t leir__ac_hash(const leir_program *p, const leir_expr *e) { return ac_rec(p, e, 0); }
