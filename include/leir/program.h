/**
 * @file
 * libleir — programs: parse, print, clone, signatures, program files,
 * static checks, hashing and a read-only walk over the program tree.
 *
 * A leir_program owns all of its memory (one arena per program). Nothing
 * here prints or exits. See include/leir/common.h for the conventions.
 */
#ifndef LEIR_PROGRAM_H
#define LEIR_PROGRAM_H

#include "leir/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A parsed program: its nests, its signature and its name. Opaque; made by
 * leir_program_parse (or _parse_yaml, _load_file, _clone, a strategy's
 * apply) and released with leir_program_free. Owns all of its memory. */
typedef struct leir_program leir_program;

/* ======================================================================
 * Parsing
 * ====================================================================== */

/** Lenient mode accepts whitespace (spaces, tabs, CR, LF) between tokens. */
#define LEIR_PARSE_LENIENT 0x1u

/** Options of leir_program_parse and the program-file readers. Start from
 * LEIR_PARSE_OPTIONS_INIT or leir_parse_options_init(). */
typedef struct leir_parse_options {
  uint32_t size;            /**< sizeof(leir_parse_options); set by the _INIT macro */
  uint32_t flags;           /**< LEIR_PARSE_* */
  uint64_t max_input_bytes; /**< longer input: LEIR_ERR_LIMIT (default 256 MiB) */
  uint32_t max_depth;       /**< nesting of nests and height of every expression tree
                             * (a+b+c has height 3); default 200, 0 = default;
                             * values above 1000 are clamped to 1000. Every pass
                             * over a program within the default needs less than
                             * 256 KiB of stack (1 MiB at 1000) */
} leir_parse_options;

/** Defaults of leir_parse_options: strict mode, 256 MiB, depth 200. */
#define LEIR_PARSE_OPTIONS_INIT \
  { (uint32_t)sizeof(leir_parse_options), 0u, (uint64_t)256 << 20, 200u }

/** Fills the first `size` bytes of `*opts` with the defaults of LEIR_PARSE_OPTIONS_INIT
 * and sets `opts->size` to `size`; pass `sizeof *opts` (bindings, which
 * cannot expand the macro, pass the size of the struct they declare).
 * Errors: LEIR_ERR_ARGUMENT (`opts` NULL, or `size` smaller than the size
 * field or larger than this library's struct). */
LEIR_API leir_status leir_parse_options_init(leir_parse_options *opts, size_t size);

/** Parses LEIR text (`len` bytes; need not be NUL-terminated; NUL bytes are
 * errors). `opts` may be NULL for strict defaults. On success *out is a new
 * program (caller frees with leir_program_free). On failure *out is NULL and
 * the last error carries rule, line and column.
 * Errors: LEIR_ERR_PARSE, LEIR_ERR_LIMIT, LEIR_ERR_NOMEM, LEIR_ERR_ARGUMENT. */
LEIR_API leir_status leir_program_parse(leir_program **out, const char *text, size_t len,
                                        const leir_parse_options *opts);

/** Releases a program and everything borrowed from it (nodes, names,
 * signature strings). NULL is a no-op. */
LEIR_API void leir_program_free(leir_program *program);

/** Deep copy, including signature and name. Caller frees *out with
 * leir_program_free. Errors: LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_program_clone(leir_program **out, const leir_program *program);

/* ======================================================================
 * Printing
 * ====================================================================== */

/** Pretty: one top-level nest per line, nested nests on their own indented
 * lines. Parses back (lenient mode) to the same program. */
#define LEIR_PRINT_PRETTY 0x1u

/** Prints the program; canonical text is byte-identical to strict-mode input.
 * *out is NUL-terminated (caller frees with leir_free); *out_len (may be NULL)
 * receives its length. Errors: LEIR_ERR_NOMEM, LEIR_ERR_ARGUMENT. */
LEIR_API leir_status leir_program_print(const leir_program *program, uint32_t flags, char **out,
                                        size_t *out_len);

/* ======================================================================
 * Signature (program interface)
 * ====================================================================== */

/** Role of a known variable in the signature. */
typedef enum leir_role {
  LEIR_ROLE_INPUT = 0, /**< read by the program, never written */
  LEIR_ROLE_OUTPUT = 1 /**< written by the program (may also be read) */
} leir_role;

/** A known variable. `shape` has `rank` entries (rank 0 = scalar). */
typedef struct leir_tensor_decl {
  const char *name;     /**< tensor name as written in the text ("A") */
  leir_dtype dtype;     /**< element type */
  leir_role role;       /**< input or output */
  uint32_t rank;        /**< number of dimensions, at most LEIR_MAX_RANK */
  const int64_t *shape; /**< `rank` extents (NULL allowed when rank is 0) */
} leir_tensor_decl;

/** Maximum rank of any tensor. */
#define LEIR_MAX_RANK 16

/** Replaces the signature with `n` declarations (copied). Inputs must come
 * before outputs; names must be valid tensor names and distinct; at least one
 * output. Errors: LEIR_ERR_SIGNATURE, LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_program_set_signature(leir_program *program, const leir_tensor_decl *decls,
                                                size_t n);

/** Number of declarations (0 when the program has no signature). */
LEIR_API size_t leir_program_signature_count(const leir_program *program);

/** Fills *out with declaration i (name and shape borrowed from the program,
 * valid until the signature changes or the program is freed).
 * Errors: LEIR_ERR_ARGUMENT for i out of range. */
LEIR_API leir_status leir_program_signature_get(const leir_program *program, size_t i,
                                                leir_tensor_decl *out);

/** Input domains (verification.md §1): how seeded inputs of one input are
 * drawn. A program file declares them per input with `domain:`; without
 * one (LEIR_DOMAIN_DEFAULT) the input follows the input set's distribution
 * (standard normal, normal x 10, uniform [-1, 1]), except that the library
 * draws an input positive when every use reaches only log, sqrt or a
 * fractional power (docs/verification.md, "Input domains"). */
typedef enum leir_domain_kind {
  LEIR_DOMAIN_DEFAULT = 0, /**< the input set's distribution */
  LEIR_DOMAIN_POSITIVE,    /**< |x| of the set's distribution, never 0 */
  LEIR_DOMAIN_VALUE,       /**< every element is `value`, on every input set */
  LEIR_DOMAIN_RANGE,       /**< floats uniform in [low, high]; integers low..high-1 */
  LEIR_DOMAIN_NORMAL,      /**< normal(mean, std) on every input set */
  LEIR_DOMAIN_UNIFORM      /**< uniform in [low, high] on every input set */
} leir_domain_kind;

/** The domain of one input (leir_program_domain_get, leir_program_domain_set).
 * Only the fields of its kind are used. Start from LEIR_DOMAIN_INIT or
 * leir_domain_init(); older, smaller structs are read and written as far as
 * their `size` goes. */
typedef struct leir_domain {
  uint32_t size; /**< sizeof(leir_domain); set by the _INIT macro */
  leir_domain_kind kind; /**< how the input is drawn (default LEIR_DOMAIN_DEFAULT) */
  double value;     /**< VALUE: the value of every element (an integer in the
                     * dtype's range for an integer input) */
  double low;       /**< RANGE, UNIFORM: lower bound (low < high; RANGE of an integer
                     * input: integers, at least one value) */
  double high;      /**< RANGE, UNIFORM: upper bound (RANGE of an integer input:
                     * exclusive) */
  double mean;      /**< NORMAL: the mean (default 0) */
  double std;       /**< NORMAL: the standard deviation (std > 0; default 1) */
} leir_domain;

/** Defaults of leir_domain: kind LEIR_DOMAIN_DEFAULT, mean 0, std 1, the other
 * fields 0. */
#define LEIR_DOMAIN_INIT \
  { (uint32_t)sizeof(leir_domain), LEIR_DOMAIN_DEFAULT, 0.0, 0.0, 0.0, 0.0, 1.0 }

/** Fills the first `size` bytes of `*domain` with LEIR_DOMAIN_INIT and sets
 * `domain->size` to `size` (bindings pass the size of the struct they
 * declare). Errors: LEIR_ERR_ARGUMENT (NULL, or `size` smaller than the
 * size field or larger than this library's struct). */
LEIR_API leir_status leir_domain_init(leir_domain *domain, size_t size);

/** Fills *out with the declared domain of signature entry i (kind
 * LEIR_DOMAIN_DEFAULT when none was declared). `out->size` must be set;
 * only its first `out->size` bytes are written.
 * Errors: LEIR_ERR_ARGUMENT (i out of range, NULL, a size below the size
 * field or above this library's struct). */
LEIR_API leir_status leir_program_domain_get(const leir_program *program, size_t i,
                                             leir_domain *out);

/** Declares the domain of input i (copied; NULL or kind DEFAULT clears it).
 * leir_program_set_signature clears every domain.
 * Errors: LEIR_ERR_ARGUMENT (i out of range or an output, a parameter out
 * of range for the kind: non-finite numbers, low >= high, std <= 0, a
 * non-integer value or range for an integer input, a value outside the
 * dtype). */
LEIR_API leir_status leir_program_domain_set(leir_program *program, size_t i,
                                             const leir_domain *domain);

/** Spelling of a domain kind as in program files ("default", "positive",
 * "value", "range", "normal", "uniform"); static. */
LEIR_API const char *leir_domain_kind_name(leir_domain_kind kind);

/** Infers the signature from the text (spec/leir.md §2): inputs = tensors read
 * and never written (ordered by name index: A, C, D, ..., Z, Aa, Ac, ...);
 * outputs = tensors written and not read by a later nest; shapes from index
 * ranges. Replaces any existing signature.
 * Errors: LEIR_ERR_SIGNATURE when ambiguous (message says why). */
LEIR_API leir_status leir_program_infer_signature(leir_program *program);

/** Optional program name (from a program file); borrowed, "" when unset. */
LEIR_API const char *leir_program_name(const leir_program *program);
/** Copies `name` (NULL clears it). Errors: LEIR_ERR_ARGUMENT when `name` is
 * not valid UTF-8. */
LEIR_API leir_status leir_program_set_name(leir_program *program, const char *name);

/* ======================================================================
 * Program files (*.leir.yaml) and loading
 * ====================================================================== */

/** Parses a YAML program file:
 *   name: softmax                       # optional
 *   inputs:  {A: {dtype: f64, shape: [2, 8]}}
 *   outputs: {C: {dtype: f64, shape: [2, 8]}}
 *   leir: B^{2}_{tx=0}...               # LEIR text, parsed in lenient mode
 * Caller frees *out. Errors: LEIR_ERR_PARSE (YAML or LEIR; line/column are
 * those of the YAML document), LEIR_ERR_SIGNATURE, LEIR_ERR_LIMIT. */
LEIR_API leir_status leir_program_parse_yaml(leir_program **out, const char *text, size_t len,
                                             const leir_parse_options *opts);

/** Writes a YAML program file (signature required). Caller frees *out with
 * leir_free; *out_len (may be NULL) receives its length.
 * Errors: LEIR_ERR_SIGNATURE (no signature), LEIR_ERR_ARGUMENT, LEIR_ERR_NOMEM. */
LEIR_API leir_status leir_program_to_yaml(const leir_program *program, char **out, size_t *out_len);

/** Reads a file: "*.yaml"/"*.yml" as a program file, anything else as LEIR
 * text (with `opts`). Errors as above plus LEIR_ERR_IO. */
LEIR_API leir_status leir_program_load_file(leir_program **out, const char *path,
                                            const leir_parse_options *opts);

/* ======================================================================
 * Static checks (spec/leir.md §3.6)
 * ====================================================================== */

/** Limits of leir_program_check (and of the backends' checks). Start from
 * LEIR_CHECK_OPTIONS_INIT or leir_check_options_init(). */
typedef struct leir_check_options {
  uint32_t size;                 /**< sizeof(leir_check_options) */
  uint32_t max_loop_depth;       /**< loops enclosing an equation (default 32) */
  int64_t max_extent;            /**< largest loop extent (default 2^31-1) */
  uint64_t max_nest_iterations;  /**< iterations of one top-level nest (default 2^44) */
  uint64_t max_total_iterations; /**< iterations of the whole program (default 2^46) */
  uint64_t max_buffer_elements;  /**< elements of one tensor (default 2^36) */
} leir_check_options;

/** Defaults of leir_check_options. */
#define LEIR_CHECK_OPTIONS_INIT                                                              \
  { (uint32_t)sizeof(leir_check_options), 32u, (int64_t)2147483647, (uint64_t)1 << 44,     \
    (uint64_t)1 << 46, (uint64_t)1 << 36 }

/** Fills the first `size` bytes of `*opts` with the defaults of LEIR_CHECK_OPTIONS_INIT
 * and sets `opts->size` to `size`; pass `sizeof *opts` (bindings, which
 * cannot expand the macro, pass the size of the struct they declare).
 * Errors: LEIR_ERR_ARGUMENT (`opts` NULL, or `size` smaller than the size
 * field or larger than this library's struct). */
LEIR_API leir_status leir_check_options_init(leir_check_options *opts, size_t size);

/** One finding of the checker. Strings are borrowed from the list. */
typedef struct leir_diagnostic {
  const char *rule;    /**< "check.bounds", "check.undefined", ... */
  const char *message; /**< full sentence, no position prefix */
  const char *subject; /**< tensor or loop name, "" if none */
  uint32_t line;       /**< 1-based; 0 if unknown */
  uint32_t column;     /**< 1-based; 0 if unknown */
} leir_diagnostic;

/** The findings of one leir_program_check. Opaque; caller frees with
 * leir_diagnostics_free. */
typedef struct leir_diagnostics leir_diagnostics;

/** Checks the program. Without a signature, one is inferred for the check
 * (the program is not modified). Returns LEIR_OK when valid,
 * LEIR_ERR_INVALID (or LEIR_ERR_LIMIT / LEIR_ERR_SIGNATURE) otherwise; the
 * last error describes the first finding. When `diags` is not NULL it
 * receives every finding in program order (caller frees with
 * leir_diagnostics_free; an empty list on success). `opts` may be NULL. */
LEIR_API leir_status leir_program_check(const leir_program *program, const leir_check_options *opts,
                                        leir_diagnostics **diags);

/** Number of findings (0 for NULL). */
LEIR_API size_t leir_diagnostics_count(const leir_diagnostics *diags);
/** Finding i, borrowed from the list (valid until it is freed); NULL if i is
 * out of range. */
LEIR_API const leir_diagnostic *leir_diagnostics_get(const leir_diagnostics *diags, size_t i);
/** Releases the list and every string borrowed from it. NULL is a no-op. */
LEIR_API void leir_diagnostics_free(leir_diagnostics *diags);

/* ======================================================================
 * Identity
 * ====================================================================== */

/** XXH3-64 of the canonical text; 0 for NULL (or when memory runs out). */
LEIR_API uint64_t leir_program_hash(const leir_program *program);

/** XXH3-64 of the canonical text after renaming loop variables by first
 * appearance in each top-level nest and intermediates by first appearance in
 * the program (known variables keep their names). Without a signature the
 * known variables are inferred; if inference fails every tensor is treated
 * as known. */
LEIR_API uint64_t leir_program_hash_alpha(const leir_program *program);

/* ======================================================================
 * Read-only walk (for embedders)
 *
 * Every pointer returned here is borrowed from the program and stays valid
 * until the program is freed. Nodes do not know their program: accessors
 * that return names or positions take it as their first argument.
 * ====================================================================== */

/** A loop nest: its loops, then its items (equations and nested nests).
 * Borrowed from the program. */
typedef struct leir_nest leir_nest;
/** An equation `lhs = rhs;`. Borrowed from the program. */
typedef struct leir_equation leir_equation;
/** An expression node. Borrowed from the program. */
typedef struct leir_expr leir_expr;

/** Kind of a loop: the letter before its extent. */
typedef enum leir_loop_kind {
  LEIR_LOOP_SERIAL = 0,  /**< L */
  LEIR_LOOP_PARALLEL,    /**< P */
  LEIR_LOOP_VECTORIZED,  /**< V */
  LEIR_LOOP_UNROLLED,    /**< U */
  LEIR_LOOP_BOUND        /**< B */
} leir_loop_kind;

/** One loop of a nest (returned by value). */
typedef struct leir_loop {
  leir_loop_kind kind; /**< L, P, V, U or B */
  int64_t extent;      /**< number of iterations */
  const char *var;     /**< loop variable; borrowed */
} leir_loop;

/** Position of a node in the parsed text (returned by value). */
typedef struct leir_position {
  uint32_t line;   /**< 1-based; 0 for nodes built by transformations */
  uint32_t column; /**< 1-based; 0 for nodes built by transformations */
} leir_position;

/** Number of top-level nests (0 for NULL). */
LEIR_API size_t leir_program_nest_count(const leir_program *program);
/** Top-level nest i; NULL when out of range. */
LEIR_API const leir_nest *leir_program_nest(const leir_program *program, size_t i);

/** Number of loops of the nest (0 for NULL). */
LEIR_API size_t leir_nest_loop_count(const leir_nest *nest);
/** Loop i, outermost first (extent 0 and var "" when i is out of range). */
LEIR_API leir_loop leir_nest_loop(const leir_program *program, const leir_nest *nest, size_t i);
/** Number of items (equations and nested nests) of the nest (0 for NULL). */
LEIR_API size_t leir_nest_item_count(const leir_nest *nest);
/** Item i when it is an equation (borrowed), else NULL. Item i is either an
 * equation or a nested nest: exactly one of this and leir_nest_item_nest is
 * non-NULL. */
LEIR_API const leir_equation *leir_nest_item_equation(const leir_nest *nest, size_t i);
/** Item i when it is a nested nest (borrowed), else NULL. */
LEIR_API const leir_nest *leir_nest_item_nest(const leir_nest *nest, size_t i);
/** Position of the nest in the text ({0, 0} if unknown or for NULL). */
LEIR_API leir_position leir_nest_position(const leir_program *program, const leir_nest *nest);

/** Left side of the equation: a TENSOR node (borrowed; NULL for NULL). */
LEIR_API const leir_expr *leir_equation_lhs(const leir_equation *eq);
/** Right side of the equation (borrowed; NULL for NULL). */
LEIR_API const leir_expr *leir_equation_rhs(const leir_equation *eq);

/** Kind of an expression node. */
typedef enum leir_expr_kind {
  LEIR_EXPR_NUMBER = 0, /**< literal; leir_expr_number / leir_expr_lexeme */
  LEIR_EXPR_INF,        /**< inf */
  LEIR_EXPR_VAR,        /**< loop variable; leir_expr_name */
  LEIR_EXPR_TENSOR,     /**< tensor element; children = subscript entries */
  LEIR_EXPR_PAREN,      /**< explicit parentheses; one child */
  LEIR_EXPR_NEG,        /**< unary minus; one child */
  LEIR_EXPR_BINARY,     /**< leir_expr_op; two children */
  LEIR_EXPR_CALL,       /**< leir_expr_op is the function; children = args */
  LEIR_EXPR_COMPARE,    /**< chain a op1 b op2 c ...; leir_expr_compare_op(i) */
  LEIR_EXPR_AND,        /**< two children */
  LEIR_EXPR_OR          /**< two children */
} leir_expr_kind;

/** Operator of a BINARY node, function of a CALL node, or comparison of a
 * COMPARE chain; leir_op_name() spells each one. */
typedef enum leir_op {
  LEIR_OP_NONE = 0, /**< not an operator node */
  /* BINARY */
  LEIR_OP_ADD, LEIR_OP_SUB, LEIR_OP_MUL, LEIR_OP_DIV, LEIR_OP_FLOORDIV, LEIR_OP_MOD, LEIR_OP_POW,
  /* CALL */
  LEIR_OP_EXP, LEIR_OP_LOG, LEIR_OP_SQRT, LEIR_OP_ABS, LEIR_OP_ERF, LEIR_OP_MAX, LEIR_OP_MIN,
  LEIR_OP_IF_THEN_ELSE,
  /* COMPARE */
  LEIR_OP_LT, LEIR_OP_LE, LEIR_OP_GT, LEIR_OP_GE, LEIR_OP_EQ, LEIR_OP_NE
} leir_op;

/** Spelling of an operator or function ("+", "//", "exp", "<=", ...); static. */
LEIR_API const char *leir_op_name(leir_op op);

/** Kind of the node (LEIR_EXPR_NUMBER for NULL). */
LEIR_API leir_expr_kind leir_expr_get_kind(const leir_expr *e);
/** BINARY and CALL: the operator or function; LEIR_OP_NONE otherwise. */
LEIR_API leir_op leir_expr_op(const leir_expr *e);
/** Number of children (0 for NULL and leaves). */
LEIR_API size_t leir_expr_child_count(const leir_expr *e);
/** Child i (borrowed); NULL when i is out of range. */
LEIR_API const leir_expr *leir_expr_child(const leir_expr *e, size_t i);
/** COMPARE: operator between child i and child i+1 (LEIR_OP_NONE otherwise). */
LEIR_API leir_op leir_expr_compare_op(const leir_expr *e, size_t i);
/** TENSOR and VAR: the name (borrowed); "" otherwise. */
LEIR_API const char *leir_expr_name(const leir_program *program, const leir_expr *e);
/** TENSOR: the superscript dtype. */
LEIR_API leir_dtype leir_expr_dtype(const leir_expr *e);
/** TENSOR: the superscript scope. */
LEIR_API leir_scope leir_expr_scope(const leir_expr *e);
/** NUMBER: value as double (0 for other kinds). */
LEIR_API double leir_expr_number(const leir_expr *e);
/** NUMBER: the lexeme as written (borrowed, not NUL-terminated; *len receives
 * its length); NULL for other kinds. */
LEIR_API const char *leir_expr_lexeme(const leir_expr *e, size_t *len);
/** Position of the node in the text ({0, 0} for nodes built by
 * transformations). */
LEIR_API leir_position leir_expr_position(const leir_program *program, const leir_expr *e);

/** Visitor over every nest (enter/leave), equation and expression node
 * (pre-order, children left to right) in program order. A callback
 * returning non-zero stops the walk, and leir_program_walk returns that
 * value (0 after a complete walk). Unset (NULL) callbacks are skipped. */
typedef struct leir_walk_callbacks {
  uint32_t size; /**< sizeof(leir_walk_callbacks) */
  /** Before the items of a nest; `depth` 0 for top-level nests. */
  int (*enter_nest)(const leir_nest *nest, uint32_t depth, void *payload);
  /** After the items of a nest. */
  int (*leave_nest)(const leir_nest *nest, uint32_t depth, void *payload);
  /** For each equation, before its expressions. */
  int (*equation)(const leir_equation *eq, void *payload);
  /** For each expression node; `parent` is NULL for the two sides of an equation. */
  int (*expr)(const leir_expr *e, const leir_expr *parent, void *payload);
} leir_walk_callbacks;

/** No callbacks set. */
#define LEIR_WALK_CALLBACKS_INIT { (uint32_t)sizeof(leir_walk_callbacks), 0, 0, 0, 0 }

/** Fills the first `size` bytes of `*callbacks` with the defaults of LEIR_WALK_CALLBACKS_INIT
 * and sets `callbacks->size` to `size`; pass `sizeof *callbacks` (bindings, which
 * cannot expand the macro, pass the size of the struct they declare).
 * Errors: LEIR_ERR_ARGUMENT (`callbacks` NULL, or `size` smaller than the size
 * field or larger than this library's struct). */
LEIR_API leir_status leir_walk_callbacks_init(leir_walk_callbacks *callbacks, size_t size);

/** Walks the program with `callbacks` (read as leir_walk_callbacks describes;
 * an older, smaller struct is fine). Returns 0 after a complete walk, the
 * first non-zero callback result, 0 when `program` or `callbacks` is NULL, or
 * LEIR_ERR_ARGUMENT when callbacks->size is 0 or larger than this library's
 * struct (the last error says which). */
LEIR_API int leir_program_walk(const leir_program *program, const leir_walk_callbacks *callbacks,
                               void *payload);

#ifdef __cplusplus
}
#endif
#endif /* LEIR_PROGRAM_H */
