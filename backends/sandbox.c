/* Forked, rlimited, watched execution (see sandbox.h). */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "backend.h"
#include "error.h"

/* Sanitizers reserve terabytes of address space: RLIMIT_AS would break
 * them, so sanitized builds rely on the other limits. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LEIR__NO_RLIMIT_AS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define LEIR__NO_RLIMIT_AS 1
#endif
#endif

#define HEADER_BYTES ((sizeof(leir__sandbox_shared) + 63) / 64 * 64)

leir_status leir__sandbox_map(leir__sandbox *s, size_t data_bytes) {
  memset(s, 0, sizeof *s);
  size_t bytes = HEADER_BYTES + data_bytes;
  if (bytes < data_bytes) return leir__error_nomem();
  void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED)
    return leir__error(LEIR_ERR_NOMEM, "run.memory", NULL, 0, 0,
                       "cannot map %zu bytes of shared memory for the sandbox", bytes);
  s->mem = mem;
  s->bytes = bytes;
  s->shared = mem;
  s->data = (unsigned char *)mem + HEADER_BYTES;
  s->data_bytes = data_bytes;
  return LEIR_OK;
}

void leir__sandbox_unmap(leir__sandbox *s) {
  if (s->mem) munmap(s->mem, s->bytes);
  memset(s, 0, sizeof *s);
}

void leir__sandbox_trap(leir__sandbox *s, int kind, int site, int64_t value, int64_t extent) {
  leir__sandbox_shared *sh = s->shared;
  if (__atomic_exchange_n(&sh->trapped, 1, __ATOMIC_SEQ_CST) == 0) {
    sh->trap_kind = kind;
    sh->trap_site = site;
    sh->trap_value = value;
    sh->trap_extent = extent;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
  }
  _exit(LEIR__EXIT_TRAP);
}

void leir__sandbox_fail(leir__sandbox *s, leir_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->shared->message, sizeof s->shared->message, fmt, ap);
  va_end(ap);
  s->shared->status = st;
}

static void set_limit(int resource, rlim_t soft, rlim_t hard) {
  struct rlimit r;
  if (getrlimit(resource, &r) != 0) return;
  if (r.rlim_max != RLIM_INFINITY && hard > r.rlim_max) hard = r.rlim_max;
  if (soft > hard) soft = hard;
  r.rlim_cur = soft;
  r.rlim_max = hard;
  setrlimit(resource, &r);
}

#ifndef LEIR__NO_RLIMIT_AS
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

static _Noreturn void child(leir__sandbox *s, const leir__sandbox_limits *lim,
                            leir__child_main fn, void *ctx, pid_t parent) {
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127); /* the parent is already gone */
#else
  (void)parent;
#endif
  /* Default actions for faults, so a crash ends the child with its signal
   * even when the caller (or a sanitizer) installed handlers. */
  static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS, SIGXCPU,
                             SIGXFSZ, SIGPIPE};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  set_limit(RLIMIT_CORE, 0, 0);
  set_limit(RLIMIT_FSIZE, 0, 0);
  if (lim->cpu_seconds > 0) {
    rlim_t cpu = (rlim_t)(lim->cpu_seconds + 1.0);
    set_limit(RLIMIT_CPU, cpu, cpu + 1);
  }
#ifndef LEIR__NO_RLIMIT_AS
  uint64_t vm = current_vm_bytes();
  if (lim->memory_bytes && vm + lim->memory_bytes > vm)
    set_limit(RLIMIT_AS, (rlim_t)(vm + lim->memory_bytes), (rlim_t)(vm + lim->memory_bytes));
#endif
  s->shared->status = LEIR_OK;
  fn(ctx, s);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  s->shared->done = 1;
  _exit(0);
}

static const char *signal_text(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV (segmentation fault)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGFPE: return "SIGFPE (arithmetic exception)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGABRT: return "SIGABRT (aborted)";
    case SIGKILL: return "SIGKILL (killed; out of memory?)";
    case SIGTRAP: return "SIGTRAP (trace trap)";
    case SIGSYS: return "SIGSYS (bad system call)";
    case SIGXFSZ: return "SIGXFSZ (file size limit)";
    default: return NULL;
  }
}

leir_status leir__sandbox_run(leir__sandbox *s, const leir__sandbox_limits *lim,
                              leir__child_main fn, void *ctx) {
  leir__sandbox_shared *sh = s->shared;
  memset((void *)sh, 0, sizeof *sh);
  int fds[2];
  if (pipe(fds) != 0)
    return leir__error(LEIR_ERR_INTERNAL, "run.sandbox", NULL, 0, 0, "pipe failed: %s",
                       strerror(errno));
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    return leir__error(LEIR_ERR_INTERNAL, "run.sandbox", NULL, 0, 0, "fork failed: %s",
                       strerror(err));
  }
  if (pid == 0) {
    close(fds[0]);
    child(s, lim, fn, ctx, parent); /* keeps fds[1] open until it exits */
  }
  close(fds[1]);

  int wstatus = 0;
  bool reaped = false, timed_out = false, lost = false;
  uint64_t seen = sh->progress;
  double deadline = leir__now() + lim->unit_timeout_s;
  for (;;) {
    double now = leir__now();
    if (sh->progress != seen) {
      seen = sh->progress;
      deadline = now + lim->unit_timeout_s;
    }
    if (now >= deadline) {
      kill(pid, SIGKILL);
      timed_out = true;
      break;
    }
    double left_ms = (deadline - now) * 1000.0 + 1.0;
    struct pollfd pfd = {fds[0], POLLIN, 0};
    int r = poll(&pfd, 1, left_ms < 50.0 ? (int)left_ms : 50);
    if (r > 0) break; /* EOF: the child is gone */
    pid_t w = waitpid(pid, &wstatus, WNOHANG);
    if (w == pid) {
      reaped = true;
      break;
    }
    if (w < 0 && errno == ECHILD) {
      lost = true; /* reaped by someone else (SIGCHLD ignored) */
      break;
    }
  }
  close(fds[0]);
  if (!reaped && !lost) {
    while (waitpid(pid, &wstatus, 0) < 0) {
      if (errno != EINTR) {
        lost = true;
        break;
      }
    }
  }
  if (timed_out)
    return leir__error(LEIR_ERR_TIMEOUT, "run.timeout", NULL, 0, 0,
                       "the kernel exceeded its time limit of %g s and was killed",
                       lim->unit_timeout_s);
  if (lost) {
    if (sh->done) goto finished;
    if (sh->trapped)
      return leir__error(LEIR_ERR_RUNTIME, "run.trap", NULL, 0, 0, "run-time trap");
    return leir__error(LEIR_ERR_RUNTIME, "run.crash", NULL, 0, 0,
                       "the kernel process ended abnormally (its status was not available)");
  }
  if (WIFSIGNALED(wstatus)) {
    int sig = WTERMSIG(wstatus);
    if (sig == SIGXCPU)
      return leir__error(LEIR_ERR_TIMEOUT, "run.timeout", NULL, 0, 0,
                         "the kernel exceeded its CPU time limit of %g s", lim->cpu_seconds);
    const char *text = signal_text(sig);
    if (text)
      return leir__error(LEIR_ERR_RUNTIME, "run.crash", NULL, 0, 0, "the kernel crashed: %s",
                         text);
    return leir__error(LEIR_ERR_RUNTIME, "run.crash", NULL, 0, 0,
                       "the kernel was killed by signal %d", sig);
  }
  if (WIFEXITED(wstatus)) {
    int code = WEXITSTATUS(wstatus);
    if (code == LEIR__EXIT_TRAP && sh->trapped)
      return leir__error(LEIR_ERR_RUNTIME, "run.trap", NULL, 0, 0, "run-time trap");
    if (code != 0 || !sh->done)
      return leir__error(LEIR_ERR_RUNTIME, "run.crash", NULL, 0, 0,
                         "the kernel process exited with status %d", code);
  }
finished:
  if (sh->status != LEIR_OK) {
    char msg[sizeof sh->message];
    memcpy(msg, sh->message, sizeof msg);
    msg[sizeof msg - 1] = '\0';
    return leir__error((leir_status)sh->status, "run.child", NULL, 0, 0, "%s", msg);
  }
  return LEIR_OK;
}
