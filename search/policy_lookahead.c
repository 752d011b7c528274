/* The cost policy's model-guided lookahead (search/policy.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy.h"
#include "leir/experimental/cost.h"

#include "clock.h"
#include "error.h"
#include "hashset.h"

/* ---- model-guided lookahead ------------------------------------------------

   A beam search in the cost model only (nothing compiled or measured) over
   sequences of up to `lookahead_depth` steps from a node. A program's
   *potential* is the model's time after at most LA_MARKS further marking
   steps (P, V, U: loop_parallelization, loop_vectorization,
   loop_unrolling), taken greedily, each only when the model predicts a
   gain: a structural step (a split, a tiling, a reorder) that enables a
   good marking is valued for what it enables, although the model sees no
   gain in it alone. Each level keeps the `lookahead_width` programs of
   lowest potential; per expansion each strategy contributes at most
   LA_PRICE priced candidates (spread evenly over its enumeration) and
   LA_KEEP children, so that the hundreds of splits, tilings and
   factorizations of a loop nest do not fill the beam. The best sequence
   seen (its steps, then the marking steps of its potential) becomes one
   macro-step of the policy. */
#define LA_MARKS 3
#define LA_PRICE 32
#define LA_KEEP 6
#define LA_SAME 3
#define LA_DISTINCT 0.005

typedef struct la_state {
  leir_program *p;
  uint64_t h;
  double t;      /* predicted seconds */
  double pot;    /* its potential */
  uint64_t fh;   /* hash of the program that reaches the potential */
  char *steps;   /* the steps from the node, one a line ("" at the node) */
  char *marks;   /* the marking steps of the potential, one a line */
  int32_t strategy;
  size_t order;  /* enumeration order, the last tie-break */
} la_state;

typedef struct la_run {
  const leir_search_query *query; /* the policy's query: the node, the search's options */
  leir_candidates_options copts;
  int32_t mark[3];
  uint64_t evals, max_evals, reserve;
  double deadline;
  bool stop, pruning;
  leir__hashset seen; /* alpha hashes visited */
} la_run;

/* Whether the lookahead may make another evaluation. The beam leaves
 * `reserve` evaluations of the budget to the pruning of its best sequence,
 * which ignores the time budget (it replays at most a few dozen short
 * sequences). */
static bool la_budget(la_run *L) {
  if (L->stop) return false;
  uint64_t cap = L->max_evals ? L->max_evals - (L->pruning ? 0 : L->reserve) : 0;
  const volatile int *cancel = L->query->options->cancel;
  if ((cap && L->evals >= cap) || (cancel && *cancel) ||
      (!L->pruning && (L->evals & 63) == 0 && leir__now() >= L->deadline))
    L->stop = true;
  return !L->stop;
}

static double la_eval(la_run *L, const leir_program *p) {
  L->evals++;
  return leir__policy_cost_score(L->query, p);
}

/* Adds h to the lookahead's visited set; false when it was there (or no
 * memory: the program is then skipped). */
static bool la_visit(la_run *L, uint64_t h) { return leir__hashset_add(&L->seen, h) == 1; }

static char *la_join(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  char *s = malloc(la + lb + 2);
  if (!s) return NULL;
  memcpy(s, a, la);
  size_t o = la;
  if (la && lb) s[o++] = '\n';
  memcpy(s + o, b, lb);
  s[o + lb] = 0;
  return s;
}

/* Whether an unrolling step ("loop_unrolling nest=N loop=V") names a
 * top-level loop of more than LA_UNROLL iterations: the potential leaves it
 * out (a register tile unrolls a few rows; the model sees no gain in
 * unrolling a long loop, and pricing it costs evaluations). */
#define LA_UNROLL 16
static bool la_long_unroll(const leir_program *p, const char *step) {
  const char *ns = strstr(step, "nest="), *ls = strstr(step, "loop=");
  if (!ns || !ls) return false;
  size_t ni = (size_t)strtoul(ns + 5, NULL, 10);
  const leir_nest *nest = leir_program_nest(p, ni);
  if (!nest) return false;
  size_t vl = strcspn(ls + 5, " ");
  for (size_t i = 0; i < leir_nest_loop_count(nest); i++) {
    leir_loop l = leir_nest_loop(p, nest, i);
    if (l.var && strlen(l.var) == vl && strncmp(l.var, ls + 5, vl) == 0)
      return l.extent > LA_UNROLL;
  }
  return false;
}

/* The potential of x (x->t set): x->pot, x->fh and x->marks. */
static bool la_potential(la_run *L, la_state *x) {
  const leir_program *cur = x->p;
  leir_program *own = NULL;
  double best = x->t;
  char *marks = strdup("");
  if (!marks) return false;
  for (int lvl = 0; lvl < LA_MARKS && la_budget(L); lvl++) {
    leir_program *lp = NULL;
    char *ls = NULL;
    double lt = best * (1 - 1e-3); /* a marking must gain to count */
    for (int k = 0; k < 3 && la_budget(L); k++) {
      if (L->mark[k] < 0) continue;
      leir_candidates_options o = L->copts;
      o.strategy = L->mark[k];
      leir_candidates *c = NULL;
      if (leir_candidates_list(&c, cur, &o) != LEIR_OK) continue;
      for (size_t i = 0; i < leir_candidates_count(c) && la_budget(L); i++) {
        if (k == 2 && la_long_unroll(cur, leir_step_text(leir_candidates_step(c, i)))) continue;
        leir_program *q = NULL;
        if (leir_candidates_apply(&q, c, i) != LEIR_OK) continue;
        double t = la_eval(L, q);
        if (t < lt) {
          char *st = strdup(leir_step_text(leir_candidates_step(c, i)));
          if (st) {
            leir_program_free(lp);
            free(ls);
            lp = q, ls = st, lt = t;
            q = NULL;
          }
        }
        leir_program_free(q);
      }
      leir_candidates_free(c);
    }
    if (!lp) break;
    char *nm = la_join(marks, ls);
    free(ls);
    if (!nm) {
      leir_program_free(lp);
      break;
    }
    free(marks);
    marks = nm;
    leir_program_free(own);
    own = lp;
    cur = lp;
    best = lt;
  }
  x->pot = best;
  x->fh = leir_program_hash_alpha(cur);
  x->marks = marks;
  leir_program_free(own);
  return true;
}

static void la_state_free(la_state *x) {
  leir_program_free(x->p);
  free(x->steps);
  free(x->marks);
  memset(x, 0, sizeof *x);
}

static int la_cmp_t(const void *a, const void *b) {
  const la_state *x = a, *y = b;
  if (x->strategy != y->strategy) return x->strategy < y->strategy ? -1 : 1;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order ? 1 : 0;
}

static int la_cmp_order(const void *a, const void *b) {
  const la_state *x = a, *y = b;
  return x->order < y->order ? -1 : x->order > y->order ? 1 : 0;
}

static int la_cmp_pot(const void *a, const void *b) {
  const la_state *x = a, *y = b;
  double tol = 1e-9 * (fabs(x->pot) + fabs(y->pot));
  if (x->pot < y->pot - tol) return -1;
  if (x->pot > y->pot + tol) return 1;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order ? 1 : 0;
}

/* Children of x (priced, capped per strategy, with their potentials),
 * appended to *pool. */
static bool la_expand(la_run *L, const la_state *x, la_state **pool, size_t *npool,
                      size_t *cappool, size_t *order) {
  leir_candidates *c = NULL;
  if (leir_candidates_list(&c, x->p, &L->copts) != LEIR_OK) return true;
  size_t n = leir_candidates_count(c);
  /* candidate indices grouped by strategy, enumeration order inside */
  size_t *idx = malloc((n ? n : 1) * sizeof *idx);
  la_state *kids = calloc(n ? n : 1, sizeof *kids);
  if (!idx || !kids) {
    free(idx);
    free(kids);
    leir_candidates_free(c);
    return false;
  }
  for (size_t i = 0; i < n; i++) idx[i] = i;
  for (size_t i = 1; i < n; i++) /* stable by strategy */
    for (size_t j = i; j > 0 &&
                       leir_step_strategy(leir_candidates_step(c, idx[j - 1])) >
                           leir_step_strategy(leir_candidates_step(c, idx[j]));
         j--) {
      size_t t = idx[j];
      idx[j] = idx[j - 1];
      idx[j - 1] = t;
    }
  size_t nk = 0;
  for (size_t g = 0; g < n && la_budget(L);) {
    size_t s0 = leir_step_strategy(leir_candidates_step(c, idx[g])), e = g;
    while (e < n && leir_step_strategy(leir_candidates_step(c, idx[e])) == s0) e++;
    size_t cnt = e - g, take = cnt < LA_PRICE ? cnt : LA_PRICE;
    size_t first = nk;
    /* the spread, then the reduction lanes forms the spread skipped: a
     * strategy's few candidates beyond the reference's domain that the
     * caller asked for (LEIR_CANDIDATES_REDUCTION_LANES) would otherwise be
     * lost among the thousands of `at=` splits of the same reductions */
    size_t extra = take < cnt ? cnt : 0;
    for (size_t k = 0; k < take + extra && la_budget(L); k++) {
      size_t i;
      if (k < take) {
        i = idx[g + (take == cnt ? k : k * cnt / take)];
      } else {
        size_t at = k - take;
        bool picked = false;
        for (size_t t = 0; t < take && !picked; t++) picked = t * cnt / take == at;
        i = idx[g + at];
        if (picked || !strstr(leir_step_text(leir_candidates_step(c, i)), " lanes=")) continue;
      }
      leir_program *q = NULL;
      if (leir_candidates_apply(&q, c, i) != LEIR_OK) continue;
      uint64_t h = leir_program_hash_alpha(q);
      if (!la_visit(L, h)) {
        leir_program_free(q);
        continue;
      }
      la_state *y = &kids[nk++];
      y->p = q;
      y->h = h;
      y->t = la_eval(L, q);
      y->strategy = (int32_t)s0;
      y->order = (*order)++;
      char *st = la_join(x->steps, leir_step_text(leir_candidates_step(c, i)));
      y->steps = st;
      if (!st || !isfinite(y->t)) la_state_free(&kids[--nk]);
    }
    /* LA_KEEP children of this strategy get a potential: the fastest half
     * by the model, and the other half spread evenly over the rest in
     * enumeration order: a plateau step (a split the model prices like its
     * parent) gains nothing alone, so its rank among its ties says little
     * about what it enables */
    qsort(kids + first, nk - first, sizeof *kids, la_cmp_t);
    if (nk - first > LA_KEEP) {
      size_t fast = LA_KEEP / 2, rest = nk - first - fast, spread = LA_KEEP - fast;
      /* the rest back in enumeration order */
      qsort(kids + first + fast, rest, sizeof *kids, la_cmp_order);
      for (size_t k = 0; k < spread; k++) {
        size_t from = first + fast + (k * rest + rest / 2) / spread, to = first + fast + k;
        la_state t = kids[to];
        kids[to] = kids[from];
        kids[from] = t;
      }
      while (nk - first > LA_KEEP) la_state_free(&kids[--nk]);
    }
    for (size_t k = first; k < nk; k++)
      if (!la_budget(L) || !la_potential(L, &kids[k])) {
        while (nk > k) la_state_free(&kids[--nk]);
        break;
      }
    g = e;
  }
  free(idx);
  leir_candidates_free(c);
  if (*npool + nk > *cappool) {
    size_t ncap = (*npool + nk) * 2;
    la_state *np = realloc(*pool, ncap * sizeof *np);
    if (!np) {
      for (size_t k = 0; k < nk; k++) la_state_free(&kids[k]);
      free(kids);
      return false;
    }
    *pool = np;
    *cappool = ncap;
  }
  memcpy(*pool + *npool, kids, nk * sizeof *kids);
  *npool += nk;
  free(kids);
  return true;
}

/* Replays the lines of `seq` but line `skip` (SIZE_MAX: none) from p, each
 * matched by text among the candidates of the program before it: the
 * result, or NULL when a line is not a candidate there. */
static leir_program *la_replay(const la_run *L, const leir_program *p, const char *seq,
                               size_t skip) {
  leir_program *cur = NULL;
  if (leir_program_clone(&cur, p) != LEIR_OK) return NULL;
  size_t line = 0;
  for (const char *s = seq; s && *s; line++) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    if (line != skip) {
      leir_candidates *c = NULL;
      leir_program *next = NULL;
      if (leir_candidates_list(&c, cur, &L->copts) == LEIR_OK)
        for (size_t i = 0; i < leir_candidates_count(c); i++) {
          const char *t = leir_step_text(leir_candidates_step(c, i));
          if (strlen(t) == len && strncmp(t, s, len) == 0) {
            if (leir_candidates_apply(&next, c, i) != LEIR_OK) next = NULL;
            break;
          }
        }
      leir_candidates_free(c);
      leir_program_free(cur);
      if (!next) return NULL;
      cur = next;
    }
    s = nl ? nl + 1 : NULL;
  }
  return cur;
}

/* Drops the steps of the best sequence that the model does not need: from
 * the last to the first, a step whose removal leaves a sequence that still
 * replays and is predicted no slower goes (a tiling by 2 x 2 or an unroll
 * of an outer loop the beam took on the way costs a compilation and
 * measurement risk for nothing). A step that names loops a later step uses
 * cannot go: the later step's text no longer matches. */
static void la_prune(la_run *L, char **seq, double *pot, uint64_t *fh) {
  const leir_search_query *query = L->query;
  size_t lines = 1;
  for (const char *c = *seq; *c; c++) lines += *c == '\n';
  L->pruning = true;
  L->stop = false;
  for (size_t i = lines; i-- > 0 && lines > 1 && la_budget(L);) {
    leir_program *q = la_replay(L, query->program, *seq, i);
    if (!q) continue;
    double t = la_eval(L, q);
    uint64_t h = leir_program_hash_alpha(q);
    leir_program_free(q);
    if (!(t <= *pot * (1 + 1e-3)) || h == query->program_hash || query->known(query, h)) continue;
    /* remove line i */
    char *s = *seq, *start = s;
    for (size_t k = 0; k < i; k++) start = strchr(start, '\n') + 1;
    char *end = strchr(start, '\n');
    if (end)
      memmove(start, end + 1, strlen(end + 1) + 1);
    else if (start > s)
      start[-1] = 0;
    else
      *start = 0;
    lines--;
    if (t < *pot) *pot = t;
    *fh = h;
  }
}


static bool la_consider(la_run *L, la_best *top, const la_state *x) {
  const leir_search_query *query = L->query;
  size_t len = (*x->steps ? 1 : 0) + (*x->marks ? 1 : 0);
  for (const char *c = x->steps; *c; c++) len += *c == '\n';
  for (const char *c = x->marks; *c; c++) len += *c == '\n';
  if (len < 2 || !isfinite(x->pot) || x->fh == query->program_hash || query->known(query, x->fh))
    return true;
  size_t slot = LA_TOP;
  for (size_t k = 0; k < LA_TOP && top[k].seq; k++)
    if (top[k].fh == x->fh || fabs(top[k].pot - x->pot) <= LA_DISTINCT * x->pot) {
      if (!(x->pot < top[k].pot)) return true;
      slot = k; /* replaces its near twin */
      break;
    }
  if (slot == LA_TOP) {
    slot = LA_TOP - 1;
    if (top[slot].seq && !(x->pot < top[slot].pot)) return true;
  }
  char *seq = la_join(x->steps, x->marks);
  if (!seq) return false;
  free(top[slot].seq);
  top[slot].seq = seq;
  top[slot].pot = x->pot;
  top[slot].fh = x->fh;
  /* keep the list sorted by potential, empty entries last */
  for (size_t a = 1; a < LA_TOP; a++)
    for (size_t b = a; b > 0; b--) {
      double pb = top[b].seq ? top[b].pot : INFINITY, pa = top[b - 1].seq ? top[b - 1].pot : INFINITY;
      if (!(pb < pa)) break;
      la_best t = top[b];
      top[b] = top[b - 1];
      top[b - 1] = t;
    }
  return true;
}

/* The lookahead from node n: on success top[0..LA_TOP) holds the best
 * sequences (steps then marking steps, one a line; owned; seq NULL when
 * fewer were found), best first, each of two or more steps reaching a new
 * program, with its potential and the hash of its program. */
leir_status leir__policy_lookahead(const leir_search_query *query, double t0, la_best *top) {
  const leir_search_options *o = query->options;
  memset(top, 0, LA_TOP * sizeof *top);
  la_run L;
  memset(&L, 0, sizeof L);
  L.seen = (leir__hashset)LEIR__HASHSET_INIT(4096);
  L.query = query;
  L.copts = *query->candidate_options;
  L.max_evals = o->lookahead_evals;
  L.reserve = L.max_evals / 10 < 64 ? L.max_evals / 10 : 64;
  double secs = o->lookahead_seconds > 0 ? o->lookahead_seconds : INFINITY;
  /* the time left when the policy was called, less what it has used since */
  double left = query->time_left_s - (leir__now() - t0);
  if (!(left > 0)) left = 0;
  if (left < secs) secs = left;
  L.deadline = leir__now() + secs;
  static const char *const marks[3] = {"loop_parallelization", "loop_vectorization",
                                       "loop_unrolling"};
  for (int k = 0; k < 3; k++) {
    size_t si;
    L.mark[k] = leir_strategy_find(marks[k], &si) == LEIR_OK ? (int32_t)si : -1;
  }
  uint32_t width = o->lookahead_width ? o->lookahead_width : 1;
  la_state *beam = calloc(1, sizeof *beam), *pool = NULL;
  size_t nbeam = 1, npool = 0, cappool = 0, order = 0;
  leir_status st = LEIR_OK;
  if (!beam || leir_program_clone(&beam[0].p, query->program) != LEIR_OK ||
      !(beam[0].steps = strdup(""))) {
    st = leir__error_nomem();
    goto done;
  }
  beam[0].h = query->program_hash;
  la_visit(&L, query->program_hash);
  beam[0].t = la_eval(&L, query->program);
  beam[0].strategy = -1;
  if (!la_potential(&L, &beam[0]) || !la_consider(&L, top, &beam[0])) {
    st = leir__error_nomem();
    goto done;
  }
  for (uint32_t depth = 0; depth < o->lookahead_depth && la_budget(&L); depth++) {
    for (size_t i = 0; i < nbeam && la_budget(&L); i++)
      if (!la_expand(&L, &beam[i], &pool, &npool, &cappool, &order)) {
        st = leir__error_nomem();
        goto done;
      }
    if (!npool) break;
    /* every child with a potential is a candidate sequence, kept in the
     * beam or not */
    for (size_t i = 0; i < npool; i++)
      if (!la_consider(&L, top, &pool[i])) {
        st = leir__error_nomem();
        goto done;
      }
    qsort(pool, npool, sizeof *pool, la_cmp_pot);
    for (size_t i = 0; i < nbeam; i++) la_state_free(&beam[i]);
    free(beam);
    /* the next beam: lowest potential first, at most LA_SAME programs of
     * one potential (within LA_DISTINCT), so that the beam does not fill
     * with variants of one program (tilings by 2 x 2, 2 x 4, ... of a
     * nest whose potential they do not change) and keeps the structural
     * steps whose gain is more than one step away */
    nbeam = 0;
    for (size_t i = 0; i < npool; i++) {
      size_t same = 0;
      for (size_t j = 0; j < nbeam && same < LA_SAME; j++)
        same += fabs(pool[j].pot - pool[i].pot) <= LA_DISTINCT * pool[i].pot;
      if (nbeam < width && same < LA_SAME) {
        la_state t = pool[nbeam];
        pool[nbeam++] = pool[i];
        pool[i] = t;
      }
    }
    for (size_t i = nbeam; i < npool; i++) la_state_free(&pool[i]);
    beam = pool;
    pool = NULL;
    npool = cappool = 0;
  }
  for (size_t k = 0; k < LA_TOP && top[k].seq; k++) {
    la_prune(&L, &top[k].seq, &top[k].pot, &top[k].fh);
    for (size_t j = 0; j < k; j++)
      if (top[j].seq && top[j].fh == top[k].fh) {
        free(top[k].seq);
        top[k].seq = NULL;
        top[k].pot = INFINITY;
        break;
      }
  }
done:
  if (st != LEIR_OK)
    for (size_t k = 0; k < LA_TOP; k++) free(top[k].seq), top[k].seq = NULL;
  for (size_t i = 0; beam && i < nbeam; i++) la_state_free(&beam[i]);
  for (size_t i = 0; i < npool; i++) la_state_free(&pool[i]);
  free(beam);
  free(pool);
  leir__hashset_release(&L.seen);
  query->count_lookahead(query, L.evals);
  return st;
}

