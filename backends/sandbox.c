/* The runner client: spawned, rlimited, watched execution (see sandbox.h). */
/* memfd_create, MSG_NOSIGNAL */
#define _GNU_SOURCE 1
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "error.h"
#include "spawn_attr.h"
#include "runner_path.h" /* generated: LEIR_RUNNER_NAME, _INSTALLED, _BUILD_PATH */
#include "self_path.h"

extern char **environ;

/* What the runner may write to its stderr per request (a memory file;
 * RLIMIT_FSIZE in the runner bounds it). */
#define ERR_TAIL 400

/* ---- shared memory -------------------------------------------------------- */

static int shared_file(void) {
#if defined(__linux__) && defined(MFD_CLOEXEC)
  int fd = memfd_create("leir-sandbox", MFD_CLOEXEC);
  if (fd >= 0 || errno != ENOSYS) return fd;
#endif
  /* elsewhere: a POSIX shared memory object, unlinked at once */
  char name[64];
  for (int tries = 0; tries < 16; tries++) {
    snprintf(name, sizeof name, "/leir-%ld-%lx", (long)getpid(),
             (unsigned long)(leir__now() * 1e9) + (unsigned long)tries);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      shm_unlink(name);
      return fd;
    }
    if (errno != EEXIST) return -1;
  }
  return -1;
}

leir_status leir__sandbox_map(leir__sandbox *s, size_t data_bytes) {
  memset(s, 0, sizeof *s);
  s->fd = -1;
  size_t bytes = LEIR__SANDBOX_HEADER + data_bytes;
  if (bytes < data_bytes) return leir__error_nomem();
  int fd = shared_file();
  if (fd < 0)
    return leir__error(LEIR_ERR_NOMEM, "run.memory", NULL, 0, 0,
                       "cannot create shared memory for the sandbox: %s", strerror(errno));
  if (ftruncate(fd, (off_t)bytes) != 0) {
    int err = errno;
    close(fd);
    return leir__error(LEIR_ERR_NOMEM, "run.memory", NULL, 0, 0,
                       "cannot size %zu bytes of shared memory for the sandbox: %s", bytes,
                       strerror(err));
  }
  void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mem == MAP_FAILED) {
    close(fd);
    return leir__error(LEIR_ERR_NOMEM, "run.memory", NULL, 0, 0,
                       "cannot map %zu bytes of shared memory for the sandbox", bytes);
  }
  s->mem = mem;
  s->bytes = bytes;
  s->fd = fd;
  s->shared = mem;
  s->data = (unsigned char *)mem + LEIR__SANDBOX_HEADER;
  s->data_bytes = data_bytes;
  return LEIR_OK;
}

void leir__sandbox_unmap(leir__sandbox *s) {
  if (s->mem) munmap(s->mem, s->bytes);
  if (s->fd >= 0) close(s->fd);
  memset(s, 0, sizeof *s);
  s->fd = -1;
}

/* ---- in the runner -------------------------------------------------------- */

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

/* ---- finding and starting the runner ---------------------------------------- */

static bool executable(const char *path) {
  struct stat sb;
  return path && *path && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

char *leir__runner_locate(const char *chosen) {
  if (chosen && *chosen) {
    if (executable(chosen)) return strdup(chosen);
    leir__error(LEIR_ERR_NO_DEVICE, "backend.runner", NULL, 0, 0,
                "the runner option (%s) is not an executable file", chosen);
    return NULL;
  }
  const char *env = getenv("LEIR_RUNNER");
  if (env && *env) {
    if (executable(env)) return strdup(env);
    leir__error(LEIR_ERR_NO_DEVICE, "backend.runner", NULL, 0, 0,
                "$LEIR_RUNNER (%s) is not an executable file", env);
    return NULL;
  }
  char beside[PATH_MAX];
  leir__self_result where = leir__self_find(LEIR__SELF_LIBEXECDIR, LEIR_RUNNER_NAME,
                                            LEIR_RUNNER_BUILD_PATH, beside, sizeof beside);
  if (where == LEIR__SELF_FOUND && executable(beside)) return strdup(beside);
  if (executable(LEIR_RUNNER_INSTALLED)) return strdup(LEIR_RUNNER_INSTALLED);
  const char *why = where == LEIR__SELF_NONE      ? "libleir's own location is unknown"
                    : where == LEIR__SELF_MISSING ? "missing"
                    : where == LEIR__SELF_UNTRUSTED
                        ? "not used: another user's, or writable by others"
                        : "not an executable file";
  leir__error(LEIR_ERR_NO_DEVICE, "backend.runner", NULL, 0, 0,
              "cannot find the kernel runner program (looked at: the runner option and "
              "$LEIR_RUNNER, both unset; beside libleir, %s (%s); the configured %s (no "
              "executable file); set leir_backend_options.runner or $LEIR_RUNNER)",
              beside[0] ? beside : "-", why, LEIR_RUNNER_INSTALLED);
  return NULL;
}

leir_status leir__runner_init(leir__runner *r, const char *chosen) {
  memset(r, 0, sizeof *r);
  r->sock = -1;
  r->err_fd = -1;
  char *path = leir__runner_locate(chosen);
  if (!path) return leir_error_last()->status ? leir_error_last()->status : LEIR_ERR_NO_DEVICE;
  r->path = path;
  return LEIR_OK;
}

/* Reaps pid, retrying on EINTR; false when it was reaped elsewhere. */
static bool reap(pid_t pid, int *wstatus) {
  while (waitpid(pid, wstatus, 0) < 0)
    if (errno != EINTR) return false;
  return true;
}

void leir__runner_stop(leir__runner *r) {
  if (r->sock >= 0) close(r->sock);
  r->sock = -1;
  if (r->pid > 0) {
    kill(-r->pid, SIGKILL); /* the runner leads its own process group */
    int ws;
    reap(r->pid, &ws);
  }
  r->pid = 0;
  if (r->err_fd >= 0) close(r->err_fd);
  r->err_fd = -1;
}

void leir__runner_free(leir__runner *r) {
  leir__runner_stop(r);
  free(r->path);
  r->path = NULL;
}

static leir_status start(leir__runner *r) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return leir__error(LEIR_ERR_INTERNAL, "run.sandbox", NULL, 0, 0, "socketpair failed: %s",
                       strerror(errno));
  int err_fd = shared_file();
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  bool fa_ok = posix_spawn_file_actions_init(&fa) == 0;
  bool attr_ok = posix_spawnattr_init(&attr) == 0;
  int rc = ENOMEM;
  if (fa_ok && attr_ok) {
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (err_fd >= 0)
      posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    else
      posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 3);
    /* its own process group (killed as a whole), every signal at its
     * default action (the host may ignore some), none blocked */
    leir__spawnattr_isolate(&attr);
    char *argv[] = {r->path, "--serve", NULL};
    rc = posix_spawn(&r->pid, r->path, &fa, &attr, argv, environ);
  }
  if (fa_ok) posix_spawn_file_actions_destroy(&fa);
  if (attr_ok) posix_spawnattr_destroy(&attr);
  close(sv[1]);
  if (rc != 0) {
    close(sv[0]);
    if (err_fd >= 0) close(err_fd);
    r->pid = 0;
    return leir__error(LEIR_ERR_NO_DEVICE, "backend.runner", NULL, 0, 0,
                       "cannot start the kernel runner %s: %s", r->path, strerror(rc));
  }
  r->sock = sv[0];
  r->err_fd = err_fd;
  return LEIR_OK;
}

/* Sends the request header and the shared memory descriptor. */
static bool send_request(int sock, int fd, uint64_t serial) {
  uint64_t msg[2] = {((uint64_t)LEIR__RUNNER_PROTOCOL << 32) | LEIR__RUNNER_MAGIC, serial};
  struct iovec iov = {msg, sizeof msg};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr mh;
  memset(&mh, 0, sizeof mh);
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = u.buf;
  mh.msg_controllen = sizeof u.buf;
  struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  for (;;) {
    ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    if (n == (ssize_t)sizeof msg) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
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

/* The last line(s) the runner wrote to its stderr, for a message: ": TEXT"
 * or "". */
static void stderr_tail(leir__runner *r, char *out, size_t cap) {
  out[0] = '\0';
  if (r->err_fd < 0) return;
  struct stat sb;
  if (fstat(r->err_fd, &sb) != 0 || sb.st_size <= 0) return;
  off_t from = sb.st_size > ERR_TAIL ? sb.st_size - ERR_TAIL : 0;
  char buf[ERR_TAIL + 1];
  ssize_t n = pread(r->err_fd, buf, ERR_TAIL, from);
  if (n <= 0) return;
  buf[n] = '\0';
  /* one line: newlines become "; ", control bytes "?" */
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = '\0';
  ssize_t first = 0;
  while (first < n && (buf[first] == '\n' || buf[first] == ' ')) first++;
  if (first == n) return;
  size_t o = 0;
  o += (size_t)snprintf(out, cap, " (it wrote: ");
  for (ssize_t i = first; i < n && o + 8 < cap; i++) {
    unsigned char ch = (unsigned char)buf[i];
    if (ch == '\n') {
      out[o++] = ';';
      out[o++] = ' ';
    } else {
      out[o++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
    }
  }
  if (o + 2 <= cap) {
    out[o++] = ')';
    out[o] = '\0';
  } else {
    out[cap - 1] = '\0';
  }
}

leir_status leir__sandbox_run(leir__runner *r, leir__sandbox *s, const leir__sandbox_limits *lim) {
  leir__sandbox_shared *sh = s->shared;
  sh->progress = 0;
  sh->unit = 0;
  sh->done = 0;
  sh->status = LEIR_OK;
  sh->trapped = 0;
  sh->message[0] = '\0';
  sh->req.magic = LEIR__RUNNER_MAGIC;
  sh->req.protocol = LEIR__RUNNER_PROTOCOL;
  sh->req.memory_bytes = lim->memory_bytes;
  sh->req.cpu_seconds = lim->cpu_seconds;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);

  /* a runner left dead by an earlier request is replaced */
  for (int attempt = 0;; attempt++) {
    if (r->sock >= 0) {
      /* an idle runner has nothing to say: readable or hung up means it
       * ended since the last request (killed from outside): replace it */
      struct pollfd idle = {r->sock, POLLIN, 0};
      if (poll(&idle, 1, 0) > 0) leir__runner_stop(r);
    }
    if (r->sock < 0) {
      leir_status st = start(r);
      if (st != LEIR_OK) return st;
    }
    if (r->err_fd >= 0) {
      if (ftruncate(r->err_fd, 0) != 0) { /* keep going: only the message suffers */
      }
      lseek(r->err_fd, 0, SEEK_SET);
    }
    if (send_request(r->sock, s->fd, ++r->requests)) break;
    leir__runner_stop(r);
    if (attempt == 1)
      return leir__error(LEIR_ERR_INTERNAL, "run.sandbox", NULL, 0, 0,
                         "cannot send a request to the kernel runner: %s", strerror(errno));
  }

  bool replied = false, timed_out = false, retire = false;
  uint64_t seen = sh->progress;
  double deadline = leir__now() + lim->unit_timeout_s;
  for (;;) {
    double now = leir__now();
    if (sh->progress != seen) {
      seen = sh->progress;
      deadline = now + lim->unit_timeout_s;
    }
    if (now >= deadline) {
      timed_out = true;
      break;
    }
    double left_ms = (deadline - now) * 1000.0 + 1.0;
    struct pollfd pfd = {r->sock, POLLIN, 0};
    int pr = poll(&pfd, 1, left_ms < 50.0 ? (int)left_ms : 50);
    if (pr < 0 && errno != EINTR) break;
    if (pr <= 0) continue;
    unsigned char reply = 0;
    ssize_t n = recv(r->sock, &reply, 1, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n == 1) {
      replied = true;
      retire = reply == 'R';
    }
    break; /* a reply, or EOF: the runner is gone */
  }
  if (replied && sh->done) {
    if (retire) leir__runner_stop(r); /* it asked to be replaced */
    if (sh->status != LEIR_OK) {
      char msg[sizeof sh->message];
      memcpy(msg, sh->message, sizeof msg);
      msg[sizeof msg - 1] = '\0';
      return leir__error((leir_status)sh->status, "run.child", NULL, 0, 0, "%s", msg);
    }
    return LEIR_OK;
  }

  /* the runner did not finish: kill its group (a no-op when it is gone)
   * and find out why */
  char tail[ERR_TAIL + 32];
  tail[0] = '\0';
  int wstatus = 0;
  bool lost = true;
  if (r->pid > 0) {
    kill(-r->pid, SIGKILL);
    lost = !reap(r->pid, &wstatus);
    r->pid = 0;
  }
  stderr_tail(r, tail, sizeof tail);
  leir__runner_stop(r);
  if (timed_out)
    return leir__error(LEIR_ERR_TIMEOUT, "run.timeout", NULL, 0, 0,
                       "the kernel exceeded its time limit of %g s and was killed",
                       lim->unit_timeout_s);
  if (sh->trapped)
    return leir__error(LEIR_ERR_RUNTIME, "run.trap", NULL, 0, 0, "run-time trap");
  if (lost)
    return leir__error(LEIR_ERR_RUNTIME, "run.crash", NULL, 0, 0,
                       "the kernel process ended abnormally (its status was not available)%s",
                       tail);
  if (WIFSIGNALED(wstatus)) {
    int sig = WTERMSIG(wstatus);
    if (sig == SIGXCPU)
      return leir__error(LEIR_ERR_TIMEOUT, "run.timeout", NULL, 0, 0,
                         "the kernel exceeded its CPU time limit of %g s", lim->cpu_seconds);
    const char *text = signal_text(sig);
    if (text)
      return leir__error(LEIR_ERR_RUNTIME, "run.crash", NULL, 0, 0, "the kernel crashed: %s%s",
                         text, tail);
    return leir__error(LEIR_ERR_RUNTIME, "run.crash", NULL, 0, 0,
                       "the kernel was killed by signal %d%s", sig, tail);
  }
  return leir__error(LEIR_ERR_RUNTIME, "run.crash", NULL, 0, 0,
                     "the kernel process exited with status %d%s",
                     WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1, tail);
}
