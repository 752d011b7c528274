/* Hard budgets of the comparison (issue 34.6): leir_kernels_compare stops
 * for its cancellation flag and keeps its time limit within a batch and
 * within a round. Nothing here asserts a duration: a flag set before the
 * call must give LEIR_ERR_CANCELLED with no round, a flag set while it runs
 * must end a comparison that would otherwise take 1000 s (the suite's
 * timeout is what fails if it does not), and a time limit shorter than one
 * round must leave fewer rounds than min_rounds, with the same number of
 * runs for every kernel. Each test runs on the interpreter (timing in the
 * library's process) and on the cpu backend (timing in its runner). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leir/leir.h"
#include "testutil.h"

static const char *const BACKENDS[] = {"interp", "cpu"};

/* A reduction over `cols` exponentials per row: a few milliseconds on the
 * interpreter at 200x1000. */
static leir_kernel *kernel_of(leir_backend *b, int rows, int cols) {
  char text[256];
  snprintf(text, sizeof text,
           "L^{%d}_{a=0}L^{%d}_{c=0}[C^{f64,g}_{a}=C^{f64,g}_{a}+exp(A^{f64,g}_{a,c});];", rows,
           cols);
  leir_program *p = test_parse(text);
  leir_kernel *k = NULL;
  ck_assert_int_eq(leir_kernel_new(&k, b, p), LEIR_OK);
  leir_program_free(p);
  return k;
}

static leir_backend *open_backend(const char *name) {
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.threads = 1;
  bo.runner = getenv("LEIR_TEST_RUNNER");
  leir_backend *b = NULL;
  leir_status st = leir_backend_open(&b, name, &bo);
  ck_assert_msg(st == LEIR_OK, "leir_backend_open(%s): %s", name, leir_error_last()->message);
  return b;
}

START_TEST(test_cancelled_before_the_call) {
  leir_backend *b = open_backend(BACKENDS[_i]);
  leir_kernel *ka = kernel_of(b, 200, 1000), *kb = kernel_of(b, 100, 1000);
  volatile int cancel = 1;
  leir_compare_options o = LEIR_COMPARE_OPTIONS_INIT;
  o.cancel = &cancel;
  o.max_rounds = 100000;
  o.max_seconds = 1000;
  leir_comparison c = {.size = sizeof c};
  c.rounds = 77;
  ck_assert_int_eq(leir_kernels_compare(ka, kb, &o, &c), LEIR_ERR_CANCELLED);
  ck_assert_int_eq(leir_error_last()->status, LEIR_ERR_CANCELLED);
  ck_assert_uint_eq(c.size, sizeof c);
  ck_assert_uint_eq(c.rounds, 0);
  ck_assert_uint_eq(c.a.runs, 0);
  ck_assert_uint_eq(c.b.runs, 0);
  ck_assert_int_eq(c.order, LEIR_ORDER_UNDECIDED);
  /* a flag that is clear does not stop it: the defaults decide 2x work */
  cancel = 0;
  o.max_seconds = 60;
  ck_assert_int_eq(leir_kernels_compare(ka, kb, &o, &c), LEIR_OK);
  ck_assert_uint_ge(c.rounds, o.min_rounds);
  ck_assert_uint_eq(c.a.runs, c.rounds);
  leir_kernel_free(ka);
  leir_kernel_free(kb);
  leir_backend_free(b);
}
END_TEST

static void *cancel_later(void *arg) {
  usleep(200 * 1000);
  __atomic_store_n((int *)arg, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

START_TEST(test_cancelled_while_comparing) {
  leir_backend *b = open_backend(BACKENDS[_i]);
  leir_kernel *k = kernel_of(b, 200, 1000);
  /* a kernel against itself with no tolerance never decides: only the flag
   * (or 100000 rounds, or 1000 s) ends it */
  int cancel = 0;
  leir_compare_options o = LEIR_COMPARE_OPTIONS_INIT;
  o.cancel = &cancel;
  o.min_effect = 0;
  o.max_rounds = 100000;
  o.max_seconds = 1000;
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, cancel_later, &cancel), 0);
  leir_comparison c = {.size = sizeof c};
  leir_status st = leir_kernels_compare(k, k, &o, &c);
  pthread_join(th, NULL);
  ck_assert_int_eq(st, LEIR_ERR_CANCELLED);
  ck_assert_uint_lt(c.rounds, o.max_rounds);
  ck_assert_uint_eq(c.a.runs, c.rounds);
  ck_assert_uint_eq(c.b.runs, c.rounds);
  ck_assert_int_eq(c.order, LEIR_ORDER_UNDECIDED);
  leir_kernel_free(k);
  leir_backend_free(b);
}
END_TEST

/* max_seconds far below one round: the first round is measured, no other
 * starts, and the batch of min_rounds is cut short inside the backend. */
START_TEST(test_time_limit_within_a_batch) {
  leir_backend *b = open_backend(BACKENDS[_i]);
  /* 2M and 1M exponentials: a run takes well over the 1 ms the backend is
   * given at least */
  leir_kernel *ka = kernel_of(b, 2000, 1000), *kb = kernel_of(b, 1000, 1000);
  leir_compare_options o = LEIR_COMPARE_OPTIONS_INIT;
  o.warmup = 0;
  o.min_rounds = 50;
  o.max_rounds = 1000;
  o.max_seconds = 1e-6;
  leir_comparison c = {.size = sizeof c};
  ck_assert_int_eq(leir_kernels_compare(ka, kb, &o, &c), LEIR_OK);
  ck_assert_uint_eq(c.rounds, 1);
  ck_assert_uint_eq(c.a.runs, 1);
  ck_assert_uint_eq(c.b.runs, 1);
  ck_assert_int_eq(c.order, LEIR_ORDER_UNDECIDED);
  /* leir_kernels_time of three kernels: a round cut short after its first
   * kernel is dropped, so all keep the same number of runs */
  leir_kernel *ks[3] = {ka, kb, ka};
  leir_bench_options bo = LEIR_BENCH_OPTIONS_INIT;
  bo.warmup = 0;
  bo.min_runs = 40;
  bo.max_runs = 40;
  bo.min_seconds = 0;
  bo.max_seconds = 1e-6;
  leir_timing t[3];
  ck_assert_int_eq(leir_kernels_time(ks, 3, &bo, t), LEIR_OK);
  ck_assert_uint_ge(t[0].runs, 1);
  ck_assert_uint_lt(t[0].runs, 40);
  ck_assert_uint_eq(t[1].runs, t[0].runs);
  ck_assert_uint_eq(t[2].runs, t[0].runs);
  leir_kernel_free(ka);
  leir_kernel_free(kb);
  leir_backend_free(b);
}
END_TEST

START_TEST(test_options_without_the_flag) {
  /* an older caller's struct, without `cancel`, reads as no flag */
  leir_backend *b = open_backend("interp");
  leir_kernel *ka = kernel_of(b, 20, 100), *kb = kernel_of(b, 80, 100);
  leir_compare_options o = LEIR_COMPARE_OPTIONS_INIT;
  ck_assert(o.cancel == NULL);
  o.size = (uint32_t)offsetof(leir_compare_options, cancel);
  leir_comparison c = {.size = sizeof c};
  ck_assert_int_eq(leir_kernels_compare(ka, kb, &o, &c), LEIR_OK);
  ck_assert_uint_ge(c.rounds, o.min_rounds);
  leir_compare_options d;
  ck_assert_int_eq(leir_compare_options_init(&d, sizeof d), LEIR_OK);
  ck_assert(d.cancel == NULL);
  leir_kernel_free(ka);
  leir_kernel_free(kb);
  leir_backend_free(b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("budgets");
  TCase *tc = tcase_create("budgets");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_cancelled_before_the_call, 0, 2);
  tcase_add_loop_test(tc, test_cancelled_while_comparing, 0, 2);
  tcase_add_loop_test(tc, test_time_limit_within_a_batch, 0, 2);
  tcase_add_test(tc, test_options_without_the_flag);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
