/*
 * jit.c -- the ORC LLJIT for the host CPU and the per-module compile driver.
 *
 * Setup (mt_jit_create). LLVM's native target, asm printer and asm parser are
 * initialized once per process (pthread_once). The host is detected the way
 * LLVMOrcJITTargetMachineBuilderDetectHost does it (process triple, host CPU
 * name and features, e.g. znver5 with AVX-512); because the C API cannot set
 * the optimization level on a detected builder, the JIT's target machine
 * builder is made from a TargetMachine for that triple/CPU/features at
 * LLVMCodeGenLevelAggressive (LLVMOrcJITTargetMachineBuilderCreateFromTarget-
 * Machine copies all of it). A second TargetMachine with the same settings is
 * kept for the optimization pipeline (its TargetTransformInfo drives the
 * vectorizer's costs) and for assembly dumps.
 *
 * Symbols. The main JITDylib gets absolute definitions for every runtime
 * function generated code may call (libm: expf, tanhf, erff, ...; malloc,
 * free; memset/memcpy/memmove, which loop idiom recognition introduces; the
 * half-precision conversions of libgcc; mt_parallel_for, runtime/parallel.h,
 * which parallel loops call), taken as addresses in this process,
 * so they resolve even when the host links statically or libm was dropped by
 * --as-needed. A process-symbol generator (dlsym) covers anything else.
 *
 * Modules. Every compiled module goes into the main JITDylib under its own
 * ResourceTracker; mt_jit_module_release removes the tracker, which frees the
 * module's code and symbols. Trackers (rather than a JITDylib per module) are
 * cheap, can be removed (a JITDylib cannot be deleted through the C API) and
 * see the runtime symbols without link-order plumbing. Symbol names do not
 * collide because every module gets a process-unique prefix "mt<N>_".
 *
 * Each module is built in its own LLVMContext (a ThreadSafeContext), so IR
 * generation runs without the lock; the mutex guards the parts that touch
 * shared LLVM state: the pass pipeline (it uses the shared TargetMachine),
 * adding to and looking up in the JIT, removing trackers and emitting asm.
 *
 * Pipeline and dumps. Levels 2 and 3 run an explicit pass pipeline
 * (MT_FN_PIPELINE below; docs/codegen.md says what it leaves out of
 * default<O3> and why), 0 and 1 LLVM's default<O0>/<O1>. The optimized
 * module is kept as bitcode; the llvm and asm dumps are made from it on
 * demand (mt_jit_ir_text, mt_jit_emit_asm), in a context of their own whose
 * diagnostics are recorded, not printed.
 *
 * Error handling. LLVM reports through LLVMErrorRef and message strings; they
 * are copied and disposed, every LLVM object of the failed compilation is
 * disposed, the lock released, and only then mt_ice raises (diag.h). The
 * execution session's error reporter records its message for the next
 * failure report instead of printing to stderr.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "codegen/codegen.h"
#include "codegen/llvm_internal.h"
#include "runtime/parallel.h"

struct mt_jit {
    LLVMOrcLLJITRef lljit;   /* the JIT; code goes into its main JITDylib */
    LLVMTargetMachineRef tm; /* host machine for the pass pipeline and asm */
    char *triple;            /* process triple (LLVM message) */
    char *cpu;               /* host CPU name (LLVM message) */
    char *features;          /* host CPU features (LLVM message) */
    pthread_mutex_t mu;      /* guards lljit and tm */
    char session_err[512];   /* last error reported by the execution session */
};

struct mt_jit_module {
    mt_jit *jit;                  /* owner */
    LLVMOrcResourceTrackerRef rt; /* tracks the module's code in the main JITDylib */
};

/* Half-precision conversions from libgcc (compiler-rt names), used by LLVM
 * when the CPU lacks F16C. Declared only to take their addresses. */
extern void __extendhfsf2(void);
extern void __truncsfhf2(void);
extern void __truncdfhf2(void);

static const struct {
    const char *name;
    void (*addr)(void);
} runtime_syms[] = {
#define S_(f) {#f, (void (*)(void))(f)}
    S_(expf), S_(exp), S_(exp2f), S_(exp2), S_(exp10f), S_(exp10), S_(logf), S_(log),
    S_(log2f), S_(log2), S_(log10f), S_(log10), S_(powf), S_(pow), S_(sinf), S_(sin),
    S_(cosf), S_(cos), S_(sincosf), S_(sincos), S_(tanhf), S_(tanh), S_(erff), S_(erf),
    S_(sqrtf), S_(sqrt), S_(fmaf), S_(fma), S_(floorf), S_(floor), S_(ceilf), S_(ceil),
    S_(roundevenf), S_(roundeven), S_(roundf), S_(round), S_(truncf), S_(trunc),
    S_(fmaxf), S_(fmax), S_(fminf), S_(fmin), S_(fmodf), S_(fmod), S_(ldexpf), S_(ldexp),
    S_(malloc), S_(free), S_(memset), S_(memcpy), S_(memmove),
    S_(__extendhfsf2), S_(__truncsfhf2), S_(__truncdfhf2), S_(mt_parallel_for), S_(mt_kernel_malloc),
#undef S_
};

static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;
static int llvm_init_failed;
static atomic_ulong next_module_id;

static void init_llvm(void) {
    if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter() ||
        LLVMInitializeNativeAsmParser())
        llvm_init_failed = 1;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Writes "what: <LLVM message>" to buf and consumes err. */
static void take_error(LLVMErrorRef err, const char *what, char *buf, size_t len) {
    char *m = LLVMGetErrorMessage(err);
    snprintf(buf, len, "%s: %s", what, m ? m : "?");
    LLVMDisposeErrorMessage(m);
}

static void report_session_error(void *ctx, LLVMErrorRef err) {
    mt_jit *jit = ctx;
    take_error(err, "JIT session", jit->session_err, sizeof jit->session_err);
}

static LLVMTargetMachineRef host_tm(mt_jit *jit, char *err, size_t errlen) {
    LLVMTargetRef target;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(jit->triple, &target, &msg)) {
        snprintf(err, errlen, "no LLVM target for %s: %s", jit->triple, msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return NULL;
    }
    LLVMTargetMachineRef tm =
        LLVMCreateTargetMachine(target, jit->triple, jit->cpu, jit->features,
                                LLVMCodeGenLevelAggressive, LLVMRelocPIC, LLVMCodeModelJITDefault);
    if (!tm) snprintf(err, errlen, "cannot create a target machine for %s", jit->cpu);
    return tm;
}

/* Absolute symbols for runtime_syms and a dlsym generator, in the main JITDylib. */
static int define_runtime_syms(mt_jit *jit, char *err, size_t errlen) {
    enum { N = sizeof runtime_syms / sizeof runtime_syms[0] };
    LLVMOrcCSymbolMapPair pairs[N];
    for (int i = 0; i < N; i++) {
        pairs[i].Name = LLVMOrcLLJITMangleAndIntern(jit->lljit, runtime_syms[i].name);
        pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)runtime_syms[i].addr;
        pairs[i].Sym.Flags.GenericFlags =
            LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
        pairs[i].Sym.Flags.TargetFlags = 0;
    }
    LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(jit->lljit);
    LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(pairs, N);
    LLVMErrorRef e = LLVMOrcJITDylibDefine(jd, mu);
    if (e) {
        LLVMOrcDisposeMaterializationUnit(mu);
        take_error(e, "defining runtime symbols", err, errlen);
        return -1;
    }
    LLVMOrcDefinitionGeneratorRef gen;
    e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
        &gen, LLVMOrcLLJITGetGlobalPrefix(jit->lljit), NULL, NULL);
    if (e) {
        take_error(e, "process symbol generator", err, errlen);
        return -1;
    }
    LLVMOrcJITDylibAddGenerator(jd, gen);
    return 0;
}

mt_jit *mt_jit_create(char *err, size_t errlen) {
    pthread_once(&llvm_once, init_llvm);
    if (llvm_init_failed) {
        snprintf(err, errlen, "LLVM has no native target for this machine");
        return NULL;
    }
    mt_jit *jit = calloc(1, sizeof *jit);
    if (!jit) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    LLVMOrcJITTargetMachineBuilderRef jtmb = NULL;
    LLVMErrorRef e = LLVMOrcJITTargetMachineBuilderDetectHost(&jtmb);
    if (e) {
        take_error(e, "detecting the host", err, errlen);
        goto fail;
    }
    jit->triple = LLVMOrcJITTargetMachineBuilderGetTargetTriple(jtmb);
    LLVMOrcDisposeJITTargetMachineBuilder(jtmb);
    jit->cpu = LLVMGetHostCPUName();
    jit->features = LLVMGetHostCPUFeatures();

    LLVMTargetMachineRef jit_tm = host_tm(jit, err, errlen);
    if (!jit_tm) goto fail;
    jtmb = LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(jit_tm); /* takes jit_tm */
    LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(builder, jtmb);          /* takes jtmb */
    e = LLVMOrcCreateLLJIT(&jit->lljit, builder);                          /* takes builder */
    if (e) {
        jit->lljit = NULL;
        take_error(e, "creating the LLJIT", err, errlen);
        goto fail;
    }
    LLVMOrcExecutionSessionSetErrorReporter(LLVMOrcLLJITGetExecutionSession(jit->lljit),
                                            report_session_error, jit);
    if (define_runtime_syms(jit, err, errlen)) goto fail;
    jit->tm = host_tm(jit, err, errlen);
    if (!jit->tm) goto fail;
    if (pthread_mutex_init(&jit->mu, NULL)) {
        LLVMDisposeTargetMachine(jit->tm);
        jit->tm = NULL;
        snprintf(err, errlen, "cannot create the JIT mutex");
        goto fail;
    }
    return jit;
fail:
    if (jit->lljit) LLVMConsumeError(LLVMOrcDisposeLLJIT(jit->lljit));
    LLVMDisposeMessage(jit->triple);
    LLVMDisposeMessage(jit->cpu);
    LLVMDisposeMessage(jit->features);
    free(jit);
    return NULL;
}

void mt_jit_destroy(mt_jit *jit) {
    if (!jit) return;
    LLVMConsumeError(LLVMOrcDisposeLLJIT(jit->lljit));
    LLVMDisposeTargetMachine(jit->tm);
    LLVMDisposeMessage(jit->triple);
    LLVMDisposeMessage(jit->cpu);
    LLVMDisposeMessage(jit->features);
    pthread_mutex_destroy(&jit->mu);
    free(jit);
}

const char *mt_jit_cpu_name(const mt_jit *jit) { return jit->cpu; }
const char *mt_jit_cpu_features(const mt_jit *jit) { return jit->features; }

void mt_jit_module_release(mt_jit_module *m) {
    if (!m) return;
    mt_jit *jit = m->jit;
    pthread_mutex_lock(&jit->mu);
    LLVMErrorRef e = LLVMOrcResourceTrackerRemove(m->rt);
    if (e) LLVMConsumeError(e);
    LLVMOrcReleaseResourceTracker(m->rt);
    LLVMOrcSymbolStringPoolClearDeadEntries(LLVMOrcExecutionSessionGetSymbolStringPool(
        LLVMOrcLLJITGetExecutionSession(jit->lljit)));
    pthread_mutex_unlock(&jit->mu);
    free(m);
}

/* ---- compiling a module ---------------------------------------------------- */

/* LLVM objects of one compilation, in the arena so the error path sees them. */
typedef struct cg_job {
    LLVMOrcThreadSafeContextRef tsctx; /* owns the module's context until the JIT does */
    LLVMModuleRef mod;                 /* until handed to the JIT */
    LLVMMemoryBufferRef bc;            /* the optimized module's bitcode */
    mt_jit_module *jm;                 /* the tracker, once created */
} cg_job;

/* LLVM's default for a diagnostic is to print it, and to exit on an error.
 * The context of a compilation sends them here instead: warnings and remarks
 * are dropped, the first error is kept for the compiling thread (the JIT
 * materializes on the thread that looks the symbols up), which turns it into
 * MT_ERR_INTERNAL. Thread-local, so a context that outlives its compilation
 * never points at a dead buffer. */
static _Thread_local char compile_error[256];

static void compile_diag(LLVMDiagnosticInfoRef di, void *unused) {
    (void)unused;
    if (LLVMGetDiagInfoSeverity(di) != LLVMDSError || compile_error[0]) return;
    char *m = LLVMGetDiagInfoDescription(di);
    snprintf(compile_error, sizeof compile_error, "%s", m && m[0] ? m : "an LLVM error");
    LLVMDisposeMessage(m);
}

static void job_dispose(cg_job *j) {
    if (j->bc) LLVMDisposeMemoryBuffer(j->bc);
    if (j->mod) LLVMDisposeModule(j->mod);
    if (j->tsctx) LLVMOrcDisposeThreadSafeContext(j->tsctx);
    mt_jit_module_release(j->jm);
    j->bc = NULL;
    j->mod = NULL;
    j->tsctx = NULL;
    j->jm = NULL;
}

/* The optimization pipeline at levels 2 and 3 (docs/codegen.md, "The pass
 * pipeline"): default<O3> less what finds nothing to do in the IR llvm.c
 * emits. The outlined loop functions are inlined into their trampolines once
 * (cgscc(inline), no per-SCC simplification), then one function pipeline:
 * clean-up (sroa promotes the matmul accumulators, early-cse and instcombine
 * fold the index arithmetic), licm, indvars and full unrolling of constant
 * loops, gvn, the loop vectorizer for the loops the schedule left scalar, slp,
 * partial unrolling (loops that llvm.c did not mark unroll.disable), and a
 * final clean-up; globaldce drops the inlined loop functions. */
#define MT_FN_PIPELINE(unroll)                                                                 \
    "cgscc(inline),function(sroa<modify-cfg>,early-cse<memssa>,simplifycfg,"                   \
    "instcombine<max-iterations=1;no-verify-fixpoint>,loop-mssa(licm<allowspeculation>),"                         \
    "loop(indvars,loop-deletion,loop-unroll-full),sroa<modify-cfg>,gvn<>,"                     \
    "instcombine<max-iterations=1;no-verify-fixpoint>,simplifycfg,loop-vectorize,loop-load-elim,infer-alignment," \
    "instcombine<max-iterations=1;no-verify-fixpoint>,"                                                          \
    "simplifycfg<forward-switch-cond;switch-range-to-icmp;no-keep-loops;hoist-common-insts;"   \
    "sink-common-insts>,slp-vectorizer,vector-combine,loop-unroll<" unroll ">,"               \
    "sroa<preserve-cfg>,instcombine<max-iterations=1;no-verify-fixpoint>,loop-mssa(licm<allowspeculation>),"      \
    "simplifycfg),globaldce"

/* Runs the pipeline of `level` on mod. 0 on success, else a message in msg. */
static int optimize(mt_jit *jit, LLVMModuleRef mod, int level, char *msg, size_t len) {
    static const char *pipelines[4] = {"default<O0>", "default<O1>", MT_FN_PIPELINE("O2"),
                                       MT_FN_PIPELINE("O3")};
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(po, level >= 2);
    LLVMPassBuilderOptionsSetSLPVectorization(po, level >= 2);
    LLVMPassBuilderOptionsSetLoopInterleaving(po, level >= 2);
    LLVMPassBuilderOptionsSetLoopUnrolling(po, level >= 2);
    pthread_mutex_lock(&jit->mu);
    LLVMErrorRef e = LLVMRunPasses(mod, pipelines[level], jit->tm, po);
    pthread_mutex_unlock(&jit->mu);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
        take_error(e, "optimization pipeline", msg, len);
        return -1;
    }
    return 0;
}

/* Adds the module to the JIT and looks every function up. */
static int add_and_link(mt_jit *jit, cg_job *j, const char *prefix, mt_tfunc *const *funcs,
                        int n, void **addrs, char *msg, size_t len) {
    int rc = 0;
    pthread_mutex_lock(&jit->mu);
    jit->session_err[0] = 0;
    j->jm->rt = LLVMOrcJITDylibCreateResourceTracker(LLVMOrcLLJITGetMainJITDylib(jit->lljit));
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(j->mod, j->tsctx);
    j->mod = NULL; /* the TSM owns it now, and keeps the context alive */
    LLVMOrcDisposeThreadSafeContext(j->tsctx);
    j->tsctx = NULL;
    LLVMErrorRef e = LLVMOrcLLJITAddLLVMIRModuleWithRT(jit->lljit, j->jm->rt, tsm); /* takes tsm */
    if (e) {
        take_error(e, "adding the module to the JIT", msg, len);
        rc = -1;
    }
    for (int i = 0; i < n && rc == 0; i++) {
        /* malloc, not the arena: an arena failure would longjmp with the lock held */
        size_t nlen = strlen(prefix) + strlen(funcs[i]->name) + 1;
        char *name = malloc(nlen);
        if (!name) {
            snprintf(msg, len, "out of memory");
            rc = -1;
            break;
        }
        snprintf(name, nlen, "%s%s", prefix, funcs[i]->name);
        LLVMOrcExecutorAddress addr = 0;
        e = LLVMOrcLLJITLookup(jit->lljit, &addr, name);
        if (e) {
            char what[256];
            snprintf(what, sizeof what, "JIT lookup of %.200s", name);
            take_error(e, what, msg, len);
            if (jit->session_err[0]) {
                size_t used = strlen(msg);
                snprintf(msg + used, len - used, " (%s)", jit->session_err);
            }
            rc = -1;
        }
        free(name);
        addrs[i] = (void *)(uintptr_t)addr;
    }
    pthread_mutex_unlock(&jit->mu);
    return rc;
}

void mt_codegen_cpu(mt_jit *jit, mt_arena *a, mt_tfunc *const *funcs, int n, int opt_level,
                    mt_codegen_out *out) {
    memset(out, 0, sizeof *out);
    if (opt_level < 0) opt_level = 0;
    if (opt_level > 3) opt_level = 3;
    unsigned long id = atomic_fetch_add(&next_module_id, 1) + 1;
    const char *prefix = mt_arena_printf(a, "mt%lu_", id);
    const char *mod_name = mt_arena_printf(a, "mt%lu", id);
    void **addrs = MT_NEW_ARRAY(a, void *, n > 0 ? n : 1);
    cg_job *j = MT_NEW(a, cg_job);
    char *msg = MT_NEW_ARRAY(a, char, 1024);
    mt_errframe fr;
    if (MT_TRY(&fr)) {
        double t0 = now_ms();
        j->tsctx = LLVMOrcCreateNewThreadSafeContext();
        LLVMContextRef ctx = LLVMOrcThreadSafeContextGetContext(j->tsctx);
        compile_error[0] = 0;
        LLVMContextSetDiagnosticHandler(ctx, compile_diag, NULL);
        j->mod = mt_llvm_build_module(a, ctx, mod_name, prefix, jit->triple,
                                      LLVMOrcLLJITGetDataLayoutStr(jit->lljit), funcs, n);
        double t1 = now_ms();
        if (optimize(jit, j->mod, opt_level, msg, 1024)) mt_ice("codegen: %s", msg);
        if (compile_error[0]) mt_ice("codegen: LLVM: %s", compile_error);
        /* The optimized IR is kept as bitcode (several times cheaper to
         * write than text); mt_jit_ir_text prints it when it is asked for. */
        j->bc = LLVMWriteBitcodeToMemoryBuffer(j->mod);
        if (!j->bc) mt_fail_noloc(MT_ERR_NOMEM, "out of memory for the module's bitcode");
        out->llvm_bc_len = LLVMGetBufferSize(j->bc);
        void *bc = mt_arena_alloc(a, out->llvm_bc_len);
        memcpy(bc, LLVMGetBufferStart(j->bc), out->llvm_bc_len);
        out->llvm_bc = bc;
        LLVMDisposeMemoryBuffer(j->bc);
        j->bc = NULL;
        double t2 = now_ms();
        j->jm = calloc(1, sizeof *j->jm);
        if (!j->jm) mt_fail_noloc(MT_ERR_NOMEM, "out of memory for a JIT module");
        j->jm->jit = jit;
        if (add_and_link(jit, j, prefix, funcs, n, addrs, msg, 1024)) mt_ice("codegen: %s", msg);
        if (compile_error[0]) mt_ice("codegen: LLVM: %s", compile_error);
        double t3 = now_ms();
        out->module = j->jm;
        out->fn_addrs = addrs;
        out->ms_irgen = t1 - t0;
        out->ms_opt = t2 - t1;
        out->ms_jit = t3 - t2;
        mt_err_pop(&fr);
        return;
    }
    mt_err_pop(&fr);
    job_dispose(j);
    mt_fail(fr.status, fr.loc, "%s", fr.msg);
}

/* ---- dumps of the optimized module (on demand) ---------------------------- */

/* Records an LLVM diagnostic instead of LLVM's default (print, and exit on
 * an error). */
typedef struct diag_sink {
    char *buf;
    size_t len;
} diag_sink;

static void record_diag(LLVMDiagnosticInfoRef di, void *ctx) {
    diag_sink *d = ctx;
    if (LLVMGetDiagInfoSeverity(di) != LLVMDSError || d->buf[0]) return;
    char *m = LLVMGetDiagInfoDescription(di);
    snprintf(d->buf, d->len, "%s", m ? m : "?");
    LLVMDisposeMessage(m);
}

/* Parses a module's bitcode into ctx (a fresh context whose diagnostics go to
 * sink); NULL and a message in sink on failure. */
static LLVMModuleRef parse_bc(LLVMContextRef ctx, diag_sink *sink, const void *bc, size_t len) {
    sink->buf[0] = 0;
    LLVMContextSetDiagnosticHandler(ctx, record_diag, sink);
    LLVMMemoryBufferRef in = LLVMCreateMemoryBufferWithMemoryRange(bc, len, "mt-bitcode", 0);
    LLVMModuleRef mod = NULL;
    if (!in || LLVMParseBitcodeInContext2(ctx, in, &mod)) {
        char why[256];
        snprintf(why, sizeof why, "%s", sink->buf[0] ? sink->buf : "?");
        snprintf(sink->buf, sink->len, "reading the module's bitcode: %s", why);
        mod = NULL;
    }
    if (in) LLVMDisposeMemoryBuffer(in);
    if (mod) { /* the ModuleID the module had: its source file name */
        size_t n = 0;
        const char *src = LLVMGetSourceFileName(mod, &n);
        LLVMSetModuleIdentifier(mod, src, n);
    }
    return mod;
}

/* Copies malloc'ed or LLVM text into the arena (NULL text: an error in err). */
static const char *to_arena(mt_arena *a, const char *text, char *err, size_t errlen) {
    if (!text) return NULL;
    const char *volatile res = NULL;
    mt_errframe fr;
    if (MT_TRY(&fr)) {
        res = mt_arena_strdup(a, text);
        mt_err_pop(&fr);
    } else {
        mt_err_pop(&fr);
        snprintf(err, errlen, "%s", fr.msg);
    }
    return res;
}

const char *mt_jit_ir_text(mt_arena *a, const void *bc, size_t len, char *err, size_t errlen) {
    LLVMContextRef ctx = LLVMContextCreate();
    diag_sink sink = {err, errlen};
    LLVMModuleRef mod = parse_bc(ctx, &sink, bc, len);
    const char *res = NULL;
    if (mod) {
        char *text = LLVMPrintModuleToString(mod);
        res = to_arena(a, text, err, errlen);
        LLVMDisposeMessage(text);
        LLVMDisposeModule(mod);
    }
    LLVMContextDispose(ctx);
    return res;
}

const char *mt_jit_emit_asm(mt_jit *jit, mt_arena *a, const void *bc, size_t len, char *err,
                            size_t errlen) {
    LLVMContextRef ctx = LLVMContextCreate();
    diag_sink sink = {err, errlen};
    LLVMModuleRef mod = parse_bc(ctx, &sink, bc, len);
    if (!mod) {
        LLVMContextDispose(ctx);
        return NULL;
    }
    LLVMMemoryBufferRef outbuf = NULL;
    char *msg = NULL;
    pthread_mutex_lock(&jit->mu);
    LLVMBool bad = LLVMTargetMachineEmitToMemoryBuffer(jit->tm, mod, LLVMAssemblyFile, &msg,
                                                        &outbuf);
    pthread_mutex_unlock(&jit->mu);
    char *text = NULL;
    if (bad) {
        snprintf(err, errlen, "emitting assembly: %s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
    } else {
        size_t n = LLVMGetBufferSize(outbuf);
        text = malloc(n + 1);
        if (text) {
            memcpy(text, LLVMGetBufferStart(outbuf), n);
            text[n] = 0;
        } else {
            snprintf(err, errlen, "out of memory");
        }
        LLVMDisposeMemoryBuffer(outbuf);
    }
    LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    const char *res = to_arena(a, text, err, errlen);
    free(text);
    return res;
}
