/*
 * set_storage_layout (21, memory): change the layout of an intermediate
 * tensor in every access at once (no copy):
 *   transpose  entries permuted
 *   flatten    one entry, column-major (e_last*(n0*...)+...+e1*n0+e0), as in
 *              the reference
 *   reshape2   entries i > j fused as e_i*n_j+e_j, appended to the others,
 *              then permuted (rank >= 3; for rank 2 it would equal flatten)
 *   reshape1   entry k of extent n split by (d, n/d) into e//(n/d), e%(n/d)
 * Extents n are the intermediate's buffer shape (spec/leir.md §3.5).
 *
 * Sites: every intermediate whose accesses all have one rank (one buffer)
 * and affine subscripts (no indirect index, no // or %: layouts of such
 * subscripts would hide from the backends that P/V/B loops write disjoint
 * elements, so layout changes do not chain through a reshape1). Parameters as for layout_transformation, without
 * `nest`: transposes up to rank 6, flatten for rank >= 2, reshape2 for
 * rank 3..6, reshape1 for every dimension with a divisor pair. Exact.
 */
#include <stdlib.h>
#include <string.h>

#include "memory_sites.h"
#include "visit.h"

#define MAXDIV 256

typedef struct iscan {
  const leir__analysis *a;
  uint32_t sym;
  uint32_t rank;
  bool seen, mixed_rank, indirect, nonaffine;
} iscan;

static int scan_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  iscan *s = v->ud;
  const leir_expr *e = *slot;
  if (e->kind == LEIR_EXPR_TENSOR && e->sym == s->sym) {
    if (s->seen && e->n != s->rank) s->mixed_rank = true;
    s->seen = true;
    s->rank = e->n;
    for (uint32_t k = 0; k < e->n; k++) {
      leir__affine f;
      if (leir__expr_has_tensor(e->kids[k])) s->indirect = true;
      else if (!leir__affine_of(s->a, e->kids[k], &f)) s->nonaffine = true;
    }
  }
  return LEIR__VISIT_NEXT;
}

/* Buffer shape of intermediate sym (the one buffer of that name). */
static const leir__buffer *buffer_of(const leir__sctx *c, uint32_t sym) {
  const leir__buffer *found = NULL;
  for (uint32_t b = 0; b < c->a->nbuffers; b++)
    if (c->a->buffers[b].sym == sym) {
      if (found) return NULL;
      found = &c->a->buffers[b];
    }
  return found;
}

static void emit_layout(leir__sctx *c, uint32_t sym, const leir__layout *L) {
  char buf[256];
  leir__layout_params(L, buf, sizeof buf);
  leir__emit(c, LEIR_EXACT, "tensor=%s %s", leir__name(c, sym), buf);
}

static bool site(leir__sctx *c, uint32_t sym, const leir__buffer **bufp) {
  const char *name = leir__name(c, sym);
  if (c->known[sym]) {
    LEIR__REJECT(c, leir__site_tensor(c, NULL, sym), LEIR__R_STORAGE_KNOWN,
                 "%s is an input or output of the program; only intermediates change layout",
                 name);
    return false;
  }
  iscan s;
  memset(&s, 0, sizeof s);
  s.a = c->a;
  s.sym = sym;
  leir__visit v = LEIR__VISIT_INIT(scan_node, &s);
  for (uint32_t t = 0; t < c->p->nnests; t++) leir__visit_nest(&v, c->p->nests[t]);
  const leir__buffer *buf = buffer_of(c, sym);
  if (s.mixed_rank || !buf) {
    LEIR__REJECT(c, leir__site_tensor(c, NULL, sym), LEIR__R_STORAGE_BUFFERS,
                 "%s names several buffers (it is redefined with another rank)", name);
    return false;
  }
  if (s.indirect) {
    LEIR__REJECT(c, leir__site_tensor(c, NULL, sym), LEIR__R_MEMORY_INDIRECT,
                 "%s is accessed through an indirect (tensor) index", name);
    return false;
  }
  if (s.nonaffine) {
    /* e.g. after a reshape1 (tx//4, tx%4): a further layout change would
     * leave subscripts from which P/V/B loops cannot be proven independent */
    LEIR__REJECT(c, leir__site_tensor(c, NULL, sym), LEIR__R_LAYOUT_NONAFFINE,
                 "%s has a subscript that is not an affine function of the loops", name);
    return false;
  }
  if (s.rank == 0) {
    LEIR__REJECT(c, leir__site_tensor(c, NULL, sym), LEIR__R_MEMORY_SCALAR, "%s is a scalar", name);
    return false;
  }
  *bufp = buf;
  return true;
}

static void enumerate(leir__sctx *c) {
  /* intermediates in order of first appearance: the analysis lists buffers
   * in definition order after the signature's */
  for (uint32_t b = 0; b < c->a->nbuffers && leir__more(c); b++) {
    uint32_t sym = c->a->buffers[b].sym;
    bool first = true;
    for (uint32_t j = 0; j < b; j++) first = first && c->a->buffers[j].sym != sym;
    if (!first || leir__skip_tensor(c, sym)) continue;
    const leir__buffer *buf;
    if (!site(c, sym, &buf)) continue;
    uint32_t n = buf->rank;
    leir__layout L;
    memset(&L, 0, sizeof L);
    L.col_major = true;
    if (n >= 2 && n <= LEIR__MAX_PERM_RANK) {
      L.kind = LEIR__LAYOUT_TRANSPOSE;
      L.nperm = n;
      for (uint32_t k = 0; k < n; k++) L.perm[k] = k;
      while (leir__next_perm(L.perm, n) && leir__more(c)) emit_layout(c, sym, &L);
    } else if (n > LEIR__MAX_PERM_RANK) {
      LEIR__REJECT(c, leir__site_tensor(c, NULL, sym), LEIR__R_LAYOUT_RANK,
                   "rank %u: transposes are enumerated up to rank %d", n, LEIR__MAX_PERM_RANK);
    }
    bool small = buf->elements <= ((uint64_t)1 << 40);
    if (n >= 2 && small && leir__more(c)) {
      L.kind = LEIR__LAYOUT_FLATTEN;
      emit_layout(c, sym, &L);
    }
    /* rank 2 would repeat flatten; unlike layout_transformation, the
     * reference fuses pairs of intermediates of any rank >= 2 */
    if (n >= 3 && n <= LEIR__MAX_PERM_RANK && small) {
      L.kind = LEIR__LAYOUT_RESHAPE2;
      L.nperm = n - 1;
      for (uint32_t i = 0; i < n && leir__more(c); i++)
        for (uint32_t j = 0; j < i && leir__more(c); j++) {
          L.dims[0] = i;
          L.dims[1] = j;
          for (uint32_t k = 0; k < n - 1; k++) L.perm[k] = k;
          do emit_layout(c, sym, &L);
          while (leir__next_perm(L.perm, n - 1) && leir__more(c));
        }
    }
    if (n >= LEIR_MAX_RANK) continue;
    for (uint32_t k = 0; k < n && leir__more(c); k++) {
      int64_t dv[MAXDIV];
      uint32_t nd = leir__divisors(buf->shape[k], dv, MAXDIV);
      L.kind = LEIR__LAYOUT_RESHAPE1;
      L.dim = k;
      for (uint32_t j = 0; j < nd && leir__more(c); j++) {
        L.factor = dv[j];
        emit_layout(c, sym, &L);
      }
    }
  }
}

typedef struct lay_ctx {
  leir_program *out;
  uint32_t sym;
  const int64_t *ext;
  const leir__layout *L;
} lay_ctx;

static void relayout(lay_ctx *x, leir_expr *e) {
  for (uint32_t k = 0; k < e->n; k++) relayout(x, e->kids[k]);
  if (e->kind == LEIR_EXPR_TENSOR && e->sym == x->sym) {
    leir_expr *entries[LEIR_MAX_RANK + 1];
    uint32_t m = leir__layout_apply(x->out, x->out, e->kids, e->n, x->ext, x->L, entries);
    leir_expr **kids = leir__palloc(x->out, (m ? m : 1) * sizeof *kids);
    for (uint32_t k = 0; k < m; k++) kids[k] = entries[k];
    e->kids = kids;
    e->n = m;
  }
}

static void relayout_nest(lay_ctx *x, leir_nest *n) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].nest) {
      relayout_nest(x, n->items[k].nest);
    } else {
      relayout(x, n->items[k].eq->lhs);
      relayout(x, n->items[k].eq->rhs);
    }
  }
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  uint32_t x = leir__ps_tensor(c, leir__ps_get(ps, LEIR__K_TENSOR, NULL));
  const leir__buffer *buf = x == LEIR__NOSYM ? NULL : buffer_of(c, x);
  leir__layout L;
  if (!buf || !leir__layout_of_step(ps, buf->rank, &L)) return LEIR_ERR_INTERNAL;
  L.col_major = true;
  lay_ctx lc = {out, x, buf->shape, &L};
  for (uint32_t t = 0; t < out->nnests; t++) relayout_nest(&lc, out->nests[t]);
  return LEIR_OK;
}

const leir__strategy_impl leir__set_storage_layout = {
    .keys = LEIR__KEY(LEIR__K_TENSOR) | LEIR__KEY(LEIR__K_LAYOUT) | LEIR__KEY(LEIR__K_PERM) | LEIR__KEY(LEIR__K_DIMS) | LEIR__KEY(LEIR__K_DIM) | LEIR__KEY(LEIR__K_FACTOR),
    .required = LEIR__KEY(LEIR__K_TENSOR) | LEIR__KEY(LEIR__K_LAYOUT),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_storage_layout_facts,
};
