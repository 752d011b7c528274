/*
 * The registry: the catalogue rows (catalogue.def) with their
 * implementations. Included by the code that runs strategies (the public
 * API: candidates.c, apply.c, explain.c, ground.c, step.c, cot.c), never by
 * a strategy: strategies see kit.h only, so the registry -> strategy ->
 * registry include cycle cannot come back.
 */
#ifndef LEIR_STRATEGIES_REGISTRY_H
#define LEIR_STRATEGIES_REGISTRY_H

#include "kit.h"

typedef struct leir__strategy {
  leir_strategy_info info;         /* the public row (static) */
  const leir__strategy_impl *impl; /* NULL: not implemented */
} leir__strategy;

/* Declarations of the implementations (strategies/NAME.c). */
#define LEIR__STRATEGY_IMPL(index, name, level, summary, definition, benefit) \
  extern const leir__strategy_impl leir__##name;
#include "catalogue.def"

extern const leir__strategy leir__strategies[LEIR__NSTRATEGIES];

static inline const char *leir__strategy_name(int s) { return leir__strategies[s].info.name; }
/* Index of the strategy called name[0..len), or -1. */
int leir__strategy_index(const char *name, size_t len);
/* LEIR_ERR_NOT_FOUND with a "did you mean" hint. */
leir_status leir__strategy_unknown(const char *name, size_t len);
/* LEIR_ERR_UNSUPPORTED: strategy s is listed but not implemented. */
leir_status leir__strategy_not_implemented(int s);

/* Parses canonical-or-not text into `ps` (tokens point into `text`).
 * Validates keys and value types against the strategy's schema.
 * LEIR_ERR_PARSE / LEIR_ERR_NOT_FOUND with a message on failure (step.c). */
leir_status leir__step_parse_text(leir__pstep *ps, const char *text, size_t len);
/* Canonical text of a parsed step. */
void leir__step_print(leir__strbuf *b, const leir__pstep *ps);

/* CoT of a step whose result is `after` (cot.c). */
leir_status leir__cot(leir__strbuf *b, const leir_program *before, const leir_program *after,
                      const leir__pstep *ps);

#endif
