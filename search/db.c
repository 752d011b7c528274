/* The measurement database (include/leir/experimental/search.h): SQLite in
 * WAL mode, one row per (program, baseline, source, backend, machine,
 * protocol). Every write is its own transaction, so a process killed at any
 * point leaves the file readable with the rows committed before it. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LEIR_EXPERIMENTAL
#include "leir/experimental/search.h"

#include "error.h"
#include "strbuf.h"

/* 2 appended parent_hash and parent_program (the state a step was taken
 * from, for preference data); a database of schema 1 is migrated on open
 * (its rows keep '' there: parent unknown). */
#define DB_SCHEMA_VERSION "2"

struct leir_db {
  sqlite3 *h;
  sqlite3_stmt *put, *get;
  char *strs[7]; /* strings of the last leir_db_get (borrowed by the caller) */
};

static leir_status db_error(leir_db *db, const char *what) {
  return leir__error(LEIR_ERR_IO, "db.sqlite", NULL, 0, 0, "measurement database: %s: %s", what,
                     db && db->h ? sqlite3_errmsg(db->h) : "cannot open");
}

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS leir_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT OR IGNORE INTO leir_meta(key, value) VALUES ('schema', '" DB_SCHEMA_VERSION "');"
    "CREATE TABLE IF NOT EXISTS measurements("
    " program_hash TEXT NOT NULL, baseline_hash TEXT NOT NULL, root_hash TEXT NOT NULL,"
    " backend TEXT NOT NULL, machine TEXT NOT NULL, protocol TEXT NOT NULL,"
    " verdict TEXT NOT NULL, ord TEXT NOT NULL, ratio REAL, ratio_lo REAL, ratio_hi REAL,"
    " median_s REAL, q1_s REAL, q3_s REAL, baseline_median_s REAL, rounds INTEGER,"
    " step TEXT, program TEXT, message TEXT, created REAL,"
    " parent_hash TEXT NOT NULL DEFAULT '', parent_program TEXT NOT NULL DEFAULT '',"
    " PRIMARY KEY(program_hash, baseline_hash, root_hash, backend, machine, protocol));";

/* Schema 1 -> 2, in db_setup's transaction. ADD COLUMN appends, so a
 * migrated table has the columns of a new one in the same order. */
static const char migrate_1_2_sql[] =
    "ALTER TABLE measurements ADD COLUMN parent_hash TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE measurements ADD COLUMN parent_program TEXT NOT NULL DEFAULT '';"
    "UPDATE leir_meta SET value='2' WHERE key='schema';";

static const char put_sql[] =
    "INSERT OR REPLACE INTO measurements(program_hash, baseline_hash, root_hash, backend, machine,"
    " protocol, verdict, ord, ratio, ratio_lo, ratio_hi, median_s, q1_s, q3_s, baseline_median_s,"
    " rounds, step, program, message, created, parent_hash, parent_program) VALUES"
    "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22)";
static const char get_sql[] =
    "SELECT verdict, ord, ratio, ratio_lo, ratio_hi, median_s, q1_s, q3_s, baseline_median_s,"
    " rounds, step, program, message, created, parent_hash, parent_program FROM measurements"
    " WHERE program_hash=?1 AND"
    " baseline_hash=?2 AND root_hash=?3 AND backend=?4 AND machine=?5 AND protocol=?6";

/* How long an open or a write waits for another process's lock. */
#define DB_BUSY_MS 10000

/* WAL (readers and one writer at a time from several processes; NORMAL
 * synchronous keeps every committed row across a killed process), then the
 * schema in an immediate transaction left open for the caller's check.
 * The SQLite result code; *err its message (sqlite3_free). */
/* Returned by db_setup for a file that holds another application's tables. */
#define DB_FOREIGN (-1)

/* The first table of a database that is neither empty nor ours (no
 * leir_meta table), copied into `name`; 0 when it is empty or ours. Our
 * tables are created only in such a file: `leir db check`, `db count` and
 * `optimize` used to add theirs to any SQLite file before failing. */
static int foreign_table(leir_db *db, char *name, size_t cap) {
  sqlite3_stmt *s = NULL;
  int ours = 0, found = 0;
  if (sqlite3_prepare_v2(db->h, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name",
                         -1, &s, NULL) != SQLITE_OK)
    return 0; /* the schema step reports the error */
  while (sqlite3_step(s) == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(s, 0);
    if (t && !strcmp(t, "leir_meta")) ours = 1;
    else if (t && !found) found = 1, snprintf(name, cap, "%s", t);
  }
  sqlite3_finalize(s);
  return found && !ours;
}

static int db_setup(leir_db *db, char **err, char *foreign, size_t cap) {
  int rc = sqlite3_exec(db->h, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", NULL, NULL,
                        err);
  if (rc == SQLITE_OK) rc = sqlite3_exec(db->h, "BEGIN IMMEDIATE;", NULL, NULL, err);
  if (rc != SQLITE_OK) return rc;
  if (foreign_table(db, foreign, cap)) {
    sqlite3_exec(db->h, "ROLLBACK;", NULL, NULL, NULL);
    return DB_FOREIGN;
  }
  rc = sqlite3_exec(db->h, schema_sql, NULL, NULL, err);
  if (rc == SQLITE_OK) {
    sqlite3_stmt *v = NULL;
    int old = sqlite3_prepare_v2(db->h, "SELECT 1 FROM leir_meta WHERE key='schema' AND value='1'",
                                 -1, &v, NULL) == SQLITE_OK &&
              sqlite3_step(v) == SQLITE_ROW;
    sqlite3_finalize(v);
    if (old) rc = sqlite3_exec(db->h, migrate_1_2_sql, NULL, NULL, err);
  }
  if (rc != SQLITE_OK) sqlite3_exec(db->h, "ROLLBACK;", NULL, NULL, NULL);
  return rc;
}

leir_status leir_db_open(leir_db **out, const char *path) {
  if (!out) return leir__error_arg("out", "out is NULL");
  *out = NULL;
  if (!path || !*path) return leir__error_arg("path", "the database path is NULL or empty");
  leir_db *db = calloc(1, sizeof *db);
  if (!db) return leir__error_nomem();
  if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
      SQLITE_OK) {
    leir_status st = db_error(db, path);
    leir_db_free(db);
    return st;
  }
  sqlite3_busy_timeout(db->h, DB_BUSY_MS);
  /* Several processes opening a new file at once: switching it to WAL, or
   * reading the WAL index another process is creating, can fail busy at
   * once, without the busy handler (SQLite returns SQLITE_BUSY where
   * waiting could deadlock). Retried for as long as the busy timeout. */
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    char *err = NULL, foreign[128];
    int rc = db_setup(db, &err, foreign, sizeof foreign);
    if (rc == SQLITE_OK) break;
    if (rc == DB_FOREIGN) {
      leir_db_free(db);
      return leir__error(LEIR_ERR_IO, "db.foreign", path, 0, 0,
                         "%s is not a measurement database: it holds another application's "
                         "tables (first: '%s'); give a new file or one leir made",
                         path, foreign);
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    double waited_ms =
        (double)(now.tv_sec - t0.tv_sec) * 1e3 + (double)(now.tv_nsec - t0.tv_nsec) / 1e6;
    int primary = rc & 0xff;
    if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) || waited_ms > DB_BUSY_MS) {
      leir_status st = leir__error(LEIR_ERR_IO, "db.sqlite", path, 0, 0,
                                   "measurement database %s: %s", path, err ? err : "?");
      sqlite3_free(err);
      leir_db_free(db);
      return st;
    }
    sqlite3_free(err);
    struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  char *err = NULL;
  sqlite3_stmt *v = NULL;
  int ok = sqlite3_prepare_v2(db->h, "SELECT value FROM leir_meta WHERE key='schema'", -1, &v,
                              NULL) == SQLITE_OK &&
           sqlite3_step(v) == SQLITE_ROW &&
           strcmp((const char *)sqlite3_column_text(v, 0), DB_SCHEMA_VERSION) == 0;
  sqlite3_finalize(v);
  if (!ok) {
    sqlite3_exec(db->h, "ROLLBACK;", NULL, NULL, NULL);
    leir_db_free(db);
    return leir__error(LEIR_ERR_IO, "db.schema", path, 0, 0,
                       "measurement database %s has a schema this version does not know "
                       "(expected %s)", path, DB_SCHEMA_VERSION);
  }
  if (sqlite3_exec(db->h, "COMMIT;", NULL, NULL, &err) != SQLITE_OK ||
      sqlite3_prepare_v2(db->h, put_sql, -1, &db->put, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db->h, get_sql, -1, &db->get, NULL) != SQLITE_OK) {
    sqlite3_free(err);
    leir_status st = db_error(db, path);
    leir_db_free(db);
    return st;
  }
  *out = db;
  return LEIR_OK;
}

void leir_db_free(leir_db *db) {
  if (!db) return;
  sqlite3_finalize(db->put);
  sqlite3_finalize(db->get);
  for (size_t i = 0; i < sizeof db->strs / sizeof db->strs[0]; i++) free(db->strs[i]);
  sqlite3_close(db->h);
  free(db);
}

static void hex16(uint64_t h, char buf[17]) { snprintf(buf, 17, "%016llx", (unsigned long long)h); }

static leir_status check_key(const leir_db *db, const leir_db_row *r) {
  if (!db) return leir__error_arg("db", "db is NULL");
  if (!r) return leir__error_arg("row", "row is NULL");
  if (r->size < sizeof(uint32_t) || r->size > sizeof(leir_db_row))
    return leir__error_arg("leir_db_row", "size %u is not a size of leir_db_row", r->size);
  if (r->size < offsetof(leir_db_row, verdict) || !r->backend || !r->machine || !r->protocol)
    return leir__error_arg("leir_db_row", "the row's backend, machine or protocol is missing");
  return LEIR_OK;
}

static void bind_key(sqlite3_stmt *s, const leir_db_row *r, char h[3][17]) {
  hex16(r->program_hash, h[0]);
  hex16(r->baseline_hash, h[1]);
  hex16(r->root_hash, h[2]);
  for (int i = 0; i < 3; i++) sqlite3_bind_text(s, i + 1, h[i], -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 4, r->backend, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 5, r->machine, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 6, r->protocol, -1, SQLITE_STATIC);
}

leir_status leir_db_put(leir_db *db, const leir_db_row *row) {
  leir_status st = check_key(db, row);
  if (st != LEIR_OK) return st;
  leir_db_row r = {0};
  memcpy(&r, row, row->size);
  char h[3][17];
  sqlite3_stmt *s = db->put;
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  bind_key(s, &r, h);
  sqlite3_bind_text(s, 7, leir_verdict_name(r.verdict), -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 8, leir_order_name(r.order), -1, SQLITE_STATIC);
  const double reals[] = {r.ratio, r.ratio_lo, r.ratio_hi, r.median_s, r.q1_s, r.q3_s,
                          r.baseline_median_s};
  for (int i = 0; i < 7; i++) sqlite3_bind_double(s, 9 + i, reals[i]);
  sqlite3_bind_int64(s, 16, r.rounds);
  sqlite3_bind_text(s, 17, r.step ? r.step : "", -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 18, r.program ? r.program : "", -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 19, r.message ? r.message : "", -1, SQLITE_STATIC);
  sqlite3_bind_double(s, 20, r.created > 0 ? r.created : (double)time(NULL));
  char ph[17] = "";
  if (r.parent_hash) hex16(r.parent_hash, ph);
  sqlite3_bind_text(s, 21, ph, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 22, r.parent_program ? r.parent_program : "", -1, SQLITE_STATIC);
  int rc = sqlite3_step(s);
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  return rc == SQLITE_DONE ? LEIR_OK : db_error(db, "write");
}

static leir_order order_from_name(const char *s) {
  for (int o = LEIR_ORDER_UNDECIDED; o <= LEIR_ORDER_SAME; o++)
    if (s && strcmp(s, leir_order_name((leir_order)o)) == 0) return (leir_order)o;
  return LEIR_ORDER_UNDECIDED;
}

/* 16 lowercase hex digits as a hash; 0 for anything else ('' included). */
static uint64_t hash_of_hex(const unsigned char *s) {
  uint64_t h = 0;
  for (int i = 0; i < 16; i++) {
    int c = s ? s[i] : 0, d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else return 0;
    h = h << 4 | (uint64_t)d;
  }
  return s[16] ? 0 : h;
}

static const char *keep(leir_db *db, int slot, const unsigned char *s) {
  free(db->strs[slot]);
  db->strs[slot] = strdup(s ? (const char *)s : "");
  return db->strs[slot] ? db->strs[slot] : "";
}

/* Bounds of a stored number: ratios and times are finite, not negative and
 * below these (1e308, 'abc', NULL or -1 in an edited row are refused). */
#define DB_MAX_RATIO 1e9
#define DB_MAX_SECONDS 1e7
#define DB_MAX_ROUNDS 1000000000LL

/* Whether the row at the statement's columns (verdict, ord, the seven
 * reals from `real0`, rounds after them) is one leir_db_put could have
 * written; else a reason in `why`. A row is read back into decisions (a
 * cached verdict is never remeasured), so a row edited or written by
 * another program must not be trusted. */
static int row_valid(sqlite3_stmt *s, int verdict_col, int real0, char *why, size_t cap) {
  static const char *const reals[] = {"ratio", "ratio_lo", "ratio_hi", "median_s", "q1_s", "q3_s",
                                      "baseline_median_s"};
  leir_verdict v;
  const char *vt = (const char *)sqlite3_column_text(s, verdict_col);
  if (sqlite3_column_type(s, verdict_col) != SQLITE_TEXT || leir_verdict_from_name(vt, &v) != LEIR_OK)
    return snprintf(why, cap, "verdict '%s' is not a verdict", vt ? vt : "NULL"), 0;
  const char *ot = (const char *)sqlite3_column_text(s, verdict_col + 1);
  int known = 0;
  for (int o = LEIR_ORDER_UNDECIDED; o <= LEIR_ORDER_SAME; o++)
    known |= ot && !strcmp(ot, leir_order_name((leir_order)o));
  if (!known) return snprintf(why, cap, "order '%s' is not an order", ot ? ot : "NULL"), 0;
  for (int i = 0; i < 7; i++) {
    int t = sqlite3_column_type(s, real0 + i);
    if (t != SQLITE_FLOAT && t != SQLITE_INTEGER)
      return snprintf(why, cap, "%s is %s, not a number", reals[i],
                      t == SQLITE_NULL ? "NULL" : "text or a blob"), 0;
    double x = sqlite3_column_double(s, real0 + i);
    double max = i < 3 ? DB_MAX_RATIO : DB_MAX_SECONDS;
    if (!isfinite(x) || x < 0 || x > max)
      return snprintf(why, cap, "%s is %g (0 to %g)", reals[i], x, max), 0;
  }
  int t = sqlite3_column_type(s, real0 + 7);
  long long rounds = sqlite3_column_int64(s, real0 + 7);
  if (t != SQLITE_INTEGER || rounds < 0 || rounds > DB_MAX_ROUNDS)
    return snprintf(why, cap, "rounds is not an integer from 0 to %lld", DB_MAX_ROUNDS), 0;
  return 1;
}

leir_status leir_db_get(leir_db *db, const leir_db_row *key, leir_db_row *out) {
  leir_status st = check_key(db, key);
  if (st != LEIR_OK) return st;
  if (!out || out->size < sizeof(uint32_t) || out->size > sizeof(leir_db_row))
    return leir__error_arg("out", "out is NULL or its size is not a size of leir_db_row");
  char h[3][17];
  sqlite3_stmt *s = db->get;
  sqlite3_reset(s);
  bind_key(s, key, h);
  int rc = sqlite3_step(s);
  if (rc == SQLITE_DONE) {
    sqlite3_reset(s);
    return leir__error(LEIR_ERR_NOT_FOUND, "db.not-found", NULL, 0, 0,
                       "no measurement of %s against %s", h[0], h[1]);
  }
  if (rc != SQLITE_ROW) {
    st = db_error(db, "read");
    sqlite3_reset(s);
    return st;
  }
  char why[160];
  if (!row_valid(s, 0, 2, why, sizeof why)) {
    sqlite3_reset(s);
    /* not found: the caller measures again and its put replaces the row */
    return leir__error(LEIR_ERR_NOT_FOUND, "db.invalid-row", NULL, 0, 0,
                       "the measurement of %s against %s is not trusted: %s", h[0], h[1], why);
  }
  leir_db_row r = {0};
  memcpy(&r, key, key->size);
  r.size = sizeof r;
  r.backend = keep(db, 0, (const unsigned char *)key->backend);
  r.machine = keep(db, 1, (const unsigned char *)key->machine);
  r.protocol = keep(db, 2, (const unsigned char *)key->protocol);
  if (leir_verdict_from_name((const char *)sqlite3_column_text(s, 0), &r.verdict) != LEIR_OK)
    r.verdict = LEIR_VERDICT_INVALID;
  r.order = order_from_name((const char *)sqlite3_column_text(s, 1));
  double *reals[] = {&r.ratio, &r.ratio_lo, &r.ratio_hi, &r.median_s, &r.q1_s, &r.q3_s,
                     &r.baseline_median_s};
  for (int i = 0; i < 7; i++) *reals[i] = sqlite3_column_double(s, 2 + i);
  r.rounds = (uint32_t)sqlite3_column_int64(s, 9);
  r.step = keep(db, 3, sqlite3_column_text(s, 10));
  r.program = keep(db, 4, sqlite3_column_text(s, 11));
  r.message = keep(db, 5, sqlite3_column_text(s, 12));
  r.created = sqlite3_column_double(s, 13);
  r.parent_hash = hash_of_hex(sqlite3_column_text(s, 14));
  r.parent_program = keep(db, 6, sqlite3_column_text(s, 15));
  sqlite3_reset(s);
  memcpy((char *)out + sizeof(uint32_t), (char *)&r + sizeof(uint32_t),
         out->size - sizeof(uint32_t));
  return LEIR_OK;
}

leir_status leir_db_count(leir_db *db, uint64_t *out) {
  if (!db || !out) return leir__error_arg("db", "db or out is NULL");
  sqlite3_stmt *s = NULL;
  leir_status st = LEIR_OK;
  if (sqlite3_prepare_v2(db->h, "SELECT COUNT(*) FROM measurements", -1, &s, NULL) != SQLITE_OK ||
      sqlite3_step(s) != SQLITE_ROW)
    st = db_error(db, "count");
  else
    *out = (uint64_t)sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return st;
}

static void put_real(leir__strbuf *b, const char *name, double v) {
  if (isfinite(v))
    leir__sb_printf(b, ",\"%s\":%.17g", name, v);
  else
    leir__sb_printf(b, ",\"%s\":\"%s\"", name, isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

leir_status leir_db_export(leir_db *db, leir_db_line_fn fn, void *payload) {
  if (!db || !fn) return leir__error_arg("db", "db or fn is NULL");
  static const char *const names[] = {
      "program_hash", "baseline_hash", "root_hash", "backend", "machine", "protocol",
      "verdict",      "order",         "ratio",     "ratio_lo", "ratio_hi", "median_s",
      "q1_s",         "q3_s",          "baseline_median_s", "rounds", "step", "program",
      "message",      "created",       "parent_hash", "parent_program"};
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db->h,
                         "SELECT * FROM measurements ORDER BY created, rowid", -1, &s,
                         NULL) != SQLITE_OK)
    return db_error(db, "export");
  leir_status st = LEIR_OK;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    leir__strbuf b = {0};
    leir__sb_putc(&b, '{');
    for (int i = 0; i < 22; i++) {
      if (i == 15) {
        leir__sb_printf(&b, ",\"%s\":%lld", names[i], (long long)sqlite3_column_int64(s, i));
      } else if (i >= 8 && i <= 14) {
        put_real(&b, names[i], sqlite3_column_double(s, i));
      } else if (i == 19) {
        put_real(&b, names[i], sqlite3_column_double(s, i));
      } else {
        const char *t = (const char *)sqlite3_column_text(s, i);
        leir__sb_printf(&b, "%s\"%s\":", i ? "," : "", names[i]);
        leir__sb_put_json_string(&b, t ? t : "", t ? strlen(t) : 0);
      }
    }
    leir__sb_putc(&b, '}');
    size_t len = 0;
    char *line = leir__sb_finish(&b, &len);
    if (!line) {
      st = leir__error_nomem();
      break;
    }
    int stop = fn(payload, line, len);
    free(line);
    if (stop) {
      st = leir__error(LEIR_ERR_CANCELLED, "db.cancelled", NULL, 0, 0,
                       "the export was stopped by its callback");
      break;
    }
  }
  if (st == LEIR_OK && rc != SQLITE_DONE) st = db_error(db, "export");
  sqlite3_finalize(s);
  return st;
}

leir_status leir_db_check(leir_db *db) {
  if (!db) return leir__error_arg("db", "db is NULL");
  sqlite3_stmt *s = NULL;
  leir_status st = LEIR_OK;
  if (sqlite3_prepare_v2(db->h, "PRAGMA integrity_check", -1, &s, NULL) != SQLITE_OK ||
      sqlite3_step(s) != SQLITE_ROW) {
    st = db_error(db, "integrity check");
  } else {
    const char *t = (const char *)sqlite3_column_text(s, 0);
    if (!t || strcmp(t, "ok") != 0)
      st = leir__error(LEIR_ERR_IO, "db.corrupt", NULL, 0, 0,
                       "measurement database integrity check: %s", t ? t : "?");
  }
  sqlite3_finalize(s);
  if (st != LEIR_OK) return st;
  /* every row as leir_db_get would read it */
  s = NULL;
  if (sqlite3_prepare_v2(db->h,
                         "SELECT program_hash, baseline_hash, verdict, ord, ratio, ratio_lo, "
                         "ratio_hi, median_s, q1_s, q3_s, baseline_median_s, rounds "
                         "FROM measurements ORDER BY rowid",
                         -1, &s, NULL) != SQLITE_OK)
    return db_error(db, "check");
  uint64_t bad = 0;
  char first[256] = "", why[160];
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    if (row_valid(s, 2, 4, why, sizeof why)) continue;
    if (!bad++) {
      const char *p = (const char *)sqlite3_column_text(s, 0);
      snprintf(first, sizeof first, "%s: %s", p ? p : "?", why);
    }
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return db_error(db, "check");
  if (bad)
    return leir__error(LEIR_ERR_IO, "db.invalid-row", NULL, 0, 0,
                       "%llu measurement%s not trusted (first: program %s); they are measured "
                       "again when needed", (unsigned long long)bad, bad == 1 ? " is" : "s are", first);
  return LEIR_OK;
}
