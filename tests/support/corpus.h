/* The conformance corpus for tests: reads sources-*.jsonl lines (id,
 * signature, leir) into programs with their signatures. A minimal JSON
 * reader that accepts exactly what the corpus files contain. */
#ifndef LEIR_TEST_CORPUS_H
#define LEIR_TEST_CORPUS_H

#include <stddef.h>

#include "leir/leir.h"

typedef struct corpus_entry {
  char *id;
  char *leir;
  leir_program *program; /* parsed, with the signature set */
} corpus_entry;

typedef struct corpus {
  size_t n;
  corpus_entry *e;
} corpus;

/* Loads tests/data/<name>; aborts the test on malformed input. */
void corpus_load(corpus *c, const char *name);
void corpus_free(corpus *c);
/* Entry by id, or NULL. */
const corpus_entry *corpus_find(const corpus *c, const char *id);

/* A JSON string field of one object line (malloc'd, unescaped), or NULL
 * when absent or null. */
char *json_string_field(const char *line, const char *key);

#endif
