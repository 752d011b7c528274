/*
 * What the C backend makes of good schedules (issue 15.4): scalar
 * replacement keeps a reduction's accumulator tile in a local array (no
 * memory traffic in the reduction loop), only where that is exact; every
 * program here is also run and verified EQUAL against its naive form.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEIR_EXPERIMENTAL
#include "leir/experimental/cost.h"

#include "analysis.h"
#include "cost_model.h"
#include "testutil.h"

static leir_backend *cpu_backend(uint32_t flags) {
  leir_backend_options o = LEIR_BACKEND_OPTIONS_INIT;
  o.threads = 2;
  o.flags = flags;
  leir_backend *b = NULL;
  ck_assert_msg(leir_backend_open(&b, "cpu", &o) == LEIR_OK, "%s", leir_error_last()->message);
  return b;
}

static char *lower(leir_backend *b, const char *src) {
  leir_program *p = test_parse(src);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  char *out = NULL;
  size_t len = 0;
  ck_assert_msg(leir_backend_lower(b, p, &out, &len) == LEIR_OK, "%s",
                leir_error_last()->message);
  leir_program_free(p);
  return out;
}

static void require_equal(leir_backend *b, const char *naive, const char *sched) {
  leir_program *p0 = test_parse(naive), *p1 = test_parse(sched);
  ck_assert_int_eq(leir_program_infer_signature(p0), LEIR_OK);
  ck_assert_int_eq(leir_program_infer_signature(p1), LEIR_OK);
  leir_verify_options vo = LEIR_VERIFY_OPTIONS_INIT;
  vo.input_sets = 2;
  leir_verify_report *r = NULL;
  ck_assert_msg(leir_verify(b, p0, p1, &vo, &r) == LEIR_OK, "%s: %s", sched,
                leir_error_last()->message);
  ck_assert_msg(r->verdict == LEIR_VERDICT_EQUAL, "%s: %s", sched, leir_verdict_name(r->verdict));
  leir_verify_report_free(r);
  leir_program_free(p0);
  leir_program_free(p1);
}

#define MM(T, a, c, d) \
  "[D^{" T ",g}_{" a "," c "}=D^{" T ",g}_{" a "," c "}+A^{" T ",g}_{" a "," d "}*C^{" T ",g}_{" d "," c "};];"
#define NAIVE(T) "L^{64}_{a=0}L^{64}_{c=0}L^{64}_{d=0}" MM(T, "a", "c", "d")

/* The register-tiled matmul: the tile of D (8 rows x 16 columns) is loaded
 * before the reduction loop and stored after it; inside, only the local
 * array is touched. */
START_TEST(test_accumulator_tile_is_not_reloaded_in_the_reduction_loop) {
  leir_backend *b = cpu_backend(0);
  const char *sched =
      "P^{8}_{g=0}L^{4}_{h=0}L^{64}_{d=0}U^{8}_{a=0}V^{16}_{c=0}" MM("f32", "g*8+a", "h*16+c", "d");
  char *c = lower(b, sched);
  /* buffers: A b0, C b1 (inputs), D b2 (output) */
  const char *decl = strstr(c, "float r2[128];");
  if (!decl) fprintf(stderr, "%s\n", c);
  ck_assert_msg(decl != NULL, "no tile of D");
  const char *loop = strstr(decl, "/* L^{64}_{d} */");
  ck_assert_ptr_nonnull(loop);
  const char *store = strstr(loop, "b2[");
  ck_assert_ptr_nonnull(store);
  /* between the reduction loop's header and the store-back, D is only r2 */
  const char *body_end = strstr(loop, "= r2[");
  ck_assert_ptr_nonnull(body_end);
  ck_assert_msg(store > body_end - 80, "D is read or written in the reduction loop");
  ck_assert_ptr_nonnull(strstr(loop, "r2[16 * i3 + i4] = v;"));
  free(c);
  require_equal(b, NAIVE("f32"), sched);
  leir_backend_free(b);
}
END_TEST

/* The local tile's fastest dimension is the omp simd loop, wherever the V
 * loop sits among the tile loops: with a V loop around another V or U loop,
 * numbering by loop position would put the simd lanes a row apart (a gather
 * and a scatter per update, 3-4x slower). Still exact. */
START_TEST(test_tile_lanes_are_contiguous_in_the_simd_loop) {
  leir_backend *b = cpu_backend(0);
  static const struct {
    const char *sched, *update;
  } cases[] = {
      /* V^{16}_{c} around V^{8}_{a}: c is i3, a is i4 */
      {"P^{8}_{g=0}L^{4}_{h=0}L^{64}_{d=0}V^{16}_{c=0}V^{8}_{a=0}" MM("f32", "g*8+a", "h*16+c", "d"),
       "r2[i3 + 16 * i4] = v;"},
      /* V^{16}_{c} around U^{4}_{a} */
      {"P^{16}_{g=0}L^{4}_{h=0}L^{64}_{d=0}V^{16}_{c=0}U^{4}_{a=0}" MM("f32", "g*4+a", "h*16+c", "d"),
       "r2[i3 + 16 * i4] = v;"},
      /* U around V (the usual register tile): unchanged, the V loop is last */
      {"P^{8}_{g=0}L^{4}_{h=0}L^{64}_{d=0}U^{8}_{a=0}V^{16}_{c=0}" MM("f32", "g*8+a", "h*16+c", "d"),
       "r2[16 * i3 + i4] = v;"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *c = lower(b, cases[i].sched);
    const char *hit = strstr(c, cases[i].update);
    if (!hit) fprintf(stderr, "%s\n", c);
    ck_assert_msg(hit != NULL, "case %zu: no '%s'", i, cases[i].update);
    free(c);
    require_equal(b, NAIVE("f32"), cases[i].sched);
  }
  leir_backend_free(b);
}
END_TEST

/* Exact in every dtype and subscript form it applies to. */
START_TEST(test_scalar_replacement_is_exact) {
  leir_backend *b = cpu_backend(0);
  static const struct {
    const char *naive, *sched;
    bool tiled;
    const char *absent; /* not in the C source (a buffer that stays in memory) */
  } cases[] = {
      /* flipped rows: a negative coefficient */
      {NAIVE("f32"),
       "P^{8}_{g=0}L^{4}_{h=0}L^{64}_{d=0}U^{8}_{a=0}V^{16}_{c=0}" MM("f32", "63-(g*8+a)", "h*16+c",
                                                                     "d"),
       true, NULL},
      {NAIVE("f16"),
       "L^{8}_{g=0}L^{4}_{h=0}L^{64}_{d=0}U^{8}_{a=0}V^{16}_{c=0}" MM("f16", "g*8+a", "h*16+c", "d"),
       true, NULL},
      {NAIVE("i32"),
       "L^{8}_{g=0}L^{8}_{h=0}L^{64}_{d=0}U^{8}_{a=0}U^{8}_{c=0}" MM("i32", "g*8+a", "h*8+c", "d"),
       true, NULL},
      /* two reduction loops: the tile lives across both */
      {NAIVE("f64"),
       "L^{8}_{g=0}L^{4}_{h=0}L^{8}_{f=0}L^{8}_{d=0}U^{8}_{a=0}V^{16}_{c=0}" MM(
           "f64", "g*8+a", "h*16+c", "f*8+d"),
       true, NULL},
      /* a scalar accumulator over an unrolled reduction */
      {"L^{64}_{a=0}L^{64}_{d=0}[D^{f32,g}_{a}=max(D^{f32,g}_{a},A^{f32,g}_{a,d});];",
       "L^{64}_{a=0}L^{16}_{d=0}U^{4}_{c=0}[D^{f32,g}_{a}=max(D^{f32,g}_{a},A^{f32,g}_{a,d*4+c});];",
       true, NULL},
      /* c+e names an element twice: not replaced */
      {"L^{8}_{a=0}L^{8}_{d=0}L^{4}_{c=0}L^{4}_{e=0}[D^{f32,g}_{a,c+e}=D^{f32,g}_{a,c+e}+A^{f32,g}_{a,d}*C^{f32,g}_{d,c};];",
       "L^{8}_{a=0}L^{8}_{d=0}U^{4}_{c=0}U^{4}_{e=0}[D^{f32,g}_{a,c+e}=D^{f32,g}_{a,c+e}+A^{f32,g}_{a,d}*C^{f32,g}_{d,c};];",
       false, NULL},
      /* D also read through another subscript: not replaced (E is) */
      {"L^{8}_{a=0}L^{8}_{d=0}L^{8}_{c=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d};E^{f32,g}_{a,c}=D^{f32,g}_{c,a};];",
       "L^{8}_{a=0}L^{8}_{d=0}U^{8}_{c=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d};E^{f32,g}_{a,c}=D^{f32,g}_{c,a};];",
       true /* E (b2) is */, "r1["},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *c = lower(b, cases[i].sched);
    bool tiled = strstr(c, "scalar replacement") != NULL;
    bool absent = !cases[i].absent || !strstr(c, cases[i].absent);
    if (tiled != cases[i].tiled || !absent) fprintf(stderr, "%s\n", c);
    ck_assert_msg(tiled == cases[i].tiled, "case %zu: tiled %d", i, tiled);
    ck_assert_msg(absent, "case %zu: %s", i, cases[i].absent);
    free(c);
    require_equal(b, cases[i].naive, cases[i].sched);
  }
  leir_backend_free(b);
}
END_TEST

/* --check-bounds keeps every access in memory (each subscript checked). */
START_TEST(test_checked_lowering_keeps_accesses_in_memory) {
  leir_backend *b = cpu_backend(LEIR_BACKEND_CHECK_ALL_BOUNDS | LEIR_BACKEND_LOWER_ONLY);
  char *c = lower(b, "L^{8}_{g=0}L^{64}_{d=0}U^{8}_{a=0}V^{16}_{c=0}" MM("f32", "g*8+a", "c", "d"));
  ck_assert_ptr_null(strstr(c, "scalar replacement"));
  free(c);
  leir_backend_free(b);
}
END_TEST

/* The split domain: the reference's (outer extent <= sqrt(n)) by default,
 * every divisor with LEIR_CANDIDATES_ALL_DIVISORS; the steps it adds apply
 * and verify EQUAL. */
static size_t count_steps(const leir_program *p, const char *strategy, uint32_t flags,
                          const char *want, size_t *at) {
  leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
  size_t idx;
  ck_assert_int_eq(leir_strategy_find(strategy, &idx), LEIR_OK);
  o.strategy = (int32_t)idx;
  o.flags = flags;
  leir_candidates *l = NULL;
  ck_assert_int_eq(leir_candidates_list(&l, p, &o), LEIR_OK);
  size_t n = leir_candidates_count(l);
  *at = SIZE_MAX;
  for (size_t i = 0; i < n; i++)
    if (!strcmp(leir_step_text(leir_candidates_step(l, i)), want)) *at = i;
  leir_candidates_free(l);
  return n;
}

/* leir_step_apply keeps the reference's domain: `step`, listed only with a
 * LEIR_CANDIDATES_* flag, does not apply to p. */
static void require_outside_reference_domain(const leir_program *p, const char *step) {
  leir_step *st = NULL;
  ck_assert_int_eq(leir_step_parse(&st, step, strlen(step)), LEIR_OK);
  leir_program *r = NULL;
  ck_assert_int_ne(leir_step_apply(&r, p, st, NULL), LEIR_OK);
  ck_assert_ptr_null(r);
  leir_step_free(st);
}

START_TEST(test_all_divisors_widen_the_split_and_tile_domains) {
  const char *src = NAIVE("f32");
  leir_program *p = test_parse(src);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  size_t at;
  /* 64 = 2^6: {2,4,8} by default, {2,...,32} with every divisor, per loop */
  ck_assert_uint_eq(count_steps(p, "loop_split", 0, "loop_split nest=0 loop=c factor=16", &at), 9);
  ck_assert_uint_eq(at, SIZE_MAX);
  ck_assert_uint_eq(
      count_steps(p, "loop_split", LEIR_CANDIDATES_ALL_DIVISORS, "loop_split nest=0 loop=c factor=16", &at),
      15);
  ck_assert_uint_ne(at, SIZE_MAX);
  size_t dflt = count_steps(p, "loop_tiling", 0, "", &at);
  size_t all = count_steps(p, "loop_tiling", LEIR_CANDIDATES_ALL_DIVISORS,
                           "loop_tiling nest=0 loops=a,c factors=16,2", &at);
  ck_assert_uint_eq(all, dflt / 9 * 25);
  ck_assert_uint_ne(at, SIZE_MAX);
  /* the new step applies through the list and is exact */
  leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
  size_t idx;
  ck_assert_int_eq(leir_strategy_find("loop_split", &idx), LEIR_OK);
  o.strategy = (int32_t)idx;
  o.flags = LEIR_CANDIDATES_ALL_DIVISORS;
  leir_candidates *l = NULL;
  ck_assert_int_eq(leir_candidates_list(&l, p, &o), LEIR_OK);
  count_steps(p, "loop_split", LEIR_CANDIDATES_ALL_DIVISORS, "loop_split nest=0 loop=c factor=16", &at);
  leir_program *q = NULL;
  ck_assert_int_eq(leir_candidates_apply(&q, l, at), LEIR_OK);
  char *text = NULL;
  size_t len;
  ck_assert_int_eq(leir_program_print(q, 0, &text, &len), LEIR_OK);
  ck_assert_ptr_nonnull(strstr(text, "L^{16}_{g=0}L^{4}_{c=0}"));
  leir_backend *b = cpu_backend(0);
  require_equal(b, src, text);
  leir_backend_free(b);
  require_outside_reference_domain(p, "loop_split nest=0 loop=c factor=16");
  leir_free(text);
  leir_program_free(q);
  leir_candidates_free(l);
  leir_program_free(p);
}
END_TEST

/* ---- partial fusion (LEIR_CANDIDATES_PARTIAL_FUSION) ----------------------- */

/* Step `want` of p from the candidate list of `strategy` (NULL: every
 * strategy) with `flags` and `vector_width`, applied (NULL when it is not
 * listed); *cls its class. */
static leir_program *list_apply_in(const leir_program *p, const char *strategy, uint32_t flags,
                                   uint32_t vector_width, const char *want, leir_exactness *cls) {
  leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
  if (strategy) {
    size_t idx;
    ck_assert_int_eq(leir_strategy_find(strategy, &idx), LEIR_OK);
    o.strategy = (int32_t)idx;
  }
  o.flags = flags;
  o.vector_width = vector_width;
  leir_candidates *l = NULL;
  ck_assert_int_eq(leir_candidates_list(&l, p, &o), LEIR_OK);
  leir_program *q = NULL;
  for (size_t i = 0; i < leir_candidates_count(l) && !q; i++)
    if (!strcmp(leir_step_text(leir_candidates_step(l, i)), want)) {
      ck_assert_int_eq(leir_candidates_apply(&q, l, i), LEIR_OK);
      if (cls) *cls = leir_candidates_exactness(l, i);
    }
  leir_candidates_free(l);
  return q;
}

/* The same from every strategy's list, vector width 16. */
static leir_program *list_apply(const leir_program *p, uint32_t flags, const char *want,
                                leir_exactness *cls) {
  return list_apply_in(p, NULL, flags, 16, want, cls);
}

/* The operator_fusion step `want` of p with `flags` applied (exact, valid),
 * printed; NULL when it is not listed. */
static char *fuse_text(const leir_program *p, uint32_t flags, const char *want) {
  leir_exactness cls;
  leir_program *q = list_apply(p, flags, want, &cls);
  if (!q) return NULL;
  ck_assert(cls == LEIR_EXACT);
  ck_assert_int_eq(leir_program_check(q, NULL, NULL), LEIR_OK);
  char *text = NULL;
  size_t len;
  ck_assert_int_eq(leir_program_print(q, 0, &text, &len), LEIR_OK);
  leir_program_free(q);
  return text;
}

#define SM_MAX "L^{256}_{a=0}L^{256}_{c=0}[D^{f32,g}_{a}=max(D^{f32,g}_{a},A^{f32,g}_{a,c});];"
#define SM_SUM \
  "L^{256}_{a=0}L^{256}_{c=0}[E^{f32,g}_{a}=E^{f32,g}_{a}+exp(A^{f32,g}_{a,c}-D^{f32,g}_{a});];"
#define SM_DIV \
  "L^{256}_{a=0}L^{256}_{c=0}[C^{f32,g}_{a,c}=exp(A^{f32,g}_{a,c}-D^{f32,g}_{a})/E^{f32,g}_{a};];"

START_TEST(test_partial_fusion_puts_row_passes_under_one_loop) {
  const char *src = SM_MAX SM_SUM SM_DIV;
  leir_program *p = test_parse(src);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  const uint32_t PF = LEIR_CANDIDATES_PARTIAL_FUSION;
  size_t at;
  /* the row maximum is complete only after its row: no full fusion, and
   * without the flag nothing at all */
  ck_assert_uint_eq(count_steps(p, "operator_fusion", 0, "", &at), 0);
  ck_assert_uint_eq(count_steps(p, "operator_fusion", PF, "operator_fusion nest=0 depth=1", &at), 2);
  ck_assert_uint_ne(at, SIZE_MAX);
  char *t1 = fuse_text(p, PF, "operator_fusion nest=0 depth=1");
  ck_assert_ptr_nonnull(t1);
  ck_assert_str_eq(t1, "L^{256}_{a=0}[L^{256}_{c=0}[D^{f32,g}_{a}=max(D^{f32,g}_{a},A^{f32,g}_{a,c});];"
                       "L^{256}_{c=0}[E^{f32,g}_{a}=E^{f32,g}_{a}+exp(A^{f32,g}_{a,c}-D^{f32,g}_{a});];];"
                       SM_DIV);
  /* again with the third pass: the fused nest (one loop left) takes the
   * divide nest's inner loop as a third nested nest */
  leir_program *p1 = test_parse(t1);
  ck_assert_int_eq(leir_program_infer_signature(p1), LEIR_OK);
  char *t2 = fuse_text(p1, PF, "operator_fusion nest=0 depth=1");
  ck_assert_ptr_nonnull(t2);
  ck_assert_str_eq(t2, "L^{256}_{a=0}[L^{256}_{c=0}[D^{f32,g}_{a}=max(D^{f32,g}_{a},A^{f32,g}_{a,c});];"
                       "L^{256}_{c=0}[E^{f32,g}_{a}=E^{f32,g}_{a}+exp(A^{f32,g}_{a,c}-D^{f32,g}_{a});];"
                       "L^{256}_{c=0}[C^{f32,g}_{a,c}=exp(A^{f32,g}_{a,c}-D^{f32,g}_{a})/E^{f32,g}_{a};];];");
  /* P on the row loop of the fused nest; results bitwise the same */
  ck_assert_int_eq(t2[0], 'L');
  t2[0] = 'P';
  leir_backend *b = cpu_backend(0);
  require_equal(b, src, t1);
  require_equal(b, src, t2);
  leir_backend_free(b);
  require_outside_reference_domain(p, "operator_fusion nest=0 depth=1");
  leir_free(t1);
  leir_free(t2);
  leir_program_free(p1);
  leir_program_free(p);
}
END_TEST

START_TEST(test_partial_fusion_refusals) {
  const uint32_t PF = LEIR_CANDIDATES_PARTIAL_FUSION;
  size_t at;
  struct {
    const char *src, *want; /* want: the one step listed, or NULL for none */
  } cases[] = {
      /* a full fusion is possible: only that one, no depth */
      {"L^{8}_{a=0}L^{4}_{c=0}[D^{f64,g}_{a,c}=A^{f64,g}_{a,c}*2;];"
       "L^{8}_{a=0}L^{4}_{c=0}[C^{f64,g}_{a,c}=D^{f64,g}_{a,c}+1;];",
       "operator_fusion nest=0"},
      /* a third loop in the second nest: the two shared ones fuse, the
       * third becomes a nested nest */
      {"L^{8}_{a=0}L^{4}_{c=0}[D^{f64,g}_{a,c}=A^{f64,g}_{a,c}*2;];"
       "L^{8}_{a=0}L^{4}_{d=0}L^{2}_{e=0}[C^{f64,g}_{a,d,e}=D^{f64,g}_{a,d}+e;];",
       "operator_fusion nest=0 depth=2"},
      /* a different second loop: shared over the row loop only */
      {"L^{8}_{a=0}L^{4}_{c=0}[D^{f64,g}_{a,c}=A^{f64,g}_{a,c}*2;];"
       "L^{8}_{a=0}L^{2}_{d=0}[C^{f64,g}_{a,d}=D^{f64,g}_{a,d*2}+D^{f64,g}_{a,d*2+1};];",
       "operator_fusion nest=0 depth=1"},
      /* the consumer reads row a+1, written one row later */
      {"L^{8}_{a=0}L^{4}_{c=0}[D^{f64,g}_{a}=D^{f64,g}_{a}+A^{f64,g}_{a,c};];"
       "L^{8}_{a=0}L^{4}_{c=0}[C^{f64,g}_{a,c}=if_then_else(a<7,D^{f64,g}_{a+1},0);];",
       NULL},
      /* a total over every row */
      {"L^{8}_{a=0}L^{4}_{c=0}[S^{f64,g}_{0}=S^{f64,g}_{0}+A^{f64,g}_{a,c};];"
       "L^{8}_{a=0}L^{4}_{c=0}[C^{f64,g}_{a,c}=A^{f64,g}_{a,c}/S^{f64,g}_{0};];",
       NULL},
      /* the second nest's inner loop is named like the shared loop */
      {"L^{8}_{a=0}L^{4}_{c=0}[D^{f64,g}_{a}=D^{f64,g}_{a}+A^{f64,g}_{a,c};];"
       "L^{8}_{c=0}L^{4}_{a=0}[C^{f64,g}_{c,a}=A^{f64,g}_{c,a}/D^{f64,g}_{c};];",
       NULL},
      /* different row extents */
      {"L^{8}_{a=0}L^{4}_{c=0}[D^{f64,g}_{a}=D^{f64,g}_{a}+A^{f64,g}_{a,c};];"
       "L^{4}_{a=0}L^{4}_{c=0}[C^{f64,g}_{a,c}=A^{f64,g}_{a,c}/D^{f64,g}_{a};];",
       NULL},
  };
  leir_backend *b = cpu_backend(0);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    leir_program *p = test_parse(cases[i].src);
    ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
    size_t n = count_steps(p, "operator_fusion", PF, cases[i].want ? cases[i].want : "", &at);
    ck_assert_msg(cases[i].want ? at != SIZE_MAX : n == 0, "case %zu: %zu candidates", i, n);
    /* at most one depth, never beside a full fusion */
    size_t with_depth = 0;
    leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
    o.flags = PF;
    leir_candidates *l = NULL;
    ck_assert_int_eq(leir_candidates_list(&l, p, &o), LEIR_OK);
    for (size_t j = 0; j < leir_candidates_count(l); j++)
      with_depth += strstr(leir_step_text(leir_candidates_step(l, j)), " depth=") != NULL;
    leir_candidates_free(l);
    size_t expect = cases[i].want && strstr(cases[i].want, "depth=") ? 1 : 0;
    ck_assert_msg(with_depth == expect, "case %zu: %zu with depth", i, with_depth);
    if (cases[i].want) {
      char *t = fuse_text(p, PF, cases[i].want);
      require_equal(b, cases[i].src, t);
      leir_free(t);
    }
    leir_program_free(p);
  }
  leir_backend_free(b);
}
END_TEST

/* ---- reduction lanes (LEIR_CANDIDATES_REDUCTION_LANES) --------------------- */

/* The verdict of sched against naive (both parsed, signatures inferred, or
 * program files when they start with "name:"). */
static leir_verdict verdict_of(leir_backend *b, const leir_program *p0, const leir_program *p1) {
  leir_verify_options vo = LEIR_VERIFY_OPTIONS_INIT;
  vo.input_sets = 2;
  leir_verify_report *r = NULL;
  ck_assert_msg(leir_verify(b, p0, p1, &vo, &r) == LEIR_OK, "%s", leir_error_last()->message);
  leir_verdict v = r->verdict;
  leir_verify_report_free(r);
  return v;
}

#define SM_ROWS(n)                                                                            \
  "B^{" n "}_{tx=0}L^{" n "}_{a=0}[D^{f32,g}_{tx}=max(D^{f32,g}_{tx},A^{f32,g}_{tx,a});];"       \
  "B^{" n "}_{tx=0}L^{" n "}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx});];" \
  "B^{" n "}_{tx=0}L^{" n "}_{a=0}[C^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx})/E^{f32,g}_{tx};];"

START_TEST(test_reduction_lanes_vectorize_a_reduction_in_one_step) {
  const uint32_t RL = LEIR_CANDIDATES_REDUCTION_LANES;
  const char *src = SM_ROWS("64");
  leir_program *p = test_parse(src);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  leir_exactness cls;
  /* not without the flag */
  ck_assert_ptr_null(list_apply(p, 0, "reduction_factorization nest=0 loop=a lanes=16", NULL));
  require_outside_reference_domain(p, "reduction_factorization nest=0 loop=a lanes=16");
  /* the row maximum: exact; 16 partial maxima per row in a V loop */
  leir_program *q = list_apply(p, RL, "reduction_factorization nest=0 loop=a lanes=16", &cls);
  ck_assert_ptr_nonnull(q);
  ck_assert(cls == LEIR_EXACT);
  char *t = NULL;
  size_t len;
  ck_assert_int_eq(leir_program_print(q, 0, &t, &len), LEIR_OK);
  ck_assert_ptr_nonnull(strstr(
      t, "B^{64}_{tx=0}L^{4}_{a=0}V^{16}_{f=0}[F^{f32,g}_{tx,f}=max(F^{f32,g}_{tx,f},"
         "A^{f32,g}_{tx,a*16+f});];B^{64}_{tx=0}L^{16}_{f=0}[D^{f32,g}_{tx}=max(D^{f32,g}_{tx},"
         "F^{f32,g}_{tx,f});];"));
  leir_free(t);
  leir_backend *b = cpu_backend(0);
  ck_assert_int_eq(verdict_of(b, p, q), LEIR_VERDICT_EQUAL);
  leir_program_free(q);
  /* the row sum: reassociating, CLOSE */
  q = list_apply(p, RL, "reduction_factorization nest=1 loop=a lanes=16", &cls);
  ck_assert_ptr_nonnull(q);
  ck_assert(cls == LEIR_REASSOCIATING);
  leir_verdict v = verdict_of(b, p, q);
  ck_assert(v == LEIR_VERDICT_CLOSE || v == LEIR_VERDICT_EQUAL);
  leir_program_free(q);
  leir_program_free(p);
  /* the extent must be a multiple of the width, and above it */
  p = test_parse("L^{4}_{a=0}L^{40}_{c=0}[D^{f32,g}_{a}=D^{f32,g}_{a}+A^{f32,g}_{a,c};];"
                 "L^{4}_{a=0}L^{16}_{c=0}[E^{f32,g}_{a}=E^{f32,g}_{a}+A^{f32,g}_{a,c};];");
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  ck_assert_ptr_null(list_apply(p, RL, "reduction_factorization nest=0 loop=c lanes=16", NULL));
  ck_assert_ptr_null(list_apply(p, RL, "reduction_factorization nest=1 loop=c lanes=16", NULL));
  leir_program_free(p);
  leir_backend_free(b);
}
END_TEST

/* The softmax schedule of bench/softmax ("exp stored": one exp per element,
 * vectorized reductions, the passes under the row loop, the exponentials in
 * a row buffer) is 13 listed steps from the catalogue's naive softmax, and
 * CLOSE to it. */
START_TEST(test_softmax_schedule_is_reachable_in_steps) {
  const uint32_t F = LEIR_CANDIDATES_ALL_DIVISORS | LEIR_CANDIDATES_PARTIAL_FUSION |
                     LEIR_CANDIDATES_REDUCTION_LANES;
  /* the signature of the catalogue's program: A in, C out (D, E
   * intermediates) */
  const char *yaml = "inputs:\n  A: {dtype: f32, shape: [256, 256]}\n"
                     "outputs:\n  C: {dtype: f32, shape: [256, 256]}\nleir: |-\n  " SM_ROWS("256") "\n";
  leir_program *p = NULL;
  ck_assert_msg(leir_program_parse_yaml(&p, yaml, strlen(yaml), NULL) == LEIR_OK, "%s",
                leir_error_last()->message);
  static const char *const steps[] = {
      "common_subexpression_elimination nest=1 eq=0 expr=1.1",
      "reduction_factorization nest=0 loop=a lanes=16",
      "reduction_factorization nest=3 loop=a lanes=16",
      "loop_split nest=2 loop=a factor=16",
      "loop_vectorization nest=2 loop=a",
      "loop_split nest=5 loop=a factor=16",
      "loop_vectorization nest=5 loop=a",
      "operator_fusion nest=0 depth=1",
      "operator_fusion nest=0 depth=1",
      "operator_fusion nest=0 depth=1",
      "operator_fusion nest=0 depth=1",
      "operator_fusion nest=0 depth=1",
      "set_storage_scope tensor=F scope=l",
  };
  leir_program *cur = p;
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
    leir_program *q = list_apply(cur, F, steps[i], NULL);
    ck_assert_msg(q != NULL, "step %zu not listed: %s", i, steps[i]);
    if (cur != p) leir_program_free(cur);
    cur = q;
  }
  char *t = NULL;
  size_t len;
  ck_assert_int_eq(leir_program_print(cur, 0, &t, &len), LEIR_OK);
  ck_assert_int_eq(leir_program_nest_count(cur), 1);
  ck_assert_ptr_nonnull(strstr(t, "F^{f32,l}_{tx,f*16+a}=exp("));
  leir_free(t);
  leir_backend *b = cpu_backend(0);
  leir_verdict v = verdict_of(b, p, cur);
  ck_assert(v == LEIR_VERDICT_CLOSE || v == LEIR_VERDICT_EQUAL);
  /* four omp simd loops: the two partial reductions, exp, the quotient */
  char *c = NULL;
  ck_assert_msg(leir_backend_lower(b, cur, &c, &len) == LEIR_OK, "%s", leir_error_last()->message);
  size_t simd = 0;
  for (const char *s = c; (s = strstr(s, "#pragma omp simd")); s++) simd++;
  ck_assert_uint_eq(simd, 4);
  leir_free(c);
  leir_backend_free(b);
  leir_program_free(cur);
  leir_program_free(p);
}
END_TEST

/* ---- local buffers: l/s-scope intermediates sized to their loop level ------- */

/* A program file: inputs A (and C) n x n f32, output D of `dshape`. */
static leir_program *with_sig(const char *leir, int n, bool has_c, const char *dshape) {
  char yaml[4096];
  snprintf(yaml, sizeof yaml,
           "inputs:\n  A: {dtype: f32, shape: [%d, %d]}\n%s"
           "outputs:\n  D: {dtype: f32, shape: [%s]}\nleir: |-\n  %s\n",
           n, n, has_c ? "  C: {dtype: f32, shape: [64, 64]}\n" : "", dshape, leir);
  leir_program *p = NULL;
  ck_assert_msg(leir_program_parse_yaml(&p, yaml, strlen(yaml), NULL) == LEIR_OK, "%s",
                leir_error_last()->message);
  return p;
}

static char *lower_p(leir_backend *b, const leir_program *p) {
  char *out = NULL;
  size_t len = 0;
  ck_assert_msg(leir_backend_lower(b, p, &out, &len) == LEIR_OK, "%s",
                leir_error_last()->message);
  return out;
}

static void require_equal_p(leir_backend *b, const leir_program *p0, const leir_program *p1) {
  leir_verify_options vo = LEIR_VERIFY_OPTIONS_INIT;
  vo.input_sets = 2;
  leir_verify_report *r = NULL;
  ck_assert_msg(leir_verify(b, p0, p1, &vo, &r) == LEIR_OK, "%s", leir_error_last()->message);
  ck_assert_msg(r->verdict == LEIR_VERDICT_EQUAL, "%s", leir_verdict_name(r->verdict));
  leir_verify_report_free(r);
}

/* The end of one case of a lowering table: the generated C `c` met the
 * case's expectation (`ok`; printed when not), and the scheduled program p1
 * is EQUAL to the naive p0. Frees c, p0 and p1. */
static void finish_case(leir_backend *b, char *c, bool ok, size_t i, leir_program *p0,
                        leir_program *p1) {
  if (!ok) fprintf(stderr, "%s\n", c);
  ck_assert_msg(ok, "case %zu: the generated C above", i);
  free(c);
  require_equal_p(b, p0, p1);
  leir_program_free(p0);
  leir_program_free(p1);
}

START_TEST(test_local_intermediates_are_sized_to_their_loop_level) {
  leir_backend *b = cpu_backend(0);
  static const struct {
    const char *naive, *sched;
    bool c;
    const char *dshape;
    const char *decl; /* the local array, or NULL: the buffer stays whole */
    const char *whole; /* the whole buffer's name, never used when local */
  } cases[] = {
      /* partial maxima of a row: 16 per iteration of the P loop, not 64 x 16 */
      {"L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{a}=max(D^{f32,g}_{a},A^{f32,g}_{a,c});];",
       "P^{64}_{a=0}[L^{4}_{c=0}V^{16}_{d=0}[X^{f32,l}_{a,d}=max(X^{f32,l}_{a,d},A^{f32,g}_{a,c*16+d});];"
       "L^{16}_{d=0}[D^{f32,g}_{a}=max(D^{f32,g}_{a},X^{f32,l}_{a,d});];];",
       false, "64", "float p2[16];", "b2["},
      /* the write cache of a tiled matmul: a 32x32 tile, not 64x64 */
      {"L^{64}_{a=0}L^{64}_{c=0}L^{64}_{d=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*C^{f32,g}_{d,c};];",
       "P^{2}_{g=0}L^{2}_{h=0}[L^{64}_{d=0}L^{32}_{a=0}V^{32}_{c=0}[E^{f32,l}_{g*32+a,h*32+c}="
       "E^{f32,l}_{g*32+a,h*32+c}+A^{f32,g}_{g*32+a,d}*C^{f32,g}_{d,h*32+c};];"
       "L^{32}_{a=0}V^{32}_{c=0}[D^{f32,g}_{g*32+a,h*32+c}=E^{f32,l}_{g*32+a,h*32+c};];];",
       true, "64, 64", "float p3[1024];", "b3["},
      /* X_{d} accumulates across the iterations of a: stays whole */
      {"L^{64}_{c=0}L^{16}_{d=0}L^{4}_{a=0}[D^{f32,g}_{d}=D^{f32,g}_{d}+A^{f32,g}_{a*16+d,c};];",
       "L^{64}_{c=0}[L^{4}_{d=0}V^{16}_{e=0}[X^{f32,l}_{e}=X^{f32,l}_{e}+A^{f32,g}_{d*16+e,c};];"
       "L^{16}_{e=0}[D^{f32,g}_{e}=X^{f32,l}_{e};];];",
       false, "16", NULL, NULL},
      /* read by a later nest: stays whole */
      {"L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{a}=A^{f32,g}_{a,c}*2;];",
       "L^{64}_{a=0}[L^{64}_{c=0}[X^{f32,l}_{a,c}=A^{f32,g}_{a,c}*2;];];"
       "L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{a}=X^{f32,l}_{a,c};];",
       false, "64", NULL, NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    leir_program *p0 = with_sig(cases[i].naive, 64, cases[i].c, cases[i].dshape);
    leir_program *p1 = with_sig(cases[i].sched, 64, cases[i].c, cases[i].dshape);
    char *c = lower_p(b, p1);
    bool local = strstr(c, "local to one iteration") != NULL;
    bool ok = local == (cases[i].decl != NULL) && (!cases[i].decl || strstr(c, cases[i].decl)) &&
              (!cases[i].whole || !strstr(c, cases[i].whole));
    finish_case(b, c, ok, i, p0, p1);
  }
  leir_backend_free(b);
}
END_TEST

/* A local row buffer whose last reader writes the output element by element
 * lives in the output's row (lower_c.c, lb_host): the values go to the
 * output while they are computed and the last pass updates it in place.
 * Every case, lent or not, must stay EQUAL to the naive program. */
START_TEST(test_local_buffers_live_in_their_output_when_exact) {
  leir_backend *b = cpu_backend(0);
  static const struct {
    const char *naive, *sched;
    const char *lent; /* the pointer into the output, or NULL: an array of its own */
  } cases[] = {
      /* softmax-like rows: exp(A) into a row buffer, its sum, the quotient */
      {"L^{64}_{a=0}L^{64}_{c=0}[E^{f32,g}_{a}=E^{f32,g}_{a}+exp(A^{f32,g}_{a,c});];"
       "L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{a,c}=exp(A^{f32,g}_{a,c})/E^{f32,g}_{a};];",
       "P^{64}_{a=0}[L^{64}_{c=0}[X^{f32,s}_{a,c}=exp(A^{f32,g}_{a,c});];"
       "L^{64}_{c=0}[E^{f32,g}_{a}=E^{f32,g}_{a}+X^{f32,s}_{a,c};];"
       "L^{4}_{c=0}V^{16}_{d=0}[D^{f32,g}_{a,c*16+d}=X^{f32,s}_{a,c*16+d}/E^{f32,g}_{a};];];",
       "float *const p2 = b1 + 64 * i0 + 0;"},
      /* a block of eight rows, written row by row, read back in the same order */
      {"L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{a,c}=A^{f32,g}_{a,c}*2+1;];",
       "L^{8}_{g=0}[L^{8}_{a=0}L^{64}_{c=0}[X^{f32,l}_{g*8+a,c}=A^{f32,g}_{g*8+a,c}*2;];"
       "L^{8}_{a=0}L^{64}_{c=0}[D^{f32,g}_{g*8+a,c}=X^{f32,l}_{g*8+a,c}+1;];];",
       "float *const p2 = b1 + 512 * i0 + 0;"},
      /* the last reader accumulates into the output (reads it): own array */
      {"L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,c}*2;];",
       "L^{64}_{a=0}[L^{64}_{c=0}[X^{f32,s}_{a,c}=A^{f32,g}_{a,c}*2;];"
       "L^{64}_{c=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+X^{f32,s}_{a,c};];];",
       NULL},
      /* the array is written in the last reader's own loop: own array */
      {"L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{a,c}=A^{f32,g}_{a,c}*2+1;];",
       "L^{64}_{a=0}[L^{64}_{c=0}[X^{f32,s}_{a,c}=A^{f32,g}_{a,c}*2;D^{f32,g}_{a,c}=X^{f32,s}_{a,c}+1;];];",
       NULL},
      /* the last reader writes half a row (the rest by a later nest): own array */
      {"L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{a,c}=A^{f32,g}_{a,c}*2;];",
       "L^{64}_{a=0}[L^{64}_{c=0}[X^{f32,s}_{a,c}=A^{f32,g}_{a,c}*2;];"
       "L^{32}_{c=0}[D^{f32,g}_{a,c}=X^{f32,s}_{a,c};];];"
       "L^{64}_{a=0}L^{32}_{c=0}[D^{f32,g}_{a,c+32}=A^{f32,g}_{a,c+32}*2;];",
       NULL},
      /* a reversed row: each element written where another one waits */
      {"L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{a,63-c}=A^{f32,g}_{a,c}*2;];",
       "L^{64}_{a=0}[L^{64}_{c=0}[X^{f32,s}_{a,c}=A^{f32,g}_{a,c}*2;];"
       "L^{64}_{c=0}[D^{f32,g}_{a,63-c}=X^{f32,s}_{a,c};];];",
       NULL},
      /* the output also written by another equation of the nest: own array */
      {"L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{a,c}=A^{f32,g}_{a,c}*2;];",
       "L^{64}_{a=0}[L^{64}_{c=0}[D^{f32,g}_{a,c}=A^{f32,g}_{a,c};];L^{64}_{c=0}[X^{f32,s}_{a,c}=A^{f32,g}_{a,c}*2;];"
       "L^{64}_{c=0}[D^{f32,g}_{a,c}=X^{f32,s}_{a,c};];];",
       NULL},
      /* another dtype than the output's: own array */
      {"L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{a,c}=A^{f32,g}_{a,c}*2;];",
       "L^{64}_{a=0}[L^{64}_{c=0}[X^{f64,s}_{a,c}=A^{f32,g}_{a,c}*2;];"
       "L^{64}_{c=0}[D^{f32,g}_{a,c}=X^{f64,s}_{a,c};];];",
       NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    leir_program *p0 = with_sig(cases[i].naive, 64, false, "64, 64");
    leir_program *p1 = with_sig(cases[i].sched, 64, false, "64, 64");
    char *c = lower_p(b, p1);
    bool lent = strstr(c, "it is finally written to") != NULL;
    bool ok = strstr(c, "local to one iteration") && lent == (cases[i].lent != NULL) &&
              (!cases[i].lent || strstr(c, cases[i].lent));
    finish_case(b, c, ok, i, p0, p1);
  }
  leir_backend_free(b);
}
END_TEST

/* ---- the analytic cost model (lib/cost.c, docs/cost.md) -------------------- */

#define MM512(loops, a, c, d) loops MM("f32", a, c, d)

static double predict_program(leir_program *p, uint32_t threads);

static double predict(const char *src, uint32_t threads) {
  leir_program *p = test_parse(src);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  return predict_program(p, threads);
}

/* The same for a program file (its signature as written). */
static double predict_yaml(const char *yaml, uint32_t threads) {
  leir_program *p = NULL;
  ck_assert_msg(leir_program_parse_yaml(&p, yaml, strlen(yaml), NULL) == LEIR_OK, "%s",
                leir_error_last()->message);
  return predict_program(p, threads);
}

/* Frees p. */
static double predict_program(leir_program *p, uint32_t threads) {
  leir__analysis *a = NULL;
  ck_assert_int_eq(leir__analyze_program(p, NULL, &a), LEIR_OK);
  leir__machine m;
  leir__machine_host(&m);
  /* a fixed machine, so that the figures do not depend on the host */
  m.threads = threads;
  m.cache[0] = 32u << 10;
  m.cache[1] = 1u << 20;
  m.cache[2] = 16u << 20;
  m.line = 64;
  leir__prediction pr;
  leir__cost_predict(a, &m, &pr);
  ck_assert(pr.seconds > 0 && pr.seconds >= pr.compute_s && pr.seconds >= pr.memory_s);
  leir__analysis_free(a);
  leir_program_free(p);
  return pr.seconds;
}

START_TEST(test_cost_model_ranks_schedules) {
  const char *naive = MM512("L^{512}_{a=0}L^{512}_{c=0}L^{512}_{d=0}", "a", "c", "d");
  const char *reordered = MM512("L^{512}_{a=0}L^{512}_{d=0}L^{512}_{c=0}", "a", "c", "d");
  const char *columns = MM512("L^{512}_{c=0}L^{512}_{d=0}L^{512}_{a=0}", "a", "c", "d");
  const char *tiled_bad =
      MM512("L^{16}_{g=0}L^{16}_{h=0}L^{16}_{i=0}L^{32}_{a=0}L^{32}_{c=0}L^{32}_{d=0}", "g*32+a",
            "h*32+c", "i*32+d");
  const char *tiled =
      MM512("L^{16}_{g=0}L^{16}_{h=0}L^{16}_{i=0}L^{32}_{a=0}L^{32}_{d=0}L^{32}_{c=0}", "g*32+a",
            "h*32+c", "i*32+d");
  const char *reg = MM512("L^{64}_{g=0}L^{32}_{h=0}L^{512}_{d=0}U^{8}_{a=0}V^{16}_{c=0}", "g*8+a",
                          "h*16+c", "d");
  const char *reg_p = MM512("P^{64}_{g=0}L^{32}_{h=0}L^{512}_{d=0}U^{8}_{a=0}V^{16}_{c=0}",
                            "g*8+a", "h*16+c", "d");
  double t_naive = predict(naive, 2), t_re = predict(reordered, 2), t_col = predict(columns, 2),
         t_bad = predict(tiled_bad, 2), t_tiled = predict(tiled, 2), t_reg = predict(reg, 2),
         t_reg_p = predict(reg_p, 2), t_reg_p1 = predict(reg_p, 1);
  /* the accumulator chain of the naive order, the strided columns */
  ck_assert_msg(t_naive > 2 * t_re, "naive %g, reordered %g", t_naive, t_re);
  ck_assert_msg(t_col > 4 * t_re, "columns %g, reordered %g", t_col, t_re);
  ck_assert_msg(t_bad > 2 * t_tiled, "tiled a,c,d %g, tiled a,d,c %g", t_bad, t_tiled);
  /* a register tile beats the reordered loops; P halves it on 2 threads */
  ck_assert_msg(t_reg < t_re, "register tile %g, reordered %g", t_reg, t_re);
  ck_assert_msg(t_reg_p < 0.6 * t_reg && t_reg_p1 >= t_reg, "P %g (1 thread %g), serial %g",
                t_reg_p, t_reg_p1, t_reg);
  /* V on both tile loops: the inner one is a plain loop of the omp simd
   * body; 8 iterations unroll completely (registers, as with U), 32 do not
   * (a local array in L1; bench/cost_model measures both) */
  const char *uv8 = MM512("P^{64}_{g=0}L^{32}_{h=0}L^{512}_{d=0}U^{8}_{a=0}V^{16}_{c=0}",
                          "g*8+a", "h*16+c", "d");
  const char *vv8 = MM512("P^{64}_{g=0}L^{32}_{h=0}L^{512}_{d=0}V^{16}_{c=0}V^{8}_{a=0}",
                          "g*8+a", "h*16+c", "d");
  const char *vv32 = MM512("P^{16}_{g=0}L^{32}_{h=0}L^{512}_{d=0}V^{16}_{c=0}V^{32}_{a=0}",
                           "g*32+a", "h*16+c", "d");
  double t_uv8 = predict(uv8, 2), t_vv8 = predict(vv8, 2), t_vv32 = predict(vv32, 2);
  ck_assert_msg(t_vv8 <= 1.01 * t_uv8 && t_uv8 <= 1.01 * t_vv8, "V around V^8 %g, U^8 %g", t_vv8,
                t_uv8);
  ck_assert_msg(t_vv32 > 1.5 * t_uv8, "V around V^32 %g, U^8 around V %g", t_vv32, t_uv8);
  /* passes under one row loop (a partial fusion) find the row in cache:
   * the softmax schedule with its six nests fused over the rows is
   * predicted well below the same nests apart (4096 x 4096 f32, each pass
   * streaming 64 MiB) */
#define SM_G "L^{256}_{a=0}V^{16}_{f=0}[G^{f32,g}_{tx,f}=max(G^{f32,g}_{tx,f},A^{f32,g}_{tx,a*16+f});];"
#define SM_D "L^{16}_{f=0}[D^{f32,g}_{tx}=max(D^{f32,g}_{tx},G^{f32,g}_{tx,f});];"
#define SM_F "L^{256}_{f=0}V^{16}_{a=0}[F^{f32,g}_{tx,f*16+a}=exp(A^{f32,g}_{tx,f*16+a}-D^{f32,g}_{tx});];"
#define SM_H "L^{256}_{a=0}V^{16}_{f=0}[H^{f32,g}_{tx,f}=H^{f32,g}_{tx,f}+F^{f32,g}_{tx,a*16+f};];"
#define SM_E "L^{16}_{f=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+H^{f32,g}_{tx,f};];"
#define SM_C "L^{256}_{f=0}V^{16}_{a=0}[C^{f32,g}_{tx,f*16+a}=F^{f32,g}_{tx,f*16+a}/E^{f32,g}_{tx};];"
#define ROWS "B^{4096}_{tx=0}"
  double t_apart = predict(ROWS SM_G ROWS SM_D ROWS SM_F ROWS SM_H ROWS SM_E ROWS SM_C, 2);
  double t_fused = predict(ROWS "[" SM_G SM_D SM_F SM_H SM_E SM_C "];", 2);
  double t_two = predict(ROWS "[" SM_G SM_D SM_F "];" ROWS "[" SM_H SM_E SM_C "];", 2);
  ck_assert_msg(t_fused < 0.75 * t_apart && t_two < t_apart && t_fused < t_two,
                "fused %g, two nests %g, apart %g", t_fused, t_two, t_apart);
  /* the public figures: the same flops and bytes, different predicted times */
  leir_program *p0 = test_parse(naive), *p1 = test_parse(reg_p);
  ck_assert_int_eq(leir_program_infer_signature(p0), LEIR_OK);
  ck_assert_int_eq(leir_program_infer_signature(p1), LEIR_OK);
  leir_program_cost c0, c1;
  ck_assert_int_eq(leir_program_cost_get(p0, &c0), LEIR_OK);
  ck_assert_int_eq(leir_program_cost_get(p1, &c1), LEIR_OK);
  ck_assert_uint_eq(c0.flops, c1.flops);
  ck_assert_uint_eq(c0.bytes, c1.bytes);
  double s0 = 0, s1 = 0, s1t = 0;
  ck_assert_int_eq(leir_program_cost_predict(p0, 2, &s0), LEIR_OK);
  ck_assert_int_eq(leir_program_cost_predict(p1, 2, &s1), LEIR_OK);
  ck_assert_int_eq(leir_program_cost_predict(p1, 1, &s1t), LEIR_OK);
  ck_assert(s0 > 10 * s1 && s1t > s1);
  ck_assert_int_eq(leir_program_cost_predict(NULL, 1, &s0), LEIR_ERR_ARGUMENT);
  leir_program_free(p0);
  leir_program_free(p1);
}
END_TEST

/* What the model learnt from measurements at 4096 x 4096 f32 on 2 threads
 * (docs/cost.md): exponentials cost per element, not per lane; gathers of
 * one vector's rows at a power-of-two stride thrash; a column walk over
 * more pages than the TLB holds walks a page table per access; memory
 * bandwidth grows with the threads; an l-scope row buffer under the row
 * loop stays in cache. Each assertion fails with the model before. */
START_TEST(test_cost_model_prices_what_was_measured) {
  /* the online softmax in 8 lanes (three exp per element) against the
   * stored-exp schedule (one): measured 31 and 11 ms, once predicted 10.2
   * and 11.1 ms */
  const char *online = "B^{4096}_{tx=0}[V^{8}_{d=0}[F^{f32,l}_{tx,d}=-inf;G^{f32,l}_{tx,d}=0;];L^{512}_{c=0}[V^{8}_{d=0}[H^{f32,l}_{tx,d}=max(F^{f32,l}_{tx,d},A^{f32,g}_{tx,c*8+d});I^{f32,l}_{tx,d}=exp(A^{f32,g}_{tx,c*8+d}-max(H^{f32,l}_{tx,d},-3.4028234663852886e38));G^{f32,l}_{tx,d}=G^{f32,l}_{tx,d}*exp(F^{f32,l}_{tx,d}-max(H^{f32,l}_{tx,d},-3.4028234663852886e38))+I^{f32,l}_{tx,d};F^{f32,l}_{tx,d}=H^{f32,l}_{tx,d};];];D^{f32,g}_{tx}=-inf;L^{8}_{d=0}[D^{f32,g}_{tx}=max(D^{f32,g}_{tx},F^{f32,l}_{tx,d});];E^{f32,g}_{tx}=0;L^{8}_{d=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+G^{f32,l}_{tx,d}*exp(F^{f32,l}_{tx,d}-D^{f32,g}_{tx});];L^{4096}_{a=0}[C^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx})/E^{f32,g}_{tx};];];";
#define SM_FL "L^{256}_{f=0}V^{16}_{a=0}[F^{f32,l}_{tx,f*16+a}=exp(A^{f32,g}_{tx,f*16+a}-D^{f32,g}_{tx});];"
#define SM_HL "L^{256}_{a=0}V^{16}_{f=0}[H^{f32,g}_{tx,f}=H^{f32,g}_{tx,f}+F^{f32,l}_{tx,a*16+f};];"
#define SM_CL "L^{256}_{f=0}V^{16}_{a=0}[C^{f32,g}_{tx,f*16+a}=F^{f32,l}_{tx,f*16+a}/E^{f32,g}_{tx};];"
  double t_online = predict(online, 2);
  /* as a program file: A in, C out (inferred, every tensor written in the
   * one nest would be an output, F included) */
#define SM_FILE(body) \
  "inputs:\n  A: {dtype: f32, shape: [4096, 4096]}\n" \
  "outputs:\n  C: {dtype: f32, shape: [4096, 4096]}\nleir: |-\n  " ROWS "[" body "];\n"
  double t_stored = predict_yaml(SM_FILE(SM_G SM_D SM_FL SM_HL SM_E SM_CL), 2);
  double t_global = predict_yaml(SM_FILE(SM_G SM_D SM_F SM_H SM_E SM_C), 2);
  ck_assert_msg(t_online > 1.3 * t_stored, "online %g, stored exp %g", t_online, t_stored);
  /* the exp row in an l-scope buffer: a local array, not 64 MiB of F */
  ck_assert_msg(t_stored < 0.97 * t_global, "F local %g, global %g", t_stored, t_global);
  /* one exp more per element: about twice the time of a compute-bound pass */
#define EXPS(e) "P^{4096}_{a=0}L^{256}_{b=0}V^{16}_{c=0}[C^{f32,g}_{a,b*16+c}=" e ";];"
  double t_e1 = predict(EXPS("exp(A^{f32,g}_{a,b*16+c})"), 2),
         t_e2 = predict(EXPS("exp(exp(A^{f32,g}_{a,b*16+c}))"), 2);
  ck_assert_msg(t_e2 > 1.6 * t_e1, "two exps %g, one %g", t_e2, t_e1);
  /* V^{16} over rows of 4096 floats inside the column loop (measured 2.7 s)
   * against U^{16} (14 ms) */
  double t_gather = predict("L^{256}_{g=0}L^{4096}_{c=0}V^{16}_{a=0}[M^{f32,g}_{g*16+a}="
                            "M^{f32,g}_{g*16+a}+A^{f32,g}_{g*16+a,c};];", 1),
         t_unroll = predict("L^{256}_{g=0}L^{4096}_{c=0}U^{16}_{a=0}[M^{f32,g}_{g*16+a}="
                            "M^{f32,g}_{g*16+a}+A^{f32,g}_{g*16+a,c};];", 1);
  ck_assert_msg(t_gather > 20 * t_unroll, "gather %g, unrolled %g", t_gather, t_unroll);
  /* a column walk over 4096 rows (4096 pages) against 1024 rows (they
   * fit): measured 27 and 3.3 cycles an element */
  double t_walk4k = predict("L^{4096}_{c=0}L^{4096}_{a=0}[M^{f32,g}_{a}=M^{f32,g}_{a}+"
                            "A^{f32,g}_{a,c};];", 1),
         t_walk1k = predict("L^{4096}_{c=0}L^{1024}_{a=0}[M^{f32,g}_{a}=M^{f32,g}_{a}+"
                            "A^{f32,g}_{a,c};];", 1);
  ck_assert_msg(t_walk4k > 4 * 4 * t_walk1k, "4096 rows %g, 1024 rows %g", t_walk4k, t_walk1k);
  /* a streaming pass: 12 GB/s on one thread, 23-25 on two */
  double t_serial = predict("L^{4096}_{a=0}L^{4096}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c}*2;];", 2),
         t_par = predict("P^{4096}_{a=0}L^{4096}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c}*2;];", 2);
  ck_assert_msg(t_serial > 1.6 * t_par, "serial %g, P %g", t_serial, t_par);
  /* sqrt is an instruction (-fno-math-errno), not a libm call */
  double t_sqrt = predict("P^{4096}_{a=0}L^{4096}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c}/"
                          "sqrt(D^{f32,g}_{a,c});];", 2),
         t_div = predict("P^{4096}_{a=0}L^{4096}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c}/"
                         "D^{f32,g}_{a,c};];", 2);
  ck_assert_msg(t_sqrt < 1.3 * t_div, "sqrt %g, division %g", t_sqrt, t_div);
#undef EXPS
#undef SM_FILE
#undef SM_FL
#undef SM_HL
#undef SM_CL
}
END_TEST

/* The register-tiled matmul of bench/matmul is six steps from the naive
 * 512^3 program: a tiling outside the reference domain (64 x 8 rows,
 * 32 x 16 columns), two reorders, U, V (16 wide) and P. */
static leir_program *step_to(leir_program *p, const char *strategy, const char *step,
                             uint32_t flags, uint32_t vector_width) {
  leir_exactness cls = LEIR_EXACT;
  leir_program *q = list_apply_in(p, strategy, flags, vector_width, step, &cls);
  ck_assert_msg(q != NULL, "%s is not a candidate", step);
  ck_assert_int_eq(cls, LEIR_EXACT);
  leir_program_free(p);
  return q;
}

START_TEST(test_register_tiled_matmul_is_reachable) {
  leir_program *p = test_parse(
      "L^{512}_{a=0}L^{512}_{c=0}L^{512}_{d=0}" MM("f32", "a", "c", "d"));
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  p = step_to(p, "loop_tiling", "loop_tiling nest=0 loops=a,c factors=64,32",
              LEIR_CANDIDATES_ALL_DIVISORS, 8);
  p = step_to(p, "loop_reorder", "loop_reorder nest=0 loops=a,d", 0, 8);
  p = step_to(p, "loop_reorder", "loop_reorder nest=0 loops=c,a", 0, 8);
  p = step_to(p, "loop_unrolling", "loop_unrolling nest=0 loop=a", 0, 8);
  p = step_to(p, "loop_vectorization", "loop_vectorization nest=0 loop=c", 0, 16);
  p = step_to(p, "loop_parallelization", "loop_parallelization nest=0 loop=g", 0, 8);
  char *text = NULL;
  size_t len;
  ck_assert_int_eq(leir_program_print(p, 0, &text, &len), LEIR_OK);
  ck_assert_str_eq(text, "P^{64}_{g=0}L^{32}_{h=0}L^{512}_{d=0}U^{8}_{a=0}V^{16}_{c=0}" MM(
                             "f32", "g*8+a", "h*16+c", "d"));
  leir_free(text);
  leir_program_free(p);
}
END_TEST

static Suite *codegen_suite(void) {
  Suite *s = suite_create("codegen");
  TCase *tc = tcase_create("scalar_replacement");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_accumulator_tile_is_not_reloaded_in_the_reduction_loop);
  tcase_add_test(tc, test_scalar_replacement_is_exact);
  tcase_add_test(tc, test_tile_lanes_are_contiguous_in_the_simd_loop);
  tcase_add_test(tc, test_checked_lowering_keeps_accesses_in_memory);
  tcase_add_test(tc, test_local_intermediates_are_sized_to_their_loop_level);
  tcase_add_test(tc, test_local_buffers_live_in_their_output_when_exact);
  suite_add_tcase(s, tc);
  tc = tcase_create("cost_model");
  tcase_add_test(tc, test_cost_model_ranks_schedules);
  tcase_add_test(tc, test_cost_model_prices_what_was_measured);
  suite_add_tcase(s, tc);
  tc = tcase_create("split_domain");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_all_divisors_widen_the_split_and_tile_domains);
  tcase_add_test(tc, test_partial_fusion_puts_row_passes_under_one_loop);
  tcase_add_test(tc, test_partial_fusion_refusals);
  tcase_add_test(tc, test_reduction_lanes_vectorize_a_reduction_in_one_step);
  tcase_add_test(tc, test_softmax_schedule_is_reachable_in_steps);
  tcase_add_test(tc, test_register_tiled_matmul_is_reachable);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(codegen_suite()); }
