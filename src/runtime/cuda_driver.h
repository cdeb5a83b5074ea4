/*
 * cuda_driver.h -- the CUDA driver API, loaded at run time.
 *
 * The library has no link-time CUDA dependency: the driver (libcuda.so.1,
 * installed with the NVIDIA kernel driver; MT_CUDA_DRIVER_LIBRARY, if set,
 * names another file to load instead) is dlopened the first time a CUDA
 * device or count is asked for, once per process (pthread_once), and
 * cuInit(0) runs right after. What comes back is a table of the driver
 * functions the runtime uses, under their documented names (cuMemAlloc is
 * the driver's cuMemAlloc_v2, and so on: the versions cuda.h maps the names
 * to). The types are declared here, by size and shape, so no CUDA header is
 * needed to build:
 *
 *     const mt_cuda_api *cu;
 *     mt_dev_err e;
 *     if (mt_cuda_driver(&cu, &e) != MT_OK) return report(e.msg);  // no driver, no GPU
 *     mt_cu_deviceptr p;
 *     mt_status st = mt_cuda_check(cu, cu->cuMemAlloc(&p, 1 << 20), "cuMemAlloc", &e);
 *
 * Errors: mt_cuda_check turns a CUresult into a status and the message
 * "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY: out of memory" (the driver's own
 * name and text). Out of memory is MT_ERR_NOMEM; a missing driver, no
 * device or a driver that cannot serve this program (a stub, too old, a
 * mismatch with the kernel module) MT_ERR_UNAVAILABLE; an image built for
 * another GPU MT_ERR_UNSUPPORTED; a name the module does not have
 * MT_ERR_INVALID_ARG; anything else MT_ERR_INTERNAL. Nothing prints.
 *
 * The device kind built on this is device_cuda.c (runtime/device.h).
 */
#ifndef MT_RUNTIME_CUDA_DRIVER_H
#define MT_RUNTIME_CUDA_DRIVER_H

#include <stddef.h>

#include "runtime/device.h"

/* The driver's types (cuda.h's CUresult, CUdevice, CUdeviceptr, ...). */
typedef int mt_cu_result;                    /* 0: success */
typedef int mt_cu_device;                    /* an ordinal's handle */
typedef unsigned long long mt_cu_deviceptr;  /* a device address */
typedef struct mt_cu_ctx_st *mt_cu_context;
typedef struct mt_cu_mod_st *mt_cu_module;
typedef struct mt_cu_func_st *mt_cu_function;
typedef struct mt_cu_stream_st *mt_cu_stream;
typedef struct mt_cu_event_st *mt_cu_event;

/* The few enumerators used (cuda.h's values). */
enum {
    MT_CU_SUCCESS = 0,
    MT_CU_ERROR_OUT_OF_MEMORY = 2,
    MT_CU_ERROR_NO_DEVICE = 100,
    MT_CU_ERROR_NOT_FOUND = 500,
    /* CUdevice_attribute */
    MT_CU_ATTR_MAX_THREADS_PER_BLOCK = 1,
    MT_CU_ATTR_WARP_SIZE = 10,
    MT_CU_ATTR_MULTIPROCESSOR_COUNT = 16,
    MT_CU_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
    MT_CU_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
    MT_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    /* CUfunction_attribute */
    MT_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    /* CUjit_option */
    MT_CU_JIT_ERROR_LOG_BUFFER = 5,
    MT_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    /* cuEventCreate flags */
    MT_CU_EVENT_DEFAULT = 0,
    MT_CU_EVENT_DISABLE_TIMING = 2,
};

/* The driver functions, by the names cuda.h gives them. */
typedef struct mt_cuda_api {
    int driver_version; /* cuDriverGetVersion: 13000 is CUDA 13.0 */
    mt_cu_result (*cuInit)(unsigned flags);
    mt_cu_result (*cuDriverGetVersion)(int *version);
    mt_cu_result (*cuGetErrorName)(mt_cu_result r, const char **name);
    mt_cu_result (*cuGetErrorString)(mt_cu_result r, const char **text);
    /* devices and contexts */
    mt_cu_result (*cuDeviceGetCount)(int *count);
    mt_cu_result (*cuDeviceGet)(mt_cu_device *dev, int ordinal);
    mt_cu_result (*cuDeviceGetName)(char *name, int len, mt_cu_device dev);
    mt_cu_result (*cuDeviceGetAttribute)(int *value, int attribute, mt_cu_device dev);
    mt_cu_result (*cuDevicePrimaryCtxRetain)(mt_cu_context *ctx, mt_cu_device dev);
    mt_cu_result (*cuDevicePrimaryCtxRelease)(mt_cu_device dev);
    mt_cu_result (*cuCtxSetCurrent)(mt_cu_context ctx);
    mt_cu_result (*cuCtxSynchronize)(void);
    /* memory */
    mt_cu_result (*cuMemAlloc)(mt_cu_deviceptr *ptr, size_t n);
    mt_cu_result (*cuMemFree)(mt_cu_deviceptr ptr);
    mt_cu_result (*cuMemcpyHtoD)(mt_cu_deviceptr dst, const void *src, size_t n);
    mt_cu_result (*cuMemcpyDtoH)(void *dst, mt_cu_deviceptr src, size_t n);
    mt_cu_result (*cuMemcpyDtoD)(mt_cu_deviceptr dst, mt_cu_deviceptr src, size_t n);
    mt_cu_result (*cuMemcpyHtoDAsync)(mt_cu_deviceptr dst, const void *src, size_t n,
                                      mt_cu_stream s);
    mt_cu_result (*cuMemcpyDtoHAsync)(void *dst, mt_cu_deviceptr src, size_t n, mt_cu_stream s);
    mt_cu_result (*cuMemcpyDtoDAsync)(mt_cu_deviceptr dst, mt_cu_deviceptr src, size_t n,
                                      mt_cu_stream s);
    /* modules and launches */
    mt_cu_result (*cuModuleLoadData)(mt_cu_module *m, const void *image);
    mt_cu_result (*cuModuleLoadDataEx)(mt_cu_module *m, const void *image, unsigned nopts,
                                       int *opts, void **values);
    mt_cu_result (*cuModuleGetFunction)(mt_cu_function *f, mt_cu_module m, const char *name);
    mt_cu_result (*cuModuleUnload)(mt_cu_module m);
    mt_cu_result (*cuFuncSetAttribute)(mt_cu_function f, int attribute, int value);
    mt_cu_result (*cuLaunchKernel)(mt_cu_function f, unsigned gx, unsigned gy, unsigned gz,
                                   unsigned bx, unsigned by, unsigned bz, unsigned shared_bytes,
                                   mt_cu_stream s, void **params, void **extra);
    /* streams and events */
    mt_cu_result (*cuStreamCreate)(mt_cu_stream *s, unsigned flags);
    mt_cu_result (*cuStreamDestroy)(mt_cu_stream s);
    mt_cu_result (*cuStreamSynchronize)(mt_cu_stream s);
    mt_cu_result (*cuStreamWaitEvent)(mt_cu_stream s, mt_cu_event ev, unsigned flags);
    mt_cu_result (*cuEventCreate)(mt_cu_event *ev, unsigned flags);
    mt_cu_result (*cuEventRecord)(mt_cu_event ev, mt_cu_stream s);
    mt_cu_result (*cuEventSynchronize)(mt_cu_event ev);
    mt_cu_result (*cuEventElapsedTime)(float *ms, mt_cu_event start, mt_cu_event end);
    mt_cu_result (*cuEventDestroy)(mt_cu_event ev);
} mt_cuda_api;

/* The driver's table, loaded and initialized on the first call. MT_OK, or
 * the status (MT_ERR_UNAVAILABLE: no driver, a driver without a function
 * used here, no device) and in e why; every later call answers the same. */
mt_status mt_cuda_driver(const mt_cuda_api **out, mt_dev_err *e);

/* r as a status, with "call: NAME: text" in e when it is an error. */
mt_status mt_cuda_check(const mt_cuda_api *cu, mt_cu_result r, const char *call, mt_dev_err *e);

#endif
