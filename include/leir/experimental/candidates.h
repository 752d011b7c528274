/**
 * @file
 * libleir — which candidates rest on an assumption
 * (experimental: no ABI or API promise: any release may change or remove
 * it; define LEIR_EXPERIMENTAL before including this header, see
 * leir/experimental/experimental.h).
 *
 * With LEIR_CANDIDATES_GENERIC_VALUES (leir/strategy.h) the split
 * strategies also list splits whose numerical condition is assumed (values
 * finite, non-zero where divided), not proven; leir_ground lists them too.
 * leir_candidates_assumed tells such a candidate from a proven one.
 */
#ifndef LEIR_EXPERIMENTAL_CANDIDATES_H
#define LEIR_EXPERIMENTAL_CANDIDATES_H

#include <stddef.h>

#include "leir/experimental/experimental.h"
#include "leir/strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

/** *assumed = 1 when candidate i of `candidates` (a list of
 * leir_candidates_list or leir_ground) is a candidate only under
 * LEIR_CANDIDATES_GENERIC_VALUES: its numerical condition is assumed, not
 * proven, and leir_step_apply of the step's text (parsed, so validated
 * without the flag) refuses it; 0 when it is also a candidate without the
 * flag, or the list was made without it. Costs one enumeration of the candidate's strategy.
 * Errors: LEIR_ERR_ARGUMENT (NULL, i out of range), LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_candidates_assumed(const leir_candidates *candidates, size_t i,
                                             int *assumed);

/** The domain of leir_ground's verification-gated pass (the split strategies
 * with the refusals of the generic mode lifted, compound and constant
 * subscript shifts; docs/strategies.md, "Gated grounding"). A step that
 * pass grounded carries this bit in its listing domain, and so in its JSON
 * form's "listing_flags" (leir_step_to_json): leir_step_apply of the step,
 * of its clone or of that JSON replays it, LEIR_REASSOCIATING, to the
 * program leir_candidates_apply gives; leir_step_apply_listed with the bit
 * in `listing->flags` replays its text. Such a step was kept only because
 * its result verified: a replay applies it without a proof, so verify the
 * result as the gated pass did. leir_candidates_list and leir_ground ignore
 * the bit in their options: no candidate list ever has such a step. The
 * step's text alone keeps the reference domain and is refused. */
#define LEIR_CANDIDATES_GATED_SPLITS 0x100u

/** Replays a step in the domain of a listing: as leir_step_apply, but the
 * step is validated among the candidates that leir_candidates_list with
 * `listing` gives (its LEIR_CANDIDATES_* flags and vector_width; strategy
 * and max_candidates are ignored), so a trace kept as step texts plus the
 * options it was listed with replays every step, also those outside the
 * reference domain (LEIR_CANDIDATES_ALL_DIVISORS and the other flags). The
 * result has the alpha hash (leir_program_hash_alpha) that
 * leir_candidates_apply of the same candidate gives. `listing` NULL: the
 * domain the step carries (see leir_step_apply). `exactness` may be NULL.
 * Caller frees *out. Errors: as leir_step_apply. */
LEIR_API leir_status leir_step_apply_listed(leir_program **out, const leir_program *program,
                                            const leir_step *step,
                                            const leir_candidates_options *listing,
                                            leir_exactness *exactness);

#ifdef __cplusplus
}
#endif

#endif
