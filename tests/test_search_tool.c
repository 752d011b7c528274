/* `leir optimize` and `leir db` end to end (the tool from $LEIR_TOOL): the
 * JSONL trajectory and summary, --out, --plot, the database reused by a
 * second run, export and usage errors. Runs on the interpreter with short
 * comparisons, so it needs no compiler and takes a few seconds. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LEIR_EXPERIMENTAL
#include "leir/experimental/search.h"
#include "testutil.h"

extern char **environ;

static char tmpdir[128];

typedef test_tool_result run_result;

static const char *path_in(const char *name) {
  static char p[4][256];
  static int slot;
  char *s = p[slot++ % 4];
  snprintf(s, 256, "%s/%s", tmpdir, name);
  return s;
}

static run_result run(const char *const *args) { return test_run_tool(tmpdir, args); }

#define RUN(...) run((const char *const[]){__VA_ARGS__, NULL})

static void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/leir-test-optimize-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  ck_assert_int_eq(system(cmd), 0);
}

static size_t count_lines(const char *s, const char *prefix) {
  size_t n = 0;
  for (const char *l = s; *l;) {
    if (strncmp(l, prefix, strlen(prefix)) == 0) n++;
    const char *nl = strchr(l, '\n');
    if (!nl) break;
    l = nl + 1;
  }
  return n;
}

START_TEST(test_optimize_json_out_plot_and_db_reuse) {
  char prog[256];
  snprintf(prog, sizeof prog, "%s", path_in("mm.leir"));
  FILE *f = fopen(prog, "w");
  fputs("L^{6}_{a=0}L^{6}_{c=0}L^{6}_{d=0}[D^{f64,g}_{a,c}=D^{f64,g}_{a,c}+A^{f64,g}_{a,d}*"
        "C^{f64,g}_{d,c};];\n", f);
  fclose(f);
  char db[256], out[256], svg[256], traj[256];
  snprintf(db, sizeof db, "%s", path_in("m.db"));
  snprintf(out, sizeof out, "%s", path_in("best.leir.yaml"));
  snprintf(svg, sizeof svg, "%s", path_in("plot.svg"));
  snprintf(traj, sizeof traj, "%s", path_in("t.jsonl"));
  run_result r = RUN("optimize", "--backend", "interp", "--policy", "exhaustive", "--samples", "3",
                     "--rounds", "3", "--max-rounds", "6", "--compare-time", "1", "--db", db,
                     "--out", out, "--plot", svg, "--trajectory", traj, "--json", prog);
  ck_assert_msg(r.status == 0, "%s", r.err);
  ck_assert_uint_eq(count_lines(r.out, "{\"sample\":"), 3);
  ck_assert_uint_eq(count_lines(r.out, "{\"summary\":"), 1);
  ck_assert_ptr_nonnull(strstr(r.out, "\"measured\":3,\"reused\":0"));
  /* the cost of the measured samples by phase: every one was verified */
  const char *cost = strstr(r.out, "{\"summary\":");
  cost = cost ? strstr(cost, "\"cost\":{\"compile_s\":") : NULL;
  ck_assert_ptr_nonnull(cost);
  const char *vs = strstr(cost, "\"verify_s\":");
  ck_assert_ptr_nonnull(vs);
  ck_assert_double_gt(strtod(vs + strlen("\"verify_s\":"), NULL), 0.0);
  ck_assert_ptr_nonnull(strstr(cost, "\"samples_to_95\":"));
  size_t costs = 0; /* the 3 records and the summary */
  for (const char *c = r.out; (c = strstr(c, "\"cost\":{\"compile_s\":")); c++) costs++;
  ck_assert_uint_eq(costs, 4);
  size_t len;
  char *t = test_read_file(traj, &len);
  ck_assert_uint_eq(count_lines(t, "{\"sample\":"), 3);
  free(t);
  char *s = test_read_file(svg, &len);
  ck_assert(strncmp(s, "<svg", 4) == 0);
  free(s);
  leir_program *best = NULL;
  ck_assert_int_eq(leir_program_load_file(&best, out, NULL), LEIR_OK);
  ck_assert_uint_eq(leir_program_signature_count(best), 3);
  leir_program_free(best);
  free(r.out);
  free(r.err);
  /* the same search again: everything from the database */
  r = RUN("optimize", "--backend", "interp", "--policy", "exhaustive", "--samples", "3",
          "--rounds", "3", "--max-rounds", "6", "--compare-time", "1", "--db", db, "--quiet",
          prog);
  ck_assert_msg(r.status == 0, "%s", r.err);
  ck_assert_ptr_nonnull(strstr(r.out, "3 (measured 0, from the database 3)"));
  ck_assert_ptr_null(strstr(r.out, "cost per sample")); /* nothing measured */
  free(r.out);
  free(r.err);
  r = RUN("db", "count", "--db", db);
  ck_assert_int_eq(r.status, 0);
  ck_assert_str_eq(r.out, "3\n");
  free(r.out);
  free(r.err);
  r = RUN("db", "export", "--db", db);
  ck_assert_int_eq(r.status, 0);
  ck_assert_uint_eq(count_lines(r.out, "{\"program_hash\":"), 3);
  ck_assert_ptr_nonnull(strstr(r.out, "\"backend\":\"interp\""));
  free(r.out);
  free(r.err);
}
END_TEST

START_TEST(test_optimize_usage_errors) {
  run_result r = RUN("optimize", "--search", "astar", "x.leir");
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "unknown --search 'astar'"));
  free(r.out);
  free(r.err);
  r = RUN("optimize", "--policy", "llm", "x.leir");
  ck_assert_int_eq(r.status, 2);
  free(r.out);
  free(r.err);
  r = RUN("optimize", "--vector-width", "0", "x.leir");
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "--vector-width takes 1..1024"));
  free(r.out);
  free(r.err);
  r = RUN("db", "frob", "--db", path_in("x.db"));
  ck_assert_int_eq(r.status, 2);
  free(r.out);
  free(r.err);
  const char *bad = path_in("bad.db");
  FILE *f = fopen(bad, "w");
  fputs("not a database at all, but text long enough for SQLite to read a header from", f);
  fclose(f);
  r = RUN("db", "export", "--db", bad);
  ck_assert_int_eq(r.status, 1);
  ck_assert_ptr_nonnull(strstr(r.err, "leir db: error:"));
  free(r.out);
  free(r.err);
}
END_TEST

/* --lookahead and its budgets reach the search: the summary counts the
 * lookaheads and their model evaluations (within --lookahead-evals); a bad
 * value is a usage error. */
START_TEST(test_optimize_lookahead) {
  char prog[256];
  snprintf(prog, sizeof prog, "%s", path_in("mm8.leir"));
  FILE *f = fopen(prog, "w");
  fputs("L^{8}_{a=0}L^{8}_{c=0}L^{8}_{d=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*"
        "C^{f32,g}_{d,c};];\n", f);
  fclose(f);
  run_result r = RUN("optimize", "--backend", "interp", "--samples", "1", "--rounds", "3",
                     "--max-rounds", "6", "--compare-time", "1", "--no-db", "--no-final-compare",
                     "--lookahead", "3", "--lookahead-width", "4", "--lookahead-evals", "700",
                     "--lookahead-time", "10", "--json", prog);
  ck_assert_msg(r.status == 0, "%s", r.err);
  const char *sum = strstr(r.out, "{\"summary\":");
  ck_assert_ptr_nonnull(sum);
  const char *la = strstr(sum, "\"lookaheads\":");
  const char *ev = strstr(sum, "\"lookahead_evals\":");
  ck_assert_ptr_nonnull(la);
  ck_assert_ptr_nonnull(ev);
  long nla = strtol(la + 13, NULL, 10), nev = strtol(ev + 18, NULL, 10);
  ck_assert_int_ge(nla, 1);
  ck_assert_int_gt(nev, 0);
  ck_assert_int_le(nev, 700 * nla);
  free(r.out);
  free(r.err);
  r = RUN("optimize", "--backend", "interp", "--samples", "1", "--rounds", "3", "--max-rounds",
          "6", "--compare-time", "1", "--no-db", "--no-final-compare", "--quiet", "--lookahead",
          "2", "--lookahead-evals", "300", prog);
  ck_assert_msg(r.status == 0, "%s", r.err);
  ck_assert_ptr_nonnull(strstr(r.out, "cost-model evaluations"));
  free(r.out);
  free(r.err);
  r = RUN("optimize", "--lookahead", "-1", prog);
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "--lookahead needs a count"));
  free(r.out);
  free(r.err);
  r = RUN("optimize", "--lookahead-time", "x", prog);
  ck_assert_int_eq(r.status, 2);
  free(r.out);
  free(r.err);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("search_tool");
  TCase *t = tcase_create("tool");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, test_optimize_json_out_plot_and_db_reuse);
  tcase_add_test(t, test_optimize_usage_errors);
  tcase_add_test(t, test_optimize_lookahead);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return test_run_suite(suite()); }
