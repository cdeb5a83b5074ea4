/*
 * gpu_launch.h -- what a GPU program's host code calls: kernel launches
 * and device memory, through the calling thread's current GPU frame.
 *
 * For target cuda, each host function (tir.h, "GPU kernels") is compiled
 * for the CPU by the LLVM backend; its T.launch of a kernel becomes
 *
 *     void *args[] = {&a, &out, &n};     // one slot per argument
 *     mt_gpu_launch("add_kernel0", gx, gy, gz, bx, by, bz, shared, args);
 *
 * and an allocation it makes (a buffer passed between two kernels) becomes
 * mt_gpu_alloc / mt_gpu_free. The device that runs the host function (the
 * CUDA device, runtime/device_cuda.c) pushes a frame for the call: the
 * module's kernels by name and the device's launch and memory operations.
 * Generated code needs no extra argument, as with mt_parallel_for. The
 * first failure (no such kernel, a launch or allocation error) is recorded
 * in the frame; later launches of the call are skipped, and the device
 * returns the failure after the host function returns. A launch with a
 * zero grid or block dimension does nothing (a symbolic dim of size 0).
 * Generated code resolves these symbols by address (codegen/jit.c).
 */
#ifndef MT_RUNTIME_GPU_LAUNCH_H
#define MT_RUNTIME_GPU_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "minitriton.h"

typedef struct mt_gpu_frame mt_gpu_frame;

enum { MT_GPU_FRAME_LIVE = 32 };

struct mt_gpu_frame {
    void *dev;                   /* the device, for the operations below */
    int nkernels;
    const char *const *names;    /* the module's kernels, by name ... */
    void *const *fns;            /* ... and their handles */
    /* Launches fn with grid, block, dynamic shared bytes and the argument
     * slots; MT_OK or a status with a message in msg. */
    mt_status (*launch)(void *dev, void *fn, const uint32_t grid[3], const uint32_t block[3],
                        uint32_t shared, void **args, char *msg, int msglen);
    /* A block of at least bytes (its capacity in *cap); MT_OK or a status with
     * a message. free gives it back with that capacity (0: unknown), so that
     * the device can keep it for the next allocation of that size. */
    mt_status (*alloc)(void *dev, int64_t bytes, void **out, size_t *cap, char *msg, int msglen);
    void (*free)(void *dev, void *ptr, size_t cap);
    mt_status status;            /* the first failure (MT_OK: none) */
    char msg[256];
    mt_gpu_frame *prev;          /* the frame this one hides (nested calls) */
    /* the blocks the generated code holds, with their capacities (one past
     * MT_GPU_FRAME_LIVE goes back with capacity 0) */
    struct { void *ptr; size_t cap; } live[MT_GPU_FRAME_LIVE];
    int nlive;
};

/* Makes f the calling thread's current frame (f->prev is set) / restores
 * the previous one. */
void mt_gpu_frame_push(mt_gpu_frame *f);
void mt_gpu_frame_pop(mt_gpu_frame *f);

/* ---- called by generated code -------------------------------------------- */
void mt_gpu_launch(const char *kernel, int64_t gx, int64_t gy, int64_t gz, int64_t bx, int64_t by,
                   int64_t bz, int64_t shared, void **args);
/* count * esize bytes of device memory, or NULL (the failure recorded). */
void *mt_gpu_alloc(int64_t count, int64_t esize);
void mt_gpu_free(void *ptr);

#endif
