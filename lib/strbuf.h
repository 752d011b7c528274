/* Growable byte buffer with a sticky out-of-memory flag: appends after a
 * failure are no-ops, so callers check once at the end. */
#ifndef LEIR_STRBUF_H
#define LEIR_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct leir__strbuf {
  char *data;
  size_t len;
  size_t cap;
  int failed;
} leir__strbuf;

#define LEIR__STRBUF_INIT {NULL, 0, 0, 0}

int leir__sb_reserve(leir__strbuf *b, size_t extra);
/* Appends one byte; the common case (room left) is inline: the printer
 * calls this for most of its output. */
void leir__sb_putc_slow(leir__strbuf *b, char c);
static inline void leir__sb_putc(leir__strbuf *b, char c) {
  if (b->len + 1 < b->cap && !b->failed) {
    b->data[b->len++] = c;
    return;
  }
  leir__sb_putc_slow(b, c);
}
void leir__sb_put_slow(leir__strbuf *b, const char *s, size_t n);
static inline void leir__sb_put(leir__strbuf *b, const char *s, size_t n) {
  if (n < b->cap - b->len && !b->failed) { /* room for n bytes and the final NUL */
    memcpy(b->data + b->len, s, n);
    b->len += n;
    return;
  }
  leir__sb_put_slow(b, s, n);
}
void leir__sb_puts(leir__strbuf *b, const char *s);
void leir__sb_printf(leir__strbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void leir__sb_vprintf(leir__strbuf *b, const char *fmt, va_list ap);
void leir__sb_put_i64(leir__strbuf *b, int64_t v);
/* JSON string literal with quotes and escapes. */
void leir__sb_put_json_string(leir__strbuf *b, const char *s, size_t n);
/* NUL-terminates and hands the buffer over (caller frees with free/leir_free);
 * NULL if any append failed (the buffer is released). */
char *leir__sb_finish(leir__strbuf *b, size_t *len);
void leir__sb_release(leir__strbuf *b);

#endif
