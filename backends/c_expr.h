/*
 * The one C-family expression emitter of the C and CUDA backends: LEIR
 * values, conditions and index expressions as C source, following
 * backends/semantics.h. What differs between the two targets is a small
 * dialect description (leir__cx_dialect): how integer literals, NaN and
 * infinity are spelled, how a loop variable is named, how a trapping helper
 * receives its trap context, how a tensor element is addressed (storage is
 * the backend's business) and how index arithmetic is written.
 *
 * Guarantees (issue 11.1): the emitted text is linear in the expression's
 * size. A comparison chain `a < b < c` binds its middle operands to
 * statement temporaries (`((a < (leir_c0 = b)) && (leir_c0 < c))`) instead
 * of writing them twice, and n-ary max/min become a balanced tree of
 * two-operand calls (left-fold order is kept: leir_fmax/leir_fmin and the
 * integer max/min are associative, with the first of equal operands kept).
 * Emission stops at the first failed buffer write, and at
 * LEIR__MAX_SOURCE_BYTES of generated source (LEIR_ERR_LIMIT, rule
 * "lower.size").
 *
 * Usage: fill a leir__cx, then for every statement call leir__cx_begin,
 * emit its parts with leir__cx_value / leir__cx_element / plain text into
 * leir__cx_out(x), and leir__cx_end, which writes the declarations of the
 * statement's temporaries followed by its text to the final buffer.
 */
#ifndef LEIR_C_EXPR_H
#define LEIR_C_EXPR_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis.h"
#include "semantics.h"
#include "strbuf.h"
#include "visit.h"

/* Generated source beyond this size ends the lowering with LEIR_ERR_LIMIT. */
#define LEIR__MAX_SOURCE_BYTES ((size_t)64 << 20)

typedef struct leir__cx leir__cx;

typedef struct leir__cx_dialect {
  /* An int64 literal. */
  void (*put_i64)(leir__strbuf *b, int64_t v);
  /* NaN, +infinity and -infinity: [0] float, [1] double. */
  const char *nan[2], *inf[2], *neg_inf[2];
  /* The name of loop variable `v`. */
  void (*put_var)(leir__cx *x, const leir_expr *v);
  /* Loop variables are not int64_t: cast them (in index and int64 values). */
  bool cast_var;
  /* Text before the operands of a trapping helper (leir_idiv, leir_imod,
   * leir_ipow), e.g. "rt, ". */
  const char *trap_pre;
  /* Text after them (", 3" for a site number, ", leir_trap"). */
  void (*trap_post)(leir__cx *x, const leir_expr *at);
  /* NAME[offset] of tensor access t, in the buffer's dtype; subscripts go
   * through leir__cx_index. */
  void (*element)(leir__cx *x, const leir_expr *t);
  /* Index expressions: true = plain C arithmetic where the range analysis
   * proves it exact (tensor-free subscripts; anything else is an int64
   * value); false = + - * as written and the trapping helpers for // % **. */
  bool range_index;
  /* May be NULL. True when the backend has computed 1.0 / (double)y of
   * f32 division x / y (`division`) into `double leir_q<id>` (id: the
   * division's node id) before the loop the statement is in: the division
   * is then written (float)((double)x * leir_q<id>), the same float bit
   * for bit (docs/verification.md, "Division by a loop invariant"). */
  bool (*hoisted_reciprocal)(leir__cx *x, const leir_expr *division);
} leir__cx_dialect;

struct leir__cx {
  const leir__cx_dialect *d;
  const leir__analysis *a;
  void *ctx;             /* the backend's state, for the callbacks */
  const leir__env *env;  /* loop ranges of the statement (range_index) */
  leir__strbuf *final;   /* where finished statements go */
  size_t max_bytes;      /* source size limit (leir__cx_init: LEIR__MAX_SOURCE_BYTES) */
  /* private */
  leir__strbuf stmt;     /* the statement being emitted */
  uint32_t ntemps, cap_temps;
  uint8_t *temp_type;    /* leir__ctype of each temporary */
  leir_status st;
};

/* Sets up x (state zeroed). */
void leir__cx_init(leir__cx *x, const leir__cx_dialect *d, const leir__analysis *a, void *ctx,
                   leir__strbuf *final);
void leir__cx_release(leir__cx *x);

/* Starts a statement; its text goes to leir__cx_out(x) until leir__cx_end. */
void leir__cx_begin(leir__cx *x);
leir__strbuf *leir__cx_out(leir__cx *x);
/* Appends "T leir_c0; T leir_c1; " (the temporaries, when any; `wrap`
 * puts the statement in braces then) and the statement to x->final. */
void leir__cx_end(leir__cx *x, bool wrap);

/* The value of e converted to the computation type ct. */
void leir__cx_value(leir__cx *x, const leir_expr *e, leir__ctype ct);
/* An index expression (int64). */
void leir__cx_index(leir__cx *x, const leir_expr *e);
/* A float constant of type ct, bit-exact (hex literal, NaN, infinities). */
void leir__cx_float_const(leir__cx *x, leir__strbuf *b, double v, leir__ctype ct);
/* The element of tensor access t (the dialect's element callback). */
void leir__cx_element(leir__cx *x, const leir_expr *t);


/* LEIR_OK, or the first failure: LEIR_ERR_NOMEM (recorded with
 * leir__error_nomem), LEIR_ERR_LIMIT (source too large, recorded), or
 * whatever a callback stored with leir__cx_fail. */
leir_status leir__cx_status(const leir__cx *x);
void leir__cx_fail(leir__cx *x, leir_status st);

#endif
