/*
 * libFuzzer target for LLM answers (dataset/answer.c): any bytes end in a
 * clean status with a reason; an accepted answer's usable entries hold
 * NUL-free, valid UTF-8 strings, and written back as a JSON label (the
 * dataset's own format) they parse again to the same entries — unless a
 * string holds a think or answer tag itself, which no tag format can carry.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "strbuf.h"

#define REQUIRE(cond) \
  do {                \
    if (!(cond)) abort(); \
  } while (0)

static void put_item(leir__strbuf *b, const leir__answer_item *it, size_t idx, int list) {
  leir__sb_putc(b, '{');
  if (list) leir__sb_printf(b, "\"idx\": %zu, ", idx);
  leir__sb_puts(b, "\"transformed_IR\": ");
  leir__sb_put_json_string(b, it->ir, it->ir_len);
  leir__sb_puts(b, ", \"applied_strategies\": [");
  for (size_t k = 0; k < it->n_strategies; k++) {
    if (k) leir__sb_puts(b, ", ");
    leir__sb_put_json_string(b, it->strategies[k], strlen(it->strategies[k]));
  }
  leir__sb_puts(b, "]}");
}

static int has_tag(const char *s) { return strstr(s, "answer>") || strstr(s, "think>"); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  leir__answer *a = NULL;
  leir__answer_reason r = LEIR__ANSWER_OK;
  leir_status st = leir__answer_parse((const char *)data, size, &a, &r);
  if (st != LEIR_OK) {
    REQUIRE(a == NULL);
    REQUIRE(st == LEIR_ERR_PARSE || st == LEIR_ERR_NOMEM);
    if (st == LEIR_ERR_PARSE) {
      REQUIRE(r != LEIR__ANSWER_OK && r < LEIR__ANSWER_REASON_COUNT);
      REQUIRE(strncmp(leir_error_last()->rule, "answer.", 7) == 0);
      REQUIRE(leir_error_last()->message[0]);
    }
    return 0;
  }
  REQUIRE(r == LEIR__ANSWER_OK && a->n_items >= 1 && a->n_ok >= 1 && a->n_ok <= a->n_items);
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_puts(&b, "<think></think><answer>");
  if (a->is_list) leir__sb_putc(&b, '[');
  size_t ok = 0;
  int tagged = 0;
  for (size_t i = 0; i < a->n_items; i++) {
    const leir__answer_item *it = &a->items[i];
    if (it->reason != LEIR__ANSWER_OK) {
      REQUIRE(it->ir == NULL && it->message[0]);
      continue;
    }
    REQUIRE(it->ir && strlen(it->ir) == it->ir_len && leir__utf8_valid(it->ir, it->ir_len));
    REQUIRE(it->n_strategies >= 1);
    tagged |= has_tag(it->ir);
    for (size_t k = 0; k < it->n_strategies; k++) {
      REQUIRE(leir__utf8_valid(it->strategies[k], strlen(it->strategies[k])));
      tagged |= has_tag(it->strategies[k]);
    }
    if (ok++) leir__sb_puts(&b, ", ");
    put_item(&b, it, i, a->is_list);
  }
  if (a->is_list) leir__sb_putc(&b, ']');
  leir__sb_puts(&b, "</answer>");
  size_t len = 0;
  char *text = leir__sb_finish(&b, &len);
  REQUIRE(text);
  if (tagged) {
    free(text);
    leir__answer_free(a);
    return 0;
  }
  leir__answer *c = NULL;
  REQUIRE(leir__answer_parse(text, len, &c, NULL) == LEIR_OK);
  REQUIRE(c->n_items == a->n_ok && c->n_ok == a->n_ok);
  size_t j = 0;
  for (size_t i = 0; i < a->n_items; i++) {
    const leir__answer_item *x = &a->items[i];
    if (x->reason != LEIR__ANSWER_OK) continue;
    const leir__answer_item *y = &c->items[j++];
    REQUIRE(y->ir_len == x->ir_len && memcmp(x->ir, y->ir, x->ir_len) == 0);
    REQUIRE(y->n_strategies == x->n_strategies);
    for (size_t k = 0; k < x->n_strategies; k++) REQUIRE(strcmp(x->strategies[k], y->strategies[k]) == 0);
  }
  free(text);
  leir__answer_free(c);
  leir__answer_free(a);
  return 0;
}
