/*
 * compile.c -- the compile driver: lowered loop functions to code in the JIT.
 *
 * Every kernel (host) function becomes an LLVM module of its own, and so
 * does each parallel body it launches (llvm.c's `split`), each in a context
 * of its own (llvm.c builds them on the calling thread: IR generation uses
 * the arena and raises through diag.h); on one thread everything goes into
 * one module, which saves a module's fixed cost (about 1.5 ms) per part.
 * The modules are then optimized (the pass pipeline below), written as
 * bitcode for the dumps and compiled to an object file, each by whichever
 * thread takes it next: the calling thread and up to threads - 1 helpers
 * started for this compile, each holding a target machine of the JIT's
 * (jit_internal.h) while it works, the largest modules first (instructions
 * before optimization). A matmul (its packing loop, its micro-kernel loop)
 * or a program of several kernels (the MLP: two matmuls) so compiles in
 * about the time of its largest part. Finally the objects go into the JIT
 * under one tracker (mt_jit_link, which links them and resolves the
 * kernels' calls of their loop bodies) and the functions are looked up.
 *
 * Workers never raise: LLVM diagnostics, pipeline and emission errors are
 * recorded in their module's unit, and the calling thread turns the first
 * one (in function order) into MT_ERR_INTERNAL after every worker has
 * finished and every LLVM object of the compile is disposed. Helpers run
 * with the asynchronous signals blocked (the host's handlers for them stay
 * on its own threads; faults such as SIGSEGV are not blocked, so a crash in
 * LLVM still reaches the host's handler) and an 8 MiB stack (LLVM
 * recurses); when a helper cannot be started, the threads that did start
 * do its share. A program without kernel functions gets one empty module,
 * for its dumps.
 *
 * The disk cache (in->disk, support/diskcache.h; docs/api.md). What is kept
 * is the object code of the parts and their optimized bitcode, not the whole
 * kernel: the front half (parse, graph and TIR passes) costs a millisecond
 * or two and makes everything else a kernel holds (its dumps, parameter
 * types, the executor's plan), which would otherwise need a serializer of
 * every IR; LLVM is 95 % or more of a compile, and object files are already
 * a serialized, relocatable form the JIT takes as it is. The key
 * (disk_key) is a BLAKE2s-256 of everything the object code is a function
 * of: the library's build identity and version, LLVM's version, the host
 * triple, CPU, features and data layout, the optimization level, the
 * caller's salt (source, the options that can change code, the target
 * text), and the printed TIR handed to codegen, so that whatever changes
 * the TIR (a schedule, a tuning decision) changes the key. Object code names
 * its symbols, so the names must not depend on the process: with the disk
 * cache a compile's prefix is "mtk<first 8 bytes of the key in hex>_"
 * instead of the process counter's "mt<N>_", and since two live modules of
 * one JIT cannot define the same names, the prefix is claimed in the JIT
 * (mt_jit_claim_tag) for the module's lifetime; a compile that finds it
 * taken (the same code compiled again while the first kernel lives) goes
 * without the disk cache under the counter's prefix. On a hit the objects
 * are linked straight into the JIT (no optimization, no code generation)
 * and the bitcode kept for the llvm and asm dumps, which so come out the
 * same as after a compile; anything wrong with the entry (it does not fit
 * this compile, the JIT refuses it) makes it a miss, compiled afresh under
 * the counter's names. On a miss the entry is written after the workers
 * are done and before the objects go into the JIT (which takes them).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "codegen/llvm_cpu.h"
#include "codegen/jit_internal.h"
#include "codegen/llvm_internal.h"
#include "minitriton.h"
#include "support/blake2s.h"
#include "support/diskcache.h"

static atomic_ulong next_module_id;

/* One module: a kernel (host) function's, or a parallel body's. The
 * calling thread builds it; one worker then owns it until the workers are
 * joined. */
typedef struct cg_unit {
    LLVMContextRef ctx;      /* the module's context, until compiled */
    LLVMModuleRef mod;       /* until compiled */
    LLVMMemoryBufferRef bc;  /* the optimized module's bitcode */
    LLVMMemoryBufferRef obj; /* its object code, until handed to the JIT */
    double cost;             /* estimated size: the largest start first */
    double ms_opt, ms_emit;  /* this module's optimization and code generation */
    char err[512];           /* the first error met compiling it */
} cg_unit;

typedef struct cg_work {
    mt_jit *jit;
    cg_unit *units;
    const int *order; /* unit indices by decreasing cost */
    int n;
    int level;        /* opt_level */
    atomic_int next;  /* next position in order to take */
} cg_work;

/* LLVM's default for a diagnostic is to print it, and to exit on an error.
 * A unit's context sends them here instead: warnings and remarks are
 * dropped, the first error is kept in the unit. */
static void unit_diag(LLVMDiagnosticInfoRef di, void *ctx) {
    cg_unit *u = ctx;
    if (LLVMGetDiagInfoSeverity(di) != LLVMDSError || u->err[0]) return;
    char *m = LLVMGetDiagInfoDescription(di);
    snprintf(u->err, sizeof u->err, "LLVM: %s", m && m[0] ? m : "an LLVM error");
    LLVMDisposeMessage(m);
}

/* ---- size estimate --------------------------------------------------------- */

/* Instructions in mod before optimization: what LLVM's time on it grows with. */
static double module_cost(LLVMModuleRef mod) {
    double n = 1;
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
                n += 1;
    return n;
}

/* ---- one module: optimize, bitcode, object code ------------------------------ */

/* The optimization pipeline at levels 2 and 3 (docs/codegen.md, "The pass
 * pipeline"): default<O3> less what finds nothing to do in the IR llvm.c
 * emits: no inliner (a parallel body's run function is noinline, llvm.c,
 * and nothing else is called but the runtime and libm), one function pipeline:
 * clean-up (sroa promotes the matmul accumulators, early-cse and instcombine
 * fold the index arithmetic), licm, indvars and full unrolling of constant
 * loops, gvn, the loop vectorizer for the loops the schedule left scalar, slp,
 * partial unrolling (loops that llvm.c did not mark unroll.disable), and a
 * final clean-up; globaldce drops what is left unused. */
#define MT_FN_PIPELINE(unroll)                                                                 \
    "function(sroa<modify-cfg>,early-cse<memssa>,simplifycfg,"                                 \
    "instcombine<max-iterations=1;no-verify-fixpoint>,loop-mssa(licm<allowspeculation>),"                         \
    "loop(indvars,loop-deletion,loop-unroll-full),sroa<modify-cfg>,gvn<>,"                     \
    "instcombine<max-iterations=1;no-verify-fixpoint>,simplifycfg,loop-vectorize,loop-load-elim,infer-alignment," \
    "instcombine<max-iterations=1;no-verify-fixpoint>,"                                                          \
    "simplifycfg<forward-switch-cond;switch-range-to-icmp;no-keep-loops;hoist-common-insts;"   \
    "sink-common-insts>,slp-vectorizer,vector-combine,loop-unroll<" unroll ">,"               \
    "sroa<preserve-cfg>,instcombine<max-iterations=1;no-verify-fixpoint>,loop-mssa(licm<allowspeculation>),"      \
    "simplifycfg),globaldce"

/* Runs the pipeline of `level` on mod with tm. 0 on success, else a message in msg. */
static int optimize(LLVMTargetMachineRef tm, LLVMModuleRef mod, int level, char *msg,
                    size_t len) {
    static const char *pipelines[4] = {"default<O0>", "default<O1>", MT_FN_PIPELINE("O2"),
                                       MT_FN_PIPELINE("O3")};
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(po, level >= 2);
    LLVMPassBuilderOptionsSetSLPVectorization(po, level >= 2);
    LLVMPassBuilderOptionsSetLoopInterleaving(po, level >= 2);
    LLVMPassBuilderOptionsSetLoopUnrolling(po, level >= 2);
    LLVMErrorRef e = LLVMRunPasses(mod, pipelines[level], tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
        mt_jit_take_error(e, "optimization pipeline", msg, len);
        return -1;
    }
    return 0;
}

/* Optimizes u's module, keeps its bitcode, compiles it to an object file
 * and disposes the module and its context. Records errors in u->err. */
static void compile_unit(cg_work *w, cg_unit *u) {
    mt_jit_tm *t = mt_jit_tm_acquire(w->jit, u->err, sizeof u->err);
    double t0 = mt_jit_now_ms(), t1 = t0;
    if (t && !u->err[0] && optimize(t->tm, u->mod, w->level, u->err, sizeof u->err) == 0 &&
        !u->err[0]) {
        u->bc = LLVMWriteBitcodeToMemoryBuffer(u->mod);
        if (!u->bc) snprintf(u->err, sizeof u->err, "out of memory for the module's bitcode");
        t1 = mt_jit_now_ms();
        char *msg = NULL;
        if (!u->err[0] &&
            LLVMTargetMachineEmitToMemoryBuffer(t->tm, u->mod, LLVMObjectFile, &msg, &u->obj)) {
            snprintf(u->err, sizeof u->err, "emitting object code: %s", msg ? msg : "?");
            u->obj = NULL;
        }
        LLVMDisposeMessage(msg);
    }
    if (t) mt_jit_tm_release(t);
    u->ms_opt = t1 - t0;
    u->ms_emit = mt_jit_now_ms() - t1;
    LLVMDisposeModule(u->mod);
    u->mod = NULL;
    LLVMContextDispose(u->ctx);
    u->ctx = NULL;
}

static void *worker(void *arg) {
    cg_work *w = arg;
    for (int k; (k = atomic_fetch_add(&w->next, 1)) < w->n;) compile_unit(w, &w->units[w->order[k]]);
    return NULL;
}

/* Compiles every unit on the calling thread and up to threads - 1 helpers;
 * returns the number of threads that worked. */
static int run_workers(cg_work *w, int threads) {
    int extra = threads < w->n ? threads : w->n;
    if (extra > MT_JIT_TMS) extra = MT_JIT_TMS;
    extra -= 1;
    pthread_t tid[MT_JIT_TMS];
    int started = 0;
    if (extra > 0) {
        pthread_attr_t attr;
        int have_attr = pthread_attr_init(&attr) == 0;
        if (have_attr) pthread_attr_setstacksize(&attr, (size_t)8 << 20);
        /* asynchronous signals stay with the host's threads; a fault on a
         * helper (SIGSEGV in LLVM) still reaches the host's handler */
        sigset_t all, old;
        sigfillset(&all);
        static const int sync_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS};
        for (size_t i = 0; i < sizeof sync_sigs / sizeof sync_sigs[0]; i++)
            sigdelset(&all, sync_sigs[i]);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        while (started < extra &&
               pthread_create(&tid[started], have_attr ? &attr : NULL, worker, w) == 0)
            started++;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (have_attr) pthread_attr_destroy(&attr);
    }
    worker(w);
    for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
    return started + 1;
}


/* ---- the disk cache ------------------------------------------------------------- */

/* An entry's first blob: ENTRY_MAGIC, the number of parts, of host
 * functions and of device functions, 32-bit little-endian each; then the
 * parts' object files, then their bitcode. */
#define ENTRY_MAGIC 0x316a626fu /* "obj1" */

static void key_bytes(mt_blake2s *s, const void *p, size_t n) {
    uint8_t len[8];
    for (int i = 0; i < 8; i++) len[i] = (uint8_t)((uint64_t)n >> (8 * i));
    mt_blake2s_update(s, len, 8);
    mt_blake2s_update(s, p, n);
}

static void key_str(mt_blake2s *s, const char *str) { key_bytes(s, str, str ? strlen(str) : 0); }

static void key_int(mt_blake2s *s, long v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    key_str(s, buf);
}

/* The disk cache key of a compile: what the object code is a function of.
 * The library (version and build identity), LLVM (version), the machine
 * code is made for (triple, CPU, features, data layout), the optimization
 * level, the caller's salt (source, options, target text), and the printed
 * TIR of every function handed to codegen, which is what the code is
 * generated from: a schedule, a tuning decision, anything that changes the
 * TIR changes the key. The caller may hand that text over (the tir-sched
 * dump is exactly it: 0.4 ms of printing saved on the MLP). May raise
 * (printing uses the arena). */
static void disk_key(mt_jit *jit, mt_arena *a, const mt_codegen_in *in, int opt_level,
                     uint8_t key[MT_DISKCACHE_KEY_BYTES]) {
    mt_blake2s s;
    mt_blake2s_init(&s);
    key_str(&s, "minitriton object code 1");
    key_str(&s, MT_VERSION_STRING);
    uint8_t id[32];
    mt_diskcache_self_id(id);
    key_bytes(&s, id, sizeof id);
    unsigned major = 0, minor = 0, patch = 0;
    LLVMGetVersion(&major, &minor, &patch);
    key_int(&s, (long)major * 10000 + (long)minor * 100 + patch);
    key_str(&s, jit->triple);
    key_str(&s, jit->cpu);
    key_str(&s, jit->features);
    key_str(&s, LLVMOrcLLJITGetDataLayoutStr(jit->lljit));
    key_int(&s, opt_level);
    key_bytes(&s, in->salt, in->salt ? in->salt_len : 0);
    key_int(&s, in->nhost);
    key_int(&s, in->ndevice);
    if (in->tir_text) { /* the caller printed them already */
        key_str(&s, in->tir_text);
    } else {
        for (int i = 0; i < in->nhost; i++) key_str(&s, mt_tfunc_print(a, in->host[i]));
        for (int i = 0; i < in->ndevice; i++) key_str(&s, mt_tfunc_print(a, in->device[i]));
    }
    mt_blake2s_final(&s, key);
}

static uint32_t le32(const void *p) {
    const uint8_t *b = p;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Links the entry of key from the disk cache into jm under prefix: true
 * and out filled (module, addresses, bitcode for the dumps), or false
 * (no entry, one that does not fit this compile, or the JIT refused it:
 * jm may then hold part of it and must be released). */
static bool load_cached(mt_jit *jit, mt_arena *a, const mt_codegen_in *in,
                        const uint8_t key[MT_DISKCACHE_KEY_BYTES], const char *prefix,
                        mt_jit_module *jm, void **addrs, mt_codegen_out *out) {
    double t0 = mt_jit_now_ms();
    mt_diskcache_entry e;
    if (!mt_diskcache_get(in->disk, key, &e)) {
        out->ms_disk_read = mt_jit_now_ms() - t0;
        return false;
    }
    const uint8_t *meta = e.nblobs >= 1 && e.blobs[0].len == 16 ? e.blobs[0].data : NULL;
    uint32_t nu32 = meta ? le32(meta + 4) : 0;
    int nu = nu32 >= 1 && nu32 <= 4096 ? (int)nu32 : 0;
    if (!meta || le32(meta) != ENTRY_MAGIC || nu < 1 || e.nblobs != 1 + 2 * nu ||
        le32(meta + 8) != (uint32_t)in->nhost || le32(meta + 12) != (uint32_t)in->ndevice) {
        mt_diskcache_entry_free(&e);
        mt_diskcache_count_error(in->disk);
        out->ms_disk_read = mt_jit_now_ms() - t0;
        return false; /* the compile's write replaces it */
    }
    LLVMMemoryBufferRef *objs = calloc((size_t)nu, sizeof *objs);
    bool ok = objs != NULL;
    for (int i = 0; ok && i < nu; i++) {
        objs[i] = LLVMCreateMemoryBufferWithMemoryRangeCopy(e.blobs[1 + i].data, e.blobs[1 + i].len,
                                                            "mt-cached-object");
        ok = objs[i] != NULL;
    }
    double t1 = mt_jit_now_ms();
    char msg[512];
    int rc = ok ? mt_jit_link(jit, jm, objs, nu, prefix, in->host, in->nhost, addrs, msg, sizeof msg)
                : -1;
    double t2 = mt_jit_now_ms();
    for (int i = 0; objs && i < nu; i++)
        if (objs[i]) LLVMDisposeMemoryBuffer(objs[i]); /* those mt_jit_link did not take */
    free(objs);
    /* the bitcode, for the dumps */
    mt_diskcache_blob *bcb = NULL;
    if (rc == 0) {
        bcb = malloc(sizeof *bcb * (size_t)nu);
        rc = bcb ? 0 : -1;
        for (int i = 0; bcb && i < nu; i++) bcb[i] = e.blobs[1 + nu + i];
    }
    void *mem = e.mem;
    e.mem = NULL;
    mt_diskcache_entry_free(&e);
    if (rc != 0) {
        free(mem);
        free(bcb);
        mt_diskcache_count_error(in->disk);
        /* this compile goes on under other names and cannot replace it */
        mt_diskcache_remove(in->disk, key);
        out->ms_disk_read = t1 - t0;
        return false;
    }
    /* the copies into the arena, which raises when out of memory: e's
     * memory and the arrays are freed first */
    size_t total = 0;
    for (int i = 0; i < nu; i++) total += bcb[i].len;
    char *volatile copy = NULL;
    mt_codegen_bc *volatile parts = NULL;
    mt_errframe fr;
    if (MT_TRY(&fr)) {
        copy = mt_arena_alloc(a, total ? total : 1);
        parts = MT_NEW_ARRAY(a, mt_codegen_bc, nu);
        mt_err_pop(&fr);
    } else {
        mt_err_pop(&fr);
        free(mem);
        free(bcb);
        mt_fail(fr.status, fr.loc, "%s", fr.msg);
    }
    size_t at = 0;
    for (int i = 0; i < nu; i++) {
        memcpy(copy + at, bcb[i].data, bcb[i].len);
        parts[i].data = copy + at;
        parts[i].len = bcb[i].len;
        at += bcb[i].len;
    }
    free(mem);
    free(bcb);
    out->dump_src = parts;
    out->nparts = nu;
    out->module = jm;
    out->fn_addrs = addrs;
    out->threads = 1;
    out->ms_jit = t2 - t1;
    out->ms_disk_read = t1 - t0;
    out->disk = MT_CG_DISK_HIT;
    return true;
}

/* Writes the compiled parts (their objects, still in units, and bitcode)
 * to the disk cache under key. */
static void save_cached(const mt_codegen_in *in, const uint8_t key[MT_DISKCACHE_KEY_BYTES],
                        const cg_unit *units, const mt_codegen_bc *bc, int nu,
                        mt_codegen_out *out) {
    double t0 = mt_jit_now_ms();
    uint8_t meta[16];
    uint32_t fields[4] = {ENTRY_MAGIC, (uint32_t)nu, (uint32_t)in->nhost, (uint32_t)in->ndevice};
    for (int f = 0; f < 4; f++)
        for (int b = 0; b < 4; b++) meta[4 * f + b] = (uint8_t)(fields[f] >> (8 * b));
    mt_diskcache_blob *blobs = malloc(sizeof *blobs * (size_t)(1 + 2 * nu));
    int rc = -1;
    if (blobs) {
        blobs[0] = (mt_diskcache_blob){meta, sizeof meta};
        for (int i = 0; i < nu; i++) {
            blobs[1 + i] = (mt_diskcache_blob){LLVMGetBufferStart(units[i].obj),
                                               LLVMGetBufferSize(units[i].obj)};
            blobs[1 + nu + i] = (mt_diskcache_blob){bc[i].data, bc[i].len};
        }
        rc = mt_diskcache_put(in->disk, key, blobs, 1 + 2 * nu);
        free(blobs);
    } else {
        mt_diskcache_count_error(in->disk);
    }
    out->disk = rc == 0 ? MT_CG_DISK_MISS : MT_CG_DISK_MISS_UNSAVED;
    out->ms_disk_write = mt_jit_now_ms() - t0;
}

/* ---- the driver --------------------------------------------------------------- */

static void units_dispose(cg_unit *u, int n) {
    for (int i = 0; i < n; i++) {
        if (u[i].mod) LLVMDisposeModule(u[i].mod);
        if (u[i].ctx) LLVMContextDispose(u[i].ctx);
        if (u[i].bc) LLVMDisposeMemoryBuffer(u[i].bc);
        if (u[i].obj) LLVMDisposeMemoryBuffer(u[i].obj);
        memset(&u[i], 0, sizeof u[i]);
    }
}

/* Copies the bitcode in *buf into the arena, then disposes it (an arena
 * failure raises with *buf still set, for units_dispose). */
static mt_codegen_bc keep_bc(mt_arena *a, LLVMMemoryBufferRef *buf) {
    mt_codegen_bc bc = {NULL, LLVMGetBufferSize(*buf)};
    void *data = mt_arena_alloc(a, bc.len);
    memcpy(data, LLVMGetBufferStart(*buf), bc.len);
    bc.data = data;
    LLVMDisposeMemoryBuffer(*buf);
    *buf = NULL;
    return bc;
}

/* Unit indices by decreasing cost (insertion sort: a program has few kernels). */
static int *by_cost(mt_arena *a, const cg_unit *u, int n) {
    int *order = MT_NEW_ARRAY(a, int, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) {
        int j = i;
        for (; j > 0 && u[order[j - 1]].cost < u[i].cost; j--) order[j] = order[j - 1];
        order[j] = i;
    }
    return order;
}

void mt_codegen_cpu(mt_jit *jit, mt_arena *a, const mt_codegen_in *in, mt_codegen_out *out) {
    memset(out, 0, sizeof *out);
    mt_tfunc *const *funcs = in->host;
    int n = in->nhost;
    int opt_level = in->opt_level < 0 ? 0 : in->opt_level > 3 ? 3 : in->opt_level;
    int threads = in->threads < 1 ? 1 : in->threads;
    unsigned long id = atomic_fetch_add(&next_module_id, 1) + 1;
    const char *prefix = mt_arena_printf(a, "mt%lu_", id);
    const char *mod_name = mt_arena_printf(a, "mt%lu", id);
    uint8_t *key = MT_NEW_ARRAY(a, uint8_t, MT_DISKCACHE_KEY_BYTES);
    void **addrs = MT_NEW_ARRAY(a, void *, n > 0 ? n : 1);
    /* A module per host function, and one per parallel body it launches (so
     * that a kernel's loops compile on several threads); one module for
     * everything on one thread (a module's fixed cost, about 1.5 ms, would
     * otherwise be paid per function), and an empty one for a program
     * without functions (its dumps). */
    bool many = threads > 1 && n > 0;
    int nk = many ? n : 1, per = many ? 1 : n;
    /* In the arena, so that the error path sees what was made: the kernel
     * modules, the loop bodies' parts, then all of them as units. */
    cg_unit *kern = MT_NEW_ARRAY(a, cg_unit, nk);
    mt_cg_split *split = MT_NEW(a, mt_cg_split);
    int *kparts = MT_NEW_ARRAY(a, int, nk + 1); /* kernel k's parts: [kparts[k], kparts[k+1]) */
    cg_unit **unitsp = MT_NEW(a, cg_unit *);
    int *nup = MT_NEW(a, int);
    mt_jit_module **jm = MT_NEW(a, mt_jit_module *);
    char *msg = MT_NEW_ARRAY(a, char, 1024);
    mt_errframe fr;
    if (MT_TRY(&fr)) {
        mt_llvm_check_launches(a, in);
        *jm = calloc(1, sizeof **jm);
        if (!*jm) mt_fail_noloc(MT_ERR_NOMEM, "out of memory for a JIT module");
        (*jm)->jit = jit;
        /* With the disk cache, the symbols are named after the key, so that
         * the object code is the same in every process and can be stored;
         * while another live module of this JIT has those names (the same
         * code compiled again, the in-memory cache off), this compile goes
         * without the disk cache under unique names. */
        bool disk = in->disk != NULL;
        if (disk) {
            double tk = mt_jit_now_ms();
            disk_key(jit, a, in, opt_level, key);
            uint64_t tag = 0;
            for (int i = 7; i >= 0; i--) tag = tag << 8 | key[i];
            disk = mt_jit_claim_tag(jit, *jm, tag) == 0;
            if (disk) {
                prefix = mt_arena_printf(a, "mtk%016llx_", (unsigned long long)tag);
                mod_name = mt_arena_printf(a, "mtk%016llx", (unsigned long long)tag);
                if (load_cached(jit, a, in, key, prefix, *jm, addrs, out)) {
                    out->ms_disk_read = mt_jit_now_ms() - tk - out->ms_jit; /* all but linking */
                    mt_err_pop(&fr);
                    return;
                }
                if ((*jm)->rt) { /* the JIT refused a verified entry: start afresh */
                    mt_jit_module_release(*jm);
                    *jm = calloc(1, sizeof **jm);
                    if (!*jm) mt_fail_noloc(MT_ERR_NOMEM, "out of memory for a JIT module");
                    (*jm)->jit = jit;
                    prefix = mt_arena_printf(a, "mt%lu_", id);
                    mod_name = mt_arena_printf(a, "mt%lu", id);
                    disk = false;
                }
            }
            out->ms_disk_read = mt_jit_now_ms() - tk;
        }
        double t0 = mt_jit_now_ms();
        for (int i = 0; i < nk; i++) {
            kern[i].ctx = LLVMContextCreate();
            LLVMContextSetDiagnosticHandler(kern[i].ctx, unit_diag, &kern[i]);
            kparts[i] = split->n;
            kern[i].mod = mt_llvm_build_module(a, kern[i].ctx, mod_name, prefix, jit->triple, jit->features,
                                               LLVMOrcLLJITGetDataLayoutStr(jit->lljit),
                                               funcs + i * per, per, many ? split : NULL);
        }
        kparts[nk] = split->n;
        /* the units, in function order, each kernel followed by its parts */
        int nu = nk + split->n;
        cg_unit *units = MT_NEW_ARRAY(a, cg_unit, nu);
        *unitsp = units;
        for (int i = 0, u = 0; i < nk; i++) {
            units[u++] = kern[i];
            memset(&kern[i], 0, sizeof kern[i]);
            for (int k = kparts[i]; k < kparts[i + 1]; k++, u++) {
                units[u].ctx = split->parts[k].ctx;
                units[u].mod = split->parts[k].mod;
                memset(&split->parts[k], 0, sizeof split->parts[k]);
            }
            *nup = u;
        }
        for (int u = 0; u < nu; u++) {
            LLVMContextSetDiagnosticHandler(units[u].ctx, unit_diag, &units[u]);
            units[u].cost = module_cost(units[u].mod);
        }
        double t1 = mt_jit_now_ms();
        cg_work w = {jit, units, by_cost(a, units, nu), nu, opt_level, 0};
        out->threads = run_workers(&w, threads);
        double t2 = mt_jit_now_ms();
        for (int i = 0; i < nu; i++)
            if (units[i].err[0]) mt_ice("codegen: %s", units[i].err);
        mt_codegen_bc *bc = MT_NEW_ARRAY(a, mt_codegen_bc, nu);
        double cpu_opt = 0, cpu_emit = 0;
        for (int i = 0; i < nu; i++) {
            bc[i] = keep_bc(a, &units[i].bc);
            cpu_opt += units[i].ms_opt;
            cpu_emit += units[i].ms_emit;
        }
        out->dump_src = bc;
        out->nparts = nu;
        if (disk) save_cached(in, key, units, bc, nu, out);
        LLVMMemoryBufferRef *objs = MT_NEW_ARRAY(a, LLVMMemoryBufferRef, nu);
        for (int i = 0; i < nu; i++) {
            objs[i] = units[i].obj;
            units[i].obj = NULL;
        }
        int rc = mt_jit_link(jit, *jm, objs, nu, prefix, funcs, n, addrs, msg, 1024);
        if (rc) mt_ice("codegen: %s", msg);
        double t3 = mt_jit_now_ms();
        out->module = *jm;
        out->fn_addrs = addrs;
        out->ms_irgen = t1 - t0;
        double share = cpu_opt + cpu_emit > 0 ? cpu_opt / (cpu_opt + cpu_emit) : 0.5;
        out->ms_opt = (t2 - t1) * share;
        out->ms_jit = (t2 - t1) * (1 - share) + (t3 - t2);
        mt_err_pop(&fr);
        return;
    }
    mt_err_pop(&fr);
    units_dispose(kern, nk);
    for (int k = 0; k < split->n; k++) {
        mt_cg_part *p = &split->parts[k];
        if (p->b) LLVMDisposeBuilder(p->b);
        if (p->mod) LLVMDisposeModule(p->mod);
        if (p->ctx) LLVMContextDispose(p->ctx);
    }
    if (*unitsp) units_dispose(*unitsp, *nup);
    mt_jit_module_release(*jm);
    mt_fail(fr.status, fr.loc, "%s", fr.msg);
}
