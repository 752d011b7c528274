/*
 * Expression algebra (lib/algebra.h, docs/algebra.md): sparse multivariate
 * polynomials with int64 rational coefficients over atoms, rational
 * functions num/den, and the rewrites built on them. This file: the
 * context (assumptions, limits) and the conversion entry points; the
 * arithmetic is in algebra_poly.c, expressions to and from polynomials in
 * algebra_expr.c, the rewrites in algebra_factor.c, algebra_explog.c and
 * algebra_terms.c, the proofs in algebra_domain.c, the hash in
 * algebra_hash.c.
 *
 * Failures inside the algebra longjmp to the entry point of the public call
 * (one setjmp per call; public functions never call each other).
 */
#include "algebra.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algebra_internal.h"
#include "vec.h"

/* ---- context ----------------------------------------------------------- */

leir__alg *leir__alg_new(leir_program *p, uint32_t max_terms) {
  leir__alg *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->p = p;
  a->max_terms = max_terms ? max_terms : LEIR__ALG_MAX_TERMS;
  a->tiny = DBL_MIN;
  a->huge = DBL_MAX;
  leir__arena_init(&a->arena, 1 << 14);
  return a;
}

void leir__alg_free(leir__alg *a) {
  if (!a) return;
  leir__arena_release(&a->arena);
  free(a);
}

leir_program *leir__alg_program(const leir__alg *a) { return a ? a->p : NULL; }

int leir__alg_error(const leir__alg *a) { return a ? a->err : LEIR__ALG_NOMEM; }

void *leir__alg_grow(leir__alg *a, void *old, uint32_t n, uint32_t *cap, size_t elem) {
  if (n < *cap) return old;
  size_t nc;
  if (!leir__vec_next_cap(*cap, (size_t)n + 1, elem, 16, UINT32_MAX, &nc))
    fail(a, LEIR__ALG_NOMEM);
  void *m = aalloc(a, nc * elem);
  if (old) memcpy(m, old, (size_t)n * elem);
  *cap = (uint32_t)nc;
  return m;
}

void leir__alg_set_flat(leir__alg *a, bool flat) {
  if (a) a->flat = flat;
}

void leir__alg_assume_positive(leir__alg *a, uint32_t sym) {
  if (!a || setjmp(a->jb)) return;
  a->pos_syms = leir__alg_grow(a, a->pos_syms, a->npos, &a->cap_pos, sizeof *a->pos_syms);
  a->pos_syms[a->npos++] = sym;
}

void leir__alg_assume_range(leir__alg *a, uint32_t sym, double lo, double hi) {
  if (!a || !(lo <= hi) || !isfinite(lo) || !isfinite(hi) || setjmp(a->jb)) return;
  a->ranges = leir__alg_grow(a, a->ranges, a->nrange, &a->cap_range, sizeof *a->ranges);
  a->ranges[a->nrange++] = (struct srange){sym, lo, hi};
}

void leir__alg_set_limits(leir__alg *a, double tiny, double huge) {
  if (!a || !(tiny > 0) || !(huge > tiny) || !isfinite(huge)) return;
  a->tiny = tiny;
  a->huge = huge;
}

const struct srange *leir__alg_sym_range(const leir__alg *a, uint32_t sym) {
  for (uint32_t i = 0; i < a->nrange; i++)
    if (a->ranges[i].sym == sym) return &a->ranges[i];
  return NULL;
}

bool leir__alg_sym_positive(const leir__alg *a, uint32_t sym) {
  for (uint32_t i = 0; i < a->npos; i++)
    if (a->pos_syms[i] == sym) return true;
  const struct srange *r = leir__alg_sym_range(a, sym);
  return r && r->lo > 0;
}

/* ---- entry points --------------------------------------------------------- */

leir__rf leir__alg_conv_top(leir__alg *a, const leir_expr *e) {
  if (!e || leir__alg_contains_inf(e, 0)) fail(a, LEIR__ALG_REFUSED);
  return leir__alg_conv(a, e);
}

int leir__alg_from_expr(leir__alg *a, const leir_expr *e, leir__rf *out) {
  ENTER(a, a ? a->err : LEIR__ALG_NOMEM);
  *out = leir__alg_conv_top(a, e);
  return 0;
}

leir_expr *leir__alg_rf_expr(leir__alg *a, const leir__rf *rf) {
  ENTER(a, NULL);
  return leir__alg_rf_build(a, rf);
}

int leir__alg_rf_equal(leir__alg *a, const leir__rf *x, const leir__rf *y, bool *equal) {
  ENTER(a, a ? a->err : LEIR__ALG_NOMEM);
  leir__poly *d = leir__alg_poly_add(a, leir__alg_poly_mul(a, x->num, y->den),
                                     leir__alg_poly_mul(a, y->num, x->den), true);
  *equal = leir__alg_poly_is_zero(d);
  return 0;
}

leir_expr *leir__alg_expand(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  leir__rf r = leir__alg_conv_top(a, e);
  return leir__alg_rf_build(a, &r);
}

leir_expr *leir__alg_together(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  leir__rf r = leir__alg_conv_top(a, e);
  if (leir__alg_poly_is_const(r.den)) fail(a, LEIR__ALG_NOCHANGE);
  return leir__alg_rf_build(a, &r);
}
