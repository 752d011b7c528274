/* Running the system C compiler (backends/c/compile.c). */
#ifndef LEIR_COMPILE_H
#define LEIR_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "leir/common.h"
#include "strbuf.h"

typedef struct leir__cc {
  char **args;       /* compiler, user flags, fixed flags; NULL-terminated */
  size_t nargs;
  char *flags_text;  /* every flag, space-joined (part of the cache key) */
  char *identity;    /* the compiler's --version output (part of the cache key) */
} leir__cc;

/* Splits `flags` on whitespace, refuses flags that break bitwise
 * reproducibility (-ffast-math, -Ofast, ...), and asks the compiler for its
 * identity. LEIR_ERR_NO_DEVICE when the compiler cannot be run;
 * LEIR_ERR_ARGUMENT for a refused flag. */
leir_status leir__cc_init(leir__cc *cc, const char *compiler, const char *flags,
                          double timeout_s);
void leir__cc_free(leir__cc *cc);

/* One compilation in a private temporary directory. */
typedef struct leir__cc_job {
  char dir[256];     /* mkdtemp directory ("" once removed) */
  char so[320];      /* the shared object inside it */
  pid_t pid;
  bool running;
  leir_status status;   /* after leir__cc_wait */
  leir__strbuf log;     /* compiler output (on failure) */
} leir__cc_job;

/* Writes the source and starts the compiler (an argument vector, no shell).
 * On Linux the compiler gets RLIMIT_AS = memory_bytes and RLIMIT_CPU =
 * cpu_seconds right after it starts (prlimit), so a pathological source
 * cannot exhaust the machine. */
leir_status leir__cc_start(const leir__cc *cc, const char *source, size_t len, uint64_t memory_bytes,
                           double cpu_seconds, leir__cc_job *job);
/* Waits for every started job (killing those past the timeout) and sets
 * their status: LEIR_OK, LEIR_ERR_COMPILE (log filled), LEIR_ERR_TIMEOUT. */
void leir__cc_wait(leir__cc_job *jobs, size_t n, double timeout_s);
/* Removes the job's directory and frees its log. */
void leir__cc_cleanup(leir__cc_job *job);

#endif
