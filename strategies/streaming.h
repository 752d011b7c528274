/*
 * Sites and builders shared by the streaming strategies (#36, #40-#42):
 * the three nests of a softmax-style normalization and the product that
 * consumes it.
 *
 *   max nest    L[M_s=max(M_s,X);];          one equation, implicit -inf init
 *   sum nest    L[S_s=S_s+exp(X-M_s);];      the same loops, the same X
 *   div nest    L[P_u=exp(X-M_s)/S_s;];      the same loops, u injective
 *   matmul nest L'[O_o=O_o+P_q*V_v;];        (or V*P) contracting P's k axis
 *
 * s is the row subscript: distinct plain loop variables, every loop of the
 * nest but one, the reduction loop k (kind L or U). The rewrites keep M and
 * S (their final values are unchanged), so later readers are untouched.
 *
 * The running forms guard the masked rows the way FlashAttention does: a
 * running maximum F that is still -inf (every element so far masked) gives
 * the new term 0 and no rescaling (F==M), never exp(-inf - -inf) = NaN.
 * The prefix forms (state=prefix of #40, #41; always #36) are the
 * reference's program shape: arrays over the reduction loop computed by a
 * recurrence, guarded only where a -inf can reach X.
 */
#ifndef LEIR_STRATEGIES_STREAMING_H
#define LEIR_STRATEGIES_STREAMING_H

#include "kit.h"

typedef struct leir__stream_max {
  uint32_t t;              /* top-level nest index */
  const leir_nest *n;
  const leir_equation *eq;
  uint32_t m;              /* M */
  uint32_t k;              /* the reduction loop (index in n) */
} leir__stream_max;

/* Is top-level nest t a max reduction M_s=max(M_s,X1,...)? On failure *rule
 * and why (cap bytes) say which precondition failed. `nary`: more than one
 * X allowed. */
bool leir__stream_max_at(const leir__sctx *c, uint32_t t, bool nary, leir__stream_max *out,
                         leir__rule *rule, char *why, size_t cap);

/* The X of a two-argument max site. */
static inline const leir_expr *leir__stream_x(const leir__stream_max *mx) {
  return mx->eq->rhs->kids[1];
}

/* Does nest t+1 compute S_s=S_s+exp(X-M_s) for the max site mx? *s gets S. */
bool leir__stream_sum_at(const leir__sctx *c, const leir__stream_max *mx, uint32_t t,
                         uint32_t *s, char *why, size_t cap);

/* Does nest t compute P_u=exp(X-M_s)/S_s (u injective over all loops)? *pp
 * gets P. */
bool leir__stream_div_at(const leir__sctx *c, const leir__stream_max *mx, uint32_t s, uint32_t t,
                         uint32_t *pp, char *why, size_t cap);

/* Does any top-level nest other than those in [from, to] access tensor
 * sym, or is sym a signature variable? */
bool leir__stream_used_outside(const leir__sctx *c, uint32_t sym, uint32_t from, uint32_t to);

/* ---- builders (in `out`, a clone of c->p; they longjmp on failure) ---- */

/* A copy of tensor access `like` (its subscript copied) with symbol sym. */
leir_expr *leir__stream_tensor(leir_program *out, const leir_expr *like, uint32_t sym);
/* if_then_else(cond, a, b) */
leir_expr *leir__stream_ite(leir_program *out, leir_expr *cond, leir_expr *a, leir_expr *b);
/* a == -inf */
leir_expr *leir__stream_is_neg_inf(leir_program *out, leir_expr *a);
/* -inf */
leir_expr *leir__stream_neg_inf(leir_program *out);
/* fn(a) */
leir_expr *leir__stream_call1(leir_program *out, leir_op fn, leir_expr *a);
leir_expr *leir__stream_call2(leir_program *out, leir_op fn, leir_expr *a, leir_expr *b);
/* A nest with the loops of n except loop `skip` (-1: all), and nitems items. */
leir_nest *leir__stream_nest_without(leir_program *out, const leir_nest *n, int skip,
                                     uint32_t nitems);
/* A nest with loop k of n only. */
leir_nest *leir__stream_nest_of(leir_program *out, const leir_nest *n, uint32_t k,
                                uint32_t nitems);
/* An equation item. */
void leir__stream_set_eq(leir_program *out, leir_nest *n, uint32_t item, leir_expr *lhs,
                         leir_expr *rhs);

/* The running sum's accumulator: S itself when S is f64, else a fresh f64
 * tensor T (S=T afterwards): rescaling a sum costs a rounding per change of
 * the maximum, which an f32 or f16 sum cannot afford next to the original's
 * error (the verifier's reassociation bound); in f64 the rewritten
 * program is at least as accurate as the original. */
typedef struct leir__stream_accum {
  uint32_t sym;
  uint8_t dtype;
  bool fresh; /* a new tensor: S=T must follow */
} leir__stream_accum;

/* The accumulator for a tensor accessed like `like` (symbol sym), taking
 * fresh names from *next. */
void leir__stream_accum_for(leir_program *out, const leir_expr *like, uint32_t sym,
                            uint64_t *next, leir__stream_accum *a);
/* acc=native: the running sum is S itself in S's dtype (dt), as the
 * reference keeps it. In f32 or f16 every element costs a rounding of the
 * sum in that dtype (and each growth of the maximum one more for the
 * rescaling): the reassociation bound of docs/verification.md is what
 * decides whether that is close enough; the candidate is offered next to
 * the f64 one, never instead of it. */
void leir__stream_accum_native(uint32_t s, uint8_t dt, leir__stream_accum *a);

/* Is the sum nest's accumulator (S at top-level nest t) f64 already? Then
 * acc=native would repeat the f64 candidate (stream.acc-f64). */
bool leir__stream_sum_is_f64(const leir__sctx *c, uint32_t t);

/* An access of accumulator a with like's subscript. */
leir_expr *leir__stream_acc(leir_program *out, const leir_expr *like, const leir__stream_accum *a);

/* The running (online) normalizer equations, into nest `body` from item
 * `at` on (4 items):
 *   F_s=max(M_s,X);
 *   W_s=if_then_else(F_s==-inf,0,exp(X-F_s));
 *   T_s=if_then_else(F_s==M_s,T_s+W_s,T_s*exp(M_s-F_s)+W_s);
 *   M_s=F_s;
 * mlhs is M's left-hand access (subscript s), x the X expression, f and w
 * the symbols of F and W (fresh, M's dtype: the term is computed as the
 * original computes it), t the sum's accumulator. The sum is rescaled
 * only when the maximum grows (F==M: T*exp(0) would be T), so an element
 * costs one exp, as in the original's sum. */
void leir__stream_running(leir_program *out, leir_nest *body, uint32_t at, const leir_expr *mlhs,
                          const leir_expr *x, uint32_t f, uint32_t w,
                          const leir__stream_accum *t);
/* The init equations M_s=-inf; T_s=0; into nest n at items at, at+1. */
void leir__stream_init(leir_program *out, leir_nest *n, uint32_t at, const leir_expr *mlhs,
                       const leir__stream_accum *t);
/* S_s=T_s into nest n at item at (when t is fresh). */
void leir__stream_copy_back(leir_program *out, leir_nest *n, uint32_t at, const leir_expr *mlhs,
                            uint32_t s, const leir__stream_accum *t);

/* ---- the prefix-array forms (the reference's, 7.14 / 7.18 / 7.19) ------- */

/* A prefix array over the reduction loop k: M's subscript s with k
 * inserted. It takes X's subscript when X is one tensor read with every
 * loop once (the reference's form: the prefix axis where X has k), else s
 * with k appended. from[j]: the entry of s at position j, or -1 for k. The
 * array costs rows x N elements (N = k's extent) where the running forms
 * keep one value per row. */
typedef struct leir__stream_prefix {
  uint32_t rank; /* s's entries + 1 */
  uint32_t kpos; /* where k goes */
  uint32_t ksym; /* k's symbol */
  int64_t last;  /* N-1 */
  int32_t from[LEIR__MAX_LOOPS + 1];
} leir__stream_prefix;

void leir__stream_prefix_layout(const leir__stream_max *mx, leir__stream_prefix *pl);

/* sym (dtype dt, scope sc) subscripted like a prefix array: the entries of
 * s taken from `row` (an access with s's layout: M's left side or a later
 * read of M), and `k` (consumed) at kpos. */
leir_expr *leir__stream_prefix_access(leir_program *out, const leir__stream_prefix *pl,
                                      uint32_t sym, uint8_t dt, uint8_t sc,
                                      const leir_expr *row, leir_expr *k);

/* Can the prefix form be applied to the site (M, and S when online: S
 * too disappears)? M (and S) must be no signature variable, written by no
 * other nest than its own and used by no nest before it: the step gives
 * M a new axis and rewrites its later reads. */
bool leir__stream_prefix_ok(const leir__sctx *c, const leir__stream_max *mx, uint32_t s,
                            bool online, char *why, size_t cap);

/* Can X be -inf (a masked element: an `inf` literal, a log, a division
 * not proven away from 0, reads of such values through every writer)?
 * Overflow of + - * is ignored, as for every reassociating rewrite; exp
 * counts as possibly +inf. false: no row can start with -inf, so the
 * prefix form needs no guard. */
bool leir__stream_may_be_neg_inf(const leir__sctx *c, const leir_expr *x);

/* The reference's one-pass scan (7.18) as nest t of `out` (over the max
 * nest's loops, two equations):
 *   M_{..k..}=max(if_then_else(k-1<0,-inf,M_{..k-1..}),X);
 *   T_{..k..}=if_then_else(k-1<0,1,T_{..k-1..})*exp(if_then_else(k-1<0,-inf,M_{..k-1..})-M_{..k..})
 *            +exp(X-M_{..k..});
 * and with `guard` the second right side under
 * if_then_else(M_{..k..}==-inf,0,...) (a masked prefix keeps T at 0
 * instead of exp(-inf - -inf) = NaN). M keeps its symbol and gains k; T
 * is tensor t_sym (dtype: S's when f64, else f64). meq is the max
 * equation in `out`; `into` has its loops and two items. */
void leir__stream_prefix_scan(leir_program *out, const leir_equation *meq,
                              const leir__stream_prefix *pl, uint32_t t_sym, uint8_t t_dtype,
                              uint8_t t_scope, bool guard, leir_nest *into);

/* Rewrites every read of `sym` (its old subscript, s's layout) in the
 * top-level nests from `from` on into new_sym_{..,N-1,..} (dtype dt, scope
 * sc). */
void leir__stream_prefix_reads(leir_program *out, uint32_t from, const leir__stream_prefix *pl,
                               uint32_t sym, uint32_t new_sym, uint8_t dt, uint8_t sc);

/* The facts of the chain of thought of a prefix step: the generic facts,
 * then what the prefix arrays of the scan at top-level nest `nest=N` cost
 * in memory. */
bool leir__stream_prefix_cot(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps);

/* The chain of thought of #40 and #41: the generic facts for the running
 * f64 form (false), the prefix facts with state=prefix, and with acc=native
 * (and lanes) what the accumulator's dtype costs. */
bool leir__stream_cot(leir__strbuf *b, const leir__diff *d, const leir__pstep *ps);

/* ---- the product with the softmax output: O_o=O_o+P_q*V_v ------------- */

typedef struct leir__stream_product {
  uint32_t t;                  /* the product nest (top level) */
  uint32_t pp, o;              /* P, O */
  uint32_t h;                  /* the output column loop (index in nest t) */
  uint32_t from[LEIR__MAX_LOOPS], to[LEIR__MAX_LOOPS]; /* its loops -> the softmax's */
  uint32_t nmap;
  bool p_first;                /* P*V (else V*P) */
} leir__stream_product;

/* Is top-level nest t one equation O_o=O_o+P_q*V_v (or V_v*P_q) from the
 * implicit 0, contracting P's axis k (symbol ksym)? plhs is P's left-hand
 * access, ploops (n) the loops around its definition; q one distinct loop
 * variable per entry (extents as in the definition), the nest's loops
 * those of q and one more (h); o one distinct loop variable for every loop
 * but the one q maps to k; V reads none of M, S, P, O; X does not read O. */
bool leir__stream_product_at(const leir__sctx *c, uint32_t t, const leir__loop *ploops,
                             uint32_t nploops, const leir_expr *plhs, uint32_t ksym, uint32_t msym,
                             uint32_t ssym, const leir_expr *x, leir__stream_product *pr,
                             char *why, size_t cap);

/* The flash-attention nest (flashattention_wo_tiling.c) in `out`: src's
 * loops without loop k outside, the running maximum, sum and output row
 * over k inside, the product's variables renamed to the softmax's (h
 * kept unless src has a loop of that name). ml is M's left-hand access, x
 * the X expression, s the sum's symbol (all in out). Fresh tensors from
 * c->next_tensor. */
leir_nest *leir__stream_flash_build(const leir__sctx *c, leir_program *out, const leir_nest *src,
                                   uint32_t k, const leir_expr *ml, const leir_expr *x,
                                   uint32_t s, const leir__stream_product *pr);

#endif
