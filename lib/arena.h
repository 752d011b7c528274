/* Per-object bump allocator: many small allocations, one release. */
#ifndef LEIR_ARENA_H
#define LEIR_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct leir__arena_chunk leir__arena_chunk;

typedef struct leir__arena {
  leir__arena_chunk *head; /* current chunk (a list of all chunks) */
  char *cur;               /* next free byte in head */
  char *end;               /* end of head */
  size_t next_size;        /* size of the next chunk to allocate */
  size_t total;            /* bytes obtained from malloc, for accounting */
} leir__arena;

/* `first_chunk` is a size hint for the first chunk (0 = default). */
void leir__arena_init(leir__arena *a, size_t first_chunk);
void leir__arena_release(leir__arena *a);
/* Allocates a new chunk for `size` bytes (the slow path). */
void *leir__arena_alloc_chunk(leir__arena *a, size_t size);

/* 8-byte aligned; NULL when out of memory (or the size overflows). Inline:
 * the parser allocates a node or two per token. */
static inline void *leir__arena_alloc(leir__arena *a, size_t size) {
  size = size ? (size + 7u) & ~(size_t)7u : 8;
  if (size && a->cur && (size_t)(a->end - a->cur) >= size) {
    void *p = a->cur;
    a->cur += size;
    return p;
  }
  return leir__arena_alloc_chunk(a, size);
}
void *leir__arena_calloc(leir__arena *a, size_t n, size_t size);
/* Copies len bytes and appends a NUL. */
char *leir__arena_strndup(leir__arena *a, const char *s, size_t len);

#endif
