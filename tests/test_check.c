/*
 * Static checks (spec/leir.md §3.4-§3.6): for every rule a program that
 * breaks it and a close one that does not; implicit initialization kinds;
 * the whole corpus passes (with the reference's own bugs listed).
 */
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "testutil.h"

/* Checks `text` (with signature `sig`, or inferred when NULL) and expects
 * `rule` as the first finding (NULL: valid) at line 1, column `col` (0: any),
 * with `msg` in its message. */
static void expect_check(const char *text, const char *sig, const leir_check_options *opts,
                         leir_status status, const char *rule, uint32_t col, const char *msg) {
  leir_program *p = test_parse(text);
  if (sig) test_set_signature(p, sig);
  leir_diagnostics *d = NULL;
  leir_error_clear();
  leir_status st = leir_program_check(p, opts, &d);
  const leir_diagnostic *first = leir_diagnostics_get(d, 0);
  ck_assert_msg(st == status, "%s: status %s, expected %s (%s)", text, leir_status_name(st),
                leir_status_name(status), first ? first->message : "no finding");
  if (!rule) {
    ck_assert_uint_eq(leir_diagnostics_count(d), 0);
    ck_assert_int_eq(leir_error_last()->status, LEIR_OK);
  } else {
    ck_assert_ptr_nonnull(first);
    ck_assert_msg(strcmp(first->rule, rule) == 0, "%s: first finding [%s] %s, expected [%s]",
                  text, first->rule, first->message, rule);
    if (col) {
      ck_assert_uint_eq(first->line, 1);
      ck_assert_msg(first->column == col, "%s: finding at column %u, expected %u (%s)", text,
                    first->column, col, first->message);
    }
    if (msg)
      ck_assert_msg(strstr(first->message, msg) != NULL, "%s: message '%s' lacks '%s'", text,
                    first->message, msg);
    /* the last error is the first finding (in program order) */
    ck_assert_int_eq(leir_error_last()->status, status);
    ck_assert_str_eq(leir_error_last()->rule, first->rule);
    /* and the same status without a diagnostics list */
    ck_assert_int_eq(leir_program_check(p, opts, NULL), status);
  }
  leir_diagnostics_free(d);
  leir_program_free(p);
}

/* Some finding (not necessarily the first) has `rule` and `msg`. */
static void expect_finding(const char *text, const char *sig, const char *rule, const char *msg) {
  leir_program *p = test_parse(text);
  if (sig) test_set_signature(p, sig);
  leir_diagnostics *d = NULL;
  ck_assert_int_ne(leir_program_check(p, NULL, &d), LEIR_OK);
  bool found = false;
  for (size_t i = 0; i < leir_diagnostics_count(d); i++) {
    const leir_diagnostic *g = leir_diagnostics_get(d, i);
    found = found || (strcmp(g->rule, rule) == 0 && strstr(g->message, msg));
  }
  ck_assert_msg(found, "%s: no [%s] finding with '%s'", text, rule, msg);
  leir_diagnostics_free(d);
  leir_program_free(p);
}

#define VALID(text, sig) expect_check(text, sig, NULL, LEIR_OK, NULL, 0, NULL)
#define INVALID(text, sig, rule, col, msg) \
  expect_check(text, sig, NULL, LEIR_ERR_INVALID, rule, col, msg)

/* ---- definedness ------------------------------------------------------------ */

START_TEST(test_undefined) {
  INVALID("B^{2}_{tx=0}[C^{f64,g}_{tx}=D^{f64,g}_{tx};];B^{2}_{tx=0}[D^{f64,g}_{tx}=1;];", NULL,
          "check.undefined", 29, "D is read before any equation writes it");
  INVALID("B^{2}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx}+E^{f64,g}_{tx};];", "A:f64:2 -> C:f64:2",
          "check.undefined", 44, "E is neither a known variable (signature) nor written");
  VALID("B^{2}_{tx=0}[D^{f64,g}_{tx}=1;];B^{2}_{tx=0}[C^{f64,g}_{tx}=D^{f64,g}_{tx};];", NULL);
  VALID("B^{2}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx}+1;];", "A:f64:2 -> C:f64:2");
}
END_TEST

START_TEST(test_unknown_var) {
  INVALID("B^{2}_{tx=0}[C^{f64,g}_{tx}=a;];", NULL, "check.unknown-var", 29,
          "'a' is not a loop variable of an enclosing loop");
  /* a loop variable is visible only inside its nest */
  INVALID("B^{2}_{tx=0}[L^{2}_{a=0}[C^{f64,g}_{tx,a}=1;];D^{f64,g}_{tx}=a;];", NULL,
          "check.unknown-var", 62, NULL);
  VALID("B^{2}_{tx=0}[L^{2}_{a=0}[C^{f64,g}_{tx,a}=a;];D^{f64,g}_{tx}=tx;];", NULL);
}
END_TEST

START_TEST(test_uninitialized) {
  /* an output read before anything writes it */
  INVALID("B^{2}_{tx=0}[D^{f64,g}_{tx}=C^{f64,g}_{tx};C^{f64,g}_{tx}=A^{f64,g}_{tx};];",
          "A:f64:2 -> C:f64:2,D:f64:2", "check.uninitialized", 29,
          "output C is read before any equation writes it");
  /* a self-reference that is not an accumulation form */
  INVALID("B^{2}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx}=A^{f64,g}_{tx,a}+D^{f64,g}_{tx};];", NULL,
          "check.uninitialized", 57, "D is read before it is written");
  INVALID("B^{2}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx}=exp(D^{f64,g}_{tx});];", NULL,
          "check.uninitialized", 44, NULL);
  INVALID("B^{2}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx}=(D^{f64,g}_{tx}+A^{f64,g}_{tx,a});];", NULL,
          "check.uninitialized", 41, NULL);
  VALID("B^{2}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+A^{f64,g}_{tx,a};];", NULL);
  VALID("B^{2}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx};D^{f64,g}_{tx}=C^{f64,g}_{tx};];",
        "A:f64:2 -> C:f64:2,D:f64:2");
  /* argmax: an explicit initial value, then a non-accumulating self-read */
  VALID("B^{2}_{tx=0}[C^{i64,g}_{tx}=0;D^{f64,g}_{tx}=-inf;L^{4}_{a=0}["
        "C^{i64,g}_{tx}=if_then_else(A^{f64,g}_{tx,a}>D^{f64,g}_{tx},a,C^{i64,g}_{tx});"
        "D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];];",
        "A:f64:2x4 -> C:i64:2");
}
END_TEST

START_TEST(test_input_written) {
  INVALID("B^{2}_{tx=0}[A^{f64,g}_{tx}=1;C^{f64,g}_{tx}=A^{f64,g}_{tx};];", "A:f64:2 -> C:f64:2",
          "check.input-written", 14, "A is an input and cannot be written");
  VALID("B^{2}_{tx=0}[D^{f64,g}_{tx}=1;C^{f64,g}_{tx}=A^{f64,g}_{tx}+D^{f64,g}_{tx};];",
        "A:f64:2 -> C:f64:2");
}
END_TEST

/* ---- dtypes and ranks ------------------------------------------------------- */

START_TEST(test_dtype) {
  INVALID("B^{2}_{tx=0}[C^{f64,g}_{tx}=A^{f32,g}_{tx};];", "A:f64:2 -> C:f64:2", "check.dtype",
          29, "A is written ^{f32,...} but the signature declares f64");
  INVALID("B^{2}_{tx=0}[D^{f64,g}_{tx}=1;];B^{2}_{tx=0}[C^{f64,g}_{tx}=D^{f32,g}_{tx};];", NULL,
          "check.dtype", 61, "D is read as f32 but its buffer holds f64");
  INVALID("B^{2}_{tx=0}[D^{f64,g}_{tx}=1;];B^{2}_{tx=0}[D^{i64,g}_{tx}=2;];", NULL, "check.dtype",
          46, "D is written as i64 here but as f64 at 1:14");
  /* the scope letter of a known variable is ignored, its dtype is not */
  VALID("B^{2}_{tx=0}[C^{f64,s}_{tx}=A^{f64,l}_{tx};];", "A:f64:2 -> C:f64:2");
  VALID("B^{2}_{tx=0}[D^{f64,g}_{tx}=1;];B^{2}_{tx=0}[C^{f64,g}_{tx}=D^{f64,s}_{tx};];", NULL);
}
END_TEST

START_TEST(test_rank) {
  INVALID("B^{2}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx};];", "A:f64:2x3 -> C:f64:2", "check.rank",
          29, "A is used with 1 subscript but the signature gives it rank 2");
  INVALID("B^{2}_{tx=0}[D^{f64,g}_{tx}=1;];B^{2}_{tx=0}[C^{f64,g}_{tx}=D^{f64,g}_{tx,0};];", NULL,
          "check.rank", 61, "D is read with 2 subscripts but was defined with 1");
  /* without a signature the result D (rank 2) becomes a known variable, and
   * its rank-1 uses no longer fit the declaration */
  INVALID("B^{2}_{tx=0}[D^{f64,g}_{tx}=1;];L^{2}_{a=0}B^{2}_{tx=0}[D^{f64,g}_{tx,a}=D^{f64,g}_{tx}+a;];",
          NULL, "check.rank", 14, "D is used with 1 subscript but the signature gives it rank 2");
  /* a definition with another rank starts a new buffer (online softmax) */
  VALID("B^{2}_{tx=0}[D^{f64,g}_{tx}=1;];L^{2}_{a=0}B^{2}_{tx=0}[D^{f64,g}_{tx,a}=D^{f64,g}_{tx}+a;];"
        "B^{2}_{tx=0}[C^{f64,g}_{tx}=D^{f64,g}_{tx,1};];",
        NULL);
}
END_TEST

/* ---- bounds ------------------------------------------------------------------ */

START_TEST(test_bounds_plain) {
  INVALID("B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=A^{f64,g}_{tx,a+1};];",
          "A:f64:2x8 -> C:f64:2x8", "check.bounds", 56,
          "subscript 2 of A ranges over [1, 8] but the dimension has extent 8");
  VALID("B^{2}_{tx=0}L^{7}_{a=0}[C^{f64,g}_{tx,a}=A^{f64,g}_{tx,a+1};];", "A:f64:2x8 -> C:f64:2x7");
  /* reshape, flip and broadcast idioms */
  VALID("B^{2}_{tx=0}L^{4}_{a=0}L^{4}_{c=0}[C^{f64,g}_{tx,a*4+c}=A^{f64,g}_{tx,15-(a*4+c)}+"
        "E^{f64,g}_{0,c};];",
        "A:f64:2x16,E:f64:1x4 -> C:f64:2x16");
  INVALID("B^{2}_{tx=0}L^{4}_{a=0}L^{4}_{c=0}[C^{f64,g}_{tx,a*4+c}=A^{f64,g}_{tx,16-(a*4+c)};];",
          "A:f64:2x16 -> C:f64:2x16", "check.bounds", 0, "ranges over [1, 16]");
  VALID("B^{2}_{tx=0}L^{16}_{a=0}[C^{f64,g}_{tx,a//4,a%4}=A^{f64,g}_{tx,a};];",
        "A:f64:2x16 -> C:f64:2x4x4");
  /* the left-hand side of a known variable is checked too */
  expect_finding("B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a+1}=A^{f64,g}_{tx,a};];",
                 "A:f64:2x8 -> C:f64:2x8", "check.bounds", "subscript 2 of C ranges over [1, 8]");
  /* negative indices on the left */
  INVALID("B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx,a-1}=A^{f64,g}_{tx,a};];"
          "B^{2}_{tx=0}[C^{f64,g}_{tx}=D^{f64,g}_{tx,0};];",
          "A:f64:2x8 -> C:f64:2", "check.bounds", 39, "can be -1 on the left-hand side");
  /* an intermediate's shape comes from its definitions; reads past it fail */
  INVALID("B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx,a}=A^{f64,g}_{tx,a};];"
          "B^{2}_{tx=0}[C^{f64,g}_{tx}=D^{f64,g}_{tx,8};];",
          "A:f64:2x8 -> C:f64:2", "check.bounds", 0, "subscript 2 of D ranges over [8, 8]");
  /* an index that overflows int64 cannot be bounded */
  INVALID("L^{2}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a*9223372036854775807*2};];",
          "A:f64:2 -> C:f64:2", "check.bounds", 0, "cannot bound subscript 1 of A");
}
END_TEST

START_TEST(test_bounds_padding_guard) {
  const char *sig = "A:f64:2x3x8x8 -> C:f64:2x3x12x10";
  VALID("B^{2}_{tx=0}L^{3}_{a=0}L^{12}_{c=0}L^{10}_{d=0}[C^{f64,g}_{tx,a,c,d}=if_then_else("
        "2<=c<10&1<=d<9,A^{f64,g}_{tx,a,c-2,d-1},0);];",
        sig);
  /* the guard admits c=10, which reads row 8 */
  INVALID("B^{2}_{tx=0}L^{3}_{a=0}L^{12}_{c=0}L^{10}_{d=0}[C^{f64,g}_{tx,a,c,d}=if_then_else("
          "2<=c<11&1<=d<9,A^{f64,g}_{tx,a,c-2,d-1},0);];",
          sig, "check.bounds", 0, "subscript 3 of A ranges over [0, 8]");
  /* the padding read is in the false branch: narrowed by the negation */
  VALID("B^{2}_{tx=0}L^{3}_{a=0}L^{12}_{c=0}L^{10}_{d=0}[C^{f64,g}_{tx,a,c,d}=if_then_else("
        "c<2|c>=10|d<1|d>=9,0,A^{f64,g}_{tx,a,c-2,d-1});];",
        sig);
  /* without a guard the same read is out of bounds */
  INVALID("B^{2}_{tx=0}L^{3}_{a=0}L^{12}_{c=0}L^{10}_{d=0}[C^{f64,g}_{tx,a,c,d}="
          "A^{f64,g}_{tx,a,c-2,d-1};];",
          sig, "check.bounds", 0, "ranges over [-2, 9]");
  /* affine guards over two variables (strided, dilated windows) */
  VALID("B^{2}_{tx=0}L^{6}_{c=0}L^{3}_{g=0}[C^{f64,g}_{tx,c}=C^{f64,g}_{tx,c}+if_then_else("
        "0<=c*2+g-1<8,A^{f64,g}_{tx,c*2+g-1},0);];",
        "A:f64:2x8 -> C:f64:2x6");
}
END_TEST

START_TEST(test_bounds_scan_guard) {
  VALID("B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=if_then_else(a-1<0,-inf,C^{f64,g}_{tx,a-1});];",
        "-> C:f64:2x8");
  VALID("B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=if_then_else(a<1,A^{f64,g}_{tx,a},"
        "max(C^{f64,g}_{tx,a-1},A^{f64,g}_{tx,a}));];",
        "A:f64:2x8 -> C:f64:2x8");
  INVALID("B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=if_then_else(a<0,-inf,C^{f64,g}_{tx,a-1});];",
          "-> C:f64:2x8", "check.bounds", 0, "ranges over [-1, 6]");
  INVALID("B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=C^{f64,g}_{tx,a-1}+1;];", "-> C:f64:2x8",
          "check.bounds", 0, "ranges over [-1, 6]");
}
END_TEST

START_TEST(test_bounds_indirect_indices) {
  /* values of an input index tensor are unknown: checked at run time */
  VALID("B^{4}_{tx=0}[D^{f64,g}_{tx}=E^{f64,g}_{tx,C^{i64,g}_{tx}};];",
        "C:i64:4,E:f64:4x3 -> D:f64:4");
  /* an index tensor computed by the program is bounded by its definition */
  VALID("B^{4}_{tx=0}[F^{i64,g}_{tx}=3-tx;];B^{4}_{tx=0}[D^{f64,g}_{tx}=E^{f64,g}_{tx,F^{i64,g}_{tx}};];",
        "E:f64:4x4 -> D:f64:4");
  INVALID("B^{4}_{tx=0}[F^{i64,g}_{tx}=4-tx;];B^{4}_{tx=0}[D^{f64,g}_{tx}=E^{f64,g}_{tx,F^{i64,g}_{tx}};];",
          "E:f64:4x4 -> D:f64:4", "check.bounds", 0, "ranges over [1, 4]");
  /* a table's affine value is narrowed by the guard around its read
   * (precompute_indices on padding: E_{c}=c-2 read under 2<=c<26) ... */
  const char *pad = "B^{28}_{tx=0}[F^{i64,g}_{tx}=tx-2;];%sB^{2}_{tx=0}L^{28}_{c=0}"
                    "[D^{f64,g}_{tx,c}=if_then_else(2<=c<26,A^{f64,g}_{tx,%s_{c}},0);];";
  char text[512];
  snprintf(text, sizeof text, pad, "", "F^{i64,g}");
  VALID(text, "A:f64:2x24 -> D:f64:2x28");
  /* ... also through a copy of the table (cache_read_write on it) */
  snprintf(text, sizeof text, pad, "B^{28}_{tx=0}[E^{i64,s}_{tx}=F^{i64,g}_{tx};];", "E^{i64,s}");
  VALID(text, "A:f64:2x24 -> D:f64:2x28");
  /* ... and only there */
  snprintf(text, sizeof text,
           "B^{28}_{tx=0}[F^{i64,g}_{tx}=tx-2;];B^{28}_{tx=0}[E^{i64,s}_{tx}=F^{i64,g}_{tx};];"
           "B^{2}_{tx=0}L^{28}_{c=0}[D^{f64,g}_{tx,c}=if_then_else(1<=c<26,"
           "A^{f64,g}_{tx,E^{i64,s}_{c}},0);];");
  INVALID(text, "A:f64:2x24 -> D:f64:2x28", "check.bounds", 0, "ranges over [-1, 23]");
  /* ... also when a loop_split has spread the table's writer over two loops
   * (D_{d*4+tx} = (d*4+tx)-1: the value is still the index minus one; a walk
   * of precompute_indices then loop_split found this), and only where the
   * value is a function of the written index (F_{d+tx} = d is not) */
  VALID("L^{7}_{d=0}B^{4}_{tx=0}[F^{i64,g}_{d*4+tx}=(d*4+tx)-2;];B^{2}_{tx=0}L^{28}_{c=0}"
        "[D^{f64,g}_{tx,c}=if_then_else(2<=c<26,A^{f64,g}_{tx,F^{i64,g}_{c}},0);];",
        "A:f64:2x24 -> D:f64:2x28");
  VALID("L^{3}_{d=0}B^{4}_{tx=0}[F^{i64,g}_{d*4+tx}=(d*4+tx)-1;];B^{12}_{tx=0}L^{12}_{a=0}"
        "[C^{f64,g}_{tx,a}=if_then_else(a-1<0,0,A^{f64,g}_{tx,F^{i64,g}_{a}});];",
        "A:f64:12x12 -> C:f64:12x12");
  INVALID("L^{7}_{d=0}B^{4}_{tx=0}[F^{i64,g}_{d*4+tx}=(d*4+tx)-3;];B^{2}_{tx=0}L^{28}_{c=0}"
          "[D^{f64,g}_{tx,c}=if_then_else(2<=c<26,A^{f64,g}_{tx,F^{i64,g}_{c}},0);];",
          "A:f64:2x24 -> D:f64:2x28", "check.bounds", 0, "");
  INVALID("L^{4}_{d=0}B^{25}_{tx=0}[F^{i64,g}_{d+tx}=d;];B^{2}_{tx=0}L^{28}_{c=0}"
          "[D^{f64,g}_{tx,c}=if_then_else(2<=c<26,A^{f64,g}_{tx,F^{i64,g}_{c}-2},0);];",
          "A:f64:2x24 -> D:f64:2x28", "check.bounds", 0, "");
  /* a guard on a sub-expression the analysis cannot see through (tx//4,
   * which compute_inline leaves after a reshape) narrows reads of the same
   * sub-expression, and only by what it says */
  VALID("B^{4}_{tx=0}L^{6}_{c=0}V^{4}_{g=0}[G^{f64,g}_{tx,c,g}=A^{f64,g}_{tx,c,g};];"
        "B^{16}_{tx=0}L^{6}_{c=0}[D^{f64,g}_{tx,c}=if_then_else(tx//4-1<0,0,"
        "G^{f64,g}_{tx%4,c,tx//4-1});];",
        "A:f64:4x6x4 -> D:f64:16x6");
  VALID("B^{4}_{tx=0}L^{6}_{c=0}V^{4}_{g=0}[G^{f64,g}_{tx,c,g}=A^{f64,g}_{tx,c,g};];"
        "B^{16}_{tx=0}L^{6}_{c=0}[D^{f64,g}_{tx,c}=if_then_else(1>tx//4,0,"
        "G^{f64,g}_{tx%4,c,tx//4-1});];",
        "A:f64:4x6x4 -> D:f64:16x6");
  INVALID("B^{4}_{tx=0}L^{6}_{c=0}V^{4}_{g=0}[G^{f64,g}_{tx,c,g}=A^{f64,g}_{tx,c,g};];"
          "B^{16}_{tx=0}L^{6}_{c=0}[D^{f64,g}_{tx,c}=if_then_else(tx//4-1<0,0,"
          "G^{f64,g}_{tx%4,c,tx//4-2});];",
          "A:f64:4x6x4 -> D:f64:16x6", "check.bounds", 0, "ranges over [-1, 1]");
  INVALID("B^{4}_{tx=0}L^{6}_{c=0}V^{4}_{g=0}[G^{f64,g}_{tx,c,g}=A^{f64,g}_{tx,c,g};];"
          "B^{16}_{tx=0}L^{6}_{c=0}[D^{f64,g}_{tx,c}=if_then_else(tx//4-1<0,"
          "G^{f64,g}_{tx%4,c,tx//4-1},0);];",
          "A:f64:4x6x4 -> D:f64:16x6", "check.bounds", 0, "ranges over [-1, -1]");
  /* an intermediate cannot take its shape from unknown index values */
  INVALID("B^{4}_{tx=0}[D^{f64,g}_{C^{i64,g}_{tx}}=1;];B^{1}_{tx=0}[G^{f64,g}=D^{f64,g}_{0};];",
          "C:i64:4 -> G:f64:", "check.shape", 0,
          "an index tensor whose values are unknown cannot define a shape");
}
END_TEST

/* ---- outputs ------------------------------------------------------------------ */

START_TEST(test_output_rules) {
  expect_check("B^{2}_{tx=0}[D^{f64,g}_{tx}=A^{f64,g}_{tx};];", "A:f64:2 -> C:f64:2", NULL,
               LEIR_ERR_INVALID, "check.output", 0, "output C is never written");
  INVALID("B^{2}_{tx=0}L^{4}_{a=0}[C^{f64,g}_{tx,a}=A^{f64,g}_{tx,a};];",
          "A:f64:2x8 -> C:f64:2x8", "check.output-shape", 25,
          "output C is written over shape [2, 4] but the signature declares [2, 8]");
  VALID("B^{2}_{tx=0}L^{4}_{a=0}[C^{f64,g}_{tx,a}=A^{f64,g}_{tx,a};];"
        "B^{2}_{tx=0}L^{4}_{a=0}[C^{f64,g}_{tx,a+4}=A^{f64,g}_{tx,a+4};];",
        "A:f64:2x8 -> C:f64:2x8");
  /* scalars */
  VALID("B^{1}_{tx=0}[C^{f64,g}=A^{f64,g}*2;];", "A:f64: -> C:f64:");
  /* several outputs */
  VALID("B^{2}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx};D^{f64,g}_{tx}=-A^{f64,g}_{tx};];",
        "A:f64:2 -> C:f64:2,D:f64:2");
}
END_TEST

/* ---- loops and limits ---------------------------------------------------------- */

START_TEST(test_loop_rules) {
  INVALID("L^{0}_{a=0}[C^{f64,g}_{a}=1;];", NULL, "check.extent", 1,
          "loop 'a' has extent 0; extents must be at least 1");
  INVALID("L^{2}_{a=0}L^{2}_{a=0}[C^{f64,g}_{a}=1;];", NULL, "check.duplicate-loop", 12,
          "loop variable 'a' is already used by an enclosing loop");
  INVALID("L^{2}_{a=0}[L^{2}_{a=0}[C^{f64,g}_{a}=1;];];", NULL, "check.duplicate-loop", 13, NULL);
  /* the same name in sibling nests is fine */
  VALID("L^{2}_{a=0}[L^{2}_{c=0}[C^{f64,g}_{a,c}=1;];L^{3}_{c=0}[D^{f64,g}_{a,c}=2;];];", NULL);
}
END_TEST

START_TEST(test_limits) {
  leir_check_options o = LEIR_CHECK_OPTIONS_INIT;
  o.max_extent = 4;
  expect_check("L^{8}_{a=0}[C^{f64,g}_{a}=1;];", NULL, &o, LEIR_ERR_LIMIT, "limit.extent", 1,
               "loop 'a' has extent 8, above the limit of 4");
  expect_check("L^{4}_{a=0}[C^{f64,g}_{a}=1;];", NULL, &o, LEIR_OK, NULL, 0, NULL);
  o = (leir_check_options)LEIR_CHECK_OPTIONS_INIT;
  o.max_loop_depth = 2;
  expect_check("L^{2}_{a=0}L^{2}_{c=0}L^{2}_{d=0}[C^{f64,g}_{a,c,d}=1;];", NULL, &o,
               LEIR_ERR_LIMIT, "limit.depth", 23, "more than 2 loops enclose this point");
  expect_check("L^{2}_{a=0}L^{2}_{c=0}[C^{f64,g}_{a,c}=1;];", NULL, &o, LEIR_OK, NULL, 0, NULL);
  o = (leir_check_options)LEIR_CHECK_OPTIONS_INIT;
  o.max_nest_iterations = 100;
  expect_check("L^{8}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=1;D^{f64,g}_{a,c}=2;];", NULL, &o,
               LEIR_ERR_LIMIT, "limit.iterations", 1,
               "this nest runs 128 equation evaluations, above the limit of 100");
  expect_check("L^{8}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=1;];", NULL, &o, LEIR_OK, NULL, 0, NULL);
  o = (leir_check_options)LEIR_CHECK_OPTIONS_INIT;
  o.max_total_iterations = 100;
  expect_check("L^{8}_{a=0}L^{8}_{c=0}[C^{f64,g}_{a,c}=1;];L^{8}_{a=0}L^{8}_{c=0}[D^{f64,g}_{a,c}=2;];",
               NULL, &o, LEIR_ERR_LIMIT, "limit.iterations", 0,
               "the program runs 128 equation evaluations, above the limit of 100");
  o = (leir_check_options)LEIR_CHECK_OPTIONS_INIT;
  o.max_buffer_elements = 10;
  expect_check("L^{4}_{a=0}L^{4}_{c=0}[C^{f64,g}_{a,c}=1;];", NULL, &o, LEIR_ERR_LIMIT,
               "limit.buffer", 0, "C would hold 16 elements, above the limit of 10");
  /* defaults: a 2^31 extent is above the limit */
  expect_check("L^{2147483648}_{a=0}[C^{f64,g}=C^{f64,g}+1;];", NULL, NULL, LEIR_ERR_LIMIT,
               "limit.extent", 1, NULL);
  /* an options struct without its size is refused */
  o = (leir_check_options)LEIR_CHECK_OPTIONS_INIT;
  o.size = 0;
  leir_program *p = test_parse("L^{4}_{a=0}[C^{f64,g}_{a}=1;];");
  ck_assert_int_eq(leir_program_check(p, &o, NULL), LEIR_ERR_ARGUMENT);
  ck_assert_int_eq(leir_program_check(NULL, NULL, NULL), LEIR_ERR_ARGUMENT);
  leir_program_free(p);
}
END_TEST

START_TEST(test_inference_failures) {
  /* an input read with two ranks, and one only indexed indirectly */
  expect_check("B^{2}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx}+A^{f64,g}_{tx,0};];", NULL, NULL,
               LEIR_ERR_SIGNATURE, "signature.ambiguous", 0, "input A is read with different ranks");
  expect_check("B^{2}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{E^{i64,g}_{tx}};];", NULL, NULL,
               LEIR_ERR_SIGNATURE, "signature.ambiguous", 0, "cannot infer the extent of input A");
  expect_check("B^{2}_{tx=0}[C^{f64,g}_{tx}=1;];B^{2}_{tx=0}L^{2}_{a=0}[C^{f64,g}_{tx,a}=2;];",
               NULL, NULL, LEIR_ERR_SIGNATURE, "signature.ambiguous", 0,
               "C is a result with two different ranks");
  /* the same programs with a signature are fine */
  VALID("B^{2}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{E^{i64,g}_{tx}};];", "A:f64:5,E:i64:2 -> C:f64:2");
  /* every finding of a program without signature is reported */
  leir_program *p = test_parse("B^{1}_{tx=0}[C^{f64,g}=q;];B^{1}_{tx=0}[D^{f64,g}=z+E^{f64,g};];");
  leir_diagnostics *d = NULL;
  ck_assert_int_eq(leir_program_check(p, NULL, &d), LEIR_ERR_INVALID);
  ck_assert_uint_eq(leir_diagnostics_count(d), 2);
  ck_assert_str_eq(leir_diagnostics_get(d, 1)->subject, "z");
  ck_assert_uint_eq(leir_diagnostics_get(d, 1)->column, 51);
  ck_assert_ptr_null(leir_diagnostics_get(d, 2));
  leir_diagnostics_free(d);
  leir_program_free(p);
}
END_TEST

START_TEST(test_findings_are_sorted_and_named) {
  leir_program *p = test_parse_flags(
      "B^{2}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx+1};];\n"
      "L^{0}_{a=0}[D^{f64,g}_{a}=1;];\n",
      LEIR_PARSE_LENIENT);
  test_set_signature(p, "A:f64:2 -> C:f64:2,D:f64:1");
  leir_diagnostics *d = NULL;
  ck_assert_int_eq(leir_program_check(p, NULL, &d), LEIR_ERR_INVALID);
  ck_assert_uint_ge(leir_diagnostics_count(d), 1);
  const leir_diagnostic *g = leir_diagnostics_get(d, 0);
  ck_assert_str_eq(g->rule, "check.extent");
  ck_assert_str_eq(g->subject, "a");
  ck_assert_uint_eq(g->line, 2);
  ck_assert_uint_eq(g->column, 1);
  leir_diagnostics_free(d);
  leir_program_free(p);
}
END_TEST

/* ---- implicit initialization (spec §3.4) through lib/analysis.h ---------------- */

static void expect_init_status(const char *rhs, leir__init_kind kind, leir_status status) {
  char src[512];
  snprintf(src, sizeof src, "B^{2}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx}=%s;];", rhs);
  leir_program *p = test_parse(src);
  test_set_signature(p, "A:f64:2x4 -> D:f64:2");
  leir__analysis *a = NULL;
  leir_status st = leir__analyze(p, p->sig, p->nsig, NULL, NULL, true, &a);
  ck_assert_ptr_nonnull(a);
  ck_assert_uint_eq(a->neqs, 1);
  ck_assert_msg(a->eqs[0].init == kind, "%s: init kind %d, expected %d", rhs, a->eqs[0].init, kind);
  ck_assert_int_eq(st, status);
  leir__analysis_free(a);
  leir_program_free(p);
}

/* A self-read without an implicit initial value reads a never-written
 * element: an error. */
static void expect_init(const char *rhs, leir__init_kind kind) {
  expect_init_status(rhs, kind, kind == LEIR__INIT_NONE ? LEIR_ERR_INVALID : LEIR_OK);
}

START_TEST(test_implicit_initialization_kinds) {
  expect_init("D^{f64,g}_{tx}+A^{f64,g}_{tx,a}", LEIR__INIT_ZERO);
  expect_init("D^{f64,g}_{tx}-A^{f64,g}_{tx,a}", LEIR__INIT_ZERO);
  expect_init("D^{f64,g}_{tx}+A^{f64,g}_{tx,a}*2-1", LEIR__INIT_ZERO);
  expect_init("D^{f64,g}_{tx}*A^{f64,g}_{tx,a}", LEIR__INIT_ONE);
  expect_init("A^{f64,g}_{tx,a}/D^{f64,g}_{tx}", LEIR__INIT_ONE);
  expect_init("max(D^{f64,g}_{tx},A^{f64,g}_{tx,a})", LEIR__INIT_NEG_INF);
  expect_init("max(D^{f64,g}_{tx},A^{f64,g}_{tx,a},0)", LEIR__INIT_NEG_INF);
  expect_init("min(D^{f64,g}_{tx},A^{f64,g}_{tx,a})", LEIR__INIT_POS_INF);
  /* not an accumulation form */
  expect_init("A^{f64,g}_{tx,a}+D^{f64,g}_{tx}", LEIR__INIT_NONE);
  expect_init("max(A^{f64,g}_{tx,a},D^{f64,g}_{tx})", LEIR__INIT_NONE);
  expect_init("D^{f64,g}_{tx}/A^{f64,g}_{tx,a}", LEIR__INIT_NONE);
  expect_init("D^{f64,g}_{tx}**2", LEIR__INIT_NONE);
  expect_init("(D^{f64,g}_{tx}+A^{f64,g}_{tx,a})", LEIR__INIT_NONE);
  expect_init("exp(D^{f64,g}_{tx})", LEIR__INIT_NONE);
  /* no self-read at all: nothing to initialize, nothing wrong */
  expect_init_status("A^{f64,g}_{tx,a}", LEIR__INIT_NONE, LEIR_OK);
}
END_TEST

START_TEST(test_implicit_initialization_conditions) {
  /* rule 1: already written (Gemm bias after the product) -> no init */
  leir_program *p = test_parse(
      "B^{2}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+A^{f64,g}_{tx,a};];"
      "B^{2}_{tx=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+E^{f64,g}_{tx};];");
  leir__analysis *a = NULL;
  ck_assert_int_eq(leir__analyze_program(p, NULL, &a), LEIR_OK);
  ck_assert_uint_eq(a->neqs, 2);
  ck_assert_int_eq(a->eqs[0].init, LEIR__INIT_ZERO);
  ck_assert_int_eq(a->eqs[1].init, LEIR__INIT_NONE);
  ck_assert_uint_eq(a->eqs[0].nloops, 2);
  ck_assert_uint_eq(a->eqs[0].evaluations, 8);
  leir__analysis_free(a);
  leir_program_free(p);
  /* rule 2: the first read has another subscript -> no init, and reading
   * a never-written element is an error */
  p = test_parse("B^{2}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx,a}=D^{f64,g}_{tx,0}+A^{f64,g}_{tx,a};];");
  test_set_signature(p, "A:f64:2x4 -> D:f64:2x4");
  ck_assert_int_eq(leir__analyze(p, p->sig, p->nsig, NULL, NULL, true, &a), LEIR_OK);
  ck_assert_int_eq(a->eqs[0].init, LEIR__INIT_NONE);
  leir__analysis_free(a);
  leir_program_free(p);
  /* an input is never initialized */
  p = test_parse("B^{2}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx}+A^{f64,g}_{tx};];");
  test_set_signature(p, "A:f64:2 -> C:f64:2");
  ck_assert_int_eq(leir__analyze_program(p, NULL, &a), LEIR_OK);
  ck_assert_int_eq(a->eqs[0].init, LEIR__INIT_NONE);
  ck_assert_int_eq(a->buffers[0].role, LEIR__BUF_INPUT);
  ck_assert_int_eq(a->buffers[1].role, LEIR__BUF_OUTPUT);
  leir__analysis_free(a);
  leir_program_free(p);
}
END_TEST

START_TEST(test_buffers_and_shapes) {
  /* intermediate shapes: 1 + max index, element-wise max over definitions;
   * a later definition with another rank is a new buffer */
  leir_program *p = test_parse(
      "B^{2}_{tx=0}L^{3}_{a=0}[D^{f64,g}_{tx,a*2}=A^{f64,g}_{tx,a};];"
      "B^{2}_{tx=0}[D^{f64,g}_{tx,7}=0;];"
      "B^{2}_{tx=0}L^{3}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},D^{f64,g}_{tx,a*2});];"
      "B^{2}_{tx=0}[C^{f64,g}_{tx}=D^{f64,g}_{tx};];");
  test_set_signature(p, "A:f64:2x3 -> C:f64:2");
  leir__analysis *a = NULL;
  ck_assert_int_eq(leir__analyze_program(p, NULL, &a), LEIR_OK);
  ck_assert_uint_eq(a->nbuffers, 4);
  const leir__buffer *d2 = &a->buffers[2], *d1 = &a->buffers[3];
  ck_assert_str_eq(leir__sym_name(p, d2->sym), "D");
  ck_assert_uint_eq(d2->rank, 2);
  ck_assert_int_eq(d2->shape[0], 2);
  ck_assert_int_eq(d2->shape[1], 8);
  ck_assert_uint_eq(d2->elements, 16);
  ck_assert_uint_eq(d2->first_writer, 0);
  ck_assert_uint_eq(d2->last_writer, 1);
  ck_assert_uint_eq(d1->rank, 1);
  ck_assert_int_eq(d1->role, LEIR__BUF_TEMP);
  ck_assert_int_eq(a->eqs[2].init, LEIR__INIT_NEG_INF);
  ck_assert_uint_eq(a->total_evaluations, 6 + 2 + 6 + 2);
  leir__analysis_free(a);
  leir_program_free(p);
}
END_TEST

/* ---- the corpus ------------------------------------------------------------------ */

static void set_corpus_signature(leir_program *p, const jsonl_value *sig) {
  leir_tensor_decl decls[64];
  int64_t shapes[64][LEIR_MAX_RANK];
  size_t n = 0;
  static const char *const roles[] = {"inputs", "outputs"};
  for (int r = 0; r < 2; r++) {
    const jsonl_value *list = jsonl_get(sig, roles[r]);
    for (size_t i = 0; i < jsonl_len(list); i++) {
      const jsonl_value *x = jsonl_at(list, i);
      ck_assert_uint_lt(n, 64);
      decls[n].name = jsonl_str(jsonl_get(x, "name"));
      ck_assert_int_eq(leir_dtype_from_name(jsonl_str(jsonl_get(x, "dtype")), &decls[n].dtype),
                       LEIR_OK);
      decls[n].role = r ? LEIR_ROLE_OUTPUT : LEIR_ROLE_INPUT;
      const jsonl_value *shape = jsonl_get(x, "shape");
      decls[n].rank = (uint32_t)jsonl_len(shape);
      for (uint32_t k = 0; k < decls[n].rank; k++) shapes[n][k] = jsonl_int(jsonl_at(shape, k), -1);
      decls[n].shape = shapes[n];
      n++;
    }
  }
  ck_assert_int_eq(leir_program_set_signature(p, decls, n), LEIR_OK);
}

START_TEST(test_sources_small_pass_with_their_signatures) {
  jsonl_file *f = test_corpus_open("sources-small.jsonl");
  const jsonl_value *o;
  int n = 0;
  while ((o = jsonl_next(f))) {
    leir_program *p = test_parse(jsonl_str(jsonl_get(o, "leir")));
    set_corpus_signature(p, jsonl_get(o, "signature"));
    leir_diagnostics *d = NULL;
    leir_status st = leir_program_check(p, NULL, &d);
    ck_assert_msg(st == LEIR_OK, "%s: %s", jsonl_str(jsonl_get(o, "id")),
                  leir_diagnostics_count(d) ? leir_diagnostics_get(d, 0)->message : "");
    leir_diagnostics_free(d);
    leir_program_free(p);
    n++;
  }
  jsonl_close(f);
  ck_assert_int_eq(n, 121);
}
END_TEST

/* The reference's MQA front end writes the scalar O as f64 and reads it as
 * i32 (`O^{f64,g}=16;` then `sqrt(O^{i32,g})`) in its default-shape
 * programs: a real dtype conflict within one buffer, which the checker must
 * flag. Everything else in the corpus is valid. */
static bool is_known_mqa_dtype_bug(const char *id, const leir_diagnostics *d) {
  if (strncmp(id, "level2/MQA", 10) != 0) return false;
  for (size_t i = 0; i < leir_diagnostics_count(d); i++) {
    const leir_diagnostic *g = leir_diagnostics_get(d, i);
    if (strcmp(g->rule, "check.dtype") != 0 || strcmp(g->subject, "O") != 0 ||
        !strstr(g->message, "O is read as i32 but its buffer holds f64"))
      return false;
  }
  return leir_diagnostics_count(d) > 0;
}

static void check_corpus_file(const char *name, const char *field, size_t expect_valid,
                              size_t expect_known_bad) {
  jsonl_file *f = test_corpus_open(name);
  const jsonl_value *o;
  size_t valid = 0, known_bad = 0;
  while ((o = jsonl_next(f))) {
    if (jsonl_bool(jsonl_get(o, "malformed"), false)) continue;
    const char *id = jsonl_str(jsonl_get(o, "id"));
    leir_program *p = test_parse(jsonl_str(jsonl_get(o, field)));
    leir_diagnostics *d = NULL;
    leir_status st = leir_program_check(p, NULL, &d);
    if (st == LEIR_OK) {
      valid++;
    } else {
      ck_assert_msg(is_known_mqa_dtype_bug(id, d), "%s line %zu (%s): [%s] %s", name,
                    jsonl_line(f), id, leir_diagnostics_get(d, 0)->rule,
                    leir_diagnostics_get(d, 0)->message);
      ck_assert_int_eq(st, LEIR_ERR_INVALID);
      known_bad++;
    }
    leir_diagnostics_free(d);
    leir_program_free(p);
  }
  jsonl_close(f);
  ck_assert_uint_eq(valid, expect_valid);
  ck_assert_uint_eq(known_bad, expect_known_bad);
}

START_TEST(test_corpus_programs_pass_with_inferred_signatures) {
  check_corpus_file("sources-small.jsonl", "leir", 121, 0);
  check_corpus_file("steps-small.jsonl", "after", 8197, 0);
  check_corpus_file("sources-default.jsonl", "leir", 105, 4);
  check_corpus_file("steps-default.jsonl", "after", 4380, 261);
}
END_TEST

/* ---- self-reads spelled differently (issue 11.2) ------------------------------ */

/* Implicit initialization compares the read's subscript with the left
 * side's as written (spec/leir.md §3.4 rule 2); a self-read of the very
 * element being defined, spelled otherwise, would read a never-written
 * element, so the checker flags it. */
START_TEST(test_self_read_spelling) {
  /* the program precompute_indices used to produce from the input */
  INVALID("B^{2}_{bya=0}B^{2}_{tx=0}[D^{i64,g}_{bya,tx}=bya*2+tx;];B^{2}_{bya=0}B^{2}_{tx=0}"
          "L^{8}_{a=0}[C^{f64,g}_{bya*2+tx}=C^{f64,g}_{D^{i64,g}_{bya,tx}}+"
          "A^{f64,g}_{D^{i64,g}_{bya,tx},a};];",
          "A:f64:4x8 -> C:f64:4", "check.self-read-spelling", 115,
          "C is read at the element this equation writes, but its subscript is spelled");
  /* the table on the left, the expression on the right; max and min forms */
  INVALID("L^{2}_{b=0}L^{2}_{c=0}[D^{i64,g}_{b,c}=b*2+c;];L^{8}_{a=0}L^{2}_{b=0}L^{2}_{c=0}"
          "[C^{f64,g}_{D^{i64,g}_{b,c}}=max(C^{f64,g}_{b*2+c},A^{f64,g}_{b*2+c,a});];",
          "A:f64:4x8 -> C:f64:4", "check.self-read-spelling", 0, NULL);
  /* no table: the same affine value, written in another order or with
   * parentheses */
  INVALID("B^{2}_{tx=0}L^{2}_{c=0}L^{8}_{a=0}[C^{f64,g}_{tx*2+c}=C^{f64,g}_{c+tx*2}+"
          "A^{f64,g}_{tx*2+c,a};];",
          "A:f64:4x8 -> C:f64:4", "check.self-read-spelling", 55, NULL);
  INVALID("B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{(tx)}*A^{f64,g}_{tx,a};];",
          "A:f64:2x8 -> C:f64:2", "check.self-read-spelling", 0, NULL);
  /* in a nested nest, two dimensions */
  INVALID("B^{2}_{tx=0}[L^{3}_{c=0}[L^{8}_{a=0}[E^{f64,g}_{tx,c}=E^{f64,g}_{tx+0,c}+"
          "A^{f64,g}_{tx,a};];];];",
          NULL, "check.self-read-spelling", 0, NULL);
  /* spelled the same: the accumulation starts from its initial value */
  VALID("B^{2}_{bya=0}B^{2}_{tx=0}[D^{i64,g}_{bya,tx}=bya*2+tx;];B^{2}_{bya=0}B^{2}_{tx=0}"
        "L^{8}_{a=0}[C^{f64,g}_{bya*2+tx}=C^{f64,g}_{bya*2+tx}+"
        "A^{f64,g}_{D^{i64,g}_{bya,tx},a};];",
        "A:f64:4x8 -> C:f64:4");
  VALID("L^{2}_{b=0}L^{2}_{c=0}[D^{i64,g}_{b,c}=b*2+c;];L^{8}_{a=0}L^{2}_{b=0}L^{2}_{c=0}"
        "[C^{f64,g}_{D^{i64,g}_{b,c}}=max(C^{f64,g}_{D^{i64,g}_{b,c}},A^{f64,g}_{b*2+c,a});];",
        "A:f64:4x8 -> C:f64:4");
  /* a self-read of another element is not this rule's business (a scan
   * reads what earlier iterations wrote) */
  VALID("L^{4}_{a=0}[E^{i64,g}_{a}=3-a;];L^{4}_{a=0}[C^{f64,g}_{a}=if_then_else(a<2,"
        "A^{f64,g}_{a},C^{f64,g}_{E^{i64,g}_{a}});];",
        "A:f64:4 -> C:f64:4");
  /* once something wrote the buffer there is no implicit initial value to
   * lose: the respelled read reads that value */
  VALID("B^{2}_{tx=0}[C^{f64,g}_{tx}=0;];B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{(tx)}+"
        "A^{f64,g}_{tx,a};];",
        "A:f64:2x8 -> C:f64:2");
}
END_TEST

/* precompute_indices on the program and its variants: the result
 * checks, keeps the accumulator's self-read spelled like the left side,
 * and computes what the source computes (interpreter, three input sets). */
static void expect_precompute(const char *src, const char *sig, const char *step_text,
                              const char *want) {
  leir_program *p = test_parse(src);
  test_set_signature(p, sig);
  leir_step *step = NULL;
  ck_assert_int_eq(leir_step_parse(&step, step_text, strlen(step_text)), LEIR_OK);
  leir_program *q = NULL;
  ck_assert_msg(leir_step_apply(&q, p, step, NULL) == LEIR_OK, "%s on %s: %s", step_text, src,
                leir_error_last()->message);
  char *out = test_print(q);
  ck_assert_str_eq(out, want);
  leir_free(out);
  leir_diagnostics *d = NULL;
  leir_status st = leir_program_check(q, NULL, &d);
  ck_assert_msg(st == LEIR_OK, "%s: %s", want,
                leir_diagnostics_count(d) ? leir_diagnostics_get(d, 0)->message : "");
  leir_diagnostics_free(d);
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  leir_verify_report *r = NULL;
  ck_assert_int_eq(leir_verify(b, p, q, NULL, &r), LEIR_OK);
  ck_assert_msg(r->verdict == LEIR_VERDICT_EQUAL, "%s: %s (%s)", want,
                leir_verdict_name(r->verdict), r->message);
  leir_verify_report_free(r);
  leir_backend_free(b);
  leir_step_free(step);
  leir_program_free(q);
  leir_program_free(p);
}

START_TEST(test_precompute_indices_keeps_self_reads) {
  /* the program: the left entry stays (B loops), so does the
   * self-read's; only A's subscript reads the table */
  expect_precompute(
      "B^{2}_{bya=0}B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{bya*2+tx}=C^{f64,g}_{bya*2+tx}+"
      "A^{f64,g}_{bya*2+tx,a};];",
      "A:f64:4x8 -> C:f64:4", "precompute_indices nest=0 entry=bya*2+tx",
      "B^{2}_{bya=0}B^{2}_{tx=0}[D^{i64,g}_{bya,tx}=bya*2+tx;];B^{2}_{bya=0}B^{2}_{tx=0}"
      "L^{8}_{a=0}[C^{f64,g}_{bya*2+tx}=C^{f64,g}_{bya*2+tx}+A^{f64,g}_{D^{i64,g}_{bya,tx},a};];");
  /* sequential loops: the left side and the self-read both read the table */
  expect_precompute(
      "L^{2}_{b=0}L^{2}_{c=0}L^{8}_{a=0}[C^{f64,g}_{b*2+c}=C^{f64,g}_{b*2+c}+"
      "A^{f64,g}_{b*2+c,a};];",
      "A:f64:4x8 -> C:f64:4", "precompute_indices nest=0 entry=b*2+c",
      "B^{2}_{tx=0}L^{2}_{c=0}[D^{i64,g}_{tx,c}=tx*2+c;];L^{2}_{b=0}L^{2}_{c=0}L^{8}_{a=0}"
      "[C^{f64,g}_{D^{i64,g}_{b,c}}=C^{f64,g}_{D^{i64,g}_{b,c}}+A^{f64,g}_{D^{i64,g}_{b,c},a};];");
  /* reduction loop outermost, max form, a P loop keeping the left entry */
  expect_precompute(
      "L^{8}_{a=0}P^{2}_{b=0}L^{2}_{c=0}[C^{f64,g}_{b*2+c}=max(C^{f64,g}_{b*2+c},"
      "A^{f64,g}_{b*2+c,a});];",
      "A:f64:4x8 -> C:f64:4", "precompute_indices nest=0 entry=b*2+c",
      "B^{2}_{tx=0}L^{2}_{c=0}[D^{i64,g}_{tx,c}=tx*2+c;];L^{8}_{a=0}P^{2}_{b=0}L^{2}_{c=0}"
      "[C^{f64,g}_{b*2+c}=max(C^{f64,g}_{b*2+c},A^{f64,g}_{D^{i64,g}_{b,c},a});];");
  /* an entry only the left side and its self-read use is no site */
  leir_program *p = test_parse(
      "B^{2}_{bya=0}B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{bya*2+tx}=C^{f64,g}_{bya*2+tx}*"
      "A^{f64,g}_{a};];");
  test_set_signature(p, "A:f64:8 -> C:f64:4");
  leir_candidates *c = NULL;
  leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
  ck_assert_int_eq(leir_candidates_list(&c, p, &o), LEIR_OK);
  for (size_t i = 0; i < leir_candidates_count(c); i++)
    ck_assert_msg(strncmp(leir_step_text(leir_candidates_step(c, i)), "precompute_indices", 18),
                  "%s", leir_step_text(leir_candidates_step(c, i)));
  leir_candidates_free(c);
  leir_program_free(p);
}
END_TEST

/* Every candidate of every strategy on accumulator programs (the issue's
 * and variants: other nestings, max and * forms, nested nests, a partial
 * accumulator E_{tx,a%2}) checks and computes what its source computes:
 * no strategy may respell an accumulator's self-read (layout_transformation,
 * set_storage_layout and cache_read_write rewrite both sides alike). */
START_TEST(test_accumulators_under_every_strategy) {
  static const char *const programs[][2] = {
      {"B^{2}_{bya=0}B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{bya*2+tx}=C^{f64,g}_{bya*2+tx}+"
       "A^{f64,g}_{bya*2+tx,a};];",
       "A:f64:4x8 -> C:f64:4"},
      {"L^{2}_{b=0}L^{2}_{c=0}L^{8}_{a=0}[C^{f64,g}_{b*2+c}=C^{f64,g}_{b*2+c}+"
       "A^{f64,g}_{b*2+c,a};];",
       "A:f64:4x8 -> C:f64:4"},
      {"B^{4}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx,a%2}=max(E^{f64,g}_{tx,a%2},A^{f64,g}_{tx,a});];"
       "B^{4}_{tx=0}L^{2}_{c=0}[C^{f64,g}_{tx,c}=E^{f64,g}_{tx,c}*2;];",
       "A:f64:4x8 -> C:f64:4x2"},
      {"B^{2}_{tx=0}L^{3}_{c=0}L^{8}_{a=0}[E^{f64,g}_{tx,c}=E^{f64,g}_{tx,c}+"
       "A^{f64,g}_{tx,a}*A^{f64,g}_{tx,c};];B^{2}_{tx=0}L^{3}_{c=0}[C^{f64,g}_{tx,c}="
       "E^{f64,g}_{tx,c};];",
       "A:f64:2x8 -> C:f64:2x3"},
      {"B^{2}_{tx=0}[L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}*A^{f64,g}_{tx,a};];"
       "C^{f64,g}_{tx}=E^{f64,g}_{tx};];",
       "A:f64:2x8 -> C:f64:2"},
  };
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  size_t total = 0;
  for (size_t i = 0; i < sizeof programs / sizeof *programs; i++) {
    leir_program *p = test_parse(programs[i][0]);
    test_set_signature(p, programs[i][1]);
    leir_candidates *c = NULL;
    ck_assert_int_eq(leir_candidates_list(&c, p, NULL), LEIR_OK);
    for (size_t k = 0; k < leir_candidates_count(c); k++, total++) {
      const char *step = leir_step_text(leir_candidates_step(c, k));
      leir_program *q = NULL;
      ck_assert_int_eq(leir_candidates_apply(&q, c, k), LEIR_OK);
      leir_diagnostics *d = NULL;
      leir_status st = leir_program_check(q, NULL, &d);
      ck_assert_msg(st == LEIR_OK, "%s on %s: %s", step, programs[i][0],
                    leir_diagnostics_count(d) ? leir_diagnostics_get(d, 0)->message : "");
      leir_diagnostics_free(d);
      leir_verify_report *r = NULL;
      ck_assert_int_eq(leir_verify(b, p, q, NULL, &r), LEIR_OK);
      ck_assert_msg(leir_verdict_passes(r->verdict), "%s on %s: %s (%s)", step, programs[i][0],
                    leir_verdict_name(r->verdict), r->message);
      leir_verify_report_free(r);
      leir_program_free(q);
    }
    leir_candidates_free(c);
    leir_program_free(p);
  }
  ck_assert_uint_gt(total, 100);
  leir_backend_free(b);
}
END_TEST

static Suite *check_suite(void) {
  Suite *s = suite_create("check");
  TCase *tc = tcase_create("rules");
  tcase_add_test(tc, test_undefined);
  tcase_add_test(tc, test_unknown_var);
  tcase_add_test(tc, test_uninitialized);
  tcase_add_test(tc, test_input_written);
  tcase_add_test(tc, test_dtype);
  tcase_add_test(tc, test_rank);
  tcase_add_test(tc, test_bounds_plain);
  tcase_add_test(tc, test_bounds_padding_guard);
  tcase_add_test(tc, test_bounds_scan_guard);
  tcase_add_test(tc, test_bounds_indirect_indices);
  tcase_add_test(tc, test_output_rules);
  tcase_add_test(tc, test_loop_rules);
  tcase_add_test(tc, test_limits);
  tcase_add_test(tc, test_inference_failures);
  tcase_add_test(tc, test_findings_are_sorted_and_named);
  suite_add_tcase(s, tc);
  tc = tcase_create("analysis");
  tcase_add_test(tc, test_implicit_initialization_kinds);
  tcase_add_test(tc, test_implicit_initialization_conditions);
  tcase_add_test(tc, test_buffers_and_shapes);
  tcase_add_test(tc, test_self_read_spelling);
  tcase_add_test(tc, test_precompute_indices_keeps_self_reads);
  tcase_add_test(tc, test_accumulators_under_every_strategy);
  suite_add_tcase(s, tc);
  tc = tcase_create("corpus");
  tcase_add_test(tc, test_sources_small_pass_with_their_signatures);
  tcase_add_test(tc, test_corpus_programs_pass_with_inferred_signatures);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(check_suite()); }
