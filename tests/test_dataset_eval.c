/*
 * The metrics of leir eval (dataset/eval*.c) on a hand-written dataset, each
 * with a hand-computed expectation: programs compared by structure (a
 * renamed loop variable or intermediate, or added parentheses, is the
 * prompt's own program: not different, no pass; issue 32.3), except the
 * parentheses that stop an accumulation form; pass-equal (bitwise),
 * pass-close (a CLOSE answer passes close, not equal, by tolerance and by
 * the reassociation bound), pass-reference (the reference's loose rule),
 * label matching and grounding by structure, the multi-label rate with
 * distinct IRs by structure, breakdowns by the label's strategy, and pass@k
 * by the unbiased estimator over repeated ids (n = 4, c = 1, k = 2: 0.5).
 */
#define LEIR_EXPERIMENTAL
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval.h"
#include "ir.h"
#include "leir/experimental/dataset.h"
#include "literal.h"
#include "testutil.h"

/* P: two nests through an intermediate D. */
#define P_IR "L^{4}_{a=0}L^{8}_{c=0}[D^{f64,g}_{a,c}=A^{f64,g}_{a,c}*2.0;];L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=max(D^{f64,g}_{a,c},0);];"
/* its labels, as the library writes them: loop_reorder, compute_inline
 * (which parenthesizes what it inlines) */
#define P_REORDER "L^{8}_{c=0}L^{4}_{a=0}[D^{f64,g}_{a,c}=A^{f64,g}_{a,c}*2.0;];L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=max(D^{f64,g}_{a,c},0);];"
#define P_INLINE "L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=max((A^{f64,g}_{a,c}*2.0),0);];"
/* respellings of P */
#define P_LOOPVAR "L^{4}_{i=0}L^{8}_{j=0}[D^{f64,g}_{i,j}=A^{f64,g}_{i,j}*2.0;];L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=max(D^{f64,g}_{a,c},0);];"
#define P_TEMP "L^{4}_{a=0}L^{8}_{c=0}[E^{f64,g}_{a,c}=A^{f64,g}_{a,c}*2.0;];L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=max(E^{f64,g}_{a,c},0);];"
#define P_PARENS "L^{4}_{a=0}L^{8}_{c=0}[D^{f64,g}_{a,c}=(A^{f64,g}_{a,c}*2.0);];L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=max(((D^{f64,g}_{a,c})),0);];"
/* the inline label without its parentheses */
#define P_INLINE_BARE "L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=max(A^{f64,g}_{a,c}*2.0,0);];"
/* one rounding away (|rel| <= 2^-52: CLOSE), and 1e-6 away (MISMATCH by
 * libleir's f64 tolerance, a pass by the reference's rtol <= 5e-3) */
#define P_ULP "L^{4}_{a=0}L^{8}_{c=0}[D^{f64,g}_{a,c}=A^{f64,g}_{a,c}*2.0*1.0000000000000002;];L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=max(D^{f64,g}_{a,c},0);];"
#define P_LOOSE "L^{4}_{a=0}L^{8}_{c=0}[D^{f64,g}_{a,c}=A^{f64,g}_{a,c}*2.000002;];L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=max(D^{f64,g}_{a,c},0);];"
/* S: a row sum; a parenthesis around the accumulation stops it (C is then
 * read before it is written): a different program, and an invalid one */
#define S_IR "L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a}=C^{f64,g}_{a}+A^{f64,g}_{a,c};];"
#define S_REORDER "L^{8}_{c=0}L^{4}_{a=0}[C^{f64,g}_{a}=C^{f64,g}_{a}+A^{f64,g}_{a,c};];"
#define S_STOPPED "L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a}=(C^{f64,g}_{a}+A^{f64,g}_{a,c});];"
#define S_WRONG "L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a}=C^{f64,g}_{a}+A^{f64,g}_{a,c}*2.0;];"

#define KNOWN_P \
  "[{\"name\":\"A\",\"dtype\":\"f64\",\"role\":\"input\",\"shape\":[4,8]},{\"name\":\"C\",\"dtype\":\"f64\",\"role\":\"output\",\"shape\":[4,8]}]"
#define KNOWN_S \
  "[{\"name\":\"A\",\"dtype\":\"f64\",\"role\":\"input\",\"shape\":[4,8]},{\"name\":\"C\",\"dtype\":\"f64\",\"role\":\"output\",\"shape\":[4]}]"
#define LABEL(strategy, ir, exactness) \
  "{\"strategy\":\"" strategy "\",\"transformed_IR\":\"" ir "\",\"verdict\":\"EQUAL\",\"exactness\":\"" exactness "\"}"
#define PROMPT(id, kind, n, ir, known, labels)                                                      \
  "{\"id\":\"" id "\",\"split\":\"test\",\"kind\":\"" kind "\",\"n\":" n ",\"messages\":[{\"role\":" \
  "\"user\",\"content\":\"prompt " id "\"}],\"name\":\"p\",\"level\":1,\"depth\":0,\"unit\":\"u\","  \
  "\"state\":\"0\",\"original_IR\":\"" ir "\",\"known\":" known ",\"labels\":[" labels "]}\n"

static const char eval_jsonl[] =
    PROMPT("p1", "single", "1", P_IR, KNOWN_P, LABEL("loop_reorder", P_REORDER, "exact") "," LABEL("compute_inline", P_INLINE, "exact"))
    PROMPT("p2", "single", "1", S_IR, KNOWN_S, LABEL("loop_reorder", S_REORDER, "exact"))
    PROMPT("p3", "multi", "2", P_IR, KNOWN_P, LABEL("loop_reorder", P_REORDER, "exact") "," LABEL("compute_inline", P_INLINE, "exact"))
    PROMPT("p4", "single", "1", P_IR, KNOWN_P, LABEL("additive_split", P_ULP, "reassociating"));

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

/* A dataset directory with eval.jsonl only (validation and archive are
 * optional). */
static char *dataset_dir(void) {
  char tmpl[] = "/tmp/leir-eval-XXXXXX";
  char *d = mkdtemp(tmpl);
  ck_assert_ptr_nonnull(d);
  char path[256];
  snprintf(path, sizeof path, "%s/eval.jsonl", d);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(eval_jsonl, f);
  fclose(f);
  return strdup(d);
}

static void answer(leir__strbuf *b, const char *id, const char *ir, const char *strategy) {
  leir__sb_printf(b, "{\"id\": \"%s\", \"answer\": \"<answer>{'transformed_IR': '%s', 'applied_strategy': '%s'}</answer>\"}\n",
                  id, ir, strategy);
}

typedef struct report {
  leir__arena a;
  char *json;
  const leir__lit *v;
} report;

static void run(report *r, leir__strbuf *answers, const uint32_t *k, size_t nk) {
  char *dir = dataset_dir();
  size_t len = 0;
  char *text = leir__sb_finish(answers, &len);
  leir_eval_options o;
  ck_assert_int_eq(leir_eval_options_init(&o, sizeof o), LEIR_OK);
  o.k = k;
  o.n_k = nk;
  leir_eval *ev = NULL;
  ck_assert_int_eq(leir_eval_run(&ev, text, len, dir, &o), LEIR_OK);
  ck_assert_int_eq(leir_eval_report_json(ev, &r->json, NULL), LEIR_OK);
  leir_eval_free(ev);
  free(text);
  nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
  free(dir);
  leir__arena_init(&r->a, 0);
  r->v = leir__lit_parse(&r->a, r->json, strlen(r->json), 0, 0, NULL);
  ck_assert_ptr_nonnull(r->v);
}

static void report_free(report *r) {
  leir__arena_release(&r->a);
  leir_free(r->json);
}

/* The i-th answer line's entry and its first item. */
static const leir__lit *line_at(const report *r, size_t i) {
  const leir__lit *e = leir__lit_get(r->v, "answers")->first;
  while (i-- && e) e = e->next;
  ck_assert_ptr_nonnull(e);
  return e;
}

static const leir__lit *item_at(const report *r, size_t i) {
  const leir__lit *it = leir__lit_get(line_at(r, i), "items")->first;
  ck_assert_ptr_nonnull(it);
  return it;
}

static int flag(const leir__lit *d, const char *k) {
  const leir__lit *x = leir__lit_get(d, k);
  ck_assert_msg(x && x->kind == LEIR__LIT_BOOL, "no flag %s", k);
  return (int)x->i;
}

static const char *str(const leir__lit *d, const char *k) {
  const char *s = leir__lit_str(leir__lit_get(d, k));
  return s ? s : "";
}

static double num(const leir__lit *d, const char *k) {
  double x = NAN;
  ck_assert_msg(leir__lit_num(leir__lit_get(d, k), &x), "no number %s", k);
  return x;
}

START_TEST(test_respelled_prompt_is_not_different_and_does_not_pass) {
  leir__strbuf b = LEIR__STRBUF_INIT;
  answer(&b, "p1", P_LOOPVAR, "loop_reorder");   /* a loop variable renamed */
  answer(&b, "p1", P_TEMP, "operator_fusion");   /* the intermediate renamed */
  answer(&b, "p1", P_PARENS, "compute_inline");  /* parentheses added */
  answer(&b, "p1", P_IR, "loop_reorder");        /* the prompt verbatim */
  answer(&b, "p2", S_STOPPED, "loop_reorder");   /* parentheses that stop an accumulation */
  report r;
  run(&r, &b, NULL, 0);
  for (size_t i = 0; i < 4; i++) {
    const leir__lit *it = item_at(&r, i);
    ck_assert_msg(!flag(it, "different"), "answer %zu", i);
    ck_assert(!flag(it, "pass_equal") && !flag(it, "pass_close") && !flag(it, "label") && !flag(it, "grounded"));
    ck_assert_str_eq(str(it, "reason"), "ir.unchanged");
    /* what the reference counts: its text comparison calls these different
     * and its loose rule passes them (the flaw issue 32.3 is about) */
    ck_assert(flag(it, "pass_reference"));
  }
  const leir__lit *stopped = item_at(&r, 4);
  ck_assert(flag(stopped, "different"));
  ck_assert_str_eq(str(stopped, "reason"), "ir.invalid");
  ck_assert(!flag(stopped, "pass_close") && !flag(stopped, "pass_reference"));
  const leir__lit *all = leir__lit_get(r.v, "overall");
  ck_assert_double_eq_tol(num(all, "different_rate"), 0.2, 1e-9);
  ck_assert_double_eq_tol(num(all, "pass_equal"), 0.0, 1e-9);
  report_free(&r);
}
END_TEST

START_TEST(test_structure_hash_ignores_names_and_idle_parentheses) {
  static const char *const same[] = {P_LOOPVAR, P_TEMP, P_PARENS};
  leir_program *p = test_parse(P_IR);
  test_set_signature(p, "A:f64:4x8 -> C:f64:4x8");
  uint64_t h = leir__program_hash_structure(p);
  ck_assert_uint_ne(h, 0);
  for (size_t i = 0; i < 3; i++) {
    leir_program *q = test_parse(same[i]);
    test_set_signature(q, "A:f64:4x8 -> C:f64:4x8");
    ck_assert_uint_eq(leir__program_hash_structure(q), h);
    leir_program_free(q);
  }
  leir_program *q = test_parse(P_INLINE);
  leir_program *q2 = test_parse(P_INLINE_BARE);
  test_set_signature(q, "A:f64:4x8 -> C:f64:4x8");
  test_set_signature(q2, "A:f64:4x8 -> C:f64:4x8");
  ck_assert_uint_eq(leir__program_hash_structure(q), leir__program_hash_structure(q2));
  ck_assert_uint_ne(leir__program_hash_structure(q), h);
  ck_assert_uint_ne(leir_program_hash_alpha(q), leir_program_hash_alpha(q2)); /* the alpha hash sees them */
  leir_program_free(q);
  leir_program_free(q2);
  /* the parenthesis that stops an accumulation changes the program */
  leir_program *s = test_parse(S_IR), *s2 = test_parse(S_STOPPED);
  ck_assert_uint_ne(leir__program_hash_structure(s), leir__program_hash_structure(s2));
  leir_program_free(s);
  leir_program_free(s2);
  leir_program_free(p);
}
END_TEST

START_TEST(test_equal_close_and_reference_passes) {
  leir__strbuf b = LEIR__STRBUF_INIT;
  answer(&b, "p1", P_REORDER, "loop_reorder");     /* 0: a label, bitwise */
  answer(&b, "p1", P_INLINE_BARE, "compute_inline"); /* 1: a label without its parentheses */
  answer(&b, "p1", P_ULP, "loop_reorder");         /* 2: CLOSE by the f64 tolerance */
  answer(&b, "p1", P_LOOSE, "loop_reorder");       /* 3: MISMATCH; the reference passes it */
  answer(&b, "p4", P_ULP, "additive_split");       /* 4: CLOSE by the reassociation bound */
  answer(&b, "p1", P_REORDER, "loop_split");       /* 5: a label, the wrong name */
  report r;
  run(&r, &b, NULL, 0);
  static const struct {
    int different, label, equal, close, reference, grounded;
    const char *verdict, *cls, *label_strategy;
  } want[] = {
      {1, 1, 1, 1, 1, 1, "EQUAL", "tolerance", "loop_reorder"},
      {1, 1, 1, 1, 1, 1, "EQUAL", "tolerance", "compute_inline"},
      {1, 0, 0, 1, 1, 0, "CLOSE", "tolerance", ""},
      {1, 0, 0, 0, 1, 0, "MISMATCH", "tolerance", ""},
      {1, 1, 0, 1, 1, 1, "CLOSE", "reassociating", "additive_split"}, /* grounded as the label */
      {1, 1, 1, 1, 1, 0, "EQUAL", "tolerance", "loop_reorder"},
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    const leir__lit *it = item_at(&r, i);
    ck_assert_msg(flag(it, "different") == want[i].different, "%zu", i);
    ck_assert_msg(flag(it, "label") == want[i].label, "%zu", i);
    ck_assert_msg(flag(it, "pass_equal") == want[i].equal, "%zu", i);
    ck_assert_msg(flag(it, "pass_close") == want[i].close, "%zu", i);
    ck_assert_msg(flag(it, "pass_reference") == want[i].reference, "%zu", i);
    ck_assert_msg(flag(it, "grounded") == want[i].grounded, "%zu", i);
    ck_assert_str_eq(str(it, "verdict"), want[i].verdict);
    ck_assert_str_eq(str(it, "class"), want[i].cls);
    ck_assert_str_eq(str(it, "label_strategy"), want[i].label_strategy);
  }
  ck_assert_str_eq(str(item_at(&r, 3), "reason"), "verify.MISMATCH");
  /* rates per transformed IR: 3 of 6 equal, 5 close, 6 reference, 4 labels */
  const leir__lit *all = leir__lit_get(r.v, "overall");
  ck_assert_double_eq_tol(num(all, "pass_equal"), 3.0 / 6, 1e-6);
  ck_assert_double_eq_tol(num(all, "pass_close"), 5.0 / 6, 1e-6);
  ck_assert_double_eq_tol(num(all, "pass_reference"), 1.0, 1e-6);
  ck_assert_double_eq_tol(num(all, "label_rate"), 4.0 / 6, 1e-6);
  /* per strategy: the label's (loop_reorder twice, whatever the answer
   * names), not the named one */
  const leir__lit *ps = leir__lit_get(r.v, "per_strategy");
  ck_assert_double_eq(num(leir__lit_get(ps, "loop_reorder"), "items"), 2);
  ck_assert_double_eq(num(leir__lit_get(ps, "compute_inline"), "items"), 1);
  ck_assert_double_eq(num(leir__lit_get(ps, "additive_split"), "items"), 1);
  ck_assert_double_eq(num(leir__lit_get(ps, "(no label)"), "items"), 2);
  ck_assert_ptr_null(leir__lit_get(ps, "loop_split"));
  ck_assert_double_eq(num(leir__lit_get(leir__lit_get(r.v, "per_named_strategy"), "loop_split"), "items"), 1);
  const leir__lit *pl = leir__lit_get(r.v, "per_strategy_level");
  ck_assert_double_eq(num(leir__lit_get(pl, "operator"), "items"), 2); /* loop_reorder */
  ck_assert_double_eq(num(leir__lit_get(pl, "graph"), "items"), 1);    /* compute_inline */
  ck_assert_double_eq(num(leir__lit_get(pl, "math"), "items"), 1);     /* additive_split */
  report_free(&r);
}
END_TEST

START_TEST(test_pass_at_k_by_hand) {
  /* the unbiased estimator itself */
  ck_assert_double_eq_tol(leir__ev_pass_at_k(4, 1, 2), 0.5, 1e-12);           /* 1 - C(3,2)/C(4,2) = 1 - 3/6 */
  ck_assert_double_eq_tol(leir__ev_pass_at_k(4, 1, 1), 0.25, 1e-12);
  ck_assert_double_eq_tol(leir__ev_pass_at_k(5, 2, 2), 1 - 3.0 / 10, 1e-12); /* 1 - C(3,2)/C(5,2) */
  ck_assert_double_eq_tol(leir__ev_pass_at_k(4, 3, 2), 1.0, 1e-12);          /* n - c < k */
  ck_assert_double_eq_tol(leir__ev_pass_at_k(4, 0, 4), 0.0, 1e-12);
  ck_assert_double_eq_tol(leir__ev_pass_at_k(200, 10, 100), 1 - 7.710260627e-4, 1e-9); /* prod (1-100/i), i=191..200 */
  /* four samples of one prompt (repeated ids), one correct: n = 4, c = 1 */
  leir__strbuf b = LEIR__STRBUF_INIT;
  answer(&b, "p2", S_WRONG, "loop_reorder");
  answer(&b, "p2", S_REORDER, "loop_reorder");
  leir__sb_puts(&b, "{\"id\": \"p2\", \"answer\": \"I would reorder the loops.\"}\n");
  answer(&b, "p2", S_IR, "loop_reorder");
  static const uint32_t k[3] = {1, 2, 4};
  report r;
  run(&r, &b, k, 3);
  const leir__lit *pk = leir__lit_get(leir__lit_get(r.v, "overall"), "pass_at_k");
  ck_assert_double_eq_tol(num(leir__lit_get(pk, "pass_equal"), "1"), 0.25, 1e-6);
  ck_assert_double_eq_tol(num(leir__lit_get(pk, "pass_equal"), "2"), 0.5, 1e-6);
  ck_assert_double_eq_tol(num(leir__lit_get(pk, "pass_equal"), "4"), 1.0, 1e-6);
  /* the reference also passes the verbatim copy: c = 2 */
  ck_assert_double_eq_tol(num(leir__lit_get(pk, "pass_reference"), "2"), 1 - 1.0 / 6, 1e-6);
  ck_assert_double_eq(num(leir__lit_get(pk, "prompts"), "4"), 1);
  ck_assert_double_eq(num(leir__lit_get(r.v, "overall"), "prompts"), 1);
  ck_assert_double_eq(num(leir__lit_get(r.v, "overall"), "answers"), 4);
  report_free(&r);
  /* the default k: 1 and the fewest samples of an answered prompt (p2: 2, p1: 3) */
  b = (leir__strbuf)LEIR__STRBUF_INIT;
  answer(&b, "p2", S_REORDER, "loop_reorder");
  answer(&b, "p2", S_WRONG, "loop_reorder");
  for (int i = 0; i < 3; i++) answer(&b, "p1", P_REORDER, "loop_reorder");
  run(&r, &b, NULL, 0);
  const leir__lit *ks = leir__lit_get(r.v, "k");
  ck_assert_uint_eq(ks->n, 2);
  ck_assert_int_eq(ks->first->i, 1);
  ck_assert_int_eq(ks->first->next->i, 2);
  pk = leir__lit_get(leir__lit_get(r.v, "overall"), "pass_at_k");
  ck_assert_double_eq_tol(num(leir__lit_get(pk, "pass_equal"), "1"), (0.5 + 1.0) / 2, 1e-6);
  ck_assert_double_eq_tol(num(leir__lit_get(pk, "pass_equal"), "2"), 1.0, 1e-6);
  report_free(&r);
  /* a bad k is refused */
  static const uint32_t zero[1] = {0};
  leir_eval_options o;
  leir_eval_options_init(&o, sizeof o);
  o.k = zero;
  o.n_k = 1;
  leir_eval *ev = (leir_eval *)1;
  ck_assert_int_eq(leir_eval_run(&ev, "", 0, "/nonexistent", &o), LEIR_ERR_ARGUMENT);
  ck_assert_ptr_null(ev);
}
END_TEST

START_TEST(test_multi_label_rate_counts_distinct_structures) {
  leir__strbuf b = LEIR__STRBUF_INIT;
  /* both labels: two distinct passing IRs for "at least 2" */
  leir__sb_puts(&b, "{\"id\": \"p3\", \"answer\": \"<answer>[{'idx': 0, 'transformed_IR': '" P_REORDER
                    "', 'applied_strategy': 'loop_reorder'}, {'idx': 1, 'transformed_IR': '" P_INLINE_BARE
                    "', 'applied_strategy': 'compute_inline'}]</answer>\"}\n");
  /* one label twice, the second respelled: one distinct IR */
  leir__sb_puts(&b, "{\"id\": \"p3\", \"answer\": \"<answer>[{'idx': 0, 'transformed_IR': '" P_REORDER
                    "', 'applied_strategy': 'loop_reorder'}, {'idx': 1, 'transformed_IR': "
                    "'L^{8}_{j=0}L^{4}_{i=0}[E^{f64,g}_{i,j}=A^{f64,g}_{i,j}*2.0;];L^{4}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=max(E^{f64,g}_{a,c},0);];'"
                    ", 'applied_strategy': 'loop_reorder'}]</answer>\"}\n");
  report r;
  run(&r, &b, NULL, 0);
  const leir__lit *l0 = line_at(&r, 0), *l1 = line_at(&r, 1);
  ck_assert_double_eq(num(l0, "distinct"), 2);
  ck_assert(flag(l0, "multi_label") && flag(l0, "require_num_pass"));
  ck_assert_double_eq(num(l1, "distinct"), 1);
  ck_assert(!flag(l1, "multi_label") && !flag(l1, "require_num_pass"));
  const leir__lit *m = leir__lit_get(r.v, "multi");
  ck_assert_double_eq(num(m, "multi_answers"), 2);
  ck_assert_double_eq_tol(num(m, "multi_label_rate"), 0.5, 1e-6);
  ck_assert_double_eq_tol(num(m, "multi_label_equal_rate"), 0.5, 1e-6);
  /* two samples of p3, one solved: pass@1 = 0.5, pass@2 = 1 */
  const leir__lit *pk = leir__lit_get(m, "pass_at_k");
  ck_assert_double_eq_tol(num(leir__lit_get(pk, "pass_equal"), "1"), 0.5, 1e-6);
  ck_assert_double_eq_tol(num(leir__lit_get(pk, "pass_equal"), "2"), 1.0, 1e-6);
  report_free(&r);
}
END_TEST

static Suite *eval_suite(void) {
  Suite *s = suite_create("dataset_eval");
  TCase *tc = tcase_create("metrics");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_structure_hash_ignores_names_and_idle_parentheses);
  tcase_add_test(tc, test_respelled_prompt_is_not_different_and_does_not_pass);
  tcase_add_test(tc, test_equal_close_and_reference_passes);
  tcase_add_test(tc, test_pass_at_k_by_hand);
  tcase_add_test(tc, test_multi_label_rate_counts_distinct_structures);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(eval_suite()); }
