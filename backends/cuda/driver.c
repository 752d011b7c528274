/*
 * The CUDA Driver API, loaded at run time with dlopen("libcuda.so.1"): the
 * library has no link-time dependency on the driver, so it loads and
 * reports LEIR_ERR_NO_DEVICE on machines without one. The few types and
 * constants used are declared here (ABI-stable values from cuda.h), so this
 * file builds without the toolkit too.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "driver.h"
#include "error.h"
#include "options.h"

leir__cu_api leir__cu;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static leir_status open_status = LEIR_ERR_NO_DEVICE;
static char open_why[512] = "no CUDA device: the driver was not probed";

static const char *err_text(CUresult r) {
  const char *s = NULL;
  if (leir__cu.GetErrorString && leir__cu.GetErrorString(r, &s) == 0 && s) return s;
  return "unknown CUDA error";
}

const char *leir__cu_error_text(CUresult r) { return err_text(r); }

static void probe(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(open_why, sizeof open_why,
             "no CUDA device: the CUDA driver (libcuda.so.1) cannot be loaded (%s)", e ? e : "?");
    return;
  }
#define SYM2(field, name, alt)                                                                 \
  do {                                                                                         \
    *(void **)(&leir__cu.field) = dlsym(lib, name);                                            \
    if (!leir__cu.field && alt) *(void **)(&leir__cu.field) = dlsym(lib, alt ? alt : name);     \
    if (!leir__cu.field) {                                                                     \
      snprintf(open_why, sizeof open_why, "no CUDA device: libcuda.so.1 lacks %s", name);     \
      return;                                                                                  \
    }                                                                                          \
  } while (0)
#define SYM(field, name) SYM2(field, name, (const char *)NULL)
  SYM(GetErrorString, "cuGetErrorString");
  SYM(Init, "cuInit");
  SYM(DriverGetVersion, "cuDriverGetVersion");
  SYM(DeviceGetCount, "cuDeviceGetCount");
  SYM(DeviceGet, "cuDeviceGet");
  SYM(DeviceGetName, "cuDeviceGetName");
  SYM(DeviceGetAttribute, "cuDeviceGetAttribute");
  SYM(DeviceTotalMem, "cuDeviceTotalMem_v2");
  SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  SYM2(DevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2", "cuDevicePrimaryCtxReset");
  SYM(CtxSetCurrent, "cuCtxSetCurrent");
  SYM(CtxSynchronize, "cuCtxSynchronize");
  SYM(ModuleLoadDataEx, "cuModuleLoadDataEx");
  SYM(ModuleGetFunction, "cuModuleGetFunction");
  SYM(ModuleUnload, "cuModuleUnload");
  SYM(MemAlloc, "cuMemAlloc_v2");
  SYM(MemFree, "cuMemFree_v2");
  SYM(MemcpyHtoD, "cuMemcpyHtoD_v2");
  SYM(MemcpyDtoH, "cuMemcpyDtoH_v2");
  SYM(MemsetD8, "cuMemsetD8_v2");
  SYM(MemsetD32, "cuMemsetD32_v2");
  SYM(LaunchKernel, "cuLaunchKernel");
  SYM(EventCreate, "cuEventCreate");
  SYM2(EventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
  SYM(EventRecord, "cuEventRecord");
  SYM(EventSynchronize, "cuEventSynchronize");
  SYM(EventQuery, "cuEventQuery");
  SYM2(EventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
#undef SYM
#undef SYM2
  CUresult r = leir__cu.Init(0);
  if (r != 0) {
    snprintf(open_why, sizeof open_why, "no CUDA device: cuInit failed (%s)", err_text(r));
    return;
  }
  int count = 0;
  r = leir__cu.DeviceGetCount(&count);
  if (r != 0 || count < 1) {
    snprintf(open_why, sizeof open_why, "no CUDA device: the driver reports %s",
             r ? err_text(r) : "no devices");
    return;
  }
  r = leir__cu.DeviceGet(&leir__cu.device, 0);
  if (r == 0) r = leir__cu.DevicePrimaryCtxRetain(&leir__cu.ctx, leir__cu.device);
  if (r != 0) {
    snprintf(open_why, sizeof open_why, "no CUDA device: cannot open device 0 (%s)", err_text(r));
    return;
  }
  leir__cu.DriverGetVersion(&leir__cu.driver_version);
  leir__cu.DeviceGetAttribute(&leir__cu.cc_major, 75, leir__cu.device);
  leir__cu.DeviceGetAttribute(&leir__cu.cc_minor, 76, leir__cu.device);
  leir__cu.DeviceGetAttribute(&leir__cu.sms, 16, leir__cu.device);
  leir__cu.DeviceGetAttribute(&leir__cu.l2_bytes, 38, leir__cu.device);
  leir__cu.lib = lib;
  open_status = LEIR_OK;
  snprintf(open_why, sizeof open_why, "CUDA device 0 available");
}

leir_status leir__cuda_driver_open(void) {
  pthread_once(&once, probe);
  if (open_status != LEIR_OK)
    return leir__error(open_status, "cuda.device", NULL, 0, 0, "%s", open_why);
  CUresult r = leir__cu.CtxSetCurrent(leir__cu.ctx);
  if (r != 0)
    return leir__error(LEIR_ERR_NO_DEVICE, "cuda.device", NULL, 0, 0,
                       "no CUDA device: cannot make the context current (%s)", err_text(r));
  return LEIR_OK;
}

void leir__cuda_driver_lock(void) { pthread_mutex_lock(&lock); }
void leir__cuda_driver_unlock(void) { pthread_mutex_unlock(&lock); }

/* A kernel fault leaves the primary context unusable ("sticky" errors):
 * reset it so later programs (a search keeps going) get a fresh one. */
void leir__cuda_driver_recover(void) {
  if (!leir__cu.lib) return;
  leir__cu.DevicePrimaryCtxReset(leir__cu.device);
  leir__cu.DevicePrimaryCtxRetain(&leir__cu.ctx, leir__cu.device);
  leir__cu.CtxSetCurrent(leir__cu.ctx);
}

leir_status leir_cuda_device(leir_cuda_device_info *info) {
  leir_status st = leir__cuda_driver_open();
  if (st != LEIR_OK) return st;
  if (!info) return LEIR_OK;
  /* filled completely here, handed over as far as the caller's struct goes */
  leir_cuda_device_info full;
  memset(&full, 0, sizeof full);
  full.size = sizeof full;
  leir_status sz = leir__struct_size_check(info, sizeof full, "leir_cuda_device_info");
  if (sz != LEIR_OK) return sz;
  leir__cu.DeviceGetName(full.name, (int)sizeof full.name - 1, leir__cu.device);
  full.compute_major = leir__cu.cc_major;
  full.compute_minor = leir__cu.cc_minor;
  full.multiprocessors = leir__cu.sms;
  size_t mem = 0;
  leir__cu.DeviceTotalMem(&mem, leir__cu.device);
  full.global_memory = mem;
  full.l2_bytes = (uint32_t)leir__cu.l2_bytes;
  full.driver_version = leir__cu.driver_version;
  return leir__struct_write(info, &full, sizeof full, "leir_cuda_device_info");
}
