/* Verified samples per second of `leir dataset build` over the small-shape
 * corpus (every traced workload at its small shape): one cold run (an empty
 * kernel cache and an empty output directory) and one warm run (the same
 * kernel cache, a new output directory). Numbers go in the report, not in
 * tests.
 *   bench/dataset [--backend auto|interp|cpu] [--walks N] [--depth N]
 *                 [--per-strategy N] [--level 1|2] [--dtype f64]
 *                 [--programs FILE.jsonl [--limit N]]
 * The sources are the catalogue's workloads at their small shape
 * (LEIR_WORKLOADS_DIR names the catalogue), or with --programs the first N
 * programs of a JSONL file such as tests/data/sources-small.jsonl (the
 * conformance corpus at small shapes). */
#define LEIR_EXPERIMENTAL
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "leir/experimental/dataset.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int run(const char *config, const char *out, const char *label) {
  double t0 = now();
  leir_dataset *ds = NULL;
  leir_status st = leir_dataset_open(&ds, config, strlen(config), NULL, out, NULL);
  if (st == LEIR_OK) st = leir_dataset_run(ds);
  double dt = now() - t0;
  if (st != LEIR_OK) {
    fprintf(stderr, "dataset: %s\n", leir_error_last()->message);
    leir_dataset_free(ds);
    return 1;
  }
  char *sum = NULL;
  leir_dataset_summary_json(ds, &sum, NULL);
  const char *v = sum ? strstr(sum, "\"verified\":") : NULL;
  const char *u = sum ? strstr(sum, "\"units\":") : NULL;
  const char *k = sum ? strstr(sum, "\"kept_samples\":") : NULL;
  long long verified = v ? atoll(v + 11) : 0, units = u ? atoll(u + 8) : 0, kept = k ? atoll(k + 15) : 0;
  printf("%-5s %4lld units %7lld verified %7lld kept %8.2f s %8.1f verified/s\n", label, units, verified,
         kept, dt, dt > 0 ? (double)verified / dt : 0.0);
  leir_free(sum);
  leir_dataset_free(ds);
  return 0;
}

int main(int argc, char **argv) {
  const char *backend = "auto", *level = NULL, *dtype = NULL, *programs = NULL;
  int walks = 0, depth = 0, per_strategy = 0, limit = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--backend")) backend = argv[i + 1];
    else if (!strcmp(argv[i], "--walks")) walks = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--depth")) depth = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--per-strategy")) per_strategy = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--level")) level = argv[i + 1];
    else if (!strcmp(argv[i], "--dtype")) dtype = argv[i + 1];
    else if (!strcmp(argv[i], "--programs")) programs = argv[i + 1];
    else if (!strcmp(argv[i], "--limit")) limit = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  char root[] = "/tmp/leir-bench-dataset-XXXXXX";
  if (!mkdtemp(root)) return 1;
  char config[1024], plist[64];
  if (programs) {
    /* the first `limit` lines of the file */
    snprintf(plist, sizeof plist, "%s/programs.jsonl", root);
    FILE *in = fopen(programs, "r"), *out = fopen(plist, "w");
    if (!in || !out) {
      fprintf(stderr, "cannot read %s\n", programs);
      return 1;
    }
    char line[1 << 16];
    for (int n = 0; (limit <= 0 || n < limit) && fgets(line, sizeof line, in); n++) fputs(line, out);
    fclose(in);
    fclose(out);
    snprintf(config, sizeof config,
             "name: bench\nsources:\n  programs: %s\nwalks: {count: %d, depth: %d}\n"
             "sampling: {per_strategy: %d}\nverify: {backend: %s}\n",
             plist, walks, depth, per_strategy, backend);
  } else
  snprintf(config, sizeof config,
           "name: bench\nsources:\n  workloads: %s\n  shapes: [small]\n%s%s%s"
           "walks: {count: %d, depth: %d}\nsampling: {per_strategy: %d}\nverify: {backend: %s}\n",
           level ? (level[0] == '1' ? "level1" : "level2") : "all", dtype ? "  dtypes: [" : "",
           dtype ? dtype : "", dtype ? "]\n" : "", walks, depth, per_strategy, backend);
  char cache[64], cold[64], warm[64];
  snprintf(cache, sizeof cache, "%s/cache", root);
  snprintf(cold, sizeof cold, "%s/cold", root);
  snprintf(warm, sizeof warm, "%s/warm", root);
  setenv("LEIR_CACHE_DIR", cache, 1);
  printf("backend %s, walks %d x depth %d, per_strategy %d, %ld CPUs online\n", backend, walks, depth,
         per_strategy, sysconf(_SC_NPROCESSORS_ONLN));
  int rc = run(config, cold, "cold") || run(config, warm, "warm");
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", root);
  if (system(cmd) != 0) rc = 1;
  return rc;
}
