/* The prompts leir_eval scores answers to (eval.jsonl, validation.jsonl,
 * archive.jsonl), with their programs, verified labels and verifiers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "eval.h"
#include "ir.h"

static const char *user_of(const leir__lit *rec) {
  const leir__lit *m = leir__lit_get(rec, "messages");
  for (const leir__lit *e = m && m->kind == LEIR__LIT_LIST ? m->first : NULL; e; e = e->next)
    if (!strcmp(leir__lit_field(e, "role"), "user")) return leir__lit_field(e, "content");
  return "";
}

leir_status leir__ev_load(leir_eval *ev, char *text, size_t len, const char *label) {
  size_t line = 0;
  for (char *p = text, *end = text + len; p < end;) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) nl = end;
    *nl = '\0';
    line++;
    if (nl > p) {
      leir__lit_error e;
      const leir__lit *v = leir__lit_parse(&ev->arena, p, (size_t)(nl - p), 0, 0, &e);
      if (!v || v->kind != LEIR__LIT_DICT) {
        if (!v && e.nomem) return leir__error_nomem();
        return leir__error(LEIR_ERR_PARSE, "dataset.file", label, (uint32_t)line, 0,
                           "%s line %zu is not a JSON object", label, line);
      }
      if (ev->np == ev->capp) {
        size_t nc = ev->capp ? ev->capp * 2 : 64;
        leir__ev_prompt *q = realloc(ev->p, nc * sizeof *q);
        if (!q) return leir__error_nomem();
        ev->p = q;
        ev->capp = nc;
      }
      leir__ev_prompt *r = &ev->p[ev->np];
      memset(r, 0, sizeof *r);
      r->order = ev->np++;
      r->id = leir__lit_field(v, "id");
      r->kind = leir__lit_field(v, "kind");
      int64_t n = 1;
      leir__lit_int(leir__lit_get(v, "n"), &n);
      r->n = n > 0 && n < 1000 ? (uint32_t)n : 1;
      r->user = user_of(v);
      const leir__lit *src = v;
      const leir__lit *samples = leir__lit_get(v, "samples");
      if (!leir__lit_get(v, "original_IR") && samples && samples->kind == LEIR__LIT_LIST && samples->first)
        src = samples->first;
      r->orig = leir__lit_field(src, "original_IR");
      r->name = leir__lit_field(src, "name");
      int64_t lv = 0, dp = 0;
      leir__lit_int(leir__lit_get(src, "level"), &lv);
      const leir__lit *stl = leir__lit_get(src, "state");
      if (!leir__lit_int(leir__lit_get(src, "depth"), &dp)) leir__lit_int(leir__lit_get(stl, "depth"), &dp);
      r->level = (int)lv;
      r->depth = (uint32_t)dp;
      r->known = leir__lit_get(src, "known");
      const leir__lit *labels = leir__lit_get(v, "labels");
      r->label_list = labels && labels->kind == LEIR__LIT_LIST ? labels
                      : samples && samples->kind == LEIR__LIT_LIST ? samples : NULL;
    }
    p = nl + 1;
  }
  return LEIR_OK;
}

static int cmp_id(const void *a, const void *b) {
  const leir__ev_prompt *x = *(leir__ev_prompt *const *)a, *y = *(leir__ev_prompt *const *)b;
  int c = strcmp(x->id, y->id);
  return c ? c : x->order < y->order ? -1 : x->order > y->order;
}

leir_status leir__ev_index(leir_eval *ev) {
  ev->by_id = malloc((ev->np ? ev->np : 1) * sizeof *ev->by_id);
  if (!ev->by_id) return leir__error_nomem();
  for (size_t i = 0; i < ev->np; i++) ev->by_id[i] = &ev->p[i];
  qsort(ev->by_id, ev->np, sizeof *ev->by_id, cmp_id);
  return LEIR_OK;
}

leir__ev_prompt *leir__ev_find(leir_eval *ev, const char *id, const char *prompt) {
  if (id && *id) {
    size_t lo = 0, hi = ev->np;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (strcmp(ev->by_id[mid]->id, id) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo < ev->np && !strcmp(ev->by_id[lo]->id, id)) return ev->by_id[lo];
  }
  /* by prompt text: rare (answers files usually carry the id), so a scan */
  for (size_t i = 0; prompt && *prompt && i < ev->np; i++)
    if (!strcmp(ev->p[i].user, prompt)) return &ev->p[i];
  return NULL;
}

leir_status leir__ev_set_signature(const leir__ev_prompt *r, leir_program *c) {
  size_t n = leir_program_signature_count(r->program);
  leir_tensor_decl decls[64];
  for (size_t i = 0; i < n && i < 64; i++) leir_program_signature_get(r->program, i, &decls[i]);
  return leir_program_set_signature(c, decls, n < 64 ? n : 64);
}

/* The structure of every verified label, so that an answer that repeats one
 * (respelled or not) is recognized and judged by its class. A label that
 * does not load is skipped (it cannot match anything). */
static leir_status load_labels(leir__ev_prompt *r) {
  size_t n = 0;
  for (const leir__lit *l = r->label_list ? r->label_list->first : NULL; l; l = l->next) n++;
  if (!n) return LEIR_OK;
  if (!(r->labels = calloc(n, sizeof *r->labels))) return leir__error_nomem();
  for (const leir__lit *l = r->label_list->first; l; l = l->next) {
    const char *tir = leir__lit_field(l, "transformed_IR");
    leir_parse_options po = LEIR_PARSE_OPTIONS_INIT;
    po.flags = LEIR_PARSE_LENIENT;
    leir_program *t = NULL;
    leir_status st = leir_program_parse(&t, tir, strlen(tir), &po);
    if (st == LEIR_OK) st = leir__ev_set_signature(r, t);
    if (st == LEIR_OK) {
      leir__ev_label *lab = &r->labels[r->nlabels++];
      lab->hash = leir__program_hash_structure(t);
      lab->strategy = leir__lit_field(l, "strategy");
      const char *ex = leir__lit_field(l, "exactness");
      lab->reassociating = *ex && strcmp(ex, "exact");
    } else if (st == LEIR_ERR_NOMEM) {
      leir_program_free(t);
      return st;
    }
    leir_program_free(t);
  }
  return LEIR_OK;
}

static leir_status open_backend(leir_eval *ev, uint64_t evals, leir_backend **out) {
  const char *want = ev->opts.backend && *ev->opts.backend ? ev->opts.backend : "auto";
  if (!strcmp(want, "auto")) want = evals <= ev->opts.interp_max_evaluations ? "interp" : "cpu";
  leir_backend **slot = !strcmp(want, "interp") ? &ev->interp : &ev->cpu;
  if (!*slot) {
    leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
    bo.timeout_s = 60;
    bo.max_evaluations = (uint64_t)1 << 30;
    leir_status st = leir_backend_open(slot, want, &bo);
    if (st != LEIR_OK) return st;
  }
  *out = *slot;
  return LEIR_OK;
}

static leir_status new_verifier(leir_eval *ev, leir__ev_prompt *r, uint32_t flags, leir_verifier **out) {
  leir_program_cost cost;
  uint64_t evals = leir_program_cost_get(r->program, &cost) == LEIR_OK ? cost.evaluations : 0;
  leir_backend *be = NULL;
  leir_status st = open_backend(ev, evals, &be);
  if (st != LEIR_OK) return st;
  leir_verifier_options vo = LEIR_VERIFIER_OPTIONS_INIT;
  vo.flags = flags;
  vo.seed = ev->opts.seed;
  vo.input_sets = ev->opts.input_sets ? ev->opts.input_sets : 3;
  return leir_verifier_new(out, be, r->program, &vo);
}

leir_status leir__ev_prepare(leir_eval *ev, leir__ev_prompt *r) {
  if (r->program || r->broken) return r->broken ? LEIR_ERR_INVALID : LEIR_OK;
  leir_status st = leir_program_parse(&r->program, r->orig, strlen(r->orig), NULL);
  leir_tensor_decl decls[64];
  int64_t shapes[64][LEIR_MAX_RANK];
  size_t nd = 0;
  for (const leir__lit *e = r->known ? r->known->first : NULL; st == LEIR_OK && e && nd < 64; e = e->next, nd++) {
    decls[nd].name = leir__lit_field(e, "name");
    if (leir_dtype_from_name(leir__lit_field(e, "dtype"), &decls[nd].dtype) != LEIR_OK) decls[nd].dtype = LEIR_F32;
    decls[nd].role = !strcmp(leir__lit_field(e, "role"), "input") ? LEIR_ROLE_INPUT : LEIR_ROLE_OUTPUT;
    uint32_t k = 0;
    const leir__lit *sh = leir__lit_get(e, "shape");
    for (const leir__lit *d = sh ? sh->first : NULL; d && k < LEIR_MAX_RANK; d = d->next) {
      int64_t x = 0;
      leir__lit_int(d, &x);
      shapes[nd][k++] = x;
    }
    decls[nd].rank = k;
    decls[nd].shape = shapes[nd];
  }
  if (st == LEIR_OK) st = nd ? leir_program_set_signature(r->program, decls, nd) : leir_program_infer_signature(r->program);
  if (st == LEIR_OK) st = leir_program_check(r->program, NULL, NULL);
  if (st == LEIR_OK) st = new_verifier(ev, r, 0, &r->verifier);
  if (st == LEIR_OK && !(r->hash = leir__program_hash_structure(r->program))) st = leir__error_nomem();
  if (st == LEIR_OK) st = load_labels(r);
  if (st != LEIR_OK && st != LEIR_ERR_NOMEM && st != LEIR_ERR_NO_DEVICE) {
    leir_verifier_free(r->verifier);
    leir_program_free(r->program);
    r->verifier = NULL;
    r->program = NULL;
    r->broken = 1;
  }
  return st;
}

leir_status leir__ev_ref_verifier(leir_eval *ev, leir__ev_prompt *r, leir_verifier **out) {
  leir_status st = r->ref_verifier ? LEIR_OK : new_verifier(ev, r, LEIR_VERIFY_REFERENCE_RULE, &r->ref_verifier);
  *out = r->ref_verifier;
  return st;
}
