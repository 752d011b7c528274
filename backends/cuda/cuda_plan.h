/*
 * State shared by the two halves of the CUDA lowering: plan.c (storage and
 * launch planning) and lower.c (printing the source and the report).
 */
#ifndef LEIR_CUDA_PLAN_H
#define LEIR_CUDA_PLAN_H

#include "c_expr.h"
#include "cuda_internal.h"

#define LEIR__CUDA_MAX_THREADS 1024
#define LEIR__CUDA_MAX_LOCAL_BYTES 16384
#define LEIR__CUDA_MAX_SHARED_BYTES 49152

/* Where one intermediate lives in the kernel being planned. */
typedef struct leir__cuda_placement {
  uint8_t place;                 /* leir__place */
  uint32_t top;                  /* the one kernel that uses it (on-chip only) */
  bool drop[LEIR_MAX_RANK];      /* dimension indexed by a bound variable alone */
  int64_t size;                  /* elements of the on-chip array */
} leir__cuda_placement;

typedef struct leir__cuda_gen {
  const leir_program *p;
  leir__analysis *a;
  leir__cuda_lowered *out;
  uint32_t flags;
  const char *prefix;
  leir__strbuf src, rep;
  leir__cuda_placement *pl;      /* by buffer */
  uint32_t *user_top;            /* by buffer: single top-level nest using it, or NONE */
  bool *multi;                   /* by buffer: used by several nests */
  uint32_t ntrap_cap;
  /* current kernel */
  uint32_t top;
  const leir__loop *hoisted[LEIR__MAX_LOOPS];
  uint32_t nhoisted;
  bool barriers;                 /* shared arrays in this kernel: place barriers */
  bool *dirty;                   /* by buffer: shared array written since the last barrier */
  bool last_barrier;
  uint32_t nbarriers;
  leir__cx x;                    /* the shared expression emitter (CUDA dialect) */
  leir_status st;
} leir__cuda_gen;

/* ---- plan.c ---------------------------------------------------------------- */

/* Notes which top-level nest uses each buffer (user_top, multi). */
void leir__cuda_scan_nest_uses(leir__cuda_gen *g, const leir_nest *n, uint32_t top);
/* Launch geometry of nest n: hoisted B loops, extents per axis, grid and
 * block sizes, stride loops. */
void leir__cuda_geometry(leir__cuda_gen *g, const leir_nest *n, leir__cuda_kernel *k);
/* Places buffer bi in kernel g->top (a report line says where and why). */
void leir__cuda_plan_buffer(leir__cuda_gen *g, uint32_t bi, const leir__cuda_kernel *kern,
                            uint64_t *shared_used);

/* The source name of buffer b (with _l / _s for on-chip arrays). */
const char *leir__cuda_bufname(leir__cuda_gen *g, uint32_t b, char *buf, size_t cap);
uint32_t leir__cuda_buffer_of(leir__cuda_gen *g, const leir_expr *t);
bool leir__cuda_is_hoisted(leir__cuda_gen *g, const leir__loop *l);
/* LEIR__AX_* of a bound loop, from its name (tx.., bz..). */
int leir__cuda_axis_of(const leir_program *p, const leir__loop *l);
const leir__loop *leir__cuda_loop_of_var(leir__cuda_gen *g, const leir__eqinfo *info,
                                         const leir_expr *v);

extern const char *const leir__cuda_axis_names[LEIR__NAX]; /* threadIdx.x .. */
extern const char *const leir__cuda_axis_dims[LEIR__NAX];  /* blockDim.x .. */
extern const char *const leir__cuda_axis_short[LEIR__NAX]; /* tx .. bz */

#endif
