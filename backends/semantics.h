/*
 * Evaluation rules every backend shares (spec/leir.md §3.3), written once
 * so that the interpreter, the C lowering and the CUDA lowering agree bit
 * for bit. docs/verification.md states them for users.
 *
 *  - An equation computes in the type of its left-hand dtype
 *    (leir__ctype_of): f16/bf16/f32 in float, f64 in double, integers and
 *    bool in int64. Tensors are read in their own dtype and converted;
 *    loop variables and literals are converted to the computation type.
 *  - Integer arithmetic wraps (two's complement); `/`, `//` and `%` are
 *    floor division/modulo and trap on a zero divisor; `**` with a
 *    negative exponent truncates (0 ** negative traps).
 *  - Float `//` is floor(a/b); `%` has the sign of the divisor.
 *  - float -> integer conversion truncates toward zero, saturates, NaN -> 0.
 *  - max/min fold left to right with leir_fmax/leir_fmin (prelude.h): a NaN
 *    operand yields the other one, ties (-0 vs +0) yield the first.
 *  - exp, log in float: libleir's leir_exp_f32/leir_log_f32 (leir_math.h,
 *    via prelude.h: portable, faithfully rounded, vectorizable); sqrt,
 *    erf, pow and double exp/log: the C library's functions; `**` is
 *    pow/powf for floats.
 *  - Conditions (the first argument of if_then_else): each comparison chain
 *    is evaluated in int64 when every operand is integer-valued
 *    (leir__expr_is_integer), otherwise in double; a bare value is true when
 *    non-zero (NaN is true). Chains, & and | short-circuit left to right.
 *    Parentheses around a condition do not change it, however many
 *    (leir__cond_strip): `if_then_else(((a<2)),1,0)` tests a < 2.
 *  - A condition in value position, which the grammar allows inside a
 *    condition (`(a<2) < 3`, `(a<2) + 1 > 1`), is 1 when true and 0 when
 *    false, converted to the computation type; it is integer-valued.
 *  - Index expressions are evaluated in int64 like integer values.
 *  - Stores round f16/bf16 to nearest even, wrap narrow integers, and store
 *    bool as value != 0.
 */
#ifndef LEIR_SEMANTICS_H
#define LEIR_SEMANTICS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis.h"

typedef enum leir__ctype { LEIR__CT_F32 = 0, LEIR__CT_F64, LEIR__CT_I64 } leir__ctype;

leir__ctype leir__ctype_of(leir_dtype dt);
bool leir__dtype_is_float(leir_dtype dt);

/* Integer-valued expression: integer literals, loop variables, integer and
 * bool tensors, and + - * // % ** unary minus, abs, max, min, if_then_else
 * of integer-valued operands. */
bool leir__expr_is_integer(const leir_expr *e);

/* e without the parentheses around it when, inside them at any depth, is a
 * comparison chain, & or |; otherwise e itself (a parenthesized value keeps
 * its parentheses). Every backend evaluates conditions through it. */
const leir_expr *leir__cond_strip(const leir_expr *e);

/* Computation type of the operands of a comparison chain (or of a bare
 * value used as a condition). */
leir__ctype leir__cond_ctype(const leir_expr *cmp_or_value);

/* Implicit initial value (spec §3.4) for a left-hand dtype, as the value
 * to store: integers get the dtype's minimum/maximum for -inf/+inf. */
double leir__init_value_f64(leir__init_kind kind);
int64_t leir__init_value_i64(leir__init_kind kind, leir_dtype dt);

/* Output sentinel (verification.md §1): a NaN pattern for floats, 0x5E
 * bytes for integers and bool. Writes `count` elements of `dt` at `dst`. */
void leir__fill_sentinel(void *dst, leir_dtype dt, uint64_t count);
/* Whether the element at `src` holds the sentinel pattern. */
bool leir__is_sentinel(const void *src, leir_dtype dt);

/* Element i of a buffer of dtype dt, converted to double (bool 0/1). */
double leir__load_f64(const void *buf, leir_dtype dt, uint64_t i);

#endif
