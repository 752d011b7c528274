#include "tool.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool tool_json_mode;
unsigned tool_json_line;
bool tool_json_error_printed;

/* An error of the tool itself (no library call failed): usage, input. */
static void json_tool_error(leir_status st, const char *rule, const char *subject,
                            const char *file, const char *message) {
  leir_error e = {st, message, rule, subject ? subject : "", 0, 0};
  tool_json_fail(file, &e, 0);
}

void tool_args_init(tool_args *a, const char *cmd, int argc, char **argv) {
  memset(a, 0, sizeof *a);
  a->cmd = cmd;
  a->argc = argc;
  a->argv = argv;
  a->i = 1; /* argv[0] is the command name */
}

const char *tool_args_next(tool_args *a) {
  while (a->i < a->argc) {
    char *arg = a->argv[a->i++];
    if (!a->dashdash && strcmp(arg, "--") == 0) {
      a->dashdash = true;
      continue;
    }
    if (!a->dashdash && arg[0] == '-' && arg[1] != '\0') return arg;
    if (a->npositional < 16) a->positional[a->npositional++] = arg;
  }
  return NULL;
}

const char *tool_args_value(tool_args *a, const char *opt) {
  const char *eq = strchr(opt, '=');
  if (eq) return eq + 1;
  if (a->i >= a->argc) {
    tool_usage_error(a->cmd, "option %s needs a value", opt);
    return NULL;
  }
  return a->argv[a->i++];
}

int tool_usage_error(const char *cmd, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (tool_json_mode)
    json_tool_error(LEIR_ERR_ARGUMENT, "usage", cmd, NULL, msg);
  else
    fprintf(stderr, "leir %s: %s\n(see 'leir help %s')\n", cmd, msg, cmd);
  return EXIT_USAGE;
}

/* An input that cannot be read: FILE: error: MESSAGE, or a JSON object. */
static void input_error(const char *path, const char *message) {
  if (tool_json_mode) {
    json_tool_error(LEIR_ERR_IO, "io", tool_label(path), tool_label(path), message);
    return;
  }
  fprintf(stderr, "%s: error: %s\n", tool_label(path), message);
}

const char *tool_label(const char *path) { return strcmp(path, "-") == 0 ? "<stdin>" : path; }

char *tool_read_all(const char *path, size_t *len) {
  char msg[512];
  struct stat sb;
  if (strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    input_error(path, "is a directory (give a .leir or .leir.yaml file, or - for standard input)");
    return NULL;
  }
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) {
    snprintf(msg, sizeof msg, "cannot open: %s", strerror(errno));
    input_error(path, msg);
    return NULL;
  }
  /* The library refuses more than its default input limit anyway; stop
   * reading there rather than buffering an endless stream. */
  const size_t max_input = (size_t)256 << 20;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) break;
    if (n > max_input) {
      if (f != stdin) fclose(f);
      free(buf);
      input_error(path, "input larger than 256 MiB");
      return NULL;
    }
    char *bigger = realloc(buf, cap * 2 + 1);
    if (!bigger) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = bigger;
    cap *= 2;
  }
  bool err = ferror(f) != 0;
  if (f != stdin) fclose(f);
  if (!buf || err) {
    free(buf);
    input_error(path, "cannot read input");
    return NULL;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

static bool has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

int tool_exit_for(leir_status st) {
  switch (st) {
    case LEIR_OK: return EXIT_OK;
    case LEIR_ERR_PARSE:
    case LEIR_ERR_INVALID:
    case LEIR_ERR_LIMIT:
    case LEIR_ERR_SIGNATURE:
    case LEIR_ERR_NOT_APPLICABLE:
    case LEIR_ERR_NOT_FOUND:
    case LEIR_ERR_IO: return EXIT_INVALID;
    case LEIR_ERR_ARGUMENT: return EXIT_USAGE;
    default: return EXIT_INTERNAL;
  }
}

int tool_unknown_strategy(const char *cmd) {
  const leir_error *e = leir_error_last();
  if (tool_json_mode)
    tool_json_fail(NULL, e, 0);
  else
    fprintf(stderr, "leir %s: %s\n", cmd, e->message);
  return EXIT_USAGE;
}

leir_program *tool_load_program(const char *path, int *exit_code) {
  size_t len;
  char *text = tool_read_all(path, &len);
  if (!text) {
    *exit_code = EXIT_INVALID;
    return NULL;
  }
  leir_program *p = NULL;
  leir_parse_options o = LEIR_PARSE_OPTIONS_INIT;
  o.flags |= LEIR_PARSE_LENIENT;
  leir_status st = has_suffix(path, ".yaml") || has_suffix(path, ".yml")
                       ? leir_program_parse_yaml(&p, text, len, &o)
                       : leir_program_parse(&p, text, len, &o);
  free(text);
  if (st != LEIR_OK) {
    tool_print_error(tool_label(path), 0, leir_error_last());
    *exit_code = tool_exit_for(st);
    return NULL;
  }
  *exit_code = EXIT_OK;
  return p;
}

int tool_for_each_line(const char *path, tool_line_fn fn, void *payload) {
  size_t len;
  char *text = tool_read_all(path, &len);
  if (!text) return EXIT_INVALID;
  int worst = EXIT_OK;
  unsigned line_no = 0;
  size_t start = 0;
  while (start <= len) {
    size_t end = start;
    while (end < len && text[end] != '\n') end++;
    line_no++;
    size_t n = end - start;
    if (n && text[start + n - 1] == '\r') n--;
    if (n > 0) {
      int rc = fn(tool_label(path), line_no, text + start, n, payload);
      if (rc > worst) worst = rc;
    }
    if (end >= len) break;
    start = end + 1;
  }
  free(text);
  return worst;
}

void tool_print_error(const char *label, unsigned line_base, const leir_error *e) {
  if (tool_json_mode) {
    tool_json_fail(label, e, line_base);
    return;
  }
  if (e->line)
    fprintf(stderr, "%s:%u:%u: error: %s", label, line_base + e->line, e->column, e->message);
  else
    fprintf(stderr, "%s: error: %s", label, e->message);
  if (e->rule[0]) fprintf(stderr, " [%s]", e->rule);
  fputc('\n', stderr);
}

void tool_print_diagnostic(const char *label, unsigned line_base, const leir_diagnostic *d) {
  if (d->line)
    fprintf(stderr, "%s:%u:%u: error: %s [%s]\n", label, line_base + d->line, d->column,
            d->message, d->rule);
  else
    fprintf(stderr, "%s: error: %s [%s]\n", label, d->message, d->rule);
}

void tool_json_string(FILE *f, const char *s, size_t n) {
  fputc('"', f);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
      case '"': fputs("\\\"", f); break;
      case '\\': fputs("\\\\", f); break;
      case '\n': fputs("\\n", f); break;
      case '\t': fputs("\\t", f); break;
      case '\r': fputs("\\r", f); break;
      default:
        if (c < 0x20)
          fprintf(f, "\\u%04x", c);
        else
          fputc(c, f);
    }
  }
  fputc('"', f);
}

void tool_json_error(FILE *f, const leir_error *e, unsigned line_base) {
  fprintf(f, "{\"status\":\"%s\",\"rule\":", leir_status_name(e->status));
  tool_json_string(f, e->rule, strlen(e->rule));
  fprintf(f, ",\"line\":%u,\"column\":%u,\"message\":", e->line ? line_base + e->line : 0,
          e->column);
  tool_json_string(f, e->message, strlen(e->message));
  fputs(",\"subject\":", f);
  tool_json_string(f, e->subject, strlen(e->subject));
  fputc('}', f);
}

void tool_json_fail(const char *file, const leir_error *e, unsigned line_base) {
  printf("{\"line\":%u,", tool_json_line);
  if (file) {
    printf("\"file\":");
    tool_json_string(stdout, file, strlen(file));
    putchar(',');
  }
  printf("\"error\":");
  tool_json_error(stdout, e, line_base);
  printf("}\n");
  tool_json_error_printed = true;
}

/* ---- signature options --------------------------------------------------- */

static int parse_decl(tool_sig *s, const char *cmd, const char *spec, leir_role role) {
  if (s->n == 64) return tool_usage_error(cmd, "too many --input/--output options");
  const char *c1 = strchr(spec, ':');
  const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  if (!c1 || !c2 || (size_t)(c1 - spec) >= sizeof s->names[0])
    return tool_usage_error(cmd, "expected NAME:DTYPE:SHAPE (e.g. A:f64:2x8), got '%s'", spec);
  leir_tensor_decl *d = &s->decls[s->n];
  memcpy(s->names[s->n], spec, (size_t)(c1 - spec));
  s->names[s->n][c1 - spec] = '\0';
  char dtype[16];
  size_t dl = (size_t)(c2 - c1 - 1);
  if (dl >= sizeof dtype) return tool_usage_error(cmd, "unknown dtype in '%s'", spec);
  memcpy(dtype, c1 + 1, dl);
  dtype[dl] = '\0';
  if (leir_dtype_from_name(dtype, &d->dtype) != LEIR_OK)
    return tool_usage_error(cmd, "unknown dtype '%s'", dtype);
  const char *shape = c2 + 1;
  uint32_t rank = 0;
  if (strcmp(shape, "scalar") != 0 && strcmp(shape, "[]") != 0 && *shape) {
    const char *q = shape;
    while (*q) {
      char *end;
      errno = 0;
      long long v = strtoll(q, &end, 10);
      if (end == q || errno || v < 1 || rank == LEIR_MAX_RANK || (*end && *end != 'x' && *end != ','))
        return tool_usage_error(cmd, "bad shape '%s' (use e.g. 2x8, or scalar)", shape);
      s->shapes[s->n][rank++] = v;
      q = *end ? end + 1 : end;
    }
  }
  d->name = s->names[s->n];
  d->role = role;
  d->rank = rank;
  d->shape = s->shapes[s->n];
  s->n++;
  return 0;
}

int tool_sig_option(tool_sig *s, tool_args *a, const char *opt) {
  leir_role role;
  if (strncmp(opt, "--input", 7) == 0 && (opt[7] == '\0' || opt[7] == '='))
    role = LEIR_ROLE_INPUT;
  else if (strncmp(opt, "--output", 8) == 0 && (opt[8] == '\0' || opt[8] == '='))
    role = LEIR_ROLE_OUTPUT;
  else
    return 0;
  const char *v = tool_args_value(a, opt);
  if (!v) return -1;
  return parse_decl(s, a->cmd, v, role) ? -1 : 1;
}

int tool_sig_apply(const tool_sig *s, leir_program *p, const char *label) {
  if (s->n == 0) return EXIT_OK;
  /* inputs first, in the order given, then outputs */
  leir_tensor_decl ordered[64];
  size_t k = 0;
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < s->n; i++)
      if ((int)s->decls[i].role == pass) ordered[k++] = s->decls[i];
  leir_status st = leir_program_set_signature(p, ordered, k);
  if (st != LEIR_OK) {
    tool_print_error(label, 0, leir_error_last());
    return tool_exit_for(st);
  }
  return EXIT_OK;
}
