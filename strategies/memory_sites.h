/*
 * Sites shared by the memory strategies that copy a tensor read by a nest
 * (cache_read_write, layout_transformation): the tensors a top-level nest
 * reads, each with the one subscript every read uses.
 */
#ifndef LEIR_STRATEGIES_MEMORY_SITES_H
#define LEIR_STRATEGIES_MEMORY_SITES_H

#include "kit.h"

typedef struct leir__read_site {
  uint32_t sym;
  const leir_expr *ref;   /* the first read (all reads share its subscript) */
  const leir__buffer *buf;
  uint64_t loops;         /* loops of the nest used by the subscript */
  uint32_t sel[64];       /* those loops in nest order */
  uint32_t nsel;
  int fixup;              /* leir__fixup_index of the copy loops */
  int64_t lo[LEIR_MAX_RANK], hi[LEIR_MAX_RANK]; /* entry ranges */
} leir__read_site;

/* Calls fn for every tensor read in top-level nest r (first-read order)
 * that a copy before the nest can stage: not written in the nest, every
 * read with the same subscript, rank >= 1, no indirect index, at least one
 * loop variable, every entry in bounds over the full loop ranges (the copy
 * reads without the guards). Rejections are reported as `rule_prefix`.*. */
void leir__each_read_site(leir__sctx *c, const leir__nref *r,
                          void (*fn)(leir__sctx *c, const leir__nref *r,
                                     const leir__read_site *s, void *ud),
                          void *ud);

/* The read site of tensor `sym` in r, when it qualifies. */
bool leir__read_site_of(leir__sctx *c, const leir__nref *r, uint32_t sym, leir__read_site *out);

/* A new nest of `out` with the loops sel[0..n) of src (kinds kept) and one
 * item slot for the copy equation. */
leir_nest *leir__copy_nest_for(leir_program *out, const leir_nest *src, const uint32_t *sel,
                               uint32_t n);
/* Once its equation is set: loops of kind P/V/B that the left-hand
 * subscript does not pin become L (several iterations write one element),
 * then the reference's fix-up (leir__fixup_index) names a bound tx loop. */
void leir__finish_copy_nest(leir_program *out, leir_nest *m);

/* ---- layouts (shared by layout_transformation and set_storage_layout) ---- */

typedef enum leir__layout_kind {
  LEIR__LAYOUT_TRANSPOSE = 0, /* entries permuted: new i = old perm[i] */
  LEIR__LAYOUT_FLATTEN,       /* one entry, row-major (or column-major) */
  LEIR__LAYOUT_RESHAPE2,      /* entries dims[0],dims[1] fused as e0*n1+e1, appended to
                               * the others, then permuted */
  LEIR__LAYOUT_RESHAPE1       /* entry `dim` split as e//(n/f), e%(n/f) */
} leir__layout_kind;

#define LEIR__MAX_PERM_RANK 6 /* transposes and reshape2 enumerate all permutations up to this rank */

typedef struct leir__layout {
  leir__layout_kind kind;
  bool col_major;  /* FLATTEN: last entry most significant (set_storage_layout) */
  uint32_t nperm;
  uint32_t perm[LEIR_MAX_RANK];
  uint32_t dims[2];
  uint32_t dim;
  int64_t factor;
} leir__layout;

/* Reads layout/perm/dims/dim/factor from a step; false when incomplete. */
bool leir__layout_of_step(const leir__pstep *ps, uint32_t rank, leir__layout *L);
/* Appends "layout=... perm=..." (canonical order) to buf. */
void leir__layout_params(const leir__layout *L, char *buf, size_t cap);
/* New subscript for entries e[0..n) (extents ext) under L, built in p from
 * copies of the entries (which live in program src). Returns the rank. */
uint32_t leir__layout_apply(leir_program *p, const leir_program *src, leir_expr *const *e, uint32_t n,
                            const int64_t *ext, const leir__layout *L, leir_expr **out);

#endif
