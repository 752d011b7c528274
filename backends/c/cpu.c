/*
 * The CPU backend: LEIR lowered to C (lower_c.c), compiled by the system C
 * compiler into a shared object (compile.c), and run by the kernel runner
 * (sandbox.h: a separate program started with posix_spawn, which loads the
 * object with dlopen). Generated code is never loaded into the caller's
 * process: not even a library constructor of a (possibly planted) cached
 * object runs outside the runner; and the caller never forks.
 *
 * Compiled objects live in a private directory of the backend (mkdtemp,
 * removed by leir_backend_free) and are cached by leir__cache_key in memory
 * (per backend) and, when configured, in the cache directory (cache.c:
 * every entry carries its key and a checksum, checked on load).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "compile.h"
#include "error.h"
#include "lower_c.h"
#include "sandbox.h"
#include "vec.h"

#define CPU_VERSION 1
#define MEMORY_CACHE_MAX 1024
/* Evaluations per entry of a parallel region below which a legal P/B loop
 * stays sequential (the region would cost more than it saves). */
#define MIN_PARALLEL_WORK 32768
/* OpenMP threads of a kernel, at most: every thread has a stack (8 MiB by
 * default) inside the kernel's address-space limit, and a thread pool that
 * cannot be created ends the kernel process (issue 11.8). */
#define MAX_THREADS 256

/* A compiled shared object in the backend's directory. Kernels point at
 * it; it is deleted when evicted (never while referenced). */
typedef struct object {
  uint64_t key;
  bool cached;       /* findable by key (false under LEIR_BACKEND_NO_CACHE) */
  char path[512];
  uint32_t refs;     /* kernels using it */
  uint64_t last_use; /* for eviction */
} object;

typedef struct cpu {
  leir__cc cc;
  leir__runner runner; /* started at the first execution */
  int threads;
  char dir[256];     /* private object directory ("" until first needed) */
  int dir_lock;      /* holds dir/.lock (compile.h) */
  uint64_t serial;   /* unique object file names */
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
  memset(&o, 0, sizeof o);
  o.check_all_bounds = b->opts.flags & LEIR_BACKEND_CHECK_ALL_BOUNDS;
  o.parallel = c->threads > 1;
  o.simd_alone = true;
  o.min_parallel_work = MIN_PARALLEL_WORK;
  return o;
}

/* ---- open / close / lower ------------------------------------------------ */

static leir_status cpu_open(leir_backend *b) {
  if (!(b->opts.flags & LEIR_BACKEND_LOWER_ONLY) && b->opts.threads > MAX_THREADS)
    return leir__error(LEIR_ERR_ARGUMENT, "backend.threads", NULL, 0, 0,
                       "threads: the cpu backend runs kernels with at most %d threads "
                       "(%u requested)",
                       MAX_THREADS, (unsigned)b->opts.threads);
  cpu *c = calloc(1, sizeof *c);
  if (!c) return leir__error_nomem();
  c->runner.sock = c->runner.err_fd = -1;
  if (!(b->opts.flags & LEIR_BACKEND_LOWER_ONLY)) {
    leir__cc_sweep_tmp();
    leir_status st = leir__runner_init(&c->runner, b->runner);
    if (st == LEIR_OK)
      st = leir__cc_init(&c->cc, b->compiler, b->compiler_flags,
                         (b->opts.flags & LEIR_BACKEND_FP_CONTRACT) != 0,
                         b->opts.compile_timeout_s, c->runner.path);
    if (st != LEIR_OK) {
      leir__runner_free(&c->runner);
      free(c);
      return st;
    }
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  c->threads = b->opts.threads ? (int)b->opts.threads : (n > 0 ? (int)n : 1);
  if (c->threads > MAX_THREADS) c->threads = MAX_THREADS;
  b->impl = c;
  return LEIR_OK;
}

static void cpu_close(leir_backend *b) {
  cpu *c = state(b);
  if (!c) return;
  leir__runner_free(&c->runner);
  while (c->nobjs) drop_object(c, c->nobjs - 1);
  free(c->objs);
  if (c->dir[0]) {
    leir__cc_remove_dir(c->dir);
    close(c->dir_lock);
  }
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
  unlink(c->objs[i]->path);
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

/* Copies src to dst (a new file); false on any error. */
static bool copy_file(const char *src, const char *dst) {
  int in = open(src, O_RDONLY | O_CLOEXEC);
  if (in < 0) return false;
  int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
  bool ok = out >= 0;
  char buf[65536];
  while (ok) {
    ssize_t r = read(in, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      ok = r == 0;
      break;
    }
    for (ssize_t done = 0; ok && done < r;) {
      ssize_t w = write(out, buf + done, (size_t)(r - done));
      if (w < 0 && errno == EINTR) continue;
      ok = w > 0;
      if (ok) done += w;
    }
  }
  close(in);
  if (out >= 0 && close(out) != 0) ok = false;
  if (!ok && out >= 0) unlink(dst);
  return ok;
}

/* Takes a compiled object into the backend's directory: `src` moved there,
 * or (src NULL) the entry of the cache directory `cache_dir`, which is
 * only taken when it carries this key and its checksum holds (else it is
 * evicted). NULL with the last error set (src) or on a cache miss. */
static object *add_object(cpu *c, uint64_t key, bool cached, const char *src,
                          const char *cache_dir) {
  if (!c->dir[0]) {
    /* locked, so that a later process can sweep it if this one is killed */
    if ((c->dir_lock = leir__cc_private_dir(c->dir, sizeof c->dir, LEIR__CC_OBJECTS_PREFIX)) < 0) {
      c->dir[0] = '\0';
      leir__error(LEIR_ERR_IO, "backend.tmpdir", NULL, 0, 0,
                  "cannot create a directory for compiled kernels: %s", strerror(errno));
      return NULL;
    }
  }
  evict(c);
  if (!leir__vec_grow32((void **)&c->objs, &c->cap, (size_t)c->nobjs + 1, sizeof *c->objs, 64)) {
    leir__error_nomem();
    return NULL;
  }
  object *o = calloc(1, sizeof *o);
  if (!o) {
    leir__error_nomem();
    return NULL;
  }
  snprintf(o->path, sizeof o->path, "%s/%016llx-%llu.so", c->dir, (unsigned long long)key,
           (unsigned long long)++c->serial);
  if (!src) {
    if (!leir__cache_load_file(cache_dir, key, ".so", o->path)) {
      free(o);
      return NULL;
    }
  } else if (!(rename(src, o->path) == 0 || copy_file(src, o->path))) {
    free(o);
    leir__error(LEIR_ERR_IO, "backend.object", NULL, 0, 0, "cannot keep the compiled kernel %s",
                src);
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
    if (!o && use_cache && b->cache_dir)
      o = add_object(c, ck->key, true, NULL, b->cache_dir); /* a bad entry is recompiled */
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
    jobs[j].obj = add_object(c, jobs[j].key, use_cache, jobs[j].cc.so, NULL);
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

/* ---- running in the runner ------------------------------------------------ */

/* Requests (sandbox.h) describe kernels in the shared data: a table of
 * leir__runner_kernel, then per kernel its buffer table and object path,
 * then the buffers themselves. */

static size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* Bytes of kernel k's buffer table and path. */
static size_t describe_bytes(const leir_kernel *k) {
  const cpu_kernel *ck = k->impl;
  return align_up((size_t)k->analysis->nbuffers * sizeof(leir__runner_buffer), 8) +
         align_up(strlen(ck->obj->path) + 1, 8);
}

/* Writes kernel k's description at data + off (describe_bytes(k) bytes)
 * into table entry *rk; known buffer i is at `base` + offsets[i]. */
static void describe(unsigned char *data, size_t off, const leir_kernel *k, size_t base,
                     const size_t *offsets, leir__runner_kernel *rk) {
  const cpu_kernel *ck = k->impl;
  const leir__analysis *a = k->analysis;
  leir__runner_buffer *rb = (leir__runner_buffer *)(void *)(data + off);
  for (uint32_t i = 0; i < a->nbuffers; i++) {
    memset(&rb[i], 0, sizeof rb[i]);
    rb[i].bytes = leir__buffer_bytes(&a->buffers[i]);
    rb[i].known = i < k->nknown;
    if (rb[i].known) {
      rb[i].offset = base + (offsets ? offsets[i] : 0);
    } else {
      rb[i].elements = a->buffers[i].elements;
      rb[i].dtype = (int32_t)a->buffers[i].dtype;
    }
  }
  size_t path_off = off + align_up((size_t)a->nbuffers * sizeof *rb, 8);
  memcpy(data + path_off, ck->obj->path, strlen(ck->obj->path) + 1);
  rk->path_off = path_off;
  rk->buffers_off = off;
  rk->nbuffers = a->nbuffers;
  rk->reserved = 0;
}

/* Layout of the known buffers of one set. */
static size_t set_bytes(const leir_kernel *k, size_t *offsets) {
  size_t off = 0;
  for (uint32_t i = 0; i < k->nknown; i++) {
    if (offsets) offsets[i] = off;
    off += ((size_t)leir__buffer_bytes(&k->analysis->buffers[i]) + 63) / 64 * 64;
  }
  return off ? off : 64;
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
  size_t desc = align_up(sizeof(leir__runner_kernel), 64) + align_up(describe_bytes(k), 64);
  leir__sandbox s;
  leir_status st = leir__sandbox_map(&s, desc + per_set * nsets);
  if (st != LEIR_OK) {
    free(offsets);
    return st;
  }
  leir__runner_kernel *rk = (leir__runner_kernel *)(void *)s.data;
  describe(s.data, align_up(sizeof *rk, 64), k, desc, offsets, rk);
  leir__runner_request *q = &s.shared->req;
  q->op = LEIR__REQ_EXEC;
  q->nkernels = 1;
  q->kernels_off = 0;
  int threads = k->threads ? (int)k->threads : c->threads;
  q->threads = threads;
  q->nsets = nsets;
  q->per_set = per_set;
  unsigned char *base = s.data + desc;
  for (size_t set = 0; set < nsets; set++)
    for (uint32_t i = 0; i < k->nknown; i++)
      memcpy(base + set * per_set + offsets[i], sets[set][i],
             (size_t)leir__buffer_bytes(&k->analysis->buffers[i]));
  leir__sandbox_limits lim = {b->opts.timeout_s, b->opts.memory_limit_bytes,
                              b->opts.timeout_s * (double)nsets * threads};
  st = leir__sandbox_run(&c->runner, &s, &lim);
  if (st == LEIR_OK) {
    for (size_t set = 0; set < nsets; set++)
      for (uint32_t i = 0; i < k->nknown; i++)
        if (k->analysis->buffers[i].role == LEIR__BUF_OUTPUT)
          memcpy(sets[set][i], base + set * per_set + offsets[i],
                 (size_t)leir__buffer_bytes(&k->analysis->buffers[i]));
  } else {
    res->set = s.shared->unit;
    if (s.shared->trapped) st = trap_error(k, s.shared);
  }
  leir__sandbox_unmap(&s);
  free(offsets);
  return st;
}

/* Several kernels with the same known buffers in one request (the
 * verifier's candidates): one round trip to the runner and one copy of the
 * inputs for all of them. Layout: kernel table, descriptions, the inputs of
 * every set (in_per_set apart), then the outputs of kernel j, set s at
 * (j * nsets + s) * out_per_set. */
static leir_status cpu_execute_batch(leir_backend *b, leir_kernel *const *ks, size_t n,
                                     void *const *const *sets, size_t nsets, void *const *outs,
                                     leir__exec_result *res, size_t *done) {
  cpu *c = state(b);
  *done = 0;
  res->set = -1;
  if (!n) return LEIR_OK;
  const leir_kernel *k0 = ks[0];
  uint32_t nk = k0->nknown;
  for (size_t j = 1; j < n; j++) {
    bool same = ks[j]->nknown == nk;
    for (uint32_t i = 0; same && i < nk; i++)
      same = leir__buffer_bytes(&ks[j]->analysis->buffers[i]) ==
                 leir__buffer_bytes(&k0->analysis->buffers[i]) &&
             ks[j]->analysis->buffers[i].role == k0->analysis->buffers[i].role;
    if (!same)
      return leir__error(LEIR_ERR_INTERNAL, "backend", NULL, 0, 0,
                         "kernels of a batch must have the same known buffers");
  }
  uint64_t *in_off = calloc(nk + 1, sizeof *in_off), *out_off = calloc(nk + 1, sizeof *out_off);
  if (!in_off || !out_off) {
    free(in_off);
    free(out_off);
    return leir__error_nomem();
  }
  size_t in_per_set = 0, out_per_set = 0;
  for (uint32_t i = 0; i < nk; i++) {
    size_t bytes = ((size_t)leir__buffer_bytes(&k0->analysis->buffers[i]) + 63) / 64 * 64;
    if (k0->analysis->buffers[i].role == LEIR__BUF_OUTPUT) {
      out_off[i] = out_per_set;
      out_per_set += bytes;
    } else {
      in_off[i] = in_per_set;
      in_per_set += bytes;
    }
  }
  if (!in_per_set) in_per_set = 64;
  if (!out_per_set) out_per_set = 64;
  size_t desc = align_up(n * sizeof(leir__runner_kernel), 64);
  size_t *desc_off = calloc(n, sizeof *desc_off);
  if (!desc_off) {
    free(in_off);
    free(out_off);
    return leir__error_nomem();
  }
  for (size_t j = 0; j < n; j++) {
    desc_off[j] = desc;
    desc += align_up(describe_bytes(ks[j]), 64);
  }
  size_t in_base = desc, out_base = in_base + in_per_set * nsets;
  leir__sandbox s;
  leir_status st = leir__sandbox_map(&s, out_base + out_per_set * nsets * n);
  if (st != LEIR_OK) {
    free(desc_off);
    free(in_off);
    free(out_off);
    return st;
  }
  leir__runner_kernel *rk = (leir__runner_kernel *)(void *)s.data;
  for (size_t j = 0; j < n; j++) {
    describe(s.data, desc_off[j], ks[j], 0, NULL, &rk[j]);
    leir__runner_buffer *rb = (leir__runner_buffer *)(void *)(s.data + desc_off[j]);
    for (uint32_t i = 0; i < nk; i++) {
      const leir__buffer *buf = &ks[j]->analysis->buffers[i];
      if (buf->role == LEIR__BUF_OUTPUT) {
        rb[i].known = LEIR__RB_OUTPUT;
        rb[i].offset = out_base + j * nsets * out_per_set + out_off[i];
        rb[i].stride = out_per_set;
        rb[i].elements = buf->elements;
        rb[i].dtype = (int32_t)buf->dtype;
      } else {
        rb[i].offset = in_base + in_off[i];
        rb[i].stride = in_per_set;
      }
    }
  }
  for (size_t set = 0; set < nsets; set++)
    for (uint32_t i = 0; i < nk; i++)
      if (k0->analysis->buffers[i].role != LEIR__BUF_OUTPUT)
        memcpy(s.data + in_base + set * in_per_set + in_off[i], sets[set][i],
               (size_t)leir__buffer_bytes(&k0->analysis->buffers[i]));
  int threads = k0->threads ? (int)k0->threads : c->threads;
  leir__runner_request *q = &s.shared->req;
  q->op = LEIR__REQ_BATCH;
  q->nkernels = (uint32_t)n;
  q->kernels_off = 0;
  q->threads = threads;
  q->nsets = nsets;
  /* the limits of one kernel: the runner applies them to each */
  leir__sandbox_limits lim = {b->opts.timeout_s, b->opts.memory_limit_bytes,
                              b->opts.timeout_s * (double)nsets * threads};
  st = leir__sandbox_run(&c->runner, &s, &lim);
  size_t ran = n;
  if (st != LEIR_OK) {
    int32_t unit = s.shared->unit;
    ran = unit >= 0 ? (size_t)unit / nsets : 0;
    if (ran >= n) ran = n - 1;
    res->set = unit >= 0 ? (int32_t)((size_t)unit % nsets) : -1;
    if (s.shared->trapped) st = trap_error(ks[ran], s.shared);
    *done = ran;
  }
  for (size_t j = 0; j < ran; j++)
    for (size_t set = 0; set < nsets; set++)
      for (uint32_t i = 0; i < nk; i++)
        if (k0->analysis->buffers[i].role == LEIR__BUF_OUTPUT)
          memcpy(outs[(j * nsets + set) * nk + i],
                 s.data + out_base + (j * nsets + set) * out_per_set + out_off[i],
                 (size_t)leir__buffer_bytes(&k0->analysis->buffers[i]));
  leir__sandbox_unmap(&s);
  free(desc_off);
  free(in_off);
  free(out_off);
  return st;
}

/* ---- timing in the runner --------------------------------------------------- */

static leir_status cpu_time(leir_backend *b, leir_kernel *const *ks, size_t n,
                            void *const *const *bufs, const leir_bench_options *opts,
                            leir__samples *out, leir__exec_result *res) {
  cpu *c = state(b);
  size_t *kernel_off = calloc(n ? n : 1, sizeof *kernel_off);
  size_t *desc_off = calloc(n ? n : 1, sizeof *desc_off);
  size_t **offsets = calloc(n ? n : 1, sizeof *offsets);
  leir_status st = LEIR_OK;
  if (!kernel_off || !desc_off || !offsets) st = leir__error_nomem();
  /* layout: kernel table, descriptions, buffers of each kernel, samples, runs */
  size_t total = align_up(n * sizeof(leir__runner_kernel), 64);
  for (size_t k = 0; k < n && st == LEIR_OK; k++) {
    desc_off[k] = total;
    total += align_up(describe_bytes(ks[k]), 64);
  }
  for (size_t k = 0; k < n && st == LEIR_OK; k++) {
    offsets[k] = calloc(ks[k]->nknown ? ks[k]->nknown : 1, sizeof **offsets);
    if (!offsets[k]) {
      st = leir__error_nomem();
      break;
    }
    kernel_off[k] = total;
    total += set_bytes(ks[k], offsets[k]);
  }
  size_t samples_off = total;
  total += align_up((size_t)n * out->max_runs * sizeof(double), 64);
  size_t runs_off = total;
  total += n * sizeof(uint32_t);
  leir__sandbox s;
  memset(&s, 0, sizeof s);
  s.fd = -1;
  if (st == LEIR_OK) st = leir__sandbox_map(&s, total);
  if (st == LEIR_OK) {
    leir__runner_kernel *rk = (leir__runner_kernel *)(void *)s.data;
    for (size_t k = 0; k < n; k++) {
      describe(s.data, desc_off[k], ks[k], kernel_off[k], offsets[k], &rk[k]);
      for (uint32_t i = 0; i < ks[k]->nknown; i++)
        memcpy(s.data + kernel_off[k] + offsets[k][i], bufs[k][i],
               (size_t)leir__buffer_bytes(&ks[k]->analysis->buffers[i]));
    }
    leir__runner_request *q = &s.shared->req;
    q->op = LEIR__REQ_TIME;
    q->nkernels = (uint32_t)n;
    q->kernels_off = 0;
    q->threads = c->threads;
    q->warmup = opts->warmup;
    q->bench_flags = opts->flags;
    q->min_runs = opts->min_runs;
    q->max_runs = out->max_runs;
    q->min_seconds = opts->min_seconds;
    q->max_seconds = opts->max_seconds;
    q->samples_off = samples_off;
    q->runs_off = runs_off;
    double cpu_s = (opts->max_seconds + b->opts.timeout_s * (opts->warmup + 2) * (double)n) *
                   c->threads;
    leir__sandbox_limits lim = {b->opts.timeout_s, b->opts.memory_limit_bytes, cpu_s};
    st = leir__sandbox_run(&c->runner, &s, &lim);
    if (st == LEIR_OK) {
      memcpy(out->samples, s.data + samples_off, (size_t)n * out->max_runs * sizeof(double));
      memcpy(out->runs, s.data + runs_off, n * sizeof(uint32_t));
    } else {
      res->set = s.shared->unit;
      if (s.shared->trapped && s.shared->unit >= 0 && (size_t)s.shared->unit < n)
        st = trap_error(ks[s.shared->unit], s.shared);
    }
  }
  leir__sandbox_unmap(&s);
  if (offsets)
    for (size_t k = 0; k < n; k++) free(offsets[k]);
  free(offsets);
  free(desc_off);
  free(kernel_off);
  return st;
}

const leir__backend_ops leir__cpu_ops = {
    .name = "cpu",
    .version = CPU_VERSION,
    .open = cpu_open,
    .close = cpu_close,
    .lower = cpu_lower,
    .prepare = cpu_prepare,
    .execute = cpu_execute,
    .time = cpu_time,
    .release = cpu_release,
    .execute_batch = cpu_execute_batch,
    .honours_fp_contract = true,
    .codegen_revision = LEIR__CPU_CODEGEN_REVISION,
    .threaded = true,
};
