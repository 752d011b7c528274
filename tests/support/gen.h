/* A generator of random valid LEIR programs for differential testing
 * (tests/test_differential.c, tests/fuzz/fuzz_gen.c).
 *
 * gen_program(seed) writes a program with its signature: one to three
 * top-level nests over loops of every kind (L P V U B, nested nests),
 * element-wise equations, reductions (+ * max min, which get implicit
 * initialization), if_then_else guards, an indirect index through an
 * integer input, intermediates read by later nests, and every dtype on
 * left-hand sides. Programs are built to pass leir_program_check (the test
 * counts the ones that do not). Deterministic: the same seed gives the same
 * program on every platform. */
#ifndef LEIR_TEST_GEN_H
#define LEIR_TEST_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "leir/leir.h"

typedef struct gen_program {
  char text[8192];     /* LEIR text, canonical form */
  char signature[512]; /* "A:f32:4x6,D:f64:6,I:i32:4 -> C:f32:4x6,..." */
} gen_program;

/* Fills *out for `seed`. */
void gen_generate(uint64_t seed, gen_program *out);

/* Parses out->text and sets the signature; NULL (last error set) when the
 * library refuses it. Caller frees. */
leir_program *gen_parse(const gen_program *g);

#endif
