#include "run_opts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void run_opts_init(run_opts *o) {
  memset(o, 0, sizeof *o);
  leir_backend_options d = LEIR_BACKEND_OPTIONS_INIT;
  o->bo = d;
  o->backend = "cpu";
  o->seed = LEIR_SEED_DEFAULT;
}

static int parse_u64(const char *cmd, const char *opt, const char *v, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 0);
  if (errno || end == v || *end || v[0] == '-')
    return tool_usage_error(cmd, "%s needs a non-negative integer, got '%s'", opt, v);
  *out = x;
  return 0;
}

static int parse_seconds(const char *cmd, const char *opt, const char *v, double *out) {
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (errno || end == v || *end || !(x > 0))
    return tool_usage_error(cmd, "%s needs a positive number of seconds, got '%s'", opt, v);
  *out = x;
  return 0;
}

static bool is(const char *opt, const char *name) {
  size_t n = strlen(name);
  return strncmp(opt, name, n) == 0 && (opt[n] == '\0' || opt[n] == '=');
}

int run_option(run_opts *o, tool_args *a, const char *opt) {
  const char *v;
  uint64_t u = 0;
  if (strcmp(opt, "--json") == 0) {
    o->json = true;
    return 1;
  }
  if (strcmp(opt, "--no-cache") == 0) {
    o->bo.flags |= LEIR_BACKEND_NO_CACHE;
    return 1;
  }
  if (strcmp(opt, "--check-bounds") == 0) {
    o->bo.flags |= LEIR_BACKEND_CHECK_ALL_BOUNDS;
    return 1;
  }
  if (strcmp(opt, "--fp-contract") == 0) {
    o->bo.flags |= LEIR_BACKEND_FP_CONTRACT;
    return 1;
  }
  if (is(opt, "--backend")) {
    if (!(v = tool_args_value(a, opt))) return -1;
    o->backend = v;
    return 1;
  }
  if (is(opt, "--seed")) {
    if (!(v = tool_args_value(a, opt)) || parse_u64(a->cmd, "--seed", v, &o->seed)) return -1;
    o->seed_given = true;
    return 1;
  }
  if (is(opt, "--timeout")) {
    if (!(v = tool_args_value(a, opt)) || parse_seconds(a->cmd, "--timeout", v, &o->bo.timeout_s))
      return -1;
    return 1;
  }
  if (is(opt, "--threads")) {
    if (!(v = tool_args_value(a, opt)) || parse_u64(a->cmd, "--threads", v, &u)) return -1;
    if (u > 4096) return tool_usage_error(a->cmd, "--threads: at most 4096"), -1;
    o->bo.threads = (uint32_t)u;
    return 1;
  }
  if (is(opt, "--memory-limit")) {
    if (!(v = tool_args_value(a, opt)) || parse_u64(a->cmd, "--memory-limit", v, &u)) return -1;
    if (u == 0 || u > ((uint64_t)1 << 40)) return tool_usage_error(a->cmd, "--memory-limit: MiB in 1..2^40"), -1;
    o->bo.memory_limit_bytes = u << 20;
    return 1;
  }
  if (is(opt, "--cc")) {
    if (!(v = tool_args_value(a, opt))) return -1;
    o->bo.compiler = v;
    return 1;
  }
  if (is(opt, "--cflags")) {
    if (!(v = tool_args_value(a, opt))) return -1;
    o->bo.compiler_flags = v;
    return 1;
  }
  if (is(opt, "--cache-dir")) {
    if (!(v = tool_args_value(a, opt))) return -1;
    o->bo.cache_dir = v;
    return 1;
  }
  return tool_sig_option(&o->sig, a, opt);
}

int run_open_backend(run_opts *o, leir_backend **out) {
  leir_status st = leir_backend_open(out, o->backend, &o->bo);
  if (st == LEIR_OK) return EXIT_OK;
  const leir_error *e = leir_error_last();
  fprintf(stderr, "leir: error: cannot open backend '%s': %s\n", o->backend, e->message);
  if (st == LEIR_ERR_NOT_FOUND) return EXIT_USAGE;
  if (st == LEIR_ERR_ARGUMENT) return EXIT_USAGE;
  return EXIT_INTERNAL;
}

leir_program *run_load(const run_opts *o, const char *path, bool apply_sig, int *exit_code) {
  leir_program *p = tool_load_program(path, exit_code);
  if (!p) return NULL;
  if (apply_sig) {
    *exit_code = tool_sig_apply(&o->sig, p, tool_label(path));
    if (*exit_code != EXIT_OK) {
      leir_program_free(p);
      return NULL;
    }
  }
  return p;
}
