/*
 * compute_inline (2, graph): substitute the defining expression of an
 * intermediate into the next nest, which reads it, and delete the producer.
 *
 * Sites: every top-level nest N (the producer) with a next nest N+1 (the
 * consumer) where
 *  - N is one equation X_{i1,...,ik} = f whose subscript entries are the
 *    nest's loop variables, each exactly once, except loops of extent 1,
 *    which may be missing (their variable is 0 in f): every element is
 *    written once, by the iteration that names it;
 *  - X is an intermediate (no signature variable) read by N+1 and by no
 *    nest after it (so the producer can go);
 *  - the equation is X's only writer, f does not read X, and no nest from
 *    N+1 on writes an element f reads before the consumer reads X
 *    (leir__dep_inlinable of lib/dependence.c, on index sets);
 *  - X and every equation of N+1 that reads it have a floating-point
 *    dtype, X is never read inside a subscript, and every subscript entry
 *    of every read of X lies in [0, extent) of the producer's loop (no
 *    read of an element the producer does not write).
 * Also a producer whose affine subscript has compound entries
 * (X_{tx,a*2+c} = f, GroupNorm's) when the subscript determines every
 * loop of extent > 1, every read of X is directly in N+1 with the same
 * subscript, and every loop the producer uses is a loop of N+1 with the
 * same name and no larger extent (or has extent 1): the read is replaced
 * by f unchanged (a missing loop of extent 1 is 0), as the reference does.
 * A read X_{s1,...,sk} becomes f with loop i_j replaced by s_j (all at
 * once), parenthesized like the reference unless it is a tensor, number,
 * variable or a call whose arguments hold no parentheses. Parameters: `nest=N` (the site spans N and N+1).
 * Exact when X has the dtype of every equation that reads it and that
 * dtype is f32 or f64 (the consumer computes f as the producer did and
 * storing X rounded nothing); reassociating otherwise (the store to X no
 * longer rounds).
 */
#include <stdlib.h>

#include "dependence.h"
#include "kit.h"
#include "visit.h"

static bool is_float(uint8_t dt) {
  return dt == LEIR_F64 || dt == LEIR_F32 || dt == LEIR_F16 ||
         dt == LEIR_BF16;
}

typedef struct readers {
  const leir__sctx *c;
  const leir_nest *producer;
  uint32_t x;              /* the intermediate */
  uint32_t nreads;
  bool in_subscript;       /* X read inside a subscript */
  bool bad_dtype;          /* a reader is not a float equation */
  bool mixed_dtype;        /* a reader's dtype differs from X's */
  bool out_of_range;
  uint8_t xdtype;
  const leir__nref *r;     /* the consumer, for entry ranges */
  bool compound;           /* a producer with compound entries: reads must repeat its subscript */
} readers;

static int reader_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  readers *s = v->ud;
  const leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_TENSOR || e->sym != s->x) return LEIR__VISIT_NEXT;
  if (parent == NULL && v->side == 0 && v->depth == 0) return LEIR__VISIT_NEXT; /* a write */
  s->nreads++;
  if (v->tensors > 0) s->in_subscript = true;
  uint8_t dt = v->eq->lhs->dtype;
  if (!is_float(dt)) s->bad_dtype = true;
  if (dt != s->xdtype) s->mixed_dtype = true;
  if (e->n != s->producer->items[0].eq->lhs->n) {
    s->out_of_range = true;
    return LEIR__VISIT_NEXT;
  }
  const leir_expr *plhs = s->producer->items[0].eq->lhs;
  if (s->compound) {
    /* the producer's own subscript, read directly in the consumer, whose
     * loops of the same names run over no more values */
    if (!leir__expr_equal(s->c->p, e, s->c->p, plhs) || v->nest != s->r->nest)
      s->out_of_range = true;
    return LEIR__VISIT_SKIP;
  }
  for (uint32_t k = 0; k < e->n; k++) {
    int64_t lo, hi, ext = 0;
    for (uint32_t l = 0; l < s->producer->nloops; l++)
      if (s->producer->loops[l].sym == plhs->kids[k]->sym) ext = s->producer->loops[l].extent;
    if (!leir__entry_range(s->c, s->r, e->kids[k], &lo, &hi) || lo < 0 || hi >= ext)
      s->out_of_range = true;
  }
  return LEIR__VISIT_NEXT;
}

/* Is nest n one equation X_{loops...} = f with each loop of extent > 1
 * exactly once (loops of extent 1 may be missing)? */
static bool plain_producer(const leir_nest *n) {
  if (n->nitems != 1 || !n->items[0].eq || n->nloops == 0 || n->nloops > 64) return false;
  const leir_expr *lhs = n->items[0].eq->lhs;
  if (lhs->n > n->nloops) return false;
  uint64_t seen = 0;
  for (uint32_t k = 0; k < lhs->n; k++) {
    const leir_expr *e = lhs->kids[k];
    if (e->kind != LEIR_EXPR_VAR) return false;
    uint32_t l = 0;
    while (l < n->nloops && n->loops[l].sym != e->sym) l++;
    if (l == n->nloops || l >= 64 || (seen >> l & 1)) return false;
    seen |= (uint64_t)1 << l;
  }
  for (uint32_t l = 0; l < n->nloops; l++)
    if (!(seen >> l & 1) && n->loops[l].extent != 1) return false;
  return true;
}

/* Is nest n one equation X_{s} = f whose affine subscript determines every
 * loop of extent > 1 (compound entries such as a*2+c: each element is
 * written by one iteration)? */
static bool compound_producer(const leir_nest *n) {
  if (n->nitems != 1 || !n->items[0].eq || n->nloops == 0 || n->nloops > 64) return false;
  const leir_expr *lhs = n->items[0].eq->lhs;
  for (uint32_t k = 0; k < lhs->n; k++)
    if (leir__expr_has_tensor(lhs->kids[k])) return false;
  uint64_t pinned = leir__pinned_by_subscript(n, lhs);
  for (uint32_t l = 0; l < n->nloops; l++)
    if (n->loops[l].extent > 1 && !(pinned >> l & 1)) return false;
  return true;
}

/* For a compound producer: every loop of the producer that f or the
 * subscript uses is a loop of the consumer with the same name and an extent
 * no larger (the read at a consumer iteration is the element the producer
 * wrote at the same values), or has extent 1 (it is then 0). */
static bool loops_match(const leir_nest *prod, const leir_nest *cons) {
  const leir_equation *eq = prod->items[0].eq;
  uint64_t used = leir__loops_in(prod, eq->lhs) | leir__loops_in(prod, eq->rhs);
  for (uint32_t l = 0; l < prod->nloops && l < 64; l++) {
    if (!(used >> l & 1)) continue;
    uint32_t j = 0;
    while (j < cons->nloops && cons->loops[j].sym != prod->loops[l].sym) j++;
    if (j < cons->nloops ? cons->loops[j].extent > prod->loops[l].extent
                         : prod->loops[l].extent != 1)
      return false;
  }
  return true;
}

static bool reads_sym(const leir_expr *e, uint32_t sym, bool top) {
  if (e->kind == LEIR_EXPR_TENSOR && e->sym == sym && !top) return true;
  for (uint32_t k = 0; k < e->n; k++)
    if (reads_sym(e->kids[k], sym, false)) return true;
  return false;
}

static bool nest_reads(const leir_nest *n, uint32_t sym) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].nest) {
      if (nest_reads(n->items[k].nest, sym)) return true;
      continue;
    }
    if (reads_sym(n->items[k].eq->lhs, sym, true) || reads_sym(n->items[k].eq->rhs, sym, false))
      return true;
  }
  return false;
}

/* The consumer nest's nref (top-level nest t). */
static const leir__nref *top_ref(const leir__sctx *c, uint32_t t) {
  for (uint32_t i = 0; i < c->nnests; i++)
    if (c->nests[i].depth == 1 && c->nests[i].path[0] == t) return &c->nests[i];
  return NULL;
}

/* 0: inlinable (class in *cls); else the rule that fails (message in why). */
static int check_site(leir__sctx *c, uint32_t t, leir_exactness *cls, char *why, size_t cap) {
  const leir_program *p = c->p;
  const leir_nest *n = p->nests[t];
  bool compound = !plain_producer(n) && compound_producer(n) && t + 1 < p->nnests &&
                  loops_match(n, p->nests[t + 1]);
  if (!plain_producer(n) && !compound) {
    snprintf(why, cap, "nest %u is not one equation whose subscript lists each of its loops once",
             t);
    return LEIR__R_INLINE_PRODUCER;
  }
  const leir_equation *eq = n->items[0].eq;
  uint32_t x = eq->lhs->sym;
  const char *xn = leir__sym_name(p, x);
  if (c->known[x]) {
    snprintf(why, cap, "%s is a variable of the program's signature", xn);
    return LEIR__R_INLINE_PRODUCER;
  }
  if (t + 1 >= p->nnests) {
    snprintf(why, cap, "nest %u is the last nest", t);
    return LEIR__R_GRAPH_LAST_NEST;
  }
  for (uint32_t m = t + 2; m < p->nnests; m++)
    if (nest_reads(p->nests[m], x)) {
      snprintf(why, cap, "%s is read again by nest %u, after the next nest", xn, m);
      return LEIR__R_INLINE_USES;
    }
  if (!is_float(eq->lhs->dtype)) {
    snprintf(why, cap, "%s is not a floating-point tensor", xn);
    return LEIR__R_INLINE_DTYPE;
  }
  readers s = {c, n, x, 0, false, false, false, false, eq->lhs->dtype, top_ref(c, t + 1),
               compound};
  if (!s.r) return LEIR__R_INLINE_USES;
  leir__visit v = LEIR__VISIT_INIT(reader_node, &s);
  leir__visit_nest(&v, p->nests[t + 1]);
  if (s.nreads == 0) {
    snprintf(why, cap, "nest %u does not read %s", t + 1, xn);
    return LEIR__R_INLINE_USES;
  }
  if (s.in_subscript || s.bad_dtype) {
    snprintf(why, cap, "%s is read inside a subscript or by an equation of an integer dtype", xn);
    return LEIR__R_INLINE_DTYPE;
  }
  if (s.out_of_range) {
    snprintf(why, cap, "a read of %s in nest %u may name an element nest %u does not write", xn,
             t + 1, t);
    return LEIR__R_INLINE_RANGE;
  }
  if (!leir__dep_inlinable(c->a, t, t + 1, why, cap)) return LEIR__R_GRAPH_DEPENDENCE;
  *cls = !s.mixed_dtype && (eq->lhs->dtype == LEIR_F64 || eq->lhs->dtype == LEIR_F32)
             ? LEIR_EXACT
             : LEIR_REASSOCIATING;
  return 0;
}

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (r->depth != 1 || leir__skip_nest(c, r)) continue;
    char why[256];
    why[0] = '\0';
    leir_exactness cls = LEIR_EXACT;
    int rule = check_site(c, r->path[0], &cls, why, sizeof why);
    if (rule) {
      LEIR__REJECT(c, leir__site_nest(c, r), (leir__rule)rule, "%s", why);
      continue;
    }
    leir__emit(c, cls, "nest=%s", r->label);
  }
}

/* ---- the substitution -------------------------------------------------------- */

typedef struct subst {
  leir_program *p;
  const leir_nest *producer; /* in p */
  const leir_expr *read;     /* the read X_{s...} being replaced */
  const leir_nest *consumer; /* set for a compound producer */
} subst;

static bool has_call_or_paren(const leir_expr *e) {
  if (e->kind == LEIR_EXPR_CALL || e->kind == LEIR_EXPR_PAREN) return true;
  for (uint32_t k = 0; k < e->n; k++)
    if (has_call_or_paren(e->kids[k])) return true;
  return false;
}

/* The reference's rule: no parentheses around a tensor, a number, or a
 * call whose arguments hold no parentheses (`exp(A_{a})`, not
 * `min(max(F,0),1)`). */
static bool needs_parens(const leir_expr *e) {
  if (e->kind == LEIR_EXPR_TENSOR || e->kind == LEIR_EXPR_NUMBER || e->kind == LEIR_EXPR_VAR ||
      e->kind == LEIR_EXPR_PAREN || e->kind == LEIR_EXPR_INF)
    return false;
  if (e->kind == LEIR_EXPR_CALL) {
    for (uint32_t k = 0; k < e->n; k++)
      if (has_call_or_paren(e->kids[k])) return true;
    return false;
  }
  return true;
}

static leir_expr *paren(leir_program *p, leir_expr *e) {
  if (!needs_parens(e)) return e;
  leir_expr *w = leir__new_expr(p, LEIR_EXPR_PAREN, 0, 1);
  w->kids[0] = e;
  return w;
}

/* In a copy of f: loop variable i_j becomes a copy of entry s_j. */
static int var_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  subst *s = v->ud;
  leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_VAR) return LEIR__VISIT_NEXT;
  const leir_expr *lhs = s->producer->items[0].eq->lhs;
  if (s->consumer) {
    /* a compound producer: the consumer's loops of the same names carry the
     * same values; a loop of extent 1 it lacks is 0 */
    for (uint32_t j = 0; j < s->consumer->nloops; j++)
      if (s->consumer->loops[j].sym == e->sym) return LEIR__VISIT_NEXT;
    for (uint32_t l = 0; l < s->producer->nloops; l++)
      if (s->producer->loops[l].sym == e->sym) {
        *slot = leir__mk_int(s->p, 0);
        return LEIR__VISIT_SKIP;
      }
    return LEIR__VISIT_NEXT;
  }
  for (uint32_t k = 0; k < lhs->n; k++)
    if (lhs->kids[k]->sym == e->sym) {
      *slot = leir__copy_expr(s->p, s->p, s->read->kids[k]); /* printed with the parentheses precedence needs */
      return LEIR__VISIT_SKIP;
    }
  /* a loop of extent 1 missing from the subscript is 0 */
  for (uint32_t l = 0; l < s->producer->nloops; l++)
    if (s->producer->loops[l].sym == e->sym) {
      *slot = leir__mk_int(s->p, 0);
      return LEIR__VISIT_SKIP;
    }
  return LEIR__VISIT_NEXT;
}

static int read_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  subst *s = v->ud;
  leir_expr *e = *slot;
  uint32_t x = s->producer->items[0].eq->lhs->sym;
  if (e->kind != LEIR_EXPR_TENSOR || e->sym != x) return LEIR__VISIT_NEXT;
  if (parent == NULL && v->side == 0 && v->depth == 0) return LEIR__VISIT_NEXT;
  leir_expr *f = leir__copy_expr(s->p, s->p, s->producer->items[0].eq->rhs);
  subst inner = {s->p, s->producer, e, s->consumer};
  leir__visit w = LEIR__VISIT_INIT(var_node, &inner);
  leir__visit_expr(&w, &f);
  *slot = paren(s->p, f);
  return LEIR__VISIT_SKIP;
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1 || r->path[0] + 1 >= out->nnests) return LEIR_ERR_INTERNAL;
  uint32_t t = r->path[0];
  subst s = {out, out->nests[t], NULL,
             plain_producer(out->nests[t]) ? NULL : out->nests[t + 1]};
  leir__visit v = LEIR__VISIT_INIT(read_node, &s);
  leir__visit_nest(&v, out->nests[t + 1]);
  leir__program_remove_nest(out, t);
  return LEIR_OK;
}

const leir__strategy_impl leir__compute_inline = {
    .keys = LEIR__KEY(LEIR__K_NEST),
    .required = LEIR__KEY(LEIR__K_NEST),
    .enumerate = enumerate,
    .apply = apply,
    .cot = NULL,
    .span = 2,
};
