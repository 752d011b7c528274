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
  llm_opts_init(&d->m, "eval");
  leir_eval_drive_options_init(&d->o, sizeof d->o);
  d->jobs = 1;
}

static bool is(const char *opt, const char *name) {
  size_t n = strlen(name);
  return !strncmp(opt, name, n) && (opt[n] == '\0' || opt[n] == '=');
}

int eval_drive_option(eval_drive_args *d, tool_args *a, const char *opt) {
  int taken = llm_opts_option(&d->m, a, opt);
  if (taken) return taken;
  if (!strcmp(opt, "--no-score")) {
    d->no_score = true;
    llm_opts_note(&d->m, "--no-score");
    return 1;
  }
  /* eval's own: n requests per prompt, concurrency, which prompts */
  static const char *const names[] = {"--samples", "--jobs", "--split", "--limit", "--retries", NULL};
  size_t k = 0;
  while (names[k] && !is(opt, names[k])) k++;
  if (!names[k]) return 0;
  const char *v = tool_args_value(a, names[k]);
  if (!v) return -1;
  llm_opts_note(&d->m, names[k]);
  uint64_t u = 0;
  int bad = 0;
  switch (k) {
    case 0:
      bad = llm_opts_unsigned("eval", opt, v, 1, 100000, &u);
      d->o.samples = (uint32_t)u;
      break;
    case 1:
      bad = llm_opts_unsigned("eval", opt, v, 1, 256, &u);
      d->jobs = (uint32_t)u;
      break;
    case 2:
      if (strcmp(v, "test") && strcmp(v, "validation"))
        return tool_usage_error("eval", "--split is test or validation, not %s", v), -1;
      d->o.split = v;
      break;
    case 3: bad = llm_opts_unsigned("eval", opt, v, 1, UINT64_MAX, &d->o.limit); break;
    case 4:
      bad = llm_opts_unsigned("eval", opt, v, 0, 100, &u);
      d->o.retries = (uint32_t)u;
      break;
  }
  return bad ? -1 : 1;
}

int eval_drive_check_unused(const eval_drive_args *d) { return llm_opts_check_unused(&d->m); }

static void progress(const leir_eval_drive_progress *p, void *payload) {
  (void)payload;
  fprintf(stderr, "\rleir eval: %llu/%llu prompts answered (%llu requests, %llu failed, %.1f s)",
          (unsigned long long)p->prompts_done, (unsigned long long)p->prompts_total,
          (unsigned long long)p->requests, (unsigned long long)p->failed, p->elapsed_s);
  fflush(stderr);
}

int eval_drive_run(eval_drive_args *d, const char *dataset_dir, const char *answers_path) {
  /* the reference's single-step evaluation: greedy, 40960 new tokens */
  int urc = llm_opts_finish(&d->m, 0, 40960);
  if (urc != EXIT_OK) return urc;
  if (!strcmp(answers_path, "-"))
    return tool_usage_error("eval", "with a model, ANSWERS is the file the answers are appended to (not -)");
  d->o.seed = d->m.seed;
  /* the prompts as the dataset has them unless --hardware GPU */
  d->o.hardware = llm_opts_hardware(&d->m, NULL);
  leir_llm *models[256];
  uint32_t n = 0;
  leir_status st = LEIR_OK;
  int rc = EXIT_OK;
  for (; n < d->jobs; n++) {
    if ((rc = llm_opts_client(&d->m, &models[n])) != EXIT_OK) break;
  }
  if (rc == EXIT_OK) {
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
  if (st != LEIR_OK) {
    const leir_error *e = leir_error_last();
    tool_print_error(e->subject[0] ? e->subject : answers_path, 0, e);
    rc = tool_exit_for(st);
  }
  for (uint32_t i = 0; i < n; i++) leir_llm_free(models[i]);
  return rc;
}
