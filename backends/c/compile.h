/* Running the system C compiler (backends/c/compile.c). */
#ifndef LEIR_COMPILE_H
#define LEIR_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "leir/common.h"
#include "strbuf.h"

/* Directories of the backend in $TMPDIR: "leir-XXXXXX" (one compilation)
 * and "leir-objects-XXXXXX" (a backend's objects). Each holds a
 * ".lock" file its owner keeps locked (flock) while it lives, so that a
 * later process can tell the directories of killed processes and sweep
 * them (leir__cc_sweep_tmp). */
#define LEIR__CC_DIR_PREFIX "leir-"
#define LEIR__CC_OBJECTS_PREFIX "leir-objects-"
#define LEIR__CC_LOCK_NAME ".lock"

typedef struct leir__cc {
  char *runner;      /* the runner program (its --limits mode starts the compiler) */
  char **args;       /* compiler, user flags, fixed flags; NULL-terminated */
  size_t nargs;
  char *flags_text;  /* every flag, space-joined (part of the cache key) */
  char *identity;    /* the compiler's --version output (part of the cache key) */
} leir__cc;

/* Splits `flags` on whitespace, accepts only flags that cannot change
 * floating-point results (an allow-list: optimization levels but -Ofast,
 * -march/-mtune/-mcpu, instruction-set extensions, -fopenmp, -g, -W...;
 * see leir__cc_flag_allowed), and asks the compiler for its identity.
 * `runner` is the runner program (copied). `contract` compiles with
 * -ffp-contract=fast instead of off (LEIR_BACKEND_FP_CONTRACT).
 * LEIR_ERR_NO_DEVICE when the compiler cannot be run; LEIR_ERR_ARGUMENT
 * for a refused flag. */
leir_status leir__cc_init(leir__cc *cc, const char *compiler, const char *flags, bool contract,
                          double timeout_s, const char *runner);
/* Whether one compiler flag is accepted (see leir__cc_init). */
bool leir__cc_flag_allowed(const char *flag, size_t len);
/* Creates "$TMPDIR/<prefix>XXXXXX" into dir and locks its .lock: returns
 * the lock's descriptor (close it after leir__cc_remove_dir), or -1 with
 * errno set. */
int leir__cc_private_dir(char *dir, size_t cap, const char *prefix);
/* Removes a private directory and the files in it. */
void leir__cc_remove_dir(const char *dir);
/* Removes the directories of $TMPDIR that killed processes left (their
 * .lock is not held); once per process. */
void leir__cc_sweep_tmp(void);
void leir__cc_free(leir__cc *cc);

/* One compilation in a private temporary directory. */
typedef struct leir__cc_job {
  char dir[256];     /* mkdtemp directory ("" once removed) */
  char so[320];      /* the shared object inside it */
  int lock_fd;       /* holds dir/.lock while the job lives (-1: none) */
  pid_t pid;         /* the compiler; also its process group */
  bool running;
  leir_status status;   /* after leir__cc_wait */
  leir__strbuf log;     /* compiler output (on failure) */
} leir__cc_job;

/* Writes the source and starts the compiler (an argument vector, no shell)
 * through the runner's --limits mode, so the compiler and every pass it
 * starts run under RLIMIT_AS = memory_bytes and RLIMIT_CPU = cpu_seconds
 * from their first instruction; in its own process group (a timeout kills
 * the group); with TMPDIR = the job's directory (its temporaries go
 * with it). */
leir_status leir__cc_start(const leir__cc *cc, const char *source, size_t len, uint64_t memory_bytes,
                           double cpu_seconds, leir__cc_job *job);
/* Waits for every started job (killing the process group of those past
 * the timeout) and sets their status: LEIR_OK, LEIR_ERR_COMPILE (log
 * filled), LEIR_ERR_TIMEOUT (log says so). */
void leir__cc_wait(leir__cc_job *jobs, size_t n, double timeout_s);
/* Kills what is left of the job's process group, removes the job's
 * directory and frees its log. */
void leir__cc_cleanup(leir__cc_job *job);

#endif
