/* The Step-TP user prompt; prompt.h says what it is. */
#include "prompt.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

const char *leir__torch_dtype(leir_dtype dtype) {
  switch (dtype) {
    case LEIR_F16: return "torch.float16";
    case LEIR_BF16: return "torch.bfloat16";
    case LEIR_F32: return "torch.float32";
    case LEIR_F64: return "torch.float64";
    case LEIR_I8: return "torch.int8";
    case LEIR_I16: return "torch.int16";
    case LEIR_I32: return "torch.int32";
    case LEIR_I64: return "torch.int64";
    case LEIR_U8: return "torch.uint8";
    case LEIR_BOOL: return "torch.bool";
    default: return NULL;
  }
}

void leir__prompt_put_known(leir__strbuf *out, const leir_tensor_decl *decls, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (i > 0) leir__sb_puts(out, ", ");
    if (n > 1 && i == n - 1) leir__sb_puts(out, "and ");
    const char *t = leir__torch_dtype(decls[i].dtype);
    leir__sb_putc(out, '\'');
    leir__sb_puts(out, decls[i].name);
    leir__sb_puts(out, "' with the dtype ");
    leir__sb_puts(out, t ? t : "torch.float32");
    leir__sb_puts(out, " and shape [");
    for (uint32_t d = 0; d < decls[i].rank; d++) {
      if (d) leir__sb_puts(out, ", ");
      leir__sb_put_i64(out, decls[i].shape[d]);
    }
    leir__sb_putc(out, ']');
  }
}

static const char single_tail[] =
    "Please give me a **numerically equivalent transformed** IR that produces exactly the same "
    "outputs for any floating-point inputs (bitwise identical), and also provide applied strategy "
    "in this transformed IR. \n Return the answer **only** as a valid JSON object with the "
    "following keys:'transformed_IR', 'applied_strategies'.";

leir_status leir__prompt_build_text(const char *leir_text, size_t leir_len, const char *model,
                                    const leir_tensor_decl *decls, size_t n, uint32_t n_transforms,
                                    char **out, size_t *out_len) {
  if (!out) return leir__error_arg("out", "out must not be NULL");
  *out = NULL;
  if (!leir_text || (n && !decls)) return leir__error_arg(NULL, "text and variables are required");
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_puts(&b, "Give the following IR of ");
  leir__sb_puts(&b, model && *model ? model : "Model");
  leir__sb_puts(&b, ": '");
  leir__sb_put(&b, leir_text, leir_len);
  leir__sb_puts(&b, "', where the known variables are ");
  leir__prompt_put_known(&b, decls, n);
  leir__sb_puts(&b, ". Do not change the names, shapes or dtypes of these known variables in the IR. \n");
  if (n_transforms <= 1) {
    leir__sb_puts(&b, single_tail);
  } else {
    leir__sb_printf(&b,
                    "Please give me at least %u different **numerically equivalent transformed** IRs "
                    "that produces exactly the same outputs for any floating-point inputs (bitwise "
                    "identical), and also provide applied strategy for each transformed IR. \n Return "
                    "the answer list **only** as a valid JSON object, and each entry with the "
                    "following keys: 'idx', 'transformed_IR', 'applied_strategies'.",
                    (unsigned)n_transforms);
  }
  *out = leir__sb_finish(&b, out_len);
  return *out ? LEIR_OK : leir__error_nomem();
}

leir_status leir__prompt_build(const leir_program *program, const char *model, uint32_t n_transforms,
                               char **out, size_t *out_len) {
  if (!out) return leir__error_arg("out", "out must not be NULL");
  *out = NULL;
  if (!program) return leir__error_arg("program", "program must not be NULL");
  leir_program *copy = NULL;
  const leir_program *p = program;
  leir_status st;
  if (leir_program_signature_count(p) == 0) {
    if ((st = leir_program_clone(&copy, program)) != LEIR_OK) return st;
    if ((st = leir_program_infer_signature(copy)) != LEIR_OK) {
      leir_program_free(copy);
      return st;
    }
    p = copy;
  }
  size_t n = leir_program_signature_count(p);
  leir_tensor_decl *decls = calloc(n ? n : 1, sizeof *decls);
  char *text = NULL;
  size_t len = 0;
  if (!decls) {
    st = leir__error_nomem();
    goto done;
  }
  for (size_t i = 0; i < n; i++) leir_program_signature_get(p, i, &decls[i]);
  if ((st = leir_program_print(p, 0, &text, &len)) != LEIR_OK) goto done;
  if (!model || !*model) model = leir_program_name(program);
  st = leir__prompt_build_text(text, len, model, decls, n, n_transforms, out, out_len);
done:
  leir_free(text);
  free(decls);
  leir_program_free(copy);
  return st;
}

void leir__prompt_put_hardware(leir__strbuf *out, const char *gpu) {
  leir__sb_printf(out, "**Target hardware**: NVIDIA %s GPU.\n", gpu);
  leir__sb_puts(out,
                "CUDA binding: block axes MUST be renamed with prefixes bx, by, bz and thread axes "
                "with prefixes tx, ty, tz, followed by other unique lowercase letters; a grid has at "
                "most 2147483647 blocks along x and 65535 along y and z, a block at most 1024 threads "
                "along x and y and 64 along z.\n"
                "Memory: Data indexed by block-level loops may be placed in shared (s) or global (g) "
                "memory. Data indexed by thread-level loops may be placed in local (l), shared (s) or "
                "global (g) memory.\n");
}

leir_status leir__prompt_with_hardware(const char *prompt, size_t len, const char *gpu, char **out,
                                       size_t *out_len) {
  if (!out) return leir__error_arg("out", "out must not be NULL");
  *out = NULL;
  size_t gl = gpu ? strlen(gpu) : 0;
  int clean = gl > 0 && gl <= 64;
  for (size_t i = 0; clean && i < gl; i++) clean = (unsigned char)gpu[i] >= 0x20 && gpu[i] != 0x7f;
  if (!clean) return leir__error_arg("hardware", "a GPU name is 1 to 64 printable bytes");
  if (!prompt && len) return leir__error_arg("prompt", "prompt must not be NULL");
  if (!prompt) prompt = "";
  static const char task[] = "Please give me ";
  size_t at = len, tl = sizeof task - 1;
  for (size_t i = 0; i + tl <= len; i++)
    if (!memcmp(prompt + i, task, tl)) {
      at = i;
      break;
    }
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_put(&b, prompt, at);
  if (at == len && len && prompt[len - 1] != '\n') leir__sb_putc(&b, '\n');
  leir__prompt_put_hardware(&b, gpu);
  leir__sb_put(&b, prompt + at, len - at);
  *out = leir__sb_finish(&b, out_len);
  return *out ? LEIR_OK : leir__error_nomem();
}

int leir__prompt_extract_ir(const char *prompt, size_t len, const char **ir, size_t *ir_len) {
  static const char open[] = ": '", close[] = ", where the known variables";
  const char *s = prompt, *end = prompt + len;
  const char *a = NULL;
  for (const char *q = s; q + 3 <= end; q++)
    if (memcmp(q, open, 3) == 0) {
      a = q + 3;
      break;
    }
  if (!a) return 0;
  size_t cl = sizeof close - 1;
  for (const char *q = a; q + cl <= end; q++)
    if (memcmp(q, close, cl) == 0) {
      /* the IR ends with the quote before ", where" */
      if (q == a || q[-1] != '\'') return 0;
      *ir = a;
      *ir_len = (size_t)(q - 1 - a);
      return 1;
    }
  return 0;
}
