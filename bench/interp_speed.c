/*
 * Interpreter speed: nanoseconds per equation evaluation of the reference
 * evaluator on every program of conformance/sources-small.jsonl, against
 * the cpu backend on the same programs (kernel time, warm).
 *
 *   interp_speed CONFORMANCE_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl.h" /* tests/support */
#include "leir/leir.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CONFORMANCE_DIR\n", argv[0]);
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/sources-small.jsonl", argv[1]);
  jsonl_file *f = jsonl_open(path);
  if (!f) return 2;
  leir_backend *bi, *bc;
  if (leir_backend_open(&bi, "interp", NULL) || leir_backend_open(&bc, "cpu", NULL)) {
    fprintf(stderr, "%s\n", leir_error_last()->message);
    return 3;
  }
  leir_bench_options bo = LEIR_BENCH_OPTIONS_INIT;
  bo.warmup = 1;
  bo.min_runs = 3;
  bo.min_seconds = 0;
  bo.flags = LEIR_BENCH_NO_FLUSH;
  double evals = 0, interp_s = 0, cpu_s = 0;
  double worst = 0, best = 1e30;
  const jsonl_value *v;
  while ((v = jsonl_next(f))) {
    const char *text = jsonl_str(jsonl_get(v, "leir"));
    leir_program *prog;
    leir_program_parse(&prog, text, strlen(text), NULL);
    leir_program_cost c;
    if (leir_program_cost_get(prog, &c) != LEIR_OK) {
      /* needs the corpus signature (indirect-only inputs): skip */
      leir_program_free(prog);
      continue;
    }
    leir_timing ti, tc;
    const leir_program *one[1] = {prog};
    if (leir_bench(bi, one, 1, &bo, &ti) == LEIR_OK && leir_bench(bc, one, 1, &bo, &tc) == LEIR_OK) {
      evals += (double)c.evaluations;
      interp_s += ti.median_s;
      cpu_s += tc.median_s;
      double ns = ti.median_s / (double)c.evaluations * 1e9;
      if (ns > worst) worst = ns;
      if (ns < best) best = ns;
    }
    leir_program_free(prog);
  }
  jsonl_close(f);
  printf("interp: %.3g evaluations in %.3f s: %.1f ns per evaluation on average (%.1f..%.1f per "
         "program); %.2f M evaluations/s\n",
         evals, interp_s, interp_s / evals * 1e9, best, worst, evals / interp_s * 1e-6);
  printf("cpu:    the same in %.4f s (%.0fx faster than the interp)\n", cpu_s, interp_s / cpu_s);
  leir_backend_free(bi);
  leir_backend_free(bc);
  return 0;
}
