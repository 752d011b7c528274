/*
 * Verdict census of the reference's one-step transformations
 * (conformance/steps-small.jsonl): every (before, after) pair through
 * leir_verify, counts per strategy, one JSON line per pair.
 *
 *   verify_census CONFORMANCE_DIR [--backend B] [--seed N] [--limit N]
 *                 [--strategy S] [--out FILE.jsonl] [--cache-dir DIR]
 *
 * Run by hand (it compiles thousands of programs); docs/census.md holds
 * the figures.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonl.h" /* tests/support */
#include "leir/leir.h"

typedef struct source {
  char *id;
  char *leir;
  leir_tensor_decl decls[64];
  char names[64][32];
  int64_t shapes[64][LEIR_MAX_RANK];
  size_t n;
} source;

static void read_decls(source *s, const jsonl_value *list, leir_role role) {
  for (size_t i = 0; i < jsonl_len(list) && s->n < 64; i++) {
    const jsonl_value *d = jsonl_at(list, i);
    leir_tensor_decl *t = &s->decls[s->n];
    snprintf(s->names[s->n], 32, "%s", jsonl_str(jsonl_get(d, "name")));
    t->name = s->names[s->n];
    leir_dtype_from_name(jsonl_str(jsonl_get(d, "dtype")), &t->dtype);
    t->role = role;
    const jsonl_value *shape = jsonl_get(d, "shape");
    t->rank = 0;
    for (size_t k = 0; k < jsonl_len(shape) && k < LEIR_MAX_RANK; k++)
      s->shapes[s->n][t->rank++] = jsonl_int(jsonl_at(shape, k), 1);
    t->shape = s->shapes[s->n];
    s->n++;
  }
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define NV (LEIR_VERDICT_COUNT)

typedef struct row {
  char name[80];
  uint32_t count[NV];
  uint32_t total;
} row;

static row *row_for(row *rows, size_t *nrows, const char *name) {
  for (size_t i = 0; i < *nrows; i++)
    if (strcmp(rows[i].name, name) == 0) return &rows[i];
  row *r = &rows[(*nrows)++];
  memset(r, 0, sizeof *r);
  snprintf(r->name, sizeof r->name, "%s", name);
  return r;
}

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    if (*s == '\n') {
      fputs("\\n", f);
      continue;
    }
    if ((unsigned char)*s < 0x20) continue;
    fputc(*s, f);
  }
  fputc('"', f);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CONFORMANCE_DIR [--backend B] [--seed N] [--limit N] "
                    "[--strategy S] [--out FILE] [--cache-dir DIR]\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1], *backend = "cpu", *only = NULL, *out_path = NULL, *cache = NULL;
  uint64_t seed = LEIR_SEED_DEFAULT;
  long limit = -1;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--backend")) backend = argv[i + 1];
    else if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[i + 1], NULL, 0);
    else if (!strcmp(argv[i], "--limit")) limit = strtol(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--strategy")) only = argv[i + 1];
    else if (!strcmp(argv[i], "--out")) out_path = argv[i + 1];
    else if (!strcmp(argv[i], "--cache-dir")) cache = argv[i + 1];
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/sources-small.jsonl", dir);
  jsonl_file *f = jsonl_open(path);
  if (!f) return 2;
  size_t nsrc = 0, cap = 0;
  source *src = NULL;
  const jsonl_value *v;
  while ((v = jsonl_next(f))) {
    if (nsrc == cap) src = realloc(src, (cap = cap ? 2 * cap : 128) * sizeof *src);
    memset(&src[nsrc], 0, sizeof *src);
    src[nsrc].id = strdup(jsonl_str(jsonl_get(v, "id")));
    src[nsrc].leir = strdup(jsonl_str(jsonl_get(v, "leir")));
    const jsonl_value *sig = jsonl_get(v, "signature");
    read_decls(&src[nsrc], jsonl_get(sig, "inputs"), LEIR_ROLE_INPUT);
    read_decls(&src[nsrc], jsonl_get(sig, "outputs"), LEIR_ROLE_OUTPUT);
    nsrc++;
  }
  jsonl_close(f);
  snprintf(path, sizeof path, "%s/steps-small.jsonl", dir);
  f = jsonl_open(path);
  if (!f) return 2;

  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.cache_dir = cache;
  leir_backend *b;
  if (leir_backend_open(&b, backend, &bo) != LEIR_OK) {
    fprintf(stderr, "cannot open %s: %s\n", backend, leir_error_last()->message);
    return 3;
  }
  FILE *out = out_path ? fopen(out_path, "w") : NULL;
  row rows[128];
  size_t nrows = 0;
  row all;
  memset(&all, 0, sizeof all);
  snprintf(all.name, sizeof all.name, "(all)");
  uint32_t parse_fail = 0, done = 0;
  double t0 = now();
  while ((limit < 0 || (long)done < limit) && (v = jsonl_next(f))) {
    size_t i = jsonl_line(f) - 1;
    const char *id = jsonl_str(jsonl_get(v, "id"));
    const char *strategy = jsonl_str(jsonl_get(v, "strategy"));
    if (only && strcmp(only, strategy) != 0) continue;
    const source *s = NULL;
    for (size_t k = 0; k < nsrc && !s; k++)
      if (!strcmp(src[k].id, id)) s = &src[k];
    const char *before_text = jsonl_str(jsonl_get(v, "before"));
    if (!before_text) before_text = s->leir;
    const char *after_text = jsonl_str(jsonl_get(v, "after"));
    leir_program *before = NULL, *after = NULL;
    leir_verdict verdict = LEIR_VERDICT_INVALID;
    char message[1200] = "", rule[64] = "";
    int program = -1;
    double t = now();
    leir_status st = leir_program_parse(&before, before_text, strlen(before_text), NULL);
    if (st == LEIR_OK) st = leir_program_set_signature(before, s->decls, s->n);
    if (st != LEIR_OK) {
      program = 0;
      snprintf(message, sizeof message, "reference: %s", leir_error_last()->message);
      snprintf(rule, sizeof rule, "%s", leir_error_last()->rule);
    } else if (leir_program_parse(&after, after_text, strlen(after_text), NULL) != LEIR_OK) {
      program = 1;
      parse_fail++;
      snprintf(message, sizeof message, "candidate: %s", leir_error_last()->message);
      snprintf(rule, sizeof rule, "%s", leir_error_last()->rule);
    } else {
      leir_verify_options o = LEIR_VERIFY_OPTIONS_INIT;
      o.seed = seed;
      leir_verify_report *r = NULL;
      if (leir_verify(b, before, after, &o, &r) != LEIR_OK) {
        fprintf(stderr, "line %zu: no verdict: %s\n", i + 1, leir_error_last()->message);
        return 3;
      }
      verdict = r->verdict;
      program = r->program;
      snprintf(message, sizeof message, "%s", r->message);
      snprintf(rule, sizeof rule, "%s", r->rule);
      leir_verify_report_free(r);
    }
    t = now() - t;
    row *rw = row_for(rows, &nrows, strategy);
    rw->count[verdict]++;
    rw->total++;
    all.count[verdict]++;
    all.total++;
    if (out) {
      fprintf(out, "{\"line\":%zu,\"id\":", i + 1);
      json_str(out, id);
      fprintf(out, ",\"strategy\":\"%s\",\"verdict\":\"%s\",\"program\":%d,\"rule\":", strategy,
              leir_verdict_name(verdict), program);
      json_str(out, rule);
      fprintf(out, ",\"seconds\":%.4f,\"message\":", t);
      json_str(out, message);
      fprintf(out, "}\n");
      fflush(out);
    }
    leir_program_free(before);
    leir_program_free(after);
    done++;
    if (done % 200 == 0)
      fprintf(stderr, "%u pairs, %.1f s\n", done, now() - t0);
  }
  double total = now() - t0;
  printf("backend %s, seed %" PRIu64 ", %u pairs in %.1f s (%.2f pairs/s); %u candidates do not parse\n\n",
         backend, seed, done, total, done / total, parse_fail);
  printf("| strategy | pairs |");
  for (int k = 0; k < NV; k++) printf(" %s |", leir_verdict_name((leir_verdict)k));
  printf("\n|---|---:|");
  for (int k = 0; k < NV; k++) printf("---:|");
  printf("\n");
  for (size_t i = 0; i <= nrows; i++) {
    row *rw = i < nrows ? &rows[i] : &all;
    printf("| %s | %u |", rw->name, rw->total);
    for (int k = 0; k < NV; k++) printf(" %u |", rw->count[k]);
    printf("\n");
  }
  if (out) fclose(out);
  jsonl_close(f);
  leir_backend_free(b);
  return 0;
}
