#include "diag.h"
#include "vec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

leir_diagnostics *leir__diags_new(void) {
  leir_diagnostics *d = calloc(1, sizeof *d);
  if (d) leir__arena_init(&d->arena, 2048);
  return d;
}

void leir_diagnostics_free(leir_diagnostics *d) {
  if (!d) return;
  free(d->items);
  leir__arena_release(&d->arena);
  free(d);
}

size_t leir_diagnostics_count(const leir_diagnostics *d) { return d ? d->n : 0; }

const leir_diagnostic *leir_diagnostics_get(const leir_diagnostics *d, size_t i) {
  return d && i < d->n ? &d->items[i] : NULL;
}

void leir__diag_add(leir_diagnostics *d, const char *rule, const char *subject, uint32_t line,
                    uint32_t column, const char *fmt, ...) {
  if (!d || d->failed) return;
  /* Hostile input can produce a finding per token; the first thousand are
   * plenty to act on and keep the sort below cheap. */
  if (d->n >= 1000) return;
  if (!leir__vec_grow32((void **)&d->items, &d->cap, (size_t)d->n + 1, sizeof *d->items, 8)) {
    d->failed = 1;
    return;
  }
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!subject) subject = "";
  char *m = leir__arena_strndup(&d->arena, msg, strlen(msg));
  char *r = leir__arena_strndup(&d->arena, rule, strlen(rule));
  char *s = leir__arena_strndup(&d->arena, subject, strlen(subject));
  if (!m || !r || !s) {
    d->failed = 1;
    return;
  }
  leir_diagnostic *it = &d->items[d->n++];
  it->rule = r;
  it->message = m;
  it->subject = s;
  it->line = line;
  it->column = column;
}

static int before(const leir_diagnostic *a, const leir_diagnostic *b) {
  uint64_t ka = a->line ? ((uint64_t)a->line << 32 | a->column) : UINT64_MAX;
  uint64_t kb = b->line ? ((uint64_t)b->line << 32 | b->column) : UINT64_MAX;
  return ka < kb;
}

void leir__diags_sort(leir_diagnostics *d) {
  /* insertion sort: lists are short and mostly ordered already */
  for (uint32_t i = 1; i < d->n; i++) {
    leir_diagnostic x = d->items[i];
    uint32_t j = i;
    while (j > 0 && before(&x, &d->items[j - 1])) {
      d->items[j] = d->items[j - 1];
      j--;
    }
    d->items[j] = x;
  }
}
