/*
 * Grounding (leir__ground, ground.h; the public leir_ground is
 * ground/gate.c): which candidates of `before` give `after` up to fresh
 * names.
 *
 * Applying every candidate and hashing each whole result is quadratic in
 * the number of nests (a candidate per nest, a clone and a hash of the
 * whole program each). Instead each top-level nest gets a key that does
 * not change under the renamings leir_program_hash_alpha ignores (its
 * loops and its tensors numbered by first appearance inside the nest).
 * A step changes only the top-level nests of its site (`nest=N`: nest N,
 * possibly replaced by several; `tensor=X` alone: the nests that use X),
 * so its result can only equal `after` when the nests before its site
 * match `after`'s first nests key by key, and the nests after it match
 * `after`'s last nests. Only those candidates are applied and hashed.
 *
 * Math steps (level math, with an `expr=` site) ground modulo algebra: an
 * LLM may spell the rewritten right side with the operands of + and * in
 * another order or grouping. When a math candidate's result differs from
 * `after`, the equation of its site is compared modulo commutativity and
 * associativity (leir__ac_hash; the accumulation form of leir.md §3.4 is
 * kept: X first in a +/- or * chain, or R/X), and everything else must still equal the
 * candidate's result up to fresh names. So an equivalent spelling of the
 * same step grounds, and a different rewrite or a wrong term does not.
 */
#include <stdlib.h>
#include <string.h>

#include "ground.h"

#include "algebra.h"
#include "api.h"
#include "error.h"
#include "options.h"
#include "visit.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* ---- per-nest keys ---------------------------------------------------------- */

typedef struct keyer {
  const leir_program *p;
  const char **names; /* by symbol: its name in the current nest, or NULL */
  char *store;        /* 12 bytes per symbol */
  uint32_t *touched;
  uint32_t ntouched, ntensors, nloops;
  /* by symbol: first and last top-level nest using the tensor (optional) */
  uint32_t *first, *last, nest;
} keyer;

static void name_sym(keyer *k, uint32_t sym, char prefix, uint32_t *counter) {
  if (k->names[sym]) return;
  snprintf(k->store + (size_t)sym * 12, 12, "%c%u", prefix, (*counter)++);
  k->names[sym] = k->store + (size_t)sym * 12;
  k->touched[k->ntouched++] = sym;
}

static int key_tensor(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  keyer *k = v->ud;
  const leir_expr *e = *slot;
  if (e->kind == LEIR_EXPR_TENSOR) {
    name_sym(k, e->sym, '#', &k->ntensors);
    if (k->first) {
      if (k->first[e->sym] == UINT32_MAX) k->first[e->sym] = k->nest;
      k->last[e->sym] = k->nest;
    }
  }
  return LEIR__VISIT_NEXT;
}

static void key_loops(keyer *k, const leir_nest *n) {
  for (uint32_t i = 0; i < n->nloops; i++) name_sym(k, n->loops[i].sym, '$', &k->nloops);
  for (uint32_t i = 0; i < n->nitems; i++)
    if (n->items[i].nest) key_loops(k, n->items[i].nest);
}

/* The key of every top-level nest of p (caller frees); with first/last,
 * also where each tensor symbol is used. NULL when out of memory. */
static uint64_t *nest_keys(const leir_program *p, uint32_t *first, uint32_t *last) {
  uint32_t nsym = p->syms.count ? p->syms.count : 1;
  keyer k = {p, calloc(nsym, sizeof(char *)), malloc((size_t)nsym * 12),
             malloc((size_t)nsym * sizeof(uint32_t)), 0, 0, 0, first, last, 0};
  uint64_t *keys = malloc((p->nnests ? p->nnests : 1) * sizeof *keys);
  leir__strbuf b = LEIR__STRBUF_INIT;
  bool ok = k.names && k.store && k.touched && keys;
  leir__visit v = LEIR__VISIT_INIT(key_tensor, &k);
  leir__rename rn = {k.names, nsym};
  for (uint32_t t = 0; t < p->nnests && ok; t++) {
    k.nest = t;
    k.ntensors = k.nloops = 0;
    leir__visit_nest(&v, p->nests[t]);
    key_loops(&k, p->nests[t]);
    b.len = 0;
    leir__print_nest(&b, p, p->nests[t], &rn);
    ok = !b.failed;
    if (ok) keys[t] = XXH3_64bits(b.data, b.len);
    for (uint32_t i = 0; i < k.ntouched; i++) k.names[k.touched[i]] = NULL;
    k.ntouched = 0;
  }
  leir__sb_release(&b);
  free(k.names);
  free(k.store);
  free(k.touched);
  if (!ok) {
    free(keys);
    return NULL;
  }
  return keys;
}

/* The top-level nests step `s` may change: [*t0, *t1). */
static void step_region(const leir__pstep *ps, const leir_program *p, const uint32_t *first,
                        const uint32_t *last, uint32_t *t0, uint32_t *t1) {
  *t0 = 0;
  *t1 = p->nnests;
  const leir__tok *nest = leir__ps_get(ps, LEIR__K_NEST, NULL);
  if (nest) {
    uint32_t len = 0;
    while (len < nest->len && nest->s[len] != '.') len++;
    leir__tok top = {nest->s, len};
    int64_t v;
    if (leir__tok_int(&top, &v) && v < (int64_t)p->nnests) {
      const leir__strategy_impl *impl = leir__strategies[ps->strategy].impl;
      uint32_t span = impl && impl->span > 1 && len == nest->len ? impl->span : 1;
      *t0 = (uint32_t)v;
      *t1 = (uint32_t)v + span < p->nnests ? (uint32_t)v + span : p->nnests;
    }
    return;
  }
  const leir__tok *tensor = leir__ps_get(ps, LEIR__K_TENSOR, NULL);
  uint32_t sym = tensor ? leir__sym_find(p, tensor->s, tensor->len) : LEIR__NOSYM;
  if (sym != LEIR__NOSYM && first[sym] != UINT32_MAX) {
    *t0 = first[sym];
    *t1 = last[sym] + 1;
  }
}

/* ---- grounding modulo algebra ---------------------------------------------------- */

static const leir_expr *strip_parens(const leir_expr *e) {
  while (e->kind == LEIR_EXPR_PAREN) e = e->kids[0];
  return e;
}

static bool is_lhs(const leir_expr *e, const leir_expr *lhs) {
  e = strip_parens(e);
  return e->kind == LEIR_EXPR_TENSOR && e->sym == lhs->sym;
}

/* The accumulation form of an equation (leir.md §3.4), which decides its
 * implicit initial value and must survive a respelling: X first in a +/-
 * chain or a * chain (*x: that X), or R/X; ACC_NONE otherwise. */
enum { ACC_NONE, ACC_SUM, ACC_PROD, ACC_DIV };

static int acc_form(const leir_equation *eq, const leir_expr **x) {
  const leir_expr *r = strip_parens(eq->rhs);
  *x = NULL;
  if (r->kind == LEIR_EXPR_BINARY && r->op == LEIR_OP_DIV && is_lhs(r->kids[1], eq->lhs)) {
    *x = strip_parens(r->kids[1]);
    return ACC_DIV;
  }
  bool sum = r->kind == LEIR_EXPR_BINARY && (r->op == LEIR_OP_ADD || r->op == LEIR_OP_SUB);
  bool prod = r->kind == LEIR_EXPR_BINARY && r->op == LEIR_OP_MUL;
  if (!sum && !prod) return ACC_NONE;
  for (unsigned depth = 0; depth < 400; depth++) {
    r = strip_parens(r);
    bool more = r->kind == LEIR_EXPR_BINARY &&
                (sum ? r->op == LEIR_OP_ADD || r->op == LEIR_OP_SUB : r->op == LEIR_OP_MUL);
    if (!more) break;
    r = r->kids[0];
  }
  if (!is_lhs(r, eq->lhs)) return ACC_NONE;
  *x = r;
  return sum ? ACC_SUM : ACC_PROD;
}

/* Is `after` the candidate's result `q` with the site's equation respelled
 * modulo commutativity and associativity? */
static bool ac_grounds(leir__sctx *c, const leir__pstep *ps, const leir_program *q,
                       const leir_program *after) {
  if (leir__strategies[ps->strategy].info.level != LEIR_LEVEL_MATH ||
      !leir__ps_get(ps, LEIR__K_EXPR, NULL) || q->nnests != after->nnests)
    return false;
  const leir__nref *r = leir__ps_nest(c, ps);
  leir__eqsite s;
  if (!r || !leir__ps_eq(c, r, ps, &s)) return false;
  const leir_nest *nq = leir__nest_at(q, r->path, r->depth);
  const leir_nest *na = leir__nest_at(after, r->path, r->depth);
  if (!nq || !na || s.item >= nq->nitems || s.item >= na->nitems || !nq->items[s.item].eq ||
      !na->items[s.item].eq)
    return false;
  const leir_equation *eq = nq->items[s.item].eq, *ea = na->items[s.item].eq;
  if (!leir__expr_equal(q, eq->lhs, after, ea->lhs)) return false;
  /* the same accumulation form, with the same X read first (or last) */
  const leir_expr *xq, *xa;
  int fq = acc_form(eq, &xq), fa = acc_form(ea, &xa);
  if (fq != fa || (xq && !leir__expr_equal(q, xq, after, xa))) return false;
  if (leir__ac_hash(q, eq->rhs) != leir__ac_hash(after, ea->rhs)) return false;
  /* everything else as in q: after with q's right side there hashes as q */
  leir_program *t = NULL;
  if (leir_program_clone(&t, after) != LEIR_OK) {
    leir_error_clear();
    return false;
  }
  leir_nest *nt = leir__nest_at(t, r->path, r->depth);
  leir_expr *copy = leir__copy_expr(t, q, eq->rhs);
  bool same = false;
  if (copy) {
    nt->items[s.item].eq->rhs = copy;
    same = leir_program_hash_alpha(t) == leir_program_hash_alpha(q);
  }
  leir_program_free(t);
  return same;
}

/* ---- grounding ----------------------------------------------------------------- */

/* `after` with `before`'s signature when it has none, and its alpha hash. */
static leir_status target_of(const leir_program *before, const leir_program *after,
                             leir_program **target, uint64_t *want) {
  leir_status st = leir_program_clone(target, after);
  if (st != LEIR_OK) return st;
  if (!after->nsig && before->nsig) {
    leir_tensor_decl decls[256];
    size_t n = leir_program_signature_count(before);
    if (n <= 256) {
      for (size_t i = 0; i < n; i++) leir_program_signature_get(before, i, &decls[i]);
      if (leir_program_set_signature(*target, decls, n) != LEIR_OK) leir_error_clear();
    }
  }
  *want = leir_program_hash_alpha(*target);
  return LEIR_OK;
}

/* ---- the verification gate of the split strategies ------------------------------------ */

/* At most GATE_MAX_VERIFY verifications per grounding (docs/strategies.md,
 * "Gated grounding"): hostile `leir ground` input must not hang it. The
 * verifications themselves, and their caps, are the caller's
 * (leir__ground_verifier: ground/gate.c opens the interpreter). */
#define GATE_MAX_VERIFY 4

typedef struct gate {
  const leir__ground_verifier *verifier;
  unsigned used; /* verifications asked for (at most GATE_MAX_VERIFY) */
} gate;

/* Does `p` verify EQUAL or CLOSE against `before` within the caps? */
static bool gate_verify(gate *g, const leir_program *before, const leir_program *p) {
  if (g->used >= GATE_MAX_VERIFY) return false;
  g->used++;
  return g->verifier->passes(g->verifier->ud, before, p);
}

/* A relaxed candidate's result q matches the answer (target): it counts
 * only when both q and the answer verify against `before` (one
 * verification when they are equal up to fresh names: the same program). */
static bool gate_passes(gate *g, const leir_program *before, const leir_program *q,
                        const leir_program *target, uint64_t want) {
  bool same = leir_program_hash_alpha(q) == want;
  if (g->used + (same ? 1u : 2u) > GATE_MAX_VERIFY) return false;
  return gate_verify(g, before, q) && (same || gate_verify(g, before, target));
}

static bool is_split(int s) {
  return s == LEIR__S_exponential_split || s == LEIR__S_multiplicative_split ||
         s == LEIR__S_additive_split;
}

/* ---- grounding ----------------------------------------------------------------- */

typedef struct ground_ctx {
  const leir_program *before, *target;
  uint64_t want;
  const uint32_t *first, *last;
  uint32_t P, S, n;
  gate *gate; /* the relaxed pass: a match must pass the gate */
} ground_ctx;

/* Applies every listed candidate of `all` near the region that differs
 * and pushes those whose result is the answer to `hits` (whose context,
 * moved from `all`, applies them). With g->gate, an apply that fails or a
 * match that does not verify is no hit, never an error. */
static leir_status ground_pass(const ground_ctx *g, leir_candidates *all,
                               struct leir_candidates *hits) {
  leir__sctx *c = hits->ctx;
  leir_status st = LEIR_OK;
  for (size_t i = 0; i < all->l.steps.len && st == LEIR_OK; i++) {
    const leir_step *s = &all->l.steps.data[i];
    leir__pstep ps;
    st = leir__step_parse_text(&ps, s->text, s->len);
    if (st != LEIR_OK) break;
    uint32_t t0, t1;
    step_region(&ps, g->before, g->first, g->last, &t0, &t1);
    if (t0 > g->P || t1 + g->S < g->n) continue; /* a nest outside the site differs */
    leir_program *q = NULL;
    st = leir__apply_parsed(c, &ps, &q);
    if (st != LEIR_OK) {
      if (g->gate && st != LEIR_ERR_NOMEM) st = LEIR_OK; /* a relaxed site apply refuses */
      continue;
    }
    bool match = leir_program_hash_alpha(q) == g->want || ac_grounds(c, &ps, q, g->target);
    if (match && g->gate) match = gate_passes(g->gate, g->before, q, g->target, g->want);
    if (match) {
      c->strategy = s->strategy;
      c->sb.len = 0;
      leir__sb_put(&c->sb, s->text, s->len);
      c->list = &hits->l;
      leir__steplist_push(c, (leir_exactness)s->exactness);
      c->list = NULL;
      if (c->status != LEIR_OK) st = leir__error_nomem();
    }
    leir_program_free(q);
  }
  return st;
}

/* The relaxed pass: the split strategies' candidates with their refusals
 * lifted (split_relaxed), each match gated by verification. *out: the
 * hits (possibly none), bound to a relaxed context so that they apply. */
static leir_status ground_relaxed(const ground_ctx *g, const leir_candidates_options *go,
                                  struct leir_candidates **out) {
  *out = NULL;
  leir__sctx *rc = NULL;
  leir_status st = leir__sctx_new(&rc, g->before, go);
  if (st != LEIR_OK) return st;
  rc->split_relaxed = true;
  struct leir_candidates *all = NULL;
  st = leir__candidates_new(&all, rc);
  if (st != LEIR_OK) {
    leir__sctx_free(rc);
    return st;
  }
  rc->mode = LEIR__MODE_LIST;
  rc->list = &all->l;
  for (int s = 0; s < LEIR__NSTRATEGIES && rc->status == LEIR_OK; s++)
    if (is_split(s) && (go->strategy < 0 || go->strategy == s)) leir__sctx_run(rc, s);
  rc->list = NULL;
  st = rc->status == LEIR_ERR_NOMEM ? leir__error_nomem() : rc->status;
  struct leir_candidates *hits = NULL;
  if (st == LEIR_OK) st = leir__candidates_new(&hits, rc);
  if (st != LEIR_OK) {
    leir_candidates_free(all);
    return st;
  }
  all->ctx = NULL; /* moved to `hits` */
  st = ground_pass(g, all, hits);
  leir_candidates_free(all);
  if (st != LEIR_OK) {
    leir_candidates_free(hits);
    return st;
  }
  *out = hits;
  return LEIR_OK;
}

leir_status leir__ground(leir_candidates **out, const leir_program *before,
                         const leir_program *after, const leir_candidates_options *opts,
                         const leir__ground_verifier *verifier) {
  if (!out || !before || !after || !verifier)
    return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  leir_program *target = NULL;
  uint64_t want = 0;
  leir_status st = target_of(before, after, &target, &want);
  if (st != LEIR_OK) return st;
  uint32_t nsym = before->syms.count ? before->syms.count : 1;
  uint32_t *first = malloc((size_t)nsym * sizeof *first);
  uint32_t *last = malloc((size_t)nsym * sizeof *last);
  if (first) memset(first, 0xff, (size_t)nsym * sizeof *first);
  uint64_t *kb = first && last ? nest_keys(before, first, last) : NULL;
  uint64_t *ka = kb ? nest_keys(target, NULL, NULL) : NULL;
  uint32_t n = before->nnests, m = target->nnests, P = 0, S = 0;
  if (!ka) {
    st = leir__error_nomem();
    goto done;
  }
  while (P < n && P < m && kb[P] == ka[P]) P++;
  while (S < n && S < m && kb[n - 1 - S] == ka[m - 1 - S]) S++;

  /* a structural question: the split strategies' steps whose numerical
   * condition is only assumed are steps of them too (whether the answer is
   * equivalent is the verifier's question; LEIR_CANDIDATES_GENERIC_VALUES) */
  leir_candidates_options go;
  st = LEIR__OPTIONS_READ(leir_candidates_options, &go, opts, LEIR_CANDIDATES_OPTIONS_INIT);
  if (st != LEIR_OK) goto done;
  go.flags |= LEIR_CANDIDATES_GENERIC_VALUES;
  leir_candidates *all = NULL;
  st = leir_candidates_list(&all, before, &go);
  if (st != LEIR_OK) goto done;
  struct leir_candidates *hits = NULL;
  st = leir__candidates_new(&hits, all->ctx);
  if (st != LEIR_OK) {
    leir_candidates_free(all);
    goto done;
  }
  all->ctx = NULL; /* moved to `hits` */
  ground_ctx g = {before, target, want, first, last, P, S, n, NULL};
  st = ground_pass(&g, all, hits);
  leir_candidates_free(all);
  if (st == LEIR_OK && hits->l.steps.len == 0 && (go.strategy < 0 || is_split(go.strategy))) {
    /* nothing grounds: the split strategies' refused and compound-shift
     * forms, each only with a verified answer (docs/strategies.md, "Gated
     * grounding"); the caller's last error survives these internal calls */
    leir__error_state saved;
    leir__error_save(&saved);
    gate gt = {verifier, 0};
    g.gate = &gt;
    struct leir_candidates *rh = NULL;
    st = ground_relaxed(&g, &go, &rh);
    if (st == LEIR_OK && rh->l.steps.len) {
      leir_candidates_free(hits);
      hits = rh;
    } else {
      leir_candidates_free(rh);
    }
    /* the pass only adds: its failures (a max_candidates limit reached by
     * the relaxed list) leave the first pass's answer, but for memory */
    if (st != LEIR_ERR_NOMEM) {
      st = LEIR_OK;
      leir__error_restore(&saved);
    }
  }
  if (st != LEIR_OK) {
    leir_candidates_free(hits);
    goto done;
  }
  *out = hits;
done:
  leir_program_free(target);
  free(first);
  free(last);
  free(kb);
  free(ka);
  return st;
}
