/*
 * emulate_gpu.c -- a GPU-scheduled function as a CPU function that computes
 * what the GPU would (the emulation behind `mtc --emulate`).
 *
 * A function in the GPU kernel form (tir.h, "GPU kernels") runs on the
 * CPU, MCUDA-style, once its index loops become ordinary loops:
 *
 *  - the outermost blockIdx loop becomes a parallel loop (blocks are
 *    independent: split_host_device then outlines it, and the CPU's
 *    threads run chunks of blocks); blockIdx loops inside it, serial;
 *  - every threadIdx loop becomes a serial loop over the block's threads.
 *
 * The form makes this exact. Phases are separated by barriers, and a
 * serial loop over the threads runs one phase for all threads before the
 * next phase starts: the barrier is the end of the loop (the loop fission
 * of MCUDA is already in the form: rules write one loop per phase). Within
 * a phase a thread sees only its own stores, so running the threads one
 * after the other gives what running them at once gives. Shared buffers
 * are allocated inside the block loop, so each block (each iteration of
 * the parallel loop) has its own. What runs outside the phases stores
 * nothing, so running it once per block is running it on every thread.
 *
 * Not emulated: a per-thread (local) buffer allocated outside the phases,
 * which would need a copy per thread (no GPU rule makes one yet; it is an
 * internal error here, never a wrong result).
 *
 * The result is for the host CPU: its target is `host`, and the rest of
 * the CPU pipeline (split_host_device, the LLVM backend) takes it as any
 * other function.
 */
#include <string.h>

#include "passes/tir/tir_passes.h"
#include "support/common.h"

typedef struct emu {
    int blocks;  /* blockIdx loops around the statement being rewritten */
    int threads; /* threadIdx loops around it */
} emu;

static bool tagged(const mt_tstmt *s, const char *prefix) {
    return s->for_kind == MT_FOR_THREAD && s->thread_tag &&
           strncmp(s->thread_tag, prefix, strlen(prefix)) == 0;
}

static mt_tstmt *emu_stmt(mt_tmutator *m, mt_tstmt *s) {
    emu *e = m->ctx;
    if (s->kind == TS_ALLOC && s->buf->scope == MT_SCOPE_LOCAL && e->blocks > 0 && e->threads == 0)
        mt_ice("emulate_gpu: per-thread buffer '%s' is allocated outside the threads' loops",
               s->buf->name);
    if (s->kind != TS_FOR || s->for_kind != MT_FOR_THREAD) return mt_tmutate_stmt_children(m, s);
    bool block = tagged(s, "blockIdx.");
    if (!block && !tagged(s, "threadIdx."))
        mt_ice("emulate_gpu: loop bound to unknown index '%s'", s->thread_tag ? s->thread_tag : "?");
    int *depth = block ? &e->blocks : &e->threads;
    mt_for_kind kind = block && e->blocks == 0 ? MT_FOR_PARALLEL : MT_FOR_SERIAL;
    (*depth)++;
    mt_tstmt *r = mt_ts_copy(m->arena, mt_tmutate_stmt_children(m, s));
    (*depth)--;
    r->for_kind = kind;
    r->thread_tag = NULL;
    return r;
}

mt_tfunc *mt_tir_emulate_gpu(mt_arena *a, mt_tfunc *f, const mt_target_desc *host) {
    if (mt_tfunc_target(f)->kind != MT_TARGET_CUDA) return f;
    emu e = {0, 0};
    mt_tmutator m = {a, NULL, emu_stmt, &e};
    mt_tfunc *g = mt_tfunc_with_body(a, f, f->body ? mt_tmutate_stmt(&m, f->body) : NULL);
    if (g == f) {
        g = MT_NEW(a, mt_tfunc);
        *g = *f;
    }
    g->target = host;
    return g;
}
