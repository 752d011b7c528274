/*
 * precompute_indices (22, memory): store a compound subscript entry E
 * (c-1, c+g, tx*8+a, ...) in an i64 table and index through it:
 *   COPY[T^{i64,g}_{keys} = E];  every entry E of the nest becomes T_{keys}
 * keys are the nest's loops used by E (nest order); the table's nest runs
 * over them with the tx fix-up (cache_read_write.c), so `c-2` over a loop
 * c of extent 28 gives B^{28}_{tx=0}[T_{tx}=tx-2;] and reads A_{..,T_{c},..}.
 *
 * Sites: top-level nests with one equation (no nested nests); every
 * distinct compound entry of any subscript (not a number, not a lone
 * variable, no tensor inside, at least one loop variable), in order of
 * first appearance. An entry of the left-hand side over a P, V or B loop
 * is left in place (and is no site when it occurs only there): an index
 * table there would hide which elements each iteration writes, so the
 * backends could no longer prove the loop's iterations independent.
 * Parameters:
 * `entry=E` (the entry's canonical text). Exact.
 */
#include <string.h>

#include "memory_sites.h"

#define MAX_ENTRIES 128

static bool has_tensor(const leir_expr *e) {
  if (e->kind == LEIR_EXPR_TENSOR) return true;
  for (uint32_t k = 0; k < e->n; k++)
    if (has_tensor(e->kids[k])) return true;
  return false;
}

static bool compound(const leir_expr *e) {
  const leir_expr *x = e;
  while (x->kind == LEIR_EXPR_PAREN) x = x->kids[0];
  return x->kind != LEIR_EXPR_NUMBER && x->kind != LEIR_EXPR_VAR && !has_tensor(e);
}

/* Same tensor name and subscript (dtype and scope aside, as §3.4 rule 2). */
static bool same_ref(const leir_program *pa, const leir_expr *a, const leir_program *pb,
                     const leir_expr *b) {
  if (a->kind != LEIR_EXPR_TENSOR || b->kind != LEIR_EXPR_TENSOR || a->n != b->n ||
      leir__sym_len(pa, a->sym) != leir__sym_len(pb, b->sym) ||
      memcmp(leir__sym_name(pa, a->sym), leir__sym_name(pb, b->sym), leir__sym_len(pa, a->sym)))
    return false;
  for (uint32_t k = 0; k < a->n; k++)
    if (!leir__expr_equal(pa, a->kids[k], pb, b->kids[k])) return false;
  return true;
}

typedef struct entries {
  uint32_t n;
  const leir_expr *e[MAX_ENTRIES];
  uint64_t lhs_guard; /* loops whose left-hand entries are kept */
} entries;

/* Loops of kinds P, V and B: the backends must prove their iterations
 * independent from the left-hand subscripts, which an index table hides. */
static uint64_t annotated(const leir_nest *n) {
  uint64_t m = 0;
  for (uint32_t k = 0; k < n->nloops && k < 64; k++)
    if (n->loops[k].kind == LEIR_LOOP_PARALLEL || n->loops[k].kind == LEIR_LOOP_VECTORIZED ||
        n->loops[k].kind == LEIR_LOOP_BOUND)
      m |= (uint64_t)1 << k;
  return m;
}

/* `self` (may be NULL): the left-hand side; entries of a read equal to it
 * over the loops in `guard` are kept in place like the left side's (see
 * self_read()), so they are no sites either. */
static void collect(const leir_program *p, const leir_nest *nest, const leir_expr *e,
                    const leir_expr *self, uint64_t guard, entries *out) {
  if (e->kind == LEIR_EXPR_TENSOR) {
    bool is_self = self && e != self && same_ref(p, e, p, self);
    for (uint32_t k = 0; k < e->n; k++) {
      const leir_expr *x = e->kids[k];
      if (is_self && (leir__loops_in(nest, x) & guard)) continue;
      if (compound(x) && leir__loops_in(nest, x)) {
        bool dup = false;
        for (uint32_t j = 0; j < out->n && !dup; j++) dup = leir__expr_equal(p, out->e[j], p, x);
        if (!dup && out->n < MAX_ENTRIES) out->e[out->n++] = x;
      }
    }
  }
  for (uint32_t k = 0; k < e->n; k++) collect(p, nest, e->kids[k], self, guard, out);
}

static bool nest_ok(leir__sctx *c, const leir__nref *r) {
  if (r->depth != 1 || r->has_nested || r->neqs != 1 || r->nest->nloops > 64) {
    LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_PRECOMPUTE_INDICES_NEST,
                 "only top-level nests with exactly one equation are handled");
    return false;
  }
  return true;
}

static void collect_nest(const leir__sctx *c, const leir__nref *r, entries *es) {
  es->n = 0;
  const leir_equation *eq = r->nest->items[0].eq;
  collect(c->p, r->nest, eq->lhs, NULL, 0, es);
  /* a left-hand entry over a P/V/B loop stays (see annotated()) */
  uint32_t w = 0;
  for (uint32_t k = 0; k < es->n; k++)
    if (!(leir__loops_in(r->nest, es->e[k]) & annotated(r->nest))) es->e[w++] = es->e[k];
  es->n = w;
  es->lhs_guard = annotated(r->nest);
  collect(c->p, r->nest, eq->rhs, eq->lhs, es->lhs_guard, es);
}

static int table_fixup(const leir__nref *r, const leir_expr *e, uint32_t *sel, uint32_t *nsel) {
  uint64_t used = leir__loops_in(r->nest, e);
  *nsel = 0;
  for (uint32_t k = 0; k < r->nest->nloops; k++)
    if (used >> k & 1) sel[(*nsel)++] = k;
  /* the table is written at T_{keys}: every key is pinned */
  return leir__fixup_index(r->nest, sel, *nsel, used);
}

static void enumerate(leir__sctx *c) {
  leir__strbuf txt = LEIR__STRBUF_INIT;
  for (uint32_t i = 0; i < c->nnests && leir__more(c); i++) {
    const leir__nref *r = &c->nests[i];
    if (leir__skip_nest(c, r)) continue;
    if (!nest_ok(c, r)) continue;
    entries es;
    collect_nest(c, r, &es);
    if (!es.n)
      LEIR__REJECT(c, leir__site_nest(c, r), LEIR__R_PRECOMPUTE_INDICES_ENTRIES,
                   "no subscript entry is a compound index expression of the loops");
    for (uint32_t k = 0; k < es.n && leir__more(c); k++) {
      txt.len = 0;
      leir__print_expr(&txt, c->p, es.e[k]);
      leir__sb_putc(&txt, '\0');
      if (txt.failed) {
        c->status = LEIR_ERR_NOMEM;
        break;
      }
      uint32_t sel[64], nsel;
      if (table_fixup(r, es.e[k], sel, &nsel) < 0) {
        if (c->mode == LEIR__MODE_EXPLAIN) {
          snprintf(c->site, sizeof c->site, "nest=%s entry=%s", r->label, txt.data);
          leir__reject(c, c->site, LEIR__R_MEMORY_NO_THREAD_LOOP,
                       "the table's nest has no bound loop and every loop has extent >= 1024");
        }
        continue;
      }
      leir__emit(c, LEIR_EXACT, "nest=%s entry=%s", r->label, txt.data);
    }
  }
  leir__sb_release(&txt);
}

typedef struct rp_ctx {
  uint64_t guard;         /* do not replace entries over these loops */
  leir_program *out;
  const leir_program *src;
  const leir_expr *entry; /* in src */
  uint32_t sym;
  const leir_nest *nest;
  const uint32_t *sel;
  uint32_t nsel;
  const leir_expr *src_lhs; /* the equation's left-hand side in src */
  const leir_expr *lhs;     /* ... and in out */
} rp_ctx;

static leir_expr *table_ref(rp_ctx *x) {
  leir_expr *t = leir__new_tensor(x->out, x->sym, LEIR_I64, LEIR_SCOPE_GLOBAL, x->nsel);
  for (uint32_t k = 0; k < x->nsel; k++)
    t->kids[k] = leir__mk_var(x->out, x->nest->loops[x->sel[k]].sym);
  return t;
}

/* A read of the left-hand tensor with the left-hand subscript (the
 * accumulator's self-read X in X_{s}=X_{s}+...) is rewritten exactly when
 * the left-hand side is: implicit initialization (spec/leir.md §3.4)
 * compares the two subscripts as written, so a self-read respelled through
 * the table while the left side keeps the entry would start from whatever
 * the buffer holds. */
static bool self_read(const rp_ctx *x, const leir_expr *e) {
  return e != x->lhs && same_ref(x->out, e, x->src, x->src_lhs);
}

static void replace(rp_ctx *x, leir_expr *e, bool lhs) {
  bool keep = (lhs || (e->kind == LEIR_EXPR_TENSOR && self_read(x, e))) &&
              (leir__loops_in(x->nest, x->entry) & x->guard);
  if (e->kind == LEIR_EXPR_TENSOR && !keep) {
    for (uint32_t k = 0; k < e->n; k++)
      if (leir__expr_equal(x->out, e->kids[k], x->src, x->entry)) e->kids[k] = table_ref(x);
  }
  for (uint32_t k = 0; k < e->n; k++) replace(x, e->kids[k], false);
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  const leir__nref *r = leir__ps_nest(c, ps);
  const leir__tok *want = leir__ps_get(ps, LEIR__K_ENTRY, NULL);
  if (!r || !want || r->depth != 1 || r->has_nested || r->neqs != 1) return LEIR_ERR_INTERNAL;
  entries es;
  collect_nest(c, r, &es);
  const leir_expr *entry = NULL;
  leir__strbuf txt = LEIR__STRBUF_INIT;
  for (uint32_t k = 0; k < es.n && !entry; k++) {
    txt.len = 0;
    leir__print_expr(&txt, c->p, es.e[k]);
    if (txt.len == want->len && memcmp(txt.data, want->s, want->len) == 0) entry = es.e[k];
  }
  leir__sb_release(&txt);
  if (!entry) return LEIR_ERR_INTERNAL;
  uint32_t sel[64], nsel;
  int fix = table_fixup(r, entry, sel, &nsel);
  uint32_t top = r->path[0];
  uint32_t t = leir__tensor_sym(out, c->next_tensor);
  (void)fix;
  leir_nest *cp = leir__copy_nest_for(out, r->nest, sel, nsel);
  rp_ctx x = {es.lhs_guard, out, c->p, entry, t, r->nest, sel, nsel, r->nest->items[0].eq->lhs,
              NULL};
  leir_expr *lhs = table_ref(&x);
  cp->items[0].eq = leir__new_equation(out, lhs, leir__copy_expr(out, c->p, entry));
  leir__finish_copy_nest(out, cp);
  leir_equation *eq = out->nests[top]->items[0].eq;
  x.lhs = eq->lhs;
  replace(&x, eq->rhs, false); /* first: self-reads compare with the unchanged left side */
  replace(&x, eq->lhs, true);
  leir__program_insert_nest(out, top, cp);
  return LEIR_OK;
}

const leir__strategy_impl leir__precompute_indices = {
    .keys = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_ENTRY),
    .required = LEIR__KEY(LEIR__K_NEST) | LEIR__KEY(LEIR__K_ENTRY),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_precompute_facts,
};
