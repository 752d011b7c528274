/*
 * Analysis passes 3 and 4: every access proved in bounds by interval
 * analysis (loop ranges narrowed by if_then_else guards), and the outputs'
 * written shapes against the signature with the size limits.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "analyze_internal.h"
#include "error.h"
#include "options.h"
#include "vec.h"
#include "visit.h"

/* ---- pass 3: bounds ----------------------------------------------------- */

static void check_access(ctx *c, const leir_expr *t, const leir__env *env, bool is_lhs);
static void check_expr(ctx *c, const leir_expr *e, const leir__env *env);

/* if_then_else: each branch under its narrowed guard. The narrowed copy
 * lives on the heap, in a function of its own, so that check_expr's frame
 * stays small however high the expression (see lib/interval.c). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void check_guarded(ctx *c, const leir_expr *e, const leir__env *env) {
  check_expr(c, e->kids[0], env);
  leir__env *narrowed = malloc(sizeof *narrowed);
  if (!narrowed) {
    nomem(c);
    return;
  }
  for (int branch = 1; branch <= 2; branch++) {
    leir__env_copy(narrowed, env);
    if (leir__narrow(c->a, e->kids[0], branch == 1, narrowed))
      check_expr(c, e->kids[branch], narrowed);
  }
  free(narrowed);
}

static void check_expr(ctx *c, const leir_expr *e, const leir__env *env) {
  if (e->kind == LEIR_EXPR_TENSOR) {
    check_access(c, e, env, false);
    for (uint32_t k = 0; k < e->n; k++) check_expr(c, e->kids[k], env);
    return;
  }
  if (e->kind == LEIR_EXPR_CALL && e->op == LEIR_OP_IF_THEN_ELSE && e->n == 3) {
    check_guarded(c, e, env);
    return;
  }
  for (uint32_t k = 0; k < e->n; k++) check_expr(c, e->kids[k], env);
}

static void check_access(ctx *c, const leir_expr *t, const leir__env *env, bool is_lhs) {
  leir__analysis *a = c->a;
  uint32_t b = t->id < a->nids ? a->expr_buffer[t->id] : LEIR__NONE;
  if (b == LEIR__NONE) return;
  leir__buffer *buf = &a->buffers[b];
  if (is_lhs && buf->role == LEIR__BUF_TEMP) return; /* defines the shape */
  const char *name = sym_name(c, t->sym);
  for (uint32_t k = 0; k < t->n && k < buf->rank; k++) {
    const leir_expr *ix = t->kids[k];
    leir__range r = leir__index_range(a, ix, env);
    if (!r.known) {
      if (!leir__expr_has_tensor(ix))
        finding(c, LEIR_ERR_INVALID, ix->pos, "check.bounds", name,
                "cannot bound subscript %u of %s (not an integer expression of loop "
                "variables, or it overflows)",
                k + 1, name);
      else if (c->infer && buf->role == LEIR__BUF_INPUT)
        buf->shape[k] = -1; /* marks an ambiguous input extent */
      continue;             /* indirect: checked at run time by the backends */
    }
    if (c->infer && buf->role == LEIR__BUF_INPUT) {
      if (r.lo < 0) {
        finding(c, LEIR_ERR_INVALID, ix->pos, "check.bounds", name,
                "subscript %u of %s can be %lld; indices start at 0", k + 1, name,
                (long long)r.lo);
      } else if (buf->shape[k] >= 0) {
        int64_t extent = r.hi == INT64_MAX ? INT64_MAX : r.hi + 1;
        if (extent > buf->shape[k]) buf->shape[k] = extent;
      }
      continue;
    }
    if (r.lo < 0 || r.hi >= buf->shape[k]) {
      finding(c, LEIR_ERR_INVALID, ix->pos, "check.bounds", name,
              "subscript %u of %s ranges over [%lld, %lld] but the dimension has extent %lld",
              k + 1, name, (long long)r.lo, (long long)r.hi, (long long)buf->shape[k]);
    }
  }
}

void leir__analyze_bounds(ctx *c, uint32_t eqi) {
  const leir__eqinfo *info = &c->a->eqs[eqi];
  leir__env env;
  leir__env_init(&env, info);
  const leir_expr *lhs = info->eq->lhs;
  check_access(c, lhs, &env, true);
  for (uint32_t k = 0; k < lhs->n; k++) check_expr(c, lhs->kids[k], &env);
  check_expr(c, info->eq->rhs, &env);
}

/* ---- pass 4: outputs and sizes ------------------------------------------ */

static void format_shape(char *buf, size_t cap, const int64_t *shape, uint32_t rank) {
  size_t n = 0;
  n += (size_t)snprintf(buf + n, cap - n, "[");
  for (uint32_t k = 0; k < rank && n < cap; k++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", k ? ", " : "", (long long)shape[k]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

void leir__analyze_outputs(ctx *c) {
  leir__analysis *a = c->a;
  for (uint32_t b = 0; b < a->nbuffers; b++) {
    leir__buffer *buf = &a->buffers[b];
    const char *name = sym_name(c, buf->sym);
    buf->elements = 1;
    for (uint32_t k = 0; k < buf->rank; k++)
      buf->elements = sat_mul(buf->elements, buf->shape[k] > 0 ? (uint64_t)buf->shape[k] : 0);
    if (buf->elements > c->o.max_buffer_elements)
      finding(c, LEIR_ERR_LIMIT, LEIR__NOPOS, "limit.buffer", name,
              "%s would hold %llu elements, above the limit of %llu", name,
              (unsigned long long)buf->elements, (unsigned long long)c->o.max_buffer_elements);
    if (c->infer || buf->role != LEIR__BUF_OUTPUT) continue;
    if (buf->first_writer == LEIR__NONE) {
      finding(c, LEIR_ERR_INVALID, LEIR__NOPOS, "check.output", name,
              "output %s is never written", name);
      continue;
    }
    bool differs = false;
    int64_t written[LEIR_MAX_RANK];
    for (uint32_t k = 0; k < buf->rank; k++) {
      written[k] = c->written[b][k] < 0 ? buf->shape[k] : c->written[b][k];
      if (written[k] != buf->shape[k]) differs = true;
    }
    if (differs) {
      char got[256], want[256];
      format_shape(got, sizeof got, written, buf->rank);
      format_shape(want, sizeof want, buf->shape, buf->rank);
      finding(c, LEIR_ERR_INVALID, a->eqs[buf->first_writer].eq->lhs->pos, "check.output-shape",
              name, "output %s is written over shape %s but the signature declares %s", name,
              got, want);
    }
  }
}
