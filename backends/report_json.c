/* leir_verify_report_to_json, leir_timing_to_json: one JSON object per report or timing. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "error.h"

static void put_str(leir__strbuf *b, const char *key, const char *v) {
  leir__sb_printf(b, ",\"%s\":", key);
  leir__sb_put_json_string(b, v, strlen(v));
}

/* JSON has no NaN or infinities: they become the strings "nan", "inf",
 * "-inf". */
static void put_num(leir__strbuf *b, const char *key, double v) {
  leir__sb_printf(b, ",\"%s\":", key);
  if (isnan(v))
    leir__sb_puts(b, "\"nan\"");
  else if (isinf(v))
    leir__sb_puts(b, v > 0 ? "\"inf\"" : "\"-inf\"");
  else {
    /* shortest of %.15g..%.17g that reads back exactly */
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
      snprintf(buf, sizeof buf, "%.*g", prec, v);
      if (strtod(buf, NULL) == v) break;
    }
    leir__sb_puts(b, buf);
  }
}

static void put_u64(leir__strbuf *b, const char *key, uint64_t v) {
  leir__sb_printf(b, ",\"%s\":%llu", key, (unsigned long long)v);
}

leir_status leir_verify_report_to_json(const leir_verify_report *r, char **out, size_t *out_len) {
  if (!r || !out) return leir__error_arg(NULL, "NULL argument");
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_printf(&b, "{\"verdict\":\"%s\"", leir_verdict_name(r->verdict));
  leir__sb_printf(&b, ",\"pass\":%s", leir_verdict_passes(r->verdict) ? "true" : "false");
  put_u64(&b, "seed", r->seed);
  put_u64(&b, "input_sets", r->input_sets);
  put_str(&b, "backend", r->backend);
  if (r->program == 0 || r->program == 1)
    put_str(&b, "program", r->program == 0 ? "reference" : "candidate");
  else
    leir__sb_puts(&b, ",\"program\":null");
  leir__sb_printf(&b, ",\"set\":%d", (int)r->set);
  put_str(&b, "message", r->message);
  if (r->size >= offsetof(leir_verify_report, finite_min) + sizeof r->finite_min) {
    const char *cls = leir_verify_class_name(r->candidate_class);
    put_str(&b, "class", cls ? cls : "any");
    put_num(&b, "finite_min", r->finite_min);
  }
  bool has_rule = r->size >= offsetof(leir_verify_report, judged_by) + sizeof r->judged_by &&
                  r->judged_by;
  bool by_truth = has_rule && strncmp(r->judged_by, "truth", 5) == 0;
  if (has_rule) put_str(&b, "judged_by", r->judged_by);
  if (r->verdict == LEIR_VERDICT_INVALID) {
    put_str(&b, "rule", r->rule);
    put_u64(&b, "line", r->line);
    put_u64(&b, "column", r->column);
  }
  if (r->verdict == LEIR_VERDICT_MISMATCH) {
    put_str(&b, "output", r->output);
    put_u64(&b, "index", r->index);
    leir__sb_puts(&b, ",\"coords\":[");
    for (uint32_t k = 0; k < r->rank; k++)
      leir__sb_printf(&b, "%s%lld", k ? "," : "", (long long)r->coords[k]);
    leir__sb_puts(&b, "]");
    put_num(&b, "expected", r->expected);
    put_num(&b, "actual", r->actual);
  }
  if (r->verdict == LEIR_VERDICT_INCONCLUSIVE) put_str(&b, "output", r->output);
  if (r->verdict <= LEIR_VERDICT_MISMATCH || r->verdict == LEIR_VERDICT_INCONCLUSIVE) {
    put_num(&b, "max_abs_err", r->max_abs_err);
    put_num(&b, "max_rel_err", r->max_rel_err);
    put_u64(&b, "max_ulp", r->max_ulp);
    put_num(&b, "mse", r->mse);
    leir__sb_puts(&b, ",\"outputs\":[");
    for (size_t i = 0; i < r->noutputs; i++) {
      const leir_output_report *o = &r->outputs[i];
      const leir_output_detail *d =
          r->size >= offsetof(leir_verify_report, output_details) + sizeof r->output_details &&
                  r->output_details
              ? &r->output_details[i]
              : NULL;
      leir__sb_printf(&b, "%s{\"name\":", i ? "," : "");
      leir__sb_put_json_string(&b, o->name, strlen(o->name));
      put_str(&b, "dtype", leir_dtype_name(o->dtype));
      put_u64(&b, "elements", o->elements);
      put_u64(&b, "differing", o->differing);
      put_u64(&b, "outside", o->outside);
      put_num(&b, "max_abs_err", o->max_abs_err);
      put_num(&b, "max_rel_err", o->max_rel_err);
      put_u64(&b, "max_ulp", o->max_ulp);
      put_num(&b, "mse", o->mse);
      put_num(&b, "rtol", o->rtol);
      put_num(&b, "atol", o->atol);
      if (d && d->finite_fraction) {
        leir__sb_puts(&b, ",\"finite_fraction\":[");
        for (uint32_t set = 0; set < r->input_sets; set++) {
          leir__sb_puts(&b, set ? "," : "");
          /* put_num writes a key: print the number alone */
          char num[40];
          snprintf(num, sizeof num, "%.6g", d->finite_fraction[set]);
          leir__sb_puts(&b, num);
        }
        leir__sb_puts(&b, "]");
      }
      if (d && (r->candidate_class == LEIR_VERIFY_CLASS_REASSOCIATING || by_truth)) {
        put_num(&b, "reference_err", d->reference_err);
        put_num(&b, "candidate_err", d->candidate_err);
      }
      leir__sb_puts(&b, "}");
    }
    leir__sb_puts(&b, "]");
  }
  if (r->log[0]) put_str(&b, "log", r->log);
  if (r->notes[0]) put_str(&b, "notes", r->notes);
  put_num(&b, "seconds", r->seconds);
  leir__sb_puts(&b, "}");
  char *s = leir__sb_finish(&b, out_len);
  if (!s) return leir__error_nomem();
  *out = s;
  return LEIR_OK;
}

/* leir_timing_to_json: one JSON object per timing, every field of the struct
 * (reserved space aside) under its own name. */
leir_status leir_timing_to_json(const leir_timing *t, char **out, size_t *out_len) {
  if (!t || !out) return leir__error_arg(NULL, "NULL argument");
  leir__strbuf b = LEIR__STRBUF_INIT;
  /* every put_* writes a leading comma: the first one becomes the brace */
  put_num(&b, "median_s", t->median_s);
  put_num(&b, "min_s", t->min_s);
  put_num(&b, "max_s", t->max_s);
  put_num(&b, "mean_s", t->mean_s);
  put_num(&b, "q1_s", t->q1_s);
  put_num(&b, "q3_s", t->q3_s);
  put_num(&b, "spread", t->spread);
  leir__sb_printf(&b, ",\"noisy\":%s", t->noisy ? "true" : "false");
  put_u64(&b, "threads", t->threads);
  put_u64(&b, "runs", t->runs);
  put_u64(&b, "flops", t->flops);
  put_u64(&b, "bytes", t->bytes);
  put_num(&b, "gflops", t->gflops);
  put_num(&b, "gbytes_per_s", t->gbytes_per_s);
  put_num(&b, "speedup", t->speedup);
  leir__sb_puts(&b, "}");
  char *s = leir__sb_finish(&b, out_len);
  if (!s) return leir__error_nomem();
  s[0] = '{';
  *out = s;
  return LEIR_OK;
}

/* The 0.1.0 names, kept exported (run.h). */
leir_status leir_verify_report_json(const leir_verify_report *r, char **out, size_t *out_len) {
  return leir_verify_report_to_json(r, out, out_len);
}
leir_status leir_timing_json(const leir_timing *t, char **out, size_t *out_len) {
  return leir_timing_to_json(t, out, out_len);
}
