/*
 * LEIR -> TVM TIR as TVMScript text (include/leir/tir.h, docs/tir.md).
 *
 * The text follows backends/semantics.h so that TVM computes what the
 * interpreter computes:
 *  - one @T.prim_func; parameters = signature, intermediates = T.alloc_buffer
 *    (one per analysis buffer; a re-allocated name gets a _N suffix);
 *  - top-level nests in order; before each, explicit loops set the identity
 *    of every element an implicit-init equation writes (spec §3.4; the same
 *    as TVM's T.init where T.init applies, and right where it would not,
 *    e.g. a left-hand subscript a//2);
 *  - a nest's items in text order inside its innermost loop (per-iteration
 *    interleaving), nested nests as deeper loops;
 *  - each equation computes in its left-hand computation type (float32,
 *    float64 or int64): reads, loop variables and literals are converted to
 *    it, and the store converts to the buffer dtype (bool: != 0);
 *  - P/V/B annotations only where the loop's iterations are independent
 *    (leir__loop_independent) and TVM accepts them (no parallel inside
 *    parallel; a thread axis bound once per nest, in its header); otherwise
 *    the loop is T.serial.
 * Index expressions keep TVM's int32 loop variables: `//` and `%` on them
 * are TVM's floordiv/floormod, LEIR's semantics.
 *
 * This file: statements, loops and the function; the expressions are
 * printed by tir_expr.c (tir_internal.h).
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "error.h"
#include "leir/tir.h"
#include "prelude.h"
#include "semantics.h"
#include "strbuf.h"
#include "tir_internal.h"

/* ---- statements ----------------------------------------------------------- */

/* X[...] = value converted to X's dtype. */
static void emit_store_begin(tir *T, const leir_expr *lhs, leir__ctype ct, bool *close) {
  uint32_t b = T->a->expr_buffer[lhs->id];
  if (b == LEIR__NONE) {
    T->failed = true;
    *close = false;
    return;
  }
  leir_dtype dt = (leir_dtype)T->a->buffers[b].dtype;
  leir__tir_emit_tensor(T, lhs);
  put(T, " = ");
  *close = false;
  if (dt != LEIR_BOOL && strcmp(tvm_dtype(dt), ct_dtype(ct)) != 0) {
    putf(T, "T.Cast(\"%s\", ", tvm_dtype(dt));
    *close = true;
  }
}

static void emit_store_end(tir *T, const leir_expr *lhs, leir__ctype ct, bool close) {
  uint32_t b = T->a->expr_buffer[lhs->id];
  if (b != LEIR__NONE && T->a->buffers[b].dtype == LEIR_BOOL) {
    put(T, " != ");
    if (ct == LEIR__CT_I64)
      leir__tir_put_int64(T, 0);
    else
      leir__tir_put_float(T, 0.0, ct);
  }
  if (close) put(T, ")");
  put(T, "\n");
}

static void used_vars(const leir__analysis *a, const leir_expr *e, bool *used);

/* LEIR_TIR_BLOCKS: `with T.block("X"):` and the block variables of the
 * loops the equation uses (S: in the left-hand subscript, R: the others),
 * outermost first. Returns the depth of the block's body. */
static uint32_t open_block(tir *T, const leir__eqinfo *info, uint32_t depth, bool all_spatial) {
  if (!(T->flags & LEIR_TIR_BLOCKS)) return depth;
  const leir_expr *lhs = info->eq->lhs;
  uint32_t b = T->a->expr_buffer[lhs->id];
  bool in_lhs[LEIR__MAX_LOOPS] = {false}, used[LEIR__MAX_LOOPS] = {false};
  for (uint32_t k = 0; k < lhs->n; k++) used_vars(T->a, lhs->kids[k], in_lhs);
  used_vars(T->a, lhs, used);
  if (!all_spatial) used_vars(T->a, info->eq->rhs, used);
  indent(T, depth);
  put(T, "with T.sblock(\"");
  if (b != LEIR__NONE) {
    put(T, T->bufnames[b]);
    if (T->nblocks[b]) putf(T, "_%u", T->nblocks[b]);
    T->nblocks[b]++;
  }
  put(T, "\"):\n");
  uint32_t nused = 0;
  for (uint32_t d = 0; d < info->nloops && d < LEIR__MAX_LOOPS; d++) nused += used[d];
  if (nused) {
    indent(T, depth + 1);
    T->in_block = true;
    bool first = true;
    for (uint32_t d = 0; d < info->nloops && d < LEIR__MAX_LOOPS; d++) {
      if (!used[d]) continue;
      if (!first) put(T, ", ");
      leir__tir_put_loopvar(T, info->loops[d]->sym);
      first = false;
    }
    put(T, " = T.axis.remap(\"");
    for (uint32_t d = 0; d < info->nloops && d < LEIR__MAX_LOOPS; d++)
      if (used[d]) put(T, in_lhs[d] || all_spatial ? "S" : "R");
    put(T, "\", [");
    first = true;
    for (uint32_t d = 0; d < info->nloops && d < LEIR__MAX_LOOPS; d++) {
      if (!used[d]) continue;
      if (!first) put(T, ", ");
      leir__tir_put_loopvar_outside(T, info->loops[d]->sym);
      first = false;
    }
    put(T, "])\n");
  }
  T->in_block = true;
  return depth + 1;
}

static void emit_equation(tir *T, const leir__eqinfo *info, uint32_t depth) {
  depth = open_block(T, info, depth, false);
  const leir_expr *lhs = info->eq->lhs;
  leir__ctype ct = leir__ctype_of((leir_dtype)lhs->dtype);
  uint32_t b = T->a->expr_buffer[lhs->id];
  bool is_bool = b != LEIR__NONE && T->a->buffers[b].dtype == LEIR_BOOL;
  bool close;
  indent(T, depth);
  emit_store_begin(T, lhs, ct, &close);
  /* a bool store compares the whole value: bind looser than `!=` */
  leir__tir_emit_value(T, info->eq->rhs, ct, is_bool ? PREC_ADD : 0);
  emit_store_end(T, lhs, ct, close);
  T->in_block = false;
}

static void used_vars(const leir__analysis *a, const leir_expr *e, bool *used) {
  if (e->kind == LEIR_EXPR_VAR && a->expr_loop[e->id] < LEIR__MAX_LOOPS)
    used[a->expr_loop[e->id]] = true;
  for (uint32_t k = 0; k < e->n; k++) used_vars(a, e->kids[k], used);
}

/* The implicit initialization of one equation: the identity stored in
 * every element its left-hand subscript reaches (the loops it uses). */
static void emit_init(tir *T, const leir__eqinfo *info) {
  const leir_expr *lhs = info->eq->lhs;
  bool used[LEIR__MAX_LOOPS] = {false};
  for (uint32_t k = 0; k < lhs->n; k++) used_vars(T->a, lhs->kids[k], used);
  leir_dtype dt = (leir_dtype)lhs->dtype;
  leir__ctype ct = leir__ctype_of(dt);
  leir__init_kind kind = (leir__init_kind)info->init;
  uint32_t depth = 1;
  for (uint32_t d = 0; d < info->nloops && d < LEIR__MAX_LOOPS; d++) {
    if (!used[d]) continue;
    indent(T, depth++);
    put(T, "for ");
    leir__tir_put_loopvar(T, info->loops[d]->sym);
    putf(T, " in T.serial(%" PRId64 "):\n", info->loops[d]->extent);
  }
  bool close;
  depth = open_block(T, info, depth, true);
  indent(T, depth);
  emit_store_begin(T, lhs, ct, &close);
  if (ct == LEIR__CT_I64)
    leir__tir_put_int64(T, leir__init_value_i64(kind, dt));
  else
    leir__tir_put_float(T, leir__init_value_f64(kind), ct);
  emit_store_end(T, lhs, ct, close);
  T->in_block = false;
}

static int axis_of(const leir_program *p, uint32_t sym) {
  const char *v = leir__sym_name(p, sym);
  if ((v[0] != 't' && v[0] != 'b') || v[1] < 'x' || v[1] > 'z') return -1;
  return (v[0] == 'b' ? 3 : 0) + (v[1] - 'x');
}

static void emit_nest(tir *T, const leir_nest *n, uint32_t depth, bool top);

static void emit_body(tir *T, const leir_nest *n, uint32_t depth) {
  for (uint32_t i = 0; i < n->nitems; i++) {
    if (n->items[i].eq) {
      uint32_t ei = T->a->eq_index[n->items[i].eq->id];
      if (ei == LEIR__NONE) {
        T->failed = true;
        return;
      }
      emit_equation(T, &T->a->eqs[ei], depth);
    } else {
      emit_nest(T, n->items[i].nest, depth, false);
    }
  }
}

static void emit_nest(tir *T, const leir_nest *n, uint32_t depth, bool top) {
  static const char *const thread_tags[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z",
                                            "blockIdx.x",  "blockIdx.y",  "blockIdx.z"};
  uint32_t entered_parallel = 0;
  uint32_t k = 0;
  while (k < n->nloops) {
    const leir__loop *l = &n->loops[k];
    indent(T, depth++);
    /* a run of serial loops is one T.grid */
    uint32_t run = 0;
    while (k + run < n->nloops && n->loops[k + run].kind == LEIR_LOOP_SERIAL) run++;
    if (run >= 2) {
      put(T, "for ");
      for (uint32_t j = 0; j < run; j++) {
        if (j) put(T, ", ");
        leir__tir_put_loopvar(T, n->loops[k + j].sym);
      }
      put(T, " in T.grid(");
      for (uint32_t j = 0; j < run; j++)
        putf(T, "%s%" PRId64, j ? ", " : "", n->loops[k + j].extent);
      put(T, "):\n");
      k += run;
      continue;
    }
    bool indep = l->kind != LEIR_LOOP_SERIAL && l->kind != LEIR_LOOP_UNROLLED &&
                 leir__loop_independent(T->a, n, k, NULL, 0);
    put(T, "for ");
    leir__tir_put_loopvar(T, l->sym);
    put(T, " in ");
    switch ((leir_loop_kind)l->kind) {
      case LEIR_LOOP_PARALLEL:
        if (indep && T->parallel_depth == 0) {
          putf(T, "T.parallel(%" PRId64 "):\n", l->extent);
          T->parallel_depth++;
          entered_parallel++;
        } else {
          putf(T, "T.serial(%" PRId64 "):\n", l->extent);
        }
        break;
      case LEIR_LOOP_VECTORIZED:
        putf(T, "%s(%" PRId64 "):\n", indep ? "T.vectorized" : "T.serial", l->extent);
        break;
      case LEIR_LOOP_UNROLLED: putf(T, "T.unroll(%" PRId64 "):\n", l->extent); break;
      case LEIR_LOOP_BOUND: {
        int ax = axis_of(T->p, l->sym);
        if (!(T->flags & LEIR_TIR_BIND_SERIAL) && indep && top && ax >= 0 && !T->axis_used[ax]) {
          T->axis_used[ax] = true;
          putf(T, "T.thread_binding(%" PRId64 ", thread=\"%s\"):\n", l->extent, thread_tags[ax]);
        } else {
          putf(T, "T.serial(%" PRId64 "):\n", l->extent);
        }
        break;
      }
      default: putf(T, "T.serial(%" PRId64 "):\n", l->extent); break;
    }
    k++;
  }
  emit_body(T, n, depth);
  T->parallel_depth -= entered_parallel;
}

/* ---- the function --------------------------------------------------------- */

static void put_shape(tir *T, const leir__buffer *b) {
  put(T, "(");
  for (uint32_t k = 0; k < b->rank; k++) putf(T, "%s%" PRId64, k ? ", " : "", b->shape[k]);
  if (b->rank == 1) put(T, ",");
  put(T, ")");
}

static leir_status name_buffers(tir *T) {
  const leir__analysis *a = T->a;
  T->bufnames = calloc(a->nbuffers ? a->nbuffers : 1, sizeof *T->bufnames);
  T->nblocks = calloc(a->nbuffers ? a->nbuffers : 1, sizeof *T->nblocks);
  if (!T->bufnames || !T->nblocks) return leir__error_nomem();
  for (uint32_t b = 0; b < a->nbuffers; b++) {
    const char *base = leir__sym_name(T->p, a->buffers[b].sym);
    uint32_t seen = 0;
    for (uint32_t k = 0; k < b; k++)
      if (a->buffers[k].sym == a->buffers[b].sym) seen++;
    size_t n = strlen(base) + 16;
    T->bufnames[b] = malloc(n);
    if (!T->bufnames[b]) return leir__error_nomem();
    if (seen)
      snprintf(T->bufnames[b], n, "%s_%u", base, seen);
    else
      snprintf(T->bufnames[b], n, "%s", base);
  }
  return LEIR_OK;
}

static bool valid_func_name(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 64 || leir__tir_is_keyword(s) || strcmp(s, "T") == 0) return false;
  if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
    return false;
  for (size_t k = 0; k < n; k++)
    if (!((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z') ||
          (s[k] >= '0' && s[k] <= '9') || s[k] == '_'))
      return false;
  return true;
}

void leir_tir_options_init(leir_tir_options *opts) {
  if (!opts) return;
  leir_tir_options d = LEIR_TIR_OPTIONS_INIT;
  *opts = d;
}

leir_status leir_lower_tir(const leir_program *program, const leir_tir_options *opts, char **out,
                           size_t *len) {
  if (out) *out = NULL;
  if (len) *len = 0;
  if (!program || !out) return leir__error_arg(NULL, "NULL argument");
  leir_tir_options o = LEIR_TIR_OPTIONS_INIT;
  if (opts) {
    if (opts->size < offsetof(leir_tir_options, flags) + sizeof opts->flags)
      return leir__error_arg(NULL, "leir_tir_options.size is too small (use LEIR_TIR_OPTIONS_INIT)");
    o.flags = opts->flags;
    if (opts->size >= offsetof(leir_tir_options, func_name) + sizeof opts->func_name)
      o.func_name = opts->func_name;
  }
  const char *fname = o.func_name ? o.func_name : "main";
  if (!valid_func_name(fname))
    return leir__error_arg(NULL, "func_name must be a Python identifier of at most 64 characters, not a "
                       "keyword");
  leir__analysis *a = NULL;
  leir_status st = leir__analyze_program(program, NULL, &a);
  if (st != LEIR_OK) return st;
  leir__strbuf text = LEIR__STRBUF_INIT;
  size_t decls_at = 0;
  tir T;
  memset(&T, 0, sizeof T);
  T.a = a;
  T.p = program;
  T.flags = o.flags;
  T.out = &text;
  st = name_buffers(&T);
  if (st == LEIR_OK) {
    if (!(o.flags & LEIR_TIR_NO_IMPORT)) put(&T, "# from tvm.script import tir as T\n\n");
    putf(&T, "@T.prim_func%s\ndef %s(", o.flags & LEIR_TIR_BLOCKS ? "(s_tir=True)" : "", fname);
    bool first = true;
    for (uint32_t b = 0; b < a->nbuffers; b++) {
      const leir__buffer *buf = &a->buffers[b];
      if (buf->role == LEIR__BUF_TEMP) continue;
      putf(&T, "%s%s: T.Buffer(", first ? "" : ", ", T.bufnames[b]);
      put_shape(&T, buf);
      putf(&T, ", \"%s\")", tvm_dtype((leir_dtype)buf->dtype));
      first = false;
    }
    put(&T, "):\n    T.func_attr({\"tir.noalias\": True})\n");
    decls_at = text.len;
    if (o.flags & LEIR_TIR_BLOCKS) {
      /* blocks live in a root block, which owns the intermediates */
      put(&T, "    with T.sblock(\"root\"):\n");
      T.base = 1;
    }
    bool *declared = calloc(a->nbuffers ? a->nbuffers : 1, sizeof *declared);
    if (!declared) T.failed = true;
    for (uint32_t t = 0; t < program->nnests && !T.failed; t++) {
      /* intermediates first written in this nest, declared just before it */
      for (uint32_t i = 0; i < a->neqs; i++) {
        if (a->eqs[i].top != t) continue;
        uint32_t b = a->eqs[i].lhs_buffer;
        if (b >= a->nbuffers || declared[b] || a->buffers[b].role != LEIR__BUF_TEMP) continue;
        declared[b] = true;
        const leir__buffer *buf = &a->buffers[b];
        indent(&T, 1);
        putf(&T, "%s = T.alloc_buffer(", T.bufnames[b]);
        put_shape(&T, buf);
        putf(&T, ", \"%s\"", tvm_dtype((leir_dtype)buf->dtype));
        if (!(o.flags & LEIR_TIR_SCOPE_GLOBAL) && buf->scope != LEIR_SCOPE_GLOBAL)
          putf(&T, ", scope=\"%s\"", buf->scope == LEIR_SCOPE_SHARED ? "shared" : "local");
        put(&T, ")\n");
      }
      for (uint32_t i = 0; i < a->neqs; i++)
        if (a->eqs[i].top == t && a->eqs[i].init != LEIR__INIT_NONE) emit_init(&T, &a->eqs[i]);
      memset(T.axis_used, 0, sizeof T.axis_used);
      T.parallel_depth = 0;
      emit_nest(&T, program->nests[t], 1, true);
    }
    free(declared);
  }
  if (st == LEIR_OK && T.decls.len) {
    /* the Let variables, before the body that uses them */
    leir__strbuf whole = LEIR__STRBUF_INIT;
    leir__sb_put(&whole, text.data, decls_at);
    leir__sb_put(&whole, T.decls.data, T.decls.len);
    leir__sb_put(&whole, text.data + decls_at, text.len - decls_at);
    if (T.decls.failed || text.failed) whole.failed = true;
    leir__sb_release(&text);
    text = whole;
  }
  leir__sb_release(&T.decls);
  if (T.bufnames)
    for (uint32_t b = 0; b < a->nbuffers; b++) free(T.bufnames[b]);
  free(T.bufnames);
  free(T.nblocks);
  leir__analysis_free(a);
  if (st != LEIR_OK) {
    leir__sb_release(&text);
    return st;
  }
  if (T.failed && !text.failed) {
    leir__sb_release(&text);
    return leir__error(LEIR_ERR_INTERNAL, "tir.lower", NULL, 0, 0,
                       "the TIR lowering met an expression it cannot translate");
  }
  size_t n = 0;
  char *s = leir__sb_finish(&text, &n);
  if (!s) return leir__error_nomem();
  *out = s;
  if (len) *len = n;
  return LEIR_OK;
}
