/* Programs whose expressions nest deeply or widely (issues 11.1, 11.4,
 * 11.7): a lowering must stay linear in their size, and every backend must
 * compute what the interpreter computes. */
#ifndef TEST_NESTED_EXPRS_H
#define TEST_NESTED_EXPRS_H

#include <stddef.h>

enum {
  NESTED_CHAIN,     /* if_then_else(0<X<1,1,0): the middle operand is the nest */
  NESTED_CHAIN4,    /* if_then_else(-1<X<=A+1<3,1,0): two non-trivial middles */
  NESTED_CALLS,     /* max(0.5,if_then_else(0<min(X,1.5)<exp(A)<3,1,0)) */
  NESTED_PARENS,    /* if_then_else(((0<X<1)),1,0), with `((X<1)<2)` inside */
  NESTED_FORMS
};

/* "L^{4}_{a=0}[C^{f64,g}_{a}=E;];" where E is k levels of `form` around
 * A^{f64,g}_{a} (malloc'd; the caller frees). */
char *nested_program(int form, int k);

/* "L^{4}_{a=0}[C^{f64,g}_{a}=FN(A*0,A*1,...);];" with n arguments
 * (FN = max or min; malloc'd). */
char *wide_program(const char *fn, size_t n);

/* Deepest parenthesis nesting of a C-family source. */
int paren_depth(const char *src);

#endif
