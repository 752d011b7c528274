/*
 * libFuzzer target for strategy steps, the other input an LLM writes: the
 * first input byte picks one of a few programs (below), the rest is a step
 * in text or JSON form. Besides crashes, leaks and hangs, it checks what
 * must hold for every step:
 *   - a rejected step is a clean status with a last error and no object;
 *   - an accepted step prints canonically: its text and its JSON both parse
 *     back to the same text;
 *   - applying it to the program either reports a clean status or gives a
 *     program that passes its checks and from which leir_ground finds a step
 *     of the same strategy again (the canonical one: a loop_reorder pair
 *     given inner loop first is accepted, and grounds as outer first); the
 *     chain of thought builds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "leir/leir.h"

#define REQUIRE(cond)     \
  do {                    \
    if (!(cond)) abort(); \
  } while (0)

/* Small programs with the shapes the strategies look for: bound and serial
 * loops, reductions, several nests, a guard, a nested nest, an indirect
 * index, a shared intermediate. */
static const char *const programs[] = {
    "B^{16}_{tx=0}L^{12}_{a=0}[C^{f64,g}_{tx,a}=max(A^{f64,g}_{tx,a},0);];",
    "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];"
    "B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];"
    "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];",
    "B^{8}_{tx=0}L^{5}_{a=0}L^{10}_{c=0}[C^{f32,g}_{tx,a}=C^{f32,g}_{tx,a}+A^{f32,g}_{tx,c}*H^{f32,g}_{a,c};];"
    "B^{8}_{tx=0}L^{5}_{a=0}[D^{f32,g}_{tx,a}=min(C^{f32,g}_{tx,a},G^{f32,g});];",
    "B^{12}_{tx=0}L^{2}_{c=0}L^{6}_{d=0}L^{3}_{f=0}L^{3}_{g=0}[D^{f64,g}_{tx,c,d}=D^{f64,g}_{tx,c,d}+"
    "A^{f64,g}_{tx,c*3+f,d*3+g};];B^{12}_{tx=0}L^{2}_{c=0}L^{6}_{d=0}[C^{f64,g}_{tx,c,d}="
    "D^{f64,g}_{tx,c,d}/((min(2,7-c*3)+1)*(min(2,19-d*3)+1));];",
    "B^{4}_{tx=0}L^{8}_{a=0}[S^{f32,s}_{tx,a}=A^{f32,g}_{tx,a}*2;L^{8}_{c=0}[C^{f32,g}_{tx,a}="
    "C^{f32,g}_{tx,a}+S^{f32,s}_{tx,c};];];",
    /* an indirect index needs a signature: a program file */
    "inputs:\n  W: {dtype: f32, shape: [6, 4]}\n  I: {dtype: i32, shape: [6]}\n"
    "outputs:\n  C: {dtype: f32, shape: [6, 4]}\n"
    "leir: B^{6}_{tx=0}L^{4}_{a=0}[C^{f32,g}_{tx,a}=if_then_else(tx+a<7,W^{f32,g}_{I^{i32,g}_{tx},a},0);];\n",
};
#define NPROGRAMS (sizeof programs / sizeof programs[0])

static leir_program *parsed[NPROGRAMS];

static const leir_program *program(uint8_t pick) {
  size_t i = pick % NPROGRAMS;
  if (!parsed[i]) {
    const char *t = programs[i];
    if (strncmp(t, "inputs:", 7) == 0) {
      REQUIRE(leir_program_parse_yaml(&parsed[i], t, strlen(t), NULL) == LEIR_OK);
    } else {
      REQUIRE(leir_program_parse(&parsed[i], t, strlen(t), NULL) == LEIR_OK);
      REQUIRE(leir_program_infer_signature(parsed[i]) == LEIR_OK);
    }
    REQUIRE(leir_program_check(parsed[i], NULL, NULL) == LEIR_OK);
  }
  return parsed[i];
}

static void same_step(const leir_step *s, const char *text, size_t len) {
  leir_step *again = NULL;
  REQUIRE(leir_step_parse(&again, text, len) == LEIR_OK);
  REQUIRE(strcmp(leir_step_text(again), leir_step_text(s)) == 0);
  REQUIRE(leir_step_strategy(again) == leir_step_strategy(s));
  leir_step_free(again);
}

static void applied(const leir_program *p, const leir_step *s, leir_program *q) {
  REQUIRE(leir_program_check(q, NULL, NULL) == LEIR_OK);
  leir_candidates *g = NULL;
  REQUIRE(leir_ground(&g, p, q, NULL) == LEIR_OK);
  int found = 0;
  for (size_t i = 0; i < leir_candidates_count(g) && !found; i++)
    found = leir_step_strategy(leir_candidates_step(g, i)) == leir_step_strategy(s);
  REQUIRE(found);
  leir_candidates_free(g);
  char *cot = NULL;
  size_t cot_len = 0;
  REQUIRE(leir_step_cot(&cot, &cot_len, p, s) == LEIR_OK);
  REQUIRE(cot_len > 0 && strlen(cot) == cot_len);
  leir_free(cot);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  const leir_program *p = program(data[0]);
  leir_step *s = NULL;
  leir_status st = leir_step_parse(&s, (const char *)data + 1, size - 1);
  if (st != LEIR_OK) {
    REQUIRE(s == NULL);
    REQUIRE(st == LEIR_ERR_PARSE || st == LEIR_ERR_NOT_FOUND || st == LEIR_ERR_ARGUMENT ||
            st == LEIR_ERR_LIMIT);
    const leir_error *e = leir_error_last();
    REQUIRE(e->status == st && e->message[0]);
    return 0;
  }
  const char *text = leir_step_text(s);
  same_step(s, text, strlen(text));
  char *json = NULL;
  size_t json_len = 0;
  REQUIRE(leir_step_to_json(s, &json, &json_len) == LEIR_OK);
  same_step(s, json, json_len);
  leir_free(json);

  leir_program *q = NULL;
  leir_exactness cls;
  st = leir_step_apply(&q, p, s, &cls);
  if (st == LEIR_OK)
    applied(p, s, q);
  else
    REQUIRE(q == NULL && (st == LEIR_ERR_NOT_APPLICABLE || st == LEIR_ERR_UNSUPPORTED ||
                          st == LEIR_ERR_LIMIT));
  leir_program_free(q);
  leir_step_free(s);
  return 0;
}
