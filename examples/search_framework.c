/* What a search framework does with libleir, over the installed library and
 * pkg-config only (tests/install_test.sh builds and runs it):
 *
 *   cc -std=c11 search_framework.c $(pkg-config --cflags --libs leir) -o search_framework
 *   ./search_framework [BACKEND [SEED]]        (default: interp 1)
 *
 * A seeded random walk: at each depth enumerate the current program's
 * candidates, apply one, verify the result against the source program, time
 * it against the current program (a paired comparison with a stated
 * confidence and a hard time budget) and keep it unless it is slower. The
 * trajectory is kept as the steps' JSON form and replayed at the end from
 * that text alone, to the same program (alpha hash) the walk reached. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <leir/leir.h>

#define DEPTH 3
#define TRIES 4

static const char *SOURCE =
    "L^{16}_{a=0}L^{32}_{c=0}L^{16}_{d=0}"
    "[D^{f32,g}_{a,c}=D^{f32,g}_{a,c}+A^{f32,g}_{a,d}*C^{f32,g}_{d,c};];";

#define TRY(call)                                                                         \
  do {                                                                                    \
    leir_status st_ = (call);                                                             \
    if (st_ != LEIR_OK) {                                                                 \
      fprintf(stderr, "%s: %s (%s)\n", #call, leir_status_name(st_),                      \
              leir_error_last()->message);                                                \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

static uint64_t next_random(uint64_t *state) { /* xorshift64 */
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

/* Is `child` slower than `parent`? Paired rounds, confidence 0.95, at most 0.5 s. */
static leir_order compare(leir_backend *b, const leir_program *child, const leir_program *parent,
                          double *ratio) {
  leir_kernel *kc = NULL, *kp = NULL;
  TRY(leir_kernel_new(&kc, b, child));
  TRY(leir_kernel_new(&kp, b, parent));
  leir_compare_options o;
  TRY(leir_compare_options_init(&o, sizeof o));
  o.min_rounds = 5;
  o.max_rounds = 60;
  o.max_seconds = 0.5;
  o.confidence = 0.95;
  leir_comparison c = {.size = sizeof c};
  TRY(leir_kernels_compare(kc, kp, &o, &c));
  leir_kernel_free(kc);
  leir_kernel_free(kp);
  *ratio = c.ratio;
  return c.order;
}

int main(int argc, char **argv) {
  const char *backend_name = argc > 1 ? argv[1] : "interp";
  uint64_t rng = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
  if (rng == 0) rng = 1;
  printf("libleir %s, backend %s\n", leir_version(), backend_name);

  leir_program *source = NULL;
  TRY(leir_program_parse(&source, SOURCE, strlen(SOURCE), NULL));
  TRY(leir_program_infer_signature(source));
  leir_backend *b = NULL;
  TRY(leir_backend_open(&b, backend_name, NULL));

  leir_program *current = NULL;
  TRY(leir_program_clone(&current, source));
  char *trajectory[DEPTH];
  size_t steps = 0, evaluated = 0;
  /* every divisor as a split factor: steps outside the reference's domain,
   * which replay because their JSON form records the listing's flags */
  leir_candidates_options co = LEIR_CANDIDATES_OPTIONS_INIT;
  co.flags = LEIR_CANDIDATES_ALL_DIVISORS;
  for (int depth = 0; depth < DEPTH; depth++) {
    leir_candidates *list = NULL;
    TRY(leir_candidates_list(&list, current, &co));
    size_t n = leir_candidates_count(list);
    for (int t = 0; t < TRIES && n > 0; t++) {
      size_t i = (size_t)(next_random(&rng) % n);
      leir_program *child = NULL;
      TRY(leir_candidates_apply(&child, list, i));
      evaluated++;
      leir_verify_report *r = NULL;
      TRY(leir_verify(b, source, child, NULL, &r));
      int verified = leir_verdict_passes(r->verdict);
      double ratio = 0;
      leir_order order = verified ? compare(b, child, current, &ratio) : LEIR_ORDER_UNDECIDED;
      const char *text = leir_step_text(leir_candidates_step(list, i));
      printf("depth %d: %s: %s, %s (ratio %.2f)\n", depth, text, leir_verdict_name(r->verdict),
             verified ? leir_order_name(order) : "not timed", ratio);
      leir_verify_report_free(r);
      if (!verified || order == LEIR_ORDER_SLOWER) {
        leir_program_free(child);
        continue;
      }
      TRY(leir_step_to_json(leir_candidates_step(list, i), &trajectory[steps++], NULL));
      leir_program_free(current);
      current = child;
      break;
    }
    leir_candidates_free(list);
  }

  /* replay: the source program and the steps' JSON text are all it takes */
  leir_program *replayed = NULL;
  TRY(leir_program_clone(&replayed, source));
  for (size_t k = 0; k < steps; k++) {
    leir_step *s = NULL;
    leir_program *next = NULL;
    TRY(leir_step_parse(&s, trajectory[k], strlen(trajectory[k])));
    TRY(leir_step_apply(&next, replayed, s, NULL));
    printf("trajectory %zu: %s\n", k, trajectory[k]);
    leir_step_free(s);
    leir_program_free(replayed);
    replayed = next;
    leir_free(trajectory[k]);
  }
  int same = leir_program_hash_alpha(replayed) == leir_program_hash_alpha(current);
  printf("evaluated %zu proposals, kept %zu steps; the trajectory replays from JSON to %s\n",
         evaluated, steps, same ? "the same alpha hash" : "ANOTHER PROGRAM");
  leir_program_free(replayed);
  leir_program_free(current);
  leir_program_free(source);
  leir_backend_free(b);
  return same ? 0 : 1;
}
