/* Signatures: set, get, infer; program names. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "error.h"
#include "options.h"
#include "signature.h"

leir_status leir_program_set_signature(leir_program *p, const leir_tensor_decl *decls, size_t n) {
  if (!p || (n && !decls))
    return leir__error_arg(NULL, "NULL argument");
  if (n > 4096)
    return leir__error(LEIR_ERR_SIGNATURE, "signature.size", NULL, 0, 0,
                       "a signature of %zu variables is above the limit of 4096", n);
  size_t nout = 0;
  for (size_t i = 0; i < n; i++) {
    const leir_tensor_decl *d = &decls[i];
    const char *name = d->name ? d->name : "";
    if (!leir__is_tensor_name(name, strlen(name)))
      return leir__error(LEIR_ERR_SIGNATURE, "signature.name", name, 0, 0,
                         "'%s' is not a tensor name ([A-Z][a-z]*, not starting with L, P, V, U, "
                         "B or T)",
                         name);
    if ((unsigned)d->dtype >= LEIR_DTYPE_COUNT)
      return leir__error(LEIR_ERR_SIGNATURE, "signature.dtype", name, 0, 0,
                         "%s has an invalid dtype", name);
    if (d->role != LEIR_ROLE_INPUT && d->role != LEIR_ROLE_OUTPUT)
      return leir__error(LEIR_ERR_SIGNATURE, "signature.role", name, 0, 0,
                         "%s has an invalid role", name);
    if (d->role == LEIR_ROLE_OUTPUT)
      nout++;
    else if (nout)
      return leir__error(LEIR_ERR_SIGNATURE, "signature.order", name, 0, 0,
                         "input %s comes after an output; list inputs first", name);
    if (d->rank > LEIR_MAX_RANK || (d->rank && !d->shape))
      return leir__error(LEIR_ERR_SIGNATURE, "signature.rank", name, 0, 0,
                         "%s has rank %u (at most %d, with a shape)", name, d->rank, LEIR_MAX_RANK);
    for (uint32_t k = 0; k < d->rank; k++)
      if (d->shape[k] < 1)
        return leir__error(LEIR_ERR_SIGNATURE, "signature.shape", name, 0, 0,
                           "%s has extent %lld in dimension %u; extents must be at least 1",
                           name, (long long)d->shape[k], k + 1);
    for (size_t j = 0; j < i; j++)
      if (decls[j].name && strcmp(decls[j].name, name) == 0)
        return leir__error(LEIR_ERR_SIGNATURE, "signature.duplicate", name, 0, 0,
                           "%s is declared twice", name);
  }
  if (n && nout == 0)
    return leir__error(LEIR_ERR_SIGNATURE, "signature.no-output", NULL, 0, 0,
                       "a signature needs at least one output");
  jmp_buf jb;
  if (setjmp(jb)) {
    p->oom_jmp = NULL;
    return leir__error_nomem();
  }
  p->oom_jmp = &jb;
  leir__decl *sig = n ? leir__palloc(p, n * sizeof *sig) : NULL;
  for (size_t i = 0; i < n; i++) {
    const leir_tensor_decl *d = &decls[i];
    sig[i].sym = leir__sym_intern(p, d->name, strlen(d->name));
    sig[i].dtype = (uint8_t)d->dtype;
    sig[i].role = (uint8_t)d->role;
    sig[i].rank = d->rank;
    sig[i].domain = LEIR_DOMAIN_DEFAULT;
    sig[i].dom_a = sig[i].dom_b = 0.0;
    sig[i].shape = d->rank ? leir__palloc(p, d->rank * sizeof(int64_t)) : NULL;
    if (d->rank) memcpy(sig[i].shape, d->shape, d->rank * sizeof(int64_t));
  }
  p->oom_jmp = NULL;
  p->sig = sig;
  p->nsig = (uint32_t)n;
  return LEIR_OK;
}

size_t leir_program_signature_count(const leir_program *p) { return p ? p->nsig : 0; }

leir_status leir_program_signature_get(const leir_program *p, size_t i, leir_tensor_decl *out) {
  if (!p || !out || i >= p->nsig)
    return leir__error_arg(NULL, "signature index out of range");
  const leir__decl *d = &p->sig[i];
  out->name = leir__sym_name(p, d->sym);
  out->dtype = (leir_dtype)d->dtype;
  out->role = (leir_role)d->role;
  out->rank = d->rank;
  out->shape = d->shape;
  return LEIR_OK;
}

leir_status leir_program_infer_signature(leir_program *p) {
  if (!p) return leir__error_arg(NULL, "NULL argument");
  leir__arena arena;
  leir__arena_init(&arena, 1024);
  leir__decl *decls;
  uint32_t n;
  leir_status st = leir__infer_decls(p, &arena, &decls, &n);
  if (st == LEIR_OK) {
    leir_tensor_decl *pub = calloc(n ? n : 1, sizeof *pub);
    if (!pub) {
      st = leir__error_nomem();
    } else {
      for (uint32_t i = 0; i < n; i++) {
        pub[i].name = leir__sym_name(p, decls[i].sym);
        pub[i].dtype = (leir_dtype)decls[i].dtype;
        pub[i].role = (leir_role)decls[i].role;
        pub[i].rank = decls[i].rank;
        pub[i].shape = decls[i].shape;
      }
      st = leir_program_set_signature(p, pub, n);
      free(pub);
    }
  }
  leir__arena_release(&arena);
  return st;
}

/* ---- input domains ------------------------------------------------------ */

static const char *const domain_names[] = {"default", "positive", "value",
                                           "range",   "normal",   "uniform"};

const char *leir_domain_kind_name(leir_domain_kind kind) {
  return (unsigned)kind < sizeof domain_names / sizeof *domain_names ? domain_names[kind]
                                                                     : "unknown";
}

static bool is_int_value(double x) { return isfinite(x) && x == floor(x); }

bool leir__domain_validate(leir_dtype dt, const leir_domain *d, char *why, size_t cap) {
  bool is_float = dt == LEIR_F16 || dt == LEIR_BF16 || dt == LEIR_F32 || dt == LEIR_F64;
  double lo = -9.2233720368547758e18, hi = 9.2233720368547758e18;
  switch (dt) {
    case LEIR_I8: lo = -128, hi = 127; break;
    case LEIR_I16: lo = -32768, hi = 32767; break;
    case LEIR_I32: lo = -2147483648.0, hi = 2147483647.0; break;
    case LEIR_U8: lo = 0, hi = 255; break;
    case LEIR_BOOL: lo = 0, hi = 1; break;
    default: break;
  }
  switch (d->kind) {
    case LEIR_DOMAIN_DEFAULT: return true;
    case LEIR_DOMAIN_POSITIVE:
      if (dt == LEIR_BOOL) {
        snprintf(why, cap, "a bool input cannot be positive (use {value: 1})");
        return false;
      }
      return true;
    case LEIR_DOMAIN_VALUE:
      if (!isfinite(d->value)) {
        snprintf(why, cap, "the value must be a finite number");
        return false;
      }
      if (!is_float && (!is_int_value(d->value) || d->value < lo || d->value > hi)) {
        snprintf(why, cap, "the value of a %s input must be an integer in [%.0f, %.0f]",
                 leir_dtype_name(dt), lo, hi);
        return false;
      }
      return true;
    case LEIR_DOMAIN_RANGE:
    case LEIR_DOMAIN_UNIFORM:
      if (!isfinite(d->low) || !isfinite(d->high) || !(d->low < d->high)) {
        snprintf(why, cap, "the bounds must be finite numbers with low < high");
        return false;
      }
      if (!is_float && d->kind == LEIR_DOMAIN_UNIFORM) {
        snprintf(why, cap, "a %s input cannot have a continuous distribution (use range)",
                 leir_dtype_name(dt));
        return false;
      }
      if (!is_float && (!is_int_value(d->low) || !is_int_value(d->high) || d->low < lo ||
                        d->high - 1 > hi)) {
        snprintf(why, cap,
                 "the range of a %s input must be integers lo < hi with lo..hi-1 inside [%.0f, "
                 "%.0f]",
                 leir_dtype_name(dt), lo, hi);
        return false;
      }
      return true;
    case LEIR_DOMAIN_NORMAL:
      if (!is_float) {
        snprintf(why, cap, "a %s input cannot have a continuous distribution (use range)",
                 leir_dtype_name(dt));
        return false;
      }
      if (!isfinite(d->mean) || !isfinite(d->std) || !(d->std > 0)) {
        snprintf(why, cap, "a normal distribution needs a finite mean and a finite std > 0");
        return false;
      }
      return true;
  }
  snprintf(why, cap, "unknown domain kind %d", (int)d->kind);
  return false;
}

leir_status leir_program_domain_get(const leir_program *p, size_t i, leir_domain *out) {
  if (!p || !out) return leir__error_arg(NULL, "NULL argument");
  leir_status st = leir__struct_size_check(out, sizeof(leir_domain), "leir_domain");
  if (st != LEIR_OK) return st;
  if (i >= p->nsig) return leir__error_arg(NULL, "signature index out of range");
  const leir__decl *d = &p->sig[i];
  leir_domain dom = LEIR_DOMAIN_INIT;
  dom.kind = (leir_domain_kind)d->domain;
  switch (dom.kind) {
    case LEIR_DOMAIN_VALUE: dom.value = d->dom_a; break;
    case LEIR_DOMAIN_RANGE:
    case LEIR_DOMAIN_UNIFORM: dom.low = d->dom_a, dom.high = d->dom_b; break;
    case LEIR_DOMAIN_NORMAL: dom.mean = d->dom_a, dom.std = d->dom_b; break;
    default: break;
  }
  /* a caller built against an older, smaller leir_domain gets its part */
  return leir__struct_write(out, &dom, sizeof dom, "leir_domain");
}

leir_status leir_program_domain_set(leir_program *p, size_t i, const leir_domain *dom) {
  if (!p || i >= p->nsig)
    return leir__error_arg(NULL, "signature index out of range");
  leir__decl *d = &p->sig[i];
  /* read through the options reader first: a caller's older, smaller
   * struct must not be read past its size */
  leir_domain full;
  leir_status rst = LEIR__OPTIONS_READ(leir_domain, &full, dom, LEIR_DOMAIN_INIT);
  if (rst != LEIR_OK) return rst;
  if (dom) dom = &full;
  if (!dom || dom->kind == LEIR_DOMAIN_DEFAULT) {
    d->domain = LEIR_DOMAIN_DEFAULT;
    d->dom_a = d->dom_b = 0.0;
    return LEIR_OK;
  }
  const char *name = leir__sym_name(p, d->sym);
  if (d->role != LEIR_ROLE_INPUT)
    return leir__error_arg(name, "%s is an output; only inputs have domains", name);
  char why[200];
  if (!leir__domain_validate((leir_dtype)d->dtype, dom, why, sizeof why))
    return leir__error_arg(name, "domain of %s: %s", name, why);
  d->domain = (uint8_t)dom->kind;
  d->dom_a = d->dom_b = 0.0;
  switch (dom->kind) {
    case LEIR_DOMAIN_VALUE: d->dom_a = dom->value; break;
    case LEIR_DOMAIN_RANGE:
    case LEIR_DOMAIN_UNIFORM: d->dom_a = dom->low, d->dom_b = dom->high; break;
    case LEIR_DOMAIN_NORMAL: d->dom_a = dom->mean, d->dom_b = dom->std; break;
    default: break;
  }
  return LEIR_OK;
}

const char *leir_program_name(const leir_program *p) { return p && p->name ? p->name : ""; }

leir_status leir_program_set_name(leir_program *p, const char *name) {
  if (!p) return leir__error_arg(NULL, "NULL argument");
  if (!name) {
    p->name = NULL;
    return LEIR_OK;
  }
  if (!leir__utf8_valid(name, strlen(name)))
    return leir__error_arg(NULL, "a program name must be valid UTF-8");
  char *copy = leir__pstrndup(p, name, strlen(name));
  if (!copy) return leir__error_nomem();
  p->name = copy;
  return LEIR_OK;
}

uint32_t leir__decl_index(const leir_program *p, uint32_t sym) {
  for (uint32_t i = 0; i < p->nsig; i++)
    if (p->sig[i].sym == sym) return i;
  return UINT32_MAX;
}

static void mark_all_tensors(const leir_expr *e, bool *known) {
  if (e->kind == LEIR_EXPR_TENSOR) known[e->sym] = true;
  for (uint32_t k = 0; k < e->n; k++) mark_all_tensors(e->kids[k], known);
}

static void mark_nest(const leir_nest *n, bool *known) {
  for (uint32_t k = 0; k < n->nitems; k++) {
    if (n->items[k].eq) {
      mark_all_tensors(n->items[k].eq->lhs, known);
      mark_all_tensors(n->items[k].eq->rhs, known);
    } else {
      mark_nest(n->items[k].nest, known);
    }
  }
}

void leir__known_symbols(const leir_program *p, bool *known) {
  leir__arena arena;
  leir__arena_init(&arena, 1024);
  const leir__decl *sig;
  uint32_t n;
  leir__error_state saved;
  leir__error_save(&saved);
  if (leir__effective_signature(p, &arena, &sig, &n) == LEIR_OK) {
    for (uint32_t i = 0; i < n; i++) known[sig[i].sym] = true;
  } else {
    for (uint32_t t = 0; t < p->nnests; t++) mark_nest(p->nests[t], known);
  }
  /* Hashing must not disturb the caller's error record. */
  leir__error_restore(&saved);
  leir__arena_release(&arena);
}
