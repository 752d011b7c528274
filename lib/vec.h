/*
 * One growable array: capacity doubling with overflow checks, for every
 * "if (n == cap) { cap = cap ? cap * 2 : 16; realloc }" in the library.
 *
 *   LEIR__VEC(leir_step) steps = LEIR__VEC_INIT;
 *   leir_step *s = LEIR__VEC_PUSH(&steps);   // NULL when out of memory
 *   ...
 *   free(steps.data);
 *
 * Arrays whose storage lives elsewhere (an arena, a struct with uint32_t
 * counters) use leir__vec_next_cap / leir__vec_grow32 for the arithmetic.
 */
#ifndef LEIR_VEC_H
#define LEIR_VEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* The capacity to grow `cap` to so that it holds `need` elements of
 * `elem` bytes: `first` when empty, then doubled until it suffices. False
 * when cap * elem would overflow size_t (or `limit` elements, when the
 * caller's counter is narrower). */
static inline bool leir__vec_next_cap(size_t cap, size_t need, size_t elem, size_t first,
                                      size_t limit, size_t *out) {
  size_t max = elem ? SIZE_MAX / elem : SIZE_MAX;
  if (limit < max) max = limit;
  if (need > max) return false;
  size_t c = cap ? cap : (first ? first : 1);
  while (c < need) c = c > max / 2 ? max : c * 2;
  if (c > max) c = max;
  *out = c;
  return true;
}

/* Grows *data (realloc) to hold at least `need` elements; *cap is updated.
 * False (and *data untouched) on overflow or out of memory. */
static inline bool leir__vec_grow(void **data, size_t *cap, size_t need, size_t elem,
                                  size_t first) {
  if (need <= *cap) return true;
  size_t c;
  if (!leir__vec_next_cap(*cap, need, elem, first, SIZE_MAX, &c)) return false;
  void *p = realloc(*data, c * elem);
  if (!p) return false;
  *data = p;
  *cap = c;
  return true;
}

/* The same for uint32_t capacities. */
static inline bool leir__vec_grow32(void **data, uint32_t *cap, size_t need, size_t elem,
                                    uint32_t first) {
  if (need <= *cap) return true;
  size_t c;
  if (!leir__vec_next_cap(*cap, need, elem, first, UINT32_MAX, &c)) return false;
  void *p = realloc(*data, c * elem);
  if (!p) return false;
  *data = p;
  *cap = (uint32_t)c;
  return true;
}

/* A typed array: data, length, capacity. */
#define LEIR__VEC(T) \
  struct {           \
    T *data;         \
    size_t len, cap; \
  }
#define LEIR__VEC_INIT {NULL, 0, 0}

/* Room for one more element (growing from 16); the new, uninitialized
 * slot, or NULL when out of memory (the array is unchanged). */
#define LEIR__VEC_PUSH(v)                                                             \
  (leir__vec_grow((void **)&(v)->data, &(v)->cap, (v)->len + 1, sizeof *(v)->data, 16) \
       ? &(v)->data[(v)->len++]                                                        \
       : NULL)

#endif
