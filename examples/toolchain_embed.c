/* What a compiler toolchain embedding the minimal libleir does: the library
 * built with every optional feature off (no SQLite, libcurl or CUDA;
 * docs/api.md, "Build options and the minimal library") and linked
 * statically (tests/minimal_build_test.sh builds and runs this):
 *
 *   cc -std=c11 toolchain_embed.c $(pkg-config --static --cflags --libs leir) -o toolchain_embed
 *   ./toolchain_embed ['LEIR text']
 *
 * Parse the toolchain's IR and check it (every finding with its rule),
 * ask the strategy catalogue why a rewrite does or does not apply, apply
 * one step with its chain of thought, run both programs on the interpreter
 * on the same seeded inputs and compare the outputs, and verify. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <leir/leir.h>

static const char *DEFAULT_IR =
    "L^{4}_{a=0}L^{64}_{c=0}[S^{f64,g}_{a}=S^{f64,g}_{a}+A^{f64,g}_{a,c}*A^{f64,g}_{a,c};];";

#define TRY(call)                                                                         \
  do {                                                                                    \
    leir_status st_ = (call);                                                             \
    if (st_ != LEIR_OK) {                                                                 \
      const leir_error *e_ = leir_error_last();                                           \
      fprintf(stderr, "%s: %s [%s] %s\n", #call, leir_status_name(st_), e_->rule,         \
              e_->message);                                                               \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

/* Runs `p` on the interpreter on seeded input set 0; returns its buffers
 * (signature order; caller frees each and the array). */
static void **run_on_interp(leir_backend *interp, const leir_program *p, size_t *n) {
  leir_kernel *k = NULL;
  TRY(leir_kernel_new(&k, interp, p));
  *n = leir_kernel_buffer_count(k);
  void **bufs = calloc(*n, sizeof *bufs);
  for (size_t i = 0; i < *n; i++) {
    size_t bytes = 0;
    TRY(leir_kernel_buffer_bytes(k, i, &bytes));
    bufs[i] = calloc(1, bytes ? bytes : 1);
  }
  TRY(leir_program_fill_inputs(p, LEIR_SEED_DEFAULT, 0, bufs, *n));
  TRY(leir_kernel_run(k, bufs, *n));
  leir_kernel_free(k);
  return bufs;
}

int main(int argc, char **argv) {
  const char *ir = argc > 1 ? argv[1] : DEFAULT_IR;
  leir_parse_options po = LEIR_PARSE_OPTIONS_INIT;
  po.flags = LEIR_PARSE_LENIENT;
  leir_program *p = NULL;
  TRY(leir_program_parse(&p, ir, strlen(ir), &po));
  TRY(leir_program_infer_signature(p));
  leir_diagnostics *diags = NULL;
  leir_status st = leir_program_check(p, NULL, &diags);
  for (size_t i = 0; i < leir_diagnostics_count(diags); i++)
    printf("finding %s: %s\n", leir_diagnostics_get(diags, i)->rule,
           leir_diagnostics_get(diags, i)->message);
  leir_diagnostics_free(diags);
  TRY(st);
  printf("checked: %s\n", ir);

  /* the catalogue: why loop_vectorization does not apply, what reduction_factorization offers */
  size_t vec = 0, rf = 0;
  TRY(leir_strategy_find("loop_vectorization", &vec));
  TRY(leir_strategy_find("reduction_factorization", &rf));
  leir_explanation *ex = NULL;
  TRY(leir_strategy_explain(&ex, p, vec));
  printf("%zu strategies; loop_vectorization: %zu candidates", leir_strategy_count(),
         leir_explanation_candidates(ex));
  for (size_t i = 0; i < leir_explanation_count(ex); i++)
    if (leir_explanation_get(ex, i)->rule[0]) {
      printf(", first refusal %s", leir_explanation_get(ex, i)->rule);
      break;
    }
  printf("\n");
  leir_explanation_free(ex);

  leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
  co.strategy = (int32_t)rf;
  leir_candidates *list = NULL;
  TRY(leir_candidates_list(&list, p, &co));
  if (leir_candidates_count(list) == 0) {
    fprintf(stderr, "reduction_factorization has no candidate here\n");
    return 1;
  }
  const leir_step *step = leir_candidates_step(list, 0);
  char *cot = NULL;
  TRY(leir_step_cot(&cot, NULL, p, step));
  printf("step: %s (%s)\ncot: %.*s.\n", leir_step_text(step),
         leir_exactness_name(leir_candidates_exactness(list, 0)),
         (int)strcspn(cot, "."), cot);
  leir_free(cot);
  leir_program *q = NULL;
  TRY(leir_candidates_apply(&q, list, 0));

  /* the interpreter: both programs on the same inputs, the outputs compared */
  leir_backend *interp = NULL;
  TRY(leir_backend_open(&interp, "interp", NULL));
  size_t n = 0, m = 0;
  void **before = run_on_interp(interp, p, &n), **after = run_on_interp(interp, q, &m);
  leir_tensor_decl out;
  TRY(leir_program_signature_get(p, n - 1, &out));
  const double *x = before[n - 1], *y = after[m - 1];
  double worst = 0;
  for (int64_t i = 0; i < out.shape[0]; i++) {
    double d = x[i] > y[i] ? x[i] - y[i] : y[i] - x[i];
    if (d > worst) worst = d;
  }
  printf("interpreter: %s[0] = %.6f before, %.6f after, largest difference %.1e\n", out.name,
         x[0], y[0], worst);
  for (size_t i = 0; i < n; i++) free(before[i]);
  for (size_t i = 0; i < m; i++) free(after[i]);
  free(before);
  free(after);

  leir_verify_report *r = NULL;
  TRY(leir_verify(interp, p, q, NULL, &r));
  printf("verified: %s (%s)\n", leir_verdict_name(r->verdict), r->judged_by);
  int ok = leir_verdict_passes(r->verdict);
  leir_verify_report_free(r);
  leir_backend_free(interp);
  leir_program_free(q);
  leir_candidates_free(list);
  leir_program_free(p);
  return ok ? 0 : 1;
}
