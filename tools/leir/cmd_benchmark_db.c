/* leir db merge A.db B.db ... --into OUT.db: the measurement databases of
 * benchmark workers merged by key (leir_db_merge). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define LEIR_EXPERIMENTAL
#include "leir/experimental/search.h"

#include "cmd_benchmark.h"

static bool same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cmd_db_merge(int argc, char **argv) {
  const char *into = NULL;
  leir_db_merge_options mo = LEIR_DB_MERGE_OPTIONS_INIT;
  bool json = false, quiet = false;
  const char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
  if (!inputs) return EXIT_INTERNAL;
  size_t n = 0;
  bool dashdash = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (dashdash || a[0] != '-' || strcmp(a, "-") == 0) {
      inputs[n++] = a;
    } else if (strcmp(a, "--") == 0) {
      dashdash = true;
    } else if (strcmp(a, "--into") == 0 || strncmp(a, "--into=", 7) == 0) {
      if (a[6] == '=') into = a + 7;
      else if (i + 1 < argc) into = argv[++i];
      else {
        free(inputs);
        return tool_usage_error("db merge", "--into needs a value");
      }
    } else if (strcmp(a, "--strict") == 0) {
      mo.flags |= LEIR_DB_MERGE_STRICT;
    } else if (strcmp(a, "--fail-on-conflict") == 0) {
      mo.flags |= LEIR_DB_MERGE_FAIL_ON_CONFLICT;
    } else if (strcmp(a, "--json") == 0) {
      json = true;
    } else if (strcmp(a, "--quiet") == 0) {
      quiet = true;
    } else {
      free(inputs);
      return tool_usage_error("db merge", "unknown option %s", a);
    }
  }
  if (!into || !*into) {
    free(inputs);
    return tool_usage_error("db merge", "give the merged database with --into OUT.db");
  }
  if (n == 0) {
    free(inputs);
    return tool_usage_error("db merge", "expected the databases to merge (A.db B.db ...)");
  }
  leir_db *db = NULL;
  if (leir_db_open(&db, into) != LEIR_OK) {
    fprintf(stderr, "leir db merge: error: %s\n", leir_error_last()->message);
    free(inputs);
    return EXIT_INVALID;
  }
  int rc = EXIT_OK;
  leir_db_merge_stats total = {.size = sizeof total};
  for (size_t i = 0; i < n; i++) {
    if (same_file(inputs[i], into)) continue; /* a shell glob that caught OUT.db */
    struct stat sb;
    if (stat(inputs[i], &sb) != 0 || !S_ISREG(sb.st_mode)) {
      fprintf(stderr, "leir db merge: error: %s: not a file\n", inputs[i]);
      rc = EXIT_INVALID;
      continue;
    }
    leir_db_merge_stats s = {.size = sizeof s};
    leir_status st = leir_db_merge(db, inputs[i], &mo, &s);
    if (st != LEIR_OK) {
      fprintf(stderr, "leir db merge: error: %s\n", leir_error_last()->message);
      rc = st == LEIR_ERR_NOMEM ? EXIT_INTERNAL : EXIT_INVALID;
      continue;
    }
    total.rows += s.rows;
    total.added += s.added;
    total.duplicates += s.duplicates;
    total.conflicts += s.conflicts;
    total.replaced += s.replaced;
    total.invalid += s.invalid;
    if (json) {
      printf("{\"file\":");
      tool_json_string(stdout, inputs[i], strlen(inputs[i]));
      printf(",\"rows\":%llu,\"added\":%llu,\"duplicates\":%llu,\"conflicts\":%llu,"
             "\"replaced\":%llu,\"invalid\":%llu}\n",
             (unsigned long long)s.rows, (unsigned long long)s.added,
             (unsigned long long)s.duplicates, (unsigned long long)s.conflicts,
             (unsigned long long)s.replaced, (unsigned long long)s.invalid);
    } else if (!quiet) {
      printf("%s: %llu rows: %llu added, %llu duplicates, %llu conflicts (%llu replaced by the "
             "earlier measurement), %llu invalid (skipped)\n",
             inputs[i], (unsigned long long)s.rows, (unsigned long long)s.added,
             (unsigned long long)s.duplicates, (unsigned long long)s.conflicts,
             (unsigned long long)s.replaced, (unsigned long long)s.invalid);
    }
  }
  uint64_t count = 0;
  leir_db_count(db, &count);
  if (json) {
    printf("{\"into\":");
    tool_json_string(stdout, into, strlen(into));
    printf(",\"rows\":%llu,\"added\":%llu,\"duplicates\":%llu,\"conflicts\":%llu,"
           "\"replaced\":%llu,\"invalid\":%llu,\"count\":%llu}\n",
           (unsigned long long)total.rows, (unsigned long long)total.added,
           (unsigned long long)total.duplicates, (unsigned long long)total.conflicts,
           (unsigned long long)total.replaced, (unsigned long long)total.invalid,
           (unsigned long long)count);
  } else if (!quiet)
    printf("%s: %llu measurements\n", into, (unsigned long long)count);
  leir_db_free(db);
  free(inputs);
  return rc;
}
