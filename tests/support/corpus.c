#include "corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static char *field(char **cursor) {
  char *start = *cursor, *tab = strchr(start, '\t');
  if (tab) {
    *tab = '\0';
    *cursor = tab + 1;
  } else {
    *cursor = start + strlen(start);
  }
  return strdup(start);
}

size_t corpus_read(const char *path, corpus_entry **out) {
  size_t len;
  char *text = test_read_file(path, &len);
  size_t n = 0, cap = 64;
  corpus_entry *e = malloc(cap * sizeof *e);
  ck_assert_ptr_nonnull(e);
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#' || !line[0]) continue;
    if (n == cap) {
      cap *= 2;
      e = realloc(e, cap * sizeof *e);
      ck_assert_ptr_nonnull(e);
    }
    char *cur = line;
    e[n].id = field(&cur);
    e[n].inputs = field(&cur);
    e[n].outputs = field(&cur);
    e[n].leir = field(&cur);
    n++;
  }
  free(text);
  *out = e;
  return n;
}

void corpus_free(corpus_entry *entries, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(entries[i].id);
    free(entries[i].inputs);
    free(entries[i].outputs);
    free(entries[i].leir);
  }
  free(entries);
}

/* NAME:DTYPE:SHAPE,... into decls (names and shapes point into storage). */
static size_t parse_decls(const char *list, leir_role role, leir_tensor_decl *decls,
                          char (*names)[32], int64_t (*shapes)[LEIR_MAX_RANK], size_t at) {
  const char *p = list;
  while (*p) {
    const char *end = strchr(p, ',');
    if (!end) end = p + strlen(p);
    char item[256];
    size_t n = (size_t)(end - p);
    ck_assert_uint_lt(n, sizeof item);
    memcpy(item, p, n);
    item[n] = '\0';
    char *c1 = strchr(item, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    ck_assert_msg(c1 && c2, "bad declaration '%s'", item);
    *c1 = *c2 = '\0';
    leir_tensor_decl *d = &decls[at];
    ck_assert_uint_lt(strlen(item), 32);
    memcpy(names[at], item, strlen(item) + 1);
    ck_assert_int_eq(leir_dtype_from_name(c1 + 1, &d->dtype), LEIR_OK);
    d->name = names[at];
    d->role = role;
    d->rank = 0;
    if (strcmp(c2 + 1, "scalar") != 0)
      for (char *tok = strtok(c2 + 1, "x"); tok; tok = strtok(NULL, "x"))
        shapes[at][d->rank++] = strtoll(tok, NULL, 10);
    d->shape = shapes[at];
    at++;
    p = *end ? end + 1 : end;
  }
  return at;
}

leir_program *corpus_program_text(const corpus_entry *e, const char *text) {
  leir_program *p = test_parse(text);
  leir_tensor_decl decls[64];
  char names[64][32];
  int64_t shapes[64][LEIR_MAX_RANK];
  size_t n = parse_decls(e->inputs, LEIR_ROLE_INPUT, decls, names, shapes, 0);
  n = parse_decls(e->outputs, LEIR_ROLE_OUTPUT, decls, names, shapes, n);
  ck_assert_msg(leir_program_set_signature(p, decls, n) == LEIR_OK, "%s: %s", e->id,
                leir_error_last()->message);
  return p;
}

leir_program *corpus_program(const corpus_entry *e) { return corpus_program_text(e, e->leir); }
