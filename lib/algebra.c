/*
 * Expression algebra (lib/algebra.h, docs/algebra.md): sparse multivariate
 * polynomials with int64 rational coefficients over atoms, rational
 * functions num/den, and the rewrites built on them.
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

#define XXH_INLINE_ALL
#include <xxhash.h>

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

static _Noreturn void fail(leir__alg *a, int code) {
  a->err = code;
  longjmp(a->jb, code);
}

static void *aalloc(leir__alg *a, size_t size) {
  void *m = leir__arena_alloc(&a->arena, size);
  if (!m) fail(a, LEIR__ALG_NOMEM);
  return m;
}

static leir_expr *chk(leir__alg *a, leir_expr *e) {
  if (!e) fail(a, LEIR__ALG_NOMEM);
  return e;
}

/* ---- rationals --------------------------------------------------------- */

static uint64_t ugcd(uint64_t x, uint64_t y) {
  while (y) {
    uint64_t t = x % y;
    x = y;
    y = t;
  }
  return x;
}

static int64_t iabs_ok(int64_t v, bool *ok) {
  if (v == INT64_MIN) {
    *ok = false;
    return 0;
  }
  return v < 0 ? -v : v;
}

/* false on overflow or zero denominator */
static bool rat_make(int64_t n, int64_t d, rat *out) {
  bool ok = true;
  if (d == 0) return false;
  int64_t an = iabs_ok(n, &ok), ad = iabs_ok(d, &ok);
  if (!ok) return false;
  int64_t g = (int64_t)ugcd((uint64_t)an, (uint64_t)ad);
  if (g == 0) g = 1;
  an /= g;
  ad /= g;
  out->n = ((n < 0) != (d < 0)) ? -an : an;
  out->d = ad;
  if (out->n == 0) out->d = 1;
  return true;
}

static bool rat_add(rat x, rat y, rat *out) {
  int64_t g = (int64_t)ugcd((uint64_t)x.d, (uint64_t)y.d);
  int64_t a, b, n, d;
  if (__builtin_mul_overflow(x.n, y.d / g, &a) || __builtin_mul_overflow(y.n, x.d / g, &b) ||
      __builtin_add_overflow(a, b, &n) || __builtin_mul_overflow(x.d, y.d / g, &d))
    return false;
  return rat_make(n, d, out);
}

static bool rat_mul(rat x, rat y, rat *out) {
  bool ok = true;
  int64_t g1 = (int64_t)ugcd((uint64_t)iabs_ok(x.n, &ok), (uint64_t)y.d);
  int64_t g2 = (int64_t)ugcd((uint64_t)iabs_ok(y.n, &ok), (uint64_t)x.d);
  if (!ok) return false;
  if (g1 == 0) g1 = 1;
  if (g2 == 0) g2 = 1;
  int64_t n, d;
  if (__builtin_mul_overflow(x.n / g1, y.n / g2, &n) ||
      __builtin_mul_overflow(x.d / g2, y.d / g1, &d))
    return false;
  return rat_make(n, d, out);
}

static bool rat_inv(rat x, rat *out) { return rat_make(x.d, x.n, out); }

static rat R(leir__alg *a, bool ok, rat v) {
  if (!ok) fail(a, LEIR__ALG_OVERFLOW);
  return v;
}
static rat radd(leir__alg *a, rat x, rat y) {
  rat r;
  return R(a, rat_add(x, y, &r), r);
}
static rat rmul(leir__alg *a, rat x, rat y) {
  rat r;
  return R(a, rat_mul(x, y, &r), r);
}
static rat rneg(leir__alg *a, rat x) {
  if (x.n == INT64_MIN) fail(a, LEIR__ALG_OVERFLOW);
  x.n = -x.n;
  return x;
}
static rat rinv(leir__alg *a, rat x) {
  rat r;
  if (x.n == 0) fail(a, LEIR__ALG_REFUSED);
  return R(a, rat_inv(x, &r), r);
}
static const rat RONE = {1, 1};

/* A decimal lexeme as an exact rational; false when it does not fit. */
static bool rat_of_lexeme(const char *s, uint32_t len, rat *out) {
  int64_t m = 0;
  int scale = 0, ex = 0;
  uint32_t i = 0;
  bool frac = false, any = false;
  for (; i < len; i++) {
    char c = s[i];
    if (c == '.') {
      frac = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    any = true;
    if (__builtin_mul_overflow(m, 10, &m) || __builtin_add_overflow(m, c - '0', &m)) return false;
    if (frac) scale++;
  }
  if (!any) return false;
  if (i < len) {
    if (s[i] != 'e' && s[i] != 'E') return false;
    i++;
    int sign = 1;
    if (i < len && (s[i] == '+' || s[i] == '-')) sign = s[i++] == '-' ? -1 : 1;
    if (i >= len) return false;
    for (; i < len; i++) {
      if (s[i] < '0' || s[i] > '9' || ex > 100) return false;
      ex = ex * 10 + (s[i] - '0');
    }
    ex *= sign;
  }
  int p10 = ex - scale; /* value = m * 10^p10 */
  while (p10 < 0 && m % 10 == 0 && m) {
    m /= 10;
    p10++;
  }
  int64_t num = m, den = 1;
  for (; p10 > 0; p10--)
    if (__builtin_mul_overflow(num, 10, &num)) return false;
  for (; p10 < 0; p10++)
    if (__builtin_mul_overflow(den, 10, &den)) return false;
  return rat_make(num, den, out);
}

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

static void *grow(leir__alg *a, void *old, uint32_t n, uint32_t *cap, size_t elem) {
  if (n < *cap) return old;
  uint32_t nc = *cap ? *cap * 2 : 16;
  void *m = aalloc(a, (size_t)nc * elem);
  if (old) memcpy(m, old, (size_t)n * elem);
  *cap = nc;
  return m;
}

void leir__alg_set_flat(leir__alg *a, bool flat) {
  if (a) a->flat = flat;
}

void leir__alg_assume_positive(leir__alg *a, uint32_t sym) {
  if (!a || setjmp(a->jb)) return;
  a->pos_syms = grow(a, a->pos_syms, a->npos, &a->cap_pos, sizeof *a->pos_syms);
  a->pos_syms[a->npos++] = sym;
}

void leir__alg_assume_range(leir__alg *a, uint32_t sym, double lo, double hi) {
  if (!a || !(lo <= hi) || !isfinite(lo) || !isfinite(hi) || setjmp(a->jb)) return;
  a->ranges = grow(a, a->ranges, a->nrange, &a->cap_range, sizeof *a->ranges);
  a->ranges[a->nrange++] = (struct srange){sym, lo, hi};
}

void leir__alg_set_limits(leir__alg *a, double tiny, double huge) {
  if (!a || !(tiny > 0) || !(huge > tiny) || !isfinite(huge)) return;
  a->tiny = tiny;
  a->huge = huge;
}

static const struct srange *sym_range(const leir__alg *a, uint32_t sym) {
  for (uint32_t i = 0; i < a->nrange; i++)
    if (a->ranges[i].sym == sym) return &a->ranges[i];
  return NULL;
}

static bool sym_positive(const leir__alg *a, uint32_t sym) {
  for (uint32_t i = 0; i < a->npos; i++)
    if (a->pos_syms[i] == sym) return true;
  const struct srange *r = sym_range(a, sym);
  return r && r->lo > 0;
}

/* ---- polynomials ------------------------------------------------------- */

static int32_t deg(const term *t) {
  int32_t d = 0;
  for (uint32_t i = 0; i < t->nf; i++) d += t->f[i].e;
  return d;
}

/* Graded lex: > 0 when x is the larger monomial. Factor lists sorted by
 * atom; a smaller atom id is a "bigger" variable. */
static int mono_cmp(const term *x, const term *y) {
  int32_t dx = deg(x), dy = deg(y);
  if (dx != dy) return dx > dy ? 1 : -1;
  uint32_t i = 0;
  for (; i < x->nf && i < y->nf; i++) {
    if (x->f[i].atom != y->f[i].atom) return x->f[i].atom < y->f[i].atom ? 1 : -1;
    if (x->f[i].e != y->f[i].e) return x->f[i].e > y->f[i].e ? 1 : -1;
  }
  if (i < x->nf) return 1;
  if (i < y->nf) return -1;
  return 0;
}

static int term_qcmp(const void *p, const void *q) { return -mono_cmp(p, q); }

static leir__poly *poly_new(leir__alg *a, uint32_t n) {
  leir__poly *q = aalloc(a, sizeof *q);
  q->n = n;
  q->t = n ? aalloc(a, (size_t)n * sizeof *q->t) : NULL;
  return q;
}

/* Sorts, merges like terms, drops zeros; enforces the term limit. */
static leir__poly *poly_norm(leir__alg *a, leir__poly *q) {
  if (q->n > 1) qsort(q->t, q->n, sizeof *q->t, term_qcmp);
  uint32_t w = 0;
  for (uint32_t i = 0; i < q->n; i++) {
    if (w && mono_cmp(&q->t[w - 1], &q->t[i]) == 0)
      q->t[w - 1].c = radd(a, q->t[w - 1].c, q->t[i].c);
    else
      q->t[w++] = q->t[i];
  }
  uint32_t k = 0;
  for (uint32_t i = 0; i < w; i++)
    if (q->t[i].c.n != 0) q->t[k++] = q->t[i];
  q->n = k;
  if (q->n > a->max_terms) fail(a, LEIR__ALG_LIMIT);
  return q;
}

static leir__poly *poly_const(leir__alg *a, rat c) {
  leir__poly *q = poly_new(a, c.n ? 1 : 0);
  if (c.n) q->t[0] = (term){c, 0, NULL};
  return q;
}

static leir__poly *poly_atom(leir__alg *a, uint32_t atom, int32_t e) {
  leir__poly *q = poly_new(a, 1);
  fpow *f = aalloc(a, sizeof *f);
  f->atom = atom;
  f->e = e;
  q->t[0] = (term){RONE, 1, f};
  return q;
}

static bool poly_is_zero(const leir__poly *q) { return q->n == 0; }
static bool poly_is_const(const leir__poly *q) { return q->n == 0 || (q->n == 1 && q->t[0].nf == 0); }
static rat poly_const_val(const leir__poly *q) { return q->n ? q->t[0].c : (rat){0, 1}; }

static bool poly_eq(const leir__poly *x, const leir__poly *y) {
  if (x->n != y->n) return false;
  for (uint32_t i = 0; i < x->n; i++)
    if (mono_cmp(&x->t[i], &y->t[i]) || x->t[i].c.n != y->t[i].c.n || x->t[i].c.d != y->t[i].c.d)
      return false;
  return true;
}

static leir__poly *poly_add(leir__alg *a, const leir__poly *x, const leir__poly *y, bool sub) {
  leir__poly *q = poly_new(a, x->n + y->n);
  for (uint32_t i = 0; i < x->n; i++) q->t[i] = x->t[i];
  for (uint32_t i = 0; i < y->n; i++) {
    q->t[x->n + i] = y->t[i];
    if (sub) q->t[x->n + i].c = rneg(a, y->t[i].c);
  }
  return poly_norm(a, q);
}

static leir__poly *poly_scale(leir__alg *a, const leir__poly *x, rat c) {
  leir__poly *q = poly_new(a, x->n);
  for (uint32_t i = 0; i < x->n; i++) {
    q->t[i] = x->t[i];
    q->t[i].c = rmul(a, x->t[i].c, c);
  }
  return poly_norm(a, q);
}

/* product of two monomials (factor lists merged, exponents added; an
 * exponent that reaches 0 disappears) */
static term term_mul(leir__alg *a, const term *x, const term *y) {
  term r = {rmul(a, x->c, y->c), 0, NULL};
  r.f = aalloc(a, (size_t)(x->nf + y->nf + 1) * sizeof *r.f);
  uint32_t i = 0, j = 0;
  while (i < x->nf || j < y->nf) {
    fpow f;
    if (j >= y->nf || (i < x->nf && x->f[i].atom < y->f[j].atom))
      f = x->f[i++];
    else if (i >= x->nf || y->f[j].atom < x->f[i].atom)
      f = y->f[j++];
    else {
      f = x->f[i++];
      f.e += y->f[j++].e;
    }
    if (f.e > MAX_EXP || f.e < -MAX_EXP) fail(a, LEIR__ALG_LIMIT);
    if (f.e) r.f[r.nf++] = f;
  }
  return r;
}

static leir__poly *poly_mul(leir__alg *a, const leir__poly *x, const leir__poly *y) {
  if ((uint64_t)x->n * y->n > (uint64_t)a->max_terms * 8) fail(a, LEIR__ALG_LIMIT);
  leir__poly *q = poly_new(a, x->n * y->n);
  uint32_t k = 0;
  for (uint32_t i = 0; i < x->n; i++)
    for (uint32_t j = 0; j < y->n; j++) q->t[k++] = term_mul(a, &x->t[i], &y->t[j]);
  return poly_norm(a, q);
}

/* does monomial y divide monomial x (all exponents of y <= those of x)? */
static bool term_divides(const term *y, const term *x) {
  uint32_t i = 0;
  for (uint32_t j = 0; j < y->nf; j++) {
    while (i < x->nf && x->f[i].atom < y->f[j].atom) i++;
    if (i >= x->nf || x->f[i].atom != y->f[j].atom || x->f[i].e < y->f[j].e) return false;
  }
  return true;
}

static term term_div(leir__alg *a, const term *x, const term *y) {
  term inv = {rinv(a, y->c), y->nf, aalloc(a, (y->nf + 1) * sizeof(fpow))};
  for (uint32_t i = 0; i < y->nf; i++) inv.f[i] = (fpow){y->f[i].atom, -y->f[i].e};
  return term_mul(a, x, &inv);
}

/* Exact division x / y; NULL when y does not divide x. */
static leir__poly *poly_div_exact(leir__alg *a, const leir__poly *x, const leir__poly *y) {
  if (poly_is_zero(y)) return NULL;
  leir__poly *rem = poly_add(a, x, poly_const(a, (rat){0, 1}), false);
  leir__poly *quo = poly_new(a, 0);
  uint32_t guard = 0;
  while (!poly_is_zero(rem)) {
    if (!term_divides(&y->t[0], &rem->t[0]) || ++guard > a->max_terms) return NULL;
    leir__poly *m = poly_new(a, 1);
    m->t[0] = term_div(a, &rem->t[0], &y->t[0]);
    quo = poly_add(a, quo, m, false);
    rem = poly_add(a, rem, poly_mul(a, m, y), true);
  }
  return quo;
}

static leir__poly *poly_pow(leir__alg *a, const leir__poly *x, int64_t n) {
  leir__poly *r = poly_const(a, RONE);
  for (int64_t i = 0; i < n; i++) r = poly_mul(a, r, x);
  return r;
}

uint32_t leir__alg_poly_terms(const leir__poly *q) { return q ? q->n : 0; }

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
  a->atoms = grow(a, a->atoms, a->natoms, &cap, sizeof *a->atoms);
  uint32_t cap2 = a->cap_atoms;
  a->keys = grow(a, a->keys, a->natoms, &cap2, sizeof *a->keys);
  a->cap_atoms = cap;
  char *key = leir__arena_strndup(&a->arena, b.data, b.len - 1);
  leir__sb_release(&b);
  if (!key) fail(a, LEIR__ALG_NOMEM);
  a->atoms[a->natoms] = e;
  a->keys[a->natoms] = key;
  return a->natoms++;
}

static const leir_expr *strip(const leir_expr *e) {
  while (e && e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e;
}

static bool contains_inf(const leir_expr *e, unsigned depth) {
  if (!e || depth > MAX_DEPTH) return depth > MAX_DEPTH;
  if (e->kind == LEIR_EXPR_INF) return true;
  if (e->kind == LEIR_EXPR_TENSOR) return false; /* subscripts are indices */
  for (uint32_t i = 0; i < e->n; i++)
    if (contains_inf(e->kids[i], depth + 1)) return true;
  return false;
}

/* integer exponent of a power node, or false */
static bool int_exponent(const leir_expr *e, int64_t *n) {
  e = strip(e);
  bool neg = false;
  while (e && e->kind == LEIR_EXPR_NEG) {
    neg = !neg;
    e = strip(e->kids[0]);
  }
  if (!e || e->kind != LEIR_EXPR_NUMBER) return false;
  rat r;
  if (!rat_of_lexeme(e->u.num->lexeme, e->u.num->len, &r) || r.d != 1 || r.n > MAX_POW) return false;
  *n = neg ? -r.n : r.n;
  return true;
}

static leir_expr *rf_build(leir__alg *a, const leir__rf *rf);
static leir__rf conv(leir__alg *a, const leir_expr *e);

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
      leir__rf r = conv(a, k);
      c->kids[i] = rf_build(a, &r);
    }
  }
  return c;
}

static leir__rf rf_of(leir__poly *n, leir__poly *d) { return (leir__rf){n, d}; }

static leir__rf rf_atom(leir__alg *a, const leir_expr *e) {
  uint32_t id = atom_id(a, canon_atom(a, e));
  return rf_of(poly_atom(a, id, 1), poly_const(a, RONE));
}

static leir__rf rf_add(leir__alg *a, leir__rf x, leir__rf y, bool sub) {
  if (poly_eq(x.den, y.den)) return rf_of(poly_add(a, x.num, y.num, sub), x.den);
  return rf_of(poly_add(a, poly_mul(a, x.num, y.den), poly_mul(a, y.num, x.den), sub),
               poly_mul(a, x.den, y.den));
}

static leir__rf rf_mul(leir__alg *a, leir__rf x, leir__rf y) {
  return rf_of(poly_mul(a, x.num, y.num), poly_mul(a, x.den, y.den));
}

static leir__rf rf_div(leir__alg *a, leir__rf x, leir__rf y) {
  if (poly_is_zero(y.num)) fail(a, LEIR__ALG_REFUSED);
  return rf_of(poly_mul(a, x.num, y.den), poly_mul(a, x.den, y.num));
}

static leir__rf conv(leir__alg *a, const leir_expr *e) {
  if (++a->depth > MAX_DEPTH) fail(a, LEIR__ALG_LIMIT);
  leir__rf r;
  switch (e->kind) {
  case LEIR_EXPR_NUMBER: {
    rat v;
    if (rat_of_lexeme(e->u.num->lexeme, e->u.num->len, &v))
      r = rf_of(poly_const(a, v), poly_const(a, RONE));
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
    r = conv(a, e->kids[0]);
    break;
  case LEIR_EXPR_NEG:
    r = conv(a, e->kids[0]);
    r.num = poly_scale(a, r.num, (rat){-1, 1});
    break;
  case LEIR_EXPR_BINARY:
    switch (e->op) {
    case LEIR_OP_ADD:
    case LEIR_OP_SUB:
      r = rf_add(a, conv(a, e->kids[0]), conv(a, e->kids[1]), e->op == LEIR_OP_SUB);
      break;
    case LEIR_OP_MUL:
      r = rf_mul(a, conv(a, e->kids[0]), conv(a, e->kids[1]));
      break;
    case LEIR_OP_DIV:
      r = rf_div(a, conv(a, e->kids[0]), conv(a, e->kids[1]));
      break;
    case LEIR_OP_POW: {
      int64_t n;
      if (int_exponent(e->kids[1], &n)) {
        leir__rf b = conv(a, e->kids[0]);
        if (n < 0) {
          if (poly_is_zero(b.num)) fail(a, LEIR__ALG_REFUSED);
          b = rf_of(b.den, b.num);
          n = -n;
        }
        r = rf_of(poly_pow(a, b.num, n), poly_pow(a, b.den, n));
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
  leir__poly *r = poly_new(a, q->n);
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
  if (r->n > 1) qsort(r->t, r->n, sizeof *r->t, term_qcmp);
  return r;
}

static leir_expr *mk_bin(leir__alg *a, leir_op op, leir_expr *x, leir_expr *y) {
  return chk(a, leir__new_binary(a->p, op, x, y));
}

static leir_expr *mk_int(leir__alg *a, int64_t v) { return chk(a, leir__new_int(a->p, v)); }

static leir_expr *atom_expr(leir__alg *a, uint32_t id) {
  return chk(a, leir__copy_expr(a->p, a->p, a->atoms[id]));
}

/* n/d (n >= 0, reduced) as an exact decimal literal when d divides a
 * power of ten (d = 2^i 5^j: 0.5, 1.6732631921768188, 0.0000125); false
 * otherwise or when it does not fit in int64 digits */
static bool decimal_of(int64_t n, int64_t d, char *buf, size_t cap) {
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
  bool decimal = t->c.d != 1 && decimal_of(n, t->c.d, dec, sizeof dec);
  if (decimal) e = chk(a, leir__new_number(a->p, dec, strlen(dec)));
  else if (n != 1 || t->nf == 0) e = mk_int(a, n);
  for (uint32_t i = 0; i < t->nf; i++) {
    leir_expr *f = atom_expr(a, order ? order[t->f[i].atom] : t->f[i].atom);
    if (t->f[i].e > 1) f = mk_bin(a, LEIR_OP_POW, f, mk_int(a, t->f[i].e));
    if (!e && neg) {
      f = chk(a, leir__new_unary(a->p, LEIR_EXPR_NEG, f));
      neg = false;
    }
    e = e ? mk_bin(a, LEIR_OP_MUL, e, f) : f;
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
  if (t->c.d != 1 && !decimal) e = mk_bin(a, LEIR_OP_DIV, e, mk_int(a, t->c.d));
  return e;
}

/* canonical sum of the terms of q (q already in rank form when order) */
static leir_expr *sum_expr(leir__alg *a, const leir__poly *q, const uint32_t *order) {
  if (q->n == 0) return mk_int(a, 0);
  leir_expr *e = NULL;
  for (uint32_t i = 0; i < q->n; i++) {
    bool neg = q->t[i].c.n < 0;
    leir_expr *t = term_expr(a, &q->t[i], order, neg && !e);
    if (!e)
      e = t;
    else
      e = mk_bin(a, neg ? LEIR_OP_SUB : LEIR_OP_ADD, e, t);
  }
  return e;
}

static leir_expr *poly_build(leir__alg *a, const leir__poly *q) {
  uint32_t *rank = atom_ranks(a);
  uint32_t *order = aalloc(a, (a->natoms + 1) * sizeof *order);
  for (uint32_t i = 0; i < a->natoms; i++) order[rank[i]] = i;
  return sum_expr(a, by_rank(a, q, rank), order);
}

/* leading coefficient in the canonical (rank) order */
static rat lead_coef(leir__alg *a, const leir__poly *q) {
  return by_rank(a, q, atom_ranks(a))->t[0].c;
}

/* den with leading coefficient 1 (num scaled to match); den constant folds */
static leir__rf rf_monic(leir__alg *a, leir__rf r) {
  if (poly_is_zero(r.num)) return rf_of(r.num, poly_const(a, RONE));
  rat inv = rinv(a, lead_coef(a, r.den));
  return rf_of(poly_scale(a, r.num, inv), poly_scale(a, r.den, inv));
}

static leir_expr *rf_build(leir__alg *a, const leir__rf *rf) {
  leir__rf r = rf_monic(a, *rf);
  leir_expr *n = poly_build(a, r.num);
  if (poly_is_const(r.den)) return n;
  return mk_bin(a, LEIR_OP_DIV, n, poly_build(a, r.den));
}

/* ---- entry points --------------------------------------------------------- */

#define ENTER(a, failval)                                                                      \
  do {                                                                                         \
    if (!(a)) return failval;                                                                  \
    (a)->err = 0;                                                                              \
    (a)->depth = 0;                                                                            \
    if (setjmp((a)->jb)) return failval;                                                       \
  } while (0)

static leir__rf conv_top(leir__alg *a, const leir_expr *e) {
  if (!e || contains_inf(e, 0)) fail(a, LEIR__ALG_REFUSED);
  return conv(a, e);
}

int leir__alg_from_expr(leir__alg *a, const leir_expr *e, leir__rf *out) {
  ENTER(a, a ? a->err : LEIR__ALG_NOMEM);
  *out = conv_top(a, e);
  return 0;
}

leir_expr *leir__alg_rf_expr(leir__alg *a, const leir__rf *rf) {
  ENTER(a, NULL);
  return rf_build(a, rf);
}

int leir__alg_rf_equal(leir__alg *a, const leir__rf *x, const leir__rf *y, bool *equal) {
  ENTER(a, a ? a->err : LEIR__ALG_NOMEM);
  leir__poly *d = poly_add(a, poly_mul(a, x->num, y->den), poly_mul(a, y->num, x->den), true);
  *equal = poly_is_zero(d);
  return 0;
}

leir_expr *leir__alg_expand(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  leir__rf r = conv_top(a, e);
  return rf_build(a, &r);
}

leir_expr *leir__alg_together(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  leir__rf r = conv_top(a, e);
  if (poly_is_const(r.den)) fail(a, LEIR__ALG_NOCHANGE);
  return rf_build(a, &r);
}

/* ---- factoring ----------------------------------------------------------- */

/* the single atom q is a polynomial in, or UINT32_MAX (constant: also max) */
static uint32_t univariate(const leir__poly *q) {
  uint32_t x = UINT32_MAX;
  for (uint32_t i = 0; i < q->n; i++) {
    if (q->t[i].nf > 1) return UINT32_MAX - 1;
    if (q->t[i].nf == 1) {
      if (x != UINT32_MAX && x != q->t[i].f[0].atom) return UINT32_MAX - 1;
      x = q->t[i].f[0].atom;
    }
  }
  return x;
}

/* value of univariate q (in atom x) at rational r, or false on overflow */
static bool uni_eval(const leir__poly *q, rat r, rat *out) {
  rat s = {0, 1};
  for (uint32_t i = 0; i < q->n; i++) {
    rat v = q->t[i].c;
    int32_t e = q->t[i].nf ? q->t[i].f[0].e : 0;
    for (int32_t k = 0; k < e; k++)
      if (!rat_mul(v, r, &v)) return false;
    if (!rat_add(s, v, &s)) return false;
  }
  *out = s;
  return true;
}

/* x - r as a polynomial */
static leir__poly *linear(leir__alg *a, uint32_t x, rat r) {
  return poly_add(a, poly_atom(a, x, 1), poly_const(a, r), true);
}

/* Rational roots of univariate q (distinct, at most `max`). Candidates
 * +-p/s with p | a0, s | an after clearing denominators; only for
 * |a0|, |an| <= 10^4, so the search is bounded. */
static uint32_t rational_roots(const leir__poly *q, rat *roots, uint32_t max) {
  uint32_t x = univariate(q);
  if (x >= UINT32_MAX - 1 || q->n < 2) return 0;
  /* integer coefficients: multiply by lcm of denominators */
  int64_t l = 1;
  for (uint32_t i = 0; i < q->n; i++) {
    int64_t g = (int64_t)ugcd((uint64_t)l, (uint64_t)q->t[i].c.d);
    if (__builtin_mul_overflow(l / g, q->t[i].c.d, &l)) return 0;
  }
  int64_t an = 0, a0 = 0;
  int32_t low = q->t[q->n - 1].nf ? q->t[q->n - 1].f[0].e : 0;
  rat lr;
  if (!rat_mul(q->t[0].c, (rat){l, 1}, &lr)) return 0;
  an = lr.n;
  if (!rat_mul(q->t[q->n - 1].c, (rat){l, 1}, &lr)) return 0;
  a0 = lr.n; /* coefficient of the lowest power: roots other than 0 divide it */
  if (an < 0) an = -an;
  if (a0 < 0) a0 = -a0;
  if (an > 10000 || a0 > 10000) return 0; /* bounded search */
  uint32_t k = 0;
  if (low > 0 && k < max) roots[k++] = (rat){0, 1};
  for (int64_t p = 1; p <= a0 && k < max; p++) {
    if (a0 % p) continue;
    for (int64_t s = 1; s <= an && k < max; s++) {
      if (an % s) continue;
      for (int sg = 1; sg >= -1 && k < max; sg -= 2) {
        rat r, v;
        if (!rat_make(sg * p, s, &r) || !uni_eval(q, r, &v) || v.n != 0) continue;
        bool dup = false;
        for (uint32_t j = 0; j < k; j++) dup |= roots[j].n == r.n && roots[j].d == r.d;
        if (!dup) roots[k++] = r;
      }
    }
  }
  return k;
}

typedef struct factor {
  leir__poly *q;
  int32_t e;
} factor;

/* content (rational, sign of the leading term) and primitive part */
static rat content(leir__alg *a, const leir__poly *q) {
  if (q->n == 0) return RONE;
  uint64_t g = 0, l = 1;
  for (uint32_t i = 0; i < q->n; i++) {
    g = ugcd(g, (uint64_t)(q->t[i].c.n < 0 ? -q->t[i].c.n : q->t[i].c.n));
    uint64_t gd = ugcd(l, (uint64_t)q->t[i].c.d);
    if (__builtin_mul_overflow(l / gd, (uint64_t)q->t[i].c.d, &l) || l > INT64_MAX)
      fail(a, LEIR__ALG_OVERFLOW);
  }
  rat c;
  if (!rat_make((int64_t)g, (int64_t)l, &c)) fail(a, LEIR__ALG_OVERFLOW);
  if (lead_coef(a, q).n < 0) c.n = -c.n;
  return c;
}

/* monomial gcd of the terms (min exponent of each atom present in all) */
static term mono_gcd(leir__alg *a, const leir__poly *q) {
  term g = {RONE, 0, NULL};
  if (q->n == 0) return g;
  g.f = aalloc(a, (q->t[0].nf + 1) * sizeof *g.f);
  for (uint32_t k = 0; k < q->t[0].nf; k++) {
    fpow f = q->t[0].f[k];
    if (f.e <= 0) continue;
    bool all = true;
    for (uint32_t i = 1; i < q->n && all; i++) {
      bool found = false;
      for (uint32_t j = 0; j < q->t[i].nf; j++)
        if (q->t[i].f[j].atom == f.atom) {
          found = q->t[i].f[j].e > 0;
          if (q->t[i].f[j].e < f.e) f.e = q->t[i].f[j].e;
        }
      all = found;
    }
    if (all) g.f[g.nf++] = f;
  }
  return g;
}

static leir__poly *poly_of_term(leir__alg *a, term t) {
  leir__poly *q = poly_new(a, 1);
  q->t[0] = t;
  return q;
}

/* q = c * m * prod factors; fills up to `max` factors (univariate rational
 * roots split off as linear factors, with multiplicity). Returns count. */
static uint32_t factor_poly(leir__alg *a, const leir__poly *q, rat *c, term *m, factor *fs,
                            uint32_t max) {
  *c = content(a, q);
  leir__poly *r = poly_scale(a, q, rinv(a, *c));
  *m = mono_gcd(a, r);
  if (m->nf) r = poly_div_exact(a, r, poly_of_term(a, *m));
  uint32_t k = 0;
  rat roots[16];
  uint32_t nr = rational_roots(r, roots, 16);
  uint32_t x = univariate(r);
  for (uint32_t i = 0; i < nr && k + 1 < max; i++) {
    leir__poly *lin = linear(a, x, roots[i]);
    /* integer form s*x - p keeps coefficients integral */
    lin = poly_scale(a, lin, (rat){roots[i].d, 1});
    int32_t e = 0;
    leir__poly *d;
    while ((d = poly_div_exact(a, r, lin)) != NULL && !poly_is_const(r)) {
      r = d;
      e++;
    }
    if (e) fs[k++] = (factor){lin, e};
  }
  if (!poly_is_const(r)) fs[k++] = (factor){r, 1};
  else if (!poly_is_zero(r)) *c = rmul(a, *c, poly_const_val(r));
  return k;
}

static leir_expr *factored_expr(leir__alg *a, const leir__poly *q) {
  rat c;
  term m;
  factor fs[18];
  if (poly_is_zero(q)) return mk_int(a, 0);
  uint32_t k = factor_poly(a, q, &c, &m, fs, 18);
  leir_expr *e = NULL;
  if (m.nf) e = poly_build(a, poly_of_term(a, m));
  for (uint32_t i = 0; i < k; i++) {
    leir_expr *f = poly_build(a, fs[i].q);
    if (fs[i].e > 1) f = mk_bin(a, LEIR_OP_POW, f, mk_int(a, fs[i].e));
    e = e ? mk_bin(a, LEIR_OP_MUL, e, f) : f;
  }
  if (!e) return poly_build(a, poly_const(a, c));
  int64_t n = c.n < 0 ? -c.n : c.n;
  char dec[64];
  if (c.d != 1 && decimal_of(n, c.d, dec, sizeof dec)) {
    /* a decimal content as the workloads write it: 1.0507010221481323*(...) */
    e = mk_bin(a, LEIR_OP_MUL, chk(a, leir__new_number(a->p, dec, strlen(dec))), e);
  } else {
    if (n != 1) e = mk_bin(a, LEIR_OP_MUL, mk_int(a, n), e);
    if (c.d != 1) e = mk_bin(a, LEIR_OP_DIV, e, mk_int(a, c.d));
  }
  if (c.n < 0) e = chk(a, leir__new_unary(a->p, LEIR_EXPR_NEG, e));
  return e;
}

leir_expr *leir__alg_factor(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  leir__rf r = rf_monic(a, conv_top(a, e));
  leir_expr *n = factored_expr(a, r.num);
  if (poly_is_const(r.den)) return n;
  return mk_bin(a, LEIR_OP_DIV, n, factored_expr(a, r.den));
}

/* ---- cancellation ------------------------------------------------------- */

static bool nonzero_expr(leir__alg *a, const leir_expr *e, unsigned depth);

static bool poly_nonzero(leir__alg *a, const leir__poly *q) {
  if (poly_is_const(q)) return !poly_is_zero(q);
  return nonzero_expr(a, poly_build(a, q), 0);
}

leir_expr *leir__alg_cancel(leir__alg *a, const leir_expr *e, bool allow_zero) {
  ENTER(a, NULL);
  leir__rf r = conv_top(a, e);
  bool changed = false;
  if (poly_is_const(r.den)) fail(a, LEIR__ALG_NOCHANGE);
  /* 1. common monomial factor */
  term gn = mono_gcd(a, r.num), gd = mono_gcd(a, r.den);
  term g = {RONE, 0, aalloc(a, (gn.nf + 1) * sizeof(fpow))};
  for (uint32_t i = 0; i < gn.nf; i++)
    for (uint32_t j = 0; j < gd.nf; j++)
      if (gn.f[i].atom == gd.f[j].atom)
        g.f[g.nf++] = (fpow){gn.f[i].atom, gn.f[i].e < gd.f[j].e ? gn.f[i].e : gd.f[j].e};
  if (g.nf) {
    leir__poly *gp = poly_of_term(a, g);
    if (!allow_zero && !poly_nonzero(a, gp)) fail(a, LEIR__ALG_UNPROVEN);
    r.num = poly_div_exact(a, r.num, gp);
    r.den = poly_div_exact(a, r.den, gp);
    changed = true;
  }
  /* 2. one divides the other */
  leir__poly *q;
  if (!poly_is_const(r.den) && (q = poly_div_exact(a, r.num, r.den)) != NULL) {
    if (!allow_zero && !poly_nonzero(a, r.den)) fail(a, LEIR__ALG_UNPROVEN);
    r = rf_of(q, poly_const(a, RONE));
    changed = true;
  } else if (!poly_is_const(r.den) && !poly_is_const(r.num) &&
             (q = poly_div_exact(a, r.den, r.num)) != NULL) {
    if (!allow_zero && !poly_nonzero(a, r.num)) fail(a, LEIR__ALG_UNPROVEN);
    r = rf_of(poly_const(a, RONE), q);
    changed = true;
  } else {
    /* 3. common rational roots of univariate num and den in one atom */
    rat roots[16];
    uint32_t nr = rational_roots(r.den, roots, 16);
    uint32_t x = univariate(r.den);
    for (uint32_t i = 0; i < nr; i++) {
      leir__poly *lin = linear(a, x, roots[i]);
      leir__poly *dn, *dd;
      while ((dn = poly_div_exact(a, r.num, lin)) && (dd = poly_div_exact(a, r.den, lin))) {
        if (!allow_zero && !poly_nonzero(a, lin)) fail(a, LEIR__ALG_UNPROVEN);
        r = rf_of(dn, dd);
        changed = true;
      }
    }
  }
  if (!changed) fail(a, LEIR__ALG_NOCHANGE);
  return rf_build(a, &r);
}

/* ---- partial fractions and collect ---------------------------------------- */

static uint32_t atom_of(leir__alg *a, const leir_expr *x) {
  leir__rf r = conv_top(a, x);
  if (!poly_is_const(r.den) || r.num->n != 1 || r.num->t[0].nf != 1 ||
      r.num->t[0].f[0].e != 1 || r.num->t[0].c.n != 1 || r.num->t[0].c.d != 1)
    fail(a, LEIR__ALG_REFUSED);
  return r.num->t[0].f[0].atom;
}

/* q with atom x replaced by the rational v */
static leir__poly *subst(leir__alg *a, const leir__poly *q, uint32_t x, rat v) {
  leir__poly *r = poly_new(a, q->n);
  for (uint32_t i = 0; i < q->n; i++) {
    term t = q->t[i];
    term u = {t.c, 0, aalloc(a, (t.nf + 1) * sizeof(fpow))};
    for (uint32_t k = 0; k < t.nf; k++) {
      if (t.f[k].atom != x) {
        u.f[u.nf++] = t.f[k];
        continue;
      }
      if (t.f[k].e < 0) fail(a, LEIR__ALG_REFUSED);
      for (int32_t j = 0; j < t.f[k].e; j++) u.c = rmul(a, u.c, v);
    }
    r->t[i] = u;
  }
  return poly_norm(a, r);
}

static leir_expr *apart_in(leir__alg *a, leir__rf r, uint32_t x);

leir_expr *leir__alg_apart(leir__alg *a, const leir_expr *e, const leir_expr *xe) {
  ENTER(a, NULL);
  leir__rf r = conv_top(a, e);
  return apart_in(a, r, atom_of(a, xe));
}

/* Partial fractions in x of a Laurent polynomial q (x's powers in the
 * monomial denominators, which the algebra folds into negative
 * exponents): the terms without a negative power of x, then for each power
 * x**k (k = 1, 2, ...) the fraction c_k/x**k, c_k factored
 * ((Q*F-Q*W)/s -> Q*(F-W)/s). NOCHANGE when that is one fraction. */
static leir_expr *apart_laurent(leir__alg *a, const leir__poly *q, uint32_t x) {
  leir__poly *poly_part = poly_new(a, 0);
  int32_t maxk = 0;
  for (uint32_t i = 0; i < q->n; i++)
    for (uint32_t k = 0; k < q->t[i].nf; k++)
      if (q->t[i].f[k].atom == x && -q->t[i].f[k].e > maxk) maxk = -q->t[i].f[k].e;
  if (maxk <= 0 || maxk > 64) fail(a, LEIR__ALG_NOCHANGE);
  leir__poly **ck = aalloc(a, (size_t)(maxk + 1) * sizeof *ck);
  for (int32_t k = 0; k <= maxk; k++) ck[k] = poly_new(a, 0);
  for (uint32_t i = 0; i < q->n; i++) {
    term t = q->t[i];
    int32_t k = 0;
    term u = {t.c, 0, aalloc(a, (t.nf + 1) * sizeof(fpow))};
    for (uint32_t j = 0; j < t.nf; j++) {
      if (t.f[j].atom == x && t.f[j].e < 0) k = -t.f[j].e;
      else u.f[u.nf++] = t.f[j];
    }
    leir__poly *one = poly_new(a, 1);
    one->t[0] = k ? u : t;
    if (k) ck[k] = poly_add(a, ck[k], one, false);
    else poly_part = poly_add(a, poly_part, one, false);
  }
  uint32_t parts = !poly_is_zero(poly_part);
  for (int32_t k = 1; k <= maxk; k++) parts += !poly_is_zero(ck[k]);
  if (parts < 2) fail(a, LEIR__ALG_NOCHANGE);
  leir_expr *out = poly_is_zero(poly_part) ? NULL : poly_build(a, poly_part);
  for (int32_t k = 1; k <= maxk; k++) {
    if (poly_is_zero(ck[k])) continue;
    bool neg = out && lead_coef(a, ck[k]).n < 0;
    leir__poly *c = neg ? poly_scale(a, ck[k], (rat){-1, 1}) : ck[k];
    leir_expr *frac = mk_bin(a, LEIR_OP_DIV, factored_expr(a, c), poly_build(a, poly_atom(a, x, k)));
    out = out ? mk_bin(a, neg ? LEIR_OP_SUB : LEIR_OP_ADD, out, frac) : frac;
  }
  return out;
}

leir_expr *leir__alg_apart_auto(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  leir__rf r = conv_top(a, e);
  if (r.den->n == 1 && r.den->t[0].nf == 1 && r.den->t[0].f[0].e > 0) {
    /* a denominator c*x**k: num/(c*x**k) as a Laurent polynomial in x */
    uint32_t x = r.den->t[0].f[0].atom;
    int32_t k = r.den->t[0].f[0].e;
    rat inv = rinv(a, r.den->t[0].c);
    leir__poly *q = poly_new(a, r.num->n);
    for (uint32_t i = 0; i < r.num->n; i++) {
      term t = r.num->t[i];
      term u = {rmul(a, t.c, inv), 0, aalloc(a, (t.nf + 1) * sizeof(fpow))};
      bool has = false;
      for (uint32_t j = 0; j < t.nf; j++) {
        fpow f = t.f[j];
        if (f.atom == x) {
          has = true;
          f.e -= k;
          if (f.e == 0) continue;
        }
        u.f[u.nf++] = f;
      }
      if (!has) u.f[u.nf++] = (fpow){x, -k};
      q->t[i] = u;
    }
    return apart_laurent(a, q, x);
  }
  uint32_t x = univariate(r.den);
  if (x >= UINT32_MAX - 1) fail(a, LEIR__ALG_NOCHANGE);
  return apart_in(a, r, x);
}

static leir_expr *apart_in(leir__alg *a, leir__rf r, uint32_t x) {
  if (univariate(r.den) != x) fail(a, LEIR__ALG_NOCHANGE);
  rat roots[16];
  uint32_t nr = rational_roots(r.den, roots, 16);
  int32_t dg = deg(&r.den->t[0]);
  if (nr == 0 || (int32_t)nr != dg) fail(a, LEIR__ALG_NOCHANGE); /* not distinct linear */
  rat lc = r.den->t[0].c;
  leir__poly *rest = r.num;
  uint32_t nfr = 0;
  leir__poly **cs = aalloc(a, nr * sizeof *cs);
  for (uint32_t i = 0; i < nr; i++) {
    /* residue c_i = num(r_i) / (lc * prod_{j != i} (r_i - r_j)) */
    rat dd = lc;
    leir__poly *others = poly_const(a, lc);
    for (uint32_t j = 0; j < nr; j++) {
      if (j == i) continue;
      dd = rmul(a, dd, radd(a, roots[i], rneg(a, roots[j])));
      others = poly_mul(a, others, linear(a, x, roots[j]));
    }
    cs[i] = poly_scale(a, subst(a, r.num, x, roots[i]), rinv(a, dd));
    if (poly_is_zero(cs[i])) continue;
    nfr++;
    rest = poly_add(a, rest, poly_mul(a, cs[i], others), true);
  }
  leir__poly *poly_part = poly_div_exact(a, rest, r.den);
  if (!poly_part) fail(a, LEIR__ALG_REFUSED);
  if (nfr == 1 && nr == 1 && poly_is_zero(poly_part)) fail(a, LEIR__ALG_NOCHANGE); /* c/(x-r) */
  leir_expr *out = poly_is_zero(poly_part) ? NULL : poly_build(a, poly_part);
  for (uint32_t i = 0; i < nr; i++) {
    if (poly_is_zero(cs[i])) continue;
    bool neg = cs[i]->n == 1 && cs[i]->t[0].c.n < 0 && out;
    leir__poly *c = neg ? poly_scale(a, cs[i], (rat){-1, 1}) : cs[i];
    leir_expr *frac = mk_bin(a, LEIR_OP_DIV, poly_build(a, c), poly_build(a, linear(a, x, roots[i])));
    out = out ? mk_bin(a, neg ? LEIR_OP_SUB : LEIR_OP_ADD, out, frac) : frac;
  }
  return out ? out : mk_int(a, 0);
}

leir_expr *leir__alg_collect(leir__alg *a, const leir_expr *e, const leir_expr *xe) {
  ENTER(a, NULL);
  leir__rf r = rf_monic(a, conv_top(a, e));
  uint32_t x = atom_of(a, xe);
  int32_t maxe = 0;
  uint32_t with_x = 0;
  for (uint32_t i = 0; i < r.num->n; i++)
    for (uint32_t k = 0; k < r.num->t[i].nf; k++)
      if (r.num->t[i].f[k].atom == x) {
        with_x++;
        if (r.num->t[i].f[k].e > maxe) maxe = r.num->t[i].f[k].e;
      }
  if (maxe <= 0 || with_x < 2) fail(a, LEIR__ALG_NOCHANGE);
  leir_expr *out = NULL;
  for (int32_t p = maxe; p >= 0; p--) {
    leir__poly *ck = poly_new(a, r.num->n);
    ck->n = 0;
    for (uint32_t i = 0; i < r.num->n; i++) {
      term t = r.num->t[i];
      int32_t ex = 0;
      term u = {t.c, 0, aalloc(a, (t.nf + 1) * sizeof(fpow))};
      for (uint32_t k = 0; k < t.nf; k++) {
        if (t.f[k].atom == x) ex = t.f[k].e;
        else u.f[u.nf++] = t.f[k];
      }
      if (ex == p) ck->t[ck->n++] = u;
    }
    ck = poly_norm(a, ck);
    if (poly_is_zero(ck)) continue;
    bool neg = false;
    leir_expr *coef;
    if (ck->n == 1) {
      neg = ck->t[0].c.n < 0;
      coef = poly_build(a, neg ? poly_scale(a, ck, (rat){-1, 1}) : ck);
    } else {
      coef = poly_build(a, ck);
    }
    leir_expr *t;
    if (p == 0) {
      t = coef;
    } else {
      leir_expr *xp = atom_expr(a, x);
      if (p > 1) xp = mk_bin(a, LEIR_OP_POW, xp, mk_int(a, p));
      t = ck->n == 1 && ck->t[0].nf == 0 && ck->t[0].c.d == 1 &&
                  (ck->t[0].c.n == 1 || ck->t[0].c.n == -1)
              ? xp
              : mk_bin(a, LEIR_OP_MUL, xp, coef);
    }
    if (!out) out = neg ? chk(a, leir__new_unary(a->p, LEIR_EXPR_NEG, t)) : t;
    else out = mk_bin(a, neg ? LEIR_OP_SUB : LEIR_OP_ADD, out, t);
  }
  if (poly_is_const(r.den)) return out;
  return mk_bin(a, LEIR_OP_DIV, out, poly_build(a, r.den));
}

/* ---- domain proofs --------------------------------------------------------- */

static bool is_call(const leir_expr *e, leir_op op) {
  return e && e->kind == LEIR_EXPR_CALL && e->op == op;
}

/* Sign facts of a node, computed bottom-up in one pass (each child once,
 * so the work is linear in the tree): SG_POS (> 0), SG_NN (>= 0), SG_NZ
 * (!= 0). Over the reals, where the expression is defined. */
enum { SG_POS = 1, SG_NN = 2, SG_NZ = 4 };

static unsigned sg_norm(unsigned f) { return f & SG_POS ? SG_POS | SG_NN | SG_NZ : f; }

static unsigned sign_of(leir__alg *a, const leir_expr *e, unsigned depth) {
  e = strip(e);
  if (!e || depth > MAX_DEPTH) return 0;
  switch (e->kind) {
  case LEIR_EXPR_NUMBER: {
    double v = e->u.num->value;
    return sg_norm(v > 0 ? SG_POS : v == 0 ? SG_NN : SG_NZ);
  }
  case LEIR_EXPR_INF: return sg_norm(SG_POS);
  case LEIR_EXPR_VAR: /* loop variables run over 0..extent-1 */
    return sg_norm(sym_positive(a, e->sym) ? SG_POS : SG_NN);
  case LEIR_EXPR_TENSOR: return sym_positive(a, e->sym) ? sg_norm(SG_POS) : 0;
  case LEIR_EXPR_NEG: return sign_of(a, e->kids[0], depth + 1) & SG_NZ;
  case LEIR_EXPR_CALL: {
    if (e->op == LEIR_OP_EXP) return sg_norm(SG_POS);
    if (e->op == LEIR_OP_SQRT || e->op == LEIR_OP_ABS) {
      unsigned k = sign_of(a, e->kids[0], depth + 1);
      bool pos = e->op == LEIR_OP_SQRT ? (k & SG_POS) != 0 : (k & SG_NZ) != 0;
      return sg_norm(pos ? SG_POS : SG_NN);
    }
    if (e->op == LEIR_OP_MAX || e->op == LEIR_OP_MIN) {
      unsigned any = 0, all = SG_POS | SG_NN | SG_NZ;
      for (uint32_t i = 0; i < e->n; i++) {
        unsigned k = sign_of(a, e->kids[i], depth + 1);
        any |= k;
        all &= k;
      }
      if (e->op == LEIR_OP_MIN) return sg_norm(all & (SG_POS | SG_NN));
      return sg_norm(any & SG_POS ? SG_POS : any & SG_NN ? SG_NN : 0);
    }
    return 0;
  }
  case LEIR_EXPR_BINARY: {
    unsigned x = sign_of(a, e->kids[0], depth + 1), y = sign_of(a, e->kids[1], depth + 1);
    unsigned r = 0;
    switch (e->op) {
    case LEIR_OP_ADD:
      if (((x & SG_POS) && (y & SG_NN)) || ((x & SG_NN) && (y & SG_POS))) r = SG_POS;
      else if ((x & SG_NN) && (y & SG_NN)) r = SG_NN;
      return sg_norm(r);
    case LEIR_OP_MUL:
      if ((x & SG_POS) && (y & SG_POS)) return sg_norm(SG_POS);
      if ((x & SG_NN) && (y & SG_NN)) r |= SG_NN;
      if ((x & SG_NZ) && (y & SG_NZ)) r |= SG_NZ;
      if (leir__expr_equal(a->p, strip(e->kids[0]), a->p, strip(e->kids[1])))
        r |= SG_NN | ((x & SG_NZ) ? SG_POS : 0);
      return sg_norm(r);
    case LEIR_OP_DIV: /* the divisor is non-zero wherever the quotient is defined */
      if ((x & SG_POS) && (y & SG_POS)) return sg_norm(SG_POS);
      if ((x & SG_NN) && (y & SG_NN)) r |= SG_NN;
      if (x & SG_NZ) r |= SG_NZ;
      return sg_norm(r);
    case LEIR_OP_POW: {
      int64_t n;
      if (x & SG_POS) return sg_norm(SG_POS);
      if (int_exponent(e->kids[1], &n)) {
        if (n % 2 == 0) r |= SG_NN | ((x & SG_NZ) ? SG_POS : 0);
        if (x & SG_NZ) r |= SG_NZ;
        if (x & SG_NN && n >= 0) r |= SG_NN;
      }
      return sg_norm(r);
    }
    default: return 0;
    }
  }
  default: return 0;
  }
}

static bool positive_expr(leir__alg *a, const leir_expr *e, unsigned depth) {
  return (sign_of(a, e, depth) & SG_POS) != 0;
}
static bool nonneg_expr(leir__alg *a, const leir_expr *e, unsigned depth) {
  return (sign_of(a, e, depth) & SG_NN) != 0;
}
static bool nonzero_expr(leir__alg *a, const leir_expr *e, unsigned depth) {
  return (sign_of(a, e, depth) & SG_NZ) != 0;
}

/* Polynomial test: every term a positive coefficient times atoms that are
 * nonneg (or raised to an even power), and a positive constant term. */
static bool poly_positive(leir__alg *a, const leir_expr *e) {
  leir__rf r = conv_top(a, e);
  if (!poly_is_const(r.den)) return false;
  bool has_const = false;
  for (uint32_t i = 0; i < r.num->n; i++) {
    const term *t = &r.num->t[i];
    if (t->c.n <= 0) return false;
    if (t->nf == 0) has_const = true;
    for (uint32_t k = 0; k < t->nf; k++)
      if (t->f[k].e % 2 != 0 && !nonneg_expr(a, a->atoms[t->f[k].atom], 0)) return false;
  }
  return has_const;
}

bool leir__alg_positive(leir__alg *a, const leir_expr *e) {
  ENTER(a, false);
  if (positive_expr(a, e, 0)) return true;
  return poly_positive(a, e);
}

bool leir__alg_nonneg(leir__alg *a, const leir_expr *e) {
  ENTER(a, false);
  if (nonneg_expr(a, e, 0)) return true;
  return poly_positive(a, e);
}

bool leir__alg_nonzero(leir__alg *a, const leir_expr *e) {
  ENTER(a, false);
  if (nonzero_expr(a, e, 0)) return true;
  return poly_positive(a, e);
}

/* ---- exp / log / sqrt rules ------------------------------------------------- */

static leir_expr *copy(leir__alg *a, const leir_expr *e) {
  return chk(a, leir__copy_expr(a->p, a->p, e));
}

static leir_expr *call1(leir__alg *a, leir_op fn, leir_expr *arg) {
  leir_expr *c = chk(a, leir__new_call(a->p, fn, 1));
  c->kids[0] = arg;
  return c;
}

/* factors of a product chain (parentheses looked through) */
static void product_factors(const leir_expr *e, const leir_expr **fs, uint32_t *n, uint32_t max) {
  e = strip(e);
  if (e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_MUL && *n + 2 <= max) {
    product_factors(e->kids[0], fs, n, max);
    product_factors(e->kids[1], fs, n, max);
    return;
  }
  fs[(*n)++] = e;
}

static leir_expr *powsimp_rec(leir__alg *a, const leir_expr *e, bool *changed, unsigned depth);

static leir_expr *combine_product(leir__alg *a, const leir_expr *e, bool *changed, unsigned depth) {
  const leir_expr *fs[64];
  uint32_t n = 0;
  product_factors(e, fs, &n, 64);
  leir_expr *exp_arg = NULL, *sqrt_arg = NULL, *rest = NULL;
  uint32_t nexp = 0, nsqrt = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (is_call(fs[i], LEIR_OP_EXP)) nexp++;
    if (is_call(fs[i], LEIR_OP_SQRT) && nonneg_expr(a, fs[i]->kids[0], 0)) nsqrt++;
  }
  /* equal bases (modulo AC) multiply into one integer power: x*(x*y) ->
   * x**2*y, x**2*x -> x**3 (positive exponents only, numbers are never
   * bases: 2*2 stays a product). Exact over the reals for every x. */
  const leir_expr *base[64];
  int64_t pw[64];
  uint64_t bh[64];
  bool used[64];
  for (uint32_t i = 0; i < n; i++) {
    const leir_expr *f = fs[i];
    int64_t k;
    used[i] = false;
    base[i] = f;
    pw[i] = 1;
    if ((nexp > 1 && is_call(f, LEIR_OP_EXP)) ||
        (nsqrt > 1 && is_call(f, LEIR_OP_SQRT) && nonneg_expr(a, f->kids[0], 0)) ||
        f->kind == LEIR_EXPR_NUMBER) {
      pw[i] = 0; /* combined otherwise, or a number */
      continue;
    }
    if (f->kind == LEIR_EXPR_BINARY && f->op == LEIR_OP_POW && int_exponent(f->kids[1], &k) &&
        k >= 1 && strip(f->kids[0])->kind != LEIR_EXPR_NUMBER) {
      base[i] = strip(f->kids[0]);
      pw[i] = k;
    }
    bh[i] = leir__ac_hash(a->p, base[i]);
  }
  for (uint32_t i = 0; i < n; i++) {
    const leir_expr *f = fs[i];
    if (used[i]) continue;
    if (pw[i] > 0) {
      int64_t total = pw[i];
      uint32_t same = 0;
      for (uint32_t j = i + 1; j < n; j++)
        if (!used[j] && pw[j] > 0 && bh[j] == bh[i]) total += pw[j], same++;
      if (same && total <= MAX_POW) {
        for (uint32_t j = i + 1; j < n; j++)
          if (!used[j] && pw[j] > 0 && bh[j] == bh[i]) used[j] = true;
        *changed = true;
        leir_expr *c = mk_bin(a, LEIR_OP_POW, powsimp_rec(a, base[i], changed, depth + 1),
                              mk_int(a, total));
        rest = rest ? mk_bin(a, LEIR_OP_MUL, rest, c) : c;
        continue;
      }
    }
    if (nexp > 1 && is_call(f, LEIR_OP_EXP)) {
      leir_expr *arg = a->flat ? copy(a, f->kids[0]) : powsimp_rec(a, f->kids[0], changed, depth + 1);
      exp_arg = exp_arg ? mk_bin(a, LEIR_OP_ADD, exp_arg, arg) : arg;
      continue;
    }
    if (nsqrt > 1 && is_call(f, LEIR_OP_SQRT) && nonneg_expr(a, f->kids[0], 0)) {
      leir_expr *arg = a->flat ? copy(a, f->kids[0]) : powsimp_rec(a, f->kids[0], changed, depth + 1);
      sqrt_arg = sqrt_arg ? mk_bin(a, LEIR_OP_MUL, sqrt_arg, arg) : arg;
      continue;
    }
    leir_expr *c = powsimp_rec(a, f, changed, depth + 1);
    rest = rest ? mk_bin(a, LEIR_OP_MUL, rest, c) : c;
  }
  if (exp_arg) {
    *changed = true;
    leir_expr *c = call1(a, LEIR_OP_EXP, exp_arg);
    rest = rest ? mk_bin(a, LEIR_OP_MUL, rest, c) : c;
  }
  if (sqrt_arg) {
    *changed = true;
    leir_expr *c = call1(a, LEIR_OP_SQRT, sqrt_arg);
    rest = rest ? mk_bin(a, LEIR_OP_MUL, rest, c) : c;
  }
  return rest;
}

static leir_expr *powsimp_rec(leir__alg *a, const leir_expr *e, bool *changed, unsigned depth) {
  if (depth > MAX_DEPTH) fail(a, LEIR__ALG_LIMIT);
  const leir_expr *s = strip(e);
  if (s->kind == LEIR_EXPR_BINARY && s->op == LEIR_OP_MUL) return combine_product(a, s, changed, depth);
  if (s->kind == LEIR_EXPR_BINARY && s->op == LEIR_OP_DIV && is_call(strip(s->kids[0]), LEIR_OP_EXP) &&
      is_call(strip(s->kids[1]), LEIR_OP_EXP)) {
    *changed = true;
    const leir_expr *u = strip(s->kids[0])->kids[0], *v = strip(s->kids[1])->kids[0];
    return call1(a, LEIR_OP_EXP,
                 mk_bin(a, LEIR_OP_SUB, a->flat ? copy(a, u) : powsimp_rec(a, u, changed, depth + 1),
                        a->flat ? copy(a, v) : powsimp_rec(a, v, changed, depth + 1)));
  }
  if (e->kind == LEIR_EXPR_TENSOR || e->n == 0 || (a->flat && e->kind == LEIR_EXPR_CALL))
    return copy(a, e);
  leir_expr *c = chk(a, leir__new_expr(a->p, (leir_expr_kind)e->kind, (leir_op)e->op, e->n));
  if (e->kind == LEIR_EXPR_COMPARE)
    for (uint32_t i = 0; i + 1 < e->n; i++) c->u.cmp_ops[i] = e->u.cmp_ops[i];
  for (uint32_t i = 0; i < e->n; i++) c->kids[i] = powsimp_rec(a, e->kids[i], changed, depth + 1);
  return c;
}

leir_expr *leir__alg_powsimp(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  bool changed = false;
  if (!e) fail(a, LEIR__ALG_REFUSED);
  leir_expr *r = powsimp_rec(a, e, &changed, 0);
  if (!changed) fail(a, LEIR__ALG_NOCHANGE);
  return r;
}

static bool nonpos_expr(leir__alg *a, const leir_expr *e) {
  e = strip(e);
  if (e->kind == LEIR_EXPR_NEG) return nonneg_expr(a, e->kids[0], 0);
  if (e->kind == LEIR_EXPR_NUMBER) return e->u.num->value == 0;
  return false;
}

static leir_expr *expand_powsimp_rec(leir__alg *a, const leir_expr *e, bool *changed,
                                     unsigned depth) {
  if (depth > MAX_DEPTH) fail(a, LEIR__ALG_LIMIT);
  const leir_expr *s = strip(e);
  int64_t k;
  if (s->kind == LEIR_EXPR_BINARY && s->op == LEIR_OP_POW && int_exponent(s->kids[1], &k) &&
      k >= 2 && k <= 8 && strip(s->kids[0])->kind != LEIR_EXPR_NUMBER) {
    /* x**k -> x*x*...*x (the inverse of powsimp's x*x -> x**2), multiplied
     * left to right: x*x*x overflows only where x**3 does (|x| > 1 for
     * either), and a product x**k*y regrouped as x*(x*y) by a reader is
     * AC-equal; exact over the reals */
    *changed = true;
    leir_expr *b = expand_powsimp_rec(a, s->kids[0], changed, depth + 1), *r = copy(a, b);
    for (int64_t i = 1; i < k; i++) r = mk_bin(a, LEIR_OP_MUL, r, copy(a, b));
    return r;
  }
  if (is_call(s, LEIR_OP_EXP)) {
    const leir_expr *u = strip(s->kids[0]);
    if (u->kind == LEIR_EXPR_BINARY && (u->op == LEIR_OP_ADD || u->op == LEIR_OP_SUB)) {
      bool sub = u->op == LEIR_OP_SUB;
      const leir_expr *x = u->kids[0], *y = u->kids[1];
      a->saw = true;
      /* parts x and (+-y): all >= 0 or all <= 0, so no factor exceeds the
       * whole (no new overflow) or 1 */
      bool y_nonneg = sub ? nonpos_expr(a, y) : nonneg_expr(a, y, 0);
      bool y_nonpos = sub ? nonneg_expr(a, y, 0) : nonpos_expr(a, y);
      if ((nonneg_expr(a, x, 0) && y_nonneg) || (nonpos_expr(a, x) && y_nonpos)) {
        *changed = true;
        leir_expr *ey = copy(a, y);
        if (sub) ey = chk(a, leir__new_unary(a->p, LEIR_EXPR_NEG, ey));
        return mk_bin(a, LEIR_OP_MUL, call1(a, LEIR_OP_EXP, copy(a, x)), call1(a, LEIR_OP_EXP, ey));
      }
    }
  }
  if (e->kind == LEIR_EXPR_TENSOR || e->n == 0 || (a->flat && e->kind == LEIR_EXPR_CALL))
    return copy(a, e);
  leir_expr *c = chk(a, leir__new_expr(a->p, (leir_expr_kind)e->kind, (leir_op)e->op, e->n));
  if (e->kind == LEIR_EXPR_COMPARE)
    for (uint32_t i = 0; i + 1 < e->n; i++) c->u.cmp_ops[i] = e->u.cmp_ops[i];
  for (uint32_t i = 0; i < e->n; i++) c->kids[i] = expand_powsimp_rec(a, e->kids[i], changed, depth + 1);
  return c;
}

leir_expr *leir__alg_expand_powsimp(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  bool changed = false;
  if (!e) fail(a, LEIR__ALG_REFUSED);
  a->saw = false;
  leir_expr *r = expand_powsimp_rec(a, e, &changed, 0);
  if (!changed) fail(a, a->saw ? LEIR__ALG_UNPROVEN : LEIR__ALG_NOCHANGE);
  return r;
}

static leir_expr *log_split(leir__alg *a, const leir_expr *arg, bool *changed, unsigned depth);

static leir_expr *expand_log_rec(leir__alg *a, const leir_expr *e, bool *changed, unsigned depth) {
  if (depth > MAX_DEPTH) fail(a, LEIR__ALG_LIMIT);
  const leir_expr *s = strip(e);
  if (is_call(s, LEIR_OP_LOG)) return log_split(a, s->kids[0], changed, depth + 1);
  if (e->kind == LEIR_EXPR_TENSOR || e->n == 0 || (a->flat && e->kind == LEIR_EXPR_CALL))
    return copy(a, e);
  leir_expr *c = chk(a, leir__new_expr(a->p, (leir_expr_kind)e->kind, (leir_op)e->op, e->n));
  if (e->kind == LEIR_EXPR_COMPARE)
    for (uint32_t i = 0; i + 1 < e->n; i++) c->u.cmp_ops[i] = e->u.cmp_ops[i];
  for (uint32_t i = 0; i < e->n; i++) c->kids[i] = expand_log_rec(a, e->kids[i], changed, depth + 1);
  return c;
}

/* log(arg), split where the operands are proven positive */
static leir_expr *log_split(leir__alg *a, const leir_expr *arg, bool *changed, unsigned depth) {
  if (depth > MAX_DEPTH) fail(a, LEIR__ALG_LIMIT);
  const leir_expr *s = strip(arg);
  if (s->kind == LEIR_EXPR_BINARY && (s->op == LEIR_OP_MUL || s->op == LEIR_OP_DIV) &&
      positive_expr(a, s->kids[0], 0) && positive_expr(a, s->kids[1], 0)) {
    *changed = true;
    return mk_bin(a, s->op == LEIR_OP_MUL ? LEIR_OP_ADD : LEIR_OP_SUB,
                  log_split(a, s->kids[0], changed, depth + 1),
                  log_split(a, s->kids[1], changed, depth + 1));
  }
  int64_t n;
  if (s->kind == LEIR_EXPR_BINARY && s->op == LEIR_OP_POW && int_exponent(s->kids[1], &n) &&
      n > 0 && positive_expr(a, s->kids[0], 0)) {
    *changed = true;
    return mk_bin(a, LEIR_OP_MUL, mk_int(a, n), log_split(a, s->kids[0], changed, depth + 1));
  }
  return call1(a, LEIR_OP_LOG, a->flat ? copy(a, s) : expand_log_rec(a, s, changed, depth + 1));
}

leir_expr *leir__alg_expand_log(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  bool changed = false;
  if (!e) fail(a, LEIR__ALG_REFUSED);
  leir_expr *r = expand_log_rec(a, e, &changed, 0);
  if (!changed) fail(a, LEIR__ALG_NOCHANGE);
  return r;
}

/* ---- bounds ---------------------------------------------------------------- */

/* An enclosure [lo, hi] of e over the reals where e is defined, from
 * numbers, declared ranges and monotone rules; ends may be infinite (an
 * unknown tensor is [-inf, inf], max(A, 0.5) is [0.5, inf]). Finite ends
 * are widened by a relative 1e-12 at every node, far more than the
 * rounding of one operation, so the enclosure also holds for the computed
 * values of the rules' own arithmetic. */
static void widen(double *lo, double *hi) {
  if (isnan(*lo) || isnan(*hi)) {
    *lo = -INFINITY;
    *hi = INFINITY;
    return;
  }
  if (isfinite(*lo)) *lo -= fabs(*lo) * 1e-12;
  if (isfinite(*hi)) *hi += fabs(*hi) * 1e-12;
}

/* (u-v)/(u+v) (or (v-u)/(u+v), the terms of the sum in either order) with
 * u, v >= 0 proven: |u-v| <= u+v, and rounding is monotone, so the
 * computed quotient lies in [-1, 1] wherever it is defined (tanh written
 * with exponentials, (exp(x)-exp(-x))/(exp(x)+exp(-x))) */
static bool unit_ratio(leir__alg *a, const leir_expr *e, unsigned depth) {
  const leir_expr *n = strip(e->kids[0]), *d = strip(e->kids[1]);
  if (n->kind != LEIR_EXPR_BINARY || n->op != LEIR_OP_SUB || d->kind != LEIR_EXPR_BINARY ||
      d->op != LEIR_OP_ADD)
    return false;
  uint64_t n0 = leir__ac_hash(a->p, n->kids[0]), n1 = leir__ac_hash(a->p, n->kids[1]);
  uint64_t d0 = leir__ac_hash(a->p, d->kids[0]), d1 = leir__ac_hash(a->p, d->kids[1]);
  if (!((n0 == d0 && n1 == d1) || (n0 == d1 && n1 == d0))) return false;
  return nonneg_expr(a, d->kids[0], depth + 1) && nonneg_expr(a, d->kids[1], depth + 1);
}

static void bounds_rec(leir__alg *a, const leir_expr *e, double *lo, double *hi, unsigned depth) {
  e = strip(e);
  *lo = -INFINITY;
  *hi = INFINITY;
  if (!e || depth > MAX_DEPTH) return;
  double x0, x1, y0, y1;
  switch (e->kind) {
  case LEIR_EXPR_NUMBER: *lo = *hi = e->u.num->value; break;
  case LEIR_EXPR_VAR:
  case LEIR_EXPR_TENSOR: {
    const struct srange *r = sym_range(a, e->sym);
    if (r) *lo = r->lo, *hi = r->hi;
    else if (sym_positive(a, e->sym)) *lo = 0;
    break;
  }
  case LEIR_EXPR_NEG:
    bounds_rec(a, e->kids[0], &x0, &x1, depth + 1);
    *lo = -x1;
    *hi = -x0;
    return;
  case LEIR_EXPR_CALL:
    if (e->n == 0) return;
    bounds_rec(a, e->kids[0], &x0, &x1, depth + 1);
    switch (e->op) {
    case LEIR_OP_EXP: *lo = exp(x0), *hi = exp(x1); break;
    case LEIR_OP_LOG:
      if (x0 > 0) *lo = log(x0), *hi = log(x1);
      break;
    case LEIR_OP_SQRT:
      if (x0 >= 0) *lo = sqrt(x0), *hi = sqrt(x1);
      break;
    case LEIR_OP_ABS:
      *lo = x0 > 0 ? x0 : x1 < 0 ? -x1 : 0;
      *hi = fmax(fabs(x0), fabs(x1));
      break;
    case LEIR_OP_MAX:
    case LEIR_OP_MIN:
      for (uint32_t i = 1; i < e->n; i++) {
        bounds_rec(a, e->kids[i], &y0, &y1, depth + 1);
        x0 = e->op == LEIR_OP_MAX ? fmax(x0, y0) : fmin(x0, y0);
        x1 = e->op == LEIR_OP_MAX ? fmax(x1, y1) : fmin(x1, y1);
      }
      *lo = x0, *hi = x1;
      break;
    default: return;
    }
    break;
  case LEIR_EXPR_BINARY: {
    int64_t n;
    if (e->op == LEIR_OP_POW) {
      if (!int_exponent(e->kids[1], &n) || n < 0 || n > MAX_POW) return;
      bounds_rec(a, e->kids[0], &x0, &x1, depth + 1);
      double p0 = pow(x0, (double)n), p1 = pow(x1, (double)n);
      *lo = n % 2 == 0 && x0 < 0 && x1 > 0 ? 0 : fmin(p0, p1);
      *hi = fmax(p0, p1);
      break;
    }
    if (e->op == LEIR_OP_DIV && unit_ratio(a, e, depth)) {
      *lo = -1, *hi = 1;
      return;
    }
    bounds_rec(a, e->kids[0], &x0, &x1, depth + 1);
    bounds_rec(a, e->kids[1], &y0, &y1, depth + 1);
    switch (e->op) {
    case LEIR_OP_ADD: *lo = x0 + y0, *hi = x1 + y1; break;
    case LEIR_OP_SUB: *lo = x0 - y1, *hi = x1 - y0; break;
    case LEIR_OP_DIV:
      if (!(y0 > 0 || y1 < 0)) return; /* the divisor's range holds 0 */
      {
        double t = 1 / y1;
        y1 = 1 / y0;
        y0 = t;
      }
      /* fall through */
    case LEIR_OP_MUL: {
      double p[4] = {x0 * y0, x0 * y1, x1 * y0, x1 * y1};
      *lo = *hi = p[0];
      for (int i = 0; i < 4; i++) {
        if (isnan(p[i])) { /* 0 * inf */
          *lo = -INFINITY;
          *hi = INFINITY;
          return;
        }
        *lo = fmin(*lo, p[i]);
        *hi = fmax(*hi, p[i]);
      }
      break;
    }
    default: return;
    }
    break;
  }
  default: return;
  }
  widen(lo, hi);
}

bool leir__alg_bounds(leir__alg *a, const leir_expr *e, double *lo, double *hi) {
  ENTER(a, false);
  double l, h;
  bounds_rec(a, e, &l, &h, 0);
  if (!isfinite(l) || !isfinite(h)) return false;
  if (lo) *lo = l;
  if (hi) *hi = h;
  return true;
}

/* [lo, hi] (lo > 0) within the limits, with a factor 2 to spare */
static bool in_limits(const leir__alg *a, double lo, double hi) {
  return lo >= 2 * a->tiny && hi <= a->huge / 2;
}

/* ---- logsimp ---------------------------------------------------------------- */

typedef struct sterm {
  const leir_expr *e;
  bool neg;
} sterm;

#define MAX_SUM_TERMS 256u

/* signed terms of a +/- chain (parentheses and negations looked through) */
static void flatten_sum(leir__alg *a, const leir_expr *e, bool neg, sterm *ts, uint32_t *n,
                        unsigned depth) {
  if (depth > MAX_DEPTH) fail(a, LEIR__ALG_LIMIT);
  e = strip(e);
  if (e->kind == LEIR_EXPR_BINARY && (e->op == LEIR_OP_ADD || e->op == LEIR_OP_SUB)) {
    flatten_sum(a, e->kids[0], neg, ts, n, depth + 1);
    flatten_sum(a, e->kids[1], e->op == LEIR_OP_SUB ? !neg : neg, ts, n, depth + 1);
    return;
  }
  if (e->kind == LEIR_EXPR_NEG) {
    flatten_sum(a, e->kids[0], !neg, ts, n, depth + 1);
    return;
  }
  if (*n >= MAX_SUM_TERMS) fail(a, LEIR__ALG_LIMIT);
  ts[(*n)++] = (sterm){e, neg};
}

/* x op y, where x may be NULL (then y, negated for SUB) */
static leir_expr *chain(leir__alg *a, leir_expr *x, bool neg, leir_expr *y) {
  if (x) return mk_bin(a, neg ? LEIR_OP_SUB : LEIR_OP_ADD, x, y);
  return neg ? chk(a, leir__new_unary(a->p, LEIR_EXPR_NEG, y)) : y;
}

leir_expr *leir__alg_logsimp(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  if (!e) fail(a, LEIR__ALG_REFUSED);
  sterm *ts = aalloc(a, MAX_SUM_TERMS * sizeof *ts);
  bool *use = aalloc(a, MAX_SUM_TERMS * sizeof *use);
  uint32_t n = 0, nlog = 0, nuse = 0, npos = 0;
  flatten_sum(a, e, false, ts, &n, 0);
  /* running bounds of the product of the positive terms' arguments and of
   * the negative terms' arguments, each checked after every factor */
  double p0 = 1, p1 = 1, q0 = 1, q1 = 1;
  for (uint32_t i = 0; i < n; i++) {
    use[i] = false;
    if (!is_call(ts[i].e, LEIR_OP_LOG) || ts[i].e->n != 1) continue;
    nlog++;
    double lo, hi;
    bounds_rec(a, ts[i].e->kids[0], &lo, &hi, 0);
    if (!(lo > 0) || !isfinite(hi)) continue;
    double *r0 = ts[i].neg ? &q0 : &p0, *r1 = ts[i].neg ? &q1 : &p1;
    if (!in_limits(a, *r0 * lo, *r1 * hi)) continue;
    *r0 *= lo;
    *r1 *= hi;
    use[i] = true;
    nuse++;
    npos += !ts[i].neg;
  }
  if (nlog < 2) fail(a, LEIR__ALG_NOCHANGE);
  if (nuse < 2) fail(a, LEIR__ALG_UNPROVEN);
  if (npos && nuse > npos && !in_limits(a, p0 / q1, p1 / q0)) {
    /* the quotient leaves the range: combine the positive terms only */
    if (npos < 2) fail(a, LEIR__ALG_UNPROVEN);
    for (uint32_t i = 0; i < n; i++)
      if (use[i] && ts[i].neg) use[i] = false;
    nuse = npos;
  }
  /* the combined argument: positives multiplied, divided by the negatives'
   * product (or, without positives, the negatives' product under a minus) */
  leir_expr *num = NULL, *den = NULL;
  for (uint32_t i = 0; i < n; i++) {
    if (!use[i]) continue;
    leir_expr *arg = copy(a, ts[i].e->kids[0]);
    leir_expr **acc = ts[i].neg && npos ? &den : &num;
    *acc = *acc ? mk_bin(a, LEIR_OP_MUL, *acc, arg) : arg;
  }
  leir_expr *combined = call1(a, LEIR_OP_LOG, den ? mk_bin(a, LEIR_OP_DIV, num, den) : num);
  leir_expr *r = NULL;
  bool placed = false;
  for (uint32_t i = 0; i < n; i++) {
    if (use[i]) {
      if (!placed) r = chain(a, r, npos == 0, combined);
      placed = true;
      continue;
    }
    r = chain(a, r, ts[i].neg, copy(a, ts[i].e));
  }
  return r;
}

/* ---- expand_cancellation ------------------------------------------------------ */

/* Is every term of m a term of q with the same coefficient? */
static bool poly_subsum(const leir__poly *m, const leir__poly *q) {
  for (uint32_t i = 0; i < m->n; i++) {
    bool found = false;
    for (uint32_t j = 0; j < q->n && !found; j++)
      found = mono_cmp(&m->t[i], &q->t[j]) == 0 && m->t[i].c.n == q->t[j].c.n &&
              m->t[i].c.d == q->t[j].c.d;
    if (!found) return false;
  }
  return true;
}

/* The structural form: the terms of the numerator as written that are
 * each a multiple of the denominator come out, the others stay as written
 * over it ((Q*(F-W)+R*s)/s -> R+Q*(F-W)/s); NULL when no single term is a
 * multiple (or the whole numerator is). */
static leir_expr *expand_cancel_terms(leir__alg *a, const leir_expr *num, const leir_expr *den) {
  leir__rf d = conv(a, den);
  if (!poly_is_const(d.den) || poly_is_const(d.num)) return NULL;
  sterm *ts = aalloc(a, MAX_SUM_TERMS * sizeof *ts);
  uint32_t n = 0, out = 0;
  flatten_sum(a, num, false, ts, &n, 0);
  leir__poly *quo = poly_new(a, 0);
  bool *taken = aalloc(a, (n + 1) * sizeof *taken);
  for (uint32_t i = 0; i < n; i++) {
    taken[i] = false;
    leir__rf t = conv(a, ts[i].e);
    leir__poly *q;
    if (!poly_is_const(t.den) || poly_is_zero(t.num) ||
        (q = poly_div_exact(a, poly_scale(a, t.num, rinv(a, poly_const_val(t.den))), d.num)) == NULL)
      continue;
    /* num/den = q * (d.num/d.den): the multiple of the denominator is q*d.den */
    q = poly_scale(a, q, poly_const_val(d.den));
    quo = poly_add(a, quo, ts[i].neg ? poly_scale(a, q, (rat){-1, 1}) : q, false);
    taken[i] = true;
    out++;
  }
  if (!out || out == n || poly_is_zero(quo)) return NULL;
  leir_expr *rest = NULL;
  bool first_neg = false;
  uint32_t kept = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (taken[i]) continue;
    if (!kept++) first_neg = ts[i].neg;
    rest = rest ? mk_bin(a, ts[i].neg ? LEIR_OP_SUB : LEIR_OP_ADD, rest, copy(a, ts[i].e))
                : copy(a, ts[i].e);
  }
  /* -t/den as a subtraction when the rest is a single negative term */
  bool sub = kept == 1 && first_neg;
  if (first_neg && !sub) { /* rebuild with the first term negated */
    rest = NULL;
    bool started = false;
    for (uint32_t i = 0; i < n; i++) {
      if (taken[i]) continue;
      leir_expr *t = copy(a, ts[i].e);
      if (!started) {
        rest = chain(a, NULL, ts[i].neg, t);
        started = true;
      } else {
        rest = chain(a, rest, ts[i].neg, t);
      }
    }
  }
  /* several terms left that share a monomial factor: written with it
   * factored out, the form the numerator had before a cancel combined it
   * ((A*F-C*F+G*s)/s -> G+F*(A-C)/s) */
  if (kept >= 2) {
    leir__rf rr = conv(a, rest);
    term m;
    if (poly_is_const(rr.den) && rr.num->n >= 2 && (m = mono_gcd(a, rr.num)).nf) {
      leir__poly *q = poly_div_exact(a, rr.num, poly_of_term(a, m));
      if (q) {
        q = poly_scale(a, q, rinv(a, poly_const_val(rr.den)));
        bool qneg = lead_coef(a, q).n < 0;
        if (qneg) q = poly_scale(a, q, (rat){-1, 1});
        leir_expr *f = mk_bin(a, LEIR_OP_MUL, poly_build(a, poly_of_term(a, m)), poly_build(a, q));
        return mk_bin(a, qneg ? LEIR_OP_SUB : LEIR_OP_ADD, poly_build(a, quo),
                      mk_bin(a, LEIR_OP_DIV, f, copy(a, den)));
      }
    }
  }
  return mk_bin(a, sub ? LEIR_OP_SUB : LEIR_OP_ADD, poly_build(a, quo),
                mk_bin(a, LEIR_OP_DIV, rest, copy(a, den)));
}

leir_expr *leir__alg_expand_cancel(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  const leir_expr *s = strip(e);
  if (!s || s->kind != LEIR_EXPR_BINARY || s->op != LEIR_OP_DIV) fail(a, LEIR__ALG_NOCHANGE);
  if (contains_inf(e, 0)) fail(a, LEIR__ALG_REFUSED);
  leir_expr *structural = expand_cancel_terms(a, s->kids[0], s->kids[1]);
  if (structural) return structural;
  leir__rf r = conv_top(a, e);
  if (poly_is_const(r.den) || r.num->n < 2) fail(a, LEIR__ALG_NOCHANGE);
  leir__poly *rem = r.num, *quo = poly_new(a, 0);
  const term *lt = &r.den->t[0];
  /* take out multiples m*den that are sub-sums of the numerator, first
   * term first; each step removes at least one term, so this ends */
  for (uint32_t i = 0; i < rem->n;) {
    if (term_divides(lt, &rem->t[i])) {
      leir__poly *m = poly_new(a, 1);
      m->t[0] = term_div(a, &rem->t[i], lt);
      leir__poly *mult = poly_mul(a, m, r.den);
      if (poly_subsum(mult, rem)) {
        rem = poly_add(a, rem, mult, true);
        quo = poly_add(a, quo, m, false);
        i = 0;
        continue;
      }
    }
    i++;
  }
  if (poly_is_zero(quo) || poly_is_zero(rem)) fail(a, LEIR__ALG_NOCHANGE);
  leir__rf f = rf_monic(a, rf_of(rem, r.den));
  bool neg = lead_coef(a, f.num).n < 0;
  if (neg) f.num = poly_scale(a, f.num, (rat){-1, 1});
  return mk_bin(a, neg ? LEIR_OP_SUB : LEIR_OP_ADD, poly_build(a, quo), rf_build(a, &f));
}

/* ---- together, terms as written ------------------------------------------- */

enum { MAX_CHAIN = 64 };

typedef struct chainf {
  const leir_expr *f[MAX_CHAIN];
  bool inv[MAX_CHAIN];
  uint32_t n;
} chainf;

/* factors of a chain of * and / (parentheses looked through), divisors
 * marked */
static void chain_factors(leir__alg *a, const leir_expr *e, bool inv, chainf *c, unsigned depth) {
  if (depth > MAX_DEPTH) fail(a, LEIR__ALG_LIMIT);
  e = strip(e);
  if (e->kind == LEIR_EXPR_BINARY && (e->op == LEIR_OP_MUL || e->op == LEIR_OP_DIV)) {
    chain_factors(a, e->kids[0], inv, c, depth + 1);
    chain_factors(a, e->kids[1], e->op == LEIR_OP_DIV ? !inv : inv, c, depth + 1);
    return;
  }
  if (c->n >= MAX_CHAIN) fail(a, LEIR__ALG_LIMIT);
  c->f[c->n] = e;
  c->inv[c->n++] = inv;
}

leir_expr *leir__alg_together_terms(leir__alg *a, const leir_expr *e) {
  ENTER(a, NULL);
  if (!e || contains_inf(e, 0)) fail(a, LEIR__ALG_REFUSED);
  sterm *ts = aalloc(a, MAX_SUM_TERMS * sizeof *ts);
  uint32_t n = 0;
  flatten_sum(a, e, false, ts, &n, 0);
  if (n < 2) fail(a, LEIR__ALG_NOCHANGE);
  chainf *cs = aalloc(a, n * sizeof *cs);
  /* the distinct non-constant divisors (by AC hash), each with the largest
   * multiplicity it has in one term */
  const leir_expr *dv[MAX_CHAIN];
  uint64_t dh[MAX_CHAIN];
  uint32_t dmax[MAX_CHAIN], nd = 0;
  for (uint32_t i = 0; i < n; i++) {
    cs[i].n = 0;
    chain_factors(a, ts[i].e, false, &cs[i], 0);
    uint32_t cnt[MAX_CHAIN] = {0};
    for (uint32_t k = 0; k < cs[i].n; k++) {
      if (!cs[i].inv[k] || cs[i].f[k]->kind == LEIR_EXPR_NUMBER) continue;
      uint64_t h = leir__ac_hash(a->p, cs[i].f[k]);
      uint32_t j = 0;
      while (j < nd && dh[j] != h) j++;
      if (j == nd) {
        if (nd >= MAX_CHAIN) fail(a, LEIR__ALG_LIMIT);
        dv[nd] = cs[i].f[k], dh[nd] = h, dmax[nd++] = 0;
      }
      if (++cnt[j] > dmax[j]) dmax[j] = cnt[j];
    }
  }
  if (!nd) fail(a, LEIR__ALG_NOCHANGE);
  /* numerator: each term's own factors as written (constant divisors
   * kept), times the divisors it lacks */
  leir_expr *num = NULL;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t cnt[MAX_CHAIN] = {0};
    leir_expr *t = NULL;
    for (uint32_t k = 0; k < cs[i].n; k++) {
      const leir_expr *f = cs[i].f[k];
      if (!cs[i].inv[k]) {
        t = t ? mk_bin(a, LEIR_OP_MUL, t, copy(a, f)) : copy(a, f);
      } else if (f->kind == LEIR_EXPR_NUMBER) {
        t = mk_bin(a, LEIR_OP_DIV, t ? t : mk_int(a, 1), copy(a, f));
      } else {
        uint64_t h = leir__ac_hash(a->p, f);
        for (uint32_t j = 0; j < nd; j++)
          if (dh[j] == h) cnt[j]++;
      }
    }
    /* a term that is the number 1 is replaced by what it is multiplied by */
    if (t && t->kind == LEIR_EXPR_NUMBER && t->u.num->value == 1) t = NULL;
    for (uint32_t j = 0; j < nd; j++)
      for (uint32_t k = cnt[j]; k < dmax[j]; k++)
        t = t ? mk_bin(a, LEIR_OP_MUL, t, copy(a, dv[j])) : copy(a, dv[j]);
    if (!t) t = mk_int(a, 1);
    num = chain(a, num, ts[i].neg, t);
  }
  leir_expr *den = NULL;
  for (uint32_t j = 0; j < nd; j++)
    for (uint32_t k = 0; k < dmax[j]; k++)
      den = den ? mk_bin(a, LEIR_OP_MUL, den, copy(a, dv[j])) : copy(a, dv[j]);
  return mk_bin(a, LEIR_OP_DIV, num, den);
}

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
  if (h->n == h->cap) {
    uint32_t nc = h->cap ? h->cap * 2 : 8;
    uint64_t *m = realloc(h->v, nc * sizeof *m);
    if (!m) {
      h->oom = true;
      return;
    }
    h->v = m;
    h->cap = nc;
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
  e = strip(e);
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
  e = strip(e);
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
    const leir_expr *k = strip(e->kids[i]);
    if (depth < MAX_DEPTH && k->kind == LEIR_EXPR_CALL && k->op == op && k->dtype == e->dtype)
      minmax_args(p, k, op, h, depth + 1);
    else
      hpush(h, ac_rec(p, k, depth + 1));
  }
}

static uint64_t signed_rec(const leir_program *p, const leir_expr *e, bool *neg, unsigned depth) {
  e = strip(e);
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
