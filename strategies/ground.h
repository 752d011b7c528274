/*
 * Grounding without the verifier (strategies/ground.c). The gated pass of
 * the split strategies (docs/strategies.md, "Gated grounding") matches a
 * step only when its result and the answer verify against `before`; the
 * strategies cannot verify (the backends are a part beside them,
 * docs/architecture.md), so the caller supplies the verification:
 * ground/gate.c, a part above both, does for the public leir_ground.
 */
#ifndef LEIR_STRATEGIES_GROUND_H
#define LEIR_STRATEGIES_GROUND_H

#include <stdbool.h>

#include "leir/strategy.h"

typedef struct leir__ground_verifier {
  /* Does `p` verify EQUAL or CLOSE against `before` (the same `before` on
   * every call of one grounding)? false when it does not or cannot be
   * verified; never an error. Called at most 4 times per grounding. */
  bool (*passes)(void *ud, const leir_program *before, const leir_program *p);
  void *ud;
} leir__ground_verifier;

/* leir_ground (include/leir/strategy.h) with the gated pass's verification
 * done by `verifier`. */
leir_status leir__ground(leir_candidates **out, const leir_program *before,
                         const leir_program *after, const leir_candidates_options *opts,
                         const leir__ground_verifier *verifier);

#endif
