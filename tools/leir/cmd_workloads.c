/* leir workloads: the workload catalogue (list, show, emit). */
#define LEIR_EXPERIMENTAL /* the workload API is in the experimental tier */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "leir/experimental/workload.h"

/* Errors name the catalogue file (the error's subject) when there is one. */
static void print_err(void) {
  const leir_error *e = leir_error_last();
  tool_print_error(e->subject[0] ? e->subject : "leir workloads", 0, e);
}

static int open_catalog(const char *dir, leir_catalog **cat) {
  leir_catalog_options o;
  leir_catalog_options_init(&o);
  o.dir = dir;
  leir_status st = leir_catalog_open(cat, &o);
  if (st != LEIR_OK) {
    print_err();
    return tool_exit_for(st);
  }
  return EXIT_OK;
}

static void print_num(double v, bool is_float) {
  if (is_float)
    printf("%.17g", v);
  else
    printf("%lld", (long long)v);
}

static int do_list(leir_catalog *cat, bool json) {
  for (size_t i = 0; i < leir_catalog_count(cat); i++) {
    const leir_workload *w = leir_catalog_get(cat, i);
    if (json) {
      printf("{\"name\":");
      tool_json_string(stdout, leir_workload_name(w), strlen(leir_workload_name(w)));
      printf(",\"level\":%d,\"index\":%d,\"traced\":%s,\"params\":[", leir_workload_level(w),
             leir_workload_index(w), leir_workload_traced(w) ? "true" : "false");
      for (size_t k = 0; k < leir_workload_param_count(w); k++) {
        leir_workload_param p;
        leir_workload_param_get(w, k, &p);
        printf("%s", k ? "," : "");
        tool_json_string(stdout, p.name, strlen(p.name));
      }
      printf("],\"summary\":");
      tool_json_string(stdout, leir_workload_summary(w), strlen(leir_workload_summary(w)));
      printf("}\n");
    } else {
      printf("level%d/%-58s %3d  %s\n", leir_workload_level(w), leir_workload_name(w),
             leir_workload_index(w), leir_workload_summary(w));
    }
  }
  return EXIT_OK;
}

static int do_show(const leir_workload *w) {
  printf("name: level%d/%s\n", leir_workload_level(w), leir_workload_name(w));
  printf("index: %d\n", leir_workload_index(w));
  printf("summary: %s\n", leir_workload_summary(w));
  printf("traced by the reference: %s\n", leir_workload_traced(w) ? "yes" : "no");
  printf("dtype: %s\n", leir_dtype_name(leir_workload_dtype(w)));
  printf("file: %s\n", leir_workload_file(w));
  printf("parameters (the order of --args):\n");
  for (size_t k = 0; k < leir_workload_param_count(w); k++) {
    leir_workload_param p;
    leir_workload_param_get(w, k, &p);
    printf("  %-20s %-5s default ", p.name, p.is_float ? "float" : "int");
    print_num(p.default_value, p.is_float);
    printf("  small ");
    print_num(p.small_value, p.is_float);
    printf("  range [");
    print_num(p.min, p.is_float);
    printf(", ");
    print_num(p.max, p.is_float);
    printf("]\n");
  }
  printf("template:\n%s\n", leir_workload_template(w));
  return EXIT_OK;
}

static int parse_args_list(const char *s, double *out, size_t max, size_t *n) {
  *n = 0;
  const char *p = s;
  while (*p) {
    if (*n == max) return tool_usage_error("workloads", "more than %zu --args values", max);
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    if (end == p || errno || !isfinite(v) || (*end && *end != ','))
      return tool_usage_error("workloads", "--args takes numbers separated by commas: %s", s);
    out[(*n)++] = v;
    p = *end ? end + 1 : end;
  }
  return EXIT_OK;
}

int cmd_workloads(int argc, char **argv) {
  tool_args a;
  tool_args_init(&a, "workloads", argc, argv);
  bool json = false, leir_only = false;
  const char *dir = NULL, *dtype = NULL, *args = NULL;
  leir_emit_options eo;
  leir_emit_options_init(&eo);
  const char *opt;
  while ((opt = tool_args_next(&a))) {
    if (!strcmp(opt, "--json")) {
      json = true;
    } else if (!strcmp(opt, "--leir")) {
      leir_only = true;
    } else if (!strcmp(opt, "--dir") || !strncmp(opt, "--dir=", 6)) {
      if (!(dir = tool_args_value(&a, "--dir"))) return EXIT_USAGE;
    } else if (!strcmp(opt, "--dtype") || !strncmp(opt, "--dtype=", 8)) {
      if (!(dtype = tool_args_value(&a, "--dtype"))) return EXIT_USAGE;
    } else if (!strcmp(opt, "--args") || !strncmp(opt, "--args=", 7)) {
      if (!(args = tool_args_value(&a, "--args"))) return EXIT_USAGE;
    } else if (!strcmp(opt, "--shape") || !strncmp(opt, "--shape=", 8)) {
      const char *v = tool_args_value(&a, "--shape");
      if (!v) return EXIT_USAGE;
      if (!strcmp(v, "default"))
        eo.shape = LEIR_SHAPE_DEFAULT;
      else if (!strcmp(v, "small"))
        eo.shape = LEIR_SHAPE_SMALL;
      else if (!strcmp(v, "random"))
        eo.shape = LEIR_SHAPE_RANDOM;
      else
        return tool_usage_error("workloads", "--shape is default, small or random, not %s", v);
    } else if (!strcmp(opt, "--seed") || !strncmp(opt, "--seed=", 7)) {
      const char *v = tool_args_value(&a, "--seed");
      if (!v) return EXIT_USAGE;
      char *end;
      errno = 0;
      unsigned long long s = strtoull(v, &end, 10);
      if (!*v || *end || errno || *v == '-')
        return tool_usage_error("workloads", "--seed takes a non-negative integer");
      eo.seed = s;
    } else {
      return tool_usage_error("workloads", "unknown option %s", opt);
    }
  }
  if (a.npositional < 1)
    return tool_usage_error("workloads", "expected list, show NAME or emit NAME");
  const char *sub = a.positional[0];
  leir_catalog *cat = NULL;
  int rc;
  if (!strcmp(sub, "list")) {
    if (a.npositional != 1) return tool_usage_error("workloads", "list takes no argument");
    if ((rc = open_catalog(dir, &cat)) != EXIT_OK) return rc;
    rc = do_list(cat, json);
    leir_catalog_free(cat);
    return rc;
  }
  if (strcmp(sub, "show") && strcmp(sub, "emit"))
    return tool_usage_error("workloads", "unknown subcommand %s (list, show, emit)", sub);
  if (a.npositional != 2) return tool_usage_error("workloads", "%s takes one workload name", sub);
  double vals[64];
  size_t nvals = 0;
  if (args && (rc = parse_args_list(args, vals, 64, &nvals)) != EXIT_OK) return rc;
  if ((rc = open_catalog(dir, &cat)) != EXIT_OK) return rc;
  const leir_workload *w = leir_catalog_find(cat, a.positional[1]);
  if (!w) {
    print_err();
    leir_catalog_free(cat);
    return EXIT_INVALID;
  }
  if (!strcmp(sub, "show")) {
    rc = do_show(w);
    leir_catalog_free(cat);
    return rc;
  }
  eo.args = vals;
  eo.nargs = nvals;
  eo.dtype = dtype;
  char *yaml = NULL;
  leir_program *p = NULL;
  leir_status st = leir_workload_emit(w, &eo, leir_only ? NULL : &yaml, &p, NULL, 0);
  if (st != LEIR_OK) {
    print_err();
    leir_catalog_free(cat);
    return tool_exit_for(st);
  }
  if (leir_only) {
    char *text = NULL;
    size_t len = 0;
    st = leir_program_print(p, 0, &text, &len);
    if (st == LEIR_OK) printf("%s\n", text);
    leir_free(text);
  } else {
    fputs(yaml, stdout);
  }
  leir_free(yaml);
  leir_program_free(p);
  leir_catalog_free(cat);
  return st == LEIR_OK ? EXIT_OK : tool_exit_for(st);
}
