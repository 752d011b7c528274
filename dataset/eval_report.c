/* The reports of leir_eval: rates per row, pass@k over the prompts' samples,
 * as JSON (docs/dataset.md lists the fields) and as a text table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "eval.h"

leir__ev_row *leir__ev_row_of(leir__ev_table *t, const char *name) {
  for (size_t i = 0; i < t->n; i++)
    if (!strcmp(t->v[i].name, name)) return &t->v[i].r;
  if (t->n == t->cap) {
    size_t nc = t->cap ? t->cap * 2 : 16;
    leir__ev_named *v = realloc(t->v, nc * sizeof *v);
    if (!v) return NULL;
    t->v = v;
    t->cap = nc;
  }
  leir__ev_named *r = &t->v[t->n++];
  memset(r, 0, sizeof *r);
  snprintf(r->name, sizeof r->name, "%s", name);
  return &r->r;
}

void leir__ev_table_free(leir__ev_table *t) {
  free(t->v);
  memset(t, 0, sizeof *t);
}

/* 1 - C(n-c, k) / C(n, k): the chance that k of the n samples, drawn without
 * replacement, include a correct one (Chen et al. 2021), as the product
 * 1 - prod_{i=n-c+1}^{n} (1 - k/i), which never forms the binomials. */
double leir__ev_pass_at_k(uint64_t n, uint64_t c, uint64_t k) {
  if (c > n) c = n;
  if (n - c < k) return 1.0;
  double keep = 1.0;
  for (uint64_t i = n - c + 1; i <= n; i++) keep *= 1.0 - (double)k / (double)i;
  return 1.0 - keep;
}

static double rate(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

static const char *const metric_names[LEIR__EV_NMETRICS] = {"pass_equal", "pass_close", "pass_reference"};

/* Which prompts a row's pass@k averages over. */
enum { P_ALL, P_SINGLE, P_MULTI, P_LEVEL };

static int in_row(const leir__ev_prompt *r, int which, int level) {
  if (!r->samples) return 0;
  switch (which) {
    case P_SINGLE: return r->n <= 1;
    case P_MULTI: return r->n > 1;
    case P_LEVEL: return (r->level >= 0 && r->level < 3 ? r->level : 3) == level;
    default: return 1;
  }
}

/* The k of the report: the caller's, else 1 and the fewest samples of any
 * answered prompt (so that every prompt counts at every k). */
static size_t ks(const leir_eval *ev, uint32_t *k) {
  if (ev->nk) {
    memcpy(k, ev->k, ev->nk * sizeof *k);
    return ev->nk;
  }
  uint64_t nmin = 0;
  for (size_t i = 0; i < ev->np; i++)
    if (ev->p[i].samples && (!nmin || ev->p[i].samples < nmin)) nmin = ev->p[i].samples;
  k[0] = 1;
  if (nmin > 1) k[1] = nmin > 1000000 ? 1000000 : (uint32_t)nmin;
  return nmin > 1 ? 2 : 1;
}

static void put_pass_at_k(leir__strbuf *b, const leir_eval *ev, int which, int level) {
  uint32_t k[16];
  size_t nk = ks(ev, k);
  uint64_t prompts = 0;
  for (size_t i = 0; i < ev->np; i++) prompts += (uint64_t)in_row(&ev->p[i], which, level);
  leir__sb_printf(b, ",\"prompts\":%llu,\"pass_at_k\":{", (unsigned long long)prompts);
  for (int m = 0; m < LEIR__EV_NMETRICS; m++) {
    leir__sb_printf(b, "\"%s\":{", metric_names[m]);
    for (size_t j = 0; j < nk; j++) {
      double sum = 0;
      uint64_t n = 0;
      for (size_t i = 0; i < ev->np; i++) {
        const leir__ev_prompt *r = &ev->p[i];
        if (!in_row(r, which, level) || r->samples < k[j]) continue;
        sum += leir__ev_pass_at_k(r->samples, r->pass[m], k[j]);
        n++;
      }
      leir__sb_printf(b, "%s\"%u\":%.6f", j ? "," : "", k[j], n ? sum / (double)n : 0.0);
    }
    leir__sb_puts(b, "},");
  }
  /* how many prompts have at least k samples (the others do not count at k) */
  leir__sb_puts(b, "\"prompts\":{");
  for (size_t j = 0; j < nk; j++) {
    uint64_t n = 0;
    for (size_t i = 0; i < ev->np; i++) n += (uint64_t)(in_row(&ev->p[i], which, level) && ev->p[i].samples >= k[j]);
    leir__sb_printf(b, "%s\"%u\":%llu", j ? "," : "", k[j], (unsigned long long)n);
  }
  leir__sb_puts(b, "}}");
}

static void put_row(leir__strbuf *b, const leir__ev_row *r) {
  leir__sb_printf(b,
                  "{\"answers\":%llu,\"parsed\":%llu,\"items\":%llu,\"parse_rate\":%.6f,\"different_rate\":%.6f,"
                  "\"label_rate\":%.6f,\"pass_equal\":%.6f,\"pass_close\":%.6f,\"pass_reference\":%.6f,"
                  "\"grounded_rate\":%.6f,\"multi_label_rate\":%.6f,\"multi_label_equal_rate\":%.6f,"
                  "\"equal\":%llu,\"close\":%llu,\"reference\":%llu,\"label\":%llu,\"grounded\":%llu,"
                  "\"multi_answers\":%llu",
                  (unsigned long long)r->answers, (unsigned long long)r->parsed, (unsigned long long)r->items,
                  rate(r->parsed, r->answers), rate(r->different, r->items), rate(r->label, r->items),
                  rate(r->pass[LEIR__EV_EQUAL], r->items), rate(r->pass[LEIR__EV_CLOSE], r->items),
                  rate(r->pass[LEIR__EV_REFERENCE], r->items), rate(r->grounded, r->items),
                  rate(r->multi_pass[LEIR__EV_CLOSE], r->multi_answers),
                  rate(r->multi_pass[LEIR__EV_EQUAL], r->multi_answers),
                  (unsigned long long)r->pass[LEIR__EV_EQUAL], (unsigned long long)r->pass[LEIR__EV_CLOSE],
                  (unsigned long long)r->pass[LEIR__EV_REFERENCE], (unsigned long long)r->label,
                  (unsigned long long)r->grounded, (unsigned long long)r->multi_answers);
}

static void put_table(leir__strbuf *b, const char *key, const leir__ev_table *t) {
  leir__sb_printf(b, ",\"%s\":{", key);
  for (size_t i = 0; i < t->n; i++) {
    if (i) leir__sb_putc(b, ',');
    leir__ds_put_str(b, t->v[i].name);
    leir__sb_putc(b, ':');
    put_row(b, &t->v[i].r);
    leir__sb_putc(b, '}');
  }
  leir__sb_putc(b, '}');
}

static const char *const level_names[4] = {"programs", "level1", "level2", "unknown"};

leir_status leir_eval_report_json(const leir_eval *ev, char **out, size_t *out_len) {
  if (!out || !ev) return leir__error_arg(NULL, "eval and out are required");
  leir__strbuf b = LEIR__STRBUF_INIT;
  uint32_t k[16];
  size_t nk = ks(ev, k);
  leir__sb_puts(&b, "{\"k\":[");
  for (size_t j = 0; j < nk; j++) leir__sb_printf(&b, "%s%u", j ? "," : "", k[j]);
  leir__sb_puts(&b, "],\"overall\":");
  put_row(&b, &ev->all);
  put_pass_at_k(&b, ev, P_ALL, 0);
  leir__sb_puts(&b, "},\"single\":");
  put_row(&b, &ev->single);
  put_pass_at_k(&b, ev, P_SINGLE, 0);
  leir__sb_puts(&b, "},\"multi\":");
  put_row(&b, &ev->multi);
  put_pass_at_k(&b, ev, P_MULTI, 0);
  leir__sb_puts(&b, "},\"per_level\":{");
  int first = 1;
  for (int l = 0; l < 4; l++) {
    if (!ev->level[l].answers) continue;
    leir__sb_printf(&b, "%s\"%s\":", first ? "" : ",", level_names[l]);
    put_row(&b, &ev->level[l]);
    put_pass_at_k(&b, ev, P_LEVEL, l);
    leir__sb_putc(&b, '}');
    first = 0;
  }
  leir__sb_putc(&b, '}');
  put_table(&b, "per_strategy", &ev->strat);
  put_table(&b, "per_strategy_level", &ev->slevel);
  put_table(&b, "per_named_strategy", &ev->named);
  leir__sb_puts(&b, ",\"answers\":[");
  if (ev->lines.data) leir__sb_put(&b, ev->lines.data, ev->lines.len);
  leir__sb_puts(&b, "]}\n");
  *out = leir__sb_finish(&b, out_len);
  return *out ? LEIR_OK : leir__error_nomem();
}

static void table_row(leir__strbuf *b, const char *name, const leir__ev_row *r) {
  leir__sb_printf(b, "%-36s %7llu %6.1f%% %6llu %6.1f%% %6.1f%% %6.1f%% %6.1f%% %6.1f%%\n", name,
                  (unsigned long long)r->answers, 100 * rate(r->parsed, r->answers), (unsigned long long)r->items,
                  100 * rate(r->label, r->items), 100 * rate(r->pass[LEIR__EV_EQUAL], r->items),
                  100 * rate(r->pass[LEIR__EV_CLOSE], r->items), 100 * rate(r->pass[LEIR__EV_REFERENCE], r->items),
                  100 * rate(r->grounded, r->items));
}

static void table_rows(leir__strbuf *b, const char *title, const leir__ev_table *t) {
  leir__sb_puts(b, title);
  for (size_t i = 0; i < t->n; i++) {
    char name[80];
    snprintf(name, sizeof name, "  %s", t->v[i].name);
    table_row(b, name, &t->v[i].r);
  }
}

leir_status leir_eval_report_table(const leir_eval *ev, char **out, size_t *out_len) {
  if (!out || !ev) return leir__error_arg(NULL, "eval and out are required");
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_printf(&b, "%-36s %7s %7s %6s %7s %7s %7s %7s %7s\n", "", "answers", "parse", "items", "label",
                  "equal", "close", "ref", "ground");
  table_row(&b, "overall", &ev->all);
  if (ev->single.answers) table_row(&b, "  single prompts", &ev->single);
  if (ev->multi.answers) table_row(&b, "  multi prompts", &ev->multi);
  if (ev->multi.multi_answers)
    leir__sb_printf(&b, "multi prompts with at least N distinct passing IRs: %.1f%% (close), %.1f%% (equal)\n",
                    100 * rate(ev->multi.multi_pass[LEIR__EV_CLOSE], ev->multi.multi_answers),
                    100 * rate(ev->multi.multi_pass[LEIR__EV_EQUAL], ev->multi.multi_answers));
  uint32_t k[16];
  size_t nk = ks(ev, k);
  uint64_t prompts = 0;
  for (size_t i = 0; i < ev->np; i++) prompts += (uint64_t)in_row(&ev->p[i], P_ALL, 0);
  leir__sb_printf(&b, "pass@k over %llu prompts (their answers are the samples)\n", (unsigned long long)prompts);
  for (size_t j = 0; j < nk; j++) {
    leir__sb_printf(&b, "  pass@%-4u", k[j]);
    for (int m = 0; m < LEIR__EV_NMETRICS; m++) {
      double sum = 0;
      uint64_t n = 0;
      for (size_t i = 0; i < ev->np; i++) {
        const leir__ev_prompt *r = &ev->p[i];
        if (!r->samples || r->samples < k[j]) continue;
        sum += leir__ev_pass_at_k(r->samples, r->pass[m], k[j]);
        n++;
      }
      leir__sb_printf(&b, "  %s %5.1f%%", m == 0 ? "equal" : m == 1 ? "close" : "ref", n ? 100 * sum / (double)n : 0.0);
    }
    leir__sb_putc(&b, '\n');
  }
  table_rows(&b, "per strategy (of the matching label)\n", &ev->strat);
  table_rows(&b, "per strategy level (of the matching label)\n", &ev->slevel);
  table_rows(&b, "per strategy named in the answer\n", &ev->named);
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
