/* The expression-tree walker (visit.h). */
#include "visit.h"

static bool walk(leir__visit *v, leir_expr **slot, leir_expr *parent, uint32_t depth) {
  v->depth = depth;
  int r = v->fn(v, slot, parent);
  if (r == LEIR__VISIT_STOP) return false;
  if (r == LEIR__VISIT_SKIP) return true;
  leir_expr *e = *slot;
  bool tensor = e->kind == LEIR_EXPR_TENSOR;
  v->tensors += tensor;
  for (uint32_t k = 0; k < e->n; k++) {
    if (depth < LEIR__VISIT_MAX_PATH) v->path[depth] = k;
    if (!walk(v, &e->kids[k], e, depth + 1)) return false;
  }
  v->tensors -= tensor;
  return true;
}

bool leir__visit_expr(leir__visit *v, leir_expr **root) {
  v->tensors = 0;
  return walk(v, root, NULL, 0);
}

bool leir__visit_nest(leir__visit *v, const leir_nest *n) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].nest) {
      if (!leir__visit_nest(v, n->items[k].nest)) return false;
      continue;
    }
    leir_equation *eq = n->items[k].eq;
    v->nest = n;
    v->eq = eq;
    v->side = 0;
    if (!leir__visit_expr(v, &eq->lhs)) return false;
    v->nest = n;
    v->eq = eq;
    v->side = 1;
    if (!leir__visit_expr(v, &eq->rhs)) return false;
  }
  return true;
}

static int tensor_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)v;
  (void)parent;
  return (*slot)->kind == LEIR_EXPR_TENSOR ? LEIR__VISIT_STOP : LEIR__VISIT_NEXT;
}

bool leir__expr_has_tensor(const leir_expr *e) {
  leir__visit v = LEIR__VISIT_INIT(tensor_node, NULL);
  return !leir__visit_const(&v, e);
}
