/**
 * @file
 * libleir — LEIR -> TVM TIR (TVMScript text). Lowering only: the library
 * prints a `@T.prim_func` that apache-tvm parses (tvm.script.from_source)
 * and builds; nothing here runs TVM. docs/tir.md gives the mapping.
 *
 * Thread safety: every call may be made from any thread on distinct
 * programs; a program may be lowered from several threads at once.
 */
#ifndef LEIR_TIR_H
#define LEIR_TIR_H

#include "leir/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Print every B loop as T.serial instead of T.thread_binding (TVM builds
 * thread bindings only for GPU targets; use this to build for "llvm"). */
#define LEIR_TIR_BIND_SERIAL 0x1u
/** Allocate every intermediate in "global" scope (drop shared/local). */
#define LEIR_TIR_SCOPE_GLOBAL 0x2u
/** Leave out the first line, the comment "# from tvm.script import tir as T". */
#define LEIR_TIR_NO_IMPORT 0x4u
/** One T.sblock per equation (and per implicit initialization), with its
 * block variables bound by T.axis.remap (S: loops of the left-hand
 * subscript, R: the others): the schedulable form tvm.tir.Schedule works
 * on, as the Step-TP reference emits it (apache-tvm 0.27 spells the block
 * T.sblock; older releases, like the reference, T.block). Default: plain
 * loops and stores. */
#define LEIR_TIR_BLOCKS 0x8u

/** Options of leir_lower_tir. Start from LEIR_TIR_OPTIONS_INIT or
 * leir_tir_options_init(); a caller's smaller (older) struct is read as far
 * as its `size` goes (at least through `flags`). */
typedef struct leir_tir_options {
  uint32_t size;         /**< sizeof(leir_tir_options) */
  uint32_t flags;        /**< LEIR_TIR_* (default 0) */
  const char *func_name; /**< name of the prim_func; NULL = "main"; a Python identifier of at
                          * most 64 characters, not a keyword; borrowed for the call */
} leir_tir_options;

/** Defaults of leir_tir_options: no flags, func_name NULL ("main"). */
#define LEIR_TIR_OPTIONS_INIT { (uint32_t)sizeof(leir_tir_options), 0u, NULL }

/** Writes the defaults (LEIR_TIR_OPTIONS_INIT) into the first `size` bytes
 * of *opts, the size field set to `size`: the sized form of every other
 * `_options_init`, for a binding whose struct is an older, smaller one.
 * Errors: LEIR_ERR_ARGUMENT (NULL, a size below the size field or above
 * this library's struct). Added in 0.2.0. */
LEIR_API leir_status leir_tir_options_init_sized(leir_tir_options *opts, size_t size);
/** Fills the whole *opts with the defaults (LEIR_TIR_OPTIONS_INIT).
 * Deprecated since 0.2.0: a caller's older, smaller struct would be
 * overrun; use leir_tir_options_init_sized(opts, sizeof *opts). */
LEIR_API void leir_tir_options_init(leir_tir_options *opts)
    LEIR_DEPRECATED("leir_tir_options_init_sized");

/** Lowers a program to TVMScript: one `@T.prim_func` whose parameters are
 * the signature's variables in order (inputs, then outputs), intermediates
 * as T.alloc_buffer, loops by kind, implicit initializations as explicit
 * loops before their nest. The text computes what the interpreter computes
 * (docs/tir.md lists the few places where TVM's arithmetic may differ).
 * The program must pass leir_program_check against its signature (or an
 * inferred one). `opts` may be NULL (defaults). On success *out receives
 * NUL-terminated text (caller frees with leir_free) and *len (may be NULL)
 * its length; on error *out is NULL.
 * Errors: LEIR_ERR_INVALID / LEIR_ERR_LIMIT (failed static check),
 * LEIR_ERR_SIGNATURE (no signature can be inferred), LEIR_ERR_ARGUMENT
 * (NULL program or out, options too small, bad func_name), LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_lower_tir(const leir_program *program, const leir_tir_options *opts,
                                    char **out, size_t *len);

#ifdef __cplusplus
}
#endif
#endif /* LEIR_TIR_H */
