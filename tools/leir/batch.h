/* One program at a time, from a file or from each line of a batch: the
 * shape shared by fmt, check and hash. */
#ifndef LEIR_TOOL_BATCH_H
#define LEIR_TOOL_BATCH_H

#include "tool.h"

typedef struct batch_opts {
  bool lines;   /* --lines: every input line is a bare program */
  bool strict;  /* --strict: no whitespace */
  bool json;    /* --json */
  tool_sig sig; /* --input/--output */
} batch_opts;

/* Called with a parsed program (owned by the caller of fn). `line_no` is 0 in
 * single-program mode. Returns an exit code. */
typedef int (*batch_fn)(const char *label, unsigned line_no, leir_program *p, void *payload);
/* Called when a program fails to parse (after the default diagnostic, which
 * is skipped in JSON mode). */
typedef void (*batch_error_fn)(unsigned line_no, const leir_error *e, void *payload);

int batch_run(const char *path, const batch_opts *o, batch_fn fn, batch_error_fn on_error,
              void *payload);

/* Handles --lines, --strict, --json, --input, --output; returns 1 if the
 * option was one of them, 0 if not, -1 on a usage error. */
int batch_option(batch_opts *o, tool_args *a, const char *opt);

#endif
