/**
 * @file
 * libleir — strategies: the catalogue of the 44 Step-TP rewrites, steps as
 * data, candidate enumeration, application, explanations, grounding and
 * chain-of-thought text (spec/strategies.md).
 *
 * A strategy is a pure function of a program: `apply(program, step)` returns
 * a new program and never modifies its input. A step is data: a strategy
 * name plus key=value parameters, printable as one line of text
 * ("loop_tiling nest=0 loops=tx,a factors=2,2") and as JSON, so trajectories
 * can be saved and replayed and an LLM answer can be grounded. The same
 * program and the same step give the same output, byte for byte.
 *
 * Every candidate is classed exact (bitwise identical results) or
 * reassociating (floating-point rounding may differ). Candidates always pass
 * leir_program_check.
 *
 * Thread rules: the catalogue is immutable static data. A candidate list is
 * read-only once listed: the functions taking a const list (count, step,
 * exactness, apply, assumed, to_json) may run on one list from several
 * threads at once; leir_candidates_free needs it to itself. Steps and
 * explanations follow the usual rule: not shared between threads without
 * locking; distinct handles are independent. A program is read-only here,
 * so threads may list, apply, explain and ground on one shared program at
 * once.
 * See include/leir/common.h for the general conventions.
 */
#ifndef LEIR_STRATEGY_H
#define LEIR_STRATEGY_H

#include "leir/common.h"
#include "leir/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================
 * Catalogue
 * ====================================================================== */

/** Level of a strategy: what part of a program it rewrites. */
typedef enum leir_level {
  LEIR_LEVEL_GRAPH = 0, /**< rewrites the sequence of nests */
  LEIR_LEVEL_OPERATOR,  /**< rewrites the loops of one nest */
  LEIR_LEVEL_MEMORY,    /**< rewrites storage: scopes, layouts, copies, index tables */
  LEIR_LEVEL_MATH       /**< rewrites the arithmetic of equations */
} leir_level;

/** "graph", "operator", "memory", "math"; static storage; "" if invalid. */
LEIR_API const char *leir_level_name(leir_level level);

/** A row of the catalogue. Rows are static and never change; later versions
 * may append fields, so read them through the pointer
 * leir_strategy_info_at returns. */
typedef struct leir_strategy_info {
  uint32_t index;          /**< position in the catalogue (spec/strategies.md §2) */
  const char *name;        /**< catalogue name, e.g. "loop_tiling" */
  leir_level level;        /**< what it rewrites */
  const char *summary;     /**< one line: what it does */
  const char *definition;  /**< one sentence: the first sentence of its CoT */
  const char *benefit;     /**< one sentence: why it may help performance */
  int implemented;         /**< 1 when this build can enumerate and apply it */
} leir_strategy_info;

/** Number of strategies in the catalogue (44 in this version; later versions
 * may append rows). Indices are 0..count-1 and follow spec/strategies.md §2. */
LEIR_API size_t leir_strategy_count(void);

/** Row `index` of the catalogue (static storage), or NULL when out of range. */
LEIR_API const leir_strategy_info *leir_strategy_info_at(size_t index);

/** Index of a strategy by catalogue name. Errors: LEIR_ERR_NOT_FOUND (the
 * message suggests the closest name), LEIR_ERR_ARGUMENT. */
LEIR_API leir_status leir_strategy_find(const char *name, size_t *index);

/* ======================================================================
 * Exactness
 * ====================================================================== */

/** Exactness class of a step: how its results compare with the original's. */
typedef enum leir_exactness {
  LEIR_EXACT = 0,        /**< bitwise identical results under spec/leir.md */
  LEIR_REASSOCIATING = 1 /**< equal in exact arithmetic; rounding may differ */
} leir_exactness;

/** "exact", "reassociating"; static storage. */
LEIR_API const char *leir_exactness_name(leir_exactness exactness);

/* ======================================================================
 * Steps
 *
 * Text form: the strategy name, then space-separated KEY=VALUE parameters
 * in the strategy's canonical key order; list values are comma-separated
 * ("loops=tx,a"). JSON form: {"strategy":"loop_tiling","nest":0,
 * "loops":["tx","a"],"factors":[2,2]}. docs/strategies.md lists every
 * strategy's keys. Parameters name existing loops and tensors only, so a
 * step never depends on the fresh names it creates.
 * ====================================================================== */

/** One step: a strategy plus its parameters. Opaque; made by
 * leir_step_parse or leir_step_clone (caller frees with leir_step_free), or
 * borrowed from a candidate list. */
typedef struct leir_step leir_step;

/** Parses a step in text or JSON form (JSON when the first non-blank byte
 * is '{'); `len` bytes, NUL not required. The step is validated against the
 * strategy's parameter schema (keys, value types) and canonicalized, not
 * against a program. Caller frees *out with leir_step_free.
 * Errors: LEIR_ERR_PARSE (message says what is wrong), LEIR_ERR_NOT_FOUND
 * (unknown strategy), LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_step_parse(leir_step **out, const char *text, size_t len);

/** NULL is a no-op. */
LEIR_API void leir_step_free(leir_step *step);

/** Deep copy. Caller frees *out with leir_step_free. */
LEIR_API leir_status leir_step_clone(leir_step **out, const leir_step *step);

/** Canonical text form; borrowed, valid while the step lives. */
LEIR_API const char *leir_step_text(const leir_step *step);

/** Strategy index of the step. */
LEIR_API size_t leir_step_strategy(const leir_step *step);

/** Number of parameters of the step (0 for NULL). */
LEIR_API size_t leir_step_param_count(const leir_step *step);
/** Parameter i in canonical key order: *key is static storage, *value is
 * borrowed from the step (not NUL-terminated; *value_len bytes).
 * Errors: LEIR_ERR_ARGUMENT for NULL or i out of range. */
LEIR_API leir_status leir_step_param(const leir_step *step, size_t i, const char **key,
                                     const char **value, size_t *value_len);

/** JSON form (one line). Caller frees *out with leir_free. */
LEIR_API leir_status leir_step_to_json(const leir_step *step, char **out, size_t *out_len);

/* ======================================================================
 * Candidates
 * ====================================================================== */

/** Options of leir_candidates_list and leir_ground. Start from
 * LEIR_CANDIDATES_OPTIONS_INIT or leir_candidates_options_init(). */
typedef struct leir_candidates_options {
  uint32_t size;          /**< sizeof(leir_candidates_options) */
  int32_t strategy;       /**< catalogue index, or -1 for every implemented one */
  uint32_t vector_width;  /**< widest loop loop_vectorization may mark V (default 8) */
  uint64_t max_candidates; /**< 0 = unlimited; more: LEIR_ERR_LIMIT */
  /** Added in 0.1.0 (a smaller `size` gets 0): LEIR_CANDIDATES_* flags. */
  uint32_t flags;
} leir_candidates_options;

/** loop_split and loop_tiling offer every divisor 1 < d < n of an extent n
 * as the outer extent, not only those up to sqrt(n) (the reference's domain,
 * the default, which datasets keep): a search can then reach an inner loop
 * of any size (a 512 loop split 64 x 8 for an 8-wide vector). Steps outside
 * the reference domain apply through the list (leir_candidates_apply), as
 * listed steps or their JSON form (leir_step_apply); the text of such a step
 * parsed alone is refused by leir_step_apply (the reference domain). */
#define LEIR_CANDIDATES_ALL_DIVISORS 0x1u

/** The split strategies (exponential_split, multiplicative_split,
 * additive_split) also list the splits whose numerical condition is only
 * assumed, not proven: under the "generic values" assumption (every value
 * finite; a value that is not a constant and not structurally zero is
 * non-zero), the reference's own, sympy's assumption about symbols. Such a
 * candidate is never LEIR_EXACT, and leir_candidates_assumed
 * (leir/experimental/candidates.h) tells it from a proven one. Refused even
 * then (rule split.structural or split.compared; docs/strategies.md lists
 * them): a y derived from an infinite constant (a -inf mask) or from an
 * exp, a divisor y that is structurally 0 on some inputs (a bool or
 * comparison value, a constant 0, a max/min with 0, a saturating 1+erf), a
 * constant y, a loop of extent 1, and the classes that verifying every
 * assumed candidate found MISMATCH (argmax's comparison, normalizations,
 * exponents of matmul outputs). Without the flag (the default, what search
 * and datasets propose) a split never introduces an inf or NaN the
 * original avoids.
 * leir_ground sets this flag for the split strategies: grounding asks
 * whether an answer is one step of a strategy; whether it is equivalent is
 * the verifier's question. */
#define LEIR_CANDIDATES_GENERIC_VALUES 0x2u

/** operator_fusion also fuses two nests over their first K loops only
 * (`nest=N depth=K`, the largest K that is legal) when they cannot share
 * all of them: `L_a L_c[e1;]; L_a L_d[e2;];` becomes
 * `L_a[L_c[e1;]; L_d[e2;];];`, each nest's remaining loops a nested nest.
 * This puts the passes of a row-wise reduction (softmax's maximum, sum and
 * quotient) under one row loop, which the reference's fusion (identical
 * loops, no dependence over any of them) cannot. Outside the reference's
 * domain, like LEIR_CANDIDATES_ALL_DIVISORS: such steps apply through the
 * list, not as text parsed alone (see LEIR_CANDIDATES_ALL_DIVISORS). */
#define LEIR_CANDIDATES_PARTIAL_FUSION 0x4u

/** reduction_factorization also offers its lanes form (`loop=K lanes=L`,
 * L the vector_width above, dividing K's extent): one partial result per
 * vector lane, `P_{s,l} = P_{s,l} op f[K -> K*L+l]` with `V^{L}_{l}`
 * innermost, then `X_s = X_s op P_{s,l}` over the lanes (TVM's rfactor),
 * so that a reduction (a softmax's row maximum or sum) vectorizes in one
 * step. Reassociating for sums and products, exact for max and min.
 * Outside the reference's domain, like LEIR_CANDIDATES_ALL_DIVISORS. */
#define LEIR_CANDIDATES_REDUCTION_LANES 0x8u

/** Defaults of leir_candidates_options: every implemented strategy, vector
 * width 8, no limit, the reference's split domain. */
#define LEIR_CANDIDATES_OPTIONS_INIT \
  { (uint32_t)sizeof(leir_candidates_options), -1, 8u, 0u, 0u }

/** Fills the first `size` bytes of `*opts` with the defaults of LEIR_CANDIDATES_OPTIONS_INIT
 * and sets `opts->size` to `size`; pass `sizeof *opts` (bindings, which
 * cannot expand the macro, pass the size of the struct they declare).
 * Errors: LEIR_ERR_ARGUMENT (`opts` NULL, or `size` smaller than the size
 * field or larger than this library's struct). */
LEIR_API leir_status leir_candidates_options_init(leir_candidates_options *opts, size_t size);

/** A list of candidate steps bound to the program they were listed for.
 * Opaque; caller frees with leir_candidates_free. */
typedef struct leir_candidates leir_candidates;

/** Enumerates every applicable step of the selected strategies on `program`
 * (complete and deterministic: strategies in catalogue order, then sites in
 * program order, then parameters in their documented order). The program
 * must pass leir_program_check and must outlive the list (it is borrowed,
 * for leir_candidates_apply). `opts` may be NULL. Caller frees *out.
 * Errors: LEIR_ERR_INVALID / LEIR_ERR_SIGNATURE / LEIR_ERR_LIMIT (the
 * program fails its checks), LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_candidates_list(leir_candidates **out, const leir_program *program,
                                          const leir_candidates_options *opts);

/** Releases the list and the steps borrowed from it (not the program).
 * NULL is a no-op. */
LEIR_API void leir_candidates_free(leir_candidates *candidates);
/** Number of candidates (0 for NULL). */
LEIR_API size_t leir_candidates_count(const leir_candidates *candidates);

/** Step i (borrowed from the list); NULL when i is out of range. */
LEIR_API const leir_step *leir_candidates_step(const leir_candidates *candidates, size_t i);

/** Exactness class of candidate i (LEIR_EXACT when i is out of range). */
LEIR_API leir_exactness leir_candidates_exactness(const leir_candidates *candidates, size_t i);

/** Applies candidate i to the listed program without re-validating it (the
 * fast path for searches and benchmarks). Caller frees *out.
 * Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_candidates_apply(leir_program **out, const leir_candidates *candidates,
                                           size_t i);

/** leir_candidates_to_json: also apply every candidate and give its
 * canonical text as "result" (costs one application per candidate). */
#define LEIR_CANDIDATES_JSON_RESULT 0x1u

/** The list as one JSON array (one line, no trailing newline), one object per
 * candidate in list order:
 *   {"index":0,"strategy":"loop_split","step":"loop_split nest=0 ...",
 *    "json":{...the leir_step_to_json form...},"class":"exact",
 *    "result":"..."}                      (result only with _JSON_RESULT)
 * Every field of a candidate is there, so bindings need no struct mirrors.
 * Caller frees *out with leir_free; *out_len (may be NULL) gets the length.
 * Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM, and those of
 * leir_candidates_apply with _JSON_RESULT. */
LEIR_API leir_status leir_candidates_to_json(const leir_candidates *candidates, uint32_t flags,
                                             char **out, size_t *out_len);

/* ======================================================================
 * Applying one step
 * ====================================================================== */

/** Applies `step` to `program`: the step must be one of the program's
 * candidates (it is checked) in the domain the step carries: the reference
 * domain (the default options) for a step parsed from text, the domain of
 * its listing for a step of a candidate list (LEIR_CANDIDATES_* flags,
 * vector_width), for a clone of one, and for one parsed from its JSON form
 * (leir_step_to_json writes the listing's "listing_flags" and
 * "listing_vector_width" when they are not the defaults). So a step listed
 * with any flags replays through leir_step_to_json, leir_step_parse and
 * leir_step_apply to the alpha hash that leir_candidates_apply gives; a
 * trace kept as step texts replays with the options it was listed with
 * (leir_step_apply_listed, leir/experimental/candidates.h). On success *out is the new program (caller
 * frees; it keeps the input's signature and name) and *exactness (may be
 * NULL) its class. Errors: LEIR_ERR_NOT_APPLICABLE with the failed
 * precondition in the last error (rule and subject name it),
 * LEIR_ERR_UNSUPPORTED (strategy not implemented in this build),
 * LEIR_ERR_INVALID (the program fails its checks), LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_step_apply(leir_program **out, const leir_program *program,
                                     const leir_step *step, leir_exactness *exactness);

/* ======================================================================
 * Explanations
 * ====================================================================== */

/** One finding: a candidate (applies = 1; `site` holds its parameters,
 * `message` the step and its class) or a precondition that fails (applies = 0;
 * `rule` names the precondition, `message` says what fails). Strings are
 * borrowed from the explanation. */
typedef struct leir_reason {
  int applies;         /**< 1: a candidate; 0: a precondition that fails */
  const char *site;    /**< "nest=0 loop=a", "tensor=D", "" for the whole program */
  const char *rule;    /**< "loop.not-parallel-safe", ... ("" when applies) */
  const char *message; /**< the step and its class, or what fails */
} leir_reason;

/** The findings of leir_strategy_explain. Opaque; caller frees with
 * leir_explanation_free. */
typedef struct leir_explanation leir_explanation;

/** Why strategy `strategy` does or does not apply to `program`: every site
 * it considers, with the candidates found there or the first precondition
 * that fails. Returns LEIR_OK whether or not it applies (see
 * leir_explanation_candidates). Caller frees *out.
 * Errors: LEIR_ERR_ARGUMENT (bad index), LEIR_ERR_INVALID / _SIGNATURE /
 * _LIMIT (the program fails its checks), LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_strategy_explain(leir_explanation **out, const leir_program *program,
                                           size_t strategy);

/** Releases the explanation and its strings. NULL is a no-op. */
LEIR_API void leir_explanation_free(leir_explanation *explanation);
/** Number of candidates found (0 = the strategy does not apply). */
LEIR_API size_t leir_explanation_candidates(const leir_explanation *explanation);
/** Number of findings (candidates and failed preconditions; 0 for NULL). */
LEIR_API size_t leir_explanation_count(const leir_explanation *explanation);
/** Finding i (borrowed); NULL when out of range. */
LEIR_API const leir_reason *leir_explanation_get(const leir_explanation *explanation, size_t i);
/** Human-readable text, one finding per line. Caller frees with leir_free. */
LEIR_API leir_status leir_explanation_text(const leir_explanation *explanation, char **out,
                                           size_t *out_len);

/* ======================================================================
 * Grounding
 * ====================================================================== */

/** Every candidate step of `before` whose result equals `after` up to fresh
 * names (leir_program_hash_alpha, with `before`'s signature when `after`
 * has none). `opts` selects strategies as for leir_candidates_list (may be
 * NULL); the split strategies are enumerated with
 * LEIR_CANDIDATES_GENERIC_VALUES. *out lists the matches (possibly none)
 * and is bound to `before`: leir_candidates_apply applies them.
 *
 * Verification-gated splits: when nothing matches and `opts` selects every
 * strategy or one of the three splits, a second pass enumerates the split
 * strategies with the refusals of the generic mode lifted and with shifts of
 * compound and constant subscripts (`if_then_else(d*3+g-1<0,1,A_{..,d*3+g-1})`).
 * Such a match is kept only when both its result and `after` verify EQUAL
 * or CLOSE against `before` on the "interp" backend (a leir_verifier),
 * each run capped at 64 MiB of buffers and 2^26 equation evaluations, a
 * program's run on the 3 input sets at about 5 s, at most 4 verifications
 * per call; it is LEIR_REASSOCIATING and
 * leir_candidates_assumed returns 1 for it. Such a step carries the gated
 * domain (LEIR_CANDIDATES_GATED_SPLITS, leir/experimental/candidates.h):
 * it, its clone and its JSON form replay through leir_step_apply (since
 * 0.2.0; its text alone is refused, as before). The calling thread's last error (leir_error_last,
 * leir_error_sequence) is left as it was by these internal calls.
 * docs/strategies.md, "Gated grounding".
 * Caller frees *out. Errors as for leir_candidates_list. */
LEIR_API leir_status leir_ground(leir_candidates **out, const leir_program *before,
                                 const leir_program *after, const leir_candidates_options *opts);

/* ======================================================================
 * Chain of thought (spec/strategies.md §4)
 * ====================================================================== */

/** The CoT text of applying `step` to `program`: the strategy's definition,
 * "Under the given IR, ..." facts quoted from the structural diff of the
 * program before and after the step, and why it may help. Deterministic.
 * Caller frees *out with leir_free. Errors as for leir_step_apply. */
LEIR_API leir_status leir_step_cot(char **out, size_t *out_len, const leir_program *program,
                                   const leir_step *step);

#ifdef __cplusplus
}
#endif
#endif /* LEIR_STRATEGY_H */
