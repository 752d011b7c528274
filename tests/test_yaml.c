/*
 * Program files (*.leir.yaml, spec/leir.md §2): the mapping and list forms
 * of inputs/outputs, block and flow scalars for the text, errors at YAML
 * line:column (including LEIR errors inside the text), round trips through
 * leir_program_to_yaml, and leir_program_load_file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

static const char *const softmax =
    "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];"
    "B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];"
    "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];";

static const char *const softmax_yaml =
    "name: softmax\n"
    "inputs:\n"
    "  A: {dtype: f64, shape: [2, 8]}\n"
    "outputs:\n"
    "  C: {dtype: f64, shape: [2, 8]}\n"
    "leir: |\n"
    "  B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];\n"
    "  B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];\n"
    "  B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];\n";

static leir_program *parse_yaml(const char *text) {
  leir_program *p = NULL;
  leir_status st = leir_program_parse_yaml(&p, text, strlen(text), NULL);
  ck_assert_msg(st == LEIR_OK, "YAML parse failed at %u:%u: %s", leir_error_last()->line,
                leir_error_last()->column, leir_error_last()->message);
  return p;
}

static void expect_decl(const leir_program *p, size_t i, const char *name, leir_dtype dt,
                        leir_role role, uint32_t rank, const int64_t *shape) {
  leir_tensor_decl d;
  ck_assert_int_eq(leir_program_signature_get(p, i, &d), LEIR_OK);
  ck_assert_str_eq(d.name, name);
  ck_assert_int_eq(d.dtype, dt);
  ck_assert_int_eq(d.role, role);
  ck_assert_uint_eq(d.rank, rank);
  for (uint32_t k = 0; k < rank; k++) ck_assert_int_eq(d.shape[k], shape[k]);
}

static void expect_yaml_error(const char *text, leir_status status, uint32_t line, uint32_t col,
                              const char *rule, const char *msg) {
  leir_program *p = (leir_program *)1;
  leir_status st = leir_program_parse_yaml(&p, text, strlen(text), NULL);
  const leir_error *e = leir_error_last();
  ck_assert_msg(st == status, "status %s (%s), expected %s\n%s", leir_status_name(st), e->message,
                leir_status_name(status), text);
  ck_assert_ptr_null(p);
  ck_assert_msg(e->line == line && e->column == col, "error at %u:%u, expected %u:%u (%s)\n%s",
                e->line, e->column, line, col, e->message, text);
  ck_assert_str_eq(e->rule, rule);
  if (msg)
    ck_assert_msg(strstr(e->message, msg) != NULL, "message '%s' lacks '%s'", e->message, msg);
}

START_TEST(test_mapping_form_with_block_text) {
  leir_program *p = parse_yaml(softmax_yaml);
  char *out = test_print(p);
  ck_assert_str_eq(out, softmax);
  leir_free(out);
  ck_assert_str_eq(leir_program_name(p), "softmax");
  ck_assert_uint_eq(leir_program_signature_count(p), 2);
  static const int64_t s28[] = {2, 8};
  expect_decl(p, 0, "A", LEIR_F64, LEIR_ROLE_INPUT, 2, s28);
  expect_decl(p, 1, "C", LEIR_F64, LEIR_ROLE_OUTPUT, 2, s28);
  ck_assert_int_eq(leir_program_check(p, NULL, NULL), LEIR_OK);
  leir_program_free(p);
}
END_TEST

START_TEST(test_list_form_and_flow_text) {
  leir_program *p = parse_yaml(
      "inputs:\n"
      "  - {name: A, dtype: f64, shape: [4]}\n"
      "  - name: Aa\n"
      "    dtype: i64\n"
      "    shape: [4]\n"
      "outputs:\n"
      "  - name: C\n"
      "    dtype: f32\n"
      "    shape: []\n"
      "leir: \"L^{4}_{a=0}[C^{f32,g}=C^{f32,g}+A^{f64,g}_{a}*Aa^{i64,g}_{a};];\"\n");
  static const int64_t s4[] = {4};
  expect_decl(p, 0, "A", LEIR_F64, LEIR_ROLE_INPUT, 1, s4);
  expect_decl(p, 1, "Aa", LEIR_I64, LEIR_ROLE_INPUT, 1, s4);
  expect_decl(p, 2, "C", LEIR_F32, LEIR_ROLE_OUTPUT, 0, NULL);
  ck_assert_str_eq(leir_program_name(p), "");
  ck_assert_int_eq(leir_program_check(p, NULL, NULL), LEIR_OK);
  leir_program_free(p);
  /* plain scalar, no inputs at all, several outputs */
  p = parse_yaml("outputs: {C: {dtype: f64, shape: [3]}, D: {dtype: f64, shape: [3]}}\n"
                 "leir: L^{3}_{a=0}[C^{f64,g}_{a}=a;D^{f64,g}_{a}=-a;];\n");
  ck_assert_uint_eq(leir_program_signature_count(p), 2);
  ck_assert_int_eq(leir_program_check(p, NULL, NULL), LEIR_OK);
  leir_program_free(p);
}
END_TEST

START_TEST(test_round_trip_through_to_yaml) {
  leir_program *p = parse_yaml(softmax_yaml);
  char *yaml = NULL;
  size_t len = 0;
  ck_assert_int_eq(leir_program_to_yaml(p, &yaml, &len), LEIR_OK);
  ck_assert_uint_eq(strlen(yaml), len);
  ck_assert_str_eq(yaml,
                   "name: \"softmax\"\n"
                   "inputs:\n"
                   "  A: {dtype: f64, shape: [2, 8]}\n"
                   "outputs:\n"
                   "  C: {dtype: f64, shape: [2, 8]}\n"
                   "leir: |-\n"
                   "  B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];\n"
                   "  B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];\n"
                   "  B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];\n");
  leir_program *q = parse_yaml(yaml);
  char *a = test_print(p), *b = test_print(q);
  ck_assert_str_eq(a, b);
  ck_assert_str_eq(leir_program_name(q), "softmax");
  ck_assert_uint_eq(leir_program_signature_count(q), 2);
  leir_free(a);
  leir_free(b);
  leir_free(yaml);
  leir_program_free(q);
  leir_program_free(p);
  /* names that need quoting, scalars, no inputs */
  p = test_parse("B^{1}_{tx=0}[C^{f64,g}=1;];");
  test_set_signature(p, "-> C:f64:");
  ck_assert_int_eq(leir_program_set_name(p, "a: \"weird\"\nname #1"), LEIR_OK);
  ck_assert_int_eq(leir_program_to_yaml(p, &yaml, NULL), LEIR_OK);
  q = parse_yaml(yaml);
  ck_assert_str_eq(leir_program_name(q), "a: \"weird\"\nname #1");
  expect_decl(q, 0, "C", LEIR_F64, LEIR_ROLE_OUTPUT, 0, NULL);
  leir_free(yaml);
  leir_program_free(q);
  /* characters YAML does not allow raw are escaped: DEL, C1 controls, BOM */
  static const char *const odd[] = {"del\x7f", "nel\xc2\x85 c1\xc2\x9f", "bom\xef\xbb\xbf",
                                    "tab\tcr\r", "emoji \xf0\x9f\x98\x80 \xe2\x80\xa8"};
  for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
    ck_assert_int_eq(leir_program_set_name(p, odd[i]), LEIR_OK);
    ck_assert_int_eq(leir_program_to_yaml(p, &yaml, NULL), LEIR_OK);
    q = parse_yaml(yaml);
    ck_assert_str_eq(leir_program_name(q), odd[i]);
    leir_free(yaml);
    leir_program_free(q);
  }
  /* names are UTF-8 */
  ck_assert_int_eq(leir_program_set_name(p, "bad \xff"), LEIR_ERR_ARGUMENT);
  ck_assert_int_eq(leir_program_set_name(p, "overlong \xc0\xaf"), LEIR_ERR_ARGUMENT);
  ck_assert_int_eq(leir_program_set_name(p, "surrogate \xed\xa0\x80"), LEIR_ERR_ARGUMENT);
  ck_assert_str_eq(leir_program_name(p), odd[4]);
  leir_program_free(p);
}
END_TEST

START_TEST(test_round_trip_over_the_corpus) {
  jsonl_file *f = test_corpus_open("sources-small.jsonl");
  const jsonl_value *o;
  while ((o = jsonl_next(f))) {
    const char *text = jsonl_str(jsonl_get(o, "leir"));
    leir_program *p = test_parse(text);
    ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
    ck_assert_int_eq(leir_program_set_name(p, jsonl_str(jsonl_get(o, "id"))), LEIR_OK);
    char *yaml = NULL;
    ck_assert_int_eq(leir_program_to_yaml(p, &yaml, NULL), LEIR_OK);
    leir_program *q = parse_yaml(yaml);
    char *out = test_print(q);
    ck_assert_str_eq(out, text);
    ck_assert_str_eq(leir_program_name(q), jsonl_str(jsonl_get(o, "id")));
    ck_assert_uint_eq(leir_program_signature_count(q), leir_program_signature_count(p));
    for (size_t i = 0; i < leir_program_signature_count(p); i++) {
      leir_tensor_decl x, y;
      leir_program_signature_get(p, i, &x);
      leir_program_signature_get(q, i, &y);
      ck_assert_str_eq(x.name, y.name);
      ck_assert_int_eq(x.dtype, y.dtype);
      ck_assert_int_eq(x.role, y.role);
      ck_assert_uint_eq(x.rank, y.rank);
      for (uint32_t k = 0; k < x.rank; k++) ck_assert_int_eq(x.shape[k], y.shape[k]);
    }
    ck_assert_int_eq(leir_program_check(q, NULL, NULL), LEIR_OK);
    leir_free(out);
    leir_free(yaml);
    leir_program_free(q);
    leir_program_free(p);
  }
  jsonl_close(f);
}
END_TEST

START_TEST(test_to_yaml_needs_a_signature) {
  leir_program *p = test_parse("B^{1}_{tx=0}[C^{f64,g}=1;];");
  char *yaml = (char *)1;
  ck_assert_int_eq(leir_program_to_yaml(p, &yaml, NULL), LEIR_ERR_SIGNATURE);
  ck_assert_ptr_null(yaml);
  ck_assert_str_eq(leir_error_last()->rule, "signature.missing");
  ck_assert_int_eq(leir_program_to_yaml(NULL, &yaml, NULL), LEIR_ERR_ARGUMENT);
  leir_program_free(p);
}
END_TEST

/* ---- errors ---------------------------------------------------------------- */

START_TEST(test_yaml_syntax_and_structure_errors) {
  expect_yaml_error("outputs: [\n", LEIR_ERR_PARSE, 2, 1, "yaml.syntax", "YAML:");
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [4]\n", LEIR_ERR_PARSE, 3, 1, "yaml.syntax",
                    NULL);
  expect_yaml_error("- a\n", LEIR_ERR_PARSE, 1, 1, "yaml.structure",
                    "a program file is a mapping with inputs, outputs and leir");
  expect_yaml_error("", LEIR_ERR_PARSE, 0, 0, "yaml.structure", "a program file is a mapping");
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [4]}\n", LEIR_ERR_PARSE, 1, 1,
                    "yaml.structure", "the 'leir' field (program text) is missing");
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [4]}\nleir: [1]\n", LEIR_ERR_PARSE, 3, 7,
                    "yaml.structure", "the 'leir' field must be the program text");
  expect_yaml_error("inputs: {}\nleir: x\n", LEIR_ERR_PARSE, 1, 1, "yaml.structure",
                    "the 'outputs' field is missing");
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [4]}\nfoo: 1\nleir: x\n", LEIR_ERR_PARSE, 3,
                    1, "yaml.structure", "unknown field 'foo'");
  expect_yaml_error("outputs: 3\nleir: x\n", LEIR_ERR_PARSE, 1, 10, "yaml.structure",
                    "'outputs' must be a mapping");
  expect_yaml_error("name: [x]\noutputs:\n  C: {dtype: f64, shape: [4]}\nleir: x\n", LEIR_ERR_PARSE,
                    1, 7, "yaml.structure", "name must be a string");
}
END_TEST

START_TEST(test_declaration_errors) {
  expect_yaml_error("outputs:\n  C: {dtype: f65, shape: [4]}\nleir: x\n", LEIR_ERR_PARSE, 2, 14,
                    "yaml.structure", "unknown dtype 'f65'");
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [4, 0]}\nleir: x\n", LEIR_ERR_PARSE, 2, 30,
                    "yaml.structure", "each extent of C must be a positive integer");
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [99999999999999999999]}\nleir: x\n",
                    LEIR_ERR_PARSE, 2, 27, "yaml.structure", "positive integer");
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [2.5]}\nleir: x\n", LEIR_ERR_PARSE, 2, 27,
                    "yaml.structure", "positive integer");
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: 4}\nleir: x\n", LEIR_ERR_PARSE, 2, 26,
                    "yaml.structure", "the shape of C must be a list of extents");
  expect_yaml_error("outputs:\n  C: {dtype: f64}\nleir: x\n", LEIR_ERR_PARSE, 2, 6, "yaml.structure",
                    "C has no shape (use [] for a scalar)");
  expect_yaml_error("outputs:\n  C: {shape: [1]}\nleir: x\n", LEIR_ERR_PARSE, 2, 6, "yaml.structure",
                    "C has no dtype");
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [4], color: red}\nleir: x\n",
                    LEIR_ERR_PARSE, 2, 31, "yaml.structure", "unknown field 'color'");
  expect_yaml_error("outputs:\n  c: {dtype: f64, shape: [4]}\nleir: x\n", LEIR_ERR_PARSE, 2, 3,
                    "yaml.structure", "'c' is not a tensor name");
  expect_yaml_error("outputs:\n  Lx: {dtype: f64, shape: [4]}\nleir: x\n", LEIR_ERR_PARSE, 2, 3,
                    "yaml.structure", "'Lx' is not a tensor name");
  expect_yaml_error("inputs:\n  C: {dtype: f64, shape: [4]}\noutputs:\n  C: {dtype: f64, shape: [4]}\n"
                    "leir: x\n",
                    LEIR_ERR_PARSE, 4, 3, "yaml.structure", "C is declared twice");
  expect_yaml_error("outputs:\n  C: 5\nleir: x\n", LEIR_ERR_PARSE, 2, 6, "yaml.structure",
                    "C must map to {dtype: ..., shape: [...]}");
  expect_yaml_error("outputs:\n  - {dtype: f64, shape: [4]}\nleir: x\n", LEIR_ERR_PARSE, 2, 5,
                    "yaml.structure", "a tensor name is missing");
  expect_yaml_error("outputs: {}\nleir: \"[C^{f64,g}=1;];\"\n", LEIR_ERR_PARSE, 1, 10,
                    "yaml.structure", "'outputs' must declare at least one tensor");
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}\nleir: x\n",
                    LEIR_ERR_PARSE, 2, 59, "yaml.structure", "more than 16 dimensions");
}
END_TEST

START_TEST(test_leir_errors_point_into_the_file) {
  /* literal block: the line after "|", past the indentation */
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [4]}\nleir: |\n"
                    "  L^{4}_{a=0}[C^{f64,g}_{a}=a;];\n"
                    "    L^{4}_{a=1}[C^{f64,g}_{a}=a;];\n",
                    LEIR_ERR_PARSE, 5, 14, "parse.loop-start", "a loop must start at 0");
  /* folded block */
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [4]}\nleir: >\n"
                    "  L^{4}_{a=0}[C^{f64,g}_{a}=a;];\n"
                    "  L^{4}_{a=1}[C^{f64,g}_{a}=a;];\n",
                    LEIR_ERR_PARSE, 5, 12, "parse.loop-start", NULL);
  /* plain scalar over two lines */
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [4]}\nleir: L^{4}_{a=0}[C^{f64,g}_{a}=a;];\n"
                    "   L^{4}_{a=1}[C^{f64,g}_{a}=a;]; # comment\n",
                    LEIR_ERR_PARSE, 4, 13, "parse.loop-start", NULL);
  /* quoted scalars count their quote */
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [4]}\nleir: \"L^{4}_{a=1}[C^{f64,g}_{a}=a;];\"\n",
                    LEIR_ERR_PARSE, 3, 17, "parse.loop-start", NULL);
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [4]}\nleir: 'L^{4}_{a=1}[C^{f64,g}_{a}=a;];'\n",
                    LEIR_ERR_PARSE, 3, 17, "parse.loop-start", NULL);
  /* an error at the end of the text points just past it */
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [4]}\nleir: \"L^{4}_{a=0}[C^{f64,g}_{a}=a;]\"\n",
                    LEIR_ERR_PARSE, 3, 37, "parse.expected", "expected ';' after ']'");
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [4]}\nleir: |\n  L^{4}_{a=0}[C^{f64,g}_{a}=a;]\n\n",
                    LEIR_ERR_PARSE, 4, 32, "parse.expected", NULL);
  expect_yaml_error("outputs:\n  C: {dtype: f64, shape: [4]}\nleir: L^{4}_{a=0}[C^{f64,g}_{a}=a;] # x\n",
                    LEIR_ERR_PARSE, 3, 36, "parse.expected", NULL);
  /* a NUL byte is refused before YAML sees it */
  static const char nul[] = "outputs: {}\nleir: \"[C^{f64,g}=1;\0];\"\n";
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse_yaml(&p, nul, sizeof nul - 1, NULL), LEIR_ERR_PARSE);
  ck_assert_str_eq(leir_error_last()->rule, "yaml.syntax");
  /* the input size limit applies to the file */
  leir_parse_options o = LEIR_PARSE_OPTIONS_INIT;
  o.max_input_bytes = 16;
  ck_assert_int_eq(leir_program_parse_yaml(&p, softmax_yaml, strlen(softmax_yaml), &o),
                   LEIR_ERR_LIMIT);
  /* options are checked as for leir_program_parse */
  o = (leir_parse_options)LEIR_PARSE_OPTIONS_INIT;
  o.size = 4;
  ck_assert_int_eq(leir_program_parse_yaml(&p, softmax_yaml, strlen(softmax_yaml), &o),
                   LEIR_ERR_ARGUMENT);
  ck_assert_int_eq(leir_program_load_file(&p, "/nonexistent.leir", &o), LEIR_ERR_ARGUMENT);
}
END_TEST

START_TEST(test_load_file) {
  char dir[] = "/tmp/leir-test-yaml-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/softmax.leir.yaml", dir);
  FILE *f = fopen(path, "wb");
  fputs(softmax_yaml, f);
  fclose(f);
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_load_file(&p, path, NULL), LEIR_OK);
  ck_assert_uint_eq(leir_program_signature_count(p), 2);
  leir_program_free(p);
  unlink(path);
  /* LEIR text, lenient when asked */
  snprintf(path, sizeof path, "%s/softmax.leir", dir);
  f = fopen(path, "wb");
  fprintf(f, "%s\n", softmax);
  fclose(f);
  ck_assert_int_eq(leir_program_load_file(&p, path, NULL), LEIR_ERR_PARSE);
  leir_parse_options o = LEIR_PARSE_OPTIONS_INIT;
  o.flags = LEIR_PARSE_LENIENT;
  ck_assert_int_eq(leir_program_load_file(&p, path, &o), LEIR_OK);
  ck_assert_uint_eq(leir_program_signature_count(p), 0);
  leir_program_free(p);
  unlink(path);
  /* missing file */
  ck_assert_int_eq(leir_program_load_file(&p, path, NULL), LEIR_ERR_IO);
  ck_assert_str_eq(leir_error_last()->rule, "io.open");
  ck_assert_ptr_null(p);
  ck_assert_int_eq(leir_program_load_file(&p, NULL, NULL), LEIR_ERR_ARGUMENT);
  /* a directory cannot be read */
  ck_assert_int_ne(leir_program_load_file(&p, dir, NULL), LEIR_OK);
  ck_assert_ptr_null(p);
  rmdir(dir);
}
END_TEST


/* ---- input domains ------------------------------------------------------ */

static const char *const domains_yaml =
    "name: rms\n"
    "inputs:\n"
    "  A: {dtype: f32, shape: [4, 8], domain: {distribution: normal, mean: 0.5, std: 2}}\n"
    "  Eps: {dtype: f32, shape: [], domain: {value: 1e-5}}\n"
    "  G: {dtype: f32, shape: [8], domain: positive}\n"
    "  H: {dtype: f64, shape: [8], domain: {range: [-3, 0.25]}}\n"
    "  I: {dtype: i32, shape: [8], domain: {range: [2, 5]}}\n"
    "  J: {dtype: f16, shape: [8], domain: {distribution: uniform, low: 0.125, high: 4}}\n"
    "  K: {dtype: f64, shape: [8]}\n"
    "outputs:\n"
    "  C: {dtype: f32, shape: [4, 8]}\n"
    "leir: |\n"
    "  L^{4}_{a=0}L^{8}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c}*G^{f32,g}_{c}+Eps^{f32,g}"
    "+H^{f64,g}_{c}+I^{i32,g}_{c}+J^{f16,g}_{c}+K^{f64,g}_{c};];\n";

static void expect_domain(const leir_program *p, size_t i, leir_domain_kind kind, double a,
                          double b) {
  leir_domain d = LEIR_DOMAIN_INIT;
  ck_assert_int_eq(leir_program_domain_get(p, i, &d), LEIR_OK);
  ck_assert_msg(d.kind == kind, "input %zu: domain %s, expected %s", i,
                leir_domain_kind_name(d.kind), leir_domain_kind_name(kind));
  switch (kind) {
    case LEIR_DOMAIN_VALUE: ck_assert(d.value == a); break;
    case LEIR_DOMAIN_RANGE:
    case LEIR_DOMAIN_UNIFORM: ck_assert(d.low == a && d.high == b); break;
    case LEIR_DOMAIN_NORMAL: ck_assert(d.mean == a && d.std == b); break;
    default: break;
  }
}

static void expect_all_domains(const leir_program *p) {
  expect_domain(p, 0, LEIR_DOMAIN_NORMAL, 0.5, 2);
  expect_domain(p, 1, LEIR_DOMAIN_VALUE, 1e-5, 0);
  expect_domain(p, 2, LEIR_DOMAIN_POSITIVE, 0, 0);
  expect_domain(p, 3, LEIR_DOMAIN_RANGE, -3, 0.25);
  expect_domain(p, 4, LEIR_DOMAIN_RANGE, 2, 5);
  expect_domain(p, 5, LEIR_DOMAIN_UNIFORM, 0.125, 4);
  expect_domain(p, 6, LEIR_DOMAIN_DEFAULT, 0, 0);
  expect_domain(p, 7, LEIR_DOMAIN_DEFAULT, 0, 0); /* the output */
}

START_TEST(test_domains_parse_print_round_trip) {
  leir_program *p = parse_yaml(domains_yaml);
  expect_all_domains(p);
  char *text = NULL;
  size_t len = 0;
  ck_assert_int_eq(leir_program_to_yaml(p, &text, &len), LEIR_OK);
  ck_assert_ptr_nonnull(strstr(text, "  Eps: {dtype: f32, shape: [], domain: {value: 1e-05}}\n"));
  ck_assert_ptr_nonnull(strstr(text, "  G: {dtype: f32, shape: [8], domain: positive}\n"));
  ck_assert_ptr_nonnull(strstr(text, "domain: {distribution: normal, mean: 0.5, std: 2}}\n"));
  ck_assert_ptr_nonnull(strstr(text, "domain: {range: [-3, 0.25]}}\n"));
  ck_assert_ptr_nonnull(strstr(text, "domain: {distribution: uniform, low: 0.125, high: 4}}\n"));
  ck_assert_ptr_nonnull(strstr(text, "  K: {dtype: f64, shape: [8]}\n"));
  leir_program *q = NULL;
  ck_assert_int_eq(leir_program_parse_yaml(&q, text, len, NULL), LEIR_OK);
  expect_all_domains(q);
  char *again = NULL;
  ck_assert_int_eq(leir_program_to_yaml(q, &again, NULL), LEIR_OK);
  ck_assert_str_eq(again, text);
  /* clones keep them; a new signature clears them */
  leir_program *c = NULL;
  ck_assert_int_eq(leir_program_clone(&c, q), LEIR_OK);
  expect_all_domains(c);
  ck_assert_int_eq(leir_program_infer_signature(c), LEIR_OK);
  for (size_t i = 0; i < leir_program_signature_count(c); i++)
    expect_domain(c, i, LEIR_DOMAIN_DEFAULT, 0, 0);
  /* a value that needs all 17 digits round trips exactly */
  leir_domain d = LEIR_DOMAIN_INIT;
  d.kind = LEIR_DOMAIN_VALUE;
  d.value = 0.1 + 0.2;
  ck_assert_int_eq(leir_program_domain_set(c, 0, &d), LEIR_OK);
  leir_free(again);
  ck_assert_int_eq(leir_program_to_yaml(c, &again, &len), LEIR_OK);
  leir_program_free(q);
  ck_assert_int_eq(leir_program_parse_yaml(&q, again, len, NULL), LEIR_OK);
  expect_domain(q, 0, LEIR_DOMAIN_VALUE, 0.1 + 0.2, 0);
  leir_free(again);
  leir_free(text);
  leir_program_free(c);
  leir_program_free(q);
  leir_program_free(p);
}
END_TEST

START_TEST(test_domain_api_validates) {
  leir_program *p = parse_yaml(domains_yaml);
  leir_domain d = LEIR_DOMAIN_INIT;
  d.kind = LEIR_DOMAIN_NORMAL;
  d.std = 0;
  ck_assert_int_eq(leir_program_domain_set(p, 0, &d), LEIR_ERR_ARGUMENT);
  d.std = 1;
  ck_assert_int_eq(leir_program_domain_set(p, 7, &d), LEIR_ERR_ARGUMENT); /* the output */
  ck_assert_ptr_nonnull(strstr(leir_error_last()->message, "output"));
  ck_assert_int_eq(leir_program_domain_set(p, 8, &d), LEIR_ERR_ARGUMENT);
  ck_assert_int_eq(leir_program_domain_set(p, 4, &d), LEIR_ERR_ARGUMENT); /* i32: continuous */
  d.kind = LEIR_DOMAIN_RANGE;
  d.low = 2.5, d.high = 4;
  ck_assert_int_eq(leir_program_domain_set(p, 4, &d), LEIR_ERR_ARGUMENT); /* not integers */
  d.low = 4, d.high = 4;
  ck_assert_int_eq(leir_program_domain_set(p, 3, &d), LEIR_ERR_ARGUMENT); /* empty */
  d.kind = LEIR_DOMAIN_VALUE;
  d.value = 1.0 / 0.0;
  ck_assert_int_eq(leir_program_domain_set(p, 0, &d), LEIR_ERR_ARGUMENT);
  d.size = 4;
  d.value = 1;
  ck_assert_int_eq(leir_program_domain_set(p, 0, &d), LEIR_ERR_ARGUMENT);
  ck_assert_int_eq(leir_program_domain_get(p, 0, &d), LEIR_ERR_ARGUMENT);
  /* failures left the declared domains alone; NULL clears one */
  expect_all_domains(p);
  ck_assert_int_eq(leir_program_domain_set(p, 2, NULL), LEIR_OK);
  expect_domain(p, 2, LEIR_DOMAIN_DEFAULT, 0, 0);
  ck_assert_str_eq(leir_domain_kind_name(LEIR_DOMAIN_UNIFORM), "uniform");
  ck_assert_str_eq(leir_domain_kind_name((leir_domain_kind)99), "unknown");
  leir_program_free(p);
}
END_TEST

static char *with_domain(const char *domain) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "inputs:\n"
           "  A: {dtype: f32, shape: [8], domain: %s}\n"
           "  I: {dtype: i8, shape: [8]}\n"
           "outputs:\n"
           "  C: {dtype: f32, shape: [8]}\n"
           "leir: L^{8}_{a=0}[C^{f32,g}_{a}=A^{f32,g}_{a}+I^{i8,g}_{a};];\n",
           domain);
  return buf;
}

START_TEST(test_domain_errors) {
  expect_yaml_error(with_domain("negative"), LEIR_ERR_PARSE, 2, 39, "yaml.domain",
                    "must be one of: positive");
  expect_yaml_error(with_domain("{value: x}"), LEIR_ERR_PARSE, 2, 47, "yaml.domain",
                    "the value of A must be a number");
  expect_yaml_error(with_domain("{value: .nan}"), LEIR_ERR_PARSE, 2, 47, "yaml.domain", NULL);
  expect_yaml_error(with_domain("{value: 1e999}"), LEIR_ERR_PARSE, 2, 47, "yaml.domain", NULL);
  expect_yaml_error(with_domain("{range: [1]}"), LEIR_ERR_PARSE, 2, 47, "yaml.domain",
                    "two numbers");
  expect_yaml_error(with_domain("{range: [2, 1]}"), LEIR_ERR_PARSE, 2, 39, "yaml.domain",
                    "low < high");
  expect_yaml_error(with_domain("{distribution: normal, std: -1}"), LEIR_ERR_PARSE, 2, 39,
                    "yaml.domain", "std > 0");
  expect_yaml_error(with_domain("{distribution: cauchy}"), LEIR_ERR_PARSE, 2, 54, "yaml.domain",
                    "unknown distribution 'cauchy'");
  expect_yaml_error(with_domain("{distribution: uniform, low: 0}"), LEIR_ERR_PARSE, 2, 39,
                    "yaml.domain", "needs low and high");
  expect_yaml_error(with_domain("{value: 1, range: [0, 1]}"), LEIR_ERR_PARSE, 2, 39,
                    "yaml.domain", "must be one of");
  expect_yaml_error(with_domain("{value: 1, value: 2}"), LEIR_ERR_PARSE, 2, 50, "yaml.domain",
                    "given twice");
  expect_yaml_error(with_domain("{scale: 2}"), LEIR_ERR_PARSE, 2, 40, "yaml.domain",
                    "unknown domain field 'scale'");
  expect_yaml_error(with_domain("[1, 2]"), LEIR_ERR_PARSE, 2, 39, "yaml.domain", NULL);
  /* an integer input: integer ranges inside the dtype only */
  expect_yaml_error("inputs:\n  I: {dtype: i8, shape: [8], domain: {range: [0, 300]}}\n"
                    "outputs:\n  C: {dtype: f32, shape: [8]}\n"
                    "leir: L^{8}_{a=0}[C^{f32,g}_{a}=I^{i8,g}_{a};];\n",
                    LEIR_ERR_PARSE, 2, 38, "yaml.domain", "inside [-128, 127]");
  /* outputs have none */
  expect_yaml_error("inputs:\n  A: {dtype: f32, shape: [8]}\n"
                    "outputs:\n  C: {dtype: f32, shape: [8], domain: positive}\n"
                    "leir: L^{8}_{a=0}[C^{f32,g}_{a}=A^{f32,g}_{a};];\n",
                    LEIR_ERR_PARSE, 4, 31, "yaml.domain", "only inputs have a domain");
}
END_TEST


/* ---- hostile documents (issue 11.6) ----------------------------------- */

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

START_TEST(test_deep_nesting_is_refused_quickly) {
  /* 200k nested flow sequences (400 KB): libyaml's scanner alone took
   * 200 s on them */
  size_t n = 200000;
  char *text = malloc(2 * n + 16);
  memcpy(text, "inputs: ", 8);
  memset(text + 8, '[', n);
  memset(text + 8 + n, ']', n);
  text[8 + 2 * n] = '\0';
  double t0 = seconds_now();
  leir_program *p = (leir_program *)1;
  ck_assert_int_eq(leir_program_parse_yaml(&p, text, strlen(text), NULL), LEIR_ERR_LIMIT);
  ck_assert_ptr_null(p);
  ck_assert_str_eq(leir_error_last()->rule, "limit.depth");
  ck_assert_uint_eq(leir_error_last()->line, 1);
  ck_assert_uint_eq(leir_error_last()->column, 1009);
  /* the same with mappings */
  for (size_t i = 0; i < n; i++) text[8 + i] = '{', text[8 + n + i] = '}';
  ck_assert_int_eq(leir_program_parse_yaml(&p, text, strlen(text), NULL), LEIR_ERR_LIMIT);
  ck_assert_msg(seconds_now() - t0 < 2.0, "took %.1f s", seconds_now() - t0);
  free(text);
  /* block collections (no brackets) stop at 64 levels, found by the events */
  char block[20000];
  size_t k = (size_t)snprintf(block, sizeof block, "inputs:\n");
  for (int d = 0; d < 80; d++) k += (size_t)snprintf(block + k, sizeof block - k, "%*s-\n", d, "");
  snprintf(block + k, sizeof block - k, "outputs: {}\nleir: x\n");
  expect_yaml_error(block, LEIR_ERR_LIMIT, 65, 64, "limit.depth", "nested more than 64 deep");
  /* 64 levels of brackets inside the text are fine */
  char ok[4096];
  k = (size_t)snprintf(ok, sizeof ok, "name: ");
  for (int d = 0; d < 60; d++) ok[k++] = '[';
  for (int d = 0; d < 60; d++) ok[k++] = ']';
  snprintf(ok + k, sizeof ok - k,
           "\ninputs: {A: {dtype: f64, shape: [2]}}\noutputs: {C: {dtype: f64, shape: [2]}}\n"
           "leir: L^{2}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];\n");
  expect_yaml_error(ok, LEIR_ERR_PARSE, 1, 7, "yaml.structure", "name must be a string");
}
END_TEST

START_TEST(test_nul_in_a_name_is_refused) {
  expect_yaml_error("name: \"soft\\u0000max\"\n"
                    "inputs: {A: {dtype: f64, shape: [2]}}\noutputs: {C: {dtype: f64, shape: [2]}}\n"
                    "leir: L^{2}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];\n",
                    LEIR_ERR_PARSE, 1, 7, "yaml.structure", "NUL character");
  expect_yaml_error("inputs: {\"A\\0x\": {dtype: f64, shape: [2]}}\n"
                    "outputs: {C: {dtype: f64, shape: [2]}}\n"
                    "leir: L^{2}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];\n",
                    LEIR_ERR_PARSE, 1, 10, "yaml.structure", "NUL character");
  expect_yaml_error("inputs: {A: {dtype: \"f64\\u0000junk\", shape: [2]}}\n"
                    "outputs: {C: {dtype: f64, shape: [2]}}\n"
                    "leir: L^{2}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];\n",
                    LEIR_ERR_PARSE, 1, 21, "yaml.structure", "NUL character");
}
END_TEST

START_TEST(test_out_of_memory_is_reported_as_such) {
#if defined(__SANITIZE_ADDRESS__)
  return; /* ASan reserves terabytes of address space: no RLIMIT_AS */
#else
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  return;
#endif
#endif
  /* 4 million scalars in one flow sequence: libyaml's document needs far
   * more than the 300 MiB this child may add */
  size_t n = 4000000;
  char *text = malloc(2 * n + 64);
  size_t k = (size_t)snprintf(text, 64, "inputs: {A: {dtype: f64, shape: [");
  for (size_t i = 0; i < n; i++) {
    text[k++] = '1';
    text[k++] = ',';
  }
  snprintf(text + k - 1, 64, "]}}\n");
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    struct rlimit rl;
    getrlimit(RLIMIT_AS, &rl);
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!f || fscanf(f, "%lu", &pages) != 1) _exit(10);
    fclose(f);
    rl.rlim_cur = pages * (unsigned long)sysconf(_SC_PAGESIZE) + (300ul << 20);
    if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(11);
    leir_program *p = NULL;
    leir_status st = leir_program_parse_yaml(&p, text, strlen(text), NULL);
    _exit(st == LEIR_ERR_NOMEM ? 0 : 20 + (st < 0 ? -st : st));
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
  free(text);
#endif
}
END_TEST

static Suite *yaml_suite(void) {
  Suite *s = suite_create("yaml");
  TCase *tc = tcase_create("files");
  tcase_add_test(tc, test_mapping_form_with_block_text);
  tcase_add_test(tc, test_list_form_and_flow_text);
  tcase_add_test(tc, test_round_trip_through_to_yaml);
  tcase_add_test(tc, test_round_trip_over_the_corpus);
  tcase_add_test(tc, test_to_yaml_needs_a_signature);
  tcase_add_test(tc, test_load_file);
  tcase_add_test(tc, test_domains_parse_print_round_trip);
  tcase_add_test(tc, test_domain_api_validates);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_test(tc, test_yaml_syntax_and_structure_errors);
  tcase_add_test(tc, test_declaration_errors);
  tcase_add_test(tc, test_leir_errors_point_into_the_file);
  tcase_add_test(tc, test_domain_errors);
  tcase_add_test(tc, test_deep_nesting_is_refused_quickly);
  tcase_add_test(tc, test_nul_in_a_name_is_refused);
  tcase_add_test(tc, test_out_of_memory_is_reported_as_such);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(yaml_suite()); }
