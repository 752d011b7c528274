/* leir benchmark: the multi-step search benchmark (docs/benchmark.md):
 * every search algorithm over a set of programs with one policy. Shared by
 * cmd_benchmark.c (runs, records, summary), cmd_benchmark_config.c (the
 * YAML config and the program set) and cmd_benchmark_db.c (leir db merge). */
#ifndef LEIR_TOOL_CMD_BENCHMARK_H
#define LEIR_TOOL_CMD_BENCHMARK_H

#define LEIR_EXPERIMENTAL
#include "leir/experimental/search.h"
#include "leir/experimental/workload.h"

#include "commands.h"

#define BENCH_MAX_ALGOS 6

/* One program of the set: a file or a catalogue workload. */
typedef struct bench_program {
  char *id;   /* its name in records: the workload ("level1/ReLU") or the path as given */
  char *path; /* the file (NULL for a workload) */
  const leir_workload *workload;
} bench_program;

typedef struct bench_config {
  char *name;
  /* the programs */
  bench_program *programs;
  size_t nprograms;
  leir_catalog *catalog;
  leir_shape_kind shape;
  uint64_t shape_seed;
  char *dtype;
  /* the searches */
  leir_search_algorithm algorithms[BENCH_MAX_ALGOS];
  size_t nalgorithms;
  leir_search_policy policy;
  char *endpoint, *model, *api_key_env, *llm_command;
  double llm_timeout;
  double temperature;
  uint32_t max_tokens;
  /* the per-program budget and search shape */
  uint32_t samples, depth, width, branching, retries, rollouts;
  double seconds;
  uint64_t seed;
  /* measuring */
  char *backend;
  uint32_t rounds, max_rounds, sets;
  double compare_seconds, confidence;
} bench_config;

/* Reads CONFIG.yaml (relative paths are taken from its directory) and
 * resolves the program set; `workloads_dir` overrides the config's. Prints
 * what is wrong and returns the exit status on failure. */
int bench_config_load(bench_config *c, const char *path, const char *workloads_dir);
void bench_config_free(bench_config *c);
/* Loads program i (emitting a workload); NULL with a message on failure. */
leir_program *bench_program_load(const bench_config *c, size_t i, char *err, size_t cap);

int cmd_db_merge(int argc, char **argv);

#endif
