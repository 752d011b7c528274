/* The judgement of one transformed IR of an answer (docs/dataset.md, "leir
 * eval"). Programs are compared by structure (leir__program_hash_structure:
 * up to fresh names and parentheses that decide nothing), never by text, so
 * a prompt's own program with a loop variable or an intermediate renamed,
 * or parentheses added, is no new program: it does not pass (issue 32.3).
 *
 * The verdict is reached under the class of the step the answer is: the
 * matching label's, else the grounded step's (a reassociating step is
 * judged against the f64 truth, verification.md "Candidate classes"), else
 * the per-element tolerance of the output dtype. */
#include <stdio.h>
#include <string.h>

#include "eval.h"
#include "ir.h"

void leir__ev_parse(const leir__ev_prompt *r, const leir__answer_item *it, leir_program **out, int *sig_ok,
                    leir__ev_item *res) {
  memset(res, 0, sizeof *res);
  res->verdict = "";
  *out = NULL;
  *sig_ok = 0;
  char norm[64];
  size_t sidx;
  leir__strategy_name_normalize(it->strategies[0], norm, sizeof norm);
  snprintf(res->strategy, sizeof res->strategy, "%s",
           leir_strategy_find(norm, &sidx) == LEIR_OK ? norm : "(unknown strategy)");
  leir_parse_options po = LEIR_PARSE_OPTIONS_INIT;
  po.flags = LEIR_PARSE_LENIENT;
  po.max_input_bytes = (uint64_t)16 << 20;
  leir_program *c = NULL;
  if (leir_program_parse(&c, it->ir, it->ir_len, &po) != LEIR_OK) {
    snprintf(res->reason, sizeof res->reason, "ir.parse");
    snprintf(res->message, sizeof res->message, "%s", leir_error_last()->message);
    return;
  }
  /* the known variables of the prompt, as the prompt demands; an answer
   * that does not take them is still compared (with its own inferred ones) */
  *sig_ok = leir__ev_set_signature(r, c) == LEIR_OK && leir_program_check(c, NULL, NULL) == LEIR_OK;
  char msg[200];
  snprintf(msg, sizeof msg, "%s", leir_error_last()->message);
  res->hash = leir__program_hash_structure(c);
  if (!*sig_ok) snprintf(res->message, sizeof res->message, "%s", msg);
  *out = c;
}

/* Is the answer one step of a strategy it names? *reassoc: that step's
 * exactness (its class). A verified label of that strategy with the same
 * structure counts too: leir_ground compares results by alpha hash, which
 * sees the parentheses a strategy writes (compute_inline wraps what it
 * inlines) and an answer leaves out. */
static int grounded(const leir__ev_prompt *r, const leir__answer_item *it, const leir_program *c,
                    const leir__ev_item *res, int *reassoc) {
  for (size_t k = 0; k < it->n_strategies; k++) {
    char nm[64];
    size_t si;
    leir__strategy_name_normalize(it->strategies[k], nm, sizeof nm);
    if (leir_strategy_find(nm, &si) != LEIR_OK) continue;
    for (size_t i = 0; i < r->nlabels; i++)
      if (r->labels[i].hash == res->hash && !strcmp(r->labels[i].strategy, nm)) {
        *reassoc = r->labels[i].reassociating;
        return 1;
      }
    leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
    co.strategy = (int32_t)si;
    leir_candidates *g = NULL;
    int found = leir_ground(&g, r->program, c, &co) == LEIR_OK && leir_candidates_count(g) > 0;
    if (found) *reassoc = leir_candidates_exactness(g, 0) != LEIR_EXACT;
    leir_candidates_free(g);
    if (found) return 1;
  }
  return 0;
}

/* The reference's pass rule (leir-reference.md §5: rtol <= 5e-3 or atol <=
 * 1e-7 or MSE <= 1e-5, looser for f16 and f32), which its equal_pass
 * counter applies whether or not the answer differs from the prompt. */
static int reference_pass(leir_eval *ev, leir__ev_prompt *r, const leir_program *c, leir_verdict v) {
  if (v == LEIR_VERDICT_EQUAL) return 1; /* no error at all */
  if (v != LEIR_VERDICT_CLOSE && v != LEIR_VERDICT_MISMATCH) return 0;
  leir_verifier *ver = NULL;
  leir_verify_report *rep = NULL;
  int pass = leir__ev_ref_verifier(ev, r, &ver) == LEIR_OK &&
             leir_verifier_judge(ver, c, LEIR_VERIFY_CLASS_ANY, &rep) == LEIR_OK && rep &&
             (rep->verdict == LEIR_VERDICT_EQUAL || rep->verdict == LEIR_VERDICT_CLOSE);
  leir_verify_report_free(rep);
  return pass;
}

void leir__ev_judge(leir_eval *ev, leir__ev_prompt *r, const leir__answer_item *it, leir_program *c,
                    int sig_ok, leir__ev_item *res) {
  res->different = res->hash != r->hash;
  int reassoc = 0, have_class = 0;
  for (size_t i = 0; i < r->nlabels && !res->label; i++)
    if (r->labels[i].hash == res->hash) {
      res->label = 1;
      snprintf(res->label_strategy, sizeof res->label_strategy, "%s", r->labels[i].strategy);
      reassoc = r->labels[i].reassociating;
      have_class = 1;
    }
  leir_program_cost c1, c0;
  if (!sig_ok) {
    snprintf(res->reason, sizeof res->reason, "ir.invalid");
    res->verdict = "INVALID";
    leir_program_free(c);
    return;
  }
  if (leir_program_cost_get(c, &c1) != LEIR_OK || leir_program_cost_get(r->program, &c0) != LEIR_OK ||
      c1.evaluations > 16 * c0.evaluations + 1000000) {
    snprintf(res->reason, sizeof res->reason, "ir.too_costly");
    snprintf(res->message, sizeof res->message, "the program needs far more evaluations than the prompt's");
    leir_program_free(c);
    return;
  }
  int g_reassoc = 0;
  res->grounded = res->different && grounded(r, it, c, res, &g_reassoc);
  if (!have_class && res->grounded) reassoc = g_reassoc;
  res->vclass = reassoc ? LEIR_VERIFY_CLASS_REASSOCIATING : LEIR_VERIFY_CLASS_ANY;
  leir_verify_report *rep = NULL;
  if (leir_verifier_judge(r->verifier, c, res->vclass, &rep) != LEIR_OK || !rep) {
    snprintf(res->reason, sizeof res->reason, "verify.error");
    snprintf(res->message, sizeof res->message, "%s", leir_error_last()->message);
  } else {
    leir_verdict v = rep->verdict;
    res->verdict = leir_verdict_name(v);
    int ok = v == LEIR_VERDICT_EQUAL || v == LEIR_VERDICT_CLOSE;
    res->pass[LEIR__EV_EQUAL] = res->different && v == LEIR_VERDICT_EQUAL;
    res->pass[LEIR__EV_CLOSE] = res->different && ok;
    res->pass[LEIR__EV_REFERENCE] = reference_pass(ev, r, c, v);
    if (!res->different) {
      snprintf(res->reason, sizeof res->reason, "ir.unchanged");
      snprintf(res->message, sizeof res->message, "the answer is the prompt's program (up to names and parentheses)");
    } else if (!ok) {
      snprintf(res->reason, sizeof res->reason, "verify.%s", leir_verdict_name(v));
      snprintf(res->message, sizeof res->message, "%s", rep->message ? rep->message : "");
    }
    leir_verify_report_free(rep);
  }
  if (!res->reason[0] && !strcmp(res->strategy, "(unknown strategy)")) {
    snprintf(res->reason, sizeof res->reason, "strategy.unknown");
    snprintf(res->message, sizeof res->message, "no strategy named '%.60s'", it->strategies[0]);
  } else if (!res->reason[0] && !res->grounded) {
    snprintf(res->reason, sizeof res->reason, "strategy.not_grounded");
    snprintf(res->message, sizeof res->message, "the answer is not one step of %.60s", res->strategy);
  }
  leir_program_free(c);
}
