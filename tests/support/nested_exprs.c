#include "nested_exprs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const pre[NESTED_FORMS] = {
    "if_then_else(0<",
    "if_then_else(-1<",
    "max(0.5,if_then_else(0<min(",
    "if_then_else(((0<",
};
static const char *const post[NESTED_FORMS] = {
    "<1,1,0)",
    "<=A^{f64,g}_{a}+1<3,1,0)",
    ",1.5)<exp(A^{f64,g}_{a})<3,1,0))",
    "<((A^{f64,g}_{a}<1)<2)+1)),1,0)",
};

char *nested_program(int form, int k) {
  const char *x = "A^{f64,g}_{a}";
  size_t cap = strlen(x) + 64 + (size_t)k * (strlen(pre[form]) + strlen(post[form]));
  char *s = malloc(cap), *p = s;
  if (!s) abort();
  p += sprintf(p, "L^{4}_{a=0}[C^{f64,g}_{a}=");
  for (int i = 0; i < k; i++) p += sprintf(p, "%s", pre[form]);
  p += sprintf(p, "%s", x);
  for (int i = 0; i < k; i++) p += sprintf(p, "%s", post[form]);
  sprintf(p, ";];");
  return s;
}

char *wide_program(const char *fn, size_t n) {
  size_t cap = n * 24 + 64;
  char *s = malloc(cap), *p = s;
  if (!s) abort();
  p += sprintf(p, "L^{4}_{a=0}[C^{f64,g}_{a}=%s(", fn);
  for (size_t i = 0; i < n; i++) p += sprintf(p, "%sA^{f64,g}_{a}*%zu", i ? "," : "", i % 7);
  sprintf(p, ");];");
  return s;
}

int paren_depth(const char *src) {
  int d = 0, m = 0;
  for (; *src; src++) {
    if (*src == '(' && ++d > m) m = d;
    if (*src == ')') d--;
  }
  return m;
}
