/*
 * libleir program API, step by step: parse a program, check it, print it
 * canonically and pretty, hash it, infer its signature, write it as a
 * program file, and walk its tree. Build against an installed libleir:
 *
 *   cc program_api.c $(pkg-config --cflags --libs leir) -o program_api
 *   ./program_api            # uses a built-in softmax
 *   ./program_api FILE.leir  # or a file (LEIR text, whitespace allowed)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <leir/leir.h>

static const char softmax[] =
    "B^{2}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];\n"
    "B^{2}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];\n"
    "B^{2}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];\n";

/* Every failing call leaves details in the per-thread last error. */
static int fail(const char *what) {
  const leir_error *e = leir_error_last();
  fprintf(stderr, "%s: %s at %u:%u: %s [%s]\n", what, leir_status_name(e->status), e->line,
          e->column, e->message, e->rule);
  return 1;
}

/* Walk callbacks: count nodes by kind and print each nest's loops. */
typedef struct stats {
  const leir_program *p;
  size_t nodes[LEIR_EXPR_OR + 1];
  size_t equations;
} stats;

static int on_nest(const leir_nest *n, uint32_t depth, void *payload) {
  stats *s = payload;
  printf("  %*snest:", (int)depth * 2, "");
  for (size_t i = 0; i < leir_nest_loop_count(n); i++) {
    leir_loop l = leir_nest_loop(s->p, n, i);
    printf(" %c %s<%" PRId64, "LPVUB"[l.kind], l.var, l.extent);
  }
  printf("\n");
  return 0;
}

static int on_equation(const leir_equation *eq, void *payload) {
  stats *s = payload;
  s->equations++;
  printf("    writes %s\n", leir_expr_name(s->p, leir_equation_lhs(eq)));
  return 0;
}

static int on_expr(const leir_expr *e, const leir_expr *parent, void *payload) {
  (void)parent;
  ((stats *)payload)->nodes[leir_expr_get_kind(e)]++;
  return 0; /* non-zero would stop the walk */
}

int main(int argc, char **argv) {
  printf("libleir %s (LEIR language %d)\n", leir_version(), LEIR_LANGUAGE_VERSION);

  /* 1. Parse. Lenient mode accepts whitespace; strict is for canonical text. */
  leir_program *p = NULL;
  leir_parse_options opts = LEIR_PARSE_OPTIONS_INIT;
  opts.flags = LEIR_PARSE_LENIENT;
  leir_status st = argc > 1 ? leir_program_load_file(&p, argv[1], &opts)
                            : leir_program_parse(&p, softmax, strlen(softmax), &opts);
  if (st != LEIR_OK) return fail("parse");

  /* 2. Check (a signature is inferred when the program has none). */
  leir_diagnostics *diags = NULL;
  st = leir_program_check(p, NULL, &diags);
  printf("check: %s, %zu finding(s)\n", leir_status_name(st), leir_diagnostics_count(diags));
  for (size_t i = 0; i < leir_diagnostics_count(diags); i++) {
    const leir_diagnostic *d = leir_diagnostics_get(diags, i);
    printf("  %u:%u: %s [%s]\n", d->line, d->column, d->message, d->rule);
  }
  leir_diagnostics_free(diags);

  /* 3. Print: canonical (one line) and pretty (caller frees with leir_free). */
  char *text = NULL;
  size_t len = 0;
  if (leir_program_print(p, 0, &text, &len) != LEIR_OK) return fail("print");
  printf("canonical (%zu bytes): %.60s...\n", len, text);
  leir_free(text);
  if (leir_program_print(p, LEIR_PRINT_PRETTY, &text, NULL) != LEIR_OK) return fail("print");
  printf("pretty:\n%s", text);
  leir_free(text);

  /* 4. Identity: XXH3 of the canonical text, and the alpha-normalized hash. */
  printf("hash %016" PRIx64 ", alpha %016" PRIx64 "\n", leir_program_hash(p),
         leir_program_hash_alpha(p));

  /* 5. Signature: infer it (or set one), then write a program file. */
  if (leir_program_signature_count(p) == 0 && leir_program_infer_signature(p) != LEIR_OK)
    return fail("infer");
  for (size_t i = 0; i < leir_program_signature_count(p); i++) {
    leir_tensor_decl d;
    leir_program_signature_get(p, i, &d);
    printf("  %-6s %s %s[", d.role == LEIR_ROLE_INPUT ? "input" : "output", d.name,
           leir_dtype_name(d.dtype));
    for (uint32_t k = 0; k < d.rank; k++) printf("%s%" PRId64, k ? "," : "", d.shape[k]);
    printf("]\n");
  }
  leir_program_set_name(p, "example");
  char *yaml = NULL;
  if (leir_program_to_yaml(p, &yaml, NULL) != LEIR_OK) return fail("to_yaml");
  printf("program file:\n%s", yaml);
  leir_program *again = NULL;
  if (leir_program_parse_yaml(&again, yaml, strlen(yaml), NULL) != LEIR_OK) return fail("yaml");
  leir_free(yaml);
  printf("program file reads back: %s\n",
         leir_program_hash(again) == leir_program_hash(p) ? "same program" : "DIFFERENT");
  leir_program_free(again);

  /* 6. Walk the tree. Pointers are borrowed from the program. */
  stats s = {.p = p};
  leir_walk_callbacks cb = LEIR_WALK_CALLBACKS_INIT;
  cb.enter_nest = on_nest;
  cb.equation = on_equation;
  cb.expr = on_expr;
  leir_program_walk(p, &cb, &s);
  printf("%zu equations, %zu tensor reads/writes, %zu calls, %zu loop-variable uses\n", s.equations,
         s.nodes[LEIR_EXPR_TENSOR], s.nodes[LEIR_EXPR_CALL], s.nodes[LEIR_EXPR_VAR]);

  /* 7. Errors are values: a malformed program gives a status and a position. */
  leir_program *bad = NULL;
  const char *broken = "B^{2}_{tx=0}[C^{f64,g}_{tx}=1;]L^{2}_{a=0}[C^{f64,g}_{a}=2;];";
  if (leir_program_parse(&bad, broken, strlen(broken), NULL) == LEIR_OK) return 1;
  const leir_error *e = leir_error_last();
  printf("malformed text refused at %u:%u: %s [%s]\n", e->line, e->column, e->message, e->rule);

  leir_program_free(p);
  return 0;
}
