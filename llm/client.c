/*
 * LLM clients (include/leir/experimental/llm.h): a C callback, an external
 * command speaking JSON lines over a socket on its stdin/stdout, and an
 * OpenAI-compatible chat-completions endpoint through libcurl (when the
 * build found it: LEIR_HAVE_CURL).
 */
#define LEIR_EXPERIMENTAL 1
#include "leir/experimental/llm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef LEIR_HAVE_CURL
#include <curl/curl.h>
#include <pthread.h>
#endif

#include "arena.h"
#include "clock.h"
#include "error.h"
#include "spawn_attr.h"
#include "literal.h"
#include "llm_internal.h"
#include "options.h"
#include "strbuf.h"

extern char **environ;

typedef enum kind { KIND_CALLBACK, KIND_COMMAND, KIND_ENDPOINT } kind;

struct leir_llm {
  kind kind;
  leir_llm_options o;
  char *model, *api_key_env, *system_prompt; /* owned copies of the option strings */
  /* callback */
  leir_llm_complete_fn fn;
  void *payload;
  /* command */
  char **argv;
  pid_t pid; /* 0: not running; also its process group */
  int sock;  /* our end, -1 when not running */
  /* endpoint */
  char *url;
};

static const leir_llm_options defaults = LEIR_LLM_OPTIONS_INIT;

leir_status leir__llm_init_struct(void *opts, size_t size, const void *defaults,
                                  size_t full_size, const char *type) {
  if (!opts) return leir__error_arg(type, "%s is NULL", type);
  if (size < sizeof(uint32_t) || size > full_size)
    return leir__error_arg(type, "size %zu is not a size of %s (this library knows %zu bytes)",
                           size, type, full_size);
  memcpy(opts, defaults, size);
  uint32_t sz = (uint32_t)size;
  memcpy(opts, &sz, sizeof sz);
  return LEIR_OK;
}

leir_status leir_llm_options_init(leir_llm_options *opts, size_t size) {
  return leir__llm_init_struct(opts, size, &defaults, sizeof defaults, "leir_llm_options");
}

const char *leir__llm_system_prompt(const leir_llm *llm) {
  return llm->system_prompt ? llm->system_prompt : "You are a helpful assistant.";
}

static char *dup_or_null(const char *s, bool *ok) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (!d) *ok = false;
  else memcpy(d, s, n);
  return d;
}

static leir_status client_new(leir_llm **out, kind k, const leir_llm_options *opts) {
  leir_llm *c = calloc(1, sizeof *c);
  if (!c) return leir__error_nomem();
  c->kind = k;
  c->sock = -1;
  leir_status st = leir__options_read(&c->o, &defaults, sizeof c->o, opts, "leir_llm_options");
  if (st != LEIR_OK) {
    free(c);
    return st;
  }
  if (!(c->o.timeout_s > 0) || c->o.timeout_s > 1e6) {
    free(c);
    return leir__error_arg(NULL, "timeout_s must be in (0, 1e6] seconds");
  }
  if (c->o.max_answer_bytes == 0 || c->o.max_answer_bytes > ((size_t)1 << 30)) {
    free(c);
    return leir__error_arg(NULL, "max_answer_bytes must be in [1, 2^30]");
  }
  /* the size decides whether the caller's struct has the sampling fields;
   * NaN compares false, so it is refused as well */
  if (!(c->o.temperature < 0 || c->o.temperature <= 100) || !(c->o.top_p < 0 || c->o.top_p <= 1)) {
    free(c);
    return leir__error_arg(NULL, "temperature must be in [0, 100] and top_p in [0, 1] (negative: not sent)");
  }
  bool ok = true;
  c->model = dup_or_null(c->o.model, &ok);
  c->api_key_env = dup_or_null(c->o.api_key_env, &ok);
  c->system_prompt = dup_or_null(c->o.system_prompt, &ok);
  c->o.model = c->model;
  c->o.api_key_env = c->api_key_env;
  c->o.system_prompt = c->system_prompt;
  *out = c;
  if (!ok) {
    leir_llm_free(c);
    *out = NULL;
    return leir__error_nomem();
  }
  return LEIR_OK;
}

leir_status leir_llm_new_callback(leir_llm **out, leir_llm_complete_fn fn, void *payload,
                                  const leir_llm_options *opts) {
  if (!out || !fn) return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  leir_status st = client_new(out, KIND_CALLBACK, opts);
  if (st != LEIR_OK) return st;
  (*out)->fn = fn;
  (*out)->payload = payload;
  return LEIR_OK;
}

leir_status leir_llm_new_command(leir_llm **out, const char *const *argv,
                                 const leir_llm_options *opts) {
  if (!out || !argv || !argv[0] || !argv[0][0]) return leir__error_arg(NULL, "NULL or empty argv");
  *out = NULL;
  size_t n = 0;
  while (argv[n]) n++;
  leir_status st = client_new(out, KIND_COMMAND, opts);
  if (st != LEIR_OK) return st;
  leir_llm *c = *out;
  c->argv = calloc(n + 1, sizeof *c->argv);
  bool ok = c->argv != NULL;
  for (size_t i = 0; ok && i < n; i++) c->argv[i] = dup_or_null(argv[i], &ok);
  if (!ok) {
    leir_llm_free(c);
    *out = NULL;
    return leir__error_nomem();
  }
  return LEIR_OK;
}

leir_status leir_llm_new_endpoint(leir_llm **out, const char *url, const leir_llm_options *opts) {
  if (!out || !url || !url[0]) return leir__error_arg(NULL, "NULL or empty url");
  *out = NULL;
#ifndef LEIR_HAVE_CURL
  (void)opts;
  return leir__error(LEIR_ERR_UNSUPPORTED, "llm.endpoint", NULL, 0, 0,
                     "this libleir was built without libcurl: no chat-completions endpoint");
#else
  if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
    return leir__error_arg(url, "the endpoint URL must start with http:// or https://");
  leir_status st = client_new(out, KIND_ENDPOINT, opts);
  if (st != LEIR_OK) return st;
  bool ok = true;
  (*out)->url = dup_or_null(url, &ok);
  if (!ok) {
    leir_llm_free(*out);
    *out = NULL;
    return leir__error_nomem();
  }
  return LEIR_OK;
#endif
}

/* ---- the command ----------------------------------------------------------- */

static void command_stop(leir_llm *c) {
  if (c->sock >= 0) close(c->sock);
  c->sock = -1;
  if (c->pid > 0) {
    kill(-c->pid, SIGKILL);
    kill(c->pid, SIGKILL);
    while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR) {
    }
  }
  c->pid = 0;
}

static leir_status command_start(leir_llm *c) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return leir__error(LEIR_ERR_IO, "llm.command", c->argv[0], 0, 0, "socketpair failed: %s",
                       strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  bool fa_ok = posix_spawn_file_actions_init(&fa) == 0;
  bool attr_ok = posix_spawnattr_init(&attr) == 0;
  int rc = ENOMEM;
  if (fa_ok && attr_ok) {
    posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    leir__spawnattr_isolate(&attr);
    rc = posix_spawnp(&c->pid, c->argv[0], &fa, &attr, c->argv, environ);
  }
  if (fa_ok) posix_spawn_file_actions_destroy(&fa);
  if (attr_ok) posix_spawnattr_destroy(&attr);
  close(sv[1]);
  if (rc != 0) {
    close(sv[0]);
    c->pid = 0;
    return leir__error(LEIR_ERR_IO, "llm.command", c->argv[0], 0, 0, "cannot start %s: %s",
                       c->argv[0], strerror(rc));
  }
  int fl = fcntl(sv[0], F_GETFL);
  if (fl >= 0) fcntl(sv[0], F_SETFL, fl | O_NONBLOCK);
  c->sock = sv[0];
  return LEIR_OK;
}

/* Waits for `events` on the socket until `deadline`; 1 ready, 0 timeout. */
static int wait_fd(int fd, short events, double deadline) {
  for (;;) {
    double left = deadline - leir__now();
    if (left <= 0) return 0;
    struct pollfd p = {fd, events, 0};
    int ms = left > 1e6 ? 1000000000 : (int)(left * 1000.0) + 1;
    int r = poll(&p, 1, ms);
    if (r > 0) return 1;
    if (r < 0 && errno != EINTR) return 1; /* let the read/write report it */
  }
}

/* The JSON of a chat's messages: [{"role":..,"content":..},...]. */
static void put_messages(leir__strbuf *b, const leir_llm_message *m, size_t n) {
  leir__sb_putc(b, '[');
  for (size_t i = 0; i < n; i++) {
    if (i) leir__sb_putc(b, ',');
    leir__sb_puts(b, "{\"role\":");
    const char *role = m[i].role ? m[i].role : "user";
    leir__sb_put_json_string(b, role, strlen(role));
    leir__sb_puts(b, ",\"content\":");
    const char *content = m[i].content ? m[i].content : "";
    leir__sb_put_json_string(b, content, strlen(content));
    leir__sb_putc(b, '}');
  }
  leir__sb_putc(b, ']');
}

/* The sampling settings that are set, as JSON members (",\"temperature\":0.3,...");
 * `seed` >= 0 overrides the options' seed. */
static void put_number(leir__strbuf *b, const char *key, double x) {
  char t[40];
  /* the shortest of 15 to 17 digits that reads back as x: 0.3, not 0.29999999999999999 */
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(t, sizeof t, "%.*g", digits, x);
    if (strtod(t, NULL) == x) break;
  }
  leir__sb_printf(b, ",\"%s\":%s", key, t);
}

static void put_sampling(leir__strbuf *b, const leir_llm *c, int64_t seed) {
  if (c->o.temperature >= 0) put_number(b, "temperature", c->o.temperature);
  if (c->o.top_p >= 0) put_number(b, "top_p", c->o.top_p);
  if (c->o.max_tokens) leir__sb_printf(b, ",\"max_tokens\":%u", c->o.max_tokens);
  if (seed < 0) seed = c->o.seed;
  if (seed >= 0) leir__sb_printf(b, ",\"seed\":%lld", (long long)seed);
}

/* Reads `json` (a response) and copies the string at the end of `path`
 * (keys; a "0" step takes a list's first entry) into *answer. An "error"
 * key at the top level becomes LEIR_ERR_IO with its text. */
static leir_status answer_from_json(const char *json, size_t len, const char *const *path,
                                    size_t npath, const char *what, char **answer,
                                    size_t *answer_len, size_t max_answer) {
  leir__arena a;
  leir__arena_init(&a, len + 64);
  leir__lit_error e;
  memset(&e, 0, sizeof e);
  const leir__lit *v = leir__lit_parse(&a, json, len, 0, 0, &e);
  leir_status st = LEIR_OK;
  if (!v) {
    st = e.nomem ? leir__error_nomem()
                 : leir__error(LEIR_ERR_PARSE, "llm.response", what, 0, 0,
                               "the %s is not JSON (at byte %zu: %s)", what, e.offset, e.message);
    goto done;
  }
  const leir__lit *err = leir__lit_get(v, "error");
  if (err && err->kind != LEIR__LIT_NONE) {
    const char *t = leir__lit_str(err);
    if (!t && err->kind == LEIR__LIT_DICT) t = leir__lit_str(leir__lit_get(err, "message"));
    st = leir__error(LEIR_ERR_IO, "llm.model-error", what, 0, 0, "the model reported an error: %.300s",
                     t ? t : "(not a string)");
    goto done;
  }
  for (size_t i = 0; v && i < npath; i++) {
    if (strcmp(path[i], "0") == 0)
      v = v->kind == LEIR__LIT_LIST ? v->first : NULL;
    else
      v = leir__lit_get(v, path[i]);
  }
  if (!v || v->kind != LEIR__LIT_STR) {
    st = leir__error(LEIR_ERR_PARSE, "llm.response", what, 0, 0,
                     "the %s has no answer text (%s%s)", what, path[0], npath > 1 ? "..." : "");
    goto done;
  }
  if (v->n > max_answer) {
    st = leir__error(LEIR_ERR_LIMIT, "llm.answer-size", what, 0, 0,
                     "the answer has %zu bytes, more than the limit of %zu", v->n, max_answer);
    goto done;
  }
  /* the string may hold any bytes the escapes allow (bad_text: a NUL or
   * invalid UTF-8): the answer parser judges them */
  char *s = malloc(v->n + 1);
  if (!s) {
    st = leir__error_nomem();
    goto done;
  }
  memcpy(s, v->s, v->n);
  s[v->n] = '\0';
  *answer = s;
  if (answer_len) *answer_len = v->n;
done:
  leir__arena_release(&a);
  return st;
}

static leir_status command_complete(leir_llm *c, const leir_llm_message *m, size_t n, int64_t seed,
                                    char **answer, size_t *answer_len) {
  double deadline = leir__now() + c->o.timeout_s;
  if (c->pid > 0) { /* a command that died since is replaced */
    int status;
    if (waitpid(c->pid, &status, WNOHANG) == c->pid) {
      c->pid = 0;
      command_stop(c);
    }
  }
  if (c->pid == 0) {
    leir_status st = command_start(c);
    if (st != LEIR_OK) return st;
  }
  leir__strbuf req = LEIR__STRBUF_INIT;
  leir__sb_puts(&req, "{\"messages\":");
  put_messages(&req, m, n);
  put_sampling(&req, c, seed);
  leir__sb_puts(&req, "}\n");
  size_t req_len = 0;
  char *rq = leir__sb_finish(&req, &req_len);
  if (!rq) return leir__error_nomem();
  leir_status st = LEIR_OK;
  size_t sent = 0;
  while (st == LEIR_OK && sent < req_len) {
    if (!wait_fd(c->sock, POLLOUT, deadline)) {
      st = leir__error(LEIR_ERR_TIMEOUT, "llm.timeout", c->argv[0], 0, 0,
                       "the command did not read its request within %g s", c->o.timeout_s);
      break;
    }
    ssize_t w = send(c->sock, rq + sent, req_len - sent, MSG_NOSIGNAL);
    if (w > 0) sent += (size_t)w;
    else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    else
      st = leir__error(LEIR_ERR_IO, "llm.command", c->argv[0], 0, 0,
                       "the command stopped reading its input: %s", strerror(errno));
  }
  free(rq);
  /* one line back, bounded */
  size_t limit = c->o.max_answer_bytes * 8 + 4096, len = 0, cap = 0;
  char *line = NULL;
  bool complete = false, extra = false;
  while (st == LEIR_OK && !complete) {
    if (!wait_fd(c->sock, POLLIN, deadline)) {
      st = leir__error(LEIR_ERR_TIMEOUT, "llm.timeout", c->argv[0], 0, 0,
                       "no complete answer line from the command within %g s (%zu bytes so far)",
                       c->o.timeout_s, len);
      break;
    }
    if (cap - len < 4096) {
      size_t ncap = cap ? cap * 2 : 8192;
      if (ncap > limit + 4096) ncap = limit + 4096;
      char *nl = realloc(line, ncap + 1);
      if (!nl) {
        st = leir__error_nomem();
        break;
      }
      line = nl;
      cap = ncap;
    }
    ssize_t r = recv(c->sock, line + len, cap - len, 0);
    if (r > 0) {
      char *nlpos = memchr(line + len, '\n', (size_t)r);
      len += (size_t)r;
      if (nlpos) {
        extra = nlpos + 1 < line + len; /* bytes after the line */
        len = (size_t)(nlpos - line);
        complete = true;
      } else if (len > limit) {
        st = leir__error(LEIR_ERR_LIMIT, "llm.answer-size", c->argv[0], 0, 0,
                         "the command's answer line passed %zu bytes (max_answer_bytes %zu)",
                         limit, c->o.max_answer_bytes);
      }
    } else if (r == 0) {
      st = leir__error(LEIR_ERR_IO, "llm.command", c->argv[0], 0, 0,
                       "the command closed its output before a complete answer line (%zu bytes)",
                       len);
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      st = leir__error(LEIR_ERR_IO, "llm.command", c->argv[0], 0, 0, "reading the command: %s",
                       strerror(errno));
    }
  }
  if (st == LEIR_OK) {
    static const char *const path[] = {"content"};
    st = answer_from_json(line, len, path, 1, "command's answer line", answer, answer_len,
                          c->o.max_answer_bytes);
    /* more than one line for one request: the command is out of step with
     * the protocol, so the next request gets a fresh one */
    if (extra) command_stop(c);
  } else {
    command_stop(c); /* killed: timeouts, oversize lines, broken pipes */
  }
  free(line);
  return st;
}

/* ---- the endpoint ------------------------------------------------------------ */

#ifdef LEIR_HAVE_CURL
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;
static void curl_init(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

typedef struct sink {
  char *buf;
  size_t len, cap, limit;
  bool over;
} sink;

static size_t on_body(char *data, size_t size, size_t nmemb, void *user) {
  sink *s = user;
  size_t n = size * nmemb;
  if (s->len + n > s->limit) {
    s->over = true;
    return 0; /* aborts the transfer */
  }
  if (s->len + n + 1 > s->cap) {
    size_t ncap = s->cap ? s->cap * 2 : 16384;
    while (ncap < s->len + n + 1) ncap *= 2;
    if (ncap > s->limit + 1) ncap = s->limit + 1;
    char *nb = realloc(s->buf, ncap);
    if (!nb) return 0;
    s->buf = nb;
    s->cap = ncap;
  }
  memcpy(s->buf + s->len, data, n);
  s->len += n;
  s->buf[s->len] = '\0';
  return n;
}

static leir_status endpoint_complete(leir_llm *c, const leir_llm_message *m, size_t n, int64_t seed,
                                     char **answer, size_t *answer_len) {
  pthread_once(&curl_once, curl_init);
  if (curl_init_rc != CURLE_OK)
    return leir__error(LEIR_ERR_IO, "llm.endpoint", c->url, 0, 0, "libcurl did not initialize: %s",
                       curl_easy_strerror(curl_init_rc));
  leir__strbuf body = LEIR__STRBUF_INIT;
  leir__sb_puts(&body, "{\"model\":");
  const char *model = c->model ? c->model : "default";
  leir__sb_put_json_string(&body, model, strlen(model));
  leir__sb_puts(&body, ",\"messages\":");
  put_messages(&body, m, n);
  put_sampling(&body, c, seed);
  leir__sb_puts(&body, ",\"stream\":false}");
  size_t body_len = 0;
  char *bd = leir__sb_finish(&body, &body_len);
  if (!bd) return leir__error_nomem();
  CURL *h = curl_easy_init();
  struct curl_slist *headers = NULL;
  char *auth = NULL;
  leir_status st = LEIR_OK;
  if (!h) {
    free(bd);
    return leir__error_nomem();
  }
  headers = curl_slist_append(headers, "Content-Type: application/json");
  const char *key = c->api_key_env ? getenv(c->api_key_env) : NULL;
  if (key && key[0]) {
    size_t al = strlen(key) + 32;
    auth = malloc(al);
    if (auth) {
      snprintf(auth, al, "Authorization: Bearer %s", key);
      headers = curl_slist_append(headers, auth);
    }
  }
  sink s = {NULL, 0, 0, c->o.max_answer_bytes * 8 + 65536, false};
  curl_easy_setopt(h, CURLOPT_URL, c->url);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, bd);
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(c->o.timeout_s * 1000.0 + 0.5));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->o.timeout_s * 1000.0 + 0.5));
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  CURLcode rc = curl_easy_perform(h);
  long code = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
  if (s.over)
    st = leir__error(LEIR_ERR_LIMIT, "llm.answer-size", c->url, 0, 0,
                     "the response passed %zu bytes (max_answer_bytes %zu)", s.limit,
                     c->o.max_answer_bytes);
  else if (rc == CURLE_OPERATION_TIMEDOUT)
    st = leir__error(LEIR_ERR_TIMEOUT, "llm.timeout", c->url, 0, 0,
                     "no complete response within %g s", c->o.timeout_s);
  else if (rc != CURLE_OK)
    st = leir__error(LEIR_ERR_IO, "llm.endpoint", c->url, 0, 0, "request failed: %s",
                     curl_easy_strerror(rc));
  else if (code < 200 || code > 299)
    st = leir__error(LEIR_ERR_IO, "llm.http", c->url, 0, 0, "HTTP status %ld: %.200s", code,
                     s.buf ? s.buf : "");
  else {
    static const char *const path[] = {"choices", "0", "message", "content"};
    st = answer_from_json(s.buf ? s.buf : "", s.len, path, 4, "endpoint's response", answer,
                          answer_len, c->o.max_answer_bytes);
  }
  curl_slist_free_all(headers);
  if (auth) {
    memset(auth, 0, strlen(auth));
    free(auth);
  }
  curl_easy_cleanup(h);
  free(s.buf);
  free(bd);
  return st;
}
#endif

/* ---- every kind ---------------------------------------------------------------- */

leir_status leir_llm_complete(leir_llm *c, const leir_llm_message *m, size_t n, char **answer,
                              size_t *answer_len) {
  return leir_llm_complete_seed(c, m, n, -1, answer, answer_len);
}

leir_status leir_llm_complete_seed(leir_llm *c, const leir_llm_message *m, size_t n, int64_t seed,
                                   char **answer, size_t *answer_len) {
  if (!c || !answer || (n && !m)) return leir__error_arg(NULL, "NULL argument");
  *answer = NULL;
  if (answer_len) *answer_len = 0;
  switch (c->kind) {
    case KIND_CALLBACK: {
      char *a = NULL;
      size_t al = 0;
      leir_status st = c->fn(c->payload, m, n, &a, &al);
      if (st != LEIR_OK) {
        free(a);
        if (leir_error_last()->status != st)
          leir__error(st, "llm.callback", NULL, 0, 0, "the model callback returned %s",
                      leir_status_name(st));
        return st;
      }
      if (!a) return leir__error(LEIR_ERR_IO, "llm.callback", NULL, 0, 0, "the model callback gave no answer");
      if (al > c->o.max_answer_bytes) {
        free(a);
        return leir__error(LEIR_ERR_LIMIT, "llm.answer-size", NULL, 0, 0,
                           "the answer has %zu bytes, more than the limit of %zu", al,
                           c->o.max_answer_bytes);
      }
      *answer = a;
      if (answer_len) *answer_len = al;
      return LEIR_OK;
    }
    case KIND_COMMAND: return command_complete(c, m, n, seed, answer, answer_len);
    case KIND_ENDPOINT:
#ifdef LEIR_HAVE_CURL
      return endpoint_complete(c, m, n, seed, answer, answer_len);
#else
      (void)seed;
      break;
#endif
  }
  return leir__error(LEIR_ERR_UNSUPPORTED, "llm.endpoint", NULL, 0, 0, "no libcurl in this build");
}

void leir_llm_free(leir_llm *c) {
  if (!c) return;
  if (c->kind == KIND_COMMAND) command_stop(c);
  if (c->argv)
    for (size_t i = 0; c->argv[i]; i++) free(c->argv[i]);
  free(c->argv);
  free(c->url);
  free(c->model);
  free(c->api_key_env);
  free(c->system_prompt);
  free(c);
}
