/* Reading the conformance corpus in the benchmarks: a minimal JSON reader
 * (objects, arrays, strings, numbers, literals) and the two source formats
 * (sources-small: `signature`; sources-default: known/inputs/outputs/shapes,
 * dtypes from the LEIR text). */
#ifndef LEIR_BENCH_JSONL_H
#define LEIR_BENCH_JSONL_H

#include <stdbool.h>
#include <stddef.h>

#include "leir/leir.h"

typedef struct jv {
  int kind; /* 0 null, 1 number, 2 string, 3 array, 4 object, 5 bool */
  double num;
  char *str;
  size_t n;
  struct jv *items;
  char **keys;
} jv;

/* Parses one JSON value; false on malformed input. */
bool jv_parse(const char *text, jv *out);
void jv_free(jv *v);
const jv *jv_get(const jv *object, const char *key);

/* Reads a whole file (NUL-terminated, malloc'd) or NULL. */
char *read_file(const char *path, size_t *len);

typedef struct source {
  char *id;
  leir_program *program; /* with its signature */
} source;

/* Loads every line of a sources-*.jsonl file; returns the count (0 and a
 * message on stderr on failure). */
size_t load_sources(const char *path, source **out);
void free_sources(source *s, size_t n);

#endif
