/* The CPU backend against the reference evaluator, mutation verdicts,
 * hostile programs and the sandbox, compilation errors and caches, timing. */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "c/lower_c.h"
#include "corpus.h"
#include "nested_exprs.h"
#include "sandbox.h"
#include "testutil.h"

static leir_backend *open_backend(const char *name) {
  leir_backend *b = NULL;
  ck_assert_msg(leir_backend_open(&b, name, NULL) == LEIR_OK, "%s: %s", name,
                leir_error_last()->message);
  return b;
}

static bool same_element(const unsigned char *x, const unsigned char *y, leir_dtype dt) {
  size_t es = leir_dtype_size(dt);
  if (memcmp(x, y, es) == 0) return true;
  if (dt == LEIR_F64) {
    double a, b;
    memcpy(&a, x, 8);
    memcpy(&b, y, 8);
    return isnan(a) && isnan(b);
  }
  if (dt == LEIR_F32) {
    float a, b;
    memcpy(&a, x, 4);
    memcpy(&b, y, 4);
    return isnan(a) && isnan(b);
  }
  return false;
}

/* Runs kernels ki (interp) and kc (cpu) on input set `set` and requires
 * bitwise identical outputs (NaN where NaN). */
static void require_agreement(const char *id, const leir_program *p, leir_kernel *ki,
                              leir_kernel *kc, uint32_t set) {
  size_t n = leir_kernel_buffer_count(kc);
  ck_assert_uint_eq(n, leir_kernel_buffer_count(ki));
  void **bi = calloc(n, sizeof *bi), **bc = calloc(n, sizeof *bc);
  size_t *bytes = calloc(n, sizeof *bytes);
  for (size_t i = 0; i < n; i++) {
    leir_tensor_decl d;
    leir_kernel_buffer(kc, i, &d);
    size_t e = 1;
    for (uint32_t r = 0; r < d.rank; r++) e *= (size_t)d.shape[r];
    bytes[i] = e * leir_dtype_size(d.dtype);
    bi[i] = malloc(bytes[i]);
    bc[i] = malloc(bytes[i]);
  }
  ck_assert_int_eq(leir_program_fill_inputs(p, 11, set, bi, n), LEIR_OK);
  for (size_t i = 0; i < n; i++) memcpy(bc[i], bi[i], bytes[i]);
  leir_status si = leir_kernel_run(ki, bi, n);
  char msg_i[1100];
  snprintf(msg_i, sizeof msg_i, "%s", leir_error_last()->message);
  leir_status sc = leir_kernel_run(kc, bc, n);
  ck_assert_msg(si == LEIR_OK && sc == LEIR_OK, "%s: interp %s (%s), cpu %s (%s)", id,
                leir_status_name(si), msg_i, leir_status_name(sc), leir_error_last()->message);
  for (size_t i = 0; i < n && si == LEIR_OK; i++) {
    leir_tensor_decl d;
    leir_kernel_buffer(kc, i, &d);
    if (d.role != LEIR_ROLE_OUTPUT) continue;
    size_t es = leir_dtype_size(d.dtype);
    for (size_t e = 0; e < bytes[i] / es; e++)
      ck_assert_msg(same_element((unsigned char *)bi[i] + e * es, (unsigned char *)bc[i] + e * es,
                                 d.dtype),
                    "%s: output %s element %zu differs between interp and cpu (set %u)", id,
                    d.name, e, set);
  }
  for (size_t i = 0; i < n; i++) {
    free(bi[i]);
    free(bc[i]);
  }
  free(bi);
  free(bc);
  free(bytes);
}

/* ---- interp == cpu on the conformance corpus ------------------------------ */

START_TEST(test_interp_and_cpu_agree_bitwise_on_every_small_source) {
  corpus_entry *es;
  size_t n = corpus_read(&es);
  ck_assert_uint_ge(n, 100);
  leir_backend *interp = open_backend("interp"), *cpu = open_backend("cpu");
  enum { BATCH = 8 };
  for (size_t at = 0; at < n; at += BATCH) {
    size_t m = n - at < BATCH ? n - at : BATCH;
    leir_program *ps[BATCH];
    leir_kernel *kc[BATCH];
    for (size_t j = 0; j < m; j++) {
      ps[j] = corpus_program(&es[at + j]);
      ck_assert_msg(leir__kernel_build(cpu, ps[j], NULL, &kc[j]) == LEIR_OK, "%s: %s",
                    es[at + j].id, leir_error_last()->message);
    }
    /* one batch: the compilers run concurrently */
    ck_assert_int_eq(leir__kernels_prepare(cpu, kc, m), LEIR_OK);
    for (size_t j = 0; j < m; j++) {
      ck_assert_msg(kc[j]->prepared == LEIR_OK, "%s: %s\n%s", es[at + j].id,
                    leir_status_name(kc[j]->prepared), kc[j]->log.data ? kc[j]->log.data : "");
      leir_kernel *ki = NULL;
      ck_assert_int_eq(leir_kernel_new(&ki, interp, ps[j]), LEIR_OK);
      /* set 1 (normal x 10) stresses overflow, -inf and guards */
      require_agreement(es[at + j].id, ps[j], ki, kc[j], 1);
      leir_kernel_free(ki);
      leir__kernel_destroy(kc[j]);
      leir_program_free(ps[j]);
    }
  }
  leir_backend_free(interp);
  leir_backend_free(cpu);
  corpus_free(es, n);
}
END_TEST

/* Every dtype, integer corner cases, lazy guards, indirect indices. */
static const char *const dtype_programs[] = {
    /* f16 accumulate, rounded on every store */
    "L^{4}_{a=0}L^{16}_{c=0}[C^{f16,g}_{a}=C^{f16,g}_{a}+A^{f16,g}_{a,c}*D^{f16,g}_{c};];",
    /* bf16 softmax-ish */
    "L^{4}_{a=0}L^{8}_{c=0}[E^{bf16,g}_{a}=max(E^{bf16,g}_{a},A^{bf16,g}_{a,c});];"
    "L^{4}_{a=0}L^{8}_{c=0}[C^{bf16,g}_{a,c}=exp(A^{bf16,g}_{a,c}-E^{bf16,g}_{a});];",
    /* f32 with f64 and f16 reads, erf, pow, floor division/modulo of floats */
    "L^{6}_{a=0}L^{5}_{c=0}[C^{f32,g}_{a,c}=erf(A^{f32,g}_{a,c})*D^{f64,g}_{c}+A^{f32,g}_{a,c}**3"
    "-(A^{f32,g}_{a,c}//0.3)+A^{f32,g}_{a,c}%0.7+E^{f16,g}_{a};];",
    /* integers: floor division/modulo of negatives, wrapping, narrow stores */
    "L^{9}_{a=0}L^{7}_{c=0}[C^{i32,g}_{a,c}=(a-4)*1000000007//if_then_else(c>=3,c-2,c-3)+(a*c-20)%(c+1);"
    "D^{i8,g}_{a,c}=a*37+c*91;E^{u8,g}_{a,c}=a*c*29-100;F^{i16,g}_{a,c}=(a-4)**(c+1);];",
    /* bool and argmax with integer outputs from float comparisons */
    "L^{5}_{a=0}L^{6}_{c=0}[G^{f64,g}_{a}=max(G^{f64,g}_{a},A^{f64,g}_{a,c});C^{i64,g}_{a}=0;];"
    "L^{5}_{a=0}L^{6}_{c=0}[C^{i64,g}_{a}=if_then_else(A^{f64,g}_{a,c}>=G^{f64,g}_{a},c,C^{i64,g}_{a});"
    "D^{bool,g}_{a,c}=if_then_else(A^{f64,g}_{a,c}>0,1,0)+a;];",
    /* masked fill from a bool input, chained comparisons, | and & */
    "L^{4}_{a=0}L^{10}_{c=0}[C^{f64,g}_{a,c}=if_then_else(M^{bool,g}_{a,c}|(2<=c<5&a!=1),"
    "-inf,A^{f64,g}_{a,c})+if_then_else(M^{bool,g}_{a,c},1,0);];",
    /* padding guard (lazy), decreasing index, tiled index */
    "L^{2}_{a=0}L^{12}_{c=0}[E^{f64,g}_{a,c}=if_then_else(2<=c<10,A^{f64,g}_{a,c-2},0);];"
    "L^{2}_{a=0}L^{2}_{g=0}L^{4}_{c=0}[C^{f64,g}_{a,g*4+c}=E^{f64,g}_{a,11-(g*4+c)}*E^{f64,g}_{a,g*4+c+2};];",
    /* indirect index through an integer input (valid range drawn from its use) */
    "L^{6}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{I^{i64,g}_{a}}+A^{f64,g}_{(I^{i64,g}_{a}+1)//2};];",
    /* precompute_indices style integer intermediate */
    "L^{4}_{a=0}L^{3}_{c=0}[F^{i64,g}_{a,c}=a+c;];L^{4}_{a=0}L^{3}_{c=0}[C^{f64,g}_{a,c}="
    "A^{f64,g}_{F^{i64,g}_{a,c}};];",
    /* online softmax (rank change, prefix guards) and a nested nest */
    "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx,a}=max(if_then_else(a-1<0,-inf,D^{f64,g}_{tx,a-1}),A^{f64,g}_{tx,a});"
    "F^{f64,g}_{tx,a}=if_then_else(a-1<0,1,F^{f64,g}_{tx,a-1})*exp(if_then_else(a-1<0,-inf,"
    "D^{f64,g}_{tx,a-1})-D^{f64,g}_{tx,a})+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx,a});"
    "L^{3}_{i=0}[G^{f64,g}_{tx,a,i}=F^{f64,g}_{tx,a}*i;];];"
    "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx,7})/F^{f64,g}_{tx,7}"
    "+G^{f64,g}_{tx,a,2};];",
    /* scalars, integer literal division in a float equation, ** of negatives */
    "B^{1}_{tx=0}[H^{f64,g}=7//2+(-7)//2+(-7)%3+2**-1;];"
    "L^{3}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a}**2+H^{f64,g}+(A^{f64,g}_{a}-1)**0.5;];",
};

START_TEST(test_interp_and_cpu_agree_on_every_dtype_and_operator) {
  leir_backend *interp = open_backend("interp"), *cpu = open_backend("cpu");
  size_t n = sizeof dtype_programs / sizeof dtype_programs[0];
  for (size_t i = 0; i < n; i++) {
    leir_program *p;
    if (strstr(dtype_programs[i], "I^{i64,g}")) {
      /* only indexed indirectly: the extent of A needs a signature */
      p = test_parse(dtype_programs[i]);
      test_set_signature(p, "A:f64:6,I:i64:6 -> C:f64:6");
    } else {
      p = test_parse(dtype_programs[i]);
      ck_assert_msg(leir_program_infer_signature(p) == LEIR_OK, "program %zu: %s", i,
                    leir_error_last()->message);
    }
    leir_kernel *ki = NULL, *kc = NULL;
    ck_assert_msg(leir_kernel_new(&ki, interp, p) == LEIR_OK, "program %zu: %s", i,
                  leir_error_last()->message);
    ck_assert_msg(leir_kernel_new(&kc, cpu, p) == LEIR_OK, "program %zu: %s\n%s", i,
                  leir_error_last()->message, leir_backend_compile_log(cpu));
    char id[32];
    snprintf(id, sizeof id, "dtype program %zu", i);
    for (uint32_t set = 0; set < 3; set++) require_agreement(id, p, ki, kc, set);
    leir_kernel_free(ki);
    leir_kernel_free(kc);
    leir_program_free(p);
  }
  leir_backend_free(interp);
  leir_backend_free(cpu);
}
END_TEST


/* ---- deep and wide expressions (issues 11.1, 11.4, 11.7) ------------------- */

static char *lower_c(leir_backend *cpu, const char *src, size_t *len) {
  leir_program *p = test_parse(src);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  char *out = NULL;
  ck_assert_msg(leir_backend_lower(cpu, p, &out, len) == LEIR_OK, "%.80s: %s", src,
                leir_error_last()->message);
  leir_program_free(p);
  return out;
}

static void agree(leir_backend *interp, leir_backend *cpu, const char *src, const char *id) {
  leir_program *p = test_parse(src);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  leir_kernel *ki = NULL, *kc = NULL;
  ck_assert_msg(leir_kernel_new(&ki, interp, p) == LEIR_OK, "%s: %s", id,
                leir_error_last()->message);
  ck_assert_msg(leir_kernel_new(&kc, cpu, p) == LEIR_OK, "%s: %s\n%s", id,
                leir_error_last()->message, leir_backend_compile_log(cpu));
  for (uint32_t set = 0; set < 2; set++) require_agreement(id, p, ki, kc, set);
  leir_kernel_free(ki);
  leir_kernel_free(kc);
  leir_program_free(p);
}

/* k nested `if_then_else(0<X<1,1,0)` wrote X twice per level: k=20 gave
 * 45 MB of C, k=40 ran out of memory. Now every level adds a bounded number
 * of bytes, and the compiled code computes what the interpreter computes. */
START_TEST(test_comparison_chains_lower_linearly_and_agree) {
  leir_backend *interp = open_backend("interp"), *cpu = open_backend("cpu");
  for (int form = 0; form < NESTED_FORMS; form++) {
    char *src0 = nested_program(form, 0);
    size_t base;
    free(lower_c(cpu, src0, &base));
    free(src0);
    /* 20, 40 and the deepest the parser admits (k=200 is nested deeper
     * than its 200 levels: a parse error) */
    int ks[3] = {20, 40, 0};
    for (int k = 200; k > 40 && !ks[2]; k -= 5) {
      char *src = nested_program(form, k);
      leir_program *p = NULL;
      if (leir_program_parse(&p, src, strlen(src), NULL) == LEIR_OK) ks[2] = k;
      leir_program_free(p);
      free(src);
    }
    ck_assert_int_gt(ks[2], 40);
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
      char *src = nested_program(form, ks[i]);
      size_t len;
      char *c = lower_c(cpu, src, &len);
      ck_assert_msg(len <= base + (size_t)ks[i] * 512, "form %d, k=%d: %zu bytes of C (base %zu)",
                    form, ks[i], len, base);
      if (form == NESTED_CHAIN) ck_assert_ptr_nonnull(strstr(c, "(leir_c0 = "));
      free(c);
      if (ks[i] <= 40) {
        char id[64];
        snprintf(id, sizeof id, "nested form %d, k=%d", form, ks[i]);
        agree(interp, cpu, src, id);
      }
      free(src);
    }
  }
  leir_backend_free(interp);
  leir_backend_free(cpu);
}
END_TEST

/* `if_then_else(((a<2)),1,0)`, `((a<2))&a>0`, `((a<2)<3)` pass check; the C
 * lowering refused them ("cannot translate": verify said exit 3). */
START_TEST(test_parenthesized_conditions_compile_and_agree) {
  leir_backend *interp = open_backend("interp"), *cpu = open_backend("cpu");
  static const char *const conds[] = {
      "((a<2))", "((a<2))&a>0", "((a<2)<3)", "(((a<2)|(a>2)))", "(a<2)+(a<1)+1>1.5",
      "1<a<(a<3)+3",
  };
  for (size_t k = 0; k < sizeof conds / sizeof *conds; k++) {
    char src[160];
    snprintf(src, sizeof src, "L^{4}_{a=0}[C^{f64,g}_{a}=if_then_else(%s,A^{f64,g}_{a},-1);];",
             conds[k]);
    agree(interp, cpu, src, src);
  }
  leir_backend_free(interp);
  leir_backend_free(cpu);
}
END_TEST

/* max/min of 50,000 arguments lowered to 50,000 nested calls, which crash
 * cc1. Now a balanced tree: shallow, and linear in size. Compiling that at
 * -O3 takes minutes, so the agreement check uses 2,000 arguments. */
START_TEST(test_wide_max_and_min_lower_to_a_shallow_tree) {
  leir_backend *interp = open_backend("interp"), *cpu = open_backend("cpu");
  static const char *const fns[] = {"max", "min"};
  for (int f = 0; f < 2; f++) {
    char *src = wide_program(fns[f], 50000);
    size_t len;
    char *c = lower_c(cpu, src, &len);
    ck_assert_msg(paren_depth(c) < 40, "%s: parentheses %d deep", fns[f], paren_depth(c));
    ck_assert_uint_lt(len, strlen(src) * 4);
    free(c);
    free(src);
    src = wide_program(fns[f], 2000);
    agree(interp, cpu, src, fns[f]);
    free(src);
    /* short argument lists keep the left fold of the spec */
    src = wide_program(fns[f], 3);
    c = lower_c(cpu, src, &len);
    char want[64];
    snprintf(want, sizeof want, "leir_f%s_f64(leir_f%s_f64(", fns[f], fns[f]);
    ck_assert_msg(strstr(c, want) != NULL, "%s", c);
    free(c);
    free(src);
  }
  leir_backend_free(interp);
  leir_backend_free(cpu);
}
END_TEST


/* Generated source has a size limit that ends in a status, and a failed
 * write stops emission (issue 11.1: k=40 nested chains ran to 4.2 GB). */
START_TEST(test_lowering_stops_at_the_size_limit_and_at_a_failed_write) {
  char *src = wide_program("max", 2000);
  leir_program *p = test_parse(src);
  free(src);
  ck_assert_int_eq(leir_program_infer_signature(p), LEIR_OK);
  leir__analysis *a = NULL;
  ck_assert_int_eq(leir__analyze_program(p, NULL, &a), LEIR_OK);
  leir__c_options o = {false, false, 1};
  leir__strbuf full = LEIR__STRBUF_INIT, cut = LEIR__STRBUF_INIT, bad = LEIR__STRBUF_INIT;
  ck_assert_int_eq(leir__lower_c_max(a, &o, 0, &full, NULL, NULL), LEIR_OK);
  ck_assert_uint_gt(full.len, 40000);
  size_t limit = full.len - 20000; /* within the equation's statement */
  ck_assert_int_eq(leir__lower_c_max(a, &o, limit, &cut, NULL, NULL), LEIR_ERR_LIMIT);
  ck_assert_str_eq(leir_error_last()->rule, "lower.size");
  /* the statement that crossed it is dropped, and nothing follows */
  ck_assert_ptr_nonnull(strstr(full.data, "const double v = "));
  ck_assert_ptr_null(strstr(cut.data, "const double v = "));
  ck_assert_ptr_null(strstr(cut.data, "  return 0;\n}\n"));
  bad.failed = 1;
  ck_assert_int_eq(leir__lower_c(a, &o, &bad, NULL, NULL), LEIR_ERR_NOMEM);
  ck_assert_uint_eq(bad.len, 0);
  leir__sb_release(&full);
  leir__sb_release(&cut);
  leir__analysis_free(a);
  leir_program_free(p);
}
END_TEST

/* ---- verdicts --------------------------------------------------------------- */

static leir_verify_report *verify(leir_backend *b, const char *before, const char *after,
                                  uint32_t flags) {
  leir_program *p = test_parse(before), *q = test_parse(after);
  leir_verify_options o = LEIR_VERIFY_OPTIONS_INIT;
  o.flags = flags;
  leir_verify_report *r = NULL;
  ck_assert_msg(leir_verify(b, p, q, &o, &r) == LEIR_OK, "%s", leir_error_last()->message);
  leir_program_free(p);
  leir_program_free(q);
  return r;
}

static void expect(leir_backend *b, const char *before, const char *after, leir_verdict v,
                   uint32_t flags) {
  leir_verify_report *r = verify(b, before, after, flags);
  ck_assert_msg(r->verdict == v, "%s: expected %s, got %s (%s)\n  after: %s", b->ops->name,
                leir_verdict_name(v), leir_verdict_name(r->verdict), r->message, after);
  leir_verify_report_free(r);
}

#define MATMUL                                                                        \
  "B^{4}_{tx=0}L^{6}_{a=0}L^{8}_{c=0}[D^{f64,g}_{tx,a}=D^{f64,g}_{tx,a}+A^{f64,g}_{tx,c}" \
  "*C^{f64,g}_{c,a};];"
#define SOFTMAX                                                                          \
  "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];"           \
  "B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];" \
  "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];"
#define SUM "B^{4}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a};];"

static void mutations(const char *backend) {
  leir_backend *b = open_backend(backend);
  /* the reordered loops of a matmul are exact */
  expect(b, MATMUL,
         "B^{4}_{tx=0}L^{8}_{c=0}L^{6}_{a=0}[D^{f64,g}_{tx,a}=D^{f64,g}_{tx,a}+A^{f64,g}_{tx,c}"
         "*C^{f64,g}_{c,a};];",
         LEIR_VERDICT_EQUAL, 0);
  /* a reassociated sum is close but not bitwise */
  expect(b, SUM,
         "B^{4}_{tx=0}L^{2}_{d=0}L^{4}_{a=0}[E^{f64,g}_{tx,d}=E^{f64,g}_{tx,d}+A^{f64,g}_{tx,d*4+a};];"
         "B^{4}_{tx=0}L^{2}_{d=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+E^{f64,g}_{tx,d};];",
         LEIR_VERDICT_CLOSE, 0);
  /* swapped operands */
  expect(b, SOFTMAX,
         "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];"
         "B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(D^{f64,g}_{tx}-A^{f64,g}_{tx,a});];"
         "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];",
         LEIR_VERDICT_MISMATCH, 0);
  /* a perturbed constant */
  expect(b, "L^{4}_{a=0}[C^{f64,g}_{a}=0.5*A^{f64,g}_{a}+1;];",
         "L^{4}_{a=0}[C^{f64,g}_{a}=0.5000001*A^{f64,g}_{a}+1;];", LEIR_VERDICT_MISMATCH, 0);
  /* a dropped reduction init: X first is what triggers the implicit
   * initialization (spec §3.4); written second, X is read before it is
   * ever written, which the checker rejects */
  expect(b, SUM, "B^{4}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx,a}+C^{f64,g}_{tx};];",
         LEIR_VERDICT_INVALID, 0);
  /* an explicit init dropped from argmax */
  expect(b,
         "L^{3}_{a=0}L^{4}_{c=0}[D^{f64,g}_{a}=max(D^{f64,g}_{a},A^{f64,g}_{a,c});C^{i64,g}_{a}=0;];"
         "L^{3}_{a=0}L^{4}_{c=0}[C^{i64,g}_{a}=if_then_else(A^{f64,g}_{a,c}>=D^{f64,g}_{a},c,C^{i64,g}_{a});];",
         "L^{3}_{a=0}L^{4}_{c=0}[D^{f64,g}_{a}=max(D^{f64,g}_{a},A^{f64,g}_{a,c});];"
         "L^{3}_{a=0}L^{4}_{c=0}[C^{i64,g}_{a}=if_then_else(A^{f64,g}_{a,c}>=D^{f64,g}_{a},c,C^{i64,g}_{a});];",
         LEIR_VERDICT_INVALID, 0);
  /* off by one, still in bounds: the window skips element 0 */
  expect(b, SUM, "B^{4}_{tx=0}L^{7}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a+1};];",
         LEIR_VERDICT_MISMATCH, 0);
  /* off by one past the end: provably out of bounds */
  leir_verify_report *r =
      verify(b, SUM, "B^{4}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a+1};];", 0);
  ck_assert_int_eq(r->verdict, LEIR_VERDICT_INVALID);
  ck_assert_int_eq(r->program, 1);
  ck_assert_str_eq(r->rule, "check.bounds");
  ck_assert_uint_eq(r->line, 1);
  ck_assert_uint_eq(r->column, 69); /* the subscript a+1 */
  leir_verify_report_free(r);
  /* a parallel loop over a reduction: on the CPU it runs sequentially
   * (EQUAL, with a note); with the strict flag it is INVALID */
  const char *par = "B^{4}_{tx=0}P^{8}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a};];";
  r = verify(b, SUM, par, 0);
  ck_assert_str_eq(leir_verdict_name(r->verdict), "EQUAL");
  ck_assert_ptr_nonnull(strstr(r->notes, "candidate:1:13: loop 'a' (P) of nest 1 runs sequentially"));
  ck_assert_ptr_nonnull(strstr(r->notes, "reduction across 'a'"));
  leir_verify_report_free(r);
  r = verify(b, SUM, par, LEIR_VERIFY_STRICT_PARALLEL);
  ck_assert_str_eq(leir_verdict_name(r->verdict), "INVALID");
  ck_assert_str_eq(r->rule, "check.parallel-dependence");
  ck_assert_uint_eq(r->column, 13);
  leir_verify_report_free(r);
  /* a legal parallel loop is not noted and stays EQUAL under strict */
  expect(b, SUM, "P^{4}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a};];",
         LEIR_VERDICT_EQUAL, LEIR_VERIFY_STRICT_PARALLEL);
  /* the reference's pass rule accepts a small error the tolerance rejects */
  expect(b, "L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a}*3;];",
         "L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a}*3.000001;];", LEIR_VERDICT_MISMATCH, 0);
  expect(b, "L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a}*3;];",
         "L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a}*3.000001;];", LEIR_VERDICT_CLOSE,
         LEIR_VERIFY_REFERENCE_RULE);
  /* a program returning a constant cannot pass by luck */
  expect(b, "L^{4}_{a=0}[C^{f64,g}_{a}=max(A^{f64,g}_{a},0);];",
         "L^{4}_{a=0}[C^{f64,g}_{a}=0;];", LEIR_VERDICT_MISMATCH, 0);
  leir_backend_free(b);
}

START_TEST(test_mutations_get_the_right_verdict_on_cpu) { mutations("cpu"); }
END_TEST

START_TEST(test_mutations_get_the_right_verdict_on_interp) { mutations("interp"); }
END_TEST

START_TEST(test_identical_programs_are_equal_on_every_seed) {
  leir_backend *b = open_backend("cpu");
  leir_program *p = test_parse(SOFTMAX);
  for (uint64_t seed = 0; seed < 6; seed++) {
    leir_verify_options o = LEIR_VERIFY_OPTIONS_INIT;
    o.seed = seed * 7919;
    leir_verify_report *r = NULL;
    ck_assert_int_eq(leir_verify(b, p, p, &o, &r), LEIR_OK);
    ck_assert_str_eq(leir_verdict_name(r->verdict), "EQUAL");
    ck_assert_uint_eq(r->seed, seed * 7919);
    leir_verify_report_free(r);
  }
  leir_program_free(p);
  leir_backend_free(b);
}
END_TEST

/* ---- hostile programs -------------------------------------------------------- */

START_TEST(test_hostile_programs_become_verdicts) {
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.timeout_s = 0.5;
  bo.memory_limit_bytes = (uint64_t)256 << 20;
  bo.max_buffer_bytes = (uint64_t)64 << 30; /* let the allocation reach the child */
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_OK);
  /* a hang: 4 10^10 evaluations (under the evaluation limit) */
  leir_verify_report *r =
      verify(b, "L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];",
             "L^{4}_{a=0}L^{100000}_{c=0}L^{100000}_{d=0}[C^{f64,g}_{a}=A^{f64,g}_{a}+c*d;];", 0);
  ck_assert_str_eq(leir_verdict_name(r->verdict), "TIMEOUT");
  ck_assert_int_eq(r->program, 1);
  ck_assert_int_eq(r->set, 0);
  leir_verify_report_free(r);
  /* a runaway allocation: a 4 GiB intermediate against a 256 MiB limit
   * (sanitizers reserve the address space RLIMIT_AS would limit: skipped) */
#if !defined(__SANITIZE_ADDRESS__)
  r = verify(b, "L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];",
             "L^{4}_{a=0}L^{536870912}_{c=0}[E^{f64,g}_{c}=A^{f64,g}_{a};];"
             "L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a}+E^{f64,g}_{a};];",
             0);
  ck_assert_str_eq(leir_verdict_name(r->verdict), "RUNTIME_ERROR");
  ck_assert_ptr_nonnull(strstr(r->message, "cannot allocate"));
  leir_verify_report_free(r);
#endif
  /* an out-of-bounds indirect index, found at run time */
  r = verify(b, "L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];",
             "L^{4}_{a=0}[F^{i64,g}_{a}=A^{f64,g}_{a}*1000;];"
             "L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{F^{i64,g}_{a}};];",
             0);
  ck_assert_str_eq(leir_verdict_name(r->verdict), "RUNTIME_ERROR");
  ck_assert_ptr_nonnull(strstr(r->message, "out of range [0, 4) in subscript 1 of A"));
  ck_assert_uint_eq(r->line, 1);
  ck_assert_uint_eq(r->column, 85);
  leir_verify_report_free(r);
  /* integer division by zero */
  r = verify(b, "L^{4}_{a=0}[C^{i64,g}_{a}=a;];", "L^{4}_{a=0}[C^{i64,g}_{a}=a*4//(a-2)//2;];", 0);
  ck_assert_str_eq(leir_verdict_name(r->verdict), "RUNTIME_ERROR");
  ck_assert_ptr_nonnull(strstr(r->message, "division by zero"));
  leir_verify_report_free(r);
  leir_backend_free(b);
  /* the default limits refuse the huge buffer before anything runs */
  b = open_backend("cpu");
  r = verify(b, "L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a};];",
             "L^{4}_{a=0}L^{536870912}_{c=0}[E^{f64,g}_{c}=A^{f64,g}_{a};];"
             "L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a}+E^{f64,g}_{a};];",
             0);
  ck_assert_str_eq(leir_verdict_name(r->verdict), "INVALID");
  ck_assert_str_eq(r->rule, "limit.buffer-bytes");
  leir_verify_report_free(r);
  leir_backend_free(b);
}
END_TEST

static void crash(void *ctx, leir__sandbox *s) {
  (void)ctx, (void)s;
  raise(SIGSEGV);
}

static void spin(void *ctx, leir__sandbox *s) {
  (void)ctx, (void)s;
  for (volatile unsigned long i = 0;; i++) {
  }
}

static void hog(void *ctx, leir__sandbox *s) {
  (void)ctx;
  size_t total = 0;
  for (;;) {
    char *p = malloc((size_t)64 << 20);
    if (!p) {
      leir__sandbox_fail(s, LEIR_ERR_RUNTIME, "allocation failed after %zu MiB", total >> 20);
      return;
    }
    memset(p, 1, (size_t)64 << 20);
    total += (size_t)64 << 20;
  }
}

static void work(void *ctx, leir__sandbox *s) {
  (void)ctx;
  for (int i = 0; i < 5; i++) {
    usleep(40000); /* 5 x 40 ms, more than the 100 ms limit in total */
    __atomic_add_fetch(&s->shared->progress, 1, __ATOMIC_SEQ_CST);
  }
  memcpy(s->data, "done", 5);
}

START_TEST(test_sandbox_survives_crashes_hangs_and_hogs) {
  leir__sandbox s;
  ck_assert_int_eq(leir__sandbox_map(&s, 4096), LEIR_OK);
  leir__sandbox_limits lim = {0.1, (uint64_t)512 << 20, 2.0};
  ck_assert_int_eq(leir__sandbox_run(&s, &lim, crash, NULL), LEIR_ERR_RUNTIME);
  ck_assert_ptr_nonnull(strstr(leir_error_last()->message, "SIGSEGV"));
  double t0 = leir__now();
  ck_assert_int_eq(leir__sandbox_run(&s, &lim, spin, NULL), LEIR_ERR_TIMEOUT);
  ck_assert(leir__now() - t0 < 2.0);
  /* the hog either sees its malloc fail (address-space limit) or is killed;
   * either way the caller gets a status */
  leir_status st = leir__sandbox_run(&s, &lim, hog, NULL);
  ck_assert(st == LEIR_ERR_RUNTIME || st == LEIR_ERR_TIMEOUT);
  /* progress extends the deadline: 200 ms of work in 40 ms units passes */
  ck_assert_int_eq(leir__sandbox_run(&s, &lim, work, NULL), LEIR_OK);
  ck_assert_str_eq((char *)s.data, "done");
  leir__sandbox_unmap(&s);
}
END_TEST

/* ---- compilation ------------------------------------------------------------- */

START_TEST(test_compiler_rejection_is_a_compile_error_with_its_log) {
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.compiler_flags = "-O1 -fno-such-option-for-leir";
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_OK);
  leir_verify_report *r = verify(b, SUM, SUM, 0);
  ck_assert_str_eq(leir_verdict_name(r->verdict), "COMPILE_ERROR");
  ck_assert_ptr_nonnull(strstr(r->log, "fno-such-option-for-leir"));
  leir_verify_report_free(r);
  leir_program *p = test_parse(SUM);
  leir_kernel *k = NULL;
  ck_assert_int_eq(leir_kernel_new(&k, b, p), LEIR_ERR_COMPILE);
  ck_assert_ptr_nonnull(strstr(leir_backend_compile_log(b), "fno-such-option-for-leir"));
  leir_program_free(p);
  leir_backend_free(b);
  /* flags that would change floating-point results are refused */
  bo.compiler_flags = "-O2 -ffast-math";
  ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_ERR_ARGUMENT);
  ck_assert_ptr_null(b);
  /* a missing compiler means the backend cannot run here */
  bo.compiler_flags = NULL;
  bo.compiler = "/nonexistent/leir-cc";
  ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_ERR_NO_DEVICE);
}
END_TEST

START_TEST(test_compiled_kernels_are_cached_on_disk) {
  char dir[] = "/tmp/leir-test-cache-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.cache_dir = dir;
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_OK);
  leir_verify_report *r = verify(b, SOFTMAX, SOFTMAX, 0);
  ck_assert_str_eq(leir_verdict_name(r->verdict), "EQUAL");
  leir_verify_report_free(r);
  leir_backend_free(b);
  /* exactly one object (both sides have the same source), no temporaries */
  DIR *d = opendir(dir);
  int objects = 0, others = 0;
  struct dirent *e;
  char one[512] = "";
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.' && (!e->d_name[1] || e->d_name[1] == '.')) continue;
    size_t n = strlen(e->d_name);
    if (n == 19 && strcmp(e->d_name + 16, ".so") == 0) {
      objects++;
      snprintf(one, sizeof one, "%s/%s", dir, e->d_name);
    } else {
      others++;
    }
  }
  closedir(d);
  ck_assert_int_eq(objects, 1);
  ck_assert_int_eq(others, 0);
  /* a fresh backend loads it: replace it by garbage and the load fails
   * over to a recompilation that still verifies */
  FILE *f = fopen(one, "wb");
  fputs("not an object", f);
  fclose(f);
  ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_OK);
  r = verify(b, SOFTMAX, SOFTMAX, 0);
  ck_assert_str_eq(leir_verdict_name(r->verdict), "EQUAL");
  leir_verify_report_free(r);
  leir_backend_free(b);
  unlink(one);
  rmdir(dir);
}
END_TEST

/* Kernels that crash, hang or allocate without limit, planted in the disk
 * cache under the candidate's key: the candidate's object then really does
 * it, in the sandbox, and the verdict says so. */
static const char evil_source[] =
    "#include <stdint.h>\n"
    "#include <stdlib.h>\n"
    "#include <string.h>\n"
    "int leir_kernel_main(void *const *bufs, void *rt) {\n"
    "  (void)bufs, (void)rt;\n"
    "#if MODE == 0\n"
    "  volatile int *p = (int *)(uintptr_t)16; *p = 1;\n"
    "#elif MODE == 1\n"
    "  for (volatile unsigned long i = 0;; i++) {}\n"
    "#else\n"
    "  for (;;) { char *q = malloc((size_t)64 << 20); if (!q) *(volatile int *)0 = 0; memset(q, 1, (size_t)64 << 20); }\n"
    "#endif\n"
    "  return 0;\n"
    "}\n";

static int count_objects(const char *dir, char *last, size_t cap) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len == 19 && strcmp(e->d_name + 16, ".so") == 0) {
      n++;
      if (last) snprintf(last, cap, "%s/%s", dir, e->d_name);
    }
  }
  closedir(d);
  return n;
}

START_TEST(test_crashing_hanging_and_hogging_kernels_become_verdicts) {
  char dir[] = "/tmp/leir-test-evil-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char src[256], cmd[1024], obj[512];
  snprintf(src, sizeof src, "%s/evil.c", dir);
  FILE *f = fopen(src, "w");
  fputs(evil_source, f);
  fclose(f);
  const char *candidate = "L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a}*2;];";
  const char *reference = "L^{4}_{a=0}[C^{f64,g}_{a}=A^{f64,g}_{a}+A^{f64,g}_{a};];";
  const char *expected[3] = {"RUNTIME_ERROR", "TIMEOUT", "RUNTIME_ERROR"};
  const char *words[3] = {"SIGSEGV", "time limit", ""};
#if defined(__SANITIZE_ADDRESS__)
  int modes = 2; /* no RLIMIT_AS under sanitizers: the hog would eat the machine */
#else
  int modes = 3;
#endif
  for (int mode = 0; mode < modes; mode++) {
    leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
    bo.cache_dir = dir;
    bo.timeout_s = 0.5;
    bo.memory_limit_bytes = (uint64_t)256 << 20;
    leir_backend *b = NULL;
    ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_OK);
    /* the candidate's object lands in the cache: replace it */
    leir_program *q = test_parse(candidate);
    leir_kernel *k = NULL;
    ck_assert_int_eq(leir_kernel_new(&k, b, q), LEIR_OK);
    leir_kernel_free(k);
    leir_program_free(q);
    leir_backend_free(b);
    ck_assert_int_eq(count_objects(dir, obj, sizeof obj), 1);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -DMODE=%d -o %s %s", mode, obj, src);
    ck_assert_int_eq(system(cmd), 0);
    /* a fresh backend loads the planted object for the candidate */
    ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_OK);
    leir_verify_report *r = verify(b, reference, candidate, 0);
    ck_assert_msg(strcmp(leir_verdict_name(r->verdict), expected[mode]) == 0 ||
                      (mode == 2 && r->verdict == LEIR_VERDICT_TIMEOUT),
                  "mode %d: %s (%s)", mode, leir_verdict_name(r->verdict), r->message);
    ck_assert_int_eq(r->program, 1);
    ck_assert_ptr_nonnull(strstr(r->message, words[mode]));
    leir_verify_report_free(r);
    leir_backend_free(b);
    /* clean the cache for the next mode */
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d))) {
      if (strlen(e->d_name) == 19 && strcmp(e->d_name + 16, ".so") == 0) {
        snprintf(obj, sizeof obj, "%s/%s", dir, e->d_name);
        unlink(obj);
      }
    }
    closedir(d);
  }
  unlink(src);
  ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* ---- lowering, timing -------------------------------------------------------- */

START_TEST(test_parallel_pragmas_only_on_independent_loops) {
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.threads = 4;
  bo.flags = LEIR_BACKEND_LOWER_ONLY;
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_OK);
  const char *legal = "P^{512}_{a=0}L^{512}_{c=0}[C^{f64,g}_{a,c}=A^{f64,g}_{a,c}*2;];";
  const char *reduction = "L^{512}_{c=0}P^{512}_{a=0}[C^{f64,g}_{c}=C^{f64,g}_{c}+A^{f64,g}_{a,c};];";
  const char *simd = "L^{512}_{a=0}V^{8}_{c=0}[C^{f64,g}_{a,c}=A^{f64,g}_{a,c}*2;];";
  char *out = NULL;
  leir_program *p = test_parse(legal);
  ck_assert_int_eq(leir_backend_lower(b, p, &out, NULL), LEIR_OK);
  ck_assert_ptr_nonnull(strstr(out, "#pragma omp parallel for"));
  leir_free(out);
  leir_program_free(p);
  p = test_parse(reduction);
  ck_assert_int_eq(leir_backend_lower(b, p, &out, NULL), LEIR_OK);
  ck_assert_ptr_null(strstr(out, "#pragma omp"));
  leir_free(out);
  leir_program_free(p);
  p = test_parse(simd);
  ck_assert_int_eq(leir_backend_lower(b, p, &out, NULL), LEIR_OK);
  ck_assert_ptr_nonnull(strstr(out, "#pragma omp simd"));
  leir_free(out);
  leir_program_free(p);
  leir_backend_free(b);
}
END_TEST

START_TEST(test_bench_times_programs_in_alternation) {
  leir_backend *b = open_backend("cpu");
  leir_program *ps[2] = {test_parse(MATMUL),
                         test_parse("B^{4}_{tx=0}L^{8}_{c=0}L^{6}_{a=0}[D^{f64,g}_{tx,a}=D^{f64,g}_"
                                    "{tx,a}+A^{f64,g}_{tx,c}*C^{f64,g}_{c,a};];")};
  leir_bench_options o = LEIR_BENCH_OPTIONS_INIT;
  o.min_seconds = 0.001;
  leir_timing t[2];
  ck_assert_int_eq(leir_bench(b, (const leir_program *const *)ps, 2, &o, t), LEIR_OK);
  for (int i = 0; i < 2; i++) {
    ck_assert_uint_ge(t[i].runs, 10);
    ck_assert(t[i].min_s > 0 && t[i].min_s <= t[i].median_s && t[i].median_s <= t[i].max_s);
    ck_assert_uint_eq(t[i].flops, 2 * 4 * 6 * 8);
    ck_assert_uint_eq(t[i].bytes, (4 * 8 + 8 * 6 + 4 * 6) * 8);
    ck_assert(t[i].gflops > 0);
  }
  ck_assert(t[0].speedup == 1.0);
  ck_assert(fabs(t[1].speedup - t[0].median_s / t[1].median_s) < 1e-12);
  leir_program_free(ps[0]);
  leir_program_free(ps[1]);
  leir_backend_free(b);
}
END_TEST

static Suite *cpu_suite(void) {
  Suite *s = suite_create("cpu");
  TCase *tc = tcase_create("corpus");
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, test_interp_and_cpu_agree_bitwise_on_every_small_source);
  suite_add_tcase(s, tc);
  tc = tcase_create("dtypes");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_interp_and_cpu_agree_on_every_dtype_and_operator);
  tcase_add_test(tc, test_comparison_chains_lower_linearly_and_agree);
  tcase_add_test(tc, test_parenthesized_conditions_compile_and_agree);
  tcase_add_test(tc, test_wide_max_and_min_lower_to_a_shallow_tree);
  tcase_add_test(tc, test_lowering_stops_at_the_size_limit_and_at_a_failed_write);
  suite_add_tcase(s, tc);
  tc = tcase_create("verdicts");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_mutations_get_the_right_verdict_on_cpu);
  tcase_add_test(tc, test_mutations_get_the_right_verdict_on_interp);
  tcase_add_test(tc, test_identical_programs_are_equal_on_every_seed);
  tcase_add_test(tc, test_hostile_programs_become_verdicts);
  tcase_add_test(tc, test_sandbox_survives_crashes_hangs_and_hogs);
  tcase_add_test(tc, test_compiler_rejection_is_a_compile_error_with_its_log);
  tcase_add_test(tc, test_compiled_kernels_are_cached_on_disk);
  tcase_add_test(tc, test_crashing_hanging_and_hogging_kernels_become_verdicts);
  tcase_add_test(tc, test_parallel_pragmas_only_on_independent_loops);
  tcase_add_test(tc, test_bench_times_programs_in_alternation);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(cpu_suite()); }
