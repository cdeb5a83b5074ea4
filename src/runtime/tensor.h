/*
 * tensor.h -- the tensor object behind the public mt_tensor handle.
 *
 * A tensor's bytes live on a device (runtime/device.h): host memory (the
 * CPU; every public constructor makes such tensors) or memory of another
 * device, which only that device's operations may touch. dev is set exactly
 * for the latter, so `t->dev == NULL` means "the host may dereference data".
 */
#ifndef MT_RUNTIME_TENSOR_H
#define MT_RUNTIME_TENSOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "minitriton.h"

struct mt_dev;
struct mt_dev_err;

struct mt_tensor {
    atomic_int refs;
    mt_dtype dtype;
    int ndim;
    int64_t shape[MT_MAX_RANK];
    int64_t strides[MT_MAX_RANK]; /* in elements */
    void *data;
    bool owns_data;               /* data was allocated by the library */
    size_t nbytes;                /* numel * element size (an owned allocation is
                                     rounded up to a multiple of 64) */
    /* Owned data that is not plain heap memory (runtime/pool.c): the last
     * release calls give_back(owner, data, capacity) instead of free. */
    void (*give_back)(void *owner, void *data, size_t capacity);
    void *owner;
    size_t capacity;
    mt_device device;             /* where data lives: {MT_DEVICE_CPU, 0} for host memory */
    struct mt_dev *dev;           /* the device holding data when the host cannot dereference
                                     it (a reference when the tensor owns data), else NULL */
    bool read_only;               /* imported read-only (DLPack): no kernel writes it */
};

/* A C-contiguous tensor over memory the caller allocated (at least
 * numel * element size bytes): the last release calls
 * give_back(owner, data, capacity). NULL when the shape is invalid or memory
 * runs out; the data is then still the caller's. */
mt_tensor *mt_tensor_adopt(void *data, mt_dtype dtype, int ndim, const int64_t *shape,
                           void (*give_back)(void *owner, void *data, size_t capacity),
                           void *owner, size_t capacity);

/* Fills a header the caller owns (a run's arena values, runtime/executor.c):
 * C-contiguous over nbytes at data on device dev (NULL: host memory; the
 * CPU device counts as host memory too), borrowed, never retained or
 * released. */
void mt_tensor_init_view(mt_tensor *t, void *data, mt_dtype dtype, int ndim, const int64_t *shape,
                         size_t nbytes, struct mt_dev *dev);

/* A new C-contiguous tensor on device d (not zeroed), allocated through d
 * and given back to it by the last release; it holds a reference on d
 * unless d makes its own tensors (the CPU's pool tensors, device.h). NULL
 * when the shape is invalid or the device is out of memory. */
mt_tensor *mt_tensor_create_on(struct mt_dev *d, mt_dtype dtype, int ndim, const int64_t *shape);

/* dst <- src: same dtype and shape, both C-contiguous, on any devices (host
 * to host, through a device's copy, or through a host buffer between two
 * devices). MT_ERR_INVALID_ARG when they do not match; the device's status
 * when a copy fails. The message goes to e. */
mt_status mt_tensor_copy(mt_tensor *dst, const mt_tensor *src, struct mt_dev_err *e);

/* True when strides are C-contiguous (row-major, compact) for the shape. */
bool mt_tensor_is_contiguous(const mt_tensor *t);
/* numel * element size; false on overflow. */
bool mt_shape_nbytes(mt_dtype dtype, int ndim, const int64_t *shape, size_t *out);

#endif
