/* The budgets, and asking the policy at a node until the algorithm has the
 * children it wants (expand): the query, the call, the proposals evaluated,
 * `retries` for calls that gave nothing usable. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#include "backend.h"
#include "error.h"
#include "strbuf.h"

/* ---- budgets ---------------------------------------------------------------- */

bool leir__search_should_stop(search_ctx *ctx) {
  if (ctx->fatal != LEIR_OK) return true;
  if (ctx->stopped_by) return true;
  if (ctx->o.cancel && *ctx->o.cancel) ctx->stopped_by = 3;
  else if (ctx->o.max_samples && ctx->samples >= ctx->o.max_samples) ctx->stopped_by = 1;
  else if (ctx->o.max_seconds > 0 && leir__now() - ctx->start >= ctx->o.max_seconds) ctx->stopped_by = 2;
  return ctx->stopped_by != 0;
}

/* ---- expansion ---------------------------------------------------------------- */

static char *history_json(search_ctx *ctx, int nid) {
  int path[1024];
  int np = 0;
  for (int i = nid; i > 0 && np < 1024; i = ctx->nodes[i].parent) path[np++] = i;
  leir__strbuf b = {0};
  leir__sb_putc(&b, '[');
  for (int j = np - 1; j >= 0; j--) {
    const search_node *x = &ctx->nodes[path[j]];
    leir__sb_puts(&b, j == np - 1 ? "{\"step\":" : ",{\"step\":");
    leir__sb_put_json_string(&b, x->step, strlen(x->step));
    leir__sb_printf(&b, ",\"speedup\":%.6g}", x->speedup);
  }
  leir__sb_putc(&b, ']');
  return leir__sb_finish(&b, NULL);
}

/* The query's callbacks (leir_search_query.known, count_lookahead). */
static int query_known(const leir_search_query *q, uint64_t alpha_hash) {
  return q && q->search && leir__search_seen(q->search, alpha_hash);
}

static void query_count_lookahead(const leir_search_query *q, uint64_t evaluations) {
  if (!q || !q->search) return;
  search_ctx *ctx = q->search;
  ctx->lookaheads++;
  ctx->lookahead_evals += evaluations;
}

/* Asks the policy for proposals at node `nid` until `min_accept` are
 * accepted, the policy has nothing more, or (an external policy) more than
 * `retries` calls in a row failed to propose: every proposal rejected before
 * it was timed, or by its verdict. A call with an accepted step, or with a
 * verified step that was only not faster, ends the row (the sample budget
 * bounds those). The ids of the accepted children are appended to acc. */
size_t leir__search_expand(search_ctx *ctx, int nid, uint32_t want, size_t min_accept, int **acc,
                           size_t *nacc) {
  size_t got = 0;
  uint32_t fails = 0;
  leir_search_proposals ps;
  memset(&ps, 0, sizeof ps);
  while (!leir__search_should_stop(ctx)) {
    search_node *n = &ctx->nodes[nid];
    if (n->exhausted || n->depth >= ctx->o.max_depth) {
      n->exhausted = true;
      break;
    }
    leir_status st = leir__search_node_candidates(ctx, n);
    if (st != LEIR_OK) {
      n->exhausted = true;
      break;
    }
    char *hist = history_json(ctx, nid);
    leir_search_query q;
    memset(&q, 0, sizeof q);
    q.size = sizeof q;
    q.algorithm = ctx->o.algorithm;
    q.program = n->program;
    q.root = ctx->nodes[0].program;
    q.candidates = n->cands;
    q.depth = n->depth;
    q.speedup = n->speedup;
    q.want = want;
    q.attempt = n->attempts;
    q.feedback = n->fb;
    q.nfeedback = n->nfb;
    q.history = hist ? hist : "[]";
    q.seed = ctx->o.seed;
    q.parent = n->parent >= 0 ? ctx->nodes[n->parent].program : NULL;
    q.parent_speedup = n->parent >= 0 ? ctx->nodes[n->parent].speedup : 1.0;
    q.node = nid;
    q.program_hash = n->hash;
    q.candidate_options = &ctx->copts;
    q.options = &ctx->o;
    q.model_threads = leir__backend_model_threads(ctx->backend);
    q.time_left_s = INFINITY;
    if (ctx->o.max_seconds > 0) {
      double left = ctx->o.max_seconds - (leir__now() - ctx->start);
      q.time_left_s = left > 0 ? left : 0;
    }
    /* a built-in policy keeps its memory apart from an external one's */
    q.state = ctx->o.propose ? &n->policy_state : &n->builtin_state;
    q.known = query_known;
    q.count_lookahead = query_count_lookahead;
    q.search = ctx;
    leir__search_proposals_clear(&ps);
    /* an external policy and a built-in one are called alike */
    if (ctx->o.propose)
      st = ctx->o.propose(ctx->o.propose_payload, &q, &ps);
    else
      st = leir__search_policies[ctx->o.policy].propose(NULL, &q, &ps);
    free(hist);
    n = &ctx->nodes[nid];
    n->attempts++;
    if (st != LEIR_OK) {
      ctx->fatal = st;
      break;
    }
    if (ps.n == 0) {
      n->exhausted = true;
      break;
    }
    size_t before = got;
    uint32_t not_faster_before = ctx->not_faster;
    for (size_t i = 0; i < ps.n && !leir__search_should_stop(ctx); i++) {
      int c = leir__search_evaluate(ctx, nid, &ps.items[i], ps.raw);
      if (c >= 0) {
        int *na = realloc(*acc, (*nacc + 1) * sizeof *na);
        if (!na) {
          ctx->fatal = leir__error_nomem();
          break;
        }
        *acc = na;
        (*acc)[(*nacc)++] = c;
        got++;
      }
    }
    if (got >= min_accept) break;
    if (got > before) { /* some accepted (the row of failures ends); the algorithm wants more */
      fails = 0;
      continue;
    }
    /* a call that gave a verified step that was merely not faster was a
     * usable answer: it breaks the row of failures (the sample budget, not
     * `retries`, bounds those) */
    if (ctx->not_faster > not_faster_before) {
      fails = 0;
      continue;
    }
    /* an external policy (a model) gets `retries` more calls with the
     * reasons; a built-in goes down its list until it has nothing more */
    if (ctx->o.propose && ++fails > ctx->o.retries) {
      ctx->nodes[nid].exhausted = true;
      break;
    }
  }
  leir__search_proposals_clear(&ps);
  free(ps.items);
  return got;
}
