/*
 * backend.c -- the LLVM CPU backend behind the backend interface (codegen.h).
 *
 * A thin layer: the backend's state is its mt_jit (one per context), compile
 * is mt_codegen_cpu, release frees a module's code in the JIT, and the two
 * dumps it makes ("llvm", the optimized IR, and "asm") are computed on
 * demand from the bitcode of the module's parts, which the compile left in
 * its arena (mt_codegen_out.dump_src, nparts). See llvm_cpu.h.
 */
#include <stdio.h>
#include <stdlib.h>

#include "codegen/llvm_cpu.h"

static void llvm_compile(mt_backend *be, mt_arena *a, const mt_codegen_in *in,
                         mt_codegen_out *out) {
    mt_codegen_cpu(be->impl, a, in, out);
}

static void llvm_release(mt_backend *be, void *module) { mt_jit_module_release(module); }

static const char *llvm_dump(mt_backend *be, mt_arena *a, const mt_codegen_out *out,
                             mt_stage stage, char *err, size_t errlen) {
    const mt_codegen_bc *parts = out->dump_src;
    if (stage == MT_STAGE_LLVM) return mt_jit_ir_text(a, parts, out->nparts, err, errlen);
    if (stage == MT_STAGE_ASM) return mt_jit_emit_asm(be->impl, a, parts, out->nparts, err, errlen);
    snprintf(err, errlen, "the %s backend has no %s dump", be->name, mt_stage_str(stage));
    return NULL;
}

static void llvm_describe(mt_backend *be, mt_target_desc *t, int cores) {
    mt_target_host_cpu(t, mt_jit_cpu_name(be->impl), mt_jit_cpu_features(be->impl), cores);
}

static void llvm_destroy(mt_backend *be) {
    if (!be) return;
    mt_jit_destroy(be->impl);
    free(be);
}

mt_backend *mt_backend_llvm_cpu_create(char *err, size_t errlen) {
    mt_backend *be = calloc(1, sizeof *be);
    if (!be) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    be->impl = mt_jit_create(err, errlen);
    if (!be->impl) {
        free(be);
        return NULL;
    }
    be->name = "llvm-cpu";
    be->target = MT_TARGET_CPU;
    be->dumps = 1u << MT_STAGE_LLVM | 1u << MT_STAGE_ASM;
    be->compile = llvm_compile;
    be->release = llvm_release;
    be->dump = llvm_dump;
    be->destroy = llvm_destroy;
    be->describe = llvm_describe;
    return be;
}
