/*
 * LEIR -> C (one function per program) following backends/semantics.h, so
 * that the compiled code computes exactly what the interpreter computes:
 *
 *  - top-level nests in order; before each, init loops set the identity of
 *    every element written by its implicit-init equations (spec §3.4),
 *    visiting only the loops that appear in the left-hand subscript;
 *  - loops become `for` loops over int64_t; a nest's items are emitted in
 *    text order inside the innermost loop (per-iteration interleaving);
 *  - P and B loops become `omp parallel for` and V loops `omp simd` only
 *    when their iterations are independent (leir__loop_independent), not
 *    nested in another parallel/simd loop, and, for parallel regions, worth
 *    it (enough evaluations per entry); U loops get an unroll pragma;
 *  - every equation evaluates its right side into a typed temporary, then
 *    stores it with the dtype's conversion;
 *  - subscripts that read a tensor (indirect indices) are bounds-checked
 *    through leir_chk, integer division by zero traps through rt->trap.
 */
#include "lower_c.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_text.h"
#include "error.h"
#include "leir/run.h"
#include "prelude.h"
#include "semantics.h"

typedef struct lower {
  const leir__analysis *a;
  const leir_program *p;
  const leir__c_options *o;
  leir__strbuf *out;
  leir__c_site *sites;
  uint32_t nsites, cap_sites;
  bool failed;
  uint64_t unroll; /* product of the unroll factors of the enclosing U loops */
  leir__env env; /* full loop ranges of the equation being emitted */
} lower;

/* Product of unroll factors along one loop path, at most: nested full
 * unrolls multiply the compiler's work (U^{64}U^{64}U^{64} asks for 262144
 * copies of the body), so inner U loops get what is left. */
#define MAX_UNROLL_PRODUCT 1024

static void put(lower *L, const char *s) { leir__sb_puts(L->out, s); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void putf(lower *L, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  leir__sb_vprintf(L->out, fmt, ap);
  va_end(ap);
}

static void indent(lower *L, int depth) {
  for (int i = 0; i < depth + 1; i++) put(L, "  ");
}

static int add_site(lower *L, uint8_t kind, uint32_t dim, uint32_t pos, const char *tensor) {
  if (L->nsites == L->cap_sites) {
    uint32_t cap = L->cap_sites ? L->cap_sites * 2 : 16;
    leir__c_site *s = realloc(L->sites, cap * sizeof *s);
    if (!s) {
      L->failed = true;
      return 0;
    }
    L->sites = s;
    L->cap_sites = cap;
  }
  L->sites[L->nsites] = (leir__c_site){kind, dim, pos, tensor};
  return (int)L->nsites++;
}

/* ---- constants ------------------------------------------------------------- */

static void put_i64(lower *L, int64_t v) {
  if (v == INT64_MIN)
    put(L, "(-INT64_C(9223372036854775807)-1)");
  else if (v < 0)
    putf(L, "(-INT64_C(%" PRId64 "))", -v);
  else if (v <= INT32_MAX)
    putf(L, "%" PRId64, v);
  else
    putf(L, "INT64_C(%" PRId64 ")", v);
}

/* A floating constant of the computation type, bit-exact (hex literal). */
static void put_float_const(lower *L, double v, leir__ctype ct) {
  if (ct == LEIR__CT_F32) {
    float f = (float)v;
    if (isnan(f))
      put(L, "((float)NAN)");
    else if (isinf(f))
      put(L, f > 0 ? "((float)INFINITY)" : "(-(float)INFINITY)");
    else
      putf(L, "%s%af", f < 0 ? "-" : "", fabs((double)f));
  } else {
    if (isnan(v))
      put(L, "((double)NAN)");
    else if (isinf(v))
      put(L, v > 0 ? "((double)INFINITY)" : "(-(double)INFINITY)");
    else
      putf(L, "%s%a", v < 0 ? "-" : "", fabs(v));
  }
}

/* ---- expressions ----------------------------------------------------------- */

static void emit_value(lower *L, const leir_expr *e, leir__ctype ct);
static void emit_cond(lower *L, const leir_expr *e);

static bool contains_tensor(const leir_expr *e) {
  if (e->kind == LEIR_EXPR_TENSOR) return true;
  for (uint32_t k = 0; k < e->n; k++)
    if (contains_tensor(e->kids[k])) return true;
  return false;
}

static void emit_var(lower *L, const leir_expr *e) {
  uint32_t slot = L->a->expr_loop[e->id];
  putf(L, "i%u", slot);
}

/* An index expression free of tensor reads whose range is known: plain C
 * int64 arithmetic cannot overflow, and // and % of non-negative operands
 * are C's / and %. */
static void emit_plain_index(lower *L, const leir_expr *e) {
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER: put_i64(L, e->u.num->ival); return;
    case LEIR_EXPR_VAR: emit_var(L, e); return;
    case LEIR_EXPR_PAREN:
      put(L, "(");
      emit_plain_index(L, e->kids[0]);
      put(L, ")");
      return;
    case LEIR_EXPR_NEG:
      put(L, "(-");
      emit_plain_index(L, e->kids[0]);
      put(L, ")");
      return;
    case LEIR_EXPR_BINARY: {
      const char *op = NULL;
      switch ((leir_op)e->op) {
        case LEIR_OP_ADD: op = " + "; break;
        case LEIR_OP_SUB: op = " - "; break;
        case LEIR_OP_MUL: op = " * "; break;
        case LEIR_OP_FLOORDIV:
        case LEIR_OP_MOD: {
          leir__range l = leir__index_range(L->a, e->kids[0], &L->env);
          leir__range r = leir__index_range(L->a, e->kids[1], &L->env);
          if (l.known && r.known && l.lo >= 0 && r.lo > 0) {
            op = e->op == LEIR_OP_MOD ? " % " : " / ";
          } else {
            putf(L, "%s(", e->op == LEIR_OP_MOD ? "leir_floormod_i64" : "leir_floordiv_i64");
            emit_plain_index(L, e->kids[0]);
            put(L, ", ");
            emit_plain_index(L, e->kids[1]);
            put(L, ")");
            return;
          }
          break;
        }
        default: break;
      }
      if (op) {
        put(L, "(");
        emit_plain_index(L, e->kids[0]);
        put(L, op);
        emit_plain_index(L, e->kids[1]);
        put(L, ")");
        return;
      }
      break;
    }
    default: break;
  }
  emit_value(L, e, LEIR__CT_I64); /* anything else: the general form */
}

static void emit_index(lower *L, const leir_expr *e) {
  if (!contains_tensor(e) && leir__index_range(L->a, e, &L->env).known &&
      (e->kind != LEIR_EXPR_NUMBER || e->u.num->is_int))
    emit_plain_index(L, e);
  else
    emit_value(L, e, LEIR__CT_I64);
}

/* bK[flat offset] of a tensor access, with run-time checks where needed. */
static void emit_element(lower *L, const leir_expr *t) {
  uint32_t b = L->a->expr_buffer[t->id];
  const leir__buffer *buf = &L->a->buffers[b];
  putf(L, "b%u[", b);
  if (t->n == 0) put(L, "0");
  for (uint32_t k = 0; k < t->n; k++) put(L, "(");
  for (uint32_t k = 0; k < t->n; k++) {
    if (k) {
      put(L, ") * ");
      put_i64(L, buf->shape[k]);
      put(L, " + ");
    }
    const leir_expr *ix = t->kids[k];
    bool check = L->o->check_all_bounds || contains_tensor(ix);
    if (check) {
      int site = add_site(L, LEIR__TRAP_BOUNDS, k, ix->pos, leir__sym_name(L->p, t->sym));
      put(L, "leir_chk(rt, ");
      emit_index(L, ix);
      put(L, ", ");
      put_i64(L, buf->shape[k]);
      putf(L, ", %d)", site);
    } else {
      emit_index(L, ix);
    }
  }
  if (t->n) put(L, ")");
  put(L, "]");
}

/* A tensor read converted to the computation type. */
static void emit_load(lower *L, const leir_expr *t, leir__ctype ct) {
  uint32_t b = L->a->expr_buffer[t->id];
  leir_dtype dt = (leir_dtype)L->a->buffers[b].dtype;
  const char *pre = "", *post = "";
  switch (dt) {
    case LEIR_F64:
      pre = ct == LEIR__CT_F32 ? "((float)" : ct == LEIR__CT_F64 ? "(" : "leir_f64_to_i64(";
      post = ")";
      break;
    case LEIR_F32:
      pre = ct == LEIR__CT_F32 ? "(" : ct == LEIR__CT_F64 ? "((double)" : "leir_f64_to_i64((double)";
      post = ")";
      break;
    case LEIR_F16:
    case LEIR_BF16: {
      bool h = dt == LEIR_F16;
      pre = ct == LEIR__CT_F32   ? (h ? "leir_f16_to_f32(" : "leir_bf16_to_f32(")
            : ct == LEIR__CT_F64 ? (h ? "((double)leir_f16_to_f32(" : "((double)leir_bf16_to_f32(")
                                 : (h ? "leir_f64_to_i64((double)leir_f16_to_f32("
                                      : "leir_f64_to_i64((double)leir_bf16_to_f32(");
      post = ct == LEIR__CT_F32 ? ")" : "))";
      break;
    }
    case LEIR_BOOL:
      pre = ct == LEIR__CT_F32   ? "((float)(int64_t)("
            : ct == LEIR__CT_F64 ? "((double)(int64_t)("
                                 : "((int64_t)(";
      post = " != 0))";
      break;
    default: /* integers */
      pre = ct == LEIR__CT_F32 ? "((float)(int64_t)" : ct == LEIR__CT_F64 ? "((double)(int64_t)" : "((int64_t)";
      post = ")";
      break;
  }
  put(L, pre);
  emit_element(L, t);
  put(L, post);
}

static void emit_call1(lower *L, const char *fn, const leir_expr *arg, leir__ctype ct) {
  putf(L, "%s(", fn);
  emit_value(L, arg, ct);
  put(L, ")");
}

static void emit_value(lower *L, const leir_expr *e, leir__ctype ct) {
  bool f32 = ct == LEIR__CT_F32, i64 = ct == LEIR__CT_I64;
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER:
      if (i64)
        put_i64(L, e->u.num->is_int ? e->u.num->ival : leir_f64_to_i64(e->u.num->value));
      else
        put_float_const(L, e->u.num->value, ct);
      return;
    case LEIR_EXPR_INF:
      if (i64)
        put_i64(L, leir_f64_to_i64(INFINITY));
      else
        put_float_const(L, INFINITY, ct);
      return;
    case LEIR_EXPR_VAR:
      if (i64) {
        emit_var(L, e);
      } else {
        putf(L, "((%s)", leir__ctext_ctype_name(ct));
        emit_var(L, e);
        put(L, ")");
      }
      return;
    case LEIR_EXPR_TENSOR: emit_load(L, e, ct); return;
    case LEIR_EXPR_PAREN:
      put(L, "(");
      emit_value(L, e->kids[0], ct);
      put(L, ")");
      return;
    case LEIR_EXPR_NEG:
      if (i64) {
        emit_call1(L, "leir_neg_i64", e->kids[0], ct);
      } else {
        put(L, "(-");
        emit_value(L, e->kids[0], ct);
        put(L, ")");
      }
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
        default: L->failed = true; return;
      }
      if (op) {
        put(L, "(");
        emit_value(L, e->kids[0], ct);
        put(L, op);
        emit_value(L, e->kids[1], ct);
        put(L, ")");
      } else {
        putf(L, "%s(%s", fn, checked ? "rt, " : "");
        emit_value(L, e->kids[0], ct);
        put(L, ", ");
        emit_value(L, e->kids[1], ct);
        if (checked) putf(L, ", %d", add_site(L, LEIR__TRAP_DIVZERO, 0, e->pos, NULL));
        put(L, ")");
      }
      return;
    }
    case LEIR_EXPR_CALL: {
      const char *fn = NULL;
      switch ((leir_op)e->op) {
        case LEIR_OP_EXP: fn = f32 ? "expf" : "exp"; break;
        case LEIR_OP_LOG: fn = f32 ? "logf" : "log"; break;
        case LEIR_OP_SQRT: fn = f32 ? "sqrtf" : "sqrt"; break;
        case LEIR_OP_ERF: fn = f32 ? "erff" : "erf"; break;
        case LEIR_OP_ABS: fn = f32 ? "fabsf" : i64 ? "leir_abs_i64" : "fabs"; break;
        case LEIR_OP_MAX:
        case LEIR_OP_MIN: {
          bool mx = e->op == LEIR_OP_MAX;
          const char *f2 = i64 ? (mx ? "leir_max_i64" : "leir_min_i64")
                               : f32 ? (mx ? "leir_fmax_f32" : "leir_fmin_f32")
                                     : (mx ? "leir_fmax_f64" : "leir_fmin_f64");
          for (uint32_t k = 1; k < e->n; k++) putf(L, "%s(", f2);
          emit_value(L, e->kids[0], ct);
          for (uint32_t k = 1; k < e->n; k++) {
            put(L, ", ");
            emit_value(L, e->kids[k], ct);
            put(L, ")");
          }
          return;
        }
        case LEIR_OP_IF_THEN_ELSE:
          put(L, "(");
          emit_cond(L, e->kids[0]);
          put(L, " ? ");
          emit_value(L, e->kids[1], ct);
          put(L, " : ");
          emit_value(L, e->kids[2], ct);
          put(L, ")");
          return;
        default: L->failed = true; return;
      }
      if (i64 && e->op != LEIR_OP_ABS) {
        /* transcendental functions of integers: in double, converted back */
        putf(L, "leir_f64_to_i64(%s((double)", fn);
        emit_value(L, e->kids[0], ct);
        put(L, "))");
      } else {
        emit_call1(L, fn, e->kids[0], ct);
      }
      return;
    }
    default: L->failed = true; return;
  }
}

static void emit_cond(lower *L, const leir_expr *e) {
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_AND:
    case LEIR_EXPR_OR:
      put(L, "(");
      emit_cond(L, e->kids[0]);
      put(L, e->kind == LEIR_EXPR_AND ? " && " : " || ");
      emit_cond(L, e->kids[1]);
      put(L, ")");
      return;
    case LEIR_EXPR_PAREN: {
      const leir_expr *in = e->kids[0];
      if (in->kind == LEIR_EXPR_COMPARE || in->kind == LEIR_EXPR_AND || in->kind == LEIR_EXPR_OR) {
        emit_cond(L, in);
        return;
      }
      break;
    }
    case LEIR_EXPR_COMPARE: {
      /* a < b < c  ->  ((a < b) && (b < c)): b is pure, so evaluating it
       * twice gives the same value; && keeps the left-to-right laziness */
      leir__ctype ct = leir__cond_ctype(e);
      put(L, "(");
      for (uint32_t k = 0; k + 1 < e->n; k++) {
        if (k) put(L, " && ");
        put(L, "(");
        emit_value(L, e->kids[k], ct);
        put(L, leir__ctext_cmp_op((leir_op)e->u.cmp_ops[k]));
        emit_value(L, e->kids[k + 1], ct);
        put(L, ")");
      }
      put(L, ")");
      return;
    }
    default: break;
  }
  leir__ctype ct = leir__cond_ctype(e);
  put(L, "(");
  emit_value(L, e, ct);
  put(L, ct == LEIR__CT_I64 ? " != 0)" : " != 0.0)");
}

/* ---- statements ------------------------------------------------------------- */

/* b[off] = v converted to the buffer's dtype. */
static void emit_store(lower *L, const leir_expr *lhs, const char *value) {
  uint32_t b = L->a->expr_buffer[lhs->id];
  leir_dtype dt = (leir_dtype)L->a->buffers[b].dtype;
  emit_element(L, lhs);
  leir__ctext_store(L->out, dt, value);
}

static void emit_equation(lower *L, const leir__eqinfo *info, int depth) {
  leir__env_init(&L->env, info);
  const leir_expr *lhs = info->eq->lhs;
  leir__ctype ct = leir__ctype_of((leir_dtype)lhs->dtype);
  indent(L, depth);
  putf(L, "{ const %s v = ", leir__ctext_ctype_name(ct));
  emit_value(L, info->eq->rhs, ct);
  put(L, "; ");
  emit_store(L, lhs, "v");
  indent(L, depth);
  put(L, "}\n");
}

/* Depths whose loop variable appears in the left-hand subscripts. */
static void used_depths(const lower *L, const leir_expr *e, bool *used) {
  if (e->kind == LEIR_EXPR_VAR) used[L->a->expr_loop[e->id]] = true;
  for (uint32_t k = 0; k < e->n; k++) used_depths(L, e->kids[k], used);
}

static void emit_init(lower *L, const leir__eqinfo *info) {
  leir__env_init(&L->env, info);
  const leir_expr *lhs = info->eq->lhs;
  bool used[LEIR__MAX_LOOPS] = {false};
  for (uint32_t k = 0; k < lhs->n; k++) used_depths(L, lhs->kids[k], used);
  leir_dtype dt = (leir_dtype)lhs->dtype;
  leir__ctype ct = leir__ctype_of(dt);
  leir__init_kind kind = (leir__init_kind)info->init;
  indent(L, 0);
  putf(L, "/* implicit initialization of %s (%s) */\n", leir__sym_name(L->p, lhs->sym),
       kind == LEIR__INIT_ZERO ? "0" : kind == LEIR__INIT_ONE ? "1"
                                : kind == LEIR__INIT_NEG_INF ? "-inf" : "+inf");
  int depth = 0;
  for (uint32_t d = 0; d < info->nloops; d++) {
    if (!used[d]) continue;
    indent(L, depth++);
    putf(L, "for (int64_t i%u = 0; i%u < ", d, d);
    put_i64(L, info->loops[d]->extent);
    putf(L, "; i%u++)\n", d);
  }
  indent(L, depth);
  putf(L, "{ const %s v = ", leir__ctext_ctype_name(ct));
  if (ct == LEIR__CT_I64)
    put_i64(L, leir__init_value_i64(kind, dt));
  else
    put_float_const(L, leir__init_value_f64(kind), ct);
  put(L, "; ");
  emit_store(L, lhs, "v");
  indent(L, depth);
  put(L, "}\n");
}

/* Evaluations per entry of loop l of nest n (its own and inner extents). */
static uint64_t work_from(const leir_nest *n, uint32_t l) {
  uint64_t items = 0;
  for (uint32_t i = 0; i < n->nitems; i++) {
    uint64_t w = n->items[i].eq ? 1 : work_from(n->items[i].nest, 0);
    items = items + w < items ? UINT64_MAX : items + w;
  }
  uint64_t w = items;
  for (uint32_t k = n->nloops; k-- > l;) {
    uint64_t r;
    w = __builtin_mul_overflow(w, (uint64_t)n->loops[k].extent, &r) ? UINT64_MAX : r;
  }
  return w;
}

static void emit_nest(lower *L, const leir_nest *n, uint32_t depth, bool in_parallel,
                      bool in_simd);

static void emit_loops(lower *L, const leir_nest *n, uint32_t k, uint32_t depth, bool in_parallel,
                       bool in_simd) {
  if (k == n->nloops) {
    for (uint32_t i = 0; i < n->nitems; i++) {
      if (n->items[i].eq)
        emit_equation(L, &L->a->eqs[L->a->eq_index[n->items[i].eq->id]], (int)depth);
      else
        emit_nest(L, n->items[i].nest, depth, in_parallel, in_simd);
    }
    return;
  }
  const leir__loop *loop = &n->loops[k];
  const char *var = leir__sym_name(L->p, loop->sym);
  bool parallel = false, simd = false;
  if (L->o->parallel && loop->extent > 1 && !in_simd) {
    if ((loop->kind == LEIR_LOOP_PARALLEL || loop->kind == LEIR_LOOP_BOUND) && !in_parallel &&
        work_from(n, k) >= L->o->min_parallel_work && leir__loop_independent(L->a, n, k, NULL, 0))
      parallel = true;
    else if (loop->kind == LEIR_LOOP_VECTORIZED && leir__loop_independent(L->a, n, k, NULL, 0))
      simd = true;
  }
  indent(L, (int)depth);
  putf(L, "/* %c^{%lld}_{%s} */\n", leir__loop_kind_letters[loop->kind], (long long)loop->extent,
       var);
  if (parallel) {
    indent(L, (int)depth);
    put(L, "#pragma omp parallel for schedule(static) num_threads(nthreads)\n");
  } else if (simd) {
    indent(L, (int)depth);
    put(L, "#pragma omp simd\n");
  }
  uint64_t outer_unroll = L->unroll;
  if (!parallel && !simd && loop->kind == LEIR_LOOP_UNROLLED) {
    uint64_t factor = loop->extent <= 64 ? (uint64_t)loop->extent : 8;
    uint64_t room = MAX_UNROLL_PRODUCT / (L->unroll ? L->unroll : 1);
    if (factor > room) factor = room ? room : 1;
    L->unroll = (L->unroll ? L->unroll : 1) * factor;
    indent(L, (int)depth);
    putf(L, "LEIR_UNROLL(%llu)\n", (unsigned long long)factor);
  }
  indent(L, (int)depth);
  putf(L, "for (int64_t i%u = 0; i%u < ", depth, depth);
  put_i64(L, loop->extent);
  putf(L, "; i%u++) {\n", depth);
  emit_loops(L, n, k + 1, depth + 1, in_parallel || parallel, in_simd || simd);
  L->unroll = outer_unroll;
  indent(L, (int)depth);
  put(L, "}\n");
}

static void emit_nest(lower *L, const leir_nest *n, uint32_t depth, bool in_parallel,
                      bool in_simd) {
  emit_loops(L, n, 0, depth, in_parallel, in_simd);
}

static const char *const runtime_text =
    "\n/* ---- run-time checks (libleir C backend) ---- */\n"
    "typedef struct leir_rt leir_rt;\n"
    "struct leir_rt {\n"
    "  void (*trap)(leir_rt *rt, int kind, int site, int64_t value, int64_t extent);\n"
    "  int threads;\n"
    "  void *host;\n"
    "};\n"
    "#if defined(__GNUC__)\n"
    "#define LEIR_UNREACHABLE() __builtin_unreachable()\n"
    "#define LEIR_PRAGMA(x) _Pragma(#x)\n"
    "#else\n"
    "#define LEIR_UNREACHABLE() ((void)0)\n"
    "#define LEIR_PRAGMA(x)\n"
    "#endif\n"
    "#if defined(__clang__)\n"
    "#define LEIR_UNROLL(n) LEIR_PRAGMA(unroll n)\n"
    "#elif defined(__GNUC__)\n"
    "#define LEIR_UNROLL(n) LEIR_PRAGMA(GCC unroll n)\n"
    "#else\n"
    "#define LEIR_UNROLL(n)\n"
    "#endif\n"
    "static inline int64_t leir_chk(leir_rt *rt, int64_t ix, int64_t extent, int site) {\n"
    "  if ((uint64_t)ix >= (uint64_t)extent) { rt->trap(rt, 1, site, ix, extent); "
    "LEIR_UNREACHABLE(); }\n"
    "  return ix;\n"
    "}\n"
    "static inline int64_t leir_idiv(leir_rt *rt, int64_t a, int64_t b, int site) {\n"
    "  if (b == 0) { rt->trap(rt, 2, site, a, 0); LEIR_UNREACHABLE(); }\n"
    "  return leir_floordiv_i64(a, b);\n"
    "}\n"
    "static inline int64_t leir_imod(leir_rt *rt, int64_t a, int64_t b, int site) {\n"
    "  if (b == 0) { rt->trap(rt, 2, site, a, 0); LEIR_UNREACHABLE(); }\n"
    "  return leir_floormod_i64(a, b);\n"
    "}\n"
    "static inline int64_t leir_ipow(leir_rt *rt, int64_t a, int64_t b, int site) {\n"
    "  if (a == 0 && b < 0) { rt->trap(rt, 2, site, a, b); LEIR_UNREACHABLE(); }\n"
    "  return leir_pow_i64(a, b);\n"
    "}\n\n";

static void emit_header_comment(lower *L) {
  leir__strbuf text = LEIR__STRBUF_INIT;
  leir__print_program(&text, L->p, 0, NULL);
  put(L, "/*\n * Generated by libleir " LEIR_VERSION_STRING " (C backend) from:\n *   ");
  for (size_t i = 0; i < text.len; i++) {
    char c = text.data[i];
    if (c == '*' && i + 1 < text.len && text.data[i + 1] == '/') {
      put(L, "* ");
      continue;
    }
    leir__sb_putc(L->out, c);
    if (c == ';' && i + 1 < text.len && i % 96 > 80) put(L, "\n *   ");
  }
  put(L, "\n */\n");
  leir__sb_release(&text);
}

leir_status leir__lower_c(const leir__analysis *a, const leir__c_options *o, leir__strbuf *out,
                          leir__c_site **sites, uint32_t *nsites) {
  lower L;
  memset(&L, 0, sizeof L);
  L.a = a;
  L.p = a->p;
  L.o = o;
  L.out = out;
  emit_header_comment(&L);
  put(&L, "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n");
  put(&L, leir__prelude_text);
  put(&L, runtime_text);
  put(&L, "int " LEIR__C_ENTRY "(void *const *bufs, leir_rt *rt);\n");
  put(&L, "int " LEIR__C_ENTRY "(void *const *bufs, leir_rt *rt) {\n");
  put(&L, "  const int nthreads = rt->threads > 0 ? rt->threads : 1;\n  (void)nthreads;\n");
  for (uint32_t b = 0; b < a->nbuffers; b++) {
    const leir__buffer *buf = &a->buffers[b];
    putf(&L, "  %s *restrict b%u = (%s *)bufs[%u]; /* %s^{%s} %s [", leir__ctext_elem_type((leir_dtype)buf->dtype),
         b, leir__ctext_elem_type((leir_dtype)buf->dtype), b, leir__sym_name(L.p, buf->sym),
         leir_dtype_name((leir_dtype)buf->dtype),
         buf->role == LEIR__BUF_INPUT ? "input" : buf->role == LEIR__BUF_OUTPUT ? "output"
                                                                               : "intermediate");
    for (uint32_t k = 0; k < buf->rank; k++)
      putf(&L, "%s%lld", k ? "," : "", (long long)buf->shape[k]);
    put(&L, "] */\n");
    putf(&L, "  (void)b%u;\n", b);
  }
  for (uint32_t t = 0; t < L.p->nnests; t++) {
    uint32_t line, col;
    leir__position(L.p, L.p->nests[t]->pos, &line, &col);
    putf(&L, "\n  /* nest %u (%u:%u) */\n", t + 1, line, col);
    for (uint32_t i = 0; i < a->neqs; i++)
      if (a->eqs[i].top == t && a->eqs[i].init != LEIR__INIT_NONE) emit_init(&L, &a->eqs[i]);
    emit_nest(&L, L.p->nests[t], 0, false, false);
  }
  put(&L, "  return 0;\n}\n");
  if (L.failed || out->failed) {
    free(L.sites);
    if (out->failed) return leir__error_nomem();
    return leir__error(LEIR_ERR_INTERNAL, "lower.c", NULL, 0, 0,
                       "the C lowering met an expression it cannot translate");
  }
  if (sites) {
    *sites = L.sites;
    *nsites = L.nsites;
  } else {
    free(L.sites);
  }
  return LEIR_OK;
}
