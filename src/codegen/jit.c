/*
 * jit.c -- the ORC LLJIT for the host CPU: setup, target machines, linking
 * compiled objects, and the dumps of a compiled module.
 *
 * Setup (mt_jit_create). LLVM's native target, asm printer and asm parser are
 * initialized once per process (pthread_once). The host is detected the way
 * LLVMOrcJITTargetMachineBuilderDetectHost does it (process triple, host CPU
 * name and features, e.g. znver5 with AVX-512); because the C API cannot set
 * the optimization level on a detected builder, the JIT's target machine
 * builder is made from a TargetMachine for that triple/CPU/features at
 * LLVMCodeGenLevelAggressive (LLVMOrcJITTargetMachineBuilderCreateFromTarget-
 * Machine copies all of it). The target machines that optimize modules, emit
 * their object code and print assembly have the same settings and live in
 * slots (jit_internal.h), one per thread using one.
 *
 * Symbols. The main JITDylib gets absolute definitions for every runtime
 * function generated code may call (libm: expf, tanhf, erff, ...; malloc,
 * free; memset/memcpy/memmove, which loop idiom recognition introduces; the
 * half-precision conversions of libgcc; mt_parallel_for, runtime/parallel.h,
 * which parallel loops call), taken as addresses in this process,
 * so they resolve even when the host links statically or libm was dropped by
 * --as-needed. A process-symbol generator (dlsym) covers anything else.
 *
 * Modules. compile.c hands over object files; they go into the main
 * JITDylib under one ResourceTracker per compiled module (mt_jit_link);
 * mt_jit_module_release removes the tracker, which frees the module's code
 * and symbols. Trackers (rather than a JITDylib per module) are cheap, can
 * be removed (a JITDylib cannot be deleted through the C API) and see the
 * runtime symbols without link-order plumbing. Symbol names do not collide
 * because every module gets a process-unique prefix "mt<N>_", or with the
 * disk cache one made from its key, "mtk<16 hex>_", which the JIT hands to
 * one live module at a time (mt_jit_claim_tag keeps the tags in use). The
 * mutex guards the LLJIT (adding objects, lookups, which link them, and
 * removing trackers) and the tags.
 *
 * Dumps. A compiled module is kept as the bitcode of its parts (one per
 * kernel function, compile.c); the llvm and asm dumps parse and link them
 * into one module on demand (mt_jit_ir_text, mt_jit_emit_asm), in a context
 * of their own whose diagnostics are recorded, not printed.
 *
 * Error handling. LLVM reports through LLVMErrorRef and message strings; they
 * are copied and disposed, and the lock released, before the caller learns
 * of it. The execution session's error reporter records its message for the
 * next failure report instead of printing to stderr.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "codegen/llvm_cpu.h"
#include "codegen/jit_internal.h"
#include "runtime/gpu_launch.h"
#include "runtime/parallel.h"

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
    S_(mt_kernel_oob), S_(mt_kernel_stopped),
    S_(mt_gpu_launch), S_(mt_gpu_alloc), S_(mt_gpu_free),
#undef S_
};

static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;
static int llvm_init_failed;

static void init_llvm(void) {
    if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter() ||
        LLVMInitializeNativeAsmParser()) {
        llvm_init_failed = 1;
        return;
    }
    /* LLVM creates some process-wide state (the pass timers' lock, a
     * ManagedStatic) on the first pass pipeline run. Run one here, inside
     * pthread_once, so that it is made before any compile helper starts:
     * ThreadSanitizer cannot see the uninstrumented double-checked locking
     * of a ManagedStatic first made on a helper. */
    LLVMContextRef c = LLVMContextCreate();
    LLVMModuleRef m = LLVMModuleCreateWithNameInContext("mt_warm", c);
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = LLVMRunPasses(m, "default<O0>", NULL, po);
    if (e) LLVMConsumeError(e);
    LLVMDisposePassBuilderOptions(po);
    LLVMDisposeModule(m);
    LLVMContextDispose(c);
}

double mt_jit_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

void mt_jit_take_error(LLVMErrorRef err, const char *what, char *buf, size_t len) {
    char *m = LLVMGetErrorMessage(err);
    snprintf(buf, len, "%s: %s", what, m ? m : "?");
    LLVMDisposeErrorMessage(m);
}

static void report_session_error(void *ctx, LLVMErrorRef err) {
    mt_jit *jit = ctx;
    mt_jit_take_error(err, "JIT session", jit->session_err, sizeof jit->session_err);
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
        mt_jit_take_error(e, "defining runtime symbols", err, errlen);
        return -1;
    }
    LLVMOrcDefinitionGeneratorRef gen;
    e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
        &gen, LLVMOrcLLJITGetGlobalPrefix(jit->lljit), NULL, NULL);
    if (e) {
        mt_jit_take_error(e, "process symbol generator", err, errlen);
        return -1;
    }
    LLVMOrcJITDylibAddGenerator(jd, gen);
    return 0;
}

static void destroy_locks(mt_jit *jit) {
    pthread_mutex_destroy(&jit->mu);
    for (int i = 0; i < MT_JIT_TMS; i++) pthread_mutex_destroy(&jit->tms[i].mu);
}

/* Makes the slot's machine if it has none; the slot is locked. */
static mt_jit_tm *tm_ready(mt_jit *jit, mt_jit_tm *t, char *err, size_t errlen) {
    if (!t->tm) t->tm = host_tm(jit, err, errlen);
    if (t->tm) return t;
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

mt_jit_tm *mt_jit_tm_acquire(mt_jit *jit, char *err, size_t errlen) {
    for (int i = 0; i < MT_JIT_TMS; i++)
        if (pthread_mutex_trylock(&jit->tms[i].mu) == 0) return tm_ready(jit, &jit->tms[i], err, errlen);
    /* All busy (more threads compile at once than there are slots): wait
     * for one, spreading the waiters over the slots. */
    static atomic_uint spread;
    mt_jit_tm *t = &jit->tms[atomic_fetch_add(&spread, 1) % MT_JIT_TMS];
    pthread_mutex_lock(&t->mu);
    return tm_ready(jit, t, err, errlen);
}

void mt_jit_tm_release(mt_jit_tm *t) { pthread_mutex_unlock(&t->mu); }

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
        mt_jit_take_error(e, "detecting the host", err, errlen);
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
        mt_jit_take_error(e, "creating the LLJIT", err, errlen);
        goto fail;
    }
    LLVMOrcExecutionSessionSetErrorReporter(LLVMOrcLLJITGetExecutionSession(jit->lljit),
                                            report_session_error, jit);
    if (define_runtime_syms(jit, err, errlen)) goto fail;
    int nmu = 0; /* slot mutexes made */
    if (pthread_mutex_init(&jit->mu, NULL) == 0)
        while (nmu < MT_JIT_TMS && pthread_mutex_init(&jit->tms[nmu].mu, NULL) == 0) nmu++;
    else
        nmu = -1;
    if (nmu < MT_JIT_TMS) {
        if (nmu >= 0) pthread_mutex_destroy(&jit->mu);
        while (nmu-- > 0) pthread_mutex_destroy(&jit->tms[nmu].mu);
        snprintf(err, errlen, "cannot create the JIT's mutexes");
        goto fail;
    }
    /* The first slot's machine now: its failure is the context's, not the first compile's. */
    mt_jit_tm *t = mt_jit_tm_acquire(jit, err, errlen);
    if (!t) {
        destroy_locks(jit);
        goto fail;
    }
    mt_jit_tm_release(t);
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
    for (int i = 0; i < MT_JIT_TMS; i++)
        if (jit->tms[i].tm) LLVMDisposeTargetMachine(jit->tms[i].tm);
    destroy_locks(jit);
    LLVMDisposeMessage(jit->triple);
    LLVMDisposeMessage(jit->cpu);
    LLVMDisposeMessage(jit->features);
    free(jit->tags);
    free(jit);
}

int mt_jit_claim_tag(mt_jit *jit, mt_jit_module *jm, uint64_t tag) {
    int rc = 0;
    pthread_mutex_lock(&jit->mu);
    for (int i = 0; i < jit->ntags && rc == 0; i++)
        if (jit->tags[i] == tag) rc = -1;
    if (rc == 0 && jit->ntags == jit->captags) {
        int nc = jit->captags ? 2 * jit->captags : 16;
        uint64_t *nt = realloc(jit->tags, (size_t)nc * sizeof *nt);
        if (nt) {
            jit->tags = nt;
            jit->captags = nc;
        } else {
            rc = -1;
        }
    }
    if (rc == 0) {
        jit->tags[jit->ntags++] = tag;
        jm->tag = tag;
        jm->has_tag = 1;
    }
    pthread_mutex_unlock(&jit->mu);
    return rc;
}

const char *mt_jit_cpu_name(const mt_jit *jit) { return jit->cpu; }
const char *mt_jit_cpu_features(const mt_jit *jit) { return jit->features; }

void mt_jit_module_release(mt_jit_module *m) {
    if (!m) return;
    mt_jit *jit = m->jit;
    pthread_mutex_lock(&jit->mu);
    if (m->rt) {
        LLVMErrorRef e = LLVMOrcResourceTrackerRemove(m->rt);
        if (e) LLVMConsumeError(e);
        LLVMOrcReleaseResourceTracker(m->rt);
    }
    for (int i = 0; m->has_tag && i < jit->ntags; i++)
        if (jit->tags[i] == m->tag) {
            jit->tags[i] = jit->tags[--jit->ntags];
            break;
        }
    LLVMOrcSymbolStringPoolClearDeadEntries(LLVMOrcExecutionSessionGetSymbolStringPool(
        LLVMOrcLLJITGetExecutionSession(jit->lljit)));
    pthread_mutex_unlock(&jit->mu);
    free(m);
}

/* ---- linking compiled objects ---------------------------------------------- */

int mt_jit_link(mt_jit *jit, mt_jit_module *jm, LLVMMemoryBufferRef *objs, int nobj,
                const char *prefix, mt_tfunc *const *funcs, int n, void **addrs, char *msg,
                size_t len) {
    int rc = 0;
    pthread_mutex_lock(&jit->mu);
    jit->session_err[0] = 0;
    LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(jit->lljit);
    jm->rt = LLVMOrcJITDylibCreateResourceTracker(jd);
    for (int i = 0; i < nobj; i++) {
        LLVMMemoryBufferRef obj = objs[i];
        objs[i] = NULL;
        if (rc) { /* after a failure the rest are only disposed */
            LLVMDisposeMemoryBuffer(obj);
            continue;
        }
        LLVMErrorRef e = LLVMOrcLLJITAddObjectFileWithRT(jit->lljit, jm->rt, obj); /* takes obj */
        if (e) {
            mt_jit_take_error(e, "adding an object file to the JIT", msg, len);
            rc = -1;
        }
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
        LLVMErrorRef e = LLVMOrcLLJITLookup(jit->lljit, &addr, name);
        if (e) {
            char what[256];
            snprintf(what, sizeof what, "JIT lookup of %.200s", name);
            mt_jit_take_error(e, what, msg, len);
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

/* Parses one part's bitcode into ctx; NULL and a message in sink on failure. */
static LLVMModuleRef parse_part(LLVMContextRef ctx, diag_sink *sink, const mt_codegen_bc *bc) {
    LLVMMemoryBufferRef in =
        LLVMCreateMemoryBufferWithMemoryRange(bc->data, bc->len, "mt-bitcode", 0);
    LLVMModuleRef mod = NULL;
    if (!in || LLVMParseBitcodeInContext2(ctx, in, &mod)) {
        char why[256];
        snprintf(why, sizeof why, "%s", sink->buf[0] ? sink->buf : "?");
        snprintf(sink->buf, sink->len, "reading the module's bitcode: %s", why);
        mod = NULL;
    }
    if (in) LLVMDisposeMemoryBuffer(in);
    return mod;
}

/* Parses the parts' bitcode into ctx (a fresh context whose diagnostics go
 * to sink) and links them into one module, the parts in order; NULL and a
 * message in sink on failure. */
static LLVMModuleRef parse_bc(LLVMContextRef ctx, diag_sink *sink, const mt_codegen_bc *parts,
                              int n) {
    sink->buf[0] = 0;
    LLVMContextSetDiagnosticHandler(ctx, record_diag, sink);
    if (n < 1) return LLVMModuleCreateWithNameInContext("mt", ctx); /* no kernel functions */
    LLVMModuleRef mod = parse_part(ctx, sink, &parts[0]);
    for (int i = 1; i < n && mod; i++) {
        LLVMModuleRef part = parse_part(ctx, sink, &parts[i]);
        if (!part || LLVMLinkModules2(mod, part)) { /* LLVMLinkModules2 disposes part */
            if (part) {
                char why[256];
                snprintf(why, sizeof why, "%s", sink->buf[0] ? sink->buf : "?");
                snprintf(sink->buf, sink->len, "linking the module's parts: %s", why);
            }
            LLVMDisposeModule(mod);
            mod = NULL;
        }
    }
    if (mod) { /* the ModuleID the module had: its source file name */
        size_t len = 0;
        const char *src = LLVMGetSourceFileName(mod, &len);
        LLVMSetModuleIdentifier(mod, src, len);
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

const char *mt_jit_ir_text(mt_arena *a, const mt_codegen_bc *parts, int n, char *err,
                           size_t errlen) {
    LLVMContextRef ctx = LLVMContextCreate();
    diag_sink sink = {err, errlen};
    LLVMModuleRef mod = parse_bc(ctx, &sink, parts, n);
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

const char *mt_jit_emit_asm(mt_jit *jit, mt_arena *a, const mt_codegen_bc *parts, int n,
                            char *err, size_t errlen) {
    LLVMContextRef ctx = LLVMContextCreate();
    diag_sink sink = {err, errlen};
    LLVMModuleRef mod = parse_bc(ctx, &sink, parts, n);
    if (!mod) {
        LLVMContextDispose(ctx);
        return NULL;
    }
    LLVMMemoryBufferRef outbuf = NULL;
    char *msg = NULL;
    char *text = NULL;
    LLVMBool bad = 1;
    mt_jit_tm *t = mt_jit_tm_acquire(jit, err, errlen);
    if (t) {
        bad = LLVMTargetMachineEmitToMemoryBuffer(t->tm, mod, LLVMAssemblyFile, &msg, &outbuf);
        mt_jit_tm_release(t);
    }
    if (!t) {
        /* err says why */
    } else if (bad) {
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
