/* One unit of a dataset build: a source program, its states (the program
 * and the programs seeded random walks reach), every sampled one-step
 * candidate of every state verified against that state, with its chain of
 * thought. The unit's file (JSONL: "sample" and "reject" lines, then one
 * "done" line) is written atomically when the unit is finished. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds.h"
#include "error.h"
#include "literal.h"

typedef struct state {
  leir_program *p;
  char *text;
  uint64_t hash; /* alpha hash: states equal up to fresh names are one state */
  uint32_t depth;
  char *walk;    /* JSON array of the steps from the source */
} state;

typedef struct unit_ctx {
  leir_dataset *ds;
  const leir__ds_unit *u;
  leir__strbuf out;
  char *name;     /* model name in prompts */
  int level;
  char *source;   /* the "source" JSON object */
  state *states;
  size_t n_states, cap_states;
  uint64_t verified, kept;
} unit_ctx;

static void put_reject(unit_ctx *c, const state *s, const char *strategy, const char *step,
                       const char *stage, const char *verdict, const char *message) {
  leir__strbuf *b = &c->out;
  leir__sb_puts(b, "{\"type\":\"reject\",\"unit\":");
  leir__ds_put_str(b, c->u->id);
  if (s) {
    leir__sb_puts(b, ",\"state\":");
    leir__ds_put_hex(b, s->hash);
    leir__sb_printf(b, ",\"depth\":%u", s->depth);
  }
  leir__sb_puts(b, ",\"strategy\":");
  leir__ds_put_str(b, strategy);
  leir__sb_puts(b, ",\"step\":");
  leir__ds_put_str(b, step);
  leir__sb_puts(b, ",\"stage\":");
  leir__ds_put_str(b, stage);
  leir__sb_puts(b, ",\"verdict\":");
  leir__ds_put_str(b, verdict);
  leir__sb_puts(b, ",\"message\":");
  leir__ds_put_str(b, message ? message : "");
  leir__sb_puts(b, "}\n");
}

static const char *last_message(void) {
  const leir_error *e = leir_error_last();
  return e && e->message[0] ? e->message : "failed";
}

/* ---- the source program ---------------------------------------------- */

static leir_status source_from_workload(unit_ctx *c, leir_program **out) {
  const leir__ds_unit *u = c->u;
  const leir_workload *w = u->workload;
  leir_emit_options eo = LEIR_EMIT_OPTIONS_INIT;
  eo.shape = !strcmp(u->shape, "small") ? LEIR_SHAPE_SMALL
             : !strcmp(u->shape, "default") ? LEIR_SHAPE_DEFAULT : LEIR_SHAPE_RANDOM;
  leir__rng r = leir__rng_derive(c->ds->cfg.seed, u->id, 0);
  eo.seed = leir__rng_next(&r) + u->shape_draw;
  eo.dtype = u->dtype;
  size_t np = leir_workload_param_count(w);
  double *vals = calloc(np ? np : 1, sizeof *vals);
  if (!vals) return leir__error_nomem();
  leir_status st = leir_workload_emit(w, &eo, NULL, out, vals, np);
  c->name = strdup(leir_workload_name(w));
  c->level = leir_workload_level(w);
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_puts(&b, "{\"workload\":");
  char full[300];
  snprintf(full, sizeof full, "level%d/%s", c->level, leir_workload_name(w));
  leir__ds_put_str(&b, full);
  leir__sb_printf(&b, ",\"level\":%d,\"shape\":", c->level);
  leir__ds_put_str(&b, u->shape);
  leir__sb_puts(&b, ",\"dtype\":");
  leir__ds_put_str(&b, u->dtype);
  leir__sb_puts(&b, ",\"args\":[");
  for (size_t i = 0; st == LEIR_OK && i < np; i++) leir__sb_printf(&b, "%s%.17g", i ? "," : "", vals[i]);
  leir__sb_puts(&b, "]}");
  c->source = leir__sb_finish(&b, NULL);
  free(vals);
  if (!c->name || !c->source) return leir__error_nomem();
  return st;
}

/* A signature given as {"inputs": [{name, dtype, shape}], "outputs": [...]}
 * (the conformance corpus's form). */
static leir_status set_signature(leir_program *p, const leir__lit *sig, const leir__ds_unit *u) {
  leir_tensor_decl d[64];
  int64_t shapes[64][LEIR_MAX_RANK];
  size_t n = 0;
  for (int role = 0; role < 2; role++) {
    const leir__lit *list = leir__lit_get(sig, role ? "outputs" : "inputs");
    for (const leir__lit *e = list && list->kind == LEIR__LIT_LIST ? list->first : NULL; e; e = e->next) {
      if (n == 64) return leir__error(LEIR_ERR_SIGNATURE, "dataset.programs", u->id, 0, 0, "more than 64 known variables");
      const char *name = leir__lit_str(leir__lit_get(e, "name")), *dt = leir__lit_str(leir__lit_get(e, "dtype"));
      const leir__lit *sh = leir__lit_get(e, "shape");
      if (!name || !dt || leir_dtype_from_name(dt, &d[n].dtype) != LEIR_OK || !sh || sh->kind != LEIR__LIT_LIST)
        return leir__error(LEIR_ERR_SIGNATURE, "dataset.programs", u->id, 0, 0,
                           "line %zu: a known variable needs a name, a dtype and a shape", u->line_no);
      uint32_t r = 0;
      for (const leir__lit *x = sh->first; x; x = x->next) {
        if (r == LEIR_MAX_RANK || !leir__lit_int(x, &shapes[n][r]))
          return leir__error(LEIR_ERR_SIGNATURE, "dataset.programs", u->id, 0, 0,
                             "line %zu: a shape must be a list of at most %d integers", u->line_no, LEIR_MAX_RANK);
        r++;
      }
      d[n].name = name;
      d[n].role = role ? LEIR_ROLE_OUTPUT : LEIR_ROLE_INPUT;
      d[n].rank = r;
      d[n].shape = shapes[n];
      n++;
    }
  }
  return leir_program_set_signature(p, d, n);
}

static leir_status source_from_line(unit_ctx *c, leir_program **out) {
  const leir__ds_unit *u = c->u;
  leir__arena a;
  leir__arena_init(&a, 0);
  leir__lit_error e;
  leir_status st;
  const leir__lit *v = leir__lit_parse(&a, u->program_line, strlen(u->program_line), 0, 0, &e);
  const char *name = NULL, *leir = NULL, *yaml = NULL;
  int64_t level = 0;
  if (!v || v->kind != LEIR__LIT_DICT) {
    st = leir__error(LEIR_ERR_PARSE, "dataset.programs", u->id, 0, 0,
                     "line %zu is not a JSON object%s%s", u->line_no, v ? "" : ": ", v ? "" : e.message);
    goto done;
  }
  name = leir__lit_str(leir__lit_get(v, "name"));
  if (!name) name = leir__lit_str(leir__lit_get(v, "model"));
  if (!name) name = leir__lit_str(leir__lit_get(v, "id"));
  leir = leir__lit_str(leir__lit_get(v, "leir"));
  yaml = leir__lit_str(leir__lit_get(v, "program"));
  if (!leir__lit_int(leir__lit_get(v, "level"), &level)) {
    const char *ls = leir__lit_str(leir__lit_get(v, "level")); /* "level1", as the corpus writes it */
    if (ls && !strncmp(ls, "level", 5) && ls[5] >= '0' && ls[5] <= '9' && !ls[6]) level = ls[5] - '0';
  }
  if (yaml) {
    st = leir_program_parse_yaml(out, yaml, strlen(yaml), NULL);
  } else if (leir) {
    leir_parse_options po = LEIR_PARSE_OPTIONS_INIT;
    po.flags = LEIR_PARSE_LENIENT;
    st = leir_program_parse(out, leir, strlen(leir), &po);
    const leir__lit *sig = leir__lit_get(v, "signature");
    if (st == LEIR_OK) st = sig ? set_signature(*out, sig, u) : leir_program_infer_signature(*out);
  } else {
    st = leir__error(LEIR_ERR_PARSE, "dataset.programs", u->id, 0, 0,
                     "line %zu has neither \"program\" (a program file) nor \"leir\"", u->line_no);
  }
  if (st == LEIR_OK && !name) name = leir_program_name(*out);
  if (st == LEIR_OK) st = leir_program_check(*out, NULL, NULL);
done:;
  char dflt[64];
  snprintf(dflt, sizeof dflt, "program%zu", u->line_no);
  c->name = strdup(name && *name ? name : dflt);
  c->level = (int)level;
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_puts(&b, "{\"program\":");
  leir__ds_put_str(&b, u->id);
  leir__sb_printf(&b, ",\"level\":%d}", c->level);
  c->source = leir__sb_finish(&b, NULL);
  leir__arena_release(&a);
  if (!c->name || !c->source) return leir__error_nomem();
  return st;
}

/* ---- states ------------------------------------------------------------ */

static leir_status add_state(unit_ctx *c, leir_program *p, uint32_t depth, const char *walk,
                             size_t *index) {
  uint64_t h = leir_program_hash_alpha(p);
  for (size_t i = 0; i < c->n_states; i++)
    if (c->states[i].hash == h) {
      leir_program_free(p);
      *index = i;
      return LEIR_OK;
    }
  if (c->n_states == c->cap_states) {
    size_t nc = c->cap_states ? c->cap_states * 2 : 8;
    state *v = realloc(c->states, nc * sizeof *v);
    if (!v) goto nomem;
    c->states = v;
    c->cap_states = nc;
  }
  state *s = &c->states[c->n_states];
  memset(s, 0, sizeof *s);
  s->p = p;
  s->hash = h;
  s->depth = depth;
  if (leir_program_print(p, 0, &s->text, NULL) != LEIR_OK || !(s->walk = strdup(walk))) {
    leir_free(s->text);
    goto nomem;
  }
  *index = c->n_states++;
  return LEIR_OK;
nomem:
  leir_program_free(p);
  return leir__error_nomem();
}

static int enabled_step(const unit_ctx *c, const leir_step *st) {
  size_t k = leir_step_strategy(st);
  return k < 256 && c->ds->cfg.enabled[k];
}

/* Seeded random walks from the source: each step is a uniformly drawn
 * candidate (of the enabled strategies) of the current state. */
/* The caller's cancel flag (SIGTERM/SIGINT in the tool) is checked between
 * the walk's steps, between states and before and after each state's
 * verification batch, so a unit stops within one batch. A cancelled unit
 * writes nothing: its file is written whole at the end (leir__ds_unit_build),
 * so a resumed build redoes it from the start. */
static bool cancel_requested(const unit_ctx *c) {
  return c->ds->opts.cancel && *c->ds->opts.cancel;
}

static leir_status unit_cancelled(const unit_ctx *c) {
  return leir__error(LEIR_ERR_CANCELLED, "dataset.cancelled", NULL, 0, 0,
                     "cancelled during unit %s (nothing of it was written; a resumed build redoes it)",
                     c->u->id);
}

/* A walk stops at a state whose text is longer than this: some steps grow
 * a program (unrolling, splits), and every later step lists the candidates
 * of the grown program, so a deep walk could otherwise grow without end. */
#define MAX_WALK_STATE_BYTES (256u << 10)

static leir_status walk(unit_ctx *c) {
  const leir__ds_config *cfg = &c->ds->cfg;
  for (uint32_t w = 0; w < cfg->walks; w++) {
    leir__rng r = leir__rng_derive(cfg->seed, c->u->id, 1000 + w);
    size_t cur = 0;
    for (uint32_t d = 0; d < cfg->depth; d++) {
      if (cancel_requested(c)) return unit_cancelled(c);
      if (strlen(c->states[cur].text) > MAX_WALK_STATE_BYTES) break;
      leir_candidates *cands = NULL;
      if (leir_candidates_list(&cands, c->states[cur].p, NULL) != LEIR_OK) break;
      size_t n = leir_candidates_count(cands), m = 0;
      size_t *idx = malloc((n ? n : 1) * sizeof *idx);
      if (!idx) {
        leir_candidates_free(cands);
        return leir__error_nomem();
      }
      for (size_t i = 0; i < n; i++)
        if (enabled_step(c, leir_candidates_step(cands, i))) idx[m++] = i;
      if (m == 0) {
        free(idx);
        leir_candidates_free(cands);
        break;
      }
      size_t pick = idx[leir__rng_below(&r, m)];
      free(idx);
      leir_program *next = NULL;
      leir_status st = leir_candidates_apply(&next, cands, pick);
      if (st != LEIR_OK) {
        leir_candidates_free(cands);
        break;
      }
      leir__strbuf wb = LEIR__STRBUF_INIT;
      const char *pw = c->states[cur].walk;
      leir__sb_put(&wb, pw, strlen(pw) - 1); /* drop the ']' */
      if (strlen(pw) > 2) leir__sb_putc(&wb, ',');
      leir__ds_put_str(&wb, leir_step_text(leir_candidates_step(cands, pick)));
      leir__sb_putc(&wb, ']');
      char *nw = leir__sb_finish(&wb, NULL);
      leir_candidates_free(cands);
      if (!nw) {
        leir_program_free(next);
        return leir__error_nomem();
      }
      size_t at;
      st = add_state(c, next, c->states[cur].depth + 1, nw, &at);
      free(nw);
      if (st != LEIR_OK) return st;
      cur = at;
    }
  }
  return LEIR_OK;
}

/* ---- candidates of one state ------------------------------------------ */

static void shuffle(size_t *v, size_t n, leir__rng *r) {
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)leir__rng_below(r, i);
    size_t t = v[i - 1];
    v[i - 1] = v[j];
    v[j] = t;
  }
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

/* The sampled candidates of a state, in list order. */
static leir_status sample(unit_ctx *c, const state *s, const leir_candidates *cands, size_t **out,
                          size_t *nout) {
  const leir__ds_config *cfg = &c->ds->cfg;
  size_t n = leir_candidates_count(cands);
  size_t *all = malloc((n ? n : 1) * sizeof *all), m = 0;
  size_t *grp = malloc((n ? n : 1) * sizeof *grp);
  if (!all || !grp) {
    free(all);
    free(grp);
    return leir__error_nomem();
  }
  char label[600];
  for (size_t k = 0; k < leir_strategy_count(); k++) {
    if (k >= 256 || !cfg->enabled[k]) continue;
    size_t g = 0;
    for (size_t i = 0; i < n; i++)
      if (leir_step_strategy(leir_candidates_step(cands, i)) == k) grp[g++] = i;
    if (cfg->per_strategy && g > cfg->per_strategy) {
      snprintf(label, sizeof label, "%s#%016llx", c->u->id, (unsigned long long)s->hash);
      leir__rng r = leir__rng_derive(cfg->seed, label, 2000 + k);
      shuffle(grp, g, &r);
      g = cfg->per_strategy;
    }
    memcpy(all + m, grp, g * sizeof *grp);
    m += g;
  }
  free(grp);
  if (cfg->per_state && m > cfg->per_state) {
    snprintf(label, sizeof label, "%s#%016llx", c->u->id, (unsigned long long)s->hash);
    leir__rng r = leir__rng_derive(cfg->seed, label, 3000);
    shuffle(all, m, &r);
    m = cfg->per_state;
  }
  qsort(all, m, sizeof *all, cmp_size);
  *out = all;
  *nout = m;
  return LEIR_OK;
}

static void put_sample(unit_ctx *c, const state *s, const leir_candidates *cands, size_t i,
                       const leir_program *t, const char *ttext, const leir_verify_report *rep,
                       const char *backend, const char *cot, const leir_timing *tm) {
  leir__strbuf *b = &c->out;
  const leir_step *step = leir_candidates_step(cands, i);
  const leir_strategy_info *info = leir_strategy_info_at(leir_step_strategy(step));
  char label[600];
  snprintf(label, sizeof label, "%s#%016llx#%s", c->u->id, (unsigned long long)s->hash,
           leir_step_text(step));
  leir__rng idr = leir__rng_derive(0, label, 0);
  leir__sb_printf(b, "{\"type\":\"sample\",\"schema\":%d,\"id\":", LEIR__DATASET_SCHEMA);
  leir__ds_put_hex(b, leir__rng_next(&idr));
  leir__sb_puts(b, ",\"unit\":");
  leir__ds_put_str(b, c->u->id);
  leir__sb_puts(b, ",\"source\":");
  leir__sb_puts(b, c->source);
  leir__sb_puts(b, ",\"name\":");
  leir__ds_put_str(b, c->name);
  leir__sb_printf(b, ",\"level\":%d,\"state\":{\"id\":", c->level);
  leir__ds_put_hex(b, s->hash);
  leir__sb_printf(b, ",\"depth\":%u,\"walk\":%s},\"original_IR\":", s->depth, s->walk);
  leir__ds_put_str(b, s->text);
  leir__sb_puts(b, ",\"original_hash\":");
  leir__ds_put_hex(b, leir_program_hash(s->p));
  leir__sb_puts(b, ",\"known\":");
  leir__ds_put_known(b, s->p);
  leir__sb_puts(b, ",\"strategy\":");
  leir__ds_put_str(b, info->name);
  leir__sb_printf(b, ",\"strategy_index\":%u,\"strategy_level\":", info->index);
  leir__ds_put_str(b, leir_level_name(info->level));
  leir__sb_puts(b, ",\"step\":");
  leir__ds_put_str(b, leir_step_text(step));
  char *sj = NULL;
  if (leir_step_to_json(step, &sj, NULL) == LEIR_OK) {
    leir__sb_puts(b, ",\"step_json\":");
    leir__sb_puts(b, sj);
  }
  leir_free(sj);
  leir__sb_puts(b, ",\"exactness\":");
  leir__ds_put_str(b, leir_exactness_name(leir_candidates_exactness(cands, i)));
  leir__sb_puts(b, ",\"transformed_IR\":");
  leir__ds_put_str(b, ttext);
  leir__sb_puts(b, ",\"transformed_hash\":");
  leir__ds_put_hex(b, leir_program_hash(t));
  leir__sb_puts(b, ",\"transformed_alpha_hash\":");
  leir__ds_put_hex(b, leir_program_hash_alpha(t));
  leir__sb_puts(b, ",\"verdict\":");
  leir__ds_put_str(b, leir_verdict_name(rep->verdict));
  leir__sb_puts(b, ",\"verify\":{\"backend\":");
  leir__ds_put_str(b, backend);
  leir__sb_printf(b, ",\"seed\":%llu,\"input_sets\":%u,\"class\":",
                  (unsigned long long)rep->seed, rep->input_sets);
  leir__ds_put_str(b, leir_verify_class_name(rep->candidate_class));
  leir__sb_printf(b, ",\"max_abs_err\":%.17g,\"max_rel_err\":%.17g,\"max_ulp\":%llu}",
                  rep->max_abs_err, rep->max_rel_err, (unsigned long long)rep->max_ulp);
  leir__sb_puts(b, ",\"errors\":null,\"CoT\":");
  leir__ds_put_str(b, cot);
  if (tm) {
    leir__sb_printf(b, ",\"time_ms\":%.6g,\"original_time_ms\":%.6g,\"speedup\":%.6g,\"timing\":{\"backend\":",
                    tm[1].median_s * 1e3, tm[0].median_s * 1e3, tm[1].speedup);
    leir__ds_put_str(b, c->ds->cfg.measure_backend ? c->ds->cfg.measure_backend : "cpu");
    leir__sb_printf(b, ",\"runs\":%u,\"spread\":%.4g,\"noisy\":%s}}\n", tm[1].runs, tm[1].spread,
                    tm[0].noisy || tm[1].noisy ? "true" : "false");
  } else {
    leir__sb_puts(b, ",\"time_ms\":null,\"speedup\":null}\n");
  }
}

static leir_status do_state(unit_ctx *c, size_t si) {
  leir_dataset *ds = c->ds;
  const leir__ds_config *cfg = &ds->cfg;
  state *s = &c->states[si];
  leir_candidates *cands = NULL;
  leir_status st = leir_candidates_list(&cands, s->p, NULL);
  if (st != LEIR_OK) {
    put_reject(c, s, NULL, NULL, "candidates", NULL, last_message());
    return LEIR_OK;
  }
  size_t *pick = NULL, m = 0;
  if ((st = sample(c, s, cands, &pick, &m)) != LEIR_OK) goto done;
  leir_program **progs = calloc(m ? m : 1, sizeof *progs);
  char **texts = calloc(m ? m : 1, sizeof *texts);
  size_t *which = calloc(m ? m : 1, sizeof *which);
  uint32_t *classes = calloc(m ? m : 1, sizeof *classes);
  leir_verify_report **reps = calloc(m ? m : 1, sizeof *reps);
  uint64_t *hashes = calloc(m ? m : 1, sizeof *hashes);
  size_t k = 0;
  leir_verifier *ver = NULL;
  if (!progs || !texts || !which || !classes || !reps || !hashes) {
    st = leir__error_nomem();
    goto out;
  }
  for (size_t j = 0; j < m; j++) {
    if (cancel_requested(c)) {
      st = unit_cancelled(c);
      goto out;
    }
    size_t i = pick[j];
    const leir_step *step = leir_candidates_step(cands, i);
    const char *sname = leir_strategy_info_at(leir_step_strategy(step))->name;
    leir_program *t = NULL;
    if (leir_candidates_apply(&t, cands, i) != LEIR_OK) {
      put_reject(c, s, sname, leir_step_text(step), "apply", NULL, last_message());
      continue;
    }
    char *text = NULL;
    if (leir_program_print(t, 0, &text, NULL) != LEIR_OK) {
      leir_program_free(t);
      st = leir__error_nomem();
      goto out;
    }
    uint64_t h = leir_program_hash(t);
    int dup = !strcmp(text, s->text);
    for (size_t q = 0; !dup && q < k; q++) dup = hashes[q] == h && !strcmp(texts[q], text);
    if (dup) {
      put_reject(c, s, sname, leir_step_text(step), !strcmp(text, s->text) ? "noop" : "duplicate", NULL,
                 !strcmp(text, s->text) ? "the step leaves the program unchanged"
                                        : "an earlier step of this state gives the same program");
      leir_free(text);
      leir_program_free(t);
      continue;
    }
    progs[k] = t;
    texts[k] = text;
    hashes[k] = h;
    which[k] = i;
    classes[k] = leir_candidates_exactness(cands, i) == LEIR_EXACT ? LEIR_VERIFY_CLASS_EXACT
                                                                  : LEIR_VERIFY_CLASS_REASSOCIATING;
    k++;
  }
  if (k > 0 && cancel_requested(c)) {
    st = unit_cancelled(c);
    goto out;
  }
  if (k > 0) {
    leir_program_cost cost;
    uint64_t evals = leir_program_cost_get(s->p, &cost) == LEIR_OK ? cost.evaluations : UINT64_MAX;
    leir_backend *be = NULL;
    if ((st = leir__ds_backend(ds, evals, &be)) != LEIR_OK) goto out;
    leir_verifier_options vo = LEIR_VERIFIER_OPTIONS_INIT;
    vo.seed = cfg->verify_seed;
    vo.input_sets = cfg->input_sets;
    if ((st = leir_verifier_new(&ver, be, s->p, &vo)) != LEIR_OK) goto out;
    leir_verifier_judge_batch(ver, (const leir_program *const *)progs, classes, k, reps);
    if (cancel_requested(c)) {
      st = unit_cancelled(c);
      goto out;
    }
    for (size_t q = 0; q < k; q++) {
      const leir_step *step = leir_candidates_step(cands, which[q]);
      const char *sname = leir_strategy_info_at(leir_step_strategy(step))->name;
      c->verified++;
      if (!reps[q]) {
        put_reject(c, s, sname, leir_step_text(step), "verify", NULL, last_message());
        continue;
      }
      leir_verdict v = reps[q]->verdict;
      if (!(v == LEIR_VERDICT_EQUAL || (v == LEIR_VERDICT_CLOSE && cfg->keep_close))) {
        put_reject(c, s, sname, leir_step_text(step), "verify", leir_verdict_name(v),
                   reps[q]->message ? reps[q]->message : "");
        continue;
      }
      char *cot = NULL;
      if (leir_step_cot(&cot, NULL, s->p, step) != LEIR_OK) {
        put_reject(c, s, sname, leir_step_text(step), "cot", leir_verdict_name(v), last_message());
        continue;
      }
      leir_timing tm[2];
      int timed = 0;
      if (cfg->measure) {
        if (!ds->timer &&
            leir_backend_open(&ds->timer, cfg->measure_backend ? cfg->measure_backend : "cpu", NULL) != LEIR_OK)
          ds->timer = NULL;
        leir_bench_options bo = LEIR_BENCH_OPTIONS_INIT;
        bo.min_runs = cfg->measure_min_runs ? cfg->measure_min_runs : 1;
        bo.max_seconds = cfg->measure_max_seconds > 0 ? cfg->measure_max_seconds : 2;
        const leir_program *pair[2] = {s->p, progs[q]};
        timed = ds->timer && leir_bench(ds->timer, pair, 2, &bo, tm) == LEIR_OK;
      }
      put_sample(c, s, cands, which[q], progs[q], texts[q], reps[q], leir_backend_get_name(be), cot,
                 timed ? tm : NULL);
      leir_free(cot);
      c->kept++;
    }
  }
out:
  leir_verifier_free(ver);
  for (size_t q = 0; q < k; q++) {
    leir_program_free(progs[q]);
    leir_free(texts[q]);
    leir_verify_report_free(reps ? reps[q] : NULL);
  }
  free(progs);
  free(texts);
  free(which);
  free(classes);
  free(reps);
  free(hashes);
done:
  free(pick);
  leir_candidates_free(cands);
  return st;
}

leir_status leir__ds_unit_build(leir_dataset *ds, size_t u, uint64_t *verified, uint64_t *kept) {
  unit_ctx c;
  memset(&c, 0, sizeof c);
  c.ds = ds;
  c.u = &ds->units[u];
  leir_program *src = NULL;
  leir_status st = c.u->workload ? source_from_workload(&c, &src) : source_from_line(&c, &src);
  if (st == LEIR_ERR_NOMEM) goto done;
  if (st != LEIR_OK) {
    put_reject(&c, NULL, NULL, NULL, "source", NULL, last_message());
    leir_program_free(src);
    st = LEIR_OK;
  } else {
    leir_program_cost cost;
    if (leir_program_cost_get(src, &cost) != LEIR_OK || cost.evaluations > ds->cfg.max_source_evaluations) {
      put_reject(&c, NULL, NULL, NULL, "source", NULL,
                 "the program needs more evaluations than sources.max_evaluations");
      leir_program_free(src);
    } else {
      size_t at;
      if ((st = add_state(&c, src, 0, "[]", &at)) != LEIR_OK) goto done;
      if ((st = walk(&c)) != LEIR_OK) goto done;
      for (size_t i = 0; i < c.n_states; i++) {
        if (cancel_requested(&c)) {
          st = unit_cancelled(&c);
          goto done;
        }
        if ((st = do_state(&c, i)) != LEIR_OK) goto done;
      }
    }
  }
  leir__sb_puts(&c.out, "{\"type\":\"done\",\"unit\":");
  leir__ds_put_str(&c.out, c.u->id);
  leir__sb_printf(&c.out, ",\"states\":%zu,\"verified\":%llu,\"kept\":%llu}\n", c.n_states,
                  (unsigned long long)c.verified, (unsigned long long)c.kept);
  size_t len = 0;
  char *text = leir__sb_finish(&c.out, &len);
  if (!text) {
    st = leir__error_nomem();
    goto done;
  }
  char *path = leir__ds_unit_path(ds, u);
  st = path ? leir__ds_write_atomic(path, text, len) : leir__error_nomem();
  free(path);
  free(text);
  *verified = c.verified;
  *kept = c.kept;
done:
  leir__sb_release(&c.out);
  for (size_t i = 0; i < c.n_states; i++) {
    leir_program_free(c.states[i].p);
    leir_free(c.states[i].text);
    free(c.states[i].walk);
  }
  free(c.states);
  free(c.name);
  free(c.source);
  return st;
}
