/* What the search's files share with the built-in policies and the output:
 * the nodes, the proposals and the policies' table (search/engine.h holds
 * the search's own state; policy.c, policy_lookahead.c, policy_llm.c and
 * output.c see only this header). The built-in policies ask the search
 * nothing beyond the leir_search_query every policy gets. */
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
  /* the policy's memory here (leir_search_query.state): an external
   * policy's, and the built-in policies' (their own, so that an adapter that
   * also calls leir_search_propose_builtin keeps both) */
  leir_search_node_state policy_state, builtin_state;
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
};

/* Keeps `text` (copied; len bytes) as the raw answer of this call: every
 * record made from the call's proposals carries it (leir_search_record.raw). */
leir_status leir__search_proposals_raw(leir_search_proposals *out, const char *text, size_t len);

/* An unreadable answer of an external policy, rejected as MALFORMED with
 * `reason` (copied, like `text`). */
leir_status leir__search_propose_unreadable(leir_search_proposals *out, const char *text,
                                            size_t len, const char *reason);


/* The built-in policies (policies.def; search/policy.c). */
#define LEIR__SEARCH_POLICY(id, name, propose) \
  leir_status propose(void *payload, const leir_search_query *q, leir_search_proposals *out);
#include "policies.def"
#undef LEIR__SEARCH_POLICY

#endif
