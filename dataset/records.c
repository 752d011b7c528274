/* The records of one state group (docs/dataset.md, "Outputs"): a train
 * state's single and multi-label records (train.jsonl and archive.jsonl), a
 * held-out state's prompts with every verified label (eval.jsonl for test,
 * validation.jsonl, and archive.jsonl). */
#include <stdio.h>
#include <string.h>

#include "fin.h"
#include "prompt.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

const char *leir__split_name(int split) {
  return split == LEIR__TEST ? "test" : split == LEIR__VALIDATION ? "validation" : "train";
}

static void put_lit(leir__strbuf *b, const leir__lit *v) {
  if (!v) {
    leir__sb_puts(b, "null");
    return;
  }
  switch (v->kind) {
    case LEIR__LIT_NONE: leir__sb_puts(b, "null"); break;
    case LEIR__LIT_BOOL: leir__sb_puts(b, v->i ? "true" : "false"); break;
    case LEIR__LIT_NUM:
      if (v->is_int) leir__sb_printf(b, "%lld", (long long)v->i);
      else leir__sb_printf(b, "%.17g", v->d);
      break;
    case LEIR__LIT_STR: leir__sb_put_json_string(b, v->s, v->n); break;
    case LEIR__LIT_LIST:
      leir__sb_putc(b, '[');
      for (const leir__lit *e = v->first; e; e = e->next) {
        put_lit(b, e);
        if (e->next) leir__sb_putc(b, ',');
      }
      leir__sb_putc(b, ']');
      break;
    case LEIR__LIT_DICT:
      leir__sb_putc(b, '{');
      for (const leir__lit *k = v->first; k; k = k->next) {
        put_lit(b, k);
        leir__sb_putc(b, ':');
        put_lit(b, k->value);
        if (k->next) leir__sb_putc(b, ',');
      }
      leir__sb_putc(b, '}');
      break;
  }
}

/* Python's repr() of a str: single quotes unless the text has a single
 * quote and no double quote. */
static void put_pyrepr(leir__strbuf *b, const char *s) {
  int q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
  leir__sb_putc(b, (char)q);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '\\') leir__sb_puts(b, "\\\\");
    else if (*p == q) leir__sb_printf(b, "\\%c", q);
    else if (*p == '\n') leir__sb_puts(b, "\\n");
    else if (*p == '\r') leir__sb_puts(b, "\\r");
    else if (*p == '\t') leir__sb_puts(b, "\\t");
    else if (*p < 0x20 || *p == 0x7f) leir__sb_printf(b, "\\x%02x", *p);
    else leir__sb_putc(b, (char)*p);
  }
  leir__sb_putc(b, (char)q);
}

/* The prompt of a state (samples carry its text and known variables). */
static leir_status prompt_of(const leir__smp *s, uint32_t n, char **out) {
  leir_tensor_decl decls[64];
  int64_t shapes[64][LEIR_MAX_RANK];
  size_t nd = 0;
  for (const leir__lit *e = s->known ? s->known->first : NULL; e && nd < 64; e = e->next, nd++) {
    decls[nd].name = leir__lit_field(e, "name");
    if (leir_dtype_from_name(leir__lit_field(e, "dtype"), &decls[nd].dtype) != LEIR_OK) decls[nd].dtype = LEIR_F32;
    decls[nd].role = !strcmp(leir__lit_field(e, "role"), "input") ? LEIR_ROLE_INPUT : LEIR_ROLE_OUTPUT;
    uint32_t r = 0;
    const leir__lit *sh = leir__lit_get(e, "shape");
    for (const leir__lit *d = sh ? sh->first : NULL; d && r < LEIR_MAX_RANK; d = d->next) {
      int64_t x = 0;
      leir__lit_int(d, &x);
      shapes[nd][r++] = x;
    }
    decls[nd].rank = r;
    decls[nd].shape = shapes[nd];
  }
  return leir__prompt_build_text(s->orig, strlen(s->orig), s->name, decls, nd, n, out, NULL);
}

static void put_messages(leir__strbuf *b, const char *system, const char *user, const char *assistant) {
  leir__sb_puts(b, "\"messages\":[");
  if (system) {
    leir__sb_puts(b, "{\"role\":\"system\",\"content\":");
    leir__ds_put_str(b, system);
    leir__sb_puts(b, "},");
  }
  leir__sb_puts(b, "{\"role\":\"user\",\"content\":");
  leir__ds_put_str(b, user);
  leir__sb_puts(b, "}");
  if (assistant) {
    leir__sb_puts(b, ",{\"role\":\"assistant\",\"content\":");
    leir__ds_put_str(b, assistant);
    leir__sb_puts(b, "}");
  }
  leir__sb_puts(b, "]");
}

/* One train.jsonl record; its offset is kept so that finalize.c can write
 * the records in a seeded order. */
static leir_status train_record(leir__outs *o, const char *system, const char *user, const char *resp) {
  LEIR__GROW(o->train_starts, o->n_train, o->cap_train);
  o->train_starts[o->n_train++] = o->train.len;
  leir__sb_putc(&o->train, '{');
  put_messages(&o->train, system, user, resp);
  leir__sb_puts(&o->train, "}\n");
  return o->train.failed ? leir__error_nomem() : LEIR_OK;
}

/* The training record of a prompt `user` and its response `resp` (NULL: it
 * could not be built). On failure both are freed and the status returned;
 * on success the caller keeps them (the archive line uses them too). */
static leir_status train_pair(leir__outs *o, const char *system, char *user, char *resp) {
  leir_status st = resp ? train_record(o, system, user, resp) : leir__error_nomem();
  if (st != LEIR_OK) {
    leir_free(user);
    free(resp);
  }
  return st;
}

static char *single_response(const leir__smp *s) {
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_puts(&b, "<think>");
  leir__sb_puts(&b, s->cot);
  leir__sb_puts(&b, "</think><answer>{\"transformed_IR\": ");
  leir__ds_put_str(&b, s->tir);
  leir__sb_puts(&b, ", \"applied_strategy\": ");
  leir__ds_put_str(&b, s->strategy);
  leir__sb_puts(&b, "}</answer>");
  return leir__sb_finish(&b, NULL);
}

static char *multi_response(const leir__fin *f, const leir__multi *m) {
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__sb_printf(&b, "<think>These %zu transformed IRs can be individually analyzed as follows: ", m->n);
  for (size_t i = 0; i < m->n; i++) leir__sb_printf(&b, "%s%zu. %s", i ? "\n" : "", i, f->s[m->items[i]].cot);
  leir__sb_puts(&b, "</think><answer>[");
  for (size_t i = 0; i < m->n; i++) {
    const leir__smp *s = &f->s[m->items[i]];
    leir__sb_printf(&b, "%s{'idx': %zu, 'transformed_IR': ", i ? ", " : "", i);
    put_pyrepr(&b, s->tir);
    leir__sb_puts(&b, ", 'applied_strategy': ");
    put_pyrepr(&b, s->strategy);
    leir__sb_putc(&b, '}');
  }
  leir__sb_puts(&b, "]</answer>");
  return leir__sb_finish(&b, NULL);
}

static uint64_t multi_id(const leir__fin *f, const leir__multi *m) {
  leir__strbuf b = LEIR__STRBUF_INIT;
  for (size_t i = 0; i < m->n; i++) leir__sb_puts(&b, f->s[m->items[i]].id);
  size_t len = 0;
  char *t = leir__sb_finish(&b, &len);
  uint64_t h = t ? XXH3_64bits(t, len) : 0;
  free(t);
  return h;
}

leir_status leir__fin_write_group(leir__fin *f, leir__outs *o, size_t g) {
  const leir__ds_config *cfg = &f->ds->cfg;
  const leir__sgroup *grp = &f->g[g];
  const leir__smp *first = &f->s[grp->first];
  char *user = NULL, *resp = NULL;
  leir_status st;
  if (grp->split != LEIR__TRAIN) {
    /* held out: the single prompt and one "at least N" prompt */
    size_t L = 0;
    int seen[256] = {0};
    for (size_t i = 0; i < grp->count; i++) {
      int k = f->s[grp->first + i].sidx;
      if (k >= 0 && k < 256 && !seen[k]) seen[k] = 1, L++;
    }
    uint32_t ns[2] = {1, 0};
    if (cfg->multi_enabled && L >= 2) {
      leir__rng r = leir__rng_derive(cfg->seed, first->state, 5000 + g);
      size_t maxn = L < cfg->multi_max_items ? L : cfg->multi_max_items;
      ns[1] = maxn >= 2 ? (uint32_t)(2 + leir__rng_below(&r, maxn - 1)) : 0;
    }
    for (int v = 0; v < 2; v++) {
      if (!ns[v]) continue;
      if ((st = prompt_of(first, ns[v], &user)) != LEIR_OK) return st;
      char label[300];
      snprintf(label, sizeof label, "%s#%u", first->state, ns[v]);
      leir__rng idr = leir__rng_derive(cfg->seed, label, g);
      uint64_t id = leir__rng_next(&idr);
      for (int pass = 0; pass < 2; pass++) {
        leir__strbuf *b = pass ? &o->archive : grp->split == LEIR__TEST ? &o->eval : &o->validation;
        leir__sb_puts(b, "{\"id\":");
        leir__ds_put_hex(b, id);
        leir__sb_printf(b, ",\"split\":\"%s\",\"kind\":\"%s\",\"n\":%u,", leir__split_name(grp->split),
                        v ? "multi" : "single", ns[v]);
        put_messages(b, cfg->system_prompt, user, NULL);
        leir__sb_puts(b, ",\"name\":");
        leir__ds_put_str(b, first->name);
        leir__sb_printf(b, ",\"level\":%d,\"depth\":%u,\"unit\":", first->level, first->depth);
        leir__ds_put_str(b, first->unit);
        leir__sb_puts(b, ",\"state\":");
        leir__ds_put_str(b, first->state);
        leir__sb_puts(b, ",\"original_IR\":");
        leir__ds_put_str(b, first->orig);
        leir__sb_puts(b, ",\"known\":");
        put_lit(b, first->known);
        if (pass == 0) {
          leir__sb_puts(b, ",\"labels\":[");
          for (size_t i = 0; i < grp->count; i++) {
            const leir__smp *s = &f->s[grp->first + i];
            leir__sb_puts(b, i ? ",{\"strategy\":" : "{\"strategy\":");
            leir__ds_put_str(b, s->strategy);
            leir__sb_puts(b, ",\"transformed_IR\":");
            leir__ds_put_str(b, s->tir);
            leir__sb_puts(b, ",\"verdict\":");
            leir__ds_put_str(b, s->verdict);
            leir__sb_puts(b, ",\"exactness\":");
            leir__ds_put_str(b, s->exactness);
            leir__sb_putc(b, '}');
          }
          leir__sb_puts(b, "]}\n");
        } else {
          leir__sb_puts(b, ",\"samples\":[");
          for (size_t i = 0; i < grp->count; i++) {
            if (i) leir__sb_putc(b, ',');
            leir__sb_puts(b, f->s[grp->first + i].line);
          }
          leir__sb_puts(b, "]}\n");
        }
      }
      if (v) o->n_multi[grp->split]++;
      else o->n_single[grp->split]++;
      leir_free(user);
      user = NULL;
    }
    return LEIR_OK;
  }
  /* singles */
  for (size_t i = 0; i < grp->count; i++) {
    const leir__smp *s = &f->s[grp->first + i];
    if (!s->single) continue;
    if ((st = prompt_of(s, 1, &user)) != LEIR_OK) return st;
    resp = single_response(s);
    if ((st = train_pair(o, cfg->system_prompt, user, resp)) != LEIR_OK) return st;
    leir__sb_puts(&o->archive, "{\"id\":");
    leir__ds_put_str(&o->archive, s->id);
    leir__sb_puts(&o->archive, ",\"split\":\"train\",\"kind\":\"single\",\"n\":1,");
    put_messages(&o->archive, cfg->system_prompt, user, resp);
    leir__sb_puts(&o->archive, ",\"samples\":[");
    leir__sb_puts(&o->archive, s->line);
    leir__sb_puts(&o->archive, "]}\n");
    o->n_train_single++;
    leir_free(user);
    free(resp);
    user = NULL;
    resp = NULL;
  }
  /* multis of this state: select.c appends them in group order */
  size_t lo = 0, hi = f->nm;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (f->m[mid].group < g) lo = mid + 1;
    else hi = mid;
  }
  for (size_t q = lo; q < f->nm && f->m[q].group == g; q++) {
    const leir__multi *m = &f->m[q];
    if ((st = prompt_of(first, (uint32_t)m->n, &user)) != LEIR_OK) return st;
    resp = multi_response(f, m);
    if ((st = train_pair(o, cfg->system_prompt, user, resp)) != LEIR_OK) return st;
    leir__sb_puts(&o->archive, "{\"id\":");
    leir__ds_put_hex(&o->archive, multi_id(f, m));
    leir__sb_printf(&o->archive, ",\"split\":\"train\",\"kind\":\"multi\",\"n\":%zu,", m->n);
    put_messages(&o->archive, cfg->system_prompt, user, resp);
    leir__sb_puts(&o->archive, ",\"samples\":[");
    for (size_t i = 0; i < m->n; i++) {
      if (i) leir__sb_putc(&o->archive, ',');
      leir__sb_puts(&o->archive, f->s[m->items[i]].line);
    }
    leir__sb_puts(&o->archive, "]}\n");
    o->n_train_multi++;
    leir_free(user);
    free(resp);
    user = NULL;
    resp = NULL;
  }
  return LEIR_OK;
}

