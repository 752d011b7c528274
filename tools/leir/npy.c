/* NumPy .npy version 1.0 reading and writing (npy.h). */
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAX_FILE (1ull << 30)

const char *npy_descr(leir_dtype dt) {
  switch (dt) {
    case LEIR_F16: return "<f2";
    case LEIR_F32: return "<f4";
    case LEIR_F64: return "<f8";
    case LEIR_I8: return "|i1";
    case LEIR_I16: return "<i2";
    case LEIR_I32: return "<i4";
    case LEIR_I64: return "<i8";
    case LEIR_U8: return "|u1";
    case LEIR_BOOL: return "|b1";
    default: return NULL;
  }
}

static int fail(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

static const char *skip_ws(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  return p;
}

/* Matches a quoted key ('descr' or "descr") followed by ':'. */
static const char *key(const char *p, const char *end, char *name, size_t cap) {
  p = skip_ws(p, end);
  if (p >= end || (*p != '\'' && *p != '"')) return NULL;
  char q = *p++;
  size_t n = 0;
  while (p < end && *p != q) {
    if (n + 1 >= cap) return NULL;
    name[n++] = *p++;
  }
  if (p >= end) return NULL;
  name[n] = 0;
  p = skip_ws(p + 1, end);
  if (p >= end || *p != ':') return NULL;
  return skip_ws(p + 1, end);
}

int npy_parse(const unsigned char *file, size_t len, leir_dtype dt, const int64_t *shape,
              uint32_t rank, void *out, char *err, size_t errlen) {
  const char *want = npy_descr(dt);
  if (!want) return fail(err, errlen, "numpy has no %s element type", leir_dtype_name(dt));
  if (len < 10 || memcmp(file, "\x93NUMPY", 6))
    return fail(err, errlen, "not a .npy file (no \\x93NUMPY magic)");
  if (file[6] != 1 || file[7] != 0)
    return fail(err, errlen, "npy format version %u.%u; only 1.0 is read", file[6], file[7]);
  size_t hlen = (size_t)file[8] | ((size_t)file[9] << 8);
  if (10 + hlen > len) return fail(err, errlen, "truncated header");
  const char *h = (const char *)file + 10, *end = h + hlen;
  while (end > h && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\0')) end--;
  const char *p = skip_ws(h, end);
  if (p >= end || *p != '{' || end[-1] != '}') return fail(err, errlen, "header is not a dict");
  p++;
  end--;
  bool have_descr = false, have_order = false, have_shape = false;
  int64_t got[32];
  uint32_t grank = 0;
  while (1) {
    p = skip_ws(p, end);
    if (p >= end) break;
    char name[32];
    p = key(p, end, name, sizeof name);
    if (!p) return fail(err, errlen, "malformed header");
    if (!strcmp(name, "descr")) {
      if (p >= end || (*p != '\'' && *p != '"')) return fail(err, errlen, "descr is not a string");
      char q = *p++;
      const char *s = p;
      while (p < end && *p != q) p++;
      if (p >= end) return fail(err, errlen, "malformed descr");
      size_t n = (size_t)(p - s);
      char d[16];
      if (n >= sizeof d) return fail(err, errlen, "unsupported descr");
      memcpy(d, s, n);
      d[n] = 0;
      /* single-byte types may be written with '|' or '<' or '=' */
      bool ok = !strcmp(d, want) ||
                (want[0] == '|' && (d[0] == '<' || d[0] == '=') && !strcmp(d + 1, want + 1));
      if (!ok)
        return fail(err, errlen, "element type '%s', expected '%s' (%s; little-endian only)", d,
                    want, leir_dtype_name(dt));
      p++;
      have_descr = true;
    } else if (!strcmp(name, "fortran_order")) {
      if (end - p >= 5 && !strncmp(p, "False", 5)) {
        p += 5;
      } else if (end - p >= 4 && !strncmp(p, "True", 4)) {
        return fail(err, errlen, "Fortran order; only C order is read");
      } else {
        return fail(err, errlen, "malformed fortran_order");
      }
      have_order = true;
    } else if (!strcmp(name, "shape")) {
      if (p >= end || *p != '(') return fail(err, errlen, "shape is not a tuple");
      p++;
      while (1) {
        p = skip_ws(p, end);
        if (p < end && *p == ')') {
          p++;
          break;
        }
        if (p >= end || *p < '0' || *p > '9') return fail(err, errlen, "malformed shape");
        int64_t v = 0;
        while (p < end && *p >= '0' && *p <= '9') {
          if (v > (INT64_MAX - 9) / 10) return fail(err, errlen, "extent too large");
          v = v * 10 + (*p++ - '0');
        }
        if (grank == 32) return fail(err, errlen, "more than 32 dimensions");
        got[grank++] = v;
        p = skip_ws(p, end);
        if (p < end && *p == ',') p++;
      }
      have_shape = true;
    } else {
      return fail(err, errlen, "unknown header key '%s'", name);
    }
    p = skip_ws(p, end);
    if (p < end && *p == ',') p++;
  }
  if (!have_descr || !have_order || !have_shape)
    return fail(err, errlen, "header lacks descr, fortran_order or shape");
  bool same = grank == rank;
  for (uint32_t r = 0; same && r < rank; r++) same = got[r] == shape[r];
  if (!same) {
    char a[256] = "", b[256] = "";
    size_t na = 0, nb = 0;
    for (uint32_t r = 0; r < grank && na + 24 < sizeof a; r++)
      na += (size_t)snprintf(a + na, sizeof a - na, "%s%lld", r ? "," : "", (long long)got[r]);
    for (uint32_t r = 0; r < rank && nb + 24 < sizeof b; r++)
      nb += (size_t)snprintf(b + nb, sizeof b - nb, "%s%lld", r ? "," : "", (long long)shape[r]);
    return fail(err, errlen, "shape (%s), expected (%s)", a, b);
  }
  uint64_t elems = 1;
  for (uint32_t r = 0; r < rank; r++) elems *= (uint64_t)shape[r];
  uint64_t bytes = elems * leir_dtype_size(dt);
  if (len - 10 - hlen != bytes)
    return fail(err, errlen, "%zu bytes of data, expected %llu", len - 10 - hlen,
                (unsigned long long)bytes);
  memcpy(out, file + 10 + hlen, (size_t)bytes);
  if (dt == LEIR_BOOL)
    for (uint64_t i = 0; i < elems; i++)
      if (((unsigned char *)out)[i] > 1) return fail(err, errlen, "bool element not 0 or 1");
  return 0;
}

int npy_read(const char *path, leir_dtype dt, const int64_t *shape, uint32_t rank, void *out,
             char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f) return fail(err, errlen, "cannot open: %s", strerror(errno));
  size_t cap = 1 << 16, len = 0;
  unsigned char *buf = malloc(cap);
  int rc = 0;
  while (buf) {
    if (len == cap) {
      if (cap >= NPY_MAX_FILE) {
        rc = fail(err, errlen, "file larger than 1 GiB");
        break;
      }
      unsigned char *nb = realloc(buf, cap * 2);
      if (!nb) break;
      buf = nb;
      cap *= 2;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  if (!buf) rc = fail(err, errlen, "out of memory");
  if (rc == 0 && ferror(f)) rc = fail(err, errlen, "read error");
  fclose(f);
  if (rc == 0) rc = npy_parse(buf, len, dt, shape, rank, out, err, errlen);
  free(buf);
  return rc;
}

int npy_write(const char *path, leir_dtype dt, const int64_t *shape, uint32_t rank,
              const void *data, char *err, size_t errlen) {
  const char *descr = npy_descr(dt);
  if (!descr) return fail(err, errlen, "numpy has no %s element type", leir_dtype_name(dt));
  char h[1024];
  int n = snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (uint32_t r = 0; r < rank && n < 900; r++)
    n += snprintf(h + n, sizeof h - (size_t)n, "%lld%s", (long long)shape[r],
                  rank == 1 ? "," : r + 1 < rank ? ", " : "");
  n += snprintf(h + n, sizeof h - (size_t)n, "), }");
  /* pad with spaces so that the data starts on a 64-byte boundary */
  size_t total = 10 + (size_t)n + 1;
  size_t pad = (64 - total % 64) % 64;
  memset(h + n, ' ', pad);
  n += (int)pad;
  h[n++] = '\n';
  uint64_t elems = 1;
  for (uint32_t r = 0; r < rank; r++) elems *= (uint64_t)shape[r];
  FILE *f = fopen(path, "wb");
  if (!f) return fail(err, errlen, "cannot create: %s", strerror(errno));
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 255),
                           (unsigned char)(n >> 8)};
  bool ok = fwrite(pre, 1, 10, f) == 10 && fwrite(h, 1, (size_t)n, f) == (size_t)n &&
            fwrite(data, leir_dtype_size(dt), (size_t)elems, f) == (size_t)elems;
  if (fclose(f) != 0) ok = false;
  if (!ok) return fail(err, errlen, "write error");
  return 0;
}
