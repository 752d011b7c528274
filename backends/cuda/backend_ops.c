/*
 * The "cuda" entry of the backend interface (backends/backend.h): lower
 * with lower.c, prepare = legality + NVRTC (through the PTX cache), execute
 * and time with the Driver API (exec.c).
 *
 * open() needs the driver and a device, except with LEIR_BACKEND_LOWER_ONLY
 * (then lowering and compilation work on any machine: `leir lower --to
 * cuda`). A bound loop that carries a dependence makes prepare() report
 * LEIR_ERR_INVALID for that kernel, with the reason in its log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "driver.h"
#include "error.h"

#define CUDA_VERSION_TAG 1

typedef struct cuda_state {
  bool device; /* the driver is open */
  char arch[64];
} cuda_state;

typedef struct cuda_kernel {
  leir__cuda_lowered *l;
  char *ptx;
} cuda_kernel;

leir_status leir__cuda_resolve_arch(const leir_cuda_options *o, char *buf, size_t cap);

static leir_status cuda_open(leir_backend *b) {
  cuda_state *s = calloc(1, sizeof *s);
  if (!s) return leir__error_nomem();
  leir_status st = LEIR_OK;
  if (!(b->opts.flags & LEIR_BACKEND_LOWER_ONLY)) {
    st = leir__cuda_driver_open();
    s->device = st == LEIR_OK;
  }
  if (st == LEIR_OK) st = leir__cuda_resolve_arch(NULL, s->arch, sizeof s->arch);
  if (st != LEIR_OK) {
    free(s);
    return st;
  }
  b->impl = s;
  return LEIR_OK;
}

static void cuda_close(leir_backend *b) {
  free(b->impl);
  b->impl = NULL;
}

static leir_status cuda_lower(leir_backend *b, const leir__analysis *a, leir__strbuf *out) {
  (void)b;
  leir__cuda_lowered *l = NULL;
  leir_status st = leir__cuda_lower_analysis((leir__analysis *)a, NULL, &l);
  if (st != LEIR_OK) return st;
  leir__sb_put(out, l->source, l->source_len);
  leir__cuda_lowered_free(l);
  return out->failed ? leir__error_nomem() : LEIR_OK;
}

static leir_status cuda_prepare(leir_backend *b, leir_kernel *const *ks, size_t n) {
  cuda_state *s = b->impl;
  for (size_t i = 0; i < n; i++) {
    leir_kernel *k = ks[i];
    cuda_kernel *ck = calloc(1, sizeof *ck);
    if (!ck) return leir__error_nomem();
    leir_status st = leir__cuda_lower_analysis(k->analysis, NULL, &ck->l);
    if (st == LEIR_OK) {
      char *log = NULL;
      st = leir__nvrtc_compile(ck->l->source, ck->l->source_len, s->arch,
                               (b->opts.flags & LEIR_BACKEND_FP_CONTRACT) != 0, &ck->ptx, NULL,
                               &log);
      if (log) leir__sb_puts(&k->log, log);
      free(log);
    } else if (st == LEIR_ERR_INVALID) {
      /* The reason (loop and tensor) for the verdict. */
      leir__sb_puts(&k->log, leir_error_last()->message);
    }
    if (st != LEIR_OK && st != LEIR_ERR_INVALID && st != LEIR_ERR_COMPILE) {
      leir__cuda_lowered_free(ck->l);
      free(ck);
      return st; /* the backend itself failed (no NVRTC, memory) */
    }
    k->prepared = st;
    k->impl = ck;
  }
  return LEIR_OK;
}

static void cuda_release(leir_backend *b, leir_kernel *k) {
  (void)b;
  cuda_kernel *ck = k->impl;
  if (!ck) return;
  leir__cuda_lowered_free(ck->l);
  free(ck->ptx);
  free(ck);
  k->impl = NULL;
}

static leir_status needs_device(leir_backend *b) {
  cuda_state *s = b->impl;
  if (s->device) return LEIR_OK;
  return leir__error(LEIR_ERR_NO_DEVICE, "cuda.device", NULL, 0, 0,
                     "no CUDA device: the backend was opened for lowering only");
}

static leir_status cuda_execute(leir_backend *b, leir_kernel *k, void *const *const *sets,
                                size_t nsets, leir__exec_result *res) {
  leir_status st = needs_device(b);
  if (st != LEIR_OK) return st;
  cuda_kernel *ck = k->impl;
  if (!ck || k->prepared != LEIR_OK)
    return leir__error_arg(NULL, "the kernel is not prepared");
  leir__cuda_driver_lock();
  leir__cuda_driver_open(); /* current context for this thread */
  for (size_t set = 0; set < nsets && st == LEIR_OK; set++) {
    session sn;
    st = leir__cuda_session_begin(&sn, ck->l, ck->ptx, sets[set], k->nknown);
    if (st == LEIR_OK) st = leir__cuda_launch_all(&sn);
    if (st == LEIR_OK) st = leir__cuda_check_trap(&sn, b->opts.timeout_s);
    if (st == LEIR_OK) st = leir__cuda_download(&sn, sets[set]);
    leir__cuda_session_end(&sn);
    if (st != LEIR_OK) res->set = (int32_t)set;
  }
  leir__cuda_driver_unlock();
  return st;
}

/* Alternating rounds (backend.h): one timed run per kernel per round, an
 * L2 flush before each, CUDA events around the launches of one run. */
static leir_status cuda_time(leir_backend *b, leir_kernel *const *ks, size_t n,
                             void *const *const *bufs, const leir_bench_options *o,
                             leir__samples *out, leir__exec_result *res) {
  leir_status st = needs_device(b);
  if (st != LEIR_OK) return st;
  session *ss = calloc(n ? n : 1, sizeof *ss);
  if (!ss) return leir__error_nomem();
  leir__cuda_driver_lock();
  leir__cuda_driver_open();
  size_t begun = 0;
  for (; begun < n && st == LEIR_OK; begun++) {
    cuda_kernel *ck = ks[begun]->impl;
    st = leir__cuda_session_begin(&ss[begun], ck->l, ck->ptx, bufs[begun], ks[begun]->nknown);
    if (st != LEIR_OK) res->set = (int32_t)begun;
  }
  CUevent start = NULL, stop = NULL;
  CUdeviceptr flush = 0;
  size_t flush_bytes = (size_t)(leir__cu.l2_bytes > 0 ? leir__cu.l2_bytes : 50 << 20) * 2;
  if (st == LEIR_OK) {
    CUresult r = leir__cu.EventCreate(&start, 0);
    if (r == 0) r = leir__cu.EventCreate(&stop, 0);
    if (r == 0 && !(o->flags & LEIR_BENCH_NO_FLUSH)) r = leir__cu.MemAlloc(&flush, flush_bytes);
    if (r != 0) st = leir__cuda_fail(&ss[0], r, "timing setup");
  }
  for (size_t k = 0; k < n && st == LEIR_OK; k++) {
    for (uint32_t w = 0; w < o->warmup && st == LEIR_OK; w++) st = leir__cuda_launch_all(&ss[k]);
    if (st == LEIR_OK) st = leir__cuda_check_trap(&ss[k], b->opts.timeout_s);
    if (st != LEIR_OK) res->set = (int32_t)k;
  }
  double *total = calloc(n ? n : 1, sizeof *total);
  if (!total && st == LEIR_OK) st = leir__error_nomem();
  double t0 = leir__now();
  for (size_t k = 0; k < n; k++) out->runs[k] = 0;
  for (uint32_t round = 0; st == LEIR_OK && round < out->max_runs; round++) {
    bool more = false;
    for (size_t k = 0; k < n; k++)
      if (out->runs[k] < o->min_runs || total[k] < o->min_seconds) more = true;
    double wall = leir__now() - t0;
    if (!more || (wall > o->max_seconds && round > 0)) break;
    for (size_t k = 0; k < n && st == LEIR_OK; k++) {
      CUresult r = 0;
      if (flush) r = leir__cu.MemsetD32(flush, round & 0xff, flush_bytes / 4);
      if (r == 0) r = leir__cu.EventRecord(start, NULL);
      if (r == 0) st = leir__cuda_launch_all(&ss[k]);
      if (r == 0 && st == LEIR_OK) r = leir__cu.EventRecord(stop, NULL);
      if (r == 0 && st == LEIR_OK) st = leir__cuda_check_trap(&ss[k], b->opts.timeout_s);
      float ms = 0;
      if (r == 0 && st == LEIR_OK) r = leir__cu.EventElapsedTime(&ms, start, stop);
      if (r != 0) st = leir__cuda_fail(&ss[k], r, "timing");
      if (st != LEIR_OK) {
        res->set = (int32_t)k;
        break;
      }
      out->samples[k * out->max_runs + out->runs[k]++] = ms * 1e-3;
      total[k] += ms * 1e-3;
    }
  }
  for (size_t k = 0; k < n && st == LEIR_OK; k++) st = leir__cuda_download(&ss[k], bufs[k]);
  free(total);
  if (flush) leir__cu.MemFree(flush);
  if (start) leir__cu.EventDestroy(start);
  if (stop) leir__cu.EventDestroy(stop);
  for (size_t k = 0; k < n; k++) leir__cuda_session_end(&ss[k]);
  leir__cuda_driver_unlock();
  free(ss);
  return st;
}

const leir__backend_ops leir__cuda_ops = {
    .name = "cuda",
    .version = CUDA_VERSION_TAG,
    .open = cuda_open,
    .close = cuda_close,
    .lower = cuda_lower,
    .prepare = cuda_prepare,
    .execute = cuda_execute,
    .time = cuda_time,
    .release = cuda_release,
    .execute_batch = NULL,
    .honours_fp_contract = true,
    .codegen_revision = LEIR__CUDA_CODEGEN_REVISION,
    .threaded = false,
};
