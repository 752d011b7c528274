/* Shared evaluation rules (see semantics.h). */
#include "semantics.h"

#include <math.h>
#include <string.h>

#include "prelude.h"

leir__ctype leir__ctype_of(leir_dtype dt) {
  switch (dt) {
    case LEIR_F16:
    case LEIR_BF16:
    case LEIR_F32: return LEIR__CT_F32;
    case LEIR_F64: return LEIR__CT_F64;
    default: return LEIR__CT_I64;
  }
}

bool leir__dtype_is_float(leir_dtype dt) {
  return dt == LEIR_F16 || dt == LEIR_BF16 || dt == LEIR_F32 || dt == LEIR_F64;
}

bool leir__expr_is_integer(const leir_expr *e) {
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER: return e->u.num->is_int;
    case LEIR_EXPR_VAR: return true;
    case LEIR_EXPR_TENSOR: return !leir__dtype_is_float((leir_dtype)e->dtype);
    case LEIR_EXPR_PAREN:
    case LEIR_EXPR_NEG: return leir__expr_is_integer(e->kids[0]);
    case LEIR_EXPR_BINARY:
      switch ((leir_op)e->op) {
        case LEIR_OP_ADD:
        case LEIR_OP_SUB:
        case LEIR_OP_MUL:
        case LEIR_OP_FLOORDIV:
        case LEIR_OP_MOD:
        case LEIR_OP_POW:
          return leir__expr_is_integer(e->kids[0]) && leir__expr_is_integer(e->kids[1]);
        default: return false;
      }
    case LEIR_EXPR_CALL:
      switch ((leir_op)e->op) {
        case LEIR_OP_ABS:
        case LEIR_OP_MAX:
        case LEIR_OP_MIN:
          for (uint32_t k = 0; k < e->n; k++)
            if (!leir__expr_is_integer(e->kids[k])) return false;
          return true;
        case LEIR_OP_IF_THEN_ELSE:
          return e->n == 3 && leir__expr_is_integer(e->kids[1]) && leir__expr_is_integer(e->kids[2]);
        default: return false;
      }
    case LEIR_EXPR_COMPARE:
    case LEIR_EXPR_AND:
    case LEIR_EXPR_OR: return true; /* a condition as a value: 0 or 1 */
    default: return false;
  }
}

const leir_expr *leir__cond_strip(const leir_expr *e) {
  const leir_expr *in = e;
  while (in->kind == LEIR_EXPR_PAREN) in = in->kids[0];
  return in->kind == LEIR_EXPR_COMPARE || in->kind == LEIR_EXPR_AND || in->kind == LEIR_EXPR_OR
             ? in
             : e;
}

leir__ctype leir__cond_ctype(const leir_expr *e) {
  e = leir__cond_strip(e);
  if (e->kind == LEIR_EXPR_COMPARE) {
    for (uint32_t k = 0; k < e->n; k++)
      if (!leir__expr_is_integer(e->kids[k])) return LEIR__CT_F64;
    return LEIR__CT_I64;
  }
  return leir__expr_is_integer(e) ? LEIR__CT_I64 : LEIR__CT_F64;
}

double leir__init_value_f64(leir__init_kind kind) {
  switch (kind) {
    case LEIR__INIT_ONE: return 1.0;
    case LEIR__INIT_NEG_INF: return -INFINITY;
    case LEIR__INIT_POS_INF: return INFINITY;
    default: return 0.0;
  }
}

int64_t leir__init_value_i64(leir__init_kind kind, leir_dtype dt) {
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  switch (dt) {
    case LEIR_I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case LEIR_I16: lo = INT16_MIN, hi = INT16_MAX; break;
    case LEIR_I32: lo = INT32_MIN, hi = INT32_MAX; break;
    case LEIR_U8: lo = 0, hi = UINT8_MAX; break;
    case LEIR_BOOL: lo = 0, hi = 1; break;
    default: break;
  }
  switch (kind) {
    case LEIR__INIT_ONE: return 1;
    case LEIR__INIT_NEG_INF: return lo;
    case LEIR__INIT_POS_INF: return hi;
    default: return 0;
  }
}

#define SENTINEL_F64 UINT64_C(0x7FF85E5E5E5E5E5E)
#define SENTINEL_F32 UINT32_C(0x7FC5E5E5)
#define SENTINEL_F16 0x7E5Eu
#define SENTINEL_BF16 0x7FE5u
#define SENTINEL_BYTE 0x5E

void leir__fill_sentinel(void *dst, leir_dtype dt, uint64_t count) {
  unsigned char *p = dst;
  switch (dt) {
    case LEIR_F64:
      for (uint64_t i = 0; i < count; i++) {
        uint64_t v = SENTINEL_F64;
        memcpy(p + i * 8, &v, 8);
      }
      break;
    case LEIR_F32:
      for (uint64_t i = 0; i < count; i++) {
        uint32_t v = SENTINEL_F32;
        memcpy(p + i * 4, &v, 4);
      }
      break;
    case LEIR_F16:
    case LEIR_BF16:
      for (uint64_t i = 0; i < count; i++) {
        uint16_t v = (uint16_t)(dt == LEIR_F16 ? SENTINEL_F16 : SENTINEL_BF16);
        memcpy(p + i * 2, &v, 2);
      }
      break;
    default: memset(p, SENTINEL_BYTE, count * leir_dtype_size(dt)); break;
  }
}

bool leir__is_sentinel(const void *src, leir_dtype dt) {
  const unsigned char *p = src;
  switch (dt) {
    case LEIR_F64: {
      uint64_t v;
      memcpy(&v, p, 8);
      return v == SENTINEL_F64;
    }
    case LEIR_F32: {
      uint32_t v;
      memcpy(&v, p, 4);
      return v == SENTINEL_F32;
    }
    case LEIR_F16:
    case LEIR_BF16: {
      uint16_t v;
      memcpy(&v, p, 2);
      return v == (dt == LEIR_F16 ? SENTINEL_F16 : SENTINEL_BF16);
    }
    default:
      for (size_t k = 0; k < leir_dtype_size(dt); k++)
        if (p[k] != SENTINEL_BYTE) return false;
      return true;
  }
}

double leir__load_f64(const void *buf, leir_dtype dt, uint64_t i) {
  const unsigned char *p = buf;
  switch (dt) {
    case LEIR_F64: {
      double v;
      memcpy(&v, p + i * 8, 8);
      return v;
    }
    case LEIR_F32: {
      float v;
      memcpy(&v, p + i * 4, 4);
      return v;
    }
    case LEIR_F16:
    case LEIR_BF16: {
      uint16_t v;
      memcpy(&v, p + i * 2, 2);
      return dt == LEIR_F16 ? leir_f16_to_f32(v) : leir_bf16_to_f32(v);
    }
    case LEIR_I8: return (double)((const int8_t *)buf)[i];
    case LEIR_I16: {
      int16_t v;
      memcpy(&v, p + i * 2, 2);
      return v;
    }
    case LEIR_I32: {
      int32_t v;
      memcpy(&v, p + i * 4, 4);
      return v;
    }
    case LEIR_I64: {
      int64_t v;
      memcpy(&v, p + i * 8, 8);
      return (double)v;
    }
    case LEIR_U8: return p[i];
    case LEIR_BOOL: return p[i] != 0;
    default: return 0.0;
  }
}
