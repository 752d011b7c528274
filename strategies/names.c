/*
 * Fresh names that never collide (spec/leir.md §5): tensors above the
 * largest alphabet index in the program, loops not used in the same
 * top-level nest.
 */
#include <stdio.h>
#include <string.h>

#include "kit.h"
#include "visit.h"

typedef struct fresh_scan {
  const leir_program *p;
  int64_t max;
} fresh_scan;

static int max_tensor_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  const leir_expr *e = *slot;
  if (e->kind == LEIR_EXPR_TENSOR) {
    fresh_scan *s = v->ud;
    int64_t i = leir__tensor_index_of_name(leir__sym_name(s->p, e->sym), leir__sym_len(s->p, e->sym));
    if (i > s->max) s->max = i;
  }
  return LEIR__VISIT_NEXT;
}

uint64_t leir__first_fresh_tensor(const leir_program *p) {
  fresh_scan s = {p, -1};
  leir__visit v = LEIR__VISIT_INIT(max_tensor_node, &s);
  for (uint32_t t = 0; t < p->nnests; t++) leir__visit_nest(&v, p->nests[t]);
  int64_t max = s.max;
  for (uint32_t i = 0; i < p->nsig; i++) {
    const char *nm = leir__sym_name(p, p->sig[i].sym);
    int64_t k = leir__tensor_index_of_name(nm, strlen(nm));
    if (k > max) max = k;
  }
  return (uint64_t)(max + 1);
}

uint32_t leir__tensor_sym(leir_program *p, uint64_t index) {
  char buf[16];
  leir__tensor_name_of_index(index, buf);
  return leir__sym_intern(p, buf, strlen(buf));
}

static bool loop_used(const leir_program *p, const leir_nest *n, const char *name, size_t len) {
  for (uint32_t k = 0; k < n->nloops; k++)
    if (leir__sym_len(p, n->loops[k].sym) == len &&
        memcmp(leir__sym_name(p, n->loops[k].sym), name, len) == 0)
      return true;
  for (uint32_t k = 0; k < n->nitems; k++)
    if (n->items[k].nest && loop_used(p, n->items[k].nest, name, len)) return true;
  return false;
}

uint32_t leir__fresh_loop(leir_program *p, const leir_nest *tree, uint64_t start,
                          const uint32_t *also, uint32_t n) {
  char buf[16];
  for (uint64_t i = start;; i++) {
    leir__loop_name_of_index(i, buf);
    size_t len = strlen(buf);
    if (!leir__is_loop_var_name(buf, len) || loop_used(p, tree, buf, len)) continue;
    bool taken = false;
    for (uint32_t k = 0; k < n && !taken; k++)
      taken = leir__sym_len(p, also[k]) == len && memcmp(leir__sym_name(p, also[k]), buf, len) == 0;
    if (!taken) return leir__sym_intern(p, buf, len);
  }
}

uint32_t leir__fresh_loop_named(leir_program *p, const leir_nest *tree, const char *base) {
  char buf[96];
  size_t bl = strlen(base);
  if (bl > 64) bl = 64;
  memcpy(buf, base, bl);
  buf[bl] = '\0';
  for (unsigned i = 1; loop_used(p, tree, buf, strlen(buf)); i++)
    snprintf(buf + bl, sizeof buf - bl, "_%u", i);
  return leir__sym_intern(p, buf, strlen(buf));
}
