/* The transposition table: the alpha hashes of every program the search has
 * made, so that one reached twice (in any order of steps) is proposed once. */
#include "engine.h"

bool leir__search_seen(const search_ctx *ctx, uint64_t h) { return leir__hashset_has(&ctx->seen, h); }

bool leir__search_table_add(search_ctx *ctx, uint64_t h) { return leir__hashset_add(&ctx->seen, h) >= 0; }
