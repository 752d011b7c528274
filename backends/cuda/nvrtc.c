/*
 * CUDA C -> PTX with NVRTC, and the PTX cache (verification.md §5).
 *
 * libnvrtc is found at build time (meson option `cuda`, $CUDA_PATH or
 * /usr/local/cuda) for its header, and loaded with dlopen at first use. Not
 * linking keeps libleir loadable where the toolkit is absent (a build made
 * on a toolkit machine, installed elsewhere, degrades to
 * LEIR_ERR_UNSUPPORTED) and matches how the driver is loaded.
 *
 * Cache key: XXH3-64 of (source, NVRTC version, options, backend version).
 * Memory: a small table shared by the process (mutex). Disk: when
 * $LEIR_CACHE_DIR is set, <key>.ptx files through backends/cache.c
 * (written atomically).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "backend.h"
#include "cuda_internal.h"
#include "error.h"

#define BACKEND_VERSION "leir-cuda-1"

#ifdef LEIR_HAVE_NVRTC
#include <nvrtc.h>

typedef struct nvrtc_api {
  void *lib;
  int major, minor;
  const char *(*GetErrorString)(nvrtcResult);
  nvrtcResult (*Version)(int *, int *);
  nvrtcResult (*CreateProgram)(nvrtcProgram *, const char *, const char *, int,
                               const char *const *, const char *const *);
  nvrtcResult (*DestroyProgram)(nvrtcProgram *);
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t *);
  nvrtcResult (*GetPTX)(nvrtcProgram, char *);
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t *);
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char *);
} nvrtc_api;

static nvrtc_api api;
static char why[512] = "NVRTC not loaded";
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  const char *candidates[] = {
#ifdef LEIR_NVRTC_LIBDIR
      LEIR_NVRTC_LIBDIR "/libnvrtc.so",
#endif
      "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};
  void *lib = NULL;
  for (size_t k = 0; k < sizeof candidates / sizeof *candidates && !lib; k++)
    lib = dlopen(candidates[k], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *err = dlerror();
    snprintf(why, sizeof why, "NVRTC unavailable: cannot load libnvrtc (%s)", err ? err : "?");
    return;
  }
#define SYM(field, name)                                                        \
  do {                                                                          \
    *(void **)(&api.field) = dlsym(lib, name);                                  \
    if (!api.field) {                                                           \
      snprintf(why, sizeof why, "NVRTC unavailable: libnvrtc lacks %s", name); \
      dlclose(lib);                                                             \
      return;                                                                   \
    }                                                                           \
  } while (0)
  SYM(GetErrorString, "nvrtcGetErrorString");
  SYM(Version, "nvrtcVersion");
  SYM(CreateProgram, "nvrtcCreateProgram");
  SYM(DestroyProgram, "nvrtcDestroyProgram");
  SYM(CompileProgram, "nvrtcCompileProgram");
  SYM(GetPTXSize, "nvrtcGetPTXSize");
  SYM(GetPTX, "nvrtcGetPTX");
  SYM(GetProgramLogSize, "nvrtcGetProgramLogSize");
  SYM(GetProgramLog, "nvrtcGetProgramLog");
#undef SYM
  if (api.Version(&api.major, &api.minor) != NVRTC_SUCCESS) {
    snprintf(why, sizeof why, "NVRTC unavailable: nvrtcVersion failed");
    dlclose(lib);
    return;
  }
  snprintf(why, sizeof why, "NVRTC %d.%d", api.major, api.minor);
  api.lib = lib;
}

static bool available(void) {
  pthread_once(&once, load);
  return api.lib != NULL;
}

const char *leir__nvrtc_identity(void) {
  available();
  return why;
}

/* ---- cache ----------------------------------------------------------------- */

#define MEM_SLOTS 512

typedef struct entry {
  uint64_t key;
  char *ptx;
  size_t len;
} entry;

static entry mem[MEM_SLOTS];
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;

static char *dup_text(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

static bool mem_get(uint64_t key, char **ptx, size_t *len) {
  bool hit = false;
  pthread_mutex_lock(&mem_lock);
  entry *e = &mem[key % MEM_SLOTS];
  if (e->ptx && e->key == key) {
    *ptx = dup_text(e->ptx, e->len);
    *len = e->len;
    hit = *ptx != NULL;
  }
  pthread_mutex_unlock(&mem_lock);
  return hit;
}

static void mem_put(uint64_t key, const char *ptx, size_t len) {
  char *copy = dup_text(ptx, len);
  if (!copy) return;
  pthread_mutex_lock(&mem_lock);
  entry *e = &mem[key % MEM_SLOTS];
  free(e->ptx);
  e->key = key;
  e->ptx = copy;
  e->len = len;
  pthread_mutex_unlock(&mem_lock);
}

/* The shared on-disk cache (backends/cache.c), under $LEIR_CACHE_DIR. */
static bool disk_get(uint64_t key, char **ptx, size_t *len) {
  const char *dir = getenv("LEIR_CACHE_DIR");
  if (!dir || !*dir) return false;
  size_t n = 0;
  char *raw = leir__cache_load_bytes(dir, key, ".ptx", &n);
  if (!raw) return false;
  *ptx = dup_text(raw, n); /* PTX must be NUL-terminated for the driver */
  free(raw);
  *len = n;
  return *ptx != NULL;
}

static void disk_put(uint64_t key, const char *ptx, size_t len) {
  const char *dir = getenv("LEIR_CACHE_DIR");
  if (dir && *dir) leir__cache_store_bytes(dir, key, ".ptx", ptx, len);
}

/* ---- compile ---------------------------------------------------------------- */

leir_status leir__nvrtc_compile(const char *source, size_t len, const char *arch, bool fmad,
                                char **ptx, size_t *ptx_len, char **log) {
  *ptx = NULL;
  if (ptx_len) *ptx_len = 0;
  if (log) *log = NULL;
  if (!available())
    return leir__error(LEIR_ERR_UNSUPPORTED, "cuda.nvrtc", NULL, 0, 0, "%s", why);
  char opt_arch[96];
  snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
  const char *opts[] = {opt_arch, fmad ? "--fmad=true" : "--fmad=false"};

  XXH3_state_t *h = XXH3_createState();
  if (!h) return leir__error_nomem();
  XXH3_64bits_reset(h);
  XXH3_64bits_update(h, source, len);
  char ident[256];
  int n = snprintf(ident, sizeof ident, "|nvrtc %d.%d|%s|%s|%s|%s", api.major, api.minor, opts[0],
                   opts[1], BACKEND_VERSION, LEIR_VERSION_STRING);
  XXH3_64bits_update(h, ident, (size_t)n);
  uint64_t key = XXH3_64bits_digest(h);
  XXH3_freeState(h);

  size_t got = 0;
  if (mem_get(key, ptx, &got) || disk_get(key, ptx, &got)) {
    mem_put(key, *ptx, got);
    if (ptx_len) *ptx_len = got;
    return LEIR_OK;
  }

  /* NVRTC wants a NUL-terminated source. */
  char *text = dup_text(source, len);
  if (!text) return leir__error_nomem();
  nvrtcProgram prog;
  nvrtcResult r = api.CreateProgram(&prog, text, "leir.cu", 0, NULL, NULL);
  if (r != NVRTC_SUCCESS) {
    free(text);
    return leir__error(r == NVRTC_ERROR_OUT_OF_MEMORY ? LEIR_ERR_NOMEM : LEIR_ERR_INTERNAL,
                       "cuda.nvrtc", NULL, 0, 0, "nvrtcCreateProgram: %s", api.GetErrorString(r));
  }
  r = api.CompileProgram(prog, 2, opts);
  leir_status st = LEIR_OK;
  if (r != NVRTC_SUCCESS) {
    size_t ls = 0;
    char *text_log = NULL;
    if (api.GetProgramLogSize(prog, &ls) == NVRTC_SUCCESS && ls > 0 && (text_log = malloc(ls + 1))) {
      if (api.GetProgramLog(prog, text_log) != NVRTC_SUCCESS) text_log[0] = '\0';
      text_log[ls] = '\0';
    }
    /* First line of the log in the error message; the whole log to the caller. */
    const char *first = text_log ? text_log : api.GetErrorString(r);
    size_t fl = strcspn(first, "\n");
    st = leir__error(r == NVRTC_ERROR_COMPILATION ? LEIR_ERR_COMPILE : LEIR_ERR_INTERNAL,
                     "cuda.compile", NULL, 0, 0, "NVRTC rejected the lowered code: %.*s",
                     (int)(fl > 600 ? 600 : fl), first);
    if (log)
      *log = text_log;
    else
      free(text_log);
  } else {
    size_t ps = 0;
    if (api.GetPTXSize(prog, &ps) != NVRTC_SUCCESS || ps == 0) {
      st = leir__error(LEIR_ERR_INTERNAL, "cuda.nvrtc", NULL, 0, 0, "nvrtcGetPTXSize failed");
    } else {
      char *buf = malloc(ps + 1);
      if (!buf) {
        st = leir__error_nomem();
      } else if (api.GetPTX(prog, buf) != NVRTC_SUCCESS) {
        free(buf);
        st = leir__error(LEIR_ERR_INTERNAL, "cuda.nvrtc", NULL, 0, 0, "nvrtcGetPTX failed");
      } else {
        buf[ps] = '\0';
        size_t plen = strlen(buf);
        *ptx = buf;
        if (ptx_len) *ptx_len = plen;
        mem_put(key, buf, plen);
        disk_put(key, buf, plen);
      }
    }
  }
  api.DestroyProgram(&prog);
  free(text);
  return st;
}

#else /* !LEIR_HAVE_NVRTC */

const char *leir__nvrtc_identity(void) {
  return "NVRTC unavailable: libleir was built without CUDA (meson option cuda)";
}

leir_status leir__nvrtc_compile(const char *source, size_t len, const char *arch, bool fmad,
                                char **ptx, size_t *ptx_len, char **log) {
  (void)source;
  (void)len;
  (void)arch;
  (void)fmad;
  *ptx = NULL;
  if (ptx_len) *ptx_len = 0;
  if (log) *log = NULL;
  return leir__error(LEIR_ERR_UNSUPPORTED, "cuda.nvrtc", NULL, 0, 0, "%s", leir__nvrtc_identity());
}

#endif
