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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_expr.h"
#include "c_text.h"
#include "cuda_plan.h"
#include "error.h"
#include "semantics.h"
#include "vec.h"

/* Computation types and evaluation rules are the shared ones
 * (backends/semantics.h), so GPU results agree with the interpreter. */
typedef leir__ctype ctype;
#define CT_I64 LEIR__CT_I64

static ctype ctype_of(uint8_t dt) { return leir__ctype_of((leir_dtype)dt); }

static const leir__eqinfo *info_of(leir__cuda_gen *g, const leir_equation *eq) {
  return &g->a->eqs[g->a->eq_index[eq->id]];
}

/* Emission ends at the first failure; g->st says which. */
static bool failed(leir__cuda_gen *g) {
  if (g->st == LEIR_OK) g->st = leir__cx_status(&g->x);
  if (g->st == LEIR_OK && (g->src.failed || g->rep.failed)) g->st = LEIR_ERR_NOMEM;
  return g->st != LEIR_OK;
}

/* ---- the CUDA dialect of the shared expression emitter (c_expr.h) ---------- */

static uint32_t add_trap(leir__cuda_gen *g, uint32_t buffer, uint32_t dim, const leir_expr *ix) {
  leir__cuda_lowered *o = g->out;
  if (!leir__vec_grow32((void **)&o->traps, &g->ntrap_cap, (size_t)o->ntraps + 1,
                        sizeof *o->traps, 8)) {
    leir__cx_fail(&g->x, LEIR_ERR_NOMEM);
    return 0;
  }
  leir__cuda_trap *t = &o->traps[o->ntraps++];
  t->buffer = buffer;
  t->dim = dim;
  leir__position(g->p, ix->pos, &t->line, &t->column);
  return o->ntraps;
}

static void put_i64(leir__strbuf *b, int64_t v) {
  if (v == INT64_MIN) leir__sb_puts(b, "(-0x7fffffffffffffffLL - 1)");
  else leir__sb_printf(b, "%" PRId64 "LL", v);
}

/* Loop variables keep their LEIR names: v_a, v_tx, ... (int). */
static void put_var(leir__cx *x, const leir_expr *v) {
  leir__cuda_gen *g = x->ctx;
  leir__sb_printf(leir__cx_out(x), "v_%s", leir__sym_name(g->p, v->sym));
}

/* The trap word is the last argument of every trapping helper. */
static void trap_post(leir__cx *x, const leir_expr *at) {
  (void)at;
  leir__sb_puts(leir__cx_out(x), ", leir_trap");
}

/* NAME[offset] of a tensor access (raw element, in the buffer's dtype). */
static void element(leir__cx *x, const leir_expr *t) {
  leir__cuda_gen *g = x->ctx;
  leir__strbuf *b = leir__cx_out(x);
  uint32_t bi = leir__cuda_buffer_of(g, t);
  char name[96];
  if (bi == LEIR__NONE) {
    leir__cx_fail(x, leir__error(LEIR_ERR_INTERNAL, "cuda.lower", NULL, 0, 0,
                                 "unbound tensor access"));
    return;
  }
  const leir__buffer *buf = &g->a->buffers[bi];
  const leir__cuda_placement *pl = &g->pl[bi];
  leir__sb_puts(b, leir__cuda_bufname(g, bi, name, sizeof name));
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
    bool trap = leir__expr_has_tensor(ix);
    if (trap) leir__sb_puts(b, "leir_chk(");
    leir__cx_index(x, ix);
    if (trap)
      leir__sb_printf(b, ", %" PRId64 "LL, leir_trap, %u)", buf->shape[k], add_trap(g, bi, k, ix));
    if (stride != 1) leir__sb_printf(b, " * %" PRId64 "LL", stride);
  }
  if (!any) leir__sb_putc(b, '0');
  leir__sb_putc(b, ']');
}

static const leir__cx_dialect cuda_dialect = {
    .put_i64 = put_i64,
    .nan = {"LEIR_NANF", "LEIR_NAN"},
    .inf = {"LEIR_INFF", "LEIR_INF"},
    .neg_inf = {"(-LEIR_INFF)", "(-LEIR_INF)"},
    .put_var = put_var,
    .cast_var = true,
    .trap_pre = "",
    .trap_post = trap_post,
    .element = element,
    .range_index = false,
};

/* ---- statements ----------------------------------------------------------- */

static void indent(leir__strbuf *b, int depth) {
  for (int k = 0; k < depth; k++) leir__sb_puts(b, "  ");
}

/* Stores `value` (a C expression of the equation's compute type), into the
 * statement being emitted. */
static void emit_store(leir__cuda_gen *g, const leir_expr *lhs, const char *value) {
  uint32_t bi = leir__cuda_buffer_of(g, lhs);
  uint8_t dt = g->a->buffers[bi].dtype;
  leir__cx_element(&g->x, lhs);
  leir__ctext_store(leir__cx_out(&g->x), (leir_dtype)dt, value);
}

static void emit_equation(leir__cuda_gen *g, const leir_equation *eq, int depth) {
  const leir__eqinfo *info = info_of(g, eq);
  ctype ct = ctype_of(g->a->buffers[info->lhs_buffer].dtype);
  leir__strbuf *b = &g->src;
  indent(b, depth);
  leir__sb_puts(b, "{ ");
  leir__cx_begin(&g->x);
  leir__strbuf *o = leir__cx_out(&g->x);
  leir__sb_printf(o, "const %s leir_v = ", leir__ctext_ctype_name(ct));
  leir__cx_value(&g->x, eq->rhs, ct);
  leir__sb_puts(o, ";\n");
  indent(o, depth + 1);
  emit_store(g, eq->lhs, "leir_v");
  leir__cx_end(&g->x, false);
  indent(b, depth);
  leir__sb_puts(b, "}\n");
}

static void emit_for(leir__cuda_gen *g, const leir__loop *l, int depth) {
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
static void shared_access(leir__cuda_gen *g, const leir_expr *e, bool *set) {
  if (e->kind == LEIR_EXPR_TENSOR) {
    uint32_t bi = leir__cuda_buffer_of(g, e);
    if (bi != LEIR__NONE && g->pl[bi].place == LEIR__PLACE_SHARED) set[bi] = true;
  }
  for (uint32_t k = 0; k < e->n; k++) shared_access(g, e->kids[k], set);
}

static void item_sets(leir__cuda_gen *g, const leir__item *it, bool *reads, bool *writes) {
  if (it->eq) {
    uint32_t bi = leir__cuda_buffer_of(g, it->eq->lhs);
    if (bi != LEIR__NONE && g->pl[bi].place == LEIR__PLACE_SHARED) writes[bi] = true;
    for (uint32_t k = 0; k < it->eq->lhs->n; k++) shared_access(g, it->eq->lhs->kids[k], reads);
    shared_access(g, it->eq->rhs, reads);
    return;
  }
  for (uint32_t k = 0; k < it->nest->nitems; k++) item_sets(g, &it->nest->items[k], reads, writes);
}

static bool overlaps(leir__cuda_gen *g, const bool *x, const bool *y) {
  for (uint32_t k = 0; k < g->a->nbuffers; k++)
    if (x[k] && y[k]) return true;
  return false;
}

static void barrier(leir__cuda_gen *g, int depth) {
  if (g->last_barrier) return;
  indent(&g->src, depth);
  leir__sb_puts(&g->src, "__syncthreads();\n");
  g->nbarriers++;
  g->last_barrier = true;
  memset(g->dirty, 0, g->a->nbuffers * sizeof *g->dirty);
}

static void emit_body(leir__cuda_gen *g, const leir_nest *n, uint32_t from_loop, int depth);

static void emit_items(leir__cuda_gen *g, const leir_nest *n, int depth) {
  size_t nb = g->a->nbuffers;
  bool *reads = calloc(nb ? nb : 1, 1), *writes = calloc(nb ? nb : 1, 1);
  if (!reads || !writes) {
    free(reads);
    free(writes);
    g->st = LEIR_ERR_NOMEM;
    return;
  }
  for (uint32_t k = 0; k < n->nitems && !failed(g); k++) {
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
static void emit_body(leir__cuda_gen *g, const leir_nest *n, uint32_t from_loop, int depth) {
  if (failed(g)) return;
  if (from_loop == n->nloops) {
    emit_items(g, n, depth);
    return;
  }
  const leir__loop *l = &n->loops[from_loop];
  if (leir__cuda_is_hoisted(g, l)) {
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

typedef struct loop_use {
  leir__cuda_gen *g;
  const leir__eqinfo *info;
  const leir__loop *l;
} loop_use;

static int loop_used(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  const loop_use *u = v->ud;
  return (*slot)->kind == LEIR_EXPR_VAR && leir__cuda_loop_of_var(u->g, u->info, *slot) == u->l
             ? LEIR__VISIT_STOP
             : LEIR__VISIT_NEXT;
}

static bool uses_loop(leir__cuda_gen *g, const leir__eqinfo *info, const leir_expr *e, const leir__loop *l) {
  loop_use u = {g, info, l};
  leir__visit v = LEIR__VISIT_INIT(loop_used, &u);
  return !leir__visit_const(&v, e);
}

static const char *const init_names[] = {"", "0", "1", "-inf", "+inf"};

static void emit_inits(leir__cuda_gen *g, int depth) {
  for (uint32_t i = 0; i < g->a->neqs && !failed(g); i++) {
    const leir__eqinfo *info = &g->a->eqs[i];
    if (info->top != g->top || info->init == LEIR__INIT_NONE) continue;
    const leir_expr *lhs = info->eq->lhs;
    uint32_t bi = info->lhs_buffer;
    uint8_t dt = g->a->buffers[bi].dtype;
    char name[96];
    leir__sb_printf(&g->rep, "  init: %s = %s before the nest, over", leir__cuda_bufname(g, bi, name, sizeof name),
                    init_names[info->init]);
    int d = depth;
    uint32_t nl = 0;
    for (uint32_t k = 0; k < info->nloops; k++) {
      const leir__loop *l = info->loops[k];
      if (leir__cuda_is_hoisted(g, l) || !uses_loop(g, info, lhs, l)) continue;
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
      leir__cx_float_const(&g->x, &v, leir__init_value_f64((leir__init_kind)info->init), ct);
    leir__sb_putc(&v, ')');
    char *value = leir__sb_finish(&v, NULL);
    if (!value) {
      g->st = LEIR_ERR_NOMEM;
      return;
    }
    leir__cx_begin(&g->x);
    emit_store(g, lhs, value);
    leir__cx_end(&g->x, true);
    free(value);
    while (d > depth) {
      indent(&g->src, --d);
      leir__sb_puts(&g->src, "}\n");
    }
    if (g->pl[bi].place == LEIR__PLACE_SHARED) g->dirty[bi] = true;
    g->last_barrier = false;
  }
}

/* ---- kernels -------------------------------------------------------------- */

static void emit_kernel(leir__cuda_gen *g, uint32_t top) {
  const leir_nest *n = g->p->nests[top];
  leir__cuda_kernel *k = &g->out->kernels[top];
  leir__strbuf *b = &g->src;
  g->top = top;
  memset(k, 0, sizeof *k);
  snprintf(k->name, sizeof k->name, "%snest%u", g->prefix, top);
  k->top = top;
  leir__cuda_geometry(g, n, k);
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
      if (leir__cuda_axis_of(g->p, g->hoisted[j]) == ax) {
        leir__sb_printf(&g->rep, "%s%s", any ? " * " : "  bound: ",
                        leir__sym_name(g->p, g->hoisted[j]->sym));
        any = true;
      }
    if (any)
      leir__sb_printf(&g->rep, " -> %s (extent %" PRId64 "%s)\n", leir__cuda_axis_names[ax], k->extent[ax],
                      k->stride[ax] ? ", above the hardware limit: stride loop" : "");
  }

  /* Placement of this kernel's on-chip intermediates. */
  uint64_t shared_used = 0;
  for (uint32_t bi = 0; bi < g->a->nbuffers; bi++) leir__cuda_plan_buffer(g, bi, k, &shared_used);
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
      if (!leir__cuda_is_hoisted(g, &n->loops[j])) {
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
        if (l->kind != LEIR_LOOP_BOUND || leir__cuda_is_hoisted(g, l)) continue;
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
                    leir__cuda_bufname(g, bi, text, sizeof text));
  }
  leir__sb_printf(b, "%sint* __restrict__ leir_trap) {\n", g->out->nparams ? ", " : "");
  for (uint32_t bi = 0; bi < g->a->nbuffers; bi++)
    if (g->pl[bi].place == LEIR__PLACE_SHARED && g->pl[bi].top == top)
      leir__sb_printf(b, "  __shared__ %s %s[%" PRId64 "];\n", leir__ctext_elem_type((leir_dtype)g->a->buffers[bi].dtype),
                      leir__cuda_bufname(g, bi, text, sizeof text), g->pl[bi].size);

  /* Bound loops: linear index per axis (a stride loop above the limit). */
  int depth = 1;
  bool block_stride = false;
  for (int ax = LEIR__NAX; ax-- > 0;) {
    bool used = false;
    for (uint32_t j = 0; j < g->nhoisted; j++) used = used || leir__cuda_axis_of(g->p, g->hoisted[j]) == ax;
    if (!used) continue;
    indent(b, depth);
    if (k->stride[ax]) {
      leir__sb_printf(b, "for (long long lin_%s = %s; lin_%s < %" PRId64 "LL; lin_%s += %s) {\n",
                      leir__cuda_axis_short[ax], leir__cuda_axis_names[ax], leir__cuda_axis_short[ax], k->extent[ax],
                      leir__cuda_axis_short[ax], leir__cuda_axis_dims[ax]);
      if (ax >= LEIR__AX_BX) block_stride = true;
    } else {
      leir__sb_printf(b, "{ const long long lin_%s = %s;\n", leir__cuda_axis_short[ax], leir__cuda_axis_names[ax]);
    }
    depth++;
    int64_t below = 1;
    for (uint32_t j = g->nhoisted; j-- > 0;) {
      const leir__loop *l = g->hoisted[j];
      if (leir__cuda_axis_of(g->p, l) != ax) continue;
      bool most = below * l->extent == k->extent[ax]; /* no modulo needed */
      indent(b, depth);
      const char *v = leir__sym_name(g->p, l->sym);
      leir__sb_printf(b, "const int v_%s = (int)(%slin_%s", v, most ? "" : "(", leir__cuda_axis_short[ax]);
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
                      leir__cuda_bufname(g, bi, text, sizeof text), g->pl[bi].size);
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
  leir__cuda_gen g;
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
  leir__cx_init(&g.x, &cuda_dialect, a, &g, &g.src);
  memset(g.user_top, 0xff, nb * sizeof *g.user_top);
  for (uint32_t t = 0; t < p->nnests; t++) leir__cuda_scan_nest_uses(&g, p->nests[t], t);

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
      leir__cuda_geometry(&g, p->nests[t], &k);
      uint64_t used = 0;
      for (uint32_t bi = 0; bi < a->nbuffers; bi++) leir__cuda_plan_buffer(&g, bi, &k, &used);
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
    for (uint32_t t = 0; t < p->nnests && !failed(&g); t++) emit_kernel(&g, t);
  }
  failed(&g);
  leir__cx_release(&g.x);
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

