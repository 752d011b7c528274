/* One proposal through the pipeline: resolve, the transposition table, the
 * measurement database or verification and timing, acceptance as a node,
 * and its record of the trajectory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#include "bench.h"
#include "error.h"

/* ---- records ------------------------------------------------------------------ */

static char *program_text(const leir_program *p) {
  char *t = NULL;
  size_t n = 0;
  if (!p || leir_program_print(p, 0, &t, &n) != LEIR_OK) return dup_str("");
  return t;
}

void leir__search_record_emit(search_ctx *ctx, leir_search_record *r) {
  r->best_speedup = ctx->nodes[ctx->best].speedup;
  r->elapsed_s = leir__now() - ctx->start;
  if (ctx->nrecords == ctx->caprecords) {
    size_t ncap = ctx->caprecords ? ctx->caprecords * 2 : 64;
    leir_search_record *nr = realloc(ctx->records, ncap * sizeof *nr);
    if (!nr) {
      ctx->fatal = leir__error_nomem();
      return;
    }
    ctx->records = nr;
    ctx->caprecords = ncap;
  }
  r->sample = (uint32_t)ctx->nrecords + 1;
  ctx->records[ctx->nrecords++] = *r;
  if (ctx->o.on_record && ctx->o.on_record(ctx->o.record_payload, r) != 0 && !ctx->stopped_by)
    ctx->stopped_by = 3;
}

void leir__search_record_free_strings(leir_search_record *r) {
  free((char *)r->step);
  free((char *)r->strategy);
  free((char *)r->cot);
  free((char *)r->program);
  free((char *)r->reason);
  free((char *)r->proposed);
  free((char *)r->raw);
}

/* ---- measuring ---------------------------------------------------------------- */

static void mismatch_reason(const leir_verify_report *rep, char *buf, size_t cap) {
  if (rep->verdict == LEIR_VERDICT_MISMATCH && rep->output && *rep->output) {
    char coords[160] = "";
    size_t o = 0;
    for (uint32_t i = 0; i < rep->rank && o + 24 < sizeof coords; i++)
      o += (size_t)snprintf(coords + o, sizeof coords - o, "%s%lld", i ? "," : "",
                            (long long)rep->coords[i]);
    snprintf(buf, cap, "not numerically equivalent: %s[%s] is %.9g, expected %.9g (input set %d)",
             rep->output, coords, rep->actual, rep->expected, rep->set);
  } else if (rep->verdict == LEIR_VERDICT_INVALID && rep->line) {
    snprintf(buf, cap, "invalid at %u:%u: %s", rep->line, rep->column, rep->message);
  } else {
    snprintf(buf, cap, "%s: %s", leir_verdict_name(rep->verdict), rep->message);
  }
}

/* Verifies `cand` against the source and times it against its parent;
 * the seconds of each phase go to r->compile_s, verify_s and time_s.
 *
 * The kernel is built first, so that its cost is seen apart from the
 * verifier's: the verifier's own build of the same lowered code then
 * finds the object in the backend's cache (one compiler run per
 * candidate either way). A candidate whose kernel cannot be built still
 * goes to the verifier, whose verdict says why. */
static leir_status measure_real(search_ctx *ctx, search_node *parent, const leir_program *cand,
                                uint32_t klass, leir_search_measurement *m, leir_kernel **kout,
                                leir_search_record *r) {
  double t0 = leir__now();
  leir_kernel *k = NULL;
  leir_status kst = leir__search_node_kernel(ctx, parent);
  if (kst == LEIR_OK) kst = leir_kernel_new(&k, ctx->backend, cand);
  char kerr[200] = "";
  if (kst != LEIR_OK) snprintf(kerr, sizeof kerr, "%s", leir_error_last()->message);
  double t1 = leir__now();
  r->compile_s = t1 - t0;
  leir_verify_report *rep = NULL;
  leir_status st = leir_verifier_judge(ctx->verifier, cand, klass, &rep);
  r->verify_s = leir__now() - t1;
  if (st != LEIR_OK) {
    leir_kernel_free(k);
    return st;
  }
  m->verdict = rep->verdict;
  mismatch_reason(rep, m->message, sizeof m->message);
  leir_verify_report_free(rep);
  m->order = LEIR_ORDER_UNDECIDED;
  if (!leir_verdict_passes(m->verdict)) {
    leir_kernel_free(k);
    return LEIR_OK;
  }
  if (kst != LEIR_OK) {
    /* verified but cannot be timed: not accepted, with the reason */
    snprintf(m->message, sizeof m->message, "verified, but timing failed: %s", kerr);
    leir_kernel_free(k);
    return LEIR_OK;
  }
  leir_comparison c;
  memset(&c, 0, sizeof c);
  c.size = sizeof c;
  double t2 = leir__now();
  /* the search accepts FASTER only: the comparison ends once the candidate
   * is shown not faster (backends/bench.h) */
  st = leir__kernels_compare_ex(k, parent->kernel, &ctx->cmp, true, &c);
  r->time_s = leir__now() - t2;
  if (st != LEIR_OK) {
    snprintf(m->message, sizeof m->message, "verified, but timing failed: %s",
             leir_error_last()->message);
    leir_kernel_free(k);
    return LEIR_OK;
  }
  m->order = c.order;
  m->ratio = c.ratio;
  m->ratio_lo = c.ratio_lo;
  m->ratio_hi = c.ratio_hi;
  m->median_s = c.a.median_s;
  m->q1_s = c.a.q1_s;
  m->q3_s = c.a.q3_s;
  m->parent_median_s = c.b.median_s;
  m->rounds = c.rounds;
  *kout = k;
  return LEIR_OK;
}

static void row_from(search_ctx *ctx, leir_db_row *row, uint64_t h, uint64_t base) {
  memset(row, 0, sizeof *row);
  row->size = sizeof *row;
  row->program_hash = h;
  row->baseline_hash = base;
  row->root_hash = ctx->nodes[0].hash;
  row->backend = ctx->backend_name;
  row->machine = ctx->machine;
  row->protocol = ctx->protocol;
}

/* Evaluates one proposal at node `nid`; returns the new node id or -1. */
int leir__search_evaluate(search_ctx *ctx, int nid, const proposal *p, const char *raw) {
  search_node *n = &ctx->nodes[nid];
  leir_search_record r;
  memset(&r, 0, sizeof r);
  r.size = sizeof r;
  r.node = -1;
  r.parent = nid;
  r.depth = n->depth + 1;
  char reason[512] = "";
  char *step = NULL;
  leir_exactness ex = LEIR_EXACT;
  leir_search_reject rj = LEIR_REJECT_NONE;
  leir_program *cand = leir__search_resolve(ctx, n, p, &step, &ex, &rj, reason, sizeof reason);
  n = &ctx->nodes[nid];
  uint64_t h = cand ? leir_program_hash_alpha(cand) : 0;
  if (cand && h == n->hash) {
    rj = LEIR_REJECT_SAME;
    snprintf(reason, sizeof reason, "the same program as the current one (up to fresh names)");
  } else if (cand && leir__search_seen(ctx, h)) {
    rj = LEIR_REJECT_SEEN;
    snprintf(reason, sizeof reason, "a program seen before in this search");
  }
  r.step = dup_str(step);
  r.program = p->kind == 2 && !cand ? dup_str(p->text) : program_text(cand);
  /* the proposal as the policy gave it, so that a rejected one still shows
   * what was asked for: a candidate by its step text, else the text */
  if (p->kind == 0) {
    const leir_step *cs = n->cands && p->index < leir_candidates_count(n->cands)
                              ? leir_candidates_step(n->cands, p->index)
                              : NULL;
    r.proposed = dup_str(cs ? leir_step_text(cs) : "");
  } else {
    r.proposed = dup_str(p->text);
  }
  r.raw = dup_str(raw);
  r.hash = h;
  if (step) {
    leir_step *s = NULL;
    if (leir_step_parse(&s, step, strlen(step)) == LEIR_OK) {
      const leir_strategy_info *info = leir_strategy_info_at(leir_step_strategy(s));
      r.strategy = dup_str(info ? info->name : "");
      if (!p->cot) {
        char *c = NULL;
        size_t cl = 0;
        if (leir_step_cot(&c, &cl, n->program, s) == LEIR_OK) r.cot = c;
      }
      leir_step_free(s);
    }
  }
  if (step && (p->kind == 4 || p->kind == 5) && !r.strategy) {
    /* a macro-step: the strategies of its steps, joined by '+' */
    char names[512] = "";
    const char *part = step;
    for (int i = 0; part; i++) {
      const char *sep = strstr(part, " ; ");
      size_t len = sep ? (size_t)(sep - part) : strlen(part);
      leir_step *s = NULL;
      if (leir_step_parse(&s, part, len) == LEIR_OK) {
        const leir_strategy_info *info = leir_strategy_info_at(leir_step_strategy(s));
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", i ? "+" : "",
                 info ? info->name : "?");
        leir_step_free(s);
      }
      part = sep ? sep + 3 : NULL;
    }
    r.strategy = dup_str(names);
  }
  if (!r.strategy) r.strategy = dup_str(p->kind == 3 ? "" : p->strategy);
  if (!r.cot) r.cot = dup_str(p->cot);
  int made = -1;
  if (cand && rj == LEIR_REJECT_NONE) {
    if (!leir__search_table_add(ctx, h)) {
      ctx->fatal = leir__error_nomem();
      leir_program_free(cand);
      free(step);
      leir__search_record_free_strings(&r);
      return -1;
    }
    uint32_t klass = n->klass;
    uint32_t sk = ex == LEIR_REASSOCIATING ? LEIR_VERIFY_CLASS_REASSOCIATING
                                           : LEIR_VERIFY_CLASS_EXACT;
    if (sk > klass) klass = sk;
    leir_search_measurement m;
    memset(&m, 0, sizeof m);
    m.size = sizeof m;
    leir_kernel *k = NULL;
    leir_db_row key, row;
    row_from(ctx, &key, h, n->hash);
    memset(&row, 0, sizeof row);
    row.size = sizeof row;
    leir_status st = LEIR_ERR_NOT_FOUND;
    if (ctx->o.db && !ctx->db_down) st = leir_db_get(ctx->o.db, &key, &row);
    if (st != LEIR_OK && st != LEIR_ERR_NOT_FOUND && st != LEIR_ERR_NOMEM && st != LEIR_ERR_ARGUMENT)
      st = LEIR_ERR_NOT_FOUND; /* unreadable now: measured afresh */
    if (st == LEIR_OK) {
      r.cached = 1;
      m.verdict = row.verdict;
      m.order = row.order;
      m.ratio = row.ratio;
      m.ratio_lo = row.ratio_lo;
      m.ratio_hi = row.ratio_hi;
      m.median_s = row.median_s;
      m.q1_s = row.q1_s;
      m.q3_s = row.q3_s;
      m.parent_median_s = row.baseline_median_s;
      m.rounds = row.rounds;
      snprintf(m.message, sizeof m.message, "%s", row.message);
      ctx->reused++;
    } else if (st != LEIR_ERR_NOT_FOUND) {
      ctx->fatal = st;
    } else {
      if (ctx->o.measure)
        st = ctx->o.measure(ctx->o.measure_payload, ctx->nodes[0].program, n->program, cand,
                            klass, &m);
      else
        st = measure_real(ctx, n, cand, klass, &m, &k, &r);
      n = &ctx->nodes[nid];
      if (st != LEIR_OK) {
        ctx->fatal = st;
      } else {
        ctx->measured++;
        if (ctx->o.db) {
          key.verdict = m.verdict;
          key.order = m.order;
          key.ratio = m.ratio;
          key.ratio_lo = m.ratio_lo;
          key.ratio_hi = m.ratio_hi;
          key.median_s = m.median_s;
          key.q1_s = m.q1_s;
          key.q3_s = m.q3_s;
          key.baseline_median_s = m.parent_median_s;
          key.rounds = m.rounds;
          key.step = step;
          key.program = r.program;
          key.message = m.message;
          key.parent_hash = n->hash; /* the state the step was taken from */
          char *parent_text = program_text(n->program);
          key.parent_program = parent_text;
          st = ctx->db_down ? LEIR_ERR_IO : leir_db_put(ctx->o.db, &key);
          if (st == LEIR_ERR_IO) {
            ctx->db_down = 1;
            leir__search_db_keep(ctx, &key); /* written again at the end */
          } else if (st != LEIR_OK) {
            ctx->fatal = st;
          }
          free(parent_text);
        }
      }
    }
    if (ctx->fatal == LEIR_OK) {
      ctx->samples++;
      r.measured = 1;
      r.m = m;
      if (!leir_verdict_passes(m.verdict)) {
        rj = LEIR_REJECT_VERDICT;
        snprintf(reason, sizeof reason, "%s", m.message);
      } else if (m.order != LEIR_ORDER_FASTER) {
        rj = LEIR_REJECT_NOT_FASTER;
        ctx->not_faster++;
        if (m.ratio > 0)
          snprintf(reason, sizeof reason,
                   "verified (%s) but not faster than its parent: %s, time ratio %.3f [%.3f, %.3f]",
                   leir_verdict_name(m.verdict), leir_order_name(m.order), m.ratio, m.ratio_lo,
                   m.ratio_hi);
        else
          snprintf(reason, sizeof reason, "verified (%s) but not timed: %s",
                   leir_verdict_name(m.verdict), m.message);
      } else {
        double sp = n->speedup * m.ratio;
        made = leir__search_node_add(ctx, cand, h, nid, step, sp, m.median_s, klass);
        if (made < 0) {
          ctx->fatal = leir__error_nomem();
        } else {
          cand = NULL;
          ctx->nodes[made].kernel = k;
          k = NULL;
          r.node = made;
          r.speedup = sp;
          ctx->accepted++;
          if (sp > ctx->nodes[ctx->best].speedup) ctx->best = made;
        }
      }
    }
    leir_kernel_free(k);
  }
  n = &ctx->nodes[nid];
  r.reject = rj;
  r.reason = dup_str(reason);
  if (rj != LEIR_REJECT_NONE) {
    ctx->rejected++;
    leir__search_add_feedback(n, p->kind == 2 ? p->text : (step ? step : (p->text ? p->text : "")),
                              rj, r.measured ? r.m.verdict : LEIR_VERDICT_INVALID, reason);
  }
  leir_program_free(cand);
  free(step);
  if (ctx->fatal == LEIR_OK || made >= 0 || r.measured)
    leir__search_record_emit(ctx, &r);
  else
    leir__search_record_free_strings(&r);
  return made;
}
