/* Internals of the dataset builder (include/leir/experimental/dataset.h):
 * the config, the units, the per-unit work and the outputs. */
#ifndef LEIR_DATASET_DS_H
#define LEIR_DATASET_DS_H

#include <stddef.h>
#include <stdint.h>

#define LEIR_EXPERIMENTAL
#include "leir/experimental/dataset.h"
#include "leir/experimental/workload.h"
#include "leir/program.h"
#include "leir/run.h"
#include "leir/strategy.h"
#include "strbuf.h"

/* The dataset schema version written into every record and the card.
 * 2: splits held out by source program (train / validation / test), not by
 * state; records say "split": "train", "validation" or "test". */
#define LEIR__DATASET_SCHEMA 2

/* ---- deterministic random numbers (splitmix64) ------------------------- */
typedef struct leir__rng {
  uint64_t s;
} leir__rng;
uint64_t leir__rng_next(leir__rng *r);
/* uniform in [0, n) (n > 0) */
uint64_t leir__rng_below(leir__rng *r, uint64_t n);
/* uniform in [0, 1) */
double leir__rng_unit(leir__rng *r);
/* A stream derived from the seed and a label (and a number). */
leir__rng leir__rng_derive(uint64_t seed, const char *label, uint64_t n);

/* ---- config ------------------------------------------------------------ */
/* What a held-out split holds out whole (docs/dataset.md, "Splits"). */
#define LEIR__SPLIT_BY_PROGRAM 0  /* a source program: workload + shape (+ draw), or a programs line */
#define LEIR__SPLIT_BY_WORKLOAD 1 /* a workload family: the workload (any shape), or a program name */

typedef struct leir__ds_rule {
  int strategies[64]; /* catalogue indices */
  size_t n;
  double keep;        /* probability of keeping an item of these strategies */
  uint64_t cap;       /* at most this many kept per strategy (UINT64_MAX: none) */
} leir__ds_rule;

typedef struct leir__ds_config {
  char *name;
  uint64_t seed;
  /* sources */
  char **workloads;      /* names; NULL with all_workloads */
  size_t n_workloads;
  int all_workloads;
  int level;             /* with all_workloads: only this level (0 = any) */
  char **shapes;         /* "small", "default", "random" */
  size_t n_shapes;
  uint32_t random_shapes; /* draws per "random" entry (default 1) */
  char **dtypes;         /* NULL entry: the shape's default */
  size_t n_dtypes;
  char *programs;        /* JSONL of programs (resolved path) or NULL */
  char *workloads_dir;   /* resolved or NULL */
  uint64_t max_source_evaluations; /* larger sources are skipped (default 2^32) */
  /* strategies */
  int enabled[256];      /* by catalogue index */
  /* walks */
  uint32_t walks, depth;
  /* sampling */
  uint32_t per_strategy; /* per state; 0 = all */
  uint32_t per_state;    /* per state; 0 = all */
  /* verification */
  char *backend;         /* auto, interp, cpu, cuda */
  uint64_t interp_max_evaluations;
  uint32_t verify_threads; /* cpu backend's OpenMP threads (default 1; not in the fingerprint:
                            * verdicts do not depend on it) */
  uint64_t verify_seed;
  uint32_t input_sets;
  int keep_close;
  /* filtering and balancing */
  uint64_t single_cap;
  leir__ds_rule single_rules[8];
  size_t n_single_rules;
  leir__ds_rule multi_rules[8];
  size_t n_multi_rules;
  uint32_t multi_min_items;
  int multi_enabled;
  uint32_t multi_max_items;
  /* held-out splits: whole source programs (or workload families) go to
   * test (eval.jsonl) or validation (validation.jsonl), so no held-out
   * program shares a state with train */
  int split_by;          /* LEIR__SPLIT_BY_* */
  double split_test;     /* fraction of the keys held out for test (eval.fraction: the same) */
  double split_validation;
  uint64_t split_seed;   /* default: the config seed */
  char *system_prompt;   /* NULL: no system message (the reference's files) */
  /* timing of kept samples (makes the files depend on the machine) */
  int measure;
  char *measure_backend; /* cpu (default), cuda, interp */
  uint32_t measure_min_runs;
  double measure_max_seconds;
} leir__ds_config;

/* Reads the config; relative paths are resolved against base_dir. */
leir_status leir__ds_config_read(leir__ds_config *cfg, const char *text, size_t len,
                                 const char *base_dir);
void leir__ds_config_free(leir__ds_config *cfg);
/* The config in a canonical form (its hash identifies a build). */
void leir__ds_config_canonical(const leir__ds_config *cfg, leir__strbuf *out);

/* ---- units ------------------------------------------------------------- */
typedef struct leir__ds_unit {
  char *id;              /* "level1/softmax@small/f64", "programs.jsonl:3" */
  const leir_workload *workload; /* or NULL for a program line */
  char *shape;           /* workload: "small" | "default" | "random" */
  uint32_t shape_draw;   /* random: which draw */
  char *dtype;           /* or NULL */
  char *program_line;    /* program line's JSON text */
  size_t line_no;
} leir__ds_unit;

struct leir_dataset {
  leir__ds_config cfg;
  leir_dataset_options opts;
  leir_catalog *catalog;
  leir__ds_unit *units;
  size_t n_units;
  char *out_dir;
  char *work_dir;        /* out_dir/.work */
  uint64_t config_hash;
  int complete;
  char *summary;         /* summary.json text once written */
  leir_backend *interp, *cpu, *cuda, *timer;
  int cpu_failed, cuda_failed;
  int lock_fd;           /* OUT/.work/lock while the config is checked (-1: none) */
};

/* Processes one unit and writes its file atomically. */
leir_status leir__ds_unit_build(leir_dataset *ds, size_t u, uint64_t *verified, uint64_t *kept);
/* Path of a unit's file (caller frees). */
char *leir__ds_unit_path(const leir_dataset *ds, size_t u);
/* Writes every output from the unit files. */
leir_status leir__ds_finalize(leir_dataset *ds);

/* ---- files ------------------------------------------------------------- */
/* Writes `len` bytes to `path` through a temporary file and rename, so the
 * file is either absent or complete. */
leir_status leir__ds_write_atomic(const char *path, const char *data, size_t len);
/* The largest file a build or an evaluation reads (a programs file, a unit
 * file, a dataset's eval.jsonl or archive.jsonl). */
#define LEIR__DS_MAX_FILE ((size_t)1 << 30)
/* Reads a whole regular file of at most LEIR__DS_MAX_FILE bytes (caller
 * frees; lib/input.h): a FIFO or a device is refused without blocking.
 * LEIR_ERR_IO / LEIR_ERR_NOT_FOUND / LEIR_ERR_LIMIT. */
leir_status leir__ds_read_file(const char *path, char **out, size_t *len);
leir_status leir__ds_mkdirs(const char *path);
char *leir__ds_join(const char *dir, const char *name);
/* This host's name, made safe for file names. */
void leir__ds_host(char *buf, size_t cap);
/* Removes the temporary files of writers on this host that were killed. */
void leir__ds_clean_tmp(const char *dir);

/* ---- JSON writing ------------------------------------------------------ */
void leir__ds_put_hex(leir__strbuf *b, uint64_t h);
void leir__ds_put_str(leir__strbuf *b, const char *s);
/* The known-variable list of a program as JSON: [{"name":..,"dtype":..,"shape":[..]},..] */
void leir__ds_put_known(leir__strbuf *b, const leir_program *p);

/* The backend for a program of `evaluations` per run. */
leir_status leir__ds_backend(leir_dataset *ds, uint64_t evaluations, leir_backend **out);

#endif
