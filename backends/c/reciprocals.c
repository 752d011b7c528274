/*
 * Reciprocals of loop-invariant divisors, a pass of the C lowering
 * (lower_c.c):
 *
 * x / y in f32 with y unchanged through the innermost loop of its equation
 * costs a vector division per element; computed as
 *
 *   const double leir_q7 = 1.0 / (double)(y);      before the loop
 *   ... (float)((double)(x) * leir_q7) ...          inside
 *
 * it is a multiplication (the compiler does not hoist the reciprocal
 * itself: it cannot prove the loop's stores miss y), and the same float:
 * the double product is within 2^-52 (relative) of x / y, while a quotient
 * of two floats is never within 2^-49 of a rounding boundary of float
 * unless on it, and never on one (a midpoint has 25 significant bits and
 * y times it more than 24), so both round alike, subnormal and overflowing
 * results included (docs/verification.md, "Division by a loop invariant";
 * tests/test_cpu.c checks it on random pairs over the whole range).
 *
 * Hoisted only where evaluating y early cannot differ: y is not inside a
 * conditional (its accesses may be guarded by it), every subscript in it is
 * affine and tensor-free (no run-time check to move), it uses no variable
 * of the loop, and no equation inside the loop writes a tensor it reads.
 */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "c_expr.h"
#include "c_text.h"
#include "cost_model.h"
#include "error.h"
#include "local_buffers.h"
#include "lower_c_internal.h"
#include "semantics.h"
#include "vec.h"

#define RCP_MAX_PER_LOOP 8

static bool rcp_divisor_invariant(const lower *L, const leir__eqinfo *info, const leir_expr *y) {
  const uint32_t inner = info->nloops - 1;
  bool used[LEIR__MAX_LOOPS] = {false};
  leir__used_depths(L->a, y, used);
  if (used[inner]) return false;
  sr_access tmp[16];
  uint32_t nt = 0;
  if (!leir__c_sr_collect(y, false, tmp, &nt, 16)) return false;
  for (uint32_t j = 0; j < nt; j++) {
    if (tmp[j].sub) return false;
    for (uint32_t k = 0; k < tmp[j].t->n; k++) {
      leir__affine f;
      if (!leir__affine_of(L->a, tmp[j].t->kids[k], &f)) return false;
    }
  }
  for (uint32_t i = 0; i < L->a->neqs; i++) {
    const leir__eqinfo *e = &L->a->eqs[i];
    if (e->nloops <= inner || e->loops[inner] != info->loops[inner]) continue;
    for (uint32_t j = 0; j < nt; j++)
      if (L->a->expr_buffer[tmp[j].t->id] == e->lhs_buffer) return false;
  }
  return true;
}

/* The hoistable divisions of e (arithmetic only: not under a conditional,
 * not in subscripts), at most `room`; with `emit`, declares their
 * reciprocals. Returns how many. */
static uint32_t rcp_declare(lower *L, const leir__eqinfo *info, const leir_expr *e, int depth,
                            uint32_t room, bool emit) {
  uint32_t made = 0;
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_BINARY:
    case LEIR_EXPR_NEG:
    case LEIR_EXPR_PAREN: break;
    case LEIR_EXPR_CALL:
      if (e->op == LEIR_OP_IF_THEN_ELSE) return 0;
      break;
    default: return 0;
  }
  for (uint32_t k = 0; k < e->n && !stop(L); k++)
    made += rcp_declare(L, info, e->kids[k], depth, room - made, emit);
  if (e->kind != LEIR_EXPR_BINARY || e->op != LEIR_OP_DIV || made >= room ||
      !rcp_divisor_invariant(L, info, e->kids[1]))
    return made;
  if (!emit) return made + 1;
  if (!leir__vec_grow32((void **)&L->rcp, &L->cap_rcp, L->nrcp + 1, sizeof *L->rcp, 16)) {
    L->failed = true;
    return made;
  }
  indent(L, depth);
  leir__cx_begin(&L->x);
  leir__sb_printf(leir__cx_out(&L->x), "const double leir_q%u = 1.0 / (double)", e->id);
  leir__cx_value(&L->x, e->kids[1], LEIR__CT_F32);
  leir__sb_puts(leir__cx_out(&L->x), ";\n");
  leir__cx_end(&L->x, false);
  L->rcp[L->nrcp++] = e->id;
  return made + 1;
}

/* Before the last loop of nest n (emitted at `depth`): the reciprocals of
 * its equations' invariant f32 divisors, in a block that leir__c_rcp_close ends.
 * Returns how many. */
uint32_t leir__c_rcp_open(lower *L, const leir_nest *n, uint32_t k, uint32_t depth) {
  if (k + 1 != n->nloops || L->o->check_all_bounds || L->o->no_reciprocals) return 0;
  uint32_t made = 0;
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      if (!made) return 0;
      indent(L, (int)depth);
      put(L, "{ /* reciprocals of divisors fixed in the loop */\n");
    }
    made = 0;
    for (uint32_t i = 0; i < n->nitems && !stop(L) && made < RCP_MAX_PER_LOOP; i++) {
      if (!n->items[i].eq) continue;
      const leir__eqinfo *info = &L->a->eqs[L->a->eq_index[n->items[i].eq->id]];
      if (leir__ctype_of((leir_dtype)info->eq->lhs->dtype) != LEIR__CT_F32 ||
          info->nloops == 0 || info->nloops > LEIR__MAX_LOOPS)
        continue;
      leir__env_init(&L->env, info);
      made += rcp_declare(L, info, info->eq->rhs, (int)depth, RCP_MAX_PER_LOOP - made, pass == 1);
    }
  }
  return made;
}

void leir__c_rcp_close(lower *L, uint32_t made, uint32_t depth) {
  if (!made) return;
  L->nrcp -= made;
  indent(L, (int)depth);
  put(L, "}\n");
}

bool leir__c_hoisted_reciprocal(leir__cx *x, const leir_expr *division) {
  const lower *L = x->ctx;
  for (uint32_t i = L->nrcp; i-- > 0;)
    if (L->rcp[i] == division->id) return true;
  return false;
}
