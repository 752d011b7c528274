/*
 * The expression printer of the TIR lowering (lower_tir.c): loop variable
 * names, constants, index expressions (TVM's int32 loop variables,
 * floordiv/floormod), values in an equation's computation type and
 * conditions, as TVMScript text.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "error.h"
#include "prelude.h"
#include "semantics.h"
#include "strbuf.h"
#include "tir_internal.h"

/* Python keywords are renamed with a trailing underscore (loop variables
 * are lower case, so only these can clash). */
bool leir__tir_is_keyword(const char *s) {
  static const char *const kw[] = {
      "and",      "as",     "assert", "async", "await",  "break",  "class", "continue",
      "def",      "del",    "elif",   "else",  "except", "finally", "for",  "from",
      "global",   "if",     "import", "in",    "is",     "lambda", "nonlocal", "not",
      "or",       "pass",   "raise",  "return", "try",   "while",  "with",  "yield"};
  for (size_t k = 0; k < sizeof kw / sizeof kw[0]; k++)
    if (strcmp(s, kw[k]) == 0) return true;
  return false;
}

void leir__tir_put_loopvar(tir *T, uint32_t sym) {
  const char *v = leir__sym_name(T->p, sym);
  if (T->in_block) {
    put(T, "v_");
    put(T, v);
    return;
  }
  put(T, v);
  if (leir__tir_is_keyword(v)) put(T, "_");
}

void leir__tir_put_loopvar_outside(tir *T, uint32_t sym) {
  bool b = T->in_block;
  T->in_block = false;
  leir__tir_put_loopvar(T, sym);
  T->in_block = b;
}

/* ---- constants ----------------------------------------------------------- */

void leir__tir_put_float(tir *T, double v, leir__ctype ct) {
  const char *d = ct_dtype(ct);
  if (isnan(v)) {
    putf(T, "T.%s(\"nan\")", d);
  } else if (isinf(v)) {
    putf(T, "%sT.%s(\"inf\")", v < 0 ? "-" : "", d);
  } else if (ct == LEIR__CT_F32) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.9g", (double)(float)v);
    if (!strpbrk(buf, ".en")) strcat(buf, ".0");
    putf(T, "T.float32(%s)", buf);
  } else {
    char buf[64];
    snprintf(buf, sizeof buf, "%.17g", v);
    /* the shortest text that reads back to v */
    for (int prec = 1; prec <= 17; prec++) {
      char tmp[64];
      snprintf(tmp, sizeof tmp, "%.*g", prec, v);
      if (strtod(tmp, NULL) == v) {
        memcpy(buf, tmp, sizeof tmp);
        break;
      }
    }
    if (!strpbrk(buf, ".en")) strcat(buf, ".0");
    putf(T, "T.float64(%s)", buf);
  }
}

void leir__tir_put_int64(tir *T, int64_t v) {
  if (v == INT64_MIN)
    put(T, "T.int64(-9223372036854775808)");
  else
    putf(T, "T.int64(%" PRId64 ")", v);
}

/* ---- precedence (Python's, which LEIR's arithmetic shares) --------------- */

static int binary_prec(leir_op op) {
  switch (op) {
    case LEIR_OP_ADD:
    case LEIR_OP_SUB: return PREC_ADD;
    case LEIR_OP_POW: return PREC_POW;
    default: return PREC_MUL;
  }
}

/* ---- index expressions (int32 loop variables, TVM floordiv/floormod) ----- */

static void emit_cond(tir *T, const leir_expr *e, int ctx);

/* Prints an integer index expression; `ctx` is the precedence the context
 * requires (parentheses when the expression binds looser). */
static void emit_index(tir *T, const leir_expr *e, int ctx) {
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER:
      if (e->u.num->is_int)
        putf(T, "%" PRId64, e->u.num->ival);
      else
        putf(T, "%" PRId64, leir_f64_to_i64(e->u.num->value));
      return;
    case LEIR_EXPR_VAR: leir__tir_put_loopvar(T, e->sym); return;
    case LEIR_EXPR_TENSOR: {
      uint32_t b = T->a->expr_buffer[e->id];
      bool i32 = T->a->buffers[b].dtype == LEIR_I32;
      if (!i32) put(T, "T.Cast(\"int32\", ");
      leir__tir_emit_tensor(T, e);
      if (!i32) put(T, ")");
      return;
    }
    case LEIR_EXPR_PAREN: emit_index(T, e->kids[0], ctx); return;
    case LEIR_EXPR_NEG:
      if (ctx > PREC_UNARY) put(T, "(");
      put(T, "-");
      emit_index(T, e->kids[0], PREC_UNARY);
      if (ctx > PREC_UNARY) put(T, ")");
      return;
    case LEIR_EXPR_BINARY: {
      const char *op = NULL;
      switch ((leir_op)e->op) {
        case LEIR_OP_ADD: op = " + "; break;
        case LEIR_OP_SUB: op = " - "; break;
        case LEIR_OP_MUL: op = " * "; break;
        case LEIR_OP_FLOORDIV:
        case LEIR_OP_DIV: op = " // "; break;
        case LEIR_OP_MOD: op = " % "; break;
        default: break;
      }
      if (!op) break;
      int prec = binary_prec((leir_op)e->op);
      if (ctx > prec) put(T, "(");
      emit_index(T, e->kids[0], prec);
      put(T, op);
      emit_index(T, e->kids[1], prec + 1);
      if (ctx > prec) put(T, ")");
      return;
    }
    default: break;
  }
  /* anything else (not produced by the grammar of indices): the value form */
  put(T, "T.Cast(\"int32\", ");
  leir__tir_emit_value(T, e, LEIR__CT_I64, 0);
  put(T, ")");
}

void leir__tir_emit_tensor(tir *T, const leir_expr *t) {
  uint32_t b = T->a->expr_buffer[t->id];
  if (b == LEIR__NONE) {
    T->failed = true;
    return;
  }
  put(T, T->bufnames[b]);
  put(T, "[");
  if (t->n == 0) put(T, "()");
  for (uint32_t k = 0; k < t->n; k++) {
    if (k) put(T, ", ");
    emit_index(T, t->kids[k], 0);
  }
  put(T, "]");
}

/* ---- values --------------------------------------------------------------- */

static void emit_load(tir *T, const leir_expr *t, leir__ctype ct) {
  uint32_t b = T->a->expr_buffer[t->id];
  if (b == LEIR__NONE) {
    T->failed = true;
    return;
  }
  const char *want = ct_dtype(ct);
  const char *have = tvm_dtype((leir_dtype)T->a->buffers[b].dtype);
  bool cast = strcmp(want, have) != 0;
  if (cast) putf(T, "T.Cast(\"%s\", ", want);
  leir__tir_emit_tensor(T, t);
  if (cast) put(T, ")");
}

static void emit_call1(tir *T, const char *fn, const leir_expr *arg, leir__ctype ct) {
  putf(T, "%s(", fn);
  leir__tir_emit_value(T, arg, ct, 0);
  put(T, ")");
}

void leir__tir_emit_value(tir *T, const leir_expr *e, leir__ctype ct, int ctx) {
  bool i64 = ct == LEIR__CT_I64;
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER:
      if (i64)
        leir__tir_put_int64(T, e->u.num->is_int ? e->u.num->ival : leir_f64_to_i64(e->u.num->value));
      else
        leir__tir_put_float(T, e->u.num->value, ct);
      return;
    case LEIR_EXPR_INF:
      if (i64)
        leir__tir_put_int64(T, leir_f64_to_i64(INFINITY));
      else
        leir__tir_put_float(T, INFINITY, ct);
      return;
    case LEIR_EXPR_VAR:
      putf(T, "T.Cast(\"%s\", ", ct_dtype(ct));
      leir__tir_put_loopvar(T, e->sym);
      put(T, ")");
      return;
    case LEIR_EXPR_TENSOR: emit_load(T, e, ct); return;
    case LEIR_EXPR_PAREN: leir__tir_emit_value(T, e->kids[0], ct, ctx); return;
    case LEIR_EXPR_NEG:
      if (ctx > PREC_UNARY) put(T, "(");
      put(T, "-");
      leir__tir_emit_value(T, e->kids[0], ct, PREC_UNARY);
      if (ctx > PREC_UNARY) put(T, ")");
      return;
    case LEIR_EXPR_BINARY: {
      const char *op = NULL, *fn = NULL;
      switch ((leir_op)e->op) {
        case LEIR_OP_ADD: op = " + "; break;
        case LEIR_OP_SUB: op = " - "; break;
        case LEIR_OP_MUL: op = " * "; break;
        case LEIR_OP_DIV: i64 ? (fn = "T.floordiv") : (op = " / "); break;
        case LEIR_OP_FLOORDIV: i64 ? (fn = "T.floordiv") : (fn = "floor"); break;
        case LEIR_OP_MOD: fn = "T.floormod"; break;
        case LEIR_OP_POW: fn = "T.pow"; break;
        default: T->failed = true; return;
      }
      if (op) {
        int prec = binary_prec((leir_op)e->op);
        if (ctx > prec) put(T, "(");
        leir__tir_emit_value(T, e->kids[0], ct, prec);
        put(T, op);
        leir__tir_emit_value(T, e->kids[1], ct, prec + 1);
        if (ctx > prec) put(T, ")");
      } else if (strcmp(fn, "floor") == 0) {
        /* float //: floor(a / b) */
        put(T, "T.floor(");
        leir__tir_emit_value(T, e->kids[0], ct, PREC_MUL);
        put(T, " / ");
        leir__tir_emit_value(T, e->kids[1], ct, PREC_MUL + 1);
        put(T, ")");
      } else if (i64 && e->op == LEIR_OP_POW) {
        /* integer power through double (exact for the magnitudes that fit) */
        put(T, "T.Cast(\"int64\", T.pow(");
        leir__tir_emit_value(T, e->kids[0], LEIR__CT_F64, 0);
        put(T, ", ");
        leir__tir_emit_value(T, e->kids[1], LEIR__CT_F64, 0);
        put(T, "))");
      } else {
        putf(T, "%s(", fn);
        leir__tir_emit_value(T, e->kids[0], ct, 0);
        put(T, ", ");
        leir__tir_emit_value(T, e->kids[1], ct, 0);
        put(T, ")");
      }
      return;
    }
    case LEIR_EXPR_CALL: {
      const char *fn = NULL;
      switch ((leir_op)e->op) {
        case LEIR_OP_EXP: fn = "T.exp"; break;
        case LEIR_OP_LOG: fn = "T.log"; break;
        case LEIR_OP_SQRT: fn = "T.sqrt"; break;
        case LEIR_OP_ERF: fn = "T.erf"; break;
        case LEIR_OP_ABS: fn = "T.abs"; break;
        case LEIR_OP_MAX:
        case LEIR_OP_MIN: {
          const char *f2 = e->op == LEIR_OP_MAX ? "T.max(" : "T.min(";
          for (uint32_t k = 1; k < e->n; k++) put(T, f2);
          leir__tir_emit_value(T, e->kids[0], ct, 0);
          for (uint32_t k = 1; k < e->n; k++) {
            put(T, ", ");
            leir__tir_emit_value(T, e->kids[k], ct, 0);
            put(T, ")");
          }
          return;
        }
        case LEIR_OP_IF_THEN_ELSE:
          put(T, "T.if_then_else(");
          emit_cond(T, e->kids[0], 0);
          put(T, ", ");
          leir__tir_emit_value(T, e->kids[1], ct, 0);
          put(T, ", ");
          leir__tir_emit_value(T, e->kids[2], ct, 0);
          put(T, ")");
          return;
        default: T->failed = true; return;
      }
      if (i64 && e->op != LEIR_OP_ABS) {
        /* transcendental functions of integers: in double, converted back */
        putf(T, "T.Cast(\"int64\", %s(", fn);
        leir__tir_emit_value(T, e->kids[0], LEIR__CT_F64, 0);
        put(T, "))");
      } else {
        emit_call1(T, fn, e->kids[0], ct);
      }
      return;
    }
    case LEIR_EXPR_COMPARE:
    case LEIR_EXPR_AND:
    case LEIR_EXPR_OR:
      /* a condition in value position (`(a<2) < 1`, backends/semantics.h):
       * 1 when true, 0 when false, in the computation type */
      putf(T, "T.Cast(\"%s\", ", ct_dtype(ct));
      emit_cond(T, e, 0);
      put(T, ")");
      return;
    default: T->failed = true; return;
  }
}

static bool has_tensor(const leir_expr *e) {
  if (e->kind == LEIR_EXPR_TENSOR) return true;
  for (uint32_t k = 0; k < e->n; k++)
    if (has_tensor(e->kids[k])) return true;
  return false;
}

/* A comparison operand: integer chains free of tensor reads stay in the
 * index form (int32 loop variables, raw literals), like TVM's own guards. */
static void emit_operand(tir *T, const leir_expr *e, leir__ctype ct, bool index_form) {
  if (index_form)
    emit_index(T, e, PREC_ADD);
  else
    leir__tir_emit_value(T, e, ct, PREC_ADD);
}

/* An operand cheap and pure enough to write twice. */
static bool leaf_operand(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e->kind == LEIR_EXPR_NUMBER || e->kind == LEIR_EXPR_INF || e->kind == LEIR_EXPR_VAR;
}

static const char *cmp_op(leir_op op) {
  switch (op) {
    case LEIR_OP_LT: return " < ";
    case LEIR_OP_LE: return " <= ";
    case LEIR_OP_GT: return " > ";
    case LEIR_OP_GE: return " >= ";
    case LEIR_OP_EQ: return " == ";
    default: return " != ";
  }
}

/* Conditions: `ctx` 2 inside `and`, 1 inside `or`, 0 at the top. */
static void emit_cond(tir *T, const leir_expr *e, int ctx) {
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_AND:
    case LEIR_EXPR_OR: {
      int prec = e->kind == LEIR_EXPR_AND ? 2 : 1;
      if (ctx > prec) put(T, "(");
      emit_cond(T, e->kids[0], prec);
      put(T, e->kind == LEIR_EXPR_AND ? " and " : " or ");
      emit_cond(T, e->kids[1], prec + 1);
      if (ctx > prec) put(T, ")");
      return;
    }
    case LEIR_EXPR_PAREN: {
      const leir_expr *in = e->kids[0];
      if (in->kind == LEIR_EXPR_COMPARE || in->kind == LEIR_EXPR_AND ||
          in->kind == LEIR_EXPR_OR || in->kind == LEIR_EXPR_PAREN) {
        emit_cond(T, in, ctx);
        return;
      }
      break;
    }
    case LEIR_EXPR_COMPARE: {
      /* a < b < c is `a < b and b < c`; a middle operand that is not a
       * leaf is bound once with T.Let instead of being written twice, so
       * the text grows linearly with nested chains (as in the C and CUDA
       * lowerings, backends/c_expr.c): a < (b) < c ->
       * T.Let(a < leir_c0 and leir_c0 < c, where={leir_c0: b}). Each Let
       * opens at the comparison that first uses its variable; the values
       * are written, innermost first, where the Lets close. */
      leir__ctype ct = leir__cond_ctype(e);
      bool index_form = ct == LEIR__CT_I64 && !has_tensor(e);
      bool chain = e->n > 2;
      if (chain && ctx > 2) put(T, "(");
      uint32_t first_let = T->nlets, prev = UINT32_MAX;
      const leir_expr **bound = malloc(e->n * sizeof *bound);
      uint32_t nbound = 0;
      if (!bound) {
        T->failed = true;
        return;
      }
      for (uint32_t k = 0; k + 1 < e->n; k++) {
        if (k) put(T, " and ");
        const leir_expr *r = e->kids[k + 1];
        uint32_t let = UINT32_MAX;
        if (k + 2 < e->n && !leaf_operand(r)) {
          let = T->nlets++;
          bound[nbound++] = r;
          leir__sb_printf(&T->decls, "    leir_c%u = T.%s()\n", let,
                          index_form ? "int32" : ct_dtype(ct));
          put(T, "T.Let(");
        }
        if (prev != UINT32_MAX)
          putf(T, "leir_c%u", prev);
        else
          emit_operand(T, e->kids[k], ct, index_form);
        put(T, cmp_op((leir_op)e->u.cmp_ops[k]));
        if (let != UINT32_MAX)
          putf(T, "leir_c%u", let);
        else
          emit_operand(T, r, ct, index_form);
        prev = let;
      }
      for (uint32_t i = nbound; i-- > 0;) {
        putf(T, ", where={leir_c%u: ", first_let + i);
        if (index_form)
          emit_index(T, bound[i], 0);
        else
          leir__tir_emit_value(T, bound[i], ct, 0);
        put(T, "})");
      }
      free(bound);
      if (chain && ctx > 2) put(T, ")");
      return;
    }
    default: break;
  }
  leir__ctype ct = leir__cond_ctype(e);
  leir__tir_emit_value(T, e, ct, PREC_ADD);
  put(T, " != ");
  if (ct == LEIR__CT_I64)
    leir__tir_put_int64(T, 0);
  else
    leir__tir_put_float(T, 0.0, ct);
}

