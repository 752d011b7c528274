/* Versions, status names, dtype tables and leir_free. */
#include <stdlib.h>
#include <string.h>

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
static const size_t dtype_sizes[LEIR_DTYPE_COUNT] = {2, 2, 4, 8, 1, 2, 4, 8, 1, 1};

const char *leir_dtype_name(leir_dtype dtype) {
  return (unsigned)dtype < LEIR_DTYPE_COUNT ? dtype_names[dtype] : NULL;
}

size_t leir_dtype_size(leir_dtype dtype) {
  return (unsigned)dtype < LEIR_DTYPE_COUNT ? dtype_sizes[dtype] : 0;
}

leir_status leir_dtype_from_name(const char *name, leir_dtype *out) {
  if (!name || !out) return LEIR_ERR_ARGUMENT;
  for (int d = 0; d < LEIR_DTYPE_COUNT; d++) {
    if (strcmp(dtype_names[d], name) == 0) {
      *out = (leir_dtype)d;
      return LEIR_OK;
    }
  }
  return LEIR_ERR_ARGUMENT;
}
