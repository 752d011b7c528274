/*
 * The reference evaluator: the semantic oracle of spec/leir.md §3, written
 * to be read next to the spec rather than to be fast.
 *
 *  §3.1  top-level nests run in order; for every iteration point of a nest
 *        (outermost loop slowest) its items run in text order: an equation
 *        evaluates its right side, then stores; a nested nest runs all its
 *        iterations.
 *  §3.2  every loop kind is a sequential loop.
 *  §3.3  values follow backends/semantics.h (the same rules as the C and
 *        CUDA lowerings, with the same helpers from backends/prelude.h).
 *  §3.4  before a top-level nest starts, every element that an equation
 *        with an implicit initialization writes is set to its identity.
 *  §3.5  buffers come from the analysis: one per (name, rank) definition;
 *        reads bind to the buffer the analysis chose.
 * Every access is bounds-checked at run time (not only indirect ones), and
 * integer division by zero traps: both end the run with LEIR_ERR_RUNTIME
 * and a message naming the tensor and position. Intermediates start filled
 * with the output sentinel, like in every backend. A wall-clock deadline is
 * checked every TICK_WORK units of work (LEIR_ERR_TIMEOUT): one unit per
 * expression node evaluated and per element stored, so one huge expression
 * (a max of a million arguments) cannot run far past it.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bench.h"
#include "error.h"
#include "prelude.h"
#include "semantics.h"

typedef struct interp {
  const leir__analysis *a;
  const leir_program *p;
  unsigned char **data;            /* by analysis buffer */
  int64_t vals[LEIR__MAX_LOOPS];   /* value of the loop at each depth */
  uint32_t budget;                 /* units of work until the next clock check */
  double deadline;
  jmp_buf on_fail;
} interp;

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static _Noreturn void
fail(interp *it, leir_status st, const leir_expr *at, const char *fmt, ...) {
  char msg[900];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  uint32_t line = 0, col = 0;
  if (at) leir__position(it->p, at->pos, &line, &col);
  leir__error(st, st == LEIR_ERR_TIMEOUT ? "run.timeout" : "run.trap", NULL, line, col, "%s",
              msg);
  longjmp(it->on_fail, 1);
}

/* Work between two reads of the clock: about a millisecond of evaluation. */
#define TICK_WORK 65536u

static _Noreturn void timed_out(interp *it) {
  fail(it, LEIR_ERR_TIMEOUT, NULL, "the interpreter exceeded its time limit");
}

/* One unit of work (an expression node, a store). */
static inline void tick(interp *it) {
  if (--it->budget) return;
  it->budget = TICK_WORK;
  if (leir__now() > it->deadline) timed_out(it);
}

static int64_t loop_value(const interp *it, const leir_expr *var) {
  return it->vals[it->a->expr_loop[var->id]];
}

static bool eval_cond(interp *it, const leir_expr *e);
static int64_t eval_i64(interp *it, const leir_expr *e);

/* ---- element addressing -------------------------------------------------- */

/* Flat offset of a tensor access; every subscript is checked. */
static int64_t offset_of(interp *it, const leir_expr *t, const leir__buffer **bufp) {
  uint32_t b = it->a->expr_buffer[t->id];
  const leir__buffer *buf = &it->a->buffers[b];
  int64_t off = 0;
  for (uint32_t k = 0; k < t->n; k++) {
    const leir_expr *sub = t->kids[k];
    /* the common subscripts (a loop variable, a constant) without a call */
    int64_t ix = sub->kind == LEIR_EXPR_VAR ? loop_value(it, sub)
                 : sub->kind == LEIR_EXPR_NUMBER && sub->u.num->is_int ? sub->u.num->ival
                                                                        : eval_i64(it, sub);
    if (ix < 0 || ix >= buf->shape[k])
      fail(it, LEIR_ERR_RUNTIME, t->kids[k],
           "index %lld is out of range [0, %lld) in subscript %u of %s", (long long)ix,
           (long long)buf->shape[k], k + 1, leir__sym_name(it->p, t->sym));
    off = off * buf->shape[k] + ix;
  }
  *bufp = buf;
  return off;
}

static const unsigned char dtype_bytes[LEIR_DTYPE_COUNT] = {2, 2, 4, 8, 1, 2, 4, 8, 1, 1};

static void *element(interp *it, const leir_expr *t, leir_dtype *dt) {
  const leir__buffer *buf;
  int64_t off = offset_of(it, t, &buf);
  *dt = (leir_dtype)buf->dtype;
  uint32_t b = (uint32_t)(buf - it->a->buffers);
  return it->data[b] + (size_t)off * dtype_bytes[*dt];
}

/* ---- tensor reads, converted to the computation type ---------------------- */

static int64_t raw_int(const void *p, leir_dtype dt) {
  switch (dt) {
    case LEIR_I8: return *(const int8_t *)p;
    case LEIR_I16: return *(const int16_t *)p;
    case LEIR_I32: return *(const int32_t *)p;
    case LEIR_I64: return *(const int64_t *)p;
    case LEIR_U8: return *(const uint8_t *)p;
    default: return *(const uint8_t *)p != 0; /* bool */
  }
}

static float read_f32(interp *it, const leir_expr *t) {
  leir_dtype dt;
  const void *p = element(it, t, &dt);
  switch (dt) {
    case LEIR_F64: return (float)*(const double *)p;
    case LEIR_F32: return *(const float *)p;
    case LEIR_F16: return leir_f16_to_f32(*(const uint16_t *)p);
    case LEIR_BF16: return leir_bf16_to_f32(*(const uint16_t *)p);
    default: return (float)raw_int(p, dt);
  }
}

static double read_f64(interp *it, const leir_expr *t) {
  leir_dtype dt;
  const void *p = element(it, t, &dt);
  switch (dt) {
    case LEIR_F64: return *(const double *)p;
    case LEIR_F32: return (double)*(const float *)p;
    case LEIR_F16: return (double)leir_f16_to_f32(*(const uint16_t *)p);
    case LEIR_BF16: return (double)leir_bf16_to_f32(*(const uint16_t *)p);
    default: return (double)raw_int(p, dt);
  }
}

static int64_t read_i64(interp *it, const leir_expr *t) {
  leir_dtype dt;
  const void *p = element(it, t, &dt);
  switch (dt) {
    case LEIR_F64: return leir_f64_to_i64(*(const double *)p);
    case LEIR_F32: return leir_f64_to_i64((double)*(const float *)p);
    case LEIR_F16: return leir_f64_to_i64((double)leir_f16_to_f32(*(const uint16_t *)p));
    case LEIR_BF16: return leir_f64_to_i64((double)leir_bf16_to_f32(*(const uint16_t *)p));
    default: return raw_int(p, dt);
  }
}

/* ---- values -------------------------------------------------------------- */

#define FT float
#define EVAL eval_f32
#define READ read_f32
#define F_EXP leir_exp_f32
#define F_LOG leir_log_f32
#define F_SQRT sqrtf
#define F_ABS fabsf
#define F_ERF erff
#define F_POW powf
#define F_MAX leir_fmax_f32
#define F_MIN leir_fmin_f32
#define F_FLOORDIV leir_floordiv_f32
#define F_MOD leir_floormod_f32
#include "eval_float.inc"

#define FT double
#define EVAL eval_f64
#define READ read_f64
#define F_EXP exp
#define F_LOG log
#define F_SQRT sqrt
#define F_ABS fabs
#define F_ERF erf
#define F_POW pow
#define F_MAX leir_fmax_f64
#define F_MIN leir_fmin_f64
#define F_FLOORDIV leir_floordiv_f64
#define F_MOD leir_floormod_f64
#include "eval_float.inc"

/* Integer equations and index expressions: int64, wrapping. */
static int64_t eval_i64(interp *it, const leir_expr *e) {
  tick(it);
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER:
      return e->u.num->is_int ? e->u.num->ival : leir_f64_to_i64(e->u.num->value);
    case LEIR_EXPR_INF: return leir_f64_to_i64(INFINITY);
    case LEIR_EXPR_VAR: return loop_value(it, e);
    case LEIR_EXPR_TENSOR: return read_i64(it, e);
    case LEIR_EXPR_PAREN: return eval_i64(it, e->kids[0]);
    case LEIR_EXPR_NEG: return leir_neg_i64(eval_i64(it, e->kids[0]));
    case LEIR_EXPR_BINARY: {
      int64_t x = eval_i64(it, e->kids[0]);
      int64_t y = eval_i64(it, e->kids[1]);
      switch ((leir_op)e->op) {
        case LEIR_OP_ADD: return leir_add_i64(x, y);
        case LEIR_OP_SUB: return leir_sub_i64(x, y);
        case LEIR_OP_MUL: return leir_mul_i64(x, y);
        case LEIR_OP_DIV:
        case LEIR_OP_FLOORDIV:
        case LEIR_OP_MOD:
          if (y == 0) fail(it, LEIR_ERR_RUNTIME, e, "integer division by zero");
          return e->op == LEIR_OP_MOD ? leir_floormod_i64(x, y) : leir_floordiv_i64(x, y);
        case LEIR_OP_POW:
          if (x == 0 && y < 0) fail(it, LEIR_ERR_RUNTIME, e, "integer division by zero (0 ** negative)");
          return leir_pow_i64(x, y);
        default: break;
      }
      break;
    }
    case LEIR_EXPR_CALL:
      switch ((leir_op)e->op) {
        case LEIR_OP_EXP: return leir_f64_to_i64(exp((double)eval_i64(it, e->kids[0])));
        case LEIR_OP_LOG: return leir_f64_to_i64(log((double)eval_i64(it, e->kids[0])));
        case LEIR_OP_SQRT: return leir_f64_to_i64(sqrt((double)eval_i64(it, e->kids[0])));
        case LEIR_OP_ERF: return leir_f64_to_i64(erf((double)eval_i64(it, e->kids[0])));
        case LEIR_OP_ABS: return leir_abs_i64(eval_i64(it, e->kids[0]));
        case LEIR_OP_MAX:
        case LEIR_OP_MIN: {
          int64_t acc = eval_i64(it, e->kids[0]);
          for (uint32_t k = 1; k < e->n; k++) {
            int64_t y = eval_i64(it, e->kids[k]);
            acc = e->op == LEIR_OP_MAX ? leir_max_i64(acc, y) : leir_min_i64(acc, y);
          }
          return acc;
        }
        case LEIR_OP_IF_THEN_ELSE:
          return eval_cond(it, e->kids[0]) ? eval_i64(it, e->kids[1]) : eval_i64(it, e->kids[2]);
        default: break;
      }
      break;
    case LEIR_EXPR_COMPARE:
    case LEIR_EXPR_AND:
    case LEIR_EXPR_OR: return eval_cond(it, e) ? 1 : 0; /* a condition as a value */
  }
  fail(it, LEIR_ERR_INTERNAL, e, "cannot evaluate this expression as an integer");
}

/* ---- conditions ---------------------------------------------------------- */

static bool compare_i64(leir_op op, int64_t x, int64_t y) {
  switch (op) {
    case LEIR_OP_LT: return x < y;
    case LEIR_OP_LE: return x <= y;
    case LEIR_OP_GT: return x > y;
    case LEIR_OP_GE: return x >= y;
    case LEIR_OP_EQ: return x == y;
    default: return x != y;
  }
}

static bool compare_f64(leir_op op, double x, double y) {
  switch (op) {
    case LEIR_OP_LT: return x < y;
    case LEIR_OP_LE: return x <= y;
    case LEIR_OP_GT: return x > y;
    case LEIR_OP_GE: return x >= y;
    case LEIR_OP_EQ: return x == y;
    default: return x != y;
  }
}

static bool eval_cond(interp *it, const leir_expr *e) {
  tick(it);
  e = leir__cond_strip(e); /* ((a < 2)) is a < 2, at any depth */
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_AND: return eval_cond(it, e->kids[0]) && eval_cond(it, e->kids[1]);
    case LEIR_EXPR_OR: return eval_cond(it, e->kids[0]) || eval_cond(it, e->kids[1]);
    case LEIR_EXPR_COMPARE: {
      /* a op1 b op2 c: each operand evaluated once, left to right, stopping
       * at the first false comparison */
      if (leir__cond_ctype(e) == LEIR__CT_I64) {
        int64_t x = eval_i64(it, e->kids[0]);
        for (uint32_t k = 0; k + 1 < e->n; k++) {
          int64_t y = eval_i64(it, e->kids[k + 1]);
          if (!compare_i64((leir_op)e->u.cmp_ops[k], x, y)) return false;
          x = y;
        }
      } else {
        double x = eval_f64(it, e->kids[0]);
        for (uint32_t k = 0; k + 1 < e->n; k++) {
          double y = eval_f64(it, e->kids[k + 1]);
          if (!compare_f64((leir_op)e->u.cmp_ops[k], x, y)) return false;
          x = y;
        }
      }
      return true;
    }
    default: break;
  }
  /* a bare value: true when non-zero (NaN is true) */
  if (leir__cond_ctype(e) == LEIR__CT_I64) return eval_i64(it, e) != 0;
  return eval_f64(it, e) != 0.0;
}

/* ---- stores -------------------------------------------------------------- */

static void store_f32(void *p, leir_dtype dt, float v) {
  if (dt == LEIR_F16)
    *(uint16_t *)p = leir_f32_to_f16(v);
  else if (dt == LEIR_BF16)
    *(uint16_t *)p = leir_f32_to_bf16(v);
  else
    *(float *)p = v;
}

static void store_i64(void *p, leir_dtype dt, int64_t v) {
  switch (dt) {
    case LEIR_I8: *(int8_t *)p = leir_wrap_i8(v); break;
    case LEIR_I16: *(int16_t *)p = leir_wrap_i16(v); break;
    case LEIR_I32: *(int32_t *)p = leir_wrap_i32(v); break;
    case LEIR_I64: *(int64_t *)p = v; break;
    case LEIR_U8: *(uint8_t *)p = (uint8_t)v; break;
    default: *(uint8_t *)p = v != 0; break; /* bool */
  }
}

/* ---- running ------------------------------------------------------------- */

static void run_equation(interp *it, const leir__eqinfo *info) {
  tick(it);
  const leir_expr *lhs = info->eq->lhs, *rhs = info->eq->rhs;
  leir_dtype dt = (leir_dtype)lhs->dtype;
  switch (leir__ctype_of((leir_dtype)lhs->dtype)) {
    case LEIR__CT_F32: {
      float v = eval_f32(it, rhs);
      store_f32(element(it, lhs, &dt), dt, v);
      break;
    }
    case LEIR__CT_F64: {
      double v = eval_f64(it, rhs);
      *(double *)element(it, lhs, &dt) = v;
      break;
    }
    default: {
      int64_t v = eval_i64(it, rhs);
      store_i64(element(it, lhs, &dt), dt, v);
      break;
    }
  }
}

static void run_nest(interp *it, const leir_nest *n, uint32_t depth);

/* Loops k.. of nest n, then its items, at every iteration point. */
static void run_loops(interp *it, const leir_nest *n, uint32_t k, uint32_t depth) {
  if (k == n->nloops) {
    for (uint32_t i = 0; i < n->nitems; i++) {
      if (n->items[i].eq)
        run_equation(it, &it->a->eqs[it->a->eq_index[n->items[i].eq->id]]);
      else
        run_nest(it, n->items[i].nest, depth);
    }
    return;
  }
  for (int64_t v = 0; v < n->loops[k].extent; v++) {
    it->vals[depth] = v;
    run_loops(it, n, k + 1, depth + 1);
  }
}

static void run_nest(interp *it, const leir_nest *n, uint32_t depth) { run_loops(it, n, 0, depth); }

static void init_points(interp *it, const leir__eqinfo *info, const bool *used, uint32_t depth) {
  if (depth == info->nloops) {
    const leir_expr *lhs = info->eq->lhs;
    leir_dtype dt;
    void *p = element(it, lhs, &dt);
    leir__init_kind kind = (leir__init_kind)info->init;
    switch (leir__ctype_of(dt)) {
      case LEIR__CT_F32: store_f32(p, dt, (float)leir__init_value_f64(kind)); break;
      case LEIR__CT_F64: *(double *)p = leir__init_value_f64(kind); break;
      default: store_i64(p, dt, leir__init_value_i64(kind, dt)); break;
    }
    tick(it);
    return;
  }
  int64_t extent = used[depth] ? info->loops[depth]->extent : 1;
  for (int64_t v = 0; v < extent; v++) {
    it->vals[depth] = v;
    init_points(it, info, used, depth + 1);
  }
}

static void run_program(interp *it) {
  const leir__analysis *a = it->a;
  for (uint32_t t = 0; t < it->p->nnests; t++) {
    for (uint32_t i = 0; i < a->neqs; i++) {
      const leir__eqinfo *info = &a->eqs[i];
      if (info->top != t || info->init == LEIR__INIT_NONE) continue;
      bool used[LEIR__MAX_LOOPS] = {false};
      const leir_expr *lhs = info->eq->lhs;
      /* depths whose loop variable appears in a subscript (directly or
       * inside an indirect index): the only loops an initialization visits */
      for (uint32_t k = 0; k < lhs->n; k++) leir__used_depths(it->a, lhs->kids[k], used);
      init_points(it, info, used, 0);
    }
    run_nest(it, it->p->nests[t], 0);
  }
}

/* ---- backend operations -------------------------------------------------- */

typedef struct scratch {
  unsigned char **data;   /* by analysis buffer */
  uint32_t nbuffers;
} scratch;

static void scratch_free(scratch *s, uint32_t nknown) {
  if (!s->data) return;
  for (uint32_t i = nknown; i < s->nbuffers; i++) free(s->data[i]);
  free(s->data);
  s->data = NULL;
}

/* Intermediates, filled with the sentinel; known buffers point at the
 * caller's memory. */
static leir_status scratch_alloc(scratch *s, const leir_kernel *k, void *const *known) {
  const leir__analysis *a = k->analysis;
  s->nbuffers = a->nbuffers;
  s->data = calloc(a->nbuffers ? a->nbuffers : 1, sizeof *s->data);
  if (!s->data) return leir__error_nomem();
  for (uint32_t i = 0; i < a->nbuffers; i++) {
    if (i < k->nknown) {
      s->data[i] = known[i];
      continue;
    }
    uint64_t bytes = leir__buffer_bytes(&a->buffers[i]);
    s->data[i] = malloc(bytes ? (size_t)bytes : 1);
    if (!s->data[i]) {
      scratch_free(s, k->nknown);
      return leir__error(LEIR_ERR_RUNTIME, "run.memory", NULL, 0, 0,
                         "cannot allocate %llu bytes for intermediate %s",
                         (unsigned long long)bytes, leir__sym_name(k->program, a->buffers[i].sym));
    }
    leir__fill_sentinel(s->data[i], (leir_dtype)a->buffers[i].dtype, a->buffers[i].elements);
  }
  return LEIR_OK;
}

static leir_status run_once(leir_kernel *k, void *const *known, double timeout_s) {
  scratch s = {NULL, 0};
  leir_status st = scratch_alloc(&s, k, known);
  if (st != LEIR_OK) return st;
  interp it;
  memset(&it, 0, sizeof it);
  it.a = k->analysis;
  it.p = k->program;
  it.data = s.data;
  it.budget = TICK_WORK;
  it.deadline = leir__now() + timeout_s;
  st = LEIR_OK;
  if (setjmp(it.on_fail) == 0)
    run_program(&it);
  else
    st = leir_error_last()->status;
  scratch_free(&s, k->nknown);
  return st;
}

static leir_status interp_open(leir_backend *b) {
  (void)b;
  return LEIR_OK;
}

static void interp_close(leir_backend *b) { (void)b; }

static leir_status interp_lower(leir_backend *b, const leir__analysis *a, leir__strbuf *out) {
  (void)b, (void)a, (void)out;
  return leir__error(LEIR_ERR_UNSUPPORTED, "backend.lower", "interp", 0, 0,
                     "the interp backend evaluates programs directly and has no lowered source");
}

static leir_status interp_prepare(leir_backend *b, leir_kernel *const *ks, size_t n) {
  (void)b;
  for (size_t i = 0; i < n; i++) ks[i]->prepared = LEIR_OK;
  return LEIR_OK;
}

static leir_status interp_execute(leir_backend *b, leir_kernel *k, void *const *const *sets,
                                  size_t nsets, leir__exec_result *res) {
  for (size_t s = 0; s < nsets; s++) {
    leir_status st = run_once(k, sets[s], b->opts.timeout_s);
    if (st != LEIR_OK) {
      res->set = (int32_t)s;
      return st;
    }
  }
  return LEIR_OK;
}

static leir_status time_one(void *ctx, leir_kernel *k, void *const *bufs) {
  leir_backend *b = ctx;
  return run_once(k, bufs, b->opts.timeout_s);
}

static leir_status interp_time(leir_backend *b, leir_kernel *const *ks, size_t n,
                               void *const *const *bufs, const leir_bench_options *opts,
                               leir__samples *out, leir__exec_result *res) {
  return leir__time_loop(ks, n, bufs, opts, time_one, b, out, res);
}

static void interp_release(leir_backend *b, leir_kernel *k) {
  (void)b;
  k->impl = NULL;
}

const leir__backend_ops leir__interp_ops = {
    .name = "interp",
    .version = 1,
    .open = interp_open,
    .close = interp_close,
    .lower = interp_lower,
    .prepare = interp_prepare,
    .execute = interp_execute,
    .time = interp_time,
    .release = interp_release,
    .execute_batch = NULL,
    .honours_fp_contract = false,
    .codegen_revision = 0, /* no generated code */
    .threaded = false,
};
