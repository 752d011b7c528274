/* leir lower: the lowered source of a program for a backend. */
#include <stdlib.h>
#include <string.h>

#include "commands.h"

int cmd_lower(int argc, char **argv) {
  tool_args a;
  tool_args_init(&a, "lower", argc, argv);
  tool_sig sig;
  memset(&sig, 0, sizeof sig);
  const char *to = NULL, *arch = NULL;
  bool report = false, ptx = false, fmad = false;
  const char *opt;
  while ((opt = tool_args_next(&a))) {
    int r = tool_sig_option(&sig, &a, opt);
    if (r < 0) return EXIT_USAGE;
    if (r) continue;
    if (strcmp(opt, "--to") == 0 || strncmp(opt, "--to=", 5) == 0) {
      if (!(to = tool_args_value(&a, "--to"))) return EXIT_USAGE;
    } else if (strcmp(opt, "--arch") == 0 || strncmp(opt, "--arch=", 7) == 0) {
      if (!(arch = tool_args_value(&a, "--arch"))) return EXIT_USAGE;
    } else if (strcmp(opt, "--report") == 0) {
      report = true;
    } else if (strcmp(opt, "--ptx") == 0) {
      ptx = true;
    } else if (strcmp(opt, "--fmad") == 0) {
      fmad = true;
    } else {
      return tool_usage_error("lower", "unknown option %s", opt);
    }
  }
  if (!to) return tool_usage_error("lower", "--to is required (cuda)");
  if (strcmp(to, "cuda") != 0)
    return tool_usage_error("lower", "unknown or unavailable target '%s' (this build: cuda)", to);
  if (a.npositional != 1) return tool_usage_error("lower", "expected one input (a file or -)");
  const char *label = tool_label(a.positional[0]);
  int code;
  leir_program *p = tool_load_program(a.positional[0], &code);
  if (!p) return code;
  if (tool_sig_apply(&sig, p, label) != EXIT_OK) {
    leir_program_free(p);
    return EXIT_INVALID;
  }
  leir_cuda_options o = LEIR_CUDA_OPTIONS_INIT;
  o.arch = arch;
  if (fmad) o.flags |= LEIR_CUDA_FMAD;
  char *src = NULL, *rep = NULL, *out = NULL, *log = NULL;
  leir_status st = leir_cuda_lower(p, &o, &src, &rep);
  if (st == LEIR_OK && ptx) st = leir_cuda_compile_source(src, strlen(src), &o, &out, &log);
  if (st != LEIR_OK) {
    tool_print_error(label, 0, leir_error_last());
    if (log) fputs(log, stderr);
    code = tool_exit_for(st);
  } else {
    if (report) fputs(rep, stderr);
    fputs(ptx ? out : src, stdout);
    code = EXIT_OK;
  }
  leir_free(src);
  leir_free(rep);
  leir_free(out);
  leir_free(log);
  leir_program_free(p);
  return code;
}
