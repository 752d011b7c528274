/* Reading caller option structs across library versions (docs/abi.md).
 *
 * Every public options struct starts with `uint32_t size` (sizeof the struct
 * the caller was compiled with). A caller built against an older header
 * passes a smaller struct: the fields it has are read, the fields added
 * later keep their defaults. A size below the size field itself, or above
 * what this library knows, is refused with LEIR_ERR_ARGUMENT and a message
 * naming the struct. */
#ifndef LEIR_OPTIONS_INTERNAL_H
#define LEIR_OPTIONS_INTERNAL_H

#include <stddef.h>

#include "leir/common.h"

/* Copies `defaults` (full_size bytes) to `dst`, then the first
 * min(src->size, full_size) bytes of `src` over them, and sets the size field
 * of `dst` to full_size. `src` NULL: the defaults. `type` names the struct in
 * the error message. On error `dst` holds the defaults. */
leir_status leir__options_read(void *dst, const void *defaults, size_t full_size, const void *src,
                               const char *type);

/* Typed form: LEIR__OPTIONS_READ(leir_parse_options, &o, opts, LEIR_PARSE_OPTIONS_INIT). */
#define LEIR__OPTIONS_READ(type, dst, src, init)                                             \
  leir__options_read((dst), &(const type)init, sizeof(type), (src), #type)

/* The other direction, for structs the library fills in (leir_cuda_timing,
 * leir_cuda_device_info): copies the first min(dst->size, full_size) bytes
 * of the complete `src` to `dst` and leaves dst->size as the caller set it.
 * Same size rules as leir__options_read. */
leir_status leir__struct_write(void *dst, const void *src, size_t full_size, const char *type);

/* The size check alone (both directions use it). */
leir_status leir__struct_size_check(const void *s, size_t full_size, const char *type);

#endif
