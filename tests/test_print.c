/*
 * Printer (spec/leir.md §1.3): byte-for-byte round trip of every corpus
 * program, minimal parentheses for trees built by transformations, and
 * pretty output that parses back to the same program.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "testutil.h"

/* ---- the corpus ----------------------------------------------------------- */

typedef struct corpus_stats {
  size_t programs;
  size_t bytes;
  size_t malformed;
} corpus_stats;

static void round_trip_text(const char *text, const char *where) {
  size_t len = strlen(text);
  leir_program *p = NULL;
  leir_status st = leir_program_parse(&p, text, len, NULL);
  ck_assert_msg(st == LEIR_OK, "%s: %u:%u: %s", where, leir_error_last()->line,
                leir_error_last()->column, leir_error_last()->message);
  char *out = NULL;
  size_t olen = 0;
  ck_assert_int_eq(leir_program_print(p, 0, &out, &olen), LEIR_OK);
  ck_assert_msg(olen == len && memcmp(out, text, len) == 0, "%s: printed text differs", where);
  ck_assert_uint_eq(strlen(out), olen);
  leir_free(out);

  /* pretty: one nest per line, parses back (lenient) to the same program */
  char *pretty = test_print_pretty(p);
  leir_program *q = NULL;
  leir_parse_options o = LEIR_PARSE_OPTIONS_INIT;
  o.flags = LEIR_PARSE_LENIENT;
  ck_assert_int_eq(leir_program_parse(&q, pretty, strlen(pretty), &o), LEIR_OK);
  out = test_print(q);
  ck_assert_msg(strcmp(out, text) == 0, "%s: pretty text does not parse back", where);
  leir_free(out);
  /* at least one line per top-level nest */
  size_t lines = 0;
  for (const char *c = pretty; *c; c++) lines += *c == '\n';
  ck_assert_uint_ge(lines, leir_program_nest_count(p));
  leir_free(pretty);
  leir_program_free(q);
  leir_program_free(p);
}

static void round_trip_file(const char *name, const char *const *fields, corpus_stats *s) {
  jsonl_file *f = test_corpus_open(name);
  const jsonl_value *o;
  while ((o = jsonl_next(f))) {
    bool malformed = jsonl_bool(jsonl_get(o, "malformed"), false);
    for (const char *const *field = fields; *field; field++) {
      const char *text = jsonl_str(jsonl_get(o, *field));
      if (!text) continue; /* "before": null means the source program */
      if (malformed && strcmp(*field, "after") == 0) {
        s->malformed++;
        continue;
      }
      char where[256];
      snprintf(where, sizeof where, "%s line %zu (%s)", name, jsonl_line(f), *field);
      round_trip_text(text, where);
      s->programs++;
      s->bytes += strlen(text);
    }
  }
  ck_assert_msg(jsonl_error(f) == NULL, "%s: %s", name, jsonl_error(f));
  jsonl_close(f);
}

START_TEST(test_sources_round_trip_byte_for_byte) {
  static const char *const fields[] = {"leir", NULL};
  corpus_stats s = {0};
  round_trip_file("sources-small.jsonl", fields, &s);
  ck_assert_uint_eq(s.programs, 121);
  round_trip_file("sources-default.jsonl", fields, &s);
  ck_assert_uint_eq(s.programs, 121 + 109);
}
END_TEST

START_TEST(test_steps_small_round_trip_byte_for_byte) {
  static const char *const fields[] = {"before", "after", NULL};
  corpus_stats s = {0};
  round_trip_file("steps-small.jsonl", fields, &s);
  ck_assert_uint_eq(s.malformed, 2);
  ck_assert_uint_ge(s.programs, 8197);
}
END_TEST

START_TEST(test_steps_default_round_trip_byte_for_byte) {
  static const char *const fields[] = {"after", NULL};
  corpus_stats s = {0};
  round_trip_file("steps-default.jsonl", fields, &s);
  ck_assert_uint_eq(s.malformed, 6);
  ck_assert_uint_eq(s.programs, 4647 - 6);
}
END_TEST

/* ---- pretty layout -------------------------------------------------------- */

START_TEST(test_pretty_layout) {
  leir_program *p = test_parse(
      "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];"
      "B^{2}_{tx=0}[E^{f64,g}_{tx}=0;L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+A^{f64,g}_{tx,a};"
      "L^{2}_{c=0}[F^{f64,g}_{tx,a,c}=1;];];C^{f64,g}_{tx}=E^{f64,g}_{tx};];");
  char *pretty = test_print_pretty(p);
  ck_assert_str_eq(pretty,
                   "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];\n"
                   "B^{2}_{tx=0}[\n"
                   "  E^{f64,g}_{tx}=0;\n"
                   "  L^{8}_{a=0}[\n"
                   "    E^{f64,g}_{tx}=E^{f64,g}_{tx}+A^{f64,g}_{tx,a};\n"
                   "    L^{2}_{c=0}[F^{f64,g}_{tx,a,c}=1;];\n"
                   "  ];\n"
                   "  C^{f64,g}_{tx}=E^{f64,g}_{tx};\n"
                   "];\n");
  leir_free(pretty);
  leir_program_free(p);
}
END_TEST

START_TEST(test_print_arguments) {
  leir_program *p = test_parse("[C^{f64,g}=1;];");
  char *out = NULL;
  ck_assert_int_eq(leir_program_print(NULL, 0, &out, NULL), LEIR_ERR_ARGUMENT);
  ck_assert_int_eq(leir_program_print(p, 0, NULL, NULL), LEIR_ERR_ARGUMENT);
  ck_assert_int_eq(leir_program_print(p, 0, &out, NULL), LEIR_OK); /* length optional */
  ck_assert_str_eq(out, "[C^{f64,g}=1;];");
  leir_free(out);
  leir_program_free(p);
}
END_TEST

/* ---- minimal parentheses for built trees ----------------------------------- */

/* Builds expressions from a tiny prefix notation so cases read clearly:
 * "+ a b", "neg x", "** a b", "max a b c" (arity from the op), numbers and
 * loop variables a, c as leaves, "T" for the tensor A_{a}. */
typedef struct builder {
  leir_program *p;
  const char *s;
  uint32_t sym_a, sym_c, sym_t;
} builder;

static const char *token(builder *b, char *buf) {
  while (*b->s == ' ') b->s++;
  size_t n = 0;
  while (*b->s && *b->s != ' ') buf[n++] = *b->s++;
  buf[n] = '\0';
  return buf;
}

static leir_expr *build(builder *b) {
  char tok[32];
  token(b, tok);
  static const struct {
    const char *name;
    leir_expr_kind kind;
    leir_op op;
    uint32_t n;
  } ops[] = {{"+", LEIR_EXPR_BINARY, LEIR_OP_ADD, 2},   {"-", LEIR_EXPR_BINARY, LEIR_OP_SUB, 2},
             {"*", LEIR_EXPR_BINARY, LEIR_OP_MUL, 2},   {"/", LEIR_EXPR_BINARY, LEIR_OP_DIV, 2},
             {"//", LEIR_EXPR_BINARY, LEIR_OP_FLOORDIV, 2},
             {"%", LEIR_EXPR_BINARY, LEIR_OP_MOD, 2},   {"**", LEIR_EXPR_BINARY, LEIR_OP_POW, 2},
             {"neg", LEIR_EXPR_NEG, LEIR_OP_NONE, 1},   {"exp", LEIR_EXPR_CALL, LEIR_OP_EXP, 1},
             {"max", LEIR_EXPR_CALL, LEIR_OP_MAX, 3},   {"ite", LEIR_EXPR_CALL, LEIR_OP_IF_THEN_ELSE, 3},
             {"&", LEIR_EXPR_AND, LEIR_OP_NONE, 2},     {"|", LEIR_EXPR_OR, LEIR_OP_NONE, 2}};
  for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
    if (strcmp(tok, ops[k].name) != 0) continue;
    leir_expr *e;
    if (ops[k].kind == LEIR_EXPR_BINARY) {
      leir_expr *l = build(b);
      e = leir__new_binary(b->p, ops[k].op, l, build(b));
    } else if (ops[k].kind == LEIR_EXPR_NEG) {
      e = leir__new_unary(b->p, LEIR_EXPR_NEG, build(b));
    } else if (ops[k].kind == LEIR_EXPR_CALL) {
      e = leir__new_call(b->p, ops[k].op, ops[k].n);
      for (uint32_t i = 0; i < ops[k].n; i++) e->kids[i] = build(b);
    } else {
      e = leir__new_expr(b->p, ops[k].kind, LEIR_OP_NONE, 2);
      e->kids[0] = build(b);
      e->kids[1] = build(b);
    }
    return e;
  }
  if (tok[0] == '<') { /* "<" x y: a one-link comparison */
    leir_expr *e = leir__new_expr(b->p, LEIR_EXPR_COMPARE, LEIR_OP_NONE, 2);
    e->u.cmp_ops[0] = LEIR_OP_LT;
    e->kids[0] = build(b);
    e->kids[1] = build(b);
    return e;
  }
  if (strcmp(tok, "a") == 0) return leir__new_var(b->p, b->sym_a);
  if (strcmp(tok, "c") == 0) return leir__new_var(b->p, b->sym_c);
  if (strcmp(tok, "T") == 0) {
    leir_expr *t = leir__new_tensor(b->p, b->sym_t, LEIR_F64, LEIR_SCOPE_GLOBAL, 1);
    t->kids[0] = leir__new_var(b->p, b->sym_a);
    return t;
  }
  if (tok[0] == '-') return leir__new_int(b->p, strtoll(tok, NULL, 10));
  return leir__new_number(b->p, tok, strlen(tok));
}

/* Equal up to explicit parentheses. */
static bool same_tree(const leir_program *pa, const leir_expr *a, const leir_program *pb,
                      const leir_expr *b) {
  while (a->kind == LEIR_EXPR_PAREN) a = a->kids[0];
  while (b->kind == LEIR_EXPR_PAREN) b = b->kids[0];
  if (a->kind != b->kind || a->op != b->op || a->n != b->n) return false;
  if (a->kind == LEIR_EXPR_NUMBER)
    return a->u.num->len == b->u.num->len && memcmp(a->u.num->lexeme, b->u.num->lexeme, a->u.num->len) == 0;
  if ((a->kind == LEIR_EXPR_VAR || a->kind == LEIR_EXPR_TENSOR) &&
      strcmp(leir__sym_name(pa, a->sym), leir__sym_name(pb, b->sym)) != 0)
    return false;
  if (a->kind == LEIR_EXPR_COMPARE && memcmp(a->u.cmp_ops, b->u.cmp_ops, a->n - 1) != 0)
    return false;
  for (uint32_t k = 0; k < a->n; k++)
    if (!same_tree(pa, a->kids[k], pb, b->kids[k])) return false;
  return true;
}

static void expect_built(const char *prefix, const char *printed) {
  leir_program *p = test_parse("L^{4}_{a=0}L^{4}_{c=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];");
  builder b = {p, prefix, leir__sym_find(p, "a", 1), leir__sym_find(p, "c", 1),
               leir__sym_find(p, "A", 1)};
  leir_expr *e = build(&b);
  leir__strbuf sb = LEIR__STRBUF_INIT;
  leir__print_expr(&sb, p, e);
  char *text = leir__sb_finish(&sb, NULL);
  ck_assert_msg(strcmp(text, printed) == 0, "%s printed as %s, expected %s", prefix, text, printed);
  /* and the text means the same tree */
  char src[512];
  bool cond = e->kind == LEIR_EXPR_AND || e->kind == LEIR_EXPR_OR || e->kind == LEIR_EXPR_COMPARE;
  snprintf(src, sizeof src,
           cond ? "L^{4}_{a=0}L^{4}_{c=0}[C^{f64,g}_{a}=if_then_else(%s,1,0);];"
                : "L^{4}_{a=0}L^{4}_{c=0}[C^{f64,g}_{a}=%s;];",
           text);
  leir_program *q = test_parse(src);
  const leir_expr *back = test_rhs(q, 0, 0);
  if (cond) back = leir_expr_child(back, 0);
  ck_assert_msg(same_tree(p, e, q, back), "%s does not parse back to the built tree", text);
  leir_program_free(q);
  leir_free(text);
  leir_program_free(p);
}

START_TEST(test_built_trees_get_minimal_parentheses) {
  expect_built("+ a c", "a+c");
  expect_built("* + a c 2", "(a+c)*2");
  expect_built("+ * a c 2", "a*c+2");
  expect_built("+ a * c 2", "a+c*2");
  expect_built("- a - c 2", "a-(c-2)");
  expect_built("- - a c 2", "a-c-2");
  expect_built("+ a + c 2", "a+(c+2)");
  expect_built("/ a * c 2", "a/(c*2)");
  expect_built("* a / c 2", "a*(c/2)");
  expect_built("/ * a c 2", "a*c/2");
  expect_built("// a % c 2", "a//(c%2)");
  expect_built("** a ** c 2", "a**c**2");
  expect_built("** ** a c 2", "(a**c)**2");
  expect_built("neg ** a 2", "-a**2");
  expect_built("** neg a 2", "(-a)**2");
  expect_built("** a neg c", "a**-c");
  expect_built("** a + c 1", "a**(c+1)");
  expect_built("** a * c 1", "a**(c*1)");
  expect_built("neg neg a", "--a");
  expect_built("neg + a c", "-(a+c)");
  expect_built("neg * a c", "-(a*c)");
  expect_built("* neg a c", "-a*c");
  expect_built("* a neg c", "a*-c");
  expect_built("- a neg c", "a--c");
  expect_built("+ a -5", "a+-5");
  expect_built("- a -5", "a--5");
  expect_built("** -2 2", "(-2)**2");
  expect_built("exp + a c", "exp(a+c)");
  expect_built("max + a c neg T 0.5", "max(a+c,-A^{f64,g}_{a},0.5)");
  expect_built("* exp a T", "exp(a)*A^{f64,g}_{a}");
  expect_built("ite < a 2 T 0", "if_then_else(a<2,A^{f64,g}_{a},0)");
  expect_built("< + a 1 * c 2", "a+1<c*2");
  expect_built("< < a c 2", "(a<c)<2");
  expect_built("& < a 1 < c 2", "a<1&c<2");
  expect_built("| & < a 1 < c 2 < a 3", "a<1&c<2|a<3");
  expect_built("& | < a 1 < c 2 < a 3", "(a<1|c<2)&a<3");
  expect_built("| < a 1 & < c 2 < a 3", "a<1|c<2&a<3");
  expect_built("& < a 1 & < c 2 < a 3", "a<1&(c<2&a<3)");
  expect_built("| < a 1 | < c 2 < a 3", "a<1|(c<2|a<3)");
}
END_TEST

START_TEST(test_built_nests_print_like_parsed_ones) {
  /* a nest assembled with the builders prints as canonical text */
  leir_program *p = test_parse("L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];");
  uint32_t a = leir__sym_find(p, "a", 1), c = leir__sym_intern(p, "C", 1),
           A = leir__sym_find(p, "A", 1);
  leir_nest *n = leir__new_nest(p, 1, 1);
  n->loops[0].kind = LEIR_LOOP_BOUND;
  n->loops[0].sym = leir__sym_intern(p, "tx", 2);
  n->loops[0].extent = 4;
  leir_expr *lhs = leir__new_tensor(p, c, LEIR_F64, LEIR_SCOPE_SHARED, 1);
  lhs->kids[0] = leir__new_var(p, n->loops[0].sym);
  leir_expr *rd = leir__new_tensor(p, A, LEIR_F64, LEIR_SCOPE_GLOBAL, 1);
  rd->kids[0] = leir__new_binary(p, LEIR_OP_SUB, leir__new_int(p, 3), leir__new_var(p, n->loops[0].sym));
  n->items[0].eq = leir__new_equation(p, lhs, leir__new_binary(p, LEIR_OP_MUL, rd, leir__new_int(p, -1)));
  ck_assert(leir__program_insert_nest(p, 0, n));
  (void)a;
  char *out = test_print(p);
  ck_assert_str_eq(out,
                   "B^{4}_{tx=0}[C^{f64,s}_{tx}=A^{f64,g}_{3-tx}*-1;];L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];");
  leir_free(out);
  leir_program_free(p);
}
END_TEST

static Suite *print_suite(void) {
  Suite *s = suite_create("print");
  TCase *tc = tcase_create("corpus");
  tcase_add_test(tc, test_sources_round_trip_byte_for_byte);
  tcase_add_test(tc, test_steps_small_round_trip_byte_for_byte);
  tcase_add_test(tc, test_steps_default_round_trip_byte_for_byte);
  suite_add_tcase(s, tc);
  tc = tcase_create("layout");
  tcase_add_test(tc, test_pretty_layout);
  tcase_add_test(tc, test_print_arguments);
  tcase_add_test(tc, test_built_trees_get_minimal_parentheses);
  tcase_add_test(tc, test_built_nests_print_like_parsed_ones);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(print_suite()); }
