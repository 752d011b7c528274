/*
 * Legality of bound (B) loops for the CUDA lowering (spec/leir.md §3.2).
 *
 * Every loop kind runs sequentially in the semantics; a B loop may run its
 * iterations on parallel hardware only when no element written by one
 * iteration is read or written by an iteration with another value of the
 * loop. Otherwise the program is INVALID for CUDA: it is never raced.
 *
 * The test is syntactic and conservative. For every write W of a buffer and
 * every access R of the same buffer in the loop's scope, some subscript
 * dimension must have the same affine form in W and R (same loops, same
 * coefficients, same constant) from whose value the B variable can be
 * recovered (mixed-radix argument in leir__cuda_determines). Then equal
 * elements imply equal B values, so no two threads meet on one element.
 *
 * Unlike lib/parallel.c (leir__loop_independent, for CPU P/V loops, which
 * holds the enclosing loops fixed), every other loop counts as free here:
 * the launch grid takes the bound loop out of the loops around it, so
 * threads run at different iterations of those loops at the same time.
 * The test itself is the dependence model's (lib/dependence.c, asked with
 * LEIR__HOLD_NONE); this file adds the naming rule and the diagnostic.
 */
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"
#include "dependence.h"
#include "error.h"

/* The nest (at any level under n) that owns `loop`, and its index. */
static bool find_nest(const leir_nest *n, const leir__loop *loop, const leir_nest **out,
                      uint32_t *k) {
  for (uint32_t i = 0; i < n->nloops; i++)
    if (&n->loops[i] == loop) {
      *out = n;
      *k = i;
      return true;
    }
  for (uint32_t i = 0; i < n->nitems; i++)
    if (n->items[i].nest && find_nest(n->items[i].nest, loop, out, k)) return true;
  return false;
}

bool leir__cuda_determines(const leir__affine *f, const leir__eqinfo *info, uint32_t slot) {
  return leir__dep_determines(f, info, slot);
}

/* Why loop `loop` of top-level nest `top` may not run its iterations on
 * parallel threads (the "what" of the diagnostic); false when it may. */
bool leir__cuda_loop_conflict(const leir__analysis *a, uint32_t top, const leir__loop *loop,
                              const char **tensor, char *what, size_t cap) {
  const leir_nest *n = NULL;
  uint32_t k = 0;
  if (!find_nest(a->p->nests[top], loop, &n, &k)) return false;
  return !leir__dep_loop_independent(a, n, k, LEIR__HOLD_NONE, tensor, what, cap);
}

static leir_status check_loop(const leir__analysis *a, uint32_t top, const leir__loop *loop) {
  const leir_program *p = a->p;
  const char *var = leir__sym_name(p, loop->sym);
  uint32_t line, col;
  leir__position(p, loop->pos, &line, &col);
  size_t vlen = strlen(var);
  if (vlen < 2 || (var[0] != 't' && var[0] != 'b') || var[1] < 'x' || var[1] > 'z')
    return leir__error(LEIR_ERR_INVALID, "cuda.bound-name", var, line, col,
                       "bound loop '%s' must be named t[xyz]... or b[xyz]... to select a "
                       "thread or block axis",
                       var);
  char what[512];
  const char *t = NULL;
  if (!leir__cuda_loop_conflict(a, top, loop, &t, what, sizeof what)) return LEIR_OK;
  return leir__error(LEIR_ERR_INVALID, "cuda.bound-dependence", var, line, col,
                     "bound loop '%s' carries a dependence through %s: %s; the CUDA backend "
                     "does not race it (bind another loop, or make the loop L)",
                     var, t, what);
}

static leir_status walk(const leir__analysis *a, uint32_t top, const leir_nest *n) {
  for (uint32_t k = 0; k < n->nloops; k++)
    if (n->loops[k].kind == LEIR_LOOP_BOUND) {
      leir_status st = check_loop(a, top, &n->loops[k]);
      if (st != LEIR_OK) return st;
    }
  for (uint32_t k = 0; k < n->nitems; k++)
    if (n->items[k].nest) {
      leir_status st = walk(a, top, n->items[k].nest);
      if (st != LEIR_OK) return st;
    }
  return LEIR_OK;
}

leir_status leir__cuda_check_bound_loops(const leir__analysis *a, uint32_t top) {
  return walk(a, top, a->p->nests[top]);
}
