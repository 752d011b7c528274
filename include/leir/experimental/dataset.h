/**
 * @file
 * libleir — Step-TP datasets and the evaluation of answers
 * (experimental: no ABI or API promise: any release may change or remove
 * it; define LEIR_EXPERIMENTAL before including this header, see
 * leir/experimental/experimental.h).
 *
 * A dataset build reads a YAML config (docs/dataset.md): sources (workload
 * catalogue entries x shapes x dtypes, and/or a JSONL file of programs),
 * multi-step states from seeded random walks, one-step candidates of every
 * enabled strategy, sampling, verification, chain of thought, filtering and
 * balancing. It writes into an output directory: `train.jsonl` (chat
 * records), `eval.jsonl` and `validation.jsonl` (prompts of the source
 * programs held out for test and for validation, checked not to leak into
 * train), `archive.jsonl` (every field of every kept record),
 * `rejections.jsonl`, `summary.json` and a dataset card `README.md` with SVG
 * histograms.
 *
 * The work is split into units (one source program each). Every finished
 * unit is written atomically under `DIR/.work/`, so a build killed at any
 * moment resumes where it stopped when run again, and shards (`shard_index`
 * of `shard_count`) running in any order or on different machines over a
 * shared directory build the same units. The outputs are written once every
 * unit is done, by whichever run completes the last one, and depend only on
 * the config: the same config gives byte-identical files.
 *
 * Threads: a leir_dataset or leir_eval handle is used by one thread at a
 * time; distinct handles are independent.
 */
#ifndef LEIR_EXPERIMENTAL_DATASET_H
#define LEIR_EXPERIMENTAL_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "leir/experimental/experimental.h"
#include "leir/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque dataset build (leir_dataset_open; free with leir_dataset_free). */
typedef struct leir_dataset leir_dataset;

/** Progress of a build, passed to the progress callback after every unit. */
typedef struct leir_dataset_progress {
  uint64_t units_total;      /**< units of this shard */
  uint64_t units_done;       /**< units of this shard finished (including resumed ones) */
  uint64_t units_resumed;    /**< units found finished by an earlier run */
  uint64_t samples_verified; /**< candidates verified by this run */
  uint64_t samples_kept;     /**< of those, kept (EQUAL, or CLOSE when allowed) */
  double elapsed_s;          /**< seconds since leir_dataset_run started */
} leir_dataset_progress;

/** Progress callback; `payload` is leir_dataset_options.payload. */
typedef void (*leir_dataset_progress_fn)(const leir_dataset_progress *progress, void *payload);

/** Options of leir_dataset_open. Start from LEIR_DATASET_OPTIONS_INIT or
 * leir_dataset_options_init(). */
typedef struct leir_dataset_options {
  uint32_t size;                     /**< sizeof(leir_dataset_options) */
  uint32_t shard_index;              /**< this run's shard, 0..shard_count-1 (default 0) */
  uint32_t shard_count;              /**< number of shards (default 1) */
  const char *workloads_dir;         /**< catalogue directory; NULL: the config's
                                      * `sources.workloads_dir`, else as leir_catalog_open */
  leir_dataset_progress_fn progress; /**< called after every unit (may be NULL) */
  void *payload;                     /**< passed to `progress` */
  const volatile int *cancel;        /**< when it becomes nonzero, leir_dataset_run stops
                                      * with LEIR_ERR_CANCELLED within the unit it is building
                                      * (checked between walk steps, between states and around
                                      * each verification batch); that unit is not written, and
                                      * a resumed build redoes it */
} leir_dataset_options;

/** Defaults of leir_dataset_options: shard 0 of 1, no callback. */
#define LEIR_DATASET_OPTIONS_INIT \
  { (uint32_t)sizeof(leir_dataset_options), 0u, 1u, NULL, NULL, NULL, NULL }

/** Fills the first `size` bytes of `*opts` with LEIR_DATASET_OPTIONS_INIT and
 * sets `opts->size` to `size`. Errors: LEIR_ERR_ARGUMENT (NULL, or a size
 * below the size field or above this library's struct). */
LEIR_API leir_status leir_dataset_options_init(leir_dataset_options *opts, size_t size);

/** Reads the config (`len` bytes of YAML; relative paths in it are taken
 * relative to `base_dir`, NULL for the current directory), opens the
 * catalogue and lists the units, and prepares `out_dir` (created when
 * missing). A directory holding a build of a different config is refused
 * (LEIR_ERR_ARGUMENT), so resuming never mixes two configs. Caller frees
 * *out with leir_dataset_free. Errors: LEIR_ERR_PARSE (the config: line and
 * column in the last error), LEIR_ERR_ARGUMENT, LEIR_ERR_NOT_FOUND (a
 * workload or file), LEIR_ERR_IO, LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_dataset_open(leir_dataset **out, const char *config, size_t len,
                                       const char *base_dir, const char *out_dir,
                                       const leir_dataset_options *opts);

/** Builds this shard's unfinished units, then, when every unit of the
 * config is finished (by this run or others), writes the outputs.
 * Errors: LEIR_ERR_IO, LEIR_ERR_NOMEM, LEIR_ERR_NO_DEVICE (no backend),
 * LEIR_ERR_CANCELLED, LEIR_ERR_INVALID (rule dataset.leakage: a held-out
 * state or label is a prompt state or target of a train record; no output
 * is written). Finished units stay finished whatever happens. */
LEIR_API leir_status leir_dataset_run(leir_dataset *dataset);

/** 1 when the outputs were written (every unit is finished), else 0. */
LEIR_API int leir_dataset_complete(const leir_dataset *dataset);

/** Number of units of the whole config, and of them finished now. */
LEIR_API void leir_dataset_units(const leir_dataset *dataset, uint64_t *total, uint64_t *done);

/** The build's summary as one JSON object: units, samples verified, kept and
 * rejected (by stage, verdict and strategy), records written per kind,
 * strategy and level, the split and the leakage check (docs/dataset.md). Caller frees *out with leir_free.
 * Errors: LEIR_ERR_ARGUMENT (the outputs are not written yet), LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_dataset_summary_json(const leir_dataset *dataset, char **out,
                                               size_t *out_len);

/** Releases the handle (files stay). NULL is a no-op. */
LEIR_API void leir_dataset_free(leir_dataset *dataset);

/* ======================================================================
 * Evaluation of a model's answers (docs/dataset.md, "leir eval")
 * ====================================================================== */

/** Opaque evaluation (leir_eval_run; free with leir_eval_free). */
typedef struct leir_eval leir_eval;

/** Options of leir_eval_run. Start from LEIR_EVAL_OPTIONS_INIT or
 * leir_eval_options_init(). */
typedef struct leir_eval_options {
  uint32_t size;       /**< sizeof(leir_eval_options) */
  const char *backend; /**< "interp", "cpu", "cuda" or NULL/"auto": the interpreter for
                        * programs of at most `interp_max_evaluations`, else cpu */
  uint64_t seed;       /**< verification input seed (default LEIR_SEED_DEFAULT = 1) */
  uint32_t input_sets; /**< verification input sets (default 3) */
  uint64_t interp_max_evaluations; /**< see `backend` (default 2000000) */
  /** The k of pass-at-k (`n_k` entries, each 1 to 1000000, at most 16; borrowed for
   * the call). NULL (default): 1 and the fewest samples any answered prompt
   * has. Added with pass-at-k: a smaller `size` gets the default. */
  const uint32_t *k;
  size_t n_k;          /**< entries of `k` */
} leir_eval_options;

/** Defaults of leir_eval_options. */
#define LEIR_EVAL_OPTIONS_INIT \
  { (uint32_t)sizeof(leir_eval_options), NULL, 1u, 3u, 2000000u, NULL, 0u }

/** Fills the first `size` bytes of `*opts` with LEIR_EVAL_OPTIONS_INIT and sets
 * `opts->size` to `size`. Errors: LEIR_ERR_ARGUMENT. */
LEIR_API leir_status leir_eval_options_init(leir_eval_options *opts, size_t size);

/** Scores `len` bytes of answers (JSONL: one object per line with the prompt's
 * `id` and the model's text as `answer`, `response`, `output`, `content` or
 * the last assistant message of `messages`) against the prompts of the
 * dataset in `dataset_dir` (its eval.jsonl, validation.jsonl and archived
 * records). Lines with the same prompt are samples of that prompt (pass-at-k).
 * Programs are compared by structure (up to fresh names and redundant
 * parentheses), not text. Every line, however malformed, is scored with a
 * reason; nothing in the answers makes it fail. Caller frees *out with
 * leir_eval_free. Errors: LEIR_ERR_IO and LEIR_ERR_PARSE (the dataset
 * directory), LEIR_ERR_ARGUMENT (also a bad `k`), LEIR_ERR_NO_DEVICE,
 * LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_eval_run(leir_eval **out, const char *answers, size_t len,
                                   const char *dataset_dir, const leir_eval_options *opts);

/** The scores as one JSON object (docs/dataset.md): overall, single and multi
 * prompts, per workload level (rates, counts and pass-at-k), per strategy and
 * strategy level of the matched label and per strategy the answer names
 * (parse rate, different, label, pass-equal, pass-close, pass-reference,
 * grounded, multi-label rates), and one entry per answer line with its
 * outcome and reason. Caller frees *out with leir_free. */
LEIR_API leir_status leir_eval_report_json(const leir_eval *eval, char **out, size_t *out_len);

/** The scores as a text table (overall, per strategy, per level). Caller
 * frees *out with leir_free. */
LEIR_API leir_status leir_eval_report_table(const leir_eval *eval, char **out, size_t *out_len);

/** NULL is a no-op. */
LEIR_API void leir_eval_free(leir_eval *eval);

/* ======================================================================
 * Driving a model over a dataset's prompts (docs/dataset.md, "A model
 * behind leir eval")
 * ====================================================================== */

/** An LLM client (include/leir/experimental/llm.h). */
typedef struct leir_llm leir_llm;

/** Progress of leir_eval_drive, passed to its callback after every prompt
 * written, and its summary. */
typedef struct leir_eval_drive_progress {
  uint64_t prompts_total;   /**< prompts of the split (at most `limit`) */
  uint64_t prompts_done;    /**< with every sample in the answers file (resumed ones too) */
  uint64_t prompts_resumed; /**< found complete in the answers file by this run */
  uint64_t requests;        /**< model requests this run (retries included) */
  uint64_t answers;         /**< samples written this run with the model's answer */
  uint64_t failed;          /**< samples written this run without one (timeout, limit,
                             * a response that is not the protocol's JSON): they score as
                             * failed answers, reason `request.failed` */
  double elapsed_s;         /**< seconds since leir_eval_drive started */
} leir_eval_drive_progress;

/** Progress callback (called from the thread that wrote the prompt, one call
 * at a time); `payload` is leir_eval_drive_options.payload. */
typedef void (*leir_eval_drive_progress_fn)(const leir_eval_drive_progress *progress, void *payload);

/** Options of leir_eval_drive. Start from LEIR_EVAL_DRIVE_OPTIONS_INIT or
 * leir_eval_drive_options_init(). */
typedef struct leir_eval_drive_options {
  uint32_t size;          /**< sizeof(leir_eval_drive_options) */
  const char *split;      /**< "test" (eval.jsonl; NULL: the default) or "validation"
                           * (validation.jsonl) */
  uint32_t samples;       /**< answers per prompt, each its own request (default 1; at most
                           * 100000) */
  int64_t seed;           /**< sample i of a prompt is asked with seed + i
                           * (leir_llm_complete_seed); negative: the clients' own seed,
                           * if any (default -1) */
  const char *hardware;   /**< a GPU name ("H20-3e", the reference's default): the prompt
                           * gets the reference's hardware block before its task; NULL or
                           * "" (default): the prompt as the dataset has it, as the
                           * reference's single-step evaluation sends it */
  uint64_t limit;         /**< only the first `limit` prompts of the split (0: all) */
  uint32_t retries;       /**< a request that fails with LEIR_ERR_IO (unreachable, an HTTP
                           * error status, a command that dies) is retried this many times,
                           * 0.5 s, 1 s, 2 s ... apart, before the run stops (default 3) */
  leir_eval_drive_progress_fn progress; /**< may be NULL */
  void *payload;          /**< passed to `progress` */
  const volatile int *cancel; /**< when it becomes nonzero, the run stops with
                               * LEIR_ERR_CANCELLED after the prompts in flight are written
                               * (or dropped, when a request was cut short) */
} leir_eval_drive_options;

/** Defaults of leir_eval_drive_options (see each field). */
#define LEIR_EVAL_DRIVE_OPTIONS_INIT \
  { (uint32_t)sizeof(leir_eval_drive_options), NULL, 1u, -1, NULL, 0u, 3u, NULL, NULL, NULL }

/** Fills the first `size` bytes of `*opts` with LEIR_EVAL_DRIVE_OPTIONS_INIT
 * and sets `opts->size` to `size`. Errors: LEIR_ERR_ARGUMENT. */
LEIR_API leir_status leir_eval_drive_options_init(leir_eval_drive_options *opts, size_t size);

/** Sends every prompt of the dataset's split in `dataset_dir` to a model,
 * `samples` times, and appends the answers to the JSONL file `answers_path`
 * (created when missing), one line per sample: `id`, `sample` (0-based),
 * `seed` (or null), `requested` (the transformed IRs the prompt asks for in
 * the one call, as the reference asks them), `hardware` (or null), and
 * `answer` (the model's raw text) or `error` (`status`, `message`), and
 * `elapsed_s`. The lines of one prompt are written together with one
 * append, so a run killed at any moment (kill -9 included) leaves whole
 * prompts; a rerun cuts a torn last line, keeps every (id, sample) the file
 * has and asks only the missing ones. leir_eval_run scores the file.
 *
 * `models` are `nmodels` clients (1 to 256), each used by one thread of its
 * own at a time: that many requests are in flight at once; the order of the
 * lines then depends on timing, their content does not. The chat is the
 * client's system prompt (leir_llm_options.system_prompt) and the prompt's
 * user message. *out (may be NULL) gets the summary. Errors:
 * LEIR_ERR_ARGUMENT, LEIR_ERR_IO and LEIR_ERR_PARSE (the dataset's prompt
 * file, the answers file), LEIR_ERR_IO (a model still failing after the
 * retries: what was written stays, a rerun goes on), LEIR_ERR_CANCELLED,
 * LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_eval_drive(leir_eval_drive_progress *out, leir_llm *const *models,
                                     size_t nmodels, const char *dataset_dir,
                                     const char *answers_path, const leir_eval_drive_options *opts);

#ifdef __cplusplus
}
#endif

#endif
