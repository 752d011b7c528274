/*
 * LLM clients and the proposal loop (include/leir/experimental/llm.h):
 * a C callback, a scripted command (tests/support/llm_stub.c speaking JSON
 * lines) and a local HTTP stub of a chat-completions endpoint on 127.0.0.1
 * with an ephemeral port, answering right, wrong and malformed, and hostile
 * answers (huge, binary, truncated, slow, dying) that must end as statuses.
 */
#define LEIR_EXPERIMENTAL 1
#include "leir/experimental/llm.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

/* ---- the program, a right answer and wrong ones ------------------------------ */

static const char *const src_text = "L^{4}_{a=0}L^{8}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c}*2;];";
static const char *const src_sig = "A:f32:4x8 -> C:f32:4x8";

typedef struct fixture {
  leir_program *p;
  char strategy[64]; /* of the right step */
  char *right_ir;    /* the right step's result */
} fixture;

static fixture fx;

static void fixture_setup(void) {
  fx.p = test_parse(src_text);
  test_set_signature(fx.p, src_sig);
  leir_candidates *cl = NULL;
  ck_assert_int_eq(leir_candidates_list(&cl, fx.p, NULL), LEIR_OK);
  ck_assert_uint_gt(leir_candidates_count(cl), 0);
  /* the first exact candidate (any strategy) */
  size_t pick = 0;
  while (pick < leir_candidates_count(cl) && leir_candidates_exactness(cl, pick) != LEIR_EXACT)
    pick++;
  ck_assert_uint_lt(pick, leir_candidates_count(cl));
  const leir_step *st = leir_candidates_step(cl, pick);
  snprintf(fx.strategy, sizeof fx.strategy, "%s",
           leir_strategy_info_at(leir_step_strategy(st))->name);
  leir_program *q = NULL;
  ck_assert_int_eq(leir_candidates_apply(&q, cl, pick), LEIR_OK);
  fx.right_ir = test_print(q);
  leir_program_free(q);
  leir_candidates_free(cl);
}

static void fixture_teardown(void) {
  leir_free(fx.right_ir);
  leir_program_free(fx.p);
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

/* Step-TP answer text for an IR and a strategy (malloc'd). */
static char *answer_for(const char *ir, const char *strategy) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  fputs("<think>Reasoning.</think><answer>{\"transformed_IR\": ", f);
  put_json_string(f, ir);
  fputs(", \"applied_strategy\": ", f);
  put_json_string(f, strategy);
  fputs("}</answer>", f);
  fclose(f);
  return buf;
}

static const char *const malformed = "I would tile the loops, that should help.";
static const char *const invalid_ir = "L^{4}_{a=0}[C^{f32,g}_{a=";
/* valid, but two changes: not one step of anything */
static const char *const not_a_step = "L^{8}_{c=0}L^{4}_{a=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c}*3;];";

/* ---- a scripted callback --------------------------------------------------------- */

typedef struct script {
  const char *answers[8];
  size_t len[8]; /* 0: strlen */
  size_t n, next;
  char *last_user[8]; /* the last user message of each call */
  size_t nmessages[8];
} script;

static leir_status scripted(void *payload, const leir_llm_message *m, size_t n, char **answer,
                            size_t *answer_len) {
  script *s = payload;
  size_t k = s->next++;
  ck_assert_uint_lt(k, s->n);
  ck_assert_uint_gt(n, 0);
  ck_assert_str_eq(m[n - 1].role, "user");
  s->last_user[k] = strdup(m[n - 1].content);
  s->nmessages[k] = n;
  size_t len = s->len[k] ? s->len[k] : strlen(s->answers[k]);
  *answer = malloc(len + 1);
  memcpy(*answer, s->answers[k], len);
  (*answer)[len] = '\0';
  *answer_len = len;
  return LEIR_OK;
}

static void script_free(script *s) {
  for (size_t k = 0; k < 8; k++) free(s->last_user[k]);
}

typedef struct vctx {
  leir_backend *b;
  leir_program *ref;
  leir_verifier *v;
} vctx;

/* A verifier on the interpreter with `text` as its reference. */
static vctx verifier_for(const char *text) {
  vctx c;
  c.ref = test_parse(text);
  test_set_signature(c.ref, src_sig);
  c.b = NULL;
  ck_assert_int_eq(leir_backend_open(&c.b, "interp", NULL), LEIR_OK);
  c.v = NULL;
  ck_assert_int_eq(leir_verifier_new(&c.v, c.b, c.ref, NULL), LEIR_OK);
  return c;
}

static void vctx_free(vctx *c) {
  leir_verifier_free(c->v);
  leir_backend_free(c->b);
  leir_program_free(c->ref);
}

START_TEST(test_callback_retries_with_reasons_until_right) {
  char *right = answer_for(fx.right_ir, fx.strategy);
  char *bad_ir = answer_for(invalid_ir, fx.strategy);
  char *two = answer_for(not_a_step, fx.strategy);
  script s = {{malformed, bad_ir, two, right}, {0}, 4, 0, {NULL}, {0}};
  leir_llm *llm = NULL;
  ck_assert_int_eq(leir_llm_new_callback(&llm, scripted, &s, NULL), LEIR_OK);
  vctx vc = verifier_for(src_text);
  leir_llm_propose_options o = LEIR_LLM_PROPOSE_OPTIONS_INIT;
  o.retries = 3;
  leir_llm_result *r = NULL;
  ck_assert_int_eq(leir_llm_propose(llm, vc.v, fx.p, &o, &r), LEIR_OK);
  ck_assert_uint_eq(r->nattempts, 4);
  ck_assert_int_eq(r->attempts[0].reject, LEIR_LLM_MALFORMED);
  ck_assert_int_eq(r->attempts[1].reject, LEIR_LLM_INVALID);
  ck_assert_int_eq(r->attempts[2].reject, LEIR_LLM_NOT_ONE_STEP);
  ck_assert_int_eq(r->attempts[3].reject, LEIR_LLM_ACCEPTED);
  ck_assert_ptr_nonnull(r->program);
  ck_assert_str_eq(r->program_text, fx.right_ir);
  ck_assert_str_eq(r->strategy, fx.strategy);
  ck_assert_str_eq(r->cot, "Reasoning.");
  ck_assert_ptr_nonnull(strstr(r->step, fx.strategy));
  ck_assert_ptr_nonnull(r->report);
  ck_assert_int_eq(r->report->verdict, LEIR_VERDICT_EQUAL);
  /* the first prompt is the Step-TP one; each retry carries the reason */
  ck_assert_ptr_nonnull(strstr(s.last_user[0], "Give the following IR of"));
  ck_assert_ptr_nonnull(strstr(s.last_user[0], src_text));
  ck_assert_ptr_nonnull(strstr(s.last_user[1], "malformed answer"));
  ck_assert_ptr_nonnull(strstr(s.last_user[2], "invalid at 1:"));
  ck_assert_ptr_nonnull(strstr(s.last_user[3], "not one step of"));
  /* system, user, then (assistant, user) per retry */
  ck_assert_uint_eq(s.nmessages[0], 2);
  ck_assert_uint_eq(s.nmessages[3], 8);
  ck_assert_str_eq(leir_llm_reject_name(r->attempts[2].reject), "not-one-step");
  leir_llm_result_free(r);
  vctx_free(&vc);
  leir_llm_free(llm);
  script_free(&s);
  free(right), free(bad_ir), free(two);
}
END_TEST

START_TEST(test_not_equivalent_reason_names_the_element) {
  /* the verifier's reference computes *3: the right step of *2 differs */
  char *right = answer_for(fx.right_ir, fx.strategy);
  script s = {{right, right}, {0}, 2, 0, {NULL}, {0}};
  leir_llm *llm = NULL;
  ck_assert_int_eq(leir_llm_new_callback(&llm, scripted, &s, NULL), LEIR_OK);
  vctx vc = verifier_for("L^{4}_{a=0}L^{8}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c}*3;];");
  leir_llm_propose_options o = LEIR_LLM_PROPOSE_OPTIONS_INIT;
  o.retries = 1;
  o.strategy = fx.strategy;
  leir_llm_result *r = NULL;
  ck_assert_int_eq(leir_llm_propose(llm, vc.v, fx.p, &o, &r), LEIR_OK);
  ck_assert_ptr_null(r->program);
  ck_assert_uint_eq(r->nattempts, 2);
  ck_assert_int_eq(r->attempts[0].reject, LEIR_LLM_NOT_EQUIVALENT);
  ck_assert_msg(strstr(r->attempts[0].reason, "not numerically equivalent: output C[") != NULL,
                "%s", r->attempts[0].reason);
  ck_assert_ptr_nonnull(strstr(s.last_user[1], "not numerically equivalent"));
  /* the prompt named the strategy asked for */
  ck_assert_ptr_nonnull(strstr(s.last_user[0], "Apply exactly one step of the strategy"));
  leir_llm_result_free(r);
  vctx_free(&vc);
  leir_llm_free(llm);
  script_free(&s);
  free(right);
}
END_TEST

START_TEST(test_wrong_and_unknown_strategy_and_same_program) {
  char *other = answer_for(fx.right_ir, "loop_fusion");
  char *unknown = answer_for(fx.right_ir, "make it faster");
  char *same = answer_for(src_text, fx.strategy);
  script s = {{other, unknown, same}, {0}, 3, 0, {NULL}, {0}};
  leir_llm *llm = NULL;
  ck_assert_int_eq(leir_llm_new_callback(&llm, scripted, &s, NULL), LEIR_OK);
  leir_llm_propose_options o = LEIR_LLM_PROPOSE_OPTIONS_INIT;
  o.retries = 2;
  o.strategy = fx.strategy;
  leir_llm_result *r = NULL;
  /* no verifier: ground only */
  ck_assert_int_eq(leir_llm_propose(llm, NULL, fx.p, &o, &r), LEIR_OK);
  ck_assert_uint_eq(r->nattempts, 3);
  ck_assert_int_eq(r->attempts[0].reject,
                   strcmp(fx.strategy, "loop_fusion") ? LEIR_LLM_WRONG_STRATEGY : LEIR_LLM_ACCEPTED);
  ck_assert_int_eq(r->attempts[1].reject, LEIR_LLM_UNKNOWN_STRATEGY);
  ck_assert_int_eq(r->attempts[2].reject, LEIR_LLM_SAME);
  ck_assert_ptr_null(r->program);
  leir_llm_result_free(r);
  leir_llm_free(llm);
  script_free(&s);
  free(other), free(unknown), free(same);
}
END_TEST

START_TEST(test_program_without_signature) {
  /* the signature is inferred, for the prompt and for the answer alike */
  leir_program *p = test_parse(src_text);
  char *right = answer_for(fx.right_ir, fx.strategy);
  script s = {{right}, {0}, 1, 0, {NULL}, {0}};
  leir_llm *llm = NULL;
  ck_assert_int_eq(leir_llm_new_callback(&llm, scripted, &s, NULL), LEIR_OK);
  leir_llm_result *r = NULL;
  ck_assert_int_eq(leir_llm_propose(llm, NULL, p, NULL, &r), LEIR_OK);
  ck_assert_int_eq(r->attempts[0].reject, LEIR_LLM_ACCEPTED);
  ck_assert_ptr_nonnull(strstr(s.last_user[0], "'A' with the dtype torch.float32 and shape [4, 8]"));
  leir_llm_result_free(r);
  leir_llm_free(llm);
  leir_program_free(p);
  script_free(&s);
  free(right);
}
END_TEST

START_TEST(test_hostile_callback_answers) {
  size_t big = (size_t)2 << 20;
  char *huge = malloc(big + 1);
  memset(huge, '<', big);
  huge[big] = '\0';
  char bin[300];
  for (size_t i = 0; i < sizeof bin; i++) bin[i] = (char)(i * 37);
  char *right = answer_for(fx.right_ir, fx.strategy);
  size_t rl = strlen(right);
  script s = {{huge, bin, right, right}, {big, sizeof bin, rl / 2, 0}, 4, 0, {NULL}, {0}};
  leir_llm *llm = NULL;
  leir_llm_options lo = LEIR_LLM_OPTIONS_INIT;
  ck_assert_int_eq(leir_llm_new_callback(&llm, scripted, &s, &lo), LEIR_OK);
  leir_llm_propose_options o = LEIR_LLM_PROPOSE_OPTIONS_INIT;
  o.retries = 3;
  leir_llm_result *r = NULL;
  ck_assert_int_eq(leir_llm_propose(llm, NULL, fx.p, &o, &r), LEIR_OK);
  ck_assert_uint_eq(r->nattempts, 4);
  ck_assert_int_eq(r->attempts[0].reject, LEIR_LLM_NO_ANSWER);
  ck_assert_int_eq(r->attempts[0].status, LEIR_ERR_LIMIT);
  ck_assert_int_eq(r->attempts[1].reject, LEIR_LLM_MALFORMED);
  /* truncated in the middle of the IR */
  ck_assert(r->attempts[2].reject == LEIR_LLM_MALFORMED || r->attempts[2].reject == LEIR_LLM_INVALID);
  ck_assert_int_eq(r->attempts[3].reject, LEIR_LLM_ACCEPTED);
  leir_llm_result_free(r);
  leir_llm_free(llm);
  script_free(&s);
  free(huge), free(right);
}
END_TEST

START_TEST(test_arguments_and_options) {
  leir_llm *llm = NULL;
  ck_assert_int_eq(leir_llm_new_callback(&llm, NULL, NULL, NULL), LEIR_ERR_ARGUMENT);
  const char *empty[] = {NULL};
  ck_assert_int_eq(leir_llm_new_command(&llm, empty, NULL), LEIR_ERR_ARGUMENT);
  leir_llm_options lo;
  ck_assert_int_eq(leir_llm_options_init(&lo, sizeof lo), LEIR_OK);
  ck_assert(lo.timeout_s > 0 && lo.max_answer_bytes == ((size_t)1 << 20));
  lo.timeout_s = 0;
  script s = {{""}, {0}, 0, 0, {NULL}, {0}};
  ck_assert_int_eq(leir_llm_new_callback(&llm, scripted, &s, &lo), LEIR_ERR_ARGUMENT);
  leir_llm_propose_options po;
  ck_assert_int_eq(leir_llm_propose_options_init(&po, sizeof po), LEIR_OK);
  ck_assert_uint_eq(po.retries, 3);
  ck_assert_int_eq(leir_llm_new_callback(&llm, scripted, &s, NULL), LEIR_OK);
  po.strategy = "no_such_strategy";
  leir_llm_result *r = NULL;
  ck_assert_int_eq(leir_llm_propose(llm, NULL, fx.p, &po, &r), LEIR_ERR_NOT_FOUND);
  ck_assert_ptr_null(r);
  leir_llm_free(llm);
  leir_llm_free(NULL);
  leir_llm_result_free(NULL);
  ck_assert_ptr_null(leir_llm_reject_name((leir_llm_reject)99));
}
END_TEST

/* ---- the scripted command ----------------------------------------------------------- */

static const char *stub_path(void) {
  const char *p = getenv("LEIR_LLM_STUB");
  ck_assert_msg(p && *p, "LEIR_LLM_STUB is not set (tests/meson.build sets it)");
  return p;
}

static char tmpdir[64];

static void tmp_setup(void) {
  fixture_setup();
  snprintf(tmpdir, sizeof tmpdir, "/tmp/leir-llm-test-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  if (system(cmd) != 0) { /* a stale temporary directory is harmless */
  }
  fixture_teardown();
}

/* Writes a script: `n` lines; an answer line is wrapped as {"content":...}
 * (command) or {"choices":[{"message":{"content":...}}]} (http); lines
 * starting with '@' (llm_stub's misbehaviours) or '{' (raw JSON) are
 * written as they are. */
static const char *write_script(const char *name, const char *const *answers, size_t n, bool http) {
  static char path[256];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  for (size_t i = 0; i < n; i++) {
    if (answers[i][0] == '@' || answers[i][0] == '{') fputs(answers[i], f);
    else {
      fputs(http ? "{\"id\":\"x\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
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

static leir_llm *command_client(const char *script_path, const char *log, double timeout,
                                size_t max_answer) {
  const char *argv[] = {stub_path(), "lines", script_path, log, NULL};
  leir_llm_options lo = LEIR_LLM_OPTIONS_INIT;
  lo.timeout_s = timeout;
  lo.max_answer_bytes = max_answer;
  leir_llm *llm = NULL;
  ck_assert_int_eq(leir_llm_new_command(&llm, argv, &lo), LEIR_OK);
  return llm;
}

START_TEST(test_command_right_after_wrong) {
  char *right = answer_for(fx.right_ir, fx.strategy);
  char *two = answer_for(not_a_step, fx.strategy);
  const char *lines[] = {malformed, two, right};
  const char *sp = write_script("s1", lines, 3, false);
  char log[256];
  snprintf(log, sizeof log, "%s/log1", tmpdir);
  leir_llm *llm = command_client(sp, log, 60, 1 << 20);
  vctx vc = verifier_for(src_text);
  leir_llm_result *r = NULL;
  ck_assert_int_eq(leir_llm_propose(llm, vc.v, fx.p, NULL, &r), LEIR_OK);
  ck_assert_uint_eq(r->nattempts, 3);
  ck_assert_int_eq(r->attempts[0].reject, LEIR_LLM_MALFORMED);
  ck_assert_int_eq(r->attempts[1].reject, LEIR_LLM_NOT_ONE_STEP);
  ck_assert_int_eq(r->attempts[2].reject, LEIR_LLM_ACCEPTED);
  ck_assert_str_eq(r->program_text, fx.right_ir);
  leir_llm_result_free(r);
  vctx_free(&vc);
  leir_llm_free(llm);
  /* the command saw three JSON requests, the last with both reasons */
  size_t len = 0;
  char *got = test_read_file(log, &len);
  int nreq = 0;
  for (char *q = got; (q = strstr(q, "{\"messages\":[")); q++) nreq++;
  ck_assert_int_eq(nreq, 3);
  char *last = strrchr(got, '\n');
  *last = '\0';
  last = strrchr(got, '\n');
  ck_assert_ptr_nonnull(last);
  ck_assert_ptr_nonnull(strstr(last, "malformed answer"));
  ck_assert_ptr_nonnull(strstr(last, "not one step of"));
  ck_assert_ptr_nonnull(strstr(got, "\"role\":\"system\""));
  free(got);
  free(right), free(two);
}
END_TEST

/* One request to a command whose script is `line`; the status. */
static leir_status command_once(const char *line, double timeout, size_t max_answer, char **msg) {
  const char *lines[] = {line};
  const char *sp = write_script("h", lines, 1, false);
  char log[256];
  snprintf(log, sizeof log, "%s/hlog", tmpdir);
  leir_llm *llm = command_client(sp, log, timeout, max_answer);
  leir_llm_message m[1] = {{"user", "hello"}};
  char *a = NULL;
  leir_status st = leir_llm_complete(llm, m, 1, &a, NULL);
  *msg = strdup(leir_error_last()->message);
  if (st == LEIR_OK) {
    free(*msg);
    *msg = strdup(a);
  }
  leir_free(a);
  leir_llm_free(llm); /* kills a command that still runs */
  return st;
}

START_TEST(test_hostile_commands) {
  char *msg = NULL;
  ck_assert_int_eq(command_once("{\"content\":\"fine\"}", 30, 1000, &msg), LEIR_OK);
  ck_assert_str_eq(msg, "fine");
  free(msg);
  /* slow: killed at the timeout */
  ck_assert_int_eq(command_once("@SLEEP", 0.5, 1000, &msg), LEIR_ERR_TIMEOUT);
  free(msg);
  /* bytes without end: stopped at the bound */
  ck_assert_int_eq(command_once("@HUGE", 30, 1000, &msg), LEIR_ERR_LIMIT);
  free(msg);
  /* binary: not JSON */
  ck_assert_int_eq(command_once("@BINARY", 30, 1000, &msg), LEIR_ERR_PARSE);
  free(msg);
  /* half a line, then gone */
  ck_assert_int_eq(command_once("@HALF", 30, 1000, &msg), LEIR_ERR_IO);
  free(msg);
  ck_assert_int_eq(command_once("@EXIT", 30, 1000, &msg), LEIR_ERR_IO);
  free(msg);
  /* an answer over max_answer_bytes (but within the line bound) */
  char big[3000];
  memset(big, 'a', sizeof big);
  memcpy(big, "{\"content\":\"", 12);
  memcpy(big + sizeof big - 3, "\"}", 3);
  ck_assert_int_eq(command_once(big, 30, 1000, &msg), LEIR_ERR_LIMIT);
  free(msg);
  /* the model's own error */
  ck_assert_int_eq(command_once("{\"error\":\"model not loaded\"}", 30, 1000, &msg), LEIR_ERR_IO);
  ck_assert_ptr_nonnull(strstr(msg, "model not loaded"));
  free(msg);
  /* a command that does not exist */
  const char *argv[] = {"/nonexistent/leir-llm-model", NULL};
  leir_llm *llm = NULL;
  ck_assert_int_eq(leir_llm_new_command(&llm, argv, NULL), LEIR_OK);
  leir_llm_message m[1] = {{"user", "hello"}};
  char *a = NULL;
  ck_assert_int_eq(leir_llm_complete(llm, m, 1, &a, NULL), LEIR_ERR_IO);
  leir_llm_free(llm);
}
END_TEST

START_TEST(test_command_restarts_after_a_timeout) {
  /* the script restarts with the process: SLEEP, then (new process) SLEEP
   * again; each request ends at the timeout and the client stays usable */
  const char *lines[] = {"@SLEEP"};
  const char *sp = write_script("s3", lines, 1, false);
  char log[256];
  snprintf(log, sizeof log, "%s/log3", tmpdir);
  leir_llm *llm = command_client(sp, log, 0.3, 1000);
  leir_llm_propose_options o = LEIR_LLM_PROPOSE_OPTIONS_INIT;
  o.retries = 2;
  leir_llm_result *r = NULL;
  ck_assert_int_eq(leir_llm_propose(llm, NULL, fx.p, &o, &r), LEIR_OK);
  ck_assert_uint_eq(r->nattempts, 3);
  for (size_t k = 0; k < 3; k++) {
    ck_assert_int_eq(r->attempts[k].reject, LEIR_LLM_NO_ANSWER);
    ck_assert_int_eq(r->attempts[k].status, LEIR_ERR_TIMEOUT);
  }
  leir_llm_result_free(r);
  leir_llm_free(llm);
  size_t len = 0;
  char *got = test_read_file(log, &len);
  int nreq = 0;
  for (char *q = got; (q = strstr(q, "{\"messages\":[")); q++) nreq++;
  ck_assert_int_eq(nreq, 3); /* three processes, one request each */
  free(got);
}
END_TEST

/* ---- the HTTP endpoint ------------------------------------------------------------------ */

static pid_t server_pid;

/* Starts the HTTP stub on `script`; returns the endpoint URL (static). */
static const char *start_server(const char *script, const char *log) {
  char portfile[256];
  snprintf(portfile, sizeof portfile, "%s/port", tmpdir);
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

static leir_llm *endpoint_client(const char *url, double timeout, size_t max_answer) {
  leir_llm_options lo = LEIR_LLM_OPTIONS_INIT;
  lo.timeout_s = timeout;
  lo.max_answer_bytes = max_answer;
  lo.model = "qwen-step-tp";
  lo.api_key_env = "LEIR_TEST_LLM_KEY";
  lo.temperature = 0.5;
  lo.max_tokens = 512;
  leir_llm *llm = NULL;
  leir_status st = leir_llm_new_endpoint(&llm, url, &lo);
  if (st == LEIR_ERR_UNSUPPORTED) return NULL;
  ck_assert_int_eq(st, LEIR_OK);
  return llm;
}

START_TEST(test_endpoint_right_after_malformed) {
  char *right = answer_for(fx.right_ir, fx.strategy);
  const char *lines[] = {malformed, right};
  const char *sp = write_script("e1", lines, 2, true);
  char log[256];
  snprintf(log, sizeof log, "%s/elog", tmpdir);
  const char *url = start_server(sp, log);
  leir_llm *llm = endpoint_client(url, 60, 1 << 20);
  if (!llm) {
    fprintf(stderr, "test_llm: skipping the endpoint: built without libcurl\n");
    stop_server();
    free(right);
    return;
  }
  vctx vc = verifier_for(src_text);
  leir_llm_result *r = NULL;
  ck_assert_int_eq(leir_llm_propose(llm, vc.v, fx.p, NULL, &r), LEIR_OK);
  ck_assert_uint_eq(r->nattempts, 2);
  ck_assert_int_eq(r->attempts[0].reject, LEIR_LLM_MALFORMED);
  ck_assert_int_eq(r->attempts[1].reject, LEIR_LLM_ACCEPTED);
  ck_assert_str_eq(r->program_text, fx.right_ir);
  leir_llm_result_free(r);
  vctx_free(&vc);
  leir_llm_free(llm);
  stop_server();
  size_t len = 0;
  char *got = test_read_file(log, &len);
  ck_assert_ptr_nonnull(strstr(got, "\"model\":\"qwen-step-tp\""));
  ck_assert_ptr_nonnull(strstr(got, "\"max_tokens\":512"));
  ck_assert_ptr_nonnull(strstr(got, "\"temperature\":0.5"));
  ck_assert_ptr_nonnull(strstr(got, "malformed answer"));
  free(got);
  free(right);
}
END_TEST

START_TEST(test_hostile_endpoint) {
  const char *lines[] = {"{\"choices\":[{\"message\":{\"content\":\"ok\"}}]}",
                         "@STATUS500",
                         "@BINARY",
                         "{\"choices\":[]}",
                         "@HUGE",
                         "@HALF",
                         "@SLEEP"};
  const char *sp = write_script("e2", lines, 7, true);
  char log[256];
  snprintf(log, sizeof log, "%s/elog2", tmpdir);
  const char *url = start_server(sp, log);
  leir_llm *llm = endpoint_client(url, 2, 1000);
  if (!llm) {
    stop_server();
    return;
  }
  static const leir_status want[] = {LEIR_OK,        LEIR_ERR_IO,    LEIR_ERR_PARSE, LEIR_ERR_PARSE,
                                     LEIR_ERR_LIMIT, LEIR_ERR_IO,    LEIR_ERR_TIMEOUT};
  for (size_t k = 0; k < 7; k++) {
    leir_llm_message m[1] = {{"user", "hello"}};
    char *a = NULL;
    leir_status st = leir_llm_complete(llm, m, 1, &a, NULL);
    ck_assert_msg(st == want[k], "response %zu: %s, wanted %s (%s)", k, leir_status_name(st),
                  leir_status_name(want[k]), leir_error_last()->message);
    if (k == 0) ck_assert_str_eq(a, "ok");
    if (k == 1) ck_assert_ptr_nonnull(strstr(leir_error_last()->message, "HTTP status 500"));
    leir_free(a);
  }
  leir_llm_free(llm);
  stop_server();
  /* nothing listening: an I/O error, not a hang */
  llm = endpoint_client(url, 2, 1000);
  leir_llm_message m[1] = {{"user", "hello"}};
  char *a = NULL;
  ck_assert_int_eq(leir_llm_complete(llm, m, 1, &a, NULL), LEIR_ERR_IO);
  leir_llm_free(llm);
  leir_status fst = leir_llm_new_endpoint(&llm, "ftp://x", NULL);
  ck_assert(fst == LEIR_ERR_ARGUMENT || fst == LEIR_ERR_UNSUPPORTED);
}
END_TEST

static Suite *llm_suite(void) {
  Suite *s = suite_create("llm");
  TCase *cb = tcase_create("callback");
  tcase_add_checked_fixture(cb, fixture_setup, fixture_teardown);
  tcase_add_test(cb, test_callback_retries_with_reasons_until_right);
  tcase_add_test(cb, test_not_equivalent_reason_names_the_element);
  tcase_add_test(cb, test_wrong_and_unknown_strategy_and_same_program);
  tcase_add_test(cb, test_hostile_callback_answers);
  tcase_add_test(cb, test_program_without_signature);
  tcase_add_test(cb, test_arguments_and_options);
  suite_add_tcase(s, cb);
  TCase *cmd = tcase_create("command");
  tcase_set_timeout(cmd, 120);
  tcase_add_checked_fixture(cmd, tmp_setup, tmp_teardown);
  tcase_add_test(cmd, test_command_right_after_wrong);
  tcase_add_test(cmd, test_hostile_commands);
  tcase_add_test(cmd, test_command_restarts_after_a_timeout);
  suite_add_tcase(s, cmd);
  TCase *ep = tcase_create("endpoint");
  tcase_set_timeout(ep, 120);
  tcase_add_checked_fixture(ep, tmp_setup, tmp_teardown);
  tcase_add_test(ep, test_endpoint_right_after_malformed);
  tcase_add_test(ep, test_hostile_endpoint);
  suite_add_tcase(s, ep);
  return s;
}

int main(void) { return test_run_suite(llm_suite()); }
