/* leir_search_run: the options, the source node, the algorithm of
 * algorithms.def, the final comparison and the result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#include "backend.h"
#include "error.h"
#include "options.h"
#include "strbuf.h"

struct leir_search_result {
  leir_search_record *records;
  size_t nrecords;
  leir_program *best;
  char *best_steps;
  leir_search_summary summary;
};

/* ---- running ------------------------------------------------------------------ */

static void ctx_free(search_ctx *ctx) {
  for (size_t i = 0; i < ctx->nnodes; i++) leir__search_node_release(&ctx->nodes[i]);
  free(ctx->nodes);
  leir__hashset_release(&ctx->seen);
  if (ctx->records)
    for (size_t i = 0; i < ctx->nrecords; i++) leir__search_record_free_strings(&ctx->records[i]);
  free(ctx->records);
  leir_verifier_free(ctx->verifier);
  leir__search_db_pending_free(ctx);
}

static char *best_steps(search_ctx *ctx) {
  int path[4096];
  int np = 0;
  for (int i = ctx->best; i > 0 && np < 4096; i = ctx->nodes[i].parent) path[np++] = i;
  leir__strbuf b = {0};
  leir__sb_putc(&b, 0);
  b.len = 0;
  for (int j = np - 1; j >= 0; j--) {
    leir__sb_puts(&b, ctx->nodes[path[j]].step);
    leir__sb_putc(&b, '\n');
  }
  return leir__sb_finish(&b, NULL);
}

leir_status leir_search_run(leir_search_result **out, leir_backend *backend,
                            const leir_program *program, const leir_search_options *opts) {
  if (!out) return leir__error_arg("out", "out is NULL");
  *out = NULL;
  if (!program) return leir__error_arg("program", "the program is NULL");
  search_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  leir_status st = LEIR__OPTIONS_READ(leir_search_options, &ctx.o, opts, LEIR_SEARCH_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  if ((unsigned)ctx.o.algorithm >= leir__search_algorithm_count)
    return leir__error_arg("algorithm", "unknown search algorithm %d", (int)ctx.o.algorithm);
  if (!ctx.o.propose && (unsigned)ctx.o.policy >= leir__search_policy_count)
    return leir__error_arg("policy", "unknown policy %d", (int)ctx.o.policy);
  if (!backend && !ctx.o.measure)
    return leir__error_arg("backend", "a search needs a backend or a measure callback");
  if (ctx.o.width == 0) ctx.o.width = 1;
  if (ctx.o.branching == 0) ctx.o.branching = 1;
  if ((st = LEIR__OPTIONS_READ(leir_compare_options, &ctx.cmp, ctx.o.compare,
                               LEIR_COMPARE_OPTIONS_INIT)) != LEIR_OK ||
      (st = LEIR__OPTIONS_READ(leir_verifier_options, &ctx.vopts, ctx.o.verifier,
                               LEIR_VERIFIER_OPTIONS_INIT)) != LEIR_OK ||
      (st = LEIR__OPTIONS_READ(leir_candidates_options, &ctx.copts, ctx.o.candidates,
                               LEIR_CANDIDATES_OPTIONS_INIT)) != LEIR_OK)
    return st;
  ctx.start = leir__now();
  ctx.rng = ctx.o.seed ^ 0x5EA4C4ull;
  ctx.backend = backend;
  if (ctx.o.measure)
    snprintf(ctx.backend_name, sizeof ctx.backend_name, "callback");
  else
    leir__backend_key(backend, ctx.backend_name, sizeof ctx.backend_name);
  if (ctx.o.machine)
    snprintf(ctx.machine, sizeof ctx.machine, "%s", ctx.o.machine);
  else
    leir_search_machine_fingerprint(0, ctx.machine, sizeof ctx.machine);
  leir_search_protocol(&ctx.cmp, &ctx.vopts, ctx.protocol, sizeof ctx.protocol);

  leir_program *root = NULL;
  st = leir_program_clone(&root, program);
  if (st != LEIR_OK) return st;
  if (leir_program_signature_count(root) == 0 && (st = leir_program_infer_signature(root)) != LEIR_OK) {
    leir_program_free(root);
    return st;
  }
  leir_diagnostics *diags = NULL;
  st = leir_program_check(root, NULL, &diags);
  leir_diagnostics_free(diags);
  if (st != LEIR_OK) {
    leir_program_free(root);
    return st;
  }
  uint64_t rh = leir_program_hash_alpha(root);
  if (leir__search_node_add(&ctx, root, rh, -1, "", 1.0, 0.0, LEIR_VERIFY_CLASS_ANY) != 0 ||
      !leir__search_table_add(&ctx, rh)) {
    if (!ctx.nnodes) leir_program_free(root);
    ctx_free(&ctx);
    return leir__error_nomem();
  }
  if (!ctx.o.measure) {
    st = leir_verifier_new(&ctx.verifier, backend, root, &ctx.vopts);
    if (st != LEIR_OK) {
      ctx_free(&ctx);
      return st;
    }
  }

  double setup_s = leir__now() - ctx.start;
  leir__search_algorithms[ctx.o.algorithm].run(&ctx);
  if (ctx.fatal != LEIR_OK) {
    st = ctx.fatal;
    leir__error_state es;
    leir__error_save(&es);
    ctx_free(&ctx);
    leir__error_restore(&es);
    return st;
  }

  leir__search_db_retry(&ctx);
  leir_search_result *res = calloc(1, sizeof *res);
  if (!res) {
    ctx_free(&ctx);
    return leir__error_nomem();
  }
  leir_search_summary *s = &res->summary;
  s->size = sizeof *s;
  s->samples = ctx.samples;
  s->measured = ctx.measured;
  s->reused = ctx.reused;
  s->accepted = ctx.accepted;
  s->rejected = ctx.rejected;
  s->best_depth = ctx.nodes[ctx.best].depth;
  s->best_speedup = ctx.nodes[ctx.best].speedup;
  s->final_speedup = s->final_lo = s->final_hi = s->best_speedup;
  s->stopped_by = ctx.stopped_by;
  s->lookaheads = ctx.lookaheads;
  s->lookahead_evals = ctx.lookahead_evals;
  s->db_unsaved = ctx.db_unsaved;
  s->db_saved_late = ctx.db_saved_late;
  s->setup_s = setup_s;
  for (size_t i = 0; i < ctx.nrecords; i++) {
    const leir_search_record *r = &ctx.records[i];
    s->compile_s += r->compile_s;
    s->verify_s += r->verify_s;
    s->time_s += r->time_s;
  }
  /* sample efficiency: the first sample whose best-so-far reached 95% of
   * the run's best (the records' best_speedup is the path product, like
   * best_speedup here) */
  if (ctx.best != 0)
    for (size_t i = 0; i < ctx.nrecords; i++)
      if (ctx.records[i].best_speedup >= 0.95 * s->best_speedup) {
        s->samples_to_95 = ctx.records[i].sample;
        s->seconds_to_95 = ctx.records[i].elapsed_s;
        break;
      }
  if (ctx.best != 0 && !ctx.o.measure && !(ctx.o.flags & LEIR_SEARCH_NO_FINAL_COMPARE) &&
      ctx.stopped_by != 3) {
    search_node *b = &ctx.nodes[ctx.best], *r0 = &ctx.nodes[0];
    leir_comparison c;
    memset(&c, 0, sizeof c);
    c.size = sizeof c;
    double t0 = leir__now();
    if (leir__search_node_kernel(&ctx, b) == LEIR_OK &&
        leir__search_node_kernel(&ctx, r0) == LEIR_OK &&
        leir_kernels_compare(b->kernel, r0->kernel, &ctx.cmp, &c) == LEIR_OK) {
      s->final_speedup = c.ratio;
      s->final_lo = c.ratio_lo;
      s->final_hi = c.ratio_hi;
      s->source_median_s = c.b.median_s;
      s->best_median_s = c.a.median_s;
    }
    s->final_compare_s = leir__now() - t0;
  }
  s->seconds = leir__now() - ctx.start;
  res->records = ctx.records;
  res->nrecords = ctx.nrecords;
  ctx.records = NULL;
  res->best = ctx.nodes[ctx.best].program;
  ctx.nodes[ctx.best].program = NULL;
  res->best_steps = best_steps(&ctx);
  ctx_free(&ctx);
  if (!res->best_steps) {
    leir_search_result_free(res);
    return leir__error_nomem();
  }
  *out = res;
  if (s->stopped_by == 3)
    return leir__error(LEIR_ERR_CANCELLED, "search.cancelled", NULL, 0, 0,
                       "the search was cancelled after %u samples", s->samples);
  return LEIR_OK;
}

void leir_search_result_free(leir_search_result *r) {
  if (!r) return;
  for (size_t i = 0; i < r->nrecords; i++) leir__search_record_free_strings(&r->records[i]);
  free(r->records);
  leir_program_free(r->best);
  free(r->best_steps);
  free(r);
}

size_t leir_search_result_record_count(const leir_search_result *r) { return r ? r->nrecords : 0; }

const leir_search_record *leir_search_result_record(const leir_search_result *r, size_t i) {
  return r && i < r->nrecords ? &r->records[i] : NULL;
}

leir_status leir_search_result_summary(const leir_search_result *r, leir_search_summary *out) {
  if (!r || !out) return leir__error_arg("result", "result or out is NULL");
  return leir__struct_write(out, &r->summary, sizeof r->summary, "leir_search_summary");
}

const leir_program *leir_search_result_best(const leir_search_result *r) {
  return r ? r->best : NULL;
}

leir_status leir_search_result_best_steps(const leir_search_result *r, char **out,
                                          size_t *out_len) {
  if (!r || !out) return leir__error_arg("result", "result or out is NULL");
  *out = strdup(r->best_steps);
  if (!*out) return leir__error_nomem();
  if (out_len) *out_len = strlen(*out);
  return LEIR_OK;
}
