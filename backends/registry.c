/* Backends by name: open, close, lower (include/leir/run.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "backend.h"
#include "error.h"
#include "options.h"

static const leir__backend_ops *const registry[] = {
    &leir__interp_ops,
    &leir__cpu_ops,
#ifdef LEIR_HAVE_CUDA
    &leir__cuda_ops,
#endif
};
#define NREGISTRY (sizeof registry / sizeof registry[0])

size_t leir_backend_count(void) { return NREGISTRY; }

const char *leir_backend_name_at(size_t i) { return i < NREGISTRY ? registry[i]->name : NULL; }

static char *dup_or_null(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* Copies caller options over the defaults, honouring an older, smaller
 * struct (fields it lacks keep their defaults). */
static leir_status read_options(leir_backend_options *o, const leir_backend_options *in) {
  leir_status st = LEIR__OPTIONS_READ(leir_backend_options, o, in, LEIR_BACKEND_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  if (!(o->timeout_s > 0) || !(o->compile_timeout_s > 0))
    return leir__error_arg(NULL, "timeouts must be positive numbers of seconds");
  if (o->memory_limit_bytes == 0 || o->max_buffer_bytes == 0 || o->max_evaluations == 0)
    return leir__error_arg(NULL, "memory, buffer and evaluation limits must be positive");
  if (o->threads > 4096)
    return leir__error_arg(NULL, "threads: at most 4096");
  return LEIR_OK;
}

/* The cpu backend's flags when the caller and $LEIR_CFLAGS give none. On an
 * x86-64 host with AVX-512, GCC and Clang still size vectors for 256 bits
 * unless told otherwise, `#pragma omp simd` loops included: a V^{16} loop of
 * floats then takes two ymm registers a row, and the 8x32 accumulator tile
 * of a register-tiled matmul needs 32 of them (spilling 5 in the reduction
 * loop) where the cost model (lib/cost.c, simd_bytes) counts 16 zmm. The
 * preference is not a floating-point flag: results are unchanged. */
static const char *default_flags(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return "-O3 -march=native -fopenmp -mprefer-vector-width=512";
#endif
  return "-O3 -march=native -fopenmp";
}

leir_status leir_backend_open(leir_backend **out, const char *name,
                              const leir_backend_options *opts) {
  if (!out) return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  if (!name) name = "cpu";
  const leir__backend_ops *ops = NULL;
  for (size_t i = 0; i < NREGISTRY; i++)
    if (strcmp(registry[i]->name, name) == 0) ops = registry[i];
  if (!ops) {
    if (strcmp(name, "cuda") == 0)
      return leir__error(LEIR_ERR_UNSUPPORTED, "backend.unsupported", name, 0, 0,
                         "this build of libleir has no CUDA backend");
    return leir__error(LEIR_ERR_NOT_FOUND, "backend.unknown", name, 0, 0,
                       "unknown backend '%s' (interp, cpu or cuda)", name);
  }
  leir_backend *b = calloc(1, sizeof *b);
  if (!b) return leir__error_nomem();
  b->ops = ops;
  leir_status st = read_options(&b->opts, opts);
  if (st != LEIR_OK) {
    free(b);
    return st;
  }
  const char *cc = b->opts.compiler ? b->opts.compiler : getenv("CC");
  if (!cc || !*cc) cc = "cc";
  const char *flags = b->opts.compiler_flags ? b->opts.compiler_flags : getenv("LEIR_CFLAGS");
  if (!flags) flags = default_flags();
  const char *dir = b->opts.cache_dir ? b->opts.cache_dir : getenv("LEIR_CACHE_DIR");
  b->compiler = dup_or_null(cc);
  b->compiler_flags = dup_or_null(flags);
  b->cache_dir = dir && *dir ? dup_or_null(dir) : NULL;
  const char *runner = b->opts.runner && *b->opts.runner ? b->opts.runner : NULL;
  b->runner = dup_or_null(runner);
  if (!b->compiler || !b->compiler_flags || (dir && *dir && !b->cache_dir) ||
      (runner && !b->runner)) {
    leir_backend_free(b);
    return leir__error_nomem();
  }
  b->opts.compiler = b->compiler;
  b->opts.compiler_flags = b->compiler_flags;
  b->opts.cache_dir = b->cache_dir ? b->cache_dir : "";
  b->opts.runner = b->runner;
  st = ops->open(b);
  if (st != LEIR_OK) {
    b->ops = NULL; /* nothing to close */
    leir_backend_free(b);
    return st;
  }
  *out = b;
  return LEIR_OK;
}

void leir_backend_free(leir_backend *b) {
  if (!b) return;
  if (b->ops) b->ops->close(b);
  free(b->compiler);
  free(b->compiler_flags);
  free(b->cache_dir);
  free(b->runner);
  leir__sb_release(&b->compile_log);
  free(b);
}

const char *leir_backend_name(const leir_backend *b) { return b ? b->ops->name : ""; }
/* the 0.1.0 name, kept exported (run.h) */
const char *leir_backend_get_name(const leir_backend *b) { return leir_backend_name(b); }

/* One field of the key, chained through the seed so that "ab","c" and
 * "a","bc" differ. */
static uint64_t key_hash(uint64_t seed, const char *s) {
  return XXH3_64bits_withSeed(s ? s : "", s ? strlen(s) : 0, seed);
}

void leir__backend_key(const leir_backend *b, char *buf, size_t cap) {
  if (!buf || cap == 0) return;
  if (!b) {
    buf[0] = '\0';
    return;
  }
  if (!b->ops->codegen_revision) {
    snprintf(buf, cap, "%s", b->ops->name);
    return;
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  unsigned threads = b->opts.threads ? (unsigned)b->opts.threads : cpus > 0 ? (unsigned)cpus : 1u;
  uint64_t h = key_hash(key_hash(0, b->compiler), b->compiler_flags);
  unsigned gen = b->ops->codegen_revision;
  snprintf(buf, cap, "%s threads=%u cc=%016llx gen=%u%s", b->ops->name, threads,
           (unsigned long long)h, gen, (b->opts.flags & LEIR_BACKEND_FP_CONTRACT) ? " fma" : "");
}

uint32_t leir__backend_model_threads(const leir_backend *b) {
  return b && b->ops->threaded ? b->opts.threads : 0;
}

const char *leir_backend_compile_log(const leir_backend *b) {
  return b && b->compile_log.data && b->compile_log.len ? b->compile_log.data : "";
}

leir_status leir_backend_lower(leir_backend *b, const leir_program *p, char **out,
                               size_t *out_len) {
  if (!b || !p || !out) return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  if (out_len) *out_len = 0;
  leir_kernel *k = NULL;
  leir_status st = leir__kernel_build(b, p, NULL, &k);
  if (st != LEIR_OK) return st;
  leir__strbuf sb = LEIR__STRBUF_INIT;
  st = b->ops->lower(b, k->analysis, &sb);
  leir__kernel_destroy(k);
  if (st != LEIR_OK) {
    leir__sb_release(&sb);
    return st;
  }
  char *text = leir__sb_finish(&sb, out_len);
  if (!text) return leir__error_nomem();
  *out = text;
  return LEIR_OK;
}
