/*
 * libFuzzer target for program files (*.leir.yaml): every input ends in a
 * clean status, and an accepted file written back with
 * leir_program_to_yaml reads back to the same program and signature.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "leir/leir.h"

#define REQUIRE(cond) \
  do {                \
    if (!(cond)) abort(); \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  leir_program *p = NULL;
  leir_status st = leir_program_parse_yaml(&p, (const char *)data, size, NULL);
  if (st != LEIR_OK) {
    REQUIRE(p == NULL);
    REQUIRE(st == LEIR_ERR_PARSE || st == LEIR_ERR_SIGNATURE || st == LEIR_ERR_LIMIT);
    REQUIRE(leir_error_last()->message[0]);
    return 0;
  }
  char *yaml = NULL, *a = NULL, *b = NULL;
  size_t ylen = 0;
  REQUIRE(leir_program_to_yaml(p, &yaml, &ylen) == LEIR_OK);
  leir_program *q = NULL;
  REQUIRE(leir_program_parse_yaml(&q, yaml, ylen, NULL) == LEIR_OK);
  REQUIRE(leir_program_print(p, 0, &a, NULL) == LEIR_OK);
  REQUIRE(leir_program_print(q, 0, &b, NULL) == LEIR_OK);
  REQUIRE(strcmp(a, b) == 0);
  REQUIRE(strcmp(leir_program_name(p), leir_program_name(q)) == 0);
  REQUIRE(leir_program_signature_count(p) == leir_program_signature_count(q));
  for (size_t i = 0; i < leir_program_signature_count(p); i++) {
    leir_tensor_decl x, y;
    REQUIRE(leir_program_signature_get(p, i, &x) == LEIR_OK);
    REQUIRE(leir_program_signature_get(q, i, &y) == LEIR_OK);
    REQUIRE(strcmp(x.name, y.name) == 0 && x.dtype == y.dtype && x.role == y.role && x.rank == y.rank);
    for (uint32_t k = 0; k < x.rank; k++) REQUIRE(x.shape[k] == y.shape[k]);
  }
  st = leir_program_check(p, NULL, NULL);
  REQUIRE(st == LEIR_OK || st == LEIR_ERR_INVALID || st == LEIR_ERR_LIMIT || st == LEIR_ERR_SIGNATURE);
  leir_free(a);
  leir_free(b);
  leir_free(yaml);
  leir_program_free(q);
  leir_program_free(p);
  return 0;
}
