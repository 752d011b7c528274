#include "sources.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static bool add_decl(leir_tensor_decl *d, int64_t *shape, const char *name, leir_dtype dt,
                     leir_role role, const jsonl_value *sh) {
  if (!name || !sh || sh->kind != JSONL_ARRAY || jsonl_len(sh) > LEIR_MAX_RANK) return false;
  d->name = name;
  d->dtype = dt;
  d->role = role;
  d->rank = (uint32_t)jsonl_len(sh);
  for (size_t k = 0; k < d->rank; k++) shape[k] = jsonl_int(jsonl_at(sh, k), 0);
  d->shape = shape;
  return true;
}

static bool set_signature(leir_program *p, const jsonl_value *line, const char *leir) {
  leir_tensor_decl d[64];
  int64_t shapes[64][LEIR_MAX_RANK];
  size_t n = 0;
  const jsonl_value *sig = jsonl_get(line, "signature");
  if (sig) {
    const char *roles[2] = {"inputs", "outputs"};
    for (int r = 0; r < 2; r++) {
      const jsonl_value *list = jsonl_get(sig, roles[r]);
      for (size_t i = 0; i < jsonl_len(list) && n < 64; i++) {
        const jsonl_value *t = jsonl_at(list, i);
        leir_dtype dt;
        const char *dts = jsonl_str(jsonl_get(t, "dtype"));
        if (!dts || leir_dtype_from_name(dts, &dt) != LEIR_OK ||
            !add_decl(&d[n], shapes[n], jsonl_str(jsonl_get(t, "name")), dt,
                      r ? LEIR_ROLE_OUTPUT : LEIR_ROLE_INPUT, jsonl_get(t, "shape")))
          return false;
        n++;
      }
    }
  } else {
    const jsonl_value *known = jsonl_get(line, "known"), *outs = jsonl_get(line, "outputs");
    const jsonl_value *sh = jsonl_get(line, "shapes");
    for (int r = 0; r < 2; r++)
      for (size_t i = 0; i < jsonl_len(known) && n < 64; i++) {
        const char *name = jsonl_str(jsonl_at(known, i));
        bool is_out = false;
        for (size_t j = 0; j < jsonl_len(outs) && name; j++)
          is_out |= strcmp(jsonl_str(jsonl_at(outs, j)) ? jsonl_str(jsonl_at(outs, j)) : "", name) == 0;
        if (is_out != (r == 1)) continue;
        if (!name || !add_decl(&d[n], shapes[n], name, dtype_in_text(leir, name),
                               is_out ? LEIR_ROLE_OUTPUT : LEIR_ROLE_INPUT, jsonl_get(sh, name)))
          return false;
        n++;
      }
  }
  return leir_program_set_signature(p, d, n) == LEIR_OK;
}

size_t load_sources(const char *path, source **out) {
  *out = NULL;
  jsonl_file *f = jsonl_open(path);
  if (!f) return 0;
  size_t n = 0, cap = 64;
  source *v = calloc(cap, sizeof *v);
  const jsonl_value *j;
  while (v && (j = jsonl_next(f))) {
    const char *leir = jsonl_str(jsonl_get(j, "leir")), *id = jsonl_str(jsonl_get(j, "id"));
    leir_program *p = NULL;
    /* sources-default lists no shapes for parameters: infer then */
    if (leir && id && leir_program_parse(&p, leir, strlen(leir), NULL) == LEIR_OK &&
        (set_signature(p, j, leir) || leir_program_infer_signature(p) == LEIR_OK)) {
      if (n == cap) {
        source *nv = realloc(v, (cap *= 2) * sizeof *v);
        if (!nv) break;
        v = nv;
      }
      v[n].id = strdup(id);
      v[n].program = p;
      n++;
    } else {
      fprintf(stderr, "%s: skipped %s (%s)\n", path, id ? id : "?", leir_error_last()->message);
      leir_program_free(p);
    }
  }
  jsonl_close(f);
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

const source *find_source(const source *s, size_t n, const char *id) {
  for (size_t i = 0; i < n && id; i++)
    if (strcmp(s[i].id, id) == 0) return &s[i];
  return NULL;
}
