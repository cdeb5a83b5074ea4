/*
 * jit_internal.h -- what the JIT (jit.c: setup, target machines, linking,
 * dumps) and the compile driver (compile.c: modules, optimization, object
 * code, threads) share. Private to src/codegen.
 *
 * Target machines. An LLVM TargetMachine must not be used by two threads at
 * once, so the JIT keeps a few of them in slots, each with its own lock,
 * made on first use: a compile takes one slot per thread it runs on, an asm
 * dump takes one. A slot is held only while its machine is in use.
 */
#ifndef MT_CODEGEN_JIT_INTERNAL_H
#define MT_CODEGEN_JIT_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/TargetMachine.h>

#include "codegen/llvm_cpu.h"

/* Target machines kept; also the most threads one compile uses. */
#define MT_JIT_TMS 8

typedef struct mt_jit_tm {
    pthread_mutex_t mu;
    LLVMTargetMachineRef tm; /* NULL until first used */
} mt_jit_tm;

struct mt_jit {
    LLVMOrcLLJITRef lljit;     /* the JIT; code goes into its main JITDylib */
    char *triple;              /* process triple (LLVM message) */
    char *cpu;                 /* host CPU name (LLVM message) */
    char *features;            /* host CPU features (LLVM message) */
    pthread_mutex_t mu;        /* guards lljit and session_err */
    char session_err[512];     /* last error reported by the execution session */
    mt_jit_tm tms[MT_JIT_TMS]; /* host target machines for passes, objects and asm */
    uint64_t *tags;            /* the tags of live modules named after their disk cache key (mu) */
    int ntags, captags;
};

struct mt_jit_module {
    mt_jit *jit;                  /* owner */
    LLVMOrcResourceTrackerRef rt; /* tracks the module's code in the main JITDylib */
    uint64_t tag;                 /* its symbols' prefix names this tag (has_tag) */
    int has_tag;
};

/* Claims tag for jm: the symbols of a module whose prefix is made from its
 * disk cache key ("mtk<16 hex>_", compile.c) must not be defined twice in
 * the JIT, so a tag is held by one live module at a time (released with
 * it). 0 when claimed, -1 when another module holds it (or no memory). */
int mt_jit_claim_tag(mt_jit *jit, mt_jit_module *jm, uint64_t tag);

/* Locks a free target machine slot (waiting for one when all are busy) and
 * returns it with its machine made; NULL and a message in err when LLVM
 * cannot make one. Release with mt_jit_tm_release. */
mt_jit_tm *mt_jit_tm_acquire(mt_jit *jit, char *err, size_t errlen);
void mt_jit_tm_release(mt_jit_tm *t);

/* Writes "what: <LLVM message>" to buf and consumes err. */
void mt_jit_take_error(LLVMErrorRef err, const char *what, char *buf, size_t len);

/* Adds the object files objs[0..nobj) to the JIT under a new tracker of jm
 * (taking them, also on failure: entries are set to NULL) and looks up
 * prefix + funcs[i]->name for i < n into addrs. 0 on success, else -1 and a
 * message in msg. */
int mt_jit_link(mt_jit *jit, mt_jit_module *jm, LLVMMemoryBufferRef *objs, int nobj,
                const char *prefix, mt_tfunc *const *funcs, int n, void **addrs, char *msg,
                size_t len);

double mt_jit_now_ms(void);

#endif
