/*
 * Sites shared by the math strategies (#23-#34): the arithmetic regions of
 * float equations, each rewritten by one lib/algebra.h rewrite.
 *
 * A region root is a node of a right-hand side, outside subscripts, that is
 * arithmetic (+ - * / **, unary minus, parentheses; `calls` adds calls) and
 * whose parent is not arithmetic: the right side itself, a call argument,
 * or R in an accumulation `X op R` / `R/X` (X = the left-hand tensor; the
 * accumulation form, which the implicit initialization relies on, is kept).
 * Regions that read the left-hand tensor are skipped (a scan or an
 * accumulation would change), and so are equations that compute in an
 * integer dtype (// and % and truncation are not field operations).
 *
 * The algebra runs in flat mode: call arguments are regions of their own,
 * so a region rewrite never reaches into them.
 *
 * A region is a candidate when the rewrite succeeds and its result differs
 * from the region modulo commutativity and associativity (leir__ac_hash);
 * `accept`, when set, decides further. Steps: `<name> nest=N eq=K expr=P`
 * (`<name> nest=N tensor=X eq=K expr=P` for rewrite_x), class
 * reassociating.
 */
#ifndef LEIR_STRATEGIES_MATH_SITES_H
#define LEIR_STRATEGIES_MATH_SITES_H

#include "algebra.h"
#include "kit.h"

typedef struct leir__math_spec {
  /* the rewrite: a new expression in the context's program, or NULL */
  leir_expr *(*rewrite)(leir__alg *a, const leir_expr *e);
  /* optional: accept the rewrite of `before` into `after` (same program) */
  bool (*accept)(const leir_program *p, const leir_expr *before, const leir_expr *after);
  /* or, per tensor X read in the region (outside subscripts, first-read
   * order; x = the first read): steps get `tensor=X` */
  leir_expr *(*rewrite_x)(leir__alg *a, const leir_expr *e, const leir_expr *x);
  /* or: the rewrite told whether multiplying through by the region's
   * denominators is safe (leir__math_safe_denominators on the region in
   * the input program) */
  leir_expr *(*rewrite_dens)(leir__alg *a, const leir_expr *e, bool dens_safe);
  bool calls;         /* calls (exp, log, ...) may be region roots too */
  uint32_t max_terms; /* term limit of the algebra (0: 64) */
} leir__math_spec;

void leir__math_enumerate(leir__sctx *c, const leir__math_spec *spec);
leir_status leir__math_apply(leir__sctx *c, const leir__pstep *ps, leir_program *out,
                             const leir__math_spec *spec);
/* Number of nodes of e (parentheses not counted). */
uint32_t leir__math_size(const leir_expr *e);
/* Number of divisions by a non-constant in e. */
uint32_t leir__math_divisions(const leir_expr *e);
/* Whether region e adds fractions: a + or - (outside calls and subscripts)
 * with a division by a non-constant below it, so that bringing e over one
 * denominator multiplies the other terms through (F*((A-C)/s)+G, C*(1+K/M)). */
bool leir__math_adds_fractions(const leir_expr *e);
/* Whether multiplying the rest of region e (of program p) through by its
 * denominators (together, cancellation's one-fraction form) adds no
 * overflow beyond that of a polynomial rewrite: every non-constant
 * denominator is built from numbers, + - * / integer powers and the calls
 * sqrt, abs, max, min, erf (whose value is at most polynomial in their
 * arguments), parts with proven finite bounds (leir__alg_bounds: a sigmoid
 * 1/(1+exp(-x)) lies in [0, 1]; a quotient of intermediates defined at
 * the same index point whose definitions' quotient is bounded: Mish's
 * (exp(D)-exp(-D))/(exp(D)+exp(-D)) in [-1, 1]), inputs, and intermediates whose
 * definitions in p are built the same way (followed to their equations). exp, log and the
 * rest are refused, also behind an intermediate: 1/(1+exp(C))+E over one
 * denominator is (1+E+E*exp(C))/(1+exp(C)) = inf/inf = NaN for C > 709
 * where the original is E, and K/M-I with M = exp(D)+exp(-D) becomes
 * (K-I*M)/M, inf for D near 709. */
bool leir__math_safe_denominators(const leir_program *p, const leir_expr *e);

#define LEIR__MATH_KEYS (LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_EQ) | LEIR__KEY(LEIR__K_EXPR))
#define LEIR__MATH_KEYS_X (LEIR__MATH_KEYS | LEIR__KEY(LEIR__K_TENSOR))

#endif
