/* CUDA emulation for tests: the CUDA C that the lowering generates, run on
 * the CPU (tests/test_cuda.c, tests/test_differential.c).
 *
 * The generated kernels are compiled as C++ with a small shim (threadIdx
 * and blockIdx as globals, __shared__ as static, atomicCAS on the host) and
 * launched by running every (block, thread) in turn. Legality makes threads
 * independent, so running them one after another gives what the GPU gives;
 * host libm equals the interpreter's, so the outputs must be bitwise equal
 * to the interpreter's. This checks the lowering itself: indexing,
 * bound-variable decomposition, stride loops, implicit initialization,
 * dtypes and placement.
 *
 * Many programs go into one shared library (one C++ compiler run): add
 * them, build once, then run each. */
#ifndef LEIR_TEST_CUDA_EMUL_H
#define LEIR_TEST_CUDA_EMUL_H

#include <stdbool.h>
#include <stddef.h>

#include "leir/leir.h"

/* The host's headers come first, as under nvcc: the generated source must
 * not redeclare their types (issue 18.4). */
extern const char cuda_emul_host_headers[];
/* CUDA keywords and intrinsics defined away for a host C++ compiler. */
extern const char cuda_emul_shim[];

/* $CXX, else "c++". */
const char *cuda_emul_cxx(void);
/* True when that compiler runs. */
bool cuda_emul_available(void);

typedef struct cuda_emul cuda_emul;

/* A new, empty set of programs in a fresh temporary directory; NULL on failure. */
cuda_emul *cuda_emul_new(void);
/* Lowers p (it must outlive the set) and adds it. Returns its index, or -1
 * when the CUDA lowering rejects it (a status, e.g. a bound loop that
 * carries a dependence: nothing to run). */
int cuda_emul_add(cuda_emul *e, const leir_program *p);
/* Compiles every added program into one library and loads it. False (the
 * compiler's output in log) on failure. */
bool cuda_emul_build(cuda_emul *e, char *log, size_t cap);
/* Runs program idx (after cuda_emul_build) on bufs, in signature order, as
 * leir_run does: inputs read, outputs written. LEIR_OK, or
 * LEIR_ERR_RUNTIME when a kernel trapped (division by zero, an indirect
 * index out of bounds), as the interpreter reports them. */
leir_status cuda_emul_run(cuda_emul *e, int idx, void **bufs);
/* Removes the directory and frees everything. */
void cuda_emul_free(cuda_emul *e);

#endif
