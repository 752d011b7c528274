/**
 * @file
 * libleir — running programs: backends, kernels, seeded inputs,
 * verification (spec/verification.md §1-§3), timing (§4) and program costs.
 *
 * Backends are found by name: "interp" (the reference evaluator, the
 * semantic oracle), "cpu" (LEIR lowered to C, compiled by the system C
 * compiler, run in a sandboxed child process) and "cuda" (LEIR lowered to
 * CUDA C, compiled with NVRTC, run through the CUDA Driver API) when built.
 *
 * Buffers are always exchanged in **signature order** (inputs, then
 * outputs; spec/leir.md §2), as dense row-major arrays whose element type is
 * the declared dtype: f16/bf16 as uint16_t bit patterns, f32 float, f64
 * double, i8/i16/i32/i64 the signed integers, u8 uint8_t, bool one byte
 * holding 0 or 1. Buffer i holds product(shape) * leir_dtype_size(dtype)
 * bytes (one element for a scalar). A program without a signature gets an
 * inferred one (leir_program_infer_signature).
 *
 * Threads: a leir_backend and the kernels made from it are used by one
 * thread at a time; distinct backends are independent. Nothing here prints,
 * exits or installs signal handlers. The cpu backend never forks: it starts
 * the kernel runner and the compiler with posix_spawn (verification.md, "The
 * runner"). A host that sets SIGCHLD to SIG_IGN (or SA_NOCLDWAIT) is
 * supported (the library then waits for the compiler's process group and
 * judges by its output); a host whose SIGCHLD handler reaps every child
 * (waitpid(-1)) takes their exit statuses, so a kernel that crashes is then
 * reported without its signal ("ended abnormally", RUNTIME_ERROR).
 */
#ifndef LEIR_RUN_H
#define LEIR_RUN_H

#include "leir/common.h"
#include "leir/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================
 * Backends
 * ====================================================================== */

/** An opened backend ("interp", "cpu", "cuda") with its options and kernel
 * cache. Opaque; made by leir_backend_open, released with leir_backend_free. */
typedef struct leir_backend leir_backend;

/** Do not cache compiled kernels (neither in memory nor on disk). */
#define LEIR_BACKEND_NO_CACHE 0x1u
/** cpu/cuda: bounds-check every access at run time, not only the indirect
 * ones (slower; for testing the static analysis). The interp always does. */
#define LEIR_BACKEND_CHECK_ALL_BOUNDS 0x2u
/** Open for lowering only: no compiler, driver or device is needed, the run
 * limits (max_buffer_bytes, max_evaluations) do not apply, and kernels
 * cannot be built (LEIR_ERR_UNSUPPORTED). */
#define LEIR_BACKEND_LOWER_ONLY 0x4u
/** cpu/cuda: let the compiler fuse a product and the sum it feeds into one
 * fused multiply-add, rounded once (gcc -ffp-contract=fast, NVRTC
 * --fmad=true), as BLAS libraries and TVM's LLVM code do. Twice the
 * arithmetic throughput of a matmul's inner loop, but results then differ
 * from the interpreter's (which rounds every operation, spec/leir.md §3.3)
 * in the last bits: across backends verification answers CLOSE instead of
 * EQUAL, while two programs that compute each element by the same
 * operations still agree bit for bit on the same backend. Kernels compiled
 * with and without it are cached apart. libleir's own exp and log are
 * written with explicit fma and do not change. Off by default; the interp
 * ignores it (docs/verification.md, "Fused multiply-add"). */
#define LEIR_BACKEND_FP_CONTRACT 0x8u

/** Options of leir_backend_open. Start from LEIR_BACKEND_OPTIONS_INIT or
 * leir_backend_options_init(). */
typedef struct leir_backend_options {
  uint32_t size;               /**< sizeof(leir_backend_options); set by _INIT */
  uint32_t flags;              /**< LEIR_BACKEND_* */
  const char *compiler;        /**< cpu: C compiler (NULL: $CC, else "cc") */
  const char *compiler_flags;  /**< cpu: space-separated flags (NULL: $LEIR_CFLAGS, else
                                * "-O3 -march=native -fopenmp", plus
                                * -mprefer-vector-width=512 on an AVX-512 host);
                                * -ffast-math and -Ofast are refused (they break
                                * bitwise reproducibility) */
  const char *cache_dir;       /**< compiled-kernel directory (NULL: $LEIR_CACHE_DIR if set;
                                * "" = memory cache only) */
  int32_t device;              /**< cuda: device ordinal (default 0) */
  uint32_t threads;            /**< cpu: OpenMP threads (0 = the number of online CPUs) */
  double timeout_s;            /**< wall-clock limit of one execution of one program on
                                * one input set, and of one timed run (default 10) */
  double compile_timeout_s;    /**< cpu/cuda: compiler wall-clock limit (default 120) */
  uint64_t memory_limit_bytes; /**< cpu: address-space growth allowed to a kernel process, and
                                * the address space of the compiler (default 8 GiB) */
  uint64_t max_buffer_bytes;   /**< all buffers of one program, known and intermediate
                                * (default 1 GiB); checked before anything runs. A
                                * verification holds the known buffers of every input set
                                * twice over in the caller, so keep it modest */
  uint64_t max_evaluations;    /**< equation evaluations of one program run (default 2^36);
                                * checked before anything runs */
  /** Added in 0.1.0 (a smaller `size` gets the default): */
  const char *runner;          /**< cpu: path of the leir-runner program that runs the
                                * kernels (copied). NULL or "": $LEIR_RUNNER, else the one
                                * installed beside libleir (libexecdir, reached relatively
                                * from the library's own directory), else the configured
                                * libexecdir (docs/api.md, "Installed files the library
                                * finds"). A path that is not an executable file fails
                                * leir_backend_open with LEIR_ERR_NO_DEVICE */
} leir_backend_options;

/** Defaults of leir_backend_options (the values its fields name). */
#define LEIR_BACKEND_OPTIONS_INIT                                                          \
  { (uint32_t)sizeof(leir_backend_options), 0u, NULL, NULL, NULL, 0, 0u, 10.0, 120.0,      \
    (uint64_t)8 << 30, (uint64_t)1 << 30, (uint64_t)1 << 36, NULL }

/** Fills the first `size` bytes of `*opts` with the defaults of LEIR_BACKEND_OPTIONS_INIT
 * and sets `opts->size` to `size`; pass `sizeof *opts` (bindings, which
 * cannot expand the macro, pass the size of the struct they declare).
 * Errors: LEIR_ERR_ARGUMENT (`opts` NULL, or `size` smaller than the size
 * field or larger than this library's struct). */
LEIR_API leir_status leir_backend_options_init(leir_backend_options *opts, size_t size);

/** Number of backends compiled into this build. A listed backend may still
 * fail to open (no compiler, no device). */
LEIR_API size_t leir_backend_count(void);
/** Name of backend i ("interp", "cpu", then "cuda" when built); static
 * storage; NULL when i is out of range. */
LEIR_API const char *leir_backend_name_at(size_t i);

/** Opens backend `name` (NULL = "cpu"). `opts` may be NULL for defaults
 * (copied; strings are copied). On success *out is a new backend (caller
 * frees with leir_backend_free).
 * Errors: LEIR_ERR_NOT_FOUND (unknown name), LEIR_ERR_UNSUPPORTED (not in
 * this build), LEIR_ERR_NO_DEVICE (cuda without a driver or device; cpu
 * without a working C compiler), LEIR_ERR_ARGUMENT (bad options),
 * LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_backend_open(leir_backend **out, const char *name,
                                       const leir_backend_options *opts);
/** Releases the backend and its kernel cache. Every kernel made from it must
 * be freed first. NULL is a no-op. */
LEIR_API void leir_backend_free(leir_backend *backend);
/** "interp", "cpu", "cuda"; borrowed ("" for NULL). Added in 0.2.0: the
 * name the other getters have (leir_program_name, leir_strategy_name). */
LEIR_API const char *leir_backend_name(const leir_backend *backend);
/** Deprecated alias of leir_backend_name (since 0.2.0), exported for callers
 * linked against 0.1.0. */
LEIR_API const char *leir_backend_get_name(const leir_backend *backend)
    LEIR_DEPRECATED("leir_backend_name");

/** Lowered source text of a valid program ("C" for cpu, CUDA C for cuda).
 * The run limits apply unless the backend was opened with
 * LEIR_BACKEND_LOWER_ONLY. *out is NUL-terminated (caller frees with
 * leir_free).
 * Errors: LEIR_ERR_INVALID / LEIR_ERR_LIMIT / LEIR_ERR_SIGNATURE (static
 * checks, with rule and line:column), LEIR_ERR_UNSUPPORTED (the interp has
 * no source), LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_backend_lower(leir_backend *backend, const leir_program *program,
                                        char **out, size_t *out_len);

/** Compiler output of the most recent compilation on this backend that
 * failed (LEIR_ERR_COMPILE), "" if none; borrowed until the next call on the
 * backend. */
LEIR_API const char *leir_backend_compile_log(const leir_backend *backend);

/* ======================================================================
 * Kernels: a checked, compiled program ready to run on caller buffers
 * ====================================================================== */

/** A checked, compiled program bound to its backend. Opaque; made by
 * leir_kernel_new, released with leir_kernel_free. */
typedef struct leir_kernel leir_kernel;

/** Checks the program (spec/leir.md §3.6 plus the backend's limits) and
 * compiles it, using the backend's cache. The program is copied; the
 * backend must outlive the kernel. Caller frees *out with leir_kernel_free.
 * Errors: LEIR_ERR_INVALID / LEIR_ERR_LIMIT / LEIR_ERR_SIGNATURE (static
 * checks), LEIR_ERR_COMPILE (see leir_backend_compile_log), LEIR_ERR_TIMEOUT
 * (the compiler hung), LEIR_ERR_NO_DEVICE, LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_kernel_new(leir_kernel **out, leir_backend *backend,
                                     const leir_program *program);
/** Releases the kernel (before its backend). NULL is a no-op. */
LEIR_API void leir_kernel_free(leir_kernel *kernel);

/** Number of buffers the kernel takes: its signature, inputs then outputs. */
LEIR_API size_t leir_kernel_buffer_count(const leir_kernel *kernel);
/** Fills *out with signature entry i; name and shape are borrowed from the
 * kernel. Errors: LEIR_ERR_ARGUMENT for NULL or i out of range. */
LEIR_API leir_status leir_kernel_buffer(const leir_kernel *kernel, size_t i,
                                        leir_tensor_decl *out);

/** Runs the kernel once: reads the inputs, writes the outputs (n buffers in
 * signature order, sizes as in the header comment). Programs may read what
 * an output held before (elements they never write keep it). When the run
 * fails, the outputs' contents are unspecified (the cpu backend leaves them
 * untouched; the interp may have written some elements).
 * Errors: LEIR_ERR_ARGUMENT (n or a NULL buffer), LEIR_ERR_RUNTIME (crash,
 * signal, run-time bounds trap, integer division by zero, out of memory in
 * the child: the message says which and where), LEIR_ERR_TIMEOUT,
 * LEIR_ERR_NOMEM, LEIR_ERR_INTERNAL. */
LEIR_API leir_status leir_kernel_run(leir_kernel *kernel, void *const *buffers, size_t n);

/** One-shot convenience: leir_kernel_new + leir_kernel_run + free. */
LEIR_API leir_status leir_run(leir_backend *backend, const leir_program *program,
                              void *const *buffers, size_t n);

/** Size in bytes buffer i of the kernel must have: product(shape) x
 * leir_dtype_size(dtype) (one element for a scalar). Errors:
 * LEIR_ERR_ARGUMENT (NULL, i out of range), LEIR_ERR_LIMIT (does not fit
 * in size_t). */
LEIR_API leir_status leir_kernel_buffer_bytes(const leir_kernel *kernel, size_t i, size_t *out);

/** leir_kernel_run with the size in bytes of every buffer (`sizes` has n
 * entries): before anything runs, each size is compared with
 * leir_kernel_buffer_bytes, and a buffer of any other size (a short array
 * would be read or written past its end) is refused with LEIR_ERR_ARGUMENT,
 * rule "run.buffer-size", subject the tensor's name, and a message giving
 * both sizes. Buffers must still be dense and row-major (C order): the
 * library cannot see strides, so a caller holding strided or column-major
 * arrays copies them to C order first. Errors otherwise as leir_kernel_run.
 * This is the entry point for bindings (ctypes, numpy). */
LEIR_API leir_status leir_kernel_run_sized(leir_kernel *kernel, void *const *buffers,
                                           const size_t *sizes, size_t n);

/** One-shot convenience: leir_kernel_new + leir_kernel_run_sized + free. */
LEIR_API leir_status leir_run_sized(leir_backend *backend, const leir_program *program,
                                    void *const *buffers, const size_t *sizes, size_t n);

/* ======================================================================
 * Seeded inputs (verification.md §1)
 * ====================================================================== */

/** Input sets a verification uses by default. */
#define LEIR_INPUT_SETS_DEFAULT 3u
/** Seed of the inputs by default. */
#define LEIR_SEED_DEFAULT ((uint64_t)1)

/** Fills the program's buffers (n, in signature order) for input set `set`
 * of `seed`: set 0 standard normal, set 1 normal x 10, set 2 uniform
 * [-1, 1] (then repeating); integer inputs uniform inside the valid range of
 * the dimension they index (docs/verification.md), bool Bernoulli(0.5);
 * outputs get the NaN-pattern sentinel. The generator is xoshiro256**
 * seeded by splitmix64 of (seed, set, input index): each input's values
 * depend only on those, never on the other buffers.
 * Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_SIGNATURE, LEIR_ERR_INVALID. */
LEIR_API leir_status leir_program_fill_inputs(const leir_program *program, uint64_t seed,
                                              uint32_t set, void *const *buffers, size_t n);

/* ======================================================================
 * Verification (verification.md §2)
 * ====================================================================== */

/** One table generates the verdicts and their messages: X(NAME, MESSAGE)
 * for each LEIR_VERDICT_NAME. */
#define LEIR_VERDICT_TABLE(X)                                                         \
  X(EQUAL, "every output bitwise identical on every input set")                      \
  X(CLOSE, "within tolerance on every input set, not bitwise identical")             \
  X(MISMATCH, "outside tolerance somewhere")                                          \
  X(INVALID, "a static check failed")                                                 \
  X(COMPILE_ERROR, "the backend compiler rejected the lowered code")                  \
  X(RUNTIME_ERROR, "crash, signal or run-time trap while running")                    \
  X(TIMEOUT, "exceeded the time limit")                                               \
  X(INCONCLUSIVE, "the reference's outputs are mostly not finite on every input set")

/** Outcome of a verification (verification.md §2), in LEIR_VERDICT_TABLE
 * order; LEIR_VERDICT_COUNT moves when a verdict is added. */
typedef enum leir_verdict {
#define LEIR_VERDICT_ENUM_ENTRY(name, msg) LEIR_VERDICT_##name,
  LEIR_VERDICT_TABLE(LEIR_VERDICT_ENUM_ENTRY)
#undef LEIR_VERDICT_ENUM_ENTRY
  LEIR_VERDICT_COUNT /**< number of verdicts in this version */
} leir_verdict;

/** "EQUAL", "CLOSE", ...; static storage; "UNKNOWN" for other values. */
LEIR_API const char *leir_verdict_name(leir_verdict verdict);
/** One-line description of a verdict; static storage. */
LEIR_API const char *leir_verdict_message(leir_verdict verdict);
/** Parses a verdict name ("EQUAL", ...) into *out; LEIR_ERR_ARGUMENT if
 * unknown or NULL. */
LEIR_API leir_status leir_verdict_from_name(const char *name, leir_verdict *out);

/** Pass rule of the Step-TP reference (leir-reference.md §5): close when
 * rtol <= 5e-3 or atol <= 1e-7 or MSE <= 1e-5 (f16: atol < 1.5; f32:
 * atol < 1e-3), with the reference's +1e-8 relative guard. */
#define LEIR_VERIFY_REFERENCE_RULE 0x1u
/** Treat a P, V or B loop that carries a dependence (a reduction across it,
 * a read of another iteration's element) as INVALID
 * (rule "check.parallel-dependence") instead of running it sequentially. */
#define LEIR_VERIFY_STRICT_PARALLEL 0x2u

/** The candidate's class (verification.md §2; docs/verification.md,
 * "Candidate classes"). A strategy's leir_exactness e maps to class e + 1. */
#define LEIR_VERIFY_CLASS_ANY 0u            /**< judged by the per-element tolerance */
#define LEIR_VERIFY_CLASS_EXACT 1u          /**< must be bitwise EQUAL */
#define LEIR_VERIFY_CLASS_REASSOCIATING 2u  /**< judged against a higher-precision truth */

/** Options of leir_verify. Start from LEIR_VERIFY_OPTIONS_INIT or
 * leir_verify_options_init(). */
typedef struct leir_verify_options {
  uint32_t size;        /**< sizeof(leir_verify_options) */
  uint32_t flags;       /**< LEIR_VERIFY_* */
  uint64_t seed;        /**< default LEIR_SEED_DEFAULT */
  uint32_t input_sets;  /**< default 3 (1..64) */
  double rtol;          /**< < 0: by output dtype (f64 1e-9, f32 1e-4, f16/bf16 1e-2) */
  double atol;          /**< < 0: by output dtype (f64 1e-12, f32 1e-6, f16/bf16 1e-3) */
  /** Added in 0.1.0 (a smaller `size` gets the defaults): */
  uint32_t candidate_class;   /**< LEIR_VERIFY_CLASS_* (default ANY) */
  double reassoc_factor;      /**< REASSOCIATING: allowed factor over the reference's own
                               * error against the truth (default 8; >= 1) */
  double min_finite_fraction; /**< INCONCLUSIVE below this finite fraction of a reference
                               * output on every input set (default 0.5; 0 disables) */
} leir_verify_options;

/** Defaults of leir_verify_options: seed 1, 3 input sets, tolerances by
 * dtype, class ANY, reassociation factor 8, INCONCLUSIVE below 50% finite. */
#define LEIR_VERIFY_OPTIONS_INIT                                                      \
  { (uint32_t)sizeof(leir_verify_options), 0u, LEIR_SEED_DEFAULT, 3u, -1.0, -1.0,    \
    LEIR_VERIFY_CLASS_ANY, 8.0, 0.5 }

/** Fills the first `size` bytes of `*opts` with the defaults of LEIR_VERIFY_OPTIONS_INIT
 * and sets `opts->size` to `size`; pass `sizeof *opts` (bindings, which
 * cannot expand the macro, pass the size of the struct they declare).
 * Errors: LEIR_ERR_ARGUMENT (`opts` NULL, or `size` smaller than the size
 * field or larger than this library's struct). */
LEIR_API leir_status leir_verify_options_init(leir_verify_options *opts, size_t size);

/** Comparison of one output over all input sets. */
typedef struct leir_output_report {
  const char *name;      /**< the output's name */
  leir_dtype dtype;      /**< its element type */
  uint64_t elements;     /**< per input set */
  uint64_t differing;    /**< elements not bitwise equal, over all sets */
  uint64_t outside;      /**< elements outside tolerance, over all sets */
  double max_abs_err;    /**< over elements where neither side is NaN/inf-equal */
  double max_rel_err;    /**< |a-b| / |expected| (reference rule: / (|expected|+1e-8)) */
  uint64_t max_ulp;      /**< float outputs: ULP distance in the output dtype */
  double mse;            /**< mean over all compared elements and sets */
  double rtol;           /**< relative tolerance applied */
  double atol;           /**< absolute tolerance applied */
} leir_output_report;

/** Added in 0.1.0: the per-output figures that leir_output_report cannot carry
 * (callers index that array, so it never grows; nor does this one, hence
 * `reserved`). One per output, in the order of leir_verify_report.outputs,
 * at leir_verify_report.output_details. */
typedef struct leir_output_detail {
  double finite_min;  /**< lowest finite (not NaN, not inf) fraction of the reference's output over the input sets */
  double finite_max;  /**< highest such fraction */
  const double *finite_fraction; /**< per input set (input_sets entries); borrowed from the report */
  double reference_err; /**< REASSOCIATING: max |reference - truth| over all sets (0 otherwise) */
  double candidate_err; /**< REASSOCIATING: max |candidate - truth| over all sets (0 otherwise) */
  double reserved[4];   /**< zero */
} leir_output_detail;

/** A verification result. Strings are borrowed from the report and never
 * NULL. Fields past `size` may be added in later versions (the library
 * allocates the report). */
typedef struct leir_verify_report {
  uint32_t size;          /**< sizeof the library's struct (fields may be appended) */
  leir_verdict verdict;   /**< the outcome */
  uint64_t seed;          /**< seed of the inputs */
  uint32_t input_sets;    /**< input sets compared */
  const char *backend;    /**< backend name */
  /** Which program the verdict is about: 0 = reference (before), 1 =
   * candidate (after), -1 = both/none (EQUAL, CLOSE, MISMATCH). */
  int32_t program;
  /** Input set where the verdict was decided (MISMATCH: first failing set;
   * RUNTIME_ERROR/TIMEOUT: the set running), -1 if none. */
  int32_t set;
  /** MISMATCH: first element outside tolerance (flat index and coordinates
   * in `output`), with both values converted to double. */
  const char *output;
  uint64_t index;                /**< MISMATCH: flat index of that element */
  uint32_t rank;                 /**< MISMATCH: entries of `coords` in use */
  int64_t coords[LEIR_MAX_RANK]; /**< MISMATCH: coordinates of that element */
  double expected;               /**< MISMATCH: the reference's value */
  double actual;                 /**< MISMATCH: the candidate's value */
  /** Worst figures over every output (details per output below). */
  double max_abs_err;
  double max_rel_err; /**< worst relative error over every output */
  double mse;         /**< worst mean squared error over every output */
  uint64_t max_ulp;   /**< worst ULP distance over every float output */
  /** INVALID: the failed rule and position in that program. */
  const char *rule;
  uint32_t line;      /**< INVALID: 1-based line (0 unknown) */
  uint32_t column;    /**< INVALID: 1-based column (0 unknown) */
  const char *message; /**< one line: what happened */
  const char *log;     /**< COMPILE_ERROR: the compiler's output; "" otherwise */
  const char *notes;   /**< remarks such as loops whose P/V/B annotation could not be
                        * honoured (they ran sequentially); "" if none */
  double seconds;      /**< wall time of the whole verification */
  size_t noutputs;                   /**< entries of `outputs` */
  const leir_output_report *outputs; /**< one per output, in signature order */
  /** Added in 0.1.0 (check `size` before reading): */
  uint32_t candidate_class; /**< the candidate class judged (LEIR_VERIFY_CLASS_*) */
  double finite_min; /**< lowest finite fraction of any reference output on any set (1 when
                      * there are no float outputs or no run) */
  const leir_output_detail *output_details; /**< noutputs entries, or NULL when no output was compared */
  /** Appended after candidate_class (check `size` before reading): the rule that judged the
   * outputs: "bitwise" (class exact), "tolerance" (class any, or the truth
   * could not be computed: `notes` says why), "reference-rule"
   * (LEIR_VERIFY_REFERENCE_RULE), "truth" (the f64-truth bound: class
   * reassociating, or class exact on a backend opened with
   * LEIR_BACKEND_FP_CONTRACT), "truth-or-tolerance" (class any on such a
   * backend: an element passes either rule); "" when no output was compared
   * (INVALID before the runs). */
  const char *judged_by;
} leir_verify_report;

/** Runs `reference` and `candidate` on the same backend with the same seeded
 * inputs and compares their outputs (verification.md §2). The candidate is
 * checked against the reference's signature (its own, or the inferred one).
 * Returns LEIR_OK whenever a verdict was reached (any verdict, including
 * INVALID or TIMEOUT of either program); *out is then a new report (caller
 * frees with leir_verify_report_free). Other statuses mean no verdict:
 * LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM, LEIR_ERR_NO_DEVICE, LEIR_ERR_INTERNAL.
 * `opts` may be NULL. */
LEIR_API leir_status leir_verify(leir_backend *backend, const leir_program *reference,
                                 const leir_program *candidate, const leir_verify_options *opts,
                                 leir_verify_report **out);
/** Releases a report and its strings. NULL is a no-op. */
LEIR_API void leir_verify_report_free(leir_verify_report *report);

/** One JSON object (one line, no trailing newline) with every field of the
 * report. Caller frees *out with leir_free; `out_len` may be NULL.
 * Errors: LEIR_ERR_ARGUMENT (NULL), LEIR_ERR_NOMEM. Added in 0.2.0: the
 * `_to_json` name of every other JSON form (leir_step_to_json). */
LEIR_API leir_status leir_verify_report_to_json(const leir_verify_report *report, char **out,
                                                size_t *out_len);
/** Deprecated alias of leir_verify_report_to_json (since 0.2.0). */
LEIR_API leir_status leir_verify_report_json(const leir_verify_report *report, char **out,
                                             size_t *out_len)
    LEIR_DEPRECATED("leir_verify_report_to_json");

/** True for EQUAL and CLOSE (never for INCONCLUSIVE). */
LEIR_API int leir_verdict_passes(leir_verdict verdict);

/** "any", "exact", "reassociating"; static; NULL for other values. */
LEIR_API const char *leir_verify_class_name(uint32_t candidate_class);
/** Parses a class name; LEIR_ERR_ARGUMENT if unknown. */
LEIR_API leir_status leir_verify_class_from_name(const char *name, uint32_t *out);

/* ======================================================================
 * Verifiers: many candidates against one reference (verification.md §2)
 *
 * A verifier runs the reference once on every input set and keeps its
 * inputs and outputs (and, when a REASSOCIATING candidate first needs it,
 * the higher-precision truth); each judgement then checks, compiles and
 * runs only the candidate. leir_verifier_judge(v, c, class) reaches the same
 * verdict, figures and messages as leir_verify(backend, reference, c,
 * options with that class) (timing aside). Memory held: the reference's
 * input and output buffers of every input set (plus one set of candidate
 * outputs while judging, plus an f64 copy of the outputs once a
 * reassociating candidate was judged).
 * ====================================================================== */

/** Opaque verifier: a reference program run once on every input set, then
 * judged against candidates (leir_verifier_new; free with
 * leir_verifier_free). */
typedef struct leir_verifier leir_verifier;

/** Options of leir_verifier_new: those of leir_verify_options less the
 * candidate class, which each judgement names. Start from
 * LEIR_VERIFIER_OPTIONS_INIT or leir_verifier_options_init(); a caller's
 * smaller (older) struct is read as far as its `size` goes, the rest keeps
 * the defaults. */
typedef struct leir_verifier_options {
  uint32_t size;              /**< sizeof(leir_verifier_options) */
  uint32_t flags;             /**< LEIR_VERIFY_* (default 0) */
  uint64_t seed;              /**< seed of the input sets (default LEIR_SEED_DEFAULT) */
  uint32_t input_sets;        /**< default 3 (1..64) */
  double rtol;                /**< relative tolerance; < 0 (default -1): by output dtype, as
                               * leir_verify_options.rtol */
  double atol;                /**< absolute tolerance; < 0 (default -1): by output dtype, as
                               * leir_verify_options.atol */
  double reassoc_factor;      /**< REASSOCIATING candidates: allowed factor over the
                               * reference's own error against the truth (default 8; >= 1) */
  double min_finite_fraction; /**< INCONCLUSIVE below this finite fraction of a reference
                               * output on every input set (default 0.5; 0 disables) */
} leir_verifier_options;

/** Defaults of leir_verifier_options: no flags, seed LEIR_SEED_DEFAULT, 3
 * input sets, tolerances by dtype, reassociation factor 8, INCONCLUSIVE
 * below 50% finite. */
#define LEIR_VERIFIER_OPTIONS_INIT                                                      \
  { (uint32_t)sizeof(leir_verifier_options), 0u, LEIR_SEED_DEFAULT, 3u, -1.0, -1.0,    \
    8.0, 0.5 }

/** Sets *opts to the defaults (same as LEIR_VERIFIER_OPTIONS_INIT). */
LEIR_API leir_status leir_verifier_options_init(leir_verifier_options *opts, size_t size);

/** Checks, compiles and runs `reference` on every input set. A reference
 * that fails (INVALID, COMPILE_ERROR, ...) still gives a verifier: every
 * judgement then reports that failure (program 0), as leir_verify would.
 * The reference is copied; the backend must outlive the verifier, which is
 * used by one thread at a time. `opts` may be NULL. Caller frees *out with
 * leir_verifier_free. Errors (no verifier): LEIR_ERR_ARGUMENT,
 * LEIR_ERR_NOMEM, LEIR_ERR_NO_DEVICE, LEIR_ERR_INTERNAL. */
LEIR_API leir_status leir_verifier_new(leir_verifier **out, leir_backend *backend,
                                       const leir_program *reference,
                                       const leir_verifier_options *opts);

/** Judges one candidate of class `candidate_class` (LEIR_VERIFY_CLASS_*).
 * Returns LEIR_OK with a new report (free with leir_verify_report_free)
 * whenever a verdict was reached; other statuses as leir_verify. */
LEIR_API leir_status leir_verifier_judge(leir_verifier *verifier, const leir_program *candidate,
                                         uint32_t candidate_class, leir_verify_report **out);

/** Judges n candidates (classes[i] for candidates[i]; classes may be NULL
 * for all ANY); compiles them together where the backend can. out[i]
 * receives each report (NULL for a candidate whose judgement failed). Returns
 * LEIR_OK when every candidate got a report, else the first failure's
 * status (the other reports are still filled in). */
LEIR_API leir_status leir_verifier_judge_batch(leir_verifier *verifier,
                                               const leir_program *const *candidates,
                                               const uint32_t *classes, size_t n,
                                               leir_verify_report **out);

/** NULL is a no-op. */
LEIR_API void leir_verifier_free(leir_verifier *verifier);

/* ======================================================================
 * Program costs (verification.md §4)
 * ====================================================================== */

/** Static cost of one run of a program (leir_program_cost_get). */
typedef struct leir_program_cost {
  uint64_t evaluations; /**< equation evaluations of one run (implicit inits excluded) */
  uint64_t flops;       /**< sum over equations of (operations per evaluation x evaluations) */
  uint64_t bytes;       /**< distinct elements of the known variables x element size */
  uint64_t reserved[5]; /**< zero; room for later figures without a size change */
} leir_program_cost;

/** Operations per evaluation: one per arithmetic operator (+ - * / // % **),
 * unary minus, function call (exp log sqrt abs erf) and comparison, n-1 per
 * n-ary max/min; if_then_else counts its condition plus the larger of its
 * two branches; & and | count nothing. Index arithmetic is not counted.
 * Errors: LEIR_ERR_SIGNATURE, LEIR_ERR_INVALID, LEIR_ERR_LIMIT. */
LEIR_API leir_status leir_program_cost_get(const leir_program *program, leir_program_cost *out);

/* ======================================================================
 * Timing (verification.md §4)
 * ====================================================================== */

/** Do not flush caches between timed runs. */
#define LEIR_BENCH_NO_FLUSH 0x1u

/** Options of leir_kernels_time and leir_bench. Start from
 * LEIR_BENCH_OPTIONS_INIT or leir_bench_options_init(). */
typedef struct leir_bench_options {
  uint32_t size;        /**< sizeof(leir_bench_options) */
  uint32_t flags;       /**< LEIR_BENCH_* */
  uint32_t warmup;      /**< untimed runs per kernel first (default 3) */
  uint32_t min_runs;    /**< timed runs per kernel, at least (default 10) */
  uint32_t max_runs;    /**< timed runs per kernel, at most (default 10000) */
  double min_seconds;   /**< total timed seconds per kernel, at least (default 0.05) */
  double max_seconds;   /**< stop adding runs after this much wall time (default 60) */
  uint64_t seed;        /**< input seed (set 0 is used); default LEIR_SEED_DEFAULT */
} leir_bench_options;

/** Defaults of leir_bench_options (the values its fields name). */
#define LEIR_BENCH_OPTIONS_INIT \
  { (uint32_t)sizeof(leir_bench_options), 0u, 3u, 10u, 10000u, 0.05, 60.0, LEIR_SEED_DEFAULT }

/** Fills the first `size` bytes of `*opts` with the defaults of LEIR_BENCH_OPTIONS_INIT
 * and sets `opts->size` to `size`; pass `sizeof *opts` (bindings, which
 * cannot expand the macro, pass the size of the struct they declare).
 * Errors: LEIR_ERR_ARGUMENT (`opts` NULL, or `size` smaller than the size
 * field or larger than this library's struct). */
LEIR_API leir_status leir_bench_options_init(leir_bench_options *opts, size_t size);

/** Timing of one kernel (an array of them is filled, one per kernel). */
typedef struct leir_timing {
  double median_s;      /**< median of the timed runs, in seconds (0 when no run) */
  double min_s;         /**< fastest timed run, in seconds */
  double max_s;         /**< slowest timed run, in seconds */
  double mean_s;        /**< mean of the timed runs, in seconds */
  uint32_t runs;        /**< timed runs */
  uint64_t flops;       /**< floating-point operations of one run (leir_program_cost.flops) */
  uint64_t bytes;       /**< bytes of one run (leir_program_cost.bytes) */
  double gflops;        /**< flops / median / 1e9 */
  double gbytes_per_s;  /**< bytes / median / 1e9 */
  double speedup;       /**< median of kernel 0 / this median (1 for kernel 0) */
  /** Added in 0.1.0 (in place of reserved space): the spread. */
  double q1_s;          /**< first quartile of the runs, in seconds (linear interpolation
                         * between order statistics) */
  double q3_s;          /**< third quartile of the runs, in seconds */
  double spread;        /**< (q3 - q1) / median: the relative interquartile range */
  uint32_t threads;     /**< threads a kernel may use (cpu: the backend's `threads`,
                         * resolved; interp: 1) */
  uint32_t noisy;       /**< 1 when spread > LEIR_TIMING_NOISY (0.1): the median is
                         * not to be trusted alone; compare with leir_kernels_compare */
  double reserved[2];   /**< zero; room for later figures without a size change */
} leir_timing;

/** Threshold of leir_timing.noisy: a relative interquartile range (spread)
 * above 0.1 marks a timing as noisy. */
#define LEIR_TIMING_NOISY 0.1

/** Times n kernels of one backend in alternation in the same process (one
 * timed run of each per round, caches flushed between runs), each on its
 * own seeded inputs. Rounds continue until every kernel has min_runs runs
 * and min_seconds of timed runs, or max_runs, or max_seconds of wall time;
 * once min_runs are done, also after max(1 s, 20 x min_seconds) of wall
 * time (tiny kernels, where the flushes would dominate). out has n
 * entries. Errors: as leir_kernel_run. */
LEIR_API leir_status leir_kernels_time(leir_kernel *const *kernels, size_t n,
                                       const leir_bench_options *opts, leir_timing *out);

/* ---- comparing two kernels with a stated confidence ---------------------- */

/** Options of leir_kernels_compare. Start from LEIR_COMPARE_OPTIONS_INIT or
 * leir_compare_options_init(); a caller's smaller (older) struct is read as
 * far as its `size` goes, the rest keeps the defaults. */
typedef struct leir_compare_options {
  uint32_t size;        /**< sizeof(leir_compare_options) */
  uint32_t flags;       /**< LEIR_BENCH_NO_FLUSH */
  uint32_t warmup;      /**< untimed runs of each kernel first (default 3) */
  uint32_t min_rounds;  /**< rounds (one run of A, one of B) before deciding (default 10) */
  uint32_t max_rounds;  /**< give up (UNDECIDED) after this many rounds (default 400) */
  double max_seconds;   /**< ... or this much wall time (default 20) */
  double confidence;    /**< of the decision, in (0.5, 1) (default 0.99) */
  double min_effect;    /**< relative difference below which A and B count as
                         * equally fast (default 0.02: a 2% difference) */
  uint64_t seed;        /**< input seed (set 0 is used); default LEIR_SEED_DEFAULT */
  /** Added in 0.2.0 (a smaller `size` gets NULL): */
  const volatile int *cancel; /**< when non-NULL and *cancel becomes nonzero (another
                               * thread or a signal handler sets it), the comparison
                               * stops before its next round with LEIR_ERR_CANCELLED
                               * and the rounds so far in `out`; default NULL */
} leir_compare_options;

/** Defaults of leir_compare_options: no flags, 3 warm-up runs, 10 to 400
 * rounds, 20 s, confidence 0.99, minimum effect 0.02, seed
 * LEIR_SEED_DEFAULT, no cancellation flag. */
#define LEIR_COMPARE_OPTIONS_INIT                                                     \
  { (uint32_t)sizeof(leir_compare_options), 0u, 3u, 10u, 400u, 20.0, 0.99, 0.02,      \
    LEIR_SEED_DEFAULT, NULL }

/** Sets *opts to the defaults (same as LEIR_COMPARE_OPTIONS_INIT). */
LEIR_API leir_status leir_compare_options_init(leir_compare_options *opts, size_t size);

/** Outcome of leir_kernels_compare: how kernel A compares with kernel B. */
typedef enum leir_order {
  LEIR_ORDER_UNDECIDED = 0, /**< no decision at the requested confidence */
  LEIR_ORDER_FASTER = 1,    /**< A is faster than B */
  LEIR_ORDER_SLOWER = 2,    /**< A is slower than B */
  LEIR_ORDER_SAME = 3       /**< within min_effect of each other */
} leir_order;

/** "undecided", "faster", "slower", "same"; static. */
LEIR_API const char *leir_order_name(leir_order order);

/** Result of leir_kernels_compare. The caller provides it with `size` set
 * (`leir_comparison c = {.size = sizeof c};`); the library fills the
 * first `size` bytes, so a caller built against an older, smaller struct
 * gets its part. */
typedef struct leir_comparison {
  uint32_t size;        /**< sizeof the caller's struct; set by the caller */
  leir_order order;     /**< the decision (UNDECIDED when max_rounds or max_seconds ran
                         * out first) */
  double ratio;         /**< median over rounds of time(B) / time(A): > 1 when A is faster */
  double ratio_lo;      /**< lower end of the distribution-free confidence interval of
                         * that median */
  double ratio_hi;      /**< upper end of that interval */
  double confidence;    /**< the interval's coverage (>= the requested confidence) */
  uint32_t rounds;      /**< rounds measured */
  uint32_t threads;     /**< as leir_timing.threads */
  leir_timing a;        /**< kernel A's timed runs (its spread says how noisy; speedup 1) */
  leir_timing b;        /**< kernel B's timed runs (speedup: median of A / median of B) */
} leir_comparison;

/** One JSON object (one line, no trailing newline) with every field of the
 * timing under the field's name (median_s, min_s, max_s, mean_s, q1_s,
 * q3_s, spread, noisy, threads, runs, flops, bytes, gflops, gbytes_per_s,
 * speedup); doubles read back exactly, NaN and infinities as the strings
 * "nan", "inf", "-inf". Caller frees *out with leir_free; `out_len` may be
 * NULL. Errors: LEIR_ERR_ARGUMENT (NULL), LEIR_ERR_NOMEM. Added in 0.2.0:
 * the `_to_json` name of every other JSON form. */
LEIR_API leir_status leir_timing_to_json(const leir_timing *timing, char **out, size_t *out_len);
/** Deprecated alias of leir_timing_to_json (since 0.2.0). */
LEIR_API leir_status leir_timing_json(const leir_timing *timing, char **out, size_t *out_len)
    LEIR_DEPRECATED("leir_timing_to_json");

/** Is kernel A faster than kernel B? Runs them in alternation in the same
 * process (one run of A, one of B per round, caches flushed before each
 * unless LEIR_BENCH_NO_FLUSH), pairs the two runs of each round (both see
 * the same load) and puts a distribution-free confidence interval (binomial
 * order statistics) on the median of time(B)/time(A). FASTER when the
 * interval lies above 1 + min_effect, SLOWER when below 1/(1 + min_effect),
 * SAME when inside [1/(1 + min_effect), 1 + min_effect]; otherwise more
 * rounds are run (in batches of min_rounds) until max_rounds or
 * max_seconds, then UNDECIDED. Sequential looks cost a little of the stated
 * confidence; docs/verification.md gives the measured error rates.
 * Budgets: no round starts after max_seconds, and no run within a round
 * (the B run after the A run) starts after it either; the round cut short
 * is dropped, so the overshoot is at most one kernel run. With a `cancel`
 * flag the rounds are timed one per backend call and the flag is read
 * before each round (and before the warm-up): a flag already set returns
 * LEIR_ERR_CANCELLED at once with 0 rounds. On LEIR_ERR_CANCELLED `out` holds
 * the rounds measured so far (order UNDECIDED unless already decided).
 * Errors: as leir_kernels_time; LEIR_ERR_CANCELLED; LEIR_ERR_ARGUMENT when
 * out->size is below the size field or above this library's struct. */
LEIR_API leir_status leir_kernels_compare(leir_kernel *a, leir_kernel *b,
                                          const leir_compare_options *opts,
                                          leir_comparison *out);

/** Convenience: builds the kernels, times them, frees them. */
LEIR_API leir_status leir_bench(leir_backend *backend, const leir_program *const *programs,
                                size_t n, const leir_bench_options *opts, leir_timing *out);

#ifdef __cplusplus
}
#endif
#endif /* LEIR_RUN_H */
