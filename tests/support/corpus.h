/* Reading the TSV files of tests/data/run: conformance programs with signatures. */
#ifndef LEIR_TEST_CORPUS_H
#define LEIR_TEST_CORPUS_H

#include "leir/leir.h"

typedef struct corpus_entry {
  char *id;
  char *inputs;  /* NAME:DTYPE:SHAPE,... ("" when none) */
  char *outputs;
  char *leir;
} corpus_entry;

/* Reads a TSV file (id, inputs, outputs, leir per line; '#' lines are
 * comments). Returns the number of entries; *out is malloc'd. */
size_t corpus_read(const char *path, corpus_entry **out);
void corpus_free(corpus_entry *entries, size_t n);

/* Parses e->leir and applies its signature; fails the test on error. */
leir_program *corpus_program(const corpus_entry *e);
/* Same for other text with the signature of e. */
leir_program *corpus_program_text(const corpus_entry *e, const char *text);

#endif
