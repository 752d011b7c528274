/* The literal reader of answers and JSONL files: literal.h says what it reads. */
#include "literal.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "strbuf.h"

/* ---- values ------------------------------------------------------------ */

typedef leir__lit val;
#define V_NONE LEIR__LIT_NONE
#define V_BOOL LEIR__LIT_BOOL
#define V_NUM LEIR__LIT_NUM
#define V_STR LEIR__LIT_STR
#define V_LIST LEIR__LIT_LIST
#define V_DICT LEIR__LIT_DICT

typedef struct parser {
  const char *s;  /* the literal's bytes */
  size_t n, pos;
  size_t base;    /* offset of s[0] in the whole answer text (for messages) */
  leir__arena *arena;
  int nomem;
  int reason;
  size_t err_off;
  char err[200];
} parser;

static int fail(parser *p, int r, size_t pos, const char *fmt, ...)
    LEIR__PRINTF(4, 5);
static int fail(parser *p, int r, size_t pos, const char *fmt, ...) {
  if (p->reason == 0) {
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

static val *new_val(parser *p, leir__lit_kind k, size_t pos) {
  val *v = leir__arena_calloc(p->arena, 1, sizeof *v);
  if (!v) {
    p->nomem = 1;
    fail(p, LEIR__LIT_ERR_SYNTAX, pos, "out of memory");
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
  /* the end first, so that the decoded text gets exactly the room it needs
   * (never more than the literal: every escape is at least as long as what
   * it stands for) */
  size_t j = i;
  for (;;) {
    if (j >= p->n) {
      fail(p, LEIR__LIT_ERR_SYNTAX, start, "unterminated string (it starts at byte %zu)",
           p->base + start);
      return NULL;
    }
    if (p->s[j] == '\\') {
      j += 2;
      continue;
    }
    if (p->s[j] == q && (!triple || (j + 2 < p->n && p->s[j + 1] == q && p->s[j + 2] == q))) break;
    j++;
  }
  char *d = leir__arena_alloc(p->arena, j - i + 1);
  val *v = new_val(p, V_STR, start);
  if (!d || !v) {
    p->nomem = 1;
    fail(p, LEIR__LIT_ERR_SYNTAX, start, "out of memory");
    return NULL;
  }
  size_t len = 0;
  for (;;) {
    if (i >= p->n) {
      fail(p, LEIR__LIT_ERR_SYNTAX, start, "unterminated string (it starts at byte %zu)",
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
    if (i + 1 >= p->n) { /* cannot happen: the scan above found the end */
      i++;
      continue;
    }
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
          fail(p, LEIR__LIT_ERR_SYNTAX, esc, "invalid \\x escape");
          return NULL;
        }
        len += put_utf8(d + len, (uint32_t)cp);
        break;
      case 'u':
      case 'U': {
        if ((cp = read_hex(p, &i, e == 'u' ? 4 : 8)) < 0 || cp > 0x10ffff) {
          fail(p, LEIR__LIT_ERR_SYNTAX, esc, "invalid \\%c escape", e);
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
          fail(p, LEIR__LIT_ERR_SYNTAX, esc, "a lone UTF-16 surrogate in a \\%c escape", e);
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
  /* adjacent literals are joined once at the end (joining pairwise would
   * copy quadratically) */
  leir__strbuf b = LEIR__STRBUF_INIT;
  int joined = 0, bad = v->bad_text;
  for (;;) {
    size_t save = p->pos;
    skip_ws(p);
    int r2 = 0;
    if (p->pos < p->n && (p->s[p->pos] == '\'' || p->s[p->pos] == '"' || string_prefix(p, &r2))) {
      val *w = parse_string(p, r2);
      if (!w) {
        leir__sb_release(&b);
        return NULL;
      }
      if (!joined) leir__sb_put(&b, v->s, v->n);
      joined = 1;
      leir__sb_put(&b, w->s, w->n);
      bad |= w->bad_text;
    } else {
      p->pos = save;
      break;
    }
  }
  if (joined) {
    size_t n = 0;
    char *t = leir__sb_finish(&b, &n);
    char *d = t ? leir__arena_strndup(p->arena, t, n) : NULL;
    free(t);
    if (!d) {
      p->nomem = 1;
      fail(p, LEIR__LIT_ERR_SYNTAX, v->off - p->base, "out of memory");
      return NULL;
    }
    v->s = d;
    v->n = n;
    v->bad_text = bad;
  }
  return v;
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
        fail(p, LEIR__LIT_ERR_SYNTAX, start, "a number longer than %zu characters",
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
    v->d = strtod(buf, &end);
    if (k == 0 || !end || *end != '\0' || (k == 1 && (buf[0] == '-' || buf[0] == '+'))) {
      fail(p, LEIR__LIT_ERR_SYNTAX, start, "invalid number '%s'", buf);
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
      fail(p, LEIR__LIT_ERR_SYNTAX, start, "expected a value, found %s",
           show(p, start, tmp, sizeof tmp));
    else
      fail(p, LEIR__LIT_ERR_SYNTAX, start, "expected a value, found the word '%.*s'",
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
      fail(p, LEIR__LIT_ERR_SYNTAX, p->pos, "the %s that starts at byte %zu is not closed",
           dict ? "dict" : "list", p->base + start);
      return NULL;
    }
    if (p->s[p->pos] == close) {
      p->pos++;
      return v;
    }
    if (v->n > 0) {
      if (p->s[p->pos] != ',') {
        fail(p, LEIR__LIT_ERR_SYNTAX, p->pos, "expected ',' or '%c' in the %s, found %s", close,
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
        fail(p, LEIR__LIT_ERR_SYNTAX, p->pos, "expected ':' after a dict key, found %s",
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
  if (depth > LEIR__LIT_MAX_DEPTH) {
    fail(p, LEIR__LIT_ERR_DEEP, p->pos, "values nested deeper than %d levels",
         LEIR__LIT_MAX_DEPTH);
    return NULL;
  }
  skip_ws(p);
  if (p->pos >= p->n) {
    fail(p, LEIR__LIT_ERR_SYNTAX, p->pos, "expected a value, found the end of the text");
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
    fail(p, LEIR__LIT_ERR_SYNTAX, p->pos, "unexpected %s after the value",
         show(p, p->pos, tmp, sizeof tmp));
    return NULL;
  }
  return v;
}

const leir__lit *leir__lit_parse(leir__arena *arena, const char *s, size_t n, size_t base,
                                 int trailing, leir__lit_error *err) {
  parser p;
  memset(&p, 0, sizeof p);
  p.arena = arena;
  const leir__lit *v = parse_literal(&p, s, n, base, trailing);
  if (err) {
    err->code = v ? 0 : p.reason;
    err->nomem = p.nomem;
    err->offset = p.err_off;
    memcpy(err->message, p.err, sizeof err->message);
  }
  return v;
}

const leir__lit *leir__lit_get(const leir__lit *d, const char *key) {
  if (!d || d->kind != V_DICT) return NULL;
  size_t kl = strlen(key);
  for (val *k = d->first; k; k = k->next)
    if (k->kind == V_STR && k->n == kl && memcmp(k->s, key, kl) == 0) return k->value;
  for (val *k = d->first; k; k = k->next)
    if (k->kind == V_STR && k->n == kl && strncasecmp(k->s, key, kl) == 0) return k->value;
  return NULL;
}

const char *leir__lit_kind_name(leir__lit_kind k) {
  switch (k) {
    case V_NONE: return "None";
    case V_BOOL: return "a boolean";
    case V_NUM: return "a number";
    case V_STR: return "a string";
    case V_LIST: return "a list";
    default: return "a dict";
  }
}

const char *leir__lit_str(const leir__lit *v) {
  return v && v->kind == V_STR && !v->bad_text ? v->s : NULL;
}

int leir__lit_int(const leir__lit *v, int64_t *out) {
  if (!v || v->kind != V_NUM || !v->is_int) return 0;
  *out = v->i;
  return 1;
}

int leir__lit_num(const leir__lit *v, double *out) {
  if (!v || v->kind != V_NUM) return 0;
  *out = v->is_int ? (double)v->i : v->d;
  return 1;
}
