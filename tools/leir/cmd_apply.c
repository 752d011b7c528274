/* leir apply: apply one step (text or JSON), optionally with its CoT. */
#include <string.h>

#include "batch.h"
#include "commands.h"

typedef struct apply_opts {
  batch_opts b;
  const leir_step *step;
  bool cot, pretty;
} apply_opts;

static int apply_one(const char *label, unsigned line_no, leir_program *p, void *payload) {
  const apply_opts *o = payload;
  unsigned base = line_no ? line_no - 1 : 0;
  leir_program *q = NULL;
  leir_exactness cls = LEIR_EXACT;
  leir_status st = leir_step_apply(&q, p, o->step, &cls);
  char *text = NULL, *cot = NULL;
  if (st == LEIR_OK) st = leir_program_print(q, o->pretty ? LEIR_PRINT_PRETTY : 0, &text, NULL);
  if (st == LEIR_OK && o->cot) st = leir_step_cot(&cot, NULL, p, o->step);
  leir_program_free(q);
  if (st != LEIR_OK) {
    tool_print_error(label, base, leir_error_last());
    leir_free(text);
    /* A strategy this build lists but does not implement: the step is
     * invalid input for this build (1), not an internal error (3). */
    return st == LEIR_ERR_UNSUPPORTED ? EXIT_INVALID : tool_exit_for(st);
  }
  if (o->b.json) {
    printf("{");
    if (o->b.lines) printf("\"line\":%u,", line_no);
    printf("\"step\":");
    tool_json_string(stdout, leir_step_text(o->step), strlen(leir_step_text(o->step)));
    printf(",\"class\":\"%s\",\"result\":", leir_exactness_name(cls));
    tool_json_string(stdout, text, strlen(text));
    if (cot) {
      printf(",\"cot\":");
      tool_json_string(stdout, cot, strlen(cot));
    }
    printf("}\n");
  } else {
    fputs(text, stdout);
    if (!o->pretty) fputc('\n', stdout);
    if (cot) printf("%s\n", cot);
  }
  leir_free(text);
  leir_free(cot);
  return EXIT_OK;
}

int cmd_apply(int argc, char **argv) {
  apply_opts o;
  memset(&o, 0, sizeof o);
  tool_args a;
  tool_args_init(&a, "apply", argc, argv);
  const char *opt;
  while ((opt = tool_args_next(&a))) {
    int r = batch_option(&o.b, &a, opt);
    if (r < 0) return EXIT_USAGE;
    if (r) continue;
    if (strcmp(opt, "--cot") == 0)
      o.cot = true;
    else if (strcmp(opt, "--pretty") == 0)
      o.pretty = true;
    else
      return tool_usage_error("apply", "unknown option %s", opt);
  }
  if (a.npositional != 2)
    return tool_usage_error("apply", "expected a step and one input (a file or -)");
  leir_step *step = NULL;
  leir_status st = leir_step_parse(&step, a.positional[0], strlen(a.positional[0]));
  if (st == LEIR_ERR_NOT_FOUND) return tool_unknown_strategy("apply");
  if (st != LEIR_OK) {
    tool_print_error("<step>", 0, leir_error_last());
    return tool_exit_for(st);
  }
  o.step = step;
  int rc = batch_run(a.positional[1], &o.b, apply_one, NULL, &o);
  leir_step_free(step);
  return rc;
}
