/*
 * Coverage against the reference: for every reference output of an
 * implemented strategy in a steps-*.jsonl file, does it ground to one of
 * libleir's candidates (leir_ground, same strategy)? Reference outputs that
 * do not verify against their input (reference bugs) are counted apart,
 * and every miss is listed with its verdict.
 *
 *   strategy_coverage [--backend B] [--verify all|misses|none]
 *                     [--lenient-parallel] [--strategy S] SOURCES.jsonl STEPS.jsonl
 *
 * Output: one line per miss ("MISS <strategy> <id> <verdict> <after>"),
 * then a table per strategy: `coverage` counts what grounds (leir_ground,
 * with the split strategies' assumed candidates, LEIR_CANDIDATES_GENERIC_VALUES),
 * `proven` what grounds to a candidate libleir proposes by default
 * (leir_candidates_assumed is 0; "ASSUMED <strategy> <id> <after> <step>"
 * lines list the others). --verify all (default) verifies every output,
 * so the share counts only outputs that verify; `misses` verifies only the
 * outputs that do not ground (faster; grounded outputs equal a candidate).
 *
 * Reference outputs are judged by the rule libleir's own candidates must
 * pass (tests/test_strategy_verify.c): strict about P/V/B loops
 * (LEIR_VERIFY_STRICT_PARALLEL) unless the output's input already breaks
 * that rule. An output that binds a loop carrying a dependence (threads
 * racing on one element, which spec/leir.md 3.2 forbids) is INVALID, a
 * reference bug, not a verified output. --lenient-parallel runs such loops
 * sequentially instead, as the interpreter would, and counts them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEIR_EXPERIMENTAL
#include "sources.h"

#include <leir/experimental/candidates.h>

typedef struct tally {
  size_t total, malformed, invalid, failing, verified, hits, hits_failing, misses, unverified;
  size_t hits_proven; /* hits also among the proven candidates (leir_candidates_assumed) */
} tally;

typedef struct run_ctx {
  const source *src;
  size_t nsrc;
  leir_backend *b;
  bool verify_all;
  bool lenient_parallel;
  /* alpha hash of an input program -> whether it is legal under the strict rule */
  uint64_t legal_hash[8192];
  bool legal[8192];
  size_t nlegal;
  const char *only;
  tally t[LEIR_STRATEGY_COUNT];
} run_ctx;

static void copy_signature(leir_program *to, const leir_program *from) {
  leir_tensor_decl d[64];
  size_t n = leir_program_signature_count(from);
  for (size_t k = 0; k < n && k < 64; k++) leir_program_signature_get(from, k, &d[k]);
  leir_program_set_signature(to, d, n < 64 ? n : 64);
}

/* The verify options for outputs of `before`: strict about P/V/B loops
 * when `before` itself passes the strict rule (cached by alpha hash). */
static leir_verify_options options_for(run_ctx *rc, const leir_program *before) {
  leir_verify_options o = LEIR_VERIFY_OPTIONS_INIT;
  if (rc->lenient_parallel) return o;
  uint64_t h = leir_program_hash_alpha(before);
  for (size_t i = 0; i < rc->nlegal; i++)
    if (rc->legal_hash[i] == h) {
      if (rc->legal[i]) o.flags |= LEIR_VERIFY_STRICT_PARALLEL;
      return o;
    }
  o.flags |= LEIR_VERIFY_STRICT_PARALLEL;
  leir_verify_report *r = NULL;
  bool legal = leir_verify(rc->b, before, before, &o, &r) == LEIR_OK && r->verdict != LEIR_VERDICT_INVALID;
  leir_verify_report_free(r);
  if (!legal) o.flags &= ~LEIR_VERIFY_STRICT_PARALLEL;
  if (rc->nlegal < sizeof rc->legal / sizeof rc->legal[0]) {
    rc->legal_hash[rc->nlegal] = h;
    rc->legal[rc->nlegal++] = legal;
  }
  return o;
}

static void one_step(const jsonl_value *j, void *ud) {
  run_ctx *rc = ud;
  const char *id = jsonl_str(jsonl_get(j, "id")), *st = jsonl_str(jsonl_get(j, "strategy"));
  const char *bf = jsonl_str(jsonl_get(j, "before")), *af = jsonl_str(jsonl_get(j, "after"));
  size_t s;
  const source *so = find_source(rc->src, rc->nsrc, id);
  if (!st || !af || leir_strategy_find(st, &s) != LEIR_OK || !leir_strategy_info_at(s) ||
      !leir_strategy_info_at(s)->implemented || !so || (rc->only && strcmp(rc->only, st) != 0))
    return;
  tally *ts = &rc->t[s];
  ts->total++;
  leir_program *before = so->program, *own = NULL, *after = NULL;
  if (bf) {
    if (leir_program_parse(&own, bf, strlen(bf), NULL) == LEIR_OK) copy_signature(own, so->program);
    before = own;
  }
  if (!before || jsonl_bool(jsonl_get(j, "malformed"), false) || leir_program_parse(&after, af, strlen(af), NULL) != LEIR_OK) {
    ts->malformed++;
    printf("MALFORMED %s %s\n", st, id);
  } else if ((copy_signature(after, before), leir_program_check(after, NULL, NULL)) != LEIR_OK) {
    ts->invalid++;
    printf("INVALID %s %s %s [%s]\n", st, id, leir_error_last()->message, leir_error_last()->rule);
  } else {
    leir_candidates *hits = NULL;
    leir_candidates_options o = LEIR_CANDIDATES_OPTIONS_INIT;
    o.strategy = (int32_t)s;
    bool hit = leir_ground(&hits, before, after, &o) == LEIR_OK && leir_candidates_count(hits) > 0;
    leir_verdict v = LEIR_VERDICT_EQUAL;
    bool verified = false;
    if (rc->b && (rc->verify_all || !hit)) {
      leir_verify_report *r = NULL;
      leir_verify_options vo = options_for(rc, before);
      if (leir_verify(rc->b, before, after, &vo, &r) == LEIR_OK) {
        v = r->verdict;
        verified = v != LEIR_VERDICT_TIMEOUT;
      }
      leir_verify_report_free(r);
    }
    if (!verified && rc->b && (rc->verify_all || !hit)) {
      ts->unverified++;
      printf("UNVERIFIED %s %s %s\n", st, id, leir_verdict_name(v));
    }
    bool passes = !verified || leir_verdict_passes(v);
    if (!passes) ts->failing++;
    if (passes) ts->verified++;
    if (hit && passes) {
      ts->hits++;
      int proven = 0;
      for (size_t k = 0; k < leir_candidates_count(hits) && !proven; k++) {
        int assumed = 1;
        proven = leir_candidates_assumed(hits, k, &assumed) == LEIR_OK && !assumed;
      }
      if (proven) ts->hits_proven++;
      else
        printf("ASSUMED %s %s %s %s\n", st, id, af, leir_step_text(leir_candidates_step(hits, 0)));
    }
    if (hit && !passes) {
      ts->hits_failing++;
      printf("HIT-FAILING %s %s %s %s\n", st, id, leir_verdict_name(v),
             leir_step_text(leir_candidates_step(hits, 0)));
    }
    if (!hit) {
      if (passes) ts->misses++;
      printf("%s %s %s %s %s\n", passes ? "MISS" : "REFBUG", st, id,
             verified ? leir_verdict_name(v) : "unverified", af);
    }
    leir_candidates_free(hits);
  }
  leir_program_free(after);
  leir_program_free(own);
  fflush(stdout);
}

int main(int argc, char **argv) {
  const char *backend = "interp", *verify = "all", *only = NULL, *src_path = NULL,
             *steps_path = NULL;
  bool lenient = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc)
      backend = argv[++i];
    else if (strcmp(argv[i], "--verify") == 0 && i + 1 < argc)
      verify = argv[++i];
    else if (strcmp(argv[i], "--lenient-parallel") == 0)
      lenient = true;
    else if (strcmp(argv[i], "--strategy") == 0 && i + 1 < argc)
      only = argv[++i];
    else if (!src_path)
      src_path = argv[i];
    else
      steps_path = argv[i];
  }
  if (!src_path || !steps_path) {
    fprintf(stderr,
            "usage: strategy_coverage [--backend B] [--verify all|misses|none] [--lenient-parallel] [--strategy S] "
            "SOURCES.jsonl STEPS.jsonl\n");
    return 2;
  }
  bool verify_all = strcmp(verify, "all") == 0, verify_none = strcmp(verify, "none") == 0;
  source *src;
  size_t nsrc = load_sources(src_path, &src);
  if (!nsrc) return 1;
  leir_backend *b = NULL;
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.timeout_s = 120; /* the largest small-shape programs on a loaded interpreter */
  if (!verify_none && leir_backend_open(&b, backend, &bo) != LEIR_OK) {
    fprintf(stderr, "backend %s: %s\n", backend, leir_error_last()->message);
    return 3;
  }
  run_ctx rc;
  memset(&rc, 0, sizeof rc);
  rc.src = src;
  rc.nsrc = nsrc;
  rc.b = b;
  rc.verify_all = verify_all;
  rc.lenient_parallel = lenient;
  rc.only = only;
  jsonl_file *f = jsonl_open(steps_path);
  if (!f) return 1;
  const jsonl_value *line;
  while ((line = jsonl_next(f))) one_step(line, &rc);
  if (jsonl_error(f)) fprintf(stderr, "%s: %s\n", steps_path, jsonl_error(f));
  jsonl_close(f);
  tally *t = rc.t;
  printf("\n%-26s %6s %6s %6s %7s %8s %6s %6s %8s %8s\n", "strategy", "total", "malf", "invalid",
         "failing", "verifies", "hits", "misses", "coverage", "proven");
  tally all;
  memset(&all, 0, sizeof all);
  for (size_t s = 0; s < LEIR_STRATEGY_COUNT; s++) {
    if (!t[s].total) continue;
    leir_strategy_info info = *leir_strategy_info_at(s);
    printf("%-26s %6zu %6zu %6zu %7zu %8zu %6zu %6zu %7.1f%% %7.1f%%\n", info.name, t[s].total,
           t[s].malformed, t[s].invalid, t[s].failing, t[s].verified, t[s].hits, t[s].misses,
           t[s].verified ? 100.0 * (double)t[s].hits / (double)t[s].verified : 100.0,
           t[s].verified ? 100.0 * (double)t[s].hits_proven / (double)t[s].verified : 100.0);
    all.total += t[s].total;
    all.malformed += t[s].malformed;
    all.invalid += t[s].invalid;
    all.failing += t[s].failing;
    all.verified += t[s].verified;
    all.hits += t[s].hits;
    all.hits_proven += t[s].hits_proven;
    all.misses += t[s].misses;
    all.hits_failing += t[s].hits_failing;
    all.unverified += t[s].unverified;
  }
  printf("%-26s %6zu %6zu %6zu %7zu %8zu %6zu %6zu %7.1f%% %7.1f%%\n", "all", all.total,
         all.malformed, all.invalid, all.failing, all.verified, all.hits, all.misses,
         all.verified ? 100.0 * (double)all.hits / (double)all.verified : 100.0,
         all.verified ? 100.0 * (double)all.hits_proven / (double)all.verified : 100.0);
  printf("grounded outputs that fail verification: %zu; not verified (timeout): %zu (backend %s, "
         "verify %s)\n",
         all.hits_failing, all.unverified, backend, verify);
  leir_backend_free(b);
  free_sources(src, nsrc);
  return 0;
}
