/*
 * Device helpers every lowered CUDA source starts with. Deliberately free of
 * #include: NVRTC parses this text for every kernel it compiles, and
 * cuda_fp16.h alone costs more than the kernels (target: <= 100 ms per
 * compile). f16 uses the PTX cvt instructions (round to nearest even);
 * bf16 is done on the bits so any architecture works.
 */
#include "cuda_internal.h"

static const char prelude[] =
    "typedef unsigned short leir_half;\n"
    "static __device__ __forceinline__ float leir_h2f(unsigned short h) {\n"
    "  float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
    "static __device__ __forceinline__ unsigned short leir_f2h(float f) {\n"
    "  unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n"
    "static __device__ __forceinline__ float leir_bf2f(unsigned short h) {\n"
    "  return __int_as_float(((int)h) << 16); }\n"
    "static __device__ __forceinline__ unsigned short leir_f2bf(float f) {\n"
    "  unsigned u = __float_as_uint(f);\n"
    "  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);\n"
    "  u += 0x7fffu + ((u >> 16) & 1u); return (unsigned short)(u >> 16); }\n"
    /* Trap codes: -1 integer division by zero, k > 0 indirect index site k. */
    "static __device__ __forceinline__ void leir_raise(int *trap, int code) {\n"
    "  atomicCAS(trap, 0, code); }\n"
    "static __device__ __forceinline__ long long leir_chk(long long i, long long n, int *trap,\n"
    "    int site) { if (i < 0 || i >= n) { leir_raise(trap, site); return 0; } return i; }\n"
    "static __device__ __forceinline__ long long leir_floordiv(long long a, long long b,\n"
    "    int *trap) {\n"
    "  if (b == 0 || (b == -1 && a == (-0x7fffffffffffffffLL - 1))) {\n"
    "    if (b == 0) leir_raise(trap, -1); return b == 0 ? 0 : a; }\n"
    "  long long q = a / b; if ((a % b != 0) && ((a < 0) != (b < 0))) q--; return q; }\n"
    "static __device__ __forceinline__ long long leir_floormod(long long a, long long b,\n"
    "    int *trap) {\n"
    "  if (b == 0) { leir_raise(trap, -1); return 0; } if (b == -1) return 0;\n"
    "  long long r = a % b; if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; }\n"
    "static __device__ __forceinline__ double leir_pymod(double a, double b) {\n"
    "  double r = fmod(a, b); if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; }\n"
    "static __device__ __forceinline__ float leir_pymodf(float a, float b) {\n"
    "  float r = fmodf(a, b); if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; }\n"
    "static __device__ __forceinline__ long long leir_ipow(long long a, long long b) {\n"
    "  if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);\n"
    "  long long r = 1; while (b) { if (b & 1) r *= a; a *= a; b >>= 1; } return r; }\n"
    "static __device__ __forceinline__ long long leir_imax(long long a, long long b) {\n"
    "  return a > b ? a : b; }\n"
    "static __device__ __forceinline__ long long leir_imin(long long a, long long b) {\n"
    "  return a < b ? a : b; }\n"
    "static __device__ __forceinline__ long long leir_iabs(long long a) { return a < 0 ? -a : a; }\n"
    "#define LEIR_INFF __int_as_float(0x7f800000)\n"
    "#define LEIR_INF __longlong_as_double(0x7ff0000000000000LL)\n";

const char *leir__cuda_prelude(void) { return prelude; }
