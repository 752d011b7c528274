/* The hash set (lib/hashset.h). */
#include <stdlib.h>

#include "hashset.h"

static uint64_t stored(uint64_t key) { return key ? key : 1; }

static size_t home(uint64_t k, size_t cap) {
  return (size_t)(k * 0x9E3779B97F4A7C15ull) & (cap - 1);
}

bool leir__hashset_has(const leir__hashset *s, uint64_t key) {
  if (!s->cap) return false;
  uint64_t k = stored(key);
  for (size_t i = home(k, s->cap);; i = (i + 1) & (s->cap - 1)) {
    if (s->slots[i] == 0) return false;
    if (s->slots[i] == k) return true;
  }
}

static bool grow(leir__hashset *s) {
  size_t ncap = s->cap ? s->cap * 2 : s->first_cap ? s->first_cap : 256;
  uint64_t *nt = calloc(ncap, sizeof *nt);
  if (!nt) return false;
  for (size_t j = 0; j < s->cap; j++) {
    uint64_t k = s->slots[j];
    if (!k) continue;
    size_t i = home(k, ncap);
    while (nt[i]) i = (i + 1) & (ncap - 1);
    nt[i] = k;
  }
  free(s->slots);
  s->slots = nt;
  s->cap = ncap;
  return true;
}

int leir__hashset_add(leir__hashset *s, uint64_t key) {
  if ((s->count + 1) * 2 > s->cap && !grow(s)) return -1;
  uint64_t k = stored(key);
  size_t i = home(k, s->cap);
  while (s->slots[i] && s->slots[i] != k) i = (i + 1) & (s->cap - 1);
  if (s->slots[i]) return 0;
  s->slots[i] = k;
  s->count++;
  return 1;
}

void leir__hashset_release(leir__hashset *s) {
  free(s->slots);
  s->slots = NULL;
  s->cap = s->count = 0;
}
