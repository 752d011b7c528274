/*
 * tensor_split_to_decouple_operators (5, graph): split the range of one
 * loop of a nest in two, copy the slices of the inputs that loop indexes
 * into fresh tensors, run the operator once per slice, and put the two
 * partial outputs together.
 *
 * Sites: every top-level nest N that is one equation directly under its
 * loops (no nested nest), either a plain definition X_{s} = f (f does not
 * read X) or an accumulation X_{s} = X_{s} op g with an implicit
 * initialization (spec/leir.md §3.4; g does not read X), and every loop k
 * of N with extent V >= 2 such that
 *  - k is not used as a value (only inside subscripts), and every tensor
 *    access of f that uses k has affine subscript entries without tensor
 *    reads (so shifting k by v1 shifts the accessed element consistently)
 *    whose ranges over N's loops lie inside the buffer (the copies are
 *    computed without the if_then_else guards of f);
 *  - spatial split (k in the output's subscript): exactly one entry of X's
 *    subscript uses k and that entry is k itself;
 *  - reduction split (k not in the output's subscript): the equation is an
 *    accumulation with op +, *, max or min and every entry of X's
 *    subscript is a constant or a distinct loop variable (so the combining
 *    nest writes every element once).
 * Parameters: `nest=N loop=k at=v1` with v1 in 1..V-1 (all of them when
 * V <= 65, otherwise the 64 points j*V/65, j = 1..64: the cap of this
 * strategy), and optionally `perm=p1,...`: the order of the copied
 * accesses (every other permutation when 2 to 4 accesses are copied; the
 * reference's order is a hash order).
 *
 * The rewrite (the reference's form): for each distinct access A_{s} of f
 * that uses k, in order (first appearance, or perm), two copies in two
 * nests: X1_{s} = A_{s} over N's loops with k of extent v1 and
 * X2_{s} = A_{s, k -> k+v1} over N's loops with k of extent V-v1; then the
 * operator twice, on fresh outputs O1 and O2 (same subscript as X, the
 * accesses replaced by the copies), then
 *  - spatial: X_{s} = O1_{s} (extent v1) and X_{s, k -> k+v1} = O2_{s}
 *    (extent V-v1), over N's loops;
 *  - reduction: one combining nest over the loops of X's subscript (and
 *    N's loops of extent 1), B^{1}_{tx=0} first when no loop is called tx:
 *    X_{s} = X_{s} op (O1_{s} op O2_{s}) (max(X, max(O1, O2)) for max/min).
 * In the copy and write-back nests, which keep all of N's loops as the
 * reference does, a B loop that no written subscript uses gets extent 1
 * (the reference's tx rule) and a P, V or B loop whose iterations would
 * write one element more than once becomes L (the reference keeps such a
 * B loop when another copy of the nest uses it: a dependence across a
 * bound loop, which spec/leir.md §3.2 forbids and the CUDA lowering
 * refuses).
 * The reference draws one axis and one split point at random and combines
 * reduction partials inside every remaining loop (wrong when another
 * reduction loop remains); libleir enumerates all and combines over the
 * output's loops only.
 * Exact, except reduction splits of + and * (reassociating).
 */
#include <stdlib.h>

#include "kit.h"
#include "visit.h"

#define LEIR__TSPLIT_MAX_POINTS 64
#define LEIR__TSPLIT_MAX_PERM 4
#define LEIR__TSPLIT_MAX_ACC 32

/* ---- analysis of a site --------------------------------------------------------- */

typedef struct site {
  const leir_nest *n;
  const leir_equation *eq;
  uint32_t x;            /* the output tensor */
  int op;                /* accumulation operator (LEIR_OP_*), or -1 for a plain definition */
  const leir_expr *self; /* the self-read of an accumulation */
  uint32_t nacc;         /* distinct accesses using loop k */
  const leir_expr *acc[LEIR__TSPLIT_MAX_ACC];
  bool spatial;
  bool pfull;            /* reduction: partials indexed by every loop but k */
} site;

typedef struct accscan {
  const leir__sctx *c;
  site *s;
  uint32_t k;   /* loop variable */
  bool value;   /* k used as a value */
  bool bad;     /* an access using k is not affine, or too many */
  bool xread;   /* X read other than as the self-read */
} accscan;

static bool uses_var(const leir_expr *e, uint32_t sym) { return leir__expr_uses_var(e, sym); }

static int acc_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  accscan *a = v->ud;
  const leir_expr *e = *slot;
  if (e->kind == LEIR_EXPR_VAR && e->sym == a->k && v->tensors == 0) a->value = true;
  if (e->kind != LEIR_EXPR_TENSOR) return LEIR__VISIT_NEXT;
  if (e == a->s->self) return LEIR__VISIT_SKIP;
  if (e->sym == a->s->x) {
    a->xread = true;
    return LEIR__VISIT_SKIP;
  }
  if (!uses_var(e, a->k)) return LEIR__VISIT_SKIP;
  if (v->tensors > 0) {
    a->bad = true; /* an index table using k inside another subscript */
    return LEIR__VISIT_SKIP;
  }
  for (uint32_t d = 0; d < e->n; d++) {
    leir__affine f;
    if (leir__expr_has_tensor(e->kids[d]) || !leir__affine_of(a->c->a, e->kids[d], &f)) {
      a->bad = true;
      return LEIR__VISIT_SKIP;
    }
  }
  for (uint32_t i = 0; i < a->s->nacc; i++)
    if (leir__expr_equal(a->c->p, a->s->acc[i], a->c->p, e)) return LEIR__VISIT_SKIP;
  if (a->s->nacc == LEIR__TSPLIT_MAX_ACC) {
    a->bad = true;
    return LEIR__VISIT_SKIP;
  }
  a->s->acc[a->s->nacc++] = e;
  return LEIR__VISIT_SKIP;
}

/* The equation's form (site fields n, eq, x, op, self); false with a reason. */
static bool site_form(const leir__sctx *c, const leir_nest *n, site *s, char *why, size_t cap) {
  memset(s, 0, sizeof *s);
  s->n = n;
  if (n->nitems != 1 || !n->items[0].eq || n->nloops == 0 || n->nloops > 64) {
    snprintf(why, cap, "the nest is not one equation directly under its loops");
    return false;
  }
  const leir_equation *eq = n->items[0].eq;
  s->eq = eq;
  s->x = eq->lhs->sym;
  s->op = -1;
  for (uint32_t d = 0; d < eq->lhs->n; d++)
    if (leir__expr_has_tensor(eq->lhs->kids[d])) {
      snprintf(why, cap, "the output's subscript reads a tensor");
      return false;
    }
  uint32_t idx = eq->id < c->a->nids ? c->a->eq_index[eq->id] : LEIR__NONE;
  if (idx == LEIR__NONE) {
    snprintf(why, cap, "the equation is not analysed");
    return false;
  }
  const leir_expr *r = eq->rhs;
  if (c->a->eqs[idx].init != LEIR__INIT_NONE) {
    const leir_expr *first = NULL;
    if (r->kind == LEIR_EXPR_BINARY &&
        (r->op == LEIR_OP_ADD || r->op == LEIR_OP_SUB || r->op == LEIR_OP_MUL ||
         r->op == LEIR_OP_DIV))
      first = r->kids[0];
    else if (r->kind == LEIR_EXPR_CALL && (r->op == LEIR_OP_MAX || r->op == LEIR_OP_MIN) &&
             r->n == 2)
      first = r->kids[0];
    if (!first || !leir__expr_equal(c->p, first, c->p, eq->lhs)) {
      snprintf(why, cap, "the accumulation is not X = X op ... or max/min(X, ...)");
      return false;
    }
    s->op = r->op;
    s->self = first;
  }
  if (leir__expr_reads_tensor(r, s->x, s->self)) {
    snprintf(why, cap, "the equation reads its output %s other than as its accumulation",
             leir__sym_name(c->p, s->x));
    return false;
  }
  return true;
}

/* Checks loop l of the site; fills s->acc and s->spatial. 0 or a rule. */
static int site_axis(const leir__sctx *c, const leir__nref *ref, site *s, uint32_t l, char *why,
                     size_t cap) {
  const leir_nest *n = s->n;
  uint32_t k = n->loops[l].sym;
  const char *kn = leir__sym_name(c->p, k);
  if (n->loops[l].extent < 2) {
    snprintf(why, cap, "loop %s has extent %lld", kn, (long long)n->loops[l].extent);
    return LEIR__R_TSPLIT_AXIS;
  }
  s->nacc = 0;
  accscan a = {c, s, k, false, false, false};
  leir__visit v = LEIR__VISIT_INIT(acc_node, &a);
  leir__visit_const(&v, s->eq->rhs);
  if (a.xread) {
    snprintf(why, cap, "the equation reads its output %s other than as its accumulation",
             leir__sym_name(c->p, s->x));
    return LEIR__R_TSPLIT_FORM;
  }
  if (a.value) {
    snprintf(why, cap, "loop %s is used as a value", kn);
    return LEIR__R_TSPLIT_AXIS;
  }
  if (a.bad) {
    snprintf(why, cap, "an access using %s has an entry that is not affine in the loops", kn);
    return LEIR__R_TSPLIT_AXIS;
  }
  /* the copies run without the guards of f: every entry must stay in range */
  for (uint32_t i = 0; i < s->nacc; i++) {
    const leir_expr *e = s->acc[i];
    uint32_t b = e->id < c->a->nids ? c->a->expr_buffer[e->id] : LEIR__NONE;
    if (b == LEIR__NONE) return LEIR__R_TSPLIT_AXIS;
    for (uint32_t d = 0; d < e->n; d++) {
      int64_t lo, hi;
      if (!leir__entry_range(c, ref, e->kids[d], &lo, &hi) || lo < 0 ||
          (d < c->a->buffers[b].rank && hi >= c->a->buffers[b].shape[d])) {
        snprintf(why, cap, "the access to %s may leave the buffer outside the guards of the "
                 "equation", leir__sym_name(c->p, e->sym));
        return LEIR__R_TSPLIT_RANGE;
      }
    }
  }
  const leir_expr *lhs = s->eq->lhs;
  uint32_t uses = 0;
  bool plain = false;
  for (uint32_t d = 0; d < lhs->n; d++)
    if (uses_var(lhs->kids[d], k)) {
      uses++;
      plain = lhs->kids[d]->kind == LEIR_EXPR_VAR;
    }
  if (uses) {
    if (uses > 1 || !plain) {
      snprintf(why, cap, "the output's subscript uses %s other than as one plain entry", kn);
      return LEIR__R_TSPLIT_AXIS;
    }
    s->spatial = true;
    return 0;
  }
  s->spatial = false;
  if (s->op != LEIR_OP_ADD && s->op != LEIR_OP_MUL && s->op != LEIR_OP_MAX &&
      s->op != LEIR_OP_MIN) {
    snprintf(why, cap, "%s is a reduction loop but the equation is not an accumulation with "
             "+, *, max or min", kn);
    return LEIR__R_TSPLIT_REDUCTION;
  }
  /* the partials: X's subscript when every other loop is in it as a
   * distinct entry (entries constants or loop variables), else every loop
   * but k (the other reduction loops, the reference's form) */
  uint64_t seen = 0;
  bool injective = true;
  for (uint32_t d = 0; d < lhs->n && injective; d++) {
    const leir_expr *e = lhs->kids[d];
    if (e->kind == LEIR_EXPR_NUMBER) continue;
    uint32_t j = 0;
    if (e->kind == LEIR_EXPR_VAR)
      while (j < n->nloops && n->loops[j].sym != e->sym) j++;
    if (e->kind != LEIR_EXPR_VAR || j == n->nloops || (seen >> j & 1)) injective = false;
    else seen |= (uint64_t)1 << j;
  }
  s->pfull = !injective;
  int64_t elems = 1;
  for (uint32_t j = 0; j < n->nloops; j++) {
    if (j == l) continue;
    if (!(seen >> j & 1)) s->pfull = true;
    if (__builtin_mul_overflow(elems, n->loops[j].extent, &elems) || elems > ((int64_t)1 << 24))
      elems = ((int64_t)1 << 24) + 1;
  }
  if (s->pfull && elems > ((int64_t)1 << 24)) {
    snprintf(why, cap, "the partial results would have more than 2^24 elements");
    return LEIR__R_TSPLIT_REDUCTION;
  }
  return 0;
}

/* The split points of extent V (ascending). */
static uint32_t split_points(int64_t V, int64_t *out) {
  uint32_t n = 0;
  if (V - 1 <= LEIR__TSPLIT_MAX_POINTS) {
    for (int64_t v = 1; v < V; v++) out[n++] = v;
  } else {
    for (int64_t j = 1; j <= LEIR__TSPLIT_MAX_POINTS; j++) out[n++] = j * V / (LEIR__TSPLIT_MAX_POINTS + 1);
  }
  return n;
}

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (r->depth != 1 || leir__skip_nest(c, r)) continue;
    char why[256];
    why[0] = '\0';
    site s;
    if (!site_form(c, r->nest, &s, why, sizeof why)) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_TSPLIT_FORM, "%s", why);
      continue;
    }
    for (uint32_t l = 0; l < r->nest->nloops && leir__more(c); l++) {
      int rule = site_axis(c, r, &s, l, why, sizeof why);
      if (rule) {
        LEIR__REJECT(c, leir__site_loop(c, r, l), (leir__rule)rule, "%s", why);
        continue;
      }
      leir_exactness cls = !s.spatial && (s.op == LEIR_OP_ADD || s.op == LEIR_OP_MUL)
                               ? LEIR_REASSOCIATING
                               : LEIR_EXACT;
      int64_t pts[LEIR__TSPLIT_MAX_POINTS];
      uint32_t npts = split_points(r->nest->loops[l].extent, pts);
      const char *ln = leir__loop_name(c, r, l);
      for (uint32_t j = 0; j < npts && leir__more(c); j++) {
        leir__emit(c, cls, "nest=%s loop=%s at=%lld", r->label, ln, (long long)pts[j]);
        if (s.nacc < 2 || s.nacc > LEIR__TSPLIT_MAX_PERM) continue;
        uint32_t p[LEIR__TSPLIT_MAX_PERM];
        for (uint32_t q = 0; q < s.nacc; q++) p[q] = q;
        while (leir__more(c) && leir__next_perm(p, s.nacc)) {
          char perm[LEIR__TSPLIT_MAX_PERM * 4];
          leir__format_list(perm, sizeof perm, p, s.nacc);
          leir__emit(c, cls, "nest=%s loop=%s perm=%s at=%lld", r->label, ln, perm,
                     (long long)pts[j]);
        }
      }
    }
  }
}

/* ---- the rewrite ------------------------------------------------------------------ */

typedef struct build {
  leir__sctx *c;
  leir_program *out;
  const site *s;
  uint32_t k;        /* the loop variable */
  uint32_t l;        /* its index */
  int64_t v1, V;
  uint32_t order[LEIR__TSPLIT_MAX_ACC];
  uint32_t copy[LEIR__TSPLIT_MAX_ACC][2]; /* fresh symbols of the copies */
  uint32_t o[2];     /* fresh partial outputs */
} build;

static leir_nest *loops_copy(build *b, uint32_t nitems, int half) {
  const leir_nest *n = b->s->n;
  leir_nest *m = leir__new_nest(b->out, n->nloops, nitems);
  for (uint32_t j = 0; j < n->nloops; j++) m->loops[j] = n->loops[j];
  m->loops[b->l].extent = half ? b->V - b->v1 : b->v1;
  return m;
}

/* Shifts loop variable k by v1 inside the subscript entries below *slot,
 * as the reference's textual replacement of k by "k+v1" reads: next to a
 * `+` the chain stays flat (c+g -> c+g+1, d+h -> d+2+h), elsewhere the
 * shifted variable is parenthesized (c*2 -> (c+1)*2). */
static void shift_entry(build *b, leir_expr **slot, bool whole) {
  leir_expr *e = *slot;
  if (e->kind == LEIR_EXPR_VAR && e->sym == b->k) {
    leir_expr *s = leir__mk_bin(b->out, LEIR_OP_ADD, leir__mk_var(b->out, b->k),
                                leir__mk_int(b->out, b->v1));
    *slot = whole ? s : leir__new_unary(b->out, LEIR_EXPR_PAREN, s);
    return;
  }
  if (e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_ADD) {
    leir_expr *l = e->kids[0], *r = e->kids[1];
    if (l->kind == LEIR_EXPR_VAR && l->sym == b->k)
      e->kids[0] = leir__mk_bin(b->out, LEIR_OP_ADD, l, leir__mk_int(b->out, b->v1));
    else
      shift_entry(b, &e->kids[0], false);
    if (r->kind == LEIR_EXPR_VAR && r->sym == b->k)
      *slot = leir__mk_bin(b->out, LEIR_OP_ADD, e, leir__mk_int(b->out, b->v1));
    else
      shift_entry(b, &e->kids[1], false);
    return;
  }
  for (uint32_t i = 0; i < e->n; i++) shift_entry(b, &e->kids[i], e->kind == LEIR_EXPR_TENSOR);
}

static void shift_subscript(build *b, leir_expr *t) {
  for (uint32_t d = 0; d < t->n; d++) shift_entry(b, &t->kids[d], true);
}

static leir_expr *tensor_like(build *b, const leir_expr *t, uint32_t sym, uint8_t dtype) {
  leir_expr *e = leir__copy_expr(b->out, b->c->p, t);
  e->sym = sym;
  e->dtype = dtype;
  e->scope = LEIR_SCOPE_GLOBAL;
  return e;
}

/* The partial result O_h at X's subscript (x, a node of X in program
 * src), or at every loop but k (pfull). */
static leir_expr *partial(build *b, const leir_program *src, const leir_expr *x, int half) {
  if (!b->s->pfull) {
    leir_expr *e = leir__copy_expr(b->out, src, x);
    e->sym = b->o[half];
    e->scope = LEIR_SCOPE_GLOBAL;
    return e;
  }
  const leir_nest *n = b->s->n;
  leir_expr *e = leir__new_tensor(b->out, b->o[half], (leir_dtype)x->dtype, LEIR_SCOPE_GLOBAL,
                                  n->nloops - 1);
  for (uint32_t j = 0, d = 0; j < n->nloops; j++)
    if (j != b->l) e->kids[d++] = leir__mk_var(b->out, n->loops[j].sym);
  return e;
}

typedef struct repl {
  build *b;
  int half;
} repl;

static int repl_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  repl *rp = v->ud;
  build *b = rp->b;
  leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_TENSOR) return LEIR__VISIT_NEXT;
  if (e->sym == b->s->x) {
    *slot = partial(b, b->out, e, rp->half);
    return LEIR__VISIT_SKIP;
  }
  for (uint32_t i = 0; i < b->s->nacc; i++)
    if (leir__expr_equal(b->c->p, b->s->acc[i], b->out, e)) {
      e->sym = b->copy[i][rp->half];
      e->scope = LEIR_SCOPE_GLOBAL;
      return LEIR__VISIT_SKIP;
    }
  return LEIR__VISIT_SKIP;
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1) return LEIR_ERR_INTERNAL;
  const leir__tok *lt = leir__ps_get(ps, LEIR__K_LOOP, NULL);
  const leir__tok *at = leir__ps_get(ps, LEIR__K_AT, NULL);
  int l = lt ? leir__ps_loop(c, r, lt) : -1;
  int64_t v1;
  if (l < 0 || !at || !leir__tok_int(at, &v1)) return LEIR_ERR_INTERNAL;
  site s;
  char why[256];
  if (!site_form(c, r->nest, &s, why, sizeof why) ||
      site_axis(c, r, &s, (uint32_t)l, why, sizeof why) != 0)
    return LEIR_ERR_INTERNAL;
  build b;
  memset(&b, 0, sizeof b);
  b.c = c;
  b.out = out;
  b.s = &s;
  b.l = (uint32_t)l;
  b.k = r->nest->loops[l].sym;
  b.v1 = v1;
  b.V = r->nest->loops[l].extent;
  if (v1 < 1 || v1 >= b.V) return LEIR_ERR_INTERNAL;
  for (uint32_t i = 0; i < s.nacc; i++) b.order[i] = i;
  uint32_t np = 0;
  const leir__tok *pt = leir__ps_get(ps, LEIR__K_PERM, &np);
  if (pt) {
    if (np != s.nacc) return LEIR_ERR_INTERNAL;
    for (uint32_t i = 0; i < np; i++) {
      int64_t v;
      if (!leir__tok_int(&pt[i], &v) || v < 0 || v >= (int64_t)np) return LEIR_ERR_INTERNAL;
      b.order[i] = (uint32_t)v;
    }
  }
  uint64_t fresh = c->next_tensor;
  for (uint32_t i = 0; i < s.nacc; i++) {
    uint32_t a = b.order[i];
    b.copy[a][0] = leir__tensor_sym(out, fresh++);
    b.copy[a][1] = leir__tensor_sym(out, fresh++);
  }
  b.o[0] = leir__tensor_sym(out, fresh++);
  b.o[1] = leir__tensor_sym(out, fresh++);
  uint32_t t = r->path[0];
  leir_nest *made[8];
  uint32_t nmade = 0;
  /* the copies */
  if (s.nacc) {
    for (int h = 0; h < 2; h++) {
      leir_nest *m = loops_copy(&b, s.nacc, h);
      for (uint32_t i = 0; i < s.nacc; i++) {
        uint32_t a = b.order[i];
        const leir_expr *acc = s.acc[a];
        leir_expr *lhs = tensor_like(&b, acc, b.copy[a][h], acc->dtype);
        leir_expr *rhs = leir__copy_expr(out, c->p, acc);
        if (h) shift_subscript(&b, rhs);
        m->items[i].eq = leir__new_equation(out, lhs, rhs);
      }
      leir__copy_nest_kinds(m);
      made[nmade++] = m;
    }
  }
  /* the operator on each slice */
  for (int h = 0; h < 2; h++) {
    leir_nest *m = loops_copy(&b, 1, h);
    leir_expr *lhs = leir__copy_expr(out, c->p, s.eq->lhs);
    leir_expr *rhs = leir__copy_expr(out, c->p, s.eq->rhs);
    lhs = partial(&b, out, lhs, h);
    repl rp = {&b, h};
    leir__visit v = LEIR__VISIT_INIT(repl_node, &rp);
    leir__visit_expr(&v, &rhs);
    m->items[0].eq = leir__new_equation(out, lhs, rhs);
    made[nmade++] = m;
  }
  const leir_expr *X = s.eq->lhs;
  if (s.spatial) {
    for (int h = 0; h < 2; h++) {
      leir_nest *m = loops_copy(&b, 1, h);
      leir_expr *lhs = leir__copy_expr(out, c->p, X);
      if (h) shift_subscript(&b, lhs);
      leir_expr *rhs = tensor_like(&b, X, b.o[h], X->dtype);
      m->items[0].eq = leir__new_equation(out, lhs, rhs);
      leir__copy_nest_kinds(m);
      made[nmade++] = m;
    }
  } else {
    const leir_nest *n = r->nest;
    uint32_t keep[64], nk = 0;
    bool tx = false;
    for (uint32_t j = 0; j < n->nloops; j++)
      if (j != b.l) {
        keep[nk++] = j;
        if (strcmp(leir__sym_name(c->p, n->loops[j].sym), "tx") == 0) tx = true;
      }
    leir_nest *m = leir__new_nest(out, nk + (tx ? 0 : 1), 1);
    uint32_t o = 0;
    if (!tx) {
      m->loops[0].kind = LEIR_LOOP_BOUND;
      m->loops[0].extent = 1;
      m->loops[0].pos = LEIR__NOPOS;
      m->loops[0].sym = leir__sym_intern(out, "tx", 2);
      o = 1;
    }
    for (uint32_t j = 0; j < nk; j++) m->loops[o + j] = n->loops[keep[j]];
    leir_expr *o0 = partial(&b, c->p, X, 0);
    leir_expr *o1 = partial(&b, c->p, X, 1);
    leir_expr *self = leir__copy_expr(out, c->p, X);
    leir_expr *rhs;
    if (s.op == LEIR_OP_MAX || s.op == LEIR_OP_MIN) {
      leir_expr *inner = leir__new_call(out, (leir_op)s.op, 2);
      inner->kids[0] = o0;
      inner->kids[1] = o1;
      rhs = leir__new_call(out, (leir_op)s.op, 2);
      rhs->kids[0] = self;
      rhs->kids[1] = inner;
    } else {
      leir_expr *inner = leir__new_unary(out, LEIR_EXPR_PAREN,
                                         leir__new_binary(out, (leir_op)s.op, o0, o1));
      rhs = leir__new_binary(out, (leir_op)s.op, self, inner);
    }
    m->items[0].eq = leir__new_equation(out, leir__copy_expr(out, c->p, X), rhs);
    made[nmade++] = m;
  }
  out->nests[t] = made[0];
  for (uint32_t i = 1; i < nmade; i++)
    if (!leir__program_insert_nest(out, t + i, made[i])) return LEIR_ERR_NOMEM;
  return LEIR_OK;
}

const leir__strategy_impl leir__tensor_split_to_decouple_operators = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP) | LEIR__KEY(LEIR__K_PERM) |
            LEIR__KEY(LEIR__K_AT),
    .required = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP) | LEIR__KEY(LEIR__K_AT),
    .enumerate = enumerate,
    .apply = apply,
    .cot = NULL,
};
