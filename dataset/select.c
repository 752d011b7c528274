/* Which train samples become records (pipeline-reference.md §2.3, §4, with
 * seeded draws and per-strategy counters): the per-strategy cap of single
 * records, the single rules, and the multi-label records drawn per state
 * with their item rules. Held-out samples are never drawn here. */
#include <string.h>

#include "fin.h"

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

leir_status leir__fin_select(leir__fin *f) {
  const leir__ds_config *cfg = &f->ds->cfg;
  /* the per-strategy cap of singles */
  size_t *idx = malloc((f->n ? f->n : 1) * sizeof *idx);
  if (!idx) return leir__error_nomem();
  for (size_t k = 0; k < leir_strategy_count(); k++) {
    size_t m = 0;
    for (size_t i = 0; i < f->n; i++)
      if (f->s[i].split == LEIR__TRAIN && f->s[i].sidx == (int)k) idx[m++] = i;
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
    leir__smp *s = &f->s[i];
    if (s->split != LEIR__TRAIN || s->capped) continue;
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
    if (f->g[g].split != LEIR__TRAIN) continue;
    size_t labels[256], L = 0;
    int seen[256] = {0};
    for (size_t i = 0; i < f->g[g].count && L < 256; i++) {
      leir__smp *s = &f->s[f->g[g].first + i];
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
      leir__multi cand;
      memset(&cand, 0, sizeof cand);
      cand.group = g;
      for (size_t i = 0; i < size; i++) {
        size_t j = i + (size_t)leir__rng_below(&dr, L - i), t = pool[i];
        pool[i] = pool[j];
        pool[j] = t;
        cand.items[cand.n++] = pool[i];
      }
      /* the item filter: one draw per item */
      leir__multi kept;
      memset(&kept, 0, sizeof kept);
      kept.group = g;
      for (size_t i = 0; i < cand.n; i++) {
        leir__smp *s = &f->s[cand.items[i]];
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
      LEIR__GROW(f->m, f->nm, f->capm);
      f->m[f->nm++] = kept;
      for (size_t i = 0; i < kept.n; i++) f->s[kept.items[i]].multi_items++;
    }
  }
  return LEIR_OK;
}

