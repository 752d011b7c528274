/**
 * @file
 * libleir — multi-step search
 * (experimental: no ABI or API promise: any release may change or remove
 * it; define LEIR_EXPERIMENTAL before including this header, see
 * leir/experimental/experimental.h).
 *
 * A search composes single steps (include/leir/strategy.h) into
 * trajectories: greedy, beam, BFS, DFS, MCTS or chain search over the
 * programs reachable from a source program. Who proposes the steps is a
 * policy, one C callback (leir_search_propose_fn): the built-in policies
 * (exhaustive, seeded random, cost-model ranking) and external ones (an LLM
 * adapter) use the same interface. A policy proposes candidates of the
 * current program by index, steps, or whole transformed programs; a whole
 * program is grounded (leir_ground: is it one step of the named strategy?)
 * before anything runs, and every rejection goes back to the policy, with
 * its reason, on the next call (up to `retries` calls in a row).
 *
 * A proposal becomes a node only when
 *  - it differs from every program seen so far (a transposition table on
 *    leir_program_hash_alpha: no program is measured twice),
 *  - the verifier (leir_verifier, reference = the source program) judges it
 *    EQUAL or CLOSE (never INCONCLUSIVE or MISMATCH), with the candidate
 *    class of its path (reassociating as soon as one step on the path is),
 *  - and leir_kernels_compare says it is FASTER than its parent at the
 *    stated confidence.
 * The reported speedup of a node is the product of the paired time ratios
 * along its path; the final speedup of the best program is measured again,
 * side by side with the source program, at the end.
 *
 * Measurements can be persisted in a measurement database (leir_db, SQLite
 * in WAL mode): rows are keyed by the program's alpha hash, the baseline it
 * was compared with, the source program, the backend, a machine fingerprint
 * and the timing protocol, and a later search with the same key reuses them
 * instead of measuring.
 *
 * Threads: a search runs on the calling thread; its callbacks are called
 * on that thread. A leir_db handle is used by one thread at a time; several
 * processes may share one database file. Nothing here prints.
 */
#ifndef LEIR_EXPERIMENTAL_SEARCH_H
#define LEIR_EXPERIMENTAL_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "leir/experimental/experimental.h"
#include "leir/program.h"
#include "leir/run.h"
#include "leir/strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================
 * Measurement database
 * ====================================================================== */

/** An open measurement database (SQLite). Opaque; made by leir_db_open,
 * released with leir_db_free. */
typedef struct leir_db leir_db;

/** One measurement: how a program (its alpha hash) compared with a baseline
 * on one backend, machine and timing protocol, and its verdict against the
 * source program. Strings are borrowed (from the database handle until the
 * next call on it, or from the search). */
typedef struct leir_db_row {
  uint32_t size;            /**< sizeof(leir_db_row) */
  uint64_t program_hash;    /**< leir_program_hash_alpha of the measured program */
  uint64_t baseline_hash;   /**< alpha hash of the program it was timed against */
  uint64_t root_hash;       /**< alpha hash of the source program (verification reference) */
  const char *backend;      /**< backend name */
  const char *machine;      /**< machine fingerprint (leir_search_machine_fingerprint) */
  const char *protocol;     /**< timing protocol (leir_search_protocol) */
  leir_verdict verdict;     /**< against the source program */
  leir_order order;         /**< the program against its baseline (UNDECIDED when not timed) */
  double ratio;             /**< time(baseline) / time(program): > 1 when faster */
  double ratio_lo;          /**< lower end of the ratio's confidence interval */
  double ratio_hi;          /**< upper end */
  double median_s;          /**< median time of the program (0 when not timed) */
  double q1_s;              /**< first quartile of its runs */
  double q3_s;              /**< third quartile of its runs */
  double baseline_median_s; /**< median time of the baseline in the same rounds */
  uint32_t rounds;          /**< paired rounds measured */
  const char *step;         /**< the step that made it ("" when unknown) */
  const char *program;      /**< its canonical text */
  const char *message;      /**< the verifier's message */
  double created;           /**< seconds since the epoch, when it was written */
  /* appended (schema 2): the state the step was taken from, so that the
   * steps tried from one state can be compared (leir.rl.prefdata) */
  uint64_t parent_hash;       /**< alpha hash of the program `step` was applied to (0: unknown) */
  const char *parent_program; /**< its canonical text ("" when unknown) */
} leir_db_row;

/** Opens (creating when absent) the database at `path`: WAL journal, a
 * busy timeout of 10 s, one transaction per row, so several processes may
 * read and write it at once and a process killed mid-write leaves it
 * readable with every row committed before. Caller frees *out with
 * leir_db_free. Its tables are created only in an empty file or one of
 * ours: a database holding another application's tables is refused
 * unchanged (rule "db.foreign"). A database of schema 1 (before
 * parent_hash/parent_program) is migrated to schema 2 in place, its rows
 * keeping an unknown parent. Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_IO
 * (cannot open, not a database, another application's, or a schema this
 * version does not know), LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_db_open(leir_db **out, const char *path);
/** Closes the database. NULL is a no-op. */
LEIR_API void leir_db_free(leir_db *db);

/** Writes one row (replacing the row with the same key: program hash,
 * baseline hash, root hash, backend, machine, protocol). The row is
 * copied. Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_IO. */
LEIR_API leir_status leir_db_put(leir_db *db, const leir_db_row *row);

/** Looks up the row with the key of `key` (its hashes and strings; the other
 * fields are ignored) and fills *out (out->size set by the caller; strings
 * borrowed until the next call on `db`). A stored row is validated first
 * (a known verdict and order; ratios, times and rounds numbers, finite, not
 * negative and bounded): one that leir_db_put could not have written is
 * not trusted and reads as absent (rule "db.invalid-row"), so that it is
 * measured again and replaced. Errors: LEIR_ERR_NOT_FOUND (no such row, or
 * an untrusted one), LEIR_ERR_ARGUMENT, LEIR_ERR_IO. */
LEIR_API leir_status leir_db_get(leir_db *db, const leir_db_row *key, leir_db_row *out);

/** Number of rows in *out. Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_IO. */
LEIR_API leir_status leir_db_count(leir_db *db, uint64_t *out);

/** Called once per exported line (one JSON object, no newline; borrowed for
 * the call). A non-zero return stops the export (LEIR_ERR_CANCELLED). */
typedef int (*leir_db_line_fn)(void *payload, const char *line, size_t len);

/** Every row as one JSON object per line (fields named as in leir_db_row,
 * hashes as 16 hex digits, verdict and order by name), oldest first.
 * Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_IO, LEIR_ERR_CANCELLED, LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_db_export(leir_db *db, leir_db_line_fn fn, void *payload);

/** Runs SQLite's integrity check, then validates every row as leir_db_get
 * does. LEIR_OK when the file is sound and every row trusted, else
 * LEIR_ERR_IO with the first problem in the message (rule "db.corrupt" or
 * "db.invalid-row", with the count of untrusted rows). */
LEIR_API leir_status leir_db_check(leir_db *db);

/** An invalid row of the other database fails the merge (nothing written)
 * instead of being skipped and counted. */
#define LEIR_DB_MERGE_STRICT 0x1u
/** A key measured differently in both databases fails the merge (nothing
 * written) instead of keeping the earlier measurement. */
#define LEIR_DB_MERGE_FAIL_ON_CONFLICT 0x2u

/** Options of leir_db_merge. Start from LEIR_DB_MERGE_OPTIONS_INIT or
 * leir_db_merge_options_init(). */
typedef struct leir_db_merge_options {
  uint32_t size;  /**< sizeof(leir_db_merge_options) */
  uint32_t flags; /**< LEIR_DB_MERGE_* (default 0) */
} leir_db_merge_options;

/** Defaults of leir_db_merge_options. */
#define LEIR_DB_MERGE_OPTIONS_INIT {(uint32_t)sizeof(leir_db_merge_options), 0u}

/** Fills the first `size` bytes of `*opts` with the defaults and sets its
 * size field. Errors: LEIR_ERR_ARGUMENT. */
LEIR_API leir_status leir_db_merge_options_init(leir_db_merge_options *opts, size_t size);

/** What a merge did (out->size set by the caller). */
typedef struct leir_db_merge_stats {
  uint32_t size;       /**< sizeof(leir_db_merge_stats) */
  uint64_t rows;       /**< rows read from the other database */
  uint64_t added;      /**< keys that were new */
  uint64_t duplicates; /**< keys already present with the same measurement */
  uint64_t conflicts;  /**< keys already present with another measurement */
  uint64_t replaced;   /**< of the conflicts, rows replaced by the other database's
                        * earlier measurement (the earlier one is kept) */
  uint64_t invalid;    /**< rows that failed validation (skipped) */
} leir_db_merge_stats;

/** Adds the rows of the measurement database file `path` to `into`, by key
 * (program, baseline and source hashes, backend, machine, protocol). The
 * file is opened read-only and is untrusted: one that is not a measurement
 * database of schema 1 or 2 is refused (LEIR_ERR_IO, rules "db.foreign",
 * "db.schema"); each row is validated (hashes of 16 hex digits, known
 * verdict and order, finite non-negative ratios and times, an ordered
 * interval, bounded strings) and an invalid one is skipped and counted
 * (LEIR_ERR_INVALID, rule "db.invalid-row", with LEIR_DB_MERGE_STRICT).
 * A key already present with the same measurement is a duplicate; with
 * another, a conflict: the row with the earlier `created` time is kept, so
 * the result does not depend on the order of the merges
 * (LEIR_ERR_INVALID, rule "db.conflict", with
 * LEIR_DB_MERGE_FAIL_ON_CONFLICT). Under either flag every row is checked
 * before any is written. `opts` and `stats` may be NULL. Each added row is
 * its own transaction (leir_db_put): a merge stopped midway is completed by
 * running it again. Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_IO, LEIR_ERR_INVALID,
 * LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_db_merge(leir_db *into, const char *path,
                                   const leir_db_merge_options *opts,
                                   leir_db_merge_stats *stats);

/* ======================================================================
 * Algorithms, policies, rewards
 * ====================================================================== */

/** The search algorithms. */
typedef enum leir_search_algorithm {
  LEIR_SEARCH_GREEDY = 0, /**< move to the fastest accepted child of the current node */
  LEIR_SEARCH_BEAM,       /**< keep the `width` fastest accepted children of the beam */
  LEIR_SEARCH_BFS,        /**< expand accepted nodes in FIFO order up to `max_depth` */
  LEIR_SEARCH_DFS,        /**< expand accepted nodes in LIFO order up to `max_depth` */
  LEIR_SEARCH_MCTS,       /**< UCT selection, one proposal per expansion, rollouts */
  LEIR_SEARCH_CHAIN       /**< one proposal at a time; move to each accepted child */
} leir_search_algorithm;

/** "greedy", "beam", "bfs", "dfs", "mcts", "chain"; static; NULL if unknown. */
LEIR_API const char *leir_search_algorithm_name(leir_search_algorithm algorithm);
/** Parses an algorithm name. Errors: LEIR_ERR_ARGUMENT (unknown or NULL). */
LEIR_API leir_status leir_search_algorithm_from_name(const char *name,
                                                     leir_search_algorithm *out);

/** The built-in policies (used when leir_search_options.propose is NULL). */
typedef enum leir_search_policy {
  LEIR_POLICY_COST = 0,   /**< candidates ranked by leir_program_cost_get (fastest first) */
  LEIR_POLICY_EXHAUSTIVE, /**< every candidate in enumeration order */
  LEIR_POLICY_RANDOM      /**< candidates in a seeded random order */
} leir_search_policy;

/** "cost", "exhaustive", "random"; static; NULL if unknown. */
LEIR_API const char *leir_search_policy_name(leir_search_policy policy);
/** Parses a policy name. Errors: LEIR_ERR_ARGUMENT (unknown or NULL). */
LEIR_API leir_status leir_search_policy_from_name(const char *name, leir_search_policy *out);

/** MCTS rewards. */
typedef enum leir_search_reward {
  LEIR_REWARD_LOG_SPEEDUP = 0, /**< log(speedup over the source program) */
  LEIR_REWARD_REFERENCE        /**< the Step-TP reference's (exp(speedup - 1) - 1) x 10 */
} leir_search_reward;

/* ======================================================================
 * The policy interface
 * ====================================================================== */

/** Why a proposal was not made a node. */
typedef enum leir_search_reject {
  LEIR_REJECT_NONE = 0,     /**< accepted */
  LEIR_REJECT_MALFORMED,    /**< the proposal could not be read (bad index, step or program) */
  LEIR_REJECT_NOT_ONE_STEP, /**< not one step of the named strategy (grounding failed) */
  LEIR_REJECT_NOT_APPLICABLE, /**< a step that is not a candidate of the program */
  LEIR_REJECT_SAME,         /**< the same program as the current one */
  LEIR_REJECT_SEEN,         /**< a program seen before (transposition table) */
  LEIR_REJECT_VERDICT,      /**< verification did not accept it (verdict says why) */
  LEIR_REJECT_NOT_FASTER,   /**< verified, but not faster than its parent */
  LEIR_REJECT_DEPTH         /**< deeper than max_depth */
} leir_search_reject;

/** "accepted", "malformed", "not-one-step", "not-applicable", "same",
 * "seen", "verdict", "not-faster", "depth"; static; NULL if unknown. */
LEIR_API const char *leir_search_reject_name(leir_search_reject reject);

/** One earlier proposal at the node being expanded that was rejected. */
typedef struct leir_search_feedback {
  const char *proposal;      /**< the step text, or the proposed program's text */
  leir_search_reject reject; /**< why */
  leir_verdict verdict;      /**< REJECT_VERDICT: the verdict */
  const char *reason;        /**< one line for a model: "not numerically equivalent:
                              * C[3,1] is 2.5, expected 2.25", "not one step of
                              * loop_tiling", "invalid at 1:40: ..." */
} leir_search_feedback;

/** Memory a policy keeps at one node between its calls there
 * (leir_search_query.state). `data` is NULL at the first call at a node;
 * the policy may store anything there, and sets `release` (or leaves it
 * NULL) to what the search calls on `data` when it frees the node (at the
 * end of leir_search_run). */
typedef struct leir_search_node_state {
  void *data;                  /**< the policy's; NULL until it stores something */
  void (*release)(void *data); /**< called on a non-NULL `data` as the node is freed */
} leir_search_node_state;

/** What a policy is asked (borrowed for the call). */
typedef struct leir_search_query {
  uint32_t size;                        /**< sizeof(leir_search_query) */
  leir_search_algorithm algorithm;      /**< the running algorithm */
  const leir_program *program;          /**< the current program (with its signature) */
  const leir_program *root;             /**< the source program */
  const leir_candidates *candidates;    /**< every candidate step of `program` (enumerated
                                         * with the search's candidate options) */
  uint32_t depth;                       /**< steps from the source program */
  double speedup;                       /**< of `program` over the source program */
  uint32_t want;                        /**< proposals wanted by the algorithm (more are
                                         * measured too, fewer are fine) */
  uint32_t attempt;                     /**< 0 for the first call at this node, k for the
                                         * k-th call after it */
  const leir_search_feedback *feedback; /**< rejections at this node, oldest first */
  size_t nfeedback;                     /**< entries of `feedback` */
  const char *history;                  /**< the path from the source program as a JSON
                                         * array of {"step","speedup"} objects */
  uint64_t seed;                        /**< the search's seed */
  const leir_program *parent;           /**< the program `program` was reached from (NULL
                                         * at the source) */
  double parent_speedup;                /**< its speedup over the source (1 at the source) */
  /* Appended (check `size` before reading). The built-in policies use these
   * fields and nothing else of the search. */
  int32_t node;                         /**< the node id of `program` (as in
                                         * leir_search_record.node; 0: the source) */
  uint64_t program_hash;                /**< leir_program_hash_alpha(program) */
  const leir_candidates_options *candidate_options; /**< what `candidates` was listed with
                                         * (for listing the programs derived from it alike) */
  const struct leir_search_options *options; /**< the running search's options, defaults filled
                                         * in (`cancel`: stop a long proposal early) */
  uint32_t model_threads;               /**< the thread count to price programs for
                                         * (leir_program_cost_predict): the backend's when
                                         * it runs kernels on threads (0: the host's
                                         * online CPUs), else 0 */
  double time_left_s;                   /**< of options->max_seconds at this call
                                         * (INFINITY without a time budget) */
  leir_search_node_state *state;        /**< the policy's memory at this node (the
                                         * built-in policies, run through
                                         * leir_search_propose_builtin, have their own) */
  /** 1 when the search has made a program with this alpha hash (a proposal
   * that gives it is rejected as SEEN), else 0. */
  int (*known)(const struct leir_search_query *query, uint64_t alpha_hash);
  /** Counts one lookahead of `evaluations` cost-model calls in the summary
   * (leir_search_summary.lookaheads and lookahead_evals). */
  void (*count_lookahead)(const struct leir_search_query *query, uint64_t evaluations);
  void *search;                         /**< the search's, for `known` and
                                         * `count_lookahead`; not to be read */
} leir_search_query;

/** Where a policy puts its proposals. Opaque; owned by the search. */
typedef struct leir_search_proposals leir_search_proposals;

/** Proposes candidate `index` of query->candidates. `cot` (may be NULL: the
 * library's leir_step_cot) is copied. Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_search_propose_candidate(leir_search_proposals *out, size_t index,
                                                   const char *cot);
/** Proposes a step (text or JSON form, `len` bytes). It is parsed and
 * applied by the search; one that does not parse or apply is rejected
 * (MALFORMED or NOT_APPLICABLE) with the reason. `cot` may be NULL; both are
 * copied. Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_search_propose_step(leir_search_proposals *out, const char *step,
                                              size_t len, const char *cot);
/** Proposes a whole transformed program as LEIR text (`len` bytes), said to
 * be one step of `strategy` (a catalogue name; NULL: any strategy). The
 * search parses it (MALFORMED with line:column when it does not), gives it
 * the current program's signature and grounds it (NOT_ONE_STEP when no step
 * of that strategy gives it, up to fresh names). All strings are copied.
 * Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_search_propose_program(leir_search_proposals *out, const char *text,
                                                 size_t len, const char *strategy,
                                                 const char *cot);

/** Proposes a macro-step: candidate `index` of query->candidates, then the
 * candidate of its result whose step text is `follow` (listed with
 * query->candidate_options). Both are enumerated steps, verified as a
 * whole; the record joins them by " ; " and names both strategies, joined
 * by '+'. `follow` and `cot` (may be NULL) are copied. Errors:
 * LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_search_propose_macro(leir_search_proposals *out, size_t index,
                                               const char *follow, const char *cot);
/** Proposes a chain of enumerated steps as one macro-step: the lines of
 * `steps`, replayed in order, each matched by its text among the candidates
 * (query->candidate_options) of the program the line before gave. The
 * record joins them by " ; ". `steps` and `cot` (may be NULL) are copied.
 * Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_search_propose_chain(leir_search_proposals *out, const char *steps,
                                               const char *cot);

/** A policy: fills `out` with proposals for `query->program`. Proposing
 * nothing says the policy has nothing more at this node. A status other
 * than LEIR_OK stops the search with that status. */
typedef leir_status (*leir_search_propose_fn)(void *payload, const leir_search_query *query,
                                              leir_search_proposals *out);

/** Runs the built-in policy `policy` on a query inside a propose
 * callback (an adapter may add the built-in's proposals to its own, or
 * fall back to it). `out` must be the proposals object the callback was
 * given. Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_search_propose_builtin(leir_search_policy policy,
                                                 const leir_search_query *query,
                                                 leir_search_proposals *out);

/** A client of include/leir/experimental/llm.h (declared again here so this
 * header does not need that one). */
typedef struct leir_llm leir_llm;

/** The LLM policy: a leir_search_propose_fn whose payload is a leir_llm
 * client (borrowed: the caller keeps it alive for the search and frees it
 * after). Each call sends one chat, system message "You are a helpful IR
 * optimization assistant." and the Step-TP search prompt of
 * query->program (algorithm, current IR and known variables, the parent
 * and speedups, the rejections at this node with their reasons, the
 * hardware block, the strategy list, the task; docs/search.md), and
 * proposes each transformed IR of the parsed answer as a whole program of
 * its applied strategy; the search then grounds, verifies
 * and times it. A failed request or an answer that cannot be parsed is
 * proposed as unreadable (REJECT_MALFORMED, reason "no answer: ..." or
 * "malformed answer (...): ..."), so it goes back to the model on the next
 * call like any rejection, within options.retries. The prompt has the
 * reference's hardware block (H20-3e) and asks for as many IRs per call as
 * the reference's script of the algorithm (leir_search_llm_options).
 * Errors:
 * LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM (both stop the search). */
LEIR_API leir_status leir_search_propose_llm(void *payload, const leir_search_query *query,
                                             leir_search_proposals *out);

/** How the LLM policy asks (leir_search_propose_llm_with). Start from
 * LEIR_SEARCH_LLM_OPTIONS_INIT or leir_search_llm_options_init(). The
 * client's sampling settings (temperature, top_p, max_tokens, seed) are its
 * leir_llm_options; these are the prompt's. */
typedef struct leir_search_llm_options {
  uint32_t size;             /**< sizeof(leir_search_llm_options) */
  leir_llm *llm;             /**< the client (borrowed; required) */
  const char *hardware;      /**< a GPU name: the reference's hardware block ("**Target
                              * hardware**: NVIDIA GPUNAME GPU." and the CUDA binding and memory
                              * rules) goes before the strategy list (default "H20-3e", the
                              * reference's --GPU default); NULL or "": left out */
  uint32_t irs_per_call;     /**< transformed IRs asked for in one call: 1 gives the single
                              * variant, N >= 2 asks for "at least N different" IRs as a list
                              * (at most 16); 0 (default): as the reference's script of the
                              * algorithm asks (greedy 2, beam 3, BFS 2, DFS 2, MCTS 1, chain 1) */
  const char *system_prompt; /**< the chat's first message; NULL (default): "You are a helpful
                              * IR optimization assistant.", the reference's search prompt;
                              * "": no system message */
} leir_search_llm_options;

/** Defaults of leir_search_llm_options (see each field). */
#define LEIR_SEARCH_LLM_OPTIONS_INIT \
  { (uint32_t)sizeof(leir_search_llm_options), NULL, "H20-3e", 0u, NULL }

/** Fills the first `size` bytes of `*opts` with LEIR_SEARCH_LLM_OPTIONS_INIT
 * and sets `opts->size` to `size`. Errors: LEIR_ERR_ARGUMENT. */
LEIR_API leir_status leir_search_llm_options_init(leir_search_llm_options *opts, size_t size);

/** The LLM policy with prompt options: a leir_search_propose_fn whose
 * payload is a `const leir_search_llm_options *` (borrowed, with its client,
 * for the whole search). As leir_search_propose_llm, which is this with the
 * defaults. Every transformed IR of a list answer is proposed (each one is
 * grounded, verified and timed; at most 16 per call, the rest dropped);
 * entries without a readable transformed IR are skipped, and an answer with
 * none is proposed as unreadable. Errors: LEIR_ERR_ARGUMENT (no client, or a
 * GPU name that is empty, over 64 bytes or has a control character),
 * LEIR_ERR_NOMEM (both stop the search). */
LEIR_API leir_status leir_search_propose_llm_with(void *payload, const leir_search_query *query,
                                                  leir_search_proposals *out);

/* ======================================================================
 * Measurements and records
 * ====================================================================== */

/** What measuring one proposal gave. */
typedef struct leir_search_measurement {
  uint32_t size;        /**< sizeof(leir_search_measurement) */
  leir_verdict verdict; /**< against the source program */
  leir_order order;     /**< against the parent (UNDECIDED when not timed) */
  double ratio;         /**< time(parent) / time(candidate) */
  double ratio_lo;      /**< confidence interval of the ratio */
  double ratio_hi;      /**< upper end */
  double median_s;      /**< the candidate's median time */
  double q1_s;          /**< its first quartile */
  double q3_s;          /**< its third quartile */
  double parent_median_s; /**< the parent's median in the same rounds */
  uint32_t rounds;      /**< paired rounds */
  char message[256];    /**< the verifier's message (first differing element, ...) */
} leir_search_measurement;

/** A measurement callback, for testing and embedding: replaces the
 * verifier and the timing comparison (the search then needs no backend).
 * It judges `candidate` (reached from `parent`) against `root`, with
 * candidate class `candidate_class` (LEIR_VERIFY_CLASS_*), fills `out` and
 * returns LEIR_OK; another status stops the search. */
typedef leir_status (*leir_search_measure_fn)(void *payload, const leir_program *root,
                                              const leir_program *parent,
                                              const leir_program *candidate,
                                              uint32_t candidate_class,
                                              leir_search_measurement *out);

/** One evaluated proposal: a line of the trajectory. Strings are borrowed
 * (from the search while a record callback runs, from the result after). */
typedef struct leir_search_record {
  uint32_t size;              /**< sizeof(leir_search_record) */
  uint32_t sample;            /**< 1-based index among evaluated proposals */
  int32_t node;               /**< node id when accepted (the source program is 0), else -1 */
  int32_t parent;             /**< node id of the program it was proposed for */
  uint32_t depth;             /**< steps from the source program */
  const char *step;           /**< step text ("" when the proposal never became one) */
  const char *strategy;       /**< the step's strategy ("" when unknown) */
  const char *cot;            /**< chain of thought */
  const char *program;        /**< canonical text of the proposed program ("" if none) */
  uint64_t hash;              /**< its alpha hash (0 if none) */
  leir_search_reject reject;  /**< LEIR_REJECT_NONE when accepted */
  const char *reason;         /**< why rejected ("" when accepted) */
  int measured;               /**< 1 when verified (and timed when it passed) */
  int cached;                 /**< 1 when the measurement came from the database */
  leir_search_measurement m;  /**< the measurement (when measured) */
  double speedup;             /**< of this program over the source (path product), 0 if
                               * not accepted */
  double best_speedup;        /**< the best accepted speedup so far */
  double elapsed_s;           /**< wall time since the search started */
  /* Appended (check `size` before reading): */
  const char *proposed;       /**< the proposal as the policy gave it: a candidate's step
                               * text, a step or program text as written, or an
                               * unreadable answer's text (kept when rejected, so a
                               * trajectory shows what was asked for) */
  const char *raw;            /**< the policy's whole answer of the call that made this
                               * proposal (the LLM policy: the model's output, think
                               * block included); "" for other policies */
  /* Appended: where the seconds of this sample went (0 when it was not
   * measured now: rejected before measuring, taken from the database, or
   * measured by a `measure` callback). Check `size` before reading. */
  double compile_s;           /**< building the candidate's kernel (lowering and the
                               * compiler; the parent's kernel when it had none yet) */
  double verify_s;            /**< the verifier's judgement against the source (its
                               * runs on every input set; the kernel compiled above
                               * is reused) */
  double time_s;              /**< the paired timing comparison with the parent */
} leir_search_record;

/** Called after every record; a non-zero return cancels the search
 * (LEIR_ERR_CANCELLED, with the result so far). */
typedef int (*leir_search_record_fn)(void *payload, const leir_search_record *record);

/* ======================================================================
 * Options and running a search
 * ====================================================================== */

/** Options of leir_search_run. Start from LEIR_SEARCH_OPTIONS_INIT or
 * leir_search_options_init(). */
typedef struct leir_search_options {
  uint32_t size;                    /**< sizeof(leir_search_options) */
  leir_search_algorithm algorithm;  /**< default GREEDY */
  leir_search_policy policy;        /**< built-in policy when `propose` is NULL (default COST) */
  uint32_t max_samples;             /**< proposals evaluated (measured or reused), at most
                                     * (default 100; 0 = no limit) */
  double max_seconds;               /**< wall time (default 0 = no limit) */
  uint32_t max_depth;               /**< steps from the source program (default 8) */
  uint32_t width;                   /**< beam width (default 2) */
  uint32_t branching;               /**< proposals asked per expansion (default 4; MCTS
                                     * and chain ask for 1) */
  uint32_t retries;                 /**< external policies: calls in a row at one node
                                     * whose proposals were all rejected, after the
                                     * first, before the node is given up (default 3);
                                     * a call that gave a verified step that was only
                                     * not faster does not count and ends the row.
                                     * Built-in policies go down their list until it
                                     * is exhausted (or a budget ends the search) */
  double uct_c;                     /**< MCTS exploration constant (default 1.414) */
  uint32_t rollouts;                /**< MCTS: random one-step continuations measured from
                                     * each new node (default 0: the node is the simulation) */
  leir_search_reward reward;        /**< MCTS reward (default log speedup) */
  uint64_t seed;                    /**< random policy, rollouts (default 1) */
  leir_search_propose_fn propose;   /**< external policy (NULL: the built-in `policy`) */
  void *propose_payload;            /**< passed to `propose` */
  leir_search_measure_fn measure;   /**< testing/embedding: replaces verification and
                                     * timing (NULL: the backend's verifier and
                                     * leir_kernels_compare) */
  void *measure_payload;            /**< passed to `measure` */
  leir_search_record_fn on_record;  /**< called after every record (may be NULL) */
  void *record_payload;             /**< passed to `on_record` */
  leir_db *db;                      /**< measurement database (borrowed; NULL: none) */
  const char *machine;              /**< machine fingerprint (NULL: computed) */
  const leir_compare_options *compare;   /**< timing comparison (NULL: defaults) */
  const leir_verifier_options *verifier; /**< verification (NULL: defaults) */
  const leir_candidates_options *candidates; /**< candidate enumeration (NULL: defaults) */
  const volatile int *cancel;       /**< when non-NULL and *cancel != 0, the search stops
                                     * (LEIR_ERR_CANCELLED) */
  uint32_t flags;                   /**< LEIR_SEARCH_* */
  /* Model-guided lookahead (cost policy only; docs/search.md "Lookahead in
   * the model"). Added after `flags`: a caller's smaller struct gets the
   * defaults (off). */
  uint32_t lookahead_depth;         /**< steps of the beam search in the cost model at each
                                     * node before anything is measured; its best sequence
                                     * is proposed as one macro-step (default 0: off) */
  uint32_t lookahead_width;         /**< programs kept per level of that beam (default 32) */
  uint64_t lookahead_evals;         /**< cost-model evaluations per node, at most
                                     * (default 200000; 0 = no limit) */
  double lookahead_seconds;         /**< wall time per node, at most (default 20; 0 = no
                                     * limit) */
} leir_search_options;

/** Do not re-measure the best program against the source at the end (its
 * speedup is then the path product). */
#define LEIR_SEARCH_NO_FINAL_COMPARE 0x1u

/** Defaults of leir_search_options. */
#define LEIR_SEARCH_OPTIONS_INIT                                                        \
  { .size = (uint32_t)sizeof(leir_search_options),                                      \
    .algorithm = LEIR_SEARCH_GREEDY,                                                    \
    .policy = LEIR_POLICY_COST,                                                         \
    .max_samples = 100u,                                                                \
    .max_seconds = 0.0,                                                                 \
    .max_depth = 8u,                                                                    \
    .width = 2u,                                                                        \
    .branching = 4u,                                                                    \
    .retries = 3u,                                                                      \
    .uct_c = 1.414,                                                                     \
    .rollouts = 0u,                                                                     \
    .reward = LEIR_REWARD_LOG_SPEEDUP,                                                  \
    .seed = 1u,                                                                         \
    .flags = 0u,                                                                        \
    .lookahead_depth = 0u,                                                              \
    .lookahead_width = 32u,                                                             \
    .lookahead_evals = 200000u,                                                         \
    .lookahead_seconds = 20.0 /* callbacks, payloads and borrowed pointers NULL */ }

/** Fills the first `size` bytes of `*opts` with the defaults and sets its
 * size field. Errors: LEIR_ERR_ARGUMENT. */
LEIR_API leir_status leir_search_options_init(leir_search_options *opts, size_t size);

/** The result of a search. Opaque; caller frees with leir_search_result_free. */
typedef struct leir_search_result leir_search_result;

/** Searches from `program` (which must pass its checks; its signature, or
 * the inferred one, is kept) on `backend` (borrowed; may be NULL only with
 * a `measure` callback). On LEIR_OK *out is the result (budgets end a
 * search normally); on LEIR_ERR_CANCELLED (the `cancel` flag, or a record
 * callback that returned non-zero) *out holds the result so far; on other
 * errors *out is NULL. Caller frees *out with leir_search_result_free.
 * Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_INVALID / _SIGNATURE (the program),
 * LEIR_ERR_CANCELLED, LEIR_ERR_NO_DEVICE, LEIR_ERR_NOMEM, LEIR_ERR_IO (the
 * database), and what a callback returned. */
LEIR_API leir_status leir_search_run(leir_search_result **out, leir_backend *backend,
                                     const leir_program *program,
                                     const leir_search_options *opts);

/** NULL is a no-op. */
LEIR_API void leir_search_result_free(leir_search_result *result);

/** Number of records (evaluated proposals). */
LEIR_API size_t leir_search_result_record_count(const leir_search_result *result);
/** Record i (borrowed from the result); NULL when out of range. */
LEIR_API const leir_search_record *leir_search_result_record(const leir_search_result *result,
                                                             size_t i);

/** Why a search ended (leir_search_summary.stopped_by). */
typedef enum leir_search_stop {
  LEIR_SEARCH_STOP_EXHAUSTED = 0, /**< no node left to expand (or every proposal failed) */
  LEIR_SEARCH_STOP_SAMPLES = 1,   /**< max_samples proposals evaluated */
  LEIR_SEARCH_STOP_TIME = 2,      /**< max_seconds of wall time */
  LEIR_SEARCH_STOP_CANCELLED = 3  /**< the `cancel` flag, or a record callback returned non-zero */
} leir_search_stop;

/** Summary figures of a result. */
typedef struct leir_search_summary {
  uint32_t size;            /**< sizeof(leir_search_summary); set by the caller */
  uint32_t samples;         /**< proposals evaluated */
  uint32_t measured;        /**< of those, measured now */
  uint32_t reused;          /**< of those, taken from the database */
  uint32_t accepted;        /**< nodes made (the source program not counted) */
  uint32_t rejected;        /**< proposals rejected */
  uint32_t best_depth;      /**< steps from the source to the best program */
  double best_speedup;      /**< path product of the best program (1 when none) */
  double final_speedup;     /**< best against source measured side by side at the end
                             * (the path product with LEIR_SEARCH_NO_FINAL_COMPARE) */
  double final_lo;          /**< its confidence interval */
  double final_hi;          /**< upper end */
  double source_median_s;   /**< the source program's median in that comparison */
  double best_median_s;     /**< the best program's */
  double seconds;           /**< wall time of the search */
  int stopped_by;           /**< why the search ended: a leir_search_stop */
  uint32_t lookaheads;      /**< lookaheads run in the cost model (nodes searched) */
  uint64_t lookahead_evals; /**< cost-model evaluations they made */
  /** Measurements the database could not keep: a write failed (another
   * process held its lock past the 10 s busy timeout, a full disk), the
   * rest of the run kept its rows in memory, and writing them again when
   * the search ended (at most 3 rounds, none started after 15 s; one round
   * when cancelled) failed too. The search and its results are complete;
   * only the cache misses them. Added with this field: a smaller `size`
   * does not get it. */
  uint32_t db_unsaved;
  /** Of the rows a failed write left unsaved during the run, those written
   * when the search ended (not counted in db_unsaved). Added with this
   * field. */
  uint32_t db_saved_late;
  /* Appended (a smaller `size` does not get them): the cost of the measured
   * samples, split by phase (sums of the records' compile_s, verify_s and
   * time_s), the final side-by-side comparison, and sample efficiency. */
  double compile_s;         /**< building kernels, all samples */
  double verify_s;          /**< verification, all samples */
  double time_s;            /**< timing comparisons, all samples */
  double final_compare_s;   /**< the final comparison of best and source */
  /** Samples evaluated (1-based) until the best speedup so far first
   * reached 95% of the run's best (path products); 0 when nothing was
   * accepted. */
  uint32_t samples_to_95;
  double seconds_to_95;     /**< wall time of the search at that sample */
  /** Seconds before the first proposal: the source's checks and the
   * verifier's set-up (the source's reference outputs on every input set). */
  double setup_s;
} leir_search_summary;

/** Fills the first out->size bytes of *out. Errors: LEIR_ERR_ARGUMENT. */
LEIR_API leir_status leir_search_result_summary(const leir_search_result *result,
                                                leir_search_summary *out);

/** The best program (borrowed from the result; the source program when no
 * step was accepted). */
LEIR_API const leir_program *leir_search_result_best(const leir_search_result *result);

/** The steps from the source to the best program, one step text per line
 * (empty when none). Caller frees *out with leir_free. */
LEIR_API leir_status leir_search_result_best_steps(const leir_search_result *result, char **out,
                                                   size_t *out_len);

/** A record as one JSON object (one line, no newline): sample, node, parent,
 * depth, step, strategy, cot, verdict, reject, reason, accepted, cached,
 * timing {median_s, q1_s, q3_s, spread, parent_median_s, ratio, ratio_lo,
 * ratio_hi, rounds, order}, speedup, best_speedup, elapsed_s, hash.
 * Caller frees *out with leir_free. */
LEIR_API leir_status leir_search_record_json(const leir_search_record *record, char **out,
                                             size_t *out_len);

/** An SVG image (a standalone file) of the best speedup so far against the
 * samples evaluated. Caller frees *out with leir_free. */
LEIR_API leir_status leir_search_result_plot_svg(const leir_search_result *result, char **out,
                                                 size_t *out_len);

/* ======================================================================
 * Keys of the measurement database
 * ====================================================================== */

/** The machine fingerprint: 16 hex digits of a hash of the CPU model, the
 * online CPUs, the architecture and `threads` (0: the online CPUs). Writes
 * at most `cap` bytes including the NUL. Errors: LEIR_ERR_ARGUMENT. */
LEIR_API leir_status leir_search_machine_fingerprint(uint32_t threads, char *buf, size_t cap);

/** The timing protocol's name for the database key: the comparison options
 * and the verifier options that change a result (NULL: defaults), e.g.
 * "compare/w3/r10-400/t20/c0.99/e0.02/s1/flush;verify/s1/k3/...". Writes at
 * most `cap` bytes including the NUL. Errors: LEIR_ERR_ARGUMENT. */
LEIR_API leir_status leir_search_protocol(const leir_compare_options *compare,
                                          const leir_verifier_options *verifier, char *buf,
                                          size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* LEIR_EXPERIMENTAL_SEARCH_H */
