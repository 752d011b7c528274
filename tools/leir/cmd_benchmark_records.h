/* Records and summary of leir benchmark (cmd_benchmark_records.c). */
#ifndef LEIR_TOOL_CMD_BENCHMARK_RECORDS_H
#define LEIR_TOOL_CMD_BENCHMARK_RECORDS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tool.h"

/* One finished run as read back from runs.jsonl (strings malloc'd). */
typedef struct bench_run {
  char *program, *algorithm, *status; /* status "ok" or "error" */
  char *steps;                        /* the best program's steps, one per line */
  char *error;
  double speedup, best_speedup, final_lo, final_hi, seconds;
  uint32_t best_depth, samples, measured, reused, accepted, rejected, samples_to_best;
  /* read when present (runs written before them have none: 0) */
  uint32_t samples_to_95;              /* first sample within 95% of the run's best */
  double compile_s, verify_s, time_s;  /* the measured samples' cost by phase */
} bench_run;

/* Reads one line; false when it is not a complete record of this tool. */
bool bench_run_parse(const char *line, bench_run *r);
void bench_run_free(bench_run *r);
/* Reads DIR/runs.jsonl (absent: none), cutting off a last line without its
 * newline. 0, or -1 when the file cannot be read. */
int bench_runs_load(const char *path, bench_run **out, size_t *nout);
const bench_run *bench_runs_find(const bench_run *v, size_t n, const char *program,
                                 const char *algorithm);
/* Appends the line and a newline in one write, then fsync. 0 or -1. */
int bench_append_line(const char *path, const char *line, size_t len);

typedef struct bench_summary_in {
  const char *name, *policy, *backend;
  const char *const *programs; /* in config order */
  size_t nprograms;
  const char *const *algorithms;
  size_t nalgorithms;
  const bench_run *runs;
  size_t nruns;
} bench_summary_in;

/* Writes DIR/summary.json and DIR/summary.md (atomically) and prints the
 * table on `console` unless `json_console`. 0 or -1. */
int bench_summary_write(const bench_summary_in *in, const char *dir, FILE *console,
                        bool json_console);

#endif
