/*
 * libFuzzer target over generated programs (tests/support/gen.c): the first
 * 8 bytes of the input are a generator seed (little-endian; shorter inputs
 * are zero-padded). Properties: the generated program parses with its
 * signature and prints back byte for byte; what leir_program_check accepts
 * the interpreter runs (LEIR_OK, or a run-time error status, never a crash)
 * and every other backend lowers (cpu always, cuda: accepted or refused
 * with a status). Running the compiled C needs a compiler per input, so it
 * is left to tests/test_differential.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "leir/leir.h"

#define REQUIRE(cond)     \
  do {                    \
    if (!(cond)) abort(); \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint64_t seed = 0;
  for (size_t i = 0; i < 8 && i < size; i++) seed |= (uint64_t)data[i] << (8 * i);
  static gen_program g;
  gen_generate(seed, &g);
  leir_program *p = gen_parse(&g);
  REQUIRE(p != NULL);
  char *text = NULL;
  REQUIRE(leir_program_print(p, 0, &text, NULL) == LEIR_OK);
  REQUIRE(strcmp(text, g.text) == 0);
  leir_free(text);
  if (leir_program_check(p, NULL, NULL) == LEIR_OK) {
    size_t n = leir_program_signature_count(p);
    void *bufs[16];
    REQUIRE(n <= 16);
    for (size_t i = 0; i < n; i++) {
      leir_tensor_decl d;
      REQUIRE(leir_program_signature_get(p, i, &d) == LEIR_OK);
      size_t bytes = leir_dtype_size(d.dtype);
      for (uint32_t k = 0; k < d.rank; k++) bytes *= (size_t)d.shape[k];
      bufs[i] = malloc(bytes ? bytes : 1);
    }
    REQUIRE(leir_program_fill_inputs(p, seed, 0, bufs, n) == LEIR_OK);
    leir_backend *b = NULL;
    REQUIRE(leir_backend_open(&b, "interp", NULL) == LEIR_OK);
    leir_status st = leir_run(b, p, bufs, n);
    REQUIRE(st == LEIR_OK || st == LEIR_ERR_RUNTIME);
    leir_backend_free(b);
    for (size_t i = 0; i < n; i++) free(bufs[i]);
    leir_backend_options lo = LEIR_BACKEND_OPTIONS_INIT;
    lo.flags = LEIR_BACKEND_LOWER_ONLY;
    for (size_t k = 0; k < leir_backend_count(); k++) {
      const char *name = leir_backend_name_at(k);
      if (strcmp(name, "interp") == 0) continue;
      if (leir_backend_open(&b, name, &lo) != LEIR_OK) continue;
      char *src = NULL;
      st = leir_backend_lower(b, p, &src, NULL);
      REQUIRE(st == LEIR_OK || (strcmp(name, "cuda") == 0 && st == LEIR_ERR_INVALID));
      leir_free(src);
      leir_backend_free(b);
    }
  }
  leir_program_free(p);
  return 0;
}
