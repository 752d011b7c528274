/*
 * The analytic cost model of the C backend's code (backends/cost_model.c,
 * docs/cost.md): the machine it assumes and what it predicts. The counts it
 * starts from (bytes of a buffer, FLOPs) are target-independent: lib/cost.h.
 */
#ifndef LEIR_COST_MODEL_H
#define LEIR_COST_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "cost.h"

/* The largest array the C backend makes of an l/s-scope intermediate local
 * to the iterations of a top-level nest's loops (backends/c/local_buffers.c); the
 * cost model counts such a buffer once. */
#define LEIR__LOCAL_MAX_BYTES ((uint64_t)64 << 10)

/* The machine of the analytic cost model (docs/cost.md). */
typedef struct leir__machine {
  uint32_t threads;       /* cores the P/B loops may use */
  double ghz;             /* clock */
  uint32_t vector_bytes;  /* SIMD register width */
  uint32_t line;          /* cache line bytes */
  uint64_t cache[3];      /* L1d, L2 (per core), L3 (shared) bytes */
  double fill_bpc[3];     /* bytes per cycle per core into L1 (from L2), into L2
                           * (from L3), and from memory (all cores together) */
  double mem_core_bpc;    /* bytes per cycle one core streams from memory */
  double fma_ports;       /* vector arithmetic instructions per cycle */
  double latency;         /* cycles of a dependent floating add */
  double call_cycles;     /* cycles of one scalar libm call (exp, log, ...) */
  double region_us;       /* cost of entering one parallel region */
  uint32_t simd_bytes;    /* widest SIMD register (V loops; 64 with AVX-512) */
  uint32_t reg_bytes;     /* bytes of SIMD registers an accumulator tile may hold */
  double imbalance_us;    /* per parallel region and thread: the stagger of the
                           * threads' start and end (barrier) */
  double wake_us;         /* once per run with a parallel region: waking the
                           * thread team, asleep since the previous run */
  uint32_t page;          /* bytes of a page (the TLB's granule) */
  double tlb_entries;     /* pages the TLBs hold together (second level) */
  double walk_cycles;     /* cycles of a page walk (a TLB miss) */
  double exp_vec_cycles;  /* cycles per element of leir_exp_f32 in a vector loop */
  double exp_scalar_cycles; /* ... in a scalar loop */
} leir__machine;

/* This host: online CPUs, cache sizes and the page size from sysconf
 * (fallbacks 32K/1M/16M, 4K), the rest fixed (2.5 GHz, 32-byte vectors, 2
 * FMA ports, latency 4, a libm call 15 cycles, 1536 TLB entries, a page walk
 * 25 cycles, leir_exp_f32 2.5 cycles an element vectorized and 12 scalar). */
void leir__machine_host(leir__machine *m);

/* What the model predicts for one run of the program. */
typedef struct leir__prediction {
  double seconds;        /* predicted time */
  double compute_s;      /* arithmetic, latency and L1 port bound part */
  double memory_s;       /* cache and memory traffic bound part (page walks
                          * included) */
  double bytes[3];       /* modelled bytes into L1, into L2, from memory */
  bool woke;             /* a parallel region was entered (wake_us counted) */
} leir__prediction;

/* Analytic model: per innermost nest, the larger of compute time (operations
 * per evaluation over the vector lanes and FMA ports, exponentials and
 * logarithms at their measured cost per element, gathers and scatters of
 * an omp simd loop, the latency of an accumulator chain, L1 load/store
 * ports) and memory time (per access and cache level, the lines it brings
 * in: reuse across a loop it does not depend on is kept when the footprint
 * of one iteration of that loop fits in half the cache; plus the page walks
 * of accesses whose pages do not fit in the TLB), divided by the threads of
 * an independent outer P/B loop, plus parallel region entries. */
void leir__cost_predict(const leir__analysis *a, const leir__machine *m, leir__prediction *out);

#endif
