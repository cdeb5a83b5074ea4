/*
 * cuda_c.h -- a program's GPU kernels as one CUDA C translation unit.
 *
 * Given what passes/tir/split_host_device.c made of a program (the host
 * functions and the device functions they launch), mt_cuda_c_emit prints
 * every device function of kind "cuda_kernel" (tir.h, "GPU kernels") as an
 * `extern "C" __global__` function, each preceded by a comment line with
 * the launch configuration the host uses for it:
 *
 *     const char *src = mt_cuda_c_emit(arena, sp.host, nhost, sp.device, sp.ndevice);
 *     // nvcc -c -arch=sm_80 k.cu, or nvrtcCreateProgram(&p, src, ...):
 *     // the text needs no header but <cuda_fp16.h> and <cuda_bf16.h>, and
 *     // those only when a kernel uses float16 / bfloat16 (NVRTC:
 *     // --include-path=<toolkit>/include)
 *
 * The text computes what the CPU backend computes for the same TIR (the
 * semantics and the few places where CUDA may differ are in cuda_c_expr.c's
 * header and docs/codegen.md). It does not print host functions: the
 * runtime launches the kernels itself, from the host TIR.
 *
 * This file is the codegen layer's, but does not need LLVM.
 */
#ifndef MT_CODEGEN_CUDA_C_H
#define MT_CODEGEN_CUDA_C_H

#include "support/arena.h"
#include "tir/tir.h"

/* The CUDA C translation unit of a program's GPU kernels: every device
 * function of kind "cuda_kernel" in device[0..ndevice) (others are
 * ignored), each preceded by its launch configuration as it appears in the
 * host functions' T.launch statements. Text in a. Errors: mt_ice for a
 * node it cannot print (a compiler bug). */
const char *mt_cuda_c_emit(mt_arena *a, mt_tfunc *const *host, int nhost, mt_tfunc *const *device,
                           int ndevice);

#endif
