/*
 * Sites shared by the three split strategies (#37-#39, docs/strategies.md):
 *
 *   exponential_split     exp(u) -> exp(t1-y)*exp(y+R)   (form=mul; u = t1+R,
 *                                   t1 the first term of u's +/- chain)
 *                         exp(a-b) -> exp(a-y)/exp(b-y)  (form=div)
 *   multiplicative_split  x -> x/y*y
 *   additive_split        x -> x-y+y
 *
 * with y an existing value:
 *   loop=k    Z shifted by one on its last subscript entry k (a loop
 *             variable): if_then_else(k-1<0,B,Z_{..,k-1}), B = 1 for the
 *             multiplicative split, 0 otherwise (k of extent >= 2: else y
 *             is the constant B); Z is the split tensor read
 *             (#38, #39) or the first tensor read in u (#37);
 *   tensor=Y  an output Y of an earlier top-level nest with the same loops
 *             (variables and extents), read with the subscript it is
 *             written with there.
 *
 * Sites: equations directly in a top-level nest without nested nests, of
 * a float dtype. #38/#39: every float tensor read of the right side (not
 * in a subscript) that is not the left-hand tensor and whose tensor is
 * read once there; #37: every exp call of the right side. The shifted y
 * needs Z not written in the nest, k in no other entry of Z, and a site
 * outside every if_then_else (Z_{..,k-1} is then an element the original
 * reads at iteration k-1, so it is in bounds and defined). At most
 * LEIR__SPLIT_MAX_Y values of y per site and LEIR__SPLIT_MAX_NEST
 * candidates per nest.
 *
 * A candidate that is not exact is refused where the value (the site's
 * own ancestors, or the equation's left-hand tensor through every later
 * reader) reaches a comparison (split.compared: argmax's A>=D with D a
 * rounded maximum); for #39, whose error is absolute (about an ulp of
 * |x|+|y|, all of x when |y| >> |x|), also a log, sqrt or exp argument,
 * a divisor or a power: log(R-D+D) with R = exp(-593) and D = -593 is
 * log(0) = -inf.
 *
 * Numerical conditions (never a new inf or NaN where the original is
 * finite; docs/strategies.md):
 *   #39  y finite: a signature input, or an intermediate whose every
 *        writer is built from finite reads, numbers, constants, + - *,
 *        divisions by values proven away from 0, max, min, abs, erf and
 *        if_then_else branches (no inf, **, exp, log, sqrt of reads), or is
 *        bounded over the reals with finite reads (1/(1+exp(-C))).
 *        Class reassociating (x-y+y rounds).
 *   #38  y sign-definite and bounded, |y| in [m, M] proven from declared
 *        input domains (leir__alg_bounds), M <= 2^p (p the dtype's
 *        mantissa bits: an underflow of x/y costs at most the smallest
 *        normal number), and m >= 1 or |x| <= m*huge/2 proven (x/y cannot
 *        overflow). Reassociating.
 *   #37  exact forms: y is t1 itself (the first factor is exp(0) = 1), or
 *        R is -y (the second factor is exp(y-y) = 1), or for form=div y is
 *        b (exp(a-b)/exp(0)); y finite as for #39. Class exact: x*1 and
 *        x/1 are x, and the other factor is the original's exp tree.
 *        Otherwise proven bounds: with R empty, y in [0, p*ln 2] (exp(u-y)
 *        <= exp(u), exp(y) <= 2^p); else both exponents within [-L, L],
 *        L = min(ln huge, -ln tiny)/2 - 1. Reassociating.
 *
 * The relaxed mode (c->split_relaxed, set only by leir_ground's
 * verification-gated pass, strategies/ground.c) keeps the sites and the
 * rewrites but lifts every refusal above (the numerical conditions, the
 * generic mode's structural ones, split.compared, split.reused, Z written
 * in the nest, a site under an if_then_else, k in another entry of Z, a
 * loop of extent 1), and also shifts a compound or constant last subscript
 * E: if_then_else(E-1<0,B,Z_{..,E-1}), `loop=` the innermost loop E uses
 * (the nest's innermost loop for a constant E). Its steps are assumed
 * (reassociating) and count only once verified.
 */
#ifndef LEIR_STRATEGIES_SPLIT_SITES_H
#define LEIR_STRATEGIES_SPLIT_SITES_H

#include "kit.h"

#define LEIR__SPLIT_MAX_Y 8
#define LEIR__SPLIT_MAX_NEST 64
/* assumed candidates (LEIR_CANDIDATES_GENERIC_VALUES) per nest, counted apart */
#define LEIR__SPLIT_MAX_NEST_ASSUMED 256

typedef enum leir__split_kind {
  LEIR__SPLIT_EXP = 0,
  LEIR__SPLIT_MUL,
  LEIR__SPLIT_ADD,
} leir__split_kind;

void leir__split_enumerate(leir__sctx *c, leir__split_kind kind);
leir_status leir__split_apply(leir__sctx *c, const leir__pstep *ps, leir_program *out,
                              leir__split_kind kind);

#define LEIR__SPLIT_KEYS                                                                    \
  (LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_TENSOR) | LEIR__KEY(LEIR__K_LOOP) |         \
   LEIR__KEY(LEIR__K_EQ) | LEIR__KEY(LEIR__K_EXPR))
#define LEIR__SPLIT_REQUIRED \
  (LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_EQ) | LEIR__KEY(LEIR__K_EXPR))
/* exponential_split steps also say form=mul|div */
#define LEIR__SPLIT_EXP_KEYS (LEIR__SPLIT_KEYS | LEIR__KEY(LEIR__K_FORM))
#define LEIR__SPLIT_EXP_REQUIRED (LEIR__SPLIT_REQUIRED | LEIR__KEY(LEIR__K_FORM))

#endif
