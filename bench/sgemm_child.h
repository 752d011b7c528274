/*
 * Shared by bench/matmul.c and bench/search.c: runs bench/sgemm (OpenBLAS in
 * a process of its own, next to the calling executable) and collects its
 * timings; order statistics; the load average.
 */
#ifndef BENCH_SGEMM_CHILD_H
#define BENCH_SGEMM_CHILD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Quantile q of v[0..n) (sorted in place), linear interpolation. */
static double bench_quantile(double *v, size_t n, double q) {
  if (n == 0) return 0;
  qsort(v, n, sizeof *v, bench_cmp_double);
  double pos = q * (double)(n - 1);
  size_t i = (size_t)pos;
  double f = pos - (double)i;
  return i + 1 < n ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

static void bench_load(char *out, size_t cap) {
  FILE *f = fopen("/proc/loadavg", "r");
  double l1 = 0, l5 = 0, l15 = 0;
  if (!f || fscanf(f, "%lf %lf %lf", &l1, &l5, &l15) != 3)
    snprintf(out, cap, "unknown");
  else
    snprintf(out, cap, "%.2f %.2f %.2f", l1, l5, l15);
  if (f) fclose(f);
}

/* The path of bench/sgemm: next to /proc/self/exe. */
static int bench_sgemm_path(char *out, size_t cap) {
  char self[4096];
  ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
  if (k <= 0) return -1;
  self[k] = 0;
  char *slash = strrchr(self, '/');
  if (!slash) return -1;
  *slash = 0;
  snprintf(out, cap, "%s/sgemm", self);
  return access(out, X_OK) == 0 ? 0 : -1;
}

/* Runs `sgemm n threads runs` and appends its timings to t (capacity cap);
 * returns how many it read, or -1 (no helper, or OpenBLAS missing). */
static int bench_sgemm_run(int n, int threads, int runs, double *t, size_t cap) {
  char path[4200];
  if (bench_sgemm_path(path, sizeof path) != 0) return -1;
  int fd[2];
  if (pipe(fd) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    char a[3][32];
    snprintf(a[0], sizeof a[0], "%d", n);
    snprintf(a[1], sizeof a[1], "%d", threads);
    snprintf(a[2], sizeof a[2], "%d", runs);
    dup2(fd[1], 1);
    close(fd[0]);
    close(fd[1]);
    /* OpenBLAS's own threads, nothing inherited from the caller */
    setenv("OPENBLAS_NUM_THREADS", a[1], 1);
    execl(path, path, a[0], a[1], a[2], (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  FILE *f = fdopen(fd[0], "r");
  int got = 0;
  double x;
  while (f && (size_t)got < cap && fscanf(f, "%lf", &x) == 1) t[got++] = x;
  if (f) fclose(f);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return got;
}

/* A pause so that the OpenMP workers of LEIR's runner stop spinning before
 * the helper starts (libgomp spins for a while after a parallel region). */
static void bench_settle(void) {
  struct timespec ts = {0, 50 * 1000 * 1000};
  nanosleep(&ts, NULL);
}

#endif
