/* The outputs of a dataset build, from the finished units (docs/dataset.md):
 * the samples are read back, their source programs assigned to train,
 * validation or test (split.c), the train records selected (select.c),
 * the splits checked for leakage (split.c), and the files written:
 * train.jsonl (records in a seeded order), eval.jsonl, validation.jsonl,
 * archive.jsonl, rejections.jsonl (records.c), summary.json, README.md and
 * SVG histograms (card.c). Everything here is a function of the unit files
 * and the config, so the files are byte-identical for the same config
 * whatever the sharding or the interruptions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fin.h"

static int int_of(const leir__lit *d, const char *k) {
  int64_t v = 0;
  leir__lit_int(leir__lit_get(d, k), &v);
  return (int)v;
}

static void count_stage(leir__fin *f, const char *stage, const char *verdict) {
  size_t i;
  for (i = 0; i < f->n_stages; i++)
    if (!strcmp(f->stage_names[i], stage)) break;
  if (i == f->n_stages && f->n_stages < 16) f->stage_names[f->n_stages++] = stage;
  if (i < 16) f->by_stage[i]++;
  leir_verdict v;
  if (verdict && *verdict && leir_verdict_from_name(verdict, &v) == LEIR_OK && (size_t)v < 16) f->by_verdict[v]++;
}

static leir_status load(leir__fin *f) {
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
    /* a unit file is trusted only when complete: written whole (by rename),
     * it ends with its own "done" record, which counts the samples above it;
     * a file cut short or edited would otherwise add samples that were never
     * counted as verified */
    int done = 0;
    uint64_t samples = 0;
    while (p < end) {
      if (done)
        return leir__error(LEIR_ERR_PARSE, "dataset.unit", ds->units[u].id, 0, 0,
                           "unit file %06zu has lines after its \"done\" record; delete it to "
                           "rebuild the unit", u);
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
      const char *type = leir__lit_field(v, "type");
      if (strcmp(leir__lit_field(v, "unit"), ds->units[u].id) != 0)
        return leir__error(LEIR_ERR_PARSE, "dataset.unit", ds->units[u].id, 0, 0,
                           "unit file %06zu holds a record of another unit ('%s'); delete it to "
                           "rebuild the unit", u, leir__lit_field(v, "unit"));
      if (!strcmp(type, "sample")) {
        samples++;
        LEIR__GROW(f->s, f->n, f->cap);
        leir__smp *s = &f->s[f->n];
        memset(s, 0, sizeof *s);
        s->line = p;
        s->v = v;
        s->id = leir__lit_field(v, "id");
        s->unit = leir__lit_field(v, "unit");
        s->name = leir__lit_field(v, "name");
        s->level = int_of(v, "level");
        const leir__lit *stl = leir__lit_get(v, "state");
        s->state = leir__lit_field(stl, "id");
        s->depth = (uint32_t)int_of(stl, "depth");
        s->orig = leir__lit_field(v, "original_IR");
        s->known = leir__lit_get(v, "known");
        s->strategy = leir__lit_field(v, "strategy");
        s->sidx = int_of(v, "strategy_index");
        s->slevel = leir__lit_field(v, "strategy_level");
        s->tir = leir__lit_field(v, "transformed_IR");
        s->cot = leir__lit_field(v, "CoT");
        s->verdict = leir__lit_field(v, "verdict");
        s->exactness = leir__lit_field(v, "exactness");
        s->u = u;
        s->state_hash = strtoull(s->state, NULL, 16);
        s->tir_hash = strtoull(leir__lit_field(v, "transformed_alpha_hash"), NULL, 16);
        if (!(f->ng && last_state && !strcmp(last_state, s->state) && f->g[f->ng - 1].first + f->g[f->ng - 1].count == f->n)) {
          LEIR__GROW(f->g, f->ng, f->capg);
          f->g[f->ng].first = f->n;
          f->g[f->ng].count = 0;
          f->g[f->ng].split = LEIR__TRAIN;
          f->ng++;
        }
        f->g[f->ng - 1].count++;
        s->st = f->ng - 1;
        last_state = s->state;
        f->n++;
      } else if (!strcmp(type, "reject")) {
        LEIR__GROW(f->rejects, f->nrej, f->caprej);
        f->rejects[f->nrej++] = p;
        count_stage(f, leir__lit_field(v, "stage"), leir__lit_field(v, "verdict"));
        size_t k;
        if (leir_strategy_find(leir__lit_field(v, "strategy"), &k) == LEIR_OK && k < 256) f->rej_by_strategy[k]++;
      } else if (!strcmp(type, "done")) {
        int64_t states = -1, verified = -1, kept = -1;
        leir__lit_int(leir__lit_get(v, "states"), &states);
        leir__lit_int(leir__lit_get(v, "verified"), &verified);
        leir__lit_int(leir__lit_get(v, "kept"), &kept);
        if (states < 0 || verified < 0 || kept < 0 || (uint64_t)kept != samples ||
            (uint64_t)verified < samples)
          return leir__error(LEIR_ERR_PARSE, "dataset.unit", ds->units[u].id, 0, 0,
                             "unit file %06zu does not add up (%llu samples, its \"done\" record "
                             "says kept %lld of %lld verified); delete it to rebuild the unit",
                             u, (unsigned long long)samples, (long long)kept, (long long)verified);
        f->states_total += (uint64_t)states;
        f->verified_total += (uint64_t)verified;
        done = 1;
      } else if (strcmp(type, "reject") != 0) {
        return leir__error(LEIR_ERR_PARSE, "dataset.unit", ds->units[u].id, 0, 0,
                           "unit file %06zu has a record of unknown type '%s'; delete it to "
                           "rebuild the unit", u, type);
      }
      p = nl + 1;
    }
    if (!done)
      return leir__error(LEIR_ERR_PARSE, "dataset.unit", ds->units[u].id, 0, 0,
                         "unit file %06zu is incomplete (no \"done\" record at its end); delete "
                         "it to rebuild the unit", u);
  }
  return LEIR_OK;
}

leir_status leir__fin_write_file(leir__fin *f, const char *name, leir__strbuf *b) {
  size_t len = 0;
  char *text = leir__sb_finish(b, &len);
  if (!text) return leir__error_nomem();
  char *path = leir__ds_join(f->ds->out_dir, name);
  leir_status st = path ? leir__ds_write_atomic(path, text, len) : leir__error_nomem();
  free(path);
  free(text);
  return st;
}

/* train.jsonl in a seeded order: a fine-tuning run that reads the file
 * front to back (or shuffles only within a buffer) must not see one
 * workload's records in a block. */
static leir_status write_train(leir__fin *f, leir__outs *o) {
  size_t n = o->n_train;
  size_t *order = malloc((n ? n : 1) * sizeof *order);
  if (!order) return leir__error_nomem();
  for (size_t i = 0; i < n; i++) order[i] = i;
  leir__rng r = leir__rng_derive(f->ds->cfg.seed, "train-order", 0);
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)leir__rng_below(&r, i), t = order[i - 1];
    order[i - 1] = order[j];
    order[j] = t;
  }
  leir__strbuf b = LEIR__STRBUF_INIT;
  for (size_t i = 0; i < n; i++) {
    size_t k = order[i], end = k + 1 < n ? o->train_starts[k + 1] : o->train.len;
    leir__sb_put(&b, o->train.data + o->train_starts[k], end - o->train_starts[k]);
  }
  free(order);
  return leir__fin_write_file(f, "train.jsonl", &b);
}

leir_status leir__ds_finalize(leir_dataset *ds) {
  leir__fin f;
  memset(&f, 0, sizeof f);
  f.ds = ds;
  leir__arena_init(&f.arena, 0);
  leir__outs o;
  memset(&o, 0, sizeof o);
  /* the temporaries of an earlier final write that was killed (a writer on
   * this host that no longer runs) */
  leir__ds_clean_tmp(ds->out_dir);
  leir__ds_clean_tmp(ds->work_dir);
  leir_status st = load(&f);
  if (st == LEIR_OK) st = leir__fin_assign_splits(&f);
  if (st == LEIR_OK) st = leir__fin_select(&f);
  if (st == LEIR_OK) st = leir__fin_check_leakage(&f);
  for (size_t g = 0; st == LEIR_OK && g < f.ng; g++) st = leir__fin_write_group(&f, &o, g);
  for (size_t i = 0; st == LEIR_OK && i < f.nrej; i++) {
    leir__sb_puts(&o.rejections, f.rejects[i]);
    leir__sb_putc(&o.rejections, '\n');
  }
  if (st == LEIR_OK && o.train.failed) st = leir__error_nomem();
  if (st == LEIR_OK) st = write_train(&f, &o);
  if (st == LEIR_OK) st = leir__fin_write_file(&f, "eval.jsonl", &o.eval);
  if (st == LEIR_OK) st = leir__fin_write_file(&f, "validation.jsonl", &o.validation);
  if (st == LEIR_OK) st = leir__fin_write_file(&f, "archive.jsonl", &o.archive);
  if (st == LEIR_OK) st = leir__fin_write_file(&f, "rejections.jsonl", &o.rejections);
  if (st == LEIR_OK) st = leir__fin_summary_and_card(&f, &o);
  leir__sb_release(&o.train);
  leir__sb_release(&o.eval);
  leir__sb_release(&o.validation);
  leir__sb_release(&o.archive);
  leir__sb_release(&o.rejections);
  free(o.train_starts);
  for (size_t i = 0; i < f.n_texts; i++) free(f.texts[i]);
  free(f.texts);
  free(f.s);
  free(f.g);
  free(f.m);
  free(f.rejects);
  leir__arena_release(&f.arena);
  return st;
}
