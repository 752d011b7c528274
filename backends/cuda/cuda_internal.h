/*
 * CUDA backend internals: LEIR -> CUDA C lowering (lower.c, legality.c,
 * placement in plan.c), NVRTC compilation with a PTX cache (nvrtc.c), and
 * the Driver API loaded with dlopen (driver.c, exec.c).
 *
 * The lowering never needs a GPU; compilation needs only NVRTC (present
 * wherever the CUDA toolkit is); execution needs libcuda.so.1 and a device.
 * docs/cuda.md describes the rules implemented here.
 */
#ifndef LEIR_CUDA_INTERNAL_H
#define LEIR_CUDA_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis.h"
#include "leir/cuda.h"
#include "strbuf.h"

/* Hardware axes in a fixed order: threadIdx.x/y/z, blockIdx.x/y/z. */
enum { LEIR__AX_TX = 0, LEIR__AX_TY, LEIR__AX_TZ, LEIR__AX_BX, LEIR__AX_BY, LEIR__AX_BZ, LEIR__NAX };

/* Where an intermediate lives in one kernel. */
typedef enum leir__place {
  LEIR__PLACE_GLOBAL = 0, /* device allocation, a kernel parameter */
  LEIR__PLACE_SHARED,     /* __shared__ array of the kernel */
  LEIR__PLACE_LOCAL       /* per-thread array (registers / local memory) */
} leir__place;

typedef struct leir__cuda_kernel {
  char name[64];
  uint32_t top;                  /* top-level nest index */
  uint32_t grid[3], block[3];    /* launch geometry */
  uint64_t shared_bytes;         /* static __shared__ bytes */
  int64_t extent[LEIR__NAX];     /* combined extent of the loops on each axis (1 = unused) */
  bool stride[LEIR__NAX];        /* extent above the hardware limit: stride loop */
  uint32_t barriers;             /* __syncthreads() emitted */
} leir__cuda_kernel;

/* One run-time bounds trap site (indirect index). */
typedef struct leir__cuda_trap {
  uint32_t buffer;   /* buffer indexed */
  uint32_t dim;      /* 0-based subscript */
  uint32_t line, column;
} leir__cuda_trap;

typedef struct leir__cuda_lowered {
  leir__analysis *a;          /* buffers, equations (owned when owns_analysis) */
  bool owns_analysis;
  char *source;               /* CUDA C (malloc'd) */
  size_t source_len;
  char *report;               /* lowering report, one note per line (malloc'd) */
  uint32_t nkernels;
  leir__cuda_kernel *kernels; /* launch order */
  uint32_t nparams;           /* kernel parameters before the trap word */
  uint32_t *params;           /* buffer index of each parameter (global buffers) */
  uint8_t *place;             /* by buffer: leir__place */
  uint32_t ntraps;
  leir__cuda_trap *traps;     /* trap id k+1 <-> traps[k] */
} leir__cuda_lowered;

/* Lowers a checked program (it is analysed here with its effective
 * signature). Errors: LEIR_ERR_INVALID (static check, or a bound loop that
 * carries a dependence: rule "cuda.bound-dependence", subject = the loop),
 * LEIR_ERR_SIGNATURE, LEIR_ERR_NOMEM. Caller frees with
 * leir__cuda_lowered_free. */
leir_status leir__cuda_lower(const leir_program *p, const leir_cuda_options *o,
                             leir__cuda_lowered **out);
void leir__cuda_lowered_free(leir__cuda_lowered *l);
/* The same from an analysis the caller keeps (it must outlive *out). */
leir_status leir__cuda_lower_analysis(leir__analysis *a, const leir_cuda_options *o,
                                      leir__cuda_lowered **out);

/* Device helper functions every lowered source starts with (static text). */
const char *leir__cuda_prelude(void);

/* ---- legality.c --------------------------------------------------------- */

/* Checks that every B loop of top-level nest `top` can run its iterations in
 * parallel (no element written by one iteration is read or written by an
 * iteration with another value of the loop). On failure records
 * LEIR_ERR_INVALID (rule "cuda.bound-dependence") and returns it. */
leir_status leir__cuda_check_bound_loops(const leir__analysis *a, uint32_t top);

/* True when loop `loop` (of top-level nest `top`, extent > 1) may not run
 * its iterations on parallel threads; then *tensor (may be NULL) names the
 * buffer and `what` says why. The name rule (t[xyz]/b[xyz]) is not part of
 * this question. */
bool leir__cuda_loop_conflict(const leir__analysis *a, uint32_t top, const leir__loop *loop,
                              const char **tensor, char *what, size_t cap);

/* True when the value of the affine subscript `f` (over the loops of
 * equation `info`) determines loop slot `slot` uniquely. */
bool leir__cuda_determines(const leir__affine *f, const leir__eqinfo *info, uint32_t slot);

/* ---- nvrtc.c ------------------------------------------------------------ */

/* Compiles CUDA C to PTX for `arch` ("compute_90"), through the PTX cache.
 * *ptx is malloc'd (NUL-terminated). On LEIR_ERR_COMPILE *log (malloc'd)
 * holds NVRTC's log; *log may be NULL otherwise. LEIR_ERR_UNSUPPORTED when
 * the build or the machine has no NVRTC. */
leir_status leir__nvrtc_compile(const char *source, size_t len, const char *arch, bool fmad,
                                char **ptx, size_t *ptx_len, char **log);
/* "NVRTC 13.0" or why it is unavailable; static storage. */
const char *leir__nvrtc_identity(void);

/* ---- driver.c ----------------------------------------------------------- */

/* The process-wide Driver API state (dlopen'd once, thread-safe init).
 * Returns LEIR_ERR_NO_DEVICE with a message when libcuda.so.1 or a device
 * is missing. */
leir_status leir__cuda_driver_open(void);

#endif
