/* leir check: static checks (spec/leir.md §3.6). */
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "commands.h"

static void json_diags(const leir_diagnostics *d, unsigned base) {
  printf("[");
  for (size_t i = 0; i < leir_diagnostics_count(d); i++) {
    const leir_diagnostic *g = leir_diagnostics_get(d, i);
    printf("%s{\"rule\":", i ? "," : "");
    tool_json_string(stdout, g->rule, strlen(g->rule));
    printf(",\"subject\":");
    tool_json_string(stdout, g->subject, strlen(g->subject));
    printf(",\"line\":%u,\"column\":%u,\"message\":", g->line ? base + g->line : 0, g->column);
    tool_json_string(stdout, g->message, strlen(g->message));
    printf("}");
  }
  printf("]");
}

static int check_one(const char *label, unsigned line_no, leir_program *p, void *payload) {
  const batch_opts *o = payload;
  leir_diagnostics *d = NULL;
  leir_status st = leir_program_check(p, NULL, &d);
  unsigned base = line_no ? line_no - 1 : 0;
  if (st == LEIR_ERR_NOMEM || st == LEIR_ERR_ARGUMENT || st == LEIR_ERR_INTERNAL) {
    tool_print_error(label, base, leir_error_last());
    leir_diagnostics_free(d);
    return EXIT_INTERNAL;
  }
  if (o->json) {
    printf("{\"line\":%u,\"valid\":%s,\"diagnostics\":", line_no, st == LEIR_OK ? "true" : "false");
    json_diags(d, base);
    printf("}\n");
  } else {
    for (size_t i = 0; i < leir_diagnostics_count(d); i++)
      tool_print_diagnostic(label, base, leir_diagnostics_get(d, i));
  }
  leir_diagnostics_free(d);
  return st == LEIR_OK ? EXIT_OK : EXIT_INVALID;
}

static void check_error(unsigned line_no, const leir_error *e, void *payload) {
  const batch_opts *o = payload;
  if (!o->json) return;
  printf("{\"line\":%u,\"valid\":false,\"diagnostics\":[{\"rule\":", line_no);
  tool_json_string(stdout, e->rule, strlen(e->rule));
  printf(",\"subject\":\"\",\"line\":%u,\"column\":%u,\"message\":",
         e->line ? (line_no ? line_no - 1 : 0) + e->line : 0, e->column);
  tool_json_string(stdout, e->message, strlen(e->message));
  printf("}]}\n");
}

int cmd_check(int argc, char **argv) {
  batch_opts o;
  memset(&o, 0, sizeof o);
  tool_args a;
  tool_args_init(&a, "check", argc, argv);
  const char *opt;
  while ((opt = tool_args_next(&a))) {
    int r = batch_option(&o, &a, opt);
    if (r < 0) return EXIT_USAGE;
    if (!r) return tool_usage_error("check", "unknown option %s", opt);
  }
  if (a.npositional != 1) return tool_usage_error("check", "expected one input (a file or -)");
  return batch_run(a.positional[0], &o, check_one, check_error, &o);
}
