/* Buffer sizes, and the FLOP and byte counts of a program (verification.md
 * §4); see cost.h. */
#include "cost.h"

#include <string.h>

#include "error.h"

uint64_t leir__buffer_bytes(const leir__buffer *buf) {
  uint64_t n;
  if (__builtin_mul_overflow(buf->elements, (uint64_t)leir_dtype_size((leir_dtype)buf->dtype), &n))
    return UINT64_MAX;
  return n;
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

static uint64_t sat_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* Operations of one evaluation of a value expression (see run.h). Index
 * subscripts are address arithmetic and do not count. */
static uint64_t ops_of(const leir_expr *e) {
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_PAREN: return ops_of(e->kids[0]);
    case LEIR_EXPR_NEG: return 1 + ops_of(e->kids[0]);
    case LEIR_EXPR_BINARY: return 1 + ops_of(e->kids[0]) + ops_of(e->kids[1]);
    case LEIR_EXPR_COMPARE: {
      uint64_t n = e->n ? e->n - 1 : 0;
      for (uint32_t k = 0; k < e->n; k++) n += ops_of(e->kids[k]);
      return n;
    }
    case LEIR_EXPR_AND:
    case LEIR_EXPR_OR: return ops_of(e->kids[0]) + ops_of(e->kids[1]);
    case LEIR_EXPR_CALL: {
      if (e->op == LEIR_OP_IF_THEN_ELSE && e->n == 3) {
        uint64_t t = ops_of(e->kids[1]), f = ops_of(e->kids[2]);
        return ops_of(e->kids[0]) + (t > f ? t : f);
      }
      uint64_t n = (e->op == LEIR_OP_MAX || e->op == LEIR_OP_MIN) ? (e->n ? e->n - 1 : 0) : 1;
      for (uint32_t k = 0; k < e->n; k++) n += ops_of(e->kids[k]);
      return n;
    }
    default: return 0; /* numbers, variables, tensor reads */
  }
}

leir_status leir__program_cost(const leir__analysis *a, leir_program_cost *out) {
  memset(out, 0, sizeof *out);
  for (uint32_t i = 0; i < a->neqs; i++) {
    const leir__eqinfo *info = &a->eqs[i];
    out->evaluations = sat_add(out->evaluations, info->evaluations);
    out->flops = sat_add(out->flops, sat_mul(ops_of(info->eq->rhs), info->evaluations));
  }
  for (uint32_t b = 0; b < a->nbuffers; b++)
    if (a->buffers[b].role != LEIR__BUF_TEMP)
      out->bytes = sat_add(out->bytes, leir__buffer_bytes(&a->buffers[b]));
  return LEIR_OK;
}

leir_status leir_program_cost_get(const leir_program *p, leir_program_cost *out) {
  if (!p || !out) return leir__error_arg(NULL, "NULL argument");
  memset(out, 0, sizeof *out);
  leir__analysis *a = NULL;
  leir_status st = leir__analyze_program(p, NULL, &a);
  if (st != LEIR_OK) return st;
  st = leir__program_cost(a, out);
  leir__analysis_free(a);
  return st;
}
