/* Sized run entry points (include/leir/run.h): leir_kernel_run with the
 * size of every buffer, for callers such as language bindings that hold
 * arrays of their own shapes. Built on the public kernel API only, so the
 * check is the same whatever the backend. */
#include "leir/run.h"

#include "error.h"

leir_status leir_kernel_buffer_bytes(const leir_kernel *kernel, size_t i, size_t *out) {
  if (!kernel || !out)
    return leir__error_arg(NULL, "NULL argument");
  leir_tensor_decl d;
  leir_status st = leir_kernel_buffer(kernel, i, &d);
  if (st != LEIR_OK) return st;
  size_t bytes = leir_dtype_size(d.dtype);
  for (uint32_t r = 0; r < d.rank; r++) {
    uint64_t e = d.shape[r] < 0 ? 0 : (uint64_t)d.shape[r];
    if (e && bytes > SIZE_MAX / e)
      return leir__error(LEIR_ERR_LIMIT, "run.buffer-size", d.name, 0, 0,
                         "buffer %s is larger than the address space", d.name);
    bytes *= (size_t)e;
  }
  *out = bytes;
  return LEIR_OK;
}

leir_status leir_kernel_run_sized(leir_kernel *kernel, void *const *buffers, const size_t *sizes,
                                  size_t n) {
  if (!kernel || (n && (!buffers || !sizes)))
    return leir__error_arg(NULL, "NULL argument");
  size_t want_n = leir_kernel_buffer_count(kernel);
  if (n != want_n)
    return leir__error(LEIR_ERR_ARGUMENT, "run.buffer-count", NULL, 0, 0,
                       "the kernel takes %zu buffers (its signature), got %zu", want_n, n);
  for (size_t i = 0; i < n; i++) {
    leir_tensor_decl d;
    size_t want = 0;
    leir_status st = leir_kernel_buffer(kernel, i, &d);
    if (st == LEIR_OK) st = leir_kernel_buffer_bytes(kernel, i, &want);
    if (st != LEIR_OK) return st;
    if (sizes[i] != want) {
      return leir__error(LEIR_ERR_ARGUMENT, "run.buffer-size", d.name, 0, 0,
                         "%s %s needs %zu bytes (%zu elements of %s), got %zu bytes",
                         d.role == LEIR_ROLE_INPUT ? "input" : "output", d.name, want,
                         want / leir_dtype_size(d.dtype), leir_dtype_name(d.dtype), sizes[i]);
    }
  }
  return leir_kernel_run(kernel, buffers, n);
}

leir_status leir_run_sized(leir_backend *backend, const leir_program *program,
                           void *const *buffers, const size_t *sizes, size_t n) {
  leir_kernel *k = NULL;
  leir_status st = leir_kernel_new(&k, backend, program);
  if (st != LEIR_OK) return st;
  st = leir_kernel_run_sized(k, buffers, sizes, n);
  leir_kernel_free(k);
  return st;
}
