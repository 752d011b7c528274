/*
 * Scalar replacement, a pass of the C lowering (lower_c.c):
 *
 * A loop nest whose innermost loops are U/V loops (the tile loops) under
 * plain L loops that none of a buffer's subscripts mention (the reduction
 * loops) keeps that buffer's tile in a local array for the whole reduction:
 *
 *   { float r3[64];                          load the tile once
 *     for (tile vars) r3[rel] = b3[offset];
 *     for (reduction loops) for (tile loops) ... r3[rel] ... (no memory traffic)
 *     for (tile vars) b3[offset] = r3[rel]; } store it once
 *
 * With U loops unrolled and V loops vectorized, rel is a constant or a
 * vector lane, and the compiler keeps the array in registers. It is an exact
 * rewrite (the array is a private copy of the elements and every access of
 * the region goes to it) when, in the region (the loops from the first
 * reduction loop inward, whose items are equations only):
 *  - every access of the buffer has the same affine flat offset, tensor-free,
 *    not inside another subscript, and the buffer is written there;
 *  - the offset does not involve the reduction loops, and over the tile
 *    loops it is one-to-one (leir__affine_determined), so the local array
 *    is indexed by the tile loops (a mixed radix of their extents) and the
 *    load and store, which iterate the tile loops, touch exactly the
 *    elements the region writes (no race with other threads' elements);
 *  - the region's loops are plain L loops, never parallel or simd, and it
 *    is not inside a simd loop.
 */
#define SR_MAX_ELEMS 1024 /* elements of one tile (4 KiB of f32) */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "c_expr.h"
#include "c_text.h"
#include "cost_model.h"
#include "error.h"
#include "local_buffers.h"
#include "lower_c_internal.h"
#include "semantics.h"
#include "vec.h"

bool leir__c_sr_element(lower *L, leir__strbuf *o, uint32_t b) {
  for (uint32_t i = L->nsr; i-- > 0;) {
    const sr_buf *r = &L->sr[i];
    if (r->buf != b) continue;
    leir__sb_printf(o, "r%u[", b);
    for (uint32_t k = 0; k < r->nterms; k++) {
      if (k) leir__sb_puts(o, " + ");
      if (r->coef[k] == 1)
        leir__sb_printf(o, "i%u", r->slot[k]);
      else
        leir__sb_printf(o, "%" PRId64 " * i%u", r->coef[k], r->slot[k]);
    }
    if (!r->nterms) leir__sb_puts(o, "0");
    leir__sb_puts(o, "]");
    return true;
  }
  return false;
}

/* Flat element offset of access t as coefficients by loop position; false
 * when it is not affine (or overflows). */
bool leir__c_sr_flat(const lower *L, const leir_expr *t, int64_t *coef, int64_t *c) {
  const leir__buffer *buf = &L->a->buffers[L->a->expr_buffer[t->id]];
  if (t->n != buf->rank) return false;
  for (uint32_t d = 0; d < LEIR__MAX_LOOPS; d++) coef[d] = 0;
  *c = 0;
  int64_t stride = 1;
  for (uint32_t k = t->n; k-- > 0;) {
    leir__affine f;
    if (leir__expr_has_tensor(t->kids[k]) || !leir__affine_of(L->a, t->kids[k], &f)) return false;
    for (uint32_t i = 0; i < f.nterms; i++) {
      int64_t m;
      if (f.slot[i] >= LEIR__MAX_LOOPS || __builtin_mul_overflow(f.coef[i], stride, &m) ||
          __builtin_add_overflow(coef[f.slot[i]], m, &coef[f.slot[i]]))
        return false;
    }
    int64_t m;
    if (__builtin_mul_overflow(f.c, stride, &m) || __builtin_add_overflow(*c, m, c) ||
        __builtin_mul_overflow(stride, buf->shape[k], &stride))
      return false;
  }
  return true;
}


bool leir__c_sr_collect(const leir_expr *e, bool sub, sr_access *acc, uint32_t *n,
                        uint32_t cap) {
  if (e->kind == LEIR_EXPR_TENSOR) {
    if (*n == cap) return false;
    acc[(*n)++] = (sr_access){e, sub};
    for (uint32_t k = 0; k < e->n; k++)
      if (!leir__c_sr_collect(e->kids[k], true, acc, n, cap)) return false;
    return true;
  }
  for (uint32_t k = 0; k < e->n; k++)
    if (!leir__c_sr_collect(e->kids[k], sub, acc, n, cap)) return false;
  return true;
}


/* Adds the buffers whose tiles can live in registers over loops k.. of
 * nest n (emitted at `depth`); returns how many it added. */
uint32_t leir__c_sr_plan(lower *L, const leir_nest *n, uint32_t k, uint32_t depth) {
  if (L->o->no_scalar_replacement || L->o->check_all_bounds) return 0;
  uint32_t m = n->nloops;
  while (m > k && (n->loops[m - 1].kind == LEIR_LOOP_UNROLLED ||
                   n->loops[m - 1].kind == LEIR_LOOP_VECTORIZED))
    m--;
  if (m == n->nloops || m <= k) return 0;
  for (uint32_t j = k; j < m; j++)
    if (n->loops[j].kind != LEIR_LOOP_SERIAL) return 0;
  if (n->nitems == 0) return 0;
  for (uint32_t i = 0; i < n->nitems; i++)
    if (!n->items[i].eq) return 0;
  sr_access acc[SR_MAX_ACCESSES];
  uint32_t nacc = 0;
  for (uint32_t i = 0; i < n->nitems; i++)
    if (!leir__c_sr_collect(n->items[i].eq->lhs, false, acc, &nacc, SR_MAX_ACCESSES) ||
        !leir__c_sr_collect(n->items[i].eq->rhs, false, acc, &nacc, SR_MAX_ACCESSES))
      return 0;
  uint32_t base = depth - k, lo = base + k, hi = base + m, end = base + n->nloops;
  if (end > LEIR__MAX_LOOPS) return 0;
  const leir__eqinfo *info = &L->a->eqs[L->a->eq_index[n->items[0].eq->id]];
  uint32_t added = 0;
  for (uint32_t i = 0; i < n->nitems && L->nsr < SR_MAX_BUFS; i++) {
    const leir_expr *lhs = n->items[i].eq->lhs;
    uint32_t b = L->a->expr_buffer[lhs->id];
    bool seen = false;
    for (uint32_t j = 0; j < L->nsr; j++) seen |= L->sr[j].buf == b;
    if (seen || L->a->buffers[b].role == LEIR__BUF_INPUT) continue;
    sr_buf r;
    memset(&r, 0, sizeof r);
    r.buf = b;
    r.rep = lhs;
    r.info = info;
    int64_t coef0[LEIR__MAX_LOOPS], c0;
    if (!leir__c_sr_flat(L, lhs, coef0, &c0)) continue;
    bool ok = true;
    for (uint32_t j = 0; j < nacc && ok; j++) {
      if (L->a->expr_buffer[acc[j].t->id] != b) continue;
      int64_t coef[LEIR__MAX_LOOPS], c;
      ok = !acc[j].sub && leir__c_sr_flat(L, acc[j].t, coef, &c) && c == c0 &&
           !memcmp(coef, coef0, sizeof coef);
      for (uint32_t d = 0; ok && d < acc[j].t->n; d++)
        leir__used_depths(L->a, acc[j].t->kids[d], r.used);
    }
    for (uint32_t d = lo; ok && d < hi; d++) ok = !r.used[d] && coef0[d] == 0;
    if (!ok) continue;
    /* the tile: terms over the U/V loops, one element per iteration */
    int64_t ext[LEIR__MAX_LOOPS], mem[LEIR__MAX_LOOPS];
    for (uint32_t d = hi; d < end; d++)
      if (coef0[d]) {
        r.slot[r.nterms] = d;
        mem[r.nterms] = coef0[d];
        ext[r.nterms++] = n->loops[d - base].extent;
      }
    uint64_t all = r.nterms == 64 ? UINT64_MAX : ((uint64_t)1 << r.nterms) - 1;
    if (leir__affine_determined(mem, ext, r.nterms) != all) continue;
    /* the local array's strides: the omp simd loop (the outermost V tile
     * loop) varies fastest, so its lanes are contiguous and the compiler can
     * keep each row of the tile in one vector register; the other tile
     * loops follow from the innermost outward. (By loop position alone, a
     * V loop around another V or U loop would put its lanes a row apart:
     * a gather and a scatter on every update.) */
    uint32_t simd = r.nterms;
    for (uint32_t t = 0; t < r.nterms && simd == r.nterms; t++)
      if (n->loops[r.slot[t] - base].kind == LEIR_LOOP_VECTORIZED) simd = t;
    uint64_t expect = 1;
    if (simd < r.nterms) {
      r.coef[simd] = 1;
      expect = (uint64_t)ext[simd];
      if (expect > SR_MAX_ELEMS) ok = false;
    }
    for (uint32_t t = r.nterms; t-- > 0 && ok;) {
      if (t == simd) continue;
      r.coef[t] = (int64_t)expect;
      expect *= (uint64_t)ext[t];
      if (expect > SR_MAX_ELEMS) ok = false;
    }
    if (!ok) continue;
    r.elems = expect;
    L->sr[L->nsr++] = r;
    added++;
  }
  return added;
}

/* for (tile loops the subscripts use) STMT over the last `count` tiles. */
void leir__c_sr_copy(lower *L, uint32_t count, const leir_nest *n, uint32_t k, uint32_t depth,
                     bool load) {
  uint32_t base = depth - k;
  for (uint32_t i = L->nsr - count; i < L->nsr && !stop(L); i++) {
    const sr_buf *r = &L->sr[i];
    const leir__buffer *buf = &L->a->buffers[r->buf];
    int ind = (int)depth + 1;
    if (load) {
      indent(L, ind);
      putf(L, "%s r%u[%" PRIu64 "];\n", leir__ctext_elem_type((leir_dtype)buf->dtype), r->buf,
           r->elems);
    }
    for (uint32_t d = depth; d < base + n->nloops; d++) {
      if (!r->used[d]) continue;
      indent(L, ind++);
      putf(L, "for (int64_t i%u = 0; i%u < ", d, d);
      put_i64(L->out, n->loops[d - base].extent);
      putf(L, "; i%u++)\n", d);
    }
    leir__env_init(&L->env, r->info);
    indent(L, ind);
    leir__cx_begin(&L->x);
    leir__strbuf *o = leir__cx_out(&L->x);
    if (!load) L->sr_memory = true;
    leir__cx_element(&L->x, r->rep);
    L->sr_memory = load;
    leir__sb_puts(o, " = ");
    leir__cx_element(&L->x, r->rep);
    L->sr_memory = false;
    leir__sb_puts(o, ";\n");
    leir__cx_end(&L->x, false);
  }
}
