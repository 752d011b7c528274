/* CUDA emulation for tests (cuda_emul.h). */
#include "cuda_emul.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../backends/cuda/cuda_internal.h"
#include "../../backends/semantics.h"

const char cuda_emul_host_headers[] =
    "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n";

const char cuda_emul_shim[] =
    "typedef int8_t leir_i8_t; typedef int16_t leir_i16_t; typedef int32_t leir_i32_t;\n"
    "typedef int64_t leir_i64_t; typedef uint8_t leir_u8_t; typedef uint16_t leir_u16_t;\n"
    "struct leir_dim3 { unsigned x, y, z; };\n"
    "static leir_dim3 threadIdx, blockIdx, blockDim, gridDim;\n"
    "#define __global__\n#define __device__\n#define __forceinline__ inline\n"
    "#define __launch_bounds__(n)\n#define __shared__ static\n#define __syncthreads() ((void)0)\n"
    "static inline int atomicCAS(int *p, int c, int v) { int o = *p; if (o == c) *p = v; return o; }\n"
    "static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }\n"
    "static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }\n"
    "static inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, 8); return d; }\n";

const char *cuda_emul_cxx(void) {
  const char *c = getenv("CXX");
  return c && *c ? c : "c++";
}

bool cuda_emul_available(void) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "%s --version >/dev/null 2>&1", cuda_emul_cxx());
  return system(cmd) == 0;
}

typedef int (*emul_fn)(void **bufs, int *trap);

struct cuda_emul {
  char dir[64];
  size_t n, cap;
  const leir_program **progs;
  leir__cuda_lowered **lowered;
  emul_fn *fns;
  void *handle;
};

cuda_emul *cuda_emul_new(void) {
  cuda_emul *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  snprintf(e->dir, sizeof e->dir, "/tmp/leir-cuda-emul-XXXXXX");
  if (!mkdtemp(e->dir)) {
    free(e);
    return NULL;
  }
  return e;
}

int cuda_emul_add(cuda_emul *e, const leir_program *p) {
  if (e->n == e->cap) {
    size_t c = e->cap ? e->cap * 2 : 16;
    const leir_program **np = realloc(e->progs, c * sizeof *np);
    if (!np) return -1;
    e->progs = np;
    leir__cuda_lowered **nl = realloc(e->lowered, c * sizeof *nl);
    if (!nl) return -1;
    e->lowered = nl;
    e->cap = c;
  }
  /* Each program's kernels get their own prefix; the prelude is written once. */
  char prefix[32];
  snprintf(prefix, sizeof prefix, "p%zu_", e->n);
  leir_cuda_options o = LEIR_CUDA_OPTIONS_INIT;
  o.flags = LEIR_CUDA_NO_PRELUDE;
  o.kernel_prefix = prefix;
  leir__cuda_lowered *l = NULL;
  if (leir__cuda_lower(p, &o, &l) != LEIR_OK) return -1;
  e->progs[e->n] = p;
  e->lowered[e->n] = l;
  return (int)e->n++;
}

static const char *param_type(leir_dtype dt) {
  switch (dt) {
    case LEIR_F32: return "float";
    case LEIR_F16: case LEIR_BF16: return "leir_u16_t";
    case LEIR_I8: return "leir_i8_t";
    case LEIR_I16: return "leir_i16_t";
    case LEIR_I32: return "leir_i32_t";
    case LEIR_I64: return "leir_i64_t";
    case LEIR_U8: case LEIR_BOOL: return "leir_u8_t";
    default: return "double";
  }
}

bool cuda_emul_build(cuda_emul *e, char *log, size_t cap) {
  char src_path[128], so_path[128];
  snprintf(src_path, sizeof src_path, "%s/emul.cpp", e->dir);
  snprintf(so_path, sizeof so_path, "%s/emul.so", e->dir);
  FILE *f = fopen(src_path, "w");
  if (!f) {
    snprintf(log, cap, "cannot write %s", src_path);
    return false;
  }
  fputs(cuda_emul_host_headers, f);
  fputs(cuda_emul_shim, f);
  fputs(leir__cuda_prelude(), f);
  for (size_t i = 0; i < e->n; i++) {
    const leir__cuda_lowered *l = e->lowered[i];
    fprintf(f, "\nnamespace emul%zu {\n", i);
    fputs(l->source, f);
    fprintf(f, "\nextern \"C\" int leir_emulate_%zu(void **bufs, int *trap) {\n", i);
    for (uint32_t k = 0; k < l->nkernels; k++) {
      const leir__cuda_kernel *kn = &l->kernels[k];
      fprintf(f, "  gridDim = {%uu, %uu, %uu}; blockDim = {%uu, %uu, %uu};\n", kn->grid[0],
              kn->grid[1], kn->grid[2], kn->block[0], kn->block[1], kn->block[2]);
      fprintf(f,
              "  for (unsigned bz = 0; bz < gridDim.z; bz++) for (unsigned by = 0; by < gridDim.y; "
              "by++) for (unsigned bx = 0; bx < gridDim.x; bx++)\n"
              "  for (unsigned tz = 0; tz < blockDim.z; tz++) for (unsigned ty = 0; ty < "
              "blockDim.y; ty++) for (unsigned tx = 0; tx < blockDim.x; tx++) {\n"
              "    blockIdx = {bx, by, bz}; threadIdx = {tx, ty, tz};\n    %s(",
              kn->name);
      for (uint32_t j = 0; j < l->nparams; j++) {
        const leir__buffer *b = &l->a->buffers[l->params[j]];
        fprintf(f, "(%s *)bufs[%u], ", param_type((leir_dtype)b->dtype), j);
      }
      fprintf(f, "trap);\n    if (*trap) return *trap;\n  }\n");
    }
    fprintf(f, "  return 0;\n}\n}\n");
  }
  if (fclose(f) != 0) {
    snprintf(log, cap, "cannot write %s", src_path);
    return false;
  }
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "%s -O1 -w -ffp-contract=off -fno-fast-math -shared -fPIC -o %s %s 2>&1",
           cuda_emul_cxx(), so_path, src_path);
  FILE *pp = popen(cmd, "r");
  size_t got = 0;
  if (pp && cap) {
    got = fread(log, 1, cap - 1, pp);
    char sink[4096];
    while (fread(sink, 1, sizeof sink, pp) > 0) {
    }
  }
  if (cap) log[got] = '\0';
  int rc = pp ? pclose(pp) : -1;
  if (rc != 0) return false;
  e->handle = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
  if (!e->handle) {
    snprintf(log, cap, "%s", dlerror());
    return false;
  }
  e->fns = calloc(e->n ? e->n : 1, sizeof *e->fns);
  for (size_t i = 0; i < e->n; i++) {
    char name[64];
    snprintf(name, sizeof name, "leir_emulate_%zu", i);
    e->fns[i] = (emul_fn)(uintptr_t)dlsym(e->handle, name);
    if (!e->fns[i]) {
      snprintf(log, cap, "%s missing", name);
      return false;
    }
  }
  return true;
}

leir_status cuda_emul_run(cuda_emul *e, int idx, void **bufs) {
  const leir__cuda_lowered *l = e->lowered[idx];
  void **dev = calloc(l->nparams ? l->nparams : 1, sizeof *dev);
  if (!dev) return LEIR_ERR_NOMEM;
  leir_status st = LEIR_OK;
  for (uint32_t j = 0; j < l->nparams; j++) {
    const leir__buffer *b = &l->a->buffers[l->params[j]];
    size_t nb = (size_t)b->elements * leir_dtype_size((leir_dtype)b->dtype);
    dev[j] = malloc(nb ? nb : 1);
    if (!dev[j]) {
      st = LEIR_ERR_NOMEM;
      continue;
    }
    if (b->decl != LEIR__NONE)
      memcpy(dev[j], bufs[b->decl], nb);
    else
      leir__fill_sentinel(dev[j], (leir_dtype)b->dtype, b->elements);
  }
  int trap = 0;
  if (st == LEIR_OK && e->fns[idx](dev, &trap) != 0) st = LEIR_ERR_RUNTIME;
  for (uint32_t j = 0; j < l->nparams; j++) {
    const leir__buffer *b = &l->a->buffers[l->params[j]];
    if (st == LEIR_OK && b->role == LEIR__BUF_OUTPUT && b->decl != LEIR__NONE)
      memcpy(bufs[b->decl], dev[j], (size_t)b->elements * leir_dtype_size((leir_dtype)b->dtype));
    free(dev[j]);
  }
  free(dev);
  return st;
}

void cuda_emul_free(cuda_emul *e) {
  if (!e) return;
  if (e->handle) dlclose(e->handle);
  for (size_t i = 0; i < e->n; i++) leir__cuda_lowered_free(e->lowered[i]);
  free(e->lowered);
  free(e->progs);
  free(e->fns);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", e->dir);
  if (system(cmd) != 0) { /* a stale temporary directory is harmless */
  }
  free(e);
}
