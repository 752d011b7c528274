/*
 * What the split strategies' sites (split_sites.c: sites, values y,
 * enumeration, apply) share with their proofs (split_proofs.c: the
 * numerical conditions and the generic assumption's refusals): the site
 * and value types, the proofs' memos and verdicts.
 */
#ifndef LEIR_STRATEGIES_SPLIT_PROOFS_H
#define LEIR_STRATEGIES_SPLIT_PROOFS_H

#include "split_sites.h"

static inline const leir_expr *strip(const leir_expr *e) {
  while (e && e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e;
}

static inline bool is_float(uint8_t dt) {
  return dt == LEIR_F16 || dt == LEIR_BF16 || dt == LEIR_F32 || dt == LEIR_F64;
}

/* finiteness memo (split_proofs.c), by symbol */
enum { T_UNKNOWN = 0, T_VISITING, T_YES, T_NO };

typedef struct finite_memo {
  const leir__sctx *c;
  uint8_t *state; /* by symbol */
  uint32_t nsym;
} finite_memo;

/* the generic assumption's memo (split_proofs.c), by symbol and G_* */
enum { G_INF = 0, G_ZERO = 1, G_BIG = 2, G_BIGX = 3, G_NORM = 4 };

typedef struct generic_memo {
  const leir__sctx *c;
  uint8_t *state[5]; /* by symbol, T_* */
  uint32_t nsym;
} generic_memo;

/* ---- sites and values y ---------------------------------------------------- */

typedef struct yval {
  bool shift;             /* loop=k, else tensor=Y */
  uint32_t k;             /* shift: loop index in the nest */
  const leir_expr *z;     /* shift: the read shifted */
  const leir_expr *acc;   /* tensor: Y's left-hand access in its writer */
  /* shift of a compound last subscript E (d*3+g: y reads Z_{..,E-1}, k the
   * innermost loop of E); only in the relaxed pass (split_relaxed) */
  bool compound;
} yval;

typedef struct site {
  const leir__nref *r;
  uint32_t item;
  const leir_equation *eq;
  const leir_expr *x;     /* the tensor read (#38, #39) or the exp call (#37) */
  const leir_expr *z;     /* the read a shifted y shifts, or NULL */
  bool under_ite;
} site;

/* V_ASSUMED: unproven, but covered by the generic assumption (listed
 * with LEIR_CANDIDATES_GENERIC_VALUES, class reassociating) */
typedef enum { V_EXACT, V_CLOSE, V_UNPROVEN, V_ASSUMED, V_NO_SITE } verdict;

typedef struct proof {
  const leir__sctx *c;
  finite_memo *fm;
  generic_memo *gm;
  leir_status st;
} proof;

/* Whether the numerical condition of a split of `kind` at site s with
 * value y holds (exactly, within the class's bounds), is unproven, or the
 * site has no such form (form=div of an exponent that is no difference). */
verdict leir__split_check(proof *pf, leir__split_kind kind, const site *s, const yval *y,
                          bool div);
/* Why the generic assumption does not cover an unproven split (NULL: it
 * does). */
const char *leir__split_structural(proof *pf, leir__split_kind kind, const site *s,
                                   const yval *y, bool div);
/* exp(u): its leftmost +/- term t1 and whether u has more terms */
const leir_expr *leir__split_first_term(const leir_expr *u, bool *more);

#endif
