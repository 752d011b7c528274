/*
 * common_subexpression_elimination (6, graph): compute a repeated
 * sub-expression once, into a fresh intermediate T in a new nest, and read
 * T where it occurred.
 *
 * Occurrences: operation nodes (unary minus, binary operator, call) of the
 * right side of equations directly in top-level nests that compute in a
 * floating-point dtype, not the whole right side, not inside a subscript,
 * reading at least one tensor (index arithmetic is precompute_indices's);
 * two are the same sub-expression when their trees are equal (same
 * tensors, subscripts, loop variables, constants). The first site of a
 * sub-expression is its first occurrence (program order) that is not
 * inside an if_then_else branch (T is computed for every iteration); the
 * new nest goes just before that nest N0, over the loops of N0 that the
 * sub-expression uses (names, extents, kinds; in N0's order;
 * B^{1}_{tx=0} and a scalar T when it uses none), writing T_{loops} = the
 * sub-expression; T has dtype f64 for f64 equations and f32 otherwise,
 * scope g, and at most 2^24 elements. A later occurrence, in a nest N,
 * reads T instead when every loop variable of the sub-expression is a
 * loop of N with an extent at most the one in N0 (its elements were
 * computed) and no top-level nest from N0 to N writes a tensor the
 * sub-expression reads (by name: conservative). A sub-expression with at
 * least one such later occurrence is a candidate `nest=N0 eq=K expr=P`
 * (its first site), replacing every such occurrence.
 *
 * The reference handles every common sub-expression at once and considers
 * only the first exp/log/sqrt/abs/min/max/if_then_else call and the first
 * product of two tensors of each equation (not the whole right side, not
 * one that contains the equation's own output), common to two equations.
 * The candidate without parameters, `common_subexpression_elimination`,
 * does that: every such sub-expression that is a candidate above, in
 * order of first site, skipping one that contains or is contained in an
 * earlier one; offered when there are at least two (with one it is that
 * sub-expression's candidate).
 * Exact when every equation that reads T computes in T's dtype;
 * reassociating otherwise (T's store may round).
 */
#include <stdlib.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "kit.h"
#include "visit.h"

#define LEIR__CSE_MAX_ELEMENTS ((int64_t)1 << 24)

typedef struct occ {
  uint32_t t, item;          /* top-level nest, item */
  const leir_equation *eq;
  const leir_expr *e;
  uint32_t depth;            /* path from the right side's root (path[0] = 1) */
  uint32_t path[LEIR__MAX_XPATH];
  uint64_t hash;
  bool lazy;                 /* inside an if_then_else branch */
  bool selected;             /* the reference's choice for its equation */
  int32_t cls;               /* index of its first site in the table, or -1 */
} occ;

typedef struct wr {
  uint32_t sym, nest;
} wr;

typedef struct table {
  LEIR__VEC(occ) o;
  /* by first site (index into o): later occurrences reading T, whether
   * all compute in T's dtype, equations where the reference selects it */
  uint32_t *nuses, *nsel;
  bool *exact;
  /* (tensor, top-level nest) for every write, sorted */
  wr *w;
  size_t nw;
} table;

static void table_free(table *tb) {
  free(tb->o.data);
  free(tb->nuses);
  free(tb->nsel);
  free(tb->exact);
  free(tb->w);
}

/* Groups equal trees (equality is then checked with leir__expr_equal, so
 * the grouping, not the hash's value, decides the result). */
static uint64_t hash_expr(const leir_expr *e) {
  bool named = e->kind == LEIR_EXPR_TENSOR || e->kind == LEIR_EXPR_VAR;
  uint64_t w[2] = {(uint64_t)e->kind << 40 | (uint64_t)e->op << 32 | e->n, named ? e->sym : 0};
  uint64_t h = XXH3_64bits(w, sizeof w);
  if (e->kind == LEIR_EXPR_NUMBER) h = XXH3_64bits_withSeed(e->u.num->lexeme, e->u.num->len, h);
  for (uint32_t i = 0; i < e->n; i++) {
    w[0] = h;
    w[1] = hash_expr(e->kids[i]);
    h = XXH3_64bits(w, sizeof w);
  }
  return h;
}

static bool is_float(uint8_t dt) {
  return dt == LEIR_F64 || dt == LEIR_F32 || dt == LEIR_F16 || dt == LEIR_BF16;
}

typedef struct collect {
  table *tb;
  uint32_t t, item;
  const leir_equation *eq;
  bool failed;
  uint32_t first_of[16];     /* reference's selection: seen call kinds */
  bool seen_mul;
} collect;

static int collect_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  collect *cl = v->ud;
  const leir_expr *e = *slot;
  if (e->kind == LEIR_EXPR_TENSOR) return LEIR__VISIT_SKIP; /* subscripts are not sites */
  if (v->depth == 0 || v->depth + 1 > LEIR__MAX_XPATH) return LEIR__VISIT_NEXT;
  if (e->kind != LEIR_EXPR_NEG && e->kind != LEIR_EXPR_BINARY && e->kind != LEIR_EXPR_CALL)
    return LEIR__VISIT_NEXT;
  /* index arithmetic (loop variables and constants only, `a-1` of a guard)
   * is precompute_indices's: a float copy of it would hide the guard from
   * the bounds check that narrows the read it protects */
  if (!leir__expr_has_tensor(e)) return LEIR__VISIT_NEXT;
  occ o;
  memset(&o, 0, sizeof o);
  o.t = cl->t;
  o.item = cl->item;
  o.eq = cl->eq;
  o.e = e;
  o.depth = v->depth + 1;
  o.path[0] = 1;
  for (uint32_t k = 0; k < v->depth; k++) o.path[k + 1] = v->path[k];
  o.hash = hash_expr(e);
  o.cls = -1;
  /* lazy: below a branch of an if_then_else, or under & / | */
  const leir_expr *a = cl->eq->rhs;
  for (uint32_t k = 0; k < v->depth; k++) {
    if ((a->kind == LEIR_EXPR_CALL && a->op == LEIR_OP_IF_THEN_ELSE && v->path[k] > 0) ||
        a->kind == LEIR_EXPR_AND || a->kind == LEIR_EXPR_OR)
      o.lazy = true;
    a = a->kids[v->path[k]];
  }
  /* the reference's selection: first call of each function, first tensor
   * product, none containing the equation's output */
  bool own = leir__expr_reads_tensor(e, cl->eq->lhs->sym, NULL);
  if (e->kind == LEIR_EXPR_CALL && e->op < 64) {
    uint32_t bit = e->op;
    if (!(cl->first_of[bit / 32] >> (bit % 32) & 1)) {
      cl->first_of[bit / 32] |= 1u << (bit % 32);
      o.selected = !own && (e->op == LEIR_OP_EXP || e->op == LEIR_OP_LOG ||
                            e->op == LEIR_OP_SQRT || e->op == LEIR_OP_ABS ||
                            e->op == LEIR_OP_MAX || e->op == LEIR_OP_MIN ||
                            e->op == LEIR_OP_IF_THEN_ELSE);
    }
  } else if (e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_MUL &&
             e->kids[0]->kind == LEIR_EXPR_TENSOR && e->kids[1]->kind == LEIR_EXPR_TENSOR &&
             !cl->seen_mul) {
    cl->seen_mul = true;
    o.selected = !own;
  }
  occ *slot_o = LEIR__VEC_PUSH(&cl->tb->o);
  if (!slot_o) {
    cl->failed = true;
    return LEIR__VISIT_STOP;
  }
  *slot_o = o;
  return LEIR__VISIT_NEXT;
}

static int wr_cmp(const void *x, const void *y) {
  const wr *a = x, *b = y;
  if (a->sym != b->sym) return a->sym < b->sym ? -1 : 1;
  return a->nest < b->nest ? -1 : a->nest > b->nest;
}

static void writes_of(const leir_nest *n, uint32_t t, wr *w, size_t *nw) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].nest) {
      writes_of(n->items[k].nest, t, w, nw);
    } else if (w) {
      w[(*nw)++] = (wr){n->items[k].eq->lhs->sym, t};
    } else {
      (*nw)++;
    }
  }
}

/* Does a top-level nest in [t0, t] write tensor sym? */
static bool written_in(const table *tb, uint32_t sym, uint32_t t0, uint32_t t) {
  size_t lo = 0, hi = tb->nw;
  while (lo < hi) { /* first entry >= (sym, t0) */
    size_t mid = (lo + hi) / 2;
    const wr *m = &tb->w[mid];
    if (m->sym < sym || (m->sym == sym && m->nest < t0)) lo = mid + 1;
    else hi = mid;
  }
  return lo < tb->nw && tb->w[lo].sym == sym && tb->w[lo].nest <= t;
}

typedef struct wscan {
  const table *tb;
  uint32_t t0, t;
  bool hit;
} wscan;

static int written_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  wscan *w = v->ud;
  const leir_expr *e = *slot;
  if (e->kind == LEIR_EXPR_TENSOR && written_in(w->tb, e->sym, w->t0, w->t)) {
    w->hit = true;
    return LEIR__VISIT_STOP;
  }
  return LEIR__VISIT_NEXT;
}

static uint8_t tdtype(const occ *o) { return o->eq->lhs->dtype == LEIR_F64 ? LEIR_F64 : LEIR_F32; }

/* May occurrence b (after first site a) read a's temporary? */
static bool reusable(const leir_program *p, const table *tb, const occ *a, const occ *b) {
  const leir_nest *n0 = p->nests[a->t], *n = p->nests[b->t];
  uint64_t used = leir__loops_in(n0, a->e);
  for (uint32_t l = 0; l < n0->nloops && l < 64; l++) {
    if (!(used >> l & 1)) continue;
    uint32_t j = 0;
    while (j < n->nloops && n->loops[j].sym != n0->loops[l].sym) j++;
    if (j == n->nloops || n->loops[j].extent > n0->loops[l].extent) return false;
  }
  wscan w = {tb, a->t, b->t, false};
  leir__visit v = LEIR__VISIT_INIT(written_node, &w);
  leir__visit_const(&v, a->e);
  return !w.hit;
}

typedef struct hix {
  uint64_t h;
  size_t i;
} hix;

static int hix_cmp(const void *x, const void *y) {
  const hix *a = x, *b = y;
  if (a->h != b->h) return a->h < b->h ? -1 : 1;
  return a->i < b->i ? -1 : a->i > b->i;
}

/* Builds the table: every occurrence, and for each first site the class
 * of the later occurrences that may read its temporary (occ.cls). */
static bool build_table(const leir__sctx *c, table *tb) {
  const leir_program *p = c->p;
  for (uint32_t t = 0; t < p->nnests; t++) {
    const leir_nest *n = p->nests[t];
    for (uint32_t i = 0; i < n->nitems; i++) {
      const leir_equation *eq = n->items[i].eq;
      if (!eq || !is_float(eq->lhs->dtype)) continue;
      collect cl;
      memset(&cl, 0, sizeof cl);
      cl.tb = tb;
      cl.t = t;
      cl.item = i;
      cl.eq = eq;
      leir__visit v = LEIR__VISIT_INIT(collect_node, &cl);
      leir_expr *root = eq->rhs;
      leir__visit_expr(&v, &root);
      if (cl.failed) return false;
    }
  }
  size_t nw = 0;
  for (uint32_t t = 0; t < p->nnests; t++) writes_of(p->nests[t], t, NULL, &nw);
  size_t n = tb->o.len;
  tb->w = malloc((nw ? nw : 1) * sizeof *tb->w);
  hix *ord = malloc((n ? n : 1) * sizeof *ord);
  tb->nuses = calloc(n ? n : 1, sizeof *tb->nuses);
  tb->nsel = calloc(n ? n : 1, sizeof *tb->nsel);
  tb->exact = calloc(n ? n : 1, sizeof *tb->exact);
  if (!tb->w || !ord || !tb->nuses || !tb->nsel || !tb->exact) {
    free(ord);
    return false;
  }
  tb->nw = 0;
  for (uint32_t t = 0; t < p->nnests; t++) writes_of(p->nests[t], t, tb->w, &tb->nw);
  qsort(tb->w, tb->nw, sizeof *tb->w, wr_cmp);
  /* group by hash (stable in program order): the first non-lazy occurrence
   * of each tree is its first site */
  for (size_t i = 0; i < n; i++) ord[i] = (hix){tb->o.data[i].hash, i};
  qsort(ord, n, sizeof *ord, hix_cmp);
  for (size_t r0 = 0; r0 < n;) {
    size_t r1 = r0;
    while (r1 < n && ord[r1].h == ord[r0].h) r1++;
    for (size_t x = r0; x < r1; x++) {
      occ *b = &tb->o.data[ord[x].i];
      bool found = false;
      for (size_t y = r0; y < x && !found; y++) {
        const occ *a = &tb->o.data[ord[y].i];
        if (a->cls != (int32_t)ord[y].i || !leir__expr_equal(p, a->e, p, b->e)) continue;
        found = true;
        if (reusable(p, tb, a, b)) b->cls = (int32_t)ord[y].i;
      }
      if (!found && !b->lazy) b->cls = (int32_t)ord[x].i;
    }
    r0 = r1;
  }
  free(ord);
  /* per first site: uses, exactness, equations selecting it */
  for (size_t i = 0; i < n; i++) {
    const occ *a = &tb->o.data[i];
    tb->exact[i] = a->eq->lhs->dtype == LEIR_F64 || a->eq->lhs->dtype == LEIR_F32;
  }
  const leir_equation **last = calloc(n ? n : 1, sizeof *last);
  if (!last) return false;
  for (size_t i = 0; i < n; i++) {
    const occ *b = &tb->o.data[i];
    if (b->cls < 0) continue;
    size_t s0 = (size_t)b->cls;
    const occ *a = &tb->o.data[s0];
    if (s0 != i) {
      tb->nuses[s0]++;
      if (tdtype(b) != tdtype(a) ||
          (b->eq->lhs->dtype != LEIR_F64 && b->eq->lhs->dtype != LEIR_F32))
        tb->exact[s0] = false;
    }
    if (b->selected && b->eq != last[s0]) {
      tb->nsel[s0]++;
      last[s0] = b->eq;
    }
  }
  free(last);
  return true;
}

/* Later occurrences reading first site s; *exact when their dtypes agree. */
static uint32_t uses_of(const table *tb, size_t s, bool *exact) {
  *exact = tb->exact[s];
  return tb->nuses[s];
}

static bool size_ok(const leir_program *p, const occ *a) {
  const leir_nest *n0 = p->nests[a->t];
  uint64_t used = leir__loops_in(n0, a->e);
  int64_t elems = 1;
  for (uint32_t l = 0; l < n0->nloops && l < 64; l++)
    if ((used >> l & 1) && (__builtin_mul_overflow(elems, n0->loops[l].extent, &elems) ||
                            elems > LEIR__CSE_MAX_ELEMENTS))
      return false;
  return n0->nloops <= 64;
}

static bool contains(const leir_expr *outer, const leir_expr *inner, const leir_program *p) {
  if (leir__expr_equal(p, outer, p, inner)) return true;
  for (uint32_t i = 0; i < outer->n; i++)
    if (contains(outer->kids[i], inner, p)) return true;
  return false;
}

/* The first sites of the all-at-once candidate (the reference's choice). */
static uint32_t all_sites(const leir__sctx *c, const table *tb, size_t *out, uint32_t cap) {
  uint32_t n = 0;
  for (size_t s = 0; s < tb->o.len && n < cap; s++) {
    const occ *a = &tb->o.data[s];
    if (a->cls != (int32_t)s || !size_ok(c->p, a)) continue;
    bool ex;
    if (!uses_of(tb, s, &ex)) continue;
    /* selected in two equations, first site included */
    if (!a->selected || tb->nsel[s] < 2) continue;
    bool overlap = false;
    for (uint32_t k = 0; k < n && !overlap; k++) {
      const leir_expr *e = tb->o.data[out[k]].e;
      overlap = contains(e, a->e, c->p) || contains(a->e, e, c->p);
    }
    if (!overlap) out[n++] = s;
  }
  return n;
}

static void enumerate(leir__sctx *c) {
  table tb;
  memset(&tb, 0, sizeof tb);
  if (!build_table(c, &tb)) {
    c->status = LEIR_ERR_NOMEM;
    table_free(&tb);
    return;
  }
  for (size_t s = 0; s < tb.o.len && leir__more(c); s++) {
    const occ *a = &tb.o.data[s];
    if (a->cls != (int32_t)s) continue;
    const leir__nref *r = NULL;
    for (uint32_t i = 0; i < c->nnests && !r; i++)
      if (c->nests[i].depth == 1 && c->nests[i].path[0] == a->t) r = &c->nests[i];
    if (!r || leir__skip_nest(c, r)) continue;
    char path[LEIR__MAX_XPATH * 11];
    size_t off = 0;
    for (uint32_t k = 0; k < a->depth; k++)
      off += (size_t)snprintf(path + off, sizeof path - off, k ? ".%u" : "%u", a->path[k]);
    bool exact;
    if (!uses_of(&tb, s, &exact)) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_CSE_ONCE,
                   "eq=%u expr=%s: the sub-expression has no later occurrence that may read its "
                   "temporary", a->item, path);
      continue;
    }
    if (!size_ok(c->p, a)) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_CSE_SIZE,
                   "eq=%u expr=%s: the temporary would have more than 2^24 elements", a->item,
                   path);
      continue;
    }
    leir__emit(c, exact ? LEIR_EXACT : LEIR_REASSOCIATING, "nest=%s eq=%u expr=%s", r->label,
               a->item, path);
  }
  if (leir__more(c) && !(c->mode == LEIR__MODE_MATCH && c->want_nest)) {
    size_t sites[64];
    uint32_t n = all_sites(c, &tb, sites, 64);
    bool exact = true;
    for (uint32_t k = 0; k < n; k++) {
      bool ex;
      uses_of(&tb, sites[k], &ex);
      exact = exact && ex;
    }
    if (n >= 2) leir__emit(c, exact ? LEIR_EXACT : LEIR_REASSOCIATING, "%s", "");
  }
  table_free(&tb);
}

/* ---- the rewrite ------------------------------------------------------------------ */

/* Replaces the occurrences of first site s in `out` and returns the new
 * nest computing T (inserted by the caller before nest o[s].t). */
static leir_nest *eliminate(leir__sctx *c, const table *tb, size_t s, uint32_t tsym,
                            leir_program *out) {
  const occ *a = &tb->o.data[s];
  const leir_nest *n0 = c->p->nests[a->t];
  uint64_t used = leir__loops_in(n0, a->e);
  uint32_t nl = 0, order[64];
  for (uint32_t l = 0; l < n0->nloops && l < 64; l++)
    if (used >> l & 1) order[nl++] = l;
  uint8_t dt = tdtype(a);
  leir_nest *m = leir__new_nest(out, nl ? nl : 1, 1);
  leir_expr *lhs = leir__new_tensor(out, tsym, (leir_dtype)dt, LEIR_SCOPE_GLOBAL, nl);
  for (uint32_t k = 0; k < nl; k++) {
    m->loops[k] = n0->loops[order[k]];
    lhs->kids[k] = leir__mk_var(out, n0->loops[order[k]].sym);
  }
  if (!nl) {
    m->loops[0].kind = LEIR_LOOP_BOUND;
    m->loops[0].extent = 1;
    m->loops[0].pos = LEIR__NOPOS;
    m->loops[0].sym = leir__sym_intern(out, "tx", 2);
  }
  m->items[0].eq = leir__new_equation(out, lhs, leir__copy_expr(out, c->p, a->e));
  for (size_t i = s; i < tb->o.len; i++) {
    const occ *b = &tb->o.data[i];
    if (b->cls != (int32_t)s) continue;
    leir_expr **slot = leir__expr_slot(out->nests[b->t], b->item, b->path, b->depth);
    if (slot) *slot = leir__copy_expr(out, out, lhs);
  }
  return m;
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  table tb;
  memset(&tb, 0, sizeof tb);
  if (!build_table(c, &tb)) {
    table_free(&tb);
    return LEIR_ERR_NOMEM;
  }
  size_t sites[64];
  uint32_t n = 0;
  const leir__nref *r = leir__ps_nest(c, ps);
  if (r) {
    leir__eqsite es;
    const leir__tok *xt = leir__ps_get(ps, LEIR__K_EXPR, NULL);
    if (r->depth == 1 && leir__ps_eq(c, r, ps, &es) && xt) {
      for (size_t s = 0; s < tb.o.len && !n; s++) {
        const occ *a = &tb.o.data[s];
        if (a->cls != (int32_t)s || a->t != r->path[0] || a->item != es.item) continue;
        char path[LEIR__MAX_XPATH * 11];
        size_t off = 0;
        for (uint32_t k = 0; k < a->depth; k++)
          off += (size_t)snprintf(path + off, sizeof path - off, k ? ".%u" : "%u", a->path[k]);
        if (off == xt->len && memcmp(path, xt->s, off) == 0) sites[n++] = s;
      }
    }
  } else {
    n = all_sites(c, &tb, sites, 64);
  }
  if (!n) {
    table_free(&tb);
    return LEIR_ERR_INTERNAL;
  }
  leir_nest *made[64];
  for (uint32_t k = 0; k < n; k++)
    made[k] = eliminate(c, &tb, sites[k], leir__tensor_sym(out, c->next_tensor + k), out);
  /* insert from the last site back, so earlier positions stay valid; sites
   * of one nest keep their order */
  for (uint32_t k = n; k-- > 0;) {
    uint32_t t = tb.o.data[sites[k]].t;
    if (!leir__program_insert_nest(out, t, made[k])) {
      table_free(&tb);
      return LEIR_ERR_NOMEM;
    }
  }
  table_free(&tb);
  return LEIR_OK;
}

const leir__strategy_impl leir__common_subexpression_elimination = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_EQ) | LEIR__KEY(LEIR__K_EXPR),
    .required = 0,
    .enumerate = enumerate,
    .apply = apply,
    .cot = NULL,
    .span = 255, /* the site's nest and every later nest that reads T */
};
