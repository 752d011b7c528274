/* The CPU backend against the reference evaluator, mutation verdicts,
 * hostile programs and the sandbox, compilation errors and caches, timing. */
/* RTLD_NEXT (the fork interposer below) */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/wait.h>
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
  /* whole pooling programs run by the interpreter under ASan on a loaded
   * machine need more than the default 10 s a run */
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.timeout_s = 600;
  ck_assert_msg(leir_backend_open(&b, name, &bo) == LEIR_OK, "%s: %s", name,
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
  leir__c_options o = {false, false, 1, false, false, false, false};
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

static leir_verify_report *verify_class(leir_backend *b, const char *before, const char *after,
                                        uint32_t cls) {
  leir_program *p = test_parse(before), *q = test_parse(after);
  leir_verify_options o = LEIR_VERIFY_OPTIONS_INIT;
  o.candidate_class = cls;
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

/* Compiles a tiny shared object with the system compiler into dir; returns
 * its path (static buffer per call site: copy it). */
static const char *build_object(const char *dir, const char *name, const char *source) {
  static char so[600];
  char src[600], cmd[1400];
  snprintf(src, sizeof src, "%s/%s.c", dir, name);
  snprintf(so, sizeof so, "%s/%s.so", dir, name);
  FILE *f = fopen(src, "w");
  ck_assert_ptr_nonnull(f);
  fputs(source, f);
  fclose(f);
  const char *cc = getenv("CC");
  snprintf(cmd, sizeof cmd, "%s -O1 -shared -fPIC -o '%s' '%s'", cc && *cc ? cc : "cc", so, src);
  ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
  return so;
}

/* A request for one kernel with one 64-byte known buffer, nsets sets. */
static void exec_request(leir__sandbox *s, const char *path, uint64_t nsets) {
  size_t desc = 512;
  ck_assert_int_eq(leir__sandbox_map(s, desc + 64 * nsets), LEIR_OK);
  leir__runner_kernel *rk = (leir__runner_kernel *)(void *)s->data;
  leir__runner_buffer *rb = (leir__runner_buffer *)(void *)(s->data + 64);
  memset(rb, 0, sizeof *rb);
  rb->known = 1;
  rb->offset = desc;
  rb->bytes = 64;
  strcpy((char *)s->data + 128, path);
  rk->path_off = 128;
  rk->buffers_off = 64;
  rk->nbuffers = 1;
  s->shared->req.op = LEIR__REQ_EXEC;
  s->shared->req.nkernels = 1;
  s->shared->req.threads = 1;
  s->shared->req.nsets = nsets;
  s->shared->req.per_set = 64;
}

#define KERNEL_HEAD "#include <signal.h>\n#include <stdlib.h>\n#include <string.h>\n" \
                    "#include <unistd.h>\nint leir_kernel_main(void *const *b, void *rt);\n" \
                    "int leir_kernel_main(void *const *b, void *rt) { (void)rt; (void)b;\n"

START_TEST(test_sandbox_survives_crashes_hangs_and_hogs) {
  char dir[] = "/tmp/leir-test-sandbox-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char crash[600], spin[600], hog[600], work[600];
  strcpy(crash, build_object(dir, "crash", KERNEL_HEAD "raise(SIGSEGV); return 0; }\n"));
  strcpy(spin,
         build_object(dir, "spin", KERNEL_HEAD "for (volatile unsigned long i = 0;; i++) {} }\n"));
  strcpy(hog, build_object(dir, "hog", KERNEL_HEAD
                           "for (;;) { char *p = malloc((size_t)64 << 20); if (!p) abort();"
                           " memset(p, 1, (size_t)64 << 20); } }\n"));
  strcpy(work, build_object(dir, "work", KERNEL_HEAD
                            "usleep(40000); memcpy(b[0], \"done\", 5); return 0; }\n"));
  leir__runner r;
  ck_assert_int_eq(leir__runner_init(&r, NULL), LEIR_OK);
  leir__sandbox_limits lim = {0.1, (uint64_t)512 << 20, 2.0};
  leir__sandbox s;

  exec_request(&s, crash, 1);
  ck_assert_int_eq(leir__sandbox_run(&r, &s, &lim), LEIR_ERR_RUNTIME);
  ck_assert_ptr_nonnull(strstr(leir_error_last()->message, "SIGSEGV"));
  ck_assert_int_eq(r.pid, 0); /* the crashed runner is gone */
  leir__sandbox_unmap(&s);

  exec_request(&s, spin, 1);
  double t0 = leir__now();
  ck_assert_int_eq(leir__sandbox_run(&r, &s, &lim), LEIR_ERR_TIMEOUT);
  ck_assert(leir__now() - t0 < 2.0);
  leir__sandbox_unmap(&s);

  /* the hog either sees its malloc fail (address-space limit: abort) or is
   * killed; either way the caller gets a status */
  exec_request(&s, hog, 1);
  leir_status st = leir__sandbox_run(&r, &s, &lim);
  ck_assert(st == LEIR_ERR_RUNTIME || st == LEIR_ERR_TIMEOUT);
  leir__sandbox_unmap(&s);

  /* progress extends the deadline: 5 sets x 40 ms (200 ms) pass a 100 ms
   * limit; and the runner stays up between requests */
  exec_request(&s, work, 5);
  ck_assert_int_eq(leir__sandbox_run(&r, &s, &lim), LEIR_OK);
  for (int set = 0; set < 5; set++) ck_assert_str_eq((char *)s.data + 512 + 64 * set, "done");
  pid_t pid = r.pid;
  ck_assert_int_gt(pid, 0);
  leir__sandbox_unmap(&s);
  exec_request(&s, work, 1);
  ck_assert_int_eq(leir__sandbox_run(&r, &s, &lim), LEIR_OK);
  ck_assert_int_eq(r.pid, pid);
  leir__sandbox_unmap(&s);

  /* a missing object is a status from a live runner */
  exec_request(&s, "/nonexistent/kernel.so", 1);
  ck_assert_int_eq(leir__sandbox_run(&r, &s, &lim), LEIR_ERR_RUNTIME);
  ck_assert_ptr_nonnull(strstr(leir_error_last()->message, "cannot load the compiled kernel"));
  ck_assert_int_eq(r.pid, pid);
  leir__sandbox_unmap(&s);

  /* a runner killed from outside while idle is replaced, not blamed on
   * the next kernel */
  kill(pid, SIGKILL);
  usleep(100000);
  exec_request(&s, work, 1);
  ck_assert_int_eq(leir__sandbox_run(&r, &s, &lim), LEIR_OK);
  ck_assert_int_ne(r.pid, pid);
  pid = r.pid;
  leir__sandbox_unmap(&s);

  leir__runner_free(&r);
  ck_assert_int_eq(kill(pid, 0), -1); /* stopped and reaped */
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- compilation ------------------------------------------------------------- */

START_TEST(test_compiler_rejection_is_a_compile_error_with_its_log) {
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.compiler_flags = "-O1 -Werror=no-such-warning-for-leir";
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_OK);
  leir_verify_report *r = verify(b, SUM, SUM, 0);
  ck_assert_str_eq(leir_verdict_name(r->verdict), "COMPILE_ERROR");
  ck_assert_ptr_nonnull(strstr(r->log, "no-such-warning-for-leir"));
  leir_verify_report_free(r);
  leir_program *p = test_parse(SUM);
  leir_kernel *k = NULL;
  ck_assert_int_eq(leir_kernel_new(&k, b, p), LEIR_ERR_COMPILE);
  ck_assert_ptr_nonnull(strstr(leir_backend_compile_log(b), "no-such-warning-for-leir"));
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
    /* planted as a well-formed entry of the candidate's key (the cache
     * checks keys and checksums, not intentions) */
    char evil[600];
    snprintf(evil, sizeof evil, "%s/evil.so", dir);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -DMODE=%d -o %s %s", mode, evil, src);
    ck_assert_int_eq(system(cmd), 0);
    uint64_t key = strtoull(strrchr(obj, '/') + 1, NULL, 16);
    leir__cache_store_file(dir, key, ".so", evil);
    unlink(evil);
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

/* ---- safety: a threaded host, the compiler, the cache (issues 9.5, 11.3, 11.5,
 * 11.8) ------------------------------------------------------------------------ */

/* fork() of this executable (the library is linked in statically, so its
 * calls land here too): counted, then the C library's. */
static volatile int forks_seen;
pid_t fork(void) {
  __atomic_add_fetch(&forks_seen, 1, __ATOMIC_SEQ_CST);
  pid_t (*real)(void);
  void *sym = dlsym(RTLD_NEXT, "fork");
  memcpy(&real, &sym, sizeof real);
  return real ? real() : -1;
}

static volatile int host_stop;

/* What a busy host does on other threads: load and unload libraries (the
 * dynamic loader's lock) and allocate (malloc's locks). */
static void *host_thread(void *arg) {
  static const char *const libs[] = {"libz.so.1",     "libbz2.so.1",  "liblzma.so.5",
                                     "libexpat.so.1", "libffi.so.8",  "libcrypt.so.1",
                                     "libcrypto.so.3", "libssl.so.3", "libm.so.6",
                                     "libxxhash.so.0", NULL};
  unsigned seed = (unsigned)(uintptr_t)arg;
  long loads = 0;
  while (!__atomic_load_n(&host_stop, __ATOMIC_SEQ_CST)) {
    for (size_t i = 0; libs[i]; i++) {
      void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
      if (h) {
        loads++;
        dlclose(h);
      }
      size_t n = 1 + (size_t)rand_r(&seed) % 65536;
      char *p = malloc(n);
      if (p) memset(p, 1, n);
      free(p);
    }
  }
  return (void *)(intptr_t)loads;
}

START_TEST(test_verification_is_safe_in_a_threaded_host) {
  leir_backend *b = open_backend("cpu");
  pthread_t th[2];
  __atomic_store_n(&host_stop, 0, __ATOMIC_SEQ_CST);
  for (int t = 0; t < 2; t++)
    ck_assert_int_eq(pthread_create(&th[t], NULL, host_thread, (void *)(uintptr_t)(t + 1)), 0);
  forks_seen = 0;
  int counts[LEIR_VERDICT_COUNT] = {0};
  char last[512] = "";
  for (int i = 0; i < 100; i++) {
    leir_verify_report *r = verify(b, SUM, SUM, 0);
    counts[r->verdict]++;
    if (r->verdict != LEIR_VERDICT_EQUAL)
      snprintf(last, sizeof last, "%s: %s", leir_verdict_name(r->verdict), r->message);
    leir_verify_report_free(r);
  }
  int forks = forks_seen;
  __atomic_store_n(&host_stop, 1, __ATOMIC_SEQ_CST);
  for (int t = 0; t < 2; t++) {
    void *loads;
    pthread_join(th[t], &loads);
    ck_assert_msg((intptr_t)loads > 0, "host thread %d loaded no library", t);
  }
  ck_assert_msg(counts[LEIR_VERDICT_EQUAL] == 100, "%d of 100 EQUAL; last other: %s",
                counts[LEIR_VERDICT_EQUAL], last);
  ck_assert_int_eq(forks, 0); /* the library never forks */
  leir_backend_free(b);
}
END_TEST

static bool file_exists(const char *path) {
  struct stat sb;
  return lstat(path, &sb) == 0;
}

static int dir_entries(const char *dir) {
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

/* A "compiler" that sleeps in a child pass, leaves a temporary in $TMPDIR
 * like cc's cc*.s, and reports its limits and $TMPDIR. */
static const char slow_cc[] =
    "#!/bin/sh\n"
    "case \"$1\" in --version) echo 'slowcc 1.0'; exit 0;; esac\n"
    "out=$(dirname \"$0\")\n"
    "echo \"$(ulimit -v) $(ulimit -t)\" > \"$out/limits.txt\"\n"
    "echo \"$TMPDIR\" > \"$out/tmpdir.txt\"\n"
    "echo 'temporary' > \"$TMPDIR/cc12345.s\"\n"
    "sleep 60 &\n"
    "echo $! > \"$out/child.pid\"\n"
    "wait\n";

/* State of a process from /proc ('?' when it is gone). */
static char process_state(long pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return '?';
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *close_paren = strrchr(buf, ')');
  return close_paren && close_paren[1] == ' ' ? close_paren[2] : '?';
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  static char buf[4][512];
  static int next;
  char *b = buf[next++ % 4];
  size_t n = fread(b, 1, 511, f);
  fclose(f);
  b[n] = '\0';
  while (n && b[n - 1] == '\n') b[--n] = '\0';
  return b;
}

START_TEST(test_compiler_timeout_kills_its_process_group_and_cleans_up) {
  char tools[] = "/tmp/leir-test-slowcc-XXXXXX", tmp[] = "/tmp/leir-test-tmpdir-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(tools));
  ck_assert_ptr_nonnull(mkdtemp(tmp));
  setenv("TMPDIR", tmp, 1);
  char cc[600], path[700];
  snprintf(cc, sizeof cc, "%s/slowcc", tools);
  FILE *f = fopen(cc, "w");
  fputs(slow_cc, f);
  fclose(f);
  chmod(cc, 0755);
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.compiler = cc;
  bo.compile_timeout_s = 1.0;
  bo.memory_limit_bytes = (uint64_t)1 << 30;
  bo.cache_dir = "";
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_OK);
  leir_program *p = test_parse(SUM);
  leir_kernel *k = NULL;
  double t0 = leir__now();
  ck_assert_int_eq(leir_kernel_new(&k, b, p), LEIR_ERR_TIMEOUT);
  ck_assert(leir__now() - t0 < 10.0);
  /* a message that says what happened */
  const leir_error *e = leir_error_last();
  ck_assert_int_eq(e->status, LEIR_ERR_TIMEOUT);
  ck_assert_msg(strstr(e->message, "time limit"), "message: '%s'", e->message);
  /* the compiler ran under its limits from its first instruction */
  snprintf(path, sizeof path, "%s/limits.txt", tools);
  char *limits = slurp(path);
  ck_assert_ptr_nonnull(limits);
  ck_assert_str_eq(limits, "1048576 2");
  /* with TMPDIR = its private directory inside ours */
  snprintf(path, sizeof path, "%s/tmpdir.txt", tools);
  char *seen = slurp(path);
  ck_assert_ptr_nonnull(seen);
  ck_assert_msg(strncmp(seen, tmp, strlen(tmp)) == 0 && strlen(seen) > strlen(tmp) + 1,
                "compiler TMPDIR %s", seen);
  /* the pass it started is gone (killed with its process group) */
  snprintf(path, sizeof path, "%s/child.pid", tools);
  char *child = slurp(path);
  ck_assert_ptr_nonnull(child);
  long pid = strtol(child, NULL, 10);
  ck_assert_int_gt(pid, 0);
  char state = process_state(pid);
  ck_assert_msg(state == '?' || state == 'Z', "the compiler's child %ld is still running (%c)",
                pid, state);
  /* and nothing is left in $TMPDIR: not its directory, not its temporary */
  ck_assert_msg(dir_entries(tmp) == 0, "%d entries left in %s", dir_entries(tmp), tmp);
  leir_program_free(p);
  leir_backend_free(b);
  ck_assert_int_eq(dir_entries(tmp), 0);
  snprintf(path, sizeof path, "rm -rf '%s' '%s'", tools, tmp);
  ck_assert_int_eq(system(path), 0);
}
END_TEST

START_TEST(test_nested_full_unrolls_are_bounded) {
  /* issue 11.3's trigger: 64 x 64 x 64 copies of the body would keep the
   * compiler busy for minutes */
  const char *u3 = "U^{64}_{a=0}U^{64}_{c=0}U^{64}_{d=0}[C^{f64,g}_{a,c,d}=A^{f64,g}_{a,c,d}*2;];";
  const char *l3 = "L^{64}_{a=0}L^{64}_{c=0}L^{64}_{d=0}[C^{f64,g}_{a,c,d}=A^{f64,g}_{a,c,d}*2;];";
  leir_backend *b = open_backend("cpu");
  leir_program *p = test_parse(u3);
  char *src = NULL;
  ck_assert_int_eq(leir_backend_lower(b, p, &src, NULL), LEIR_OK);
  /* the factors along the nest multiply to at most 1024 */
  uint64_t product = 1;
  for (const char *q = src; (q = strstr(q, "LEIR_UNROLL(")); q++) {
    if (q[12] < '0' || q[12] > '9') continue; /* the macro's definition */
    product *= strtoull(q + 12, NULL, 10);
  }
  ck_assert_uint_le(product, 1024);
  ck_assert_uint_ge(product, 64);
  leir_free(src);
  leir_program_free(p);
  double t0 = leir__now();
  expect(b, l3, u3, LEIR_VERDICT_EQUAL, 0);
  ck_assert_msg(leir__now() - t0 < 60.0, "%.1f s", leir__now() - t0);
  leir_backend_free(b);
}
END_TEST

START_TEST(test_thread_counts_are_bounded) {
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.threads = 4096;
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_ERR_ARGUMENT);
  ck_assert_ptr_null(b);
  ck_assert_ptr_nonnull(strstr(leir_error_last()->message, "at most 256"));
  /* lowering only runs nothing: any count the registry accepts */
  bo.flags = LEIR_BACKEND_LOWER_ONLY;
  ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_OK);
  leir_backend_free(b);
  /* 256 threads run */
  bo.flags = 0;
  bo.threads = 256;
  ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_OK);
  expect(b, SUM, SUM, LEIR_VERDICT_EQUAL, 0);
  leir_backend_free(b);
#if !defined(__SANITIZE_ADDRESS__)
  /* a thread pool that does not fit the memory limit: a RUNTIME_ERROR that
   * quotes the OpenMP runtime (its stderr), not a mysterious crash */
  const char *par = "P^{64}_{a=0}L^{1024}_{c=0}[C^{f64,g}_{a}=C^{f64,g}_{a}+A^{f64,g}_{a,c};];";
  bo.memory_limit_bytes = (uint64_t)200 << 20;
  ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_OK);
  leir_program *pp = NULL;
  ck_assert_int_eq(leir_program_parse(&pp, par, strlen(par), NULL), LEIR_OK);
  leir_kernel *k = NULL;
  ck_assert_int_eq(leir_kernel_new(&k, b, pp), LEIR_OK);
  ck_assert_uint_eq(leir_kernel_buffer_count(k), 2);
  double *bufs[2] = {calloc(64 * 1024, sizeof(double)), calloc(64 * 1024, sizeof(double))};
  ck_assert_int_eq(leir_kernel_run(k, (void *const *)bufs, 2), LEIR_ERR_RUNTIME);
  const char *msg = leir_error_last()->message;
  ck_assert_msg(strstr(msg, "(it wrote: ") && !strstr(msg, "wrote: ;"), "%s", msg);
  free(bufs[0]);
  free(bufs[1]);
  leir_kernel_free(k);
  leir_program_free(pp);
  /* verification runs its kernels on one thread (a verdict never depends
   * on the thread count): the same program verifies */
  leir_verify_report *r = verify(b, par, par, 0);
  ck_assert_msg(r->verdict == LEIR_VERDICT_EQUAL, "%s: %s", leir_verdict_name(r->verdict),
                r->message);
  leir_verify_report_free(r);
  leir_backend_free(b);
#endif
}
END_TEST

START_TEST(test_runner_is_found_or_the_backend_says_why) {
  setenv("LEIR_RUNNER", "/nonexistent/leir-runner", 1);
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "cpu", NULL), LEIR_ERR_NO_DEVICE);
  ck_assert_ptr_null(b);
  ck_assert_ptr_nonnull(strstr(leir_error_last()->message, "LEIR_RUNNER"));
  /* lowering needs no runner */
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.flags = LEIR_BACKEND_LOWER_ONLY;
  ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_OK);
  leir_backend_free(b);
  /* the build tree's runner (what meson test uses when LEIR_RUNNER is unset) */
  unsetenv("LEIR_RUNNER");
  b = open_backend("cpu");
  expect(b, SUM, SUM, LEIR_VERDICT_EQUAL, 0);
  leir_backend_free(b);
}
END_TEST

/* leir_backend_options.runner names the program (before $LEIR_RUNNER and
 * the search): a path that is no executable file is refused with the path
 * in the message, the string is copied, an older struct's bytes past its
 * size are not read, and the named program is the one that runs. */
START_TEST(test_runner_option_names_the_program) {
  const char *real = getenv("LEIR_TEST_RUNNER"); /* tests/meson.build: the built runner */
  ck_assert_ptr_nonnull(real);
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.timeout_s = 600;
  leir_backend *b = NULL;
  static const char *const bogus[] = {"/nonexistent/leir-runner-option", "/tmp"};
  for (size_t i = 0; i < 2; i++) {
    bo.runner = bogus[i];
    ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_ERR_NO_DEVICE);
    ck_assert_ptr_null(b);
    const char *msg = leir_error_last()->message;
    ck_assert_msg(strstr(msg, "runner option") && strstr(msg, bogus[i]) &&
                      strstr(msg, "not an executable file"),
                  "%s", msg);
  }
  /* a caller built before the field: its bytes are not read (the search
   * finds the build tree's runner) */
  bo.size = offsetof(leir_backend_options, runner);
  ck_assert_msg(leir_backend_open(&b, "cpu", &bo) == LEIR_OK, "%s", leir_error_last()->message);
  ck_assert_ptr_null(b->opts.runner);
  leir_backend_free(b);
  bo.size = sizeof bo;
  /* before $LEIR_RUNNER, and copied */
  setenv("LEIR_RUNNER", "/nonexistent/leir-runner", 1);
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s", real);
  bo.runner = path;
  ck_assert_msg(leir_backend_open(&b, "cpu", &bo) == LEIR_OK, "%s", leir_error_last()->message);
  memset(path, 'x', 16);
  ck_assert_str_eq(b->opts.runner, real);
  expect(b, SUM, SUM, LEIR_VERDICT_EQUAL, 0);
  leir_backend_free(b);
  unsetenv("LEIR_RUNNER");
  /* the named program is the one that runs: one that is no runner fails */
  char dir[] = "/tmp/leir-test-runner-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char fake[64];
  snprintf(fake, sizeof fake, "%s/fake-runner", dir);
  FILE *f = fopen(fake, "w");
  ck_assert_ptr_nonnull(f);
  fputs("#!/bin/sh\nexit 3\n", f);
  fclose(f);
  ck_assert_int_eq(chmod(fake, 0700), 0);
  bo.runner = fake;
  /* (opening checks the compiler, which is started through the runner) */
  ck_assert_msg(leir_backend_open(&b, "cpu", &bo) != LEIR_OK, "opened through %s", fake);
  ck_assert_ptr_null(b);
  unlink(fake);
  rmdir(dir);
}
END_TEST

/* A host that ignores SIGCHLD has its children reaped by the kernel, so the
 * library cannot wait for the compiler or the runner: the backend still
 * opens (the compiler's identity), compiles (no cache: every kernel is
 * built here) and judges, and a mutant is still caught. */
START_TEST(test_cpu_works_for_a_host_that_ignores_sigchld) {
  struct sigaction ign, old;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  ck_assert_int_eq(sigaction(SIGCHLD, &ign, &old), 0);
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.cache_dir = "";
  bo.timeout_s = 600;
  leir_backend *b = NULL;
  ck_assert_msg(leir_backend_open(&b, "cpu", &bo) == LEIR_OK, "%s", leir_error_last()->message);
  expect(b, MATMUL,
         "B^{4}_{tx=0}L^{8}_{c=0}L^{6}_{a=0}[D^{f64,g}_{tx,a}=D^{f64,g}_{tx,a}+A^{f64,g}_{tx,c}"
         "*C^{f64,g}_{c,a};];",
         LEIR_VERDICT_EQUAL, 0);
  expect(b, SUM, "B^{4}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a}*2;];",
         LEIR_VERDICT_MISMATCH, 0);
  leir_backend_free(b);
  /* SA_NOCLDWAIT is the same thing said another way */
  ign.sa_handler = SIG_DFL;
  ign.sa_flags = SA_NOCLDWAIT;
  ck_assert_int_eq(sigaction(SIGCHLD, &ign, NULL), 0);
  ck_assert_msg(leir_backend_open(&b, "cpu", &bo) == LEIR_OK, "%s", leir_error_last()->message);
  expect(b, SUM, SUM, LEIR_VERDICT_EQUAL, 0);
  leir_backend_free(b);
  ck_assert_int_eq(sigaction(SIGCHLD, &old, NULL), 0);
}
END_TEST

START_TEST(test_only_flags_that_keep_results_are_accepted) {
  static const char *const refused[] = {
      "-mfpmath=387", "-mfpmath=sse,387", "-ffast-math", "-Ofast", "-funsafe-math-optimizations",
      "-ffp-contract=fast", "-ffp-contract=on", "-freciprocal-math", "-fassociative-math",
      "-mno-sse", "-mno-sse2", "-fno-signed-zeros", "-ffinite-math-only", "-fno-trapping-math",
      "-m32", "-mpc32", "-mrecip", "-mdaz-ftz", "-fexcess-precision=fast", "-ffloat-store",
      "-Dexp=expf", "-UNDEBUG", "-I/tmp", "-include", "-std=gnu11", "/tmp/extra.c",
      "-fcx-limited-range", "-fno-honor-nans", "-flto-and-anything-unknown", "-Wp,-Dexp=expf",
      "-Wl,--wrap=exp", "-Wa,-mfoo", "-Xlinker", NULL};
  for (size_t i = 0; refused[i]; i++) {
    char flags[128];
    snprintf(flags, sizeof flags, "-O2 %s", refused[i]);
    leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
    bo.compiler_flags = flags;
    leir_backend *b = NULL;
    ck_assert_msg(leir_backend_open(&b, "cpu", &bo) == LEIR_ERR_ARGUMENT, "%s accepted",
                  refused[i]);
    ck_assert_ptr_null(b);
    ck_assert_str_eq(leir_error_last()->rule, "backend.flags");
    ck_assert_ptr_nonnull(strstr(leir_error_last()->message, refused[i]));
  }
  static const char *const accepted[] = {
      "-O3 -march=native -fopenmp", "-O1", "-Os -mtune=generic", "-O2 -mavx2 -mfma -g",
      "-O2 -fno-math-errno -funroll-loops -Wall", "-O3 -ffp-contract=off -fno-fast-math", NULL};
  for (size_t i = 0; accepted[i]; i++) {
    leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
    bo.compiler_flags = accepted[i];
    leir_backend *b = NULL;
    ck_assert_msg(leir_backend_open(&b, "cpu", &bo) == LEIR_OK, "%s: %s", accepted[i],
                  leir_error_last()->message);
    leir_backend_free(b);
  }
}
END_TEST

/* LEIR_BACKEND_FP_CONTRACT: a*b + d with a = b = 1 + 2^-12 and
 * d = -(1 + 2^-11) is 0 rounded twice (the product rounds to 1 + 2^-11)
 * and 2^-24 fused. Without the flag the cpu backend agrees with the
 * interpreter; with it, the product is fused, in a V loop and a plain
 * one; the two objects share one disk cache and never answer for each
 * other; the search database tells the configurations apart; and a
 * reordered matmul still verifies EQUAL on the contracting backend. */
static const char fma_program[] =
    "inputs:\n"
    "  A: {dtype: f32, shape: [32]}\n"
    "  E: {dtype: f32, shape: [32]}\n"
    "  D: {dtype: f32, shape: [32]}\n"
    "outputs:\n"
    "  C: {dtype: f32, shape: [32]}\n"
    "leir: |-\n"
    "  L^{2}_{b=0}V^{16}_{a=0}[C^{f32,g}_{b*16+a}=A^{f32,g}_{b*16+a}*E^{f32,g}_{b*16+a}+"
    "D^{f32,g}_{b*16+a};];L^{1}_{z=0}[C^{f32,g}_{31}=D^{f32,g}_{31}+A^{f32,g}_{31}*E^{f32,g}_{31};];\n";

static void run_fma(leir_backend *b, const leir_program *p, float *c) {
  float a[32], d[32];
  for (int i = 0; i < 32; i++) a[i] = 1.0f + 0x1p-12f, d[i] = -(1.0f + 0x1p-11f), c[i] = 99;
  void *bufs[4] = {a, a, d, c};
  ck_assert_msg(leir_run(b, p, bufs, 4) == LEIR_OK, "%s", leir_error_last()->message);
}

/* Whether the kernels' code can fuse: the host has FMA instructions and the
 * flags the backend compiles with ($LEIR_CFLAGS, else -march=native) target
 * them (CI runs this suite with -march=x86-64-v2 too, which has none). */
static bool kernels_can_fuse(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("fma")) return false;
  const char *flags = getenv("LEIR_CFLAGS");
  const char *cc = getenv("CC");
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s %s -dM -E -x c /dev/null 2>/dev/null", cc && *cc ? cc : "cc",
           flags && *flags ? flags : "-march=native");
  FILE *f = popen(cmd, "r");
  ck_assert_ptr_nonnull(f);
  char line[512];
  bool fma = false;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "#define __FMA__ ", 16) == 0) fma = true;
  pclose(f);
  return fma;
#else
  return true; /* AArch64 and the others the backend targets have fused multiply-add */
#endif
}

START_TEST(test_fp_contract_fuses_only_when_asked) {
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse_yaml(&p, fma_program, strlen(fma_program), NULL), LEIR_OK);
  char dir[] = "/tmp/leir-test-fma-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.cache_dir = dir;
  bo.threads = 1;
  leir_backend *plain = NULL, *fused = NULL, *interp = open_backend("interp");
  ck_assert_int_eq(leir_backend_open(&plain, "cpu", &bo), LEIR_OK);
  bo.flags |= LEIR_BACKEND_FP_CONTRACT;
  ck_assert_int_eq(leir_backend_open(&fused, "cpu", &bo), LEIR_OK);
  float ci[32], cp[32], cf[32], cf2[32];
  run_fma(interp, p, ci);
  run_fma(plain, p, cp);
  run_fma(fused, p, cf);
  for (int i = 0; i < 32; i++) {
    ck_assert_float_eq(ci[i], 0.0f);
    ck_assert_float_eq(cp[i], 0.0f);
  }
  if (kernels_can_fuse()) {
    for (int i = 0; i < 32; i++) ck_assert_msg(cf[i] == 0x1p-24f, "C[%d] = %a, not fused", i, cf[i]);
  } else {
    fprintf(stderr, "test_fp_contract_fuses_only_when_asked: the kernels' target has no FMA "
                    "instruction (this CPU or the flags); fusion itself not checked\n");
    for (int i = 0; i < 32; i++) ck_assert_float_eq(cf[i], 0.0f); /* nothing to fuse with */
  }
  /* a fresh unfused backend on the same disk cache compiles its own object */
  leir_backend_free(plain);
  bo.flags &= ~LEIR_BACKEND_FP_CONTRACT;
  ck_assert_int_eq(leir_backend_open(&plain, "cpu", &bo), LEIR_OK);
  run_fma(plain, p, cp);
  ck_assert_float_eq(cp[0], 0.0f);
  leir_backend *fused2 = NULL;
  bo.flags |= LEIR_BACKEND_FP_CONTRACT;
  ck_assert_int_eq(leir_backend_open(&fused2, "cpu", &bo), LEIR_OK);
  run_fma(fused2, p, cf2);
  ck_assert_mem_eq(cf, cf2, sizeof cf);
  /* the measurement database's backend column */
  char kp[128], kf[128], ki[128];
  leir__backend_key(plain, kp, sizeof kp);
  leir__backend_key(fused, kf, sizeof kf);
  leir__backend_key(interp, ki, sizeof ki);
  ck_assert_str_eq(ki, "interp");
  ck_assert_ptr_nonnull(strstr(kp, "cpu threads=1 cc="));
  ck_assert_ptr_nonnull(strstr(kp, " gen=")); /* the code generation revision */
  ck_assert_ptr_null(strstr(kp, "fma"));
  ck_assert_int_eq(strncmp(kp, kf, strlen(kp)), 0);
  ck_assert_str_eq(kf + strlen(kp), " fma");
  /* Same operations per element, but which products the compiler fuses
   * depends on the loop structure, the instruction set and the compiler
   * (GCC 12 fused the vector loop and not the scalar reduction on a Zen 4
   * host): on every host a reordering is EQUAL or CLOSE, never MISMATCH,
   * whatever the class, because float outputs of a contracting backend are
   * judged against the f64 truth. */
  static const char *const mm_naive =
      "L^{16}_{a=0}L^{16}_{c=0}L^{32}_{d=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*"
      "C^{f32,g}_{d,c};];";
  static const char *const mm_reordered =
      "L^{16}_{a=0}L^{32}_{d=0}V^{16}_{c=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*"
      "C^{f32,g}_{d,c};];";
  static const struct {
    uint32_t cls;
    const char *rule;
  } by_class[] = {{LEIR_VERIFY_CLASS_EXACT, "truth"},
                  {LEIR_VERIFY_CLASS_ANY, "truth-or-tolerance"},
                  {LEIR_VERIFY_CLASS_REASSOCIATING, "truth"}};
  for (size_t i = 0; i < sizeof by_class / sizeof by_class[0]; i++) {
    leir_verify_report *r = verify_class(fused, mm_naive, mm_reordered, by_class[i].cls);
    ck_assert_msg(leir_verdict_passes(r->verdict), "class %u: %s: %s", by_class[i].cls,
                  leir_verdict_name(r->verdict), r->message);
    ck_assert_str_eq(r->judged_by, by_class[i].rule);
    leir_verify_report_free(r);
  }
  /* the unfused backend still demands bits of an exact step */
  leir_verify_report *r = verify_class(plain, mm_naive, mm_reordered, LEIR_VERIFY_CLASS_EXACT);
  ck_assert_str_eq(leir_verdict_name(r->verdict), "EQUAL");
  ck_assert_str_eq(r->judged_by, "bitwise");
  leir_verify_report_free(r);
  /* and the truth still catches a wrong program on the contracting backend */
  r = verify_class(fused, mm_naive,
             "L^{16}_{a=0}L^{32}_{d=0}V^{16}_{c=0}[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*"
             "C^{f32,g}_{d,c}*1.0001;];",
             LEIR_VERIFY_CLASS_EXACT);
  ck_assert_str_eq(leir_verdict_name(r->verdict), "MISMATCH");
  leir_verify_report_free(r);
  leir_backend_free(fused2);
  leir_backend_free(fused);
  leir_backend_free(plain);
  leir_backend_free(interp);
  leir_program_free(p);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- division by a loop invariant (lower_c.c, rcp_open) ---- */

static const char rcp_program[] =
    "inputs:\n"
    "  A: {dtype: f32, shape: [256, 1024]}\n"
    "  D: {dtype: f32, shape: [256]}\n"
    "outputs:\n"
    "  C: {dtype: f32, shape: [256, 1024]}\n"
    "leir: |-\n"
    "  P^{256}_{b=0}V^{1024}_{a=0}[C^{f32,g}_{b,a}=A^{f32,g}_{b,a}/D^{f32,g}_{b};];\n";

static uint64_t rcp_rng(uint64_t *s) {
  *s += 0x9e3779b97f4a7c15u;
  uint64_t z = *s;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/* A float of random bits (NaN payloads excluded), or, one time in eight,
 * a special value: +-0, +-inf, the extremes of the normal and subnormal
 * ranges, 1. */
static float rcp_float(uint64_t *s) {
  static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                     0x00000001u, 0x807fffffu, 0x00800000u, 0x7f7fffffu,
                                     0x3f800000u, 0xbf800001u};
  uint64_t r = rcp_rng(s);
  uint32_t u = (uint32_t)r;
  if ((r >> 32) % 8 == 0) u = special[(r >> 35) % (sizeof special / sizeof *special)];
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) u &= 0xff800000u; /* NaN -> inf */
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* x / y with y fixed in the innermost loop is computed as x times the
 * double reciprocal of y: bitwise the quotient the interpreter computes, on
 * random bit patterns over the whole float range (normal, subnormal and
 * overflowing quotients, zeros and infinities), and only where the divisor
 * is fixed in the loop. */
START_TEST(test_division_by_a_loop_invariant_is_exact) {
  leir_program *p = NULL;
  ck_assert_int_eq(leir_program_parse_yaml(&p, rcp_program, strlen(rcp_program), NULL), LEIR_OK);
  leir_backend *interp = open_backend("interp"), *cpu = open_backend("cpu");
  size_t len = 0;
  char *c = NULL;
  ck_assert_int_eq(leir_backend_lower(cpu, p, &c, &len), LEIR_OK);
  ck_assert_msg(strstr(c, "const double leir_q") && strstr(c, " * leir_q"), "%s", c);
  leir_free(c);
  leir_kernel *ki = NULL, *kc = NULL;
  ck_assert_int_eq(leir_kernel_new(&ki, interp, p), LEIR_OK);
  ck_assert_int_eq(leir_kernel_new(&kc, cpu, p), LEIR_OK);
  const size_t n = 256 * 1024;
  float *a = malloc(n * 4), *d = malloc(256 * 4), *ci = malloc(n * 4), *cc = malloc(n * 4);
  uint64_t seed = 42;
  size_t differ = 0, nan_where_nan = 0;
  for (int round = 0; round < 4; round++) {
    for (size_t i = 0; i < n; i++) a[i] = rcp_float(&seed);
    for (size_t i = 0; i < 256; i++) d[i] = rcp_float(&seed);
    /* rows whose divisor sits next to the numerators' scale: more normal,
     * subnormal and overflowing quotients than random exponents give */
    for (size_t i = 0; i < 128; i++) {
      uint32_t u, v;
      memcpy(&u, &a[i * 1024 + 7], 4);
      memcpy(&v, &d[i], 4);
      v = (v & 0x807fffffu) | (u & 0x7f800000u);
      if ((v & 0x7f800000u) == 0x7f800000u) v &= 0xff800000u;
      memcpy(&d[i], &v, 4);
    }
    void *bi[3] = {a, d, ci}, *bc[3] = {a, d, cc};
    ck_assert_int_eq(leir_kernel_run(ki, bi, 3), LEIR_OK);
    ck_assert_int_eq(leir_kernel_run(kc, bc, 3), LEIR_OK);
    for (size_t i = 0; i < n; i++) {
      if (isnan(ci[i]) && isnan(cc[i])) {
        nan_where_nan++;
        continue;
      }
      if (memcmp(&ci[i], &cc[i], 4) != 0 && differ++ < 5)
        fprintf(stderr, "%a / %a: interp %a, cpu %a\n", a[i], d[i / 1024], ci[i], cc[i]);
    }
  }
  ck_assert_uint_eq(differ, 0);
  ck_assert_uint_gt(nan_where_nan, 0); /* 0/0 and inf/inf were met */
  free(a);
  free(d);
  free(ci);
  free(cc);
  leir_kernel_free(ki);
  leir_kernel_free(kc);
  /* not hoisted: a divisor that varies in the loop, one the loop writes,
   * one under a conditional; each still agrees with the interpreter */
  static const char *const kept[] = {
      "L^{64}_{b=0}L^{64}_{a=0}[C^{f32,g}_{b,a}=A^{f32,g}_{b,a}/D^{f32,g}_{a};];",
      "L^{64}_{b=0}L^{64}_{a=0}[E^{f32,g}_{b}=E^{f32,g}_{b}+A^{f32,g}_{b,a};"
      "C^{f32,g}_{b,a}=A^{f32,g}_{b,a}/E^{f32,g}_{b};];",
      "L^{64}_{b=0}L^{64}_{a=0}[C^{f32,g}_{b,a}=if_then_else(A^{f32,g}_{b,a}>0,"
      "A^{f32,g}_{b,a}/D^{f32,g}_{b},0);];",
  };
  for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) {
    char *k = lower_c(cpu, kept[i], &len);
    ck_assert_msg(!strstr(k, "leir_q"), "%s", k);
    leir_free(k);
    agree(interp, cpu, kept[i], kept[i]);
  }
  /* hoisted next to one that is not, and agreeing */
  const char *mixed = "L^{64}_{b=0}L^{64}_{a=0}[C^{f32,g}_{b,a}=(A^{f32,g}_{b,a}+1)/D^{f32,g}_{b}"
                      "+A^{f32,g}_{b,a}/D^{f32,g}_{a};];";
  char *k = lower_c(cpu, mixed, &len);
  size_t hoisted = 0;
  for (const char *q = k; (q = strstr(q, "const double leir_q")); q++) hoisted++;
  ck_assert_uint_eq(hoisted, 1);
  leir_free(k);
  agree(interp, cpu, mixed, "mixed");
  leir_backend_free(cpu);
  leir_backend_free(interp);
  leir_program_free(p);
}
END_TEST

/* ---- cache integrity ---- */

/* Compiles `program` with the cache in dir; its entry's path (the entry
 * that is not `exclude`) goes to path. */
static void cache_entry(const char *dir, const char *program, const char *exclude, char *path,
                        size_t cap) {
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.cache_dir = dir;
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_OK);
  leir_program *p = test_parse(program);
  leir_kernel *k = NULL;
  ck_assert_int_eq(leir_kernel_new(&k, b, p), LEIR_OK);
  leir_kernel_free(k);
  leir_program_free(p);
  leir_backend_free(b);
  DIR *d = opendir(dir);
  struct dirent *e;
  path[0] = '\0';
  while ((e = readdir(d))) {
    if (strlen(e->d_name) != 19 || strcmp(e->d_name + 16, ".so") != 0) continue;
    char full[600];
    snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
    if (!exclude || strcmp(full, exclude) != 0) snprintf(path, cap, "%s", full);
  }
  closedir(d);
  ck_assert(path[0]);
}

static void copy_path(const char *from, const char *to) {
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
  ck_assert_int_eq(system(cmd), 0);
}

static leir_verdict verdict_with_cache(const char *dir, const char *before, const char *after) {
  leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
  bo.cache_dir = dir;
  leir_backend *b = NULL;
  ck_assert_int_eq(leir_backend_open(&b, "cpu", &bo), LEIR_OK);
  leir_verify_report *r = verify(b, before, after, 0);
  leir_verdict v = r->verdict;
  leir_verify_report_free(r);
  leir_backend_free(b);
  return v;
}

static bool is_regular(const char *path) {
  struct stat sb;
  return lstat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

#define SUM2 "B^{4}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx}=C^{f64,g}_{tx}+A^{f64,g}_{tx,a}*2;];"

START_TEST(test_cache_entries_are_bound_to_their_keys) {
  char dir[] = "/tmp/leir-test-integrity-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char sum[600] = "", sum2[600] = "", spare[700], cmd[1400];
  cache_entry(dir, SUM, NULL, sum, sizeof sum);
  cache_entry(dir, SUM2, sum, sum2, sizeof sum2);
  ck_assert_str_ne(sum, sum2);
  snprintf(spare, sizeof spare, "%s/spare-sum", dir);
  copy_path(sum, spare);
  struct stat good;
  ck_assert_int_eq(stat(sum, &good), 0);

  /* an entry copied under another key is not loaded for the wrong program */
  char keep2[700];
  snprintf(keep2, sizeof keep2, "%s/spare-sum2", dir);
  copy_path(sum2, keep2);
  copy_path(sum, sum2);
  ck_assert_int_eq(verdict_with_cache(dir, SUM, SUM2), LEIR_VERDICT_MISMATCH);
  copy_path(keep2, sum2);

  /* a truncated entry (its start intact) is evicted and rebuilt */
  ck_assert_int_eq(truncate(sum, good.st_size / 2), 0);
  ck_assert_int_eq(verdict_with_cache(dir, SUM, SUM), LEIR_VERDICT_EQUAL);
  struct stat now;
  ck_assert_int_eq(stat(sum, &now), 0);
  ck_assert_int_eq(now.st_size, good.st_size);

  /* held-back variants: whatever sits at the key's path, the verdict is
   * right, nothing blocks, and a valid entry takes its place */
  for (int variant = 0; variant < 6; variant++) {
    unlink(sum);
    switch (variant) {
      case 0: ck_assert_int_eq(mkfifo(sum, 0600), 0); break;          /* FIFO */
      case 1: ck_assert_int_eq(symlink(spare, sum), 0); break;        /* symlink */
      case 2: close(open(sum, O_WRONLY | O_CREAT | O_TRUNC, 0600)); break; /* empty */
      case 3: ck_assert_int_eq(mkdir(sum, 0700), 0); break;           /* directory */
      case 4:                                                         /* unreadable */
        copy_path(spare, sum);
        {
          int fd = open(sum, O_WRONLY);
          ck_assert_int_ge(fd, 0);
          ck_assert_int_eq(pwrite(fd, "garbage!", 8, 40), 8);
          close(fd);
        }
        chmod(sum, 0);
        break;
      case 5: /* a wrong key in an otherwise valid header: sum2's entry */
        copy_path(sum2, sum);
        break;
    }
    ck_assert_msg(verdict_with_cache(dir, SUM, SUM) == LEIR_VERDICT_EQUAL, "variant %d", variant);
    ck_assert_msg(is_regular(sum), "variant %d: no valid entry took its place", variant);
    ck_assert_int_eq(stat(sum, &now), 0);
    ck_assert_int_eq(now.st_size, good.st_size);
  }
  /* the symlink's target was left alone */
  ck_assert(is_regular(spare));
  /* a directory with contents at the key's path is left alone, and still
   * no wrong verdict */
  unlink(sum);
  ck_assert_int_eq(mkdir(sum, 0700), 0);
  snprintf(cmd, sizeof cmd, "%s/inside", sum);
  close(open(cmd, O_WRONLY | O_CREAT, 0600));
  ck_assert_int_eq(verdict_with_cache(dir, SUM, SUM), LEIR_VERDICT_EQUAL);
  ck_assert(file_exists(cmd));
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_leftovers_of_killed_runs_are_swept) {
  char tmp[] = "/tmp/leir-test-sweep-XXXXXX", cache[700], path[1000];
  ck_assert_ptr_nonnull(mkdtemp(tmp));
  setenv("TMPDIR", tmp, 1);
  snprintf(cache, sizeof cache, "%s/cache", tmp);
  ck_assert_int_eq(mkdir(cache, 0700), 0);
  /* a temporary of a store killed mid-way (nobody holds its lock), and one
   * being written right now (its lock held) */
  char dead_tmp[800], live_tmp[800];
  snprintf(dead_tmp, sizeof dead_tmp, "%s/.tmp-0123456789abcdef-AAAAAA", cache);
  snprintf(live_tmp, sizeof live_tmp, "%s/.tmp-0123456789abcdef-BBBBBB", cache);
  close(open(dead_tmp, O_WRONLY | O_CREAT, 0600));
  int live_fd = open(live_tmp, O_WRONLY | O_CREAT, 0600);
  ck_assert_int_eq(flock(live_fd, LOCK_EX), 0);
  /* directories of a killed process in $TMPDIR (unlocked .lock) and of a
   * live one (locked), and a foreign directory without a lock */
  char dead_dir[800], live_dir[800], foreign[800];
  snprintf(dead_dir, sizeof dead_dir, "%s/leir-objects-AAAAAA", tmp);
  snprintf(live_dir, sizeof live_dir, "%s/leir-BBBBBB", tmp);
  snprintf(foreign, sizeof foreign, "%s/leir-notes", tmp);
  ck_assert_int_eq(mkdir(dead_dir, 0700), 0);
  ck_assert_int_eq(mkdir(live_dir, 0700), 0);
  ck_assert_int_eq(mkdir(foreign, 0700), 0);
  snprintf(path, sizeof path, "%s/.lock", dead_dir);
  close(open(path, O_WRONLY | O_CREAT, 0600));
  snprintf(path, sizeof path, "%s/0123456789abcdef-1.so", dead_dir);
  close(open(path, O_WRONLY | O_CREAT, 0600));
  snprintf(path, sizeof path, "%s/.lock", live_dir);
  int live_dir_fd = open(path, O_WRONLY | O_CREAT, 0600);
  ck_assert_int_eq(flock(live_dir_fd, LOCK_EX), 0);

  ck_assert_int_eq(verdict_with_cache(cache, SUM, SUM), LEIR_VERDICT_EQUAL);
  ck_assert(!file_exists(dead_tmp));
  ck_assert(file_exists(live_tmp));
  ck_assert(!file_exists(dead_dir));
  ck_assert(file_exists(live_dir));
  ck_assert(file_exists(foreign));
  /* and this run left nothing of its own in $TMPDIR */
  ck_assert_int_eq(dir_entries(tmp), 3); /* cache, live_dir, foreign */
  close(live_fd);
  close(live_dir_fd);
  snprintf(path, sizeof path, "rm -rf '%s'", tmp);
  ck_assert_int_eq(system(path), 0);
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
  tc = tcase_create("safety");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_verification_is_safe_in_a_threaded_host);
  tcase_add_test(tc, test_compiler_timeout_kills_its_process_group_and_cleans_up);
  tcase_add_test(tc, test_nested_full_unrolls_are_bounded);
  tcase_add_test(tc, test_thread_counts_are_bounded);
  tcase_add_test(tc, test_runner_is_found_or_the_backend_says_why);
  tcase_add_test(tc, test_runner_option_names_the_program);
  tcase_add_test(tc, test_cpu_works_for_a_host_that_ignores_sigchld);
  tcase_add_test(tc, test_only_flags_that_keep_results_are_accepted);
  tcase_add_test(tc, test_fp_contract_fuses_only_when_asked);
  tcase_add_test(tc, test_division_by_a_loop_invariant_is_exact);
  tcase_add_test(tc, test_cache_entries_are_bound_to_their_keys);
  tcase_add_test(tc, test_leftovers_of_killed_runs_are_swept);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_suite(cpu_suite()); }
