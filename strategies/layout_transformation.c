/*
 * layout_transformation (19, memory): copy a tensor X that a nest reads
 * into a new tensor T with another layout, and read T instead:
 *   transpose  T_{perm(e)} = X_{e}; the nest reads T_{perm(e)}
 *   flatten    T_{e0*(n1*...)+...+e_last} = X_{e} (row-major)
 *   reshape2   two entries fused as e_i*n_j+e_j, appended to the others,
 *              then permuted (rank >= 5, as in the reference)
 *   reshape1   single-variable entry k of extent n split by (d, n/d): the
 *              copy runs a new loop o of extent d before k (extent n/d):
 *              T_{..,o,k,..} = X_{..,o*(n/d)+k,..}; the nest reads
 *              T_{..,k//(n/d),k%(n/d),..}
 * The copy runs over the nest's loops used by the subscript (nest order;
 * reshape1: subscript order), with the tx fix-up (cache_read_write.c).
 * Entry extents n_k are 1 + the largest value of entry k.
 *
 * Sites: top-level nests with one equation whose right side is not a plain
 * copy, and every tensor they read with affine subscripts that a copy can
 * stage (memory_sites.c). Parameters: `tensor=X layout=transpose perm=...`
 * (every non-identity permutation, rank <= 6), `layout=flatten` (rank >=
 * 2), `layout=reshape2 dims=i,j perm=...` (ordered pairs and every
 * permutation, rank 5..6), `layout=reshape1 dim=k factor=d` (every
 * divisor 1 < d <= sqrt(n)). Exact.
 */
#include <string.h>

#include "memory_sites.h"
#include "visit.h"

#define MAXDIV 256

static bool fits_product(const leir__read_site *s, uint32_t n) {
  int64_t prod = 1;
  for (uint32_t k = 0; k < n; k++)
    if (__builtin_mul_overflow(prod, s->hi[k] + 1, &prod) || prod > ((int64_t)1 << 40)) return false;
  return true;
}

/* Is entry k a loop variable used by no other entry? */
static int single_var_loop(const leir__nref *r, const leir_expr *t, uint32_t k) {
  const leir_expr *e = t->kids[k];
  if (e->kind != LEIR_EXPR_VAR) return -1;
  for (uint32_t j = 0; j < t->n; j++)
    if (j != k && leir__expr_uses_var(t->kids[j], e->sym)) return -1;
  for (uint32_t l = 0; l < r->nest->nloops; l++)
    if (r->nest->loops[l].sym == e->sym) return (int)l;
  return -1;
}

static void emit_layout(leir__sctx *c, const leir__nref *r, uint32_t sym, const leir__layout *L) {
  char buf[256];
  leir__layout_params(L, buf, sizeof buf);
  leir__emit(c, LEIR_EXACT, "nest=%s tensor=%s %s", r->label, leir__name(c, sym), buf);
}

static void each_site(leir__sctx *c, const leir__nref *r, const leir__read_site *s, void *ud) {
  (void)ud;
  uint32_t n = s->ref->n;
  const char *name = leir__name(c, s->sym);
  for (uint32_t k = 0; k < n; k++) {
    leir__affine f;
    if (!leir__affine_of(c->a, s->ref->kids[k], &f)) {
      /* the copy writes these entries: the backends could not prove its
       * bound loop independent */
      LEIR__REJECT(c, leir__site_tensor(c, r, s->sym), LEIR__R_LAYOUT_NONAFFINE,
                   "subscript %u of %s is not an affine function of the loops", k + 1, name);
      return;
    }
  }
  leir__layout L;
  memset(&L, 0, sizeof L);
  if (n < 2) {
    LEIR__REJECT(c, leir__site_tensor(c, r, s->sym), LEIR__R_LAYOUT_RANK,
                 "%s has rank 1: only reshape1 applies", name);
  } else if (n > LEIR__MAX_PERM_RANK) {
    LEIR__REJECT(c, leir__site_tensor(c, r, s->sym), LEIR__R_LAYOUT_RANK,
                 "%s has rank %u: transposes are enumerated up to rank %d", name, n,
                 LEIR__MAX_PERM_RANK);
  } else {
    L.kind = LEIR__LAYOUT_TRANSPOSE;
    L.nperm = n;
    for (uint32_t k = 0; k < n; k++) L.perm[k] = k;
    while (leir__next_perm(L.perm, n) && leir__more(c)) emit_layout(c, r, s->sym, &L);
  }
  if (n >= 2 && leir__more(c)) {
    if (fits_product(s, n)) {
      L.kind = LEIR__LAYOUT_FLATTEN;
      emit_layout(c, r, s->sym, &L);
    } else {
      LEIR__REJECT(c, leir__site_tensor(c, r, s->sym), LEIR__R_LAYOUT_SIZE,
                   "the flattened index of %s would be too large", name);
    }
  }
  if (n >= 5 && n <= LEIR__MAX_PERM_RANK && fits_product(s, n)) {
    L.kind = LEIR__LAYOUT_RESHAPE2;
    L.nperm = n - 1;
    for (uint32_t i = 0; i < n && leir__more(c); i++)
      for (uint32_t j = 0; j < n && leir__more(c); j++) {
        if (i == j) continue;
        L.dims[0] = i;
        L.dims[1] = j;
        for (uint32_t k = 0; k < n - 1; k++) L.perm[k] = k;
        do emit_layout(c, r, s->sym, &L);
        while (leir__next_perm(L.perm, n - 1) && leir__more(c));
      }
  }
  if (n >= LEIR_MAX_RANK) return;
  for (uint32_t k = 0; k < n && leir__more(c); k++) {
    int l = single_var_loop(r, s->ref, k);
    if (l < 0) {
      if (c->mode == LEIR__MODE_EXPLAIN) {
        snprintf(c->site, sizeof c->site, "nest=%s tensor=%s dim=%u", r->label, name, k);
        leir__reject(c, c->site, LEIR__R_LAYOUT_RESHAPE1,
                     "subscript %u of %s is not a loop variable of its own", k + 1, name);
      }
      continue;
    }
    int64_t dv[MAXDIV];
    uint32_t nd = leir__divisors(r->nest->loops[l].extent, dv, MAXDIV);
    if (!nd && c->mode == LEIR__MODE_EXPLAIN) {
      snprintf(c->site, sizeof c->site, "nest=%s tensor=%s dim=%u", r->label, name, k);
      leir__reject(c, c->site, LEIR__R_LOOP_NO_DIVISOR,
                   "extent %lld of subscript %u has no divisor pair (d, n/d) with 1 < d <= sqrt(n)",
                   (long long)r->nest->loops[l].extent, k + 1);
    }
    L.kind = LEIR__LAYOUT_RESHAPE1;
    L.dim = k;
    for (uint32_t j = 0; j < nd && leir__more(c); j++) {
      L.factor = dv[j];
      emit_layout(c, r, s->sym, &L);
    }
  }
}

static bool nest_ok(leir__sctx *c, const leir__nref *r) {
  if (r->depth != 1 || r->has_nested || r->neqs != 1) {
    LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_LAYOUT_TRANSFORMATION_NEST,
                 "only top-level nests with exactly one equation are transformed");
    return false;
  }
  if (r->nest->items[0].eq->rhs->kind == LEIR_EXPR_TENSOR) {
    LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_LAYOUT_TRANSFORMATION_COPY,
                 "the nest is a plain copy");
    return false;
  }
  return true;
}

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (leir__skip_nest(c, r)) continue;
    if (nest_ok(c, r)) leir__each_read_site(c, r, each_site, NULL);
  }
}

/* Replaces the reads of `from` in e by T with entries from the layout. */
typedef struct rd_ctx {
  leir_program *out;
  const leir_program *src;
  uint32_t from, to;
  const int64_t *ext;
  const leir__layout *L;
} rd_ctx;

static int replace_read(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  rd_ctx *x = v->ud;
  leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_TENSOR || e->sym != x->from) return LEIR__VISIT_NEXT;
  leir_expr *entries[LEIR_MAX_RANK + 1];
  uint32_t m = leir__layout_apply(x->out, x->out, e->kids, e->n, x->ext, x->L, entries);
  leir_expr *t = leir__new_tensor(x->out, x->to, (leir_dtype)e->dtype, (leir_scope)e->scope, m);
  for (uint32_t k = 0; k < m; k++) t->kids[k] = entries[k];
  *slot = t;
  return LEIR__VISIT_SKIP;
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  uint32_t x = leir__ps_tensor(c, leir__ps_get(ps, LEIR__K_TENSOR, NULL));
  leir__read_site s;
  leir__mode saved = c->mode;
  c->mode = LEIR__MODE_LIST;
  bool ok = r && x != LEIR__NOSYM && leir__read_site_of(c, r, x, &s);
  c->mode = saved;
  leir__layout L;
  if (!ok || !leir__layout_of_step(ps, s.ref->n, &L)) return LEIR_ERR_INTERNAL;
  uint32_t n = s.ref->n;
  int64_t ext[LEIR_MAX_RANK];
  for (uint32_t k = 0; k < n; k++) ext[k] = s.hi[k] + 1;
  uint32_t top = r->path[0];
  leir_nest *m = out->nests[top];
  uint32_t t = leir__tensor_sym(out, c->next_tensor);
  leir_nest *cp;
  leir_expr *dst, *srcx;
  if (L.kind != LEIR__LAYOUT_RESHAPE1) {
    cp = leir__copy_nest_for(out, r->nest, s.sel, s.nsel);
    srcx = leir__copy_expr(out, c->p, s.ref);
    leir__layout copy = L;
    leir_expr *entries[LEIR_MAX_RANK + 1];
    uint32_t rank = leir__layout_apply(out, c->p, s.ref->kids, n, ext, &copy, entries);
    dst = leir__new_tensor(out, t, (leir_dtype)s.ref->dtype, (leir_scope)s.ref->scope, rank);
    for (uint32_t k = 0; k < rank; k++) dst->kids[k] = entries[k];
  } else {
    /* loops in subscript order, a new loop o before the split entry */
    uint32_t k0 = L.dim;
    uint32_t var = s.ref->kids[k0]->sym;
    int64_t inner = ext[k0] / L.factor;
    uint32_t o = leir__fresh_loop(out, c->p->nests[top], (uint64_t)r->nest->nloops + 1, NULL, 0);
    leir__loop loops[66];
    uint32_t nl = 0;
    uint64_t seen = 0;
    for (uint32_t k = 0; k < n; k++) {
      if (k == k0) {
        loops[nl++] = (leir__loop){LEIR_LOOP_SERIAL, o, L.factor, LEIR__NOPOS};
        for (uint32_t l = 0; l < r->nest->nloops; l++)
          if (r->nest->loops[l].sym == var) {
            loops[nl] = r->nest->loops[l];
            loops[nl++].extent = inner;
            seen |= (uint64_t)1 << l;
          }
        continue;
      }
      uint64_t used = leir__loops_in(r->nest, s.ref->kids[k]);
      for (uint32_t l = 0; l < r->nest->nloops; l++)
        if ((used >> l & 1) && !(seen >> l & 1)) {
          loops[nl++] = r->nest->loops[l];
          seen |= (uint64_t)1 << l;
        }
    }
    leir_nest tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.nloops = nl;
    tmp.loops = loops;
    uint32_t sel[66];
    for (uint32_t k = 0; k < nl; k++) sel[k] = k;
    cp = leir__copy_nest_for(out, &tmp, sel, nl);
    srcx = leir__copy_expr(out, c->p, s.ref);
    leir__layout none;
    memset(&none, 0, sizeof none);
    srcx->kids[k0] = leir__mk_bin(out, LEIR_OP_ADD,
                                  leir__mk_bin(out, LEIR_OP_MUL, leir__mk_var(out, o),
                                               leir__mk_int(out, inner)),
                                  leir__mk_var(out, var));
    dst = leir__new_tensor(out, t, (leir_dtype)s.ref->dtype, (leir_scope)s.ref->scope, n + 1);
    for (uint32_t k = 0, w = 0; k < n; k++) {
      if (k == k0) dst->kids[w++] = leir__mk_var(out, o);
      dst->kids[w++] = leir__copy_expr(out, c->p, s.ref->kids[k]);
    }
  }
  cp->items[0].eq = leir__new_equation(out, dst, srcx);
  leir__finish_copy_nest(out, cp);
  rd_ctx rc = {out, c->p, x, t, ext, &L};
  leir__visit v = LEIR__VISIT_INIT(replace_read, &rc);
  leir__visit_expr(&v, &m->items[0].eq->rhs);
  leir__program_insert_nest(out, top, cp);
  return LEIR_OK;
}

const leir__strategy_impl leir__layout_transformation = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_TENSOR) | LEIR__KEY(LEIR__K_LAYOUT) | LEIR__KEY(LEIR__K_PERM) | LEIR__KEY(LEIR__K_DIMS) | LEIR__KEY(LEIR__K_DIM) | LEIR__KEY(LEIR__K_FACTOR),
    .required = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_TENSOR) | LEIR__KEY(LEIR__K_LAYOUT),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_layout_facts,
};
