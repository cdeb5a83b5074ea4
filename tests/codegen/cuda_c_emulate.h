/*
 * cuda_c_emulate.h -- runs the CUDA C that codegen/cuda_c.c prints on the
 * CPU, as host C++, for tests (test_cuda_c_gpu.c): the text's own
 * semantics (helpers, casts, wrapping, immediates, barriers) checked
 * without a GPU.
 *
 *     c++ -std=c++17 -ffp-contract=off -I<cuda>/include -include cuda_c_emulate.h \
 *         -x c++ gpucheck.cu -lpthread
 *
 * A launch, MT_LAUNCH(kernel, grid, block, args...), runs the blocks one
 * after another and the threads of a block as real threads at once, so
 * __syncthreads() is a barrier of the block's threads; threadIdx and
 * blockIdx are per thread, __shared__ arrays are statics (one block runs at
 * a time). float16 is cuda_fp16.h's host implementation; the CUDA runtime
 * calls the harness makes are malloc/memcpy. The math functions are the
 * host's libm, not CUDA's: only the expressions around them are CUDA's
 * (fminf and friends are made to ignore a signaling NaN like a quiet one,
 * as the GPU does).
 * x and y dims are 1 (the GPU schedule uses x only, for now).
 */
#ifndef MT_TESTS_CUDA_C_EMULATE_H
#define MT_TESTS_CUDA_C_EMULATE_H

#include <cuda_fp16.h> /* host __half before __device__ means nothing */

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <thread>
#include <vector>

struct mt_emu_dim3 {
    unsigned x, y, z;
};
static thread_local mt_emu_dim3 mt_emu_thread, mt_emu_block;
static pthread_barrier_t *mt_emu_barrier;

#undef __global__
#undef __device__
#undef __forceinline__
#undef __shared__
#undef __launch_bounds__
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
#define threadIdx mt_emu_thread
#define blockIdx mt_emu_block

static inline void __syncthreads() { pthread_barrier_wait(mt_emu_barrier); }

/* device intrinsics the text calls */
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, 8); return d; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
/* fminf and the rest: a NaN operand is missing, a signaling one too (as in
 * the GPU's min.f32 and the CPU backend's minnum; glibc returns a NaN
 * for a signaling NaN) */
static inline float mt_emu_fminf(float a, float b) { return a != a ? b : b != b ? a : fminf(a, b); }
static inline float mt_emu_fmaxf(float a, float b) { return a != a ? b : b != b ? a : fmaxf(a, b); }
static inline double mt_emu_fmin(double a, double b) { return a != a ? b : b != b ? a : fmin(a, b); }
static inline double mt_emu_fmax(double a, double b) { return a != a ? b : b != b ? a : fmax(a, b); }
#define fminf mt_emu_fminf
#define fmaxf mt_emu_fmaxf
#define fmin mt_emu_fmin
#define fmax mt_emu_fmax
/* CUDA's integer min/max overloads */
static inline int min(int a, int b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline long long max(long long a, long long b) { return a > b ? a : b; }
static inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

/* the runtime calls of the harness (cuda_fp16.h declared the real ones: these
 * take their names) */
static inline cudaError_t mt_emu_malloc(void **p, size_t n) {
    *p = malloc(n ? n : 1);
    return cudaSuccess;
}
static inline cudaError_t mt_emu_free(void *p) { free(p); return cudaSuccess; }
static inline cudaError_t mt_emu_memset(void *p, int v, size_t n) {
    memset(p, v, n);
    return cudaSuccess;
}
static inline cudaError_t mt_emu_memcpy(void *d, const void *s, size_t n, cudaMemcpyKind) {
    memcpy(d, s, n);
    return cudaSuccess;
}
static inline cudaError_t mt_emu_sync() { return cudaSuccess; }
static inline cudaError_t mt_emu_count(int *n) { *n = 1; return cudaSuccess; }
static inline cudaError_t mt_emu_props(cudaDeviceProp *p, int) {
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "CPU emulation");
    return cudaSuccess;
}
static inline const char *mt_emu_error_string(cudaError_t) { return "error"; }
#undef cudaGetDeviceProperties
#define cudaMalloc mt_emu_malloc
#define cudaFree mt_emu_free
#define cudaMemset mt_emu_memset
#define cudaMemcpy mt_emu_memcpy
#define cudaDeviceSynchronize mt_emu_sync
#define cudaGetDeviceCount mt_emu_count
#define cudaGetDeviceProperties mt_emu_props
#define cudaGetErrorString mt_emu_error_string

/* Each block in turn, its threads at once. */
template <class F> static void mt_emulate(unsigned grid, unsigned block, F body) {
    for (unsigned b = 0; b < grid; b++) {
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, block);
        mt_emu_barrier = &bar;
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < block; t++)
            threads.emplace_back([&, t] {
                mt_emu_block = {b, 0, 0};
                mt_emu_thread = {t, 0, 0};
                body();
            });
        for (auto &th : threads) th.join();
        pthread_barrier_destroy(&bar);
    }
}
#define MT_LAUNCH(k, grid, block, ...) mt_emulate((grid), (block), [&] { k(__VA_ARGS__); })

#endif
