/*
 * The LLM policy of the search (leir_search_propose_llm) and `leir optimize
 * --llm-command/--endpoint`: a scripted command and a local HTTP stub
 * (tests/support/llm_stub.c) answer right, wrong (not equivalent, not one
 * step) and malformed (invalid LEIR, garbage, truncated, huge); right
 * answers become accepted steps, every rejection reaches the model with its
 * reason in the next request (the stub logs what it received), and nothing
 * crashes. The API tests judge with a real verifier on the interpreter
 * inside the documented measure callback (timing is stated, not measured).
 */
#define LEIR_EXPERIMENTAL 1
#include "leir/experimental/llm.h"
#include "leir/experimental/search.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

extern char **environ;

static const char *const src_text = "L^{4}_{a=0}L^{8}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c}*2;];";
static const char *const src_sig = "A:f32:4x8 -> C:f32:4x8";
/* the loop reorder: one exact step of the source */
static const char *const reordered = "L^{8}_{c=0}L^{4}_{a=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c}*2;];";
/* two changes at once: not one step of anything */
static const char *const not_a_step = "L^{8}_{c=0}L^{4}_{a=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c}*3;];";
static const char *const invalid_ir = "L^{4}_{a=0}[C^{f32,g}_{a=";

static char tmpdir[64];

static void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/leir-search-llm-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0) { /* a stale temporary directory is harmless */
  }
}

static const char *in_tmp(const char *name) {
  static char p[4][256];
  static int slot;
  char *s = p[slot++ % 4];
  snprintf(s, 256, "%s/%s", tmpdir, name);
  return s;
}

static const char *stub_path(void) {
  const char *p = getenv("LEIR_LLM_STUB");
  ck_assert_msg(p && *p, "LEIR_LLM_STUB is not set (tests/meson.build sets it)");
  return p;
}

static void put_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c == '\n') fputs("\\n", f);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

/* A Step-TP answer (malloc'd). */
static char *answer_for(const char *ir, const char *strategy) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  fputs("<think>Swap the loops.</think><answer>{\"transformed_IR\": ", f);
  put_json_string(f, ir);
  fputs(", \"applied_strategy\": ", f);
  put_json_string(f, strategy);
  fputs("}</answer>", f);
  fclose(f);
  return buf;
}

/* A Step-TP list answer with `n` transformed IRs, all said to be loop_reorder
 * (malloc'd). */
static char *list_answer(const char *const *irs, size_t n) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  fputs("<think>0. Swap the loops.</think><answer>[", f);
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "%s{\"idx\": %zu, \"transformed_IR\": ", i ? ", " : "", i);
    put_json_string(f, irs[i]);
    fputs(", \"applied_strategy\": \"loop_reorder\"}", f);
  }
  fputs("]</answer>", f);
  fclose(f);
  return buf;
}

/* A script for llm_stub: answers wrapped for the command protocol or the
 * HTTP endpoint; '@' lines (the stub's misbehaviours) as they are. */
static const char *write_script(const char *name, char *const *answers, size_t n, int http) {
  const char *path = in_tmp(name);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  for (size_t i = 0; i < n; i++) {
    if (answers[i][0] == '@') fputs(answers[i], f);
    else {
      fputs(http ? "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
                 : "{\"content\":",
            f);
      put_json_string(f, answers[i]);
      fputs(http ? "}}]}" : "}", f);
    }
    fputc('\n', f);
  }
  fclose(f);
  return path;
}

/* The n-th request the stub logged (1-based), malloc'd; NULL when absent. */
static char *logged_request(const char *log, size_t nth) {
  size_t len = 0;
  char *all = test_read_file(log, &len);
  if (!all) return NULL;
  char *line = all, *res = NULL;
  for (size_t k = 1; line && *line; k++) {
    char *nl = strchr(line, '\n');
    if (k == nth) {
      res = nl ? strndup(line, (size_t)(nl - line)) : strdup(line);
      break;
    }
    line = nl ? nl + 1 : NULL;
  }
  free(all);
  return res;
}

static size_t logged_count(const char *log) {
  size_t len = 0, n = 0;
  char *all = test_read_file(log, &len);
  if (!all) return 0;
  for (size_t i = 0; i < len; i++) n += all[i] == '\n';
  free(all);
  return n;
}

/* ---- measuring: a real verifier, a stated speedup ------------------------------ */

typedef struct judge {
  const char *reference; /* the verifier's reference (NULL: the search's source) */
  unsigned calls;
} judge;

static leir_status judge_measure(void *payload, const leir_program *root,
                                 const leir_program *parent, const leir_program *cand,
                                 uint32_t klass, leir_search_measurement *m) {
  (void)parent;
  judge *j = payload;
  j->calls++;
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "interp", NULL), LEIR_OK);
  leir_program *ref = NULL;
  if (j->reference) {
    ref = test_parse(j->reference);
    test_set_signature(ref, src_sig);
  }
  leir_verifier *v = NULL;
  ck_assert_int_eq(leir_verifier_new(&v, b, ref ? ref : root, NULL), LEIR_OK);
  leir_verify_report *r = NULL;
  ck_assert_int_eq(leir_verifier_judge(v, cand, klass, &r), LEIR_OK);
  m->verdict = r->verdict;
  snprintf(m->message, sizeof m->message, "%s", r->message ? r->message : "");
  m->order = LEIR_ORDER_FASTER;
  m->ratio = 1.5;
  m->ratio_lo = 1.4;
  m->ratio_hi = 1.6;
  m->median_s = 1e-3;
  m->q1_s = m->q3_s = 1e-3;
  m->parent_median_s = 1.5e-3;
  m->rounds = 10;
  leir_verify_report_free(r);
  leir_verifier_free(v);
  leir_program_free(ref);
  leir_backend_free(b);
  return LEIR_OK;
}

static leir_search_result *search_with_policy(leir_search_propose_fn fn, void *payload, judge *j,
                                              uint32_t samples, uint32_t retries) {
  leir_program *p = test_parse(src_text);
  test_set_signature(p, src_sig);
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.algorithm = LEIR_SEARCH_CHAIN;
  o.max_samples = samples;
  o.max_depth = 1;
  o.retries = retries;
  o.propose = fn;
  o.propose_payload = payload;
  o.measure = judge_measure;
  o.measure_payload = j;
  o.flags = LEIR_SEARCH_NO_FINAL_COMPARE;
  leir_search_result *res = NULL;
  ck_assert_int_eq(leir_search_run(&res, NULL, p, &o), LEIR_OK);
  leir_program_free(p);
  return res;
}

static leir_search_result *search_with(leir_llm *llm, judge *j, uint32_t samples,
                                       uint32_t retries) {
  return search_with_policy(leir_search_propose_llm, llm, j, samples, retries);
}

static leir_llm *command_client(const char *script, const char *log) {
  const char *argv[] = {stub_path(), "lines", script, log, NULL};
  leir_llm_options lo = LEIR_LLM_OPTIONS_INIT;
  lo.timeout_s = 5;
  lo.max_answer_bytes = 64 * 1024;
  leir_llm *llm = NULL;
  ck_assert_int_eq(leir_llm_new_command(&llm, argv, &lo), LEIR_OK);
  return llm;
}

static const leir_search_record *rec(const leir_search_result *r, size_t i) {
  const leir_search_record *x = leir_search_result_record(r, i);
  ck_assert_ptr_nonnull(x);
  return x;
}

/* wrong, then malformed, then right: each reason reaches the next request */
START_TEST(test_command_wrong_malformed_then_right) {
  char *two = answer_for(not_a_step, "loop_reorder");
  char *bad = answer_for(invalid_ir, "loop_reorder");
  char *right = answer_for(reordered, "loop reorder");
  char *const answers[] = {two, bad, (char *)"I would reorder the loops.",
                           (char *)"<think>Let me swap", right};
  const char *script = write_script("script", answers, 5, 0);
  const char *log = in_tmp("log");
  leir_llm *llm = command_client(script, log);
  judge j = {NULL, 0};
  leir_search_result *res = search_with(llm, &j, 10, 4);
  ck_assert_uint_eq(leir_search_result_record_count(res), 5);
  ck_assert_int_eq(rec(res, 0)->reject, LEIR_REJECT_NOT_ONE_STEP);
  ck_assert_int_eq(rec(res, 1)->reject, LEIR_REJECT_MALFORMED);
  ck_assert_ptr_nonnull(strstr(rec(res, 1)->reason, "invalid at 1:"));
  ck_assert_int_eq(rec(res, 2)->reject, LEIR_REJECT_MALFORMED);
  ck_assert_ptr_nonnull(strstr(rec(res, 2)->reason, "malformed answer"));
  ck_assert_int_eq(rec(res, 3)->reject, LEIR_REJECT_MALFORMED);
  const leir_search_record *ok = rec(res, 4);
  ck_assert_int_eq(ok->reject, LEIR_REJECT_NONE);
  ck_assert_int_eq(ok->node, 1);
  ck_assert_str_eq(ok->strategy, "loop_reorder");
  ck_assert_str_eq(ok->cot, "Swap the loops.");
  ck_assert_int_eq(ok->m.verdict, LEIR_VERDICT_EQUAL);
  ck_assert_uint_eq(j.calls, 1); /* only the grounded program was measured */
  /* every record keeps the model's whole answer and what it proposed, the
   * rejected ones too (nothing of them became a step) */
  ck_assert_str_eq(rec(res, 0)->raw, two);
  ck_assert_str_eq(rec(res, 0)->proposed, not_a_step);
  ck_assert_str_eq(rec(res, 0)->step, "");
  ck_assert_str_eq(rec(res, 1)->raw, bad);
  ck_assert_str_eq(rec(res, 1)->proposed, invalid_ir);
  ck_assert_str_eq(rec(res, 2)->raw, "I would reorder the loops.");
  ck_assert_str_eq(rec(res, 2)->proposed, "I would reorder the loops.");
  ck_assert_str_eq(rec(res, 3)->raw, "<think>Let me swap");
  ck_assert_str_eq(ok->raw, right);
  char *json = NULL;
  ck_assert_int_eq(leir_search_record_json(rec(res, 2), &json, NULL), LEIR_OK);
  ck_assert_ptr_nonnull(strstr(json, "\"raw\":\"I would reorder the loops.\""));
  leir_free(json);
  leir_search_summary s = {.size = sizeof s};
  ck_assert_int_eq(leir_search_result_summary(res, &s), LEIR_OK);
  ck_assert_uint_eq(s.accepted, 1);
  /* the prompts: system message, the search wording, the reasons fed back */
  ck_assert_uint_eq(logged_count(log), 5);
  char *r1 = logged_request(log, 1), *r2 = logged_request(log, 2), *r3 = logged_request(log, 3),
       *r5 = logged_request(log, 5);
  ck_assert_ptr_nonnull(strstr(r1, "You are a helpful IR optimization assistant."));
  ck_assert_ptr_nonnull(strstr(r1, "Chain-based optimization is used on a given IR"));
  ck_assert_ptr_nonnull(strstr(r1, "Give the current IR of"));
  ck_assert_ptr_nonnull(strstr(r1, "the depth is 0"));
  ck_assert_ptr_null(strstr(r1, "was rejected"));
  ck_assert_ptr_nonnull(strstr(r2, "not one step of loop_reorder"));
  ck_assert_ptr_nonnull(strstr(r3, "invalid at 1:"));
  ck_assert_ptr_nonnull(strstr(r5, "malformed answer"));
  ck_assert_ptr_nonnull(strstr(r5, "not one step of loop_reorder"));
  free(r1), free(r2), free(r3), free(r5);
  leir_search_result_free(res);
  leir_llm_free(llm);
  free(two), free(bad), free(right);
}
END_TEST

/* a verified-wrong answer: the verifier's first differing element goes back */
START_TEST(test_command_not_equivalent_reason) {
  char *right = answer_for(reordered, "loop_reorder");
  char *const answers[] = {right, right};
  const char *script = write_script("script", answers, 2, 0);
  const char *log = in_tmp("log");
  leir_llm *llm = command_client(script, log);
  /* the judge's reference computes *3: the reorder of *2 is one step but differs */
  judge j = {"L^{4}_{a=0}L^{8}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c}*3;];", 0};
  leir_search_result *res = search_with(llm, &j, 10, 1);
  ck_assert_uint_eq(leir_search_result_record_count(res), 2);
  ck_assert_int_eq(rec(res, 0)->reject, LEIR_REJECT_VERDICT);
  ck_assert_int_eq(rec(res, 0)->m.verdict, LEIR_VERDICT_MISMATCH);
  /* the second proposal is the same program: seen before, not measured again */
  ck_assert_int_eq(rec(res, 1)->reject, LEIR_REJECT_SEEN);
  ck_assert_uint_eq(j.calls, 1);
  char *r2 = logged_request(log, 2);
  ck_assert_ptr_nonnull(r2);
  ck_assert_msg(strstr(r2, "not numerically equivalent (MISMATCH)") != NULL, "%s", r2);
  ck_assert_msg(strstr(r2, "C[") != NULL, "the first differing element: %s", r2);
  free(r2);
  leir_search_result_free(res);
  leir_llm_free(llm);
  free(right);
}
END_TEST

/* hostile answers: 60 KB of prose (within the limit), bytes without end
 * (over it: the command is killed, and the restarted one replays the
 * script): rejected with a reason each, no crash, the node given up */
START_TEST(test_command_hostile) {
  size_t big = 60 * 1024;
  char *prose = malloc(big + 1);
  for (size_t i = 0; i < big; i++) prose[i] = "tile the loops "[i % 15];
  prose[big] = 0;
  char *const answers[] = {prose, (char *)"@HUGE"};
  const char *script = write_script("script", answers, 2, 0);
  const char *log = in_tmp("log");
  leir_llm *llm = command_client(script, log);
  judge j = {NULL, 0};
  leir_search_result *res = search_with(llm, &j, 10, 2);
  ck_assert_uint_eq(leir_search_result_record_count(res), 3);
  for (size_t i = 0; i < 3; i++) ck_assert_int_eq(rec(res, i)->reject, LEIR_REJECT_MALFORMED);
  ck_assert_ptr_nonnull(strstr(rec(res, 0)->reason, "malformed answer"));
  ck_assert_ptr_nonnull(strstr(rec(res, 1)->reason, "no answer"));
  ck_assert_ptr_nonnull(strstr(rec(res, 2)->reason, "malformed answer"));
  ck_assert_uint_eq(j.calls, 0);
  /* the quoted proposal is bounded: the prompt stays small */
  char *r2 = logged_request(log, 2);
  ck_assert_ptr_nonnull(r2);
  ck_assert_uint_lt(strlen(r2), 32 * 1024);
  ck_assert_ptr_nonnull(strstr(r2, "malformed answer ("));
  free(r2);
  /* the failed request is the third request's feedback */
  char *r3 = logged_request(log, 3);
  ck_assert_ptr_nonnull(r3);
  ck_assert_msg(strstr(r3, "an earlier request was rejected: no answer") != NULL, "%s", r3);
  free(r3);
  leir_search_result_free(res);
  leir_llm_free(llm);
  free(prose);
}
END_TEST

/* the prompt options: N IRs asked in one call, each IR of the list answer
 * a proposal (the unreadable one skipped), no hardware block, no system
 * message; the default prompt has the reference's hardware block */
START_TEST(test_command_list_answer) {
  const char *const irs[] = {not_a_step, invalid_ir, reordered};
  char *list = list_answer(irs, 3);
  char *const answers[] = {list};
  const char *script = write_script("script", answers, 1, 0);
  const char *log = in_tmp("log");
  leir_llm *llm = command_client(script, log);
  leir_search_llm_options so;
  ck_assert_int_eq(leir_search_llm_options_init(&so, sizeof so), LEIR_OK);
  ck_assert_str_eq(so.hardware, "H20-3e");
  ck_assert_uint_eq(so.irs_per_call, 0);
  so.llm = llm;
  so.irs_per_call = 3;
  so.hardware = NULL;
  so.system_prompt = "";
  judge j = {NULL, 0};
  leir_search_result *res = search_with_policy(leir_search_propose_llm_with, &so, &j, 10, 0);
  ck_assert_uint_eq(logged_count(log), 1); /* one call ... */
  ck_assert_uint_eq(leir_search_result_record_count(res), 3); /* ... three proposals */
  ck_assert_int_eq(rec(res, 0)->reject, LEIR_REJECT_NOT_ONE_STEP);
  ck_assert_int_eq(rec(res, 1)->reject, LEIR_REJECT_MALFORMED);
  ck_assert_int_eq(rec(res, 2)->reject, LEIR_REJECT_NONE);
  ck_assert_str_eq(rec(res, 2)->proposed, reordered);
  for (size_t i = 0; i < 3; i++) ck_assert_str_eq(rec(res, i)->raw, list);
  ck_assert_uint_eq(j.calls, 1);
  char *r1 = logged_request(log, 1);
  ck_assert_ptr_nonnull(r1);
  ck_assert_msg(strstr(r1, "{\"messages\":[{\"role\":\"user\"") != NULL, "%s", r1);
  ck_assert_ptr_null(strstr(r1, "\"role\":\"system\""));
  ck_assert_ptr_nonnull(strstr(r1, "Please give me at least 3 different"));
  ck_assert_ptr_nonnull(strstr(r1, "'idx', 'transformed_IR', 'applied_strategy'"));
  ck_assert_ptr_null(strstr(r1, "Target hardware"));
  free(r1);
  leir_search_result_free(res);
  leir_llm_free(llm);

  /* the defaults: the reference's system message and hardware block, one
   * IR for chain (its script's num_IRs); a bad GPU name stops the search */
  char *right = answer_for(reordered, "loop_reorder");
  char *const one[] = {right};
  script = write_script("script2", one, 1, 0);
  log = in_tmp("log2");
  llm = command_client(script, log);
  leir_search_llm_options_init(&so, sizeof so);
  so.llm = llm;
  res = search_with_policy(leir_search_propose_llm_with, &so, &j, 10, 0);
  ck_assert_uint_eq(leir_search_result_record_count(res), 1);
  r1 = logged_request(log, 1);
  ck_assert_ptr_nonnull(r1);
  ck_assert_ptr_nonnull(strstr(r1, "[{\"role\":\"system\",\"content\":\"You are a helpful IR "
                                   "optimization assistant.\"}"));
  const char *hw = strstr(r1, "**Target hardware**: NVIDIA H20-3e GPU.");
  ck_assert_ptr_nonnull(hw);
  ck_assert_ptr_nonnull(strstr(r1, "thread axes with prefixes tx, ty, tz"));
  /* where the reference has it: before the strategy list */
  const char *list_at = strstr(r1, "The following strategies");
  ck_assert_ptr_nonnull(list_at);
  ck_assert(hw < list_at);
  ck_assert_ptr_nonnull(strstr(r1, "Please give me a **numerically equivalent"));
  free(r1);
  leir_search_result_free(res);
  so.hardware = "H20\n";
  leir_program *p = test_parse(src_text);
  test_set_signature(p, src_sig);
  leir_search_options o = LEIR_SEARCH_OPTIONS_INIT;
  o.algorithm = LEIR_SEARCH_CHAIN;
  o.propose = leir_search_propose_llm_with;
  o.propose_payload = &so;
  o.measure = judge_measure;
  o.measure_payload = &j;
  o.flags = LEIR_SEARCH_NO_FINAL_COMPARE;
  res = NULL;
  ck_assert_int_eq(leir_search_run(&res, NULL, p, &o), LEIR_ERR_ARGUMENT);
  leir_search_result_free(res);
  leir_program_free(p);
  leir_llm_free(llm);
  free(right);
  free(list);
}
END_TEST

/* an untrusted list answer of 40 entries: at most 16 proposals of one call */
START_TEST(test_command_list_bounded) {
  const char *irs[40];
  for (size_t i = 0; i < 40; i++) irs[i] = not_a_step;
  char *list = list_answer(irs, 40);
  char *const answers[] = {list};
  const char *script = write_script("script", answers, 1, 0);
  const char *log = in_tmp("log");
  leir_llm *llm = command_client(script, log);
  leir_search_llm_options so = LEIR_SEARCH_LLM_OPTIONS_INIT;
  so.llm = llm;
  so.irs_per_call = 2;
  judge j = {NULL, 0};
  leir_search_result *res = search_with_policy(leir_search_propose_llm_with, &so, &j, 100, 0);
  ck_assert_uint_eq(logged_count(log), 1);
  ck_assert_uint_eq(leir_search_result_record_count(res), 16);
  ck_assert_uint_eq(j.calls, 0);
  leir_search_result_free(res);
  leir_llm_free(llm);
  free(list);
}
END_TEST

/* ---- the HTTP stub ------------------------------------------------------------------ */

static pid_t server_pid;

static const char *start_server(const char *script, const char *log) {
  const char *portfile = in_tmp("port");
  unlink(portfile);
  server_pid = fork();
  ck_assert_int_ge(server_pid, 0);
  if (server_pid == 0) {
    execl(stub_path(), stub_path(), "http", script, log, portfile, (char *)NULL);
    _exit(127);
  }
  int port = 0;
  for (int i = 0; i < 2000 && !port; i++) {
    FILE *f = fopen(portfile, "r");
    if (f) {
      if (fscanf(f, "%d", &port) != 1) port = 0;
      fclose(f);
    }
    if (!port) {
      struct timespec ts = {0, 10000000};
      nanosleep(&ts, NULL);
    }
  }
  ck_assert_msg(port > 0, "the HTTP stub did not start");
  static char url[128];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions", port);
  return url;
}

static void stop_server(void) {
  if (server_pid > 0) {
    kill(server_pid, SIGKILL);
    waitpid(server_pid, NULL, 0);
  }
  server_pid = 0;
}

START_TEST(test_endpoint_wrong_then_right) {
  char *two = answer_for(not_a_step, "loop_reorder");
  char *right = answer_for(reordered, "loop_reorder");
  char *const answers[] = {two, (char *)"@BINARY", (char *)"@HUGE", right};
  const char *script = write_script("script", answers, 4, 1);
  const char *log = in_tmp("log");
  const char *url = start_server(script, log);
  leir_llm_options lo = LEIR_LLM_OPTIONS_INIT;
  lo.timeout_s = 5;
  lo.model = "qwen-step-tp";
  lo.max_answer_bytes = 4096;
  leir_llm *llm = NULL;
  leir_status st = leir_llm_new_endpoint(&llm, url, &lo);
  if (st == LEIR_ERR_UNSUPPORTED) { /* a build without libcurl */
    stop_server();
    free(two), free(right);
    return;
  }
  ck_assert_int_eq(st, LEIR_OK);
  judge j = {NULL, 0};
  leir_search_result *res = search_with(llm, &j, 10, 3);
  stop_server();
  ck_assert_uint_eq(leir_search_result_record_count(res), 4);
  ck_assert_int_eq(rec(res, 0)->reject, LEIR_REJECT_NOT_ONE_STEP);
  ck_assert_int_eq(rec(res, 1)->reject, LEIR_REJECT_MALFORMED);
  ck_assert_ptr_nonnull(strstr(rec(res, 1)->reason, "no answer"));
  ck_assert_int_eq(rec(res, 2)->reject, LEIR_REJECT_MALFORMED);
  ck_assert_int_eq(rec(res, 3)->reject, LEIR_REJECT_NONE);
  char *r1 = logged_request(log, 1), *r2 = logged_request(log, 2);
  ck_assert_ptr_nonnull(strstr(r1, "\"model\":\"qwen-step-tp\""));
  ck_assert_ptr_nonnull(strstr(r1, "You are a helpful IR optimization assistant."));
  ck_assert_ptr_nonnull(strstr(r2, "not one step of loop_reorder"));
  free(r1), free(r2);
  leir_search_result_free(res);
  leir_llm_free(llm);
  free(two), free(right);
}
END_TEST

/* ---- leir optimize ------------------------------------------------------------------ */

typedef test_tool_result run_result;

static run_result run(const char *const *args) { return test_run_tool(tmpdir, args); }

static const char *write_program(void) {
  const char *path = in_tmp("prog.leir");
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fprintf(f, "%s\n", src_text);
  fclose(f);
  return path;
}

START_TEST(test_tool_llm_command) {
  char *two = answer_for(not_a_step, "loop_reorder");
  char *right = answer_for(reordered, "loop_reorder");
  char *const answers[] = {two, (char *)"<answer>{\"transformed_IR\": \"L^{4", right};
  const char *script = write_script("script", answers, 3, 0);
  char log[256], cmd[700];
  snprintf(log, sizeof log, "%s", in_tmp("log"));
  snprintf(cmd, sizeof cmd, "'%s' lines '%s' '%s'", stub_path(), script, log);
  const char *prog = write_program();
  run_result r = run((const char *const[]){"optimize", "--llm-command", cmd, "--search", "chain",
                                           "--depth", "1", "--samples", "5", "--retries", "3",
                                           "--no-db", "--no-final-compare", "--rounds", "3",
                                           "--max-rounds", "3", "--sets", "1", "--backend", "interp", "--json", prog,
                                           NULL});
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  /* three records: not one step, malformed, the right one verified EQUAL */
  ck_assert_msg(strstr(r.out, "\"reject\":\"not-one-step\"") != NULL, "%s", r.out);
  ck_assert_msg(strstr(r.out, "\"reject\":\"malformed\"") != NULL, "%s", r.out);
  ck_assert_msg(strstr(r.out, "\"verdict\":\"EQUAL\"") != NULL, "%s", r.out);
  ck_assert_msg(strstr(r.out, "\"policy\":\"llm\"") != NULL, "%s", r.out);
  /* 3 requests, a 4th when the interpreter did not time the right step
   * faster (the stub then has no line left: a rejected "no answer") */
  ck_assert_uint_ge(logged_count(log), 3);
  char *r2 = logged_request(log, 2), *r3 = logged_request(log, 3);
  ck_assert_ptr_nonnull(strstr(r2, "not one step of loop_reorder"));
  ck_assert_ptr_nonnull(strstr(r3, "malformed answer"));
  free(r2), free(r3);
  free(r.out), free(r.err);
  free(two), free(right);
}
END_TEST

/* leir optimize's sampling settings reach every request (the reference's
 * 0.3 and 40960 by default), the system prompt is the first message, the
 * hardware block is there unless --no-hardware, and greedy asks for the
 * reference's two IRs a call, both proposed */
START_TEST(test_tool_sampling) {
  const char *const irs[] = {not_a_step, reordered};
  char *list = list_answer(irs, 2);
  char *const answers[] = {list};
  const char *script = write_script("script", answers, 1, 0);
  char log[256], cmd[700];
  snprintf(log, sizeof log, "%s", in_tmp("log"));
  snprintf(cmd, sizeof cmd, "'%s' lines '%s' '%s'", stub_path(), script, log);
  char prog[256]; /* (in_tmp's buffers are reused) */
  snprintf(prog, sizeof prog, "%s", write_program());
  run_result r = run((const char *const[]){"optimize", "--llm-command", cmd, "--search", "greedy",
                                           "--temperature", "0.7", "--top-p", "0.9", "--max-tokens",
                                           "123", "--llm-seed", "5", "--system-prompt", "Be brief.",
                                           "--depth", "1", "--samples", "4", "--retries", "0",
                                           "--no-db", "--no-final-compare", "--rounds", "3",
                                           "--max-rounds", "3", "--sets", "1", "--backend", "interp",
                                           "--json", prog, NULL});
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_msg(strstr(r.out, "\"reject\":\"not-one-step\"") != NULL, "%s", r.out);
  ck_assert_msg(strstr(r.out, "\"verdict\":\"EQUAL\"") != NULL, "%s", r.out);
  char *r1 = logged_request(log, 1);
  ck_assert_ptr_nonnull(r1);
  ck_assert_msg(strstr(r1, "{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},"
                           "{\"role\":\"user\"") != NULL, "%s", r1);
  ck_assert_msg(strstr(r1, "\"temperature\":0.7,\"top_p\":0.9,\"max_tokens\":123,\"seed\":5") != NULL,
                "%s", r1);
  ck_assert_ptr_nonnull(strstr(r1, "Greedy-based optimization"));
  ck_assert_ptr_nonnull(strstr(r1, "**Target hardware**: NVIDIA H20-3e GPU."));
  ck_assert_ptr_nonnull(strstr(r1, "Please give me at least 2 different"));
  free(r1);
  free(r.out), free(r.err);

  /* the defaults, another GPU, then none */
  char *right = answer_for(reordered, "loop_reorder");
  char *const one[] = {right};
  for (int k = 0; k < 2; k++) {
    script = write_script(k ? "s2" : "s1", one, 1, 0);
    snprintf(log, sizeof log, "%s", in_tmp(k ? "log2" : "log1"));
    snprintf(cmd, sizeof cmd, "'%s' lines '%s' '%s'", stub_path(), script, log);
    r = run((const char *const[]){"optimize", "--llm-command", cmd, "--search", "chain",
                                  k ? "--no-hardware" : "--hardware", k ? "--quiet" : "A100",
                                  "--depth", "1", "--samples", "1", "--retries", "0", "--no-db",
                                  "--no-final-compare", "--rounds", "3", "--max-rounds", "3",
                                  "--sets", "1", "--backend", "interp", "--json", prog, NULL});
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    r1 = logged_request(log, 1);
    ck_assert_ptr_nonnull(r1);
    ck_assert_msg(strstr(r1, "\"content\":\"You are a helpful IR optimization assistant.\"}") != NULL,
                  "%s", r1);
    ck_assert_msg(strstr(r1, "\"temperature\":0.3,\"max_tokens\":40960}") != NULL, "%s", r1);
    ck_assert_ptr_null(strstr(r1, "\"seed\""));
    ck_assert_ptr_null(strstr(r1, "\"top_p\""));
    if (k) ck_assert_ptr_null(strstr(r1, "Target hardware"));
    else ck_assert_ptr_nonnull(strstr(r1, "**Target hardware**: NVIDIA A100 GPU."));
    ck_assert_ptr_nonnull(strstr(r1, "Please give me a **numerically equivalent"));
    free(r1);
    free(r.out), free(r.err);
  }
  free(right);
  free(list);
}
END_TEST

START_TEST(test_tool_usage) {
  const char *prog = write_program();
  run_result r = run((const char *const[]){"optimize", "--endpoint", "http://127.0.0.1:9/x",
                                           "--llm-command", "true", "--no-db", prog, NULL});
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "exclude each other"));
  free(r.out), free(r.err);
  r = run((const char *const[]){"optimize", "--model", "m", "--no-db", prog, NULL});
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "need --endpoint"));
  free(r.out), free(r.err);
  /* eval's names, ranges and messages */
  r = run((const char *const[]){"optimize", "--llm-command", "true", "--temperature", "101",
                                "--no-db", prog, NULL});
  ck_assert_int_eq(r.status, 2);
  ck_assert_msg(strstr(r.err, "--temperature takes a number in [0, 100]") != NULL, "%s", r.err);
  free(r.out), free(r.err);
  r = run((const char *const[]){"optimize", "--top-p", "0.5", "--no-db", prog, NULL});
  ck_assert_int_eq(r.status, 2);
  ck_assert_msg(strstr(r.err, "--top-p needs a model") != NULL, "%s", r.err);
  free(r.out), free(r.err);
  r = run((const char *const[]){"optimize", "--llm-command", "true", "--hardware", "A100",
                                "--no-hardware", "--no-db", prog, NULL});
  ck_assert_int_eq(r.status, 2);
  ck_assert_msg(strstr(r.err, "exclude each other") != NULL, "%s", r.err);
  free(r.out), free(r.err);
  r = run((const char *const[]){"optimize", "--llm-command", "true", "--irs-per-call", "17",
                                "--no-db", prog, NULL});
  ck_assert_int_eq(r.status, 2);
  ck_assert_msg(strstr(r.err, "--irs-per-call takes an integer 1..16") != NULL, "%s", r.err);
  free(r.out), free(r.err);
  r = run((const char *const[]){"optimize", "--help", NULL});
  ck_assert_ptr_nonnull(strstr(r.out, "--llm-command"));
  ck_assert_ptr_nonnull(strstr(r.out, "--endpoint"));
  free(r.out), free(r.err);
}
END_TEST

static Suite *search_llm_suite(void) {
  Suite *s = suite_create("search_llm");
  TCase *api = tcase_create("api");
  tcase_add_checked_fixture(api, setup, teardown);
  tcase_set_timeout(api, 120);
  tcase_add_test(api, test_command_wrong_malformed_then_right);
  tcase_add_test(api, test_command_not_equivalent_reason);
  tcase_add_test(api, test_command_hostile);
  tcase_add_test(api, test_command_list_answer);
  tcase_add_test(api, test_command_list_bounded);
  tcase_add_test(api, test_endpoint_wrong_then_right);
  suite_add_tcase(s, api);
  TCase *tool = tcase_create("tool");
  tcase_add_checked_fixture(tool, setup, teardown);
  tcase_set_timeout(tool, 120);
  tcase_add_test(tool, test_tool_llm_command);
  tcase_add_test(tool, test_tool_sampling);
  tcase_add_test(tool, test_tool_usage);
  suite_add_tcase(s, tool);
  return s;
}

int main(void) { return test_run_suite(search_llm_suite()); }
