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
 * This file: pass 1, the driver that runs the passes, and signature
 * inference; pass 2 is in analyze_buffers.c, passes 3 and 4 in
 * analyze_bounds.c.
 * The same passes infer a signature when asked (infer mode): tensors never
 * written become inputs whose shapes grow with their (narrowed) reads.
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

/* ---- pass 1: equations, loops, variables ------------------------------ */

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
      !leir__analyze_grow_buffers(c, (uint32_t)max_buffers)) {
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
    uint32_t b = leir__analyze_new_buffer(
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
  for (uint32_t i = 0; i < a->neqs; i++) leir__analyze_define(c, i);
  /* pass 3 */
  for (uint32_t i = 0; i < a->neqs; i++) leir__analyze_bounds(c, i);
  /* pass 4 */
  leir__analyze_outputs(c);
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
