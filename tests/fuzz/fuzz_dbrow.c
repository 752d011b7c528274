/*
 * libFuzzer target for measurement database rows (search/db.c): a row as
 * another program or a hand edit could leave it. The input is one line per
 * column after the key (verdict, ord, ratio, ratio_lo, ratio_hi, median_s,
 * q1_s, q3_s, baseline_median_s, rounds, step, program, message, created),
 * each a type letter and a value: n (NULL), i (integer), r (real), t (text),
 * b (blob); missing lines keep a valid row's value. The row is stored with
 * SQLite directly, then read with leir_db_get: it is trusted (a known
 * verdict and order, every number finite, not negative and in bounds) or
 * not found with rule db.invalid-row, and leir_db_check agrees.
 */
#define LEIR_EXPERIMENTAL
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leir/experimental/search.h"
#include "leir/leir.h"

#define REQUIRE(cond) \
  do {                \
    if (!(cond)) abort(); \
  } while (0)

static char path[64];

static const leir_db_row key = {.size = sizeof(leir_db_row), .program_hash = 7, .baseline_hash = 8,
                                .root_hash = 9, .backend = "cpu", .machine = "m", .protocol = "p",
                                .verdict = LEIR_VERDICT_EQUAL, .order = LEIR_ORDER_FASTER,
                                .ratio = 1.5, .ratio_lo = 1.25, .ratio_hi = 1.75, .median_s = 0.5,
                                .q1_s = 0.25, .q3_s = 0.75, .baseline_median_s = 0.75, .rounds = 5,
                                .step = "s", .program = "p", .message = "m"};

static void remove_db(void) {
  char p[80];
  unlink(path);
  snprintf(p, sizeof p, "%s-wal", path);
  unlink(p);
  snprintf(p, sizeof p, "%s-shm", path);
  unlink(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!path[0]) {
    /* in memory where the system has it: each input writes the file twice */
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, sizeof path, "%s/leir-fuzz-dbrow-%ld.db", dir, (long)getpid());
    atexit(remove_db);
  }
  remove_db();
  leir_db *db = NULL;
  REQUIRE(leir_db_open(&db, path) == LEIR_OK);
  REQUIRE(leir_db_put(db, &key) == LEIR_OK);
  leir_db_free(db);
  static const char *const cols[] = {"verdict", "ord", "ratio", "ratio_lo", "ratio_hi",
                                     "median_s", "q1_s", "q3_s", "baseline_median_s", "rounds",
                                     "step", "program", "message", "created"};
  sqlite3 *h = NULL;
  REQUIRE(sqlite3_open(path, &h) == SQLITE_OK);
  const char *p = (const char *)data, *end = p + size;
  for (size_t c = 0; c < sizeof cols / sizeof *cols && p < end; c++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) nl = end;
    char type = *p;
    size_t n = (size_t)(nl - p) - 1 + (p == nl);
    const char *v = p + (p < nl);
    char *val = malloc(n + 1);
    memcpy(val, v, n);
    val[n] = '\0';
    char q[96];
    snprintf(q, sizeof q, "UPDATE measurements SET %s=?1", cols[c]);
    sqlite3_stmt *s = NULL;
    REQUIRE(sqlite3_prepare_v2(h, q, -1, &s, NULL) == SQLITE_OK);
    if (type == 'n') sqlite3_bind_null(s, 1);
    else if (type == 'i') sqlite3_bind_int64(s, 1, strtoll(val, NULL, 10));
    else if (type == 'r') sqlite3_bind_double(s, 1, strtod(val, NULL));
    else if (type == 'b') sqlite3_bind_blob(s, 1, val, (int)n, SQLITE_TRANSIENT);
    else sqlite3_bind_text(s, 1, val, (int)n, SQLITE_TRANSIENT);
    sqlite3_step(s); /* a NOT NULL column refuses NULL: the row keeps its value */
    sqlite3_finalize(s);
    free(val);
    p = nl + (nl < end);
  }
  sqlite3_close(h);
  REQUIRE(leir_db_open(&db, path) == LEIR_OK);
  leir_db_row got;
  memset(&got, 0, sizeof got);
  got.size = sizeof got;
  leir_status st = leir_db_get(db, &key, &got);
  leir_status ck = leir_db_check(db);
  if (st == LEIR_OK) {
    REQUIRE(ck == LEIR_OK);
    REQUIRE((int)got.verdict >= 0 && got.verdict < LEIR_VERDICT_COUNT);
    REQUIRE((int)got.order >= LEIR_ORDER_UNDECIDED && got.order <= LEIR_ORDER_SAME);
    const double reals[] = {got.ratio, got.ratio_lo, got.ratio_hi, got.median_s, got.q1_s,
                            got.q3_s, got.baseline_median_s};
    for (int i = 0; i < 7; i++) REQUIRE(isfinite(reals[i]) && reals[i] >= 0);
    REQUIRE(got.step && got.program && got.message);
  } else {
    REQUIRE(st == LEIR_ERR_NOT_FOUND);
    REQUIRE(!strcmp(leir_error_last()->rule, "db.invalid-row"));
    REQUIRE(ck == LEIR_ERR_IO && !strcmp(leir_error_last()->rule, "db.invalid-row"));
  }
  leir_db_free(db);
  return 0;
}
