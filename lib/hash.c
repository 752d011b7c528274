/* Program identity: XXH3 of the canonical text, plain and alpha-normalized. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "error.h"
#include "ir.h"
#include "signature.h"
#include "visit.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

uint64_t leir_program_hash(const leir_program *p) {
  if (!p) return 0;
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__print_program(&b, p, 0, NULL);
  uint64_t h = b.failed ? 0 : XXH3_64bits(b.data, b.len);
  leir__sb_release(&b);
  return h;
}

/* Renaming state: fresh names are written into one buffer; names[] points
 * into it (by offset until the buffer stops moving). */
typedef struct alpha {
  const leir_program *p;
  const bool *known;      /* by symbol */
  uint32_t *tensor_index; /* by symbol: intermediate number + 1, 0 = none yet */
  uint32_t ntensors;
  uint32_t *loop_index;   /* by symbol: loop number + 1 within the current nest */
  uint32_t *loop_syms;    /* the symbols numbered so far in the current nest */
  uint32_t nloops;
} alpha;

/* Numbers the tensors (other than the signature's) by first appearance. */
static int number_tensor(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)parent;
  alpha *a = v->ud;
  const leir_expr *e = *slot;
  if (e->kind == LEIR_EXPR_TENSOR && !a->known[e->sym] && !a->tensor_index[e->sym])
    a->tensor_index[e->sym] = ++a->ntensors;
  return LEIR__VISIT_NEXT;
}

static void visit_nest_tensors(alpha *a, const leir_nest *n) {
  leir__visit v = LEIR__VISIT_INIT(number_tensor, a);
  leir__visit_nest(&v, n);
}

/* Loops by first appearance: headers in print order (nested nests' headers
 * appear after the equations that precede them). */
static void visit_nest_loops(alpha *a, const leir_nest *n) {
  for (uint32_t k = 0; k < n->nloops; k++)
    if (!a->loop_index[n->loops[k].sym]) {
      a->loop_syms[a->nloops] = n->loops[k].sym;
      a->loop_index[n->loops[k].sym] = ++a->nloops;
    }
  for (uint32_t k = 0; k < n->nitems; k++)
    if (n->items[k].nest) visit_nest_loops(a, n->items[k].nest);
}

uint64_t leir_program_hash_alpha(const leir_program *p) {
  if (!p) return 0;
  uint32_t nsym = p->syms.count;
  bool *known = calloc(nsym ? nsym : 1, sizeof *known);
  uint32_t *tidx = calloc(nsym ? nsym : 1, sizeof *tidx);
  uint32_t *lidx = calloc(nsym ? nsym : 1, sizeof *lidx);
  uint32_t *lsyms = calloc(nsym ? nsym : 1, sizeof *lsyms);
  const char **names = calloc(nsym ? nsym : 1, sizeof *names);
  char *store = malloc((size_t)(nsym ? nsym : 1) * 12);
  leir__strbuf b = LEIR__STRBUF_INIT;
  uint64_t h = 0;
  if (!known || !tidx || !lidx || !lsyms || !names || !store) goto done;
  leir__known_symbols(p, known);
  alpha a = {p, known, tidx, 0, lidx, lsyms, 0};
  for (uint32_t k = 0; k < p->nnests; k++) visit_nest_tensors(&a, p->nests[k]);
  /* Intermediates: "#<n>"; loops: "$<n>" — never valid LEIR names, so no
   * renamed text can collide with an original one. */
  for (uint32_t s = 0; s < nsym; s++) {
    if (tidx[s]) {
      snprintf(store + (size_t)s * 12, 12, "#%u", tidx[s] - 1);
      names[s] = store + (size_t)s * 12;
    }
  }
  leir__rename rn = {names, nsym};
  for (uint32_t k = 0; k < p->nnests; k++) {
    /* Only this nest's loops are touched, so the whole pass stays linear
     * in the program size. Loop variables (lower case) and tensors (upper
     * case) never share a symbol, so loop names cannot clobber tensor
     * names. */
    a.nloops = 0;
    visit_nest_loops(&a, p->nests[k]);
    for (uint32_t i = 0; i < a.nloops; i++) {
      uint32_t s = lsyms[i];
      snprintf(store + (size_t)s * 12, 12, "$%u", i);
      names[s] = store + (size_t)s * 12;
    }
    leir__print_nest(&b, p, p->nests[k], &rn);
    for (uint32_t i = 0; i < a.nloops; i++) {
      lidx[lsyms[i]] = 0;
      names[lsyms[i]] = NULL;
    }
  }
  if (!b.failed) h = XXH3_64bits(b.data, b.len);
done:
  leir__sb_release(&b);
  free(known);
  free(tidx);
  free(lidx);
  free(lsyms);
  free(names);
  free(store);
  return h;
}

/* ---- structure: alpha hash without redundant parentheses ------------- */

static int drop_paren(leir__visit *v, leir_expr **slot, leir_expr *parent) {
  (void)v;
  (void)parent;
  while ((*slot)->kind == LEIR_EXPR_PAREN) *slot = (*slot)->kids[0];
  return LEIR__VISIT_NEXT;
}

/* Parentheses change nothing a program computes except one thing: the
 * syntactic accumulation forms (spec/leir.md §3.4) stop at a parenthesis,
 * so `C=C+A` starts C at 0 and `C=(C+A)` does not. The hash is therefore
 * the alpha hash of a copy without parenthesis nodes (the printer puts back
 * the fewest that keep the tree), mixed with the original's implicit
 * initialization of every equation. */
uint64_t leir__program_hash_structure(const leir_program *p) {
  if (!p) return 0;
  leir_program *q = NULL;
  if (leir_program_clone(&q, p) != LEIR_OK) return 0;
  leir__visit v = LEIR__VISIT_INIT(drop_paren, NULL);
  for (uint32_t k = 0; k < q->nnests; k++) leir__visit_nest(&v, q->nests[k]);
  uint64_t h = leir_program_hash_alpha(q);
  leir_program_free(q);
  leir__analysis *a = NULL;
  if (h && leir__analyze_program(p, NULL, &a) == LEIR_OK) {
    leir__strbuf b = LEIR__STRBUF_INIT;
    for (uint32_t i = 0; i < a->neqs; i++) leir__sb_putc(&b, (char)('0' + a->eqs[i].init));
    h = b.failed ? 0 : XXH3_64bits_withSeed(b.data, b.len, h);
    leir__sb_release(&b);
    leir__analysis_free(a);
  }
  return h;
}
