/* Files of a dataset build: atomic writes (a temporary file in the same
 * directory, fsync, rename), whole-file reads, directories, and the small
 * JSON writers the records share. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ds.h"
#include "error.h"
#include "input.h"

void leir__ds_host(char *buf, size_t cap) {
  if (gethostname(buf, cap) != 0) buf[0] = '\0';
  buf[cap - 1] = '\0';
  for (char *p = buf; *p; p++)
    if (*p == '/' || *p == '.') *p = '_';
}

void leir__ds_clean_tmp(const char *dir) {
  char host[64];
  leir__ds_host(host, sizeof host);
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    /* NAME.tmp.HOST.PID of a writer on this host that no longer runs */
    const char *t = strstr(e->d_name, ".tmp.");
    if (!t || strncmp(t + 5, host, strlen(host)) || t[5 + strlen(host)] != '.') continue;
    char *end;
    long pid = strtol(t + 6 + strlen(host), &end, 10);
    if (*end || pid <= 0 || (kill((pid_t)pid, 0) == 0 || errno != ESRCH)) continue;
    char *path = leir__ds_join(dir, e->d_name);
    if (path) unlink(path);
    free(path);
  }
  closedir(d);
}

char *leir__ds_join(const char *dir, const char *name) {
  size_t a = strlen(dir), b = strlen(name);
  char *p = malloc(a + b + 2);
  if (!p) return NULL;
  memcpy(p, dir, a);
  p[a] = '/';
  memcpy(p + a + 1, name, b + 1);
  return p;
}

leir_status leir__ds_mkdirs(const char *path) {
  char *p = strdup(path);
  if (!p) return leir__error_nomem();
  for (char *s = p + 1; ; s++) {
    if (*s == '/' || *s == '\0') {
      char c = *s;
      *s = '\0';
      if (mkdir(p, 0777) != 0 && errno != EEXIST) {
        leir_status st = leir__error(LEIR_ERR_IO, "dataset.io", p, 0, 0, "cannot create directory %s: %s",
                                     p, strerror(errno));
        free(p);
        return st;
      }
      *s = c;
      if (!c) break;
    }
  }
  free(p);
  return LEIR_OK;
}

leir_status leir__ds_write_atomic(const char *path, const char *data, size_t len) {
  char host[64];
  leir__ds_host(host, sizeof host);
  size_t n = strlen(path) + 40 + sizeof host;
  char *tmp = malloc(n);
  if (!tmp) return leir__error_nomem();
  snprintf(tmp, n, "%s.tmp.%s.%ld", path, host, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) goto fail;
  for (size_t off = 0; off < len;) {
    ssize_t w = write(fd, data + off, len - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      close(fd);
      goto fail;
    }
    off += (size_t)w;
  }
  if (fsync(fd) != 0 || close(fd) != 0) goto fail;
  if (rename(tmp, path) != 0) goto fail;
  free(tmp);
  return LEIR_OK;
fail:;
  int e = errno;
  unlink(tmp);
  free(tmp);
  return leir__error(LEIR_ERR_IO, "dataset.io", path, 0, 0, "cannot write %s: %s", path, strerror(e));
}

leir_status leir__ds_read_file(const char *path, char **out, size_t *len) {
  size_t n = 0;
  leir_status st = leir__read_regular_file(path, LEIR__DS_MAX_FILE, "dataset.io", out, &n);
  if (len) *len = n;
  return st;
}

void leir__ds_put_hex(leir__strbuf *b, uint64_t h) { leir__sb_printf(b, "\"%016llx\"", (unsigned long long)h); }

void leir__ds_put_str(leir__strbuf *b, const char *s) {
  if (!s) {
    leir__sb_puts(b, "null");
    return;
  }
  leir__sb_put_json_string(b, s, strlen(s));
}

void leir__ds_put_known(leir__strbuf *b, const leir_program *p) {
  size_t n = leir_program_signature_count(p);
  leir__sb_putc(b, '[');
  for (size_t i = 0; i < n; i++) {
    leir_tensor_decl d;
    leir_program_signature_get(p, i, &d);
    leir__sb_puts(b, i ? ",{\"name\":" : "{\"name\":");
    leir__ds_put_str(b, d.name);
    leir__sb_puts(b, ",\"dtype\":");
    leir__ds_put_str(b, leir_dtype_name(d.dtype));
    leir__sb_printf(b, ",\"role\":\"%s\",\"shape\":[", d.role == LEIR_ROLE_INPUT ? "input" : "output");
    for (uint32_t k = 0; k < d.rank; k++) leir__sb_printf(b, "%s%lld", k ? "," : "", (long long)d.shape[k]);
    leir__sb_puts(b, "]}");
  }
  leir__sb_putc(b, ']');
}
