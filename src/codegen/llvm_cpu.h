/*
 * llvm_cpu.h -- the LLVM CPU backend's own functions: what its backend
 * object (codegen.h, backend.c) is made of, and what its tests call.
 *
 * mt_jit is the process-wide part (one per context): an ORC LLJIT for the
 * host CPU and the target machines (host CPU name and features) that
 * optimize and compile for it. mt_codegen_cpu turns host functions and the
 * parallel bodies they launch (tir.h, lowered form: no blocks, flat 1-D
 * buffers, after split_host_device) into machine code: one LLVM module per
 * host function and, on several threads, one per parallel body, optimized
 * (opt_level 0..3 through the new pass manager) and compiled to an object
 * file on up to `threads` threads at once, kept as bitcode for the dumps;
 * the objects go into the JIT's main JITDylib under one ResourceTracker,
 * and the host functions' addresses come back. Releasing the module removes
 * its code from the JIT (modules must be released before the JIT is
 * destroyed). See docs/codegen.md.
 *
 * The host functions follow the calling convention in tir.h:
 *   void name(T0 *noalias p0, ..., int64_t sym0, ...)
 * with every buffer pointer `noalias`, and are exported under a name that is
 * unique in the process (the module prefix + the function's name).
 */
#ifndef MT_CODEGEN_LLVM_CPU_H
#define MT_CODEGEN_LLVM_CPU_H

#include <stddef.h>

#include "codegen/codegen.h"

typedef struct mt_jit mt_jit;
typedef struct mt_jit_module mt_jit_module;

/* Creates the JIT for the host. On failure returns NULL and writes a message
 * into err[0..errlen). Thread-safe; initializes LLVM once per process. */
mt_jit *mt_jit_create(char *err, size_t errlen);
void mt_jit_destroy(mt_jit *jit);
const char *mt_jit_cpu_name(const mt_jit *jit);     /* e.g. "znver5" */
const char *mt_jit_cpu_features(const mt_jit *jit); /* "+avx512f,..." */

/* The optimized bitcode of one part of a compiled module (arena). */
typedef struct mt_codegen_bc {
    const void *data;
    size_t len;
} mt_codegen_bc;

/* Compiles in->host (and the parallel bodies in->device, each launched by
 * one of them) into one JIT module on up to in->threads threads. out->module
 * is an mt_jit_module, out->dump_src the parts' bitcode (mt_codegen_bc
 * [out->nparts], in function order: each host function followed by its
 * parallel bodies). Parts optimized and compiled on several threads at once
 * overlap: their wall time is split between ms_opt and ms_jit in proportion
 * to the CPU time of each phase; ms_jit also has the linking. Errors (a node
 * codegen does not handle, a parallel loop left, LLVM verifier failure) are
 * reported with mt_ice/mt_fail after all LLVM objects are disposed. */
void mt_codegen_cpu(mt_jit *jit, mt_arena *a, const mt_codegen_in *in, mt_codegen_out *out);
void mt_jit_module_release(mt_jit_module *m); /* NULL is a no-op */

/* Dumps of a compiled module, computed on demand from the bitcode of its
 * parts (out->dump_src, nparts), linked into one module: the optimized IR
 * as text, and the assembly. Return arena text, or NULL and a message in
 * err. */
const char *mt_jit_ir_text(mt_arena *a, const mt_codegen_bc *parts, int n, char *err,
                           size_t errlen);
const char *mt_jit_emit_asm(mt_jit *jit, mt_arena *a, const mt_codegen_bc *parts, int n,
                            char *err, size_t errlen);

#endif
