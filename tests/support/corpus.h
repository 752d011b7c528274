/* The conformance sources (tests/data/sources-small.jsonl) with their
 * signatures, for the run/verify suites. */
#ifndef LEIR_TEST_CORPUS_H
#define LEIR_TEST_CORPUS_H

#include <stdbool.h>

#include "leir/leir.h"

typedef struct corpus_entry {
  char *id;
  char *leir;
  size_t ndecls;
  leir_tensor_decl decls[64]; /* names and shapes point into the entry */
  char names[64][32];
  int64_t shapes[64][LEIR_MAX_RANK];
} corpus_entry;

/* Reads every source program; returns the count, *out malloc'd. */
size_t corpus_read(corpus_entry **out);
void corpus_free(corpus_entry *entries, size_t n);
/* The entry with this id, or NULL. */
const corpus_entry *corpus_find(const corpus_entry *entries, size_t n, const char *id);

/* Parses e->leir and applies its signature; fails the test on error. */
leir_program *corpus_program(const corpus_entry *e);
/* Same for other text, with the signature of e. */
leir_program *corpus_program_text(const corpus_entry *e, const char *text);

/* Every source program parsed, with its signature, for suites that walk
 * them all: e[i] is rows[i]'s program. */
typedef struct corpus_source {
  const char *id;
  leir_program *program;
} corpus_source;
typedef struct corpus_programs {
  size_t n;
  corpus_source *e;
  corpus_entry *rows;
} corpus_programs;
void corpus_programs_load(corpus_programs *out);
void corpus_programs_free(corpus_programs *c);

/* Helpers of the suites that verify every candidate of a strategy on the
 * corpus (tests/test_streaming*.c). */

/* The verification class candidate i promises (EXACT or REASSOCIATING). */
uint32_t corpus_candidate_class(const leir_candidates *c, size_t i);
/* No float tensor narrower than f64 (bool masks and index inputs aside). */
bool corpus_all_f64(const leir_program *p);
/* Can a masked (-inf) element reach the softmax rows of p: a bool input
 * (the attention masks) or an inf literal? */
bool corpus_masked(const leir_program *p);
/* The verifier options for candidates of p on b: strict about P/V/B loops
 * when p itself passes the strict rule (as tests/test_strategy_verify.c). */
leir_verifier_options corpus_strict_for(leir_backend *b, const leir_program *p);

#endif
