/*
 * GPU timings for scripts/device-check.sh (verification.md §4: CUDA events,
 * warm-up runs, an L2 flush between runs, median of >= 10 runs and >= 50 ms):
 * matmul 1024^3 f32 and softmax 4096x4096 f32, each as the reference's
 * naive LEIR (one bound loop `tx`), as bound/tiled LEIR, and matmul with
 * cuBLAS (loaded with dlopen, when present). Prints a table with ms,
 * GFLOP/s and GB/s (bytes = inputs read once + outputs written once).
 *
 *   cuda_kernels            exit 77 with a message when no GPU is present
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leir/leir.h"

typedef struct variant {
  const char *workload, *name, *sig, *leir;
  double flops, bytes;
} variant;

#define N 1024
#define SM 4096

static const variant variants[] = {
    {"matmul 1024^3 f32", "naive LEIR (B tx)", "A:f32:1024x1024,C:f32:1024x1024 -> D:f32:1024x1024",
     "B^{1024}_{tx=0}L^{1024}_{a=0}L^{1024}_{c=0}[D^{f32,g}_{tx,a}=D^{f32,g}_{tx,a}+A^{f32,g}_{tx,c}*C^{f32,g}_{c,a};];",
     2.0 * N * N * N, 3.0 * N * N * 4},
    {"matmul 1024^3 f32", "bound LEIR (bx, tx)", "A:f32:1024x1024,C:f32:1024x1024 -> D:f32:1024x1024",
     "B^{1024}_{bx=0}B^{1024}_{tx=0}L^{1024}_{c=0}[D^{f32,g}_{bx,tx}=D^{f32,g}_{bx,tx}+A^{f32,g}_{bx,c}*C^{f32,g}_{c,tx};];",
     2.0 * N * N * N, 3.0 * N * N * 4},
    {"matmul 1024^3 f32", "tiled LEIR (by,bx,ty,tx 16x16, U4)", "A:f32:1024x1024,C:f32:1024x1024 -> D:f32:1024x1024",
     "B^{64}_{by=0}B^{64}_{bx=0}B^{16}_{ty=0}B^{16}_{tx=0}L^{256}_{c=0}U^{4}_{d=0}[D^{f32,g}_{by*16+ty,bx*16+tx}=D^{f32,g}_{by*16+ty,bx*16+tx}+A^{f32,g}_{by*16+ty,c*4+d}*C^{f32,g}_{c*4+d,bx*16+tx};];",
     2.0 * N * N * N, 3.0 * N * N * 4},
    {"softmax 4096x4096 f32", "naive LEIR (B tx)", "A:f32:4096x4096 -> C:f32:4096x4096",
     "B^{4096}_{tx=0}L^{4096}_{a=0}[D^{f32,g}_{tx}=max(D^{f32,g}_{tx},A^{f32,g}_{tx,a});];"
     "B^{4096}_{tx=0}L^{4096}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx});];"
     "B^{4096}_{tx=0}L^{4096}_{a=0}[C^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx})/E^{f32,g}_{tx};];",
     5.0 * SM * SM, 2.0 * SM * SM * 4},
    {"softmax 4096x4096 f32", "bound LEIR (bx, tx; rows per thread)", "A:f32:4096x4096 -> C:f32:4096x4096",
     "B^{64}_{bx=0}B^{64}_{tx=0}L^{4096}_{a=0}[D^{f32,g}_{bx*64+tx}=max(D^{f32,g}_{bx*64+tx},A^{f32,g}_{bx*64+tx,a});];"
     "B^{64}_{bx=0}B^{64}_{tx=0}L^{4096}_{a=0}[E^{f32,g}_{bx*64+tx}=E^{f32,g}_{bx*64+tx}+exp(A^{f32,g}_{bx*64+tx,a}-D^{f32,g}_{bx*64+tx});];"
     "B^{4096}_{bx=0}B^{1024}_{tx=0}L^{4}_{a=0}[C^{f32,g}_{bx,a*1024+tx}=exp(A^{f32,g}_{bx,a*1024+tx}-D^{f32,g}_{bx})/E^{f32,g}_{bx};];",
     5.0 * SM * SM, 2.0 * SM * SM * 4},
};

/* ---- cuBLAS through the runtime, both loaded with dlopen ---------------- */

typedef int (*fn_malloc)(void **, size_t);
typedef int (*fn_free)(void *);
typedef int (*fn_memset)(void *, int, size_t);
typedef int (*fn_sync)(void);
typedef int (*fn_ev_create)(void **);
typedef int (*fn_ev_record)(void *, void *);
typedef int (*fn_ev_sync)(void *);
typedef int (*fn_ev_elapsed)(float *, void *, void *);
typedef int (*fn_create)(void **);
typedef int (*fn_destroy)(void *);
typedef int (*fn_sgemm)(void *, int, int, int, int, int, const float *, const float *, int,
                        const float *, int, const float *, float *, int);

static int cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static int cublas_matmul(double *median_ms) {
  void *rt = dlopen("libcudart.so.13", RTLD_NOW);
  if (!rt) rt = dlopen("libcudart.so", RTLD_NOW);
  void *bl = dlopen("libcublas.so.13", RTLD_NOW);
  if (!bl) bl = dlopen("libcublas.so", RTLD_NOW);
  if (!rt || !bl) return -1;
  fn_malloc cmalloc = (fn_malloc)dlsym(rt, "cudaMalloc");
  fn_free cfree = (fn_free)dlsym(rt, "cudaFree");
  fn_memset cmemset = (fn_memset)dlsym(rt, "cudaMemset");
  fn_sync csync = (fn_sync)dlsym(rt, "cudaDeviceSynchronize");
  fn_ev_create evc = (fn_ev_create)dlsym(rt, "cudaEventCreate");
  fn_ev_record evr = (fn_ev_record)dlsym(rt, "cudaEventRecord");
  fn_ev_sync evs = (fn_ev_sync)dlsym(rt, "cudaEventSynchronize");
  fn_ev_elapsed eve = (fn_ev_elapsed)dlsym(rt, "cudaEventElapsedTime");
  fn_create create = (fn_create)dlsym(bl, "cublasCreate_v2");
  fn_destroy destroy = (fn_destroy)dlsym(bl, "cublasDestroy_v2");
  fn_sgemm sgemm = (fn_sgemm)dlsym(bl, "cublasSgemm_v2");
  if (!cmalloc || !cfree || !cmemset || !csync || !evc || !evr || !evs || !eve || !create ||
      !destroy || !sgemm)
    return -1;
  void *h = NULL, *a = NULL, *b = NULL, *c = NULL, *flush = NULL, *e0 = NULL, *e1 = NULL;
  if (create(&h) || cmalloc(&a, N * N * 4) || cmalloc(&b, N * N * 4) || cmalloc(&c, N * N * 4) ||
      cmalloc(&flush, 128u << 20) || evc(&e0) || evc(&e1))
    return -1;
  cmemset(a, 0, N * N * 4);
  cmemset(b, 0, N * N * 4);
  const float one = 1, zero = 0;
  for (int w = 0; w < 3; w++) sgemm(h, 0, 0, N, N, N, &one, a, N, b, N, &zero, c, N);
  double t[200];
  int runs = 0;
  double total = 0;
  while (runs < 200 && (runs < 10 || total < 50)) {
    cmemset(flush, runs & 0xff, 128u << 20);
    evr(e0, NULL);
    sgemm(h, 0, 0, N, N, N, &one, a, N, b, N, &zero, c, N);
    evr(e1, NULL);
    evs(e1);
    float ms = 0;
    eve(&ms, e0, e1);
    t[runs++] = ms;
    total += ms;
  }
  csync();
  qsort(t, (size_t)runs, sizeof *t, cmp);
  *median_ms = t[runs / 2];
  cfree(a);
  cfree(b);
  cfree(c);
  cfree(flush);
  destroy(h);
  return 0;
}

static leir_program *program(const variant *v) {
  leir_program *p = NULL;
  if (leir_program_parse(&p, v->leir, strlen(v->leir), NULL) != LEIR_OK) return NULL;
  /* signature "A:f32:1024x1024,C:... -> D:..." */
  leir_tensor_decl d[8];
  char names[8][8];
  int64_t shapes[8][4];
  size_t n = 0;
  leir_role role = LEIR_ROLE_INPUT;
  const char *s = v->sig;
  while (*s) {
    while (*s == ' ' || *s == ',') s++;
    if (s[0] == '-' && s[1] == '>') {
      role = LEIR_ROLE_OUTPUT;
      s += 2;
      continue;
    }
    if (!*s) break;
    size_t k = 0;
    while (*s != ':') names[n][k++] = *s++;
    names[n][k] = 0;
    s += 5; /* ":f32:" */
    d[n].name = names[n];
    d[n].dtype = LEIR_F32;
    d[n].role = role;
    d[n].rank = 0;
    while (*s >= '0' && *s <= '9') {
      shapes[n][d[n].rank++] = strtoll(s, (char **)&s, 10);
      if (*s == 'x') s++;
    }
    d[n].shape = shapes[n];
    n++;
  }
  if (leir_program_set_signature(p, d, n) != LEIR_OK) {
    leir_program_free(p);
    return NULL;
  }
  return p;
}

int main(void) {
  leir_cuda_device_info info = {sizeof info, "", 0, 0, 0, 0, 0, 0};
  if (leir_cuda_device(&info) != LEIR_OK) {
    printf("cuda_kernels: %s: GPU timings skipped\n", leir_error_last()->message);
    /* Still check that every variant lowers and compiles. */
    int bad = 0;
    for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
      leir_program *p = program(&variants[i]);
      char *ptx = NULL, *log = NULL;
      leir_cuda_options o = LEIR_CUDA_OPTIONS_INIT;
      leir_status st = p ? leir_cuda_compile(p, &o, &ptx, &log) : LEIR_ERR_PARSE;
      printf("  %s / %s: %s%s%s\n", variants[i].workload, variants[i].name,
             st == LEIR_OK ? "lowers and compiles" : leir_status_name(st), st == LEIR_OK ? "" : ": ",
             st == LEIR_OK ? "" : leir_error_last()->message);
      bad += st != LEIR_OK && st != LEIR_ERR_UNSUPPORTED;
      leir_free(ptx);
      leir_free(log);
      leir_program_free(p);
    }
    return bad ? 1 : 77;
  }
  printf("device: %s (sm_%d%d, %d SMs, L2 %u KiB), compiler %s\n\n", info.name, info.compute_major,
         info.compute_minor, info.multiprocessors, info.l2_bytes >> 10, leir_cuda_compiler());
  printf("| workload | variant | median ms | min-max ms | GFLOP/s | GB/s |\n");
  printf("|---|---|---:|---:|---:|---:|\n");
  int status = 0;
  for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
    const variant *v = &variants[i];
    leir_program *p = program(v);
    if (!p) {
      printf("| %s | %s | parse error | | | |\n", v->workload, v->name);
      status = 1;
      continue;
    }
    size_t nb = leir_program_signature_count(p);
    void *bufs[4];
    for (size_t k = 0; k < nb; k++) {
      leir_tensor_decl d;
      leir_program_signature_get(p, k, &d);
      size_t elems = 1;
      for (uint32_t r = 0; r < d.rank; r++) elems *= (size_t)d.shape[r];
      float *f = malloc(elems * sizeof *f);
      for (size_t e = 0; e < elems; e++) f[e] = (float)((e * 2654435761u) % 1000) / 1000.0f - 0.5f;
      bufs[k] = f;
    }
    leir_cuda_timing t = {sizeof t, 0, 0, 0, 0, 0};
    leir_status st = leir_cuda_time(p, NULL, NULL, bufs, nb, &t);
    if (st != LEIR_OK) {
      printf("| %s | %s | %s: %s | | | |\n", v->workload, v->name, leir_status_name(st),
             leir_error_last()->message);
      status = 1;
    } else {
      printf("| %s | %s | %.3f | %.3f-%.3f | %.1f | %.1f |\n", v->workload, v->name, t.median_ms,
             t.min_ms, t.max_ms, v->flops / (t.median_ms * 1e-3) * 1e-9,
             v->bytes / (t.median_ms * 1e-3) * 1e-9);
    }
    for (size_t k = 0; k < nb; k++) free(bufs[k]);
    leir_program_free(p);
  }
  double ms = 0;
  if (cublas_matmul(&ms) == 0)
    printf("| matmul 1024^3 f32 | cuBLAS sgemm | %.3f | | %.1f | %.1f |\n", ms,
           2.0 * N * N * N / (ms * 1e-3) * 1e-9, 3.0 * N * N * 4 / (ms * 1e-3) * 1e-9);
  else
    printf("| matmul 1024^3 f32 | cuBLAS sgemm | not available (libcublas/libcudart not found) | | | |\n");
  printf("| softmax 4096x4096 f32 | cuBLAS | n/a (no softmax in cuBLAS) | | | |\n");
  return status;
}
