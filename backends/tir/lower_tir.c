/*
 * LEIR -> TVM TIR as TVMScript text (include/leir/tir.h, docs/tir.md).
 *
 * The text follows backends/semantics.h so that TVM computes what the
 * interpreter computes:
 *  - one @T.prim_func; parameters = signature, intermediates = T.alloc_buffer
 *    (one per analysis buffer; a re-allocated name gets a _N suffix);
 *  - top-level nests in order; before each, explicit loops set the identity
 *    of every element an implicit-init equation writes (spec §3.4; the same
 *    as TVM's T.init where T.init applies, and right where it would not,
 *    e.g. a left-hand subscript a//2);
 *  - a nest's items in text order inside its innermost loop (per-iteration
 *    interleaving), nested nests as deeper loops;
 *  - each equation computes in its left-hand computation type (float32,
 *    float64 or int64): reads, loop variables and literals are converted to
 *    it, and the store converts to the buffer dtype (bool: != 0);
 *  - P/V/B annotations only where the loop's iterations are independent
 *    (leir__loop_independent) and TVM accepts them (no parallel inside
 *    parallel; a thread axis bound once per nest, in its header); otherwise
 *    the loop is T.serial.
 * Index expressions keep TVM's int32 loop variables: `//` and `%` on them
 * are TVM's floordiv/floormod, LEIR's semantics.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "error.h"
#include "leir/tir.h"
#include "prelude.h"
#include "semantics.h"
#include "strbuf.h"

typedef struct tir {
  const leir__analysis *a;
  const leir_program *p;
  uint32_t flags;
  leir__strbuf *out;
  char **bufnames; /* by buffer */
  bool failed;
  /* per top-level nest: thread axes already bound (tx..tz, bx..bz) */
  bool axis_used[6];
  uint32_t parallel_depth;
  uint32_t base;     /* extra indentation: 1 inside the root block */
  bool in_block;     /* LEIR_TIR_BLOCKS: inside a block, loop variables read as v_NAME */
  uint32_t *nblocks; /* by buffer: blocks named after it so far */
  /* the variables of T.Let bindings (chained comparisons), declared at the
   * top of the function body: "    leir_cN = T.float64()\n" */
  leir__strbuf decls;
  uint32_t nlets;
} tir;

static void put(tir *T, const char *s) { leir__sb_puts(T->out, s); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void putf(tir *T, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  leir__sb_vprintf(T->out, fmt, ap);
  va_end(ap);
}

static void indent(tir *T, uint32_t depth) {
  for (uint32_t i = 0; i < depth + T->base; i++) put(T, "    ");
}

static const char *tvm_dtype(leir_dtype dt) {
  static const char *const names[] = {"float16", "bfloat16", "float32", "float64", "int8",
                                      "int16",   "int32",    "int64",   "uint8",   "bool"};
  return (unsigned)dt < LEIR_DTYPE_COUNT ? names[dt] : "float64";
}

static const char *ct_dtype(leir__ctype ct) {
  return ct == LEIR__CT_F32 ? "float32" : ct == LEIR__CT_F64 ? "float64" : "int64";
}

/* Python keywords are renamed with a trailing underscore (loop variables
 * are lower case, so only these can clash). */
static bool is_keyword(const char *s) {
  static const char *const kw[] = {
      "and",      "as",     "assert", "async", "await",  "break",  "class", "continue",
      "def",      "del",    "elif",   "else",  "except", "finally", "for",  "from",
      "global",   "if",     "import", "in",    "is",     "lambda", "nonlocal", "not",
      "or",       "pass",   "raise",  "return", "try",   "while",  "with",  "yield"};
  for (size_t k = 0; k < sizeof kw / sizeof kw[0]; k++)
    if (strcmp(s, kw[k]) == 0) return true;
  return false;
}

static void put_loopvar(tir *T, uint32_t sym) {
  const char *v = leir__sym_name(T->p, sym);
  if (T->in_block) {
    put(T, "v_");
    put(T, v);
    return;
  }
  put(T, v);
  if (is_keyword(v)) put(T, "_");
}

static void put_loopvar_outside(tir *T, uint32_t sym) {
  bool b = T->in_block;
  T->in_block = false;
  put_loopvar(T, sym);
  T->in_block = b;
}

/* ---- constants ----------------------------------------------------------- */

static void put_float(tir *T, double v, leir__ctype ct) {
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

static void put_int64(tir *T, int64_t v) {
  if (v == INT64_MIN)
    put(T, "T.int64(-9223372036854775808)");
  else
    putf(T, "T.int64(%" PRId64 ")", v);
}

/* ---- precedence (Python's, which LEIR's arithmetic shares) --------------- */

enum { PREC_ATOM = 100, PREC_POW = 60, PREC_UNARY = 50, PREC_MUL = 40, PREC_ADD = 30 };

static int binary_prec(leir_op op) {
  switch (op) {
    case LEIR_OP_ADD:
    case LEIR_OP_SUB: return PREC_ADD;
    case LEIR_OP_POW: return PREC_POW;
    default: return PREC_MUL;
  }
}

/* ---- index expressions (int32 loop variables, TVM floordiv/floormod) ----- */

static void emit_value(tir *T, const leir_expr *e, leir__ctype ct, int ctx);
static void emit_cond(tir *T, const leir_expr *e, int ctx);

static void emit_tensor(tir *T, const leir_expr *t);

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
    case LEIR_EXPR_VAR: put_loopvar(T, e->sym); return;
    case LEIR_EXPR_TENSOR: {
      uint32_t b = T->a->expr_buffer[e->id];
      bool i32 = T->a->buffers[b].dtype == LEIR_I32;
      if (!i32) put(T, "T.Cast(\"int32\", ");
      emit_tensor(T, e);
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
  emit_value(T, e, LEIR__CT_I64, 0);
  put(T, ")");
}

static void emit_tensor(tir *T, const leir_expr *t) {
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
  emit_tensor(T, t);
  if (cast) put(T, ")");
}

static void emit_call1(tir *T, const char *fn, const leir_expr *arg, leir__ctype ct) {
  putf(T, "%s(", fn);
  emit_value(T, arg, ct, 0);
  put(T, ")");
}

static void emit_value(tir *T, const leir_expr *e, leir__ctype ct, int ctx) {
  bool i64 = ct == LEIR__CT_I64;
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER:
      if (i64)
        put_int64(T, e->u.num->is_int ? e->u.num->ival : leir_f64_to_i64(e->u.num->value));
      else
        put_float(T, e->u.num->value, ct);
      return;
    case LEIR_EXPR_INF:
      if (i64)
        put_int64(T, leir_f64_to_i64(INFINITY));
      else
        put_float(T, INFINITY, ct);
      return;
    case LEIR_EXPR_VAR:
      putf(T, "T.Cast(\"%s\", ", ct_dtype(ct));
      put_loopvar(T, e->sym);
      put(T, ")");
      return;
    case LEIR_EXPR_TENSOR: emit_load(T, e, ct); return;
    case LEIR_EXPR_PAREN: emit_value(T, e->kids[0], ct, ctx); return;
    case LEIR_EXPR_NEG:
      if (ctx > PREC_UNARY) put(T, "(");
      put(T, "-");
      emit_value(T, e->kids[0], ct, PREC_UNARY);
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
        emit_value(T, e->kids[0], ct, prec);
        put(T, op);
        emit_value(T, e->kids[1], ct, prec + 1);
        if (ctx > prec) put(T, ")");
      } else if (strcmp(fn, "floor") == 0) {
        /* float //: floor(a / b) */
        put(T, "T.floor(");
        emit_value(T, e->kids[0], ct, PREC_MUL);
        put(T, " / ");
        emit_value(T, e->kids[1], ct, PREC_MUL + 1);
        put(T, ")");
      } else if (i64 && e->op == LEIR_OP_POW) {
        /* integer power through double (exact for the magnitudes that fit) */
        put(T, "T.Cast(\"int64\", T.pow(");
        emit_value(T, e->kids[0], LEIR__CT_F64, 0);
        put(T, ", ");
        emit_value(T, e->kids[1], LEIR__CT_F64, 0);
        put(T, "))");
      } else {
        putf(T, "%s(", fn);
        emit_value(T, e->kids[0], ct, 0);
        put(T, ", ");
        emit_value(T, e->kids[1], ct, 0);
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
          emit_value(T, e->kids[0], ct, 0);
          for (uint32_t k = 1; k < e->n; k++) {
            put(T, ", ");
            emit_value(T, e->kids[k], ct, 0);
            put(T, ")");
          }
          return;
        }
        case LEIR_OP_IF_THEN_ELSE:
          put(T, "T.if_then_else(");
          emit_cond(T, e->kids[0], 0);
          put(T, ", ");
          emit_value(T, e->kids[1], ct, 0);
          put(T, ", ");
          emit_value(T, e->kids[2], ct, 0);
          put(T, ")");
          return;
        default: T->failed = true; return;
      }
      if (i64 && e->op != LEIR_OP_ABS) {
        /* transcendental functions of integers: in double, converted back */
        putf(T, "T.Cast(\"int64\", %s(", fn);
        emit_value(T, e->kids[0], LEIR__CT_F64, 0);
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
    emit_value(T, e, ct, PREC_ADD);
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
          emit_value(T, bound[i], ct, 0);
        put(T, "})");
      }
      free(bound);
      if (chain && ctx > 2) put(T, ")");
      return;
    }
    default: break;
  }
  leir__ctype ct = leir__cond_ctype(e);
  emit_value(T, e, ct, PREC_ADD);
  put(T, " != ");
  if (ct == LEIR__CT_I64)
    put_int64(T, 0);
  else
    put_float(T, 0.0, ct);
}

/* ---- statements ----------------------------------------------------------- */

/* X[...] = value converted to X's dtype. */
static void emit_store_begin(tir *T, const leir_expr *lhs, leir__ctype ct, bool *close) {
  uint32_t b = T->a->expr_buffer[lhs->id];
  if (b == LEIR__NONE) {
    T->failed = true;
    *close = false;
    return;
  }
  leir_dtype dt = (leir_dtype)T->a->buffers[b].dtype;
  emit_tensor(T, lhs);
  put(T, " = ");
  *close = false;
  if (dt != LEIR_BOOL && strcmp(tvm_dtype(dt), ct_dtype(ct)) != 0) {
    putf(T, "T.Cast(\"%s\", ", tvm_dtype(dt));
    *close = true;
  }
}

static void emit_store_end(tir *T, const leir_expr *lhs, leir__ctype ct, bool close) {
  uint32_t b = T->a->expr_buffer[lhs->id];
  if (b != LEIR__NONE && T->a->buffers[b].dtype == LEIR_BOOL) {
    put(T, " != ");
    if (ct == LEIR__CT_I64)
      put_int64(T, 0);
    else
      put_float(T, 0.0, ct);
  }
  if (close) put(T, ")");
  put(T, "\n");
}

static void used_vars(const leir__analysis *a, const leir_expr *e, bool *used);

/* LEIR_TIR_BLOCKS: `with T.block("X"):` and the block variables of the
 * loops the equation uses (S: in the left-hand subscript, R: the others),
 * outermost first. Returns the depth of the block's body. */
static uint32_t open_block(tir *T, const leir__eqinfo *info, uint32_t depth, bool all_spatial) {
  if (!(T->flags & LEIR_TIR_BLOCKS)) return depth;
  const leir_expr *lhs = info->eq->lhs;
  uint32_t b = T->a->expr_buffer[lhs->id];
  bool in_lhs[LEIR__MAX_LOOPS] = {false}, used[LEIR__MAX_LOOPS] = {false};
  for (uint32_t k = 0; k < lhs->n; k++) used_vars(T->a, lhs->kids[k], in_lhs);
  used_vars(T->a, lhs, used);
  if (!all_spatial) used_vars(T->a, info->eq->rhs, used);
  indent(T, depth);
  put(T, "with T.sblock(\"");
  if (b != LEIR__NONE) {
    put(T, T->bufnames[b]);
    if (T->nblocks[b]) putf(T, "_%u", T->nblocks[b]);
    T->nblocks[b]++;
  }
  put(T, "\"):\n");
  uint32_t nused = 0;
  for (uint32_t d = 0; d < info->nloops && d < LEIR__MAX_LOOPS; d++) nused += used[d];
  if (nused) {
    indent(T, depth + 1);
    T->in_block = true;
    bool first = true;
    for (uint32_t d = 0; d < info->nloops && d < LEIR__MAX_LOOPS; d++) {
      if (!used[d]) continue;
      if (!first) put(T, ", ");
      put_loopvar(T, info->loops[d]->sym);
      first = false;
    }
    put(T, " = T.axis.remap(\"");
    for (uint32_t d = 0; d < info->nloops && d < LEIR__MAX_LOOPS; d++)
      if (used[d]) put(T, in_lhs[d] || all_spatial ? "S" : "R");
    put(T, "\", [");
    first = true;
    for (uint32_t d = 0; d < info->nloops && d < LEIR__MAX_LOOPS; d++) {
      if (!used[d]) continue;
      if (!first) put(T, ", ");
      put_loopvar_outside(T, info->loops[d]->sym);
      first = false;
    }
    put(T, "])\n");
  }
  T->in_block = true;
  return depth + 1;
}

static void emit_equation(tir *T, const leir__eqinfo *info, uint32_t depth) {
  depth = open_block(T, info, depth, false);
  const leir_expr *lhs = info->eq->lhs;
  leir__ctype ct = leir__ctype_of((leir_dtype)lhs->dtype);
  uint32_t b = T->a->expr_buffer[lhs->id];
  bool is_bool = b != LEIR__NONE && T->a->buffers[b].dtype == LEIR_BOOL;
  bool close;
  indent(T, depth);
  emit_store_begin(T, lhs, ct, &close);
  /* a bool store compares the whole value: bind looser than `!=` */
  emit_value(T, info->eq->rhs, ct, is_bool ? PREC_ADD : 0);
  emit_store_end(T, lhs, ct, close);
  T->in_block = false;
}

static void used_vars(const leir__analysis *a, const leir_expr *e, bool *used) {
  if (e->kind == LEIR_EXPR_VAR && a->expr_loop[e->id] < LEIR__MAX_LOOPS)
    used[a->expr_loop[e->id]] = true;
  for (uint32_t k = 0; k < e->n; k++) used_vars(a, e->kids[k], used);
}

/* The implicit initialization of one equation: the identity stored in
 * every element its left-hand subscript reaches (the loops it uses). */
static void emit_init(tir *T, const leir__eqinfo *info) {
  const leir_expr *lhs = info->eq->lhs;
  bool used[LEIR__MAX_LOOPS] = {false};
  for (uint32_t k = 0; k < lhs->n; k++) used_vars(T->a, lhs->kids[k], used);
  leir_dtype dt = (leir_dtype)lhs->dtype;
  leir__ctype ct = leir__ctype_of(dt);
  leir__init_kind kind = (leir__init_kind)info->init;
  uint32_t depth = 1;
  for (uint32_t d = 0; d < info->nloops && d < LEIR__MAX_LOOPS; d++) {
    if (!used[d]) continue;
    indent(T, depth++);
    put(T, "for ");
    put_loopvar(T, info->loops[d]->sym);
    putf(T, " in T.serial(%" PRId64 "):\n", info->loops[d]->extent);
  }
  bool close;
  depth = open_block(T, info, depth, true);
  indent(T, depth);
  emit_store_begin(T, lhs, ct, &close);
  if (ct == LEIR__CT_I64)
    put_int64(T, leir__init_value_i64(kind, dt));
  else
    put_float(T, leir__init_value_f64(kind), ct);
  emit_store_end(T, lhs, ct, close);
  T->in_block = false;
}

static int axis_of(const leir_program *p, uint32_t sym) {
  const char *v = leir__sym_name(p, sym);
  if ((v[0] != 't' && v[0] != 'b') || v[1] < 'x' || v[1] > 'z') return -1;
  return (v[0] == 'b' ? 3 : 0) + (v[1] - 'x');
}

static void emit_nest(tir *T, const leir_nest *n, uint32_t depth, bool top);

static void emit_body(tir *T, const leir_nest *n, uint32_t depth) {
  for (uint32_t i = 0; i < n->nitems; i++) {
    if (n->items[i].eq) {
      uint32_t ei = T->a->eq_index[n->items[i].eq->id];
      if (ei == LEIR__NONE) {
        T->failed = true;
        return;
      }
      emit_equation(T, &T->a->eqs[ei], depth);
    } else {
      emit_nest(T, n->items[i].nest, depth, false);
    }
  }
}

static void emit_nest(tir *T, const leir_nest *n, uint32_t depth, bool top) {
  static const char *const thread_tags[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z",
                                            "blockIdx.x",  "blockIdx.y",  "blockIdx.z"};
  uint32_t entered_parallel = 0;
  uint32_t k = 0;
  while (k < n->nloops) {
    const leir__loop *l = &n->loops[k];
    indent(T, depth++);
    /* a run of serial loops is one T.grid */
    uint32_t run = 0;
    while (k + run < n->nloops && n->loops[k + run].kind == LEIR_LOOP_SERIAL) run++;
    if (run >= 2) {
      put(T, "for ");
      for (uint32_t j = 0; j < run; j++) {
        if (j) put(T, ", ");
        put_loopvar(T, n->loops[k + j].sym);
      }
      put(T, " in T.grid(");
      for (uint32_t j = 0; j < run; j++)
        putf(T, "%s%" PRId64, j ? ", " : "", n->loops[k + j].extent);
      put(T, "):\n");
      k += run;
      continue;
    }
    bool indep = l->kind != LEIR_LOOP_SERIAL && l->kind != LEIR_LOOP_UNROLLED &&
                 leir__loop_independent(T->a, n, k, NULL, 0);
    put(T, "for ");
    put_loopvar(T, l->sym);
    put(T, " in ");
    switch ((leir_loop_kind)l->kind) {
      case LEIR_LOOP_PARALLEL:
        if (indep && T->parallel_depth == 0) {
          putf(T, "T.parallel(%" PRId64 "):\n", l->extent);
          T->parallel_depth++;
          entered_parallel++;
        } else {
          putf(T, "T.serial(%" PRId64 "):\n", l->extent);
        }
        break;
      case LEIR_LOOP_VECTORIZED:
        putf(T, "%s(%" PRId64 "):\n", indep ? "T.vectorized" : "T.serial", l->extent);
        break;
      case LEIR_LOOP_UNROLLED: putf(T, "T.unroll(%" PRId64 "):\n", l->extent); break;
      case LEIR_LOOP_BOUND: {
        int ax = axis_of(T->p, l->sym);
        if (!(T->flags & LEIR_TIR_BIND_SERIAL) && indep && top && ax >= 0 && !T->axis_used[ax]) {
          T->axis_used[ax] = true;
          putf(T, "T.thread_binding(%" PRId64 ", thread=\"%s\"):\n", l->extent, thread_tags[ax]);
        } else {
          putf(T, "T.serial(%" PRId64 "):\n", l->extent);
        }
        break;
      }
      default: putf(T, "T.serial(%" PRId64 "):\n", l->extent); break;
    }
    k++;
  }
  emit_body(T, n, depth);
  T->parallel_depth -= entered_parallel;
}

/* ---- the function --------------------------------------------------------- */

static void put_shape(tir *T, const leir__buffer *b) {
  put(T, "(");
  for (uint32_t k = 0; k < b->rank; k++) putf(T, "%s%" PRId64, k ? ", " : "", b->shape[k]);
  if (b->rank == 1) put(T, ",");
  put(T, ")");
}

static leir_status name_buffers(tir *T) {
  const leir__analysis *a = T->a;
  T->bufnames = calloc(a->nbuffers ? a->nbuffers : 1, sizeof *T->bufnames);
  T->nblocks = calloc(a->nbuffers ? a->nbuffers : 1, sizeof *T->nblocks);
  if (!T->bufnames || !T->nblocks) return leir__error_nomem();
  for (uint32_t b = 0; b < a->nbuffers; b++) {
    const char *base = leir__sym_name(T->p, a->buffers[b].sym);
    uint32_t seen = 0;
    for (uint32_t k = 0; k < b; k++)
      if (a->buffers[k].sym == a->buffers[b].sym) seen++;
    size_t n = strlen(base) + 16;
    T->bufnames[b] = malloc(n);
    if (!T->bufnames[b]) return leir__error_nomem();
    if (seen)
      snprintf(T->bufnames[b], n, "%s_%u", base, seen);
    else
      snprintf(T->bufnames[b], n, "%s", base);
  }
  return LEIR_OK;
}

static bool valid_func_name(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 64 || is_keyword(s) || strcmp(s, "T") == 0) return false;
  if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
    return false;
  for (size_t k = 0; k < n; k++)
    if (!((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z') ||
          (s[k] >= '0' && s[k] <= '9') || s[k] == '_'))
      return false;
  return true;
}

void leir_tir_options_init(leir_tir_options *opts) {
  if (!opts) return;
  leir_tir_options d = LEIR_TIR_OPTIONS_INIT;
  *opts = d;
}

leir_status leir_lower_tir(const leir_program *program, const leir_tir_options *opts, char **out,
                           size_t *len) {
  if (out) *out = NULL;
  if (len) *len = 0;
  if (!program || !out) return leir__error_arg(NULL, "NULL argument");
  leir_tir_options o = LEIR_TIR_OPTIONS_INIT;
  if (opts) {
    if (opts->size < offsetof(leir_tir_options, flags) + sizeof opts->flags)
      return leir__error_arg(NULL, "leir_tir_options.size is too small (use LEIR_TIR_OPTIONS_INIT)");
    o.flags = opts->flags;
    if (opts->size >= offsetof(leir_tir_options, func_name) + sizeof opts->func_name)
      o.func_name = opts->func_name;
  }
  const char *fname = o.func_name ? o.func_name : "main";
  if (!valid_func_name(fname))
    return leir__error_arg(NULL, "func_name must be a Python identifier of at most 64 characters, not a "
                       "keyword");
  leir__analysis *a = NULL;
  leir_status st = leir__analyze_program(program, NULL, &a);
  if (st != LEIR_OK) return st;
  leir__strbuf text = LEIR__STRBUF_INIT;
  size_t decls_at = 0;
  tir T;
  memset(&T, 0, sizeof T);
  T.a = a;
  T.p = program;
  T.flags = o.flags;
  T.out = &text;
  st = name_buffers(&T);
  if (st == LEIR_OK) {
    if (!(o.flags & LEIR_TIR_NO_IMPORT)) put(&T, "# from tvm.script import tir as T\n\n");
    putf(&T, "@T.prim_func%s\ndef %s(", o.flags & LEIR_TIR_BLOCKS ? "(s_tir=True)" : "", fname);
    bool first = true;
    for (uint32_t b = 0; b < a->nbuffers; b++) {
      const leir__buffer *buf = &a->buffers[b];
      if (buf->role == LEIR__BUF_TEMP) continue;
      putf(&T, "%s%s: T.Buffer(", first ? "" : ", ", T.bufnames[b]);
      put_shape(&T, buf);
      putf(&T, ", \"%s\")", tvm_dtype((leir_dtype)buf->dtype));
      first = false;
    }
    put(&T, "):\n    T.func_attr({\"tir.noalias\": True})\n");
    decls_at = text.len;
    if (o.flags & LEIR_TIR_BLOCKS) {
      /* blocks live in a root block, which owns the intermediates */
      put(&T, "    with T.sblock(\"root\"):\n");
      T.base = 1;
    }
    bool *declared = calloc(a->nbuffers ? a->nbuffers : 1, sizeof *declared);
    if (!declared) T.failed = true;
    for (uint32_t t = 0; t < program->nnests && !T.failed; t++) {
      /* intermediates first written in this nest, declared just before it */
      for (uint32_t i = 0; i < a->neqs; i++) {
        if (a->eqs[i].top != t) continue;
        uint32_t b = a->eqs[i].lhs_buffer;
        if (b >= a->nbuffers || declared[b] || a->buffers[b].role != LEIR__BUF_TEMP) continue;
        declared[b] = true;
        const leir__buffer *buf = &a->buffers[b];
        indent(&T, 1);
        putf(&T, "%s = T.alloc_buffer(", T.bufnames[b]);
        put_shape(&T, buf);
        putf(&T, ", \"%s\"", tvm_dtype((leir_dtype)buf->dtype));
        if (!(o.flags & LEIR_TIR_SCOPE_GLOBAL) && buf->scope != LEIR_SCOPE_GLOBAL)
          putf(&T, ", scope=\"%s\"", buf->scope == LEIR_SCOPE_SHARED ? "shared" : "local");
        put(&T, ")\n");
      }
      for (uint32_t i = 0; i < a->neqs; i++)
        if (a->eqs[i].top == t && a->eqs[i].init != LEIR__INIT_NONE) emit_init(&T, &a->eqs[i]);
      memset(T.axis_used, 0, sizeof T.axis_used);
      T.parallel_depth = 0;
      emit_nest(&T, program->nests[t], 1, true);
    }
    free(declared);
  }
  if (st == LEIR_OK && T.decls.len) {
    /* the Let variables, before the body that uses them */
    leir__strbuf whole = LEIR__STRBUF_INIT;
    leir__sb_put(&whole, text.data, decls_at);
    leir__sb_put(&whole, T.decls.data, T.decls.len);
    leir__sb_put(&whole, text.data + decls_at, text.len - decls_at);
    if (T.decls.failed || text.failed) whole.failed = true;
    leir__sb_release(&text);
    text = whole;
  }
  leir__sb_release(&T.decls);
  if (T.bufnames)
    for (uint32_t b = 0; b < a->nbuffers; b++) free(T.bufnames[b]);
  free(T.bufnames);
  free(T.nblocks);
  leir__analysis_free(a);
  if (st != LEIR_OK) {
    leir__sb_release(&text);
    return st;
  }
  if (T.failed && !text.failed) {
    leir__sb_release(&text);
    return leir__error(LEIR_ERR_INTERNAL, "tir.lower", NULL, 0, 0,
                       "the TIR lowering met an expression it cannot translate");
  }
  size_t n = 0;
  char *s = leir__sb_finish(&text, &n);
  if (!s) return leir__error_nomem();
  *out = s;
  if (len) *len = n;
  return LEIR_OK;
}
