/* Where a policy puts its proposals (leir_search_propose_*). */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#include "error.h"

/* ---- proposals ---------------------------------------------------------------- */

static leir_status proposals_push(leir_search_proposals *out, int kind, size_t index,
                                  const char *text, size_t len, const char *strategy,
                                  const char *cot) {
  if (!out) return leir__error_arg("out", "the proposals are NULL");
  if (out->n == out->cap) {
    size_t ncap = out->cap ? out->cap * 2 : 8;
    proposal *ni = realloc(out->items, ncap * sizeof *ni);
    if (!ni) return leir__error_nomem();
    out->items = ni;
    out->cap = ncap;
  }
  proposal *p = &out->items[out->n];
  memset(p, 0, sizeof *p);
  p->kind = kind;
  p->index = index;
  if (text) {
    p->text = malloc(len + 1);
    if (!p->text) return leir__error_nomem();
    memcpy(p->text, text, len);
    p->text[len] = 0;
  }
  p->strategy = strategy ? strdup(strategy) : NULL;
  p->cot = cot ? strdup(cot) : NULL;
  out->n++;
  return LEIR_OK;
}

leir_status leir_search_propose_candidate(leir_search_proposals *out, size_t index,
                                          const char *cot) {
  return proposals_push(out, 0, index, NULL, 0, NULL, cot);
}
leir_status leir_search_propose_step(leir_search_proposals *out, const char *step, size_t len,
                                     const char *cot) {
  if (!step) return leir__error_arg("step", "the step is NULL");
  return proposals_push(out, 1, 0, step, len, NULL, cot);
}
leir_status leir_search_propose_program(leir_search_proposals *out, const char *text, size_t len,
                                        const char *strategy, const char *cot) {
  if (!text) return leir__error_arg("text", "the program text is NULL");
  return proposals_push(out, 2, 0, text, len, strategy, cot);
}

/* An answer of an external policy that could not be read as a proposal
 * (search/policy_llm.c): recorded as MALFORMED with `reason`, which goes
 * back to the policy like any other rejection. */
leir_status leir__search_propose_unreadable(leir_search_proposals *out, const char *text,
                                            size_t len, const char *reason) {
  if (!text || !reason) return leir__error_arg("text", "the text or reason is NULL");
  return proposals_push(out, 3, 0, text, len, reason, NULL);
}

leir_status leir_search_propose_macro(leir_search_proposals *out, size_t index,
                                      const char *follow, const char *cot) {
  if (!follow) return leir__error_arg("follow", "the follow-up step is NULL");
  return proposals_push(out, 4, index, follow, strlen(follow), NULL, cot);
}

leir_status leir_search_propose_chain(leir_search_proposals *out, const char *steps,
                                      const char *cot) {
  if (!steps) return leir__error_arg("steps", "the steps are NULL");
  return proposals_push(out, 5, 0, steps, strlen(steps), NULL, cot);
}

void leir__search_proposals_clear(leir_search_proposals *ps) {
  for (size_t i = 0; i < ps->n; i++) {
    free(ps->items[i].text);
    free(ps->items[i].strategy);
    free(ps->items[i].cot);
  }
  ps->n = 0;
  free(ps->raw);
  ps->raw = NULL;
}

leir_status leir__search_proposals_raw(leir_search_proposals *out, const char *text, size_t len) {
  if (!out || !text) return leir__error_arg("text", "the proposals or text is NULL");
  char *copy = strndup(text, len);
  if (!copy) return leir__error_nomem();
  free(out->raw);
  out->raw = copy;
  return LEIR_OK;
}
