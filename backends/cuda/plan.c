/*
 * CUDA lowering, part 1: storage and launch planning (docs/cuda.md).
 *
 * Which top-level nests use each buffer, the launch geometry of a kernel
 * (the B loops of a nest's header: threadIdx/blockIdx axes, linearized,
 * stride loops above the hardware limits) and where an intermediate lives
 * in it (global memory, a per-thread array or a __shared__ array, with
 * dimensions indexed by a bound variable alone dropped). The printing of
 * the source is lower.c; both share leir__cuda_gen (cuda_plan.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "c_text.h"
#include "cuda_plan.h"

const char *leir__cuda_bufname(leir__cuda_gen *g, uint32_t b, char *buf, size_t cap) {
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

uint32_t leir__cuda_buffer_of(leir__cuda_gen *g, const leir_expr *t) {
  return t->id < g->a->nids ? g->a->expr_buffer[t->id] : LEIR__NONE;
}

bool leir__cuda_is_hoisted(leir__cuda_gen *g, const leir__loop *l) {
  for (uint32_t k = 0; k < g->nhoisted; k++)
    if (g->hoisted[k] == l) return true;
  return false;
}

int leir__cuda_axis_of(const leir_program *p, const leir__loop *l) {
  const char *v = leir__sym_name(p, l->sym);
  return (v[0] == 'b' ? 3 : 0) + (v[1] - 'x');
}

const leir__loop *leir__cuda_loop_of_var(leir__cuda_gen *g, const leir__eqinfo *info, const leir_expr *v) {
  uint32_t s = v->id < g->a->nids ? g->a->expr_loop[v->id] : LEIR__NONE;
  return s < info->nloops ? info->loops[s] : NULL;
}


static void note_use(leir__cuda_gen *g, uint32_t bi, uint32_t top) {
  if (bi == LEIR__NONE) return;
  if (g->user_top[bi] == LEIR__NONE)
    g->user_top[bi] = top;
  else if (g->user_top[bi] != top)
    g->multi[bi] = true;
}

typedef struct use_scan {
  leir__cuda_gen *g;
  uint32_t top;
} use_scan;

static int scan_use(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  const use_scan *s = v->ud;
  if ((*slot)->kind == LEIR_EXPR_TENSOR) note_use(s->g, leir__cuda_buffer_of(s->g, *slot), s->top);
  return LEIR__VISIT_NEXT;
}

/* Dimension k of every access to buffer bi is the same hoisted loop variable
 * (of a block axis when `block_only`)? */
static bool dim_bound(leir__cuda_gen *g, uint32_t bi, uint32_t k, bool block_only, const leir_expr *e,
                      const leir__eqinfo *info, const leir__loop **seen) {
  if (e->kind == LEIR_EXPR_TENSOR && leir__cuda_buffer_of(g, e) == bi) {
    const leir_expr *ix = e->kids[k];
    if (ix->kind != LEIR_EXPR_VAR) return false;
    const leir__loop *l = leir__cuda_loop_of_var(g, info, ix);
    if (!l || !leir__cuda_is_hoisted(g, l) || (block_only && leir__cuda_axis_of(g->p, l) < LEIR__AX_BX)) return false;
    if (*seen && *seen != l) return false;
    *seen = l;
  }
  for (uint32_t j = 0; j < e->n; j++)
    if (!dim_bound(g, bi, k, block_only, e->kids[j], info, seen)) return false;
  return true;
}

void leir__cuda_plan_buffer(leir__cuda_gen *g, uint32_t bi, const leir__cuda_kernel *kern, uint64_t *shared_used) {
  const leir__buffer *buf = &g->a->buffers[bi];
  leir__cuda_placement *pl = &g->pl[bi];
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
  if (shared && *shared_used + bytes > LEIR__CUDA_MAX_SHARED_BYTES) {
    leir__sb_printf(&g->rep,
                    "  memory: %s has scope s but needs %" PRIu64 " bytes per block (limit %d): "
                    "global memory\n",
                    nm, bytes, LEIR__CUDA_MAX_SHARED_BYTES);
    return;
  }
  if (!shared && bytes > LEIR__CUDA_MAX_LOCAL_BYTES) {
    leir__sb_printf(&g->rep,
                    "  memory: %s has scope l but needs %" PRIu64 " bytes per thread (limit %d): "
                    "global memory\n",
                    nm, bytes, LEIR__CUDA_MAX_LOCAL_BYTES);
    return;
  }
  pl->place = shared ? LEIR__PLACE_SHARED : LEIR__PLACE_LOCAL;
  pl->top = g->top;
  pl->size = size;
  if (shared) *shared_used += bytes;
  leir__sb_printf(&g->rep, "  memory: %s -> %s %s %s[%" PRId64 "]\n", nm,
                  shared ? "__shared__ (per block)" : "per-thread array", leir__ctext_elem_type((leir_dtype)buf->dtype),
                  leir__cuda_bufname(g, bi, name, sizeof name), size);
}


const char *const leir__cuda_axis_names[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z",
                                         "blockIdx.x",  "blockIdx.y",  "blockIdx.z"};
const char *const leir__cuda_axis_dims[] = {"blockDim.x", "blockDim.y", "blockDim.z",
                                        "gridDim.x",  "gridDim.y",  "gridDim.z"};
const char *const leir__cuda_axis_short[] = {"tx", "ty", "tz", "bx", "by", "bz"};

void leir__cuda_geometry(leir__cuda_gen *g, const leir_nest *n, leir__cuda_kernel *k) {
  g->nhoisted = 0;
  for (int ax = 0; ax < LEIR__NAX; ax++) k->extent[ax] = 1;
  for (uint32_t j = 0; j < n->nloops; j++) {
    const leir__loop *l = &n->loops[j];
    if (l->kind != LEIR_LOOP_BOUND) continue;
    g->hoisted[g->nhoisted++] = l;
    int ax = leir__cuda_axis_of(g->p, l);
    /* The analysis caps a nest's iterations well below 2^63. */
    k->extent[ax] *= l->extent;
  }
  int64_t tx = k->extent[0] < LEIR__CUDA_MAX_THREADS ? k->extent[0] : LEIR__CUDA_MAX_THREADS;
  int64_t ty = k->extent[1] < LEIR__CUDA_MAX_THREADS / tx ? k->extent[1] : LEIR__CUDA_MAX_THREADS / tx;
  int64_t tzcap = LEIR__CUDA_MAX_THREADS / (tx * ty) < 64 ? LEIR__CUDA_MAX_THREADS / (tx * ty) : 64;
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


void leir__cuda_scan_nest_uses(leir__cuda_gen *g, const leir_nest *n, uint32_t top) {
  use_scan s = {g, top};
  leir__visit v = LEIR__VISIT_INIT(scan_use, &s);
  leir__visit_nest(&v, n);
}

