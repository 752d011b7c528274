/* leir_eval_drive: a model asked every prompt of a dataset's split, n
 * samples each, the answers appended to a JSONL file that leir_eval_run
 * scores (docs/dataset.md, "A model behind leir eval").
 *
 * Resuming is the file itself: every line names its prompt and sample, the
 * lines of one prompt go out in one append (under a lock, then fdatasync),
 * and a rerun asks only the (prompt, sample) pairs the file lacks after
 * cutting a torn last line. Requests run on one thread per client; what a
 * worker thread fails with is carried back to the caller's thread, whose
 * last error it becomes. */
#define _GNU_SOURCE 1 /* fdatasync, flock */
#define LEIR_EXPERIMENTAL
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "ds.h"
#include "clock.h"
#include "error.h"
#include "leir/experimental/llm.h"
#include "literal.h"
#include "llm_internal.h" /* the client's system prompt */
#include "options.h"
#include "prompt.h"
#include "strbuf.h"

/* An answers line longer than this is skipped when resuming (its sample is
 * asked again): a model's answer is bounded by the client's
 * max_answer_bytes (at most 1 GiB) and JSON escapes it at most 6 times. */
#define LINE_MAX_BYTES ((size_t)1 << 28)
#define MAX_SAMPLES 100000u
#define MAX_MODELS 256u

static const leir_eval_drive_options drive_defaults = LEIR_EVAL_DRIVE_OPTIONS_INIT;

leir_status leir_eval_drive_options_init(leir_eval_drive_options *opts, size_t size) {
  return leir__llm_init_struct(opts, size, &drive_defaults, sizeof drive_defaults,
                               "leir_eval_drive_options");
}

typedef struct dr_prompt {
  const char *id, *user;
  uint32_t n;       /* transformed IRs the prompt asks for in its one call */
  uint32_t *todo;   /* samples the answers file lacks */
  uint32_t ntodo;
} dr_prompt;

typedef struct done_key {
  char *id;
  int64_t sample;
} done_key;

typedef struct drive {
  const leir_eval_drive_options *o;
  leir__arena arena;
  char *text;       /* the prompt file */
  dr_prompt *p;
  size_t np;
  int fd;           /* the answers file, O_APPEND, locked */
  const char *path;
  double t0;
  pthread_mutex_t mu;
  size_t next;      /* the next prompt to take */
  int stop;         /* a fatal error or a cancellation: take no more prompts */
  leir_status st;   /* the first fatal error, with its texts */
  char rule[64], subject[256], message[512];
  leir_eval_drive_progress prog;
} drive;

static int cancelled(const drive *d) { return d->o->cancel && *d->o->cancel; }

/* ---- the prompts ------------------------------------------------------------ */

static leir_status load_prompts(drive *d, const char *dir, const char *file) {
  char *path = leir__ds_join(dir, file);
  if (!path) return leir__error_nomem();
  size_t len = 0;
  leir_status st = leir__ds_read_file(path, &d->text, &len);
  free(path);
  if (st != LEIR_OK) return st;
  size_t cap = 0, line = 0;
  for (char *p = d->text, *end = d->text + len; p < end; p = p + strlen(p) + 1) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) nl = end;
    *nl = '\0';
    line++;
    if (nl == p) continue;
    leir__lit_error e;
    const leir__lit *v = leir__lit_parse(&d->arena, p, (size_t)(nl - p), 0, 0, &e);
    if (!v && e.nomem) return leir__error_nomem();
    const leir__lit *msgs = v ? leir__lit_get(v, "messages") : NULL;
    const char *user = NULL;
    for (const leir__lit *m = msgs && msgs->kind == LEIR__LIT_LIST ? msgs->first : NULL; m && !user; m = m->next)
      if (!strcmp(leir__lit_field(m, "role"), "user")) user = leir__lit_str(leir__lit_get(m, "content"));
    const char *id = v ? leir__lit_str(leir__lit_get(v, "id")) : NULL;
    if (!v || v->kind != LEIR__LIT_DICT || !id || !*id || !user)
      return leir__error(LEIR_ERR_PARSE, "dataset.file", file, (uint32_t)line, 0,
                         "%s line %zu is not a prompt record (an object with an id and a user message)",
                         file, line);
    if (d->o->limit && d->np == d->o->limit) break;
    if (d->np == cap) {
      size_t nc = cap ? 2 * cap : 64;
      dr_prompt *q = realloc(d->p, nc * sizeof *q);
      if (!q) return leir__error_nomem();
      d->p = q;
      cap = nc;
    }
    int64_t n = 1;
    leir__lit_int(leir__lit_get(v, "n"), &n);
    dr_prompt *r = &d->p[d->np++];
    memset(r, 0, sizeof *r);
    r->id = id;
    r->user = user;
    r->n = n > 0 && n < 1000 ? (uint32_t)n : 1;
  }
  return LEIR_OK;
}

/* ---- what the answers file already has ------------------------------------------ */

static int cmp_done(const void *a, const void *b) {
  const done_key *x = a, *y = b;
  int c = strcmp(x->id, y->id);
  return c ? c : (x->sample > y->sample) - (x->sample < y->sample);
}

typedef struct done_set {
  done_key *v;
  size_t n, cap;
} done_set;

static void done_free(done_set *s) {
  for (size_t i = 0; i < s->n; i++) free(s->v[i].id);
  free(s->v);
}

/* One line of the answers file: a sample when it names a prompt and a
 * sample and has the answer or the error it ended with. */
static leir_status note_line(done_set *s, const char *line, size_t len) {
  leir__arena a;
  leir__arena_init(&a, 0);
  leir__lit_error e;
  const leir__lit *v = leir__lit_parse(&a, line, len, 0, 0, &e);
  const char *id = v ? leir__lit_str(leir__lit_get(v, "id")) : NULL;
  int64_t sample = -1;
  leir_status st = LEIR_OK;
  if (!v && e.nomem) st = leir__error_nomem();
  if (id && leir__lit_int(leir__lit_get(v, "sample"), &sample) && sample >= 0 &&
      (leir__lit_get(v, "answer") || leir__lit_get(v, "error"))) {
    if (s->n == s->cap) {
      size_t nc = s->cap ? 2 * s->cap : 256;
      done_key *q = realloc(s->v, nc * sizeof *q);
      if (!q) st = leir__error_nomem();
      else s->v = q, s->cap = nc;
    }
    if (st == LEIR_OK) {
      size_t n = strlen(id) + 1;
      char *c = malloc(n);
      if (!c) st = leir__error_nomem();
      else {
        memcpy(c, id, n);
        s->v[s->n].id = c;
        s->v[s->n++].sample = sample;
      }
    }
  }
  leir__arena_release(&a);
  return st;
}

/* Reads the answers file line by line (bounded: a longer line is skipped),
 * then cuts what follows its last newline, a write that a kill tore. */
static leir_status scan_answers(drive *d, done_set *s) {
  size_t cap = 1 << 16, len = 0; /* buf[0..len): the start of a line not ended yet */
  char *buf = malloc(cap);
  if (!buf) return leir__error_nomem();
  off_t off = 0, keep = 0; /* read so far; just after the last newline */
  int skipping = 0;        /* in a line over LINE_MAX_BYTES */
  leir_status st = LEIR_OK;
  while (st == LEIR_OK) {
    if (skipping) len = 0;
    if (cap - len < (1 << 15)) {
      size_t nc = cap * 2 > LINE_MAX_BYTES + (1 << 16) ? LINE_MAX_BYTES + (1 << 16) : cap * 2;
      char *q = realloc(buf, nc);
      if (!q) {
        st = leir__error_nomem();
        break;
      }
      buf = q;
      cap = nc;
    }
    ssize_t r = pread(d->fd, buf + len, cap - len, off);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0)
      st = leir__error(LEIR_ERR_IO, "eval.answers", d->path, 0, 0, "cannot read %s: %s", d->path,
                       strerror(errno));
    if (r <= 0) break;
    off += r;
    size_t from = 0, got = len + (size_t)r;
    for (char *nl; st == LEIR_OK && (nl = memchr(buf + from, '\n', got - from)); from = (size_t)(nl - buf) + 1) {
      if (!skipping) st = note_line(s, buf + from, (size_t)(nl - buf) - from);
      skipping = 0;
      keep = off - (off_t)(got - (size_t)(nl - buf) - 1);
    }
    memmove(buf, buf + from, got - from);
    len = got - from;
    if (len > LINE_MAX_BYTES) skipping = 1;
  }
  free(buf);
  if (st == LEIR_OK && off > keep && ftruncate(d->fd, keep) != 0)
    st = leir__error(LEIR_ERR_IO, "eval.answers", d->path, 0, 0, "cannot cut the torn last line of %s: %s",
                     d->path, strerror(errno));
  if (st == LEIR_OK && s->n) qsort(s->v, s->n, sizeof *s->v, cmp_done);
  return st;
}

static int has_sample(const done_set *s, const char *id, uint32_t sample) {
  done_key k = {(char *)id, sample};
  return s->n && bsearch(&k, s->v, s->n, sizeof *s->v, cmp_done) != NULL;
}

/* Which samples of every prompt are still to ask. */
static leir_status plan(drive *d, const done_set *s) {
  uint32_t n = d->o->samples;
  for (size_t i = 0; i < d->np; i++) {
    dr_prompt *r = &d->p[i];
    uint32_t missing = 0;
    for (uint32_t k = 0; k < n; k++) missing += !has_sample(s, r->id, k);
    if (!missing) {
      d->prog.prompts_resumed++;
      d->prog.prompts_done++;
      continue;
    }
    if (!(r->todo = malloc(missing * sizeof *r->todo))) return leir__error_nomem();
    for (uint32_t k = 0; k < n; k++)
      if (!has_sample(s, r->id, k)) r->todo[r->ntodo++] = k;
  }
  return LEIR_OK;
}

/* ---- asking ----------------------------------------------------------------- */

/* `s` as a JSON string; bytes that are not UTF-8 become U+FFFD (JSON cannot
 * carry them; a model's NUL is kept as \u0000). */
static void put_text(leir__strbuf *b, const char *s, size_t n) {
  if (leir__utf8_valid(s, n)) {
    leir__sb_put_json_string(b, s, n);
    return;
  }
  leir__strbuf c = LEIR__STRBUF_INIT;
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t k = leir__utf8_next(s + i, n - i, &cp);
    if (k) leir__sb_put(&c, s + i, k);
    else leir__sb_puts(&c, "\xef\xbf\xbd");
    i += k ? k : 1;
  }
  if (c.failed) b->failed = 1;
  else leir__sb_put_json_string(b, c.data ? c.data : "", c.len);
  leir__sb_release(&c);
}

/* Records the first fatal error (the calling thread's last error) and
 * stops the run; the caller holds d->mu. */
static void fatal_locked(drive *d, leir_status st) {
  const leir_error *e = leir_error_last();
  if (d->st == LEIR_OK) {
    d->st = st;
    snprintf(d->rule, sizeof d->rule, "%s", e->status == st ? e->rule : "eval.drive");
    snprintf(d->subject, sizeof d->subject, "%s", e->status == st ? e->subject : "");
    snprintf(d->message, sizeof d->message, "%s", e->status == st ? e->message : leir_status_name(st));
  }
  d->stop = 1;
}

static void fatal(drive *d, leir_status st) {
  pthread_mutex_lock(&d->mu);
  fatal_locked(d, st);
  pthread_mutex_unlock(&d->mu);
}

/* Sleeps `s` seconds unless the run is cancelled meanwhile. */
static void pause_s(const drive *d, double s) {
  for (double end = leir__now() + s; !cancelled(d) && leir__now() < end;) {
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL);
  }
}

/* Appends one prompt's lines in one write, then makes them durable. */
static leir_status append(drive *d, const char *data, size_t len) {
  for (size_t done = 0; done < len;) {
    ssize_t w = write(d->fd, data + done, len - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      return leir__error(LEIR_ERR_IO, "eval.answers", d->path, 0, 0, "cannot append to %s: %s", d->path,
                         w < 0 ? strerror(errno) : "no progress");
    done += (size_t)w;
  }
  if (fdatasync(d->fd) != 0 && errno != EINVAL)
    return leir__error(LEIR_ERR_IO, "eval.answers", d->path, 0, 0, "cannot sync %s: %s", d->path, strerror(errno));
  return LEIR_OK;
}

/* Asks the missing samples of one prompt; 0 when the run must stop. */
static int ask_prompt(drive *d, leir_llm *llm, const dr_prompt *r) {
  const leir_eval_drive_options *o = d->o;
  char *with_hw = NULL;
  const char *user = r->user;
  if (o->hardware && *o->hardware) {
    leir_status st = leir__prompt_with_hardware(r->user, strlen(r->user), o->hardware, &with_hw, NULL);
    if (st != LEIR_OK) {
      fatal(d, st);
      return 0;
    }
    user = with_hw;
  }
  const char *sys = leir__llm_system_prompt(llm);
  leir_llm_message m[2] = {{"system", sys}, {"user", user}};
  const leir_llm_message *msgs = sys[0] ? m : m + 1;
  size_t nmsgs = sys[0] ? 2 : 1;
  leir__strbuf b = LEIR__STRBUF_INIT;
  uint64_t requests = 0, answers = 0, failed = 0;
  int ok = 1;
  for (uint32_t k = 0; ok && k < r->ntodo; k++) {
    uint32_t sample = r->todo[k];
    int64_t seed = o->seed >= 0 ? o->seed + (int64_t)sample : -1;
    double t = leir__now();
    char *ans = NULL;
    size_t alen = 0;
    leir_status st = LEIR_OK;
    for (uint32_t attempt = 0;; attempt++) {
      if (cancelled(d)) {
        ok = 0;
        break;
      }
      requests++;
      st = leir_llm_complete_seed(llm, msgs, nmsgs, seed, &ans, &alen);
      if (st != LEIR_ERR_IO || attempt >= o->retries) break;
      pause_s(d, 0.5 * (double)(1u << (attempt < 6 ? attempt : 6)));
    }
    if (!ok) break;
    if (st == LEIR_ERR_IO || st == LEIR_ERR_NOMEM || st == LEIR_ERR_ARGUMENT || st == LEIR_ERR_CANCELLED) {
      fatal(d, st); /* not the answer's doing: stop, a rerun asks again */
      ok = 0;
      break;
    }
    leir__sb_puts(&b, "{\"id\":");
    leir__ds_put_str(&b, r->id);
    leir__sb_printf(&b, ",\"sample\":%u,\"seed\":", sample);
    if (seed >= 0) leir__sb_printf(&b, "%lld", (long long)seed);
    else leir__sb_puts(&b, "null");
    leir__sb_printf(&b, ",\"requested\":%u,\"hardware\":", r->n);
    leir__ds_put_str(&b, o->hardware && *o->hardware ? o->hardware : NULL);
    if (st == LEIR_OK) {
      leir__sb_puts(&b, ",\"answer\":");
      put_text(&b, ans ? ans : "", alen);
      answers++;
    } else {
      const leir_error *e = leir_error_last();
      leir__sb_printf(&b, ",\"error\":{\"status\":\"%s\",\"rule\":", leir_status_name(st));
      leir__ds_put_str(&b, e->status == st ? e->rule : "");
      leir__sb_puts(&b, ",\"message\":");
      put_text(&b, e->status == st ? e->message : "", e->status == st ? strlen(e->message) : 0);
      leir__sb_putc(&b, '}');
      failed++;
    }
    leir_free(ans);
    leir__sb_printf(&b, ",\"elapsed_s\":%.3f}\n", leir__now() - t);
  }
  leir_free(with_hw);
  if (b.failed) {
    leir__sb_release(&b);
    fatal(d, leir__error_nomem());
    return 0;
  }
  pthread_mutex_lock(&d->mu);
  d->prog.requests += requests;
  if (ok) {
    leir_status st = append(d, b.data, b.len);
    if (st == LEIR_OK) {
      d->prog.prompts_done++;
      d->prog.answers += answers;
      d->prog.failed += failed;
      d->prog.elapsed_s = leir__now() - d->t0;
      if (o->progress) o->progress(&d->prog, o->payload);
    } else {
      fatal_locked(d, st);
      ok = 0;
    }
  }
  pthread_mutex_unlock(&d->mu);
  leir__sb_release(&b);
  return ok;
}

typedef struct worker {
  drive *d;
  leir_llm *llm;
  pthread_t th;
  int started;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  drive *d = w->d;
  for (;;) {
    pthread_mutex_lock(&d->mu);
    while (d->next < d->np && !d->p[d->next].ntodo) d->next++;
    size_t i = d->stop || cancelled(d) ? d->np : d->next;
    if (i < d->np) d->next++;
    pthread_mutex_unlock(&d->mu);
    if (i >= d->np || !ask_prompt(d, w->llm, &d->p[i])) break;
  }
  return NULL;
}

/* ---- the run ------------------------------------------------------------------ */

static leir_status open_answers(drive *d) {
  d->fd = open(d->path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644);
  if (d->fd < 0)
    return leir__error(LEIR_ERR_IO, "eval.answers", d->path, 0, 0, "cannot open %s: %s", d->path, strerror(errno));
  struct stat sb;
  if (fstat(d->fd, &sb) != 0 || !S_ISREG(sb.st_mode))
    return leir__error(LEIR_ERR_IO, "eval.answers", d->path, 0, 0, "%s is not a regular file", d->path);
  int fl = fcntl(d->fd, F_GETFL);
  if (fl >= 0) fcntl(d->fd, F_SETFL, fl & ~O_NONBLOCK);
  /* one writer: two runs on one file would ask the same samples twice */
  if (flock(d->fd, LOCK_EX | LOCK_NB) != 0)
    return leir__error(LEIR_ERR_IO, "eval.answers", d->path, 0, 0,
                       "%s is being written by another run (it holds the file's lock)", d->path);
  return LEIR_OK;
}

leir_status leir_eval_drive(leir_eval_drive_progress *out, leir_llm *const *models, size_t nmodels,
                            const char *dataset_dir, const char *answers_path,
                            const leir_eval_drive_options *opts) {
  if (out) memset(out, 0, sizeof *out);
  if (!models || !dataset_dir || !answers_path || !*answers_path)
    return leir__error_arg(NULL, "models, dataset_dir and answers_path are required");
  if (nmodels < 1 || nmodels > MAX_MODELS)
    return leir__error_arg("nmodels", "1 to %u models, not %zu", MAX_MODELS, nmodels);
  for (size_t i = 0; i < nmodels; i++)
    if (!models[i]) return leir__error_arg("models", "models[%zu] is NULL", i);
  leir_eval_drive_options o;
  leir_status st = LEIR__OPTIONS_READ(leir_eval_drive_options, &o, opts, LEIR_EVAL_DRIVE_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  const char *file = !o.split || !strcmp(o.split, "test") ? "eval.jsonl"
                     : !strcmp(o.split, "validation")    ? "validation.jsonl"
                                                         : NULL;
  if (!file) return leir__error_arg("split", "split is \"test\" or \"validation\", not \"%.40s\"", o.split);
  if (o.samples < 1 || o.samples > MAX_SAMPLES)
    return leir__error_arg("samples", "1 to %u samples per prompt, not %u", MAX_SAMPLES, o.samples);
  if (o.seed > INT64_MAX - (int64_t)MAX_SAMPLES) return leir__error_arg("seed", "seed is at most 2^63 - 1 - 100000");
  if (o.retries > 100) return leir__error_arg("retries", "at most 100 retries, not %u", o.retries);
  if (o.hardware && *o.hardware) {
    char *probe = NULL;
    if ((st = leir__prompt_with_hardware("", 0, o.hardware, &probe, NULL)) != LEIR_OK) return st;
    leir_free(probe);
  }
  drive d;
  memset(&d, 0, sizeof d);
  d.o = &o;
  d.fd = -1;
  d.path = answers_path;
  d.t0 = leir__now();
  leir__arena_init(&d.arena, 0);
  done_set done = {NULL, 0, 0};
  int mu = pthread_mutex_init(&d.mu, NULL) == 0;
  if (!mu) st = leir__error_nomem();
  if (st == LEIR_OK) st = load_prompts(&d, dataset_dir, file);
  if (st == LEIR_OK) st = open_answers(&d);
  if (st == LEIR_OK) st = scan_answers(&d, &done);
  if (st == LEIR_OK) st = plan(&d, &done);
  done_free(&done);
  if (st == LEIR_OK) {
    d.prog.prompts_total = d.np;
    worker w[MAX_MODELS];
    for (size_t i = 0; i < nmodels; i++) {
      w[i].d = &d;
      w[i].llm = models[i];
      /* the caller's thread is worker 0; a thread that cannot start leaves
       * its share to the others */
      w[i].started = i > 0 && pthread_create(&w[i].th, NULL, work, &w[i]) == 0;
    }
    work(&w[0]);
    for (size_t i = 1; i < nmodels; i++)
      if (w[i].started) pthread_join(w[i].th, NULL);
    d.prog.elapsed_s = leir__now() - d.t0;
    if (d.st != LEIR_OK)
      st = leir__error(d.st, d.rule, d.subject, 0, 0, "%s", d.message);
    else if (cancelled(&d) && d.prog.prompts_done < d.prog.prompts_total)
      st = leir__error(LEIR_ERR_CANCELLED, "eval.cancelled", answers_path, 0, 0,
                       "cancelled with %llu of %llu prompts answered; a rerun goes on",
                       (unsigned long long)d.prog.prompts_done, (unsigned long long)d.prog.prompts_total);
  }
  if (out) *out = d.prog;
  if (d.fd >= 0) close(d.fd);
  for (size_t i = 0; i < d.np; i++) free(d.p[i].todo);
  free(d.p);
  free(d.text);
  leir__arena_release(&d.arena);
  if (mu) pthread_mutex_destroy(&d.mu);
  return st;
}
