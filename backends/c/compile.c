/*
 * The system C compiler, run from an argument vector (posix_spawn of the
 * runner's --limits mode, which sets the rlimits and executes the
 * compiler; never a shell, never a fork) in its own process group, in a
 * private mkdtemp directory that is also its TMPDIR and is removed
 * afterwards; its output is captured for COMPILE_ERROR reports
 * (verification.md §3).
 */
/* posix_spawn_file_actions_addchdir_np */
#define _GNU_SOURCE 1
#include "compile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
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
#include "spawn_attr.h"
#include "sandbox.h"
#include "vec.h"

extern char **environ;

/* Flags known to let the compiler change floating-point results: refused
 * with that reason (everything else not in the allow-list below is
 * refused as unknown). */
static const char *const fp_changing[] = {
    "-ffast-math", "-Ofast", "-funsafe-math-optimizations", "-fassociative-math",
    "-freciprocal-math", "-ffinite-math-only", "-fno-signed-zeros", "-fno-trapping-math",
    "-ffp-contract=", "-fcx-limited-range", "-fcx-fortran-rules", "-fexcess-precision=",
    "-ffloat-store", "-fno-honor-", "-fapprox-func", "-fdenormal-fp-math", "-ffp-model=",
    "-ffp-exception-behavior=", "-mfpmath=", "-m387", "-m80387", "-mno-sse", "-mno-80387",
    "-msoft-float", "-mhard-float", "-mpc32", "-mpc64", "-mpc80", "-mdaz-ftz", "-mrecip",
    "-mlong-double-", "-m96bit-long-double", "-m128bit-long-double", "-m32", "-m16", "-mx32",
    "-mieee-fp", "-mno-ieee-fp", "-D", "-U", "-include", "-imacros", "-I", "-isystem",
    "-iquote", "-idirafter", "-nostdinc", "-std=", NULL};

/* Flags accepted: exact names, then prefixes ("...*"). None of them lets
 * the compiler change a floating-point result (the fixed flags below also
 * pin -std=c11 and -ffp-contract=off after them). */
static const char *const allowed[] = {
    "-O", "-O0", "-O1", "-O2", "-O3", "-Os", "-Og", "-Oz", "-fopenmp", "-fopenmp-simd",
    "-pipe", "-w", "-fPIC", "-fpic", "-fno-plt", "-funroll-loops", "-fno-unroll-loops",
    "-funroll-all-loops", "-fpeel-loops", "-fno-peel-loops", "-fomit-frame-pointer",
    "-fno-omit-frame-pointer", "-ftree-vectorize", "-fno-tree-vectorize",
    "-ftree-loop-vectorize", "-fno-tree-loop-vectorize", "-ftree-slp-vectorize",
    "-fno-tree-slp-vectorize", "-fno-tree-loop-if-convert", "-fstrict-aliasing",
    "-fno-strict-aliasing", "-fno-math-errno", "-fmath-errno", "-frounding-math",
    "-fsignaling-nans", "-fno-fast-math", "-ffp-contract=off", "-fno-builtin",
    "-fstack-protector", "-fstack-protector-strong", "-fstack-protector-all",
    "-fno-stack-protector", "-fno-semantic-interposition", "-fno-common", "-fverbose-asm",
    "-mno-red-zone", "-mno-vzeroupper", "-mvzeroupper", "-mprefer-avx128",
    /* prefixes */
    "-fopenmp=*", "-march=*", "-mtune=*", "-mcpu=*", "-mprefer-vector-width=*", "-msse*",
    "-mssse3*",
    "-mavx*", "-mfma*", "-mf16c*", "-mbmi*", "-mpopcnt*", "-mlzcnt*", "-maes*", "-mpclmul*",
    "-msha*", "-mmovbe*", "-madx*", "-mrdrnd*", "-mrdseed*", "-mxsave*", "-mvpclmulqdq*",
    "-mgfni*", "-mvaes*", "-mamx*", "-mno-avx*", "-mno-fma*", "-g*", "-W*",
    "-fvect-cost-model=*", "-fsimd-cost-model=*", "-falign-*", "-fno-align-*", "-fopt-info*",
    "-fdiagnostics-*", "-fmax-errors=*", "-finline-*", "-fno-inline*", "-fcf-protection*",
    "-fstack-clash-protection*", "-fno-stack-clash-protection*", NULL};

static bool match(const char *pattern, const char *flag, size_t len) {
  size_t p = strlen(pattern);
  if (p && pattern[p - 1] == '*') return len >= p - 1 && memcmp(pattern, flag, p - 1) == 0;
  return p == len && memcmp(pattern, flag, len) == 0;
}

/* Prefixes that pass options through to other tools (the preprocessor,
 * assembler, linker: -Wp,-Dexp=expf or -Wl,--wrap=exp): refused even
 * though "-W*" is allowed. */
static const char *const passthrough[] = {"-Wp,", "-Wa,", "-Wl,", "-Xlinker", "-Xassembler",
                                          "-Xpreprocessor", NULL};

bool leir__cc_flag_allowed(const char *flag, size_t len) {
  for (size_t i = 0; passthrough[i]; i++)
    if (len >= strlen(passthrough[i]) && memcmp(flag, passthrough[i], strlen(passthrough[i])) == 0)
      return false;
  for (size_t i = 0; fp_changing[i]; i++) {
    size_t p = strlen(fp_changing[i]);
    /* "-D", "-I", ... and the names ending in '=' or '-' are prefixes */
    bool prefix = p <= 2 || fp_changing[i][p - 1] == '=' || fp_changing[i][p - 1] == '-' ||
                  strcmp(fp_changing[i], "-mno-sse") == 0 || strcmp(fp_changing[i], "-mrecip") == 0;
    if (prefix ? len >= p && memcmp(fp_changing[i], flag, p) == 0
               : len == p && memcmp(fp_changing[i], flag, p) == 0)
      return strncmp(flag, "-ffp-contract=off", len) == 0 && len == 17;
  }
  for (size_t i = 0; allowed[i]; i++)
    if (match(allowed[i], flag, len)) return true;
  return false;
}

/* Whether a refused flag is one that changes floating-point results. */
static bool fp_flag(const char *flag, size_t len) {
  for (size_t i = 0; fp_changing[i]; i++) {
    size_t p = strlen(fp_changing[i]);
    if (len >= p && memcmp(fp_changing[i], flag, p) == 0) return p > 2 || flag[1] == 'm';
  }
  return false;
}

/* Appended after the user's flags so they win: no contraction (unless
 * the backend was opened with LEIR_BACKEND_FP_CONTRACT: -ffp-contract=off
 * is then -ffp-contract=fast), no fast math, and libm calls that stay calls
 * (so constant arguments are not folded with a different rounding than
 * the run-time library's). */
static const char *const fixed[] = {"-std=c11",
                                    "-fPIC",
                                    "-shared",
                                    "-ffp-contract=off",
                                    "-fno-fast-math",
                                    /* values unchanged (errno is never read);
                                     * lets sqrt/sqrtf vectorize */
                                    "-fno-math-errno",
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
  free(cc->runner);
  memset(cc, 0, sizeof *cc);
}

static bool push(leir__cc *cc, const char *s, size_t n, size_t *cap) {
  if (!leir__vec_grow((void **)&cc->args, cap, cc->nargs + 2, sizeof *cc->args, 32)) return false;
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

/* The environment of the compiler: ours with TMPDIR = dir. */
static char **compiler_env(const char *dir) {
  size_t n = 0;
  while (environ && environ[n]) n++;
  char **env = calloc(n + 2, sizeof *env);
  if (!env) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "TMPDIR=", 7) != 0) env[k++] = environ[i];
  size_t len = strlen(dir) + 8;
  env[k] = malloc(len);
  if (!env[k]) {
    free(env);
    return NULL;
  }
  snprintf(env[k], len, "TMPDIR=%s", dir);
  env[k + 1] = NULL;
  return env;
}

static void free_env(char **env) {
  if (!env) return;
  size_t k = 0;
  while (env[k + 1]) k++;
  free(env[k]); /* the TMPDIR entry, last */
  free(env);
}

/* Spawns the runner in --limits mode for argv (the compiler and its
 * arguments) in directory `dir` (when the C library can), in a new process
 * group, with stdout+stderr into `log_path`, stdin from /dev/null and
 * TMPDIR = dir. */
static int spawn(const char *runner, char *const *argv, uint64_t memory_bytes, double cpu_seconds,
                 const char *dir, const char *log_path, pid_t *pid) {
  size_t n = 0;
  while (argv[n]) n++;
  char as[32], cpu[32];
  snprintf(as, sizeof as, "%llu", (unsigned long long)memory_bytes);
  snprintf(cpu, sizeof cpu, "%llu",
           (unsigned long long)(cpu_seconds > 0 ? (uint64_t)cpu_seconds + 1 : 0));
  char **full = calloc(n + 6, sizeof *full);
  char **env = compiler_env(dir);
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  bool fa_ok = false, attr_ok = false;
  int rc = ENOMEM;
  if (!full || !env) goto done;
  full[0] = (char *)runner;
  full[1] = LEIR__RUNNER_LIMITS_FLAG;
  full[2] = as;
  full[3] = cpu;
  full[4] = "--";
  for (size_t i = 0; i < n; i++) full[5 + i] = argv[i];
  full[5 + n] = NULL;
  if (!(fa_ok = posix_spawn_file_actions_init(&fa) == 0)) goto done;
  if (!(attr_ok = posix_spawnattr_init(&attr) == 0)) goto done;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
  posix_spawn_file_actions_addchdir_np(&fa, dir);
#endif
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  leir__spawnattr_isolate(&attr);
  rc = posix_spawn(pid, runner, &fa, &attr, full, env);
done:
  if (fa_ok) posix_spawn_file_actions_destroy(&fa);
  if (attr_ok) posix_spawnattr_destroy(&attr);
  free(full);
  free_env(env);
  return rc;
}

/* Kills process group `pgid` (led by the unreaped `pid`), reaps the
 * leader and waits (up to a second) until no process of the group is
 * left. */
static void kill_group(pid_t pid, int *status) {
  int ws = 0;
  kill(-pid, SIGKILL);
  while (waitpid(pid, status ? status : &ws, 0) < 0 && errno == EINTR) {
  }
  /* passes the driver started were reparented; SIGKILL reached them too,
   * but they may take a moment to go */
  for (int i = 0; i < 200 && kill(-pid, 0) == 0; i++) {
    kill(-pid, SIGKILL);
    sleep_ms(5);
  }
}

/* Waits for pid up to timeout; *status gets the wait status. Returns 0,
 * ETIMEDOUT (its process group was killed) or ECHILD (reaped elsewhere).
 * A host that sets SIGCHLD to SIG_IGN (or SA_NOCLDWAIT) has its children
 * reaped by the kernel, so waitpid fails with ECHILD while the compiler is
 * still running: then the wait goes on until the process group the child
 * leads is empty (the compiler driver outlives its passes), under the same
 * deadline, and the caller judges by what the compiler left. */
static int wait_for(pid_t pid, double timeout_s, int *status) {
  double deadline = leir__now() + timeout_s;
  int ms = 1;
  bool reaped_elsewhere = false;
  for (;;) {
    if (!reaped_elsewhere) {
      pid_t w = waitpid(pid, status, WNOHANG);
      if (w == pid) return 0;
      if (w < 0 && errno != EINTR) reaped_elsewhere = true;
    }
    if (reaped_elsewhere && kill(-pid, 0) != 0 && errno == ESRCH) return ECHILD;
    if (leir__now() > deadline) {
      if (reaped_elsewhere) {
        kill(-pid, SIGKILL);
        return ETIMEDOUT;
      }
      kill_group(pid, status);
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

/* A private directory "$TMPDIR/<prefix>XXXXXX" whose .lock this process
 * holds (the descriptor goes to *lock_fd). */
static bool make_dir(char *dir, size_t cap, const char *prefix, int *lock_fd) {
  *lock_fd = -1;
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  int n = snprintf(dir, cap, "%s/%sXXXXXX", tmp, prefix);
  if (n <= 0 || (size_t)n + sizeof LEIR__CC_LOCK_NAME + 1 >= cap) return false;
  if (!mkdtemp(dir)) return false;
  char lock[512];
  snprintf(lock, sizeof lock, "%s/" LEIR__CC_LOCK_NAME, dir);
  int fd = open(lock, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    fd = -1;
  }
  if (fd < 0) {
    int err = errno;
    remove_dir(dir);
    errno = err;
    return false;
  }
  *lock_fd = fd;
  return true;
}

int leir__cc_private_dir(char *dir, size_t cap, const char *prefix) {
  int fd;
  return make_dir(dir, cap, prefix, &fd) ? fd : -1;
}

void leir__cc_remove_dir(const char *dir) { remove_dir(dir); }

/* ---- sweeping what killed processes left in $TMPDIR ----------------------------- */

static void sweep_tmp(void) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  DIR *d = opendir(tmp);
  if (!d) return;
  struct dirent *e;
  char path[4096], lock[4200];
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, LEIR__CC_DIR_PREFIX, strlen(LEIR__CC_DIR_PREFIX)) != 0) continue;
    int n = snprintf(path, sizeof path, "%s/%s", tmp, e->d_name);
    if (n <= 0 || (size_t)n >= sizeof path) continue;
    struct stat sb;
    if (lstat(path, &sb) != 0 || !S_ISDIR(sb.st_mode) || sb.st_uid != geteuid()) continue;
    snprintf(lock, sizeof lock, "%s/" LEIR__CC_LOCK_NAME, path);
    int fd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) continue; /* not ours, or being created */
    struct stat lb;
    /* a lock nobody holds: its owner is gone */
    if (fstat(fd, &lb) == 0 && S_ISREG(lb.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0)
      remove_dir(path);
    close(fd);
  }
  closedir(d);
}

static pthread_once_t sweep_once = PTHREAD_ONCE_INIT;

void leir__cc_sweep_tmp(void) { pthread_once(&sweep_once, sweep_tmp); }

/* ---- init ----------------------------------------------------------------------- */

leir_status leir__cc_init(leir__cc *cc, const char *compiler, const char *flags, bool contract,
                          double timeout_s, const char *runner) {
  memset(cc, 0, sizeof *cc);
  size_t cap = 0;
  leir__strbuf text = LEIR__STRBUF_INIT;
  if (!(cc->runner = dup_n(runner, strlen(runner)))) goto nomem;
  if (!push(cc, compiler, strlen(compiler), &cap)) goto nomem;
  for (const char *p = flags; *p;) {
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    const char *start = p;
    while (*p && *p != ' ' && *p != '\t' && *p != '\n') p++;
    if (p == start) continue;
    size_t n = (size_t)(p - start);
    if (!leir__cc_flag_allowed(start, n)) {
      char flag[128];
      snprintf(flag, sizeof flag, "%.*s", (int)(n < 100 ? n : 100), start);
      bool fp = fp_flag(start, n);
      leir__cc_free(cc);
      leir__sb_release(&text);
      return leir__error(LEIR_ERR_ARGUMENT, "backend.flags", flag, 0, 0,
                         "compiler flag %s is refused: %s", flag,
                         fp ? "it lets the compiler change floating-point results, which "
                              "breaks bitwise verification"
                            : "only flags that cannot change results are accepted "
                              "(-O0..-O3, -Os, -Og, -march=, -mtune=, -mcpu=, instruction-set "
                              "extensions such as -mavx2, -fopenmp, -g, -W...; see "
                              "docs/verification.md)");
    }
    if (!push(cc, start, n, &cap)) goto nomem;
    leir__sb_put(&text, start, n);
    leir__sb_putc(&text, ' ');
  }
  for (size_t f = 0; fixed[f]; f++) {
    const char *flag =
        contract && strcmp(fixed[f], "-ffp-contract=off") == 0 ? "-ffp-contract=fast" : fixed[f];
    if (!push(cc, flag, strlen(flag), &cap)) goto nomem;
    leir__sb_puts(&text, flag);
    leir__sb_putc(&text, ' ');
  }
  cc->flags_text = leir__sb_finish(&text, NULL);
  if (!cc->flags_text) goto nomem;

  /* identity: `CC --version` */
  char dir[256], log[320];
  int lock_fd;
  if (!make_dir(dir, sizeof dir, LEIR__CC_DIR_PREFIX, &lock_fd)) {
    leir__cc_free(cc);
    return leir__error(LEIR_ERR_IO, "backend.tmpdir", NULL, 0, 0,
                       "cannot create a temporary directory: %s", strerror(errno));
  }
  snprintf(log, sizeof log, "%s/version.txt", dir);
  char *argv[3] = {cc->args[0], "--version", NULL};
  pid_t pid;
  int rc = spawn(cc->runner, argv, 0, timeout_s, dir, log, &pid), status = 0;
  if (rc == 0) rc = wait_for(pid, timeout_s, &status);
  leir__strbuf id = LEIR__STRBUF_INIT;
  read_file(log, &id, 1 << 16);
  remove_dir(dir);
  close(lock_fd);
  /* reaped elsewhere (SIGCHLD ignored): the exit status is lost, so the
   * version text judges: some output, and not the runner's own complaint */
  if (rc == ECHILD && id.len > 0 && leir__sb_terminate(&id) && !strstr(id.data, "leir-runner:")) {
    rc = 0;
    status = 0;
  }
  if (rc != 0 || !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    /* the runner says why it could not execute the compiler */
    const char *why = rc ? strerror(rc) : "";
    char said[256] = "";
    if (!rc && id.len && leir__sb_terminate(&id)) {
      const char *m = strstr(id.data, "cannot execute");
      if (m) snprintf(said, sizeof said, "%.*s", (int)strcspn(m, "\n"), m);
    }
    leir__sb_release(&id);
    leir_status st = leir__error(LEIR_ERR_NO_DEVICE, "backend.compiler", compiler, 0, 0,
                                 "cannot run the C compiler '%s' (set $CC or the compiler "
                                 "option)%s%s%s%s",
                                 compiler, *why ? ": " : "", why, *said ? ": " : "", said);
    leir__cc_free(cc);
    return st;
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
    /* and no partial redundancy elimination: GCC 12 does not honour
     * restrict on the kernel's local buffer pointers, so PRE reloads a
     * value stored earlier in the row iteration in the latch of the last
     * pass, which the vectorizer then refuses ("latch block not empty";
     * softmax's and layernorm's final pass, bench/softmax) */
    static const char *const extras[] = {"-fno-tree-loop-if-convert", "-fno-tree-pre"};
    for (size_t x = 0; x < sizeof extras / sizeof extras[0]; x++) {
      const char *extra = extras[x];
      size_t elen = strlen(extra);
      if (!push(cc, extra, elen, &cap)) goto nomem;
      size_t len = strlen(cc->flags_text);
      char *t = realloc(cc->flags_text, len + elen + 2);
      if (!t) goto nomem;
      memcpy(t + len, extra, elen);
      t[len + elen] = ' ';
      t[len + elen + 1] = '\0';
      cc->flags_text = t;
    }
  }
  return LEIR_OK;
nomem:
  leir__sb_release(&text);
  leir__cc_free(cc);
  return leir__error_nomem();
}

/* ---- jobs ------------------------------------------------------------------------ */

leir_status leir__cc_start(const leir__cc *cc, const char *source, size_t len, uint64_t memory_bytes,
                           double cpu_seconds, leir__cc_job *job) {
  memset(job, 0, sizeof *job);
  job->lock_fd = -1;
  job->status = LEIR_ERR_INTERNAL;
  if (!make_dir(job->dir, sizeof job->dir, LEIR__CC_DIR_PREFIX, &job->lock_fd)) {
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
  int rc = spawn(cc->runner, argv, memory_bytes, cpu_seconds, job->dir, log, &job->pid);
  free(argv);
  if (rc != 0)
    return leir__error(LEIR_ERR_NO_DEVICE, "backend.compiler", cc->args[0], 0, 0,
                       "cannot start the C compiler '%s': %s", cc->args[0], strerror(rc));
  job->running = true;
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
      leir__sb_printf(&job->log, "the C compiler exceeded its time limit of %g s and was killed",
                      timeout_s);
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
        leir__sb_printf(&job->log, "\n(the compiler was killed by signal %d%s)\n",
                        WTERMSIG(status),
                        WTERMSIG(status) == SIGXCPU ? ": its CPU time limit"
                        : WTERMSIG(status) == SIGKILL ? ": out of memory or time?"
                                                      : "");
    }
  }
}

void leir__cc_cleanup(leir__cc_job *job) {
  if (job->running) {
    kill_group(job->pid, NULL);
    job->running = false;
  }
  if (job->dir[0]) remove_dir(job->dir);
  job->dir[0] = '\0';
  if (job->lock_fd >= 0) close(job->lock_fd);
  job->lock_fd = -1;
  leir__sb_release(&job->log);
}
