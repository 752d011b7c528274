/* `leir benchmark` and `leir db merge` end to end (the tool from
 * $LEIR_TOOL): every algorithm over a program set with a tiny budget on the
 * interpreter, records and summary, resuming (a recorded run is skipped, a
 * half-written record is run again), the LLM policy through a command,
 * config errors; merging measurement databases: duplicates, conflicts (the
 * earlier measurement kept, whatever the order), invalid rows, foreign
 * files refused. A few seconds in all, no compiler needed. */
#include <fcntl.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#define LEIR_EXPERIMENTAL
#include "leir/experimental/search.h"
#include "testutil.h"

extern char **environ;

static char tmpdir[128];

typedef test_tool_result run_result;

static const char *path_in(const char *name) {
  static char p[8][256];
  static int slot;
  char *s = p[slot++ % 8];
  snprintf(s, 256, "%s/%s", tmpdir, name);
  return s;
}

static run_result run(const char *const *args) { return test_run_tool(tmpdir, args); }

#define RUN(...) run((const char *const[]){__VA_ARGS__, NULL})

static void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/leir-test-benchmark-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  ck_assert_int_eq(system(cmd), 0);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

static size_t count_lines(const char *s, const char *needle) {
  size_t n = 0;
  for (const char *l = s; l && *l;) {
    const char *nl = strchr(l, '\n');
    size_t len = nl ? (size_t)(nl - l) : strlen(l);
    char *line = strndup(l, len);
    if (strstr(line, needle)) n++;
    free(line);
    if (!nl) break;
    l = nl + 1;
  }
  return n;
}

static char *read_in(const char *name) {
  size_t len;
  char *s = test_read_file(path_in(name), &len);
  ck_assert_msg(s != NULL, "cannot read %s", name);
  return s;
}

/* The trajectory of a run: DIR/trajectories/<id with '_' for '/'>-<hash>~ALGO.jsonl. */
static char *read_trajectory(const char *dir, const char *prefix, const char *algo) {
  char d[300];
  snprintf(d, sizeof d, "%s/trajectories", path_in(dir));
  DIR *h = opendir(d);
  ck_assert_ptr_nonnull(h);
  struct dirent *e;
  char *found = NULL;
  char suffix[64];
  snprintf(suffix, sizeof suffix, "~%s.jsonl", algo);
  while ((e = readdir(h))) {
    size_t n = strlen(e->d_name), m = strlen(suffix);
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && n > m &&
        strcmp(e->d_name + n - m, suffix) == 0) {
      char p[600];
      snprintf(p, sizeof p, "%s/%s", d, e->d_name);
      size_t len;
      found = test_read_file(p, &len);
    }
  }
  closedir(h);
  ck_assert_msg(found != NULL, "no trajectory %s*%s in %s", prefix, suffix, d);
  return found;
}

/* A directory of two programs and a catalogue workload, at a budget of one
 * sample on the interpreter with short comparisons. */
static const char *write_config(const char *extra) {
  mkdir(path_in("progs"), 0755);
  write_text(path_in("progs/mm.leir"),
             "L^{6}_{a=0}L^{6}_{c=0}L^{6}_{d=0}[D^{f64,g}_{a,c}=D^{f64,g}_{a,c}+A^{f64,g}_{a,d}*"
             "C^{f64,g}_{d,c};];\n");
  write_text(path_in("progs/rowsum.leir"),
             "B^{4}_{tx=0}L^{6}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a};];\n");
  write_text(path_in("progs/notes.txt"), "not a program: ignored in a directory\n");
  char text[2048];
  snprintf(text, sizeof text,
           "name: tiny\n"
           "programs:\n"
           "  files: [progs]\n"
           "  workloads: [level1/ReLU]\n"
           "  shape: small\n"
           "budget: {samples: 1, depth: 2}\n"
           "measure: {backend: interp, rounds: 3, max_rounds: 3, time: 1, sets: 1}\n%s",
           extra ? extra : "");
  static char cfg[256];
  snprintf(cfg, sizeof cfg, "%s", path_in("tiny.yaml"));
  write_text(cfg, text);
  return cfg;
}

/* Every algorithm runs on every program: one record each, a summary per
 * algorithm; a second run skips them all; a record cut in half (a killed
 * process) is run again and nothing else. */
START_TEST(test_benchmark_runs_every_algorithm_and_resumes) {
  const char *cfg = write_config(NULL);
  char out[256];
  snprintf(out, sizeof out, "%s", path_in("out"));
  run_result r = RUN("benchmark", cfg, "--out", out);
  ck_assert_msg(r.status == 0, "%s\n%s", r.out, r.err);
  ck_assert_ptr_nonnull(strstr(r.out, "3 programs x 6 algorithms"));
  test_tool_result_free(&r);
  char *runs = read_in("out/runs.jsonl");
  ck_assert_uint_eq(count_lines(runs, "{\"program\":"), 18);
  const char *algos[] = {"greedy", "beam", "bfs", "dfs", "mcts", "chain"};
  const char *progs[] = {"level1/ReLU", "progs/mm.leir", "progs/rowsum.leir"};
  for (int a = 0; a < 6; a++)
    for (int p = 0; p < 3; p++) {
      char want[128];
      snprintf(want, sizeof want, "{\"program\":\"%s\",\"algorithm\":\"%s\",", progs[p], algos[a]);
      ck_assert_msg(count_lines(runs, want) == 1, "%s", want);
    }
  ck_assert_uint_eq(count_lines(runs, "\"status\":\"ok\""), 18);
  ck_assert_uint_eq(count_lines(runs, "\"samples\":1,"), 18);
  char *sum = read_in("out/summary.json");
  ck_assert_ptr_nonnull(strstr(sum, "\"programs\":3,\"runs\":18,\"done\":18,\"complete\":true"));
  for (int a = 0; a < 6; a++) {
    char want[64];
    snprintf(want, sizeof want, "\"%s\":{\"runs\":3,\"ok\":3,\"errors\":0,", algos[a]);
    ck_assert_msg(strstr(sum, want) != NULL, "%s in %s", want, sum);
  }
  free(sum);
  char *md = read_in("out/summary.md");
  ck_assert_ptr_nonnull(strstr(md, "| mcts | 3 | 3 |"));
  ck_assert_ptr_nonnull(strstr(md, "| progs/rowsum.leir |"));
  free(md);
  /* trajectories: one line per evaluated proposal; the merged database */
  char *traj = read_trajectory("out", "level1_ReLU-", "beam");
  ck_assert_uint_eq(count_lines(traj, "{\"sample\":1,"), 1);
  free(traj);
  leir_db *db = NULL;
  ck_assert_int_eq(leir_db_open(&db, path_in("out/measurements.db")), LEIR_OK);
  uint64_t n = 0;
  ck_assert_int_eq(leir_db_count(db, &n), LEIR_OK);
  ck_assert_uint_ge(n, 1);
  leir_db_free(db);

  /* again: everything already recorded */
  r = RUN("benchmark", cfg, "--out", out);
  ck_assert_msg(r.status == 0, "%s", r.err);
  ck_assert_ptr_nonnull(strstr(r.out, "18 runs already recorded"));
  ck_assert_ptr_null(strstr(r.out, "[1/18]"));
  test_tool_result_free(&r);

  /* the last record half written, as by kill -9 during the write */
  size_t len = strlen(runs);
  FILE *f = fopen(path_in("out/runs.jsonl"), "w");
  fwrite(runs, 1, len - 40, f);
  fclose(f);
  r = RUN("benchmark", cfg, "--out", out, "--json");
  ck_assert_msg(r.status == 0, "%s", r.err);
  ck_assert_uint_eq(count_lines(r.out, "{\"program\":"), 1);
  test_tool_result_free(&r);
  char *again = read_in("out/runs.jsonl");
  ck_assert_uint_eq(count_lines(again, "{\"program\":"), 18);
  ck_assert_uint_eq(count_lines(again, "\"status\":\"ok\""), 18);
  free(again);
  free(runs);

  /* --list: the pairs a Ray driver runs one by one with --only/--algorithms */
  r = RUN("benchmark", cfg, "--list", "--algorithms", "dfs,chain");
  ck_assert_msg(r.status == 0, "%s", r.err);
  ck_assert_uint_eq(count_lines(r.out, "{\"program\":"), 6);
  ck_assert_ptr_nonnull(strstr(r.out, "{\"program\":\"progs/mm.leir\",\"algorithm\":\"chain\"}"));
  test_tool_result_free(&r);
}
END_TEST

/* --only and --algorithms run one pair into another directory; the LLM
 * policy through --llm-command (a model that never answers usefully:
 * every proposal rejected, the run still recorded with policy llm). */
START_TEST(test_benchmark_one_pair_with_a_command_model) {
  const char *cfg = write_config(NULL);
  const char *model = "while read line; do echo '{\"content\":\"I cannot help with that.\"}'; done";
  run_result r = RUN("benchmark", cfg, "--out", path_in("one"), "--only", "progs/mm.leir",
                     "--algorithms", "greedy", "--llm-command", model, "--json");
  ck_assert_msg(r.status == 0, "%s\n%s", r.out, r.err);
  ck_assert_uint_eq(count_lines(r.out, "{\"program\":\"progs/mm.leir\",\"algorithm\":\"greedy\","
                                       "\"policy\":\"llm\",\"status\":\"ok\""), 1);
  test_tool_result_free(&r);
  char *traj = read_trajectory("one", "progs_mm.leir-", "greedy");
  ck_assert_msg(strstr(traj, "\"reject\":\"malformed\"") != NULL, "%s", traj);
  free(traj);
  char *sum = read_in("one/summary.json");
  ck_assert_ptr_nonnull(strstr(sum, "\"policy\":\"llm\""));
  /* the summary covers the config's programs, of which one has run */
  ck_assert_ptr_nonnull(strstr(sum, "\"programs\":3,\"runs\":3,\"done\":1,\"complete\":false"));
  free(sum);
}
END_TEST

START_TEST(test_benchmark_config_errors) {
  const char *cfg = write_config("budget: {samples: 1, seconds: 3}\n");
  run_result r = RUN("benchmark", cfg);
  ck_assert_int_eq(r.status, 1);
  ck_assert_msg(strstr(r.err, "unknown key 'budget.seconds'") != NULL, "%s", r.err);
  test_tool_result_free(&r);
  cfg = write_config("algorithms: [greedy, astar]\n");
  r = RUN("benchmark", cfg);
  ck_assert_int_eq(r.status, 1);
  ck_assert_ptr_nonnull(strstr(r.err, "unknown algorithm 'astar'"));
  test_tool_result_free(&r);
  cfg = write_config(NULL);
  r = RUN("benchmark", cfg, "--only", "level1/softmax");
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "is not a program of the config"));
  test_tool_result_free(&r);
  r = RUN("benchmark", cfg, "--algorithms", "beam,astar");
  ck_assert_int_eq(r.status, 2);
  test_tool_result_free(&r);
  write_text(path_in("bad.yaml"), "programs: {files: [progs/missing.leir]}\n");
  r = RUN("benchmark", path_in("bad.yaml"));
  ck_assert_int_eq(r.status, 1);
  ck_assert_ptr_nonnull(strstr(r.err, "no such program file or directory: progs/missing.leir"));
  test_tool_result_free(&r);
  write_text(path_in("broken.leir"), "L^{4}_{a=0}[C^{f64,g}_{a}=q;];\n");
  write_text(path_in("broken.yaml"), "programs: {files: [broken.leir]}\n");
  r = RUN("benchmark", path_in("broken.yaml"), "--backend", "interp");
  ck_assert_int_eq(r.status, 1);
  ck_assert_msg(strstr(r.err, "leir benchmark: error: broken.leir: ") != NULL, "%s", r.err);
  ck_assert_ptr_null(strstr(r.out, "[1/6]"));
  test_tool_result_free(&r);
  r = RUN("benchmark", path_in("absent.yaml"));
  ck_assert_int_eq(r.status, 1);
  test_tool_result_free(&r);
}
END_TEST

/* ---- leir db merge ------------------------------------------------------ */

static leir_db_row row(uint64_t program, double ratio, double created) {
  leir_db_row r = {.size = sizeof r};
  r.program_hash = program;
  r.baseline_hash = 0x1111;
  r.root_hash = 0x2222;
  r.backend = "interp";
  r.machine = "m";
  r.protocol = "p";
  r.verdict = LEIR_VERDICT_EQUAL;
  r.order = LEIR_ORDER_FASTER;
  r.ratio = ratio;
  r.ratio_lo = ratio * 0.9;
  r.ratio_hi = ratio * 1.1;
  r.median_s = 1e-3;
  r.q1_s = 0.9e-3;
  r.q3_s = 1.1e-3;
  r.baseline_median_s = 2e-3;
  r.rounds = 10;
  r.step = "loop_split nest=0 loop=a factor=2";
  r.program = "L^{2}_{a=0}[C^{f64,g}_{a}=1;];";
  r.message = "";
  r.created = created;
  return r;
}

static void put_rows(const char *path, const leir_db_row *rows, size_t n) {
  leir_db *db = NULL;
  ck_assert_int_eq(leir_db_open(&db, path), LEIR_OK);
  for (size_t i = 0; i < n; i++) ck_assert_int_eq(leir_db_put(db, &rows[i]), LEIR_OK);
  leir_db_free(db);
}

static double ratio_of(const char *path, uint64_t program) {
  leir_db *db = NULL;
  ck_assert_int_eq(leir_db_open(&db, path), LEIR_OK);
  leir_db_row key = row(program, 0, 0), got = {.size = sizeof got};
  leir_status st = leir_db_get(db, &key, &got);
  double v = st == LEIR_OK ? got.ratio : -1;
  leir_db_free(db);
  return v;
}

static void sql(const char *path, const char *text) {
  sqlite3 *h = NULL;
  ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
  char *err = NULL;
  ck_assert_msg(sqlite3_exec(h, text, NULL, NULL, &err) == SQLITE_OK, "%s", err ? err : "?");
  sqlite3_close(h);
}

/* Two workers measured keys 1 and 2 the same (duplicates), key 3 only in b,
 * key 4 differently (a conflict: the earlier measurement, b's, is kept in
 * both merge orders). */
START_TEST(test_db_merge_duplicates_and_conflicts) {
  leir_db_row a[] = {row(1, 2.0, 100), row(2, 3.0, 101), row(4, 5.0, 300)};
  leir_db_row b[] = {row(1, 2.0, 100), row(2, 3.0, 101), row(3, 4.0, 102), row(4, 7.0, 200)};
  put_rows(path_in("a.db"), a, 3);
  put_rows(path_in("b.db"), b, 4);
  run_result r = RUN("db", "merge", path_in("a.db"), path_in("b.db"), "--into", path_in("ab.db"),
                     "--json");
  ck_assert_msg(r.status == 0, "%s", r.err);
  ck_assert_ptr_nonnull(strstr(r.out, "\"rows\":3,\"added\":3,\"duplicates\":0,\"conflicts\":0"));
  ck_assert_ptr_nonnull(strstr(r.out, "\"rows\":4,\"added\":1,\"duplicates\":2,\"conflicts\":1,"
                                      "\"replaced\":1,\"invalid\":0"));
  ck_assert_ptr_nonnull(strstr(r.out, "\"count\":4}"));
  test_tool_result_free(&r);
  r = RUN("db", "merge", path_in("b.db"), path_in("a.db"), "--into", path_in("ba.db"));
  ck_assert_msg(r.status == 0, "%s", r.err);
  ck_assert_ptr_nonnull(strstr(r.out, "ba.db: 4 measurements"));
  test_tool_result_free(&r);
  ck_assert_double_eq(ratio_of(path_in("ab.db"), 4), 7.0);
  ck_assert_double_eq(ratio_of(path_in("ba.db"), 4), 7.0);
  ck_assert_double_eq(ratio_of(path_in("ab.db"), 3), 4.0);
  /* merging again changes nothing; --fail-on-conflict refuses a file with
   * a conflict and writes none of its rows */
  r = RUN("db", "merge", path_in("a.db"), "--into", path_in("ab.db"), "--json");
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "\"added\":0,\"duplicates\":2,\"conflicts\":1,\"replaced\":0"));
  test_tool_result_free(&r);
  leir_db_row c[] = {row(9, 1.5, 50), row(4, 6.0, 10)};
  put_rows(path_in("c.db"), c, 2);
  r = RUN("db", "merge", path_in("c.db"), "--into", path_in("ab.db"), "--fail-on-conflict");
  ck_assert_int_eq(r.status, 1);
  ck_assert_ptr_nonnull(strstr(r.err, "measured differently"));
  test_tool_result_free(&r);
  ck_assert_double_eq(ratio_of(path_in("ab.db"), 9), -1);
  ck_assert_double_eq(ratio_of(path_in("ab.db"), 4), 7.0);
}
END_TEST

/* Hostile rows are skipped and counted (refused whole with --strict); a
 * file that is not a measurement database is refused, and the other files
 * of the command are still merged. */
START_TEST(test_db_merge_validates_rows_and_refuses_foreign_files) {
  leir_db_row good[] = {row(1, 2.0, 100), row(2, 3.0, 100), row(3, 3.0, 100), row(5, 3.0, 100)};
  put_rows(path_in("h.db"), good, 4);
  sql(path_in("h.db"),
      "UPDATE measurements SET program_hash='zz' WHERE program_hash='0000000000000002';"
      "UPDATE measurements SET verdict='MAYBE' WHERE program_hash='0000000000000003';"
      "UPDATE measurements SET ratio_lo=9, ratio_hi=1 WHERE program_hash='0000000000000005';");
  run_result r = RUN("db", "merge", path_in("h.db"), "--into", path_in("o.db"), "--json");
  ck_assert_msg(r.status == 0, "%s", r.err);
  ck_assert_ptr_nonnull(strstr(r.out, "\"rows\":4,\"added\":1,\"duplicates\":0,\"conflicts\":0,"
                                      "\"replaced\":0,\"invalid\":3"));
  test_tool_result_free(&r);
  r = RUN("db", "merge", path_in("h.db"), "--into", path_in("strict.db"), "--strict");
  ck_assert_int_eq(r.status, 1);
  ck_assert_ptr_nonnull(strstr(r.err, "a hash is not 16 lowercase hex digits"));
  test_tool_result_free(&r);
  ck_assert_double_eq(ratio_of(path_in("strict.db"), 1), -1);

  write_text(path_in("text.db"), "not a database at all, but text long enough for SQLite to read");
  sql(path_in("other.db"), "CREATE TABLE measurements(x); INSERT INTO measurements VALUES (1);");
  sql(path_in("future.db"), "CREATE TABLE leir_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                            "INSERT INTO leir_meta VALUES ('schema', '99');");
  leir_db_row g[] = {row(7, 2.0, 100)};
  put_rows(path_in("g.db"), g, 1);
  r = RUN("db", "merge", path_in("text.db"), path_in("other.db"), path_in("future.db"),
          path_in("g.db"), path_in("missing.db"), "--into", path_in("f.db"));
  ck_assert_int_eq(r.status, 1);
  ck_assert_uint_eq(count_lines(r.err, "leir db merge: error:"), 4);
  ck_assert_ptr_nonnull(strstr(r.err, "not a leir measurement database"));
  ck_assert_ptr_nonnull(strstr(r.err, "schema 99"));
  ck_assert_ptr_nonnull(strstr(r.out, "f.db: 1 measurements"));
  test_tool_result_free(&r);
  ck_assert_double_eq(ratio_of(path_in("f.db"), 7), 2.0);
  r = RUN("db", "merge", path_in("g.db"));
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "--into"));
  test_tool_result_free(&r);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("benchmark");
  TCase *t = tcase_create("tool");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 300);
  tcase_add_test(t, test_benchmark_runs_every_algorithm_and_resumes);
  tcase_add_test(t, test_benchmark_one_pair_with_a_command_model);
  tcase_add_test(t, test_benchmark_config_errors);
  tcase_add_test(t, test_db_merge_duplicates_and_conflicts);
  tcase_add_test(t, test_db_merge_validates_rows_and_refuses_foreign_files);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return test_run_suite(suite()); }
