/* leir lower: the source a backend generates for a program. */
#include <string.h>

#include "commands.h"
#include "run_opts.h"
#include "leir/tir.h"

int cmd_lower(int argc, char **argv) {
  run_opts o;
  run_opts_init(&o);
  const char *target = NULL;
  bool report = false, ptx = false; /* cuda only */
  uint32_t tir_flags = 0;           /* tir only */
  bool tir_opt = false;
  tool_args a;
  tool_args_init(&a, "lower", argc, argv);
  const char *opt;
  while ((opt = tool_args_next(&a))) {
    if (strncmp(opt, "--to", 4) == 0 && (opt[4] == '\0' || opt[4] == '=')) {
      if (!(target = tool_args_value(&a, opt))) return EXIT_USAGE;
      continue;
    }
    if (strcmp(opt, "--report") == 0 || strcmp(opt, "--ptx") == 0) {
      *(opt[2] == 'r' ? &report : &ptx) = true;
      continue;
    }
    if (strncmp(opt, "--bind", 6) == 0 && (opt[6] == '\0' || opt[6] == '=')) {
      const char *v = tool_args_value(&a, opt);
      if (!v) return EXIT_USAGE;
      if (strcmp(v, "serial") == 0)
        tir_flags |= LEIR_TIR_BIND_SERIAL;
      else if (strcmp(v, "thread") != 0)
        return tool_usage_error("lower", "--bind takes thread or serial");
      tir_opt = true;
      continue;
    }
    if (strcmp(opt, "--blocks") == 0) {
      tir_flags |= LEIR_TIR_BLOCKS;
      tir_opt = true;
      continue;
    }
    if (strcmp(opt, "--global-scope") == 0) {
      tir_flags |= LEIR_TIR_SCOPE_GLOBAL;
      tir_opt = true;
      continue;
    }
    /* Of the options shared with run/verify/bench, lowering reads only
     * these (the others configure running). */
    static const char *const read_here[] = {"--check-bounds", "--threads", "--input", "--output"};
    bool shared = false;
    for (size_t i = 0; i < sizeof read_here / sizeof read_here[0]; i++) {
      size_t n = strlen(read_here[i]);
      if (strncmp(opt, read_here[i], n) == 0 && (opt[n] == '\0' || opt[n] == '=')) shared = true;
    }
    if (!shared) return tool_usage_error("lower", "unknown option %s", opt);
    int r = run_option(&o, &a, opt);
    if (r < 0) return EXIT_USAGE;
    if (!r) return tool_usage_error("lower", "unknown option %s", opt);
  }
  if (!target) return tool_usage_error("lower", "--to c|cuda|tir is required");
  if (a.npositional != 1) return tool_usage_error("lower", "expected one input (a file or -)");
  const char *backend;
  if (strcmp(target, "c") == 0)
    backend = "cpu";
  else if (strcmp(target, "cuda") == 0)
    backend = "cuda";
  else if (strcmp(target, "tir") == 0)
    backend = NULL;
  else
    return tool_usage_error("lower", "unknown target '%s' (c, cuda or tir)", target);
  if ((report || ptx) && (!backend || strcmp(backend, "cuda") != 0))
    return tool_usage_error("lower", "--report and --ptx apply to --to cuda");
  if (tir_opt && backend)
    return tool_usage_error("lower", "--bind, --blocks and --global-scope apply to --to tir");
  int rc;
  leir_program *p = run_load(&o, a.positional[0], true, &rc);
  if (!p) return rc;
  if (!backend) {
    /* TVMScript (include/leir/tir.h): printed by the library, no backend. */
    leir_tir_options to = LEIR_TIR_OPTIONS_INIT;
    to.flags = tir_flags;
    char *text = NULL;
    size_t len = 0;
    leir_status tst = leir_lower_tir(p, &to, &text, &len);
    if (tst == LEIR_OK) {
      fwrite(text, 1, len, stdout);
      rc = EXIT_OK;
    } else {
      tool_print_error(tool_label(a.positional[0]), 0, leir_error_last());
      rc = tool_exit_for(tst);
    }
    leir_free(text);
    leir_program_free(p);
    return rc;
  }
  if (report || ptx) {
    /* CUDA specifics: the lowering report (stderr) and NVRTC's PTX. */
    char *src = NULL, *rep = NULL, *out = NULL, *log = NULL;
    leir_status cst = leir_cuda_lower(p, NULL, &src, &rep);
    if (cst == LEIR_OK && ptx) cst = leir_cuda_compile_source(src, strlen(src), NULL, &out, &log);
    if (cst != LEIR_OK) {
      tool_print_error(tool_label(a.positional[0]), 0, leir_error_last());
      if (log) fputs(log, stderr);
      rc = tool_exit_for(cst);
    } else {
      if (report) fputs(rep, stderr);
      fputs(ptx ? out : src, stdout);
      rc = EXIT_OK;
    }
    leir_free(src);
    leir_free(rep);
    leir_free(out);
    leir_free(log);
    leir_program_free(p);
    return rc;
  }
  leir_backend *b = NULL;
  leir_status st = LEIR_ERR_UNSUPPORTED;
  if (backend) {
    o.bo.flags |= LEIR_BACKEND_LOWER_ONLY;
    st = leir_backend_open(&b, backend, &o.bo);
  }
  if (st != LEIR_OK) {
    if (st == LEIR_ERR_UNSUPPORTED || st == LEIR_ERR_NOT_FOUND || st == LEIR_ERR_NO_DEVICE)
      fprintf(stderr, "leir lower: error: target '%s' is not available in this build\n", target);
    else
      fprintf(stderr, "leir lower: error: %s\n", leir_error_last()->message);
    leir_program_free(p);
    return EXIT_INTERNAL;
  }
  char *text = NULL;
  size_t len = 0;
  st = leir_backend_lower(b, p, &text, &len);
  if (st == LEIR_OK) {
    fwrite(text, 1, len, stdout);
    rc = EXIT_OK;
  } else {
    tool_print_error(tool_label(a.positional[0]), 0, leir_error_last());
    rc = tool_exit_for(st);
  }
  leir_free(text);
  leir_backend_free(b);
  leir_program_free(p);
  return rc;
}
