/* The outputs of a dataset build, from the finished units
 * (docs/dataset.md): held-out eval states, the per-strategy cap and the
 * filtering rules of the reference (pipeline-reference.md §2.3, §4, with
 * seeded draws and per-strategy counters), multi-label records, and the
 * files: train.jsonl, eval.jsonl, archive.jsonl, rejections.jsonl,
 * summary.json, README.md and SVG histograms. Everything here is a function
 * of the unit files and the config, so the files are byte-identical for the
 * same config whatever the sharding or the interruptions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds.h"
#include "error.h"
#include "literal.h"
#include "prompt.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

typedef struct smp {
  const char *line;      /* the unit file's line (NUL-terminated copy) */
  const leir__lit *v;
  const char *id, *unit, *name, *state, *orig, *strategy, *slevel, *tir, *cot, *verdict;
  int level, sidx;
  uint32_t depth;
  const leir__lit *known;
  size_t st;             /* state group */
  int eval;              /* in a held-out state */
  int capped;            /* dropped by the per-strategy cap */
  int ruled;             /* dropped by a single rule */
  int single;            /* written as a single record */
  uint64_t multi_items;  /* items in written multi records */
} smp;

typedef struct sgroup {
  size_t first, count;   /* samples[first .. first+count) */
  int eval;
} sgroup;

typedef struct multi {
  size_t group;
  size_t items[64];
  size_t n;
} multi;

typedef struct fin {
  leir_dataset *ds;
  leir__arena arena;
  char **texts;
  size_t n_texts;
  smp *s;
  size_t n, cap;
  sgroup *g;
  size_t ng, capg;
  multi *m;
  size_t nm, capm;
  const char **rejects;
  size_t nrej, caprej;
  uint64_t states_total, verified_total;
  /* counts */
  uint64_t by_stage[16], by_verdict[16];
  const char *stage_names[16];
  size_t n_stages;
  uint64_t rej_by_strategy[256];
  uint64_t filtered_cap, filtered_rule, multi_items_dropped, multi_records_dropped;
} fin;

#define GROW(arr, n, cap)                                              \
  do {                                                                 \
    if ((n) == (cap)) {                                                \
      size_t nc_ = (cap) ? (cap) * 2 : 64;                             \
      void *v_ = realloc((arr), nc_ * sizeof *(arr));                  \
      if (!v_) return leir__error_nomem();                             \
      (arr) = v_;                                                      \
      (cap) = nc_;                                                     \
    }                                                                  \
  } while (0)

static const char *str_of(const leir__lit *d, const char *k) {
  const char *s = leir__lit_str(leir__lit_get(d, k));
  return s ? s : "";
}

static int int_of(const leir__lit *d, const char *k) {
  int64_t v = 0;
  leir__lit_int(leir__lit_get(d, k), &v);
  return (int)v;
}

static void count_stage(fin *f, const char *stage, const char *verdict) {
  size_t i;
  for (i = 0; i < f->n_stages; i++)
    if (!strcmp(f->stage_names[i], stage)) break;
  if (i == f->n_stages && f->n_stages < 16) f->stage_names[f->n_stages++] = stage;
  if (i < 16) f->by_stage[i]++;
  leir_verdict v;
  if (verdict && *verdict && leir_verdict_from_name(verdict, &v) == LEIR_OK && (size_t)v < 16) f->by_verdict[v]++;
}

static leir_status load(fin *f) {
  leir_dataset *ds = f->ds;
  f->texts = calloc(ds->n_units ? ds->n_units : 1, sizeof *f->texts);
  if (!f->texts) return leir__error_nomem();
  f->n_texts = ds->n_units;
  for (size_t u = 0; u < ds->n_units; u++) {
    char *path = leir__ds_unit_path(ds, u);
    if (!path) return leir__error_nomem();
    size_t len = 0;
    leir_status st = leir__ds_read_file(path, &f->texts[u], &len);
    free(path);
    if (st != LEIR_OK) return st;
    char *p = f->texts[u], *end = p + len;
    const char *last_state = NULL;
    while (p < end) {
      char *nl = memchr(p, '\n', (size_t)(end - p));
      if (!nl) nl = end;
      *nl = '\0';
      leir__lit_error e;
      const leir__lit *v = leir__lit_parse(&f->arena, p, (size_t)(nl - p), 0, 0, &e);
      if (!v) {
        if (e.nomem) return leir__error_nomem();
        return leir__error(LEIR_ERR_PARSE, "dataset.unit", ds->units[u].id, 0, 0,
                           "unit file %06zu is damaged (%s); delete it to rebuild the unit", u, e.message);
      }
      const char *type = str_of(v, "type");
      if (!strcmp(type, "sample")) {
        GROW(f->s, f->n, f->cap);
        smp *s = &f->s[f->n];
        memset(s, 0, sizeof *s);
        s->line = p;
        s->v = v;
        s->id = str_of(v, "id");
        s->unit = str_of(v, "unit");
        s->name = str_of(v, "name");
        s->level = int_of(v, "level");
        const leir__lit *stl = leir__lit_get(v, "state");
        s->state = str_of(stl, "id");
        s->depth = (uint32_t)int_of(stl, "depth");
        s->orig = str_of(v, "original_IR");
        s->known = leir__lit_get(v, "known");
        s->strategy = str_of(v, "strategy");
        s->sidx = int_of(v, "strategy_index");
        s->slevel = str_of(v, "strategy_level");
        s->tir = str_of(v, "transformed_IR");
        s->cot = str_of(v, "CoT");
        s->verdict = str_of(v, "verdict");
        if (!(f->ng && last_state && !strcmp(last_state, s->state) && f->g[f->ng - 1].first + f->g[f->ng - 1].count == f->n)) {
          GROW(f->g, f->ng, f->capg);
          f->g[f->ng].first = f->n;
          f->g[f->ng].count = 0;
          f->g[f->ng].eval = 0;
          f->ng++;
        }
        f->g[f->ng - 1].count++;
        s->st = f->ng - 1;
        last_state = s->state;
        f->n++;
      } else if (!strcmp(type, "reject")) {
        GROW(f->rejects, f->nrej, f->caprej);
        f->rejects[f->nrej++] = p;
        count_stage(f, str_of(v, "stage"), str_of(v, "verdict"));
        size_t k;
        if (leir_strategy_find(str_of(v, "strategy"), &k) == LEIR_OK && k < 256) f->rej_by_strategy[k]++;
      } else if (!strcmp(type, "done")) {
        f->states_total += (uint64_t)int_of(v, "states");
        f->verified_total += (uint64_t)int_of(v, "verified");
      }
      p = nl + 1;
    }
  }
  return LEIR_OK;
}

/* ---- selection ---------------------------------------------------------- */

static const leir__ds_rule *rule_of(const leir__ds_rule *rules, size_t n, int sidx) {
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < rules[i].n; k++)
      if (rules[i].strategies[k] == sidx) return &rules[i];
  return NULL;
}

static int cmp_sz(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

static leir_status select_records(fin *f) {
  const leir__ds_config *cfg = &f->ds->cfg;
  /* held-out states */
  leir__rng er = leir__rng_derive(cfg->seed, "eval", 0);
  for (size_t g = 0; g < f->ng; g++) {
    f->g[g].eval = leir__rng_unit(&er) < cfg->eval_fraction;
    for (size_t i = 0; i < f->g[g].count; i++) f->s[f->g[g].first + i].eval = f->g[g].eval;
  }
  /* the per-strategy cap of singles */
  size_t *idx = malloc((f->n ? f->n : 1) * sizeof *idx);
  if (!idx) return leir__error_nomem();
  for (size_t k = 0; k < leir_strategy_count(); k++) {
    size_t m = 0;
    for (size_t i = 0; i < f->n; i++)
      if (!f->s[i].eval && f->s[i].sidx == (int)k) idx[m++] = i;
    if (m <= cfg->single_cap) continue;
    leir__rng r = leir__rng_derive(cfg->seed, "cap", k);
    for (size_t i = m; i > 1; i--) {
      size_t j = (size_t)leir__rng_below(&r, i), t = idx[i - 1];
      idx[i - 1] = idx[j];
      idx[j] = t;
    }
    for (size_t i = cfg->single_cap; i < m; i++) f->s[idx[i]].capped = 1;
    f->filtered_cap += m - cfg->single_cap;
  }
  free(idx);
  /* the single rules: one draw per record, counters per strategy */
  uint64_t counters[256] = {0};
  leir__rng sr = leir__rng_derive(cfg->seed, "single", 0);
  for (size_t i = 0; i < f->n; i++) {
    smp *s = &f->s[i];
    if (s->eval || s->capped) continue;
    double r = leir__rng_unit(&sr);
    const leir__ds_rule *rule = rule_of(cfg->single_rules, cfg->n_single_rules, s->sidx);
    if (rule && !(r < rule->keep && s->sidx >= 0 && s->sidx < 256 && counters[s->sidx] < rule->cap)) {
      s->ruled = 1;
      f->filtered_rule++;
      continue;
    }
    if (rule && s->sidx >= 0 && s->sidx < 256) counters[s->sidx]++;
    s->single = 1;
  }
  /* multi-label records */
  if (!cfg->multi_enabled) return LEIR_OK;
  uint64_t mcount[256] = {0};
  leir__rng mr = leir__rng_derive(cfg->seed, "multi-filter", 0);
  for (size_t g = 0; g < f->ng; g++) {
    if (f->g[g].eval) continue;
    size_t labels[256], L = 0;
    int seen[256] = {0};
    for (size_t i = 0; i < f->g[g].count && L < 256; i++) {
      smp *s = &f->s[f->g[g].first + i];
      if (s->sidx < 0 || s->sidx >= 256 || seen[s->sidx]) continue;
      seen[s->sidx] = 1;
      labels[L++] = f->g[g].first + i;
    }
    if (L < 2) continue;
    size_t maxn = L < cfg->multi_max_items ? L : cfg->multi_max_items;
    if (maxn > 64) maxn = 64;
    if (maxn < 2) continue;
    leir__rng dr = leir__rng_derive(cfg->seed, f->s[f->g[g].first].state, 4000 + g);
    uint64_t repeats = 2 + leir__rng_below(&dr, L - 1);
    size_t first_multi = f->nm;
    for (uint64_t rep = 0; rep < repeats; rep++) {
      size_t size = 2 + (size_t)leir__rng_below(&dr, maxn - 1);
      size_t pool[256];
      memcpy(pool, labels, L * sizeof *pool);
      multi cand;
      memset(&cand, 0, sizeof cand);
      cand.group = g;
      for (size_t i = 0; i < size; i++) {
        size_t j = i + (size_t)leir__rng_below(&dr, L - i), t = pool[i];
        pool[i] = pool[j];
        pool[j] = t;
        cand.items[cand.n++] = pool[i];
      }
      /* the item filter: one draw per item */
      multi kept;
      memset(&kept, 0, sizeof kept);
      kept.group = g;
      for (size_t i = 0; i < cand.n; i++) {
        smp *s = &f->s[cand.items[i]];
        double r = leir__rng_unit(&mr);
        const leir__ds_rule *rule = rule_of(cfg->multi_rules, cfg->n_multi_rules, s->sidx);
        if (rule && !(r < rule->keep && mcount[s->sidx] < rule->cap)) {
          f->multi_items_dropped++;
          continue;
        }
        if (rule) mcount[s->sidx]++;
        kept.items[kept.n++] = cand.items[i];
      }
      if (kept.n < cfg->multi_min_items || kept.n < 2) {
        f->multi_records_dropped++;
        continue;
      }
      /* one record per set of transformed IRs of a state */
      size_t a[64], b[64];
      memcpy(a, kept.items, kept.n * sizeof *a);
      qsort(a, kept.n, sizeof *a, cmp_sz);
      int dup = 0;
      for (size_t q = first_multi; q < f->nm && !dup; q++) {
        if (f->m[q].n != kept.n) continue;
        memcpy(b, f->m[q].items, kept.n * sizeof *b);
        qsort(b, kept.n, sizeof *b, cmp_sz);
        dup = !memcmp(a, b, kept.n * sizeof *a);
      }
      if (dup) {
        f->multi_records_dropped++;
        continue;
      }
      GROW(f->m, f->nm, f->capm);
      f->m[f->nm++] = kept;
      for (size_t i = 0; i < kept.n; i++) f->s[kept.items[i]].multi_items++;
    }
  }
  return LEIR_OK;
}

/* ---- writing ------------------------------------------------------------ */

static void put_lit(leir__strbuf *b, const leir__lit *v) {
  if (!v) {
    leir__sb_puts(b, "null");
    return;
  }
  switch (v->kind) {
    case LEIR__LIT_NONE: leir__sb_puts(b, "null"); break;
    case LEIR__LIT_BOOL: leir__sb_puts(b, v->i ? "true" : "false"); break;
    case LEIR__LIT_NUM:
      if (v->is_int) leir__sb_printf(b, "%lld", (long long)v->i);
      else leir__sb_printf(b, "%.17g", v->d);
      break;
    case LEIR__LIT_STR: leir__sb_put_json_string(b, v->s, v->n); break;
    case LEIR__LIT_LIST:
      leir__sb_putc(b, '[');
      for (const leir__lit *e = v->first; e; e = e->next) {
        put_lit(b, e);
        if (e->next) leir__sb_putc(b, ',');
      }
      leir__sb_putc(b, ']');
      break;
    case LEIR__LIT_DICT:
      leir__sb_putc(b, '{');
      for (const leir__lit *k = v->first; k; k = k->next) {
        put_lit(b, k);
        leir__sb_putc(b, ':');
        put_lit(b, k->value);
        if (k->next) leir__sb_putc(b, ',');
      }
      leir__sb_putc(b, '}');
      break;
  }
}

/* Python's repr() of a str: single quotes unless the text has a single
 * quote and no double quote. */
static void put_pyrepr(leir__strbuf *b, const char *s) {
  int q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
  leir__sb_putc(b, (char)q);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '\\') leir__sb_puts(b, "\\\\");
    else if (*p == q) leir__sb_printf(b, "\\%c", q);
    else if (*p == '\n') leir__sb_puts(b, "\\n");
    else if (*p == '\r') leir__sb_puts(b, "\\r");
    else if (*p == '\t') leir__sb_puts(b, "\\t");
    else if (*p < 0x20 || *p == 0x7f) leir__sb_printf(b, "\\x%02x", *p);
    else leir__sb_putc(b, (char)*p);
  }
  leir__sb_putc(b, (char)q);
}

/* The prompt of a state (samples carry its text and known variables). */
static leir_status prompt_of(fin *f, const smp *s, uint32_t n, char **out) {
  leir_tensor_decl decls[64];
  int64_t shapes[64][LEIR_MAX_RANK];
  size_t nd = 0;
  for (const leir__lit *e = s->known ? s->known->first : NULL; e && nd < 64; e = e->next, nd++) {
    decls[nd].name = str_of(e, "name");
    if (leir_dtype_from_name(str_of(e, "dtype"), &decls[nd].dtype) != LEIR_OK) decls[nd].dtype = LEIR_F32;
    decls[nd].role = !strcmp(str_of(e, "role"), "input") ? LEIR_ROLE_INPUT : LEIR_ROLE_OUTPUT;
    uint32_t r = 0;
    const leir__lit *sh = leir__lit_get(e, "shape");
    for (const leir__lit *d = sh ? sh->first : NULL; d && r < LEIR_MAX_RANK; d = d->next) {
      int64_t x = 0;
      leir__lit_int(d, &x);
      shapes[nd][r++] = x;
    }
    decls[nd].rank = r;
    decls[nd].shape = shapes[nd];
  }
  (void)f;
  return leir__prompt_build_text(s->orig, strlen(s->orig), s->name, decls, nd, n, out, NULL);
}

static void put_messages(leir__strbuf *b, const char *system, const char *user, const char *assistant) {
  leir__sb_puts(b, "\"messages\":[");
  if (system) {
    leir__sb_puts(b, "{\"role\":\"system\",\"content\":");
    leir__ds_put_str(b, system);
    leir__sb_puts(b, "},");
  }
  leir__sb_puts(b, "{\"role\":\"user\",\"content\":");
  leir__ds_put_str(b, user);
  leir__sb_puts(b, "}");
  if (assistant) {
    leir__sb_puts(b, ",{\"role\":\"assistant\",\"content\":");
    leir__ds_put_str(b, assistant);
    leir__sb_puts(b, "}");
  }
  leir__sb_puts(b, "]");
}

static char *single_response(const smp *s) {
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_puts(&b, "<think>");
  leir__sb_puts(&b, s->cot);
  leir__sb_puts(&b, "</think><answer>{\"transformed_IR\": ");
  leir__ds_put_str(&b, s->tir);
  leir__sb_puts(&b, ", \"applied_strategy\": ");
  leir__ds_put_str(&b, s->strategy);
  leir__sb_puts(&b, "}</answer>");
  return leir__sb_finish(&b, NULL);
}

static char *multi_response(const fin *f, const multi *m) {
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_printf(&b, "<think>These %zu transformed IRs can be individually analyzed as follows: ", m->n);
  for (size_t i = 0; i < m->n; i++) leir__sb_printf(&b, "%s%zu. %s", i ? "\n" : "", i, f->s[m->items[i]].cot);
  leir__sb_puts(&b, "</think><answer>[");
  for (size_t i = 0; i < m->n; i++) {
    const smp *s = &f->s[m->items[i]];
    leir__sb_printf(&b, "%s{'idx': %zu, 'transformed_IR': ", i ? ", " : "", i);
    put_pyrepr(&b, s->tir);
    leir__sb_puts(&b, ", 'applied_strategy': ");
    put_pyrepr(&b, s->strategy);
    leir__sb_putc(&b, '}');
  }
  leir__sb_puts(&b, "]</answer>");
  return leir__sb_finish(&b, NULL);
}

static uint64_t multi_id(const fin *f, const multi *m) {
  leir__strbuf b = LEIR__STRBUF_INIT;
  for (size_t i = 0; i < m->n; i++) leir__sb_puts(&b, f->s[m->items[i]].id);
  size_t len = 0;
  char *t = leir__sb_finish(&b, &len);
  uint64_t h = t ? XXH3_64bits(t, len) : 0;
  free(t);
  return h;
}

typedef struct outs {
  leir__strbuf train, eval, archive, rejections;
  uint64_t n_train_single, n_train_multi, n_eval_single, n_eval_multi;
} outs;

static leir_status write_state(fin *f, outs *o, size_t g) {
  const leir__ds_config *cfg = &f->ds->cfg;
  const sgroup *grp = &f->g[g];
  const smp *first = &f->s[grp->first];
  char *user = NULL, *resp = NULL;
  leir_status st;
  if (grp->eval) {
    /* held out: the single prompt and one "at least N" prompt */
    size_t L = 0;
    int seen[256] = {0};
    for (size_t i = 0; i < grp->count; i++) {
      int k = f->s[grp->first + i].sidx;
      if (k >= 0 && k < 256 && !seen[k]) seen[k] = 1, L++;
    }
    uint32_t ns[2] = {1, 0};
    if (cfg->multi_enabled && L >= 2) {
      leir__rng r = leir__rng_derive(cfg->seed, first->state, 5000 + g);
      size_t maxn = L < cfg->multi_max_items ? L : cfg->multi_max_items;
      ns[1] = maxn >= 2 ? (uint32_t)(2 + leir__rng_below(&r, maxn - 1)) : 0;
    }
    for (int v = 0; v < 2; v++) {
      if (!ns[v]) continue;
      if ((st = prompt_of(f, first, ns[v], &user)) != LEIR_OK) return st;
      char label[300];
      snprintf(label, sizeof label, "%s#%u", first->state, ns[v]);
      leir__rng idr = leir__rng_derive(cfg->seed, label, g);
      uint64_t id = leir__rng_next(&idr);
      for (int pass = 0; pass < 2; pass++) {
        leir__strbuf *b = pass ? &o->archive : &o->eval;
        leir__sb_puts(b, "{\"id\":");
        leir__ds_put_hex(b, id);
        leir__sb_printf(b, ",\"split\":\"eval\",\"kind\":\"%s\",\"n\":%u,", v ? "multi" : "single", ns[v]);
        put_messages(b, cfg->system_prompt, user, NULL);
        leir__sb_puts(b, ",\"name\":");
        leir__ds_put_str(b, first->name);
        leir__sb_printf(b, ",\"level\":%d,\"depth\":%u,\"unit\":", first->level, first->depth);
        leir__ds_put_str(b, first->unit);
        leir__sb_puts(b, ",\"state\":");
        leir__ds_put_str(b, first->state);
        leir__sb_puts(b, ",\"original_IR\":");
        leir__ds_put_str(b, first->orig);
        leir__sb_puts(b, ",\"known\":");
        put_lit(b, first->known);
        if (pass == 0) {
          leir__sb_puts(b, ",\"labels\":[");
          for (size_t i = 0; i < grp->count; i++) {
            const smp *s = &f->s[grp->first + i];
            leir__sb_puts(b, i ? ",{\"strategy\":" : "{\"strategy\":");
            leir__ds_put_str(b, s->strategy);
            leir__sb_puts(b, ",\"transformed_IR\":");
            leir__ds_put_str(b, s->tir);
            leir__sb_puts(b, ",\"verdict\":");
            leir__ds_put_str(b, s->verdict);
            leir__sb_putc(b, '}');
          }
          leir__sb_puts(b, "]}\n");
        } else {
          leir__sb_puts(b, ",\"samples\":[");
          for (size_t i = 0; i < grp->count; i++) {
            if (i) leir__sb_putc(b, ',');
            leir__sb_puts(b, f->s[grp->first + i].line);
          }
          leir__sb_puts(b, "]}\n");
        }
      }
      if (v) o->n_eval_multi++;
      else o->n_eval_single++;
      leir_free(user);
      user = NULL;
    }
    return LEIR_OK;
  }
  /* singles */
  for (size_t i = 0; i < grp->count; i++) {
    const smp *s = &f->s[grp->first + i];
    if (!s->single) continue;
    if ((st = prompt_of(f, s, 1, &user)) != LEIR_OK) return st;
    if (!(resp = single_response(s))) {
      leir_free(user);
      return leir__error_nomem();
    }
    leir__sb_putc(&o->train, '{');
    put_messages(&o->train, cfg->system_prompt, user, resp);
    leir__sb_puts(&o->train, "}\n");
    leir__sb_puts(&o->archive, "{\"id\":");
    leir__ds_put_str(&o->archive, s->id);
    leir__sb_puts(&o->archive, ",\"split\":\"train\",\"kind\":\"single\",\"n\":1,");
    put_messages(&o->archive, cfg->system_prompt, user, resp);
    leir__sb_puts(&o->archive, ",\"samples\":[");
    leir__sb_puts(&o->archive, s->line);
    leir__sb_puts(&o->archive, "]}\n");
    o->n_train_single++;
    leir_free(user);
    free(resp);
    user = NULL;
    resp = NULL;
  }
  /* multis of this state */
  for (size_t q = 0; q < f->nm; q++) {
    const multi *m = &f->m[q];
    if (m->group != g) continue;
    if ((st = prompt_of(f, first, (uint32_t)m->n, &user)) != LEIR_OK) return st;
    if (!(resp = multi_response(f, m))) {
      leir_free(user);
      return leir__error_nomem();
    }
    leir__sb_putc(&o->train, '{');
    put_messages(&o->train, cfg->system_prompt, user, resp);
    leir__sb_puts(&o->train, "}\n");
    leir__sb_puts(&o->archive, "{\"id\":");
    leir__ds_put_hex(&o->archive, multi_id(f, m));
    leir__sb_printf(&o->archive, ",\"split\":\"train\",\"kind\":\"multi\",\"n\":%zu,", m->n);
    put_messages(&o->archive, cfg->system_prompt, user, resp);
    leir__sb_puts(&o->archive, ",\"samples\":[");
    for (size_t i = 0; i < m->n; i++) {
      if (i) leir__sb_putc(&o->archive, ',');
      leir__sb_puts(&o->archive, f->s[m->items[i]].line);
    }
    leir__sb_puts(&o->archive, "]}\n");
    o->n_train_multi++;
    leir_free(user);
    free(resp);
    user = NULL;
    resp = NULL;
  }
  return LEIR_OK;
}

/* ---- summary, card and histograms ------------------------------------- */

typedef struct counts {
  uint64_t samples, single, multi_items, eval;
} counts;

static void put_counts(leir__strbuf *b, const counts *c) {
  leir__sb_printf(b, "{\"samples\":%llu,\"train_single\":%llu,\"multi_items\":%llu,\"eval_samples\":%llu}",
                  (unsigned long long)c->samples, (unsigned long long)c->single,
                  (unsigned long long)c->multi_items, (unsigned long long)c->eval);
}

static void add_counts(counts *c, const smp *s) {
  c->samples++;
  c->single += (uint64_t)s->single;
  c->multi_items += s->multi_items;
  c->eval += (uint64_t)s->eval;
}

static void svg_bars(leir__strbuf *b, const char *title, const char *const *labels,
                     const uint64_t *values, size_t n) {
  uint64_t max = 1;
  for (size_t i = 0; i < n; i++)
    if (values[i] > max) max = values[i];
  int row = 18, left = 250, width = 400, height = 40 + (int)n * row;
  leir__sb_printf(b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                  "font-family=\"sans-serif\" font-size=\"12\">\n"
                  "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                  "<text x=\"10\" y=\"20\" font-size=\"14\">",
                  left + width + 80, height);
  leir__sb_puts(b, title);
  leir__sb_puts(b, "</text>\n");
  for (size_t i = 0; i < n; i++) {
    int y = 30 + (int)i * row;
    int w = (int)((double)values[i] / (double)max * width);
    leir__sb_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>", left - 6, y + 12, labels[i]);
    leir__sb_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#4c78a8\"/>", left, y + 2, w, row - 4);
    leir__sb_printf(b, "<text x=\"%d\" y=\"%d\">%llu</text>\n", left + w + 4, y + 12, (unsigned long long)values[i]);
  }
  leir__sb_puts(b, "</svg>\n");
}

static leir_status write_file(fin *f, const char *name, leir__strbuf *b) {
  size_t len = 0;
  char *text = leir__sb_finish(b, &len);
  if (!text) return leir__error_nomem();
  char *path = leir__ds_join(f->ds->out_dir, name);
  leir_status st = path ? leir__ds_write_atomic(path, text, len) : leir__error_nomem();
  free(path);
  free(text);
  return st;
}

static leir_status summary_and_card(fin *f, outs *o) {
  leir_dataset *ds = f->ds;
  const leir__ds_config *cfg = &ds->cfg;
  size_t ns = leir_strategy_count();
  counts *per = calloc(ns, sizeof *per);
  counts lv[4] = {{0}}, dp[17] = {{0}};
  if (!per) return leir__error_nomem();
  for (size_t i = 0; i < f->n; i++) {
    const smp *s = &f->s[i];
    if (s->sidx >= 0 && (size_t)s->sidx < ns) add_counts(&per[s->sidx], s);
    add_counts(&lv[s->level >= 0 && s->level < 3 ? s->level : 3], s);
    add_counts(&dp[s->depth < 16 ? s->depth : 16], s);
  }
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_printf(&b, "{\"schema\":%d,\"name\":", LEIR__DATASET_SCHEMA);
  leir__ds_put_str(&b, cfg->name);
  leir__sb_puts(&b, ",\"config_hash\":");
  leir__ds_put_hex(&b, ds->config_hash);
  leir__sb_printf(&b, ",\"seed\":%llu,\"units\":%zu,\"states\":%llu,\"verified\":%llu,\"kept_samples\":%zu,",
                  (unsigned long long)cfg->seed, ds->n_units, (unsigned long long)f->states_total,
                  (unsigned long long)f->verified_total, f->n);
  leir__sb_printf(&b, "\"rejected\":{\"total\":%zu,\"by_stage\":{", f->nrej);
  for (size_t i = 0; i < f->n_stages; i++) {
    if (i) leir__sb_putc(&b, ',');
    leir__ds_put_str(&b, f->stage_names[i]);
    leir__sb_printf(&b, ":%llu", (unsigned long long)f->by_stage[i]);
  }
  leir__sb_puts(&b, "},\"by_verdict\":{");
  int first = 1;
  for (size_t v = 0; v < 16; v++) {
    if (!f->by_verdict[v]) continue;
    leir__sb_printf(&b, "%s\"%s\":%llu", first ? "" : ",", leir_verdict_name((leir_verdict)v),
                    (unsigned long long)f->by_verdict[v]);
    first = 0;
  }
  leir__sb_puts(&b, "},\"by_strategy\":{");
  first = 1;
  for (size_t k = 0; k < ns && k < 256; k++) {
    if (!f->rej_by_strategy[k]) continue;
    leir__sb_printf(&b, "%s\"%s\":%llu", first ? "" : ",", leir_strategy_info_at(k)->name,
                    (unsigned long long)f->rej_by_strategy[k]);
    first = 0;
  }
  leir__sb_printf(&b, "}},\"filtered\":{\"single_cap\":%llu,\"single_rules\":%llu,"
                  "\"multi_items\":%llu,\"multi_records\":%llu},",
                  (unsigned long long)f->filtered_cap, (unsigned long long)f->filtered_rule,
                  (unsigned long long)f->multi_items_dropped, (unsigned long long)f->multi_records_dropped);
  leir__sb_printf(&b, "\"records\":{\"train_single\":%llu,\"train_multi\":%llu,\"eval_single\":%llu,"
                  "\"eval_multi\":%llu},\"per_strategy\":{",
                  (unsigned long long)o->n_train_single, (unsigned long long)o->n_train_multi,
                  (unsigned long long)o->n_eval_single, (unsigned long long)o->n_eval_multi);
  first = 1;
  for (size_t k = 0; k < ns; k++) {
    if (!per[k].samples) continue;
    leir__sb_printf(&b, "%s\"%s\":", first ? "" : ",", leir_strategy_info_at(k)->name);
    put_counts(&b, &per[k]);
    first = 0;
  }
  leir__sb_puts(&b, "},\"per_level\":{");
  first = 1;
  for (int l = 0; l < 4; l++) {
    if (!lv[l].samples) continue;
    leir__sb_printf(&b, "%s\"%d\":", first ? "" : ",", l);
    put_counts(&b, &lv[l]);
    first = 0;
  }
  leir__sb_puts(&b, "},\"per_depth\":{");
  first = 1;
  for (int d = 0; d < 17; d++) {
    if (!dp[d].samples) continue;
    leir__sb_printf(&b, "%s\"%d\":", first ? "" : ",", d);
    put_counts(&b, &dp[d]);
    first = 0;
  }
  leir__sb_puts(&b, "}}\n");
  free(ds->summary);
  ds->summary = leir__sb_finish(&b, NULL);
  if (!ds->summary) {
    free(per);
    return leir__error_nomem();
  }
  leir__strbuf sb = LEIR__STRBUF_INIT;
  leir__sb_puts(&sb, ds->summary);
  leir_status st = write_file(f, "summary.json", &sb);

  /* histograms */
  const char *labels[256];
  uint64_t vals[256];
  size_t nl = 0;
  for (size_t k = 0; k < ns && nl < 256; k++)
    if (per[k].samples) {
      labels[nl] = leir_strategy_info_at(k)->name;
      vals[nl++] = per[k].single + per[k].multi_items;
    }
  leir__strbuf svg = LEIR__STRBUF_INIT;
  svg_bars(&svg, "Training labels per strategy (single records + multi items)", labels, vals, nl);
  if (st == LEIR_OK) st = write_file(f, "strategies.svg", &svg);
  else leir__sb_release(&svg);
  static const char *const lnames[4] = {"programs (no level)", "level 1", "level 2", "other"};
  static const char *const dnames[17] = {"depth 0", "depth 1", "depth 2", "depth 3", "depth 4", "depth 5",
                                         "depth 6", "depth 7", "depth 8", "depth 9", "depth 10", "depth 11",
                                         "depth 12", "depth 13", "depth 14", "depth 15", "depth 16+"};
  nl = 0;
  for (int l = 0; l < 4; l++)
    if (lv[l].samples) labels[nl] = lnames[l], vals[nl++] = lv[l].samples;
  for (int d = 0; d < 17; d++)
    if (dp[d].samples) labels[nl] = dnames[d], vals[nl++] = dp[d].samples;
  leir__strbuf svg2 = LEIR__STRBUF_INIT;
  svg_bars(&svg2, "Verified samples per workload level and walk depth", labels, vals, nl);
  if (st == LEIR_OK) st = write_file(f, "levels.svg", &svg2);
  else leir__sb_release(&svg2);

  /* the card */
  leir__strbuf c = LEIR__STRBUF_INIT;
  uint64_t total = o->n_train_single + o->n_train_multi;
  leir__sb_puts(&c, "---\npretty_name: ");
  leir__sb_put_yaml_string(&c, cfg->name, strlen(cfg->name));
  leir__sb_printf(&c,
                  "\nlicense: mit\nlanguage:\n- en\ntask_categories:\n- text-generation\ntags:\n"
                  "- tensor-programs\n- compiler-optimization\n- step-tp\n- leir\nsize_categories:\n- %s\n"
                  "configs:\n- config_name: default\n  data_files:\n  - split: train\n    path: train.jsonl\n"
                  "- config_name: eval\n  data_files:\n  - split: test\n    path: eval.jsonl\n"
                  "- config_name: archive\n  data_files:\n  - split: train\n    path: archive.jsonl\n---\n\n",
                  total < 1000 ? "n<1K" : total < 10000 ? "1K<n<10K" : total < 100000 ? "10K<n<100K" : "100K<n<1M");
  leir__sb_printf(&c, "# %s\n\n", cfg->name);
  leir__sb_puts(&c,
                "A Step-TP style dataset of single optimization steps on LEIR tensor programs, built by "
                "`leir dataset build` (libleir). Every label is one step of the named strategy, applied "
                "by libleir, verified against the program it transforms (verdict EQUAL, or CLOSE for "
                "reassociating steps when the config allows it), with a chain of thought quoted from the "
                "structural diff.\n\n");
  leir__sb_printf(&c,
                  "| | count |\n|---|---|\n| units (source programs) | %zu |\n| states (sources and walk states) | %llu |\n"
                  "| candidates verified | %llu |\n| samples kept | %zu |\n| candidates rejected | %zu |\n"
                  "| train single records | %llu |\n| train multi records | %llu |\n| eval prompts (single / multi) | %llu / %llu |\n\n",
                  ds->n_units, (unsigned long long)f->states_total, (unsigned long long)f->verified_total, f->n,
                  f->nrej, (unsigned long long)o->n_train_single, (unsigned long long)o->n_train_multi,
                  (unsigned long long)o->n_eval_single, (unsigned long long)o->n_eval_multi);
  leir__sb_puts(&c, "## Files\n\n"
                    "- `train.jsonl`: chat records `{\"messages\": [user, assistant]}`; the assistant text is "
                    "`<think>CoT</think><answer>{\"transformed_IR\": ..., \"applied_strategy\": ...}</answer>` "
                    "(multi records: a Python-literal list with `idx`).\n"
                    "- `eval.jsonl`: prompts of held-out states, with the verified labels for reference.\n"
                    "- `archive.jsonl`: every record with every field of its samples (ids, hashes, step as "
                    "text and JSON, verdict and error figures, walk from the source).\n"
                    "- `rejections.jsonl`: every candidate that was not kept, with the stage and the reason.\n"
                    "- `summary.json`: the counts below.\n\n");
  leir__sb_puts(&c, "## Per strategy\n\n| strategy | level | samples | train singles | multi items | eval samples |\n|---|---|---|---|---|---|\n");
  for (size_t k = 0; k < ns; k++)
    if (per[k].samples)
      leir__sb_printf(&c, "| %s | %s | %llu | %llu | %llu | %llu |\n", leir_strategy_info_at(k)->name,
                      leir_level_name(leir_strategy_info_at(k)->level), (unsigned long long)per[k].samples,
                      (unsigned long long)per[k].single, (unsigned long long)per[k].multi_items,
                      (unsigned long long)per[k].eval);
  leir__sb_puts(&c, "\n![labels per strategy](strategies.svg)\n\n## Per workload level and walk depth\n\n"
                    "| group | samples | train singles | multi items | eval samples |\n|---|---|---|---|---|\n");
  for (int l = 0; l < 4; l++)
    if (lv[l].samples)
      leir__sb_printf(&c, "| %s | %llu | %llu | %llu | %llu |\n", lnames[l], (unsigned long long)lv[l].samples,
                      (unsigned long long)lv[l].single, (unsigned long long)lv[l].multi_items,
                      (unsigned long long)lv[l].eval);
  for (int d = 0; d < 17; d++)
    if (dp[d].samples)
      leir__sb_printf(&c, "| %s | %llu | %llu | %llu | %llu |\n", dnames[d], (unsigned long long)dp[d].samples,
                      (unsigned long long)dp[d].single, (unsigned long long)dp[d].multi_items,
                      (unsigned long long)dp[d].eval);
  leir__sb_puts(&c, "\n![samples per level and depth](levels.svg)\n\n## Rejected candidates\n\n| stage | count |\n|---|---|\n");
  for (size_t i = 0; i < f->n_stages; i++)
    leir__sb_printf(&c, "| %s | %llu |\n", f->stage_names[i], (unsigned long long)f->by_stage[i]);
  leir__sb_printf(&c, "\nFiltering: %llu singles over the per-strategy cap (%llu), %llu dropped by the "
                      "single rules, %llu multi items and %llu multi records dropped.\n\n"
                      "Config hash `%016llx`, seed %llu, dataset schema %d.\n",
                  (unsigned long long)f->filtered_cap, (unsigned long long)cfg->single_cap,
                  (unsigned long long)f->filtered_rule, (unsigned long long)f->multi_items_dropped,
                  (unsigned long long)f->multi_records_dropped, (unsigned long long)ds->config_hash,
                  (unsigned long long)cfg->seed, LEIR__DATASET_SCHEMA);
  if (st == LEIR_OK) st = write_file(f, "README.md", &c);
  else leir__sb_release(&c);
  free(per);
  return st;
}

leir_status leir__ds_finalize(leir_dataset *ds) {
  fin f;
  memset(&f, 0, sizeof f);
  f.ds = ds;
  leir__arena_init(&f.arena, 0);
  outs o;
  memset(&o, 0, sizeof o);
  leir_status st = load(&f);
  if (st == LEIR_OK) st = select_records(&f);
  for (size_t g = 0; st == LEIR_OK && g < f.ng; g++) st = write_state(&f, &o, g);
  for (size_t i = 0; st == LEIR_OK && i < f.nrej; i++) {
    leir__sb_puts(&o.rejections, f.rejects[i]);
    leir__sb_putc(&o.rejections, '\n');
  }
  if (st == LEIR_OK) st = write_file(&f, "train.jsonl", &o.train);
  if (st == LEIR_OK) st = write_file(&f, "eval.jsonl", &o.eval);
  if (st == LEIR_OK) st = write_file(&f, "archive.jsonl", &o.archive);
  if (st == LEIR_OK) st = write_file(&f, "rejections.jsonl", &o.rejections);
  if (st == LEIR_OK) st = summary_and_card(&f, &o);
  leir__sb_release(&o.train);
  leir__sb_release(&o.eval);
  leir__sb_release(&o.archive);
  leir__sb_release(&o.rejections);
  for (size_t i = 0; i < f.n_texts; i++) free(f.texts[i]);
  free(f.texts);
  free(f.s);
  free(f.g);
  free(f.m);
  free(f.rejects);
  leir__arena_release(&f.arena);
  return st;
}
