/* leir run: run a program once on seeded inputs; print its outputs'
 * checksums and the kernel time. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "commands.h"
#include "npy.h"
#include "run_opts.h"

static double value_at(const void *buf, leir_dtype dt, uint64_t i) {
  switch (dt) {
    case LEIR_F64: return ((const double *)buf)[i];
    case LEIR_F32: return ((const float *)buf)[i];
    case LEIR_I8: return ((const int8_t *)buf)[i];
    case LEIR_I16: return ((const int16_t *)buf)[i];
    case LEIR_I32: return ((const int32_t *)buf)[i];
    case LEIR_I64: return (double)((const int64_t *)buf)[i];
    case LEIR_U8:
    case LEIR_BOOL: return ((const uint8_t *)buf)[i];
    case LEIR_F16:
    case LEIR_BF16: {
      /* widen the half to float by hand (the tool uses the public API only) */
      uint16_t h = ((const uint16_t *)buf)[i];
      if (dt == LEIR_BF16) {
        uint32_t bits = (uint32_t)h << 16;
        float f;
        memcpy(&f, &bits, 4);
        return f;
      }
      int e = (h >> 10) & 31, m = h & 1023;
      double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
      return (h & 0x8000) ? -v : v;
    }
    default: return 0;
  }
}

/* --inputs DIR: every input from DIR/NAME.npy; --outputs DIR: every output
 * to DIR/NAME.npy. */
static int npy_io(leir_kernel *k, void **bufs, size_t n, const char *dir, bool outputs) {
  for (size_t i = 0; i < n; i++) {
    leir_tensor_decl d;
    leir_kernel_buffer(k, i, &d);
    if ((d.role == LEIR_ROLE_OUTPUT) != outputs) continue;
    char path[4096], err[512];
    if ((size_t)snprintf(path, sizeof path, "%s/%s.npy", dir, d.name) >= sizeof path) {
      fprintf(stderr, "leir run: path too long: %s\n", dir);
      return EXIT_USAGE;
    }
    int r = outputs ? npy_write(path, d.dtype, d.shape, d.rank, bufs[i], err, sizeof err)
                    : npy_read(path, d.dtype, d.shape, d.rank, bufs[i], err, sizeof err);
    if (r) {
      fprintf(stderr, "%s: error: %s\n", path, err);
      return EXIT_INVALID;
    }
  }
  return EXIT_OK;
}

int cmd_run(int argc, char **argv) {
  run_opts o;
  run_opts_init(&o);
  uint32_t set = 0;
  long print = 0;
  const char *in_dir = NULL, *out_dir = NULL;
  tool_args a;
  tool_args_init(&a, "run", argc, argv);
  const char *opt, *v;
  while ((opt = tool_args_next(&a))) {
    int r = run_option(&o, &a, opt);
    if (r < 0) return EXIT_USAGE;
    if (r) continue;
    if (strncmp(opt, "--set", 5) == 0 && (opt[5] == '\0' || opt[5] == '=')) {
      if (!(v = tool_args_value(&a, opt))) return EXIT_USAGE;
      char *end;
      long n = strtol(v, &end, 10);
      if (*end || end == v || n < 0 || n > 1000) return tool_usage_error("run", "--set needs 0..1000");
      set = (uint32_t)n;
    } else if (!strcmp(opt, "--inputs") || !strncmp(opt, "--inputs=", 9)) {
      if (!(in_dir = tool_args_value(&a, "--inputs"))) return EXIT_USAGE;
    } else if (!strcmp(opt, "--outputs") || !strncmp(opt, "--outputs=", 10)) {
      if (!(out_dir = tool_args_value(&a, "--outputs"))) return EXIT_USAGE;
    } else if (strncmp(opt, "--print", 7) == 0 && (opt[7] == '\0' || opt[7] == '=')) {
      if (!(v = tool_args_value(&a, opt))) return EXIT_USAGE;
      char *end;
      print = strtol(v, &end, 10);
      if (*end || end == v || print < 0) return tool_usage_error("run", "--print needs a count");
    } else {
      return tool_usage_error("run", "unknown option %s", opt);
    }
  }
  if (a.npositional != 1) return tool_usage_error("run", "expected one input (a file or -)");
  const char *label = tool_label(a.positional[0]);
  int rc;
  leir_program *p = run_load(&o, a.positional[0], true, &rc);
  if (!p) return rc;
  leir_backend *b = NULL;
  rc = run_open_backend(&o, &b);
  leir_kernel *k = NULL;
  void **bufs = NULL;
  size_t n = 0;
  if (rc == EXIT_OK) {
    leir_status st = leir_kernel_new(&k, b, p);
    if (st != LEIR_OK) {
      tool_print_error(label, 0, leir_error_last());
      if (st == LEIR_ERR_COMPILE) fprintf(stderr, "%s\n", leir_backend_compile_log(b));
      rc = st == LEIR_ERR_COMPILE ? EXIT_INVALID : tool_exit_for(st);
    }
  }
  if (k) {
    n = leir_kernel_buffer_count(k);
    bufs = calloc(n ? n : 1, sizeof *bufs);
    for (size_t i = 0; bufs && i < n; i++) {
      leir_tensor_decl d;
      leir_kernel_buffer(k, i, &d);
      size_t elems = 1;
      for (uint32_t r = 0; r < d.rank; r++) elems *= (size_t)d.shape[r];
      bufs[i] = malloc(elems * leir_dtype_size(d.dtype));
      if (!bufs[i]) rc = EXIT_INTERNAL;
    }
    if (!bufs) rc = EXIT_INTERNAL;
    leir_status st = rc == EXIT_OK ? leir_program_fill_inputs(p, o.seed, set, bufs, n) : LEIR_ERR_NOMEM;
    if (st == LEIR_OK && in_dir) {
      rc = npy_io(k, bufs, n, in_dir, false);
      if (rc != EXIT_OK) goto done;
    }
    if (st == LEIR_OK) st = leir_kernel_run(k, bufs, n);
    if (st == LEIR_OK && out_dir) {
      rc = npy_io(k, bufs, n, out_dir, true);
      if (rc != EXIT_OK) goto done;
    }
    leir_timing t;
    memset(&t, 0, sizeof t);
    if (st == LEIR_OK) {
      leir_bench_options bo = LEIR_BENCH_OPTIONS_INIT;
      bo.flags = LEIR_BENCH_NO_FLUSH;
      bo.warmup = 0;
      bo.min_runs = bo.max_runs = 1;
      bo.min_seconds = 0;
      bo.seed = o.seed;
      leir_kernel *one[1] = {k};
      st = leir_kernels_time(one, 1, &bo, &t);
    }
    if (st != LEIR_OK) {
      const leir_error *e = leir_error_last();
      if (o.json) {
        printf("{\"status\":\"%s\",\"error\":", leir_status_name(st));
        tool_json_error(stdout, e, 0);
        printf("}\n");
      } else {
        tool_print_error(label, 0, e);
      }
      rc = st == LEIR_ERR_RUNTIME || st == LEIR_ERR_TIMEOUT ? EXIT_INVALID : tool_exit_for(st);
    } else {
      if (o.json)
        printf("{\"status\":\"OK\",\"backend\":\"%s\",\"seed\":%" PRIu64 ",\"set\":%u,\"time_s\":%.17g,\"outputs\":[",
               leir_backend_get_name(b), o.seed, set, t.median_s);
      else
        printf("backend %s, seed %" PRIu64 ", input set %u: %.6f ms\n", leir_backend_get_name(b),
               o.seed, set, t.median_s * 1e3);
      bool first = true;
      for (size_t i = 0; i < n; i++) {
        leir_tensor_decl d;
        leir_kernel_buffer(k, i, &d);
        if (d.role != LEIR_ROLE_OUTPUT) continue;
        uint64_t elems = 1;
        for (uint32_t r = 0; r < d.rank; r++) elems *= (uint64_t)d.shape[r];
        uint64_t h = XXH3_64bits(bufs[i], (size_t)elems * leir_dtype_size(d.dtype));
        double sum = 0, mn = INFINITY, mx = -INFINITY;
        uint64_t nans = 0;
        for (uint64_t e = 0; e < elems; e++) {
          double x = value_at(bufs[i], d.dtype, e);
          if (isnan(x)) {
            nans++;
            continue;
          }
          sum += x;
          if (x < mn) mn = x;
          if (x > mx) mx = x;
        }
        char shape[256];
        size_t sn = 0;
        shape[0] = '\0';
        for (uint32_t r = 0; r < d.rank && sn + 24 < sizeof shape; r++)
          sn += (size_t)snprintf(shape + sn, sizeof shape - sn, "%s%" PRId64, r ? "," : "", d.shape[r]);
        if (o.json) {
          printf("%s{\"name\":\"%s\",\"dtype\":\"%s\",\"shape\":[%s],\"xxh3\":\"%016" PRIx64
                 "\",\"sum\":%.17g,\"nan\":%" PRIu64 "}",
                 first ? "" : ",", d.name, leir_dtype_name(d.dtype), shape, h,
                 isfinite(sum) ? sum : 0.0, nans);
        } else {
          printf("  %s %s [%s]: xxh3 %016" PRIx64 ", sum %.17g, min %.9g, max %.9g, %" PRIu64
                 " NaN\n",
                 d.name, leir_dtype_name(d.dtype), shape, h, sum, mn, mx, nans);
          for (long e = 0; e < print && (uint64_t)e < elems; e++)
            printf("    [%ld] %.17g\n", e, value_at(bufs[i], d.dtype, (uint64_t)e));
        }
        first = false;
      }
      if (o.json) printf("]}\n");
    }
  done:
    for (size_t i = 0; bufs && i < n; i++) free(bufs[i]);
    free(bufs);
  }
  leir_kernel_free(k);
  leir_backend_free(b);
  leir_program_free(p);
  return rc;
}
