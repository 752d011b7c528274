/* Random valid LEIR programs (see gen.h). */
#include "gen.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct g {
  uint64_t s;
  char *out;
  size_t len, cap;
  int n0, n1;
  const char *fa, *fd, *ti; /* dtypes of A, D, I */
  bool used_a, used_d, used_i, used_q;
  const char *v0, *v1;      /* loop variables of the current nest */
  bool int_eq;              /* the equation computes in int64 */
} g;

static uint64_t next(g *x) {
  uint64_t z = (x->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static int pick(g *x, int n) { return (int)(next(x) % (uint64_t)n); }

static void put(g *x, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(x->out + x->len, x->cap - x->len, fmt, ap);
  va_end(ap);
  if (n > 0) x->len += (size_t)n < x->cap - x->len ? (size_t)n : x->cap - x->len - 1;
}

static const char *const float_dtypes[] = {"f64", "f32", "f16", "bf16"};
static const char *const int_dtypes[] = {"i8", "i16", "i32", "i64", "u8"};
static const char *const all_dtypes[] = {"f64", "f32", "f16", "bf16", "i8",
                                         "i16", "i32", "i64", "u8",   "bool"};

static bool is_int_dtype(const char *dt) { return dt[0] == 'i' || dt[0] == 'u' || (dt[0] == 'b' && dt[1] == 'o'); }

static void expr(g *x, int depth);

static void leaf(g *x) {
  switch (pick(x, 7)) {
    case 0:
    case 1:
      put(x, "A^{%s,g}_{%s,%s}", x->fa, x->v0, x->v1);
      x->used_a = true;
      break;
    case 2:
      put(x, "D^{%s,g}_{%s}", x->fd, x->v1);
      x->used_d = true;
      break;
    case 3:
      put(x, "D^{%s,g}_{I^{%s,g}_{%s}}", x->fd, x->ti, x->v0);
      x->used_d = x->used_i = true;
      break;
    case 4: {
      static const char *const lits[] = {"2", "3", "7", "0.5", "1.25", "0.1"};
      put(x, "%s", lits[pick(x, x->int_eq ? 3 : 6)]);
      break;
    }
    default: put(x, "%s", pick(x, 2) ? x->v0 : x->v1); break;
  }
}

static void expr(g *x, int depth) {
  if (depth <= 0 || pick(x, 4) == 0) {
    leaf(x);
    return;
  }
  int k = pick(x, x->int_eq ? 8 : 14);
  switch (k) {
    case 0: case 1: case 2: {
      static const char ops[] = "+-*";
      put(x, "(");
      expr(x, depth - 1);
      put(x, "%c", ops[k]);
      expr(x, depth - 1);
      put(x, ")");
      break;
    }
    case 3:
      put(x, "%s(", pick(x, 2) ? "max" : "min");
      expr(x, depth - 1);
      put(x, ",");
      expr(x, depth - 1);
      put(x, ")");
      break;
    case 4:
      put(x, "abs(");
      expr(x, depth - 1);
      put(x, ")");
      break;
    case 5:
      put(x, "if_then_else(%s<%d,", x->v1, 1 + pick(x, x->n1 > 1 ? x->n1 : 2));
      expr(x, depth - 1);
      put(x, ",");
      expr(x, depth - 1);
      put(x, ")");
      break;
    case 6:
      put(x, "if_then_else(Q^{bool,g}_{%s},", x->v0);
      x->used_q = true;
      expr(x, depth - 1);
      put(x, ",");
      expr(x, depth - 1);
      put(x, ")");
      break;
    case 7:
      if (x->int_eq) {
        put(x, "(");
        expr(x, depth - 1);
        put(x, "%s3)", pick(x, 2) ? "//" : "%");
      } else {
        put(x, "-");
        leaf(x);
      }
      break;
    case 8:
      put(x, "exp(");
      expr(x, depth - 1);
      put(x, "*0.1)");
      break;
    case 9:
      put(x, "sqrt(abs(");
      expr(x, depth - 1);
      put(x, "))");
      break;
    case 10:
      put(x, "log(abs(");
      expr(x, depth - 1);
      put(x, ")+1)");
      break;
    case 11:
      put(x, "erf(");
      expr(x, depth - 1);
      put(x, ")");
      break;
    case 12:
      put(x, "(");
      expr(x, depth - 1);
      put(x, "/(abs(");
      expr(x, depth - 1);
      put(x, ")+1))");
      break;
    default:
      put(x, "(");
      expr(x, depth - 1);
      put(x, "**2)");
      break;
  }
}

/* Loop header of kind letter for a variable; B loops need [tb][xyz]... */
static const char *loop(g *x, int extent, const char *lvar, const char *bvar) {
  static const char kinds[] = "LPVUB";
  char k = kinds[pick(x, 5)];
  const char *v = k == 'B' ? bvar : lvar;
  put(x, "%c^{%d}_{%s=0}", k, extent, v);
  return v;
}

void gen_generate(uint64_t seed, gen_program *out) {
  g x;
  memset(&x, 0, sizeof x);
  x.s = seed * 0x2545F4914F6CDD1Dull + 1;
  x.out = out->text;
  x.cap = sizeof out->text;
  out->text[0] = '\0';
  x.n0 = 1 + pick(&x, 6);
  x.n1 = 1 + pick(&x, 9);
  x.fa = float_dtypes[pick(&x, 4)];
  x.fd = float_dtypes[pick(&x, 4)];
  x.ti = int_dtypes[pick(&x, 5)];
  char outs[4][64];
  int nouts = 0;
  int nnests = 1 + pick(&x, 3);
  bool have_e = false;
  for (int t = 0; t < nnests; t++) {
    int form = pick(&x, 4);
    if (form == 3 && have_e) form = 0;
    const char *dt = all_dtypes[pick(&x, 10)];
    if (form == 0) { /* element-wise output */
      char name = "CFGH"[t];
      x.v0 = loop(&x, x.n0, "a", "tx");
      x.v1 = loop(&x, x.n1, "c", "ty");
      x.int_eq = is_int_dtype(dt);
      put(&x, "[%c^{%s,g}_{%s,%s}=", name, dt, x.v0, x.v1);
      expr(&x, 3);
      put(&x, ";];");
      snprintf(outs[nouts++], sizeof outs[0], "%c:%s:%dx%d", name, dt, x.n0, x.n1);
    } else if (form == 1) { /* reduction over the inner loop */
      char name = "RSWX"[t];
      x.v0 = loop(&x, x.n0, "a", "tx");
      x.v1 = loop(&x, x.n1, "c", "ty");
      x.int_eq = is_int_dtype(dt);
      if (dt[0] == 'b' && dt[1] == 'o') dt = "i32", x.int_eq = true;
      int r = pick(&x, 4);
      put(&x, "[%c^{%s,g}_{%s}=", name, dt, x.v0);
      if (r < 2) {
        put(&x, "%c^{%s,g}_{%s}%c", name, dt, x.v0, r == 0 ? '+' : '*');
        if (r == 1) put(&x, "(1+0.125*");
        expr(&x, 2);
        if (r == 1) put(&x, ")");
      } else {
        put(&x, "%s(%c^{%s,g}_{%s},", r == 2 ? "max" : "min", name, dt, x.v0);
        expr(&x, 2);
        put(&x, ")");
      }
      put(&x, ";];");
      snprintf(outs[nouts++], sizeof outs[0], "%c:%s:%d", name, dt, x.n0);
    } else if (form == 2) { /* a nest of nests: an intermediate row, then a sum */
      const char *edt = float_dtypes[pick(&x, 4)];
      if (dt[0] == 'b' && dt[1] == 'o') dt = "f64";
      x.v0 = loop(&x, x.n0, "a", "tx");
      put(&x, "[");
      x.v1 = loop(&x, x.n1, "c", "ty");
      x.int_eq = false;
      put(&x, "[M^{%s,l}_{%s,%s}=", edt, x.v0, x.v1);
      expr(&x, 2);
      put(&x, ";];");
      const char *v1 = loop(&x, x.n1, "d", "tz");
      put(&x, "[K^{%s,g}_{%s}=K^{%s,g}_{%s}+M^{%s,l}_{%s,%s};];];", dt, x.v0, dt, x.v0, edt, x.v0,
          v1);
      snprintf(outs[nouts++], sizeof outs[0], "K:%s:%d", dt, x.n0);
      if (t + 1 < nnests) t = nnests; /* K must stay an output: end here */
    } else { /* an intermediate E read by the next nest */
      const char *edt = float_dtypes[pick(&x, 4)];
      x.v0 = loop(&x, x.n0, "a", "tx");
      x.v1 = loop(&x, x.n1, "c", "ty");
      x.int_eq = false;
      put(&x, "[E^{%s,g}_{%s,%s}=", edt, x.v0, x.v1);
      expr(&x, 2);
      put(&x, ";];");
      if (dt[0] == 'b' && dt[1] == 'o') dt = "f32";
      x.int_eq = is_int_dtype(dt);
      x.v0 = loop(&x, x.n0, "a", "tx");
      x.v1 = loop(&x, x.n1, "c", "ty");
      put(&x, "[N^{%s,g}_{%s,%s}=E^{%s,g}_{%s,%s}*", dt, x.v0, x.v1, edt, x.v0, x.v1);
      expr(&x, 1);
      put(&x, ";];");
      snprintf(outs[nouts++], sizeof outs[0], "N:%s:%dx%d", dt, x.n0, x.n1);
      have_e = true;
    }
    if (nouts == 4) break;
  }
  /* outputs have distinct names unless a form repeats: keep the first */
  size_t k = 0;
  char *sig = out->signature;
  size_t cap = sizeof out->signature;
  sig[0] = '\0';
  const char *sep = "";
#define ADD(...)                                                              \
  do {                                                                        \
    int n_ = snprintf(sig + k, cap - k, __VA_ARGS__);                         \
    if (n_ > 0) k += (size_t)n_ < cap - k ? (size_t)n_ : cap - k - 1;         \
  } while (0)
  if (x.used_a) {
    ADD("%sA:%s:%dx%d", sep, x.fa, x.n0, x.n1); sep = ",";
  }
  if (x.used_d) {
    ADD("%sD:%s:%d", sep, x.fd, x.n1); sep = ",";
  }
  if (x.used_i) {
    ADD("%sI:%s:%d", sep, x.ti, x.n0); sep = ",";
  }
  if (x.used_q) {
    ADD("%sQ:bool:%d", sep, x.n0); sep = ",";
  }
  ADD(" ->");
  sep = " ";
  for (int i = 0; i < nouts; i++) {
    bool dup = false;
    for (int j = 0; j < i; j++) dup |= outs[i][0] == outs[j][0];
    if (dup) continue;
    ADD("%s%s", sep, outs[i]);
    sep = ",";
  }
#undef ADD
}

/* "A:f32:4x6" -> one declaration */
static bool parse_decl(const char *s, size_t len, leir_role role, leir_tensor_decl *d,
                       char *name, int64_t *shape) {
  const char *c1 = memchr(s, ':', len);
  if (!c1) return false;
  const char *c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - s));
  if (!c2) return false;
  memcpy(name, s, (size_t)(c1 - s));
  name[c1 - s] = '\0';
  char dt[8] = {0};
  memcpy(dt, c1 + 1, (size_t)(c2 - c1 - 1) < 7 ? (size_t)(c2 - c1 - 1) : 7);
  if (leir_dtype_from_name(dt, &d->dtype) != LEIR_OK) return false;
  d->name = name;
  d->role = role;
  d->rank = 0;
  const char *p = c2 + 1, *end = s + len;
  while (p < end && d->rank < 4) {
    long v = 0;
    while (p < end && *p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0');
    shape[d->rank++] = v;
    if (p < end && *p == 'x') p++;
    else break;
  }
  d->shape = shape;
  return true;
}

leir_program *gen_parse(const gen_program *gp) {
  leir_program *p = NULL;
  if (leir_program_parse(&p, gp->text, strlen(gp->text), NULL) != LEIR_OK) return NULL;
  leir_tensor_decl d[8];
  char names[8][4];
  int64_t shapes[8][4];
  size_t n = 0;
  const char *s = gp->signature, *arrow = strstr(s, "->");
  for (int role = 0; role < 2; role++) {
    const char *p0 = role ? arrow + 2 : s, *end = role ? s + strlen(s) : arrow;
    while (p0 < end && n < 8) {
      while (p0 < end && (*p0 == ' ' || *p0 == ',')) p0++;
      const char *q = p0;
      while (q < end && *q != ',' && *q != ' ') q++;
      if (q > p0 && parse_decl(p0, (size_t)(q - p0), role ? LEIR_ROLE_OUTPUT : LEIR_ROLE_INPUT,
                               &d[n], names[n], shapes[n]))
        n++;
      p0 = q;
    }
  }
  if (leir_program_set_signature(p, d, n) != LEIR_OK) {
    leir_program_free(p);
    return NULL;
  }
  return p;
}
