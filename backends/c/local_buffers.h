/*
 * The local-buffer pass of the C lowering (local_buffers.c): an l/s-scope
 * intermediate local to the iterations of its nest's outer loops becomes a
 * per-iteration array, whose storage may be lent by the output it is
 * finally written to. The cost model borrows the plan
 * (leir__c_storage_hosts), so the pass has a header of its own.
 */
#ifndef LEIR_BACKENDS_C_LOCAL_BUFFERS_H
#define LEIR_BACKENDS_C_LOCAL_BUFFERS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis.h"
#include "strbuf.h"

#define LB_MAX_RANK 8

typedef struct lb_plan {
  bool on, live;
  uint32_t top, k0, rank;
  int64_t coef[LB_MAX_RANK][LEIR__MAX_LOOPS]; /* outer part of each subscript */
  int64_t lo[LB_MAX_RANK];                    /* smallest inner value */
  int64_t span[LB_MAX_RANK];                  /* local extent */
  uint64_t elems;                             /* of the local array */
  /* storage lent by buffer `host` (LEIR__NONE: its own array), starting at
   * flat offset host_c + sum of host_coef[d] * i<d> over loops 0..k0-1 */
  uint32_t host;
  int64_t host_c;
  int64_t host_coef[LEIR__MAX_LOOPS];
} lb_plan;


/* By buffer, the buffer whose storage the C backend lends the local array
 * of that l/s-scope intermediate (its last reader's output, written element
 * by element: lb_host in local_buffers.c), else LEIR__NONE; host has
 * a->nbuffers entries. Implemented by the C backend, whose plan it is; the
 * cost model moves that output's traffic to the pass that writes the array. */
leir_status leir__c_storage_hosts(const leir__analysis *a, uint32_t *host);

/* The lowering's side of the pass (struct lower: lower_c_internal.h). */
struct lower;
/* Whether buffer b is a local array in the region being emitted. */
bool leir__c_lb_live(const struct lower *L, uint32_t b);
/* pK[...] of access t of local buffer b. */
void leir__c_lb_element(struct lower *L, leir__strbuf *o, uint32_t b, const leir_expr *t);
/* Plans every l/s-scope intermediate (L->lb, one entry per buffer). */
void leir__c_lb_plan_all(struct lower *L);
/* Opens the local buffers whose region starts at loop k of the top-level
 * nest being emitted; returns how many. */
uint32_t leir__c_lb_open(struct lower *L, uint32_t k, uint32_t depth);
void leir__c_lb_close(struct lower *L, uint32_t k, uint32_t depth);

#endif
