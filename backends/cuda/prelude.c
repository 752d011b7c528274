/*
 * The text every lowered CUDA source starts with: the shared run-time
 * helpers of backends/prelude.h (the same arithmetic as the interpreter and
 * the C backend, bit for bit) compiled as device functions, plus the trap
 * helpers of the GPU (a trap word set with atomicCAS instead of a longjmp).
 *
 * No #include reaches NVRTC: prelude.h's standard headers are replaced by
 * the few types and macros it needs (NVRTC provides the math functions and
 * memcpy as builtins). Heavy headers such as cuda_fp16.h would cost more
 * than the kernels (target: <= 100 ms per compile). Under any other
 * compiler (nvcc, which includes the host's headers; a C++ compiler
 * emulating the kernels) the same file takes the fixed-width types from
 * <stdint.h> instead, so that `leir lower --to cuda` output is a standalone
 * .cu file (__CUDACC_RTC__ is defined by NVRTC only).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "strbuf.h"

extern const char leir__prelude_text[];

static const char head[] =
    "#define LEIR_RT static __device__ __forceinline__\n"
    "#if defined(__CUDACC_RTC__)\n"
    "typedef signed char int8_t; typedef short int16_t; typedef int int32_t;\n"
    "typedef long long int64_t; typedef unsigned char uint8_t; typedef unsigned short uint16_t;\n"
    "typedef unsigned int uint32_t; typedef unsigned long long uint64_t;\n"
    "#else\n"
    "#include <stdint.h>\n"
    "#include <string.h>\n"
    "#endif\n"
    "#if defined(__NVCC__)\n"
    "#pragma nv_diag_suppress 177\n" /* helpers a kernel does not use */
    "#endif\n"
    "#ifndef INT64_MAX\n"
    "#define INT64_MAX 0x7fffffffffffffffLL\n"
    "#endif\n"
    "#ifndef INT64_MIN\n"
    "#define INT64_MIN (-INT64_MAX - 1)\n"
    "#endif\n"
    "#define LEIR_INFF __int_as_float(0x7f800000)\n"
    "#define LEIR_NANF __int_as_float(0x7fc00000)\n"
    "#define LEIR_INF __longlong_as_double(0x7ff0000000000000LL)\n"
    "#define LEIR_NAN __longlong_as_double(0x7ff8000000000000LL)\n";

static const char tail[] =
    /* Trap codes: -1 integer division by zero (or 0 ** negative), k > 0
     * indirect index site k. The first trap wins; the host reports it. */
    "static __device__ __forceinline__ void leir_raise(int *trap, int code) {\n"
    "  atomicCAS(trap, 0, code); }\n"
    "static __device__ __forceinline__ int64_t leir_chk(int64_t i, int64_t n, int *trap, int site) {\n"
    "  if (i < 0 || i >= n) { leir_raise(trap, site); return 0; } return i; }\n"
    "static __device__ __forceinline__ int64_t leir_idiv(int64_t a, int64_t b, int *trap) {\n"
    "  if (b == 0) { leir_raise(trap, -1); return 0; } return leir_floordiv_i64(a, b); }\n"
    "static __device__ __forceinline__ int64_t leir_imod(int64_t a, int64_t b, int *trap) {\n"
    "  if (b == 0) { leir_raise(trap, -1); return 0; } return leir_floormod_i64(a, b); }\n"
    "static __device__ __forceinline__ int64_t leir_ipow(int64_t a, int64_t b, int *trap) {\n"
    "  if (a == 0 && b < 0) { leir_raise(trap, -1); return 0; } return leir_pow_i64(a, b); }\n";

static char *text;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void build(void) {
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_puts(&b, head);
  /* prelude.h without its #include lines */
  const char *s = leir__prelude_text;
  while (*s) {
    const char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) + 1 : strlen(s);
    if (strncmp(s, "#include", 8) != 0) leir__sb_put(&b, s, n);
    s += n;
  }
  leir__sb_puts(&b, tail);
  text = leir__sb_finish(&b, NULL);
}

const char *leir__cuda_prelude(void) {
  pthread_once(&once, build);
  return text ? text : "#error libleir: out of memory building the CUDA prelude\n";
}
