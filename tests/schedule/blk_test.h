/*
 * blk_test.h -- what the block-primitive tests share (test_primitives_block.c,
 * test_primitives_reverse.c): kernels compiled to their fused block-form
 * functions, naming their loops and blocks, patching a block, and running
 * a scheduled function against a double reference.
 */
#ifndef MT_TESTS_BLK_TEST_H
#define MT_TESTS_BLK_TEST_H

#include "tir/tir_test.h"

#include <stdlib.h>

#include "codegen/cg_util.h"
#include "frontend/parser.h"
#include "passes/tir/tir_passes.h"
#include "pipeline.h"
#include "schedule/primitives.h"
#include "tir/from_ast.h"
#include "tir/verify.h"

static mt_jit *jit;

/* The first fused loop function of src, in block form, before inlining. */
static inline mt_tfunc *kernel(const char *src) {
    mt_compiled c;
    mt_pipeline_targets targets = {mt_target_default_cpu(), NULL};
    mt_pipeline_run(A, src, strlen(src), NULL, &targets, &c);
    assert_true(c.module->ntfuncs >= 1);
    return c.module->tfuncs[0];
}

/* ---- finding what to name ------------------------------------------------------ */

typedef struct bfind {
    const char *name;
    const mt_tstmt *loops[16], *stack[16];
    int nloops, depth;
    const mt_tstmt *block;
} bfind;

static inline void bfind_rec(bfind *b, const mt_tstmt *s) {
    if (!s) return;
    if (s->kind == TS_FOR) b->stack[b->depth++] = s;
    if (s->kind == TS_BLOCK && strcmp(s->name, b->name) == 0) {
        b->block = s;
        b->nloops = b->depth;
        memcpy(b->loops, b->stack, sizeof b->stack);
    }
    if (s->kind == TS_SEQ)
        for (int i = 0; i < s->nstmts; i++) bfind_rec(b, s->stmts[i]);
    if (s->kind == TS_FOR || s->kind == TS_BLOCK || s->kind == TS_ALLOC) bfind_rec(b, s->body);
    if (s->kind == TS_FOR) b->depth--;
}

/* The variable of the k-th loop (0: outermost) around block `name`. */
static inline mt_tvar *loop_of(mt_tfunc *f, const char *name, int k) {
    bfind b = {.name = name};
    bfind_rec(&b, f->body);
    if (!b.block || k >= b.nloops) fail_msg("no loop %d around block '%s'", k, name);
    return b.loops[k]->var;
}

static inline const mt_tstmt *block_of(mt_tfunc *f, const char *name) {
    bfind b = {.name = name};
    bfind_rec(&b, f->body);
    if (!b.block) fail_msg("no block '%s'", name);
    return b.block;
}

/* f with block `name` replaced by repl (to build the refused cases). */
static inline mt_tfunc *patch(mt_tfunc *f, const char *name, mt_tstmt *repl) {
    mt_sched s;
    mt_sched_init(&s, A, f);
    mt_sched_replace(&s, block_of(f, name), repl);
    return s.func;
}

/* f, after the verifier accepted it in block form. */
static inline mt_tfunc *verified(mt_tfunc *f) {
    const char *err = mt_tir_verify(A, f, MT_TIR_BLOCK);
    if (err) fail_msg("verifier: %s\n%s", err, mt_tfunc_print(A, f));
    return f;
}

/* The printed function, verified, after checking that the text parses
 * back (tir/from_ast.c) to a function that prints the same. */
static inline const char *printed(mt_tfunc *f) {
    const char *text = mt_tfunc_print(A, verified(f));
    mt_ast *m = mt_parse(A, text, strlen(text), NULL);
    int n = 0;
    mt_tfunc **fs = mt_tir_from_module(A, m, &n);
    assert_int_equal(n, 1);
    ASSERT_TEXT(mt_tfunc_print(A, fs[0]), text);
    return text;
}

/* ---- running --------------------------------------------------------------------- */

static inline mt_tfunc *lower(mt_tfunc *f) {
    f = mt_tir_lower_blocks(A, f);
    f = mt_tir_flatten_buffers(A, f);
    f = mt_tir_simplify(A, f);
    f = mt_tir_remove_unit_loops(A, f);
    return mt_tir_simplify(A, f);
}

static inline int64_t numel(const mt_tbuffer *b) {
    int64_t n = 1, d;
    for (int k = 0; k < b->ndim; k++) {
        assert_true(mt_te_is_const_int(b->shape[k], &d));
        n *= d;
    }
    return n;
}

static inline int param(const mt_tfunc *f, const char *name) {
    for (int i = 0; i < f->nparams; i++)
        if (strcmp(f->params[i].buf->name, name) == 0) return i;
    fail_msg("no parameter '%s'", name);
    return -1;
}

/* Inputs: element e of parameter i is ((e * 7 + 3 i) % 23 - 11) / 8. */
static inline double input(int i, int64_t e) { return (double)((e * 7 + 3 * i) % 23 - 11) / 8.0; }

typedef void (*kern2)(float *, float *);
typedef void (*kern3)(float *, float *, float *);

/* Runs f (float buffer params only) on the fixed inputs; returns its
 * buffers (caller frees each and the array). */
static inline float **run(mt_tfunc *f) {
    mt_tfunc *low = lower(f);
    mt_codegen_out out;
    cg_compile(jit, A, &low, 1, 2, 2, &out);
    float **bufs = calloc((size_t)f->nparams, sizeof *bufs);
    for (int i = 0; i < f->nparams; i++) {
        int64_t n = numel(f->params[i].buf);
        bufs[i] = malloc(sizeof(float) * (size_t)n);
        for (int64_t e = 0; e < n; e++) bufs[i][e] = (float)input(i, e);
    }
    if (f->nparams == 2) ((kern2)out.fn_addrs[0])(bufs[0], bufs[1]);
    else if (f->nparams == 3) ((kern3)out.fn_addrs[0])(bufs[0], bufs[1], bufs[2]);
    else fail_msg("%d params", f->nparams);
    mt_jit_module_release(out.module);
    return bufs;
}

static inline void free_bufs(float **bufs, int n) {
    for (int i = 0; i < n; i++) free(bufs[i]);
    free(bufs);
}

/* |got - ref| <= tol * scale[e] for every element of the output. */
static inline void check(const float *got, const double *ref, const double *scale, int64_t n, double tol) {
    for (int64_t e = 0; e < n; e++)
        if (fabs(got[e] - ref[e]) > tol * scale[e])
            fail_msg("element %lld: got %.9g, want %.9g (tolerance %g)", (long long)e, got[e],
                     ref[e], tol * scale[e]);
}

/* ---- kernel 1: a fused elementwise chain and a row sum ------------------------------ */

static const char K1[] =
    "def f(a: Tensor((8, 16), \"float32\"), b: Tensor((8, 16), \"float32\")):\n"
    "    t = exp(a + b)\n"
    "    return sum(t * a, axis=-1)\n";

/* out[i] = sum_j exp(a + b) * a, in float: each product within 2 u of its
 * double value (exp within 1 ulp), the sum of 16 within 16 u of sum |.|;
 * tolerance 24 u = 24 * 2^-24 times sum_j |exp(a + b) a|. */
static inline void check_k1(mt_tfunc *f) {
    float **bufs = run(f);
    int ia = param(f, "a"), ib = param(f, "b");
    double ref[8], scale[8];
    for (int i = 0; i < 8; i++) {
        ref[i] = scale[i] = 0;
        for (int j = 0; j < 16; j++) {
            double a = input(ia, i * 16 + j), b = input(ib, i * 16 + j), t = exp(a + b) * a;
            ref[i] += t;
            scale[i] += fabs(t);
        }
    }
    check(bufs[f->nparams - 1], ref, scale, 8, 24.0 / (1 << 24));
    free_bufs(bufs, f->nparams);
}

/* ---- kernel 2: a row max and what uses it ----------------------------------------- */

static const char K2[] =
    "def f(x: Tensor((8, 16), \"float32\")):\n"
    "    m = max(x, axis=-1, keepdims=True)\n"
    "    return exp(x - m)\n";

/* exp(x - max_row): max and the subtraction exact, exp within 1 ulp:
 * tolerance 2 u relative. */
static inline void check_k2(mt_tfunc *f) {
    float **bufs = run(f);
    int ix = param(f, "x");
    double ref[128], scale[128];
    for (int i = 0; i < 8; i++) {
        double m = -INFINITY;
        for (int j = 0; j < 16; j++) m = fmax(m, (float)input(ix, i * 16 + j));
        for (int j = 0; j < 16; j++) {
            ref[i * 16 + j] = exp((float)input(ix, i * 16 + j) - m);
            scale[i * 16 + j] = ref[i * 16 + j];
        }
    }
    check(bufs[f->nparams - 1], ref, scale, 128, 2.0 / (1 << 24));
    free_bufs(bufs, f->nparams);
}

/* ---- kernel 3: a broadcast operand computed per row -------------------------------- */

static const char K3[] =
    "def f(x: Tensor((8, 16), \"float32\"), b: Tensor((16,), \"float32\")):\n"
    "    t = b * 2.0\n"
    "    return x + t\n";

static inline int setup(void **state) {
    char err[256];
    jit = mt_jit_create(err, sizeof err);
    return jit ? 0 : -1;
}

static inline int teardown(void **state) {
    mt_jit_destroy(jit);
    return 0;
}

#endif
