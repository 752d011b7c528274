#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MESSAGE_MAX 1024
#define RULE_MAX 64
#define SUBJECT_MAX 256

typedef struct error_slot {
  leir_error pub;
  char message[MESSAGE_MAX];
  char rule[RULE_MAX];
  char subject[SUBJECT_MAX];
  uint64_t sequence; /* leir_error_sequence() */
} error_slot;

/* Per-thread, so distinct threads with distinct handles never interfere. */
static _Thread_local error_slot last_error;
/* Errors recorded on this thread (leir_error.sequence); survives clearing so
 * that a binding can tell whether a call wrote the record. */
static _Thread_local uint64_t error_sequence;

static void copy_text(char *dst, size_t cap, const char *src) {
  if (!src) src = "";
  size_t n = strlen(src);
  if (n >= cap) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

const leir_error *leir_error_last(void) {
  error_slot *e = &last_error;
  e->pub.message = e->message;
  e->pub.rule = e->rule;
  e->pub.subject = e->subject;
  return &e->pub;
}

uint64_t leir_error_sequence(void) { return last_error.sequence; }

void leir_error_clear(void) {
  error_slot *e = &last_error;
  e->pub.status = LEIR_OK;
  e->pub.line = e->pub.column = 0;
  e->message[0] = e->rule[0] = e->subject[0] = '\0';
}

leir_status leir__error_set(leir_status status, const char *rule, const char *subject,
                            uint32_t line, uint32_t column, const char *message) {
  error_slot *e = &last_error;
  e->pub.status = status;
  e->sequence = ++error_sequence;
  e->pub.line = line;
  e->pub.column = column;
  copy_text(e->rule, sizeof e->rule, rule);
  copy_text(e->subject, sizeof e->subject, subject);
  copy_text(e->message, sizeof e->message, message ? message : leir_status_message(status));
  return status;
}

leir_status leir__error(leir_status status, const char *rule, const char *subject, uint32_t line,
                        uint32_t column, const char *fmt, ...) {
  char buf[MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return leir__error_set(status, rule, subject, line, column, buf);
}

leir_status leir__error_nomem(void) {
  return leir__error_set(LEIR_ERR_NOMEM, "nomem", NULL, 0, 0, "out of memory");
}

void leir__error_save(leir__error_state *s) {
  error_slot *e = &last_error;
  s->status = e->pub.status;
  s->line = e->pub.line;
  s->column = e->pub.column;
  s->sequence = e->sequence;
  memcpy(s->message, e->message, sizeof s->message);
  memcpy(s->rule, e->rule, sizeof s->rule);
  memcpy(s->subject, e->subject, sizeof s->subject);
}

void leir__error_restore(const leir__error_state *s) {
  leir__error_set(s->status, s->rule, s->subject, s->line, s->column, s->message);
  /* The record is the saved one again, so it keeps the saved sequence: a
   * caller comparing sequences sees that nothing was recorded for it. */
  last_error.sequence = s->sequence;
}

leir_status leir__error_arg(const char *subject, const char *fmt, ...) {
  char buf[MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return leir__error_set(LEIR_ERR_ARGUMENT, "argument", subject, 0, 0, buf);
}
