/*
 * Compilation cache on disk (verification.md §5). Keys are XXH3-64 of the
 * backend name and version, the compiler identity, the flags and the
 * lowered source; files are "<dir>/<16 hex digits><ext>", written to a
 * temporary name (".tmp-*", locked while it is written), synced and
 * renamed so concurrent processes never see a partial artifact. Every
 * failure is ignored: the cache only saves time.
 *
 * Every entry starts with a header that binds it to its key: magic, key,
 * payload length and an XXH3 checksum of (extension, payload). An entry is
 * opened without following links and without blocking (O_NOFOLLOW |
 * O_NONBLOCK), must be a regular file, and is taken only when its header
 * matches; anything else at a key's path (a truncated or corrupted file,
 * an entry copied under another key, a link, a FIFO, a directory, an
 * unreadable file) is evicted and the artifact rebuilt. Temporaries whose
 * writer is gone (killed mid-store: their lock is free) are swept the
 * first time a process uses the directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
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

#define MAGIC "LEIRCAC1"
#define MAX_ENTRY ((uint64_t)1 << 30)

typedef struct header {
  char magic[8];
  uint64_t key;
  uint64_t length;   /* payload bytes after the header */
  uint64_t checksum; /* XXH3-64 of the extension and the payload, seeded with the key */
} header;

static uint64_t checksum(uint64_t key, const char *ext, const void *data, size_t len) {
  XXH3_state_t *st = XXH3_createState();
  if (!st) return 0;
  XXH3_64bits_reset_withSeed(st, key);
  XXH3_64bits_update(st, ext ? ext : "", ext ? strlen(ext) + 1 : 1);
  XXH3_64bits_update(st, data, len);
  uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

/* ---- sweeping temporaries of killed writers ----------------------------------- */

static pthread_mutex_t sweep_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t swept[16]; /* hashes of directories swept by this process */
static unsigned nswept, next_swept;

static void sweep(const char *dir) {
  uint64_t h = XXH3_64bits(dir, strlen(dir)) | 1;
  pthread_mutex_lock(&sweep_lock);
  bool done = false;
  for (unsigned i = 0; i < nswept && !done; i++) done = swept[i] == h;
  if (!done) {
    swept[next_swept++ % 16] = h;
    if (nswept < 16) nswept++;
  }
  pthread_mutex_unlock(&sweep_lock);
  if (done) return;
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char path[4096];
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, ".tmp-", 5) != 0) continue;
    int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (n <= 0 || (size_t)n >= sizeof path) continue;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd < 0) {
      if (lstat(path, &sb) == 0 && !S_ISDIR(sb.st_mode)) unlink(path);
      continue;
    }
    /* a regular temporary whose lock is free: its writer is gone */
    if (fstat(fd, &sb) == 0 && !S_ISDIR(sb.st_mode) &&
        (!S_ISREG(sb.st_mode) || flock(fd, LOCK_EX | LOCK_NB) == 0))
      unlink(path);
    close(fd);
  }
  closedir(d);
}

/* ---- storing -------------------------------------------------------------------- */

/* Writes header + data through a unique locked temporary file in the
 * directory, syncs it, renames it into place and syncs the directory. */
static void store(const char *dir, uint64_t key, const char *ext, const void *data, size_t len) {
  char final[4096], tmp[4096];
  if (!dir || !leir__cache_path(final, sizeof final, dir, key, ext) || len > MAX_ENTRY) return;
  mkdir(dir, 0700); /* may already exist */
  sweep(dir);
  int n = snprintf(tmp, sizeof tmp, "%s/.tmp-%016llx-XXXXXX", dir, (unsigned long long)key);
  if (n <= 0 || (size_t)n >= sizeof tmp) return;
  int fd = mkstemp(tmp);
  if (fd < 0) return;
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  flock(fd, LOCK_EX | LOCK_NB); /* held until close: the sweep leaves it alone */
  header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, MAGIC, 8);
  h.key = key;
  h.length = len;
  h.checksum = checksum(key, ext, data, len);
  bool bad = write_all(fd, &h, sizeof h) || write_all(fd, data, len) || fsync(fd) != 0;
  /* renamed while still locked, so no sweep can take it in between */
  if (bad || rename(tmp, final) != 0) {
    unlink(tmp);
    close(fd);
    return;
  }
  close(fd);
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
}

/* Reads a whole file (at most MAX_ENTRY bytes); NULL on failure. */
static void *read_all(int fd, size_t *len) {
  struct stat sb;
  *len = 0;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > MAX_ENTRY) return NULL;
  char *buf = malloc(sb.st_size ? (size_t)sb.st_size : 1);
  size_t got = 0;
  while (buf && got < (size_t)sb.st_size) {
    ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  if (buf && got != (size_t)sb.st_size) {
    free(buf);
    return NULL;
  }
  *len = got;
  return buf;
}

void leir__cache_store_file(const char *dir, uint64_t key, const char *ext, const char *src) {
  int fd = open(src, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  size_t len;
  void *data = read_all(fd, &len);
  close(fd);
  if (data) store(dir, key, ext, data, len);
  free(data);
}

void leir__cache_store_bytes(const char *dir, uint64_t key, const char *ext, const void *data,
                             size_t len) {
  store(dir, key, ext, data, len);
}

/* ---- loading -------------------------------------------------------------------- */

/* Removes what sits at a key's path (an empty directory at most: a
 * directory with contents is left alone). */
static void evict(const char *path) {
  struct stat sb;
  if (lstat(path, &sb) != 0) return;
  if (S_ISDIR(sb.st_mode))
    rmdir(path);
  else
    unlink(path);
}

/* The payload of the entry for key (malloc'd, *len bytes; the header is
 * skipped), or NULL: absent, or not a valid entry for this key (evicted). */
static char *load(const char *dir, uint64_t key, const char *ext, size_t *len, size_t *skip) {
  char path[4096];
  *len = *skip = 0;
  if (!dir || !leir__cache_path(path, sizeof path, dir, key, ext)) return NULL;
  sweep(dir);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT && errno != ENOTDIR) evict(path); /* a link, unreadable, ... */
    return NULL;
  }
  size_t total;
  char *buf = read_all(fd, &total);
  close(fd);
  header h;
  bool ok = buf && total >= sizeof h;
  if (ok) {
    memcpy(&h, buf, sizeof h);
    ok = memcmp(h.magic, MAGIC, 8) == 0 && h.key == key && h.length == total - sizeof h &&
         h.checksum == checksum(key, ext, buf + sizeof h, (size_t)h.length);
  }
  if (!ok) {
    free(buf);
    evict(path);
    return NULL;
  }
  *len = (size_t)h.length;
  *skip = sizeof h;
  return buf;
}

void *leir__cache_load_bytes(const char *dir, uint64_t key, const char *ext, size_t *len) {
  size_t skip;
  char *buf = load(dir, key, ext, len, &skip);
  if (!buf) return NULL;
  if (*len == 0) { /* nothing to return: an empty artifact is no artifact */
    free(buf);
    return NULL;
  }
  memmove(buf, buf + skip, *len);
  return buf;
}

bool leir__cache_load_file(const char *dir, uint64_t key, const char *ext, const char *dst) {
  size_t len, skip;
  char *buf = load(dir, key, ext, &len, &skip);
  if (!buf) return false;
  int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
  bool ok = out >= 0 && len > 0 && write_all(out, buf + skip, len) == 0;
  if (out >= 0 && close(out) != 0) ok = false;
  if (!ok && out >= 0) unlink(dst);
  free(buf);
  return ok;
}
