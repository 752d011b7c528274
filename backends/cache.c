/*
 * Compilation cache on disk (verification.md §5). Keys are XXH3-64 of the
 * backend name and version, the compiler identity, the flags and the
 * lowered source; files are "<dir>/<16 hex digits><ext>", written to a
 * temporary name and renamed so concurrent processes never see a partial
 * artifact. Every failure is ignored: the cache only saves time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "backend.h"

uint64_t leir__cache_key(const leir__backend_ops *ops, const char *compiler_id, const char *flags,
                         const char *source, size_t source_len) {
  XXH3_state_t *st = XXH3_createState();
  if (!st) return 0;
  XXH3_64bits_reset(st);
  char head[64];
  int n = snprintf(head, sizeof head, "%s/%u", ops->name, ops->version);
  XXH3_64bits_update(st, head, (size_t)n + 1);
  XXH3_64bits_update(st, compiler_id ? compiler_id : "", compiler_id ? strlen(compiler_id) + 1 : 1);
  XXH3_64bits_update(st, flags ? flags : "", flags ? strlen(flags) + 1 : 1);
  XXH3_64bits_update(st, source, source_len);
  uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

bool leir__cache_path(char *buf, size_t cap, const char *dir, uint64_t key, const char *ext) {
  int n = snprintf(buf, cap, "%s/%016llx%s", dir, (unsigned long long)key, ext ? ext : "");
  return n > 0 && (size_t)n < cap;
}

static int write_all(int fd, const void *data, size_t len) {
  const char *p = data;
  while (len) {
    ssize_t w = write(fd, p, len);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

/* Writes through a unique temporary file in the directory, then renames. */
static void store(const char *dir, uint64_t key, const char *ext, const void *data, size_t len,
                  int src_fd) {
  char final[4096], tmp[4096];
  if (!dir || !leir__cache_path(final, sizeof final, dir, key, ext)) return;
  mkdir(dir, 0700); /* may already exist */
  int n = snprintf(tmp, sizeof tmp, "%s/.tmp-%016llx-XXXXXX", dir, (unsigned long long)key);
  if (n <= 0 || (size_t)n >= sizeof tmp) return;
  int fd = mkstemp(tmp);
  if (fd < 0) return;
  int bad = 0;
  if (data) {
    bad = write_all(fd, data, len);
  } else {
    char chunk[65536];
    for (;;) {
      ssize_t r = read(src_fd, chunk, sizeof chunk);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        bad = r < 0;
        break;
      }
      if (write_all(fd, chunk, (size_t)r)) {
        bad = 1;
        break;
      }
    }
  }
  if (close(fd) != 0) bad = 1;
  if (bad || rename(tmp, final) != 0) unlink(tmp);
}

void leir__cache_store_file(const char *dir, uint64_t key, const char *ext, const char *src) {
  int fd = open(src, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  store(dir, key, ext, NULL, 0, fd);
  close(fd);
}

void leir__cache_store_bytes(const char *dir, uint64_t key, const char *ext, const void *data,
                             size_t len) {
  store(dir, key, ext, data, len, -1);
}

void *leir__cache_load_bytes(const char *dir, uint64_t key, const char *ext, size_t *len) {
  char path[4096];
  *len = 0;
  if (!dir || !leir__cache_path(path, sizeof path, dir, key, ext)) return NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat sb;
  char *buf = NULL;
  if (fstat(fd, &sb) == 0 && sb.st_size > 0 && (uint64_t)sb.st_size < ((uint64_t)1 << 31)) {
    buf = malloc((size_t)sb.st_size);
    size_t got = 0;
    while (buf && got < (size_t)sb.st_size) {
      ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += (size_t)r;
    }
    if (buf && got != (size_t)sb.st_size) {
      free(buf);
      buf = NULL;
    } else if (buf) {
      *len = got;
    }
  }
  close(fd);
  return buf;
}
