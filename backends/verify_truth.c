/*
 * The f64 truth of a verifier's reference (verification.md §2): the
 * reference evaluated with every float tensor in f64, once per verifier,
 * against which reassociating candidates (and every candidate on a
 * contracting backend) are judged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "compare.h"
#include "error.h"
#include "ir.h"
#include "semantics.h"
#include "verifier.h"

static void promote_expr(leir_expr *e) {
  if (e->kind == LEIR_EXPR_TENSOR && leir__dtype_is_float((leir_dtype)e->dtype))
    e->dtype = LEIR_F64;
  for (uint32_t k = 0; k < e->n; k++) promote_expr(e->kids[k]);
}

static void promote_nest(leir_nest *n) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].eq) {
      promote_expr(n->items[k].eq->lhs);
      promote_expr(n->items[k].eq->rhs);
    } else {
      promote_nest(n->items[k].nest);
    }
  }
}

/* The reference evaluated with every float tensor in f64 (verification.md
 * §2): outputs in v->truth, one f64 array per output slot. */
leir_status leir__verify_compute_truth(leir_verifier *v) {
  const leir__analysis *a = v->k0->analysis;
  uint32_t n = v->nsets * v->nknown;
  v->truth = calloc(n + 1, sizeof *v->truth);
  if (!v->truth) return leir__error_nomem();
  bool all_f64 = true;
  for (uint32_t i = 0; i < v->nknown; i++) {
    leir_dtype dt = (leir_dtype)a->buffers[i].dtype;
    if (leir__dtype_is_float(dt) && dt != LEIR_F64) all_f64 = false;
  }
  for (uint32_t b = v->nknown; b < a->nbuffers; b++) {
    leir_dtype dt = (leir_dtype)a->buffers[b].dtype;
    if (leir__dtype_is_float(dt) && dt != LEIR_F64) all_f64 = false;
  }
  for (uint32_t set = 0; set < v->nsets; set++)
    for (uint32_t i = 0; i < v->nknown; i++) {
      const leir__buffer *buf = &a->buffers[i];
      if (buf->role != LEIR__BUF_OUTPUT || !leir__dtype_is_float((leir_dtype)buf->dtype))
        continue;
      double *t = malloc(buf->elements * sizeof *t);
      if (!t) return leir__error_nomem();
      v->truth[set * v->nknown + i] = t;
      if (all_f64) memcpy(t, v->out[set * v->nknown + i], buf->elements * sizeof *t);
    }
  if (all_f64) {
    v->truth_is_orig = true;
    v->truth_state = 1;
    return LEIR_OK;
  }
  leir_program *p = NULL;
  leir_status st = leir_program_clone(&p, v->k0->program);
  if (st != LEIR_OK) return st;
  for (uint32_t t = 0; t < p->nnests; t++) promote_nest(p->nests[t]);
  for (uint32_t i = 0; i < p->nsig; i++)
    if (leir__dtype_is_float((leir_dtype)p->sig[i].dtype)) p->sig[i].dtype = LEIR_F64;
  leir_kernel *k = NULL;
  st = leir__kernel_build(v->b, p, NULL, &k);
  leir_program_free(p);
  if (st == LEIR_OK) k->threads = VERIFY_THREADS;
  if (st == LEIR_OK) st = leir__kernels_prepare(v->b, &k, 1);
  if (st == LEIR_OK) st = k->prepared;
  void **bufs = NULL;
  if (st == LEIR_OK) {
    bufs = calloc(v->nknown + 1, sizeof *bufs);
    if (!bufs) st = leir__error_nomem();
  }
  for (uint32_t set = 0; set < v->nsets && st == LEIR_OK; set++) {
    st = leir__verify_refill(v, set, NULL);
    for (uint32_t i = 0; i < v->nknown && st == LEIR_OK; i++) {
      const leir__buffer *buf = &a->buffers[i];
      leir_dtype dt = (leir_dtype)buf->dtype;
      uint32_t slot = set * v->nknown + i;
      free(bufs[i]);
      bufs[i] = NULL;
      if (buf->role == LEIR__BUF_OUTPUT && leir__dtype_is_float(dt)) {
        bufs[i] = NULL; /* the truth array itself */
        continue;
      }
      bool widen = leir__dtype_is_float(dt) && dt != LEIR_F64;
      size_t bytes = widen ? buf->elements * sizeof(double) : (size_t)leir__buffer_bytes(buf);
      bufs[i] = malloc(bytes ? bytes : 1);
      if (!bufs[i]) {
        st = leir__error_nomem();
        break;
      }
      const void *src = buf->role == LEIR__BUF_INPUT ? v->in[slot] : v->out[slot];
      if (widen)
        for (uint64_t e = 0; e < buf->elements; e++)
          ((double *)bufs[i])[e] = leir__load_f64(src, dt, e);
      else if (buf->role == LEIR__BUF_INPUT)
        memcpy(bufs[i], src, bytes);
      else
        leir__fill_sentinel(bufs[i], dt, buf->elements);
    }
    if (st != LEIR_OK) break;
    void **ptrs = malloc(v->nknown * sizeof *ptrs + 1);
    if (!ptrs) {
      st = leir__error_nomem();
      break;
    }
    for (uint32_t i = 0; i < v->nknown; i++) {
      ptrs[i] = bufs[i] ? bufs[i] : v->truth[set * v->nknown + i];
      if (!bufs[i]) leir__fill_sentinel(ptrs[i], LEIR_F64, a->buffers[i].elements);
    }
    void *const *set_ptrs[1] = {ptrs};
    leir__exec_result res = {-1};
    st = v->b->ops->execute(v->b, k, set_ptrs, 1, &res);
    free(ptrs);
  }
  if (bufs)
    for (uint32_t i = 0; i < v->nknown; i++) free(bufs[i]);
  free(bufs);
  leir__kernel_destroy(k);
  if (st == LEIR_OK) {
    v->truth_state = 1;
  } else {
    if (st == LEIR_ERR_NOMEM) return st;
    snprintf(v->truth_why, sizeof v->truth_why,
             "the f64 truth could not be computed (%s: %s); judged by the tolerance instead",
             leir_status_name(st), leir_error_last()->message);
    v->truth_state = -1;
  }
  return LEIR_OK;
}

