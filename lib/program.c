/* Program lifecycle, symbols, node builders and deep copies. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ir.h"
#include "vec.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

const char *const leir__loop_kind_letters = "LPVUB";

/* ---- lifecycle -------------------------------------------------------- */

leir_program *leir__program_new(size_t size_hint) {
  leir_program *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  size_t first = size_hint < 512 ? 512 : size_hint;
  if (first > ((size_t)1 << 24)) first = (size_t)1 << 24;
  leir__arena_init(&p->arena, first);
  return p;
}

void leir_program_free(leir_program *p) {
  if (!p) return;
  free(p->nests);
  free(p->line_starts);
  leir__arena_release(&p->arena);
  free(p);
}

static void *oom(leir_program *p) {
  if (p->oom_jmp) longjmp(*p->oom_jmp, LEIR__JMP_OOM);
  return NULL;
}

void *leir__palloc(leir_program *p, size_t size) {
  void *m = leir__arena_alloc(&p->arena, size);
  if (!m) return oom(p);
  memset(m, 0, size);
  return m;
}

char *leir__pstrndup(leir_program *p, const char *s, size_t len) {
  char *m = leir__arena_strndup(&p->arena, s, len);
  if (!m) return oom(p);
  return m;
}

/* ---- symbols ---------------------------------------------------------- */

static uint32_t hash_name(const char *s, size_t len) {
  /* names are short (A, tx, Aqz): pack up to 8 bytes and mix, no call */
  if (len <= 8) {
    uint64_t w = len;
    for (size_t i = 0; i < len; i++) w = (w << 8) | (unsigned char)s[i];
    w *= 0x9E3779B97F4A7C15ull;
    return (uint32_t)(w >> 32);
  }
  return (uint32_t)XXH3_64bits(s, len);
}

static bool same_name(const char *a, const char *b, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (a[i] != b[i]) return false;
  return true;
}

/* The symbol table lives in the program's arena (most programs have a
 * dozen names: no separate mallocs). */
static int symtab_grow_slots(leir_program *p) {
  leir__symtab *t = &p->syms;
  uint32_t nslots = t->nslots ? t->nslots * 2 : 32;
  uint32_t *slots = leir__arena_calloc(&p->arena, nslots, sizeof *slots);
  if (!slots) return 0;
  for (uint32_t s = 0; s < t->count; s++) {
    uint32_t h = hash_name(t->names[s], t->lens[s]) & (nslots - 1);
    while (slots[h]) h = (h + 1) & (nslots - 1);
    slots[h] = s + 1;
  }
  t->slots = slots;
  t->nslots = nslots;
  return 1;
}

uint32_t leir__sym_find(const leir_program *p, const char *s, size_t len) {
  const leir__symtab *t = &p->syms;
  if (!t->nslots) return LEIR__NOSYM;
  uint32_t h = hash_name(s, len) & (t->nslots - 1);
  while (t->slots[h]) {
    uint32_t sym = t->slots[h] - 1;
    if (t->lens[sym] == len && same_name(t->names[sym], s, len)) return sym;
    h = (h + 1) & (t->nslots - 1);
  }
  return LEIR__NOSYM;
}

uint32_t leir__sym_intern(leir_program *p, const char *s, size_t len) {
  leir__symtab *t = &p->syms;
  if (len > UINT32_MAX / 2) {
    oom(p);
    return LEIR__NOSYM;
  }
  uint32_t found = leir__sym_find(p, s, len);
  if (found != LEIR__NOSYM) return found;
  if ((t->count + 1) * 2 > t->nslots && !symtab_grow_slots(p)) {
    oom(p);
    return LEIR__NOSYM;
  }
  if (t->count == t->cap) {
    size_t cap = 0;
    const char **names = NULL;
    uint32_t *lens = NULL;
    if (leir__vec_next_cap(t->cap, (size_t)t->count + 1, sizeof *names, 16, UINT32_MAX, &cap)) {
      names = leir__arena_alloc(&p->arena, cap * sizeof *names);
      lens = leir__arena_alloc(&p->arena, cap * sizeof *lens);
    }
    if (!names || !lens) {
      oom(p);
      return LEIR__NOSYM;
    }
    if (t->count) {
      memcpy(names, t->names, t->count * sizeof *names);
      memcpy(lens, t->lens, t->count * sizeof *lens);
    }
    t->names = names;
    t->lens = lens;
    t->cap = (uint32_t)cap;
  }
  char *copy = leir__arena_strndup(&p->arena, s, len);
  if (!copy) {
    oom(p);
    return LEIR__NOSYM;
  }
  uint32_t sym = t->count++;
  t->names[sym] = copy;
  t->lens[sym] = (uint32_t)len;
  uint32_t h = hash_name(s, len) & (t->nslots - 1);
  while (t->slots[h]) h = (h + 1) & (t->nslots - 1);
  t->slots[h] = sym + 1;
  return sym;
}

/* ---- positions -------------------------------------------------------- */

void leir__position(const leir_program *p, uint32_t pos, uint32_t *line, uint32_t *column) {
  if (pos == LEIR__NOPOS) {
    *line = *column = 0;
    return;
  }
  if (!p->line_starts || p->nlines == 0) {
    *line = 1;
    *column = pos + 1;
    return;
  }
  uint32_t lo = 0, hi = p->nlines; /* last start <= pos */
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (p->line_starts[mid] <= pos)
      lo = mid;
    else
      hi = mid;
  }
  *line = lo + 1;
  *column = pos - p->line_starts[lo] + 1;
}

/* ---- builders --------------------------------------------------------- */

_Static_assert(sizeof(leir_expr) % sizeof(void *) == 0, "child pointers follow the node");

leir_expr *leir__new_expr(leir_program *p, leir_expr_kind kind, leir_op op, uint32_t n) {
  /* one allocation: the node, its child pointers, and a comparison's
   * operators (node sizes are multiples of 8, so the pointers align) */
  size_t ops = kind == LEIR_EXPR_COMPARE && n > 1 ? n - 1 : 0;
  if (n > (UINT32_MAX - sizeof(leir_expr)) / (sizeof(leir_expr *) + 1)) return oom(p);
  leir_expr *e = leir__palloc(p, sizeof *e + n * sizeof *e->kids + ops);
  if (!e) return NULL;
  e->kind = (uint8_t)kind;
  e->op = (uint8_t)op;
  e->n = n;
  e->sym = LEIR__NOSYM;
  e->id = p->next_id++;
  e->pos = LEIR__NOPOS;
  if (n) e->kids = (leir_expr **)(e + 1);
  if (ops) e->u.cmp_ops = (uint8_t *)(e->kids + n);
  return e;
}

leir_expr *leir__new_number(leir_program *p, const char *lexeme, size_t len) {
  leir_expr *e = leir__new_expr(p, LEIR_EXPR_NUMBER, LEIR_OP_NONE, 0);
  if (!e) return NULL;
  leir__number *num = leir__palloc(p, sizeof *num);
  char *lex = num ? leir__pstrndup(p, lexeme, len) : NULL;
  if (!num || !lex) return NULL;
  num->lexeme = lex;
  num->len = (uint32_t)len;
  bool digits = len > 0;
  int64_t v = 0;
  for (size_t i = 0; i < len && digits; i++) {
    if (lex[i] < '0' || lex[i] > '9') {
      digits = false;
    } else if (v > (INT64_MAX - (lex[i] - '0')) / 10) {
      digits = false; /* too large for an index; stays a float literal */
    } else {
      v = v * 10 + (lex[i] - '0');
    }
  }
  num->is_int = digits;
  num->ival = digits ? v : 0;
  /* integers below 2^53 convert exactly; strtod for the rest */
  num->value = digits && v < ((int64_t)1 << 53) ? (double)v : strtod(lex, NULL);
  e->u.num = num;
  return e;
}

leir_expr *leir__new_int(leir_program *p, int64_t v) {
  char buf[24];
  int i = (int)sizeof buf;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    buf[--i] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v >= 0) return leir__new_number(p, buf + i, sizeof buf - (size_t)i);
  leir_expr *lit = leir__new_number(p, buf + i, sizeof buf - (size_t)i);
  return lit ? leir__new_unary(p, LEIR_EXPR_NEG, lit) : NULL;
}

leir_expr *leir__new_var(leir_program *p, uint32_t sym) {
  leir_expr *e = leir__new_expr(p, LEIR_EXPR_VAR, LEIR_OP_NONE, 0);
  if (e) e->sym = sym;
  return e;
}

leir_expr *leir__new_tensor(leir_program *p, uint32_t sym, leir_dtype dt, leir_scope sc,
                            uint32_t rank) {
  leir_expr *e = leir__new_expr(p, LEIR_EXPR_TENSOR, LEIR_OP_NONE, rank);
  if (!e) return NULL;
  e->sym = sym;
  e->dtype = (uint8_t)dt;
  e->scope = (uint8_t)sc;
  return e;
}

leir_expr *leir__new_binary(leir_program *p, leir_op op, leir_expr *a, leir_expr *b) {
  leir_expr *e = leir__new_expr(p, LEIR_EXPR_BINARY, op, 2);
  if (!e) return NULL;
  e->kids[0] = a;
  e->kids[1] = b;
  return e;
}

leir_expr *leir__new_unary(leir_program *p, leir_expr_kind kind, leir_expr *a) {
  leir_expr *e = leir__new_expr(p, kind, LEIR_OP_NONE, 1);
  if (!e) return NULL;
  e->kids[0] = a;
  return e;
}

leir_expr *leir__new_call(leir_program *p, leir_op fn, uint32_t nargs) {
  return leir__new_expr(p, LEIR_EXPR_CALL, fn, nargs);
}

leir_equation *leir__new_equation(leir_program *p, leir_expr *lhs, leir_expr *rhs) {
  leir_equation *eq = leir__palloc(p, sizeof *eq);
  if (!eq) return NULL;
  eq->lhs = lhs;
  eq->rhs = rhs;
  eq->pos = LEIR__NOPOS;
  eq->id = p->next_id++;
  return eq;
}

leir_nest *leir__new_nest(leir_program *p, uint32_t nloops, uint32_t nitems) {
  leir_nest *n = leir__palloc(p, sizeof *n);
  if (!n) return NULL;
  n->nloops = nloops;
  n->nitems = nitems;
  n->pos = LEIR__NOPOS;
  n->id = p->next_id++;
  if (nloops && !(n->loops = leir__palloc(p, nloops * sizeof *n->loops))) return NULL;
  if (nitems && !(n->items = leir__palloc(p, nitems * sizeof *n->items))) return NULL;
  return n;
}

/* ---- copies ----------------------------------------------------------- */

static uint32_t map_sym(leir_program *dst, const leir_program *src, uint32_t sym) {
  if (dst == src || sym == LEIR__NOSYM || dst->sym_mirror == src) return sym;
  return leir__sym_intern(dst, leir__sym_name(src, sym), leir__sym_len(src, sym));
}

leir_expr *leir__copy_expr(leir_program *dst, const leir_program *src, const leir_expr *e) {
  leir_expr *c = leir__new_expr(dst, (leir_expr_kind)e->kind, (leir_op)e->op, e->n);
  if (!c) return NULL;
  c->dtype = e->dtype;
  c->scope = e->scope;
  c->pos = e->pos;
  c->sym = map_sym(dst, src, e->sym);
  if (e->sym != LEIR__NOSYM && c->sym == LEIR__NOSYM) return NULL;
  if (e->kind == LEIR_EXPR_NUMBER) {
    leir__number *num = leir__palloc(dst, sizeof *num);
    if (!num) return NULL;
    *num = *e->u.num;
    if (dst != src) {
      num->lexeme = leir__pstrndup(dst, e->u.num->lexeme, e->u.num->len);
      if (!num->lexeme) return NULL;
    }
    c->u.num = num;
  } else if (e->kind == LEIR_EXPR_COMPARE && e->n > 1) {
    memcpy(c->u.cmp_ops, e->u.cmp_ops, e->n - 1);
  }
  for (uint32_t i = 0; i < e->n; i++) {
    c->kids[i] = leir__copy_expr(dst, src, e->kids[i]);
    if (!c->kids[i]) return NULL;
  }
  return c;
}

leir_nest *leir__copy_nest(leir_program *dst, const leir_program *src, const leir_nest *n) {
  leir_nest *c = leir__new_nest(dst, n->nloops, n->nitems);
  if (!c) return NULL;
  c->pos = n->pos;
  for (uint32_t i = 0; i < n->nloops; i++) {
    c->loops[i] = n->loops[i];
    c->loops[i].sym = map_sym(dst, src, n->loops[i].sym);
    if (c->loops[i].sym == LEIR__NOSYM) return NULL;
  }
  for (uint32_t i = 0; i < n->nitems; i++) {
    if (n->items[i].eq) {
      const leir_equation *eq = n->items[i].eq;
      leir_expr *lhs = leir__copy_expr(dst, src, eq->lhs);
      leir_expr *rhs = lhs ? leir__copy_expr(dst, src, eq->rhs) : NULL;
      leir_equation *ceq = rhs ? leir__new_equation(dst, lhs, rhs) : NULL;
      if (!ceq) return NULL;
      ceq->pos = eq->pos;
      c->items[i].eq = ceq;
    } else {
      c->items[i].nest = leir__copy_nest(dst, src, n->items[i].nest);
      if (!c->items[i].nest) return NULL;
    }
  }
  return c;
}

int leir__program_insert_nest(leir_program *p, uint32_t at, leir_nest *nest) {
  if (at > p->nnests) at = p->nnests;
  if (!leir__vec_grow32((void **)&p->nests, &p->cap_nests, (size_t)p->nnests + 1,
                        sizeof *p->nests, 8)) {
    oom(p);
    return 0;
  }
  memmove(p->nests + at + 1, p->nests + at, (p->nnests - at) * sizeof *p->nests);
  p->nests[at] = nest;
  p->nnests++;
  return 1;
}

void leir__program_remove_nest(leir_program *p, uint32_t at) {
  if (at >= p->nnests) return;
  memmove(p->nests + at, p->nests + at + 1, (p->nnests - at - 1) * sizeof *p->nests);
  p->nnests--;
}

static leir_status copy_signature(leir_program *dst, const leir_program *src) {
  if (!src->nsig) return LEIR_OK;
  dst->sig = leir__palloc(dst, src->nsig * sizeof *dst->sig);
  if (!dst->sig) return LEIR_ERR_NOMEM;
  for (uint32_t i = 0; i < src->nsig; i++) {
    dst->sig[i] = src->sig[i];
    dst->sig[i].sym = map_sym(dst, src, src->sig[i].sym);
    if (dst->sig[i].sym == LEIR__NOSYM) return LEIR_ERR_NOMEM;
    if (src->sig[i].rank) {
      dst->sig[i].shape = leir__palloc(dst, src->sig[i].rank * sizeof(int64_t));
      if (!dst->sig[i].shape) return LEIR_ERR_NOMEM;
      memcpy(dst->sig[i].shape, src->sig[i].shape, src->sig[i].rank * sizeof(int64_t));
    }
  }
  dst->nsig = src->nsig;
  return LEIR_OK;
}

leir_status leir_program_clone(leir_program **out, const leir_program *src) {
  if (!out || !src) return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  leir_program *p = leir__program_new(src->arena.total);
  if (!p) return leir__error_nomem();
  /* The same symbols with the same ids: copy the table instead of hashing
   * every name again (the open-addressing slots depend only on the names). */
  if (src->syms.count) {
    leir__symtab *t = &p->syms;
    const leir__symtab *f = &src->syms;
    /* In the arena, like the table leir__intern grows (freed with it). */
    t->names = leir__arena_alloc(&p->arena, f->cap * sizeof *t->names);
    t->lens = leir__arena_alloc(&p->arena, f->cap * sizeof *t->lens);
    t->slots = leir__arena_alloc(&p->arena, f->nslots * sizeof *t->slots);
    if (!t->names || !t->lens || !t->slots) goto nomem;
    t->cap = f->cap;
    t->nslots = f->nslots;
    memcpy(t->lens, f->lens, f->count * sizeof *t->lens);
    memcpy(t->slots, f->slots, f->nslots * sizeof *t->slots);
    for (uint32_t s = 0; s < f->count; s++) {
      t->names[s] = leir__arena_strndup(&p->arena, f->names[s], f->lens[s]);
      if (!t->names[s]) goto nomem;
      t->count = s + 1;
    }
  }
  /* Node ids are fresh in the copy (they only index per-program side tables).
   * Symbol ids are the same, so copies keep them as they are. */
  p->sym_mirror = src;
  for (uint32_t i = 0; i < src->nnests; i++) {
    leir_nest *n = leir__copy_nest(p, src, src->nests[i]);
    if (!n || !leir__program_insert_nest(p, p->nnests, n)) {
      p->sym_mirror = NULL;
      goto nomem;
    }
  }
  p->sym_mirror = NULL;
  if (src->line_starts && src->nlines) {
    p->line_starts = malloc(src->nlines * sizeof *p->line_starts);
    if (!p->line_starts) goto nomem;
    memcpy(p->line_starts, src->line_starts, src->nlines * sizeof *p->line_starts);
    p->nlines = src->nlines;
  }
  if (copy_signature(p, src) != LEIR_OK) goto nomem;
  if (src->name && !(p->name = leir__pstrndup(p, src->name, strlen(src->name)))) goto nomem;
  p->text_len = src->text_len;
  *out = p;
  return LEIR_OK;
nomem:
  leir_program_free(p);
  return leir__error_nomem();
}

/* ---- names ------------------------------------------------------------ */

static const char tensor_first[] = "ACDEFGHIJKMNOQRSWXYZ";
static const char tensor_rest[] = "acdefghijkmnoqrswxyz";
static const char loop_alpha[] = "acdfghijklmnopqrsuw";

static void bijective(uint64_t index, const char *first, const char *rest, unsigned base,
                      char *buf) {
  /* index 0 -> first[0]; digits of (index+1) in bijective base `base`. */
  char tmp[16];
  int n = 0;
  uint64_t v = index + 1;
  while (v > 0 && n < 15) {
    uint64_t d = (v - 1) % base;
    tmp[n++] = (char)d;
    v = (v - 1) / base;
  }
  for (int i = 0; i < n; i++) {
    unsigned d = (unsigned char)tmp[n - 1 - i];
    buf[i] = i == 0 ? first[d] : rest[d];
  }
  buf[n] = '\0';
}

void leir__tensor_name_of_index(uint64_t index, char *buf) {
  bijective(index, tensor_first, tensor_rest, 20, buf);
}

void leir__loop_name_of_index(uint64_t index, char *buf) {
  bijective(index, loop_alpha, loop_alpha, 19, buf);
}

static int64_t bijective_index(const char *s, size_t len, const char *first, const char *rest,
                               unsigned base) {
  if (len == 0 || len > 12) return -1;
  int64_t v = 0;
  for (size_t i = 0; i < len; i++) {
    const char *alpha = i == 0 ? first : rest;
    const char *hit = memchr(alpha, s[i], base);
    if (!hit || s[i] == '\0') return -1;
    v = v * base + (hit - alpha) + 1;
  }
  return v - 1;
}

int64_t leir__tensor_index_of_name(const char *s, size_t len) {
  return bijective_index(s, len, tensor_first, tensor_rest, 20);
}

int64_t leir__loop_index_of_name(const char *s, size_t len) {
  return bijective_index(s, len, loop_alpha, loop_alpha, 19);
}

bool leir__is_tensor_name(const char *s, size_t len) {
  if (len == 0 || s[0] < 'A' || s[0] > 'Z') return false;
  if (memchr("LPVUBT", s[0], 6)) return false;
  for (size_t i = 1; i < len; i++)
    if (s[i] < 'a' || s[i] > 'z') return false;
  return true;
}

static bool is_reserved_word(const char *s, size_t len) {
  /* function names and inf; by length, since this runs for every index */
  switch (len) {
    case 3:
      return memcmp(s, "exp", 3) == 0 || memcmp(s, "log", 3) == 0 || memcmp(s, "abs", 3) == 0 ||
             memcmp(s, "erf", 3) == 0 || memcmp(s, "max", 3) == 0 || memcmp(s, "min", 3) == 0 ||
             memcmp(s, "inf", 3) == 0;
    case 4: return memcmp(s, "sqrt", 4) == 0;
    case 12: return memcmp(s, "if_then_else", 12) == 0;
    default: return false;
  }
}

bool leir__is_loop_var_name(const char *s, size_t len) {
  if (len == 0 || s[0] < 'a' || s[0] > 'z') return false;
  for (size_t i = 1; i < len; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return !is_reserved_word(s, len);
}

/* ---- structural equality ---------------------------------------------- */

bool leir__expr_equal(const leir_program *pa, const leir_expr *a, const leir_program *pb,
                      const leir_expr *b) {
  if (a->kind != b->kind || a->op != b->op || a->n != b->n) return false;
  switch ((leir_expr_kind)a->kind) {
    case LEIR_EXPR_NUMBER:
      if (a->u.num->len != b->u.num->len ||
          memcmp(a->u.num->lexeme, b->u.num->lexeme, a->u.num->len) != 0)
        return false;
      break;
    case LEIR_EXPR_TENSOR:
      if (a->dtype != b->dtype || a->scope != b->scope) return false;
      /* fall through */
    case LEIR_EXPR_VAR:
      if (pa == pb) {
        if (a->sym != b->sym) return false;
      } else if (leir__sym_len(pa, a->sym) != leir__sym_len(pb, b->sym) ||
                 memcmp(leir__sym_name(pa, a->sym), leir__sym_name(pb, b->sym),
                        leir__sym_len(pa, a->sym)) != 0) {
        return false;
      }
      break;
    case LEIR_EXPR_COMPARE:
      if (memcmp(a->u.cmp_ops, b->u.cmp_ops, a->n - 1) != 0) return false;
      break;
    default:
      break;
  }
  for (uint32_t i = 0; i < a->n; i++)
    if (!leir__expr_equal(pa, a->kids[i], pb, b->kids[i])) return false;
  return true;
}
