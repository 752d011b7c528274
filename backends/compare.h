/* Output comparison for verification (backends/compare.c). */
#ifndef LEIR_COMPARE_H
#define LEIR_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "leir/common.h"

/* Figures of one output on one input set. */
typedef struct leir__block {
  uint64_t differing;          /* not bitwise equal (NaN == NaN) */
  uint64_t outside;            /* outside atol + rtol*|expected| */
  uint64_t nonfinite_mismatch; /* differing where a side is NaN or inf */
  uint64_t compared;           /* finite pairs entering the MSE */
  uint64_t first_diff, first_outside; /* UINT64_MAX if none */
  double max_abs, max_rel, max_rel_guarded, sum_sq;
  uint64_t max_ulp;
} leir__block;

/* Default (rtol, atol) of an output dtype (verification.md §2). */
void leir__tolerance_for(leir_dtype dt, double *rtol, double *atol);

void leir__compare_block(leir__block *blk, const void *expected, const void *actual,
                         leir_dtype dt, uint64_t elements, double rtol, double atol);

/* The Step-TP reference pass rule (leir-reference.md §5) on one block. */
bool leir__reference_rule_passes(const leir__block *blk, leir_dtype dt);

#endif
