/*
 * partially_equivalent_then_correct (35, math): two padded window
 * operators on two inputs of one shape (a padded convolution or pooling
 * pair) become one operator on the concatenated input, which is right for
 * every output row except the few whose window crosses the seam; those rows
 * are then recomputed ("corrected") from the original padded inputs.
 *
 * Sites: four consecutive top-level nests N..N+3 = P1, Q1, P2, Q2 (or P1,
 * P2, Q1, Q2), each a single equation directly under its loops, where
 *  - P1 is a padding nest Xp1{v} = if_then_else(G, X1{e}, z): its subscript
 *    is its loops, each once; G and z read no tensor; z uses no loop;
 *  - Q1 is a window operator over Xp1 writing O1: a plain definition or an
 *    implicitly initialized accumulation whose output subscript is its
 *    leading loops, each once (the other loops are reduction loops);
 *  - P2, Q2 are P1, Q1 with other tensors X2, Xp2, O2 (equal trees once
 *    loop variables are matched by position; equal loops), X1 and X2 have
 *    one shape, and no nest of the four reads what a later one writes
 *    (the weights are none of Xp1, Xp2, O1, O2);
 * and every loop v of P1 (the concatenated axis, Xp's dimension d) with
 *  - G's only condition on v the chain `o<=v<o+N` (integers), N = X1's
 *    extent on d, and X1's entry d exactly v-o (no other entry uses v);
 *    v's extent n >= o+N (o rows of padding before, n-o-N after);
 *  - every read of Xp1 in Q1 with entry d = s*c+w(other loops), one output
 *    loop c with the same stride s>0 in all of them, c used nowhere else
 *    but in O1's subscript, the window in [0, n) over c's extent M without
 *    guards, and N divisible by s;
 *  - v and c L or P loops.
 * Parameters: `nest=N loop=v` (the site spans N..N+3).
 *
 * The rewrite (K = N/s): N..N+3 become
 *   Cat{v} = X1{v}; Cat{v+N on d} = X2{v}            over X1's shape;
 *   Cp{v} = if_then_else(G with o<=v<o+2N, Cat{e}, z) (v's extent n+N);
 *   Y = Q1 with Xp1 -> Cp, O1 -> Y                  (c's extent K+M);
 *   O1{s} = Y{s}; O2{s} = Y{s, c -> c+K}            over Q1's output loops;
 *   P1, P2 where a correction or a later nest still reads them;
 *   O1 rows [lo, M) and O2 rows [0, hi) recomputed by Q1 and Q2 restricted
 *   to them, an accumulation as a well-formed nested nest
 *   `OUT[O=init; RED[O=O+...;];]`.
 * Row c of O1 reads Cp where it differs from Xp1 (Cat's second part instead
 * of the trailing padding) iff s*c+wmax >= o+N, so lo = ceil((o+N-wmax)/s);
 * row c of O2 reads X1's tail instead of the leading padding iff
 * s*c+wmin < o, so hi = ceil((o-wmin)/s). Every other row reads the same
 * values in the same order, and corrected rows are the original
 * computation: exact. The reference fixes the four nests at positions
 * 0..3, writes the correction as `OUT[O=0;]RED[...];` (malformed) and
 * recomputes k-1 rows on each side, one past the end of O1; libleir
 * recomputes exactly the rows that differ.
 */
#include "kit.h"

#define PEC_MAX_READS 16

typedef struct pec_site {
  uint32_t t;
  const leir_nest *p1, *q1, *p2, *q2;
  const leir_equation *ep1, *eq1, *ep2, *eq2;
  uint32_t x1, x2, xp1, xp2, o1, o2;
  uint8_t init;  /* Q's leir__init_kind */
  uint32_t nout; /* Q's leading loops: the output subscript */
  /* per axis */
  uint32_t pl, d, ql;
  int64_t o, N, n, s, M, wmin, wmax, lo1, hi2;
} pec_site;

static const leir_equation *single_eq(const leir_nest *n) {
  if (n->nitems != 1 || !n->items[0].eq || n->nloops == 0 || n->nloops > 64) return NULL;
  return n->items[0].eq;
}

static uint8_t init_of(const leir__sctx *c, const leir_equation *eq) {
  uint32_t idx = eq->id < c->a->nids ? c->a->eq_index[eq->id] : LEIR__NONE;
  return idx == LEIR__NONE ? 0xff : c->a->eqs[idx].init;
}

static int loop_of(const leir_nest *n, uint32_t sym) {
  for (uint32_t j = 0; j < n->nloops; j++)
    if (n->loops[j].sym == sym) return (int)j;
  return -1;
}

/* Is every entry of t a distinct plain loop variable of n? Sets *mask to
 * the loops used. */
static bool plain_subscript(const leir_nest *n, const leir_expr *t, uint64_t *mask) {
  uint64_t m = 0;
  for (uint32_t k = 0; k < t->n; k++) {
    int j = t->kids[k]->kind == LEIR_EXPR_VAR ? loop_of(n, t->kids[k]->sym) : -1;
    if (j < 0 || (m >> j & 1)) return false;
    m |= (uint64_t)1 << j;
  }
  *mask = m;
  return true;
}

/* ---- equality modulo tensor renaming -------------------------------------------- */

typedef struct ren {
  const leir_nest *a, *b;
  uint32_t n;
  uint32_t from[3], to[3];
} ren;

static bool same_mod(const ren *m, const leir_expr *a, const leir_expr *b) {
  if (a->kind != b->kind || a->op != b->op || a->n != b->n) return false;
  switch (a->kind) {
  case LEIR_EXPR_NUMBER:
    if (a->u.num->len != b->u.num->len ||
        memcmp(a->u.num->lexeme, b->u.num->lexeme, a->u.num->len) != 0)
      return false;
    break;
  case LEIR_EXPR_VAR: {
    int ja = loop_of(m->a, a->sym), jb = loop_of(m->b, b->sym);
    if (ja != jb || (ja < 0 && a->sym != b->sym)) return false;
    break;
  }
  case LEIR_EXPR_TENSOR: {
    uint32_t want = a->sym;
    for (uint32_t i = 0; i < m->n; i++)
      if (a->sym == m->from[i]) want = m->to[i];
    if (want != b->sym || a->dtype != b->dtype) return false;
    break;
  }
  case LEIR_EXPR_COMPARE:
    for (uint32_t i = 0; i + 1 < a->n; i++)
      if (a->u.cmp_ops[i] != b->u.cmp_ops[i]) return false;
    break;
  default:
    break;
  }
  for (uint32_t i = 0; i < a->n; i++)
    if (!same_mod(m, a->kids[i], b->kids[i])) return false;
  return true;
}

static bool same_loops(const leir_nest *a, const leir_nest *b) {
  if (a->nloops != b->nloops) return false;
  for (uint32_t j = 0; j < a->nloops; j++) {
    const leir__loop *x = &a->loops[j], *y = &b->loops[j];
    if (x->kind != y->kind || x->extent != y->extent ||
        (x->kind == LEIR_LOOP_BOUND && x->sym != y->sym))
      return false;
  }
  return true;
}

/* ---- the nest-level form ---------------------------------------------------------- */

/* Xp{v} = if_then_else(G, X{e}, z) with G, z tensor-free and z loop-free. */
static bool pad_form(const leir__sctx *c, const leir_nest *p, const leir_equation *e) {
  if (!e || init_of(c, e) != LEIR__INIT_NONE) return false;
  uint64_t mask;
  if (e->lhs->n != p->nloops || !plain_subscript(p, e->lhs, &mask)) return false;
  const leir_expr *r = e->rhs;
  if (r->kind != LEIR_EXPR_CALL || r->op != LEIR_OP_IF_THEN_ELSE || r->n != 3) return false;
  const leir_expr *x = r->kids[1];
  if (x->kind != LEIR_EXPR_TENSOR || x->n != e->lhs->n || x->sym == e->lhs->sym) return false;
  for (uint32_t k = 0; k < x->n; k++)
    if (leir__expr_has_tensor(x->kids[k])) return false;
  if (leir__expr_has_tensor(r->kids[0]) || leir__expr_has_tensor(r->kids[2]) ||
      leir__loops_in(p, r->kids[2]) != 0)
    return false;
  return true;
}

typedef struct tcollect {
  uint32_t sym;
  uint32_t n;
  const leir_expr *reads[PEC_MAX_READS];
  bool overflow;
} tcollect;

static int collect_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  tcollect *tc = v->ud;
  if ((*slot)->kind == LEIR_EXPR_TENSOR && (*slot)->sym == tc->sym) {
    if (tc->n == PEC_MAX_READS) tc->overflow = true;
    else tc->reads[tc->n++] = *slot;
  }
  return LEIR__VISIT_NEXT;
}

/* Q{s} = f(Xp, ...): a plain definition or an implicit accumulation whose
 * output subscript is its leading loops. Sets *nout. */
static bool op_form(const leir__sctx *c, const leir_nest *q, const leir_equation *e, uint32_t xp,
                    uint32_t *nout) {
  if (!e) return false;
  uint8_t init = init_of(c, e);
  if (init == 0xff) return false;
  uint64_t mask;
  if (e->lhs->n == 0 || !plain_subscript(q, e->lhs, &mask)) return false;
  uint32_t k = e->lhs->n;
  if (k > q->nloops || mask != (k == 64 ? ~(uint64_t)0 : ((uint64_t)1 << k) - 1)) return false;
  if (e->lhs->sym == xp) return false;
  if (init == LEIR__INIT_NONE && leir__expr_reads_tensor(e->rhs, e->lhs->sym, NULL)) return false;
  if (!leir__expr_reads_tensor(e->rhs, xp, NULL) || leir__expr_tensor_in_subscript(e->rhs, xp))
    return false;
  *nout = k;
  return true;
}

typedef struct tlist {
  uint32_t n;
  uint32_t syms[64];
  bool overflow;
} tlist;

static int list_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  tlist *tl = v->ud;
  if ((*slot)->kind == LEIR_EXPR_TENSOR) {
    if (tl->n == 64) tl->overflow = true;
    else tl->syms[tl->n++] = (*slot)->sym;
  }
  return LEIR__VISIT_NEXT;
}

/* 0 when nests t..t+3 have the form, in the order P1 Q1 P2 Q2 (ppqq false)
 * or P1 P2 Q1 Q2 (s filled but for the axis). */
static int check_layout(const leir__sctx *c, uint32_t t, bool ppqq, pec_site *s, char *why,
                        size_t cap) {
  memset(s, 0, sizeof *s);
  s->t = t;
  s->p1 = c->p->nests[t];
  s->q1 = c->p->nests[ppqq ? t + 2 : t + 1];
  s->p2 = c->p->nests[ppqq ? t + 1 : t + 2];
  s->q2 = c->p->nests[t + 3];
  s->ep1 = single_eq(s->p1);
  s->eq1 = single_eq(s->q1);
  s->ep2 = single_eq(s->p2);
  s->eq2 = single_eq(s->q2);
  uint32_t nout2 = 0;
  if (!pad_form(c, s->p1, s->ep1) || !pad_form(c, s->p2, s->ep2) || !s->eq1 || !s->eq2 ||
      !op_form(c, s->q1, s->eq1, s->ep1->lhs->sym, &s->nout) ||
      !op_form(c, s->q2, s->eq2, s->ep2->lhs->sym, &nout2)) {
    snprintf(why, cap,
             "nests %u..%u are not two padding nests X=if_then_else(guard,input,constant) and "
             "two window operators reading them (in the order pad, operator, pad, operator or "
             "pad, pad, operator, operator)",
             t, t + 3);
    return LEIR__R_PEC_FORM;
  }
  s->xp1 = s->ep1->lhs->sym;
  s->xp2 = s->ep2->lhs->sym;
  s->x1 = s->ep1->rhs->kids[1]->sym;
  s->x2 = s->ep2->rhs->kids[1]->sym;
  s->o1 = s->eq1->lhs->sym;
  s->o2 = s->eq2->lhs->sym;
  s->init = init_of(c, s->eq1);
  ren mp = {s->p1, s->p2, 2, {s->x1, s->xp1}, {s->x2, s->xp2}};
  ren mq = {s->q1, s->q2, 2, {s->xp1, s->o1}, {s->xp2, s->o2}};
  if (!same_loops(s->p1, s->p2) || !same_loops(s->q1, s->q2) ||
      !same_mod(&mp, s->ep1->lhs, s->ep2->lhs) || !same_mod(&mp, s->ep1->rhs, s->ep2->rhs) ||
      !same_mod(&mq, s->eq1->lhs, s->eq2->lhs) || !same_mod(&mq, s->eq1->rhs, s->eq2->rhs) ||
      init_of(c, s->eq2) != s->init) {
    snprintf(why, cap,
             "the two padding nests or the two operators differ in more than their tensors "
             "(loops, guards, subscripts, operators or weights)");
    return LEIR__R_PEC_PAIR;
  }
  uint32_t distinct[4] = {s->xp1, s->xp2, s->o1, s->o2};
  for (uint32_t i = 0; i < 4; i++)
    for (uint32_t j = i + 1; j < 4; j++)
      if (distinct[i] == distinct[j]) goto dep;
  for (uint32_t i = 0; i < 4; i++)
    if (s->x1 == distinct[i] || s->x2 == distinct[i]) goto dep;
  tlist tl = {0};
  leir__visit v = LEIR__VISIT_INIT(list_node, &tl);
  leir__visit_const(&v, s->eq1->rhs);
  if (tl.overflow) goto dep;
  for (uint32_t i = 0; i < tl.n; i++) {
    uint32_t y = tl.syms[i];
    if (y == s->xp1 || (y == s->o1 && s->init != LEIR__INIT_NONE)) continue;
    if (y == s->xp2 || y == s->o2 || y == s->o1) goto dep;
  }
  {
    const leir__buffer *b1 = NULL, *b2 = NULL;
    const leir_expr *r1 = s->ep1->rhs->kids[1], *r2 = s->ep2->rhs->kids[1];
    if (r1->id < c->a->nids && c->a->expr_buffer[r1->id] != LEIR__NONE)
      b1 = &c->a->buffers[c->a->expr_buffer[r1->id]];
    if (r2->id < c->a->nids && c->a->expr_buffer[r2->id] != LEIR__NONE)
      b2 = &c->a->buffers[c->a->expr_buffer[r2->id]];
    bool same = b1 && b2 && b1->rank == b2->rank && b1->rank == r1->n;
    for (uint32_t k = 0; same && k < b1->rank; k++) same = b1->shape[k] == b2->shape[k];
    if (!same) {
      snprintf(why, cap, "the padded inputs %s and %s differ in shape", leir__name(c, s->x1),
               leir__name(c, s->x2));
      return LEIR__R_PEC_PAIR;
    }
  }
  return 0;
dep:
  snprintf(why, cap,
           "the two pairs are not independent: their tensors %s, %s, %s, %s, %s, %s are not "
           "distinct, or an operator reads the other pair's results",
           leir__name(c, s->x1), leir__name(c, s->xp1), leir__name(c, s->o1),
           leir__name(c, s->x2), leir__name(c, s->xp2), leir__name(c, s->o2));
  return LEIR__R_GRAPH_DEPENDENCE;
}

static int check_nests(const leir__sctx *c, uint32_t t, pec_site *s, char *why, size_t cap) {
  int rule = check_layout(c, t, false, s, why, cap);
  if (rule != LEIR__R_PEC_FORM) return rule;
  char other[320];
  int r2 = check_layout(c, t, true, s, other, sizeof other);
  if (r2 != LEIR__R_PEC_FORM) snprintf(why, cap, "%s", other);
  return r2;
}

/* ---- the axis ------------------------------------------------------------------------- */

/* The conjunction's leaves (through & and parentheses). */
static bool leaves(const leir_expr *g, const leir_expr **out, uint32_t *n, uint32_t cap) {
  while (g->kind == LEIR_EXPR_PAREN) g = g->kids[0];
  if (g->kind == LEIR_EXPR_AND)
    return leaves(g->kids[0], out, n, cap) && leaves(g->kids[1], out, n, cap);
  if (*n == cap) return false;
  out[(*n)++] = g;
  return true;
}

/* The chain lo<=v<hi on loop variable v (integers), or NULL. */
static const leir_expr *chain_on(const leir_expr *g, uint32_t v, bool *other) {
  const leir_expr *lv[32];
  uint32_t n = 0;
  *other = false;
  if (!leaves(g, lv, &n, 32)) {
    *other = true;
    return NULL;
  }
  const leir_expr *found = NULL;
  for (uint32_t i = 0; i < n; i++) {
    if (!leir__expr_uses_var(lv[i], v)) continue;
    const leir_expr *l = lv[i];
    if (found || l->kind != LEIR_EXPR_COMPARE || l->n != 3 || l->u.cmp_ops[0] != LEIR_OP_LE ||
        l->u.cmp_ops[1] != LEIR_OP_LT || l->kids[0]->kind != LEIR_EXPR_NUMBER ||
        !l->kids[0]->u.num->is_int || l->kids[1]->kind != LEIR_EXPR_VAR ||
        l->kids[1]->sym != v || l->kids[2]->kind != LEIR_EXPR_NUMBER ||
        !l->kids[2]->u.num->is_int) {
      *other = true;
      return NULL;
    }
    found = l;
  }
  return found;
}

typedef struct count_var {
  uint32_t sym;
  uint32_t n;
} count_var;

static int count_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  count_var *cv = v->ud;
  if ((*slot)->kind == LEIR_EXPR_VAR && (*slot)->sym == cv->sym) cv->n++;
  return LEIR__VISIT_NEXT;
}

static uint32_t uses_of(const leir_expr *e, uint32_t sym) {
  count_var cv = {sym, 0};
  leir__visit v = LEIR__VISIT_INIT(count_node, &cv);
  leir__visit_const(&v, e);
  return cv.n;
}

static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

static int64_t clamp(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }

static bool annotatable(const leir__loop *l) {
  return l->kind == LEIR_LOOP_SERIAL || l->kind == LEIR_LOOP_PARALLEL;
}

/* 0 when loop pl of P1 is a site (s completed). */
static int check_axis(const leir__sctx *c, pec_site *s, uint32_t pl, char *why, size_t cap) {
  const leir_nest *p1 = s->p1;
  uint32_t v = p1->loops[pl].sym;
  const char *vn = leir__sym_name(c->p, v);
  const leir_expr *lhs = s->ep1->lhs, *g = s->ep1->rhs->kids[0], *x = s->ep1->rhs->kids[1];
  s->pl = pl;
  s->d = 0;
  while (s->d < lhs->n && lhs->kids[s->d]->sym != v) s->d++;
  bool other;
  const leir_expr *ch = chain_on(g, v, &other);
  if (!ch) {
    snprintf(why, cap,
             other ? "the guard's condition on %s is not one chain lo<=%s<hi of integers"
                   : "%s is not padded: the guard has no condition on it",
             vn, vn);
    return LEIR__R_PEC_AXIS;
  }
  s->o = ch->kids[0]->u.num->ival;
  int64_t hi = ch->kids[2]->u.num->ival;
  if (__builtin_sub_overflow(hi, s->o, &s->N) || s->N > (int64_t)1 << 40) s->N = 0;
  leir__affine f;
  for (uint32_t k = 0; k < x->n; k++)
    if (k != s->d && leir__expr_uses_var(x->kids[k], v)) {
      snprintf(why, cap, "the padded input reads %s outside its own entry", vn);
      return LEIR__R_PEC_AXIS;
    }
  if (!leir__affine_of(c->a, x->kids[s->d], &f) || f.nterms != 1 || f.slot[0] != pl ||
      f.coef[0] != 1 || f.c != -s->o) {
    snprintf(why, cap, "the padded input's entry for %s is not %s-%lld", vn, vn,
             (long long)s->o);
    return LEIR__R_PEC_AXIS;
  }
  uint32_t b = c->a->expr_buffer[x->id];
  s->n = p1->loops[pl].extent;
  if (s->N <= 0 || s->o < 0 || s->o > s->n || b == LEIR__NONE ||
      c->a->buffers[b].shape[s->d] != s->N ||
      s->n < s->o + s->N) {
    snprintf(why, cap,
             "the guard %lld<=%s<%lld does not cover exactly the input's extent inside the loop's "
             "extent %lld",
             (long long)s->o, vn, (long long)hi, (long long)s->n);
    return LEIR__R_PEC_AXIS;
  }
  if (!annotatable(&p1->loops[pl])) {
    snprintf(why, cap, "loop %s is not an L or P loop", vn);
    return LEIR__R_PEC_AXIS;
  }
  /* the window of Q1 along d */
  tcollect tc = {.sym = s->xp1};
  leir__visit vis = LEIR__VISIT_INIT(collect_node, &tc);
  leir__visit_const(&vis, s->eq1->rhs);
  if (tc.overflow || tc.n == 0) {
    snprintf(why, cap, "the operator reads the padded tensor more than %d times", PEC_MAX_READS);
    return LEIR__R_PEC_AXIS;
  }
  const leir_nest *q = s->q1;
  int ql = -1;
  int64_t st = 0, wmin = INT64_MAX, wmax = INT64_MIN;
  uint32_t in_window = 0;
  for (uint32_t i = 0; i < tc.n; i++) {
    const leir_expr *r = tc.reads[i];
    if (r->n != lhs->n || !leir__affine_of(c->a, r->kids[s->d], &f)) goto window;
    int64_t lo = f.c, hi2 = f.c, cs = 0;
    int cl = -1;
    for (uint32_t k = 0; k < f.nterms; k++) {
      if (f.slot[k] >= q->nloops) goto window;
      if (f.slot[k] < s->nout) {
        if (cl >= 0) goto window;
        cl = (int)f.slot[k];
        cs = f.coef[k];
        continue;
      }
      int64_t span;
      if (__builtin_mul_overflow(f.coef[k], q->loops[f.slot[k]].extent - 1, &span) ||
          __builtin_add_overflow(span < 0 ? lo : hi2, span, span < 0 ? &lo : &hi2))
        goto window;
    }
    if (cl < 0 || cs <= 0 || (ql >= 0 && (cl != ql || cs != st))) goto window;
    ql = cl;
    st = cs;
    if (lo < wmin) wmin = lo;
    if (hi2 > wmax) wmax = hi2;
    in_window += uses_of(r->kids[s->d], q->loops[ql].sym);
  }
  {
    uint32_t cv = q->loops[ql].sym;
    const char *cn = leir__sym_name(c->p, cv);
    for (uint32_t i = 0; i < tc.n; i++)
      for (uint32_t k = 0; k < tc.reads[i]->n; k++)
        if (k != s->d && leir__expr_uses_var(tc.reads[i]->kids[k], cv)) goto window;
    /* the accumulator's own reads use c as its subscript does */
    tcollect self = {.sym = s->o1};
    leir__visit sv = LEIR__VISIT_INIT(collect_node, &self);
    leir__visit_const(&sv, s->eq1->rhs);
    for (uint32_t i = 0; i < self.n; i++) {
      if (!leir__expr_equal(c->p, self.reads[i], c->p, s->eq1->lhs)) goto window;
      in_window += uses_of(self.reads[i], cv);
    }
    if (self.overflow || uses_of(s->eq1->rhs, cv) != in_window) {
      snprintf(why, cap, "output loop %s is used outside the window on %s", cn, vn);
      return LEIR__R_PEC_AXIS;
    }
    s->ql = (uint32_t)ql;
    s->s = st;
    s->M = q->loops[ql].extent;
    s->wmin = wmin;
    s->wmax = wmax;
    int64_t last;
    if (wmin < 0 || __builtin_mul_overflow(s->M - 1, st, &last) ||
        __builtin_add_overflow(last, wmax, &last) || last > s->n - 1) {
      snprintf(why, cap, "the window along %s leaves the padded extent %lld without guards", vn,
               (long long)s->n);
      return LEIR__R_PEC_AXIS;
    }
    if (s->N % st != 0) {
      snprintf(why, cap, "the input's extent %lld along %s is not divisible by the stride %lld",
               (long long)s->N, vn, (long long)st);
      return LEIR__R_PEC_AXIS;
    }
    if (!annotatable(&q->loops[ql])) {
      snprintf(why, cap, "output loop %s is not an L or P loop", cn);
      return LEIR__R_PEC_AXIS;
    }
    s->lo1 = clamp(ceil_div(s->o + s->N - wmax, st), 0, s->M);
    s->hi2 = clamp(ceil_div(s->o - wmin, st), 0, s->M);
  }
  return 0;
window:
  snprintf(why, cap,
           "the operator's reads of the padded tensor along %s are not s*c+w with one output loop "
           "c and one stride s>0 (c in no other entry)",
           vn);
  return LEIR__R_PEC_AXIS;
}

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (r->depth != 1 || leir__skip_nest(c, r)) continue;
    uint32_t t = r->path[0];
    if (t + 3 >= c->p->nnests) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_PEC_FORM,
                   "nest %u is not followed by three more nests (two padding nests and their "
                   "operators)",
                   t);
      continue;
    }
    pec_site s;
    char why[320];
    int rule = check_nests(c, t, &s, why, sizeof why);
    if (rule) {
      LEIR__REJECT(c, leir__site_nest(c, r), (leir__rule)rule, "%s", why);
      continue;
    }
    for (uint32_t l = 0; l < s.p1->nloops && leir__more(c); l++) {
      rule = check_axis(c, &s, l, why, sizeof why);
      if (rule) {
        LEIR__REJECT(c, leir__site_loop(c, r, l), (leir__rule)rule, "%s", why);
        continue;
      }
      leir__emit(c, LEIR_EXACT, "nest=%s loop=%s", r->label, leir__loop_name(c, r, l));
    }
  }
}

/* ---- the rewrite ------------------------------------------------------------------------ */

static leir_expr *retag(leir_program *out, const leir_program *src, const leir_expr *t,
                        uint32_t sym, uint8_t dtype) {
  leir_expr *e = leir__copy_expr(out, src, t);
  e->sym = sym;
  e->dtype = dtype;
  e->scope = LEIR_SCOPE_GLOBAL;
  return e;
}

/* Finds the chain on v in the copied guard and sets its upper bound. */
static void widen(leir_program *out, leir_expr *g, uint32_t v, int64_t hi) {
  while (g->kind == LEIR_EXPR_PAREN) g = g->kids[0];
  if (g->kind == LEIR_EXPR_AND) {
    widen(out, g->kids[0], v, hi);
    widen(out, g->kids[1], v, hi);
    return;
  }
  if (g->kind == LEIR_EXPR_COMPARE && g->n == 3 && g->kids[1]->kind == LEIR_EXPR_VAR &&
      g->kids[1]->sym == v)
    g->kids[2] = leir__mk_int(out, hi);
}

static leir_expr *init_value(leir_program *out, uint8_t init) {
  switch (init) {
  case LEIR__INIT_ONE:
    return leir__mk_int(out, 1);
  case LEIR__INIT_NEG_INF:
    return leir__new_unary(out, LEIR_EXPR_NEG,
                           leir__new_expr(out, LEIR_EXPR_INF, LEIR_OP_NONE, 0));
  case LEIR__INIT_POS_INF:
    return leir__new_expr(out, LEIR_EXPR_INF, LEIR_OP_NONE, 0);
  default:
    return leir__mk_int(out, 0);
  }
}

/* Q restricted to rows [from, from+count) of its loop ql; an accumulation
 * gets its explicit initialization in a nested nest. */
static leir_nest *correction(const leir__sctx *c, leir_program *out, const pec_site *s,
                             const leir_nest *q, int64_t from, int64_t count) {
  leir_nest *cp = leir__copy_nest(out, c->p, q);
  uint32_t cv = cp->loops[s->ql].sym;
  if (from > 0)
    leir__subst_var(out, cp, cv,
                    leir__mk_bin(out, LEIR_OP_ADD, leir__mk_var(out, cv), leir__mk_int(out, from)));
  cp->loops[s->ql].extent = count;
  if (s->init == LEIR__INIT_NONE) return cp;
  leir_equation *eq = cp->items[0].eq;
  leir_equation *ie =
      leir__new_equation(out, leir__copy_expr(out, out, eq->lhs), init_value(out, s->init));
  if (s->nout == cp->nloops) {
    leir_nest *m = leir__new_nest(out, cp->nloops, 2);
    for (uint32_t j = 0; j < cp->nloops; j++) m->loops[j] = cp->loops[j];
    m->items[0].eq = ie;
    m->items[1].eq = eq;
    return m;
  }
  leir_nest *outer = leir__new_nest(out, s->nout, 2);
  leir_nest *inner = leir__new_nest(out, cp->nloops - s->nout, 1);
  for (uint32_t j = 0; j < cp->nloops; j++) {
    if (j < s->nout) outer->loops[j] = cp->loops[j];
    else inner->loops[j - s->nout] = cp->loops[j];
  }
  inner->items[0].eq = eq;
  outer->items[0].eq = ie;
  outer->items[1].nest = inner;
  return outer;
}

static bool read_later(const leir__sctx *c, uint32_t from, uint32_t sym) {
  if (sym < c->p->syms.count && c->known[sym]) return true;
  for (uint32_t t = from; t < c->p->nnests; t++) {
    tlist tl = {0};
    leir__visit v = LEIR__VISIT_INIT(list_node, &tl);
    leir__visit_nest(&v, c->p->nests[t]);
    if (tl.overflow) return true;
    for (uint32_t i = 0; i < tl.n; i++)
      if (tl.syms[i] == sym) return true;
  }
  return false;
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1 || r->path[0] + 3 >= c->p->nnests) return LEIR_ERR_INTERNAL;
  const leir__tok *lt = leir__ps_get(ps, LEIR__K_LOOP, NULL);
  int l = lt ? leir__ps_loop(c, r, lt) : -1;
  if (l < 0) return LEIR_ERR_INTERNAL;
  pec_site s;
  char why[320];
  if (check_nests(c, r->path[0], &s, why, sizeof why) != 0 ||
      check_axis(c, &s, (uint32_t)l, why, sizeof why) != 0)
    return LEIR_ERR_INTERNAL;
  const leir_program *src = c->p;
  uint64_t fresh = c->next_tensor;
  uint32_t cat = leir__tensor_sym(out, fresh++);
  uint32_t catp = leir__tensor_sym(out, fresh++);
  uint32_t y = leir__tensor_sym(out, fresh++);
  const leir_expr *x1r = s.ep1->rhs->kids[1];
  const leir_expr *plhs = s.ep1->lhs;
  uint32_t v = s.p1->loops[s.pl].sym;
  leir_nest *made[8];
  uint32_t nmade = 0;
  /* Cat{v} = X1{v}; Cat{v+N} = X2{v} over X1's shape */
  const leir__buffer *xb = &c->a->buffers[c->a->expr_buffer[x1r->id]];
  leir_nest *mc = leir__new_nest(out, s.p1->nloops, 2);
  for (uint32_t j = 0; j < s.p1->nloops; j++) {
    mc->loops[j] = s.p1->loops[j];
    for (uint32_t k = 0; k < plhs->n; k++)
      if (plhs->kids[k]->sym == s.p1->loops[j].sym) mc->loops[j].extent = xb->shape[k];
  }
  leir_expr *l1 = retag(out, src, plhs, cat, x1r->dtype);
  leir_expr *r1 = retag(out, src, plhs, s.x1, x1r->dtype);
  r1->scope = x1r->scope;
  leir_expr *l2 = retag(out, src, plhs, cat, x1r->dtype);
  l2->kids[s.d] = leir__mk_bin(out, LEIR_OP_ADD, leir__mk_var(out, v), leir__mk_int(out, s.N));
  leir_expr *r2 = retag(out, src, plhs, s.x2, s.ep2->rhs->kids[1]->dtype);
  r2->scope = s.ep2->rhs->kids[1]->scope;
  mc->items[0].eq = leir__new_equation(out, l1, r1);
  mc->items[1].eq = leir__new_equation(out, l2, r2);
  made[nmade++] = mc;
  /* Cp = the padding of Cat, the guard widened to both inputs */
  leir_nest *mp = leir__copy_nest(out, src, s.p1);
  mp->loops[s.pl].extent = s.n + s.N;
  leir_equation *pe = mp->items[0].eq;
  pe->lhs->sym = catp;
  pe->lhs->scope = LEIR_SCOPE_GLOBAL;
  pe->rhs->kids[1]->sym = cat;
  pe->rhs->kids[1]->scope = LEIR_SCOPE_GLOBAL;
  widen(out, pe->rhs->kids[0], v, s.o + 2 * s.N);
  made[nmade++] = mp;
  /* Y = the operator over Cp, K more rows */
  int64_t K = s.N / s.s;
  leir_nest *mf = leir__copy_nest(out, src, s.q1);
  mf->loops[s.ql].extent = K + s.M;
  leir__rename_tensor(mf, s.xp1, catp, LEIR_SCOPE_GLOBAL);
  leir__rename_tensor(mf, s.o1, y, LEIR_SCOPE_GLOBAL);
  made[nmade++] = mf;
  /* O1{s} = Y{s}; O2{s} = Y{s, c+K} */
  leir_nest *ms = leir__new_nest(out, s.nout, 2);
  for (uint32_t j = 0; j < s.nout; j++) ms->loops[j] = s.q1->loops[j];
  const leir_expr *ql = s.eq1->lhs;
  uint32_t cv = s.q1->loops[s.ql].sym;
  leir_expr *y2 = retag(out, src, ql, y, ql->dtype);
  for (uint32_t k = 0; k < y2->n; k++)
    if (y2->kids[k]->sym == cv)
      y2->kids[k] = leir__mk_bin(out, LEIR_OP_ADD, leir__mk_var(out, cv), leir__mk_int(out, K));
  leir_expr *o2l = leir__copy_expr(out, src, ql);
  o2l->sym = s.o2;
  o2l->dtype = s.eq2->lhs->dtype;
  o2l->scope = s.eq2->lhs->scope;
  ms->items[0].eq = leir__new_equation(out, leir__copy_expr(out, src, ql),
                                       retag(out, src, ql, y, ql->dtype));
  ms->items[1].eq = leir__new_equation(out, o2l, y2);
  made[nmade++] = ms;
  /* the original paddings the corrections or later nests read */
  bool c1 = s.lo1 < s.M, c2 = s.hi2 > 0;
  if (c1 || read_later(c, s.t + 4, s.xp1)) made[nmade++] = leir__copy_nest(out, src, s.p1);
  if (c2 || read_later(c, s.t + 4, s.xp2)) made[nmade++] = leir__copy_nest(out, src, s.p2);
  if (c1) made[nmade++] = correction(c, out, &s, s.q1, s.lo1, s.M - s.lo1);
  if (c2) made[nmade++] = correction(c, out, &s, s.q2, 0, s.hi2);
  for (uint32_t i = 0; i < 4; i++) out->nests[s.t + i] = made[i];
  for (uint32_t i = 4; i < nmade; i++)
    if (!leir__program_insert_nest(out, s.t + i, made[i])) return LEIR_ERR_NOMEM;
  return LEIR_OK;
}

/* ---- chain of thought ------------------------------------------------------------------ */

static void put_nest(leir__strbuf *b, const leir_program *p, uint32_t t) {
  leir__print_nest(b, p, p->nests[t], NULL);
}

/* "the nests P1 and Q1 pad X1 into Xp1 and compute O1 from it, ...": the
 * four nests before, the concatenation, padding, fused operator and split
 * after, then the corrections (or that none is needed). */
static bool cot_facts(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps) {
  const leir_program *bp, *ap;
  leir__diff_programs(d, &bp, &ap);
  uint32_t nt = 0, nl = 0;
  const leir__tok *nest = leir__ps_get(ps, LEIR__K_NEST, &nt);
  const leir__tok *loop = leir__ps_get(ps, LEIR__K_LOOP, &nl);
  int64_t t;
  if (!nest || !loop || !leir__tok_int(nest, &t) || t < 0 || (uint64_t)t + 3 >= bp->nnests ||
      ap->nnests < bp->nnests || (uint64_t)t + 4 + (ap->nnests - bp->nnests) > ap->nnests)
    return false;
  uint32_t u = (uint32_t)t;
  /* positions of P1, Q1, P2, Q2: Q1 is the nest after P1 that reads Xp1 */
  uint32_t at[4] = {u, u + 1, u + 2, u + 3};
  const leir_equation *e0 = single_eq(bp->nests[u]), *e1 = single_eq(bp->nests[u + 1]);
  if (!e0 || !e1) return false;
  if (!leir__expr_reads_tensor(e1->rhs, e0->lhs->sym, NULL)) {
    at[1] = u + 2;
    at[2] = u + 1;
  }
  const leir_equation *e[4];
  for (uint32_t k = 0; k < 4; k++)
    if (!(e[k] = single_eq(bp->nests[at[k]]))) return false;
  if (e[0]->rhs->kind != LEIR_EXPR_CALL || e[0]->rhs->n != 3 ||
      e[2]->rhs->kind != LEIR_EXPR_CALL || e[2]->rhs->n != 3)
    return false;
#define NM(p, x) leir__sym_name(p, x)
  leir__sb_puts(b, "the nests ");
  put_nest(b, bp, at[0]);
  leir__sb_puts(b, " and ");
  put_nest(b, bp, at[1]);
  leir__sb_printf(b, " pad %s into %s and compute %s from it, and the nests ",
                  NM(bp, e[0]->rhs->kids[1]->sym), NM(bp, e[0]->lhs->sym), NM(bp, e[1]->lhs->sym));
  put_nest(b, bp, at[2]);
  leir__sb_puts(b, " and ");
  put_nest(b, bp, at[3]);
  leir__sb_printf(b,
                  " do the same for %s, %s and %s with the same loops and operator; %s and %s "
                  "can be concatenated along %.*s as ",
                  NM(bp, e[2]->rhs->kids[1]->sym), NM(bp, e[2]->lhs->sym), NM(bp, e[3]->lhs->sym),
                  NM(bp, e[0]->rhs->kids[1]->sym), NM(bp, e[2]->rhs->kids[1]->sym),
                  (int)loop->len, loop->s);
  put_nest(b, ap, u);
  leir__sb_puts(b, ", padded once as ");
  put_nest(b, ap, u + 1);
  leir__sb_puts(b, ", the operator computed once for both as ");
  put_nest(b, ap, u + 2);
  leir__sb_printf(b, ", and %s and %s copied out of it as ", NM(bp, e[1]->lhs->sym),
                  NM(bp, e[3]->lhs->sym));
  put_nest(b, ap, u + 3);
  /* corrections: the added nests that write O1 or O2 */
  uint32_t end = u + 4 + (ap->nnests - bp->nnests), ncorr = 0;
  const char *o1 = NM(bp, e[1]->lhs->sym), *o2 = NM(bp, e[3]->lhs->sym);
  for (uint32_t k = u + 4; k < end; k++) {
    const leir_nest *m = ap->nests[k];
    if (m->nitems == 0 || !m->items[0].eq) continue;
    const char *w = NM(ap, m->items[0].eq->lhs->sym);
    if (strcmp(w, o1) != 0 && strcmp(w, o2) != 0) continue;
    leir__sb_puts(b, ncorr++ ? " and " : "; only the rows whose window reads across the seam "
                                         "differ, and they are recomputed from the padded inputs "
                                         "as ");
    put_nest(b, ap, k);
  }
  if (!ncorr) leir__sb_puts(b, "; no output row reads across the seam, so nothing needs correcting");
#undef NM
  return true;
}

const leir__strategy_impl leir__partially_equivalent_then_correct = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP),
    .required = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP),
    .enumerate = enumerate,
    .apply = apply,
    .cot = cot_facts,
    .span = 4,
};
