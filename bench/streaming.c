/*
 * Softmax and attention before and after the streaming rewrites, on the CPU
 * backend: time, bytes moved, peak memory.
 *
 *   streaming [--quick] [--threads N]
 *
 * Softmax over rows of N = 1k, 4k, 16k, 64k elements (f32, 2^22 elements
 * in all, so R = 2^22 / N rows): the three-nest softmax (max, sum of exp,
 * normalize) against normal_loop_summation_on_exp_to_prefix_summation_on_exp
 * (two passes) and online_softmax (one nest per row, two passes over the
 * row). Attention with the scores given (f32, one head, sequence length
 * L = 256, 1024, 4096 (--quick: up to 1024), head dimension 64): softmax
 * then P.V against flashattention_wo_tiling. The rewritten programs are
 * produced by the strategies themselves (leir_step_apply) and verified
 * against the original first (reassociating: CLOSE or EQUAL).
 *
 * Figures per program:
 *  - time: leir_bench (alternating rounds, caches flushed, median);
 *  - bytes moved: every nest that holds equations (at any depth) streams
 *    each tensor its equations access once: sum over (nest, tensor) of the
 *    tensor's size. A model of compulsory traffic, not a measurement (a
 *    64k-element f32 row fits in L2, so hardware may do better);
 *  - peak memory: the sum of every buffer (inputs, outputs, intermediates),
 *    which the CPU backend all allocates for the whole run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "ir.h"
#include "leir/leir.h"

typedef struct figures {
  double mb_moved, mb_peak;
} figures;

static size_t dsize(uint8_t dt) { return leir_dtype_size((leir_dtype)dt); }

/* bytes moved and peak memory (see the header) */
static int measure(const leir_program *p, figures *f) {
  leir__analysis *a = NULL;
  if (leir__analyze_program(p, NULL, &a) != LEIR_OK) return -1;
  double peak = 0, moved = 0;
  for (uint32_t b = 0; b < a->nbuffers; b++)
    peak += (double)a->buffers[b].elements * (double)dsize(a->buffers[b].dtype);
  /* (innermost nest, buffer) pairs, counted once each */
  size_t cap = 1024, n = 0;
  struct pair {
    const leir_nest *nest;
    uint32_t buf;
  } *seen = malloc(cap * sizeof *seen);
  for (uint32_t e = 0; e < a->neqs && seen; e++) {
    const leir__eqinfo *q = &a->eqs[e];
    /* the buffers this equation accesses: its left side and every read */
    uint32_t bufs[64], nb = 0;
    bufs[nb++] = q->lhs_buffer;
    leir_expr *stack[256];
    uint32_t sp = 0;
    stack[sp++] = q->eq->rhs;
    while (sp) {
      leir_expr *x = stack[--sp];
      if (x->kind == LEIR_EXPR_TENSOR && x->id < a->nids && a->expr_buffer[x->id] != LEIR__NONE &&
          nb < 64)
        bufs[nb++] = a->expr_buffer[x->id];
      for (uint32_t k = 0; k < x->n && sp < 256; k++) stack[sp++] = x->kids[k];
    }
    for (uint32_t i = 0; i < nb; i++) {
      if (bufs[i] == LEIR__NONE) continue;
      bool dup = false;
      for (size_t j = 0; j < n && !dup; j++) dup = seen[j].nest == q->nest && seen[j].buf == bufs[i];
      if (dup) continue;
      if (n == cap) {
        struct pair *g = realloc(seen, 2 * cap * sizeof *seen);
        if (!g) break;
        seen = g;
        cap *= 2;
      }
      seen[n].nest = q->nest;
      seen[n++].buf = bufs[i];
      const leir__buffer *buf = &a->buffers[bufs[i]];
      moved += (double)buf->elements * (double)dsize(buf->dtype);
    }
  }
  free(seen);
  leir__analysis_free(a);
  f->mb_moved = moved / 1e6;
  f->mb_peak = peak / 1e6;
  return 0;
}

static leir_program *parse(const char *text, const char *sig) {
  leir_program *p = NULL;
  if (leir_program_parse(&p, text, strlen(text), NULL) != LEIR_OK) {
    fprintf(stderr, "parse: %s\n", leir_error_last()->message);
    exit(1);
  }
  (void)sig;
  if (leir_program_infer_signature(p) != LEIR_OK) {
    fprintf(stderr, "signature: %s\n", leir_error_last()->message);
    exit(1);
  }
  return p;
}

static leir_program *rewrite(const leir_program *p, const char *step_text) {
  leir_step *s = NULL;
  leir_program *q = NULL;
  if (leir_step_parse(&s, step_text, strlen(step_text)) != LEIR_OK ||
      leir_step_apply(&q, p, s, NULL) != LEIR_OK) {
    fprintf(stderr, "%s: %s\n", step_text, leir_error_last()->message);
    exit(1);
  }
  leir_step_free(s);
  return q;
}

static void verify(leir_backend *b, const leir_program *p, const leir_program *q, const char *what) {
  leir_verify_options o = LEIR_VERIFY_OPTIONS_INIT;
  o.candidate_class = LEIR_VERIFY_CLASS_REASSOCIATING;
  o.input_sets = 1;
  leir_verify_report *r = NULL;
  if (leir_verify(b, p, q, &o, &r) != LEIR_OK || !leir_verdict_passes(r->verdict)) {
    fprintf(stderr, "%s does not verify: %s\n", what, r ? r->message : leir_error_last()->message);
    exit(1);
  }
  leir_verify_report_free(r);
}

static void row(const char *name, const char *size, const leir_timing *t, const figures *f) {
  printf("%-10s %-18s %-44s %10.3f %8.2fx %10.1f %10.1f\n", "", size, name, t->median_s * 1e3,
         t->speedup, f->mb_moved, f->mb_peak);
}

static void run(leir_backend *b, const char *title, const char *size,
                leir_program *const *progs, const char *const *names, size_t n, uint32_t runs) {
  leir_bench_options o = LEIR_BENCH_OPTIONS_INIT;
  o.warmup = 1;
  o.min_runs = runs;
  o.max_runs = runs;
  o.min_seconds = 0;
  leir_timing t[4];
  if (leir_bench(b, (const leir_program *const *)progs, n, &o, t) != LEIR_OK) {
    fprintf(stderr, "bench: %s\n", leir_error_last()->message);
    exit(1);
  }
  printf("%s\n", title);
  for (size_t i = 0; i < n; i++) {
    figures f;
    if (measure(progs[i], &f) != 0) exit(1);
    row(names[i], size, &t[i], &f);
  }
}

int main(int argc, char **argv) {
  bool quick = false;
  uint32_t threads = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = true;
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = (uint32_t)atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: streaming [--quick] [--threads N]\n");
      return 2;
    }
  }
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.threads = threads;
  leir_backend *b = NULL;
  if (leir_backend_open(&b, "cpu", &bo) != LEIR_OK) {
    fprintf(stderr, "cpu backend: %s\n", leir_error_last()->message);
    return 3;
  }
  printf("%-10s %-18s %-44s %10s %9s %10s %10s\n", "", "size", "program", "median ms", "speedup",
         "MB moved", "MB peak");
  char text[4096];
  static const long softmax_n[] = {1024, 4096, 16384, 65536};
  for (size_t i = 0; i < 4; i++) {
    long n = softmax_n[i], r = (1L << 22) / n;
    snprintf(text, sizeof text,
             "L^{%ld}_{tx=0}L^{%ld}_{a=0}[D^{f32,g}_{tx}=max(D^{f32,g}_{tx},A^{f32,g}_{tx,a});];"
             "L^{%ld}_{tx=0}L^{%ld}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx});];"
             "L^{%ld}_{tx=0}L^{%ld}_{a=0}[C^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx})/E^{f32,g}_{tx};];",
             r, n, r, n, r, n);
    leir_program *p[3];
    p[0] = parse(text, NULL);
    p[1] = rewrite(p[0], "normal_loop_summation_on_exp_to_prefix_summation_on_exp nest=0");
    p[2] = rewrite(p[0], "online_softmax nest=0");
    verify(b, p[0], p[1], "prefix summation");
    verify(b, p[0], p[2], "online softmax");
    const char *names[3] = {"softmax, three nests", "#40 running max + rescaled sum",
                            "#41 online softmax (nested)"};
    char size[64];
    snprintf(size, sizeof size, "%ld x %ld", r, n);
    run(b, "softmax f32", size, p, names, 3, 5);
    for (int k = 0; k < 3; k++) leir_program_free(p[k]);
  }
  static const long seq[] = {256, 1024, 4096};
  for (size_t i = 0; i < (quick ? 2u : 3u); i++) {
    long l = seq[i], d = 64;
    snprintf(text, sizeof text,
             "L^{%ld}_{tx=0}L^{%ld}_{a=0}[D^{f32,g}_{tx}=max(D^{f32,g}_{tx},A^{f32,g}_{tx,a});];"
             "L^{%ld}_{tx=0}L^{%ld}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx});];"
             "L^{%ld}_{tx=0}L^{%ld}_{a=0}[F^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx})/E^{f32,g}_{tx};];"
             "L^{%ld}_{tx=0}L^{%ld}_{a=0}L^{%ld}_{c=0}[G^{f32,g}_{tx,a}=G^{f32,g}_{tx,a}+F^{f32,g}_{tx,c}*C^{f32,g}_{c,a};];",
             l, l, l, l, l, l, l, d, l);
    leir_program *p[2];
    p[0] = parse(text, NULL);
    p[1] = rewrite(p[0], "flashattention_wo_tiling nest=0");
    verify(b, p[0], p[1], "flash attention");
    const char *names[2] = {"softmax + P.V, P stored", "#42 flash attention w/o tiling"};
    char size[64];
    snprintf(size, sizeof size, "L=%ld d=%ld", l, d);
    run(b, "attention f32", size, p, names, 2, l >= 4096 ? 2 : 3);
    for (int k = 0; k < 2; k++) leir_program_free(p[k]);
  }
  leir_backend_free(b);
  return 0;
}
