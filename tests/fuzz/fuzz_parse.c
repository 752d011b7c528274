/*
 * libFuzzer target for the LEIR parser and everything a parsed program
 * goes through. The first input byte picks the parse mode (bit 0: lenient);
 * the rest is the text. Besides crashes, leaks and hangs (the sanitizers'
 * job), it checks properties that must hold for every accepted program:
 *   - print(parse(text)) parses again and prints the same;
 *   - the pretty text parses (lenient) to the same canonical text;
 *   - check, hash, alpha hash, inference and YAML files end in a clean
 *     status, and a YAML file written for the program reads back.
 * A broken property aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "leir/leir.h"

#define REQUIRE(cond) \
  do {                \
    if (!(cond)) abort(); \
  } while (0)

static int clean(leir_status st) {
  return st == LEIR_OK || st == LEIR_ERR_PARSE || st == LEIR_ERR_INVALID || st == LEIR_ERR_LIMIT ||
         st == LEIR_ERR_SIGNATURE;
}

static void exercise(leir_program *p) {
  char *text = NULL, *again = NULL, *pretty = NULL;
  size_t len = 0;
  REQUIRE(leir_program_print(p, 0, &text, &len) == LEIR_OK);
  leir_program *q = NULL;
  REQUIRE(leir_program_parse(&q, text, len, NULL) == LEIR_OK);
  REQUIRE(leir_program_print(q, 0, &again, NULL) == LEIR_OK);
  REQUIRE(strcmp(text, again) == 0);
  REQUIRE(leir_program_hash(p) == leir_program_hash(q));
  leir_free(again);
  leir_program_free(q);

  REQUIRE(leir_program_print(p, LEIR_PRINT_PRETTY, &pretty, NULL) == LEIR_OK);
  leir_parse_options lo = LEIR_PARSE_OPTIONS_INIT;
  lo.flags = LEIR_PARSE_LENIENT;
  REQUIRE(leir_program_parse(&q, pretty, strlen(pretty), &lo) == LEIR_OK);
  REQUIRE(leir_program_print(q, 0, &again, NULL) == LEIR_OK);
  REQUIRE(strcmp(text, again) == 0);
  leir_free(again);
  leir_free(pretty);
  leir_program_free(q);

  leir_diagnostics *d = NULL;
  leir_status st = leir_program_check(p, NULL, &d);
  REQUIRE(clean(st));
  REQUIRE((st == LEIR_OK) == (leir_diagnostics_count(d) == 0));
  leir_diagnostics_free(d);
  (void)leir_program_hash_alpha(p);

  REQUIRE(leir_program_clone(&q, p) == LEIR_OK);
  st = leir_program_infer_signature(q);
  REQUIRE(clean(st));
  if (st == LEIR_OK) {
    char *yaml = NULL;
    size_t ylen = 0;
    REQUIRE(leir_program_to_yaml(q, &yaml, &ylen) == LEIR_OK);
    leir_program *r = NULL;
    REQUIRE(leir_program_parse_yaml(&r, yaml, ylen, NULL) == LEIR_OK);
    REQUIRE(leir_program_print(r, 0, &again, NULL) == LEIR_OK);
    REQUIRE(strcmp(text, again) == 0);
    REQUIRE(leir_program_check(r, NULL, NULL) == leir_program_check(q, NULL, NULL));
    leir_free(again);
    leir_program_free(r);
    leir_free(yaml);
  }
  leir_program_free(q);
  leir_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  leir_parse_options o = LEIR_PARSE_OPTIONS_INIT;
  o.flags = (data[0] & 1) ? LEIR_PARSE_LENIENT : 0;
  leir_program *p = NULL;
  leir_status st = leir_program_parse(&p, (const char *)data + 1, size - 1, &o);
  if (st != LEIR_OK) {
    REQUIRE(p == NULL);
    REQUIRE(st == LEIR_ERR_PARSE || st == LEIR_ERR_LIMIT);
    const leir_error *e = leir_error_last();
    REQUIRE(e->status == st && e->rule[0] && e->message[0]);
    return 0;
  }
  exercise(p);
  leir_program_free(p);
  return 0;
}
