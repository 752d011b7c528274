/* The analytic cost model (docs/cost.md; leir_program_cost_predict of
 * include/leir/experimental/cost.h): a prediction of a program's run time
 * on this host's CPU from its analysis. It lives in backends/, not lib/,
 * because it models the C backend's code (its local arrays and the storage
 * they borrow: leir__c_storage_hosts); lib/cost.c keeps the counts. */
#define LEIR_EXPERIMENTAL
#include "cost_model.h"

#include "leir/experimental/cost.h"

#include <math.h>
#include <unistd.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "c/local_buffers.h"
#include "error.h"
#include "visit.h"

/* ---- the analytic cost model (docs/cost.md) --------------------------------- */

void leir__machine_host(leir__machine *m) {
  memset(m, 0, sizeof *m);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  m->threads = n > 0 ? (uint32_t)n : 1;
  m->ghz = 2.5;
  m->vector_bytes = 32;
  m->line = 64;
  m->cache[0] = 32u << 10;
  m->cache[1] = 1u << 20;
  m->cache[2] = 16u << 20;
#ifdef _SC_LEVEL1_DCACHE_SIZE
  long c1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), c2 = sysconf(_SC_LEVEL2_CACHE_SIZE),
       c3 = sysconf(_SC_LEVEL3_CACHE_SIZE), ln = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
  if (c1 >= 4096) m->cache[0] = (uint64_t)c1;
  if (c2 >= 65536) m->cache[1] = (uint64_t)c2;
  if (c3 >= 65536) m->cache[2] = (uint64_t)c3;
  if (ln >= 16 && ln <= 1024) m->line = (uint32_t)ln;
#endif
  m->fill_bpc[0] = 32;
  m->fill_bpc[1] = 16;
  /* from memory: what one core streams (4096^2 f32 copy-like kernels here,
   * 1 thread 12 GB/s, 2 threads 23-25 GB/s), up to what all cores share */
  m->mem_core_bpc = 4.8;
  m->fill_bpc[2] = 10;
  m->fma_ports = 2;
  m->latency = 4;
  m->call_cycles = 15;
  m->region_us = 2;
  m->simd_bytes = m->vector_bytes;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) m->simd_bytes = 64;
#endif
  /* half of the SIMD register file (16 registers, 32 with AVX-512) */
  m->reg_bytes = (m->simd_bytes >= 64 ? 32 : 16) * m->simd_bytes / 2;
  m->imbalance_us = 0.5;
  m->wake_us = 20;
  long pg = sysconf(_SC_PAGESIZE);
  m->page = pg >= 1024 && pg <= (1l << 30) ? (uint32_t)pg : 4096;
  /* measured (docs/cost.md "Page walks"): a column walk of 4096 rows of
   * 16 KB misses the TLB on every access (27 cycles an element), of 1024
   * rows never */
  m->tlb_entries = 1536;
  m->walk_cycles = 25;
  /* leir_exp_f32 (docs/cost.md "Exponentials"): 4096^2 f32, 2 threads, one
   * exp more per element costs 2.4-3.2 cycles an element in an omp simd
   * loop of 8 or 16 lanes alike (a chain of ~35 dependent instructions:
   * bound by the latency the out-of-order window overlaps, not by the
   * lanes), 13.5 in a scalar sum */
  m->exp_vec_cycles = 2.5;
  m->exp_scalar_cycles = 13;
}

/* Weighted operations of one evaluation: ops_of, with divisions as 4.
 * In a float equation (f32, f16, bf16: computed in float) exp and log are
 * libleir's own leir_exp_f32 / leir_log_f32 (backends/leir_math.h),
 * branch-free C that the compiler vectorizes with the loop: they go to
 * *trans instead (exponentials per evaluation; a log, evaluated in double,
 * counts as two), priced per element at their measured cost (the machine's
 * exp_vec_cycles / exp_scalar_cycles). Other calls of libm (exp and log in
 * double, erf) go to *calls: they stay scalar (the C backend calls the
 * C99 functions; no vector variants without -ffast-math). sqrt is an
 * instruction (the backend compiles with -fno-math-errno), priced as a
 * division. */
static double wops_of(const leir_expr *e, bool f32, double *trans, double *calls) {
  double n = 0;
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_BINARY: n = e->op == LEIR_OP_DIV ? 4 : 1; break;
    case LEIR_EXPR_NEG: n = 1; break;
    case LEIR_EXPR_COMPARE: n = e->n ? e->n - 1 : 0; break;
    case LEIR_EXPR_CALL:
      if (e->op == LEIR_OP_MAX || e->op == LEIR_OP_MIN)
        n = e->n ? e->n - 1 : 0;
      else if (e->op == LEIR_OP_IF_THEN_ELSE || e->op == LEIR_OP_ABS)
        n = 1;
      else if (e->op == LEIR_OP_SQRT)
        n = 4; /* an instruction like a division (-fno-math-errno) */
      else if (f32 && e->op == LEIR_OP_EXP)
        *trans += 1;
      else if (f32 && e->op == LEIR_OP_LOG)
        *trans += 2;
      else
        *calls += 1;
      break;
    case LEIR_EXPR_TENSOR: return 0; /* subscripts are address arithmetic */
    default: break;
  }
  for (uint32_t k = 0; k < e->n; k++) n += wops_of(e->kids[k], f32, trans, calls);
  return n;
}

#define CM_MAX_ACC 64

/* One distinct access of a group: buffer, element size, flat offset as
 * coefficients by loop position (affine), or not affine. */
typedef struct cm_access {
  uint32_t buf;
  uint32_t esize;
  bool affine;
  bool lhs;       /* written */
  bool used[LEIR__MAX_LOOPS];
  int64_t coef[LEIR__MAX_LOOPS];
  int64_t c;
} cm_access;

typedef struct cm_group {
  const leir__analysis *a;
  const leir__machine *m;
  const uint32_t *local;       /* per buffer: the loops of its top-level nest it
                                * is local to one iteration of (0: a whole buffer) */
  const uint32_t *guest;       /* per buffer: the local array the C backend keeps
                                * in its storage (its accesses count as that
                                * array's), else LEIR__NONE */
  uint32_t n;                  /* loops */
  const leir__loop *const *loops;
  cm_access acc[CM_MAX_ACC];
  uint32_t nacc;
  bool overflow;               /* more accesses than CM_MAX_ACC */
} cm_group;

static bool cm_flat(const leir__analysis *a, const leir_expr *t, cm_access *x) {
  const leir__buffer *buf = &a->buffers[a->expr_buffer[t->id]];
  for (uint32_t d = 0; d < LEIR__MAX_LOOPS; d++) x->coef[d] = 0;
  x->c = 0;
  if (t->n != buf->rank) return false;
  int64_t stride = 1;
  for (uint32_t k = t->n; k-- > 0;) {
    leir__affine f;
    if (leir__expr_has_tensor(t->kids[k]) || !leir__affine_of(a, t->kids[k], &f)) return false;
    for (uint32_t i = 0; i < f.nterms; i++) {
      int64_t m;
      if (f.slot[i] >= LEIR__MAX_LOOPS || __builtin_mul_overflow(f.coef[i], stride, &m) ||
          __builtin_add_overflow(x->coef[f.slot[i]], m, &x->coef[f.slot[i]]))
        return false;
    }
    int64_t m;
    if (__builtin_mul_overflow(f.c, stride, &m) || __builtin_add_overflow(x->c, m, &x->c) ||
        __builtin_mul_overflow(stride, buf->shape[k], &stride))
      return false;
  }
  return true;
}

static void cm_add(cm_group *g, const leir_expr *t, bool lhs) {
  cm_access x;
  memset(&x, 0, sizeof x);
  x.buf = g->a->expr_buffer[t->id];
  if (g->guest[x.buf] != LEIR__NONE) x.buf = g->guest[x.buf];
  x.esize = (uint32_t)leir_dtype_size((leir_dtype)g->a->buffers[x.buf].dtype);
  x.lhs = lhs;
  x.affine = cm_flat(g->a, t, &x);
  for (uint32_t k = 0; k < t->n; k++) leir__used_depths(g->a, t->kids[k], x.used);
  /* a local buffer is one small array for every iteration of its loops */
  for (uint32_t j = 0; j < g->local[x.buf] && j < LEIR__MAX_LOOPS; j++)
    x.coef[j] = 0, x.used[j] = false;
  for (uint32_t i = 0; i < g->nacc; i++) {
    cm_access *y = &g->acc[i];
    if (y->buf == x.buf && y->affine && x.affine && y->c == x.c &&
        !memcmp(y->coef, x.coef, sizeof x.coef)) {
      y->lhs |= lhs;
      return;
    }
  }
  if (g->nacc == CM_MAX_ACC) {
    g->overflow = true;
    return;
  }
  g->acc[g->nacc++] = x;
}

static void cm_collect(cm_group *g, const leir_expr *e) {
  if (e->kind == LEIR_EXPR_TENSOR) cm_add(g, e, false);
  for (uint32_t k = 0; k < e->n; k++) cm_collect(g, e->kids[k]);
}

static bool cm_depends(const cm_access *x, uint32_t j) {
  return x->affine ? x->coef[j] != 0 : x->used[j];
}

/* |coefficient| of loop j in x's flat offset (INT64_MIN saturates). */
static int64_t cm_stride(const cm_access *x, uint32_t j) {
  int64_t c = x->coef[j];
  return c >= 0 ? c : c == INT64_MIN ? INT64_MAX : -c;
}

/* Distinct granules (cache lines, or pages) of `granule` bytes access x
 * touches over loops p..n-1 (the others fixed). Its loops taken by
 * increasing stride: while a stride is below the granule the range so far
 * grows contiguously (the gaps are smaller than a granule, so every granule
 * of the range is touched); from the first stride of a granule or more on,
 * each iteration is a copy of the range elsewhere. A subscript that is not
 * affine touches a new granule in every iteration of each loop it uses. */
static double cm_granules(const cm_group *g, const cm_access *x, uint32_t p, double granule) {
  double copies = 1, span = x->esize;
  bool taken[LEIR__MAX_LOOPS] = {false};
  bool contiguous = x->affine;
  for (;;) {
    uint32_t jm = LEIR__NONE;
    int64_t smin = 0;
    for (uint32_t j = p; j < g->n; j++) {
      if (taken[j] || !cm_depends(x, j)) continue;
      int64_t s = x->affine ? cm_stride(x, j) : INT64_MAX;
      if (jm == LEIR__NONE || s < smin) smin = s, jm = j;
    }
    if (jm == LEIR__NONE) break;
    taken[jm] = true;
    double ext = (double)g->loops[jm]->extent, step = (double)smin * x->esize;
    if (contiguous && step < granule)
      span += (ext - 1) * step;
    else
      contiguous = false, copies *= ext;
  }
  return copies * ceil(span / granule);
}

static double cm_lines(const cm_group *g, const cm_access *x, uint32_t p) {
  return cm_granules(g, x, p, g->m->line);
}

/* Lines all accesses touch over loops p..n-1. */
static double cm_footprint(const cm_group *g, uint32_t p) {
  double f = 0;
  for (uint32_t i = 0; i < g->nacc; i++) f += cm_lines(g, &g->acc[i], p);
  return f;
}

/* Pages all accesses touch over loops p..n-1. */
static double cm_pages(const cm_group *g, uint32_t p) {
  double f = 0;
  for (uint32_t i = 0; i < g->nacc; i++) f += cm_granules(g, &g->acc[i], p, g->m->page);
  return f;
}

/* The innermost loop the written access x does not depend on (its
 * innermost reduction loop), or n. */
static uint32_t cm_reduction_loop(const cm_group *g, const cm_access *x) {
  for (uint32_t j = g->n; j-- > 0;)
    if (!cm_depends(x, j)) return j;
  return g->n;
}

/* The loop the C backend makes its `omp simd` loop: the outermost V loop
 * of extent > 1 (V loops inside it are plain loops of its body), or n. */
static uint32_t cm_simd_loop(const cm_group *g) {
  for (uint32_t k = 0; k < g->n; k++)
    if (g->loops[k]->kind == LEIR_LOOP_VECTORIZED && g->loops[k]->extent > 1) return k;
  return g->n;
}

/* Cycles per evaluation of the gathers and scatters of the omp simd loop
 * when it is the innermost loop (around another loop, gcc vectorizes that
 * loop instead): an access whose subscript steps by other than 0 or 1
 * element in it (a V loop over rows, say). Measured (docs/cost.md
 * "Gathers"; f32, 16 lanes, 4096^2 and 2048^2): 1.5 cycles an element; but
 * when the V loop is one vector (at most 16 iterations) inside a loop that
 * comes back to the same lines (the rows of a column walk, gathered again
 * for the next column), as much as 5 cycles at a byte stride of 256, then
 * in proportion to the stride's power-of-two factor (2 KB 36, 4 KB 71,
 * 8 KB 196-212, 16 KB 415: the lanes fall into ever fewer L1 sets and evict
 * each other before the next column), fewer lanes fewer conflicts. */
static double cm_gather_cycles(const cm_group *g) {
  uint32_t js = cm_simd_loop(g);
  if (js == g->n || js + 1 != g->n) return 0;
  double lanes = (double)g->loops[js]->extent, cyc = 0;
  bool one_vector = lanes <= 16;
  if (lanes > 16) lanes = 16;
  for (uint32_t i = 0; i < g->nacc; i++) {
    const cm_access *x = &g->acc[i];
    if (!cm_depends(x, js)) continue;
    if (!x->affine) {
      cyc += 1.5;
      continue;
    }
    int64_t c = cm_stride(x, js);
    if (c <= 1) continue;
    uint64_t bytes = (uint64_t)c * x->esize, pow2 = bytes & (~bytes + 1);
    double e = one_vector && pow2 >= 256 ? 5.0 * (double)pow2 / 256 * lanes / 16 : 0;
    if (e > 512) e = 512;
    cyc += e > 1.5 ? e : 1.5;
  }
  return cyc;
}

/* The longest loop gcc unrolls completely by itself (its
 * max-completely-peel-times, 16): a plain loop of constant extent inside
 * the omp simd body that long or shorter behaves as a U loop. */
#define CM_PEELED_EXTENT 16

/* Whether the C backend keeps x's tile in registers: an affine accumulator
 * under a plain reduction loop with only U loops and the omp simd loop
 * inside (c/scalar_replacement.c). Not inside an omp simd loop
 * (the backend does not scalar-replace there). A second V loop inside the
 * omp simd loop is a plain loop of its body: the compiler unrolls it
 * completely up to CM_PEELED_EXTENT iterations, and the tile is then
 * registers as with U; longer, the tile is a local array indexed at run
 * time (512^3 f32, 2 threads, bench/cost_model: V^{16} columns around
 * V^{8} or V^{16} rows 115-120 GFLOP/s as U^{8} around V^{16}; around
 * V^{32} rows 65). */
static bool cm_in_registers(const cm_group *g, const cm_access *x) {
  uint32_t jr = cm_reduction_loop(g, x), js = cm_simd_loop(g);
  if (!x->affine || jr == g->n || g->loops[jr]->kind != LEIR_LOOP_SERIAL) return false;
  if (js < jr) return false;
  /* registers the tile needs: one per element of the U loops (and of the
   * V loops inside the omp simd loop), times the SIMD registers a row of
   * the omp simd loop takes (an element per register without one: the
   * compiler keeps scalars in separate registers) */
  double regs = 1;
  for (uint32_t j = jr + 1; j < g->n; j++) {
    const leir__loop *l = g->loops[j];
    if (l->kind == LEIR_LOOP_VECTORIZED && j == js)
      regs *= ceil((double)l->extent * x->esize / (double)g->m->simd_bytes);
    else if (l->kind == LEIR_LOOP_UNROLLED ||
             (l->kind == LEIR_LOOP_VECTORIZED && l->extent <= CM_PEELED_EXTENT))
      regs *= (double)l->extent;
    else
      return false;
  }
  /* a tile larger than the registers spills: its local array lives in L1 */
  return regs * g->m->simd_bytes <= (double)g->m->reg_bytes;
}

/* The share of the smaller of compute and memory time that the other does
 * not hide. */
#define CM_OVERLAP_REST 0.3

/* L1 loads and stores per evaluation when every loop inside the innermost
 * plain loop is U or V, the omp simd loop among them (a register tile, a
 * vector body): an access costs one load per distinct vector it touches in
 * one iteration of that plain loop (a row of the omp simd loop is
 * ceil(extent * esize / simd_bytes) vectors), and an access that does not
 * depend on a U/V loop is loaded once for all of its iterations (a
 * broadcast kept in a register). So a 4 x 16 register tile of a matmul
 * loads 4 broadcasts of A and 1 vector of C for 4 FMAs (bound by the L1
 * ports), a 4 x 64 tile 4 and 4 for 16 (bound by the FMAs): measured 2.51
 * and 2.12 ms at 512^3 on 2 threads. False (the caller counts the loads
 * that vary in the innermost loop, over the lanes) otherwise: a plain
 * innermost loop, a gather, a V loop inside the omp simd loop longer than
 * gcc unrolls. */
static bool cm_body_ports(const cm_group *g, double *loads, double *stores) {
  uint32_t n = g->n, js = cm_simd_loop(g), jr = n;
  if (js == n) return false;
  for (uint32_t j = n; j-- > 0 && jr == n;)
    if (g->loops[j]->kind != LEIR_LOOP_UNROLLED && g->loops[j]->kind != LEIR_LOOP_VECTORIZED)
      jr = j;
  if (jr == n || jr > js) return false;
  double inner = 1;
  for (uint32_t j = jr + 1; j < n; j++) {
    if (j > js && g->loops[j]->kind == LEIR_LOOP_VECTORIZED &&
        g->loops[j]->extent > CM_PEELED_EXTENT)
      return false;
    inner *= (double)g->loops[j]->extent;
  }
  double ld = 0, st = 0;
  for (uint32_t i = 0; i < g->nacc; i++) {
    const cm_access *x = &g->acc[i];
    if (!x->affine || (x->coef[js] != 0 && x->coef[js] != 1)) return false;
    if (x->lhs && cm_in_registers(g, x)) continue;
    double vec = 1;
    for (uint32_t j = jr + 1; j < n; j++) {
      if (!cm_depends(x, j)) continue;
      vec *= j == js ? ceil((double)g->loops[j]->extent * x->esize / (double)g->m->simd_bytes)
                     : (double)g->loops[j]->extent;
    }
    ld += vec;
    if (x->lhs) st += vec;
  }
  *loads = ld / inner;
  *stores = st / inner;
  return true;
}

/* The nests under one top-level nest's loops (a partial fusion's passes,
 * operator_fusion depth=K): in one iteration of those shared loops, a pass
 * finds in cache what an earlier pass of the same iteration brought in, as
 * long as everything the passes touched since fits. */
#define CM_MAX_SIB_BUFS 64

typedef struct cm_siblings {
  uint32_t top;    /* the top-level nest, LEIR__NONE before the first */
  uint32_t shared; /* its loops, which every group under it starts with */
  double lines[3]; /* lines the earlier groups touch in one iteration of them, per level */
  uint32_t nbufs;  /* buffers they touch */
  uint32_t bufs[CM_MAX_SIB_BUFS];
} cm_siblings;

static bool cm_sibling_touched(const cm_siblings *s, uint32_t buf) {
  for (uint32_t i = 0; i < s->nbufs; i++)
    if (s->bufs[i] == buf) return true;
  return false;
}

static void cm_group_predict(cm_group *g, uint32_t first, uint32_t last, cm_siblings *sib,
                             leir__prediction *out) {
  const leir__analysis *a = g->a;
  const leir__machine *m = g->m;
  const leir__eqinfo *info = &a->eqs[first];
  uint32_t n = g->n;
  double evals = 0, ops = 0, trans = 0, calls = 0;
  for (uint32_t i = first; i <= last; i++) {
    evals = (double)a->eqs[i].evaluations; /* the same for the whole group */
    leir_dtype dt = (leir_dtype)a->eqs[i].eq->lhs->dtype;
    bool f32 = dt == LEIR_F32 || dt == LEIR_F16 || dt == LEIR_BF16; /* the backend's float type */
    ops += wops_of(a->eqs[i].eq->rhs, f32, &trans, &calls);
  }
  /* parallelism: the outermost independent P/B loop of the top-level nest */
  double teff = 1, entries = 0;
  const leir_nest *top = a->p->nests[info->top];
  for (uint32_t j = 0; j < n && j < top->nloops && m->threads > 1; j++) {
    const leir__loop *l = g->loops[j];
    if ((l->kind != LEIR_LOOP_PARALLEL && l->kind != LEIR_LOOP_BOUND) || l->extent < 2) continue;
    double outer = 1;
    for (uint32_t k = 0; k < j; k++) outer *= (double)g->loops[k]->extent;
    if (evals / outer < 32768) break; /* the C backend runs it serially */
    if (!leir__loop_independent(a, top, j, NULL, 0)) continue;
    double ext = (double)l->extent, t = m->threads;
    teff = ext / ceil(ext / t);
    entries = outer;
    break;
  }
  /* vectorization: the innermost loop, unit or zero strides, written with
   * unit stride (a reduction over it is not vectorized: floating adds do
   * not reassociate) */
  uint32_t lanes = 1;
  if (n > 0) {
    /* the outermost V loop (the backend's omp simd loop: V loops inside
     * it are part of its body), else the innermost loop (the compiler's
     * own vectorization) */
    uint32_t j = cm_simd_loop(g);
    if (j == n) j = n - 1;
    bool ok = !g->overflow;
    uint32_t esize = 8;
    for (uint32_t i = 0; i < g->nacc && ok; i++) {
      const cm_access *x = &g->acc[i];
      if (!x->affine) ok = false;
      else if (x->lhs && x->coef[j] != 1) ok = false;
      else if (x->coef[j] != 0 && x->coef[j] != 1) ok = false;
      if (x->lhs && x->esize < esize) esize = x->esize;
    }
    /* an explicit V loop gets the widest registers (omp simd) */
    uint32_t vb = g->loops[j]->kind == LEIR_LOOP_VECTORIZED ? m->simd_bytes : m->vector_bytes;
    uint32_t w = vb / (esize ? esize : 8);
    if (ok && w > 1 && g->loops[j]->extent >= (int64_t)w) lanes = w;
    else if (ok && w > 1 && g->loops[j]->kind == LEIR_LOOP_VECTORIZED)
      lanes = (uint32_t)g->loops[j]->extent < w ? (uint32_t)g->loops[j]->extent : w;
  }
  /* L1 ports: loads and stores that vary in the innermost loop; an
   * accumulator tile the C backend keeps in registers (scalar replacement:
   * only U/V loops inside its innermost reduction loop) costs none */
  double loads = 0, stores = 0, ports;
  if (cm_body_ports(g, &loads, &stores)) {
    ports = loads / 2 + stores;
  } else {
    for (uint32_t i = 0; i < g->nacc; i++) {
      const cm_access *x = &g->acc[i];
      bool varies = n > 0 && cm_depends(x, n - 1);
      if (x->lhs) {
        if (varies && !cm_in_registers(g, x)) stores += 1, loads += 1;
      } else if (varies) {
        loads += 1;
      }
    }
    ports = (loads / 2 + stores) / lanes;
  }
  /* exponentials: their own cost per element, vectorized or not */
  double exp_cycles = lanes > 1 ? fmax(m->exp_vec_cycles, m->exp_scalar_cycles / lanes)
                                : m->exp_scalar_cycles;
  double arith = ops / (lanes * m->fma_ports * 2) + trans * exp_cycles + calls * m->call_cycles +
                 cm_gather_cycles(g);
  /* accumulator chains: the innermost loop the written subscript does not
   * depend on; the loops inside it give independent chains */
  double lat = 0;
  for (uint32_t i = 0; i < g->nacc && n > 0; i++) {
    const cm_access *x = &g->acc[i];
    if (!x->lhs) continue;
    uint32_t jr = cm_reduction_loop(g, x);
    if (jr == n) continue;
    double chains = 1;
    bool regs = true;
    for (uint32_t j = jr + 1; j < n; j++) {
      chains *= (double)g->loops[j]->extent;
      if (g->loops[j]->kind != LEIR_LOOP_UNROLLED && g->loops[j]->kind != LEIR_LOOP_VECTORIZED)
        regs = false;
    }
    /* at most 64 accumulator vectors in flight (a row of the omp simd
     * loop is one chain per lane: 4 x 16 of a register tile is 4 chains
     * of 16 lanes, latency-bound at one FMA a cycle; 4 x 64 is 16) */
    double cap = 64 * (lanes > 1 ? (double)lanes : 1);
    if (chains > cap) chains = cap;
    if (regs && !cm_in_registers(g, x)) regs = false;
    double l = (m->latency + (regs ? 0 : 5)) / chains;
    if (l > lat) lat = l;
  }
  double cyc = arith;
  if (ports > cyc) cyc = ports;
  if (lat > cyc) cyc = lat;
  double compute = evals * cyc / (m->ghz * 1e9) / teff;
  /* traffic per cache level */
  double mem = 0;
  uint32_t sh = sib->shared < n ? sib->shared : n;
  double own = cm_footprint(g, sh); /* one iteration of the shared loops */
  for (int c = 0; c < 3; c++) {
    double cap = 0.5 * (double)m->cache[c] / (c == 2 ? teff : 1) / m->line;
    uint32_t q = n;
    while (q > 0 && cm_footprint(g, q) <= cap) q--;
    /* an earlier pass under the same shared loops left its data here */
    bool reuse = sib->nbufs > 0 && sib->lines[c] + own <= cap;
    /* loops q..n-1 keep their reuse: one iteration of each fits in the cache */
    double lines = 0;
    for (uint32_t i = 0; i < g->nacc; i++) {
      if (reuse && cm_sibling_touched(sib, g->acc[i].buf)) continue;
      double t = cm_lines(g, &g->acc[i], q);
      for (uint32_t j = 0; j < q; j++) t *= (double)g->loops[j]->extent;
      lines += t;
    }
    double bytes = lines * m->line;
    out->bytes[c] += bytes;
    double bpc = c < 2 ? m->fill_bpc[c] * teff : m->mem_core_bpc * teff;
    if (c == 2 && bpc > m->fill_bpc[2]) bpc = m->fill_bpc[2];
    double bw = bpc * m->ghz * 1e9;
    if (bytes / bw > mem) mem = bytes / bw;
  }
  /* page walks: the pages the accesses touch, reused across the loops
   * that one iteration of fits in the TLB (as lines in a cache above) */
  {
    uint32_t q = n;
    while (q > 0 && cm_pages(g, q) <= m->tlb_entries) q--;
    double walks = 0;
    for (uint32_t i = 0; i < g->nacc; i++) {
      double t = cm_granules(g, &g->acc[i], q, m->page);
      for (uint32_t j = 0; j < q; j++) t *= (double)g->loops[j]->extent;
      walks += t;
    }
    mem += walks * m->walk_cycles / (m->ghz * 1e9) / teff;
  }
  out->compute_s += compute;
  out->memory_s += mem;
  for (int c = 0; c < 3; c++) sib->lines[c] += own;
  for (uint32_t i = 0; i < g->nacc; i++)
    if (sib->nbufs < CM_MAX_SIB_BUFS && !cm_sibling_touched(sib, g->acc[i].buf))
      sib->bufs[sib->nbufs++] = g->acc[i].buf;
  /* fork/join: each entry of the region costs region_us plus the stagger
   * of its threads (imbalance_us each); the first entry of a run wakes the
   * team, asleep since the previous run (wake_us) */
  double threads_used = teff > 1 ? ceil(teff) : 1;
  double fj = entries * (m->region_us + m->imbalance_us * threads_used) * 1e-6;
  if (entries > 0 && !out->woke) {
    fj += m->wake_us * 1e-6;
    out->woke = true;
  }
  /* compute and memory overlap, not completely: a share of the smaller
   * one shows (4096^2 f32, 2 threads: exp(A - D) stored 8.1 ms, the same
   * with the store into a row buffer that stays in cache 1.2x faster,
   * although the exp alone takes longer than the traffic) */
  double hi = compute > mem ? compute : mem, lo = compute > mem ? mem : compute;
  out->seconds += hi + CM_OVERLAP_REST * lo + fj;
}

static void cm_note_tops(const leir__analysis *a, const leir_expr *e, uint32_t top,
                         uint32_t *tops) {
  if (e->kind == LEIR_EXPR_TENSOR) {
    uint32_t b = a->expr_buffer[e->id];
    tops[b] = tops[b] == LEIR__NONE || tops[b] == top ? top : LEIR__NONE - 1;
  }
  for (uint32_t k = 0; k < e->n; k++) cm_note_tops(a, e->kids[k], top, tops);
}

/* Per buffer, how many of the loops of its top-level nest it is local to
 * one iteration of: an l- or s-scope intermediate used in one top-level
 * nest only, whose part for one iteration of that nest's loops is at most
 * LEIR__LOCAL_MAX_BYTES. An approximation of the backend's plan (which also
 * checks that the iterations' parts do not overlap): the model then counts
 * its lines once, not once per iteration. Then (tops + 2 nbuffers), per
 * buffer, the local array the backend keeps in its storage (the backend's
 * own plan, leir__c_storage_hosts): that array is the output's memory, so
 * it is not local, and the output's accesses count as the array's (they hit
 * the lines the pass writing the array brought in). */
static uint32_t *cm_local_buffers(const leir__analysis *a) {
  size_t nb = a->nbuffers ? a->nbuffers : 1;
  uint32_t *tops = malloc(4 * nb * sizeof *tops);
  if (!tops) return NULL;
  uint32_t *local = tops + a->nbuffers, *guest = tops + 2 * a->nbuffers, *host = guest + nb;
  for (uint32_t b = 0; b < a->nbuffers; b++) guest[b] = LEIR__NONE;
  if (leir__c_storage_hosts(a, host) != LEIR_OK) /* out of memory: no hosts */
    for (uint32_t b = 0; b < a->nbuffers; b++) host[b] = LEIR__NONE;
  for (uint32_t b = 0; b < a->nbuffers; b++) tops[b] = LEIR__NONE, local[b] = 0;
  for (uint32_t i = 0; i < a->neqs; i++) {
    cm_note_tops(a, a->eqs[i].eq->lhs, a->eqs[i].top, tops);
    cm_note_tops(a, a->eqs[i].eq->rhs, a->eqs[i].top, tops);
  }
  for (uint32_t b = 0; b < a->nbuffers; b++) {
    const leir__buffer *buf = &a->buffers[b];
    if (buf->role != LEIR__BUF_TEMP || buf->scope == LEIR_SCOPE_GLOBAL || tops[b] >= LEIR__NONE - 1)
      continue;
    const leir_nest *top = a->p->nests[tops[b]];
    double iters = 1;
    for (uint32_t j = 0; j < top->nloops; j++) iters *= (double)top->loops[j].extent;
    double part = (double)leir__buffer_bytes(buf) / iters;
    if (top->nloops > 0 && part <= (double)LEIR__LOCAL_MAX_BYTES)
      local[b] = top->nloops;
  }
  for (uint32_t b = 0; b < a->nbuffers; b++)
    if (host[b] != LEIR__NONE) {
      local[b] = 0;
      guest[host[b]] = b;
    }
  return tops;
}

void leir__cost_predict(const leir__analysis *a, const leir__machine *m, leir__prediction *out) {
  memset(out, 0, sizeof *out);
  cm_group *g = malloc(sizeof *g);
  uint32_t *tops = cm_local_buffers(a);
  if (!g || !tops) {
    free(g);
    free(tops);
    return;
  }
  cm_siblings sib;
  memset(&sib, 0, sizeof sib);
  sib.top = LEIR__NONE;
  for (uint32_t i = 0; i < a->neqs;) {
    uint32_t last = i;
    while (last + 1 < a->neqs && a->eqs[last + 1].nest == a->eqs[i].nest) last++;
    memset(g, 0, offsetof(cm_group, acc));
    g->nacc = 0;
    g->overflow = false;
    g->a = a;
    g->m = m;
    g->local = tops + a->nbuffers;
    g->guest = tops + 2 * a->nbuffers;
    g->n = a->eqs[i].nloops < LEIR__MAX_LOOPS ? a->eqs[i].nloops : LEIR__MAX_LOOPS;
    g->loops = a->eqs[i].loops;
    for (uint32_t e = i; e <= last; e++) {
      cm_add(g, a->eqs[e].eq->lhs, true);
      cm_collect(g, a->eqs[e].eq->rhs);
      if (a->eqs[e].init != LEIR__INIT_NONE) {
        /* the implicit initialization writes the accumulator once (a
         * local one in the L1 cache) */
        uint32_t lb = a->eqs[e].lhs_buffer;
        double bpc = g->local[lb] ? m->fill_bpc[0] : m->fill_bpc[2];
        double t = (double)leir__buffer_bytes(&a->buffers[lb]) / (bpc * m->ghz * 1e9);
        out->seconds += t;
        out->memory_s += t;
      }
    }
    if (a->eqs[i].top != sib.top) {
      memset(&sib, 0, sizeof sib);
      sib.top = a->eqs[i].top;
      sib.shared = a->p->nests[sib.top]->nloops;
    }
    cm_group_predict(g, i, last, &sib, out);
    i = last + 1;
  }
  free(g);
  free(tops);
}

leir_status leir_program_cost_predict(const leir_program *p, uint32_t threads, double *seconds) {
  if (!p || !seconds) return leir__error_arg(NULL, "NULL argument");
  *seconds = 0;
  leir__analysis *a = NULL;
  leir_status st = leir__analyze_program(p, NULL, &a);
  if (st != LEIR_OK) return st;
  leir__machine m;
  leir__prediction pr;
  leir__machine_host(&m);
  if (threads) m.threads = threads;
  leir__cost_predict(a, &m, &pr);
  *seconds = pr.seconds;
  leir__analysis_free(a);
  return LEIR_OK;
}
