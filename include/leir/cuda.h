/**
 * @file
 * libleir — the CUDA backend: LEIR -> CUDA C lowering, NVRTC compilation to
 * PTX, and execution/timing through the CUDA Driver API (loaded at run time
 * with dlopen("libcuda.so.1"); the library never links against the driver).
 *
 * Lowering and compilation work on machines without a GPU; execution returns
 * LEIR_ERR_NO_DEVICE there. Rules (bound loops, memory placement, barriers,
 * caches) are in docs/cuda.md. Thread safety: every call may be made from
 * any thread; the Driver API state is initialised once per process.
 */
#ifndef LEIR_CUDA_H
#define LEIR_CUDA_H

#include "leir/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Fused multiply-add contraction in the generated code. Off by default so
 * that GPU arithmetic rounds like the CPU evaluator's. */
#define LEIR_CUDA_FMAD 0x1u
/** Leave the helper prelude out of the lowered source (leir_cuda_prelude()
 * gives it), so several programs can share one translation unit. */
#define LEIR_CUDA_NO_PRELUDE 0x2u

/** Options of the CUDA lowering and compilation. Start from
 * LEIR_CUDA_OPTIONS_INIT or leir_cuda_options_init(). */
typedef struct leir_cuda_options {
  uint32_t size;             /**< sizeof(leir_cuda_options) */
  uint32_t flags;            /**< LEIR_CUDA_* */
  const char *arch;          /**< NVRTC virtual architecture, e.g. "compute_90"; NULL: the
                              * device's when one is present, else $LEIR_CUDA_ARCH, else
                              * "compute_90" */
  const char *kernel_prefix; /**< kernel names are PREFIX "nest" N; NULL = "leir_" */
} leir_cuda_options;

/** Defaults of leir_cuda_options: no flags, architecture and prefix chosen
 * as their fields say. */
#define LEIR_CUDA_OPTIONS_INIT { (uint32_t)sizeof(leir_cuda_options), 0u, NULL, NULL }

/** Fills the first `size` bytes of `*opts` with the defaults of LEIR_CUDA_OPTIONS_INIT
 * and sets `opts->size` to `size`; pass `sizeof *opts` (bindings, which
 * cannot expand the macro, pass the size of the struct they declare).
 * Errors: LEIR_ERR_ARGUMENT (`opts` NULL, or `size` smaller than the size
 * field or larger than this library's struct). */
LEIR_API leir_status leir_cuda_options_init(leir_cuda_options *opts, size_t size);

/** Lowers a program to CUDA C: one kernel per top-level nest. The program
 * must pass leir_program_check (against its signature, or an inferred one).
 * *source receives the CUDA C text and *report (may be NULL) the lowering
 * report: each kernel's launch geometry, loops run inside the thread,
 * implicit initializations and memory placement notes (caller frees both
 * with leir_free).
 * Errors: LEIR_ERR_INVALID (failed static check; or a bound loop carrying a
 * dependence: rule "cuda.bound-dependence", subject = the loop, message
 * naming the tensor), LEIR_ERR_SIGNATURE, LEIR_ERR_NOMEM, LEIR_ERR_ARGUMENT. */
LEIR_API leir_status leir_cuda_lower(const leir_program *program, const leir_cuda_options *opts,
                                     char **source, char **report);

/** The device helper functions a lowered source starts with; static storage. */
LEIR_API const char *leir_cuda_prelude(void);

/** Compiles CUDA C source with NVRTC to PTX. Results are cached by the XXH3
 * hash of (source, NVRTC version, options, backend version) in memory and,
 * when $LEIR_CACHE_DIR is set, in that directory. *ptx (caller frees with
 * leir_free) is NUL-terminated; *log (may be NULL; caller frees) receives
 * the compiler log on LEIR_ERR_COMPILE.
 * Errors: LEIR_ERR_COMPILE, LEIR_ERR_UNSUPPORTED (built without NVRTC, or
 * libnvrtc cannot be loaded), LEIR_ERR_NOMEM, LEIR_ERR_ARGUMENT. */
LEIR_API leir_status leir_cuda_compile_source(const char *source, size_t len,
                                              const leir_cuda_options *opts, char **ptx,
                                              char **log);

/** leir_cuda_lower followed by leir_cuda_compile_source. */
LEIR_API leir_status leir_cuda_compile(const leir_program *program, const leir_cuda_options *opts,
                                       char **ptx, char **log);

/** What leir_cuda_device reports about device 0. The caller sets `size`
 * (sizeof); the library fills the struct as far as that size goes, so a
 * caller built against an older header gets the fields it knows. */
typedef struct leir_cuda_device_info {
  uint32_t size;          /**< sizeof(leir_cuda_device_info), set by the caller */
  char name[256];         /**< device name, NUL-terminated */
  int compute_major;      /**< compute capability, major */
  int compute_minor;      /**< compute capability, minor */
  int multiprocessors;    /**< streaming multiprocessors */
  uint64_t global_memory; /**< bytes of device memory */
  uint32_t l2_bytes;      /**< bytes of L2 cache */
  int driver_version;     /**< e.g. 13000 */
} leir_cuda_device_info;

/** Probes the driver and device 0 and, when `info` is not NULL, fills *info
 * up to info->size. Errors: LEIR_ERR_NO_DEVICE (with a message saying
 * whether the driver library or a device is missing) when none is usable;
 * never crashes on a machine without a GPU. LEIR_ERR_ARGUMENT when
 * info->size is 0 or larger than this library's struct. */
LEIR_API leir_status leir_cuda_device(leir_cuda_device_info *info);

/** NVRTC identity ("NVRTC 13.0") or the reason it is unavailable; static. */
LEIR_API const char *leir_cuda_compiler(void);

/** Runs a program once on the GPU. `buffers[i]` is the host memory of
 * signature entry i (inputs read, outputs written back in place; outputs
 * keep their initial contents where the program does not write them).
 * Errors: LEIR_ERR_NO_DEVICE, LEIR_ERR_INVALID, LEIR_ERR_COMPILE,
 * LEIR_ERR_RUNTIME (launch failure or a run-time bounds trap: the message
 * names the tensor and subscript), LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_cuda_run(const leir_program *program, const leir_cuda_options *opts,
                                   void *const *buffers, size_t nbuffers);

/** Result of leir_cuda_time. The caller sets `size` (sizeof); the library
 * fills the struct as far as that size goes. */
typedef struct leir_cuda_timing {
  uint32_t size;     /**< sizeof(leir_cuda_timing), set by the caller */
  uint32_t runs;     /**< timed runs */
  double median_ms;  /**< median kernel time of one run, milliseconds */
  double min_ms;     /**< fastest run */
  double max_ms;     /**< slowest run */
  double compile_ms; /**< lowering + NVRTC (0 on a cache hit) */
} leir_cuda_timing;

/** Options of leir_cuda_time. Start from LEIR_CUDA_TIMING_OPTIONS_INIT or
 * leir_cuda_timing_options_init(). */
typedef struct leir_cuda_timing_options {
  uint32_t size;       /**< sizeof(leir_cuda_timing_options) */
  uint32_t warmup;     /**< default 3 */
  uint32_t min_runs;   /**< default 10 */
  double min_total_ms; /**< default 50 */
  int flush_l2;        /**< write an L2-sized buffer before every timed run (default 1) */
} leir_cuda_timing_options;

/** Defaults of leir_cuda_timing_options. */
#define LEIR_CUDA_TIMING_OPTIONS_INIT { (uint32_t)sizeof(leir_cuda_timing_options), 3u, 10u, 50.0, 1 }

/** Fills the first `size` bytes of `*opts` with the defaults of LEIR_CUDA_TIMING_OPTIONS_INIT
 * and sets `opts->size` to `size`; pass `sizeof *opts` (bindings, which
 * cannot expand the macro, pass the size of the struct they declare).
 * Errors: LEIR_ERR_ARGUMENT (`opts` NULL, or `size` smaller than the size
 * field or larger than this library's struct). */
LEIR_API leir_status leir_cuda_timing_options_init(leir_cuda_timing_options *opts, size_t size);

/** Times the program's kernels with CUDA events (verification.md §4): all
 * kernels of one run between two events, warm-up runs first, an L2 flush
 * between runs. `buffers` as for leir_cuda_run (outputs are written).
 * Errors as leir_cuda_run. */
LEIR_API leir_status leir_cuda_time(const leir_program *program, const leir_cuda_options *opts,
                                    const leir_cuda_timing_options *topts, void *const *buffers,
                                    size_t nbuffers, leir_cuda_timing *out);

#ifdef __cplusplus
}
#endif
#endif /* LEIR_CUDA_H */
