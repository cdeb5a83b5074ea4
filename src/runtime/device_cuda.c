/*
 * device_cuda.c -- the CUDA device: an NVIDIA GPU through the driver API
 * (runtime/cuda_driver.h, loaded with dlopen; see device.h for the
 * operations).
 *
 * A device is one ordinal's primary context (the one the CUDA runtime and
 * other libraries share, retained at create and released at destroy) and
 * one stream of its own. Every operation first makes the context current
 * on the calling thread (cuCtxSetCurrent: a thread-local store in the
 * driver), so a device may be used from any thread, several at once.
 *
 * Ordering. Launches are asynchronous: they are queued on the device's
 * stream (or, while a run given the caller's stream is on this thread,
 * that one: mt_dev_cuda_run_stream) and return. Copies are queued on the same stream, after every
 * launch before them, and then waited for (cuStreamSynchronize), so a copy
 * is done when it returns, as device.h asks; sync waits for the stream.
 * A kernel's fault shows at the next copy or sync (the driver reports it
 * there), as an MT_ERR_INTERNAL with the driver's text.
 *
 * Memory: cuMemAlloc (at least one byte: a zero-byte request still gets a
 * block, like the other kinds; cap is the request rounded up to 256 bytes,
 * the driver's smallest alignment). A block that a run frees (its
 * intermediate buffers) is kept for reuse by a later run's allocation of
 * the same size (blockcache.h, up to 64 blocks and 256 MiB, the least
 * recently kept evicted first), so a run's intermediates cost no driver
 * call after the first run. On the device's own stream stream order makes
 * the reuse safe: such a block goes only to a run on that stream. On a
 * caller's stream (mt_run_options.cuda_stream) the run records an event
 * there after its work, and the run that takes the block makes its own
 * stream wait for that event (cuStreamWaitEvent: on the GPU, the host does
 * not wait), whichever stream that is; were the event not made, the block
 * goes back to the driver. A block freed outside a run (a tensor the
 * caller releases, which other streams may still use: DLPack) goes back to
 * the driver, and allocations outside a run take no kept block. The kept
 * blocks go back too when an allocation finds the device out of memory,
 * and at destroy. Every block and every loaded module
 * holds a reference on the device, so the context outlives what lives in
 * it, whatever order the owner releases things in.
 *
 * Modules: cuModuleLoadDataEx of a cubin or of NUL-terminated PTX (the
 * driver JIT-compiles it; its error log goes into the message). The module
 * handle is the CUmodule itself, a function handle the CUfunction.
 *
 * Launch: cuLaunchKernel's kernelParams point at each argument: the launch's
 * argument words are exactly the kernel's parameters (a device pointer is
 * 64 bits, and so is each int64 scalar), so the array points into l->args.
 * Dynamic shared memory over the default 48 KiB is opted into per launch
 * (cuFuncSetAttribute) up to what the device allows.
 */
#include "runtime/device.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/blockcache.h"
#include "runtime/cuda_driver.h"
#include "runtime/gpu_launch.h"

typedef struct cuda_dev {
    mt_dev base;
    const mt_cuda_api *cu;
    mt_cu_device dev;       /* the ordinal's handle */
    mt_cu_context ctx;      /* its primary context (retained) */
    mt_cu_stream stream;    /* where copies and launches go (unless run_stream) */
    mt_dev_cuda_props props;
    mt_blockcache blocks;   /* freed blocks kept for reuse (blockcache.h) */
} cuda_dev;

enum { MAX_LAUNCH_ARGS = 512, DEFAULT_SHARED_BYTES = 48 * 1024 };
#define CACHED_BYTES ((size_t)256 << 20) /* at most 256 MiB of freed blocks kept */

static mt_status check(cuda_dev *c, mt_cu_result r, const char *call, mt_dev_err *e) {
    return mt_cuda_check(c->cu, r, call, e);
}

/* The run on this thread (mt_dev_cuda_run_begin): whether there is one,
 * and its caller's stream (mt_run_options.cuda_stream), which takes the
 * place of the device's own. */
static _Thread_local mt_dev_cuda_run this_run;

mt_dev_cuda_run mt_dev_cuda_run_begin(void *stream) {
    mt_dev_cuda_run old = this_run;
    this_run = (mt_dev_cuda_run){true, stream};
    return old;
}

void mt_dev_cuda_run_end(mt_dev_cuda_run saved) { this_run = saved; }

#define run_stream ((mt_cu_stream)this_run.stream)

static mt_cu_stream stream_of(const cuda_dev *c) { return run_stream ? run_stream : c->stream; }

/* Makes the device's context current on this thread. */
static mt_status enter(cuda_dev *c, mt_dev_err *e) {
    return check(c, c->cu->cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent", e);
}

static mt_cu_deviceptr dptr(const void *p) { return (mt_cu_deviceptr)(uintptr_t)p; }

/* ---- memory ---------------------------------------------------------------------- */

/* Gives blocks back to the driver (cuMemFree waits for the work that may
 * still use them), with their events. The context is current. */
static void free_blocks(cuda_dev *c, const mt_cached_block *b, int n) {
    for (int i = 0; i < n; i++) {
        if (b[i].event) c->cu->cuEventDestroy((mt_cu_event)b[i].event);
        c->cu->cuMemFree((mt_cu_deviceptr)b[i].ptr);
    }
}

/* Gives every kept block back to the driver (after the device's work, which
 * may still use them); true when there was one. The context is current. */
static bool release_cached(cuda_dev *c) {
    mt_cached_block b[MT_BLOCKCACHE_MAX];
    int n = mt_blockcache_drain(&c->blocks, b, MT_BLOCKCACHE_MAX);
    if (n) c->cu->cuCtxSynchronize();
    free_blocks(c, b, n);
    return n > 0;
}

/* A kept block of size bytes for the stream in use: one last used there, or
 * one with an event, which the stream waits for first (top of the file). */
static mt_status take_kept(cuda_dev *c, size_t size, mt_cu_deviceptr *p, mt_dev_err *e) {
    mt_cached_block b;
    *p = 0;
    if (!mt_blockcache_take(&c->blocks, size, stream_of(c), &b)) return MT_OK;
    mt_status st = MT_OK;
    if (b.event) {
        st = check(c, c->cu->cuStreamWaitEvent(stream_of(c), (mt_cu_event)b.event, 0), "cuStreamWaitEvent", e);
        c->cu->cuEventDestroy((mt_cu_event)b.event); /* released once the wait is done */
        b.event = NULL;
    }
    if (st != MT_OK) free_blocks(c, &b, 1);
    else *p = (mt_cu_deviceptr)b.ptr;
    return st;
}

/* Memory: a kept block of the same size (top of the file), else cuMemAlloc; when the device is out of memory, the
 * kept blocks go back to the driver and the allocation is tried again. */
static mt_status cuda_alloc(mt_dev *d, size_t n, void **ptr, size_t *cap, mt_dev_err *e) {
    cuda_dev *c = (cuda_dev *)d;
    *ptr = NULL;
    if (n > ((size_t)1 << 62)) return mt_dev_fail(e, MT_ERR_NOMEM, "%zu bytes is too large", n);
    mt_status st = enter(c, e);
    if (st != MT_OK) return st;
    size_t size = n ? (n + 255) / 256 * 256 : 256;
    mt_cu_deviceptr p = 0;
    if (this_run.active && (st = take_kept(c, size, &p, e)) != MT_OK) return st;
    if (!p) {
        mt_cu_result r = c->cu->cuMemAlloc(&p, size);
        if (r == MT_CU_ERROR_OUT_OF_MEMORY && release_cached(c)) r = c->cu->cuMemAlloc(&p, size);
        st = check(c, r, "cuMemAlloc", e);
        if (st != MT_OK) return st;
    }
    mt_dev_retain(d);
    *ptr = (void *)(uintptr_t)p;
    *cap = size;
    return MT_OK;
}

/* Keeps a block a run frees (top of the file): false when it cannot (no
 * event for a caller's stream), and the caller frees it. */
static bool keep(cuda_dev *c, void *ptr, size_t cap) {
    if (!cap) return false; /* a size not known: no allocation would match it */
    mt_cached_block b = {(uint64_t)(uintptr_t)ptr, cap, stream_of(c), NULL};
    if (run_stream) { /* the caller's stream: an event after the run's work on the block */
        mt_cu_event ev = NULL;
        if (c->cu->cuEventCreate(&ev, MT_CU_EVENT_DISABLE_TIMING) != 0) return false;
        if (c->cu->cuEventRecord(ev, run_stream) != 0) {
            c->cu->cuEventDestroy(ev);
            return false;
        }
        b.event = ev;
    }
    mt_cached_block out[MT_BLOCKCACHE_MAX + 1];
    free_blocks(c, out, mt_blockcache_put(&c->blocks, b, out));
    return true;
}

static void cuda_free(mt_dev *d, void *ptr, size_t cap) {
    cuda_dev *c = (cuda_dev *)d;
    if (!ptr) return;
    if (enter(c, NULL) == MT_OK && !(this_run.active && keep(c, ptr, cap)))
        c->cu->cuMemFree(dptr(ptr)); /* nowhere to report a failure */
    mt_dev_release(d); /* the block's reference, even if the driver refused it */
}

/* Waits for the device's stream: what every copy ends with. */
static mt_status wait_stream(cuda_dev *c, mt_dev_err *e) {
    return check(c, c->cu->cuStreamSynchronize(stream_of(c)), "cuStreamSynchronize", e);
}

static mt_status cuda_h2d(mt_dev *d, void *dst, const void *src, size_t n, mt_dev_err *e) {
    cuda_dev *c = (cuda_dev *)d;
    mt_status st = enter(c, e);
    if (st != MT_OK || n == 0) return st;
    st = check(c, c->cu->cuMemcpyHtoDAsync(dptr(dst), src, n, stream_of(c)), "cuMemcpyHtoDAsync", e);
    return st == MT_OK ? wait_stream(c, e) : st;
}

static mt_status cuda_d2h(mt_dev *d, void *dst, const void *src, size_t n, mt_dev_err *e) {
    cuda_dev *c = (cuda_dev *)d;
    mt_status st = enter(c, e);
    if (st != MT_OK || n == 0) return st;
    st = check(c, c->cu->cuMemcpyDtoHAsync(dst, dptr(src), n, stream_of(c)), "cuMemcpyDtoHAsync", e);
    return st == MT_OK ? wait_stream(c, e) : st;
}

static mt_status cuda_d2d(mt_dev *d, void *dst, const void *src, size_t n, mt_dev_err *e) {
    cuda_dev *c = (cuda_dev *)d;
    if (n == 0 || dst == src) return MT_OK;
    mt_status st = enter(c, e);
    if (st != MT_OK) return st;
    st = check(c, c->cu->cuMemcpyDtoDAsync(dptr(dst), dptr(src), n, stream_of(c)),
               "cuMemcpyDtoDAsync", e);
    return st == MT_OK ? wait_stream(c, e) : st;
}

static mt_status cuda_sync(mt_dev *d, mt_dev_err *e) {
    cuda_dev *c = (cuda_dev *)d;
    mt_status st = enter(c, e);
    return st == MT_OK ? wait_stream(c, e) : st;
}

/* ---- modules --------------------------------------------------------------------- */

/* img's bytes as the driver wants them: a cubin as is, PTX NUL-terminated
 * (copied into *copy when the image's size leaves the NUL out). */
static mt_status image_bytes(const mt_dev_image *img, const void **bytes, char **copy,
                             mt_dev_err *e) {
    *copy = NULL;
    *bytes = img->data;
    if (!img->data || (img->format == MT_IMAGE_CUBIN && img->size == 0))
        return mt_dev_fail(e, MT_ERR_INVALID_ARG, "an empty module image");
    const char *text = img->data;
    if (img->format != MT_IMAGE_PTX || img->size == 0 || text[img->size - 1] == 0)
        return MT_OK; /* size 0 PTX: the text's own NUL ends it */
    *copy = malloc(img->size + 1);
    if (!*copy) return mt_dev_fail(e, MT_ERR_NOMEM, "out of memory loading a module");
    memcpy(*copy, img->data, img->size);
    (*copy)[img->size] = 0;
    *bytes = *copy;
    return MT_OK;
}

/* cuModuleLoadDataEx with the driver's error log appended to a failure. */
static mt_status load_module(cuda_dev *c, const void *bytes, mt_cu_module *m, mt_dev_err *e) {
    char log[192] = "";
    int opts[] = {MT_CU_JIT_ERROR_LOG_BUFFER, MT_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log, (void *)(uintptr_t)sizeof log};
    mt_cu_result r = c->cu->cuModuleLoadDataEx(m, bytes, 2, opts, values);
    mt_status st = check(c, r, "cuModuleLoadDataEx", e);
    if (st != MT_OK && log[0] && e) {
        size_t at = strlen(e->msg);
        snprintf(e->msg + at, sizeof e->msg - at, " (%s)", log);
    }
    return st;
}

static mt_status cuda_load(mt_dev *d, const mt_dev_image *img, mt_dev_module **out,
                           mt_dev_err *e) {
    cuda_dev *c = (cuda_dev *)d;
    *out = NULL;
    if (img->format != MT_IMAGE_CUBIN && img->format != MT_IMAGE_PTX)
        return mt_dev_fail(e, MT_ERR_UNSUPPORTED,
                           "the cuda device loads PTX or a cubin, not host code");
    const void *bytes;
    char *copy;
    mt_status st = image_bytes(img, &bytes, &copy, e);
    if (st == MT_OK) st = enter(c, e);
    mt_cu_module m = NULL;
    if (st == MT_OK) st = load_module(c, bytes, &m, e);
    free(copy);
    if (st != MT_OK) return st;
    mt_dev_retain(d);
    *out = (mt_dev_module *)m;
    return MT_OK;
}

static mt_status cuda_function(mt_dev *d, mt_dev_module *m, const char *name, void **fn,
                               mt_dev_err *e) {
    cuda_dev *c = (cuda_dev *)d;
    *fn = NULL;
    mt_status st = enter(c, e);
    if (st != MT_OK) return st;
    mt_cu_function f = NULL;
    mt_cu_result r = c->cu->cuModuleGetFunction(&f, (mt_cu_module)m, name);
    if (r == MT_CU_ERROR_NOT_FOUND)
        return mt_dev_fail(e, MT_ERR_INVALID_ARG, "the module has no function '%s'", name);
    st = check(c, r, "cuModuleGetFunction", e);
    if (st == MT_OK) *fn = f;
    return st;
}

static void cuda_unload(mt_dev *d, mt_dev_module *m) {
    cuda_dev *c = (cuda_dev *)d;
    if (!m) return;
    if (enter(c, NULL) == MT_OK) c->cu->cuModuleUnload((mt_cu_module)m);
    mt_dev_release(d); /* the module's reference */
}

/* ---- launches -------------------------------------------------------------------- */

static unsigned dim(uint32_t v) { return v ? v : 1; }

/* Opts the function into more dynamic shared memory than the default. */
static mt_status allow_shared(cuda_dev *c, const mt_dev_launch *l, mt_dev_err *e) {
    uint32_t want = l->dims.shared_bytes;
    if (want <= DEFAULT_SHARED_BYTES) return MT_OK;
    if ((int64_t)want > c->props.max_shared_optin)
        return mt_dev_fail(e, MT_ERR_LIMIT, "kernel '%s' asks for %u bytes of shared memory; %s "
                           "has %d per block", l->name ? l->name : "?", want, c->props.name,
                           c->props.max_shared_optin);
    return check(c, c->cu->cuFuncSetAttribute(l->fn, MT_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                              (int)want),
                 "cuFuncSetAttribute", e);
}

/* ---- host code that launches kernels (a GPU program's host function) ------------ */

static mt_status frame_launch(void *dev, void *fn, const uint32_t grid[3], const uint32_t block[3],
                              uint32_t shared, void **args, char *msg, int msglen) {
    cuda_dev *c = dev;
    mt_dev_err e = {""};
    mt_dev_launch l = {.fn = fn, .dims = {{grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, shared}};
    mt_status st = allow_shared(c, &l, &e);
    if (st == MT_OK)
        st = check(c, c->cu->cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1],
                                            block[2], shared, stream_of(c), args, NULL),
                   "cuLaunchKernel", &e);
    if (st != MT_OK) snprintf(msg, (size_t)msglen, "%s", e.msg);
    return st;
}

static mt_status frame_alloc(void *dev, int64_t bytes, void **out, size_t *cap, char *msg, int msglen) {
    mt_dev_err e = {""};
    mt_status st = cuda_alloc(dev, (size_t)bytes, out, cap, &e);
    if (st != MT_OK) snprintf(msg, (size_t)msglen, "%s", e.msg);
    return st;
}

static void frame_free(void *dev, void *ptr, size_t cap) { cuda_free(dev, ptr, cap); }

/* Runs host function l->fn on the host with this device's kernels as its
 * GPU frame (runtime/gpu_launch.h); its launches queue on the stream. */
static mt_status host_driven(cuda_dev *c, const mt_dev_launch *l, mt_dev_err *e) {
    mt_status st = enter(c, e);
    if (st != MT_OK) return st;
    mt_gpu_frame f = {.dev = c, .nkernels = l->nkernels, .names = l->kernel_names,
                      .fns = l->kernels, .launch = frame_launch, .alloc = frame_alloc,
                      .free = frame_free};
    mt_gpu_frame_push(&f);
    st = mt_dev_host_call(l->fn, l->args, l->nptrs, l->nscalars, l->host_cif, e);
    mt_gpu_frame_pop(&f);
    if (st == MT_OK && f.status != MT_OK) st = mt_dev_fail(e, f.status, "%s", f.msg);
    return st;
}

static mt_status cuda_launch(mt_dev *d, const mt_dev_launch *l, mt_dev_err *e) {
    cuda_dev *c = (cuda_dev *)d;
    if (l->host_code) return host_driven(c, l, e);
    int n = l->nptrs + l->nscalars;
    if (n > MAX_LAUNCH_ARGS) return mt_dev_fail(e, MT_ERR_LIMIT, "a launch with %d arguments", n);
    void *params[MAX_LAUNCH_ARGS];
    for (int i = 0; i < n; i++) params[i] = (void *)&l->args[i];
    mt_status st = enter(c, e);
    if (st == MT_OK) st = allow_shared(c, l, e);
    if (st != MT_OK) return st;
    const mt_dev_dims *g = &l->dims;
    mt_cu_result r = c->cu->cuLaunchKernel(l->fn, dim(g->grid[0]), dim(g->grid[1]), dim(g->grid[2]),
                                           dim(g->block[0]), dim(g->block[1]), dim(g->block[2]),
                                           g->shared_bytes, stream_of(c), params, NULL);
    if (r == MT_CU_SUCCESS) return MT_OK;
    st = check(c, r, "cuLaunchKernel", e);
    if (!e || !l->name) return st;
    char call[sizeof e->msg];
    memcpy(call, e->msg, sizeof call);
    return mt_dev_fail(e, st, "kernel '%s': %s", l->name, call);
}

/* ---- the device ------------------------------------------------------------------ */

static void cuda_destroy(mt_dev *d) {
    cuda_dev *c = (cuda_dev *)d;
    if (c->stream && enter(c, NULL) == MT_OK) {
        c->cu->cuStreamSynchronize(c->stream);
        release_cached(c);
        c->cu->cuStreamDestroy(c->stream);
    }
    mt_blockcache_destroy(&c->blocks);
    if (c->ctx) c->cu->cuDevicePrimaryCtxRelease(c->dev);
    free(c);
}

static const mt_dev_ops cuda_ops = {
    .kind = "cuda",
    .host_memory = false,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy_h2d = cuda_h2d,
    .copy_d2h = cuda_d2h,
    .copy_d2d = cuda_d2d,
    .sync = cuda_sync,
    .load = cuda_load,
    .function = cuda_function,
    .unload = cuda_unload,
    .launch = cuda_launch,
    .new_tensor = NULL,
    .destroy = cuda_destroy,
};

/* The facts about the device that targets and launches need. */
static mt_status read_props(cuda_dev *c, mt_dev_err *e) {
    static const struct {
        int attr;
        size_t at;
    } attrs[] = {
        {MT_CU_ATTR_COMPUTE_CAPABILITY_MAJOR, offsetof(mt_dev_cuda_props, cc_major)},
        {MT_CU_ATTR_COMPUTE_CAPABILITY_MINOR, offsetof(mt_dev_cuda_props, cc_minor)},
        {MT_CU_ATTR_MULTIPROCESSOR_COUNT, offsetof(mt_dev_cuda_props, sms)},
        {MT_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
         offsetof(mt_dev_cuda_props, max_shared_optin)},
        {MT_CU_ATTR_MAX_THREADS_PER_BLOCK, offsetof(mt_dev_cuda_props, max_threads)},
        {MT_CU_ATTR_WARP_SIZE, offsetof(mt_dev_cuda_props, warp_size)},
    };
    mt_dev_cuda_props *p = &c->props;
    mt_status st = check(c, c->cu->cuDeviceGetName(p->name, (int)sizeof p->name, c->dev),
                         "cuDeviceGetName", e);
    for (size_t i = 0; st == MT_OK && i < sizeof attrs / sizeof attrs[0]; i++)
        st = check(c, c->cu->cuDeviceGetAttribute((int *)((char *)p + attrs[i].at), attrs[i].attr,
                                                  c->dev),
                   "cuDeviceGetAttribute", e);
    p->sm = p->cc_major * 10 + p->cc_minor;
    p->driver_version = c->cu->driver_version;
    return st;
}

/* The ordinal's handle, properties, primary context and stream. */
static mt_status open_device(cuda_dev *c, int ordinal, mt_dev_err *e) {
    mt_status st = check(c, c->cu->cuDeviceGet(&c->dev, ordinal), "cuDeviceGet", e);
    if (st == MT_OK) st = read_props(c, e);
    if (st == MT_OK)
        st = check(c, c->cu->cuDevicePrimaryCtxRetain(&c->ctx, c->dev),
                   "cuDevicePrimaryCtxRetain", e);
    if (st == MT_OK) st = enter(c, e);
    if (st == MT_OK) st = check(c, c->cu->cuStreamCreate(&c->stream, 0), "cuStreamCreate", e);
    return st;
}

int mt_dev_cuda_count(mt_dev_err *e) {
    const mt_cuda_api *cu;
    if (mt_cuda_driver(&cu, e) != MT_OK) return 0;
    int n = 0;
    if (mt_cuda_check(cu, cu->cuDeviceGetCount(&n), "cuDeviceGetCount", e) != MT_OK) return 0;
    if (n == 0) mt_dev_fail(e, MT_ERR_UNAVAILABLE, "no CUDA device");
    return n;
}

mt_status mt_dev_cuda_open(int ordinal, mt_dev **out, mt_dev_err *e) {
    *out = NULL;
    const mt_cuda_api *cu;
    mt_status st = mt_cuda_driver(&cu, e);
    if (st != MT_OK) return st;
    int n = mt_dev_cuda_count(e);
    if (n == 0) return MT_ERR_UNAVAILABLE;
    if (ordinal < 0 || ordinal >= n)
        return mt_dev_fail(e, MT_ERR_UNAVAILABLE, "no CUDA device %d (there %s %d)", ordinal,
                           n == 1 ? "is" : "are", n);
    cuda_dev *c = calloc(1, sizeof *c);
    if (!c) return mt_dev_fail(e, MT_ERR_NOMEM, "out of memory");
    mt_blockcache_init(&c->blocks, CACHED_BYTES);
    c->cu = cu;
    c->base.ops = &cuda_ops;
    c->base.where = (mt_device){MT_DEVICE_CUDA, ordinal};
    atomic_init(&c->base.refs, 1);
    st = open_device(c, ordinal, e);
    if (st != MT_OK) {
        cuda_destroy(&c->base);
        return st;
    }
    *out = &c->base;
    return MT_OK;
}

mt_dev *mt_dev_cuda_create(int ordinal, mt_dev_err *e) {
    mt_dev *d;
    mt_dev_cuda_open(ordinal, &d, e);
    return d;
}

static cuda_dev *as_cuda(mt_dev *d) { return d && d->ops == &cuda_ops ? (cuda_dev *)d : NULL; }

int mt_dev_cuda_sm(mt_dev *d) { return as_cuda(d) ? as_cuda(d)->props.sm : 0; }

void *mt_dev_cuda_stream(mt_dev *d) { return as_cuda(d) ? (void *)as_cuda(d)->stream : NULL; }

bool mt_dev_cuda_get_props(mt_dev *d, mt_dev_cuda_props *out) {
    memset(out, 0, sizeof *out);
    if (!as_cuda(d)) return false;
    *out = as_cuda(d)->props;
    return true;
}
