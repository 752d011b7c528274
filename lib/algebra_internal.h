/*
 * What the algebra's files share (lib/algebra.h is the interface; the
 * files: algebra.c, algebra_poly.c, algebra_expr.c, algebra_factor.c,
 * algebra_domain.c, algebra_explog.c, algebra_terms.c, algebra_hash.c):
 * the limits, rationals, terms, polynomials, the context, the failure
 * longjmp with the entry macro, and the helpers one file gives another.
 */
#ifndef LEIR_ALGEBRA_INTERNAL_H
#define LEIR_ALGEBRA_INTERNAL_H

#include "algebra.h"

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

#define MAX_ATOMS 1024u
#define MAX_EXP 256
#define MAX_POW 64
#define MAX_DEPTH 200u

typedef struct rat {
  int64_t n, d; /* d > 0, gcd(|n|, d) == 1 */
} rat;

typedef struct fpow {
  uint32_t atom;
  int32_t e;
} fpow;

typedef struct term {
  rat c;
  uint32_t nf;
  fpow *f; /* sorted by atom */
} term;

struct leir__poly {
  uint32_t n;
  term *t; /* graded-lex descending by atom id; no zero coefficients */
};

struct leir__alg {
  leir_program *p;
  leir__arena arena;
  uint32_t max_terms;
  int err;
  bool flat;
  bool saw; /* expand_powsimp met an exp of a sum */
  unsigned depth;
  jmp_buf jb;
  uint32_t natoms, cap_atoms;
  leir_expr **atoms; /* canonical atom expressions, in p */
  char **keys;       /* their printed text */
  uint32_t npos, cap_pos;
  uint32_t *pos_syms;
  uint32_t nrange, cap_range;
  struct srange {
    uint32_t sym;
    double lo, hi;
  } *ranges;         /* declared bounds (leir__alg_assume_range) */
  double tiny, huge; /* the dtype's normal range (leir__alg_set_limits) */
};

static const rat RONE = {1, 1};

/* The start of every public call: failures inside it longjmp back here and
 * return failval. */
#define ENTER(a, failval)                                                                      \
  do {                                                                                         \
    if (!(a)) return failval;                                                                  \
    (a)->err = 0;                                                                              \
    (a)->depth = 0;                                                                            \
    if (setjmp((a)->jb)) return failval;                                                       \
  } while (0)

/* A term of a +/- chain, with its sign (logsimp, expand_cancel). */
typedef struct sterm {
  const leir_expr *e;
  bool neg;
} sterm;

#define MAX_SUM_TERMS 256u

/* ---- shared between the algebra files ---- */

uint64_t leir__alg_ugcd(uint64_t x, uint64_t y);
bool leir__alg_rat_make(int64_t n, int64_t d, rat *out);
bool leir__alg_rat_add(rat x, rat y, rat *out);
bool leir__alg_rat_mul(rat x, rat y, rat *out);
rat leir__alg_radd(leir__alg *a, rat x, rat y);
rat leir__alg_rmul(leir__alg *a, rat x, rat y);
rat leir__alg_rneg(leir__alg *a, rat x);
rat leir__alg_rinv(leir__alg *a, rat x);
bool leir__alg_rat_of_lexeme(const char *s, uint32_t len, rat *out);
void *leir__alg_grow(leir__alg *a, void *old, uint32_t n, uint32_t *cap, size_t elem);
const struct srange *leir__alg_sym_range(const leir__alg *a, uint32_t sym);
bool leir__alg_sym_positive(const leir__alg *a, uint32_t sym);
int32_t leir__alg_deg(const term *t);
int leir__alg_mono_cmp(const term *x, const term *y);
int leir__alg_term_qcmp(const void *p, const void *q);
leir__poly *leir__alg_poly_new(leir__alg *a, uint32_t n);
leir__poly *leir__alg_poly_norm(leir__alg *a, leir__poly *q);
leir__poly *leir__alg_poly_const(leir__alg *a, rat c);
leir__poly *leir__alg_poly_atom(leir__alg *a, uint32_t atom, int32_t e);
bool leir__alg_poly_is_zero(const leir__poly *q);
bool leir__alg_poly_is_const(const leir__poly *q);
rat leir__alg_poly_const_val(const leir__poly *q);
bool leir__alg_poly_eq(const leir__poly *x, const leir__poly *y);
leir__poly *leir__alg_poly_add(leir__alg *a, const leir__poly *x, const leir__poly *y, bool sub);
leir__poly *leir__alg_poly_scale(leir__alg *a, const leir__poly *x, rat c);
leir__poly *leir__alg_poly_mul(leir__alg *a, const leir__poly *x, const leir__poly *y);
bool leir__alg_term_divides(const term *y, const term *x);
term leir__alg_term_div(leir__alg *a, const term *x, const term *y);
leir__poly *leir__alg_poly_div_exact(leir__alg *a, const leir__poly *x, const leir__poly *y);
leir__poly *leir__alg_poly_pow(leir__alg *a, const leir__poly *x, int64_t n);
const leir_expr *leir__alg_strip(const leir_expr *e);
bool leir__alg_contains_inf(const leir_expr *e, unsigned depth);
bool leir__alg_int_exponent(const leir_expr *e, int64_t *n);
leir__rf leir__alg_rf_of(leir__poly *n, leir__poly *d);
leir__rf leir__alg_conv(leir__alg *a, const leir_expr *e);
leir_expr *leir__alg_mk_bin(leir__alg *a, leir_op op, leir_expr *x, leir_expr *y);
leir_expr *leir__alg_mk_int(leir__alg *a, int64_t v);
leir_expr *leir__alg_atom_expr(leir__alg *a, uint32_t id);
bool leir__alg_decimal_of(int64_t n, int64_t d, char *buf, size_t cap);
leir_expr *leir__alg_poly_build(leir__alg *a, const leir__poly *q);
rat leir__alg_lead_coef(leir__alg *a, const leir__poly *q);
leir__rf leir__alg_rf_monic(leir__alg *a, leir__rf r);
leir_expr *leir__alg_rf_build(leir__alg *a, const leir__rf *rf);
leir__rf leir__alg_conv_top(leir__alg *a, const leir_expr *e);
term leir__alg_mono_gcd(leir__alg *a, const leir__poly *q);
leir__poly *leir__alg_poly_of_term(leir__alg *a, term t);
bool leir__alg_is_call(const leir_expr *e, leir_op op);
bool leir__alg_positive_expr(leir__alg *a, const leir_expr *e, unsigned depth);
bool leir__alg_nonneg_expr(leir__alg *a, const leir_expr *e, unsigned depth);
bool leir__alg_nonzero_expr(leir__alg *a, const leir_expr *e, unsigned depth);
leir_expr *leir__alg_copy(leir__alg *a, const leir_expr *e);
void leir__alg_bounds_rec(leir__alg *a, const leir_expr *e, double *lo, double *hi, unsigned depth);
bool leir__alg_in_limits(const leir__alg *a, double lo, double hi);
void leir__alg_flatten_sum(leir__alg *a, const leir_expr *e, bool neg, sterm *ts, uint32_t *n,
                           unsigned depth);
leir_expr *leir__alg_chain(leir__alg *a, leir_expr *x, bool neg, leir_expr *y);

static inline _Noreturn void fail(leir__alg *a, int code) {
  a->err = code;
  longjmp(a->jb, code);
}

static inline void *aalloc(leir__alg *a, size_t size) {
  void *m = leir__arena_alloc(&a->arena, size);
  if (!m) fail(a, LEIR__ALG_NOMEM);
  return m;
}

static inline leir_expr *chk(leir__alg *a, leir_expr *e) {
  if (!e) fail(a, LEIR__ALG_NOMEM);
  return e;
}

#endif
