/* The CPU backend (placeholder until the C lowering lands). */
#include "backend.h"
#include "error.h"

static leir_status cpu_open(leir_backend *b) {
  (void)b;
  return leir__error(LEIR_ERR_UNSUPPORTED, "backend.unsupported", "cpu", 0, 0,
                     "the cpu backend is not available yet");
}

const leir__backend_ops leir__cpu_ops = {"cpu", 1, cpu_open, NULL, NULL, NULL, NULL, NULL, NULL};
