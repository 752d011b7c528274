#include "strbuf.h"
#include "vec.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int leir__sb_reserve(leir__strbuf *b, size_t extra) {
  if (b->failed) return 0;
  if (extra > SIZE_MAX - b->len - 1) {
    b->failed = 1;
    return 0;
  }
  if (!leir__vec_grow((void **)&b->data, &b->cap, b->len + extra + 1, 1, 256)) {
    b->failed = 1;
    return 0;
  }
  return 1;
}

void leir__sb_put_slow(leir__strbuf *b, const char *s, size_t n) {
  if (!leir__sb_reserve(b, n)) return;
  if (n) memcpy(b->data + b->len, s, n);
  b->len += n;
}

void leir__sb_puts(leir__strbuf *b, const char *s) { leir__sb_put(b, s, strlen(s)); }

void leir__sb_vprintf(leir__strbuf *b, const char *fmt, va_list ap) {
  if (b->failed) return;
  va_list ap2;
  va_copy(ap2, ap);
  char small[256];
  int n = vsnprintf(small, sizeof small, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    b->failed = 1;
    return;
  }
  if ((size_t)n < sizeof small) {
    leir__sb_put(b, small, (size_t)n);
    return;
  }
  if (!leir__sb_reserve(b, (size_t)n)) return;
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

void leir__sb_printf(leir__strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  leir__sb_vprintf(b, fmt, ap);
  va_end(ap);
}

void leir__sb_put_i64(leir__strbuf *b, int64_t v) {
  char tmp[24];
  int i = (int)sizeof tmp;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    tmp[--i] = (char)('0' + (u % 10));
    u /= 10;
  } while (u);
  if (v < 0) tmp[--i] = '-';
  leir__sb_put(b, tmp + i, sizeof tmp - (size_t)i);
}

void leir__sb_put_json_string(leir__strbuf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  leir__sb_putc(b, '"');
  size_t start = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    leir__sb_put(b, s + start, i - start);
    start = i + 1;
    switch (c) {
      case '"': leir__sb_put(b, "\\\"", 2); break;
      case '\\': leir__sb_put(b, "\\\\", 2); break;
      case '\n': leir__sb_put(b, "\\n", 2); break;
      case '\t': leir__sb_put(b, "\\t", 2); break;
      case '\r': leir__sb_put(b, "\\r", 2); break;
      default: {
        char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        leir__sb_put(b, u, 6);
      }
    }
  }
  leir__sb_put(b, s + start, n - start);
  leir__sb_putc(b, '"');
}

size_t leir__utf8_next(const char *s, size_t n, uint32_t *cp) {
  const unsigned char *u = (const unsigned char *)s;
  if (n == 0) return 0;
  if (u[0] < 0x80) {
    *cp = u[0];
    return 1;
  }
  size_t len = u[0] >= 0xF0 ? 4 : u[0] >= 0xE0 ? 3 : u[0] >= 0xC0 ? 2 : 0;
  if (len == 0 || len > n || u[0] > 0xF4) return 0;
  uint32_t v = u[0] & (0x7Fu >> len);
  for (size_t i = 1; i < len; i++) {
    if ((u[i] & 0xC0) != 0x80) return 0;
    v = (v << 6) | (u[i] & 0x3F);
  }
  static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < min[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return len;
}

int leir__utf8_valid(const char *s, size_t n) {
  uint32_t cp;
  for (size_t i = 0; i < n;) {
    size_t k = leir__utf8_next(s + i, n - i, &cp);
    if (!k) return 0;
    i += k;
  }
  return 1;
}

void leir__sb_put_yaml_string(leir__strbuf *b, const char *s, size_t n) {
  leir__sb_putc(b, '"');
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t k = leir__utf8_next(s + i, n - i, &cp);
    if (!k) {
      leir__sb_puts(b, "\\ufffd"); /* not UTF-8: YAML cannot carry the byte */
      i++;
      continue;
    }
    /* U+2028/U+2029 are printable but break lines inside a scalar */
    bool printable = cp >= 0x20 && cp != 0x7F && !(cp >= 0x80 && cp <= 0x9F) && cp != 0x2028 &&
                     cp != 0x2029 && cp != 0xFEFF && cp != 0xFFFE && cp != 0xFFFF;
    if (cp == '"' || cp == '\\') {
      leir__sb_putc(b, '\\');
      leir__sb_putc(b, (char)cp);
    } else if (printable) {
      leir__sb_put(b, s + i, k);
    } else {
      leir__sb_printf(b, "\\u%04x", (unsigned)cp);
    }
    i += k;
  }
  leir__sb_putc(b, '"');
}

char *leir__sb_finish(leir__strbuf *b, size_t *len) {
  if (!b->failed) leir__sb_reserve(b, 0);
  if (b->failed) {
    leir__sb_release(b);
    if (len) *len = 0;
    return NULL;
  }
  b->data[b->len] = '\0';
  char *out = b->data;
  if (len) *len = b->len;
  b->data = NULL;
  b->len = b->cap = 0;
  return out;
}

void leir__sb_release(leir__strbuf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->failed = 0;
}
