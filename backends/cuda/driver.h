/* The subset of the CUDA Driver API the backend uses, resolved with dlsym
 * (driver.c). Types mirror cuda.h; values are the driver's stable ABI. */
#ifndef LEIR_CUDA_DRIVER_H
#define LEIR_CUDA_DRIVER_H

#include <stddef.h>

#include "cuda_internal.h"

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

/* CUjit_option values used with cuModuleLoadDataEx. */
#define LEIR__CU_JIT_ERROR_LOG_BUFFER 5
#define LEIR__CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

typedef struct leir__cu_api {
  void *lib;
  CUdevice device;
  CUcontext ctx;
  int driver_version, cc_major, cc_minor, sms, l2_bytes;
  CUresult (*GetErrorString)(CUresult, const char **);
  CUresult (*Init)(unsigned);
  CUresult (*DriverGetVersion)(int *);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetName)(char *, int, CUdevice);
  CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*DeviceTotalMem)(size_t *, CUdevice);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*DevicePrimaryCtxReset)(CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxSynchronize)(void);
  CUresult (*ModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*MemsetD32)(CUdeviceptr, unsigned, size_t);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, CUstream, void **, void **);
  CUresult (*EventCreate)(CUevent *, unsigned);
  CUresult (*EventDestroy)(CUevent);
  CUresult (*EventRecord)(CUevent, CUstream);
  CUresult (*EventSynchronize)(CUevent);
  CUresult (*EventQuery)(CUevent);
  CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
} leir__cu_api;

/* Valid after leir__cuda_driver_open() returned LEIR_OK. */
extern leir__cu_api leir__cu;

const char *leir__cu_error_text(CUresult r);
/* Serializes use of the one context between threads of the process. */
void leir__cuda_driver_lock(void);
void leir__cuda_driver_unlock(void);
void leir__cuda_driver_recover(void);

/* One program's module and device buffers (exec.c). */
typedef struct session {
  const leir__cuda_lowered *l;
  CUmodule mod;
  CUfunction *fns;
  CUdeviceptr *dev; /* by kernel parameter */
  CUdeviceptr trap;
  void **args;
  bool sticky;      /* a kernel fault: reset the context at the end */
} session;

/* Loads the PTX, allocates and uploads (host: signature order; outputs
 * uploaded too; intermediates filled with the sentinel). Call
 * leir__cuda_session_end even on failure. */
leir_status leir__cuda_session_begin(session *s, const leir__cuda_lowered *l, const char *ptx,
                                     void *const *host, size_t nhost);
void leir__cuda_session_end(session *s);
leir_status leir__cuda_launch_all(session *s);
/* Waits (TIMEOUT after timeout_s when > 0), then reads the trap word. */
leir_status leir__cuda_check_trap(session *s, double timeout_s);
leir_status leir__cuda_download(session *s, void *const *host);
leir_status leir__cuda_fail(session *s, CUresult r, const char *what);
leir_status leir__cuda_time_runs(session *s, const leir_cuda_timing_options *o,
                                 leir_cuda_timing *out);

#endif
