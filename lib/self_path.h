/* Files beside libleir's own code: the kernel runner (libexecdir) and the
 * workload catalogue (datadir), found relative to the object that holds this
 * code, so that an installed tree can be moved (DESTDIR staging, relocatable
 * packages) and no path of the build tree is compiled in. */
#ifndef LEIR_SELF_PATH_H
#define LEIR_SELF_PATH_H

#include <stddef.h>

/* The installed directory a name is looked up in. */
typedef enum { LEIR__SELF_LIBEXECDIR, LEIR__SELF_DATADIR } leir__self_dir;

typedef enum {
  LEIR__SELF_NONE,      /* no place to look: the object holding libleir's code
                         * was not found, or it is in a build tree and no
                         * build path was given; `out` is "" */
  LEIR__SELF_MISSING,   /* `out` names a path that does not exist */
  LEIR__SELF_UNTRUSTED, /* `out` (resolved) exists, but it or its directory
                         * belongs to another user or is writable by others */
  LEIR__SELF_FOUND,     /* `out` is the resolved path of an existing, trusted file
                         * or directory (the caller checks which) */
} leir__self_result;

/* Where `name` (a relative path) is beside libleir's code. The object that
 * holds it is libleir.so (the shared object the library was loaded from) or
 * an executable linked with libleir.a (/proc/self/exe), resolved with
 * realpath. In a meson build tree (that object's directory is one of the
 * build's artifact directories, LEIR_BUILD_SUBDIRS, under a root holding
 * build.ninja) the result is `build_path` under the build root (NULL: look
 * nowhere); otherwise the installed layout: libexecdir/`name` or
 * datadir/`name`, reached from the object's directory by the relative path
 * meson computed from libdir (libleir.so) or bindir (an executable). A found
 * path is trusted only when it and its directory are owned by root or by the
 * owner of that object and not writable by others: nothing planted in a
 * shared directory (say /tmp/libexec beside a build in /tmp/build) is used.
 * Writes at most `cap` bytes to `out`. Safe from any thread; no state. */
leir__self_result leir__self_find(leir__self_dir dir, const char *name, const char *build_path,
                                  char *out, size_t cap);

#endif
