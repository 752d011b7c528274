/*
 * Program analysis (spec/leir.md §3): loop-variable resolution, buffers and
 * their shapes (§3.5), implicit initialization (§3.4), and the static checks
 * of §3.6 (definedness, dtypes, provable bounds with guard narrowing,
 * output shapes, limits). Backends run only programs whose analysis has no
 * diagnostics, and use the tables below instead of re-deriving semantics.
 */
#ifndef LEIR_ANALYSIS_H
#define LEIR_ANALYSIS_H

#include "diag.h"
#include "ir.h"

typedef enum leir__init_kind {
  LEIR__INIT_NONE = 0,
  LEIR__INIT_ZERO,    /* X+..., X-... */
  LEIR__INIT_ONE,     /* X*..., .../X */
  LEIR__INIT_NEG_INF, /* max(X,...) */
  LEIR__INIT_POS_INF  /* min(X,...) */
} leir__init_kind;

typedef enum leir__buffer_role {
  LEIR__BUF_INPUT = 0,
  LEIR__BUF_OUTPUT,
  LEIR__BUF_TEMP /* intermediate */
} leir__buffer_role;

#define LEIR__NONE UINT32_MAX
/* Hard cap on loops enclosing one equation (check option max_loop_depth is
 * clamped to it); keeps per-equation scratch on the stack. */
#define LEIR__MAX_LOOPS 64

typedef struct leir__buffer {
  uint32_t sym;
  uint8_t dtype;
  uint8_t scope;
  uint8_t role;           /* leir__buffer_role */
  uint32_t rank;
  int64_t shape[LEIR_MAX_RANK];
  uint64_t elements;      /* product of shape (1 for scalars) */
  uint32_t decl;          /* signature index, LEIR__NONE for intermediates */
  uint32_t first_writer;  /* index into eqs, LEIR__NONE if never written */
  uint32_t last_writer;
} leir__buffer;

typedef struct leir__eqinfo {
  const leir_equation *eq;
  uint32_t top;                 /* index of the enclosing top-level nest */
  const leir_nest *nest;        /* innermost enclosing nest */
  uint32_t nloops;              /* loops enclosing the equation, all levels */
  const leir__loop *const *loops; /* outermost first */
  uint32_t lhs_buffer;
  uint8_t init;                 /* leir__init_kind */
  uint64_t evaluations;         /* product of enclosing extents (saturating) */
} leir__eqinfo;

typedef struct leir__analysis {
  const leir_program *p;
  leir__arena arena;
  uint32_t nbuffers;
  leir__buffer *buffers;   /* signature declarations first, in order */
  uint32_t neqs;
  leir__eqinfo *eqs;       /* program order: nests in text order, items in order */
  uint32_t nids;           /* size of the by-id tables (program->next_id) */
  uint32_t *expr_buffer;   /* by node id: buffer of a TENSOR node, else LEIR__NONE */
  uint32_t *expr_loop;     /* by node id: VAR -> position in its equation's loop list */
  uint32_t *eq_index;      /* by equation id: index into eqs, else LEIR__NONE */
  struct leir__range *values; /* by buffer: range of the values of integer
                               * intermediates (indirect indices), else unknown */
  uint32_t *value_def;     /* by buffer: the one equation defining an integer
                            * intermediate as a tensor-free expression of the
                            * loop variables of its subscript (so reads can be
                            * bounded by substitution), else LEIR__NONE */
  struct leir__affine *value_form; /* by buffer: the values of an index table (an
                             * integer intermediate defined once, over plain
                             * loop variables) as an affine form of the loop
                             * slots of that definition, tables it reads
                             * substituted (leir__affine_subst_of) ... */
  uint32_t *value_form_def; /* ... when this is that equation, else LEIR__NONE */
  uint64_t total_evaluations;
} leir__analysis;

/* Analyzes `p` against the declarations `sig` (n entries; usually the
 * program's own). Findings go to `diags` (may be NULL). Returns LEIR_OK when
 * there are none; LEIR_ERR_INVALID or LEIR_ERR_LIMIT otherwise, with the
 * first finding as the last error. On LEIR_OK *out is set (caller frees with
 * leir__analysis_free); on error *out is NULL unless `keep_on_error` is set
 * (the tables are then best-effort). */
leir_status leir__analyze(const leir_program *p, const leir__decl *sig, uint32_t nsig,
                          const leir_check_options *opts, leir_diagnostics *diags,
                          bool keep_on_error, leir__analysis **out);
void leir__analysis_free(leir__analysis *a);

/* Marks used[d] for the loop depth d of every loop variable in e (at any
 * level, inside indirect indices too); e is an expression of the analyzed
 * program whose variables resolved. */
void leir__used_depths(const leir__analysis *a, const leir_expr *e, bool *used);

/* Infers declarations (spec/leir.md §2) into `arena`. LEIR_ERR_SIGNATURE
 * with a reason when the program has no well-defined interface. */
leir_status leir__infer_decls(const leir_program *p, leir__arena *arena, leir__decl **out,
                              uint32_t *nout);

/* The same, checking with `opts` (may be NULL) while inferring, with every
 * finding in `diags` (may be NULL). A program that fails a check gives the
 * check's status (LEIR_ERR_INVALID, LEIR_ERR_LIMIT; the last error is the
 * first finding) where leir__infer_decls says LEIR_ERR_SIGNATURE; here
 * LEIR_ERR_SIGNATURE means only "no well-defined interface" (ambiguous
 * shapes, no outputs). *checked (may be NULL) is set when the inference
 * pass already made every check that analyzing with the inferred signature
 * would make, so that a checker can skip that second pass. */
leir_status leir__infer_decls_checked(const leir_program *p, const leir_check_options *opts,
                                      leir_diagnostics *diags, leir__arena *arena,
                                      leir__decl **out, uint32_t *nout, bool *checked);

/* The program's signature, or an inferred one (allocated in `arena`). */
leir_status leir__effective_signature(const leir_program *p, leir__arena *arena,
                                      const leir__decl **sig, uint32_t *nsig);

/* Convenience: effective signature + analysis with default options. */
leir_status leir__analyze_program(const leir_program *p, const leir_check_options *opts,
                                  leir__analysis **out);

/* ---- index ranges (lib/interval.c) ------------------------------------ */

typedef struct leir__range {
  int64_t lo, hi;
  bool known; /* false: unknown (indirect index, non-integer, overflow) */
} leir__range;

#define LEIR__AFFINE_TERMS 8
#define LEIR__MAX_FACTS 8

/* sum(coef[i] * loop[slot[i]]) + c, slots ascending, no zero coefficients. */
typedef struct leir__affine {
  uint32_t nterms;
  uint32_t slot[LEIR__AFFINE_TERMS];
  int64_t coef[LEIR__AFFINE_TERMS];
  int64_t c;
} leir__affine;

/* lo <= form <= hi (form.c is 0). */
typedef struct leir__fact {
  leir__affine form;
  int64_t lo, hi;
} leir__fact;

/* What is known at a point of an equation: loop ranges (by position in the
 * equation's loop list) and facts learnt from enclosing guards. */
/* lo <= x <= hi for a non-affine integer sub-expression x (tx//4 of a
 * guard tx//4-1<0), matched by structure where the same text is read. */
#define LEIR__MAX_ATOMS 8
typedef struct leir__atom {
  const leir_expr *x;
  int64_t lo, hi;
} leir__atom;

typedef struct leir__env {
  uint32_t nvars;
  uint32_t nfacts;
  uint32_t natoms;
  leir__range vars[LEIR__MAX_LOOPS];
  leir__fact facts[LEIR__MAX_FACTS];
  leir__atom atoms[LEIR__MAX_ATOMS];
} leir__env;

/* Full loop ranges of an equation, no facts. */
void leir__env_init(leir__env *env, const leir__eqinfo *info);

/* *dst = *src, copying only the entries in use (an env is a few KB, and
 * guards copy one per branch). */
static inline void leir__env_copy(leir__env *dst, const leir__env *src) {
  dst->nvars = src->nvars;
  dst->nfacts = src->nfacts;
  dst->natoms = src->natoms;
  for (uint32_t k = 0; k < src->nvars; k++) dst->vars[k] = src->vars[k];
  for (uint32_t k = 0; k < src->nfacts; k++) dst->facts[k] = src->facts[k];
  for (uint32_t k = 0; k < src->natoms; k++) dst->atoms[k] = src->atoms[k];
}

/* Range of an integer expression in env. Loop variables resolve through
 * a->expr_loop; tensors (indirect indices) by substituting their defining
 * expression (a->value_def) or through a->values when known. Backends check
 * indirect indices at run time regardless. */
leir__range leir__index_range(const leir__analysis *a, const leir_expr *e, const leir__env *env);

/* Narrows env by assuming `cond` is true (`truth`) or false. Returns false
 * when that is impossible (the guarded branch never runs). Conditions it
 * cannot use leave env unchanged. */
bool leir__narrow(const leir__analysis *a, const leir_expr *cond, bool truth, leir__env *env);

/* Affine form of an integer expression; false if it is not affine. */
bool leir__affine_of(const leir__analysis *a, const leir_expr *e, leir__affine *f);

/* The same, reading through index tables: a read D_{i..} of an integer
 * intermediate defined once as a tensor-free affine function of its
 * subscript's loops (a->value_def; what precompute_indices builds) is that
 * function of the read's indices. Two subscripts with equal forms here name
 * the same element at every iteration, however they are spelled. */
bool leir__affine_subst_of(const leir__analysis *a, const leir_expr *e, leir__affine *f);

leir__range leir__range_union(leir__range a, leir__range b);

/* Which variables of sum(coef[i] * v[i]), v[i] in [0, ext[i]-1], the value
 * of the sum determines (bit i): sorted by |coef|, a term is determined
 * when it and every larger term exceed the span of all smaller terms (the
 * mixed-radix argument; smaller terms need not be determined themselves).
 * Terms with extent 1 are always determined. n <= 64. */
uint64_t leir__affine_determined(const int64_t *coef, const int64_t *ext, uint32_t n);

/* ---- loop independence (lib/parallel.c) ------------------------------- */

/* True when the iterations of loop `loop` (index into nest->loops) of
 * `nest` (a nest of the analyzed program, at any level) are independent,
 * so a P/V/B annotation on it may run them concurrently (spec/leir.md
 * §3.2). Conservative: false also when independence cannot be proven; then
 * `why` (may be NULL) receives a one-line reason. */
bool leir__loop_independent(const leir__analysis *a, const leir_nest *nest, uint32_t loop,
                            char *why, size_t why_cap);

#endif
