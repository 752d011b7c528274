/*
 * What the TIR lowering (lower_tir.c: statements, loops, the function)
 * shares with its expression printer (tir_expr.c: names, constants, index
 * expressions, values and conditions): the lowering's state and the small
 * text helpers.
 */
#ifndef LEIR_BACKENDS_TIR_INTERNAL_H
#define LEIR_BACKENDS_TIR_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "analysis.h"
#include "semantics.h"
#include "strbuf.h"

typedef struct tir {
  const leir__analysis *a;
  const leir_program *p;
  uint32_t flags;
  leir__strbuf *out;
  char **bufnames; /* by buffer */
  bool failed;
  /* per top-level nest: thread axes already bound (tx..tz, bx..bz) */
  bool axis_used[6];
  uint32_t parallel_depth;
  uint32_t base;     /* extra indentation: 1 inside the root block */
  bool in_block;     /* LEIR_TIR_BLOCKS: inside a block, loop variables read as v_NAME */
  uint32_t *nblocks; /* by buffer: blocks named after it so far */
  /* the variables of T.Let bindings (chained comparisons), declared at the
   * top of the function body: "    leir_cN = T.float64()\n" */
  leir__strbuf decls;
  uint32_t nlets;
} tir;

static inline void put(tir *T, const char *s) { leir__sb_puts(T->out, s); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline void putf(tir *T, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  leir__sb_vprintf(T->out, fmt, ap);
  va_end(ap);
}

static inline void indent(tir *T, uint32_t depth) {
  for (uint32_t i = 0; i < depth + T->base; i++) put(T, "    ");
}

static inline const char *tvm_dtype(leir_dtype dt) {
  static const char *const names[] = {"float16", "bfloat16", "float32", "float64", "int8",
                                      "int16",   "int32",    "int64",   "uint8",   "bool"};
  return (unsigned)dt < LEIR_DTYPE_COUNT ? names[dt] : "float64";
}

static inline const char *ct_dtype(leir__ctype ct) {
  return ct == LEIR__CT_F32 ? "float32" : ct == LEIR__CT_F64 ? "float64" : "int64";
}

/* Precedences (Python's, which LEIR's arithmetic shares). */
enum { PREC_ATOM = 100, PREC_POW = 60, PREC_UNARY = 50, PREC_MUL = 40, PREC_ADD = 30 };

/* ---- tir_expr.c ---- */

/* Python keywords are renamed with a trailing underscore. */
bool leir__tir_is_keyword(const char *s);
/* A loop variable (v_NAME inside a block). */
void leir__tir_put_loopvar(tir *T, uint32_t sym);
/* A loop variable as named outside any block. */
void leir__tir_put_loopvar_outside(tir *T, uint32_t sym);
/* A float constant of computation type ct. */
void leir__tir_put_float(tir *T, double v, leir__ctype ct);
void leir__tir_put_int64(tir *T, int64_t v);
/* A buffer access X[i, j]. */
void leir__tir_emit_tensor(tir *T, const leir_expr *t);
/* A value in computation type ct; `ctx` is the precedence the context
 * requires. */
void leir__tir_emit_value(tir *T, const leir_expr *e, leir__ctype ct, int ctx);

#endif
