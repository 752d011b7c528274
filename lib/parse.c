/*
 * LEIR parser (spec/leir.md §1): a recursive-descent parser over bytes.
 * This file: errors, loop headers, nests and equations, the line table and
 * the entry points; expressions are in parse_expr.c.
 *
 * Untrusted input is the normal case, so: every byte is examined at most a
 * constant number of times (no backtracking), recursion is bounded by
 * `max_depth`, integers are range-checked, and errors leave through one
 * longjmp after recording line, column and what was expected. All memory
 * comes from the new program's arena and is released with it on error.
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
void
leir__parse_fail_at(parser *ps, size_t at, const char *rule, const char *fmt, ...) {
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
void
leir__parse_expected(parser *ps, const char *what) {
  char found[64];
  describe(ps, ps->i, found, sizeof found);
  leir__parse_fail_at(ps, ps->i, "parse.expected", "expected %s, found %s", what, found);
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
  if (ps->i >= ps->len || ps->src[ps->i] != '{') leir__parse_expected(ps, "'{' after '^'");
  ps->i++;
  loop->extent = parse_int(ps, "a loop extent");
  expect(ps, '}', "'}' after the loop extent");
  expect(ps, '_', "'_{' before the loop variable");
  expect(ps, '{', "'{' after '_'");
  if (!is_lower(peek(ps))) leir__parse_expected(ps, "a loop variable");
  size_t n;
  size_t s = lower_ident(ps, &n);
  if (!leir__is_loop_var_name(ps->src + s, n))
    leir__parse_fail_at(ps, s, "parse.loop-var", "'%.*s' is reserved and cannot name a loop",
                        (int)n, ps->src + s);
  if (loop->kind == LEIR_LOOP_BOUND &&
      (n < 2 || (ps->src[s] != 't' && ps->src[s] != 'b') ||
       (ps->src[s + 1] != 'x' && ps->src[s + 1] != 'y' && ps->src[s + 1] != 'z')))
    leir__parse_fail_at(
        ps, s, "parse.bound-var",
        "a B loop variable must start with t or b and then x, y or z (found '%.*s')", (int)n,
        ps->src + s);
  loop->sym = intern(ps, s, n);
  expect(ps, '=', "'=' after the loop variable");
  size_t zero = (peek(ps), ps->i);
  if (!is_digit(peek(ps))) leir__parse_expected(ps, "the loop start 0");
  int64_t v = parse_int(ps, "the loop start 0");
  if (v != 0 || ps->i - zero != 1)
    leir__parse_fail_at(ps, zero, "parse.loop-start", "a loop must start at 0 (found '%.*s')",
                        (int)(ps->i - zero), ps->src + zero);
  expect(ps, '}', "'}' closing the loop header");
}

static leir_nest *parse_nest(parser *ps);

static leir_equation *parse_equation(parser *ps) {
  size_t start = ps->i;
  if (!is_upper(peek(ps)))
    leir__parse_expected(ps, "an equation (a tensor on the left) or a loop header");
  start = ps->i;
  leir_expr *lhs = leir__parse_tensor(ps);
  expect(ps, '=', "'=' after the left-hand tensor");
  leir_expr *rhs = leir__parse_value(ps);
  leir_equation *eq = leir__new_equation(ps->p, lhs, rhs);
  eq->pos = pos32(start);
  return eq;
}

/* nest = { header } "[" item { item } "]" ";" */
static leir_nest *parse_nest(parser *ps) {
  enter(ps);
  skip_ws(ps);
  if (++ps->nests > ps->max_depth)
    leir__parse_fail_at(ps, ps->i, "parse.depth", "nests nested deeper than %u levels",
                        ps->max_depth);
  size_t start = ps->i;
  /* Headers go to the arena, not to this frame: a nest recursion 1000
   * levels deep must fit a 256 KiB thread stack (tests/test_parse.c). */
  leir__loop *loops = NULL;
  uint32_t nloops = 0, cap = 0;
  while (at_header(ps)) {
    if (nloops == cap) {
      if (cap && nloops >= ps->max_depth)
        leir__parse_fail_at(ps, ps->i, "parse.depth", "more than %u loops in one nest",
                            ps->max_depth);
      size_t nc = 0, bytes = SIZE_MAX; /* an overflow fails as out of memory (longjmp) */
      if (leir__vec_next_cap(cap, (size_t)nloops + 1, sizeof *loops, 4, UINT32_MAX, &nc))
        bytes = nc * sizeof *loops;
      leir__loop *bigger = leir__palloc(ps->p, bytes);
      if (nloops) memcpy(bigger, loops, nloops * sizeof *loops);
      loops = bigger;
      cap = (uint32_t)nc;
    }
    parse_header(ps, &loops[nloops++]);
  }
  if (peek(ps) != '[')
    leir__parse_expected(
        ps, nloops ? "a loop header or '['" : "a loop header (L, P, V, U or B) or '['");
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
      if (peek(ps) != ';') leir__parse_expected(ps, "';' after the equation");
      ps->i++;
    }
  }
  if (items.n == 0)
    leir__parse_fail_at(ps, ps->i, "parse.empty-body", "a nest body cannot be empty");
  ps->i++; /* ']' */
  if (peek(ps) != ';')
    leir__parse_fail_at(
        ps, ps->i, "parse.expected",
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
  if (!out) return leir__error_arg(NULL, "out is NULL");
  *out = NULL;
  if (!text && len)
    return leir__error_arg(NULL, "text is NULL");
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
    leir__parse_fail_at(&ps, ps.i, "parse.empty", "empty program: expected a loop header or '['");
  while (peek(&ps) >= 0) {
    leir_nest *n = parse_nest(&ps);
    if (!leir__program_insert_nest(p, p->nnests, n)) longjmp(ps.jmp, LEIR__JMP_OOM);
  }
  p->oom_jmp = NULL;
  p->text_len = len;
  *out = p;
  return LEIR_OK;
}
