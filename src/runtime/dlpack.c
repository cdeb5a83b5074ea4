/*
 * dlpack.c -- tensors in and out through DLPack managed tensors.
 *
 * DLPack's device codes are minitriton's (mt_device), so a DLTensor's
 * device maps one to one; its dtype is a (code, bits, lanes) triple mapped
 * to mt_dtype both ways (bool is kDLBool, 8 bits).
 *
 * Import wraps the producer's memory in a tensor whose last release calls
 * the producer's deleter (the tensor's give_back, with an `imported` record
 * as its owner). Nothing is taken until every check passed, so a refused
 * tensor stays the caller's. CUDA memory gets a device instance of its
 * ordinal (runtime/device.h), held by the tensor, so that copies to and
 * from the host go through the driver; that needs the GPU to be present.
 *
 * Export allocates one block: the managed struct, the shape and strides it
 * points at, and the tensor it holds a reference on. The deleter releases
 * the reference and frees the block.
 *
 * Debian 12 ships DLPack 0.6, which has no versioned struct; DLPack 1.0's
 * layout of it (DLPackVersion, flags) is declared below when the header
 * lacks it, as DLPack's ABI defines it, so both kinds of producer work.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "minitriton.h"
#include "runtime/device.h"
#include "runtime/dlpack_internal.h"
#include "support/diag.h"


enum { DL_BOOL = 6 }; /* kDLBool, DLPack >= 0.8 */

static void failf(mt_diag *diag, mt_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void failf(mt_diag *diag, mt_status st, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mt_diag_set(diag, st, NULL, NULL, MT_NOLOC, msg);
}

/* ---- dtypes --------------------------------------------------------------- */

static bool dtype_from_dl(DLDataType t, mt_dtype *out) {
    if (t.lanes != 1) return false;
    switch (t.code) {
    case kDLInt:
        *out = t.bits == 8 ? MT_INT8 : t.bits == 32 ? MT_INT32 : t.bits == 64 ? MT_INT64 : MT_DTYPE_COUNT_;
        break;
    case kDLUInt: *out = t.bits == 8 ? MT_UINT8 : MT_DTYPE_COUNT_; break;
    case kDLFloat:
        *out = t.bits == 16 ? MT_FLOAT16 : t.bits == 32 ? MT_FLOAT32 : t.bits == 64 ? MT_FLOAT64 : MT_DTYPE_COUNT_;
        break;
    case kDLBfloat: *out = t.bits == 16 ? MT_BFLOAT16 : MT_DTYPE_COUNT_; break;
    case DL_BOOL: *out = t.bits == 8 ? MT_BOOL : MT_DTYPE_COUNT_; break;
    default: *out = MT_DTYPE_COUNT_; break;
    }
    return *out != MT_DTYPE_COUNT_;
}

static DLDataType dtype_to_dl(mt_dtype dt) {
    DLDataType t = {0, (uint8_t)(mt_dtype_size(dt) * 8), 1};
    switch (dt) {
    case MT_BOOL: t.code = DL_BOOL; break;
    case MT_UINT8: t.code = kDLUInt; break;
    case MT_FLOAT16: case MT_FLOAT32: case MT_FLOAT64: t.code = kDLFloat; break;
    case MT_BFLOAT16: t.code = kDLBfloat; break;
    default: t.code = kDLInt; break;
    }
    return t;
}

static const char *dl_code_name(uint8_t code) {
    static const char *const names[] = {"int", "uint", "float", "opaque handle", "bfloat", "complex", "bool"};
    return code < sizeof names / sizeof *names ? names[code] : "unknown";
}

/* ---- import ------------------------------------------------------------------ */

typedef struct imported {
    void *managed;  /* the DLManagedTensor or DLManagedTensorVersioned */
    bool versioned;
    mt_dev *dev;    /* the CUDA device holding the data, or NULL */
} imported;

static void give_back_imported(void *owner, void *data, size_t capacity) {
    (void)data, (void)capacity;
    imported *im = owner;
    if (im->versioned) {
        DLManagedTensorVersioned *m = im->managed;
        if (m->deleter) m->deleter(m);
    } else {
        DLManagedTensor *m = im->managed;
        if (m->deleter) m->deleter(m);
    }
    mt_dev_release(im->dev);
    free(im);
}

/* Where the data lives: host memory (NULL device) or a CUDA device. */
static mt_status import_device(DLDevice d, mt_dev **dev, mt_diag *diag) {
    *dev = NULL;
    if (d.device_type == kDLCPU || d.device_type == kDLCUDAHost) return MT_OK;
    if (d.device_type != kDLCUDA && d.device_type != kDLCUDAManaged) {
        failf(diag, MT_ERR_UNSUPPORTED,
              "DLPack device type %d is not supported; minitriton takes CPU (1), CUDA host (3), "
              "CUDA (2) and CUDA managed (13) memory", (int)d.device_type);
        return MT_ERR_UNSUPPORTED;
    }
    mt_dev_err e = {""};
    mt_status st = mt_dev_cuda_open(d.device_id, dev, &e);
    if (st != MT_OK) failf(diag, st, "a DLPack tensor on cuda:%d needs that GPU: %s", d.device_id, e.msg);
    return st;
}

/* The checks of a DLTensor that need no device. */
static mt_status check_tensor(const DLTensor *dl, mt_dtype *dt, mt_diag *diag) {
    if (dl->ndim < 0 || dl->ndim > MT_MAX_RANK) {
        failf(diag, MT_ERR_LIMIT, "a DLPack tensor of rank %d: minitriton tensors have at most %d dimensions",
              dl->ndim, MT_MAX_RANK);
        return MT_ERR_LIMIT;
    }
    if (dl->ndim > 0 && !dl->shape) {
        failf(diag, MT_ERR_INVALID_ARG, "a DLPack tensor of rank %d without a shape", dl->ndim);
        return MT_ERR_INVALID_ARG;
    }
    for (int i = 0; i < dl->ndim; i++)
        if (dl->shape[i] < 0) {
            failf(diag, MT_ERR_INVALID_ARG, "a DLPack tensor with dimension %d of size %lld", i,
                  (long long)dl->shape[i]);
            return MT_ERR_INVALID_ARG;
        }
    if (!dtype_from_dl(dl->dtype, dt)) {
        char lanes[16] = "";
        if (dl->dtype.lanes != 1) snprintf(lanes, sizeof lanes, "x%u", dl->dtype.lanes);
        failf(diag, MT_ERR_UNSUPPORTED,
              "DLPack dtype %s%u%s is not supported (bool, int8, uint8, int32, int64, float16, "
              "float32, float64, bfloat16 with one lane)",
              dl_code_name(dl->dtype.code), dl->dtype.bits, lanes);
        return MT_ERR_UNSUPPORTED;
    }
    uintptr_t p = (uintptr_t)dl->data + (uintptr_t)dl->byte_offset;
    if (dl->data && p % mt_dtype_size(*dt) != 0) {
        failf(diag, MT_ERR_UNSUPPORTED, "a DLPack tensor of %s whose data (with its byte offset %llu) "
              "is not aligned to %zu bytes", mt_dtype_str(*dt), (unsigned long long)dl->byte_offset,
              mt_dtype_size(*dt));
        return MT_ERR_UNSUPPORTED;
    }
    return MT_OK;
}

static mt_tensor *import(void *managed, bool versioned, const DLTensor *dl, bool read_only,
                         mt_diag *diag) {
    mt_diag_clear(diag);
    mt_dtype dt;
    mt_dev *dev = NULL;
    if (check_tensor(dl, &dt, diag) != MT_OK || import_device(dl->device, &dev, diag) != MT_OK)
        return NULL;
    char *data = dl->data ? (char *)dl->data + dl->byte_offset : NULL;
    imported *im = calloc(1, sizeof *im);
    mt_tensor *t = im ? mt_tensor_wrap(data, dt, dl->ndim, dl->shape, dl->strides) : NULL;
    if (!t) {
        free(im);
        mt_dev_release(dev);
        failf(diag, im ? MT_ERR_INVALID_ARG : MT_ERR_NOMEM,
              im ? "a DLPack tensor whose size overflows or whose data is NULL" : "out of memory");
        return NULL;
    }
    *im = (imported){managed, versioned, dev};
    t->give_back = give_back_imported;
    t->owner = im;
    t->dev = dev;
    if (dev) t->device = (mt_device){MT_DEVICE_CUDA, dl->device.device_id};
    t->read_only = read_only;
    return t;
}

MT_API mt_tensor *mt_tensor_from_dlpack(struct DLManagedTensor *src, mt_diag *diag) {
    if (!src) {
        failf(diag, MT_ERR_INVALID_ARG, "mt_tensor_from_dlpack: src is NULL");
        return NULL;
    }
    return import(src, false, &src->dl_tensor, false, diag);
}

MT_API mt_tensor *mt_tensor_from_dlpack_versioned(struct DLManagedTensorVersioned *src, mt_diag *diag) {
    if (!src) {
        failf(diag, MT_ERR_INVALID_ARG, "mt_tensor_from_dlpack_versioned: src is NULL");
        return NULL;
    }
    if (src->version.major != DLPACK_MAJOR_VERSION) {
        failf(diag, MT_ERR_UNSUPPORTED, "a DLPack %u.%u tensor; minitriton takes DLPack %d.x",
              src->version.major, src->version.minor, DLPACK_MAJOR_VERSION);
        return NULL;
    }
    return import(src, true, &src->dl_tensor, (src->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0, diag);
}

/* ---- export ------------------------------------------------------------------ */

typedef struct exported {
    DLManagedTensor m;
    DLManagedTensorVersioned mv;
    int64_t shape[MT_MAX_RANK], strides[MT_MAX_RANK];
    mt_tensor *t;
} exported;

static void delete_exported(exported *x) {
    mt_tensor_release(x->t);
    free(x);
}
static void delete_legacy(DLManagedTensor *m) { delete_exported((exported *)m->manager_ctx); }
static void delete_versioned(DLManagedTensorVersioned *m) { delete_exported((exported *)m->manager_ctx); }

void mt_tensor_to_dltensor(const mt_tensor *t, DLTensor *out) {
    out->data = t->data;
    out->device = (DLDevice){(DLDeviceType)t->device.type, t->device.id};
    out->ndim = t->ndim;
    out->dtype = dtype_to_dl(t->dtype);
    out->shape = (int64_t *)t->shape;
    out->strides = (int64_t *)t->strides;
    out->byte_offset = 0;
}

static exported *export(mt_tensor *t, const char *fn, mt_diag *diag) {
    mt_diag_clear(diag);
    if (!t) {
        failf(diag, MT_ERR_INVALID_ARG, "%s: t is NULL", fn);
        return NULL;
    }
    if (t->dev && t->device.type == MT_DEVICE_CUDA && strcmp(t->dev->ops->kind, "cuda") != 0) {
        /* the emulated GPU answers to cuda:N, but its memory is not CUDA's */
        failf(diag, MT_ERR_UNSUPPORTED, "%s: the tensor is on the emulated GPU, whose memory is not CUDA "
              "memory; copy it to the host first (mt_kernel_tensor_to)", fn);
        return NULL;
    }
    exported *x = calloc(1, sizeof *x);
    if (!x) {
        failf(diag, MT_ERR_NOMEM, "out of memory");
        return NULL;
    }
    mt_tensor_retain(t);
    x->t = t;
    memcpy(x->shape, t->shape, sizeof x->shape);
    memcpy(x->strides, t->strides, sizeof x->strides);
    DLTensor *dl = &x->m.dl_tensor;
    mt_tensor_to_dltensor(t, dl);
    dl->shape = x->shape; /* the managed tensor's own copies */
    dl->strides = x->strides;
    x->mv.dl_tensor = *dl;
    return x;
}

MT_API struct DLManagedTensor *mt_tensor_to_dlpack(mt_tensor *t, mt_diag *diag) {
    exported *x = export(t, "mt_tensor_to_dlpack", diag);
    if (!x) return NULL;
    x->m.manager_ctx = x;
    x->m.deleter = delete_legacy;
    return &x->m;
}

MT_API struct DLManagedTensorVersioned *mt_tensor_to_dlpack_versioned(mt_tensor *t, mt_diag *diag) {
    exported *x = export(t, "mt_tensor_to_dlpack_versioned", diag);
    if (!x) return NULL;
    x->mv.version = (DLPackVersion){DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    x->mv.manager_ctx = x;
    x->mv.deleter = delete_versioned;
    x->mv.flags = t->read_only ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
    return &x->mv;
}
