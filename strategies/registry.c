/*
 * The registry: the rows of catalogue.def (spec/strategies.md §2) with
 * their implementations, and lookup by name. `implemented` in the public
 * row is derived from the catalogue macro, never set by hand.
 */
#include <string.h>

#include "registry.h"
#include "catalogue.h"
#include "error.h"

/* Rows in index order; designated initializers keep them in step with
 * the ids of catalogue.def. */
const leir__strategy leir__strategies[LEIR__NSTRATEGIES] = {
#define LEIR__STRATEGY(idx, nm, lvl, sum, def, ben)                                      \
  [idx] = {.info = {.index = idx, .name = #nm, .level = LEIR_LEVEL_##lvl, .summary = sum, \
                    .definition = def, .benefit = ben, .implemented = 0},               \
           .impl = NULL},
#define LEIR__STRATEGY_IMPL(idx, nm, lvl, sum, def, ben)                                 \
  [idx] = {.info = {.index = idx, .name = #nm, .level = LEIR_LEVEL_##lvl, .summary = sum, \
                    .definition = def, .benefit = ben, .implemented = 1},               \
           .impl = &leir__##nm},
#include "catalogue.def"
};

/* The indices are 0..n-1 in line order: n lines, the largest index n-1, and
 * no index twice (-Woverride-init). */
enum {
  CATALOGUE_LINES = 0
#define LEIR__STRATEGY(idx, nm, lvl, sum, def, ben) +1
#include "catalogue.def"
};
_Static_assert((int)CATALOGUE_LINES == (int)LEIR__NSTRATEGIES,
               "catalogue.def: indices must be 0..n-1 in line order");
/* Tests and benchmarks size their tables with lib/catalogue.h. */
_Static_assert((int)LEIR__NSTRATEGIES == LEIR_STRATEGY_COUNT,
               "lib/catalogue.h: LEIR_STRATEGY_COUNT must match catalogue.def");

const char *leir_level_name(leir_level level) {
  switch (level) {
    case LEIR_LEVEL_GRAPH: return "graph";
    case LEIR_LEVEL_OPERATOR: return "operator";
    case LEIR_LEVEL_MEMORY: return "memory";
    case LEIR_LEVEL_MATH: return "math";
  }
  return "";
}

const char *leir_exactness_name(leir_exactness exactness) {
  return exactness == LEIR_REASSOCIATING ? "reassociating" : "exact";
}

size_t leir_strategy_count(void) { return LEIR__NSTRATEGIES; }

const leir_strategy_info *leir_strategy_info_at(size_t index) {
  return index < LEIR__NSTRATEGIES ? &leir__strategies[index].info : NULL;
}

int leir__strategy_index(const char *name, size_t len) {
  for (int i = 0; i < LEIR__NSTRATEGIES; i++)
    if (strlen(leir__strategies[i].info.name) == len && memcmp(leir__strategies[i].info.name, name, len) == 0)
      return i;
  return -1;
}

/* Length of the common prefix, for "did you mean" hints. */
static size_t common_prefix(const char *a, const char *b) {
  size_t n = 0;
  while (a[n] && a[n] == b[n]) n++;
  return n;
}

leir_status leir__strategy_unknown(const char *name, size_t len) {
  char buf[128];
  size_t n = len < sizeof buf - 1 ? len : sizeof buf - 1;
  memcpy(buf, name, n);
  buf[n] = '\0';
  size_t best = 0, best_len = 0;
  for (size_t i = 0; i < LEIR__NSTRATEGIES; i++) {
    size_t c = common_prefix(buf, leir__strategies[i].info.name);
    if (c > best_len) best = i, best_len = c;
  }
  if (best_len >= 4)
    return leir__error(LEIR_ERR_NOT_FOUND, leir__rule_name(LEIR__R_STRATEGY_UNKNOWN), buf, 0, 0,
                       "unknown strategy '%s' (did you mean '%s'? 'leir strategies' lists all)",
                       buf, leir__strategies[best].info.name);
  return leir__error(LEIR_ERR_NOT_FOUND, leir__rule_name(LEIR__R_STRATEGY_UNKNOWN), buf, 0, 0,
                     "unknown strategy '%s' ('leir strategies' lists all)", buf);
}

leir_status leir__strategy_not_implemented(int s) {
  const char *name = leir__strategy_name(s);
  return leir__error(LEIR_ERR_UNSUPPORTED, leir__rule_name(LEIR__R_STRATEGY_NOT_IMPLEMENTED), name,
                     0, 0, "%s is not implemented in this version of libleir", name);
}

leir_status leir_strategy_find(const char *name, size_t *index) {
  if (!name || !index) return leir__error_arg(NULL, "NULL argument");
  int i = leir__strategy_index(name, strlen(name));
  if (i < 0) return leir__strategy_unknown(name, strlen(name));
  *index = (size_t)i;
  return LEIR_OK;
}
