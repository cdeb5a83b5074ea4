/*
 * nvrtc.h -- CUDA C source text to a cubin, with NVIDIA's runtime compiler
 * (NVRTC) loaded at run time.
 *
 * The library has no link-time CUDA dependency: the first call that needs
 * NVRTC dlopens it (once per process, thread-safe) and looks up the few
 * functions used here. Where it is looked for:
 *
 *   MT_NVRTC_LIBRARY   if set, this path only (tests: a missing library)
 *   otherwise          libnvrtc.so, libnvrtc.so.13, libnvrtc.so.12,
 *                      libnvrtc.so.11.2, /usr/local/cuda/lib64/libnvrtc.so
 *
 * A compile asks for a real architecture (--gpu-architecture=sm_XY), so
 * that NVRTC runs ptxas and hands back a cubin the driver loads as is
 * (cuModuleLoadData), and for ptxas's verbose report, which is parsed into
 * one mt_nvrtc_kernel_info per kernel (registers, spills, shared memory,
 * stack): what a schedule's author needs to see.
 *
 *     mt_nvrtc_out out;
 *     char err[256];
 *     if (mt_nvrtc_compile(src, "vadd.cu", 90, &out, err, sizeof err) == MT_OK)
 *         load(out.image, out.size), printf("%d regs\n", out.kernels[0].registers);
 *     else
 *         report(err, out.log);                 // the log may be NULL
 *     mt_nvrtc_out_free(&out);                  // after success or failure
 *
 * Errors: no NVRTC is MT_ERR_UNAVAILABLE (the message names what was
 * tried); source that does not compile is MT_ERR_INTERNAL (the source is
 * ours: a code generator bug), with the log's first lines in err and all
 * of it in out->log; an architecture this NVRTC cannot target is
 * MT_ERR_UNSUPPORTED. Nothing prints, exits or aborts.
 *
 * Threads: any number of compiles may run at once (one NVRTC program
 * each).
 */
#ifndef MT_CODEGEN_NVRTC_H
#define MT_CODEGEN_NVRTC_H

#include <stdbool.h>
#include <stddef.h>

#include "minitriton.h"

/* What ptxas reported for one kernel (an entry function). */
typedef struct mt_nvrtc_kernel_info {
    char name[128];        /* as in the cubin (mangled unless extern "C"), cut at 127 */
    int registers;         /* registers per thread */
    int spill_store_bytes; /* bytes spilled to local memory ... */
    int spill_load_bytes;  /* ... and loaded back */
    int shared_bytes;      /* static shared memory per block */
    int stack_bytes;       /* stack frame per thread */
} mt_nvrtc_kernel_info;

/* What a compile gives back; every pointer is malloc'd and freed by
 * mt_nvrtc_out_free. */
typedef struct mt_nvrtc_out {
    void *image;                   /* the cubin (NULL on failure) */
    size_t size;                   /* its size in bytes */
    char *log;                     /* NVRTC's log, ptxas's report included (or NULL) */
    mt_nvrtc_kernel_info *kernels; /* one per kernel in the log, in its order */
    int nkernels;
    double ms;                     /* wall-clock time of the compile */
} mt_nvrtc_out;

/* Compiles src (NUL-terminated CUDA C++; name is the file name messages
 * use, NULL: "kernel.cu") for compute capability sm (80, 86, 89, 90: the
 * major digit(s) times ten plus the minor). *out is always set; free it
 * with mt_nvrtc_out_free. err (errlen bytes, may be NULL) gets the message
 * on failure. */
mt_status mt_nvrtc_compile(const char *src, const char *name, int sm, mt_nvrtc_out *out,
                           char *err, size_t errlen);

void mt_nvrtc_out_free(mt_nvrtc_out *out);

/* Whether NVRTC can be loaded (loads it); if not, why (len bytes, may be
 * NULL) names what was tried. */
bool mt_nvrtc_available(char *why, size_t len);

/* NVRTC's version as major * 1000 + minor * 10 (13.0: 13000, like
 * CUDA_VERSION); 0 when it cannot be loaded. */
int mt_nvrtc_version(void);

#endif
