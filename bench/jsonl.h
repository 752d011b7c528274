/*
 * A minimal JSON reader for the benchmark programs: enough to read the
 * conformance corpus (objects, arrays, strings with escapes, numbers,
 * true/false/null) one line at a time. Not part of the library.
 */
#ifndef LEIR_BENCH_JSONL_H
#define LEIR_BENCH_JSONL_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jkind;

typedef struct jval {
  jkind kind;
  double num;
  bool b;
  char *str;            /* J_STR */
  size_t n;             /* J_ARR / J_OBJ items */
  char **keys;          /* J_OBJ */
  struct jval *items;
} jval;

static void jfree(jval *v) {
  free(v->str);
  for (size_t i = 0; i < v->n; i++) {
    jfree(&v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  memset(v, 0, sizeof *v);
}

static void jskip(const char **p) {
  while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r') (*p)++;
}

static bool jparse(const char **p, jval *out);

static bool jstring(const char **p, char **out) {
  if (**p != '"') return false;
  (*p)++;
  size_t cap = 64, n = 0;
  char *s = malloc(cap);
  while (**p && **p != '"') {
    char c = *(*p)++;
    if (c == '\\') {
      char e = *(*p)++;
      switch (e) {
        case 'n': c = '\n'; break;
        case 't': c = '\t'; break;
        case 'r': c = '\r'; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'u': {
          unsigned cp = (unsigned)strtoul((char[5]){(*p)[0], (*p)[1], (*p)[2], (*p)[3], 0}, NULL, 16);
          *p += 4;
          c = cp < 0x80 ? (char)cp : '?';
          break;
        }
        default: c = e; break;
      }
    }
    if (n + 2 > cap) s = realloc(s, cap *= 2);
    s[n++] = c;
  }
  if (**p != '"') {
    free(s);
    return false;
  }
  (*p)++;
  s[n] = '\0';
  *out = s;
  return true;
}

static bool jparse(const char **p, jval *out) {
  memset(out, 0, sizeof *out);
  jskip(p);
  if (**p == '"') {
    out->kind = J_STR;
    return jstring(p, &out->str);
  }
  if (**p == '{' || **p == '[') {
    bool obj = **p == '{';
    char close = obj ? '}' : ']';
    out->kind = obj ? J_OBJ : J_ARR;
    (*p)++;
    size_t cap = 0;
    jskip(p);
    if (**p == close) {
      (*p)++;
      return true;
    }
    for (;;) {
      if (out->n == cap) {
        cap = cap ? cap * 2 : 8;
        out->items = realloc(out->items, cap * sizeof *out->items);
        if (obj) out->keys = realloc(out->keys, cap * sizeof *out->keys);
      }
      jskip(p);
      if (obj) {
        if (!jstring(p, &out->keys[out->n])) return false;
        jskip(p);
        if (**p != ':') return false;
        (*p)++;
      }
      if (!jparse(p, &out->items[out->n])) return false;
      out->n++;
      jskip(p);
      if (**p == ',') {
        (*p)++;
        continue;
      }
      if (**p == close) {
        (*p)++;
        return true;
      }
      return false;
    }
  }
  if (strncmp(*p, "null", 4) == 0) {
    *p += 4;
    return true;
  }
  if (strncmp(*p, "true", 4) == 0 || strncmp(*p, "false", 5) == 0) {
    out->kind = J_BOOL;
    out->b = **p == 't';
    *p += out->b ? 4 : 5;
    return true;
  }
  char *end;
  out->kind = J_NUM;
  out->num = strtod(*p, &end);
  if (end == *p) return false;
  *p = end;
  return true;
}

static const jval *jget(const jval *o, const char *key) {
  if (o->kind != J_OBJ) return NULL;
  for (size_t i = 0; i < o->n; i++)
    if (strcmp(o->keys[i], key) == 0) return &o->items[i];
  return NULL;
}

static const char *jstr(const jval *o, const char *key) {
  const jval *v = jget(o, key);
  return v && v->kind == J_STR ? v->str : NULL;
}

/* Reads a file into lines; returns the count; *lines malloc'd (free each). */
static size_t read_lines(const char *path, char ***lines) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  size_t n = 0, cap = 1024;
  char **v = malloc(cap * sizeof *v);
  char *line = NULL;
  size_t lcap = 0;
  ssize_t len;
  while ((len = getline(&line, &lcap, f)) > 0) {
    if (n == cap) v = realloc(v, (cap *= 2) * sizeof *v);
    v[n++] = strdup(line);
  }
  free(line);
  fclose(f);
  *lines = v;
  return n;
}

#endif
