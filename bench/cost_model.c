/*
 * How well the analytic cost model (leir_program_cost_predict,
 * docs/cost.md) ranks schedules: a benchmark set of schedules of one
 * program (matmul N^3 f32: the six loop orders, parallel outer loops,
 * cache tiles of several sizes, register tiles with U/V inner loops, two
 * bad tilings; and row-wise softmax-like reductions in both orders), each
 * timed side by side with
 * leir_bench, and the Spearman rank correlation between predicted and
 * measured time printed per program and over all.
 *
 *   cost_model [N [THREADS]]   (N = 256 by default, a multiple of 64;
 *                               THREADS = the cpu backend's default, or a
 *                               comma-separated list such as 1,2: one run
 *                               per count, each with its own Spearman)
 *
 * The model is asked for the thread count the kernels run with
 * (leir_program_cost_predict).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEIR_EXPERIMENTAL
#include "leir/experimental/cost.h"
#include "leir/leir.h"

#define MAXP 64

static void ranks(const double *v, size_t n, double *r) {
  for (size_t i = 0; i < n; i++) {
    double less = 0, equal = 0;
    for (size_t j = 0; j < n; j++) less += v[j] < v[i], equal += v[j] == v[i];
    r[i] = less + (equal + 1) / 2; /* ties share the mean rank */
  }
}

static double spearman(const double *x, const double *y, size_t n) {
  double rx[2 * MAXP], ry[2 * MAXP], mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
  ranks(x, n, rx);
  ranks(y, n, ry);
  for (size_t i = 0; i < n; i++) mx += rx[i] / n, my += ry[i] / n;
  for (size_t i = 0; i < n; i++)
    sxy += (rx[i] - mx) * (ry[i] - my), sxx += (rx[i] - mx) * (rx[i] - mx),
        syy += (ry[i] - my) * (ry[i] - my);
  return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : 0;
}

typedef struct set {
  const char *name;
  char text[MAXP][1024];
  char label[MAXP][64];
  size_t n;
} set;

static void add(set *s, const char *label, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->text[s->n], sizeof s->text[s->n], fmt, ap);
  va_end(ap);
  snprintf(s->label[s->n], sizeof s->label[s->n], "%s", label);
  s->n++;
}

/* The matmul body with these subscripts (a static buffer: one use per call). */
static const char *mm(const char *a, const char *c, const char *d) {
  static char body[512];
  snprintf(body, sizeof body, "[D^{f32,g}_{%s,%s}=D^{f32,g}_{%s,%s}+A^{f32,g}_{%s,%s}*C^{f32,g}_{%s,%s};];",
           a, c, a, c, a, d, d, c);
  return body;
}

static void matmul_set(set *s, int n) {
  s->name = "matmul";
  static const char *ord[6][3] = {{"a", "c", "d"}, {"a", "d", "c"}, {"c", "a", "d"},
                                  {"c", "d", "a"}, {"d", "a", "c"}, {"d", "c", "a"}};
  char buf[512];
  for (int i = 0; i < 6; i++) {
    snprintf(buf, sizeof buf, "L^{%d}_{%s=0}L^{%d}_{%s=0}L^{%d}_{%s=0}", n, ord[i][0], n, ord[i][1],
             n, ord[i][2]);
    char label[64];
    snprintf(label, sizeof label, "order %s%s%s", ord[i][0], ord[i][1], ord[i][2]);
    add(s, label, "%s%s", buf, mm("a", "c", "d"));
    if (ord[i][0][0] != 'd') {
      buf[0] = 'P';
      snprintf(label, sizeof label, "order %s%s%s, P outer", ord[i][0], ord[i][1], ord[i][2]);
      add(s, label, "%s%s", buf, mm("a", "c", "d"));
    }
  }
  static const int tiles[] = {8, 16, 32, 64};
  for (int i = 0; i < 4; i++) {
    int t = tiles[i], q = n / t;
    char label[64];
    snprintf(label, sizeof label, "tiled %d (a,d,c inner)", t);
    char a[32], c[32], d[32];
    snprintf(a, sizeof a, "g*%d+a", t);
    snprintf(c, sizeof c, "h*%d+c", t);
    snprintf(d, sizeof d, "i*%d+d", t);
    add(s, label, "L^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{i=0}L^{%d}_{a=0}L^{%d}_{d=0}L^{%d}_{c=0}%s",
        q, q, q, t, t, t, mm(a, c, d));
    if (t == 32) {
      add(s, "tiled 32, P outer",
          "P^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{i=0}L^{%d}_{a=0}L^{%d}_{d=0}L^{%d}_{c=0}%s", q,
          q, q, t, t, t, mm(a, c, d));
      add(s, "tiled 32, P + V",
          "P^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{i=0}L^{%d}_{a=0}L^{%d}_{d=0}V^{%d}_{c=0}%s", q,
          q, q, t, t, t, mm(a, c, d));
      add(s, "tiled 32 (a,c,d inner)",
          "L^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{i=0}L^{%d}_{a=0}L^{%d}_{c=0}L^{%d}_{d=0}%s", q,
          q, q, t, t, t, mm(a, c, d));
    }
  }
  static const int reg[][2] = {{8, 16}, {4, 16}, {8, 32}, {2, 8}, {4, 64}};
  for (int i = 0; i < 5; i++) {
    int r = reg[i][0], v = reg[i][1];
    char label[64], a[32], c[32];
    snprintf(a, sizeof a, "g*%d+a", r);
    snprintf(c, sizeof c, "h*%d+c", v);
    snprintf(label, sizeof label, "register tile %dx%d, P", r, v);
    add(s, label, "P^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{d=0}U^{%d}_{a=0}V^{%d}_{c=0}%s",
        n / r, n / v, n, r, v, mm(a, c, "d"));
    if (i == 0) {
      add(s, "register tile 8x16, serial",
          "L^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{d=0}U^{%d}_{a=0}V^{%d}_{c=0}%s", n / r,
          n / v, n, r, v, mm(a, c, "d"));
      add(s, "register tile 8x16, d outside h",
          "P^{%d}_{g=0}L^{%d}_{d=0}L^{%d}_{h=0}U^{%d}_{a=0}V^{%d}_{c=0}%s", n / r, n,
          n / v, r, v, mm(a, c, "d"));
      /* V on both tile loops: only the outer one is the omp simd loop; the
       * inner one is a plain loop of its body, the tile a local array */
      add(s, "tile 8x16, V rows around V columns, P",
          "P^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{d=0}V^{%d}_{a=0}V^{%d}_{c=0}%s", n / r, n / v, n,
          r, v, mm(a, c, "d"));
      add(s, "tile 8x16, V columns around V rows, P",
          "P^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{d=0}V^{%d}_{c=0}V^{%d}_{a=0}%s", n / r, n / v, n,
          v, r, mm(a, c, "d"));
      add(s, "tile 16x16, V columns around V rows, P",
          "P^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{d=0}V^{%d}_{c=0}V^{%d}_{a=0}%s", n / 16, n / v, n,
          v, 16, mm("g*16+a", c, "d"));
      add(s, "tile 16x16, U rows around V columns, P",
          "P^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{d=0}U^{%d}_{a=0}V^{%d}_{c=0}%s", n / 16, n / v, n,
          16, v, mm("g*16+a", c, "d"));
      add(s, "tile 32x16, V columns around V rows, P",
          "P^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{d=0}V^{%d}_{c=0}V^{%d}_{a=0}%s", n / 32, n / v, n,
          v, 32, mm("g*32+a", c, "d"));
      add(s, "tile 8x64, V columns around V rows, P",
          "P^{%d}_{g=0}L^{%d}_{h=0}L^{%d}_{d=0}V^{%d}_{c=0}V^{%d}_{a=0}%s", n / r, n / 64, n,
          64, r, mm(a, "h*64+c", "d"));
    }
  }
}

/* Row sums and a softmax-like normalization over an n x 4n input, in
 * row-major and column-major orders, serial and parallel. */
static void rows_set(set *s, int n) {
  s->name = "row reductions";
  int m = 4 * n;
  add(s, "sum rows (a,c)", "L^{%d}_{a=0}L^{%d}_{c=0}[D^{f32,g}_{a}=D^{f32,g}_{a}+A^{f32,g}_{a,c};];", m, m);
  add(s, "sum rows (c,a)", "L^{%d}_{c=0}L^{%d}_{a=0}[D^{f32,g}_{a}=D^{f32,g}_{a}+A^{f32,g}_{a,c};];", m, m);
  add(s, "sum rows (a,c), P", "P^{%d}_{a=0}L^{%d}_{c=0}[D^{f32,g}_{a}=D^{f32,g}_{a}+A^{f32,g}_{a,c};];", m, m);
  add(s, "sum rows (c,a), V inner",
      "L^{%d}_{c=0}V^{%d}_{a=0}[D^{f32,g}_{a}=D^{f32,g}_{a}+A^{f32,g}_{a,c};];", m, m);
  add(s, "sum rows, U over 8 rows",
      "L^{%d}_{g=0}L^{%d}_{c=0}U^{8}_{a=0}[D^{f32,g}_{g*8+a}=D^{f32,g}_{g*8+a}+A^{f32,g}_{g*8+a,c};];",
      m / 8, m);
  add(s, "sum rows, P + 16 rows per V",
      "P^{%d}_{g=0}L^{%d}_{c=0}V^{16}_{a=0}[D^{f32,g}_{g*16+a}=D^{f32,g}_{g*16+a}+A^{f32,g}_{g*16+a,c};];",
      m / 16, m);
  add(s, "scale rows (a,c)",
      "L^{%d}_{a=0}L^{%d}_{c=0}[D^{f32,g}_{a,c}=exp(A^{f32,g}_{a,c})*2;];", m, m);
  add(s, "scale rows (c,a)",
      "L^{%d}_{c=0}L^{%d}_{a=0}[D^{f32,g}_{a,c}=exp(A^{f32,g}_{a,c})*2;];", m, m);
  add(s, "scale rows (a,c), P",
      "P^{%d}_{a=0}L^{%d}_{c=0}[D^{f32,g}_{a,c}=exp(A^{f32,g}_{a,c})*2;];", m, m);
  add(s, "scale rows (a,c), P + V",
      "P^{%d}_{a=0}V^{%d}_{c=0}[D^{f32,g}_{a,c}=exp(A^{f32,g}_{a,c})*2;];", m, m);
}

static uint32_t threads;

static int run_set(leir_backend *b, set *s, double *all_pred, double *all_meas, size_t *nall) {
  leir_program *p[MAXP];
  double pred[MAXP], meas[MAXP];
  for (size_t i = 0; i < s->n; i++) {
    if (leir_program_parse(&p[i], s->text[i], strlen(s->text[i]), NULL) != LEIR_OK ||
        leir_program_infer_signature(p[i]) != LEIR_OK) {
      fprintf(stderr, "%s: %s\n", s->label[i], leir_error_last()->message);
      return 1;
    }
    if (leir_program_cost_predict(p[i], threads, &pred[i]) != LEIR_OK) return 1;
  }
  leir_bench_options bo = LEIR_BENCH_OPTIONS_INIT;
  bo.min_runs = 5;
  bo.min_seconds = 0.02;
  leir_timing tm[MAXP];
  if (leir_bench(b, (const leir_program *const *)p, s->n, &bo, tm) != LEIR_OK) {
    fprintf(stderr, "bench: %s\n", leir_error_last()->message);
    return 1;
  }
  printf("\n%s (%zu schedules)\n\n| schedule | predicted ms | measured ms | GFLOP/s |\n"
         "|---|---:|---:|---:|\n", s->name, s->n);
  for (size_t i = 0; i < s->n; i++) {
    meas[i] = tm[i].median_s;
    printf("| %s | %.3f | %.3f | %.2f |\n", s->label[i], pred[i] * 1e3, meas[i] * 1e3,
           tm[i].gflops);
    all_pred[*nall] = pred[i] / pred[0]; /* relative to the set's first schedule */
    all_meas[(*nall)++] = meas[i] / meas[0];
  }
  printf("\nSpearman rank correlation, predicted vs measured (%s): %.3f\n", s->name,
         spearman(pred, meas, s->n));
  for (size_t i = 0; i < s->n; i++) leir_program_free(p[i]);
  return 0;
}

static int run_threads(int n, uint32_t t) {
  threads = t;
  leir_backend_options o = LEIR_BACKEND_OPTIONS_INIT;
  o.threads = threads;
  leir_backend *b;
  if (leir_backend_open(&b, "cpu", &o) != LEIR_OK) {
    fprintf(stderr, "cpu backend: %s\n", leir_error_last()->message);
    return 3;
  }
  char load[64];
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f || !fgets(load, sizeof load, f)) snprintf(load, sizeof load, "unknown\n");
  if (f) fclose(f);
  printf("\n## cost model against measured time, N = %d, threads %u (0: the backend's "
         "default); load average %s",
         n, threads, load);
  static set sets[2];
  memset(sets, 0, sizeof sets);
  matmul_set(&sets[0], n);
  rows_set(&sets[1], n);
  double ap[2 * MAXP], am[2 * MAXP];
  size_t na = 0;
  for (int i = 0; i < 2; i++)
    if (run_set(b, &sets[i], ap, am, &na)) return 3;
  /* within-set ranks are what a search uses; the pooled figure mixes sets
   * through their ratios to each set's first schedule */
  printf("\nSpearman over both sets (times relative to each set's first schedule): %.3f\n",
         spearman(ap, am, na));
  leir_backend_free(b);
  return 0;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 256;
  if (n < 64 || n % 64) {
    fprintf(stderr, "N must be a positive multiple of 64\n");
    return 2;
  }
  /* THREADS: one count, or a comma-separated list run one after the other */
  const char *list = argc > 2 ? argv[2] : "0";
  char buf[64];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
    int rc = run_threads(n, (uint32_t)atoi(t));
    if (rc) return rc;
  }
  return 0;
}
