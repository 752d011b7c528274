/*
 * One setting of posix_spawn attributes shared by every child libleir
 * starts (the compiler, the kernel runner, an LLM command).
 */
#ifndef LEIR_SPAWN_ATTR_H
#define LEIR_SPAWN_ATTR_H

#include <spawn.h>

/* Puts the child in a process group of its own (so a timeout can kill it
 * and everything it started as a whole), resets every signal to its
 * default action (the host process may ignore SIGPIPE or SIGCHLD, which a
 * compiler or a model server would inherit) and blocks none. */
void leir__spawnattr_isolate(posix_spawnattr_t *attr);

#endif
