/* leir dataset build CONFIG.yaml: a Step-TP dataset (docs/dataset.md). */
#define LEIR_EXPERIMENTAL /* the dataset API is in the experimental tier */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "leir/experimental/dataset.h"

static volatile int cancelled;

/* The first SIGINT/SIGTERM asks the build to stop (within the current
 * unit's verification batch; nothing half-written is kept); a second one
 * ends the process at once. */
static void on_signal(int sig) {
  if (cancelled) {
    signal(sig, SIG_DFL);
    raise(sig);
  }
  cancelled = 1;
}

typedef struct bar {
  int tty;
  uint64_t drawn;
} bar;

/* A progress bar with rate and ETA, on standard error when it is a terminal. */
static void progress(const leir_dataset_progress *p, void *payload) {
  bar *b = payload;
  if (!b->tty) return;
  uint64_t built = p->units_done - p->units_resumed;
  uint64_t left = p->units_total - p->units_done;
  double rate = p->elapsed_s > 0 ? (double)p->samples_verified / p->elapsed_s : 0;
  double eta = built ? p->elapsed_s / (double)built * (double)left : 0;
  int width = 24, fill = p->units_total ? (int)(width * p->units_done / p->units_total) : width;
  char line[160];
  int n = snprintf(line, sizeof line, "\r[%.*s%.*s] %llu/%llu units  %llu verified  %.1f/s  ETA %d:%02d ",
                   fill, "########################", width - fill, "                        ",
                   (unsigned long long)p->units_done, (unsigned long long)p->units_total,
                   (unsigned long long)p->samples_verified, rate, (int)(eta / 60), (int)eta % 60);
  if (n > 0) fwrite(line, 1, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1, stderr);
  b->drawn = 1;
}

/* The object (or number) after "key": in the summary, as written. */
static void print_field(const char *sum, const char *label, const char *key) {
  const char *p = strstr(sum, key);
  if (!p) return;
  p += strlen(key);
  const char *e = p;
  if (*p == '{') {
    int depth = 0;
    do {
      depth += *e == '{';
      depth -= *e == '}';
      e++;
    } while (*e && depth > 0);
  } else {
    while (*e && *e != ',' && *e != '}') e++;
  }
  fprintf(stderr, "  %-22s %.*s\n", label, (int)(e - p), p);
}

/* What was built and what was rejected, in a few lines; summary.json has it all. */
static void print_summary(const char *out, const char *sum) {
  fprintf(stderr, "leir dataset: wrote %s (train.jsonl, eval.jsonl, validation.jsonl, archive.jsonl, "
                  "rejections.jsonl, summary.json, README.md)\n", out);
  print_field(sum, "units", "\"units\":");
  print_field(sum, "states", "\"states\":");
  print_field(sum, "candidates verified", "\"verified\":");
  print_field(sum, "samples kept", "\"kept_samples\":");
  print_field(sum, "rejected by stage", "\"by_stage\":");
  print_field(sum, "rejected by verdict", "\"by_verdict\":");
  print_field(sum, "filtered", "\"filtered\":");
  print_field(sum, "records", "\"records\":");
  print_field(sum, "split", "\"split\":");
  print_field(sum, "leakage check", "\"leakage\":");
}

static int parse_shard(const char *s, uint32_t *k, uint32_t *n) {
  char *end;
  unsigned long a = strtoul(s, &end, 10);
  if (end == s || *end != '/') return 0;
  const char *t = end + 1;
  unsigned long b = strtoul(t, &end, 10);
  if (end == t || *end || b == 0 || a >= b || b > 1000000) return 0;
  *k = (uint32_t)a;
  *n = (uint32_t)b;
  return 1;
}

int cmd_dataset(int argc, char **argv) {
  tool_args a;
  tool_args_init(&a, "dataset", argc, argv);
  const char *out = NULL, *wdir = NULL, *opt;
  bool json = false;
  leir_dataset_options o;
  leir_dataset_options_init(&o, sizeof o);
  while ((opt = tool_args_next(&a))) {
    if (!strcmp(opt, "--json")) {
      json = true;
    } else if (!strcmp(opt, "--out") || !strncmp(opt, "--out=", 6) || !strcmp(opt, "-o")) {
      if (!(out = tool_args_value(&a, opt[1] == 'o' ? "-o" : "--out"))) return EXIT_USAGE;
    } else if (!strcmp(opt, "--shard") || !strncmp(opt, "--shard=", 8)) {
      const char *v = tool_args_value(&a, "--shard");
      if (!v) return EXIT_USAGE;
      if (!parse_shard(v, &o.shard_index, &o.shard_count))
        return tool_usage_error("dataset", "--shard takes K/N with 0 <= K < N: %s", v);
    } else if (!strcmp(opt, "--workloads-dir") || !strncmp(opt, "--workloads-dir=", 16)) {
      if (!(wdir = tool_args_value(&a, "--workloads-dir"))) return EXIT_USAGE;
    } else {
      return tool_usage_error("dataset", "unknown option %s", opt);
    }
  }
  if (a.npositional != 2 || strcmp(a.positional[0], "build"))
    return tool_usage_error("dataset", "usage: leir dataset build CONFIG.yaml [--out DIR] [--shard K/N]");
  const char *config = a.positional[1];
  size_t len = 0;
  char *text = tool_read_all(config, &len);
  if (!text) return EXIT_INVALID;
  /* relative paths in the config are relative to its directory; the default
   * output directory is the config's path without .yaml */
  char *base = strdup(config), *dflt = NULL;
  char *slash = base ? strrchr(base, '/') : NULL;
  if (base) {
    if (slash) *slash = '\0';
    else strcpy(base, ".");
  }
  if (!out) {
    size_t n = strlen(config);
    dflt = malloc(n + 9);
    if (dflt) {
      strcpy(dflt, config);
      if (n > 5 && !strcmp(dflt + n - 5, ".yaml")) dflt[n - 5] = '\0';
      else if (n > 4 && !strcmp(dflt + n - 4, ".yml")) dflt[n - 4] = '\0';
      else strcat(dflt, ".dataset");
    }
    out = dflt;
  }
  bar b = {isatty(2), 0};
  o.progress = progress;
  o.payload = &b;
  o.cancel = &cancelled;
  o.workloads_dir = wdir;
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  leir_dataset *ds = NULL;
  leir_status st = leir_dataset_open(&ds, text, len, base, out, &o);
  if (st == LEIR_OK) st = leir_dataset_run(ds);
  if (b.drawn) fputc('\n', stderr);
  int rc = EXIT_OK;
  if (st != LEIR_OK) {
    const leir_error *e = leir_error_last();
    tool_print_error(e->subject[0] ? e->subject : config, 0, e);
    rc = st == LEIR_ERR_CANCELLED ? EXIT_INVALID : tool_exit_for(st); /* 1: interrupted */
  } else if (!leir_dataset_complete(ds)) {
    uint64_t total, done;
    leir_dataset_units(ds, &total, &done);
    fprintf(stderr, "leir dataset: shard %u/%u done; %llu of %llu units finished, the outputs are "
                    "written when every shard is done\n",
            o.shard_index, o.shard_count, (unsigned long long)done, (unsigned long long)total);
    if (json) printf("{\"complete\":false,\"units\":%llu,\"done\":%llu}\n", (unsigned long long)total,
                     (unsigned long long)done);
  } else {
    char *sum = NULL;
    if (leir_dataset_summary_json(ds, &sum, NULL) == LEIR_OK) {
      if (json) fputs(sum, stdout);
      else print_summary(out, sum);
    }
    leir_free(sum);
  }
  leir_dataset_free(ds);
  free(text);
  free(base);
  free(dflt);
  return rc;
}
