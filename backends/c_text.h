/*
 * How the C-family backends (backends/c and backends/cuda) spell LEIR types,
 * comparisons and stores in generated source. One definition, so that the
 * CPU and the GPU code store every dtype the same way (the rounding and
 * wrapping helpers come from prelude.h, which both paste into their source).
 */
#ifndef LEIR_C_TEXT_H
#define LEIR_C_TEXT_H

#include "ir.h"
#include "semantics.h"
#include "strbuf.h"

/* Element type of a buffer of dtype dt ("uint16_t" for f16/bf16 bits,
 * "uint8_t" for u8 and bool). */
const char *leir__ctext_elem_type(leir_dtype dt);

/* C type of a computation type: float, double or int64_t. */
const char *leir__ctext_ctype_name(leir__ctype ct);

/* A comparison operator with spaces around it (" < ", ...). */
const char *leir__ctext_cmp_op(leir_op op);

/* Appends " = CONVERT(value);\n": the conversion of a computed value to a
 * left-hand dtype (spec/leir.md §3.3: f16/bf16 rounded to nearest even,
 * narrow integers wrapped, bool 0/1). The element itself is already
 * written by the caller. */
void leir__ctext_store(leir__strbuf *out, leir_dtype dt, const char *value);

#endif
