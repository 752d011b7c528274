/*
 * Rewriting helpers (rewrite.c) and fresh names (names.c) for the
 * strategies' apply functions. Part of the strategy kit (include kit.h).
 */
#ifndef LEIR_STRATEGIES_REWRITE_H
#define LEIR_STRATEGIES_REWRITE_H

#ifndef LEIR_STRATEGIES_KIT_H
#error "include kit.h (which includes this header)"
#endif

/* Replaces every use of loop variable `sym` inside nest n (all items, at
 * any depth) by a copy of `with`. A compound replacement is parenthesized
 * where the variable sits next to an operator (the reference's rule:
 * `c+g` with c -> k*4+c gives (k*4+c)+g, a whole subscript entry does not
 * get parentheses). */
void leir__subst_var(leir_program *p, leir_nest *n, uint32_t sym, const leir_expr *with);
/* Renames loop variable `from` to `to` in n's loops and uses (any depth). */
void leir__rename_var(leir_nest *n, uint32_t from, uint32_t to);
/* Renames every tensor access of symbol `from` in n to `to` with scope sc
 * (any depth). */
void leir__rename_tensor(leir_nest *n, uint32_t from, uint32_t to, leir_scope sc);
/* Does e (or a subtree) use loop variable sym? */
bool leir__expr_uses_var(const leir_expr *e, uint32_t sym);
/* Does e contain a tensor access (of any tensor)? leir__expr_has_tensor,
 * lib/visit.h. */
/* Does e access tensor sym outside the subtree `skip` (NULL: none)? */
bool leir__expr_reads_tensor(const leir_expr *e, uint32_t sym, const leir_expr *skip);
/* Is tensor sym accessed inside a subscript of e (an indirect index)? */
bool leir__expr_tensor_in_subscript(const leir_expr *e, uint32_t sym);
/* Does some equation of nest n (any depth) access tensor `name`? */
bool leir__nest_uses_tensor_named(const leir_program *p, const leir_nest *n, const char *name);
/* Sets the scope of every access of tensor sym in n (any depth). */
void leir__set_tensor_scope(leir_nest *n, uint32_t sym, leir_scope sc);
/* Builds a*b+c style affine pieces in p. */
leir_expr *leir__mk_var(leir_program *p, uint32_t sym);
leir_expr *leir__mk_int(leir_program *p, int64_t v);
leir_expr *leir__mk_bin(leir_program *p, leir_op op, leir_expr *a, leir_expr *b);

/* Divisor pairs (d, n/d) with 1 < d <= sqrt(n): the outer extents d in
 * increasing order; returns the count (at most cap). */
uint32_t leir__divisors(int64_t n, int64_t *out, uint32_t cap);

/* Loops of n (bits) whose value some subscript entry of tensor t
 * determines: an affine entry over n's loops that is injective (mixed
 * radix: sorted by |coef|, each coefficient exceeds the span of the
 * smaller terms). A copy nest may only keep a P/V/B kind on such loops:
 * the others write an element from several iterations. */
uint64_t leir__pinned_by_subscript(const leir_nest *n, const leir_expr *t);

/* The kinds of the loops of a copy or write-back nest m (tensor_split's
 * and tensor_concat's): a B loop that no written subscript uses gets
 * extent 1 (the reference's tx rule); a P, V or B loop that does not pin
 * every written element becomes L (spec/leir.md §3.2: an annotated loop
 * must not carry a dependence; the reference keeps B when one copy uses the
 * loop and another does not, and the CUDA lowering refuses that nest,
 * cuda.bound-dependence). */
void leir__copy_nest_kinds(leir_nest *m);

/* The reference's fix-up of a copy nest over loops sel[0..n) of `src`:
 * when none of them is a bound loop that `pinned` (bits over src's loops)
 * contains, the first pinned one with extent < 1024 becomes B and is
 * renamed tx. Returns the index in sel of that loop, n when a pinned bound
 * loop is already there, -1 when no loop qualifies. */
int leir__fixup_index(const leir_nest *src, const uint32_t *sel, uint32_t n, uint64_t pinned);

/* Next permutation of v[0..n) in lexicographic order; false after the
 * last (and for n < 2). */
bool leir__next_perm(uint32_t *v, uint32_t n);
/* Writes v[0..n) as "a,b,c" into buf (NUL-terminated, truncated to cap);
 * returns the length snprintf would have written. */
size_t leir__format_list(char *buf, size_t cap, const uint32_t *v, uint32_t n);

/* Every loop variable used inside e, as a bit mask over n's loops. */
uint64_t leir__loops_in(const leir_nest *n, const leir_expr *e);

/* Range of an integer expression over nest r's full loop ranges (no guard
 * facts), using the analysis; false when unknown. */
bool leir__entry_range(const leir__sctx *c, const leir__nref *r, const leir_expr *e, int64_t *lo,
                       int64_t *hi);

/* GPU axes of bound loops: the name's first two letters ([tb][xyz]). */
typedef enum leir__axis {
  LEIR__AXIS_TX = 0, LEIR__AXIS_TY, LEIR__AXIS_TZ, LEIR__AXIS_BX, LEIR__AXIS_BY, LEIR__AXIS_BZ,
  LEIR__AXIS_NONE = -1
} leir__axis;
extern const char *const leir__axis_names[6];
leir__axis leir__axis_of(const char *name);
/* Can a loop of `extent` be bound to `axis` inside top-level nest `tree`
 * (axis not used by another loop than `except`, spec limits: threads x,y
 * <= 1024, z <= 64, <= 1024 threads per block; blocks y,z <= 65535)? On
 * failure *why says which limit. */
bool leir__axis_fits(const leir_program *p, const leir_nest *tree, leir__axis axis, int64_t extent,
                     uint32_t except, const char **why);

/* ---- fresh names (names.c) ------------------------------------------------------------- */

/* Fresh names (spec/leir.md §5). Tensors: 1 + the largest alphabet index of
 * any tensor name in the program, so fresh names never collide. A strategy
 * that needs several fresh tensors takes c->next_tensor, c->next_tensor + 1,
 * ... (leir__tensor_sym interns them in the clone). */
uint64_t leir__first_fresh_tensor(const leir_program *p);
uint32_t leir__tensor_sym(leir_program *p, uint64_t index);
/* The first loop name at alphabet index >= start that no loop of the
 * top-level nest tree `tree` uses (loop variables are scoped per nest).
 * `also` (n names) are taken too. Interned in p. */
uint32_t leir__fresh_loop(leir_program *p, const leir_nest *tree, uint64_t start,
                          const uint32_t *also, uint32_t n);
/* `base` if no loop of `tree` uses it, else base_1, base_2, ... */
uint32_t leir__fresh_loop_named(leir_program *p, const leir_nest *tree, const char *base);

#endif
