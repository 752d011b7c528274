/*
 * Which loops may run their iterations concurrently (spec/leir.md §3.2:
 * a P/V/B annotation may only be exploited where it is legal).
 *
 * The rule is conservative: a loop L of a nest is independent when
 *  1. every equation in L's body (nested nests included) writes through a
 *     subscript that depends injectively on L: some dimension k has the
 *     affine form c*L + (outer loops) + (inner loops) + const whose inner
 *     part spans less than |c| (so iterations write disjoint blocks), and
 *     every equation writing the same buffer in the body uses dimension k
 *     with the same c, outer part and constant; a variable of L absent from
 *     a left-hand side is a reduction across L and fails this test;
 *  2. every read, in the body, of a buffer written in the body uses a
 *     subscript identical to one of that buffer's writes in the body (same
 *     text and the same loops), or one that stays in the block the
 *     iteration writes (same c and outer part, all windows within |c|),
 *     so an iteration reads only what it owns.
 * Extent-1 loops are trivially independent. Implicit initializations run
 * before their nest and do not matter here.
 *
 * The question is "within one iteration of the enclosing loops", which is
 * what a CPU P/V loop needs. A bound loop mapped to a GPU axis is hoisted
 * out of every other loop of its nest, so backends/cuda/legality.c asks a
 * stronger one (no two iterations meet on an element whatever the other
 * loops do). Both are questions to the one dependence model
 * (lib/dependence.c), which holds the rule above; this file only asks it.
 */
#include "dependence.h"

bool leir__loop_independent(const leir__analysis *a, const leir_nest *nest, uint32_t loop,
                            char *why, size_t why_cap) {
  return leir__dep_loop_independent(a, nest, loop, LEIR__HOLD_ENCLOSING, NULL, why, why_cap);
}
