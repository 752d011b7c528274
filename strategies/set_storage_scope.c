/*
 * set_storage_scope (20, memory): give every access of an intermediate
 * tensor the scope g, s or l (a placement hint; values never change).
 *
 * Sites: every intermediate (a tensor that is not a signature variable),
 * in order of first appearance. Parameters: `tensor=X scope=S` for every S
 * that differs from some access's current scope (the reference also emits
 * no-op rewrites). Exact.
 */
#include <stdlib.h>
#include <string.h>

#include "kit.h"

typedef struct tscan {
  uint32_t n, cap;
  uint32_t *syms;
  uint8_t *scopes; /* bit per scope seen */
  bool failed;
} tscan;

static void scan_expr(tscan *s, const leir_expr *e) {
  if (e->kind == LEIR_EXPR_TENSOR) {
    uint32_t k = 0;
    while (k < s->n && s->syms[k] != e->sym) k++;
    if (k == s->n) {
      if (s->n == s->cap) {
        uint32_t nc = s->cap ? s->cap * 2 : 16;
        uint32_t *ns = realloc(s->syms, nc * sizeof *ns);
        if (ns) s->syms = ns;
        uint8_t *nsc = ns ? realloc(s->scopes, nc) : NULL;
        if (nsc) s->scopes = nsc;
        if (!nsc) {
          s->failed = true;
          return;
        }
        s->cap = nc;
      }
      s->syms[k] = e->sym;
      s->scopes[k] = 0;
      s->n++;
    }
    s->scopes[k] |= (uint8_t)(1u << e->scope);
  }
  for (uint32_t k = 0; k < e->n; k++) scan_expr(s, e->kids[k]);
}

static void scan_nest(tscan *s, const leir_nest *n) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].nest) {
      scan_nest(s, n->items[k].nest);
    } else {
      scan_expr(s, n->items[k].eq->lhs);
      scan_expr(s, n->items[k].eq->rhs);
    }
  }
}

static void enumerate(leir__sctx *c) {
  tscan s;
  memset(&s, 0, sizeof s);
  for (uint32_t t = 0; t < c->p->nnests; t++) scan_nest(&s, c->p->nests[t]);
  if (s.failed) c->status = LEIR_ERR_NOMEM;
  static const char letters[3] = {'g', 's', 'l'};
  for (uint32_t k = 0; k < s.n && leir__more(c); k++) {
    if (leir__skip_tensor(c, s.syms[k])) continue;
    if (c->known[s.syms[k]]) {
      LEIR__REJECT(c, leir__site_tensor(c, NULL, s.syms[k]), LEIR__R_STORAGE_KNOWN,
                   "%s is an input or output of the program; only intermediates change scope",
                   leir__name(c, s.syms[k]));
      continue;
    }
    for (int sc = 0; sc < 3 && leir__more(c); sc++)
      if (s.scopes[k] & ~(1u << sc))
        leir__emit(c, LEIR_EXACT, "tensor=%s scope=%c", leir__name(c, s.syms[k]), letters[sc]);
  }
  free(s.syms);
  free(s.scopes);
}

static void set_scope(leir_expr *e, uint32_t sym, uint8_t sc) {
  if (e->kind == LEIR_EXPR_TENSOR && e->sym == sym) e->scope = sc;
  for (uint32_t k = 0; k < e->n; k++) set_scope(e->kids[k], sym, sc);
}

static void set_nest(leir_nest *n, uint32_t sym, uint8_t sc) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].nest) {
      set_nest(n->items[k].nest, sym, sc);
    } else {
      set_scope(n->items[k].eq->lhs, sym, sc);
      set_scope(n->items[k].eq->rhs, sym, sc);
    }
  }
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  uint32_t x = leir__ps_tensor(c, leir__ps_get(ps, LEIR__K_TENSOR, NULL));
  const leir__tok *sc = leir__ps_get(ps, LEIR__K_SCOPE, NULL);
  if (x == LEIR__NOSYM || !sc) return LEIR_ERR_INTERNAL;
  uint8_t scope = sc->s[0] == 'g' ? LEIR_SCOPE_GLOBAL : sc->s[0] == 's' ? LEIR_SCOPE_SHARED
                                                                          : LEIR_SCOPE_LOCAL;
  for (uint32_t t = 0; t < out->nnests; t++) set_nest(out->nests[t], x, scope);
  return LEIR_OK;
}

const leir__strategy_impl leir__set_storage_scope = {
    .keys = LEIR__KEY(LEIR__K_TENSOR) | LEIR__KEY(LEIR__K_SCOPE),
    .required = LEIR__KEY(LEIR__K_TENSOR) | LEIR__KEY(LEIR__K_SCOPE),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_scope_facts,
};
