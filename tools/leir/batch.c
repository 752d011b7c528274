#include "batch.h"

#include <stdlib.h>
#include <string.h>

typedef struct batch_ctx {
  const batch_opts *o;
  batch_fn fn;
  batch_error_fn on_error;
  void *payload;
} batch_ctx;

/* A program that does not parse: the default diagnostic, or in JSON mode
 * the command's own error object (on_error) or the default one. */
static void parse_failed(const batch_ctx *c, const char *label, unsigned line_no, leir_status st) {
  (void)st;
  const leir_error *e = leir_error_last();
  if (c->o->json && c->on_error) {
    c->on_error(line_no, e, c->payload);
    tool_json_error_printed = true;
    return;
  }
  tool_print_error(label, line_no ? line_no - 1 : 0, e);
  if (c->on_error) c->on_error(line_no, e, c->payload);
}

static int one_line(const char *label, unsigned line_no, const char *text, size_t len,
                    void *payload) {
  batch_ctx *c = payload;
  leir_parse_options po = LEIR_PARSE_OPTIONS_INIT;
  if (!c->o->strict) po.flags |= LEIR_PARSE_LENIENT;
  leir_program *p = NULL;
  tool_json_line = line_no;
  leir_status st = leir_program_parse(&p, text, len, &po);
  if (st != LEIR_OK) {
    parse_failed(c, label, line_no, st);
    return tool_exit_for(st);
  }
  int rc = tool_sig_apply(&c->o->sig, p, label);
  if (rc == EXIT_OK) rc = c->fn(label, line_no, p, c->payload);
  leir_program_free(p);
  return rc;
}

int batch_run(const char *path, const batch_opts *o, batch_fn fn, batch_error_fn on_error,
              void *payload) {
  batch_ctx c = {o, fn, on_error, payload};
  tool_json_line = 0;
  if (o->lines) return tool_for_each_line(path, one_line, &c);
  size_t len;
  char *text = tool_read_all(path, &len);
  if (!text) return EXIT_INVALID;
  leir_parse_options po = LEIR_PARSE_OPTIONS_INIT;
  if (!o->strict) po.flags |= LEIR_PARSE_LENIENT;
  size_t n = strlen(path);
  bool yaml = (n >= 5 && strcmp(path + n - 5, ".yaml") == 0) ||
              (n >= 4 && strcmp(path + n - 4, ".yml") == 0);
  leir_program *p = NULL;
  leir_status st = yaml ? leir_program_parse_yaml(&p, text, len, &po)
                        : leir_program_parse(&p, text, len, &po);
  free(text);
  if (st != LEIR_OK) {
    parse_failed(&c, tool_label(path), 0, st);
    return tool_exit_for(st);
  }
  int rc = tool_sig_apply(&o->sig, p, tool_label(path));
  if (rc == EXIT_OK) rc = fn(tool_label(path), 0, p, payload);
  leir_program_free(p);
  return rc;
}

int batch_option(batch_opts *o, tool_args *a, const char *opt) {
  if (strcmp(opt, "--lines") == 0) {
    o->lines = true;
    return 1;
  }
  if (strcmp(opt, "--strict") == 0) {
    o->strict = true;
    return 1;
  }
  if (strcmp(opt, "--json") == 0) {
    o->json = true;
    return 1;
  }
  return tool_sig_option(&o->sig, a, opt);
}
