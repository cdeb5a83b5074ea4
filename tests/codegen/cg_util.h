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

#include <stdio.h>

#include "codegen/llvm_cpu.h"
#include "passes/tir/tir_passes.h"
#include "support/diag.h"

/* What compiling fs[0..n) the way the pipeline does takes: fs split into
 * host and device functions (in a); host[i] is fs[i]'s. */
static inline mt_codegen_in cg_split(mt_arena *a, mt_tfunc *const *fs, int n, int opt,
                                     int threads) {
    mt_tsplit sp;
    mt_tir_split_host_device(a, fs, n, &sp);
    mt_codegen_in in = {sp.host, n, sp.device, sp.ndevice, opt, threads};
    return in;
}

/* fs[0..n) split and compiled on `threads` threads at opt level `opt`;
 * out->fn_addrs[i] is fs[i]'s host function. Raises (mt_fail) as
 * mt_codegen_cpu does. */
static inline void cg_compile(mt_jit *jit, mt_arena *a, mt_tfunc *const *fs, int n, int opt,
                              int threads, mt_codegen_out *out) {
    mt_codegen_in in = cg_split(a, fs, n, opt, threads);
    mt_codegen_cpu(jit, a, &in, out);
}

/* mt_codegen_cpu of in: MT_OK and *out, or the error's status, its message
 * in msg. */
static inline mt_status cg_try(mt_jit *jit, mt_arena *a, const mt_codegen_in *in,
                               mt_codegen_out *out, char *msg, size_t len) {
    mt_errframe fr;
    if (MT_TRY(&fr)) {
        mt_codegen_cpu(jit, a, in, out);
        mt_err_pop(&fr);
        return MT_OK;
    }
    mt_err_pop(&fr);
    snprintf(msg, len, "%s", fr.msg);
    return fr.status;
}

/* The parts' bitcode of a compile. */
static inline const mt_codegen_bc *cg_parts(const mt_codegen_out *out) { return out->dump_src; }

/* The optimized IR of a compile as text (in a), or NULL. */
static inline const char *cg_ir_text(mt_arena *a, const mt_codegen_out *out) {
    char err[256];
    return mt_jit_ir_text(a, cg_parts(out), out->nparts, err, sizeof err);
}

#endif
