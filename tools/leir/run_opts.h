/* Options shared by the commands that run programs (verify, run, bench,
 * lower): backend choice and limits, seed, signature. */
#ifndef LEIR_TOOL_RUN_OPTS_H
#define LEIR_TOOL_RUN_OPTS_H

#include "tool.h"

typedef struct run_opts {
  const char *backend;          /* --backend (default "cpu") */
  leir_backend_options bo;      /* --timeout, --threads, --cc, --cflags, --cache-dir, ... */
  uint64_t seed;                /* --seed */
  bool seed_given;
  bool json;                    /* --json */
  tool_sig sig;                 /* --input/--output */
} run_opts;

void run_opts_init(run_opts *o);
/* 1 when `opt` was one of the shared options, 0 if not, -1 on a usage
 * error (reported). */
int run_option(run_opts *o, tool_args *a, const char *opt);
/* Opens the backend; prints the error and returns the exit code on failure. */
int run_open_backend(run_opts *o, leir_backend **out);
/* Loads a program and applies --input/--output when `apply_sig`. */
leir_program *run_load(const run_opts *o, const char *path, bool apply_sig, int *exit_code);
/* Help text of the shared options. */
#define RUN_OPTS_HELP \
    "  --backend B      interp (the reference evaluator), cpu (default: C compiled\n" \
    "                   by $CC, run in a sandboxed child process) or cuda\n" \
    "  --seed N         input seed (default 1; printed in every report)\n" \
    "  --timeout S      wall-clock limit of one run, seconds (default 10)\n" \
    "  --threads N      OpenMP threads of the cpu backend (default: all CPUs)\n" \
    "  --cc CC          C compiler (default $CC, else cc)\n" \
    "  --cflags FLAGS   compiler flags (default $LEIR_CFLAGS, else\n" \
    "                   \"-O3 -march=native -fopenmp\", plus\n" \
    "                   -mprefer-vector-width=512 on an AVX-512 host)\n" \
    "  --cache-dir DIR  keep compiled kernels in DIR (default $LEIR_CACHE_DIR)\n" \
    "  --no-cache       compile every kernel afresh\n" \
    "  --check-bounds   bounds-check every access at run time (cpu)\n" \
    "  --fp-contract    fuse products into the sums they feed (fused multiply-add,\n" \
    "                   rounded once; cpu, cuda): faster, results CLOSE to interp's\n" \
    "  --memory-limit M address-space growth allowed to a kernel process, MiB\n" \
    "  --json           one JSON object per result\n" \
    "  --input NAME:DTYPE:SHAPE, --output NAME:DTYPE:SHAPE\n" \
    "                   declare the signature (else: a .leir.yaml file's, or inferred)\n"

#endif
