/*
 * tensor.h -- the tensor object behind the public mt_tensor handle.
 */
#ifndef MT_RUNTIME_TENSOR_H
#define MT_RUNTIME_TENSOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "minitriton.h"

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
};

/* A C-contiguous tensor over memory the caller allocated (at least
 * numel * element size bytes): the last release calls
 * give_back(owner, data, capacity). NULL when the shape is invalid or memory
 * runs out; the data is then still the caller's. */
mt_tensor *mt_tensor_adopt(void *data, mt_dtype dtype, int ndim, const int64_t *shape,
                           void (*give_back)(void *owner, void *data, size_t capacity),
                           void *owner, size_t capacity);

/* Fills a header the caller owns (a run's arena values, runtime/executor.c):
 * C-contiguous over nbytes at data, borrowed, never retained or released. */
void mt_tensor_init_view(mt_tensor *t, void *data, mt_dtype dtype, int ndim, const int64_t *shape,
                         size_t nbytes);

/* True when strides are C-contiguous (row-major, compact) for the shape. */
bool mt_tensor_is_contiguous(const mt_tensor *t);
/* numel * element size; false on overflow. */
bool mt_shape_nbytes(mt_dtype dtype, int ndim, const int64_t *shape, size_t *out);

#endif
