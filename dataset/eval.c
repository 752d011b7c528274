/* leir_eval: scores a model's answers to a dataset's prompts (docs/dataset.md,
 * "leir eval"). Metrics after the reference's single-step evaluation
 * (pipeline-reference.md §7), judged by libleir's verifier: parse rate,
 * different (by structure), label (the answer is a verified label),
 * pass-equal (bitwise identical on every input set), pass-close (within the
 * tolerance or reassociation bound of its class), pass-reference (the
 * reference's own loose rule, to compare with published figures), grounded
 * (leir_ground finds a step of the named strategy from the prompt's program
 * to the answer), the multi-label rate, and pass@k over the answers to each
 * prompt. No answer can make the run fail: each line gets an outcome and,
 * when it fails, a reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "eval.h"

leir_status leir_eval_options_init(leir_eval_options *opts, size_t size) {
  if (!opts || size < sizeof(uint32_t) || size > sizeof *opts)
    return leir__error_arg("leir_eval_options", "bad options pointer or size");
  leir_eval_options d = LEIR_EVAL_OPTIONS_INIT;
  memcpy(opts, &d, size);
  opts->size = (uint32_t)size;
  return LEIR_OK;
}

void leir_eval_free(leir_eval *ev) {
  if (!ev) return;
  for (size_t i = 0; i < ev->np; i++) {
    leir_verifier_free(ev->p[i].verifier);
    leir_verifier_free(ev->p[i].ref_verifier);
    leir_program_free(ev->p[i].program);
    free(ev->p[i].labels);
  }
  free(ev->p);
  free(ev->by_id);
  leir__ev_table_free(&ev->strat);
  leir__ev_table_free(&ev->slevel);
  leir__ev_table_free(&ev->named);
  leir_backend_free(ev->interp);
  leir_backend_free(ev->cpu);
  leir__sb_release(&ev->lines);
  for (int i = 0; i < 3; i++) free(ev->texts[i]);
  leir__arena_release(&ev->arena);
  free(ev);
}

static void add(leir__ev_row *s, int answers, int parsed, const leir__ev_item *it) {
  s->answers += (uint64_t)answers;
  s->parsed += (uint64_t)parsed;
  if (it) {
    s->items++;
    s->different += (uint64_t)it->different;
    s->label += (uint64_t)it->label;
    s->grounded += (uint64_t)it->grounded;
    for (int m = 0; m < LEIR__EV_NMETRICS; m++) s->pass[m] += (uint64_t)it->pass[m];
  }
}

/* A multi prompt's answer: does it give at least N distinct IRs that pass? */
static void add_multi(leir__ev_row *s, const int *ok) {
  s->multi_answers++;
  for (int m = 0; m < LEIR__EV_NMETRICS; m++) s->multi_pass[m] += (uint64_t)ok[m];
}

static leir__ev_row *level_row(leir_eval *ev, const leir__ev_prompt *r) {
  return &ev->level[r && r->level >= 0 && r->level < 3 ? r->level : 3];
}

/* The rows an item counts in: by the matched label's strategy and its
 * level, and by the strategy the answer names. */
static void add_item_rows(leir_eval *ev, const leir__ev_item *res) {
  const char *ls = res->label ? res->label_strategy : "(no label)";
  const char *lv = "(no label)";
  size_t si;
  if (res->label && leir_strategy_find(ls, &si) == LEIR_OK) lv = leir_level_name(leir_strategy_info_at(si)->level);
  leir__ev_row *rows[3] = {leir__ev_row_of(&ev->strat, ls), leir__ev_row_of(&ev->slevel, lv),
                           leir__ev_row_of(&ev->named, res->strategy)};
  for (int i = 0; i < 3; i++)
    if (rows[i]) add(rows[i], 1, 1, res);
}

static void put_item(leir__strbuf *b, const leir__ev_item *res, int first) {
  /* exact steps are judged by the per-element tolerance too: pass-close
   * is the metric that allows a difference within it */
  static const char *const cls[3] = {"tolerance", "tolerance", "reassociating"};
  leir__sb_printf(b, "%s{\"strategy\":", first ? "" : ",");
  leir__ds_put_str(b, res->strategy);
  leir__sb_puts(b, ",\"label_strategy\":");
  leir__ds_put_str(b, res->label ? res->label_strategy : NULL);
  leir__sb_puts(b, ",\"verdict\":");
  leir__ds_put_str(b, res->verdict);
  leir__sb_printf(b, ",\"class\":\"%s\",\"different\":%s,\"label\":%s,\"pass_equal\":%s,\"pass_close\":%s,"
                     "\"pass_reference\":%s,\"grounded\":%s,\"reason\":",
                  cls[res->vclass < 3 ? res->vclass : 0], res->different ? "true" : "false",
                  res->label ? "true" : "false", res->pass[LEIR__EV_EQUAL] ? "true" : "false",
                  res->pass[LEIR__EV_CLOSE] ? "true" : "false", res->pass[LEIR__EV_REFERENCE] ? "true" : "false",
                  res->grounded ? "true" : "false");
  leir__ds_put_str(b, res->reason[0] ? res->reason : NULL);
  leir__sb_puts(b, ",\"message\":");
  leir__ds_put_str(b, res->message[0] ? res->message : NULL);
  leir__sb_putc(b, '}');
}

/* The transformed IRs of a parsed answer: the first usable one for a single
 * prompt, every structurally distinct one for a multi prompt (the reference
 * counts unique IRs; respelled copies are one). ok[m]: the answer solves
 * the prompt for metric m. */
static void score_items(leir_eval *ev, leir__ev_prompt *r, const leir__answer *ans, int is_multi,
                        leir__ev_row *kind_row, int *ok) {
  leir__strbuf *b = &ev->lines;
  uint64_t seen_small[64], *seen = seen_small;
  size_t nseen = 0, cap = 64, done = 0;
  uint64_t distinct_pass[LEIR__EV_NMETRICS] = {0};
  for (size_t i = 0; i < ans->n_items; i++) {
    const leir__answer_item *it = &ans->items[i];
    if (it->reason != LEIR__ANSWER_OK) continue;
    if (!is_multi && done == 1) break; /* a single prompt: the first entry */
    leir__ev_item res;
    leir_program *c = NULL;
    int sig_ok = 0;
    leir__ev_parse(r, it, &c, &sig_ok, &res);
    int dup = 0;
    if (res.hash) {
      for (size_t j = 0; j < nseen && !dup; j++) dup = seen[j] == res.hash;
    } else { /* did not parse: the same text twice is one */
      for (size_t j = 0; j < i && !dup; j++)
        dup = ans->items[j].reason == LEIR__ANSWER_OK && ans->items[j].ir_len == it->ir_len &&
              !memcmp(ans->items[j].ir, it->ir, it->ir_len);
    }
    if (dup) {
      leir_program_free(c);
      continue;
    }
    if (res.hash) {
      if (nseen == cap) {
        uint64_t *v = malloc(2 * cap * sizeof *v);
        if (!v) { /* no room to remember more: judged as distinct */
          leir_program_free(c);
          break;
        }
        memcpy(v, seen, nseen * sizeof *v);
        if (seen != seen_small) free(seen);
        seen = v;
        cap *= 2;
      }
      seen[nseen++] = res.hash;
    }
    if (c) leir__ev_judge(ev, r, it, c, sig_ok, &res);
    add(&ev->all, 0, 0, &res);
    add(kind_row, 0, 0, &res);
    add(level_row(ev, r), 0, 0, &res);
    add_item_rows(ev, &res);
    for (int m = 0; m < LEIR__EV_NMETRICS; m++) distinct_pass[m] += (uint64_t)res.pass[m];
    put_item(b, &res, done == 0);
    done++;
  }
  if (seen != seen_small) free(seen);
  for (int m = 0; m < LEIR__EV_NMETRICS; m++) ok[m] = distinct_pass[m] >= (is_multi ? r->n : 1);
  leir__sb_printf(b, "],\"distinct\":%zu,\"distinct_pass_equal\":%llu,\"distinct_pass_close\":%llu,"
                     "\"require_num_pass\":%s,\"multi_label\":%s}",
                  done, (unsigned long long)distinct_pass[LEIR__EV_EQUAL],
                  (unsigned long long)distinct_pass[LEIR__EV_CLOSE], done >= r->n ? "true" : "false",
                  is_multi && ok[LEIR__EV_CLOSE] ? "true" : "false");
}

/* One line of the answers file. */
static void score_line(leir_eval *ev, const char *text, size_t len, uint64_t line_no) {
  leir__strbuf *b = &ev->lines;
  leir__arena a;
  leir__arena_init(&a, 0);
  leir__lit_error e;
  const leir__lit *v = leir__lit_parse(&a, text, len, 0, 0, &e);
  const char *id = v ? leir__lit_str(leir__lit_get(v, "id")) : NULL;
  const char *ptext = v ? leir__lit_str(leir__lit_get(v, "prompt")) : NULL;
  leir__ev_prompt *r = v ? leir__ev_find(ev, id, ptext) : NULL;
  const char *answer = NULL;
  size_t answer_len = 0;
  static const char *const keys[] = {"answer", "response", "output", "content", "text", NULL};
  for (int k = 0; v && keys[k] && !answer; k++) {
    const leir__lit *x = leir__lit_get(v, keys[k]);
    if (x && x->kind == LEIR__LIT_STR) answer = x->s, answer_len = x->n;
  }
  const leir__lit *msgs = v ? leir__lit_get(v, "messages") : NULL;
  for (const leir__lit *m = msgs && msgs->kind == LEIR__LIT_LIST && !answer ? msgs->first : NULL; m; m = m->next) {
    const leir__lit *c = leir__lit_get(m, "content");
    if (!strcmp(leir__lit_field(m, "role"), "assistant") && c && c->kind == LEIR__LIT_STR) answer = c->s, answer_len = c->n;
  }
  leir__sb_printf(b, "%s{\"line\":%llu,\"id\":", ev->n_lines ? "," : "", (unsigned long long)line_no);
  leir__ds_put_str(b, id ? id : r ? r->id : NULL);
  const char *reason = NULL;
  char message[300] = "";
  int is_multi = r && r->n > 1;
  if (!v) {
    reason = "line.syntax";
    snprintf(message, sizeof message, "the line is not a JSON object: %s", e.message);
  } else if (v->kind != LEIR__LIT_DICT) {
    reason = "line.not_object";
    snprintf(message, sizeof message, "the line is %s, not an object", leir__lit_kind_name(v->kind));
  } else if (!r) {
    reason = "prompt.unknown";
    snprintf(message, sizeof message, "no prompt of the dataset has this id or text");
  } else if (!answer && leir__lit_get(v, "error")) {
    /* leir_eval_drive's line for a request that ended without an answer */
    const leir__lit *err = leir__lit_get(v, "error");
    const char *why = leir__lit_str(leir__lit_get(err, "message"));
    reason = "request.failed";
    snprintf(message, sizeof message, "the model gave no answer: %.250s",
             why ? why : leir__lit_str(err) ? leir__lit_str(err) : "(no message)");
  } else if (!answer) {
    reason = "answer.missing";
    snprintf(message, sizeof message, "no answer text (answer, response, output, content or messages)");
  } else if (leir__ev_prepare(ev, r) != LEIR_OK) {
    reason = "dataset.program";
    snprintf(message, sizeof message, "the prompt's program does not load: %s", leir_error_last()->message);
  }
  char rbuf[48];
  leir__answer *ans = NULL;
  leir__answer_reason why = LEIR__ANSWER_OK;
  if (!reason) {
    leir_status st = leir__answer_parse(answer, answer_len, &ans, &why);
    if (st != LEIR_OK) {
      snprintf(rbuf, sizeof rbuf, "answer.%s", leir__answer_reason_name(why));
      reason = st == LEIR_ERR_NOMEM ? "answer.nomem" : rbuf;
      snprintf(message, sizeof message, "%s", leir_error_last()->message);
    }
  }
  leir__ev_row *kind_row = is_multi ? &ev->multi : &ev->single;
  int ok[LEIR__EV_NMETRICS] = {0};
  if (reason) {
    /* counted as one failed item */
    leir__ev_item fail;
    memset(&fail, 0, sizeof fail);
    add(&ev->all, 1, 0, &fail);
    add(kind_row, 1, 0, &fail);
    add(level_row(ev, r), 1, 0, &fail);
    leir__ev_table *tabs[3] = {&ev->strat, &ev->slevel, &ev->named};
    for (int i = 0; i < 3; i++) {
      leir__ev_row *sr = leir__ev_row_of(tabs[i], "(unparsed)");
      if (sr) add(sr, 1, 0, &fail);
    }
    leir__sb_puts(b, ",\"parsed\":false,\"reason\":");
    leir__ds_put_str(b, reason);
    leir__sb_puts(b, ",\"message\":");
    leir__ds_put_str(b, message);
    leir__sb_puts(b, ",\"items\":[]}");
  } else {
    add(&ev->all, 1, 1, NULL);
    add(kind_row, 1, 1, NULL);
    add(level_row(ev, r), 1, 1, NULL);
    leir__sb_printf(b, ",\"parsed\":true,\"kind\":\"%s\",\"requested\":%u,\"items\":[", is_multi ? "multi" : "single", r->n);
    score_items(ev, r, ans, is_multi, kind_row, ok);
  }
  /* a sample of its prompt (pass@k); the multi-label rate */
  if (r) {
    r->samples++;
    for (int m = 0; m < LEIR__EV_NMETRICS; m++) r->pass[m] += (uint64_t)ok[m];
    if (is_multi) {
      add_multi(&ev->all, ok);
      add_multi(kind_row, ok);
      add_multi(level_row(ev, r), ok);
    }
  }
  leir__answer_free(ans);
  leir__arena_release(&a);
  ev->n_lines++;
}

leir_status leir_eval_run(leir_eval **out, const char *answers, size_t len, const char *dataset_dir,
                          const leir_eval_options *opts) {
  if (!out) return leir__error_arg("out", "out must not be NULL");
  *out = NULL;
  if ((!answers && len) || !dataset_dir) return leir__error_arg(NULL, "answers and dataset_dir are required");
  leir_eval *ev = calloc(1, sizeof *ev);
  if (!ev) return leir__error_nomem();
  leir__arena_init(&ev->arena, 0);
  leir_eval_options d = LEIR_EVAL_OPTIONS_INIT;
  ev->opts = d;
  leir_status st = LEIR_OK;
  if (opts) {
    if (opts->size < sizeof(uint32_t) || opts->size > sizeof *opts) {
      st = leir__error_arg("leir_eval_options", "bad options size");
    } else {
      memcpy(&ev->opts, opts, opts->size);
    }
  }
  if (st == LEIR_OK && ev->opts.k) {
    if (ev->opts.n_k > 16) st = leir__error_arg("k", "at most 16 values of k, not %zu", ev->opts.n_k);
    for (size_t i = 0; st == LEIR_OK && i < ev->opts.n_k; i++) {
      if (ev->opts.k[i] < 1 || ev->opts.k[i] > 1000000)
        st = leir__error_arg("k", "k must be 1 to 1000000, not %u", ev->opts.k[i]);
      else ev->k[ev->nk++] = ev->opts.k[i];
    }
  }
  ev->opts.k = NULL; /* borrowed for the call only */
  /* the test prompts, the validation prompts (absent in datasets built
   * before them), then every archived record */
  static const char *const files[3] = {"eval.jsonl", "validation.jsonl", "archive.jsonl"};
  for (int f = 0; st == LEIR_OK && f < 3; f++) {
    char *path = leir__ds_join(dataset_dir, files[f]);
    size_t n = 0;
    if (!path) {
      st = leir__error_nomem();
      break;
    }
    st = leir__ds_read_file(path, &ev->texts[f], &n);
    free(path);
    if (st != LEIR_OK && f > 0 && st != LEIR_ERR_NOMEM) { /* optional */
      st = LEIR_OK;
      continue;
    }
    if (st == LEIR_OK) st = leir__ev_load(ev, ev->texts[f], n, files[f]);
  }
  if (st == LEIR_OK) st = leir__ev_index(ev);
  if (st != LEIR_OK) {
    leir_eval_free(ev);
    return st;
  }
  uint64_t line = 0;
  for (const char *p = answers, *end = answers + len; p && p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *e = nl ? nl : end;
    line++;
    const char *q = p;
    while (q < e && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
    if (q < e) score_line(ev, p, (size_t)(e - p), line);
    p = nl ? nl + 1 : end;
  }
  if (ev->lines.failed) {
    leir_eval_free(ev);
    return leir__error_nomem();
  }
  *out = ev;
  return LEIR_OK;
}
