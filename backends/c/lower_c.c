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
 *
 * This file: the C dialect of the shared expression emitter, statements,
 * loops and the function; its passes are scalar_replacement.c,
 * local_buffers.c and reciprocals.c (lower_c_internal.h, local_buffers.h).
 */
#include "lower_c.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_expr.h"
#include "c_text.h"
#include "cost_model.h"
#include "error.h"
#include "leir/run.h"
#include "local_buffers.h"
#include "lower_c_internal.h"
#include "prelude.h"
#include "semantics.h"
#include "vec.h"

/* Product of unroll factors along one loop path, at most: nested full
 * unrolls multiply the compiler's work (U^{64}U^{64}U^{64} asks for 262144
 * copies of the body), so inner U loops get what is left. */
#define MAX_UNROLL_PRODUCT 1024

static int add_site(lower *L, uint8_t kind, uint32_t dim, uint32_t pos, const char *tensor) {
  if (!leir__vec_grow32((void **)&L->sites, &L->cap_sites, (size_t)L->nsites + 1,
                        sizeof *L->sites, 16)) {
    L->failed = true;
    return 0;
  }
  L->sites[L->nsites] = (leir__c_site){kind, dim, pos, tensor};
  return (int)L->nsites++;
}

/* ---- the C dialect of the shared expression emitter (c_expr.h) ------------- */

/* Loop variables are named by depth: i0, i1, ... */
static void put_var(leir__cx *x, const leir_expr *v) {
  leir__sb_printf(leir__cx_out(x), "i%u", x->a->expr_loop[v->id]);
}

/* Trapping helpers take the run-time context first and a site number last. */
static void trap_post(leir__cx *x, const leir_expr *at) {
  lower *L = x->ctx;
  leir__sb_printf(leir__cx_out(x), ", %d", add_site(L, LEIR__TRAP_DIVZERO, 0, at->pos, NULL));
}


/* bK[flat offset] of a tensor access, with run-time checks where needed
 * (rK[tile offset] for a buffer held in a local tile, see below). */
static void element(leir__cx *x, const leir_expr *t) {
  lower *L = x->ctx;
  leir__strbuf *o = leir__cx_out(x);
  uint32_t b = L->a->expr_buffer[t->id];
  const leir__buffer *buf = &L->a->buffers[b];
  if (!L->sr_memory && leir__c_sr_element(L, o, b)) return;
  if (leir__c_lb_live(L, b)) {
    leir__c_lb_element(L, o, b, t);
    return;
  }
  leir__sb_printf(o, "b%u[", b);
  if (t->n == 0) leir__sb_puts(o, "0");
  for (uint32_t k = 0; k < t->n; k++) leir__sb_puts(o, "(");
  for (uint32_t k = 0; k < t->n; k++) {
    if (k) {
      leir__sb_puts(o, ") * ");
      put_i64(o, buf->shape[k]);
      leir__sb_puts(o, " + ");
    }
    const leir_expr *ix = t->kids[k];
    bool check = L->o->check_all_bounds || leir__expr_has_tensor(ix);
    if (check) {
      int site = add_site(L, LEIR__TRAP_BOUNDS, k, ix->pos, leir__sym_name(L->p, t->sym));
      leir__sb_puts(o, "leir_chk(rt, ");
      leir__cx_index(x, ix);
      leir__sb_puts(o, ", ");
      put_i64(o, buf->shape[k]);
      leir__sb_printf(o, ", %d)", site);
    } else {
      leir__cx_index(x, ix);
    }
  }
  if (t->n) leir__sb_puts(o, ")");
  leir__sb_puts(o, "]");
}

static const leir__cx_dialect c_dialect = {
    .put_i64 = put_i64,
    .nan = {"((float)NAN)", "((double)NAN)"},
    .inf = {"((float)INFINITY)", "((double)INFINITY)"},
    .neg_inf = {"(-(float)INFINITY)", "(-(double)INFINITY)"},
    .put_var = put_var,
    .cast_var = false,
    .trap_pre = "rt, ",
    .trap_post = trap_post,
    .element = element,
    .range_index = true,
    .hoisted_reciprocal = leir__c_hoisted_reciprocal,
};

/* ---- statements ------------------------------------------------------------- */

/* b[off] = v converted to the buffer's dtype (into the statement). */
static void emit_store(lower *L, const leir_expr *lhs, const char *value) {
  uint32_t b = L->a->expr_buffer[lhs->id];
  leir_dtype dt = (leir_dtype)L->a->buffers[b].dtype;
  leir__cx_element(&L->x, lhs);
  leir__ctext_store(leir__cx_out(&L->x), dt, value);
}

static void emit_equation(lower *L, const leir__eqinfo *info, int depth) {
  leir__env_init(&L->env, info);
  const leir_expr *lhs = info->eq->lhs;
  leir__ctype ct = leir__ctype_of((leir_dtype)lhs->dtype);
  indent(L, depth);
  put(L, "{ ");
  leir__cx_begin(&L->x);
  leir__sb_printf(leir__cx_out(&L->x), "const %s v = ", leir__ctext_ctype_name(ct));
  leir__cx_value(&L->x, info->eq->rhs, ct);
  leir__sb_puts(leir__cx_out(&L->x), "; ");
  emit_store(L, lhs, "v");
  leir__cx_end(&L->x, false);
  indent(L, depth);
  put(L, "}\n");
}

void leir__c_emit_init(lower *L, const leir__eqinfo *info, uint32_t from) {
  leir__env_init(&L->env, info);
  const leir_expr *lhs = info->eq->lhs;
  bool used[LEIR__MAX_LOOPS] = {false};
  /* depths whose loop variable appears in the left-hand subscripts */
  for (uint32_t k = 0; k < lhs->n; k++) leir__used_depths(L->a, lhs->kids[k], used);
  leir_dtype dt = (leir_dtype)lhs->dtype;
  leir__ctype ct = leir__ctype_of(dt);
  leir__init_kind kind = (leir__init_kind)info->init;
  indent(L, (int)from);
  putf(L, "/* implicit initialization of %s (%s) */\n", leir__sym_name(L->p, lhs->sym),
       kind == LEIR__INIT_ZERO ? "0" : kind == LEIR__INIT_ONE ? "1"
                                : kind == LEIR__INIT_NEG_INF ? "-inf" : "+inf");
  int depth = (int)from;
  for (uint32_t d = from; d < info->nloops; d++) {
    if (!used[d]) continue;
    indent(L, depth++);
    putf(L, "for (int64_t i%u = 0; i%u < ", d, d);
    put_i64(L->out, info->loops[d]->extent);
    putf(L, "; i%u++)\n", d);
  }
  indent(L, depth);
  put(L, "{ ");
  leir__cx_begin(&L->x);
  leir__strbuf *o = leir__cx_out(&L->x);
  leir__sb_printf(o, "const %s v = ", leir__ctext_ctype_name(ct));
  if (ct == LEIR__CT_I64)
    put_i64(o, leir__init_value_i64(kind, dt));
  else
    leir__cx_float_const(&L->x, o, leir__init_value_f64(kind), ct);
  leir__sb_puts(o, "; ");
  emit_store(L, lhs, "v");
  leir__cx_end(&L->x, false);
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

static void emit_loops_at(lower *L, const leir_nest *n, uint32_t k, uint32_t depth,
                          bool in_parallel, bool in_simd);

/* Loop k of nest n and what it holds, inside the local buffers whose
 * region starts there. */
static void emit_loops(lower *L, const leir_nest *n, uint32_t k, uint32_t depth, bool in_parallel,
                       bool in_simd) {
  uint32_t opened = 0;
  if (L->lb && depth == k && n == L->p->nests[L->top]) opened = leir__c_lb_open(L, k, depth);
  emit_loops_at(L, n, k, depth, in_parallel, in_simd);
  if (opened) leir__c_lb_close(L, k, depth);
}

static void emit_loops_at(lower *L, const leir_nest *n, uint32_t k, uint32_t depth,
                          bool in_parallel, bool in_simd) {
  if (stop(L)) return;
  if (k == n->nloops) {
    for (uint32_t i = 0; i < n->nitems && !stop(L); i++) {
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
  } else if (L->o->simd_alone && loop->extent > 1 && !in_simd &&
             loop->kind == LEIR_LOOP_VECTORIZED && leir__loop_independent(L->a, n, k, NULL, 0)) {
    /* one thread: V loops are still vectorized (gcc otherwise leaves a
     * register tile's inner loop scalar, 3x slower than the naive loop) */
    simd = true;
  }
  uint32_t tiles = parallel || simd || in_simd ? 0 : leir__c_sr_plan(L, n, k, depth);
  if (tiles) {
    indent(L, (int)depth);
    put(L, "{ /* scalar replacement */\n");
    leir__c_sr_copy(L, tiles, n, k, depth, true);
  }
  uint32_t rcps = leir__c_rcp_open(L, n, k, depth);
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
  put_i64(L->out, loop->extent);
  putf(L, "; i%u++) {\n", depth);
  emit_loops(L, n, k + 1, depth + 1, in_parallel || parallel, in_simd || simd);
  L->unroll = outer_unroll;
  indent(L, (int)depth);
  put(L, "}\n");
  leir__c_rcp_close(L, rcps, depth);
  if (tiles) {
    leir__c_sr_copy(L, tiles, n, k, depth, false);
    L->nsr -= tiles;
    indent(L, (int)depth);
    put(L, "}\n");
  }
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
  return leir__lower_c_max(a, o, 0, out, sites, nsites);
}

leir_status leir__lower_c_max(const leir__analysis *a, const leir__c_options *o, size_t max_bytes,
                              leir__strbuf *out, leir__c_site **sites, uint32_t *nsites) {
  lower L;
  sr_buf tiles[SR_MAX_BUFS];
  memset(&L, 0, sizeof L);
  L.sr = tiles;
  L.a = a;
  L.p = a->p;
  L.o = o;
  L.out = out;
  leir__cx_init(&L.x, &c_dialect, a, &L, out);
  L.x.env = &L.env;
  if (max_bytes) L.x.max_bytes = max_bytes;
  if (stop(&L)) {
    leir__cx_release(&L.x);
    return leir__cx_status(&L.x);
  }
  leir__c_lb_plan_all(&L);
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
      if (a->eqs[i].top == t && a->eqs[i].init != LEIR__INIT_NONE &&
          !(L.lb && L.lb[a->eqs[i].lhs_buffer].on))
        leir__c_emit_init(&L, &a->eqs[i], 0);
    L.top = t;
    emit_nest(&L, L.p->nests[t], 0, false, false);
    if (stop(&L)) break;
  }
  if (!stop(&L)) put(&L, "  return 0;\n}\n");
  leir_status st = stop(&L) ? leir__cx_status(&L.x) : LEIR_OK;
  if (st == LEIR_OK && L.failed) st = leir__error_nomem();
  leir__cx_release(&L.x);
  free(L.lb);
  free(L.rcp);
  if (st != LEIR_OK) {
    free(L.sites);
    return st;
  }
  if (sites) {
    *sites = L.sites;
    *nsites = L.nsites;
  } else {
    free(L.sites);
  }
  return LEIR_OK;
}
