/* Buffer sizes, and the FLOP and byte counts of a program (verification.md
 * §4); see cost.h. */
#define LEIR_EXPERIMENTAL
#include "cost.h"

#include "leir/experimental/cost.h"

#include <math.h>
#include <unistd.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "visit.h"

uint64_t leir__buffer_bytes(const leir__buffer *buf) {
  uint64_t n;
  if (__builtin_mul_overflow(buf->elements, (uint64_t)leir_dtype_size((leir_dtype)buf->dtype), &n))
    return UINT64_MAX;
  return n;
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

static uint64_t sat_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* Operations of one evaluation of a value expression (see run.h). Index
 * subscripts are address arithmetic and do not count. */
static uint64_t ops_of(const leir_expr *e) {
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_PAREN: return ops_of(e->kids[0]);
    case LEIR_EXPR_NEG: return 1 + ops_of(e->kids[0]);
    case LEIR_EXPR_BINARY: return 1 + ops_of(e->kids[0]) + ops_of(e->kids[1]);
    case LEIR_EXPR_COMPARE: {
      uint64_t n = e->n ? e->n - 1 : 0;
      for (uint32_t k = 0; k < e->n; k++) n += ops_of(e->kids[k]);
      return n;
    }
    case LEIR_EXPR_AND:
    case LEIR_EXPR_OR: return ops_of(e->kids[0]) + ops_of(e->kids[1]);
    case LEIR_EXPR_CALL: {
      if (e->op == LEIR_OP_IF_THEN_ELSE && e->n == 3) {
        uint64_t t = ops_of(e->kids[1]), f = ops_of(e->kids[2]);
        return ops_of(e->kids[0]) + (t > f ? t : f);
      }
      uint64_t n = (e->op == LEIR_OP_MAX || e->op == LEIR_OP_MIN) ? (e->n ? e->n - 1 : 0) : 1;
      for (uint32_t k = 0; k < e->n; k++) n += ops_of(e->kids[k]);
      return n;
    }
    default: return 0; /* numbers, variables, tensor reads */
  }
}

leir_status leir__program_cost(const leir__analysis *a, leir_program_cost *out) {
  memset(out, 0, sizeof *out);
  for (uint32_t i = 0; i < a->neqs; i++) {
    const leir__eqinfo *info = &a->eqs[i];
    out->evaluations = sat_add(out->evaluations, info->evaluations);
    out->flops = sat_add(out->flops, sat_mul(ops_of(info->eq->rhs), info->evaluations));
  }
  for (uint32_t b = 0; b < a->nbuffers; b++)
    if (a->buffers[b].role != LEIR__BUF_TEMP)
      out->bytes = sat_add(out->bytes, leir__buffer_bytes(&a->buffers[b]));
  return LEIR_OK;
}

leir_status leir_program_cost_get(const leir_program *p, leir_program_cost *out) {
  if (!p || !out) return leir__error_arg(NULL, "NULL argument");
  memset(out, 0, sizeof *out);
  leir__analysis *a = NULL;
  leir_status st = leir__analyze_program(p, NULL, &a);
  if (st != LEIR_OK) return st;
  st = leir__program_cost(a, out);
  leir__analysis_free(a);
  return st;
}

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
  m->fill_bpc[2] = 8;
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
}

/* Weighted operations of one evaluation: ops_of, with divisions as 4.
 * In a float equation (f32, f16, bf16: computed in float) exp and log are
 * libleir's own leir_exp_f32 / leir_log_f32 (backends/leir_math.h),
 * branch-free C that the compiler vectorizes with the loop: they count as
 * EXP_OPS / LOG_OPS operations, vectorized like the rest (log evaluates in
 * double, two vectors of doubles per vector of floats, hence twice exp).
 * Other calls of libm (exp and log in double, sqrt, erf) go to *calls
 * instead: they stay scalar (the C backend calls the C99 functions; no
 * vector variants without -ffast-math). */
#define EXP_OPS 24
#define LOG_OPS 48
static double wops_of(const leir_expr *e, bool f32, double *calls) {
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
      else if (f32 && e->op == LEIR_OP_EXP)
        n = EXP_OPS;
      else if (f32 && e->op == LEIR_OP_LOG)
        n = LOG_OPS;
      else
        *calls += 1;
      break;
    case LEIR_EXPR_TENSOR: return 0; /* subscripts are address arithmetic */
    default: break;
  }
  for (uint32_t k = 0; k < e->n; k++) n += wops_of(e->kids[k], f32, calls);
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
  x.esize = (uint32_t)leir_dtype_size((leir_dtype)g->a->buffers[x.buf].dtype);
  x.lhs = lhs;
  x.affine = cm_flat(g->a, t, &x);
  for (uint32_t k = 0; k < t->n; k++) leir__used_depths(g->a, t->kids[k], x.used);
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

/* Distinct cache lines access x touches over loops p..n-1 (the others fixed). */
static double cm_lines(const cm_group *g, const cm_access *x, uint32_t p) {
  double lines = 1, line = g->m->line;
  int64_t smin = INT64_MAX;
  uint32_t jm = LEIR__NONE;
  for (uint32_t j = p; j < g->n; j++) {
    if (!cm_depends(x, j)) continue;
    int64_t s = x->affine ? (x->coef[j] < 0 ? -x->coef[j] : x->coef[j]) : INT64_MAX;
    if (jm == LEIR__NONE || s < smin) smin = s, jm = j;
  }
  for (uint32_t j = p; j < g->n; j++) {
    if (!cm_depends(x, j)) continue;
    double ext = (double)g->loops[j]->extent;
    if (j == jm && x->affine && (double)smin * x->esize < line)
      lines *= ceil(((ext - 1) * (double)smin + 1) * x->esize / line);
    else
      lines *= ext;
  }
  return lines;
}

/* Lines all accesses touch over loops p..n-1. */
static double cm_footprint(const cm_group *g, uint32_t p) {
  double f = 0;
  for (uint32_t i = 0; i < g->nacc; i++) f += cm_lines(g, &g->acc[i], p);
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

/* The longest loop gcc unrolls completely by itself (its
 * max-completely-peel-times, 16): a plain loop of constant extent inside
 * the omp simd body that long or shorter behaves as a U loop. */
#define CM_PEELED_EXTENT 16

/* Whether the C backend keeps x's tile in registers: an affine accumulator
 * under a plain reduction loop with only U loops and the omp simd loop
 * inside (lower_c.c's scalar replacement). Not inside an omp simd loop
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
  double evals = 0, ops = 0, calls = 0;
  for (uint32_t i = first; i <= last; i++) {
    evals = (double)a->eqs[i].evaluations; /* the same for the whole group */
    leir_dtype dt = (leir_dtype)a->eqs[i].eq->lhs->dtype;
    bool f32 = dt == LEIR_F32 || dt == LEIR_F16 || dt == LEIR_BF16; /* the backend's float type */
    ops += wops_of(a->eqs[i].eq->rhs, f32, &calls);
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
  double loads = 0, stores = 0;
  for (uint32_t i = 0; i < g->nacc; i++) {
    const cm_access *x = &g->acc[i];
    bool varies = n > 0 && cm_depends(x, n - 1);
    if (x->lhs) {
      if (varies && !cm_in_registers(g, x)) stores += 1, loads += 1;
    } else if (varies) {
      loads += 1;
    }
  }
  double arith = ops / (lanes * m->fma_ports * 2) + calls * m->call_cycles;
  double ports = (loads / 2 + stores) / lanes;
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
    if (chains > 64) chains = 64;
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
    double bw = m->fill_bpc[c] * m->ghz * 1e9 * (c < 2 ? teff : 1);
    if (bytes / bw > mem) mem = bytes / bw;
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
  out->seconds += (compute > mem ? compute : mem) + fj;
}

void leir__cost_predict(const leir__analysis *a, const leir__machine *m, leir__prediction *out) {
  memset(out, 0, sizeof *out);
  cm_group *g = malloc(sizeof *g);
  if (!g) return;
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
    g->n = a->eqs[i].nloops < LEIR__MAX_LOOPS ? a->eqs[i].nloops : LEIR__MAX_LOOPS;
    g->loops = a->eqs[i].loops;
    for (uint32_t e = i; e <= last; e++) {
      cm_add(g, a->eqs[e].eq->lhs, true);
      cm_collect(g, a->eqs[e].eq->rhs);
      if (a->eqs[e].init != LEIR__INIT_NONE) {
        /* the implicit initialization writes the accumulator once */
        const leir__buffer *b = &a->buffers[a->eqs[e].lhs_buffer];
        double t = (double)leir__buffer_bytes(b) / (m->fill_bpc[2] * m->ghz * 1e9);
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
