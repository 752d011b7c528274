/* Names of the search's algorithms, policies and rejections (from
 * algorithms.def and policies.def), the options' _init and
 * leir_search_propose_builtin. */
#include <stdio.h>
#include <string.h>

#include "engine.h"

#include "error.h"

/* ---- names ---------------------------------------------------------------- */

const leir__search_algorithm_row leir__search_algorithms[] = {
#define LEIR__SEARCH_ALGORITHM(id, name, run) [id] = {name, run},
#include "algorithms.def"
#undef LEIR__SEARCH_ALGORITHM
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
const size_t leir__search_algorithm_count = COUNT(leir__search_algorithms);

const leir__search_policy_row leir__search_policies[] = {
#define LEIR__SEARCH_POLICY(id, name, propose) [id] = {name, propose},
#include "policies.def"
#undef LEIR__SEARCH_POLICY
};
const size_t leir__search_policy_count = COUNT(leir__search_policies);

static const char *const reject_names[] = {"accepted", "malformed", "not-one-step",
                                           "not-applicable", "same", "seen", "verdict",
                                           "not-faster", "depth"};

/* "a, b, c": the names of a table, for a message. */
static const char *names_list(char *buf, size_t cap, const char *(*name)(size_t), size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && len < cap; i++) {
    int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", name(i));
    if (w < 0) break;
    len += (size_t)w;
  }
  return buf;
}
static const char *algorithm_at(size_t i) { return leir__search_algorithms[i].name; }
static const char *policy_at(size_t i) { return leir__search_policies[i].name; }

const char *leir_search_algorithm_name(leir_search_algorithm a) {
  return (unsigned)a < leir__search_algorithm_count ? leir__search_algorithms[a].name : NULL;
}
leir_status leir_search_algorithm_from_name(const char *name, leir_search_algorithm *out) {
  for (size_t i = 0; name && out && i < leir__search_algorithm_count; i++)
    if (strcmp(name, leir__search_algorithms[i].name) == 0) {
      *out = (leir_search_algorithm)i;
      return LEIR_OK;
    }
  char list[256];
  return leir__error_arg(name, "unknown search algorithm '%s' (%s)", name ? name : "(null)",
                         names_list(list, sizeof list, algorithm_at, leir__search_algorithm_count));
}
const char *leir_search_policy_name(leir_search_policy p) {
  return (unsigned)p < leir__search_policy_count ? leir__search_policies[p].name : NULL;
}
leir_status leir_search_policy_from_name(const char *name, leir_search_policy *out) {
  for (size_t i = 0; name && out && i < leir__search_policy_count; i++)
    if (strcmp(name, leir__search_policies[i].name) == 0) {
      *out = (leir_search_policy)i;
      return LEIR_OK;
    }
  char list[256];
  return leir__error_arg(name, "unknown policy '%s' (%s)", name ? name : "(null)",
                         names_list(list, sizeof list, policy_at, leir__search_policy_count));
}
leir_status leir_search_propose_builtin(leir_search_policy policy, const leir_search_query *query,
                                        leir_search_proposals *out) {
  if (!query || !out) return leir__error_arg("query", "the query or the proposals are NULL");
  if ((unsigned)policy >= leir__search_policy_count)
    return leir__error_arg("policy", "unknown policy %d", (int)policy);
  search_ctx *ctx = query->size >= sizeof *query ? query->search : NULL;
  if (!ctx || query->node < 0 || (size_t)query->node >= ctx->nnodes)
    return leir__error_arg("query", "the query is not one a running search gave its policy");
  /* the built-in's own memory at the node, apart from the caller's */
  leir_search_query q = *query;
  q.state = &ctx->nodes[query->node].builtin_state;
  return leir__search_policies[policy].propose(NULL, &q, out);
}

const char *leir_search_reject_name(leir_search_reject r) {
  return (unsigned)r < COUNT(reject_names) ? reject_names[r] : NULL;
}

leir_status leir_search_options_init(leir_search_options *opts, size_t size) {
  static const leir_search_options defaults = LEIR_SEARCH_OPTIONS_INIT;
  if (!opts) return leir__error_arg("leir_search_options", "leir_search_options is NULL");
  if (size < sizeof(uint32_t) || size > sizeof defaults)
    return leir__error_arg("leir_search_options",
                           "size %zu is not a size of leir_search_options (this library knows %zu bytes)",
                           size, sizeof defaults);
  memcpy(opts, &defaults, size);
  uint32_t sz = (uint32_t)size;
  memcpy(opts, &sz, sizeof sz);
  return LEIR_OK;
}
