/*
 * cuda_driver.c -- the CUDA driver API through dlopen (see cuda_driver.h).
 *
 * load() runs once per process (pthread_once): it opens the driver, finds
 * every function in `syms` (each under the exported name cuda.h maps it
 * to; cuEventElapsedTime has a second, older name for drivers before 12.8),
 * calls cuInit(0) and asks the driver's version. Whatever it found, table
 * or failure, is kept and answered to every caller after. The library is
 * never closed: a driver stays loaded for the process.
 *
 * Statuses (`known`): the driver's error codes that mean "this machine
 * cannot run CUDA" are MT_ERR_UNAVAILABLE, out of memory is MT_ERR_NOMEM,
 * an image the GPU cannot run MT_ERR_UNSUPPORTED, a missing function
 * MT_ERR_INVALID_ARG; the rest (an invalid handle, a kernel that faulted)
 * is MT_ERR_INTERNAL. The message has the driver's name and text of the
 * error, or our name for it where the driver gives none.
 */
#include "runtime/cuda_driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static struct {
    mt_cuda_api api;
    mt_status status;     /* of loading and cuInit */
    mt_dev_err err;       /* why, when status is not MT_OK */
} drv;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

#define SYM(field, name, alt) {(void **)&drv.api.field, name, alt}
static const struct {
    void **slot;
    const char *name;     /* the exported name */
    const char *alt;      /* another to try, or NULL */
} syms[] = {
    SYM(cuInit, "cuInit", NULL),
    SYM(cuDriverGetVersion, "cuDriverGetVersion", NULL),
    SYM(cuGetErrorName, "cuGetErrorName", NULL),
    SYM(cuGetErrorString, "cuGetErrorString", NULL),
    SYM(cuDeviceGetCount, "cuDeviceGetCount", NULL),
    SYM(cuDeviceGet, "cuDeviceGet", NULL),
    SYM(cuDeviceGetName, "cuDeviceGetName", NULL),
    SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL),
    SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL),
    SYM(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", NULL),
    SYM(cuCtxSetCurrent, "cuCtxSetCurrent", NULL),
    SYM(cuCtxSynchronize, "cuCtxSynchronize", NULL),
    SYM(cuMemAlloc, "cuMemAlloc_v2", NULL),
    SYM(cuMemFree, "cuMemFree_v2", NULL),
    SYM(cuMemcpyHtoD, "cuMemcpyHtoD_v2", NULL),
    SYM(cuMemcpyDtoH, "cuMemcpyDtoH_v2", NULL),
    SYM(cuMemcpyDtoD, "cuMemcpyDtoD_v2", NULL),
    SYM(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", NULL),
    SYM(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", NULL),
    SYM(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", NULL),
    SYM(cuModuleLoadData, "cuModuleLoadData", NULL),
    SYM(cuModuleLoadDataEx, "cuModuleLoadDataEx", NULL),
    SYM(cuModuleGetFunction, "cuModuleGetFunction", NULL),
    SYM(cuModuleUnload, "cuModuleUnload", NULL),
    SYM(cuFuncSetAttribute, "cuFuncSetAttribute", NULL),
    SYM(cuLaunchKernel, "cuLaunchKernel", NULL),
    SYM(cuStreamCreate, "cuStreamCreate", NULL),
    SYM(cuStreamDestroy, "cuStreamDestroy_v2", NULL),
    SYM(cuStreamSynchronize, "cuStreamSynchronize", NULL),
    SYM(cuStreamWaitEvent, "cuStreamWaitEvent", NULL),
    SYM(cuEventCreate, "cuEventCreate", NULL),
    SYM(cuEventRecord, "cuEventRecord", NULL),
    SYM(cuEventSynchronize, "cuEventSynchronize", NULL),
    SYM(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
    SYM(cuEventDestroy, "cuEventDestroy_v2", NULL),
};
#undef SYM

/* The driver's error codes whose status is not MT_ERR_INTERNAL, with their
 * names, for a driver that cannot name them itself (the link stub cannot). */
static const struct {
    mt_cu_result code;
    const char *name;
    mt_status status;
} known[] = {
    {2, "CUDA_ERROR_OUT_OF_MEMORY", MT_ERR_NOMEM},
    {3, "CUDA_ERROR_NOT_INITIALIZED", MT_ERR_UNAVAILABLE},
    {4, "CUDA_ERROR_DEINITIALIZED", MT_ERR_UNAVAILABLE},
    {34, "CUDA_ERROR_STUB_LIBRARY", MT_ERR_UNAVAILABLE},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER", MT_ERR_UNAVAILABLE},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE", MT_ERR_UNAVAILABLE},
    {100, "CUDA_ERROR_NO_DEVICE", MT_ERR_UNAVAILABLE},
    {101, "CUDA_ERROR_INVALID_DEVICE", MT_ERR_UNAVAILABLE},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", MT_ERR_UNSUPPORTED},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", MT_ERR_UNSUPPORTED},
    {500, "CUDA_ERROR_NOT_FOUND", MT_ERR_INVALID_ARG},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", MT_ERR_UNAVAILABLE},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", MT_ERR_UNAVAILABLE},
};

static int known_index(mt_cu_result r) {
    for (int i = 0; i < (int)(sizeof known / sizeof known[0]); i++)
        if (known[i].code == r) return i;
    return -1;
}

mt_status mt_cuda_check(const mt_cuda_api *cu, mt_cu_result r, const char *call, mt_dev_err *e) {
    if (r == MT_CU_SUCCESS) return MT_OK;
    int k = known_index(r);
    mt_status st = k >= 0 ? known[k].status : MT_ERR_INTERNAL;
    const char *name = NULL, *text = NULL;
    if (cu && cu->cuGetErrorName && cu->cuGetErrorName(r, &name) != MT_CU_SUCCESS) name = NULL;
    if (cu && cu->cuGetErrorString && cu->cuGetErrorString(r, &text) != MT_CU_SUCCESS) text = NULL;
    if (name && text) return mt_dev_fail(e, st, "%s: %s: %s", call, name, text);
    if (k >= 0) return mt_dev_fail(e, st, "%s: %s (%d)", call, known[k].name, r);
    return mt_dev_fail(e, st, "%s: CUDA error %d", call, r);
}

/* Every function of syms from lib; false with drv.err set if one is missing. */
static bool find_symbols(void *lib, const char *path) {
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        *syms[i].slot = dlsym(lib, syms[i].name);
        if (!*syms[i].slot && syms[i].alt) *syms[i].slot = dlsym(lib, syms[i].alt);
        if (!*syms[i].slot) {
            mt_dev_fail(&drv.err, MT_ERR_UNAVAILABLE,
                        "the CUDA driver %s has no %s (too old a driver)", path, syms[i].name);
            return false;
        }
    }
    return true;
}

/* cuInit and the version; the status of the first that fails. */
static mt_status init_driver(void) {
    mt_dev_err e;
    mt_cu_result r = drv.api.cuInit(0);
    if (r != MT_CU_SUCCESS) {
        mt_status st = mt_cuda_check(&drv.api, r, "cuInit", &e);
        if (r == MT_CU_ERROR_NO_DEVICE) mt_dev_fail(&drv.err, st, "no CUDA device (%s)", e.msg);
        else mt_dev_fail(&drv.err, st, "the CUDA driver cannot start: %s", e.msg);
        return st;
    }
    r = drv.api.cuDriverGetVersion(&drv.api.driver_version);
    if (r == MT_CU_SUCCESS) return MT_OK;
    return mt_cuda_check(&drv.api, r, "cuDriverGetVersion", &drv.err);
}

static void load(void) {
    const char *env = getenv("MT_CUDA_DRIVER_LIBRARY");
    const char *path = env && *env ? env : "libcuda.so.1";
    drv.status = MT_ERR_UNAVAILABLE;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror(); /* names the file */
        if (env && *env)
            mt_dev_fail(&drv.err, MT_ERR_UNAVAILABLE,
                        "CUDA driver not found (%s, from MT_CUDA_DRIVER_LIBRARY)", why ? why : path);
        else
            mt_dev_fail(&drv.err, MT_ERR_UNAVAILABLE,
                        "CUDA driver not found (%s): install the NVIDIA driver or set "
                        "MT_CUDA_DRIVER_LIBRARY", why ? why : path);
        return;
    }
    if (!find_symbols(lib, path)) {
        memset(&drv.api, 0, sizeof drv.api);
        dlclose(lib);
        return;
    }
    drv.status = init_driver();
}

mt_status mt_cuda_driver(const mt_cuda_api **out, mt_dev_err *e) {
    pthread_once(&load_once, load);
    *out = drv.status == MT_OK ? &drv.api : NULL;
    if (drv.status != MT_OK) mt_dev_fail(e, drv.status, "%s", drv.err.msg);
    return drv.status;
}
