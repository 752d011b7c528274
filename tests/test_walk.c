/*
 * The read-only walk API for embedders: accessors, positions, and the
 * visitor's order, depth, early stop and tolerance of older callback
 * structs.
 */
#include <stdio.h>
#include <string.h>

#include "ir.h"
#include "testutil.h"

static const char *const nested =
    "B^{2}_{tx=0}[D^{f64,g}_{tx}=0;L^{4}_{a=0}[D^{f64,g}_{tx}=D^{f64,g}_{tx}+A^{f64,g}_{tx,a};"
    "L^{2}_{c=0}[E^{f64,g}_{tx,a,c}=-A^{f64,g}_{tx,a}**2;];];C^{f64,g}_{tx}=D^{f64,g}_{tx};];"
    "L^{3}_{a=0}[F^{f64,g}_{a}=if_then_else(1<=a<3,1.5e-3,a);];";

typedef struct trace {
  char text[4096];
  size_t n;
  const leir_program *p;
  int stop_after; /* stop when this many events were seen (0 = never) */
  int events;
} trace;

static int record(trace *t, const char *fmt, const char *arg, unsigned num) {
  if (t->n < sizeof t->text) t->n += (size_t)snprintf(t->text + t->n, sizeof t->text - t->n, fmt, arg, num);
  t->events++;
  return t->stop_after && t->events >= t->stop_after ? 42 : 0;
}

static int on_enter(const leir_nest *n, uint32_t depth, void *payload) {
  trace *t = payload;
  leir_loop l = leir_nest_loop(t->p, n, 0);
  return record(t, "[%s@%u ", l.var, depth);
}

static int on_leave(const leir_nest *n, uint32_t depth, void *payload) {
  (void)n;
  return record(payload, "]%s%u ", "", depth);
}

static int on_equation(const leir_equation *eq, void *payload) {
  trace *t = payload;
  return record(t, "eq:%s%u ", leir_expr_name(t->p, leir_equation_lhs(eq)), 0);
}

static int on_expr(const leir_expr *e, const leir_expr *parent, void *payload) {
  trace *t = payload;
  const char *kinds[] = {"num", "inf", "var", "tensor", "paren", "neg", "bin", "call", "cmp", "and", "or"};
  return record(t, parent ? "%s%u " : "%s%u! ", kinds[leir_expr_get_kind(e)], 0);
}

START_TEST(test_walk_visits_in_program_order) {
  leir_program *p = test_parse(nested);
  trace t = {.p = p};
  leir_walk_callbacks cb = LEIR_WALK_CALLBACKS_INIT;
  cb.enter_nest = on_enter;
  cb.leave_nest = on_leave;
  cb.equation = on_equation;
  ck_assert_int_eq(leir_program_walk(p, &cb, &t), 0);
  ck_assert_str_eq(t.text, "[tx@0 eq:D0 [a@1 eq:D0 [c@2 eq:E0 ]2 ]1 eq:C0 ]0 [a@0 eq:F0 ]0 ");
  leir_program_free(p);
}
END_TEST

START_TEST(test_walk_visits_expressions_preorder) {
  leir_program *p = test_parse("L^{3}_{a=0}[F^{f64,g}_{a}=if_then_else(1<=a<3,-(1.5e-3),a*A^{f64,g}_{a});];");
  trace t = {.p = p};
  leir_walk_callbacks cb = LEIR_WALK_CALLBACKS_INIT;
  cb.expr = on_expr;
  ck_assert_int_eq(leir_program_walk(p, &cb, &t), 0);
  /* lhs (tensor a), then rhs: call(cmp(1 a 3) neg(paren(num)) bin(a tensor(a))) */
  ck_assert_str_eq(t.text,
                   "tensor0! var0 call0! cmp0 num0 var0 num0 neg0 paren0 num0 bin0 var0 tensor0 var0 ");
  leir_program_free(p);
}
END_TEST

START_TEST(test_walk_stops_early) {
  leir_program *p = test_parse(nested);
  for (int stop = 1; stop <= 6; stop++) {
    trace t = {.p = p, .stop_after = stop};
    leir_walk_callbacks cb = LEIR_WALK_CALLBACKS_INIT;
    cb.enter_nest = on_enter;
    cb.leave_nest = on_leave;
    cb.equation = on_equation;
    cb.expr = on_expr;
    ck_assert_int_eq(leir_program_walk(p, &cb, &t), 42);
    ck_assert_int_eq(t.events, stop);
  }
  leir_program_free(p);
}
END_TEST

START_TEST(test_walk_accepts_older_callback_structs) {
  leir_program *p = test_parse(nested);
  /* a caller built against a version whose struct ended after enter_nest */
  struct {
    uint32_t size;
    int (*enter_nest)(const leir_nest *, uint32_t, void *);
    int (*leave_nest)(const leir_nest *, uint32_t, void *);
  } old = {(uint32_t)(offsetof(leir_walk_callbacks, leave_nest)), on_enter, on_leave};
  trace t = {.p = p};
  ck_assert_int_eq(leir_program_walk(p, (const leir_walk_callbacks *)&old, &t), 0);
  ck_assert_str_eq(t.text, "[tx@0 [a@1 [c@2 [a@0 ");
  /* NULLs are harmless */
  ck_assert_int_eq(leir_program_walk(NULL, (const leir_walk_callbacks *)&old, &t), 0);
  ck_assert_int_eq(leir_program_walk(p, NULL, &t), 0);
  leir_program_free(p);
}
END_TEST

START_TEST(test_accessors) {
  leir_program *p = test_parse_flags(
      "B^{2}_{tx=0}[D^{f64,g}_{tx}=0;\n"
      "  L^{4}_{a=0}[D^{f64,s}_{tx}=max(D^{f64,s}_{tx},A^{i32,l}_{tx,a});];];\n",
      LEIR_PARSE_LENIENT);
  ck_assert_uint_eq(leir_program_nest_count(p), 1);
  ck_assert_ptr_null(leir_program_nest(p, 1));
  const leir_nest *top = leir_program_nest(p, 0);
  leir_position pos = leir_nest_position(p, top);
  ck_assert_uint_eq(pos.line, 1);
  ck_assert_uint_eq(pos.column, 1);
  const leir_nest *inner = leir_nest_item_nest(top, 1);
  pos = leir_nest_position(p, inner);
  ck_assert_uint_eq(pos.line, 2);
  ck_assert_uint_eq(pos.column, 3);
  leir_loop l = leir_nest_loop(p, inner, 0);
  ck_assert_int_eq(l.kind, LEIR_LOOP_SERIAL);
  ck_assert_int_eq(l.extent, 4);
  ck_assert_str_eq(l.var, "a");
  ck_assert_ptr_null(leir_nest_item_equation(inner, 5));
  ck_assert_ptr_null(leir_nest_item_nest(inner, 5));
  const leir_equation *eq = leir_nest_item_equation(inner, 0);
  const leir_expr *lhs = leir_equation_lhs(eq), *rhs = leir_equation_rhs(eq);
  ck_assert_int_eq(leir_expr_get_kind(lhs), LEIR_EXPR_TENSOR);
  ck_assert_str_eq(leir_expr_name(p, lhs), "D");
  ck_assert_int_eq(leir_expr_dtype(lhs), LEIR_F64);
  ck_assert_int_eq(leir_expr_scope(lhs), LEIR_SCOPE_SHARED);
  ck_assert_int_eq(leir_expr_get_kind(rhs), LEIR_EXPR_CALL);
  ck_assert_int_eq(leir_expr_op(rhs), LEIR_OP_MAX);
  ck_assert_str_eq(leir_op_name(leir_expr_op(rhs)), "max");
  ck_assert_str_eq(leir_expr_name(p, rhs), "");
  const leir_expr *a = leir_expr_child(rhs, 1);
  ck_assert_int_eq(leir_expr_dtype(a), LEIR_I32);
  ck_assert_int_eq(leir_expr_scope(a), LEIR_SCOPE_LOCAL);
  pos = leir_expr_position(p, a);
  ck_assert_uint_eq(pos.line, 2);
  ck_assert_uint_eq(pos.column, 49);
  const leir_expr *var = leir_expr_child(a, 1);
  ck_assert_int_eq(leir_expr_get_kind(var), LEIR_EXPR_VAR);
  ck_assert_str_eq(leir_expr_name(p, var), "a");
  ck_assert_int_eq(leir_expr_compare_op(rhs, 0), LEIR_OP_NONE);
  /* NULL-tolerant accessors */
  ck_assert_uint_eq(leir_program_nest_count(NULL), 0);
  ck_assert_uint_eq(leir_nest_loop_count(NULL), 0);
  ck_assert_uint_eq(leir_nest_item_count(NULL), 0);
  ck_assert_uint_eq(leir_expr_child_count(NULL), 0);
  ck_assert_ptr_null(leir_expr_child(NULL, 0));
  ck_assert_ptr_null(leir_equation_lhs(NULL));
  ck_assert_str_eq(leir_expr_name(NULL, lhs), "");
  ck_assert_int_eq(leir_expr_op(NULL), LEIR_OP_NONE);
  pos = leir_expr_position(NULL, lhs);
  ck_assert_uint_eq(pos.line, 0);
  /* operator names */
  static const char *const names[] = {"",    "+",   "-",   "*",   "/",  "//", "%",  "**",
                                      "exp", "log", "sqrt", "abs", "erf", "max", "min",
                                      "if_then_else", "<", "<=", ">", ">=", "==", "!="};
  for (int op = LEIR_OP_NONE; op <= LEIR_OP_NE; op++) ck_assert_str_eq(leir_op_name((leir_op)op), names[op]);
  leir_program_free(p);
}
END_TEST

START_TEST(test_positions_survive_clones_and_built_nodes_have_none) {
  leir_program *p = test_parse(nested);
  leir_program *q = NULL;
  ck_assert_int_eq(leir_program_clone(&q, p), LEIR_OK);
  leir_position a = leir_expr_position(p, test_rhs(p, 1, 0));
  leir_position b = leir_expr_position(q, test_rhs(q, 1, 0));
  ck_assert_uint_eq(a.line, 1);
  ck_assert_uint_eq(a.column, (uint32_t)(strstr(nested, "if_then_else") - nested) + 1);
  ck_assert_uint_eq(b.line, a.line);
  ck_assert_uint_eq(b.column, a.column);
  /* a node made by a transformation has no source position */
  leir_expr *e = leir__new_int(q, 7);
  leir_position none = leir_expr_position(q, e);
  ck_assert_uint_eq(none.line, 0);
  ck_assert_uint_eq(none.column, 0);
  leir_program_free(q);
  leir_program_free(p);
}
END_TEST

static Suite *walk_suite(void) {
  Suite *s = suite_create("walk");
  TCase *tc = tcase_create("walk");
  tcase_add_test(tc, test_walk_visits_in_program_order);
  tcase_add_test(tc, test_walk_visits_expressions_preorder);
  tcase_add_test(tc, test_walk_stops_early);
  tcase_add_test(tc, test_walk_accepts_older_callback_structs);
  tcase_add_test(tc, test_accessors);
  tcase_add_test(tc, test_positions_survive_clones_and_built_nodes_have_none);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(walk_suite()); }
