/* The built-in policies (cost-model ranking, exhaustive, seeded random).
 * At the first call at a node each orders the node's candidates once,
 * leaving out those whose result is the node itself or a program the
 * search has seen; later calls hand out the next `want` of that order,
 * skipping results that became known in the meantime. They see the search
 * only through the leir_search_query every policy gets (the order lives in
 * query->state). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy.h"
#include "leir/experimental/cost.h"

#include "clock.h"
#include "error.h"

/* A node's order (query->state->data): the candidates still to propose. */
typedef struct order_state {
  uint64_t *order; /* pairs: candidate index (ORDER_CHAIN: a lookahead chain), hash of its result */
  char **macro;    /* per entry: NULL, or the follow-up step of a macro-step, or the chain's steps */
  size_t norder, cursor;
} order_state;

/* The order entry of a lookahead macro-step (its steps are in macro[k]). */
#define ORDER_CHAIN UINT64_MAX

static void order_state_free(void *data) {
  order_state *os = data;
  if (!os) return;
  if (os->macro)
    for (size_t k = 0; k < os->norder; k++) free(os->macro[k]);
  free(os->macro);
  free(os->order);
  free(os);
}

typedef struct ranked {
  size_t index;
  uint64_t hash;
  double score; /* lower first */
  int prior;
  char *macro; /* a macro-step's follow-up step (owned), or NULL */
} ranked;

/* Macro-steps of the cost policy (two enumerated steps proposed as one, over
 * a plateau): a first step counts as a plateau when the model predicts it
 * gains less than PLATEAU over the node; the pair is proposed when it is
 * predicted at least GAIN faster than both the node and the best single
 * step. At most LOOKAHEAD_MAX second steps are priced per node. */
#define PLATEAU 0.05
#define GAIN 0.10
#define LOOKAHEAD_MAX 60000

/* Which strategies to try first among candidates the cost model cannot tell
 * apart: the loop rewrites that most often pay on a CPU, then memory
 * rewrites, then graph and math rewrites (catalogue order inside a class). */
static int strategy_prior(const char *name) {
  static const char *const first[] = {"loop_parallelization", "loop_vectorization",
                                      "loop_reorder",         "loop_tiling",
                                      "loop_unrolling",       "loop_split",
                                      "cache_read_write",     "loop_fusion",
                                      "operator_fusion",      "compute_inline"};
  for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
    if (strcmp(name, first[i]) == 0) return (int)i;
  return 100;
}

static int cmp_ranked(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  double tol = 1e-9 * (fabs(x->score) + fabs(y->score));
  if (x->score < y->score - tol) return -1;
  if (x->score > y->score + tol) return 1;
  if (x->prior != y->prior) return x->prior < y->prior ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index ? 1 : 0;
}

static int cmp_hash_index(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index ? 1 : 0;
}

static int cmp_index(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  return x->index < y->index ? -1 : x->index > y->index ? 1 : 0;
}

static uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Predicted seconds of one run from the analytic cost model
 * (include/leir/experimental/cost.h: compute against vector lanes and FMA
 * ports, data movement per cache level from the loop nest's footprints,
 * parallel loops over the search backend's threads: query->model_threads).
 * Only the ranking matters; a program the model cannot price goes
 * last. */
double leir__policy_cost_score(const leir_search_query *q, const leir_program *p) {
  double seconds = INFINITY;
  if (leir_program_cost_predict(p, q->model_threads, &seconds) != LEIR_OK ||
      !(seconds >= 0))
    return INFINITY;
  return seconds;
}

/* The best second step after the plateau candidate `first` (its result p1,
 * hash h1): its score, result hash and step text (owned) in *out, when it
 * beats `bar`. *budget counts the second steps priced. */
static bool lookahead(const leir_search_query *q, const leir_program *p1, uint64_t h1, double bar,
                      size_t *budget, ranked *out) {
  leir_candidates *c2 = NULL;
  if (leir_candidates_list(&c2, p1, q->candidate_options) != LEIR_OK) return false;
  size_t count = leir_candidates_count(c2), best = SIZE_MAX;
  double best_score = bar;
  uint64_t best_hash = 0;
  for (size_t j = 0; j < count && *budget > 0; j++, (*budget)--) {
    leir_program *p2 = NULL;
    if (leir_candidates_apply(&p2, c2, j) != LEIR_OK) continue;
    uint64_t h2 = leir_program_hash_alpha(p2);
    if (h2 != q->program_hash && h2 != h1 && !q->known(q, h2)) {
      double sc = leir__policy_cost_score(q, p2);
      if (sc < best_score) best_score = sc, best = j, best_hash = h2;
    }
    leir_program_free(p2);
  }
  bool found = best != SIZE_MAX;
  if (found) {
    out->score = best_score;
    out->hash = best_hash;
    out->macro = strdup(leir_step_text(leir_candidates_step(c2, best)));
    found = out->macro != NULL;
  }
  leir_candidates_free(c2);
  return found;
}

/* Orders the node's candidates into *out (owned); t0: when the call began. */
static leir_status order_node(const leir_search_query *q, leir_search_policy policy, double t0,
                              order_state **out) {
  size_t count = leir_candidates_count(q->candidates);
  /* room for every single step, one macro-step per single step and the
   * lookahead's macro-step */
  ranked *r = calloc(2 * count + LA_TOP, sizeof *r);
  if (!r) return leir__error_nomem();
  size_t m = 0;
  uint64_t seed = mix(q->seed ^ q->program_hash);
  double here = policy == LEIR_POLICY_COST ? leir__policy_cost_score(q, q->program) : 0;
  double best_single = INFINITY;
  for (size_t i = 0; i < count; i++) {
    leir_program *p = NULL;
    if (leir_candidates_apply(&p, q->candidates, i) != LEIR_OK) continue;
    uint64_t h = leir_program_hash_alpha(p);
    if (h == q->program_hash || q->known(q, h)) {
      leir_program_free(p);
      continue;
    }
    ranked *x = &r[m++];
    x->index = i;
    x->hash = h;
    const leir_strategy_info *info =
        leir_strategy_info_at(leir_step_strategy(leir_candidates_step(q->candidates, i)));
    x->prior = policy == LEIR_POLICY_COST && info ? strategy_prior(info->name) : 0;
    if (policy == LEIR_POLICY_COST) {
      x->score = leir__policy_cost_score(q, p);
      if (x->score < best_single) best_single = x->score;
    } else if (policy == LEIR_POLICY_RANDOM)
      x->score = (double)(mix(seed + i) >> 11);
    else
      x->score = (double)i;
    leir_program_free(p);
  }
  /* candidates that give one program up to renaming (loop_binding on tx,
   * ty or bx) are one proposal: keep the first in candidate order, so a
   * batch never hands out a twin the search then rejects as seen */
  qsort(r, m, sizeof *r, cmp_hash_index);
  size_t kept = 0;
  for (size_t i = 0; i < m; i++)
    if (kept == 0 || r[kept - 1].hash != r[i].hash) r[kept++] = r[i];
  m = kept;
  size_t nsingle = m;
  if (policy == LEIR_POLICY_COST) qsort(r, m, sizeof *r, cmp_ranked); /* most promising first */
  else qsort(r, m, sizeof *r, cmp_index); /* the policy's own order, as enumerated */
  if (policy == LEIR_POLICY_COST && isfinite(here)) {
    /* macro-steps over plateaus: a first step the model sees no gain in,
     * followed by the step that gains most after it */
    double bar = (best_single < here ? best_single : here) * (1 - GAIN);
    size_t budget = LOOKAHEAD_MAX;
    /* the plateau steps in turns across strategies (the first of each
     * strategy, then the second of each, ...), so that the budget is not
     * spent on the many parameter choices of one strategy */
    size_t *visit = malloc((nsingle ? nsingle : 1) * sizeof *visit);
    uint32_t *turn = calloc(nsingle ? nsingle : 1, sizeof *turn);
    size_t nvisit = 0;
    if (!visit || !turn) {
      free(visit);
      free(turn);
      free(r);
      return leir__error_nomem();
    }
    {
      uint32_t seen_per[1024] = {0};
      for (size_t k = 0; k < nsingle; k++) {
        if (!(r[k].score >= here * (1 - PLATEAU))) continue;
        int32_t si = leir_step_strategy(leir_candidates_step(q->candidates, r[k].index));
        uint32_t slot = si >= 0 && si < 1024 ? (uint32_t)si : 1023;
        turn[k] = seen_per[slot]++;
        visit[nvisit++] = k;
      }
      /* stable by turn: insertion order within one turn keeps the rank */
      for (size_t i = 1; i < nvisit; i++)
        for (size_t j = i; j > 0 && turn[visit[j - 1]] > turn[visit[j]]; j--) {
          size_t t = visit[j];
          visit[j] = visit[j - 1];
          visit[j - 1] = t;
        }
    }
    for (size_t v = 0; v < nvisit && budget > 0; v++) {
      size_t k = visit[v];
      leir_program *p1 = NULL;
      if (leir_candidates_apply(&p1, q->candidates, r[k].index) != LEIR_OK) continue;
      ranked y = r[k];
      y.macro = NULL;
      if (lookahead(q, p1, r[k].hash, bar, &budget, &y)) {
        bool dup = false;
        for (size_t t = 0; t < m && !dup; t++) dup = r[t].hash == y.hash;
        if (dup)
          free(y.macro);
        else
          r[m++] = y;
      }
      leir_program_free(p1);
    }
    free(visit);
    free(turn);
  }
  if (policy == LEIR_POLICY_COST && isfinite(here) && q->options->lookahead_depth) {
    /* the lookahead's best sequences, each proposed as one macro-step when
     * the model predicts it GAIN faster than the node and every single step */
    la_best top[LA_TOP];
    leir_status st = leir__policy_lookahead(q, t0, top);
    if (st != LEIR_OK) {
      for (size_t k = 0; k < m; k++) free(r[k].macro);
      free(r);
      return st;
    }
    double bar = (best_single < here ? best_single : here) * (1 - GAIN);
    for (size_t k = 0; k < LA_TOP; k++) {
      bool dup = false;
      for (size_t t = 0; t < m && !dup; t++) dup = r[t].hash == top[k].fh;
      if (top[k].seq && top[k].pot < bar && !dup) {
        ranked *y = &r[m++];
        memset(y, 0, sizeof *y);
        y->index = SIZE_MAX;
        y->hash = top[k].fh;
        y->score = top[k].pot;
        y->prior = -1; /* before a single step the model prices the same */
        y->macro = top[k].seq;
      } else {
        free(top[k].seq);
      }
    }
  }
  if (policy != LEIR_POLICY_EXHAUSTIVE) qsort(r, m, sizeof *r, cmp_ranked);
  order_state *os = calloc(1, sizeof *os);
  if (os) {
    os->order = malloc((m ? m : 1) * 2 * sizeof *os->order);
    os->macro = calloc(m ? m : 1, sizeof *os->macro);
  }
  if (!os || !os->order || !os->macro) {
    order_state_free(os);
    for (size_t k = 0; k < m; k++) free(r[k].macro);
    free(r);
    return leir__error_nomem();
  }
  /* order[2k] = candidate index, order[2k+1] = its result's hash */
  for (size_t k = 0; k < m; k++) {
    /* a lookahead macro-step has no candidate index (SIZE_MAX) */
    os->order[2 * k] = r[k].index == SIZE_MAX ? ORDER_CHAIN : (uint64_t)r[k].index;
    os->order[2 * k + 1] = r[k].hash;
    os->macro[k] = r[k].macro;
  }
  os->norder = m;
  free(r);
  *out = os;
  return LEIR_OK;
}

/* The built-in policies share one body: the first call at a node orders
 * its candidates (order_node), each call hands out the next `want`. */
static leir_status propose_builtin(leir_search_policy policy, const leir_search_query *q,
                                   leir_search_proposals *out) {
  double t0 = leir__now();
  if (!q || !out) return leir__error_arg("query", "the query or the proposals are NULL");
  if (q->size < sizeof *q || !q->state || !q->known || !q->count_lookahead)
    return leir__error_arg("query", "the query is not one a running search gave its policy");
  order_state *os = q->state->data;
  if (!os) {
    leir_status st = order_node(q, policy, t0, &os);
    if (st != LEIR_OK) return st;
    q->state->data = os;
    q->state->release = order_state_free;
  }
  uint32_t want = q->want ? q->want : 1;
  uint32_t given = 0;
  while (given < want && os->cursor < os->norder) {
    size_t k = os->cursor++;
    uint64_t h = (uint64_t)os->order[2 * k + 1];
    if (q->known(q, h)) continue;
    leir_status st =
        os->order[2 * k] == ORDER_CHAIN
            ? leir_search_propose_chain(out, os->macro[k], NULL)
        : os->macro[k]
            ? leir_search_propose_macro(out, (size_t)os->order[2 * k], os->macro[k], NULL)
            : leir_search_propose_candidate(out, (size_t)os->order[2 * k], NULL);
    if (st != LEIR_OK) return st;
    given++;
  }
  return LEIR_OK;
}

/* The rows of policies.def: leir_search_propose_fn, like an external policy. */
leir_status leir__policy_cost(void *payload, const leir_search_query *q,
                              leir_search_proposals *out) {
  (void)payload;
  return propose_builtin(LEIR_POLICY_COST, q, out);
}
leir_status leir__policy_exhaustive(void *payload, const leir_search_query *q,
                                    leir_search_proposals *out) {
  (void)payload;
  return propose_builtin(LEIR_POLICY_EXHAUSTIVE, q, out);
}
leir_status leir__policy_random(void *payload, const leir_search_query *q,
                                leir_search_proposals *out) {
  (void)payload;
  return propose_builtin(LEIR_POLICY_RANDOM, q, out);
}
