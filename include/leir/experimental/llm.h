/**
 * @file
 * libleir — LLM clients and the LLM proposal loop
 * (experimental: no ABI or API promise: any release may change or remove
 * it; define LEIR_EXPERIMENTAL before including this header, see
 * leir/experimental/experimental.h).
 *
 * A client (leir_llm) sends a chat (a list of role/content messages) to a
 * model and returns its answer text. Three kinds:
 *  - a C callback (leir_llm_new_callback);
 *  - an external command speaking JSON lines on its stdin/stdout
 *    (leir_llm_new_command): one request line
 *    `{"messages":[{"role":"system","content":"..."},...]}` (plus the
 *    sampling settings that are set: "temperature", "top_p", "max_tokens",
 *    "seed") in, one answer
 *    line `{"content":"..."}` (or `{"error":"..."}`) out. The command is
 *    started with posix_spawn on the first request and kept for the next
 *    ones; a request that takes longer than the timeout, or an answer line
 *    longer than the limit, kills it (its process group) and the next
 *    request starts a fresh one;
 *  - an OpenAI-compatible chat-completions endpoint
 *    (leir_llm_new_endpoint: `POST URL` with `{"model","messages",...}`,
 *    the answer in `choices[0].message.content`), as vLLM and SGLang serve
 *    Qwen; libcurl, a bounded response size and a timeout. The API key is
 *    read from the environment variable the options name, never stored in
 *    the options themselves.
 *
 * leir_llm_propose is the Step-TP proposal loop: prompt (the dataset's
 * Step-TP user prompt) → answer → parse
 * (`<think>…</think><answer>{"transformed_IR": …, "applied_strategy": …}</answer>`)
 * → ground (is it one step of the named strategy?) → verify (a
 * leir_verifier) → on failure the model gets the reason ("not numerically
 * equivalent: …", "not one step of …", "invalid at LINE:COL: …") and
 * tries again, up to a configurable number of retries.
 *
 * Untrusted answers: any bytes, any length up to the limit, slow or never
 * finishing; none of them crashes, hangs past the timeout, or allocates
 * more than the limit. Nothing here prints. A client is used by one thread
 * at a time.
 */
#ifndef LEIR_EXPERIMENTAL_LLM_H
#define LEIR_EXPERIMENTAL_LLM_H

#include <stddef.h>
#include <stdint.h>

#include "leir/experimental/experimental.h"
#include "leir/program.h"
#include "leir/run.h"
#include "leir/strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One chat message (borrowed strings). */
typedef struct leir_llm_message {
  const char *role;    /**< "system", "user" or "assistant" */
  const char *content; /**< NUL-terminated text */
} leir_llm_message;

/** A model as a C callback: answers the chat `messages` (n entries,
 * borrowed for the call) by setting *answer to a NUL-terminated string
 * allocated with malloc (the library frees it with free) and *answer_len to
 * its length. A status other than LEIR_OK is a failed request (the
 * callback may set the last error). */
typedef leir_status (*leir_llm_complete_fn)(void *payload, const leir_llm_message *messages,
                                            size_t n, char **answer, size_t *answer_len);

/** Options of an LLM client. Start from LEIR_LLM_OPTIONS_INIT or
 * leir_llm_options_init(). */
typedef struct leir_llm_options {
  uint32_t size;              /**< sizeof(leir_llm_options) */
  double timeout_s;           /**< per request, wall clock (default 300; command and
                               * endpoint; a callback is not interrupted) */
  size_t max_answer_bytes;    /**< longest answer accepted (default 1 MiB); a command's line
                               * or an endpoint's response may be 8 times that (escapes) */
  const char *model;          /**< endpoint: the "model" field (default "default") */
  const char *api_key_env;    /**< endpoint: name of the environment variable holding the
                               * API key, sent as "Authorization: Bearer KEY" (NULL: none) */
  double temperature;         /**< endpoint: sampling temperature; negative: not sent
                               * (default -1) */
  uint32_t max_tokens;        /**< endpoint: "max_tokens"; 0: not sent (default 0) */
  const char *system_prompt;  /**< first message of every chat of leir_llm_propose and
                               * leir_eval_drive (default "You are a helpful assistant.", the
                               * Step-TP model's training prompt; "" for none) */
  double top_p;               /**< nucleus sampling "top_p"; negative: not sent (default -1) */
  int64_t seed;               /**< sampling "seed"; negative: not sent (default -1);
                               * leir_llm_complete_seed overrides it per request */
} leir_llm_options;

/** Defaults of leir_llm_options (see each field). */
#define LEIR_LLM_OPTIONS_INIT \
  { (uint32_t)sizeof(leir_llm_options), 300.0, (size_t)1 << 20, NULL, NULL, -1.0, 0u, NULL, -1.0, -1 }

/** Fills the first `size` bytes of `*opts` with the defaults of
 * LEIR_LLM_OPTIONS_INIT and sets `opts->size` to `size`.
 * Errors: LEIR_ERR_ARGUMENT (`opts` NULL or `size` out of range). */
LEIR_API leir_status leir_llm_options_init(leir_llm_options *opts, size_t size);

/** An LLM client. Opaque; free with leir_llm_free. */
typedef struct leir_llm leir_llm;

/** A client that calls `fn(payload, ...)`. `opts` may be NULL (strings in
 * it are copied). Caller frees *out. Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_llm_new_callback(leir_llm **out, leir_llm_complete_fn fn, void *payload,
                                           const leir_llm_options *opts);

/** A client that runs the command `argv` (NULL-terminated; argv[0] is
 * looked up in PATH when it has no slash; copied) and speaks JSON lines
 * with it (see the file comment). Nothing starts until the first request.
 * Caller frees *out (which stops the command). Errors: LEIR_ERR_ARGUMENT,
 * LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_llm_new_command(leir_llm **out, const char *const *argv,
                                          const leir_llm_options *opts);

/** A client of the OpenAI-compatible chat-completions endpoint `url` (the
 * full URL, e.g. "http://127.0.0.1:8000/v1/chat/completions"; copied).
 * Caller frees *out. Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM,
 * LEIR_ERR_UNSUPPORTED (this build has no libcurl). */
LEIR_API leir_status leir_llm_new_endpoint(leir_llm **out, const char *url,
                                           const leir_llm_options *opts);

/** Stops a command client's process and releases the client. NULL is a no-op. */
LEIR_API void leir_llm_free(leir_llm *llm);

/** Sends one chat and returns the answer: *answer is NUL-terminated (it may
 * hold other NUL bytes before *answer_len when the model sent them; caller
 * frees with leir_free), *answer_len (may be NULL) its length.
 * Errors: LEIR_ERR_ARGUMENT; LEIR_ERR_TIMEOUT (no complete answer in
 * timeout_s); LEIR_ERR_LIMIT (an answer or response over the limit);
 * LEIR_ERR_PARSE (a response that is not the protocol's JSON);
 * LEIR_ERR_IO (the command could not start, died, or closed its output;
 * the endpoint could not be reached or answered with an HTTP error: the
 * message has the status and the start of the body); the callback's
 * status; LEIR_ERR_NOMEM. The last error says what happened. */
LEIR_API leir_status leir_llm_complete(leir_llm *llm, const leir_llm_message *messages, size_t n,
                                       char **answer, size_t *answer_len);

/** As leir_llm_complete, with this request's sampling seed: `seed` >= 0 is
 * sent instead of the options' seed (negative: the options' seed, if any).
 * leir_eval_drive asks sample i of a prompt with seed + i, so that n samples
 * of one prompt differ and a rerun asks the same. A callback client does not
 * see the seed. Errors: as leir_llm_complete. */
LEIR_API leir_status leir_llm_complete_seed(leir_llm *llm, const leir_llm_message *messages,
                                            size_t n, int64_t seed, char **answer,
                                            size_t *answer_len);

/* ======================================================================
 * The proposal loop
 * ====================================================================== */

/** Why an attempt of leir_llm_propose was rejected. */
typedef enum leir_llm_reject {
  LEIR_LLM_ACCEPTED = 0,      /**< grounded and verified (or only grounded without a verifier) */
  LEIR_LLM_NO_ANSWER,         /**< the request failed (timeout, limit, I/O; the status says) */
  LEIR_LLM_MALFORMED,         /**< the answer could not be parsed */
  LEIR_LLM_INVALID,           /**< transformed_IR is not valid LEIR (parse or static check) */
  LEIR_LLM_UNKNOWN_STRATEGY,  /**< applied_strategy names no strategy of the catalogue */
  LEIR_LLM_WRONG_STRATEGY,    /**< not the strategy that was asked for */
  LEIR_LLM_SAME,              /**< the same program as the one given */
  LEIR_LLM_NOT_ONE_STEP,      /**< not one step of the named strategy (grounding) */
  LEIR_LLM_NOT_EQUIVALENT     /**< verification did not accept it (the verdict says why) */
} leir_llm_reject;

/** "accepted", "no-answer", "malformed", "invalid", "unknown-strategy",
 * "wrong-strategy", "same", "not-one-step", "not-equivalent"; static; NULL
 * if unknown. */
LEIR_API const char *leir_llm_reject_name(leir_llm_reject reject);

/** Options of leir_llm_propose. Start from LEIR_LLM_PROPOSE_OPTIONS_INIT
 * or leir_llm_propose_options_init(). */
typedef struct leir_llm_propose_options {
  uint32_t size;            /**< sizeof(leir_llm_propose_options) */
  uint32_t retries;         /**< attempts after the first (default 3) */
  const char *strategy;     /**< catalogue name the step must be of (NULL: any; the prompt
                             * then names none and the answer's applied_strategy decides) */
  const char *model_name;   /**< the program's name in the prompt ("Give the following IR
                             * of NAME"; NULL: the program's name, else "Model") */
  uint32_t candidate_class; /**< class for the verifier (LEIR_VERIFY_CLASS_*); ANY (default):
                             * the grounded step's class (exact or reassociating) */
  const char *const *feedback; /**< reasons of earlier rejections to put in the first prompt
                                * (e.g. a search's feedback at this node; may be NULL) */
  size_t nfeedback;         /**< entries of `feedback` */
} leir_llm_propose_options;

/** Defaults of leir_llm_propose_options (see each field). */
#define LEIR_LLM_PROPOSE_OPTIONS_INIT \
  { (uint32_t)sizeof(leir_llm_propose_options), 3u, NULL, NULL, 0u, NULL, 0u }

/** Fills the first `size` bytes of `*opts` with the defaults of
 * LEIR_LLM_PROPOSE_OPTIONS_INIT and sets `opts->size` to `size`.
 * Errors: LEIR_ERR_ARGUMENT. */
LEIR_API leir_status leir_llm_propose_options_init(leir_llm_propose_options *opts, size_t size);

/** One attempt of a proposal (strings owned by the result). */
typedef struct leir_llm_attempt {
  leir_llm_reject reject; /**< LEIR_LLM_ACCEPTED or why not */
  leir_status status;     /**< NO_ANSWER: the request's status; else LEIR_OK */
  const char *answer;     /**< the model's answer text ("" when none) */
  const char *reason;     /**< one line, as sent back to the model ("" when accepted) */
} leir_llm_attempt;

/** What leir_llm_propose found. Free with leir_llm_result_free. */
typedef struct leir_llm_result {
  uint32_t size;               /**< sizeof(leir_llm_result) */
  leir_program *program;       /**< the accepted program (owned by the result; NULL when no
                                * attempt was accepted); it has the given program's signature */
  const char *program_text;    /**< its canonical text ("" when none) */
  const char *strategy;        /**< catalogue name of the accepted step ("" when none) */
  const char *step;            /**< the grounded step's text ("" when none) */
  const char *cot;             /**< the model's think text of the accepted answer */
  leir_exactness exactness;    /**< the grounded step's class */
  leir_verify_report *report;  /**< the verifier's report of the accepted program (owned;
                                * NULL when no verifier was given or none was accepted) */
  size_t nattempts;            /**< attempts made (1 + retries at most) */
  const leir_llm_attempt *attempts; /**< each attempt in order */
} leir_llm_result;

/** Asks the model for one step of `program` and checks it: builds the
 * Step-TP prompt (the dataset's wording; with opts->strategy, a sentence
 * asking for that strategy), sends it, parses the answer, parses the
 * transformed IR and gives it `program`'s signature, grounds it
 * (leir_ground: one step of the named strategy, up to fresh names) and,
 * when `verifier` is not NULL, judges it (the verifier's reference is
 * usually the search's source program; EQUAL or CLOSE pass). A rejected
 * answer goes back to the model in the same chat with its reason, and the
 * model tries again, up to opts->retries times. `program` must pass
 * leir_program_check. `opts` may be NULL.
 *
 * Returns LEIR_OK whether or not an attempt was accepted (see
 * result->program; every attempt is in result->attempts). Caller frees *out
 * with leir_llm_result_free. Errors: LEIR_ERR_ARGUMENT; LEIR_ERR_NOT_FOUND
 * (opts->strategy is not in the catalogue); the program's own check
 * errors; LEIR_ERR_NOMEM; a verifier error that is not a verdict
 * (LEIR_ERR_NO_DEVICE, ...). A failed request is an attempt (NO_ANSWER),
 * not an error. */
LEIR_API leir_status leir_llm_propose(leir_llm *llm, leir_verifier *verifier,
                                      const leir_program *program,
                                      const leir_llm_propose_options *opts,
                                      leir_llm_result **out);

/** Releases a result, its program, report and strings. NULL is a no-op. */
LEIR_API void leir_llm_result_free(leir_llm_result *result);

#ifdef __cplusplus
}
#endif
#endif /* LEIR_EXPERIMENTAL_LLM_H */
