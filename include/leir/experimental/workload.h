/**
 * @file
 * libleir — the workload catalogue
 * (experimental: no ABI or API promise: any release may change or remove
 * it; define LEIR_EXPERIMENTAL before including this header, see
 * leir/experimental/experimental.h).
 *
 * A catalogue is a directory of YAML files, one workload each (the Step-TP
 * workloads are in workloads/ of the source tree and installed under
 * DATADIR/leir/workloads; docs/workloads.md describes the format). A workload
 * has integer and float parameters in the reference's order (the corpus's
 * `shape_args`), a default, a small and a sampling range for each, the input
 * and output tensors (with value domains) and the LEIR text as a template
 * whose `$NAME` and `$(EXPR)` holes are filled from the parameters.
 * Emitting a workload expands the template, fixes the signature, checks the
 * program and returns it as a program file (`*.leir.yaml`) and/or as a
 * leir_program.
 *
 * Catalogue files are untrusted input: malformed files are reported through
 * leir_status and the per-thread last error (with the file and line) and
 * never crash. Expressions are evaluated with overflow checks and depth
 * limits.
 *
 * Threads: a catalogue is immutable after leir_catalog_open and may be read
 * by several threads at once.
 */
#ifndef LEIR_EXPERIMENTAL_WORKLOAD_H
#define LEIR_EXPERIMENTAL_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "leir/experimental/experimental.h"
#include "leir/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque catalogue of workloads (leir_catalog_open, leir_catalog_new; free
 * with leir_catalog_free). */
typedef struct leir_catalog leir_catalog;
/** Opaque workload, owned by its catalogue (valid until leir_catalog_free). */
typedef struct leir_workload leir_workload;

/** Options of leir_catalog_open. Start from LEIR_CATALOG_OPTIONS_INIT or
 * leir_catalog_options_init(). */
typedef struct leir_catalog_options {
  uint32_t size; /**< sizeof(leir_catalog_options) */
  /** Directory of *.yaml workload files. NULL: the environment variable
   * LEIR_WORKLOADS_DIR, else DATADIR/leir/workloads installed beside the
   * library (reached relatively from its own directory, so a moved install
   * finds its own), else the configured DATADIR/leir/workloads
   * (docs/workloads.md). */
  const char *dir;
} leir_catalog_options;

/** Defaults of leir_catalog_options: dir NULL. */
#define LEIR_CATALOG_OPTIONS_INIT {(uint32_t)sizeof(leir_catalog_options), NULL}

/** Writes LEIR_CATALOG_OPTIONS_INIT into the first `size` bytes of *opts
 * (the sized form of every `_options_init`, for bindings). Errors:
 * LEIR_ERR_ARGUMENT (NULL, a size below the size field or above this
 * library's struct). */
LEIR_API leir_status leir_catalog_options_init_sized(leir_catalog_options *opts, size_t size);
/** Sets the whole *opts to LEIR_CATALOG_OPTIONS_INIT; NULL is a no-op.
 * Deprecated: use leir_catalog_options_init_sized(opts, sizeof *opts). */
LEIR_API void leir_catalog_options_init(leir_catalog_options *opts)
    LEIR_DEPRECATED("leir_catalog_options_init_sized");

/** Loads every *.yaml file of the directory (sorted by file name). Errors:
 * LEIR_ERR_NOT_FOUND (no directory), LEIR_ERR_IO, LEIR_ERR_PARSE (a
 * malformed file: the error's subject is the file), LEIR_ERR_LIMIT. The
 * caller frees *out with leir_catalog_free. */
LEIR_API leir_status leir_catalog_open(leir_catalog **out, const leir_catalog_options *opts);

/** An empty catalogue, for leir_catalog_add_text. */
LEIR_API leir_status leir_catalog_new(leir_catalog **out);

/** Adds one workload given as YAML text (`label` names it in errors; may be
 * NULL). Errors as leir_catalog_open; a name already present is
 * LEIR_ERR_ARGUMENT. */
LEIR_API leir_status leir_catalog_add_text(leir_catalog *cat, const char *text, size_t len,
                                           const char *label);

/** Frees the catalogue and its workloads; NULL is a no-op. */
LEIR_API void leir_catalog_free(leir_catalog *cat);

/** The directory the catalogue was read from ("" for leir_catalog_new);
 * borrowed. */
LEIR_API const char *leir_catalog_dir(const leir_catalog *cat);

/** Number of workloads (0 for NULL). */
LEIR_API size_t leir_catalog_count(const leir_catalog *cat);
/** Workload i in the order of the catalogue (NULL when out of range);
 * borrowed from the catalogue. */
LEIR_API const leir_workload *leir_catalog_get(const leir_catalog *cat, size_t i);
/** By name ("softmax") or by level and name ("level1/softmax"); NULL with
 * LEIR_ERR_NOT_FOUND in the last error when absent. */
LEIR_API const leir_workload *leir_catalog_find(const leir_catalog *cat, const char *name);

/** Accessors; strings are borrowed from the catalogue. */
LEIR_API const char *leir_workload_name(const leir_workload *w);
LEIR_API int leir_workload_level(const leir_workload *w);     /**< 1 or 2 (0 if unset) */
LEIR_API int leir_workload_index(const leir_workload *w);     /**< reference model_index, -1 */
/** One-line description (the file's `summary`; "" when absent). */
LEIR_API const char *leir_workload_summary(const leir_workload *w);
/** false for the workloads the reference cannot trace to LEIR. */
LEIR_API bool leir_workload_traced(const leir_workload *w);
LEIR_API leir_dtype leir_workload_dtype(const leir_workload *w); /**< default dtype */
/** The LEIR text template (the file's `leir` field), with its `$NAME` and
 * `$(EXPR)` holes unfilled. */
LEIR_API const char *leir_workload_template(const leir_workload *w);
/** The file it was read from ("" for text). */
LEIR_API const char *leir_workload_file(const leir_workload *w);

/** One parameter of a workload (leir_workload_param_get). Integer
 * parameters hold integral values. */
typedef struct leir_workload_param {
  const char *name;     /**< parameter name; borrowed from the catalogue */
  bool is_float;        /**< true for a float parameter, false for an integer one */
  double default_value; /**< value for LEIR_SHAPE_DEFAULT */
  double small_value;   /**< value for LEIR_SHAPE_SMALL (the default when not given) */
  double min;           /**< sampling range, low end (integers: min..max inclusive;
                         * [default, default] when no range is given) */
  double max;           /**< sampling range, high end */
} leir_workload_param;

/** Number of parameters (0 for NULL). */
LEIR_API size_t leir_workload_param_count(const leir_workload *w);
/** Errors: LEIR_ERR_ARGUMENT when i is out of range. */
LEIR_API leir_status leir_workload_param_get(const leir_workload *w, size_t i,
                                             leir_workload_param *out);

/** Which parameter values leir_workload_emit starts from. */
typedef enum leir_shape_kind {
  LEIR_SHAPE_DEFAULT = 0, /**< the reference's default shape */
  LEIR_SHAPE_SMALL = 1,   /**< a small shape (runs in milliseconds on the interpreter) */
  LEIR_SHAPE_RANDOM = 2   /**< integers drawn from the sampling ranges (seeded) */
} leir_shape_kind;

/** Options of leir_workload_emit. Start from LEIR_EMIT_OPTIONS_INIT or
 * leir_emit_options_init(); a caller's smaller (older) struct is read as far
 * as its `size` goes. */
typedef struct leir_emit_options {
  uint32_t size; /**< sizeof(leir_emit_options) */
  leir_shape_kind shape; /**< parameter values to start from (default LEIR_SHAPE_DEFAULT) */
  uint64_t seed; /**< for LEIR_SHAPE_RANDOM (default 0) */
  /** Overrides of the first `nargs` parameters, in the reference's order
   * (after the shape's values are chosen). Integer parameters must be
   * integral. */
  const double *args;
  size_t nargs;  /**< entries of `args` (at most the parameter count; default 0) */
  /** Floating dtype of the program ("f64", ...). NULL: f64 for the small
   * shape, the workload's dtype otherwise. */
  const char *dtype;
} leir_emit_options;

/** Defaults of leir_emit_options: the default shape, seed 0, no overrides,
 * dtype NULL. */
#define LEIR_EMIT_OPTIONS_INIT {(uint32_t)sizeof(leir_emit_options), LEIR_SHAPE_DEFAULT, 0, NULL, 0, NULL}

/** Writes LEIR_EMIT_OPTIONS_INIT into the first `size` bytes of *opts (the
 * sized form of every `_options_init`, for bindings). Errors:
 * LEIR_ERR_ARGUMENT (NULL, a size below the size field or above this
 * library's struct). */
LEIR_API leir_status leir_emit_options_init_sized(leir_emit_options *opts, size_t size);
/** Sets the whole *opts to LEIR_EMIT_OPTIONS_INIT; NULL is a no-op.
 * Deprecated: use leir_emit_options_init_sized(opts, sizeof *opts). */
LEIR_API void leir_emit_options_init(leir_emit_options *opts)
    LEIR_DEPRECATED("leir_emit_options_init_sized");

/** Expands the workload: chooses the parameter values, checks the
 * constraints, fills the template, sets the signature (declared order, with
 * the shapes the program's accesses give unless declared) and runs the
 * static checks. On success *yaml_out (when not NULL) receives a program file
 * with the signature and the input domains (free with leir_free), and
 * *program_out (when not NULL) the program (free with leir_program_free);
 * `values_out` (when not NULL) receives the `nvalues` chosen parameter values
 * (nvalues must be at least leir_workload_param_count).
 * Errors: LEIR_ERR_ARGUMENT (bad options or arguments, a failed constraint),
 * LEIR_ERR_PARSE/LEIR_ERR_INVALID/LEIR_ERR_SIGNATURE (the expanded program is
 * wrong: a catalogue bug), LEIR_ERR_LIMIT. */
LEIR_API leir_status leir_workload_emit(const leir_workload *w, const leir_emit_options *opts,
                                        char **yaml_out, leir_program **program_out,
                                        double *values_out, size_t nvalues);

/** Evaluates an integer/float parameter expression (+ - * / // % min max
 * sqrt, comparisons, parentheses) with the given variables. Integers are
 * 64-bit with overflow checks; `/` and sqrt give floats. *is_float tells
 * which. Errors: LEIR_ERR_PARSE (syntax), LEIR_ERR_ARGUMENT (unknown name,
 * division by zero, overflow). */
LEIR_API leir_status leir_expr_eval(const char *expr, const char *const *names,
                                    const double *values, const bool *is_float, size_t n,
                                    double *out, bool *out_is_float);

#ifdef __cplusplus
}
#endif

#endif
