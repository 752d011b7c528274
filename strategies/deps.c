/*
 * Dependences inside one nest, enough to decide which loop orders and
 * annotations keep a program's results.
 *
 * For every buffer B written in the nest (at any depth), a loop l of the
 * nest is *pinned* when some subscript entry is the same expression in
 * every access to B in the nest and is an affine function of the loops
 * whose value determines l (leir__affine_determined): two iterations that
 * touch the same element of B then have the same value of l. Loops of extent 1 are pinned too.
 * Two iterations that depend on each other through B agree on every pinned
 * loop, so only the order of the other (relevant) loops matters for B:
 *  - a new iteration order keeps B's results when it keeps the relative
 *    order of B's relevant loops;
 *  - otherwise it only reassociates when B is a pure accumulation (the
 *    nest's only accesses to B are `B_s = B_s op ...` with op in + - * /,
 *    reassociating, or max/min, exact).
 * Whether a single loop may run in parallel (P/V/B) is decided by
 * leir__loop_independent (lib/parallel.c), the rule the backends apply.
 * Both answers come from the one dependence model (lib/dependence.c,
 * leir__dep_nest_buffers and leir__dep_loop_independent); this file keeps
 * the strategies' view of them.
 */
#include <stdlib.h>
#include <string.h>

#include "dependence.h"
#include "kit.h"

static leir__deps *compute(const leir__sctx *c, const leir__nref *r) {
  leir__deps *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->nloops = r->nest->nloops;
  leir__dep_buffer *w = NULL;
  uint32_t nw = 0;
  d->ok = leir__dep_nest_buffers(c->a, r->nest, r->outer, &w, &nw);
  if (d->ok && nw) {
    d->w = calloc(nw, sizeof *d->w);
    if (!d->w) {
      free(w);
      free(d);
      return NULL;
    }
    for (uint32_t i = 0; i < nw; i++) {
      d->w[i].buffer = w[i].buffer;
      d->w[i].pinned = w[i].pinned;
      d->w[i].acc = w[i].acc == LEIR__DEP_ACC_ASSOC    ? (uint8_t)LEIR__ACC_ASSOC
                    : w[i].acc == LEIR__DEP_ACC_MAXMIN ? (uint8_t)LEIR__ACC_MAXMIN
                                                       : (uint8_t)LEIR__ACC_OTHER;
    }
    d->nw = nw;
  }
  free(w);
  return d;
}

const leir__deps *leir__nest_deps(leir__sctx *c, uint32_t i) {
  if (!c->deps[i]) {
    c->deps[i] = compute(c, &c->nests[i]);
    if (!c->deps[i]) c->status = LEIR_ERR_NOMEM;
  }
  return c->deps[i];
}

int leir__order_class(const leir__deps *d, const uint8_t *loop, const uint8_t *sig, uint32_t n) {
  if (!d || !d->ok) return -1;
  int cls = 0;
  for (uint32_t b = 0; b < d->nw; b++) {
    const leir__wbuf *w = &d->w[b];
    int last_loop = -1, last_sig = -1;
    bool kept = true;
    for (uint32_t k = 0; k < n && kept; k++) {
      if (w->pinned & ((uint64_t)1 << loop[k])) continue;
      if (loop[k] < last_loop || (loop[k] == last_loop && sig[k] < last_sig)) kept = false;
      last_loop = loop[k];
      last_sig = sig[k];
    }
    if (kept) continue;
    if (w->acc == LEIR__ACC_MAXMIN) continue;
    if (w->acc == LEIR__ACC_ASSOC) {
      cls = 1;
      continue;
    }
    return -1;
  }
  return cls;
}
