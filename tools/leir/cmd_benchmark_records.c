/* The records of leir benchmark: one JSON line per finished run in
 * DIR/runs.jsonl (written by this tool, read back to resume and to
 * aggregate), and the summary (DIR/summary.json, DIR/summary.md). The lines
 * are read with a small reader of this tool's own fields, which is strict:
 * a line it cannot read is not a finished run and is run again. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_benchmark_records.h"

/* ---- reading our own JSON lines ------------------------------------------ */

/* The value after "key": in a line (NULL when absent). An unescaped quote
 * cannot occur inside a JSON string, so the pattern only matches a key. */
static const char *field(const char *line, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(line, pat);
  return p ? p + strlen(pat) : NULL;
}

/* A JSON string at *pp (after its opening quote is checked); the escapes
 * this tool writes (\" \\ \/ \b \f \n \r \t \uXXXX). Returns a malloc'd
 * string and advances *pp past the closing quote; NULL when malformed. */
static char *read_string(const char **pp) {
  const char *p = *pp;
  if (*p != '"') return NULL;
  p++;
  size_t cap = 64, n = 0;
  char *s = malloc(cap);
  if (!s) return NULL;
  while (*p && *p != '"') {
    if (n + 8 > cap) {
      char *t = realloc(s, cap *= 2);
      if (!t) break;
      s = t;
    }
    if (*p != '\\') {
      s[n++] = *p++;
      continue;
    }
    p++;
    switch (*p) {
    case '"': case '\\': case '/': s[n++] = *p++; break;
    case 'b': s[n++] = '\b', p++; break;
    case 'f': s[n++] = '\f', p++; break;
    case 'n': s[n++] = '\n', p++; break;
    case 'r': s[n++] = '\r', p++; break;
    case 't': s[n++] = '\t', p++; break;
    case 'u': {
      unsigned v = 0;
      int k = 1;
      for (; k <= 4 && isxdigit((unsigned char)p[k]); k++)
        v = v * 16 + (unsigned)(isdigit((unsigned char)p[k]) ? p[k] - '0' : (tolower(p[k]) - 'a' + 10));
      if (k != 5) goto bad;
      /* UTF-8 of a code point below 0x10000 (the tool writes only control
       * characters this way) */
      if (v < 0x80) s[n++] = (char)v;
      else if (v < 0x800) s[n++] = (char)(0xc0 | v >> 6), s[n++] = (char)(0x80 | (v & 0x3f));
      else s[n++] = (char)(0xe0 | v >> 12), s[n++] = (char)(0x80 | (v >> 6 & 0x3f)),
           s[n++] = (char)(0x80 | (v & 0x3f));
      p += 5;
      break;
    }
    default: goto bad;
    }
  }
  if (*p != '"') goto bad;
  s[n] = '\0';
  *pp = p + 1;
  return s;
bad:
  free(s);
  return NULL;
}

static char *get_str(const char *line, const char *key) {
  const char *p = field(line, key);
  return p ? read_string(&p) : NULL;
}

static bool get_num(const char *line, const char *key, double *out) {
  const char *p = field(line, key);
  if (!p) return false;
  char *end;
  errno = 0;
  double v = strtod(p, &end);
  if (end == p || errno || !isfinite(v)) return false;
  *out = v;
  return true;
}

/* "steps":["...","..."] joined with newlines. */
static char *get_steps(const char *line) {
  const char *p = field(line, "steps");
  if (!p || *p != '[') return NULL;
  p++;
  size_t cap = 64, n = 0;
  char *out = calloc(1, cap);
  while (out && *p == '"') {
    char *s = read_string(&p);
    if (!s) break;
    size_t l = strlen(s);
    if (n + l + 2 > cap) {
      while (n + l + 2 > cap) cap *= 2;
      char *t = realloc(out, cap);
      if (!t) {
        free(s);
        break;
      }
      out = t;
    }
    memcpy(out + n, s, l);
    n += l;
    out[n++] = '\n';
    out[n] = '\0';
    free(s);
    if (*p == ',') p++;
  }
  if (!out || *p != ']') {
    free(out);
    return NULL;
  }
  return out;
}

void bench_run_free(bench_run *r) {
  free(r->program);
  free(r->algorithm);
  free(r->status);
  free(r->steps);
  free(r->error);
  memset(r, 0, sizeof *r);
}

bool bench_run_parse(const char *line, bench_run *r) {
  memset(r, 0, sizeof *r);
  size_t n = strlen(line);
  if (strncmp(line, "{\"program\":", 11) != 0 || n < 2 || line[n - 1] != '}') return false;
  r->program = get_str(line, "program");
  r->algorithm = get_str(line, "algorithm");
  r->status = get_str(line, "status");
  r->steps = get_steps(line);
  r->error = get_str(line, "error");
  double v[12];
  static const char *const nums[] = {"speedup", "best_speedup", "final_lo", "final_hi",
                                     "best_depth", "samples", "measured", "reused",
                                     "accepted", "rejected", "samples_to_best", "seconds"};
  bool ok = r->program && r->algorithm && r->status && r->steps && r->error;
  for (int i = 0; ok && i < 12; i++) ok = get_num(line, nums[i], &v[i]);
  if (!ok || (strcmp(r->status, "ok") && strcmp(r->status, "error")) || !(v[0] > 0)) {
    bench_run_free(r);
    return false;
  }
  r->speedup = v[0];
  r->best_speedup = v[1];
  r->final_lo = v[2];
  r->final_hi = v[3];
  r->best_depth = (uint32_t)v[4];
  r->samples = (uint32_t)v[5];
  r->measured = (uint32_t)v[6];
  r->reused = (uint32_t)v[7];
  r->accepted = (uint32_t)v[8];
  r->rejected = (uint32_t)v[9];
  r->samples_to_best = (uint32_t)v[10];
  r->seconds = v[11];
  double x;
  if (get_num(line, "samples_to_95", &x) && x >= 0) r->samples_to_95 = (uint32_t)x;
  if (get_num(line, "compile_s", &x) && x >= 0) r->compile_s = x;
  if (get_num(line, "verify_s", &x) && x >= 0) r->verify_s = x;
  if (get_num(line, "time_s", &x) && x >= 0) r->time_s = x;
  return true;
}

int bench_runs_load(const char *path, bench_run **out, size_t *nout) {
  *out = NULL;
  *nout = 0;
  int fd = open(path, O_RDWR);
  if (fd < 0) return errno == ENOENT ? 0 : -1;
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    close(fd);
    return -1;
  }
  size_t len = (size_t)sb.st_size;
  char *buf = malloc(len + 1);
  if (!buf || (len && read(fd, buf, len) != (ssize_t)len)) {
    free(buf);
    close(fd);
    return -1;
  }
  buf[len] = '\0';
  /* a process killed while appending leaves a line without its newline:
   * cut it off, so that the next record starts on a line of its own */
  size_t keep = len;
  while (keep > 0 && buf[keep - 1] != '\n') keep--;
  if (keep != len && ftruncate(fd, (off_t)keep) != 0) {
    free(buf);
    close(fd);
    return -1;
  }
  close(fd);
  buf[keep] = '\0';
  bench_run *v = NULL;
  size_t n = 0;
  for (char *line = buf; *line;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    bench_run r;
    if (bench_run_parse(line, &r)) {
      bench_run *g = realloc(v, (n + 1) * sizeof *g);
      if (!g) {
        bench_run_free(&r);
        break;
      }
      v = g;
      v[n++] = r;
    }
    if (!nl) break;
    line = nl + 1;
  }
  free(buf);
  *out = v;
  *nout = n;
  return 0;
}

const bench_run *bench_runs_find(const bench_run *v, size_t n, const char *program,
                                 const char *algorithm) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i].program, program) == 0 && strcmp(v[i].algorithm, algorithm) == 0) return &v[i];
  return NULL;
}

int bench_append_line(const char *path, const char *line, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return -1;
  char *buf = malloc(len + 1);
  if (!buf) {
    close(fd);
    return -1;
  }
  memcpy(buf, line, len);
  buf[len] = '\n';
  /* one write, so a reader sees the whole line or none of it */
  ssize_t w = write(fd, buf, len + 1);
  free(buf);
  int rc = w == (ssize_t)(len + 1) && fsync(fd) == 0 ? 0 : -1;
  close(fd);
  return rc;
}

/* ---- the summary ----------------------------------------------------------- */

typedef struct strat_count {
  char name[64];
  uint32_t n;
} strat_count;

typedef struct algo_stats {
  uint32_t runs, ok, errors, improved;
  double sum, logsum, peak, steps, to_best, seconds;
  double to_95, measured, compile_s, verify_s, time_s;
  const char *peak_program;
  strat_count strategies[64];
  size_t nstrategies;
} algo_stats;

/* Counts the strategy of every step of the best path; a macro-step
 * ("a nest=0 ... ; b nest=1 ...", the lookahead's) counts each of its parts. */
static void count_strategies(algo_stats *a, const char *steps) {
  for (const char *l = steps; l && *l; l++) {
    while (*l == ' ' || *l == ';' || *l == '\n') l++;
    if (!*l) break;
    size_t w = 0;
    while (l[w] && l[w] != ' ' && l[w] != ';' && l[w] != '\n') w++;
    if (w > 0 && w < 64) {
      size_t k = 0;
      while (k < a->nstrategies && (strlen(a->strategies[k].name) != w ||
                                    strncmp(a->strategies[k].name, l, w) != 0))
        k++;
      if (k == a->nstrategies && k < 64) {
        memcpy(a->strategies[k].name, l, w);
        a->strategies[k].name[w] = '\0';
        a->nstrategies++;
      }
      if (k < a->nstrategies) a->strategies[k].n++;
    }
    /* on to the next part: after " ; " or the end of the line */
    while (*l && *l != ';' && *l != '\n') l++;
    if (!*l) break;
  }
}

static void json_str(FILE *f, const char *s) { tool_json_string(f, s, strlen(s)); }

int bench_summary_write(const bench_summary_in *in, const char *dir, FILE *console, bool json_console) {
  algo_stats *st = calloc(in->nalgorithms, sizeof *st);
  if (!st) return -1;
  size_t done = 0;
  for (size_t a = 0; a < in->nalgorithms; a++) {
    algo_stats *s = &st[a];
    for (size_t p = 0; p < in->nprograms; p++) {
      const bench_run *r = bench_runs_find(in->runs, in->nruns, in->programs[p], in->algorithms[a]);
      if (!r) continue;
      done++;
      s->runs++;
      bool ok = strcmp(r->status, "ok") == 0;
      s->ok += ok;
      s->errors += !ok;
      s->improved += ok && r->best_depth > 0 && r->speedup > 1;
      /* a failed search leaves the source program: speedup 1 */
      double x = ok ? r->speedup : 1.0;
      s->sum += x;
      s->logsum += log(x);
      if (!s->peak_program || x > s->peak) s->peak = x, s->peak_program = in->programs[p];
      s->steps += r->best_depth;
      s->to_best += r->samples_to_best;
      s->to_95 += r->samples_to_95;
      s->seconds += r->seconds;
      s->measured += r->measured;
      s->compile_s += r->compile_s;
      s->verify_s += r->verify_s;
      s->time_s += r->time_s;
      count_strategies(s, r->steps);
    }
  }
  size_t total = in->nprograms * in->nalgorithms;
  char path[4096];
  snprintf(path, sizeof path, "%s/summary.json", dir);
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    free(st);
    return -1;
  }
  fprintf(f, "{\"name\":");
  json_str(f, in->name);
  fprintf(f, ",\"policy\":");
  json_str(f, in->policy);
  fprintf(f, ",\"backend\":");
  json_str(f, in->backend);
  fprintf(f, ",\"programs\":%zu,\"runs\":%zu,\"done\":%zu,\"complete\":%s,\"algorithms\":{",
          in->nprograms, total, done, done == total ? "true" : "false");
  for (size_t a = 0; a < in->nalgorithms; a++) {
    algo_stats *s = &st[a];
    double n = s->runs ? s->runs : 1;
    fprintf(f, "%s", a ? "," : "");
    json_str(f, in->algorithms[a]);
    fprintf(f, ":{\"runs\":%u,\"ok\":%u,\"errors\":%u,\"improved\":%u,\"mean_speedup\":%.6g,"
               "\"geomean_speedup\":%.6g,\"peak_speedup\":%.6g,\"peak_program\":",
            s->runs, s->ok, s->errors, s->improved, s->runs ? s->sum / n : 0,
            s->runs ? exp(s->logsum / n) : 0, s->runs ? s->peak : 0);
    if (s->peak_program) json_str(f, s->peak_program);
    else fprintf(f, "null");
    /* the cost of a measured sample, by phase, over all the runs */
    double per = s->measured > 0 ? 1.0 / s->measured : 0.0;
    fprintf(f, ",\"mean_steps\":%.4g,\"mean_samples_to_best\":%.4g,\"mean_samples_to_95\":%.4g,"
               "\"seconds\":%.3f,\"measured\":%.0f,\"cost_per_sample\":{\"compile_s\":%.6g,"
               "\"verify_s\":%.6g,\"time_s\":%.6g,\"total_s\":%.6g},\"strategies\":{",
            s->steps / n, s->to_best / n, s->to_95 / n, s->seconds, s->measured,
            s->compile_s * per, s->verify_s * per, s->time_s * per,
            (s->compile_s + s->verify_s + s->time_s) * per);
    for (size_t k = 0; k < s->nstrategies; k++) {
      fprintf(f, "%s", k ? "," : "");
      json_str(f, s->strategies[k].name);
      fprintf(f, ":%u", s->strategies[k].n);
    }
    fprintf(f, "}}");
  }
  fprintf(f, "},\"per_program\":{");
  for (size_t p = 0; p < in->nprograms; p++) {
    fprintf(f, "%s", p ? "," : "");
    json_str(f, in->programs[p]);
    fprintf(f, ":{");
    bool first = true;
    for (size_t a = 0; a < in->nalgorithms; a++) {
      const bench_run *r = bench_runs_find(in->runs, in->nruns, in->programs[p], in->algorithms[a]);
      if (!r) continue;
      fprintf(f, "%s", first ? "" : ",");
      first = false;
      json_str(f, in->algorithms[a]);
      fprintf(f, ":{\"status\":\"%s\",\"speedup\":%.6g,\"steps\":%u,\"samples_to_best\":%u,"
                 "\"samples_to_95\":%u,\"measured\":%u,\"compile_s\":%.6g,\"verify_s\":%.6g,"
                 "\"time_s\":%.6g}",
              r->status, strcmp(r->status, "ok") == 0 ? r->speedup : 1.0, r->best_depth,
              r->samples_to_best, r->samples_to_95, r->measured, r->compile_s, r->verify_s,
              r->time_s);
    }
    fprintf(f, "}");
  }
  fprintf(f, "}}\n");
  int rc = fclose(f) == 0 && rename(tmp, path) == 0 ? 0 : -1;

  /* the same as a Markdown table, and on the console */
  snprintf(path, sizeof path, "%s/summary.md", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *md = fopen(tmp, "w");
  if (!md) rc = -1;
  for (int pass = 0; pass < 2; pass++) {
    FILE *o = pass == 0 ? md : json_console ? NULL : console;
    if (!o) continue;
    fprintf(o, "# %s: policy %s, backend %s, %zu programs, %zu/%zu runs done\n\n", in->name,
            in->policy, in->backend, in->nprograms, done, total);
    fprintf(o, "| algorithm | runs | ok | improved | mean | geomean | peak | peak program | "
               "steps | samples to best | samples to 95%% | seconds | s per sample (compile / "
               "verify / time) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t a = 0; a < in->nalgorithms; a++) {
      algo_stats *s = &st[a];
      double n = s->runs ? s->runs : 1;
      double per = s->measured > 0 ? 1.0 / s->measured : 0.0;
      fprintf(o, "| %s | %u | %u | %u | %.3fx | %.3fx | %.3fx | %s | %.2f | %.1f | %.1f | %.1f | "
                 "%.2f (%.2f / %.2f / %.2f) |\n",
              in->algorithms[a], s->runs, s->ok, s->improved, s->runs ? s->sum / n : 0,
              s->runs ? exp(s->logsum / n) : 0, s->runs ? s->peak : 0,
              s->peak_program ? s->peak_program : "-", s->steps / n, s->to_best / n,
              s->to_95 / n, s->seconds, (s->compile_s + s->verify_s + s->time_s) * per,
              s->compile_s * per, s->verify_s * per, s->time_s * per);
    }
    if (pass == 0) {
      fprintf(o, "\n| program |");
      for (size_t a = 0; a < in->nalgorithms; a++) fprintf(o, " %s |", in->algorithms[a]);
      fprintf(o, "\n|---|");
      for (size_t a = 0; a < in->nalgorithms; a++) fprintf(o, "---|");
      fprintf(o, "\n");
      for (size_t p = 0; p < in->nprograms; p++) {
        fprintf(o, "| %s |", in->programs[p]);
        for (size_t a = 0; a < in->nalgorithms; a++) {
          const bench_run *r = bench_runs_find(in->runs, in->nruns, in->programs[p], in->algorithms[a]);
          if (!r) fprintf(o, " - |");
          else if (strcmp(r->status, "ok")) fprintf(o, " error |");
          else fprintf(o, " %.3fx (%u; 95%%: %u) |", r->speedup, r->best_depth, r->samples_to_95);
        }
        fprintf(o, "\n");
      }
      fprintf(o, "\nSpeedups over the source program (steps, and the samples until the best so "
                 "far was within 95%% of the run's best, in parentheses); a failed run counts "
                 "as 1x.\n");
    }
  }
  if (md && (fclose(md) != 0 || rename(tmp, path) != 0)) rc = -1;
  free(st);
  return rc;
}
