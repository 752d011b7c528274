/* What the search's files and its built-in policies share: the nodes, the
 * proposals, and what a built-in policy may ask of the running search
 * (search/engine.h holds the search's own state; policy.c, policy_lookahead.c
 * and output.c see only this header). */
#ifndef LEIR_SEARCH_INTERNAL_H
#define LEIR_SEARCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LEIR_EXPERIMENTAL
#include "leir/experimental/search.h"

/* A node: an accepted program (node 0 is the source program). */
typedef struct search_node {
  leir_program *program;
  uint64_t hash;
  int parent;
  uint32_t depth;
  char *step;          /* the step from the parent ("" for the source) */
  double speedup;      /* path product of ratios over the source */
  double median_s;     /* its median time when it was measured */
  uint32_t klass;      /* LEIR_VERIFY_CLASS_* of the path */
  uint32_t attempts;   /* policy calls at this node */
  bool exhausted;      /* the policy has nothing more here (or gave up) */
  bool dead;           /* MCTS: nothing below it can be expanded */
  leir_candidates *cands;
  leir_kernel *kernel;
  /* built-in policies: the candidates still to propose, in policy order */
  uint64_t *order; /* pairs: candidate index, hash of its result */
  char **macro;    /* per order entry: NULL, or the follow-up step of a macro-step */
  size_t norder, cursor;
  bool ordered;
  /* rejections at this node (leir_search_feedback, owned strings) */
  leir_search_feedback *fb;
  size_t nfb;
  /* MCTS */
  double value;
  uint32_t visits;
  int *children;
  size_t nchildren;
} search_node;

typedef struct proposal {
  int kind; /* 0 candidate, 1 step text, 2 program text, 3 unreadable,
             * 4 macro-step: candidate `index`, then the candidate of its
             * result whose step text is `text` (built-in cost policy),
             * 5 lookahead macro-step: the steps of `text`, one a line, each
             * a candidate of the program the previous one gave */
  size_t index;
  char *text;
  char *strategy;
  char *cot;
} proposal;

struct leir_search_proposals {
  proposal *items;
  size_t n, cap;
  char *raw; /* the policy's whole answer of this call (LLM policy), or NULL */
  /* for the built-in policies: the node asked about and its search */
  struct search_ctx *ctx;
  int node;
};

/* Is a program with alpha hash h known to the search (transposition table)? */
bool leir__search_seen(const struct search_ctx *ctx, uint64_t h);
search_node *leir__search_node(struct search_ctx *ctx, int id);

/* Keeps `text` (copied; len bytes) as the raw answer of this call: every
 * record made from the call's proposals carries it (leir_search_record.raw). */
leir_status leir__search_proposals_raw(leir_search_proposals *out, const char *text, size_t len);

/* An unreadable answer of an external policy, rejected as MALFORMED with
 * `reason` (copied, like `text`). */
leir_status leir__search_propose_unreadable(leir_search_proposals *out, const char *text,
                                            size_t len, const char *reason);

/* A macro-step of the built-in cost policy: candidate `index` of the node,
 * then the candidate of its result whose step text is `follow`. Each part
 * is one enumerated (verified-as-a-whole) atomic step; the record lists both,
 * joined by " ; ". */
leir_status leir__search_propose_macro(leir_search_proposals *out, size_t index,
                                       const char *follow);
/* A lookahead macro-step of the built-in cost policy: the steps of `steps`
 * (one a line), replayed in order, each matched by its text among the
 * candidates of the program before it. The record joins them by " ; ". */
leir_status leir__search_propose_chain(leir_search_proposals *out, const char *steps);
/* The candidate options of the running search (all divisors, vector width). */
const leir_candidates_options *leir__search_copts(const struct search_ctx *ctx);
/* The thread count the cost model prices programs for: the cpu backend's
 * (its leir_backend_options.threads; 0, its default, is the host's online
 * CPUs), else 0. */
uint32_t leir__search_model_threads(const struct search_ctx *ctx);
/* The options of the running search (defaults filled in). */
const leir_search_options *leir__search_opts(const struct search_ctx *ctx);
/* Seconds left of the search's time budget (INFINITY when it has none);
 * whether it was cancelled. */
double leir__search_time_left(const struct search_ctx *ctx);
bool leir__search_cancelled(const struct search_ctx *ctx);
/* Counts one lookahead and its cost-model evaluations (the summary's
 * lookaheads and lookahead_evals). */
void leir__search_lookahead_note(struct search_ctx *ctx, uint64_t evals);

/* The built-in policies (policies.def; search/policy.c). */
#define LEIR__SEARCH_POLICY(id, name, propose) \
  leir_status propose(void *payload, const leir_search_query *q, leir_search_proposals *out);
#include "policies.def"
#undef LEIR__SEARCH_POLICY

/* The order entry of a lookahead macro-step (its steps are in macro[k]). */
#define LEIR__ORDER_CHAIN UINT64_MAX

#endif
