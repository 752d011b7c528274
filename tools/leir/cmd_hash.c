/* leir hash: XXH3-64 of the canonical text (or alpha-normalized). */
#include <inttypes.h>
#include <string.h>

#include "batch.h"
#include "commands.h"

typedef struct hash_opts {
  batch_opts b;
  bool alpha;
} hash_opts;

static int hash_one(const char *label, unsigned line_no, leir_program *p, void *payload) {
  (void)label;
  const hash_opts *o = payload;
  uint64_t h = o->alpha ? leir_program_hash_alpha(p) : leir_program_hash(p);
  if (o->b.json)
    printf("{\"line\":%u,\"hash\":\"%016" PRIx64 "\"}\n", line_no, h);
  else
    printf("%016" PRIx64 "\n", h);
  return EXIT_OK;
}

static void hash_error(unsigned line_no, const leir_error *e, void *payload) {
  const hash_opts *o = payload;
  if (!o->b.json) return;
  printf("{\"line\":%u,\"error\":", line_no);
  tool_json_error(stdout, e, line_no ? line_no - 1 : 0);
  printf("}\n");
}

int cmd_hash(int argc, char **argv) {
  hash_opts o;
  memset(&o, 0, sizeof o);
  tool_args a;
  tool_args_init(&a, "hash", argc, argv);
  const char *opt;
  while ((opt = tool_args_next(&a))) {
    int r = batch_option(&o.b, &a, opt);
    if (r < 0) return EXIT_USAGE;
    if (r) continue;
    if (strcmp(opt, "--alpha") == 0)
      o.alpha = true;
    else
      return tool_usage_error("hash", "unknown option %s", opt);
  }
  if (a.npositional != 1) return tool_usage_error("hash", "expected one input (a file or -)");
  return batch_run(a.positional[0], &o.b, hash_one, hash_error, &o);
}
