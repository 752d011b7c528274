/*
 * Timing (verification.md §4): the alternating measurement loop shared by
 * backends that time on the CPU clock, statistics, GFLOP/s and GB/s, and
 * the public leir_kernels_time / leir_bench.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "options.h"

/* Bytes touched to evict the caches: twice the last-level cache, clamped
 * to [4 MiB, 64 MiB] (virtual machines often report the host's whole L3,
 * hundreds of MiB, which would make every flush cost tens of ms). */
static size_t flush_bytes(void) {
  long llc = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
  llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  size_t n = llc > 0 ? (size_t)llc * 2 : (size_t)32 << 20;
  if (n < ((size_t)4 << 20)) n = (size_t)4 << 20;
  if (n > ((size_t)64 << 20)) n = (size_t)64 << 20;
  return n;
}

void leir__flush_cpu_cache(void **scratch, size_t *scratch_bytes) {
  if (!*scratch) {
    *scratch_bytes = flush_bytes();
    *scratch = malloc(*scratch_bytes);
    if (!*scratch) return;
    memset(*scratch, 0, *scratch_bytes);
  }
  volatile unsigned char *p = *scratch;
  for (size_t i = 0; i < *scratch_bytes; i += 64) p[i]++;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

void leir__timing_from_samples(leir_timing *t, const double *samples, uint32_t runs) {
  memset(t, 0, sizeof *t);
  t->runs = runs;
  if (!runs) return;
  double *s = malloc(runs * sizeof *s);
  if (!s) return;
  memcpy(s, samples, runs * sizeof *s);
  qsort(s, runs, sizeof *s, cmp_double);
  t->min_s = s[0];
  t->max_s = s[runs - 1];
  t->median_s = runs % 2 ? s[runs / 2] : 0.5 * (s[runs / 2 - 1] + s[runs / 2]);
  double sum = 0;
  for (uint32_t i = 0; i < runs; i++) sum += s[i];
  t->mean_s = sum / runs;
  free(s);
}

leir_status leir__time_loop(leir_kernel *const *ks, size_t n, void *const *const *bufs,
                            const leir_bench_options *o, leir__run_fn fn, void *ctx,
                            leir__samples *out, leir__exec_result *res) {
  void *scratch = NULL;
  size_t scratch_bytes = 0;
  leir_status st = LEIR_OK;
  for (size_t k = 0; k < n; k++) out->runs[k] = 0;
  for (size_t k = 0; k < n && st == LEIR_OK; k++)
    for (uint32_t w = 0; w < o->warmup && st == LEIR_OK; w++) {
      st = fn(ctx, ks[k], bufs[k]);
      if (st != LEIR_OK) res->set = (int32_t)k;
    }
  double start = leir__now();
  double *total = calloc(n ? n : 1, sizeof *total);
  if (!total) st = leir__error_nomem();
  for (uint32_t round = 0; st == LEIR_OK && round < out->max_runs; round++) {
    for (size_t k = 0; k < n && st == LEIR_OK; k++) {
      if (!(o->flags & LEIR_BENCH_NO_FLUSH)) leir__flush_cpu_cache(&scratch, &scratch_bytes);
      double t0 = leir__now();
      st = fn(ctx, ks[k], bufs[k]);
      double dt = leir__now() - t0;
      if (st != LEIR_OK) {
        res->set = (int32_t)k;
        break;
      }
      out->samples[k * out->max_runs + round] = dt;
      out->runs[k] = round + 1;
      total[k] += dt;
    }
    if (st != LEIR_OK) break;
    bool runs_done = round + 1 >= o->min_runs;
    bool enough = runs_done;
    for (size_t k = 0; k < n && enough; k++) enough = total[k] >= o->min_seconds;
    double wall = leir__now() - start;
    /* Tiny kernels would need thousands of rounds to add up to min_seconds,
     * each paying a cache flush: once min_runs are done, a wall-clock budget
     * of max(1 s, 20 x min_seconds) ends the session. */
    double budget = 20.0 * o->min_seconds > 1.0 ? 20.0 * o->min_seconds : 1.0;
    if (enough || wall > o->max_seconds || (runs_done && wall > budget)) break;
  }
  free(total);
  free(scratch);
  return st;
}

static leir_status read_bench_options(leir_bench_options *o, const leir_bench_options *in) {
  leir_status st = LEIR__OPTIONS_READ(leir_bench_options, o, in, LEIR_BENCH_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  if (o->max_runs < 1 || o->max_runs > 1000000 || o->min_runs > o->max_runs)
    return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0,
                       "need 1 <= min_runs <= max_runs <= 1000000");
  if (!(o->min_seconds >= 0) || !(o->max_seconds > 0))
    return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0, "bad time limits");
  return LEIR_OK;
}

leir_status leir_kernels_time(leir_kernel *const *ks, size_t n, const leir_bench_options *opts,
                              leir_timing *out) {
  if (!ks || !out || n == 0)
    return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0, "NULL argument or no kernels");
  leir_bench_options o;
  leir_status st = read_bench_options(&o, opts);
  if (st != LEIR_OK) return st;
  leir_backend *b = ks[0]->backend;
  for (size_t k = 0; k < n; k++)
    if (!ks[k] || ks[k]->backend != b)
      return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0,
                         "all kernels must come from the same backend");
  void ***bufs = calloc(n, sizeof *bufs);
  leir__samples smp = {NULL, o.max_runs, NULL};
  smp.samples = calloc((size_t)n * o.max_runs, sizeof *smp.samples);
  smp.runs = calloc(n, sizeof *smp.runs);
  if (!bufs || !smp.samples || !smp.runs) {
    st = leir__error_nomem();
    goto done;
  }
  for (size_t k = 0; k < n && st == LEIR_OK; k++) {
    uint32_t nk = ks[k]->nknown;
    bufs[k] = calloc(nk ? nk : 1, sizeof **bufs);
    if (!bufs[k]) {
      st = leir__error_nomem();
      break;
    }
    for (uint32_t i = 0; i < nk && st == LEIR_OK; i++) {
      uint64_t bytes = leir__buffer_bytes(&ks[k]->analysis->buffers[i]);
      bufs[k][i] = malloc(bytes ? (size_t)bytes : 1);
      if (!bufs[k][i]) st = leir__error_nomem();
    }
    if (st == LEIR_OK) st = leir__fill_inputs(ks[k]->analysis, nk, o.seed, 0, bufs[k]);
  }
  if (st != LEIR_OK) goto done;
  leir__exec_result res = {-1};
  st = b->ops->time(b, ks, n, (void *const *const *)bufs, &o, &smp, &res);
  if (st != LEIR_OK) goto done;
  for (size_t k = 0; k < n; k++) {
    leir__timing_from_samples(&out[k], &smp.samples[k * o.max_runs], smp.runs[k]);
    out[k].flops = ks[k]->cost.flops;
    out[k].bytes = ks[k]->cost.bytes;
    if (out[k].median_s > 0) {
      out[k].gflops = (double)out[k].flops / out[k].median_s * 1e-9;
      out[k].gbytes_per_s = (double)out[k].bytes / out[k].median_s * 1e-9;
    }
  }
  for (size_t k = 0; k < n; k++)
    out[k].speedup = out[k].median_s > 0 ? out[0].median_s / out[k].median_s : 0.0;
done:
  if (bufs) {
    for (size_t k = 0; k < n; k++) {
      if (!bufs[k]) continue;
      for (uint32_t i = 0; i < ks[k]->nknown; i++) free(bufs[k][i]);
      free(bufs[k]);
    }
    free(bufs);
  }
  free(smp.samples);
  free(smp.runs);
  return st;
}

leir_status leir_bench(leir_backend *b, const leir_program *const *programs, size_t n,
                       const leir_bench_options *opts, leir_timing *out) {
  if (!b || !programs || !out || n == 0)
    return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0, "NULL argument or no programs");
  leir_kernel **ks = calloc(n, sizeof *ks);
  if (!ks) return leir__error_nomem();
  leir_status st = LEIR_OK;
  for (size_t k = 0; k < n && st == LEIR_OK; k++) {
    st = leir__kernel_build(b, programs[k], NULL, &ks[k]);
    if (st != LEIR_OK) {
      leir__error_state e;
      leir__error_save(&e);
      leir__error(st, e.rule, e.subject, e.line, e.column, "program %zu: %s", k + 1, e.message);
    }
  }
  if (st == LEIR_OK) st = leir__kernels_prepare(b, ks, n);
  for (size_t k = 0; k < n && st == LEIR_OK; k++)
    if (ks[k]->prepared != LEIR_OK) {
      st = ks[k]->prepared;
      leir__error(st, "backend.compile", NULL, 0, 0, "program %zu: %s", k + 1,
                  st == LEIR_ERR_COMPILE ? "the compiler rejected the lowered code"
                                         : leir_status_message(st));
    }
  if (st == LEIR_OK) st = leir_kernels_time(ks, n, opts, out);
  for (size_t k = 0; k < n; k++) leir__kernel_destroy(ks[k]);
  free(ks);
  return st;
}
