/*
 * cuda_c_util.h -- what the CUDA C tests share (test_cuda_c.c, which checks
 * the text and compiles it, and test_cuda_c_gpu.c, which runs it): TIR
 * building helpers for kernels in the form split_host_device makes for a
 * CUDA target, two whole kernels (an elementwise add and a block
 * reduction), emitting with internal errors failing the test, and finding
 * nvcc.
 *
 * Include after <cmocka.h>; the including file defines nothing of its own
 * named like these. Everything is allocated in A (the test's arena).
 */
#ifndef MT_TESTS_CUDA_C_UTIL_H
#define MT_TESTS_CUDA_C_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/cuda_c.h"
#include "support/common.h"
#include "support/diag.h"

static mt_arena *A; /* the test's arena */

/* ---- TIR building helpers ---------------------------------------------------- */

static inline mt_texpr *I(int64_t v) { return mt_te_i64(A, v); }
static inline mt_texpr *V(mt_tvar *v) { return mt_te_var(A, v); }
static inline mt_texpr *F32(double v) { return mt_te_float(A, MT_FLOAT32, v); }
static inline mt_texpr *ld(mt_tbuffer *b, mt_texpr *i) { return mt_te_load(A, b, &i, 1); }
static inline mt_tstmt *st(mt_tbuffer *b, mt_texpr *i, mt_texpr *v) { return mt_ts_store(A, b, &i, 1, v); }
static inline mt_texpr *bin(mt_texpr_kind k, mt_texpr *x, mt_texpr *y) { return mt_te_bin(A, k, x, y); }
static inline mt_texpr *call1(mt_intrin fn, mt_texpr *x) { return mt_te_call(A, fn, &x, 1); }
static inline mt_tvar *var(const char *name, mt_dtype t) { return mt_tvar_new(A, name, t); }
static inline mt_tbuffer *buf1(const char *name, mt_dtype t, mt_texpr *n) {
    return mt_tbuffer_new(A, name, t, 1, &n);
}
static inline mt_tbuffer *local(const char *name, mt_dtype t, int64_t n, mt_scope scope) {
    mt_tbuffer *b = mt_tbuffer_new_const(A, name, t, 1, &n);
    b->scope = scope;
    return b;
}
static inline mt_tstmt *seq(int n, ...) {
    mt_tstmt *s[64];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) s[i] = va_arg(ap, mt_tstmt *);
    va_end(ap);
    return mt_ts_seq(A, s, n);
}
static inline mt_tstmt *loop(mt_tvar *i, mt_texpr *ext, mt_tstmt *body) {
    return mt_ts_for(A, i, I(0), ext, MT_FOR_SERIAL, body);
}
/* for v in T.thread_binding(ext, thread=tag): body */
static inline mt_tstmt *bound(mt_tvar *v, mt_texpr *ext, const char *tag, mt_tstmt *body) {
    mt_tstmt *s = mt_ts_for(A, v, I(0), ext, MT_FOR_THREAD, body);
    s->thread_tag = tag;
    return s;
}

/* A cuda_kernel named name with params bufs[0..nb) then scalars vars[0..nv). */
static inline mt_tfunc *kernel(const char *name, mt_tbuffer **bufs, int nb, mt_tvar **vars, int nv,
                        mt_tstmt *body) {
    mt_tfunc *f = mt_tfunc_new(A, name);
    for (int i = 0; i < nb; i++) mt_tfunc_add_param(A, f, bufs[i], NULL);
    for (int i = 0; i < nv; i++) mt_tfunc_add_param(A, f, NULL, vars[i]);
    f->body = body;
    mt_tfunc_set_attr(A, f, MT_ATTR_KIND, MT_KIND_CUDA_KERNEL);
    return f;
}

/* The launch of k with its params as arguments. */
static inline mt_tstmt *launch(mt_tfunc *k, mt_texpr *grid_x, mt_texpr *block_x) {
    mt_targ *args = mt_arena_alloc(A, sizeof(mt_targ) * (size_t)k->nparams);
    for (int i = 0; i < k->nparams; i++) {
        args[i].buf = k->params[i].buf;
        if (!args[i].buf) args[i].value = V(k->params[i].var);
    }
    mt_tstmt *s = mt_ts_launch(A, k, args, k->nparams);
    s->launch->grid[0] = grid_x;
    s->launch->block[0] = block_x;
    return s;
}

/* A host function with k's buffers as params and the symbolic dims syms
 * whose body is `body`. */
static inline mt_tfunc *host_of(mt_tfunc *k, mt_tvar **syms, int nsym, mt_tstmt *body) {
    mt_tfunc *h = mt_tfunc_new(A, "main");
    for (int i = 0; i < k->nparams; i++)
        if (k->params[i].buf) mt_tfunc_add_param(A, h, k->params[i].buf, NULL);
    h->sym_vars = syms;
    h->nsym = nsym;
    h->body = body;
    return h;
}

/* (n + 255) // 256 */
static inline mt_texpr *ceil256(mt_texpr *n) { return bin(TE_FLOORDIV, bin(TE_ADD, n, I(255)), I(256)); }

/* ---- emitting and checking --------------------------------------------------- */

/* mt_cuda_c_emit of the given functions; an internal error fails the test. */
static inline const char *emit(mt_tfunc **host, int nhost, mt_tfunc **dev, int ndev) {
    mt_errframe fr;
    if (MT_TRY(&fr)) {
        const char *s = mt_cuda_c_emit(A, host, nhost, dev, ndev);
        mt_err_pop(&fr);
        return s;
    }
    mt_err_pop(&fr);
    fail_msg("mt_cuda_c_emit failed: %s", fr.msg);
    return NULL;
}

static inline const char *emit1(mt_tfunc *host, mt_tfunc *k) { return emit(&host, host ? 1 : 0, &k, 1); }

/* ---- nvcc ------------------------------------------------------------------- */

static inline bool executable(const char *path) { return path && *path && access(path, X_OK) == 0; }

/* nvcc: MT_NVCC, else on PATH, else the toolkit's default place; NULL and
 * why in *why when there is none. */
static inline const char *find_nvcc(const char **why) {
    const char *env = getenv("MT_NVCC");
    if (env && *env) {
        *why = "MT_NVCC is not an executable";
        return executable(env) ? env : NULL;
    }
    const char *path = getenv("PATH");
    for (const char *p = path; p && *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char *cand = mt_arena_printf(A, "%.*s/nvcc", (int)n, p);
        if (n && executable(cand)) return cand;
        p = end ? end + 1 : p + n;
    }
    *why = "no nvcc (MT_NVCC unset, none on PATH or in /usr/local/cuda/bin)";
    return executable("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : NULL;
}

static inline char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = mt_arena_alloc(A, (size_t)(n > 0 ? n : 0) + 1);
    size_t got = fread(s, 1, (size_t)(n > 0 ? n : 0), f);
    s[got] = 0;
    fclose(f);
    return s;
}

/* ---- two whole kernels ------------------------------------------------------ */

/* out[i] = a[i] + b[i] for i < n, 256 threads a block: the kernel
 * split_host_device makes of the GPU schedule's injective rule. */
static inline mt_tfunc *add_kernel(mt_tfunc **host_out) {
    mt_tvar *n = var("n", MT_INT64);
    mt_tbuffer *a = buf1("a", MT_FLOAT32, V(n)), *b = buf1("b", MT_FLOAT32, V(n));
    mt_tbuffer *out = buf1("out", MT_FLOAT32, V(n));
    mt_tvar *bx = var("bx", MT_INT64), *tx = var("tx", MT_INT64);
    mt_texpr *i = bin(TE_ADD, bin(TE_MUL, V(bx), I(256)), V(tx));
    mt_tstmt *body = mt_ts_if(A, bin(TE_LT, i, V(n)),
                              st(out, i, bin(TE_ADD, ld(a, i), ld(b, i))), NULL);
    body = bound(bx, ceil256(V(n)), "blockIdx.x", bound(tx, I(256), "threadIdx.x", body));
    mt_tbuffer *bufs[] = {a, b, out};
    mt_tfunc *k = kernel("add_kernel0", bufs, 3, &n, 1, body);
    mt_tvar **syms = mt_arena_alloc(A, sizeof *syms);
    syms[0] = n;
    *host_out = host_of(k, syms, 1, launch(k, ceil256(V(n)), I(256)));
    return k;
}

/* out[r] = sum(a[r * m : r * m + m]) for each row r, one block of 256
 * threads a row: phase 1 sums a strided part of the row per thread into
 * acc (per thread) and red[tx] (shared), eight tree phases halve red, the
 * last phase writes the row's sum. */
static inline mt_tfunc *reduce_kernel(mt_tfunc **host_out) {
    mt_tvar *rows = var("rows", MT_INT64), *m = var("m", MT_INT64);
    mt_tbuffer *a = buf1("a", MT_FLOAT32, bin(TE_MUL, V(rows), V(m)));
    mt_tbuffer *out = buf1("out", MT_FLOAT32, V(rows));
    mt_tbuffer *red = local("red", MT_FLOAT32, 256, MT_SCOPE_SHARED);
    mt_tbuffer *acc = local("acc", MT_FLOAT32, 1, MT_SCOPE_LOCAL);
    mt_tvar *bx = var("bx", MT_INT64), *k = var("k", MT_INT64);
    mt_tstmt *phases[10];

    mt_tvar *tx = var("tx", MT_INT64);
    mt_texpr *j = bin(TE_ADD, bin(TE_MUL, V(k), I(256)), V(tx));
    mt_tstmt *acc_step = mt_ts_if(A, bin(TE_LT, j, V(m)),
                                  st(acc, I(0), bin(TE_ADD, ld(acc, I(0)),
                                                    ld(a, bin(TE_ADD, bin(TE_MUL, V(bx), V(m)), j)))),
                                  NULL);
    phases[0] = bound(tx, I(256), "threadIdx.x",
                      seq(3, st(acc, I(0), F32(0)), loop(k, ceil256(V(m)), acc_step),
                          st(red, V(tx), ld(acc, I(0)))));
    for (int p = 1, s = 128; s >= 1; p++, s /= 2) {
        mt_tvar *t = var("tx", MT_INT64);
        mt_texpr *sum = bin(TE_ADD, ld(red, V(t)), ld(red, bin(TE_ADD, V(t), I(s))));
        phases[p] = bound(t, I(256), "threadIdx.x",
                          mt_ts_if(A, bin(TE_LT, V(t), I(s)), st(red, V(t), sum), NULL));
    }
    mt_tvar *t = var("tx", MT_INT64);
    phases[9] = bound(t, I(256), "threadIdx.x",
                      mt_ts_if(A, bin(TE_EQ, V(t), I(0)), st(out, V(bx), ld(red, I(0))), NULL));
    mt_tstmt *body = mt_ts_alloc(A, red, mt_ts_alloc(A, acc, mt_ts_seq(A, phases, 10)));
    body = bound(bx, V(rows), "blockIdx.x", body);
    mt_tbuffer *bufs[] = {a, out};
    mt_tvar *vars[] = {rows, m};
    mt_tfunc *kf = kernel("row_sum_kernel0", bufs, 2, vars, 2, body);
    mt_tvar **syms = mt_arena_alloc(A, 2 * sizeof *syms);
    syms[0] = rows;
    syms[1] = m;
    *host_out = host_of(kf, syms, 2, launch(kf, V(rows), I(256)));
    return kf;
}

#endif
