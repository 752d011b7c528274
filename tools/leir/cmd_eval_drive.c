/* leir eval ANSWERS.jsonl --dataset DIR --endpoint URL | --llm-command CMD:
 * the model asked for the answers the file lacks (docs/dataset.md, "A model
 * behind leir eval"). */
#include "cmd_eval_drive.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int cancelled;

static void on_signal(int sig) {
  if (cancelled) { /* a second signal: stop now (the file keeps whole prompts) */
    signal(sig, SIG_DFL);
    raise(sig);
  }
  cancelled = 1;
}

void eval_drive_args_init(eval_drive_args *d) {
  memset(d, 0, sizeof *d);
  leir_llm_options_init(&d->lo, sizeof d->lo);
  leir_eval_drive_options_init(&d->o, sizeof d->o);
  d->jobs = 1;
}

static bool is(const char *opt, const char *name) {
  size_t n = strlen(name);
  return !strncmp(opt, name, n) && (opt[n] == '\0' || opt[n] == '=');
}

static int unsigned_value(const char *opt, const char *v, uint64_t lo, uint64_t hi, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 10);
  if (errno || end == v || *end || v[0] == '-' || x < lo || x > hi)
    return tool_usage_error("eval", "%s takes an integer %llu..%llu: %s", opt, (unsigned long long)lo,
                            (unsigned long long)hi, v),
           -1;
  *out = x;
  return 0;
}

static int real_value(const char *opt, const char *v, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (errno || end == v || *end || !(x >= lo && x <= hi))
    return tool_usage_error("eval", "%s takes a number in [%g, %g]: %s", opt, lo, hi, v), -1;
  *out = x;
  return 0;
}

int eval_drive_option(eval_drive_args *d, tool_args *a, const char *opt) {
  if (!strcmp(opt, "--no-score")) {
    d->no_score = true;
    if (!d->first_model_option) d->first_model_option = "--no-score";
    return 1;
  }
  static const char *const names[] = {"--endpoint", "--llm-command", "--model", "--api-key-env",
                                      "--llm-timeout", "--temperature", "--top-p", "--max-tokens",
                                      "--llm-seed", "--samples", "--system-prompt", "--jobs",
                                      "--hardware", "--split", "--limit", "--retries", NULL};
  size_t k = 0;
  while (names[k] && !is(opt, names[k])) k++;
  if (!names[k]) return 0;
  const char *v = tool_args_value(a, names[k]);
  if (!v) return -1;
  if (k >= 2 && !d->first_model_option) d->first_model_option = names[k];
  uint64_t u = 0;
  int bad = 0;
  switch (k) {
    case 0: d->endpoint = v; break;
    case 1: d->llm_command = v; break;
    case 2: d->lo.model = v; break;
    case 3: d->lo.api_key_env = v; break;
    case 4: bad = real_value(opt, v, 0.001, 1e6, &d->lo.timeout_s); break;
    case 5:
      bad = real_value(opt, v, 0, 100, &d->lo.temperature);
      d->temperature_set = true;
      break;
    case 6: bad = real_value(opt, v, 0, 1, &d->lo.top_p); break;
    case 7:
      bad = unsigned_value(opt, v, 0, UINT32_MAX, &u);
      d->lo.max_tokens = (uint32_t)u;
      d->max_tokens_set = true;
      break;
    case 8:
      bad = unsigned_value(opt, v, 0, (uint64_t)INT64_MAX - 100000, &u);
      d->o.seed = (int64_t)u;
      break;
    case 9:
      bad = unsigned_value(opt, v, 1, 100000, &u);
      d->o.samples = (uint32_t)u;
      break;
    case 10: d->lo.system_prompt = v; break;
    case 11:
      bad = unsigned_value(opt, v, 1, 256, &u);
      d->jobs = (uint32_t)u;
      break;
    case 12: d->o.hardware = v; break;
    case 13:
      if (strcmp(v, "test") && strcmp(v, "validation"))
        return tool_usage_error("eval", "--split is test or validation, not %s", v), -1;
      d->o.split = v;
      break;
    case 14: bad = unsigned_value(opt, v, 1, UINT64_MAX, &d->o.limit); break;
    case 15:
      bad = unsigned_value(opt, v, 0, 100, &u);
      d->o.retries = (uint32_t)u;
      break;
  }
  return bad ? -1 : 1;
}

int eval_drive_check_unused(const eval_drive_args *d) {
  if (d->first_model_option)
    return tool_usage_error("eval", "%s needs a model (--endpoint URL or --llm-command CMD)", d->first_model_option);
  return EXIT_OK;
}

static void progress(const leir_eval_drive_progress *p, void *payload) {
  (void)payload;
  fprintf(stderr, "\rleir eval: %llu/%llu prompts answered (%llu requests, %llu failed, %.1f s)",
          (unsigned long long)p->prompts_done, (unsigned long long)p->prompts_total,
          (unsigned long long)p->requests, (unsigned long long)p->failed, p->elapsed_s);
  fflush(stderr);
}

int eval_drive_run(eval_drive_args *d, const char *dataset_dir, const char *answers_path) {
  if (d->endpoint && d->llm_command)
    return tool_usage_error("eval", "--endpoint and --llm-command exclude each other");
  if ((d->lo.model || d->lo.api_key_env) && !d->endpoint)
    return tool_usage_error("eval", "--model and --api-key-env need --endpoint");
  if (!strcmp(answers_path, "-"))
    return tool_usage_error("eval", "with a model, ANSWERS is the file the answers are appended to (not -)");
  /* the reference's single-step evaluation: greedy, 40960 new tokens */
  if (!d->temperature_set) d->lo.temperature = 0;
  if (!d->max_tokens_set) d->lo.max_tokens = 40960;
  leir_llm *models[256];
  uint32_t n = 0;
  leir_status st = LEIR_OK;
  const char *cargv[] = {"/bin/sh", "-c", d->llm_command, NULL};
  for (; n < d->jobs && st == LEIR_OK; n++) {
    st = d->endpoint ? leir_llm_new_endpoint(&models[n], d->endpoint, &d->lo)
                     : leir_llm_new_command(&models[n], cargv, &d->lo);
    if (st != LEIR_OK) break;
  }
  if (st == LEIR_OK) {
    d->o.cancel = &cancelled;
    if (isatty(2)) d->o.progress = progress;
    void (*old_int)(int) = signal(SIGINT, on_signal);
    void (*old_term)(int) = signal(SIGTERM, on_signal);
    leir_eval_drive_progress sum;
    st = leir_eval_drive(&sum, models, n, dataset_dir, answers_path, &d->o);
    signal(SIGINT, old_int);
    signal(SIGTERM, old_term);
    if (d->o.progress) fputc('\n', stderr);
    fprintf(stderr,
            "leir eval: %llu of %llu prompts answered (%llu from an earlier run); %llu requests, %llu answers, "
            "%llu failed, %.1f s\n",
            (unsigned long long)sum.prompts_done, (unsigned long long)sum.prompts_total,
            (unsigned long long)sum.prompts_resumed, (unsigned long long)sum.requests,
            (unsigned long long)sum.answers, (unsigned long long)sum.failed, sum.elapsed_s);
  }
  int rc = EXIT_OK;
  if (st != LEIR_OK) {
    const leir_error *e = leir_error_last();
    tool_print_error(e->subject[0] ? e->subject : answers_path, 0, e);
    rc = tool_exit_for(st);
  }
  for (uint32_t i = 0; i < n; i++) leir_llm_free(models[i]);
  return rc;
}
