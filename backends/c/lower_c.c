/*
 * LEIR -> C (one function per program) following backends/semantics.h, so
 * that the compiled code computes exactly what the interpreter computes:
 *
 *  - top-level nests in order; before each, init loops set the identity of
 *    every element written by its implicit-init equations (spec §3.4),
 *    visiting only the loops that appear in the left-hand subscript;
 *  - loops become `for` loops over int64_t; a nest's items are emitted in
 *    text order inside the innermost loop (per-iteration interleaving);
 *  - P and B loops become `omp parallel for` and V loops `omp simd` only
 *    when their iterations are independent (leir__loop_independent), not
 *    nested in another parallel/simd loop, and, for parallel regions, worth
 *    it (enough evaluations per entry); U loops get an unroll pragma;
 *  - every equation evaluates its right side into a typed temporary, then
 *    stores it with the dtype's conversion;
 *  - subscripts that read a tensor (indirect indices) are bounds-checked
 *    through leir_chk, integer division by zero traps through rt->trap.
 */
#include "lower_c.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_expr.h"
#include "c_text.h"
#include "cost_model.h"
#include "error.h"
#include "leir/run.h"
#include "prelude.h"
#include "semantics.h"
#include "vec.h"

typedef struct lower {
  const leir__analysis *a;
  const leir_program *p;
  const leir__c_options *o;
  leir__strbuf *out;
  leir__c_site *sites;
  uint32_t nsites, cap_sites;
  bool failed;
  uint64_t unroll; /* product of the unroll factors of the enclosing U loops */
  leir__env env; /* full loop ranges of the equation being emitted */
  leir__cx x;    /* the shared expression emitter */
  /* scalar replacement: buffers held in local tiles (innermost region last) */
  struct sr_buf *sr;
  uint32_t nsr;
  bool sr_memory; /* element(): address memory even for replaced buffers */
  /* local buffers: by buffer, the plan of an l/s-scope intermediate held in a
   * per-iteration array (NULL: none); `live` while inside its region */
  struct lb_plan *lb;
  uint32_t top; /* the top-level nest being emitted */
  /* ids of the f32 divisions whose divisor's reciprocal is computed before
   * the loop being emitted (rcp_open) */
  uint32_t *rcp;
  uint32_t nrcp, cap_rcp;
} lower;

/* Product of unroll factors along one loop path, at most: nested full
 * unrolls multiply the compiler's work (U^{64}U^{64}U^{64} asks for 262144
 * copies of the body), so inner U loops get what is left. */
#define MAX_UNROLL_PRODUCT 1024

static void put(lower *L, const char *s) { leir__sb_puts(L->out, s); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void putf(lower *L, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  leir__sb_vprintf(L->out, fmt, ap);
  va_end(ap);
}

static void indent(lower *L, int depth) {
  for (int i = 0; i < depth + 1; i++) put(L, "  ");
}

static int add_site(lower *L, uint8_t kind, uint32_t dim, uint32_t pos, const char *tensor) {
  if (!leir__vec_grow32((void **)&L->sites, &L->cap_sites, (size_t)L->nsites + 1,
                        sizeof *L->sites, 16)) {
    L->failed = true;
    return 0;
  }
  L->sites[L->nsites] = (leir__c_site){kind, dim, pos, tensor};
  return (int)L->nsites++;
}

/* Emission ends at the first failure (a failed write, a source over the
 * size limit, an untranslatable expression); the status says which. */
static bool stop(lower *L) {
  if (L->failed) leir__cx_fail(&L->x, leir__error_nomem());
  if (leir__cx_status(&L->x) == LEIR_OK && L->out->failed) leir__cx_fail(&L->x, leir__error_nomem());
  if (leir__cx_status(&L->x) == LEIR_OK && L->out->len > L->x.max_bytes)
    leir__cx_fail(&L->x, leir__error(LEIR_ERR_LIMIT, "lower.size", NULL, 0, 0,
                                     "the generated source exceeds %zu bytes", L->x.max_bytes));
  return leir__cx_status(&L->x) != LEIR_OK;
}

/* ---- the C dialect of the shared expression emitter (c_expr.h) ------------- */

static void put_i64(leir__strbuf *b, int64_t v) {
  if (v == INT64_MIN)
    leir__sb_puts(b, "(-INT64_C(9223372036854775807)-1)");
  else if (v < 0)
    leir__sb_printf(b, "(-INT64_C(%" PRId64 "))", -v);
  else if (v <= INT32_MAX)
    leir__sb_printf(b, "%" PRId64, v);
  else
    leir__sb_printf(b, "INT64_C(%" PRId64 ")", v);
}

/* Loop variables are named by depth: i0, i1, ... */
static void put_var(leir__cx *x, const leir_expr *v) {
  leir__sb_printf(leir__cx_out(x), "i%u", x->a->expr_loop[v->id]);
}

/* Trapping helpers take the run-time context first and a site number last. */
static void trap_post(leir__cx *x, const leir_expr *at) {
  lower *L = x->ctx;
  leir__sb_printf(leir__cx_out(x), ", %d", add_site(L, LEIR__TRAP_DIVZERO, 0, at->pos, NULL));
}

static bool sr_element(lower *L, leir__strbuf *o, uint32_t b);
static bool lb_live(const lower *L, uint32_t b);
static void lb_element(lower *L, leir__strbuf *o, uint32_t b, const leir_expr *t);

/* bK[flat offset] of a tensor access, with run-time checks where needed
 * (rK[tile offset] for a buffer held in a local tile, see below). */
static void element(leir__cx *x, const leir_expr *t) {
  lower *L = x->ctx;
  leir__strbuf *o = leir__cx_out(x);
  uint32_t b = L->a->expr_buffer[t->id];
  const leir__buffer *buf = &L->a->buffers[b];
  if (!L->sr_memory && sr_element(L, o, b)) return;
  if (lb_live(L, b)) {
    lb_element(L, o, b, t);
    return;
  }
  leir__sb_printf(o, "b%u[", b);
  if (t->n == 0) leir__sb_puts(o, "0");
  for (uint32_t k = 0; k < t->n; k++) leir__sb_puts(o, "(");
  for (uint32_t k = 0; k < t->n; k++) {
    if (k) {
      leir__sb_puts(o, ") * ");
      put_i64(o, buf->shape[k]);
      leir__sb_puts(o, " + ");
    }
    const leir_expr *ix = t->kids[k];
    bool check = L->o->check_all_bounds || leir__expr_has_tensor(ix);
    if (check) {
      int site = add_site(L, LEIR__TRAP_BOUNDS, k, ix->pos, leir__sym_name(L->p, t->sym));
      leir__sb_puts(o, "leir_chk(rt, ");
      leir__cx_index(x, ix);
      leir__sb_puts(o, ", ");
      put_i64(o, buf->shape[k]);
      leir__sb_printf(o, ", %d)", site);
    } else {
      leir__cx_index(x, ix);
    }
  }
  if (t->n) leir__sb_puts(o, ")");
  leir__sb_puts(o, "]");
}


/* ---- scalar replacement ----------------------------------------------------
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
#define SR_MAX_BUFS 8     /* tiles live at once */

typedef struct sr_buf {
  uint32_t buf;
  const leir_expr *rep;                 /* one access, for the load and store */
  const leir__eqinfo *info;             /* an equation of the region (loop ranges) */
  uint32_t nterms;                      /* tile terms of the flat offset */
  uint32_t slot[LEIR__MAX_LOOPS];       /* their loop positions, ascending */
  int64_t coef[LEIR__MAX_LOOPS];        /* their strides in the local array */
  uint64_t elems;
  bool used[LEIR__MAX_LOOPS];           /* loop positions the subscripts use */
} sr_buf;

static bool sr_element(lower *L, leir__strbuf *o, uint32_t b) {
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
static bool sr_flat(const lower *L, const leir_expr *t, int64_t *coef, int64_t *c) {
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

/* The tensor accesses of e (subscripts included); `sub` marks those inside
 * a subscript. Returns false when there are more than `cap`. */
typedef struct sr_access {
  const leir_expr *t;
  bool sub;
} sr_access;

static bool sr_collect(const leir_expr *e, bool sub, sr_access *acc, uint32_t *n, uint32_t cap) {
  if (e->kind == LEIR_EXPR_TENSOR) {
    if (*n == cap) return false;
    acc[(*n)++] = (sr_access){e, sub};
    for (uint32_t k = 0; k < e->n; k++)
      if (!sr_collect(e->kids[k], true, acc, n, cap)) return false;
    return true;
  }
  for (uint32_t k = 0; k < e->n; k++)
    if (!sr_collect(e->kids[k], sub, acc, n, cap)) return false;
  return true;
}

#define SR_MAX_ACCESSES 256

/* Adds the buffers whose tiles can live in registers over loops k.. of
 * nest n (emitted at `depth`); returns how many it added. */
static uint32_t sr_plan(lower *L, const leir_nest *n, uint32_t k, uint32_t depth) {
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
    if (!sr_collect(n->items[i].eq->lhs, false, acc, &nacc, SR_MAX_ACCESSES) ||
        !sr_collect(n->items[i].eq->rhs, false, acc, &nacc, SR_MAX_ACCESSES))
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
    if (!sr_flat(L, lhs, coef0, &c0)) continue;
    bool ok = true;
    for (uint32_t j = 0; j < nacc && ok; j++) {
      if (L->a->expr_buffer[acc[j].t->id] != b) continue;
      int64_t coef[LEIR__MAX_LOOPS], c;
      ok = !acc[j].sub && sr_flat(L, acc[j].t, coef, &c) && c == c0 &&
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
static void sr_copy(lower *L, uint32_t count, const leir_nest *n, uint32_t k, uint32_t depth,
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


/* ---- local buffers -----------------------------------------------------------
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
#define LB_MAX_BYTES LEIR__LOCAL_MAX_BYTES
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

typedef struct lb_access {
  const leir_expr *t;
  const leir__eqinfo *info;
  leir__affine f[LB_MAX_RANK];
} lb_access;

static bool lb_live(const lower *L, uint32_t b) { return L->lb && L->lb[b].live; }

/* pK[...] of access t of a local buffer: each subscript minus its outer
 * part and smallest inner value, in the local array's row-major order. */
static void lb_element(lower *L, leir__strbuf *o, uint32_t b, const leir_expr *t) {
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
    if (!sr_collect(e->eq->lhs, false, tmp, &nt, SR_MAX_ACCESSES) ||
        !sr_collect(e->eq->rhs, false, tmp, &nt, SR_MAX_ACCESSES))
      return;
    for (uint32_t j = 0; j < nt; j++)
      if (a->expr_buffer[tmp[j].t->id] == o && !(e == f && tmp[j].t == f->eq->lhs)) return;
  }
  /* O's flat offset written by F, and the local offset F reads */
  int64_t oc[LEIR__MAX_LOOPS], o0;
  if (f->nloops > LEIR__MAX_LOOPS || !sr_flat(L, f->eq->lhs, oc, &o0)) return;
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
static void lb_plan_all(lower *L) {
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
      if (!sr_collect(info->eq->lhs, false, tmp, &nt, SR_MAX_ACCESSES) ||
          !sr_collect(info->eq->rhs, false, tmp, &nt, SR_MAX_ACCESSES)) {
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
  lb_plan_all(&L);
  if (L.failed) {
    free(L.lb);
    return leir__error_nomem();
  }
  for (uint32_t b = 0; b < a->nbuffers; b++) host[b] = L.lb[b].on ? L.lb[b].host : LEIR__NONE;
  free(L.lb);
  return LEIR_OK;
}

static void emit_init(lower *L, const leir__eqinfo *info, uint32_t from);

/* Opens the local buffers whose region starts at loop k of the top-level
 * nest being emitted; returns how many. */
static uint32_t lb_open(lower *L, uint32_t k, uint32_t depth) {
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
        emit_init(L, &L->a->eqs[i], k);
    opened++;
  }
  return opened;
}

static void lb_close(lower *L, uint32_t k, uint32_t depth) {
  for (uint32_t b = L->a->nbuffers; b-- > 0;) {
    lb_plan *pl = &L->lb[b];
    if (!pl->live || pl->top != L->top || pl->k0 != k) continue;
    pl->live = false;
    indent(L, (int)depth);
    put(L, "}\n");
  }
}

/* ---- reciprocals of loop-invariant divisors ---------------------------------
 *
 * x / y in f32 with y unchanged through the innermost loop of its equation
 * costs a vector division per element; computed as
 *
 *   const double leir_q7 = 1.0 / (double)(y);      before the loop
 *   ... (float)((double)(x) * leir_q7) ...          inside
 *
 * it is a multiplication (the compiler does not hoist the reciprocal
 * itself: it cannot prove the loop's stores miss y), and the same float:
 * the double product is within 2^-52 (relative) of x / y, while a quotient
 * of two floats is never within 2^-49 of a rounding boundary of float
 * unless on it, and never on one (a midpoint has 25 significant bits and
 * y times it more than 24), so both round alike, subnormal and overflowing
 * results included (docs/verification.md, "Division by a loop invariant";
 * tests/test_cpu.c checks it on random pairs over the whole range).
 *
 * Hoisted only where evaluating y early cannot differ: y is not inside a
 * conditional (its accesses may be guarded by it), every subscript in it is
 * affine and tensor-free (no run-time check to move), it uses no variable
 * of the loop, and no equation inside the loop writes a tensor it reads.
 */
#define RCP_MAX_PER_LOOP 8

static bool rcp_divisor_invariant(const lower *L, const leir__eqinfo *info, const leir_expr *y) {
  const uint32_t inner = info->nloops - 1;
  bool used[LEIR__MAX_LOOPS] = {false};
  leir__used_depths(L->a, y, used);
  if (used[inner]) return false;
  sr_access tmp[16];
  uint32_t nt = 0;
  if (!sr_collect(y, false, tmp, &nt, 16)) return false;
  for (uint32_t j = 0; j < nt; j++) {
    if (tmp[j].sub) return false;
    for (uint32_t k = 0; k < tmp[j].t->n; k++) {
      leir__affine f;
      if (!leir__affine_of(L->a, tmp[j].t->kids[k], &f)) return false;
    }
  }
  for (uint32_t i = 0; i < L->a->neqs; i++) {
    const leir__eqinfo *e = &L->a->eqs[i];
    if (e->nloops <= inner || e->loops[inner] != info->loops[inner]) continue;
    for (uint32_t j = 0; j < nt; j++)
      if (L->a->expr_buffer[tmp[j].t->id] == e->lhs_buffer) return false;
  }
  return true;
}

/* The hoistable divisions of e (arithmetic only: not under a conditional,
 * not in subscripts), at most `room`; with `emit`, declares their
 * reciprocals. Returns how many. */
static uint32_t rcp_declare(lower *L, const leir__eqinfo *info, const leir_expr *e, int depth,
                            uint32_t room, bool emit) {
  uint32_t made = 0;
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_BINARY:
    case LEIR_EXPR_NEG:
    case LEIR_EXPR_PAREN: break;
    case LEIR_EXPR_CALL:
      if (e->op == LEIR_OP_IF_THEN_ELSE) return 0;
      break;
    default: return 0;
  }
  for (uint32_t k = 0; k < e->n && !stop(L); k++)
    made += rcp_declare(L, info, e->kids[k], depth, room - made, emit);
  if (e->kind != LEIR_EXPR_BINARY || e->op != LEIR_OP_DIV || made >= room ||
      !rcp_divisor_invariant(L, info, e->kids[1]))
    return made;
  if (!emit) return made + 1;
  if (!leir__vec_grow32((void **)&L->rcp, &L->cap_rcp, L->nrcp + 1, sizeof *L->rcp, 16)) {
    L->failed = true;
    return made;
  }
  indent(L, depth);
  leir__cx_begin(&L->x);
  leir__sb_printf(leir__cx_out(&L->x), "const double leir_q%u = 1.0 / (double)", e->id);
  leir__cx_value(&L->x, e->kids[1], LEIR__CT_F32);
  leir__sb_puts(leir__cx_out(&L->x), ";\n");
  leir__cx_end(&L->x, false);
  L->rcp[L->nrcp++] = e->id;
  return made + 1;
}

/* Before the last loop of nest n (emitted at `depth`): the reciprocals of
 * its equations' invariant f32 divisors, in a block that rcp_close ends.
 * Returns how many. */
static uint32_t rcp_open(lower *L, const leir_nest *n, uint32_t k, uint32_t depth) {
  if (k + 1 != n->nloops || L->o->check_all_bounds || L->o->no_reciprocals) return 0;
  uint32_t made = 0;
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      if (!made) return 0;
      indent(L, (int)depth);
      put(L, "{ /* reciprocals of divisors fixed in the loop */\n");
    }
    made = 0;
    for (uint32_t i = 0; i < n->nitems && !stop(L) && made < RCP_MAX_PER_LOOP; i++) {
      if (!n->items[i].eq) continue;
      const leir__eqinfo *info = &L->a->eqs[L->a->eq_index[n->items[i].eq->id]];
      if (leir__ctype_of((leir_dtype)info->eq->lhs->dtype) != LEIR__CT_F32 ||
          info->nloops == 0 || info->nloops > LEIR__MAX_LOOPS)
        continue;
      leir__env_init(&L->env, info);
      made += rcp_declare(L, info, info->eq->rhs, (int)depth, RCP_MAX_PER_LOOP - made, pass == 1);
    }
  }
  return made;
}

static void rcp_close(lower *L, uint32_t made, uint32_t depth) {
  if (!made) return;
  L->nrcp -= made;
  indent(L, (int)depth);
  put(L, "}\n");
}

static bool hoisted_reciprocal(leir__cx *x, const leir_expr *division) {
  const lower *L = x->ctx;
  for (uint32_t i = L->nrcp; i-- > 0;)
    if (L->rcp[i] == division->id) return true;
  return false;
}

static const leir__cx_dialect c_dialect = {
    .put_i64 = put_i64,
    .nan = {"((float)NAN)", "((double)NAN)"},
    .inf = {"((float)INFINITY)", "((double)INFINITY)"},
    .neg_inf = {"(-(float)INFINITY)", "(-(double)INFINITY)"},
    .put_var = put_var,
    .cast_var = false,
    .trap_pre = "rt, ",
    .trap_post = trap_post,
    .element = element,
    .range_index = true,
    .hoisted_reciprocal = hoisted_reciprocal,
};

/* ---- statements ------------------------------------------------------------- */

/* b[off] = v converted to the buffer's dtype (into the statement). */
static void emit_store(lower *L, const leir_expr *lhs, const char *value) {
  uint32_t b = L->a->expr_buffer[lhs->id];
  leir_dtype dt = (leir_dtype)L->a->buffers[b].dtype;
  leir__cx_element(&L->x, lhs);
  leir__ctext_store(leir__cx_out(&L->x), dt, value);
}

static void emit_equation(lower *L, const leir__eqinfo *info, int depth) {
  leir__env_init(&L->env, info);
  const leir_expr *lhs = info->eq->lhs;
  leir__ctype ct = leir__ctype_of((leir_dtype)lhs->dtype);
  indent(L, depth);
  put(L, "{ ");
  leir__cx_begin(&L->x);
  leir__sb_printf(leir__cx_out(&L->x), "const %s v = ", leir__ctext_ctype_name(ct));
  leir__cx_value(&L->x, info->eq->rhs, ct);
  leir__sb_puts(leir__cx_out(&L->x), "; ");
  emit_store(L, lhs, "v");
  leir__cx_end(&L->x, false);
  indent(L, depth);
  put(L, "}\n");
}

static void emit_init(lower *L, const leir__eqinfo *info, uint32_t from) {
  leir__env_init(&L->env, info);
  const leir_expr *lhs = info->eq->lhs;
  bool used[LEIR__MAX_LOOPS] = {false};
  /* depths whose loop variable appears in the left-hand subscripts */
  for (uint32_t k = 0; k < lhs->n; k++) leir__used_depths(L->a, lhs->kids[k], used);
  leir_dtype dt = (leir_dtype)lhs->dtype;
  leir__ctype ct = leir__ctype_of(dt);
  leir__init_kind kind = (leir__init_kind)info->init;
  indent(L, (int)from);
  putf(L, "/* implicit initialization of %s (%s) */\n", leir__sym_name(L->p, lhs->sym),
       kind == LEIR__INIT_ZERO ? "0" : kind == LEIR__INIT_ONE ? "1"
                                : kind == LEIR__INIT_NEG_INF ? "-inf" : "+inf");
  int depth = (int)from;
  for (uint32_t d = from; d < info->nloops; d++) {
    if (!used[d]) continue;
    indent(L, depth++);
    putf(L, "for (int64_t i%u = 0; i%u < ", d, d);
    put_i64(L->out, info->loops[d]->extent);
    putf(L, "; i%u++)\n", d);
  }
  indent(L, depth);
  put(L, "{ ");
  leir__cx_begin(&L->x);
  leir__strbuf *o = leir__cx_out(&L->x);
  leir__sb_printf(o, "const %s v = ", leir__ctext_ctype_name(ct));
  if (ct == LEIR__CT_I64)
    put_i64(o, leir__init_value_i64(kind, dt));
  else
    leir__cx_float_const(&L->x, o, leir__init_value_f64(kind), ct);
  leir__sb_puts(o, "; ");
  emit_store(L, lhs, "v");
  leir__cx_end(&L->x, false);
  indent(L, depth);
  put(L, "}\n");
}

/* Evaluations per entry of loop l of nest n (its own and inner extents). */
static uint64_t work_from(const leir_nest *n, uint32_t l) {
  uint64_t items = 0;
  for (uint32_t i = 0; i < n->nitems; i++) {
    uint64_t w = n->items[i].eq ? 1 : work_from(n->items[i].nest, 0);
    items = items + w < items ? UINT64_MAX : items + w;
  }
  uint64_t w = items;
  for (uint32_t k = n->nloops; k-- > l;) {
    uint64_t r;
    w = __builtin_mul_overflow(w, (uint64_t)n->loops[k].extent, &r) ? UINT64_MAX : r;
  }
  return w;
}

static void emit_nest(lower *L, const leir_nest *n, uint32_t depth, bool in_parallel,
                      bool in_simd);

static void emit_loops_at(lower *L, const leir_nest *n, uint32_t k, uint32_t depth,
                          bool in_parallel, bool in_simd);

/* Loop k of nest n and what it holds, inside the local buffers whose
 * region starts there. */
static void emit_loops(lower *L, const leir_nest *n, uint32_t k, uint32_t depth, bool in_parallel,
                       bool in_simd) {
  uint32_t opened = 0;
  if (L->lb && depth == k && n == L->p->nests[L->top]) opened = lb_open(L, k, depth);
  emit_loops_at(L, n, k, depth, in_parallel, in_simd);
  if (opened) lb_close(L, k, depth);
}

static void emit_loops_at(lower *L, const leir_nest *n, uint32_t k, uint32_t depth,
                          bool in_parallel, bool in_simd) {
  if (stop(L)) return;
  if (k == n->nloops) {
    for (uint32_t i = 0; i < n->nitems && !stop(L); i++) {
      if (n->items[i].eq)
        emit_equation(L, &L->a->eqs[L->a->eq_index[n->items[i].eq->id]], (int)depth);
      else
        emit_nest(L, n->items[i].nest, depth, in_parallel, in_simd);
    }
    return;
  }
  const leir__loop *loop = &n->loops[k];
  const char *var = leir__sym_name(L->p, loop->sym);
  bool parallel = false, simd = false;
  if (L->o->parallel && loop->extent > 1 && !in_simd) {
    if ((loop->kind == LEIR_LOOP_PARALLEL || loop->kind == LEIR_LOOP_BOUND) && !in_parallel &&
        work_from(n, k) >= L->o->min_parallel_work && leir__loop_independent(L->a, n, k, NULL, 0))
      parallel = true;
    else if (loop->kind == LEIR_LOOP_VECTORIZED && leir__loop_independent(L->a, n, k, NULL, 0))
      simd = true;
  } else if (L->o->simd_alone && loop->extent > 1 && !in_simd &&
             loop->kind == LEIR_LOOP_VECTORIZED && leir__loop_independent(L->a, n, k, NULL, 0)) {
    /* one thread: V loops are still vectorized (gcc otherwise leaves a
     * register tile's inner loop scalar, 3x slower than the naive loop) */
    simd = true;
  }
  uint32_t tiles = parallel || simd || in_simd ? 0 : sr_plan(L, n, k, depth);
  if (tiles) {
    indent(L, (int)depth);
    put(L, "{ /* scalar replacement */\n");
    sr_copy(L, tiles, n, k, depth, true);
  }
  uint32_t rcps = rcp_open(L, n, k, depth);
  indent(L, (int)depth);
  putf(L, "/* %c^{%lld}_{%s} */\n", leir__loop_kind_letters[loop->kind], (long long)loop->extent,
       var);
  if (parallel) {
    indent(L, (int)depth);
    put(L, "#pragma omp parallel for schedule(static) num_threads(nthreads)\n");
  } else if (simd) {
    indent(L, (int)depth);
    put(L, "#pragma omp simd\n");
  }
  uint64_t outer_unroll = L->unroll;
  if (!parallel && !simd && loop->kind == LEIR_LOOP_UNROLLED) {
    uint64_t factor = loop->extent <= 64 ? (uint64_t)loop->extent : 8;
    uint64_t room = MAX_UNROLL_PRODUCT / (L->unroll ? L->unroll : 1);
    if (factor > room) factor = room ? room : 1;
    L->unroll = (L->unroll ? L->unroll : 1) * factor;
    indent(L, (int)depth);
    putf(L, "LEIR_UNROLL(%llu)\n", (unsigned long long)factor);
  }
  indent(L, (int)depth);
  putf(L, "for (int64_t i%u = 0; i%u < ", depth, depth);
  put_i64(L->out, loop->extent);
  putf(L, "; i%u++) {\n", depth);
  emit_loops(L, n, k + 1, depth + 1, in_parallel || parallel, in_simd || simd);
  L->unroll = outer_unroll;
  indent(L, (int)depth);
  put(L, "}\n");
  rcp_close(L, rcps, depth);
  if (tiles) {
    sr_copy(L, tiles, n, k, depth, false);
    L->nsr -= tiles;
    indent(L, (int)depth);
    put(L, "}\n");
  }
}

static void emit_nest(lower *L, const leir_nest *n, uint32_t depth, bool in_parallel,
                      bool in_simd) {
  emit_loops(L, n, 0, depth, in_parallel, in_simd);
}

static const char *const runtime_text =
    "\n/* ---- run-time checks (libleir C backend) ---- */\n"
    "typedef struct leir_rt leir_rt;\n"
    "struct leir_rt {\n"
    "  void (*trap)(leir_rt *rt, int kind, int site, int64_t value, int64_t extent);\n"
    "  int threads;\n"
    "  void *host;\n"
    "};\n"
    "#if defined(__GNUC__)\n"
    "#define LEIR_UNREACHABLE() __builtin_unreachable()\n"
    "#define LEIR_PRAGMA(x) _Pragma(#x)\n"
    "#else\n"
    "#define LEIR_UNREACHABLE() ((void)0)\n"
    "#define LEIR_PRAGMA(x)\n"
    "#endif\n"
    "#if defined(__clang__)\n"
    "#define LEIR_UNROLL(n) LEIR_PRAGMA(unroll n)\n"
    "#elif defined(__GNUC__)\n"
    "#define LEIR_UNROLL(n) LEIR_PRAGMA(GCC unroll n)\n"
    "#else\n"
    "#define LEIR_UNROLL(n)\n"
    "#endif\n"
    "static inline int64_t leir_chk(leir_rt *rt, int64_t ix, int64_t extent, int site) {\n"
    "  if ((uint64_t)ix >= (uint64_t)extent) { rt->trap(rt, 1, site, ix, extent); "
    "LEIR_UNREACHABLE(); }\n"
    "  return ix;\n"
    "}\n"
    "static inline int64_t leir_idiv(leir_rt *rt, int64_t a, int64_t b, int site) {\n"
    "  if (b == 0) { rt->trap(rt, 2, site, a, 0); LEIR_UNREACHABLE(); }\n"
    "  return leir_floordiv_i64(a, b);\n"
    "}\n"
    "static inline int64_t leir_imod(leir_rt *rt, int64_t a, int64_t b, int site) {\n"
    "  if (b == 0) { rt->trap(rt, 2, site, a, 0); LEIR_UNREACHABLE(); }\n"
    "  return leir_floormod_i64(a, b);\n"
    "}\n"
    "static inline int64_t leir_ipow(leir_rt *rt, int64_t a, int64_t b, int site) {\n"
    "  if (a == 0 && b < 0) { rt->trap(rt, 2, site, a, b); LEIR_UNREACHABLE(); }\n"
    "  return leir_pow_i64(a, b);\n"
    "}\n\n";

static void emit_header_comment(lower *L) {
  leir__strbuf text = LEIR__STRBUF_INIT;
  leir__print_program(&text, L->p, 0, NULL);
  put(L, "/*\n * Generated by libleir " LEIR_VERSION_STRING " (C backend) from:\n *   ");
  for (size_t i = 0; i < text.len; i++) {
    char c = text.data[i];
    if (c == '*' && i + 1 < text.len && text.data[i + 1] == '/') {
      put(L, "* ");
      continue;
    }
    leir__sb_putc(L->out, c);
    if (c == ';' && i + 1 < text.len && i % 96 > 80) put(L, "\n *   ");
  }
  put(L, "\n */\n");
  leir__sb_release(&text);
}

leir_status leir__lower_c(const leir__analysis *a, const leir__c_options *o, leir__strbuf *out,
                          leir__c_site **sites, uint32_t *nsites) {
  return leir__lower_c_max(a, o, 0, out, sites, nsites);
}

leir_status leir__lower_c_max(const leir__analysis *a, const leir__c_options *o, size_t max_bytes,
                              leir__strbuf *out, leir__c_site **sites, uint32_t *nsites) {
  lower L;
  sr_buf tiles[SR_MAX_BUFS];
  memset(&L, 0, sizeof L);
  L.sr = tiles;
  L.a = a;
  L.p = a->p;
  L.o = o;
  L.out = out;
  leir__cx_init(&L.x, &c_dialect, a, &L, out);
  L.x.env = &L.env;
  if (max_bytes) L.x.max_bytes = max_bytes;
  if (stop(&L)) {
    leir__cx_release(&L.x);
    return leir__cx_status(&L.x);
  }
  lb_plan_all(&L);
  emit_header_comment(&L);
  put(&L, "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n");
  put(&L, leir__prelude_text);
  put(&L, runtime_text);
  put(&L, "int " LEIR__C_ENTRY "(void *const *bufs, leir_rt *rt);\n");
  put(&L, "int " LEIR__C_ENTRY "(void *const *bufs, leir_rt *rt) {\n");
  put(&L, "  const int nthreads = rt->threads > 0 ? rt->threads : 1;\n  (void)nthreads;\n");
  for (uint32_t b = 0; b < a->nbuffers; b++) {
    const leir__buffer *buf = &a->buffers[b];
    putf(&L, "  %s *restrict b%u = (%s *)bufs[%u]; /* %s^{%s} %s [", leir__ctext_elem_type((leir_dtype)buf->dtype),
         b, leir__ctext_elem_type((leir_dtype)buf->dtype), b, leir__sym_name(L.p, buf->sym),
         leir_dtype_name((leir_dtype)buf->dtype),
         buf->role == LEIR__BUF_INPUT ? "input" : buf->role == LEIR__BUF_OUTPUT ? "output"
                                                                               : "intermediate");
    for (uint32_t k = 0; k < buf->rank; k++)
      putf(&L, "%s%lld", k ? "," : "", (long long)buf->shape[k]);
    put(&L, "] */\n");
    putf(&L, "  (void)b%u;\n", b);
  }
  for (uint32_t t = 0; t < L.p->nnests; t++) {
    uint32_t line, col;
    leir__position(L.p, L.p->nests[t]->pos, &line, &col);
    putf(&L, "\n  /* nest %u (%u:%u) */\n", t + 1, line, col);
    for (uint32_t i = 0; i < a->neqs; i++)
      if (a->eqs[i].top == t && a->eqs[i].init != LEIR__INIT_NONE &&
          !(L.lb && L.lb[a->eqs[i].lhs_buffer].on))
        emit_init(&L, &a->eqs[i], 0);
    L.top = t;
    emit_nest(&L, L.p->nests[t], 0, false, false);
    if (stop(&L)) break;
  }
  if (!stop(&L)) put(&L, "  return 0;\n}\n");
  leir_status st = stop(&L) ? leir__cx_status(&L.x) : LEIR_OK;
  if (st == LEIR_OK && L.failed) st = leir__error_nomem();
  leir__cx_release(&L.x);
  free(L.lb);
  free(L.rcp);
  if (st != LEIR_OK) {
    free(L.sites);
    return st;
  }
  if (sites) {
    *sites = L.sites;
    *nsites = L.nsites;
  } else {
    free(L.sites);
  }
  return LEIR_OK;
}
