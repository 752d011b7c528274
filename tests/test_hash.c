/*
 * Identity (spec/leir.md §4): XXH3-64 of the canonical text, and the
 * alpha-normalized hash that ignores fresh names of loops and
 * intermediates while keeping the known variables' names.
 */
#include <stdio.h>
#include <string.h>

#include "hashset.h"
#include "ir.h"
#include "testutil.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

static uint64_t hash_of(const char *text, bool alpha) {
  leir_program *p = test_parse_flags(text, LEIR_PARSE_LENIENT);
  uint64_t h = alpha ? leir_program_hash_alpha(p) : leir_program_hash(p);
  leir_program_free(p);
  return h;
}

static uint64_t alpha_with_signature(const char *text, const char *sig) {
  leir_program *p = test_parse(text);
  test_set_signature(p, sig);
  uint64_t h = leir_program_hash_alpha(p);
  leir_program_free(p);
  return h;
}

static const char *const softmax =
    "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];"
    "B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];"
    "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];";

/* softmax with the intermediates renamed (D->Q, E->Aa) and the loops
 * renamed differently in each nest */
static const char *const softmax_renamed =
    "B^{2}_{tx=0}L^{8}_{c=0}[Q^{f64,g}_{tx}=max(Q^{f64,g}_{tx},A^{f64,g}_{tx,c});];"
    "B^{2}_{txq=0}L^{8}_{a=0}[Aa^{f64,g}_{txq}=Aa^{f64,g}_{txq}+exp(A^{f64,g}_{txq,a}-Q^{f64,g}_{txq});];"
    "B^{2}_{tx=0}L^{8}_{w=0}[C^{f64,g}_{tx,w}=exp(A^{f64,g}_{tx,w}-Q^{f64,g}_{tx})/Aa^{f64,g}_{tx};];";

START_TEST(test_hash_is_xxh3_of_canonical_text) {
  leir_program *p = test_parse(softmax);
  ck_assert_uint_eq(leir_program_hash(p), XXH3_64bits(softmax, strlen(softmax)));
  leir_program_free(p);
  /* whitespace in lenient input does not change it */
  const char *spaced =
      "B^{2}_{tx=0} L^{8}_{a=0} [ D^{f64,g}_{tx} = max(D^{f64,g}_{tx}, A^{f64,g}_{tx,a}); ];\n"
      "B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];\n"
      "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];\n";
  ck_assert_uint_eq(hash_of(spaced, false), XXH3_64bits(softmax, strlen(softmax)));
  ck_assert_uint_eq(leir_program_hash(NULL), 0);
  ck_assert_uint_eq(leir_program_hash_alpha(NULL), 0);
}
END_TEST

START_TEST(test_hash_distinguishes_programs) {
  ck_assert_uint_ne(hash_of(softmax, false), hash_of(softmax_renamed, false));
  /* explicit parentheses and number spellings are part of the text */
  ck_assert_uint_ne(hash_of("[C^{f64,g}=1;];", false), hash_of("[C^{f64,g}=(1);];", false));
  ck_assert_uint_ne(hash_of("[C^{f64,g}=1.0;];", false), hash_of("[C^{f64,g}=1;];", false));
}
END_TEST

START_TEST(test_alpha_hash_ignores_fresh_names) {
  ck_assert_uint_eq(hash_of(softmax, true), hash_of(softmax_renamed, true));
  /* with an explicit signature too */
  ck_assert_uint_eq(alpha_with_signature(softmax, "A:f64:2x8 -> C:f64:2x8"),
                    alpha_with_signature(softmax_renamed, "A:f64:2x8 -> C:f64:2x8"));
  /* intermediates swap names: still the same program (inference would make
   * every tensor written in the last nest an output, so give the interface) */
  ck_assert_uint_eq(
      alpha_with_signature("L^{4}_{a=0}[D^{f64,g}_{a}=A^{f64,g}_{a};E^{f64,g}_{a}=D^{f64,g}_{a}*2;"
                           "C^{f64,g}_{a}=E^{f64,g}_{a};];", "A:f64:4 -> C:f64:4"),
      alpha_with_signature("L^{4}_{c=0}[E^{f64,g}_{c}=A^{f64,g}_{c};D^{f64,g}_{c}=E^{f64,g}_{c}*2;"
                           "C^{f64,g}_{c}=D^{f64,g}_{c};];", "A:f64:4 -> C:f64:4"));
  ck_assert_uint_ne(
      hash_of("L^{4}_{a=0}[D^{f64,g}_{a}=A^{f64,g}_{a};E^{f64,g}_{a}=D^{f64,g}_{a}*2;C^{f64,g}_{a}=E^{f64,g}_{a};];", true),
      hash_of("L^{4}_{c=0}[E^{f64,g}_{c}=A^{f64,g}_{c};D^{f64,g}_{c}=E^{f64,g}_{c}*2;C^{f64,g}_{c}=D^{f64,g}_{c};];", true));
  /* loops inside nested nests are renamed by first appearance */
  ck_assert_uint_eq(
      hash_of("B^{2}_{tx=0}[L^{4}_{a=0}[C^{f64,g}_{tx,a}=A^{f64,g}_{tx,a};];L^{3}_{c=0}[D^{f64,g}_{tx,c}=1;];];", true),
      hash_of("B^{2}_{by=0}[L^{4}_{d=0}[C^{f64,g}_{by,d}=A^{f64,g}_{by,d};];L^{3}_{a=0}[D^{f64,g}_{by,a}=1;];];", true));
}
END_TEST

START_TEST(test_alpha_hash_keeps_known_names) {
  /* renaming an input changes the program's interface */
  ck_assert_uint_ne(alpha_with_signature("L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];", "A:f64:4 -> C:f64:4"),
                    alpha_with_signature("L^{4}_{a=0}[C^{f64,g}_{a}=Z^{f64,g}_{a};];", "Z:f64:4 -> C:f64:4"));
  /* so does renaming the output */
  ck_assert_uint_ne(alpha_with_signature("L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];", "A:f64:4 -> C:f64:4"),
                    alpha_with_signature("L^{4}_{a=0}[D^{f64,g}_{a}=A^{f64,g}_{a};];", "A:f64:4 -> D:f64:4"));
  /* without a signature the inferred interface is kept */
  ck_assert_uint_ne(hash_of("L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];", true),
                    hash_of("L^{4}_{a=0}[C^{f64,g}_{a}=Z^{f64,g}_{a};];", true));
  /* a known variable named like an intermediate of the other program */
  ck_assert_uint_ne(alpha_with_signature("L^{4}_{a=0}[D^{f64,g}_{a}=A^{f64,g}_{a};C^{f64,g}_{a}=D^{f64,g}_{a};];",
                                         "A:f64:4 -> C:f64:4"),
                    alpha_with_signature("L^{4}_{a=0}[D^{f64,g}_{a}=A^{f64,g}_{a};C^{f64,g}_{a}=D^{f64,g}_{a};];",
                                         "A:f64:4 -> C:f64:4,D:f64:4"));
  /* when inference fails every tensor counts as known (nothing renamed) */
  const char *bad = "L^{4}_{a=0}[D^{f64,g}_{a}=A^{f64,g}_{a+1}+q;C^{f64,g}_{a}=D^{f64,g}_{a};];";
  const char *bad_renamed = "L^{4}_{a=0}[E^{f64,g}_{a}=A^{f64,g}_{a+1}+q;C^{f64,g}_{a}=E^{f64,g}_{a};];";
  ck_assert_uint_ne(hash_of(bad, true), hash_of(bad_renamed, true));
  /* and hashing never disturbs the caller's last error */
  leir_program *p = test_parse(bad);
  leir_program *q = NULL;
  ck_assert_int_eq(leir_program_parse(&q, "x", 1, NULL), LEIR_ERR_PARSE);
  (void)leir_program_hash_alpha(p);
  ck_assert_int_eq(leir_error_last()->status, LEIR_ERR_PARSE);
  ck_assert_str_eq(leir_error_last()->rule, "parse.expected");
  leir_program_free(p);
}
END_TEST

START_TEST(test_alpha_hash_sees_real_changes) {
  uint64_t base = hash_of(softmax, true);
  /* extent, operator, constant, dtype, scope, loop kind, nest order */
  const char *variants[] = {
      "B^{2}_{tx=0}L^{9}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];",
      "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=min(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];",
      "B^{2}_{tx=0}L^{8}_{a=0}[D^{f32,g}_{tx}=max(D^{f32,g}_{tx},A^{f64,g}_{tx,a});];",
      "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,s}_{tx}=max(D^{f64,s}_{tx},A^{f64,g}_{tx,a});];",
      "B^{2}_{tx=0}P^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];",
      "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(A^{f64,g}_{tx,a},D^{f64,g}_{tx});];",
  };
  const char *rest =
      "B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];"
      "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];";
  for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
    char text[1024];
    snprintf(text, sizeof text, "%s%s", variants[i], rest);
    ck_assert_msg(hash_of(text, true) != base, "variant %zu hashes like the original", i);
  }
  /* swapping which loop variable an index uses is a real change */
  ck_assert_uint_ne(hash_of("L^{2}_{a=0}L^{3}_{c=0}[C^{f64,g}_{a,c}=A^{f64,g}_{a,c};];", true),
                    hash_of("L^{2}_{a=0}L^{3}_{c=0}[C^{f64,g}_{a,c}=A^{f64,g}_{c,a};];", true));
}
END_TEST

/* Renames every intermediate and loop variable of each source program (by
 * editing the symbol table of a copy) and checks the alpha hash. */
START_TEST(test_alpha_hash_over_the_corpus) {
  jsonl_file *f = test_corpus_open("sources-small.jsonl");
  const jsonl_value *o;
  int n = 0;
  while ((o = jsonl_next(f))) {
    const char *text = jsonl_str(jsonl_get(o, "leir"));
    leir_program *p = test_parse(text);
    uint64_t alpha = leir_program_hash_alpha(p);
    uint64_t plain = leir_program_hash(p);
    ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
    bool known[4096] = {false};
    ck_assert_uint_lt(p->syms.count, 4096);
    for (size_t i = 0; i < leir_program_signature_count(p); i++)
      known[p->sig[i].sym] = true;
    /* new names: intermediates become Q, Qa, Qc, ...; loops a -> ka, ... */
    char names[4096][24];
    int renamed = 0;
    for (uint32_t s = 0; s < p->syms.count; s++) {
      const char *old = p->syms.names[s];
      if (known[s]) continue;
      if (old[0] >= 'A' && old[0] <= 'Z') {
        snprintf(names[s], sizeof names[s], "Q%s", old + 1);
        /* keep names distinct from existing ones: Q + the old tail, then
         * a suffix derived from the first letter */
        size_t len = strlen(names[s]);
        names[s][len] = (char)('a' + (old[0] - 'A'));
        names[s][len + 1] = '\0';
      } else if (old[0] == 't' || old[0] == 'b') {
        snprintf(names[s], sizeof names[s], "%.2szz%s", old, old + 2);
      } else {
        snprintf(names[s], sizeof names[s], "kk%s", old);
      }
      p->syms.names[s] = names[s];
      p->syms.lens[s] = (uint32_t)strlen(names[s]);
      renamed++;
    }
    ck_assert_int_gt(renamed, 0);
    /* reparse the renamed text so the program is built normally */
    char *out = test_print(p);
    leir_program *q = test_parse(out);
    ck_assert_msg(leir_program_hash_alpha(q) == alpha, "%s: alpha hash changed by renaming",
                  jsonl_str(jsonl_get(o, "id")));
    ck_assert_uint_ne(leir_program_hash(q), plain);
    leir_program_free(q);
    leir_free(out);
    leir_program_free(p);
    n++;
  }
  jsonl_close(f);
  ck_assert_int_eq(n, 121);
}
END_TEST

START_TEST(test_alpha_hash_is_stable_across_copies) {
  leir_program *p = test_parse(softmax);
  leir_program *q = NULL;
  ck_assert_int_eq(leir_program_clone(&q, p), LEIR_OK);
  ck_assert_uint_eq(leir_program_hash_alpha(p), leir_program_hash_alpha(q));
  ck_assert_uint_eq(leir_program_hash(p), leir_program_hash(q));
  /* the alpha hash is not the plain hash */
  ck_assert_uint_ne(leir_program_hash_alpha(p), leir_program_hash(p));
  leir_program_free(q);
  leir_program_free(p);
}
END_TEST

/* lib/hashset.h: what is added is found, nothing else is, across growth;
 * an add of a present key says so; 0 and 1 are one key; release empties. */
START_TEST(test_hashset_holds_exactly_what_was_added) {
  leir__hashset s = LEIR__HASHSET_INIT(4);
  ck_assert(!leir__hashset_has(&s, 7));
  for (uint64_t k = 0; k < 5000; k++) ck_assert_int_eq(leir__hashset_add(&s, k * 0x10001ull + 2), 1);
  ck_assert_uint_eq(s.count, 5000);
  ck_assert_uint_ge(s.cap, 2 * s.count); /* at most half full */
  for (uint64_t k = 0; k < 5000; k++) {
    ck_assert(leir__hashset_has(&s, k * 0x10001ull + 2));
    ck_assert(!leir__hashset_has(&s, k * 0x10001ull + 3));
  }
  ck_assert_int_eq(leir__hashset_add(&s, 2), 0);
  ck_assert_uint_eq(s.count, 5000);
  ck_assert(!leir__hashset_has(&s, 0));
  ck_assert_int_eq(leir__hashset_add(&s, 0), 1);
  ck_assert(leir__hashset_has(&s, 1)); /* 0 is stored as 1 */
  ck_assert_int_eq(leir__hashset_add(&s, 1), 0);
  leir__hashset_release(&s);
  ck_assert(!leir__hashset_has(&s, 2));
  ck_assert_int_eq(leir__hashset_add(&s, 2), 1);
  ck_assert_uint_eq(s.cap, 4); /* the first allocation again */
  leir__hashset_release(&s);
}
END_TEST

static Suite *hash_suite(void) {
  Suite *s = suite_create("hash");
  TCase *tc = tcase_create("hash");
  tcase_add_test(tc, test_hash_is_xxh3_of_canonical_text);
  tcase_add_test(tc, test_hash_distinguishes_programs);
  tcase_add_test(tc, test_alpha_hash_ignores_fresh_names);
  tcase_add_test(tc, test_alpha_hash_keeps_known_names);
  tcase_add_test(tc, test_alpha_hash_sees_real_changes);
  tcase_add_test(tc, test_alpha_hash_over_the_corpus);
  tcase_add_test(tc, test_alpha_hash_is_stable_across_copies);
  tcase_add_test(tc, test_hashset_holds_exactly_what_was_added);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(hash_suite()); }
