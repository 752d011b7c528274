/* Output of a search: a record as JSON (the trajectory's lines) and the
 * best speedup against samples as an SVG image. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#include "error.h"
#include "strbuf.h"

struct leir_search_result; /* search.c */

static void put_num(leir__strbuf *b, const char *name, double v) {
  if (isfinite(v))
    leir__sb_printf(b, ",\"%s\":%.17g", name, v);
  else
    leir__sb_printf(b, ",\"%s\":\"%s\"", name, isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

static void put_str(leir__strbuf *b, const char *name, const char *s) {
  leir__sb_printf(b, ",\"%s\":", name);
  leir__sb_put_json_string(b, s ? s : "", s ? strlen(s) : 0);
}

leir_status leir_search_record_json(const leir_search_record *r, char **out, size_t *out_len) {
  if (!r || !out) return leir__error_arg("record", "record or out is NULL");
  leir__strbuf b = {0};
  leir__sb_printf(&b, "{\"sample\":%u,\"node\":%d,\"parent\":%d,\"depth\":%u", r->sample, r->node,
                  r->parent, r->depth);
  put_str(&b, "step", r->step);
  put_str(&b, "strategy", r->strategy);
  put_str(&b, "cot", r->cot);
  put_str(&b, "verdict", r->measured ? leir_verdict_name(r->m.verdict) : "");
  put_str(&b, "reject", leir_search_reject_name(r->reject));
  put_str(&b, "reason", r->reason);
  leir__sb_printf(&b, ",\"accepted\":%s,\"measured\":%s,\"cached\":%s",
                  r->node >= 0 ? "true" : "false", r->measured ? "true" : "false",
                  r->cached ? "true" : "false");
  leir__sb_puts(&b, ",\"timing\":{\"order\":");
  const char *ord = r->measured ? leir_order_name(r->m.order) : "";
  leir__sb_put_json_string(&b, ord, strlen(ord));
  put_num(&b, "median_s", r->m.median_s);
  put_num(&b, "q1_s", r->m.q1_s);
  put_num(&b, "q3_s", r->m.q3_s);
  put_num(&b, "spread", r->m.median_s > 0 ? (r->m.q3_s - r->m.q1_s) / r->m.median_s : 0.0);
  put_num(&b, "parent_median_s", r->m.parent_median_s);
  put_num(&b, "ratio", r->m.ratio);
  put_num(&b, "ratio_lo", r->m.ratio_lo);
  put_num(&b, "ratio_hi", r->m.ratio_hi);
  leir__sb_printf(&b, ",\"rounds\":%u}", r->m.rounds);
  put_num(&b, "speedup", r->speedup);
  put_num(&b, "best_speedup", r->best_speedup);
  put_num(&b, "elapsed_s", r->elapsed_s);
  leir__sb_printf(&b, ",\"hash\":\"%016llx\"", (unsigned long long)r->hash);
  put_str(&b, "program", r->program);
  /* appended fields: a caller's older, smaller record has none */
  if (r->size >= offsetof(leir_search_record, raw) + sizeof r->raw) {
    put_str(&b, "proposed", r->proposed);
    put_str(&b, "raw", r->raw);
  }
  if (r->size >= offsetof(leir_search_record, time_s) + sizeof r->time_s)
    leir__sb_printf(&b, ",\"cost\":{\"compile_s\":%.6f,\"verify_s\":%.6f,\"time_s\":%.6f}",
                    r->compile_s, r->verify_s, r->time_s);
  leir__sb_putc(&b, '}');
  *out = leir__sb_finish(&b, out_len);
  return *out ? LEIR_OK : leir__error_nomem();
}

leir_status leir_search_result_plot_svg(const leir_search_result *res, char **out,
                                        size_t *out_len) {
  if (!res || !out) return leir__error_arg("result", "result or out is NULL");
  size_t n = leir_search_result_record_count(res);
  /* points: (samples evaluated, best speedup) after every measured record */
  double xmax = 1, ymax = 1;
  for (size_t i = 0; i < n; i++) {
    const leir_search_record *r = leir_search_result_record(res, i);
    if (r->best_speedup > ymax && isfinite(r->best_speedup)) ymax = r->best_speedup;
  }
  uint32_t samples = 0;
  for (size_t i = 0; i < n; i++)
    if (leir_search_result_record(res, i)->measured) samples++;
  if (samples > xmax) xmax = samples;
  ymax = ymax * 1.1;
  const double W = 640, H = 400, L = 60, R = 20, T = 30, B = 50;
  const double pw = W - L - R, ph = H - T - B;
  leir__strbuf b = {0};
  leir__sb_printf(&b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
                  "viewBox=\"0 0 %g %g\" font-family=\"sans-serif\" font-size=\"12\">\n"
                  "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                  "<text x=\"%g\" y=\"20\" text-anchor=\"middle\">best speedup over the "
                  "source program</text>\n",
                  W, H, W, H, W / 2);
  leir__sb_printf(&b,
                  "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n"
                  "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n",
                  L, T + ph, L + pw, T + ph, L, T, L, T + ph);
  for (int k = 0; k <= 4; k++) {
    double yv = ymax * k / 4, y = T + ph - ph * k / 4;
    double xv = xmax * k / 4, x = L + pw * k / 4;
    leir__sb_printf(&b,
                    "<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%.2fx</text>\n"
                    "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%.0f</text>\n",
                    L - 6, y + 4, yv, x, T + ph + 16, xv);
  }
  leir__sb_printf(&b,
                  "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">samples</text>\n"
                  "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"%g,%g",
                  L + pw / 2, H - 12, L, T + ph - ph * 1.0 / ymax);
  uint32_t k = 0;
  double last = 1.0;
  for (size_t i = 0; i < n; i++) {
    const leir_search_record *r = leir_search_result_record(res, i);
    if (!r->measured) continue;
    k++;
    double x = L + pw * k / xmax;
    leir__sb_printf(&b, " %.2f,%.2f %.2f,%.2f", x, T + ph - ph * last / ymax, x,
                    T + ph - ph * r->best_speedup / ymax);
    last = r->best_speedup;
  }
  leir__sb_puts(&b, "\"/>\n</svg>\n");
  *out = leir__sb_finish(&b, out_len);
  return *out ? LEIR_OK : leir__error_nomem();
}
