/* Strategy fixtures: every case of tests/strategies/<strategy>.txt
 * (format: tests/strategies/README.md) applied through the public API, and
 * the rules table: every rule a strategy reports is in it. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../strategies/registry.h"
#include "visit.h"
#include "corpus.h"
#include "testutil.h"

/* ---- the fixture files -------------------------------------------------------- */

typedef struct fixture_case {
  char *name, *before, *step, *after, *cls, *reject, *outputs;
  unsigned line;
} fixture_case;

static char *dup_range(const char *s, size_t n) {
  char *d = malloc(n + 1);
  ck_assert_ptr_nonnull(d);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

static void case_free(fixture_case *c) {
  free(c->name);
  free(c->before);
  free(c->step);
  free(c->after);
  free(c->cls);
  free(c->reject);
  free(c->outputs);
  memset(c, 0, sizeof *c);
}

/* `outputs: C,E`: the inferred signature keeps its inputs and only the
 * listed outputs (the other written tensors become intermediates, as a
 * YAML program's signature may make them). */
static void restrict_outputs(leir_program *p, const char *names) {
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  size_t n = leir_program_signature_count(p), m = 0;
  leir_tensor_decl *d = calloc(n ? n : 1, sizeof *d);
  ck_assert_ptr_nonnull(d);
  for (size_t i = 0; i < n; i++) {
    leir_tensor_decl t;
    ck_assert_int_eq(leir_program_signature_get(p, i, &t), LEIR_OK);
    bool keep = t.role == LEIR_ROLE_INPUT;
    size_t len = strlen(t.name);
    for (const char *at = names; *at && !keep;) {
      size_t k = strcspn(at, ",");
      keep = k == len && !memcmp(at, t.name, len);
      at += k + (at[k] == ',');
    }
    if (keep) d[m++] = t;
  }
  ck_assert_int_eq(leir_program_set_signature(p, d, m), LEIR_OK);
  free(d);
}

/* Checks one case of `strategy` (file:line for messages); returns true
 * when it is a rejection. */
static bool run_case(const char *file, const char *strategy, const fixture_case *c) {
  ck_assert_msg(c->name && c->before && c->step, "%s:%u: a case needs case, before and step",
                file, c->line);
  ck_assert_msg((c->after != NULL) + (c->reject != NULL) == 1,
                "%s:%u: %s: give either after (and class) or reject", file, c->line, c->name);
  ck_assert_msg(!c->after || c->cls, "%s:%u: %s: after without class", file, c->line, c->name);
  leir_program *p = test_parse(c->before);
  if (c->outputs) restrict_outputs(p, c->outputs);
  leir_step *s = NULL;
  ck_assert_msg(leir_step_parse(&s, c->step, strlen(c->step)) == LEIR_OK, "%s:%u: %s: %s", file,
                c->line, c->name, leir_error_last()->message);
  const leir_strategy_info *info = leir_strategy_info_at(leir_step_strategy(s));
  ck_assert_msg(strcmp(info->name, strategy) == 0, "%s:%u: %s: the step is a %s step", file,
                c->line, c->name, info->name);
  leir_program *q = NULL;
  leir_exactness cls = LEIR_EXACT;
  leir_status st = leir_step_apply(&q, p, s, &cls);
  if (c->reject) {
    ck_assert_msg(st == LEIR_ERR_NOT_APPLICABLE, "%s:%u: %s: expected rejection %s, got status %d",
                  file, c->line, c->name, c->reject, (int)st);
    const leir_error *e = leir_error_last();
    ck_assert_msg(strcmp(e->rule, c->reject) == 0, "%s:%u: %s: expected rule %s, got %s (%s)",
                  file, c->line, c->name, c->reject, e->rule, e->message);
    ck_assert_msg(leir__rule_find(e->rule) >= 0, "%s:%u: rule %s is not in strategies/rules.def",
                  file, c->line, e->rule);
  } else {
    ck_assert_msg(st == LEIR_OK, "%s:%u: %s: %s", file, c->line, c->name,
                  leir_error_last()->message);
    ck_assert_int_eq(leir_program_check(q, NULL, NULL), LEIR_OK);
    char *got = test_print(q);
    leir_program *want_p = test_parse(c->after);
    char *want = test_print(want_p);
    ck_assert_msg(strcmp(got, want) == 0, "%s:%u: %s:\n  expected %s\n  got      %s", file,
                  c->line, c->name, want, got);
    ck_assert_msg(strcmp(leir_exactness_name(cls), c->cls) == 0,
                  "%s:%u: %s: expected class %s, got %s", file, c->line, c->name, c->cls,
                  leir_exactness_name(cls));
    /* the expected program grounds back to a step of the strategy (the
     * canonical one: a swap is listed in one loop order) */
    leir_candidates *hits = NULL;
    ck_assert_int_eq(leir_ground(&hits, p, want_p, NULL), LEIR_OK);
    bool found = false;
    for (size_t i = 0; i < leir_candidates_count(hits); i++)
      found = found || leir_step_strategy(leir_candidates_step(hits, i)) == leir_step_strategy(s);
    ck_assert_msg(found, "%s:%u: %s: ground does not find the step", file, c->line, c->name);
    leir_candidates_free(hits);
    leir_program_free(want_p);
    free(got);
    free(want);
    leir_program_free(q);
  }
  leir_step_free(s);
  leir_program_free(p);
  return c->reject != NULL;
}

typedef struct file_stats {
  unsigned applied, rejected;
} file_stats;

/* Runs every case of one file. */
static file_stats run_file(const char *dir, const char *fname) {
  char path[2048];
  snprintf(path, sizeof path, "%s/%s", dir, fname);
  char strategy[128];
  snprintf(strategy, sizeof strategy, "%.*s", (int)(strlen(fname) - 4), fname);
  size_t len;
  char *text = test_read_file(path, &len);
  ck_assert_msg(text != NULL, "cannot read %s", path);
  file_stats fs = {0, 0};
  fixture_case c;
  memset(&c, 0, sizeof c);
  unsigned line = 0;
  for (char *at = text; *at;) {
    char *end = strchr(at, '\n');
    size_t n = end ? (size_t)(end - at) : strlen(at);
    line++;
    while (n && (at[n - 1] == '\r' || at[n - 1] == ' ')) n--;
    if (n == 0 || at[0] == '#') {
      /* blank lines and comments */
    } else {
      const char *colon = memchr(at, ':', n);
      ck_assert_msg(colon != NULL, "%s:%u: expected KEY: VALUE", path, line);
      size_t kl = (size_t)(colon - at);
      const char *v = colon + 1;
      while (*v == ' ') v++;
      char *val = dup_range(v, n - (size_t)(v - at));
      char **slot = NULL;
      if (kl == 4 && !memcmp(at, "case", 4)) {
        if (c.name) {
          if (run_case(path, strategy, &c)) fs.rejected++;
          else fs.applied++;
          case_free(&c);
        }
        slot = &c.name;
        c.line = line;
      } else if (kl == 6 && !memcmp(at, "before", 6)) {
        slot = &c.before;
      } else if (kl == 4 && !memcmp(at, "step", 4)) {
        slot = &c.step;
      } else if (kl == 5 && !memcmp(at, "after", 5)) {
        slot = &c.after;
      } else if (kl == 5 && !memcmp(at, "class", 5)) {
        slot = &c.cls;
      } else if (kl == 6 && !memcmp(at, "reject", 6)) {
        slot = &c.reject;
      } else if (kl == 7 && !memcmp(at, "outputs", 7)) {
        slot = &c.outputs;
      }
      ck_assert_msg(slot != NULL, "%s:%u: unknown key '%.*s'", path, line, (int)kl, at);
      ck_assert_msg(*slot == NULL, "%s:%u: '%.*s' given twice in a case", path, line, (int)kl, at);
      *slot = val;
    }
    if (!end) break;
    at = end + 1;
  }
  if (c.name) {
    if (run_case(path, strategy, &c)) fs.rejected++;
    else fs.applied++;
  }
  case_free(&c);
  free(text);
  return fs;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every file of tests/strategies runs; every implemented strategy has a
 * file with at least three cases, of which at least one applies and one
 * is rejected; every file is named for a strategy. */
START_TEST(test_every_fixture_case_holds) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", test_data_path("../strategies"));
  DIR *d = opendir(dir);
  ck_assert_msg(d != NULL, "cannot open %s", dir);
  char *names[128];
  size_t n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    size_t l = strlen(de->d_name);
    if (l > 4 && strcmp(de->d_name + l - 4, ".txt") == 0 && n < 128) names[n++] = strdup(de->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, by_name);
  bool covered[LEIR__NSTRATEGIES] = {false};
  unsigned cases = 0;
  for (size_t i = 0; i < n; i++) {
    char strategy[128];
    snprintf(strategy, sizeof strategy, "%.*s", (int)(strlen(names[i]) - 4), names[i]);
    size_t idx;
    ck_assert_msg(leir_strategy_find(strategy, &idx) == LEIR_OK, "%s: no strategy %s", names[i],
                  strategy);
    file_stats fs = run_file(dir, names[i]);
    ck_assert_msg(fs.applied + fs.rejected >= 3 && fs.applied >= 1 && fs.rejected >= 1,
                  "%s: %u applied and %u rejected cases (want >= 3, both kinds)", names[i],
                  fs.applied, fs.rejected);
    covered[idx] = true;
    cases += fs.applied + fs.rejected;
    free(names[i]);
  }
  for (size_t s = 0; s < leir_strategy_count(); s++)
    ck_assert_msg(!leir_strategy_info_at(s)->implemented || covered[s],
                  "%s is implemented but has no tests/strategies/%s.txt",
                  leir_strategy_info_at(s)->name, leir_strategy_info_at(s)->name);
  ck_assert_uint_ge(cases, 14 * 3);
}
END_TEST

/* ---- the rules table --------------------------------------------------------------- */

/* Every rule that explanations of the corpus report (all implemented
 * strategies on every sources-small program) is in strategies/rules.def,
 * and so are the engine's rules for steps. */
START_TEST(test_every_reported_rule_is_in_the_table) {
  corpus_programs cp;
  corpus_programs_load(&cp);
  unsigned seen[LEIR__NRULES] = {0};
  size_t findings = 0;
  for (size_t i = 0; i < cp.n; i++) {
    if (!cp.e[i].program) continue;
    for (size_t s = 0; s < leir_strategy_count(); s++) {
      leir_explanation *e = NULL;
      if (leir_strategy_explain(&e, cp.e[i].program, s) != LEIR_OK) break; /* invalid program */
      for (size_t k = 0; k < leir_explanation_count(e); k++) {
        const leir_reason *r = leir_explanation_get(e, k);
        if (r->applies) continue;
        int id = leir__rule_find(r->rule);
        ck_assert_msg(id >= 0, "%s: %s reports rule '%s', which is not in strategies/rules.def",
                      cp.e[i].id, leir_strategy_info_at(s)->name, r->rule);
        seen[id]++;
        findings++;
      }
      leir_explanation_free(e);
    }
  }
  corpus_programs_free(&cp);
  ck_assert_uint_gt(findings, 1000);
  ck_assert_uint_gt(seen[LEIR__R_LOOP_NOT_PARALLEL_SAFE], 0);
  /* strategy.not-implemented is reported exactly when the catalogue has a
   * strategy without an implementation (none once all 44 are done) */
  bool unimplemented = false;
  for (size_t s = 0; s < leir_strategy_count(); s++)
    unimplemented |= !leir_strategy_info_at(s)->implemented;
  ck_assert_uint_eq(seen[LEIR__R_STRATEGY_NOT_IMPLEMENTED] > 0, unimplemented);
  /* the table has no duplicate names, and every rule has a meaning */
  for (int a = 0; a < LEIR__NRULES; a++) {
    ck_assert_int_eq(leir__rule_find(leir__rules[a].name), a);
    ck_assert_uint_gt(strlen(leir__rules[a].meaning), 10);
  }
  /* step errors use table rules too */
  const char *bad[] = {"", "loop_split nest", "loop_split nest=0 bogus=1", "loop_split nest=x loop=a factor=2",
                       "loop_split nest=0 loop=a", "{\"strategy\":", "loop_splitt nest=0"};
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    leir_step *s = NULL;
    ck_assert_int_ne(leir_step_parse(&s, bad[k], strlen(bad[k])), LEIR_OK);
    ck_assert_msg(leir__rule_find(leir_error_last()->rule) >= 0, "'%s': rule %s", bad[k],
                  leir_error_last()->rule);
  }
}
END_TEST

/* ---- the kit: sites of sub-expressions, the walker, growable arrays ------------------ */

typedef struct xsites {
  char text[64][96];
  const leir_expr *node[64];
  uint32_t n;
} xsites;

static bool record_x(leir__sctx *c, const leir__xsite *x, void *ud) {
  xsites *s = ud;
  if (s->n < 64) {
    snprintf(s->text[s->n], sizeof s->text[s->n], "%s%s", leir__site_expr(c, x),
             x->in_subscript ? " (index)" : "");
    s->node[s->n++] = x->e;
  }
  return true;
}

static bool each_eq(leir__sctx *c, const leir__eqsite *s, void *ud) {
  leir__each_subexpr(c, s, record_x, ud);
  return true;
}

/* Math strategies rewrite inside equations: every node of every equation
 * is a site "nest=N eq=K expr=P" (P: side, then child indices), in
 * pre-order, found again from a step's parameters. */
START_TEST(test_subexpression_sites_are_named_and_found_again) {
  leir_program *p = test_parse(
      "L^{4}_{a=0}[D^{f64,g}_{a}=A^{f64,g}_{a}*2;L^{2}_{c=0}[C^{f64,g}_{a,c}=D^{f64,g}_{a}+exp(A^{f64,g}_{a+c});];];");
  leir__sctx *c = NULL;
  ck_assert_int_eq(leir__sctx_new(&c, p, NULL), LEIR_OK);
  c->mode = LEIR__MODE_LIST;
  xsites s;
  memset(&s, 0, sizeof s);
  leir__each_equation(c, each_eq, &s);
  const char *want[] = {
      "nest=0 eq=0 expr=0",       "nest=0 eq=0 expr=0.0 (index)", "nest=0 eq=0 expr=1",
      "nest=0 eq=0 expr=1.0",     "nest=0 eq=0 expr=1.0.0 (index)", "nest=0 eq=0 expr=1.1",
      "nest=0.1 eq=0 expr=0",     "nest=0.1 eq=0 expr=0.0 (index)", "nest=0.1 eq=0 expr=0.1 (index)",
      "nest=0.1 eq=0 expr=1",     "nest=0.1 eq=0 expr=1.0",        "nest=0.1 eq=0 expr=1.0.0 (index)",
      "nest=0.1 eq=0 expr=1.1",   "nest=0.1 eq=0 expr=1.1.0",      "nest=0.1 eq=0 expr=1.1.0.0 (index)",
      "nest=0.1 eq=0 expr=1.1.0.0.0 (index)", "nest=0.1 eq=0 expr=1.1.0.0.1 (index)"};
  ck_assert_uint_eq(s.n, sizeof want / sizeof *want);
  for (uint32_t i = 0; i < s.n; i++) ck_assert_str_eq(s.text[i], want[i]);
  /* a step's nest/eq/expr find the same node (exp's argument) */
  const char *text = "factorization nest=0.1 eq=0 expr=1.1.0";
  leir__pstep ps;
  ck_assert_int_eq(leir__step_parse_text(&ps, text, strlen(text)), LEIR_OK);
  const leir__nref *r = leir__ps_nest(c, &ps);
  ck_assert_ptr_nonnull(r);
  leir__eqsite es;
  ck_assert(leir__ps_eq(c, r, &ps, &es));
  leir_expr **slot = leir__ps_expr_slot((leir_nest *)r->nest, es.item, &ps);
  ck_assert_ptr_nonnull(slot);
  ck_assert_ptr_eq(*slot, s.node[13]);
  uint32_t bad[3] = {1, 1, 5};
  ck_assert_ptr_null(leir__expr_slot((leir_nest *)r->nest, es.item, bad, 3));
  ck_assert_ptr_null(leir__expr_slot((leir_nest *)r->nest, 7, bad, 1));
  leir__sctx_free(c);
  leir_program_free(p);
}
END_TEST

static int count_and_stop(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  int *n = v->ud;
  ++*n;
  if ((*slot)->kind == LEIR_EXPR_CALL) return LEIR__VISIT_SKIP;
  return (*slot)->kind == LEIR_EXPR_NUMBER ? LEIR__VISIT_STOP : LEIR__VISIT_NEXT;
}

START_TEST(test_walker_skips_and_stops_and_arrays_check_overflow) {
  leir_program *p = test_parse("L^{4}_{a=0}[C^{f64,g}_{a}=exp(A^{f64,g}_{a})+A^{f64,g}_{a}*2+1;];");
  const leir_equation *eq = p->nests[0]->items[0].eq;
  int n = 0;
  leir__visit v = LEIR__VISIT_INIT(count_and_stop, &n);
  /* (exp(A)+A*2)+1: +, +, exp (skipped), *, A, a, 2 (stop) */
  ck_assert(!leir__visit_const(&v, eq->rhs));
  ck_assert_int_eq(n, 7);
  leir_program_free(p);
  size_t cap = 0;
  ck_assert(leir__vec_next_cap(0, 3, 8, 16, SIZE_MAX, &cap));
  ck_assert_uint_eq(cap, 16);
  ck_assert(leir__vec_next_cap(16, 40, 8, 16, SIZE_MAX, &cap));
  ck_assert_uint_eq(cap, 64);
  ck_assert(!leir__vec_next_cap(16, SIZE_MAX / 4, 8, 16, SIZE_MAX, &cap));
  ck_assert(!leir__vec_next_cap(16, (size_t)UINT32_MAX + 1, 1, 16, UINT32_MAX, &cap));
  LEIR__VEC(int) ints = LEIR__VEC_INIT;
  for (int i = 0; i < 1000; i++) *LEIR__VEC_PUSH(&ints) = i;
  ck_assert_uint_eq(ints.len, 1000);
  ck_assert_uint_ge(ints.cap, 1000);
  ck_assert_int_eq(ints.data[999], 999);
  free(ints.data);
}
END_TEST

static Suite *fixtures_suite(void) {
  Suite *s = suite_create("strategy_fixtures");
  TCase *tc = tcase_create("fixtures");
  tcase_add_test(tc, test_every_fixture_case_holds);
  tcase_add_test(tc, test_every_reported_rule_is_in_the_table);
  tcase_add_test(tc, test_subexpression_sites_are_named_and_found_again);
  tcase_add_test(tc, test_walker_skips_and_stops_and_arrays_check_overflow);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(fixtures_suite()); }
