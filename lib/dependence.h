/*
 * The dependence model (docs/dependence.md): which iterations of an
 * analyzed program may touch the same element of a buffer with at least
 * one write. One model serves every client:
 *
 *  - lib/parallel.c (leir__loop_independent: CPU P/V loops, the loop
 *    strategies) and backends/cuda/legality.c (bound loops) ask about one
 *    loop L of a nest, with the loops around L held fixed (a CPU loop runs
 *    inside one iteration of its enclosing loops) or with nothing held
 *    fixed (a GPU axis is hoisted out of every other loop of its nest);
 *  - strategies/deps.c asks, per buffer written in a nest, which loops
 *    every dependence keeps fixed (pinned) and whether the buffer is a pure
 *    accumulation (loop order legality);
 *  - the graph strategies (fusion, inline, reorder of nests) ask about two
 *    nests: may an iteration of one meet an iteration of the other on an
 *    element, under a mapping of their loops.
 *
 * Accesses are index sets: every subscript entry an affine form over the
 * loops of its equation (leir__affine_of), the loops ranging over their
 * extents narrowed by the if_then_else guards around the access; an entry
 * that is not affine (an indirect index, a division) is unknown and may
 * take any value. Every answer is conservative: "may meet" and "not
 * independent" also mean "cannot prove otherwise".
 */
#ifndef LEIR_DEPENDENCE_H
#define LEIR_DEPENDENCE_H

#include "analysis.h"

/* ---- one loop -------------------------------------------------------------- */

/* Which loops keep their values while the iterations of loop L run. */
typedef enum leir__dep_hold {
  LEIR__HOLD_ENCLOSING = 0, /* the loops around L (CPU P/V loops, lib/parallel.c) */
  LEIR__HOLD_NONE = 1       /* none: L is hoisted out of its nest (GPU axes) */
} leir__dep_hold;

/* True when iterations of loop `loop` (index into nest->loops; `nest` is a
 * nest of the analyzed program at any level) with different values of the
 * loop never touch one element with a write, the loops named by `hold`
 * being fixed and every other loop free. When false, `why` (may be NULL)
 * gets a one-line reason and *tensor (may be NULL) the buffer's name when
 * one is at fault. The two holds use the two proofs described in
 * docs/dependence.md (ownership of written blocks / one separating
 * dimension per pair of accesses); their answers are the ones the CPU and
 * CUDA backends have always given. Loops of extent 1 are independent. */
bool leir__dep_loop_independent(const leir__analysis *a, const leir_nest *nest, uint32_t loop,
                                leir__dep_hold hold, const char **tensor, char *why,
                                size_t why_cap);

/* True when the affine subscript `f` (over the loops of equation `info`)
 * determines loop slot `slot` with every other loop free: f(i) == f(i')
 * implies i_slot == i'_slot. */
bool leir__dep_determines(const leir__affine *f, const leir__eqinfo *info, uint32_t slot);

/* ---- the buffers of one nest (loop order) -------------------------------- */

typedef enum leir__dep_acc {
  LEIR__DEP_ACC_OTHER = 0,  /* order matters */
  LEIR__DEP_ACC_ASSOC = 1,  /* B_s = B_s op ..., op in + - * /: reassociates */
  LEIR__DEP_ACC_MAXMIN = 2  /* B_s = max/min(B_s, ...): any order, exact */
} leir__dep_acc;

typedef struct leir__dep_buffer {
  uint32_t buffer;  /* index into a->buffers */
  uint64_t pinned;  /* loops of the nest (bit i = nest->loops[i]) every
                     * dependence through the buffer keeps fixed */
  uint8_t acc;      /* leir__dep_acc */
} leir__dep_buffer;

/* For every buffer written in `nest` (at any depth; `outer` loops enclose
 * the nest, held fixed), in order of first write: which loops of the nest
 * are pinned and whether it is a pure accumulation (strategies/deps.c).
 * *out is malloc'd (caller frees; may be NULL when *n is 0). Returns false
 * when the nest cannot be analyzed (more than 64 loops, an equation
 * missing from the analysis, no memory); *out is then NULL. */
bool leir__dep_nest_buffers(const leir__analysis *a, const leir_nest *nest, uint32_t outer,
                            leir__dep_buffer **out, uint32_t *n);

/* ---- accesses and pairs of iterations ------------------------------------ */

/* Relation between a loop of the first access's equation (x) and one of
 * the second's (y): the values the two iterations take. */
typedef enum leir__dep_rel {
  LEIR__DEP_EQ = 0, /* x == y (a loop held fixed, or two loops fused into one) */
  LEIR__DEP_NE,     /* x != y */
  LEIR__DEP_LT,     /* x < y */
  LEIR__DEP_GT      /* x > y */
} leir__dep_rel;

typedef struct leir__dep_pair {
  const leir__loop *x, *y; /* a loop of x's equation, a loop of y's */
  uint8_t rel;             /* leir__dep_rel */
} leir__dep_pair;

/* May tensor node `x` (of equation `xi`) at some iteration and tensor node
 * `y` (of equation `yi`) at some iteration touch the same element, the
 * iterations related by `pairs` (every other loop free)? Both must be
 * accesses of one buffer (false otherwise). Per subscript dimension: a
 * GCD test and the bounds of both affine forms over the guard-narrowed
 * loop ranges under the pairs' relations (Banerjee's inequalities, exact
 * for one pair per loop); an unknown entry may meet anything. */
bool leir__dep_may_meet(const leir__analysis *a, const leir__eqinfo *xi, const leir_expr *x,
                        const leir__eqinfo *yi, const leir_expr *y, const leir__dep_pair *pairs,
                        uint32_t npairs);

/* ---- two nests (graph strategies) ---------------------------------------- */

/* Every top-level nest index below is into a->p->nests; n1 < n2. */

/* May top-level nests n1 and n2 run in the other order (n2's iterations
 * first) with the same results? True when no access of one meets an access
 * of the other to the same buffer with at least one of them a write. The
 * nests between them are the caller's concern. */
bool leir__dep_nests_commute(const leir__analysis *a, uint32_t n1, uint32_t n2);

/* May top-level nests n1 and n2 fuse over their first `nfused` loops (loop
 * k of n1 becomes loop k of n2: same extents, required) so that one
 * iteration of the fused loops runs n1's body then n2's? True when no
 * dependence from an iteration of n1 to one of n2 is reversed: no access of
 * n2 at fused values lexicographically before n1's meets an access of n1
 * with a write among them. (A producer writing X_{a} and a consumer
 * reading X_{a+1} do not fuse over a: the consumer would read X_{a+1}
 * before it is written.) `why` (may be NULL) names the buffer when false. */
bool leir__dep_nests_fusable(const leir__analysis *a, uint32_t n1, uint32_t n2, uint32_t nfused,
                             char *why, size_t why_cap);

/* May the one equation of top-level nest `producer` (X_{s} = f(...), a
 * plain definition: f does not read X) be substituted into the reads of X
 * in top-level nest `consumer` (> producer)? True when the equation is the
 * only write of X in the program, and no equation of the nests after the
 * producer up to the consumer (included) may write an element that f reads
 * (so f would read the same values where X is read). */
bool leir__dep_inlinable(const leir__analysis *a, uint32_t producer, uint32_t consumer,
                         char *why, size_t why_cap);

#endif
