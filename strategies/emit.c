/*
 * Emission: what a strategy's enumeration reports, routed by the context's
 * mode (a listed step, the step being matched, or an explanation finding),
 * and the site strings of findings.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kit.h"

const leir__rule_info leir__rules[LEIR__NRULES] = {
#define LEIR__RULE(id, name, meaning) [LEIR__R_##id] = {name, meaning},
#include "rules.def"
};

int leir__rule_find(const char *name) {
  for (int i = 0; i < LEIR__NRULES; i++)
    if (strcmp(leir__rules[i].name, name) == 0) return i;
  return -1;
}

void leir__add_finding(leir__sctx *c, int applies, const char *site, const char *rule,
                       const char *msg, size_t msg_len) {
  leir__findings *e = c->ex;
  if (!e) return;
  char *s1 = leir__arena_strndup(&e->text, site, strlen(site));
  char *s2 = leir__arena_strndup(&e->text, rule, strlen(rule));
  char *s3 = leir__arena_strndup(&e->text, msg, msg_len);
  leir_reason *r = s1 && s2 && s3 ? LEIR__VEC_PUSH(&e->r) : NULL;
  if (!r) {
    c->status = LEIR_ERR_NOMEM;
    return;
  }
  r->applies = applies;
  r->site = s1;
  r->rule = s2;
  r->message = s3;
}

void leir__steplist_push(leir__sctx *c, leir_exactness cls) {
  leir__steplist *l = c->list;
  if (c->o.max_candidates && l->steps.len >= c->o.max_candidates) {
    c->status = leir__error(LEIR_ERR_LIMIT, "limit.candidates", NULL, 0, 0,
                            "more than %llu candidates (max_candidates)",
                            (unsigned long long)c->o.max_candidates);
    return;
  }
  char *t = leir__arena_strndup(&l->text, c->sb.data, c->sb.len);
  leir_step *s = t ? LEIR__VEC_PUSH(&l->steps) : NULL;
  if (!s) {
    c->status = LEIR_ERR_NOMEM;
    return;
  }
  s->strategy = (uint16_t)c->strategy;
  s->exactness = (uint8_t)cls;
  s->owned = 0;
  s->len = (uint32_t)c->sb.len;
  s->text = t;
  s->domain_flags = (c->o.flags & LEIR__DOMAIN_FLAGS) | (c->split_relaxed ? LEIR__DOMAIN_GATED : 0);
  s->vector_width = c->o.vector_width;
}

void leir__emit(leir__sctx *c, leir_exactness cls, const char *fmt, ...) {
  if (!leir__more(c)) return;
  c->sb.len = 0;
  leir__sb_puts(&c->sb, c->strategy_name);
  leir__sb_putc(&c->sb, ' ');
  va_list ap;
  va_start(ap, fmt);
  leir__sb_vprintf(&c->sb, fmt, ap);
  va_end(ap);
  /* a step without parameters is the strategy's name alone */
  if (c->sb.len && c->sb.data[c->sb.len - 1] == ' ') c->sb.len--;
  if (c->sb.failed) {
    c->status = LEIR_ERR_NOMEM;
    return;
  }
  switch (c->mode) {
    case LEIR__MODE_LIST: leir__steplist_push(c, cls); break;
    case LEIR__MODE_MATCH:
      if (c->sb.len == c->want_len && memcmp(c->sb.data, c->want, c->want_len) == 0) {
        c->found = true;
        c->found_class = cls;
      }
      break;
    case LEIR__MODE_EXPLAIN: {
      c->ex->ncand++;
      char msg[64];
      snprintf(msg, sizeof msg, " (%s)", leir_exactness_name(cls));
      size_t params = strlen(c->strategy_name) + 1;
      char site[256];
      snprintf(site, sizeof site, "%.*s", (int)(c->sb.len - params), c->sb.data + params);
      leir__sb_puts(&c->sb, msg);
      leir__add_finding(c, 1, site, "", c->sb.data, c->sb.len);
      break;
    }
  }
}

void leir__reject(leir__sctx *c, const char *site, leir__rule rule, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  leir__add_finding(c, 0, site, leir__rule_name(rule), msg, strlen(msg));
}

const char *leir__site_nest(leir__sctx *c, const leir__nref *r) {
  snprintf(c->site, sizeof c->site, "nest=%s", r->label);
  return c->site;
}

const char *leir__site_loop(leir__sctx *c, const leir__nref *r, uint32_t loop) {
  snprintf(c->site, sizeof c->site, "nest=%s loop=%s", r->label, leir__loop_name(c, r, loop));
  return c->site;
}

const char *leir__site_tensor(leir__sctx *c, const leir__nref *r, uint32_t sym) {
  if (r)
    snprintf(c->site, sizeof c->site, "nest=%s tensor=%s", r->label, leir__name(c, sym));
  else
    snprintf(c->site, sizeof c->site, "tensor=%s", leir__name(c, sym));
  return c->site;
}
