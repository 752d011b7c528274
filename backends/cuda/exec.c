/*
 * Running and timing lowered programs on the GPU (verification.md §4).
 *
 * One run: load the PTX module, allocate every global buffer, upload the
 * known variables (outputs too, so elements the program never writes keep
 * the caller's sentinel), zero the intermediates, launch the kernels in
 * nest order, check the trap word (run-time bounds checks of indirect
 * indices, integer division by zero), download the outputs.
 *
 * Timing: CUDA events around all kernels of one run; warm-up runs first;
 * before every timed run an L2-sized buffer (twice the L2) is written so
 * each run starts with a cold cache; at least min_runs runs and
 * min_total_ms of kernel time; median, min and max.
 *
 * The generated code is memory-safe by construction (affine accesses are
 * proven in bounds before lowering, indirect ones are clamped and trapped),
 * so kernels run in-process: a CUDA context does not survive fork(). A
 * sticky device fault still resets the context (driver.c) so a search can
 * go on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "driver.h"
#include "error.h"
#include "options.h"
#include "semantics.h"
#include "vec.h"

leir_status leir__cuda_fail(session *s, CUresult r, const char *what) {
  /* 700+ are faults in a kernel (illegal address, launch failure...). */
  if (r >= 700 && r < 800) s->sticky = true;
  return leir__error(r >= 700 && r < 800 ? LEIR_ERR_RUNTIME : LEIR_ERR_INTERNAL, "cuda.driver",
                     NULL, 0, 0, "%s failed: %s (CUDA error %d)", what, leir__cu_error_text(r), r);
}

static size_t buffer_bytes(const leir__buffer *b) {
  size_t n = (size_t)b->elements * leir_dtype_size((leir_dtype)b->dtype);
  return n ? n : 1;
}

void leir__cuda_session_end(session *s) {
  if (s->dev)
    for (uint32_t k = 0; k < s->l->nparams; k++)
      if (s->dev[k]) leir__cu.MemFree(s->dev[k]);
  if (s->trap) leir__cu.MemFree(s->trap);
  if (s->mod) leir__cu.ModuleUnload(s->mod);
  free(s->fns);
  free(s->dev);
  free(s->args);
  if (s->sticky) leir__cuda_driver_recover();
}

leir_status leir__cuda_session_begin(session *s, const leir__cuda_lowered *l, const char *ptx,
                                 void *const *host, size_t nhost) {
  memset(s, 0, sizeof *s);
  s->l = l;
  const leir__analysis *a = l->a;
  char log[4096] = "";
  int opt_keys[2] = {LEIR__CU_JIT_ERROR_LOG_BUFFER, LEIR__CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *opt_vals[2] = {log, (void *)(uintptr_t)sizeof log};
  CUresult r = leir__cu.ModuleLoadDataEx(&s->mod, ptx, 2, opt_keys, opt_vals);
  if (r != 0) {
    s->mod = NULL;
    return leir__error(LEIR_ERR_COMPILE, "cuda.module", NULL, 0, 0,
                       "the driver rejected the PTX (%s): %.600s", leir__cu_error_text(r), log);
  }
  s->fns = calloc(l->nkernels ? l->nkernels : 1, sizeof *s->fns);
  s->dev = calloc(l->nparams ? l->nparams : 1, sizeof *s->dev);
  s->args = calloc(l->nparams + 1, sizeof *s->args);
  if (!s->fns || !s->dev || !s->args) return leir__error_nomem();
  for (uint32_t k = 0; k < l->nkernels; k++) {
    r = leir__cu.ModuleGetFunction(&s->fns[k], s->mod, l->kernels[k].name);
    if (r != 0) return leir__cuda_fail(s, r, "cuModuleGetFunction");
  }
  for (uint32_t k = 0; k < l->nparams; k++) {
    const leir__buffer *b = &a->buffers[l->params[k]];
    size_t bytes = buffer_bytes(b);
    r = leir__cu.MemAlloc(&s->dev[k], bytes);
    if (r != 0) {
      s->dev[k] = 0;
      return r == 2 ? leir__error(LEIR_ERR_NOMEM, "cuda.memory", leir__sym_name(a->p, b->sym), 0,
                                  0, "out of GPU memory for %s (%zu bytes)",
                                  leir__sym_name(a->p, b->sym), bytes)
                    : leir__cuda_fail(s, r, "cuMemAlloc");
    }
    if (b->decl != LEIR__NONE) {
      if (b->decl >= nhost || !host[b->decl])
        return leir__error_arg(leir__sym_name(a->p, b->sym), "no host buffer for %s",
                               leir__sym_name(a->p, b->sym));
      r = leir__cu.MemcpyHtoD(s->dev[k], host[b->decl], bytes);
    } else {
      /* Intermediates start as the sentinel, like on every backend. */
      void *tmp = malloc(bytes);
      if (!tmp) return leir__error_nomem();
      leir__fill_sentinel(tmp, (leir_dtype)b->dtype, b->elements);
      r = leir__cu.MemcpyHtoD(s->dev[k], tmp, bytes);
      free(tmp);
    }
    if (r != 0) return leir__cuda_fail(s, r, "upload");
    s->args[k] = &s->dev[k];
  }
  r = leir__cu.MemAlloc(&s->trap, sizeof(int));
  if (r != 0) {
    s->trap = 0;
    return leir__cuda_fail(s, r, "cuMemAlloc");
  }
  s->args[l->nparams] = &s->trap;
  return LEIR_OK;
}

leir_status leir__cuda_launch_all(session *s) {
  const leir__cuda_lowered *l = s->l;
  for (uint32_t k = 0; k < l->nkernels; k++) {
    const leir__cuda_kernel *kn = &l->kernels[k];
    CUresult r = leir__cu.LaunchKernel(s->fns[k], kn->grid[0], kn->grid[1], kn->grid[2],
                                       kn->block[0], kn->block[1], kn->block[2], 0, NULL, s->args,
                                       NULL);
    if (r != 0) {
      leir_status st = leir__cuda_fail(s, r, "cuLaunchKernel");
      return leir__error(st, "cuda.launch", kn->name, 0, 0, "launching %s (grid %u,%u,%u block %u,%u,%u): %s",
                         kn->name, kn->grid[0], kn->grid[1], kn->grid[2], kn->block[0],
                         kn->block[1], kn->block[2], leir__cu_error_text(r));
    }
  }
  return LEIR_OK;
}

leir_status leir__cuda_check_trap(session *s, double timeout_s) {
  CUresult r = 0;
  if (timeout_s > 0) {
    /* Poll an event so a runaway kernel becomes TIMEOUT (the context is
     * then reset, which ends it). */
    CUevent ev = NULL;
    r = leir__cu.EventCreate(&ev, 2 /* CU_EVENT_DISABLE_TIMING */);
    if (r == 0) r = leir__cu.EventRecord(ev, NULL);
    double deadline = leir__now() * 1e3 + timeout_s * 1e3;
    while (r == 0) {
      r = leir__cu.EventQuery(ev);
      if (r != 600 /* CUDA_ERROR_NOT_READY */) break;
      r = 0;
      if (leir__now() * 1e3 > deadline) {
        leir__cu.EventDestroy(ev);
        s->sticky = true;
        return leir__error(LEIR_ERR_TIMEOUT, "runtime.timeout", NULL, 0, 0,
                           "the kernels ran longer than %.3g s", timeout_s);
      }
      struct timespec nap = {0, 100000};
      nanosleep(&nap, NULL);
    }
    if (ev) leir__cu.EventDestroy(ev);
  }
  if (r == 0) r = leir__cu.CtxSynchronize();
  if (r != 0) return leir__cuda_fail(s, r, "running the kernels");
  int code = 0;
  r = leir__cu.MemcpyDtoH(&code, s->trap, sizeof code);
  if (r != 0) return leir__cuda_fail(s, r, "reading the trap word");
  if (code == 0) return LEIR_OK;
  const leir__cuda_lowered *l = s->l;
  if (code < 0 || (uint32_t)code > l->ntraps)
    return leir__error(LEIR_ERR_RUNTIME, "runtime.division", NULL, 0, 0,
                       "integer division or modulo by zero");
  const leir__cuda_trap *t = &l->traps[code - 1];
  const char *name = leir__sym_name(l->a->p, l->a->buffers[t->buffer].sym);
  return leir__error(LEIR_ERR_RUNTIME, "runtime.bounds", name, t->line, t->column,
                     "indirect index out of bounds: subscript %u of %s (extent %lld)", t->dim + 1,
                     name, (long long)l->a->buffers[t->buffer].shape[t->dim]);
}

leir_status leir__cuda_download(session *s, void *const *host) {
  const leir__cuda_lowered *l = s->l;
  for (uint32_t k = 0; k < l->nparams; k++) {
    const leir__buffer *b = &l->a->buffers[l->params[k]];
    if (b->role != LEIR__BUF_OUTPUT) continue;
    CUresult r = leir__cu.MemcpyDtoH(host[b->decl], s->dev[k], buffer_bytes(b));
    if (r != 0) return leir__cuda_fail(s, r, "download");
  }
  return LEIR_OK;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

leir_status leir__cuda_time_runs(session *s, const leir_cuda_timing_options *o, leir_cuda_timing *out) {
  CUevent start = NULL, stop = NULL;
  CUdeviceptr flush = 0;
  size_t flush_bytes = (size_t)(leir__cu.l2_bytes > 0 ? leir__cu.l2_bytes : 50 << 20) * 2;
  leir_status st = LEIR_OK;
  double *times = NULL;
  size_t cap = 0, n = 0;
  CUresult r = leir__cu.EventCreate(&start, 0);
  if (r == 0) r = leir__cu.EventCreate(&stop, 0);
  if (r == 0 && o->flush_l2) r = leir__cu.MemAlloc(&flush, flush_bytes);
  if (r != 0) {
    st = leir__cuda_fail(s, r, "timing setup");
    goto done;
  }
  for (uint32_t w = 0; w < o->warmup && st == LEIR_OK; w++) st = leir__cuda_launch_all(s);
  if (st == LEIR_OK) st = leir__cuda_check_trap(s, 0);
  double total = 0;
  /* Cap the effort: 100000 runs or 20 s of kernel time. */
  while (st == LEIR_OK && (n < o->min_runs || total < o->min_total_ms) && n < 100000 &&
         total < 20000) {
    if (flush) {
      r = leir__cu.MemsetD32(flush, n & 0xff, flush_bytes / 4);
      if (r != 0) {
        st = leir__cuda_fail(s, r, "L2 flush");
        break;
      }
    }
    r = leir__cu.EventRecord(start, NULL);
    if (r == 0) st = leir__cuda_launch_all(s);
    if (r == 0 && st == LEIR_OK) r = leir__cu.EventRecord(stop, NULL);
    if (r == 0 && st == LEIR_OK) r = leir__cu.EventSynchronize(stop);
    float ms = 0;
    if (r == 0 && st == LEIR_OK) r = leir__cu.EventElapsedTime(&ms, start, stop);
    if (r != 0) {
      st = leir__cuda_fail(s, r, "timing");
      break;
    }
    if (st != LEIR_OK) break;
    if (!leir__vec_grow((void **)&times, &cap, n + 1, sizeof *times, 64)) {
      st = leir__error_nomem();
      break;
    }
    times[n++] = ms;
    total += ms;
  }
  if (st == LEIR_OK) st = leir__cuda_check_trap(s, 0);
  if (st == LEIR_OK && n > 0) {
    qsort(times, n, sizeof *times, cmp_double);
    out->runs = (uint32_t)n;
    out->min_ms = times[0];
    out->max_ms = times[n - 1];
    out->median_ms = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  }
done:
  free(times);
  if (flush) leir__cu.MemFree(flush);
  if (start) leir__cu.EventDestroy(start);
  if (stop) leir__cu.EventDestroy(stop);
  return st;
}


leir_status leir__cuda_resolve_arch(const leir_cuda_options *o, char *buf, size_t cap);
leir_status leir__cuda_read_options(const leir_cuda_options *in, leir_cuda_options *o);

static leir_status run_or_time(const leir_program *p, const leir_cuda_options *opts,
                               const leir_cuda_timing_options *to, void *const *host, size_t nhost,
                               leir_cuda_timing *timing) {
  if (!p || (!host && nhost)) return leir__error_arg(NULL, "NULL argument");
  leir_cuda_options opts_read;
  const leir_cuda_options *o = &opts_read;
  leir_status st = leir__cuda_read_options(opts, &opts_read);
  if (st != LEIR_OK) return st;
  st = leir__cuda_driver_open();
  if (st != LEIR_OK) return st;
  double t0 = leir__now() * 1e3;
  leir__cuda_lowered *l = NULL;
  st = leir__cuda_lower(p, o, &l);
  if (st != LEIR_OK) return st;
  char arch[64];
  char *ptx = NULL, *log = NULL;
  st = leir__cuda_resolve_arch(o, arch, sizeof arch);
  if (st == LEIR_OK)
    st = leir__nvrtc_compile(l->source, l->source_len, arch, o && (o->flags & LEIR_CUDA_FMAD), &ptx,
                             NULL, &log);
  free(log);
  double compile_ms = leir__now() * 1e3 - t0;
  if (st != LEIR_OK) {
    leir__cuda_lowered_free(l);
    return st;
  }
  leir__cuda_driver_lock();
  session s;
  st = leir__cuda_session_begin(&s, l, ptx, host, nhost);
  if (st == LEIR_OK && !timing) {
    st = leir__cuda_launch_all(&s);
    if (st == LEIR_OK) st = leir__cuda_check_trap(&s, 0);
  }
  if (st == LEIR_OK && timing) {
    st = leir__cuda_time_runs(&s, to, timing);
    timing->compile_ms = compile_ms;
  }
  if (st == LEIR_OK) st = leir__cuda_download(&s, host);
  leir__cuda_session_end(&s);
  leir__cuda_driver_unlock();
  free(ptx);
  leir__cuda_lowered_free(l);
  return st;
}

leir_status leir_cuda_run(const leir_program *program, const leir_cuda_options *opts,
                          void *const *buffers, size_t nbuffers) {
  return run_or_time(program, opts, NULL, buffers, nbuffers, NULL);
}

leir_status leir_cuda_time(const leir_program *program, const leir_cuda_options *opts,
                           const leir_cuda_timing_options *topts, void *const *buffers,
                           size_t nbuffers, leir_cuda_timing *out) {
  leir_cuda_timing_options o;
  leir_status st = LEIR__OPTIONS_READ(leir_cuda_timing_options, &o, topts,
                                      LEIR_CUDA_TIMING_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  if (!out) return leir__error_arg(NULL, "leir_cuda_timing is NULL");
  st = leir__struct_size_check(out, sizeof *out, "leir_cuda_timing");
  if (st != LEIR_OK) return st;
  /* measured into a complete struct, handed over as far as the caller's goes */
  leir_cuda_timing t = {sizeof t, 0, 0, 0, 0, 0};
  st = run_or_time(program, opts, &o, buffers, nbuffers, &t);
  leir__struct_write(out, &t, sizeof t, "leir_cuda_timing");
  return st;
}
