/*
 * Emitting a workload: template expansion at a shape (default, small or
 * random) into a checked program or program file (leir_workload_emit).
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
      leir_status st = leir__catalog_eval_expr(p + 1, (size_t)(q - p - 1), w->params,
                                               w->nparams, values, &v);
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
    leir_status st = leir__catalog_eval_expr(w->constraints[i], strlen(w->constraints[i]),
                                             w->params, w->nparams, values, &v);
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
          st = leir__catalog_eval_expr(t->shape[r], strlen(t->shape[r]), w->params, w->nparams,
                                       values, &v);
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
