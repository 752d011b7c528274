/*
 * Sites of the math strategies (math_sites.h): arithmetic regions of float
 * equations, each rewritten by one lib/algebra.h rewrite on a scratch copy
 * during enumeration (the input program is never touched) and in place in
 * the clone during apply.
 */
#include "math_sites.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "error.h"

#define DEFAULT_TERMS 64

uint32_t leir__math_size(const leir_expr *e) {
  uint32_t n = e->kind == LEIR_EXPR_PAREN ? 0 : 1;
  if (e->kind == LEIR_EXPR_TENSOR) return n; /* subscripts are not arithmetic */
  for (uint32_t i = 0; i < e->n && n < UINT32_MAX / 2; i++) n += leir__math_size(e->kids[i]);
  return n;
}

static uint32_t divs(const leir_expr *e, unsigned depth) {
  if (depth > 400 || e->kind == LEIR_EXPR_TENSOR) return 0;
  uint32_t n = 0;
  if (e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_DIV) {
    const leir_expr *d = e->kids[1];
    while (d->kind == LEIR_EXPR_PAREN) d = d->kids[0];
    n += d->kind != LEIR_EXPR_NUMBER;
  }
  for (uint32_t i = 0; i < e->n; i++) n += divs(e->kids[i], depth + 1);
  return n;
}

uint32_t leir__math_divisions(const leir_expr *e) { return divs(e, 0); }

static bool adds_fractions(const leir_expr *e, bool under_sum, unsigned depth) {
  if (depth > 400) return true;
  if (e->kind == LEIR_EXPR_TENSOR || e->kind == LEIR_EXPR_CALL) return false;
  if (e->kind == LEIR_EXPR_BINARY) {
    if (e->op == LEIR_OP_DIV && under_sum) {
      const leir_expr *d = e->kids[1];
      while (d->kind == LEIR_EXPR_PAREN) d = d->kids[0];
      if (d->kind != LEIR_EXPR_NUMBER) return true;
    }
    if (e->op == LEIR_OP_ADD || e->op == LEIR_OP_SUB) under_sum = true;
  }
  for (uint32_t i = 0; i < e->n; i++)
    if (adds_fractions(e->kids[i], under_sum, depth + 1)) return true;
  return false;
}

bool leir__math_adds_fractions(const leir_expr *e) { return adds_fractions(e, false, 0); }

static const leir_expr *strip_paren(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e;
}

static bool reads_sym(const leir_expr *e, uint32_t sym, unsigned depth);

typedef struct tame_walk {
  const leir_program *p;
  uint32_t seen[32]; /* intermediates being followed (an accumulation reads itself) */
  uint32_t nseen;
  unsigned budget; /* nodes visited: bounded */
} tame_walk;

static bool tame(tame_walk *w, const leir_expr *e, unsigned depth);

/* e (of p) has proven finite bounds whatever its reads hold (a sigmoid
 * 1/(1+exp(-x)) lies in [0, 1]) */
static bool bounded(const leir_program *p, const leir_expr *e) {
  leir_program *s = leir__program_new(4096);
  leir__alg *a = s ? leir__alg_new(s, DEFAULT_TERMS) : NULL;
  leir_expr *copy = a ? leir__copy_expr(s, p, e) : NULL;
  double lo = 0, hi = 0;
  bool ok = copy && leir__alg_bounds(a, copy, &lo, &hi) && isfinite(lo) && isfinite(hi);
  leir__alg_free(a);
  leir_program_free(s);
  return ok;
}

/* The equations of p that write sym: how many, and the first with the
 * loops around it (outermost first) and its top-level nest. */
typedef struct def_at {
  const leir_equation *eq;
  const leir__loop *loops[32];
  uint32_t nloops, count, top;
} def_at;

static void find_def(const leir_nest *n, uint32_t sym, def_at *d, const leir__loop **stack,
                     uint32_t ns, uint32_t top, unsigned depth) {
  if (depth > 64) {
    d->count += 2; /* too deep to tell: not a single definition */
    return;
  }
  for (uint32_t k = 0; k < n->nloops; k++)
    if (ns < 32) stack[ns++] = &n->loops[k];
    else d->count += 2;
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].nest) {
      find_def(n->items[k].nest, sym, d, stack, ns, top, depth + 1);
    } else if (n->items[k].eq && n->items[k].eq->lhs->sym == sym && d->count++ == 0) {
      d->eq = n->items[k].eq;
      d->nloops = ns;
      d->top = top;
      for (uint32_t i = 0; i < ns; i++) d->loops[i] = stack[i];
    }
  }
}

static def_at def_of(const leir_program *p, uint32_t sym) {
  def_at d = {.count = 0};
  const leir__loop *stack[32];
  for (uint32_t i = 0; i < p->nnests; i++) find_def(p->nests[i], sym, &d, stack, 0, i, 0);
  return d;
}

/* every tensor read in e is an input or written by one equation, in a
 * top-level nest before `before` */
static bool reads_settled(const leir_program *p, const leir_expr *e, uint32_t before,
                          unsigned depth) {
  if (depth > 200) return false;
  if (e->kind == LEIR_EXPR_TENSOR) {
    def_at d = def_of(p, e->sym);
    if (d.count > 1 || (d.count == 1 && d.top >= before)) return false;
  }
  for (uint32_t i = 0; i < e->n; i++)
    if (!reads_settled(p, e->kids[i], before, depth + 1)) return false;
  return true;
}

static bool contains_node(const leir_expr *e, const leir_expr *node, unsigned depth) {
  if (e == node) return true;
  if (depth > 200 || e->kind == LEIR_EXPR_TENSOR) return false;
  for (uint32_t i = 0; i < e->n; i++)
    if (contains_node(e->kids[i], node, depth + 1)) return true;
  return false;
}

static void find_host(const leir_nest *n, const leir_expr *node, def_at *d,
                      const leir__loop **stack, uint32_t ns, uint32_t top, unsigned depth) {
  if (depth > 64 || d->count) return;
  for (uint32_t k = 0; k < n->nloops; k++)
    if (ns < 32) stack[ns++] = &n->loops[k];
  for (uint32_t k = 0; k < n->nitems && !d->count; k++) {
    if (n->items[k].nest) {
      find_host(n->items[k].nest, node, d, stack, ns, top, depth + 1);
    } else if (n->items[k].eq && contains_node(n->items[k].eq->rhs, node, 0)) {
      d->count = 1;
      d->eq = n->items[k].eq;
      d->nloops = ns;
      d->top = top;
      for (uint32_t i = 0; i < ns; i++) d->loops[i] = stack[i];
    }
  }
}

/* X_s in the equation `host` is, at every iteration, the right-hand side of
 * X's one definition at the same index point: X is written by one plain
 * (non-accumulating) equation under the same loops as the host's, whose
 * left-hand subscripts are the loop variables, each once (every point
 * writes its own element), in a top-level nest before the host's, and X
 * is read at the same subscripts. The definition's top-level nest (at
 * least) is stored in *top. */
static const leir_expr *same_point_def(const leir_program *p, const def_at *host,
                                       const leir_expr *x, uint32_t *top) {
  def_at d = def_of(p, x->sym);
  if (d.count != 1 || d.top >= host->top || d.nloops != host->nloops || d.eq->lhs->n != d.nloops ||
      x->n != d.nloops || reads_sym(d.eq->rhs, x->sym, 0))
    return NULL;
  for (uint32_t i = 0; i < d.nloops; i++) {
    const leir_expr *v = strip_paren(d.eq->lhs->kids[i]);
    if (d.loops[i]->kind != host->loops[i]->kind || d.loops[i]->sym != host->loops[i]->sym ||
        d.loops[i]->extent != host->loops[i]->extent || v->kind != LEIR_EXPR_VAR ||
        !leir__expr_equal(p, x->kids[i], p, d.eq->lhs->kids[i]))
      return NULL;
    for (uint32_t j = 0; j < i; j++)
      if (strip_paren(d.eq->lhs->kids[j])->sym == v->sym) return NULL;
  }
  bool every_loop = true; /* each loop variable is one of the subscripts */
  for (uint32_t k = 0; k < d.nloops && every_loop; k++) {
    bool found = false;
    for (uint32_t i = 0; i < d.nloops; i++)
      found |= strip_paren(d.eq->lhs->kids[i])->sym == d.loops[k]->sym;
    every_loop = found;
  }
  if (!every_loop) return NULL;
  if (d.top < *top) *top = d.top;
  return d.eq->rhs;
}

/* e = X/Y (of p) where X, Y, either one a read of an intermediate that
 * same_point_def resolves to its definition at the same index point, from
 * values written once before them: the quotient of the resolved sides has
 * proven bounds (E = N/O with N = exp(D)-exp(-D), O = exp(D)+exp(-D),
 * Mish's tanh, and N/(exp(D)+exp(-D)) with O inlined: in [-1, 1]) */
static bool bounded_ratio_of_defs(tame_walk *w, const leir_expr *e) {
  const leir_program *p = w->p;
  const leir_expr *div = strip_paren(e);
  if (div->kind != LEIR_EXPR_BINARY || div->op != LEIR_OP_DIV) return false;
  /* the search walks the program a few times per read: charged to the
   * walk's budget, so that a large program stays linear */
  unsigned cost = 64u + 8u * p->nnests;
  if (w->budget < cost) return false;
  w->budget -= cost;
  def_at host = {.count = 0};
  const leir__loop *stack[32];
  for (uint32_t i = 0; i < p->nnests && !host.count; i++)
    find_host(p->nests[i], e, &host, stack, 0, i, 0);
  if (!host.count) return false;
  uint32_t first = host.top;
  const leir_expr *side[2];
  bool resolved = false;
  for (int k = 0; k < 2; k++) {
    const leir_expr *x = strip_paren(div->kids[k]);
    side[k] = x;
    if (x->kind == LEIR_EXPR_TENSOR) {
      const leir_expr *r = same_point_def(p, &host, x, &first);
      if (r) side[k] = r, resolved = true;
    }
  }
  if (!resolved || !reads_settled(p, side[0], first, 0) || !reads_settled(p, side[1], first, 0))
    return false;
  leir_program *s = leir__program_new(4096);
  leir__alg *a = s ? leir__alg_new(s, DEFAULT_TERMS) : NULL;
  leir_expr *n = a ? leir__copy_expr(s, p, side[0]) : NULL;
  leir_expr *d = n ? leir__copy_expr(s, p, side[1]) : NULL;
  leir_expr *q = d ? leir__new_binary(s, LEIR_OP_DIV, n, d) : NULL;
  double lo = 0, hi = 0;
  bool ok = q && leir__alg_bounds(a, q, &lo, &hi) && isfinite(lo) && isfinite(hi);
  leir__alg_free(a);
  leir_program_free(s);
  return ok;
}

/* every equation of n (and its nested nests) that writes sym has a tame
 * right side */
static bool defs_tame(tame_walk *w, const leir_nest *n, uint32_t sym, unsigned depth) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].nest) {
      if (!defs_tame(w, n->items[k].nest, sym, depth + 1)) return false;
    } else if (n->items[k].eq && n->items[k].eq->lhs->sym == sym &&
               !tame(w, n->items[k].eq->rhs, depth + 1)) {
      return false;
    }
  }
  return true;
}

/* e is built from tensors, numbers, arithmetic and sqrt/abs/max/min/erf, and
 * parts with proven finite bounds (a sigmoid), and so are the definitions
 * of the intermediates it reads (an input's values are whatever its dtype
 * holds: the polynomial case) */
static bool tame(tame_walk *w, const leir_expr *e, unsigned depth) {
  if (depth > 200 || w->budget == 0) return false;
  w->budget--;
  switch (e->kind) {
  case LEIR_EXPR_NUMBER:
  case LEIR_EXPR_VAR: return true;
  case LEIR_EXPR_TENSOR: {
    for (uint32_t i = 0; i < w->nseen; i++)
      if (w->seen[i] == e->sym) return true;
    if (w->nseen == 32) return false;
    w->seen[w->nseen++] = e->sym;
    bool ok = true;
    for (uint32_t i = 0; ok && i < w->p->nnests; i++) ok = defs_tame(w, w->p->nests[i], e->sym, depth);
    w->nseen--;
    return ok; /* subscripts are index arithmetic, not values */
  }
  case LEIR_EXPR_CALL:
    if (e->op != LEIR_OP_SQRT && e->op != LEIR_OP_ABS && e->op != LEIR_OP_MAX &&
        e->op != LEIR_OP_MIN && e->op != LEIR_OP_ERF)
      return bounded(w->p, e);
    break;
  case LEIR_EXPR_BINARY:
    if (e->op == LEIR_OP_POW) {
      const leir_expr *x = e->kids[1];
      while (x->kind == LEIR_EXPR_PAREN) x = x->kids[0];
      double v = x->kind == LEIR_EXPR_NUMBER ? x->u.num->value : 0.5;
      if (!(v >= -64 && v <= 64 && v == (double)(int)v)) return bounded(w->p, e);
    } else if (e->op != LEIR_OP_ADD && e->op != LEIR_OP_SUB && e->op != LEIR_OP_MUL &&
               e->op != LEIR_OP_DIV) {
      return false;
    }
    break;
  case LEIR_EXPR_NEG:
  case LEIR_EXPR_PAREN: break;
  default: return false;
  }
  for (uint32_t i = 0; i < e->n; i++)
    if (!tame(w, e->kids[i], depth + 1)) /* 1/(1+exp(-x)); Mish's N/O */
      return bounded(w->p, e) || bounded_ratio_of_defs(w, e);
  return true;
}

static bool safe_dens(tame_walk *w, const leir_expr *e, unsigned depth) {
  if (depth > 200) return false;
  if (e->kind == LEIR_EXPR_TENSOR || e->kind == LEIR_EXPR_CALL) return true; /* own regions */
  if (e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_DIV) {
    const leir_expr *d = e->kids[1];
    while (d->kind == LEIR_EXPR_PAREN) d = d->kids[0];
    if (d->kind != LEIR_EXPR_NUMBER && !tame(w, d, depth + 1)) return false;
  }
  for (uint32_t i = 0; i < e->n; i++)
    if (!safe_dens(w, e->kids[i], depth + 1)) return false;
  return true;
}

bool leir__math_safe_denominators(const leir_program *p, const leir_expr *e) {
  tame_walk w = {.p = p, .nseen = 0, .budget = 100000};
  return safe_dens(&w, e, 0);
}

static const leir_expr *strip(const leir_expr *e) {
  while (e && e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e;
}

static bool is_arith(const leir_expr *e) {
  if (e->kind == LEIR_EXPR_NEG || e->kind == LEIR_EXPR_PAREN) return true;
  return e->kind == LEIR_EXPR_BINARY && e->op != LEIR_OP_FLOORDIV && e->op != LEIR_OP_MOD;
}

static bool is_float(uint8_t dt) {
  return dt == LEIR_F16 || dt == LEIR_BF16 || dt == LEIR_F32 || dt == LEIR_F64;
}

static bool reads_sym(const leir_expr *e, uint32_t sym, unsigned depth) {
  if (depth > 400) return true; /* too deep to tell: treat as a read */
  if (e->kind == LEIR_EXPR_TENSOR && e->sym == sym) return true;
  for (uint32_t i = 0; i < e->n; i++)
    if (reads_sym(e->kids[i], sym, depth + 1)) return true;
  return false;
}

static bool is_target(const leir_expr *e, const leir_expr *lhs) {
  e = strip(e);
  return e->kind == LEIR_EXPR_TENSOR && e->sym == lhs->sym;
}

/* the accumulation position: R in `X op R` (op + - *) or `R/X` */
static bool accumulation_operand(const leir_equation *eq, const leir__xsite *x) {
  const leir_expr *rhs = eq->rhs;
  if (x->depth != 2 || x->parent != rhs || rhs->kind != LEIR_EXPR_BINARY) return false;
  if (rhs->op == LEIR_OP_ADD || rhs->op == LEIR_OP_SUB || rhs->op == LEIR_OP_MUL)
    return x->path[1] == 1 && is_target(rhs->kids[0], eq->lhs);
  if (rhs->op == LEIR_OP_DIV) return x->path[1] == 0 && is_target(rhs->kids[1], eq->lhs);
  return false;
}

static bool region_root(const leir_equation *eq, const leir__xsite *x, bool calls) {
  const leir_expr *e = x->e;
  if (!(is_arith(e) || (calls && e->kind == LEIR_EXPR_CALL && e->op != LEIR_OP_IF_THEN_ELSE)))
    return false;
  if (!x->parent) return true;
  if (x->parent->kind == LEIR_EXPR_CALL)
    return !(x->parent->op == LEIR_OP_IF_THEN_ELSE && x->path[x->depth - 1] == 0);
  return accumulation_operand(eq, x);
}

typedef enum { OUT_OK, OUT_REFUSED, OUT_UNPROVEN, OUT_SAME } outcome;

/* the first read of tensor sym in e outside subscripts, or NULL */
static const leir_expr *first_read(const leir_expr *e, uint32_t sym, unsigned depth) {
  if (depth > 400) return NULL;
  if (e->kind == LEIR_EXPR_TENSOR) return e->sym == sym ? e : NULL;
  for (uint32_t i = 0; i < e->n; i++) {
    const leir_expr *r = first_read(e->kids[i], sym, depth + 1);
    if (r) return r;
  }
  return NULL;
}

/* normal range of a float dtype */
static void dtype_limits(uint8_t dt, double *tiny, double *huge) {
  switch (dt) {
  case LEIR_F16: *tiny = 6.103515625e-05, *huge = 65504.0; break;
  case LEIR_BF16: *tiny = 1.1754943508222875e-38, *huge = 3.3895313892515355e38; break;
  case LEIR_F32: *tiny = FLT_MIN, *huge = FLT_MAX; break;
  default: *tiny = DBL_MIN, *huge = DBL_MAX; break;
  }
}

/* the narrowest range of the float dtypes read in e (outside subscripts) */
static void narrowest(const leir_expr *e, double *tiny, double *huge, unsigned depth) {
  if (depth > 400) return;
  if (e->kind == LEIR_EXPR_TENSOR) {
    if (is_float(e->dtype)) {
      double t, h;
      dtype_limits(e->dtype, &t, &h);
      if (t > *tiny) *tiny = t;
      if (h < *huge) *huge = h;
    }
    return;
  }
  for (uint32_t i = 0; i < e->n; i++) narrowest(e->kids[i], tiny, huge, depth + 1);
}

/* What the algebra may assume about a region of `src` (copied into the
 * algebra's program): the declared domains of the inputs (positive,
 * ranges, values) and the range of the dtypes it computes in. */
static void declare(leir__alg *a, const leir_program *src, uint8_t lhs_dtype, const leir_expr *e) {
  leir_program *dst = leir__alg_program(a);
  for (uint32_t i = 0; i < src->nsig; i++) {
    const leir__decl *d = &src->sig[i];
    if (d->domain == LEIR_DOMAIN_DEFAULT || d->domain == LEIR_DOMAIN_NORMAL) continue;
    uint32_t sym = leir__sym_find(dst, leir__sym_name(src, d->sym), leir__sym_len(src, d->sym));
    if (sym == LEIR__NOSYM) continue;
    if (d->domain == LEIR_DOMAIN_POSITIVE) leir__alg_assume_positive(a, sym);
    else if (d->domain == LEIR_DOMAIN_VALUE) leir__alg_assume_range(a, sym, d->dom_a, d->dom_a);
    else if (d->domain == LEIR_DOMAIN_RANGE || d->domain == LEIR_DOMAIN_UNIFORM)
      leir__alg_assume_range(a, sym, d->dom_a, d->dom_b);
  }
  double tiny, huge;
  dtype_limits(lhs_dtype, &tiny, &huge);
  narrowest(e, &tiny, &huge, 0);
  leir__alg_set_limits(a, tiny, huge);
}

static leir_expr *run(leir__alg *a, const leir__math_spec *spec, const leir_expr *e,
                      const leir_expr *x, bool dens_safe) {
  if (spec->rewrite_dens) return spec->rewrite_dens(a, e, dens_safe);
  return spec->rewrite_x ? spec->rewrite_x(a, e, x) : spec->rewrite(a, e);
}

/* Runs the rewrite on a scratch copy of e (x: the tensor read, for
 * rewrite_x); OUT_OK when it is a candidate. */
static outcome try_region(const leir_program *p, uint8_t dt, const leir_expr *e,
                          const leir_expr *x, const leir__math_spec *spec, leir_status *st) {
  leir_program *s = leir__program_new(4096);
  leir__alg *a = s ? leir__alg_new(s, spec->max_terms ? spec->max_terms : DEFAULT_TERMS) : NULL;
  leir_expr *copy = a ? leir__copy_expr(s, p, e) : NULL;
  leir_expr *xc = copy && x ? leir__copy_expr(s, p, x) : NULL;
  leir__alg_set_flat(a, true);
  outcome o = OUT_REFUSED;
  if (!copy || (x && !xc)) {
    *st = LEIR_ERR_NOMEM;
  } else {
    declare(a, p, dt, e);
    leir_expr *r = run(a, spec, copy, xc, spec->rewrite_dens && leir__math_safe_denominators(p, e));
    if (!r) {
      int err = leir__alg_error(a);
      if (err == LEIR__ALG_NOMEM) *st = LEIR_ERR_NOMEM;
      o = err == LEIR__ALG_UNPROVEN                      ? OUT_UNPROVEN
          : err == LEIR__ALG_NOCHANGE || err == 0 ? OUT_SAME /* 0: the strategy declined */
                                                  : OUT_REFUSED;
    } else if (leir__ac_hash(s, copy) == leir__ac_hash(s, r) ||
               (spec->accept && !spec->accept(s, copy, r))) {
      o = OUT_SAME;
    } else {
      o = OUT_OK;
    }
  }
  leir__alg_free(a);
  leir_program_free(s);
  return o;
}

typedef struct walk {
  const leir__math_spec *spec;
} walk;

/* the site string of a region (with the tensor for rewrite_x), in c->site */
static const char *site_of(leir__sctx *c, const leir__xsite *x, const leir_expr *t) {
  if (!t) return leir__site_expr(c, x);
  char path[LEIR__MAX_XPATH * 11];
  leir__xpath_format(x, path, sizeof path);
  snprintf(c->site, sizeof c->site, "nest=%.40s tensor=%.40s eq=%u expr=%.120s", x->eq.r->label,
           leir__name(c, t->sym), x->eq.item, path);
  return c->site;
}

static void report(leir__sctx *c, const leir__xsite *x, outcome o, const leir_expr *t) {
  char path[LEIR__MAX_XPATH * 11];
  if (o == OUT_OK) {
    leir__xpath_format(x, path, sizeof path);
    if (t)
      leir__emit(c, LEIR_REASSOCIATING, "nest=%s tensor=%s eq=%u expr=%s", x->eq.r->label,
                 leir__name(c, t->sym), x->eq.item, path);
    else
      leir__emit(c, LEIR_REASSOCIATING, "nest=%s eq=%u expr=%s", x->eq.r->label, x->eq.item, path);
  } else if (o == OUT_UNPROVEN) {
    LEIR__REJECT(c, site_of(c, x, t), LEIR__R_MATH_UNPROVEN,
                 "the rewrite's condition (positivity, no new overflow) is not proven");
  } else if (o == OUT_REFUSED) {
    LEIR__REJECT(c, site_of(c, x, t), LEIR__R_MATH_OUTSIDE,
                 "the region has inf, a comparison, or exceeds the algebra's limits");
  } else {
    LEIR__REJECT(c, site_of(c, x, t), LEIR__R_MATH_NO_CHANGE,
                 "the rewrite leaves the region as it is");
  }
}

typedef struct tensor_walk {
  uint32_t seen[64];
  uint32_t n;
} tensor_walk;

/* tensors read in e outside subscripts, first-read order (at most 64) */
static void tensors_of(const leir_expr *e, tensor_walk *w, unsigned depth) {
  if (depth > 400) return;
  if (e->kind == LEIR_EXPR_TENSOR) {
    for (uint32_t i = 0; i < w->n; i++)
      if (w->seen[i] == e->sym) return;
    if (w->n < 64) w->seen[w->n++] = e->sym;
    return;
  }
  for (uint32_t i = 0; i < e->n; i++) tensors_of(e->kids[i], w, depth + 1);
}

static bool on_node(leir__sctx *c, const leir__xsite *x, void *ud) {
  walk *w = ud;
  const leir_equation *eq = x->eq.eq;
  if (x->path[0] != 1 || x->in_subscript || !region_root(eq, x, w->spec->calls)) return true;
  if (reads_sym(x->e, eq->lhs->sym, 0)) {
    LEIR__REJECT(c, leir__site_expr(c, x), LEIR__R_MATH_TARGET,
                 "the region reads %s, the equation's own left-hand tensor",
                 leir__name(c, eq->lhs->sym));
    return true;
  }
  leir_status st = LEIR_OK;
  if (!w->spec->rewrite_x) {
    report(c, x, try_region(c->p, eq->lhs->dtype, x->e, NULL, w->spec, &st), NULL);
  } else {
    tensor_walk tw = {.n = 0};
    tensors_of(x->e, &tw, 0);
    for (uint32_t i = 0; i < tw.n && st == LEIR_OK && leir__more(c); i++) {
      const leir_expr *t = first_read(x->e, tw.seen[i], 0);
      report(c, x, try_region(c->p, eq->lhs->dtype, x->e, t, w->spec, &st), t);
    }
  }
  if (st != LEIR_OK) {
    c->status = st;
    return false;
  }
  return leir__more(c);
}

static bool on_equation(leir__sctx *c, const leir__eqsite *s, void *ud) {
  walk *w = ud;
  if (!is_float(s->eq->lhs->dtype)) {
    if (!w->spec->rewrite_x) {
      LEIR__REJECT(c, leir__site_eq(c, s), LEIR__R_MATH_DTYPE,
                   "%s is computed in an integer dtype", leir__name(c, s->eq->lhs->sym));
    } else if (c->mode == LEIR__MODE_EXPLAIN) { /* sites name the tensor */
      tensor_walk tw = {.n = 0};
      tensors_of(s->eq->rhs, &tw, 0);
      for (uint32_t i = 0; i < tw.n; i++) {
        snprintf(c->site, sizeof c->site, "nest=%.40s tensor=%.40s eq=%u", s->r->label,
                 leir__name(c, tw.seen[i]), s->item);
        leir__reject(c, c->site, LEIR__R_MATH_DTYPE, "%s is computed in an integer dtype",
                     leir__name(c, s->eq->lhs->sym));
      }
    }
    return true;
  }
  leir__each_subexpr(c, s, on_node, ud);
  return leir__more(c);
}

void leir__math_enumerate(leir__sctx *c, const leir__math_spec *spec) {
  walk w = {spec};
  leir__each_equation(c, on_equation, &w);
}

leir_status leir__math_apply(leir__sctx *c, const leir__pstep *ps, leir_program *out,
                             const leir__math_spec *spec) {
  const leir__nref *r = leir__ps_nest(c, ps);
  leir__eqsite s;
  if (!r || !leir__ps_eq(c, r, ps, &s)) return LEIR_ERR_INTERNAL;
  leir_nest *m = leir__nest_at(out, r->path, r->depth);
  leir_expr **slot = m ? leir__ps_expr_slot(m, s.item, ps) : NULL;
  if (!slot) return LEIR_ERR_INTERNAL;
  leir__alg *a = leir__alg_new(out, spec->max_terms ? spec->max_terms : DEFAULT_TERMS);
  if (!a) return leir__error_nomem();
  leir__alg_set_flat(a, true);
  declare(a, c->p, s.eq->lhs->dtype, *slot);
  leir_expr *x = NULL;
  if (spec->rewrite_x) {
    uint32_t sym = leir__ps_tensor(c, leir__ps_get(ps, LEIR__K_TENSOR, NULL));
    const leir_expr *t = sym == LEIR__NOSYM ? NULL : first_read(*slot, sym, 0);
    if (!t) {
      leir__alg_free(a);
      return LEIR_ERR_INTERNAL;
    }
    x = (leir_expr *)t;
  }
  /* out is still a clone of c->p here: the intermediates are the same */
  bool safe = spec->rewrite_dens && leir__math_safe_denominators(out, *slot);
  leir_expr *res = run(a, spec, *slot, x, safe);
  int err = leir__alg_error(a);
  leir__alg_free(a);
  if (!res)
    return err == LEIR__ALG_NOMEM ? leir__error_nomem()
                                  : leir__error(LEIR_ERR_INTERNAL, NULL, NULL, 0, 0,
                                                "the algebra failed (%d) on an emitted step", err);
  *slot = res;
  return LEIR_OK;
}
