/*
 * Dumps every dependence answer the library gives over the conformance
 * corpus, one line per program, so that a change to the dependence model
 * (lib/dependence.c) can be compared before and after:
 *
 *   build/bench/dep_dump tests/data/sources-*.jsonl tests/data/steps-*.jsonl > deps.txt
 *
 * For every loop of every nest (pre-order, all levels): the CPU answer
 * (leir__loop_independent, with its reason) and the CUDA answer (the bound
 * loop test, as if the loop were bound). With --candidates, also every
 * candidate step of the strategies with its exactness class, as a count and
 * a hash (the loop
 * strategies read strategies/deps.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cuda/cuda_internal.h"
#include "jsonl.h"
#include "leir/leir.h"

static void dump_nest(const leir__analysis *a, uint32_t top, const leir_nest *n) {
  for (uint32_t l = 0; l < n->nloops; l++) {
    char why[256], what[512];
    bool cpu = leir__loop_independent(a, n, l, why, sizeof why);
    const char *t = NULL;
    bool gpu = !leir__cuda_loop_conflict(a, top, &n->loops[l], &t, what, sizeof what);
    printf(" %s:%c%c", leir__sym_name(a->p, n->loops[l].sym), cpu ? 'c' : 'C', gpu ? 'g' : 'G');
    if (!cpu) printf("{%s}", why);
  }
  printf(" [");
  for (uint32_t k = 0; k < n->nitems; k++)
    if (n->items[k].nest) dump_nest(a, top, n->items[k].nest);
  printf(" ]");
}

int main(int argc, char **argv) {
  bool cands = false;
  for (int f = 1; f < argc; f++) {
    if (strcmp(argv[f], "--candidates") == 0) {
      cands = true;
      continue;
    }
    jsonl_file *jf = jsonl_open(argv[f]);
    if (!jf) {
      fprintf(stderr, "cannot read %s\n", argv[f]);
      return 1;
    }
    const jsonl_value *o;
    size_t line = 0;
    while ((o = jsonl_next(jf))) {
      line++;
      const char *text = jsonl_str(jsonl_get(o, "after"));
      if (!text) text = jsonl_str(jsonl_get(o, "leir"));
      if (!text) continue;
      printf("%s:%zu", argv[f], line);
      leir_program *p = NULL;
      if (leir_program_parse(&p, text, strlen(text), NULL) != LEIR_OK) {
        printf(" PARSE\n");
        continue;
      }
      leir__analysis *a = NULL;
      if (leir__analyze_program(p, NULL, &a) != LEIR_OK) {
        printf(" INVALID %s\n", leir_error_last()->rule);
        leir_program_free(p);
        continue;
      }
      for (uint32_t t = 0; t < p->nnests; t++) dump_nest(a, t, p->nests[t]);
      if (cands) {
        leir_candidates *c = NULL;
        if (leir_candidates_list(&c, p, NULL) == LEIR_OK) {
          /* FNV-1a of every step's text and class: the lists are large */
          uint64_t h = 1469598103934665603ull;
          size_t n = leir_candidates_count(c);
          for (size_t i = 0; i < n; i++) {
            const char *s = leir_step_text(leir_candidates_step(c, i));
            for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
            h = (h ^ (unsigned)(leir_candidates_exactness(c, i) + 7)) * 1099511628211ull;
          }
          printf(" candidates=%zu/%016llx", n, (unsigned long long)h);
        } else {
          printf(" CANDIDATES-ERROR %s", leir_error_last()->rule);
        }
        leir_candidates_free(c);
      }
      printf("\n");
      leir__analysis_free(a);
      leir_program_free(p);
    }
    jsonl_close(jf);
  }
  return 0;
}
