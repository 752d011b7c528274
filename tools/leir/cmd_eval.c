/* leir eval ANSWERS.jsonl --dataset DIR: scores a model's answers; with
 * --endpoint or --llm-command it first asks the model for the answers the
 * file lacks (cmd_eval_drive.c). */
#include "cmd_eval_drive.h" /* the experimental dataset and llm APIs */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

int cmd_eval(int argc, char **argv) {
  tool_args a;
  tool_args_init(&a, "eval", argc, argv);
  const char *dir = NULL, *opt, *json_out = NULL;
  bool json = false;
  uint32_t k[16];
  leir_eval_options o;
  leir_eval_options_init(&o, sizeof o);
  eval_drive_args drive;
  eval_drive_args_init(&drive);
  while ((opt = tool_args_next(&a))) {
    int taken = eval_drive_option(&drive, &a, opt);
    if (taken < 0) return EXIT_USAGE;
    if (taken) continue;
    if (!strcmp(opt, "--json")) {
      json = true;
    } else if (!strcmp(opt, "--dataset") || !strncmp(opt, "--dataset=", 10)) {
      if (!(dir = tool_args_value(&a, "--dataset"))) return EXIT_USAGE;
    } else if (!strcmp(opt, "--json-out") || !strncmp(opt, "--json-out=", 11)) {
      if (!(json_out = tool_args_value(&a, "--json-out"))) return EXIT_USAGE;
    } else if (!strcmp(opt, "--backend") || !strncmp(opt, "--backend=", 10)) {
      if (!(o.backend = tool_args_value(&a, "--backend"))) return EXIT_USAGE;
    } else if (!strcmp(opt, "--seed") || !strncmp(opt, "--seed=", 7)) {
      const char *v = tool_args_value(&a, "--seed");
      char *end;
      if (!v) return EXIT_USAGE;
      o.seed = strtoull(v, &end, 10);
      if (end == v || *end) return tool_usage_error("eval", "--seed takes an integer: %s", v);
    } else if (!strcmp(opt, "--k") || !strncmp(opt, "--k=", 4)) {
      /* pass@k for these k (a comma-separated list) */
      const char *v = tool_args_value(&a, "--k");
      if (!v) return EXIT_USAGE;
      o.n_k = 0;
      for (const char *p = v;;) {
        char *end;
        unsigned long x = strtoul(p, &end, 10);
        if (end == p || x < 1 || x > 1000000 || o.n_k == 16 || (*end && *end != ','))
          return tool_usage_error("eval", "--k takes up to 16 integers 1..1000000, comma-separated: %s", v);
        k[o.n_k++] = (uint32_t)x;
        if (!*end) break;
        p = end + 1;
      }
      o.k = k;
    } else {
      return tool_usage_error("eval", "unknown option %s", opt);
    }
  }
  if (a.npositional != 1 || !dir)
    return tool_usage_error("eval", "usage: leir eval ANSWERS.jsonl --dataset DIR [--json] [--k K,...] "
                                    "[--endpoint URL | --llm-command CMD ...]");
  if (eval_drive_wanted(&drive)) {
    int rc = eval_drive_run(&drive, dir, a.positional[0]);
    if (rc != EXIT_OK || drive.no_score) return rc;
  } else if (eval_drive_check_unused(&drive) != EXIT_OK) {
    return EXIT_USAGE;
  }
  size_t len = 0;
  char *text = tool_read_all(a.positional[0], &len);
  if (!text) return EXIT_INVALID;
  leir_eval *ev = NULL;
  leir_status st = leir_eval_run(&ev, text, len, dir, &o);
  free(text);
  if (st != LEIR_OK) {
    const leir_error *e = leir_error_last();
    tool_print_error(e->subject[0] ? e->subject : dir, 0, e);
    return tool_exit_for(st);
  }
  char *out = NULL;
  int rc = EXIT_OK;
  if (json_out) {
    if (leir_eval_report_json(ev, &out, NULL) == LEIR_OK) {
      FILE *f = fopen(json_out, "w");
      if (!f || fputs(out, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "leir eval: cannot write %s\n", json_out);
        rc = EXIT_INTERNAL;
      }
    }
    leir_free(out);
    out = NULL;
  }
  st = json ? leir_eval_report_json(ev, &out, NULL) : leir_eval_report_table(ev, &out, NULL);
  if (st == LEIR_OK) fputs(out, stdout);
  else rc = tool_exit_for(st);
  leir_free(out);
  leir_eval_free(ev);
  return rc;
}
