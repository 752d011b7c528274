/*
 * Public API: listing the candidates of a program (leir_candidates_*,
 * leir_candidates_assumed of leir/experimental/candidates.h), and running
 * one strategy's enumeration in a context.
 */
#define LEIR_EXPERIMENTAL
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "error.h"
#include "leir/experimental/candidates.h"

void leir__sctx_run(leir__sctx *c, int s) {
  const leir__strategy_impl *impl = leir__strategies[s].impl;
  c->strategy = s;
  c->strategy_name = leir__strategy_name(s);
  if (impl && leir__more(c)) impl->enumerate(c);
}

leir_status leir__candidates_new(struct leir_candidates **out, leir__sctx *c) {
  struct leir_candidates *l = calloc(1, sizeof *l);
  if (!l) return leir__error_nomem();
  l->ctx = c;
  leir__arena_init(&l->l.text, 4096);
  *out = l;
  return LEIR_OK;
}

void leir_candidates_free(leir_candidates *l) {
  if (!l) return;
  leir__sctx_free(l->ctx);
  free(l->l.steps.data);
  leir__arena_release(&l->l.text);
  free(l);
}

static leir_status run_list(leir__sctx *c, struct leir_candidates *l) {
  c->mode = LEIR__MODE_LIST;
  c->list = &l->l;
  if (c->o.strategy >= 0) {
    leir__sctx_run(c, c->o.strategy);
  } else {
    for (int s = 0; s < LEIR__NSTRATEGIES && c->status == LEIR_OK; s++) leir__sctx_run(c, s);
  }
  c->list = NULL;
  if (c->status == LEIR_ERR_NOMEM) return leir__error_nomem();
  return c->status;
}

leir_status leir_candidates_list(leir_candidates **out, const leir_program *program,
                                 const leir_candidates_options *opts) {
  if (!out || !program)
    return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  leir__sctx *c;
  leir_status st = leir__sctx_new(&c, program, opts);
  if (st != LEIR_OK) return st;
  struct leir_candidates *l = NULL;
  st = leir__candidates_new(&l, c);
  if (st != LEIR_OK) {
    leir__sctx_free(c);
    return st;
  }
  st = run_list(c, l);
  if (st != LEIR_OK) {
    leir_candidates_free(l);
    return st;
  }
  *out = l;
  return LEIR_OK;
}

size_t leir_candidates_count(const leir_candidates *l) { return l ? l->l.steps.len : 0; }

const leir_step *leir_candidates_step(const leir_candidates *l, size_t i) {
  return l && i < l->l.steps.len ? &l->l.steps.data[i] : NULL;
}

leir_exactness leir_candidates_exactness(const leir_candidates *l, size_t i) {
  return l && i < l->l.steps.len ? (leir_exactness)l->l.steps.data[i].exactness : LEIR_EXACT;
}

leir_status leir_candidates_apply(leir_program **out, const leir_candidates *l, size_t i) {
  if (!out || !l || i >= l->l.steps.len)
    return leir__error_arg(NULL, "no candidate %zu", i);
  *out = NULL;
  leir__pstep ps;
  const leir_step *s = &l->l.steps.data[i];
  leir_status st = leir__step_parse_text(&ps, s->text, s->len);
  if (st != LEIR_OK) return st;
  /* Threads may apply candidates of one shared list at once, so the list's
   * context is only read: the apply runs in a view of it whose mutable parts
   * (mode, dependence cache, emit buffers, sticky status) are its own. */
  const leir__sctx *shared = l->ctx;
  leir__sctx view = *shared;
  leir__steplist scratch;
  memset(&scratch, 0, sizeof scratch);
  leir__arena_init(&scratch.text, 256);
  view.mode = LEIR__MODE_LIST;
  view.list = &scratch;
  view.ex = NULL;
  view.found = false;
  view.status = LEIR_OK;
  view.sb = (leir__strbuf)LEIR__STRBUF_INIT;
  view.deps = calloc(view.nnests ? view.nnests : 1, sizeof *view.deps);
  if (!view.deps) st = leir__error_nomem();
  if (st == LEIR_OK) st = leir__apply_parsed(&view, &ps, out);
  if (view.deps)
    for (uint32_t k = 0; k < view.nnests; k++) {
      if (view.deps[k]) free(view.deps[k]->w);
      free(view.deps[k]);
    }
  free(view.deps);
  leir__sb_release(&view.sb);
  free(scratch.steps.data);
  leir__arena_release(&scratch.text);
  return st;
}

/* ---- leir_candidates_assumed (leir/experimental/candidates.h) ----------------- */

leir_status leir_candidates_assumed(const leir_candidates *l, size_t i, int *assumed) {
  if (!l || !assumed || i >= l->l.steps.len)
    return leir__error_arg(NULL, "NULL argument or candidate index out of range");
  *assumed = 0;
  if (!l->ctx || !(l->ctx->o.flags & LEIR_CANDIDATES_GENERIC_VALUES)) return LEIR_OK;
  const leir_step *s = &l->l.steps.data[i];
  leir__pstep ps;
  leir_status st = leir__step_parse_text(&ps, s->text, s->len);
  if (st != LEIR_OK) return st;
  leir_candidates_options o = l->ctx->o;
  o.flags &= ~LEIR_CANDIDATES_GENERIC_VALUES;
  o.strategy = (int32_t)ps.strategy;
  leir__sctx *c = NULL;
  st = leir__sctx_new(&c, l->ctx->p, &o);
  if (st != LEIR_OK) return st;
  /* the step among the proven candidates of its own nest (MATCH mode) */
  c->mode = LEIR__MODE_MATCH;
  c->want = s->text;
  c->want_len = s->len;
  c->want_nest = leir__ps_get(&ps, LEIR__K_NEST, NULL);
  c->want_tensor = leir__ps_get(&ps, LEIR__K_TENSOR, NULL);
  c->found = false;
  leir__sctx_run(c, ps.strategy);
  st = c->status == LEIR_ERR_NOMEM ? leir__error_nomem() : c->status;
  if (st == LEIR_OK) *assumed = !c->found;
  leir__sctx_free(c);
  return st;
}
