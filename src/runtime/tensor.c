/*
 * tensor.c -- the tensor object of the public API (minitriton.h, "tensors").
 *
 * A tensor is a header (struct mt_tensor, tensor.h) and a data pointer. Two
 * kinds exist:
 *
 *   - created tensors (mt_tensor_create) own their data: one aligned_alloc of
 *     numel * element size bytes, rounded up to a multiple of 64 so that the
 *     allocation is 64-byte aligned and whole cache lines (vector loads at the
 *     tail of a row never touch another allocation); from 2 MiB on, whole
 *     2 MiB huge pages (alloc_data). The memory is zeroed and
 *     the strides are C-contiguous. A tensor with a zero-sized dim still gets
 *     a 64-byte block, so data is never NULL for a created tensor.
 *   - wrapped tensors (mt_tensor_wrap) borrow the host's memory; strides are
 *     taken as given (in elements, may be zero or negative) or, when NULL,
 *     made C-contiguous. The host keeps the memory alive.
 *
 * Every size is validated once, at creation: dims are >= 0 and
 * numel * element size fits both int64_t and size_t. Later code (kernels, the
 * executor, the .npy writer) may therefore multiply shapes without checks.
 *
 * A third kind is made by the executor: tensors whose data comes from the
 * context's memory pool (runtime/pool.c). They own their data too, but the
 * last release hands it back through the tensor's give_back hook instead of
 * free(); this file only calls the hook, so it still links with libc alone.
 *
 * Device tensors (mt_tensor_create_on) are the same mechanism: the data is
 * a block of a device (runtime/device.h), the hook gives it back to the
 * device and drops the tensor's reference on it. The device's operations
 * are reached through its table and its reference count is inline
 * (device.h), so this file still needs no other object. mt_tensor_copy
 * moves bytes between tensors on any devices: a host-to-host copy is a
 * memmove, a copy with one device end is that device's copy, and two
 * devices are bridged through a host buffer.
 *
 * Reference counting is atomic (a tensor may be retained and released from
 * several threads); the release that drops the count to zero frees the header
 * and, for created tensors, the data. The accessors accept NULL and return a
 * neutral value (NULL, -1, MT_DTYPE_COUNT_) so that a host that forgot to
 * check a failed create does not crash inside the library.
 */
#define _GNU_SOURCE /* MADV_HUGEPAGE */
#include "runtime/tensor.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime/device.h"

/* Bytes per element, from the one dtype list (kept local so that this file
 * links with nothing but libc). */
static size_t elem_size(mt_dtype dt) {
    static const size_t sizes[] = {
#define MT_X_(name, text, size) [name] = size,
        MT_DTYPE_LIST(MT_X_)
#undef MT_X_
    };
    if ((unsigned)dt >= (unsigned)MT_DTYPE_COUNT_) return 0;
    return sizes[dt];
}

bool mt_shape_nbytes(mt_dtype dtype, int ndim, const int64_t *shape, size_t *out) {
    size_t es = elem_size(dtype);
    if (es == 0 || ndim < 0 || ndim > MT_MAX_RANK || (ndim > 0 && !shape)) return false;
    int64_t n = (int64_t)es;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return false;
        if (__builtin_mul_overflow(n, shape[i], &n)) return false;
    }
    /* numel * size may fit int64_t and still not size_t on 32-bit hosts. */
    if ((uint64_t)n > (uint64_t)SIZE_MAX) return false;
    if (out) *out = (size_t)n;
    return true;
}

/* C-contiguous strides (in elements) for a shape already validated. */
static void contiguous_strides(int ndim, const int64_t *shape, int64_t *strides) {
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        /* A zero dim makes every stride irrelevant; keep them finite. The
         * other dims were not checked then: (2**62, 0, 6) has 0 elements but
         * 6 * 2**62 overflows, so saturate. */
        if (__builtin_mul_overflow(s, shape[i] > 0 ? shape[i] : 1, &s)) s = INT64_MAX;
    }
}

/* A header with dtype, shape and refcount set; strides and data left to the caller. */
static mt_tensor *new_header(mt_dtype dtype, int ndim, const int64_t *shape, size_t nbytes) {
    mt_tensor *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    atomic_init(&t->refs, 1);
    t->dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
    t->nbytes = nbytes;
    t->device = (mt_device){MT_DEVICE_CPU, 0};
    return t;
}

/* Data of `alloc` bytes (a multiple of 64). From 2 MiB on, 2 MiB aligned
 * and advised to be backed by huge pages, as NumPy does for its arrays: a
 * kernel streaming a large operand row by row (a GEMV's weight) then has no
 * TLB miss and no prefetcher stop every 4 KiB. Still one aligned_alloc, so
 * free() releases it; the advice failing is not an error. */
static void *alloc_data(size_t alloc) {
    const size_t huge = (size_t)2 << 20;
    if (alloc < huge || alloc > SIZE_MAX - huge) return aligned_alloc(64, alloc);
    size_t size = (alloc + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, size);
    if (p) madvise(p, size, MADV_HUGEPAGE);
    return p;
}

MT_API mt_tensor *mt_tensor_create(mt_dtype dtype, int ndim, const int64_t *shape) {
    size_t nbytes;
    if (!mt_shape_nbytes(dtype, ndim, shape, &nbytes)) return NULL;
    /* Round up to whole 64-byte lines; at least one line. */
    if (nbytes > SIZE_MAX - 63) return NULL;
    size_t alloc = (nbytes + 63) & ~(size_t)63;
    if (alloc == 0) alloc = 64;
    mt_tensor *t = new_header(dtype, ndim, shape, nbytes);
    if (!t) return NULL;
    t->data = alloc_data(alloc);
    if (!t->data) {
        free(t);
        return NULL;
    }
    memset(t->data, 0, alloc);
    t->owns_data = true;
    contiguous_strides(ndim, shape, t->strides);
    return t;
}

mt_tensor *mt_tensor_adopt(void *data, mt_dtype dtype, int ndim, const int64_t *shape,
                           void (*give_back)(void *owner, void *data, size_t capacity),
                           void *owner, size_t capacity) {
    size_t nbytes;
    if (!data || !mt_shape_nbytes(dtype, ndim, shape, &nbytes) || capacity < nbytes) return NULL;
    mt_tensor *t = new_header(dtype, ndim, shape, nbytes);
    if (!t) return NULL;
    t->data = data;
    t->owns_data = true;
    t->give_back = give_back;
    t->owner = owner;
    t->capacity = capacity;
    contiguous_strides(ndim, shape, t->strides);
    return t;
}

void mt_tensor_init_view(mt_tensor *t, void *data, mt_dtype dtype, int ndim, const int64_t *shape,
                         size_t nbytes, mt_dev *dev) {
    memset(t, 0, sizeof *t);
    atomic_init(&t->refs, 1);
    t->dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
    t->nbytes = nbytes;
    t->data = data;
    t->device = dev ? dev->where : (mt_device){MT_DEVICE_CPU, 0};
    t->dev = dev && !dev->ops->host_memory ? dev : NULL;
    contiguous_strides(ndim, shape, t->strides);
}

static void device_give_back(void *owner, void *data, size_t capacity) {
    mt_dev *d = owner;
    d->ops->free(d, data, capacity);
    mt_dev_release(d);
}

mt_tensor *mt_tensor_create_on(mt_dev *d, mt_dtype dtype, int ndim, const int64_t *shape) {
    if (d->ops->new_tensor) return d->ops->new_tensor(d, dtype, ndim, shape);
    size_t nbytes, cap;
    void *data;
    if (!mt_shape_nbytes(dtype, ndim, shape, &nbytes) ||
        d->ops->alloc(d, nbytes, &data, &cap, NULL) != MT_OK)
        return NULL;
    mt_tensor *t = mt_tensor_adopt(data, dtype, ndim, shape, device_give_back, d, cap);
    if (!t) {
        d->ops->free(d, data, cap);
        return NULL;
    }
    mt_dev_retain(d);
    t->device = d->where;
    t->dev = d->ops->host_memory ? NULL : d;
    return t;
}

/* src's bytes from device sd to device dd through a host buffer. */
static mt_status bridge(mt_tensor *dst, const mt_tensor *src, size_t n, mt_dev_err *e) {
    void *tmp = malloc(n);
    if (!tmp) return mt_dev_fail(e, MT_ERR_NOMEM, "out of memory for a %zu-byte copy", n);
    mt_status st = src->dev->ops->copy_d2h(src->dev, tmp, src->data, n, e);
    if (st == MT_OK) st = dst->dev->ops->copy_h2d(dst->dev, dst->data, tmp, n, e);
    free(tmp);
    return st;
}

mt_status mt_tensor_copy(mt_tensor *dst, const mt_tensor *src, mt_dev_err *e) {
    size_t n = src->nbytes; /* validated when src was made */
    bool same = dst->dtype == src->dtype && dst->ndim == src->ndim;
    for (int i = 0; same && i < src->ndim; i++) same = dst->shape[i] == src->shape[i];
    if (!same || !mt_tensor_is_contiguous(dst) || !mt_tensor_is_contiguous(src))
        return mt_dev_fail(e, MT_ERR_INVALID_ARG, "a copy between tensors of different types");
    if (n == 0) return MT_OK;
    mt_dev *dd = dst->dev, *sd = src->dev;
    if (!dd && !sd) {
        if (dst->data != src->data) memmove(dst->data, src->data, n);
        return MT_OK;
    }
    if (!dd) return sd->ops->copy_d2h(sd, dst->data, src->data, n, e);
    if (!sd) return dd->ops->copy_h2d(dd, dst->data, src->data, n, e);
    if (dd == sd) return dd->ops->copy_d2d(dd, dst->data, src->data, n, e);
    return bridge(dst, src, n, e);
}

MT_API mt_tensor *mt_tensor_wrap(void *data, mt_dtype dtype, int ndim, const int64_t *shape,
                                 const int64_t *strides) {
    size_t nbytes;
    if (!mt_shape_nbytes(dtype, ndim, shape, &nbytes)) return NULL;
    /* Borrowed memory must exist unless there is nothing to point at. */
    if (!data && nbytes != 0) return NULL;
    mt_tensor *t = new_header(dtype, ndim, shape, nbytes);
    if (!t) return NULL;
    t->data = data;
    t->owns_data = false;
    if (strides) {
        for (int i = 0; i < ndim; i++) t->strides[i] = strides[i];
    } else {
        contiguous_strides(ndim, shape, t->strides);
    }
    return t;
}

MT_API void mt_tensor_retain(mt_tensor *t) {
    if (t) atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
}

MT_API void mt_tensor_release(mt_tensor *t) {
    if (!t) return;
    /* acq_rel: the freeing thread sees every write made before other releases. */
    if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1) return;
    if (t->give_back)
        t->give_back(t->owner, t->data, t->capacity);
    else if (t->owns_data)
        free(t->data);
    free(t);
}

MT_API void *mt_tensor_data(const mt_tensor *t) { return t ? t->data : NULL; }

MT_API mt_dtype mt_tensor_dtype(const mt_tensor *t) { return t ? t->dtype : MT_DTYPE_COUNT_; }

MT_API int mt_tensor_ndim(const mt_tensor *t) { return t ? t->ndim : -1; }

MT_API const int64_t *mt_tensor_shape(const mt_tensor *t) { return t ? t->shape : NULL; }

MT_API const int64_t *mt_tensor_strides(const mt_tensor *t) { return t ? t->strides : NULL; }

MT_API mt_device mt_tensor_device(const mt_tensor *t) {
    return t ? t->device : (mt_device){0, 0};
}

MT_API int64_t mt_tensor_numel(const mt_tensor *t) {
    if (!t) return -1;
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i]; /* validated at creation */
    return n;
}

bool mt_tensor_is_contiguous(const mt_tensor *t) {
    if (!t) return false;
    /* An empty tensor has no element to misplace; a length-1 axis is never
     * stepped along, so its stride does not matter (NumPy's rule). */
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0) return true;
    int64_t expect = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] == 1) continue;
        if (t->strides[i] != expect) return false;
        expect *= t->shape[i];
    }
    return true;
}
