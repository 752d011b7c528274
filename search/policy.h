/* What the built-in policies' files share (search/policy.c, the ordering;
 * search/policy_lookahead.c, the cost model's lookahead). */
#ifndef LEIR_SEARCH_POLICY_H
#define LEIR_SEARCH_POLICY_H

#include "internal.h"

/* Predicted seconds of one run from the analytic cost model
 * (include/leir/experimental/cost.h: compute against vector lanes and FMA
 * ports, data movement per cache level from the loop nest's footprints,
 * parallel loops over the search backend's threads: query->model_threads).
 * Only the ranking matters; a program the model cannot price goes last. */
double leir__policy_cost_score(const leir_search_query *q, const leir_program *p);

/* The LA_TOP best sequences seen, each a distinct final program whose
 * potential differs by more than LA_DISTINCT from the others' (sequences
 * that differ only in a tile factor the model hardly prices are one
 * candidate: the better is kept); several are proposed, so that a model
 * error on the first does not end the lookahead's contribution at a node. */
#define LA_TOP 3

typedef struct la_best {
  char *seq;
  double pot;
  uint64_t fh;
} la_best;

/* The lookahead from the query's program (the policy was called at t0,
 * leir__now): on success top[0..LA_TOP) holds the best sequences (steps
 * then marking steps, one a line; owned; seq NULL when fewer were found),
 * best first, each of two or more steps reaching a new program, with its
 * potential and the hash of its program. */
leir_status leir__policy_lookahead(const leir_search_query *q, double t0, la_best *top);

#endif
