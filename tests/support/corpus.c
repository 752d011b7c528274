#include "corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static void read_decls(corpus_entry *e, const jsonl_value *list, leir_role role) {
  for (size_t i = 0; i < jsonl_len(list); i++) {
    ck_assert_uint_lt(e->ndecls, 64);
    const jsonl_value *d = jsonl_at(list, i);
    const char *name = jsonl_str(jsonl_get(d, "name"));
    ck_assert_ptr_nonnull(name);
    ck_assert_uint_lt(strlen(name), 32);
    leir_tensor_decl *t = &e->decls[e->ndecls];
    memcpy(e->names[e->ndecls], name, strlen(name) + 1);
    t->name = e->names[e->ndecls];
    ck_assert_int_eq(leir_dtype_from_name(jsonl_str(jsonl_get(d, "dtype")), &t->dtype), LEIR_OK);
    t->role = role;
    const jsonl_value *shape = jsonl_get(d, "shape");
    t->rank = (uint32_t)jsonl_len(shape);
    ck_assert_uint_le(t->rank, LEIR_MAX_RANK);
    for (uint32_t k = 0; k < t->rank; k++) e->shapes[e->ndecls][k] = jsonl_int(jsonl_at(shape, k), -1);
    t->shape = e->shapes[e->ndecls];
    e->ndecls++;
  }
}

size_t corpus_read(corpus_entry **out) {
  jsonl_file *f = test_corpus_open("sources-small.jsonl");
  size_t n = 0, cap = 128;
  corpus_entry *es = calloc(cap, sizeof *es);
  ck_assert_ptr_nonnull(es);
  const jsonl_value *v;
  while ((v = jsonl_next(f))) {
    if (n == cap) {
      es = realloc(es, (cap *= 2) * sizeof *es);
      ck_assert_ptr_nonnull(es);
    }
    corpus_entry *e = &es[n++];
    memset(e, 0, sizeof *e);
    e->id = strdup(jsonl_str(jsonl_get(v, "id")));
    e->leir = strdup(jsonl_str(jsonl_get(v, "leir")));
    const jsonl_value *sig = jsonl_get(v, "signature");
    read_decls(e, jsonl_get(sig, "inputs"), LEIR_ROLE_INPUT);
    read_decls(e, jsonl_get(sig, "outputs"), LEIR_ROLE_OUTPUT);
  }
  ck_assert_ptr_null(jsonl_error(f));
  jsonl_close(f);
  *out = es;
  return n;
}

void corpus_free(corpus_entry *entries, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(entries[i].id);
    free(entries[i].leir);
  }
  free(entries);
}

const corpus_entry *corpus_find(const corpus_entry *entries, size_t n, const char *id) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(entries[i].id, id) == 0) return &entries[i];
  return NULL;
}

leir_program *corpus_program_text(const corpus_entry *e, const char *text) {
  leir_program *p = test_parse(text);
  ck_assert_msg(leir_program_set_signature(p, e->decls, e->ndecls) == LEIR_OK, "%s: %s", e->id,
                leir_error_last()->message);
  return p;
}

leir_program *corpus_program(const corpus_entry *e) { return corpus_program_text(e, e->leir); }

void corpus_programs_load(corpus_programs *out) {
  out->n = corpus_read(&out->rows);
  out->e = calloc(out->n ? out->n : 1, sizeof *out->e);
  ck_assert_ptr_nonnull(out->e);
  for (size_t i = 0; i < out->n; i++) {
    out->e[i].id = out->rows[i].id;
    out->e[i].program = corpus_program(&out->rows[i]);
  }
}

void corpus_programs_free(corpus_programs *c) {
  for (size_t i = 0; i < c->n; i++) leir_program_free(c->e[i].program);
  free(c->e);
  corpus_free(c->rows, c->n);
  *c = (corpus_programs){0};
}

uint32_t corpus_candidate_class(const leir_candidates *c, size_t i) {
  return leir_candidates_exactness(c, i) == LEIR_EXACT ? LEIR_VERIFY_CLASS_EXACT
                                                       : LEIR_VERIFY_CLASS_REASSOCIATING;
}

bool corpus_all_f64(const leir_program *p) {
  size_t n = leir_program_signature_count(p);
  for (size_t i = 0; i < n; i++) {
    leir_tensor_decl d;
    leir_program_signature_get(p, i, &d);
    if (d.dtype <= LEIR_F32) return false; /* f16, bf16, f32: an f64 truth exists */
  }
  return true;
}

bool corpus_masked(const leir_program *p) {
  size_t n = leir_program_signature_count(p);
  for (size_t i = 0; i < n; i++) {
    leir_tensor_decl d;
    leir_program_signature_get(p, i, &d);
    if (d.dtype == LEIR_BOOL && d.role == LEIR_ROLE_INPUT) return true;
  }
  char *text = test_print(p);
  bool inf = strstr(text, "inf") != NULL;
  leir_free(text);
  return inf;
}

leir_verifier_options corpus_strict_for(leir_backend *b, const leir_program *p) {
  leir_verifier_options o = LEIR_VERIFIER_OPTIONS_INIT;
  leir_verify_options vo = LEIR_VERIFY_OPTIONS_INIT;
  vo.flags = LEIR_VERIFY_STRICT_PARALLEL;
  vo.input_sets = 1;
  leir_verify_report *r = NULL;
  ck_assert_int_eq(leir_verify(b, p, p, &vo, &r), LEIR_OK);
  if (r->verdict != LEIR_VERDICT_INVALID) o.flags = LEIR_VERIFY_STRICT_PARALLEL;
  leir_verify_report_free(r);
  return o;
}
