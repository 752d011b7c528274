/* leir_program_check: the public face of the analysis. */
#include "analysis.h"
#include "error.h"

leir_status leir_program_check(const leir_program *p, const leir_check_options *opts,
                               leir_diagnostics **diags) {
  if (diags) *diags = NULL;
  if (!p) return leir__error_arg(NULL, "NULL argument");
  leir_diagnostics *list = NULL;
  if (diags && !(list = leir__diags_new())) return leir__error_nomem();
  leir__arena arena;
  leir__arena_init(&arena, 1024);
  const leir__decl *sig = p->sig;
  uint32_t nsig = p->nsig;
  leir_status st = LEIR_OK;
  bool checked = false;
  if (!nsig) {
    /* Inference runs every check: its findings are the program's. */
    leir__decl *decls = NULL;
    st = leir__infer_decls_checked(p, opts, list, &arena, &decls, &nsig, &checked);
    sig = decls;
    if (st == LEIR_ERR_SIGNATURE && list) {
      const leir_error *e = leir_error_last();
      leir__diag_add(list, e->rule, e->subject, e->line, e->column, "%s", e->message);
    }
  }
  if (st == LEIR_OK && !checked) {
    leir__analysis *a = NULL;
    st = leir__analyze(p, sig, nsig, opts, list, false, &a);
    leir__analysis_free(a);
  }
  leir__arena_release(&arena);
  if (diags) *diags = list;
  return st;
}
