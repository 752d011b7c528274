/*
 * Local buffers, a pass of the C lowering (lower_c.c) that the cost model
 * borrows (local_buffers.h):
 *
 * An intermediate of scope `l` or `s` that lives inside one iteration of the
 * outer loops of its top-level nest (every access in that nest, each
 * iteration of loops 0..k0-1 touching its own elements) is a local array of
 * the size of one iteration's elements, declared inside those loops (so
 * private to the thread of a P loop), instead of the whole buffer:
 *
 *   P^{4096}_{a} [ ... X^{f32,l}_{a,d} ... ]   ->   for (a) { float p3[16]; ... }
 *
 * It is exact when every subscript of every access is affine (tensor-free,
 * not inside another subscript) with the same part over loops 0..k0-1 (the
 * outer part) in all accesses, and each of those loops is determined by some
 * subscript (its outer coefficients against the span of the inner values:
 * leir__affine_determined): then each element belongs to one iteration, so
 * no value flows between iterations (its implicit initialization, if any,
 * moves into the iteration), and nothing outside the nest reads it. Each
 * subscript of the local array is the subscript minus its outer part minus
 * its smallest inner value. The deepest such k0 wins (the smallest array).
 *
 * Its storage can be the output it is finally written to (lb_host): when the
 * last equation that reads the local array, F, writes another buffer O
 * (an output or a global intermediate, same dtype) element by element at
 * the address the local element it reads would have in O's row, e.g.
 *
 *   B^{n}_{tx} [ ... G_{tx,a} = exp(...) ... C_{tx,a} = G_{tx,a} / E_{tx} ]
 *
 * the array is a pointer into O (`float *const p4 = b1 + 4096 * i0;`):
 * the values G held are written through to C while they are computed (the
 * memory traffic of C overlaps that work) and F then updates C in place,
 * in the cache, instead of streaming a separate array into C. The memory
 * holds the same values at every read, so the results are bit for bit
 * those of a separate array, when:
 *  - F reads the array once and writes O with a plain assignment, and no
 *    other equation of the nest touches O (F's right side included): the
 *    region of O lent to the array holds nothing anyone reads;
 *  - F's inner loops (inside loops 0..k0-1) walk the array's elements
 *    densely in row-major order, each once, at the address of O's element
 *    they write, so F overwrites every element of the region, each just
 *    after reading it: O's final contents are F's values everywhere;
 *  - every other access of the array is in an equation before F that
 *    shares no loop with F inside the region (no iteration reads or writes
 *    the array after F has overwritten an element);
 *  - the regions of different iterations of loops 0..k0-1 are disjoint and
 *    inside O (so parallel iterations never share one), and no other local
 *    array is lent the same buffer.
 */

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

#define LB_MAX_BYTES LEIR__LOCAL_MAX_BYTES

typedef struct lb_access {
  const leir_expr *t;
  const leir__eqinfo *info;
  leir__affine f[LB_MAX_RANK];
} lb_access;

bool leir__c_lb_live(const lower *L, uint32_t b) { return L->lb && L->lb[b].live; }

/* pK[...] of access t of a local buffer: each subscript minus its outer
 * part and smallest inner value, in the local array's row-major order. */
void leir__c_lb_element(lower *L, leir__strbuf *o, uint32_t b, const leir_expr *t) {
  const lb_plan *pl = &L->lb[b];
  leir__sb_printf(o, "p%u[", b);
  int64_t stride = 1;
  for (uint32_t k = pl->rank; k-- > 0;) {
    leir__sb_puts(o, "((");
    leir__cx_index(&L->x, t->kids[k]);
    leir__sb_puts(o, ") - (");
    for (uint32_t d = 0; d < pl->k0; d++)
      if (pl->coef[k][d]) {
        put_i64(o, pl->coef[k][d]);
        leir__sb_printf(o, " * i%u + ", d);
      }
    put_i64(o, pl->lo[k]);
    leir__sb_puts(o, "))");
    if (stride != 1) {
      leir__sb_puts(o, " * ");
      put_i64(o, stride);
    }
    if (k) leir__sb_puts(o, " + ");
    stride *= pl->span[k];
  }
  leir__sb_puts(o, "]");
}

/* Whether loops 0..k0-1 of top-level nest `top` can hold buffer b (its
 * accesses acc[0..n-1]); fills pl. Iterations are disjoint when every outer
 * loop is determined by some subscript (its outer coefficients and the span
 * of its inner values: leir__affine_determined). */
static bool lb_fits(const lower *L, uint32_t b, const lb_access *acc, uint32_t n, uint32_t top,
                    uint32_t k0, lb_plan *pl) {
  const leir_nest *T = L->p->nests[top];
  const leir__buffer *buf = &L->a->buffers[b];
  memset(pl, 0, sizeof *pl);
  pl->rank = buf->rank;
  uint64_t elems = 1, covered = 0;
  for (uint32_t k = 0; k < buf->rank; k++) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    int64_t oc[LEIR__MAX_LOOPS] = {0};
    for (uint32_t i = 0; i < n; i++) {
      const leir__affine *f = &acc[i].f[k];
      int64_t c[LEIR__MAX_LOOPS] = {0}, l = f->c, h = f->c;
      for (uint32_t j = 0; j < f->nterms; j++) {
        uint32_t d = f->slot[j];
        if (d >= LEIR__MAX_LOOPS || d >= acc[i].info->nloops) return false;
        if (d < k0) {
          c[d] = f->coef[j];
          continue;
        }
        int64_t m;
        if (__builtin_mul_overflow(f->coef[j], acc[i].info->loops[d]->extent - 1, &m) ||
            __builtin_add_overflow(m < 0 ? l : h, m, m < 0 ? &l : &h))
          return false;
      }
      if (i == 0) memcpy(oc, c, sizeof oc);
      else if (memcmp(oc, c, sizeof oc)) return false; /* another outer part */
      if (l < lo) lo = l;
      if (h > hi) hi = h;
    }
    if (hi < lo || hi - lo > INT32_MAX) return false;
    pl->lo[k] = lo;
    pl->span[k] = hi - lo + 1;
    memcpy(pl->coef[k], oc, sizeof oc);
    if (__builtin_mul_overflow(elems, (uint64_t)pl->span[k], &elems)) return false;
    /* the outer loops this subscript determines */
    int64_t coef[LEIR__MAX_LOOPS + 1], ext[LEIR__MAX_LOOPS + 1];
    uint32_t slot[LEIR__MAX_LOOPS + 1], m = 0;
    for (uint32_t d = 0; d < k0; d++)
      if (oc[d]) coef[m] = oc[d], ext[m] = T->loops[d].extent, slot[m++] = d;
    coef[m] = 1;
    ext[m] = pl->span[k];
    uint64_t det = leir__affine_determined(coef, ext, m + 1);
    for (uint32_t j = 0; j < m; j++)
      if (det >> j & 1) covered |= (uint64_t)1 << slot[j];
  }
  for (uint32_t d = 0; d < k0; d++)
    if (!(covered >> d & 1) && T->loops[d].extent > 1) return false; /* shared by iterations */
  uint64_t esize = (uint64_t)leir_dtype_size((leir_dtype)buf->dtype);
  if (elems >= buf->elements || elems * esize > LB_MAX_BYTES) return false;
  pl->on = true;
  pl->top = top;
  pl->k0 = k0;
  pl->elems = elems;
  pl->host = LEIR__NONE;
  return true;
}

/* Whether the loops with coefficients coef[0..m-1] (extents ext, each > 1),
 * all positive, give distinct sums coef * i, each term clearing the span of
 * the smaller ones (leir__affine_determined: a mixed radix); *span gets
 * the largest sum. */
static bool lb_radix(const int64_t *coef, const int64_t *ext, uint32_t m, int64_t *span) {
  *span = 0;
  for (uint32_t i = 0; i < m; i++) {
    int64_t add;
    if (coef[i] <= 0 || __builtin_mul_overflow(coef[i], ext[i] - 1, &add) ||
        __builtin_add_overflow(*span, add, span))
      return false;
  }
  uint64_t all = m >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << m) - 1;
  return m <= 64 && leir__affine_determined(coef, ext, m) == all;
}

/* Tries to lend local buffer b (planned in L->lb[b], accesses acc[0..n-1])
 * the storage of the buffer its last reader writes (see the top of this
 * section for the conditions); `hosting` marks buffers already lent. */
static void lb_host(lower *L, uint32_t b, const lb_access *acc, uint32_t n, bool *hosting) {
  const leir__analysis *a = L->a;
  lb_plan *pl = &L->lb[b];
  const uint32_t k0 = pl->k0;
  /* F: the last equation that accesses b */
  uint32_t fa = 0;
  for (uint32_t i = 1; i < n; i++)
    if (acc[i].info > acc[fa].info) fa = i;
  const leir__eqinfo *f = acc[fa].info;
  for (uint32_t i = 0; i < n; i++) {
    if (i == fa) continue;
    if (acc[i].info == f) return; /* F accesses b twice */
    const leir__eqinfo *e = acc[i].info;
    if (e->nloops > k0 && f->nloops > k0 && e->loops[k0] == f->loops[k0]) return;
  }
  const uint32_t o = f->lhs_buffer;
  if (acc[fa].t == f->eq->lhs || f->init != LEIR__INIT_NONE || o == b || o >= a->nbuffers ||
      hosting[o])
    return;
  const leir__buffer *host = &a->buffers[o];
  if (!(host->role == LEIR__BUF_OUTPUT ||
        (host->role == LEIR__BUF_TEMP && host->scope == LEIR_SCOPE_GLOBAL)) ||
      host->dtype != a->buffers[b].dtype)
    return;
  /* no access of O in the nest but F's left side */
  sr_access tmp[SR_MAX_ACCESSES];
  for (uint32_t i = 0; i < a->neqs; i++) {
    const leir__eqinfo *e = &a->eqs[i];
    if (e->top != pl->top) continue;
    uint32_t nt = 0;
    if (!leir__c_sr_collect(e->eq->lhs, false, tmp, &nt, SR_MAX_ACCESSES) ||
        !leir__c_sr_collect(e->eq->rhs, false, tmp, &nt, SR_MAX_ACCESSES))
      return;
    for (uint32_t j = 0; j < nt; j++)
      if (a->expr_buffer[tmp[j].t->id] == o && !(e == f && tmp[j].t == f->eq->lhs)) return;
  }
  /* O's flat offset written by F, and the local offset F reads */
  int64_t oc[LEIR__MAX_LOOPS], o0;
  if (f->nloops > LEIR__MAX_LOOPS || !leir__c_sr_flat(L, f->eq->lhs, oc, &o0)) return;
  int64_t lc[LEIR__MAX_LOOPS] = {0}, l0 = 0, stride = 1;
  for (uint32_t k = pl->rank; k-- > 0;) {
    const leir__affine *fk = &acc[fa].f[k];
    int64_t t;
    for (uint32_t j = 0; j < fk->nterms; j++)
      if (fk->slot[j] >= k0 &&
          (__builtin_mul_overflow(fk->coef[j], stride, &t) ||
           __builtin_add_overflow(lc[fk->slot[j]], t, &lc[fk->slot[j]])))
        return;
    if (__builtin_mul_overflow(fk->c - pl->lo[k], stride, &t) || __builtin_add_overflow(l0, t, &l0))
      return;
    stride *= pl->span[k]; /* <= elems */
  }
  /* inside the region: the same steps in O and in the array, a dense walk
   * of the whole array from its first element */
  int64_t coef[LEIR__MAX_LOOPS + 1], ext[LEIR__MAX_LOOPS + 1];
  uint32_t m = 0;
  uint64_t walked = 1;
  for (uint32_t d = k0; d < f->nloops; d++) {
    if (oc[d] != lc[d]) return;
    if (f->loops[d]->extent == 1) continue;
    coef[m] = lc[d], ext[m++] = f->loops[d]->extent;
    if (__builtin_mul_overflow(walked, (uint64_t)f->loops[d]->extent, &walked)) return;
  }
  int64_t last;
  if (l0 != 0 || !lb_radix(coef, ext, m, &last) || walked != pl->elems ||
      last != (int64_t)pl->elems - 1)
    return;
  /* outside: disjoint regions inside O */
  int64_t lo = o0, hi = o0;
  m = 0;
  for (uint32_t d = 0; d < k0; d++) {
    int64_t e = f->loops[d]->extent, span;
    if (e == 1) continue;
    if (__builtin_mul_overflow(oc[d], e - 1, &span) ||
        __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi))
      return;
    coef[m] = oc[d], ext[m++] = e;
  }
  /* with the array's own offsets as a last term of extent elems: every
   * outer loop clears them, so no two iterations' regions overlap */
  coef[m] = 1, ext[m++] = (int64_t)pl->elems;
  if (lo < 0 || hi > (int64_t)host->elements - (int64_t)pl->elems ||
      !lb_radix(coef, ext, m, &last))
    return;
  pl->host = o;
  pl->host_c = o0;
  for (uint32_t d = 0; d < LEIR__MAX_LOOPS; d++) pl->host_coef[d] = d < k0 ? oc[d] : 0;
  hosting[o] = true;
}

/* Plans every l/s-scope intermediate (L->lb, one entry per buffer). */
void leir__c_lb_plan_all(lower *L) {
  const leir__analysis *a = L->a;
  if (L->o->check_all_bounds) return;
  L->lb = calloc(a->nbuffers ? a->nbuffers : 1, sizeof *L->lb);
  lb_access *acc = malloc(SR_MAX_ACCESSES * sizeof *acc);
  sr_access *tmp = malloc(SR_MAX_ACCESSES * sizeof *tmp);
  if (!L->lb || !acc || !tmp) {
    free(acc);
    free(tmp);
    L->failed = true;
    return;
  }
  bool *hosting = calloc(a->nbuffers ? a->nbuffers : 1, sizeof *hosting);
  if (!hosting) {
    free(acc);
    free(tmp);
    L->failed = true;
    return;
  }
  for (uint32_t b = 0; b < a->nbuffers; b++) {
    const leir__buffer *buf = &a->buffers[b];
    if (buf->role != LEIR__BUF_TEMP || buf->scope == LEIR_SCOPE_GLOBAL || buf->rank == 0 ||
        buf->rank > LB_MAX_RANK)
      continue;
    uint32_t n = 0, top = LEIR__NONE;
    bool ok = true;
    for (uint32_t i = 0; i < a->neqs && ok; i++) {
      const leir__eqinfo *info = &a->eqs[i];
      uint32_t nt = 0;
      if (!leir__c_sr_collect(info->eq->lhs, false, tmp, &nt, SR_MAX_ACCESSES) ||
          !leir__c_sr_collect(info->eq->rhs, false, tmp, &nt, SR_MAX_ACCESSES)) {
        ok = false;
        break;
      }
      for (uint32_t j = 0; j < nt && ok; j++) {
        if (a->expr_buffer[tmp[j].t->id] != b) continue;
        if (tmp[j].sub || n == SR_MAX_ACCESSES || (top != LEIR__NONE && info->top != top) ||
            info->nloops > LEIR__MAX_LOOPS) {
          ok = false;
          break;
        }
        top = info->top;
        acc[n].t = tmp[j].t;
        acc[n].info = info;
        for (uint32_t k = 0; k < tmp[j].t->n && ok; k++)
          ok = !leir__expr_has_tensor(tmp[j].t->kids[k]) &&
               leir__affine_of(a, tmp[j].t->kids[k], &acc[n].f[k]);
        n++;
      }
    }
    if (!ok || !n) continue;
    for (uint32_t k0 = L->p->nests[top]->nloops; k0 > 0; k0--)
      if (lb_fits(L, b, acc, n, top, k0, &L->lb[b])) break;
    if (L->lb[b].on && !L->o->no_storage_reuse) lb_host(L, b, acc, n, hosting);
  }
  free(hosting);
  free(acc);
  free(tmp);
}

leir_status leir__c_storage_hosts(const leir__analysis *a, uint32_t *host) {
  leir__c_options o;
  memset(&o, 0, sizeof o);
  lower L;
  memset(&L, 0, sizeof L);
  L.a = a;
  L.p = a->p;
  L.o = &o;
  leir__c_lb_plan_all(&L);
  if (L.failed) {
    free(L.lb);
    return leir__error_nomem();
  }
  for (uint32_t b = 0; b < a->nbuffers; b++) host[b] = L.lb[b].on ? L.lb[b].host : LEIR__NONE;
  free(L.lb);
  return LEIR_OK;
}

/* Opens the local buffers whose region starts at loop k of the top-level
 * nest being emitted; returns how many. */
uint32_t leir__c_lb_open(lower *L, uint32_t k, uint32_t depth) {
  uint32_t opened = 0;
  for (uint32_t b = 0; b < L->a->nbuffers && !stop(L); b++) {
    lb_plan *pl = &L->lb[b];
    if (!pl->on || pl->top != L->top || pl->k0 != k) continue;
    const leir__buffer *buf = &L->a->buffers[b];
    const char *type = leir__ctext_elem_type((leir_dtype)buf->dtype);
    indent(L, (int)depth);
    putf(L, "{ /* %s: local to one iteration of the outer %u loop%s", leir__sym_name(L->p, buf->sym),
         k, k == 1 ? "" : "s");
    if (pl->host == LEIR__NONE) {
      put(L, " */\n");
      indent(L, (int)depth);
      putf(L, "%s p%u[%" PRIu64 "];\n", type, b, pl->elems);
    } else {
      putf(L, ", held in the %s it is finally written to */\n",
           leir__sym_name(L->p, L->a->buffers[pl->host].sym));
      indent(L, (int)depth);
      putf(L, "%s *const p%u = b%u + ", type, b, pl->host);
      for (uint32_t d = 0; d < k; d++)
        if (pl->host_coef[d]) {
          put_i64(L->out, pl->host_coef[d]);
          putf(L, " * i%u + ", d);
        }
      put_i64(L->out, pl->host_c);
      put(L, ";\n");
    }
    pl->live = true;
    for (uint32_t i = 0; i < L->a->neqs; i++)
      if (L->a->eqs[i].lhs_buffer == b && L->a->eqs[i].init != LEIR__INIT_NONE)
        leir__c_emit_init(L, &L->a->eqs[i], k);
    opened++;
  }
  return opened;
}

void leir__c_lb_close(lower *L, uint32_t k, uint32_t depth) {
  for (uint32_t b = L->a->nbuffers; b-- > 0;) {
    lb_plan *pl = &L->lb[b];
    if (!pl->live || pl->top != L->top || pl->k0 != k) continue;
    pl->live = false;
    indent(L, (int)depth);
    put(L, "}\n");
  }
}
