/*
 * The workload catalogue (include/leir/experimental/workload.h): the
 * expression evaluator (Python's floor division and modulo, overflow, depth
 * and syntax errors), catalogue files (fields, errors with file and line,
 * hostile input), template expansion with signatures and domains, shapes
 * (default, small, random, --args), and the whole catalogue of the source
 * tree: every workload emits and checks at its small shape and the corpus's
 * small workloads get the reference's signature at its shape_args.
 */
#define LEIR_EXPERIMENTAL /* the workload API is in the experimental tier */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leir/experimental/workload.h"
#include "support/jsonl.h"
#include "testutil.h"

static double ev(const char *e, leir_status want) {
  static const char *const names[] = {"a", "b", "x"};
  static const double vals[] = {7, -2, 0.5};
  static const bool isf[] = {false, false, true};
  double out = NAN;
  bool f = false;
  leir_status st = leir_expr_eval(e, names, vals, isf, 3, &out, &f);
  ck_assert_msg(st == want, "%s: status %s (%s), expected %s", e, leir_status_name(st),
                leir_error_last()->message, leir_status_name(want));
  return out;
}

START_TEST(test_expressions) {
  ck_assert_double_eq(ev("a+b*3", LEIR_OK), 1);
  ck_assert_double_eq(ev("(a+b)*3", LEIR_OK), 15);
  ck_assert_double_eq(ev("a//b", LEIR_OK), -4); /* floor, as Python */
  ck_assert_double_eq(ev("a%b", LEIR_OK), -1);
  ck_assert_double_eq(ev("-7//2", LEIR_OK), -4);
  ck_assert_double_eq(ev("min(a, b, 3)", LEIR_OK), -2);
  ck_assert_double_eq(ev("max(a,b)", LEIR_OK), 7);
  ck_assert_double_eq(ev("a/2", LEIR_OK), 3.5);
  ck_assert_double_eq(ev("x*4", LEIR_OK), 2);
  ck_assert_double_eq(ev("1/sqrt(16)", LEIR_OK), 0.25);
  ck_assert_double_eq(ev("a % 3 == 1", LEIR_OK), 1);
  ck_assert_double_eq(ev("a >= 8", LEIR_OK), 0);
  ck_assert_double_eq(ev(" ( a - 1 ) // 2 + 1 ", LEIR_OK), 4);
  ev("a//0", LEIR_ERR_ARGUMENT);
  ev("a%0", LEIR_ERR_ARGUMENT);
  ev("9223372036854775807+1", LEIR_ERR_ARGUMENT);
  ev("3037000500*3037000500", LEIR_ERR_ARGUMENT);
  ev("-9223372036854775807-1-1", LEIR_ERR_ARGUMENT);
  ev("sqrt(-1)", LEIR_ERR_ARGUMENT);
  ev("nope+1", LEIR_ERR_ARGUMENT);
  ck_assert(strstr(leir_error_last()->message, "nope") != NULL);
  ev("pow(a,2)", LEIR_ERR_ARGUMENT);
  ev("min(a)", LEIR_ERR_ARGUMENT);
  ev("a+", LEIR_ERR_PARSE);
  ev("(a", LEIR_ERR_PARSE);
  ev("a b", LEIR_ERR_PARSE);
  ev("a**2", LEIR_ERR_PARSE);
  ev("", LEIR_ERR_PARSE);
  /* deep nesting is refused, not a stack overflow */
  char deep[4000];
  memset(deep, '(', 1500);
  strcpy(deep + 1500, "1");
  memset(deep + 1501, ')', 1500);
  deep[3001] = 0;
  ev(deep, LEIR_ERR_LIMIT);
  memset(deep, '-', 3000);
  strcpy(deep + 3000, "1");
  ev(deep, LEIR_ERR_LIMIT);
  double out;
  ck_assert_int_eq(leir_expr_eval(NULL, NULL, NULL, NULL, 0, &out, NULL), LEIR_ERR_ARGUMENT);
}
END_TEST

static const char *const pool_yaml =
    "name: pool1d\n"
    "level: 1\n"
    "index: 7\n"
    "summary: max pool with stride\n"
    "dtype: f32\n"
    "params:\n"
    "  - {name: n, default: 4, small: 2, range: [1, 6]}\n"
    "  - {name: L, default: 20, small: 9, range: [5, 40]}\n"
    "  - {name: k, default: 3, small: 2, range: [1, 4]}\n"
    "  - {name: s, default: 2, small: 2, range: [1, 3]}\n"
    "  - {name: eps, type: float, default: 1e-5}\n"
    "constraints: ['L >= k']\n"
    "inputs:\n"
    "  - {name: A, domain: positive}\n"
    "  - {name: E, shape: [], domain: {value: $eps}}\n"
    "  - {name: W, shape: [n, L]}\n"
    "outputs:\n"
    "  - {name: C}\n"
    "notes: E and W are unused, as in some reference signatures\n"
    "leir: |-\n"
    "  B^{$n}_{tx=0}L^{$((L-k)//s+1)}_{a=0}L^{$k}_{c=0}\n"
    "    [C^{$T,g}_{tx,a}=max(C^{$T,g}_{tx,a},A^{$T,g}_{tx,a*$s+c}+$eps);];\n";

static leir_catalog *one(const char *text) {
  leir_catalog *cat = NULL;
  ck_assert_int_eq(leir_catalog_new(&cat), LEIR_OK);
  leir_status st = leir_catalog_add_text(cat, text, strlen(text), "mem.yaml");
  ck_assert_msg(st == LEIR_OK, "%s", leir_error_last()->message);
  return cat;
}

START_TEST(test_emit_shapes_signature_domains) {
  leir_catalog *cat = one(pool_yaml);
  const leir_workload *w = leir_catalog_find(cat, "level1/pool1d");
  ck_assert_ptr_nonnull(w);
  ck_assert_ptr_eq(leir_catalog_find(cat, "pool1d"), w);
  ck_assert_ptr_null(leir_catalog_find(cat, "level2/pool1d"));
  ck_assert_int_eq(leir_error_last()->status, LEIR_ERR_NOT_FOUND);
  ck_assert_int_eq(leir_workload_index(w), 7);
  ck_assert_uint_eq(leir_workload_param_count(w), 5);
  leir_workload_param p;
  ck_assert_int_eq(leir_workload_param_get(w, 4, &p), LEIR_OK);
  ck_assert(p.is_float);
  ck_assert_double_eq(p.default_value, 1e-5);
  ck_assert_int_eq(leir_workload_param_get(w, 5, &p), LEIR_ERR_ARGUMENT);

  /* default shape: (20-3)//2+1 = 9 windows */
  char *yaml = NULL;
  leir_program *prog = NULL;
  ck_assert_int_eq(leir_workload_emit(w, NULL, &yaml, &prog, NULL, 0), LEIR_OK);
  ck_assert_msg(strstr(yaml, "  A: {dtype: f32, shape: [4, 19], domain: positive}\n"), "%s", yaml);
  ck_assert_msg(strstr(yaml, "  E: {dtype: f32, shape: [], domain: {value: 1e-05}}\n"), "%s", yaml);
  ck_assert_msg(strstr(yaml, "  W: {dtype: f32, shape: [4, 20]}\n"), "%s", yaml);
  ck_assert_msg(strstr(yaml, "  C: {dtype: f32, shape: [4, 9]}\n"), "%s", yaml);
  ck_assert_msg(strstr(yaml, "L^{9}_{a=0}L^{3}_{c=0}"), "%s", yaml);
  ck_assert_msg(strstr(yaml, "tx,a*2+c}+1e-05"), "%s", yaml);
  ck_assert_uint_eq(leir_program_signature_count(prog), 4);
  leir_tensor_decl d;
  ck_assert_int_eq(leir_program_signature_get(prog, 3, &d), LEIR_OK);
  ck_assert_str_eq(d.name, "C");
  leir_program *back = NULL;
  ck_assert_int_eq(leir_program_parse_yaml(&back, yaml, strlen(yaml), NULL), LEIR_OK);
  ck_assert_uint_eq(leir_program_signature_count(back), 4);
  leir_program_free(back);
  leir_free(yaml);
  leir_program_free(prog);

  /* small shape: f64 and the small values; --args override in order */
  leir_emit_options o;
  leir_emit_options_init(&o);
  o.shape = LEIR_SHAPE_SMALL;
  double vals[5];
  ck_assert_int_eq(leir_workload_emit(w, &o, &yaml, NULL, vals, 5), LEIR_OK);
  ck_assert_double_eq(vals[1], 9);
  ck_assert_msg(strstr(yaml, "C: {dtype: f64, shape: [2, 4]}"), "%s", yaml);
  leir_free(yaml);
  double args[] = {3, 11, 1, 1, 0.25};
  o.args = args;
  o.nargs = 5;
  o.dtype = "f16";
  ck_assert_int_eq(leir_workload_emit(w, &o, &yaml, NULL, NULL, 0), LEIR_OK);
  ck_assert_msg(strstr(yaml, "C: {dtype: f16, shape: [3, 11]}"), "%s", yaml);
  ck_assert_msg(strstr(yaml, "domain: {value: 0.25}"), "%s", yaml);
  leir_free(yaml);
  /* a constraint, a non-integer, too many args, a bad dtype */
  double bad[] = {3, 2, 4};
  o.args = bad;
  o.nargs = 3;
  ck_assert_int_eq(leir_workload_emit(w, &o, &yaml, NULL, NULL, 0), LEIR_ERR_ARGUMENT);
  ck_assert(strstr(leir_error_last()->message, "L >= k") != NULL);
  ck_assert_ptr_null(yaml);
  double frac[] = {2.5};
  o.args = frac;
  o.nargs = 1;
  ck_assert_int_eq(leir_workload_emit(w, &o, &yaml, NULL, NULL, 0), LEIR_ERR_ARGUMENT);
  o.nargs = 6;
  ck_assert_int_eq(leir_workload_emit(w, &o, &yaml, NULL, NULL, 0), LEIR_ERR_ARGUMENT);
  o.nargs = 0;
  o.dtype = "i32";
  ck_assert_int_eq(leir_workload_emit(w, &o, &yaml, NULL, NULL, 0), LEIR_ERR_ARGUMENT);
  o.dtype = NULL;

  /* random shapes: seeded, within the ranges, different seeds differ */
  o.shape = LEIR_SHAPE_RANDOM;
  double r1[5], r2[5];
  bool differ = false;
  for (uint64_t seed = 1; seed < 20; seed++) {
    o.seed = seed;
    ck_assert_int_eq(leir_workload_emit(w, &o, NULL, NULL, r1, 5), LEIR_OK);
    ck_assert_int_eq(leir_workload_emit(w, &o, NULL, NULL, r2, 5), LEIR_OK);
    ck_assert_mem_eq(r1, r2, sizeof r1);
    ck_assert(r1[0] >= 1 && r1[0] <= 6 && r1[1] >= 5 && r1[1] <= 40 && r1[1] >= r1[2]);
    if (seed > 1 && memcmp(r1, vals, sizeof r1)) differ = true;
    memcpy(vals, r1, sizeof vals);
  }
  ck_assert(differ);
  leir_catalog_free(cat);
}
END_TEST

static void bad_file(const char *text, leir_status want, const char *msg) {
  leir_catalog *cat = NULL;
  ck_assert_int_eq(leir_catalog_new(&cat), LEIR_OK);
  leir_status st = leir_catalog_add_text(cat, text, strlen(text), "bad.yaml");
  const leir_error *e = leir_error_last();
  ck_assert_msg(st == want, "status %s (%s), expected %s\n%s", leir_status_name(st), e->message,
                leir_status_name(want), text);
  if (msg) ck_assert_msg(strstr(e->message, msg), "message '%s' lacks '%s'", e->message, msg);
  ck_assert_uint_eq(leir_catalog_count(cat), 0);
  leir_catalog_free(cat);
}

static void bad_emit(const char *text, leir_status want, const char *msg) {
  leir_catalog *cat = one(text);
  char *yaml = (char *)1;
  leir_status st = leir_workload_emit(leir_catalog_get(cat, 0), NULL, &yaml, NULL, NULL, 0);
  ck_assert_msg(st == want, "status %s (%s)\n%s", leir_status_name(st),
                leir_error_last()->message, text);
  ck_assert_ptr_null(yaml);
  if (msg)
    ck_assert_msg(strstr(leir_error_last()->message, msg), "message '%s' lacks '%s'",
                  leir_error_last()->message, msg);
  leir_catalog_free(cat);
}

#define RELU(body) "name: r\nparams: [{name: n, default: 3}]\n" body

START_TEST(test_file_errors) {
  bad_file("", LEIR_ERR_PARSE, "mapping");
  bad_file("[1, 2]", LEIR_ERR_PARSE, "mapping");
  bad_file("name: [x\n", LEIR_ERR_PARSE, "YAML");
  bad_file("name: r\n", LEIR_ERR_PARSE, "'leir' field is missing");
  bad_file("leir: x\n", LEIR_ERR_PARSE, "needs a name");
  bad_file("name: 'a b'\nleir: x\n", LEIR_ERR_PARSE, "needs a name");
  bad_file("name: r\nleir: x\ncolour: red\n", LEIR_ERR_PARSE, "unknown field 'colour'");
  bad_file(RELU("leir: x\nlevel: high\n"), LEIR_ERR_PARSE, "level");
  bad_file("name: r\nparams: [{name: n}]\nleir: x\n", LEIR_ERR_PARSE, "numeric default");
  bad_file("name: r\nparams: [{name: n, default: 2.5}]\nleir: x\n", LEIR_ERR_PARSE,
           "numeric default");
  bad_file("name: r\nparams: [{name: T, default: 2}]\nleir: x\n", LEIR_ERR_PARSE, "reserved");
  bad_file("name: r\nparams: [{name: n, default: 2}, {name: n, default: 3}]\nleir: x\n",
           LEIR_ERR_PARSE, "twice");
  bad_file("name: r\nparams: [{name: n, default: 2, range: [5, 1]}]\nleir: x\n", LEIR_ERR_PARSE,
           "min <= max");
  bad_file("name: r\nparams: [{name: n, default: 2, range: 5}]\nleir: x\n", LEIR_ERR_PARSE,
           "range");
  bad_file("name: r\nparams: [{name: n, default: 2, step: 1}]\nleir: x\n", LEIR_ERR_PARSE,
           "unknown parameter field");
  bad_file("name: r\ninputs: [{name: A, dtype: f99}]\nleir: x\n", LEIR_ERR_PARSE, "dtype");
  bad_file("name: r\ninputs: [{name: A}, {name: A}]\nleir: x\n", LEIR_ERR_PARSE, "twice");
  bad_file("name: r\noutputs: [{name: C, domain: positive}]\nleir: x\n", LEIR_ERR_PARSE,
           "no domain");
  bad_file("name: r\ninputs: [{name: A, shape: 3}]\nleir: x\n", LEIR_ERR_PARSE, "shape");
  bad_file("name: r\nleir: \"a\\0b\"\n", LEIR_ERR_PARSE, NULL);
  /* the error names the file and the line */
  bad_file("name: r\nleir: x\n\nbogus: 1\n", LEIR_ERR_PARSE, "bogus");
  ck_assert_str_eq(leir_error_last()->subject, "bad.yaml");
  ck_assert_uint_eq(leir_error_last()->line, 4);
  /* duplicates across files */
  leir_catalog *cat = one("name: r\nleir: x\n");
  ck_assert_int_eq(leir_catalog_add_text(cat, "name: r\nleir: y\n", 16, "b.yaml"),
                   LEIR_ERR_ARGUMENT);
  ck_assert_uint_eq(leir_catalog_count(cat), 1);
  leir_catalog_free(cat);

  /* emitting a broken template is an error, never a crash */
  const char *ok_body = "[C^{$T,g}_{tx}=max(A^{$T,g}_{tx},0);];\n";
  char buf[512];
  snprintf(buf, sizeof buf, RELU("leir: B^{$m}_{tx=0}%s"), ok_body);
  bad_emit(buf, LEIR_ERR_PARSE, "names no parameter");
  snprintf(buf, sizeof buf, RELU("leir: B^{$(n//0)}_{tx=0}%s"), ok_body);
  bad_emit(buf, LEIR_ERR_ARGUMENT, "division by zero");
  snprintf(buf, sizeof buf, RELU("leir: B^{$(n}_{tx=0}%s"), ok_body);
  bad_emit(buf, LEIR_ERR_PARSE, "unclosed");
  bad_emit(RELU("leir: 'B^{$n}_{tx=0}[C^{$T,g}_{tx}=max(A^{$T,g}_{tx},0);'\n"), LEIR_ERR_PARSE,
           "does not parse");
  snprintf(buf, sizeof buf, RELU("outputs: [{name: C}]\nleir: B^{$n}_{tx=0}%s"), ok_body);
  bad_emit(buf, LEIR_ERR_SIGNATURE, "'A' is an input of the program but not declared");
  snprintf(buf, sizeof buf, RELU("inputs: [{name: A}, {name: Z}]\noutputs: [{name: C}]\n"
                                 "leir: B^{$n}_{tx=0}%s"),
           ok_body);
  bad_emit(buf, LEIR_ERR_SIGNATURE, "needs a declared shape");
  snprintf(buf, sizeof buf, RELU("inputs: [{name: C}]\noutputs: [{name: A}]\n"
                                 "leir: B^{$n}_{tx=0}%s"),
           ok_body);
  bad_emit(buf, LEIR_ERR_SIGNATURE, "declared as an");
  snprintf(buf, sizeof buf, RELU("inputs: [{name: A, shape: [2]}]\noutputs: [{name: C}]\n"
                                 "leir: B^{$n}_{tx=0}%s"),
           ok_body);
  bad_emit(buf, LEIR_ERR_INVALID, "fails a check");
  snprintf(buf, sizeof buf, RELU("inputs: [{name: A, shape: [n-3]}]\noutputs: [{name: C}]\n"
                                 "leir: B^{$n}_{tx=0}%s"),
           ok_body);
  bad_emit(buf, LEIR_ERR_ARGUMENT, "not a positive integer");
}
END_TEST

/* Mutated catalogue files: every outcome is a status, never a crash or a
 * leak (the ASan build runs this). */
START_TEST(test_hostile_files) {
  size_t n = strlen(pool_yaml);
  char *buf = malloc(n + 1);
  uint64_t s = 12345;
  int ok = 0;
  for (int round = 0; round < 3000; round++) {
    memcpy(buf, pool_yaml, n + 1);
    int edits = 1 + round % 4;
    for (int e = 0; e < edits; e++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      size_t at = (size_t)(s >> 33) % n;
      static const char junk[] = "$(){}[],:-'\"\n #0123456789abz/*%";
      buf[at] = junk[(s >> 20) % (sizeof junk - 1)];
    }
    leir_catalog *cat = NULL;
    ck_assert_int_eq(leir_catalog_new(&cat), LEIR_OK);
    if (leir_catalog_add_text(cat, buf, n, "fuzz.yaml") == LEIR_OK) {
      leir_emit_options o = LEIR_EMIT_OPTIONS_INIT;
      o.shape = (leir_shape_kind)(round % 3);
      char *yaml = NULL;
      leir_program *p = NULL;
      if (leir_workload_emit(leir_catalog_get(cat, 0), &o, &yaml, &p, NULL, 0) == LEIR_OK) ok++;
      leir_free(yaml);
      leir_program_free(p);
    }
    leir_catalog_free(cat);
  }
  ck_assert_int_gt(ok, 0);
  free(buf);
}
END_TEST

static leir_catalog *source_catalog(void) {
  leir_catalog_options o;
  leir_catalog_options_init(&o);
  o.dir = getenv("LEIR_WORKLOADS_DIR");
  ck_assert_ptr_nonnull(o.dir);
  leir_catalog *cat = NULL;
  leir_status st = leir_catalog_open(&cat, &o);
  ck_assert_msg(st == LEIR_OK, "%s: %s", leir_error_last()->subject, leir_error_last()->message);
  return cat;
}

START_TEST(test_source_catalogue_small_shapes) {
  leir_catalog *cat = source_catalog();
  ck_assert_uint_ge(leir_catalog_count(cat), 122);
  leir_emit_options o = LEIR_EMIT_OPTIONS_INIT;
  o.shape = LEIR_SHAPE_SMALL;
  for (size_t i = 0; i < leir_catalog_count(cat); i++) {
    const leir_workload *w = leir_catalog_get(cat, i);
    leir_program *p = NULL;
    char *yaml = NULL;
    leir_status st = leir_workload_emit(w, &o, &yaml, &p, NULL, 0);
    ck_assert_msg(st == LEIR_OK, "%s: %s", leir_workload_name(w), leir_error_last()->message);
    /* the program file reads back (signature and domains) to the same
     * program */
    leir_program *back = NULL;
    st = leir_program_parse_yaml(&back, yaml, strlen(yaml), NULL);
    ck_assert_msg(st == LEIR_OK, "%s: %s\n%s", leir_workload_name(w), leir_error_last()->message,
                  yaml);
    ck_assert_uint_eq(leir_program_hash(back), leir_program_hash(p));
    ck_assert_uint_eq(leir_program_signature_count(back), leir_program_signature_count(p));
    leir_program_free(back);
    leir_free(yaml);
    leir_program_free(p);
  }
  leir_catalog_free(cat);
}
END_TEST

START_TEST(test_corpus_signatures_at_shape_args) {
  leir_catalog *cat = source_catalog();
  jsonl_file *f = jsonl_open(test_data_path("sources-small.jsonl"));
  ck_assert_ptr_nonnull(f);
  int checked = 0;
  const jsonl_value *j;
  while ((j = jsonl_next(f))) {
    const char *id = jsonl_str(jsonl_get(j, "id"));
    const leir_workload *w = leir_catalog_find(cat, id);
    ck_assert_msg(w != NULL, "%s is not in the catalogue", id);
    const jsonl_value *sa = jsonl_get(j, "shape_args");
    double args[64];
    size_t n = jsonl_len(sa);
    for (size_t k = 0; k < n; k++) args[k] = jsonl_at(sa, k)->number;
    leir_emit_options o = LEIR_EMIT_OPTIONS_INIT;
    o.args = args;
    o.nargs = n;
    o.dtype = "f64";
    leir_program *p = NULL;
    leir_status st = leir_workload_emit(w, &o, NULL, &p, NULL, 0);
    ck_assert_msg(st == LEIR_OK, "%s: %s", id, leir_error_last()->message);
    const jsonl_value *sig = jsonl_get(j, "signature");
    size_t k = 0;
    for (int role = 0; role < 2; role++) {
      const jsonl_value *list = jsonl_get(sig, role ? "outputs" : "inputs");
      for (size_t t = 0; t < jsonl_len(list); t++, k++) {
        const jsonl_value *decl = jsonl_at(list, t);
        leir_tensor_decl d;
        ck_assert_int_eq(leir_program_signature_get(p, k, &d), LEIR_OK);
        ck_assert_msg(!strcmp(d.name, jsonl_str(jsonl_get(decl, "name"))),
                      "%s: tensor %zu is %s", id, k, d.name);
        const jsonl_value *shape = jsonl_get(decl, "shape");
        ck_assert_msg(d.rank == jsonl_len(shape), "%s: rank of %s", id, d.name);
        for (uint32_t r = 0; r < d.rank; r++)
          ck_assert_msg(d.shape[r] == (int64_t)jsonl_at(shape, r)->number,
                        "%s: extent %u of %s is %lld", id, r, d.name, (long long)d.shape[r]);
      }
    }
    ck_assert_uint_eq(leir_program_signature_count(p), k);
    leir_program_free(p);
    checked++;
  }
  ck_assert_ptr_null(jsonl_error(f));
  jsonl_close(f);
  ck_assert_int_ge(checked, 121);
  leir_catalog_free(cat);
}
END_TEST

START_TEST(test_open_errors) {
  leir_catalog_options o = LEIR_CATALOG_OPTIONS_INIT;
  o.dir = "/nonexistent/leir-workloads";
  leir_catalog *cat = (leir_catalog *)1;
  ck_assert_int_eq(leir_catalog_open(&cat, &o), LEIR_ERR_NOT_FOUND);
  ck_assert(strstr(leir_error_last()->message, "LEIR_WORKLOADS_DIR") != NULL);
  ck_assert_int_eq(leir_catalog_open(NULL, &o), LEIR_ERR_ARGUMENT);
  o.size = 0;
  ck_assert_int_eq(leir_catalog_open(&cat, &o), LEIR_ERR_ARGUMENT);
}
END_TEST

static Suite *workload_suite(void) {
  Suite *s = suite_create("workload");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_expressions);
  tcase_add_test(tc, test_emit_shapes_signature_domains);
  tcase_add_test(tc, test_file_errors);
  tcase_add_test(tc, test_hostile_files);
  tcase_add_test(tc, test_open_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("catalogue");
  tcase_add_test(tc, test_source_catalogue_small_shapes);
  tcase_add_test(tc, test_corpus_signatures_at_shape_args);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(workload_suite()); }
