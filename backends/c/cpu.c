/*
 * The CPU backend: LEIR lowered to C (lower_c.c), compiled by the system C
 * compiler into a shared object (compile.c), loaded with dlopen, and run in
 * a sandboxed child process (sandbox.c). Compiled objects are cached by
 * leir__cache_key in memory (per backend) and in the cache directory.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "bench.h"
#include "compile.h"
#include "error.h"
#include "lower_c.h"
#include "sandbox.h"
#include "semantics.h"

#define CPU_VERSION 1
#define MEMORY_CACHE_MAX 256
/* Evaluations per entry of a parallel region below which a legal P/B loop
 * stays sequential (the region would cost more than it saves). */
#define MIN_PARALLEL_WORK 32768

typedef int (*entry_fn)(void *const *bufs, leir__c_rt *rt);

/* A loaded shared object. Kernels point at it; it is freed when evicted
 * (never while referenced). */
typedef struct object {
  uint64_t key;
  bool cached;       /* findable by key (false under LEIR_BACKEND_NO_CACHE) */
  void *handle;
  entry_fn fn;
  uint32_t refs;     /* kernels using it */
  uint64_t last_use; /* for eviction */
} object;

typedef struct cpu {
  leir__cc cc;
  int threads;
  object **objs;
  uint32_t nobjs, cap;
  uint64_t clock;
} cpu;

/* What a kernel holds. */
typedef struct cpu_kernel {
  object *obj;
  uint64_t key;
  leir__c_site *sites;
  uint32_t nsites;
} cpu_kernel;

static cpu *state(leir_backend *b) { return b->impl; }
static void drop_object(cpu *c, uint32_t i);

static leir__c_options lower_options(const leir_backend *b, const cpu *c) {
  leir__c_options o;
  o.check_all_bounds = b->opts.flags & LEIR_BACKEND_CHECK_ALL_BOUNDS;
  o.parallel = c->threads > 1;
  o.min_parallel_work = MIN_PARALLEL_WORK;
  return o;
}

/* ---- open / close / lower ------------------------------------------------ */

static leir_status cpu_open(leir_backend *b) {
  cpu *c = calloc(1, sizeof *c);
  if (!c) return leir__error_nomem();
  if (!(b->opts.flags & LEIR_BACKEND_LOWER_ONLY)) {
    leir_status st =
        leir__cc_init(&c->cc, b->compiler, b->compiler_flags, b->opts.compile_timeout_s);
    if (st != LEIR_OK) {
      free(c);
      return st;
    }
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  c->threads = b->opts.threads ? (int)b->opts.threads : (n > 0 ? (int)n : 1);
  b->impl = c;
  return LEIR_OK;
}

static void cpu_close(leir_backend *b) {
  cpu *c = state(b);
  if (!c) return;
  while (c->nobjs) drop_object(c, c->nobjs - 1);
  free(c->objs);
  leir__cc_free(&c->cc);
  free(c);
  b->impl = NULL;
}

static leir_status cpu_lower(leir_backend *b, const leir__analysis *a, leir__strbuf *out) {
  leir__c_options o = lower_options(b, state(b));
  return leir__lower_c(a, &o, out, NULL, NULL);
}

/* ---- the object cache ----------------------------------------------------- */

static void drop_object(cpu *c, uint32_t i) {
  dlclose(c->objs[i]->handle);
  free(c->objs[i]);
  c->objs[i] = c->objs[--c->nobjs];
}

static object *find_object(cpu *c, uint64_t key) {
  for (uint32_t i = 0; i < c->nobjs; i++)
    if (c->objs[i]->cached && c->objs[i]->key == key) return c->objs[i];
  return NULL;
}

/* Drops least recently used unreferenced objects above the cap. */
static void evict(cpu *c) {
  while (c->nobjs >= MEMORY_CACHE_MAX) {
    uint32_t victim = UINT32_MAX;
    for (uint32_t i = 0; i < c->nobjs; i++)
      if (!c->objs[i]->refs &&
          (victim == UINT32_MAX || c->objs[i]->last_use < c->objs[victim]->last_use))
        victim = i;
    if (victim == UINT32_MAX) return;
    drop_object(c, victim);
  }
}

/* Loads a shared object into the cache; NULL with the last error set. */
static object *load_object(cpu *c, uint64_t key, bool cached, const char *path) {
  evict(c);
  if (c->nobjs == c->cap) {
    uint32_t cap = c->cap ? c->cap * 2 : 64;
    object **objs = realloc(c->objs, cap * sizeof *objs);
    if (!objs) {
      leir__error_nomem();
      return NULL;
    }
    c->objs = objs;
    c->cap = cap;
  }
  object *o = calloc(1, sizeof *o);
  if (!o) {
    leir__error_nomem();
    return NULL;
  }
  o->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!o->handle) {
    leir__error(LEIR_ERR_INTERNAL, "backend.dlopen", NULL, 0, 0, "cannot load %s: %s", path,
                dlerror());
    free(o);
    return NULL;
  }
  void *sym = dlsym(o->handle, LEIR__C_ENTRY);
  memcpy(&o->fn, &sym, sizeof o->fn);
  if (!o->fn) {
    dlclose(o->handle);
    free(o);
    leir__error(LEIR_ERR_INTERNAL, "backend.dlopen", NULL, 0, 0, "%s has no %s", path,
                LEIR__C_ENTRY);
    return NULL;
  }
  o->key = key;
  o->cached = cached;
  o->last_use = ++c->clock;
  c->objs[c->nobjs++] = o;
  return o;
}

/* ---- prepare ------------------------------------------------------------- */

static void attach(cpu *c, leir_kernel *k, object *o) {
  cpu_kernel *ck = k->impl;
  ck->obj = o;
  o->refs++;
  o->last_use = ++c->clock;
  k->prepared = LEIR_OK;
}

/* One compilation per distinct source of the batch. */
typedef struct job {
  uint64_t key;
  char *source;
  size_t len;
  leir__cc_job cc;
  bool started;
  object *obj;
} job;

static leir_status cpu_prepare(leir_backend *b, leir_kernel *const *ks, size_t n) {
  cpu *c = state(b);
  if (b->opts.flags & LEIR_BACKEND_LOWER_ONLY)
    return leir__error(LEIR_ERR_UNSUPPORTED, "backend.lower-only", "cpu", 0, 0,
                       "this cpu backend was opened for lowering only");
  bool use_cache = !(b->opts.flags & LEIR_BACKEND_NO_CACHE);
  leir__c_options lo = lower_options(b, c);
  job *jobs = calloc(n ? n : 1, sizeof *jobs);
  size_t njobs = 0;
  if (!jobs) return leir__error_nomem();
  leir_status st = LEIR_OK;
  /* 1: lower; reuse a cached object (memory, then disk) when there is one */
  for (size_t i = 0; i < n && st == LEIR_OK; i++) {
    leir_kernel *k = ks[i];
    cpu_kernel *ck = calloc(1, sizeof *ck);
    if (!ck) {
      st = leir__error_nomem();
      break;
    }
    k->impl = ck; /* freed by cpu_release whatever happens next */
    leir__strbuf src = LEIR__STRBUF_INIT;
    st = leir__lower_c(k->analysis, &lo, &src, &ck->sites, &ck->nsites);
    size_t len = src.len;
    char *text = st == LEIR_OK ? leir__sb_finish(&src, NULL) : NULL;
    leir__sb_release(&src);
    if (st == LEIR_OK && !text) st = leir__error_nomem();
    if (st != LEIR_OK) break;
    ck->key = leir__cache_key(b->ops, c->cc.identity, c->cc.flags_text, text, len);
    object *o = use_cache ? find_object(c, ck->key) : NULL;
    if (!o && use_cache && b->cache_dir) {
      char path[4096];
      if (leir__cache_path(path, sizeof path, b->cache_dir, ck->key, ".so") &&
          access(path, R_OK) == 0)
        o = load_object(c, ck->key, true, path); /* a bad file is simply recompiled */
    }
    if (o) {
      attach(c, k, o);
      free(text);
      continue;
    }
    bool dup = false;
    for (size_t j = 0; j < njobs && !dup; j++) dup = jobs[j].key == ck->key;
    if (dup) {
      free(text);
      continue;
    }
    jobs[njobs].key = ck->key;
    jobs[njobs].source = text;
    jobs[njobs].len = len;
    njobs++;
  }
  /* 2: start every compiler, then wait for them all */
  for (size_t j = 0; j < njobs && st == LEIR_OK; j++) {
    st = leir__cc_start(&c->cc, jobs[j].source, jobs[j].len, b->opts.memory_limit_bytes,
                        b->opts.compile_timeout_s, &jobs[j].cc);
    jobs[j].started = true; /* cleanup also after a failed start */
  }
  if (st == LEIR_OK && njobs) {
    leir__cc_job *cj = calloc(njobs, sizeof *cj);
    if (!cj) {
      st = leir__error_nomem();
    } else {
      for (size_t j = 0; j < njobs; j++) cj[j] = jobs[j].cc;
      leir__cc_wait(cj, njobs, b->opts.compile_timeout_s);
      for (size_t j = 0; j < njobs; j++) jobs[j].cc = cj[j];
      free(cj);
    }
  }
  /* 3: keep and load what compiled */
  for (size_t j = 0; j < njobs && st == LEIR_OK; j++) {
    if (jobs[j].cc.status != LEIR_OK) continue;
    if (use_cache && b->cache_dir)
      leir__cache_store_file(b->cache_dir, jobs[j].key, ".so", jobs[j].cc.so);
    jobs[j].obj = load_object(c, jobs[j].key, use_cache, jobs[j].cc.so);
    if (!jobs[j].obj) st = leir_error_last()->status;
  }
  /* 4: hand each kernel its object or its compiler's verdict */
  for (size_t i = 0; i < n && st == LEIR_OK; i++) {
    leir_kernel *k = ks[i];
    cpu_kernel *ck = k->impl;
    if (k->prepared == LEIR_OK) continue;
    for (size_t j = 0; j < njobs; j++) {
      if (jobs[j].key != ck->key) continue;
      if (jobs[j].obj) {
        attach(c, k, jobs[j].obj);
      } else {
        k->prepared = jobs[j].cc.status;
        if (jobs[j].cc.log.len) leir__sb_put(&k->log, jobs[j].cc.log.data, jobs[j].cc.log.len);
      }
      break;
    }
  }
  for (size_t j = 0; j < njobs; j++) {
    if (jobs[j].started) leir__cc_cleanup(&jobs[j].cc);
    free(jobs[j].source);
    /* an uncached object nobody took is dropped */
    if (jobs[j].obj && !jobs[j].obj->cached && !jobs[j].obj->refs)
      for (uint32_t i = 0; i < c->nobjs; i++)
        if (c->objs[i] == jobs[j].obj) {
          drop_object(c, i);
          break;
        }
  }
  free(jobs);
  return st;
}

static void cpu_release(leir_backend *b, leir_kernel *k) {
  cpu *c = state(b);
  cpu_kernel *ck = k->impl;
  if (!ck) return;
  if (ck->obj && --ck->obj->refs == 0 && !ck->obj->cached)
    for (uint32_t i = 0; i < c->nobjs; i++)
      if (c->objs[i] == ck->obj) {
        drop_object(c, i);
        break;
      }
  free(ck->sites);
  free(ck);
  k->impl = NULL;
}

/* ---- running in the sandbox ----------------------------------------------- */

static void child_trap(leir__c_rt *rt, int kind, int site, int64_t value, int64_t extent) {
  leir__sandbox_trap(rt->host, kind, site, value, extent);
}

/* Intermediates of a kernel, allocated in the child. */
static bool alloc_temps(leir__sandbox *s, const leir_kernel *k, void **bufs) {
  const leir__analysis *a = k->analysis;
  for (uint32_t i = k->nknown; i < a->nbuffers; i++) {
    uint64_t bytes = leir__buffer_bytes(&a->buffers[i]);
    bufs[i] = malloc(bytes ? (size_t)bytes : 1);
    if (!bufs[i]) {
      leir__sandbox_fail(s, LEIR_ERR_RUNTIME,
                         "cannot allocate %llu bytes for intermediate %s (memory limit)",
                         (unsigned long long)bytes, leir__sym_name(k->program, a->buffers[i].sym));
      return false;
    }
  }
  return true;
}

static void fill_temps(const leir_kernel *k, void **bufs) {
  const leir__analysis *a = k->analysis;
  for (uint32_t i = k->nknown; i < a->nbuffers; i++)
    leir__fill_sentinel(bufs[i], (leir_dtype)a->buffers[i].dtype, a->buffers[i].elements);
}

/* Layout of the known buffers of nsets sets in the shared data. */
static size_t set_bytes(const leir_kernel *k, size_t *offsets) {
  size_t off = 0;
  for (uint32_t i = 0; i < k->nknown; i++) {
    if (offsets) offsets[i] = off;
    off += ((size_t)leir__buffer_bytes(&k->analysis->buffers[i]) + 63) / 64 * 64;
  }
  return off ? off : 64;
}

typedef struct exec_ctx {
  leir_kernel *k;
  size_t nsets, per_set;
  const size_t *offsets;
  int threads;
} exec_ctx;

static void exec_child(void *vctx, leir__sandbox *s) {
  exec_ctx *x = vctx;
  leir_kernel *k = x->k;
  cpu_kernel *ck = k->impl;
  void **bufs = calloc(k->analysis->nbuffers ? k->analysis->nbuffers : 1, sizeof *bufs);
  if (!bufs) {
    leir__sandbox_fail(s, LEIR_ERR_RUNTIME, "out of memory in the kernel process");
    return;
  }
  if (!alloc_temps(s, k, bufs)) return;
  leir__c_rt rt = {child_trap, x->threads, s};
  for (size_t set = 0; set < x->nsets; set++) {
    s->shared->unit = (int32_t)set;
    for (uint32_t i = 0; i < k->nknown; i++)
      bufs[i] = s->data + set * x->per_set + x->offsets[i];
    fill_temps(k, bufs);
    ck->obj->fn(bufs, &rt);
    __atomic_add_fetch(&s->shared->progress, 1, __ATOMIC_SEQ_CST);
  }
}

/* The message of a trap, from the site table. */
static leir_status trap_error(const leir_kernel *k, const leir__sandbox_shared *sh) {
  const cpu_kernel *ck = k->impl;
  if (sh->trap_site < 0 || (uint32_t)sh->trap_site >= ck->nsites)
    return leir__error(LEIR_ERR_RUNTIME, "run.trap", NULL, 0, 0, "run-time trap (kind %d)",
                       sh->trap_kind);
  const leir__c_site *site = &ck->sites[sh->trap_site];
  uint32_t line, col;
  leir__position(k->program, site->pos, &line, &col);
  if (sh->trap_kind == LEIR__TRAP_BOUNDS)
    return leir__error(LEIR_ERR_RUNTIME, "run.trap", site->tensor, line, col,
                       "index %lld is out of range [0, %lld) in subscript %u of %s",
                       (long long)sh->trap_value, (long long)sh->trap_extent, site->dim + 1,
                       site->tensor);
  if (sh->trap_extent != 0)
    return leir__error(LEIR_ERR_RUNTIME, "run.trap", NULL, line, col,
                       "integer division by zero (0 ** negative)");
  return leir__error(LEIR_ERR_RUNTIME, "run.trap", NULL, line, col, "integer division by zero");
}

static leir_status cpu_execute(leir_backend *b, leir_kernel *k, void *const *const *sets,
                               size_t nsets, leir__exec_result *res) {
  cpu *c = state(b);
  size_t *offsets = calloc(k->nknown ? k->nknown : 1, sizeof *offsets);
  if (!offsets) return leir__error_nomem();
  size_t per_set = set_bytes(k, offsets);
  leir__sandbox s;
  leir_status st = leir__sandbox_map(&s, per_set * nsets);
  if (st != LEIR_OK) {
    free(offsets);
    return st;
  }
  for (size_t set = 0; set < nsets; set++)
    for (uint32_t i = 0; i < k->nknown; i++)
      memcpy(s.data + set * per_set + offsets[i], sets[set][i],
             (size_t)leir__buffer_bytes(&k->analysis->buffers[i]));
  exec_ctx x = {k, nsets, per_set, offsets, c->threads};
  leir__sandbox_limits lim = {b->opts.timeout_s, b->opts.memory_limit_bytes,
                              b->opts.timeout_s * (double)nsets * c->threads};
  st = leir__sandbox_run(&s, &lim, exec_child, &x);
  if (st == LEIR_OK) {
    for (size_t set = 0; set < nsets; set++)
      for (uint32_t i = 0; i < k->nknown; i++)
        if (k->analysis->buffers[i].role == LEIR__BUF_OUTPUT)
          memcpy(sets[set][i], s.data + set * per_set + offsets[i],
                 (size_t)leir__buffer_bytes(&k->analysis->buffers[i]));
  } else {
    res->set = s.shared->unit;
    if (s.shared->trapped) st = trap_error(k, s.shared);
  }
  leir__sandbox_unmap(&s);
  free(offsets);
  return st;
}

/* ---- timing in the sandbox ------------------------------------------------ */

typedef struct time_ctx {
  leir_kernel *const *ks;
  size_t n;
  const leir_bench_options *opts;
  size_t *kernel_off;       /* per kernel: start of its known buffers */
  size_t **offsets;         /* per kernel: per buffer */
  size_t samples_off, runs_off;
  uint32_t max_runs;
  int threads;
  /* in the child */
  leir__sandbox *s;
  void ***bufs;
  leir__c_rt rt;
} time_ctx;

static leir_status run_kernel(void *vctx, leir_kernel *k, void *const *bufs) {
  time_ctx *t = vctx;
  cpu_kernel *ck = k->impl;
  for (size_t i = 0; i < t->n; i++)
    if (t->ks[i] == k) t->s->shared->unit = (int32_t)i;
  ck->obj->fn(bufs, &t->rt);
  __atomic_add_fetch(&t->s->shared->progress, 1, __ATOMIC_SEQ_CST);
  return LEIR_OK;
}

static void time_child(void *vctx, leir__sandbox *s) {
  time_ctx *t = vctx;
  t->s = s;
  t->rt = (leir__c_rt){child_trap, t->threads, s};
  t->bufs = calloc(t->n, sizeof *t->bufs);
  if (!t->bufs) {
    leir__sandbox_fail(s, LEIR_ERR_RUNTIME, "out of memory in the kernel process");
    return;
  }
  for (size_t k = 0; k < t->n; k++) {
    leir_kernel *kern = t->ks[k];
    t->bufs[k] = calloc(kern->analysis->nbuffers ? kern->analysis->nbuffers : 1, sizeof **t->bufs);
    if (!t->bufs[k]) {
      leir__sandbox_fail(s, LEIR_ERR_RUNTIME, "out of memory in the kernel process");
      return;
    }
    for (uint32_t i = 0; i < kern->nknown; i++)
      t->bufs[k][i] = s->data + t->kernel_off[k] + t->offsets[k][i];
    if (!alloc_temps(s, kern, t->bufs[k])) return;
    fill_temps(kern, t->bufs[k]);
  }
  leir__samples out = {(double *)(s->data + t->samples_off), t->max_runs,
                       (uint32_t *)(s->data + t->runs_off)};
  leir__exec_result res = {-1};
  leir_status st = leir__time_loop(t->ks, t->n, (void *const *const *)t->bufs, t->opts, run_kernel,
                                   t, &out, &res);
  if (st != LEIR_OK) leir__sandbox_fail(s, st, "%s", leir_error_last()->message);
}

static leir_status cpu_time(leir_backend *b, leir_kernel *const *ks, size_t n,
                            void *const *const *bufs, const leir_bench_options *opts,
                            leir__samples *out, leir__exec_result *res) {
  cpu *c = state(b);
  time_ctx t;
  memset(&t, 0, sizeof t);
  t.ks = ks;
  t.n = n;
  t.opts = opts;
  t.max_runs = out->max_runs;
  t.threads = c->threads;
  t.kernel_off = calloc(n, sizeof *t.kernel_off);
  t.offsets = calloc(n, sizeof *t.offsets);
  leir_status st = LEIR_OK;
  if (!t.kernel_off || !t.offsets) st = leir__error_nomem();
  size_t total = 0;
  for (size_t k = 0; k < n && st == LEIR_OK; k++) {
    t.offsets[k] = calloc(ks[k]->nknown ? ks[k]->nknown : 1, sizeof **t.offsets);
    if (!t.offsets[k]) {
      st = leir__error_nomem();
      break;
    }
    t.kernel_off[k] = total;
    total += set_bytes(ks[k], t.offsets[k]);
  }
  t.samples_off = total;
  total += ((size_t)n * out->max_runs * sizeof(double) + 63) / 64 * 64;
  t.runs_off = total;
  total += n * sizeof(uint32_t);
  leir__sandbox s;
  memset(&s, 0, sizeof s);
  if (st == LEIR_OK) st = leir__sandbox_map(&s, total);
  if (st == LEIR_OK) {
    for (size_t k = 0; k < n; k++)
      for (uint32_t i = 0; i < ks[k]->nknown; i++)
        memcpy(s.data + t.kernel_off[k] + t.offsets[k][i], bufs[k][i],
               (size_t)leir__buffer_bytes(&ks[k]->analysis->buffers[i]));
    double cpu_s = (opts->max_seconds + b->opts.timeout_s * (opts->warmup + 2) * (double)n) *
                   c->threads;
    leir__sandbox_limits lim = {b->opts.timeout_s, b->opts.memory_limit_bytes, cpu_s};
    st = leir__sandbox_run(&s, &lim, time_child, &t);
    if (st == LEIR_OK) {
      memcpy(out->samples, s.data + t.samples_off, (size_t)n * out->max_runs * sizeof(double));
      memcpy(out->runs, s.data + t.runs_off, n * sizeof(uint32_t));
    } else {
      res->set = s.shared->unit;
      if (s.shared->trapped && s.shared->unit >= 0 && (size_t)s.shared->unit < n)
        st = trap_error(ks[s.shared->unit], s.shared);
    }
  }
  leir__sandbox_unmap(&s);
  if (t.offsets)
    for (size_t k = 0; k < n; k++) free(t.offsets[k]);
  free(t.offsets);
  free(t.kernel_off);
  return st;
}

const leir__backend_ops leir__cpu_ops = {
    "cpu",       CPU_VERSION, cpu_open, cpu_close,  cpu_lower,
    cpu_prepare, cpu_execute, cpu_time, cpu_release,
};
