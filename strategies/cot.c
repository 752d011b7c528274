/*
 * Chain-of-thought text (spec/strategies.md §4), built from the structural
 * diff of the program before and after a step:
 *   <definition> Under the given IR, <facts>. <benefit>
 * The facts quote the exact expressions, loops and tensors that the diff
 * shows changed; the step only selects the wording. The diff aligns the
 * top-level nests by their canonical text (longest common subsequence), and
 * a replaced nest is compared recursively to find the innermost nest whose
 * loops or items changed.
 */
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "error.h"

typedef struct side {
  const leir_program *p;
  uint32_t n;
  char **text; /* canonical text of each top-level nest */
} side;

typedef struct leir__diff {
  side b, a;
  uint32_t nrem, nadd;
  uint32_t *rem; /* before indices not in the common subsequence */
  uint32_t *add; /* after indices not in the common subsequence */
} diff;

static void side_free(side *s) {
  for (uint32_t i = 0; s->text && i < s->n; i++) free(s->text[i]);
  free(s->text);
}

static bool side_init(side *s, const leir_program *p) {
  s->p = p;
  s->n = p->nnests;
  s->text = calloc(s->n ? s->n : 1, sizeof *s->text);
  if (!s->text) return false;
  for (uint32_t i = 0; i < s->n; i++) {
    leir__strbuf b = LEIR__STRBUF_INIT;
    leir__print_nest(&b, p, p->nests[i], NULL);
    s->text[i] = leir__sb_finish(&b, NULL);
    if (!s->text[i]) return false;
  }
  return true;
}

/* The programs a diff compares (for the `.cot` hooks outside this file). */
void leir__diff_programs(const diff *d, const leir_program **before, const leir_program **after) {
  *before = d->b.p;
  *after = d->a.p;
}

static void diff_free(diff *d) {
  side_free(&d->b);
  side_free(&d->a);
  free(d->rem);
  free(d->add);
}

static bool diff_init(diff *d, const leir_program *before, const leir_program *after) {
  memset(d, 0, sizeof *d);
  if (!side_init(&d->b, before) || !side_init(&d->a, after)) return false;
  uint32_t n = d->b.n, m = d->a.n;
  uint32_t *L = calloc((size_t)(n + 1) * (m + 1), sizeof *L);
  d->rem = calloc(n ? n : 1, sizeof *d->rem);
  d->add = calloc(m ? m : 1, sizeof *d->add);
  if (!L || !d->rem || !d->add) {
    free(L);
    return false;
  }
#define AT(i, j) L[(size_t)(i) * (m + 1) + (j)]
  for (uint32_t i = n; i-- > 0;)
    for (uint32_t j = m; j-- > 0;)
      AT(i, j) = strcmp(d->b.text[i], d->a.text[j]) == 0
                     ? AT(i + 1, j + 1) + 1
                     : (AT(i + 1, j) > AT(i, j + 1) ? AT(i + 1, j) : AT(i, j + 1));
  uint32_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && strcmp(d->b.text[i], d->a.text[j]) == 0) {
      i++, j++;
    } else if (j < m && (i == n || AT(i, j + 1) >= AT(i + 1, j))) {
      d->add[d->nadd++] = j++;
    } else {
      d->rem[d->nrem++] = i++;
    }
  }
#undef AT
  free(L);
  return true;
}

/* ---- pieces quoted from the programs ------------------------------------ */

static void put_loops(leir__strbuf *b, const leir_program *p, const leir_nest *n) {
  leir__print_loops(b, p, n);
}

static void put_loop(leir__strbuf *b, const leir_program *p, const leir__loop *l) {
  leir__sb_printf(b, "%c^{%lld}_{%s=0}", leir__loop_kind_letters[l->kind], (long long)l->extent,
                  leir__sym_name(p, l->sym));
}

static bool same_loops(const leir_program *pb, const leir_nest *x, const leir_program *pa,
                       const leir_nest *y) {
  if (x->nloops != y->nloops) return false;
  for (uint32_t k = 0; k < x->nloops; k++) {
    const leir__loop *l = &x->loops[k], *r = &y->loops[k];
    if (l->kind != r->kind || l->extent != r->extent ||
        strcmp(leir__sym_name(pb, l->sym), leir__sym_name(pa, r->sym)) != 0)
      return false;
  }
  return true;
}

static bool same_eq(const leir_program *pb, const leir_equation *x, const leir_program *pa,
                    const leir_equation *y) {
  return leir__expr_equal(pb, x->lhs, pa, y->lhs) && leir__expr_equal(pb, x->rhs, pa, y->rhs);
}

/* The innermost nests of x / y whose loops or items differ. */
static void innermost(const leir_program *pb, const leir_nest **x, const leir_program *pa,
                      const leir_nest **y) {
  for (;;) {
    const leir_nest *u = *x, *v = *y;
    if (!same_loops(pb, u, pa, v) || u->nitems != v->nitems) return;
    const leir_nest *nu = NULL, *nv = NULL;
    for (uint32_t k = 0; k < u->nitems; k++) {
      bool eu = u->items[k].eq != NULL, ev = v->items[k].eq != NULL;
      if (eu != ev) return;
      if (eu) {
        if (!same_eq(pb, u->items[k].eq, pa, v->items[k].eq)) return;
        continue;
      }
      leir__strbuf s1 = LEIR__STRBUF_INIT, s2 = LEIR__STRBUF_INIT;
      leir__print_nest(&s1, pb, u->items[k].nest, NULL);
      leir__print_nest(&s2, pa, v->items[k].nest, NULL);
      bool same = s1.len == s2.len && (!s1.len || memcmp(s1.data, s2.data, s1.len) == 0);
      leir__sb_release(&s1);
      leir__sb_release(&s2);
      if (same) continue;
      if (nu) return; /* several nested nests differ */
      nu = u->items[k].nest;
      nv = v->items[k].nest;
    }
    if (!nu) return;
    *x = nu;
    *y = nv;
  }
}

/* Does top-level nest i of p define (LHS) a tensor named `name`? */
static const leir_equation *defining_eq(const leir_program *p, uint32_t i) {
  const leir_nest *n = p->nests[i];
  return n->nitems == 1 && n->items[0].eq ? n->items[0].eq : NULL;
}

static bool name_in_program(const leir_program *p, const char *name) {
  for (uint32_t i = 0; i < p->nnests; i++)
    if (leir__nest_uses_tensor_named(p, p->nests[i], name)) return true;
  return false;
}

static const char *scope_word(uint8_t sc) {
  return sc == LEIR_SCOPE_LOCAL ? "local" : sc == LEIR_SCOPE_SHARED ? "shared" : "global";
}

/* First tensor access that differs between two equally shaped trees. */
typedef struct tpair {
  const leir_expr *x, *y;
} tpair;

static bool first_diff_tensor(const leir_program *pb, const leir_expr *x, const leir_program *pa,
                              const leir_expr *y, tpair *out) {
  if (x->kind == LEIR_EXPR_TENSOR && y->kind == LEIR_EXPR_TENSOR &&
      strcmp(leir__sym_name(pb, x->sym), leir__sym_name(pa, y->sym)) == 0 &&
      !leir__expr_equal(pb, x, pa, y)) {
    /* report the innermost differing access */
    if (x->n == y->n)
      for (uint32_t k = 0; k < x->n; k++)
        if (first_diff_tensor(pb, x->kids[k], pa, y->kids[k], out)) return true;
    out->x = x;
    out->y = y;
    return true;
  }
  if (x->kind != y->kind || x->n != y->n) return false;
  for (uint32_t k = 0; k < x->n; k++)
    if (first_diff_tensor(pb, x->kids[k], pa, y->kids[k], out)) return true;
  return false;
}

static bool first_diff_in_nest(const leir_program *pb, const leir_nest *x, const leir_program *pa,
                               const leir_nest *y, tpair *out) {
  if (x->nitems != y->nitems) return false;
  for (uint32_t k = 0; k < x->nitems; k++) {
    if (x->items[k].nest && y->items[k].nest) {
      if (first_diff_in_nest(pb, x->items[k].nest, pa, y->items[k].nest, out)) return true;
    } else if (x->items[k].eq && y->items[k].eq) {
      if (first_diff_tensor(pb, x->items[k].eq->lhs, pa, y->items[k].eq->lhs, out) ||
          first_diff_tensor(pb, x->items[k].eq->rhs, pa, y->items[k].eq->rhs, out))
        return true;
    }
  }
  return false;
}

/* ---- the facts, per strategy --------------------------------------------- */

bool leir__cot_loop_facts(leir__strbuf *b, const diff *d, const leir__pstep *ps) {
  int s = ps->strategy;
  if (d->nrem != 1 || d->nadd != 1) return false;
  const leir_nest *x = d->b.p->nests[d->rem[0]], *y = d->a.p->nests[d->add[0]];
  innermost(d->b.p, &x, d->a.p, &y);
  const char *eb = d->b.text[d->rem[0]], *ea = d->a.text[d->add[0]];
  const char *verb = NULL;
  switch (s) {
    case LEIR__S_loop_reorder: verb = "reordered"; break;
    case LEIR__S_loop_tiling: verb = "tiled"; break;
    case LEIR__S_loop_split: verb = "split"; break;
    case LEIR__S_loop_fusion: verb = "fused"; break;
    default: break;
  }
  if (verb) {
    leir__sb_puts(b, "the loops ");
    put_loops(b, d->b.p, x);
    leir__sb_printf(b, " of the expression %s can be %s as the loops ", eb, verb);
    put_loops(b, d->a.p, y);
    leir__sb_printf(b, ", giving the expression %s", ea);
    return true;
  }
  /* annotations: one loop atom changes */
  if (x->nloops != y->nloops) return false;
  uint32_t k = 0;
  while (k < x->nloops && x->loops[k].kind == y->loops[k].kind &&
         strcmp(leir__sym_name(d->b.p, x->loops[k].sym), leir__sym_name(d->a.p, y->loops[k].sym)) ==
             0)
    k++;
  if (k == x->nloops) return false;
  const char *how = s == LEIR__S_loop_unrolling        ? "unrolled"
                    : s == LEIR__S_loop_parallelization ? "parallelized"
                    : s == LEIR__S_loop_vectorization   ? "vectorized"
                              : "bound to a GPU thread or block axis";
  leir__sb_puts(b, "the loop ");
  put_loop(b, d->b.p, &x->loops[k]);
  leir__sb_puts(b, " in the loops ");
  put_loops(b, d->b.p, x);
  leir__sb_printf(b, " of the expression %s can be %s as ", eb, how);
  put_loop(b, d->a.p, &y->loops[k]);
  leir__sb_puts(b, ", so the loops become ");
  put_loops(b, d->a.p, y);
  leir__sb_printf(b, " in the expression %s", ea);
  return true;
}

bool leir__cot_factorization_facts(leir__strbuf *b, const diff *d, const leir__pstep *ps) {
  (void)ps;
  if (d->nrem != 1 || d->nadd != 3) return false;
  leir__sb_printf(b,
                  "the reduction %s can be factorized into the partial reductions %s and %s, and "
                  "the expression %s combines them",
                  d->b.text[d->rem[0]], d->a.text[d->add[0]], d->a.text[d->add[1]],
                  d->a.text[d->add[2]]);
  return true;
}

/* The added nest whose single equation copies one tensor into another:
 * returns its index in d->add, or -1. */
static int copy_nest(const diff *d, bool lhs_new) {
  for (uint32_t k = 0; k < d->nadd; k++) {
    const leir_equation *eq = defining_eq(d->a.p, d->add[k]);
    if (!eq) continue;
    const leir_expr *t = lhs_new ? eq->lhs : eq->rhs;
    if (t->kind != LEIR_EXPR_TENSOR) continue;
    if (!name_in_program(d->b.p, leir__sym_name(d->a.p, t->sym))) return (int)k;
  }
  return -1;
}

static void put_expr(leir__strbuf *b, const leir_program *p, const leir_expr *e) {
  leir__print_expr(b, p, e);
}

bool leir__cot_cache_facts(leir__strbuf *b, const diff *d, const leir__pstep *ps) {
  (void)ps;
  if (d->nrem != 1 || d->nadd != 2) return false;
  int c = copy_nest(d, true);
  if (c >= 0 && defining_eq(d->a.p, d->add[c])->rhs->kind == LEIR_EXPR_TENSOR) {
    const leir_equation *eq = defining_eq(d->a.p, d->add[c]);
    int other = c == 0 ? 1 : 0;
    leir__sb_puts(b, "the variable ");
    put_expr(b, d->a.p, eq->rhs);
    leir__sb_printf(b, " in the expression %s can be read into %s memory as ",
                    d->b.text[d->rem[0]], scope_word(eq->lhs->scope));
    put_expr(b, d->a.p, eq->lhs);
    leir__sb_printf(b, " by the expression %s, and the expression becomes %s",
                    d->a.text[d->add[c]], d->a.text[d->add[other]]);
    return true;
  }
  c = copy_nest(d, false);
  if (c < 0) return false;
  const leir_equation *eq = defining_eq(d->a.p, d->add[c]);
  int other = c == 0 ? 1 : 0;
  leir__sb_printf(b, "the expression %s can compute its result in %s memory as ",
                  d->b.text[d->rem[0]], scope_word(eq->rhs->scope));
  put_expr(b, d->a.p, eq->rhs);
  leir__sb_printf(b, " in the expression %s, and write it back to ", d->a.text[d->add[other]]);
  put_expr(b, d->a.p, eq->lhs);
  leir__sb_printf(b, " by the expression %s", d->a.text[d->add[c]]);
  return true;
}

bool leir__cot_layout_facts(leir__strbuf *b, const diff *d, const leir__pstep *ps) {
  (void)ps;
  if (d->nrem != 1 || d->nadd != 2) return false;
  int c = copy_nest(d, true);
  if (c < 0) return false;
  const leir_equation *eq = defining_eq(d->a.p, d->add[c]);
  int other = c == 0 ? 1 : 0;
  leir__sb_puts(b, "the memory layout of the variable ");
  put_expr(b, d->a.p, eq->rhs);
  leir__sb_puts(b, " can be transformed into the variable ");
  put_expr(b, d->a.p, eq->lhs);
  leir__sb_printf(b, " by the expression %s, and the expression %s becomes %s", d->a.text[d->add[c]],
                  d->b.text[d->rem[0]], d->a.text[d->add[other]]);
  return true;
}

bool leir__cot_precompute_facts(leir__strbuf *b, const diff *d, const leir__pstep *ps) {
  (void)ps;
  if (d->nrem != 1 || d->nadd != 2) return false;
  int c = copy_nest(d, true);
  if (c < 0) return false;
  int other = c == 0 ? 1 : 0;
  /* the entry as the expression wrote it, and the table read replacing it */
  tpair t = {NULL, NULL};
  if (!first_diff_in_nest(d->b.p, d->b.p->nests[d->rem[0]], d->a.p, d->a.p->nests[d->add[other]], &t) ||
      t.x->n != t.y->n)
    return false;
  uint32_t k = 0;
  while (k < t.x->n && leir__expr_equal(d->b.p, t.x->kids[k], d->a.p, t.y->kids[k])) k++;
  if (k == t.x->n) return false;
  leir__sb_puts(b, "the index ");
  put_expr(b, d->b.p, t.x->kids[k]);
  leir__sb_printf(b, " in the expression %s can be precomputed as the variable ", d->b.text[d->rem[0]]);
  put_expr(b, d->a.p, t.y->kids[k]);
  leir__sb_printf(b, " by the expression %s, and the expression becomes %s", d->a.text[d->add[c]],
                  d->a.text[d->add[other]]);
  return true;
}

static bool storage_facts(leir__strbuf *b, const diff *d, bool scope) {
  if (d->nrem == 0 || d->nrem != d->nadd) return false;
  tpair t = {NULL, NULL};
  for (uint32_t k = 0; k < d->nrem && !t.x; k++)
    first_diff_in_nest(d->b.p, d->b.p->nests[d->rem[k]], d->a.p, d->a.p->nests[d->add[k]], &t);
  if (!t.x) return false;
  const char *nexpr = d->nrem == 1 ? "expression that uses it" : "expressions that use it";
  if (scope) {
    leir__sb_printf(b, "the intermediate variable %s^{%s,%c} can be set in %s memory as %s^{%s,%c}",
                    leir__sym_name(d->b.p, t.x->sym), leir_dtype_name((leir_dtype)t.x->dtype),
                    "gsl"[t.x->scope], scope_word(t.y->scope), leir__sym_name(d->a.p, t.y->sym),
                    leir_dtype_name((leir_dtype)t.y->dtype), "gsl"[t.y->scope]);
    leir__sb_printf(b, " in the %u %s", d->nrem, nexpr);
    return true;
  }
  leir__sb_printf(b, "the memory layout of the intermediate variable %s can change from ",
                  leir__sym_name(d->b.p, t.x->sym));
  put_expr(b, d->b.p, t.x);
  leir__sb_puts(b, " to ");
  put_expr(b, d->a.p, t.y);
  leir__sb_printf(b, "; all its accesses in the %u %s are updated consistently", d->nrem, nexpr);
  return true;
}

bool leir__cot_scope_facts(leir__strbuf *b, const diff *d, const leir__pstep *ps) {
  (void)ps;
  return storage_facts(b, d, true);
}

bool leir__cot_storage_layout_facts(leir__strbuf *b, const diff *d, const leir__pstep *ps) {
  (void)ps;
  return storage_facts(b, d, false);
}

static void generic_facts(leir__strbuf *b, const diff *d) {
  if (!d->nrem && !d->nadd) {
    leir__sb_puts(b, "the program does not change");
    return;
  }
  if (d->nrem) {
    leir__sb_puts(b, "the expressions ");
    for (uint32_t k = 0; k < d->nrem; k++)
      leir__sb_printf(b, "%s%s", k ? " and " : "", d->b.text[d->rem[k]]);
    leir__sb_puts(b, d->nadd ? " become " : " are removed");
  } else {
    leir__sb_puts(b, "the program gains ");
  }
  for (uint32_t k = 0; k < d->nadd; k++)
    leir__sb_printf(b, "%s%s", k ? " and " : "", d->a.text[d->add[k]]);
}

void leir__cot_generic_facts(leir__strbuf *b, const diff *d) { generic_facts(b, d); }

leir_status leir__cot(leir__strbuf *b, const leir_program *before, const leir_program *after,
                      const leir__pstep *ps) {
  diff d;
  if (!diff_init(&d, before, after)) {
    diff_free(&d);
    return leir__error_nomem();
  }
  const leir__strategy *s = &leir__strategies[ps->strategy];
  leir__sb_puts(b, s->info.definition);
  leir__sb_puts(b, " Under the given IR, ");
  size_t mark = b->len;
  bool ok = s->impl && s->impl->cot && s->impl->cot(b, &d, ps);
  if (!ok) {
    b->len = mark;
    generic_facts(b, &d);
  }
  leir__sb_puts(b, ". ");
  leir__sb_puts(b, s->info.benefit);
  diff_free(&d);
  return b->failed ? leir__error_nomem() : LEIR_OK;
}

/* ---- the math strategies (23-34) ------------------------------------------- */

/* How each math strategy changes the quoted part (the step only selects
 * the wording; the parts quoted come from the diff). */
static const char *math_verb(int s) {
  switch (s) {
    case LEIR__S_factorization: return "factored as";
    case LEIR__S_expand_factorization: return "expanded as";
    case LEIR__S_cancellation:
      return "simplified, by cancelling a common factor of its numerator and denominator that is "
             "proven non-zero, to";
    case LEIR__S_expand_cancellation:
      return "split, taking the multiple of the denominator out of the numerator, into";
    case LEIR__S_apart: return "decomposed into the partial fractions";
    case LEIR__S_together: return "combined over a common denominator as";
    case LEIR__S_powsimp: return "combined into fewer powers and exponentials as";
    case LEIR__S_expand_powsimp:
      return "split, where no factor can overflow before the whole, into the product";
    case LEIR__S_expand_log:
      return "split, since the operands are proven positive, into the sum of logarithms";
    case LEIR__S_logsimp:
      return "combined, since the arguments are proven positive and their product stays within "
             "the dtype's range, into the single logarithm";
    case LEIR__S_collect: return "collected around a common factor as";
    case LEIR__S_expand_collect: return "distributed as";
    case LEIR__S_exponential_split:
      return "split around an existing value y, where one factor is exactly exp(y-y) = 1 or the "
             "exponents are proven within the dtype's range (no inf*0), into";
    case LEIR__S_multiplicative_split:
      return "divided and multiplied by an existing value y that is proven non-zero and bounded, "
             "so that x/y cannot overflow, giving";
    case LEIR__S_additive_split:
      return "shifted by an existing value y that is proven finite, subtracting and adding it "
             "back, giving";
    default: return NULL;
  }
}

/* the smallest pair of sub-expressions that holds every difference of x, y */
static void smallest_diff(const leir_program *pb, const leir_expr **x, const leir_program *pa,
                          const leir_expr **y) {
  for (unsigned depth = 0; depth < 400; depth++) {
    const leir_expr *u = *x, *v = *y;
    if (u->kind != v->kind || u->op != v->op || u->n != v->n || u->kind == LEIR_EXPR_TENSOR ||
        u->kind == LEIR_EXPR_NUMBER)
      return;
    uint32_t ndiff = 0, at = 0;
    for (uint32_t k = 0; k < u->n; k++)
      if (!leir__expr_equal(pb, u->kids[k], pa, v->kids[k])) ndiff++, at = k;
    if (ndiff != 1) return;
    *x = u->kids[at];
    *y = v->kids[at];
  }
}

bool leir__cot_math_facts(leir__strbuf *b, const diff *d, const leir__pstep *ps) {
  const char *verb = math_verb(ps->strategy);
  if (!verb || d->nrem != 1 || d->nadd != 1) return false;
  const leir_nest *x = d->b.p->nests[d->rem[0]], *y = d->a.p->nests[d->add[0]];
  innermost(d->b.p, &x, d->a.p, &y);
  if (!same_loops(d->b.p, x, d->a.p, y) || x->nitems != y->nitems) return false;
  const leir_equation *eb = NULL, *ea = NULL;
  for (uint32_t k = 0; k < x->nitems; k++) {
    if (!x->items[k].eq || !y->items[k].eq || same_eq(d->b.p, x->items[k].eq, d->a.p, y->items[k].eq))
      continue;
    if (eb) return false; /* several equations changed */
    eb = x->items[k].eq;
    ea = y->items[k].eq;
  }
  if (!eb || !leir__expr_equal(d->b.p, eb->lhs, d->a.p, ea->lhs)) return false;
  const leir_expr *u = eb->rhs, *v = ea->rhs;
  smallest_diff(d->b.p, &u, d->a.p, &v);
  while (u->kind == LEIR_EXPR_PAREN) u = u->kids[0];
  while (v->kind == LEIR_EXPR_PAREN) v = v->kids[0];
  leir__sb_printf(b, "in the expression %s, the part ", d->b.text[d->rem[0]]);
  put_expr(b, d->b.p, u);
  leir__sb_puts(b, " of the right-hand side of ");
  put_expr(b, d->b.p, eb->lhs);
  leir__sb_printf(b, " can be %s ", verb);
  put_expr(b, d->a.p, v);
  leir__sb_printf(b, ", giving the expression %s", d->a.text[d->add[0]]);
  return true;
}
