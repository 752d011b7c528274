/* Versions, status names, dtype tables and leir_free. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "leir/common.h"

const char *leir_version(void) { return LEIR_VERSION_STRING; }
int leir_version_number(void) { return LEIR_VERSION_NUMBER; }

const char *leir_status_name(leir_status status) {
  switch (status) {
#define LEIR__STATUS_NAME(name, value, msg) \
  case LEIR_##name: return "LEIR_" #name;
    LEIR_STATUS_TABLE(LEIR__STATUS_NAME)
#undef LEIR__STATUS_NAME
  }
  return "LEIR_UNKNOWN_STATUS";
}

const char *leir_status_message(leir_status status) {
  switch (status) {
#define LEIR__STATUS_MSG(name, value, msg) \
  case LEIR_##name: return msg;
    LEIR_STATUS_TABLE(LEIR__STATUS_MSG)
#undef LEIR__STATUS_MSG
  }
  return "unknown status";
}

void leir_free(void *ptr) { free(ptr); }

static const char *const dtype_names[LEIR_DTYPE_COUNT] = {"f16", "bf16", "f32", "f64", "i8",
                                                          "i16", "i32",  "i64", "u8",  "bool"};
static const uint8_t dtype_name_lens[LEIR_DTYPE_COUNT] = {3, 4, 3, 3, 2, 3, 3, 3, 2, 4};
static const size_t dtype_sizes[LEIR_DTYPE_COUNT] = {2, 2, 4, 8, 1, 2, 4, 8, 1, 1};

/* Declared in lib/ir.h; the parser calls it for every tensor. */
int leir__dtype_of(const char *s, size_t len);
int leir__dtype_of(const char *s, size_t len) {
  for (int d = 0; d < LEIR_DTYPE_COUNT; d++) {
    if (dtype_name_lens[d] != len) continue;
    size_t k = 0;
    while (k < len && dtype_names[d][k] == s[k]) k++;
    if (k == len) return d;
  }
  return -1;
}

const char *leir_dtype_name(leir_dtype dtype) {
  return (unsigned)dtype < LEIR_DTYPE_COUNT ? dtype_names[dtype] : NULL;
}

size_t leir_dtype_size(leir_dtype dtype) {
  return (unsigned)dtype < LEIR_DTYPE_COUNT ? dtype_sizes[dtype] : 0;
}

leir_status leir_dtype_from_name(const char *name, leir_dtype *out) {
  if (!name || !out) return leir__error_arg(NULL, "NULL argument");
  int d = leir__dtype_of(name, strlen(name));
  if (d < 0)
    return leir__error_arg(name,
                           "unknown dtype '%s' (f16, bf16, f32, f64, i8, i16, i32, i64, u8, bool)",
                           name);
  *out = (leir_dtype)d;
  return LEIR_OK;
}
