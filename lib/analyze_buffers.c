/*
 * Analysis pass 2 (spec/leir.md §3.4-§3.6): every tensor access bound to a
 * buffer, intermediate shapes from left-hand subscripts, implicit
 * initialization, reads of never-written data and dtype conflicts.
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

/* ---- pass 2: buffers ---------------------------------------------------- */

static uint32_t find_buffer(ctx *c, uint32_t sym, uint32_t rank) {
  for (uint32_t b = c->latest[sym]; b != LEIR__NONE; b = c->prev[b])
    if (c->a->buffers[b].rank == rank) return b;
  return LEIR__NONE;
}

/* Per-buffer tables; run() reserves the upper bound once (signature +
 * equations + symbols), so this normally allocates exactly one time. */
bool leir__analyze_grow_buffers(ctx *c, uint32_t cap) {
  leir__analysis *a = c->a;
  size_t n = a->nbuffers;
#define GROW(ar, field) \
  (field = grow_copy(ar, field, n * sizeof *field, (size_t)cap * sizeof *field)) != NULL
  bool ok = GROW(&a->arena, a->buffers) && GROW(&a->arena, a->values) &&
            GROW(&a->arena, a->value_def) && GROW(&a->arena, a->value_form) &&
            GROW(&a->arena, a->value_form_def) && GROW(&c->scratch, c->prev) &&
            GROW(&c->scratch, c->written) && GROW(&c->scratch, c->last_write_top) &&
            GROW(&c->scratch, c->last_read_top) && GROW(&c->scratch, c->value_seen);
#undef GROW
  if (ok) c->cap_buffers = cap;
  return ok;
}

uint32_t leir__analyze_new_buffer(ctx *c, const leir_expr *t, leir__buffer_role role) {
  leir__analysis *a = c->a;
  size_t cap;
  if (a->nbuffers == c->cap_buffers &&
      (!leir__vec_next_cap(c->cap_buffers, (size_t)a->nbuffers + 1, 1, 16, UINT32_MAX, &cap) ||
       !leir__analyze_grow_buffers(c, (uint32_t)cap))) {
    nomem(c);
    return LEIR__NONE;
  }
  uint32_t b = a->nbuffers++;
  leir__buffer *buf = &a->buffers[b];
  memset(buf, 0, sizeof *buf);
  buf->sym = t->sym;
  buf->dtype = t->dtype;
  buf->scope = t->scope;
  buf->role = (uint8_t)role;
  buf->rank = t->n;
  buf->decl = LEIR__NONE;
  buf->first_writer = buf->last_writer = LEIR__NONE;
  memset(c->written[b], 0, sizeof c->written[b]);
  c->last_write_top[b] = c->last_read_top[b] = LEIR__NONE;
  a->values[b].known = false;
  a->values[b].lo = a->values[b].hi = 0;
  c->value_seen[b] = false;
  a->value_def[b] = LEIR__NONE;
  a->value_form_def[b] = LEIR__NONE;
  c->prev[b] = c->latest[t->sym];
  c->latest[t->sym] = b;
  return b;
}

static bool known_access_ok(ctx *c, const leir_expr *t, uint32_t decl) {
  const leir__decl *d = &c->sig[decl];
  const char *name = sym_name(c, t->sym);
  if (t->n != d->rank) {
    finding(c, LEIR_ERR_INVALID, t->pos, "check.rank", name,
            "%s is used with %u subscript%s but the signature gives it rank %u", name, t->n,
            t->n == 1 ? "" : "s", d->rank);
    return false;
  }
  if (t->dtype != d->dtype) {
    finding(c, LEIR_ERR_INVALID, t->pos, "check.dtype", name,
            "%s is written ^{%s,...} but the signature declares %s", name,
            leir_dtype_name((leir_dtype)t->dtype), leir_dtype_name((leir_dtype)d->dtype));
    return false;
  }
  return true;
}

static int bind_read(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  const eq_walk *w = v->ud;
  ctx *c = w->c;
  uint32_t eqi = w->n;
  const leir_expr *e = *slot;
  leir__analysis *a = c->a;
  if (e->kind == LEIR_EXPR_TENSOR) {
    const char *name = sym_name(c, e->sym);
    uint32_t b = LEIR__NONE;
    if (c->decl_of[e->sym] != LEIR__NONE) {
      if (known_access_ok(c, e, c->decl_of[e->sym])) b = c->decl_of[e->sym];
    } else {
      b = find_buffer(c, e->sym, e->n);
      if (b == LEIR__NONE && c->infer && !c->written_anywhere[e->sym]) {
        b = leir__analyze_new_buffer(c, e, LEIR__BUF_INPUT);
      } else if (b == LEIR__NONE) {
        if (c->latest[e->sym] != LEIR__NONE)
          finding(c, LEIR_ERR_INVALID, e->pos, "check.rank", name,
                  "%s is read with %u subscript%s but was defined with %u", name, e->n,
                  e->n == 1 ? "" : "s", a->buffers[c->latest[e->sym]].rank);
        else if (c->written_anywhere[e->sym])
          finding(c, LEIR_ERR_INVALID, e->pos, "check.undefined", name,
                  "%s is read before any equation writes it", name);
        else
          finding(c, LEIR_ERR_INVALID, e->pos, "check.undefined", name,
                  "%s is neither a known variable (signature) nor written by the program",
                  name);
      } else if (a->buffers[b].dtype != e->dtype) {
        finding(c, LEIR_ERR_INVALID, e->pos, "check.dtype", name,
                "%s is read as %s but its buffer holds %s", name,
                leir_dtype_name((leir_dtype)e->dtype),
                leir_dtype_name((leir_dtype)a->buffers[b].dtype));
        b = LEIR__NONE;
      }
    }
    if (e->id < a->nids) a->expr_buffer[e->id] = b;
    if (b != LEIR__NONE) {
      uint32_t top = a->eqs[eqi].top;
      if (c->last_read_top[b] == LEIR__NONE || c->last_read_top[b] < top)
        c->last_read_top[b] = top;
      const leir__buffer *buf = &a->buffers[b];
      if (buf->role == LEIR__BUF_OUTPUT && buf->first_writer == LEIR__NONE &&
          b != a->eqs[eqi].lhs_buffer)
        finding(c, LEIR_ERR_INVALID, e->pos, "check.uninitialized", name,
                "output %s is read before any equation writes it", name);
    }
  }
  return LEIR__VISIT_NEXT;
}

/* Binds every TENSOR node under e (except the left-hand tensor itself). */
static void bind_reads(ctx *c, const leir_expr *e, uint32_t eqi) {
  eq_walk w = {c, eqi};
  leir__visit v = LEIR__VISIT_INIT(bind_read, &w);
  leir__visit_const(&v, e);
}

typedef struct read_find {
  const leir__analysis *a;
  uint32_t b;
  const leir_expr *hit;
} read_find;

static int read_of(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  read_find *f = v->ud;
  const leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_TENSOR || e->id >= f->a->nids || f->a->expr_buffer[e->id] != f->b)
    return LEIR__VISIT_NEXT;
  f->hit = e;
  return LEIR__VISIT_STOP;
}

/* The first access (pre-order) of buffer b in e, or NULL. */
static const leir_expr *first_read_of(const leir__analysis *a, const leir_expr *e, uint32_t b) {
  read_find f = {a, b, NULL};
  leir__visit v = LEIR__VISIT_INIT(read_of, &f);
  leir__visit_const(&v, e);
  return f.hit;
}

static bool same_subscript(const leir_program *p, const leir_expr *x, const leir_expr *y) {
  if (x->n != y->n) return false;
  for (uint32_t k = 0; k < x->n; k++)
    if (!leir__expr_equal(p, x->kids[k], p, y->kids[k])) return false;
  return true;
}

/* §3.4 rule 3: the syntactic accumulation forms. */
static leir__init_kind init_form(const leir_expr *rhs, const leir_expr *x) {
  const leir_expr *e = rhs, *parent = NULL;
  while (e->kind == LEIR_EXPR_BINARY) {
    parent = e;
    e = e->kids[0];
  }
  if (e == x && parent) {
    if (parent->op == LEIR_OP_ADD || parent->op == LEIR_OP_SUB) return LEIR__INIT_ZERO;
    if (parent->op == LEIR_OP_MUL) return LEIR__INIT_ONE;
  }
  if (rhs->kind == LEIR_EXPR_CALL && rhs->n >= 2 && rhs->kids[0] == x) {
    if (rhs->op == LEIR_OP_MAX) return LEIR__INIT_NEG_INF;
    if (rhs->op == LEIR_OP_MIN) return LEIR__INIT_POS_INF;
  }
  e = rhs;
  parent = NULL;
  while (e->kind == LEIR_EXPR_BINARY) {
    parent = e;
    e = e->kids[1];
  }
  if (e == x && parent && parent->op == LEIR_OP_DIV) return LEIR__INIT_ONE;
  return LEIR__INIT_NONE;
}

/* Any self-read of the element being defined (same subscript)? */
static const leir_expr *same_element_read(const leir__analysis *a, const leir_expr *e,
                                          const leir_expr *lhs, uint32_t b) {
  if (e->kind == LEIR_EXPR_TENSOR && e->id < a->nids && a->expr_buffer[e->id] == b &&
      same_subscript(a->p, e, lhs))
    return e;
  for (uint32_t k = 0; k < e->n; k++) {
    const leir_expr *hit = same_element_read(a, e->kids[k], lhs, b);
    if (hit) return hit;
  }
  return NULL;
}

/* Every subscript entry of x and y names the same value at every iteration
 * (equal affine forms, index tables read through; leir__affine_subst_of). */
static bool same_element_spelled(const leir__analysis *a, const leir_expr *x,
                                 const leir_expr *y) {
  if (x->n != y->n) return false;
  for (uint32_t k = 0; k < x->n; k++) {
    if (leir__expr_equal(a->p, x->kids[k], a->p, y->kids[k])) continue;
    leir__affine fx, fy;
    if (!leir__affine_subst_of(a, x->kids[k], &fx) || !leir__affine_subst_of(a, y->kids[k], &fy))
      return false;
    if (fx.nterms != fy.nterms || fx.c != fy.c) return false;
    for (uint32_t t = 0; t < fx.nterms; t++)
      if (fx.slot[t] != fy.slot[t] || fx.coef[t] != fy.coef[t]) return false;
  }
  return true;
}

/* A self-read of the element being defined whose subscript is spelled
 * differently (C_{D_{bya,tx}} for C_{bya*2+tx}, where D_{bya,tx}=bya*2+tx):
 * §3.4 rule 2 compares subscripts as written, so such a read gets no
 * implicit initial value. Found iteratively: right sides may be deep. */
static const leir_expr *respelled_read(const leir__analysis *a, const leir_expr *rhs,
                                       const leir_expr *lhs, uint32_t b) {
  const leir_expr *small[64], **stack = small;
  size_t n = 0, cap = 64;
  const leir_expr *hit = NULL;
  stack[n++] = rhs;
  while (n && !hit) {
    const leir_expr *e = stack[--n];
    if (e->kind == LEIR_EXPR_TENSOR && e->id < a->nids && a->expr_buffer[e->id] == b &&
        same_element_spelled(a, e, lhs))
      hit = e;
    if (n + e->n > cap) {
      size_t nc = (n + e->n) * 2;
      const leir_expr **ns = malloc(nc * sizeof *ns);
      if (!ns) break; /* no finding: the check is an extra */
      memcpy(ns, stack, n * sizeof *ns);
      if (stack != small) free(stack);
      stack = ns;
      cap = nc;
    }
    for (uint32_t k = e->n; k-- > 0;) stack[n++] = e->kids[k];
  }
  if (stack != small) free(stack);
  return hit;
}

static bool is_integer(uint8_t dt) {
  return dt == LEIR_I8 || dt == LEIR_I16 || dt == LEIR_I32 || dt == LEIR_I64 || dt == LEIR_U8 ||
         dt == LEIR_BOOL;
}

/* Values of r survive a store into dtype dt unchanged. */
static bool fits(leir__range r, leir_dtype dt) {
  int64_t lo, hi;
  switch (dt) {
    case LEIR_I8: lo = -128, hi = 127; break;
    case LEIR_I16: lo = -32768, hi = 32767; break;
    case LEIR_I32: lo = INT32_MIN, hi = INT32_MAX; break;
    case LEIR_U8: lo = 0, hi = 255; break;
    case LEIR_BOOL: lo = 0, hi = 1; break;
    default: return true;
  }
  return r.lo >= lo && r.hi <= hi;
}

void leir__analyze_define(ctx *c, uint32_t eqi) {
  leir__analysis *a = c->a;
  leir__eqinfo *info = &a->eqs[eqi];
  const leir_expr *lhs = info->eq->lhs;
  const char *name = sym_name(c, lhs->sym);
  uint32_t b = LEIR__NONE;
  uint32_t decl = c->decl_of[lhs->sym];
  if (decl != LEIR__NONE) {
    if (known_access_ok(c, lhs, decl)) b = decl;
    if (b != LEIR__NONE && a->buffers[b].role == LEIR__BUF_INPUT) {
      finding(c, LEIR_ERR_INVALID, lhs->pos, "check.input-written", name,
              "%s is an input and cannot be written", name);
      b = LEIR__NONE;
    }
  } else {
    b = find_buffer(c, lhs->sym, lhs->n);
    if (b != LEIR__NONE && a->buffers[b].dtype != lhs->dtype) {
      uint32_t line = 0, col = 0, fw = a->buffers[b].first_writer;
      if (fw != LEIR__NONE) leir__position(c->p, a->eqs[fw].eq->lhs->pos, &line, &col);
      finding(c, LEIR_ERR_INVALID, lhs->pos, "check.dtype", name,
              "%s is written as %s here but as %s at %u:%u", name,
              leir_dtype_name((leir_dtype)lhs->dtype),
              leir_dtype_name((leir_dtype)a->buffers[b].dtype), line, col);
      b = LEIR__NONE;
    } else if (b == LEIR__NONE) {
      b = leir__analyze_new_buffer(c, lhs, LEIR__BUF_TEMP);
    }
  }
  info->lhs_buffer = b;
  if (lhs->id < a->nids) a->expr_buffer[lhs->id] = b;
  /* Indirect indices on the left first: their values bound the shape. */
  for (uint32_t k = 0; k < lhs->n; k++) bind_reads(c, lhs->kids[k], eqi);

  leir__env env;
  leir__env_init(&env, info);
  /* Shape of intermediates (and written extent of outputs) from the LHS. */
  if (b != LEIR__NONE) {
    leir__buffer *buf = &a->buffers[b];
    for (uint32_t k = 0; k < lhs->n; k++) {
      const leir_expr *ix = lhs->kids[k];
      leir__range r = leir__index_range(a, ix, &env);
      if (!r.known) {
        if (buf->role == LEIR__BUF_TEMP || !leir__expr_has_tensor(ix))
          finding(c, LEIR_ERR_INVALID, ix->pos, "check.shape", name,
                  "cannot bound subscript %u of %s on the left-hand side (%s)", k + 1, name,
                  leir__expr_has_tensor(ix)
                      ? "an index tensor whose values are unknown cannot define a shape"
                      : "not an integer expression of loop variables");
        else
          c->written[b][k] = -1; /* indirect write: checked at run time */
        continue;
      }
      if (r.lo < 0) {
        finding(c, LEIR_ERR_INVALID, ix->pos, "check.bounds", name,
                "subscript %u of %s can be %lld on the left-hand side; indices start at 0",
                k + 1, name, (long long)r.lo);
        continue;
      }
      int64_t extent = r.hi == INT64_MAX ? INT64_MAX : r.hi + 1;
      if (buf->role == LEIR__BUF_TEMP && extent > buf->shape[k]) buf->shape[k] = extent;
      if (c->written[b][k] >= 0 && extent > c->written[b][k]) c->written[b][k] = extent;
    }
    uint32_t top = info->top;
    if (c->last_write_top[b] == LEIR__NONE || c->last_write_top[b] < top)
      c->last_write_top[b] = top;
  }

  bind_reads(c, info->eq->rhs, eqi);

  /* Values of integer intermediates, for indices read through them. */
  if (b != LEIR__NONE && a->buffers[b].role == LEIR__BUF_TEMP && is_integer(lhs->dtype)) {
    leir__range r = leir__index_range(a, info->eq->rhs, &env);
    if (r.known && !fits(r, (leir_dtype)lhs->dtype)) r.known = false;
    bool substitutable = !leir__expr_has_tensor(info->eq->rhs);
    for (uint32_t k = 0; k < lhs->n && substitutable; k++) {
      const leir_expr *ix = lhs->kids[k];
      substitutable = ix->kind == LEIR_EXPR_VAR && a->expr_loop[ix->id] != LEIR__NONE;
      for (uint32_t j = 0; j < k && substitutable; j++)
        substitutable = lhs->kids[j]->sym != ix->sym;
    }
    a->value_def[b] = !c->value_seen[b] && substitutable ? eqi : LEIR__NONE;
    /* the affine value form: affine subscripts on the left (plain
     * variables, or the d*4+tx a split leaves; the reader expresses the
     * value through them, table_affine), an affine right side through the
     * tables it reads (stored flattened, so that reading a chain of copied
     * tables never recurses along it) */
    bool affine_lhs = true;
    for (uint32_t k = 0; k < lhs->n && affine_lhs; k++) {
      leir__affine ix;
      affine_lhs = leir__affine_of(a, lhs->kids[k], &ix);
    }
    a->value_form_def[b] = LEIR__NONE;
    if (!c->value_seen[b] && affine_lhs && r.known &&
        leir__affine_subst_of(a, info->eq->rhs, &a->value_form[b]))
      a->value_form_def[b] = eqi;
    a->values[b] = c->value_seen[b] ? leir__range_union(a->values[b], r) : r;
    c->value_seen[b] = true;
  }

  /* Implicit initialization (§3.4) and reads of the element being defined. */
  if (b != LEIR__NONE && a->buffers[b].role != LEIR__BUF_INPUT &&
      a->buffers[b].first_writer == LEIR__NONE) {
    const leir_expr *rhs = info->eq->rhs;
    const leir_expr *x = first_read_of(a, rhs, b);
    if (x && same_subscript(c->p, x, lhs)) info->init = (uint8_t)init_form(rhs, x);
    if (info->init == LEIR__INIT_NONE) {
      const leir_expr *bad = same_element_read(a, rhs, lhs, b);
      if (bad)
        finding(c, LEIR_ERR_INVALID, bad->pos, "check.uninitialized", name,
                "%s is read before it is written: only X+..., X-..., X*..., .../X, "
                "max(X,...) and min(X,...) start from an implicit initial value",
                name);
      else if ((bad = respelled_read(a, rhs, lhs, b)))
        finding(c, LEIR_ERR_INVALID, bad->pos, "check.self-read-spelling", name,
                "%s is read at the element this equation writes, but its subscript is spelled "
                "differently from the left-hand side's, so no implicit initial value applies "
                "and the read sees a never-written element; spell both subscripts the same",
                name);
    }
  }
  if (b != LEIR__NONE) {
    if (a->buffers[b].first_writer == LEIR__NONE) a->buffers[b].first_writer = eqi;
    a->buffers[b].last_writer = eqi;
  }
}
