/* Read-only walk over the program tree for embedders. */
#include <string.h>

#include "ir.h"
#include "options.h"

size_t leir_program_nest_count(const leir_program *p) { return p ? p->nnests : 0; }

const leir_nest *leir_program_nest(const leir_program *p, size_t i) {
  return p && i < p->nnests ? p->nests[i] : NULL;
}

size_t leir_nest_loop_count(const leir_nest *n) { return n ? n->nloops : 0; }

leir_loop leir_nest_loop(const leir_program *p, const leir_nest *n, size_t i) {
  leir_loop l = {LEIR_LOOP_SERIAL, 0, ""};
  if (!p || !n || i >= n->nloops) return l;
  l.kind = (leir_loop_kind)n->loops[i].kind;
  l.extent = n->loops[i].extent;
  l.var = leir__sym_name(p, n->loops[i].sym);
  return l;
}

size_t leir_nest_item_count(const leir_nest *n) { return n ? n->nitems : 0; }

const leir_equation *leir_nest_item_equation(const leir_nest *n, size_t i) {
  return n && i < n->nitems ? n->items[i].eq : NULL;
}

const leir_nest *leir_nest_item_nest(const leir_nest *n, size_t i) {
  return n && i < n->nitems ? n->items[i].nest : NULL;
}

leir_position leir_nest_position(const leir_program *p, const leir_nest *n) {
  leir_position pos = {0, 0};
  if (p && n) leir__position(p, n->pos, &pos.line, &pos.column);
  return pos;
}

const leir_expr *leir_equation_lhs(const leir_equation *eq) { return eq ? eq->lhs : NULL; }
const leir_expr *leir_equation_rhs(const leir_equation *eq) { return eq ? eq->rhs : NULL; }

leir_expr_kind leir_expr_get_kind(const leir_expr *e) {
  return e ? (leir_expr_kind)e->kind : LEIR_EXPR_NUMBER;
}

leir_op leir_expr_op(const leir_expr *e) { return e ? (leir_op)e->op : LEIR_OP_NONE; }

size_t leir_expr_child_count(const leir_expr *e) { return e ? e->n : 0; }

const leir_expr *leir_expr_child(const leir_expr *e, size_t i) {
  return e && i < e->n ? e->kids[i] : NULL;
}

leir_op leir_expr_compare_op(const leir_expr *e, size_t i) {
  if (!e || e->kind != LEIR_EXPR_COMPARE || i + 1 >= e->n) return LEIR_OP_NONE;
  return (leir_op)e->u.cmp_ops[i];
}

const char *leir_expr_name(const leir_program *p, const leir_expr *e) {
  if (!p || !e || (e->kind != LEIR_EXPR_TENSOR && e->kind != LEIR_EXPR_VAR)) return "";
  return leir__sym_name(p, e->sym);
}

leir_dtype leir_expr_dtype(const leir_expr *e) { return e ? (leir_dtype)e->dtype : LEIR_F64; }

leir_scope leir_expr_scope(const leir_expr *e) {
  return e ? (leir_scope)e->scope : LEIR_SCOPE_GLOBAL;
}

double leir_expr_number(const leir_expr *e) {
  return e && e->kind == LEIR_EXPR_NUMBER ? e->u.num->value : 0.0;
}

const char *leir_expr_lexeme(const leir_expr *e, size_t *len) {
  if (!e || e->kind != LEIR_EXPR_NUMBER) {
    if (len) *len = 0;
    return NULL;
  }
  if (len) *len = e->u.num->len;
  return e->u.num->lexeme;
}

leir_position leir_expr_position(const leir_program *p, const leir_expr *e) {
  leir_position pos = {0, 0};
  if (p && e) leir__position(p, e->pos, &pos.line, &pos.column);
  return pos;
}

typedef struct walker {
  leir_walk_callbacks cb;
  void *payload;
} walker;

static int walk_expr(const walker *w, const leir_expr *e, const leir_expr *parent) {
  int rc = w->cb.expr ? w->cb.expr(e, parent, w->payload) : 0;
  for (uint32_t k = 0; !rc && k < e->n; k++) rc = walk_expr(w, e->kids[k], e);
  return rc;
}

static int walk_nest(const walker *w, const leir_nest *n, uint32_t depth) {
  int rc = w->cb.enter_nest ? w->cb.enter_nest(n, depth, w->payload) : 0;
  for (uint32_t k = 0; !rc && k < n->nitems; k++) {
    const leir__item *it = &n->items[k];
    if (it->eq) {
      rc = w->cb.equation ? w->cb.equation(it->eq, w->payload) : 0;
      if (!rc) rc = walk_expr(w, it->eq->lhs, NULL);
      if (!rc) rc = walk_expr(w, it->eq->rhs, NULL);
    } else {
      rc = walk_nest(w, it->nest, depth + 1);
    }
  }
  if (!rc && w->cb.leave_nest) rc = w->cb.leave_nest(n, depth, w->payload);
  return rc;
}

int leir_program_walk(const leir_program *p, const leir_walk_callbacks *cb, void *payload) {
  if (!p || !cb) return 0;
  walker w;
  if (LEIR__OPTIONS_READ(leir_walk_callbacks, &w.cb, cb, LEIR_WALK_CALLBACKS_INIT) != LEIR_OK)
    return LEIR_ERR_ARGUMENT;
  w.payload = payload;
  for (uint32_t t = 0; t < p->nnests; t++) {
    int rc = walk_nest(&w, p->nests[t], 0);
    if (rc) return rc;
  }
  return 0;
}
