/**
 * @file
 * libleir — the analytic cost model with a stated thread count
 * (experimental: no ABI or API promise: any release may change or remove
 * it; define LEIR_EXPERIMENTAL before including this header, see
 * leir/experimental/experimental.h).
 *
 * leir_program_cost_get (leir/run.h) reports the model's prediction for
 * this host with all of its online CPUs; a search that runs the cpu backend
 * with another thread count, or a benchmark that compares the model with
 * measured times, asks here. docs/cost.md describes the model.
 */
#ifndef LEIR_EXPERIMENTAL_COST_H
#define LEIR_EXPERIMENTAL_COST_H

#include <stdint.h>

#include "leir/experimental/experimental.h"
#include "leir/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Predicts the time of one run of `program` on the cpu backend with
 * `threads` OpenMP threads (0: the host's online CPUs, as
 * leir_program_cost_get), on this host's cache sizes: *seconds. The
 * program needs a signature (set or inferred). Errors: LEIR_ERR_ARGUMENT
 * (NULL), LEIR_ERR_SIGNATURE, LEIR_ERR_INVALID, LEIR_ERR_LIMIT. */
LEIR_API leir_status leir_program_cost_predict(const leir_program *program, uint32_t threads,
                                               double *seconds);

#ifdef __cplusplus
}
#endif

#endif
