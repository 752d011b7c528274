/* The model options `leir eval` and `leir optimize` share: which model
 * (--endpoint URL | --llm-command CMD, --model, --api-key-env,
 * --llm-timeout), how it samples (--temperature, --top-p, --max-tokens,
 * --llm-seed, --system-prompt) and the prompt's hardware block (--hardware
 * GPU, --no-hardware): one parser, the same names, ranges and messages. */
#ifndef LEIR_TOOL_LLM_OPTS_H
#define LEIR_TOOL_LLM_OPTS_H

#define LEIR_EXPERIMENTAL
#include <stdbool.h>
#include <stdint.h>

#include "leir/experimental/llm.h"
#include "tool.h"

typedef struct llm_opts {
  const char *cmd;                  /* "eval" or "optimize", for messages */
  const char *endpoint, *llm_command;
  leir_llm_options lo;              /* model, key, timeout, temperature, top_p, max_tokens,
                                     * system_prompt (seed: see `seed`) */
  int64_t seed;                     /* --llm-seed (-1: not given) */
  const char *hardware;             /* --hardware GPU (NULL: not given) */
  bool no_hardware;                 /* --no-hardware */
  bool temperature_set, max_tokens_set;
  const char *first_model_option;   /* the first option given that needs a model */
} llm_opts;

void llm_opts_init(llm_opts *m, const char *cmd);
/* 1: `opt` was one of the shared options (taken, with its value); 0: not
 * one; -1: a usage error (reported). */
int llm_opts_option(llm_opts *m, tool_args *a, const char *opt);
/* Notes `name` as a model option given (for llm_opts_check_unused). */
void llm_opts_note(llm_opts *m, const char *name);
/* A model was named. */
static inline bool llm_opts_wanted(const llm_opts *m) { return m->endpoint || m->llm_command; }
/* The usage error for model options without a model, else EXIT_OK. */
int llm_opts_check_unused(const llm_opts *m);
/* The checks between options, and the command's defaults for what was not
 * given (temperature, max tokens); EXIT_OK or the usage error (reported). */
int llm_opts_finish(llm_opts *m, double default_temperature, uint32_t default_max_tokens);
/* The GPU of the hardware block: --no-hardware gives NULL, else --hardware
 * or `default_gpu` (NULL: none). */
const char *llm_opts_hardware(const llm_opts *m, const char *default_gpu);
/* A client of the named model (*out NULL and EXIT_OK when none is named);
 * an error is reported. */
int llm_opts_client(const llm_opts *m, leir_llm **out);

/* Number parsing with the shared messages ("%s takes an integer LO..HI"):
 * 0 or -1 (reported). */
int llm_opts_unsigned(const char *cmd, const char *opt, const char *v, uint64_t lo, uint64_t hi,
                      uint64_t *out);
int llm_opts_real(const char *cmd, const char *opt, const char *v, double lo, double hi,
                  double *out);

#endif
