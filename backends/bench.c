/*
 * Timing (verification.md §4): the alternating measurement loop shared by
 * backends that time on the CPU clock, statistics, GFLOP/s and GB/s, and
 * the public leir_kernels_time / leir_bench.
 */
#include "bench.h"

#include <math.h>
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

/* The scratch of a process that keeps it (leir__flush_keep_scratch): the
 * kernel runner times one request per batch of rounds, and a fresh
 * scratch per request paid its first touch (64 MiB of page faults, about
 * as much as 10 flushes) every time. NULL elsewhere: a library process
 * does not hold 64 MiB between timings. */
static bool keep_scratch;
static void *kept_scratch;
static size_t kept_scratch_bytes;

void leir__flush_keep_scratch(void) { keep_scratch = true; }

/* A warm-up run at least this long has done what warm-up runs are for
 * (the buffers paged in, the code loaded, the OpenMP threads started,
 * the clock raised): the kernel's remaining warm-up runs are skipped. */
#define WARMUP_ENOUGH_S 0.05

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
  /* quartiles by linear interpolation between order statistics */
  double q[2];
  for (int k = 0; k < 2; k++) {
    double pos = (k == 0 ? 0.25 : 0.75) * (double)(runs - 1);
    uint32_t lo = (uint32_t)pos;
    uint32_t hi = lo + 1 < runs ? lo + 1 : lo;
    q[k] = s[lo] + (pos - (double)lo) * (s[hi] - s[lo]);
  }
  t->q1_s = q[0];
  t->q3_s = q[1];
  t->spread = t->median_s > 0 ? (q[1] - q[0]) / t->median_s : 0.0;
  t->noisy = t->spread > LEIR_TIMING_NOISY;
  free(s);
}

/* Threads a kernel of this backend may use. */
static uint32_t backend_threads(const leir_backend *b) {
  if (!b->ops->threaded) return 1;
  if (b->opts.threads) return b->opts.threads;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (uint32_t)n : 1;
}

leir_status leir__time_loop(leir_kernel *const *ks, size_t n, void *const *const *bufs,
                            const leir_bench_options *o, leir__run_fn fn, void *ctx,
                            leir__samples *out, leir__exec_result *res) {
  void *scratch = keep_scratch ? kept_scratch : NULL;
  size_t scratch_bytes = keep_scratch ? kept_scratch_bytes : 0;
  leir_status st = LEIR_OK;
  for (size_t k = 0; k < n; k++) out->runs[k] = 0;
  for (size_t k = 0; k < n && st == LEIR_OK; k++)
    for (uint32_t w = 0; w < o->warmup && st == LEIR_OK; w++) {
      double w0 = leir__now();
      st = fn(ctx, ks[k], bufs[k]);
      if (st != LEIR_OK) res->set = (int32_t)k;
      if (leir__now() - w0 >= WARMUP_ENOUGH_S) break;
    }
  double start = leir__now();
  double *total = calloc(n ? n : 1, sizeof *total);
  if (!total) st = leir__error_nomem();
  for (uint32_t round = 0; st == LEIR_OK && round < out->max_runs; round++) {
    for (size_t k = 0; k < n && st == LEIR_OK; k++) {
      /* The time limit holds within a round too: after the first round no
       * kernel's run starts past max_seconds, and the round cut short is
       * dropped, so every kernel keeps the same number of runs (paired
       * comparisons) and the overshoot is at most one run. */
      if (round > 0 && k > 0 && leir__now() - start > o->max_seconds) {
        for (size_t j = 0; j < k; j++) {
          out->runs[j] = round;
          total[j] -= out->samples[j * out->max_runs + round];
        }
        goto out_of_time;
      }
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
out_of_time:
  free(total);
  if (keep_scratch) {
    kept_scratch = scratch;
    kept_scratch_bytes = scratch_bytes;
  } else {
    free(scratch);
  }
  return st;
}

static leir_status read_bench_options(leir_bench_options *o, const leir_bench_options *in) {
  leir_status st = LEIR__OPTIONS_READ(leir_bench_options, o, in, LEIR_BENCH_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  if (o->max_runs < 1 || o->max_runs > 1000000 || o->min_runs > o->max_runs)
    return leir__error_arg(NULL, "need 1 <= min_runs <= max_runs <= 1000000");
  if (!(o->min_seconds >= 0) || !(o->max_seconds > 0))
    return leir__error_arg(NULL, "bad time limits");
  return LEIR_OK;
}

static void free_buffers(leir_kernel *const *ks, size_t n, void ***bufs) {
  if (!bufs) return;
  for (size_t k = 0; k < n; k++) {
    if (!bufs[k]) continue;
    for (uint32_t i = 0; i < ks[k]->nknown; i++) free(bufs[k][i]);
    free(bufs[k]);
  }
  free(bufs);
}

/* Each kernel's own seeded buffers (set 0). */
static leir_status alloc_buffers(leir_kernel *const *ks, size_t n, uint64_t seed, void ****out) {
  void ***bufs = calloc(n, sizeof *bufs);
  if (!bufs) return leir__error_nomem();
  leir_status st = LEIR_OK;
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
    if (st == LEIR_OK) st = leir__fill_inputs(ks[k]->analysis, nk, seed, 0, bufs[k]);
  }
  if (st != LEIR_OK) {
    free_buffers(ks, n, bufs);
    return st;
  }
  *out = bufs;
  return LEIR_OK;
}

leir_status leir_kernels_time(leir_kernel *const *ks, size_t n, const leir_bench_options *opts,
                              leir_timing *out) {
  if (!ks || !out || n == 0)
    return leir__error_arg(NULL, "NULL argument or no kernels");
  leir_bench_options o;
  leir_status st = read_bench_options(&o, opts);
  if (st != LEIR_OK) return st;
  leir_backend *b = ks[0]->backend;
  for (size_t k = 0; k < n; k++)
    if (!ks[k] || ks[k]->backend != b)
      return leir__error_arg(NULL, "all kernels must come from the same backend");
  void ***bufs = NULL;
  leir__samples smp = {NULL, o.max_runs, NULL};
  st = alloc_buffers(ks, n, o.seed, &bufs);
  if (st != LEIR_OK) goto done;
  smp.samples = calloc((size_t)n * o.max_runs, sizeof *smp.samples);
  smp.runs = calloc(n, sizeof *smp.runs);
  if (!smp.samples || !smp.runs) {
    st = leir__error_nomem();
    goto done;
  }
  leir__exec_result res = {-1};
  st = b->ops->time(b, ks, n, (void *const *const *)bufs, &o, &smp, &res);
  if (st != LEIR_OK) goto done;
  for (size_t k = 0; k < n; k++) {
    leir__timing_from_samples(&out[k], &smp.samples[k * o.max_runs], smp.runs[k]);
    out[k].flops = ks[k]->cost.flops;
    out[k].bytes = ks[k]->cost.bytes;
    out[k].threads = backend_threads(b);
    if (out[k].median_s > 0) {
      out[k].gflops = (double)out[k].flops / out[k].median_s * 1e-9;
      out[k].gbytes_per_s = (double)out[k].bytes / out[k].median_s * 1e-9;
    }
  }
  for (size_t k = 0; k < n; k++)
    out[k].speedup = out[k].median_s > 0 ? out[0].median_s / out[k].median_s : 0.0;
done:
  free_buffers(ks, n, bufs);
  free(smp.samples);
  free(smp.runs);
  return st;
}

leir_status leir_bench(leir_backend *b, const leir_program *const *programs, size_t n,
                       const leir_bench_options *opts, leir_timing *out) {
  if (!b || !programs || !out || n == 0)
    return leir__error_arg(NULL, "NULL argument or no programs");
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

/* ---- leir_kernels_compare ------------------------------------------------- */

const char *leir_order_name(leir_order order) {
  switch (order) {
    case LEIR_ORDER_FASTER: return "faster";
    case LEIR_ORDER_SLOWER: return "slower";
    case LEIR_ORDER_SAME: return "same";
    default: return "undecided";
  }
}

/* P(Binomial(n, 1/2) <= k). The terms are built in the log domain by the
 * ratio of consecutive binomial coefficients, C(n, i+1) = C(n, i) (n-i)/(i+1),
 * not with lgamma(): lgamma writes libm's global `signgam`, a data race
 * between two threads comparing kernels (and with any host code calling
 * lgamma). 2^-n alone underflows past n = 1074, hence the logs. */
static double binom_cdf_half(uint32_t n, uint32_t k) {
  double sum = 0, log_term = -(double)n * log(2.0); /* log(C(n, 0) 2^-n) */
  for (uint32_t i = 0; i <= k && i <= n; i++) {
    sum += exp(log_term);
    log_term += log((double)(n - i)) - log((double)(i + 1));
  }
  return sum > 1 ? 1 : sum;
}

/* Distribution-free interval of the median of sorted x[0..n): the largest
 * l with 2 P(Bin(n, 1/2) <= l - 1) <= 1 - confidence gives
 * [x_(l), x_(n-l+1)]; false when n is too small for that confidence. */
static bool median_interval(const double *x, uint32_t n, double confidence, double *lo,
                            double *hi, double *coverage) {
  uint32_t best = 0;
  double cov = 0;
  for (uint32_t l = 1; l <= n / 2; l++) {
    double c = 1.0 - 2.0 * binom_cdf_half(n, l - 1);
    if (c < confidence) break;
    best = l;
    cov = c;
  }
  if (!best) return false;
  *lo = x[best - 1];
  *hi = x[n - best];
  *coverage = cov;
  return true;
}

static leir_status read_compare_options(leir_compare_options *o, const leir_compare_options *in) {
  leir_status st = LEIR__OPTIONS_READ(leir_compare_options, o, in, LEIR_COMPARE_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  if (o->min_rounds < 1 || o->max_rounds < o->min_rounds || o->max_rounds > 100000)
    return leir__error_arg(NULL, "need 1 <= min_rounds <= max_rounds <= 100000");
  if (!(o->confidence > 0.5 && o->confidence < 1) || !(o->min_effect >= 0 && o->min_effect < 1) ||
      !(o->max_seconds > 0))
    return leir__error_arg(NULL, "need 0.5 < confidence < 1, 0 <= min_effect < 1, max_seconds > 0");
  return LEIR_OK;
}

/* One look at the n ratios so far: their median and its interval, and the
 * decision when the interval allows one. With `stop_not_faster` the look
 * also ends the comparison once A is shown not faster by min_effect (the
 * interval's upper end at or below 1 + min_effect), the only question a
 * search asks; the order is then SLOWER or SAME when the interval says
 * so, else UNDECIDED. */
static leir_status look(const double *ratio, uint32_t n, const leir_compare_options *o,
                        bool stop_not_faster, leir_comparison *out, bool *decided) {
  double *sorted = malloc(n * sizeof *sorted);
  if (!sorted) return leir__error_nomem();
  memcpy(sorted, ratio, n * sizeof *sorted);
  qsort(sorted, n, sizeof *sorted, cmp_double);
  out->ratio = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  double lo, hi, cov;
  if (median_interval(sorted, n, o->confidence, &lo, &hi, &cov)) {
    out->ratio_lo = lo;
    out->ratio_hi = hi;
    out->confidence = cov;
    double up = 1.0 + o->min_effect, down = 1.0 / up;
    if (lo > up) out->order = LEIR_ORDER_FASTER, *decided = true;
    else if (hi < down) out->order = LEIR_ORDER_SLOWER, *decided = true;
    else if (lo >= down && hi <= up) out->order = LEIR_ORDER_SAME, *decided = true;
    else if (stop_not_faster && hi <= up) *decided = true;
  }
  free(sorted);
  return LEIR_OK;
}

/* The comparison itself; leir_kernels_compare writes its result as far as
 * the caller's struct goes (an older, smaller leir_comparison). */
static leir_status compare_kernels(leir_kernel *ka, leir_kernel *kb, const leir_compare_options *opts,
                                   bool stop_not_faster, leir_comparison *out);

leir_status leir_kernels_compare(leir_kernel *ka, leir_kernel *kb, const leir_compare_options *opts,
                                 leir_comparison *out) {
  return leir__kernels_compare_ex(ka, kb, opts, false, out);
}

leir_status leir__kernels_compare_ex(leir_kernel *ka, leir_kernel *kb,
                                     const leir_compare_options *opts, bool stop_not_faster,
                                     leir_comparison *out) {
  if (!ka || !kb || !out) return leir__error_arg(NULL, "NULL argument");
  leir_status st = leir__struct_size_check(out, sizeof *out, "leir_comparison");
  if (st != LEIR_OK) return st;
  leir_comparison full;
  st = compare_kernels(ka, kb, opts, stop_not_faster, &full);
  if (st != LEIR_OK && st != LEIR_ERR_CANCELLED) return st;
  leir_status wst = leir__struct_write(out, &full, sizeof full, "leir_comparison");
  return st != LEIR_OK ? st : wst;
}

static leir_status compare_kernels(leir_kernel *ka, leir_kernel *kb, const leir_compare_options *opts,
                                   bool stop_not_faster, leir_comparison *out) {
  if (ka->backend != kb->backend)
    return leir__error_arg(NULL, "both kernels must come from the same backend");
  leir_compare_options o;
  leir_status st = read_compare_options(&o, opts);
  if (st != LEIR_OK) return st;
  leir_backend *b = ka->backend;
  leir_kernel *ks[2] = {ka, kb};
  void ***bufs = NULL;
  st = alloc_buffers(ks, 2, o.seed, &bufs);
  if (st != LEIR_OK) return st;
  uint32_t cap = o.max_rounds;
  double *ta = malloc(cap * sizeof *ta), *tb = malloc(cap * sizeof *tb);
  double *ratio = malloc(cap * sizeof *ratio);
  /* With a cancellation flag, one round per backend call: the flag is read
   * between calls (the cpu backend times in its runner process, which
   * cannot see the caller's memory), so at most one round runs after it is
   * set. */
  uint32_t batch = o.cancel ? 1 : o.min_rounds;
  leir__samples smp = {NULL, batch, NULL};
  smp.samples = calloc(2 * (size_t)batch, sizeof *smp.samples);
  smp.runs = calloc(2, sizeof *smp.runs);
  memset(out, 0, sizeof *out);
  out->size = sizeof *out;
  out->threads = backend_threads(b);
  if (!ta || !tb || !ratio || !smp.samples || !smp.runs) st = leir__error_nomem();
  uint32_t n = 0, next_look = o.min_rounds, looked = 0;
  double start = leir__now();
  bool decided = false;
  while (st == LEIR_OK && n < cap && !decided) {
    if (o.cancel && *o.cancel) {
      st = leir__error(LEIR_ERR_CANCELLED, "compare.cancelled", NULL, 0, 0,
                       "comparison cancelled after %u rounds", n);
      break;
    }
    /* no round starts past the time limit */
    double left = o.max_seconds - (leir__now() - start);
    if (n > 0 && left <= 0) break;
    uint32_t want = cap - n < batch ? cap - n : batch;
    leir_bench_options bo = LEIR_BENCH_OPTIONS_INIT;
    bo.flags = o.flags & LEIR_BENCH_NO_FLUSH;
    bo.warmup = n == 0 ? o.warmup : 0;
    bo.min_runs = bo.max_runs = want;
    bo.min_seconds = 0;
    /* the rounds are what we ask for, within what is left of the budget:
     * the backend stops a batch after the round in which it runs out (a
     * batch of 10 rounds of 0.2 s kernels took the comparison 3.1-4.1 s
     * past a 3 s budget when the budget was checked between batches) */
    bo.max_seconds = left > 1e-3 ? left : 1e-3;
    smp.max_runs = want;
    leir__exec_result res = {-1};
    st = b->ops->time(b, ks, 2, (void *const *const *)bufs, &bo, &smp, &res);
    if (st != LEIR_OK) break;
    uint32_t got = smp.runs[0] < smp.runs[1] ? smp.runs[0] : smp.runs[1];
    for (uint32_t r = 0; r < got; r++) {
      ta[n] = smp.samples[r];
      tb[n] = smp.samples[want + r];
      ratio[n] = ta[n] > 0 ? tb[n] / ta[n] : 1.0;
      n++;
    }
    if (got == 0) break;
    /* the decision is looked at every min_rounds rounds (and when the
     * rounds or the time run out), however the rounds were batched, so a
     * cancellation flag does not change the looks and their error rates */
    bool last = got < want || n >= cap;
    if (n < next_look && !last) continue;
    while (next_look <= n) next_look += o.min_rounds;
    looked = n;
    st = look(ratio, n, &o, stop_not_faster, out, &decided);
    if (leir__now() - start > o.max_seconds) break;
  }
  /* the rounds since the last look, when the time or the flag ended it */
  if ((st == LEIR_OK || st == LEIR_ERR_CANCELLED) && n > looked && !decided) {
    leir_status lst = look(ratio, n, &o, stop_not_faster, out, &decided);
    if (lst != LEIR_OK) st = lst;
  }
  if (st == LEIR_OK || st == LEIR_ERR_CANCELLED) {
    out->rounds = n;
    leir__timing_from_samples(&out->a, ta, n);
    leir__timing_from_samples(&out->b, tb, n);
    for (int k = 0; k < 2; k++) {
      leir_timing *t = k ? &out->b : &out->a;
      t->threads = out->threads;
      t->flops = ks[k]->cost.flops;
      t->bytes = ks[k]->cost.bytes;
      if (t->median_s > 0) {
        t->gflops = (double)t->flops / t->median_s * 1e-9;
        t->gbytes_per_s = (double)t->bytes / t->median_s * 1e-9;
      }
    }
    out->a.speedup = 1.0;
    out->b.speedup = out->b.median_s > 0 ? out->a.median_s / out->b.median_s : 0.0;
  }
  free(ta);
  free(tb);
  free(ratio);
  free(smp.samples);
  free(smp.runs);
  free_buffers(ks, 2, bufs);
  return st;
}
