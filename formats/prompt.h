/* The Step-TP user prompt (pipeline-reference.md §2.1), internal API.
 *
 * The wording is the reference's, byte for byte: the single-transformation
 * variant asks for one transformed IR, the multi variant for "at least N"
 * (N >= 2). The known variables are the program's signature in order
 * (inputs, then outputs), each written as
 *   '<name>' with the dtype <torch dtype> and shape <python list>
 * joined with ", " and the last one preceded by "and " (a single variable
 * has no "and"). */
#ifndef LEIR_DATASET_PROMPT_H
#define LEIR_DATASET_PROMPT_H

#include <stddef.h>
#include <stdint.h>

#include "leir/program.h"
#include "strbuf.h"

/* "torch.float16", "torch.bfloat16", ...; static; NULL for an invalid dtype. */
const char *leir__torch_dtype(leir_dtype dtype);

/* Appends the known-variable list of `decls` (n entries) to `out`. */
void leir__prompt_put_known(leir__strbuf *out, const leir_tensor_decl *decls, size_t n);

/* Builds the user prompt for `program` (its signature; inferred on a copy
 * when it has none). `model` names the program in the prompt ("Give the
 * following IR of <model>"); NULL or "" uses the program's name, then
 * "Model". `n_transforms` <= 1 gives the single variant, >= 2 the "at least
 * N" variant. The LEIR is the program's canonical text. *out is
 * NUL-terminated (caller frees with leir_free); *out_len (may be NULL) gets
 * its length. Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_SIGNATURE (no signature and
 * none can be inferred), LEIR_ERR_NOMEM. */
leir_status leir__prompt_build(const leir_program *program, const char *model, uint32_t n_transforms,
                               char **out, size_t *out_len);

/* As leir__prompt_build, from parts: the LEIR text as given (not reprinted)
 * and the known variables. */
leir_status leir__prompt_build_text(const char *leir_text, size_t leir_len, const char *model,
                                    const leir_tensor_decl *decls, size_t n, uint32_t n_transforms,
                                    char **out, size_t *out_len);

/* The reference's hardware block of its search prompts (pipeline-reference.md
 * §6, item 5): "**Target hardware**: NVIDIA <gpu> GPU." with the CUDA binding
 * rules (axis prefixes and limits) and the memory-scope rule, one line each,
 * ending in a newline. */
void leir__prompt_put_hardware(leir__strbuf *out, const char *gpu);

/* `prompt` with the hardware block for `gpu` put before its task ("Please
 * give me ..."), where the reference's search prompt has it; at the end when
 * the prompt has no such part. *out: caller frees with leir_free. Errors:
 * LEIR_ERR_ARGUMENT (a GPU name that is empty, over 64 bytes or has a
 * control character), LEIR_ERR_NOMEM. */
leir_status leir__prompt_with_hardware(const char *prompt, size_t len, const char *gpu, char **out,
                                       size_t *out_len);

/* The program text between the first ": '" and ", where the known
 * variables" of a prompt (how the reference recovers original_IR from a
 * prompt). Borrowed pointer into `prompt`; returns 0 when the prompt has
 * no such part. */
int leir__prompt_extract_ir(const char *prompt, size_t len, const char **ir, size_t *ir_len);

#endif
