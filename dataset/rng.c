/* splitmix64: a fixed generator, so the same seed gives the same dataset on
 * every platform and libc. */
#include <string.h>

#include "ds.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

uint64_t leir__rng_next(leir__rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t leir__rng_below(leir__rng *r, uint64_t n) { return n ? leir__rng_next(r) % n : 0; }

double leir__rng_unit(leir__rng *r) { return (double)(leir__rng_next(r) >> 11) * 0x1.0p-53; }

leir__rng leir__rng_derive(uint64_t seed, const char *label, uint64_t n) {
  leir__rng r;
  r.s = XXH3_64bits_withSeed(label, strlen(label), seed) ^ (n * 0xd1b54a32d192ed03ull);
  return r;
}
