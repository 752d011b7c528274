/*
 * NVRTC compile time of the CUDA backend (issue 5 target: <= 100 ms median
 * per kernel), over the conformance sources (sources-small.jsonl): every
 * program is lowered, then (1) each kernel is compiled alone (the prelude
 * plus that kernel) and (2) the whole program is compiled once. A comment
 * with a fresh salt defeats the PTX cache, so every number is a real NVRTC
 * run. No GPU is needed.
 *
 *   cuda_compile tests/data/sources-small.jsonl [--arch compute_90] [--limit N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonl.h"
#include "leir/leir.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static void summary(const char *what, double *v, size_t n) {
  if (!n) return;
  qsort(v, n, sizeof *v, cmp);
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += v[i];
  printf("%-34s n=%-5zu median %7.1f ms  p90 %7.1f ms  max %7.1f ms  total %7.2f s\n", what, n,
         v[n / 2] * 1e3, v[n * 9 / 10] * 1e3, v[n - 1] * 1e3, sum);
}

static unsigned salt_counter;

/* Compiles `text` with a unique first line (no cache hit); seconds. */
static double compile_once(const char *text, const leir_cuda_options *o, int *failed) {
  size_t n = strlen(text);
  char *buf = malloc(n + 64);
  int h = snprintf(buf, 64, "// salt %u %ld\n", salt_counter++, (long)time(NULL));
  memcpy(buf + h, text, n + 1);
  char *ptx = NULL, *log = NULL;
  double t0 = now();
  leir_status st = leir_cuda_compile_source(buf, (size_t)h + n, o, &ptx, &log);
  double dt = now() - t0;
  if (st != LEIR_OK) {
    (*failed)++;
    fprintf(stderr, "compile failed: %s\n%s\n", leir_error_last()->message, log ? log : "");
  }
  leir_free(ptx);
  leir_free(log);
  free(buf);
  return dt;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: cuda_compile SOURCES.jsonl [--arch A] [--limit N]\n");
    return 2;
  }
  leir_cuda_options o = LEIR_CUDA_OPTIONS_INIT;
  o.arch = "compute_90";
  size_t limit = (size_t)-1;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--arch") == 0) o.arch = argv[i + 1];
    if (strcmp(argv[i], "--limit") == 0) limit = strtoul(argv[i + 1], NULL, 10);
  }
  printf("compiler: %s, arch %s\n", leir_cuda_compiler(), o.arch);
  if (strstr(leir_cuda_compiler(), "unavailable")) return 77;
  jsonl_file *in = jsonl_open(argv[1]);
  if (!in) {
    fprintf(stderr, "cuda_compile: cannot open %s\n", argv[1]);
    return 2;
  }
  size_t nlines = 100000; /* upper bound on programs, for the result arrays */
  double *per_kernel = calloc(100000, sizeof *per_kernel), *per_program = calloc(nlines + 1, sizeof *per_program);
  double *lower_t = calloc(nlines + 1, sizeof *lower_t);
  size_t nk = 0, np = 0, rejected = 0;
  int failed = 0;
  /* Warm NVRTC up (library load, builtins) so the first program is not
   * charged for it. */
  compile_once(leir_cuda_prelude(), &o, &failed);
  double t_prelude[5];
  for (int k = 0; k < 5; k++) t_prelude[k] = compile_once(leir_cuda_prelude(), &o, &failed);
  summary("prelude alone (fixed cost)", t_prelude, 5);
  const jsonl_value *v;
  while (np < limit && np < nlines && (v = jsonl_next(in))) {
    leir_program *prog = NULL;
    const char *text = jsonl_str(jsonl_get(v, "leir"));
    if (!text || leir_program_parse(&prog, text, strlen(text), NULL) != LEIR_OK) continue;
    leir_tensor_decl decls[64];
    char names[64][32];
    int64_t shapes[64][LEIR_MAX_RANK];
    size_t n = 0;
    const jsonl_value *sig = jsonl_get(v, "signature");
    const char *roles[2] = {"inputs", "outputs"};
    for (int r = 0; r < 2; r++) {
      const jsonl_value *list = jsonl_get(sig, roles[r]);
      for (size_t i = 0; i < jsonl_len(list) && n < 64; i++) {
        const jsonl_value *d = jsonl_at(list, i);
        const char *name = jsonl_str(jsonl_get(d, "name"));
        snprintf(names[n], 32, "%s", name ? name : "");
        decls[n].name = names[n];
        leir_dtype_from_name(jsonl_str(jsonl_get(d, "dtype")), &decls[n].dtype);
        decls[n].role = r ? LEIR_ROLE_OUTPUT : LEIR_ROLE_INPUT;
        const jsonl_value *shape = jsonl_get(d, "shape");
        decls[n].rank = 0;
        for (size_t k = 0; k < jsonl_len(shape) && k < LEIR_MAX_RANK; k++)
          shapes[n][decls[n].rank++] = jsonl_int(jsonl_at(shape, k), -1);
        decls[n].shape = shapes[n];
        n++;
      }
    }
    leir_program_set_signature(prog, decls, n);
    char *src = NULL;
    double t0 = now();
    leir_status st = leir_cuda_lower(prog, &o, &src, NULL);
    double tl = now() - t0;
    if (st != LEIR_OK) {
      rejected++;
    } else {
      lower_t[np] = tl;
      per_program[np++] = compile_once(src, &o, &failed);
      /* kernels one by one */
      const char *prelude = leir_cuda_prelude();
      const char *s = strstr(src, "\n// nest ");
      while (s && nk < 100000) {
        const char *next = strstr(s + 1, "\n// nest ");
        size_t len = next ? (size_t)(next - s) : strlen(s);
        char *one = malloc(strlen(prelude) + len + 1);
        strcpy(one, prelude);
        strncat(one, s, len);
        per_kernel[nk++] = compile_once(one, &o, &failed);
        free(one);
        s = next;
      }
    }
    leir_free(src);
    leir_program_free(prog);
  }
  if (jsonl_error(in)) fprintf(stderr, "cuda_compile: %s\n", jsonl_error(in));
  jsonl_close(in);
  printf("programs: %zu lowered, %zu rejected (bound loop carrying a dependence), %d compile "
         "failures\n", np, rejected, failed);
  summary("lowering per program", lower_t, np);
  summary("NVRTC per kernel (prelude + kernel)", per_kernel, nk);
  summary("NVRTC per program (all kernels)", per_program, np);
  return failed ? 1 : 0;
}
