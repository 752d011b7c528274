/* The transposition table: the alpha hashes of every program the search has
 * made, so that one reached twice (in any order of steps) is proposed once. */
#include <stdlib.h>

#include "engine.h"

/* ---- transposition table ---------------------------------------------------- */

static uint64_t tkey(uint64_t h) { return h ? h : 1; }

bool leir__search_seen(const search_ctx *ctx, uint64_t h) {
  if (!ctx->tcap) return false;
  uint64_t k = tkey(h);
  for (size_t i = (size_t)(k * 0x9E3779B97F4A7C15ull) & (ctx->tcap - 1);; i = (i + 1) & (ctx->tcap - 1)) {
    if (ctx->table[i] == 0) return false;
    if (ctx->table[i] == k) return true;
  }
}

bool leir__search_table_add(search_ctx *ctx, uint64_t h) {
  if ((ctx->tcount + 1) * 2 > ctx->tcap) {
    size_t ncap = ctx->tcap ? ctx->tcap * 2 : 256;
    uint64_t *nt = calloc(ncap, sizeof *nt);
    if (!nt) return false;
    for (size_t j = 0; j < ctx->tcap; j++) {
      uint64_t k = ctx->table[j];
      if (!k) continue;
      size_t i = (size_t)(k * 0x9E3779B97F4A7C15ull) & (ncap - 1);
      while (nt[i]) i = (i + 1) & (ncap - 1);
      nt[i] = k;
    }
    free(ctx->table);
    ctx->table = nt;
    ctx->tcap = ncap;
  }
  uint64_t k = tkey(h);
  size_t i = (size_t)(k * 0x9E3779B97F4A7C15ull) & (ctx->tcap - 1);
  while (ctx->table[i] && ctx->table[i] != k) i = (i + 1) & (ctx->tcap - 1);
  if (!ctx->table[i]) ctx->tcount++;
  ctx->table[i] = k;
  return true;
}
