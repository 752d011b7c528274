/* leir explain: why a strategy does or does not apply. */
#include <string.h>

#include "batch.h"
#include "commands.h"

typedef struct explain_opts {
  batch_opts b;
  size_t strategy;
} explain_opts;

static int explain_one(const char *label, unsigned line_no, leir_program *p, void *payload) {
  const explain_opts *o = payload;
  leir_explanation *e = NULL;
  leir_status st = leir_strategy_explain(&e, p, o->strategy);
  if (st != LEIR_OK) {
    tool_print_error(label, line_no ? line_no - 1 : 0, leir_error_last());
    return tool_exit_for(st);
  }
  if (o->b.json) {
    leir_strategy_info info = *leir_strategy_info_at(o->strategy);
    printf("{");
    if (o->b.lines) printf("\"line\":%u,", line_no);
    printf("\"strategy\":\"%s\",\"applies\":%s,\"candidates\":%zu,\"reasons\":[", info.name,
           leir_explanation_candidates(e) ? "true" : "false", leir_explanation_candidates(e));
    for (size_t i = 0; i < leir_explanation_count(e); i++) {
      const leir_reason *r = leir_explanation_get(e, i);
      printf("%s{\"applies\":%s,\"site\":", i ? "," : "", r->applies ? "true" : "false");
      tool_json_string(stdout, r->site, strlen(r->site));
      printf(",\"rule\":");
      tool_json_string(stdout, r->rule, strlen(r->rule));
      printf(",\"message\":");
      tool_json_string(stdout, r->message, strlen(r->message));
      printf("}");
    }
    printf("]}\n");
  } else {
    char *text = NULL;
    if (leir_explanation_text(e, &text, NULL) != LEIR_OK) {
      leir_explanation_free(e);
      return EXIT_INTERNAL;
    }
    fputs(text, stdout);
    leir_free(text);
  }
  int rc = leir_explanation_candidates(e) ? EXIT_OK : EXIT_INVALID;
  leir_explanation_free(e);
  return rc;
}

int cmd_explain(int argc, char **argv) {
  explain_opts o;
  memset(&o, 0, sizeof o);
  tool_args a;
  tool_args_init(&a, "explain", argc, argv);
  const char *opt;
  while ((opt = tool_args_next(&a))) {
    int r = batch_option(&o.b, &a, opt);
    if (r < 0) return EXIT_USAGE;
    if (!r) return tool_usage_error("explain", "unknown option %s", opt);
  }
  if (a.npositional != 2)
    return tool_usage_error("explain", "expected a strategy name and one input (a file or -)");
  if (leir_strategy_find(a.positional[0], &o.strategy) != LEIR_OK)
    return tool_unknown_strategy("explain");
  return batch_run(a.positional[1], &o.b, explain_one, NULL, &o);
}
