/* Public entry points of the CUDA backend (include/leir/cuda.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "error.h"
#include "options.h"

/* The caller's options over the defaults (an older, smaller struct is fine),
 * checked; every entry point taking leir_cuda_options reads them here. */
leir_status leir__cuda_read_options(const leir_cuda_options *in, leir_cuda_options *o);
leir_status leir__cuda_read_options(const leir_cuda_options *in, leir_cuda_options *o) {
  leir_status st = LEIR__OPTIONS_READ(leir_cuda_options, o, in, LEIR_CUDA_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  if (o->kernel_prefix) {
    const char *s = o->kernel_prefix;
    bool ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_';
    for (; *s && ok; s++)
      ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
           *s == '_';
    if (!ok || strlen(o->kernel_prefix) > 40)
      return leir__error_arg(NULL, "kernel_prefix must be a C identifier of at most 40 characters");
  }
  return LEIR_OK;
}

/* Architecture: the option, else the device's, else $LEIR_CUDA_ARCH, else
 * compute_90. Only [a-z0-9_] is accepted (it becomes an NVRTC option). */
leir_status leir__cuda_resolve_arch(const leir_cuda_options *o, char *buf, size_t cap);
leir_status leir__cuda_resolve_arch(const leir_cuda_options *o, char *buf, size_t cap) {
  const char *arch = o ? o->arch : NULL;
  if (!arch) {
    leir_cuda_device_info info = {sizeof info, "", 0, 0, 0, 0, 0, 0};
    leir__error_state saved;
    leir__error_save(&saved);
    if (leir_cuda_device(&info) == LEIR_OK) {
      snprintf(buf, cap, "compute_%d%d", info.compute_major, info.compute_minor);
      leir__error_restore(&saved);
      return LEIR_OK;
    }
    leir__error_restore(&saved);
    arch = getenv("LEIR_CUDA_ARCH");
    if (!arch || !*arch) arch = "compute_90";
  }
  size_t n = strlen(arch);
  bool ok = n > 0 && n < cap && n < 32;
  for (size_t k = 0; k < n && ok; k++)
    ok = (arch[k] >= 'a' && arch[k] <= 'z') || (arch[k] >= '0' && arch[k] <= '9') || arch[k] == '_';
  if (!ok)
    return leir__error_arg(arch,
                           "invalid CUDA architecture '%s' (expected e.g. compute_90 or sm_90)",
                           arch);
  memcpy(buf, arch, n + 1);
  return LEIR_OK;
}

leir_status leir_cuda_lower(const leir_program *program, const leir_cuda_options *opts,
                            char **source, char **report) {
  if (source) *source = NULL;
  if (report) *report = NULL;
  if (!program || !source)
    return leir__error_arg(NULL, "NULL argument");
  leir_cuda_options o;
  leir_status st = leir__cuda_read_options(opts, &o);
  if (st != LEIR_OK) return st;
  leir__cuda_lowered *l = NULL;
  st = leir__cuda_lower(program, &o, &l);
  if (st != LEIR_OK) return st;
  *source = l->source;
  l->source = NULL;
  if (report) {
    *report = l->report;
    l->report = NULL;
  }
  leir__cuda_lowered_free(l);
  return LEIR_OK;
}

const char *leir_cuda_prelude(void) { return leir__cuda_prelude(); }

const char *leir_cuda_compiler(void) { return leir__nvrtc_identity(); }

leir_status leir_cuda_compile_source(const char *source, size_t len, const leir_cuda_options *opts,
                                     char **ptx, char **log) {
  if (ptx) *ptx = NULL;
  if (log) *log = NULL;
  if (!source || !ptx)
    return leir__error_arg(NULL, "NULL argument");
  leir_cuda_options o;
  leir_status st = leir__cuda_read_options(opts, &o);
  if (st != LEIR_OK) return st;
  char arch[64];
  st = leir__cuda_resolve_arch(&o, arch, sizeof arch);
  if (st != LEIR_OK) return st;
  return leir__nvrtc_compile(source, len, arch, (o.flags & LEIR_CUDA_FMAD) != 0, ptx, NULL, log);
}

leir_status leir_cuda_compile(const leir_program *program, const leir_cuda_options *opts,
                              char **ptx, char **log) {
  if (ptx) *ptx = NULL;
  if (log) *log = NULL;
  char *src = NULL;
  leir_status st = leir_cuda_lower(program, opts, &src, NULL);
  if (st != LEIR_OK) return st;
  st = leir_cuda_compile_source(src, strlen(src), opts, ptx, log);
  free(src);
  return st;
}
