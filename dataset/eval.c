/* leir_eval: scores a model's answers to a dataset's prompts (docs/dataset.md,
 * "leir eval"). Metrics after the reference's single-step evaluation
 * (pipeline-reference.md §7), judged by libleir's verifier instead of the
 * reference's loose tolerance: parse rate, pass-equal (bitwise identical on
 * every input set), pass-close (within the verifier's tolerance), grounded
 * (leir_ground finds a step of the named strategy from the prompt's program
 * to the answer). No answer can make the run fail: each line gets an outcome
 * and, when it fails, a reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "ds.h"
#include "error.h"
#include "literal.h"

typedef struct prompt_rec {
  const char *id, *kind, *orig, *name, *user;
  uint32_t n;
  int level;
  uint32_t depth;
  const leir__lit *known;
  leir_program *program; /* parsed on first use */
  leir_verifier *verifier;
  int broken;            /* the dataset's program does not load */
} prompt_rec;

typedef struct stat_row {
  uint64_t answers, parsed, items, different, equal, close, grounded;
} stat_row;

typedef struct named_row {
  char name[64];
  stat_row r;
} named_row;

struct leir_eval {
  leir__arena arena;
  char *eval_text, *archive_text;
  prompt_rec *p;
  size_t np, capp;
  leir_eval_options opts;
  leir_backend *interp, *cpu;
  stat_row all, single, multi;
  named_row *strat;
  size_t nstrat, capstrat;
  stat_row level[4];
  leir__strbuf lines; /* per-answer JSON entries */
  uint64_t n_lines;
};

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
    leir_program_free(ev->p[i].program);
  }
  free(ev->p);
  free(ev->strat);
  leir_backend_free(ev->interp);
  leir_backend_free(ev->cpu);
  leir__sb_release(&ev->lines);
  free(ev->eval_text);
  free(ev->archive_text);
  leir__arena_release(&ev->arena);
  free(ev);
}

static const char *sget(const leir__lit *d, const char *k) {
  const char *s = leir__lit_str(leir__lit_get(d, k));
  return s ? s : "";
}

static const char *user_of(const leir__lit *rec) {
  const leir__lit *m = leir__lit_get(rec, "messages");
  for (const leir__lit *e = m && m->kind == LEIR__LIT_LIST ? m->first : NULL; e; e = e->next)
    if (!strcmp(sget(e, "role"), "user")) return sget(e, "content");
  return "";
}

/* Loads the prompts of one file (eval.jsonl or archive.jsonl). */
static leir_status load_prompts(leir_eval *ev, char *text, size_t len, const char *label) {
  size_t line = 0;
  for (char *p = text, *end = text + len; p < end;) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) nl = end;
    *nl = '\0';
    line++;
    if (nl > p) {
      leir__lit_error e;
      const leir__lit *v = leir__lit_parse(&ev->arena, p, (size_t)(nl - p), 0, 0, &e);
      if (!v || v->kind != LEIR__LIT_DICT) {
        if (e.nomem) return leir__error_nomem();
        return leir__error(LEIR_ERR_PARSE, "dataset.file", label, (uint32_t)line, 0,
                           "%s line %zu is not a JSON object", label, line);
      }
      if (ev->np == ev->capp) {
        size_t nc = ev->capp ? ev->capp * 2 : 64;
        prompt_rec *q = realloc(ev->p, nc * sizeof *q);
        if (!q) return leir__error_nomem();
        ev->p = q;
        ev->capp = nc;
      }
      prompt_rec *r = &ev->p[ev->np++];
      memset(r, 0, sizeof *r);
      r->id = sget(v, "id");
      r->kind = sget(v, "kind");
      int64_t n = 1;
      leir__lit_int(leir__lit_get(v, "n"), &n);
      r->n = n > 0 && n < 1000 ? (uint32_t)n : 1;
      r->user = user_of(v);
      const leir__lit *src = v;
      const leir__lit *samples = leir__lit_get(v, "samples");
      if (!leir__lit_get(v, "original_IR") && samples && samples->kind == LEIR__LIT_LIST && samples->first)
        src = samples->first;
      r->orig = sget(src, "original_IR");
      r->name = sget(src, "name");
      int64_t lv = 0, dp = 0;
      leir__lit_int(leir__lit_get(src, "level"), &lv);
      const leir__lit *stl = leir__lit_get(src, "state");
      if (!leir__lit_int(leir__lit_get(src, "depth"), &dp)) leir__lit_int(leir__lit_get(stl, "depth"), &dp);
      r->level = (int)lv;
      r->depth = (uint32_t)dp;
      r->known = leir__lit_get(src, "known");
    }
    p = nl + 1;
  }
  return LEIR_OK;
}

static prompt_rec *find_prompt(leir_eval *ev, const char *id, const char *prompt) {
  for (size_t i = 0; i < ev->np; i++)
    if ((id && *id && !strcmp(ev->p[i].id, id)) || (prompt && *prompt && !strcmp(ev->p[i].user, prompt)))
      return &ev->p[i];
  return NULL;
}

/* The prompt's program with its known variables as the signature. */
static leir_status prompt_program(leir_eval *ev, prompt_rec *r) {
  if (r->program || r->broken) return r->broken ? LEIR_ERR_INVALID : LEIR_OK;
  leir_status st = leir_program_parse(&r->program, r->orig, strlen(r->orig), NULL);
  leir_tensor_decl decls[64];
  int64_t shapes[64][LEIR_MAX_RANK];
  size_t nd = 0;
  for (const leir__lit *e = r->known ? r->known->first : NULL; st == LEIR_OK && e && nd < 64; e = e->next, nd++) {
    decls[nd].name = sget(e, "name");
    if (leir_dtype_from_name(sget(e, "dtype"), &decls[nd].dtype) != LEIR_OK) decls[nd].dtype = LEIR_F32;
    decls[nd].role = !strcmp(sget(e, "role"), "input") ? LEIR_ROLE_INPUT : LEIR_ROLE_OUTPUT;
    uint32_t k = 0;
    const leir__lit *sh = leir__lit_get(e, "shape");
    for (const leir__lit *d = sh ? sh->first : NULL; d && k < LEIR_MAX_RANK; d = d->next) {
      int64_t x = 0;
      leir__lit_int(d, &x);
      shapes[nd][k++] = x;
    }
    decls[nd].rank = k;
    decls[nd].shape = shapes[nd];
  }
  if (st == LEIR_OK) st = nd ? leir_program_set_signature(r->program, decls, nd) : leir_program_infer_signature(r->program);
  if (st == LEIR_OK) st = leir_program_check(r->program, NULL, NULL);
  leir_program_cost cost;
  uint64_t evals = st == LEIR_OK && leir_program_cost_get(r->program, &cost) == LEIR_OK ? cost.evaluations : 0;
  if (st == LEIR_OK) {
    const char *want = ev->opts.backend && *ev->opts.backend ? ev->opts.backend : "auto";
    if (!strcmp(want, "auto")) want = evals <= ev->opts.interp_max_evaluations ? "interp" : "cpu";
    leir_backend **slot = !strcmp(want, "interp") ? &ev->interp : &ev->cpu;
    if (!*slot) {
      leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
      bo.timeout_s = 60;
      bo.max_evaluations = (uint64_t)1 << 30;
      st = leir_backend_open(slot, want, &bo);
      if (st != LEIR_OK) return st;
    }
    leir_verifier_options vo = LEIR_VERIFIER_OPTIONS_INIT;
    vo.seed = ev->opts.seed;
    vo.input_sets = ev->opts.input_sets ? ev->opts.input_sets : 3;
    st = leir_verifier_new(&r->verifier, *slot, r->program, &vo);
  }
  if (st != LEIR_OK && st != LEIR_ERR_NOMEM && st != LEIR_ERR_NO_DEVICE) {
    leir_program_free(r->program);
    r->program = NULL;
    r->broken = 1;
  }
  return st;
}

static stat_row *strat_row(leir_eval *ev, const char *name) {
  for (size_t i = 0; i < ev->nstrat; i++)
    if (!strcmp(ev->strat[i].name, name)) return &ev->strat[i].r;
  if (ev->nstrat == ev->capstrat) {
    size_t nc = ev->capstrat ? ev->capstrat * 2 : 16;
    named_row *v = realloc(ev->strat, nc * sizeof *v);
    if (!v) return NULL;
    ev->strat = v;
    ev->capstrat = nc;
  }
  named_row *r = &ev->strat[ev->nstrat++];
  memset(r, 0, sizeof *r);
  snprintf(r->name, sizeof r->name, "%s", name);
  return &r->r;
}

typedef struct item_result {
  int different, equal, close, grounded;
  const char *verdict;
  char strategy[64];
  char reason[48];
  char message[200];
} item_result;

static void judge_item(leir_eval *ev, prompt_rec *r, const leir__answer_item *it, item_result *out) {
  (void)ev;
  memset(out, 0, sizeof *out);
  out->verdict = "";
  char norm[64];
  leir__strategy_name_normalize(it->strategies[0], norm, sizeof norm);
  size_t sidx = 0;
  int known_strategy = leir_strategy_find(norm, &sidx) == LEIR_OK;
  snprintf(out->strategy, sizeof out->strategy, "%s", known_strategy ? norm : "(unknown strategy)");
  leir_parse_options po = LEIR_PARSE_OPTIONS_INIT;
  po.flags = LEIR_PARSE_LENIENT;
  po.max_input_bytes = (uint64_t)16 << 20;
  leir_program *c = NULL;
  if (leir_program_parse(&c, it->ir, it->ir_len, &po) != LEIR_OK) {
    snprintf(out->reason, sizeof out->reason, "ir.parse");
    snprintf(out->message, sizeof out->message, "%s", leir_error_last()->message);
    return;
  }
  /* the known variables of the prompt, as the prompt demands */
  size_t n = leir_program_signature_count(r->program);
  leir_tensor_decl decls[64];
  for (size_t i = 0; i < n && i < 64; i++) leir_program_signature_get(r->program, i, &decls[i]);
  char *a = NULL, *b = NULL;
  leir_program_print(c, 0, &a, NULL);
  leir_program_print(r->program, 0, &b, NULL);
  out->different = !(a && b && !strcmp(a, b));
  leir_free(a);
  leir_free(b);
  leir_program_cost c1, c0;
  if (leir_program_set_signature(c, decls, n < 64 ? n : 64) != LEIR_OK ||
      leir_program_check(c, NULL, NULL) != LEIR_OK) {
    snprintf(out->reason, sizeof out->reason, "ir.invalid");
    snprintf(out->message, sizeof out->message, "%s", leir_error_last()->message);
    out->verdict = "INVALID";
  } else if (leir_program_cost_get(c, &c1) != LEIR_OK || leir_program_cost_get(r->program, &c0) != LEIR_OK ||
             c1.evaluations > 16 * c0.evaluations + 1000000) {
    snprintf(out->reason, sizeof out->reason, "ir.too_costly");
    snprintf(out->message, sizeof out->message, "the program needs far more evaluations than the prompt's");
  } else {
    leir_verify_report *rep = NULL;
    if (leir_verifier_judge(r->verifier, c, LEIR_VERIFY_CLASS_ANY, &rep) != LEIR_OK || !rep) {
      snprintf(out->reason, sizeof out->reason, "verify.error");
      snprintf(out->message, sizeof out->message, "%s", leir_error_last()->message);
    } else {
      out->verdict = leir_verdict_name(rep->verdict);
      out->equal = out->different && rep->verdict == LEIR_VERDICT_EQUAL;
      out->close = out->different && (rep->verdict == LEIR_VERDICT_EQUAL || rep->verdict == LEIR_VERDICT_CLOSE);
      if (!out->different) {
        snprintf(out->reason, sizeof out->reason, "ir.unchanged");
        snprintf(out->message, sizeof out->message, "the answer is the prompt's program");
      } else if (!out->close) {
        snprintf(out->reason, sizeof out->reason, "verify.%s", leir_verdict_name(rep->verdict));
        snprintf(out->message, sizeof out->message, "%s", rep->message ? rep->message : "");
      }
      leir_verify_report_free(rep);
    }
    /* grounded: one step of a named strategy */
    for (size_t k = 0; k < it->n_strategies && !out->grounded && out->different; k++) {
      char nm[64];
      size_t si;
      leir__strategy_name_normalize(it->strategies[k], nm, sizeof nm);
      if (leir_strategy_find(nm, &si) != LEIR_OK) continue;
      leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
      co.strategy = (int32_t)si;
      leir_candidates *g = NULL;
      if (leir_ground(&g, r->program, c, &co) == LEIR_OK && leir_candidates_count(g) > 0) out->grounded = 1;
      leir_candidates_free(g);
    }
    if (!out->reason[0] && !known_strategy) {
      snprintf(out->reason, sizeof out->reason, "strategy.unknown");
      snprintf(out->message, sizeof out->message, "no strategy named '%.60s'", it->strategies[0]);
    } else if (!out->reason[0] && !out->grounded) {
      snprintf(out->reason, sizeof out->reason, "strategy.not_grounded");
      snprintf(out->message, sizeof out->message, "the answer is not one step of %.60s", norm);
    }
  }
  leir_program_free(c);
}

static void add(stat_row *s, int answers, int parsed, const item_result *it) {
  s->answers += (uint64_t)answers;
  s->parsed += (uint64_t)parsed;
  if (it) {
    s->items++;
    s->different += (uint64_t)it->different;
    s->equal += (uint64_t)it->equal;
    s->close += (uint64_t)it->close;
    s->grounded += (uint64_t)it->grounded;
  }
}

static stat_row *level_row(leir_eval *ev, const prompt_rec *r) {
  return &ev->level[r && r->level >= 0 && r->level < 3 ? r->level : 3];
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
  prompt_rec *r = v ? find_prompt(ev, id, ptext) : NULL;
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
    if (!strcmp(sget(m, "role"), "assistant") && c && c->kind == LEIR__LIT_STR) answer = c->s, answer_len = c->n;
  }
  if (!ptext && r) ptext = r->user;
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
  } else if (!answer) {
    reason = "answer.missing";
    snprintf(message, sizeof message, "no answer text (answer, response, output, content or messages)");
  } else {
    leir_status pst = prompt_program(ev, r);
    if (pst != LEIR_OK) {
      reason = "dataset.program";
      snprintf(message, sizeof message, "the prompt's program does not load: %s", leir_error_last()->message);
    }
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
  stat_row *kind_row = is_multi ? &ev->multi : &ev->single;
  if (reason) {
    /* counted as one failed item */
    item_result fail;
    memset(&fail, 0, sizeof fail);
    add(&ev->all, 1, 0, &fail);
    add(kind_row, 1, 0, &fail);
    add(level_row(ev, r), 1, 0, &fail);
    stat_row *sr = strat_row(ev, "(unparsed)");
    if (sr) add(sr, 1, 0, &fail);
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
    size_t done = 0, unique = 0;
    for (size_t i = 0; i < ans->n_items; i++) {
      const leir__answer_item *it = &ans->items[i];
      if (it->reason != LEIR__ANSWER_OK) continue;
      if (!is_multi && done == 1) break; /* a single prompt: the first entry */
      int dup = 0;
      for (size_t j = 0; j < i && !dup; j++)
        dup = ans->items[j].reason == LEIR__ANSWER_OK && ans->items[j].ir_len == it->ir_len &&
              !memcmp(ans->items[j].ir, it->ir, it->ir_len);
      if (dup) continue; /* the reference counts unique transformed IRs */
      item_result res;
      judge_item(ev, r, it, &res);
      unique++;
      add(&ev->all, 0, 0, &res);
      add(kind_row, 0, 0, &res);
      add(level_row(ev, r), 0, 0, &res);
      stat_row *sr = strat_row(ev, res.strategy);
      if (sr) add(sr, 1, 1, &res);
      leir__sb_printf(b, "%s{\"strategy\":", done ? "," : "");
      leir__ds_put_str(b, res.strategy);
      leir__sb_puts(b, ",\"verdict\":");
      leir__ds_put_str(b, res.verdict);
      leir__sb_printf(b, ",\"different\":%s,\"pass_equal\":%s,\"pass_close\":%s,\"grounded\":%s,\"reason\":",
                      res.different ? "true" : "false", res.equal ? "true" : "false",
                      res.close ? "true" : "false", res.grounded ? "true" : "false");
      leir__ds_put_str(b, res.reason[0] ? res.reason : NULL);
      leir__sb_puts(b, ",\"message\":");
      leir__ds_put_str(b, res.message[0] ? res.message : NULL);
      leir__sb_putc(b, '}');
      done++;
    }
    leir__sb_printf(b, "],\"require_num_pass\":%s}", unique >= r->n ? "true" : "false");
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
  if (opts) {
    if (opts->size < sizeof(uint32_t) || opts->size > sizeof *opts) {
      leir_eval_free(ev);
      return leir__error_arg("leir_eval_options", "bad options size");
    }
    memcpy(&ev->opts, opts, opts->size);
  }
  leir_status st;
  size_t n1 = 0, n2 = 0;
  char *p1 = leir__ds_join(dataset_dir, "eval.jsonl"), *p2 = leir__ds_join(dataset_dir, "archive.jsonl");
  if (!p1 || !p2) {
    st = leir__error_nomem();
  } else {
    st = leir__ds_read_file(p1, &ev->eval_text, &n1);
    if (st == LEIR_OK) st = load_prompts(ev, ev->eval_text, n1, "eval.jsonl");
    if (st == LEIR_OK && leir__ds_read_file(p2, &ev->archive_text, &n2) == LEIR_OK)
      st = load_prompts(ev, ev->archive_text, n2, "archive.jsonl");
  }
  free(p1);
  free(p2);
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

static double rate(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

static void put_row(leir__strbuf *b, const stat_row *r) {
  leir__sb_printf(b,
                  "{\"answers\":%llu,\"parsed\":%llu,\"items\":%llu,\"parse_rate\":%.6f,\"different_rate\":%.6f,"
                  "\"pass_equal\":%.6f,\"pass_close\":%.6f,\"grounded_rate\":%.6f,\"equal\":%llu,\"close\":%llu,"
                  "\"grounded\":%llu}",
                  (unsigned long long)r->answers, (unsigned long long)r->parsed, (unsigned long long)r->items,
                  rate(r->parsed, r->answers), rate(r->different, r->items), rate(r->equal, r->items),
                  rate(r->close, r->items), rate(r->grounded, r->items), (unsigned long long)r->equal,
                  (unsigned long long)r->close, (unsigned long long)r->grounded);
}

static const char *const level_names[4] = {"programs", "level1", "level2", "unknown"};

leir_status leir_eval_report_json(const leir_eval *ev, char **out, size_t *out_len) {
  if (!out || !ev) return leir__error_arg(NULL, "eval and out are required");
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_puts(&b, "{\"overall\":");
  put_row(&b, &ev->all);
  leir__sb_puts(&b, ",\"single\":");
  put_row(&b, &ev->single);
  leir__sb_puts(&b, ",\"multi\":");
  put_row(&b, &ev->multi);
  leir__sb_puts(&b, ",\"per_strategy\":{");
  for (size_t i = 0; i < ev->nstrat; i++) {
    if (i) leir__sb_putc(&b, ',');
    leir__ds_put_str(&b, ev->strat[i].name);
    leir__sb_putc(&b, ':');
    put_row(&b, &ev->strat[i].r);
  }
  leir__sb_puts(&b, "},\"per_level\":{");
  int first = 1;
  for (int l = 0; l < 4; l++) {
    if (!ev->level[l].answers) continue;
    leir__sb_printf(&b, "%s\"%s\":", first ? "" : ",", level_names[l]);
    put_row(&b, &ev->level[l]);
    first = 0;
  }
  leir__sb_puts(&b, "},\"answers\":[");
  if (ev->lines.data) leir__sb_put(&b, ev->lines.data, ev->lines.len);
  leir__sb_puts(&b, "]}\n");
  *out = leir__sb_finish(&b, out_len);
  return *out ? LEIR_OK : leir__error_nomem();
}

static void table_row(leir__strbuf *b, const char *name, const stat_row *r) {
  leir__sb_printf(b, "%-36s %7llu %7llu %6.1f%% %6llu %6.1f%% %6.1f%% %6.1f%%\n", name,
                  (unsigned long long)r->answers, (unsigned long long)r->parsed,
                  100 * rate(r->parsed, r->answers), (unsigned long long)r->items,
                  100 * rate(r->equal, r->items), 100 * rate(r->close, r->items),
                  100 * rate(r->grounded, r->items));
}

leir_status leir_eval_report_table(const leir_eval *ev, char **out, size_t *out_len) {
  if (!out || !ev) return leir__error_arg(NULL, "eval and out are required");
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_printf(&b, "%-36s %7s %7s %7s %6s %7s %7s %7s\n", "", "answers", "parsed", "parse", "items",
                  "equal", "close", "ground");
  table_row(&b, "overall", &ev->all);
  if (ev->single.answers) table_row(&b, "  single prompts", &ev->single);
  if (ev->multi.answers) table_row(&b, "  multi prompts", &ev->multi);
  leir__sb_puts(&b, "per strategy (named in the answer)\n");
  for (size_t i = 0; i < ev->nstrat; i++) {
    char name[80];
    snprintf(name, sizeof name, "  %s", ev->strat[i].name);
    table_row(&b, name, &ev->strat[i].r);
  }
  leir__sb_puts(&b, "per level\n");
  for (int l = 0; l < 4; l++) {
    if (!ev->level[l].answers) continue;
    char name[40];
    snprintf(name, sizeof name, "  %s", level_names[l]);
    table_row(&b, name, &ev->level[l]);
  }
  *out = leir__sb_finish(&b, out_len);
  return *out ? LEIR_OK : leir__error_nomem();
}
