/*
 * cache_read_write (18, memory): stage a tensor through a copy in shared
 * (s) or local (l) memory.
 *   read:  COPY[T^{dt,s|l}_{e} = X_{e}];  then the nest reads T_{e}
 *   write: the nest computes into T^{dt,s|l} instead of O, then
 *          COPY[O_{e} = T_{e}] writes it back
 * COPY runs over the nest's loops that the subscript e uses (nest order,
 * kinds kept); when none of them is bound, the first with extent < 1024
 * becomes B^{n}_{tx=0} (the reference's fix-up).
 *
 * Sites: top-level nests without nested nests. Read: every tensor the nest
 * reads (not one it writes) with one subscript for all its reads, no
 * indirect index, in bounds over the full loop ranges. Write: nests with
 * one equation whose output has a subscript over some loop, when the
 * output is first written here or the equation does not read it. Scopes s
 * and l. Exact. Parameters: `tensor=X mode=read|write scope=s|l`.
 */
#include "memory_sites.h"

static const char scopes[2] = {'s', 'l'};

static void emit_read(leir__sctx *c, const leir__nref *r, const leir__read_site *s, void *ud) {
  (void)ud;
  for (int k = 0; k < 2 && leir__more(c); k++)
    leir__emit(c, LEIR_EXACT, "nest=%s tensor=%s mode=read scope=%c", r->label,
               leir__name(c, s->sym), scopes[k]);
}

typedef struct wsite {
  const leir_expr *lhs;
  uint32_t sel[64], nsel;
  int fixup;
} wsite;

static bool write_site(leir__sctx *c, const leir__nref *r, wsite *w) {
  if (r->depth != 1 || r->has_nested || r->neqs != 1 || r->nest->nloops > 64) return false;
  const leir_equation *eq = r->nest->items[0].eq;
  const leir_expr *lhs = eq->lhs;
  w->lhs = lhs;
  const char *name = leir__name(c, lhs->sym);
  if (lhs->n == 0) {
    LEIR__REJECT(c, leir__site_tensor(c, r, lhs->sym), LEIR__R_CACHE_READ_WRITE_WRITE,
                 "the output %s is a scalar", name);
    return false;
  }
  uint64_t loops = 0;
  for (uint32_t k = 0; k < lhs->n; k++) {
    if (leir__expr_has_tensor(lhs->kids[k])) {
      LEIR__REJECT(c, leir__site_tensor(c, r, lhs->sym), LEIR__R_MEMORY_INDIRECT,
                   "the output %s has an indirect (tensor) index", name);
      return false;
    }
    loops |= leir__loops_in(r->nest, lhs->kids[k]);
  }
  if (!loops) {
    LEIR__REJECT(c, leir__site_tensor(c, r, lhs->sym), LEIR__R_MEMORY_CONSTANT_INDEX,
                 "the output %s is indexed by constants only", name);
    return false;
  }
  uint32_t idx = eq->id < c->a->nids ? c->a->eq_index[eq->id] : LEIR__NONE;
  uint32_t b = idx == LEIR__NONE ? LEIR__NONE : c->a->eqs[idx].lhs_buffer;
  if (b == LEIR__NONE) return false;
  if (c->a->buffers[b].first_writer != idx && leir__expr_reads_tensor(eq->rhs, lhs->sym, NULL)) {
    LEIR__REJECT(c, leir__site_tensor(c, r, lhs->sym), LEIR__R_CACHE_READ_WRITE_WRITE,
                 "%s holds values from an earlier nest that the equation reads; a fresh "
                 "buffer would lose them",
                 name);
    return false;
  }
  w->nsel = 0;
  for (uint32_t k = 0; k < r->nest->nloops; k++)
    if (loops >> k & 1) w->sel[w->nsel++] = k;
  w->fixup = leir__fixup_index(r->nest, w->sel, w->nsel, leir__pinned_by_subscript(r->nest, lhs));
  if (w->fixup < 0) {
    LEIR__REJECT(c, leir__site_tensor(c, r, lhs->sym), LEIR__R_MEMORY_NO_THREAD_LOOP,
                 "the copy has no bound loop and every loop has extent >= 1024");
    return false;
  }
  return true;
}

static void enumerate(leir__sctx *c) {
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (leir__skip_nest(c, r)) continue;
    leir__each_read_site(c, r, emit_read, NULL);
    if (r->depth == 1 && !r->has_nested && r->neqs != 1)
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_CACHE_READ_WRITE_WRITE,
                   "the write variant needs a nest with exactly one equation");
    wsite w;
    if (!write_site(c, r, &w)) continue;
    for (int k = 0; k < 2 && leir__more(c); k++)
      leir__emit(c, LEIR_EXACT, "nest=%s tensor=%s mode=write scope=%c", r->label,
                 leir__name(c, w.lhs->sym), scopes[k]);
  }
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  uint32_t x = leir__ps_tensor(c, leir__ps_get(ps, LEIR__K_TENSOR, NULL));
  const leir__tok *mode = leir__ps_get(ps, LEIR__K_MODE, NULL);
  const leir__tok *sc = leir__ps_get(ps, LEIR__K_SCOPE, NULL);
  if (!r || x == LEIR__NOSYM || !mode || !sc) return LEIR_ERR_INTERNAL;
  leir_scope scope = sc->s[0] == 'l' ? LEIR_SCOPE_LOCAL : LEIR_SCOPE_SHARED;
  leir__mode saved = c->mode;
  c->mode = LEIR__MODE_LIST;
  uint32_t top = r->path[0];
  leir_nest *m = out->nests[top];
  uint32_t t = leir__tensor_sym(out, c->next_tensor);
  leir_status st = LEIR_ERR_INTERNAL;
  if (leir__tok_eq(mode, "read")) {
    leir__read_site s;
    if (leir__read_site_of(c, r, x, &s)) {
      leir_nest *cp = leir__copy_nest_for(out, r->nest, s.sel, s.nsel);
      leir_expr *src = leir__copy_expr(out, c->p, s.ref);
      leir_expr *dst = leir__copy_expr(out, c->p, s.ref);
      dst->sym = t;
      dst->scope = (uint8_t)scope;
      cp->items[0].eq = leir__new_equation(out, dst, src);
      leir__finish_copy_nest(out, cp);
      leir__rename_tensor(m, x, t, scope);
      leir__program_insert_nest(out, top, cp);
      st = LEIR_OK;
    }
  } else {
    wsite w;
    if (write_site(c, r, &w)) {
      leir_nest *cp = leir__copy_nest_for(out, r->nest, w.sel, w.nsel);
      leir_expr *dst = leir__copy_expr(out, c->p, w.lhs);
      leir_expr *src = leir__copy_expr(out, c->p, w.lhs);
      src->sym = t;
      src->scope = (uint8_t)scope;
      cp->items[0].eq = leir__new_equation(out, dst, src);
      leir__finish_copy_nest(out, cp);
      leir__rename_tensor(m, x, t, scope);
      leir__program_insert_nest(out, top + 1, cp);
      st = LEIR_OK;
    }
  }
  c->mode = saved;
  return st;
}

const leir__strategy_impl leir__cache_read_write = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_TENSOR) | LEIR__KEY(LEIR__K_MODE) | LEIR__KEY(LEIR__K_SCOPE),
    .required = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_TENSOR) | LEIR__KEY(LEIR__K_MODE) | LEIR__KEY(LEIR__K_SCOPE),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_cache_facts,
};
