/*
 * What the files of the workload catalogue share (expr.c, load.c, emit.c;
 * the API is include/leir/experimental/workload.h): the limits, the loaded
 * workload and catalogue, and the value of an evaluated expression.
 */
#ifndef LEIR_CATALOG_CATALOG_H
#define LEIR_CATALOG_CATALOG_H

#ifndef LEIR_EXPERIMENTAL
#define LEIR_EXPERIMENTAL /* the workload API is in the experimental tier */
#endif
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "leir/experimental/workload.h"

#define MAX_FILE_BYTES (1u << 20)
#define MAX_FILES 4096
#define MAX_PARAMS 64
#define MAX_TENSORS 256
#define MAX_CONSTRAINTS 64
#define MAX_EXPR_DEPTH 64
#define MAX_EXPR_LEN 4096
#define MAX_YAML_DEPTH 16
#define RANDOM_TRIES 256

typedef struct wl_param {
  char *name;
  bool is_float;
  double dflt, small, lo, hi;
} wl_param;

typedef struct wl_tensor {
  char *name;
  bool output;
  bool has_dtype;
  leir_dtype dtype;
  char *shape[LEIR_MAX_RANK]; /* expressions; valid when has_shape */
  uint32_t rank;
  bool has_shape;
  char *domain; /* flow-style YAML (a template), or NULL */
} wl_tensor;

struct leir_workload {
  char *name, *summary, *tmpl, *file;
  int level, index;
  bool traced;
  leir_dtype dtype;
  wl_param params[MAX_PARAMS];
  size_t nparams;
  wl_tensor *tensors;
  size_t ntensors;
  char *constraints[MAX_CONSTRAINTS];
  size_t nconstraints;
};

struct leir_catalog {
  char *dir;
  leir_workload **items;
  size_t n, cap;
};

/* A value of an expression: an integer, or a float when f. */
typedef struct xval {
  bool f;
  int64_t i;
  double d;
} xval;

/* ---- shared between the catalogue files ---- */

/* The value of the expression s[0, len) over the parameters (expr.c). */
leir_status leir__catalog_eval_expr(const char *s, size_t len, const wl_param *params,
                                    size_t nparams, const double *values, xval *out);

#endif
