/* Candidate lists as JSON (include/leir/strategy.h), so that bindings and
 * tools read every field through one documented format. Uses the public
 * candidate and step API only. */
#include "leir/strategy.h"

#include <string.h>

#include "error.h"
#include "strbuf.h"

leir_status leir_candidates_to_json(const leir_candidates *candidates, uint32_t flags, char **out,
                                    size_t *out_len) {
  if (out) *out = NULL;
  if (out_len) *out_len = 0;
  if (!candidates || !out)
    return leir__error_arg(NULL, "NULL argument");
  if (flags & ~LEIR_CANDIDATES_JSON_RESULT)
    return leir__error_arg(NULL, "unknown flags 0x%x for leir_candidates_to_json", (unsigned)flags);
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_putc(&b, '[');
  size_t n = leir_candidates_count(candidates);
  for (size_t i = 0; i < n; i++) {
    const leir_step *s = leir_candidates_step(candidates, i);
    const leir_strategy_info *info = leir_strategy_info_at(leir_step_strategy(s));
    char *js = NULL, *result = NULL;
    size_t jlen = 0, rlen = 0;
    leir_status st = leir_step_to_json(s, &js, &jlen);
    if (st == LEIR_OK && (flags & LEIR_CANDIDATES_JSON_RESULT)) {
      leir_program *q = NULL;
      st = leir_candidates_apply(&q, candidates, i);
      if (st == LEIR_OK) st = leir_program_print(q, 0, &result, &rlen);
      leir_program_free(q);
    }
    if (st != LEIR_OK) {
      leir_free(js);
      leir_free(result);
      leir__sb_release(&b);
      return st;
    }
    const char *text = leir_step_text(s);
    leir__sb_printf(&b, "%s{\"index\":%zu,\"strategy\":", i ? "," : "", i);
    leir__sb_put_json_string(&b, info ? info->name : "", info ? strlen(info->name) : 0);
    leir__sb_puts(&b, ",\"step\":");
    leir__sb_put_json_string(&b, text, strlen(text));
    leir__sb_puts(&b, ",\"json\":");
    leir__sb_put(&b, js, jlen);
    leir__sb_puts(&b, ",\"class\":");
    const char *cls = leir_exactness_name(leir_candidates_exactness(candidates, i));
    leir__sb_put_json_string(&b, cls, strlen(cls));
    if (result) {
      leir__sb_puts(&b, ",\"result\":");
      leir__sb_put_json_string(&b, result, rlen);
    }
    leir__sb_putc(&b, '}');
    leir_free(js);
    leir_free(result);
  }
  leir__sb_putc(&b, ']');
  size_t len = 0;
  char *text = leir__sb_finish(&b, &len);
  if (!text) return leir__error_nomem();
  *out = text;
  if (out_len) *out_len = len;
  return LEIR_OK;
}
