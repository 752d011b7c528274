/* leir fmt: canonical (or pretty, or program-file) text. */
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "commands.h"

typedef struct fmt_opts {
  batch_opts b;
  bool pretty;
  bool yaml;
} fmt_opts;

static int fmt_one(const char *label, unsigned line_no, leir_program *p, void *payload) {
  const fmt_opts *o = payload;
  char *text = NULL;
  size_t len = 0;
  leir_status st;
  if (o->yaml) {
    st = leir_program_signature_count(p) ? LEIR_OK : leir_program_infer_signature(p);
    if (st == LEIR_OK) st = leir_program_to_yaml(p, &text, &len);
  } else {
    st = leir_program_print(p, o->pretty ? LEIR_PRINT_PRETTY : 0, &text, &len);
  }
  if (st != LEIR_OK) {
    if (o->b.json) {
      printf("{\"line\":%u,\"error\":", line_no);
      tool_json_error(stdout, leir_error_last(), line_no ? line_no - 1 : 0);
      printf("}\n");
    } else {
      tool_print_error(label, line_no ? line_no - 1 : 0, leir_error_last());
    }
    return tool_exit_for(st);
  }
  if (o->b.json) {
    printf("{\"line\":%u,\"leir\":", line_no);
    tool_json_string(stdout, text, len);
    printf("}\n");
  } else {
    fwrite(text, 1, len, stdout);
    if (!len || text[len - 1] != '\n') putchar('\n');
  }
  leir_free(text);
  return EXIT_OK;
}

static void fmt_error(unsigned line_no, const leir_error *e, void *payload) {
  const fmt_opts *o = payload;
  if (!o->b.json) return;
  printf("{\"line\":%u,\"error\":", line_no);
  tool_json_error(stdout, e, line_no ? line_no - 1 : 0);
  printf("}\n");
}

int cmd_fmt(int argc, char **argv) {
  fmt_opts o;
  memset(&o, 0, sizeof o);
  tool_args a;
  tool_args_init(&a, "fmt", argc, argv);
  const char *opt;
  while ((opt = tool_args_next(&a))) {
    int r = batch_option(&o.b, &a, opt);
    if (r < 0) return EXIT_USAGE;
    if (r) continue;
    if (strcmp(opt, "--pretty") == 0)
      o.pretty = true;
    else if (strcmp(opt, "--yaml") == 0)
      o.yaml = true;
    else
      return tool_usage_error("fmt", "unknown option %s", opt);
  }
  if (a.npositional != 1) return tool_usage_error("fmt", "expected one input (a file or -)");
  if (o.pretty && o.yaml) return tool_usage_error("fmt", "--pretty and --yaml exclude each other");
  return batch_run(a.positional[0], &o.b, fmt_one, fmt_error, &o);
}
