/*
 * Side-by-side driver for the verifier throughput (issue 10.6): the same
 * candidates judged by two builds of libleir, in separate processes (one
 * process cannot load two versions of the library). This file compiles
 * against today's headers and against those of an older libleir (the one
 * before the verifier object existed): the verifier and candidate classes
 * are used only when the headers have them. bench/verifier_side_by_side.sh
 * builds the old library, compiles this driver against it and runs the two
 * in alternation.
 *
 *   verifier_side gen CONFORMANCE_DIR OUT [PROGRAMS [K]]
 *       writes the candidate list: for the first PROGRAMS programs of
 *       sources-small.jsonl with at most 10^6 evaluations, K candidates
 *       each (spread over the strategy engine's list), one JSON line per
 *       candidate: {"source": LINE, "class": C, "leir": TEXT}
 *   verifier_side run CONFORMANCE_DIR CANDS BACKEND THREADS MODE [ROUNDS [WARM]]
 *       MODE verify: leir_verify per candidate; MODE verifier: one
 *       leir_verifier per program judging its candidates in a batch. A
 *       first untimed pass warms the kernel cache (WARM 0: none, for the
 *       interpreter, which compiles nothing); then ROUNDS (default 1)
 *       timed passes. THREADS 0 = the backend's default. Prints one line:
 *       RESULT mode=... candidates=N seconds=S cand_s=X verdicts=V:n,...
 *       where seconds is the best of the rounds.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonl.h" /* tests/support */
#include "leir/leir.h"
#include "corpus_signature.h"

#if defined(LEIR_VERIFY_CLASS_REASSOCIATING)
#define HAVE_CLASSES 1
#endif
#if defined(LEIR_VERIFIER_OPTIONS_INIT)
#define HAVE_VERIFIER 1
#endif

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}


/* A source program of the corpus with its signature; NULL if it does not
 * parse. */
static leir_program *source_program(const jsonl_value *v) {
  const char *text = jsonl_str(jsonl_get(v, "leir"));
  leir_program *p = NULL;
  if (!text || leir_program_parse(&p, text, strlen(text), NULL) != LEIR_OK) return NULL;
  bench_set_signature(p, jsonl_get(v, "signature"));
  return p;
}

static void json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", out);
    else if (c < 0x20)
      fprintf(out, "\\u%04x", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

static int gen(const char *dir, const char *outpath, size_t want, size_t k) {
  char path[4096];
  snprintf(path, sizeof path, "%s/sources-small.jsonl", dir);
  jsonl_file *f = jsonl_open(path);
  FILE *out = fopen(outpath, "w");
  if (!f || !out) {
    fprintf(stderr, "cannot open %s or %s\n", path, outpath);
    return 2;
  }
  size_t programs = 0, total = 0;
  const jsonl_value *v;
  while (programs < want && (v = jsonl_next(f))) {
    size_t line = jsonl_line(f);
    leir_program *p = source_program(v);
    leir_program_cost c;
    leir_candidates *cl = NULL;
    if (!p || leir_program_cost_get(p, &c) != LEIR_OK || c.evaluations > 1000000 ||
        leir_candidates_list(&cl, p, NULL) != LEIR_OK || leir_candidates_count(cl) == 0) {
      leir_candidates_free(cl);
      leir_program_free(p);
      continue;
    }
    size_t nc = leir_candidates_count(cl), m = nc < k ? nc : k, kept = 0;
    for (size_t i = 0; i < m; i++) {
      size_t j = i * nc / m;
      leir_program *cand = NULL;
      char *text = NULL;
      if (leir_candidates_apply(&cand, cl, j) != LEIR_OK ||
          leir_program_print(cand, 0, &text, NULL) != LEIR_OK) {
        leir_program_free(cand);
        continue;
      }
      fprintf(out, "{\"source\": %zu, \"class\": %u, \"leir\": ", line,
              (unsigned)leir_candidates_exactness(cl, j) + 1);
      json_string(out, text);
      fputs("}\n", out);
      leir_free(text);
      leir_program_free(cand);
      kept++;
    }
    programs += kept > 0;
    total += kept;
    leir_candidates_free(cl);
    leir_program_free(p);
  }
  jsonl_close(f);
  if (fclose(out) != 0) return 2;
  fprintf(stderr, "%zu candidates of %zu programs written to %s\n", total, programs, outpath);
  return 0;
}

typedef struct item {
  leir_program *ref;
  leir_program **cands;
  uint32_t *classes;
  size_t n, cap;
} item;

static int run(const char *dir, const char *cands_path, const char *backend, unsigned threads,
               const char *mode, int rounds, int warm) {
  bool batch = strcmp(mode, "verifier") == 0;
  if (!batch && strcmp(mode, "verify") != 0) {
    fprintf(stderr, "MODE is verify or verifier\n");
    return 2;
  }
#ifndef HAVE_VERIFIER
  if (batch) {
    fprintf(stderr, "this libleir has no verifier object\n");
    return 2;
  }
#endif
  /* the candidates, grouped by source line (in file order) */
  jsonl_file *cf = jsonl_open(cands_path);
  if (!cf) {
    fprintf(stderr, "cannot open %s\n", cands_path);
    return 2;
  }
  size_t nitems = 0, cap = 0, total = 0, unparsed = 0;
  item *items = NULL;
  size_t *lines = NULL;
  const jsonl_value *v;
  while ((v = jsonl_next(cf))) {
    size_t line = (size_t)jsonl_int(jsonl_get(v, "source"), -1);
    if (!nitems || lines[nitems - 1] != line) {
      if (nitems == cap) {
        cap = cap ? 2 * cap : 64;
        items = realloc(items, cap * sizeof *items);
        lines = realloc(lines, cap * sizeof *lines);
        if (!items || !lines) return 2;
      }
      memset(&items[nitems], 0, sizeof items[nitems]);
      lines[nitems++] = line;
    }
    item *it = &items[nitems - 1];
    const char *text = jsonl_str(jsonl_get(v, "leir"));
    leir_program *p = NULL;
    if (!text || leir_program_parse(&p, text, strlen(text), NULL) != LEIR_OK) {
      unparsed++;
      continue;
    }
    if (it->n == it->cap) {
      it->cap = it->cap ? 2 * it->cap : 16;
      it->cands = realloc(it->cands, it->cap * sizeof *it->cands);
      it->classes = realloc(it->classes, it->cap * sizeof *it->classes);
      if (!it->cands || !it->classes) return 2;
    }
    it->classes[it->n] = (uint32_t)jsonl_int(jsonl_get(v, "class"), 0);
    it->cands[it->n++] = p;
    total++;
  }
  jsonl_close(cf);
  /* their references */
  char path[4096];
  snprintf(path, sizeof path, "%s/sources-small.jsonl", dir);
  jsonl_file *f = jsonl_open(path);
  if (!f) return 2;
  size_t found = 0;
  while ((v = jsonl_next(f))) {
    size_t line = jsonl_line(f);
    for (size_t i = 0; i < nitems; i++)
      if (lines[i] == line && !items[i].ref) {
        items[i].ref = source_program(v);
        found += items[i].ref != NULL;
      }
  }
  jsonl_close(f);
  if (found != nitems) {
    fprintf(stderr, "%zu of %zu reference programs not found\n", nitems - found, nitems);
    return 2;
  }
  leir_backend *b = NULL;
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.threads = threads;
  if (leir_backend_open(&b, backend, &bo) != LEIR_OK) {
    fprintf(stderr, "%s: %s\n", backend, leir_error_last()->message);
    return 3;
  }
  int counts[LEIR_VERDICT_COUNT] = {0};
  double best = -1, sum = 0;
  if (rounds < 1) rounds = 1;
  for (int pass = warm ? 0 : 1; pass <= rounds; pass++) { /* pass 0 warms the kernel cache */
    double t0 = now();
    for (size_t i = 0; i < nitems; i++) {
      item *it = &items[i];
      if (!batch) {
        for (size_t c = 0; c < it->n; c++) {
          leir_verify_options o = LEIR_VERIFY_OPTIONS_INIT;
#ifdef HAVE_CLASSES
          o.candidate_class = it->classes[c];
#endif
          leir_verify_report *r = NULL;
          if (leir_verify(b, it->ref, it->cands[c], &o, &r) != LEIR_OK) {
            fprintf(stderr, "leir_verify: %s\n", leir_error_last()->message);
            return 4;
          }
          if (pass == 1) counts[r->verdict]++;
          leir_verify_report_free(r);
        }
      } else {
#ifdef HAVE_VERIFIER
        leir_verifier *ver = NULL;
        if (leir_verifier_new(&ver, b, it->ref, NULL) != LEIR_OK) return 4;
        leir_verify_report **rs = calloc(it->n + 1, sizeof *rs);
        if (!rs ||
            leir_verifier_judge_batch(ver, (const leir_program *const *)it->cands, it->classes,
                                      it->n, rs) != LEIR_OK) {
          fprintf(stderr, "judge_batch: %s\n", leir_error_last()->message);
          return 4;
        }
        for (size_t c = 0; c < it->n; c++) {
          if (pass == 1) counts[rs[c]->verdict]++;
          leir_verify_report_free(rs[c]);
        }
        free(rs);
        leir_verifier_free(ver);
#endif
      }
    }
    double s = now() - t0;
    if (pass) {
      sum += s;
      if (best < 0 || s < best) best = s;
    }
  }
  printf("RESULT mode=%s version=%s backend=%s threads=%u programs=%zu candidates=%zu "
         "unparsed=%zu rounds=%d seconds=%.4f mean_seconds=%.4f cand_s=%.2f verdicts=",
         mode, leir_version(), backend, threads, nitems, total, unparsed, rounds, best,
         sum / rounds, total / best);
  bool first = true;
  for (int x = 0; x < LEIR_VERDICT_COUNT; x++)
    if (counts[x]) {
      printf("%s%s:%d", first ? "" : ",", leir_verdict_name((leir_verdict)x), counts[x]);
      first = false;
    }
  printf("\n");
  leir_backend_free(b);
  for (size_t i = 0; i < nitems; i++) {
    for (size_t c = 0; c < items[i].n; c++) leir_program_free(items[i].cands[c]);
    free(items[i].cands);
    free(items[i].classes);
    leir_program_free(items[i].ref);
  }
  free(items);
  free(lines);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 4 && strcmp(argv[1], "gen") == 0)
    return gen(argv[2], argv[3], argc > 4 ? (size_t)atol(argv[4]) : 12,
               argc > 5 ? (size_t)atol(argv[5]) : 8);
  if (argc >= 7 && strcmp(argv[1], "run") == 0)
    return run(argv[2], argv[3], argv[4], (unsigned)atoi(argv[5]), argv[6],
               argc > 7 ? atoi(argv[7]) : 1, argc > 8 ? atoi(argv[8]) : 1);
  fprintf(stderr,
          "usage: %s gen CONFORMANCE_DIR OUT [PROGRAMS [K]]\n"
          "       %s run CONFORMANCE_DIR CANDS BACKEND THREADS verify|verifier [ROUNDS [WARM]]\n",
          argv[0], argv[0]);
  return 2;
}
