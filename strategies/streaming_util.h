/*
 * Small helpers private to the streaming strategies' files (streaming.c,
 * streaming_prefix.c, streaming_flash.c).
 */
#ifndef LEIR_STRATEGIES_STREAMING_UTIL_H
#define LEIR_STRATEGIES_STREAMING_UTIL_H

#include "streaming.h"

static inline const leir_expr *unparen(const leir_expr *e) {
  while (e && e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e;
}

static inline bool is_single_eq_nest(const leir_nest *n) {
  return n->nitems == 1 && n->items[0].eq != NULL && n->nloops > 0;
}

static inline bool reads(const leir_expr *e, uint32_t sym) {
  return leir__expr_reads_tensor(e, sym, NULL);
}

/* Loop index of a plain loop-variable entry, or -1. */
static inline int loop_of(const leir_nest *n, const leir_expr *e) {
  if (e->kind != LEIR_EXPR_VAR) return -1;
  for (uint32_t k = 0; k < n->nloops; k++)
    if (n->loops[k].sym == e->sym) return (int)k;
  return -1;
}

static inline bool nest_uses(const leir_nest *n, uint32_t sym) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].nest ? nest_uses(n->items[k].nest, sym)
                         : reads(n->items[k].eq->lhs, sym) || reads(n->items[k].eq->rhs, sym))
      return true;
  }
  return false;
}

#endif
