/* Growable byte buffer with a sticky out-of-memory flag: once an append
 * fails the result is lost (leir__sb_finish returns NULL), so callers check
 * once at the end. */
#ifndef LEIR_STRBUF_H
#define LEIR_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

typedef struct leir__strbuf {
  char *data;
  size_t len;
  size_t cap;
  int failed;
} leir__strbuf;

#define LEIR__STRBUF_INIT {NULL, 0, 0, 0}

int leir__sb_reserve(leir__strbuf *b, size_t extra);
void leir__sb_put_slow(leir__strbuf *b, const char *s, size_t n);
void leir__sb_puts(leir__strbuf *b, const char *s);

/* Appends are inline while the buffer has room (the printer appends a few
 * bytes at a time); growing goes through leir__sb_reserve. */
static inline void leir__sb_putc(leir__strbuf *b, char c) {
  if (b->len + 1 < b->cap) {
    b->data[b->len++] = c;
    return;
  }
  leir__sb_put_slow(b, &c, 1);
}

static inline void leir__sb_put(leir__strbuf *b, const char *s, size_t n) {
  if (n < b->cap - b->len) { /* room for n bytes and the final NUL */
    char *d = b->data + b->len;
    for (size_t i = 0; i < n; i++) d[i] = s[i];
    b->len += n;
    return;
  }
  leir__sb_put_slow(b, s, n);
}
void leir__sb_printf(leir__strbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void leir__sb_vprintf(leir__strbuf *b, const char *fmt, va_list ap);
void leir__sb_put_i64(leir__strbuf *b, int64_t v);
/* JSON string literal with quotes and escapes. */
void leir__sb_put_json_string(leir__strbuf *b, const char *s, size_t n);
/* YAML double-quoted scalar: like JSON, and code points YAML does not allow
 * raw or that break lines (DEL, C1 controls, U+2028/U+2029, U+FEFF,
 * U+FFFE/U+FFFF) are escaped. `s` must be
 * valid UTF-8 (see leir__utf8_valid). */
void leir__sb_put_yaml_string(leir__strbuf *b, const char *s, size_t n);
/* Length of the UTF-8 sequence at s (n bytes available) and its code point;
 * 0 when the bytes are not a valid, shortest-form sequence. */
size_t leir__utf8_next(const char *s, size_t n, uint32_t *cp);
int leir__utf8_valid(const char *s, size_t n);
/* NUL-terminates and hands the buffer over (caller frees with free/leir_free);
 * NULL if any append failed (the buffer is released). */
char *leir__sb_finish(leir__strbuf *b, size_t *len);
void leir__sb_release(leir__strbuf *b);

#endif
