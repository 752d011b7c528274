/*
 * Program analysis and static checks (spec/leir.md §3.4-§3.6).
 *
 * Four passes over the equations in program order:
 *  1. collect equations with their enclosing loops; check extents, depth,
 *     duplicate loop variables and work limits; resolve loop variables;
 *  2. bind every tensor access to a buffer (known variable, or the latest
 *     intermediate buffer of that name and rank), infer intermediate shapes
 *     from left-hand subscripts, decide implicit initialization, and flag
 *     reads of never-written data and dtype conflicts;
 *  3. prove every access in bounds by interval analysis, narrowing loop
 *     ranges by if_then_else guards on the lazily evaluated branch;
 *  4. compare the outputs' written shapes with the signature; size limits.
 * The same passes infer a signature when asked (infer mode): tensors never
 * written become inputs whose shapes grow with their (narrowed) reads.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "error.h"
#include "options.h"
#include "vec.h"
#include "visit.h"

typedef struct ctx {
  leir__analysis *a;
  const leir_program *p;
  const leir__decl *sig;
  uint32_t nsig;
  leir_check_options o;
  leir_diagnostics *diags;
  bool infer;
  uint32_t nfindings;
  leir_status first;
  uint32_t nsyms;
  uint32_t *decl_of;       /* by symbol */
  uint32_t *latest;        /* by symbol: newest buffer */
  bool *written_anywhere;  /* by symbol (infer mode) */
  uint32_t cap_buffers;
  uint32_t *prev;          /* by buffer: older buffer of the same symbol */
  int64_t (*written)[LEIR_MAX_RANK]; /* by buffer: 1 + highest written index */
  uint32_t *last_write_top, *last_read_top; /* by buffer */
  bool *value_seen;        /* by buffer: some definition fed a->values */
  uint32_t cap_eqs;
  leir__arena scratch; /* the tables above; released with the context */
  const leir__loop *stack[LEIR__MAX_LOOPS];
} ctx;

/* Tables live in arenas (the analysis's or the context's scratch): a few
 * chunk allocations per analysis instead of one malloc per table. Growing
 * copies into a new block and abandons the old one. */
static void *grow_copy(leir__arena *ar, void *old, size_t used, size_t size) {
  void *m = leir__arena_alloc(ar, size ? size : 1);
  if (m && used) memcpy(m, old, used);
  return m;
}

#if defined(__GNUC__)
__attribute__((format(printf, 6, 7)))
#endif
static void
finding(ctx *c, leir_status status, uint32_t pos, const char *rule, const char *subject,
        const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  uint32_t line, col;
  leir__position(c->p, pos, &line, &col);
  if (c->nfindings++ == 0) {
    c->first = status;
    leir__error_set(status, rule, subject, line, col, msg);
  }
  leir__diag_add(c->diags, rule, subject, line, col, "%s", msg);
}

static const char *sym_name(ctx *c, uint32_t sym) { return leir__sym_name(c->p, sym); }

static uint64_t sat_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t sat_add(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static void nomem(ctx *c) {
  if (c->nfindings++ == 0) {
    c->first = LEIR_ERR_NOMEM;
    leir__error_nomem();
  }
}

/* ---- pass 1: equations, loops, variables ------------------------------ */

/* A walk over one equation: the analysis context and the equation's depth
 * (resolve_vars) or index (bind_reads). */
typedef struct eq_walk {
  ctx *c;
  uint32_t n;
} eq_walk;

static int resolve_var(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  const eq_walk *w = v->ud;
  ctx *c = w->c;
  const leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_VAR) return LEIR__VISIT_NEXT;
  uint32_t slot_k = LEIR__NONE;
  for (uint32_t k = w->n; k-- > 0;)
    if (c->stack[k]->sym == e->sym) {
      slot_k = k;
      break;
    }
  if (e->id < c->a->nids) c->a->expr_loop[e->id] = slot_k;
  if (slot_k == LEIR__NONE)
    finding(c, LEIR_ERR_INVALID, e->pos, "check.unknown-var", sym_name(c, e->sym),
            "'%s' is not a loop variable of an enclosing loop", sym_name(c, e->sym));
  return LEIR__VISIT_NEXT;
}

static void resolve_vars(ctx *c, const leir_expr *e, uint32_t depth) {
  eq_walk w = {c, depth};
  leir__visit v = LEIR__VISIT_INIT(resolve_var, &w);
  leir__visit_const(&v, e);
}

static bool add_equation(ctx *c, const leir_equation *eq, uint32_t top, const leir_nest *nest,
                         uint32_t depth, uint64_t evals) {
  leir__analysis *a = c->a;
  if (a->neqs == c->cap_eqs) {
    size_t cap;
    if (!leir__vec_next_cap(c->cap_eqs, (size_t)a->neqs + 1, sizeof *a->eqs, 16, UINT32_MAX, &cap))
      return false;
    leir__eqinfo *eqs = grow_copy(&a->arena, a->eqs, a->neqs * sizeof *eqs, cap * sizeof *eqs);
    if (!eqs) return false;
    a->eqs = eqs;
    c->cap_eqs = (uint32_t)cap;
  }
  const leir__loop **loops = NULL;
  if (depth) {
    loops = leir__arena_alloc(&a->arena, depth * sizeof *loops);
    if (!loops) return false;
    memcpy(loops, c->stack, depth * sizeof *loops);
  }
  leir__eqinfo *info = &a->eqs[a->neqs];
  memset(info, 0, sizeof *info);
  info->eq = eq;
  info->top = top;
  info->nest = nest;
  info->nloops = depth;
  info->loops = loops;
  info->lhs_buffer = LEIR__NONE;
  info->evaluations = evals;
  if (eq->id < a->nids) a->eq_index[eq->id] = a->neqs;
  a->neqs++;
  resolve_vars(c, eq->lhs, depth);
  resolve_vars(c, eq->rhs, depth);
  return true;
}

static uint64_t collect(ctx *c, const leir_nest *n, uint32_t top, uint32_t depth,
                        uint64_t evals) {
  uint32_t d = depth;
  for (uint32_t k = 0; k < n->nloops; k++) {
    const leir__loop *l = &n->loops[k];
    const char *v = sym_name(c, l->sym);
    if (l->extent < 1)
      finding(c, LEIR_ERR_INVALID, l->pos, "check.extent", v,
              "loop '%s' has extent %lld; extents must be at least 1", v, (long long)l->extent);
    else if (l->extent > c->o.max_extent)
      finding(c, LEIR_ERR_LIMIT, l->pos, "limit.extent", v,
              "loop '%s' has extent %lld, above the limit of %lld", v, (long long)l->extent,
              (long long)c->o.max_extent);
    for (uint32_t s = 0; s < d; s++)
      if (c->stack[s]->sym == l->sym) {
        finding(c, LEIR_ERR_INVALID, l->pos, "check.duplicate-loop", v,
                "loop variable '%s' is already used by an enclosing loop", v);
        break;
      }
    if (d >= c->o.max_loop_depth) {
      finding(c, LEIR_ERR_LIMIT, l->pos, "limit.depth", v,
              "more than %u loops enclose this point", c->o.max_loop_depth);
      return 0;
    }
    c->stack[d++] = l;
    evals = sat_mul(evals, l->extent > 0 ? (uint64_t)l->extent : 0);
  }
  uint64_t work = 0;
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].eq) {
      if (!add_equation(c, n->items[k].eq, top, n, d, evals)) {
        nomem(c);
        return work;
      }
      work = sat_add(work, evals);
    } else {
      work = sat_add(work, collect(c, n->items[k].nest, top, d, evals));
    }
  }
  return work;
}

/* ---- pass 2: buffers ---------------------------------------------------- */

static uint32_t find_buffer(ctx *c, uint32_t sym, uint32_t rank) {
  for (uint32_t b = c->latest[sym]; b != LEIR__NONE; b = c->prev[b])
    if (c->a->buffers[b].rank == rank) return b;
  return LEIR__NONE;
}

/* Per-buffer tables; run() reserves the upper bound once (signature +
 * equations + symbols), so this normally allocates exactly one time. */
static bool grow_buffers(ctx *c, uint32_t cap) {
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

static uint32_t new_buffer(ctx *c, const leir_expr *t, leir__buffer_role role) {
  leir__analysis *a = c->a;
  size_t cap;
  if (a->nbuffers == c->cap_buffers &&
      (!leir__vec_next_cap(c->cap_buffers, (size_t)a->nbuffers + 1, 1, 16, UINT32_MAX, &cap) ||
       !grow_buffers(c, (uint32_t)cap))) {
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
        b = new_buffer(c, e, LEIR__BUF_INPUT);
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

static void define(ctx *c, uint32_t eqi) {
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
      b = new_buffer(c, lhs, LEIR__BUF_TEMP);
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

static void check_bounds(ctx *c, uint32_t eqi) {
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

static void check_outputs(ctx *c) {
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

/* ---- driver -------------------------------------------------------------- */

void leir__analysis_free(leir__analysis *a) {
  if (!a) return;
  leir__arena_release(&a->arena); /* every table */
  free(a);
}

/* Marks every written symbol; returns the number of equations. */
static uint32_t mark_written(ctx *c, const leir_nest *n) {
  uint32_t neqs = 0;
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].eq) {
      c->written_anywhere[n->items[k].eq->lhs->sym] = true;
      neqs++;
    } else {
      neqs += mark_written(c, n->items[k].nest);
    }
  }
  return neqs;
}

static leir_status run(ctx *c) {
  const leir_program *p = c->p;
  leir__analysis *a = c->a;
  c->nsyms = p->syms.count;
  size_t ns = c->nsyms ? c->nsyms : 1;
  a->nids = p->next_id;
  size_t ni = a->nids ? a->nids : 1;
  c->written_anywhere = leir__arena_calloc(&c->scratch, ns, sizeof *c->written_anywhere);
  if (!c->written_anywhere) {
    nomem(c);
    return c->first;
  }
  uint64_t neqs = 0;
  for (uint32_t t = 0; t < p->nnests; t++) neqs += mark_written(c, p->nests[t]);
  /* every buffer is a declaration, a first definition, or (inferring) an input */
  uint64_t max_buffers = (uint64_t)c->nsig + neqs + c->nsyms + 1;
  if (max_buffers > UINT32_MAX / 2 || neqs > UINT32_MAX / 2) max_buffers = neqs = 16;
  /* size the first chunks for everything below, so each arena allocates once */
  a->arena.next_size = ni * 3 * sizeof(uint32_t) + neqs * (sizeof(leir__eqinfo) + 64) +
                       max_buffers * (sizeof(leir__buffer) + sizeof(leir__range) + 4) + 1024;
  c->scratch.next_size = ns * 2 * sizeof(uint32_t) +
                         max_buffers * (LEIR_MAX_RANK * 8 + 3 * sizeof(uint32_t) + 1) + 1024;
  c->decl_of = leir__arena_alloc(&c->scratch, ns * sizeof *c->decl_of);
  c->latest = leir__arena_alloc(&c->scratch, ns * sizeof *c->latest);
  a->expr_buffer = leir__arena_alloc(&a->arena, ni * sizeof *a->expr_buffer);
  a->expr_loop = leir__arena_alloc(&a->arena, ni * sizeof *a->expr_loop);
  a->eq_index = leir__arena_alloc(&a->arena, ni * sizeof *a->eq_index);
  c->cap_eqs = (uint32_t)(neqs ? neqs : 1);
  a->eqs = leir__arena_alloc(&a->arena, c->cap_eqs * sizeof *a->eqs);
  if (!c->decl_of || !c->latest || !a->expr_buffer || !a->expr_loop || !a->eq_index || !a->eqs ||
      !grow_buffers(c, (uint32_t)max_buffers)) {
    nomem(c);
    return c->first;
  }
  memset(c->decl_of, 0xff, ns * sizeof *c->decl_of);
  memset(c->latest, 0xff, ns * sizeof *c->latest);
  memset(a->expr_buffer, 0xff, ni * sizeof *a->expr_buffer);
  memset(a->expr_loop, 0xff, ni * sizeof *a->expr_loop);
  memset(a->eq_index, 0xff, ni * sizeof *a->eq_index);

  /* Known variables become buffers 0..nsig-1. */
  for (uint32_t i = 0; i < c->nsig; i++) {
    const leir__decl *d = &c->sig[i];
    leir_expr fake;
    memset(&fake, 0, sizeof fake);
    fake.sym = d->sym;
    fake.dtype = d->dtype;
    fake.n = d->rank;
    uint32_t b = new_buffer(
        c, &fake, d->role == LEIR_ROLE_INPUT ? LEIR__BUF_INPUT : LEIR__BUF_OUTPUT);
    if (b == LEIR__NONE) return c->first;
    a->buffers[b].decl = i;
    for (uint32_t k = 0; k < d->rank; k++) a->buffers[b].shape[k] = d->shape[k];
    c->decl_of[d->sym] = i;
  }

  /* pass 1 */
  uint64_t total = 0;
  for (uint32_t t = 0; t < p->nnests; t++) {
    uint64_t work = collect(c, p->nests[t], t, 0, 1);
    if (work > c->o.max_nest_iterations)
      finding(c, LEIR_ERR_LIMIT, p->nests[t]->pos, "limit.iterations", NULL,
              "this nest runs %llu equation evaluations, above the limit of %llu",
              (unsigned long long)work, (unsigned long long)c->o.max_nest_iterations);
    total = sat_add(total, work);
  }
  a->total_evaluations = total;
  if (total > c->o.max_total_iterations)
    finding(c, LEIR_ERR_LIMIT, LEIR__NOPOS, "limit.iterations", NULL,
            "the program runs %llu equation evaluations, above the limit of %llu",
            (unsigned long long)total, (unsigned long long)c->o.max_total_iterations);
  if (c->nfindings) return c->first; /* later passes need resolved loops */
  /* pass 2 */
  for (uint32_t i = 0; i < a->neqs; i++) define(c, i);
  /* pass 3 */
  for (uint32_t i = 0; i < a->neqs; i++) check_bounds(c, i);
  /* pass 4 */
  check_outputs(c);
  return c->nfindings ? c->first : LEIR_OK;
}

static void free_ctx(ctx *c) { leir__arena_release(&c->scratch); }

static leir_status setup(ctx *c, const leir_program *p, const leir__decl *sig, uint32_t nsig,
                         const leir_check_options *opts, leir_diagnostics *diags) {
  memset(c, 0, sizeof *c);
  leir_check_options o;
  leir_status ost = LEIR__OPTIONS_READ(leir_check_options, &o, opts, LEIR_CHECK_OPTIONS_INIT);
  if (ost != LEIR_OK) return ost;
  if (o.max_loop_depth > LEIR__MAX_LOOPS || o.max_loop_depth == 0) o.max_loop_depth = LEIR__MAX_LOOPS;
  c->o = o;
  c->p = p;
  c->sig = sig;
  c->nsig = nsig;
  c->diags = diags;
  c->first = LEIR_OK;
  c->a = calloc(1, sizeof *c->a);
  if (!c->a) return leir__error_nomem();
  c->a->p = p;
  leir__arena_init(&c->a->arena, 4096);
  leir__arena_init(&c->scratch, 4096);
  return LEIR_OK;
}

leir_status leir__analyze(const leir_program *p, const leir__decl *sig, uint32_t nsig,
                          const leir_check_options *opts, leir_diagnostics *diags,
                          bool keep_on_error, leir__analysis **out) {
  *out = NULL;
  ctx c;
  leir_status st = setup(&c, p, sig, nsig, opts, diags);
  if (st != LEIR_OK) return st;
  st = run(&c);
  free_ctx(&c);
  if (diags) leir__diags_sort(diags);
  if (st != LEIR_OK && !keep_on_error) {
    leir__analysis_free(c.a);
    return st;
  }
  *out = c.a;
  return st;
}

/* ---- signature inference (spec/leir.md §2) ------------------------------ */

/* Sort key of an inferred declaration: generated names (A, C, ..., Aa)
 * by their index, then any other name alphabetically. */
typedef struct name_key {
  int64_t index; /* leir__tensor_index_of_name, -1 if not generated */
  const char *name;
  uint32_t buffer;
} name_key;

static int by_name_index(const void *x, const void *y) {
  const name_key *a = x, *b = y;
  if (a->index >= 0 && b->index >= 0 && a->index != b->index) return a->index < b->index ? -1 : 1;
  if ((a->index >= 0) != (b->index >= 0)) return a->index >= 0 ? -1 : 1;
  int c = strcmp(a->name, b->name);
  if (c) return c;
  return a->buffer < b->buffer ? -1 : a->buffer > b->buffer;
}

static void sort_by_name(const leir_program *p, const leir__analysis *a, uint32_t *list,
                         uint32_t n, name_key *keys) {
  for (uint32_t i = 0; i < n; i++) {
    const char *name = leir__sym_name(p, a->buffers[list[i]].sym);
    keys[i].index = leir__tensor_index_of_name(name, leir__sym_len(p, a->buffers[list[i]].sym));
    keys[i].name = name;
    keys[i].buffer = list[i];
  }
  if (n > 1) qsort(keys, n, sizeof *keys, by_name_index);
  for (uint32_t i = 0; i < n; i++) list[i] = keys[i].buffer;
}

leir_status leir__infer_decls(const leir_program *p, leir__arena *arena, leir__decl **out,
                              uint32_t *nout) {
  leir_status st = leir__infer_decls_checked(p, NULL, NULL, arena, out, nout, NULL);
  if (st == LEIR_ERR_INVALID || st == LEIR_ERR_LIMIT) {
    const leir_error *e = leir_error_last();
    leir__error(LEIR_ERR_SIGNATURE, e->rule, e->subject, e->line, e->column,
                "cannot infer a signature: %s", e->message);
    st = LEIR_ERR_SIGNATURE;
  }
  return st;
}

leir_status leir__infer_decls_checked(const leir_program *p, const leir_check_options *opts,
                                      leir_diagnostics *diags, leir__arena *arena,
                                      leir__decl **out, uint32_t *nout, bool *checked) {
  *out = NULL;
  *nout = 0;
  if (checked) *checked = false;
  ctx c;
  leir_status st = setup(&c, p, NULL, 0, opts, diags);
  if (st != LEIR_OK) return st;
  c.infer = true;
  /* Inference tolerates nothing: a program that fails the checks has no
   * well-defined interface. */
  st = run(&c);
  leir__analysis *a = c.a;
  if (st != LEIR_OK) {
    if (diags) leir__diags_sort(diags); /* the findings are the answer */
    goto done;
  }
  size_t nb = a->nbuffers ? a->nbuffers : 1;
  uint32_t *inputs = leir__arena_alloc(&c.scratch, nb * sizeof *inputs);
  uint32_t *outputs = leir__arena_alloc(&c.scratch, nb * sizeof *outputs);
  name_key *keys = leir__arena_alloc(&c.scratch, nb * sizeof *keys);
  bool shared_output_name = false;
  bool *is_output = leir__arena_calloc(&c.scratch, c.nsyms ? c.nsyms : 1, sizeof *is_output);
  uint32_t nin = 0, nouts = 0;
  if (!inputs || !outputs || !keys || !is_output) {
    st = leir__error_nomem();
    goto done;
  }
  for (uint32_t b = 0; b < a->nbuffers; b++) {
    const leir__buffer *buf = &a->buffers[b];
    const char *name = leir__sym_name(p, buf->sym);
    if (buf->role == LEIR__BUF_INPUT) {
      for (uint32_t k = 0; k < buf->rank; k++)
        if (buf->shape[k] < 0) {
          st = leir__error(LEIR_ERR_SIGNATURE, "signature.ambiguous", name, 0, 0,
                           "cannot infer the extent of input %s along dimension %u: it is "
                           "only indexed indirectly; give a signature",
                           name, k + 1);
        }
      if (c.latest[buf->sym] != b) {
        st = leir__error(LEIR_ERR_SIGNATURE, "signature.ambiguous", name, 0, 0,
                         "input %s is read with different ranks; give a signature", name);
      }
      inputs[nin++] = b;
    } else if (c.last_read_top[b] == LEIR__NONE || c.last_read_top[b] <= c.last_write_top[b]) {
      if (is_output[buf->sym])
        st = leir__error(LEIR_ERR_SIGNATURE, "signature.ambiguous", name, 0, 0,
                         "%s is a result with two different ranks; give a signature", name);
      /* another buffer of this name would clash with the declaration */
      if (c.latest[buf->sym] != b || c.prev[b] != LEIR__NONE) shared_output_name = true;
      is_output[buf->sym] = true;
      outputs[nouts++] = b;
    }
  }
  if (st == LEIR_OK && nouts == 0)
    st = leir__error(LEIR_ERR_SIGNATURE, "signature.no-output", NULL, 0, 0,
                     "the program has no outputs (every result is read by a later nest)");
  if (st == LEIR_OK) {
    sort_by_name(p, a, inputs, nin, keys);
    sort_by_name(p, a, outputs, nouts, keys);
    leir__decl *decls = leir__arena_alloc(arena, (nin + nouts) * sizeof *decls);
    if (!decls) {
      st = leir__error_nomem();
    } else {
      for (uint32_t i = 0; i < nin + nouts && st == LEIR_OK; i++) {
        const leir__buffer *buf = &a->buffers[i < nin ? inputs[i] : outputs[i - nin]];
        leir__decl *d = &decls[i];
        d->sym = buf->sym;
        d->dtype = buf->dtype;
        d->role = i < nin ? LEIR_ROLE_INPUT : LEIR_ROLE_OUTPUT;
        d->rank = buf->rank;
        d->shape = NULL;
        if (buf->rank) {
          d->shape = leir__arena_alloc(arena, buf->rank * sizeof *d->shape);
          if (!d->shape) st = leir__error_nomem();
          else memcpy(d->shape, buf->shape, buf->rank * sizeof *d->shape);
        }
      }
      if (st == LEIR_OK) {
        *out = decls;
        *nout = nin + nouts;
        /* The inference pass ran every check; with its own signature the
         * program meets the same rules, unless an output's name is also
         * used by an intermediate of another rank (the declaration then
         * fixes one rank for both). */
        if (checked) *checked = !shared_output_name;
      }
    }
  }
done:
  free_ctx(&c);
  leir__analysis_free(a);
  return st;
}

leir_status leir__effective_signature(const leir_program *p, leir__arena *arena,
                                      const leir__decl **sig, uint32_t *nsig) {
  if (p->nsig) {
    *sig = p->sig;
    *nsig = p->nsig;
    return LEIR_OK;
  }
  leir__decl *decls;
  leir_status st = leir__infer_decls(p, arena, &decls, nsig);
  *sig = decls;
  return st;
}

leir_status leir__analyze_program(const leir_program *p, const leir_check_options *opts,
                                  leir__analysis **out) {
  *out = NULL;
  leir__arena arena;
  leir__arena_init(&arena, 1024);
  const leir__decl *sig;
  uint32_t nsig;
  leir_status st = leir__effective_signature(p, &arena, &sig, &nsig);
  if (st == LEIR_OK) st = leir__analyze(p, sig, nsig, opts, NULL, false, out);
  leir__arena_release(&arena);
  return st;
}

typedef struct depth_mark {
  const leir__analysis *a;
  bool *used;
} depth_mark;

static int mark_depth(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  const depth_mark *m = v->ud;
  if ((*slot)->kind == LEIR_EXPR_VAR) m->used[m->a->expr_loop[(*slot)->id]] = true;
  return LEIR__VISIT_NEXT;
}

void leir__used_depths(const leir__analysis *a, const leir_expr *e, bool *used) {
  depth_mark m = {a, used};
  leir__visit v = LEIR__VISIT_INIT(mark_depth, &m);
  leir__visit_const(&v, e);
}
