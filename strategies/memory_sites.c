/* Read sites and copy nests shared by the memory strategies. */
#include <string.h>

#include "memory_sites.h"
#include "visit.h"

typedef struct reads {
  uint32_t n;
  const leir_expr *first[256];
  bool same[256];
} reads;

typedef struct collect_ctx {
  const leir_program *p;
  reads *rd;
} collect_ctx;

/* Tensor reads at value positions (not inside subscripts). */
static int collect_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  const collect_ctx *cc = v->ud;
  reads *rd = cc->rd;
  const leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_TENSOR) return LEIR__VISIT_NEXT;
  uint32_t k = 0;
  while (k < rd->n && rd->first[k]->sym != e->sym) k++;
  if (k == rd->n) {
    if (rd->n < 256) {
      rd->first[rd->n] = e;
      rd->same[rd->n++] = true;
    }
  } else if (rd->same[k]) {
    const leir_expr *f = rd->first[k];
    bool eq = f->n == e->n && f->dtype == e->dtype && f->scope == e->scope;
    for (uint32_t j = 0; j < f->n && eq; j++) eq = leir__expr_equal(cc->p, f->kids[j], cc->p, e->kids[j]);
    rd->same[k] = eq;
  }
  return LEIR__VISIT_SKIP; /* indirect indices are not staged */
}

static void collect(const leir_program *p, const leir_expr *e, reads *rd) {
  collect_ctx cc = {p, rd};
  leir__visit v = LEIR__VISIT_INIT(collect_node, &cc);
  leir__visit_const(&v, e);
}

static bool written_in(const leir_nest *n, uint32_t sym) {
  for (uint32_t k = 0; k < n->nitems; k++)
    if (n->items[k].eq && n->items[k].eq->lhs->sym == sym) return true;
  return false;
}

static bool check_site(leir__sctx *c, const leir__nref *r, const leir_expr *t, bool same,
                       leir__read_site *s) {
  const char *name = leir__name(c, t->sym);
  if (!same) {
    LEIR__REJECT(c, leir__site_tensor(c, r, t->sym), LEIR__R_MEMORY_SUBSCRIPTS,
                 "%s is read with different subscripts in this nest", name);
    return false;
  }
  bool indexed = false;
  for (uint32_t k = 0; k < r->nest->nitems && !indexed; k++)
    indexed = leir__expr_tensor_in_subscript(r->nest->items[k].eq->lhs, t->sym) ||
              leir__expr_tensor_in_subscript(r->nest->items[k].eq->rhs, t->sym);
  if (indexed) {
    LEIR__REJECT(c, leir__site_tensor(c, r, t->sym), LEIR__R_MEMORY_SUBSCRIPTS,
                 "%s is also used as an index in this nest", name);
    return false;
  }
  if (written_in(r->nest, t->sym)) {
    LEIR__REJECT(c, leir__site_tensor(c, r, t->sym), LEIR__R_MEMORY_WRITTEN,
                 "%s is written in this nest", name);
    return false;
  }
  if (t->n == 0) {
    LEIR__REJECT(c, leir__site_tensor(c, r, t->sym), LEIR__R_MEMORY_SCALAR, "%s is a scalar", name);
    return false;
  }
  memset(s, 0, sizeof *s);
  s->sym = t->sym;
  s->ref = t;
  uint32_t b = t->id < c->a->nids ? c->a->expr_buffer[t->id] : LEIR__NONE;
  if (b == LEIR__NONE) return false;
  s->buf = &c->a->buffers[b];
  for (uint32_t k = 0; k < t->n; k++) {
    const leir_expr *e = t->kids[k];
    if (leir__expr_has_tensor(e)) {
      LEIR__REJECT(c, leir__site_tensor(c, r, t->sym), LEIR__R_MEMORY_INDIRECT,
                   "%s has an indirect (tensor) index", name);
      return false;
    }
    s->loops |= leir__loops_in(r->nest, e);
    if (!leir__entry_range(c, r, e, &s->lo[k], &s->hi[k]) || s->lo[k] < 0 ||
        s->hi[k] >= s->buf->shape[k]) {
      LEIR__REJECT(c, leir__site_tensor(c, r, t->sym), LEIR__R_MEMORY_BOUNDS,
                   "subscript %u of %s leaves the tensor for some iterations (it is only read "
                   "under a guard), so it cannot be copied unguarded",
                   k + 1, name);
      return false;
    }
  }
  if (!s->loops) {
    LEIR__REJECT(c, leir__site_tensor(c, r, t->sym), LEIR__R_MEMORY_CONSTANT_INDEX,
                 "%s is indexed by constants only", name);
    return false;
  }
  for (uint32_t k = 0; k < r->nest->nloops && k < 64; k++)
    if (s->loops >> k & 1) s->sel[s->nsel++] = k;
  s->fixup = leir__fixup_index(r->nest, s->sel, s->nsel, leir__pinned_by_subscript(r->nest, t));
  if (s->fixup < 0) {
    LEIR__REJECT(c, leir__site_tensor(c, r, t->sym), LEIR__R_MEMORY_NO_THREAD_LOOP,
                 "the copy has no bound loop and every loop has extent >= 1024, so none can "
                 "become its tx loop");
    return false;
  }
  return true;
}

static bool nest_ok(leir__sctx *c, const leir__nref *r) {
  if (r->depth != 1 || r->has_nested || r->nest->nloops > 64) {
    LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_MEMORY_NEST,
                 "only top-level nests without nested nests are staged");
    return false;
  }
  return true;
}

void leir__each_read_site(leir__sctx *c, const leir__nref *r,
                          void (*fn)(leir__sctx *c, const leir__nref *r,
                                     const leir__read_site *s, void *ud),
                          void *ud) {
  if (!nest_ok(c, r)) return;
  reads rd;
  rd.n = 0;
  for (uint32_t k = 0; k < r->nest->nitems; k++) collect(c->p, r->nest->items[k].eq->rhs, &rd);
  for (uint32_t k = 0; k < rd.n && leir__more(c); k++) {
    leir__read_site s;
    if (check_site(c, r, rd.first[k], rd.same[k], &s)) fn(c, r, &s, ud);
  }
}

bool leir__read_site_of(leir__sctx *c, const leir__nref *r, uint32_t sym, leir__read_site *out) {
  if (r->depth != 1 || r->has_nested || r->nest->nloops > 64) return false;
  reads rd;
  rd.n = 0;
  for (uint32_t k = 0; k < r->nest->nitems; k++) collect(c->p, r->nest->items[k].eq->rhs, &rd);
  for (uint32_t k = 0; k < rd.n; k++)
    if (rd.first[k]->sym == sym) return check_site(c, r, rd.first[k], rd.same[k], out);
  return false;
}

leir_nest *leir__copy_nest_for(leir_program *out, const leir_nest *src, const uint32_t *sel,
                               uint32_t n) {
  leir_nest *m = leir__new_nest(out, n, 1);
  for (uint32_t k = 0; k < n; k++) m->loops[k] = src->loops[sel[k]];
  return m;
}

void leir__finish_copy_nest(leir_program *out, leir_nest *m) {
  const leir_expr *lhs = m->items[0].eq->lhs;
  uint64_t pinned = leir__pinned_by_subscript(m, lhs);
  for (uint32_t k = 0; k < m->nloops && k < 64; k++) {
    uint8_t kind = m->loops[k].kind;
    if ((kind == LEIR_LOOP_PARALLEL || kind == LEIR_LOOP_VECTORIZED || kind == LEIR_LOOP_BOUND) &&
        !(pinned >> k & 1))
      m->loops[k].kind = LEIR_LOOP_SERIAL; /* several iterations write one element */
  }
  uint32_t sel[64];
  uint32_t n = m->nloops < 64 ? m->nloops : 64;
  for (uint32_t k = 0; k < n; k++) sel[k] = k;
  int fix = leir__fixup_index(m, sel, n, pinned);
  if (fix < 0 || (uint32_t)fix >= n) return;
  uint32_t old = m->loops[fix].sym;
  m->loops[fix].kind = LEIR_LOOP_BOUND;
  m->loops[fix].sym = LEIR__NOSYM; /* judge `tx` against the other loops only */
  uint32_t tx = LEIR__NOSYM;
  char buf[16] = "tx";
  for (unsigned i = 1; tx == LEIR__NOSYM; i++) {
    bool used = false;
    for (uint32_t k = 0; k < m->nloops; k++)
      if (m->loops[k].sym != LEIR__NOSYM && strcmp(leir__sym_name(out, m->loops[k].sym), buf) == 0)
        used = true;
    if (!used) tx = leir__sym_intern(out, buf, strlen(buf));
    else snprintf(buf, sizeof buf, "tx_%u", i);
  }
  m->loops[fix].sym = old;
  leir__rename_var(m, old, tx);
}

/* ---- layouts ------------------------------------------------------------------- */

void leir__layout_params(const leir__layout *L, char *buf, size_t cap) {
  size_t off = 0;
  switch (L->kind) {
    case LEIR__LAYOUT_TRANSPOSE:
      off = (size_t)snprintf(buf, cap, "layout=transpose perm=");
      leir__format_list(buf + off, cap - off, L->perm, L->nperm);
      break;
    case LEIR__LAYOUT_FLATTEN: snprintf(buf, cap, "layout=flatten"); break;
    case LEIR__LAYOUT_RESHAPE2:
      off = (size_t)snprintf(buf, cap, "layout=reshape2 dims=%u,%u perm=", L->dims[0], L->dims[1]);
      leir__format_list(buf + off, cap - off, L->perm, L->nperm);
      break;
    case LEIR__LAYOUT_RESHAPE1:
      snprintf(buf, cap, "layout=reshape1 dim=%u factor=%lld", L->dim, (long long)L->factor);
      break;
  }
}

static bool int_list(const leir__tok *t, uint32_t n, uint32_t *out, uint32_t max) {
  for (uint32_t k = 0; k < n; k++) {
    int64_t v;
    if (!leir__tok_int(&t[k], &v) || v >= (int64_t)max) return false;
    out[k] = (uint32_t)v;
  }
  return true;
}

bool leir__layout_of_step(const leir__pstep *ps, uint32_t rank, leir__layout *L) {
  memset(L, 0, sizeof *L);
  const leir__tok *lay = leir__ps_get(ps, LEIR__K_LAYOUT, NULL);
  uint32_t np = 0, nd = 0;
  const leir__tok *perm = leir__ps_get(ps, LEIR__K_PERM, &np);
  const leir__tok *dims = leir__ps_get(ps, LEIR__K_DIMS, &nd);
  if (!lay || rank > LEIR_MAX_RANK) return false;
  if (leir__tok_eq(lay, "transpose")) {
    L->kind = LEIR__LAYOUT_TRANSPOSE;
    L->nperm = np;
    return np == rank && int_list(perm, np, L->perm, rank);
  }
  if (leir__tok_eq(lay, "flatten")) {
    L->kind = LEIR__LAYOUT_FLATTEN;
    return true;
  }
  if (leir__tok_eq(lay, "reshape2")) {
    L->kind = LEIR__LAYOUT_RESHAPE2;
    L->nperm = np;
    return rank >= 2 && nd == 2 && np == rank - 1 && int_list(dims, 2, L->dims, rank) &&
           int_list(perm, np, L->perm, rank - 1);
  }
  if (leir__tok_eq(lay, "reshape1")) {
    int64_t d;
    L->kind = LEIR__LAYOUT_RESHAPE1;
    if (!leir__tok_int(leir__ps_get(ps, LEIR__K_DIM, NULL), &d) || d >= rank) return false;
    L->dim = (uint32_t)d;
    return leir__tok_int(leir__ps_get(ps, LEIR__K_FACTOR, NULL), &L->factor) && L->factor > 0;
  }
  return false;
}

uint32_t leir__layout_apply(leir_program *p, const leir_program *src, leir_expr *const *e, uint32_t n,
                            const int64_t *ext, const leir__layout *L, leir_expr **out) {
  leir_expr *cp[LEIR_MAX_RANK] = {NULL};
  if (n > LEIR_MAX_RANK || (L->kind == LEIR__LAYOUT_RESHAPE2 &&
                            (L->dims[0] >= n || L->dims[1] >= n || L->dims[0] == L->dims[1])))
    return 0;
  for (uint32_t k = 0; k < n; k++) cp[k] = leir__copy_expr(p, src, e[k]);
  switch (L->kind) {
    case LEIR__LAYOUT_TRANSPOSE:
      for (uint32_t k = 0; k < n; k++) out[k] = cp[L->perm[k]];
      return n;
    case LEIR__LAYOUT_FLATTEN: {
      leir_expr *acc = NULL;
      for (uint32_t t = 0; t < n; t++) {
        uint32_t k = L->col_major ? n - 1 - t : t; /* most significant first */
        int64_t stride = 1;
        if (L->col_major) {
          for (uint32_t j = 0; j < k; j++) stride *= ext[j];
        } else {
          for (uint32_t j = k + 1; j < n; j++) stride *= ext[j];
        }
        /* a stride of 1 is not written (the reference prints i+j, not i*1+j) */
        leir_expr *term = stride == 1 ? cp[k] : leir__mk_bin(p, LEIR_OP_MUL, cp[k], leir__mk_int(p, stride));
        acc = acc ? leir__mk_bin(p, LEIR_OP_ADD, acc, term) : term;
      }
      out[0] = acc;
      return 1;
    }
    case LEIR__LAYOUT_RESHAPE2: {
      leir_expr *list[LEIR_MAX_RANK];
      uint32_t m = 0;
      for (uint32_t k = 0; k < n; k++)
        if (k != L->dims[0] && k != L->dims[1]) list[m++] = cp[k];
      list[m++] = leir__mk_bin(
          p, LEIR_OP_ADD,
          leir__mk_bin(p, LEIR_OP_MUL, cp[L->dims[0]], leir__mk_int(p, ext[L->dims[1]])),
          cp[L->dims[1]]);
      for (uint32_t k = 0; k < m; k++) out[k] = list[L->perm[k]];
      return m;
    }
    case LEIR__LAYOUT_RESHAPE1: {
      uint32_t m = 0;
      int64_t inner = ext[L->dim] / L->factor;
      for (uint32_t k = 0; k < n; k++) {
        if (k != L->dim) {
          out[m++] = cp[k];
          continue;
        }
        out[m++] = leir__mk_bin(p, LEIR_OP_FLOORDIV, cp[k], leir__mk_int(p, inner));
        out[m++] = leir__mk_bin(p, LEIR_OP_MOD, leir__copy_expr(p, src, e[k]), leir__mk_int(p, inner));
      }
      return m;
    }
  }
  return 0;
}
