/* Programs of the conformance corpus for the strategy benchmarks: both
 * source formats (sources-small: `signature`; sources-default:
 * known/inputs/outputs/shapes, dtypes from the LEIR text, parameters
 * without shapes inferred). JSON through bench/jsonl.h. */
#ifndef LEIR_BENCH_SOURCES_H
#define LEIR_BENCH_SOURCES_H

#include <stdbool.h>
#include <stddef.h>

#include "leir/leir.h"

typedef struct source {
  char *id;
  leir_program *program; /* with its signature */
} source;

/* Loads every line of a sources-*.jsonl file; returns the count (0 and a
 * message on stderr when the file cannot be read). */
size_t load_sources(const char *path, source **out);
void free_sources(source *s, size_t n);

/* Calls fn for every JSON object line of a file (steps-*.jsonl); returns
 * false when the file cannot be read. The object is valid during fn. */
struct jval;
bool for_each_json_line(const char *path, void (*fn)(const struct jval *line, void *ud), void *ud);
/* String member (NULL when absent or not a string), and booleans. */
const char *json_str(const struct jval *o, const char *key);
bool json_true(const struct jval *o, const char *key);

#endif
