/* Programs of the conformance corpus for the strategy benchmarks: both
 * source formats (sources-small: `signature`; sources-default:
 * known/inputs/outputs/shapes, dtypes from the LEIR text, parameters
 * without shapes inferred), read with tests/support/jsonl.h. */
#ifndef LEIR_BENCH_SOURCES_H
#define LEIR_BENCH_SOURCES_H

#include <stdbool.h>
#include <stddef.h>

#include "catalogue.h"
#include "jsonl.h"
#include "leir/leir.h"

typedef struct source {
  char *id;
  leir_program *program; /* with its signature */
} source;

/* Loads every line of a sources-*.jsonl file; returns the count (0 and a
 * message on stderr when the file cannot be read). */
size_t load_sources(const char *path, source **out);
void free_sources(source *s, size_t n);
/* The source with this id, or NULL. */
const source *find_source(const source *s, size_t n, const char *id);

#endif
