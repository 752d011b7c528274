/*
 * Public API: explanations (leir_strategy_explain): every site a strategy
 * considers, with its candidates or the precondition that fails.
 */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "error.h"

leir_status leir_strategy_explain(leir_explanation **out, const leir_program *program,
                                  size_t strategy) {
  if (!out || !program || strategy >= LEIR__NSTRATEGIES)
    return leir__error_arg(NULL, "NULL argument or strategy index out of range");
  *out = NULL;
  leir_explanation *e = calloc(1, sizeof *e);
  if (!e) return leir__error_nomem();
  e->strategy = (int)strategy;
  leir__arena_init(&e->f.text, 1024);
  leir__sctx *c;
  leir_status st = leir__sctx_new(&c, program, NULL);
  if (st != LEIR_OK) {
    leir_explanation_free(e);
    return st;
  }
  c->mode = LEIR__MODE_EXPLAIN;
  c->ex = &e->f;
  if (!leir__strategies[strategy].impl) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s is not implemented in this version of libleir",
             leir__strategy_name((int)strategy));
    leir__add_finding(c, 0, "", leir__rule_name(LEIR__R_STRATEGY_NOT_IMPLEMENTED), msg,
                      strlen(msg));
  } else {
    leir__sctx_run(c, (int)strategy);
  }
  st = c->status == LEIR_ERR_NOMEM ? leir__error_nomem() : c->status;
  leir__sctx_free(c);
  if (st != LEIR_OK) {
    leir_explanation_free(e);
    return st;
  }
  *out = e;
  return LEIR_OK;
}

void leir_explanation_free(leir_explanation *e) {
  if (!e) return;
  free(e->f.r.data);
  leir__arena_release(&e->f.text);
  free(e);
}

size_t leir_explanation_candidates(const leir_explanation *e) { return e ? e->f.ncand : 0; }
size_t leir_explanation_count(const leir_explanation *e) { return e ? e->f.r.len : 0; }

const leir_reason *leir_explanation_get(const leir_explanation *e, size_t i) {
  return e && i < e->f.r.len ? &e->f.r.data[i] : NULL;
}

leir_status leir_explanation_text(const leir_explanation *e, char **out, size_t *out_len) {
  if (!e || !out) return leir__error_arg(NULL, "NULL argument");
  leir__strbuf b = LEIR__STRBUF_INIT;
  const char *name = leir__strategy_name(e->strategy);
  if (e->f.ncand)
    leir__sb_printf(&b, "%s applies: %zu candidate%s\n", name, e->f.ncand,
                    e->f.ncand == 1 ? "" : "s");
  else
    leir__sb_printf(&b, "%s does not apply\n", name);
  for (size_t i = 0; i < e->f.r.len; i++) {
    const leir_reason *r = &e->f.r.data[i];
    if (r->applies)
      leir__sb_printf(&b, "  candidate: %s\n", r->message);
    else if (r->site[0])
      leir__sb_printf(&b, "  %s: %s [%s]\n", r->site, r->message, r->rule);
    else
      leir__sb_printf(&b, "  %s [%s]\n", r->message, r->rule);
  }
  *out = leir__sb_finish(&b, out_len);
  return *out ? LEIR_OK : leir__error_nomem();
}
