/*
 * Seeded inputs (verification.md §1).
 *
 * Generator: xoshiro256** whose state is four outputs of splitmix64 started
 * from  seed ^ set*0xD1B54A32D192ED03 ^ (input+1)*0x8CB92BA72F3D8DD7,  so
 * every input buffer of every set has its own stream. Normal variates come
 * from the Marsaglia polar method with a logarithm computed here from IEEE
 * operations only (no libm), so a seed gives the same inputs on every
 * platform. Set s uses distribution s mod 3: standard normal, normal x 10,
 * uniform [-1, 1]; f32/f16/bf16 inputs are the double values rounded to
 * nearest. Integer inputs that index a dimension are uniform over the
 * values valid there (intersected over every use; found by probing the
 * interval analysis of each subscript); other integer inputs are uniform
 * in [-16, 16] ([0, 32] for u8). bool inputs are Bernoulli(0.5). Outputs
 * receive the NaN-pattern sentinel.
 *
 * Input domains (leir_domain, a program file's `domain:`) replace the set's
 * distribution: positive = |x| of it (at least the dtype's smallest normal
 * number), value = that value on every set (no random draw), range and
 * uniform = uniform in [low, high] (integers: low..high-1), normal =
 * mean + std * N(0, 1), the same on every set. An undeclared float input
 * whose every read sits under log, sqrt or the base of a fractional power
 * (directly, or through intermediates that only reach those) is drawn
 * positive.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "error.h"
#include "ir.h"
#include "prelude.h"
#include "semantics.h"

typedef struct rng {
  uint64_t s[4];
  bool has_spare;
  double spare;
} rng;

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t next(rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

static void rng_init(rng *r, uint64_t seed, uint32_t set, uint32_t input) {
  uint64_t x = seed ^ ((uint64_t)set * UINT64_C(0xD1B54A32D192ED03)) ^
               ((uint64_t)(input + 1) * UINT64_C(0x8CB92BA72F3D8DD7));
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
  r->has_spare = false;
}

/* Uniform in [0, 1) with 53 random bits. */
static double uniform01(rng *r) { return (double)(next(r) >> 11) * 0x1.0p-53; }

/* Natural logarithm of x > 0 from IEEE operations only:
 * x = m * 2^e with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh((m-1)/(m+1)). */
static double det_log(double x) {
  int e;
  double m = frexp(x, &e);
  if (m < 0.70710678118654752440) {
    m *= 2.0;
    e--;
  }
  double s = (m - 1.0) / (m + 1.0), s2 = s * s, term = s, sum = 0.0;
  for (int k = 1; k <= 41; k += 2) {
    sum += term / k;
    term *= s2;
  }
  return 2.0 * sum + e * 0.69314718055994530942;
}

static double normal(rng *r) {
  if (r->has_spare) {
    r->has_spare = false;
    return r->spare;
  }
  double u, v, s;
  do {
    u = 2.0 * uniform01(r) - 1.0;
    v = 2.0 * uniform01(r) - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  double f = sqrt(-2.0 * det_log(s) / s);
  r->spare = v * f;
  r->has_spare = true;
  return u * f;
}

/* Uniform integer in [lo, hi]. */
static int64_t uniform_int(rng *r, int64_t lo, int64_t hi) {
  uint64_t span = (uint64_t)hi - (uint64_t)lo + 1u;
  if (span == 0) return (int64_t)next(r); /* the full 64-bit range */
  return (int64_t)((uint64_t)lo + (uint64_t)(((unsigned __int128)next(r) * span) >> 64));
}

static void store_float(void *buf, leir_dtype dt, uint64_t i, double v) {
  switch (dt) {
    case LEIR_F64: ((double *)buf)[i] = v; break;
    case LEIR_F32: ((float *)buf)[i] = (float)v; break;
    case LEIR_F16: ((uint16_t *)buf)[i] = leir_f32_to_f16((float)v); break;
    case LEIR_BF16: ((uint16_t *)buf)[i] = leir_f32_to_bf16((float)v); break;
    default: break;
  }
}

static void store_int(void *buf, leir_dtype dt, uint64_t i, int64_t v) {
  switch (dt) {
    case LEIR_I8: ((int8_t *)buf)[i] = leir_wrap_i8(v); break;
    case LEIR_I16: ((int16_t *)buf)[i] = leir_wrap_i16(v); break;
    case LEIR_I32: ((int32_t *)buf)[i] = leir_wrap_i32(v); break;
    case LEIR_I64: ((int64_t *)buf)[i] = v; break;
    case LEIR_U8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case LEIR_BOOL: ((uint8_t *)buf)[i] = v != 0; break;
    default: break;
  }
}

/* ---- valid ranges of integer inputs used as indices ------------------- */

typedef struct index_use {
  leir__analysis *a;
  uint32_t buffer;  /* the integer input */
  const leir__eqinfo *info;
  bool found;
  int64_t lo, hi;   /* intersection of the valid ranges so far */
} index_use;

static bool contains_read(const leir__analysis *a, const leir_expr *e, uint32_t b) {
  if (e->kind == LEIR_EXPR_TENSOR && e->id < a->nids && a->expr_buffer[e->id] == b) return true;
  for (uint32_t k = 0; k < e->n; k++)
    if (contains_read(a, e->kids[k], b)) return true;
  return false;
}

/* Values v of the input for which subscript `ix` stays in [0, extent). */
static void probe(index_use *u, const leir_expr *ix, int64_t extent) {
  leir__analysis *a = u->a;
  const leir_expr *bare = ix;
  while (bare->kind == LEIR_EXPR_PAREN) bare = bare->kids[0];
  int64_t lo = 0, hi = extent - 1;
  if (!(bare->kind == LEIR_EXPR_TENSOR && a->expr_buffer[bare->id] == u->buffer)) {
    leir__env env;
    leir__env_init(&env, u->info);
    leir__range saved = a->values[u->buffer];
    int64_t first = INT64_MAX, last = INT64_MIN;
    int64_t span = extent < 4096 ? extent : 4096;
    for (int64_t v = -span; v < 2 * span; v++) {
      a->values[u->buffer] = (leir__range){v, v, true};
      leir__range r = leir__index_range(a, ix, &env);
      if (r.known && r.lo >= 0 && r.hi < extent) {
        if (first == INT64_MAX) first = v;
        last = v;
      }
    }
    a->values[u->buffer] = saved;
    if (first == INT64_MAX) return; /* no single value keeps it in range */
    lo = first;
    hi = last;
  }
  if (!u->found) {
    u->found = true;
    u->lo = lo;
    u->hi = hi;
  } else {
    if (lo > u->lo) u->lo = lo;
    if (hi < u->hi) u->hi = hi;
  }
}

static void find_uses(index_use *u, const leir_expr *e) {
  leir__analysis *a = u->a;
  if (e->kind == LEIR_EXPR_TENSOR) {
    uint32_t b = e->id < a->nids ? a->expr_buffer[e->id] : LEIR__NONE;
    for (uint32_t k = 0; k < e->n; k++) {
      if (b != LEIR__NONE && k < a->buffers[b].rank && contains_read(a, e->kids[k], u->buffer))
        probe(u, e->kids[k], a->buffers[b].shape[k]);
      find_uses(u, e->kids[k]);
    }
    return;
  }
  for (uint32_t k = 0; k < e->n; k++) find_uses(u, e->kids[k]);
}

static void int_range(leir__analysis *a, uint32_t b, int64_t *lo, int64_t *hi) {
  index_use u = {a, b, NULL, false, 0, 0};
  for (uint32_t i = 0; i < a->neqs; i++) {
    u.info = &a->eqs[i];
    find_uses(&u, u.info->eq->lhs);
    find_uses(&u, u.info->eq->rhs);
  }
  int64_t dlo = -16, dhi = 16;
  leir_dtype dt = (leir_dtype)a->buffers[b].dtype;
  if (dt == LEIR_U8) dlo = 0, dhi = 32;
  if (u.found && u.lo <= u.hi) {
    /* keep the values representable in the dtype */
    int64_t tlo = leir__init_value_i64(LEIR__INIT_NEG_INF, dt);
    int64_t thi = leir__init_value_i64(LEIR__INIT_POS_INF, dt);
    dlo = u.lo > tlo ? u.lo : tlo;
    dhi = u.hi < thi ? u.hi : thi;
    if (dlo > dhi) dlo = dhi = 0;
  }
  *lo = dlo;
  *hi = dhi;
}

/* ---- positivity inference ----------------------------------------------- */

static bool fractional_literal(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN || e->kind == LEIR_EXPR_NEG) e = e->kids[0];
  if (e->kind != LEIR_EXPR_NUMBER) return false;
  double x = leir_expr_number(e);
  return isfinite(x) && x != floor(x);
}

static bool positive_only(const leir__analysis *a, uint32_t b, uint32_t nknown, int depth);

/* Visits the reads of buffer b in e: false when one is neither under log,
 * sqrt or a fractional power's base (guarded) nor flows into an
 * intermediate that is itself positive-only. */
static bool reads_guarded(const leir__analysis *a, const leir_expr *e, uint32_t b, bool guarded,
                          const leir__eqinfo *q, uint32_t nknown, int depth, bool *any) {
  if (e->kind == LEIR_EXPR_TENSOR) {
    if (e->id < a->nids && a->expr_buffer[e->id] == b) {
      *any = true;
      if (!guarded) {
        uint32_t x = q->lhs_buffer;
        if (x == LEIR__NONE || x < nknown || x == b || !positive_only(a, x, nknown, depth + 1))
          return false;
      }
    }
    return true; /* reads inside subscripts are indices, not values */
  }
  for (uint32_t k = 0; k < e->n; k++) {
    bool g = guarded;
    if (e->kind == LEIR_EXPR_CALL && (e->op == LEIR_OP_LOG || e->op == LEIR_OP_SQRT)) g = true;
    if (e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_POW && k == 0 &&
        fractional_literal(e->kids[1]))
      g = true;
    if (!reads_guarded(a, e->kids[k], b, g, q, nknown, depth, any)) return false;
  }
  return true;
}

static bool positive_only(const leir__analysis *a, uint32_t b, uint32_t nknown, int depth) {
  if (depth > 8) return false;
  bool any = false;
  for (uint32_t i = 0; i < a->neqs; i++) {
    const leir__eqinfo *q = &a->eqs[i];
    if (!reads_guarded(a, q->eq->rhs, b, false, q, nknown, depth, &any)) return false;
  }
  return any;
}

static double smallest_normal(leir_dtype dt) {
  switch (dt) {
    case LEIR_F16: return 0x1p-14;
    case LEIR_F64: return 0x1p-1022;
    default: return 0x1p-126;
  }
}

/* The declared domain of known buffer i (kind DEFAULT when none). */
static void domain_of(const leir__analysis *a, uint32_t i, leir__decl *out) {
  const leir__buffer *buf = &a->buffers[i];
  memset(out, 0, sizeof *out);
  if (buf->decl < a->p->nsig && a->p->sig[buf->decl].sym == buf->sym) *out = a->p->sig[buf->decl];
}

leir_status leir__fill_inputs(leir__analysis *a, uint32_t nknown, uint64_t seed, uint32_t set,
                              void *const *buffers) {
  for (uint32_t i = 0; i < nknown; i++) {
    const leir__buffer *buf = &a->buffers[i];
    leir_dtype dt = (leir_dtype)buf->dtype;
    void *dst = buffers[i];
    if (buf->role == LEIR__BUF_OUTPUT) {
      leir__fill_sentinel(dst, dt, buf->elements);
      continue;
    }
    rng r;
    rng_init(&r, seed, set, i);
    leir__decl d;
    domain_of(a, i, &d);
    leir_domain_kind kind = (leir_domain_kind)d.domain;
    if (kind == LEIR_DOMAIN_VALUE) {
      for (uint64_t e = 0; e < buf->elements; e++) {
        if (leir__dtype_is_float(dt))
          store_float(dst, dt, e, d.dom_a);
        else
          store_int(dst, dt, e, (int64_t)d.dom_a);
      }
    } else if (leir__dtype_is_float(dt)) {
      if (kind == LEIR_DOMAIN_DEFAULT && positive_only(a, i, nknown, 0))
        kind = LEIR_DOMAIN_POSITIVE;
      double tiny = smallest_normal(dt);
      for (uint64_t e = 0; e < buf->elements; e++) {
        double v;
        if (kind == LEIR_DOMAIN_RANGE || kind == LEIR_DOMAIN_UNIFORM) {
          v = d.dom_a + (d.dom_b - d.dom_a) * uniform01(&r);
        } else if (kind == LEIR_DOMAIN_NORMAL) {
          v = d.dom_a + d.dom_b * normal(&r);
        } else {
          switch (set % 3) {
            case 0: v = normal(&r); break;
            case 1: v = normal(&r) * 10.0; break;
            default: v = 2.0 * uniform01(&r) - 1.0; break;
          }
          if (kind == LEIR_DOMAIN_POSITIVE) {
            v = fabs(v);
            if (v < tiny) v = tiny;
          }
        }
        store_float(dst, dt, e, v);
      }
    } else if (kind == LEIR_DOMAIN_RANGE) {
      for (uint64_t e = 0; e < buf->elements; e++)
        store_int(dst, dt, e, uniform_int(&r, (int64_t)d.dom_a, (int64_t)d.dom_b - 1));
    } else if (dt == LEIR_BOOL) {
      for (uint64_t e = 0; e < buf->elements; e++) store_int(dst, dt, e, (int64_t)(next(&r) >> 63));
    } else {
      int64_t lo, hi;
      int_range(a, i, &lo, &hi);
      if (kind == LEIR_DOMAIN_POSITIVE && hi >= 1 && lo < 1) lo = 1;
      for (uint64_t e = 0; e < buf->elements; e++) store_int(dst, dt, e, uniform_int(&r, lo, hi));
    }
  }
  return LEIR_OK;
}

leir_status leir_program_fill_inputs(const leir_program *p, uint64_t seed, uint32_t set,
                                     void *const *buffers, size_t n) {
  if (!p || (!buffers && n))
    return leir__error_arg(NULL, "NULL argument");
  leir__analysis *a = NULL;
  leir_status st = leir__analyze_program(p, NULL, &a);
  if (st != LEIR_OK) return st;
  uint32_t nknown = 0;
  while (nknown < a->nbuffers && a->buffers[nknown].decl != LEIR__NONE) nknown++;
  if (n != nknown) {
    leir__analysis_free(a);
    return leir__error_arg(NULL, "the program's signature has %u variables, got %zu buffers", nknown, n);
  }
  for (size_t i = 0; i < n; i++)
    if (!buffers[i]) {
      leir__analysis_free(a);
      return leir__error_arg(NULL, "buffer %zu is NULL", i);
    }
  st = leir__fill_inputs(a, nknown, seed, set, buffers);
  leir__analysis_free(a);
  return st;
}
