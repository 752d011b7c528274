/*
 * LEIR -> CUDA C (docs/cuda.md).
 *
 * One __global__ kernel per top-level nest. The B loops in the nest's header
 * become the launch grid: each loop's name picks threadIdx/blockIdx and an
 * axis, loops on one axis are linearized (the first one most significant),
 * and an axis larger than the hardware allows becomes a stride loop. Every
 * other loop runs inside the thread in its original order, so each thread
 * executes the sequential semantics for its own bound values; this is
 * equivalent to the program because legality.c proved that iterations with
 * different bound values never touch the same element.
 *
 * Implicit initializations (spec §3.4) run in the thread before the body,
 * over the elements that thread's equation writes (the loops used by the
 * left-hand subscript). Intermediates with scope `l`/`s` used by one kernel
 * only become per-thread arrays / __shared__ arrays (plan_placement), with
 * barriers between producer and consumer items of a shared array.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_text.h"
#include "cuda_internal.h"
#include "error.h"
#include "prelude.h"
#include "semantics.h"

#define MAX_THREADS 1024
#define MAX_LOCAL_BYTES 16384
#define MAX_SHARED_BYTES 49152

/* Computation types and evaluation rules are the shared ones
 * (backends/semantics.h), so GPU results agree with the interpreter. */
typedef leir__ctype ctype;
#define CT_F32 LEIR__CT_F32
#define CT_F64 LEIR__CT_F64
#define CT_I64 LEIR__CT_I64

typedef struct placement {
  uint8_t place;
  uint32_t top;                  /* the one kernel that uses it (on-chip only) */
  bool drop[LEIR_MAX_RANK];      /* dimension indexed by a bound variable alone */
  int64_t size;                  /* elements of the on-chip array */
} placement;

typedef struct gen {
  const leir_program *p;
  leir__analysis *a;
  leir__cuda_lowered *out;
  uint32_t flags;
  const char *prefix;
  leir__strbuf src, rep;
  placement *pl;                 /* by buffer */
  uint32_t *user_top;            /* by buffer: single top-level nest using it, or NONE */
  bool *multi;                   /* by buffer: used by several nests */
  uint32_t ntrap_cap;
  /* current kernel */
  uint32_t top;
  const leir__loop *hoisted[LEIR__MAX_LOOPS];
  uint32_t nhoisted;
  bool barriers;                 /* shared arrays in this kernel: place barriers */
  bool *dirty;                   /* by buffer: shared array written since the last barrier */
  bool last_barrier;
  uint32_t nbarriers;
  leir_status st;
} gen;

static const char *bufname(gen *g, uint32_t b, char *buf, size_t cap) {
  const leir__buffer *x = &g->a->buffers[b];
  const char *name = leir__sym_name(g->p, x->sym);
  bool first = true;
  for (uint32_t k = 0; k < b; k++)
    if (g->a->buffers[k].sym == x->sym) first = false;
  const char *suffix = g->pl[b].place == LEIR__PLACE_LOCAL    ? "_l"
                       : g->pl[b].place == LEIR__PLACE_SHARED ? "_s"
                                                              : "";
  if (first)
    snprintf(buf, cap, "%s%s", name, suffix);
  else
    snprintf(buf, cap, "%s_%u%s", name, b, suffix);
  return buf;
}

static ctype ctype_of(uint8_t dt) { return leir__ctype_of((leir_dtype)dt); }

static const leir__eqinfo *info_of(gen *g, const leir_equation *eq) {
  return &g->a->eqs[g->a->eq_index[eq->id]];
}

static uint32_t buffer_of(gen *g, const leir_expr *t) {
  return t->id < g->a->nids ? g->a->expr_buffer[t->id] : LEIR__NONE;
}

static bool is_hoisted(gen *g, const leir__loop *l) {
  for (uint32_t k = 0; k < g->nhoisted; k++)
    if (g->hoisted[k] == l) return true;
  return false;
}

static int axis_of(const leir_program *p, const leir__loop *l) {
  const char *v = leir__sym_name(p, l->sym);
  return (v[0] == 'b' ? 3 : 0) + (v[1] - 'x');
}

static const leir__loop *loop_of_var(gen *g, const leir__eqinfo *info, const leir_expr *v) {
  uint32_t s = v->id < g->a->nids ? g->a->expr_loop[v->id] : LEIR__NONE;
  return s < info->nloops ? info->loops[s] : NULL;
}

/* ---- expressions ---------------------------------------------------------- */

static void emit_value(gen *g, leir__strbuf *b, const leir_expr *e, ctype ct,
                       const leir__eqinfo *info);
static void emit_index(gen *g, leir__strbuf *b, const leir_expr *e, const leir__eqinfo *info);

static uint32_t add_trap(gen *g, uint32_t buffer, uint32_t dim, const leir_expr *ix) {
  leir__cuda_lowered *o = g->out;
  if (o->ntraps == g->ntrap_cap) {
    uint32_t cap = g->ntrap_cap ? g->ntrap_cap * 2 : 8;
    leir__cuda_trap *t = realloc(o->traps, cap * sizeof *t);
    if (!t) {
      g->st = LEIR_ERR_NOMEM;
      return 0;
    }
    o->traps = t;
    g->ntrap_cap = cap;
  }
  leir__cuda_trap *t = &o->traps[o->ntraps++];
  t->buffer = buffer;
  t->dim = dim;
  leir__position(g->p, ix->pos, &t->line, &t->column);
  return o->ntraps;
}

static bool contains_tensor(const leir_expr *e) {
  if (e->kind == LEIR_EXPR_TENSOR) return true;
  for (uint32_t k = 0; k < e->n; k++)
    if (contains_tensor(e->kids[k])) return true;
  return false;
}

/* NAME[offset] of a tensor access (raw element, in the buffer's dtype). */
static void emit_element(gen *g, leir__strbuf *b, const leir_expr *t, const leir__eqinfo *info) {
  uint32_t bi = buffer_of(g, t);
  char name[96];
  if (bi == LEIR__NONE) {
    g->st = leir__error(LEIR_ERR_INTERNAL, "cuda.lower", NULL, 0, 0, "unbound tensor access");
    return;
  }
  const leir__buffer *buf = &g->a->buffers[bi];
  const placement *pl = &g->pl[bi];
  leir__sb_puts(b, bufname(g, bi, name, sizeof name));
  leir__sb_putc(b, '[');
  int64_t strides[LEIR_MAX_RANK], stride = 1;
  for (uint32_t k = buf->rank; k-- > 0;) {
    strides[k] = stride;
    if (pl->place == LEIR__PLACE_GLOBAL || !pl->drop[k]) stride *= buf->shape[k];
  }
  bool any = false;
  for (uint32_t k = 0; k < buf->rank; k++) {
    if (pl->place != LEIR__PLACE_GLOBAL && pl->drop[k]) continue;
    stride = strides[k];
    if (any) leir__sb_puts(b, " + ");
    any = true;
    const leir_expr *ix = t->kids[k];
    bool trap = contains_tensor(ix);
    if (trap) leir__sb_puts(b, "leir_chk(");
    emit_index(g, b, ix, info);
    if (trap)
      leir__sb_printf(b, ", %" PRId64 "LL, leir_trap, %u)", buf->shape[k], add_trap(g, bi, k, ix));
    if (stride != 1) leir__sb_printf(b, " * %" PRId64 "LL", stride);
  }
  if (!any) leir__sb_putc(b, '0');
  leir__sb_putc(b, ']');
}

/* A tensor read converted to `ct` (same conversions as the C backend). */
static void emit_load(gen *g, leir__strbuf *b, const leir_expr *t, ctype ct,
                      const leir__eqinfo *info) {
  uint8_t dt = t->dtype;
  uint32_t bi = buffer_of(g, t);
  if (bi != LEIR__NONE) dt = g->a->buffers[bi].dtype;
  const char *pre, *post = ")";
  switch (dt) {
    case LEIR_F64:
      pre = ct == CT_F32 ? "((float)" : ct == CT_F64 ? "(" : "leir_f64_to_i64(";
      break;
    case LEIR_F32:
      pre = ct == CT_F32 ? "(" : ct == CT_F64 ? "((double)" : "leir_f64_to_i64((double)";
      break;
    case LEIR_F16:
    case LEIR_BF16: {
      bool h = dt == LEIR_F16;
      pre = ct == CT_F32   ? (h ? "leir_f16_to_f32(" : "leir_bf16_to_f32(")
            : ct == CT_F64 ? (h ? "((double)leir_f16_to_f32(" : "((double)leir_bf16_to_f32(")
                           : (h ? "leir_f64_to_i64((double)leir_f16_to_f32("
                                : "leir_f64_to_i64((double)leir_bf16_to_f32(");
      post = ct == CT_F32 ? ")" : "))";
      break;
    }
    case LEIR_BOOL:
      pre = ct == CT_F32 ? "((float)(int64_t)(" : ct == CT_F64 ? "((double)(int64_t)(" : "((int64_t)(";
      post = " != 0))";
      break;
    default:
      pre = ct == CT_F32 ? "((float)(int64_t)" : ct == CT_F64 ? "((double)(int64_t)" : "((int64_t)";
      break;
  }
  leir__sb_puts(b, pre);
  emit_element(g, b, t, info);
  leir__sb_puts(b, post);
}

/* Exact constants: hexadecimal floating literals. */
static void put_float_const(leir__strbuf *b, double v, ctype ct) {
  if (ct == CT_F32) {
    float f = (float)v;
    if (f != f) leir__sb_puts(b, "LEIR_NANF");
    else if (isinf(f)) leir__sb_puts(b, f > 0 ? "LEIR_INFF" : "(-LEIR_INFF)");
    else leir__sb_printf(b, "%s%af", f < 0 ? "-" : "", fabs((double)f));
  } else {
    if (v != v) leir__sb_puts(b, "LEIR_NAN");
    else if (isinf(v)) leir__sb_puts(b, v > 0 ? "LEIR_INF" : "(-LEIR_INF)");
    else leir__sb_printf(b, "%s%a", v < 0 ? "-" : "", fabs(v));
  }
}

static void put_i64(leir__strbuf *b, int64_t v) {
  if (v == INT64_MIN) leir__sb_puts(b, "(-0x7fffffffffffffffLL - 1)");
  else leir__sb_printf(b, "%" PRId64 "LL", v);
}

static void emit_number(leir__strbuf *b, const leir_expr *e, ctype ct) {
  const leir__number *n = e->u.num;
  if (ct == CT_I64)
    put_i64(b, n->is_int ? n->ival : leir_f64_to_i64(n->value));
  else
    put_float_const(b, n->value, ct);
}

static void emit_index(gen *g, leir__strbuf *b, const leir_expr *e, const leir__eqinfo *info) {
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER: emit_number(b, e, CT_I64); return;
    case LEIR_EXPR_VAR: leir__sb_printf(b, "(int64_t)v_%s", leir__sym_name(g->p, e->sym)); return;
    case LEIR_EXPR_TENSOR: emit_load(g, b, e, CT_I64, info); return;
    case LEIR_EXPR_PAREN:
      leir__sb_putc(b, '(');
      emit_index(g, b, e->kids[0], info);
      leir__sb_putc(b, ')');
      return;
    case LEIR_EXPR_NEG:
      leir__sb_puts(b, "(-");
      emit_index(g, b, e->kids[0], info);
      leir__sb_putc(b, ')');
      return;
    case LEIR_EXPR_BINARY: {
      const char *fn = NULL, *op = NULL;
      switch ((leir_op)e->op) {
        case LEIR_OP_ADD: op = " + "; break;
        case LEIR_OP_SUB: op = " - "; break;
        case LEIR_OP_MUL: op = " * "; break;
        case LEIR_OP_MOD: fn = "leir_imod("; break;
        case LEIR_OP_POW: fn = "leir_ipow("; break;
        default: fn = "leir_idiv("; break; /* // (and / on indices) */
      }
      leir__sb_puts(b, fn ? fn : "(");
      emit_index(g, b, e->kids[0], info);
      leir__sb_puts(b, op ? op : ", ");
      emit_index(g, b, e->kids[1], info);
      leir__sb_puts(b, fn ? ", leir_trap)" : ")");
      return;
    }
    default:
      /* Not index syntax; evaluate as an integer value. */
      emit_value(g, b, e, CT_I64, info);
      return;
  }
}

/* Conditions follow leir__cond_ctype: int64 when every operand is
 * integer-valued, else double; chains, & and | short-circuit. */
static void emit_cond(gen *g, leir__strbuf *b, const leir_expr *e, const leir__eqinfo *info) {
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_AND:
    case LEIR_EXPR_OR:
      leir__sb_putc(b, '(');
      emit_cond(g, b, e->kids[0], info);
      leir__sb_puts(b, e->kind == LEIR_EXPR_AND ? " && " : " || ");
      emit_cond(g, b, e->kids[1], info);
      leir__sb_putc(b, ')');
      return;
    case LEIR_EXPR_PAREN:
      if (e->kids[0]->kind == LEIR_EXPR_AND || e->kids[0]->kind == LEIR_EXPR_OR ||
          e->kids[0]->kind == LEIR_EXPR_COMPARE) {
        emit_cond(g, b, e->kids[0], info);
        return;
      }
      break;
    case LEIR_EXPR_COMPARE: {
      ctype t = leir__cond_ctype(e);
      leir__sb_putc(b, '(');
      for (uint32_t k = 0; k + 1 < e->n; k++) {
        if (k) leir__sb_puts(b, " && ");
        leir__sb_putc(b, '(');
        emit_value(g, b, e->kids[k], t, info);
        leir__sb_puts(b, leir__ctext_cmp_op((leir_op)e->u.cmp_ops[k]));
        emit_value(g, b, e->kids[k + 1], t, info);
        leir__sb_putc(b, ')');
      }
      leir__sb_putc(b, ')');
      return;
    }
    default: break;
  }
  /* A bare value: non-zero is true (NaN too). */
  ctype t = leir__cond_ctype(e);
  leir__sb_putc(b, '(');
  emit_value(g, b, e, t, info);
  leir__sb_puts(b, t == CT_I64 ? " != 0)" : " != 0.0)");
}

static void emit_call(gen *g, leir__strbuf *b, const leir_expr *e, ctype ct,
                      const leir__eqinfo *info) {
  bool f32 = ct == CT_F32, i64 = ct == CT_I64;
  const char *fn = NULL;
  switch ((leir_op)e->op) {
    case LEIR_OP_IF_THEN_ELSE:
      /* The conditional operator evaluates only the chosen branch (lazy). */
      leir__sb_putc(b, '(');
      emit_cond(g, b, e->kids[0], info);
      leir__sb_puts(b, " ? ");
      emit_value(g, b, e->kids[1], ct, info);
      leir__sb_puts(b, " : ");
      emit_value(g, b, e->kids[2], ct, info);
      leir__sb_putc(b, ')');
      return;
    case LEIR_OP_MAX:
    case LEIR_OP_MIN: {
      bool mx = e->op == LEIR_OP_MAX;
      const char *f2 = i64 ? (mx ? "leir_max_i64(" : "leir_min_i64(")
                       : f32 ? (mx ? "leir_fmax_f32(" : "leir_fmin_f32(")
                             : (mx ? "leir_fmax_f64(" : "leir_fmin_f64(");
      for (uint32_t k = 1; k < e->n; k++) leir__sb_puts(b, f2);
      emit_value(g, b, e->kids[0], ct, info);
      for (uint32_t k = 1; k < e->n; k++) {
        leir__sb_puts(b, ", ");
        emit_value(g, b, e->kids[k], ct, info);
        leir__sb_putc(b, ')');
      }
      return;
    }
    case LEIR_OP_EXP: fn = f32 ? "expf" : "exp"; break;
    case LEIR_OP_LOG: fn = f32 ? "logf" : "log"; break;
    case LEIR_OP_SQRT: fn = f32 ? "sqrtf" : "sqrt"; break;
    case LEIR_OP_ERF: fn = f32 ? "erff" : "erf"; break;
    case LEIR_OP_ABS: fn = f32 ? "fabsf" : i64 ? "leir_abs_i64" : "fabs"; break;
    default:
      g->st = leir__error(LEIR_ERR_INTERNAL, "cuda.lower", NULL, 0, 0, "unknown function");
      return;
  }
  if (i64 && e->op != LEIR_OP_ABS) {
    /* Transcendental functions of integers: in double, converted back. */
    leir__sb_printf(b, "leir_f64_to_i64(%s((double)", fn);
    emit_value(g, b, e->kids[0], ct, info);
    leir__sb_puts(b, "))");
    return;
  }
  leir__sb_printf(b, "%s(", fn);
  emit_value(g, b, e->kids[0], ct, info);
  leir__sb_putc(b, ')');
}

static void emit_value(gen *g, leir__strbuf *b, const leir_expr *e, ctype ct,
                       const leir__eqinfo *info) {
  bool f32 = ct == CT_F32, i64 = ct == CT_I64;
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER: emit_number(b, e, ct); return;
    case LEIR_EXPR_INF:
      if (i64)
        put_i64(b, leir_f64_to_i64(INFINITY));
      else
        leir__sb_puts(b, f32 ? "LEIR_INFF" : "LEIR_INF");
      return;
    case LEIR_EXPR_VAR:
      if (i64)
        leir__sb_printf(b, "((int64_t)v_%s)", leir__sym_name(g->p, e->sym));
      else
        leir__sb_printf(b, "((%s)v_%s)", leir__ctext_ctype_name(ct), leir__sym_name(g->p, e->sym));
      return;
    case LEIR_EXPR_TENSOR: emit_load(g, b, e, ct, info); return;
    case LEIR_EXPR_PAREN:
      leir__sb_putc(b, '(');
      emit_value(g, b, e->kids[0], ct, info);
      leir__sb_putc(b, ')');
      return;
    case LEIR_EXPR_NEG:
      leir__sb_puts(b, i64 ? "leir_neg_i64(" : "(-");
      emit_value(g, b, e->kids[0], ct, info);
      leir__sb_putc(b, ')');
      return;
    case LEIR_EXPR_BINARY: {
      const char *fn = NULL, *op = NULL;
      bool checked = false;
      switch ((leir_op)e->op) {
        case LEIR_OP_ADD: i64 ? (fn = "leir_add_i64(") : (op = " + "); break;
        case LEIR_OP_SUB: i64 ? (fn = "leir_sub_i64(") : (op = " - "); break;
        case LEIR_OP_MUL: i64 ? (fn = "leir_mul_i64(") : (op = " * "); break;
        case LEIR_OP_DIV:
        case LEIR_OP_FLOORDIV:
          if (i64) fn = "leir_idiv(", checked = true;
          else if (e->op == LEIR_OP_DIV) op = " / ";
          else fn = f32 ? "leir_floordiv_f32(" : "leir_floordiv_f64(";
          break;
        case LEIR_OP_MOD:
          if (i64) fn = "leir_imod(", checked = true;
          else fn = f32 ? "leir_floormod_f32(" : "leir_floormod_f64(";
          break;
        case LEIR_OP_POW:
          if (i64) fn = "leir_ipow(", checked = true;
          else fn = f32 ? "powf(" : "pow(";
          break;
        default: break;
      }
      leir__sb_puts(b, fn ? fn : "(");
      emit_value(g, b, e->kids[0], ct, info);
      leir__sb_puts(b, op ? op : ", ");
      emit_value(g, b, e->kids[1], ct, info);
      leir__sb_puts(b, checked ? ", leir_trap)" : ")");
      return;
    }
    case LEIR_EXPR_CALL: emit_call(g, b, e, ct, info); return;
    case LEIR_EXPR_COMPARE:
    case LEIR_EXPR_AND:
    case LEIR_EXPR_OR:
      leir__sb_printf(b, "((%s)", leir__ctext_ctype_name(ct));
      emit_cond(g, b, e, info);
      leir__sb_putc(b, ')');
      return;
  }
}

/* ---- statements ----------------------------------------------------------- */

static void indent(leir__strbuf *b, int depth) {
  for (int k = 0; k < depth; k++) leir__sb_puts(b, "  ");
}

/* Stores `value` (a C expression of the equation's compute type). */
static void emit_store(gen *g, leir__strbuf *b, const leir_expr *lhs, const char *value,
                       const leir__eqinfo *info) {
  uint32_t bi = buffer_of(g, lhs);
  uint8_t dt = g->a->buffers[bi].dtype;
  emit_element(g, b, lhs, info);
  leir__ctext_store(b, (leir_dtype)dt, value);
}

static void emit_equation(gen *g, const leir_equation *eq, int depth) {
  const leir__eqinfo *info = info_of(g, eq);
  ctype ct = ctype_of(g->a->buffers[info->lhs_buffer].dtype);
  leir__strbuf *b = &g->src;
  indent(b, depth);
  leir__sb_printf(b, "{ const %s leir_v = ", leir__ctext_ctype_name(ct));
  emit_value(g, b, eq->rhs, ct, info);
  leir__sb_puts(b, ";\n");
  indent(b, depth + 1);
  emit_store(g, b, eq->lhs, "leir_v", info);
  indent(b, depth);
  leir__sb_puts(b, "}\n");
}

static void emit_for(gen *g, const leir__loop *l, int depth) {
  leir__strbuf *b = &g->src;
  const char *v = leir__sym_name(g->p, l->sym);
  /* U loops unroll; others stay loops. Letting NVVM fully unroll every
   * small constant-trip loop multiplies code size and compile time (10x on
   * attention programs) and would blur what the U annotation means. */
  indent(b, depth);
  leir__sb_puts(b, l->kind == LEIR_LOOP_UNROLLED ? "#pragma unroll\n" : "#pragma unroll 1\n");
  indent(b, depth);
  leir__sb_printf(b, "for (int v_%s = 0; v_%s < %" PRId64 "; ++v_%s) {\n", v, v, l->extent, v);
}

/* Shared arrays read (want_write = false) or written by a subtree. */
static void shared_access(gen *g, const leir_expr *e, bool *set) {
  if (e->kind == LEIR_EXPR_TENSOR) {
    uint32_t bi = buffer_of(g, e);
    if (bi != LEIR__NONE && g->pl[bi].place == LEIR__PLACE_SHARED) set[bi] = true;
  }
  for (uint32_t k = 0; k < e->n; k++) shared_access(g, e->kids[k], set);
}

static void item_sets(gen *g, const leir__item *it, bool *reads, bool *writes) {
  if (it->eq) {
    uint32_t bi = buffer_of(g, it->eq->lhs);
    if (bi != LEIR__NONE && g->pl[bi].place == LEIR__PLACE_SHARED) writes[bi] = true;
    for (uint32_t k = 0; k < it->eq->lhs->n; k++) shared_access(g, it->eq->lhs->kids[k], reads);
    shared_access(g, it->eq->rhs, reads);
    return;
  }
  for (uint32_t k = 0; k < it->nest->nitems; k++) item_sets(g, &it->nest->items[k], reads, writes);
}

static bool overlaps(gen *g, const bool *x, const bool *y) {
  for (uint32_t k = 0; k < g->a->nbuffers; k++)
    if (x[k] && y[k]) return true;
  return false;
}

static void barrier(gen *g, int depth) {
  if (g->last_barrier) return;
  indent(&g->src, depth);
  leir__sb_puts(&g->src, "__syncthreads();\n");
  g->nbarriers++;
  g->last_barrier = true;
  memset(g->dirty, 0, g->a->nbuffers * sizeof *g->dirty);
}

static void emit_body(gen *g, const leir_nest *n, uint32_t from_loop, int depth);

static void emit_items(gen *g, const leir_nest *n, int depth) {
  size_t nb = g->a->nbuffers;
  bool *reads = calloc(nb ? nb : 1, 1), *writes = calloc(nb ? nb : 1, 1);
  if (!reads || !writes) {
    free(reads);
    free(writes);
    g->st = LEIR_ERR_NOMEM;
    return;
  }
  for (uint32_t k = 0; k < n->nitems && g->st == LEIR_OK; k++) {
    const leir__item *it = &n->items[k];
    if (g->barriers) {
      memset(reads, 0, nb);
      memset(writes, 0, nb);
      item_sets(g, it, reads, writes);
      if (overlaps(g, reads, g->dirty)) barrier(g, depth);
    }
    if (it->eq) {
      emit_equation(g, it->eq, depth);
      g->last_barrier = false;
    } else {
      emit_body(g, it->nest, 0, depth);
    }
    if (g->barriers)
      for (size_t j = 0; j < nb; j++) g->dirty[j] = g->dirty[j] || writes[j];
  }
  free(reads);
  free(writes);
}

/* Loops of `n` from index `from_loop` (hoisted ones skipped), then items. */
static void emit_body(gen *g, const leir_nest *n, uint32_t from_loop, int depth) {
  if (from_loop == n->nloops) {
    emit_items(g, n, depth);
    return;
  }
  const leir__loop *l = &n->loops[from_loop];
  if (is_hoisted(g, l)) {
    emit_body(g, n, from_loop + 1, depth);
    return;
  }
  size_t nb = g->a->nbuffers;
  bool carried = false;
  if (g->barriers) {
    bool *reads = calloc(nb ? nb : 1, 1), *writes = calloc(nb ? nb : 1, 1);
    if (!reads || !writes) {
      free(reads);
      free(writes);
      g->st = LEIR_ERR_NOMEM;
      return;
    }
    for (uint32_t k = 0; k < n->nitems; k++) item_sets(g, &n->items[k], reads, writes);
    if (overlaps(g, reads, g->dirty)) barrier(g, depth);
    carried = overlaps(g, reads, writes);
    free(reads);
    free(writes);
  }
  emit_for(g, l, depth);
  g->last_barrier = false;
  emit_body(g, n, from_loop + 1, depth + 1);
  /* A later iteration may read what this one wrote, or overwrite what it read. */
  if (carried) barrier(g, depth + 1);
  indent(&g->src, depth);
  leir__sb_puts(&g->src, "}\n");
}

/* ---- implicit initialization ---------------------------------------------- */

static bool uses_loop(gen *g, const leir__eqinfo *info, const leir_expr *e, const leir__loop *l) {
  if (e->kind == LEIR_EXPR_VAR && loop_of_var(g, info, e) == l) return true;
  for (uint32_t k = 0; k < e->n; k++)
    if (uses_loop(g, info, e->kids[k], l)) return true;
  return false;
}

static const char *const init_names[] = {"", "0", "1", "-inf", "+inf"};

static void emit_inits(gen *g, int depth) {
  for (uint32_t i = 0; i < g->a->neqs && g->st == LEIR_OK; i++) {
    const leir__eqinfo *info = &g->a->eqs[i];
    if (info->top != g->top || info->init == LEIR__INIT_NONE) continue;
    const leir_expr *lhs = info->eq->lhs;
    uint32_t bi = info->lhs_buffer;
    uint8_t dt = g->a->buffers[bi].dtype;
    char name[96];
    leir__sb_printf(&g->rep, "  init: %s = %s before the nest, over", bufname(g, bi, name, sizeof name),
                    init_names[info->init]);
    int d = depth;
    uint32_t nl = 0;
    for (uint32_t k = 0; k < info->nloops; k++) {
      const leir__loop *l = info->loops[k];
      if (is_hoisted(g, l) || !uses_loop(g, info, lhs, l)) continue;
      emit_for(g, l, d++);
      leir__sb_printf(&g->rep, " %s", leir__sym_name(g->p, l->sym));
      nl++;
    }
    leir__sb_printf(&g->rep, "%s\n", nl ? " (in the thread)" : " its element (in the thread)");
    indent(&g->src, d);
    /* The shared initial values (semantics.h): -inf/+inf, or an integer
     * dtype's minimum/maximum. */
    leir__strbuf v = LEIR__STRBUF_INIT;
    ctype ct = ctype_of(dt);
    leir__sb_printf(&v, "((%s)", leir__ctext_ctype_name(ct));
    if (ct == CT_I64)
      put_i64(&v, leir__init_value_i64((leir__init_kind)info->init, (leir_dtype)dt));
    else
      put_float_const(&v, leir__init_value_f64((leir__init_kind)info->init), ct);
    leir__sb_putc(&v, ')');
    char *value = leir__sb_finish(&v, NULL);
    if (!value) {
      g->st = LEIR_ERR_NOMEM;
      return;
    }
    emit_store(g, &g->src, lhs, value, info);
    free(value);
    while (d > depth) {
      indent(&g->src, --d);
      leir__sb_puts(&g->src, "}\n");
    }
    if (g->pl[bi].place == LEIR__PLACE_SHARED) g->dirty[bi] = true;
    g->last_barrier = false;
  }
}

/* ---- placement ------------------------------------------------------------ */

static void note_use(gen *g, uint32_t bi, uint32_t top) {
  if (bi == LEIR__NONE) return;
  if (g->user_top[bi] == LEIR__NONE)
    g->user_top[bi] = top;
  else if (g->user_top[bi] != top)
    g->multi[bi] = true;
}

static void scan_uses(gen *g, const leir_expr *e, uint32_t top) {
  if (e->kind == LEIR_EXPR_TENSOR) note_use(g, buffer_of(g, e), top);
  for (uint32_t k = 0; k < e->n; k++) scan_uses(g, e->kids[k], top);
}

/* Dimension k of every access to buffer bi is the same hoisted loop variable
 * (of a block axis when `block_only`)? */
static bool dim_bound(gen *g, uint32_t bi, uint32_t k, bool block_only, const leir_expr *e,
                      const leir__eqinfo *info, const leir__loop **seen) {
  if (e->kind == LEIR_EXPR_TENSOR && buffer_of(g, e) == bi) {
    const leir_expr *ix = e->kids[k];
    if (ix->kind != LEIR_EXPR_VAR) return false;
    const leir__loop *l = loop_of_var(g, info, ix);
    if (!l || !is_hoisted(g, l) || (block_only && axis_of(g->p, l) < LEIR__AX_BX)) return false;
    if (*seen && *seen != l) return false;
    *seen = l;
  }
  for (uint32_t j = 0; j < e->n; j++)
    if (!dim_bound(g, bi, k, block_only, e->kids[j], info, seen)) return false;
  return true;
}

static void plan_buffer(gen *g, uint32_t bi, const leir__cuda_kernel *kern, uint64_t *shared_used) {
  const leir__buffer *buf = &g->a->buffers[bi];
  placement *pl = &g->pl[bi];
  char name[96];
  const char *nm = leir__sym_name(g->p, buf->sym);
  if (buf->scope == LEIR_SCOPE_GLOBAL || g->user_top[bi] != g->top) return;
  if (buf->role != LEIR__BUF_TEMP) {
    leir__sb_printf(&g->rep, "  memory: %s has scope %s but is a known variable: global memory\n",
                    nm, buf->scope == LEIR_SCOPE_SHARED ? "s" : "l");
    return;
  }
  if (g->multi[bi]) {
    leir__sb_printf(&g->rep,
                    "  memory: %s has scope %s but more than one kernel uses it: global memory\n",
                    nm, buf->scope == LEIR_SCOPE_SHARED ? "s" : "l");
    return;
  }
  bool shared = buf->scope == LEIR_SCOPE_SHARED;
  if (shared && (kern->stride[LEIR__AX_TX] || kern->stride[LEIR__AX_TY] || kern->stride[LEIR__AX_TZ])) {
    leir__sb_printf(&g->rep,
                    "  memory: %s has scope s but the threads run stride loops (no barrier is "
                    "safe there): global memory\n",
                    nm);
    return;
  }
  int64_t size = 1;
  for (uint32_t k = 0; k < buf->rank; k++) {
    bool ok = true;
    const leir__loop *seen = NULL;
    for (uint32_t i = 0; i < g->a->neqs && ok; i++) {
      const leir__eqinfo *info = &g->a->eqs[i];
      if (info->top != g->top) continue;
      ok = dim_bound(g, bi, k, shared, info->eq->lhs, info, &seen) &&
           dim_bound(g, bi, k, shared, info->eq->rhs, info, &seen);
    }
    pl->drop[k] = ok && seen;
    if (!pl->drop[k]) size *= buf->shape[k];
  }
  uint64_t bytes = (uint64_t)size * leir_dtype_size((leir_dtype)buf->dtype);
  if (shared && *shared_used + bytes > MAX_SHARED_BYTES) {
    leir__sb_printf(&g->rep,
                    "  memory: %s has scope s but needs %" PRIu64 " bytes per block (limit %d): "
                    "global memory\n",
                    nm, bytes, MAX_SHARED_BYTES);
    return;
  }
  if (!shared && bytes > MAX_LOCAL_BYTES) {
    leir__sb_printf(&g->rep,
                    "  memory: %s has scope l but needs %" PRIu64 " bytes per thread (limit %d): "
                    "global memory\n",
                    nm, bytes, MAX_LOCAL_BYTES);
    return;
  }
  pl->place = shared ? LEIR__PLACE_SHARED : LEIR__PLACE_LOCAL;
  pl->top = g->top;
  pl->size = size;
  if (shared) *shared_used += bytes;
  leir__sb_printf(&g->rep, "  memory: %s -> %s %s %s[%" PRId64 "]\n", nm,
                  shared ? "__shared__ (per block)" : "per-thread array", leir__ctext_elem_type((leir_dtype)buf->dtype),
                  bufname(g, bi, name, sizeof name), size);
}

/* ---- kernels -------------------------------------------------------------- */

static const char *const axis_names[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z",
                                         "blockIdx.x",  "blockIdx.y",  "blockIdx.z"};
static const char *const axis_dims[] = {"blockDim.x", "blockDim.y", "blockDim.z",
                                        "gridDim.x",  "gridDim.y",  "gridDim.z"};
static const char *const axis_short[] = {"tx", "ty", "tz", "bx", "by", "bz"};

static void geometry(gen *g, const leir_nest *n, leir__cuda_kernel *k) {
  g->nhoisted = 0;
  for (int ax = 0; ax < LEIR__NAX; ax++) k->extent[ax] = 1;
  for (uint32_t j = 0; j < n->nloops; j++) {
    const leir__loop *l = &n->loops[j];
    if (l->kind != LEIR_LOOP_BOUND) continue;
    g->hoisted[g->nhoisted++] = l;
    int ax = axis_of(g->p, l);
    /* The analysis caps a nest's iterations well below 2^63. */
    k->extent[ax] *= l->extent;
  }
  int64_t tx = k->extent[0] < MAX_THREADS ? k->extent[0] : MAX_THREADS;
  int64_t ty = k->extent[1] < MAX_THREADS / tx ? k->extent[1] : MAX_THREADS / tx;
  int64_t tzcap = MAX_THREADS / (tx * ty) < 64 ? MAX_THREADS / (tx * ty) : 64;
  int64_t tz = k->extent[2] < tzcap ? k->extent[2] : tzcap;
  int64_t caps[3] = {2147483647, 65535, 65535};
  k->block[0] = (uint32_t)tx;
  k->block[1] = (uint32_t)ty;
  k->block[2] = (uint32_t)tz;
  for (int ax = 0; ax < 3; ax++) {
    int64_t e = k->extent[3 + ax];
    k->grid[ax] = (uint32_t)(e < caps[ax] ? e : caps[ax]);
    k->stride[3 + ax] = e > caps[ax];
    k->stride[ax] = k->extent[ax] > k->block[ax];
  }
}

static void emit_kernel(gen *g, uint32_t top) {
  const leir_nest *n = g->p->nests[top];
  leir__cuda_kernel *k = &g->out->kernels[top];
  leir__strbuf *b = &g->src;
  g->top = top;
  memset(k, 0, sizeof *k);
  snprintf(k->name, sizeof k->name, "%snest%u", g->prefix, top);
  k->top = top;
  geometry(g, n, k);
  uint32_t line, col;
  leir__position(g->p, n->pos, &line, &col);

  leir__sb_printf(&g->rep, "kernel %s: nest %u", k->name, top + 1);
  if (line) leir__sb_printf(&g->rep, " (line %u, column %u)", line, col);
  leir__sb_printf(&g->rep, ": grid (%u, %u, %u), block (%u, %u, %u)\n", k->grid[0], k->grid[1],
                  k->grid[2], k->block[0], k->block[1], k->block[2]);
  if (g->nhoisted == 0)
    leir__sb_puts(&g->rep, "  no bound loop: the nest runs in a single thread\n");
  for (int ax = 0; ax < LEIR__NAX; ax++) {
    bool any = false;
    for (uint32_t j = 0; j < g->nhoisted; j++)
      if (axis_of(g->p, g->hoisted[j]) == ax) {
        leir__sb_printf(&g->rep, "%s%s", any ? " * " : "  bound: ",
                        leir__sym_name(g->p, g->hoisted[j]->sym));
        any = true;
      }
    if (any)
      leir__sb_printf(&g->rep, " -> %s (extent %" PRId64 "%s)\n", axis_names[ax], k->extent[ax],
                      k->stride[ax] ? ", above the hardware limit: stride loop" : "");
  }

  /* Placement of this kernel's on-chip intermediates. */
  uint64_t shared_used = 0;
  for (uint32_t bi = 0; bi < g->a->nbuffers; bi++) plan_buffer(g, bi, k, &shared_used);
  k->shared_bytes = shared_used;
  g->barriers = shared_used > 0;
  g->nbarriers = 0;
  g->last_barrier = false;
  memset(g->dirty, 0, g->a->nbuffers * sizeof *g->dirty);

  /* Loops run inside the thread, and serial B loops in nested nests. */
  {
    leir__strbuf *r = &g->rep;
    bool any = false;
    for (uint32_t j = 0; j < n->nloops; j++)
      if (!is_hoisted(g, &n->loops[j])) {
        leir__sb_printf(r, "%s%s", any ? ", " : "  in the thread: ",
                        leir__sym_name(g->p, n->loops[j].sym));
        any = true;
      }
    if (any) leir__sb_puts(r, "\n");
    for (uint32_t i = 0; i < g->a->neqs; i++) {
      const leir__eqinfo *info = &g->a->eqs[i];
      if (info->top != top) continue;
      for (uint32_t j = 0; j < info->nloops; j++) {
        const leir__loop *l = info->loops[j];
        if (l->kind != LEIR_LOOP_BOUND || is_hoisted(g, l)) continue;
        bool first = true;
        for (uint32_t q = 0; q < i; q++)
          for (uint32_t s = 0; s < g->a->eqs[q].nloops; s++)
            if (g->a->eqs[q].loops[s] == l) first = false;
        if (first)
          leir__sb_printf(r, "  bound loop %s is inside a nested nest: it runs in the thread\n",
                          leir__sym_name(g->p, l->sym));
      }
    }
  }

  /* Signature. */
  char text[160];
  {
    leir__strbuf nest = LEIR__STRBUF_INIT;
    leir__print_nest(&nest, g->p, n, NULL);
    char *t = leir__sb_finish(&nest, NULL);
    if (t) {
      size_t len = strlen(t);
      leir__sb_printf(b, "\n// nest %u: %.*s%s\n", top + 1, len > 200 ? 200 : (int)len, t,
                      len > 200 ? "..." : "");
      free(t);
    }
  }
  uint64_t nt = (uint64_t)k->block[0] * k->block[1] * k->block[2];
  leir__sb_printf(b, "extern \"C\" __global__ void __launch_bounds__(%" PRIu64 ") %s(", nt, k->name);
  for (uint32_t j = 0; j < g->out->nparams; j++) {
    uint32_t bi = g->out->params[j];
    const leir__buffer *buf = &g->a->buffers[bi];
    leir__sb_printf(b, "%s%s%s* __restrict__ %s", j ? ", " : "",
                    buf->role == LEIR__BUF_INPUT ? "const " : "", leir__ctext_elem_type((leir_dtype)buf->dtype),
                    bufname(g, bi, text, sizeof text));
  }
  leir__sb_printf(b, "%sint* __restrict__ leir_trap) {\n", g->out->nparams ? ", " : "");
  for (uint32_t bi = 0; bi < g->a->nbuffers; bi++)
    if (g->pl[bi].place == LEIR__PLACE_SHARED && g->pl[bi].top == top)
      leir__sb_printf(b, "  __shared__ %s %s[%" PRId64 "];\n", leir__ctext_elem_type((leir_dtype)g->a->buffers[bi].dtype),
                      bufname(g, bi, text, sizeof text), g->pl[bi].size);

  /* Bound loops: linear index per axis (a stride loop above the limit). */
  int depth = 1;
  bool block_stride = false;
  for (int ax = LEIR__NAX; ax-- > 0;) {
    bool used = false;
    for (uint32_t j = 0; j < g->nhoisted; j++) used = used || axis_of(g->p, g->hoisted[j]) == ax;
    if (!used) continue;
    indent(b, depth);
    if (k->stride[ax]) {
      leir__sb_printf(b, "for (long long lin_%s = %s; lin_%s < %" PRId64 "LL; lin_%s += %s) {\n",
                      axis_short[ax], axis_names[ax], axis_short[ax], k->extent[ax],
                      axis_short[ax], axis_dims[ax]);
      if (ax >= LEIR__AX_BX) block_stride = true;
    } else {
      leir__sb_printf(b, "{ const long long lin_%s = %s;\n", axis_short[ax], axis_names[ax]);
    }
    depth++;
    int64_t below = 1;
    for (uint32_t j = g->nhoisted; j-- > 0;) {
      const leir__loop *l = g->hoisted[j];
      if (axis_of(g->p, l) != ax) continue;
      bool most = below * l->extent == k->extent[ax]; /* no modulo needed */
      indent(b, depth);
      const char *v = leir__sym_name(g->p, l->sym);
      leir__sb_printf(b, "const int v_%s = (int)(%slin_%s", v, most ? "" : "(", axis_short[ax]);
      if (below != 1) leir__sb_printf(b, " / %" PRId64 "LL", below);
      if (!most) leir__sb_printf(b, ") %% %" PRId64 "LL", l->extent);
      leir__sb_puts(b, ");\n");
      below *= l->extent;
    }
  }
  for (uint32_t bi = 0; bi < g->a->nbuffers; bi++)
    if (g->pl[bi].place == LEIR__PLACE_LOCAL && g->pl[bi].top == top) {
      indent(b, depth);
      leir__sb_printf(b, "%s %s[%" PRId64 "];\n", leir__ctext_elem_type((leir_dtype)g->a->buffers[bi].dtype),
                      bufname(g, bi, text, sizeof text), g->pl[bi].size);
    }
  emit_inits(g, depth);
  emit_body(g, n, 0, depth);
  if (g->barriers && block_stride) barrier(g, depth); /* the next block tuple reuses the arrays */
  while (depth > 1) {
    indent(b, --depth);
    leir__sb_puts(b, "}\n");
  }
  leir__sb_puts(b, "}\n");
  k->barriers = g->nbarriers;
  if (g->nbarriers)
    leir__sb_printf(&g->rep, "  barriers: %u __syncthreads() between producers and consumers of "
                             "shared arrays\n", g->nbarriers);
}

/* ---- driver ---------------------------------------------------------------- */

void leir__cuda_lowered_free(leir__cuda_lowered *l) {
  if (!l) return;
  if (l->owns_analysis) leir__analysis_free(l->a);
  free(l->source);
  free(l->report);
  free(l->kernels);
  free(l->params);
  free(l->place);
  free(l->traps);
  free(l);
}

static void scan_nest_uses(gen *g, const leir_nest *n, uint32_t top) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].eq) {
      scan_uses(g, n->items[k].eq->lhs, top);
      scan_uses(g, n->items[k].eq->rhs, top);
    } else {
      scan_nest_uses(g, n->items[k].nest, top);
    }
  }
}

leir_status leir__cuda_lower(const leir_program *p, const leir_cuda_options *o,
                             leir__cuda_lowered **out) {
  *out = NULL;
  leir__analysis *a = NULL;
  leir_status st = leir__analyze_program(p, NULL, &a);
  if (st != LEIR_OK) return st;
  st = leir__cuda_lower_analysis(a, o, out);
  if (st != LEIR_OK) {
    leir__analysis_free(a);
    return st;
  }
  (*out)->owns_analysis = true;
  return LEIR_OK;
}

leir_status leir__cuda_lower_analysis(leir__analysis *a, const leir_cuda_options *o,
                                      leir__cuda_lowered **out) {
  *out = NULL;
  const leir_program *p = a->p;
  leir_status st;
  for (uint32_t t = 0; t < p->nnests; t++) {
    st = leir__cuda_check_bound_loops(a, t);
    if (st != LEIR_OK) return st;
  }
  leir__cuda_lowered *l = calloc(1, sizeof *l);
  gen g;
  memset(&g, 0, sizeof g);
  size_t nb = a->nbuffers ? a->nbuffers : 1;
  g.pl = calloc(nb, sizeof *g.pl);
  g.user_top = malloc(nb * sizeof *g.user_top);
  g.multi = calloc(nb, sizeof *g.multi);
  g.dirty = calloc(nb, sizeof *g.dirty);
  if (!l || !g.pl || !g.user_top || !g.multi || !g.dirty) {
    free(l);
    free(g.pl);
    free(g.user_top);
    free(g.multi);
    free(g.dirty);
    return leir__error_nomem();
  }
  l->a = a;
  g.p = p;
  g.a = a;
  g.out = l;
  g.flags = o ? o->flags : 0;
  g.prefix = o && o->kernel_prefix ? o->kernel_prefix : "leir_";
  g.st = LEIR_OK;
  memset(g.user_top, 0xff, nb * sizeof *g.user_top);
  for (uint32_t t = 0; t < p->nnests; t++) scan_nest_uses(&g, p->nests[t], t);

  l->nkernels = p->nnests;
  l->kernels = calloc(p->nnests ? p->nnests : 1, sizeof *l->kernels);
  l->params = malloc(nb * sizeof *l->params);
  l->place = calloc(nb, 1);
  if (!l->kernels || !l->params || !l->place) g.st = LEIR_ERR_NOMEM;

  /* Placement first (it decides the parameter list), then the source. */
  if (g.st == LEIR_OK) {
    for (uint32_t t = 0; t < p->nnests; t++) {
      leir__cuda_kernel k;
      memset(&k, 0, sizeof k);
      g.top = t;
      geometry(&g, p->nests[t], &k);
      uint64_t used = 0;
      for (uint32_t bi = 0; bi < a->nbuffers; bi++) plan_buffer(&g, bi, &k, &used);
    }
    leir__sb_release(&g.rep);
    for (uint32_t bi = 0; bi < a->nbuffers; bi++) {
      l->place[bi] = g.pl[bi].place;
      if (g.pl[bi].place == LEIR__PLACE_GLOBAL) l->params[l->nparams++] = bi;
      /* recomputed per kernel below, with the report */
      g.pl[bi].place = LEIR__PLACE_GLOBAL;
    }
  }
  if (g.st == LEIR_OK) {
    leir__sb_printf(&g.src, "// CUDA C generated by libleir %s from %u top-level nest%s.\n",
                    LEIR_VERSION_STRING, p->nnests, p->nnests == 1 ? "" : "s");
    if (!(g.flags & LEIR_CUDA_NO_PRELUDE)) leir__sb_puts(&g.src, leir__cuda_prelude());
    for (uint32_t t = 0; t < p->nnests && g.st == LEIR_OK; t++) emit_kernel(&g, t);
  }
  if (g.st == LEIR_OK && (g.src.failed || g.rep.failed)) g.st = LEIR_ERR_NOMEM;
  free(g.pl);
  free(g.user_top);
  free(g.multi);
  free(g.dirty);
  if (g.st != LEIR_OK) {
    leir__sb_release(&g.src);
    leir__sb_release(&g.rep);
    leir__cuda_lowered_free(l);
    return g.st == LEIR_ERR_NOMEM ? leir__error_nomem() : g.st;
  }
  l->source = leir__sb_finish(&g.src, &l->source_len);
  l->report = leir__sb_finish(&g.rep, NULL);
  if (!l->source || !l->report) {
    leir__cuda_lowered_free(l);
    return leir__error_nomem();
  }
  *out = l;
  return LEIR_OK;
}
