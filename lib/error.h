/* Internal side of the last-error record (include/leir/common.h). */
#ifndef LEIR_ERROR_INTERNAL_H
#define LEIR_ERROR_INTERNAL_H

#include "leir/common.h"

#if defined(__GNUC__)
#define LEIR__PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define LEIR__PRINTF(fmt, args)
#endif

/* Records an error for the calling thread and returns `status`, so callers
 * write `return leir__error(...)`. Text is truncated to fixed buffers; this
 * never allocates. `rule` and `subject` may be NULL. */
leir_status leir__error(leir_status status, const char *rule, const char *subject, uint32_t line,
                        uint32_t column, const char *fmt, ...) LEIR__PRINTF(6, 7);
leir_status leir__error_nomem(void);
/* Records an error given as an already-formatted message. */
leir_status leir__error_set(leir_status status, const char *rule, const char *subject,
                            uint32_t line, uint32_t column, const char *message);

/* A full copy of the last-error record, for code that must not disturb the
 * caller's error (hashing, best-effort helpers). */
typedef struct leir__error_state {
  leir_status status;
  uint32_t line, column;
  char message[1024];
  char rule[64];
  char subject[256];
  uint64_t sequence;
} leir__error_state;
void leir__error_save(leir__error_state *s);
void leir__error_restore(const leir__error_state *s);

/* An invalid argument: LEIR_ERR_ARGUMENT with rule "argument" and no
 * position; `subject` (may be NULL) names the argument's value or struct. */
leir_status leir__error_arg(const char *subject, const char *fmt, ...) LEIR__PRINTF(2, 3);

#endif
