/*
 * Parse and check diagnostics as fixture files (docs/testing.md):
 * tests/fixtures/diagnostics/NAME.leir holds a program (the file's text
 * without its final newline), NAME.signature an optional signature
 * ("A:f64:2 -> C:f64:2", tests/support/testutil.h), and NAME.diagnostics
 * what the library says about it, byte for byte:
 *
 *   parse LEIR_ERR_PARSE                 (strict parse failed: its error)
 *   1:13 parse.expected: expected a loop header or '[', found end of input
 *
 *   check LEIR_ERR_INVALID               (parsed: leir_program_check's findings)
 *   1:29 check.undefined (D): D is read before any equation writes it
 *
 * A lenient parse (LEIR_PARSE_LENIENT) that says something else adds a
 * "lenient ..." block. With LEIR_UPDATE_FIXTURES=1 the test writes the
 * expected files instead of comparing (new fixtures get theirs; review the
 * diff before committing it).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "testutil.h"

static void put_error(leir__strbuf *b, const char *stage, leir_status st, const leir_error *e) {
  leir__sb_printf(b, "%s %s\n%u:%u %s", stage, leir_status_name(st), e->line, e->column, e->rule);
  if (e->subject && *e->subject) leir__sb_printf(b, " (%s)", e->subject);
  leir__sb_printf(b, ": %s\n", e->message);
}

/* What the library says about `text` (with signature `sig`, or NULL). */
static char *render(const char *text, size_t len, const char *sig) {
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir_parse_options strict = LEIR_PARSE_OPTIONS_INIT, lenient = LEIR_PARSE_OPTIONS_INIT;
  lenient.flags |= LEIR_PARSE_LENIENT;
  leir_program *p = NULL;
  leir_error_clear();
  leir_status st = leir_program_parse(&p, text, len, &strict);
  if (st != LEIR_OK) {
    put_error(&b, "parse", st, leir_error_last());
    leir__strbuf lb = LEIR__STRBUF_INIT;
    leir_program *lp = NULL;
    leir_status lst = leir_program_parse(&lp, text, len, &lenient);
    if (lst != LEIR_OK) put_error(&lb, "parse", lst, leir_error_last());
    else leir__sb_puts(&lb, "parse LEIR_OK\n");
    leir_program_free(lp);
    if (lb.len != b.len || memcmp(lb.data, b.data, b.len) != 0) {
      leir__sb_puts(&b, "lenient ");
      leir__sb_put(&b, lb.data, lb.len);
    }
    leir__sb_release(&lb);
    return leir__sb_finish(&b, NULL);
  }
  if (sig) test_set_signature(p, sig);
  leir_diagnostics *d = NULL;
  st = leir_program_check(p, NULL, &d);
  leir__sb_printf(&b, "check %s\n", leir_status_name(st));
  for (size_t i = 0; i < leir_diagnostics_count(d); i++) {
    const leir_diagnostic *g = leir_diagnostics_get(d, i);
    leir__sb_printf(&b, "%u:%u %s", g->line, g->column, g->rule);
    if (g->subject && *g->subject) leir__sb_printf(&b, " (%s)", g->subject);
    leir__sb_printf(&b, ": %s\n", g->message);
  }
  leir_diagnostics_free(d);
  leir_program_free(p);
  return leir__sb_finish(&b, NULL);
}

static char *read_optional(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fclose(f);
  return test_read_file(path, len);
}

static bool update_mode(void) {
  const char *u = getenv("LEIR_UPDATE_FIXTURES");
  return u && *u && strcmp(u, "0") != 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every NAME.leir of the directory: what the library says is NAME.diagnostics. */
START_TEST(test_diagnostics_match_their_fixture_files) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", test_data_path("../fixtures/diagnostics"));
  DIR *d = opendir(dir);
  ck_assert_msg(d != NULL, "cannot open %s", dir);
  size_t n = 0, cap = 0;
  char **names = NULL;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    size_t l = strlen(de->d_name);
    if (l <= 5 || strcmp(de->d_name + l - 5, ".leir") != 0) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 128;
      names = realloc(names, cap * sizeof *names);
      ck_assert_ptr_nonnull(names);
    }
    names[n++] = strndup(de->d_name, l - 5);
  }
  closedir(d);
  ck_assert_msg(n >= 90, "%zu fixtures in %s (the seeded set has 97)", n, dir);
  qsort(names, n, sizeof *names, by_name);
  bool update = update_mode();
  size_t failed = 0, written = 0, parse = 0, check = 0;
  for (size_t i = 0; i < n; i++) {
    char path[1200];
    size_t len = 0, slen = 0, elen = 0;
    snprintf(path, sizeof path, "%s/%s.leir", dir, names[i]);
    char *text = test_read_file(path, &len);
    if (len && text[len - 1] == '\n') text[--len] = '\0';
    snprintf(path, sizeof path, "%s/%s.signature", dir, names[i]);
    char *sig = read_optional(path, &slen);
    if (sig) sig[strcspn(sig, "\n")] = '\0';
    char *got = render(text, len, sig);
    ck_assert_ptr_nonnull(got);
    if (strncmp(got, "parse ", 6) == 0) parse++;
    else check++;
    snprintf(path, sizeof path, "%s/%s.diagnostics", dir, names[i]);
    char *want = read_optional(path, &elen);
    if (!want || strcmp(want, got) != 0) {
      if (update) {
        FILE *f = fopen(path, "wb");
        ck_assert_msg(f && fputs(got, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
        written++;
      } else {
        failed++;
        fprintf(stderr, "%s: %s\n--- expected\n%s--- got\n%s", names[i],
                want ? "differs" : "no .diagnostics file (LEIR_UPDATE_FIXTURES=1 writes it)",
                want ? want : "", got);
      }
    }
    free(want);
    free(got);
    free(sig);
    free(text);
    free(names[i]);
  }
  free(names);
  if (update) fprintf(stderr, "LEIR_UPDATE_FIXTURES: %zu of %zu expected files written\n", written, n);
  ck_assert_msg(failed == 0, "%zu of %zu fixtures differ (see above; LEIR_UPDATE_FIXTURES=1 "
                "rewrites them)", failed, n);
  /* both kinds are there: a directory of only one would hide a broken half */
  ck_assert_msg(parse > 0 && check > 0, "%zu parse and %zu check fixtures", parse, check);
}
END_TEST

/* The rendering itself: a parse failure, a check finding with its subject,
 * a clean program (so a renderer that printed nothing would fail here). */
START_TEST(test_rendering_of_each_kind) {
  char *a = render("B^{2}_{tx=0}", 12, NULL);
  ck_assert_str_eq(a, "parse LEIR_ERR_PARSE\n1:13 parse.expected: expected a loop header or '[', "
                      "found end of input\n");
  free(a);
  const char *undef = "B^{2}_{tx=0}[C^{f64,g}_{tx}=D^{f64,g}_{tx};];B^{2}_{tx=0}[D^{f64,g}_{tx}=1;];";
  char *b = render(undef, strlen(undef), NULL);
  ck_assert_msg(strncmp(b, "check LEIR_ERR_INVALID\n1:29 check.undefined (D): ", 49) == 0, "%s", b);
  free(b);
  const char *ok = "B^{2}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx}+1;];";
  char *c = render(ok, strlen(ok), "A:f64:2 -> C:f64:2");
  ck_assert_str_eq(c, "check LEIR_OK\n");
  free(c);
}
END_TEST

int main(void) {
  Suite *s = suite_create("diagnostics");
  TCase *t = tcase_create("fixtures");
  tcase_add_test(t, test_rendering_of_each_kind);
  tcase_add_test(t, test_diagnostics_match_their_fixture_files);
  suite_add_tcase(s, t);
  return test_run_suite(s);
}
