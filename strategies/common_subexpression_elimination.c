/*
 * common_subexpression_elimination (6, graph): compute a repeated
 * sub-expression once, into a fresh intermediate T in a new nest, and read
 * T where it occurred.
 *
 * Occurrences: operation nodes (unary minus, binary operator, call) of the
 * right side of equations directly in top-level nests that compute in a
 * floating-point dtype, not the whole right side, not inside a subscript;
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

typedef struct table {
  LEIR__VEC(occ) o;
} table;

static uint64_t hash_expr(const leir_expr *e) {
  uint64_t h = 1469598103934665603ull ^ ((uint64_t)e->kind << 8 | e->op);
  h = (h ^ e->n) * 1099511628211ull;
  if (e->kind == LEIR_EXPR_TENSOR || e->kind == LEIR_EXPR_VAR) h = (h ^ e->sym) * 1099511628211ull;
  if (e->kind == LEIR_EXPR_NUMBER)
    for (uint32_t i = 0; i < e->u.num->len; i++)
      h = (h ^ (uint8_t)e->u.num->lexeme[i]) * 1099511628211ull;
  for (uint32_t i = 0; i < e->n; i++) h = (h ^ hash_expr(e->kids[i])) * 1099511628211ull;
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

static bool nest_writes(const leir_nest *n, uint32_t sym) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].nest) {
      if (nest_writes(n->items[k].nest, sym)) return true;
    } else if (n->items[k].eq->lhs->sym == sym) {
      return true;
    }
  }
  return false;
}

typedef struct wscan {
  const leir_program *p;
  uint32_t t0, t;
  bool hit;
} wscan;

static int written_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  wscan *w = v->ud;
  const leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_TENSOR) return LEIR__VISIT_NEXT;
  for (uint32_t m = w->t0; m <= w->t; m++)
    if (nest_writes(w->p->nests[m], e->sym)) {
      w->hit = true;
      return LEIR__VISIT_STOP;
    }
  return LEIR__VISIT_NEXT;
}

static uint8_t tdtype(const occ *o) { return o->eq->lhs->dtype == LEIR_F64 ? LEIR_F64 : LEIR_F32; }

/* May occurrence b (after first site a) read a's temporary? */
static bool reusable(const leir_program *p, const occ *a, const occ *b) {
  const leir_nest *n0 = p->nests[a->t], *n = p->nests[b->t];
  uint64_t used = leir__loops_in(n0, a->e);
  for (uint32_t l = 0; l < n0->nloops && l < 64; l++) {
    if (!(used >> l & 1)) continue;
    uint32_t j = 0;
    while (j < n->nloops && n->loops[j].sym != n0->loops[l].sym) j++;
    if (j == n->nloops || n->loops[j].extent > n0->loops[l].extent) return false;
  }
  wscan w = {p, a->t, b->t, false};
  leir__visit v = LEIR__VISIT_INIT(written_node, &w);
  leir__visit_const(&v, a->e);
  return !w.hit;
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
  /* group: the first non-lazy occurrence of each tree is its first site */
  for (size_t i = 0; i < tb->o.len; i++) {
    occ *b = &tb->o.data[i];
    for (size_t j = 0; j < i; j++) {
      occ *a = &tb->o.data[j];
      if (a->lazy || a->cls != (int32_t)j || a->hash != b->hash ||
          !leir__expr_equal(p, a->e, p, b->e))
        continue;
      if (reusable(p, a, b)) b->cls = (int32_t)j;
      break;
    }
    if (b->cls < 0 && !b->lazy) {
      /* a first site unless an earlier first site has the same tree */
      bool dup = false;
      for (size_t j = 0; j < i && !dup; j++) {
        occ *a = &tb->o.data[j];
        dup = a->cls == (int32_t)j && a->hash == b->hash && leir__expr_equal(p, a->e, p, b->e);
      }
      if (!dup) b->cls = (int32_t)i;
    }
  }
  return true;
}

/* Later occurrences reading first site s; *exact when their dtypes agree. */
static uint32_t uses_of(const table *tb, size_t s, bool *exact) {
  uint32_t n = 0;
  *exact = true;
  uint8_t dt = tdtype(&tb->o.data[s]);
  for (size_t i = s + 1; i < tb->o.len; i++)
    if (tb->o.data[i].cls == (int32_t)s) {
      n++;
      if (tdtype(&tb->o.data[i]) != dt || (tb->o.data[i].eq->lhs->dtype != LEIR_F64 &&
                                           tb->o.data[i].eq->lhs->dtype != LEIR_F32))
        *exact = false;
    }
  if (tb->o.data[s].eq->lhs->dtype != LEIR_F64 && tb->o.data[s].eq->lhs->dtype != LEIR_F32)
    *exact = false;
  return n;
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
    uint32_t eqs = a->selected ? 1 : 0;
    const leir_equation *last = a->selected ? a->eq : NULL;
    for (size_t i = s + 1; i < tb->o.len; i++) {
      const occ *b = &tb->o.data[i];
      if (b->cls == (int32_t)s && b->selected && b->eq != last) {
        eqs++;
        last = b->eq;
      }
    }
    if (!a->selected || eqs < 2) continue;
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
    free(tb.o.data);
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
  free(tb.o.data);
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
    free(tb.o.data);
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
    free(tb.o.data);
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
      free(tb.o.data);
      return LEIR_ERR_NOMEM;
    }
  }
  free(tb.o.data);
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
