/*
 * What the C lowering (lower_c.c) shares with its passes: the lowering's
 * state, the small emission helpers, and the entry points of scalar
 * replacement (scalar_replacement.c) and of the reciprocals of
 * loop-invariant divisors (reciprocals.c). The local-buffer pass has its own
 * header (local_buffers.h): the cost model borrows it.
 */
#ifndef LEIR_BACKENDS_C_LOWER_C_INTERNAL_H
#define LEIR_BACKENDS_C_LOWER_C_INTERNAL_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "c_expr.h"
#include "error.h"
#include "lower_c.h"

typedef struct lower {
  const leir__analysis *a;
  const leir_program *p;
  const leir__c_options *o;
  leir__strbuf *out;
  leir__c_site *sites;
  uint32_t nsites, cap_sites;
  bool failed;
  uint64_t unroll; /* product of the unroll factors of the enclosing U loops */
  leir__env env; /* full loop ranges of the equation being emitted */
  leir__cx x;    /* the shared expression emitter */
  /* scalar replacement: buffers held in local tiles (innermost region last) */
  struct sr_buf *sr;
  uint32_t nsr;
  bool sr_memory; /* element(): address memory even for replaced buffers */
  /* local buffers: by buffer, the plan of an l/s-scope intermediate held in a
   * per-iteration array (NULL: none); `live` while inside its region */
  struct lb_plan *lb;
  uint32_t top; /* the top-level nest being emitted */
  /* ids of the f32 divisions whose divisor's reciprocal is computed before
   * the loop being emitted (rcp_open) */
  uint32_t *rcp;
  uint32_t nrcp, cap_rcp;
} lower;

static inline void put(lower *L, const char *s) { leir__sb_puts(L->out, s); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline void putf(lower *L, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  leir__sb_vprintf(L->out, fmt, ap);
  va_end(ap);
}

static inline void indent(lower *L, int depth) {
  for (int i = 0; i < depth + 1; i++) put(L, "  ");
}

/* Emission ends at the first failure (a failed write, a source over the
 * size limit, an untranslatable expression); the status says which. */
static inline bool stop(lower *L) {
  if (L->failed) leir__cx_fail(&L->x, leir__error_nomem());
  if (leir__cx_status(&L->x) == LEIR_OK && L->out->failed) leir__cx_fail(&L->x, leir__error_nomem());
  if (leir__cx_status(&L->x) == LEIR_OK && L->out->len > L->x.max_bytes)
    leir__cx_fail(&L->x, leir__error(LEIR_ERR_LIMIT, "lower.size", NULL, 0, 0,
                                     "the generated source exceeds %zu bytes", L->x.max_bytes));
  return leir__cx_status(&L->x) != LEIR_OK;
}

static inline void put_i64(leir__strbuf *b, int64_t v) {
  if (v == INT64_MIN)
    leir__sb_puts(b, "(-INT64_C(9223372036854775807)-1)");
  else if (v < 0)
    leir__sb_printf(b, "(-INT64_C(%" PRId64 "))", -v);
  else if (v <= INT32_MAX)
    leir__sb_printf(b, "%" PRId64, v);
  else
    leir__sb_printf(b, "INT64_C(%" PRId64 ")", v);
}

/* ---- scalar replacement (scalar_replacement.c) ---- */

#define SR_MAX_BUFS 8     /* tiles live at once */

typedef struct sr_buf {
  uint32_t buf;
  const leir_expr *rep;                 /* one access, for the load and store */
  const leir__eqinfo *info;             /* an equation of the region (loop ranges) */
  uint32_t nterms;                      /* tile terms of the flat offset */
  uint32_t slot[LEIR__MAX_LOOPS];       /* their loop positions, ascending */
  int64_t coef[LEIR__MAX_LOOPS];        /* their strides in the local array */
  uint64_t elems;
  bool used[LEIR__MAX_LOOPS];           /* loop positions the subscripts use */
} sr_buf;

/* The tensor accesses of e (subscripts included); `sub` marks those inside
 * a subscript. Returns false when there are more than `cap`. */
typedef struct sr_access {
  const leir_expr *t;
  bool sub;
} sr_access;

#define SR_MAX_ACCESSES 256

/* rK[...] of buffer b when its tile is held in a local array (else false). */
bool leir__c_sr_element(lower *L, leir__strbuf *o, uint32_t b);
/* Flat element offset of access t as coefficients by loop position; false
 * when it is not affine (or overflows). */
bool leir__c_sr_flat(const lower *L, const leir_expr *t, int64_t *coef, int64_t *c);
/* The tensor accesses of e (subscripts included); `sub` marks those inside
 * a subscript. Returns false when there are more than `cap`. */
bool leir__c_sr_collect(const leir_expr *e, bool sub, sr_access *acc, uint32_t *n, uint32_t cap);
/* Adds the buffers whose tiles can live in registers over loops k.. of
 * nest n (emitted at `depth`); returns how many it added. */
uint32_t leir__c_sr_plan(lower *L, const leir_nest *n, uint32_t k, uint32_t depth);
/* for (tile loops the subscripts use) STMT over the last `count` tiles. */
void leir__c_sr_copy(lower *L, uint32_t count, const leir_nest *n, uint32_t k, uint32_t depth,
                     bool load);

/* ---- reciprocals of loop-invariant divisors (reciprocals.c) ---- */

/* Before the last loop of nest n (emitted at `depth`): the reciprocals of
 * its equations' invariant f32 divisors, in a block that
 * leir__c_rcp_close ends. Returns how many. */
uint32_t leir__c_rcp_open(lower *L, const leir_nest *n, uint32_t k, uint32_t depth);
void leir__c_rcp_close(lower *L, uint32_t made, uint32_t depth);
/* The dialect's hoisted_reciprocal (c_expr.h). */
bool leir__c_hoisted_reciprocal(leir__cx *x, const leir_expr *division);

/* ---- lower_c.c ---- */

/* The implicit initialization of one equation, from loop `from` inward. */
void leir__c_emit_init(lower *L, const leir__eqinfo *info, uint32_t from);

#endif
