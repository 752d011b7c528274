/*
 * Dependences inside one nest (deps.c): which loop orders keep a nest's
 * results. Part of the strategy kit (include kit.h).
 */
#ifndef LEIR_STRATEGIES_DEPS_H
#define LEIR_STRATEGIES_DEPS_H

#ifndef LEIR_STRATEGIES_KIT_H
#error "include kit.h (which includes this header)"
#endif

typedef enum leir__acc {
  LEIR__ACC_OTHER = 0, /* order of the accesses matters */
  LEIR__ACC_ASSOC,     /* X = X + ... / X * ...: any order, rounding may differ */
  LEIR__ACC_MAXMIN     /* X = max(X, ...): any order, same result */
} leir__acc;

typedef struct leir__wbuf {
  uint32_t buffer;  /* analysis buffer written in the nest */
  uint64_t pinned;  /* loops of the nest on which every access agrees injectively */
  uint8_t acc;      /* leir__acc */
} leir__wbuf;

struct leir__deps {
  uint32_t nloops;
  bool ok;          /* false: too many loops or unanalysable; no loop sites */
  uint32_t nw;
  leir__wbuf *w;
};

/* Dependence summary of nest i (cached in the context). */
const leir__deps *leir__nest_deps(leir__sctx *c, uint32_t i);

/* Class of running the nest's iterations in a new order. The new order is
 * a sequence of digits, outermost first: digit k belongs to original loop
 * loop[k] with significance sig[k] (0 = most significant digit of that
 * loop; a loop that is not split has one digit). Returns 0 (exact),
 * 1 (reassociating) or -1 (changes results). */
int leir__order_class(const leir__deps *d, const uint8_t *loop, const uint8_t *sig, uint32_t n);

#endif
