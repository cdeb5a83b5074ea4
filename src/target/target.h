/*
 * target.h -- what code is generated for: one description of the machine.
 *
 * A target (TVM's Target) is a kind -- cpu or cuda -- and the facts about
 * the machine that passes and schedule rules need: for a CPU the LLVM CPU
 * name and features, the widest vector register, the cores parallel loops
 * run on and the data-cache sizes; for an NVIDIA GPU the architecture
 * (sm_XX), the warp size, and the per-block limits on threads, shared memory
 * and registers, and its tensor cores' tile (and whether they take bfloat16). Every pass and rule reads machine facts from the target of
 * the loop function it works on (mt_tfunc.target, tir.h) and from nowhere
 * else; a function without one (a unit test building TIR by hand) gets
 * mt_target_default_cpu(), the facts of an x86-64 machine with AVX-512.
 *
 * The compile options choose the target (mt_compile_options.target and
 * .arch); for the CPU, the facts come from the host the context runs on
 * (mt_target_host_cpu, filled once per context). The target's text
 * (mt_target_str) is printed in the scheduled TIR (each function's
 * T.func_attr "target") and is part of the compile cache's key.
 *
 *     cpu -mcpu=znver5 -vector-bytes=64 -cores=2 -l1d=48K -l2=1M -l3=32M
 *     cuda -arch=sm_90 -warp=32 -max-threads=1024 -max-shared=227K -regs=65536 -sms=132 -mma=16x16x16
 *
 * This layer knows nothing above support/: it does not ask LLVM or CUDA
 * anything; the context hands it the host CPU's name and features.
 */
#ifndef MT_TARGET_TARGET_H
#define MT_TARGET_TARGET_H

#include <stdbool.h>
#include <stdint.h>

#include "minitriton.h"

typedef struct mt_target_desc {
    mt_target kind;            /* MT_TARGET_CPU or MT_TARGET_CUDA */
    /* ---- cpu ---- */
    char cpu[64];              /* LLVM CPU name, e.g. "znver5" ("generic" when unknown) */
    int vector_bytes;          /* widest vector register: 64 (AVX-512), 32 (AVX2), 16 (SSE, NEON);
                                * cuda: 16, a thread's widest load or store */
    int vector_registers;      /* architectural vector registers: 32 (AVX-512, NEON), 16 (AVX2) */
    int cache_line_bytes;      /* 64 */
    int cores;                 /* threads the context runs parallel loops on */
    int64_t l1d_bytes;         /* L1 data cache per core */
    int64_t l2_bytes;          /* L2 per core */
    int64_t l3_bytes;          /* last-level cache, shared (0 when unknown) */
    /* ---- cuda ---- */
    int sm;                    /* compute capability x 10: 80, 86, 89, 90 */
    int warp_size;             /* threads per warp: 32 */
    int max_threads_per_block; /* 1024 */
    int max_shared_per_block;  /* bytes a block may use with the opt-in carve-out */
    int max_regs_per_block;    /* 32-bit registers per block */
    int max_regs_per_thread;   /* 255 */
    int num_sms;               /* streaming multiprocessors of the usual part of that arch */
    int mma_m, mma_n, mma_k;   /* tensor cores: the warp-level tile (WMMA) of float16 inputs
                                  with float32 sums, 16 x 16 x 16 from sm_70 on; 0: none */
    bool mma_bf16;             /* the same tile takes bfloat16 inputs (sm_80 on); not in the
                                  text: the arch, which is, decides it */
    /* ---- both ---- */
    bool test_device;          /* "gpu" means the test device (tests only; runtime/device.h) */
} mt_target_desc;

/* The facts of the host CPU: name and LLVM feature string (as LLVM's
 * LLVMGetHostCPUName/Features give them), the number of cores parallel
 * loops use, and the cache sizes read from the system (defaults when it
 * does not say). */
void mt_target_host_cpu(mt_target_desc *t, const char *cpu, const char *features, int cores);

/* Is "+name" one of the comma-separated LLVM features ("+avx2,-avx512f,...")? */
bool mt_target_has_feature(const char *features, const char *name);

/* The target used where a loop function has none: an x86-64 CPU with
 * AVX-512 (64-byte vectors, 32 registers), 2 cores, 48 KiB / 1 MiB / 32 MiB
 * of cache. */
const mt_target_desc *mt_target_default_cpu(void);

/* The facts of an NVIDIA architecture, "sm_80", "sm_86", "sm_89" or
 * "sm_90" (NULL: sm_90). Returns false, leaving t alone, for another name. */
bool mt_target_cuda(mt_target_desc *t, const char *arch);

/* The architectures mt_target_cuda knows, for messages: "sm_80, sm_86, ..." */
const char *mt_target_cuda_archs(void);

/* The target's text (see the top of this file) into buf; returns buf. */
char *mt_target_str(const mt_target_desc *t, char *buf, int cap);

/* The bytes one vector step of a schedule covers: the widest register, and
 * at least a cache line -- so that a vector store writes whole lines (what a
 * streaming store needs, codegen/llvm_stream.c) and, where registers are
 * narrower (AVX2, SSE, NEON), each step is two or four independent register
 * operations, the unrolling the CPU rules were measured with. */
int mt_target_step_bytes(const mt_target_desc *t);

/* Vector lanes of dtype in one vector step (mt_target_step_bytes; at least 1). */
int mt_target_lanes(const mt_target_desc *t, mt_dtype dtype);

/* Vector lanes of dtype in one register (vector_bytes; at least 1): what a
 * register-tiled schedule counts its accumulators in. */
int mt_target_register_lanes(const mt_target_desc *t, mt_dtype dtype);

#endif
