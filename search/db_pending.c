/* Measurement rows the database could not take during a run (engine.h,
 * db_down): kept in memory and written once more when the search ends, so
 * a lock another process held for a while, or a disk that filled and was
 * freed, costs the cache nothing. The retry is bounded: at most
 * DB_RETRY_ROUNDS rounds, none started after DB_RETRY_S seconds (a round
 * that meets the lock again waits out the database's 10 s busy timeout
 * once and stops), one round when the run was cancelled. What is still
 * unsaved then is counted as lost (leir_search_summary.db_unsaved). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"

#define DB_RETRY_ROUNDS 3
#define DB_RETRY_S 15.0
#define DB_RETRY_PAUSE_NS 250000000L
/* rows kept at most; beyond it a row is lost at once (bounded memory) */
#define DB_PENDING_MAX 65536u

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void drop(leir_db_row *r) {
  free((char *)r->step);
  free((char *)r->program);
  free((char *)r->message);
  free((char *)r->parent_program);
}

void leir__search_db_keep(search_ctx *ctx, const leir_db_row *row) {
  if (ctx->db_npending >= DB_PENDING_MAX) {
    ctx->db_unsaved++;
    return;
  }
  if (ctx->db_npending == ctx->db_cappending) {
    uint32_t cap = ctx->db_cappending ? 2 * ctx->db_cappending : 16;
    leir_db_row *p = realloc(ctx->db_pending, cap * sizeof *p);
    if (!p) {
      ctx->db_unsaved++;
      return;
    }
    ctx->db_pending = p;
    ctx->db_cappending = cap;
  }
  /* the whole row (fields appended later come along); the strings it
   * borrows from the evaluation are copied, the backend, machine and
   * protocol strings live in ctx until the end */
  leir_db_row *r = &ctx->db_pending[ctx->db_npending];
  *r = *row;
  r->step = dup_or_null(row->step);
  r->program = dup_or_null(row->program);
  r->message = dup_or_null(row->message);
  r->parent_program = dup_or_null(row->parent_program);
  if ((row->step && !r->step) || (row->program && !r->program) ||
      (row->message && !r->message) || (row->parent_program && !r->parent_program)) {
    drop(r);
    ctx->db_unsaved++;
    return;
  }
  ctx->db_npending++;
}

void leir__search_db_retry(search_ctx *ctx) {
  uint32_t done = 0; /* rows [0, done) are written or given up */
  int rounds = ctx->stopped_by == 3 ? 1 : DB_RETRY_ROUNDS;
  double t0 = leir__now();
  for (int round = 0; round < rounds && done < ctx->db_npending && ctx->o.db; round++) {
    if (round > 0) {
      if (leir__now() - t0 > DB_RETRY_S) break;
      struct timespec pause = {0, DB_RETRY_PAUSE_NS};
      nanosleep(&pause, NULL);
    }
    while (done < ctx->db_npending) {
      leir_status st = leir_db_put(ctx->o.db, &ctx->db_pending[done]);
      if (st == LEIR_ERR_IO) break; /* still locked or full: the next round */
      if (st == LEIR_OK) ctx->db_saved_late++;
      else ctx->db_unsaved++; /* a row the database refuses: never written */
      drop(&ctx->db_pending[done++]);
    }
  }
  for (uint32_t i = done; i < ctx->db_npending; i++) drop(&ctx->db_pending[i]);
  ctx->db_unsaved += ctx->db_npending - done;
  ctx->db_npending = 0;
}

void leir__search_db_pending_free(search_ctx *ctx) {
  for (uint32_t i = 0; i < ctx->db_npending; i++) drop(&ctx->db_pending[i]);
  free(ctx->db_pending);
  ctx->db_pending = NULL;
  ctx->db_npending = ctx->db_cappending = 0;
}
