/*
 * Sandboxed execution (verification.md §3): work runs in a forked child
 * with a wall-clock watchdog and memory/CPU rlimits; data travels through a
 * MAP_SHARED mapping. A crash, trap, hang or runaway allocation in the
 * child becomes a status while the caller continues.
 */
#ifndef LEIR_SANDBOX_H
#define LEIR_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "leir/common.h"

/* Exit status of a child that hit a run-time trap (details in the record). */
#define LEIR__EXIT_TRAP 86

/* The record at the start of the shared mapping. */
typedef struct leir__sandbox_shared {
  volatile uint64_t progress; /* bumped by the child after each unit of work */
  volatile int32_t unit;      /* the unit the child is working on */
  volatile int32_t done;      /* 1 once the child finished */
  volatile int32_t status;    /* the child's leir_status (with `message`) */
  volatile int32_t trapped;   /* set by the first trap */
  int32_t trap_kind, trap_site;
  int64_t trap_value, trap_extent;
  char message[512];
} leir__sandbox_shared;

typedef struct leir__sandbox {
  void *mem;
  size_t bytes;
  leir__sandbox_shared *shared;
  unsigned char *data; /* data_bytes after the record, 64-byte aligned */
  size_t data_bytes;
} leir__sandbox;

typedef struct leir__sandbox_limits {
  double unit_timeout_s;  /* wall clock per unit of work (progress resets it) */
  uint64_t memory_bytes;  /* address-space growth allowed (RLIMIT_AS) */
  double cpu_seconds;     /* RLIMIT_CPU backstop */
} leir__sandbox_limits;

leir_status leir__sandbox_map(leir__sandbox *s, size_t data_bytes);
void leir__sandbox_unmap(leir__sandbox *s);

/* Runs in the child; must return normally (the sandbox then exits) or
 * trap through leir__sandbox_trap. */
typedef void (*leir__child_main)(void *ctx, leir__sandbox *s);

/* Forks and runs fn(ctx, s) in the child under `lim`, waits with the
 * watchdog. Returns LEIR_OK when the child finished normally (its own
 * status is then s->shared->status, with the last error set from its
 * message when not OK); LEIR_ERR_TIMEOUT when killed by the watchdog or
 * the CPU limit; LEIR_ERR_RUNTIME for a trap (s->shared->trapped set), a
 * signal or an unexpected exit, with a message saying which. */
leir_status leir__sandbox_run(leir__sandbox *s, const leir__sandbox_limits *lim,
                              leir__child_main fn, void *ctx);

/* In the child: records a trap (first caller wins) and exits. */
_Noreturn void leir__sandbox_trap(leir__sandbox *s, int kind, int site, int64_t value,
                                  int64_t extent);
/* In the child: records a failure status with a message (then return). */
void leir__sandbox_fail(leir__sandbox *s, leir_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
