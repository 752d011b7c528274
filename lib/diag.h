/* Lists of checker findings (leir_diagnostics in include/leir/program.h). */
#ifndef LEIR_DIAG_H
#define LEIR_DIAG_H

#include "arena.h"
#include "leir/program.h"

struct leir_diagnostics {
  leir__arena arena; /* strings */
  uint32_t n, cap;
  leir_diagnostic *items;
  int failed; /* an allocation failed: the list is incomplete */
};

leir_diagnostics *leir__diags_new(void);
void leir__diag_add(leir_diagnostics *d, const char *rule, const char *subject, uint32_t line,
                    uint32_t column, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
/* Stable sort by (line, column); findings without a position go last. */
void leir__diags_sort(leir_diagnostics *d);

#endif
