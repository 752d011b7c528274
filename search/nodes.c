/* The search tree's nodes: adding one, releasing it, its candidates, its
 * kernel and the rejections kept for the policy. */
#include <stdlib.h>

#include "engine.h"

/* ---- nodes -------------------------------------------------------------------- */

int leir__search_node_add(search_ctx *ctx, leir_program *p, uint64_t h, int parent,
                          const char *step, double speedup, double median_s, uint32_t klass) {
  if (ctx->nnodes == ctx->capnodes) {
    size_t ncap = ctx->capnodes ? ctx->capnodes * 2 : 16;
    search_node *nn = realloc(ctx->nodes, ncap * sizeof *nn);
    if (!nn) return -1;
    ctx->nodes = nn;
    ctx->capnodes = ncap;
  }
  if (parent >= 0) {
    search_node *pa = &ctx->nodes[parent];
    int *nc = realloc(pa->children, (pa->nchildren + 1) * sizeof *nc);
    if (!nc) return -1;
    pa->children = nc;
    pa->children[pa->nchildren++] = (int)ctx->nnodes;
  }
  search_node *n = &ctx->nodes[ctx->nnodes];
  memset(n, 0, sizeof *n);
  n->program = p;
  n->hash = h;
  n->parent = parent;
  n->depth = parent >= 0 ? ctx->nodes[parent].depth + 1 : 0;
  n->step = dup_str(step);
  n->speedup = speedup;
  n->median_s = median_s;
  n->klass = klass;
  return (int)ctx->nnodes++;
}

void leir__search_node_release(search_node *n) {
  leir_program_free(n->program);
  free(n->step);
  leir_candidates_free(n->cands);
  leir_kernel_free(n->kernel);
  if (n->policy_state.data && n->policy_state.release) n->policy_state.release(n->policy_state.data);
  if (n->builtin_state.data && n->builtin_state.release)
    n->builtin_state.release(n->builtin_state.data);
  for (size_t i = 0; i < n->nfb; i++) {
    free((char *)n->fb[i].proposal);
    free((char *)n->fb[i].reason);
  }
  free(n->fb);
  free(n->children);
}

leir_status leir__search_node_candidates(search_ctx *ctx, search_node *n) {
  if (n->cands) return LEIR_OK;
  return leir_candidates_list(&n->cands, n->program, &ctx->copts);
}

void leir__search_add_feedback(search_node *n, const char *proposal, leir_search_reject rj,
                               leir_verdict v, const char *reason) {
  leir_search_feedback *nf = realloc(n->fb, (n->nfb + 1) * sizeof *nf);
  if (!nf) return;
  n->fb = nf;
  n->fb[n->nfb].proposal = dup_str(proposal);
  n->fb[n->nfb].reject = rj;
  n->fb[n->nfb].verdict = v;
  n->fb[n->nfb].reason = dup_str(reason);
  n->nfb++;
}

leir_status leir__search_node_kernel(search_ctx *ctx, search_node *n) {
  if (n->kernel) return LEIR_OK;
  return leir_kernel_new(&n->kernel, ctx->backend, n->program);
}
