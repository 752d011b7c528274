/*
 * The split strategies' sites, values y, numerical conditions and rewrites
 * (split_sites.h). One walk serves enumeration and apply: apply finds the
 * site again from its path and the y from `loop=` / `tensor=`, with the
 * same search that enumerated it.
 *
 * This file: sites, values y, enumeration and apply; the numerical
 * conditions are proven in split_proofs.c (split_proofs.h).
 */
#include "split_sites.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "algebra.h"
#include "error.h"
#include "split_proofs.h"
#include "streaming.h"


static bool nest_writes(const leir_nest *n, uint32_t sym) {
  for (uint32_t k = 0; k < n->nitems; k++)
    if (n->items[k].eq && n->items[k].eq->lhs->sym == sym) return true;
  return false;
}

static bool same_loops(const leir_nest *a, const leir_nest *b) {
  if (a->nloops != b->nloops) return false;
  for (uint32_t i = 0; i < a->nloops; i++) {
    bool found = false;
    for (uint32_t j = 0; j < b->nloops && !found; j++)
      found = a->loops[i].sym == b->loops[j].sym && a->loops[i].extent == b->loops[j].extent;
    if (!found) return false;
  }
  return true;
}

/* the first tensor read in e outside subscripts */
static const leir_expr *first_read(const leir_expr *e, unsigned depth) {
  if (depth > 400) return NULL;
  if (e->kind == LEIR_EXPR_TENSOR) return e;
  for (uint32_t i = 0; i < e->n; i++) {
    const leir_expr *r = first_read(e->kids[i], depth + 1);
    if (r) return r;
  }
  return NULL;
}

static uint32_t count_reads(const leir_expr *e, uint32_t sym, unsigned depth) {
  if (depth > 400) return 2;
  if (e->kind == LEIR_EXPR_TENSOR) return e->sym == sym;
  uint32_t n = 0;
  for (uint32_t i = 0; i < e->n; i++) n += count_reads(e->kids[i], sym, depth + 1);
  return n;
}

/* the values y of a site, in order: the shift, then earlier outputs */
static uint32_t collect_ys(const leir__sctx *c, const site *s, yval *ys) {
  uint32_t n = 0;
  const leir_nest *nest = s->r->nest;
  const leir_expr *z = s->z;
  /* The relaxed pass (leir_ground's gated pass) keeps only what apply
   * needs to build y; whether the result is right is then the verifier's
   * question: Z written in the nest, a site under an if_then_else, k in
   * another entry of Z, a loop of extent 1 (y is the boundary constant)
   * and a compound last subscript E (y = if_then_else(E-1<0,B,Z_{..,E-1}),
   * the reference's shift of a strided or padded read). */
  bool relaxed = c->split_relaxed;
  if (z && is_float(z->dtype) && z->n >= 1 &&
      (relaxed || (!s->under_ite && !nest_writes(nest, z->sym)))) {
    const leir_expr *last = strip(z->kids[z->n - 1]);
    for (uint32_t k = 0; last->kind == LEIR_EXPR_VAR && k < nest->nloops; k++) {
      if (nest->loops[k].sym != last->sym) continue;
      if (nest->loops[k].extent < 2 && !relaxed) break; /* y would be the constant B: no split */
      bool alone = true;
      for (uint32_t j = 0; j + 1 < z->n && alone && !relaxed; j++)
        alone = !leir__expr_uses_var(z->kids[j], last->sym);
      if (alone) ys[n++] = (yval){.shift = true, .k = k, .z = z};
      break;
    }
    if (relaxed && last->kind != LEIR_EXPR_VAR) {
      /* named by the innermost loop E uses, or for a constant E (Z_{..,0}:
       * y is the boundary B) by the nest's innermost loop: a site has one
       * last subscript, so one shift, and the name only has to find it */
      uint32_t k = nest->nloops;
      for (uint32_t j = nest->nloops; j-- > 0 && k == nest->nloops;)
        if (leir__expr_uses_var(last, nest->loops[j].sym)) k = j;
      if (k == nest->nloops && nest->nloops) k = nest->nloops - 1;
      if (k < nest->nloops) ys[n++] = (yval){.shift = true, .k = k, .z = z, .compound = true};
    }
  }
  for (uint32_t t = 0; t < s->r->path[0] && n < LEIR__SPLIT_MAX_Y; t++) {
    const leir_nest *w = c->p->nests[t];
    if (!same_loops(w, nest)) continue;
    for (uint32_t k = 0; k < w->nitems && n < LEIR__SPLIT_MAX_Y; k++) {
      const leir_equation *eq = w->items[k].eq;
      if (!eq || !is_float(eq->lhs->dtype) || (!relaxed && nest_writes(nest, eq->lhs->sym)))
        continue;
      bool dup = false;
      for (uint32_t j = 0; j < n && !dup; j++) dup = !ys[j].shift && ys[j].acc->sym == eq->lhs->sym;
      if (!dup) ys[n++] = (yval){.shift = false, .acc = eq->lhs};
    }
  }
  return n;
}

/* ---- enumeration ------------------------------------------------------------ */

/* ---- values that reach a comparison ---------------------------------------------
 * A rounding in such a value can flip the comparison (argmax: A>=D with D
 * the maximum of rounded values), which a reassociating candidate must not
 * do: the tensors read in a comparison, and every tensor their writers
 * read (a fixpoint over the program). */
/* Is child i of e a place where an absolute error of the value is not
 * bounded in the result (fragile): a comparison, a subtraction, a log or sqrt argument
 * (log(0) = -inf where the value is tiny), an exp argument (the absolute
 * error becomes a relative one of the result), a divisor, a power? */
static bool fragile_child(const leir_expr *e, uint32_t i, bool fragile, bool skip_cmp) {
  if (e->kind == LEIR_EXPR_COMPARE) return !skip_cmp;
  if (!fragile) return false;
  if (e->kind == LEIR_EXPR_CALL)
    return e->op == LEIR_OP_LOG || e->op == LEIR_OP_SQRT || e->op == LEIR_OP_EXP;
  /* a subtraction: P - x with P close to x cancels, and the split's
   * absolute error ulp(max(|x|, |y|)) becomes a relative error of the
   * difference without bound (GroupNorm's F - mean, divided by a small
   * deviation: LEIR_TEST_SPLITS_ALL=1 found it MISMATCH in f64) */
  if (e->kind == LEIR_EXPR_BINARY)
    return e->op == LEIR_OP_POW || e->op == LEIR_OP_SUB ||
           ((e->op == LEIR_OP_DIV || e->op == LEIR_OP_FLOORDIV || e->op == LEIR_OP_MOD) && i == 1);
  return false;
}

static void mark_reads(const leir_expr *e, uint8_t *set, uint32_t nsym, bool inside, bool *grew,
                       bool fragile, bool skip_cmp, unsigned depth) {
  if (depth > 400) return;
  if (e->kind == LEIR_EXPR_TENSOR) {
    if (inside && e->sym < nsym && !set[e->sym]) set[e->sym] = 1, *grew = true;
    return;
  }
  for (uint32_t i = 0; i < e->n; i++)
    mark_reads(e->kids[i], set, nsym, inside || fragile_child(e, i, fragile, skip_cmp), grew,
               fragile, skip_cmp, depth + 1);
}

/* Is the site under a fragile place of its own equation? */
static bool under_fragile(const leir_equation *eq, const uint32_t *path, uint32_t depth,
                          bool fragile) {
  const leir_expr *n = eq->rhs;
  for (uint32_t k = 1; k < depth; k++) {
    if (fragile_child(n, path[k], fragile, false)) return true;
    n = n->kids[path[k]];
  }
  return false;
}

/* The generic mode's fragile place: an operand of a subtraction that is a
 * numerator or a power base, (F - mean)/sqrt(var + eps) and (F - mean)**2:
 * a normalization, where the cancellation of F - mean meets a small
 * divisor and any rounding of F or mean becomes a MISMATCH (GroupNorm with
 * groups of 2; LEIR_TEST_SPLITS_GENERIC_ALL=1). `num`: e is a numerator or
 * a power base. */
static bool norm_child(const leir_expr *e, bool num) {
  /* also a log or sqrt argument: log(R-D+D) is log(0) = -inf for a tiny R
   * (a log-sum-exp's sum of exps) and a large y */
  if (e->kind == LEIR_EXPR_CALL && (e->op == LEIR_OP_LOG || e->op == LEIR_OP_SQRT)) return true;
  return num && e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_SUB;
}

static bool norm_num(const leir_expr *e, uint32_t i, bool num) {
  if (e->kind == LEIR_EXPR_PAREN) return num;
  return e->kind == LEIR_EXPR_BINARY && (e->op == LEIR_OP_DIV || e->op == LEIR_OP_POW) && i == 0;
}

static void mark_norm(const leir_expr *e, uint8_t *set, uint32_t nsym, bool inside, bool num,
                      bool *grew, unsigned depth) {
  if (depth > 400) return;
  if (e->kind == LEIR_EXPR_TENSOR) {
    if (inside && e->sym < nsym && !set[e->sym]) set[e->sym] = 1, *grew = true;
    return;
  }
  for (uint32_t i = 0; i < e->n; i++)
    mark_norm(e->kids[i], set, nsym, inside || norm_child(e, num), norm_num(e, i, num), grew,
              depth + 1);
}

static bool under_norm(const leir_equation *eq, const uint32_t *path, uint32_t depth) {
  const leir_expr *n = eq->rhs;
  bool num = false;
  for (uint32_t k = 1; k < depth; k++) {
    if (norm_child(n, num)) return true;
    num = norm_num(n, path[k], num);
    n = n->kids[path[k]];
  }
  return false;
}

/* Marks, in one equation, the tensors a flow reaches from its right-hand
 * side; `flows` says whether the equation's own left-hand tensor is marked. */
typedef void (*flow_mark)(const leir_equation *eq, uint8_t *set, uint32_t nsym, bool flows,
                          bool *grew, const void *arg);

/* The least set of symbols closed under `mark` over every equation of the
 * program (at most one round per symbol). Caller frees; NULL on NOMEM. */
static uint8_t *flow_fixpoint(const leir__sctx *c, flow_mark mark, const void *arg) {
  uint32_t nsym = c->p->syms.count;
  uint8_t *set = calloc(nsym ? nsym : 1, 1);
  if (!set) return NULL;
  bool grew = true;
  for (uint32_t round = 0; grew && round <= nsym; round++) {
    grew = false;
    for (uint32_t i = 0; i < c->nnests; i++) {
      const leir_nest *n = c->nests[i].nest;
      for (uint32_t k = 0; k < n->nitems; k++) {
        const leir_equation *eq = n->items[k].eq;
        if (!eq) continue;
        bool flows = eq->lhs->sym < nsym && set[eq->lhs->sym];
        mark(eq, set, nsym, flows, &grew, arg);
      }
    }
  }
  return set;
}

static void norm_mark(const leir_equation *eq, uint8_t *set, uint32_t nsym, bool flows,
                      bool *grew, const void *arg) {
  (void)arg;
  mark_norm(eq->rhs, set, nsym, flows, false, grew, 0);
}

static uint8_t *norm_set(const leir__sctx *c) { return flow_fixpoint(c, norm_mark, NULL); }

/* The tensors whose values reach a comparison (fragile: also a log, sqrt,
 * divisor or power), by symbol. */
typedef struct compared_flow {
  bool fragile, discrete_only;
} compared_flow;

static void compared_mark(const leir_equation *eq, uint8_t *set, uint32_t nsym, bool flows,
                          bool *grew, const void *arg) {
  const compared_flow *f = arg;
  mark_reads(eq->rhs, set, nsym, flows, grew, f->fragile,
             f->discrete_only && is_float(eq->lhs->dtype), 0);
}

static uint8_t *compared_set(const leir__sctx *c, bool fragile, bool discrete_only) {
  compared_flow f = {fragile, discrete_only};
  return flow_fixpoint(c, compared_mark, &f);
}

typedef struct walk {
  leir__split_kind kind;
  const uint8_t *compared; /* by symbol */
  /* by symbol: reaching a comparison whose outcome is discrete (it decides
   * an integer or bool value: argmax's index), refused even in the generic
   * mode; a float selection (ReLU, clamp) is continuous at its switch */
  const uint8_t *compared_cmp;
  const uint8_t *gfragile; /* reaching a normalization (norm_set), by symbol */
  proof pf;
  bool generic; /* LEIR_CANDIDATES_GENERIC_VALUES */
  uint32_t emitted; /* in the current nest */
  uint32_t emitted_assumed; /* V_ASSUMED ones, in the current nest */
  const leir__nref *nest;
} walk;

static bool under_ite(const leir_equation *eq, const leir__xsite *x) {
  const leir_expr *n = eq->rhs;
  for (uint32_t k = 1; k < x->depth; k++) {
    if (n->kind == LEIR_EXPR_CALL && n->op == LEIR_OP_IF_THEN_ELSE) return true;
    n = n->kids[x->path[k]];
  }
  return false;
}

static void emit_y(leir__sctx *c, walk *w, const site *s, const leir__xsite *x, const yval *y) {
  char path[LEIR__MAX_XPATH * 11];
  leir__xpath_format(x, path, sizeof path);
  for (int form = 0; form < (w->kind == LEIR__SPLIT_EXP ? 2 : 1) && leir__more(c); form++) {
    verdict v = leir__split_check(&w->pf, w->kind, s, y, form == 1);
    const char *why = NULL;
    if (v == V_UNPROVEN && (w->generic || c->mode == LEIR__MODE_EXPLAIN)) {
      why = leir__split_structural(&w->pf, w->kind, s, y, form == 1);
      if (!why && w->generic) v = V_ASSUMED;
    }
    if (w->pf.st != LEIR_OK) return;
    if (v == V_NO_SITE) continue; /* form=div of an exponent that is no difference */
    /* the relaxed pass: every structural split, left to the verifier */
    if (c->split_relaxed && v == V_UNPROVEN) v = V_ASSUMED;
    const char *fs = w->kind != LEIR__SPLIT_EXP ? "" : form ? " form=div" : " form=mul";
    char what[96];
    if (y->shift)
      snprintf(what, sizeof what, "loop=%.40s", leir__loop_name(c, s->r, y->k));
    else
      snprintf(what, sizeof what, "tensor=%.40s", leir__name(c, y->acc->sym));
    if (v == V_UNPROVEN) {
      if (c->mode == LEIR__MODE_EXPLAIN) {
        snprintf(c->site, sizeof c->site, "nest=%.40s %.50s eq=%u expr=%.100s%s", s->r->label, what,
                 s->item, path, fs);
        if (why)
          leir__reject(c, c->site, LEIR__R_SPLIT_STRUCTURAL, "%s", why);
        else
          leir__reject(c, c->site, LEIR__R_SPLIT_UNPROVEN, "%s (assumed, not proven, with "
                       "LEIR_CANDIDATES_GENERIC_VALUES / --generic-values)",
                       w->kind == LEIR__SPLIT_ADD   ? "y is not proven finite"
                       : w->kind == LEIR__SPLIT_MUL ? "y is not proven non-zero and bounded so "
                                                      "that x/y cannot overflow"
                                                    : "no factor is proven exp(0) and the "
                                                      "exponents are not proven in range");
      }
      continue;
    }
    bool fragile = w->kind == LEIR__SPLIT_ADD;
    /* a rounding that flips a comparison is wrong by construction; the
     * other places are a rounding judgement, not a value assumption, which
     * the generic mode leaves to the verifier */
    /* refused by the generic mode too (gref): a comparison deciding an
     * integer or bool value, and for #38/#39 a value reaching a
     * normalization's difference (norm_set), where the split's rounding
     * error (absolute for #39, relative to x for #38) cancels to a MISMATCH
     * (found by LEIR_TEST_SPLITS_GENERIC_ALL=1) */
    uint32_t lhs = s->eq->lhs->sym;
    bool gref = w->compared_cmp[lhs] ||
                (w->kind != LEIR__SPLIT_EXP &&
                 (w->gfragile[lhs] || under_norm(s->eq, x->path, x->depth)));
    bool pref = w->compared[lhs] || under_fragile(s->eq, x->path, x->depth, fragile);
    /* a proven candidate that only the rounding judgement refuses is an
     * assumed one in the generic mode */
    if (v == V_CLOSE && w->generic && pref && !gref &&
        !leir__split_structural(&w->pf, w->kind, s, y, form == 1))
      v = V_ASSUMED;
    if (w->pf.st != LEIR_OK) return;
    if (v != V_EXACT && !c->split_relaxed && (v == V_ASSUMED ? gref : pref)) {
      if (c->mode == LEIR__MODE_EXPLAIN) { /* the step's own site: apply quotes it */
        snprintf(c->site, sizeof c->site, "nest=%.40s %.50s eq=%u expr=%.100s%s", s->r->label, what,
                 s->item, path, fs);
        leir__reject(c, c->site, LEIR__R_SPLIT_COMPARED, "%s (%s)",
                     fragile ? "the value reaches a comparison, subtraction, log, sqrt or exp "
                               "argument, divisor or power, where the split's absolute rounding "
                               "error is not bounded"
                             : "the value reaches a comparison, where a rounding can change the "
                               "outcome",
                     gref ? "refused even with LEIR_CANDIDATES_GENERIC_VALUES: a discrete "
                            "comparison or a normalization's (x - mean)/std, where verifying "
                            "showed such splits MISMATCH"
                          : "listed with LEIR_CANDIDATES_GENERIC_VALUES / --generic-values, its "
                            "accuracy assumed and left to the verifier");
      }
      continue;
    }
    /* the assumed candidates have a cap of their own, so that the proven
     * ones are the same with and without the flag */
    if (v == V_ASSUMED) {
      if (w->emitted_assumed >= LEIR__SPLIT_MAX_NEST_ASSUMED) continue;
      w->emitted_assumed++;
    } else {
      if (w->emitted >= LEIR__SPLIT_MAX_NEST) {
        LEIR__REJECT(c, leir__site_expr(c, x), LEIR__R_SPLIT_CAP,
                     "nest %s already has %u split candidates", s->r->label, LEIR__SPLIT_MAX_NEST);
        return;
      }
      w->emitted++;
    }
    if (y->shift)
      leir__emit(c, v == V_EXACT ? LEIR_EXACT : LEIR_REASSOCIATING, "nest=%s loop=%s eq=%u expr=%s%s",
                 s->r->label, leir__loop_name(c, s->r, y->k), s->item, path, fs);
    else
      leir__emit(c, v == V_EXACT ? LEIR_EXACT : LEIR_REASSOCIATING,
                 "nest=%s tensor=%s eq=%u expr=%s%s", s->r->label, leir__name(c, y->acc->sym),
                 s->item, path, fs);
  }
}

/* Is x a site? Fills s. */
static bool site_of(const leir__xsite *x, leir__split_kind kind, site *s) {
  const leir_equation *eq = x->eq.eq;
  if (x->path[0] != 1 || x->in_subscript) return false;
  const leir_expr *e = x->e;
  s->r = x->eq.r;
  s->item = x->eq.item;
  s->eq = eq;
  s->x = e;
  s->under_ite = under_ite(eq, x);
  if (kind == LEIR__SPLIT_EXP) {
    if (e->kind != LEIR_EXPR_CALL || e->op != LEIR_OP_EXP || e->n != 1) return false;
    s->z = first_read(e->kids[0], 0);
    return true;
  }
  if (e->kind != LEIR_EXPR_TENSOR || !is_float(e->dtype) || e->sym == eq->lhs->sym) return false;
  s->z = e;
  return true;
}

static bool on_node(leir__sctx *c, const leir__xsite *x, void *ud) {
  walk *w = ud;
  site s;
  if (!site_of(x, w->kind, &s)) return true;
  if (w->kind != LEIR__SPLIT_EXP && !c->split_relaxed &&
      count_reads(x->eq.eq->rhs, s.x->sym, 0) != 1) {
    LEIR__REJECT(c, leir__site_expr(c, x), LEIR__R_SPLIT_REUSED,
                 "%s is read more than once on the right-hand side", leir__name(c, s.x->sym));
    return true;
  }
  yval ys[LEIR__SPLIT_MAX_Y];
  uint32_t n = collect_ys(c, &s, ys);
  if (n == 0)
    LEIR__REJECT(c, leir__site_expr(c, x), LEIR__R_SPLIT_NO_Y,
                 "no shiftable read and no earlier output over the same loops");
  for (uint32_t i = 0; i < n && leir__more(c) && w->pf.st == LEIR_OK; i++) emit_y(c, w, &s, x, &ys[i]);
  if (w->pf.st != LEIR_OK) {
    c->status = w->pf.st;
    return false;
  }
  return leir__more(c);
}

static bool on_equation(leir__sctx *c, const leir__eqsite *s, void *ud) {
  walk *w = ud;
  if (w->nest != s->r) {
    w->nest = s->r;
    w->emitted = 0;
    w->emitted_assumed = 0;
  }
  if (s->r->depth != 1 || s->r->has_nested) {
    LEIR__REJECT(c, leir__site_eq(c, s), LEIR__R_SPLIT_NEST,
                 "the equation is not directly in a top-level nest without nested nests");
    return true;
  }
  if (!is_float(s->eq->lhs->dtype)) {
    LEIR__REJECT(c, leir__site_eq(c, s), LEIR__R_MATH_DTYPE, "%s is computed in an integer dtype",
                 leir__name(c, s->eq->lhs->sym));
    return true;
  }
  leir__each_subexpr(c, s, on_node, ud);
  return leir__more(c);
}

void leir__split_enumerate(leir__sctx *c, leir__split_kind kind) {
  finite_memo fm = {.c = c, .nsym = c->p->syms.count};
  fm.state = calloc(fm.nsym ? fm.nsym : 1, 1);
  if (!fm.state) {
    c->status = LEIR_ERR_NOMEM;
    return;
  }
  uint8_t *compared = compared_set(c, kind == LEIR__SPLIT_ADD, false);
  uint8_t *compared_cmp = compared_set(c, false, true);
  uint8_t *gfragile = norm_set(c);
  if (!compared || !compared_cmp || !gfragile) {
    free(gfragile);
    free(compared);
    free(compared_cmp);
    free(fm.state);
    c->status = LEIR_ERR_NOMEM;
    return;
  }
  generic_memo gm = {.c = c, .nsym = fm.nsym};
  gm.state[G_INF] = calloc(fm.nsym ? fm.nsym : 1, 1);
  gm.state[G_ZERO] = calloc(fm.nsym ? fm.nsym : 1, 1);
  gm.state[G_BIG] = calloc(fm.nsym ? fm.nsym : 1, 1);
  gm.state[G_BIGX] = calloc(fm.nsym ? fm.nsym : 1, 1);
  gm.state[G_NORM] = calloc(fm.nsym ? fm.nsym : 1, 1);
  if (gm.state[G_INF] && gm.state[G_ZERO] && gm.state[G_BIG] && gm.state[G_BIGX] &&
      gm.state[G_NORM]) {
    walk w = {.kind = kind,
              .compared = compared,
              .compared_cmp = compared_cmp,
              .gfragile = gfragile,
              .pf = {.c = c, .fm = &fm, .gm = &gm, .st = LEIR_OK},
              .generic = (c->o.flags & LEIR_CANDIDATES_GENERIC_VALUES) != 0};
    leir__each_equation(c, on_equation, &w);
  } else {
    c->status = LEIR_ERR_NOMEM;
  }
  free(gm.state[G_INF]);
  free(gm.state[G_ZERO]);
  free(gm.state[G_BIG]);
  free(gm.state[G_BIGX]);
  free(gm.state[G_NORM]);
  free(compared_cmp);
  free(gfragile);
  free(compared);
  free(fm.state);
}

/* ---- apply -------------------------------------------------------------------- */

static leir_expr *build_y(leir_program *out, const leir__sctx *c, const site *s, const yval *y,
                          int64_t boundary) {
  if (!y->shift) return leir__copy_expr(out, c->p, y->acc);
  uint32_t ksym = s->r->nest->loops[y->k].sym;
  /* the shifted entry: k-1, or E-1 for a compound subscript E */
  const leir_expr *last = strip(y->z->kids[y->z->n - 1]);
  leir_expr *prev = leir__copy_expr(out, c->p, y->z);
  prev->kids[prev->n - 1] = leir__mk_bin(
      out, LEIR_OP_SUB, y->compound ? leir__copy_expr(out, c->p, last) : leir__mk_var(out, ksym),
      leir__mk_int(out, 1));
  leir_expr *cond = leir__new_expr(out, LEIR_EXPR_COMPARE, LEIR_OP_NONE, 2);
  cond->kids[0] = leir__mk_bin(
      out, LEIR_OP_SUB, y->compound ? leir__copy_expr(out, c->p, last) : leir__mk_var(out, ksym),
      leir__mk_int(out, 1));
  cond->kids[1] = leir__mk_int(out, 0);
  cond->u.cmp_ops[0] = LEIR_OP_LT;
  return leir__stream_ite(out, cond, leir__mk_int(out, boundary), prev);
}

/* a copy of u (of c->p) in out with the node t1 replaced by `with` */
static leir_expr *replace_node(leir_program *out, const leir_program *p, const leir_expr *u,
                               const leir_expr *t1, leir_expr *with, unsigned depth) {
  if (u == t1) return with;
  if (depth > 400 || u->kind == LEIR_EXPR_TENSOR) return leir__copy_expr(out, p, u);
  leir_expr *e = leir__copy_expr(out, p, u);
  for (uint32_t i = 0; i < u->n; i++) e->kids[i] = replace_node(out, p, u->kids[i], t1, with, depth + 1);
  return e;
}

leir_status leir__split_apply(leir__sctx *c, const leir__pstep *ps, leir_program *out,
                              leir__split_kind kind) {
  const leir__nref *r = leir__ps_nest(c, ps);
  leir__eqsite es;
  if (!r || !leir__ps_eq(c, r, ps, &es)) return LEIR_ERR_INTERNAL;
  leir_expr **orig = leir__ps_expr_slot((leir_nest *)r->nest, es.item, ps);
  leir_nest *m = leir__nest_at(out, r->path, r->depth);
  leir_expr **slot = m ? leir__ps_expr_slot(m, es.item, ps) : NULL;
  if (!orig || !slot) return LEIR_ERR_INTERNAL;
  /* the site again, as enumerate saw it */
  leir__xsite x = {.eq = es, .e = *orig, .depth = 0};
  const leir__tok *et = leir__ps_get(ps, LEIR__K_EXPR, NULL);
  for (uint32_t i = 0; i < et->len && x.depth < LEIR__MAX_XPATH;) {
    uint32_t j = i, v = 0;
    while (j < et->len && et->s[j] != '.') v = v * 10 + (uint32_t)(et->s[j++] - '0');
    x.path[x.depth++] = v;
    i = j + 1;
  }
  site s;
  if (!site_of(&x, kind, &s)) return LEIR_ERR_INTERNAL;
  yval ys[LEIR__SPLIT_MAX_Y];
  uint32_t n = collect_ys(c, &s, ys);
  const leir__tok *lt = leir__ps_get(ps, LEIR__K_LOOP, NULL);
  const leir__tok *tt = leir__ps_get(ps, LEIR__K_TENSOR, NULL);
  const yval *y = NULL;
  for (uint32_t i = 0; i < n && !y; i++) {
    if (ys[i].shift && lt && leir__tok_eq(lt, leir__loop_name(c, r, ys[i].k))) y = &ys[i];
    if (!ys[i].shift && tt && leir__tok_eq(tt, leir__name(c, ys[i].acc->sym))) y = &ys[i];
  }
  if (!y) return LEIR_ERR_INTERNAL;
  const leir_expr *e = *orig;
  leir_expr *res;
  if (kind == LEIR__SPLIT_ADD) {
    res = leir__mk_bin(out, LEIR_OP_ADD,
                       leir__mk_bin(out, LEIR_OP_SUB, leir__copy_expr(out, c->p, e),
                                    build_y(out, c, &s, y, 0)),
                       build_y(out, c, &s, y, 0));
  } else if (kind == LEIR__SPLIT_MUL) {
    res = leir__mk_bin(out, LEIR_OP_MUL,
                       leir__mk_bin(out, LEIR_OP_DIV, leir__copy_expr(out, c->p, e),
                                    build_y(out, c, &s, y, 1)),
                       build_y(out, c, &s, y, 1));
  } else {
    const leir__tok *ft = leir__ps_get(ps, LEIR__K_FORM, NULL);
    const leir_expr *u = e->kids[0];
    if (ft && leir__tok_eq(ft, "div")) {
      const leir_expr *su = strip(u);
      if (su->kind != LEIR_EXPR_BINARY || su->op != LEIR_OP_SUB) return LEIR_ERR_INTERNAL;
      leir_expr *num = leir__stream_call1(
          out, LEIR_OP_EXP,
          leir__mk_bin(out, LEIR_OP_SUB, leir__copy_expr(out, c->p, su->kids[0]),
                       build_y(out, c, &s, y, 0)));
      leir_expr *den = leir__stream_call1(
          out, LEIR_OP_EXP,
          leir__mk_bin(out, LEIR_OP_SUB, leir__copy_expr(out, c->p, su->kids[1]),
                       build_y(out, c, &s, y, 0)));
      res = leir__mk_bin(out, LEIR_OP_DIV, num, den);
    } else {
      bool more;
      const leir_expr *t1 = leir__split_first_term(u, &more);
      leir_expr *f1 = leir__stream_call1(
          out, LEIR_OP_EXP,
          leir__mk_bin(out, LEIR_OP_SUB, leir__copy_expr(out, c->p, t1), build_y(out, c, &s, y, 0)));
      leir_expr *rest = replace_node(out, c->p, u, t1, build_y(out, c, &s, y, 0), 0);
      res = leir__mk_bin(out, LEIR_OP_MUL, f1, leir__stream_call1(out, LEIR_OP_EXP, rest));
    }
  }
  *slot = res;
  return LEIR_OK;
}
