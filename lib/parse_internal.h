/*
 * What the parser's files share (parse.c: errors, nests, the entry points;
 * parse_expr.c: expressions): the parser state, and the low-level scanning
 * and arena vectors, kept static inline since every byte goes through them.
 */
#ifndef LEIR_PARSE_INTERNAL_H
#define LEIR_PARSE_INTERNAL_H

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "options.h"
#include "vec.h"
#include "ir.h"

/* A growable array in the arena (see vec_push). */
typedef struct vec {
  void **items;
  uint32_t n, cap;
} vec;

typedef struct parser {
  leir_program *p;
  const char *src;
  size_t len;
  size_t i;
  bool lenient;
  bool in_cond; /* parenthesized groups may hold conditions */
  uint32_t depth, max_depth;
  uint32_t nests; /* nests enclosing the cursor */
  uint32_t tree; /* height of the expression tree the last parse_* returned */
  vec pending;   /* subscripts of the tensors being parsed (parse_tensor) */
  /* Short names (tx, a, Aq) repeat all over a program: a direct-mapped
   * cache in front of the symbol table. key 0 = empty. */
  struct {
    uint64_t key;
    uint32_t sym;
  } names[64];
  jmp_buf jmp;
} parser;

enum { JMP_ERROR = 1 };

/* ---- shared between the parser files ---- */

/* Records the error at byte `at` and leaves through the parser's longjmp. */
#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 4, 5)))
#endif
void leir__parse_fail_at(parser *ps, size_t at, const char *rule, const char *fmt, ...);
/* Fails with "expected WHAT, found ..." at the cursor. */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void leir__parse_expected(parser *ps, const char *what);
/* A tensor with its subscripts (parse_expr.c). */
leir_expr *leir__parse_tensor(parser *ps);
/* A value expression: sums of terms (parse_expr.c). */
leir_expr *leir__parse_value(parser *ps);

/* ---- low-level scanning ---------------------------------------------- */

static inline void skip_ws(parser *ps) {
  if (!ps->lenient) return;
  while (ps->i < ps->len) {
    char c = ps->src[ps->i];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    ps->i++;
  }
}

/* Next significant byte, or -1 at end of input. */
static inline int peek(parser *ps) {
  skip_ws(ps);
  return ps->i < ps->len ? (unsigned char)ps->src[ps->i] : -1;
}

/* Byte after the next significant one (no whitespace skipping inside
 * two-character tokens such as "**", "//", "<=", "^{"). */
static inline int peek2(parser *ps) {
  skip_ws(ps);
  return ps->i + 1 < ps->len ? (unsigned char)ps->src[ps->i + 1] : -1;
}

static inline bool accept(parser *ps, char c) {
  if (peek(ps) == (unsigned char)c) {
    ps->i++;
    return true;
  }
  return false;
}

static inline void expect(parser *ps, char c, const char *what) {
  if (!accept(ps, c)) leir__parse_expected(ps, what);
}

static inline bool is_lower(int c) { return c >= 'a' && c <= 'z'; }
static inline bool is_upper(int c) { return c >= 'A' && c <= 'Z'; }
static inline bool is_digit(int c) { return c >= '0' && c <= '9'; }

static inline uint32_t pos32(size_t i) { return i > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)i; }

/* Guards the parser's own recursion. The language limits (nest nesting and
 * expression height, both max_depth) are enforced where they are known;
 * this bound is looser (a tree level costs at most two recursions, plus one
 * per enclosing nest) so that it only stops input those limits would also
 * refuse, and stops it before it can exhaust the stack. */
static inline void enter(parser *ps) {
  if (++ps->depth > 3 * ps->max_depth + 8)
    leir__parse_fail_at(ps, ps->i, "parse.depth", "expression or nest nested deeper than %u levels",
                        ps->max_depth);
}

static inline void leave(parser *ps) { ps->depth--; }

/* Records the height of the node just built. Left-associative chains
 * (a+b+c+...) grow the tree without recursing in the parser, so the height
 * is tracked separately from `depth`: every later pass (printer, checks,
 * hashing, backends) walks expressions recursively, and a bounded height is
 * what keeps them off the end of the stack. */
static inline leir_expr *height(parser *ps, leir_expr *e, uint32_t h) {
  if (h > ps->max_depth)
    leir__parse_fail_at(ps, ps->i, "parse.depth", "expression nested deeper than %u levels",
                        ps->max_depth);
  ps->tree = h;
  return e;
}

static inline uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

/* Symbol of src[s..s+n). */
static inline uint32_t intern(parser *ps, size_t s, size_t n) {
  if (n > 7) return leir__sym_intern(ps->p, ps->src + s, n);
  uint64_t key = n; /* length in the low byte, then the characters */
  for (size_t k = 0; k < n; k++) key |= (uint64_t)(unsigned char)ps->src[s + k] << (8 * (k + 1));
  uint32_t slot = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 58);
  if (ps->names[slot].key == key) return ps->names[slot].sym;
  uint32_t sym = leir__sym_intern(ps->p, ps->src + s, n);
  ps->names[slot].key = key;
  ps->names[slot].sym = sym;
  return sym;
}

/* Reads [a-z][a-z0-9_]* at the cursor; returns its start and sets *n. */
static inline size_t lower_ident(parser *ps, size_t *n) {
  size_t start = ps->i;
  while (ps->i < ps->len) {
    char c = ps->src[ps->i];
    if (!(is_lower(c) || is_digit(c) || c == '_')) break;
    ps->i++;
  }
  *n = ps->i - start;
  return start;
}

/* Decimal integer for extents and indices: digits only, fits in int64. */
static inline int64_t parse_int(parser *ps, const char *what) {
  int c = peek(ps);
  if (!is_digit(c)) leir__parse_expected(ps, what);
  size_t start = ps->i;
  int64_t v = 0;
  while (ps->i < ps->len && is_digit(ps->src[ps->i])) {
    int d = ps->src[ps->i] - '0';
    if (v > (INT64_MAX - d) / 10)
      leir__parse_fail_at(ps, start, "parse.integer", "integer too large (more than 2^63-1)");
    v = v * 10 + d;
    ps->i++;
  }
  return v;
}

/* ---- arena vectors ---------------------------------------------------- */

/* A growable array in the arena (old storage is abandoned on growth, which
 * costs at most the final size again). */
static inline void vec_push(parser *ps, vec *v, void *item) {
  if (v->n == v->cap) {
    size_t cap = 0, bytes = SIZE_MAX; /* an overflow fails as out of memory (longjmp) */
    if (leir__vec_next_cap(v->cap, (size_t)v->n + 1, sizeof *v->items, 4, UINT32_MAX, &cap))
      bytes = cap * sizeof *v->items;
    void **items = leir__palloc(ps->p, bytes);
    if (v->n) memcpy(items, v->items, v->n * sizeof *items);
    v->items = items;
    v->cap = (uint32_t)cap;
  }
  v->items[v->n++] = item;
}

#endif
