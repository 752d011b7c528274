/*
 * The system C compiler, run from an argument vector (posix_spawnp, never a
 * shell) in a private mkdtemp directory that is removed afterwards; its
 * output is captured for COMPILE_ERROR reports (verification.md §3).
 */
/* posix_spawn_file_actions_addchdir_np */
#define _GNU_SOURCE 1
#include "compile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "error.h"

extern char **environ;

/* Flags that allow the compiler to change floating-point results. */
static const char *const refused[] = {"-ffast-math",
                                      "-Ofast",
                                      "-funsafe-math-optimizations",
                                      "-fassociative-math",
                                      "-freciprocal-math",
                                      "-ffinite-math-only",
                                      "-fno-signed-zeros",
                                      "-fno-trapping-math",
                                      "-ffp-contract=fast",
                                      "-ffp-contract=on",
                                      "-fcx-limited-range",
                                      NULL};

/* Appended after the user's flags so they win: no contraction, no fast
 * math, and libm calls that stay calls (so constant arguments are not
 * folded with a different rounding than the run-time library's). */
static const char *const fixed[] = {"-std=c11",
                                    "-fPIC",
                                    "-shared",
                                    "-ffp-contract=off",
                                    "-fno-fast-math",
                                    "-fno-builtin-exp",
                                    "-fno-builtin-expf",
                                    "-fno-builtin-log",
                                    "-fno-builtin-logf",
                                    "-fno-builtin-erf",
                                    "-fno-builtin-erff",
                                    "-fno-builtin-pow",
                                    "-fno-builtin-powf",
                                    "-w",
                                    NULL};

static char *dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

void leir__cc_free(leir__cc *cc) {
  if (cc->args)
    for (size_t i = 0; i < cc->nargs; i++) free(cc->args[i]);
  free(cc->args);
  free(cc->flags_text);
  free(cc->identity);
  memset(cc, 0, sizeof *cc);
}

static bool push(leir__cc *cc, const char *s, size_t n, size_t *cap) {
  if (cc->nargs + 2 > *cap) {
    size_t c = *cap ? *cap * 2 : 32;
    char **a = realloc(cc->args, c * sizeof *a);
    if (!a) return false;
    cc->args = a;
    *cap = c;
  }
  char *d = dup_n(s, n);
  if (!d) return false;
  cc->args[cc->nargs++] = d;
  cc->args[cc->nargs] = NULL;
  return true;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Spawns argv in directory `dir` (when the C library can) with
 * stdout+stderr into `log_path`, stdin from /dev/null. */
static int spawn(char *const *argv, const char *dir, const char *log_path, pid_t *pid) {
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) return ENOMEM;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
  posix_spawn_file_actions_addchdir_np(&fa, dir);
#else
  (void)dir;
#endif
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  int rc = posix_spawnp(pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc;
}

/* Waits for pid up to timeout; *status gets the wait status. Returns 0,
 * ETIMEDOUT (the process was killed) or ECHILD (reaped elsewhere). */
static int wait_for(pid_t pid, double timeout_s, int *status) {
  double deadline = leir__now() + timeout_s;
  int ms = 1;
  for (;;) {
    pid_t w = waitpid(pid, status, WNOHANG);
    if (w == pid) return 0;
    if (w < 0 && errno != EINTR) return ECHILD;
    if (leir__now() > deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
      }
      return ETIMEDOUT;
    }
    sleep_ms(ms);
    if (ms < 8) ms *= 2;
  }
}

static void read_file(const char *path, leir__strbuf *out, size_t max) {
  FILE *f = fopen(path, "rb");
  if (!f) return;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0 && out->len < max)
    leir__sb_put(out, buf, n < max - out->len ? n : max - out->len);
  fclose(f);
}

static bool make_dir(char *dir, size_t cap) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  int n = snprintf(dir, cap, "%s/leir-XXXXXX", tmp);
  if (n <= 0 || (size_t)n >= cap) return false;
  return mkdtemp(dir) != NULL;
}

/* Removes the directory and the files in it (the compiler runs inside it,
 * so flags such as -save-temps leave their files there too). */
static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    char path[768];
    while ((e = readdir(d))) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

leir_status leir__cc_init(leir__cc *cc, const char *compiler, const char *flags,
                          double timeout_s) {
  memset(cc, 0, sizeof *cc);
  size_t cap = 0;
  leir__strbuf text = LEIR__STRBUF_INIT;
  if (!push(cc, compiler, strlen(compiler), &cap)) goto nomem;
  for (const char *p = flags; *p;) {
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    const char *start = p;
    while (*p && *p != ' ' && *p != '\t' && *p != '\n') p++;
    if (p == start) continue;
    size_t n = (size_t)(p - start);
    for (size_t r = 0; refused[r]; r++)
      if (strlen(refused[r]) == n && memcmp(refused[r], start, n) == 0) {
        leir__cc_free(cc);
        leir__sb_release(&text);
        return leir__error(LEIR_ERR_ARGUMENT, "backend.flags", refused[r], 0, 0,
                           "compiler flag %s is refused: it lets the compiler change "
                           "floating-point results, which breaks bitwise verification",
                           refused[r]);
      }
    if (!push(cc, start, n, &cap)) goto nomem;
    leir__sb_put(&text, start, n);
    leir__sb_putc(&text, ' ');
  }
  for (size_t f = 0; fixed[f]; f++) {
    if (!push(cc, fixed[f], strlen(fixed[f]), &cap)) goto nomem;
    leir__sb_puts(&text, fixed[f]);
    leir__sb_putc(&text, ' ');
  }
  cc->flags_text = leir__sb_finish(&text, NULL);
  if (!cc->flags_text) goto nomem;

  /* identity: `CC --version` */
  char dir[256], log[320];
  if (!make_dir(dir, sizeof dir)) {
    leir__cc_free(cc);
    return leir__error(LEIR_ERR_IO, "backend.tmpdir", NULL, 0, 0,
                       "cannot create a temporary directory: %s", strerror(errno));
  }
  snprintf(log, sizeof log, "%s/version.txt", dir);
  char *argv[3] = {cc->args[0], "--version", NULL};
  pid_t pid;
  int rc = spawn(argv, dir, log, &pid), status = 0;
  if (rc == 0) rc = wait_for(pid, timeout_s, &status);
  leir__strbuf id = LEIR__STRBUF_INIT;
  read_file(log, &id, 1 << 16);
  remove_dir(dir);
  if (rc != 0 || (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))) {
    leir__sb_release(&id);
    leir__cc_free(cc);
    return leir__error(LEIR_ERR_NO_DEVICE, "backend.compiler", compiler, 0, 0,
                       "cannot run the C compiler '%s' (set $CC or the compiler option)%s%s",
                       compiler, rc ? ": " : "", rc ? strerror(rc) : "");
  }
  cc->identity = leir__sb_finish(&id, NULL);
  if (!cc->identity) goto nomem;
  /* GCC 12 (at least 12.2, Debian 12) miscompiles if-converted conditional
   * loads at -O3 with AVX2/AVX-512: one vmaskmov mask is reused for several
   * unrolled vector chunks, so `c ? X[i] : Y[i]` reads wrong lanes
   * (tests/test_cpu.c catches it on the HuberLoss source program). Lazy
   * if_then_else is everywhere in LEIR, so GCC gets no loop if-conversion. */
  if (!strstr(cc->identity, "clang") &&
      (strstr(cc->identity, "gcc") || strstr(cc->identity, "GCC") ||
       strstr(cc->identity, "Free Software Foundation"))) {
    static const char extra[] = "-fno-tree-loop-if-convert";
    if (!push(cc, extra, strlen(extra), &cap)) goto nomem;
    size_t len = strlen(cc->flags_text);
    char *t = realloc(cc->flags_text, len + sizeof extra + 1);
    if (!t) goto nomem;
    memcpy(t + len, extra, sizeof extra);
    cc->flags_text = t;
  }
  return LEIR_OK;
nomem:
  leir__sb_release(&text);
  leir__cc_free(cc);
  return leir__error_nomem();
}

leir_status leir__cc_start(const leir__cc *cc, const char *source, size_t len, uint64_t memory_bytes,
                           double cpu_seconds, leir__cc_job *job) {
  memset(job, 0, sizeof *job);
  job->status = LEIR_ERR_INTERNAL;
  if (!make_dir(job->dir, sizeof job->dir)) {
    job->dir[0] = '\0';
    return leir__error(LEIR_ERR_IO, "backend.tmpdir", NULL, 0, 0,
                       "cannot create a temporary directory: %s", strerror(errno));
  }
  char src[320], log[320];
  snprintf(src, sizeof src, "%s/kernel.c", job->dir);
  snprintf(log, sizeof log, "%s/log.txt", job->dir);
  snprintf(job->so, sizeof job->so, "%s/kernel.so", job->dir);
  FILE *f = fopen(src, "wb");
  bool ok = f && fwrite(source, 1, len, f) == len;
  if (f && fclose(f) != 0) ok = false;
  if (!ok) return leir__error(LEIR_ERR_IO, "backend.write", NULL, 0, 0, "cannot write %s", src);
  /* argv: compiler, flags..., -o kernel.so kernel.c -lm */
  char **argv = calloc(cc->nargs + 6, sizeof *argv);
  if (!argv) return leir__error_nomem();
  size_t n = 0;
  for (size_t i = 0; i < cc->nargs; i++) argv[n++] = cc->args[i];
  argv[n++] = "-o";
  argv[n++] = job->so;
  argv[n++] = src;
  argv[n++] = "-lm";
  argv[n] = NULL;
  int rc = spawn(argv, job->dir, log, &job->pid);
  free(argv);
  if (rc != 0)
    return leir__error(LEIR_ERR_NO_DEVICE, "backend.compiler", cc->args[0], 0, 0,
                       "cannot start the C compiler '%s': %s", cc->args[0], strerror(rc));
  job->running = true;
#ifdef __linux__
  /* The driver starts its passes (cc1, as, ld) after parsing its
   * arguments, so they inherit these limits. */
  struct rlimit mem = {(rlim_t)memory_bytes, (rlim_t)memory_bytes};
  struct rlimit cpu = {(rlim_t)cpu_seconds + 1, (rlim_t)cpu_seconds + 2};
  if (memory_bytes) prlimit(job->pid, RLIMIT_AS, &mem, NULL);
  if (cpu_seconds > 0) prlimit(job->pid, RLIMIT_CPU, &cpu, NULL);
#else
  (void)memory_bytes, (void)cpu_seconds;
#endif
  return LEIR_OK;
}

void leir__cc_wait(leir__cc_job *jobs, size_t n, double timeout_s) {
  double deadline = leir__now() + timeout_s;
  for (size_t i = 0; i < n; i++) {
    leir__cc_job *job = &jobs[i];
    if (!job->running) continue;
    int status = 0;
    double left = deadline - leir__now();
    int rc = wait_for(job->pid, left > 0 ? left : 0.001, &status);
    job->running = false;
    char log[320];
    snprintf(log, sizeof log, "%s/log.txt", job->dir);
    if (rc == ETIMEDOUT) {
      job->status = LEIR_ERR_TIMEOUT;
      leir__sb_printf(&job->log, "the C compiler exceeded its time limit of %g s\n", timeout_s);
      continue;
    }
    bool exited_ok = rc == 0 ? (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                             : access(job->so, R_OK) == 0; /* reaped elsewhere */
    if (exited_ok && access(job->so, R_OK) == 0) {
      job->status = LEIR_OK;
    } else {
      job->status = LEIR_ERR_COMPILE;
      read_file(log, &job->log, 1 << 16);
      if (rc == 0 && WIFSIGNALED(status))
        leir__sb_printf(&job->log, "\n(the compiler was killed by signal %d)\n", WTERMSIG(status));
    }
  }
}

void leir__cc_cleanup(leir__cc_job *job) {
  if (job->running) {
    kill(job->pid, SIGKILL);
    while (waitpid(job->pid, NULL, 0) < 0 && errno == EINTR) {
    }
    job->running = false;
  }
  if (job->dir[0]) remove_dir(job->dir);
  job->dir[0] = '\0';
  leir__sb_release(&job->log);
}
