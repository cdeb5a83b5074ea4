/*
 * dlpack_internal.h -- DLPack's header with the 1.0 versioned struct, and a
 * tensor seen as a DLTensor for the library's own calls of host functions
 * (runtime/executor.c).
 */
#ifndef MT_RUNTIME_DLPACK_INTERNAL_H
#define MT_RUNTIME_DLPACK_INTERNAL_H

#include <dlpack/dlpack.h>
#include <stdint.h>

#include "runtime/tensor.h"

/* Debian 12 ships DLPack 0.6, which has no versioned struct: DLPack 1.0's
 * layout of it, as its ABI defines it, when the header lacks it. */
#ifndef DLPACK_MAJOR_VERSION
/* DLPack 1.0's ABI (dlpack.h v1.0), absent from the 0.x headers */
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 0
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
typedef struct {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;
typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;
#endif

/* *out describes t (data, device, dtype, shape and strides point into t):
 * valid while t lives and is not changed. */
void mt_tensor_to_dltensor(const mt_tensor *t, DLTensor *out);

#endif
