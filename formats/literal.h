/* A reader of JSON and Python literals (internal): the common ground of
 * JSON and what Python's str() and ast.literal_eval read — single, double
 * and triple quotes, string prefixes r/u/b, adjacent strings, True/False/
 * None and true/false/null, tuples (read as lists), trailing commas, #
 * comments. Used for LLM answers (answer.h) and for the dataset's own JSONL
 * files. Untrusted input: never reads past `n`, nests at most
 * LEIR__LIT_MAX_DEPTH levels, allocates O(n) from the caller's arena. */
#ifndef LEIR_DATASET_LITERAL_H
#define LEIR_DATASET_LITERAL_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"

#define LEIR__LIT_MAX_DEPTH 64

typedef enum leir__lit_kind {
  LEIR__LIT_NONE,
  LEIR__LIT_BOOL,
  LEIR__LIT_NUM,
  LEIR__LIT_STR,
  LEIR__LIT_LIST,
  LEIR__LIT_DICT
} leir__lit_kind;

/* A value. Lists chain their entries through `first`/`next`; dicts chain
 * their keys the same way, each key's `value` being its value. */
typedef struct leir__lit leir__lit;
struct leir__lit {
  leir__lit_kind kind;
  int is_int;       /* NUM: an integer that fits int64 (in `i`) */
  int bad_text;     /* STR: invalid UTF-8 or a NUL byte */
  int64_t i;        /* BOOL: 0/1; NUM: the integer */
  double d;         /* NUM: the value when not an integer */
  const char *s;    /* STR: decoded, NUL-terminated */
  size_t n;         /* STR: length; LIST/DICT: entries */
  leir__lit *first; /* LIST: entries; DICT: keys */
  leir__lit *next;  /* the next sibling */
  leir__lit *value; /* a dict key's value */
  size_t off;       /* offset in the whole text (base + position) */
};

#define LEIR__LIT_ERR_SYNTAX 1
#define LEIR__LIT_ERR_DEEP 2

typedef struct leir__lit_error {
  int code;           /* 0, LEIR__LIT_ERR_SYNTAX or LEIR__LIT_ERR_DEEP */
  int nomem;          /* the arena ran out of memory */
  size_t offset;      /* base + position of the error */
  char message[200];  /* what is wrong, without the position */
} leir__lit_error;

/* Parses s[0..n) as one literal (`trailing`: text may follow it). Offsets
 * in values and errors are `base` + the position. NULL on failure, with
 * *err (may be NULL) filled in. */
const leir__lit *leir__lit_parse(leir__arena *arena, const char *s, size_t n, size_t base,
                                 int trailing, leir__lit_error *err);
/* A dict's value for `key` (exact match first, then ignoring case); NULL
 * when absent or `d` is not a dict. */
const leir__lit *leir__lit_get(const leir__lit *d, const char *key);
/* "None", "a boolean", "a number", "a string", "a list", "a dict". */
const char *leir__lit_kind_name(leir__lit_kind kind);
/* A clean string's text (NULL for other kinds and bad text). */
const char *leir__lit_str(const leir__lit *v);
/* A dict's string field, "" when absent or not a string (records read back
 * by the builder and by leir_eval, where a missing field reads as empty). */
static inline const char *leir__lit_field(const leir__lit *d, const char *key) {
  const char *s = leir__lit_str(leir__lit_get(d, key));
  return s ? s : "";
}
/* 1 and *out for an integer, else 0. */
int leir__lit_int(const leir__lit *v, int64_t *out);
/* 1 and *out for any number, else 0. */
int leir__lit_num(const leir__lit *v, double *out);

#endif
