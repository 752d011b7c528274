#include "testutil.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

const char *test_data_path(const char *name) {
  static char buf[4096];
  const char *dir = getenv("LEIR_TEST_DATA");
  snprintf(buf, sizeof buf, "%s/%s", dir ? dir : "tests/data", name);
  return buf;
}

char *test_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(buf);
  size_t got = fread(buf, 1, (size_t)n, f);
  fclose(f);
  ck_assert_uint_eq(got, (size_t)n);
  buf[n] = '\0';
  if (len) *len = (size_t)n;
  return buf;
}

jsonl_file *test_corpus_open(const char *name) {
  jsonl_file *f = jsonl_open(test_data_path(name));
  ck_assert_msg(f != NULL, "cannot open corpus file %s (set LEIR_TEST_DATA)", name);
  return f;
}

leir_program *test_parse_flags(const char *text, uint32_t flags) {
  leir_program *p = NULL;
  leir_parse_options o = LEIR_PARSE_OPTIONS_INIT;
  o.flags = flags;
  leir_status st = leir_program_parse(&p, text, strlen(text), &o);
  ck_assert_msg(st == LEIR_OK, "parse failed at %u:%u: %s\n  in: %s", leir_error_last()->line,
                leir_error_last()->column, leir_error_last()->message, text);
  return p;
}

leir_program *test_parse(const char *text) { return test_parse_flags(text, 0); }

char *test_print(const leir_program *p) {
  char *out = NULL;
  ck_assert_int_eq(leir_program_print(p, 0, &out, NULL), LEIR_OK);
  return out;
}

char *test_print_pretty(const leir_program *p) {
  char *out = NULL;
  ck_assert_int_eq(leir_program_print(p, LEIR_PRINT_PRETTY, &out, NULL), LEIR_OK);
  return out;
}

void test_expect_parse_error(const char *text, uint32_t flags, leir_status status, uint32_t line,
                             uint32_t col, const char *rule, const char *msg_part) {
  leir_program *p = (leir_program *)1;
  leir_parse_options o = LEIR_PARSE_OPTIONS_INIT;
  o.flags = flags;
  leir_status st = leir_program_parse(&p, text, strlen(text), &o);
  const leir_error *e = leir_error_last();
  ck_assert_msg(st == status, "'%s': status %s, expected %s (%s)", text, leir_status_name(st),
                leir_status_name(status), e->message);
  ck_assert_ptr_null(p);
  ck_assert_int_eq(e->status, status);
  ck_assert_msg(e->line == line && e->column == col, "'%s': error at %u:%u, expected %u:%u (%s)",
                text, e->line, e->column, line, col, e->message);
  if (rule) ck_assert_str_eq(e->rule, rule);
  if (msg_part)
    ck_assert_msg(strstr(e->message, msg_part) != NULL, "'%s': message '%s' lacks '%s'", text,
                  e->message, msg_part);
}

/* "A:f64:2x8,C:f64:8 -> D:f64:2" */
void test_set_signature(leir_program *p, const char *spec) {
  leir_tensor_decl decls[32];
  int64_t shapes[32][LEIR_MAX_RANK];
  char names[32][16];
  size_t n = 0;
  leir_role role = LEIR_ROLE_INPUT;
  const char *s = spec;
  while (*s) {
    while (*s == ' ' || *s == ',') s++;
    if (s[0] == '-' && s[1] == '>') {
      role = LEIR_ROLE_OUTPUT;
      s += 2;
      continue;
    }
    if (!*s) break;
    ck_assert_uint_lt(n, 32);
    size_t k = 0;
    while (*s && *s != ':') names[n][k++] = *s++;
    names[n][k] = '\0';
    ck_assert_msg(*s == ':', "bad signature spec '%s'", spec);
    s++;
    char dt[8];
    k = 0;
    while (*s && *s != ':' && k < 7) dt[k++] = *s++;
    dt[k] = '\0';
    ck_assert_msg(*s == ':', "bad signature spec '%s'", spec);
    s++;
    leir_tensor_decl *d = &decls[n];
    ck_assert_int_eq(leir_dtype_from_name(dt, &d->dtype), LEIR_OK);
    d->rank = 0;
    while (*s >= '0' && *s <= '9') {
      shapes[n][d->rank++] = strtoll(s, (char **)&s, 10);
      if (*s == 'x') s++;
    }
    d->name = names[n];
    d->role = role;
    d->shape = shapes[n];
    n++;
  }
  leir_status st = leir_program_set_signature(p, decls, n);
  ck_assert_msg(st == LEIR_OK, "set_signature(%s): %s", spec, leir_error_last()->message);
}

static void sexpr(const leir_program *p, const leir_expr *e, char *buf, size_t cap, size_t *n) {
#define PUT(...)                                                      \
  do {                                                                \
    if (*n < cap) *n += (size_t)snprintf(buf + *n, cap - *n, __VA_ARGS__); \
  } while (0)
  size_t len;
  const char *lex;
  switch (leir_expr_get_kind(e)) {
    case LEIR_EXPR_NUMBER:
      lex = leir_expr_lexeme(e, &len);
      PUT("%.*s", (int)len, lex);
      return;
    case LEIR_EXPR_INF: PUT("inf"); return;
    case LEIR_EXPR_VAR: PUT("%s", leir_expr_name(p, e)); return;
    case LEIR_EXPR_TENSOR:
      PUT("%s", leir_expr_name(p, e));
      if (leir_expr_child_count(e)) {
        PUT("[");
        for (size_t k = 0; k < leir_expr_child_count(e); k++) {
          if (k) PUT(",");
          sexpr(p, leir_expr_child(e, k), buf, cap, n);
        }
        PUT("]");
      }
      return;
    case LEIR_EXPR_PAREN: PUT("(paren "); break;
    case LEIR_EXPR_NEG: PUT("(neg "); break;
    case LEIR_EXPR_BINARY:
    case LEIR_EXPR_CALL: PUT("(%s ", leir_op_name(leir_expr_op(e))); break;
    case LEIR_EXPR_COMPARE: PUT("(cmp "); break;
    case LEIR_EXPR_AND: PUT("(& "); break;
    case LEIR_EXPR_OR: PUT("(| "); break;
  }
  for (size_t k = 0; k < leir_expr_child_count(e); k++) {
    if (k) {
      PUT(" ");
      if (leir_expr_get_kind(e) == LEIR_EXPR_COMPARE)
        PUT("%s ", leir_op_name(leir_expr_compare_op(e, k - 1)));
    }
    sexpr(p, leir_expr_child(e, k), buf, cap, n);
  }
  PUT(")");
#undef PUT
}

const char *test_sexpr(const leir_program *p, const leir_expr *e) {
  static char buf[8192];
  size_t n = 0;
  buf[0] = '\0';
  sexpr(p, e, buf, sizeof buf, &n);
  return buf;
}

const leir_expr *test_rhs(const leir_program *p, size_t nest, size_t item) {
  const leir_nest *n = leir_program_nest(p, nest);
  ck_assert_ptr_nonnull(n);
  const leir_equation *eq = leir_nest_item_equation(n, item);
  ck_assert_ptr_nonnull(eq);
  return leir_equation_rhs(eq);
}

const char *test_wrap_rhs(const char *rhs) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "B^{2}_{tx=0}L^{4}_{a=0}[C^{f64,g}_{tx,a}=%s;];", rhs);
  return buf;
}

void test_expect_tree(const char *rhs, const char *sexpr) {
  leir_program *p = test_parse(test_wrap_rhs(rhs));
  ck_assert_str_eq(test_sexpr(p, test_rhs(p, 0, 0)), sexpr);
  char *out = test_print(p);
  ck_assert_str_eq(out, test_wrap_rhs(rhs));
  leir_free(out);
  leir_program_free(p);
}

int test_run_suite(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}

test_tool_result test_run_tool(const char *dir, const char *const *args) {
  const char *tool = getenv("LEIR_TOOL");
  ck_assert_msg(tool != NULL, "LEIR_TOOL is not set");
  char out[512], err[512];
  snprintf(out, sizeof out, "%s/stdout", dir);
  snprintf(err, sizeof err, "%s/stderr", dir);
  const char *argv[48] = {tool};
  size_t n = 1;
  for (const char *const *a = args; *a; a++) {
    ck_assert_msg(n + 1 < sizeof argv / sizeof *argv, "too many arguments for the tool");
    argv[n++] = *a;
  }
  argv[n] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  ck_assert_int_eq(posix_spawn(&pid, tool, &fa, NULL, (char *const *)argv, environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  int ws;
  ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
  ck_assert(WIFEXITED(ws));
  size_t len;
  test_tool_result r = {WEXITSTATUS(ws), test_read_file(out, &len), test_read_file(err, &len)};
  return r;
}

void test_tool_result_free(test_tool_result *r) {
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}
