/*
 * libFuzzer target for dataset configs (dataset/config.c, the YAML a
 * `leir dataset build` reads): any bytes end in a clean status with a
 * message, quickly (the YAML guard refuses deep nesting before libyaml
 * scans it); an accepted config holds the bounds that size a build (walk
 * count and depth, random shapes), and reading it again gives the same
 * canonical form (its hash names the build in OUT/.work/config).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ds.h"
#include "leir/leir.h"
#include "strbuf.h"

#define REQUIRE(cond) \
  do {                \
    if (!(cond)) abort(); \
  } while (0)

static char *canonical(const char *text, size_t len, leir_status *st) {
  leir__ds_config cfg;
  memset(&cfg, 0, sizeof cfg);
  *st = leir__ds_config_read(&cfg, text, len, "/base");
  if (*st != LEIR_OK) return NULL;
  REQUIRE(cfg.walks <= 10000 && cfg.depth <= 100 && (uint64_t)cfg.walks * cfg.depth <= 100000);
  REQUIRE(cfg.random_shapes <= 100000);
  REQUIRE(cfg.all_workloads || cfg.n_workloads || cfg.programs);
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__ds_config_canonical(&cfg, &b);
  size_t n = 0;
  char *out = leir__sb_finish(&b, &n);
  leir__ds_config_free(&cfg);
  REQUIRE(out != NULL);
  return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  leir_status st;
  char *a = canonical((const char *)data, size, &st);
  if (st != LEIR_OK) {
    REQUIRE(a == NULL);
    REQUIRE(st == LEIR_ERR_PARSE || st == LEIR_ERR_LIMIT || st == LEIR_ERR_ARGUMENT ||
            st == LEIR_ERR_NOT_FOUND);
    REQUIRE(leir_error_last()->message[0]);
    return 0;
  }
  char *b = canonical((const char *)data, size, &st);
  REQUIRE(st == LEIR_OK && strcmp(a, b) == 0);
  free(a);
  free(b);
  return 0;
}
