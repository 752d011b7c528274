/*
 * Expression algebra over LEIR right-hand sides (docs/algebra.md).
 *
 * A right-hand side is read as a rational function num/den of polynomials
 * with rational (int64/int64) coefficients over "atoms": every node that is
 * not +, -, *, /, unary minus or an integer power (tensor reads, loop
 * variables, calls, //, %, non-integer powers). Arguments of calls are
 * brought to canonical form first, so exp(A+C) and exp(C+A) are one atom.
 *
 * Every rewrite below holds over the reals where the input is defined; the
 * ones that need more say so, and are applied only when the condition is
 * proven (leir__alg_positive / leir__alg_nonneg). Atoms that contain `inf`
 * are refused (x-x=0 is false for x=inf), and so are comparisons outside an
 * if_then_else.
 *
 * Memory: a context owns an arena for its polynomials and atom table;
 * expressions it returns are built in the context's program (`p`) and live
 * as long as that program. Work is bounded: every polynomial has at most
 * `max_terms` terms, exponents at most 64 in magnitude, coefficients fit in
 * int64; exceeding a bound fails cleanly with LEIR__ALG_LIMIT or
 * LEIR__ALG_OVERFLOW, never allocating without limit.
 *
 * Not thread-safe per context; contexts are independent.
 */
#ifndef LEIR_ALGEBRA_H
#define LEIR_ALGEBRA_H

#include <stdbool.h>
#include <stdint.h>

#include "ir.h"

enum {
  LEIR__ALG_OK = 0,
  LEIR__ALG_REFUSED = 1,  /* the form is outside the algebra (inf, comparisons, ...) */
  LEIR__ALG_LIMIT = 2,    /* term, exponent, atom or depth limit */
  LEIR__ALG_OVERFLOW = 3, /* a coefficient left int64 */
  LEIR__ALG_NOMEM = 4,
  LEIR__ALG_UNPROVEN = 5, /* the rewrite's condition could not be proven */
  LEIR__ALG_NOCHANGE = 6, /* the rewrite does not apply (nothing to do) */
};

typedef struct leir__alg leir__alg;
typedef struct leir__poly leir__poly;

/* A rational function num/den; den is never the zero polynomial. */
typedef struct leir__rf {
  leir__poly *num, *den;
} leir__rf;

#define LEIR__ALG_MAX_TERMS 2048

/* A context whose outputs are built in `p` (which must outlive it). NULL on
 * allocation failure. max_terms 0 = LEIR__ALG_MAX_TERMS. */
leir__alg *leir__alg_new(leir_program *p, uint32_t max_terms);
void leir__alg_free(leir__alg *a);
/* The program outputs are built in. */
leir_program *leir__alg_program(const leir__alg *a);
/* The LEIR__ALG_* code of the last failing call. */
int leir__alg_error(const leir__alg *a);

/* Flat mode (for rewrites of one region at a time): atoms keep their
 * arguments exactly as written, and the rewrites do not descend into call
 * arguments (each argument is a region of its own). */
void leir__alg_set_flat(leir__alg *a, bool flat);

/* Declared input domain: tensor (or loop variable) `sym` is > 0. */
void leir__alg_assume_positive(leir__alg *a, uint32_t sym);
/* Declared input domain: every value of tensor (or loop variable) `sym`
 * lies in [lo, hi] (finite; ignored otherwise). lo > 0 also proves it
 * positive. */
void leir__alg_assume_range(leir__alg *a, uint32_t sym, double lo, double hi);
/* The normal range of the dtype a region computes in: a rewrite that
 * forms a new product (logsimp) keeps it within [tiny, huge] in magnitude,
 * with a factor 2 to spare. Default: f64 (DBL_MIN, DBL_MAX). */
void leir__alg_set_limits(leir__alg *a, double tiny, double huge);

/* ---- rational functions ---------------------------------------------- */

/* Reads `e` (a node of a->p) as num/den, expanded, without cancelling
 * anything: the result equals `e` wherever `e` is defined. */
int leir__alg_from_expr(leir__alg *a, const leir_expr *e, leir__rf *out);
/* The canonical expression of rf: expanded numerator over expanded
 * denominator, terms in a fixed order (degree, then atoms by their text),
 * denominator with leading coefficient 1. NULL on failure. */
leir_expr *leir__alg_rf_expr(leir__alg *a, const leir__rf *rf);
/* num1*den2 - num2*den1 == 0: equal as rational functions. */
int leir__alg_rf_equal(leir__alg *a, const leir__rf *x, const leir__rf *y, bool *equal);
uint32_t leir__alg_poly_terms(const leir__poly *q);

/* ---- rewrites (each returns a new expression in a->p, or NULL with the
 * reason in leir__alg_error) ------------------------------------------- */

/* Canonical expanded form (expand; like terms collected). Identity. */
leir_expr *leir__alg_expand(leir__alg *a, const leir_expr *e);
/* Over one common denominator (together). Identity where e is defined;
 * no factor is cancelled. */
leir_expr *leir__alg_together(leir__alg *a, const leir_expr *e);
/* Over one common denominator with the terms as written (sympy's
 * together, which does not expand): each term of the +/- chain e is a
 * chain of * and /; the common denominator is the product of the distinct
 * non-constant divisors (equal modulo leir__ac_hash), each to the largest
 * multiplicity one term has; each term's numerator keeps its own factors
 * (and constant divisors) and is multiplied by the divisors it lacks:
 * F*((A-C)/s)+G -> (F*(A-C)+G*s)/s. Identity where e is defined.
 * NOCHANGE for a single term or no non-constant divisor. */
leir_expr *leir__alg_together_terms(leir__alg *a, const leir_expr *e);
/* Factored form: rational content * monomial content * the linear factors
 * of a univariate polynomial's rational roots (with multiplicity) * the
 * rest, for numerator and denominator. Identity. */
leir_expr *leir__alg_factor(leir__alg *a, const leir_expr *e);
/* Cancels common factors of numerator and denominator (monomials, rational
 * roots). Identity where every cancelled factor is non-zero: a factor is
 * cancelled only when leir__alg_nonzero proves it, unless `allow_zero` (the
 * original is then 0/0 = NaN where the factor vanishes and the result is
 * finite: no NaN is introduced, one may be removed). */
leir_expr *leir__alg_cancel(leir__alg *a, const leir_expr *e, bool allow_zero);
/* Partial fractions in the atom `x` (an expression of a->p) for a
 * denominator that factors into distinct linear factors in x with rational
 * roots, plus the polynomial part. Identity where e is defined. */
leir_expr *leir__alg_apart(leir__alg *a, const leir_expr *e, const leir_expr *x);
/* The same in the one atom the denominator is a polynomial in (NOCHANGE
 * when it has several or none). */
leir_expr *leir__alg_apart_auto(leir__alg *a, const leir_expr *e);
/* Collects the terms of the expanded numerator by powers of atom `x`:
 * x**2*(..)+x*(..)+(..). Identity. */
leir_expr *leir__alg_collect(leir__alg *a, const leir_expr *e, const leir_expr *x);

/* ---- exp / log / sqrt rules ------------------------------------------ */

/* exp(u)*exp(v) -> exp(u+v), sqrt(u)*sqrt(v) -> sqrt(u*v) (u, v >= 0
 * proven), and equal bases (modulo AC, numbers excepted) into one positive
 * integer power (x*(x*y) -> x**2*y), in every product of e. Identity (exp
 * over the reals; in floating point the combined form overflows no earlier
 * than the product). */
leir_expr *leir__alg_powsimp(leir__alg *a, const leir_expr *e);
/* exp(u+v) -> exp(u)*exp(v): refused (UNPROVEN) unless every part is
 * bounded above by a non-positive form (exp(-x), x >= 0 proven), so that
 * no factor can overflow where exp(u+v) does not. Also x**k -> x*x*...*x
 * for an integer 2 <= k <= 8 and x no number (left to right: no partial
 * product overflows where x**k does not). */
leir_expr *leir__alg_expand_powsimp(leir__alg *a, const leir_expr *e);
/* log(u*v) -> log(u)+log(v), log(u/v) -> log(u)-log(v), log(u**n) ->
 * n*log(u), each only for u, v proven positive. */
leir_expr *leir__alg_expand_log(leir__alg *a, const leir_expr *e);
/* logsimp: in the +/- chain e, the terms log(u_i) (and -log(v_j)) whose
 * arguments have proven bounds [lo, hi], lo > 0, combine into one
 * log(u_1*u_2*.../(v_1*...)) at the place of the first, each partial
 * product proven within the limits (leir__alg_set_limits): the product
 * neither overflows nor underflows where the sum of logs is finite.
 * NOCHANGE with fewer than two log terms, UNPROVEN with fewer than two
 * bounded ones. */
leir_expr *leir__alg_logsimp(leir__alg *a, const leir_expr *e);

/* expand_cancellation (the inverse of cancel): a fraction n/d (e itself a
 * division) whose numerator contains multiples q*d of the denominator as
 * sub-sums of its terms becomes q + r/d, r the other terms. Identity
 * wherever e is defined (d != 0 there); no factor is multiplied in, so no
 * new overflow beyond rounding. NOCHANGE when no such sub-sum exists or
 * the whole numerator is one (that is cancellation). */
leir_expr *leir__alg_expand_cancel(leir__alg *a, const leir_expr *e);

/* ---- domain proofs (structural; false = not proven) ------------------ */

bool leir__alg_positive(leir__alg *a, const leir_expr *e);
bool leir__alg_nonneg(leir__alg *a, const leir_expr *e);
bool leir__alg_nonzero(leir__alg *a, const leir_expr *e);
/* An enclosure [lo, hi] of e's values (over the reals, where e is defined)
 * from numbers, declared ranges (leir__alg_assume_range) and monotone
 * rules for + - * / integer powers, exp, log, sqrt, abs, max, min, and
 * (u-v)/(u+v) in [-1, 1] for u, v >= 0 proven; false when e is not proven
 * bounded. lo or hi may be NULL. */
bool leir__alg_bounds(leir__alg *a, const leir_expr *e, double *lo, double *hi);

/* ---- AC-canonical hash ------------------------------------------------ */

/* A hash of `e` that is equal for trees that differ only by the order of
 * the operands of + and * chains (commutativity), their grouping
 * (associativity: (a+b)+c = a+(b+c), explicit parentheses dropped), and
 * the spelling of a - b as a + (-b) in a chain, the sign of a factor
 * (x*(-y) = -(x*y)) and the grouping of a chain of * and / (x*(y/z) =
 * (x*y)/z: divisors are factors marked inverse); numbers compare by value
 * (2, 2.0 and 2e0 are the same double); factors 1 are dropped and a
 * division by a power of two is the product with its inverse (x/2 =
 * 0.5*x), both exact in floating point. Nothing else is identified:
 * distributivity, max/min argument order are kept. Symbols hash by name, so nodes of different programs compare. */
uint64_t leir__ac_hash(const leir_program *p, const leir_expr *e);

#endif /* LEIR_ALGEBRA_H */
