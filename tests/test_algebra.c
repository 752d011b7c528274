/*
 * The expression algebra (lib/algebra.h, docs/algebra.md): every rewrite's
 * output evaluates equal to its input at random points where its condition
 * holds; canonical forms are unique for equal polynomials; conditions that
 * cannot be proven are refused; hostile sizes fail cleanly.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algebra.h"
#include "corpus.h"
#include "jsonl.h"
#include "testutil.h"

static double eval(const leir_program *p, const leir_expr *e, const double *vals);

/* "A*(D+E)" -> "[C^{f64,g}=A^{f64,g}*(D^{f64,g}+E^{f64,g});];": every
 * uppercase letter is a scalar f64 tensor. */
static leir_program *parse_rhs(const char *rhs) {
  static char buf[65536];
  size_t k = 0;
  k += (size_t)snprintf(buf, sizeof buf, "[C^{f64,g}=");
  for (const char *s = rhs; *s && k + 16 < sizeof buf; s++) {
    buf[k++] = *s;
    if (*s >= 'A' && *s <= 'Z') k += (size_t)snprintf(buf + k, sizeof buf - k, "^{f64,g}");
  }
  snprintf(buf + k, sizeof buf - k, ";];");
  return test_parse(buf);
}

static leir_expr *rhs_of(leir_program *p) { return p->nests[0]->items[0].eq->rhs; }

static char *text_of(const leir_program *p, const leir_expr *e) {
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__print_expr(&b, p, e);
  ck_assert(!b.failed);
  return leir__sb_finish(&b, NULL);
}

/* the printed text with "^{f64,g}" removed, for readable comparisons */
static char *short_text(const leir_program *p, const leir_expr *e) {
  char *t = text_of(p, e);
  char *w = t;
  for (char *r = t; *r;) {
    if (strncmp(r, "^{f64,g}", 8) == 0) {
      r += 8;
      continue;
    }
    *w++ = *r++;
  }
  *w = 0;
  return t;
}

/* ---- a small evaluator: scalar tensors get the values in vals[sym] ---- */

static double eval(const leir_program *p, const leir_expr *e, const double *vals) {
  switch (e->kind) {
  case LEIR_EXPR_NUMBER: return e->u.num->value;
  case LEIR_EXPR_INF: return INFINITY;
  case LEIR_EXPR_TENSOR:
  case LEIR_EXPR_VAR: return vals[e->sym % 64];
  case LEIR_EXPR_PAREN: return eval(p, e->kids[0], vals);
  case LEIR_EXPR_NEG: return -eval(p, e->kids[0], vals);
  case LEIR_EXPR_BINARY: {
    double x = eval(p, e->kids[0], vals), y = eval(p, e->kids[1], vals);
    switch (e->op) {
    case LEIR_OP_ADD: return x + y;
    case LEIR_OP_SUB: return x - y;
    case LEIR_OP_MUL: return x * y;
    case LEIR_OP_DIV: return x / y;
    case LEIR_OP_POW: return pow(x, y);
    default: return NAN;
    }
  }
  case LEIR_EXPR_CALL: {
    double x = eval(p, e->kids[0], vals);
    switch (e->op) {
    case LEIR_OP_EXP: return exp(x);
    case LEIR_OP_LOG: return log(x);
    case LEIR_OP_SQRT: return sqrt(x);
    case LEIR_OP_ABS: return fabs(x);
    case LEIR_OP_MAX: return fmax(x, eval(p, e->kids[1], vals));
    case LEIR_OP_MIN: return fmin(x, eval(p, e->kids[1], vals));
    case LEIR_OP_ERF: return erf(x);
    default: return NAN;
    }
  }
  default: return NAN;
  }
}

static unsigned rng_state = 12345;
static unsigned rnd(unsigned n) {
  rng_state = rng_state * 1103515245u + 12345u;
  return (rng_state >> 8) % n;
}

/* x and y agree at 20 random points (values in [lo, hi]) */
static void expect_same_values(const leir_program *p, const leir_expr *x, const leir_expr *y,
                               double lo, double hi) {
  double vals[64];
  for (int k = 0; k < 20; k++) {
    for (int i = 0; i < 64; i++) vals[i] = lo + (hi - lo) * rnd(10000) / 10000.0;
    double a = eval(p, x, vals), b = eval(p, y, vals);
    double tol = 1e-9 * (1 + fabs(a));
    if (!(fabs(a - b) <= tol)) {
      char *ta = short_text(p, x), *tb = short_text(p, y);
      ck_abort_msg("%s = %.17g but %s = %.17g", ta, a, tb, b);
    }
  }
}

typedef leir_expr *(*rewrite1)(leir__alg *, const leir_expr *);

/* applies f to rhs; expects `want` (short text) and equal values */
static void expect_rewrite(rewrite1 f, const char *rhs, const char *want) {
  leir_program *p = parse_rhs(rhs);
  leir__alg *a = leir__alg_new(p, 0);
  leir_expr *r = f(a, rhs_of(p));
  ck_assert_msg(r, "%s: rewrite failed with %d", rhs, leir__alg_error(a));
  char *t = short_text(p, r);
  ck_assert_msg(strcmp(t, want) == 0, "%s -> %s, want %s", rhs, t, want);
  expect_same_values(p, rhs_of(p), r, 0.25, 2.0);
  leir_free(t);
  leir__alg_free(a);
  leir_program_free(p);
}

static void expect_refused(rewrite1 f, const char *rhs, int code) {
  leir_program *p = parse_rhs(rhs);
  leir__alg *a = leir__alg_new(p, 0);
  ck_assert_msg(f(a, rhs_of(p)) == NULL, "%s was rewritten", rhs);
  ck_assert_int_eq(leir__alg_error(a), code);
  leir__alg_free(a);
  leir_program_free(p);
}

START_TEST(test_expand_collects_like_terms) {
  expect_rewrite(leir__alg_expand, "A*(D+E)", "A*D+A*E");
  expect_rewrite(leir__alg_expand, "(A+D)**2", "A**2+2*A*D+D**2");
  expect_rewrite(leir__alg_expand, "D*A-A*D+E", "E");
  expect_rewrite(leir__alg_expand, "(A-D)*(A+D)", "A**2-D**2");
  expect_rewrite(leir__alg_expand, "0.5*A+A/2", "A");
  expect_rewrite(leir__alg_expand, "A*1e-05*100000", "A");
  expect_rewrite(leir__alg_expand, "-(A-D)", "-A+D");
  expect_rewrite(leir__alg_expand, "A/3+D", "A/3+D");
  /* call arguments are canonical, so these are one atom */
  expect_rewrite(leir__alg_expand, "exp(A+D)-exp(D+A)", "0");
  expect_rewrite(leir__alg_expand, "(A+1)/(2*D+2)", "(0.5*A+0.5)/(D+1)");
  /* coefficients n/d with d = 2^i 5^j are exact decimals, others fractions */
  expect_rewrite(leir__alg_expand, "0.5*A+A", "1.5*A");
  expect_rewrite(leir__alg_expand, "1.6732631921768188*(A-1)", "1.6732631921768188*A-1.6732631921768188");
  expect_rewrite(leir__alg_expand, "A*0.044715*0.5", "0.0223575*A");
  expect_rewrite(leir__alg_expand, "A/3+A/200000", "200003*A/600000");
  expect_rewrite(leir__alg_expand, "A/80000", "0.0000125*A");
}
END_TEST

/* random polynomial expressions over A, D, E */
static void gen(char *buf, size_t *k, size_t cap, int depth) {
  static const char *const atoms[] = {"A", "D", "E", "2", "3", "0.5", "exp(A)"};
  if (*k + 64 > cap) depth = 0;
  unsigned c = depth > 0 ? rnd(6) : 5;
  switch (c) {
  case 0:
  case 1:
  case 2: {
    static const char ops[] = "+-*";
    buf[(*k)++] = '(';
    gen(buf, k, cap, depth - 1);
    buf[(*k)++] = ops[c];
    gen(buf, k, cap, depth - 1);
    buf[(*k)++] = ')';
    break;
  }
  case 3:
    buf[(*k)++] = '(';
    gen(buf, k, cap, depth - 1);
    *k += (size_t)snprintf(buf + *k, cap - *k, ")**%u", 1 + rnd(3));
    break;
  case 4:
    buf[(*k)++] = '-';
    buf[(*k)++] = '(';
    gen(buf, k, cap, depth - 1);
    buf[(*k)++] = ')';
    break;
  default:
    *k += (size_t)snprintf(buf + *k, cap - *k, "%s", atoms[rnd(7)]);
  }
  buf[*k] = 0;
}

/* commuted spelling: every + and * of the random form has its operands
 * swapped, and a-b becomes -b+a */
static void commute(const char *in, char *out);

START_TEST(test_canonical_form_is_unique_for_equal_polynomials) {
  rng_state = 777;
  for (int iter = 0; iter < 300; iter++) {
    char src[2048];
    size_t k = 0;
    gen(src, &k, sizeof src, 4);
    leir_program *p = parse_rhs(src);
    leir__alg *a = leir__alg_new(p, 0);
    leir_expr *x = leir__alg_expand(a, rhs_of(p));
    ck_assert_msg(x, "%s: %d", src, leir__alg_error(a));
    expect_same_values(p, rhs_of(p), x, 0.5, 1.5);
    /* idempotent */
    leir_expr *y = leir__alg_expand(a, x);
    ck_assert(y);
    char *tx = text_of(p, x), *ty = text_of(p, y);
    ck_assert_str_eq(tx, ty);
    /* an equal polynomial spelled differently has the same canonical text,
     * also in a fresh context (atom order does not leak into the form) */
    char com[4096];
    commute(src, com);
    leir_program *q = parse_rhs(com);
    leir__alg *b = leir__alg_new(q, 0);
    leir_expr *z = leir__alg_expand(b, rhs_of(q));
    ck_assert(z);
    char *tz = text_of(q, z);
    ck_assert_msg(strcmp(tx, tz) == 0, "%s and %s: %s vs %s", src, com, tx, tz);
    /* equal as rational functions */
    leir__rf r1, r2;
    bool eq = false;
    ck_assert_int_eq(leir__alg_from_expr(a, rhs_of(p), &r1), 0);
    ck_assert_int_eq(leir__alg_from_expr(a, x, &r2), 0);
    ck_assert_int_eq(leir__alg_rf_equal(a, &r1, &r2, &eq), 0);
    ck_assert(eq);
    leir_free(tx);
    leir_free(ty);
    leir_free(tz);
    leir__alg_free(b);
    leir_program_free(q);
    leir__alg_free(a);
    leir_program_free(p);
  }
}
END_TEST

/* swaps the operands of each binary + and * in the fully parenthesised
 * random form "(x op y)" */
static size_t commute_rec(const char *in, size_t i, char *out, size_t *o) {
  if (in[i] == '(') {
    /* find the operator at depth 1 */
    size_t j = i + 1;
    int d = 0;
    size_t opos = 0;
    for (; in[j]; j++) {
      if (in[j] == '(') d++;
      else if (in[j] == ')') {
        if (d == 0) break;
        d--;
      } else if (d == 0 && !opos && (in[j] == '+' || in[j] == '*' || in[j] == '-') &&
                 in[j + 1] != '*' && in[j - 1] != '*' && in[j - 1] != '(' && in[j - 1] != 'e')
        opos = j;
    }
    size_t close = j;
    if (opos && in[opos] != '-') {
      char left[2048], right[2048];
      size_t lo = 0, ro = 0;
      memcpy(left, in + i + 1, opos - i - 1);
      left[opos - i - 1] = 0;
      memcpy(right, in + opos + 1, close - opos - 1);
      right[close - opos - 1] = 0;
      char l2[4096], r2[4096];
      size_t li = 0, ri = 0;
      while (left[li]) li = commute_rec(left, li, l2, &lo);
      l2[lo] = 0;
      while (right[ri]) ri = commute_rec(right, ri, r2, &ro);
      r2[ro] = 0;
      *o += (size_t)sprintf(out + *o, "(%s%c%s)", r2, in[opos], l2);
      return close + 1;
    }
    if (opos) { /* (x-y) -> (-(y)+x) */
      char left[2048], right[2048], l2[4096], r2[4096];
      size_t lo = 0, ro = 0, li = 0, ri = 0;
      memcpy(left, in + i + 1, opos - i - 1);
      left[opos - i - 1] = 0;
      memcpy(right, in + opos + 1, close - opos - 1);
      right[close - opos - 1] = 0;
      while (left[li]) li = commute_rec(left, li, l2, &lo);
      l2[lo] = 0;
      while (right[ri]) ri = commute_rec(right, ri, r2, &ro);
      r2[ro] = 0;
      *o += (size_t)sprintf(out + *o, "(-(%s)+%s)", r2, l2);
      return close + 1;
    }
  }
  out[(*o)++] = in[i];
  return i + 1;
}

static void commute(const char *in, char *out) {
  size_t o = 0, i = 0;
  while (in[i]) i = commute_rec(in, i, out, &o);
  out[o] = 0;
}

START_TEST(test_factor_extracts_content_and_roots) {
  expect_rewrite(leir__alg_factor, "A*D+A*E", "A*(D+E)");
  expect_rewrite(leir__alg_factor, "2*A+4*D", "2*(A+2*D)");
  expect_rewrite(leir__alg_factor, "A**2-1", "(A-1)*(A+1)");
  expect_rewrite(leir__alg_factor, "A**2+2*A+1", "(A+1)**2");
  expect_rewrite(leir__alg_factor, "2*A**2-A-1", "(A-1)*(2*A+1)");
  expect_rewrite(leir__alg_factor, "exp(D)**2-1", "(exp(D)-1)*(exp(D)+1)");
  expect_rewrite(leir__alg_factor, "-A*D-A", "-(A*(D+1))");
  /* no rational root: kept */
  expect_rewrite(leir__alg_factor, "A**2+1", "A**2+1");
}
END_TEST

static leir_expr *cancel_strict(leir__alg *a, const leir_expr *e) { return leir__alg_cancel(a, e, false); }
static leir_expr *cancel_any(leir__alg *a, const leir_expr *e) { return leir__alg_cancel(a, e, true); }

START_TEST(test_cancel_needs_a_nonzero_factor) {
  /* exp(D)+1 > 0 and exp(A) > 0: proven */
  expect_rewrite(cancel_strict, "(exp(D)**2-1)/(exp(D)+1)", "exp(D)-1");
  expect_rewrite(cancel_strict, "exp(A)*D/exp(A)", "D");
  expect_rewrite(cancel_strict, "(A**2+1)*D/(A**2+1)", "D");
  /* A may be 0: refused unless the caller accepts removing 0/0 */
  expect_refused(cancel_strict, "A*D/A", LEIR__ALG_UNPROVEN);
  expect_rewrite(cancel_any, "A*D/A", "D");
  expect_rewrite(cancel_any, "(A**2-1)/(A-1)", "A+1");
  expect_rewrite(cancel_any, "(A-1)/(A**2-1)", "1/(A+1)");
  expect_refused(cancel_any, "A/(D+1)", LEIR__ALG_NOCHANGE);
}
END_TEST

START_TEST(test_apart_and_together_are_inverse) {
  leir_program *p = parse_rhs("(A+E*(exp(D)+1))/(exp(D)+1)");
  leir__alg *a = leir__alg_new(p, 0);
  leir_program *xp = parse_rhs("exp(D)");
  leir_expr *x = leir__copy_expr(p, xp, rhs_of(xp));
  leir_expr *r = leir__alg_apart(a, rhs_of(p), x);
  ck_assert_msg(r, "%d", leir__alg_error(a));
  char *t = short_text(p, r);
  ck_assert_str_eq(t, "E+A/(exp(D)+1)");
  expect_same_values(p, rhs_of(p), r, -2, 2);
  leir_expr *back = leir__alg_together(a, r);
  ck_assert(back);
  char *tb = short_text(p, back);
  ck_assert_str_eq(tb, "(E*exp(D)+A+E)/(exp(D)+1)");
  expect_same_values(p, r, back, -2, 2);
  leir_free(t);
  leir_free(tb);
  leir__alg_free(a);
  leir_program_free(xp);
  leir_program_free(p);

  /* two distinct linear factors, and a polynomial part */
  p = parse_rhs("(A**3+1)/(A**2-3*A+2)");
  a = leir__alg_new(p, 0);
  xp = parse_rhs("A");
  x = leir__copy_expr(p, xp, rhs_of(xp));
  r = leir__alg_apart(a, rhs_of(p), x);
  ck_assert_msg(r, "%d", leir__alg_error(a));
  t = short_text(p, r);
  ck_assert_str_eq(t, "A+3-2/(A-1)+9/(A-2)");
  expect_same_values(p, rhs_of(p), r, 3, 5);
  leir_free(t);
  /* a repeated factor is not "distinct linear": refused */
  leir_program *q = parse_rhs("1/(A-1)**2");
  ck_assert_ptr_null(leir__alg_apart(a, leir__copy_expr(p, q, rhs_of(q)), x));
  ck_assert_int_eq(leir__alg_error(a), LEIR__ALG_NOCHANGE);
  leir_program_free(q);
  leir__alg_free(a);
  leir_program_free(xp);
  leir_program_free(p);
  /* apart_auto finds the atom itself */
  expect_rewrite(leir__alg_apart_auto, "(A+E*(exp(D)+1))/(exp(D)+1)", "E+A/(exp(D)+1)");
  expect_refused(leir__alg_apart_auto, "A/(D*E+1)", LEIR__ALG_NOCHANGE);
  /* a monomial denominator: polynomial part and one fraction per power,
   * its numerator factored */
  expect_rewrite(leir__alg_apart_auto, "(Q*(F-W)+R*sqrt(E))/sqrt(E)", "R+Q*(F-W)/sqrt(E)");
  expect_rewrite(leir__alg_apart_auto, "(A*D*D-2*D+1)/D", "A*D-2+1/D");
  expect_rewrite(leir__alg_apart_auto, "(A+D)/(D*D)", "1/D+A/D**2");
  expect_rewrite(leir__alg_apart_auto, "(A-2*D)/(3*D)", "-2/3+A/3/D");
  expect_refused(leir__alg_apart_auto, "(A+E)/D", LEIR__ALG_NOCHANGE);
  expect_refused(leir__alg_apart_auto, "A/(D*E)", LEIR__ALG_NOCHANGE);
  /* together of a polynomial: nothing to do */
  expect_refused(leir__alg_together, "A+D", LEIR__ALG_NOCHANGE);
  expect_rewrite(leir__alg_together, "A/D+E/F", "(A*F+D*E)/(D*F)");
  /* sympy's together keeps the terms as written */
  expect_rewrite(leir__alg_together_terms, "F*((A-D)/sqrt(E))+G", "(F*(A-D)+G*sqrt(E))/sqrt(E)");
  expect_rewrite(leir__alg_together_terms, "A/D+E/F", "(A*F+E*D)/(D*F)");
  expect_rewrite(leir__alg_together_terms, "A/D-E/(D*D)+1", "(A*D-E+D*D)/(D*D)");
  expect_rewrite(leir__alg_together_terms, "A/2+E/(F+1)", "(A/2*(F+1)+E)/(F+1)");
  expect_rewrite(leir__alg_together_terms, "-A/(D+E)+G", "(-A+G*(D+E))/(D+E)");
  /* one term, or no non-constant divisor: nothing to do */
  expect_refused(leir__alg_together_terms, "A*(D/E)", LEIR__ALG_NOCHANGE);
  expect_refused(leir__alg_together_terms, "A/2+D", LEIR__ALG_NOCHANGE);
}
END_TEST

START_TEST(test_collect_groups_powers) {
  leir_program *p = parse_rhs("A*D+A*E+A**2*D+E");
  leir__alg *a = leir__alg_new(p, 0);
  leir_program *xp = parse_rhs("A");
  leir_expr *x = leir__copy_expr(p, xp, rhs_of(xp));
  leir_expr *r = leir__alg_collect(a, rhs_of(p), x);
  ck_assert(r);
  char *t = short_text(p, r);
  ck_assert_str_eq(t, "A**2*D+A*(D+E)+E");
  expect_same_values(p, rhs_of(p), r, -2, 2);
  leir_free(t);
  leir_program *q = parse_rhs("A*D+E");
  ck_assert_ptr_null(leir__alg_collect(a, leir__copy_expr(p, q, rhs_of(q)), x));
  ck_assert_int_eq(leir__alg_error(a), LEIR__ALG_NOCHANGE);
  leir_program_free(q);
  leir__alg_free(a);
  leir_program_free(xp);
  leir_program_free(p);
}
END_TEST

static bool prove(const char *rhs, int which, uint32_t assume_sym_of_letter) {
  leir_program *p = parse_rhs(rhs);
  leir__alg *a = leir__alg_new(p, 0);
  if (assume_sym_of_letter) {
    char name[2] = {(char)assume_sym_of_letter, 0};
    uint32_t s = leir__sym_find(p, name, 1);
    if (s != LEIR__NOSYM) leir__alg_assume_positive(a, s);
  }
  bool r = which == 0 ? leir__alg_positive(a, rhs_of(p))
           : which == 1 ? leir__alg_nonneg(a, rhs_of(p))
                        : leir__alg_nonzero(a, rhs_of(p));
  leir__alg_free(a);
  leir_program_free(p);
  return r;
}

START_TEST(test_positivity_proofs_and_refusals) {
  ck_assert(prove("exp(A)", 0, 0));
  ck_assert(prove("1+exp(-A)", 0, 0));
  ck_assert(prove("A**2+1", 0, 0));
  ck_assert(prove("(A-D)**2+0.5", 0, 0));
  ck_assert(prove("A*A+D*D+1", 0, 0));
  ck_assert(prove("sqrt(exp(A))*2", 0, 0));
  ck_assert(prove("A", 0, 'A'));
  ck_assert(prove("A/(D+1)", 0, 'A') == false); /* D+1 unknown */
  ck_assert(prove("max(A,exp(D))", 0, 0));
  ck_assert(!prove("A", 0, 0));
  ck_assert(!prove("A-1", 0, 0));
  ck_assert(!prove("A**2", 0, 0)); /* may be 0 */
  ck_assert(prove("A**2", 1, 0));
  ck_assert(prove("abs(A)", 1, 0));
  ck_assert(!prove("A**2-1", 1, 0));
  ck_assert(!prove("exp(A)-1", 0, 0));
  ck_assert(!prove("log(A)", 0, 'A'));
  ck_assert(prove("-exp(A)", 2, 0));
  ck_assert(!prove("A-D", 2, 0));
}
END_TEST

START_TEST(test_powsimp_combines_exp_and_sqrt) {
  expect_rewrite(leir__alg_powsimp, "exp(A)*exp(D)", "exp(A+D)");
  expect_rewrite(leir__alg_powsimp, "E*exp(A)*exp(-D)", "E*exp(A+-D)");
  expect_rewrite(leir__alg_powsimp, "exp(A)/exp(D)", "exp(A-D)");
  expect_rewrite(leir__alg_powsimp, "sqrt(exp(A))*sqrt(A*A)", "sqrt(exp(A)*A**2)");
  /* equal bases into one integer power (the reference's Mish: G*(G*Q)) */
  expect_rewrite(leir__alg_powsimp, "G*(G*Q)", "G**2*Q");
  expect_rewrite(leir__alg_powsimp, "(A+D)**2*Q*(D+A)", "(A+D)**3*Q");
  /* a number is no base, and -A is not A */
  expect_refused(leir__alg_powsimp, "2*2*A", LEIR__ALG_NOCHANGE);
  expect_refused(leir__alg_powsimp, "A*(-A)", LEIR__ALG_NOCHANGE);
  expect_refused(leir__alg_powsimp, "A*D", LEIR__ALG_NOCHANGE);
  /* sqrt(A)*sqrt(D) = sqrt(A*D) needs A, D >= 0 */
  expect_refused(leir__alg_powsimp, "sqrt(A)*sqrt(D)", LEIR__ALG_NOCHANGE);
  expect_refused(leir__alg_powsimp, "exp(A)+exp(D)", LEIR__ALG_NOCHANGE);
}
END_TEST

START_TEST(test_expand_powsimp_never_adds_overflow) {
  /* both parts <= 0: each factor is at most 1 */
  expect_rewrite(leir__alg_expand_powsimp, "exp(-A**2-exp(D))", "exp(-A**2)*exp(-exp(D))");
  expect_rewrite(leir__alg_expand_powsimp, "exp(A**2+exp(D))", "exp(A**2)*exp(exp(D))");
  /* exp(A-D) -> exp(A)*exp(-D) overflows for A = D = 800 where the
   * original is 1: refused (the softmax case) */
  expect_refused(leir__alg_expand_powsimp, "exp(A-D)", LEIR__ALG_UNPROVEN);
  expect_refused(leir__alg_expand_powsimp, "A*2+exp(D)", LEIR__ALG_NOCHANGE);
  /* x**k -> x*x*...: the inverse of powsimp's x*x -> x**2 (2 <= k <= 8) */
  expect_rewrite(leir__alg_expand_powsimp, "G**2*Q", "G*G*Q");
  expect_rewrite(leir__alg_expand_powsimp, "(A-D)**3", "(A-D)*(A-D)*(A-D)");
  expect_refused(leir__alg_expand_powsimp, "2**3*A", LEIR__ALG_NOCHANGE);
  expect_refused(leir__alg_expand_powsimp, "A**-2+A**9", LEIR__ALG_NOCHANGE);
  leir_program *p = parse_rhs("exp(A-D)");
  leir__alg *a = leir__alg_new(p, 0);
  ck_assert_ptr_null(leir__alg_expand_powsimp(a, rhs_of(p)));
  double vals[64];
  for (int i = 0; i < 64; i++) vals[i] = 800;
  ck_assert(isfinite(eval(p, rhs_of(p), vals)));
  leir__alg_free(a);
  leir_program_free(p);
}
END_TEST

START_TEST(test_expand_log_needs_positive_operands) {
  expect_rewrite(leir__alg_expand_log, "log(exp(A)*(D**2+1))", "log(exp(A))+log(D**2+1)");
  expect_rewrite(leir__alg_expand_log, "log((D**2+1)**3)", "3*log(D**2+1)");
  expect_rewrite(leir__alg_expand_log, "log(exp(A)/(1+exp(D)))", "log(exp(A))-log(1+exp(D))");
  expect_refused(leir__alg_expand_log, "log(A*D)", LEIR__ALG_NOCHANGE);
  expect_refused(leir__alg_expand_log, "log(A**2)", LEIR__ALG_NOCHANGE);
}
END_TEST

START_TEST(test_sigmoid_is_not_turned_into_an_overflowing_form) {
  /* 1/(1+exp(-A)): together/expand keep exp(-A) as an atom, never
   * multiplying through by exp(A) (NaN for large A) */
  leir_program *p = parse_rhs("1/(1+exp(-A))");
  leir__alg *a = leir__alg_new(p, 0);
  leir_expr *r = leir__alg_expand(a, rhs_of(p));
  ck_assert(r);
  char *t = short_text(p, r);
  ck_assert_str_eq(t, "1/(exp(-A)+1)");
  double vals[64];
  for (int i = 0; i < 64; i++) vals[i] = 1000;
  ck_assert(isfinite(eval(p, r, vals)));
  leir_free(t);
  leir__alg_free(a);
  leir_program_free(p);
}
END_TEST

START_TEST(test_refuses_inf_and_bounds_work) {
  expect_refused(leir__alg_expand, "max(A,-inf)-max(A,-inf)", LEIR__ALG_REFUSED);
  expect_refused(leir__alg_expand, "(A+D+E+F+G+H+I+J)**40", LEIR__ALG_LIMIT);
  expect_refused(leir__alg_expand, "A/(D-D)", LEIR__ALG_REFUSED);
  expect_refused(leir__alg_expand, "A*99999999999*99999999999", LEIR__ALG_OVERFLOW);
  /* a small term limit */
  leir_program *p = parse_rhs("(A+D)**10");
  leir__alg *a = leir__alg_new(p, 5);
  ck_assert_ptr_null(leir__alg_expand(a, rhs_of(p)));
  ck_assert_int_eq(leir__alg_error(a), LEIR__ALG_LIMIT);
  leir__alg_free(a);
  leir_program_free(p);
}
END_TEST

START_TEST(test_flat_mode_leaves_call_arguments_alone) {
  leir_program *p = parse_rhs("exp(A*(D+E))*exp(F)+log(exp(A)*exp(D))");
  leir__alg *a = leir__alg_new(p, 0);
  leir__alg_set_flat(a, true);
  leir_expr *r = leir__alg_expand(a, rhs_of(p));
  ck_assert(r);
  char *t = short_text(p, r);
  ck_assert_str_eq(t, "exp(A*(D+E))*exp(F)+log(exp(A)*exp(D))");
  leir_free(t);
  r = leir__alg_powsimp(a, rhs_of(p));
  ck_assert(r);
  t = short_text(p, r);
  ck_assert_str_eq(t, "exp(A*(D+E)+F)+log(exp(A)*exp(D))");
  expect_same_values(p, rhs_of(p), r, -1, 1);
  leir_free(t);
  leir__alg_set_flat(a, false);
  r = leir__alg_powsimp(a, rhs_of(p));
  t = short_text(p, r);
  ck_assert_str_eq(t, "exp(A*(D+E)+F)+log(exp(A+D))");
  leir_free(t);
  leir__alg_free(a);
  leir_program_free(p);
}
END_TEST

static uint64_t ach(const char *rhs) {
  leir_program *p = parse_rhs(rhs);
  uint64_t h = leir__ac_hash(p, rhs_of(p));
  leir_program_free(p);
  return h;
}

START_TEST(test_ac_hash_identifies_only_ac_spellings) {
  ck_assert_uint_eq(ach("A+D"), ach("D+A"));
  ck_assert_uint_eq(ach("(A+D)+E"), ach("A+(D+E)"));
  ck_assert_uint_eq(ach("A*D*E"), ach("E*(D*A)"));
  ck_assert_uint_eq(ach("A-D"), ach("-D+A"));
  ck_assert_uint_eq(ach("exp(A*D)+E"), ach("E+exp(D*A)"));
  ck_assert_uint_eq(ach("(A)"), ach("A"));
  ck_assert_uint_eq(ach("-(-A)"), ach("A"));
  /* signs of factors and quotients (exact in floating point) */
  ck_assert_uint_eq(ach("-A*D+1"), ach("1-A*D"));
  ck_assert_uint_eq(ach("A*(-D)"), ach("-(D*A)"));
  ck_assert_uint_eq(ach("(-A)*(-D)"), ach("A*D"));
  ck_assert_uint_eq(ach("(-A)/D"), ach("-(A/D)"));
  ck_assert_uint_eq(ach("E-A/(-D)"), ach("A/D+E"));
  ck_assert_uint_ne(ach("-A*D"), ach("A*D"));
  ck_assert_uint_ne(ach("(-A)/D"), ach("A/D"));
  /* chains of * and / */
  ck_assert_uint_eq(ach("F*((A-D)/E)+G"), ach("F*(A-D)/E+G"));
  ck_assert_uint_eq(ach("A/(D/E)"), ach("A*E/D"));
  ck_assert_uint_eq(ach("A/D/E"), ach("A/(E*D)"));
  ck_assert_uint_ne(ach("A/(D*E)"), ach("A*E/D"));
  /* not identified */
  ck_assert_uint_ne(ach("A-D"), ach("D-A"));
  ck_assert_uint_ne(ach("A*(D+E)"), ach("A*D+A*E"));
  ck_assert_uint_ne(ach("A/D"), ach("D/A"));
  ck_assert_uint_eq(ach("2*A"), ach("2.0*A"));
  ck_assert_uint_eq(ach("A+1e-05"), ach("0.00001+A"));
  ck_assert_uint_ne(ach("2*A"), ach("2.5*A"));
  /* exact: factors 1, division by a power of two */
  ck_assert_uint_eq(ach("A/2+D/2"), ach("0.5*A+0.5*D"));
  ck_assert_uint_eq(ach("A/1"), ach("A"));
  ck_assert_uint_eq(ach("1*A*1.0"), ach("A"));
  ck_assert_uint_eq(ach("1*1"), ach("1"));
  ck_assert_uint_eq(ach("A/0.25"), ach("4*A"));
  ck_assert_uint_ne(ach("A/3"), ach("A*0.3333333333333333"));
  ck_assert_uint_ne(ach("A/10"), ach("0.1*A"));
  /* max and min are fmax and fmin: commutative and associative */
  ck_assert_uint_eq(ach("max(A,D)"), ach("max(D,A)"));
  ck_assert_uint_eq(ach("min(max(A+1,0),1)"), ach("min(1,max(0,1+A))"));
  ck_assert_uint_eq(ach("max(A,max(D,E))"), ach("max(max(E,A),D)"));
  ck_assert_uint_eq(ach("max(A,D,E)"), ach("max(E,max(D,A))"));
  ck_assert_uint_ne(ach("max(A,D)"), ach("min(A,D)"));
  ck_assert_uint_ne(ach("max(A,min(D,E))"), ach("max(A,D,E)"));
  ck_assert_uint_ne(ach("max(A,D)"), ach("max(A,D,D)"));
  ck_assert_uint_ne(ach("A+D"), ach("A*D"));
  ck_assert_uint_ne(ach("A**D"), ach("D**A"));
  ck_assert_uint_ne(ach("-A"), ach("A"));
  /* random spellings from the commute generator hash equal */
  rng_state = 99;
  for (int i = 0; i < 200; i++) {
    char src[2048], com[4096];
    size_t k = 0;
    gen(src, &k, sizeof src, 4);
    commute(src, com);
    ck_assert_msg(ach(src) == ach(com), "%s vs %s", src, com);
  }
}
END_TEST

START_TEST(test_hostile_depth_is_bounded) {
  /* trees deeper than any parse allows (strategies build trees too):
   * proofs stay linear, conversion stops at its depth limit */
  leir_program *p = parse_rhs("A");
  leir_expr *sum = rhs_of(p), *ex = rhs_of(p);
  for (int i = 0; i < 5000; i++) {
    sum = leir__new_binary(p, LEIR_OP_ADD, sum, leir__new_int(p, 1));
    leir_expr *c = leir__new_call(p, LEIR_OP_EXP, 1);
    c->kids[0] = ex;
    ex = c;
  }
  leir__alg *a = leir__alg_new(p, 0);
  ck_assert(!leir__alg_positive(a, sum));
  ck_assert_ptr_null(leir__alg_expand(a, sum));
  ck_assert_int_eq(leir__alg_error(a), LEIR__ALG_REFUSED); /* too deep to scan for inf */
  ck_assert_ptr_null(leir__alg_expand(a, ex));
  ck_assert(leir__alg_positive(a, ex));
  ck_assert_ptr_null(leir__alg_powsimp(a, sum));
  ck_assert_int_eq(leir__alg_error(a), LEIR__ALG_LIMIT);
  ck_assert_uint_eq(leir__ac_hash(p, sum), leir__ac_hash(p, sum));
  /* 150 levels: within the limits */
  leir_expr *s2 = rhs_of(p);
  for (int i = 0; i < 150; i++) s2 = leir__new_binary(p, LEIR_OP_ADD, s2, leir__new_int(p, 1));
  leir_expr *r = leir__alg_expand(a, s2);
  ck_assert(r);
  char *t = short_text(p, r);
  ck_assert_str_eq(t, "A+150");
  leir_free(t);
  leir__alg_free(a);
  leir_program_free(p);
}
END_TEST

/* ---- logsimp, expand_cancellation, bounds ------------------------------- */

/* rhs with every tensor of `names` declared in [lo, hi]; the algebra's
 * limits are (tiny, huge) when tiny > 0 */
static leir_program *ranged(const char *rhs, const char *names, double lo, double hi,
                            double tiny, double huge, leir__alg **out) {
  leir_program *p = parse_rhs(rhs);
  leir__alg *a = leir__alg_new(p, 0);
  for (const char *n = names; *n; n++) {
    uint32_t s = leir__sym_find(p, n, 1);
    if (s != LEIR__NOSYM) leir__alg_assume_range(a, s, lo, hi);
  }
  if (tiny > 0) leir__alg_set_limits(a, tiny, huge);
  *out = a;
  return p;
}

static void expect_logsimp(const char *rhs, double lo, double hi, const char *want) {
  leir__alg *a;
  leir_program *p = ranged(rhs, "ADEF", lo, hi, 0, 0, &a);
  leir_expr *r = leir__alg_logsimp(a, rhs_of(p));
  ck_assert_msg(r, "%s: logsimp failed with %d", rhs, leir__alg_error(a));
  char *t = short_text(p, r);
  ck_assert_msg(strcmp(t, want) == 0, "%s -> %s, want %s", rhs, t, want);
  expect_same_values(p, rhs_of(p), r, lo, hi);
  leir_free(t);
  leir__alg_free(a);
  leir_program_free(p);
}

static void expect_logsimp_refused(const char *rhs, double lo, double hi, double tiny, double huge,
                                   int code) {
  leir__alg *a;
  leir_program *p = ranged(rhs, "ADEF", lo, hi, tiny, huge, &a);
  ck_assert_msg(leir__alg_logsimp(a, rhs_of(p)) == NULL, "%s was rewritten", rhs);
  ck_assert_int_eq(leir__alg_error(a), code);
  leir__alg_free(a);
  leir_program_free(p);
}

START_TEST(test_logsimp_needs_bounds_within_range) {
  expect_logsimp("log(A)+log(D)", 0.5, 2, "log(A*D)");
  expect_logsimp("log(A)-log(D)+G", 0.5, 2, "log(A/D)+G");
  expect_logsimp("G-log(A)-log(D)", 0.5, 2, "G-log(A*D)");
  expect_logsimp("log(A)+G-(log(D)-log(E))", 0.5, 2, "log(A*E/D)+G");
  expect_logsimp("log(exp(A))+log(2)", -700, 700, "log(exp(A)*2)");
  /* G is not bounded: its log stays */
  expect_logsimp("log(A)+log(G)+log(D)", 0.5, 2, "log(A*D)+log(G)");
  /* unbounded: A*D overflows for A = D = 1e200 */
  expect_refused(leir__alg_logsimp, "log(A)+log(D)", LEIR__ALG_UNPROVEN);
  expect_refused(leir__alg_logsimp, "log(A)+D", LEIR__ALG_NOCHANGE);
  /* the product would leave f64's range (both ways) */
  expect_logsimp_refused("log(A)+log(D)", 1, 1e200, 0, 0, LEIR__ALG_UNPROVEN);
  expect_logsimp_refused("log(A)+log(D)", 1e-200, 1, 0, 0, LEIR__ALG_UNPROVEN);
  /* ... or f32's */
  expect_logsimp_refused("log(A)+log(D)", 1, 1e20, 1.1754943508222875e-38, 3.4028234663852886e38,
                         LEIR__ALG_UNPROVEN);
  /* non-positive ranges never prove the logs' arguments positive */
  expect_logsimp_refused("log(A)+log(D)", -1, 2, 0, 0, LEIR__ALG_UNPROVEN);
}
END_TEST

START_TEST(test_expand_cancel_takes_out_multiples_of_the_denominator) {
  /* the terms left share F: written with it factored out (the BatchNorm
   * form before sympy's cancel combined it) */
  expect_rewrite(leir__alg_expand_cancel, "(A*F-D*F+G*sqrt(E))/sqrt(E)", "G+F*(A-D)/sqrt(E)");
  expect_rewrite(leir__alg_expand_cancel, "(D*F-A*F+G*sqrt(E))/sqrt(E)", "G-F*(A-D)/sqrt(E)");
  /* nothing in common: as written */
  expect_rewrite(leir__alg_expand_cancel, "(A*F-D*H+G*sqrt(E))/sqrt(E)", "G+(A*F-D*H)/sqrt(E)");
  expect_rewrite(leir__alg_expand_cancel, "(-G+max(H,1))/max(H,1)", "1-G/max(H,1)");
  expect_rewrite(leir__alg_expand_cancel, "(K*exp(G)+exp(2*G)+1)/(exp(2*G)+1)",
                 "1+K*exp(G)/(exp(2*G)+1)");
  expect_rewrite(leir__alg_expand_cancel, "(A*D+A*E+F)/(D+E)", "A+F/(D+E)");
  /* terms as written where single terms are the multiples */
  expect_rewrite(leir__alg_expand_cancel, "(Q*(F-W)+R*sqrt(E))/sqrt(E)", "R+Q*(F-W)/sqrt(E)");
  expect_rewrite(leir__alg_expand_cancel, "(R*E-Q*(F-W))/E", "R-Q*(F-W)/E");
  expect_rewrite(leir__alg_expand_cancel, "(-A-D+2*E*F)/(3*F)", "2*E/3+(-A-D)/(3*F)");
  /* no multiple of the denominator among the terms */
  expect_refused(leir__alg_expand_cancel, "A/(A+D)", LEIR__ALG_NOCHANGE);
  /* the whole numerator is one: cancellation's job */
  expect_refused(leir__alg_expand_cancel, "(A*D+A)/(D+1)", LEIR__ALG_NOCHANGE);
  /* only a single fraction */
  expect_refused(leir__alg_expand_cancel, "A/D+1", LEIR__ALG_NOCHANGE);
  expect_refused(leir__alg_expand_cancel, "(A+D)/2", LEIR__ALG_NOCHANGE);
}
END_TEST

START_TEST(test_bounds_of_clamps_and_exp) {
  leir__alg *a;
  leir_program *p = ranged("min(max(A,0.5),2)*exp(D)+1/(1+exp(-G))", "D", -1, 1, 0, 0, &a);
  double lo, hi;
  ck_assert(leir__alg_bounds(a, rhs_of(p), &lo, &hi));
  ck_assert(lo <= 0.5 * exp(-1) && lo > 0.5 * exp(-1) - 1e-9);
  ck_assert(hi >= 2 * exp(1) + 1 && hi < 2 * exp(1) + 1 + 1e-9);
  leir__alg_free(a);
  leir_program_free(p);
  p = ranged("A+1", "D", -1, 1, 0, 0, &a);
  ck_assert(!leir__alg_bounds(a, rhs_of(p), &lo, &hi));
  leir__alg_free(a);
  leir_program_free(p);
  p = ranged("A/D", "AD", -1, 1, 0, 0, &a); /* D's range holds 0 */
  ck_assert(!leir__alg_bounds(a, rhs_of(p), &lo, &hi));
  leir__alg_free(a);
  leir_program_free(p);
  /* (u-v)/(u+v), u, v >= 0: tanh written with exp, in [-1, 1] whatever A
   * is; the terms may come in either order */
  static const char *const unit[] = {"(exp(A)-exp(-A))/(exp(A)+exp(-A))",
                                     "(exp(-A)-exp(A))/(exp(A)+exp(-A))",
                                     "(D*D-exp(A))/(exp(A)+D*D)"};
  for (size_t i = 0; i < sizeof unit / sizeof unit[0]; i++) {
    p = ranged(unit[i], "", 0, 0, 0, 0, &a);
    ck_assert_msg(leir__alg_bounds(a, rhs_of(p), &lo, &hi) && lo == -1 && hi == 1, "%s", unit[i]);
    leir__alg_free(a);
    leir_program_free(p);
  }
  /* another term in the denominator, a sum on top, or a part of unknown
   * sign: no bound */
  static const char *const not_unit[] = {"(exp(A)-exp(-A))/(exp(A)+exp(-D))",
                                         "(exp(A)+exp(-A))/(exp(A)+exp(-A)+0)",
                                         "(A-exp(-A))/(A+exp(-A))"};
  for (size_t i = 0; i < sizeof not_unit / sizeof not_unit[0]; i++) {
    p = ranged(not_unit[i], "", 0, 0, 0, 0, &a);
    ck_assert_msg(!leir__alg_bounds(a, rhs_of(p), &lo, &hi), "%s", not_unit[i]);
    leir__alg_free(a);
    leir_program_free(p);
  }
}
END_TEST

typedef struct corpus_stats {
  int eqs, converted, rewritten, refused;
} corpus_stats;

/* every rewrite of a corpus RHS evaluates like the original (where the
 * original is finite at the point) */
static void check_rewrites(leir_program *p, const leir_expr *rhs, corpus_stats *st) {
  leir__alg *a = leir__alg_new(p, 0);
  ck_assert(a);
  rewrite1 fs[] = {leir__alg_expand, leir__alg_together, leir__alg_factor, cancel_any,
                   leir__alg_powsimp, leir__alg_expand_powsimp, leir__alg_expand_log,
                   leir__alg_expand_cancel, leir__alg_logsimp, leir__alg_together_terms};
  st->eqs++;
  leir__rf rf;
  if (leir__alg_from_expr(a, rhs, &rf) == 0) st->converted++;
  else ck_assert_int_ne(leir__alg_error(a), LEIR__ALG_NOMEM);
  for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++) {
    leir_expr *r = fs[i](a, rhs);
    if (!r) {
      int err = leir__alg_error(a);
      ck_assert_msg(err != 0 && err != LEIR__ALG_NOMEM, "rewrite %zu: error %d", i, err);
      st->refused++;
      continue;
    }
    st->rewritten++;
    double vals[64];
    for (int t = 0; t < 5; t++) {
      for (int j = 0; j < 64; j++) vals[j] = 0.5 + rnd(1000) / 1000.0;
      double x = eval(p, rhs, vals), y = eval(p, r, vals);
      if (!isfinite(x)) continue;
      ck_assert_msg(fabs(x - y) <= 1e-8 * (1 + fabs(x)), "rewrite %zu: %s -> %s: %g vs %g", i,
                    short_text(p, rhs), short_text(p, r), x, y);
    }
  }
  leir__alg_free(a);
}

static void walk_nest(leir_program *p, const leir_nest *n, corpus_stats *st) {
  for (uint32_t i = 0; i < n->nitems; i++) {
    if (n->items[i].eq) check_rewrites(p, n->items[i].eq->rhs, st);
    else walk_nest(p, n->items[i].nest, st);
  }
}

START_TEST(test_rewrites_hold_on_the_corpus) {
  jsonl_file *f = test_corpus_open("sources-small.jsonl");
  const jsonl_value *o;
  corpus_stats st = {0};
  rng_state = 4242;
  while ((o = jsonl_next(f))) {
    leir_program *p = test_parse(jsonl_str(jsonl_get(o, "leir")));
    for (uint32_t i = 0; i < p->nnests; i++) walk_nest(p, p->nests[i], &st);
    leir_program_free(p);
  }
  jsonl_close(f);
  /* most right-hand sides are in the algebra; some rewrites apply */
  ck_assert_int_gt(st.eqs, 100);
  ck_assert_int_gt(st.converted * 10, st.eqs * 8);
  ck_assert_int_gt(st.rewritten, st.eqs);
  if (getenv("ALG_STATS"))
    fprintf(stderr, "eqs %d converted %d rewritten %d refused %d\n", st.eqs, st.converted,
            st.rewritten, st.refused);
}
END_TEST

/* ---- grounding modulo algebra and the CoT of math steps ----------------- */

static leir_program *prog(const char *text) {
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse(&p, text, strlen(text), NULL), LEIR_OK);
  return p;
}

/* the steps leir_ground finds from before to after, one per line ("" for
 * none) */
static char *grounds(const char *before, const char *after) {
  leir_program *b = prog(before), *a = prog(after);
  leir_candidates *hits = NULL;
  ck_assert_int_eq(leir_ground(&hits, b, a, NULL), LEIR_OK);
  static char out[4096];
  out[0] = 0;
  for (size_t i = 0; i < leir_candidates_count(hits); i++) {
    strncat(out, leir_step_text(leir_candidates_step(hits, i)), sizeof out - strlen(out) - 2);
    strcat(out, "\n");
  }
  leir_candidates_free(hits);
  leir_program_free(a);
  leir_program_free(b);
  return out;
}

#define T(x) x "^{f64,g}_{tx,a}"
#define ACC_BEFORE "B^{8}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+(" T("A") "*" T("C") "+" T("A") "*" T("E") "+" T("F") ");];"

START_TEST(test_math_steps_ground_modulo_ac_and_only_so) {
  const char *collect = "collect nest=0 tensor=A eq=0 expr=1.1\n";
  /* the candidate's own spelling, and a commuted and regrouped one */
  ck_assert_str_eq(grounds(ACC_BEFORE, "B^{8}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+(" T("A") "*(" T("C") "+" T("E") ")+" T("F") ");];"), collect);
  ck_assert_str_eq(grounds(ACC_BEFORE, "B^{8}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+(" T("F") "+(" T("E") "+" T("C") ")*" T("A") ");];"), collect);
  /* a wrong sign, a wrong term, a dropped term: no step */
  ck_assert_str_eq(grounds(ACC_BEFORE, "B^{8}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+(" T("F") "+(" T("E") "-" T("C") ")*" T("A") ");];"), "");
  ck_assert_str_eq(grounds(ACC_BEFORE, "B^{8}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+(" T("F") "+(" T("E") "+" T("F") ")*" T("A") ");];"), "");
  ck_assert_str_eq(grounds(ACC_BEFORE, "B^{8}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+(" T("E") "+" T("C") ")*" T("A") ";];"), "");
  /* a different rewrite (distributed differently) is not this step */
  ck_assert_str_eq(grounds(ACC_BEFORE, "B^{8}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+(" T("A") "*" T("C") "+" T("A") "*(" T("E") "+" T("F") "/" T("A") "));];"), "");
  /* the accumulation's chain may be respelled as long as D comes first */
  ck_assert_str_eq(grounds(ACC_BEFORE, "B^{8}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+" T("F") "+(" T("E") "+" T("C") ")*" T("A") ";];"), collect);
  /* the accumulation form (leir.md 3.4) is kept: R+D is another program */
  ck_assert_str_eq(grounds(ACC_BEFORE, "B^{8}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx}=(" T("A") "*(" T("C") "+" T("E") ")+" T("F") ")+D^{f64,g}_{tx};];"), "");
  /* only the step's site may be respelled */
  const char *two = "B^{8}_{tx=0}L^{4}_{a=0}[G^{f64,g}_{tx,a}=" T("A") "*" T("C") "+" T("A") "*" T("E") ";];"
                    "B^{8}_{tx=0}L^{4}_{a=0}[H^{f64,g}_{tx,a}=" T("G") "*" T("F") ";];";
  ck_assert_ptr_nonnull(strstr(grounds(two, "B^{8}_{tx=0}L^{4}_{a=0}[G^{f64,g}_{tx,a}=(" T("E") "+" T("C") ")*" T("A") ";];"
                    "B^{8}_{tx=0}L^{4}_{a=0}[H^{f64,g}_{tx,a}=" T("G") "*" T("F") ";];"), "collect nest=0 tensor=A eq=0 expr=1\n"));
  ck_assert_str_eq(grounds(two, "B^{8}_{tx=0}L^{4}_{a=0}[G^{f64,g}_{tx,a}=(" T("E") "+" T("C") ")*" T("A") ";];"
                    "B^{8}_{tx=0}L^{4}_{a=0}[H^{f64,g}_{tx,a}=" T("F") "*" T("G") ";];"), "");
  /* loop steps are not relaxed: a reorder with a commuted product */
  const char *loops = "L^{8}_{a=0}L^{4}_{c=0}[H^{f64,g}_{a,c}=A^{f64,g}_{a,c}*C^{f64,g}_{a,c};];";
  ck_assert_str_eq(grounds(loops, "L^{4}_{c=0}L^{8}_{a=0}[H^{f64,g}_{a,c}=A^{f64,g}_{a,c}*C^{f64,g}_{a,c};];"), "loop_reorder nest=0 loops=a,c\n");
  ck_assert_str_eq(grounds(loops, "L^{4}_{c=0}L^{8}_{a=0}[H^{f64,g}_{a,c}=C^{f64,g}_{a,c}*A^{f64,g}_{a,c};];"), "");
}
END_TEST

#define BN(x) x "^{f64,g}_{tx}"
#define BNA "A^{f64,g}_{a,tx}"
#define BN_BEFORE "L^{12}_{a=0}B^{8}_{tx=0}[E^{f64,g}_{a,tx}=" BN("F") "*((" BNA "-" BN("C") ")/sqrt(" BN("D") "+1e-05))+" BN("G") ";];"
#define BN_AFTER(rhs) "L^{12}_{a=0}B^{8}_{tx=0}[E^{f64,g}_{a,tx}=" rhs ";];"
#define COS(x) x "^{f64,g}_{tx}"

/* The reference's own spellings of math steps (sympy's number and argument
 * order) ground to libleir's steps; a changed number, a swapped max/min or
 * a changed factor do not. */
START_TEST(test_reference_spellings_of_math_steps_ground) {
  /* sympy's cancel and together of a BatchNorm, 1.0e-5 for 1e-05 */
  ck_assert_ptr_nonnull(strstr(grounds(BN_BEFORE, BN_AFTER("(" BNA "*" BN("F") "-" BN("C") "*" BN("F") "+" BN("G") "*sqrt(" BN("D") "+1.0e-5))/sqrt(" BN("D") "+1.0e-5)")), "cancellation nest=0 eq=0 expr=1\n"));
  ck_assert_ptr_nonnull(strstr(grounds(BN_BEFORE, BN_AFTER("(" BN("F") "*(" BNA "-" BN("C") ")+" BN("G") "*sqrt(" BN("D") "+1.0e-5))/sqrt(" BN("D") "+1.0e-5)")), "together nest=0 eq=0 expr=1\n"));
  /* ... and their inverses back to the source's spelling */
  const char *one = BN_AFTER("(" BN("F") "*(" BNA "-" BN("C") ")+" BN("G") "*sqrt(" BN("D") "+1.0e-5))/sqrt(" BN("D") "+1.0e-5)");
  ck_assert_ptr_nonnull(strstr(grounds(one, BN_BEFORE), "apart nest=0 eq=0 expr=1\n"));
  ck_assert_ptr_nonnull(strstr(grounds(one, BN_BEFORE), "expand_cancellation nest=0 eq=0 expr=1\n"));
  /* sympy's factor/sqf of the same sum (a rational function): factorization */
  ck_assert_ptr_nonnull(strstr(grounds(BN_BEFORE, BN_AFTER("(" BNA "*" BN("F") "-" BN("C") "*" BN("F") "+" BN("G") "*sqrt(" BN("D") "+1.0e-5))/sqrt(" BN("D") "+1.0e-5)")), "factorization nest=0 eq=0 expr=1\n"));
  ck_assert_ptr_null(strstr(grounds(BN_BEFORE, BN_AFTER("(" BNA "*" BN("F") "+" BN("C") "*" BN("F") "+" BN("G") "*sqrt(" BN("D") "+1.0e-5))/sqrt(" BN("D") "+1.0e-5)")), "factorization"));
  /* powsimp's equal bases, commuted; a wrong power is no step */
  const char *sq = "B^{18}_{tx=0}L^{1}_{a=0}[I^{f64,g}_{tx,a}=G^{f64,g}_{tx,a}*(G^{f64,g}_{tx,a}*Q^{f64,g}_{tx,a});];";
  ck_assert_ptr_nonnull(strstr(grounds(sq, "B^{18}_{tx=0}L^{1}_{a=0}[I^{f64,g}_{tx,a}=Q^{f64,g}_{tx,a}*G^{f64,g}_{tx,a}**2;];"), "powsimp nest=0 eq=0 expr=1\n"));
  ck_assert_str_eq(grounds(sq, "B^{18}_{tx=0}L^{1}_{a=0}[I^{f64,g}_{tx,a}=Q^{f64,g}_{tx,a}*G^{f64,g}_{tx,a}**3;];"), "");
  /* a different epsilon, a dropped factor: no step */
  ck_assert_str_eq(grounds(BN_BEFORE, BN_AFTER("(" BNA "*" BN("F") "-" BN("C") "*" BN("F") "+" BN("G") "*sqrt(" BN("D") "+1.0e-5))/sqrt(" BN("D") "+1.0e-4)")), "");
  ck_assert_str_eq(grounds(BN_BEFORE, BN_AFTER("(" BNA "-" BN("C") "*" BN("F") "+" BN("G") "*sqrt(" BN("D") "+1.0e-5))/sqrt(" BN("D") "+1.0e-5)")), "");
  /* max is fmax: sympy's max(1.0e-8, x) for max(x, 1e-08) grounds; min
   * does not */
  const char *cos = "B^{16}_{tx=0}[E^{f64,g}_{tx}=1-(" COS("G") "/max(sqrt(" COS("H") ")*sqrt(" COS("I") "),1e-08));];";
  ck_assert_ptr_nonnull(strstr(grounds(cos, "B^{16}_{tx=0}[E^{f64,g}_{tx}=(-" COS("G") "+max(1.0e-8,sqrt(" COS("H") ")*sqrt(" COS("I") ")))/max(1.0e-8,sqrt(" COS("H") ")*sqrt(" COS("I") "));];"), "cancellation nest=0 eq=0 expr=1\n"));
  ck_assert_ptr_nonnull(strstr(grounds(cos, "B^{16}_{tx=0}[E^{f64,g}_{tx}=(-" COS("G") "+max(1.0e-8,sqrt(" COS("I") ")*sqrt(" COS("H") ")))/max(sqrt(" COS("H") ")*sqrt(" COS("I") "),1.0e-8);];"), "cancellation nest=0 eq=0 expr=1\n"));
  ck_assert_str_eq(grounds(cos, "B^{16}_{tx=0}[E^{f64,g}_{tx}=(-" COS("G") "+min(1.0e-8,sqrt(" COS("H") ")*sqrt(" COS("I") ")))/max(1.0e-8,sqrt(" COS("H") ")*sqrt(" COS("I") "));];"), "");
  ck_assert_str_eq(grounds(cos, "B^{16}_{tx=0}[E^{f64,g}_{tx}=(-" COS("G") "+max(1.0e-7,sqrt(" COS("H") ")*sqrt(" COS("I") ")))/max(1.0e-8,sqrt(" COS("H") ")*sqrt(" COS("I") "));];"), "");
}
END_TEST

START_TEST(test_math_cot_quotes_the_changed_part) {
  leir_program *p = prog(ACC_BEFORE);
  leir_step *s = NULL;
  const char *st = "collect nest=0 tensor=A eq=0 expr=1.1";
  ck_assert_int_eq(leir_step_parse(&s, st, strlen(st)), LEIR_OK);
  char *cot = NULL;
  ck_assert_int_eq(leir_step_cot(&cot, NULL, p, s), LEIR_OK);
  ck_assert_msg(strstr(cot, "Under the given IR, in the expression " ACC_BEFORE ", the part " T("A") "*" T("C") "+" T("A") "*" T("E") "+" T("F") " of the right-hand side of D^{f64,g}_{tx} can be collected around a common factor as " T("A") "*(" T("C") "+" T("E") ")+" T("F") ", giving the expression ") != NULL, "%s", cot);
  leir_free(cot);
  leir_step_free(s);
  leir_program_free(p);
  /* the smallest changed part: the argument of sqrt */
  p = prog("B^{8}_{tx=0}[X^{f64,g}_{tx}=A^{f64,g}_{tx}/sqrt(E^{f64,g}_{tx}*3+E^{f64,g}_{tx}*2);];");
  leir_candidates *c = NULL;
  size_t math = 0;
  ck_assert_int_eq(leir_candidates_list(&c, p, NULL), LEIR_OK);
  for (size_t i = 0; i < leir_candidates_count(c); i++) {
    const leir_step *cs = leir_candidates_step(c, i);
    size_t k = leir_step_strategy(cs);
    if (k < 23 || k > 34) continue;
    ck_assert_int_eq(leir_step_cot(&cot, NULL, p, cs), LEIR_OK);
    /* every math step has its own facts, never the generic "X becomes Y" */
    ck_assert_msg(strstr(cot, ", the part ") && !strstr(cot, " become "), "%s", cot);
    ck_assert_msg(strstr(cot, "the part sqrt(") == NULL, "%s", cot);
    ck_assert_msg(strstr(cot, "the part E^{f64,g}_{tx}*3+E^{f64,g}_{tx}*2 ") != NULL, "%s", cot);
    leir_free(cot);
    math++;
  }
  ck_assert_uint_ge(math, 1);
  leir_candidates_free(c);
  leir_program_free(p);
}
END_TEST

/* ---- the math strategies on the corpus: candidates verify, mutants do not -- */

/* the equation of q that differs from the one at the same place in src */
static leir_equation *changed_in(const leir_program *src, const leir_nest *x, leir_program *q,
                                 leir_nest *y) {
  if (x->nitems != y->nitems) return NULL;
  for (uint32_t k = 0; k < x->nitems; k++) {
    if (x->items[k].nest && y->items[k].nest) {
      leir_equation *e = changed_in(src, x->items[k].nest, q, y->items[k].nest);
      if (e) return e;
    } else if (x->items[k].eq && y->items[k].eq &&
               !leir__expr_equal(src, x->items[k].eq->rhs, q, y->items[k].eq->rhs)) {
      return y->items[k].eq;
    }
  }
  return NULL;
}

static leir_equation *changed_eq(const leir_program *src, leir_program *q, uint32_t *top) {
  for (uint32_t i = 0; i < src->nnests && i < q->nnests; i++) {
    leir_equation *e = changed_in(src, src->nests[i], q, q->nests[i]);
    if (e) {
      *top = i;
      return e;
    }
  }
  return NULL;
}

/* Top-level nest `top` of p as a program of its own, the signature
 * inferred (what it reads first is an input, drawn at random; what it
 * writes is an output), so that a changed equation is compared even where
 * the rest of the program would hide the change. */
static leir_program *alone(const leir_program *p, uint32_t top) {
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__print_nest(&b, p, p->nests[top], NULL);
  ck_assert(!b.failed);
  leir_program *q = NULL;
  ck_assert_int_eq(leir_program_parse(&q, b.data, b.len, NULL), LEIR_OK);
  leir__sb_release(&b);
  return q;
}

/* the slot of the rewritable part: R of an accumulation X op R, else the
 * whole right side */
static leir_expr **rewritable(leir_equation *eq) {
  leir_expr *r = eq->rhs;
  if (r->kind == LEIR_EXPR_BINARY && r->kids[0]->kind == LEIR_EXPR_TENSOR &&
      r->kids[0]->sym == eq->lhs->sym && r->op != LEIR_OP_DIV)
    return &r->kids[1];
  return &eq->rhs;
}

/* the first + or - node under *slot (pre-order, outside subscripts) */
static leir_expr **first_sum(leir_expr **slot) {
  leir_expr *e = *slot;
  if (e->kind == LEIR_EXPR_TENSOR) return NULL;
  if (e->kind == LEIR_EXPR_BINARY && (e->op == LEIR_OP_ADD || e->op == LEIR_OP_SUB)) return slot;
  for (uint32_t i = 0; i < e->n; i++) {
    leir_expr **s = first_sum(&e->kids[i]);
    if (s) return s;
  }
  return NULL;
}

typedef enum { MUT_DROP_TERM, MUT_FLIP_SIGN } mutation;

/* q with one term of the rewritten equation dropped or one sign flipped;
 * false when q has no place for the mutation */
static bool mutate(const leir_program *src, leir_program *q, mutation m) {
  uint32_t top;
  leir_equation *eq = changed_eq(src, q, &top);
  ck_assert_ptr_nonnull(eq);
  leir_expr **part = rewritable(eq), **sum = first_sum(part);
  if (m == MUT_DROP_TERM) {
    if (!sum) return false;
    *sum = (*sum)->kids[0];
  } else if (sum) {
    (*sum)->op = (*sum)->op == LEIR_OP_ADD ? LEIR_OP_SUB : LEIR_OP_ADD;
  } else {
    *part = leir__new_unary(q, LEIR_EXPR_NEG, leir__new_unary(q, LEIR_EXPR_PAREN, *part));
    ck_assert_ptr_nonnull(*part);
  }
  return true;
}

static leir_verdict judge(leir_verifier *v, const leir_program *q, uint32_t cls) {
  leir_verify_report *r = NULL;
  ck_assert_int_eq(leir_verifier_judge(v, q, cls, &r), LEIR_OK);
  leir_verdict verdict = r->verdict;
  leir_verify_report_free(r);
  return verdict;
}

/* Candidate k of cs (of src) verifies EQUAL or CLOSE against src on all
 * input sets (*v: src's verifier, made on first use); the same output with
 * a term dropped or a sign flipped in the rewritten equation verifies
 * MISMATCH, judged on the rewritten nest alone with random inputs. */
static void check_candidate(leir_backend *b, leir_verifier **v, const leir_program *src,
                            leir_candidates *cs, size_t k, const char *id, size_t *mutants) {
  if (!*v) ck_assert_int_eq(leir_verifier_new(v, b, src, NULL), LEIR_OK);
  const char *text = leir_step_text(leir_candidates_step(cs, k));
  /* reassociating: the per-element tolerance, as test_strategy_verify
   * judges them (for f64 sources the reassociation bound has no wider
   * truth, T = O, and rejects a rounding of 1 ulp of an operand at a
   * cancellation: SELU's 1.67*exp(A)-1.67 near A = 0) */
  uint32_t cls = leir_candidates_exactness(cs, k) == LEIR_EXACT ? LEIR_VERIFY_CLASS_EXACT
                                                                : LEIR_VERIFY_CLASS_ANY;
  leir_program *q = NULL;
  ck_assert_int_eq(leir_candidates_apply(&q, cs, k), LEIR_OK);
  leir_verdict verdict = judge(*v, q, cls);
  ck_assert_msg(verdict == LEIR_VERDICT_EQUAL || verdict == LEIR_VERDICT_CLOSE, "%s: %s verifies %s",
                id, text, leir_verdict_name(verdict));
  uint32_t top;
  ck_assert_ptr_nonnull(changed_eq(src, q, &top));
  leir_program *pre = alone(src, top);
  leir_verifier *pv = NULL;
  ck_assert_int_eq(leir_verifier_new(&pv, b, pre, NULL), LEIR_OK);
  for (int m = MUT_DROP_TERM; m <= MUT_FLIP_SIGN; m++) {
    leir_program *bad = NULL;
    ck_assert_int_eq(leir_program_clone(&bad, q), LEIR_OK);
    if (mutate(src, bad, (mutation)m)) {
      leir_program *bad_pre = alone(bad, top);
      verdict = judge(pv, bad_pre, cls);
      ck_assert_msg(verdict == LEIR_VERDICT_MISMATCH, "%s: %s mutated (%s) verifies %s", id, text,
                    m == MUT_DROP_TERM ? "term dropped" : "sign flipped", leir_verdict_name(verdict));
      leir_program_free(bad_pre);
      (*mutants)++;
    }
    leir_program_free(bad);
  }
  leir_verifier_free(pv);
  leir_program_free(pre);
  leir_program_free(q);
}

/* Every candidate of the math strategies (23-34) on every sources-small
 * program verifies on all input sets (normal, normal x 10, uniform; bool
 * masks where a program has them); the same outputs with a term dropped
 * or a sign flipped in the rewritten equation verify MISMATCH, judged on
 * the rewritten nest alone with random inputs (on the whole program some
 * verify EQUAL: Gemm_Max_Subtract_GELU's GELU reads x - mean(x) over one
 * element, always 0; in Gemm_BatchNorm_GELU_GroupNorm_Mean_ReLU a
 * one-channel GroupNorm removes any change of a channel's shift). */
START_TEST(test_math_candidates_verify_and_mutants_do_not) {
  corpus_programs small;
  corpus_programs_load(&small);
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  size_t total = 0, mutants = 0;
  size_t per[LEIR_STRATEGY_COUNT] = {0};
#if defined(__SANITIZE_ADDRESS__)
  const size_t every = 4; /* the interpreter under ASan: every fourth program */
#else
  const size_t every = 1;
#endif
  for (size_t i = 0; i < small.n; i++) {
    if (i % every) continue;
    const leir_program *src = small.e[i].program;
    leir_verifier *v = NULL;
    for (int32_t st = 23; st <= 34; st++) {
      leir_candidates *cs = NULL;
      leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
      o.strategy = st;
      ck_assert_int_eq(leir_candidates_list(&cs, src, &o), LEIR_OK);
      for (size_t k = 0; k < leir_candidates_count(cs); k++) {
        check_candidate(b, &v, src, cs, k, small.e[i].id, &mutants);
        total++;
        per[st]++;
      }
      leir_candidates_free(cs);
    }
    leir_verifier_free(v);
  }
  if (getenv("ALG_STATS")) {
    fprintf(stderr, "math candidates %zu, mutants %zu:", total, mutants);
    for (int st = 23; st <= 34; st++) fprintf(stderr, " %zu", per[st]);
    fprintf(stderr, "\n");
  }
  /* 119 at the time of writing: 98 before expand_powsimp offered x**k ->
   * x*x*...*x (21: the squares in the variances of the norms), 12 fewer
   * than that when factorization still offered 0.044715*D ->
   * 8943*D/200000, a respelling of the number */
  ck_assert_uint_gt(total, 110 / every);
  ck_assert_uint_gt(mutants, total);
  leir_backend_free(b);
  corpus_programs_free(&small);
}
END_TEST

/* The reference's own outputs of factorization, cancellation and together
 * on the programs it rewrote (tests/data/strategy/math-steps.tsv, lines of
 * steps-small.jsonl): a BatchNorm's affine over one denominator (also
 * after a Mish written with exp, whose tanh quotient lies in [-1, 1]) and
 * 1-G/max(...) ground to a candidate of the same strategy, and every
 * candidate of that strategy on the program verifies, its mutants do not;
 * the forms multiplied through by exp(x) (a sigmoid, a Swish sum) ground to
 * none. */
START_TEST(test_reference_math_outputs_on_their_programs) {
  char *text = test_read_file(test_data_path("strategy/math-steps.tsv"), NULL);
  ck_assert_ptr_nonnull(text);
  leir_backend *b = NULL;
  /* whole convolution programs: the interpreter under ASan needs more than
   * the default 10 s a run */
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.timeout_s = 600;
  ck_assert_int_eq(leir_backend_open(&b, "interp", &bo), LEIR_OK);
  size_t rows = 0, grounded = 0, total = 0, mutants = 0;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (line[0] == '#') continue;
    char *f[5];
    char *fs = NULL;
    int nf = 0;
    for (char *t = strtok_r(line, "\t", &fs); t && nf < 5; t = strtok_r(NULL, "\t", &fs)) f[nf++] = t;
    ck_assert_int_eq(nf, 5);
    size_t st;
    ck_assert_int_eq(leir_strategy_find(f[1], &st), LEIR_OK);
    leir_program *before = prog(f[3]), *after = prog(f[4]);
    ck_assert_int_eq(leir_program_infer_signature(before), LEIR_OK);
    ck_assert_int_eq(leir_program_infer_signature(after), LEIR_OK);
    leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
    o.strategy = (int32_t)st;
    leir_candidates *hits = NULL;
    ck_assert_int_eq(leir_ground(&hits, before, after, &o), LEIR_OK);
    bool want = strcmp(f[2], "yes") == 0;
    ck_assert_msg((leir_candidates_count(hits) > 0) == want, "%s %s: grounds to %zu steps, want %s",
                  f[0], f[1], leir_candidates_count(hits), f[2]);
    grounded += leir_candidates_count(hits) > 0;
    leir_candidates_free(hits);
    leir_candidates *cs = NULL;
    ck_assert_int_eq(leir_candidates_list(&cs, before, &o), LEIR_OK);
    leir_verifier *v = NULL;
    for (size_t k = 0; k < leir_candidates_count(cs); k++, total++)
      check_candidate(b, &v, before, cs, k, f[0], &mutants);
    leir_verifier_free(v);
    leir_candidates_free(cs);
    leir_program_free(before);
    leir_program_free(after);
    rows++;
  }
  ck_assert_uint_eq(rows, 6);
  ck_assert_uint_eq(grounded, 4);
  ck_assert_uint_ge(total, 4);
  ck_assert_uint_gt(mutants, total);
  leir_backend_free(b);
  free(text);
}
END_TEST

static Suite *algebra_suite(void) {
  Suite *s = suite_create("algebra");
  TCase *tc = tcase_create("algebra");
  tcase_add_test(tc, test_expand_collects_like_terms);
  tcase_add_test(tc, test_canonical_form_is_unique_for_equal_polynomials);
  tcase_add_test(tc, test_factor_extracts_content_and_roots);
  tcase_add_test(tc, test_cancel_needs_a_nonzero_factor);
  tcase_add_test(tc, test_apart_and_together_are_inverse);
  tcase_add_test(tc, test_reference_spellings_of_math_steps_ground);
  tcase_add_test(tc, test_collect_groups_powers);
  tcase_add_test(tc, test_positivity_proofs_and_refusals);
  tcase_add_test(tc, test_powsimp_combines_exp_and_sqrt);
  tcase_add_test(tc, test_expand_powsimp_never_adds_overflow);
  tcase_add_test(tc, test_expand_log_needs_positive_operands);
  tcase_add_test(tc, test_sigmoid_is_not_turned_into_an_overflowing_form);
  tcase_add_test(tc, test_refuses_inf_and_bounds_work);
  tcase_add_test(tc, test_ac_hash_identifies_only_ac_spellings);
  tcase_add_test(tc, test_hostile_depth_is_bounded);
  tcase_add_test(tc, test_flat_mode_leaves_call_arguments_alone);
  tcase_add_test(tc, test_rewrites_hold_on_the_corpus);
  tcase_add_test(tc, test_logsimp_needs_bounds_within_range);
  tcase_add_test(tc, test_expand_cancel_takes_out_multiples_of_the_denominator);
  tcase_add_test(tc, test_bounds_of_clamps_and_exp);
  tcase_add_test(tc, test_math_candidates_verify_and_mutants_do_not);
  tcase_add_test(tc, test_math_steps_ground_modulo_ac_and_only_so);
  tcase_add_test(tc, test_math_cot_quotes_the_changed_part);
  tcase_add_test(tc, test_reference_math_outputs_on_their_programs);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(algebra_suite()); }
