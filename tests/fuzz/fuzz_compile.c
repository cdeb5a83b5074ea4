/*
 * fuzz_compile.c -- libFuzzer harness over mt_jit_compile.
 *
 * minitriton compiles source text that it did not write, inside someone
 * else's process, so every byte string must come back as a kernel or as a
 * diagnostic: never a crash, a hang, a leak, an out-of-bounds access or
 * undefined behaviour (the build adds ASan, UBSan and LeakSanitizer; libFuzzer
 * adds the timeout and the RSS limit).
 *
 * Each input is copied and NUL-terminated (the API takes a C string, so bytes
 * after an embedded NUL are simply not part of the source) and compiled on
 * one context made at start-up (its compile cache off), with the default
 * options except the optimization level: 0 for seven inputs in eight, 3
 * for the eighth (chosen by a hash of the input, so an input always gets
 * the same). LLVM's O3 pipeline is mostly LLVM's code, and skipping it more
 * than doubles the rate at which our own code sees inputs, but how we
 * configure it is ours: an instcombine that verified its fixpoint aborted
 * the host on some kernels, which only O2/O3 runs reach.
 * MT_FUZZ_OPT_LEVEL=0..3 sets one level for every input. Besides "no crash",
 * the harness checks what a host relies on:
 *
 *   - a failure has an error status, a non-empty message, a rendered text,
 *     and a place that is inside the source (line 0 = no place);
 *   - MT_ERR_INTERNAL (a broken invariant in minitriton) is a finding: the
 *     harness traps on it so that libFuzzer saves the input, unless the
 *     environment sets MT_FUZZ_ALLOW_ICE=1;
 *   - a compiled kernel can be introspected and every stage dumped except
 *     ASM (which re-runs LLVM's code generator and would halve the rate; the
 *     thread test and the API test cover it), then released.
 *
 * Kernels are not run: compiling is the contract under test, and running
 * needs argument tensors whose sizes the source decides.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "minitriton.h"

static mt_context *ctx;
static int allow_ice;
static int opt_level;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    /* No compile cache: every input is compiled, and the 256 kernels a cache
     * would keep (arenas and JIT code) would count against -rss_limit_mb.
     * No disk cache either: an entry per input would be written to the
     * user's ~/.cache, and a hit would skip the code generation fuzzed. */
    mt_context_options co = {0};
    co.cache_entries = -1;
    co.cache_dir = "";
    ctx = mt_context_create(&co);
    if (!ctx) {
        fprintf(stderr, "fuzz_compile: mt_context_create failed\n");
        exit(1);
    }
    const char *e = getenv("MT_FUZZ_ALLOW_ICE");
    allow_ice = e && e[0] == '1';
    const char *o = getenv("MT_FUZZ_OPT_LEVEL");
    opt_level = o && o[0] >= '0' && o[0] <= '3' ? o[0] - '0' : -1; /* -1: mixed */
    return 0;
}

/* Lines as the lexer counts them: "\n", "\r\n" and a lone "\r" end one. */
static int count_lines(const char *s) {
    int n = 1;
    for (; *s; s++) {
        if (*s == '\r' && s[1] == '\n') s++;
        n += *s == '\n' || *s == '\r';
    }
    return n;
}

static void check_diag(const mt_diag *d, const char *src) {
    if (d->status == MT_OK || d->status >= MT_STATUS_COUNT_ || !d->message[0] || !d->text[0]) {
        fprintf(stderr, "fuzz_compile: malformed diagnostic: status %d, message '%s'\n",
                (int)d->status, d->message);
        __builtin_trap();
    }
    if (d->line < 0 || d->col < 0 || d->line > count_lines(src) + 1) {
        fprintf(stderr, "fuzz_compile: diagnostic place %d:%d is outside the source\n", d->line,
                d->col);
        __builtin_trap();
    }
    if (d->status == MT_ERR_INTERNAL && !allow_ice) {
        fprintf(stderr, "fuzz_compile: internal compiler error:\n%s\n", d->text);
        __builtin_trap();
    }
}

static void touch(const char *s) {
    volatile size_t n = s ? strlen(s) : 0;
    (void)n;
}

static void check_kernel(mt_kernel *k) {
    for (int st = 0; st < MT_STAGE_COUNT_; st++) {
        if (st == MT_STAGE_ASM) continue;
        const char *text = mt_kernel_dump(k, (mt_stage)st);
        touch(text);
        if (!text) touch(mt_kernel_dump_unavailable(k, (mt_stage)st));
    }
    touch(mt_kernel_name(k));
    int np = mt_kernel_num_params(k), nr = mt_kernel_num_results(k);
    if (np < 0 || nr < 0) __builtin_trap();
    for (int i = 0; i < np; i++) {
        touch(mt_kernel_param_name(k, i));
        int nd = mt_kernel_param_ndim(k, i);
        if (nd < 0 || nd > MT_MAX_RANK || (unsigned)mt_kernel_param_dtype(k, i) >= MT_DTYPE_COUNT_)
            __builtin_trap();
        for (int a = 0; a < nd; a++) {
            int64_t dim = mt_kernel_param_dim(k, i, a);
            const char *name = mt_kernel_param_dim_name(k, i, a);
            if ((dim < 0) != (name != NULL)) __builtin_trap();
            touch(name);
        }
    }
    for (int i = 0; i < nr; i++) {
        int nd = mt_kernel_result_ndim(k, i);
        if (nd < 0 || nd > MT_MAX_RANK || (unsigned)mt_kernel_result_dtype(k, i) >= MT_DTYPE_COUNT_)
            __builtin_trap();
        for (int a = 0; a < nd; a++) (void)mt_kernel_result_dim(k, i, a);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *src = malloc(size + 1);
    if (!src) return 0;
    memcpy(src, data, size);
    src[size] = 0;
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.filename = "fuzz.py";
    if (opt_level >= 0) {
        o.opt_level = opt_level;
    } else { /* FNV-1a of the input: 3 for one input in eight */
        uint32_t h = 2166136261u;
        for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 16777619u;
        o.opt_level = (h & 7) == 0 ? 3 : 0;
    }
    mt_diag d;
    mt_kernel *k = mt_jit_compile(ctx, src, &o, &d);
    if (k) {
        if (d.status != MT_OK) __builtin_trap();
        check_kernel(k);
        mt_kernel_release(k);
    } else {
        check_diag(&d, src);
    }
    free(src);
    return 0;
}
