/* Merging measurement databases (leir_db_merge, include/leir/experimental/
 * search.h): the rows of another database file, validated one by one, are
 * added to an open one by key. Used to gather the databases of benchmark
 * workers (leir benchmark, python/leir/benchmark_ray.py) into one.
 *
 * The source file is untrusted: it is opened read-only, refused whole when
 * it is not a measurement database of this schema, and every row is checked
 * (hashes of 16 hex digits, known verdict and order names, finite
 * non-negative numbers, bounded strings) before anything is written. The
 * destination is written only through leir_db_get/leir_db_put. */
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEIR_EXPERIMENTAL
#include "leir/experimental/search.h"

#include "error.h"

/* The schema version db.c writes (DB_SCHEMA_VERSION there); a source of
 * schema 1 (no parent columns) is read with an unknown parent. */
#define MERGE_SCHEMA_VERSION "2"
/* Longest key string (backend, machine, protocol) and longest text field
 * (step, program, message) accepted from another database. */
#define MERGE_MAX_KEY 4096
#define MERGE_MAX_TEXT (16u << 20)

static const char select_sql[] =
    "SELECT program_hash, baseline_hash, root_hash, backend, machine, protocol, verdict, ord,"
    " ratio, ratio_lo, ratio_hi, median_s, q1_s, q3_s, baseline_median_s, rounds, step,"
    " program, message, created, parent_hash, parent_program FROM measurements ORDER BY rowid";
static const char select_v1_sql[] =
    "SELECT program_hash, baseline_hash, root_hash, backend, machine, protocol, verdict, ord,"
    " ratio, ratio_lo, ratio_hi, median_s, q1_s, q3_s, baseline_median_s, rounds, step,"
    " program, message, created, '', '' FROM measurements ORDER BY rowid";

leir_status leir_db_merge_options_init(leir_db_merge_options *opts, size_t size) {
  if (!opts || size < sizeof(uint32_t) || size > sizeof(leir_db_merge_options))
    return leir__error_arg("opts", "opts is NULL or size %zu is not a size of "
                                   "leir_db_merge_options", size);
  leir_db_merge_options d = LEIR_DB_MERGE_OPTIONS_INIT;
  memcpy(opts, &d, size);
  opts->size = (uint32_t)size;
  return LEIR_OK;
}

static bool parse_hash(const unsigned char *s, int len, uint64_t *out) {
  if (!s || len != 16) return false;
  uint64_t h = 0;
  for (int i = 0; i < 16; i++) {
    int c = s[i], d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else return false;
    h = h << 4 | (uint64_t)d;
  }
  *out = h;
  return true;
}

static bool parse_order(const char *s, leir_order *out) {
  for (int o = LEIR_ORDER_UNDECIDED; o <= LEIR_ORDER_SAME; o++) {
    const char *n = leir_order_name((leir_order)o);
    if (s && n && strcmp(s, n) == 0) {
      *out = (leir_order)o;
      return true;
    }
  }
  return false;
}

/* A text column: TEXT (or NULL as "") of at most `cap` bytes without NUL. */
static bool text_col(sqlite3_stmt *s, int i, size_t cap, bool nonempty, const char **out) {
  int t = sqlite3_column_type(s, i);
  if (t == SQLITE_NULL && !nonempty) {
    *out = "";
    return true;
  }
  if (t != SQLITE_TEXT) return false;
  const char *v = (const char *)sqlite3_column_text(s, i);
  int n = sqlite3_column_bytes(s, i);
  if (!v || n < 0 || (size_t)n > cap || (nonempty && n == 0) || strlen(v) != (size_t)n)
    return false;
  *out = v;
  return true;
}

/* A real column: a finite number >= 0 (NULL reads as 0: SQLite stores a NaN
 * as NULL, and leir_db_put writes the untimed fields of a row as 0). */
static bool real_col(sqlite3_stmt *s, int i, double *out) {
  int t = sqlite3_column_type(s, i);
  if (t == SQLITE_NULL) {
    *out = 0;
    return true;
  }
  if (t != SQLITE_FLOAT && t != SQLITE_INTEGER) return false;
  double v = sqlite3_column_double(s, i);
  if (!isfinite(v) || v < 0) return false;
  *out = v;
  return true;
}

/* Reads and validates the current row of `s` into *r (strings borrowed from
 * the statement until its next step). NULL when valid, else what is wrong. */
static const char *read_row(sqlite3_stmt *s, leir_db_row *r) {
  memset(r, 0, sizeof *r);
  r->size = sizeof *r;
  uint64_t *hashes[] = {&r->program_hash, &r->baseline_hash, &r->root_hash};
  for (int i = 0; i < 3; i++)
    if (sqlite3_column_type(s, i) != SQLITE_TEXT ||
        !parse_hash(sqlite3_column_text(s, i), sqlite3_column_bytes(s, i), hashes[i]))
      return "a hash is not 16 lowercase hex digits";
  const char **keys[] = {&r->backend, &r->machine, &r->protocol};
  for (int i = 0; i < 3; i++)
    if (!text_col(s, 3 + i, MERGE_MAX_KEY, true, keys[i]))
      return "the backend, machine or protocol is empty, too long or not text";
  const char *verdict = NULL, *order = NULL;
  if (!text_col(s, 6, 64, true, &verdict) || leir_verdict_from_name(verdict, &r->verdict) != LEIR_OK)
    return "unknown verdict";
  if (!text_col(s, 7, 64, true, &order) || !parse_order(order, &r->order))
    return "unknown order";
  double *reals[] = {&r->ratio, &r->ratio_lo, &r->ratio_hi, &r->median_s, &r->q1_s, &r->q3_s,
                     &r->baseline_median_s};
  for (int i = 0; i < 7; i++)
    if (!real_col(s, 8 + i, reals[i])) return "a ratio or time is negative, not finite or not a number";
  if (r->ratio_lo > r->ratio_hi) return "the ratio's interval is reversed";
  if (sqlite3_column_type(s, 15) != SQLITE_INTEGER) return "rounds is not an integer";
  sqlite3_int64 rounds = sqlite3_column_int64(s, 15);
  if (rounds < 0 || rounds > UINT32_MAX) return "rounds is out of range";
  r->rounds = (uint32_t)rounds;
  const char **texts[] = {&r->step, &r->program, &r->message};
  for (int i = 0; i < 3; i++)
    if (!text_col(s, 16 + i, MERGE_MAX_TEXT, false, texts[i]))
      return "the step, program or message is too long or not text";
  if (!real_col(s, 19, &r->created)) return "created is not a time";
  const char *ph = NULL;
  if (!text_col(s, 20, 16, false, &ph) ||
      (*ph && !parse_hash((const unsigned char *)ph, (int)strlen(ph), &r->parent_hash)))
    return "the parent hash is not empty or 16 lowercase hex digits";
  if (!text_col(s, 21, MERGE_MAX_TEXT, false, &r->parent_program))
    return "the parent program is too long or not text";
  return NULL;
}

/* Whether two rows with the same key hold the same measurement. */
static bool same_measurement(const leir_db_row *a, const leir_db_row *b) {
  return a->verdict == b->verdict && a->order == b->order && a->ratio == b->ratio &&
         a->ratio_lo == b->ratio_lo && a->ratio_hi == b->ratio_hi && a->median_s == b->median_s &&
         a->q1_s == b->q1_s && a->q3_s == b->q3_s &&
         a->baseline_median_s == b->baseline_median_s && a->rounds == b->rounds &&
         strcmp(a->program ? a->program : "", b->program ? b->program : "") == 0;
}

static leir_status src_error(sqlite3 *h, const char *path, const char *rule, const char *what) {
  return leir__error(LEIR_ERR_IO, rule, path, 0, 0, "%s: %s%s%s", path, what, h ? ": " : "",
                     h ? sqlite3_errmsg(h) : "");
}

/* Opens `path` read-only and checks that it is a measurement database of
 * this schema; *stmt selects its rows. */
static leir_status open_source(const char *path, sqlite3 **h, sqlite3_stmt **stmt) {
  *h = NULL;
  *stmt = NULL;
  if (sqlite3_open_v2(path, h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
    return src_error(*h, path, "db.open", "cannot open");
  sqlite3_busy_timeout(*h, 10000);
  sqlite3_stmt *v = NULL;
  int rc = sqlite3_prepare_v2(*h, "SELECT value FROM leir_meta WHERE key='schema'", -1, &v, NULL);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(v);
    return src_error(*h, path, "db.foreign", "not a leir measurement database");
  }
  rc = sqlite3_step(v);
  const char *ver = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(v, 0) : NULL;
  bool v1 = ver && strcmp(ver, "1") == 0;
  bool ok = ver && (v1 || strcmp(ver, MERGE_SCHEMA_VERSION) == 0);
  char seen[32];
  snprintf(seen, sizeof seen, "%s", ver ? ver : "none");
  sqlite3_finalize(v);
  if (!ok)
    return leir__error(LEIR_ERR_IO, "db.schema", path, 0, 0,
                       "%s: a measurement database of schema %s, not 1 or %s", path, seen,
                       MERGE_SCHEMA_VERSION);
  if (sqlite3_prepare_v2(*h, v1 ? select_v1_sql : select_sql, -1, stmt, NULL) != SQLITE_OK)
    return src_error(*h, path, "db.foreign", "not a leir measurement database (its table differs)");
  return LEIR_OK;
}

/* One pass over the source rows: counts into *st and, when `write`, adds
 * the new rows and the replacing ones. */
static leir_status merge_pass(leir_db *into, sqlite3 *h, sqlite3_stmt *s, const char *path,
                              uint32_t flags, bool write, leir_db_merge_stats *st) {
  leir_db_merge_stats z = {0};
  *st = z;
  int rc;
  uint64_t row_no = 0;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    row_no++;
    st->rows++;
    leir_db_row r;
    const char *bad = read_row(s, &r);
    if (bad) {
      st->invalid++;
      if (flags & LEIR_DB_MERGE_STRICT)
        return leir__error(LEIR_ERR_INVALID, "db.invalid-row", path, (uint32_t)row_no, 0,
                           "%s: row %llu: %s", path, (unsigned long long)row_no, bad);
      continue;
    }
    leir_db_row old = {.size = sizeof old};
    leir_status g = leir_db_get(into, &r, &old);
    bool replace = false;
    if (g == LEIR_ERR_NOT_FOUND) {
      st->added++;
      replace = true;
    } else if (g != LEIR_OK) {
      return g;
    } else if (same_measurement(&r, &old)) {
      st->duplicates++;
    } else {
      st->conflicts++;
      if (flags & LEIR_DB_MERGE_FAIL_ON_CONFLICT)
        return leir__error(LEIR_ERR_INVALID, "db.conflict", path, (uint32_t)row_no, 0,
                           "%s: row %llu: program %016llx against %016llx on %s was measured "
                           "differently in both databases", path, (unsigned long long)row_no,
                           (unsigned long long)r.program_hash,
                           (unsigned long long)r.baseline_hash, r.backend);
      /* the earlier measurement is kept, whichever file it came from, so a
       * merge does not depend on the order of its inputs */
      if (r.created < old.created) {
        st->replaced++;
        replace = true;
      }
    }
    if (write && replace) {
      leir_status p = leir_db_put(into, &r);
      if (p != LEIR_OK) return p;
    }
  }
  if (rc != SQLITE_DONE) return src_error(h, path, "db.read", "cannot read");
  return LEIR_OK;
}

leir_status leir_db_merge(leir_db *into, const char *path, const leir_db_merge_options *opts,
                          leir_db_merge_stats *stats) {
  if (!into) return leir__error_arg("into", "into is NULL");
  if (!path || !*path) return leir__error_arg("path", "the database path is NULL or empty");
  leir_db_merge_options o = LEIR_DB_MERGE_OPTIONS_INIT;
  if (opts) {
    if (opts->size < sizeof(uint32_t) || opts->size > sizeof o)
      return leir__error_arg("opts", "size %u is not a size of leir_db_merge_options", opts->size);
    memcpy(&o, opts, opts->size);
  }
  if (stats && (stats->size < sizeof(uint32_t) || stats->size > sizeof(leir_db_merge_stats)))
    return leir__error_arg("stats", "size %u is not a size of leir_db_merge_stats", stats->size);
  sqlite3 *h = NULL;
  sqlite3_stmt *s = NULL;
  leir_status st = open_source(path, &h, &s);
  leir_db_merge_stats got = {0};
  /* A strict merge, or one that fails on a conflict, checks every row
   * before it writes one, so that a refused file leaves `into` as it was. */
  if (st == LEIR_OK && (o.flags & (LEIR_DB_MERGE_STRICT | LEIR_DB_MERGE_FAIL_ON_CONFLICT))) {
    st = merge_pass(into, h, s, path, o.flags, false, &got);
    if (st == LEIR_OK) sqlite3_reset(s);
  }
  if (st == LEIR_OK) st = merge_pass(into, h, s, path, o.flags, true, &got);
  sqlite3_finalize(s);
  sqlite3_close(h);
  if (stats) {
    got.size = stats->size;
    memcpy(stats, &got, stats->size);
  }
  return st;
}
