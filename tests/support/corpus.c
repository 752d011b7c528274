#include "corpus.h"

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* ---- a tiny JSON reader ---------------------------------------------------- */

typedef struct jv {
  int kind; /* 0 null, 1 number, 2 string, 3 array, 4 object, 5 bool */
  double num;
  char *str;
  size_t n;
  struct jv *items; /* array elements / object values */
  char **keys;      /* object keys */
} jv;

static void jv_free(jv *v) {
  free(v->str);
  for (size_t i = 0; i < v->n; i++) {
    jv_free(&v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
}

static void skip(const char **s) {
  while (**s == ' ' || **s == '\t' || **s == '\n' || **s == '\r') (*s)++;
}

static char *parse_string(const char **s) {
  ck_assert_int_eq(**s, '"');
  (*s)++;
  size_t cap = 64, n = 0;
  char *out = malloc(cap);
  while (**s && **s != '"') {
    char ch = *(*s)++;
    if (ch == '\\') {
      char e = *(*s)++;
      switch (e) {
        case 'n': ch = '\n'; break;
        case 't': ch = '\t'; break;
        case 'r': ch = '\r'; break;
        case 'b': ch = '\b'; break;
        case 'f': ch = '\f'; break;
        case 'u': {
          unsigned v = (unsigned)strtoul((char[]){(*s)[0], (*s)[1], (*s)[2], (*s)[3], 0}, NULL, 16);
          *s += 4;
          ck_assert_msg(v < 0x80, "non-ASCII \\u escape in corpus");
          ch = (char)v;
          break;
        }
        default: ch = e;
      }
    }
    if (n + 2 > cap) out = realloc(out, cap *= 2);
    out[n++] = ch;
  }
  ck_assert_int_eq(**s, '"');
  (*s)++;
  out[n] = '\0';
  return out;
}

static void parse_value(const char **s, jv *v) {
  memset(v, 0, sizeof *v);
  skip(s);
  if (**s == '"') {
    v->kind = 2;
    v->str = parse_string(s);
  } else if (**s == '[' || **s == '{') {
    bool obj = **s == '{';
    v->kind = obj ? 4 : 3;
    (*s)++;
    skip(s);
    size_t cap = 0;
    while (**s != (obj ? '}' : ']')) {
      if (v->n == cap) {
        cap = cap ? cap * 2 : 4;
        v->items = realloc(v->items, cap * sizeof *v->items);
        if (obj) v->keys = realloc(v->keys, cap * sizeof *v->keys);
      }
      if (obj) {
        skip(s);
        v->keys[v->n] = parse_string(s);
        skip(s);
        ck_assert_int_eq(**s, ':');
        (*s)++;
      }
      parse_value(s, &v->items[v->n++]);
      skip(s);
      if (**s == ',') {
        (*s)++;
        skip(s);
      }
    }
    (*s)++;
  } else if (strncmp(*s, "null", 4) == 0) {
    *s += 4;
  } else if (strncmp(*s, "true", 4) == 0 || strncmp(*s, "false", 5) == 0) {
    v->kind = 5;
    v->num = **s == 't';
    *s += **s == 't' ? 4 : 5;
  } else {
    char *end;
    v->kind = 1;
    v->num = strtod(*s, &end);
    ck_assert_msg(end != *s, "bad JSON at '%.20s'", *s);
    *s = end;
  }
}

static const jv *get(const jv *o, const char *key) {
  if (o->kind != 4) return NULL;
  for (size_t i = 0; i < o->n; i++)
    if (strcmp(o->keys[i], key) == 0) return &o->items[i];
  return NULL;
}

char *json_string_field(const char *line, const char *key) {
  jv v;
  const char *s = line;
  parse_value(&s, &v);
  const jv *f = get(&v, key);
  char *out = f && f->kind == 2 ? strdup(f->str) : NULL;
  jv_free(&v);
  return out;
}

/* ---- corpus ------------------------------------------------------------------- */

static size_t add_decls(const jv *list, leir_role role, leir_tensor_decl *d, int64_t (*shapes)[16],
                        size_t n) {
  for (size_t i = 0; list && i < list->n; i++) {
    const jv *t = &list->items[i];
    const jv *name = get(t, "name"), *dt = get(t, "dtype"), *shape = get(t, "shape");
    ck_assert_ptr_nonnull(name);
    d[n].name = name->str;
    ck_assert_int_eq(leir_dtype_from_name(dt->str, &d[n].dtype), LEIR_OK);
    d[n].role = role;
    d[n].rank = (uint32_t)shape->n;
    for (size_t k = 0; k < shape->n; k++) shapes[n][k] = (int64_t)shape->items[k].num;
    d[n].shape = shapes[n];
    n++;
  }
  return n;
}

void corpus_load(corpus *c, const char *name) {
  memset(c, 0, sizeof *c);
  char *text = test_read_file(test_data_path(name), NULL);
  size_t cap = 0;
  for (char *line = text; *line;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    if (*line) {
      jv v;
      const char *s = line;
      parse_value(&s, &v);
      if (c->n == cap) {
        cap = cap ? cap * 2 : 64;
        c->e = realloc(c->e, cap * sizeof *c->e);
      }
      corpus_entry *e = &c->e[c->n++];
      e->id = strdup(get(&v, "id")->str);
      e->leir = strdup(get(&v, "leir")->str);
      e->program = test_parse(e->leir);
      const jv *sig = get(&v, "signature");
      if (sig) {
        leir_tensor_decl d[64];
        int64_t shapes[64][16];
        size_t n = add_decls(get(sig, "inputs"), LEIR_ROLE_INPUT, d, shapes, 0);
        n = add_decls(get(sig, "outputs"), LEIR_ROLE_OUTPUT, d, shapes, n);
        ck_assert_msg(leir_program_set_signature(e->program, d, n) == LEIR_OK, "%s: %s", e->id,
                      leir_error_last()->message);
      }
      jv_free(&v);
    }
    if (!nl) break;
    line = nl + 1;
  }
  free(text);
}

void corpus_free(corpus *c) {
  for (size_t i = 0; i < c->n; i++) {
    free(c->e[i].id);
    free(c->e[i].leir);
    leir_program_free(c->e[i].program);
  }
  free(c->e);
  memset(c, 0, sizeof *c);
}

const corpus_entry *corpus_find(const corpus *c, const char *id) {
  for (size_t i = 0; i < c->n; i++)
    if (strcmp(c->e[i].id, id) == 0) return &c->e[i];
  return NULL;
}
