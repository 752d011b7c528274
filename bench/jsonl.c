#include "jsonl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void skip(const char **s) {
  while (**s == ' ' || **s == '\t' || **s == '\n' || **s == '\r') (*s)++;
}

static bool str(const char **s, char **out) {
  if (**s != '"') return false;
  (*s)++;
  size_t cap = 64, n = 0;
  char *b = malloc(cap);
  if (!b) return false;
  while (**s && **s != '"') {
    char ch = *(*s)++;
    if (ch == '\\') {
      char e = *(*s)++;
      if (e == 'n') ch = '\n';
      else if (e == 't') ch = '\t';
      else if (e == 'r') ch = '\r';
      else if (e == 'u') {
        char hex[5] = {0};
        for (int i = 0; i < 4 && **s; i++) hex[i] = *(*s)++;
        ch = (char)strtoul(hex, NULL, 16);
      } else ch = e;
    }
    if (n + 2 > cap) {
      char *nb = realloc(b, cap *= 2);
      if (!nb) {
        free(b);
        return false;
      }
      b = nb;
    }
    b[n++] = ch;
  }
  if (**s != '"') {
    free(b);
    return false;
  }
  (*s)++;
  b[n] = '\0';
  *out = b;
  return true;
}

static bool value(const char **s, jv *v, int depth) {
  memset(v, 0, sizeof *v);
  if (depth > 64) return false;
  skip(s);
  if (**s == '"') {
    v->kind = 2;
    return str(s, &v->str);
  }
  if (**s == '[' || **s == '{') {
    bool obj = **s == '{';
    char close = obj ? '}' : ']';
    v->kind = obj ? 4 : 3;
    (*s)++;
    skip(s);
    size_t cap = 0;
    while (**s != close) {
      if (!**s) return false;
      if (v->n == cap) {
        cap = cap ? cap * 2 : 4;
        jv *ni = realloc(v->items, cap * sizeof *ni);
        if (!ni) return false;
        v->items = ni;
        if (obj) {
          char **nk = realloc(v->keys, cap * sizeof *nk);
          if (!nk) return false;
          v->keys = nk;
        }
      }
      if (obj) {
        skip(s);
        if (!str(s, &v->keys[v->n])) return false;
        skip(s);
        if (**s != ':') {
          free(v->keys[v->n]);
          return false;
        }
        (*s)++;
      }
      bool ok = value(s, &v->items[v->n], depth + 1);
      v->n++;
      if (!ok) return false;
      skip(s);
      if (**s == ',') {
        (*s)++;
        skip(s);
      }
    }
    (*s)++;
    return true;
  }
  if (strncmp(*s, "null", 4) == 0) {
    *s += 4;
    return true;
  }
  if (strncmp(*s, "true", 4) == 0 || strncmp(*s, "false", 5) == 0) {
    v->kind = 5;
    v->num = **s == 't';
    *s += **s == 't' ? 4 : 5;
    return true;
  }
  char *end;
  v->kind = 1;
  v->num = strtod(*s, &end);
  if (end == *s) return false;
  *s = end;
  return true;
}

bool jv_parse(const char *text, jv *out) {
  const char *s = text;
  if (!value(&s, out, 0)) {
    jv_free(out);
    return false;
  }
  return true;
}

void jv_free(jv *v) {
  free(v->str);
  for (size_t i = 0; i < v->n; i++) {
    jv_free(&v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  memset(v, 0, sizeof *v);
}

const jv *jv_get(const jv *o, const char *key) {
  if (!o || o->kind != 4) return NULL;
  for (size_t i = 0; i < o->n; i++)
    if (strcmp(o->keys[i], key) == 0) return &o->items[i];
  return NULL;
}

char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    fclose(f);
    return NULL;
  }
  fclose(f);
  b[n] = '\0';
  if (len) *len = (size_t)n;
  return b;
}

/* dtype of tensor `name` from its first superscript in the text */
static leir_dtype dtype_in_text(const char *leir, const char *name) {
  size_t nl = strlen(name);
  for (const char *p = leir; (p = strstr(p, name)); p++) {
    bool letter_before = p > leir && ((p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= 'a' && p[-1] <= 'z'));
    if (letter_before || strncmp(p + nl, "^{", 2) != 0) continue;
    char dt[8] = {0};
    const char *q = p + nl + 2;
    for (int i = 0; i < 7 && q[i] && q[i] != ','; i++) dt[i] = q[i];
    leir_dtype d;
    if (leir_dtype_from_name(dt, &d) == LEIR_OK) return d;
  }
  return LEIR_F64;
}

static bool set_signature(leir_program *p, const jv *line, const char *leir) {
  leir_tensor_decl d[64];
  int64_t shapes[64][LEIR_MAX_RANK];
  size_t n = 0;
  const jv *sig = jv_get(line, "signature");
  if (sig) {
    const char *roles[2] = {"inputs", "outputs"};
    for (int r = 0; r < 2; r++) {
      const jv *list = jv_get(sig, roles[r]);
      for (size_t i = 0; list && i < list->n && n < 64; i++) {
        const jv *t = &list->items[i], *shape = jv_get(t, "shape");
        d[n].name = jv_get(t, "name")->str;
        if (leir_dtype_from_name(jv_get(t, "dtype")->str, &d[n].dtype) != LEIR_OK) return false;
        d[n].role = r ? LEIR_ROLE_OUTPUT : LEIR_ROLE_INPUT;
        d[n].rank = (uint32_t)shape->n;
        for (size_t k = 0; k < shape->n && k < LEIR_MAX_RANK; k++)
          shapes[n][k] = (int64_t)shape->items[k].num;
        d[n].shape = shapes[n];
        n++;
      }
    }
  } else {
    const jv *known = jv_get(line, "known"), *outs = jv_get(line, "outputs");
    const jv *sh = jv_get(line, "shapes");
    for (int r = 0; r < 2; r++)
      for (size_t i = 0; known && i < known->n && n < 64; i++) {
        const char *name = known->items[i].str;
        bool is_out = false;
        for (size_t j = 0; outs && j < outs->n; j++) is_out |= strcmp(outs->items[j].str, name) == 0;
        if (is_out != (r == 1)) continue;
        const jv *shape = jv_get(sh, name);
        if (!shape) return false;
        d[n].name = name;
        d[n].dtype = dtype_in_text(leir, name);
        d[n].role = is_out ? LEIR_ROLE_OUTPUT : LEIR_ROLE_INPUT;
        d[n].rank = (uint32_t)shape->n;
        for (size_t k = 0; k < shape->n && k < LEIR_MAX_RANK; k++)
          shapes[n][k] = (int64_t)shape->items[k].num;
        d[n].shape = shapes[n];
        n++;
      }
  }
  return leir_program_set_signature(p, d, n) == LEIR_OK;
}

size_t load_sources(const char *path, source **out) {
  *out = NULL;
  char *text = read_file(path, NULL);
  if (!text) {
    fprintf(stderr, "%s: cannot read\n", path);
    return 0;
  }
  size_t n = 0, cap = 0;
  source *v = NULL;
  for (char *line = text; *line;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    jv j;
    if (*line && jv_parse(line, &j)) {
      const jv *leir = jv_get(&j, "leir"), *id = jv_get(&j, "id");
      leir_program *p = NULL;
      /* sources-default lists no shapes for parameters: infer then */
      if (leir && id && leir_program_parse(&p, leir->str, strlen(leir->str), NULL) == LEIR_OK &&
          (set_signature(p, &j, leir->str) || leir_program_infer_signature(p) == LEIR_OK)) {
        if (n == cap) {
          cap = cap ? cap * 2 : 64;
          v = realloc(v, cap * sizeof *v);
        }
        v[n].id = strdup(id->str);
        v[n].program = p;
        n++;
      } else {
        fprintf(stderr, "%s: skipped %s (%s)\n", path, id ? id->str : "?", leir_error_last()->message);
        leir_program_free(p);
      }
      jv_free(&j);
    }
    if (!nl) break;
    line = nl + 1;
  }
  free(text);
  *out = v;
  return n;
}

void free_sources(source *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(s[i].id);
    leir_program_free(s[i].program);
  }
  free(s);
}
