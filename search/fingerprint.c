/* The measurement database's key parts that name where and how a time was
 * taken: the machine fingerprint (the CPU model from /proc/cpuinfo, the CPU
 * and thread counts, the architecture, hashed with the project's XXH3 like
 * program identities) and the measurement protocol. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#include "error.h"
#include "options.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* ---- keys: machine fingerprint and protocol --------------------------------- */

leir_status leir_search_machine_fingerprint(uint32_t threads, char *buf, size_t cap) {
  if (!buf || cap < 17) return leir__error_arg("buf", "the buffer is NULL or under 17 bytes");
  char model[256] = "unknown";
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "model name", 10) == 0 || strncmp(line, "Model", 5) == 0 ||
          strncmp(line, "CPU part", 8) == 0) {
        const char *c = strchr(line, ':');
        if (c) {
          snprintf(model, sizeof model, "%s", c + 1);
          break;
        }
      }
    }
    fclose(f);
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  char desc[512];
  snprintf(desc, sizeof desc, "%s|cpus=%ld|threads=%u|%s", model, cpus,
           threads ? threads : (unsigned)cpus,
#if defined(__x86_64__)
           "x86_64"
#elif defined(__aarch64__)
           "aarch64"
#else
           "other"
#endif
  );
  snprintf(buf, cap, "%016llx", (unsigned long long)XXH3_64bits(desc, strlen(desc)));
  return LEIR_OK;
}

leir_status leir_search_protocol(const leir_compare_options *compare,
                                 const leir_verifier_options *verifier, char *buf, size_t cap) {
  if (!buf || cap == 0) return leir__error_arg("buf", "the buffer is NULL or empty");
  leir_compare_options c;
  leir_verifier_options v;
  leir_status st = LEIR__OPTIONS_READ(leir_compare_options, &c, compare, LEIR_COMPARE_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  st = LEIR__OPTIONS_READ(leir_verifier_options, &v, verifier, LEIR_VERIFIER_OPTIONS_INIT);
  if (st != LEIR_OK) return st;
  snprintf(buf, cap,
           "compare/w%u/r%u-%u/t%g/c%g/e%g/s%llu/%s;verify/f%u/s%llu/k%u/r%g/a%g/x%g/m%g",
           c.warmup, c.min_rounds, c.max_rounds, c.max_seconds, c.confidence, c.min_effect,
           (unsigned long long)c.seed, (c.flags & LEIR_BENCH_NO_FLUSH) ? "noflush" : "flush",
           v.flags, (unsigned long long)v.seed, v.input_sets, v.rtol, v.atol, v.reassoc_factor,
           v.min_finite_fraction);
  return LEIR_OK;
}
