/* JSON reader for tests (see jsonl.h). Recursive descent, depth-limited. */
#include "jsonl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 256

typedef struct reader {
  const char *s;
  size_t len, i;
  char *err;
  size_t errcap;
  int failed;
} reader;

static void fail(reader *r, const char *what) {
  if (!r->failed && r->err && r->errcap)
    snprintf(r->err, r->errcap, "JSON: %s at byte %zu", what, r->i);
  r->failed = 1;
}

static void skip_ws(reader *r) {
  while (r->i < r->len && (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\n' ||
                           r->s[r->i] == '\r'))
    r->i++;
}

static int literal(reader *r, const char *word) {
  size_t n = strlen(word);
  if (r->len - r->i < n || memcmp(r->s + r->i, word, n) != 0) return 0;
  r->i += n;
  return 1;
}

static void put_utf8(char *out, size_t *n, unsigned long cp) {
  if (cp < 0x80) {
    out[(*n)++] = (char)cp;
  } else if (cp < 0x800) {
    out[(*n)++] = (char)(0xC0 | (cp >> 6));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out[(*n)++] = (char)(0xE0 | (cp >> 12));
    out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  } else {
    out[(*n)++] = (char)(0xF0 | (cp >> 18));
    out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  }
}

static int hex4(reader *r, unsigned long *out) {
  if (r->len - r->i < 4) return 0;
  unsigned long v = 0;
  for (int k = 0; k < 4; k++) {
    char c = r->s[r->i++];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned long)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned long)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned long)(c - 'A' + 10);
    else return 0;
  }
  *out = v;
  return 1;
}

/* Parses a string at r->i (after the opening quote). */
static char *parse_string(reader *r, size_t *len_out) {
  /* Output is never longer than the input span. */
  size_t start = r->i, end = start;
  while (end < r->len && r->s[end] != '"') end += r->s[end] == '\\' ? 2 : 1;
  if (end >= r->len) {
    fail(r, "unterminated string");
    return NULL;
  }
  char *out = malloc(end - start + 1);
  if (!out) {
    fail(r, "out of memory");
    return NULL;
  }
  size_t n = 0;
  while (r->i < end) {
    char c = r->s[r->i++];
    if ((unsigned char)c < 0x20) {
      fail(r, "control character in string");
      free(out);
      return NULL;
    }
    if (c != '\\') {
      out[n++] = c;
      continue;
    }
    char e = r->s[r->i++];
    unsigned long cp;
    switch (e) {
      case '"': out[n++] = '"'; break;
      case '\\': out[n++] = '\\'; break;
      case '/': out[n++] = '/'; break;
      case 'b': out[n++] = '\b'; break;
      case 'f': out[n++] = '\f'; break;
      case 'n': out[n++] = '\n'; break;
      case 'r': out[n++] = '\r'; break;
      case 't': out[n++] = '\t'; break;
      case 'u':
        if (!hex4(r, &cp)) {
          fail(r, "bad \\u escape");
          free(out);
          return NULL;
        }
        if (cp >= 0xD800 && cp < 0xDC00 && r->len - r->i >= 6 && r->s[r->i] == '\\' &&
            r->s[r->i + 1] == 'u') {
          unsigned long lo;
          r->i += 2;
          if (!hex4(r, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
            fail(r, "bad surrogate pair");
            free(out);
            return NULL;
          }
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        /* a \uXXXX escape (6 bytes) never needs more than 4 output bytes */
        put_utf8(out, &n, cp);
        break;
      default:
        fail(r, "bad escape");
        free(out);
        return NULL;
    }
  }
  r->i = end + 1;
  out[n] = '\0';
  *len_out = n;
  return out;
}

static int parse_value(reader *r, jsonl_value *v, int depth);

static int grow(jsonl_value *v, size_t *cap, int with_keys) {
  if (v->len < *cap) return 1;
  size_t ncap = *cap ? *cap * 2 : 4;
  jsonl_value *items = realloc(v->items, ncap * sizeof *items);
  if (!items) return 0;
  v->items = items;
  if (with_keys) {
    char **keys = realloc(v->keys, ncap * sizeof *keys);
    if (!keys) return 0;
    v->keys = keys;
  }
  *cap = ncap;
  return 1;
}

static int parse_container(reader *r, jsonl_value *v, int depth, int object) {
  char close = object ? '}' : ']';
  size_t cap = 0;
  v->kind = object ? JSONL_OBJECT : JSONL_ARRAY;
  skip_ws(r);
  if (r->i < r->len && r->s[r->i] == close) {
    r->i++;
    return 1;
  }
  for (;;) {
    if (!grow(v, &cap, object)) {
      fail(r, "out of memory");
      return 0;
    }
    jsonl_value *slot = &v->items[v->len];
    memset(slot, 0, sizeof *slot);
    if (object) {
      skip_ws(r);
      size_t klen;
      if (r->i >= r->len || r->s[r->i] != '"') {
        fail(r, "expected a key");
        return 0;
      }
      r->i++;
      char *key = parse_string(r, &klen);
      if (!key) return 0;
      v->keys[v->len] = key;
      skip_ws(r);
      if (r->i >= r->len || r->s[r->i] != ':') {
        v->len++; /* so the key is freed */
        fail(r, "expected ':'");
        return 0;
      }
      r->i++;
    }
    v->len++;
    if (!parse_value(r, slot, depth + 1)) return 0;
    skip_ws(r);
    if (r->i < r->len && r->s[r->i] == ',') {
      r->i++;
      continue;
    }
    if (r->i < r->len && r->s[r->i] == close) {
      r->i++;
      return 1;
    }
    fail(r, object ? "expected ',' or '}'" : "expected ',' or ']'");
    return 0;
  }
}

static int parse_value(reader *r, jsonl_value *v, int depth) {
  memset(v, 0, sizeof *v);
  if (depth > MAX_DEPTH) {
    fail(r, "nested too deeply");
    return 0;
  }
  skip_ws(r);
  if (r->i >= r->len) {
    fail(r, "unexpected end");
    return 0;
  }
  char c = r->s[r->i];
  if (c == '{' || c == '[') {
    r->i++;
    return parse_container(r, v, depth, c == '{');
  }
  if (c == '"') {
    r->i++;
    v->kind = JSONL_STRING;
    v->str = parse_string(r, &v->len);
    return v->str != NULL;
  }
  if (literal(r, "true") || literal(r, "false")) {
    v->kind = JSONL_BOOL;
    v->boolean = c == 't';
    return 1;
  }
  if (literal(r, "null")) {
    v->kind = JSONL_NULL;
    return 1;
  }
  if (c == '-' || (c >= '0' && c <= '9')) {
    char buf[64];
    size_t n = 0;
    while (r->i < r->len && n < sizeof buf - 1 && strchr("+-.eE0123456789", r->s[r->i]))
      buf[n++] = r->s[r->i++];
    buf[n] = '\0';
    char *end;
    v->kind = JSONL_NUMBER;
    v->number = strtod(buf, &end);
    if (*end) {
      fail(r, "bad number");
      return 0;
    }
    return 1;
  }
  fail(r, "unexpected character");
  return 0;
}

static void free_inner(jsonl_value *v) {
  if (v->kind == JSONL_STRING) free(v->str);
  if (v->kind == JSONL_ARRAY || v->kind == JSONL_OBJECT) {
    for (size_t i = 0; i < v->len; i++) {
      free_inner(&v->items[i]);
      if (v->kind == JSONL_OBJECT) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
  }
}

void jsonl_free(jsonl_value *v) {
  if (!v) return;
  free_inner(v);
  free(v);
}

jsonl_value *jsonl_parse(const char *text, size_t len, char *err, size_t errcap) {
  reader r = {text, len, 0, err, errcap, 0};
  jsonl_value *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  if (parse_value(&r, v, 0)) {
    skip_ws(&r);
    if (r.i != r.len) fail(&r, "trailing characters");
  }
  if (r.failed) {
    jsonl_free(v);
    return NULL;
  }
  return v;
}

const jsonl_value *jsonl_get(const jsonl_value *v, const char *key) {
  if (!v || v->kind != JSONL_OBJECT) return NULL;
  for (size_t i = 0; i < v->len; i++)
    if (strcmp(v->keys[i], key) == 0) return &v->items[i];
  return NULL;
}

const jsonl_value *jsonl_at(const jsonl_value *v, size_t i) {
  if (!v || (v->kind != JSONL_ARRAY && v->kind != JSONL_OBJECT) || i >= v->len) return NULL;
  return &v->items[i];
}

size_t jsonl_len(const jsonl_value *v) {
  return v && (v->kind == JSONL_ARRAY || v->kind == JSONL_OBJECT) ? v->len : 0;
}

const char *jsonl_str(const jsonl_value *v) {
  return v && v->kind == JSONL_STRING ? v->str : NULL;
}

int64_t jsonl_int(const jsonl_value *v, int64_t dflt) {
  return v && v->kind == JSONL_NUMBER ? (int64_t)v->number : dflt;
}

bool jsonl_bool(const jsonl_value *v, bool dflt) {
  return v && v->kind == JSONL_BOOL ? v->boolean : dflt;
}

/* ---- files -------------------------------------------------------------- */

struct jsonl_file {
  FILE *f;
  char *line;
  size_t cap;
  size_t line_no;
  jsonl_value *cur;
  char err[256];
  int has_err;
};

jsonl_file *jsonl_open(const char *path) {
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    fprintf(stderr, "jsonl: cannot open %s\n", path);
    return NULL;
  }
  jsonl_file *f = calloc(1, sizeof *f);
  if (!f) {
    fclose(fp);
    return NULL;
  }
  f->f = fp;
  return f;
}

const jsonl_value *jsonl_next(jsonl_file *f) {
  if (!f) return NULL;
  jsonl_free(f->cur);
  f->cur = NULL;
  if (f->has_err) return NULL;
  ssize_t n;
  while ((n = getline(&f->line, &f->cap, f->f)) >= 0) {
    f->line_no++;
    while (n > 0 && (f->line[n - 1] == '\n' || f->line[n - 1] == '\r')) n--;
    if (n == 0) continue;
    f->cur = jsonl_parse(f->line, (size_t)n, f->err, sizeof f->err);
    if (!f->cur) f->has_err = 1;
    return f->cur;
  }
  return NULL;
}

size_t jsonl_line(const jsonl_file *f) { return f ? f->line_no : 0; }

const char *jsonl_error(const jsonl_file *f) { return f && f->has_err ? f->err : NULL; }

void jsonl_close(jsonl_file *f) {
  if (!f) return;
  jsonl_free(f->cur);
  free(f->line);
  fclose(f->f);
  free(f);
}
