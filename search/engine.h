/* The search's own state and the functions its files share (search/names.c,
 * fingerprint.c, transposition.c, nodes.c, proposals.c, resolve.c,
 * evaluate.c, expand.c, algorithms.c, run.c). The built-in policies
 * (policy.c) do not include this header: they see the search through
 * internal.h only. */
#ifndef LEIR_SEARCH_ENGINE_H
#define LEIR_SEARCH_ENGINE_H

#include <string.h>
#include <time.h>

#include "clock.h"
#include "hashset.h"
#include "internal.h"

typedef struct search_ctx {
  leir_search_options o;
  leir_compare_options cmp;
  leir_verifier_options vopts;
  leir_candidates_options copts;
  leir_backend *backend;
  leir_verifier *verifier;
  char backend_name[128]; /* the database's backend column (leir__backend_key) */
  char machine[64];
  char protocol[256];
  search_node *nodes;
  size_t nnodes, capnodes;
  leir__hashset seen; /* the transposition table (all zero: empty, 256 slots first) */
  leir_search_record *records;
  size_t nrecords, caprecords;
  uint32_t samples, measured, reused, accepted, rejected;
  uint32_t not_faster; /* measured, verified, not faster: usable answers (expand) */
  uint32_t lookaheads;
  uint64_t lookahead_evals;
  int best;
  double start;
  int stopped_by;
  leir_status fatal; /* a callback's or the backend's failure: stops the search */
  /* The database is a cache: a failed read or write (another process holding
   * its lock past the busy timeout, a full disk) never stops the search or
   * loses an accepted step. The first write failure makes the rest of the
   * run skip the database (each write would wait out the busy timeout
   * again); the rows it could not keep wait in db_pending and are written
   * once more when the run ends (db_pending.c); those still unsaved then
   * are counted (db_unsaved), those saved late in db_saved_late. */
  int db_down;
  uint32_t db_unsaved, db_saved_late;
  leir_db_row *db_pending;
  uint32_t db_npending, db_cappending;
  uint64_t rng;
} search_ctx;

/* ---- rows the database could not take (db_pending.c) ---------------------- */

/* Keeps a copy of `row` (its strings copied) for the end-of-run retry. */
void leir__search_db_keep(search_ctx *ctx, const leir_db_row *row);
/* Writes the kept rows once more (bounded rounds and time); counts what
 * is saved (db_saved_late) and what is lost (db_unsaved); frees them. */
void leir__search_db_retry(search_ctx *ctx);
void leir__search_db_pending_free(search_ctx *ctx);

static inline char *dup_str(const char *s) { return strdup(s ? s : ""); }

/* ---- the tables (names.c, from algorithms.def and policies.def) ---------- */

typedef struct leir__search_algorithm_row {
  const char *name;
  void (*run)(search_ctx *ctx); /* explores from node 0 until leir__search_should_stop */
} leir__search_algorithm_row;
typedef struct leir__search_policy_row {
  const char *name;
  leir_search_propose_fn propose;
} leir__search_policy_row;
extern const leir__search_algorithm_row leir__search_algorithms[];
extern const size_t leir__search_algorithm_count;
extern const leir__search_policy_row leir__search_policies[];
extern const size_t leir__search_policy_count;

/* The algorithms (algorithms.c). */
#define LEIR__SEARCH_ALGORITHM(id, name, run) void run(search_ctx *ctx);
#include "algorithms.def"
#undef LEIR__SEARCH_ALGORITHM

/* ---- transposition table (transposition.c) ------------------------------- */

/* Adds alpha hash h; false when out of memory. */
bool leir__search_table_add(search_ctx *ctx, uint64_t h);
/* Is a program with alpha hash h known to the search? */
bool leir__search_seen(const search_ctx *ctx, uint64_t h);

/* ---- nodes (nodes.c) ------------------------------------------------------ */

/* Appends a node (taking `p`) under `parent` (-1 for the source); its id,
 * or -1 when out of memory. */
int leir__search_node_add(search_ctx *ctx, leir_program *p, uint64_t h, int parent,
                          const char *step, double speedup, double median_s, uint32_t klass);
void leir__search_node_release(search_node *n);
/* Lists the node's candidates once (the search's candidate options). */
leir_status leir__search_node_candidates(search_ctx *ctx, search_node *n);
/* Compiles the node's kernel once. */
leir_status leir__search_node_kernel(search_ctx *ctx, search_node *n);
/* Keeps a rejection at the node for the policy's next call. */
void leir__search_add_feedback(search_node *n, const char *proposal, leir_search_reject rj,
                               leir_verdict v, const char *reason);

/* ---- proposals (proposals.c, resolve.c) ---------------------------------- */

void leir__search_proposals_clear(leir_search_proposals *ps);
/* Resolves a proposal to a program and its step. On failure *rj and reason
 * say why (a NULL result; ctx->fatal set when out of memory). */
leir_program *leir__search_resolve(search_ctx *ctx, search_node *n, const proposal *p,
                                   char **step_text, leir_exactness *ex, leir_search_reject *rj,
                                   char *reason, size_t cap);

/* ---- evaluation and records (evaluate.c) --------------------------------- */

/* Evaluates one proposal at node `nid`: resolve, transposition table,
 * database or measurement, record; returns the new node id or -1. */
int leir__search_evaluate(search_ctx *ctx, int nid, const proposal *p, const char *raw);
void leir__search_record_free_strings(leir_search_record *r);

/* ---- asking the policy (expand.c) ---------------------------------------- */

/* Whether a budget is spent, the search was cancelled or failed (sets
 * ctx->stopped_by). */
bool leir__search_should_stop(search_ctx *ctx);
/* Asks the policy at node `nid`; appends the accepted children to acc. */
size_t leir__search_expand(search_ctx *ctx, int nid, uint32_t want, size_t min_accept, int **acc,
                           size_t *nacc);

#endif
