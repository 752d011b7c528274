/*
 * LEIR parser (spec/leir.md §1): a recursive-descent parser over bytes.
 *
 * Untrusted input is the normal case, so: every byte is examined at most a
 * constant number of times (no backtracking), recursion is bounded by
 * `max_depth`, integers are range-checked, and errors leave through one
 * longjmp after recording line, column and what was expected. All memory
 * comes from the new program's arena and is released with it on error.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "options.h"
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

/* ---- errors ----------------------------------------------------------- */

static void describe(const parser *ps, size_t at, char *buf, size_t cap) {
  if (at >= ps->len) {
    snprintf(buf, cap, "end of input");
    return;
  }
  unsigned char c = (unsigned char)ps->src[at];
  if (c == 0)
    snprintf(buf, cap, "a NUL byte");
  else if (c == '\n')
    snprintf(buf, cap, "a newline");
  else if (c == ' ' || c == '\t' || c == '\r')
    snprintf(buf, cap, "whitespace (allowed only in lenient mode)");
  else if (c < 0x20 || c >= 0x7f)
    snprintf(buf, cap, "byte 0x%02x", c);
  else
    snprintf(buf, cap, "'%c'", c);
}

#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 4, 5)))
#endif
static void
fail_at(parser *ps, size_t at, const char *rule, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  uint32_t line, col;
  leir__position(ps->p, at > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)at, &line, &col);
  leir__error_set(LEIR_ERR_PARSE, rule, NULL, line, col, msg);
  longjmp(ps->jmp, JMP_ERROR);
}

#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void
expected(parser *ps, const char *what) {
  char found[64];
  describe(ps, ps->i, found, sizeof found);
  fail_at(ps, ps->i, "parse.expected", "expected %s, found %s", what, found);
}

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
  if (!accept(ps, c)) expected(ps, what);
}

static inline bool is_lower(int c) { return c >= 'a' && c <= 'z'; }
static inline bool is_upper(int c) { return c >= 'A' && c <= 'Z'; }
static inline bool is_digit(int c) { return c >= '0' && c <= '9'; }

static uint32_t pos32(size_t i) { return i > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)i; }

/* Guards the parser's own recursion. The language limits (nest nesting and
 * expression height, both max_depth) are enforced where they are known;
 * this bound is looser (a tree level costs at most two recursions, plus one
 * per enclosing nest) so that it only stops input those limits would also
 * refuse, and stops it before it can exhaust the stack. */
static void enter(parser *ps) {
  if (++ps->depth > 3 * ps->max_depth + 8)
    fail_at(ps, ps->i, "parse.depth", "expression or nest nested deeper than %u levels",
            ps->max_depth);
}

static void leave(parser *ps) { ps->depth--; }

/* Records the height of the node just built. Left-associative chains
 * (a+b+c+...) grow the tree without recursing in the parser, so the height
 * is tracked separately from `depth`: every later pass (printer, checks,
 * hashing, backends) walks expressions recursively, and a bounded height is
 * what keeps them off the end of the stack. */
static leir_expr *height(parser *ps, leir_expr *e, uint32_t h) {
  if (h > ps->max_depth)
    fail_at(ps, ps->i, "parse.depth",
            "expression nested deeper than %u levels", ps->max_depth);
  ps->tree = h;
  return e;
}

static uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

/* Symbol of src[s..s+n). */
static uint32_t intern(parser *ps, size_t s, size_t n) {
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
static size_t lower_ident(parser *ps, size_t *n) {
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
static int64_t parse_int(parser *ps, const char *what) {
  int c = peek(ps);
  if (!is_digit(c)) expected(ps, what);
  size_t start = ps->i;
  int64_t v = 0;
  while (ps->i < ps->len && is_digit(ps->src[ps->i])) {
    int d = ps->src[ps->i] - '0';
    if (v > (INT64_MAX - d) / 10)
      fail_at(ps, start, "parse.integer", "integer too large (more than 2^63-1)");
    v = v * 10 + d;
    ps->i++;
  }
  return v;
}

/* ---- arena vectors ---------------------------------------------------- */

/* A growable array in the arena (old storage is abandoned on growth, which
 * costs at most the final size again). */
static void vec_push(parser *ps, vec *v, void *item) {
  if (v->n == v->cap) {
    uint32_t cap = v->cap ? v->cap * 2 : 4;
    void **items = leir__palloc(ps->p, cap * sizeof *items);
    if (v->n) memcpy(items, v->items, v->n * sizeof *items);
    v->items = items;
    v->cap = cap;
  }
  v->items[v->n++] = item;
}

/* ---- expressions ------------------------------------------------------ */

static leir_expr *parse_value(parser *ps);
static leir_expr *parse_cond(parser *ps);
static leir_expr *parse_index(parser *ps);

static leir_expr *finish_node(parser *ps, leir_expr_kind kind, leir_op op, size_t pos,
                              vec *kids) {
  leir_expr *e = leir__new_expr(ps->p, kind, op, kids ? kids->n : 0);
  e->pos = pos32(pos);
  for (uint32_t k = 0; kids && k < kids->n; k++) e->kids[k] = kids->items[k];
  return e;
}

static leir_expr *binary(parser *ps, leir_op op, leir_expr *a, leir_expr *b) {
  leir_expr *e = leir__new_binary(ps->p, op, a, b);
  e->pos = a->pos;
  return e;
}

static leir_expr *unary(parser *ps, leir_expr_kind kind, leir_expr *a, size_t pos) {
  leir_expr *e = leir__new_unary(ps->p, kind, a);
  e->pos = pos32(pos);
  return e;
}


/* tname "^{" dtype "," scope "}": the header of a tensor, parsed in its
 * own frame so that the recursion through subscripts (E_{E_{...}}, 1000
 * levels at most) carries none of these locals. */
typedef struct tensor_head {
  uint32_t sym;
  uint8_t dtype, scope;
} tensor_head;

#if defined(__GNUC__)
__attribute__((noinline))
#endif
static tensor_head parse_tensor_head(parser *ps) {
  size_t start = ps->i;
  if (!is_upper(peek(ps))) expected(ps, "a tensor name");
  ps->i++;
  while (ps->i < ps->len && is_lower(ps->src[ps->i])) ps->i++;
  size_t name_len = ps->i - start;
  char first = ps->src[start];
  if (first == 'L' || first == 'P' || first == 'V' || first == 'U' || first == 'B' || first == 'T')
    fail_at(ps, start, "parse.tensor-name",
            "tensor names may not start with L, P, V, U, B or T ('%.*s')", (int)name_len,
            ps->src + start);
  if (peek(ps) != '^') expected(ps, "'^{' after the tensor name");
  ps->i++;
  if (ps->i >= ps->len || ps->src[ps->i] != '{') expected(ps, "'{' after '^'");
  ps->i++;
  skip_ws(ps);
  size_t dstart = ps->i;
  while (ps->i < ps->len && (is_lower(ps->src[ps->i]) || is_digit(ps->src[ps->i]))) ps->i++;
  size_t dlen = ps->i - dstart;
  int dtype = leir__dtype_of(ps->src + dstart, dlen);
  if (dtype < 0) {
    ps->i = dstart;
    expected(ps, "a dtype (f16, bf16, f32, f64, i8, i16, i32, i64, u8, bool)");
  }
  expect(ps, ',', "',' between dtype and scope");
  int sc = peek(ps);
  leir_scope scope;
  if (sc == 'g')
    scope = LEIR_SCOPE_GLOBAL;
  else if (sc == 's')
    scope = LEIR_SCOPE_SHARED;
  else if (sc == 'l')
    scope = LEIR_SCOPE_LOCAL;
  else
    expected(ps, "a scope (g, s or l)");
  ps->i++;
  expect(ps, '}', "'}' closing the superscript");
  tensor_head h = {intern(ps, start, name_len), (uint8_t)dtype, (uint8_t)scope};
  return h;
}

/* tensor = tname "^{" dtype "," scope "}" [ "_{" index { "," index } "}" ]
 * The subscripts wait on ps->pending (one stack for all tensors being
 * parsed: an inner tensor completes before its outer one continues), not
 * in this frame. */
static leir_expr *parse_tensor(parser *ps) {
  skip_ws(ps);
  size_t start = ps->i;
  tensor_head head = parse_tensor_head(ps);
  uint32_t base = ps->pending.n, rank = 0, h = 0;
  if (peek(ps) == '_') {
    ps->i++;
    expect(ps, '{', "'{' after '_'");
    enter(ps);
    do {
      if (rank == LEIR_MAX_RANK)
        fail_at(ps, ps->i, "parse.rank", "tensor rank above %d", LEIR_MAX_RANK);
      leir_expr *ix = parse_index(ps);
      vec_push(ps, &ps->pending, ix);
      rank++;
      h = max_u32(h, ps->tree);
    } while (accept(ps, ','));
    leave(ps);
    expect(ps, '}', "',' or '}' in the subscript");
  }
  leir_expr *t = leir__new_tensor(ps->p, head.sym, (leir_dtype)head.dtype,
                                  (leir_scope)head.scope, rank);
  t->pos = pos32(start);
  for (uint32_t k = 0; k < rank; k++) t->kids[k] = ps->pending.items[base + k];
  ps->pending.n = base;
  return height(ps, t, h + 1);
}

/* iatom = int | ivar | tensor | "(" isum ")" | "-" iatom */
static leir_expr *parse_index_atom(parser *ps) {
  int c = peek(ps);
  size_t start = ps->i;
  if (is_digit(c)) {
    parse_int(ps, "an integer");
    if (ps->i < ps->len && (ps->src[ps->i] == '.' || ps->src[ps->i] == 'e'))
      fail_at(ps, start, "parse.index", "indices are integers; '%c' is not allowed here",
              ps->src[ps->i]);
    leir_expr *e = leir__new_number(ps->p, ps->src + start, ps->i - start);
    e->pos = pos32(start);
    return height(ps, e, 1);
  }
  if (is_lower(c)) {
    size_t n;
    size_t s = lower_ident(ps, &n);
    if (!leir__is_loop_var_name(ps->src + s, n))
      fail_at(ps, s, "parse.index", "'%.*s' cannot appear in an index", (int)n, ps->src + s);
    leir_expr *e = leir__new_var(ps->p, intern(ps, s, n));
    e->pos = pos32(s);
    return height(ps, e, 1);
  }
  if (is_upper(c)) return parse_tensor(ps);
  if (c == '(') {
    ps->i++;
    leir_expr *inner = parse_index(ps);
    uint32_t h = ps->tree;
    expect(ps, ')', "')'");
    return height(ps, unary(ps, LEIR_EXPR_PAREN, inner, start), h + 1);
  }
  if (c == '-') {
    ps->i++;
    enter(ps);
    leir_expr *inner = parse_index_atom(ps);
    leave(ps);
    return height(ps, unary(ps, LEIR_EXPR_NEG, inner, start), ps->tree + 1);
  }
  expected(ps, "an index (integer, loop variable, tensor or '(')");
}

/* iprod = iatom { ("*"|"//"|"%") iatom } */
static leir_expr *parse_index_prod(parser *ps) {
  leir_expr *e = parse_index_atom(ps);
  uint32_t h = ps->tree;
  for (;;) {
    int c = peek(ps);
    leir_op op;
    if (c == '*' && peek2(ps) != '*') {
      op = LEIR_OP_MUL;
      ps->i++;
    } else if (c == '/' && peek2(ps) == '/') {
      op = LEIR_OP_FLOORDIV;
      ps->i += 2;
    } else if (c == '%') {
      op = LEIR_OP_MOD;
      ps->i++;
    } else if (c == '/' || c == '*') {
      fail_at(ps, ps->i, "parse.index", "'%s' is not allowed in an index (use '//' or '*')",
              c == '/' ? "/" : "**");
    } else {
      return height(ps, e, h);
    }
    e = binary(ps, op, e, parse_index_atom(ps));
    h = max_u32(h, ps->tree) + 1;
    height(ps, e, h);
  }
}

/* isum = iprod { ("+"|"-") iprod } */
static leir_expr *parse_index(parser *ps) {
  enter(ps);
  leir_expr *e = parse_index_prod(ps);
  uint32_t h = ps->tree;
  for (;;) {
    int c = peek(ps);
    if (c != '+' && c != '-') break;
    ps->i++;
    e = binary(ps, c == '+' ? LEIR_OP_ADD : LEIR_OP_SUB, e, parse_index_prod(ps));
    h = max_u32(h, ps->tree) + 1;
    height(ps, e, h);
  }
  leave(ps);
  return height(ps, e, h);
}

static leir_expr *parse_number(parser *ps) {
  size_t start = ps->i;
  while (ps->i < ps->len && is_digit(ps->src[ps->i])) ps->i++;
  if (ps->i < ps->len && ps->src[ps->i] == '.') {
    ps->i++;
    if (ps->i >= ps->len || !is_digit(ps->src[ps->i]))
      fail_at(ps, ps->i, "parse.number", "expected digits after '.' in a number");
    while (ps->i < ps->len && is_digit(ps->src[ps->i])) ps->i++;
  }
  if (ps->i < ps->len && ps->src[ps->i] == 'e') {
    size_t j = ps->i + 1;
    if (j < ps->len && (ps->src[j] == '+' || ps->src[j] == '-')) j++;
    if (j < ps->len && is_digit(ps->src[j])) {
      while (j < ps->len && is_digit(ps->src[j])) j++;
      ps->i = j;
    }
  }
  if (ps->i - start > 4096)
    fail_at(ps, start, "parse.number", "number literal longer than 4096 characters");
  leir_expr *e = leir__new_number(ps->p, ps->src + start, ps->i - start);
  e->pos = pos32(start);
  return height(ps, e, 1);
}

static leir_op function_of(const char *s, size_t n, uint32_t *min_args, uint32_t *max_args) {
  static const struct {
    const char *name;
    leir_op op;
    uint32_t lo, hi;
  } fns[] = {{"exp", LEIR_OP_EXP, 1, 1},   {"log", LEIR_OP_LOG, 1, 1},
             {"sqrt", LEIR_OP_SQRT, 1, 1}, {"abs", LEIR_OP_ABS, 1, 1},
             {"erf", LEIR_OP_ERF, 1, 1},   {"max", LEIR_OP_MAX, 2, UINT32_MAX},
             {"min", LEIR_OP_MIN, 2, UINT32_MAX},
             {"if_then_else", LEIR_OP_IF_THEN_ELSE, 3, 3}};
  for (size_t k = 0; k < sizeof fns / sizeof *fns; k++) {
    if (strlen(fns[k].name) == n && memcmp(fns[k].name, s, n) == 0) {
      *min_args = fns[k].lo;
      *max_args = fns[k].hi;
      return fns[k].op;
    }
  }
  return LEIR_OP_NONE;
}

static leir_expr *parse_call(parser *ps, size_t start, leir_op fn, uint32_t lo, uint32_t hi,
                             size_t name_len) {
  expect(ps, '(', "'(' after the function name");
  vec args = {0};
  bool saved = ps->in_cond;
  uint32_t h = 0;
  do {
    if (args.n == hi)
      fail_at(ps, ps->i, "parse.arity", "%.*s takes %u argument%s", (int)name_len,
              ps->src + start, hi, hi == 1 ? "" : "s");
    bool cond = fn == LEIR_OP_IF_THEN_ELSE && args.n == 0;
    ps->in_cond = cond;
    vec_push(ps, &args, cond ? parse_cond(ps) : parse_value(ps));
    h = max_u32(h, ps->tree);
  } while (accept(ps, ','));
  ps->in_cond = saved;
  expect(ps, ')', "',' or ')' in the argument list");
  if (args.n < lo)
    fail_at(ps, start, "parse.arity", "%.*s takes %s%u arguments, got %u", (int)name_len,
            ps->src + start, hi == UINT32_MAX ? "at least " : "", lo, args.n);
  return height(ps, finish_node(ps, LEIR_EXPR_CALL, fn, start, &args), h + 1);
}

/* atom = number | "inf" | tensor | ivar | call | "(" value ")" */
static leir_expr *parse_atom(parser *ps) {
  int c = peek(ps);
  size_t start = ps->i;
  if (is_digit(c)) return parse_number(ps);
  if (is_upper(c)) return parse_tensor(ps);
  if (is_lower(c)) {
    size_t n;
    size_t s = lower_ident(ps, &n);
    uint32_t lo, hi;
    leir_op fn = function_of(ps->src + s, n, &lo, &hi);
    if (fn != LEIR_OP_NONE) return parse_call(ps, s, fn, lo, hi, n);
    if (n == 3 && memcmp(ps->src + s, "inf", 3) == 0) {
      leir_expr *e = leir__new_expr(ps->p, LEIR_EXPR_INF, LEIR_OP_NONE, 0);
      e->pos = pos32(s);
      return height(ps, e, 1);
    }
    if (peek(ps) == '(')
      fail_at(ps, s, "parse.function", "unknown function '%.*s'", (int)n, ps->src + s);
    leir_expr *e = leir__new_var(ps->p, intern(ps, s, n));
    e->pos = pos32(s);
    return height(ps, e, 1);
  }
  if (c == '(') {
    ps->i++;
    leir_expr *inner = ps->in_cond ? parse_cond(ps) : parse_value(ps);
    uint32_t h = ps->tree;
    expect(ps, ')', "')'");
    return height(ps, unary(ps, LEIR_EXPR_PAREN, inner, start), h + 1);
  }
  expected(ps, "a value (number, tensor, loop variable, function or '(')");
}

static leir_expr *parse_unary(parser *ps);

/* power = atom [ "**" unary ] */
static leir_expr *parse_power(parser *ps) {
  leir_expr *base = parse_atom(ps);
  uint32_t h = ps->tree;
  if (peek(ps) == '*' && peek2(ps) == '*') {
    ps->i += 2;
    enter(ps);
    leir_expr *ex = parse_unary(ps);
    leave(ps);
    return height(ps, binary(ps, LEIR_OP_POW, base, ex), max_u32(h, ps->tree) + 1);
  }
  return base;
}

/* unary = "-" unary | power */
static leir_expr *parse_unary(parser *ps) {
  if (peek(ps) == '-') {
    size_t start = ps->i++;
    enter(ps);
    leir_expr *inner = parse_unary(ps);
    leave(ps);
    return height(ps, unary(ps, LEIR_EXPR_NEG, inner, start), ps->tree + 1);
  }
  return parse_power(ps);
}

/* term = unary { ("*"|"/"|"//"|"%") unary } */
static leir_expr *parse_term(parser *ps) {
  leir_expr *e = parse_unary(ps);
  uint32_t h = ps->tree;
  for (;;) {
    int c = peek(ps);
    leir_op op;
    if (c == '*') {
      op = LEIR_OP_MUL;
      ps->i++;
    } else if (c == '/' && peek2(ps) == '/') {
      op = LEIR_OP_FLOORDIV;
      ps->i += 2;
    } else if (c == '/') {
      op = LEIR_OP_DIV;
      ps->i++;
    } else if (c == '%') {
      op = LEIR_OP_MOD;
      ps->i++;
    } else {
      return height(ps, e, h);
    }
    e = binary(ps, op, e, parse_unary(ps));
    h = max_u32(h, ps->tree) + 1;
    height(ps, e, h);
  }
}

/* sum = term { ("+"|"-") term } */
static leir_expr *parse_sum(parser *ps) {
  enter(ps);
  leir_expr *e = parse_term(ps);
  uint32_t h = ps->tree;
  for (;;) {
    int c = peek(ps);
    if (c != '+' && c != '-') break;
    ps->i++;
    e = binary(ps, c == '+' ? LEIR_OP_ADD : LEIR_OP_SUB, e, parse_term(ps));
    h = max_u32(h, ps->tree) + 1;
    height(ps, e, h);
  }
  leave(ps);
  return height(ps, e, h);
}

static leir_expr *parse_value(parser *ps) {
  bool saved = ps->in_cond;
  ps->in_cond = false;
  leir_expr *e = parse_sum(ps);
  ps->in_cond = saved;
  return e;
}

static leir_op compare_op(parser *ps) {
  int c = peek(ps), d = peek2(ps);
  if (c == '<') {
    ps->i += d == '=' ? 2 : 1;
    return d == '=' ? LEIR_OP_LE : LEIR_OP_LT;
  }
  if (c == '>') {
    ps->i += d == '=' ? 2 : 1;
    return d == '=' ? LEIR_OP_GE : LEIR_OP_GT;
  }
  if (c == '=' && d == '=') {
    ps->i += 2;
    return LEIR_OP_EQ;
  }
  if (c == '!' && d == '=') {
    ps->i += 2;
    return LEIR_OP_NE;
  }
  return LEIR_OP_NONE;
}

/* cmp = sum { cmpop sum } (a chain) */
static leir_expr *parse_compare(parser *ps) {
  size_t start = ps->i;
  skip_ws(ps);
  start = ps->i;
  leir_expr *first = parse_sum(ps);
  uint32_t h = ps->tree;
  leir_op op = compare_op(ps);
  if (op == LEIR_OP_NONE) return first;
  vec operands = {0}, ops = {0};
  vec_push(ps, &operands, first);
  do {
    vec_push(ps, &ops, (void *)(uintptr_t)op);
    vec_push(ps, &operands, parse_sum(ps));
    h = max_u32(h, ps->tree);
  } while ((op = compare_op(ps)) != LEIR_OP_NONE);
  leir_expr *e = finish_node(ps, LEIR_EXPR_COMPARE, LEIR_OP_NONE, start, &operands);
  for (uint32_t k = 0; k < ops.n; k++) e->u.cmp_ops[k] = (uint8_t)(uintptr_t)ops.items[k];
  return height(ps, e, h + 1);
}

/* conj = cmp { "&" cmp } */
static leir_expr *parse_conj(parser *ps) {
  leir_expr *e = parse_compare(ps);
  uint32_t h = ps->tree;
  while (accept(ps, '&')) {
    leir_expr *r = parse_compare(ps);
    leir_expr *a = leir__new_expr(ps->p, LEIR_EXPR_AND, LEIR_OP_NONE, 2);
    a->kids[0] = e;
    a->kids[1] = r;
    a->pos = e->pos;
    e = a;
    h = max_u32(h, ps->tree) + 1;
    height(ps, e, h);
  }
  return height(ps, e, h);
}

/* cond = conj { "|" conj } */
static leir_expr *parse_cond(parser *ps) {
  enter(ps);
  bool saved = ps->in_cond;
  ps->in_cond = true;
  leir_expr *e = parse_conj(ps);
  uint32_t h = ps->tree;
  while (accept(ps, '|')) {
    leir_expr *r = parse_conj(ps);
    leir_expr *o = leir__new_expr(ps->p, LEIR_EXPR_OR, LEIR_OP_NONE, 2);
    o->kids[0] = e;
    o->kids[1] = r;
    o->pos = e->pos;
    e = o;
    h = max_u32(h, ps->tree) + 1;
    height(ps, e, h);
  }
  ps->in_cond = saved;
  leave(ps);
  return height(ps, e, h);
}

/* ---- nests ------------------------------------------------------------ */

static int loop_kind_of(int c) {
  switch (c) { /* the order of leir__loop_kind_letters */
    case 'L': return LEIR_LOOP_SERIAL;
    case 'P': return LEIR_LOOP_PARALLEL;
    case 'V': return LEIR_LOOP_VECTORIZED;
    case 'U': return LEIR_LOOP_UNROLLED;
    case 'B': return LEIR_LOOP_BOUND;
    default: return -1;
  }
}

static bool at_header(parser *ps) {
  int c = peek(ps);
  return loop_kind_of(c) >= 0 && peek2(ps) == '^';
}

/* header = kind "^{" int "}_{" ivar "=" "0" "}" */
static void parse_header(parser *ps, leir__loop *loop) {
  size_t start = ps->i;
  loop->kind = (uint8_t)loop_kind_of(ps->src[ps->i]);
  loop->pos = pos32(start);
  ps->i += 2; /* kind and '^' */
  if (ps->i >= ps->len || ps->src[ps->i] != '{') expected(ps, "'{' after '^'");
  ps->i++;
  loop->extent = parse_int(ps, "a loop extent");
  expect(ps, '}', "'}' after the loop extent");
  expect(ps, '_', "'_{' before the loop variable");
  expect(ps, '{', "'{' after '_'");
  if (!is_lower(peek(ps))) expected(ps, "a loop variable");
  size_t n;
  size_t s = lower_ident(ps, &n);
  if (!leir__is_loop_var_name(ps->src + s, n))
    fail_at(ps, s, "parse.loop-var", "'%.*s' is reserved and cannot name a loop", (int)n,
            ps->src + s);
  if (loop->kind == LEIR_LOOP_BOUND &&
      (n < 2 || (ps->src[s] != 't' && ps->src[s] != 'b') ||
       (ps->src[s + 1] != 'x' && ps->src[s + 1] != 'y' && ps->src[s + 1] != 'z')))
    fail_at(ps, s, "parse.bound-var",
            "a B loop variable must start with t or b and then x, y or z (found '%.*s')",
            (int)n, ps->src + s);
  loop->sym = intern(ps, s, n);
  expect(ps, '=', "'=' after the loop variable");
  size_t zero = (peek(ps), ps->i);
  if (!is_digit(peek(ps))) expected(ps, "the loop start 0");
  int64_t v = parse_int(ps, "the loop start 0");
  if (v != 0 || ps->i - zero != 1)
    fail_at(ps, zero, "parse.loop-start", "a loop must start at 0 (found '%.*s')",
            (int)(ps->i - zero), ps->src + zero);
  expect(ps, '}', "'}' closing the loop header");
}

static leir_nest *parse_nest(parser *ps);

static leir_equation *parse_equation(parser *ps) {
  size_t start = ps->i;
  if (!is_upper(peek(ps))) expected(ps, "an equation (a tensor on the left) or a loop header");
  start = ps->i;
  leir_expr *lhs = parse_tensor(ps);
  expect(ps, '=', "'=' after the left-hand tensor");
  leir_expr *rhs = parse_value(ps);
  leir_equation *eq = leir__new_equation(ps->p, lhs, rhs);
  eq->pos = pos32(start);
  return eq;
}

/* nest = { header } "[" item { item } "]" ";" */
static leir_nest *parse_nest(parser *ps) {
  enter(ps);
  skip_ws(ps);
  if (++ps->nests > ps->max_depth)
    fail_at(ps, ps->i, "parse.depth", "nests nested deeper than %u levels", ps->max_depth);
  size_t start = ps->i;
  /* Headers go to the arena, not to this frame: a nest recursion 1000
   * levels deep must fit a 256 KiB thread stack (tests/test_parse.c). */
  leir__loop *loops = NULL;
  uint32_t nloops = 0, cap = 0;
  while (at_header(ps)) {
    if (nloops == cap && cap == 0) {
      loops = leir__palloc(ps->p, 4 * sizeof *loops);
      cap = 4;
    } else if (nloops == cap) {
      if (nloops >= ps->max_depth)
        fail_at(ps, ps->i, "parse.depth", "more than %u loops in one nest", ps->max_depth);
      leir__loop *bigger = leir__palloc(ps->p, 2 * cap * sizeof *bigger);
      memcpy(bigger, loops, nloops * sizeof *loops);
      loops = bigger;
      cap *= 2;
    }
    parse_header(ps, &loops[nloops++]);
  }
  if (peek(ps) != '[')
    expected(ps, nloops ? "a loop header or '['" : "a loop header (L, P, V, U or B) or '['");
  ps->i++;
  vec items = {0};
  for (;;) {
    int c = peek(ps);
    if (c == ']') break;
    if (c == '[' || at_header(ps)) {
      vec_push(ps, &items, parse_nest(ps));
      /* tag nested nests by setting the low bit of the pointer */
      items.items[items.n - 1] = (void *)((uintptr_t)items.items[items.n - 1] | 1u);
    } else {
      vec_push(ps, &items, parse_equation(ps));
      if (peek(ps) != ';') expected(ps, "';' after the equation");
      ps->i++;
    }
  }
  if (items.n == 0) fail_at(ps, ps->i, "parse.empty-body", "a nest body cannot be empty");
  ps->i++; /* ']' */
  if (peek(ps) != ';')
    fail_at(ps, ps->i, "parse.expected",
            "expected ';' after ']' (a nest ends with \"];\"; to nest a loop, put it inside "
            "the brackets)");
  ps->i++;
  leir_nest *n = leir__new_nest(ps->p, nloops, items.n);
  n->pos = pos32(start);
  if (nloops) memcpy(n->loops, loops, nloops * sizeof *loops);
  for (uint32_t k = 0; k < items.n; k++) {
    uintptr_t raw = (uintptr_t)items.items[k];
    if (raw & 1u)
      n->items[k].nest = (leir_nest *)(raw & ~(uintptr_t)1u);
    else
      n->items[k].eq = (leir_equation *)raw;
  }
  ps->nests--;
  leave(ps);
  return n;
}

static leir_status build_line_table(leir_program *p, const char *text, size_t len) {
  uint32_t lines = 1;
  for (size_t k = 0; k < len; k++)
    if (text[k] == '\n') lines++;
  if (lines == 1) return LEIR_OK;
  p->line_starts = malloc(lines * sizeof *p->line_starts);
  if (!p->line_starts) return LEIR_ERR_NOMEM;
  uint32_t l = 0;
  p->line_starts[l++] = 0;
  for (size_t k = 0; k < len; k++)
    if (text[k] == '\n') p->line_starts[l++] = (uint32_t)(k + 1);
  p->nlines = lines;
  return LEIR_OK;
}

leir_status leir__parse_options(const leir_parse_options *opts, leir_parse_options *o) {
  leir_status st = LEIR__OPTIONS_READ(leir_parse_options, o, opts, LEIR_PARSE_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  if (o->max_depth == 0) o->max_depth = 200;
  if (o->max_depth > 1000) o->max_depth = 1000;
  return LEIR_OK;
}

leir_status leir_program_parse(leir_program **out, const char *text, size_t len,
                               const leir_parse_options *opts) {
  if (!out) return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0, "out is NULL");
  *out = NULL;
  if (!text && len)
    return leir__error(LEIR_ERR_ARGUMENT, "argument", NULL, 0, 0, "text is NULL");
  leir_parse_options o;
  leir_status ost = leir__parse_options(opts, &o);
  if (ost != LEIR_OK) return ost;
  if (len > o.max_input_bytes || len >= UINT32_MAX - 1)
    return leir__error(LEIR_ERR_LIMIT, "limit.input-size", NULL, 0, 0,
                       "input of %zu bytes exceeds the limit of %llu bytes", len,
                       (unsigned long long)o.max_input_bytes);
  /* parsed programs take 7-15 bytes per byte of text (bench/README.md) */
  leir_program *p = leir__program_new(len * 10 + 256);
  if (!p) return leir__error_nomem();
  parser ps;
  memset(&ps, 0, sizeof ps);
  ps.p = p;
  ps.src = text;
  ps.len = len;
  ps.lenient = (o.flags & LEIR_PARSE_LENIENT) != 0;
  ps.max_depth = o.max_depth;
  if (ps.lenient && build_line_table(p, text, len) != LEIR_OK) {
    leir_program_free(p);
    return leir__error_nomem();
  }
  /* Allocation failures longjmp to the same place as parse errors. */
  p->oom_jmp = &ps.jmp;
  int jumped = setjmp(ps.jmp);
  if (jumped) {
    p->oom_jmp = NULL;
    leir_program_free(p);
    return jumped == LEIR__JMP_OOM ? leir__error_nomem() : leir_error_last()->status;
  }
  if (peek(&ps) < 0)
    fail_at(&ps, ps.i, "parse.empty", "empty program: expected a loop header or '['");
  while (peek(&ps) >= 0) {
    leir_nest *n = parse_nest(&ps);
    if (!leir__program_insert_nest(p, p->nnests, n)) longjmp(ps.jmp, LEIR__JMP_OOM);
  }
  p->oom_jmp = NULL;
  p->text_len = len;
  *out = p;
  return LEIR_OK;
}
