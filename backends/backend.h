/*
 * The internal backend interface (see backends/README.md).
 *
 * A backend is a table of operations (leir__backend_ops). The generic layer
 * (backends/registry.c, kernel.c, verify.c, bench.c) does everything that
 * does not depend on the target: static checks and limits, the effective
 * signature, seeded inputs, comparison and verdicts, timing statistics,
 * FLOP/byte counts. A backend only lowers, compiles, executes and times.
 *
 * Buffers given to `execute` and `time` are host buffers in signature order
 * (inputs then outputs), laid out as described in include/leir/run.h. A
 * backend that runs elsewhere (a GPU) owns its device buffers and copies
 * host<->device itself; intermediates are the backend's business (their
 * shapes are in the analysis: buffers nknown..nbuffers-1).
 */
#ifndef LEIR_BACKEND_H
#define LEIR_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "clock.h"
#include "cost.h"
#include "leir/run.h"
#include "strbuf.h"

typedef struct leir__backend_ops leir__backend_ops;

struct leir_backend {
  const leir__backend_ops *ops;
  leir_backend_options opts; /* string fields point at the copies below */
  char *compiler;            /* resolved: opts > $CC > "cc" (cpu) */
  char *compiler_flags;      /* resolved: opts > $LEIR_CFLAGS > default */
  char *cache_dir;           /* resolved: opts > $LEIR_CACHE_DIR; NULL = memory only */
  char *runner;              /* opts.runner copied; NULL = search (backends/sandbox.h) */
  leir__strbuf compile_log;  /* log of the last failed compilation */
  uint32_t live_kernels;     /* kernels not yet freed (debug aid) */
  void *impl;                /* backend state */
};

struct leir_kernel {
  leir_backend *backend;
  leir_program *program;      /* private clone carrying the effective signature */
  leir__analysis *analysis;   /* of `program` */
  uint32_t nknown;            /* signature entries = analysis buffers 0..nknown-1 */
  leir_program_cost cost;
  uint64_t buffer_bytes;      /* all buffers, known and intermediate */
  leir__strbuf notes;         /* one line per P/V/B loop that runs sequentially
                               * (NUL-terminated) */
  uint32_t nsequential;       /* how many; the first one's position and reason: */
  uint32_t seq_line, seq_col;
  char seq_message[320];
  leir__strbuf log;           /* compiler output of this kernel (failures);
                               * NUL-terminated by leir__kernels_prepare */
  leir_status prepared;       /* status of ops->prepare for this kernel */
  uint32_t threads;           /* threads of its executions (0: the backend's
                               * count; the verifier runs on 1: a verdict
                               * never depends on it) */
  void *impl;                 /* backend data (compiled object, ...) */
};

/* Where an execution failed. */
typedef struct leir__exec_result {
  int32_t set; /* input set running when it failed, -1 if unknown */
} leir__exec_result;

/* Samples of a timing session: samples[k * max_runs + r] for kernel k. */
typedef struct leir__samples {
  double *samples;
  uint32_t max_runs;
  uint32_t *runs; /* per kernel */
} leir__samples;

struct leir__backend_ops {
  const char *name;
  uint32_t version; /* part of every cache key: bump when lowering changes */

  /* Sets up b->impl. LEIR_ERR_NO_DEVICE when the backend cannot run here
   * (no compiler, no driver, no device), with a message saying why. */
  leir_status (*open)(leir_backend *b);
  void (*close)(leir_backend *b);

  /* Lowered source of an analyzed program; LEIR_ERR_UNSUPPORTED if the
   * backend has none. */
  leir_status (*lower)(leir_backend *b, const leir__analysis *a, leir__strbuf *out);

  /* Compiles n kernels (their program/analysis are set); a backend may run
   * its compilers concurrently. Sets ks[i]->prepared and ks[i]->impl; on
   * LEIR_ERR_COMPILE puts the compiler's output in ks[i]->log. Returns
   * LEIR_OK when it ran (even if some kernels failed); other statuses are
   * errors of the backend itself. */
  leir_status (*prepare)(leir_backend *b, leir_kernel *const *ks, size_t n);

  /* Runs a prepared kernel on nsets buffer sets (sets[s][i] = buffer i of
   * set s, host memory, signature order). Outputs are written only on
   * success. LEIR_ERR_RUNTIME / LEIR_ERR_TIMEOUT with the last error set
   * and res->set naming the failing set. */
  leir_status (*execute)(leir_backend *b, leir_kernel *k, void *const *const *sets, size_t nsets,
                         leir__exec_result *res);

  /* Timing protocol (verification.md §4) for n prepared kernels, kernel k
   * on buffers bufs[k]: opts->warmup untimed runs each, then rounds of one
   * timed run per kernel in order (caches flushed before each timed run
   * unless LEIR_BENCH_NO_FLUSH) until every kernel has >= min_runs runs and
   * >= min_seconds in total, or max_runs, or max_seconds of wall time, or
   * (min_runs done) max(1 s, 20 x min_seconds) of wall time.
   * Seconds per run go to out. Errors as execute (res->set = kernel index). */
  leir_status (*time)(leir_backend *b, leir_kernel *const *ks, size_t n,
                      void *const *const *bufs, const leir_bench_options *opts,
                      leir__samples *out, leir__exec_result *res);

  /* Frees k->impl. */
  void (*release)(leir_backend *b, leir_kernel *k);

  /* Optional (NULL: the caller executes kernel by kernel). Runs n prepared
   * kernels with the same known buffers (shapes and dtypes; the verifier's
   * candidates) one after the other, each on the nsets input sets sets[s]
   * (only the inputs are read). Kernel j's output buffer i of set s goes to
   * outs[(j * nsets + s) * nknown + i] (entries of inputs are ignored); the
   * outputs start as the sentinel, as the verifier fills them. Threads:
   * those of ks[0]. Returns LEIR_OK when every kernel ran; otherwise the
   * status of the first kernel that failed, as execute would (last error,
   * res->set), with *done = its index: kernels before it ran and have
   * their outputs, later ones did not run. Other statuses (*done = 0 and
   * nothing ran) are failures of the backend. */
  leir_status (*execute_batch)(leir_backend *b, leir_kernel *const *ks, size_t n,
                               void *const *const *sets, size_t nsets, void *const *outs,
                               leir__exec_result *res, size_t *done);

  /* Whether LEIR_BACKEND_FP_CONTRACT changes the arithmetic of its kernels
   * (cpu, cuda: the compiler may fuse a product into the sum it feeds; the
   * interpreter ignores the flag). The verifier judges the float outputs of
   * such a backend against the f64 truth (verification.md, "Fused
   * multiply-add"). */
  bool honours_fp_contract;

  /* What callers ask of a backend instead of comparing its name. */
  /* Revision of the code it generates for a program (LEIR__*_CODEGEN_REVISION
   * below), part of its leir__backend_key; 0: it generates no code (the
   * interpreter), and its key is its name. */
  uint32_t codegen_revision;
  /* Its kernels run on leir_backend_options.threads threads (0: every online
   * CPU), its parallel loops as the cost model assumes; otherwise on one. */
  bool threaded;
};

/* NUL-terminates a strbuf so its data can be used as a C string (""
 * when empty or after an allocation failure). */
static inline const char *leir__sb_terminate(leir__strbuf *b) {
  if (!leir__sb_reserve(b, 1) || !b->data) return "";
  b->data[b->len] = '\0';
  return b->data;
}

/* The registered backends (backends/registry.c). */
extern const leir__backend_ops leir__interp_ops;
extern const leir__backend_ops leir__cpu_ops;
#ifdef LEIR_HAVE_CUDA
extern const leir__backend_ops leir__cuda_ops;
#endif

/* Revision of the code a compiled backend generates for a program: raised
 * whenever the lowering of some program changes (2: local buffers in the
 * storage of their output, reciprocals of loop-invariant divisors), so that
 * the measurement database never answers for code it did not time. */
#define LEIR__CPU_CODEGEN_REVISION 2
#define LEIR__CUDA_CODEGEN_REVISION 1

/* What a measurement made on backend b depends on besides the program and
 * the machine, as text for the measurement database's backend column
 * (search/db.c): the name, and for compiled backends the thread count, a
 * hash of the compiler, its flags, the code generation revision and
 * LEIR_BACKEND_FP_CONTRACT ("cpu threads=2 cc=1f2e3d4c5b6a7988 gen=2 fma").
 * The interp's is its name. */
void leir__backend_key(const leir_backend *b, char *buf, size_t cap);

/* The threads the analytic cost model (backends/cost_model.h) should give
 * the parallel loops of code that runs on b: the CPU backend's configured
 * count (leir_backend_options.threads; 0 when unset), else 0 (the model's
 * default: the host's CPUs). 0 for NULL. */
uint32_t leir__backend_model_threads(const leir_backend *b);

/* ---- generic helpers for backends -------------------------------------- */

/* Builds a kernel for `program` without preparing it: clone, effective
 * signature (or `sig` when non-NULL: the declarations of another program,
 * by name), analysis, backend limits, cost, notes. On a check failure
 * returns that status (last error set) and *out is NULL. */
leir_status leir__kernel_build(leir_backend *b, const leir_program *program,
                               const leir_program *sig_from, leir_kernel **out);
/* Frees a kernel (releases backend data if prepared). */
void leir__kernel_destroy(leir_kernel *k);
/* Calls ops->prepare and publishes the log of a failed compilation to
 * b->compile_log. */
leir_status leir__kernels_prepare(leir_backend *b, leir_kernel *const *ks, size_t n);
void leir__kernel_publish_log(leir_kernel *k);

/* Fills known buffers 0..nknown-1 of an analysis with the seeded inputs of
 * `set` (backends/inputs.c); outputs get the sentinel. */
leir_status leir__fill_inputs(leir__analysis *a, uint32_t nknown, uint64_t seed, uint32_t set,
                              void *const *buffers);

/* leir__program_cost, leir__buffer_bytes: lib/cost.h. */

/* leir__now, the monotonic clock in seconds: lib/clock.h (included above). */

/* Flushes the CPU caches by touching a buffer larger than the last-level
 * cache (allocated once per call site through *scratch; free with free()). */
void leir__flush_cpu_cache(void **scratch, size_t *scratch_bytes);

/* Sorts and summarizes samples into t (median, min, max, mean, runs). */
void leir__timing_from_samples(leir_timing *t, const double *samples, uint32_t runs);

/* ---- compilation cache (verification.md §5) ---------------------------- */

/* XXH3-64 of (backend name and version, compiler identity, flags, source). */
uint64_t leir__cache_key(const leir__backend_ops *ops, const char *compiler_id,
                         const char *flags, const char *source, size_t source_len);
/* "<dir>/<16 hex digits><ext>" into buf; false if it does not fit. */
bool leir__cache_path(char *buf, size_t cap, const char *dir, uint64_t key, const char *ext);
/* Copies file `src` into the cache atomically (temporary file + rename).
 * Best effort: failures are ignored (the cache is an optimization). */
void leir__cache_store_file(const char *dir, uint64_t key, const char *ext, const char *src);
/* Stores bytes atomically (for backends that cache in-memory images). */
void leir__cache_store_bytes(const char *dir, uint64_t key, const char *ext, const void *data,
                             size_t len);
/* Reads a cached artifact; NULL when absent. Caller frees. Every entry is
 * bound to its key (header with key, length, checksum); an entry that
 * fails the check, or anything else at its path, is evicted. */
void *leir__cache_load_bytes(const char *dir, uint64_t key, const char *ext, size_t *len);
/* Copies a cached artifact (checked as above) into the new file `dst`
 * (created with O_EXCL, mode 0700); false when absent or evicted. */
bool leir__cache_load_file(const char *dir, uint64_t key, const char *ext, const char *dst);

#endif
