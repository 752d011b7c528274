/* leir verify: run two programs on the same seeded inputs and compare
 * (verification.md §2). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "run_opts.h"

static int parse_tol(const char *opt, const char *v, double *out) {
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (errno || end == v || *end || !(x >= 0))
    return tool_usage_error("verify", "%s needs a non-negative number, got '%s'", opt, v);
  *out = x;
  return 0;
}

/* The class a pair is judged by when --class is not given (verification.md,
 * "Which class judges a pair"): a pair that grounds to a step takes that
 * step's class (the strictest when several steps make the same program); a
 * pair that does not is a float program computing the same mathematics in
 * another way as far as anyone knows, so it is judged by the f64-truth
 * bound, not by a per-element tolerance that rejects legitimate rounding. */
typedef struct inferred_class {
  uint32_t cls;
  char why[512];
} inferred_class;

static void infer_class(const leir_program *before, const leir_program *after,
                        inferred_class *out) {
  leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
  leir_candidates *hits = NULL;
  out->cls = LEIR_VERIFY_CLASS_REASSOCIATING;
  leir_status st = leir_ground(&hits, before, after, &co);
  size_t n = st == LEIR_OK ? leir_candidates_count(hits) : 0;
  size_t best = n;
  for (size_t i = 0; i < n; i++)
    if (best == n || leir_candidates_exactness(hits, i) < leir_candidates_exactness(hits, best))
      best = i;
  if (best < n) {
    out->cls = (uint32_t)leir_candidates_exactness(hits, best) + 1;
    snprintf(out->why, sizeof out->why, "grounds to %s", leir_step_text(leir_candidates_step(hits, best)));
  } else if (st == LEIR_OK) {
    snprintf(out->why, sizeof out->why, "no single step of the implemented strategies turns "
                                        "BEFORE into AFTER");
  } else {
    snprintf(out->why, sizeof out->why, "not grounded (%s)", leir_error_last()->message);
  }
  leir_candidates_free(hits);
}

static const char *rule_words(const char *judged_by) {
  if (!judged_by || !*judged_by) return NULL;
  if (!strcmp(judged_by, "truth")) return "the f64-truth bound";
  if (!strcmp(judged_by, "truth-or-tolerance")) return "the f64-truth bound or the tolerance";
  if (!strcmp(judged_by, "bitwise")) return "bitwise identity";
  if (!strcmp(judged_by, "reference-rule")) return "the reference's rule";
  return "the per-element tolerance";
}

static bool judged_by_truth(const leir_verify_report *r) {
  return r->candidate_class == LEIR_VERIFY_CLASS_REASSOCIATING ||
         (r->judged_by && strncmp(r->judged_by, "truth", 5) == 0);
}

static void print_text(const leir_verify_report *r, const char *before, const char *after,
                       const inferred_class *inf) {
  printf("%s: %s\n", leir_verdict_name(r->verdict), r->message);
  printf("  backend %s, seed %" PRIu64 ", %u input set%s, %.3f s\n", r->backend, r->seed,
         r->input_sets, r->input_sets == 1 ? "" : "s", r->seconds);
  const char *rule = rule_words(r->judged_by);
  if (inf)
    printf("  class %s, inferred: %s%s%s\n", leir_verify_class_name(r->candidate_class), inf->why,
           rule ? "; judged by " : "", rule ? rule : "");
  else if (rule)
    printf("  class %s; judged by %s\n", leir_verify_class_name(r->candidate_class), rule);
  if (r->verdict <= LEIR_VERDICT_MISMATCH || r->verdict == LEIR_VERDICT_INCONCLUSIVE)
    for (size_t i = 0; i < r->noutputs; i++) {
      const leir_output_report *o = &r->outputs[i];
      const leir_output_detail *d = r->output_details ? &r->output_details[i] : NULL;
      printf("  %s (%s, %" PRIu64 " elements): %" PRIu64 " differ, %" PRIu64
             " outside %s; max abs %.3g, max rel %.3g, max %" PRIu64
             " ULP, MSE %.3g (rtol %g, atol %g)",
             o->name, leir_dtype_name(o->dtype), o->elements, o->differing, o->outside,
             judged_by_truth(r) ? "the bound" : "tolerance",
             o->max_abs_err, o->max_rel_err, o->max_ulp, o->mse, o->rtol, o->atol);
      if (d) {
        printf("; finite %.1f%%", 100.0 * d->finite_min);
        if (d->finite_max > d->finite_min) printf("..%.1f%%", 100.0 * d->finite_max);
        if (judged_by_truth(r))
          printf("; error against the f64 truth: reference %.3g, candidate %.3g",
                 d->reference_err, d->candidate_err);
      }
      printf("\n");
    }
  if (r->verdict == LEIR_VERDICT_INVALID) {
    const char *file = r->program == 0 ? before : after;
    if (r->line)
      fprintf(stderr, "%s:%u:%u: error: %s [%s]\n", file, r->line, r->column, r->message,
              r->rule);
    else
      fprintf(stderr, "%s: error: %s [%s]\n", file, r->message, r->rule);
  }
  if (r->log[0]) printf("compiler output:\n%s\n", r->log);
  if (r->notes[0]) {
    printf("notes:\n");
    const char *s = r->notes;
    while (*s) {
      const char *nl = strchr(s, '\n');
      size_t n = nl ? (size_t)(nl - s) : strlen(s);
      printf("  %.*s\n", (int)n, s);
      s += n + (nl ? 1 : 0);
    }
  }
}

int cmd_verify(int argc, char **argv) {
  run_opts o;
  run_opts_init(&o);
  leir_verify_options vo = LEIR_VERIFY_OPTIONS_INIT;
  tool_args a;
  tool_args_init(&a, "verify", argc, argv);
  const char *opt, *v;
  bool class_given = false;
  while ((opt = tool_args_next(&a))) {
    int r = run_option(&o, &a, opt);
    if (r < 0) return EXIT_USAGE;
    if (r) continue;
    if (strcmp(opt, "--reference-rule") == 0) {
      vo.flags |= LEIR_VERIFY_REFERENCE_RULE;
    } else if (strcmp(opt, "--strict-parallel") == 0) {
      vo.flags |= LEIR_VERIFY_STRICT_PARALLEL;
    } else if (strncmp(opt, "--sets", 6) == 0 && (opt[6] == '\0' || opt[6] == '=')) {
      if (!(v = tool_args_value(&a, opt))) return EXIT_USAGE;
      char *end;
      long n = strtol(v, &end, 10);
      if (*end || end == v || n < 1 || n > 64)
        return tool_usage_error("verify", "--sets needs a number in 1..64");
      vo.input_sets = (uint32_t)n;
    } else if (strncmp(opt, "--class", 7) == 0 && (opt[7] == '\0' || opt[7] == '=')) {
      if (!(v = tool_args_value(&a, opt))) return EXIT_USAGE;
      if (leir_verify_class_from_name(v, &vo.candidate_class) != LEIR_OK)
        return tool_usage_error("verify", "--class needs any, exact or reassociating, got '%s'",
                                v);
      class_given = true;
    } else if (strncmp(opt, "--rtol", 6) == 0 && (opt[6] == '\0' || opt[6] == '=')) {
      if (!(v = tool_args_value(&a, opt)) || parse_tol("--rtol", v, &vo.rtol)) return EXIT_USAGE;
    } else if (strncmp(opt, "--atol", 6) == 0 && (opt[6] == '\0' || opt[6] == '=')) {
      if (!(v = tool_args_value(&a, opt)) || parse_tol("--atol", v, &vo.atol)) return EXIT_USAGE;
    } else {
      return tool_usage_error("verify", "unknown option %s", opt);
    }
  }
  if (a.npositional != 2)
    return tool_usage_error("verify", "expected two programs: BEFORE AFTER");
  vo.seed = o.seed;
  int rc;
  leir_program *before = run_load(&o, a.positional[0], true, &rc);
  if (!before) return rc;
  leir_program *after = run_load(&o, a.positional[1], false, &rc);
  if (!after) {
    leir_program_free(before);
    return rc;
  }
  leir_backend *b = NULL;
  rc = run_open_backend(&o, &b);
  leir_verify_report *r = NULL;
  inferred_class inf;
  if (rc == EXIT_OK && !class_given) {
    infer_class(before, after, &inf);
    vo.candidate_class = inf.cls;
  }
  if (rc == EXIT_OK) {
    leir_status st = leir_verify(b, before, after, &vo, &r);
    if (st != LEIR_OK) {
      fprintf(stderr, "leir verify: error: %s\n", leir_error_last()->message);
      rc = EXIT_INTERNAL;
    }
  }
  if (r) {
    if (o.json) {
      char *js = NULL;
      if (leir_verify_report_json(r, &js, NULL) == LEIR_OK) {
        size_t len = strlen(js);
        if (!class_given && len && js[len - 1] == '}') {
          /* the tool's own fields: how the class was chosen */
          js[len - 1] = '\0';
          printf("%s,\"class_inferred\":", js);
          tool_json_string(stdout, inf.why, strlen(inf.why));
          printf("}\n");
        } else {
          printf("%s\n", js);
        }
      }
      leir_free(js);
    } else {
      print_text(r, tool_label(a.positional[0]), tool_label(a.positional[1]),
                 class_given ? NULL : &inf);
    }
    rc = leir_verdict_passes(r->verdict) ? EXIT_OK : EXIT_INVALID;
    leir_verify_report_free(r);
  }
  leir_backend_free(b);
  leir_program_free(before);
  leir_program_free(after);
  return rc;
}
