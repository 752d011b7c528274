/* The one bounded reader of input files (lib/input.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "input.h"

static leir_status io_error(const char *rule, const char *path, int fd, const char *what) {
  int e = errno;
  if (fd >= 0) close(fd);
  return leir__error(LEIR_ERR_IO, rule, path, 0, 0, "cannot %s %s: %s", what, path, strerror(e));
}

leir_status leir__read_regular_file(const char *path, size_t max, const char *rule, char **out,
                                    size_t *len) {
  *out = NULL;
  if (len) *len = 0;
  /* O_NONBLOCK: opening a FIFO without a writer would otherwise wait for
   * one forever (and SIGTERM handlers that only set a flag never end it) */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int e = errno;
    return leir__error(e == ENOENT ? LEIR_ERR_NOT_FOUND : LEIR_ERR_IO, rule, path, 0, 0,
                       "cannot open %s: %s", path, strerror(e));
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0) return io_error(rule, path, fd, "examine");
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return leir__error(LEIR_ERR_IO, rule, path, 0, 0, "%s is not a regular file (%s)", path,
                       S_ISDIR(sb.st_mode)    ? "a directory"
                       : S_ISFIFO(sb.st_mode) ? "a FIFO"
                       : S_ISCHR(sb.st_mode)  ? "a character device"
                       : S_ISBLK(sb.st_mode)  ? "a block device"
                       : S_ISSOCK(sb.st_mode) ? "a socket"
                                              : "not a file");
  }
  /* a regular file never blocks; reads of it are ordinary again */
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  if (sb.st_size < 0 || (unsigned long long)sb.st_size > (unsigned long long)max) {
    close(fd);
    return leir__error(LEIR_ERR_LIMIT, "limit.input-size", path, 0, 0,
                       "%s is larger than the limit of %zu bytes (%lld bytes)", path, max,
                       (long long)sb.st_size);
  }
  /* the size from fstat is a hint (the file may change while it is read):
   * read until end of file, never more than max + 1 bytes */
  size_t cap = (size_t)sb.st_size + 1, n = 0;
  if (cap < 4096) cap = 4096;
  if (cap > max + 1) cap = max + 1;
  char *buf = malloc(cap + 1);
  if (!buf) {
    close(fd);
    return leir__error_nomem();
  }
  for (;;) {
    if (n == cap) {
      if (n > max) break;
      size_t nc = cap > max / 2 ? max + 1 : cap * 2;
      char *bigger = realloc(buf, nc + 1);
      if (!bigger) {
        free(buf);
        close(fd);
        return leir__error_nomem();
      }
      buf = bigger;
      cap = nc;
    }
    ssize_t got = read(fd, buf + n, cap - n);
    if (got < 0) {
      if (errno == EINTR) continue;
      free(buf);
      return io_error(rule, path, fd, "read");
    }
    if (got == 0) break;
    n += (size_t)got;
  }
  close(fd);
  if (n > max) {
    free(buf);
    return leir__error(LEIR_ERR_LIMIT, "limit.input-size", path, 0, 0,
                       "%s grew past the limit of %zu bytes while it was read", path, max);
  }
  buf[n] = '\0';
  *out = buf;
  if (len) *len = n;
  return LEIR_OK;
}
