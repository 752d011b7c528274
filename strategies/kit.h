/*
 * The strategy kit: everything a strategy calls, and nothing of the public
 * API that runs strategies (registry.h, api.h). A strategy file includes
 * this header (or loop_sites.h / memory_sites.h, which include it) and
 * defines one `const leir__strategy_impl leir__NAME` with designated
 * initializers; its catalogue line (catalogue.def) does the rest.
 *
 * Every strategy is one `enumerate` function and one `apply` function.
 * `enumerate` walks the program's sites in a fixed order and calls
 * leir__emit for every applicable step (its canonical text and exactness)
 * and LEIR__REJECT for every precondition that fails. The engine runs the
 * same function in three modes, so candidates, validation of a given step
 * and explanations can never disagree:
 *   - list:    collect every emitted step (leir_candidates_list);
 *   - match:   find one given step and its class (leir_step_apply);
 *   - explain: also record every rejection with its site and rule.
 * `apply` edits a clone of the program and may assume the step was emitted
 * by `enumerate` for that program.
 *
 * This header: strategy ids and rules, step parameters, the implementation
 * record, the context (context.c), emitting and rejecting (emit.c), site
 * iterators over nests, equations and sub-expressions (sites.c), the
 * chain-of-thought fact hooks (cot.c). deps.h: dependences in a nest
 * (deps.c). rewrite.h: rewriting helpers, copy nests, GPU axes
 * (rewrite.c) and fresh names (names.c).
 */
#ifndef LEIR_STRATEGIES_KIT_H
#define LEIR_STRATEGIES_KIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "ir.h"
#include "leir/strategy.h"
#include "strbuf.h"
#include "vec.h"
#include "visit.h"

/* ---- strategy ids (catalogue.def) ----------------------------------------- */

/* LEIR__S_loop_reorder = 9, ...; LEIR__NSTRATEGIES = 44. */
typedef enum leir__strategy_id {
#define LEIR__STRATEGY(index, name, level, summary, definition, benefit) LEIR__S_##name = index,
#include "catalogue.def"
  LEIR__NSTRATEGIES
} leir__strategy_id;

/* ---- rules (rules.def) ------------------------------------------------------ */

typedef enum leir__rule {
#define LEIR__RULE(id, name, meaning) LEIR__R_##id,
#include "rules.def"
  LEIR__NRULES
} leir__rule;

typedef struct leir__rule_info {
  const char *name;    /* "loop.dependence" */
  const char *meaning; /* one line */
} leir__rule_info;

extern const leir__rule_info leir__rules[LEIR__NRULES];
static inline const char *leir__rule_name(leir__rule r) { return leir__rules[r].name; }
/* The rule called `name`, or -1. */
int leir__rule_find(const char *name);

/* ---- step parameters (params.def, params.c) ------------------------------------ */

typedef enum leir__key {
#define LEIR__PARAM(id, name, type, list, words) LEIR__K_##id,
#include "params.def"
  LEIR__K_COUNT
} leir__key;

#define LEIR__KEY(k) (1u << (k))

typedef struct leir__tok {
  const char *s;
  uint32_t len;
} leir__tok;

#define LEIR__STEP_MAX_PARAMS 12
#define LEIR__STEP_MAX_TOKENS 96

/* A parsed step; tokens point into the text it was parsed from (owned by
 * the caller). Parameters are sorted by key. */
typedef struct leir__pstep {
  int strategy;
  uint32_t nparams;
  struct {
    uint8_t key;
    uint8_t ntok;
    uint8_t tok0;
  } params[LEIR__STEP_MAX_PARAMS];
  uint32_t ntoks;
  leir__tok toks[LEIR__STEP_MAX_TOKENS];
} leir__pstep;

/* Parameter with key k (its first token; *ntok tokens), or NULL. */
const leir__tok *leir__ps_get(const leir__pstep *ps, leir__key k, uint32_t *ntok);
/* Value helpers (false when absent or malformed). */
bool leir__tok_int(const leir__tok *t, int64_t *v);
bool leir__tok_eq(const leir__tok *t, const char *s);

/* ---- the implementation record ------------------------------------------------ */

typedef struct leir__sctx leir__sctx;
typedef struct leir__diff leir__diff;

/* What a strategy file defines, with designated initializers:
 *
 *   const leir__strategy_impl leir__loop_split = {
 *       .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_LOOP) | LEIR__KEY(LEIR__K_FACTOR),
 *       .required = ...same...,
 *       .enumerate = enumerate,
 *       .apply = apply,
 *       .cot = leir__cot_loop_facts,
 *   };
 */
typedef struct leir__strategy_impl {
  uint32_t keys;     /* allowed parameter keys (LEIR__KEY bits) */
  uint32_t required; /* keys every step must have */
  void (*enumerate)(leir__sctx *c);
  /* Edits `out`, a clone of c->p, as step `ps` says. Builders longjmp on
   * allocation failure (out->oom_jmp is set by the caller). */
  leir_status (*apply)(leir__sctx *c, const leir__pstep *ps, leir_program *out);
  /* The "Under the given IR, ..." facts of the chain of thought, from the
   * diff of the program before and after the step; false (or NULL) falls
   * back to the generic facts. */
  bool (*cot)(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps);
  /* Top-level nests a `nest=N` site changes: N .. N+span-1 (0 means 1);
   * the graph strategies that swap, fuse or inline two consecutive nests
   * set 2 (leir_ground widens the region it compares). */
  uint8_t span;
} leir__strategy_impl;

/* ---- the program as the strategies see it (context.c) --------------------------- */

#define LEIR__MAX_PATH 16

/* A nest anywhere in the program. */
typedef struct leir__nref {
  const leir_nest *nest;
  uint32_t depth;                /* path length; 1 = top level */
  uint32_t path[LEIR__MAX_PATH]; /* top-level index, then item indices */
  uint32_t outer;                /* loops of the enclosing nests */
  int32_t parent;                /* index of the enclosing nest, -1 at top level */
  bool has_nested;               /* some item is a nest */
  uint32_t neqs;                 /* equations directly in this nest */
  char label[LEIR__MAX_PATH * 11];
} leir__nref;

typedef struct leir__deps leir__deps;

typedef enum leir__mode { LEIR__MODE_LIST = 0, LEIR__MODE_MATCH, LEIR__MODE_EXPLAIN } leir__mode;

/* Where LIST mode puts emitted steps (the storage of a leir_candidates). */
typedef struct leir__steplist {
  LEIR__VEC(leir_step) steps;
  leir__arena text;
} leir__steplist;

/* Where EXPLAIN mode puts findings (the storage of a leir_explanation). */
typedef struct leir__findings {
  size_t ncand;
  LEIR__VEC(leir_reason) r;
  leir__arena text;
} leir__findings;

/* The public step handle. Steps listed in a leir_candidates point into the
 * list's storage (owned = 0); parsed steps own their text. A step also
 * carries the domain of the listing it came from (the LEIR_CANDIDATES_*
 * flags and vector width that widen what is a candidate), so that
 * leir_step_apply replays it: the reference domain (0, 8) for a step parsed
 * from text, the listing's for a listed step, its clones and its JSON form
 * (the "listing" member). */
struct leir_step {
  uint16_t strategy;
  uint8_t exactness;
  uint8_t owned;
  uint32_t len;
  const char *text;
  uint32_t domain_flags;   /* LEIR__DOMAIN_FLAGS of the listing */
  uint32_t vector_width;   /* of the listing; 8 by default */
};

/* The vector width of the reference domain (LEIR_CANDIDATES_OPTIONS_INIT). */
#define LEIR__REFERENCE_VECTOR_WIDTH 8u
/* Was the step listed outside the reference domain? */
#define leir__step_domain_widened(s)                                                         \
  ((s)->domain_flags != 0 || (s)->vector_width != LEIR__REFERENCE_VECTOR_WIDTH)
/* The listing flags that widen the set of candidates (what a replay needs). */
#define LEIR__DOMAIN_FLAGS                                                                   \
  (LEIR_CANDIDATES_ALL_DIVISORS | LEIR_CANDIDATES_GENERIC_VALUES |                            \
   LEIR_CANDIDATES_PARTIAL_FUSION | LEIR_CANDIDATES_REDUCTION_LANES)
/* A step of leir_ground's gated pass (split_relaxed below): it replays in
 * that domain. The public LEIR_CANDIDATES_GATED_SPLITS
 * (leir/experimental/candidates.h); a step's bit, never a listing option. */
#define LEIR__DOMAIN_GATED 0x100u
/* Every bit a step's domain (and its JSON "listing_flags") may carry. */
#define LEIR__REPLAY_FLAGS (LEIR__DOMAIN_FLAGS | LEIR__DOMAIN_GATED)

struct leir__sctx {
  const leir_program *p;
  leir__analysis *a;
  leir_candidates_options o;
  bool *known;             /* by symbol: a signature variable */
  uint32_t nnests;
  leir__nref *nests;       /* pre-order: a nest before the nests inside it */
  leir__deps **deps;       /* by nest, computed on first use */
  uint64_t next_tensor;    /* alphabet index of the first fresh tensor name */
  /* the strategy being enumerated and where its steps go */
  int strategy;
  const char *strategy_name;
  leir__mode mode;
  leir__steplist *list;    /* LIST */
  const char *want;        /* MATCH: canonical text of the wanted step */
  size_t want_len;
  const leir__tok *want_nest; /* MATCH: its `nest` parameter (sites elsewhere are skipped) */
  const leir__tok *want_tensor; /* MATCH: its `tensor` parameter */
  bool found;
  leir_exactness found_class;
  leir__findings *ex;      /* EXPLAIN */
  leir__strbuf sb;         /* step text being emitted */
  char site[256];          /* scratch for LEIR__REJECT sites */
  leir_status status;      /* sticky failure (no memory, limit) */
  /* leir_ground's verification-gated second pass only (ground.c): the split
   * strategies lift their refusals and also shift a compound subscript
   * (split_sites.h). Never set by leir_candidates_list, so candidate lists
   * do not change; every step found this way is verified before it counts. */
  bool split_relaxed;
};

/* Builds the context of a valid program (analysis, nests, fresh names). */
leir_status leir__sctx_new(leir__sctx **out, const leir_program *p,
                           const leir_candidates_options *opts);
void leir__sctx_free(leir__sctx *c);

/* ---- emitting and rejecting (emit.c) -------------------------------------------- */

/* Emits a candidate: the strategy name, a space, then the printf-formatted
 * parameters (canonical order). */
void leir__emit(leir__sctx *c, leir_exactness cls, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Records a failed precondition (explain mode only; arguments are not
 * evaluated otherwise). `site` is a string such as leir__site_nest(),
 * `rule` a LEIR__R_ id of rules.def. */
#define LEIR__REJECT(c, site, rule, ...)                                   \
  do {                                                                     \
    if ((c)->mode == LEIR__MODE_EXPLAIN) leir__reject(c, site, rule, __VA_ARGS__); \
  } while (0)
void leir__reject(leir__sctx *c, const char *site, leir__rule rule, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Appends the step text in c->sb (strategy c->strategy) to c->list: LIST
 * mode's emission (grounding uses it too). Sets c->status on failure. */
void leir__steplist_push(leir__sctx *c, leir_exactness cls);
/* Records a finding in explain mode (the engine's own findings). */
void leir__add_finding(leir__sctx *c, int applies, const char *site, const char *rule,
                       const char *msg, size_t msg_len);

/* Site strings in c->site (valid until the next call). */
const char *leir__site_nest(leir__sctx *c, const leir__nref *r);
const char *leir__site_loop(leir__sctx *c, const leir__nref *r, uint32_t loop);
const char *leir__site_tensor(leir__sctx *c, const leir__nref *r, uint32_t sym);

/* In MATCH mode, sites of other nests than the wanted step's are skipped
 * (validating a step costs the enumeration of its own nest only). */
static inline bool leir__skip_nest(const leir__sctx *c, const leir__nref *r) {
  if (c->mode != LEIR__MODE_MATCH || !c->want_nest) return false;
  size_t n = strlen(r->label);
  return n != c->want_nest->len || memcmp(r->label, c->want_nest->s, n) != 0;
}

/* The same for sites named by a tensor (the storage strategies). */
static inline bool leir__skip_tensor(const leir__sctx *c, uint32_t sym) {
  if (c->mode != LEIR__MODE_MATCH || !c->want_tensor) return false;
  return leir__sym_len(c->p, sym) != c->want_tensor->len ||
         memcmp(leir__sym_name(c->p, sym), c->want_tensor->s, c->want_tensor->len) != 0;
}

/* When false, enumeration may stop early (a MATCH found its step, or a
 * failure is pending). */
static inline bool leir__more(const leir__sctx *c) {
  return c->status == LEIR_OK && !(c->mode == LEIR__MODE_MATCH && c->found);
}

static inline const char *leir__name(const leir__sctx *c, uint32_t sym) {
  return leir__sym_name(c->p, sym);
}
static inline const char *leir__loop_name(const leir__sctx *c, const leir__nref *r, uint32_t i) {
  return leir__sym_name(c->p, r->nest->loops[i].sym);
}

/* The nest named by a step's `nest` parameter, or NULL. */
const leir__nref *leir__ps_nest(const leir__sctx *c, const leir__pstep *ps);
/* Index of the loop named by token t in nest r, or -1. */
int leir__ps_loop(const leir__sctx *c, const leir__nref *r, const leir__tok *t);
/* Symbol of the tensor named by token t, or LEIR__NOSYM. */
uint32_t leir__ps_tensor(const leir__sctx *c, const leir__tok *t);

/* The nest at `path` in program p (the clone being edited), or NULL. */
leir_nest *leir__nest_at(const leir_program *p, const uint32_t *path, uint32_t depth);

/* ---- site iterators (sites.c) ---------------------------------------------------- */

/* Every nest the context visits (pre-order, skipping other nests in MATCH
 * mode), until fn returns false or leir__more is false. */
void leir__each_nest(leir__sctx *c, bool (*fn)(leir__sctx *c, const leir__nref *r, void *ud),
                     void *ud);

/* An equation site: item `item` of nest `r`. */
typedef struct leir__eqsite {
  const leir__nref *r;
  uint32_t item;
  const leir_equation *eq;
} leir__eqsite;

/* Every equation directly in a visited nest, in item order. */
void leir__each_equation(leir__sctx *c,
                         bool (*fn)(leir__sctx *c, const leir__eqsite *s, void *ud), void *ud);

#define LEIR__MAX_XPATH 32

/* A sub-expression site: a node of an equation, named by its path: the
 * side (0 = left, 1 = right), then child indices. Printed as
 * "expr=1.0.1"; the whole site as "nest=0 eq=1 expr=1.0.1". */
typedef struct leir__xsite {
  leir__eqsite eq;
  const leir_expr *e;
  const leir_expr *parent; /* NULL for a side's root */
  uint32_t depth;          /* path entries: 1 for a side's root */
  uint32_t path[LEIR__MAX_XPATH];
  bool in_subscript;       /* inside a tensor's subscript */
} leir__xsite;

/* Every node of the equation (pre-order: left side then right side,
 * parent before children), down to LEIR__MAX_XPATH levels; fn returns
 * false to stop. */
void leir__each_subexpr(leir__sctx *c, const leir__eqsite *s,
                        bool (*fn)(leir__sctx *c, const leir__xsite *x, void *ud), void *ud);

/* Site strings (in c->site): "nest=N eq=K" and "nest=N eq=K expr=P". */
const char *leir__site_eq(leir__sctx *c, const leir__eqsite *s);
const char *leir__site_expr(leir__sctx *c, const leir__xsite *x);
/* Appends the path "1.0.1" of x to buf (cap bytes, NUL-terminated). */
void leir__xpath_format(const leir__xsite *x, char *buf, size_t cap);

/* A step's `eq` parameter in nest r: the equation site, or false. */
bool leir__ps_eq(const leir__sctx *c, const leir__nref *r, const leir__pstep *ps,
                 leir__eqsite *out);
/* In the program being edited: the slot holding the node at path
 * (path[0] = side) of equation item `item` of nest m, or NULL. Replacing
 * *slot rewrites the sub-expression in place. */
leir_expr **leir__expr_slot(leir_nest *m, uint32_t item, const uint32_t *path, uint32_t depth);
/* The same from a step's `expr` parameter (a dotted path). */
leir_expr **leir__ps_expr_slot(leir_nest *m, uint32_t item, const leir__pstep *ps);

/* Dependences (deps.h) and rewriting helpers and fresh names (rewrite.h)
 * are part of the kit too. */
#include "deps.h"
#include "rewrite.h"

/* ---- chain-of-thought facts (cot.c) ------------------------------------------------------- */

/* The `.cot` hooks of the implemented strategies: each writes the facts of
 * its family from the structural diff of the program before and after. */
bool leir__cot_loop_facts(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps);
bool leir__cot_factorization_facts(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps);
bool leir__cot_cache_facts(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps);
bool leir__cot_layout_facts(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps);
bool leir__cot_scope_facts(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps);
bool leir__cot_storage_layout_facts(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps);
bool leir__cot_precompute_facts(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps);
/* The math strategies (23-34): the smallest changed part of one right side. */
bool leir__cot_math_facts(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps);
/* The generic facts ("the expressions ... become ..."), for a hook that
 * adds to them. */
void leir__cot_generic_facts(leir__strbuf *b, const leir__diff *d);
/* The programs before and after the step of a diff (for facts a strategy
 * writes itself). */
void leir__diff_programs(const leir__diff *d, const leir_program **before,
                         const leir_program **after);

#endif
