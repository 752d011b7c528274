/* leir ground: which step(s) turn BEFORE into AFTER. */
#include <string.h>

#include "commands.h"

int cmd_ground(int argc, char **argv) {
  tool_args a;
  tool_args_init(&a, "ground", argc, argv);
  tool_sig sig;
  memset(&sig, 0, sizeof sig);
  bool json = false;
  leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
  const char *opt;
  while ((opt = tool_args_next(&a))) {
    int r = tool_sig_option(&sig, &a, opt);
    if (r < 0) return EXIT_USAGE;
    if (r) continue;
    if (strcmp(opt, "--json") == 0) {
      json = true;
    } else if (strncmp(opt, "--strategy", 10) == 0 && (opt[10] == '\0' || opt[10] == '=')) {
      const char *v = tool_args_value(&a, opt);
      if (!v) return EXIT_USAGE;
      size_t idx;
      if (leir_strategy_find(v, &idx) != LEIR_OK) return tool_unknown_strategy("ground");
      co.strategy = (int32_t)idx;
    } else {
      return tool_usage_error("ground", "unknown option %s", opt);
    }
  }
  if (a.npositional != 2)
    return tool_usage_error("ground", "expected two inputs: BEFORE and AFTER (files or -)");
  if (strcmp(a.positional[0], "-") == 0 && strcmp(a.positional[1], "-") == 0)
    return tool_usage_error("ground", "only one input can be standard input");
  int rc;
  leir_program *before = tool_load_program(a.positional[0], &rc);
  if (!before) return rc;
  leir_program *after = tool_load_program(a.positional[1], &rc);
  if (!after) {
    leir_program_free(before);
    return rc;
  }
  rc = tool_sig_apply(&sig, before, tool_label(a.positional[0]));
  if (rc == EXIT_OK) rc = tool_sig_apply(&sig, after, tool_label(a.positional[1]));
  leir_candidates *hits = NULL;
  if (rc == EXIT_OK) {
    leir_status st = leir_ground(&hits, before, after, &co);
    if (st != LEIR_OK) {
      tool_print_error(tool_label(a.positional[0]), 0, leir_error_last());
      rc = tool_exit_for(st);
    }
  }
  if (rc == EXIT_OK) {
    size_t n = leir_candidates_count(hits);
    for (size_t i = 0; i < n; i++) {
      const leir_step *s = leir_candidates_step(hits, i);
      const char *cls = leir_exactness_name(leir_candidates_exactness(hits, i));
      if (json) {
        char *js = NULL;
        leir_step_to_json(s, &js, NULL);
        printf("{\"step\":");
        tool_json_string(stdout, leir_step_text(s), strlen(leir_step_text(s)));
        printf(",\"json\":%s,\"class\":\"%s\"}\n", js ? js : "null", cls);
        leir_free(js);
      } else {
        printf("%s\t%s\n", leir_step_text(s), cls);
      }
    }
    if (n == 0) {
      fprintf(stderr, "%s: no single step of the %s turns it into %s\n",
              tool_label(a.positional[0]),
              co.strategy >= 0 ? "selected strategy" : "implemented strategies",
              tool_label(a.positional[1]));
      rc = EXIT_INVALID;
    }
  }
  leir_candidates_free(hits);
  leir_program_free(before);
  leir_program_free(after);
  return rc;
}
