/*
 * tensor_concat_to_fuse_operators (4, graph): two consecutive nests that
 * compute the same operator on different inputs become one: the inputs are
 * concatenated along one loop, the operator runs once over the summed
 * extent, and the two outputs are copied back out of the result.
 *
 * Sites: every top-level nest N with a next nest N+1, both one equation
 * directly under their loops (no nested nest), each a plain definition
 * (the right side does not read the output) or an accumulation
 * X = X op ... / max(X, ...) with an implicit initialization, and every
 * loop position k such that
 *  - the nests have the same number of loops, with equal extents, kinds
 *    and (bound loops) names at every position but k;
 *  - N+1 does not read N's output;
 *  - the two right sides are the same operator: equal trees once N+1's
 *    loop variables are renamed positionally to N's, except that tensor
 *    accesses whose subscript uses loop k may name other tensors (the
 *    concatenated operands; the same access of N always pairs with the
 *    same access of N+1, with the same dtype); the two outputs have equal
 *    subscripts;
 *  - k is used only as one plain subscript entry of the output and of
 *    every concatenated access (never as a value), every concatenated
 *    access stays inside its buffer over the full loop ranges (the copies
 *    run without the equation's guards), and the summed extent keeps a
 *    bound loop within its GPU axis limits (k may not be a V loop).
 * The reference picks the positions whose extents differ (position 0 when
 * none do) and, when several differ, concatenates along all of them at
 * once; libleir offers every single position that passes. Parameters:
 * `nest=N loop=k` (k named as in N; the site spans N and N+1) and
 * optionally `perm=p1,...`, the order of the copies (every other
 * permutation of 2 to 4 concatenated operands; the reference's is a hash
 * order).
 *
 * The rewrite (5 nests replace the two, the reference's form): N's loops:
 * C_i{s} = A_i{s} for every concatenated operand; N+1's loops:
 * C_i{s', k -> k+V1} = B_i{s'}; N's loops with k of extent V1+V2:
 * O{so} = N's right side with A_i -> C_i; N's loops: X{so} = O{so};
 * N+1's loops: Y{so'} = O{so', k -> k+V1}. In the copy and write-back
 * nests a B loop no written subscript uses gets extent 1 and a P, V or B
 * loop that does not pin the written element becomes L. Exact: every element
 * is computed by the same operations in the same order.
 */
#include <stdlib.h>

#include "kit.h"
#include "visit.h"

#define LEIR__TCONCAT_MAX_PERM 4
#define LEIR__TCONCAT_MAX_ACC 32

typedef struct pairing {
  const leir__sctx *c;
  const leir_nest *n1, *n2;
  uint32_t l;                 /* the concatenated loop position */
  uint32_t x1, x2;            /* the outputs */
  uint32_t nacc;
  const leir_expr *a[LEIR__TCONCAT_MAX_ACC]; /* operands of N */
  const leir_expr *b[LEIR__TCONCAT_MAX_ACC]; /* their partners in N+1 */
  const char *why;
} pairing;

static int loop_of(const leir_nest *n, uint32_t sym) {
  for (uint32_t j = 0; j < n->nloops; j++)
    if (n->loops[j].sym == sym) return (int)j;
  return -1;
}

/* Equal trees, N+1's loop variables mapped positionally to N's; tensors
 * compared by symbol when `syms`. */
static bool same_tree(const pairing *p, const leir_expr *a, const leir_expr *b, bool syms) {
  if (a->kind != b->kind || a->op != b->op || a->n != b->n) return false;
  switch (a->kind) {
  case LEIR_EXPR_NUMBER:
    if (a->u.num->len != b->u.num->len ||
        memcmp(a->u.num->lexeme, b->u.num->lexeme, a->u.num->len) != 0)
      return false;
    break;
  case LEIR_EXPR_VAR: {
    int ja = loop_of(p->n1, a->sym), jb = loop_of(p->n2, b->sym);
    if (ja != jb || (ja < 0 && a->sym != b->sym)) return false;
    break;
  }
  case LEIR_EXPR_TENSOR:
    if ((syms && a->sym != b->sym) || a->dtype != b->dtype) return false;
    break;
  case LEIR_EXPR_COMPARE:
    for (uint32_t i = 0; i + 1 < a->n; i++)
      if (a->u.cmp_ops[i] != b->u.cmp_ops[i]) return false;
    break;
  default:
    break;
  }
  for (uint32_t i = 0; i < a->n; i++)
    if (!same_tree(p, a->kids[i], b->kids[i], syms)) return false;
  return true;
}

/* Does loop variable k appear in t's subscript only as one plain entry? */
static bool plain_entry(const leir_expr *t, uint32_t k) {
  uint32_t uses = 0;
  for (uint32_t d = 0; d < t->n; d++)
    if (leir__expr_uses_var(t->kids[d], k)) {
      if (t->kids[d]->kind != LEIR_EXPR_VAR || leir__expr_has_tensor(t->kids[d])) return false;
      uses++;
    }
  return uses == 1;
}

/* Walks both right sides together; false (p->why) when they differ. */
static bool pair_rhs(pairing *p, const leir_expr *a, const leir_expr *b, bool in_sub) {
  uint32_t k = p->n1->loops[p->l].sym;
  if (a->kind == LEIR_EXPR_VAR && a->sym == k && !in_sub) {
    p->why = "the loop is used as a value";
    return false;
  }
  if (a->kind == LEIR_EXPR_TENSOR && !in_sub) {
    if (a->sym == p->x1 || b->sym == p->x2) {
      if (!(a->sym == p->x1 && b->sym == p->x2 && same_tree(p, a, b, false))) {
        p->why = "the accumulations differ";
        return false;
      }
      return true;
    }
    if (leir__expr_uses_var(a, k)) {
      if (!plain_entry(a, k) || !same_tree(p, a, b, false)) {
        p->why = "a concatenated operand does not use the loop as one plain entry, or its "
                 "partner's subscript or dtype differs";
        return false;
      }
      for (uint32_t i = 0; i < p->nacc; i++)
        if (leir__expr_equal(p->c->p, p->a[i], p->c->p, a)) {
          if (!leir__expr_equal(p->c->p, p->b[i], p->c->p, b)) {
            p->why = "one operand of the first nest pairs with two of the second";
            return false;
          }
          return true;
        }
      if (p->nacc == LEIR__TCONCAT_MAX_ACC) {
        p->why = "too many operands";
        return false;
      }
      p->a[p->nacc] = a;
      p->b[p->nacc++] = b;
      return true;
    }
    if (!same_tree(p, a, b, true)) {
      p->why = "an operand that does not use the loop differs between the nests";
      return false;
    }
    return true;
  }
  if (a->kind == LEIR_EXPR_TENSOR || a->kind == LEIR_EXPR_VAR || a->kind == LEIR_EXPR_NUMBER) {
    if (!same_tree(p, a, b, true)) {
      p->why = "the operands differ";
      return false;
    }
    return true;
  }
  if (a->kind != b->kind || a->op != b->op || a->n != b->n) {
    p->why = "the operators differ";
    return false;
  }
  if (a->kind == LEIR_EXPR_COMPARE)
    for (uint32_t i = 0; i + 1 < a->n; i++)
      if (a->u.cmp_ops[i] != b->u.cmp_ops[i]) {
        p->why = "the operators differ";
        return false;
      }
  for (uint32_t i = 0; i < a->n; i++)
    if (!pair_rhs(p, a->kids[i], b->kids[i], in_sub)) return false;
  return true;
}

/* Plain definition or implicit accumulation X = X op ... / max(X, ...). */
static bool form_ok(const leir__sctx *c, const leir_nest *n) {
  if (n->nitems != 1 || !n->items[0].eq || n->nloops == 0 || n->nloops > 64) return false;
  const leir_equation *eq = n->items[0].eq;
  for (uint32_t d = 0; d < eq->lhs->n; d++)
    if (leir__expr_has_tensor(eq->lhs->kids[d])) return false;
  uint32_t idx = eq->id < c->a->nids ? c->a->eq_index[eq->id] : LEIR__NONE;
  if (idx == LEIR__NONE) return false;
  const leir_expr *r = eq->rhs;
  const leir_expr *self = NULL;
  if (c->a->eqs[idx].init != LEIR__INIT_NONE) {
    if ((r->kind == LEIR_EXPR_BINARY || (r->kind == LEIR_EXPR_CALL && r->n == 2 &&
                                         (r->op == LEIR_OP_MAX || r->op == LEIR_OP_MIN))) &&
        leir__expr_equal(c->p, r->kids[0], c->p, eq->lhs))
      self = r->kids[0];
    else
      return false;
  }
  /* no other read of the output */
  const leir_expr *rest = self ? r->kids[1] : r;
  if (leir__expr_reads_tensor(rest, eq->lhs->sym, NULL)) return false;
  return true;
}

static bool in_range(const leir__sctx *c, const leir__nref *r, const leir_expr *e) {
  uint32_t b = e->id < c->a->nids ? c->a->expr_buffer[e->id] : LEIR__NONE;
  if (b == LEIR__NONE) return false;
  for (uint32_t d = 0; d < e->n; d++) {
    int64_t lo, hi;
    if (!leir__entry_range(c, r, e->kids[d], &lo, &hi) || lo < 0 ||
        (d < c->a->buffers[b].rank && hi >= c->a->buffers[b].shape[d]))
      return false;
  }
  return true;
}

static const leir__nref *top_ref(const leir__sctx *c, uint32_t t) {
  for (uint32_t i = 0; i < c->nnests; i++)
    if (c->nests[i].depth == 1 && c->nests[i].path[0] == t) return &c->nests[i];
  return NULL;
}

/* 0 when position l of nests t, t+1 is a site (pairing in *p). */
static int check_axis(const leir__sctx *c, uint32_t t, uint32_t l, pairing *p, char *why,
                      size_t cap) {
  const leir_nest *n1 = c->p->nests[t], *n2 = c->p->nests[t + 1];
  memset(p, 0, sizeof *p);
  p->c = c;
  p->n1 = n1;
  p->n2 = n2;
  p->l = l;
  const leir_equation *e1 = n1->items[0].eq, *e2 = n2->items[0].eq;
  p->x1 = e1->lhs->sym;
  p->x2 = e2->lhs->sym;
  for (uint32_t j = 0; j < n1->nloops; j++) {
    const leir__loop *a = &n1->loops[j], *b = &n2->loops[j];
    if (a->kind != b->kind || (a->kind == LEIR_LOOP_BOUND && a->sym != b->sym) ||
        (j != l && a->extent != b->extent)) {
      snprintf(why, cap, "the nests' loops differ at position %u", j);
      return LEIR__R_TCONCAT_FORM;
    }
  }
  uint32_t k = n1->loops[l].sym;
  const char *kn = leir__sym_name(c->p, k);
  if (!plain_entry(e1->lhs, k) || !same_tree(p, e1->lhs, e2->lhs, false)) {
    snprintf(why, cap, "the outputs' subscripts differ or do not use %s as one plain entry", kn);
    return LEIR__R_TCONCAT_AXIS;
  }
  if (!pair_rhs(p, e1->rhs, e2->rhs, false)) {
    snprintf(why, cap, "%s", p->why);
    return strstr(p->why, "loop") ? LEIR__R_TCONCAT_AXIS : LEIR__R_TCONCAT_FORM;
  }
  const leir__loop *lp = &n1->loops[l];
  int64_t sum = lp->extent + n2->loops[l].extent;
  if (lp->kind == LEIR_LOOP_VECTORIZED || (lp->kind == LEIR_LOOP_UNROLLED && sum > 1024)) {
    snprintf(why, cap, "loop %s is a V loop or would unroll more than 1024 iterations", kn);
    return LEIR__R_TCONCAT_AXIS;
  }
  if (lp->kind == LEIR_LOOP_BOUND) {
    const char *w = NULL;
    leir__axis ax = leir__axis_of(kn);
    if (ax != LEIR__AXIS_NONE && !leir__axis_fits(c->p, n1, ax, sum, l, &w)) {
      snprintf(why, cap, "bound loop %s of extent %lld: %s", kn, (long long)sum, w ? w : "");
      return LEIR__R_TCONCAT_AXIS;
    }
  }
  const leir__nref *r1 = top_ref(c, t), *r2 = top_ref(c, t + 1);
  for (uint32_t i = 0; i < p->nacc; i++)
    if (!r1 || !r2 || !in_range(c, r1, p->a[i]) || !in_range(c, r2, p->b[i])) {
      snprintf(why, cap, "a concatenated operand may leave its buffer without the guards");
      return LEIR__R_TCONCAT_AXIS;
    }
  return 0;
}

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (r->depth != 1 || leir__skip_nest(c, r)) continue;
    uint32_t t = r->path[0];
    if (t + 1 >= c->p->nnests) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_GRAPH_LAST_NEST,
                   "nest %u is the last nest; there is no next nest to concatenate with", t);
      continue;
    }
    const leir_nest *n1 = c->p->nests[t], *n2 = c->p->nests[t + 1];
    if (!form_ok(c, n1) || !form_ok(c, n2) || n1->nloops != n2->nloops) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_TCONCAT_FORM,
                   "nests %u and %u are not single equations (plain definitions or implicitly "
                   "initialized accumulations) with as many loops",
                   t, t + 1);
      continue;
    }
    if (leir__expr_reads_tensor(n2->items[0].eq->rhs, n1->items[0].eq->lhs->sym, NULL) ||
        leir__expr_tensor_in_subscript(n2->items[0].eq->lhs, n1->items[0].eq->lhs->sym)) {
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_GRAPH_DEPENDENCE,
                   "nest %u reads %s, which nest %u writes", t + 1,
                   leir__name(c, n1->items[0].eq->lhs->sym), t);
      continue;
    }
    for (uint32_t l = 0; l < n1->nloops && leir__more(c); l++) {
      pairing p;
      char why[256];
      why[0] = '\0';
      int rule = check_axis(c, t, l, &p, why, sizeof why);
      if (rule) {
        LEIR__REJECT(c, leir__site_loop(c, r, l), (leir__rule)rule, "%s", why);
        continue;
      }
      const char *ln = leir__loop_name(c, r, l);
      leir__emit(c, LEIR_EXACT, "nest=%s loop=%s", r->label, ln);
      if (p.nacc < 2 || p.nacc > LEIR__TCONCAT_MAX_PERM) continue;
      uint32_t pm[LEIR__TCONCAT_MAX_PERM];
      for (uint32_t q = 0; q < p.nacc; q++) pm[q] = q;
      while (leir__more(c) && leir__next_perm(pm, p.nacc)) {
        char perm[LEIR__TCONCAT_MAX_PERM * 4];
        leir__format_list(perm, sizeof perm, pm, p.nacc);
        leir__emit(c, LEIR_EXACT, "nest=%s loop=%s perm=%s", r->label, ln, perm);
      }
    }
  }
}

/* ---- the rewrite ------------------------------------------------------------------ */

static leir_nest *loops_of(leir_program *out, const leir_nest *n, uint32_t nitems) {
  leir_nest *m = leir__new_nest(out, n->nloops, nitems);
  for (uint32_t j = 0; j < n->nloops; j++) m->loops[j] = n->loops[j];
  return m;
}

/* k -> k+v in the plain entry of tensor node t (in place). */
static void shift(leir_program *out, leir_expr *t, uint32_t k, int64_t v) {
  for (uint32_t d = 0; d < t->n; d++)
    if (t->kids[d]->kind == LEIR_EXPR_VAR && t->kids[d]->sym == k)
      t->kids[d] = leir__mk_bin(out, LEIR_OP_ADD, leir__mk_var(out, k), leir__mk_int(out, v));
}

static leir_expr *retag(leir_program *out, const leir_program *src, const leir_expr *t,
                        uint32_t sym) {
  leir_expr *e = leir__copy_expr(out, src, t);
  e->sym = sym;
  e->scope = LEIR_SCOPE_GLOBAL;
  return e;
}

typedef struct repl {
  const leir__sctx *c;
  const pairing *p;
  leir_program *out;
  const uint32_t *csym;
  uint32_t o;
} repl;

static int repl_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  repl *rp = v->ud;
  leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_TENSOR) return LEIR__VISIT_NEXT;
  if (e->sym == rp->p->x1) {
    e->sym = rp->o;
    e->scope = LEIR_SCOPE_GLOBAL;
    return LEIR__VISIT_SKIP;
  }
  for (uint32_t i = 0; i < rp->p->nacc; i++)
    if (leir__expr_equal(rp->c->p, rp->p->a[i], rp->out, e)) {
      e->sym = rp->csym[i];
      e->scope = LEIR_SCOPE_GLOBAL;
      return LEIR__VISIT_SKIP;
    }
  return LEIR__VISIT_SKIP;
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  if (!r || r->depth != 1 || r->path[0] + 1 >= c->p->nnests) return LEIR_ERR_INTERNAL;
  const leir__tok *lt = leir__ps_get(ps, LEIR__K_LOOP, NULL);
  int l = lt ? leir__ps_loop(c, r, lt) : -1;
  if (l < 0) return LEIR_ERR_INTERNAL;
  uint32_t t = r->path[0];
  pairing p;
  char why[256];
  if (check_axis(c, t, (uint32_t)l, &p, why, sizeof why) != 0) return LEIR_ERR_INTERNAL;
  uint32_t order[LEIR__TCONCAT_MAX_ACC];
  for (uint32_t i = 0; i < p.nacc; i++) order[i] = i;
  uint32_t np = 0;
  const leir__tok *pt = leir__ps_get(ps, LEIR__K_PERM, &np);
  if (pt) {
    if (np != p.nacc) return LEIR_ERR_INTERNAL;
    for (uint32_t i = 0; i < np; i++) {
      int64_t v;
      if (!leir__tok_int(&pt[i], &v) || v < 0 || v >= (int64_t)np) return LEIR_ERR_INTERNAL;
      order[i] = (uint32_t)v;
    }
  }
  const leir_nest *n1 = p.n1, *n2 = p.n2;
  uint32_t k1 = n1->loops[l].sym, k2 = n2->loops[l].sym;
  int64_t V1 = n1->loops[l].extent, V2 = n2->loops[l].extent;
  uint32_t csym[LEIR__TCONCAT_MAX_ACC];
  uint64_t fresh = c->next_tensor;
  for (uint32_t i = 0; i < p.nacc; i++) csym[order[i]] = leir__tensor_sym(out, fresh++);
  uint32_t o = leir__tensor_sym(out, fresh++);
  leir_nest *made[5];
  uint32_t nmade = 0;
  if (p.nacc) {
    leir_nest *m1 = loops_of(out, n1, p.nacc), *m2 = loops_of(out, n2, p.nacc);
    for (uint32_t q = 0; q < p.nacc; q++) {
      uint32_t i = order[q];
      m1->items[q].eq = leir__new_equation(out, retag(out, c->p, p.a[i], csym[i]),
                                           leir__copy_expr(out, c->p, p.a[i]));
      leir_expr *lhs2 = retag(out, c->p, p.b[i], csym[i]);
      shift(out, lhs2, k2, V1);
      m2->items[q].eq = leir__new_equation(out, lhs2, leir__copy_expr(out, c->p, p.b[i]));
    }
    leir__copy_nest_kinds(m1);
    leir__copy_nest_kinds(m2);
    made[nmade++] = m1;
    made[nmade++] = m2;
  }
  const leir_equation *e1 = n1->items[0].eq, *e2 = n2->items[0].eq;
  leir_nest *f = loops_of(out, n1, 1);
  f->loops[l].extent = V1 + V2;
  leir_expr *rhs = leir__copy_expr(out, c->p, e1->rhs);
  repl rp = {c, &p, out, csym, o};
  leir__visit v = LEIR__VISIT_INIT(repl_node, &rp);
  leir__visit_expr(&v, &rhs);
  f->items[0].eq = leir__new_equation(out, retag(out, c->p, e1->lhs, o), rhs);
  made[nmade++] = f;
  leir_nest *w1 = loops_of(out, n1, 1), *w2 = loops_of(out, n2, 1);
  w1->items[0].eq = leir__new_equation(out, leir__copy_expr(out, c->p, e1->lhs),
                                       retag(out, c->p, e1->lhs, o));
  leir_expr *src2 = retag(out, c->p, e2->lhs, o);
  shift(out, src2, k2, V1);
  w2->items[0].eq = leir__new_equation(out, leir__copy_expr(out, c->p, e2->lhs), src2);
  leir__copy_nest_kinds(w1);
  leir__copy_nest_kinds(w2);
  made[nmade++] = w1;
  made[nmade++] = w2;
  (void)k1;
  out->nests[t] = made[0];
  out->nests[t + 1] = made[1];
  for (uint32_t i = 2; i < nmade; i++)
    if (!leir__program_insert_nest(out, t + i, made[i])) return LEIR_ERR_NOMEM;
  return LEIR_OK;
}

const leir__strategy_impl leir__tensor_concat_to_fuse_operators = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP) | LEIR__KEY(LEIR__K_PERM),
    .required = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP),
    .enumerate = enumerate,
    .apply = apply,
    .cot = NULL,
    .span = 2,
};
