/*
 * cg_util.h -- what the LLVM backend's tests share: compiling hand-built
 * lowered functions the way the pipeline does (split_host_device, then
 * mt_codegen_cpu), and the optimized IR of what was compiled.
 *
 * The tests that include it compile src/passes/tir/split_host_device.c in
 * (tests/codegen.cmake): the codegen layer does not link the passes.
 */
#ifndef MT_TESTS_CG_UTIL_H
#define MT_TESTS_CG_UTIL_H

#include "codegen/llvm_cpu.h"
#include "passes/tir/tir_passes.h"

/* fs[0..n) split into host and device functions (in a), compiled on
 * `threads` threads at opt level `opt`; out->fn_addrs[i] is fs[i]'s host
 * function. Raises (mt_fail) as mt_codegen_cpu does. */
static inline void cg_compile(mt_jit *jit, mt_arena *a, mt_tfunc *const *fs, int n, int opt,
                              int threads, mt_codegen_out *out) {
    mt_tsplit sp;
    mt_tir_split_host_device(a, fs, n, &sp);
    mt_codegen_in in = {sp.host, n, sp.device, sp.ndevice, opt, threads};
    mt_codegen_cpu(jit, a, &in, out);
}

/* The parts' bitcode of a compile. */
static inline const mt_codegen_bc *cg_parts(const mt_codegen_out *out) { return out->dump_src; }

/* The optimized IR of a compile as text (in a), or NULL. */
static inline const char *cg_ir_text(mt_arena *a, const mt_codegen_out *out) {
    char err[256];
    return mt_jit_ir_text(a, cg_parts(out), out->nparts, err, sizeof err);
}

#endif
