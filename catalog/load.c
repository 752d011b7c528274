/*
 * Loading the workload catalogue: the YAML files (libyaml, with size and
 * depth limits) read into workloads, the catalogue's directory, and the
 * read-only accessors of a workload.
 */
#define LEIR_EXPERIMENTAL /* the workload API is in the experimental tier */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "catalog.h"
#include "error.h"
#include "input.h"
#include "leir/experimental/workload.h"
#include "self_path.h"
#include "strbuf.h"
#include "vec.h"
#ifndef LEIR_WORKLOADS_DATADIR
#define LEIR_WORKLOADS_DATADIR "/usr/local/share/leir/workloads"
#endif

static void workload_free(leir_workload *w) {
  if (!w) return;
  free(w->name);
  free(w->summary);
  free(w->tmpl);
  free(w->file);
  for (size_t i = 0; i < w->nparams; i++) free(w->params[i].name);
  for (size_t i = 0; i < w->ntensors; i++) {
    free(w->tensors[i].name);
    free(w->tensors[i].domain);
    for (uint32_t k = 0; k < w->tensors[i].rank; k++) free(w->tensors[i].shape[k]);
  }
  free(w->tensors);
  for (size_t i = 0; i < w->nconstraints; i++) free(w->constraints[i]);
  free(w);
}

typedef struct lctx {
  yaml_document_t doc;
  const char *label;
  leir_status st;
} lctx;

static leir_status lerr(lctx *l, const yaml_node_t *at, const char *fmt, const char *arg) {
  if (l->st == LEIR_OK)
    l->st = leir__error(LEIR_ERR_PARSE, "workload.file", l->label,
                        at ? (uint32_t)at->start_mark.line + 1 : 0,
                        at ? (uint32_t)at->start_mark.column + 1 : 0, fmt, arg);
  return l->st;
}

static const char *scal(const yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static bool scal_clean(const yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE && strlen(scal(n)) == n->data.scalar.length;
}

static char *dup_scal(lctx *l, const yaml_node_t *n, const char *what) {
  if (!scal_clean(n)) {
    lerr(l, n, "%s must be a string", what);
    return NULL;
  }
  char *s = strdup(scal(n));
  if (!s) l->st = leir__error_nomem();
  return s;
}

static bool num_of(const yaml_node_t *n, double *out) {
  const char *s = scal(n);
  if (!s || !*s || !scal_clean(n)) return false;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (*end || errno || !isfinite(v)) return false;
  *out = v;
  return true;
}

static bool int_of(const yaml_node_t *n, int64_t *out) {
  double v;
  if (!num_of(n, &v) || v != floor(v) || fabs(v) > 9.0e15) return false;
  *out = (int64_t)v;
  return true;
}

static bool ident_ok(const char *s) {
  if (!s || !*s || strlen(s) > 128) return false;
  if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return false;
  for (const char *c = s; *c; c++)
    if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
          *c == '_'))
      return false;
  return true;
}

#define FOR_PAIRS(doc, node, pr)                                                   \
  for (yaml_node_pair_t *pr = (node)->data.mapping.pairs.start;                    \
       pr < (node)->data.mapping.pairs.top; pr++)

static bool key_eq(yaml_document_t *d, yaml_node_pair_t *pr, const char *k) {
  const char *s = scal(yaml_document_get_node(d, pr->key));
  return s && !strcmp(s, k);
}

/* Writes a YAML node in flow style (domains are copied into program files). */
static void flow(lctx *l, leir__strbuf *b, yaml_node_t *n, int depth) {
  if (!n) return;
  if (depth > MAX_YAML_DEPTH) {
    lerr(l, n, "nested too deeply%s", "");
    return;
  }
  if (n->type == YAML_SCALAR_NODE) {
    const char *s = scal(n);
    bool plain = scal_clean(n) && *s;
    for (const char *c = s; plain && *c; c++)
      if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
            strchr("_.+-$()/* ", *c)))
        plain = false;
    if (plain && (*s == ' ' || s[strlen(s) - 1] == ' ')) plain = false;
    if (plain)
      leir__sb_puts(b, s);
    else if (leir__utf8_valid(s, n->data.scalar.length))
      leir__sb_put_yaml_string(b, s, n->data.scalar.length);
    else
      lerr(l, n, "a domain value is not valid UTF-8%s", "");
  } else if (n->type == YAML_SEQUENCE_NODE) {
    leir__sb_putc(b, '[');
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
      if (it != n->data.sequence.items.start) leir__sb_puts(b, ", ");
      flow(l, b, yaml_document_get_node(&l->doc, *it), depth + 1);
    }
    leir__sb_putc(b, ']');
  } else if (n->type == YAML_MAPPING_NODE) {
    leir__sb_putc(b, '{');
    FOR_PAIRS(&l->doc, n, pr) {
      if (pr != n->data.mapping.pairs.start) leir__sb_puts(b, ", ");
      flow(l, b, yaml_document_get_node(&l->doc, pr->key), depth + 1);
      leir__sb_puts(b, ": ");
      flow(l, b, yaml_document_get_node(&l->doc, pr->value), depth + 1);
    }
    leir__sb_putc(b, '}');
  }
}

static void read_param(lctx *l, leir_workload *w, yaml_node_t *n) {
  if (!n || n->type != YAML_MAPPING_NODE) {
    lerr(l, n, "a parameter is a mapping {name, default, small, range}%s", "");
    return;
  }
  if (w->nparams == MAX_PARAMS) {
    lerr(l, n, "more than 64 parameters%s", "");
    return;
  }
  wl_param *p = &w->params[w->nparams++];
  memset(p, 0, sizeof *p);
  bool have_default = false, have_small = false, have_range = false;
  yaml_node_t *dn = NULL, *sn = NULL, *rn = NULL;
  FOR_PAIRS(&l->doc, n, pr) {
    yaml_node_t *v = yaml_document_get_node(&l->doc, pr->value);
    if (key_eq(&l->doc, pr, "name")) {
      if (!p->name) p->name = dup_scal(l, v, "a parameter name");
    } else if (key_eq(&l->doc, pr, "type")) {
      const char *t = scal(v);
      if (t && !strcmp(t, "float"))
        p->is_float = true;
      else if (!t || strcmp(t, "int"))
        lerr(l, v, "a parameter type is int or float%s", "");
    } else if (key_eq(&l->doc, pr, "default")) {
      dn = v;
    } else if (key_eq(&l->doc, pr, "small")) {
      sn = v;
    } else if (key_eq(&l->doc, pr, "range")) {
      rn = v;
    } else {
      lerr(l, yaml_document_get_node(&l->doc, pr->key),
           "unknown parameter field '%s' (name, type, default, small, range)",
           scal(yaml_document_get_node(&l->doc, pr->key)) ? scal(yaml_document_get_node(&l->doc, pr->key)) : "?");
    }
  }
  if (l->st != LEIR_OK) return;
  if (!ident_ok(p->name)) {
    lerr(l, n, "a parameter needs a name (letters, digits, _; at most 128)%s", "");
    return;
  }
  if (!strcmp(p->name, "T")) {
    lerr(l, n, "the name T is reserved for the dtype%s", "");
    return;
  }
  for (size_t i = 0; i + 1 < w->nparams; i++)
    if (!strcmp(w->params[i].name, p->name)) {
      lerr(l, n, "parameter '%s' is declared twice", p->name);
      return;
    }
  int64_t iv;
  if (dn) have_default = p->is_float ? num_of(dn, &p->dflt) : (int_of(dn, &iv) && ((p->dflt = (double)iv), 1));
  if (!have_default) {
    lerr(l, dn ? dn : n, "parameter '%s' needs a numeric default (an integer unless type: float)", p->name);
    return;
  }
  p->small = p->dflt;
  if (sn) {
    have_small = p->is_float ? num_of(sn, &p->small) : (int_of(sn, &iv) && ((p->small = (double)iv), 1));
    if (!have_small) {
      lerr(l, sn, "parameter '%s': small must be a number of its type", p->name);
      return;
    }
  }
  p->lo = p->hi = p->dflt;
  if (rn) {
    if (rn->type != YAML_SEQUENCE_NODE ||
        rn->data.sequence.items.top - rn->data.sequence.items.start != 2) {
      lerr(l, rn, "parameter '%s': range is [min, max]", p->name);
      return;
    }
    yaml_node_t *a = yaml_document_get_node(&l->doc, rn->data.sequence.items.start[0]);
    yaml_node_t *b = yaml_document_get_node(&l->doc, rn->data.sequence.items.start[1]);
    int64_t ia, ib;
    if (p->is_float)
      have_range = num_of(a, &p->lo) && num_of(b, &p->hi);
    else if ((have_range = int_of(a, &ia) && int_of(b, &ib))) {
      p->lo = (double)ia;
      p->hi = (double)ib;
    }
    if (!have_range || p->lo > p->hi) {
      lerr(l, rn, "parameter '%s': range is [min, max] with min <= max", p->name);
      return;
    }
  }
}

static void read_tensor(lctx *l, leir_workload *w, yaml_node_t *n, bool output) {
  if (!n || n->type != YAML_MAPPING_NODE) {
    lerr(l, n, "a tensor is a mapping {name, dtype, shape, domain}%s", "");
    return;
  }
  if (w->ntensors == MAX_TENSORS) {
    lerr(l, n, "more than 256 tensors%s", "");
    return;
  }
  wl_tensor *t = &w->tensors[w->ntensors++];
  memset(t, 0, sizeof *t);
  t->output = output;
  FOR_PAIRS(&l->doc, n, pr) {
    yaml_node_t *v = yaml_document_get_node(&l->doc, pr->value);
    if (key_eq(&l->doc, pr, "name")) {
      if (!t->name) t->name = dup_scal(l, v, "a tensor name");
    } else if (key_eq(&l->doc, pr, "dtype")) {
      if (!scal(v) || leir_dtype_from_name(scal(v), &t->dtype) != LEIR_OK)
        lerr(l, v, "unknown dtype%s", "");
      t->has_dtype = true;
    } else if (key_eq(&l->doc, pr, "shape")) {
      if (v->type != YAML_SEQUENCE_NODE) {
        lerr(l, v, "shape is a list of extents (expressions)%s", "");
        continue;
      }
      t->has_shape = true;
      for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
           it++) {
        if (t->rank == LEIR_MAX_RANK) {
          lerr(l, v, "more than 16 dimensions%s", "");
          break;
        }
        char *e = dup_scal(l, yaml_document_get_node(&l->doc, *it), "an extent");
        if (!e) break;
        t->shape[t->rank++] = e;
      }
    } else if (key_eq(&l->doc, pr, "domain")) {
      if (output) {
        lerr(l, v, "outputs have no domain%s", "");
        continue;
      }
      leir__strbuf b = LEIR__STRBUF_INIT;
      flow(l, &b, v, 0);
      leir__sb_putc(&b, 0);
      if (b.failed) {
        free(b.data);
        l->st = leir__error_nomem();
        continue;
      }
      free(t->domain);
      t->domain = b.data;
    } else {
      const char *k = scal(yaml_document_get_node(&l->doc, pr->key));
      lerr(l, yaml_document_get_node(&l->doc, pr->key),
           "unknown tensor field '%s' (name, dtype, shape, domain)", k ? k : "?");
    }
  }
  if (l->st == LEIR_OK && !ident_ok(t->name)) lerr(l, n, "a tensor needs a name%s", "");
}

static leir_workload *load_text(const char *text, size_t len, const char *label) {
  if (len > MAX_FILE_BYTES) {
    leir__error(LEIR_ERR_LIMIT, "limit.input-size", label, 0, 0,
                "a workload file is larger than %u bytes", MAX_FILE_BYTES);
    return NULL;
  }
  if (memchr(text, 0, len)) {
    leir__error(LEIR_ERR_PARSE, "workload.file", label, 0, 0, "a workload file contains a NUL byte");
    return NULL;
  }
  /* deep flow collections are quadratic in libyaml's scanner: refused
   * before a document is built (lib/input.h) */
  leir_status gst = leir__yaml_guard(text, len, 2 * MAX_YAML_DEPTH, "a workload file");
  if (gst != LEIR_OK) {
    const leir_error *e = leir_error_last();
    char msg[1024], rule[64];
    snprintf(msg, sizeof msg, "%s", e->message);
    snprintf(rule, sizeof rule, "%s", e->rule);
    leir__error_set(gst, rule, label, e->line, e->column, msg);
    return NULL;
  }
  lctx l;
  memset(&l, 0, sizeof l);
  l.label = label;
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    leir__error_nomem();
    return NULL;
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  if (!yaml_parser_load(&parser, &l.doc)) {
    leir__error(LEIR_ERR_PARSE, "workload.file", label, (uint32_t)parser.problem_mark.line + 1,
                (uint32_t)parser.problem_mark.column + 1, "YAML: %s",
                parser.problem ? parser.problem : "syntax error");
    yaml_parser_delete(&parser);
    return NULL;
  }
  yaml_parser_delete(&parser);
  leir_workload *w = calloc(1, sizeof *w);
  if (!w) {
    yaml_document_delete(&l.doc);
    leir__error_nomem();
    return NULL;
  }
  w->index = -1;
  w->traced = true;
  w->dtype = LEIR_F32;
  w->tensors = calloc(MAX_TENSORS, sizeof *w->tensors);
  yaml_node_t *root = yaml_document_get_root_node(&l.doc);
  if (!w->tensors) {
    l.st = leir__error_nomem();
  } else if (!root || root->type != YAML_MAPPING_NODE) {
    lerr(&l, root, "a workload file is a mapping (name, params, inputs, outputs, leir, ...)%s", "");
  } else {
    FOR_PAIRS(&l.doc, root, pr) {
      if (l.st != LEIR_OK) break;
      yaml_node_t *v = yaml_document_get_node(&l.doc, pr->value);
      int64_t iv = 0;
      if (key_eq(&l.doc, pr, "name")) {
        if (!w->name) w->name = dup_scal(&l, v, "name");
      } else if (key_eq(&l.doc, pr, "level")) {
        if (!int_of(v, &iv) || iv < 0 || iv > 9) lerr(&l, v, "level is 0..9%s", "");
        w->level = (int)iv;
      } else if (key_eq(&l.doc, pr, "index")) {
        if (!int_of(v, &iv) || iv < -1 || iv > 100000) lerr(&l, v, "index is an integer%s", "");
        w->index = (int)iv;
      } else if (key_eq(&l.doc, pr, "summary")) {
        if (!w->summary) w->summary = dup_scal(&l, v, "summary");
      } else if (key_eq(&l.doc, pr, "traced")) {
        const char *s = scal(v);
        if (s && !strcmp(s, "true"))
          w->traced = true;
        else if (s && !strcmp(s, "false"))
          w->traced = false;
        else
          lerr(&l, v, "traced is true or false%s", "");
      } else if (key_eq(&l.doc, pr, "dtype")) {
        if (!scal(v) || leir_dtype_from_name(scal(v), &w->dtype) != LEIR_OK)
          lerr(&l, v, "unknown dtype%s", "");
      } else if (key_eq(&l.doc, pr, "params")) {
        if (v->type != YAML_SEQUENCE_NODE) {
          lerr(&l, v, "params is a list%s", "");
          break;
        }
        for (yaml_node_item_t *it = v->data.sequence.items.start;
             it < v->data.sequence.items.top && l.st == LEIR_OK; it++)
          read_param(&l, w, yaml_document_get_node(&l.doc, *it));
      } else if (key_eq(&l.doc, pr, "inputs") || key_eq(&l.doc, pr, "outputs")) {
        bool out = key_eq(&l.doc, pr, "outputs");
        if (v->type == YAML_SCALAR_NODE && !*scal(v)) continue; /* empty */
        if (v->type != YAML_SEQUENCE_NODE) {
          lerr(&l, v, "inputs and outputs are lists%s", "");
          break;
        }
        for (yaml_node_item_t *it = v->data.sequence.items.start;
             it < v->data.sequence.items.top && l.st == LEIR_OK; it++)
          read_tensor(&l, w, yaml_document_get_node(&l.doc, *it), out);
      } else if (key_eq(&l.doc, pr, "constraints")) {
        if (v->type != YAML_SEQUENCE_NODE) {
          lerr(&l, v, "constraints is a list of expressions%s", "");
          break;
        }
        for (yaml_node_item_t *it = v->data.sequence.items.start;
             it < v->data.sequence.items.top && l.st == LEIR_OK; it++) {
          if (w->nconstraints == MAX_CONSTRAINTS) {
            lerr(&l, v, "more than 64 constraints%s", "");
            break;
          }
          char *c = dup_scal(&l, yaml_document_get_node(&l.doc, *it), "a constraint");
          if (c) w->constraints[w->nconstraints++] = c;
        }
      } else if (key_eq(&l.doc, pr, "leir")) {
        if (!w->tmpl) w->tmpl = dup_scal(&l, v, "leir");
      } else if (key_eq(&l.doc, pr, "notes") || key_eq(&l.doc, pr, "review")) {
        /* free text for people */
      } else {
        const char *k = scal(yaml_document_get_node(&l.doc, pr->key));
        lerr(&l, yaml_document_get_node(&l.doc, pr->key),
             "unknown field '%s' (name, level, index, summary, traced, dtype, params, "
             "constraints, inputs, outputs, leir, notes)",
             k ? k : "?");
      }
    }
    if (l.st == LEIR_OK && !ident_ok(w->name))
      lerr(&l, root, "the workload needs a name (letters, digits, _)%s", "");
    if (l.st == LEIR_OK && !w->tmpl) lerr(&l, root, "the 'leir' field is missing%s", "");
    for (size_t i = 0; l.st == LEIR_OK && i < w->ntensors; i++)
      for (size_t j = 0; j < i; j++)
        if (!strcmp(w->tensors[i].name, w->tensors[j].name)) {
          lerr(&l, root, "tensor '%s' is declared twice", w->tensors[i].name);
          break;
        }
  }
  yaml_document_delete(&l.doc);
  if (l.st != LEIR_OK) {
    workload_free(w);
    return NULL;
  }
  w->file = strdup(label ? label : "");
  if (!w->summary) w->summary = strdup("");
  if (!w->file || !w->summary) {
    workload_free(w);
    leir__error_nomem();
    return NULL;
  }
  return w;
}

leir_status leir_catalog_new(leir_catalog **out) {
  if (!out) return leir__error_arg(NULL, "NULL argument");
  *out = calloc(1, sizeof **out);
  if (!*out) return leir__error_nomem();
  (*out)->dir = strdup("");
  if (!(*out)->dir) {
    free(*out);
    *out = NULL;
    return leir__error_nomem();
  }
  return LEIR_OK;
}

static leir_status add_workload(leir_catalog *cat, leir_workload *w) {
  for (size_t i = 0; i < cat->n; i++)
    if (!strcmp(cat->items[i]->name, w->name)) {
      leir_status st = leir__error(LEIR_ERR_ARGUMENT, "workload.duplicate", w->file, 0, 0,
                                   "workload '%s' is already in the catalogue (%s)", w->name,
                                   cat->items[i]->file);
      workload_free(w);
      return st;
    }
  if (!leir__vec_grow((void **)&cat->items, &cat->cap, cat->n + 1, sizeof *cat->items, 64)) {
    workload_free(w);
    return leir__error_nomem();
  }
  cat->items[cat->n++] = w;
  return LEIR_OK;
}

leir_status leir_catalog_add_text(leir_catalog *cat, const char *text, size_t len,
                                  const char *label) {
  if (!cat || (!text && len))
    return leir__error_arg(NULL, "NULL argument");
  if (cat->n >= MAX_FILES)
    return leir__error(LEIR_ERR_LIMIT, "workload.limit", label, 0, 0,
                       "more than %d workloads", MAX_FILES);
  leir_workload *w = load_text(text ? text : "", len, label);
  if (!w) return leir_error_last()->status;
  return add_workload(cat, w);
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void leir_catalog_options_init(leir_catalog_options *opts) {
  if (!opts) return;
  leir_catalog_options o = LEIR_CATALOG_OPTIONS_INIT;
  *opts = o;
}

leir_status leir_catalog_open(leir_catalog **out, const leir_catalog_options *opts) {
  if (!out) return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  if (opts && opts->size < sizeof(uint32_t))
    return leir__error_arg(NULL, "options size too small");
  const char *dir = opts && opts->size >= offsetof(leir_catalog_options, dir) + sizeof(char *)
                        ? opts->dir
                        : NULL;
  if (!dir || !*dir) dir = getenv("LEIR_WORKLOADS_DIR");
  /* then the catalogue installed beside the library (a moved or staged
   * install; lib/self_path.h), then the configured datadir */
  char beside[PATH_MAX], also[PATH_MAX + 80] = "";
  if (!dir || !*dir) {
    leir__self_result where =
        leir__self_find(LEIR__SELF_DATADIR, "leir/workloads", NULL, beside, sizeof beside);
    struct stat sb;
    if (where == LEIR__SELF_FOUND && stat(beside, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      dir = beside;
    } else {
      dir = LEIR_WORKLOADS_DATADIR;
      if (where != LEIR__SELF_NONE)
        snprintf(also, sizeof also, "also looked at %s%s; ", beside,
                 where == LEIR__SELF_MISSING ? ""
                 : where == LEIR__SELF_UNTRUSTED
                     ? ", not used: another user's, or writable by others"
                     : ", not a directory");
    }
  }
  DIR *d = opendir(dir);
  if (!d) {
    int err = errno;
    return leir__error(err == ENOENT ? LEIR_ERR_NOT_FOUND : LEIR_ERR_IO, "workload.dir", dir, 0,
                       0, "cannot open the workload directory %s: %s (%sset LEIR_WORKLOADS_DIR)",
                       dir, strerror(err), also);
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  leir_status st = LEIR_OK;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") || e->d_name[0] == '.') continue;
    if (n == MAX_FILES) {
      st = leir__error(LEIR_ERR_LIMIT, "workload.limit", dir, 0, 0, "more than %d files",
                       MAX_FILES);
      break;
    }
    if (!leir__vec_grow((void **)&names, &cap, n + 1, sizeof *names, 256)) {
      st = leir__error_nomem();
      break;
    }
    if (!(names[n] = strdup(e->d_name))) {
      st = leir__error_nomem();
      break;
    }
    n++;
  }
  closedir(d);
  leir_catalog *cat = NULL;
  if (st == LEIR_OK) st = leir_catalog_new(&cat);
  if (st == LEIR_OK) {
    free(cat->dir);
    cat->dir = strdup(dir);
    if (!cat->dir) st = leir__error_nomem();
  }
  if (n) qsort(names, n, sizeof *names, cmp_names);
  for (size_t i = 0; i < n && st == LEIR_OK; i++) {
    size_t plen = strlen(dir) + strlen(names[i]) + 2;
    char *path = malloc(plen);
    if (!path) {
      st = leir__error_nomem();
      break;
    }
    snprintf(path, plen, "%s/%s", dir, names[i]);
    /* a regular file only: a FIFO named *.yaml would block the open */
    char *buf = NULL;
    size_t got = 0;
    st = leir__read_regular_file(path, MAX_FILE_BYTES, "workload.file", &buf, &got);
    if (st == LEIR_OK) st = leir_catalog_add_text(cat, buf, got, path);
    free(buf);
    free(path);
  }
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(names);
  if (st != LEIR_OK) {
    leir_catalog_free(cat);
    return st;
  }
  *out = cat;
  return LEIR_OK;
}

void leir_catalog_free(leir_catalog *cat) {
  if (!cat) return;
  for (size_t i = 0; i < cat->n; i++) workload_free(cat->items[i]);
  free(cat->items);
  free(cat->dir);
  free(cat);
}

const char *leir_catalog_dir(const leir_catalog *cat) { return cat ? cat->dir : ""; }
size_t leir_catalog_count(const leir_catalog *cat) { return cat ? cat->n : 0; }
const leir_workload *leir_catalog_get(const leir_catalog *cat, size_t i) {
  return cat && i < cat->n ? cat->items[i] : NULL;
}

const leir_workload *leir_catalog_find(const leir_catalog *cat, const char *name) {
  if (!cat || !name) {
    leir__error_arg(NULL, "NULL argument");
    return NULL;
  }
  int level = -1;
  const char *base = name;
  if (!strncmp(name, "level", 5) && name[5] >= '0' && name[5] <= '9' && name[6] == '/') {
    level = name[5] - '0';
    base = name + 7;
  }
  for (size_t i = 0; i < cat->n; i++)
    if (!strcmp(cat->items[i]->name, base) && (level < 0 || cat->items[i]->level == level))
      return cat->items[i];
  leir__error(LEIR_ERR_NOT_FOUND, "workload.unknown", name, 0, 0,
              "no workload named '%s' in the catalogue", name);
  return NULL;
}

const char *leir_workload_name(const leir_workload *w) { return w ? w->name : ""; }
int leir_workload_level(const leir_workload *w) { return w ? w->level : 0; }
int leir_workload_index(const leir_workload *w) { return w ? w->index : -1; }
const char *leir_workload_summary(const leir_workload *w) { return w ? w->summary : ""; }
bool leir_workload_traced(const leir_workload *w) { return w && w->traced; }
leir_dtype leir_workload_dtype(const leir_workload *w) { return w ? w->dtype : LEIR_F32; }
const char *leir_workload_template(const leir_workload *w) { return w ? w->tmpl : ""; }
const char *leir_workload_file(const leir_workload *w) { return w ? w->file : ""; }
size_t leir_workload_param_count(const leir_workload *w) { return w ? w->nparams : 0; }

leir_status leir_workload_param_get(const leir_workload *w, size_t i, leir_workload_param *out) {
  if (!w || !out || i >= w->nparams)
    return leir__error_arg(NULL, "no parameter %zu", i);
  const wl_param *p = &w->params[i];
  out->name = p->name;
  out->is_float = p->is_float;
  out->default_value = p->dflt;
  out->small_value = p->small;
  out->min = p->lo;
  out->max = p->hi;
  return LEIR_OK;
}
