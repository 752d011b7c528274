/* The C-family expression emitter (see c_expr.h). */
#include "c_expr.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "c_text.h"
#include "error.h"
#include "prelude.h"
#include "vec.h"

/* Below this many operands max/min stay a left fold (the spec's own form,
 * and the spelling every earlier lowering used); above, the balanced tree
 * keeps the nesting depth logarithmic (cc1 crashes on 50,000 nested
 * calls). */
#define FOLD_RUN 8

void leir__cx_init(leir__cx *x, const leir__cx_dialect *d, const leir__analysis *a, void *ctx,
                   leir__strbuf *final) {
  memset(x, 0, sizeof *x);
  x->d = d;
  x->a = a;
  x->ctx = ctx;
  x->final = final;
  x->max_bytes = LEIR__MAX_SOURCE_BYTES;
  x->st = LEIR_OK;
}

void leir__cx_release(leir__cx *x) {
  leir__sb_release(&x->stmt);
  free(x->temp_type);
  x->temp_type = NULL;
  x->cap_temps = x->ntemps = 0;
}

leir_status leir__cx_status(const leir__cx *x) { return x->st; }

void leir__cx_fail(leir__cx *x, leir_status st) {
  if (x->st == LEIR_OK) x->st = st;
}

/* Stops emission after a failed write or at the size limit. */
static bool stopped(leir__cx *x) {
  if (x->st != LEIR_OK) return true;
  if (x->stmt.failed || x->final->failed) {
    x->st = leir__error_nomem();
    return true;
  }
  if (x->stmt.len + x->final->len > x->max_bytes) {
    x->st = leir__error(LEIR_ERR_LIMIT, "lower.size", NULL, 0, 0,
                        "the generated source exceeds %zu bytes", x->max_bytes);
    return true;
  }
  return false;
}

void leir__cx_begin(leir__cx *x) {
  x->stmt.len = 0;
  if (x->stmt.data) x->stmt.data[0] = '\0';
  x->ntemps = 0;
}

leir__strbuf *leir__cx_out(leir__cx *x) { return &x->stmt; }

void leir__cx_end(leir__cx *x, bool wrap) {
  if (stopped(x)) return;
  bool braces = wrap && x->ntemps;
  if (braces) leir__sb_puts(x->final, "{ ");
  for (uint32_t k = 0; k < x->ntemps; k++)
    leir__sb_printf(x->final, "%s leir_c%u; ", leir__ctext_ctype_name((leir__ctype)x->temp_type[k]),
                    k);
  leir__sb_put(x->final, x->stmt.data ? x->stmt.data : "", x->stmt.len);
  if (braces) leir__sb_puts(x->final, "}\n");
  stopped(x);
}

static void put(leir__cx *x, const char *s) { leir__sb_puts(&x->stmt, s); }

static uint32_t new_temp(leir__cx *x, leir__ctype ct) {
  if (!leir__vec_grow32((void **)&x->temp_type, &x->cap_temps, (size_t)x->ntemps + 1,
                        sizeof *x->temp_type, 8)) {
    leir__cx_fail(x, leir__error_nomem());
    return 0;
  }
  x->temp_type[x->ntemps] = (uint8_t)ct;
  return x->ntemps++;
}


/* ---- literals and variables ------------------------------------------------ */

void leir__cx_float_const(leir__cx *x, leir__strbuf *b, double v, leir__ctype ct) {
  int dbl = ct != LEIR__CT_F32;
  if (!dbl) v = (double)(float)v;
  if (isnan(v))
    leir__sb_puts(b, x->d->nan[dbl]);
  else if (isinf(v))
    leir__sb_puts(b, v > 0 ? x->d->inf[dbl] : x->d->neg_inf[dbl]);
  else
    leir__sb_printf(b, dbl ? "%s%a" : "%s%af", v < 0 ? "-" : "", fabs(v));
}

static void put_number(leir__cx *x, const leir_expr *e, leir__ctype ct) {
  const leir__number *n = e->u.num;
  if (ct == LEIR__CT_I64)
    x->d->put_i64(&x->stmt, n->is_int ? n->ival : leir_f64_to_i64(n->value));
  else
    leir__cx_float_const(x, &x->stmt, n->value, ct);
}

/* ---- conditions -------------------------------------------------------------- */

static void emit_value(leir__cx *x, const leir_expr *e, leir__ctype ct);

/* An operand cheap and pure enough to write twice. */
static bool is_leaf(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e->kind == LEIR_EXPR_NUMBER || e->kind == LEIR_EXPR_INF || e->kind == LEIR_EXPR_VAR;
}

static void emit_cond(leir__cx *x, const leir_expr *e) {
  if (stopped(x)) return;
  e = leir__cond_strip(e); /* ((a < 2)) is a < 2, at any depth */
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_AND:
    case LEIR_EXPR_OR:
      put(x, "(");
      emit_cond(x, e->kids[0]);
      put(x, e->kind == LEIR_EXPR_AND ? " && " : " || ");
      emit_cond(x, e->kids[1]);
      put(x, ")");
      return;
    case LEIR_EXPR_COMPARE: {
      /* a < b < c -> ((a < (t = b)) && (t < c)): every operand evaluated
       * once, left to right; && keeps the chain lazy. */
      leir__ctype ct = leir__cond_ctype(e);
      uint32_t prev = UINT32_MAX; /* temporary holding operand k, if any */
      put(x, "(");
      for (uint32_t k = 0; k + 1 < e->n; k++) {
        if (k) put(x, " && ");
        put(x, "(");
        if (prev != UINT32_MAX)
          leir__sb_printf(&x->stmt, "leir_c%u", prev);
        else
          emit_value(x, e->kids[k], ct);
        put(x, leir__ctext_cmp_op((leir_op)e->u.cmp_ops[k]));
        const leir_expr *r = e->kids[k + 1];
        prev = UINT32_MAX;
        if (k + 2 < e->n && !is_leaf(r)) {
          prev = new_temp(x, ct);
          leir__sb_printf(&x->stmt, "(leir_c%u = ", prev);
          emit_value(x, r, ct);
          put(x, ")");
        } else {
          emit_value(x, r, ct);
        }
        put(x, ")");
      }
      put(x, ")");
      return;
    }
    default: break;
  }
  /* a bare value: non-zero is true (NaN too) */
  leir__ctype ct = leir__cond_ctype(e);
  put(x, "(");
  emit_value(x, e, ct);
  put(x, ct == LEIR__CT_I64 ? " != 0)" : " != 0.0)");
}

/* ---- values ------------------------------------------------------------------ */

/* A tensor read converted to the computation type. */
static void emit_load(leir__cx *x, const leir_expr *t, leir__ctype ct) {
  uint32_t b = t->id < x->a->nids ? x->a->expr_buffer[t->id] : LEIR__NONE;
  leir_dtype dt = b != LEIR__NONE ? (leir_dtype)x->a->buffers[b].dtype : (leir_dtype)t->dtype;
  const char *pre = "", *post = ")";
  bool f32 = ct == LEIR__CT_F32, f64 = ct == LEIR__CT_F64;
  switch (dt) {
    case LEIR_F64: pre = f32 ? "((float)" : f64 ? "(" : "leir_f64_to_i64("; break;
    case LEIR_F32: pre = f32 ? "(" : f64 ? "((double)" : "leir_f64_to_i64((double)"; break;
    case LEIR_F16:
    case LEIR_BF16: {
      bool h = dt == LEIR_F16;
      pre = f32   ? (h ? "leir_f16_to_f32(" : "leir_bf16_to_f32(")
            : f64 ? (h ? "((double)leir_f16_to_f32(" : "((double)leir_bf16_to_f32(")
                  : (h ? "leir_f64_to_i64((double)leir_f16_to_f32("
                       : "leir_f64_to_i64((double)leir_bf16_to_f32(");
      post = f32 ? ")" : "))";
      break;
    }
    case LEIR_BOOL:
      pre = f32 ? "((float)(int64_t)(" : f64 ? "((double)(int64_t)(" : "((int64_t)(";
      post = " != 0))";
      break;
    default: /* integers */
      pre = f32 ? "((float)(int64_t)" : f64 ? "((double)(int64_t)" : "((int64_t)";
      break;
  }
  put(x, pre);
  leir__cx_element(x, t);
  put(x, post);
}

static void emit_var_value(leir__cx *x, const leir_expr *e, leir__ctype ct) {
  if (ct == LEIR__CT_I64 && !x->d->cast_var) {
    x->d->put_var(x, e);
    return;
  }
  leir__sb_printf(&x->stmt, "((%s)", leir__ctext_ctype_name(ct));
  x->d->put_var(x, e);
  put(x, ")");
}

/* max/min of operands [lo, hi): a left fold of short runs, combined as a
 * balanced tree (depth FOLD_RUN + log2(n / FOLD_RUN)). */
static void emit_fold(leir__cx *x, const leir_expr *e, uint32_t lo, uint32_t hi, const char *fn,
                      leir__ctype ct) {
  if (stopped(x)) return;
  if (hi - lo <= FOLD_RUN) {
    for (uint32_t k = lo + 1; k < hi; k++) leir__sb_printf(&x->stmt, "%s(", fn);
    emit_value(x, e->kids[lo], ct);
    for (uint32_t k = lo + 1; k < hi && !stopped(x); k++) {
      put(x, ", ");
      emit_value(x, e->kids[k], ct);
      put(x, ")");
    }
    return;
  }
  uint32_t mid = lo + (hi - lo + 1) / 2;
  leir__sb_printf(&x->stmt, "%s(", fn);
  emit_fold(x, e, lo, mid, fn, ct);
  put(x, ", ");
  emit_fold(x, e, mid, hi, fn, ct);
  put(x, ")");
}

static void emit_call(leir__cx *x, const leir_expr *e, leir__ctype ct) {
  bool f32 = ct == LEIR__CT_F32, i64 = ct == LEIR__CT_I64;
  const char *fn = NULL;
  switch ((leir_op)e->op) {
    /* f32 exp/log: libleir's own (leir_math.h, via the prelude), the
     * interpreter's functions, vectorizable; f64 and integers: libm */
    case LEIR_OP_EXP: fn = f32 ? "leir_exp_f32" : "exp"; break;
    case LEIR_OP_LOG: fn = f32 ? "leir_log_f32" : "log"; break;
    case LEIR_OP_SQRT: fn = f32 ? "sqrtf" : "sqrt"; break;
    case LEIR_OP_ERF: fn = f32 ? "erff" : "erf"; break;
    case LEIR_OP_ABS: fn = f32 ? "fabsf" : i64 ? "leir_abs_i64" : "fabs"; break;
    case LEIR_OP_MAX:
    case LEIR_OP_MIN: {
      bool mx = e->op == LEIR_OP_MAX;
      const char *f2 = i64   ? (mx ? "leir_max_i64" : "leir_min_i64")
                       : f32 ? (mx ? "leir_fmax_f32" : "leir_fmin_f32")
                             : (mx ? "leir_fmax_f64" : "leir_fmin_f64");
      emit_fold(x, e, 0, e->n, f2, ct);
      return;
    }
    case LEIR_OP_IF_THEN_ELSE:
      /* the conditional operator evaluates only the chosen branch (lazy) */
      put(x, "(");
      emit_cond(x, e->kids[0]);
      put(x, " ? ");
      emit_value(x, e->kids[1], ct);
      put(x, " : ");
      emit_value(x, e->kids[2], ct);
      put(x, ")");
      return;
    default:
      leir__cx_fail(x, leir__error(LEIR_ERR_INTERNAL, "lower.expr", NULL, 0, 0,
                                   "the lowering met a function it cannot translate"));
      return;
  }
  if (i64 && e->op != LEIR_OP_ABS) {
    /* transcendental functions of integers: in double, converted back */
    leir__sb_printf(&x->stmt, "leir_f64_to_i64(%s((double)", fn);
    emit_value(x, e->kids[0], ct);
    put(x, "))");
  } else {
    leir__sb_printf(&x->stmt, "%s(", fn);
    emit_value(x, e->kids[0], ct);
    put(x, ")");
  }
}

static void emit_value(leir__cx *x, const leir_expr *e, leir__ctype ct) {
  if (stopped(x)) return;
  bool f32 = ct == LEIR__CT_F32, i64 = ct == LEIR__CT_I64;
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER: put_number(x, e, ct); return;
    case LEIR_EXPR_INF:
      if (i64)
        x->d->put_i64(&x->stmt, leir_f64_to_i64(INFINITY));
      else
        leir__cx_float_const(x, &x->stmt, INFINITY, ct);
      return;
    case LEIR_EXPR_VAR: emit_var_value(x, e, ct); return;
    case LEIR_EXPR_TENSOR: emit_load(x, e, ct); return;
    case LEIR_EXPR_PAREN:
      put(x, "(");
      emit_value(x, e->kids[0], ct);
      put(x, ")");
      return;
    case LEIR_EXPR_NEG:
      put(x, i64 ? "leir_neg_i64(" : "(-");
      emit_value(x, e->kids[0], ct);
      put(x, ")");
      return;
    case LEIR_EXPR_BINARY: {
      const char *fn = NULL, *op = NULL;
      bool checked = false;
      switch ((leir_op)e->op) {
        case LEIR_OP_ADD: i64 ? (fn = "leir_add_i64") : (op = " + "); break;
        case LEIR_OP_SUB: i64 ? (fn = "leir_sub_i64") : (op = " - "); break;
        case LEIR_OP_MUL: i64 ? (fn = "leir_mul_i64") : (op = " * "); break;
        case LEIR_OP_DIV:
        case LEIR_OP_FLOORDIV:
          if (i64)
            fn = "leir_idiv", checked = true;
          else if (e->op == LEIR_OP_DIV)
            op = " / ";
          else
            fn = f32 ? "leir_floordiv_f32" : "leir_floordiv_f64";
          break;
        case LEIR_OP_MOD:
          if (i64)
            fn = "leir_imod", checked = true;
          else
            fn = f32 ? "leir_floormod_f32" : "leir_floormod_f64";
          break;
        case LEIR_OP_POW:
          if (i64)
            fn = "leir_ipow", checked = true;
          else
            fn = f32 ? "powf" : "pow";
          break;
        default:
          leir__cx_fail(x, leir__error(LEIR_ERR_INTERNAL, "lower.expr", NULL, 0, 0,
                                       "the lowering met an operator it cannot translate"));
          return;
      }
      if (op && e->op == LEIR_OP_DIV && f32 && x->d->hoisted_reciprocal &&
          x->d->hoisted_reciprocal(x, e)) {
        /* a multiplication where a division would be, exact: see
         * hoisted_reciprocal */
        put(x, "((float)((double)");
        emit_value(x, e->kids[0], ct);
        leir__sb_printf(&x->stmt, " * leir_q%u))", e->id);
      } else if (op) {
        put(x, "(");
        emit_value(x, e->kids[0], ct);
        put(x, op);
        emit_value(x, e->kids[1], ct);
        put(x, ")");
      } else {
        leir__sb_printf(&x->stmt, "%s(%s", fn, checked ? x->d->trap_pre : "");
        emit_value(x, e->kids[0], ct);
        put(x, ", ");
        emit_value(x, e->kids[1], ct);
        if (checked) x->d->trap_post(x, e);
        put(x, ")");
      }
      return;
    }
    case LEIR_EXPR_CALL: emit_call(x, e, ct); return;
    case LEIR_EXPR_COMPARE:
    case LEIR_EXPR_AND:
    case LEIR_EXPR_OR:
      /* a condition in value position (a parenthesized comparison inside a
       * condition, `(a < 2) < 3`): 1 when true, 0 when false */
      leir__sb_printf(&x->stmt, "((%s)", leir__ctext_ctype_name(ct));
      emit_cond(x, e);
      put(x, ")");
      return;
  }
  leir__cx_fail(x, leir__error(LEIR_ERR_INTERNAL, "lower.expr", NULL, 0, 0,
                               "the lowering met an expression it cannot translate"));
}

void leir__cx_value(leir__cx *x, const leir_expr *e, leir__ctype ct) { emit_value(x, e, ct); }

void leir__cx_element(leir__cx *x, const leir_expr *t) {
  if (stopped(x)) return;
  x->d->element(x, t);
}

/* ---- index expressions ------------------------------------------------------- */

static void emit_index(leir__cx *x, const leir_expr *e);

static void index_var(leir__cx *x, const leir_expr *e) {
  if (x->d->cast_var) put(x, "(int64_t)");
  x->d->put_var(x, e);
}

/* range_index: // and % of operands proven non-negative / positive are C's
 * / and %; other proven ranges use the floor helpers. */
static void emit_plain_divmod(leir__cx *x, const leir_expr *e) {
  leir__range l = leir__index_range(x->a, e->kids[0], x->env);
  leir__range r = leir__index_range(x->a, e->kids[1], x->env);
  if (l.known && r.known && l.lo >= 0 && r.lo > 0) {
    put(x, "(");
    emit_index(x, e->kids[0]);
    put(x, e->op == LEIR_OP_MOD ? " % " : " / ");
    emit_index(x, e->kids[1]);
    put(x, ")");
    return;
  }
  leir__sb_printf(&x->stmt, "%s(", e->op == LEIR_OP_MOD ? "leir_floormod_i64" : "leir_floordiv_i64");
  emit_index(x, e->kids[0]);
  put(x, ", ");
  emit_index(x, e->kids[1]);
  put(x, ")");
}

static void emit_index(leir__cx *x, const leir_expr *e) {
  if (stopped(x)) return;
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER: put_number(x, e, LEIR__CT_I64); return;
    case LEIR_EXPR_VAR: index_var(x, e); return;
    case LEIR_EXPR_PAREN:
      put(x, "(");
      emit_index(x, e->kids[0]);
      put(x, ")");
      return;
    case LEIR_EXPR_NEG:
      put(x, "(-");
      emit_index(x, e->kids[0]);
      put(x, ")");
      return;
    case LEIR_EXPR_BINARY: {
      const char *op = NULL, *fn = NULL;
      switch ((leir_op)e->op) {
        case LEIR_OP_ADD: op = " + "; break;
        case LEIR_OP_SUB: op = " - "; break;
        case LEIR_OP_MUL: op = " * "; break;
        case LEIR_OP_FLOORDIV:
        case LEIR_OP_MOD:
          if (x->d->range_index) {
            emit_plain_divmod(x, e);
            return;
          }
          fn = e->op == LEIR_OP_MOD ? "leir_imod(" : "leir_idiv(";
          break;
        case LEIR_OP_DIV: fn = x->d->range_index ? NULL : "leir_idiv("; break;
        case LEIR_OP_POW: fn = x->d->range_index ? NULL : "leir_ipow("; break;
        default: break;
      }
      if (op) {
        put(x, "(");
        emit_index(x, e->kids[0]);
        put(x, op);
        emit_index(x, e->kids[1]);
        put(x, ")");
        return;
      }
      if (fn) {
        put(x, fn);
        put(x, x->d->trap_pre);
        emit_index(x, e->kids[0]);
        put(x, ", ");
        emit_index(x, e->kids[1]);
        x->d->trap_post(x, e);
        put(x, ")");
        return;
      }
      break;
    }
    case LEIR_EXPR_TENSOR:
      if (!x->d->range_index) {
        emit_load(x, e, LEIR__CT_I64);
        return;
      }
      break;
    default: break;
  }
  emit_value(x, e, LEIR__CT_I64); /* anything else: the general form */
}

void leir__cx_index(leir__cx *x, const leir_expr *e) {
  if (x->d->range_index &&
      (leir__expr_has_tensor(e) || !leir__index_range(x->a, e, x->env).known ||
       (e->kind == LEIR_EXPR_NUMBER && !e->u.num->is_int))) {
    emit_value(x, e, LEIR__CT_I64);
    return;
  }
  emit_index(x, e);
}
