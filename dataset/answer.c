/* Parsing LLM answers: answer.h says what is accepted. The literal parser
 * reads the common ground of JSON and Python literals (what json.dumps and
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

/* ---- values ------------------------------------------------------------ */

typedef enum { V_NONE, V_BOOL, V_NUM, V_STR, V_LIST, V_DICT } vkind;

typedef struct val val;
struct val {
  vkind kind;
  int is_int;     /* V_NUM: an integer that fits int64 */
  int bad_text;   /* V_STR: invalid UTF-8 or a NUL byte */
  int64_t i;
  const char *s;  /* V_STR: decoded, NUL-terminated */
  size_t n;       /* V_STR: length; V_LIST/V_DICT: entries */
  val *first;     /* V_LIST: entries; V_DICT: keys (each key's `value` is its value) */
  val *next;      /* sibling */
  val *value;     /* dict key -> value */
  size_t off;     /* offset in the whole text */
};

typedef struct parser {
  const char *s;  /* the literal's bytes */
  size_t n, pos;
  size_t base;    /* offset of s[0] in the whole answer text (for messages) */
  leir__arena *arena;
  int nomem;
  leir__answer_reason reason;
  size_t err_off;
  char err[200];
} parser;

static int fail(parser *p, leir__answer_reason r, size_t pos, const char *fmt, ...)
    LEIR__PRINTF(4, 5);
static int fail(parser *p, leir__answer_reason r, size_t pos, const char *fmt, ...) {
  if (p->reason == LEIR__ANSWER_OK) {
    p->reason = r;
    p->err_off = p->base + pos;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, sizeof p->err, fmt, ap);
    va_end(ap);
  }
  return 0;
}

/* How a byte is shown in messages: 'x', or a hex code for non-printables. */
static const char *show(parser *p, size_t pos, char *buf, size_t cap) {
  if (pos >= p->n) return "the end of the text";
  unsigned char c = (unsigned char)p->s[pos];
  if (c >= 0x20 && c < 0x7f)
    snprintf(buf, cap, "'%c'", c);
  else
    snprintf(buf, cap, "byte 0x%02x", c);
  return buf;
}

static val *new_val(parser *p, vkind k, size_t pos) {
  val *v = leir__arena_calloc(p->arena, 1, sizeof *v);
  if (!v) {
    p->nomem = 1;
    fail(p, LEIR__ANSWER_SYNTAX, pos, "out of memory");
    return NULL;
  }
  v->kind = k;
  v->off = p->base + pos;
  return v;
}

static void skip_ws(parser *p) {
  while (p->pos < p->n) {
    char c = p->s[p->pos];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      p->pos++;
    } else if (c == '#') {
      while (p->pos < p->n && p->s[p->pos] != '\n') p->pos++;
    } else if (c == '\\' && p->pos + 1 < p->n && p->s[p->pos + 1] == '\n') {
      p->pos += 2; /* Python line continuation */
    } else {
      break;
    }
  }
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static size_t put_utf8(char *d, uint32_t cp) {
  if (cp < 0x80) {
    d[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    d[0] = (char)(0xc0 | (cp >> 6));
    d[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    d[0] = (char)(0xe0 | (cp >> 12));
    d[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    d[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  d[0] = (char)(0xf0 | (cp >> 18));
  d[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  d[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  d[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

/* Reads `digits` hex digits at s[*i]; -1 when they are not all there. */
static long read_hex(parser *p, size_t *i, int digits) {
  long v = 0;
  for (int k = 0; k < digits; k++) {
    if (*i >= p->n) return -1;
    int h = hexval(p->s[*i]);
    if (h < 0) return -1;
    v = v * 16 + h;
    (*i)++;
  }
  return v;
}

/* One string literal at p->pos (after any prefix); decoded into the arena.
 * The decoded text is never longer than the literal. */
static val *parse_string(parser *p, int raw) {
  size_t start = p->pos;
  char q = p->s[p->pos];
  int triple = p->pos + 2 < p->n && p->s[p->pos + 1] == q && p->s[p->pos + 2] == q;
  size_t i = p->pos + (triple ? 3 : 1);
  char *d = leir__arena_alloc(p->arena, p->n - i + 1);
  val *v = new_val(p, V_STR, start);
  if (!d || !v) {
    p->nomem = 1;
    fail(p, LEIR__ANSWER_SYNTAX, start, "out of memory");
    return NULL;
  }
  size_t len = 0;
  for (;;) {
    if (i >= p->n) {
      fail(p, LEIR__ANSWER_SYNTAX, start, "unterminated string (it starts at byte %zu)",
           p->base + start);
      return NULL;
    }
    char c = p->s[i];
    if (c == q) {
      if (!triple) {
        i++;
        break;
      }
      if (i + 2 < p->n && p->s[i + 1] == q && p->s[i + 2] == q) {
        i += 3;
        break;
      }
    }
    if (c != '\\' || raw) {
      if (c == '\\' && raw && i + 1 < p->n && (p->s[i + 1] == q || p->s[i + 1] == '\\')) {
        d[len++] = c; /* a raw string keeps the backslash before an escaped quote */
        c = p->s[++i];
      }
      d[len++] = c;
      i++;
      continue;
    }
    /* an escape */
    size_t esc = i;
    if (i + 1 >= p->n) continue; /* the unterminated-string error above */
    char e = p->s[i + 1];
    i += 2;
    long cp = -1;
    switch (e) {
      case 'n': d[len++] = '\n'; break;
      case 't': d[len++] = '\t'; break;
      case 'r': d[len++] = '\r'; break;
      case 'b': d[len++] = '\b'; break;
      case 'f': d[len++] = '\f'; break;
      case 'v': d[len++] = '\v'; break;
      case 'a': d[len++] = '\a'; break;
      case '\\': d[len++] = '\\'; break;
      case '\'': d[len++] = '\''; break;
      case '"': d[len++] = '"'; break;
      case '/': d[len++] = '/'; break; /* JSON */
      case '\n': break;                /* Python: backslash-newline joins lines */
      case 'x':
        if ((cp = read_hex(p, &i, 2)) < 0) {
          fail(p, LEIR__ANSWER_SYNTAX, esc, "invalid \\x escape");
          return NULL;
        }
        len += put_utf8(d + len, (uint32_t)cp);
        break;
      case 'u':
      case 'U': {
        if ((cp = read_hex(p, &i, e == 'u' ? 4 : 8)) < 0 || cp > 0x10ffff) {
          fail(p, LEIR__ANSWER_SYNTAX, esc, "invalid \\%c escape", e);
          return NULL;
        }
        if (cp >= 0xd800 && cp < 0xdc00 && i + 1 < p->n && p->s[i] == '\\' &&
            p->s[i + 1] == 'u') {
          size_t j = i + 2;
          long lo = read_hex(p, &j, 4);
          if (lo >= 0xdc00 && lo < 0xe000) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            i = j;
          }
        }
        if (cp >= 0xd800 && cp < 0xe000) {
          fail(p, LEIR__ANSWER_SYNTAX, esc, "a lone UTF-16 surrogate in a \\%c escape", e);
          return NULL;
        }
        len += put_utf8(d + len, (uint32_t)cp);
        break;
      }
      default:
        if (e >= '0' && e <= '7') { /* Python octal: up to three digits */
          cp = e - '0';
          for (int k = 0; k < 2 && i < p->n && p->s[i] >= '0' && p->s[i] <= '7'; k++)
            cp = cp * 8 + (p->s[i++] - '0');
          len += put_utf8(d + len, (uint32_t)cp);
        } else { /* Python keeps an unknown escape as written */
          d[len++] = '\\';
          i--;
        }
    }
  }
  d[len] = '\0';
  v->s = d;
  v->n = len;
  v->bad_text = memchr(d, '\0', len) != NULL || !leir__utf8_valid(d, len);
  p->pos = i;
  return v;
}

/* A string prefix (r, u, b, rb, br, any case) followed by a quote. */
static int string_prefix(parser *p, int *raw) {
  size_t i = p->pos, k = 0;
  *raw = 0;
  while (i < p->n && k < 3 && strchr("rRuUbBfF", p->s[i]) && p->s[i]) {
    if (p->s[i] == 'r' || p->s[i] == 'R') *raw = 1;
    i++;
    k++;
  }
  if (k == 0 || k > 2 || i >= p->n || (p->s[i] != '\'' && p->s[i] != '"')) return 0;
  p->pos = i;
  return 1;
}

static val *parse_value(parser *p, int depth);

/* One or more adjacent string literals. */
static val *parse_strings(parser *p) {
  int raw = 0;
  string_prefix(p, &raw);
  val *v = parse_string(p, raw);
  if (!v) return NULL;
  for (;;) {
    size_t save = p->pos;
    skip_ws(p);
    int r2 = 0;
    if (p->pos < p->n && (p->s[p->pos] == '\'' || p->s[p->pos] == '"' || string_prefix(p, &r2))) {
      val *w = parse_string(p, r2);
      if (!w) return NULL;
      char *d = leir__arena_alloc(p->arena, v->n + w->n + 1);
      if (!d) {
        p->nomem = 1;
        fail(p, LEIR__ANSWER_SYNTAX, save, "out of memory");
        return NULL;
      }
      memcpy(d, v->s, v->n);
      memcpy(d + v->n, w->s, w->n);
      d[v->n + w->n] = '\0';
      v->s = d;
      v->n += w->n;
      v->bad_text |= w->bad_text;
    } else {
      p->pos = save;
      return v;
    }
  }
}

static val *parse_number(parser *p) {
  size_t start = p->pos, i = p->pos;
  char buf[64];
  size_t k = 0;
  if (i < p->n && (p->s[i] == '-' || p->s[i] == '+')) buf[k++] = p->s[i++];
  while (i < p->n) {
    char c = p->s[i];
    int ok = isalnum((unsigned char)c) || c == '.' || c == '_' ||
             ((c == '+' || c == '-') && (p->s[i - 1] == 'e' || p->s[i - 1] == 'E'));
    if (!ok) break;
    if (c != '_') {
      if (k + 1 >= sizeof buf) {
        fail(p, LEIR__ANSWER_SYNTAX, start, "a number longer than %zu characters",
             sizeof buf - 2);
        return NULL;
      }
      buf[k++] = c;
    }
    i++;
  }
  buf[k] = '\0';
  val *v = new_val(p, V_NUM, start);
  if (!v) return NULL;
  char *end = NULL;
  errno = 0;
  long long ll = strtoll(buf, &end, 10);
  if (k > 0 && end && *end == '\0' && errno == 0) {
    v->is_int = 1;
    v->i = ll;
  } else {
    errno = 0;
    end = NULL;
    (void)strtod(buf, &end);
    if (k == 0 || !end || *end != '\0' || (k == 1 && (buf[0] == '-' || buf[0] == '+'))) {
      fail(p, LEIR__ANSWER_SYNTAX, start, "invalid number '%s'", buf);
      return NULL;
    }
  }
  p->pos = i;
  return v;
}

static val *parse_word(parser *p) {
  size_t start = p->pos, i = p->pos;
  while (i < p->n && (isalnum((unsigned char)p->s[i]) || p->s[i] == '_')) i++;
  size_t len = i - start;
  const char *w = p->s + start;
  val *v = NULL;
#define IS(lit) (len == sizeof lit - 1 && memcmp(w, lit, len) == 0)
  if (IS("True") || IS("true") || IS("False") || IS("false")) {
    if ((v = new_val(p, V_BOOL, start))) v->i = (w[0] == 'T' || w[0] == 't');
  } else if (IS("None") || IS("null")) {
    v = new_val(p, V_NONE, start);
  } else {
    char tmp[16];
    if (len == 0)
      fail(p, LEIR__ANSWER_SYNTAX, start, "expected a value, found %s",
           show(p, start, tmp, sizeof tmp));
    else
      fail(p, LEIR__ANSWER_SYNTAX, start, "expected a value, found the word '%.*s'",
           (int)(len > 40 ? 40 : len), w);
    return NULL;
  }
#undef IS
  if (v) p->pos = i;
  return v;
}

/* A list ([...] or a tuple (...)) or a dict. */
static val *parse_container(parser *p, int depth) {
  size_t start = p->pos;
  char open = p->s[p->pos];
  char close = open == '[' ? ']' : open == '(' ? ')' : '}';
  int dict = open == '{';
  val *v = new_val(p, dict ? V_DICT : V_LIST, start);
  if (!v) return NULL;
  val **tail = &v->first;
  p->pos++;
  for (;;) {
    skip_ws(p);
    char tmp[16];
    if (p->pos >= p->n) {
      fail(p, LEIR__ANSWER_SYNTAX, p->pos, "the %s that starts at byte %zu is not closed",
           dict ? "dict" : "list", p->base + start);
      return NULL;
    }
    if (p->s[p->pos] == close) {
      p->pos++;
      return v;
    }
    if (v->n > 0) {
      if (p->s[p->pos] != ',') {
        fail(p, LEIR__ANSWER_SYNTAX, p->pos, "expected ',' or '%c' in the %s, found %s", close,
             dict ? "dict" : "list", show(p, p->pos, tmp, sizeof tmp));
        return NULL;
      }
      p->pos++;
      skip_ws(p);
      if (p->pos < p->n && p->s[p->pos] == close) {
        p->pos++;
        return v;
      }
    }
    val *item = parse_value(p, depth + 1);
    if (!item) return NULL;
    if (dict) {
      skip_ws(p);
      if (p->pos >= p->n || p->s[p->pos] != ':') {
        fail(p, LEIR__ANSWER_SYNTAX, p->pos, "expected ':' after a dict key, found %s",
             show(p, p->pos, tmp, sizeof tmp));
        return NULL;
      }
      p->pos++;
      skip_ws(p);
      if (!(item->value = parse_value(p, depth + 1))) return NULL;
    }
    *tail = item;
    tail = &item->next;
    v->n++;
  }
}

static val *parse_value(parser *p, int depth) {
  if (depth > LEIR__ANSWER_MAX_DEPTH) {
    fail(p, LEIR__ANSWER_TOO_DEEP, p->pos, "values nested deeper than %d levels",
         LEIR__ANSWER_MAX_DEPTH);
    return NULL;
  }
  skip_ws(p);
  if (p->pos >= p->n) {
    fail(p, LEIR__ANSWER_SYNTAX, p->pos, "expected a value, found the end of the text");
    return NULL;
  }
  char c = p->s[p->pos];
  int raw;
  if (c == '{' || c == '[' || c == '(') return parse_container(p, depth);
  if (c == '\'' || c == '"') return parse_strings(p);
  if (c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9')) return parse_number(p);
  size_t save = p->pos;
  if (string_prefix(p, &raw)) {
    p->pos = save;
    return parse_strings(p);
  }
  return parse_word(p);
}

/* Parses s[0..n) as one literal; `trailing` allows text after it. */
static val *parse_literal(parser *p, const char *s, size_t n, size_t base, int trailing) {
  p->s = s;
  p->n = n;
  p->pos = 0;
  p->base = base;
  val *v = parse_value(p, 0);
  if (!v) return NULL;
  skip_ws(p);
  if (!trailing && p->pos < p->n) {
    char tmp[16];
    fail(p, LEIR__ANSWER_SYNTAX, p->pos, "unexpected %s after the value",
         show(p, p->pos, tmp, sizeof tmp));
    return NULL;
  }
  return v;
}

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

static val *dict_get(const val *d, const char *key) {
  size_t kl = strlen(key);
  for (val *k = d->first; k; k = k->next)
    if (k->kind == V_STR && k->n == kl && memcmp(k->s, key, kl) == 0) return k->value;
  for (val *k = d->first; k; k = k->next)
    if (k->kind == V_STR && k->n == kl && strncasecmp(k->s, key, kl) == 0) return k->value;
  return NULL;
}

static const char *kind_name(vkind k) {
  switch (k) {
    case V_NONE: return "None";
    case V_BOOL: return "a boolean";
    case V_NUM: return "a number";
    case V_STR: return "a string";
    case V_LIST: return "a list";
    default: return "a dict";
  }
}

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

  parser p = {0};
  p.arena = &a->arena;
  size_t base = (size_t)(lit - text);
  val *v = parse_literal(&p, lit, lit_n, base, 0);
  if (!v && !p.nomem && p.reason != LEIR__ANSWER_TOO_DEEP) {
    /* the reference's repairs of truncated output */
    parser q = {0};
    q.arena = &a->arena;
    char *buf = leir__arena_alloc(&a->arena, lit_n + 3);
    if (!buf) goto nomem;
    if (lit[0] == '{' && find(lit, lit_n, "idx")) {
      buf[0] = '[';
      memcpy(buf + 1, lit, lit_n);
      buf[lit_n + 1] = ']';
      v = parse_literal(&q, buf, lit_n + 2, base, 0);
    } else if (lit[0] == '[') {
      const char *c1 = find_last(lit, lit_n, "\"}"), *c2 = find_last(lit, lit_n, "'}");
      const char *cut = c1 && (!c2 || c1 > c2) ? c1 : c2;
      if (cut) {
        size_t m = (size_t)(cut - lit) + 2;
        memcpy(buf, lit, m);
        buf[m] = ']';
        v = parse_literal(&q, buf, m + 1, base, 0);
      }
    }
    if (v) {
      a->flags |= LEIR__ANSWER_REPAIRED;
    } else if (no_tag) {
      /* prose around the literal: from the first bracket on */
      for (size_t i = 0; i < lit_n; i++)
        if (lit[i] == '{' || lit[i] == '[') {
          parser r = {0};
          r.arena = &a->arena;
          v = parse_literal(&r, lit + i, lit_n - i, base + i, 1);
          break;
        }
    }
  }
  if (!v) {
    if (p.nomem) goto nomem;
    char msg[300];
    snprintf(msg, sizeof msg, "%s at byte %zu: %s",
             no_tag ? "no <answer> block, and the text after the think block is not a literal"
                    : "the <answer> block is not a JSON or Python literal",
             p.err_off, p.err);
    return reject(a, text, len, p.reason, p.err_off, msg, reason);
  }
  if (v->kind == V_STR && !v->bad_text) {
    parser r = {0};
    r.arena = &a->arena;
    val *w = parse_literal(&r, v->s, v->n, v->off, 0);
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
  const val *e = a->is_list ? v->first : v;
  for (size_t i = 0; i < n; i++, e = e->next) {
    int r = read_item(a, e, &a->items[i], &a->flags);
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
