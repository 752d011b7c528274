/* What a toolchain embedding the minimal libleir does (tests/minimal_build_test.sh
 * links this against libleir.a built with every optional feature disabled):
 * parse a program, check and print it, list its candidates, apply each one,
 * replay it from its JSON form, and verify it on the interpreter. Prints one
 * line per stage; exits nonzero on the first failure. */
#include <stdio.h>
#include <string.h>

#include "leir/leir.h"

static const char *MATMUL =
    "L^{8}_{a=0}L^{8}_{c=0}L^{8}_{d=0}[D^{f64,g}_{a,c}=D^{f64,g}_{a,c}+A^{f64,g}_{a,d}*C^{f64,g}_{d,c};];";

#define TRY(call)                                                                         \
  do {                                                                                    \
    leir_status st_ = (call);                                                             \
    if (st_ != LEIR_OK) {                                                                 \
      fprintf(stderr, "%s: %s (%s)\n", #call, leir_status_name(st_),                      \
              leir_error_last()->message);                                                \
      return 1;                                                                           \
    }                                                                                     \
  } while (0)

int main(void) {
  leir_program *p = NULL;
  TRY(leir_program_parse(&p, MATMUL, strlen(MATMUL), NULL));
  TRY(leir_program_infer_signature(p));
  leir_diagnostics *diags = NULL;
  TRY(leir_program_check(p, NULL, &diags));
  leir_diagnostics_free(diags);
  char *text = NULL;
  TRY(leir_program_print(p, 0, &text, NULL));
  printf("parsed and checked: %s\n", strcmp(text, MATMUL) == 0 ? "prints back the same" : text);
  leir_free(text);

  leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
  co.flags = LEIR_CANDIDATES_ALL_DIVISORS;
  leir_candidates *cands = NULL;
  TRY(leir_candidates_list(&cands, p, &co));
  size_t n = leir_candidates_count(cands);
  leir_backend *interp = NULL;
  TRY(leir_backend_open(&interp, "interp", NULL));
  size_t passed = 0, replayed = 0;
  for (size_t i = 0; i < n; i++) {
    leir_program *q = NULL, *r = NULL;
    TRY(leir_candidates_apply(&q, cands, i));
    /* the step replays from its JSON form to the same program */
    char *json = NULL;
    leir_step *step = NULL;
    TRY(leir_step_to_json(leir_candidates_step(cands, i), &json, NULL));
    TRY(leir_step_parse(&step, json, strlen(json)));
    TRY(leir_step_apply(&r, p, step, NULL));
    replayed += leir_program_hash_alpha(r) == leir_program_hash_alpha(q);
    leir_step_free(step);
    leir_free(json);
    leir_program_free(r);
    leir_verify_report *rep = NULL;
    TRY(leir_verify(interp, p, q, NULL, &rep));
    passed += (size_t)leir_verdict_passes(rep->verdict);
    if (!leir_verdict_passes(rep->verdict))
      fprintf(stderr, "%s: %s\n", leir_step_text(leir_candidates_step(cands, i)),
              leir_verdict_name(rep->verdict));
    leir_verify_report_free(rep);
    leir_program_free(q);
  }
  printf("candidates: %zu, replayed from JSON: %zu, verified on the interpreter: %zu\n", n,
         replayed, passed);
  leir_backend_free(interp);
  leir_candidates_free(cands);
  leir_program_free(p);
  return n > 0 && passed == n && replayed == n ? 0 : 1;
}
