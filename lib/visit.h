/*
 * The expression-tree walker: one pre-order recursion for every pass that
 * looks at (or rewrites) each node of an expression, instead of a
 * hand-written recursion per pass.
 *
 *   static int count_vars(leir__visit *v, leir_expr **slot, leir_expr *parent) {
 *     if ((*slot)->kind == LEIR_EXPR_VAR) ++*(int *)v->ud;
 *     return LEIR__VISIT_NEXT;
 *   }
 *   int n = 0;
 *   leir__visit v = LEIR__VISIT_INIT(count_vars, &n);
 *   leir__visit_expr(&v, &eq->rhs);
 *
 * The callback gets the slot that holds the node, so a rewrite replaces
 * *slot (and returns LEIR__VISIT_SKIP so the walk does not descend into
 * the replacement), and the node's path from the root (v->path[0..depth)),
 * which names sub-expressions in strategy sites.
 */
#ifndef LEIR_VISIT_H
#define LEIR_VISIT_H

#include <stdbool.h>
#include <stdint.h>

#include "ir.h"

enum {
  LEIR__VISIT_NEXT = 0, /* go on into the node's children */
  LEIR__VISIT_SKIP,     /* do not visit its children */
  LEIR__VISIT_STOP      /* end the walk */
};

#define LEIR__VISIT_MAX_PATH 64

typedef struct leir__visit leir__visit;
typedef int (*leir__visit_fn)(leir__visit *v, leir_expr **slot, leir_expr *parent);

struct leir__visit {
  leir__visit_fn fn;
  void *ud;
  /* Set by the walker for the node being visited: */
  uint32_t depth;     /* edges from the root (0 = the root itself) */
  uint32_t path[LEIR__VISIT_MAX_PATH]; /* child index at each level; only the
                                        * first LEIR__VISIT_MAX_PATH are kept */
  uint32_t tensors;   /* tensor accesses above the node (> 0: inside a subscript) */
  uint32_t side;      /* leir__visit_nest: 0 = left side, 1 = right side */
  const leir_equation *eq; /* leir__visit_nest: the equation */
  const leir_nest *nest;   /* leir__visit_nest: the nest holding it */
};

#define LEIR__VISIT_INIT(fn, ud) {(fn), (ud), 0, {0}, 0, 0, NULL, NULL}

/* Walks the tree in *root, parent before children, children in order.
 * False when the callback stopped the walk. */
bool leir__visit_expr(leir__visit *v, leir_expr **root);

/* The same over a tree that is only read (the callback must not write
 * through the slot). */
static inline bool leir__visit_const(leir__visit *v, const leir_expr *root) {
  leir_expr *e = (leir_expr *)root;
  return leir__visit_expr(v, &e);
}

/* Every equation of nest n and of the nests inside it, in item order:
 * left side, then right side (v->eq, v->side, v->nest say where). */
bool leir__visit_nest(leir__visit *v, const leir_nest *n);

/* Does e contain a tensor access (of any tensor; an indirect index when e
 * is a subscript)? */
bool leir__expr_has_tensor(const leir_expr *e);

#endif
