/* LEIR -> C lowering (backends/c/lower_c.c). */
#ifndef LEIR_LOWER_C_H
#define LEIR_LOWER_C_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis.h"
#include "strbuf.h"

/* The generated file exports one function:
 *   int leir_kernel_main(void *const *bufs, leir_rt *rt);
 * bufs[i] is analysis buffer i (known variables first, then
 * intermediates); rt (below) receives traps. It returns 0. */
#define LEIR__C_ENTRY "leir_kernel_main"

/* Must match the struct emitted at the top of every generated file. */
typedef struct leir__c_rt {
  void (*trap)(struct leir__c_rt *rt, int kind, int site, int64_t value, int64_t extent);
  int threads; /* OpenMP threads for parallel loops (>= 1) */
  void *host;  /* the caller's context */
} leir__c_rt;

enum { LEIR__TRAP_BOUNDS = 1, LEIR__TRAP_DIVZERO = 2 };

/* Where a run-time check sits, for the message of a trap. */
typedef struct leir__c_site {
  uint8_t kind;        /* LEIR__TRAP_* */
  uint32_t dim;        /* bounds: 0-based subscript position */
  uint32_t pos;        /* byte offset of the subscript / operator */
  const char *tensor;  /* bounds: tensor name (borrowed from the program) */
} leir__c_site;

typedef struct leir__c_options {
  bool check_all_bounds;  /* check every subscript, not only indirect ones */
  bool parallel;          /* emit OpenMP pragmas for legal P/B/V loops */
  uint64_t min_parallel_work; /* evaluations per entry of a parallel region */
  /* Keep accumulator tiles in memory (no scalar replacement, lower_c.c). */
  bool no_scalar_replacement;
  /* Without `parallel` (one thread), still emit `omp simd` for legal V loops. */
  bool simd_alone;
  /* Give every local buffer its own array, never the storage of the
   * buffer it is finally written to (lower_c.c, lb_host). */
  bool no_storage_reuse;
  /* Divide by loop-invariant f32 divisors (no hoisted double reciprocal,
   * lower_c.c, rcp_open). */
  bool no_reciprocals;
} leir__c_options;

/* Appends the C source of the analyzed program to `out`. Sites go to
 * *sites (malloc'd, caller frees) when `sites` is not NULL. */
leir_status leir__lower_c(const leir__analysis *a, const leir__c_options *o, leir__strbuf *out,
                          leir__c_site **sites, uint32_t *nsites);

/* The same with a limit on the generated source (0: LEIR__MAX_SOURCE_BYTES
 * of c_expr.h); past it, LEIR_ERR_LIMIT (rule "lower.size"). Emission stops
 * at the first failed write of `out` (LEIR_ERR_NOMEM). */
leir_status leir__lower_c_max(const leir__analysis *a, const leir__c_options *o, size_t max_bytes,
                              leir__strbuf *out, leir__c_site **sites, uint32_t *nsites);

/* The text of backends/prelude.h (generated at build time). */
extern const char leir__prelude_text[];

#endif
