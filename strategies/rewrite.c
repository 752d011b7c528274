/*
 * IR helpers shared by the strategies: substituting and renaming loop
 * variables, renaming tensors, divisor pairs, the copy-nest fix-up of the
 * reference, index ranges, GPU axes. (Fresh names: names.c.)
 */
#include <string.h>

#include "kit.h"
#include "vec.h"
#include "visit.h"

/* ---- building ------------------------------------------------------------ */

leir_expr *leir__mk_var(leir_program *p, uint32_t sym) { return leir__new_var(p, sym); }

leir_expr *leir__mk_int(leir_program *p, int64_t v) { return leir__new_int(p, v); }

leir_expr *leir__mk_bin(leir_program *p, leir_op op, leir_expr *a, leir_expr *b) {
  return leir__new_binary(p, op, a, b);
}

/* ---- walking -------------------------------------------------------------- */

static int find_var(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  const leir_expr *e = *slot;
  if (e->kind == LEIR_EXPR_VAR && e->sym == *(const uint32_t *)v->ud) return LEIR__VISIT_STOP;
  return LEIR__VISIT_NEXT;
}

bool leir__expr_uses_var(const leir_expr *e, uint32_t sym) {
  leir__visit v = LEIR__VISIT_INIT(find_var, &sym);
  return !leir__visit_const(&v, e);
}

typedef struct tensor_find {
  uint32_t sym;             /* LEIR__NOSYM: any tensor */
  const leir_expr *skip;
  bool subscript_only;
  const leir_program *p;    /* by name */
  const char *name;
} tensor_find;

static int find_tensor(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  const tensor_find *f = v->ud;
  const leir_expr *e = *slot;
  if (e == f->skip) return LEIR__VISIT_SKIP;
  if (e->kind != LEIR_EXPR_TENSOR) return LEIR__VISIT_NEXT;
  if (f->subscript_only && v->tensors == 0) return LEIR__VISIT_NEXT;
  if (f->name) return strcmp(leir__sym_name(f->p, e->sym), f->name) == 0 ? LEIR__VISIT_STOP
                                                                         : LEIR__VISIT_NEXT;
  return f->sym == LEIR__NOSYM || e->sym == f->sym ? LEIR__VISIT_STOP : LEIR__VISIT_NEXT;
}

bool leir__expr_reads_tensor(const leir_expr *e, uint32_t sym, const leir_expr *skip) {
  tensor_find f = {sym, skip, false, NULL, NULL};
  leir__visit v = LEIR__VISIT_INIT(find_tensor, &f);
  return !leir__visit_const(&v, e);
}

bool leir__expr_tensor_in_subscript(const leir_expr *e, uint32_t sym) {
  tensor_find f = {sym, NULL, true, NULL, NULL};
  leir__visit v = LEIR__VISIT_INIT(find_tensor, &f);
  return !leir__visit_const(&v, e);
}

bool leir__nest_uses_tensor_named(const leir_program *p, const leir_nest *n, const char *name) {
  tensor_find f = {LEIR__NOSYM, NULL, false, p, name};
  leir__visit v = LEIR__VISIT_INIT(find_tensor, &f);
  return !leir__visit_nest(&v, n);
}

static int set_scope_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  const uint32_t *ss = v->ud;
  if ((*slot)->kind == LEIR_EXPR_TENSOR && (*slot)->sym == ss[0]) (*slot)->scope = (uint8_t)ss[1];
  return LEIR__VISIT_NEXT;
}

void leir__set_tensor_scope(leir_nest *n, uint32_t sym, leir_scope sc) {
  uint32_t ss[2] = {sym, (uint32_t)sc};
  leir__visit v = LEIR__VISIT_INIT(set_scope_node, ss);
  leir__visit_nest(&v, n);
}

/* A node that prints without surrounding operators of its own. */
static bool atomic(const leir_expr *e) {
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER:
    case LEIR_EXPR_INF:
    case LEIR_EXPR_VAR:
    case LEIR_EXPR_TENSOR:
    case LEIR_EXPR_PAREN:
    case LEIR_EXPR_CALL: return true;
    default: return false;
  }
}

/* The variable "touches an operator" when its parent is one. */
static bool operator_parent(const leir_expr *parent) {
  if (!parent) return false;
  switch ((leir_expr_kind)parent->kind) {
    case LEIR_EXPR_BINARY:
    case LEIR_EXPR_NEG:
    case LEIR_EXPR_COMPARE:
    case LEIR_EXPR_AND:
    case LEIR_EXPR_OR: return true;
    default: return false;
  }
}

typedef struct subst {
  leir_program *p;
  uint32_t sym;
  const leir_expr *with;
} subst;

static int subst_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  const subst *s = v->ud;
  leir_expr *e = *slot;
  if (e->kind != LEIR_EXPR_VAR) return LEIR__VISIT_NEXT;
  if (e->sym != s->sym) return LEIR__VISIT_SKIP;
  leir_expr *r = leir__copy_expr(s->p, s->p, s->with);
  if (!atomic(s->with) && operator_parent(parent)) r = leir__new_unary(s->p, LEIR_EXPR_PAREN, r);
  r->pos = LEIR__NOPOS;
  *slot = r;
  return LEIR__VISIT_SKIP; /* not into the replacement, which may use sym */
}

void leir__subst_var(leir_program *p, leir_nest *n, uint32_t sym, const leir_expr *with) {
  subst s = {p, sym, with};
  leir__visit v = LEIR__VISIT_INIT(subst_node, &s);
  leir__visit_nest(&v, n);
}

static int rename_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  const uint32_t *ft = v->ud;
  if ((*slot)->kind == LEIR_EXPR_VAR && (*slot)->sym == ft[0]) (*slot)->sym = ft[1];
  return LEIR__VISIT_NEXT;
}

static void rename_loops(leir_nest *n, uint32_t from, uint32_t to) {
  for (uint32_t k = 0; k < n->nloops; k++)
    if (n->loops[k].sym == from) n->loops[k].sym = to;
  for (uint32_t k = 0; k < n->nitems; k++)
    if (n->items[k].nest) rename_loops(n->items[k].nest, from, to);
}

void leir__rename_var(leir_nest *n, uint32_t from, uint32_t to) {
  rename_loops(n, from, to);
  uint32_t ft[2] = {from, to};
  leir__visit v = LEIR__VISIT_INIT(rename_node, ft);
  leir__visit_nest(&v, n);
}

typedef struct rename_t {
  uint32_t from, to;
  leir_scope sc;
} rename_t;

static int rename_tensor_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  const rename_t *r = v->ud;
  leir_expr *e = *slot;
  if (e->kind == LEIR_EXPR_TENSOR && e->sym == r->from) {
    e->sym = r->to;
    e->scope = (uint8_t)r->sc;
  }
  return LEIR__VISIT_NEXT;
}

void leir__rename_tensor(leir_nest *n, uint32_t from, uint32_t to, leir_scope sc) {
  rename_t r = {from, to, sc};
  leir__visit v = LEIR__VISIT_INIT(rename_tensor_node, &r);
  leir__visit_nest(&v, n);
}

typedef struct loops_in {
  const leir_nest *n;
  uint64_t mask;
} loops_in;

static int loops_in_node(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  loops_in *s = v->ud;
  if ((*slot)->kind != LEIR_EXPR_VAR) return LEIR__VISIT_NEXT;
  for (uint32_t k = 0; k < s->n->nloops && k < 64; k++)
    if (s->n->loops[k].sym == (*slot)->sym) {
      s->mask |= (uint64_t)1 << k;
      break;
    }
  return LEIR__VISIT_NEXT;
}

uint64_t leir__loops_in(const leir_nest *n, const leir_expr *e) {
  loops_in s = {n, 0};
  leir__visit v = LEIR__VISIT_INIT(loops_in_node, &s);
  leir__visit_const(&v, e);
  return s.mask;
}

/* ---- numbers ----------------------------------------------------------------- */

uint32_t leir__divisors(int64_t n, int64_t *out, uint32_t cap) {
  uint32_t k = 0;
  for (int64_t d = 2; d <= n / d && k < cap; d++)
    if (n % d == 0) out[k++] = d;
  return k;
}

/* ---- copy nests ----------------------------------------------------------------- */

/* Affine form of e over the loops of n (coef by loop index, n->nloops <= 64),
 * or false. Iterative, so that subscripts nested as deep as the parser
 * allows (max_depth=1000) need no stack: the pending nodes and the forms of
 * the evaluated children live in small local arrays that move to the heap
 * when a deep tree outgrows them. A form is nloops coefficients and the
 * constant. */
typedef struct aff_node {
  const leir_expr *e;
  uint8_t state; /* children already pushed */
} aff_node;

typedef struct aff_eval {
  aff_node local_nodes[32], *nodes;
  int64_t local_forms[8 * 65], *forms;
  size_t nnodes, cap_nodes, nforms, cap_forms; /* cap_forms counts forms */
  size_t stride;                               /* nloops + 1 */
  bool failed;
} aff_eval;

/* Grows one of the arrays (moving it off the local storage on first growth). */
static bool aff_grow(void **data, void *local, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t c;
  if (!leir__vec_next_cap(*cap, need, elem, 0, SIZE_MAX, &c)) return false;
  void *p = realloc(*data == local ? NULL : *data, c * elem);
  if (!p) return false;
  if (*data == local) memcpy(p, local, *cap * elem);
  *data = p;
  *cap = c;
  return true;
}

static bool aff_push_node(aff_eval *s, const leir_expr *e) {
  if (!aff_grow((void **)&s->nodes, s->local_nodes, &s->cap_nodes, s->nnodes + 1,
                sizeof *s->nodes))
    return false;
  s->nodes[s->nnodes++] = (aff_node){e, 0};
  return true;
}

/* A new zero form on top of the form stack, or NULL. */
static int64_t *aff_push_form(aff_eval *s) {
  if (!aff_grow((void **)&s->forms, s->local_forms, &s->cap_forms, s->nforms + 1,
                s->stride * sizeof *s->forms))
    return NULL;
  int64_t *f = &s->forms[s->nforms++ * s->stride];
  memset(f, 0, s->stride * sizeof *f);
  return f;
}

/* Combines the two forms on top (l below r) into l by the binary node e. */
static bool aff_binary(aff_eval *s, const leir_expr *e, uint32_t nl) {
  int64_t *l = &s->forms[(s->nforms - 2) * s->stride], *r = l + s->stride;
  int64_t lc = l[nl], rc = r[nl];
  s->nforms--;
  bool lvar = false, rvar = false;
  for (uint32_t k = 0; k < nl; k++) lvar |= l[k] != 0, rvar |= r[k] != 0;
  switch ((leir_op)e->op) {
    case LEIR_OP_ADD:
    case LEIR_OP_SUB: {
      int64_t sg = e->op == LEIR_OP_ADD ? 1 : -1;
      for (uint32_t k = 0; k < nl; k++)
        if (__builtin_mul_overflow(r[k], sg, &r[k]) || __builtin_add_overflow(l[k], r[k], &l[k]))
          return false;
      return !__builtin_mul_overflow(rc, sg, &rc) && !__builtin_add_overflow(lc, rc, &l[nl]);
    }
    case LEIR_OP_MUL: {
      if (lvar && rvar) return false;
      const int64_t *v = lvar ? l : r;
      int64_t k0 = lvar ? rc : lc, base = lvar ? lc : rc;
      for (uint32_t k = 0; k < nl; k++)
        if (__builtin_mul_overflow(v[k], k0, &l[k])) return false;
      return !__builtin_mul_overflow(base, k0, &l[nl]);
    }
    default: return false;
  }
}

/* Evaluates the tree in post-order; the form of e is then the only one. */
static bool aff_run(aff_eval *s, const leir_nest *n, const leir_expr *root) {
  uint32_t nl = n->nloops;
  if (!aff_push_node(s, root)) return false;
  while (s->nnodes) {
    aff_node *t = &s->nodes[s->nnodes - 1];
    const leir_expr *e = t->e;
    switch ((leir_expr_kind)e->kind) {
      case LEIR_EXPR_NUMBER: {
        if (!e->u.num->is_int) return false;
        int64_t *f = aff_push_form(s);
        if (!f) return false;
        f[nl] = e->u.num->ival;
        s->nnodes--;
        break;
      }
      case LEIR_EXPR_VAR: {
        uint32_t k = 0;
        while (k < nl && n->loops[k].sym != e->sym) k++;
        if (k == nl) return false;
        int64_t *f = aff_push_form(s);
        if (!f) return false;
        f[k] = 1;
        s->nnodes--;
        break;
      }
      case LEIR_EXPR_PAREN:
      case LEIR_EXPR_NEG:
      case LEIR_EXPR_BINARY:
        if (t->state < (e->kind == LEIR_EXPR_BINARY ? 2 : 1)) {
          /* left child first: its failure ends the walk before the right one */
          const leir_expr *kid = e->kids[t->state++];
          if (!aff_push_node(s, kid)) return false;
          break;
        }
        s->nnodes--;
        if (e->kind == LEIR_EXPR_NEG) {
          int64_t *f = &s->forms[(s->nforms - 1) * s->stride];
          for (uint32_t k = 0; k <= nl; k++) f[k] = -f[k];
        } else if (e->kind == LEIR_EXPR_BINARY && !aff_binary(s, e, nl)) {
          return false;
        }
        break;
      default: return false;
    }
  }
  return true;
}

static bool affine_in(const leir_nest *n, const leir_expr *e, int64_t *coef, int64_t *c) {
  aff_eval s;
  s.nodes = s.local_nodes;
  s.forms = s.local_forms;
  s.nnodes = s.nforms = 0;
  s.cap_nodes = sizeof s.local_nodes / sizeof *s.local_nodes;
  s.stride = (size_t)n->nloops + 1;
  s.cap_forms = sizeof s.local_forms / sizeof *s.local_forms / s.stride;
  bool ok = aff_run(&s, n, e);
  if (ok) {
    memcpy(coef, s.forms, n->nloops * sizeof *coef);
    *c = s.forms[n->nloops];
  }
  if (s.nodes != s.local_nodes) free(s.nodes);
  if (s.forms != s.local_forms) free(s.forms);
  return ok;
}

uint64_t leir__pinned_by_subscript(const leir_nest *n, const leir_expr *t) {
  if (n->nloops > 64) return 0;
  uint64_t pinned = 0;
  for (uint32_t d = 0; d < t->n; d++) {
    int64_t coef[64], c;
    if (!affine_in(n, t->kids[d], coef, &c)) continue;
    int64_t ext[64];
    for (uint32_t k = 0; k < n->nloops; k++) ext[k] = n->loops[k].extent;
    uint64_t det = leir__affine_determined(coef, ext, n->nloops);
    for (uint32_t k = 0; k < n->nloops; k++)
      if (coef[k]) pinned |= det & ((uint64_t)1 << k);
  }
  return pinned;
}

int leir__fixup_index(const leir_nest *src, const uint32_t *sel, uint32_t n, uint64_t pinned) {
  for (uint32_t k = 0; k < n; k++)
    if (src->loops[sel[k]].kind == LEIR_LOOP_BOUND && (pinned >> sel[k] & 1)) return (int)n;
  for (uint32_t k = 0; k < n; k++)
    if (src->loops[sel[k]].extent < 1024 && (pinned >> sel[k] & 1)) return (int)k;
  return -1;
}

void leir__copy_nest_kinds(leir_nest *m) {
  uint64_t pinned = ~(uint64_t)0, used = 0;
  for (uint32_t i = 0; i < m->nitems; i++) {
    const leir_expr *lhs = m->items[i].eq->lhs;
    pinned &= leir__pinned_by_subscript(m, lhs);
    used |= leir__loops_in(m, lhs);
  }
  for (uint32_t j = 0; j < m->nloops && j < 64; j++) {
    leir__loop *lp = &m->loops[j];
    if (lp->extent <= 1 || (pinned >> j & 1)) continue;
    if (lp->kind == LEIR_LOOP_BOUND && !(used >> j & 1))
      lp->extent = 1;
    else if (lp->kind == LEIR_LOOP_PARALLEL || lp->kind == LEIR_LOOP_VECTORIZED ||
             lp->kind == LEIR_LOOP_BOUND)
      lp->kind = LEIR_LOOP_SERIAL;
  }
}

/* ---- permutations ---------------------------------------------------------------- */

bool leir__next_perm(uint32_t *v, uint32_t n) {
  if (n < 2) return false;
  uint32_t i = n - 1;
  while (i > 0 && v[i - 1] >= v[i]) i--;
  if (i == 0) return false;
  uint32_t j = n - 1;
  while (v[j] <= v[i - 1]) j--;
  uint32_t t = v[i - 1];
  v[i - 1] = v[j];
  v[j] = t;
  for (uint32_t a = i, b = n - 1; a < b; a++, b--) {
    t = v[a];
    v[a] = v[b];
    v[b] = t;
  }
  return true;
}

size_t leir__format_list(char *buf, size_t cap, const uint32_t *v, uint32_t n) {
  if (cap) buf[0] = '\0';
  size_t off = 0;
  for (uint32_t k = 0; k < n && off < cap; k++)
    off += (size_t)snprintf(buf + off, cap - off, k ? ",%u" : "%u", v[k]);
  return off;
}

/* ---- ranges ------------------------------------------------------------------------ */

bool leir__entry_range(const leir__sctx *c, const leir__nref *r, const leir_expr *e, int64_t *lo,
                       int64_t *hi) {
  /* Any equation directly in the nest gives the loop slots. */
  const leir__eqinfo *info = NULL;
  for (uint32_t k = 0; k < r->nest->nitems && !info; k++)
    if (r->nest->items[k].eq) {
      const leir_equation *eq = r->nest->items[k].eq;
      uint32_t idx = eq->id < c->a->nids ? c->a->eq_index[eq->id] : LEIR__NONE;
      if (idx != LEIR__NONE) info = &c->a->eqs[idx];
    }
  if (!info) return false;
  leir__env env;
  leir__env_init(&env, info);
  leir__range rg = leir__index_range(c->a, e, &env);
  if (!rg.known) return false;
  *lo = rg.lo;
  *hi = rg.hi;
  return true;
}

/* ---- GPU axes --------------------------------------------------------------------- */

const char *const leir__axis_names[6] = {"tx", "ty", "tz", "bx", "by", "bz"};

leir__axis leir__axis_of(const char *name) {
  if ((name[0] != 't' && name[0] != 'b') || (name[1] < 'x' || name[1] > 'z')) return LEIR__AXIS_NONE;
  return (leir__axis)((name[0] == 'b' ? 3 : 0) + (name[1] - 'x'));
}

static int64_t axis_limit(leir__axis a) {
  switch (a) {
    case LEIR__AXIS_TX:
    case LEIR__AXIS_TY: return 1024;
    case LEIR__AXIS_TZ: return 64;
    case LEIR__AXIS_BX: return 2147483647;
    case LEIR__AXIS_BY:
    case LEIR__AXIS_BZ: return 65535;
    default: return 0;
  }
}

typedef struct axis_scan {
  const leir_program *p;
  uint32_t except;
  bool used[6];
  int64_t threads; /* product of thread-bound extents */
} axis_scan;

static void scan_axes(axis_scan *s, const leir_nest *n) {
  for (uint32_t k = 0; k < n->nloops; k++) {
    const leir__loop *l = &n->loops[k];
    if (l->kind != LEIR_LOOP_BOUND || l->sym == s->except) continue;
    leir__axis a = leir__axis_of(leir__sym_name(s->p, l->sym));
    if (a == LEIR__AXIS_NONE) continue;
    s->used[a] = true;
    if (a <= LEIR__AXIS_TZ && s->threads <= 1024) s->threads *= l->extent;
  }
  for (uint32_t k = 0; k < n->nitems; k++)
    if (n->items[k].nest) scan_axes(s, n->items[k].nest);
}

bool leir__axis_fits(const leir_program *p, const leir_nest *tree, leir__axis axis, int64_t extent,
                     uint32_t except, const char **why) {
  axis_scan s = {p, except, {false}, 1};
  scan_axes(&s, tree);
  if (s.used[axis]) {
    *why = "another loop of this nest is already bound to that axis";
    return false;
  }
  if (extent > axis_limit(axis)) {
    *why = axis == LEIR__AXIS_TZ ? "thread axis z allows at most 64 threads"
           : axis <= LEIR__AXIS_TY ? "thread axes x and y allow at most 1024 threads"
                                   : "block axes y and z allow at most 65535 blocks";
    return false;
  }
  if (axis <= LEIR__AXIS_TZ && s.threads * extent > 1024) {
    *why = "a block has at most 1024 threads (the product of the thread-bound extents)";
    return false;
  }
  return true;
}
