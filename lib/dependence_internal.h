/*
 * What the dependence model's files share (dependence.c: one loop with its
 * enclosing loops held fixed; dependence_free.c: one loop with nothing
 * held fixed; dependence_nest.c: the buffers of one nest;
 * dependence_pairs.c: any two accesses, two nests): the few tests one
 * proof borrows from another.
 */
#ifndef LEIR_DEPENDENCE_INTERNAL_H
#define LEIR_DEPENDENCE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dependence.h"


/* ---- shared between the dependence files ---- */

/* Question 1 for loop `loop` of nest (dependence.c). */
bool leir__dep_held_enclosing(const leir__analysis *a, const leir_nest *nest, uint32_t loop,
                              const char **tensor, char *why, size_t why_cap);
/* Whether expression e of equation info uses loop's variable
 * (dependence_free.c). */
bool leir__dep_uses_loop(const leir__analysis *a, const leir__eqinfo *info, const leir_expr *e,
                         const leir__loop *loop);
/* Loop ranges where access t of equation info runs; NULL when it never
 * runs or on allocation failure (*never tells which) (dependence_pairs.c). */
leir__env *leir__dep_access_env(const leir__analysis *a, const leir__eqinfo *info,
                                const leir_expr *t, bool *never);

#endif
