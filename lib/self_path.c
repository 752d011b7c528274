/* Files beside libleir's own code (see self_path.h). */
#define _GNU_SOURCE 1 /* dl_iterate_phdr */
#include "self_path.h"

#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "install_layout.h" /* generated (lib/meson.build) */

typedef struct {
  uintptr_t addr;
  bool found;
  char name[PATH_MAX]; /* "" for the main program */
} object_search;

/* dl_iterate_phdr rather than dladdr: for code in the main program dladdr
 * names argv[0], which says nothing reliable about where the file is. */
static int find_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  object_search *s = data;
  for (size_t i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uintptr_t lo = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
    if (s->addr >= lo && s->addr - lo < (uintptr_t)ph->p_memsz) {
      s->found = true;
      snprintf(s->name, sizeof s->name, "%s", info->dlpi_name ? info->dlpi_name : "");
      return 1;
    }
  }
  return 0;
}

/* The resolved path of the object holding this code; *shared: a shared
 * object rather than the executable. */
static bool self_object(char path[PATH_MAX], bool *shared) {
  object_search s = {.addr = (uintptr_t)&self_object};
  dl_iterate_phdr(find_object, &s);
  char exe[PATH_MAX];
  bool have_exe = realpath("/proc/self/exe", exe) != NULL;
  if (s.found && s.name[0] && realpath(s.name, path)) {
    *shared = !have_exe || strcmp(path, exe) != 0;
    return true;
  }
  if (!have_exe) return false;
  memcpy(path, exe, sizeof exe);
  *shared = false;
  return true;
}

/* The build root when `dir` (resolved) is an artifact directory of a meson
 * build tree. */
static bool build_root(const char *dir, char root[PATH_MAX]) {
  static const char *const subdirs[] = LEIR_BUILD_SUBDIRS;
  size_t dl = strlen(dir);
  for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; i++) {
    size_t sl = strlen(subdirs[i]), rl = dl;
    if (sl) {
      if (dl <= sl || dir[dl - sl - 1] != '/' || strcmp(dir + dl - sl, subdirs[i])) continue;
      rl = dl - sl - 1;
    }
    char marker[PATH_MAX];
    if (snprintf(marker, sizeof marker, "%.*s/%s", (int)rl, dir, LEIR_BUILD_MARKER) >=
        (int)sizeof marker)
      continue;
    struct stat sb;
    if (stat(marker, &sb) == 0 && S_ISREG(sb.st_mode)) {
      snprintf(root, PATH_MAX, "%.*s", (int)rl, dir);
      return true;
    }
  }
  return false;
}

static bool owned_safely(const char *path, uid_t owner) {
  struct stat sb;
  return stat(path, &sb) == 0 && (sb.st_uid == 0 || sb.st_uid == owner) &&
         !(sb.st_mode & S_IWOTH);
}

/* `path` (resolved) and the directory holding it. */
static bool trusted(const char *path, uid_t owner) {
  if (!owned_safely(path, owner)) return false;
  char parent[PATH_MAX];
  snprintf(parent, sizeof parent, "%s", path);
  char *slash = strrchr(parent, '/');
  if (!slash) return false;
  slash[slash == parent] = '\0'; /* "/x" -> "/" */
  return owned_safely(parent, owner);
}

/* Removes "." and ".." components in place: `path` is absolute and its
 * directories are resolved (no symbolic links), so this is what the kernel
 * would do, and it also works for a path that does not exist (messages). */
static void normalize(char *path) {
  char *out = path; /* path[0] == '/' */
  const char *in = path;
  while (*in) {
    while (*in == '/') in++;
    const char *end = strchr(in, '/');
    size_t len = end ? (size_t)(end - in) : strlen(in);
    if (len == 0 || (len == 1 && in[0] == '.')) {
      /* nothing */
    } else if (len == 2 && in[0] == '.' && in[1] == '.') {
      while (out > path && *--out != '/') {
      }
    } else {
      *out++ = '/';
      memmove(out, in, len);
      out += len;
    }
    in += len;
  }
  if (out == path) *out++ = '/';
  *out = '\0';
}

leir__self_result leir__self_find(leir__self_dir dir, const char *name, const char *build_path,
                                  char *out, size_t cap) {
  if (cap) out[0] = '\0';
  char obj[PATH_MAX];
  bool shared;
  struct stat sb;
  if (!self_object(obj, &shared) || stat(obj, &sb) != 0) return LEIR__SELF_NONE;
  uid_t owner = sb.st_uid;
  char *slash = strrchr(obj, '/');
  if (!slash) return LEIR__SELF_NONE;
  slash[slash == obj] = '\0'; /* obj is now its directory */
  char root[PATH_MAX], candidate[2 * PATH_MAX];
  int n;
  if (build_root(obj, root)) {
    if (!build_path) return LEIR__SELF_NONE;
    n = snprintf(candidate, sizeof candidate, "%s/%s", root, build_path);
  } else {
    const char *rel = dir == LEIR__SELF_LIBEXECDIR
                          ? (shared ? LEIR_LIBDIR_TO_LIBEXECDIR : LEIR_BINDIR_TO_LIBEXECDIR)
                          : (shared ? LEIR_LIBDIR_TO_DATADIR : LEIR_BINDIR_TO_DATADIR);
    n = snprintf(candidate, sizeof candidate, "%s/%s/%s", strcmp(obj, "/") ? obj : "", rel,
                 name);
  }
  if (n < 0 || (size_t)n >= sizeof candidate) return LEIR__SELF_NONE;
  normalize(candidate);
  char real[PATH_MAX];
  if (!realpath(candidate, real)) {
    snprintf(out, cap, "%s", candidate);
    return LEIR__SELF_MISSING;
  }
  snprintf(out, cap, "%s", real);
  return trusted(real, owner) ? LEIR__SELF_FOUND : LEIR__SELF_UNTRUSTED;
}
