/*
 * device.h -- the device interface: where a run's bytes live and where its
 * kernels run.
 *
 * A device kind (the CPU, the test device, later CUDA) is a table of
 * operations, mt_dev_ops; a device is an instance of a kind, mt_dev: the
 * table, the DLPack type and ordinal it answers to (mt_device,
 * minitriton.h) and the kind's own state after it. The executor
 * (executor.c) never dereferences a value's bytes itself unless the value
 * is on the host: it allocates, frees, copies, reads scalars and launches
 * kernels through the value's device. The shape of the operations is the
 * CUDA driver API's, so that a CUDA device (libcuda through dlopen) is one
 * more table:
 *
 *   alloc / free      device memory (cuMemAlloc / cuMemFree); the CPU takes
 *                     it from the context's pool (runtime/pool.h)
 *   copy_h2d/d2h/d2d  copies (cuMemcpyHtoD, ...), done when they return;
 *                     d2d is within one device: equal ends are a no-op, and
 *                     no other overlap is asked for (the CPU and test
 *                     devices memmove anyway)
 *   sync              waits for launched work (cuCtxSynchronize)
 *   load / function / unload
 *                     a module: a blob the device understands (PTX, a
 *                     cubin) or, for devices that run host code, a table
 *                     of the JIT's function addresses by name; function
 *                     resolves a name to the handle launch takes
 *                     (cuModuleLoadData, cuModuleGetFunction)
 *   launch            a function handle, an argument vector of device
 *                     pointers then int64 scalars, and grid / block
 *                     dims that the CPU and test devices ignore
 *                     (cuLaunchKernel: its kernelParams point at the words)
 *
 * Errors are a status and a message in the caller's mt_dev_err; a CUDA
 * device will put cuGetErrorString's text there. No operation prints,
 * exits or aborts.
 *
 * Lifetime. A device is reference counted: its owner (the context, a test)
 * holds one reference, and a tensor whose bytes the device allocated
 * (tensor.h, mt_tensor_create_on) holds one, so device memory can outlive
 * the context that made it, like a pool result does. The CPU device is the
 * exception that proves the rule: its tensors are pool tensors (new_tensor),
 * which already keep the pool alive, so the hot path takes no device
 * reference.
 *
 * Threads. Every operation may be called from several threads at once on
 * one device (each kind locks what it shares).
 *
 * Kinds: device_cpu.c (the host, the pool, direct calls and libffi),
 * device_test.c (host code over memory the host cannot read: a memfd
 * mapped twice, see there; also the emulated GPU), device_cuda.c (an
 * NVIDIA GPU through the driver API, runtime/cuda_driver.h).
 */
#ifndef MT_RUNTIME_DEVICE_H
#define MT_RUNTIME_DEVICE_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "minitriton.h"
#include "support/common.h"

struct mt_pool;
typedef struct mt_dev mt_dev;
typedef struct mt_dev_module mt_dev_module; /* a loaded module: the kind's own */

/* Why an operation failed (filled only then). */
typedef struct mt_dev_err {
    char msg[256];
} mt_dev_err;

/* What a module is made of. */
typedef enum mt_dev_image_format {
    MT_IMAGE_HOST,  /* host code already linked by the JIT: names and addresses */
    MT_IMAGE_PTX,   /* NUL-terminated PTX text (CUDA) */
    MT_IMAGE_CUBIN, /* a cubin / fatbin (CUDA) */
} mt_dev_image_format;

typedef struct mt_dev_image {
    mt_dev_image_format format;
    const void *data;          /* PTX / CUBIN: the blob */
    size_t size;               /* its size in bytes */
    int nsymbols;              /* HOST: the functions it has ... */
    const char *const *names;  /* ... by name ... */
    void *const *addrs;        /* ... at these addresses */
} mt_dev_image;

/* Launch geometry. Devices that run host code ignore it. */
typedef struct mt_dev_dims {
    uint32_t grid[3];      /* blocks per grid, x y z (0 counts as 1) */
    uint32_t block[3];     /* threads per block, x y z (0 counts as 1) */
    uint32_t shared_bytes; /* dynamic shared memory per block */
} mt_dev_dims;

/* One kernel launch: fn(p0, ..., p[nptrs-1], s0, ..., s[nscalars-1]). */
typedef struct mt_dev_launch {
    void *fn;              /* the function: function()'s handle; host code: its address */
    const char *name;      /* for messages */
    int nptrs;             /* buffer arguments: device addresses, first in args */
    int nscalars;          /* int64 arguments, after them */
    const uint64_t *args;  /* nptrs + nscalars words */
    mt_dev_dims dims;      /* grid and block */
    const void *host_cif;  /* host code: a prepared ffi_cif of this signature, or NULL */
    /* host_code: fn is a GPU program's host function, which a GPU device
     * runs on the host with these kernels as its GPU frame (gpu_launch.h);
     * else fn is the device's own function handle. */
    bool host_code;
    int nkernels;
    const char *const *kernel_names;
    void *const *kernels;
} mt_dev_launch;

typedef struct mt_dev_ops {
    const char *kind;      /* "cpu", "test", "cuda" */
    bool host_memory;      /* its addresses are host memory the host may dereference */
    mt_status (*alloc)(mt_dev *d, size_t n, void **ptr, size_t *cap, mt_dev_err *e);
    void (*free)(mt_dev *d, void *ptr, size_t cap); /* cap: what alloc set */
    mt_status (*copy_h2d)(mt_dev *d, void *dst, const void *src, size_t n, mt_dev_err *e);
    mt_status (*copy_d2h)(mt_dev *d, void *dst, const void *src, size_t n, mt_dev_err *e);
    mt_status (*copy_d2d)(mt_dev *d, void *dst, const void *src, size_t n, mt_dev_err *e);
    mt_status (*sync)(mt_dev *d, mt_dev_err *e);
    mt_status (*load)(mt_dev *d, const mt_dev_image *img, mt_dev_module **out, mt_dev_err *e);
    mt_status (*function)(mt_dev *d, mt_dev_module *m, const char *name, void **fn, mt_dev_err *e);
    void (*unload)(mt_dev *d, mt_dev_module *m);
    mt_status (*launch)(mt_dev *d, const mt_dev_launch *l, mt_dev_err *e);
    /* Optional: a new C-contiguous tensor whose memory goes back to the
     * device's allocator when released (the CPU: a pool tensor). NULL: made
     * through alloc and free, holding a device reference (tensor.c). */
    mt_tensor *(*new_tensor)(mt_dev *d, mt_dtype dtype, int ndim, const int64_t *shape);
    void (*destroy)(mt_dev *d); /* the last reference went */
} mt_dev_ops;

/* A device instance; each kind embeds it first in its own struct. */
struct mt_dev {
    const mt_dev_ops *ops;
    mt_device where;       /* the type and ordinal it answers to */
    atomic_int refs;       /* the owner's, plus one per tensor it allocated */
};

/* ---- device names ---------------------------------------------------------- */

/* {0, 0} (a zeroed plan field) is the CPU. */
static inline mt_device mt_device_norm(mt_device d) {
    if (d.type == 0 && d.id == 0) d.type = MT_DEVICE_CPU;
    return d;
}

static inline bool mt_device_eq(mt_device a, mt_device b) {
    return mt_device_equal(mt_device_norm(a), mt_device_norm(b));
}

static inline bool mt_device_is_cpu(mt_device d) { return mt_device_norm(d).type == MT_DEVICE_CPU; }

/* "cpu", "cuda:1", "test:0" (an unknown type: "device7:0"); returns buf. */
const char *mt_device_str(mt_device d, char *buf, size_t cap);

/* ---- instances ------------------------------------------------------------- */

static inline void mt_dev_retain(mt_dev *d) {
    atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
}

static inline void mt_dev_release(mt_dev *d) {
    if (d && atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) == 1) d->ops->destroy(d);
}

/* Sets the message (e may be NULL) and returns st: the kinds' error paths.
 * Inline, so that tensor.c links without this layer's other objects. */
static inline mt_status mt_dev_fail(mt_dev_err *e, mt_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline mt_status mt_dev_fail(mt_dev_err *e, mt_status st, const char *fmt, ...) {
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* The CPU device over a pool (results and arenas from it; NULL: aligned
 * heap blocks). The caller keeps the pool open while the device is used
 * and closes it after releasing the device. NULL when out of memory. */
mt_dev *mt_dev_cpu_create(struct mt_pool *pool);

/* A CPU device over the heap that lives as long as the program (never
 * release it): what a run without a context uses. */
mt_dev *mt_dev_cpu_heap(void);

/* Calls host code fn(args[0], ..., args[n-1]) where every argument is a
 * pointer or an int64 (one word each): directly on the LP64 ABIs for up to
 * 12 arguments, else through libffi with cif (an ffi_cif prepared for n
 * pointer-or-int64 arguments; NULL: prepared here). For devices that run
 * host code (device_cpu.c, device_test.c). */
mt_status mt_dev_host_call(void *fn, const uint64_t *args, int nptrs, int nscalars, const void *cif,
                           mt_dev_err *e);

/* The module operations of devices that run host code: a HOST image's
 * name -> address table, copied; function looks a name up. */
mt_status mt_dev_host_load(mt_dev *d, const mt_dev_image *img, mt_dev_module **out, mt_dev_err *e);
mt_status mt_dev_host_function(mt_dev *d, mt_dev_module *m, const char *name, void **fn,
                               mt_dev_err *e);
void mt_dev_host_unload(mt_dev *d, mt_dev_module *m);

/* A test device (device_test.c): memory the host cannot dereference, host
 * code launched on a read-write alias of it. id is its ordinal (test:id).
 * The caller holds the one reference. NULL with e set on failure. */
mt_dev *mt_dev_test_create(int id, mt_dev_err *e);

/* The emulated GPU (docs/gpu.md, "Emulation"): a test device answering
 * to cuda:ordinal, where kernels compiled with the emulate option run
 * (host code, compiled from the GPU schedule, over memory the host cannot
 * read). Same ownership as mt_dev_test_create. */
mt_dev *mt_dev_emulated_gpu_create(int ordinal, mt_dev_err *e);

/* The test device's counters (tests: leaks, what ran). */
typedef struct mt_dev_test_stats {
    int64_t live_blocks;   /* allocations not freed */
    int64_t allocs;        /* allocations made */
    int64_t launches;      /* kernels launched */
    int64_t copies;        /* copies made (any direction) */
    int64_t syncs;         /* sync calls */
} mt_dev_test_stats;
void mt_dev_test_get_stats(mt_dev *d, mt_dev_test_stats *out);

/* A CUDA device (device_cuda.c): the GPU ordinal's primary context and a
 * stream of the device's own; launches are queued on the stream, copies
 * wait for it. The caller holds the one reference. Without the driver
 * (libcuda.so.1), without a GPU or with an ordinal past the last:
 * MT_ERR_UNAVAILABLE and e naming what is missing. */
mt_status mt_dev_cuda_open(int ordinal, mt_dev **out, mt_dev_err *e);

/* The same, NULL with e set on failure. */
mt_dev *mt_dev_cuda_create(int ordinal, mt_dev_err *e);

/* How many CUDA devices there are; 0 with e set (why) when none can be used. */
int mt_dev_cuda_count(mt_dev_err *e);

/* What a CUDA device is (cuDeviceGetName, cuDeviceGetAttribute). */
typedef struct mt_dev_cuda_props {
    char name[128];        /* "NVIDIA H100 80GB HBM3" */
    int sm;                /* compute capability * 10: 90 */
    int cc_major, cc_minor;
    int sms;               /* multiprocessors */
    int max_shared_optin;  /* shared memory per block a kernel may opt into, bytes */
    int max_threads;       /* threads per block */
    int warp_size;
    int driver_version;    /* cuDriverGetVersion: 13000 is CUDA 13.0 */
} mt_dev_cuda_props;

/* d's compute capability * 10 (90 on an H100); 0 when d is not a CUDA device. */
int mt_dev_cuda_sm(mt_dev *d);

/* d's stream (a CUstream), for work of the caller's ordered with d's;
 * NULL when d is not a CUDA device. */
void *mt_dev_cuda_stream(mt_dev *d);

/* A run on the calling thread (api.c brackets every run with begin and
 * end): its CUDA copies, launches and syncs go on stream (a CUstream of the
 * device's primary context; NULL: the device's own), and the blocks it
 * frees on the device's own stream are kept for reuse. begin returns the
 * state it replaces (a run inside a host function's callback), which end
 * restores. */
typedef struct mt_dev_cuda_run {
    bool active;
    void *stream;
} mt_dev_cuda_run;
mt_dev_cuda_run mt_dev_cuda_run_begin(void *stream);
void mt_dev_cuda_run_end(mt_dev_cuda_run saved);

/* d's properties into *out; false (out zeroed) when d is not a CUDA device. */
bool mt_dev_cuda_get_props(mt_dev *d, mt_dev_cuda_props *out);

/* A fixed list of devices, for mt_run_env.find_device (executor.h): ctx is
 * a mt_dev_list. */
typedef struct mt_dev_list {
    int n;
    mt_dev *const *devs;
} mt_dev_list;
mt_status mt_dev_list_find(void *ctx, mt_device where, mt_dev **out, mt_dev_err *e);

#endif
