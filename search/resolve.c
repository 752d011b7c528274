/* A proposal to a program: a candidate by index, a (lookahead) macro-step,
 * a step's text, or a whole program grounded to one step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#include "error.h"
#include "strbuf.h"

/* ---- one proposal ------------------------------------------------------------- */

/* Resolves a proposal to a program and its step. On failure *rj and reason
 * say why. */
leir_program *leir__search_resolve(search_ctx *ctx, search_node *n, const proposal *p,
                                   char **step_text, leir_exactness *ex, leir_search_reject *rj,
                                   char *reason, size_t cap) {
  leir_program *out = NULL;
  leir_status st;
  if (p->kind == 0) {
    if (leir__search_node_candidates(ctx, n) != LEIR_OK ||
        p->index >= leir_candidates_count(n->cands)) {
      *rj = LEIR_REJECT_MALFORMED;
      snprintf(reason, cap, "candidate %zu does not exist (the program has %zu)", p->index,
               leir_candidates_count(n->cands));
      return NULL;
    }
    if (leir_candidates_apply(&out, n->cands, p->index) != LEIR_OK) {
      *rj = LEIR_REJECT_NOT_APPLICABLE;
      snprintf(reason, cap, "%s", leir_error_last()->message);
      return NULL;
    }
    *ex = leir_candidates_exactness(n->cands, p->index);
    *step_text = dup_str(leir_step_text(leir_candidates_step(n->cands, p->index)));
    return out;
  }
  if (p->kind == 4) {
    /* a macro-step: two enumerated candidates in a row */
    leir_program *mid = NULL;
    if (leir__search_node_candidates(ctx, n) != LEIR_OK ||
        p->index >= leir_candidates_count(n->cands) ||
        leir_candidates_apply(&mid, n->cands, p->index) != LEIR_OK) {
      *rj = LEIR_REJECT_NOT_APPLICABLE;
      snprintf(reason, cap, "macro-step: the first step does not apply");
      return NULL;
    }
    leir_exactness e1 = leir_candidates_exactness(n->cands, p->index);
    const char *s1 = leir_step_text(leir_candidates_step(n->cands, p->index));
    leir_candidates *c2 = NULL;
    size_t k = SIZE_MAX;
    if (leir_candidates_list(&c2, mid, &ctx->copts) == LEIR_OK)
      for (size_t i = 0; i < leir_candidates_count(c2); i++)
        if (strcmp(leir_step_text(leir_candidates_step(c2, i)), p->text) == 0) {
          k = i;
          break;
        }
    if (k == SIZE_MAX || leir_candidates_apply(&out, c2, k) != LEIR_OK) {
      *rj = LEIR_REJECT_NOT_APPLICABLE;
      snprintf(reason, cap, "macro-step: '%s' is not a step of the intermediate program", p->text);
      leir_candidates_free(c2);
      leir_program_free(mid);
      return NULL;
    }
    leir_exactness e2 = leir_candidates_exactness(c2, k);
    *ex = e1 > e2 ? e1 : e2;
    size_t len = strlen(s1) + strlen(p->text) + 4;
    *step_text = malloc(len);
    if (*step_text) snprintf(*step_text, len, "%s ; %s", s1, p->text);
    leir_candidates_free(c2);
    leir_program_free(mid);
    return out;
  }
  if (p->kind == 5) {
    /* a lookahead macro-step: each line one enumerated candidate of the
     * program the previous line gave (the search's candidate options, so
     * that steps outside the reference domain apply, as in the list) */
    leir_program *cur = NULL;
    leir_exactness worst = LEIR_EXACT;
    leir__strbuf b = {0};
    const char *line = p->text;
    size_t part = 0;
    st = leir_program_clone(&cur, n->program);
    if (st != LEIR_OK) {
      ctx->fatal = st;
      return NULL;
    }
    while (line && *line) {
      const char *nl = strchr(line, '\n');
      size_t len = nl ? (size_t)(nl - line) : strlen(line);
      leir_candidates *c = NULL;
      size_t k = SIZE_MAX;
      if (leir_candidates_list(&c, cur, &ctx->copts) == LEIR_OK)
        for (size_t i = 0; i < leir_candidates_count(c); i++) {
          const char *t = leir_step_text(leir_candidates_step(c, i));
          if (strlen(t) == len && strncmp(t, line, len) == 0) {
            k = i;
            break;
          }
        }
      leir_program *next = NULL;
      if (k == SIZE_MAX || leir_candidates_apply(&next, c, k) != LEIR_OK) {
        *rj = LEIR_REJECT_NOT_APPLICABLE;
        snprintf(reason, cap, "macro-step: step %zu ('%.*s') is not a step of the program before it",
                 part + 1, (int)(len < 200 ? len : 200), line);
        leir_candidates_free(c);
        leir_program_free(cur);
        free(leir__sb_finish(&b, NULL));
        return NULL;
      }
      leir_exactness e = leir_candidates_exactness(c, k);
      if (e > worst) worst = e;
      leir_candidates_free(c);
      leir_program_free(cur);
      cur = next;
      if (part++) leir__sb_puts(&b, " ; ");
      leir__sb_printf(&b, "%.*s", (int)len, line);
      line = nl ? nl + 1 : NULL;
    }
    *ex = worst;
    *step_text = leir__sb_finish(&b, NULL);
    return cur;
  }
  if (p->kind == 1) {
    leir_step *s = NULL;
    st = leir_step_parse(&s, p->text, strlen(p->text));
    if (st != LEIR_OK) {
      *rj = LEIR_REJECT_MALFORMED;
      snprintf(reason, cap, "not a step: %s", leir_error_last()->message);
      return NULL;
    }
    st = leir_step_apply(&out, n->program, s, ex);
    if (st != LEIR_OK) {
      *rj = LEIR_REJECT_NOT_APPLICABLE;
      const leir_error *e = leir_error_last();
      snprintf(reason, cap, "not applicable: %s%s%s%s", e->message, *e->rule ? " [" : "",
               e->rule, *e->rule ? "]" : "");
      leir_step_free(s);
      return NULL;
    }
    *step_text = dup_str(leir_step_text(s));
    leir_step_free(s);
    return out;
  }
  if (p->kind == 3) {
    *rj = LEIR_REJECT_MALFORMED;
    snprintf(reason, cap, "%s", p->strategy ? p->strategy : "unreadable answer");
    return NULL;
  }
  /* a whole program: parse, take the current signature, check, ground */
  leir_parse_options po = LEIR_PARSE_OPTIONS_INIT;
  po.flags |= LEIR_PARSE_LENIENT;
  po.max_input_bytes = (uint64_t)16 << 20;
  st = leir_program_parse(&out, p->text, strlen(p->text), &po);
  if (st == LEIR_OK) {
    size_t ns = leir_program_signature_count(n->program);
    leir_tensor_decl *d = calloc(ns ? ns : 1, sizeof *d);
    if (!d) {
      leir_program_free(out);
      ctx->fatal = leir__error_nomem();
      return NULL;
    }
    for (size_t i = 0; i < ns && st == LEIR_OK; i++)
      st = leir_program_signature_get(n->program, i, &d[i]);
    if (st == LEIR_OK) st = leir_program_set_signature(out, d, ns);
    free(d);
    leir_diagnostics *diags = NULL;
    if (st == LEIR_OK) st = leir_program_check(out, NULL, &diags);
    leir_diagnostics_free(diags);
  }
  if (st != LEIR_OK) {
    const leir_error *e = leir_error_last();
    *rj = LEIR_REJECT_MALFORMED;
    if (e->line)
      snprintf(reason, cap, "invalid at %u:%u: %s", e->line, e->column, e->message);
    else
      snprintf(reason, cap, "invalid: %s", e->message);
    leir_program_free(out);
    return NULL;
  }
  /* the current program again (up to fresh names): leir__search_evaluate() says `same`,
   * which tells a model more than "not one step" would */
  if (leir_program_hash_alpha(out) == n->hash) return out;
  leir_candidates_options go = ctx->copts;
  go.strategy = -1;
  if (p->strategy && *p->strategy) {
    size_t si;
    if (leir_strategy_find(p->strategy, &si) != LEIR_OK) {
      *rj = LEIR_REJECT_NOT_ONE_STEP;
      snprintf(reason, cap, "unknown strategy '%s'", p->strategy);
      leir_program_free(out);
      return NULL;
    }
    go.strategy = (int32_t)si;
  }
  leir_candidates *g = NULL;
  st = leir_ground(&g, n->program, out, &go);
  if (st != LEIR_OK || leir_candidates_count(g) == 0) {
    *rj = LEIR_REJECT_NOT_ONE_STEP;
    snprintf(reason, cap, "not one step of %s from the current program",
             p->strategy && *p->strategy ? p->strategy : "any strategy");
    leir_candidates_free(g);
    leir_program_free(out);
    return NULL;
  }
  *ex = leir_candidates_exactness(g, 0);
  *step_text = dup_str(leir_step_text(leir_candidates_step(g, 0)));
  leir_candidates_free(g);
  return out;
}
