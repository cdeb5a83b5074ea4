/*
 * dlpack_internal.h -- a tensor seen as a DLTensor, for the library's own
 * calls of host functions (runtime/executor.c).
 */
#ifndef MT_RUNTIME_DLPACK_INTERNAL_H
#define MT_RUNTIME_DLPACK_INTERNAL_H

#include <dlpack/dlpack.h>

#include "runtime/tensor.h"

/* *out describes t (data, device, dtype, shape and strides point into t):
 * valid while t lives and is not changed. */
void mt_tensor_to_dltensor(const mt_tensor *t, DLTensor *out);

#endif
