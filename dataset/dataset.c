/* leir_dataset: the config, the units and the shard loop
 * (include/leir/experimental/dataset.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ds.h"
#include "clock.h"
#include "error.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

leir_status leir_dataset_options_init(leir_dataset_options *opts, size_t size) {
  if (!opts || size < sizeof(uint32_t) || size > sizeof *opts)
    return leir__error_arg("leir_dataset_options", "bad options pointer or size");
  leir_dataset_options d = LEIR_DATASET_OPTIONS_INIT;
  memcpy(opts, &d, size);
  opts->size = (uint32_t)size;
  return LEIR_OK;
}

static void free_units(leir_dataset *ds) {
  for (size_t i = 0; i < ds->n_units; i++) {
    free(ds->units[i].id);
    free(ds->units[i].shape);
    free(ds->units[i].dtype);
    free(ds->units[i].program_line);
  }
  free(ds->units);
  ds->units = NULL;
  ds->n_units = 0;
}

void leir_dataset_free(leir_dataset *ds) {
  if (!ds) return;
  free_units(ds);
  leir__ds_config_free(&ds->cfg);
  leir_catalog_free(ds->catalog);
  leir_backend_free(ds->interp);
  leir_backend_free(ds->cpu);
  leir_backend_free(ds->cuda);
  leir_backend_free(ds->timer);
  free(ds->out_dir);
  free(ds->work_dir);
  free(ds->summary);
  if (ds->lock_fd >= 0) close(ds->lock_fd);
  free(ds);
}

/* One config per output directory: an exclusive flock on OUT/.work/lock
 * is held while the directory's config is read, compared and written, so
 * of two builds started together on one directory the second sees the
 * first one's config and is refused before it writes anything (without
 * the lock both found no config, both wrote theirs and their units mixed).
 * Shards of one config pass the check one after the other and then share
 * the directory. Waits up to LOCK_WAIT_S for a check in progress (a few
 * milliseconds), then gives up. */
#define LOCK_WAIT_S 30
static leir_status lock_dir(leir_dataset *ds, int how) { /* LOCK_EX or LOCK_SH */
  if (ds->lock_fd < 0) {
    char *path = leir__ds_join(ds->work_dir, "lock");
    if (!path) return leir__error_nomem();
    ds->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
    int e = errno;
    free(path);
    if (ds->lock_fd < 0)
      return leir__error(LEIR_ERR_IO, "dataset.lock", ds->out_dir, 0, 0,
                         "cannot open the lock file of %s: %s", ds->out_dir, strerror(e));
  }
  for (int tries = 0;; tries++) {
    if (flock(ds->lock_fd, how | LOCK_NB) == 0) return LEIR_OK;
    if (errno != EWOULDBLOCK && errno != EINTR)
      return leir__error(LEIR_ERR_IO, "dataset.lock", ds->out_dir, 0, 0, "cannot lock %s: %s",
                         ds->out_dir, strerror(errno));
    if (tries >= LOCK_WAIT_S * 100 || (ds->opts.cancel && *ds->opts.cancel))
      return leir__error(LEIR_ERR_LIMIT, "dataset.lock", ds->out_dir, 0, 0,
                         "%s is locked by another build (%s/.work/lock)", ds->out_dir, ds->out_dir);
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

static leir_status add_unit(leir_dataset *ds, size_t *cap, leir__ds_unit u) {
  if (ds->n_units == *cap) {
    size_t nc = *cap ? *cap * 2 : 16;
    leir__ds_unit *v = realloc(ds->units, nc * sizeof *v);
    if (!v) goto nomem;
    ds->units = v;
    *cap = nc;
  }
  ds->units[ds->n_units++] = u;
  return LEIR_OK;
nomem:
  free(u.id);
  free(u.shape);
  free(u.dtype);
  free(u.program_line);
  return leir__error_nomem();
}

static char *fmt_id(const leir_workload *w, const char *shape, uint32_t draw, const char *dtype) {
  char buf[512];
  char sh[32];
  if (!strcmp(shape, "random"))
    snprintf(sh, sizeof sh, "random%u", draw);
  else
    snprintf(sh, sizeof sh, "%s", shape);
  snprintf(buf, sizeof buf, "level%d/%s@%s%s%s", leir_workload_level(w), leir_workload_name(w), sh,
           dtype ? "/" : "", dtype ? dtype : "");
  return strdup(buf);
}

/* The most units a build may list (its unit files are named %06zu). */
#define MAX_UNITS 1000000

static leir_status list_units(leir_dataset *ds) {
  const leir__ds_config *c = &ds->cfg;
  size_t cap = 0;
  leir_status st;
  size_t nw = c->all_workloads ? leir_catalog_count(ds->catalog) : c->n_workloads;
  /* counted before anything is allocated: workloads x shapes x draws x dtypes */
  uint64_t per_workload = 0;
  for (size_t s = 0; s < c->n_shapes; s++)
    per_workload += strcmp(c->shapes[s], "random") ? 1 : c->random_shapes;
  per_workload *= c->n_dtypes ? c->n_dtypes : 1;
  if (nw && per_workload > MAX_UNITS / nw)
    return leir__error(LEIR_ERR_LIMIT, "dataset.config", NULL, 0, 0,
                       "the config lists %llu workload units (workloads x shapes x "
                       "random_shapes x dtypes); at most %d",
                       (unsigned long long)per_workload * nw, MAX_UNITS);
  for (size_t i = 0; i < nw; i++) {
    const leir_workload *w;
    if (c->all_workloads) {
      w = leir_catalog_get(ds->catalog, i);
      if (!leir_workload_traced(w) || (c->level && leir_workload_level(w) != c->level)) continue;
    } else if (!(w = leir_catalog_find(ds->catalog, c->workloads[i]))) {
      return leir__error(LEIR_ERR_NOT_FOUND, "dataset.config", c->workloads[i], 0, 0,
                         "no workload '%s' in the catalogue %s", c->workloads[i],
                         leir_catalog_dir(ds->catalog));
    }
    for (size_t s = 0; s < c->n_shapes; s++) {
      uint32_t draws = strcmp(c->shapes[s], "random") ? 1 : c->random_shapes;
      for (uint32_t d = 0; d < draws; d++) {
        size_t nd = c->n_dtypes ? c->n_dtypes : 1;
        for (size_t t = 0; t < nd; t++) {
          leir__ds_unit u;
          memset(&u, 0, sizeof u);
          u.workload = w;
          u.shape_draw = d;
          u.id = fmt_id(w, c->shapes[s], d, c->n_dtypes ? c->dtypes[t] : NULL);
          u.shape = strdup(c->shapes[s]);
          u.dtype = c->n_dtypes ? strdup(c->dtypes[t]) : NULL;
          if (!u.id || !u.shape || (c->n_dtypes && !u.dtype)) {
            free(u.id);
            free(u.shape);
            free(u.dtype);
            return leir__error_nomem();
          }
          if ((st = add_unit(ds, &cap, u)) != LEIR_OK) return st;
        }
      }
    }
  }
  if (c->programs) {
    char *text = NULL;
    size_t len = 0;
    if ((st = leir__ds_read_file(c->programs, &text, &len)) != LEIR_OK) return st;
    const char *base = strrchr(c->programs, '/');
    base = base ? base + 1 : c->programs;
    size_t line = 0;
    for (const char *p = text, *end = text + len; p < end;) {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      const char *e = nl ? nl : end;
      line++;
      const char *q = p;
      while (q < e && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
      if (q < e) {
        if (ds->n_units >= MAX_UNITS) {
          free(text);
          return leir__error(LEIR_ERR_LIMIT, "dataset.config", c->programs, 0, 0,
                             "more than %d units (workload units and program lines)", MAX_UNITS);
        }
        leir__ds_unit u;
        memset(&u, 0, sizeof u);
        u.line_no = line;
        char buf[512];
        snprintf(buf, sizeof buf, "%s:%zu", base, line);
        u.id = strdup(buf);
        u.program_line = malloc((size_t)(e - p) + 1);
        if (u.program_line) {
          memcpy(u.program_line, p, (size_t)(e - p));
          u.program_line[e - p] = '\0';
        }
        if (!u.id || !u.program_line) {
          free(u.id);
          free(u.program_line);
          free(text);
          return leir__error_nomem();
        }
        if ((st = add_unit(ds, &cap, u)) != LEIR_OK) {
          free(text);
          return st;
        }
      }
      p = nl ? nl + 1 : end;
    }
    free(text);
  }
  return LEIR_OK;
}

leir_status leir_dataset_open(leir_dataset **out, const char *config, size_t len,
                              const char *base_dir, const char *out_dir,
                              const leir_dataset_options *opts) {
  if (!out) return leir__error_arg("out", "out must not be NULL");
  *out = NULL;
  if (!config || !out_dir || !*out_dir) return leir__error_arg(NULL, "config and out_dir are required");
  leir_dataset *ds = calloc(1, sizeof *ds);
  if (!ds) return leir__error_nomem();
  ds->lock_fd = -1;
  leir_dataset_options d = LEIR_DATASET_OPTIONS_INIT;
  ds->opts = d;
  if (opts) {
    if (opts->size < sizeof(uint32_t) || opts->size > sizeof *opts) {
      free(ds);
      return leir__error_arg("leir_dataset_options", "bad options size %u", opts->size);
    }
    memcpy(&ds->opts, opts, opts->size);
    ds->opts.size = sizeof ds->opts;
  }
  leir_status st;
  if (ds->opts.shard_count == 0 || ds->opts.shard_index >= ds->opts.shard_count) {
    uint32_t k = ds->opts.shard_index, n = ds->opts.shard_count;
    free(ds);
    return leir__error_arg("shard", "shard %u of %u: the index must be below the count", k, n);
  }
  if ((st = leir__ds_config_read(&ds->cfg, config, len, base_dir)) != LEIR_OK) {
    free(ds);
    return st;
  }
  if (ds->cfg.all_workloads || ds->cfg.n_workloads) {
    leir_catalog_options co = LEIR_CATALOG_OPTIONS_INIT;
    co.dir = ds->opts.workloads_dir ? ds->opts.workloads_dir : ds->cfg.workloads_dir;
    if ((st = leir_catalog_open(&ds->catalog, &co)) != LEIR_OK) goto fail;
  }
  if ((st = list_units(ds)) != LEIR_OK) goto fail;
  if (!(ds->out_dir = strdup(out_dir)) || !(ds->work_dir = leir__ds_join(out_dir, ".work"))) {
    st = leir__error_nomem();
    goto fail;
  }
  char *units_dir = leir__ds_join(ds->work_dir, "units");
  if (!units_dir) {
    st = leir__error_nomem();
    goto fail;
  }
  st = leir__ds_mkdirs(units_dir);
  free(units_dir);
  if (st != LEIR_OK) goto fail;
  /* the config this directory builds */
  leir__strbuf b = LEIR__STRBUF_INIT;
  leir__ds_config_canonical(&ds->cfg, &b);
  for (size_t i = 0; i < ds->n_units; i++) {
    leir__sb_putc(&b, '\n');
    leir__sb_puts(&b, ds->units[i].id);
  }
  leir__sb_putc(&b, '\n');
  size_t clen = 0;
  char *canon = leir__sb_finish(&b, &clen);
  if (!canon) {
    st = leir__error_nomem();
    goto fail;
  }
  ds->config_hash = XXH3_64bits(canon, clen);
  char *cpath = leir__ds_join(ds->work_dir, "config");
  char *old = NULL;
  size_t olen = 0;
  leir_status rst;
  if (!cpath) {
    st = leir__error_nomem();
  } else if ((st = lock_dir(ds, LOCK_EX)) != LEIR_OK) {
    /* another build holds the directory */
  } else if ((rst = leir__ds_read_file(cpath, &old, &olen)) == LEIR_OK) {
    if (olen != clen || memcmp(old, canon, clen) != 0)
      st = leir__error(LEIR_ERR_ARGUMENT, "dataset.resume", out_dir, 0, 0,
                       "%s holds a build of a different config; use a new directory", out_dir);
  } else if (rst == LEIR_ERR_NOT_FOUND) {
    st = leir__ds_write_atomic(cpath, canon, clen);
  } else {
    st = rst;
  }
  /* the check is done: shards of this config may go on beside this one */
  if (ds->lock_fd >= 0) {
    close(ds->lock_fd);
    ds->lock_fd = -1;
  }
  free(old);
  free(cpath);
  free(canon);
  if (st != LEIR_OK) goto fail;
  *out = ds;
  return LEIR_OK;
fail:
  leir_dataset_free(ds);
  return st;
}

char *leir__ds_unit_path(const leir_dataset *ds, size_t u) {
  char name[64];
  snprintf(name, sizeof name, "units/%06zu.jsonl", u);
  return leir__ds_join(ds->work_dir, name);
}

static int unit_done(const leir_dataset *ds, size_t u) {
  char *p = leir__ds_unit_path(ds, u);
  struct stat sb;
  int done = p && stat(p, &sb) == 0;
  free(p);
  return done;
}

void leir_dataset_units(const leir_dataset *ds, uint64_t *total, uint64_t *done) {
  uint64_t d = 0;
  for (size_t i = 0; ds && i < ds->n_units; i++) d += (uint64_t)unit_done(ds, i);
  if (total) *total = ds ? ds->n_units : 0;
  if (done) *done = d;
}

leir_status leir__ds_backend(leir_dataset *ds, uint64_t evaluations, leir_backend **out) {
  const char *want = ds->cfg.backend;
  leir_status st;
  if (!strcmp(want, "auto")) {
    if (evaluations <= ds->cfg.interp_max_evaluations) want = "interp";
    else if (!ds->cuda_failed) want = "cuda";
    else want = "cpu";
  }
  leir_backend **slot = !strcmp(want, "interp") ? &ds->interp : !strcmp(want, "cpu") ? &ds->cpu : &ds->cuda;
  if (!*slot) {
    /* Verification kernels run on verify.threads (default 1) threads: a
     * verdict does not depend on it (only loops proven independent run in
     * parallel), small verification kernels lose more to OpenMP start-up and
     * barrier spinning than they gain, and a build parallelizes over
     * processes (--shard, Ray) instead. */
    leir_backend_options bo = LEIR_BACKEND_OPTIONS_INIT;
    bo.threads = ds->cfg.verify_threads;
    st = leir_backend_open(slot, want, &bo);
    if (st != LEIR_OK) {
      if (!strcmp(want, "cuda") && !strcmp(ds->cfg.backend, "auto")) {
        ds->cuda_failed = 1;
        return leir__ds_backend(ds, evaluations, out);
      }
      return st;
    }
  }
  *out = *slot;
  return LEIR_OK;
}

leir_status leir_dataset_run(leir_dataset *ds) {
  if (!ds) return leir__error_arg("dataset", "dataset must not be NULL");
  leir_dataset_progress pr;
  memset(&pr, 0, sizeof pr);
  double t0 = leir__now();
  uint32_t k = ds->opts.shard_index, n = ds->opts.shard_count;
  for (size_t u = 0; u < ds->n_units; u++)
    if (u % n == k) pr.units_total++;
  char *units_dir = leir__ds_join(ds->work_dir, "units");
  if (units_dir) leir__ds_clean_tmp(units_dir);
  free(units_dir);
  for (size_t u = 0; u < ds->n_units; u++) {
    if (u % n != k) continue;
    if (unit_done(ds, u)) {
      pr.units_done++;
      pr.units_resumed++;
      continue;
    }
    if (ds->opts.cancel && *ds->opts.cancel) return leir__error(LEIR_ERR_CANCELLED, "dataset.cancelled", NULL, 0, 0, "cancelled");
    uint64_t verified = 0, kept = 0;
    leir_status st = leir__ds_unit_build(ds, u, &verified, &kept);
    if (st != LEIR_OK) return st;
    pr.units_done++;
    pr.samples_verified += verified;
    pr.samples_kept += kept;
    pr.elapsed_s = leir__now() - t0;
    if (ds->opts.progress) ds->opts.progress(&pr, ds->opts.payload);
  }
  if (pr.units_resumed && ds->opts.progress) {
    pr.elapsed_s = leir__now() - t0;
    ds->opts.progress(&pr, ds->opts.payload);
  }
  uint64_t total, done;
  leir_dataset_units(ds, &total, &done);
  if (done < total) return LEIR_OK;
  leir_status st = leir__ds_finalize(ds);
  if (st == LEIR_OK) ds->complete = 1;
  return st;
}

int leir_dataset_complete(const leir_dataset *ds) { return ds && ds->complete; }

leir_status leir_dataset_summary_json(const leir_dataset *ds, char **out, size_t *out_len) {
  if (!out) return leir__error_arg("out", "out must not be NULL");
  *out = NULL;
  if (!ds || !ds->complete || !ds->summary)
    return leir__error_arg("dataset", "the outputs are not written yet");
  size_t n = strlen(ds->summary);
  *out = malloc(n + 1);
  if (!*out) return leir__error_nomem();
  memcpy(*out, ds->summary, n + 1);
  if (out_len) *out_len = n;
  return LEIR_OK;
}
