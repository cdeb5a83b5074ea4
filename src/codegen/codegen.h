/*
 * codegen.h -- the backend interface: a program's lowered functions to code
 * that runs, or to text that can be compiled.
 *
 * A backend serves one target kind (mt_target). It is given what
 * passes/tir/split_host_device.c made of a program (tir.h, "Host and
 * device"): the host functions, which the executor calls, and the device
 * functions they launch (TS_LAUNCH). It only prints or compiles what it is
 * given: finding what runs where, and what a launched function needs, is
 * the TIR's business. compile() hands back an opaque module, released with
 * release(), the address of each host function, and what dump() needs to
 * make the backend's dumps later, on demand (the stages in `dumps`).
 *
 *     mt_backend *be = mt_backend_llvm_cpu_create(err, sizeof err); // per context
 *     mt_codegen_in in = {host, nhost, device, ndevice, 3, threads};
 *     mt_codegen_out out;
 *     be->compile(be, arena, &in, &out);                       // may mt_fail
 *     ((void (*)(float *, int64_t))out.fn_addrs[0])(buf, n);
 *     const char *asm_text = be->dump(be, arena, &out, MT_STAGE_ASM, err, sizeof err);
 *     be->release(be, out.module);
 *     be->destroy(be);                                         // after every release
 *
 * Backends: the LLVM CPU backend (codegen/llvm_cpu.h: TIR -> LLVM IR -> ORC
 * LLJIT, dumps "llvm" and "asm"); CUDA C comes later behind the same
 * interface (its text is codegen/cuda_c.h's). See docs/codegen.md.
 */
#ifndef MT_CODEGEN_CODEGEN_H
#define MT_CODEGEN_CODEGEN_H

#include <stddef.h>

#include "minitriton.h"
#include "support/arena.h"
#include "tir/tir.h"

typedef struct mt_backend mt_backend;

/* What to compile. */
typedef struct mt_codegen_in {
    mt_tfunc *const *host;   /* the functions the executor calls */
    int nhost;
    mt_tfunc *const *device; /* the functions they launch, each launched once */
    int ndevice;
    int opt_level;           /* 0..3 */
    int threads;             /* the most threads the compile may use (< 1: 1) */
    /* The disk cache of compiled code (support/diskcache.h), or NULL, and
     * what the caller adds to its key: anything beyond the functions that
     * decided them (the source, options and target text). */
    struct mt_diskcache *disk;
    const void *salt;
    size_t salt_len;
    /* The text of host and device functions as mt_tfunc_print shows them
     * (each may carry more attributes), when the caller has it; NULL: the
     * key prints them. */
    const char *tir_text;
} mt_codegen_in;

/* What the disk cache did for a compile. */
typedef enum mt_codegen_disk {
    MT_CG_DISK_OFF = 0,      /* not used (off, or the key's names were taken in this JIT) */
    MT_CG_DISK_HIT,          /* the code came from the disk */
    MT_CG_DISK_MISS,         /* compiled, and written to the disk */
    MT_CG_DISK_MISS_UNSAVED, /* compiled; writing it failed (counted in the cache's errors) */
} mt_codegen_disk;

/* What comes back (arrays and texts in the compile's arena). */
typedef struct mt_codegen_out {
    void *module;            /* the compiled code: release with be->release */
    void **fn_addrs;         /* fn_addrs[i]: the entry point of host[i] */
    const void *dump_src;    /* what be->dump reads (LLVM: mt_codegen_bc[nparts]) */
    int nparts;              /* units compiled apart (LLVM: modules) */
    /* Phase times, wall clock: making the backend's IR, optimizing it, and
     * turning it into code (parts compiled at once overlap: llvm_cpu.h). */
    double ms_irgen, ms_opt, ms_jit;
    int threads;             /* threads the compile used */
    mt_codegen_disk disk;    /* the disk cache's part */
    double ms_disk_read;     /* looking up, reading and verifying the entry (hit or miss) */
    double ms_disk_write;    /* writing the entry after a miss (and evicting) */
} mt_codegen_out;

struct mt_backend {
    const char *name;        /* "llvm-cpu" */
    mt_target target;        /* the target kind it serves */
    unsigned dumps;          /* the stages dump() makes: bit (1u << stage) each */
    /* Compiles in into *out. Errors (a node the backend does not handle, an
     * internal failure) are raised with mt_ice/mt_fail, nothing leaked. */
    void (*compile)(mt_backend *be, mt_arena *a, const mt_codegen_in *in, mt_codegen_out *out);
    void (*release)(mt_backend *be, void *module); /* NULL is a no-op */
    /* The text of `stage` for a compiled module, in a; NULL and a message
     * in err when it cannot be made (or the backend has no such dump). */
    const char *(*dump)(mt_backend *be, mt_arena *a, const mt_codegen_out *out, mt_stage stage,
                        char *err, size_t errlen);
    void (*destroy)(mt_backend *be); /* after every module is released */
    /* Fills *t with the target this backend compiles for, parallel loops
     * on `cores` threads (the LLVM CPU backend: the host CPU's name and
     * features, target/target.h). */
    void (*describe)(mt_backend *be, mt_target_desc *t, int cores);
    void *impl;              /* the backend's own state (LLVM: its mt_jit) */
};

/* The LLVM backend for the host CPU (target cpu). NULL and a message in err
 * when LLVM cannot make a JIT for this machine. Thread-safe. */
mt_backend *mt_backend_llvm_cpu_create(char *err, size_t errlen);

#endif
