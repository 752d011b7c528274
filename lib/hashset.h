/* A set of 64-bit hashes (internal): open addressing with linear probing,
 * kept at most half full. The one set the library uses for "seen this
 * program already" (the search's transposition table, the cost policy's
 * lookahead); keys are hashes, so the multiplicative spread below is all
 * the mixing they need. Zero is stored as 1, so keys 0 and 1 are one key
 * (as likely as any other collision of 64-bit hashes). Not thread-safe. */
#ifndef LEIR_LIB_HASHSET_H
#define LEIR_LIB_HASHSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct leir__hashset {
  uint64_t *slots; /* 0 = empty */
  size_t cap;      /* a power of two, or 0 before the first add */
  size_t count;
  size_t first_cap; /* slots of the first allocation (a power of two; 0: 256) */
} leir__hashset;

/* An empty set whose first allocation holds `first` slots (a power of two). */
#define LEIR__HASHSET_INIT(first) {NULL, 0, 0, (first)}

bool leir__hashset_has(const leir__hashset *s, uint64_t key);
/* 1 when key was added, 0 when it was there already, -1 out of memory (the
 * set is unchanged). */
int leir__hashset_add(leir__hashset *s, uint64_t key);
/* Frees the slots; the set is empty again (and reusable). */
void leir__hashset_release(leir__hashset *s);

#endif
