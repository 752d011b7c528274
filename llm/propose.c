/*
 * The LLM proposal loop (include/leir/experimental/llm.h): Step-TP prompt
 * (dataset/prompt.h) -> answer -> parse (dataset/answer.h) -> ground
 * (leir_ground) -> verify (leir_verifier) -> on failure the reason goes
 * back to the model, for a bounded number of retries.
 */
#define LEIR_EXPERIMENTAL 1
#include "leir/experimental/llm.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "error.h"
#include "llm_internal.h"
#include "options.h"
#include "prompt.h"
#include "strbuf.h"

static const char *const reject_names[] = {"accepted",         "no-answer",      "malformed",
                                           "invalid",          "unknown-strategy", "wrong-strategy",
                                           "same",             "not-one-step",   "not-equivalent"};

const char *leir_llm_reject_name(leir_llm_reject r) {
  return (unsigned)r < sizeof reject_names / sizeof *reject_names ? reject_names[r] : NULL;
}

static const leir_llm_propose_options propose_defaults = LEIR_LLM_PROPOSE_OPTIONS_INIT;

leir_status leir_llm_propose_options_init(leir_llm_propose_options *opts, size_t size) {
  return leir__llm_init_struct(opts, size, &propose_defaults, sizeof propose_defaults,
                               "leir_llm_propose_options");
}

/* The result with the storage behind its pointers. */
typedef struct result {
  leir_llm_result pub;
  leir_llm_attempt *attempts;
  char **strings; /* everything the result owns */
  size_t nstrings, cap;
} result;

static const char *keep(result *r, char *s) {
  if (!s) return "";
  if (r->nstrings == r->cap) {
    size_t c = r->cap ? r->cap * 2 : 16;
    char **n = realloc(r->strings, c * sizeof *n);
    if (!n) {
      free(s);
      return "";
    }
    r->strings = n;
    r->cap = c;
  }
  r->strings[r->nstrings++] = s;
  return s;
}

static char *dupn(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

static char *fmt(const char *f, ...) LEIR__PRINTF(1, 2);
static char *fmt(const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_vprintf(&b, f, ap);
  va_end(ap);
  return leir__sb_finish(&b, NULL);
}

void leir_llm_result_free(leir_llm_result *pub) {
  if (!pub) return;
  result *r = (result *)pub;
  leir_program_free(pub->program);
  leir_verify_report_free(pub->report);
  for (size_t i = 0; i < r->nstrings; i++) free(r->strings[i]);
  free(r->strings);
  free(r->attempts);
  free(r);
}

/* The chat: a growing list of messages whose contents the loop owns. */
typedef struct chat {
  leir_llm_message *m;
  char **owned;
  size_t n, cap;
} chat;

static bool chat_add(chat *c, const char *role, char *content) {
  if (!content) return false;
  if (c->n == c->cap) {
    size_t nc = c->cap ? c->cap * 2 : 8;
    leir_llm_message *m = realloc(c->m, nc * sizeof *m);
    if (!m) {
      free(content);
      return false;
    }
    c->m = m;
    char **o = realloc(c->owned, nc * sizeof *o);
    if (!o) {
      free(content);
      return false;
    }
    c->owned = o;
    c->cap = nc;
  }
  c->m[c->n].role = role;
  c->m[c->n].content = content;
  c->owned[c->n++] = content;
  return true;
}

static void chat_free(chat *c) {
  for (size_t i = 0; i < c->n; i++) free(c->owned[i]);
  free(c->m);
  free(c->owned);
}

/* "loop_tiling" -> "loop tiling" (how the Step-TP search prompts name them). */
static void spaced(const char *name, char *out, size_t cap) {
  size_t i = 0;
  for (; name[i] && i + 1 < cap; i++) out[i] = name[i] == '_' ? ' ' : name[i];
  out[i] = '\0';
}

static leir_status copy_signature(leir_program *dst, const leir_program *src) {
  size_t n = leir_program_signature_count(src);
  if (n == 0) return LEIR_OK; /* none given: both are inferred the same way */
  leir_tensor_decl d[64];
  if (n > 64) return leir__error(LEIR_ERR_LIMIT, "llm.signature", NULL, 0, 0, "more than 64 tensors");
  for (size_t i = 0; i < n; i++) {
    leir_status st = leir_program_signature_get(src, i, &d[i]);
    if (st != LEIR_OK) return st;
  }
  return leir_program_set_signature(dst, d, n);
}

/* One line of a last error: "invalid at LINE:COL: MESSAGE". */
static char *invalid_reason(const char *what) {
  const leir_error *e = leir_error_last();
  if (e->line)
    return fmt("invalid at %u:%u (%s): %s", e->line, e->column, what, e->message);
  return fmt("invalid (%s): %s", what, e->message);
}

/* The reason of a verdict that did not pass, for the model. */
static char *verdict_reason(const leir_verify_report *r) {
  if (r->verdict == LEIR_VERDICT_MISMATCH) {
    leir__strbuf b = LEIR__STRBUF_INIT;
    leir__sb_printf(&b, "not numerically equivalent: output %s", r->output ? r->output : "?");
    leir__sb_putc(&b, '[');
    for (uint32_t k = 0; k < r->rank && k < LEIR_MAX_RANK; k++)
      leir__sb_printf(&b, "%s%lld", k ? "," : "", (long long)r->coords[k]);
    leir__sb_printf(&b, "] is %.9g, expected %.9g (input set %d)", r->actual, r->expected, r->set);
    return leir__sb_finish(&b, NULL);
  }
  if (r->verdict == LEIR_VERDICT_INVALID && r->line)
    return fmt("invalid at %u:%u: %s", r->line, r->column, r->message ? r->message : "");
  return fmt("not accepted by verification (%s): %s", leir_verdict_name(r->verdict),
             r->message ? r->message : "");
}

typedef struct outcome {
  leir_llm_reject reject;
  char *reason;             /* malloc'd; NULL when accepted */
  leir_program *program;    /* accepted */
  size_t strategy;
  char *step;
  char *cot;
  leir_exactness exactness;
  leir_verify_report *report;
} outcome;

/* Judges one answer. Returns a status only for failures that are not the
 * answer's fault (out of memory, a verifier that cannot run). */
static leir_status judge(const char *answer, size_t len, const leir_program *program,
                         uint64_t program_hash, leir_verifier *v, const leir_llm_propose_options *o,
                         int32_t want_strategy, outcome *out) {
  leir__answer *a = NULL;
  leir__answer_reason why = LEIR__ANSWER_OK;
  leir_status st = leir__answer_parse(answer, len, &a, &why);
  if (st == LEIR_ERR_NOMEM) return st;
  if (st != LEIR_OK) {
    out->reject = LEIR_LLM_MALFORMED;
    out->reason = fmt("malformed answer (%s): %s; answer as <think>...</think><answer>{\"transformed_IR\": "
                      "\"...\", \"applied_strategy\": \"...\"}</answer>",
                      leir__answer_reason_name(why), leir_error_last()->message);
    return LEIR_OK;
  }
  const leir__answer_item *it = NULL;
  for (size_t i = 0; i < a->n_items && !it; i++)
    if (a->items[i].reason == LEIR__ANSWER_OK) it = &a->items[i];
  if (!it) { /* parse succeeded: at least one usable entry (defensive) */
    out->reject = LEIR_LLM_MALFORMED;
    out->reason = fmt("malformed answer: no usable entry");
    leir__answer_free(a);
    return LEIR_OK;
  }
  out->cot = dupn(a->think, a->think_len);
  /* the strategy it names */
  char name[128];
  leir__strategy_name_normalize(it->strategies[0], name, sizeof name);
  size_t sidx = 0;
  if (leir_strategy_find(name, &sidx) != LEIR_OK) {
    out->reject = LEIR_LLM_UNKNOWN_STRATEGY;
    out->reason = fmt("applied_strategy '%.100s' is not a strategy of the catalogue (%s)",
                      it->strategies[0], leir_error_last()->message);
    leir__answer_free(a);
    return LEIR_OK;
  }
  if (want_strategy >= 0 && (size_t)want_strategy != sidx) {
    out->reject = LEIR_LLM_WRONG_STRATEGY;
    out->reason = fmt("applied_strategy is %s, but the task asks for %s", name, o->strategy);
    leir__answer_free(a);
    return LEIR_OK;
  }
  /* the transformed IR */
  leir_program *cand = NULL;
  st = leir_program_parse(&cand, it->ir, it->ir_len, NULL);
  leir__answer_free(a);
  if (st == LEIR_ERR_NOMEM) return st;
  if (st != LEIR_OK) {
    out->reject = LEIR_LLM_INVALID;
    out->reason = invalid_reason("transformed_IR");
    return LEIR_OK;
  }
  st = copy_signature(cand, program);
  if (st == LEIR_OK) st = leir_program_check(cand, NULL, NULL);
  if (st == LEIR_ERR_NOMEM) {
    leir_program_free(cand);
    return st;
  }
  if (st != LEIR_OK) {
    out->reject = LEIR_LLM_INVALID;
    out->reason = invalid_reason("transformed_IR with the given known variables");
    leir_program_free(cand);
    return LEIR_OK;
  }
  if (leir_program_hash_alpha(cand) == program_hash) {
    out->reject = LEIR_LLM_SAME;
    out->reason = fmt("the transformed IR is the given IR (up to names): apply one step of %s",
                      name);
    leir_program_free(cand);
    return LEIR_OK;
  }
  /* grounding: is it one step of that strategy? */
  leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
  co.strategy = (int32_t)sidx;
  leir_candidates *g = NULL;
  st = leir_ground(&g, program, cand, &co);
  if (st == LEIR_ERR_NOMEM) {
    leir_program_free(cand);
    return st;
  }
  if (st != LEIR_OK || leir_candidates_count(g) == 0) {
    out->reject = LEIR_LLM_NOT_ONE_STEP;
    out->reason = fmt("not one step of %s: no single %s step of the given IR gives this program",
                      name, name);
    leir_candidates_free(g);
    leir_program_free(cand);
    return LEIR_OK;
  }
  out->strategy = sidx;
  out->exactness = leir_candidates_exactness(g, 0);
  out->step = fmt("%s", leir_step_text(leir_candidates_step(g, 0)));
  leir_candidates_free(g);
  /* verification */
  if (v) {
    uint32_t cls = o->candidate_class ? o->candidate_class : (uint32_t)out->exactness + 1u;
    leir_verify_report *rep = NULL;
    st = leir_verifier_judge(v, cand, cls, &rep);
    if (st != LEIR_OK) {
      leir_program_free(cand);
      return st;
    }
    if (!leir_verdict_passes(rep->verdict)) {
      out->reject = LEIR_LLM_NOT_EQUIVALENT;
      out->reason = verdict_reason(rep);
      leir_verify_report_free(rep);
      leir_program_free(cand);
      return LEIR_OK;
    }
    out->report = rep;
  }
  out->reject = LEIR_LLM_ACCEPTED;
  out->program = cand;
  return LEIR_OK;
}

leir_status leir_llm_propose(leir_llm *llm, leir_verifier *v, const leir_program *program,
                             const leir_llm_propose_options *opts, leir_llm_result **out) {
  if (!llm || !program || !out) return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  leir_llm_propose_options o;
  leir_status st = LEIR__OPTIONS_READ(leir_llm_propose_options, &o, opts,
                                      LEIR_LLM_PROPOSE_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  if (o.retries > 1000) return leir__error_arg(NULL, "retries is at most 1000");
  if (o.candidate_class > LEIR_VERIFY_CLASS_REASSOCIATING)
    return leir__error_arg(NULL, "candidate_class must be a LEIR_VERIFY_CLASS_*");
  if (o.nfeedback && !o.feedback) return leir__error_arg(NULL, "nfeedback without feedback");
  int32_t want = -1;
  if (o.strategy) {
    size_t idx;
    st = leir_strategy_find(o.strategy, &idx);
    if (st != LEIR_OK) return st;
    want = (int32_t)idx;
  }
  st = leir_program_check(program, NULL, NULL);
  if (st != LEIR_OK) return st;
  uint64_t hash = leir_program_hash_alpha(program);

  char *prompt = NULL;
  st = leir__prompt_build(program, o.model_name, 1, &prompt, NULL);
  if (st != LEIR_OK) return st;
  leir__strbuf ub = LEIR__STRBUF_INIT;
  leir__sb_puts(&ub, prompt);
  leir_free(prompt);
  if (want >= 0) {
    char sp[128];
    spaced(leir_strategy_info_at((size_t)want)->name, sp, sizeof sp);
    leir__sb_printf(&ub, " Apply exactly one step of the strategy '%s'.", sp);
  }
  for (size_t i = 0; i < o.nfeedback; i++)
    if (o.feedback[i])
      leir__sb_printf(&ub, "%s A transformed IR proposed before was rejected: %.2000s.",
                      i ? "" : "\n", o.feedback[i]);

  result *r = calloc(1, sizeof *r);
  chat c = {NULL, NULL, 0, 0};
  size_t max_attempts = (size_t)o.retries + 1;
  if (r) r->attempts = calloc(max_attempts, sizeof *r->attempts);
  if (!r || !r->attempts) {
    leir__sb_release(&ub);
    if (r) free(r);
    return leir__error_nomem();
  }
  r->pub.size = (uint32_t)sizeof r->pub;
  r->pub.program_text = r->pub.strategy = r->pub.step = r->pub.cot = "";
  r->pub.attempts = r->attempts;
  const char *sys = leir__llm_system_prompt(llm);
  bool ok = (!sys[0] || chat_add(&c, "system", fmt("%s", sys))) &&
            chat_add(&c, "user", leir__sb_finish(&ub, NULL));
  if (!ok) st = leir__error_nomem();
  for (size_t k = 0; st == LEIR_OK && k < max_attempts; k++) {
    leir_llm_attempt *at = &r->attempts[r->pub.nattempts++];
    char *answer = NULL;
    size_t alen = 0;
    leir_status rs = leir_llm_complete(llm, c.m, c.n, &answer, &alen);
    outcome oc;
    memset(&oc, 0, sizeof oc);
    if (rs == LEIR_ERR_NOMEM) {
      st = rs;
      break;
    }
    if (rs != LEIR_OK) {
      at->reject = LEIR_LLM_NO_ANSWER;
      at->status = rs;
      at->answer = "";
      at->reason = keep(r, fmt("no answer: %s", leir_error_last()->message));
      /* the same chat again: nothing to add */
      continue;
    }
    at->answer = keep(r, dupn(answer, alen));
    st = judge(answer, alen, program, hash, v, &o, want, &oc);
    free(answer);
    if (st != LEIR_OK) {
      free(oc.reason), free(oc.step), free(oc.cot);
      break;
    }
    at->reject = oc.reject;
    if (oc.reject == LEIR_LLM_ACCEPTED) {
      at->reason = "";
      r->pub.program = oc.program;
      char *text = NULL;
      if (leir_program_print(oc.program, 0, &text, NULL) == LEIR_OK) {
        r->pub.program_text = keep(r, fmt("%s", text));
        leir_free(text);
      }
      r->pub.strategy = leir_strategy_info_at(oc.strategy)->name;
      r->pub.step = keep(r, oc.step);
      r->pub.cot = keep(r, oc.cot);
      r->pub.exactness = oc.exactness;
      r->pub.report = oc.report;
      break;
    }
    at->reason = keep(r, oc.reason);
    free(oc.step);
    free(oc.cot);
    if (k + 1 < max_attempts) {
      ok = chat_add(&c, "assistant", fmt("%s", at->answer)) &&
           chat_add(&c, "user",
                    fmt("That answer was rejected: %s. Give a corrected answer in the same format.",
                        at->reason));
      if (!ok) st = leir__error_nomem();
    }
  }
  chat_free(&c);
  if (st != LEIR_OK) {
    leir_llm_result_free(&r->pub);
    return st;
  }
  *out = &r->pub;
  return LEIR_OK;
}
