/* Kernels: checked programs prepared by a backend (include/leir/run.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "error.h"

/* Copies the signature of `from` (which has one) onto `to`, by name. */
static leir_status copy_signature(leir_program *to, const leir_program *from) {
  size_t n = leir_program_signature_count(from);
  leir_tensor_decl *decls = calloc(n ? n : 1, sizeof *decls);
  if (!decls) return leir__error_nomem();
  for (size_t i = 0; i < n; i++) leir_program_signature_get(from, i, &decls[i]);
  leir_status st = leir_program_set_signature(to, decls, n);
  free(decls);
  return st;
}

/* One note per P/V/B loop (extent > 1) whose iterations are not provably
 * independent: it runs sequentially (spec/leir.md §3.2). */
static void note_loops(leir_kernel *k, const leir_nest *n, uint32_t top) {
  const leir__analysis *a = k->analysis;
  for (uint32_t l = 0; l < n->nloops; l++) {
    const leir__loop *loop = &n->loops[l];
    if (loop->kind == LEIR_LOOP_SERIAL || loop->kind == LEIR_LOOP_UNROLLED || loop->extent <= 1)
      continue;
    char why[256];
    if (leir__loop_independent(a, n, l, why, sizeof why)) continue;
    uint32_t line, col;
    leir__position(k->program, loop->pos, &line, &col);
    if (k->nsequential++ == 0) {
      k->seq_line = line;
      k->seq_col = col;
      snprintf(k->seq_message, sizeof k->seq_message, "loop '%s' (%c) of nest %u: %s",
               leir__sym_name(k->program, loop->sym), leir__loop_kind_letters[loop->kind],
               top + 1, why);
    }
    leir__sb_printf(&k->notes, "%s%u:%u: loop '%s' (%c) of nest %u runs sequentially: %s",
                    k->notes.len ? "\n" : "", line, col, leir__sym_name(k->program, loop->sym),
                    leir__loop_kind_letters[loop->kind], top + 1, why);
  }
  for (uint32_t i = 0; i < n->nitems; i++)
    if (n->items[i].nest) note_loops(k, n->items[i].nest, top);
}

leir_status leir__kernel_build(leir_backend *b, const leir_program *program,
                               const leir_program *sig_from, leir_kernel **out) {
  *out = NULL;
  leir_kernel *k = calloc(1, sizeof *k);
  if (!k) return leir__error_nomem();
  k->backend = b;
  k->prepared = LEIR_ERR_INTERNAL;
  leir_status st = leir_program_clone(&k->program, program);
  if (st == LEIR_OK) {
    if (sig_from)
      st = copy_signature(k->program, sig_from);
    else if (leir_program_signature_count(k->program) == 0)
      st = leir_program_infer_signature(k->program);
  }
  if (st == LEIR_OK) st = leir__analyze_program(k->program, NULL, &k->analysis);
  if (st != LEIR_OK) {
    leir__kernel_destroy(k);
    return st;
  }
  const leir__analysis *a = k->analysis;
  k->nknown = (uint32_t)leir_program_signature_count(k->program);
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < a->nbuffers; i++) {
    uint64_t n = leir__buffer_bytes(&a->buffers[i]);
    bytes = (bytes + n < bytes) ? UINT64_MAX : bytes + n;
  }
  k->buffer_bytes = bytes;
  if (b->opts.flags & LEIR_BACKEND_LOWER_ONLY) {
    /* lowering runs nothing: the run limits do not apply */
  } else if (bytes > b->opts.max_buffer_bytes) {
    st = leir__error(LEIR_ERR_LIMIT, "limit.buffer-bytes", NULL, 0, 0,
                     "the program's buffers need %llu bytes, above the backend limit of %llu",
                     (unsigned long long)bytes, (unsigned long long)b->opts.max_buffer_bytes);
  } else if (a->total_evaluations > b->opts.max_evaluations) {
    st = leir__error(LEIR_ERR_LIMIT, "limit.evaluations", NULL, 0, 0,
                     "the program runs %llu equation evaluations, above the backend limit of %llu",
                     (unsigned long long)a->total_evaluations,
                     (unsigned long long)b->opts.max_evaluations);
  }
  if (st == LEIR_OK) {
    k->cost.evaluations = 0;
    st = leir__program_cost(a, &k->cost);
  }
  if (st != LEIR_OK) {
    leir__kernel_destroy(k);
    return st;
  }
  for (uint32_t t = 0; t < k->program->nnests; t++) note_loops(k, k->program->nests[t], t);
  leir__sb_terminate(&k->notes);
  if (k->notes.failed) {
    leir__kernel_destroy(k);
    return leir__error_nomem();
  }
  b->live_kernels++;
  *out = k;
  return LEIR_OK;
}

void leir__kernel_destroy(leir_kernel *k) {
  if (!k) return;
  if (k->impl && k->backend && k->backend->ops) k->backend->ops->release(k->backend, k);
  if (k->analysis && k->backend) k->backend->live_kernels--;
  leir__analysis_free(k->analysis);
  leir_program_free(k->program);
  leir__sb_release(&k->notes);
  leir__sb_release(&k->log);
  free(k);
}

/* Copies a failed kernel's compiler output to the backend's last log. */
void leir__kernel_publish_log(leir_kernel *k) {
  leir__strbuf *log = &k->backend->compile_log;
  log->len = 0;
  log->failed = 0;
  if (k->log.len) leir__sb_put(log, k->log.data, k->log.len);
  leir__sb_reserve(log, 1);
  if (log->data) log->data[log->len] = '\0';
}

leir_status leir__kernels_prepare(leir_backend *b, leir_kernel *const *ks, size_t n) {
  for (size_t i = 0; i < n; i++) ks[i]->prepared = LEIR_ERR_INTERNAL;
  leir_status st = b->ops->prepare(b, ks, n);
  for (size_t i = 0; i < n; i++) leir__sb_terminate(&ks[i]->log);
  if (st != LEIR_OK) return st;
  for (size_t i = 0; i < n; i++)
    if (ks[i]->prepared == LEIR_ERR_COMPILE) leir__kernel_publish_log(ks[i]);
  return LEIR_OK;
}

leir_status leir_kernel_new(leir_kernel **out, leir_backend *b, const leir_program *program) {
  if (!out || !b || !program)
    return leir__error_arg(NULL, "NULL argument");
  *out = NULL;
  leir_kernel *k;
  leir_status st = leir__kernel_build(b, program, NULL, &k);
  if (st != LEIR_OK) return st;
  st = leir__kernels_prepare(b, &k, 1);
  if (st == LEIR_OK && k->prepared != LEIR_OK) {
    st = k->prepared;
    if (st == LEIR_ERR_COMPILE)
      leir__error(st, "backend.compile", NULL, 0, 0,
                  "the %s compiler rejected the lowered code (see leir_backend_compile_log)",
                  b->ops->name);
    else /* a compiler timeout, ...: its log says what happened */
      leir__error(st, st == LEIR_ERR_TIMEOUT ? "backend.compile-timeout" : "backend.compile",
                  NULL, 0, 0, "%s",
                  k->log.len ? leir__sb_terminate(&k->log) : "the kernel could not be prepared");
  }
  if (st != LEIR_OK) {
    leir__kernel_destroy(k);
    return st;
  }
  *out = k;
  return LEIR_OK;
}

void leir_kernel_free(leir_kernel *k) { leir__kernel_destroy(k); }

size_t leir_kernel_buffer_count(const leir_kernel *k) { return k ? k->nknown : 0; }

leir_status leir_kernel_buffer(const leir_kernel *k, size_t i, leir_tensor_decl *out) {
  if (!k || !out) return leir__error_arg(NULL, "NULL argument");
  return leir_program_signature_get(k->program, i, out);
}

leir_status leir_kernel_run(leir_kernel *k, void *const *buffers, size_t n) {
  if (!k || (!buffers && n))
    return leir__error_arg(NULL, "NULL argument");
  if (n != k->nknown)
    return leir__error_arg(NULL, "the kernel takes %u buffers (its signature), got %zu",
                           k->nknown, n);
  for (size_t i = 0; i < n; i++)
    if (!buffers[i])
      return leir__error_arg(NULL, "buffer %zu is NULL", i);
  leir__exec_result res = {-1};
  void *const *sets[1] = {buffers};
  return k->backend->ops->execute(k->backend, k, sets, 1, &res);
}

leir_status leir_run(leir_backend *b, const leir_program *program, void *const *buffers,
                     size_t n) {
  leir_kernel *k;
  leir_status st = leir_kernel_new(&k, b, program);
  if (st != LEIR_OK) return st;
  st = leir_kernel_run(k, buffers, n);
  leir_kernel_free(k);
  return st;
}
