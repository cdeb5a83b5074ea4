/*
 * device_cpu.c -- the CPU device: host memory from the context's pool, and
 * kernels called on the calling thread (see device.h).
 *
 * Memory. alloc and free are the pool's raw blocks (runtime/pool.h: size
 * classes, huge pages from 2 MiB, blocks reused across runs), or 64-byte
 * aligned heap blocks for a device without a pool (a run without a
 * context). New result tensors are pool tensors (new_tensor): their memory
 * returns to the pool when the host releases them, even after the context
 * is gone, without a reference on the device. Copies are memcpy (memmove
 * within the device: a copy's ends may coincide).
 *
 * Launch. A kernel is host code with the signature codegen gives it
 * (tir.h): pointers, then int64 symbolic dims. mt_dev_host_call makes the
 * call directly for up to 12 arguments on the LP64 ABIs (below), else
 * through libffi with the call interface the plan prepared for that
 * signature (executor.c, mt_plan_prepare). The test device calls it too,
 * after translating its pointers (device_test.c).
 *
 * Modules. Host code is linked by the JIT before the plan exists, so a
 * module is the name -> address table (device.c). sync has nothing to wait
 * for: every call has returned.
 */
#include "runtime/device.h"

#include <ffi.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/pool.h"
#include "runtime/tensor.h"

typedef struct cpu_dev {
    mt_dev base;
    mt_pool *pool; /* where blocks come from (NULL: the heap) */
} cpu_dev;

/* Direct calls. Every kernel parameter is a pointer or an int64 (tir.h:
 * buffers, then sym vars; scalar parameters are rank-0 buffers), and on the
 * LP64 ABIs below both are passed exactly like a uint64_t (the next integer
 * register, then an 8-byte stack slot), so a kernel with up to
 * MAX_DIRECT_ARGS parameters is called through a function type with that
 * many uint64_t parameters: the same machine-level call libffi would make,
 * without its per-call interpretation of the signature (measured in
 * docs/performance.md, "The run path"). Elsewhere, or with more parameters,
 * libffi makes the call. */
#if (defined(__x86_64__) && !defined(_WIN32)) || (defined(__aarch64__) && !defined(_WIN32))
#define MT_DIRECT_CALLS 1
enum { MAX_DIRECT_ARGS = 12 };

static inline __attribute__((always_inline)) bool call_direct(void *fn, int n, const uint64_t *a) {
    typedef uint64_t w;
    switch (n) {
    case 0: ((void (*)(void))fn)(); return true;
    case 1: ((void (*)(w))fn)(a[0]); return true;
    case 2: ((void (*)(w, w))fn)(a[0], a[1]); return true;
    case 3: ((void (*)(w, w, w))fn)(a[0], a[1], a[2]); return true;
    case 4: ((void (*)(w, w, w, w))fn)(a[0], a[1], a[2], a[3]); return true;
    case 5: ((void (*)(w, w, w, w, w))fn)(a[0], a[1], a[2], a[3], a[4]); return true;
    case 6: ((void (*)(w, w, w, w, w, w))fn)(a[0], a[1], a[2], a[3], a[4], a[5]); return true;
    case 7:
        ((void (*)(w, w, w, w, w, w, w))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
        return true;
    case 8:
        ((void (*)(w, w, w, w, w, w, w, w))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
        return true;
    case 9:
        ((void (*)(w, w, w, w, w, w, w, w, w))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                                                  a[8]);
        return true;
    case 10:
        ((void (*)(w, w, w, w, w, w, w, w, w, w))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                                                     a[7], a[8], a[9]);
        return true;
    case 11:
        ((void (*)(w, w, w, w, w, w, w, w, w, w, w))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                                                        a[7], a[8], a[9], a[10]);
        return true;
    case 12:
        ((void (*)(w, w, w, w, w, w, w, w, w, w, w, w))fn)(a[0], a[1], a[2], a[3], a[4], a[5],
                                                           a[6], a[7], a[8], a[9], a[10], a[11]);
        return true;
    default: return false;
    }
}
#endif

enum { MAX_HOST_ARGS = 512 };

/* Through libffi: with more arguments than a direct call takes, or where
 * there is no direct call. */
static mt_status call_ffi(void *fn, const uint64_t *args, int nptrs, int nscalars, const void *cif,
                          mt_dev_err *e) {
    int n = nptrs + nscalars;
    if (n > MAX_HOST_ARGS) return mt_dev_fail(e, MT_ERR_LIMIT, "a call with %d arguments", n);
    void *ptrs[MAX_HOST_ARGS];
    void *avalues[MAX_HOST_ARGS];
    for (int i = 0; i < nptrs; i++) {
        ptrs[i] = (void *)(uintptr_t)args[i];
        avalues[i] = &ptrs[i];
    }
    for (int i = nptrs; i < n; i++) avalues[i] = (void *)&args[i]; /* an int64 each */
    ffi_cif local;
    if (!cif) {
        ffi_type *types[MAX_HOST_ARGS];
        for (int i = 0; i < n; i++) types[i] = i < nptrs ? &ffi_type_pointer : &ffi_type_sint64;
        if (ffi_prep_cif(&local, FFI_DEFAULT_ABI, (unsigned)n, &ffi_type_void, types) != FFI_OK)
            return mt_dev_fail(e, MT_ERR_INTERNAL, "libffi refuses a call with %d arguments", n);
        ffi_call(&local, FFI_FN(fn), NULL, avalues); /* types[] must outlive the call */
        return MT_OK;
    }
    ffi_call((ffi_cif *)cif, FFI_FN(fn), NULL, avalues);
    return MT_OK;
}

static inline mt_status host_call(void *fn, const uint64_t *args, int nptrs, int nscalars,
                                  const void *cif, mt_dev_err *e) {
#ifdef MT_DIRECT_CALLS
    if (nptrs + nscalars <= MAX_DIRECT_ARGS && call_direct(fn, nptrs + nscalars, args))
        return MT_OK;
#endif
    return call_ffi(fn, args, nptrs, nscalars, cif, e);
}

mt_status mt_dev_host_call(void *fn, const uint64_t *args, int nptrs, int nscalars, const void *cif,
                           mt_dev_err *e) {
    return host_call(fn, args, nptrs, nscalars, cif, e);
}

/* ---- the device's operations ------------------------------------------------ */

static mt_status cpu_alloc(mt_dev *d, size_t n, void **ptr, size_t *cap, mt_dev_err *e) {
    mt_pool *pool = ((cpu_dev *)d)->pool;
    if (pool) {
        *ptr = mt_pool_alloc(pool, n, cap);
    } else {
        size_t size = n ? (n + 63) / 64 * 64 : 64; /* aligned_alloc: a multiple of 64 */
        *ptr = n <= ((size_t)1 << 62) ? aligned_alloc(64, size) : NULL;
        *cap = size;
    }
    if (!*ptr) return mt_dev_fail(e, MT_ERR_NOMEM, "out of memory");
    return MT_OK;
}

static void cpu_free(mt_dev *d, void *ptr, size_t cap) {
    mt_pool *pool = ((cpu_dev *)d)->pool;
    if (pool) mt_pool_free(pool, ptr, cap);
    else free(ptr);
}

static mt_status cpu_copy(mt_dev *d, void *dst, const void *src, size_t n, mt_dev_err *e) {
    if (n && dst != src) memmove(dst, src, n);
    return MT_OK;
}

static mt_status cpu_sync(mt_dev *d, mt_dev_err *e) { return MT_OK; }

static mt_status cpu_launch(mt_dev *d, const mt_dev_launch *l, mt_dev_err *e) {
    return host_call(l->fn, l->args, l->nptrs, l->nscalars, l->host_cif, e);
}

static mt_tensor *cpu_new_tensor(mt_dev *d, mt_dtype dtype, int ndim, const int64_t *shape) {
    mt_pool *pool = ((cpu_dev *)d)->pool;
    if (pool) return mt_pool_tensor(pool, dtype, ndim, shape);
    return mt_tensor_create(dtype, ndim, shape);
}

static void cpu_destroy(mt_dev *d) {
    if (d != mt_dev_cpu_heap()) free(d);
}

static const mt_dev_ops cpu_ops = {
    .kind = "cpu",
    .host_memory = true,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_h2d = cpu_copy,
    .copy_d2h = cpu_copy,
    .copy_d2d = cpu_copy,
    .sync = cpu_sync,
    .load = mt_dev_host_load,
    .function = mt_dev_host_function,
    .unload = mt_dev_host_unload,
    .launch = cpu_launch,
    .new_tensor = cpu_new_tensor,
    .destroy = cpu_destroy,
};

mt_dev *mt_dev_cpu_create(mt_pool *pool) {
    cpu_dev *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->base.ops = &cpu_ops;
    c->base.where = (mt_device){MT_DEVICE_CPU, 0};
    atomic_init(&c->base.refs, 1);
    c->pool = pool;
    return &c->base;
}

static cpu_dev heap_cpu = {{&cpu_ops, {MT_DEVICE_CPU, 0}, 1}, NULL};

mt_dev *mt_dev_cpu_heap(void) { return &heap_cpu.base; }
