/* summary.json, the SVG histograms and the dataset card README.md of a
 * build (docs/dataset.md, "Outputs"): counts per strategy, workload level
 * and walk depth, the split rule and the leakage check. */
#include <stdio.h>
#include <string.h>

#include "fin.h"

typedef struct counts {
  uint64_t samples, single, multi_items, held[LEIR__NSPLITS];
} counts;

typedef struct tables {
  counts *per;           /* by strategy index */
  counts lv[4], dp[17];  /* by workload level, by walk depth */
} tables;

static const char *const lnames[4] = {"programs (no level)", "level 1", "level 2", "other"};
static const char *const dnames[17] = {"depth 0", "depth 1", "depth 2", "depth 3", "depth 4", "depth 5",
                                       "depth 6", "depth 7", "depth 8", "depth 9", "depth 10", "depth 11",
                                       "depth 12", "depth 13", "depth 14", "depth 15", "depth 16+"};

static void put_counts(leir__strbuf *b, const counts *c) {
  leir__sb_printf(b,
                  "{\"samples\":%llu,\"train_single\":%llu,\"multi_items\":%llu,\"eval_samples\":%llu,"
                  "\"validation_samples\":%llu}",
                  (unsigned long long)c->samples, (unsigned long long)c->single,
                  (unsigned long long)c->multi_items, (unsigned long long)c->held[LEIR__TEST],
                  (unsigned long long)c->held[LEIR__VALIDATION]);
}

static void add_counts(counts *c, const leir__smp *s) {
  c->samples++;
  c->single += (uint64_t)s->single;
  c->multi_items += s->multi_items;
  if (s->split != LEIR__TRAIN) c->held[s->split]++;
}

static void put_by_split(leir__strbuf *b, const char *key, const uint64_t *v) {
  leir__sb_printf(b, "\"%s\":{\"train\":%llu,\"validation\":%llu,\"test\":%llu}", key,
                  (unsigned long long)v[LEIR__TRAIN], (unsigned long long)v[LEIR__VALIDATION],
                  (unsigned long long)v[LEIR__TEST]);
}

static const char *split_by_name(int by) { return by == LEIR__SPLIT_BY_WORKLOAD ? "workload" : "program"; }

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


static char *summary_json(const leir__fin *f, const leir__outs *o, const tables *t) {
  const leir_dataset *ds = f->ds;
  const leir__ds_config *cfg = &ds->cfg;
  const leir__split_stats *sp = &f->split;
  size_t ns = leir_strategy_count();
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
                  "\"eval_multi\":%llu,\"validation_single\":%llu,\"validation_multi\":%llu},",
                  (unsigned long long)o->n_train_single, (unsigned long long)o->n_train_multi,
                  (unsigned long long)o->n_single[LEIR__TEST], (unsigned long long)o->n_multi[LEIR__TEST],
                  (unsigned long long)o->n_single[LEIR__VALIDATION],
                  (unsigned long long)o->n_multi[LEIR__VALIDATION]);
  leir__sb_printf(&b, "\"split\":{\"by\":\"%s\",\"seed\":%llu,\"test\":%.15g,\"validation\":%.15g,",
                  split_by_name(cfg->split_by), (unsigned long long)cfg->split_seed, cfg->split_test,
                  cfg->split_validation);
  put_by_split(&b, "keys", sp->keys);
  leir__sb_putc(&b, ',');
  put_by_split(&b, "units", sp->units);
  leir__sb_putc(&b, ',');
  put_by_split(&b, "states", sp->states);
  leir__sb_printf(&b, "},\"leakage\":{\"checked_states\":%llu,\"checked_labels\":%llu,\"train_hashes\":%llu,"
                  "\"test_states_in_train\":%llu,\"test_labels_in_train\":%llu,"
                  "\"validation_states_in_train\":%llu,\"validation_labels_in_train\":%llu,"
                  "\"units_in_two_splits\":%llu},\"per_strategy\":{",
                  (unsigned long long)sp->checked_states, (unsigned long long)sp->checked_labels,
                  (unsigned long long)sp->train_hashes, (unsigned long long)sp->states_in_train[LEIR__TEST],
                  (unsigned long long)sp->labels_in_train[LEIR__TEST],
                  (unsigned long long)sp->states_in_train[LEIR__VALIDATION],
                  (unsigned long long)sp->labels_in_train[LEIR__VALIDATION],
                  (unsigned long long)sp->units_in_two_splits);
  first = 1;
  for (size_t k = 0; k < ns; k++) {
    if (!t->per[k].samples) continue;
    leir__sb_printf(&b, "%s\"%s\":", first ? "" : ",", leir_strategy_info_at(k)->name);
    put_counts(&b, &t->per[k]);
    first = 0;
  }
  leir__sb_puts(&b, "},\"per_level\":{");
  first = 1;
  for (int l = 0; l < 4; l++) {
    if (!t->lv[l].samples) continue;
    leir__sb_printf(&b, "%s\"%d\":", first ? "" : ",", l);
    put_counts(&b, &t->lv[l]);
    first = 0;
  }
  leir__sb_puts(&b, "},\"per_depth\":{");
  first = 1;
  for (int d = 0; d < 17; d++) {
    if (!t->dp[d].samples) continue;
    leir__sb_printf(&b, "%s\"%d\":", first ? "" : ",", d);
    put_counts(&b, &t->dp[d]);
    first = 0;
  }
  leir__sb_puts(&b, "}}\n");
  return leir__sb_finish(&b, NULL);
}

static leir_status histograms(leir__fin *f, const tables *t) {
  const char *labels[256];
  uint64_t vals[256];
  size_t nl = 0;
  for (size_t k = 0; k < leir_strategy_count() && nl < 256; k++)
    if (t->per[k].samples) {
      labels[nl] = leir_strategy_info_at(k)->name;
      vals[nl++] = t->per[k].single + t->per[k].multi_items;
    }
  leir__strbuf svg = LEIR__STRBUF_INIT;
  svg_bars(&svg, "Training labels per strategy (single records + multi items)", labels, vals, nl);
  leir_status st = leir__fin_write_file(f, "strategies.svg", &svg);
  nl = 0;
  for (int l = 0; l < 4; l++)
    if (t->lv[l].samples) labels[nl] = lnames[l], vals[nl++] = t->lv[l].samples;
  for (int d = 0; d < 17; d++)
    if (t->dp[d].samples) labels[nl] = dnames[d], vals[nl++] = t->dp[d].samples;
  leir__strbuf svg2 = LEIR__STRBUF_INIT;
  svg_bars(&svg2, "Verified samples per workload level and walk depth", labels, vals, nl);
  if (st == LEIR_OK) st = leir__fin_write_file(f, "levels.svg", &svg2);
  else leir__sb_release(&svg2);
  return st;
}

/* The card's YAML header: the configs the Hugging Face `datasets` loader
 * offers. A held-out file without rows gets no config (the loader cannot
 * infer the columns of an empty file). */
static void card_header(leir__strbuf *c, const leir__ds_config *cfg, const leir__outs *o) {
  uint64_t total = o->n_train_single + o->n_train_multi;
  leir__sb_puts(c, "---\npretty_name: ");
  leir__sb_put_yaml_string(c, cfg->name, strlen(cfg->name));
  leir__sb_printf(c,
                  "\nlicense: mit\nlanguage:\n- en\ntask_categories:\n- text-generation\ntags:\n"
                  "- tensor-programs\n- compiler-optimization\n- step-tp\n- leir\nsize_categories:\n- %s\n"
                  "configs:\n- config_name: default\n  data_files:\n  - split: train\n    path: train.jsonl\n",
                  total < 1000 ? "n<1K" : total < 10000 ? "1K<n<10K" : total < 100000 ? "10K<n<100K" : "100K<n<1M");
  if (o->n_single[LEIR__TEST] + o->n_multi[LEIR__TEST])
    leir__sb_puts(c, "- config_name: eval\n  data_files:\n  - split: test\n    path: eval.jsonl\n");
  if (o->n_single[LEIR__VALIDATION] + o->n_multi[LEIR__VALIDATION])
    leir__sb_puts(c, "- config_name: validation\n  data_files:\n  - split: validation\n    path: validation.jsonl\n");
  leir__sb_puts(c, "- config_name: archive\n  data_files:\n  - split: train\n    path: archive.jsonl\n---\n\n");
}

static void card_splits(leir__strbuf *c, const leir__fin *f) {
  const leir__ds_config *cfg = &f->ds->cfg;
  const leir__split_stats *sp = &f->split;
  uint64_t keys = sp->keys[0] + sp->keys[1] + sp->keys[2];
  const char *what = cfg->split_by == LEIR__SPLIT_BY_WORKLOAD
                         ? "workload family (a workload at every shape and dtype, or every program of one name)"
                         : "source program (a workload at one shape, any dtype, or a line of the programs file)";
  leir__sb_printf(c,
                  "## Splits\n\nHeld out by %s, drawn with seed %llu: of %llu, %llu for test (`eval.jsonl`, "
                  "`split.test` %g) and %llu for validation (`validation.jsonl`, `split.validation` %g); "
                  "every state of a held-out program is held out with it, so no held-out program shares "
                  "a source with train.\n\n",
                  what, (unsigned long long)cfg->split_seed, (unsigned long long)keys,
                  (unsigned long long)sp->keys[LEIR__TEST], cfg->split_test,
                  (unsigned long long)sp->keys[LEIR__VALIDATION], cfg->split_validation);
  leir__sb_printf(c,
                  "| | train | validation | test |\n|---|---|---|---|\n| %ss | %llu | %llu | %llu |\n"
                  "| units | %llu | %llu | %llu |\n| states | %llu | %llu | %llu |\n\n",
                  split_by_name(cfg->split_by), (unsigned long long)sp->keys[LEIR__TRAIN],
                  (unsigned long long)sp->keys[LEIR__VALIDATION], (unsigned long long)sp->keys[LEIR__TEST],
                  (unsigned long long)sp->units[LEIR__TRAIN], (unsigned long long)sp->units[LEIR__VALIDATION],
                  (unsigned long long)sp->units[LEIR__TEST], (unsigned long long)sp->states[LEIR__TRAIN],
                  (unsigned long long)sp->states[LEIR__VALIDATION], (unsigned long long)sp->states[LEIR__TEST]);
  leir__sb_printf(c,
                  "Leakage check, by alpha hash (programs equal up to fresh names are one): %llu held-out "
                  "states and %llu held-out labels against the %llu distinct prompt states and targets of "
                  "the train records; the build fails on any hit.\n\n"
                  "| found in train (as prompt state or target) | validation | test |\n|---|---|---|\n"
                  "| held-out states | %llu | %llu |\n| held-out labels | %llu | %llu |\n\n"
                  "Units with samples in two splits: %llu.\n\n",
                  (unsigned long long)sp->checked_states, (unsigned long long)sp->checked_labels,
                  (unsigned long long)sp->train_hashes, (unsigned long long)sp->states_in_train[LEIR__VALIDATION],
                  (unsigned long long)sp->states_in_train[LEIR__TEST],
                  (unsigned long long)sp->labels_in_train[LEIR__VALIDATION],
                  (unsigned long long)sp->labels_in_train[LEIR__TEST], (unsigned long long)sp->units_in_two_splits);
}

static void card_row(leir__strbuf *c, const char *name, const char *level, const counts *k) {
  leir__sb_printf(c, "| %s |%s%s%s %llu | %llu | %llu | %llu | %llu |\n", name, level ? " " : "",
                  level ? level : "", level ? " |" : "", (unsigned long long)k->samples,
                  (unsigned long long)k->single, (unsigned long long)k->multi_items,
                  (unsigned long long)k->held[LEIR__VALIDATION], (unsigned long long)k->held[LEIR__TEST]);
}

static char *card(const leir__fin *f, const leir__outs *o, const tables *t) {
  const leir_dataset *ds = f->ds;
  const leir__ds_config *cfg = &ds->cfg;
  leir__strbuf c = LEIR__STRBUF_INIT;
  card_header(&c, cfg, o);
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
                  "| train single records | %llu |\n| train multi records | %llu |\n"
                  "| validation prompts (single / multi) | %llu / %llu |\n| test prompts (single / multi) | %llu / %llu |\n\n",
                  ds->n_units, (unsigned long long)f->states_total, (unsigned long long)f->verified_total, f->n,
                  f->nrej, (unsigned long long)o->n_train_single, (unsigned long long)o->n_train_multi,
                  (unsigned long long)o->n_single[LEIR__VALIDATION], (unsigned long long)o->n_multi[LEIR__VALIDATION],
                  (unsigned long long)o->n_single[LEIR__TEST], (unsigned long long)o->n_multi[LEIR__TEST]);
  leir__sb_puts(&c, "## Files\n\n"
                    "- `train.jsonl`: chat records `{\"messages\": [user, assistant]}` in a seeded order; the "
                    "assistant text is `<think>CoT</think><answer>{\"transformed_IR\": ..., \"applied_strategy\": "
                    "...}</answer>` (multi records: a Python-literal list with `idx`).\n"
                    "- `eval.jsonl`: the test split: prompts of the held-out test programs' states, with the "
                    "verified labels for reference (what `leir eval` scores).\n"
                    "- `validation.jsonl`: the same for the validation programs (for choosing checkpoints "
                    "and settings, so that the test figures stay unseen).\n"
                    "- `archive.jsonl`: every record with every field of its samples (ids, hashes, step as "
                    "text and JSON, verdict and error figures, walk from the source).\n"
                    "- `rejections.jsonl`: every candidate that was not kept, with the stage and the reason.\n"
                    "- `summary.json`: the counts below.\n\n");
  card_splits(&c, f);
  leir__sb_puts(&c, "## Per strategy\n\n| strategy | level | samples | train singles | multi items | "
                    "validation samples | test samples |\n|---|---|---|---|---|---|---|\n");
  for (size_t k = 0; k < leir_strategy_count(); k++)
    if (t->per[k].samples)
      card_row(&c, leir_strategy_info_at(k)->name, leir_level_name(leir_strategy_info_at(k)->level), &t->per[k]);
  leir__sb_puts(&c, "\n![labels per strategy](strategies.svg)\n\n## Per workload level and walk depth\n\n"
                    "| group | samples | train singles | multi items | validation samples | test samples |\n"
                    "|---|---|---|---|---|---|\n");
  for (int l = 0; l < 4; l++)
    if (t->lv[l].samples) card_row(&c, lnames[l], NULL, &t->lv[l]);
  for (int d = 0; d < 17; d++)
    if (t->dp[d].samples) card_row(&c, dnames[d], NULL, &t->dp[d]);
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
  return leir__sb_finish(&c, NULL);
}

leir_status leir__fin_summary_and_card(leir__fin *f, leir__outs *o) {
  leir_dataset *ds = f->ds;
  size_t ns = leir_strategy_count();
  tables t;
  memset(&t, 0, sizeof t);
  if (!(t.per = calloc(ns ? ns : 1, sizeof *t.per))) return leir__error_nomem();
  for (size_t i = 0; i < f->n; i++) {
    const leir__smp *s = &f->s[i];
    if (s->sidx >= 0 && (size_t)s->sidx < ns) add_counts(&t.per[s->sidx], s);
    add_counts(&t.lv[s->level >= 0 && s->level < 3 ? s->level : 3], s);
    add_counts(&t.dp[s->depth < 16 ? s->depth : 16], s);
  }
  free(ds->summary);
  leir_status st = (ds->summary = summary_json(f, o, &t)) ? LEIR_OK : leir__error_nomem();
  if (st == LEIR_OK) {
    leir__strbuf sb = LEIR__STRBUF_INIT;
    leir__sb_puts(&sb, ds->summary);
    st = leir__fin_write_file(f, "summary.json", &sb);
  }
  if (st == LEIR_OK) st = histograms(f, &t);
  char *text = st == LEIR_OK ? card(f, o, &t) : NULL;
  if (st == LEIR_OK && !text) st = leir__error_nomem();
  if (st == LEIR_OK) {
    leir__strbuf cb = LEIR__STRBUF_INIT;
    leir__sb_puts(&cb, text);
    st = leir__fin_write_file(f, "README.md", &cb);
  }
  free(text);
  free(t.per);
  return st;
}
