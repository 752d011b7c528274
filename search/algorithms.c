/* The search algorithms of algorithms.def: greedy, chain, beam, BFS, DFS
 * and MCTS, each over leir__search_expand. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "engine.h"

#include "error.h"

/* ---- algorithms --------------------------------------------------------------- */

static int by_speedup_desc(search_ctx *ctx, int a, int b) {
  double x = ctx->nodes[a].speedup, y = ctx->nodes[b].speedup;
  return x > y ? -1 : x < y ? 1 : a - b;
}

static void sort_ids(search_ctx *ctx, int *ids, size_t n) {
  for (size_t i = 1; i < n; i++) /* insertion sort: lists are short */
    for (size_t j = i; j > 0 && by_speedup_desc(ctx, ids[j - 1], ids[j]) > 0; j--) {
      int t = ids[j];
      ids[j] = ids[j - 1];
      ids[j - 1] = t;
    }
}

static void run_greedy_chain(search_ctx *ctx, bool chain) {
  int cur = 0;
  while (!leir__search_should_stop(ctx)) {
    int *acc = NULL;
    size_t nacc = 0;
    leir__search_expand(ctx, cur, chain ? 1 : ctx->o.branching, 1, &acc, &nacc);
    if (!nacc) {
      free(acc);
      break;
    }
    if (chain) {
      cur = acc[nacc - 1];
    } else {
      sort_ids(ctx, acc, nacc);
      cur = acc[0];
    }
    free(acc);
  }
}

void leir__search_beam(search_ctx *ctx) {
  int *beam = malloc(sizeof *beam);
  size_t nbeam = 1;
  if (!beam) {
    ctx->fatal = leir__error_nomem();
    return;
  }
  beam[0] = 0;
  while (!leir__search_should_stop(ctx)) {
    int *acc = NULL;
    size_t nacc = 0;
    for (size_t i = 0; i < nbeam && !leir__search_should_stop(ctx); i++)
      leir__search_expand(ctx, beam[i], ctx->o.branching, ctx->o.width, &acc, &nacc);
    if (!nacc) {
      free(acc);
      break;
    }
    sort_ids(ctx, acc, nacc);
    free(beam);
    beam = acc;
    nbeam = nacc < ctx->o.width ? nacc : ctx->o.width;
  }
  free(beam);
}

static void run_bfs_dfs(search_ctx *ctx, bool dfs) {
  size_t cap = 64, head = 0, tail = 0;
  int *q = malloc(cap * sizeof *q);
  if (!q) {
    ctx->fatal = leir__error_nomem();
    return;
  }
  q[tail++] = 0;
  while (head < tail && !leir__search_should_stop(ctx)) {
    int nid = dfs ? q[--tail] : q[head++];
    int *acc = NULL;
    size_t nacc = 0;
    leir__search_expand(ctx, nid, ctx->o.branching, 1, &acc, &nacc);
    sort_ids(ctx, acc, nacc); /* fastest first: popped first by BFS; pushed last for DFS */
    for (size_t i = 0; i < nacc; i++) {
      if (tail == cap) {
        int *nq = realloc(q, cap * 2 * sizeof *nq);
        if (!nq) {
          ctx->fatal = leir__error_nomem();
          break;
        }
        q = nq;
        cap *= 2;
      }
      q[tail++] = dfs ? acc[nacc - 1 - i] : acc[i];
    }
    free(acc);
  }
  free(q);
}

static double reward_of(const search_ctx *ctx, double speedup) {
  if (ctx->o.reward == LEIR_REWARD_REFERENCE) return (exp(speedup - 1.0) - 1.0) * 10.0;
  return log(speedup > 0 ? speedup : 1e-9);
}

static uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void leir__search_mcts(search_ctx *ctx) {
  ctx->nodes[0].visits = 1;
  while (!leir__search_should_stop(ctx) && !ctx->nodes[0].dead) {
    /* selection: widen a node while it has fewer children than
     * ceil(sqrt(visits)) and more to give, else descend by UCT */
    int nid = 0;
    for (;;) {
      search_node *n = &ctx->nodes[nid];
      bool can_expand = !n->exhausted && n->depth < ctx->o.max_depth;
      if (can_expand && (double)n->nchildren < ceil(sqrt((double)n->visits))) break;
      int best = -1;
      double bu = -INFINITY;
      for (size_t i = 0; i < n->nchildren; i++) {
        const search_node *c = &ctx->nodes[n->children[i]];
        if (c->dead) continue;
        double u = c->visits ? c->value / c->visits +
                                   ctx->o.uct_c * sqrt(2.0 * log((double)n->visits) / c->visits)
                             : INFINITY;
        if (u > bu) {
          bu = u;
          best = n->children[i];
        }
      }
      if (best < 0) {
        if (can_expand) break;
        n->dead = true;
        nid = -1;
        break;
      }
      nid = best;
    }
    if (nid < 0) continue; /* a dead end was marked; select again from the root */
    int *acc = NULL;
    size_t nacc = 0;
    leir__search_expand(ctx, nid, 1, 1, &acc, &nacc);
    if (!nacc) {
      free(acc);
      search_node *n = &ctx->nodes[nid];
      if (n->exhausted && n->nchildren == 0) n->dead = true;
      continue;
    }
    int child = acc[0];
    free(acc);
    double reward = reward_of(ctx, ctx->nodes[child].speedup);
    /* rollouts: random one-step continuations of the new node, measured */
    for (uint32_t r = 0; r < ctx->o.rollouts && !leir__search_should_stop(ctx); r++) {
      search_node *c = &ctx->nodes[child];
      if (c->depth >= ctx->o.max_depth || leir__search_node_candidates(ctx, c) != LEIR_OK) break;
      size_t nc = leir_candidates_count(c->cands);
      if (!nc) break;
      proposal p;
      memset(&p, 0, sizeof p);
      p.index = (size_t)(rng_next(&ctx->rng) % nc);
      int g = leir__search_evaluate(ctx, child, &p, NULL);
      if (g >= 0) {
        double rg = reward_of(ctx, ctx->nodes[g].speedup);
        ctx->nodes[g].visits = 1;
        ctx->nodes[g].value = rg;
        if (rg > reward) reward = rg;
      }
    }
    for (int i = child; i >= 0; i = ctx->nodes[i].parent) {
      ctx->nodes[i].visits++;
      ctx->nodes[i].value += reward;
    }
  }
}

/* The entries of algorithms.def that share a run function. */
void leir__search_greedy(search_ctx *ctx) { run_greedy_chain(ctx, false); }
void leir__search_chain(search_ctx *ctx) { run_greedy_chain(ctx, true); }
void leir__search_bfs(search_ctx *ctx) { run_bfs_dfs(ctx, false); }
void leir__search_dfs(search_ctx *ctx) { run_bfs_dfs(ctx, true); }
