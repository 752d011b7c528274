/*
 * The `leir` tool, run as a program (design.md, "The leir tool"): exit
 * codes 0/1/2, FILE:LINE:COL: error: diagnostics on stderr, --lines batch
 * mode, --json, help and --version.
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

extern char **environ;

typedef struct run_result {
  int status; /* exit code */
  char *out;  /* stdout, NUL-terminated */
  char *err;  /* stderr */
} run_result;

static char tmpdir[64];

static void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/leir-tool-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", tmpdir);
}

/* Writes `text` to a file in the test directory; returns its path (static). */
static const char *write_file(const char *name, const char *text) {
  static char path[4][256];
  static int slot;
  char *p = path[slot++ % 4];
  snprintf(p, 256, "%s/%s", tmpdir, name);
  FILE *f = fopen(p, "wb");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
  return p;
}

static char *slurp(const char *path) {
  size_t len;
  return test_read_file(path, &len);
}

/* Runs the tool with argv (NULL-terminated, without argv[0]); `input` goes
 * to standard input (NULL: empty). */
static run_result run(const char *input, const char *const *args) {
  const char *tool = getenv("LEIR_TOOL");
  ck_assert_msg(tool != NULL, "LEIR_TOOL is not set");
  char in[256], out[256], err[256];
  snprintf(in, sizeof in, "%s/stdin", tmpdir);
  snprintf(out, sizeof out, "%s/stdout", tmpdir);
  snprintf(err, sizeof err, "%s/stderr", tmpdir);
  FILE *f = fopen(in, "wb");
  if (input) fputs(input, f);
  fclose(f);
  const char *argv[32] = {tool};
  size_t n = 1;
  for (const char *const *a = args; *a; a++) argv[n++] = *a;
  argv[n] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, in, O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  ck_assert_int_eq(posix_spawn(&pid, tool, &fa, NULL, (char *const *)argv, environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  int ws;
  ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
  ck_assert_msg(WIFEXITED(ws), "the tool died (signal %d)", WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
  run_result r = {WEXITSTATUS(ws), slurp(out), slurp(err)};
  return r;
}

static void done(run_result *r) {
  free(r->out);
  free(r->err);
}

#define RUN(input, ...) run(input, (const char *const[]){__VA_ARGS__, NULL})

static const char *const relu =
    "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=max(A^{f64,g}_{tx,a},0);];";

/* ---- general -------------------------------------------------------------- */

START_TEST(test_version_and_help) {
  run_result r = RUN(NULL, "--version");
  ck_assert_int_eq(r.status, 0);
  char want[64];
  snprintf(want, sizeof want, "leir %s (LEIR language %d)\n", LEIR_VERSION_STRING, LEIR_LANGUAGE_VERSION);
  ck_assert_str_eq(r.out, want);
  done(&r);
  r = RUN(NULL, "--help");
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "usage: leir COMMAND"));
  ck_assert_ptr_nonnull(strstr(r.out, "  leir fmt "));
  ck_assert_ptr_nonnull(strstr(r.out, "  leir check "));
  ck_assert_ptr_nonnull(strstr(r.out, "  leir hash "));
  ck_assert_ptr_nonnull(strstr(r.out, "Exit status: 0 success, 1 invalid input"));
  ck_assert_str_eq(r.err, "");
  done(&r);
  static const char *const cmds[] = {"fmt", "check", "hash"};
  for (size_t i = 0; i < 3; i++) {
    r = RUN(NULL, "help", cmds[i]);
    ck_assert_int_eq(r.status, 0);
    char usage[64];
    snprintf(usage, sizeof usage, "usage: leir %s ", cmds[i]);
    ck_assert_ptr_eq(strstr(r.out, usage), r.out);
    done(&r);
    /* "leir CMD --help" is the same text */
    run_result h = RUN(NULL, cmds[i], "--help");
    r = RUN(NULL, "help", cmds[i]);
    ck_assert_int_eq(h.status, 0);
    ck_assert_str_eq(h.out, r.out);
    done(&h);
    done(&r);
  }
}
END_TEST

START_TEST(test_usage_errors_exit_2) {
  run_result r = run(NULL, (const char *const[]){NULL});
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "usage: leir"));
  done(&r);
  r = RUN(NULL, "frobnicate");
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "leir: unknown command 'frobnicate'"));
  done(&r);
  r = RUN(NULL, "help", "frobnicate");
  ck_assert_int_eq(r.status, 2);
  done(&r);
  r = RUN(NULL, "fmt", "--frobnicate", "-");
  ck_assert_int_eq(r.status, 2);
  ck_assert_str_eq(r.err, "leir fmt: unknown option --frobnicate\n(see 'leir help fmt')\n");
  done(&r);
  r = RUN(NULL, "check");
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "expected one input"));
  done(&r);
  r = RUN(NULL, "hash", "a", "b");
  ck_assert_int_eq(r.status, 2);
  done(&r);
  r = RUN(NULL, "fmt", "--pretty", "--yaml", "-");
  ck_assert_int_eq(r.status, 2);
  done(&r);
  r = RUN(NULL, "check", "--input", "A:f99:2", "-");
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "unknown dtype 'f99'"));
  done(&r);
  r = RUN(NULL, "check", "--input");
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "option --input needs a value"));
  done(&r);
  r = RUN(NULL, "check", "--output", "C:f64:2x0", "-");
  ck_assert_int_eq(r.status, 2);
  done(&r);
}
END_TEST

START_TEST(test_unreadable_input_exits_1) {
  char path[300];
  snprintf(path, sizeof path, "%s/missing.leir", tmpdir);
  run_result r = RUN(NULL, "fmt", path);
  ck_assert_int_eq(r.status, 1);
  char want[400];
  snprintf(want, sizeof want, "%s: error: cannot open", path);
  ck_assert_ptr_eq(strstr(r.err, want), r.err);
  done(&r);
}
END_TEST

/* ---- fmt ---------------------------------------------------------------- */

START_TEST(test_fmt) {
  /* lenient by default: whitespace and one nest per line */
  const char *path = write_file("relu.leir", "B^{2}_{tx=0} L^{8}_{a=0}\n  [C^{f64,g}_{tx,a}=max(A^{f64,g}_{tx,a},0);];\n");
  run_result r = RUN(NULL, "fmt", path);
  ck_assert_int_eq(r.status, 0);
  char want[256];
  snprintf(want, sizeof want, "%s\n", relu);
  ck_assert_str_eq(r.out, want);
  ck_assert_str_eq(r.err, "");
  done(&r);
  /* strict: whitespace is an error at its position */
  r = RUN(NULL, "fmt", "--strict", path);
  ck_assert_int_eq(r.status, 1);
  ck_assert_str_eq(r.out, "");
  char err[512];
  snprintf(err, sizeof err,
           "%s:1:13: error: expected a loop header or '[', found whitespace (allowed only in "
           "lenient mode) [parse.expected]\n",
           path);
  ck_assert_str_eq(r.err, err);
  done(&r);
  /* stdin */
  r = RUN(relu, "fmt", "-");
  ck_assert_int_eq(r.status, 0);
  ck_assert_str_eq(r.out, want);
  done(&r);
  /* a malformed program: FILE:LINE:COL: error: on line 2 of the file */
  path = write_file("bad.leir", "B^{2}_{tx=0}[C^{f64,g}_{tx}=1;];\nL^{4}_{a=1}[D^{f64,g}_{a}=2;];\n");
  r = RUN(NULL, "fmt", path);
  ck_assert_int_eq(r.status, 1);
  snprintf(err, sizeof err, "%s:2:10: error: a loop must start at 0 (found '1') [parse.loop-start]\n", path);
  ck_assert_str_eq(r.err, err);
  ck_assert_str_eq(r.out, "");
  done(&r);
  r = RUN("B^{2}_{tx=0}[C^{f64,g}_{tx}=1;]", "fmt", "-");
  ck_assert_int_eq(r.status, 1);
  ck_assert_ptr_eq(strstr(r.err, "<stdin>:1:32: error: expected ';' after ']'"), r.err);
  done(&r);
}
END_TEST

START_TEST(test_fmt_pretty_and_yaml) {
  const char *src =
      "B^{2}_{tx=0}[D^{f64,g}_{tx}=0;L^{8}_{a=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+A^{f64,g}_{tx,a};];];"
      "B^{2}_{tx=0}[C^{f64,g}_{tx}=D^{f64,g}_{tx};];";
  run_result r = RUN(src, "fmt", "--pretty", "-");
  ck_assert_int_eq(r.status, 0);
  ck_assert_str_eq(r.out,
                   "B^{2}_{tx=0}[\n"
                   "  D^{f64,g}_{tx}=0;\n"
                   "  L^{8}_{a=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+A^{f64,g}_{tx,a};];\n"
                   "];\n"
                   "B^{2}_{tx=0}[C^{f64,g}_{tx}=D^{f64,g}_{tx};];\n");
  /* pretty output is valid input */
  run_result back = RUN(r.out, "fmt", "-");
  ck_assert_int_eq(back.status, 0);
  char want[512];
  snprintf(want, sizeof want, "%s\n", src);
  ck_assert_str_eq(back.out, want);
  done(&back);
  done(&r);
  /* a program file with the inferred signature; it reads back */
  r = RUN(src, "fmt", "--yaml", "-");
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_eq(strstr(r.out, "inputs:\n  A: {dtype: f64, shape: [2, 8]}\noutputs:\n  C: {dtype: f64, shape: [2]}\nleir: |-\n"), r.out);
  const char *yaml = write_file("sum.leir.yaml", r.out);
  done(&r);
  r = RUN(NULL, "fmt", yaml);
  ck_assert_int_eq(r.status, 0);
  ck_assert_str_eq(r.out, want);
  done(&r);
  /* a signature from the command line */
  r = RUN(src, "fmt", "--yaml", "--input", "A:f64:2x8", "--output", "C:f64:2", "-");
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "A: {dtype: f64, shape: [2, 8]}"));
  done(&r);
}
END_TEST

/* ---- batches -------------------------------------------------------------- */

static const char *const batch =
    "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=max(A^{f64,g}_{tx,a},0);];\n"
    "B^{2}_{tx=0}[C^{f64,g}_{tx}=1;]\n"
    "\n"
    "B^{2}_{tx=0}[C^{f64,g}_{tx}=q;];\r\n";

START_TEST(test_lines_mode) {
  const char *path = write_file("batch.txt", batch);
  run_result r = RUN(NULL, "fmt", "--lines", path);
  ck_assert_int_eq(r.status, 1);
  ck_assert_str_eq(r.out,
                   "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=max(A^{f64,g}_{tx,a},0);];\n"
                   "B^{2}_{tx=0}[C^{f64,g}_{tx}=q;];\n");
  char err[512];
  snprintf(err, sizeof err,
           "%s:2:32: error: expected ';' after ']' (a nest ends with \"];\"; to nest a loop, put it "
           "inside the brackets) [parse.expected]\n",
           path);
  ck_assert_str_eq(r.err, err);
  done(&r);
  r = RUN(batch, "check", "--lines", "-");
  ck_assert_int_eq(r.status, 1);
  ck_assert_str_eq(r.out, "");
  ck_assert_ptr_nonnull(strstr(r.err, "<stdin>:2:32: error: expected ';' after ']'"));
  ck_assert_ptr_nonnull(strstr(r.err, "<stdin>:4:29: error: 'q' is not a loop variable of an enclosing loop [check.unknown-var]\n"));
  done(&r);
  /* every line valid: exit 0 */
  r = RUN("[C^{f64,g}=1;];\n[D^{f64,g}=2;];\n", "check", "--lines", "-");
  ck_assert_int_eq(r.status, 0);
  ck_assert_str_eq(r.err, "");
  done(&r);
}
END_TEST

START_TEST(test_json_output) {
  run_result r = RUN(batch, "fmt", "--lines", "--json", "-");
  ck_assert_int_eq(r.status, 1);
  ck_assert_str_eq(r.err, "");
  /* one valid JSON object per result line */
  char *save = NULL;
  int n = 0;
  for (char *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
    char msg[128];
    jsonl_value *v = jsonl_parse(line, strlen(line), msg, sizeof msg);
    ck_assert_msg(v != NULL, "%s: %s", line, msg);
    static const int64_t lines[] = {1, 2, 4};
    ck_assert_int_eq(jsonl_int(jsonl_get(v, "line"), 0), lines[n]);
    if (n == 1) {
      const jsonl_value *e = jsonl_get(v, "error");
      ck_assert_str_eq(jsonl_str(jsonl_get(e, "status")), "LEIR_ERR_PARSE");
      ck_assert_str_eq(jsonl_str(jsonl_get(e, "rule")), "parse.expected");
      ck_assert_int_eq(jsonl_int(jsonl_get(e, "line"), 0), 2);
      ck_assert_int_eq(jsonl_int(jsonl_get(e, "column"), 0), 32);
    } else {
      ck_assert_ptr_nonnull(jsonl_str(jsonl_get(v, "leir")));
    }
    jsonl_free(v);
  }
  ck_assert_int_eq(n, 3);
  done(&r);
  r = RUN(batch, "check", "--lines", "--json", "-");
  ck_assert_int_eq(r.status, 1);
  char *first = strtok_r(r.out, "\n", &save);
  ck_assert_str_eq(first, "{\"line\":1,\"valid\":true,\"diagnostics\":[]}");
  char *second = strtok_r(NULL, "\n", &save);
  ck_assert_ptr_nonnull(strstr(second, "\"valid\":false"));
  char *third = strtok_r(NULL, "\n", &save);
  ck_assert_str_eq(third,
                   "{\"line\":4,\"valid\":false,\"diagnostics\":[{\"rule\":\"check.unknown-var\","
                   "\"subject\":\"q\",\"line\":4,\"column\":29,\"message\":\"'q' is not a loop "
                   "variable of an enclosing loop\"}]}");
  done(&r);
  r = RUN(relu, "hash", "--json", "-");
  ck_assert_int_eq(r.status, 0);
  char want[64];
  snprintf(want, sizeof want, "{\"line\":0,\"hash\":\"%016llx\"}\n",
           (unsigned long long)XXH3_64bits(relu, strlen(relu)));
  ck_assert_str_eq(r.out, want);
  done(&r);
}
END_TEST

/* ---- check and hash --------------------------------------------------------- */

START_TEST(test_check) {
  run_result r = RUN(relu, "check", "-");
  ck_assert_int_eq(r.status, 0);
  ck_assert_str_eq(r.out, "");
  ck_assert_str_eq(r.err, "");
  done(&r);
  r = RUN(relu, "check", "--input", "A:f64:2x8", "--output", "C:f64:2x8", "-");
  ck_assert_int_eq(r.status, 0);
  done(&r);
  r = RUN(relu, "check", "--input", "A:f64:2x4", "--output", "C:f64:2x8", "-");
  ck_assert_int_eq(r.status, 1);
  ck_assert_str_eq(r.err,
                   "<stdin>:1:60: error: subscript 2 of A ranges over [0, 7] but the dimension has "
                   "extent 4 [check.bounds]\n");
  done(&r);
  /* several findings, in order */
  const char *path = write_file("two.leir", "B^{1}_{tx=0}[C^{f64,g}=q;];\nB^{1}_{tx=0}[D^{f64,g}=z;];\n");
  r = RUN(NULL, "check", path);
  ck_assert_int_eq(r.status, 1);
  char err[512];
  snprintf(err, sizeof err,
           "%s:1:24: error: 'q' is not a loop variable of an enclosing loop [check.unknown-var]\n"
           "%s:2:24: error: 'z' is not a loop variable of an enclosing loop [check.unknown-var]\n",
           path, path);
  ck_assert_str_eq(r.err, err);
  done(&r);
  /* a finding without a position */
  r = RUN(relu, "check", "--input", "A:f64:2x8", "--output", "C:f64:2x8", "--output", "D:f64:2", "-");
  ck_assert_int_eq(r.status, 1);
  ck_assert_str_eq(r.err, "<stdin>: error: output D is never written [check.output]\n");
  done(&r);
}
END_TEST

START_TEST(test_hash) {
  char want[64];
  snprintf(want, sizeof want, "%016llx\n", (unsigned long long)XXH3_64bits(relu, strlen(relu)));
  run_result r = RUN(relu, "hash", "-");
  ck_assert_int_eq(r.status, 0);
  ck_assert_str_eq(r.out, want);
  done(&r);
  /* whitespace does not matter; fresh names do only without --alpha */
  r = RUN("B^{2}_{tx=0}\nL^{8}_{a=0} [ C^{f64,g}_{tx,a} = max(A^{f64,g}_{tx,a},0); ];", "hash", "-");
  ck_assert_str_eq(r.out, want);
  done(&r);
  run_result a = RUN(relu, "hash", "--alpha", "-");
  run_result b = RUN("B^{2}_{tx=0}L^{8}_{c=0}[C^{f64,g}_{tx,c}=max(A^{f64,g}_{tx,c},0);];", "hash", "--alpha", "-");
  ck_assert_int_eq(a.status, 0);
  ck_assert_uint_eq(strlen(a.out), 17);
  ck_assert_str_eq(a.out, b.out);
  ck_assert_str_ne(a.out, want);
  done(&a);
  done(&b);
  r = RUN("B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=max(A^{f64,g}_{tx,a},0);]", "hash", "-");
  ck_assert_int_eq(r.status, 1);
  ck_assert_str_eq(r.out, "");
  done(&r);
}
END_TEST

START_TEST(test_hostile_input_to_the_tool) {
  /* NUL bytes, binary junk, a long line: clean errors, never a crash */
  char junk[4096];
  for (size_t i = 0; i < sizeof junk - 1; i++) junk[i] = (char)(1 + (i * 7919) % 254);
  junk[sizeof junk - 1] = '\0';
  static const char *const cmds[] = {"fmt", "check", "hash"};
  for (size_t i = 0; i < 3; i++) {
    run_result r = RUN(junk, cmds[i], "-");
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_eq(strstr(r.err, "<stdin>:"), r.err);
    done(&r);
    r = RUN(junk, cmds[i], "--lines", "--json", "-");
    ck_assert_int_eq(r.status, 1);
    done(&r);
  }
  const char *path = write_file("nul.leir", "");
  FILE *f = fopen(path, "wb");
  fwrite("[C^{f64,g}=1;\0];", 1, 16, f);
  fclose(f);
  run_result r = RUN(NULL, "fmt", path);
  ck_assert_int_eq(r.status, 1);
  ck_assert_ptr_nonnull(strstr(r.err, ":1:14: error: expected an equation (a tensor on the left) or a loop header, found a NUL byte"));
  done(&r);
}
END_TEST


/* ---- issue 17: JSON errors, strategy names, -V, lower's options, dirs ---- */

/* Parses the single line of `out` as {"line":N,"error":{...}} and returns
 * the error object's status (static copy). */
static const char *json_error_status(const char *out, char *rule, size_t rule_cap) {
  static char status[64];
  size_t n = strlen(out);
  ck_assert_msg(n > 0 && out[n - 1] == '\n' && strchr(out, '\n') == out + n - 1,
                "expected one JSON line, got '%s'", out);
  char msg[128];
  jsonl_value *v = jsonl_parse(out, n - 1, msg, sizeof msg);
  ck_assert_msg(v != NULL, "%s: %s", out, msg);
  const jsonl_value *e = jsonl_get(v, "error");
  ck_assert_ptr_nonnull(e);
  ck_assert_ptr_nonnull(jsonl_str(jsonl_get(e, "message")));
  snprintf(status, sizeof status, "%s", jsonl_str(jsonl_get(e, "status")));
  if (rule) snprintf(rule, rule_cap, "%s", jsonl_str(jsonl_get(e, "rule")));
  jsonl_free(v);
  return status;
}

START_TEST(test_json_errors_in_every_strategy_command) {
  const char *bad = write_file("bad.leir", "B^{2}_{tx=0}[C^{f64,g}_{tx}=1;]L^{2}_{a=0}[C^{f64,g}_{a}=2;];");
  const char *const cmds[][4] = {
      {"candidates", "--json", bad, NULL},
      {"apply", "loop_split nest=0 loop=a factor=2", "--json", bad},
      {"explain", "loop_split", "--json", bad},
      {"fmt", "--json", bad, NULL},
      {"hash", "--json", bad, NULL},
  };
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    run_result r = cmds[i][3] ? RUN(NULL, cmds[i][0], cmds[i][1], cmds[i][2], cmds[i][3])
                              : RUN(NULL, cmds[i][0], cmds[i][1], cmds[i][2]);
    ck_assert_msg(r.status == 1, "%s: exit %d", cmds[i][0], r.status);
    ck_assert_str_eq(r.err, "");
    char rule[64];
    ck_assert_str_eq(json_error_status(r.out, rule, sizeof rule), "LEIR_ERR_PARSE");
    ck_assert_str_eq(rule, "parse.expected");
    done(&r);
  }
  /* --lines: the object carries the batch line */
  run_result r = RUN("B^{2}_{tx=0}[C^{f64,g}_{tx}=1;];\nB^{2}_{tx=0}[C^{f64,g}_{tx}=1;]x\n",
                     "candidates", "--lines", "--json", "--no-result", "-");
  ck_assert_int_eq(r.status, 1);
  ck_assert_ptr_nonnull(
      strstr(r.out, "{\"line\":2,\"file\":\"<stdin>\",\"error\":{\"status\":\"LEIR_ERR_PARSE\""));
  done(&r);
  /* a program that parses but fails its checks */
  const char *rl = write_file("relu.leir", relu);
  r = RUN(NULL, "candidates", "--json", "--input", "A:f64:2x4", "--output", "C:f64:2x8", rl);
  ck_assert_int_eq(r.status, 1);
  ck_assert_str_eq(json_error_status(r.out, NULL, 0), "LEIR_ERR_INVALID");
  done(&r);
  /* usage errors and unreadable inputs too */
  r = RUN(NULL, "candidates", "--json", "--frobnicate", bad);
  ck_assert_int_eq(r.status, 2);
  char rule[64];
  ck_assert_str_eq(json_error_status(r.out, rule, sizeof rule), "LEIR_ERR_ARGUMENT");
  ck_assert_str_eq(rule, "usage");
  done(&r);
  r = RUN(NULL, "apply", "--json", "loop_split nest=0 loop=a factor=2", tmpdir);
  ck_assert_int_eq(r.status, 1);
  ck_assert_str_eq(json_error_status(r.out, rule, sizeof rule), "LEIR_ERR_IO");
  done(&r);
}
END_TEST

START_TEST(test_unknown_strategy_exits_2_everywhere) {
  const char *p = write_file("relu.leir", relu);
  run_result r = RUN(NULL, "candidates", "--strategy", "loop_tilling", p);
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "did you mean 'loop_tiling'"));
  done(&r);
  r = RUN(NULL, "explain", "loop_tilling", p);
  ck_assert_int_eq(r.status, 2);
  done(&r);
  r = RUN(NULL, "apply", "loop_tilling nest=0 loops=tx factors=2", p);
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "leir apply: unknown strategy 'loop_tilling'"));
  done(&r);
  r = RUN(NULL, "apply", "{\"strategy\":\"nope\"}", p);
  ck_assert_int_eq(r.status, 2);
  done(&r);
  r = RUN(NULL, "ground", "--strategy", "loop_tilling", p, p);
  ck_assert_int_eq(r.status, 2);
  done(&r);
  r = RUN(NULL, "explain", "--json", "loop_tilling", p);
  ck_assert_int_eq(r.status, 2);
  ck_assert_str_eq(json_error_status(r.out, NULL, 0), "LEIR_ERR_NOT_FOUND");
  ck_assert_str_eq(r.err, "");
  done(&r);
}
END_TEST

START_TEST(test_short_version_flag) {
  run_result v = RUN(NULL, "--version");
  run_result r = RUN(NULL, "-V");
  ck_assert_int_eq(r.status, 0);
  ck_assert_str_eq(r.out, v.out);
  done(&r);
  done(&v);
}
END_TEST

START_TEST(test_help_lower_lists_what_lower_reads) {
  run_result r = RUN(NULL, "help", "lower");
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "--check-bounds"));
  ck_assert_ptr_nonnull(strstr(r.out, "--threads"));
  static const char *const not_read[] = {"--seed", "--timeout", "--cc", "--cflags", "--backend",
                                         "--cache-dir", "--no-cache", "--memory-limit", "--json"};
  for (size_t i = 0; i < sizeof not_read / sizeof not_read[0]; i++) {
    ck_assert_msg(strstr(r.out, not_read[i]) == NULL, "help lower lists %s", not_read[i]);
    const char *p = write_file("relu.leir", relu);
    run_result u = strcmp(not_read[i], "--no-cache") == 0 || strcmp(not_read[i], "--json") == 0
                       ? RUN(NULL, "lower", "--to", "c", not_read[i], p)
                       : RUN(NULL, "lower", "--to", "c", not_read[i], "1", p);
    ck_assert_msg(u.status == 2, "lower accepted %s", not_read[i]);
    done(&u);
  }
  done(&r);
  const char *p = write_file("relu.leir", relu);
  r = RUN(NULL, "lower", "--to", "c", "--threads", "1", "--check-bounds", p);
  ck_assert_int_eq(r.status, 0);
  done(&r);
}
END_TEST

/* ---- strategies ------------------------------------------------------------ */

/* A strategy whose preconditions fail is invalid input (exit 1, the rule
 * in the message), not an internal error; an unknown strategy is a usage
 * error (exit 2). (A catalogue line without an implementation, while one is
 * being written, exits 1 with [strategy.not-implemented]: test_strategy's
 * explain test covers that path whenever such a line exists.) */
START_TEST(test_inapplicable_and_unknown_strategies_exit_1_and_2) {
  run_result r = RUN(relu, "apply", "partially_equivalent_then_correct nest=0 loop=tx", "-");
  ck_assert_int_eq(r.status, 1);
  ck_assert_ptr_nonnull(strstr(r.err, "does not apply"));
  ck_assert_ptr_nonnull(strstr(r.err, "[partially_equivalent.form]"));
  ck_assert_str_eq(r.out, "");
  done(&r);
  r = RUN(relu, "apply", "--cot", "online_softmax nest=0", "-");
  ck_assert_int_eq(r.status, 1);
  done(&r);
  r = RUN(relu, "explain", "partially_equivalent_then_correct", "-");
  ck_assert_int_eq(r.status, 1);
  ck_assert_ptr_nonnull(strstr(r.out, "[partially_equivalent.form]"));
  done(&r);
  r = RUN(relu, "apply", "no_such_strategy nest=0", "-");
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "unknown strategy 'no_such_strategy'"));
  done(&r);
  /* an implemented strategy that does not apply exits 1 too; one that applies, 0 */
  r = RUN(relu, "apply", "loop_parallelization nest=0 loop=tx", "-");
  ck_assert_int_eq(r.status, 1);
  done(&r);
  r = RUN(relu, "apply", "loop_parallelization nest=0 loop=a", "-");
  ck_assert_int_eq(r.status, 0);
  done(&r);
}
END_TEST

START_TEST(test_directory_input_says_so) {
  static const char *const cmds[] = {"fmt", "check", "hash"};
  for (size_t i = 0; i < 3; i++) {
    run_result r = RUN(NULL, cmds[i], tmpdir);
    ck_assert_int_eq(r.status, 1);
    char want[200];
    snprintf(want, sizeof want, "%s: error: is a directory", tmpdir);
    ck_assert_ptr_eq(strstr(r.err, want), r.err);
    done(&r);
  }
}
END_TEST

START_TEST(test_json_doubles_read_back_exactly) {
  const char *p = write_file("relu.leir", relu);
  run_result r = RUN(NULL, "bench", "--json", "--backend", "interp", "--runs", "3", "--min-time", "0",
                     "--warmup", "0", p);
  ck_assert_int_eq(r.status, 0);
  static const char *const keys[] = {"\"median_s\":", "\"min_s\":", "\"gflops\":", "\"gbytes_per_s\":"};
  for (size_t i = 0; i < 4; i++) {
    const char *at = strstr(r.out, keys[i]);
    ck_assert_msg(at != NULL, "%s missing in %s", keys[i], r.out);
    at += strlen(keys[i]);
    char *end;
    double v = strtod(at, &end);
    ck_assert(end > at);
    /* the text is the value to the last bit: printing it with 17 digits
     * gives the same double, and so does the text itself */
    char full[40];
    snprintf(full, sizeof full, "%.17g", v);
    ck_assert(strtod(full, NULL) == v);
    /* timings are quotients: they need 15-17 significant digits, which
     * %.9g (the old format) cut to 9 */
    int digits = 0;
    bool leading = true;
    for (const char *c = at; c < end && *c != 'e'; c++) {
      if (*c < '0' || *c > '9') continue;
      if (*c != '0') leading = false;
      if (!leading) digits++;
    }
    ck_assert_msg(digits >= 15, "%.*s looks rounded (%d digits)", (int)(end - at), at, digits);
  }
  done(&r);
  r = RUN(NULL, "run", "--json", "--backend", "interp", p);
  ck_assert_int_eq(r.status, 0);
  const char *t = strstr(r.out, "\"time_s\":");
  ck_assert_ptr_nonnull(t);
  t += 9;
  char *end;
  (void)strtod(t, &end);
  ck_assert_msg(end - t >= 16, "time_s %.*s is rounded", (int)(end - t), t);
  done(&r);
}
END_TEST

START_TEST(test_json_errors_in_run_commands) {
  const char *good = write_file("relu.leir", relu);
  const char *bad = write_file("bad.leir", "L^{2}_{a=0}[C^{f64,g}_{a}=;];");
  run_result r = RUN(NULL, "verify", "--json", "--backend", "interp", good, bad);
  ck_assert_int_eq(r.status, 1);
  ck_assert_str_eq(json_error_status(r.out, NULL, 0), "LEIR_ERR_PARSE");
  char want[300];
  snprintf(want, sizeof want, "\"file\":\"%s\"", bad);
  ck_assert_ptr_nonnull(strstr(r.out, want));
  done(&r);
  r = RUN(NULL, "verify", "--json", "--backend", "nope", good, good);
  ck_assert_int_eq(r.status, 2);
  ck_assert_str_eq(json_error_status(r.out, NULL, 0), "LEIR_ERR_NOT_FOUND");
  done(&r);
  r = RUN(NULL, "run", "--json", "--backend", "interp", tmpdir);
  ck_assert_int_eq(r.status, 1);
  ck_assert_str_eq(json_error_status(r.out, NULL, 0), "LEIR_ERR_IO");
  done(&r);
  r = RUN(NULL, "bench", "--json", "--frobnicate", good);
  ck_assert_int_eq(r.status, 2);
  ck_assert_str_eq(json_error_status(r.out, NULL, 0), "LEIR_ERR_ARGUMENT");
  done(&r);
}
END_TEST

/* leir verify without --class infers it (verification.md, "Which class
 * judges a pair"): a reduction_factorization of a 256^3 f32 matmul fails
 * the per-element tolerance (30 of 65536 elements at at=5) and passes the
 * f64-truth bound its grounded class asks for; a pair that does not ground
 * is judged by the truth bound too, which still catches a wrong product. */
START_TEST(test_verify_infers_the_class) {
  static const char *const mm =
      "L^{256}_{a=0}L^{256}_{c=0}L^{256}_{d=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*"
      "C^{f32,g}_{d,c};];";
  static const char *const split =
      "L^{256}_{a=0}L^{256}_{c=0}L^{5}_{d=0}[E^{f32,g}_{a,c}=E^{f32,g}_{a,c}+A^{f32,g}_{a,d}*"
      "C^{f32,g}_{d,c};];L^{256}_{a=0}L^{256}_{c=0}L^{251}_{d=0}[F^{f32,g}_{a,c}=F^{f32,g}_{a,c}+"
      "A^{f32,g}_{a,d+5}*C^{f32,g}_{d+5,c};];B^{1}_{tx=0}L^{256}_{a=0}L^{256}_{c=0}[D^{f32,g}_{a,"
      "c}=D^{f32,g}_{a,c}+(E^{f32,g}_{a,c}+F^{f32,g}_{a,c});];";
  const char *before = write_file("mm.leir", mm);
  const char *after = write_file("split.leir", split);
  run_result r = RUN(NULL, "ground", before, after);
  ck_assert_int_eq(r.status, 0);
  ck_assert_str_eq(r.out, "reduction_factorization nest=0 loop=d at=5\treassociating\n");
  done(&r);
  r = RUN(NULL, "verify", "--class", "any", before, after);
  ck_assert_msg(r.status == 1 && strncmp(r.out, "MISMATCH", 8) == 0, "%s", r.out);
  done(&r);
  r = RUN(NULL, "verify", before, after);
  ck_assert_msg(r.status == 0 && strncmp(r.out, "CLOSE: within the reassociation bound", 37) == 0,
                "%s", r.out);
  ck_assert_ptr_nonnull(strstr(r.out, "\n  class reassociating, inferred: grounds to "
                                      "reduction_factorization nest=0 loop=d at=5; judged by the "
                                      "f64-truth bound\n"));
  done(&r);
  r = RUN(NULL, "verify", "--json", before, after);
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "\"class\":\"reassociating\""));
  ck_assert_ptr_nonnull(strstr(r.out, "\"judged_by\":\"truth\""));
  ck_assert_ptr_nonnull(
      strstr(r.out, "\"class_inferred\":\"grounds to reduction_factorization nest=0 loop=d at=5\"}"));
  done(&r);
  /* an exact step grounds as exact and is judged bitwise */
  const char *reordered = write_file(
      "reordered.leir",
      "L^{256}_{c=0}L^{256}_{a=0}L^{256}_{d=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*"
      "C^{f32,g}_{d,c};];");
  r = RUN(NULL, "verify", "--json", before, reordered);
  ck_assert_msg(r.status == 0 && strstr(r.out, "\"verdict\":\"EQUAL\""), "%s", r.out);
  ck_assert_ptr_nonnull(strstr(r.out, "\"class\":\"exact\""));
  ck_assert_ptr_nonnull(strstr(r.out, "\"judged_by\":\"bitwise\""));
  done(&r);
  /* not one step, and wrong: the truth bound rejects it */
  const char *wrong = write_file(
      "wrong.leir",
      "L^{256}_{a=0}L^{256}_{c=0}L^{256}_{d=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*"
      "C^{f32,g}_{d,c}*1.001;];");
  r = RUN(NULL, "verify", before, wrong);
  ck_assert_msg(r.status == 1 && strncmp(r.out, "MISMATCH", 8) == 0, "%s", r.out);
  ck_assert_ptr_nonnull(strstr(r.out, "class reassociating, inferred: no single step"));
  done(&r);
  /* --class is taken as given: nothing inferred */
  r = RUN(NULL, "verify", "--json", "--class", "reassociating", before, after);
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_null(strstr(r.out, "class_inferred"));
  done(&r);
}
END_TEST

static Suite *tool_suite(void) {
  Suite *s = suite_create("tool");
  TCase *tc = tcase_create("tool");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_version_and_help);
  tcase_add_test(tc, test_usage_errors_exit_2);
  tcase_add_test(tc, test_unreadable_input_exits_1);
  tcase_add_test(tc, test_fmt);
  tcase_add_test(tc, test_fmt_pretty_and_yaml);
  tcase_add_test(tc, test_lines_mode);
  tcase_add_test(tc, test_json_output);
  tcase_add_test(tc, test_check);
  tcase_add_test(tc, test_hash);
  tcase_add_test(tc, test_hostile_input_to_the_tool);
  tcase_add_test(tc, test_json_errors_in_every_strategy_command);
  tcase_add_test(tc, test_unknown_strategy_exits_2_everywhere);
  tcase_add_test(tc, test_short_version_flag);
  tcase_add_test(tc, test_help_lower_lists_what_lower_reads);
  tcase_add_test(tc, test_directory_input_says_so);
  tcase_add_test(tc, test_json_doubles_read_back_exactly);
  tcase_add_test(tc, test_json_errors_in_run_commands);
  tcase_add_test(tc, test_verify_infers_the_class);
  tcase_add_test(tc, test_inapplicable_and_unknown_strategies_exit_1_and_2);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(tool_suite()); }
