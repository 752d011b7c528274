/*
 * libFuzzer target over LLM answers (include/leir/experimental/llm.h): the
 * input is what a model answered (any bytes). A callback client returns it
 * to leir_llm_propose for a fixed program (no verifier: parse, check and
 * ground). Properties: the loop returns LEIR_OK with exactly one attempt
 * whose rejection has a name; an accepted attempt has a program that is
 * one step of the named strategy (grounding it again finds the step) and
 * differs from the given program; a rejected one has a reason.
 */
#define LEIR_EXPERIMENTAL 1
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "leir/experimental/llm.h"
#include "leir/leir.h"

#define REQUIRE(cond)     \
  do {                    \
    if (!(cond)) abort(); \
  } while (0)

typedef struct input {
  const uint8_t *data;
  size_t size;
} input;

static leir_status answer(void *payload, const leir_llm_message *m, size_t n, char **out,
                          size_t *len) {
  (void)m, (void)n;
  const input *in = payload;
  *out = malloc(in->size + 1);
  if (!*out) return LEIR_ERR_NOMEM;
  if (in->size) memcpy(*out, in->data, in->size);
  (*out)[in->size] = '\0';
  *len = in->size;
  return LEIR_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static leir_program *p;
  if (!p) {
    const char *t = "L^{4}_{a=0}L^{8}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c}*2;];";
    REQUIRE(leir_program_parse(&p, t, strlen(t), NULL) == LEIR_OK);
    REQUIRE(leir_program_infer_signature(p) == LEIR_OK);
  }
  input in = {data, size};
  leir_llm *llm = NULL;
  REQUIRE(leir_llm_new_callback(&llm, answer, &in, NULL) == LEIR_OK);
  leir_llm_propose_options o = LEIR_LLM_PROPOSE_OPTIONS_INIT;
  o.retries = 0;
  leir_llm_result *r = NULL;
  REQUIRE(leir_llm_propose(llm, NULL, p, &o, &r) == LEIR_OK);
  REQUIRE(r->nattempts == 1);
  REQUIRE(leir_llm_reject_name(r->attempts[0].reject) != NULL);
  if (r->attempts[0].reject == LEIR_LLM_ACCEPTED) {
    REQUIRE(r->program != NULL);
    REQUIRE(leir_program_hash_alpha(r->program) != leir_program_hash_alpha(p));
    size_t s = 0;
    REQUIRE(leir_strategy_find(r->strategy, &s) == LEIR_OK);
    leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
    co.strategy = (int32_t)s;
    leir_candidates *g = NULL;
    REQUIRE(leir_ground(&g, p, r->program, &co) == LEIR_OK);
    REQUIRE(leir_candidates_count(g) > 0);
    leir_candidates_free(g);
  } else {
    REQUIRE(r->program == NULL);
    REQUIRE(r->attempts[0].reason[0] != '\0');
  }
  leir_llm_result_free(r);
  leir_llm_free(llm);
  return 0;
}
