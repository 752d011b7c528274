/*
 * What the analysis's files share (analyze.c: pass 1, the driver and
 * signature inference; analyze_buffers.c: pass 2; analyze_bounds.c: passes
 * 3 and 4): the analysis context, the equation walk, the findings, and the
 * passes each file gives the driver.
 */
#ifndef LEIR_ANALYZE_INTERNAL_H
#define LEIR_ANALYZE_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "error.h"
#include "options.h"
#include "vec.h"
#include "visit.h"
#include "visit.h"

typedef struct ctx {
  leir__analysis *a;
  const leir_program *p;
  const leir__decl *sig;
  uint32_t nsig;
  leir_check_options o;
  leir_diagnostics *diags;
  bool infer;
  uint32_t nfindings;
  leir_status first;
  uint32_t nsyms;
  uint32_t *decl_of;       /* by symbol */
  uint32_t *latest;        /* by symbol: newest buffer */
  bool *written_anywhere;  /* by symbol (infer mode) */
  uint32_t cap_buffers;
  uint32_t *prev;          /* by buffer: older buffer of the same symbol */
  int64_t (*written)[LEIR_MAX_RANK]; /* by buffer: 1 + highest written index */
  uint32_t *last_write_top, *last_read_top; /* by buffer */
  bool *value_seen;        /* by buffer: some definition fed a->values */
  uint32_t cap_eqs;
  leir__arena scratch; /* the tables above; released with the context */
  const leir__loop *stack[LEIR__MAX_LOOPS];
} ctx;
/* A walk over one equation: the analysis context and the equation's depth
 * (resolve_vars) or index (bind_reads). */
typedef struct eq_walk {
  ctx *c;
  uint32_t n;
} eq_walk;

/* ---- shared between the analysis files ---- */

/* Pass 2 (analyze_buffers.c): the buffer tables grown to cap, a new buffer
 * for tensor t, and the accesses of equation eqi bound to buffers. */
bool leir__analyze_grow_buffers(ctx *c, uint32_t cap);
uint32_t leir__analyze_new_buffer(ctx *c, const leir_expr *t, leir__buffer_role role);
void leir__analyze_define(ctx *c, uint32_t eqi);
/* Pass 3 (analyze_bounds.c): the accesses of equation eqi in bounds. */
void leir__analyze_bounds(ctx *c, uint32_t eqi);
/* Pass 4 (analyze_bounds.c): the outputs' shapes and the size limits. */
void leir__analyze_outputs(ctx *c);

/* Tables live in arenas (the analysis's or the context's scratch): a few
 * chunk allocations per analysis instead of one malloc per table. Growing
 * copies into a new block and abandons the old one. */
static inline void *grow_copy(leir__arena *ar, void *old, size_t used, size_t size) {
  void *m = leir__arena_alloc(ar, size ? size : 1);
  if (m && used) memcpy(m, old, used);
  return m;
}

#if defined(__GNUC__)
__attribute__((format(printf, 6, 7)))
#endif
static inline void
finding(ctx *c, leir_status status, uint32_t pos, const char *rule, const char *subject,
        const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  uint32_t line, col;
  leir__position(c->p, pos, &line, &col);
  if (c->nfindings++ == 0) {
    c->first = status;
    leir__error_set(status, rule, subject, line, col, msg);
  }
  leir__diag_add(c->diags, rule, subject, line, col, "%s", msg);
}

static inline const char *sym_name(ctx *c, uint32_t sym) { return leir__sym_name(c->p, sym); }

static inline uint64_t sat_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline uint64_t sat_add(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline void nomem(ctx *c) {
  if (c->nfindings++ == 0) {
    c->first = LEIR_ERR_NOMEM;
    leir__error_nomem();
  }
}

#endif
