/*
 * Hostile input (untrusted LLM output is the normal case): truncations,
 * random bytes, deep nesting, huge numbers, NUL bytes, 10 MB inputs and
 * floods of findings. Every call must end with a clean status; run under
 * ASan+UBSan this suite also proves there is no crash, leak or hang.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* ---- helpers ------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rng(void) {
  /* xorshift64*: fixed seeds keep failures reproducible */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1DULL;
}

static bool is_clean_status(leir_status st) {
  return st == LEIR_OK || st == LEIR_ERR_PARSE || st == LEIR_ERR_INVALID || st == LEIR_ERR_LIMIT ||
         st == LEIR_ERR_SIGNATURE;
}

/* Everything a caller may do with a parsed program; none of it may fail
 * other than with a clean status, and printing must be stable. */
static void exercise_with(leir_program *p, const leir_parse_options *opts) {
  char *text = NULL;
  size_t len = 0;
  ck_assert_int_eq(leir_program_print(p, 0, &text, &len), LEIR_OK);
  leir_program *q = NULL;
  ck_assert_int_eq(leir_program_parse(&q, text, len, opts), LEIR_OK);
  char *again = test_print(q);
  ck_assert_str_eq(again, text);
  leir_free(again);
  ck_assert_uint_eq(leir_program_hash(p), leir_program_hash(q));
  ck_assert_uint_eq(leir_program_hash_alpha(p), leir_program_hash_alpha(q));
  leir_program_free(q);

  char *pretty = test_print_pretty(p);
  leir_parse_options lo = LEIR_PARSE_OPTIONS_INIT;
  if (opts) lo = *opts;
  lo.flags = LEIR_PARSE_LENIENT;
  ck_assert_int_eq(leir_program_parse(&q, pretty, strlen(pretty), &lo), LEIR_OK);
  again = test_print(q);
  ck_assert_str_eq(again, text);
  leir_free(again);
  leir_free(pretty);
  leir_program_free(q);

  leir_diagnostics *d = NULL;
  leir_status st = leir_program_check(p, NULL, &d);
  ck_assert_msg(is_clean_status(st), "check returned %s", leir_status_name(st));
  ck_assert_ptr_nonnull(d);
  if (st == LEIR_OK) ck_assert_uint_eq(leir_diagnostics_count(d), 0);
  else ck_assert_uint_gt(leir_diagnostics_count(d), 0);
  leir_diagnostics_free(d);

  ck_assert_int_eq(leir_program_clone(&q, p), LEIR_OK);
  st = leir_program_infer_signature(q);
  ck_assert_msg(is_clean_status(st), "infer returned %s", leir_status_name(st));
  if (st == LEIR_OK) {
    char *yaml = NULL;
    size_t ylen;
    ck_assert_int_eq(leir_program_to_yaml(q, &yaml, &ylen), LEIR_OK);
    leir_program *r = NULL;
    ck_assert_int_eq(leir_program_parse_yaml(&r, yaml, ylen, opts), LEIR_OK);
    again = test_print(r);
    ck_assert_str_eq(again, text);
    leir_free(again);
    leir_program_free(r);
    leir_free(yaml);
  }
  leir_program_free(q);
  leir_free(text);
}

static void exercise(leir_program *p) { exercise_with(p, NULL); }

/* Parses in both modes; a success is exercised, a failure must be a parse
 * (or limit) error pointing inside the text or just past its end. */
static void try_parse(const char *text, size_t len) {
  for (int lenient = 0; lenient < 2; lenient++) {
    leir_parse_options o = LEIR_PARSE_OPTIONS_INIT;
    o.flags = lenient ? LEIR_PARSE_LENIENT : 0;
    leir_program *p = NULL;
    leir_status st = leir_program_parse(&p, text, len, &o);
    if (st == LEIR_OK) {
      exercise(p);
      leir_program_free(p);
      continue;
    }
    ck_assert_msg(st == LEIR_ERR_PARSE || st == LEIR_ERR_LIMIT, "parse returned %s",
                  leir_status_name(st));
    ck_assert_ptr_null(p);
    const leir_error *e = leir_error_last();
    ck_assert_str_ne(e->rule, "");
    ck_assert_str_ne(e->message, "");
    if (st == LEIR_ERR_PARSE) {
      ck_assert_uint_ge(e->line, 1);
      ck_assert_uint_ge(e->column, 1);
      if (e->line == 1) ck_assert_uint_le(e->column, len + 1);
    }
  }
}

static char *repeat(const char *unit, size_t times, const char *prefix, const char *suffix,
                    size_t *len_out) {
  size_t ul = strlen(unit), pl = strlen(prefix), sl = strlen(suffix);
  size_t len = pl + ul * times + sl;
  char *buf = malloc(len + 1);
  ck_assert_ptr_nonnull(buf);
  memcpy(buf, prefix, pl);
  for (size_t i = 0; i < times; i++) memcpy(buf + pl + i * ul, unit, ul);
  memcpy(buf + pl + ul * times, suffix, sl);
  buf[len] = '\0';
  if (len_out) *len_out = len;
  return buf;
}

static void expect_depth_error(const char *text, size_t len) {
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse(&p, text, len, NULL), LEIR_ERR_PARSE);
  ck_assert_str_eq(leir_error_last()->rule, "parse.depth");
  ck_assert_ptr_null(p);
}

/* ---- truncation ---------------------------------------------------------- */

static const char *const truncation_programs[] = {
    /* softmax */
    "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];"
    "B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];"
    "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];",
    /* padding guard, indirect index, nested nest, powers and calls */
    "B^{2}_{tx=0}L^{3}_{a=0}L^{12}_{c=0}L^{10}_{d=0}[E^{f64,g}_{tx,a,c,d}=if_then_else(2<=c<10&1<=d<9,"
    "A^{f64,g}_{tx,a,c-2,d-1},0);];B^{4}_{tx=0}[F^{i64,g}_{tx}=0;L^{3}_{a=0}[F^{i64,g}_{tx}="
    "if_then_else(A^{f64,g}_{0,a,0,0}>=-1.5e-3,a,F^{i64,g}_{tx});];G^{f64,g}_{tx}=-H^{f64,g}_{F^{i64,g}_{tx}}"
    "**2+min(1.0,sqrt(abs(-inf)),erf(tx//2%3));];",
};

START_TEST(test_truncation_at_every_byte_offset) {
  for (size_t k = 0; k < sizeof truncation_programs / sizeof *truncation_programs; k++) {
    const char *full = truncation_programs[k];
    size_t n = strlen(full);
    for (size_t cut = 0; cut < n; cut++) {
      /* a copy of exactly `cut` bytes, so ASan sees any read past the end */
      char *prefix = malloc(cut ? cut : 1);
      ck_assert_ptr_nonnull(prefix);
      memcpy(prefix, full, cut);
      leir_program *p = NULL;
      leir_status st = leir_program_parse(&p, prefix, cut, NULL);
      if (st == LEIR_OK) {
        /* only whole nests make a program */
        ck_assert(cut >= 2 && prefix[cut - 2] == ']' && prefix[cut - 1] == ';');
        char *out = test_print(p);
        ck_assert_uint_eq(strlen(out), cut);
        ck_assert_int_eq(memcmp(out, prefix, cut), 0);
        leir_free(out);
        leir_program_free(p);
      } else {
        ck_assert_int_eq(st, LEIR_ERR_PARSE);
        ck_assert_uint_eq(leir_error_last()->line, 1);
        ck_assert_uint_le(leir_error_last()->column, cut + 1);
      }
      try_parse(prefix, cut);
      free(prefix);
    }
  }
}
END_TEST

START_TEST(test_truncated_corpus_programs) {
  /* every 7th cut of the first 40 source programs */
  jsonl_file *f = test_corpus_open("sources-small.jsonl");
  const jsonl_value *o;
  int programs = 0;
  while ((o = jsonl_next(f)) && programs++ < 40) {
    const char *text = jsonl_str(jsonl_get(o, "leir"));
    size_t n = strlen(text);
    for (size_t cut = 1; cut < n; cut += 7) {
      char *prefix = malloc(cut);
      memcpy(prefix, text, cut);
      leir_program *p = NULL;
      leir_status st = leir_program_parse(&p, prefix, cut, NULL);
      ck_assert(st == LEIR_OK || st == LEIR_ERR_PARSE);
      leir_program_free(p);
      free(prefix);
    }
  }
  jsonl_close(f);
}
END_TEST

/* ---- random bytes ---------------------------------------------------------- */

START_TEST(test_random_bytes) {
  rng_state = 0x9E3779B97F4A7C15ULL;
  static const char alphabet[] = "LPVUBACDEFGHI^{}_[];,=+-*/%()<>!&|.0123456789eacdftxgsl fi64 \n\t";
  char buf[512];
  for (int iter = 0; iter < 3000; iter++) {
    size_t len = rng() % sizeof buf;
    bool any_byte = iter % 4 == 0;
    for (size_t i = 0; i < len; i++)
      buf[i] = any_byte ? (char)(rng() & 0xff) : alphabet[rng() % (sizeof alphabet - 1)];
    try_parse(buf, len);
  }
}
END_TEST

START_TEST(test_random_mutations_of_corpus_programs) {
  rng_state = 0xD1B54A32D192ED03ULL;
  static const char tokens[][8] = {"]",  "[",  ";",  "];", "_{", "^{", "}",   ",",  "(",
                                   ")",  "-",  "+",  "*",  "**", "//", "<",   "&",  "0",
                                   "9",  "a",  "tx", "A",  "C",  "f64", "i64", "L^{", "B^{"};
  jsonl_file *f = test_corpus_open("sources-small.jsonl");
  const jsonl_value *o;
  char buf[16384];
  int parsed = 0, total = 0;
  while ((o = jsonl_next(f))) {
    const char *text = jsonl_str(jsonl_get(o, "leir"));
    size_t n = strlen(text);
    if (n + 64 > sizeof buf) continue;
    for (int iter = 0; iter < 25; iter++) {
      memcpy(buf, text, n);
      size_t len = n;
      int edits = 1 + (int)(rng() % 3);
      for (int e = 0; e < edits && len > 0; e++) {
        size_t at = rng() % len;
        /* half of the edits keep the syntax (a digit for a digit, a letter
         * for a letter of the same case), so the checks get exercised */
        if (rng() % 2) {
          char c = buf[at];
          if (c >= '0' && c <= '9') buf[at] = (char)('0' + rng() % 10);
          else if (c >= 'a' && c <= 'z' && c != 't') buf[at] = "acdfghx"[rng() % 7];
          else if (c >= 'A' && c <= 'Z' && !strchr("LPVUB", c)) buf[at] = "ACDEFG"[rng() % 6];
          continue;
        }
        switch (rng() % 4) {
          case 0: /* delete a span */ {
            size_t span = 1 + rng() % 8;
            if (at + span > len) span = len - at;
            memmove(buf + at, buf + at + span, len - at - span);
            len -= span;
            break;
          }
          case 1: /* insert a token */ {
            const char *t = tokens[rng() % (sizeof tokens / sizeof *tokens)];
            size_t tl = strlen(t);
            memmove(buf + at + tl, buf + at, len - at);
            memcpy(buf + at, t, tl);
            len += tl;
            break;
          }
          case 2: /* replace a byte by a digit (changes extents and indices) */
            buf[at] = (char)('0' + rng() % 10);
            break;
          default: /* duplicate a span */ {
            size_t span = 1 + rng() % 16;
            if (at + span > len) span = len - at;
            if (len + span > sizeof buf) break;
            memmove(buf + at + span, buf + at, len - at);
            len += span;
            break;
          }
        }
      }
      leir_program *p = NULL;
      if (leir_program_parse(&p, buf, len, NULL) == LEIR_OK) parsed++;
      leir_program_free(p);
      try_parse(buf, len);
      total++;
    }
  }
  jsonl_close(f);
  /* the mutations must reach past the parser often enough to test the checks */
  ck_assert_int_gt(parsed, total / 4);
}
END_TEST

/* ---- nesting ------------------------------------------------------------ */

START_TEST(test_deep_parentheses) {
  size_t len;
  char *opens = repeat("(", 100000, "B^{1}_{tx=0}[C^{f64,g}=", "", &len);
  expect_depth_error(opens, len);
  free(opens);
  /* balanced: "((((1))))" */
  char *deep = malloc(300000);
  int n = snprintf(deep, 300000, "B^{1}_{tx=0}[C^{f64,g}=");
  for (int i = 0; i < 100000; i++) deep[n++] = '(';
  deep[n++] = '1';
  for (int i = 0; i < 100000; i++) deep[n++] = ')';
  n += snprintf(deep + n, 300000 - (size_t)n, ";];");
  expect_depth_error(deep, (size_t)n);
  free(deep);
}
END_TEST

START_TEST(test_deep_nests) {
  size_t len;
  char *text = repeat("[", 100000, "", "", &len);
  expect_depth_error(text, len);
  free(text);
  text = repeat("L^{2}_{a=0}[", 5000, "", "", &len);
  expect_depth_error(text, len);
  free(text);
  /* many loops on one nest: parsed, then refused by the checker */
  text = repeat("L^{1}_{a=0}", 150, "", "[C^{f64,g}=1;];", &len);
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse(&p, text, len, NULL), LEIR_OK);
  leir_diagnostics *d = NULL;
  ck_assert_int_ne(leir_program_check(p, NULL, &d), LEIR_OK);
  ck_assert_uint_gt(leir_diagnostics_count(d), 0);
  leir_diagnostics_free(d);
  leir_program_free(p);
  free(text);
  text = repeat("L^{1}_{a=0}", 5000, "", "[C^{f64,g}=1;];", &len);
  expect_depth_error(text, len);
  free(text);
}
END_TEST

START_TEST(test_long_operator_chains) {
  /* Regression: a+a+...+a built a left-deep tree of unbounded height, and
   * the recursive printer and checker overflowed the stack. */
  static const char *const units[] = {"+1", "*a", "-a", "/2", "**2", "//2"};
  for (size_t u = 0; u < sizeof units / sizeof *units; u++) {
    size_t len;
    char *text = repeat(units[u], 1000000, "L^{2}_{a=0}[C^{f64,g}=1", ";];", &len);
    expect_depth_error(text, len);
    free(text);
  }
  size_t len;
  char *text = repeat("-", 1000000, "L^{2}_{a=0}[C^{f64,g}=", "1;];", &len);
  expect_depth_error(text, len);
  free(text);
  text = repeat("+a", 1000000, "L^{2}_{a=0}[C^{f64,g}_{a", "}=1;];", &len);
  expect_depth_error(text, len);
  free(text);
  text = repeat("&a<1", 1000000, "L^{2}_{a=0}[C^{f64,g}=if_then_else(a<1", ",1,0);];", &len);
  expect_depth_error(text, len);
  free(text);
  text = repeat("|a<1", 1000000, "L^{2}_{a=0}[C^{f64,g}=if_then_else(a<1", ",1,0);];", &len);
  expect_depth_error(text, len);
  free(text);
  /* wide but shallow is fine: n-ary max and comparison chains */
  text = repeat(",a", 100000, "L^{2}_{a=0}[C^{f64,g}_{a}=max(a", ");];", &len);
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse(&p, text, len, NULL), LEIR_OK);
  exercise(p);
  leir_program_free(p);
  free(text);
  text = repeat("<a", 100000, "L^{2}_{a=0}[C^{f64,g}_{a}=if_then_else(0", ",1,0);];", &len);
  ck_assert_int_eq(leir_program_parse(&p, text, len, NULL), LEIR_OK);
  exercise(p);
  leir_program_free(p);
  free(text);
}
END_TEST

START_TEST(test_deep_calls_and_indices) {
  size_t len;
  char *text = repeat("exp(", 100000, "B^{1}_{tx=0}[C^{f64,g}=", "", &len);
  expect_depth_error(text, len);
  free(text);
  text = repeat("A^{i64,g}_{", 100000, "B^{1}_{tx=0}[C^{f64,g}=", "", &len);
  expect_depth_error(text, len);
  free(text);
  text = repeat("if_then_else(a<1,1,", 100000, "L^{2}_{a=0}[C^{f64,g}=", "", &len);
  expect_depth_error(text, len);
  free(text);
}
END_TEST

/* The deepest accepted tree still goes through every pass (the sanitizer
 * build has much larger stack frames). */
START_TEST(test_deepest_accepted_expressions_are_usable) {
  leir_parse_options o = LEIR_PARSE_OPTIONS_INIT;
  char *text = malloc(1 << 16);
  for (int kind = 0; kind < 4; kind++) {
    int n;
    leir_program *p = NULL;
    for (int height = (int)o.max_depth - 1; height <= (int)o.max_depth + 1; height++) {
      n = snprintf(text, 1 << 16, "L^{2}_{a=0}L^{3}_{c=0}[C^{f64,g}_{a}=");
      /* build an expression tree of exactly `height` levels */
      switch (kind) {
        case 0: /* a+a+...: a left chain of height-1 additions */
          n += snprintf(text + n, 100, "a");
          for (int i = 1; i < height; i++) n += snprintf(text + n, 100, "+a");
          break;
        case 1: /* nested unary minus */
          for (int i = 1; i < height; i++) text[n++] = '-';
          text[n++] = 'a';
          break;
        case 2: /* nested calls */
          for (int i = 1; i < height; i++) n += snprintf(text + n, 100, "min(");
          n += snprintf(text + n, 100, "a");
          for (int i = 1; i < height; i++) n += snprintf(text + n, 100, ",1)");
          break;
        default: /* guards inside guards; the condition has height 2 */
          for (int i = 2; i < height; i++) n += snprintf(text + n, 100, "if_then_else(a<1,");
          n += snprintf(text + n, 100, "a");
          for (int i = 2; i < height; i++) n += snprintf(text + n, 100, ",c)");
          break;
      }
      n += snprintf(text + n, 100, ";];");
      leir_status st = leir_program_parse(&p, text, (size_t)n, NULL);
      if (height <= (int)o.max_depth) {
        ck_assert_msg(st == LEIR_OK, "kind %d height %d: %s", kind, height,
                      leir_error_last()->message);
        exercise(p);
        leir_program_free(p);
      } else {
        ck_assert_int_eq(st, LEIR_ERR_PARSE);
        ck_assert_str_eq(leir_error_last()->rule, "parse.depth");
      }
    }
  }
  free(text);
  /* a larger limit is honoured up to the documented ceiling */
  size_t len;
  text = repeat("+a", 600, "L^{2}_{a=0}[C^{f64,g}=a", ";];", &len);
  o.max_depth = 5000; /* clamped to 1000 */
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse(&p, text, len, &o), LEIR_OK);
  exercise_with(p, &o);
  leir_program_free(p);
  free(text);
  text = repeat("+a", 1200, "L^{2}_{a=0}[C^{f64,g}=a", ";];", &len);
  ck_assert_int_eq(leir_program_parse(&p, text, len, &o), LEIR_ERR_PARSE);
  ck_assert_str_eq(leir_error_last()->rule, "parse.depth");
  free(text);
}
END_TEST

/* Every pass over the deepest accepted programs fits a small thread stack:
 * embedders call the library from threads (256 KiB here; sanitizers need
 * several times more). */
#if defined(__SANITIZE_ADDRESS__)
#define SMALL_STACK ((size_t)4 << 20)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SMALL_STACK ((size_t)4 << 20)
#endif
#endif
#ifndef SMALL_STACK
#define SMALL_STACK ((size_t)256 << 10)
#endif

typedef struct deep_job {
  const char *text;
  size_t len;
  int ok;
} deep_job;

static void *run_deep_job(void *arg) {
  deep_job *j = arg;
  leir_program *p = NULL;
  if (leir_program_parse(&p, j->text, j->len, NULL) != LEIR_OK) return NULL;
  leir_diagnostics *d = NULL;
  leir_status st = leir_program_check(p, NULL, &d);
  leir_diagnostics_free(d);
  char *out = NULL, *pretty = NULL;
  bool printed = leir_program_print(p, 0, &out, NULL) == LEIR_OK &&
                 leir_program_print(p, LEIR_PRINT_PRETTY, &pretty, NULL) == LEIR_OK;
  leir_free(pretty);
  (void)leir_program_hash(p);
  (void)leir_program_hash_alpha(p);
  leir_program *q = NULL;
  bool cloned = leir_program_clone(&q, p) == LEIR_OK;
  leir_walk_callbacks cb = LEIR_WALK_CALLBACKS_INIT;
  (void)leir_program_walk(p, &cb, NULL);
  leir_free(out);
  leir_program_free(q);
  leir_program_free(p);
  j->ok = printed && cloned && (st == LEIR_OK || st == LEIR_ERR_INVALID);
  return NULL;
}

START_TEST(test_deepest_programs_fit_a_small_thread_stack) {
  static const char *const shapes[][4] = {
      /* prefix, repeated opener, core, repeated closer */
      {"L^{2}_{a=0}L^{3}_{c=0}[C^{f64,g}_{a}=", "if_then_else(a<1,", "a", ",c)"},
      {"L^{2}_{a=0}[C^{f64,g}_{a}=", "max(", "a", ",1)"},
      {"L^{2}_{a=0}[C^{f64,g}_{a}=", "(", "a", ")"},
      {"L^{2}_{a=0}[C^{f64,g}_{a}=", "-", "a", ""},
      {"L^{2}_{a=0}[E^{i64,g}_{a}=0;C^{f64,g}_{a}=A^{f64,g}_{", "E^{i64,g}_{", "a", "}"},
      {"", "L^{1}_{a=0}[", "C^{f64,g}=1;", "];"},
  };
  char *text = malloc(1 << 20);
  for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
    int n = snprintf(text, 1 << 20, "%s", shapes[k][0]);
    /* as deep as the default limit allows (the tree or nest height stays
     * within 200 with the prefix's own levels) */
    int levels = 190;
    for (int i = 0; i < levels; i++) n += snprintf(text + n, 64, "%s", shapes[k][1]);
    n += snprintf(text + n, 64, "%s", shapes[k][2]);
    for (int i = 0; i < levels; i++) n += snprintf(text + n, 64, "%s", shapes[k][3]);
    if (k == 4) n += snprintf(text + n, 64, "};];");
    else if (k != 5) n += snprintf(text + n, 64, ";];");
    deep_job job = {text, (size_t)n, 0};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    ck_assert_int_eq(pthread_attr_setstacksize(&attr, SMALL_STACK), 0);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, &attr, run_deep_job, &job), 0);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    pthread_attr_destroy(&attr);
    ck_assert_msg(job.ok, "shape %zu: %.80s...", k, text);
  }
  free(text);
}
END_TEST

/* ---- numbers -------------------------------------------------------------- */

START_TEST(test_integers_overflowing_int64) {
  test_expect_parse_error("L^{9223372036854775808}_{a=0}[C^{f64,g}=1;];", 0, LEIR_ERR_PARSE, 1, 4,
                          "parse.integer", "integer too large");
  test_expect_parse_error("L^{2}_{a=0}[C^{f64,g}_{a+18446744073709551616}=1;];", 0,
                          LEIR_ERR_PARSE, 1, 26, "parse.integer", "integer too large");
  /* the largest int64 parses; the checker refuses it */
  leir_program *p = test_parse("L^{9223372036854775807}_{a=0}[C^{f64,g}_{a}=1;];");
  leir_diagnostics *d = NULL;
  ck_assert_int_eq(leir_program_check(p, NULL, &d), LEIR_ERR_LIMIT);
  ck_assert_str_eq(leir_diagnostics_get(d, 0)->rule, "limit.extent");
  leir_diagnostics_free(d);
  leir_program_free(p);
  /* a value literal beyond int64 is a float literal, kept as written */
  p = test_parse("B^{1}_{tx=0}[C^{f64,g}=99999999999999999999999999999;];");
  char *out = test_print(p);
  ck_assert_str_eq(out, "B^{1}_{tx=0}[C^{f64,g}=99999999999999999999999999999;];");
  leir_free(out);
  exercise(p);
  leir_program_free(p);
  /* index arithmetic that overflows int64 cannot be bounded */
  p = test_parse(
      "L^{2}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a*9223372036854775807*2+9223372036854775807};];");
  ck_assert_int_ne(leir_program_check(p, NULL, NULL), LEIR_OK);
  exercise(p);
  leir_program_free(p);
  p = test_parse("B^{1}_{tx=0}[C^{f64,g}_{9223372036854775807}=1;];");
  ck_assert_int_ne(leir_program_check(p, NULL, NULL), LEIR_OK);
  exercise(p);
  leir_program_free(p);
}
END_TEST

START_TEST(test_huge_extents) {
  static const char *const programs[] = {
      /* product of extents overflows uint64 */
      "L^{4294967296}_{a=0}L^{4294967296}_{c=0}L^{4294967296}_{d=0}[C^{f64,g}=C^{f64,g}+1;];",
      /* one nest above the default work limit */
      "L^{2147483647}_{a=0}L^{2147483647}_{c=0}[C^{f64,g}=C^{f64,g}+1;];",
      /* extents of zero */
      "L^{0}_{a=0}[C^{f64,g}_{a}=1;];",
      /* an intermediate of 2^62 elements */
      "L^{2147483647}_{a=0}[C^{f64,g}_{a,a,a}=1;];B^{1}_{tx=0}[D^{f64,g}=C^{f64,g}_{0,0,0};];",
  };
  for (size_t i = 0; i < sizeof programs / sizeof *programs; i++) {
    leir_program *p = test_parse(programs[i]);
    leir_diagnostics *d = NULL;
    leir_status st = leir_program_check(p, NULL, &d);
    ck_assert_msg(st == LEIR_ERR_LIMIT || st == LEIR_ERR_INVALID, "%s: %s", programs[i],
                  leir_status_name(st));
    ck_assert_uint_gt(leir_diagnostics_count(d), 0);
    leir_diagnostics_free(d);
    exercise(p);
    leir_program_free(p);
  }
}
END_TEST

/* ---- NUL bytes --------------------------------------------------------------- */

START_TEST(test_nul_bytes_anywhere) {
  const char *src = truncation_programs[0];
  size_t n = strlen(src);
  char *buf = malloc(n);
  for (size_t at = 0; at < n; at += 3) {
    memcpy(buf, src, n);
    buf[at] = '\0';
    leir_program *p = NULL;
    for (int lenient = 0; lenient < 2; lenient++) {
      leir_parse_options o = LEIR_PARSE_OPTIONS_INIT;
      o.flags = lenient ? LEIR_PARSE_LENIENT : 0;
      ck_assert_int_eq(leir_program_parse(&p, buf, n, &o), LEIR_ERR_PARSE);
      /* at the NUL, or at the start of the token it cuts short */
      uint32_t col = leir_error_last()->column;
      ck_assert_uint_le(col, at + 1);
      ck_assert_uint_ge(col + 8, at + 1);
      if (col == at + 1) ck_assert_ptr_nonnull(strstr(leir_error_last()->message, "NUL"));
    }
    ck_assert_int_eq(leir_program_parse_yaml(&p, buf, n, NULL), LEIR_ERR_PARSE);
  }
  free(buf);
}
END_TEST

/* ---- 10 MB inputs ----------------------------------------------------------- */

#define TEN_MB (10u << 20)

static const char relu_nest[] = "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=max(A^{f64,g}_{tx,a},0);];";

START_TEST(test_ten_megabytes_valid) {
  size_t times = TEN_MB / (sizeof relu_nest - 1) + 1, len;
  char *text = repeat(relu_nest, times, "", "", &len);
  ck_assert_uint_ge(len, TEN_MB);
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse(&p, text, len, NULL), LEIR_OK);
  ck_assert_uint_eq(leir_program_nest_count(p), times);
  char *out = NULL;
  size_t olen;
  ck_assert_int_eq(leir_program_print(p, 0, &out, &olen), LEIR_OK);
  ck_assert_uint_eq(olen, len);
  ck_assert_int_eq(memcmp(out, text, len), 0);
  leir_free(out);
  ck_assert_int_eq(leir_program_check(p, NULL, NULL), LEIR_OK);
  ck_assert_uint_ne(leir_program_hash(p), 0);
  ck_assert_uint_ne(leir_program_hash_alpha(p), 0);
  leir_program_free(p);
  free(text);
}
END_TEST

START_TEST(test_ten_megabytes_invalid) {
  size_t times = TEN_MB / (sizeof relu_nest - 1) + 1, len;
  /* the last nest lacks its final ';' */
  char *text = repeat(relu_nest, times, "", "", &len);
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse(&p, text, len - 1, NULL), LEIR_ERR_PARSE);
  ck_assert_uint_eq(leir_error_last()->column, len);
  /* a whitespace flood in the middle is rejected in strict mode at its start */
  memset(text + len / 2, ' ', len / 4);
  ck_assert_int_eq(leir_program_parse(&p, text, len, NULL), LEIR_ERR_PARSE);
  /* ...and skipped in lenient mode until it runs into the middle of a token */
  leir_parse_options o = LEIR_PARSE_OPTIONS_INIT;
  o.flags = LEIR_PARSE_LENIENT;
  leir_status st = leir_program_parse(&p, text, len, &o);
  ck_assert(st == LEIR_OK || st == LEIR_ERR_PARSE);
  leir_program_free(p);
  p = NULL;
  free(text);
  /* 10 MB of one character */
  static const char fills[] = "([{;-1aA\n";
  text = malloc(TEN_MB);
  for (const char *c = fills; *c; c++) {
    memset(text, *c, TEN_MB);
    for (int lenient = 0; lenient < 2; lenient++) {
      o.flags = lenient ? LEIR_PARSE_LENIENT : 0;
      st = leir_program_parse(&p, text, TEN_MB, &o);
      ck_assert_int_eq(st, LEIR_ERR_PARSE);
    }
  }
  /* a 10 MB number literal and a 10 MB name */
  memcpy(text, "B^{1}_{tx=0}[C^{f64,g}=", 23);
  memset(text + 23, '7', TEN_MB - 23);
  ck_assert_int_eq(leir_program_parse(&p, text, TEN_MB, NULL), LEIR_ERR_PARSE);
  ck_assert_str_eq(leir_error_last()->rule, "parse.number");
  memset(text + 23, 'a', TEN_MB - 23);
  ck_assert_int_eq(leir_program_parse(&p, text, TEN_MB, NULL), LEIR_ERR_PARSE);
  memset(text + 13, 'C', 1);
  memset(text + 14, 'a', TEN_MB - 14);
  ck_assert_int_eq(leir_program_parse(&p, text, TEN_MB, NULL), LEIR_ERR_PARSE);
  /* YAML of 10 MB: one long scalar */
  memcpy(text, "leir: ", 6);
  memset(text + 6, 'x', TEN_MB - 6);
  ck_assert_int_eq(leir_program_parse_yaml(&p, text, TEN_MB, NULL), LEIR_ERR_PARSE);
  free(text);
}
END_TEST

/* ---- floods of findings ------------------------------------------------------- */

START_TEST(test_many_diagnostics) {
  /* 200k reads of an unknown loop variable: one finding each, capped list */
  size_t len;
  char *text = repeat("B^{1}_{tx=0}[C^{f64,g}=q;];", 200000, "", "", &len);
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse(&p, text, len, NULL), LEIR_OK);
  leir_diagnostics *d = NULL;
  ck_assert_int_eq(leir_program_check(p, NULL, &d), LEIR_ERR_INVALID);
  ck_assert_uint_eq(leir_diagnostics_count(d), 1000);
  ck_assert_str_eq(leir_diagnostics_get(d, 0)->rule, "check.unknown-var");
  ck_assert_uint_eq(leir_diagnostics_get(d, 0)->column, 24);
  ck_assert_str_eq(leir_error_last()->rule, "check.unknown-var");
  leir_diagnostics_free(d);
  leir_program_free(p);
  free(text);
  /* out-of-bounds reads everywhere */
  text = repeat("L^{4}_{a=0}[C^{f64,g}_{a}=C^{f64,g}_{a+1};];", 50000, "B^{1}_{tx=0}[C^{f64,g}_{3}=1;];",
                "", &len);
  ck_assert_int_eq(leir_program_parse(&p, text, len, NULL), LEIR_OK);
  ck_assert_int_eq(leir_program_check(p, NULL, &d), LEIR_ERR_INVALID);
  ck_assert_uint_eq(leir_diagnostics_count(d), 1000);
  ck_assert_str_eq(leir_diagnostics_get(d, 0)->rule, "check.bounds");
  leir_diagnostics_free(d);
  leir_program_free(p);
  free(text);
}
END_TEST

START_TEST(test_many_names) {
  /* 100k distinct tensor and loop names */
  char *text = malloc(8 << 20);
  size_t n = 0;
  for (int i = 0; i < 100000; i++) {
    char t[16], v[16];
    int x = i;
    int k = 0;
    t[k++] = 'C';
    do {
      t[k++] = (char)('a' + x % 26);
      x /= 26;
    } while (x);
    t[k] = '\0';
    snprintf(v, sizeof v, "q%d", i);
    n += (size_t)snprintf(text + n, (8u << 20) - n, "L^{1}_{%s=0}[%s^{f64,g}_{%s}=1;];", v, t, v);
  }
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse(&p, text, n, NULL), LEIR_OK);
  exercise(p);
  leir_program_free(p);
  free(text);
}
END_TEST

static Suite *hostile_suite(void) {
  Suite *s = suite_create("hostile");
  TCase *tc = tcase_create("truncation");
  tcase_add_test(tc, test_truncation_at_every_byte_offset);
  tcase_add_test(tc, test_truncated_corpus_programs);
  suite_add_tcase(s, tc);
  tc = tcase_create("random");
  tcase_add_test(tc, test_random_bytes);
  tcase_add_test(tc, test_random_mutations_of_corpus_programs);
  suite_add_tcase(s, tc);
  tc = tcase_create("nesting");
  tcase_add_test(tc, test_deep_parentheses);
  tcase_add_test(tc, test_deep_nests);
  tcase_add_test(tc, test_long_operator_chains);
  tcase_add_test(tc, test_deep_calls_and_indices);
  tcase_add_test(tc, test_deepest_accepted_expressions_are_usable);
  tcase_add_test(tc, test_deepest_programs_fit_a_small_thread_stack);
  suite_add_tcase(s, tc);
  tc = tcase_create("numbers");
  tcase_add_test(tc, test_integers_overflowing_int64);
  tcase_add_test(tc, test_huge_extents);
  tcase_add_test(tc, test_nul_bytes_anywhere);
  suite_add_tcase(s, tc);
  tc = tcase_create("size");
  tcase_add_test(tc, test_ten_megabytes_valid);
  tcase_add_test(tc, test_ten_megabytes_invalid);
  tcase_add_test(tc, test_many_diagnostics);
  tcase_add_test(tc, test_many_names);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(hostile_suite()); }
