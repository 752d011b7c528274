/* leir db: the search's measurement database (export as JSONL, count,
 * integrity check). */
#include <stdlib.h>
#include <string.h>

#define LEIR_EXPERIMENTAL
#include "leir/experimental/search.h"

#include "cmd_benchmark.h"
#include "commands.h"

static int print_line(void *payload, const char *line, size_t len) {
  (void)payload;
  fwrite(line, 1, len, stdout);
  fputc('\n', stdout);
  return ferror(stdout) != 0;
}

int cmd_db(int argc, char **argv) {
  /* leir db merge A.db ... --into OUT.db: tools/leir/cmd_benchmark_db.c */
  if (argc > 1 && strcmp(argv[1], "merge") == 0) return cmd_db_merge(argc - 1, argv + 1);
  tool_args a;
  tool_args_init(&a, "db", argc, argv);
  const char *opt, *path = NULL;
  while ((opt = tool_args_next(&a))) {
    if (strncmp(opt, "--db", 4) == 0 && (opt[4] == 0 || opt[4] == '=')) {
      if (!(path = tool_args_value(&a, opt))) return EXIT_USAGE;
    } else {
      return tool_usage_error("db", "unknown option %s", opt);
    }
  }
  if (a.npositional != 1) return tool_usage_error("db", "expected export, count or check");
  const char *what = a.positional[0];
  if (strcmp(what, "export") && strcmp(what, "count") && strcmp(what, "check"))
    return tool_usage_error("db", "unknown subcommand '%s' (export, count, check)", what);
  char buf[4096];
  if (!path) {
    const char *e = getenv("LEIR_DB"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    if (e && *e) path = e;
    else if (x && *x) snprintf(buf, sizeof buf, "%s/leir/measurements.db", x), path = buf;
    else if (h && *h) snprintf(buf, sizeof buf, "%s/.cache/leir/measurements.db", h), path = buf;
    else return tool_usage_error("db", "no database: give --db FILE or set LEIR_DB");
  }
  leir_db *db = NULL;
  leir_status st = leir_db_open(&db, path);
  if (st == LEIR_OK) {
    if (strcmp(what, "export") == 0) {
      st = leir_db_export(db, print_line, NULL);
    } else if (strcmp(what, "count") == 0) {
      uint64_t n = 0;
      st = leir_db_count(db, &n);
      if (st == LEIR_OK) printf("%llu\n", (unsigned long long)n);
    } else {
      st = leir_db_check(db);
      if (st == LEIR_OK) printf("ok\n");
    }
  }
  leir_db_free(db);
  if (st != LEIR_OK) {
    fprintf(stderr, "leir db: error: %s\n", leir_error_last()->message);
    return tool_exit_for(st);
  }
  return EXIT_OK;
}
