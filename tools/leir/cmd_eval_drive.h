/* `leir eval` with a model behind it (--endpoint or --llm-command): the
 * options that ask the model, and the run that appends its answers to the
 * answers file before it is scored (leir_eval_drive). */
#ifndef LEIR_TOOL_CMD_EVAL_DRIVE_H
#define LEIR_TOOL_CMD_EVAL_DRIVE_H

#define LEIR_EXPERIMENTAL
#include <stdbool.h>

#include "leir/experimental/dataset.h"
#include "leir/experimental/llm.h"
#include "llm_opts.h"
#include "tool.h"

typedef struct eval_drive_args {
  llm_opts m; /* the model and its sampling (shared with leir optimize) */
  leir_eval_drive_options o;
  uint32_t jobs;
  bool no_score;
} eval_drive_args;

void eval_drive_args_init(eval_drive_args *d);
/* 1: `opt` was one of the model options (taken, with its value); 0: not
 * one; -1: a usage error (reported). */
int eval_drive_option(eval_drive_args *d, tool_args *a, const char *opt);
/* Asks the model for the answers `answers_path` lacks; EXIT_OK or the exit
 * code of the failure (reported on stderr). */
int eval_drive_run(eval_drive_args *d, const char *dataset_dir, const char *answers_path);
/* A model was named. */
static inline bool eval_drive_wanted(const eval_drive_args *d) { return llm_opts_wanted(&d->m); }
/* The usage error for model options without a model, else EXIT_OK. */
int eval_drive_check_unused(const eval_drive_args *d);

#endif
