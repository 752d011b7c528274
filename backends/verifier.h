/*
 * The verifier's state (struct leir_verifier) and the helpers its three
 * files share: verify.c opens a verifier (the reference's checks, build
 * and runs) and drives judgements, verify_truth.c computes the f64 truth,
 * verify_judge.c judges one candidate into its report.
 */
#ifndef LEIR_BACKENDS_VERIFIER_H
#define LEIR_BACKENDS_VERIFIER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "backend.h"
#include "error.h"

/* Stages of a verification; a failure of the reference is remembered with
 * the stage where it happened. */
enum { STAGE_NONE = 0, STAGE_STATIC, STAGE_PARALLEL, STAGE_COMPILE, STAGE_RUN };

/* Candidate outputs of all sets are allocated together (one execution for
 * every set) up to this many bytes; above it the candidate runs set by set
 * on one reused set of output buffers. */
#define ALL_SETS_BYTES ((uint64_t)64 << 20)

/* Threads of every execution of a verification (reference, candidates,
 * truth): results never depend on the thread count (only provably
 * independent loops run in parallel), and on a busy machine a parallel
 * region's threads mostly wait at its barriers for a descheduled partner. */
#define VERIFY_THREADS 1u

struct leir_verifier {
  leir_backend *b;
  leir_verify_options o;
  leir_kernel *k0;
  /* the reference's failure, if any */
  int fail_stage;
  leir_verdict fail_verdict;
  leir_error fail;       /* strings below */
  char *fail_rule, *fail_message, *fail_log;
  int32_t fail_set;
  /* buffers: slot = set * nknown + i; inputs in `in`, outputs in `out` */
  uint32_t nsets, nknown, nout;
  void **in, **out;
  double *finite;        /* [output * nsets + set] */
  /* the truth (REASSOCIATING): f64 outputs per slot, computed once */
  int truth_state;       /* 0 not yet, 1 ready, -1 unavailable (truth_why) */
  double **truth;
  bool truth_is_orig;    /* f64 program: the truth is the original itself */
  /* inputs of all sets above ALL_SETS_BYTES: one set of input buffers
   * (every set's slots point at it), refilled before each set runs */
  bool stream;
  uint32_t filled;       /* the set the shared inputs hold (stream) */
  char truth_why[400];
  double nred;           /* longest reduction: max evaluations per element written */
  /* the backend fuses products into sums (LEIR_BACKEND_FP_CONTRACT on cpu or
   * cuda): which products the compiler fuses depends on the program's loop
   * structure, the instruction set and the compiler, so two programs that
   * compute the same operations may round differently, and float outputs
   * are judged against the f64 truth, whatever the class */
  bool contracting;
};

static inline leir_verdict verdict_of_status(leir_status st) {
  switch (st) {
    case LEIR_ERR_COMPILE: return LEIR_VERDICT_COMPILE_ERROR;
    case LEIR_ERR_TIMEOUT: return LEIR_VERDICT_TIMEOUT;
    case LEIR_ERR_RUNTIME: return LEIR_VERDICT_RUNTIME_ERROR;
    default: return LEIR_VERDICT_INVALID;
  }
}

/* Statuses that are verdicts about a program rather than failures of the
 * library or the backend. */
static inline bool is_program_status(leir_status st) {
  return st == LEIR_ERR_PARSE || st == LEIR_ERR_INVALID || st == LEIR_ERR_LIMIT ||
         st == LEIR_ERR_SIGNATURE || st == LEIR_ERR_COMPILE || st == LEIR_ERR_RUNTIME ||
         st == LEIR_ERR_TIMEOUT;
}

static inline void free_slots(void **slots, uint32_t n) {
  if (!slots) return;
  for (uint32_t i = 0; i < n; i++) free(slots[i]);
  free(slots);
}

/* A candidate's runs done ahead, with other candidates in one request to
 * the backend (execute_batch): its outputs of every set, or its failure. */
typedef struct prerun {
  bool ran;
  leir_status st;  /* LEIR_OK: outputs in cand */
  leir_error err;  /* st != LEIR_OK: strings below */
  char msg[1024], rule[64];
  int32_t set;
  void **cand;     /* nsets * nknown; outputs allocated */
} prerun;

/* verify.c: runs kernel k on sets [first, first + count) with inputs from
 * v->in and outputs in outs (outs[(set - first) * nknown + i]). */
leir_status leir__verify_run_sets(leir_verifier *v, leir_kernel *k, uint32_t first, uint32_t count,
                                  void **outs, leir__exec_result *res);
/* verify.c: streaming verifiers: puts the inputs of `set` into the shared
 * input buffers (outputs of the fill go to `outs`, a set of output buffers
 * that receive the sentinel). */
leir_status leir__verify_refill(leir_verifier *v, uint32_t set, void *const *outs);
/* verify_truth.c: the reference evaluated with every float tensor in f64
 * (verification.md §2): outputs in v->truth, one f64 array per output slot. */
leir_status leir__verify_compute_truth(leir_verifier *v);
/* verify_judge.c: judges a candidate whose kernel was built (or failed to
 * build with status build_st, error e) and, when built, prepared; `pre`
 * (may be NULL) holds its runs when they were done already. */
leir_status leir__verify_judge_built(leir_verifier *v, leir_kernel *k1, leir_status build_st,
                                     const leir_error *build_err, uint32_t cls, double t0,
                                     const prerun *pre, leir_verify_report **out);

#endif
