/*
 * Sandboxed execution (verification.md §3). Generated code runs in a
 * separate runner program (backends/runner.c, installed as
 * libexecdir/leir-runner), started with posix_spawn, never by a fork of
 * the caller: a fork of a multi-threaded host copies locks other threads
 * hold (the dynamic loader's, malloc's) and a child that then dlopens a
 * kernel can deadlock or crash. The runner is persistent: it serves many
 * requests of one backend over a socket, keeps the kernels it loaded, and
 * is restarted when it dies (a crash, a trap, a timeout).
 *
 * A request travels in a shared memory file (memfd) whose descriptor is
 * passed over the socket: a record (progress, status, trap details,
 * message, the request itself) followed by the data. The runner applies
 * the request's limits (RLIMIT_AS, RLIMIT_CPU) before it loads or runs
 * anything; the caller enforces the wall-clock timeout by killing the
 * runner's process group. A crash, trap, hang or runaway allocation
 * becomes a status while the caller continues.
 */
#ifndef LEIR_SANDBOX_H
#define LEIR_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "leir/common.h"

/* Exit status of a runner that hit a run-time trap (details in the record). */
#define LEIR__EXIT_TRAP 86

#define LEIR__RUNNER_MAGIC 0x5249454cu /* "LEIR" */
#define LEIR__RUNNER_PROTOCOL 2u

enum { LEIR__REQ_EXEC = 1, LEIR__REQ_TIME = 2, LEIR__REQ_PING = 3, LEIR__REQ_BATCH = 4 };

/* leir__runner_buffer.known */
enum { LEIR__RB_TEMP = 0, LEIR__RB_KNOWN = 1, LEIR__RB_OUTPUT = 2 };

/* One buffer of a kernel in a request. Known buffers live in the shared
 * data at `offset` (plus set x per_set for EXEC, set x stride for BATCH);
 * intermediates are allocated by the runner and filled with the sentinel
 * of `dtype` before every run. In a BATCH request, known outputs
 * (LEIR__RB_OUTPUT) are filled with the sentinel of `dtype` on every set
 * before their kernel runs. */
typedef struct leir__runner_buffer {
  uint64_t offset;   /* known: byte offset in the data (set 0) */
  uint64_t bytes;    /* bytes (intermediate: to allocate) */
  uint64_t elements; /* intermediate, BATCH output: elements to fill */
  uint64_t stride;   /* BATCH, known: bytes from one set to the next */
  int32_t dtype;     /* intermediate, BATCH output: leir_dtype */
  int32_t known;     /* LEIR__RB_* */
} leir__runner_buffer;

typedef struct leir__runner_kernel {
  uint64_t path_off;    /* NUL-terminated object path in the data */
  uint64_t buffers_off; /* nbuffers leir__runner_buffer in the data (8-byte aligned) */
  uint32_t nbuffers;
  uint32_t reserved;
} leir__runner_kernel;

/* What the runner is asked to do (in the shared record). */
typedef struct leir__runner_request {
  uint32_t magic, protocol;
  uint32_t op;        /* LEIR__REQ_* */
  uint32_t nkernels;  /* EXEC: 1; BATCH: kernels run one after the other,
                       * each on nsets sets; unit = kernel x nsets + set */
  uint64_t kernels_off; /* nkernels leir__runner_kernel in the data */
  int32_t threads;
  uint32_t reserved;
  uint64_t nsets, per_set; /* EXEC: sets of known buffers, bytes apart */
  /* TIME: leir_bench_options fields and where the samples go */
  uint32_t warmup, bench_flags, min_runs, max_runs;
  double min_seconds, max_seconds;
  uint64_t samples_off, runs_off;
  /* limits the runner applies before it loads or runs anything (BATCH:
   * again before each kernel, so that each kernel gets them whole) */
  uint64_t memory_bytes; /* address-space growth (RLIMIT_AS) */
  double cpu_seconds;    /* RLIMIT_CPU backstop for this request (BATCH: kernel) */
} leir__runner_request;

/* The record at the start of the shared memory. */
typedef struct leir__sandbox_shared {
  volatile uint64_t progress; /* bumped by the runner after each unit of work */
  volatile int32_t unit;      /* the unit the runner is working on */
  volatile int32_t done;      /* 1 once the runner finished the request */
  volatile int32_t status;    /* the runner's leir_status (with `message`) */
  volatile int32_t trapped;   /* set by the first trap */
  int32_t trap_kind, trap_site;
  int64_t trap_value, trap_extent;
  char message[512];
  leir__runner_request req;
} leir__sandbox_shared;

/* Bytes of the record (the data starts there, 64-byte aligned). */
#define LEIR__SANDBOX_HEADER ((sizeof(leir__sandbox_shared) + 63) / 64 * 64)

typedef struct leir__sandbox {
  void *mem;
  size_t bytes;
  int fd;              /* the shared memory file (-1 when unmapped) */
  leir__sandbox_shared *shared;
  unsigned char *data; /* data_bytes after the record, 64-byte aligned */
  size_t data_bytes;
} leir__sandbox;

typedef struct leir__sandbox_limits {
  double unit_timeout_s;  /* wall clock per unit of work (progress resets it) */
  uint64_t memory_bytes;  /* address-space growth allowed (RLIMIT_AS) */
  double cpu_seconds;     /* RLIMIT_CPU backstop */
} leir__sandbox_limits;

/* Shared memory of data_bytes after the record, zeroed. */
leir_status leir__sandbox_map(leir__sandbox *s, size_t data_bytes);
void leir__sandbox_unmap(leir__sandbox *s);

/* ---- the runner (one per backend; not thread-safe, like the backend) ---- */

typedef struct leir__runner {
  char *path;       /* the runner program */
  pid_t pid;        /* 0 when not running; also its process group */
  int sock;         /* our end of the socket, -1 when not running */
  int err_fd;       /* the runner's stderr (a memory file), -1 when none */
  uint64_t requests;
} leir__runner;

/* Where the runner program is: `chosen` (leir_backend_options.runner;
 * NULL or "" = search), else $LEIR_RUNNER, else beside libleir's own code
 * (lib/self_path.h: libexecdir/leir-runner reached relatively from libdir or
 * bindir, or backends/runner/leir-runner in a build tree), else the
 * configured prefix/libexecdir/leir-runner. A named path that is not an
 * executable file is an error, not a reason to search on. A malloc'd path,
 * or NULL with LEIR_ERR_NO_DEVICE set (the message says where it looked). */
char *leir__runner_locate(const char *chosen);

/* Locates the runner (leir__runner_locate(chosen)). Starts nothing. */
leir_status leir__runner_init(leir__runner *r, const char *chosen);
/* Stops the runner (closing its socket ends it; it is killed if it does
 * not) and frees the path. */
void leir__runner_free(leir__runner *r);
/* Kills the runner's process group and reaps it (idempotent). */
void leir__runner_stop(leir__runner *r);

/* Sends the request in s->shared->req to the runner (starting it when
 * needed), waits with the watchdog, and maps the outcome to a status:
 * LEIR_OK when the runner finished the request (its own status is then
 * s->shared->status, and the last error is set from its message when not
 * OK); LEIR_ERR_TIMEOUT when killed by the watchdog or the CPU limit;
 * LEIR_ERR_RUNTIME for a trap (s->shared->trapped set), a signal or an
 * unexpected exit, with a message saying which (and what the runner wrote
 * to its stderr, if anything). `lim` overrides the limits of the request. */
leir_status leir__sandbox_run(leir__runner *r, leir__sandbox *s, const leir__sandbox_limits *lim);

/* In the runner: records a trap (first caller wins) and exits. */
_Noreturn void leir__sandbox_trap(leir__sandbox *s, int kind, int site, int64_t value,
                                  int64_t extent);
/* In the runner: records a failure status with a message (then return). */
void leir__sandbox_fail(leir__sandbox *s, leir_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- spawning helpers (no fork without exec anywhere in the library) ---- */

/* The wrapper mode of the runner program: `leir-runner --limits AS CPU --
 * PROGRAM ARGS...` sets RLIMIT_AS (bytes, 0 = none), RLIMIT_CPU (seconds,
 * 0 = none) and RLIMIT_CORE = 0, then executes PROGRAM (PATH search), so
 * the program and everything it starts run under the limits from their
 * first instruction. */
#define LEIR__RUNNER_LIMITS_FLAG "--limits"

#endif
