/* Options structs across library versions (lib/options.h, docs/abi.md), and
 * the leir_*_options_init() functions: the _INIT macros' values for callers
 * that cannot expand macros (bindings). */
#include "options.h"

#include <string.h>

#include "error.h"
#include "leir/cuda.h"
#include "leir/program.h"
#include "leir/run.h"
#include "leir/strategy.h"
#include "leir/tir.h"
#define LEIR_EXPERIMENTAL
#include "leir/experimental/workload.h"

leir_status leir__struct_size_check(const void *s, size_t full_size, const char *type) {
  uint32_t size;
  memcpy(&size, s, sizeof size);
  if (size < sizeof(uint32_t))
    return leir__error_arg(type,
                           "%s.size is %u: set it with the struct's _INIT macro or its "
                           "_init() function",
                           type, (unsigned)size);
  if (size > full_size)
    return leir__error_arg(type,
                           "%s.size is %u but this library (%s) knows %zu bytes: the caller "
                           "was built against newer headers",
                           type, (unsigned)size, LEIR_VERSION_STRING, full_size);
  return LEIR_OK;
}

leir_status leir__options_read(void *dst, const void *defaults, size_t full_size, const void *src,
                               const char *type) {
  memcpy(dst, defaults, full_size);
  if (!src) return LEIR_OK;
  leir_status st = leir__struct_size_check(src, full_size, type);
  if (st != LEIR_OK) return st;
  uint32_t size;
  memcpy(&size, src, sizeof size);
  memcpy(dst, src, size);
  uint32_t full = (uint32_t)full_size;
  memcpy(dst, &full, sizeof full);
  return LEIR_OK;
}

leir_status leir__struct_write(void *dst, const void *src, size_t full_size, const char *type) {
  leir_status st = leir__struct_size_check(dst, full_size, type);
  if (st != LEIR_OK) return st;
  uint32_t size;
  memcpy(&size, dst, sizeof size);
  memcpy((char *)dst + sizeof size, (const char *)src + sizeof size, size - sizeof size);
  return LEIR_OK;
}

/* Fills the first `size` bytes of `opts` with the defaults and sets its size
 * field to `size`: a caller with an older, smaller struct gets its fields. */
static leir_status init_struct(void *opts, size_t size, const void *defaults, size_t full_size,
                               const char *type) {
  if (!opts) return leir__error_arg(type, "%s is NULL", type);
  if (size < sizeof(uint32_t) || size > full_size)
    return leir__error_arg(type, "size %zu is not a size of %s (this library knows %zu bytes)",
                           size, type, full_size);
  memcpy(opts, defaults, size);
  uint32_t sz = (uint32_t)size;
  memcpy(opts, &sz, sizeof sz);
  return LEIR_OK;
}

#define OPTIONS_INIT_FUNCTION(fn, type, ...)                                             \
  leir_status fn(type *opts, size_t size) {                                              \
    static const type defaults = __VA_ARGS__;                                            \
    return init_struct(opts, size, &defaults, sizeof defaults, #type);                   \
  }

OPTIONS_INIT_FUNCTION(leir_parse_options_init, leir_parse_options, LEIR_PARSE_OPTIONS_INIT)
OPTIONS_INIT_FUNCTION(leir_check_options_init, leir_check_options, LEIR_CHECK_OPTIONS_INIT)
OPTIONS_INIT_FUNCTION(leir_walk_callbacks_init, leir_walk_callbacks, LEIR_WALK_CALLBACKS_INIT)
OPTIONS_INIT_FUNCTION(leir_candidates_options_init, leir_candidates_options,
                      LEIR_CANDIDATES_OPTIONS_INIT)
OPTIONS_INIT_FUNCTION(leir_backend_options_init, leir_backend_options, LEIR_BACKEND_OPTIONS_INIT)
OPTIONS_INIT_FUNCTION(leir_verify_options_init, leir_verify_options, LEIR_VERIFY_OPTIONS_INIT)
OPTIONS_INIT_FUNCTION(leir_bench_options_init, leir_bench_options, LEIR_BENCH_OPTIONS_INIT)
OPTIONS_INIT_FUNCTION(leir_verifier_options_init, leir_verifier_options, LEIR_VERIFIER_OPTIONS_INIT)
OPTIONS_INIT_FUNCTION(leir_compare_options_init, leir_compare_options, LEIR_COMPARE_OPTIONS_INIT)
OPTIONS_INIT_FUNCTION(leir_domain_init, leir_domain, LEIR_DOMAIN_INIT)
OPTIONS_INIT_FUNCTION(leir_cuda_options_init, leir_cuda_options, LEIR_CUDA_OPTIONS_INIT)
OPTIONS_INIT_FUNCTION(leir_cuda_timing_options_init, leir_cuda_timing_options,
                      LEIR_CUDA_TIMING_OPTIONS_INIT)
/* Added in 0.2.0: the sized forms of the three `_init(opts)` that took no
 * size (their old entry points stay, lower_tir.c and workload.c). */
OPTIONS_INIT_FUNCTION(leir_tir_options_init_sized, leir_tir_options, LEIR_TIR_OPTIONS_INIT)
OPTIONS_INIT_FUNCTION(leir_catalog_options_init_sized, leir_catalog_options,
                      LEIR_CATALOG_OPTIONS_INIT)
OPTIONS_INIT_FUNCTION(leir_emit_options_init_sized, leir_emit_options, LEIR_EMIT_OPTIONS_INIT)
