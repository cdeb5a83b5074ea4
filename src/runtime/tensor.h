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
};

/* True when strides are C-contiguous (row-major, compact) for the shape. */
bool mt_tensor_is_contiguous(const mt_tensor *t);
/* numel * element size; false on overflow. */
bool mt_shape_nbytes(mt_dtype dtype, int ndim, const int64_t *shape, size_t *out);

#endif
