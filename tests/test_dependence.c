/*
 * The dependence model (lib/dependence.h, docs/dependence.md): fixed
 * answers on hand-written programs for one loop with its enclosing loops
 * held fixed (CPU P/V) or nothing held fixed (CUDA axes), for pairs of
 * nests (commute, fuse, inline), and the relation between the two loop
 * tests over the whole corpus.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cuda/cuda_internal.h"
#include "dependence.h"
#include "testutil.h"

static leir__analysis *analyze(leir_program *p) {
  leir__analysis *a = NULL;
  ck_assert_msg(leir__analyze_program(p, NULL, &a) == LEIR_OK, "%s",
                leir_error_last()->message);
  return a;
}

/* The nest (pre-order, any level) and index of the first loop named
 * `var` in top-level nest `top`. */
static bool find_loop(const leir_program *p, const leir_nest *n, const char *var,
                      const leir_nest **out, uint32_t *k) {
  for (uint32_t i = 0; i < n->nloops; i++)
    if (strcmp(leir__sym_name(p, n->loops[i].sym), var) == 0) {
      *out = n;
      *k = i;
      return true;
    }
  for (uint32_t i = 0; i < n->nitems; i++)
    if (n->items[i].nest && find_loop(p, n->items[i].nest, var, out, k)) return true;
  return false;
}

/* Expects loop `var` of top-level nest `top` to be independent (`cpu`)
 * with its enclosing loops held fixed and (`gpu`) with nothing held fixed;
 * the CPU and CUDA entry points agree with the model. */
static void expect_loop(const char *text, const char *sig, uint32_t top, const char *var,
                        bool cpu, bool gpu) {
  leir_program *p = test_parse(text);
  if (sig) test_set_signature(p, sig);
  leir__analysis *a = analyze(p);
  const leir_nest *n = NULL;
  uint32_t k = 0;
  ck_assert_msg(find_loop(p, p->nests[top], var, &n, &k), "no loop %s", var);
  char why[256] = "";
  bool c = leir__dep_loop_independent(a, n, k, LEIR__HOLD_ENCLOSING, NULL, why, sizeof why);
  ck_assert_msg(c == cpu, "%s: loop %s with enclosing loops fixed: %d, expected %d (%s)", text,
                var, c, cpu, why);
  ck_assert_int_eq(leir__loop_independent(a, n, k, NULL, 0), c);
  const char *tensor = NULL;
  bool g = leir__dep_loop_independent(a, n, k, LEIR__HOLD_NONE, &tensor, why, sizeof why);
  ck_assert_msg(g == gpu, "%s: loop %s with nothing fixed: %d, expected %d (%s)", text, var, g,
                gpu, why);
  if (!g) ck_assert_ptr_nonnull(tensor);
  char what[256];
  ck_assert_int_eq(leir__cuda_loop_conflict(a, top, &n->loops[k], NULL, what, sizeof what), !g);
  leir__analysis_free(a);
  leir_program_free(p);
}

START_TEST(test_reductions) {
  const char *red = "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a};];";
  expect_loop(red, NULL, 0, "tx", true, true);
  expect_loop(red, NULL, 0, "a", false, false);
  /* the reduction axis outside: tx is independent in both senses */
  const char *outer = "L^{8}_{a=0}B^{2}_{tx=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a};];";
  expect_loop(outer, NULL, 0, "tx", true, true);
  expect_loop(outer, NULL, 0, "a", false, false);
  /* max/min accumulations are reductions as well */
  expect_loop("L^{2}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a}=max(C^{f64,g}_{a},A^{f64,g}_{a,c});];", NULL,
              0, "c", false, false);
}
END_TEST

/* A row computed in one inner nest and read by the next, in the same
 * iteration of the parallel loop (softmax's partial maxima, layernorm's
 * partial sums): the read lies in the block the iteration writes. */
START_TEST(test_rows_read_by_the_next_inner_nest) {
  const char *rows = "P^{4}_{a=0}[L^{16}_{d=0}[X^{f32,g}_{a,d}=A^{f32,g}_{a,d};];"
                     "L^{16}_{d=0}[D^{f32,g}_{a}=max(D^{f32,g}_{a},X^{f32,g}_{a,d});];];";
  expect_loop(rows, NULL, 0, "a", true, true);
  /* the same row read backwards, or a flattened block read within it */
  expect_loop("P^{4}_{a=0}[L^{16}_{d=0}[X^{f32,g}_{a,d}=A^{f32,g}_{a,d};];"
              "L^{16}_{d=0}[D^{f32,g}_{a,d}=X^{f32,g}_{a,15-d};];];",
              NULL, 0, "a", true, true);
  expect_loop("P^{4}_{a=0}[L^{16}_{d=0}[X^{f32,g}_{a*16+d}=A^{f32,g}_{a,d};];"
              "L^{8}_{d=0}[D^{f32,g}_{a,d}=X^{f32,g}_{a*16+d+8};];];",
              NULL, 0, "a", true, false); /* the GPU test does not see blocks */
  /* another iteration's row, or past the block: not independent */
  expect_loop("P^{4}_{a=0}[L^{16}_{d=0}[X^{f32,g}_{a,d}=A^{f32,g}_{a,d};];"
              "L^{16}_{d=0}[D^{f32,g}_{a,d}=X^{f32,g}_{3-a,d};];];",
              NULL, 0, "a", false, false);
  expect_loop("P^{4}_{a=0}[L^{8}_{d=0}[X^{f32,g}_{a*8+d}=A^{f32,g}_{a,d};];"
              "L^{4}_{d=0}[D^{f32,g}_{a,d}=X^{f32,g}_{a*4+d};];];",
              NULL, 0, "a", false, false);
}
END_TEST

START_TEST(test_prefix_scans) {
  /* F_{tx,a} reads F_{tx,a-1}: carried by a; tx is independent (the CPU
   * proof: the read lies in the row tx owns) */
  const char *scan = "B^{4}_{tx=0}L^{8}_{a=0}[F^{f64,g}_{tx,a}=if_then_else(a>0,"
                     "F^{f64,g}_{tx,a-1},0)+A^{f64,g}_{tx,a};];";
  expect_loop(scan, NULL, 0, "tx", true, true);
  expect_loop(scan, NULL, 0, "a", false, false);
}
END_TEST

START_TEST(test_stencils) {
  /* reading only inputs at neighbours: independent */
  expect_loop("L^{8}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a}+if_then_else(a<7,A^{f64,g}_{a+1},0);];",
              "A:f64:8 -> C:f64:8", 0, "a", true, true);
  /* reading a neighbour of what the loop writes: carried */
  expect_loop("L^{8}_{a=0}[E^{f64,g}_{a}=A^{f64,g}_{a};C^{f64,g}_{a}=E^{f64,g}_{a}+"
              "if_then_else(a<7,E^{f64,g}_{a+1},0);];",
              "A:f64:8 -> C:f64:8", 0, "a", false, false);
  /* overlapping windows written by the inner loop: independent only while
   * the outer loop is held */
  const char *win = "L^{4}_{a=0}L^{2}_{c=0}[C^{f64,g}_{a+c}=A^{f64,g}_{a,c};];";
  expect_loop(win, "A:f64:4x2 -> C:f64:5", 0, "c", true, false);
  expect_loop(win, "A:f64:4x2 -> C:f64:5", 0, "a", false, false);
}
END_TEST

START_TEST(test_indirect_indices) {
  const char *table = "L^{4}_{a=0}[E^{i64,g}_{a}=3-a;];";
  char text[512];
  /* written through a table: unknown, so not provably disjoint */
  snprintf(text, sizeof text, "%sL^{4}_{a=0}[C^{f64,g}_{E^{i64,g}_{a}}=A^{f64,g}_{a};];", table);
  expect_loop(text, "A:f64:4 -> C:f64:4", 1, "a", false, false);
  /* read through a table from an input: independent */
  snprintf(text, sizeof text, "%sL^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{E^{i64,g}_{a}};];", table);
  expect_loop(text, "A:f64:4 -> C:f64:4", 1, "a", true, true);
}
END_TEST

START_TEST(test_guards) {
  expect_loop("B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=if_then_else(a<4,A^{f64,g}_{tx,a},0);];",
              NULL, 0, "a", true, true);
}
END_TEST

START_TEST(test_multiple_equations) {
  expect_loop("B^{4}_{tx=0}[E^{f64,g}_{tx}=A^{f64,g}_{tx}*2;C^{f64,g}_{tx}=E^{f64,g}_{tx}+1;];",
              NULL, 0, "tx", true, true);
  /* the second equation reads what another iteration writes */
  expect_loop("B^{4}_{tx=0}[E^{f64,g}_{tx}=A^{f64,g}_{tx}*2;C^{f64,g}_{tx}=E^{f64,g}_{3-tx};];",
              NULL, 0, "tx", false, false);
  /* two writes of one buffer, owned through the same dimension */
  expect_loop("B^{4}_{tx=0}[C^{f64,g}_{tx,0}=A^{f64,g}_{tx};C^{f64,g}_{tx,1}=A^{f64,g}_{tx};];",
              "A:f64:4 -> C:f64:4x2", 0, "tx", true, true);
  /* ... interleaved in one dimension (2tx, 2tx+1): disjoint, but both
   * proofs want one form per buffer (conservative) */
  expect_loop("B^{4}_{tx=0}[C^{f64,g}_{tx*2}=A^{f64,g}_{tx};C^{f64,g}_{tx*2+1}=A^{f64,g}_{tx};];",
              "A:f64:4 -> C:f64:8", 0, "tx", false, false);
}
END_TEST

START_TEST(test_nested_nests) {
  /* E is read in a sibling nest over another loop a: in the row tx owns */
  const char *sib = "B^{2}_{tx=0}[L^{4}_{a=0}[E^{f64,g}_{tx,a}=A^{f64,g}_{tx,a};];"
                    "L^{4}_{a=0}[C^{f64,g}_{tx,a}=E^{f64,g}_{tx,a}*2;];];";
  expect_loop(sib, NULL, 0, "tx", true, true);
  expect_loop(sib, NULL, 0, "a", true, true);
  /* a reduction inside a nested nest */
  const char *inner = "B^{2}_{tx=0}[L^{4}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+A^{f64,g}_{tx,a};];"
                      "C^{f64,g}_{tx}=E^{f64,g}_{tx};];";
  expect_loop(inner, NULL, 0, "tx", true, true);
  expect_loop(inner, NULL, 0, "a", false, false);
}
END_TEST

/* ---- nest pairs ------------------------------------------------------------ */

typedef struct two {
  leir_program *p;
  leir__analysis *a;
} two;

static two load(const char *text, const char *sig) {
  two t;
  t.p = test_parse(text);
  if (sig) test_set_signature(t.p, sig);
  t.a = analyze(t.p);
  return t;
}

static void unload(two *t) {
  leir__analysis_free(t->a);
  leir_program_free(t->p);
}

START_TEST(test_fusion_legality) {
  const char *prod = "L^{8}_{a=0}[E^{f64,g}_{a}=A^{f64,g}_{a}*2;];";
  char text[512];
  char why[256];
  /* the consumer reads what the same iteration wrote */
  snprintf(text, sizeof text, "%sL^{8}_{a=0}[C^{f64,g}_{a}=E^{f64,g}_{a}+1;];", prod);
  two t = load(text, "A:f64:8 -> C:f64:8");
  ck_assert(leir__dep_nests_fusable(t.a, 0, 1, 1, why, sizeof why));
  ck_assert(!leir__dep_nests_commute(t.a, 0, 1));
  unload(&t);
  /* X_{a+1}: written by a later iteration of the producer */
  snprintf(text, sizeof text,
           "%sL^{8}_{a=0}[C^{f64,g}_{a}=if_then_else(a<7,E^{f64,g}_{a+1},0);];", prod);
  t = load(text, "A:f64:8 -> C:f64:8");
  ck_assert(!leir__dep_nests_fusable(t.a, 0, 1, 1, why, sizeof why));
  ck_assert_ptr_nonnull(strstr(why, "E"));
  unload(&t);
  /* X_{a-1}: written by an earlier iteration, already done */
  snprintf(text, sizeof text,
           "%sL^{8}_{a=0}[C^{f64,g}_{a}=if_then_else(a>0,E^{f64,g}_{a-1},0);];", prod);
  t = load(text, "A:f64:8 -> C:f64:8");
  ck_assert(leir__dep_nests_fusable(t.a, 0, 1, 1, NULL, 0));
  unload(&t);
  /* two fused loops: the consumer reads the producer's row a+1 */
  t = load("L^{4}_{a=0}L^{2}_{c=0}[E^{f64,g}_{a,c}=A^{f64,g}_{a,c};];"
           "L^{4}_{a=0}L^{2}_{c=0}[C^{f64,g}_{a,c}=if_then_else(a<3,E^{f64,g}_{a+1,c},0);];",
           "A:f64:4x2 -> C:f64:4x2");
  ck_assert(!leir__dep_nests_fusable(t.a, 0, 1, 1, NULL, 0));
  ck_assert(!leir__dep_nests_fusable(t.a, 0, 1, 2, NULL, 0));
  unload(&t);
  /* ... its column c+1 within the same row: fusing a is fine, c is not */
  t = load("L^{4}_{a=0}L^{2}_{c=0}[E^{f64,g}_{a,c}=A^{f64,g}_{a,c};];"
           "L^{4}_{a=0}L^{2}_{c=0}[C^{f64,g}_{a,c}=if_then_else(c<1,E^{f64,g}_{a,c+1},0);];",
           "A:f64:4x2 -> C:f64:4x2");
  ck_assert(leir__dep_nests_fusable(t.a, 0, 1, 1, NULL, 0));
  ck_assert(!leir__dep_nests_fusable(t.a, 0, 1, 2, NULL, 0));
  unload(&t);
  /* extents must match */
  t = load("L^{8}_{a=0}[E^{f64,g}_{a}=A^{f64,g}_{a};];L^{4}_{a=0}[C^{f64,g}_{a}=E^{f64,g}_{a};];",
           "A:f64:8 -> C:f64:4");
  ck_assert(!leir__dep_nests_fusable(t.a, 0, 1, 1, why, sizeof why));
  ck_assert_ptr_nonnull(strstr(why, "extents"));
  unload(&t);
}
END_TEST

START_TEST(test_commute_and_guards) {
  /* independent nests commute */
  two t = load("L^{8}_{a=0}[E^{f64,g}_{a}=A^{f64,g}_{a};];L^{8}_{a=0}[C^{f64,g}_{a}="
               "A^{f64,g}_{a}+1;];B^{1}_{tx=0}[D^{f64,g}=E^{f64,g}_{0};];",
               NULL);
  ck_assert(leir__dep_nests_commute(t.a, 0, 1));
  ck_assert(!leir__dep_nests_commute(t.a, 0, 2));
  unload(&t);
  /* disjoint halves of one buffer */
  t = load("L^{4}_{a=0}[E^{f64,g}_{a}=A^{f64,g}_{a};];L^{4}_{a=0}[E^{f64,g}_{a+4}=A^{f64,g}_{a};];"
           "L^{8}_{a=0}[C^{f64,g}_{a}=E^{f64,g}_{a};];",
           "A:f64:4 -> C:f64:8");
  ck_assert(leir__dep_nests_commute(t.a, 0, 1));
  unload(&t);
  /* parity: 2a and 2a+1 never meet (GCD) */
  t = load("L^{4}_{a=0}[E^{f64,g}_{a*2}=A^{f64,g}_{a};];L^{4}_{a=0}[E^{f64,g}_{a*2+1}="
           "A^{f64,g}_{a};];L^{8}_{a=0}[C^{f64,g}_{a}=E^{f64,g}_{a};];",
           "A:f64:4 -> C:f64:8");
  ck_assert(leir__dep_nests_commute(t.a, 0, 1));
  unload(&t);
  /* a read under a guard that never holds never happens */
  t = load("L^{8}_{a=0}[E^{f64,g}_{a}=A^{f64,g}_{a};];L^{8}_{a=0}[C^{f64,g}_{a}="
           "if_then_else(a>7,E^{f64,g}_{a},1);];",
           "A:f64:8 -> C:f64:8");
  ck_assert(leir__dep_nests_commute(t.a, 0, 1));
  unload(&t);
  /* ... and one that narrows the range away from the writes */
  t = load("L^{4}_{a=0}[E^{f64,g}_{a}=A^{f64,g}_{a};];L^{4}_{a=0}[E^{f64,g}_{a+4}=A^{f64,g}_{a};];"
           "L^{8}_{a=0}[C^{f64,g}_{a}=if_then_else(a<4,E^{f64,g}_{a},0);];",
           "A:f64:4 -> C:f64:8");
  ck_assert(leir__dep_nests_commute(t.a, 1, 2));
  ck_assert(!leir__dep_nests_commute(t.a, 0, 2));
  unload(&t);
  /* an indirect index may meet anything */
  t = load("L^{4}_{a=0}[D^{i64,g}_{a}=a+4;];L^{4}_{a=0}[E^{f64,g}_{a}=A^{f64,g}_{a};];"
           "L^{4}_{a=0}[E^{f64,g}_{D^{i64,g}_{a}}=A^{f64,g}_{a};];"
           "L^{8}_{a=0}[C^{f64,g}_{a}=E^{f64,g}_{a};];",
           "A:f64:4 -> C:f64:8");
  ck_assert(!leir__dep_nests_commute(t.a, 1, 2));
  unload(&t);
}
END_TEST

START_TEST(test_inline_legality) {
  char why[256];
  two t = load("L^{8}_{a=0}[E^{f64,g}_{a}=A^{f64,g}_{a}*2;];"
               "L^{8}_{a=0}[C^{f64,g}_{a}=E^{f64,g}_{a}+1;];",
               "A:f64:8 -> C:f64:8");
  ck_assert(leir__dep_inlinable(t.a, 0, 1, why, sizeof why));
  unload(&t);
  /* the producer's input changes before the consumer reads */
  t = load("L^{8}_{a=0}[F^{f64,g}_{a}=A^{f64,g}_{a};];L^{8}_{a=0}[E^{f64,g}_{a}=F^{f64,g}_{a}*2;];"
           "L^{8}_{a=0}[F^{f64,g}_{a}=0;];"
           "L^{8}_{a=0}[C^{f64,g}_{a}=E^{f64,g}_{a}+F^{f64,g}_{a};];",
           "A:f64:8 -> C:f64:8");
  ck_assert(!leir__dep_inlinable(t.a, 1, 3, why, sizeof why));
  ck_assert_ptr_nonnull(strstr(why, "F"));
  ck_assert(leir__dep_inlinable(t.a, 1, 1 + 1, why, sizeof why) == false);
  unload(&t);
  /* ... a part it does not read */
  t = load("L^{8}_{a=0}[F^{f64,g}_{a}=A^{f64,g}_{a};];L^{4}_{a=0}[E^{f64,g}_{a}=F^{f64,g}_{a}*2;];"
           "L^{4}_{a=0}[F^{f64,g}_{a+4}=0;];"
           "L^{4}_{a=0}[C^{f64,g}_{a}=E^{f64,g}_{a}+F^{f64,g}_{a+4};];",
           "A:f64:8 -> C:f64:4");
  ck_assert(leir__dep_inlinable(t.a, 1, 3, why, sizeof why));
  unload(&t);
  /* an accumulation is no plain definition */
  t = load("L^{8}_{a=0}[E^{f64,g}_{0}=E^{f64,g}_{0}+A^{f64,g}_{a};];"
           "B^{1}_{tx=0}[C^{f64,g}_{tx}=E^{f64,g}_{0};];",
           "A:f64:8 -> C:f64:1");
  ck_assert(!leir__dep_inlinable(t.a, 0, 1, why, sizeof why));
  unload(&t);
}
END_TEST

/* ---- the corpus ------------------------------------------------------------ */

typedef struct tally {
  size_t programs, loops, outermost, cpu_only, gpu_only, outer_gpu_only;
  size_t fusable_pairs, commuting_pairs;
} tally;

static void loops_of(const leir__analysis *a, uint32_t top, const leir_nest *n, uint32_t depth,
                     tally *t) {
  for (uint32_t k = 0; k < n->nloops; k++) {
    bool cpu = leir__loop_independent(a, n, k, NULL, 0);
    char what[64];
    bool gpu = !leir__cuda_loop_conflict(a, top, &n->loops[k], NULL, what, sizeof what);
    ck_assert_int_eq(cpu, leir__dep_loop_independent(a, n, k, LEIR__HOLD_ENCLOSING, NULL, NULL, 0));
    ck_assert_int_eq(gpu, leir__dep_loop_independent(a, n, k, LEIR__HOLD_NONE, NULL, NULL, 0));
    t->loops++;
    bool outermost = depth == 0 && k == 0;
    t->outermost += outermost;
    if (cpu && !gpu) {
      t->cpu_only++;
      /* the relation: with no enclosing loop both tests answer one
       * question, and the CPU test never proves more than the other */
      ck_assert_msg(!outermost, "nest %u: outermost loop %s proven only by the CPU test", top,
                    leir__sym_name(a->p, n->loops[k].sym));
    }
    if (gpu && !cpu) {
      t->gpu_only++;
      t->outer_gpu_only += outermost;
    }
  }
  for (uint32_t i = 0; i < n->nitems; i++)
    if (n->items[i].nest) loops_of(a, top, n->items[i].nest, depth + n->nloops, t);
}

static void corpus_file(const char *name, tally *t) {
  jsonl_file *f = test_corpus_open(name);
  const jsonl_value *o;
  while ((o = jsonl_next(f))) {
    const char *text = jsonl_str(jsonl_get(o, "after"));
    if (!text) text = jsonl_str(jsonl_get(o, "leir"));
    if (!text) continue;
    leir_program *p = NULL;
    if (leir_program_parse(&p, text, strlen(text), NULL) != LEIR_OK) continue;
    leir__analysis *a = NULL;
    if (leir__analyze_program(p, NULL, &a) == LEIR_OK) {
      t->programs++;
      for (uint32_t top = 0; top < p->nnests; top++) loops_of(a, top, p->nests[top], 0, t);
      /* nest pairs: commuting nests fuse over any common loops, and fusing
       * fewer loops is legal whenever fusing more is */
      for (uint32_t n1 = 0; n1 + 1 < p->nnests; n1++) {
        const leir_nest *x = p->nests[n1], *y = p->nests[n1 + 1];
        bool commute = leir__dep_nests_commute(a, n1, n1 + 1);
        ck_assert_int_eq(commute, leir__dep_nests_commute(a, n1, n1 + 1));
        t->commuting_pairs += commute;
        bool prev = true;
        for (uint32_t k = 1; k <= x->nloops && k <= y->nloops && k <= 4; k++) {
          if (x->loops[k - 1].extent != y->loops[k - 1].extent) break;
          bool fus = leir__dep_nests_fusable(a, n1, n1 + 1, k, NULL, 0);
          if (commute) ck_assert_msg(fus, "%s: nests %u, %u commute but do not fuse", text, n1,
                                     n1 + 1);
          if (fus) ck_assert_msg(prev, "%s: nests %u, %u fuse over %u loops, not fewer", text,
                                 n1, n1 + 1, k);
          t->fusable_pairs += fus && k == 1;
          prev = fus;
        }
      }
    }
    leir__analysis_free(a);
    leir_program_free(p);
  }
  jsonl_close(f);
}

START_TEST(test_corpus_cpu_and_cuda_tests) {
  tally t = {0};
  corpus_file("sources-small.jsonl", &t);
  corpus_file("sources-default.jsonl", &t);
  corpus_file("steps-small.jsonl", &t);
  corpus_file("steps-default.jsonl", &t);
  /* the corpus is all there, and both kinds of disagreement occur (the
   * outermost loops' only one way) */
  ck_assert_uint_gt(t.programs, 12000);
  ck_assert_uint_gt(t.cpu_only, 0);
  ck_assert_uint_gt(t.outer_gpu_only, 0);
  ck_assert_uint_gt(t.fusable_pairs, 0);
  fprintf(stderr,
          "dependence: %zu programs, %zu loops (%zu outermost): %zu proven only with the "
          "enclosing loops fixed, %zu only by the separating-dimension test (%zu outermost); "
          "%zu adjacent nest pairs commute, %zu fuse over their first loop\n",
          t.programs, t.loops, t.outermost, t.cpu_only, t.gpu_only, t.outer_gpu_only,
          t.commuting_pairs, t.fusable_pairs);
}
END_TEST

static Suite *dependence_suite(void) {
  Suite *s = suite_create("dependence");
  TCase *tc = tcase_create("loops");
  tcase_add_test(tc, test_reductions);
  tcase_add_test(tc, test_prefix_scans);
  tcase_add_test(tc, test_stencils);
  tcase_add_test(tc, test_indirect_indices);
  tcase_add_test(tc, test_guards);
  tcase_add_test(tc, test_multiple_equations);
  tcase_add_test(tc, test_nested_nests);
  suite_add_tcase(s, tc);
  tc = tcase_create("nests");
  tcase_add_test(tc, test_fusion_legality);
  tcase_add_test(tc, test_commute_and_guards);
  tcase_add_test(tc, test_rows_read_by_the_next_inner_nest);
  tcase_add_test(tc, test_inline_legality);
  suite_add_tcase(s, tc);
  tc = tcase_create("corpus");
  tcase_add_test(tc, test_corpus_cpu_and_cuda_tests);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(dependence_suite()); }
