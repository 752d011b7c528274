/*
 * leir-runner: the program that runs generated CPU kernels for libleir
 * (backends/sandbox.h). The library starts it with posix_spawn, so kernels
 * are loaded by a fresh single-threaded process and never by a fork of a
 * (possibly multi-threaded) host.
 *
 *   leir-runner --serve
 *       serves requests on descriptor 3 (a Unix socket): each request is a
 *       shared memory descriptor whose record says what to run; the reply
 *       is one byte once the record holds the outcome ('D', or 'R' when
 *       the runner wants to be replaced). Ends at end of file.
 *   leir-runner --limits AS_BYTES CPU_SECONDS -- PROGRAM ARGS...
 *       sets RLIMIT_AS and RLIMIT_CPU (0 = leave alone) and RLIMIT_CORE =
 *       0, then executes PROGRAM: the C compiler runs under its limits from
 *       its first instruction, and so does every pass it starts.
 *
 * Not for humans: the protocol is internal and versioned
 * (LEIR__RUNNER_PROTOCOL).
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "error.h"
#include "lower_c.h"
#include "sandbox.h"
#include "semantics.h"

/* Sanitizers reserve terabytes of address space: RLIMIT_AS would break
 * them, so sanitized builds rely on the other limits. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NO_RLIMIT_AS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define NO_RLIMIT_AS 1
#endif
#endif

#define SOCK 3
/* Objects kept loaded; past this the runner asks to be replaced. */
#define MAX_LOADED 128
/* What the runner may write to its stderr (the library reads it back). */
#define STDERR_LIMIT (64 * 1024)

typedef int (*entry_fn)(void *const *bufs, leir__c_rt *rt);

static struct loaded {
  char *path;
  entry_fn fn;
} loaded[MAX_LOADED];
static unsigned nloaded;
static bool retire;

static leir__sandbox S; /* the request being served */

/* ---- limits ------------------------------------------------------------------ */

static void set_soft(int resource, rlim_t soft) {
  struct rlimit r;
  if (getrlimit(resource, &r) != 0) return;
  if (r.rlim_max != RLIM_INFINITY && (soft == RLIM_INFINITY || soft > r.rlim_max))
    soft = r.rlim_max;
  r.rlim_cur = soft;
  setrlimit(resource, &r);
}

static void set_both(int resource, rlim_t value) {
  struct rlimit r;
  if (getrlimit(resource, &r) != 0) return;
  if (r.rlim_max != RLIM_INFINITY && (value == RLIM_INFINITY || value > r.rlim_max))
    value = r.rlim_max;
  r.rlim_cur = r.rlim_max = value;
  setrlimit(resource, &r);
}

#ifndef NO_RLIMIT_AS
/* Current virtual size of this process, from /proc (0 if unknown). */
static uint64_t current_vm_bytes(void) {
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  unsigned long long pages = 0;
  for (char *p = buf; *p >= '0' && *p <= '9'; p++) pages = pages * 10 + (unsigned)(*p - '0');
  long page = sysconf(_SC_PAGESIZE);
  return pages * (uint64_t)(page > 0 ? page : 4096);
}
#endif

static double cpu_used(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
         ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

/* Limits of one request, before anything of it is loaded or run. */
static void request_limits(const leir__runner_request *q) {
  if (q->cpu_seconds > 0) set_soft(RLIMIT_CPU, (rlim_t)(cpu_used() + q->cpu_seconds + 1.0));
#ifndef NO_RLIMIT_AS
  uint64_t vm = current_vm_bytes();
  if (q->memory_bytes && vm + q->memory_bytes > vm)
    set_soft(RLIMIT_AS, (rlim_t)(vm + q->memory_bytes));
#endif
}

static void lift_limits(void) {
  set_soft(RLIMIT_CPU, RLIM_INFINITY);
#ifndef NO_RLIMIT_AS
  set_soft(RLIMIT_AS, RLIM_INFINITY);
#endif
}

/* ---- requests ------------------------------------------------------------------ */

static void trap(leir__c_rt *rt, int kind, int site, int64_t value, int64_t extent) {
  leir__sandbox_trap(rt->host, kind, site, value, extent);
}

/* A pointer to `bytes` bytes at `off` of the data, or NULL when out of range. */
static void *at(uint64_t off, uint64_t bytes) {
  if (off > S.data_bytes || bytes > S.data_bytes - off) return NULL;
  return S.data + off;
}

static const char *string_at(uint64_t off) {
  if (off >= S.data_bytes) return NULL;
  const char *s = (const char *)S.data + off;
  return memchr(s, '\0', S.data_bytes - off) ? s : NULL;
}

static entry_fn load(const char *path) {
  for (unsigned i = 0; i < nloaded; i++)
    if (strcmp(loaded[i].path, path) == 0) return loaded[i].fn;
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    leir__sandbox_fail(&S, LEIR_ERR_RUNTIME, "cannot load the compiled kernel: %s",
                       e ? e : "unknown error");
    return NULL;
  }
  void *sym = dlsym(h, LEIR__C_ENTRY);
  entry_fn fn;
  memcpy(&fn, &sym, sizeof fn);
  if (!fn) {
    leir__sandbox_fail(&S, LEIR_ERR_RUNTIME, "the compiled kernel has no %s", LEIR__C_ENTRY);
    return NULL;
  }
  /* objects are never closed (OpenMP's threads may still refer to them);
   * a runner that loaded many is replaced instead */
  char *copy = strdup(path);
  if (copy && nloaded < MAX_LOADED) {
    loaded[nloaded].path = copy;
    loaded[nloaded++].fn = fn;
  } else {
    free(copy);
  }
  if (nloaded >= MAX_LOADED) retire = true;
  return fn;
}

typedef struct kernel {
  entry_fn fn;
  const leir__runner_buffer *buffers;
  uint32_t nbuffers;
  void **bufs;
} kernel;

/* Resolves kernel i of the request: its entry, buffer table and
 * intermediates (allocated); known buffers point at base + offset. */
static bool prepare(uint32_t i, uint64_t base, kernel *k) {
  const leir__runner_request *q = &S.shared->req;
  const leir__runner_kernel *rk =
      at(q->kernels_off + (uint64_t)i * sizeof *rk, sizeof *rk);
  const char *path = rk ? string_at(rk->path_off) : NULL;
  k->buffers = rk ? at(rk->buffers_off, (uint64_t)rk->nbuffers * sizeof *k->buffers) : NULL;
  if (!rk || !path || !k->buffers || ((uintptr_t)k->buffers & 7)) {
    leir__sandbox_fail(&S, LEIR_ERR_INTERNAL, "malformed request to the kernel runner");
    return false;
  }
  k->nbuffers = rk->nbuffers;
  if (!(k->fn = load(path))) return false;
  k->bufs = calloc(k->nbuffers ? k->nbuffers : 1, sizeof *k->bufs);
  if (!k->bufs) {
    leir__sandbox_fail(&S, LEIR_ERR_RUNTIME, "out of memory in the kernel process");
    return false;
  }
  for (uint32_t b = 0; b < k->nbuffers; b++) {
    const leir__runner_buffer *rb = &k->buffers[b];
    if (rb->known) {
      if (!(k->bufs[b] = at(base + rb->offset, rb->bytes))) {
        leir__sandbox_fail(&S, LEIR_ERR_INTERNAL, "malformed request to the kernel runner");
        return false;
      }
      continue;
    }
    k->bufs[b] = rb->bytes <= SIZE_MAX ? malloc(rb->bytes ? (size_t)rb->bytes : 1) : NULL;
    if (!k->bufs[b]) {
      leir__sandbox_fail(&S, LEIR_ERR_RUNTIME,
                         "cannot allocate %llu bytes for an intermediate (memory limit)",
                         (unsigned long long)rb->bytes);
      return false;
    }
  }
  return true;
}

static void fill_temps(const kernel *k) {
  for (uint32_t b = 0; b < k->nbuffers; b++)
    if (!k->buffers[b].known)
      leir__fill_sentinel(k->bufs[b], (leir_dtype)k->buffers[b].dtype, k->buffers[b].elements);
}

static void release(kernel *k) {
  if (!k->bufs) return;
  for (uint32_t b = 0; b < k->nbuffers; b++)
    if (!k->buffers[b].known) free(k->bufs[b]);
  free(k->bufs);
  k->bufs = NULL;
}

static void exec_request(void) {
  const leir__runner_request *q = &S.shared->req;
  kernel k;
  memset(&k, 0, sizeof k);
  if (q->nkernels != 1) {
    leir__sandbox_fail(&S, LEIR_ERR_INTERNAL, "malformed request to the kernel runner");
    return;
  }
  leir__c_rt rt = {trap, q->threads, &S};
  for (uint64_t set = 0; set < q->nsets; set++) {
    if (set == 0) {
      if (!prepare(0, 0, &k)) break;
    } else {
      for (uint32_t b = 0; b < k.nbuffers; b++)
        if (k.buffers[b].known)
          k.bufs[b] = set <= UINT64_MAX / (q->per_set ? q->per_set : 1)
                          ? at(set * q->per_set + k.buffers[b].offset, k.buffers[b].bytes)
                          : NULL;
    }
    bool ok = true;
    for (uint32_t b = 0; b < k.nbuffers; b++) ok = ok && k.bufs[b];
    if (!ok) {
      leir__sandbox_fail(&S, LEIR_ERR_INTERNAL, "malformed request to the kernel runner");
      break;
    }
    S.shared->unit = (int32_t)set;
    fill_temps(&k);
    k.fn(k.bufs, &rt);
    __atomic_add_fetch(&S.shared->progress, 1, __ATOMIC_SEQ_CST);
  }
  release(&k);
}

/* BATCH: kernel j on every set, one kernel after the other; the first
 * failure ends the request (its unit says where). Each kernel gets the
 * request's limits afresh, as if it were a request of its own. */
static void batch_request(void) {
  const leir__runner_request *q = &S.shared->req;
  leir__c_rt rt = {trap, q->threads, &S};
  if (!q->nkernels || q->nkernels > 1u << 20 || !q->nsets || q->nsets > 1u << 16 ||
      (uint64_t)q->nkernels * q->nsets > INT32_MAX) {
    leir__sandbox_fail(&S, LEIR_ERR_INTERNAL, "malformed request to the kernel runner");
    return;
  }
  for (uint32_t j = 0; j < q->nkernels; j++) {
    S.shared->unit = (int32_t)(j * q->nsets);
    if (j) request_limits(q);
    kernel k;
    memset(&k, 0, sizeof k);
    if (!prepare(j, 0, &k)) {
      release(&k);
      return;
    }
    bool ok = true;
    for (uint64_t set = 0; set < q->nsets && ok; set++)
      for (uint32_t b = 0; b < k.nbuffers && ok; b++) {
        const leir__runner_buffer *rb = &k.buffers[b];
        if (rb->known == LEIR__RB_TEMP) continue;
        void *p = rb->stride && set > UINT64_MAX / rb->stride
                      ? NULL
                      : at(rb->offset + set * rb->stride, rb->bytes);
        if (p && rb->known == LEIR__RB_OUTPUT &&
            rb->elements * (uint64_t)leir_dtype_size((leir_dtype)rb->dtype) <= rb->bytes)
          leir__fill_sentinel(p, (leir_dtype)rb->dtype, rb->elements);
        else if (p && rb->known == LEIR__RB_OUTPUT)
          p = NULL;
        ok = p != NULL;
      }
    for (uint64_t set = 0; set < q->nsets && ok; set++) {
      for (uint32_t b = 0; b < k.nbuffers; b++)
        if (k.buffers[b].known != LEIR__RB_TEMP)
          k.bufs[b] = S.data + k.buffers[b].offset + set * k.buffers[b].stride; /* checked */
      S.shared->unit = (int32_t)(j * q->nsets + set);
      fill_temps(&k);
      k.fn(k.bufs, &rt);
      __atomic_add_fetch(&S.shared->progress, 1, __ATOMIC_SEQ_CST);
    }
    release(&k);
    if (!ok) {
      leir__sandbox_fail(&S, LEIR_ERR_INTERNAL, "malformed request to the kernel runner");
      return;
    }
  }
}

typedef struct time_ctx {
  kernel *ks;
  leir__c_rt rt;
} time_ctx;

static leir_status run_once(void *vctx, leir_kernel *kp, void *const *bufs) {
  time_ctx *t = vctx;
  kernel *k = (kernel *)(void *)kp;
  S.shared->unit = (int32_t)(k - t->ks);
  k->fn(bufs, &t->rt);
  __atomic_add_fetch(&S.shared->progress, 1, __ATOMIC_SEQ_CST);
  return LEIR_OK;
}

static void time_request(void) {
  const leir__runner_request *q = &S.shared->req;
  uint32_t n = q->nkernels;
  double *samples = at(q->samples_off, (uint64_t)n * q->max_runs * sizeof(double));
  uint32_t *runs = at(q->runs_off, (uint64_t)n * sizeof(uint32_t));
  if (!n || n > 1u << 20 || !samples || !runs || ((uintptr_t)samples & 7) ||
      ((uintptr_t)runs & 3)) {
    leir__sandbox_fail(&S, LEIR_ERR_INTERNAL, "malformed request to the kernel runner");
    return;
  }
  time_ctx t = {calloc(n, sizeof(kernel)), {trap, q->threads, &S}};
  leir_kernel **handles = calloc(n, sizeof *handles);
  void **bufs = calloc(n, sizeof *bufs);
  bool ok = t.ks && handles && bufs;
  if (!ok) leir__sandbox_fail(&S, LEIR_ERR_RUNTIME, "out of memory in the kernel process");
  for (uint32_t i = 0; i < n && ok; i++) {
    S.shared->unit = (int32_t)i;
    ok = prepare(i, 0, &t.ks[i]);
    if (!ok) break;
    fill_temps(&t.ks[i]);
    handles[i] = (leir_kernel *)(void *)&t.ks[i];
    bufs[i] = t.ks[i].bufs;
  }
  if (ok) {
    leir_bench_options o = LEIR_BENCH_OPTIONS_INIT;
    o.flags = q->bench_flags;
    o.warmup = q->warmup;
    o.min_runs = q->min_runs;
    o.max_runs = q->max_runs;
    o.min_seconds = q->min_seconds;
    o.max_seconds = q->max_seconds;
    leir__samples out = {samples, q->max_runs, runs};
    leir__exec_result res = {-1};
    leir_status st = leir__time_loop(handles, n, (void *const *const *)bufs, &o, run_once, &t,
                                     &out, &res);
    if (st != LEIR_OK) leir__sandbox_fail(&S, st, "%s", leir_error_last()->message);
  }
  if (t.ks)
    for (uint32_t i = 0; i < n; i++) release(&t.ks[i]);
  free(t.ks);
  free(handles);
  free(bufs);
}

/* Receives one request: its serial and the shared memory descriptor. */
static int receive(int *fd) {
  uint64_t msg[2];
  struct iovec iov = {msg, sizeof msg};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  struct msghdr mh;
  memset(&mh, 0, sizeof mh);
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = u.buf;
  mh.msg_controllen = sizeof u.buf;
  ssize_t n;
  do n = recvmsg(SOCK, &mh, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n == 0) return 0; /* the library closed the socket */
  *fd = -1;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len >= CMSG_LEN(sizeof(int)))
      memcpy(fd, CMSG_DATA(c), sizeof *fd);
  if (n != (ssize_t)sizeof msg || *fd < 0 ||
      msg[0] != (((uint64_t)LEIR__RUNNER_PROTOCOL << 32) | LEIR__RUNNER_MAGIC))
    return -1;
  return 1;
}

/* ---- ending with the host ------------------------------------------------------ */

/* The runner's parent is the host that spawned it. When the host dies
 * (kill -9 included) the runner is reparented: a kernel that loops, or a
 * compiler pass the host will never wait for, must not run on until its
 * own limits (minutes). A parent-death signal (prctl) would fire when the
 * host's *thread* that spawned the runner ends, which a thread pool does
 * while the host lives, so the parent is watched instead: a thread with
 * every signal blocked (process signals still reach the main thread)
 * looks every WATCH_MS at getppid(). */
#define WATCH_MS 100
static pid_t watched_host;
static pid_t kill_group_of; /* 0: end only this process; else kill(-pgid) */

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static void host_gone(void) {
  if (kill_group_of > 0) kill(-kill_group_of, SIGKILL); /* the compiler and its passes, and us */
  _exit(125);
}

static void *watch_host(void *arg) {
  (void)arg;
  for (;;) {
    if (getppid() != watched_host) host_gone();
    sleep_ms(WATCH_MS);
  }
  return NULL;
}

static void start_watch(pid_t host) {
  watched_host = host;
  if (getppid() != host) host_gone(); /* the host died before we looked */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t t;
  if (pthread_create(&t, NULL, watch_host, NULL) == 0) pthread_detach(t);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The host of a serving runner is the process at the other end of its
 * socket (it made the socket pair and spawned us). */
static pid_t socket_peer(void) {
  struct ucred cr;
  socklen_t n = sizeof cr;
  if (getsockopt(SOCK, SOL_SOCKET, SO_PEERCRED, &cr, &n) == 0 && cr.pid > 0) return cr.pid;
  return getppid();
}

static int serve(void) {
  /* default actions for faults, so that a crash ends the runner with its
   * signal even when a sanitizer installed handlers (the library reads the
   * signal from the wait status) */
  static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS, SIGXCPU};
  for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) signal(faults[i], SIG_DFL);
  /* writes past the stderr limit fail instead of killing the runner */
  signal(SIGXFSZ, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  set_both(RLIMIT_CORE, 0);
  set_both(RLIMIT_FSIZE, STDERR_LIMIT);
  start_watch(socket_peer());
  leir__flush_keep_scratch(); /* one timing request per batch of rounds */
  for (;;) {
    int fd = -1;
    int got = receive(&fd);
    if (got <= 0) return got == 0 ? 0 : 2;
    struct stat sb;
    void *mem = MAP_FAILED;
    if (fstat(fd, &sb) == 0 && (uint64_t)sb.st_size >= LEIR__SANDBOX_HEADER)
      mem = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (mem == MAP_FAILED) return 2;
    S.mem = mem;
    S.bytes = (size_t)sb.st_size;
    S.fd = -1;
    S.shared = mem;
    S.data = (unsigned char *)mem + LEIR__SANDBOX_HEADER;
    S.data_bytes = S.bytes - LEIR__SANDBOX_HEADER;
    leir__runner_request *q = &S.shared->req;
    S.shared->status = LEIR_OK;
    if (q->magic != LEIR__RUNNER_MAGIC || q->protocol != LEIR__RUNNER_PROTOCOL) {
      leir__sandbox_fail(&S, LEIR_ERR_INTERNAL, "the kernel runner speaks another protocol");
    } else {
      request_limits(q);
      if (q->op == LEIR__REQ_EXEC)
        exec_request();
      else if (q->op == LEIR__REQ_TIME)
        time_request();
      else if (q->op == LEIR__REQ_BATCH)
        batch_request();
      else if (q->op != LEIR__REQ_PING)
        leir__sandbox_fail(&S, LEIR_ERR_INTERNAL, "unknown request %u to the kernel runner", q->op);
      lift_limits();
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    S.shared->done = 1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    munmap(S.mem, S.bytes);
    memset(&S, 0, sizeof S);
    char reply = retire ? 'R' : 'D';
    ssize_t w;
    do w = send(SOCK, &reply, 1, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    if (w != 1 || retire) return 0;
  }
}

/* ---- the exec wrapper ------------------------------------------------------------ */

static bool parse_u64(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *end) return false;
  *out = v;
  return true;
}

static int limited_exec(int argc, char **argv) {
  uint64_t as, cpu;
  if (argc < 6 || !parse_u64(argv[2], &as) || !parse_u64(argv[3], &cpu) ||
      strcmp(argv[4], "--") != 0) {
    fprintf(stderr, "usage: leir-runner --limits AS_BYTES CPU_SECONDS -- PROGRAM ARGS...\n");
    return 2;
  }
  /* the compiler runs in a child; this process waits for it, watching the
   * host, and kills the whole process group (it leads it: the library
   * spawns it in a group of its own) when the host dies: the driver's
   * passes (cc1, as) would otherwise run on, reparented, for minutes */
  pid_t host = getppid();
  pid_t child = fork();
  if (child < 0) {
    fprintf(stderr, "leir-runner: cannot start '%s': %s\n", argv[5], strerror(errno));
    return 127;
  }
  if (child == 0) {
    set_both(RLIMIT_CORE, 0);
    if (as) set_both(RLIMIT_AS, (rlim_t)as);
    if (cpu) {
      struct rlimit r = {(rlim_t)cpu, (rlim_t)cpu + 1};
      struct rlimit cur;
      if (getrlimit(RLIMIT_CPU, &cur) == 0 && cur.rlim_max != RLIM_INFINITY) {
        if (r.rlim_max > cur.rlim_max) r.rlim_max = cur.rlim_max;
        if (r.rlim_cur > r.rlim_max) r.rlim_cur = r.rlim_max;
      }
      setrlimit(RLIMIT_CPU, &r);
    }
    execvp(argv[5], argv + 5);
    fprintf(stderr, "leir-runner: cannot execute '%s': %s\n", argv[5], strerror(errno));
    _exit(127);
  }
  if (getpgrp() == getpid()) kill_group_of = getpid();
  watched_host = host;
  int ws = 0;
  for (;;) {
    pid_t w = waitpid(child, &ws, WNOHANG);
    if (w == child) break;
    if (w < 0 && errno != EINTR) return 127;
    if (getppid() != watched_host) host_gone();
    sleep_ms(w == 0 ? 5 : 0);
  }
  if (WIFEXITED(ws)) return WEXITSTATUS(ws);
  /* the same end as the compiler's (the library reads the signal) */
  int sig = WIFSIGNALED(ws) ? WTERMSIG(ws) : SIGKILL;
  signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  sigprocmask(SIG_UNBLOCK, &one, NULL);
  set_both(RLIMIT_CORE, 0);
  raise(sig);
  return 128 + sig;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "--serve") == 0) return serve();
  if (argc >= 2 && strcmp(argv[1], LEIR__RUNNER_LIMITS_FLAG) == 0) return limited_exec(argc, argv);
  fprintf(stderr,
          "leir-runner is started by libleir to run compiled kernels; it is not meant to be "
          "run by hand.\n");
  return 2;
}
