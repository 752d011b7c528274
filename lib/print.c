/*
 * LEIR printer. Canonical text has no whitespace; parsed programs print back
 * byte for byte because number lexemes and parenthesis nodes are kept. Nodes
 * built by transformations get the fewest parentheses that keep the tree.
 */
#include <string.h>

#include "error.h"
#include "ir.h"

/* "^{dtype,scope}" for every dtype (leir_dtype order) and scope (g, s, l). */
static const char *const superscripts[LEIR_DTYPE_COUNT][3] = {
    {"^{f16,g}", "^{f16,s}", "^{f16,l}"},
    {"^{bf16,g}", "^{bf16,s}", "^{bf16,l}"},
    {"^{f32,g}", "^{f32,s}", "^{f32,l}"},
    {"^{f64,g}", "^{f64,s}", "^{f64,l}"},
    {"^{i8,g}", "^{i8,s}", "^{i8,l}"},
    {"^{i16,g}", "^{i16,s}", "^{i16,l}"},
    {"^{i32,g}", "^{i32,s}", "^{i32,l}"},
    {"^{i64,g}", "^{i64,s}", "^{i64,l}"},
    {"^{u8,g}", "^{u8,s}", "^{u8,l}"},
    {"^{bool,g}", "^{bool,s}", "^{bool,l}"}};

const char *leir_op_name(leir_op op) {
  switch (op) {
    case LEIR_OP_ADD: return "+";
    case LEIR_OP_SUB: return "-";
    case LEIR_OP_MUL: return "*";
    case LEIR_OP_DIV: return "/";
    case LEIR_OP_FLOORDIV: return "//";
    case LEIR_OP_MOD: return "%";
    case LEIR_OP_POW: return "**";
    case LEIR_OP_EXP: return "exp";
    case LEIR_OP_LOG: return "log";
    case LEIR_OP_SQRT: return "sqrt";
    case LEIR_OP_ABS: return "abs";
    case LEIR_OP_ERF: return "erf";
    case LEIR_OP_MAX: return "max";
    case LEIR_OP_MIN: return "min";
    case LEIR_OP_IF_THEN_ELSE: return "if_then_else";
    case LEIR_OP_LT: return "<";
    case LEIR_OP_LE: return "<=";
    case LEIR_OP_GT: return ">";
    case LEIR_OP_GE: return ">=";
    case LEIR_OP_EQ: return "==";
    case LEIR_OP_NE: return "!=";
    case LEIR_OP_NONE: break;
  }
  return "";
}

/* Binding strength, loosest first. */
enum { PREC_OR = 1, PREC_AND, PREC_CMP, PREC_SUM, PREC_TERM, PREC_NEG, PREC_POW, PREC_ATOM };

static int prec(const leir_expr *e) {
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_OR: return PREC_OR;
    case LEIR_EXPR_AND: return PREC_AND;
    case LEIR_EXPR_COMPARE: return PREC_CMP;
    case LEIR_EXPR_NEG: return PREC_NEG;
    case LEIR_EXPR_BINARY:
      switch ((leir_op)e->op) {
        case LEIR_OP_ADD:
        case LEIR_OP_SUB: return PREC_SUM;
        case LEIR_OP_POW: return PREC_POW;
        default: return PREC_TERM;
      }
    default: return PREC_ATOM;
  }
}

typedef struct printer {
  leir__strbuf *b;
  const leir_program *p;
  const leir__rename *rn;
} printer;

static void put_sym(printer *pr, uint32_t sym) {
  if (pr->rn && sym < pr->rn->count && pr->rn->names[sym]) {
    leir__sb_puts(pr->b, pr->rn->names[sym]);
    return;
  }
  leir__sb_put(pr->b, leir__sym_name(pr->p, sym), leir__sym_len(pr->p, sym));
}

static void print_expr(printer *pr, const leir_expr *e);

static void print_child(printer *pr, const leir_expr *child, bool parens) {
  if (parens) leir__sb_putc(pr->b, '(');
  print_expr(pr, child);
  if (parens) leir__sb_putc(pr->b, ')');
}

static void print_expr(printer *pr, const leir_expr *e) {
  leir__strbuf *b = pr->b;
  switch ((leir_expr_kind)e->kind) {
    case LEIR_EXPR_NUMBER: leir__sb_put(b, e->u.num->lexeme, e->u.num->len); return;
    case LEIR_EXPR_INF: leir__sb_put(b, "inf", 3); return;
    case LEIR_EXPR_VAR: put_sym(pr, e->sym); return;
    case LEIR_EXPR_TENSOR:
      put_sym(pr, e->sym);
      leir__sb_puts(b, e->dtype < LEIR_DTYPE_COUNT && e->scope < 3 ? superscripts[e->dtype][e->scope]
                                                                    : "^{?,?}");
      if (e->n) {
        leir__sb_put(b, "_{", 2);
        for (uint32_t k = 0; k < e->n; k++) {
          if (k) leir__sb_putc(b, ',');
          print_expr(pr, e->kids[k]);
        }
        leir__sb_putc(b, '}');
      }
      return;
    case LEIR_EXPR_PAREN:
      leir__sb_putc(b, '(');
      print_expr(pr, e->kids[0]);
      leir__sb_putc(b, ')');
      return;
    case LEIR_EXPR_NEG:
      leir__sb_putc(b, '-');
      print_child(pr, e->kids[0], prec(e->kids[0]) < PREC_NEG);
      return;
    case LEIR_EXPR_BINARY: {
      int p = prec(e);
      const leir_expr *l = e->kids[0], *r = e->kids[1];
      if (e->op == LEIR_OP_POW) {
        /* right-associative; the exponent is a `unary` */
        print_child(pr, l, prec(l) <= PREC_POW);
        leir__sb_put(b, "**", 2);
        print_child(pr, r, prec(r) < PREC_NEG);
      } else {
        print_child(pr, l, prec(l) < p);
        leir__sb_puts(b, leir_op_name((leir_op)e->op));
        print_child(pr, r, prec(r) <= p);
      }
      return;
    }
    case LEIR_EXPR_CALL:
      leir__sb_puts(b, leir_op_name((leir_op)e->op));
      leir__sb_putc(b, '(');
      for (uint32_t k = 0; k < e->n; k++) {
        if (k) leir__sb_putc(b, ',');
        print_expr(pr, e->kids[k]);
      }
      leir__sb_putc(b, ')');
      return;
    case LEIR_EXPR_COMPARE:
      for (uint32_t k = 0; k < e->n; k++) {
        if (k) leir__sb_puts(b, leir_op_name((leir_op)e->u.cmp_ops[k - 1]));
        print_child(pr, e->kids[k], prec(e->kids[k]) < PREC_SUM);
      }
      return;
    case LEIR_EXPR_AND:
    case LEIR_EXPR_OR: {
      int p = prec(e);
      print_child(pr, e->kids[0], prec(e->kids[0]) < p);
      leir__sb_putc(b, e->kind == LEIR_EXPR_AND ? '&' : '|');
      print_child(pr, e->kids[1], prec(e->kids[1]) <= p);
      return;
    }
  }
}

static void print_loops(printer *pr, const leir_nest *n) {
  for (uint32_t k = 0; k < n->nloops; k++) {
    const leir__loop *l = &n->loops[k];
    leir__sb_putc(pr->b, leir__loop_kind_letters[l->kind]);
    leir__sb_put(pr->b, "^{", 2);
    leir__sb_put_i64(pr->b, l->extent);
    leir__sb_put(pr->b, "}_{", 3);
    put_sym(pr, l->sym);
    leir__sb_put(pr->b, "=0}", 3);
  }
}

static void print_eq(printer *pr, const leir_equation *eq) {
  print_expr(pr, eq->lhs);
  leir__sb_putc(pr->b, '=');
  print_expr(pr, eq->rhs);
}

static bool has_nested(const leir_nest *n) {
  for (uint32_t k = 0; k < n->nitems; k++)
    if (n->items[k].nest) return true;
  return false;
}

static void indent(leir__strbuf *b, uint32_t depth) {
  for (uint32_t k = 0; k < depth; k++) leir__sb_put(b, "  ", 2);
}

static void print_nest(printer *pr, const leir_nest *n, bool pretty, uint32_t depth) {
  print_loops(pr, n);
  leir__sb_putc(pr->b, '[');
  bool multiline = pretty && has_nested(n);
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (multiline) {
      leir__sb_putc(pr->b, '\n');
      indent(pr->b, depth + 1);
    }
    if (n->items[k].eq) {
      print_eq(pr, n->items[k].eq);
      leir__sb_putc(pr->b, ';');
    } else {
      print_nest(pr, n->items[k].nest, pretty, depth + 1);
    }
  }
  if (multiline) {
    leir__sb_putc(pr->b, '\n');
    indent(pr->b, depth);
  }
  leir__sb_put(pr->b, "];", 2);
}

void leir__print_program(leir__strbuf *b, const leir_program *p, uint32_t flags,
                         const leir__rename *rn) {
  printer pr = {b, p, rn};
  bool pretty = (flags & LEIR_PRINT_PRETTY) != 0;
  /* canonical text is as long as strict input; pretty adds a little */
  leir__sb_reserve(b, p->text_len + (pretty ? p->text_len / 8 + 64 : 0));
  for (uint32_t k = 0; k < p->nnests; k++) {
    print_nest(&pr, p->nests[k], pretty, 0);
    if (pretty) leir__sb_putc(b, '\n');
  }
}

void leir__print_nest(leir__strbuf *b, const leir_program *p, const leir_nest *n,
                      const leir__rename *rn) {
  printer pr = {b, p, rn};
  print_nest(&pr, n, false, 0);
}

void leir__print_loops(leir__strbuf *b, const leir_program *p, const leir_nest *n) {
  printer pr = {b, p, NULL};
  print_loops(&pr, n);
}

void leir__print_equation(leir__strbuf *b, const leir_program *p, const leir_equation *eq) {
  printer pr = {b, p, NULL};
  print_eq(&pr, eq);
}

void leir__print_expr(leir__strbuf *b, const leir_program *p, const leir_expr *e) {
  printer pr = {b, p, NULL};
  print_expr(&pr, e);
}

leir_status leir_program_print(const leir_program *p, uint32_t flags, char **out,
                               size_t *out_len) {
  if (!p || !out) return leir__error_arg(NULL, "NULL argument");
  leir__strbuf b = LEIR__STRBUF_INIT;
  /* most programs print to a few KiB: one allocation instead of doubling */
  leir__sb_reserve(&b, 4096);
  leir__print_program(&b, p, flags, NULL);
  size_t n;
  *out = leir__sb_finish(&b, &n);
  if (!*out) return leir__error_nomem();
  if (out_len) *out_len = n;
  return LEIR_OK;
}
