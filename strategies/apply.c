/*
 * Public API: applying one step (leir_step_apply, leir_step_apply_listed of
 * leir/experimental/candidates.h) after validating it against the
 * program's candidates in the domain it was listed in, and its chain of
 * thought.
 */
#define LEIR_EXPERIMENTAL
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "error.h"
#include "leir/experimental/candidates.h"
#include "options.h"

leir_status leir__apply_parsed(leir__sctx *c, const leir__pstep *ps, leir_program **out) {
  *out = NULL;
  const leir__strategy_impl *impl = leir__strategies[ps->strategy].impl;
  if (!impl) return leir__strategy_not_implemented(ps->strategy);
  leir_program *q = NULL;
  leir_status st = leir_program_clone(&q, c->p);
  if (st != LEIR_OK) return st;
  jmp_buf jb;
  if (setjmp(jb)) {
    leir_program_free(q);
    return leir__error_nomem();
  }
  q->oom_jmp = &jb;
  st = impl->apply(c, ps, q);
  q->oom_jmp = NULL;
  if (st != LEIR_OK) {
    leir_program_free(q);
    return st;
  }
  *out = q;
  return LEIR_OK;
}

/* Why a step is not among the candidates: the explanation of the same site. */
static leir_status not_applicable(leir__sctx *c, const leir__pstep *ps, const char *text) {
  leir__findings ex;
  memset(&ex, 0, sizeof ex);
  leir__arena_init(&ex.text, 1024);
  c->mode = LEIR__MODE_EXPLAIN;
  c->ex = &ex;
  c->found = false;
  leir__sctx_run(c, ps->strategy);
  c->ex = NULL;
  const leir_reason *best = NULL;
  size_t best_len = 0;
  for (size_t i = 0; i < ex.r.len; i++) {
    const leir_reason *r = &ex.r.data[i];
    size_t sl = strlen(r->site);
    if (r->applies || !sl || sl <= best_len) continue;
    /* the site's parameters must all appear in the step */
    const char *at = strstr(text, r->site);
    if (at && at > text && at[-1] == ' ' && (at[sl] == ' ' || at[sl] == '\0')) {
      best = r;
      best_len = sl;
    }
  }
  if (!best)
    for (size_t i = 0; i < ex.r.len && !best; i++)
      if (!ex.r.data[i].applies && !ex.r.data[i].site[0]) best = &ex.r.data[i];
  leir_status st;
  const char *name = leir__strategy_name(ps->strategy);
  if (best)
    st = leir__error(LEIR_ERR_NOT_APPLICABLE, best->rule, best->site, 0, 0,
                     "'%s' does not apply: %s", text, best->message);
  else
    st = leir__error(LEIR_ERR_NOT_APPLICABLE, leir__rule_name(LEIR__R_STEP_NOT_A_CANDIDATE), name,
                     0, 0,
                     "'%s' does not apply: the program has no such site or the parameters are "
                     "outside the strategy's domain (see 'leir explain %s')",
                     text, name);
  free(ex.r.data);
  leir__arena_release(&ex.text);
  return st;
}

/* Validates step text `text` (canonical) on context c; sets *cls. */
static leir_status validate(leir__sctx *c, const leir__pstep *ps, const char *text, size_t len,
                            leir_exactness *cls) {
  if (!leir__strategies[ps->strategy].impl) return leir__strategy_not_implemented(ps->strategy);
  c->mode = LEIR__MODE_MATCH;
  c->want = text;
  c->want_len = len;
  c->want_nest = leir__ps_get(ps, LEIR__K_NEST, NULL);
  c->want_tensor = leir__ps_get(ps, LEIR__K_TENSOR, NULL);
  c->found = false;
  leir__sctx_run(c, ps->strategy);
  c->want_nest = c->want_tensor = NULL;
  if (c->status != LEIR_OK) return c->status == LEIR_ERR_NOMEM ? leir__error_nomem() : c->status;
  if (!c->found) return not_applicable(c, ps, text);
  *cls = c->found_class;
  return LEIR_OK;
}

/* Validates and applies `step` among the candidates of a listing with
 * `flags` (LEIR__REPLAY_FLAGS) and `width`: the domain the step is
 * replayed in. */
_Static_assert(LEIR__DOMAIN_GATED == LEIR_CANDIDATES_GATED_SPLITS, "one bit, two names");
static leir_status apply_in_domain(leir_program **out, const leir_program *program,
                                   const leir_step *step, uint32_t flags, uint32_t width,
                                   leir_exactness *exactness) {
  if (!out || !program || !step)
    return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  leir__pstep ps;
  leir_status st = leir__step_parse_text(&ps, step->text, step->len);
  if (st != LEIR_OK) return st;
  leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
  o.flags = flags & LEIR__DOMAIN_FLAGS;
  o.vector_width = width;
  leir__sctx *c;
  st = leir__sctx_new(&c, program, &o);
  if (st != LEIR_OK) return st;
  /* a step leir_ground's gated pass found replays in that pass's domain */
  c->split_relaxed = (flags & LEIR__DOMAIN_GATED) != 0;
  leir_exactness cls = LEIR_EXACT;
  st = validate(c, &ps, step->text, step->len, &cls);
  if (st == LEIR_OK) st = leir__apply_parsed(c, &ps, out);
  if (st == LEIR_OK && exactness) *exactness = cls;
  leir__sctx_free(c);
  return st;
}

leir_status leir_step_apply(leir_program **out, const leir_program *program, const leir_step *step,
                            leir_exactness *exactness) {
  return apply_in_domain(out, program, step, step ? step->domain_flags : 0,
                         step ? step->vector_width : LEIR__REFERENCE_VECTOR_WIDTH, exactness);
}

/* ---- leir_step_apply_listed (leir/experimental/candidates.h) ------------------- */

leir_status leir_step_apply_listed(leir_program **out, const leir_program *program,
                                   const leir_step *step, const leir_candidates_options *listing,
                                   leir_exactness *exactness) {
  if (!listing) return leir_step_apply(out, program, step, exactness);
  leir_candidates_options o;
  leir_status st = LEIR__OPTIONS_READ(leir_candidates_options, &o, listing,
                                      LEIR_CANDIDATES_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  return apply_in_domain(out, program, step, o.flags,
                         o.vector_width ? o.vector_width : LEIR__REFERENCE_VECTOR_WIDTH, exactness);
}

leir_status leir_step_cot(char **out, size_t *out_len, const leir_program *program,
                          const leir_step *step) {
  if (!out || !program || !step)
    return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  leir_program *after = NULL;
  leir_status st = leir_step_apply(&after, program, step, NULL);
  if (st != LEIR_OK) return st;
  leir__pstep ps;
  st = leir__step_parse_text(&ps, step->text, step->len);
  leir__strbuf b = LEIR__STRBUF_INIT;
  if (st == LEIR_OK) st = leir__cot(&b, program, after, &ps);
  leir_program_free(after);
  if (st != LEIR_OK) {
    leir__sb_release(&b);
    return st;
  }
  *out = leir__sb_finish(&b, out_len);
  return *out ? LEIR_OK : leir__error_nomem();
}
