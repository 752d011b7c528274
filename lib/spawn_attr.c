#include "spawn_attr.h"

#include <signal.h>

void leir__spawnattr_isolate(posix_spawnattr_t *attr) {
  sigset_t all, none;
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(attr, &all);
  posix_spawnattr_setsigmask(attr, &none);
  posix_spawnattr_setpgroup(attr, 0);
  posix_spawnattr_setflags(attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                     POSIX_SPAWN_SETSIGMASK);
}
