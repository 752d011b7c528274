#include "arena.h"

#include <stdlib.h>
#include <string.h>

struct leir__arena_chunk {
  leir__arena_chunk *next;
  size_t size;
  /* payload follows, 8-byte aligned */
};

#define CHUNK_HEADER ((sizeof(leir__arena_chunk) + 7u) & ~(size_t)7u)
#define DEFAULT_CHUNK 4096u
#define MIN_CHUNK 512u
#define MAX_GROWTH_CHUNK ((size_t)1 << 24)

void leir__arena_init(leir__arena *a, size_t first_chunk) {
  a->head = NULL;
  a->cur = a->end = NULL;
  a->next_size = first_chunk ? first_chunk : DEFAULT_CHUNK;
  a->total = 0;
}

void leir__arena_release(leir__arena *a) {
  leir__arena_chunk *c = a->head;
  while (c) {
    leir__arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  a->head = NULL;
  a->cur = a->end = NULL;
  a->total = 0;
}

void *leir__arena_alloc_chunk(leir__arena *a, size_t size) {
  /* `size` is rounded by leir__arena_alloc; 0 means it overflowed */
  if (size == 0 || size > SIZE_MAX / 2 - CHUNK_HEADER) return NULL;
  size_t chunk = a->next_size;
  if (chunk < size) chunk = size;
  leir__arena_chunk *c = malloc(CHUNK_HEADER + chunk);
  if (!c) return NULL;
  c->next = a->head;
  c->size = chunk;
  a->head = c;
  a->total += CHUNK_HEADER + chunk;
  a->cur = (char *)c + CHUNK_HEADER + size;
  a->end = (char *)c + CHUNK_HEADER + chunk;
  /* The next chunk is half of everything so far: few chunks for large
   * objects, and at most a third of the memory left unused when a size
   * hint was too small (doubling could leave two thirds). */
  a->next_size = a->total / 2;
  if (a->next_size < MIN_CHUNK) a->next_size = MIN_CHUNK;
  if (a->next_size > MAX_GROWTH_CHUNK) a->next_size = MAX_GROWTH_CHUNK;
  return (char *)c + CHUNK_HEADER;
}

void *leir__arena_calloc(leir__arena *a, size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  void *p = leir__arena_alloc(a, n * size);
  if (p) memset(p, 0, n * size);
  return p;
}

char *leir__arena_strndup(leir__arena *a, const char *s, size_t len) {
  if (len == SIZE_MAX) return NULL;
  char *p = leir__arena_alloc(a, len + 1);
  if (!p) return NULL;
  if (len) memcpy(p, s, len);
  p[len] = '\0';
  return p;
}
