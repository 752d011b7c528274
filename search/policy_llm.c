/*
 * The LLM policy of the search (leir_search_propose_llm in
 * include/leir/experimental/search.h): one chat per call, the Step-TP
 * search prompt of the current program (docs/search.md), the rejections at
 * this node as feedback, the reference's hardware block, as many IRs asked
 * for as the reference's script of the algorithm asks, and every IR of the
 * parsed answer proposed as a whole program (the search grounds, verifies
 * and times each). An answer that cannot be read is proposed as unreadable,
 * so its reason goes back to the model too.
 */
#define LEIR_EXPERIMENTAL
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "error.h"
#include "internal.h"
#include "leir/experimental/llm.h"
#include "prompt.h"
#include "strbuf.h"

#define SYSTEM_PROMPT "You are a helpful IR optimization assistant."
#define MAX_FEEDBACK 4          /* the last rejections put in the prompt */
#define MAX_QUOTE ((size_t)4096) /* bytes of a rejected proposal quoted back */
#define MAX_IRS 16u             /* IRs asked for, and proposed, per call: each is timed */

static const char *const algo_words[] = {"Greedy", "Beam", "BFS", "DFS", "MCTS", "Chain"};
/* num_IRs of the reference's swift_<ALG>_based_optimization.py, in the
 * order of leir_search_algorithm (pipeline-reference.md §6) */
static const uint32_t reference_irs[] = {2, 3, 2, 2, 1, 1};

leir_status leir_search_llm_options_init(leir_search_llm_options *opts, size_t size) {
  static const leir_search_llm_options defaults = LEIR_SEARCH_LLM_OPTIONS_INIT;
  if (!opts) return leir__error_arg("leir_search_llm_options", "leir_search_llm_options is NULL");
  if (size < sizeof(uint32_t) || size > sizeof defaults)
    return leir__error_arg("leir_search_llm_options",
                           "size %zu is not a size of leir_search_llm_options (this library knows "
                           "%zu bytes)",
                           size, sizeof defaults);
  memcpy(opts, &defaults, size);
  uint32_t sz = (uint32_t)size;
  memcpy(opts, &sz, sizeof sz);
  return LEIR_OK;
}

/* The options' fields this library knows, defaults for those a smaller
 * (older) struct lacks. */
static leir_status read_options(const leir_search_llm_options *in, leir_search_llm_options *o) {
  leir_search_llm_options_init(o, sizeof *o);
  if (!in || in->size < sizeof(uint32_t) || in->size > sizeof *o)
    return leir__error_arg("leir_search_llm_options", "the options are NULL or of an unknown size");
  memcpy(o, in, in->size);
  o->size = (uint32_t)sizeof *o;
  if (!o->llm) return leir__error_arg("llm", "the LLM policy needs a client");
  const char *g = o->hardware;
  if (g && *g) {
    size_t gl = strlen(g);
    int clean = gl <= 64;
    for (size_t i = 0; clean && i < gl; i++) clean = (unsigned char)g[i] >= 0x20 && g[i] != 0x7f;
    if (!clean) return leir__error_arg("hardware", "a GPU name is 1 to 64 printable bytes");
  }
  if (o->irs_per_call > MAX_IRS)
    return leir__error_arg("irs_per_call", "at most %u IRs per call, not %u", MAX_IRS,
                           o->irs_per_call);
  return LEIR_OK;
}

/* A rejected proposal and its reason as the model reads it. */
static void put_feedback(leir__strbuf *b, const leir_search_feedback *f) {
  const char *prop = f->proposal ? f->proposal : "";
  size_t n = strlen(prop);
  if (n == 0) {
    leir__sb_puts(b, "- an earlier request was rejected: ");
  } else {
    leir__sb_puts(b, "- the transformed IR '");
    leir__sb_put(b, prop, n > MAX_QUOTE ? MAX_QUOTE : n);
    if (n > MAX_QUOTE) leir__sb_puts(b, "...");
    leir__sb_puts(b, "' was rejected: ");
  }
  const char *reason = f->reason ? f->reason : "";
  if (f->reject == LEIR_REJECT_VERDICT)
    leir__sb_printf(b, "not numerically equivalent (%s): %s", leir_verdict_name(f->verdict),
                    reason);
  else if (f->reject == LEIR_REJECT_NOT_ONE_STEP || f->reject == LEIR_REJECT_MALFORMED)
    leir__sb_puts(b, reason);
  else
    leir__sb_printf(b, "%s: %s", leir_search_reject_name(f->reject), reason);
  leir__sb_puts(b, "\n");
}

/* The search prompt (pipeline-reference.md §6), asking for `n_irs` IRs. */
static leir_status build_prompt(const leir_search_query *q, const char *hardware, uint32_t n_irs,
                                char **out) {
  char *base = NULL;
  leir_status st = leir__prompt_build(q->program, NULL, 1, &base, NULL);
  if (st != LEIR_OK) return st;
  const char *task = strstr(base, "Please give me a ");
  size_t head_len = task ? (size_t)(task - base) : strlen(base);
  const char *head = base;
  static const char following[] = "Give the following IR";
  leir__strbuf b = LEIR__STRBUF_INIT;
  unsigned a = (unsigned)q->algorithm;
  leir__sb_printf(&b,
                  "%s-based optimization is used on a given IR to improve performance. Each IR is "
                  "a state, and has a parent transformation and speedup performance.\n",
                  a < sizeof algo_words / sizeof *algo_words ? algo_words[a] : "Search");
  if (strncmp(head, following, sizeof following - 1) == 0) {
    leir__sb_puts(&b, "Give the current IR");
    head += sizeof following - 1;
    head_len -= sizeof following - 1;
  }
  leir__sb_put(&b, head, head_len);
  leir__sb_puts(&b, "\n");
  if (q->parent) {
    char *pt = NULL;
    size_t pn = 0;
    if (leir_program_print(q->parent, 0, &pt, &pn) == LEIR_OK) {
      leir__sb_puts(&b, "History:\nThe parent IR: '");
      leir__sb_put(&b, pt, pn);
      leir__sb_printf(&b, "', depth:%u, speedup value: %.4g\n", q->depth ? q->depth - 1 : 0,
                      q->parent_speedup);
      leir_free(pt);
    }
    leir__sb_printf(&b,
                    "The speedup value of the current IR: %.4g, the depth is %u, and the current "
                    "IR is obtained from the parent IR by one transformation step.\n",
                    q->speedup, q->depth);
  } else {
    leir__sb_puts(&b, "The current IR is the same as the root IR, and the depth is 0.\n");
  }
  if (q->nfeedback) {
    leir__sb_printf(&b,
                    "This current IR has been transformed %zu times but failed to pass the "
                    "verification. The rejected transformed IRs and why:\n",
                    q->nfeedback);
    size_t from = q->nfeedback > MAX_FEEDBACK ? q->nfeedback - MAX_FEEDBACK : 0;
    for (size_t i = from; i < q->nfeedback; i++) put_feedback(&b, &q->feedback[i]);
    leir__sb_puts(&b, "You MUST compare with these failed transformed IRs. You are FORBIDDEN to "
                      "generate a failed transformed IR again.\n");
  }
  if (hardware && *hardware) leir__prompt_put_hardware(&b, hardware);
  leir__sb_puts(&b, "The following strategies and any other mathematical strategies can be "
                    "considered:\n");
  for (size_t i = 0; i < leir_strategy_count(); i++) {
    const leir_strategy_info *info = leir_strategy_info_at(i);
    if (!info) continue;
    if (i) leir__sb_puts(&b, ", ");
    for (const char *c = info->name; *c; c++) leir__sb_putc(&b, *c == '_' ? ' ' : *c);
  }
  if (n_irs <= 1)
    leir__sb_puts(&b,
                  "\n**Task**:\nPlease give me a **numerically equivalent, runtime-performance-"
                  "optimized** transformed IR of the current IR, made by exactly one step of one "
                  "strategy, to achieve higher speedup value (should be more than 1), and also "
                  "provide the applied strategy. \n Return the answer **only** as a valid JSON "
                  "object with the following keys:'transformed_IR', 'applied_strategy'.\n");
  else
    leir__sb_printf(&b,
                    "\n**Task**:\nPlease give me at least %u different **numerically equivalent, "
                    "runtime-performance-optimized** transformed IRs of the current IR, each made "
                    "by exactly one step of one strategy, to achieve higher speedup value (should "
                    "be more than 1), and also provide applied strategy for each transformed IR. "
                    "\n Return the answer list **only** as a valid JSON object, and each entry "
                    "with the following keys: 'idx', 'transformed_IR', 'applied_strategy'.\n",
                    n_irs);
  leir__sb_puts(&b,
                "CRITICAL:\n1. Identify what changed versus the root IR and build on top of the "
                "current IR; unchanged parts must be identical strings, and an answer that "
                "changes nothing is WRONG.\n2. Do not repeat the current or the parent IR, and do "
                "not undo the parent's transformation.\n");
  leir_free(base);
  *out = leir__sb_finish(&b, NULL);
  return *out ? LEIR_OK : leir__error_nomem();
}

static leir_status propose_unreadable(leir_search_proposals *out, const char *answer, size_t len,
                                      const char *reason) {
  return leir__search_propose_unreadable(out, answer ? answer : "",
                                         answer ? (len > MAX_QUOTE ? MAX_QUOTE : len) : 0, reason);
}

leir_status leir_search_propose_llm(void *payload, const leir_search_query *query,
                                    leir_search_proposals *out) {
  leir_search_llm_options o = LEIR_SEARCH_LLM_OPTIONS_INIT;
  o.llm = payload;
  return leir_search_propose_llm_with(&o, query, out);
}

leir_status leir_search_propose_llm_with(void *payload, const leir_search_query *query,
                                         leir_search_proposals *out) {
  leir_search_llm_options o;
  leir_status st = read_options(payload, &o);
  if (st != LEIR_OK) return st;
  if (!query || !out || !query->program)
    return leir__error_arg(NULL, "the query and proposals are required");
  unsigned a = (unsigned)query->algorithm;
  uint32_t n_irs = o.irs_per_call ? o.irs_per_call
                   : a < sizeof reference_irs / sizeof *reference_irs ? reference_irs[a]
                                                                       : 1;
  char *prompt = NULL;
  st = build_prompt(query, o.hardware, n_irs, &prompt);
  if (st != LEIR_OK) return st;
  const char *system = o.system_prompt ? o.system_prompt : SYSTEM_PROMPT;
  leir_llm_message msgs[2] = {{"system", system}, {"user", prompt}};
  char *answer = NULL;
  size_t alen = 0;
  st = *system ? leir_llm_complete(o.llm, msgs, 2, &answer, &alen)
               : leir_llm_complete(o.llm, msgs + 1, 1, &answer, &alen);
  leir_free(prompt);
  char reason[512];
  if (st == LEIR_ERR_NOMEM || st == LEIR_ERR_ARGUMENT) return st;
  if (st != LEIR_OK) {
    /* a failed request (timeout, limit, I/O, protocol): a rejected proposal,
     * so the search counts it against its retries */
    snprintf(reason, sizeof reason, "no answer: %s", leir_error_last()->message);
    return propose_unreadable(out, "", 0, reason);
  }
  /* every record of this call keeps the model's whole answer */
  if ((st = leir__search_proposals_raw(out, answer ? answer : "", answer ? alen : 0)) != LEIR_OK) {
    leir_free(answer);
    return st;
  }
  static const char format_single[] =
      "<think>...</think><answer>{\"transformed_IR\": \"...\", \"applied_strategy\": "
      "\"...\"}</answer>";
  static const char format_list[] =
      "<think>...</think><answer>[{\"idx\": 0, \"transformed_IR\": \"...\", "
      "\"applied_strategy\": \"...\"}, ...]</answer>";
  const char *format = n_irs > 1 ? format_list : format_single;
  leir__answer *ans = NULL;
  leir__answer_reason why = LEIR__ANSWER_OK;
  st = leir__answer_parse(answer, alen, &ans, &why);
  if (st == LEIR_ERR_NOMEM) {
    leir_free(answer);
    return st;
  }
  if (st != LEIR_OK) {
    snprintf(reason, sizeof reason, "malformed answer (%s): %s; answer as %s",
             leir__answer_reason_name(why), leir_error_last()->message, format);
    st = propose_unreadable(out, answer, alen, reason);
    leir_free(answer);
    return st;
  }
  char *cot = ans->think ? strndup(ans->think, ans->think_len) : NULL;
  size_t proposed = 0;
  /* every readable IR of the answer is a proposal (the search skips the
   * ones it has seen); a bounded number, since each is timed */
  for (size_t i = 0; i < ans->n_items && proposed < MAX_IRS && st == LEIR_OK; i++) {
    const leir__answer_item *it = &ans->items[i];
    if (it->reason != LEIR__ANSWER_OK) continue;
    char name[128];
    const char *strategy = NULL;
    if (it->n_strategies == 1) {
      size_t need = leir__strategy_name_normalize(it->strategies[0], name, sizeof name);
      if (need < sizeof name) strategy = name;
    }
    st = leir_search_propose_program(out, it->ir, it->ir_len, strategy, cot);
    proposed++;
  }
  if (st == LEIR_OK && proposed == 0) {
    /* (the parser fails an answer without a usable entry; kept so that
     * proposing nothing never tells the search this node is exhausted) */
    snprintf(reason, sizeof reason, "malformed answer: no entry has a transformed_IR; answer as %s",
             format);
    st = propose_unreadable(out, answer, alen, reason);
  }
  free(cot);
  leir__answer_free(ans);
  leir_free(answer);
  return st;
}
