/* The model options of `leir eval` and `leir optimize` (llm_opts.h). */
#include "llm_opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void llm_opts_init(llm_opts *m, const char *cmd) {
  memset(m, 0, sizeof *m);
  m->cmd = cmd;
  leir_llm_options_init(&m->lo, sizeof m->lo);
  m->seed = -1;
}

static bool is(const char *opt, const char *name) {
  size_t n = strlen(name);
  return !strncmp(opt, name, n) && (opt[n] == '\0' || opt[n] == '=');
}

int llm_opts_unsigned(const char *cmd, const char *opt, const char *v, uint64_t lo, uint64_t hi,
                      uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 10);
  if (errno || end == v || *end || v[0] == '-' || x < lo || x > hi)
    return tool_usage_error(cmd, "%s takes an integer %llu..%llu: %s", opt, (unsigned long long)lo,
                            (unsigned long long)hi, v),
           -1;
  *out = x;
  return 0;
}

int llm_opts_real(const char *cmd, const char *opt, const char *v, double lo, double hi,
                  double *out) {
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (errno || end == v || *end || !(x >= lo && x <= hi))
    return tool_usage_error(cmd, "%s takes a number in [%g, %g]: %s", opt, lo, hi, v), -1;
  *out = x;
  return 0;
}

void llm_opts_note(llm_opts *m, const char *name) {
  if (!m->first_model_option) m->first_model_option = name;
}

/* a GPU name as leir__prompt_put_hardware prints it: 1 to 64 printable bytes */
static bool clean_gpu(const char *v) {
  size_t n = strlen(v);
  if (n == 0 || n > 64) return false;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f) return false;
  return true;
}

int llm_opts_option(llm_opts *m, tool_args *a, const char *opt) {
  if (!strcmp(opt, "--no-hardware")) {
    m->no_hardware = true;
    llm_opts_note(m, "--no-hardware");
    return 1;
  }
  static const char *const names[] = {"--endpoint", "--llm-command", "--model", "--api-key-env",
                                      "--llm-timeout", "--temperature", "--top-p", "--max-tokens",
                                      "--llm-seed", "--system-prompt", "--hardware", NULL};
  size_t k = 0;
  while (names[k] && !is(opt, names[k])) k++;
  if (!names[k]) return 0;
  const char *v = tool_args_value(a, names[k]);
  if (!v) return -1;
  if (k >= 2) llm_opts_note(m, names[k]);
  const char *c = m->cmd;
  uint64_t u = 0;
  int bad = 0;
  switch (k) {
    case 0: m->endpoint = v; break;
    case 1: m->llm_command = v; break;
    case 2: m->lo.model = v; break;
    case 3: m->lo.api_key_env = v; break;
    case 4: bad = llm_opts_real(c, opt, v, 0.001, 1e6, &m->lo.timeout_s); break;
    case 5:
      bad = llm_opts_real(c, opt, v, 0, 100, &m->lo.temperature);
      m->temperature_set = true;
      break;
    case 6: bad = llm_opts_real(c, opt, v, 0, 1, &m->lo.top_p); break;
    case 7:
      bad = llm_opts_unsigned(c, opt, v, 0, UINT32_MAX, &u);
      m->lo.max_tokens = (uint32_t)u;
      m->max_tokens_set = true;
      break;
    case 8:
      /* room for eval's seed + sample */
      bad = llm_opts_unsigned(c, opt, v, 0, (uint64_t)INT64_MAX - 100000, &u);
      m->seed = (int64_t)u;
      break;
    case 9: m->lo.system_prompt = v; break;
    case 10:
      if (!clean_gpu(v))
        return tool_usage_error(c, "--hardware takes a GPU name of 1 to 64 printable bytes: %s", v), -1;
      m->hardware = v;
      break;
  }
  return bad ? -1 : 1;
}

int llm_opts_check_unused(const llm_opts *m) {
  if (m->first_model_option)
    return tool_usage_error(m->cmd, "%s needs a model (--endpoint URL or --llm-command CMD)",
                            m->first_model_option);
  return EXIT_OK;
}

int llm_opts_finish(llm_opts *m, double default_temperature, uint32_t default_max_tokens) {
  if (m->endpoint && m->llm_command)
    return tool_usage_error(m->cmd, "--endpoint and --llm-command exclude each other");
  if ((m->lo.model || m->lo.api_key_env) && !m->endpoint)
    return tool_usage_error(m->cmd, "--model and --api-key-env need --endpoint");
  if (m->hardware && m->no_hardware)
    return tool_usage_error(m->cmd, "--hardware and --no-hardware exclude each other");
  if (!m->temperature_set) m->lo.temperature = default_temperature;
  if (!m->max_tokens_set) m->lo.max_tokens = default_max_tokens;
  m->lo.seed = m->seed;
  return EXIT_OK;
}

const char *llm_opts_hardware(const llm_opts *m, const char *default_gpu) {
  if (m->no_hardware) return NULL;
  return m->hardware ? m->hardware : default_gpu;
}

int llm_opts_client(const llm_opts *m, leir_llm **out) {
  *out = NULL;
  if (!llm_opts_wanted(m)) return EXIT_OK;
  const char *cargv[] = {"/bin/sh", "-c", m->llm_command, NULL};
  leir_status st = m->endpoint ? leir_llm_new_endpoint(out, m->endpoint, &m->lo)
                               : leir_llm_new_command(out, cargv, &m->lo);
  if (st != LEIR_OK) {
    fprintf(stderr, "leir %s: error: %s\n", m->cmd, leir_error_last()->message);
    return tool_exit_for(st);
  }
  return EXIT_OK;
}
