/* Parsing LLM answers: answer.h says what is accepted. The literal reader
 * (literal.c) reads the common ground of JSON and Python literals (what json.dumps and
 * str() of a dict or list write, plus what models write by hand: single or
 * double or triple quotes, string prefixes r/u/b, adjacent strings,
 * True/False/None and true/false/null, tuples, trailing commas, # comments). */
#include "answer.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "literal.h"
#include "strbuf.h"

static const char *const reason_names[LEIR__ANSWER_REASON_COUNT] = {
    "ok",          "empty",      "too_large",        "no_answer",    "syntax",
    "too_deep",    "not_object", "empty_list",       "too_many_items", "missing_ir",
    "bad_ir",      "missing_strategy", "bad_strategy", "bad_idx",     "bad_text",
};

const char *leir__answer_reason_name(leir__answer_reason reason) {
  if ((unsigned)reason >= LEIR__ANSWER_REASON_COUNT) return "unknown";
  return reason_names[reason];
}

typedef leir__lit val;
#define V_NONE LEIR__LIT_NONE
#define V_NUM LEIR__LIT_NUM
#define V_STR LEIR__LIT_STR
#define V_LIST LEIR__LIT_LIST
#define V_DICT LEIR__LIT_DICT

/* ---- locating the answer ----------------------------------------------- */

static const char *find(const char *s, size_t n, const char *needle) {
  size_t m = strlen(needle);
  if (m > n) return NULL;
  for (size_t i = 0; i + m <= n; i++)
    if (s[i] == needle[0] && memcmp(s + i, needle, m) == 0) return s + i;
  return NULL;
}

static const char *find_last(const char *s, size_t n, const char *needle) {
  size_t m = strlen(needle);
  if (m > n) return NULL;
  for (size_t i = n - m + 1; i-- > 0;)
    if (s[i] == needle[0] && memcmp(s + i, needle, m) == 0) return s + i;
  return NULL;
}

/* The earlier of the two closing-tag spellings; *len gets the tag length. */
static const char *find_close(const char *s, size_t n, const char *slash, const char *backslash,
                              int *was_backslash) {
  const char *a = find(s, n, slash), *b = find(s, n, backslash);
  *was_backslash = b && (!a || b < a);
  return *was_backslash ? b : a;
}

static void trim(const char **s, size_t *n) {
  while (*n && isspace((unsigned char)**s)) (*s)++, (*n)--;
  while (*n && isspace((unsigned char)(*s)[*n - 1])) (*n)--;
}

/* Strips a ``` fence: the text between the first fence line and the next
 * fence (or the end). Returns 1 if there was one. */
static int strip_fence(const char **s, size_t *n) {
  const char *f = find(*s, *n, "```");
  if (!f) return 0;
  const char *after = f + 3;
  const char *end = *s + *n;
  while (after < end && *after != '\n' && (isalnum((unsigned char)*after) || *after == ' ')) after++;
  const char *g = find(after, (size_t)(end - after), "```");
  *s = after;
  *n = (size_t)((g ? g : end) - after);
  trim(s, n);
  return 1;
}

/* ---- interpreting the literal ------------------------------------------ */

#define dict_get leir__lit_get
#define kind_name leir__lit_kind_name

static int blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isspace((unsigned char)s[i])) return 0;
  return 1;
}

static void item_fail(leir__answer_item *it, leir__answer_reason r, const char *fmt, ...)
    LEIR__PRINTF(3, 4);
static void item_fail(leir__answer_item *it, leir__answer_reason r, const char *fmt, ...) {
  it->reason = r;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(it->message, sizeof it->message, fmt, ap);
  va_end(ap);
  it->ir = NULL;
  it->ir_len = 0;
  it->n_strategies = 0;
}

static int read_item(leir__answer *a, const val *d, leir__answer_item *it, uint32_t *flags) {
  memset(it, 0, sizeof *it);
  if (d->kind != V_DICT) {
    item_fail(it, LEIR__ANSWER_NOT_OBJECT, "an entry is %s, not a dict", kind_name(d->kind));
    return 0;
  }
  const val *ir = dict_get(d, "transformed_IR");
  if (!ir) {
    item_fail(it, LEIR__ANSWER_MISSING_IR, "no 'transformed_IR' key");
    return 0;
  }
  if (ir->kind != V_STR || blank(ir->s, ir->n)) {
    item_fail(it, LEIR__ANSWER_BAD_IR, "'transformed_IR' is %s", ir->kind == V_STR ? "empty" : kind_name(ir->kind));
    return 0;
  }
  if (ir->bad_text) {
    item_fail(it, LEIR__ANSWER_BAD_TEXT, "'transformed_IR' holds invalid UTF-8 or a NUL byte");
    return 0;
  }
  const val *st = dict_get(d, "applied_strategy");
  if (!st && (st = dict_get(d, "applied_strategies"))) *flags |= LEIR__ANSWER_PLURAL_KEY;
  if (!st) {
    item_fail(it, LEIR__ANSWER_MISSING_STRATEGY, "no 'applied_strategy' key");
    return 0;
  }
  size_t count = st->kind == V_STR ? 1 : st->kind == V_LIST ? st->n : 0;
  if (count == 0) {
    item_fail(it, LEIR__ANSWER_BAD_STRATEGY, "'applied_strategy' is %s",
              st->kind == V_LIST ? "an empty list" : kind_name(st->kind));
    return 0;
  }
  const char **names = leir__arena_calloc(&a->arena, count, sizeof *names);
  if (!names) return -1;
  const val *s = st->kind == V_STR ? st : st->first;
  for (size_t k = 0; k < count; k++, s = s->next) {
    if (s->kind != V_STR || blank(s->s, s->n)) {
      item_fail(it, LEIR__ANSWER_BAD_STRATEGY, "a strategy name is %s",
                s->kind == V_STR ? "empty" : kind_name(s->kind));
      return 0;
    }
    if (s->bad_text) {
      item_fail(it, LEIR__ANSWER_BAD_TEXT, "a strategy name holds invalid UTF-8 or a NUL byte");
      return 0;
    }
    names[k] = s->s;
    if (st->kind == V_STR) break;
  }
  const val *idx = dict_get(d, "idx");
  if (idx) {
    if (idx->kind == V_NUM && idx->is_int) {
      it->has_idx = 1;
      it->idx = idx->i;
    } else if (idx->kind != V_NONE) {
      item_fail(it, LEIR__ANSWER_BAD_IDX, "'idx' is %s, not an integer", kind_name(idx->kind));
      return 0;
    }
  }
  it->ir = ir->s;
  it->ir_len = ir->n;
  it->strategies = names;
  it->n_strategies = count;
  return 1;
}

/* ---- the entry point --------------------------------------------------- */

static void line_col(const char *text, size_t off, uint32_t *line, uint32_t *col) {
  uint32_t l = 1;
  size_t last = 0;
  for (size_t i = 0; i < off; i++)
    if (text[i] == '\n') l++, last = i + 1;
  *line = l;
  *col = (uint32_t)(off - last + 1);
}

static leir_status reject(leir__answer *a, const char *text, size_t len, leir__answer_reason r,
                          size_t off, const char *msg, leir__answer_reason *reason_out) {
  if (reason_out) *reason_out = r;
  leir__answer_free(a);
  uint32_t line = 0, col = 0;
  if (off <= len) line_col(text, off, &line, &col);
  char rule[40];
  snprintf(rule, sizeof rule, "answer.%s", leir__answer_reason_name(r));
  return leir__error(LEIR_ERR_PARSE, rule, NULL, line, col, "%s", msg);
}

leir_status leir__answer_parse(const char *text, size_t len, leir__answer **out,
                               leir__answer_reason *reason) {
  if (reason) *reason = LEIR__ANSWER_OK;
  if (!out) return leir__error_arg("out", "out must not be NULL");
  *out = NULL;
  if (!text && len) return leir__error_arg("text", "text must not be NULL");
  if (len > LEIR__ANSWER_MAX_BYTES)
    return reject(NULL, text, 0, LEIR__ANSWER_TOO_LARGE, 0, "the answer is larger than 64 MiB",
                  reason);
  if (blank(text ? text : "", len))
    return reject(NULL, text, 0, LEIR__ANSWER_EMPTY, 0, "the answer is empty", reason);

  leir__answer *a = calloc(1, sizeof *a);
  if (!a) return leir__error_nomem();
  leir__arena_init(&a->arena, 0);
  a->think = "";

  /* the think block */
  int bs = 0;
  const char *open = find(text, len, "<think>");
  const char *from = open ? open + 7 : text;
  const char *close = find_close(from, (size_t)(text + len - from), "</think>", "<\\think>", &bs);
  const char *after_think = text;
  if (close) {
    a->flags |= LEIR__ANSWER_HAD_THINK | (bs ? LEIR__ANSWER_BACKSLASH_TAG : 0);
    char *t = leir__arena_strndup(&a->arena, from, (size_t)(close - from));
    if (!t) goto nomem;
    a->think = t;
    a->think_len = (size_t)(close - from);
    after_think = close + 8;
  }

  /* the answer block, or the text after the last closing think tag */
  const char *lit = NULL;
  size_t lit_n = 0;
  int no_tag = 0;
  const char *ans = find(after_think, (size_t)(text + len - after_think), "<answer>");
  if (ans) {
    lit = ans + 8;
    const char *end = find_close(lit, (size_t)(text + len - lit), "</answer>", "<\\answer>", &bs);
    if (end) {
      if (bs) a->flags |= LEIR__ANSWER_BACKSLASH_TAG;
      lit_n = (size_t)(end - lit);
    } else {
      a->flags |= LEIR__ANSWER_UNCLOSED;
      lit_n = (size_t)(text + len - lit);
    }
  } else {
    const char *l1 = find_last(text, len, "</think>"), *l2 = find_last(text, len, "<\\think>");
    const char *last = l1 && (!l2 || l1 > l2) ? l1 : l2;
    lit = last ? last + 8 : text;
    lit_n = (size_t)(text + len - lit);
    no_tag = 1;
    a->flags |= LEIR__ANSWER_NO_ANSWER_TAG;
  }
  trim(&lit, &lit_n);
  if (no_tag || (lit_n >= 3 && memcmp(lit, "```", 3) == 0)) strip_fence(&lit, &lit_n);
  if (lit_n == 0) {
    leir_status st = reject(a, text, len, LEIR__ANSWER_NO_ANSWER, (size_t)(lit - text),
                            no_tag ? "no <answer> block and no text after the think block"
                                   : "the <answer> block is empty",
                            reason);
    return st;
  }

  leir__lit_error e = {0};
  size_t base = (size_t)(lit - text);
  const val *v = leir__lit_parse(&a->arena, lit, lit_n, base, 0, &e);
  if (!v && !e.nomem && e.code != LEIR__LIT_ERR_DEEP) {
    /* the reference's repairs of truncated output */
    char *buf = leir__arena_alloc(&a->arena, lit_n + 3);
    if (!buf) goto nomem;
    if (lit[0] == '{' && find(lit, lit_n, "idx")) {
      buf[0] = '[';
      memcpy(buf + 1, lit, lit_n);
      buf[lit_n + 1] = ']';
      v = leir__lit_parse(&a->arena, buf, lit_n + 2, base, 0, NULL);
    } else if (lit[0] == '[') {
      const char *c1 = find_last(lit, lit_n, "\"}"), *c2 = find_last(lit, lit_n, "'}");
      const char *cut = c1 && (!c2 || c1 > c2) ? c1 : c2;
      if (cut) {
        size_t m = (size_t)(cut - lit) + 2;
        memcpy(buf, lit, m);
        buf[m] = ']';
        v = leir__lit_parse(&a->arena, buf, m + 1, base, 0, NULL);
      }
    }
    if (v) {
      a->flags |= LEIR__ANSWER_REPAIRED;
    } else if (no_tag) {
      /* prose around the literal: from the first bracket on */
      size_t i = 0;
      while (i < lit_n && lit[i] != '{' && lit[i] != '[') i++;
      if (i == lit_n)
        return reject(a, text, len, LEIR__ANSWER_NO_ANSWER, base,
                      "no <answer> block, and no dict or list in the text", reason);
      v = leir__lit_parse(&a->arena, lit + i, lit_n - i, base + i, 1, NULL);
    }
  }
  if (!v) {
    if (e.nomem) goto nomem;
    char msg[300];
    snprintf(msg, sizeof msg, "%s at byte %zu: %s",
             no_tag ? "no <answer> block, and the text after the think block is not a literal"
                    : "the <answer> block is not a JSON or Python literal",
             e.offset, e.message);
    return reject(a, text, len, e.code == LEIR__LIT_ERR_DEEP ? LEIR__ANSWER_TOO_DEEP : LEIR__ANSWER_SYNTAX,
                  e.offset, msg, reason);
  }
  if (v->kind == V_STR && !v->bad_text) {
    const val *w = leir__lit_parse(&a->arena, v->s, v->n, v->off, 0, NULL);
    if (w && (w->kind == V_DICT || w->kind == V_LIST)) {
      v = w;
      a->flags |= LEIR__ANSWER_STRING_WRAPPED;
    }
  }
  if (v->kind != V_DICT && v->kind != V_LIST) {
    char msg[120];
    snprintf(msg, sizeof msg, "the answer is %s, not a dict or a list of dicts", kind_name(v->kind));
    return reject(a, text, len, LEIR__ANSWER_NOT_OBJECT, v->off, msg, reason);
  }
  a->is_list = v->kind == V_LIST;
  size_t n = a->is_list ? v->n : 1;
  if (n == 0) return reject(a, text, len, LEIR__ANSWER_EMPTY_LIST, v->off, "the answer is an empty list", reason);
  if (n > LEIR__ANSWER_MAX_ITEMS) {
    char msg[120];
    snprintf(msg, sizeof msg, "the answer lists %zu entries, more than %d", n, LEIR__ANSWER_MAX_ITEMS);
    return reject(a, text, len, LEIR__ANSWER_TOO_MANY_ITEMS, v->off, msg, reason);
  }
  a->items = leir__arena_calloc(&a->arena, n, sizeof *a->items);
  if (!a->items) goto nomem;
  a->n_items = n;
  const val *ent = a->is_list ? v->first : v;
  for (size_t i = 0; i < n; i++, ent = ent->next) {
    int r = read_item(a, ent, &a->items[i], &a->flags);
    if (r < 0) goto nomem;
    a->n_ok += (size_t)r;
  }
  if (a->n_ok == 0) {
    char msg[220];
    const leir__answer_item *it = &a->items[0];
    if (a->is_list)
      snprintf(msg, sizeof msg, "no usable entry; entry 0: %s", it->message);
    else
      snprintf(msg, sizeof msg, "%s", it->message);
    return reject(a, text, len, it->reason, v->off, msg, reason);
  }
  *out = a;
  return LEIR_OK;
nomem:
  leir__answer_free(a);
  return leir__error_nomem();
}

void leir__answer_free(leir__answer *answer) {
  if (!answer) return;
  leir__arena_release(&answer->arena);
  free(answer);
}

size_t leir__strategy_name_normalize(const char *name, char *buf, size_t cap) {
  const char *s = name ? name : "";
  size_t n = strlen(s);
  trim(&s, &n);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == ' ' || c == '-' || c == '\t') c = '_';
    else c = (char)tolower((unsigned char)c);
    if (k + 1 < cap) buf[k] = c;
    k++;
  }
  if (cap) buf[k < cap ? k : cap - 1] = '\0';
  return k;
}
