#include "sources.h"

#include "jsonl.h"

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
                     leir_role role, const jval *sh) {
  if (!sh || sh->kind != J_ARR || sh->n > LEIR_MAX_RANK) return false;
  d->name = name;
  d->dtype = dt;
  d->role = role;
  d->rank = (uint32_t)sh->n;
  for (size_t k = 0; k < sh->n; k++) shape[k] = (int64_t)sh->items[k].num;
  d->shape = shape;
  return true;
}

static bool set_signature(leir_program *p, const jval *line, const char *leir) {
  leir_tensor_decl d[64];
  int64_t shapes[64][LEIR_MAX_RANK];
  size_t n = 0;
  const jval *sig = jget(line, "signature");
  if (sig) {
    const char *roles[2] = {"inputs", "outputs"};
    for (int r = 0; r < 2; r++) {
      const jval *list = jget(sig, roles[r]);
      for (size_t i = 0; list && i < list->n && n < 64; i++) {
        const jval *t = &list->items[i];
        leir_dtype dt;
        if (!jstr(t, "name") || !jstr(t, "dtype") || leir_dtype_from_name(jstr(t, "dtype"), &dt) != LEIR_OK ||
            !add_decl(&d[n], shapes[n], jstr(t, "name"), dt, r ? LEIR_ROLE_OUTPUT : LEIR_ROLE_INPUT,
                      jget(t, "shape")))
          return false;
        n++;
      }
    }
  } else {
    const jval *known = jget(line, "known"), *outs = jget(line, "outputs"), *sh = jget(line, "shapes");
    for (int r = 0; r < 2; r++)
      for (size_t i = 0; known && i < known->n && n < 64; i++) {
        const char *name = known->items[i].str;
        bool is_out = false;
        for (size_t j = 0; outs && j < outs->n; j++) is_out |= strcmp(outs->items[j].str, name) == 0;
        if (is_out != (r == 1)) continue;
        if (!add_decl(&d[n], shapes[n], name, dtype_in_text(leir, name),
                      is_out ? LEIR_ROLE_OUTPUT : LEIR_ROLE_INPUT, sh ? jget(sh, name) : NULL))
          return false;
        n++;
      }
  }
  return leir_program_set_signature(p, d, n) == LEIR_OK;
}

size_t load_sources(const char *path, source **out) {
  *out = NULL;
  char **lines = NULL;
  size_t nl = read_lines(path, &lines);
  if (!lines) {
    fprintf(stderr, "%s: cannot read\n", path);
    return 0;
  }
  size_t n = 0;
  source *v = calloc(nl ? nl : 1, sizeof *v);
  for (size_t i = 0; i < nl && v; i++) {
    jval j;
    const char *s = lines[i];
    if (!jparse(&s, &j)) continue;
    const char *leir = jstr(&j, "leir"), *id = jstr(&j, "id");
    leir_program *p = NULL;
    /* sources-default lists no shapes for parameters: infer then */
    if (leir && id && leir_program_parse(&p, leir, strlen(leir), NULL) == LEIR_OK &&
        (set_signature(p, &j, leir) || leir_program_infer_signature(p) == LEIR_OK)) {
      v[n].id = strdup(id);
      v[n].program = p;
      n++;
    } else {
      fprintf(stderr, "%s: skipped %s (%s)\n", path, id ? id : "?", leir_error_last()->message);
      leir_program_free(p);
    }
    jfree(&j);
  }
  for (size_t i = 0; i < nl; i++) free(lines[i]);
  free(lines);
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

bool for_each_json_line(const char *path, void (*fn)(const jval *line, void *ud), void *ud) {
  char **lines = NULL;
  size_t nl = read_lines(path, &lines);
  if (!lines) return false;
  for (size_t i = 0; i < nl; i++) {
    jval j;
    const char *s = lines[i];
    if (jparse(&s, &j)) fn(&j, ud);
    jfree(&j);
    free(lines[i]);
  }
  free(lines);
  return true;
}

const char *json_str(const jval *o, const char *key) { return jstr(o, key); }

bool json_true(const jval *o, const char *key) {
  const jval *v = jget(o, key);
  return v && v->kind == J_BOOL && v->b;
}
