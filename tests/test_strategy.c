/* Strategies: the catalogue, steps as data, every candidate on the
 * conformance corpus (valid, replayable, grounded), explanations, CoT and
 * the rules of each strategy. Verification on a backend is in
 * test_strategy_verify.c. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corpus.h"
#include "testutil.h"

/* The programs of tests/data/sources-small.jsonl with their signatures. */
typedef corpus_source source;
static corpus_programs small;

static void load(void) { corpus_programs_load(&small); }
static void unload(void) { corpus_programs_free(&small); }

/* ---- helpers ----------------------------------------------------------------- */

static leir_step *step(const char *text) {
  leir_step *s = NULL;
  ck_assert_msg(leir_step_parse(&s, text, strlen(text)) == LEIR_OK, "%s: %s", text,
                leir_error_last()->message);
  return s;
}

/* Applies a step given as text; returns the canonical result (malloc'd). */
static char *apply_text(const char *prog, const char *st, leir_exactness *cls) {
  leir_program *p = test_parse(prog);
  leir_step *s = step(st);
  leir_program *q = NULL;
  leir_status rc = leir_step_apply(&q, p, s, cls);
  ck_assert_msg(rc == LEIR_OK, "%s: %s", st, leir_error_last()->message);
  ck_assert_int_eq(leir_program_check(q, NULL, NULL), LEIR_OK);
  char *out = test_print(q);
  leir_program_free(q);
  leir_step_free(s);
  leir_program_free(p);
  return out;
}

static size_t count_for(const leir_program *p, const char *strategy) {
  size_t idx;
  ck_assert_int_eq(leir_strategy_find(strategy, &idx), LEIR_OK);
  leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
  o.strategy = (int32_t)idx;
  leir_candidates *c = NULL;
  ck_assert_int_eq(leir_candidates_list(&c, p, &o), LEIR_OK);
  size_t n = leir_candidates_count(c);
  leir_candidates_free(c);
  return n;
}

static bool has_candidate(const leir_program *p, const char *text) {
  leir_candidates *c = NULL;
  ck_assert_int_eq(leir_candidates_list(&c, p, NULL), LEIR_OK);
  bool found = false;
  for (size_t i = 0; i < leir_candidates_count(c) && !found; i++)
    found = strcmp(leir_step_text(leir_candidates_step(c, i)), text) == 0;
  leir_candidates_free(c);
  return found;
}

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* A three-loop elementwise nest used by several tests. */
#define T3 "B^{4}_{tx=0}L^{6}_{a=0}L^{8}_{c=0}[D^{f64,g}_{tx,a,c}=A^{f64,g}_{tx,a,c}*C^{f64,g}_{tx,a,c};];"

/* ---- catalogue ----------------------------------------------------------------- */

START_TEST(test_catalogue_lists_44_strategies_in_spec_order) {
  ck_assert_uint_eq(leir_strategy_count(), 44);
  static const char *const some[][2] = {{"0", "operator_fusion"},
                                        {"9", "loop_reorder"},
                                        {"17", "reduction_factorization"},
                                        {"22", "precompute_indices"},
                                        {"31", "expand_log"},
                                        {"42", "flashattention_wo_tiling"},
                                        {"43", "normal_matmul_to_prefix_matmul_based_on_online_softmax"}};
  for (size_t i = 0; i < sizeof some / sizeof *some; i++) {
    const leir_strategy_info *info = leir_strategy_info_at((size_t)atoi(some[i][0]));
    ck_assert_ptr_nonnull(info);
    ck_assert_str_eq(info->name, some[i][1]);
  }
  size_t implemented = 0;
  static const char graph_implemented[] = "012345678"; /* digits: graph strategies done */
  for (size_t i = 0; i < 44; i++) {
    const leir_strategy_info *row = leir_strategy_info_at(i);
    ck_assert_ptr_nonnull(row);
    leir_strategy_info info = *row;
    ck_assert_uint_eq(info.index, i);
    leir_level want = i <= 8 ? LEIR_LEVEL_GRAPH
                      : i <= 17 ? LEIR_LEVEL_OPERATOR
                      : i <= 22 ? LEIR_LEVEL_MEMORY
                                : LEIR_LEVEL_MATH;
    ck_assert_int_eq(info.level, want);
    ck_assert(strlen(info.summary) > 0 && strlen(info.definition) > 0 && strlen(info.benefit) > 0);
    /* the loop and memory strategies, 9..22, the math strategies 23..34,
     * five streaming ones, and the graph strategies of graph_implemented */
    ck_assert_int_eq(info.implemented,
                     (i >= 9 && i <= 34) || i == 35 || i == 36 || (i >= 40 && i <= 43) || /* streaming */
                         (i >= 37 && i <= 39) || /* the splits */
                         (i <= 8 && strchr(graph_implemented, (char)('0' + i))));
    implemented += (size_t)info.implemented;
    size_t back;
    ck_assert_int_eq(leir_strategy_find(info.name, &back), LEIR_OK);
    ck_assert_uint_eq(back, i);
  }
  ck_assert_uint_eq(implemented, 26 + 5 + 1 + 3 + strlen(graph_implemented));
  ck_assert_ptr_null(leir_strategy_info_at(44));
  size_t idx;
  ck_assert_int_eq(leir_strategy_find("loop_tilling", &idx), LEIR_ERR_NOT_FOUND);
  ck_assert_ptr_nonnull(strstr(leir_error_last()->message, "loop_tiling"));
  ck_assert_str_eq(leir_level_name(LEIR_LEVEL_MEMORY), "memory");
}
END_TEST

/* ---- steps ----------------------------------------------------------------------- */

START_TEST(test_step_text_is_canonicalized) {
  leir_step *s = step("  loop_tiling factors=02,4 loops=tx,a   nest=0 ");
  ck_assert_str_eq(leir_step_text(s), "loop_tiling nest=0 loops=tx,a factors=2,4");
  ck_assert_uint_eq(leir_step_strategy(s), 10);
  ck_assert_uint_eq(leir_step_param_count(s), 3);
  const char *key, *value;
  size_t len;
  ck_assert_int_eq(leir_step_param(s, 1, &key, &value, &len), LEIR_OK);
  ck_assert_str_eq(key, "loops");
  ck_assert_int_eq(len, 4);
  ck_assert_int_eq(strncmp(value, "tx,a", 4), 0);
  leir_step *c = NULL;
  ck_assert_int_eq(leir_step_clone(&c, s), LEIR_OK);
  ck_assert_str_eq(leir_step_text(c), leir_step_text(s));
  leir_step_free(c);
  leir_step_free(s);
}
END_TEST

START_TEST(test_step_json_round_trips) {
  leir_step *s = step("loop_tiling nest=0 loops=tx,a factors=2,4");
  char *js = NULL;
  ck_assert_int_eq(leir_step_to_json(s, &js, NULL), LEIR_OK);
  ck_assert_str_eq(js, "{\"strategy\":\"loop_tiling\",\"nest\":0,\"loops\":[\"tx\",\"a\"],\"factors\":[2,4]}");
  leir_step *back = step(js);
  ck_assert_str_eq(leir_step_text(back), leir_step_text(s));
  leir_free(js);
  leir_step_free(back);
  leir_step_free(s);
  /* nested nests are addressed by a path; JSON keeps it as a string */
  s = step("{ \"strategy\" : \"loop_split\", \"factor\": 2, \"nest\": \"0.1\", \"loop\": \"h\" }");
  ck_assert_str_eq(leir_step_text(s), "loop_split nest=0.1 loop=h factor=2");
  ck_assert_int_eq(leir_step_to_json(s, &js, NULL), LEIR_OK);
  ck_assert_str_eq(js, "{\"strategy\":\"loop_split\",\"nest\":\"0.1\",\"loop\":\"h\",\"factor\":2}");
  leir_free(js);
  leir_step_free(s);
  s = step("precompute_indices nest=0 entry=c*2+d*3");
  ck_assert_int_eq(leir_step_to_json(s, &js, NULL), LEIR_OK);
  ck_assert_str_eq(js, "{\"strategy\":\"precompute_indices\",\"nest\":0,\"entry\":\"c*2+d*3\"}");
  leir_free(js);
  leir_step_free(s);
}
END_TEST

START_TEST(test_step_rejects_malformed_input) {
  static const struct {
    const char *text;
    leir_status st;
    const char *rule;
  } bad[] = {
      {"", LEIR_ERR_PARSE, "step.empty"},
      {"loop_tilling nest=0", LEIR_ERR_NOT_FOUND, "strategy.unknown"},
      {"loop_split nest=0 loop=a", LEIR_ERR_PARSE, "step.missing"},
      {"loop_split nest=0 loop=a factor=x", LEIR_ERR_PARSE, "step.value"},
      {"loop_split nest=0 loop=a factor=2 factor=3", LEIR_ERR_PARSE, "step.key"},
      {"loop_split nest=0 loop=a factor=2 axis=ty", LEIR_ERR_PARSE, "step.key"},
      {"loop_split nest=0 loop=a,c factor=2", LEIR_ERR_PARSE, "step.value"},
      {"loop_split nest=0. loop=a factor=2", LEIR_ERR_PARSE, "step.value"},
      /* indices past 32 bits must not wrap around to an existing nest */
      {"loop_split nest=99999999999999999999 loop=a factor=2", LEIR_ERR_PARSE, "step.value"},
      {"loop_split nest=18446744073709551616 loop=a factor=2", LEIR_ERR_PARSE, "step.value"},
      {"loop_split nest=4294967296 loop=a factor=2", LEIR_ERR_PARSE, "step.value"},
      {"loop_split nest=0.99999999999999999999 loop=a factor=2", LEIR_ERR_PARSE, "step.value"},
      {"{\"strategy\":\"loop_split\",\"nest\":99999999999999999999,\"loop\":\"a\",\"factor\":2}",
       LEIR_ERR_PARSE, "step.value"},
      {"loop_split nest=0 loop=A factor=2", LEIR_ERR_PARSE, "step.value"},
      {"loop_binding nest=0 loop=a axis=tw", LEIR_ERR_PARSE, "step.value"},
      {"loop_split nest=0 loop", LEIR_ERR_PARSE, "step.syntax"},
      {"{\"strategy\":\"loop_split\",\"nest\":-1}", LEIR_ERR_PARSE, "step.json"},
      {"{\"nest\":0}", LEIR_ERR_PARSE, "step.json"},
      {"{\"strategy\":\"loop_split\",\"nest\":0", LEIR_ERR_PARSE, "step.json"},
      {"{\"strategy\":\"loop_split\",\"loop\":\"a b\"}", LEIR_ERR_PARSE, "step.json"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    leir_step *s = (leir_step *)1;
    leir_status st = leir_step_parse(&s, bad[i].text, strlen(bad[i].text));
    ck_assert_msg(st == bad[i].st, "'%s' gave %s", bad[i].text, leir_status_name(st));
    ck_assert_ptr_null(s);
    ck_assert_str_eq(leir_error_last()->rule, bad[i].rule);
  }
  /* embedded NUL */
  leir_step *s = NULL;
  ck_assert_int_eq(leir_step_parse(&s, "loop_split\0 nest=0", 18), LEIR_ERR_PARSE);
}
END_TEST

/* Untrusted steps (an LLM's answers): mutated candidates and random bytes
 * never crash; whatever applies is a valid program. */
START_TEST(test_mutated_and_random_steps_are_handled) {
  leir_program *p = test_parse("B^{8}_{tx=0}L^{12}_{a=0}L^{6}_{c=0}[C^{f64,g}_{tx,a}=C^{f64,g}_{tx,a}+"
                               "A^{f64,g}_{tx,c}*D^{f64,g}_{a,c};];B^{8}_{tx=0}L^{12}_{a=0}"
                               "[E^{f64,g}_{tx,a}=C^{f64,g}_{tx,a}*2;];");
  leir_candidates *c = NULL;
  ck_assert_int_eq(leir_candidates_list(&c, p, NULL), LEIR_OK);
  static const char *const swaps[][2] = {{"0", "1"}, {"1", "7"}, {"2", "13"}, {"a", "c"}, {"c", "q"},
                                         {"tx", "a"}, {"=", "=0"}, {",", ""}, {"s", "g"}, {"A", "E"},
                                         {"read", "write"}, {"nest=0", "nest=0.0"}, {"ty", "tx"}};
  size_t applied = 0, refused = 0;
  for (size_t i = 0; i < leir_candidates_count(c); i++) {
    const char *t = leir_step_text(leir_candidates_step(c, i));
    for (size_t m = 0; m < sizeof swaps / sizeof *swaps; m++) {
      const char *at = strstr(t, swaps[m][0]);
      if (!at) continue;
      char buf[512];
      snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - t), t, swaps[m][1], at + strlen(swaps[m][0]));
      leir_step *s = NULL;
      if (leir_step_parse(&s, buf, strlen(buf)) != LEIR_OK) {
        refused++;
        continue;
      }
      leir_program *q = NULL;
      leir_status st = leir_step_apply(&q, p, s, NULL);
      ck_assert_msg(st == LEIR_OK || st == LEIR_ERR_NOT_APPLICABLE, "%s: %s", buf, leir_status_name(st));
      if (st == LEIR_OK) {
        ck_assert_int_eq(leir_program_check(q, NULL, NULL), LEIR_OK);
        applied++;
      } else {
        ck_assert(strlen(leir_error_last()->message) > 0);
        refused++;
      }
      leir_program_free(q);
      leir_step_free(s);
    }
  }
  ck_assert_uint_gt(applied, 50);
  ck_assert_uint_gt(refused, 200);
  leir_candidates_free(c);
  /* random bytes, as text and as JSON */
  uint64_t r = 12345;
  for (int k = 0; k < 5000; k++) {
    char buf[64];
    size_t n = (size_t)(mix(r++) % sizeof buf);
    for (size_t j = 0; j < n; j++) {
      static const char alphabet[] = "loop_split nest=0,1.a{}\":[]tx ";
      buf[j] = (k & 1) ? (char)(mix(r++) & 0xff) : alphabet[mix(r++) % (sizeof alphabet - 1)];
    }
    if (k % 4 == 0 && n) buf[0] = '{';
    leir_step *s = NULL;
    if (leir_step_parse(&s, buf, n) == LEIR_OK) {
      leir_program *q = NULL;
      leir_status st = leir_step_apply(&q, p, s, NULL);
      ck_assert(st == LEIR_OK || st == LEIR_ERR_NOT_APPLICABLE || st == LEIR_ERR_UNSUPPORTED);
      leir_program_free(q);
      leir_step_free(s);
    }
  }
  leir_program_free(p);
}
END_TEST

START_TEST(test_options_and_grounding_without_signature) {
  leir_program *p = test_parse(T3);
  leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
  o.max_candidates = 5;
  leir_candidates *c = NULL;
  ck_assert_int_eq(leir_candidates_list(&c, p, &o), LEIR_ERR_LIMIT);
  ck_assert_ptr_null(c);
  o.max_candidates = 0;
  o.strategy = 44;
  ck_assert_int_eq(leir_candidates_list(&c, p, &o), LEIR_ERR_ARGUMENT);
  o.strategy = 0; /* not implemented: no candidates, no error */
  ck_assert_int_eq(leir_candidates_list(&c, p, &o), LEIR_OK);
  ck_assert_uint_eq(leir_candidates_count(c), 0);
  leir_candidates_free(c);
  /* `after` as text without a signature borrows `before`'s */
  leir_tensor_decl d[3] = {{"A", LEIR_F64, LEIR_ROLE_INPUT, 3, (int64_t[]){4, 6, 8}},
                           {"C", LEIR_F64, LEIR_ROLE_INPUT, 3, (int64_t[]){4, 6, 8}},
                           {"D", LEIR_F64, LEIR_ROLE_OUTPUT, 3, (int64_t[]){4, 6, 8}}};
  ck_assert_int_eq(leir_program_set_signature(p, d, 3), LEIR_OK);
  char *t = apply_text(T3, "cache_read_write nest=0 tensor=C mode=read scope=l", NULL);
  /* other fresh names than libleir's: grounding is up to renaming */
  char *renamed = strdup(t);
  for (char *q = renamed; (q = strstr(q, "E^{f64,l}")); q++) *q = 'Q';
  leir_program *after = test_parse(renamed);
  leir_candidates *hits = NULL;
  ck_assert_int_eq(leir_ground(&hits, p, after, NULL), LEIR_OK);
  ck_assert_uint_eq(leir_candidates_count(hits), 1);
  ck_assert_str_eq(leir_step_text(leir_candidates_step(hits, 0)),
                   "cache_read_write nest=0 tensor=C mode=read scope=l");
  /* the hits are bound to `before`: they apply */
  leir_program *q = NULL;
  ck_assert_int_eq(leir_candidates_apply(&q, hits, 0), LEIR_OK);
  char *back = test_print(q);
  ck_assert_str_eq(back, t);
  free(back);
  leir_program_free(q);
  leir_candidates_free(hits);
  leir_program_free(after);
  free(renamed);
  free(t);
  leir_program_free(p);
}
END_TEST

/* ---- the corpus ------------------------------------------------------------------- */

/* Every candidate of every program: passes the checks, its text and JSON
 * parse back to the same step, and the list is deterministic. For a seeded
 * sample per (program, strategy), leir_step_apply agrees with the list and
 * leir_ground finds the step again. */
START_TEST(test_every_candidate_is_valid_replayable_and_grounds) {
  size_t total = 0, replayed = 0, grounded = 0;
  for (size_t i = 0; i < small.n; i++) {
    const source *e = &small.e[i];
    leir_candidates *c = NULL, *again = NULL;
    ck_assert_msg(leir_candidates_list(&c, e->program, NULL) == LEIR_OK, "%s: %s", e->id,
                  leir_error_last()->message);
    ck_assert_int_eq(leir_candidates_list(&again, e->program, NULL), LEIR_OK);
    size_t n = leir_candidates_count(c);
    ck_assert_uint_eq(leir_candidates_count(again), n);
    ck_assert_msg(n > 0, "%s has no candidates", e->id);
    size_t first[LEIR_STRATEGY_COUNT + 1] = {0}, per[LEIR_STRATEGY_COUNT] = {0};
    for (size_t k = 0; k < n; k++) {
      const leir_step *s = leir_candidates_step(c, k);
      ck_assert_str_eq(leir_step_text(s), leir_step_text(leir_candidates_step(again, k)));
      size_t st = leir_step_strategy(s);
      if (!per[st]++) first[st] = k;
      /* canonical text and JSON both parse back to the same step */
      leir_step *p = step(leir_step_text(s));
      ck_assert_str_eq(leir_step_text(p), leir_step_text(s));
      char *js = NULL;
      ck_assert_int_eq(leir_step_to_json(s, &js, NULL), LEIR_OK);
      leir_step *pj = step(js);
      ck_assert_str_eq(leir_step_text(pj), leir_step_text(s));
      leir_free(js);
      leir_step_free(pj);
      leir_step_free(p);
      leir_program *q = NULL;
      ck_assert_int_eq(leir_candidates_apply(&q, c, k), LEIR_OK);
      if (leir_program_check(q, NULL, NULL) != LEIR_OK) {
        char *t = test_print(q);
        ck_abort_msg("%s: %s gives an invalid program: %s [%s]\n%s", e->id, leir_step_text(s),
                     leir_error_last()->message, leir_error_last()->rule, t);
      }
      ck_assert_uint_eq(leir_program_signature_count(q), leir_program_signature_count(e->program));
      leir_program_free(q);
    }
    total += n;
    /* sampled: apply by text and ground */
    for (size_t st = 0; st < LEIR_STRATEGY_COUNT; st++) {
      for (size_t t = 0; t < 3 && t < per[st]; t++) {
        size_t k = first[st] + (size_t)(mix(i * 131 + st * 7 + t) % per[st]);
        const leir_step *s = leir_candidates_step(c, k);
        leir_program *q1 = NULL, *q2 = NULL;
        leir_exactness cls;
        ck_assert_int_eq(leir_candidates_apply(&q1, c, k), LEIR_OK);
        ck_assert_msg(leir_step_apply(&q2, e->program, s, &cls) == LEIR_OK, "%s: %s: %s", e->id,
                      leir_step_text(s), leir_error_last()->message);
        ck_assert_int_eq(cls, leir_candidates_exactness(c, k));
        char *t1 = test_print(q1), *t2 = test_print(q2);
        ck_assert_str_eq(t1, t2);
        free(t1);
        free(t2);
        replayed++;
        leir_candidates *g = NULL;
        leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
        o.strategy = (int32_t)st;
        ck_assert_int_eq(leir_ground(&g, e->program, q1, &o), LEIR_OK);
        bool found = false;
        for (size_t h = 0; h < leir_candidates_count(g) && !found; h++)
          found = strcmp(leir_step_text(leir_candidates_step(g, h)), leir_step_text(s)) == 0;
        ck_assert_msg(found, "%s: ground does not find %s", e->id, leir_step_text(s));
        grounded++;
        leir_candidates_free(g);
        leir_program_free(q1);
        leir_program_free(q2);
      }
    }
    leir_candidates_free(again);
    leir_candidates_free(c);
  }
  /* every implemented strategy fires somewhere in the corpus */
  for (size_t st = 9; st <= 24; st++) {
    leir_strategy_info info = *leir_strategy_info_at(st);
    size_t n = 0;
    for (size_t i = 0; i < small.n && !n; i++) n = count_for(small.e[i].program, info.name);
    ck_assert_msg(n > 0, "%s never applies to the corpus", info.name);
  }
  ck_assert_uint_gt(total, 100000);
  ck_assert_uint_gt(replayed, 1000);
  ck_assert_uint_eq(grounded, replayed);
}
END_TEST

/* Real reference outputs (tests/data/strategy/reference-steps.tsv) ground
 * to the expected step; a reference bug (a reduction_factorization that
 * does not verify) and a deliberately excluded form ground to none. */
START_TEST(test_reference_outputs_ground) {
  char *text = test_read_file(test_data_path("strategy/reference-steps.tsv"), NULL);
  size_t rows = 0, none = 0;
  for (char *line = text, *next; line && *line; line = next) {
    next = strchr(line, '\n'); /* not strtok: the corpus reader uses it */
    if (next) *next++ = '\0';
    if (line[0] == '#' || !line[0]) continue;
    char *f[5];
    for (int k = 0; k < 5; k++) {
      f[k] = line;
      char *tab = strchr(line, '\t');
      if (tab) *tab = '\0', line = tab + 1;
      else line += strlen(line);
    }
    const corpus_entry *row = NULL;
    for (size_t i = 0; i < small.n && !row; i++)
      if (strcmp(small.rows[i].id, f[0]) == 0) row = &small.rows[i];
    ck_assert_msg(row != NULL, "no source %s", f[0]);
    leir_program *before = corpus_program_text(row, strcmp(f[3], "-") == 0 ? row->leir : f[3]);
    leir_program *after = corpus_program_text(row, f[4]);
    size_t idx;
    ck_assert_int_eq(leir_strategy_find(f[1], &idx), LEIR_OK);
    leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
    o.strategy = (int32_t)idx;
    leir_candidates *hits = NULL;
    ck_assert_int_eq(leir_ground(&hits, before, after, &o), LEIR_OK);
    if (strcmp(f[2], "none") == 0) {
      ck_assert_msg(leir_candidates_count(hits) == 0, "%s %s grounds to %s", f[0], f[1],
                    leir_step_text(leir_candidates_step(hits, 0)));
      none++;
    } else {
      bool found = false;
      for (size_t h = 0; h < leir_candidates_count(hits) && !found; h++)
        found = strcmp(leir_step_text(leir_candidates_step(hits, h)), f[2]) == 0;
      ck_assert_msg(found, "%s: %s not found", f[0], f[2]);
    }
    rows++;
    leir_candidates_free(hits);
    leir_program_free(before);
    leir_program_free(after);
  }
  ck_assert_uint_ge(rows, 28);
  ck_assert_uint_eq(none, 2);
  free(text);
}
END_TEST

/* Random walks of 8 steps (strategy first, then a candidate, both seeded)
 * stay valid and keep enumerating; the same seed gives the same walk. */
static char *walk(const leir_program *start, uint64_t seed, int steps) {
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_clone(&p, start), LEIR_OK);
  for (int t = 0; t < steps; t++) {
    leir_candidates *c = NULL;
    ck_assert_int_eq(leir_candidates_list(&c, p, NULL), LEIR_OK);
    size_t per[LEIR_STRATEGY_COUNT] = {0}, first[LEIR_STRATEGY_COUNT] = {0}, nonempty = 0;
    for (size_t k = 0; k < leir_candidates_count(c); k++) {
      size_t st = leir_step_strategy(leir_candidates_step(c, k));
      if (!per[st]++) first[st] = k, nonempty++;
    }
    ck_assert_uint_gt(nonempty, 0);
    uint64_t r = mix(seed * 1000 + (uint64_t)t);
    size_t pick = r % nonempty, st = 0;
    for (;; st++)
      if (per[st] && pick-- == 0) break;
    size_t k = first[st] + (size_t)(mix(r) % per[st]);
    leir_program *q = NULL;
    ck_assert_int_eq(leir_candidates_apply(&q, c, k), LEIR_OK);
    if (leir_program_check(q, NULL, NULL) != LEIR_OK) {
      char *before = test_print(p), *after = test_print(q);
      ck_abort_msg("step %d %s: %s\n%s\n->\n%s", t, leir_step_text(leir_candidates_step(c, k)),
                   leir_error_last()->message, before, after);
    }
    leir_candidates_free(c);
    leir_program_free(p);
    p = q;
  }
  char *out = test_print(p);
  leir_program_free(p);
  return out;
}

START_TEST(test_random_walks_stay_valid_and_are_reproducible) {
  for (size_t i = 0; i < small.n; i += 3) {
    char *a = walk(small.e[i].program, i + 1, 8);
    char *b = walk(small.e[i].program, i + 1, 8);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
  }
}
END_TEST

/* ---- the rules of the strategies --------------------------------------------------- */


START_TEST(test_tiling_and_split_match_the_reference_examples) {
  /* strategies-reference.md §5.2 and §5.3, byte for byte */
  char *t = apply_text(T3, "loop_tiling nest=0 loops=tx,a factors=2,2", NULL);
  ck_assert_str_eq(t, "L^{2}_{g=0}L^{2}_{h=0}B^{2}_{tx=0}L^{3}_{a=0}L^{8}_{c=0}[D^{f64,g}_{g*2+tx,h*3+a,c}="
                      "A^{f64,g}_{g*2+tx,h*3+a,c}*C^{f64,g}_{g*2+tx,h*3+a,c};];");
  free(t);
  t = apply_text("B^{8}_{tx=0}L^{64}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a};];",
                 "loop_split nest=0 loop=tx factor=2", NULL);
  ck_assert_str_eq(t, "L^{2}_{f=0}B^{4}_{tx=0}L^{64}_{a=0}[C^{f64,g}_{f*4+tx}=C^{f64,g}_{f*4+tx}+A^{f64,g}_{f*4+tx,a};];");
  free(t);
  /* a variable inside a larger entry gets parentheses, as in the reference */
  t = apply_text("B^{4}_{tx=0}L^{8}_{c=0}L^{3}_{g=0}[D^{f64,g}_{tx,c}=D^{f64,g}_{tx,c}+A^{f64,g}_{tx,c+g};];",
                 "loop_split nest=0 loop=c factor=2", NULL);
  /* the reference would name the new loop g (position 3 + 1), which the nest
   * uses: the next free name is taken */
  ck_assert_str_eq(t, "B^{4}_{tx=0}L^{2}_{h=0}L^{4}_{c=0}L^{3}_{g=0}[D^{f64,g}_{tx,h*4+c}="
                      "D^{f64,g}_{tx,h*4+c}+A^{f64,g}_{tx,(h*4+c)+g};];");
  free(t);
}
END_TEST

START_TEST(test_fusion_undoes_split_and_tiling) {
  const char *src = "B^{4}_{tx=0}L^{8}_{c=0}L^{3}_{g=0}[D^{f64,g}_{tx,c}=D^{f64,g}_{tx,c}+"
                    "if_then_else(c<7,A^{f64,g}_{tx,c+g},0);];";
  char *split = apply_text(src, "loop_split nest=0 loop=c factor=2", NULL);
  ck_assert_ptr_nonnull(strstr(split, "(h*4+c)<7"));
  char *back = apply_text(split, "loop_fusion nest=0 loops=h,c", NULL);
  ck_assert_str_eq(back, src);
  free(back);
  free(split);
  char *tiled = apply_text(T3, "loop_tiling nest=0 loops=a,c factors=2,2", NULL);
  char *f1 = apply_text(tiled, "loop_reorder nest=0 loops=h,a", NULL);
  char *f2 = apply_text(f1, "loop_fusion nest=0 loops=h,c", NULL);
  char *f3 = apply_text(f2, "loop_fusion nest=0 loops=g,a", NULL);
  ck_assert_str_eq(f3, T3);
  free(f3);
  free(f2);
  free(f1);
  free(tiled);
  /* O and X used apart: not a fusion site */
  leir_program *p = test_parse("B^{4}_{tx=0}L^{2}_{f=0}L^{3}_{a=0}[D^{f64,g}_{tx,f*3+a}=A^{f64,g}_{tx,a};];");
  ck_assert_uint_eq(count_for(p, "loop_fusion"), 0);
  leir_program_free(p);
}
END_TEST

START_TEST(test_reorder_classes_follow_the_dependences) {
  const char *sum = "B^{4}_{tx=0}L^{6}_{a=0}L^{8}_{c=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a,c};];";
  const char *mx = "B^{4}_{tx=0}L^{6}_{a=0}L^{8}_{c=0}[C^{f64,g}_{tx}=max(C^{f64,g}_{tx},A^{f64,g}_{tx,a,c});];";
  leir_exactness cls;
  free(apply_text(sum, "loop_reorder nest=0 loops=tx,a", &cls));
  ck_assert_int_eq(cls, LEIR_EXACT); /* a spatial loop moves past a reduction loop */
  free(apply_text(sum, "loop_reorder nest=0 loops=a,c", &cls));
  ck_assert_int_eq(cls, LEIR_REASSOCIATING); /* the order of the summation changes */
  free(apply_text(mx, "loop_reorder nest=0 loops=a,c", &cls));
  ck_assert_int_eq(cls, LEIR_EXACT); /* max does not care */
  /* accepted in either order */
  free(apply_text(sum, "loop_reorder nest=0 loops=c,a", &cls));
  ck_assert_int_eq(cls, LEIR_REASSOCIATING);
  /* a scan along a: a must stay outside c when c indexes the running value */
  const char *scan = "B^{4}_{tx=0}L^{6}_{a=0}L^{8}_{c=0}[X^{f64,g}_{tx,a*8+c}=if_then_else(a*8+c-1<0,0,"
                     "X^{f64,g}_{tx,a*8+c-1})+A^{f64,g}_{tx,a,c};];";
  leir_program *p = test_parse(scan);
  ck_assert(!has_candidate(p, "loop_reorder nest=0 loops=a,c"));
  ck_assert(has_candidate(p, "loop_reorder nest=0 loops=tx,a"));
  leir_program_free(p);
  /* argmax: the running max and the index it guards must keep their order */
  const char *argmax = "B^{4}_{tx=0}[C^{i64,g}_{tx}=0;];"
                       "B^{4}_{tx=0}L^{6}_{a=0}L^{8}_{c=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a,c});"
                       "C^{i64,g}_{tx}=if_then_else(A^{f64,g}_{tx,a,c}>=D^{f64,g}_{tx},a*8+c,C^{i64,g}_{tx});];";
  p = test_parse(argmax);
  ck_assert(!has_candidate(p, "loop_reorder nest=1 loops=a,c"));
  ck_assert(!has_candidate(p, "loop_tiling nest=1 loops=a,c factors=2,2"));
  ck_assert(has_candidate(p, "loop_tiling nest=1 loops=tx,a factors=2,2"));
  leir_program_free(p);
}
END_TEST

START_TEST(test_annotations_respect_limits_and_independence) {
  /* a reduction loop is never P, V or B; extent limits on V, U and axes */
  const char *src = "B^{4}_{tx=0}L^{2000}_{a=0}L^{100}_{c=0}L^{6}_{d=0}[C^{f64,g}_{tx,a,c}="
                    "C^{f64,g}_{tx,a,c}+A^{f64,g}_{tx,a,d}*E^{f64,g}_{c,d};];";
  leir_program *p = test_parse(src);
  ck_assert(!has_candidate(p, "loop_parallelization nest=0 loop=d"));
  ck_assert(!has_candidate(p, "loop_binding nest=0 loop=d axis=ty"));
  ck_assert(!has_candidate(p, "loop_vectorization nest=0 loop=d"));
  ck_assert(has_candidate(p, "loop_parallelization nest=0 loop=a"));
  ck_assert(has_candidate(p, "loop_unrolling nest=0 loop=d"));   /* unrolling never races */
  ck_assert(!has_candidate(p, "loop_unrolling nest=0 loop=a"));  /* 2000 > 1024 */
  ck_assert(!has_candidate(p, "loop_vectorization nest=0 loop=c")); /* 100 > 8 */
  ck_assert(!has_candidate(p, "loop_binding nest=0 loop=a axis=ty")); /* 2000 > 1024 */
  ck_assert(has_candidate(p, "loop_binding nest=0 loop=a axis=by"));
  ck_assert(!has_candidate(p, "loop_binding nest=0 loop=c axis=tz"));   /* 100 > 64 */
  ck_assert(has_candidate(p, "loop_binding nest=0 loop=c axis=ty"));    /* 4*100 threads */
  ck_assert(!has_candidate(p, "loop_binding nest=0 loop=c axis=tx"));   /* tx is taken */
  char *t = apply_text(src, "loop_binding nest=0 loop=c axis=ty", NULL);
  ck_assert_ptr_nonnull(strstr(t, "B^{100}_{tyc=0}"));
  ck_assert_ptr_nonnull(strstr(t, "E^{f64,g}_{tyc,d}"));
  /* once c is on threadIdx.y, no other loop of the nest may use it */
  leir_program *q = test_parse(t);
  ck_assert(!has_candidate(q, "loop_binding nest=0 loop=a axis=ty"));
  leir_program_free(q);
  free(t);
  /* the vector width is an option */
  size_t idx;
  leir_strategy_find("loop_vectorization", &idx);
  leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
  o.strategy = (int32_t)idx;
  o.vector_width = 128;
  leir_candidates *c = NULL;
  ck_assert_int_eq(leir_candidates_list(&c, p, &o), LEIR_OK);
  ck_assert_uint_eq(leir_candidates_count(c), 1);
  ck_assert_str_eq(leir_step_text(leir_candidates_step(c, 0)), "loop_vectorization nest=0 loop=c");
  leir_candidates_free(c);
  leir_program_free(p);
}
END_TEST

START_TEST(test_fresh_names_never_collide) {
  /* the nest already uses g and h, the reference's next loop names */
  const char *src = "B^{4}_{tx=0}L^{6}_{g=0}L^{8}_{h=0}[D^{f64,g}_{tx,g,h}=A^{f64,g}_{tx,g,h};];";
  char *t = apply_text(src, "loop_tiling nest=0 loops=g,h factors=2,2", NULL);
  ck_assert_str_eq(t, "B^{4}_{tx=0}L^{2}_{i=0}L^{2}_{j=0}L^{3}_{g=0}L^{4}_{h=0}[D^{f64,g}_{tx,i*3+g,j*4+h}="
                      "A^{f64,g}_{tx,i*3+g,j*4+h};];");
  free(t);
  /* tensors: the first index above every name in use (Z -> Aa) */
  t = apply_text("B^{4}_{tx=0}L^{6}_{a=0}[Z^{f64,g}_{tx,a}=A^{f64,g}_{tx,a}*2;];",
                 "cache_read_write nest=0 tensor=A mode=read scope=s", NULL);
  ck_assert_str_eq(t, "B^{4}_{tx=0}L^{6}_{a=0}[Aa^{f64,s}_{tx,a}=A^{f64,g}_{tx,a};];"
                      "B^{4}_{tx=0}L^{6}_{a=0}[Z^{f64,g}_{tx,a}=Aa^{f64,s}_{tx,a}*2;];");
  free(t);
  /* a bound name that exists in the nest gets a suffix */
  t = apply_text("B^{4}_{tx=0}L^{6}_{a=0}L^{2}_{tya=0}[D^{f64,g}_{tx,a,tya}=A^{f64,g}_{tx,a,tya};];",
                 "loop_binding nest=0 loop=a axis=ty", NULL);
  ck_assert_ptr_nonnull(strstr(t, "B^{6}_{tya_1=0}"));
  free(t);
}
END_TEST

START_TEST(test_reduction_factorization_partials_and_combination) {
  /* strategies-reference.md §5.9, with fresh names E and F */
  const char *mm = "B^{8}_{tx=0}L^{32}_{a=0}L^{16}_{c=0}[C^{f64,g}_{tx,a}=C^{f64,g}_{tx,a}+"
                   "A^{f64,g}_{tx,c}*D^{f64,g}_{a,c};];";
  leir_exactness cls;
  char *t = apply_text(mm, "reduction_factorization nest=0 loop=c at=13", &cls);
  ck_assert_int_eq(cls, LEIR_REASSOCIATING);
  ck_assert_str_eq(t, "B^{8}_{tx=0}L^{32}_{a=0}L^{13}_{c=0}[E^{f64,g}_{tx,a}=E^{f64,g}_{tx,a}+A^{f64,g}_{tx,c}*D^{f64,g}_{a,c};];"
                      "B^{8}_{tx=0}L^{32}_{a=0}L^{3}_{c=0}[F^{f64,g}_{tx,a}=F^{f64,g}_{tx,a}+A^{f64,g}_{tx,c+13}*D^{f64,g}_{a,c+13};];"
                      "B^{8}_{tx=0}L^{32}_{a=0}[C^{f64,g}_{tx,a}=C^{f64,g}_{tx,a}+(E^{f64,g}_{tx,a}+F^{f64,g}_{tx,a});];");
  free(t);
  /* max is exact; other reduction loops index the partials (the reference
   * drops them and sums each partial several times) */
  t = apply_text("B^{4}_{tx=0}L^{3}_{a=0}L^{5}_{c=0}[G^{f64,g}_{tx}=max(G^{f64,g}_{tx},A^{f64,g}_{tx,a,c});];",
                 "reduction_factorization nest=0 loop=c at=2", &cls);
  ck_assert_int_eq(cls, LEIR_EXACT);
  ck_assert_str_eq(t, "B^{4}_{tx=0}L^{3}_{a=0}L^{2}_{c=0}[H^{f64,g}_{tx,a}=max(H^{f64,g}_{tx,a},A^{f64,g}_{tx,a,c});];"
                      "B^{4}_{tx=0}L^{3}_{a=0}L^{3}_{c=0}[I^{f64,g}_{tx,a}=max(I^{f64,g}_{tx,a},A^{f64,g}_{tx,a,c+2});];"
                      "B^{4}_{tx=0}L^{3}_{a=0}[G^{f64,g}_{tx}=max(G^{f64,g}_{tx},max(H^{f64,g}_{tx,a},I^{f64,g}_{tx,a}));];");
  free(t);
  /* factorizing the bound loop of a scalar sum: the combination keeps a B loop */
  t = apply_text("B^{16}_{tx=0}[H^{f64,g}=H^{f64,g}+A^{f64,g}_{tx};];",
                 "reduction_factorization nest=0 loop=tx at=4", NULL);
  ck_assert_str_eq(t, "B^{4}_{tx=0}[I^{f64,g}=I^{f64,g}+A^{f64,g}_{tx};];B^{12}_{tx=0}[J^{f64,g}=J^{f64,g}+A^{f64,g}_{tx+4};];"
                      "B^{1}_{tx=0}[H^{f64,g}=H^{f64,g}+(I^{f64,g}+J^{f64,g});];");
  free(t);
}
END_TEST

START_TEST(test_memory_strategies_follow_the_reference_forms) {
  const char *mm = "B^{16}_{tx=0}L^{12}_{a=0}L^{16}_{c=0}[F^{f64,g}_{tx,a}=F^{f64,g}_{tx,a}+D^{f64,g}_{tx,c}*C^{f64,g}_{c,a};];";
  /* the copy runs over C's loops c, a (nest order a, c); a becomes tx */
  char *t = apply_text(mm, "layout_transformation nest=0 tensor=C layout=transpose perm=1,0", NULL);
  ck_assert_str_eq(t, "B^{12}_{tx=0}L^{16}_{c=0}[G^{f64,g}_{tx,c}=C^{f64,g}_{c,tx};];"
                      "B^{16}_{tx=0}L^{12}_{a=0}L^{16}_{c=0}[F^{f64,g}_{tx,a}=F^{f64,g}_{tx,a}+D^{f64,g}_{tx,c}*G^{f64,g}_{a,c};];");
  free(t);
  t = apply_text(mm, "layout_transformation nest=0 tensor=C layout=reshape1 dim=0 factor=2", NULL);
  ck_assert_str_eq(t, "B^{2}_{tx=0}L^{8}_{c=0}L^{12}_{a=0}[G^{f64,g}_{tx,c,a}=C^{f64,g}_{tx*8+c,a};];"
                      "B^{16}_{tx=0}L^{12}_{a=0}L^{16}_{c=0}[F^{f64,g}_{tx,a}=F^{f64,g}_{tx,a}+D^{f64,g}_{tx,c}*G^{f64,g}_{c//8,c%8,a};];");
  free(t);
  t = apply_text(mm, "cache_read_write nest=0 tensor=F mode=write scope=l", NULL);
  ck_assert_str_eq(t, "B^{16}_{tx=0}L^{12}_{a=0}L^{16}_{c=0}[G^{f64,l}_{tx,a}=G^{f64,l}_{tx,a}+D^{f64,g}_{tx,c}*C^{f64,g}_{c,a};];"
                      "B^{16}_{tx=0}L^{12}_{a=0}[F^{f64,g}_{tx,a}=G^{f64,l}_{tx,a};];");
  free(t);
  /* column-major flatten and the split of an intermediate in every access */
  const char *two = "B^{16}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx,a}=A^{f64,g}_{tx,a}*2;];"
                    "B^{16}_{tx=0}L^{4}_{a=0}[C^{f64,g}_{tx,a}=D^{f64,g}_{tx,a}+1;];";
  t = apply_text(two, "set_storage_layout tensor=D layout=flatten", NULL);
  ck_assert_str_eq(t, "B^{16}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{a*16+tx}=A^{f64,g}_{tx,a}*2;];"
                      "B^{16}_{tx=0}L^{4}_{a=0}[C^{f64,g}_{tx,a}=D^{f64,g}_{a*16+tx}+1;];");
  free(t);
  t = apply_text(two, "set_storage_layout tensor=D layout=reshape1 dim=0 factor=4", NULL);
  ck_assert_str_eq(t, "B^{16}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx//4,tx%4,a}=A^{f64,g}_{tx,a}*2;];"
                      "B^{16}_{tx=0}L^{4}_{a=0}[C^{f64,g}_{tx,a}=D^{f64,g}_{tx//4,tx%4,a}+1;];");
  free(t);
  t = apply_text(two, "set_storage_scope tensor=D scope=l", NULL);
  ck_assert_str_eq(t, "B^{16}_{tx=0}L^{4}_{a=0}[D^{f64,l}_{tx,a}=A^{f64,g}_{tx,a}*2;];"
                      "B^{16}_{tx=0}L^{4}_{a=0}[C^{f64,g}_{tx,a}=D^{f64,l}_{tx,a}+1;];");
  free(t);
  /* strategies-reference.md §6.5: a guarded padding read through a table */
  t = apply_text("B^{16}_{tx=0}L^{12}_{a=0}L^{28}_{c=0}[D^{f64,g}_{tx,a,c}=if_then_else(2<=c<26,"
                 "A^{f64,g}_{tx,a,c-2},-inf);];",
                 "precompute_indices nest=0 entry=c-2", NULL);
  ck_assert_str_eq(t, "B^{28}_{tx=0}[E^{i64,g}_{tx}=tx-2;];B^{16}_{tx=0}L^{12}_{a=0}L^{28}_{c=0}"
                      "[D^{f64,g}_{tx,a,c}=if_then_else(2<=c<26,A^{f64,g}_{tx,a,E^{i64,g}_{c}},-inf);];");
  free(t);
  /* inputs and outputs keep their scope and layout */
  leir_program *p = test_parse(two);
  ck_assert_uint_eq(count_for(p, "set_storage_scope"), 2); /* D: s and l */
  leir_program_free(p);
}
END_TEST

START_TEST(test_nested_nests_are_sites) {
  const char *src = "B^{2}_{tx=0}L^{4}_{a=0}[M^{f64,g}_{tx,a}=A^{f64,g}_{tx,a}*2;"
                    "L^{6}_{h=0}[O^{f64,g}_{tx,a,h}=M^{f64,g}_{tx,a}+C^{f64,g}_{a,h};];];";
  leir_program *p = test_parse(src);
  ck_assert(has_candidate(p, "loop_split nest=0.1 loop=h factor=2"));
  ck_assert(has_candidate(p, "loop_parallelization nest=0.1 loop=h"));
  ck_assert(has_candidate(p, "loop_binding nest=0.1 loop=h axis=ty"));
  leir_program_free(p);
  char *t = apply_text(src, "loop_split nest=0.1 loop=h factor=2", NULL);
  /* one loop in the nested nest: the new name is at position 2, d */
  ck_assert_str_eq(t, "B^{2}_{tx=0}L^{4}_{a=0}[M^{f64,g}_{tx,a}=A^{f64,g}_{tx,a}*2;L^{2}_{d=0}L^{3}_{h=0}"
                      "[O^{f64,g}_{tx,a,d*3+h}=M^{f64,g}_{tx,a}+C^{f64,g}_{a,d*3+h};];];");
  free(t);
}
END_TEST

/* ---- explain and not-applicable steps ------------------------------------------------ */

static const leir_reason *find_reason(const leir_explanation *e, const char *site) {
  for (size_t i = 0; i < leir_explanation_count(e); i++) {
    const leir_reason *r = leir_explanation_get(e, i);
    if (!r->applies && strcmp(r->site, site) == 0) return r;
  }
  return NULL;
}

START_TEST(test_explain_names_the_failed_precondition) {
  leir_program *p = test_parse("B^{4}_{tx=0}L^{7}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a};];");
  static const struct {
    const char *strategy, *site, *rule;
  } want[] = {
      {"loop_parallelization", "nest=0 loop=a", "loop.not-parallel-safe"},
      {"loop_parallelization", "nest=0 loop=tx", "loop.kind"},
      {"loop_split", "nest=0 loop=a", "loop.no-divisor"},
      {"loop_tiling", "nest=0 loops=tx,a", "loop.no-divisor"},
      {"loop_fusion", "nest=0 loops=tx,a", "loop_fusion.outer-kind"},
      {"set_storage_scope", "tensor=C", "storage.known"},
      {"set_storage_layout", "tensor=A", "storage.known"},
      {"precompute_indices", "nest=0", "precompute_indices.entries"},
      {"layout_transformation", "nest=0 tensor=C", "memory.written"},
      {"cache_read_write", "nest=0 tensor=C", "memory.written"},
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    size_t idx;
    ck_assert_int_eq(leir_strategy_find(want[i].strategy, &idx), LEIR_OK);
    leir_explanation *e = NULL;
    ck_assert_int_eq(leir_strategy_explain(&e, p, idx), LEIR_OK);
    const leir_reason *r = find_reason(e, want[i].site);
    ck_assert_msg(r != NULL, "%s: no reason for %s", want[i].strategy, want[i].site);
    ck_assert_str_eq(r->rule, want[i].rule);
    ck_assert(strlen(r->message) > 10);
    leir_explanation_free(e);
  }
  /* a strategy that applies lists its candidates */
  size_t idx;
  leir_strategy_find("reduction_factorization", &idx);
  leir_explanation *e = NULL;
  ck_assert_int_eq(leir_strategy_explain(&e, p, idx), LEIR_OK);
  ck_assert_uint_eq(leir_explanation_candidates(e), 6);
  char *text = NULL;
  ck_assert_int_eq(leir_explanation_text(e, &text, NULL), LEIR_OK);
  ck_assert_ptr_nonnull(strstr(text, "reduction_factorization applies: 6 candidates\n"));
  ck_assert_ptr_nonnull(strstr(text, "candidate: reduction_factorization nest=0 loop=a at=3 (reassociating)"));
  leir_free(text);
  leir_explanation_free(e);
  /* a strategy whose nests do not have its form says which: this one-nest
   * program has no padding nest followed by three more */
  leir_strategy_find("partially_equivalent_then_correct", &idx);
  ck_assert_int_eq(leir_strategy_explain(&e, p, idx), LEIR_OK);
  ck_assert_uint_eq(leir_explanation_candidates(e), 0);
  ck_assert_str_eq(leir_explanation_get(e, 0)->rule, "partially_equivalent.form");
  leir_explanation_free(e);
  /* a catalogue line without an implementation (a strategy still being
   * written; none once all 44 are done) says so in explain and apply */
  for (size_t u = 0; u < leir_strategy_count(); u++) {
    if (leir_strategy_info_at(u)->implemented) continue;
    ck_assert_int_eq(leir_strategy_explain(&e, p, u), LEIR_OK);
    ck_assert_uint_eq(leir_explanation_candidates(e), 0);
    ck_assert_str_eq(leir_explanation_get(e, 0)->rule, "strategy.not-implemented");
    leir_explanation_free(e);
  }
  /* applying a step that is not a candidate reports the same precondition */
  leir_step *s = step("loop_parallelization nest=0 loop=a");
  leir_program *q = (leir_program *)1;
  ck_assert_int_eq(leir_step_apply(&q, p, s, NULL), LEIR_ERR_NOT_APPLICABLE);
  ck_assert_ptr_null(q);
  ck_assert_str_eq(leir_error_last()->rule, "loop.not-parallel-safe");
  ck_assert_str_eq(leir_error_last()->subject, "nest=0 loop=a");
  leir_step_free(s);
  s = step("loop_split nest=3 loop=a factor=2");
  ck_assert_int_eq(leir_step_apply(&q, p, s, NULL), LEIR_ERR_NOT_APPLICABLE);
  ck_assert_str_eq(leir_error_last()->rule, "step.not-a-candidate");
  leir_step_free(s);
  /* partially_equivalent_then_correct needs its nest and loop */
  ck_assert_int_eq(leir_step_parse(&s, "partially_equivalent_then_correct nest=0", 40),
                   LEIR_ERR_PARSE);
  ck_assert_str_eq(leir_error_last()->rule, "step.missing");
  s = step("partially_equivalent_then_correct nest=0 loop=a");
  ck_assert_int_eq(leir_step_apply(&q, p, s, NULL), LEIR_ERR_NOT_APPLICABLE);
  ck_assert_str_eq(leir_error_last()->rule, "partially_equivalent.form");
  leir_step_free(s);
  leir_program_free(p);
  /* programs that fail their checks have no candidates */
  p = test_parse("B^{4}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx+1};];");
  leir_tensor_decl d[2] = {{"A", LEIR_F64, LEIR_ROLE_INPUT, 1, (int64_t[]){4}},
                           {"C", LEIR_F64, LEIR_ROLE_OUTPUT, 1, (int64_t[]){4}}};
  ck_assert_int_eq(leir_program_set_signature(p, d, 2), LEIR_OK);
  leir_candidates *c = NULL;
  ck_assert_int_eq(leir_candidates_list(&c, p, NULL), LEIR_ERR_INVALID);
  ck_assert_ptr_null(c);
  leir_program_free(p);
}
END_TEST

/* ---- chain of thought ------------------------------------------------------------------ */

static char *cot(const char *prog, const char *st) {
  leir_program *p = test_parse(prog);
  leir_step *s = step(st);
  char *out = NULL;
  ck_assert_int_eq(leir_step_cot(&out, NULL, p, s), LEIR_OK);
  char *again = NULL;
  ck_assert_int_eq(leir_step_cot(&again, NULL, p, s), LEIR_OK);
  ck_assert_str_eq(out, again); /* same step, same text */
  leir_free(again);
  leir_step_free(s);
  leir_program_free(p);
  return out;
}

START_TEST(test_cot_is_grounded_in_the_diff) {
  char *t = cot(T3, "loop_reorder nest=0 loops=a,c");
  ck_assert_str_eq(t,
                   "Loop reorder exchanges the nesting order of two loops of an expression. Under the given IR, "
                   "the loops B^{4}_{tx=0}L^{6}_{a=0}L^{8}_{c=0} of the expression " T3 " can be reordered as "
                   "the loops B^{4}_{tx=0}L^{8}_{c=0}L^{6}_{a=0}, giving the expression "
                   "B^{4}_{tx=0}L^{8}_{c=0}L^{6}_{a=0}[D^{f64,g}_{tx,a,c}=A^{f64,g}_{tx,a,c}*C^{f64,g}_{tx,a,c};];. "
                   "A better loop order makes the innermost loop walk memory contiguously and improves locality.");
  leir_free(t);
  t = cot(T3, "loop_vectorization nest=0 loop=c");
  ck_assert_str_eq(t,
                   "Loop vectorization executes the iterations of a short independent loop with SIMD instructions. "
                   "Under the given IR, the loop L^{8}_{c=0} in the loops B^{4}_{tx=0}L^{6}_{a=0}L^{8}_{c=0} of "
                   "the expression " T3 " can be vectorized as V^{8}_{c=0}, so the loops become "
                   "B^{4}_{tx=0}L^{6}_{a=0}V^{8}_{c=0} in the expression "
                   "B^{4}_{tx=0}L^{6}_{a=0}V^{8}_{c=0}[D^{f64,g}_{tx,a,c}=A^{f64,g}_{tx,a,c}*C^{f64,g}_{tx,a,c};];. "
                   "SIMD instructions process several elements per instruction.");
  leir_free(t);
  const char *two = "B^{16}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx,a}=A^{f64,g}_{tx,a}*2;];"
                    "B^{16}_{tx=0}L^{4}_{a=0}[C^{f64,g}_{tx,a}=D^{f64,g}_{tx,a}+1;];";
  t = cot(two, "set_storage_scope tensor=D scope=s");
  ck_assert_str_eq(t,
                   "Set storage scope places an intermediate tensor in global, shared or local memory. Under "
                   "the given IR, the intermediate variable D^{f64,g} can be set in shared memory as D^{f64,s} "
                   "in the 2 expressions that use it. Keeping an intermediate in shared or local memory avoids "
                   "slow global-memory traffic.");
  leir_free(t);
  t = cot("B^{16}_{tx=0}L^{12}_{a=0}[C^{f64,g}_{tx,a}=max(A^{f64,g}_{tx,a},0);];",
          "cache_read_write nest=0 tensor=A mode=read scope=l");
  ck_assert_str_eq(t,
                   "Cache read/write stages a tensor through a copy in faster shared or local memory, reading it "
                   "in before use or writing results back after. Under the given IR, the variable "
                   "A^{f64,g}_{tx,a} in the expression B^{16}_{tx=0}L^{12}_{a=0}[C^{f64,g}_{tx,a}=max(A^{f64,g}_{tx,a},0);]; "
                   "can be read into local memory as D^{f64,l}_{tx,a} by the expression "
                   "B^{16}_{tx=0}L^{12}_{a=0}[D^{f64,l}_{tx,a}=A^{f64,g}_{tx,a};];, and the expression becomes "
                   "B^{16}_{tx=0}L^{12}_{a=0}[C^{f64,g}_{tx,a}=max(D^{f64,l}_{tx,a},0);];. Repeated accesses then "
                   "hit fast on-chip memory instead of global memory.");
  leir_free(t);
  t = cot("B^{16}_{tx=0}L^{12}_{a=0}L^{28}_{c=0}[D^{f64,g}_{tx,a,c}=if_then_else(2<=c<26,A^{f64,g}_{tx,a,c-2},-inf);];",
          "precompute_indices nest=0 entry=c-2");
  ck_assert_str_eq(t,
                   "Precompute indices stores a compound index expression in an integer table and indexes "
                   "through the table. Under the given IR, the index c-2 in the expression "
                   "B^{16}_{tx=0}L^{12}_{a=0}L^{28}_{c=0}[D^{f64,g}_{tx,a,c}=if_then_else(2<=c<26,"
                   "A^{f64,g}_{tx,a,c-2},-inf);]; can be precomputed as the variable E^{i64,g}_{c} by the "
                   "expression B^{28}_{tx=0}[E^{i64,g}_{tx}=tx-2;];, and the expression becomes "
                   "B^{16}_{tx=0}L^{12}_{a=0}L^{28}_{c=0}[D^{f64,g}_{tx,a,c}=if_then_else(2<=c<26,"
                   "A^{f64,g}_{tx,a,E^{i64,g}_{c}},-inf);];. The index arithmetic is done once instead of "
                   "at every access.");
  leir_free(t);
  t = cot(two, "set_storage_layout tensor=D layout=transpose perm=1,0");
  ck_assert_ptr_nonnull(strstr(t, "the memory layout of the intermediate variable D can change from "
                                  "D^{f64,g}_{tx,a} to D^{f64,g}_{a,tx}; all its accesses in the 2 expressions"));
  leir_free(t);
}
END_TEST

/* ---- grounding at scale ------------------------------------------------------ */

/* True when the ground of (before, after) lists `text`. */
static bool grounds_to(const leir_program *before, const leir_program *after, const char *text) {
  leir_candidates *hits = NULL;
  ck_assert_int_eq(leir_ground(&hits, before, after, NULL), LEIR_OK);
  bool found = false;
  for (size_t i = 0; i < leir_candidates_count(hits) && !found; i++)
    found = strcmp(leir_step_text(leir_candidates_step(hits, i)), text) == 0;
  leir_candidates_free(hits);
  return found;
}

/* Grounding compares only the candidates whose site can explain the nests
 * that differ: every candidate of a multi-nest program (steps that insert
 * nests before or after their site, replace one nest by three, or edit
 * every nest that uses a tensor) is still found from its own result, also
 * when the result's intermediates are renamed. */
START_TEST(test_ground_finds_every_candidate_of_a_multi_nest_program) {
  const char *text =
      "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];"
      "B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];"
      "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];";
  leir_program *p = test_parse(text);
  /* the signature fixed (A -> C): online_softmax puts the whole softmax in
   * one nest, where inference alone would make D and E outputs */
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  leir_candidates *all = NULL;
  ck_assert_int_eq(leir_candidates_list(&all, p, NULL), LEIR_OK);
  size_t n = leir_candidates_count(all), strategies = 0;
  int last = -1;
  ck_assert_uint_gt(n, 50);
  for (size_t i = 0; i < n; i++) {
    const leir_step *s = leir_candidates_step(all, i);
    if ((int)leir_step_strategy(s) != last) strategies++, last = (int)leir_step_strategy(s);
    leir_program *q = NULL;
    ck_assert_int_eq(leir_candidates_apply(&q, all, i), LEIR_OK);
    ck_assert_msg(grounds_to(p, q, leir_step_text(s)), "%s", leir_step_text(s));
    /* the same result with the intermediates D, E renamed */
    char *out = test_print(q), *r = out;
    for (; *r; r++)
      if (*r == 'D' && r[1] == '^') *r = 'Q';
      else if (*r == 'E' && r[1] == '^') *r = 'R';
    leir_program *renamed = test_parse(out);
    ck_assert_msg(grounds_to(p, renamed, leir_step_text(s)), "renamed: %s", leir_step_text(s));
    leir_program_free(renamed);
    free(out);
    leir_program_free(q);
  }
  ck_assert_uint_ge(strategies, 10);
  leir_candidates_free(all);
  leir_program_free(p);
}
END_TEST

/* Grounding is near-linear in the number of nests: 2,000 nests (30,000
 * candidates) ground in well under a second (it took 20 s when every
 * candidate was applied and hashed). */
START_TEST(test_ground_is_fast_on_2000_nests) {
  const char *nest = "B^{2}_{tx=0}L^{4}_{a=0}[C^{f64,g}_{tx,a}=C^{f64,g}_{tx,a}+A^{f64,g}_{tx,a};];";
  size_t len = strlen(nest);
  char *text = malloc(len * 2000 + 1);
  ck_assert_ptr_nonnull(text);
  for (int i = 0; i < 2000; i++) memcpy(text + (size_t)i * len, nest, len);
  text[len * 2000] = '\0';
  leir_program *p = test_parse(text);
  free(text);
  const char *want[] = {"loop_split nest=1000 loop=a factor=2", "loop_unrolling nest=0 loop=a",
                        "cache_read_write nest=1999 tensor=A mode=read scope=s"};
  for (int k = 0; k < 3; k++) {
    leir_step *s = step(want[k]);
    leir_program *q = NULL;
    ck_assert_int_eq(leir_step_apply(&q, p, s, NULL), LEIR_OK);
    clock_t t0 = clock();
    leir_candidates *hits = NULL;
    ck_assert_int_eq(leir_ground(&hits, p, q, NULL), LEIR_OK);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    ck_assert_uint_eq(leir_candidates_count(hits), 1);
    ck_assert_str_eq(leir_step_text(leir_candidates_step(hits, 0)), want[k]);
#if defined(__SANITIZE_ADDRESS__)
    double limit = 5.0; /* sanitizers slow everything down several times */
#else
    double limit = 1.0;
#endif
    ck_assert_msg(secs < limit, "%s: ground took %.2f s", want[k], secs);
    leir_candidates_free(hits);
    leir_program_free(q);
    leir_step_free(s);
  }
  leir_program_free(p);
}
END_TEST

static Suite *strategy_suite(void) {
  Suite *s = suite_create("strategy");
  TCase *api = tcase_create("api");
  tcase_add_test(api, test_catalogue_lists_44_strategies_in_spec_order);
  tcase_add_test(api, test_step_text_is_canonicalized);
  tcase_add_test(api, test_step_json_round_trips);
  tcase_add_test(api, test_step_rejects_malformed_input);
  tcase_add_test(api, test_mutated_and_random_steps_are_handled);
  tcase_add_test(api, test_options_and_grounding_without_signature);
  tcase_add_test(api, test_ground_finds_every_candidate_of_a_multi_nest_program);
  tcase_add_test(api, test_ground_is_fast_on_2000_nests);
  suite_add_tcase(s, api);
  TCase *rules = tcase_create("rules");
  tcase_add_test(rules, test_tiling_and_split_match_the_reference_examples);
  tcase_add_test(rules, test_fusion_undoes_split_and_tiling);
  tcase_add_test(rules, test_reorder_classes_follow_the_dependences);
  tcase_add_test(rules, test_annotations_respect_limits_and_independence);
  tcase_add_test(rules, test_fresh_names_never_collide);
  tcase_add_test(rules, test_reduction_factorization_partials_and_combination);
  tcase_add_test(rules, test_memory_strategies_follow_the_reference_forms);
  tcase_add_test(rules, test_nested_nests_are_sites);
  tcase_add_test(rules, test_explain_names_the_failed_precondition);
  tcase_add_test(rules, test_cot_is_grounded_in_the_diff);
  suite_add_tcase(s, rules);
  TCase *corpus_tc = tcase_create("corpus");
  tcase_add_unchecked_fixture(corpus_tc, load, unload);
  tcase_set_timeout(corpus_tc, 600);
  tcase_add_test(corpus_tc, test_every_candidate_is_valid_replayable_and_grounds);
  tcase_add_test(corpus_tc, test_random_walks_stay_valid_and_are_reproducible);
  tcase_add_test(corpus_tc, test_reference_outputs_ground);
  suite_add_tcase(s, corpus_tc);
  return s;
}

int main(void) { return test_run_suite(strategy_suite()); }
