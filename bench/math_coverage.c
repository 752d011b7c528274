/*
 * Coverage of the reference's math outputs (strategies 23-34) by libleir's
 * candidates, with every miss classified (docs/strategy-coverage.md, "Math
 * strategies"):
 *
 *   math_coverage [--verify all|none] [--failing FILE] [--list] SOURCES.jsonl STEPS.jsonl
 *
 * --failing FILE reads the REFBUG lines of an earlier `--verify all` run
 * ("REFBUG #N ...": N is the output's line in STEPS.jsonl) and counts those
 * outputs as failing verification without verifying anything again (the
 * verdicts depend on the reference's outputs only, not on libleir's
 * candidates): with `--verify none` it gives the `--verify all` table in
 * seconds.
 *
 * For each reference output of a math strategy: does it verify against its
 * `before` (interpreter, per-element tolerance), and does it ground
 * (leir_ground) to a candidate of the same strategy? The reference swaps
 * the directions of expand_log and logsimp (strategies-reference.md §7.0),
 * so its expand_log outputs are grounded against logsimp and the reverse.
 * A miss is classified:
 *   noop     after equals before modulo commutativity, associativity, signs
 *            of factors, number spelling, factors 1, the argument order
 *            of max/min and t+t for 2*t (exact in floating point): sympy
 *            reprinted the equation;
 *   other    after is a candidate of another libleir strategy (named; with
 *            --list, the changed equation too);
 *   not-ours the rewrite is none of libleir's candidates (listed with the
 *            changed equation under --list).
 * Columns: "steps" = verified - noop (a no-op changes the text only: it is
 * no step); "strict" = grounded / steps (the same strategy's candidate);
 * "one libleir step" = (grounded + another strategy) / steps (the output
 * is a candidate of some implemented libleir strategy: reachable in one
 * step); "strict, no-ops counted" = grounded / verified.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algebra.h"
#include "ir.h"
#include "sources.h"

enum { FIRST = 23, LAST = 34, N = LAST - FIRST + 1 };

typedef struct tally {
  size_t total, bad, failing, verified, hits, noop, other, notours;
} tally;

static void copy_signature(leir_program *to, const leir_program *from) {
  leir_tensor_decl d[64];
  size_t n = leir_program_signature_count(from);
  for (size_t k = 0; k < n && k < 64; k++) leir_program_signature_get(from, k, &d[k]);
  leir_program_set_signature(to, d, n < 64 ? n : 64);
}

static bool is_one(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e->kind == LEIR_EXPR_NUMBER && e->u.num->value == 1.0;
}

/* sympy's reprint undone, in place: numbers spelled canonically (%.17g of
 * their value), factors 1 dropped (1*x is x exactly), the arguments of a
 * two-argument max/min in a fixed order (by their AC hash) */
static void respell(leir_program *p, leir_expr **slot, unsigned depth) {
  leir_expr *e = *slot;
  if (depth > 400) return;
  if (e->kind == LEIR_EXPR_NUMBER) {
    char buf[40];
    int len = snprintf(buf, sizeof buf, "%.17g", e->u.num->value);
    leir_expr *n = leir__new_number(p, buf, (size_t)len);
    if (n) e->u.num = n->u.num;
    return;
  }
  if (e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_MUL && (is_one(e->kids[0]) || is_one(e->kids[1]))) {
    *slot = is_one(e->kids[0]) ? e->kids[1] : e->kids[0];
    respell(p, slot, depth + 1);
    return;
  }
  if (e->kind == LEIR_EXPR_TENSOR) return;
  for (uint32_t i = 0; i < e->n; i++) respell(p, &e->kids[i], depth + 1);
  /* t+t is 2*t exactly */
  if (e->kind == LEIR_EXPR_BINARY && e->op == LEIR_OP_ADD &&
      leir__ac_hash(p, e->kids[0]) == leir__ac_hash(p, e->kids[1])) {
    leir_expr *two = leir__new_int(p, 2), *m = two ? leir__new_binary(p, LEIR_OP_MUL, two, e->kids[0]) : NULL;
    if (m) *slot = m;
    return;
  }
  if (e->kind == LEIR_EXPR_CALL && (e->op == LEIR_OP_MAX || e->op == LEIR_OP_MIN) && e->n == 2 &&
      leir__ac_hash(p, e->kids[0]) > leir__ac_hash(p, e->kids[1])) {
    leir_expr *t = e->kids[0];
    e->kids[0] = e->kids[1];
    e->kids[1] = t;
  }
}

static bool nest_noop(leir_program *pb, const leir_nest *x, leir_program *pa, const leir_nest *y) {
  if (x->nloops != y->nloops || x->nitems != y->nitems) return false;
  for (uint32_t k = 0; k < x->nloops; k++)
    if (x->loops[k].kind != y->loops[k].kind || x->loops[k].extent != y->loops[k].extent)
      return false;
  for (uint32_t k = 0; k < x->nitems; k++) {
    if (x->items[k].nest && y->items[k].nest) {
      if (!nest_noop(pb, x->items[k].nest, pa, y->items[k].nest)) return false;
    } else if (x->items[k].eq && y->items[k].eq) {
      leir_equation *u = x->items[k].eq, *v = y->items[k].eq;
      respell(pb, &u->rhs, 0);
      respell(pa, &v->rhs, 0);
      if (!leir__expr_equal(pb, u->lhs, pa, v->lhs) ||
          leir__ac_hash(pb, u->rhs) != leir__ac_hash(pa, v->rhs))
        return false;
    } else {
      return false;
    }
  }
  return true;
}

/* equal modulo AC, signs of factors and number spelling (on clones) */
static bool is_noop(const leir_program *before, const leir_program *after) {
  if (before->nnests != after->nnests) return false;
  leir_program *b = NULL, *a = NULL;
  bool same = leir_program_clone(&b, before) == LEIR_OK && leir_program_clone(&a, after) == LEIR_OK;
  for (uint32_t i = 0; same && i < b->nnests; i++) same = nest_noop(b, b->nests[i], a, a->nests[i]);
  leir_program_free(b);
  leir_program_free(a);
  return same;
}

/* the first top-level nest of after that differs from before's (printed) */
static void print_change(const leir_program *before, const leir_program *after) {
  for (uint32_t i = 0; i < after->nnests; i++) {
    leir__strbuf x = LEIR__STRBUF_INIT, y = LEIR__STRBUF_INIT;
    if (i < before->nnests) leir__print_nest(&x, before, before->nests[i], NULL);
    leir__print_nest(&y, after, after->nests[i], NULL);
    bool same = x.len == y.len && x.len && memcmp(x.data, y.data, x.len) == 0;
    if (!same) printf("    %.*s\n -> %.*s\n", (int)x.len, x.data, (int)y.len, y.data);
    leir__sb_release(&x);
    leir__sb_release(&y);
    if (!same) return;
  }
}

int main(int argc, char **argv) {
  const char *src_path = NULL, *steps_path = NULL, *failing_path = NULL;
  bool verify = true, list = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--verify") == 0 && i + 1 < argc)
      verify = strcmp(argv[++i], "none") != 0;
    else if (strcmp(argv[i], "--failing") == 0 && i + 1 < argc)
      failing_path = argv[++i];
    else if (strcmp(argv[i], "--list") == 0)
      list = true;
    else if (!src_path)
      src_path = argv[i];
    else
      steps_path = argv[i];
  }
  if (!src_path || !steps_path) {
    fprintf(stderr, "usage: math_coverage [--verify all|none] [--failing FILE] [--list] "
                    "SOURCES.jsonl STEPS.jsonl\n");
    return 2;
  }
  /* line numbers (1-based) of STEPS.jsonl known to fail verification */
  unsigned char *known_bad = calloc(1u << 20, 1);
  if (!known_bad) return 1;
  if (failing_path) {
    FILE *ff = fopen(failing_path, "r");
    if (!ff) {
      fprintf(stderr, "%s: cannot open\n", failing_path);
      return 1;
    }
    char line[4096];
    unsigned long n;
    while (fgets(line, sizeof line, ff))
      if (sscanf(line, "REFBUG #%lu", &n) == 1 && n < (1u << 20)) known_bad[n] = 1;
    fclose(ff);
  }
  unsigned long lineno = 0;
  source *src;
  size_t nsrc = load_sources(src_path, &src);
  if (!nsrc) return 1;
  leir_backend *b = NULL;
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.timeout_s = 120;
  if (verify && leir_backend_open(&b, "interp", &bo) != LEIR_OK) {
    fprintf(stderr, "interp: %s\n", leir_error_last()->message);
    return 3;
  }
  tally t[N];
  memset(t, 0, sizeof t);
  jsonl_file *f = jsonl_open(steps_path);
  if (!f) return 1;
  const jsonl_value *j;
  while ((j = jsonl_next(f))) {
    lineno = (unsigned long)jsonl_line(f);
    const char *id = jsonl_str(jsonl_get(j, "id")), *st = jsonl_str(jsonl_get(j, "strategy"));
    const char *bf = jsonl_str(jsonl_get(j, "before")), *af = jsonl_str(jsonl_get(j, "after"));
    size_t s;
    if (!st || !af || leir_strategy_find(st, &s) != LEIR_OK || s < FIRST || s > LAST) continue;
    const source *so = find_source(src, nsrc, id);
    if (!so) continue;
    tally *ts = &t[s - FIRST];
    ts->total++;
    leir_program *before = NULL, *after = NULL;
    if ((bf && leir_program_parse(&before, bf, strlen(bf), NULL) != LEIR_OK) ||
        leir_program_parse(&after, af, strlen(af), NULL) != LEIR_OK) {
      ts->bad++;
      printf("MALFORMED %s %s\n", st, id);
      goto next;
    }
    if (!before) leir_program_clone(&before, so->program);
    copy_signature(before, so->program);
    copy_signature(after, before);
    if (leir_program_check(before, NULL, NULL) != LEIR_OK ||
        leir_program_check(after, NULL, NULL) != LEIR_OK) {
      ts->bad++;
      printf("INVALID %s %s %s\n", st, id, leir_error_last()->message);
      goto next;
    }
    if (known_bad[lineno < (1u << 20) ? lineno : 0]) {
      ts->failing++;
      printf("REFBUG #%lu %s %s (known)\n", lineno, st, id);
      goto next;
    }
    if (b) {
      leir_verify_report *r = NULL;
      bool passes = leir_verify(b, before, after, NULL, &r) == LEIR_OK &&
                    leir_verdict_passes(r->verdict);
      if (!passes) {
        ts->failing++;
        printf("REFBUG #%lu %s %s %s\n", lineno, st, id, r ? leir_verdict_name(r->verdict) : "error");
      }
      leir_verify_report_free(r);
      if (!passes) goto next;
    }
    ts->verified++;
    /* the reference's expand_log combines and its logsimp splits */
    size_t ours = s == 31 ? 32 : s == 32 ? 31 : s;
    leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
    o.strategy = (int32_t)ours;
    leir_candidates *hits = NULL;
    bool hit = leir_ground(&hits, before, after, &o) == LEIR_OK && leir_candidates_count(hits);
    leir_candidates_free(hits);
    if (hit) {
      ts->hits++;
      goto next;
    }
    if (is_noop(before, after)) {
      ts->noop++;
      if (list) printf("NOOP #%lu %s %s\n", lineno, st, id);
      goto next;
    }
    o.strategy = -1;
    hits = NULL;
    if (leir_ground(&hits, before, after, &o) == LEIR_OK && leir_candidates_count(hits)) {
      ts->other++;
      printf("OTHER #%lu %s %s: %s\n", lineno, st, id, leir_step_text(leir_candidates_step(hits, 0)));
      if (list) print_change(before, after);
    } else {
      ts->notours++;
      printf("MISS #%lu %s %s\n", lineno, st, id);
      if (list) print_change(before, after);
    }
    leir_candidates_free(hits);
  next:
    leir_program_free(before);
    leir_program_free(after);
    fflush(stdout);
  }
  jsonl_close(f);
  printf("\n| strategy | outputs | malformed/invalid | fail verification | verify | no-op | steps | "
         "grounded | another strategy | not ours | strict | one libleir step | strict, no-ops "
         "counted |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  tally all;
  memset(&all, 0, sizeof all);
  for (int k = 0; k <= N; k++) {
    const tally *x = k < N ? &t[k] : &all;
    if (!x->total) continue;
    size_t steps = x->verified - x->noop;
    const char *bo = k < N ? "" : "**";
    printf("| %s%s%s | %s%zu%s | %s%zu%s | %s%zu%s | %s%zu%s | %s%zu%s | %s%zu%s | %s%zu%s | %s%zu%s | "
           "%s%zu%s | %s%.1f%%%s | %s%.1f%%%s | %s%.1f%%%s |\n",
           bo, k < N ? leir_strategy_info_at((size_t)(FIRST + k))->name : "all", bo, bo, x->total,
           bo, bo, x->bad, bo, bo, x->failing, bo, bo, x->verified, bo, bo, x->noop, bo, bo, steps,
           bo, bo, x->hits, bo, bo, x->other, bo, bo, x->notours, bo, bo,
           steps ? 100.0 * (double)x->hits / (double)steps : 100.0, bo, bo,
           steps ? 100.0 * (double)(x->hits + x->other) / (double)steps : 100.0, bo, bo,
           x->verified ? 100.0 * (double)x->hits / (double)x->verified : 100.0, bo);
    if (k < N) {
      all.total += x->total, all.bad += x->bad, all.failing += x->failing;
      all.verified += x->verified, all.hits += x->hits, all.noop += x->noop;
      all.other += x->other, all.notours += x->notours;
    }
  }
  leir_backend_free(b);
  free(known_bad);
  free_sources(src, nsrc);
  return 0;
}
