/*
 * NumPy .npy files for `leir run --inputs DIR --outputs DIR`: format
 * version 1.0, little-endian (or single-byte) element types, C order. Files
 * are untrusted: anything else (other versions, big-endian, Fortran order,
 * object arrays, a shape or size that differs from the declaration, a
 * truncated or over-long file) is rejected with a message.
 */
#ifndef LEIR_TOOL_NPY_H
#define LEIR_TOOL_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "leir/common.h"

/* The numpy descr of a dtype ("<f8"), or NULL when numpy has none (bf16). */
const char *npy_descr(leir_dtype dt);

/* Parses a whole .npy file held in memory and copies its data into `out`,
 * which holds the product of `shape` elements of `dt`. Returns 0, or -1 with
 * a message in err. */
int npy_parse(const unsigned char *file, size_t len, leir_dtype dt, const int64_t *shape,
              uint32_t rank, void *out, char *err, size_t errlen);

/* Reads PATH (at most 1 GiB) into `out` as npy_parse. */
int npy_read(const char *path, leir_dtype dt, const int64_t *shape, uint32_t rank, void *out,
             char *err, size_t errlen);

/* Writes a version 1.0 file. Returns 0, or -1 with a message in err. */
int npy_write(const char *path, leir_dtype dt, const int64_t *shape, uint32_t rank,
              const void *data, char *err, size_t errlen);

#endif
