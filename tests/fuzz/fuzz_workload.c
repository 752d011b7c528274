/*
 * libFuzzer target for workload files (lib/workload.c, the *.yaml files of
 * a workload catalogue): any bytes end in a clean status with a message,
 * quickly (the YAML guard refuses deep nesting before libyaml scans it); an
 * accepted file is one named workload whose parameters keep their ranges,
 * and expanding it at its small shape either fails cleanly or gives a
 * program file that reads back to the same program.
 */
#define LEIR_EXPERIMENTAL
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "leir/experimental/workload.h"
#include "leir/leir.h"

#define REQUIRE(cond) \
  do {                \
    if (!(cond)) abort(); \
  } while (0)

static int clean(leir_status st) {
  return st == LEIR_ERR_PARSE || st == LEIR_ERR_LIMIT || st == LEIR_ERR_ARGUMENT ||
         st == LEIR_ERR_INVALID || st == LEIR_ERR_SIGNATURE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  leir_catalog *cat = NULL;
  REQUIRE(leir_catalog_new(&cat) == LEIR_OK);
  leir_status st = leir_catalog_add_text(cat, (const char *)data, size, "fuzz.yaml");
  if (st != LEIR_OK) {
    REQUIRE(clean(st));
    REQUIRE(leir_error_last()->message[0]);
    REQUIRE(leir_catalog_count(cat) == 0);
    leir_catalog_free(cat);
    return 0;
  }
  REQUIRE(leir_catalog_count(cat) == 1);
  const leir_workload *w = leir_catalog_get(cat, 0);
  REQUIRE(w && leir_workload_name(w)[0]);
  REQUIRE(leir_catalog_find(cat, leir_workload_name(w)) == w);
  size_t np = leir_workload_param_count(w);
  for (size_t i = 0; i < np; i++) {
    leir_workload_param p;
    REQUIRE(leir_workload_param_get(w, i, &p) == LEIR_OK);
    REQUIRE(p.name && p.name[0] && p.min <= p.max);
  }
  leir_emit_options eo = LEIR_EMIT_OPTIONS_INIT;
  eo.shape = LEIR_SHAPE_SMALL;
  char *yaml = NULL;
  leir_program *p = NULL;
  double values[64];
  st = leir_workload_emit(w, &eo, &yaml, &p, np <= 64 ? values : NULL, np <= 64 ? 64 : 0);
  if (st == LEIR_OK) {
    leir_program *q = NULL;
    REQUIRE(leir_program_parse_yaml(&q, yaml, strlen(yaml), NULL) == LEIR_OK);
    char *a = NULL, *b = NULL;
    REQUIRE(leir_program_print(p, 0, &a, NULL) == LEIR_OK);
    REQUIRE(leir_program_print(q, 0, &b, NULL) == LEIR_OK);
    REQUIRE(strcmp(a, b) == 0);
    leir_free(a);
    leir_free(b);
    leir_program_free(q);
  } else {
    REQUIRE(clean(st) || st == LEIR_ERR_NOMEM);
  }
  leir_free(yaml);
  leir_program_free(p);
  leir_catalog_free(cat);
  return 0;
}
