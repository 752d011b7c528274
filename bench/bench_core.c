/*
 * Throughput of the core on the conformance corpus, one core:
 *   parse + check + print (canonical), and hashing (plain and alpha),
 * in MB/s of LEIR text and programs/s of CPU time; plus memory: arena bytes per text
 * byte for every program, and the peak resident memory of parse + check +
 * print on a 10 MB program, relative to its size.
 *
 *   bench_core [DATA_DIR] [SECONDS]     (default tests/data, 2 s per phase)
 *
 * Not a test: targets (>= 50 MB/s parse+check+print, peak memory <= 20x the
 * input) are checked by reading the output; see bench/README.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ir.h"
#include "jsonl.h"
#include "leir/leir.h"

typedef struct corpus {
  char **texts;
  size_t *lens;
  size_t n, cap, bytes;
} corpus;

/* CPU time of this process: what one core spends, even when other
 * processes share the machine (wall time is printed too). */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void add(corpus *c, const char *text) {
  if (c->n == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 1024;
    c->texts = realloc(c->texts, c->cap * sizeof *c->texts);
    c->lens = realloc(c->lens, c->cap * sizeof *c->lens);
    if (!c->texts || !c->lens) exit(1);
  }
  c->lens[c->n] = strlen(text);
  c->texts[c->n] = strdup(text);
  c->bytes += c->lens[c->n];
  c->n++;
}

static void load(corpus *c, const char *dir) {
  static const struct {
    const char *file, *field;
  } parts[] = {{"sources-small.jsonl", "leir"},
               {"sources-default.jsonl", "leir"},
               {"steps-small.jsonl", "after"},
               {"steps-default.jsonl", "after"}};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, parts[i].file);
    jsonl_file *f = jsonl_open(path);
    if (!f) exit(1);
    const jsonl_value *o;
    while ((o = jsonl_next(f))) {
      if (jsonl_bool(jsonl_get(o, "malformed"), false)) continue;
      const char *text = jsonl_str(jsonl_get(o, parts[i].field));
      if (text) add(c, text);
    }
    jsonl_close(f);
  }
}

typedef struct timing {
  double seconds; /* CPU */
  double wall;
  size_t rounds;
} timing;

/* Runs fn over the corpus until `budget` CPU seconds have passed. */
static timing repeat(const corpus *c, double budget, void (*fn)(const corpus *, void *), void *arg) {
  timing t = {0, 0, 0};
  double start = now(), wstart = wall();
  do {
    fn(c, arg);
    t.rounds++;
    t.seconds = now() - start;
  } while (t.seconds < budget);
  t.wall = wall() - wstart;
  return t;
}

static void report(const char *what, const corpus *c, timing t, size_t bytes_per_round) {
  double mb = (double)bytes_per_round * (double)t.rounds / 1e6;
  printf("%-28s %8.1f MB/s %10.0f programs/s   (%zu rounds, %.2f s CPU, %.2f s wall)\n", what,
         mb / t.seconds, (double)c->n * (double)t.rounds / t.seconds, t.rounds, t.seconds, t.wall);
}

static size_t failures;

static void parse_check_print(const corpus *c, void *arg) {
  (void)arg;
  for (size_t i = 0; i < c->n; i++) {
    leir_program *p = NULL;
    if (leir_program_parse(&p, c->texts[i], c->lens[i], NULL) != LEIR_OK) {
      failures++;
      continue;
    }
    (void)leir_program_check(p, NULL, NULL);
    char *out = NULL;
    size_t len = 0;
    if (leir_program_print(p, 0, &out, &len) != LEIR_OK || len != c->lens[i]) failures++;
    leir_free(out);
    leir_program_free(p);
  }
}

static void parse_only(const corpus *c, void *arg) {
  (void)arg;
  for (size_t i = 0; i < c->n; i++) {
    leir_program *p = NULL;
    if (leir_program_parse(&p, c->texts[i], c->lens[i], NULL) != LEIR_OK) failures++;
    leir_program_free(p);
  }
}

static void check_only(const corpus *c, void *arg) {
  leir_program **progs = arg;
  for (size_t i = 0; i < c->n; i++) (void)leir_program_check(progs[i], NULL, NULL);
}

static void print_only(const corpus *c, void *arg) {
  leir_program **progs = arg;
  for (size_t i = 0; i < c->n; i++) {
    char *out = NULL;
    if (leir_program_print(progs[i], 0, &out, NULL) != LEIR_OK) failures++;
    leir_free(out);
  }
}

static uint64_t sink;

static void hash_plain(const corpus *c, void *arg) {
  leir_program **progs = arg;
  for (size_t i = 0; i < c->n; i++) sink ^= leir_program_hash(progs[i]);
}

static void hash_alpha(const corpus *c, void *arg) {
  leir_program **progs = arg;
  for (size_t i = 0; i < c->n; i++) sink ^= leir_program_hash_alpha(progs[i]);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Peak resident memory of parse + check + print of `text`, measured in a
 * child process so that nothing else counts. Returns bytes above the
 * baseline (text already in memory). */
static long peak_delta(const char *text, size_t len) {
  int fd[2];
  if (pipe(fd) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    leir_program *p = NULL;
    long delta = -1;
    if (leir_program_parse(&p, text, len, NULL) == LEIR_OK) {
      (void)leir_program_check(p, NULL, NULL);
      char *out = NULL;
      if (leir_program_print(p, 0, &out, NULL) == LEIR_OK) {
        getrusage(RUSAGE_SELF, &after);
        delta = (after.ru_maxrss - before.ru_maxrss) * 1024L;
      }
      leir_free(out);
    }
    leir_program_free(p);
    if (write(fd[1], &delta, sizeof delta) != (ssize_t)sizeof delta) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  long delta = -1;
  if (read(fd[0], &delta, sizeof delta) != (ssize_t)sizeof delta) delta = -1;
  close(fd[0]);
  waitpid(pid, NULL, 0);
  return delta;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "tests/data";
  double budget = argc > 2 ? atof(argv[2]) : 2.0;
  corpus c = {0};
  load(&c, dir);
  printf("libleir %s, corpus: %zu programs, %.2f MB (%s)\n\n", leir_version(), c.n,
         (double)c.bytes / 1e6, dir);

  /* warm up caches and the allocator */
  parse_check_print(&c, NULL);
  failures = 0;

  report("parse + check + print", &c, repeat(&c, budget, parse_check_print, NULL), c.bytes);
  report("  parse", &c, repeat(&c, budget, parse_only, NULL), c.bytes);
  leir_program **progs = calloc(c.n, sizeof *progs);
  for (size_t i = 0; i < c.n; i++) leir_program_parse(&progs[i], c.texts[i], c.lens[i], NULL);
  report("  check", &c, repeat(&c, budget, check_only, progs), c.bytes);
  report("  print", &c, repeat(&c, budget, print_only, progs), c.bytes);
  report("hash (XXH3 of canonical)", &c, repeat(&c, budget, hash_plain, progs), c.bytes);
  report("hash --alpha", &c, repeat(&c, budget, hash_alpha, progs), c.bytes);

  /* memory per program: arena bytes / text bytes */
  double *ratios = malloc(c.n * sizeof *ratios);
  size_t arena_total = 0;
  for (size_t i = 0; i < c.n; i++) {
    arena_total += progs[i]->arena.total;
    ratios[i] = (double)progs[i]->arena.total / (double)c.lens[i];
  }
  qsort(ratios, c.n, sizeof *ratios, cmp_double);
  printf("\nprogram memory (arena bytes / text bytes): median %.1fx, p99 %.1fx, max %.1fx, "
         "whole corpus %.1fx\n",
         ratios[c.n / 2], ratios[c.n * 99 / 100], ratios[c.n - 1],
         (double)arena_total / (double)c.bytes);
  free(ratios);

  /* a 10 MB program: the largest valid source program, repeated (each copy
   * reads the same inputs and rewrites the same results, so the whole
   * program is valid and the checker does all of its work) */
  size_t best = 0;
  for (size_t i = 0; i < c.n && i < 121; i++)
    if (c.lens[i] > c.lens[best] && leir_program_check(progs[i], NULL, NULL) == LEIR_OK) best = i;
  size_t big_len = 0, target = 10u << 20;
  char *big = malloc(target + c.lens[best]);
  while (big_len < target) {
    memcpy(big + big_len, c.texts[best], c.lens[best]);
    big_len += c.lens[best];
  }
  double t0 = now();
  leir_program *p = NULL;
  leir_status st = leir_program_parse(&p, big, big_len, NULL);
  double t1 = now();
  leir_status cst = leir_program_check(p, NULL, NULL);
  double t2 = now();
  char *out = NULL;
  leir_program_print(p, 0, &out, NULL);
  double t3 = now();
  printf("10 MB program (%.1f MB, %u nests, %zu copies of a %zu-byte program): parse %.0f ms, "
         "check %.0f ms (%s), print %.0f ms; %.1f MB/s\n",
         (double)big_len / 1e6, p ? p->nnests : 0, big_len / c.lens[best], c.lens[best],
         (t1 - t0) * 1e3, (t2 - t1) * 1e3,
         leir_status_name(cst), (t3 - t2) * 1e3, (double)big_len / 1e6 / (t3 - t0));
  printf("  arena %.1fx the text\n", p ? (double)p->arena.total / (double)big_len : 0.0);
  leir_free(out);
  leir_program_free(p);
  long delta = st == LEIR_OK ? peak_delta(big, big_len) : -1;
  printf("  peak memory of parse + check + print: %.1f MB = %.1fx the input\n", (double)delta / 1e6,
         (double)delta / (double)big_len);
  free(big);

  for (size_t i = 0; i < c.n; i++) {
    leir_program_free(progs[i]);
    free(c.texts[i]);
  }
  free(progs);
  free(c.texts);
  free(c.lens);
  if (failures) printf("\n%zu FAILURES (round trip or parse)\n", failures);
  return failures ? 1 : 0;
}
