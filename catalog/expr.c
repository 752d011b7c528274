/*
 * The workload catalogue's expression evaluator: the small, safe arithmetic
 * of parameter expressions (shapes, domains, constraints) and
 * leir_expr_eval.
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

leir_status leir__catalog_eval_expr(const char *s, size_t len, const wl_param *params,
                                    size_t nparams, const double *values, xval *out) {
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
  leir_status st = leir__catalog_eval_expr(expr, strlen(expr), ps, n, values, &v);
  if (st != LEIR_OK) return st;
  *out = xd(v);
  if (out_is_float) *out_is_float = v.f;
  return LEIR_OK;
}
