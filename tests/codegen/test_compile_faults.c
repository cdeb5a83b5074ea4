/*
 * test_compile_faults.c -- the compile driver (src/codegen/compile.c) when
 * its helpers misbehave: pthread_create failing (every time, or after one
 * helper started) and object emission failing for one kernel function,
 * possibly on a helper thread. The link wraps pthread_create and
 * LLVMTargetMachineEmitToMemoryBuffer (tests/codegen.cmake): no hook in the
 * library. In every case the compile either succeeds with correct code on
 * the threads it got, or fails with the helper's error as MT_ERR_INTERNAL,
 * leaking nothing (the ASan build checks), and the JIT keeps working.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "codegen/cg_util.h"
#include "support/common.h"

/* ---- the wrapped functions ------------------------------------------------------ */

static atomic_int creates_left = -1; /* successful pthread_creates still allowed (-1: all) */

int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *), void *arg) {
    int left = atomic_load(&creates_left);
    if (left == 0) return EAGAIN;
    if (left > 0) atomic_fetch_sub(&creates_left, 1);
    return __real_pthread_create(t, a, f, arg);
}

/* Emission of a module that defines a function whose name ends in "_boom"
 * fails, as LLVM reports a failure: message set, no buffer. */
static atomic_int boom_calls;

LLVMBool __real_LLVMTargetMachineEmitToMemoryBuffer(LLVMTargetMachineRef tm, LLVMModuleRef m,
                                                    LLVMCodeGenFileType ft, char **msg,
                                                    LLVMMemoryBufferRef *out);
LLVMBool __wrap_LLVMTargetMachineEmitToMemoryBuffer(LLVMTargetMachineRef tm, LLVMModuleRef m,
                                                    LLVMCodeGenFileType ft, char **msg,
                                                    LLVMMemoryBufferRef *out) {
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        size_t len = 0;
        const char *name = LLVMGetValueName2(f, &len);
        if (!LLVMIsDeclaration(f) && ((len >= 5 && strcmp(name + len - 5, "_boom") == 0) ||
                                      (len >= 15 && strcmp(name + len - 15, "pboom_par0.body") == 0))) {
            atomic_fetch_add(&boom_calls, 1);
            *msg = LLVMCreateMessage("injected emission failure");
            return 1;
        }
    }
    return __real_LLVMTargetMachineEmitToMemoryBuffer(tm, m, ft, msg, out);
}

/* An arena's second chunk (32-byte header + 128 KiB) fails while armed. */
static atomic_int fail_chunk;
enum { CHUNK2 = 32 + (128 << 10) };
void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n) {
    if (n == CHUNK2 && atomic_load(&fail_chunk)) {
        atomic_fetch_add(&fail_chunk, 1);
        return NULL;
    }
    return __real_malloc(n);
}

/* ---- helpers ------------------------------------------------------------------- */

static mt_jit *jit;
static mt_arena *A;

/* out[i] = a[i] op b[i], i < n (n a sym var). */
static mt_tfunc *make_op(const char *name, mt_texpr_kind op) {
    mt_tvar *n = mt_tvar_new(A, "n", MT_INT64), *i = mt_tvar_new(A, "i", MT_INT64);
    mt_texpr *nv = mt_te_var(A, n), *iv = mt_te_var(A, i);
    mt_tbuffer *a = mt_tbuffer_new(A, "a", MT_FLOAT32, 1, &nv);
    mt_tbuffer *b = mt_tbuffer_new(A, "b", MT_FLOAT32, 1, &nv);
    mt_tbuffer *o = mt_tbuffer_new(A, "out", MT_FLOAT32, 1, &nv);
    mt_texpr *v = mt_te_bin(A, op, mt_te_load(A, a, &iv, 1), mt_te_load(A, b, &iv, 1));
    mt_tfunc *f = mt_tfunc_new(A, name);
    mt_tfunc_add_param(A, f, a, NULL);
    mt_tfunc_add_param(A, f, b, NULL);
    mt_tfunc_add_param(A, f, o, NULL);
    f->sym_vars = MT_NEW_ARRAY(A, mt_tvar *, 1);
    f->sym_vars[0] = n;
    f->nsym = 1;
    f->num_outputs = 1;
    f->body = mt_ts_for(A, i, mt_te_i64(A, 0), nv, MT_FOR_SERIAL, mt_ts_store(A, o, &iv, 1, v));
    return f;
}

/* Compiles fs[0..n) on `threads`; MT_OK and *out, or the status and message. */
static mt_status try_compile(mt_tfunc **fs, int n, int threads, mt_codegen_out *out, char *msg,
                             size_t len) {
    mt_codegen_in in = cg_split(A, fs, n, 3, threads);
    return cg_try(jit, A, &in, out, msg, len);
}

/* fs are make_op(ADD), (SUB), (MUL), ...: checks each compiled function. */
static void check_ops(const mt_codegen_out *r, int n) {
    typedef void (*fn_t)(const float *, const float *, float *, int64_t);
    float a[3] = {1, 2, 3}, b[3] = {4, 5, 7}, o[3];
    static const float want[3] = {10, -4, 21};
    for (int i = 0; i < n; i++) {
        ((fn_t)r->fn_addrs[i])(a, b, o, 3);
        assert_true(o[2] == want[i % 3]);
    }
}

static mt_tfunc **three_ops(void) {
    static const mt_texpr_kind ops[3] = {TE_ADD, TE_SUB, TE_MUL};
    mt_tfunc **fs = MT_NEW_ARRAY(A, mt_tfunc *, 3);
    for (int i = 0; i < 3; i++) fs[i] = make_op(mt_arena_printf(A, "op%d", i), ops[i]);
    return fs;
}

static int group_setup(void **state) {
    char err[256];
    jit = mt_jit_create(err, sizeof err);
    if (!jit) fprintf(stderr, "mt_jit_create: %s\n", err);
    return jit ? 0 : -1;
}
static int group_teardown(void **state) {
    mt_jit_destroy(jit);
    return 0;
}
static int setup(void **state) {
    A = mt_arena_create();
    atomic_store(&creates_left, -1);
    atomic_store(&boom_calls, 0);
    return A ? 0 : -1;
}
static int teardown(void **state) {
    mt_arena_destroy(A);
    A = NULL;
    atomic_store(&creates_left, -1);
    return 0;
}

/* ---- tests --------------------------------------------------------------------- */

/* Three functions on three threads when only `creates` helpers can start:
 * 1 + creates threads compile them, and the code is right. */
static void compile_with_helpers(int creates) {
    atomic_store(&creates_left, creates);
    mt_codegen_out r;
    char msg[512];
    assert_int_equal(try_compile(three_ops(), 3, 3, &r, msg, sizeof msg), MT_OK);
    assert_int_equal(r.threads, 1 + creates);
    check_ops(&r, 3);
    mt_jit_module_release(r.module);
}

/* No helper can be started: the calling thread compiles every function. */
static void test_no_helpers(void **state) { compile_with_helpers(0); }

/* One of two helpers starts: two threads share the three functions. */
static void test_one_helper(void **state) { compile_with_helpers(1); }

/* Emission fails for one function: the compile fails with that error,
 * whichever thread met it, on 1 to 4 threads; then the JIT still works. */
/* Compiles fs[0..n) on `threads`, one of whose modules fails to emit:
 * the compile fails with that error, the emission was tried once. */
static void expect_emission_failure(mt_tfunc **fs, int n, int threads) {
    mt_codegen_out r;
    char msg[512];
    atomic_store(&boom_calls, 0);
    assert_int_equal(try_compile(fs, n, threads, &r, msg, sizeof msg), MT_ERR_INTERNAL);
    assert_non_null(strstr(msg, "emitting object code: injected emission failure"));
    assert_int_equal(atomic_load(&boom_calls), 1);
}

static void test_emission_failure(void **state) {
    for (int threads = 1; threads <= 4; threads++) {
        mt_tfunc **ok = three_ops();
        mt_tfunc *fs[4] = {ok[0], ok[1], make_op("k_boom", TE_ADD), ok[2]};
        expect_emission_failure(fs, 4, threads);
    }
    mt_codegen_out r;
    char msg[512];
    assert_int_equal(try_compile(three_ops(), 3, 2, &r, msg, sizeof msg), MT_OK);
    check_ops(&r, 3);
    mt_jit_module_release(r.module);
}

/* out[i] = i + k for i in T.parallel(n): a kernel with `nl` parallel loops. */
static mt_tfunc *make_par(const char *name, int nl) {
    mt_tvar *n = mt_tvar_new(A, "n", MT_INT64);
    mt_texpr *nv = mt_te_var(A, n);
    mt_tbuffer *o = mt_tbuffer_new(A, "out", MT_FLOAT32, 1, &nv);
    mt_tstmt **s = MT_NEW_ARRAY(A, mt_tstmt *, nl);
    for (int k = 0; k < nl; k++) {
        mt_tvar *i = mt_tvar_new(A, "i", MT_INT64);
        mt_texpr *iv = mt_te_var(A, i);
        mt_texpr *v = mt_te_bin(A, TE_ADD, mt_te_cast(A, MT_FLOAT32, iv), mt_te_float(A, MT_FLOAT32, k));
        s[k] = mt_ts_for(A, i, mt_te_i64(A, 0), nv, MT_FOR_PARALLEL, mt_ts_store(A, o, &iv, 1, v));
    }
    mt_tfunc *f = mt_tfunc_new(A, name);
    mt_tfunc_add_param(A, f, o, NULL);
    f->sym_vars = MT_NEW_ARRAY(A, mt_tvar *, 1);
    f->sym_vars[0] = n;
    f->nsym = 1;
    f->num_outputs = 1;
    f->body = mt_ts_seq(A, s, nl);
    return f;
}

/* Emission fails for a parallel loop body's part: the compile fails with
 * that error, the other units are disposed (ASan). */
static void test_part_emission_failure(void **state) {
    for (int threads = 2; threads <= 4; threads++) {
        mt_tfunc *fs[3] = {make_par("a", 2), make_par("pboom", 1), make_par("b", 6)};
        expect_emission_failure(fs, 3, threads);
    }
}

/* The compile's arena runs out at every allocation in turn (its first
 * chunk filled to leave r bytes, the next chunk refused): the compile
 * fails with MT_ERR_NOMEM or succeeds, and leaks nothing (ASan). The
 * chunks kept from earlier arenas are freed first, so that the arena
 * mallocs its own (of the sizes the wrapper knows). */
static void test_arena_exhaustion(void **state) {
    mt_tfunc *fs[2] = {make_par("a", 5), make_par("b", 3)};
    /* split once, outside the failing arena: codegen's allocations fail */
    mt_codegen_in in = cg_split(A, fs, 2, 0, 2);
    int ok_in_row = 0, nomem = 0;
    for (size_t r = 0; r <= 60000 && ok_in_row < 8; r += 16) {
        mt_arena_release_kept();
        mt_arena *S = mt_arena_create();
        mt_arena_alloc(S, (64 << 10) - r);
        atomic_store(&fail_chunk, 1);
        mt_codegen_out out;
        char msg[512] = "";
        mt_status st = cg_try(jit, S, &in, &out, msg, sizeof msg);
        int hit = atomic_exchange(&fail_chunk, 0) > 1;
        if (st == MT_OK) {
            float o[10];
            ((void (*)(float *, int64_t))out.fn_addrs[1])(o, 10);
            assert_true(o[9] == 11.0f);
            mt_jit_module_release(out.module);
            ok_in_row = hit ? 0 : ok_in_row + 1;
        } else {
            if (st != MT_ERR_NOMEM) fail_msg("r %zu: status %d: %s", r, (int)st, msg);
            nomem++;
            ok_in_row = 0;
        }
        mt_arena_destroy(S);
    }
    if (getenv("VERBOSE")) fprintf(stderr, "%d compiles out of memory\n", nomem);
    assert_true(nomem > 10);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_helpers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_helper, setup, teardown),
        cmocka_unit_test_setup_teardown(test_emission_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_part_emission_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_arena_exhaustion, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
