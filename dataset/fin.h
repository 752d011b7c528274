/* Internals of the outputs of a dataset build (finalize.c and the parts it
 * calls: split.c, select.c, records.c, card.c). Everything is a function of
 * the unit files and the config, so the files are byte-identical for the
 * same config whatever the sharding or the interruptions. */
#ifndef LEIR_DATASET_FIN_H
#define LEIR_DATASET_FIN_H

#include <stdint.h>
#include <stdlib.h>

#include "arena.h"
#include "ds.h"
#include "error.h"
#include "literal.h"

/* The splits, in the order the card lists them. */
enum { LEIR__TRAIN = 0, LEIR__VALIDATION = 1, LEIR__TEST = 2, LEIR__NSPLITS = 3 };
/* "train", "validation", "test": the "split" of a record. */
const char *leir__split_name(int split);

typedef struct leir__smp {
  const char *line;      /* the unit file's line (NUL-terminated copy) */
  const leir__lit *v;
  const char *id, *unit, *name, *state, *orig, *strategy, *slevel, *tir, *cot, *verdict, *exactness;
  int level, sidx;
  uint32_t depth;
  const leir__lit *known;
  size_t u;              /* index of its unit */
  size_t st;             /* state group */
  uint64_t state_hash;   /* alpha hash of the state (state.id) */
  uint64_t tir_hash;     /* alpha hash of the transformed IR (transformed_alpha_hash) */
  int split;             /* LEIR__TRAIN, ... (its unit's) */
  int capped;            /* dropped by the per-strategy cap */
  int ruled;             /* dropped by a single rule */
  int single;            /* written as a single record */
  uint64_t multi_items;  /* items in written multi records */
} leir__smp;

typedef struct leir__sgroup {
  size_t first, count;   /* samples[first .. first+count) */
  int split;
} leir__sgroup;

typedef struct leir__multi {
  size_t group;
  size_t items[64];
  size_t n;
} leir__multi;

/* What the split put where, and the leakage check (split.c). */
typedef struct leir__split_stats {
  uint64_t keys[LEIR__NSPLITS];   /* source programs (or workload families) */
  uint64_t units[LEIR__NSPLITS];  /* units with kept samples */
  uint64_t states[LEIR__NSPLITS];
  /* the check: held-out states and labels found in train records (as prompt
   * state or target), by alpha hash, and units whose samples are in two
   * splits; a build with any of these fails */
  uint64_t checked_states, checked_labels, train_hashes;
  uint64_t states_in_train[LEIR__NSPLITS];
  uint64_t labels_in_train[LEIR__NSPLITS];
  uint64_t units_in_two_splits;
} leir__split_stats;

typedef struct leir__fin {
  leir_dataset *ds;
  leir__arena arena;
  char **texts;
  size_t n_texts;
  leir__smp *s;
  size_t n, cap;
  leir__sgroup *g;
  size_t ng, capg;
  leir__multi *m;
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
  leir__split_stats split;
} leir__fin;

/* The files being written: train records are collected one by one and
 * written in a seeded order (finalize.c). */
typedef struct leir__outs {
  leir__strbuf train, eval, validation, archive, rejections;
  size_t *train_starts;  /* offset of each record in `train` */
  size_t n_train, cap_train;
  uint64_t n_train_single, n_train_multi;
  uint64_t n_single[LEIR__NSPLITS], n_multi[LEIR__NSPLITS]; /* held-out prompts (index 0 unused) */
} leir__outs;

#define LEIR__GROW(arr, n, cap)                                        \
  do {                                                                 \
    if ((n) == (cap)) {                                                \
      size_t nc_ = (cap) ? (cap) * 2 : 64;                             \
      void *v_ = realloc((arr), nc_ * sizeof *(arr));                  \
      if (!v_) return leir__error_nomem();                             \
      (arr) = v_;                                                      \
      (cap) = nc_;                                                     \
    }                                                                  \
  } while (0)

/* The split of every unit, group and sample (split.c). */
leir_status leir__fin_assign_splits(leir__fin *f);
/* The per-strategy cap, the single rules and the multi-label records of the
 * train split (select.c). */
leir_status leir__fin_select(leir__fin *f);
/* The leakage check over the selected records (split.c): fills f->split and
 * fails (LEIR_ERR_INVALID, rule dataset.leakage) when a held-out state or
 * label is in train. */
leir_status leir__fin_check_leakage(leir__fin *f);
/* The records of state group g (records.c). */
leir_status leir__fin_write_group(leir__fin *f, leir__outs *o, size_t g);
/* summary.json, the SVG histograms and README.md (card.c). */
leir_status leir__fin_summary_and_card(leir__fin *f, leir__outs *o);
/* Writes the buffer (consumed) as out_dir/name, atomically. */
leir_status leir__fin_write_file(leir__fin *f, const char *name, leir__strbuf *b);

#endif
