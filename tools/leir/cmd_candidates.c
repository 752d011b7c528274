/* leir candidates: every applicable step with its class and result. */
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "commands.h"

typedef struct cand_opts {
  batch_opts b;
  leir_candidates_options co;
  bool no_result;
} cand_opts;

static int cand_one(const char *label, unsigned line_no, leir_program *p, void *payload) {
  const cand_opts *o = payload;
  leir_candidates *c = NULL;
  leir_status st = leir_candidates_list(&c, p, &o->co);
  if (st != LEIR_OK) {
    tool_print_error(label, line_no ? line_no - 1 : 0, leir_error_last());
    return tool_exit_for(st);
  }
  int rc = EXIT_OK;
  for (size_t i = 0; i < leir_candidates_count(c); i++) {
    const leir_step *s = leir_candidates_step(c, i);
    const char *cls = leir_exactness_name(leir_candidates_exactness(c, i));
    char *result = NULL;
    if (!o->no_result) {
      leir_program *q = NULL;
      st = leir_candidates_apply(&q, c, i);
      if (st == LEIR_OK) st = leir_program_print(q, 0, &result, NULL);
      leir_program_free(q);
      if (st != LEIR_OK) {
        tool_print_error(label, 0, leir_error_last());
        rc = EXIT_INTERNAL;
        break;
      }
    }
    if (o->b.json) {
      char *js = NULL;
      if (leir_step_to_json(s, &js, NULL) != LEIR_OK) {
        leir_free(result);
        rc = EXIT_INTERNAL;
        break;
      }
      printf("{");
      if (o->b.lines) printf("\"line\":%u,", line_no);
      printf("\"step\":");
      tool_json_string(stdout, leir_step_text(s), strlen(leir_step_text(s)));
      printf(",\"json\":%s,\"class\":\"%s\"", js, cls);
      if (result) {
        printf(",\"result\":");
        tool_json_string(stdout, result, strlen(result));
      }
      printf("}\n");
      leir_free(js);
    } else if (result) {
      printf("%s\t%s\t%s\n", leir_step_text(s), cls, result);
    } else {
      printf("%s\t%s\n", leir_step_text(s), cls);
    }
    leir_free(result);
  }
  leir_candidates_free(c);
  return rc;
}

int cmd_candidates(int argc, char **argv) {
  cand_opts o;
  memset(&o, 0, sizeof o);
  leir_candidates_options init = LEIR_CANDIDATES_OPTIONS_INIT;
  o.co = init;
  tool_args a;
  tool_args_init(&a, "candidates", argc, argv);
  const char *opt;
  while ((opt = tool_args_next(&a))) {
    int r = batch_option(&o.b, &a, opt);
    if (r < 0) return EXIT_USAGE;
    if (r) continue;
    if (strncmp(opt, "--strategy", 10) == 0 && (opt[10] == '\0' || opt[10] == '=')) {
      const char *v = tool_args_value(&a, opt);
      if (!v) return EXIT_USAGE;
      size_t idx;
      if (leir_strategy_find(v, &idx) != LEIR_OK) return tool_unknown_strategy("candidates");
      o.co.strategy = (int32_t)idx;
    } else if (strncmp(opt, "--vector-width", 14) == 0 && (opt[14] == '\0' || opt[14] == '=')) {
      const char *v = tool_args_value(&a, opt);
      if (!v) return EXIT_USAGE;
      char *end;
      long w = strtol(v, &end, 10);
      if (*end || w < 1 || w > 1024)
        return tool_usage_error("candidates", "--vector-width takes 1..1024");
      o.co.vector_width = (uint32_t)w;
    } else if (strcmp(opt, "--all-divisors") == 0) {
      o.co.flags |= LEIR_CANDIDATES_ALL_DIVISORS;
    } else if (strcmp(opt, "--partial-fusion") == 0) {
      o.co.flags |= LEIR_CANDIDATES_PARTIAL_FUSION;
    } else if (strcmp(opt, "--reduction-lanes") == 0) {
      o.co.flags |= LEIR_CANDIDATES_REDUCTION_LANES;
    } else if (strcmp(opt, "--generic-values") == 0) {
      o.co.flags |= LEIR_CANDIDATES_GENERIC_VALUES;
    } else if (strcmp(opt, "--no-result") == 0) {
      o.no_result = true;
    } else {
      return tool_usage_error("candidates", "unknown option %s", opt);
    }
  }
  if (a.npositional != 1)
    return tool_usage_error("candidates", "expected one input (a file or -)");
  return batch_run(a.positional[0], &o.b, cand_one, NULL, &o);
}
