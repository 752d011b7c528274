/*
 * Shared plumbing of the `leir` command-line tool: argument parsing, input
 * reading (files, stdin, --lines batches), diagnostics in the
 * FILE:LINE:COL: error: MESSAGE form, and JSON output. The tool uses only the
 * public API. Exit codes follow design.md: 0 success, 1 invalid input or
 * failed check, 2 usage error, 3 backend/internal error.
 */
#ifndef LEIR_TOOL_H
#define LEIR_TOOL_H

#include <stdbool.h>
#include <stdio.h>

#include "leir/leir.h"

enum { EXIT_OK = 0, EXIT_INVALID = 1, EXIT_USAGE = 2, EXIT_INTERNAL = 3 };

typedef struct tool_command {
  const char *name;
  const char *synopsis; /* one line, after "leir " */
  const char *help;     /* full help text (options, examples) */
  int (*run)(int argc, char **argv);
} tool_command;

/* ---- arguments --------------------------------------------------------- */

/* A minimal option scanner: flags and options may appear anywhere; "--"
 * ends options. Positional arguments are collected in order. */
typedef struct tool_args {
  int argc;
  char **argv;
  int i;
  const char *cmd;
  char *positional[16];
  int npositional;
  bool dashdash; /* "--" seen: the rest are positionals */
} tool_args;

void tool_args_init(tool_args *a, const char *cmd, int argc, char **argv);
/* Returns the next option ("--pretty") or NULL when only positionals remain;
 * positionals met on the way are collected. */
const char *tool_args_next(tool_args *a);
/* Value of an option that takes one ("--seed 3" or "--seed=3"); NULL and a
 * usage message when missing. */
const char *tool_args_value(tool_args *a, const char *opt);
int tool_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- inputs ------------------------------------------------------------ */

/* Reads a whole file ("-" = stdin). Returns a malloc'd buffer or NULL with a
 * message on stderr. */
char *tool_read_all(const char *path, size_t *len);

/* The label used in diagnostics for a path ("<stdin>" for "-"). */
const char *tool_label(const char *path);

/* Loads one program from a path: .yaml/.yml program files, else LEIR text
 * (lenient: files may hold one nest per line). Prints a diagnostic and
 * returns NULL on error; *exit_code is set to the exit status to use. */
leir_program *tool_load_program(const char *path, int *exit_code);

/* Calls fn for every non-empty line of `path` (strict bare programs). fn gets
 * the 1-based line number and the line text. Returns the worst exit code. */
typedef int (*tool_line_fn)(const char *label, unsigned line_no, const char *text, size_t len,
                            void *payload);
int tool_for_each_line(const char *path, tool_line_fn fn, void *payload);

/* ---- diagnostics ------------------------------------------------------- */

/* FILE:LINE:COL: error: MESSAGE [rule]. `line_base` is added to the error
 * line when the program came from line `line_base + 1` of a batch. */
void tool_print_error(const char *label, unsigned line_base, const leir_error *e);
void tool_print_diagnostic(const char *label, unsigned line_base, const leir_diagnostic *d);
/* A strategy name that is not in the catalogue (after leir_strategy_find
 * or leir_step_parse failed with LEIR_ERR_NOT_FOUND): reports the library's
 * message (it suggests the closest name) and returns EXIT_USAGE, the same in
 * every command. */
int tool_unknown_strategy(const char *cmd);
/* Exit code for a failed library call. */
int tool_exit_for(leir_status st);

/* ---- JSON -------------------------------------------------------------- */

void tool_json_string(FILE *f, const char *s, size_t n);
/* {"status":...,"rule":...,"line":...,"column":...,"message":...,"subject":...} */
void tool_json_error(FILE *f, const leir_error *e, unsigned line_base);

/* With --json anywhere on the command line (main sets tool_json_mode), every
 * error is reported as one object {"line":N,"error":{...}} on stdout, where
 * N is tool_json_line (the batch line being processed, 0 otherwise), and
 * nothing goes to stderr. tool_print_error, tool_usage_error and input
 * errors follow this (with "file" after "line" when the error concerns an
 * input: {"line":N,"file":"x.leir","error":{...}}); commands that print
 * their own error objects set
 * tool_json_error_printed (tool_json_fail does), so main adds a generic
 * object only when a failing command printed none. */
extern bool tool_json_mode;
extern unsigned tool_json_line;
extern bool tool_json_error_printed;
void tool_json_fail(const char *file, const leir_error *e, unsigned line_base);

/* ---- signatures from the command line ---------------------------------- */

/* --input NAME:DTYPE:SHAPE / --output NAME:DTYPE:SHAPE (SHAPE like 2x8, or
 * "scalar"). Collected by tool_sig_option; applied with tool_sig_apply. */
typedef struct tool_sig {
  leir_tensor_decl decls[64];
  int64_t shapes[64][LEIR_MAX_RANK];
  char names[64][32];
  size_t n;
} tool_sig;

/* Returns 1 when `opt` was a signature option (consumed), 0 when not, -1 on
 * a usage error (already reported). */
int tool_sig_option(tool_sig *s, tool_args *a, const char *opt);
/* Applies the options (if any) to the program; reports errors. */
int tool_sig_apply(const tool_sig *s, leir_program *p, const char *label);

#endif
