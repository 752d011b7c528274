/*
 * The signature object of a conformance-corpus row ("signature": {"inputs":
 * [{"name","dtype","shape"}], "outputs": [...]}) applied to a program, for
 * the verification benchmarks. Header-only: bench/verifier_side_by_side.sh
 * compiles verifier_side.c against an older libleir without meson.
 */
#ifndef LEIR_BENCH_CORPUS_SIGNATURE_H
#define LEIR_BENCH_CORPUS_SIGNATURE_H

#include "jsonl.h" /* tests/support */
#include "leir/leir.h"

static void bench_set_signature(leir_program *p, const jsonl_value *sig) {
  leir_tensor_decl d[64];
  int64_t shapes[64][LEIR_MAX_RANK];
  size_t nd = 0;
  for (int role = 0; role < 2; role++) {
    const jsonl_value *list = jsonl_get(sig, role ? "outputs" : "inputs");
    for (size_t k = 0; k < jsonl_len(list) && nd < 64; k++, nd++) {
      const jsonl_value *e = jsonl_at(list, k);
      d[nd].name = jsonl_str(jsonl_get(e, "name"));
      leir_dtype_from_name(jsonl_str(jsonl_get(e, "dtype")), &d[nd].dtype);
      d[nd].role = role ? LEIR_ROLE_OUTPUT : LEIR_ROLE_INPUT;
      const jsonl_value *sh = jsonl_get(e, "shape");
      d[nd].rank = (uint32_t)jsonl_len(sh);
      for (size_t r = 0; r < jsonl_len(sh); r++) shapes[nd][r] = jsonl_int(jsonl_at(sh, r), 1);
      d[nd].shape = shapes[nd];
    }
  }
  leir_program_set_signature(p, d, nd);
}

#endif
