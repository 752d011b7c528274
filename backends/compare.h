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

/* Judgement of a reassociating candidate against a higher-precision truth
 * (docs/verification.md, "Reassociating candidates"): element i is inside
 * when |cand_i - truth_i| <= factor * max(|orig_i - truth_i|, rms_o)
 * + 2 ulp(truth_i) + nred * u * max|truth| (the last term only when the
 * truth is the original itself, truth_is_orig), rms_o being the
 * root-mean-square error of the original over the block. Where the truth
 * or the original is not finite, the candidate must match the original
 * (NaN where NaN, the same infinity). With rtol >= 0 an element is also
 * inside when the candidate is within the per-element tolerance of the
 * original (|c - o| <= atol + rtol * |o|): class `any` on a backend that
 * contracts, where either rule passing means the rounding is legitimate. */
typedef struct leir__truth_block {
  uint64_t outside, first_outside; /* UINT64_MAX if none */
  double err_orig, err_cand;       /* max |x - truth| over finite elements */
} leir__truth_block;

void leir__compare_truth(leir__truth_block *tb, const double *truth, const void *orig,
                         const void *cand, leir_dtype dt, uint64_t elements, double factor,
                         double nred, bool truth_is_orig, double rtol, double atol);

/* Finite (not NaN, not inf) elements of a buffer; integers and bool count
 * as finite. */
uint64_t leir__count_finite(const void *buf, leir_dtype dt, uint64_t elements);

/* One unit in the last place of |x| in dtype dt (the spacing of dt's values
 * at x; the smallest subnormal's at 0). */
double leir__ulp_in(leir_dtype dt, double x);

#endif
