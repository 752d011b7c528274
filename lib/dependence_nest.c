/*
 * The dependence model, question 3 (dependence.c has the overview): the
 * loops of one nest that each written buffer pins (loop order), and whether
 * the buffer is a pure accumulation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dependence.h"
#include "dependence_internal.h"
#include "vec.h"
#include "visit.h"

typedef struct acc_scan {
  const leir__analysis *a;
  uint32_t buffer;
  const leir_expr *first;     /* first access */
  const leir__eqinfo *first_info;
  bool same[LEIR_MAX_RANK];   /* entry k equal in all accesses so far */
  uint32_t count;
  const leir_expr *lhs;       /* the LHS access (when one) */
  const leir_equation *lhs_eq;
  uint32_t nlhs;
  const leir_expr *read;      /* a read at value position */
  const leir_equation *read_eq;
  bool read_in_subscript;
  bool multi_nest;            /* accesses sit in different (nested) nests */
} acc_scan;

static void scan_access(acc_scan *s, const leir_expr *t, const leir__eqinfo *info, bool is_lhs,
                        bool in_subscript) {
  if (s->count == 0) {
    s->first = t;
    s->first_info = info;
    for (uint32_t k = 0; k < LEIR_MAX_RANK; k++) s->same[k] = k < t->n;
  } else {
    for (uint32_t k = 0; k < s->first->n; k++)
      if (s->same[k] && (k >= t->n || !leir__expr_equal(s->a->p, s->first->kids[k], s->a->p,
                                                        t->kids[k])))
        s->same[k] = false;
  }
  if (info->nest != s->first_info->nest) s->multi_nest = true;
  s->count++;
  if (is_lhs) {
    s->lhs = t;
    s->lhs_eq = info->eq;
    s->nlhs++;
  } else {
    s->read = t;
    s->read_eq = info->eq;
    s->read_in_subscript = in_subscript;
  }
}

static void scan_expr(acc_scan *s, const leir_expr *e, const leir__eqinfo *info,
                      bool in_subscript) {
  if (e->kind == LEIR_EXPR_TENSOR) {
    if (e->id < s->a->nids && s->a->expr_buffer[e->id] == s->buffer)
      scan_access(s, e, info, false, in_subscript);
    for (uint32_t k = 0; k < e->n; k++) scan_expr(s, e->kids[k], info, true);
    return;
  }
  for (uint32_t k = 0; k < e->n; k++) scan_expr(s, e->kids[k], info, in_subscript);
}

static void scan_eq(acc_scan *s, const leir__eqinfo *info) {
  const leir_expr *lhs = info->eq->lhs;
  if (lhs->id < s->a->nids && s->a->expr_buffer[lhs->id] == s->buffer)
    scan_access(s, lhs, info, true, false);
  for (uint32_t k = 0; k < lhs->n; k++) scan_expr(s, lhs->kids[k], info, true);
  scan_expr(s, info->eq->rhs, info, false);
}

static int is_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  return *slot == v->ud ? LEIR__VISIT_STOP : LEIR__VISIT_NEXT;
}

static bool contains(const leir_expr *e, const leir_expr *x) {
  leir__visit v = LEIR__VISIT_INIT(is_node, (void *)x);
  return !leir__visit_const(&v, e);
}

/* Is rhs an accumulation of x (x reached through + - * / or max/min)? */
static leir__dep_acc acc_kind(const leir_expr *rhs, const leir_expr *x) {
  const leir_expr *e = rhs;
  while (e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  if (e->kind == LEIR_EXPR_CALL && (e->op == LEIR_OP_MAX || e->op == LEIR_OP_MIN)) {
    for (uint32_t k = 0; k < e->n; k++) {
      const leir_expr *arg = e->kids[k];
      while (arg->kind == LEIR_EXPR_PAREN) arg = arg->kids[0];
      if (arg == x) return LEIR__DEP_ACC_MAXMIN;
    }
    return LEIR__DEP_ACC_OTHER;
  }
  int family = 0; /* 1 additive, 2 multiplicative */
  while (e != x) {
    if (e->kind == LEIR_EXPR_PAREN) {
      e = e->kids[0];
      continue;
    }
    if (e->kind != LEIR_EXPR_BINARY) return LEIR__DEP_ACC_OTHER;
    int side = contains(e->kids[0], x) ? 0 : 1;
    int f;
    switch ((leir_op)e->op) {
      case LEIR_OP_ADD: f = 1; break;
      case LEIR_OP_SUB: f = side == 0 ? 1 : 0; break;
      case LEIR_OP_MUL: f = 2; break;
      case LEIR_OP_DIV: f = side == 0 ? 2 : 0; break;
      default: f = 0;
    }
    if (!f || (family && f != family)) return LEIR__DEP_ACC_OTHER;
    family = f;
    e = e->kids[side];
  }
  return family ? LEIR__DEP_ACC_ASSOC : LEIR__DEP_ACC_OTHER;
}

/* Loops of the nest (bits) pinned by subscript entry e, or 0. `info` gives
 * the extents of the equation's loop slots; the nest's own loops are slots
 * [outer, outer + nloops). Enclosing loops are constants here. */
static uint64_t pinned_by(const leir__analysis *a, const leir_expr *e, const leir__eqinfo *info,
                          uint32_t outer, uint32_t nloops, bool multi_nest) {
  leir__affine f;
  if (!leir__affine_of(a, e, &f)) return 0;
  int64_t coef[LEIR__AFFINE_TERMS], ext[LEIR__AFFINE_TERMS];
  uint32_t slot[LEIR__AFFINE_TERMS], n = 0;
  for (uint32_t i = 0; i < f.nterms; i++) {
    if (f.slot[i] < outer) continue; /* enclosing loops are constants here */
    if (f.slot[i] >= info->nloops) return 0;
    /* inner loops of different nested nests may share a name, not extents */
    if (multi_nest && f.slot[i] >= outer + nloops) return 0;
    coef[n] = f.coef[i];
    ext[n] = info->loops[f.slot[i]]->extent;
    slot[n++] = f.slot[i];
  }
  uint64_t det = leir__affine_determined(coef, ext, n), bits = 0;
  for (uint32_t i = 0; i < n; i++)
    if ((det >> i & 1) && slot[i] < outer + nloops) bits |= (uint64_t)1 << (slot[i] - outer);
  return bits;
}

static void collect_eqs(const leir__analysis *a, const leir_nest *n, uint32_t **v, uint32_t *len,
                        uint32_t *cap, bool *ok) {
  for (uint32_t k = 0; k < n->nitems && *ok; k++) {
    if (n->items[k].nest) {
      collect_eqs(a, n->items[k].nest, v, len, cap, ok);
      continue;
    }
    const leir_equation *eq = n->items[k].eq;
    uint32_t idx = eq->id < a->nids ? a->eq_index[eq->id] : LEIR__NONE;
    if (idx == LEIR__NONE) {
      *ok = false;
      return;
    }
    if (!leir__vec_grow32((void **)v, cap, (size_t)*len + 1, sizeof **v, 8)) {
      *ok = false;
      return;
    }
    (*v)[(*len)++] = idx;
  }
}

bool leir__dep_nest_buffers(const leir__analysis *a, const leir_nest *nest, uint32_t outer,
                            leir__dep_buffer **out, uint32_t *nout) {
  *out = NULL;
  *nout = 0;
  uint32_t nloops = nest->nloops;
  if (nloops > 64) return false;
  uint32_t *eqs = NULL, neqs = 0, cap = 0;
  bool ok = true;
  collect_eqs(a, nest, &eqs, &neqs, &cap, &ok);
  uint64_t unit = 0; /* loops of extent 1 never order anything */
  for (uint32_t l = 0; l < nloops; l++)
    if (nest->loops[l].extent == 1) unit |= (uint64_t)1 << l;
  uint64_t all = nloops == 64 ? ~(uint64_t)0 : (((uint64_t)1 << nloops) - 1);
  leir__dep_buffer *w = NULL;
  uint32_t nw = 0;
  if (ok && neqs) {
    w = calloc(neqs, sizeof *w);
    if (!w) ok = false;
  }
  for (uint32_t i = 0; i < neqs && ok; i++) {
    const leir__eqinfo *info = &a->eqs[eqs[i]];
    uint32_t b = info->lhs_buffer;
    if (b == LEIR__NONE) {
      ok = false;
      break;
    }
    bool seen = false;
    for (uint32_t j = 0; j < nw; j++) seen = seen || w[j].buffer == b;
    if (seen) continue;
    acc_scan s;
    memset(&s, 0, sizeof s);
    s.a = a;
    s.buffer = b;
    for (uint32_t j = 0; j < neqs; j++) scan_eq(&s, &a->eqs[eqs[j]]);
    uint64_t pinned = unit;
    for (uint32_t k = 0; k < s.first->n && k < LEIR_MAX_RANK; k++)
      if (s.same[k])
        pinned |= pinned_by(a, s.first->kids[k], s.first_info, outer, nloops, s.multi_nest);
    leir__dep_buffer *wb = &w[nw++];
    wb->buffer = b;
    wb->pinned = pinned & all;
    wb->acc = LEIR__DEP_ACC_OTHER;
    bool all_same = true;
    for (uint32_t k = 0; k < s.first->n && k < LEIR_MAX_RANK; k++) all_same = all_same && s.same[k];
    if (s.count == 2 && s.nlhs == 1 && s.read && s.read_eq == s.lhs_eq && !s.read_in_subscript &&
        all_same)
      wb->acc = (uint8_t)acc_kind(s.lhs_eq->rhs, s.read);
  }
  free(eqs);
  if (!ok) {
    free(w);
    return false;
  }
  *out = w;
  *nout = nw;
  return true;
}
