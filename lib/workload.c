/*
 * The workload catalogue (include/leir/experimental/workload.h): loading the
 * YAML files (libyaml, with size and depth limits), a small safe expression
 * evaluator for parameter expressions, and template expansion into checked
 * programs and program files.
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

#include "error.h"
#include "input.h"
#include "leir/experimental/workload.h"
#include "self_path.h"
#include "strbuf.h"

#ifndef LEIR_WORKLOADS_DATADIR
#define LEIR_WORKLOADS_DATADIR "/usr/local/share/leir/workloads"
#endif

#define MAX_FILE_BYTES (1u << 20)
#define MAX_FILES 4096
#define MAX_PARAMS 64
#define MAX_TENSORS 256
#define MAX_CONSTRAINTS 64
#define MAX_EXPR_DEPTH 64
#define MAX_EXPR_LEN 4096
#define MAX_YAML_DEPTH 16
#define RANDOM_TRIES 256

typedef struct wl_param {
  char *name;
  bool is_float;
  double dflt, small, lo, hi;
} wl_param;

typedef struct wl_tensor {
  char *name;
  bool output;
  bool has_dtype;
  leir_dtype dtype;
  char *shape[LEIR_MAX_RANK]; /* expressions; valid when has_shape */
  uint32_t rank;
  bool has_shape;
  char *domain; /* flow-style YAML (a template), or NULL */
} wl_tensor;

struct leir_workload {
  char *name, *summary, *tmpl, *file;
  int level, index;
  bool traced;
  leir_dtype dtype;
  wl_param params[MAX_PARAMS];
  size_t nparams;
  wl_tensor *tensors;
  size_t ntensors;
  char *constraints[MAX_CONSTRAINTS];
  size_t nconstraints;
};

struct leir_catalog {
  char *dir;
  leir_workload **items;
  size_t n, cap;
};

/* ======================================================================
 * Expressions
 * ====================================================================== */

typedef struct xval {
  bool f;
  int64_t i;
  double d;
} xval;

typedef struct xctx {
  const char *s, *p;
  const char *const *names;
  const double *values;
  const bool *is_float;
  size_t n;
  int depth;
  leir_status st;
} xctx;

static leir_status xfail(xctx *x, leir_status st, const char *fmt, const char *arg) {
  if (x->st == LEIR_OK) {
    x->st = leir__error(st, st == LEIR_ERR_PARSE ? "workload.expr-syntax" : "workload.expr",
                        NULL, 0, (uint32_t)(x->p - x->s) + 1, fmt, arg);
  }
  return x->st;
}

static void xskip(xctx *x) {
  while (*x->p == ' ' || *x->p == '\t') x->p++;
}

static double xd(xval v) { return v.f ? v.d : (double)v.i; }

static bool xexpr(xctx *x, xval *out);

static bool xprimary(xctx *x, xval *out) {
  xskip(x);
  const char *c = x->p;
  if (*c == '(') {
    x->p++;
    if (!xexpr(x, out)) return false;
    xskip(x);
    if (*x->p != ')') return xfail(x, LEIR_ERR_PARSE, "expected ')'%s", ""), false;
    x->p++;
    return true;
  }
  if ((*c >= '0' && *c <= '9') || *c == '.') {
    const char *e = c;
    bool isf = false;
    while ((*e >= '0' && *e <= '9') || *e == '.' || *e == 'e' || *e == 'E' ||
           ((*e == '-' || *e == '+') && (e[-1] == 'e' || e[-1] == 'E'))) {
      if (*e == '.' || *e == 'e' || *e == 'E') isf = true;
      e++;
    }
    char buf[64];
    size_t len = (size_t)(e - c);
    if (len >= sizeof buf) return xfail(x, LEIR_ERR_PARSE, "number too long%s", ""), false;
    memcpy(buf, c, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    if (isf) {
      out->f = true;
      out->d = strtod(buf, &end);
    } else {
      out->f = false;
      out->i = strtoll(buf, &end, 10);
    }
    if (*end || errno) return xfail(x, LEIR_ERR_PARSE, "bad number '%s'", buf), false;
    x->p = e;
    return true;
  }
  if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || *c == '_') {
    const char *e = c;
    while ((*e >= 'A' && *e <= 'Z') || (*e >= 'a' && *e <= 'z') || (*e >= '0' && *e <= '9') ||
           *e == '_')
      e++;
    char name[64];
    size_t len = (size_t)(e - c);
    if (len >= sizeof name) return xfail(x, LEIR_ERR_PARSE, "name too long%s", ""), false;
    memcpy(name, c, len);
    name[len] = 0;
    x->p = e;
    xskip(x);
    if (*x->p == '(') {
      bool is_min = !strcmp(name, "min"), is_max = !strcmp(name, "max"),
           is_sqrt = !strcmp(name, "sqrt");
      if (!is_min && !is_max && !is_sqrt)
        return xfail(x, LEIR_ERR_ARGUMENT, "unknown function '%s' (min, max, sqrt)", name), false;
      x->p++;
      xval acc;
      int nargs = 0;
      for (;;) {
        xval a;
        if (!xexpr(x, &a)) return false;
        if (nargs == 0) {
          acc = a;
        } else if (is_sqrt) {
          return xfail(x, LEIR_ERR_ARGUMENT, "sqrt takes one argument%s", ""), false;
        } else if (!acc.f && !a.f) {
          if ((is_min && a.i < acc.i) || (is_max && a.i > acc.i)) acc = a;
        } else {
          double p = xd(acc), q = xd(a);
          acc.f = true;
          acc.d = is_min ? (q < p ? q : p) : (q > p ? q : p);
        }
        nargs++;
        xskip(x);
        if (*x->p == ',') {
          x->p++;
          continue;
        }
        if (*x->p == ')') {
          x->p++;
          break;
        }
        return xfail(x, LEIR_ERR_PARSE, "expected ',' or ')' in %s(...)", name), false;
      }
      if (is_sqrt) {
        double v = xd(acc);
        if (v < 0) return xfail(x, LEIR_ERR_ARGUMENT, "sqrt of a negative value%s", ""), false;
        acc.f = true;
        acc.d = sqrt(v);
      } else if (nargs < 2) {
        return xfail(x, LEIR_ERR_ARGUMENT, "%s takes at least two arguments", name), false;
      }
      *out = acc;
      return true;
    }
    for (size_t i = 0; i < x->n; i++) {
      if (!strcmp(x->names[i], name)) {
        out->f = x->is_float && x->is_float[i];
        if (out->f) {
          out->d = x->values[i];
        } else {
          double v = x->values[i];
          if (!(v >= -9.2e18 && v <= 9.2e18))
            return xfail(x, LEIR_ERR_ARGUMENT, "value of '%s' out of range", name), false;
          out->i = (int64_t)v;
        }
        return true;
      }
    }
    return xfail(x, LEIR_ERR_ARGUMENT, "unknown name '%s'", name), false;
  }
  if (!*c) return xfail(x, LEIR_ERR_PARSE, "unexpected end of expression%s", ""), false;
  char tok[2] = {*c, 0};
  return xfail(x, LEIR_ERR_PARSE, "unexpected '%s'", tok), false;
}

static bool xunary(xctx *x, xval *out) {
  xskip(x);
  if (*x->p == '-' || *x->p == '+') {
    bool neg = *x->p == '-';
    x->p++;
    if (++x->depth > MAX_EXPR_DEPTH)
      return xfail(x, LEIR_ERR_LIMIT, "expression nested too deeply%s", ""), false;
    bool ok = xunary(x, out);
    x->depth--;
    if (!ok) return false;
    if (neg) {
      if (out->f)
        out->d = -out->d;
      else if (out->i == INT64_MIN)
        return xfail(x, LEIR_ERR_ARGUMENT, "integer overflow%s", ""), false;
      else
        out->i = -out->i;
    }
    return true;
  }
  if (++x->depth > MAX_EXPR_DEPTH)
    return xfail(x, LEIR_ERR_LIMIT, "expression nested too deeply%s", ""), false;
  bool ok = xprimary(x, out);
  x->depth--;
  return ok;
}

static bool xbin(xctx *x, xval *a, xval b, const char *op) {
  if (!a->f && !b.f && strcmp(op, "/")) {
    int64_t r;
    switch (op[0]) {
      case '+':
        if (__builtin_add_overflow(a->i, b.i, &r)) goto ovf;
        break;
      case '-':
        if (__builtin_sub_overflow(a->i, b.i, &r)) goto ovf;
        break;
      case '*':
        if (__builtin_mul_overflow(a->i, b.i, &r)) goto ovf;
        break;
      default: /* '//' and '%': Python's floor semantics */
        if (b.i == 0) return xfail(x, LEIR_ERR_ARGUMENT, "division by zero%s", ""), false;
        if (a->i == INT64_MIN && b.i == -1) goto ovf;
        {
          int64_t q = a->i / b.i, m = a->i % b.i;
          if (m != 0 && ((m < 0) != (b.i < 0))) {
            q--;
            m += b.i;
          }
          r = op[0] == '%' ? m : q;
        }
        break;
    }
    a->i = r;
    return true;
  ovf:
    return xfail(x, LEIR_ERR_ARGUMENT, "integer overflow in '%s'", op), false;
  }
  double p = xd(*a), q = xd(b), r;
  switch (op[0]) {
    case '+': r = p + q; break;
    case '-': r = p - q; break;
    case '*': r = p * q; break;
    case '%':
      if (q == 0) return xfail(x, LEIR_ERR_ARGUMENT, "division by zero%s", ""), false;
      r = p - floor(p / q) * q;
      break;
    default:
      if (q == 0) return xfail(x, LEIR_ERR_ARGUMENT, "division by zero%s", ""), false;
      r = op[1] == '/' ? floor(p / q) : p / q;
      break;
  }
  a->f = true;
  a->d = r;
  return true;
}

static bool xmul(xctx *x, xval *out) {
  if (!xunary(x, out)) return false;
  for (;;) {
    xskip(x);
    const char *op;
    if (x->p[0] == '/' && x->p[1] == '/')
      op = "//";
    else if (*x->p == '/')
      op = "/";
    else if (*x->p == '*' && x->p[1] != '*')
      op = "*";
    else if (*x->p == '%')
      op = "%";
    else
      return true;
    x->p += strlen(op);
    xval b;
    if (!xunary(x, &b) || !xbin(x, out, b, op)) return false;
  }
}

static bool xadd(xctx *x, xval *out) {
  if (!xmul(x, out)) return false;
  for (;;) {
    xskip(x);
    const char *op = *x->p == '+' ? "+" : *x->p == '-' ? "-" : NULL;
    if (!op) return true;
    x->p++;
    xval b;
    if (!xmul(x, &b) || !xbin(x, out, b, op)) return false;
  }
}

static bool xexpr(xctx *x, xval *out) {
  if (++x->depth > MAX_EXPR_DEPTH)
    return xfail(x, LEIR_ERR_LIMIT, "expression nested too deeply%s", ""), false;
  bool ok = xadd(x, out);
  if (ok) {
    xskip(x);
    static const char *const ops[] = {"==", "!=", "<=", ">=", "<", ">"};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
      size_t len = strlen(ops[k]);
      if (strncmp(x->p, ops[k], len)) continue;
      x->p += len;
      xval b;
      if (!xadd(x, &b)) {
        ok = false;
        break;
      }
      int c;
      if (!out->f && !b.f)
        c = out->i < b.i ? -1 : out->i > b.i;
      else
        c = xd(*out) < xd(b) ? -1 : xd(*out) > xd(b);
      bool r = k == 0 ? c == 0 : k == 1 ? c != 0 : k == 2 ? c <= 0 : k == 3 ? c >= 0
             : k == 4 ? c < 0 : c > 0;
      out->f = false;
      out->i = r;
      break;
    }
  }
  x->depth--;
  return ok;
}

static leir_status eval_expr(const char *s, size_t len, const wl_param *params, size_t nparams,
                             const double *values, xval *out) {
  if (len > MAX_EXPR_LEN)
    return leir__error(LEIR_ERR_LIMIT, "workload.expr", NULL, 0, 0,
                       "expression longer than %d bytes", MAX_EXPR_LEN);
  char *buf = malloc(len + 1);
  if (!buf) return leir__error_nomem();
  memcpy(buf, s, len);
  buf[len] = 0;
  const char *names[MAX_PARAMS];
  bool isf[MAX_PARAMS];
  for (size_t i = 0; i < nparams; i++) {
    names[i] = params[i].name;
    isf[i] = params[i].is_float;
  }
  xctx x = {buf, buf, names, values, isf, nparams, 0, LEIR_OK};
  if (strlen(buf) != len) {
    free(buf);
    return leir__error(LEIR_ERR_PARSE, "workload.expr-syntax", NULL, 0, 0,
                       "expression contains a NUL byte");
  }
  bool ok = xexpr(&x, out);
  if (ok) {
    xskip(&x);
    if (*x.p) {
      char tok[2] = {*x.p, 0};
      xfail(&x, LEIR_ERR_PARSE, "unexpected '%s' after the expression", tok);
      ok = false;
    }
  }
  if (ok && out->f && !isfinite(out->d)) {
    xfail(&x, LEIR_ERR_ARGUMENT, "the value is not finite%s", "");
    ok = false;
  }
  free(buf);
  return ok ? LEIR_OK : x.st;
}

leir_status leir_expr_eval(const char *expr, const char *const *names, const double *values,
                           const bool *is_float, size_t n, double *out, bool *out_is_float) {
  if (!expr || !out || (n && (!names || !values)) || n > MAX_PARAMS)
    return leir__error_arg(NULL, "NULL argument or n > 64");
  wl_param ps[MAX_PARAMS];
  for (size_t i = 0; i < n; i++) {
    ps[i].name = (char *)names[i];
    ps[i].is_float = is_float && is_float[i];
  }
  xval v;
  leir_status st = eval_expr(expr, strlen(expr), ps, n, values, &v);
  if (st != LEIR_OK) return st;
  *out = xd(v);
  if (out_is_float) *out_is_float = v.f;
  return LEIR_OK;
}

/* ======================================================================
 * Loading
 * ====================================================================== */

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
  if (cat->n == cat->cap) {
    size_t cap = cat->cap ? cat->cap * 2 : 64;
    leir_workload **items = realloc(cat->items, cap * sizeof *items);
    if (!items) {
      workload_free(w);
      return leir__error_nomem();
    }
    cat->items = items;
    cat->cap = cap;
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
    if (n == cap) {
      cap = cap ? cap * 2 : 256;
      char **nn = realloc(names, cap * sizeof *nn);
      if (!nn) {
        st = leir__error_nomem();
        break;
      }
      names = nn;
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

/* ======================================================================
 * Emitting
 * ====================================================================== */

void leir_emit_options_init(leir_emit_options *opts) {
  if (!opts) return;
  leir_emit_options o = LEIR_EMIT_OPTIONS_INIT;
  *opts = o;
}

/* Shortest text that reads back as the same double, with a '.' or an
 * exponent so that LEIR reads it as a float. */
static void put_float(leir__strbuf *b, double v) {
  /* Python's repr: the shortest digits that read back; positional notation
   * for exponents -4..15, else d.ddde-XX */
  char buf[64];
  int prec = 1, ex = 0;
  for (; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*e", prec - 1, v);
    if (strtod(buf, NULL) == v) break;
  }
  if (prec > 17) prec = 17;
  const char *e = strchr(buf, 'e');
  if (e) ex = atoi(e + 1);
  if (ex >= -4 && ex < 16) {
    int dec = prec - 1 - ex;
    snprintf(buf, sizeof buf, "%.*f", dec > 0 ? dec : 0, v);
    leir__sb_puts(b, buf);
    if (!strchr(buf, '.')) leir__sb_puts(b, ".0");
    return;
  }
  /* strip the mantissa's trailing zeros: 1.0e-05 -> 1e-05 */
  char mant[40];
  size_t mlen = (size_t)(e - buf);
  memcpy(mant, buf, mlen);
  mant[mlen] = 0;
  if (strchr(mant, '.')) {
    while (mlen && mant[mlen - 1] == '0') mant[--mlen] = 0;
    if (mlen && mant[mlen - 1] == '.') mant[--mlen] = 0;
  }
  leir__sb_printf(b, "%se%c%02d", mant, ex < 0 ? '-' : '+', ex < 0 ? -ex : ex);
}

static void put_val(leir__strbuf *b, xval v) {
  if (v.f)
    put_float(b, v.d);
  else
    leir__sb_put_i64(b, v.i);
}

/* Fills $T, $NAME and $(EXPR). */
static leir_status expand(const leir_workload *w, const char *tmpl, const double *values,
                          const char *dtype, leir__strbuf *b) {
  for (const char *p = tmpl; *p;) {
    if (*p != '$') {
      leir__sb_putc(b, *p++);
      continue;
    }
    p++;
    if (*p == '(') {
      int depth = 0;
      const char *q = p;
      for (; *q; q++) {
        if (*q == '(') depth++;
        if (*q == ')' && --depth == 0) break;
      }
      if (!*q)
        return leir__error(LEIR_ERR_PARSE, "workload.template", w->file, 0, 0,
                           "workload %s: unclosed '$(' in the template", w->name);
      xval v;
      leir_status st = eval_expr(p + 1, (size_t)(q - p - 1), w->params, w->nparams, values, &v);
      if (st != LEIR_OK) {
        const leir_error *e = leir_error_last();
        return leir__error(st, e->rule, w->file, 0, 0, "workload %s: in $(%.*s): %s", w->name,
                           (int)(q - p - 1 > 200 ? 200 : q - p - 1), p + 1, e->message);
      }
      put_val(b, v);
      p = q + 1;
      continue;
    }
    const char *q = p;
    while ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') ||
           *q == '_')
      q++;
    size_t len = (size_t)(q - p);
    if (len == 1 && *p == 'T') {
      leir__sb_puts(b, dtype);
      p = q;
      continue;
    }
    size_t i = 0;
    for (; i < w->nparams; i++)
      if (strlen(w->params[i].name) == len && !strncmp(w->params[i].name, p, len)) break;
    if (i == w->nparams || !len)
      return leir__error(LEIR_ERR_PARSE, "workload.template", w->file, 0, 0,
                         "workload %s: '$%.*s' names no parameter", w->name,
                         (int)(len > 64 ? 64 : len), p);
    xval v = {w->params[i].is_float, (int64_t)values[i], values[i]};
    put_val(b, v);
    p = q;
  }
  return LEIR_OK;
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static leir_status check_constraints(const leir_workload *w, const double *values) {
  for (size_t i = 0; i < w->nconstraints; i++) {
    xval v;
    leir_status st = eval_expr(w->constraints[i], strlen(w->constraints[i]), w->params,
                               w->nparams, values, &v);
    if (st != LEIR_OK) {
      const leir_error *e = leir_error_last();
      return leir__error(st, e->rule, w->file, 0, 0, "workload %s: constraint '%s': %s",
                         w->name, w->constraints[i], e->message);
    }
    if (v.f ? v.d == 0 : v.i == 0)
      return leir__error(LEIR_ERR_ARGUMENT, "workload.constraint", w->file, 0, 0,
                         "workload %s: the parameters break the constraint '%s'", w->name,
                         w->constraints[i]);
  }
  return LEIR_OK;
}

/* Expands, sets the signature and checks. */
static leir_status build(const leir_workload *w, const double *values, const char *dtype,
                         leir_program **out, char **yaml_out) {
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir_status st = expand(w, w->tmpl, values, dtype, &b);
  if (st != LEIR_OK) {
    free(b.data);
    return st;
  }
  leir__sb_putc(&b, 0);
  if (b.failed) {
    free(b.data);
    return leir__error_nomem();
  }
  leir_parse_options po = LEIR_PARSE_OPTIONS_INIT;
  po.flags |= LEIR_PARSE_LENIENT;
  leir_program *p = NULL;
  st = leir_program_parse(&p, b.data, b.len - 1, &po);
  free(b.data);
  if (st != LEIR_OK) {
    const leir_error *e = leir_error_last();
    return leir__error(st, e->rule, w->file, e->line, e->column,
                       "workload %s: the expanded template does not parse: %s", w->name,
                       e->message);
  }
  /* The inferred signature gives every shape the accesses imply; the
   * declared tensors fix the order (and may fix shapes). */
  st = leir_program_infer_signature(p);
  size_t ninf = st == LEIR_OK ? leir_program_signature_count(p) : 0;
  leir_tensor_decl *decls = NULL;
  int64_t(*shapes)[LEIR_MAX_RANK] = NULL;
  size_t nd = 0;
  if (st == LEIR_OK && w->ntensors) {
    decls = calloc(w->ntensors, sizeof *decls);
    shapes = calloc(w->ntensors, sizeof *shapes);
    if (!decls || !shapes) st = leir__error_nomem();
    /* every input or output of the program must be declared */
    for (size_t k = 0; st == LEIR_OK && k < ninf; k++) {
      leir_tensor_decl d;
      if (leir_program_signature_get(p, k, &d) != LEIR_OK) continue;
      size_t i = 0;
      for (; i < w->ntensors; i++)
        if (!strcmp(d.name, w->tensors[i].name)) break;
      if (i == w->ntensors)
        st = leir__error(LEIR_ERR_SIGNATURE, "workload.signature", w->file, 0, 0,
                         "workload %s: '%s' is an %s of the program but not declared", w->name,
                         d.name, d.role == LEIR_ROLE_OUTPUT ? "output" : "input");
    }
    for (size_t i = 0; st == LEIR_OK && i < w->ntensors; i++) {
      const wl_tensor *t = &w->tensors[i];
      leir_tensor_decl d;
      size_t k = 0;
      for (; k < ninf; k++)
        if (leir_program_signature_get(p, k, &d) == LEIR_OK && !strcmp(d.name, t->name)) break;
      if (k == ninf) {
        /* an input the program never reads (the reference keeps unused
         * parameters in its signature): its shape must be declared */
        if (t->output || !t->has_shape) {
          st = leir__error(LEIR_ERR_SIGNATURE, "workload.signature", w->file, 0, 0,
                           "workload %s: declared %s '%s' is not %s by the program%s", w->name,
                           t->output ? "output" : "input", t->name,
                           t->output ? "written" : "read",
                           t->output ? "" : " (an unused input needs a declared shape)");
          break;
        }
        memset(&d, 0, sizeof d);
        d.role = LEIR_ROLE_INPUT;
        leir_dtype_from_name(dtype, &d.dtype);
        if (t->has_dtype) d.dtype = t->dtype;
      }
      if ((d.role == LEIR_ROLE_OUTPUT) != t->output) {
        st = leir__error(LEIR_ERR_SIGNATURE, "workload.signature", w->file, 0, 0,
                         "workload %s: '%s' is declared as an %s but the program %s it", w->name,
                         t->name, t->output ? "output" : "input",
                         t->output ? "only reads" : "writes");
        break;
      }
      if (t->has_dtype && t->dtype != d.dtype) {
        st = leir__error(LEIR_ERR_SIGNATURE, "workload.signature", w->file, 0, 0,
                         "workload %s: '%s' is declared %s but the program uses %s", w->name,
                         t->name, leir_dtype_name(t->dtype), leir_dtype_name(d.dtype));
        break;
      }
      decls[nd] = d;
      decls[nd].name = t->name;
      if (t->has_shape) {
        for (uint32_t r = 0; r < t->rank && st == LEIR_OK; r++) {
          xval v;
          st = eval_expr(t->shape[r], strlen(t->shape[r]), w->params, w->nparams, values, &v);
          if (st == LEIR_OK && (v.f || v.i < 1))
            st = leir__error(LEIR_ERR_ARGUMENT, "workload.shape", w->file, 0, 0,
                             "workload %s: extent '%s' of %s is not a positive integer",
                             w->name, t->shape[r], t->name);
          if (st == LEIR_OK) shapes[nd][r] = v.i;
        }
        decls[nd].rank = t->rank;
      } else {
        for (uint32_t r = 0; r < d.rank; r++) shapes[nd][r] = d.shape[r];
      }
      decls[nd].shape = shapes[nd];
      nd++;
    }
    /* inputs first: the declared order lists inputs, then outputs */
    if (st == LEIR_OK) {
      leir_tensor_decl *sorted = calloc(nd, sizeof *sorted);
      if (!sorted) {
        st = leir__error_nomem();
      } else {
        size_t m = 0;
        for (int role = 0; role < 2; role++)
          for (size_t i = 0; i < nd; i++)
            if ((int)decls[i].role == role) sorted[m++] = decls[i];
        st = leir_program_set_signature(p, sorted, nd);
        free(sorted);
      }
    }
  }
  if (st == LEIR_OK) {
    leir_check_options co = LEIR_CHECK_OPTIONS_INIT;
    leir_diagnostics *diags = NULL;
    st = leir_program_check(p, &co, &diags);
    if (st != LEIR_OK && diags && leir_diagnostics_count(diags)) {
      const leir_diagnostic *dg = leir_diagnostics_get(diags, 0);
      st = leir__error(LEIR_ERR_INVALID, dg->rule, w->file, dg->line, dg->column,
                       "workload %s: the expanded program fails a check: %s", w->name,
                       dg->message);
    }
    leir_diagnostics_free(diags);
  }
  if (st == LEIR_OK && yaml_out) {
    leir__strbuf y = LEIR__STRBUF_INIT;
    leir__sb_printf(&y, "# leir workloads emit level%d/%s --args ", w->level, w->name);
    for (size_t i = 0; i < w->nparams; i++) {
      if (i) leir__sb_putc(&y, ',');
      xval v = {w->params[i].is_float, (int64_t)values[i], values[i]};
      put_val(&y, v);
    }
    leir__sb_printf(&y, " --dtype %s\nname: level%d/%s\n", dtype, w->level, w->name);
    size_t ns = leir_program_signature_count(p);
    for (int role = 0; role < 2 && st == LEIR_OK; role++) {
      leir__sb_puts(&y, role ? "outputs:\n" : "inputs:\n");
      for (size_t i = 0; i < ns; i++) {
        leir_tensor_decl d;
        if (leir_program_signature_get(p, i, &d) != LEIR_OK || (int)d.role != role) continue;
        leir__sb_printf(&y, "  %s: {dtype: %s, shape: [", d.name, leir_dtype_name(d.dtype));
        for (uint32_t r = 0; r < d.rank; r++) {
          if (r) leir__sb_puts(&y, ", ");
          leir__sb_put_i64(&y, d.shape[r]);
        }
        leir__sb_putc(&y, ']');
        for (size_t t = 0; t < w->ntensors; t++)
          if (w->tensors[t].domain && !strcmp(w->tensors[t].name, d.name)) {
            leir__sb_puts(&y, ", domain: ");
            st = expand(w, w->tensors[t].domain, values, dtype, &y);
          }
        leir__sb_puts(&y, "}\n");
      }
    }
    char *text = NULL;
    size_t tlen = 0;
    if (st == LEIR_OK) st = leir_program_print(p, LEIR_PRINT_PRETTY, &text, &tlen);
    if (st == LEIR_OK) {
      leir__sb_puts(&y, "leir: |-\n");
      const char *s = text;
      while (*s) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        if (n) {
          leir__sb_puts(&y, "  ");
          leir__sb_put(&y, s, n);
          leir__sb_putc(&y, '\n');
        }
        s += n + (nl ? 1 : 0);
      }
    }
    leir_free(text);
    leir__sb_putc(&y, 0);
    if (st == LEIR_OK && y.failed) st = leir__error_nomem();
    if (st == LEIR_OK)
      *yaml_out = y.data;
    else
      free(y.data);
  }
  free(decls);
  free(shapes);
  if (st != LEIR_OK) {
    leir_program_free(p);
    return st;
  }
  *out = p;
  return LEIR_OK;
}

leir_status leir_workload_emit(const leir_workload *w, const leir_emit_options *opts,
                               char **yaml_out, leir_program **program_out, double *values_out,
                               size_t nvalues) {
  if (yaml_out) *yaml_out = NULL;
  if (program_out) *program_out = NULL;
  if (!w) return leir__error_arg(NULL, "NULL workload");
  leir_emit_options o = LEIR_EMIT_OPTIONS_INIT;
  if (opts) {
    if (opts->size < sizeof(uint32_t))
      return leir__error_arg(NULL, "options size too small");
    memcpy(&o, opts, opts->size < sizeof o ? opts->size : sizeof o);
    o.size = sizeof o;
  }
  if (values_out && nvalues < w->nparams)
    return leir__error_arg(NULL, "values_out holds %zu values; the workload has %zu parameters", nvalues,
                       w->nparams);
  if (o.shape != LEIR_SHAPE_DEFAULT && o.shape != LEIR_SHAPE_SMALL && o.shape != LEIR_SHAPE_RANDOM)
    return leir__error_arg(NULL, "unknown shape kind");
  if (o.nargs > w->nparams || (o.nargs && !o.args))
    return leir__error(LEIR_ERR_ARGUMENT, "workload.args", w->name, 0, 0,
                       "%zu arguments given; workload %s has %zu parameters", o.nargs, w->name,
                       w->nparams);
  const char *dtype;
  if (o.dtype) {
    leir_dtype dt;
    if (leir_dtype_from_name(o.dtype, &dt) != LEIR_OK ||
        (dt != LEIR_F16 && dt != LEIR_BF16 && dt != LEIR_F32 &&
         dt != LEIR_F64))
      return leir__error(LEIR_ERR_ARGUMENT, "workload.dtype", o.dtype, 0, 0,
                         "dtype '%s' is not a floating type (f16, bf16, f32, f64)", o.dtype);
    dtype = leir_dtype_name(dt);
  } else {
    dtype = o.shape == LEIR_SHAPE_SMALL ? "f64" : leir_dtype_name(w->dtype);
  }
  double values[MAX_PARAMS];
  uint64_t rng = o.seed ^ 0x6c6569722d776c64ull;
  int tries = o.shape == LEIR_SHAPE_RANDOM ? RANDOM_TRIES : 1;
  leir_status st = LEIR_OK;
  for (int t = 0; t < tries; t++) {
    for (size_t i = 0; i < w->nparams; i++) {
      const wl_param *p = &w->params[i];
      if (o.shape == LEIR_SHAPE_SMALL) {
        values[i] = p->small;
      } else if (o.shape == LEIR_SHAPE_RANDOM && !p->is_float) {
        uint64_t span = (uint64_t)((int64_t)p->hi - (int64_t)p->lo) + 1;
        values[i] = p->lo + (double)(span ? splitmix(&rng) % span : 0);
      } else {
        values[i] = p->dflt;
      }
    }
    for (size_t i = 0; i < o.nargs; i++) {
      double v = o.args[i];
      if (!isfinite(v) || (!w->params[i].is_float && (v != floor(v) || fabs(v) > 9.0e15)))
        return leir__error(LEIR_ERR_ARGUMENT, "workload.args", w->name, 0, 0,
                           "argument %zu (%s) must be %s", i + 1, w->params[i].name,
                           w->params[i].is_float ? "a finite number" : "an integer");
      values[i] = v;
    }
    st = check_constraints(w, values);
    leir_program *p = NULL;
    char *yaml = NULL;
    if (st == LEIR_OK) st = build(w, values, dtype, &p, yaml_out ? &yaml : NULL);
    if (st == LEIR_OK) {
      if (program_out)
        *program_out = p;
      else
        leir_program_free(p);
      if (yaml_out) *yaml_out = yaml;
      if (values_out) memcpy(values_out, values, w->nparams * sizeof *values);
      return LEIR_OK;
    }
  }
  return st;
}
