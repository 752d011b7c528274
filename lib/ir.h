/*
 * Internal program model shared by the parser, printer, checks, backends and
 * strategies. Public code sees these structs only as opaque handles
 * (leir_program, leir_nest, leir_equation, leir_expr).
 *
 * Memory: every node lives in its program's arena and dies with the program.
 * A program is immutable once handed to the user; strategies build a new
 * program (leir__program_clone, then edit the clone) and never touch their
 * input.
 *
 * Allocation failures: the leir__new_* builders return NULL, unless the
 * program has `oom_jmp` set, in which case they longjmp there. The parser and
 * the strategies use the longjmp form so that builders can be nested freely.
 */
#ifndef LEIR_IR_H
#define LEIR_IR_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "leir/program.h"
#include "strbuf.h"

#define LEIR__NOPOS UINT32_MAX /* position of a node built by a transformation */
#define LEIR__NOSYM UINT32_MAX
#define LEIR__JMP_OOM 2 /* longjmp value used for allocation failure */

/* ---- expressions ------------------------------------------------------ */

typedef struct leir__number {
  const char *lexeme; /* as written (or synthesized), not NUL-terminated */
  uint32_t len;
  bool is_int;        /* digits only and fits in int64 */
  int64_t ival;       /* valid when is_int */
  double value;       /* strtod of the lexeme */
} leir__number;

/* One node; `kind` is a leir_expr_kind, `op` a leir_op. Children:
 *   TENSOR: n subscript entries (n = rank, 0 for scalars)
 *   PAREN, NEG: 1;  BINARY, AND, OR: 2;  CALL: n arguments
 *   COMPARE: n >= 2 operands and n-1 operators in cmp_ops
 *   NUMBER, INF, VAR: none */
struct leir_expr {
  uint8_t kind;
  uint8_t op;
  uint8_t dtype; /* TENSOR: leir_dtype */
  uint8_t scope; /* TENSOR: leir_scope */
  uint32_t n;
  uint32_t sym;  /* TENSOR, VAR: symbol id */
  uint32_t id;   /* unique within the program (< program->next_id) */
  uint32_t pos;  /* byte offset in the source, or LEIR__NOPOS */
  struct leir_expr **kids;
  union {
    uint8_t *cmp_ops;   /* COMPARE */
    leir__number *num;  /* NUMBER */
  } u;
};

/* ---- nests ------------------------------------------------------------ */

typedef struct leir__loop {
  uint8_t kind; /* leir_loop_kind */
  uint32_t sym; /* loop variable */
  int64_t extent;
  uint32_t pos;
} leir__loop;

struct leir_equation {
  struct leir_expr *lhs; /* TENSOR */
  struct leir_expr *rhs;
  uint32_t pos;
  uint32_t id;
};

typedef struct leir__item {
  struct leir_equation *eq;  /* exactly one of eq / nest is set */
  struct leir_nest *nest;
} leir__item;

struct leir_nest {
  uint32_t nloops;
  uint32_t nitems;
  leir__loop *loops; /* outermost first */
  leir__item *items;
  uint32_t pos;
  uint32_t id;
};

/* ---- program ---------------------------------------------------------- */

typedef struct leir__decl {
  uint32_t sym;
  uint8_t dtype;
  uint8_t role; /* leir_role */
  uint32_t rank;
  int64_t *shape;
  uint8_t domain;           /* leir_domain_kind; 0 = none declared */
  double dom_a, dom_b;      /* VALUE: a; RANGE/UNIFORM: [a, b]; NORMAL: mean a, std b */
} leir__decl;

typedef struct leir__symtab {
  uint32_t count, cap;     /* symbols */
  const char **names;      /* NUL-terminated, in the arena */
  uint32_t *lens;
  uint32_t *slots;         /* open addressing: sym+1, 0 = empty */
  uint32_t nslots;
} leir__symtab;

struct leir_program {
  leir__arena arena;
  leir__symtab syms;
  uint32_t nnests, cap_nests;
  struct leir_nest **nests;
  uint32_t next_id;        /* ids for exprs, equations and nests */
  uint32_t nlines;         /* line table of the source (lenient input) */
  uint32_t *line_starts;   /* byte offsets; NULL = single line */
  uint32_t nsig;
  leir__decl *sig;         /* inputs first, then outputs */
  char *name;              /* program file name field; NULL if unset */
  size_t text_len;         /* length of the parsed text: a size hint for printing */
  jmp_buf *oom_jmp;        /* see the header comment */
  /* Set only inside leir_program_clone: the source, whose symbol ids this
   * program shares, so copies need not re-intern every name. */
  const struct leir_program *sym_mirror;
};

/* ---- lifecycle and symbols ------------------------------------------- */

/* A new empty program; `size_hint` sizes the first arena chunk. */
leir_program *leir__program_new(size_t size_hint);
void *leir__palloc(leir_program *p, size_t size); /* zeroed */
char *leir__pstrndup(leir_program *p, const char *s, size_t len);

uint32_t leir__sym_intern(leir_program *p, const char *s, size_t len);
/* LEIR__NOSYM when absent. */
uint32_t leir__sym_find(const leir_program *p, const char *s, size_t len);
static inline const char *leir__sym_name(const leir_program *p, uint32_t sym) {
  return p->syms.names[sym];
}
static inline uint32_t leir__sym_len(const leir_program *p, uint32_t sym) {
  return p->syms.lens[sym];
}

/* 1-based line/column of a byte offset; 0/0 for LEIR__NOPOS. */
void leir__position(const leir_program *p, uint32_t pos, uint32_t *line, uint32_t *column);

/* ---- builders (see the allocation note above) ------------------------- */

leir_expr *leir__new_expr(leir_program *p, leir_expr_kind kind, leir_op op, uint32_t n);
leir_expr *leir__new_int(leir_program *p, int64_t v);            /* NUMBER (v >= 0) */
leir_expr *leir__new_number(leir_program *p, const char *lexeme, size_t len);
leir_expr *leir__new_var(leir_program *p, uint32_t sym);
leir_expr *leir__new_tensor(leir_program *p, uint32_t sym, leir_dtype dt, leir_scope sc,
                            uint32_t rank);
leir_expr *leir__new_binary(leir_program *p, leir_op op, leir_expr *a, leir_expr *b);
leir_expr *leir__new_unary(leir_program *p, leir_expr_kind kind, leir_expr *a); /* PAREN, NEG */
leir_expr *leir__new_call(leir_program *p, leir_op fn, uint32_t nargs);
leir_equation *leir__new_equation(leir_program *p, leir_expr *lhs, leir_expr *rhs);
leir_nest *leir__new_nest(leir_program *p, uint32_t nloops, uint32_t nitems);

/* Deep copy of `e` (from program `src`, which may be `dst`) into `dst`;
 * symbols are re-interned when the programs differ. Positions are kept. */
leir_expr *leir__copy_expr(leir_program *dst, const leir_program *src, const leir_expr *e);
leir_nest *leir__copy_nest(leir_program *dst, const leir_program *src, const leir_nest *n);

/* Inserts `nest` at top-level position `at` (0..nnests). */
int leir__program_insert_nest(leir_program *p, uint32_t at, leir_nest *nest);
void leir__program_remove_nest(leir_program *p, uint32_t at);

/* ---- parsing (lib/parse.c) -------------------------------------------- */

/* Options with defaults filled in and limits applied; LEIR_ERR_ARGUMENT
 * (recorded) when `opts->size` is too small. `opts` may be NULL. */
leir_status leir__parse_options(const leir_parse_options *opts, leir_parse_options *o);

/* ---- printing (lib/print.c) ------------------------------------------- */

/* Optional renaming used by the alpha-normalized hash: when non-NULL, a
 * symbol s prints as names[s] if that entry is non-NULL. */
typedef struct leir__rename {
  const char *const *names;
  uint32_t count;
} leir__rename;

void leir__print_program(leir__strbuf *b, const leir_program *p, uint32_t flags,
                         const leir__rename *rn);
void leir__print_nest(leir__strbuf *b, const leir_program *p, const leir_nest *n,
                      const leir__rename *rn);
void leir__print_loops(leir__strbuf *b, const leir_program *p, const leir_nest *n);
void leir__print_equation(leir__strbuf *b, const leir_program *p, const leir_equation *eq);
void leir__print_expr(leir__strbuf *b, const leir_program *p, const leir_expr *e);

/* ---- hashing (lib/hash.c) --------------------------------------------- */

/* A hash equal for programs that differ only in fresh names (as
 * leir_program_hash_alpha) and in parentheses that decide nothing (not the
 * ones that stop an accumulation form, spec/leir.md §3.4): what `leir eval`
 * compares, so that a respelled copy of a prompt is no new program. 0 when
 * memory runs out. May set the last error (the program is analyzed). */
uint64_t leir__program_hash_structure(const leir_program *p);

/* ---- small helpers ---------------------------------------------------- */

extern const char *const leir__loop_kind_letters; /* "LPVUB" */
/* The dtype spelled by s[0..len) (not NUL-terminated), or -1. */
int leir__dtype_of(const char *s, size_t len);
bool leir__is_tensor_name(const char *s, size_t len);
bool leir__is_loop_var_name(const char *s, size_t len);
/* Bijective base-20 / base-19 fresh names (spec/leir.md §5). Writes a NUL-
 * terminated name into buf (>= 16 bytes). */
void leir__tensor_name_of_index(uint64_t index, char *buf);
void leir__loop_name_of_index(uint64_t index, char *buf);
/* Inverse of leir__tensor_name_of_index; -1 when not in the alphabet. */
int64_t leir__tensor_index_of_name(const char *s, size_t len);
int64_t leir__loop_index_of_name(const char *s, size_t len);

/* Structural equality (ignores positions and ids; numbers compare by lexeme). */
bool leir__expr_equal(const leir_program *pa, const leir_expr *a, const leir_program *pb,
                      const leir_expr *b);

#endif /* LEIR_IR_H */
