/*
 * A small JSON reader for tests: the conformance corpus is JSON Lines (one
 * object per line). Test code only; it allocates with malloc and reports
 * malformed JSON by returning NULL with a message.
 *
 *   jsonl_file *f = jsonl_open(test_data_path("sources-small.jsonl"));
 *   const jsonl_value *o;
 *   while ((o = jsonl_next(f))) {
 *     const char *id = jsonl_str(jsonl_get(o, "id"));       // NULL if absent
 *     const char *text = jsonl_str(jsonl_get(o, "leir"));
 *     ...                                                   // o lives until the next call
 *   }
 *   jsonl_close(f);
 *
 * Accessors accept NULL and wrong kinds (they return NULL / 0 / the default),
 * so lookups chain: jsonl_int(jsonl_at(jsonl_get(o, "shape"), 0), -1).
 */
#ifndef LEIR_TEST_JSONL_H
#define LEIR_TEST_JSONL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum jsonl_kind {
  JSONL_NULL,
  JSONL_BOOL,
  JSONL_NUMBER,
  JSONL_STRING,
  JSONL_ARRAY,
  JSONL_OBJECT
} jsonl_kind;

typedef struct jsonl_value jsonl_value;
struct jsonl_value {
  jsonl_kind kind;
  bool boolean;        /* JSONL_BOOL */
  double number;       /* JSONL_NUMBER */
  char *str;           /* JSONL_STRING: NUL-terminated UTF-8 (may hold NULs: see len) */
  size_t len;          /* JSONL_STRING: bytes; ARRAY/OBJECT: entries */
  jsonl_value *items;  /* ARRAY/OBJECT: values */
  char **keys;         /* OBJECT: keys, parallel to items */
};

/* Parses one JSON document of `len` bytes. Returns a tree (free with
 * jsonl_free) or NULL, with a message in err (may be NULL). */
jsonl_value *jsonl_parse(const char *text, size_t len, char *err, size_t errcap);
void jsonl_free(jsonl_value *v);

/* Object member by key; NULL if v is not an object or has no such key. */
const jsonl_value *jsonl_get(const jsonl_value *v, const char *key);
/* Array element (or object value) i; NULL when out of range. */
const jsonl_value *jsonl_at(const jsonl_value *v, size_t i);
/* Entries of an array or object; 0 otherwise. */
size_t jsonl_len(const jsonl_value *v);
/* String contents; NULL unless v is a string. */
const char *jsonl_str(const jsonl_value *v);
/* Number as int64 (truncated); `dflt` unless v is a number. */
int64_t jsonl_int(const jsonl_value *v, int64_t dflt);
/* true/false; `dflt` unless v is a boolean. */
bool jsonl_bool(const jsonl_value *v, bool dflt);

/* Reading a .jsonl file line by line. */
typedef struct jsonl_file jsonl_file;
/* NULL (and a message on stderr) if the file cannot be read. */
jsonl_file *jsonl_open(const char *path);
/* The next non-empty line's value, valid until the next call or close;
 * NULL at the end. A line that is not valid JSON ends the file with
 * jsonl_error() set. */
const jsonl_value *jsonl_next(jsonl_file *f);
/* 1-based line number of the value jsonl_next returned last. */
size_t jsonl_line(const jsonl_file *f);
/* Message of the parse error that ended the file, or NULL. */
const char *jsonl_error(const jsonl_file *f);
void jsonl_close(jsonl_file *f);

#endif
