/*
 * Shared by the files of the public strategy API (candidates.c, apply.c,
 * explain.c, ground.c): the handles and running a strategy in a mode.
 */
#ifndef LEIR_STRATEGIES_API_H
#define LEIR_STRATEGIES_API_H

#include "registry.h"

struct leir_candidates {
  leir__sctx *ctx; /* bound to the listed program */
  leir__steplist l;
};

struct leir_explanation {
  int strategy;
  leir__findings f;
};

/* Runs strategy `s`'s enumeration in the context's current mode. */
void leir__sctx_run(leir__sctx *c, int s);

/* A new, empty list bound to context c (which it frees). */
leir_status leir__candidates_new(struct leir_candidates **out, leir__sctx *c);
/* Applies a parsed step to c's program without validating it. */
leir_status leir__apply_parsed(leir__sctx *c, const leir__pstep *ps, leir_program **out);

#endif
