/*
 * The parser's expressions: values, index expressions, tensors with their
 * subscripts, calls, and conditions (spec/leir.md §1; the state and the
 * scanning helpers: parse_internal.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "options.h"
#include "vec.h"
#include "ir.h"
#include "parse_internal.h"

/* ---- expressions ------------------------------------------------------ */

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
  if (!is_upper(peek(ps))) leir__parse_expected(ps, "a tensor name");
  ps->i++;
  while (ps->i < ps->len && is_lower(ps->src[ps->i])) ps->i++;
  size_t name_len = ps->i - start;
  char first = ps->src[start];
  if (first == 'L' || first == 'P' || first == 'V' || first == 'U' || first == 'B' || first == 'T')
    leir__parse_fail_at(ps, start, "parse.tensor-name",
                        "tensor names may not start with L, P, V, U, B or T ('%.*s')",
                        (int)name_len, ps->src + start);
  if (peek(ps) != '^') leir__parse_expected(ps, "'^{' after the tensor name");
  ps->i++;
  if (ps->i >= ps->len || ps->src[ps->i] != '{') leir__parse_expected(ps, "'{' after '^'");
  ps->i++;
  skip_ws(ps);
  size_t dstart = ps->i;
  while (ps->i < ps->len && (is_lower(ps->src[ps->i]) || is_digit(ps->src[ps->i]))) ps->i++;
  size_t dlen = ps->i - dstart;
  int dtype = leir__dtype_of(ps->src + dstart, dlen);
  if (dtype < 0) {
    ps->i = dstart;
    leir__parse_expected(ps, "a dtype (f16, bf16, f32, f64, i8, i16, i32, i64, u8, bool)");
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
    leir__parse_expected(ps, "a scope (g, s or l)");
  ps->i++;
  expect(ps, '}', "'}' closing the superscript");
  tensor_head h = {intern(ps, start, name_len), (uint8_t)dtype, (uint8_t)scope};
  return h;
}

/* tensor = tname "^{" dtype "," scope "}" [ "_{" index { "," index } "}" ]
 * The subscripts wait on ps->pending (one stack for all tensors being
 * parsed: an inner tensor completes before its outer one continues), not
 * in this frame. */
leir_expr *leir__parse_tensor(parser *ps) {
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
        leir__parse_fail_at(ps, ps->i, "parse.rank", "tensor rank above %d", LEIR_MAX_RANK);
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
      leir__parse_fail_at(ps, start, "parse.index",
                          "indices are integers; '%c' is not allowed here", ps->src[ps->i]);
    leir_expr *e = leir__new_number(ps->p, ps->src + start, ps->i - start);
    e->pos = pos32(start);
    return height(ps, e, 1);
  }
  if (is_lower(c)) {
    size_t n;
    size_t s = lower_ident(ps, &n);
    if (!leir__is_loop_var_name(ps->src + s, n))
      leir__parse_fail_at(ps, s, "parse.index", "'%.*s' cannot appear in an index", (int)n,
                          ps->src + s);
    leir_expr *e = leir__new_var(ps->p, intern(ps, s, n));
    e->pos = pos32(s);
    return height(ps, e, 1);
  }
  if (is_upper(c)) return leir__parse_tensor(ps);
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
  leir__parse_expected(ps, "an index (integer, loop variable, tensor or '(')");
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
      leir__parse_fail_at(ps, ps->i, "parse.index",
                          "'%s' is not allowed in an index (use '//' or '*')",
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
      leir__parse_fail_at(ps, ps->i, "parse.number", "expected digits after '.' in a number");
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
    leir__parse_fail_at(ps, start, "parse.number", "number literal longer than 4096 characters");
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
      leir__parse_fail_at(ps, ps->i, "parse.arity", "%.*s takes %u argument%s", (int)name_len,
                          ps->src + start, hi, hi == 1 ? "" : "s");
    bool cond = fn == LEIR_OP_IF_THEN_ELSE && args.n == 0;
    ps->in_cond = cond;
    vec_push(ps, &args, cond ? parse_cond(ps) : leir__parse_value(ps));
    h = max_u32(h, ps->tree);
  } while (accept(ps, ','));
  ps->in_cond = saved;
  expect(ps, ')', "',' or ')' in the argument list");
  if (args.n < lo)
    leir__parse_fail_at(ps, start, "parse.arity", "%.*s takes %s%u arguments, got %u",
                        (int)name_len, ps->src + start, hi == UINT32_MAX ? "at least " : "", lo,
                        args.n);
  return height(ps, finish_node(ps, LEIR_EXPR_CALL, fn, start, &args), h + 1);
}

/* atom = number | "inf" | tensor | ivar | call | "(" value ")" */
static leir_expr *parse_atom(parser *ps) {
  int c = peek(ps);
  size_t start = ps->i;
  if (is_digit(c)) return parse_number(ps);
  if (is_upper(c)) return leir__parse_tensor(ps);
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
      leir__parse_fail_at(ps, s, "parse.function", "unknown function '%.*s'", (int)n, ps->src + s);
    leir_expr *e = leir__new_var(ps->p, intern(ps, s, n));
    e->pos = pos32(s);
    return height(ps, e, 1);
  }
  if (c == '(') {
    ps->i++;
    leir_expr *inner = ps->in_cond ? parse_cond(ps) : leir__parse_value(ps);
    uint32_t h = ps->tree;
    expect(ps, ')', "')'");
    return height(ps, unary(ps, LEIR_EXPR_PAREN, inner, start), h + 1);
  }
  leir__parse_expected(ps, "a value (number, tensor, loop variable, function or '(')");
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

leir_expr *leir__parse_value(parser *ps) {
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
