/* The held-out splits of a build (docs/dataset.md, "Splits") and the check
 * that they hold.
 *
 * Whole source programs are held out, not states: the states of one program
 * (its walk states and every step's result) are one step apart, so holding
 * out states put a held-out state's neighbours, and often the state itself
 * as a label, in train. A key is a source program (a workload at one shape
 * and random draw, whatever the dtype, or a line of the programs file) or,
 * with `split.by: workload`, a workload family (the workload at every shape,
 * or every program line of one name). The keys that have kept samples are
 * shuffled with the split seed and the first round(n * split.test) go to
 * test, the next round(n * split.validation) to validation.
 *
 * Distinct sources can still meet (the same program twice, or one a step of
 * another), so the records are checked: no held-out state and no held-out
 * label may be a prompt state or a target of a train record, compared by
 * alpha hash (states equal up to fresh names are one). A hit fails the
 * build, naming both units. */
#include <stdio.h>
#include <string.h>

#include "fin.h"

typedef struct ukey {
  char *key;
  size_t unit;
} ukey;

static int cmp_ukey(const void *a, const void *b) {
  const ukey *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c ? c : x->unit < y->unit ? -1 : x->unit > y->unit;
}

/* The key of unit u (caller frees); `name` is the program's name as its
 * samples give it. */
static char *unit_key(const leir__ds_unit *u, int by, const char *name) {
  const char *id = u->id;
  size_t n = strlen(id);
  if (u->workload) {
    const char *at = strchr(id, '@');
    if (by == LEIR__SPLIT_BY_WORKLOAD && at) n = (size_t)(at - id);
    else if (u->dtype && n > strlen(u->dtype)) n -= strlen(u->dtype) + 1; /* "/f64" */
  } else if (by == LEIR__SPLIT_BY_WORKLOAD) {
    /* a programs line: its family is its name (prefixed, so that it never
     * meets a workload's key) */
    leir__strbuf b = LEIR__STRBUF_INIT;
    leir__sb_puts(&b, "program:");
    leir__sb_puts(&b, name);
    return leir__sb_finish(&b, NULL);
  }
  char *k = malloc(n + 1);
  if (k) {
    memcpy(k, id, n);
    k[n] = '\0';
  }
  return k;
}

typedef struct run {
  size_t first; /* index of the run's first entry in the sorted keys */
  size_t unit;  /* its unit: the key's first unit */
} run;

static int cmp_run(const void *a, const void *b) {
  const run *x = a, *y = b;
  return x->unit < y->unit ? -1 : x->unit > y->unit;
}

/* Shuffles the distinct keys (runs of `keys`, sorted) and gives each unit
 * its key's split. */
static leir_status draw(leir__fin *f, const ukey *keys, size_t nk, int *usplit) {
  const leir__ds_config *cfg = &f->ds->cfg;
  run *d = malloc((nk ? nk : 1) * sizeof *d);
  size_t nd = 0;
  if (!d) return leir__error_nomem();
  for (size_t i = 0; i < nk; i++)
    if (!i || strcmp(keys[i - 1].key, keys[i].key)) d[nd].first = i, d[nd++].unit = keys[i].unit;
  /* in the order of their first units (unique), so that the draw depends
   * only on the config, then shuffled */
  qsort(d, nd, sizeof *d, cmp_run);
  leir__rng r = leir__rng_derive(cfg->split_seed, "split", 0);
  for (size_t i = nd; i > 1; i--) {
    size_t j = (size_t)leir__rng_below(&r, i);
    run t = d[i - 1];
    d[i - 1] = d[j];
    d[j] = t;
  }
  size_t n_test = (size_t)((double)nd * cfg->split_test + 0.5);
  size_t n_val = (size_t)((double)nd * cfg->split_validation + 0.5);
  if (n_test > nd) n_test = nd;
  if (n_val > nd - n_test) n_val = nd - n_test;
  for (size_t i = 0; i < nd; i++) {
    int sp = i < n_test ? LEIR__TEST : i < n_test + n_val ? LEIR__VALIDATION : LEIR__TRAIN;
    f->split.keys[sp]++;
    for (size_t k = d[i].first; k < nk && !strcmp(keys[k].key, keys[d[i].first].key); k++) {
      usplit[keys[k].unit] = sp;
      f->split.units[sp]++;
    }
  }
  free(d);
  return LEIR_OK;
}

leir_status leir__fin_assign_splits(leir__fin *f) {
  const leir_dataset *ds = f->ds;
  size_t nu = ds->n_units, nk = 0;
  leir_status st = LEIR_OK;
  /* the units with samples, and a name for each from its first sample */
  const char **name = calloc(nu ? nu : 1, sizeof *name);
  int *usplit = calloc(nu ? nu : 1, sizeof *usplit);
  ukey *keys = calloc(nu ? nu : 1, sizeof *keys);
  if (!name || !usplit || !keys) st = leir__error_nomem();
  for (size_t i = 0; st == LEIR_OK && i < f->n; i++)
    if (f->s[i].u < nu && !name[f->s[i].u]) name[f->s[i].u] = f->s[i].name;
  for (size_t u = 0; st == LEIR_OK && u < nu; u++) {
    if (!name[u]) continue;
    if (!(keys[nk].key = unit_key(&ds->units[u], ds->cfg.split_by, name[u]))) st = leir__error_nomem();
    else keys[nk++].unit = u;
  }
  if (st == LEIR_OK) {
    qsort(keys, nk, sizeof *keys, cmp_ukey);
    st = draw(f, keys, nk, usplit);
  }
  for (size_t g = 0; st == LEIR_OK && g < f->ng; g++) {
    leir__sgroup *grp = &f->g[g];
    grp->split = usplit[f->s[grp->first].u];
    f->split.states[grp->split]++;
    for (size_t i = 0; i < grp->count; i++) f->s[grp->first + i].split = grp->split;
  }
  for (size_t i = 0; i < nk; i++) free(keys[i].key);
  free(keys);
  free(name);
  free(usplit);
  return st;
}

/* ---- the leakage check -------------------------------------------------- */

typedef struct hent {
  uint64_t h;
  size_t sample; /* a train sample with this hash (as state or target) */
} hent;

static int cmp_hent(const void *a, const void *b) {
  const hent *x = a, *y = b;
  if (x->h != y->h) return x->h < y->h ? -1 : 1;
  return x->sample < y->sample ? -1 : x->sample > y->sample;
}

static const hent *find(const hent *v, size_t n, uint64_t h) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid].h < h) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && v[lo].h == h ? &v[lo] : NULL;
}

leir_status leir__fin_check_leakage(leir__fin *f) {
  leir__split_stats *sp = &f->split;
  /* the train records' prompt states and targets */
  hent *tr = malloc((2 * f->n + 1) * sizeof *tr);
  if (!tr) return leir__error_nomem();
  size_t nt = 0;
  for (size_t i = 0; i < f->n; i++) {
    const leir__smp *s = &f->s[i];
    if (s->split != LEIR__TRAIN || !(s->single || s->multi_items)) continue;
    if (s->state_hash) tr[nt].h = s->state_hash, tr[nt++].sample = i;
    if (s->tir_hash) tr[nt].h = s->tir_hash, tr[nt++].sample = i;
  }
  qsort(tr, nt, sizeof *tr, cmp_hent);
  size_t nd = 0;
  for (size_t i = 0; i < nt; i++)
    if (!nd || tr[nd - 1].h != tr[i].h) tr[nd++] = tr[i];
  sp->train_hashes = nd;
  /* held-out states (once per group) and labels */
  const leir__smp *leak = NULL, *with = NULL;
  int leak_is_state = 0;
  for (size_t g = 0; g < f->ng; g++) {
    const leir__sgroup *grp = &f->g[g];
    if (grp->split == LEIR__TRAIN) continue;
    const leir__smp *first = &f->s[grp->first];
    /* a hash of 0 is a field the unit file lacks: never a match */
    const hent *e = first->state_hash ? find(tr, nd, first->state_hash) : NULL;
    sp->checked_states++;
    if (e) {
      sp->states_in_train[grp->split]++;
      if (!leak) leak = first, with = &f->s[e->sample], leak_is_state = 1;
    }
    for (size_t i = 0; i < grp->count; i++) {
      const leir__smp *s = &f->s[grp->first + i];
      sp->checked_labels++;
      if (s->tir_hash && (e = find(tr, nd, s->tir_hash))) {
        sp->labels_in_train[grp->split]++;
        if (!leak) leak = s, with = &f->s[e->sample];
      }
    }
  }
  /* a unit whose samples landed in two splits (cannot happen by
   * construction; counted so that the card states it) */
  const leir__smp *prev = NULL;
  for (size_t i = 0; i < f->n; i++) {
    const leir__smp *s = &f->s[i];
    if (prev && prev->u == s->u && prev->split != s->split) sp->units_in_two_splits++;
    prev = s;
  }
  free(tr);
  if (!leak && !sp->units_in_two_splits) return LEIR_OK;
  if (!leak)
    return leir__error(LEIR_ERR_INTERNAL, "dataset.leakage", NULL, 0, 0,
                       "%llu units have samples in two splits", (unsigned long long)sp->units_in_two_splits);
  return leir__error(LEIR_ERR_INVALID, "dataset.leakage", leak->unit, 0, 0,
                     "the held-out splits leak into train: %llu test and %llu validation states, %llu test "
                     "and %llu validation labels are prompt states or targets of train records (first: %s "
                     "%016llx of %s (%s) is in train from %s); the sources overlap (the same program twice, "
                     "or one a step of another): remove one, or hold out by workload (split.by: workload)",
                     (unsigned long long)sp->states_in_train[LEIR__TEST],
                     (unsigned long long)sp->states_in_train[LEIR__VALIDATION],
                     (unsigned long long)sp->labels_in_train[LEIR__TEST],
                     (unsigned long long)sp->labels_in_train[LEIR__VALIDATION], leak_is_state ? "state" : "label",
                     (unsigned long long)(leak_is_state ? leak->state_hash : leak->tir_hash), leak->unit,
                     leir__split_name(leak->split), with->unit);
}
