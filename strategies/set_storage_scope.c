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
#include "visit.h"

/* Every tensor in order of first appearance, with the scopes it is
 * accessed with (a bit per scope). */
typedef struct tensor_scopes {
  uint32_t sym;
  uint8_t scopes;
} tensor_scopes;

typedef struct tscan {
  LEIR__VEC(tensor_scopes) t;
  bool failed;
} tscan;

static int scan_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  tscan *s = v->ud;
  const leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_TENSOR) return LEIR__VISIT_NEXT;
  size_t k = 0;
  while (k < s->t.len && s->t.data[k].sym != e->sym) k++;
  if (k == s->t.len) {
    tensor_scopes *ts = LEIR__VEC_PUSH(&s->t);
    if (!ts) {
      s->failed = true;
      return LEIR__VISIT_STOP;
    }
    ts->sym = e->sym;
    ts->scopes = 0;
  }
  s->t.data[k].scopes |= (uint8_t)(1u << e->scope);
  return LEIR__VISIT_NEXT;
}

static void enumerate(leir__sctx *c) {
  tscan s;
  memset(&s, 0, sizeof s);
  leir__visit v = LEIR__VISIT_INIT(scan_node, &s);
  for (uint32_t t = 0; t < c->p->nnests && !s.failed; t++) leir__visit_nest(&v, c->p->nests[t]);
  if (s.failed) c->status = LEIR_ERR_NOMEM;
  static const char letters[3] = {'g', 's', 'l'};
  for (size_t k = 0; k < s.t.len && leir__more(c); k++) {
    uint32_t sym = s.t.data[k].sym;
    if (leir__skip_tensor(c, sym)) continue;
    if (c->known[sym]) {
      LEIR__REJECT(c, leir__site_tensor(c, NULL, sym), LEIR__R_STORAGE_KNOWN,
                   "%s is an input or output of the program; only intermediates change scope",
                   leir__name(c, sym));
      continue;
    }
    for (int sc = 0; sc < 3 && leir__more(c); sc++)
      if (s.t.data[k].scopes & ~(1u << sc))
        leir__emit(c, LEIR_EXACT, "tensor=%s scope=%c", leir__name(c, sym), letters[sc]);
  }
  free(s.t.data);
}

static leir_status apply(leir__sctx *c, const leir__pstep *ps, leir_program *out) {
  uint32_t x = leir__ps_tensor(c, leir__ps_get(ps, LEIR__K_TENSOR, NULL));
  const leir__tok *sc = leir__ps_get(ps, LEIR__K_SCOPE, NULL);
  if (x == LEIR__NOSYM || !sc) return LEIR_ERR_INTERNAL;
  uint8_t scope = sc->s[0] == 'g' ? LEIR_SCOPE_GLOBAL : sc->s[0] == 's' ? LEIR_SCOPE_SHARED
                                                                          : LEIR_SCOPE_LOCAL;
  for (uint32_t t = 0; t < out->nnests; t++) leir__set_tensor_scope(out->nests[t], x, (leir_scope)scope);
  return LEIR_OK;
}

const leir__strategy_impl leir__set_storage_scope = {
    .keys = LEIR__KEY(LEIR__K_TENSOR) | LEIR__KEY(LEIR__K_SCOPE),
    .required = LEIR__KEY(LEIR__K_TENSOR) | LEIR__KEY(LEIR__K_SCOPE),
    .enumerate = enumerate,
    .apply = apply,
    .cot = leir__cot_scope_facts,
};
