/*
 * Public API: leir_ground (include/leir/strategy.h). The strategies match
 * the candidates (strategies/ground.c, leir__ground); this part, above the
 * strategies and the backends, supplies the verification the split
 * strategies' gated pass asks for: the interpreter, with caps.
 */
#include "ground.h"

#include <stdbool.h>

#include "leir/run.h"

/* Caps of the gated verifications (docs/strategies.md, "Gated grounding"):
 * hostile `leir ground` input must not hang it or exhaust memory. The
 * interpreter's limits are per execution of one program on one input set;
 * a program's run on the LEIR_INPUT_SETS_DEFAULT input sets takes at most
 * GATE_SECONDS. The reference (`before`) runs once per ground call (a
 * verifier), then each verification runs only the program judged. */
#define GATE_SECONDS 5.0
#define GATE_BUFFER_BYTES ((uint64_t)64 << 20)
#define GATE_EVALUATIONS ((uint64_t)1 << 26)

typedef struct gate {
  leir_backend *b;   /* opened on first use */
  leir_verifier *v;  /* `before` run on every input set, on first use */
  bool failed;       /* the backend or the verifier could not be made: nothing passes */
} gate;

static bool gate_passes(void *ud, const leir_program *before, const leir_program *p) {
  gate *g = ud;
  if (g->failed) return false;
  if (!g->v) {
    leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
    bo.flags |= LEIR_BACKEND_NO_CACHE;
    bo.timeout_s = GATE_SECONDS / LEIR_INPUT_SETS_DEFAULT;
    bo.max_buffer_bytes = GATE_BUFFER_BYTES;
    bo.max_evaluations = GATE_EVALUATIONS;
    if (leir_backend_open(&g->b, "interp", &bo) != LEIR_OK ||
        leir_verifier_new(&g->v, g->b, before, NULL) != LEIR_OK) {
      g->failed = true;
      return false;
    }
  }
  leir_verify_report *r = NULL;
  bool ok = leir_verifier_judge(g->v, p, LEIR_VERIFY_CLASS_ANY, &r) == LEIR_OK &&
            leir_verdict_passes(r->verdict);
  leir_verify_report_free(r);
  return ok;
}

leir_status leir_ground(leir_candidates **out, const leir_program *before,
                        const leir_program *after, const leir_candidates_options *opts) {
  gate g = {NULL, NULL, false};
  leir__ground_verifier verifier = {gate_passes, &g};
  leir_status st = leir__ground(out, before, after, opts, &verifier);
  leir_verifier_free(g.v);
  leir_backend_free(g.b);
  return st;
}
