/* C source spellings shared by the C and CUDA backends (see c_text.h). */
#include "c_text.h"

const char *leir__ctext_elem_type(leir_dtype dt) {
  switch (dt) {
    case LEIR_F64: return "double";
    case LEIR_F32: return "float";
    case LEIR_F16:
    case LEIR_BF16: return "uint16_t";
    case LEIR_I8: return "int8_t";
    case LEIR_I16: return "int16_t";
    case LEIR_I32: return "int32_t";
    case LEIR_I64: return "int64_t";
    default: return "uint8_t"; /* u8, bool */
  }
}

const char *leir__ctext_ctype_name(leir__ctype ct) {
  return ct == LEIR__CT_F32 ? "float" : ct == LEIR__CT_F64 ? "double" : "int64_t";
}

const char *leir__ctext_cmp_op(leir_op op) {
  switch (op) {
    case LEIR_OP_LT: return " < ";
    case LEIR_OP_LE: return " <= ";
    case LEIR_OP_GT: return " > ";
    case LEIR_OP_GE: return " >= ";
    case LEIR_OP_EQ: return " == ";
    default: return " != ";
  }
}

void leir__ctext_store(leir__strbuf *out, leir_dtype dt, const char *value) {
  switch (dt) {
    case LEIR_F16: leir__sb_printf(out, " = leir_f32_to_f16(%s);\n", value); break;
    case LEIR_BF16: leir__sb_printf(out, " = leir_f32_to_bf16(%s);\n", value); break;
    case LEIR_I8: leir__sb_printf(out, " = leir_wrap_i8(%s);\n", value); break;
    case LEIR_I16: leir__sb_printf(out, " = leir_wrap_i16(%s);\n", value); break;
    case LEIR_I32: leir__sb_printf(out, " = leir_wrap_i32(%s);\n", value); break;
    case LEIR_U8: leir__sb_printf(out, " = (uint8_t)(%s);\n", value); break;
    case LEIR_BOOL: leir__sb_printf(out, " = (uint8_t)((%s) != 0);\n", value); break;
    default: leir__sb_printf(out, " = %s;\n", value); break;
  }
}
