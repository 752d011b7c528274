/*
 * The prefix-array forms of the streaming strategies (streaming.h; the
 * reference's 7.14 / 7.18 / 7.19): the layout, where they apply, the
 * builders of the recurrences and their readers, and the CoT of the
 * streaming steps.
 */
#include "streaming.h"

#include <math.h>
#include <stdlib.h>

#include "algebra.h"
#include "streaming_util.h"
#include "visit.h"

void leir__stream_prefix_layout(const leir__stream_max *mx, leir__stream_prefix *pl) {
  const leir_nest *n = mx->n;
  const leir_expr *lhs = mx->eq->lhs;
  const leir_expr *xs = mx->eq->rhs->n == 2 ? unparen(mx->eq->rhs->kids[1]) : NULL;
  pl->rank = lhs->n + 1;
  pl->kpos = lhs->n;
  pl->ksym = n->loops[mx->k].sym;
  pl->last = n->loops[mx->k].extent - 1;
  /* X's subscript when X reads every loop once, as a plain variable */
  bool like_x = xs && xs->kind == LEIR_EXPR_TENSOR && xs->n == n->nloops && n->nloops <= 64;
  uint64_t seen = 0;
  for (uint32_t j = 0; like_x && j < xs->n; j++) {
    int at = loop_of(n, xs->kids[j]);
    like_x = at >= 0 && !(seen >> at & 1);
    if (!like_x) break;
    seen |= 1ull << at;
    pl->from[j] = -1;
    if ((uint32_t)at == mx->k) {
      pl->kpos = j;
      continue;
    }
    for (uint32_t i = 0; i < lhs->n; i++)
      if (lhs->kids[i]->kind == LEIR_EXPR_VAR && lhs->kids[i]->sym == n->loops[at].sym)
        pl->from[j] = (int32_t)i;
  }
  if (like_x) return;
  for (uint32_t j = 0; j < lhs->n; j++) pl->from[j] = (int32_t)j;
  pl->from[lhs->n] = -1;
  pl->kpos = lhs->n;
}

leir_expr *leir__stream_prefix_access(leir_program *out, const leir__stream_prefix *pl,
                                      uint32_t sym, uint8_t dt, uint8_t sc,
                                      const leir_expr *row, leir_expr *k) {
  leir_expr *e = leir__new_tensor(out, sym, (leir_dtype)dt, (leir_scope)sc, pl->rank);
  for (uint32_t j = 0; j < pl->rank; j++)
    e->kids[j] = pl->from[j] < 0 ? k : leir__copy_expr(out, out, row->kids[pl->from[j]]);
  return e;
}

static bool nest_writes(const leir_nest *n, uint32_t sym) {
  for (uint32_t k = 0; k < n->nitems; k++)
    if (n->items[k].nest ? nest_writes(n->items[k].nest, sym) : n->items[k].eq->lhs->sym == sym)
      return true;
  return false;
}

/* sym, written by top-level nest `own` only, used by no nest before it */
static bool own_tensor(const leir__sctx *c, uint32_t sym, uint32_t own, char *why, size_t cap) {
  if (c->known[sym]) {
    snprintf(why, cap, "%s is a signature variable (a prefix array changes its shape)",
             leir__name(c, sym));
    return false;
  }
  for (uint32_t t = 0; t < c->p->nnests; t++) {
    if (t == own) continue;
    if (nest_writes(c->p->nests[t], sym) || (t < own && nest_uses(c->p->nests[t], sym))) {
      snprintf(why, cap, "nest %u %s %s", t, t < own ? "uses" : "writes", leir__name(c, sym));
      return false;
    }
  }
  return true;
}

bool leir__stream_prefix_ok(const leir__sctx *c, const leir__stream_max *mx, uint32_t s,
                            bool online, char *why, size_t cap) {
  return own_tensor(c, mx->m, mx->t, why, cap) &&
         (!online || own_tensor(c, s, mx->t + 1, why, cap));
}

/* Can a value be -inf (NI_NEG) or +inf (NI_POS)? */
enum { NI_NEG = 1, NI_POS = 2, NI_BOTH = 3, NI_VISITING = 0x40, NI_DONE = 0x80 };

typedef struct inf_memo {
  const leir__sctx *c;
  uint8_t *state; /* by symbol */
  uint32_t nsym;
} inf_memo;

static unsigned inf_sym(inf_memo *m, uint32_t sym, unsigned depth);

static unsigned swap_inf(unsigned f) { return (f & NI_NEG ? NI_POS : 0) | (f & NI_POS ? NI_NEG : 0); }

/* a divisor proven nonzero from numbers and declared domains */
static bool nonzero(const leir__sctx *c, const leir_expr *e) {
  e = unparen(e);
  if (e->kind == LEIR_EXPR_NUMBER) return e->u.num->value != 0;
  leir_program *s = leir__program_new(2048);
  leir__alg *a = s ? leir__alg_new(s, 64) : NULL;
  leir_expr *copy = a ? leir__copy_expr(s, c->p, e) : NULL;
  bool ok = false;
  if (copy) {
    for (uint32_t i = 0; i < c->p->nsig; i++) {
      const leir__decl *d = &c->p->sig[i];
      uint32_t sym = leir__sym_find(s, leir__sym_name(c->p, d->sym), leir__sym_len(c->p, d->sym));
      if (sym == LEIR__NOSYM) continue;
      if (d->domain == LEIR_DOMAIN_POSITIVE) leir__alg_assume_positive(a, sym);
      else if (d->domain == LEIR_DOMAIN_VALUE) leir__alg_assume_range(a, sym, d->dom_a, d->dom_a);
      else if (d->domain == LEIR_DOMAIN_RANGE || d->domain == LEIR_DOMAIN_UNIFORM)
        leir__alg_assume_range(a, sym, d->dom_a, d->dom_b);
    }
    ok = leir__alg_nonzero(a, copy);
  }
  leir__alg_free(a);
  leir_program_free(s);
  return ok;
}

/* self: the left-hand tensor of the equation being read, whose read as an
 * operand of max (min) is its implicit initial value -inf (+inf) */
static unsigned inf_expr(inf_memo *m, const leir_expr *e, uint32_t self, unsigned depth) {
  if (depth > 200) return NI_BOTH;
  switch ((leir_expr_kind)e->kind) {
  case LEIR_EXPR_NUMBER: return isfinite(e->u.num->value) ? 0 : e->u.num->value < 0 ? NI_NEG : NI_POS;
  case LEIR_EXPR_INF: return NI_POS;
  case LEIR_EXPR_VAR:
  case LEIR_EXPR_COMPARE:
  case LEIR_EXPR_AND:
  case LEIR_EXPR_OR: return 0;
  case LEIR_EXPR_TENSOR: return e->sym == self ? 0 : inf_sym(m, e->sym, depth + 1);
  case LEIR_EXPR_PAREN: return inf_expr(m, e->kids[0], self, depth + 1);
  case LEIR_EXPR_NEG: return swap_inf(inf_expr(m, e->kids[0], self, depth + 1));
  case LEIR_EXPR_BINARY: {
    unsigned a = inf_expr(m, e->kids[0], self, depth + 1);
    unsigned b = inf_expr(m, e->kids[1], self, depth + 1);
    switch ((leir_op)e->op) {
    case LEIR_OP_ADD: return a | b;
    case LEIR_OP_SUB: return a | swap_inf(b);
    case LEIR_OP_MUL: return a | b ? NI_BOTH : 0;
    case LEIR_OP_DIV: return a | b || !nonzero(m->c, e->kids[1]) ? NI_BOTH : 0;
    case LEIR_OP_POW: {
      const leir_expr *p = unparen(e->kids[1]);
      return a | b || p->kind != LEIR_EXPR_NUMBER || p->u.num->value < 0 ? NI_BOTH : 0;
    }
    default: return a | b ? NI_BOTH : 0; /* // and % of finite values */
    }
  }
  case LEIR_EXPR_CALL: {
    unsigned any = 0, all = NI_BOTH;
    for (uint32_t i = 0; i < e->n; i++) {
      if (e->op == LEIR_OP_IF_THEN_ELSE && i == 0) continue; /* the condition */
      const leir_expr *k = unparen(e->kids[i]);
      unsigned f = k->kind == LEIR_EXPR_TENSOR && k->sym == self
                       ? (e->op == LEIR_OP_MAX ? NI_NEG : e->op == LEIR_OP_MIN ? NI_POS : 0)
                       : inf_expr(m, k, self, depth + 1);
      any |= f;
      all &= f;
    }
    switch ((leir_op)e->op) {
    case LEIR_OP_MAX: return (all & NI_NEG) | (any & NI_POS);
    case LEIR_OP_MIN: return (any & NI_NEG) | (all & NI_POS);
    case LEIR_OP_IF_THEN_ELSE: return any;
    case LEIR_OP_EXP: return NI_POS;                 /* overflow; never -inf */
    case LEIR_OP_LOG: return NI_NEG | (any & NI_POS); /* log(0) */
    case LEIR_OP_SQRT:
    case LEIR_OP_ABS: return any ? NI_POS : 0;
    case LEIR_OP_ERF: return 0;
    default: return NI_BOTH;
    }
  }
  }
  return NI_BOTH;
}

static unsigned inf_sym(inf_memo *m, uint32_t sym, unsigned depth) {
  if (sym >= m->nsym || depth > 200) return NI_BOTH;
  if (m->state[sym] & NI_DONE) return m->state[sym] & NI_BOTH;
  if (m->state[sym] & NI_VISITING) return 0; /* a cycle: induction */
  m->state[sym] = NI_VISITING;
  const leir__sctx *c = m->c;
  unsigned f = 0;
  bool written = false;
  for (uint32_t i = 0; i < c->nnests; i++) {
    const leir_nest *n = c->nests[i].nest;
    for (uint32_t k = 0; k < n->nitems; k++) {
      const leir_equation *eq = n->items[k].eq;
      if (!eq || eq->lhs->sym != sym) continue;
      written = true;
      f |= inf_expr(m, eq->rhs, sym, depth + 1);
    }
  }
  if (!written) /* an input: drawn from its domain, finite but a declared value */
    for (uint32_t i = 0; i < c->p->nsig; i++)
      if (c->p->sig[i].sym == sym && c->p->sig[i].domain == LEIR_DOMAIN_VALUE &&
          !isfinite(c->p->sig[i].dom_a))
        f |= c->p->sig[i].dom_a < 0 ? NI_NEG : NI_POS;
  m->state[sym] = (uint8_t)(NI_DONE | f);
  return f;
}

bool leir__stream_may_be_neg_inf(const leir__sctx *c, const leir_expr *x) {
  inf_memo m = {c, calloc(c->p->syms.count ? c->p->syms.count : 1, 1), c->p->syms.count};
  if (!m.state) return true;
  bool neg = inf_expr(&m, x, LEIR__NOSYM, 0) & NI_NEG;
  free(m.state);
  return neg;
}

static leir_expr *k_minus_1(leir_program *out, const leir__stream_prefix *pl) {
  return leir__mk_bin(out, LEIR_OP_SUB, leir__mk_var(out, pl->ksym), leir__mk_int(out, 1));
}

/* k-1<0 */
static leir_expr *first_k(leir_program *out, const leir__stream_prefix *pl) {
  leir_expr *e = leir__new_expr(out, LEIR_EXPR_COMPARE, LEIR_OP_NONE, 2);
  e->kids[0] = k_minus_1(out, pl);
  e->kids[1] = leir__mk_int(out, 0);
  e->u.cmp_ops[0] = LEIR_OP_LT;
  return e;
}

void leir__stream_prefix_scan(leir_program *out, const leir_equation *meq,
                              const leir__stream_prefix *pl, uint32_t t_sym, uint8_t t_dtype,
                              uint8_t t_scope, bool guard, leir_nest *into) {
  const leir_expr *ml = meq->lhs, *x = meq->rhs->kids[1];
#define MK_ (leir__stream_prefix_access(out, pl, ml->sym, ml->dtype, ml->scope, ml, leir__mk_var(out, pl->ksym)))
#define MK1_ (leir__stream_prefix_access(out, pl, ml->sym, ml->dtype, ml->scope, ml, k_minus_1(out, pl)))
#define TK_ (leir__stream_prefix_access(out, pl, t_sym, t_dtype, t_scope, ml, leir__mk_var(out, pl->ksym)))
#define TK1_ (leir__stream_prefix_access(out, pl, t_sym, t_dtype, t_scope, ml, k_minus_1(out, pl)))
#define X_ (leir__copy_expr(out, out, x))
  /* M_{..k..}=max(if_then_else(k-1<0,-inf,M_{..k-1..}),X) */
  leir__stream_set_eq(out, into, 0, MK_,
                      leir__stream_call2(out, LEIR_OP_MAX,
                                         leir__stream_ite(out, first_k(out, pl),
                                                          leir__stream_neg_inf(out), MK1_),
                                         X_));
  /* T_{..k..}=if_then_else(k-1<0,1,T_{..k-1..})
   *           *exp(if_then_else(k-1<0,-inf,M_{..k-1..})-M_{..k..})+exp(X-M_{..k..}) */
  leir_expr *scale = leir__stream_call1(
      out, LEIR_OP_EXP,
      leir__mk_bin(out, LEIR_OP_SUB,
                   leir__stream_ite(out, first_k(out, pl), leir__stream_neg_inf(out), MK1_), MK_));
  leir_expr *rhs = leir__mk_bin(
      out, LEIR_OP_ADD,
      leir__mk_bin(out, LEIR_OP_MUL,
                   leir__stream_ite(out, first_k(out, pl), leir__mk_int(out, 1), TK1_), scale),
      leir__stream_call1(out, LEIR_OP_EXP, leir__mk_bin(out, LEIR_OP_SUB, X_, MK_)));
  if (guard) /* if_then_else(M_{..k..}==-inf,0,...) */
    rhs = leir__stream_ite(out, leir__stream_is_neg_inf(out, MK_), leir__mk_int(out, 0), rhs);
  leir__stream_set_eq(out, into, 1, TK_, rhs);
#undef MK_
#undef MK1_
#undef TK_
#undef TK1_
#undef X_
}

typedef struct prefix_reads_ud {
  leir_program *out;
  const leir__stream_prefix *pl;
  uint32_t sym, new_sym;
  uint8_t dt, sc;
} prefix_reads_ud;

static int prefix_read_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  prefix_reads_ud *u = v->ud;
  const leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_TENSOR || e->sym != u->sym || e->n + 1 != u->pl->rank)
    return LEIR__VISIT_NEXT;
  *slot = leir__stream_prefix_access(u->out, u->pl, u->new_sym, u->dt, u->sc, e,
                                     leir__mk_int(u->out, u->pl->last));
  return LEIR__VISIT_SKIP;
}

void leir__stream_prefix_reads(leir_program *out, uint32_t from, const leir__stream_prefix *pl,
                               uint32_t sym, uint32_t new_sym, uint8_t dt, uint8_t sc) {
  prefix_reads_ud u = {out, pl, sym, new_sym, dt, sc};
  leir__visit v = LEIR__VISIT_INIT(prefix_read_node, &u);
  for (uint32_t t = from; t < out->nnests; t++) leir__visit_nest(&v, out->nests[t]);
}

bool leir__stream_prefix_cot(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps) {
  leir__cot_generic_facts(b, d);
  const leir_program *before, *after;
  leir__diff_programs(d, &before, &after);
  const leir__tok *nt = leir__ps_get(ps, LEIR__K_NEST, NULL);
  int64_t t;
  if (!nt || !leir__tok_int(nt, &t) || t < 0 || (uint64_t)t >= before->nnests ||
      (uint64_t)t >= after->nnests)
    return true;
  const leir_nest *src = before->nests[t], *scan = after->nests[t];
  if (!is_single_eq_nest(src)) return true;
  const leir_expr *m = src->items[0].eq->lhs;
  /* the reduction loop: the one M's subscript does not name */
  for (uint32_t k = 0; k < src->nloops; k++) {
    bool named = false;
    for (uint32_t j = 0; j < m->n; j++)
      named = named || (m->kids[j]->kind == LEIR_EXPR_VAR && m->kids[j]->sym == src->loops[k].sym);
    if (named) continue;
    leir__sb_puts(b, " (the prefix array");
    if (scan->nitems > 1) leir__sb_putc(b, 's');
    for (uint32_t i = 0; i < scan->nitems; i++) {
      if (!scan->items[i].eq) continue;
      leir__sb_puts(b, i ? " and " : " ");
      leir__print_expr(b, after, scan->items[i].eq->lhs);
    }
    leir__sb_printf(b,
                    " %s a value for each of the %lld iterations of the reduced loop %.*s: "
                    "%lld times the memory of one running value per row)",
                    scan->nitems > 1 ? "keep" : "keeps", (long long)src->loops[k].extent, (int)leir__sym_len(before, src->loops[k].sym),
                    leir__sym_name(before, src->loops[k].sym), (long long)src->loops[k].extent);
    break;
  }
  return true;
}

/* acc=native and lanes=L: what the accumulator costs in precision */
static void native_cot(leir__strbuf *b, const leir_program *before, const leir__pstep *ps) {
  const leir__tok *nt = leir__ps_get(ps, LEIR__K_NEST, NULL);
  int64_t t, lanes = 0;
  if (!nt || !leir__tok_int(nt, &t) || t < 0 || (uint64_t)t + 1 >= before->nnests) return;
  const leir_nest *sum = before->nests[t + 1];
  if (!is_single_eq_nest(sum)) return;
  const leir_expr *s = sum->items[0].eq->lhs;
  const char *dt = leir_dtype_name((leir_dtype)s->dtype);
  const leir__tok *lt = leir__ps_get(ps, LEIR__K_LANES, NULL);
  if (lt) leir__tok_int(lt, &lanes);
  leir__sb_printf(b, " (the running sum is kept in %s, the dtype of %.*s, as the reference keeps it: "
                  "each element costs a rounding of the sum in %s, and each growth of the running "
                  "maximum one more for the rescaling, where an f64 accumulator rounds to %s once, "
                  "at the end",
                  dt, (int)leir__sym_len(before, s->sym), leir__sym_name(before, s->sym), dt, dt);
  if (lanes > 1)
    leir__sb_printf(b, "; the row is reduced in %lld interleaved lanes, each with its own running "
                    "maximum and sum, combined once per row with one rescaling per lane, so the "
                    "lanes can run as vector lanes",
                    (long long)lanes);
  leir__sb_putc(b, ')');
}

bool leir__stream_cot(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps) {
  bool prefix = leir__ps_get(ps, LEIR__K_STATE, NULL) != NULL;
  bool native = leir__ps_get(ps, LEIR__K_ACC, NULL) != NULL;
  if (!prefix && !native) return false; /* the generic facts */
  if (prefix) leir__stream_prefix_cot(b, d, ps);
  else leir__cot_generic_facts(b, d);
  if (native) {
    const leir_program *before, *after;
    leir__diff_programs(d, &before, &after);
    native_cot(b, before, ps);
  }
  return true;
}

