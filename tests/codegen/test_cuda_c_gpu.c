/*
 * test_cuda_c_gpu.c -- the CUDA C of codegen/cuda_c.c run on a GPU and
 * compared with the CPU backend on the same TIR.
 *
 * Each elementwise check is one statement list `out_k[i] = value_k` over
 * inputs in_j[i], built once and run two ways: as the body of a GPU kernel
 * (blockIdx/threadIdx loops, `i = bx * 256 + tx`, guarded by i < n) and as
 * the body of a CPU loop `for i in range(n)` compiled by the LLVM backend
 * and run here; its outputs are what the GPU must give. Inputs start with
 * special values (0, -0, +-inf, NaN, MIN / -1, values at the edges of
 * every integer range, half-way cases) and go on with random ones (small,
 * wide-ranging and random bit patterns). Two whole kernels join them, the
 * elementwise add and the block reduction of test_cuda_c.c (shared memory
 * and barriers), with C references that sum in the kernel's order.
 *
 * The program's CUDA C, with a generated main() that uploads the inputs,
 * launches each kernel and compares, is written to gpucheck.cu (the data
 * to gpucheck.bin) and run two ways:
 *
 *  - emulated: compiled as host C++ with tests/codegen/cuda_c_emulate.h
 *    (each block's threads as real threads, __syncthreads() a barrier, the
 *    host's libm), which checks the text's own semantics everywhere nvcc's
 *    headers are found;
 *  - on the GPU: compiled by nvcc with --fmad=false (the CPU never fuses a
 *    multiply-add) and run, where there is a GPU (else skipped: the
 *    program exits 77).
 *
 * Integers, bools and every correctly rounded operation must match bit for
 * bit (NaN matches any NaN); transcendental functions (expf, sinf, powf,
 * ...) may be a few units in the last place off the CPU's (the `ulps` of
 * each output).
 *
 * Skipped without nvcc (tests/codegen/cuda_c_util.h) or a C++ compiler
 * ($CXX, else c++). MT_CUDA_GPU_DIR=<dir> keeps the files there, to run the
 * program on another machine: `<dir>/gpucheck <dir>/gpucheck.bin`.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ffi.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "codegen/cg_util.h"
#include "codegen/cuda_c_util.h"
#include "support/strbuf.h"

#define MAXB 32   /* buffers of a check */
#define N 1024    /* elements of an elementwise check */

typedef struct check {
    const char *name;
    mt_tfunc *kernel;          /* what runs on the GPU */
    mt_tfunc *host;            /* its launch (NULL: none) */
    mt_tfunc *cpu;             /* the same body on the CPU (NULL: expected set here) */
    int nbuf;
    mt_tbuffer *buf[MAXB];
    bool out[MAXB];            /* written by the kernel */
    int ulps[MAXB];            /* outputs: tolerance, units in the last place */
    int64_t len[MAXB];         /* elements */
    int64_t shift[MAXB];       /* the kernel gets the buffer this many bytes past an aligned address */
    void *data[MAXB];          /* an input's values; an output's expected values */
    mt_tvar *svar[4];          /* scalar params ... */
    int64_t sval[4];           /* ... and their values */
    int nscalar;
    int64_t grid, block;
} check;

static check checks[24];
static int nchecks;

/* ---- inputs ------------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double unit(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

/* Element k of an input of dtype t (variant 0 for a first operand, 1 for
 * a divisor-like second one), into p. */
static void put_int(void *p, mt_dtype t, int64_t v) {
    switch (t) {
    case MT_BOOL: *(uint8_t *)p = v != 0; break;
    case MT_INT8: case MT_UINT8: *(uint8_t *)p = (uint8_t)v; break;
    case MT_INT32: *(int32_t *)p = (int32_t)(uint32_t)v; break;
    default: *(int64_t *)p = v; break;
    }
}

static int64_t int_value(mt_dtype t, int variant, int64_t k) {
    const int64_t lo = mt_dtype_min(t), hi = mt_dtype_max(t);
    const int64_t a[] = {0, 1, -1, 2, -2, 7, -7, lo, hi, 100, -100, 127, -128, 255, 256, -256,
                         5, -5, 9, -9, lo, hi, lo + 1, hi - 1};
    const int64_t b[] = {0, -1, 1, 3, -3, 2, -2, -1, 7, -7, -1, 0, 5, 0, 10, 3, -2, 2, -4, 4,
                         lo, hi, -1, 0};
    if (k < MT_ARRAY_LEN(a)) return variant ? b[k] : a[k];
    uint64_t r = rnd();
    if (r % 4 == 0) return (int64_t)rnd(); /* any bits (wrapped by put_int) */
    return (int64_t)(r % 601) - 300;
}

static void put_float(void *p, mt_dtype t, double v) {
    if (t == MT_FLOAT64) *(double *)p = v;
    else *(float *)p = (float)v;
}

static double float_value(mt_dtype t, int variant, int64_t k, bool *raw) {
    const double a[] = {0.0, -0.0, 1, -1, 0.5, -0.5, 1.5, 2.5, -2.5, INFINITY, -INFINITY, NAN,
                        1e-45, 3e38, -3e38, 1e10, 2147483648.0, -2147483904.0, 127.9, 128,
                        -128.5, 255.9, 256, -0.9, 9.3e18, -9.3e18, 16777217, 65504, 65520, 3e-8,
                        7.5, -7.25, 1e-310, 0.1};
    const double b[] = {1, 2, -1, 0.0, -0.0, 0.5, -2, 3, 1.5, 2, NAN, INFINITY, 1, 0.25, 7, -3,
                        1, -1, 0.1, 3, 2, -0.5, 7, 0.3, 1e-3, 4, 1, 2, -2, 1e30, -7.5, 0.0, 2, 3};
    *raw = false;
    if (k < MT_ARRAY_LEN(a)) return variant ? b[k] : a[k];
    uint64_t r = rnd() % 10;
    if (r < 5) return (unit() - 0.5) * 40;
    if (r < 8) return (rnd() & 1 ? -1 : 1) * ldexp(1 + unit(), (int)(rnd() % 61) - 30);
    *raw = true; /* random bits */
    return 0;
}

/* n values of dtype t into a new array. */
static void *input(mt_dtype t, int variant, int64_t n) {
    size_t es = mt_dtype_size(t);
    uint8_t *p = mt_arena_alloc(A, es * (size_t)n);
    static const uint16_t halves[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x3800, 0x3e00, 0x4100,
                                      0x7c00, 0xfc00, 0x7e00, 0x0001, 0x7bff, 0xfbff, 0x0400,
                                      0x03ff, 0x2e66, 0xc100, 0x4900};
    for (int64_t k = 0; k < n; k++) {
        void *e = p + (size_t)k * es;
        if (t == MT_FLOAT16) {
            uint16_t h = k < MT_ARRAY_LEN(halves) && !variant ? halves[k] : (uint16_t)rnd();
            if (variant && k < 4) h = (uint16_t[]){0x3c00, 0x0000, 0x4000, 0xbc00}[k];
            memcpy(e, &h, 2);
        } else if (mt_dtype_is_float(t)) {
            bool raw;
            double v = float_value(t, variant, k, &raw);
            if (raw) {
                uint64_t bits = rnd();
                memcpy(e, &bits, es);
            } else {
                put_float(e, t, v);
            }
        } else {
            put_int(e, t, int_value(t, variant, k));
        }
    }
    return p;
}

/* ---- building checks ------------------------------------------------------------ */

typedef struct ew {      /* an elementwise check being built */
    check *c;
    mt_tvar *i, *n;
    mt_tstmt *stores[MAXB];
    int nst, nin;
} ew;

static ew ew_begin(const char *name) {
    check *c = &checks[nchecks++];
    memset(c, 0, sizeof *c);
    c->name = name;
    ew w = {c, var("i", MT_INT64), var("n", MT_INT64), {0}, 0, 0};
    return w;
}

static int add_buf(check *c, mt_tbuffer *b, bool out, int64_t len) {
    MT_ASSERT(c->nbuf < MAXB);
    c->buf[c->nbuf] = b;
    c->out[c->nbuf] = out;
    c->len[c->nbuf] = len;
    return c->nbuf++;
}

/* A new input of dtype t: its element i. */
static mt_texpr *in(ew *w, const char *name, mt_dtype t) {
    mt_tbuffer *b = buf1(name, t, V(w->n));
    int k = add_buf(w->c, b, false, N);
    w->c->data[k] = input(t, w->nin++ % 2, N);
    return ld(b, V(w->i));
}

/* A new output of dtype t whose element i is v. */
static void out(ew *w, const char *name, mt_dtype t, mt_texpr *v, int ulps) {
    mt_tbuffer *b = buf1(name, t, V(w->n));
    int k = add_buf(w->c, b, true, N);
    w->c->ulps[k] = ulps;
    w->c->data[k] = mt_arena_alloc(A, mt_dtype_size(t) * N);
    w->stores[w->nst++] = st(b, V(w->i), v);
}

/* The GPU kernel and the CPU loop of the stores. */
static void ew_end(ew *w) {
    check *c = w->c;
    mt_tstmt *body = mt_ts_seq(A, w->stores, w->nst);
    mt_tvar *bx = var("bx", MT_INT64), *tx = var("tx", MT_INT64);
    mt_tstmt *gpu = mt_ts_let(A, w->i, bin(TE_ADD, bin(TE_MUL, V(bx), I(256)), V(tx)),
                              mt_ts_if(A, bin(TE_LT, V(w->i), V(w->n)), body, NULL));
    gpu = bound(bx, ceil256(V(w->n)), "blockIdx.x", bound(tx, I(256), "threadIdx.x", gpu));
    c->kernel = kernel(mt_arena_printf(A, "check_%s", c->name), c->buf, c->nbuf, &w->n, 1, gpu);
    c->cpu = mt_tfunc_new(A, mt_arena_printf(A, "cpu_%s", c->name));
    for (int k = 0; k < c->nbuf; k++) mt_tfunc_add_param(A, c->cpu, c->buf[k], NULL);
    c->cpu->sym_vars = mt_arena_alloc(A, sizeof(mt_tvar *));
    c->cpu->sym_vars[0] = w->n;
    c->cpu->nsym = 1;
    c->cpu->body = loop(w->i, V(w->n), body);
    c->svar[0] = w->n;
    c->sval[0] = N;
    c->nscalar = 1;
    c->grid = (N + 255) / 256;
    c->block = 256;
}

static mt_texpr *cast(mt_dtype t, mt_texpr *x) { return mt_te_cast(A, t, x); }
static void build_ints(const char *name, mt_dtype t) {
    ew w = ew_begin(name);
    mt_texpr *a = in(&w, "a", t), *b = in(&w, "b", t);
    out(&w, "floordiv", t, bin(TE_FLOORDIV, a, b), 0);
    out(&w, "floormod", t, bin(TE_FLOORMOD, a, b), 0);
    out(&w, "truncdiv", t, bin(TE_DIV, a, b), 0);
    out(&w, "min", t, bin(TE_MIN, a, b), 0);
    out(&w, "max", t, bin(TE_MAX, a, b), 0);
    out(&w, "select", t, mt_te_select(A, bin(TE_LT, a, b), bin(TE_ADD, a, b), bin(TE_MUL, a, b)), 0);
    out(&w, "neg", t, mt_te_unary(A, TE_NEG, a), 0);
    out(&w, "sub3", t, bin(TE_SUB, a, bin(TE_MUL, b, mt_te_int(A, t, 3))), 0);
    out(&w, "abs", t, call1(IN_ABS, a), 0);
    out(&w, "logic", MT_BOOL,
        bin(TE_AND, bin(TE_NE, a, b), mt_te_unary(A, TE_NOT, bin(TE_LT, a, mt_te_int(A, t, 0)))), 0);
    out(&w, "ge", MT_BOOL, bin(TE_GE, a, b), 0);
    out(&w, "to_i64", MT_INT64, bin(TE_MUL, cast(MT_INT64, a), cast(MT_INT64, b)), 0);
    out(&w, "to_i32", MT_INT32, cast(MT_INT32, bin(TE_MUL, a, mt_te_int(A, t, 65536))), 0);
    out(&w, "to_u8", MT_UINT8, cast(MT_UINT8, a), 0);
    out(&w, "to_f32", MT_FLOAT32, cast(MT_FLOAT32, a), 0);
    out(&w, "to_f16", MT_FLOAT16, cast(MT_FLOAT16, a), 0);
    out(&w, "to_f64", MT_FLOAT64, cast(MT_FLOAT64, a), 0);
    out(&w, "to_bool", MT_BOOL, cast(MT_BOOL, a), 0);
    ew_end(&w);
}

static void build_float_to_int(void) {
    ew w = ew_begin("f2i");
    mt_texpr *f = in(&w, "f", MT_FLOAT32), *g = in(&w, "g", MT_FLOAT64), *h = in(&w, "h", MT_FLOAT16);
    mt_dtype ts[] = {MT_INT8, MT_UINT8, MT_INT32, MT_INT64, MT_BOOL};
    static const char *const names[] = {"i8", "u8", "i32", "i64", "bool"};
    for (int k = 0; k < 5; k++) {
        out(&w, mt_arena_printf(A, "f_%s", names[k]), ts[k], cast(ts[k], f), 0);
        out(&w, mt_arena_printf(A, "g_%s", names[k]), ts[k], cast(ts[k], g), 0);
        out(&w, mt_arena_printf(A, "h_%s", names[k]), ts[k], cast(ts[k], h), 0);
    }
    ew_end(&w);
}

static void build_float_casts(void) {
    ew w = ew_begin("fcasts");
    mt_texpr *f = in(&w, "f", MT_FLOAT32), *g = in(&w, "g", MT_FLOAT64), *h = in(&w, "h", MT_FLOAT16);
    out(&w, "f_f16", MT_FLOAT16, cast(MT_FLOAT16, f), 0);
    out(&w, "g_f16", MT_FLOAT16, cast(MT_FLOAT16, g), 0);
    out(&w, "g_f32", MT_FLOAT32, cast(MT_FLOAT32, g), 0);
    out(&w, "h_f64", MT_FLOAT64, cast(MT_FLOAT64, h), 0);
    out(&w, "h_f32", MT_FLOAT32, bin(TE_ADD, cast(MT_FLOAT32, h), F32(1)), 0);
    out(&w, "f_f64", MT_FLOAT64, cast(MT_FLOAT64, f), 0);
    /* float16 arithmetic is float: rounded only at the store or a cast */
    out(&w, "f16_round", MT_FLOAT32,
        cast(MT_FLOAT32, cast(MT_FLOAT16, bin(TE_MUL, f, F32(3)))), 0);
    out(&w, "f16_imm", MT_FLOAT16, bin(TE_MUL, h, mt_te_float(A, MT_FLOAT16, 0.1)), 0);
    ew_end(&w);
}

static void build_float_arith(const char *name, mt_dtype t) {
    ew w = ew_begin(name);
    mt_texpr *f = in(&w, "f", t), *e = in(&w, "e", t);
    out(&w, "floordiv", t, bin(TE_FLOORDIV, f, e), 0);
    out(&w, "floormod", t, bin(TE_FLOORMOD, f, e), 0);
    out(&w, "min", t, bin(TE_MIN, f, e), 0);
    out(&w, "max", t, bin(TE_MAX, f, e), 0);
    out(&w, "div", t, bin(TE_DIV, f, e), 0);
    out(&w, "muladd", t, bin(TE_ADD, bin(TE_MUL, f, e), f), 0);
    out(&w, "ne", MT_BOOL, bin(TE_NE, f, e), 0);
    out(&w, "lt", MT_BOOL, bin(TE_LT, f, e), 0);
    out(&w, "select", t, mt_te_select(A, bin(TE_LE, f, e), f, mt_te_unary(A, TE_NEG, e)), 0);
    out(&w, "sub", t, bin(TE_SUB, f, e), 0);
    out(&w, "imm", t, bin(TE_MUL, f, mt_te_float(A, t, -0.1)), 0);
    ew_end(&w);
}

static void build_intrinsics(const char *name, mt_dtype t) {
    /* allowed distance from the CPU: CUDA's own errors plus the CPU's */
    static const int ulps32[IN_COUNT_] = {[IN_EXP] = 3, [IN_LOG] = 3, [IN_SIN] = 3, [IN_COS] = 3,
                                          [IN_TANH] = 3, [IN_SIGMOID] = 5, [IN_ERF] = 3,
                                          [IN_POW] = 8};
    static const int ulps64[IN_COUNT_] = {[IN_EXP] = 3, [IN_LOG] = 3, [IN_SIN] = 3, [IN_COS] = 3,
                                          [IN_TANH] = 3, [IN_SIGMOID] = 3, [IN_ERF] = 3,
                                          [IN_POW] = 3};
    static const int ulps16[IN_COUNT_] = {[IN_EXP] = 1, [IN_LOG] = 1, [IN_SIN] = 1, [IN_COS] = 1,
                                          [IN_TANH] = 1, [IN_SIGMOID] = 1, [IN_ERF] = 1,
                                          [IN_POW] = 1};
    ew w = ew_begin(name);
    mt_texpr *x = in(&w, "x", t), *y = in(&w, "y", t), *z = in(&w, "z", t);
    const int *ulps = t == MT_FLOAT64 ? ulps64 : t == MT_FLOAT16 ? ulps16 : ulps32;
    for (int fn = 0; fn < IN_MATH_COUNT_; fn++) {
        mt_texpr *args[3] = {x, y, z};
        out(&w, mt_intrin_name((mt_intrin)fn), t,
            mt_te_call(A, (mt_intrin)fn, args, mt_intrin_arity((mt_intrin)fn)), ulps[fn]);
    }
    ew_end(&w);
}

/* ---- vectors ---------------------------------------------------------------------- */

static mt_texpr *ramp(mt_texpr *base, int lanes) { return mt_te_ramp(A, base, I(1), lanes); }
static mt_texpr *bcast(mt_texpr *x, int lanes) { return mt_te_broadcast(A, x, lanes); }
static mt_texpr *vload(mt_texpr *scalar_load, mt_texpr *ix) { return ld(scalar_load->buf, ix); }

/* Vector code as the vectorize pass leaves it, lanes of L = 4 (float32,
 * int32) or 2 (float64, int64, float32): unit-stride loads and stores,
 * broadcasts of a scalar load and of immediates, a vector let used twice,
 * a compare and select, a cast between lanes of two dtypes. Thread q
 * (q < n / L) does elements [q * L, q * L + L). The CUDA text makes the
 * aligned accesses one float4 (int4, double2, ...) and the others element
 * by element: shift moves the buffers marked in shifted (a bit per buffer,
 * in order of creation) one element off their alignment. */
static void build_vectors(const char *name, int L, const mt_dtype *t, unsigned shifted) {
    ew w = ew_begin(name);
    check *c = w.c;
    mt_tvar *q = w.i;
    mt_texpr *ix = ramp(bin(TE_MUL, V(q), I(L)), L);
    mt_texpr *x = vload(in(&w, "x", t[0]), ix), *y = vload(in(&w, "y", t[0]), ix);
    mt_texpr *k = vload(in(&w, "k", t[1]), ix), *s0 = in(&w, "s", t[0]);
    s0->args[0] = I(3); /* s[3], the same for every lane */
    mt_tvar *tv = var("t", t[0]);
    mt_texpr *tref = mt_te_copy(A, V(tv));
    tref->lanes = L;
    out(&w, "fma_like", t[0], bin(TE_ADD, bin(TE_MUL, tref, y), bcast(mt_te_float(A, t[0], 1.5), L)), 0);
    out(&w, "sel", t[0], mt_te_select(A, bin(TE_LT, x, y), tref, bcast(s0, L)), 0);
    out(&w, "ints", t[1], bin(TE_ADD, bin(TE_MUL, k, bcast(mt_te_int(A, t[1], 3), L)),
                              mt_te_cast(A, t[1], y)), 0);
    for (int i = 0; i < w.nst; i++) w.stores[i]->idx[0] = ix;
    mt_tstmt *body = mt_ts_let(A, tv, bin(TE_SUB, x, bcast(s0, L)), mt_ts_seq(A, w.stores, w.nst));
    mt_tvar *bx = var("bx", MT_INT64), *tx = var("tx", MT_INT64);
    mt_texpr *quads = bin(TE_FLOORDIV, V(w.n), I(L));
    mt_tstmt *gpu = mt_ts_let(A, q, bin(TE_ADD, bin(TE_MUL, V(bx), I(256)), V(tx)),
                              mt_ts_if(A, bin(TE_LT, V(q), quads), body, NULL));
    gpu = bound(bx, ceil256(quads), "blockIdx.x", bound(tx, I(256), "threadIdx.x", gpu));
    c->kernel = kernel(mt_arena_printf(A, "check_%s", name), c->buf, c->nbuf, &w.n, 1, gpu);
    c->cpu = mt_tfunc_new(A, mt_arena_printf(A, "cpu_%s", name));
    for (int b = 0; b < c->nbuf; b++) {
        mt_tfunc_add_param(A, c->cpu, c->buf[b], NULL);
        if (shifted >> b & 1) c->shift[b] = (int64_t)mt_dtype_size(c->buf[b]->dtype);
    }
    c->cpu->sym_vars = mt_arena_alloc(A, sizeof(mt_tvar *));
    c->cpu->sym_vars[0] = w.n;
    c->cpu->nsym = 1;
    c->cpu->body = loop(q, quads, body);
    c->svar[0] = w.n;
    c->sval[0] = N;
    c->nscalar = 1;
    c->grid = (N / L + 255) / 256;
    c->block = 256;
}

static void build_whole_kernels(void) {
    /* the elementwise add: n = 1000, not a multiple of the block */
    check *c = &checks[nchecks++];
    memset(c, 0, sizeof *c);
    c->name = "add";
    c->kernel = add_kernel(&c->host);
    int64_t n = 1000;
    for (int k = 0; k < 3; k++) add_buf(c, c->kernel->params[k].buf, k == 2, n);
    c->data[0] = input(MT_FLOAT32, 0, n);
    c->data[1] = input(MT_FLOAT32, 1, n);
    float *want = c->data[2] = mt_arena_alloc(A, sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) want[i] = ((float *)c->data[0])[i] + ((float *)c->data[1])[i];
    c->svar[0] = c->kernel->params[3].var;
    c->sval[0] = n;
    c->nscalar = 1;
    c->grid = (n + 255) / 256;
    c->block = 256;

    /* the block reduction: 37 rows of 1000, summed in the kernel's order */
    c = &checks[nchecks++];
    memset(c, 0, sizeof *c);
    c->name = "row_sum";
    c->kernel = reduce_kernel(&c->host);
    int64_t rows = 37, m = 1000;
    add_buf(c, c->kernel->params[0].buf, false, rows * m);
    add_buf(c, c->kernel->params[1].buf, true, rows);
    float *a = c->data[0] = mt_arena_alloc(A, sizeof(float) * (size_t)(rows * m));
    for (int64_t i = 0; i < rows * m; i++) a[i] = (float)(unit() * 2 - 1);
    float *sum = c->data[1] = mt_arena_alloc(A, sizeof(float) * (size_t)rows);
    for (int64_t r = 0; r < rows; r++) {
        float red[256];
        for (int tx = 0; tx < 256; tx++) {
            float acc = 0.0f;
            for (int64_t j = tx; j < m; j += 256) acc = acc + a[r * m + j];
            red[tx] = acc;
        }
        for (int s = 128; s >= 1; s /= 2)
            for (int tx = 0; tx < s; tx++) red[tx] = red[tx] + red[tx + s];
        sum[r] = red[0];
    }
    c->svar[0] = c->kernel->params[2].var;
    c->svar[1] = c->kernel->params[3].var;
    c->sval[0] = rows;
    c->sval[1] = m;
    c->nscalar = 2;
    c->grid = rows;
    c->block = 256;
}

/* ---- the CPU's results ------------------------------------------------------------- */

static void run_cpu(mt_jit *jit, check *c) {
    mt_codegen_out o;
    mt_errframe fr;
    if (MT_TRY(&fr)) {
        cg_compile(jit, A, &c->cpu, 1, 2, 1, &o);
        mt_err_pop(&fr);
    } else {
        mt_err_pop(&fr);
        fail_msg("CPU compile of %s: %s", c->name, fr.msg);
    }
    ffi_type *types[MAXB + 1];
    void *ptrs[MAXB], *values[MAXB + 1];
    for (int k = 0; k < c->nbuf; k++) {
        types[k] = &ffi_type_pointer;
        ptrs[k] = c->data[k];
        values[k] = &ptrs[k];
    }
    int64_t n = N;
    types[c->nbuf] = &ffi_type_sint64;
    values[c->nbuf] = &n;
    ffi_cif cif;
    assert_int_equal(ffi_prep_cif(&cif, FFI_DEFAULT_ABI, (unsigned)c->nbuf + 1, &ffi_type_void,
                                  types),
                     FFI_OK);
    ffi_call(&cif, FFI_FN(o.fn_addrs[0]), NULL, values);
    mt_jit_module_release(o.module);
}

/* ---- the program that runs on the GPU ------------------------------------------------ */

static const char *mem_ctype(mt_dtype t) {
    static const char *const names[] = {[MT_BOOL] = "bool", [MT_INT8] = "signed char",
                                        [MT_UINT8] = "unsigned char", [MT_INT32] = "int",
                                        [MT_INT64] = "long long", [MT_FLOAT16] = "__half",
                                        [MT_FLOAT32] = "float", [MT_FLOAT64] = "double"};
    return names[t];
}

/* How the harness compares a dtype: 0 bytes, 1 half, 2 float, 3 double. */
static int cmp_kind(mt_dtype t) {
    return t == MT_FLOAT16 ? 1 : t == MT_FLOAT32 ? 2 : t == MT_FLOAT64 ? 3 : 0;
}

static const char harness_head[] =
    "\n// ---- the test harness (tests/codegen/test_cuda_c_gpu.c) ----\n"
    "#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n\n"
    "#ifndef MT_LAUNCH /* cuda_c_emulate.h has its own */\n"
    "#define MT_LAUNCH(k, grid, block, ...) k<<<(grid), (block)>>>(__VA_ARGS__)\n"
    "#endif\n\n"
    "static unsigned char *data;\nstatic int failures, compared;\n\n"
    "/* device memory for bytes at shift bytes past its (aligned) start */\n"
    "static void *upload(size_t off, size_t bytes, bool zero, size_t shift) {\n"
    "    void *p = nullptr;\n"
    "    if (cudaMalloc(&p, bytes + shift) != cudaSuccess) { printf(\"cudaMalloc failed\\n\"); exit(1); }\n"
    "    if (zero) cudaMemset(p, 0, bytes + shift);\n"
    "    else cudaMemcpy((char *)p + shift, data + off, bytes, cudaMemcpyHostToDevice);\n"
    "    return p;\n}\n\n"
    "/* bits as a monotonic integer: ulp distance is a difference */\n"
    "static long long ord(unsigned long long bits, int width) {\n"
    "    unsigned long long sign = 1ULL << (width - 1);\n"
    "    return bits & sign ? -(long long)(bits & ~sign) : (long long)bits;\n}\n\n"
    "static bool is_nan(unsigned long long b, int kind) {\n"
    "    if (kind == 1) return (b & 0x7c00) == 0x7c00 && (b & 0x3ff);\n"
    "    if (kind == 2) return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu);\n"
    "    return (b & 0x7ff0000000000000ULL) == 0x7ff0000000000000ULL && (b & 0xfffffffffffffULL);\n"
    "}\n\n"
    "static void compare(const char *check, const char *buf, void *dev, size_t off, long long n,\n"
    "                    int esize, int kind, int ulps) {\n"
    "    unsigned char *got = (unsigned char *)malloc(n * esize);\n"
    "    cudaMemcpy(got, dev, n * esize, cudaMemcpyDeviceToHost);\n"
    "    int bad = 0;\n"
    "    long long worst = 0;\n"
    "    for (long long i = 0; i < n; i++) {\n"
    "        unsigned long long g = 0, w = 0;\n"
    "        memcpy(&g, got + i * esize, esize);\n"
    "        memcpy(&w, data + off + i * esize, esize);\n"
    "        bool ok = g == w;\n"
    "        long long d = 0;\n"
    "        if (!ok && kind) {\n"
    "            if (is_nan(g, kind) || is_nan(w, kind)) ok = is_nan(g, kind) && is_nan(w, kind);\n"
    "            else {\n"
    "                d = ord(g, esize * 8) - ord(w, esize * 8);\n"
    "                if (d < 0) d = -d;\n"
    "                ok = d <= ulps;\n"
    "                if (d > worst && ok) worst = d;\n"
    "            }\n"
    "        }\n"
    "        if (!ok && bad++ < 4)\n"
    "            printf(\"  %s.%s[%lld]: got 0x%llx, want 0x%llx (%lld ulps)\\n\", check, buf, i, g, w,\n"
    "                   d);\n"
    "    }\n"
    "    compared++;\n"
    "    if (bad) { failures++; printf(\"FAIL %s.%s: %d of %lld differ\\n\", check, buf, bad, n); }\n"
    "    else if (worst) printf(\"  %s.%s: within %lld ulps\\n\", check, buf, worst);\n"
    "    free(got);\n}\n\n"
    "int main(int argc, char **argv) {\n"
    "    int ndev = 0;\n"
    "    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {\n"
    "        printf(\"no CUDA device\\n\");\n        return 77;\n    }\n"
    "    cudaDeviceProp prop;\n    cudaGetDeviceProperties(&prop, 0);\n"
    "    printf(\"device: %s (sm_%d%d)\\n\", prop.name, prop.major, prop.minor);\n"
    "    FILE *f = fopen(argc > 1 ? argv[1] : \"gpucheck.bin\", \"rb\");\n"
    "    if (!f) { printf(\"cannot open the data file\\n\"); return 1; }\n"
    "    fseek(f, 0, SEEK_END);\n    long size = ftell(f);\n    fseek(f, 0, SEEK_SET);\n"
    "    data = (unsigned char *)malloc(size);\n"
    "    if (fread(data, 1, size, f) != (size_t)size) { printf(\"short read\\n\"); return 1; }\n"
    "    fclose(f);\n";

static const char harness_tail[] =
    "    printf(\"%d outputs compared, %d differ\\n\", compared, failures);\n"
    "    return failures ? 1 : 0;\n}\n";

/* The launch and comparisons of check c (its data at offsets off[]). */
static void put_check(mt_sb *sb, const check *c, const char *kname, const size_t *off) {
    mt_sb_printf(sb, "    {\n        void *b[%d];\n", c->nbuf);
    for (int k = 0; k < c->nbuf; k++)
        mt_sb_printf(sb, "        b[%d] = upload(%zu, %zu, %s, %lld);\n", k, off[k],
                     (size_t)c->len[k] * mt_dtype_size(c->buf[k]->dtype), c->out[k] ? "true" : "false",
                     (long long)c->shift[k]);
    mt_sb_printf(sb, "        MT_LAUNCH(%s, %lld, %lld", kname, (long long)c->grid,
                 (long long)c->block);
    for (int p = 0; p < c->kernel->nparams; p++) {
        const mt_tparam *pr = &c->kernel->params[p];
        mt_sb_puts(sb, ", ");
        if (pr->buf) {
            int k = 0;
            while (k < c->nbuf && c->buf[k] != pr->buf) k++;
            assert_true(k < c->nbuf);
            mt_sb_printf(sb, "(%s *)((char *)b[%d] + %lld)", mem_ctype(pr->buf->dtype), k,
                         (long long)c->shift[k]);
            continue;
        }
        int s = 0;
        while (s < c->nscalar && c->svar[s] != pr->var) s++;
        assert_true(s < c->nscalar);
        mt_sb_printf(sb, "(long long)%lld", (long long)c->sval[s]);
    }
    mt_sb_puts(sb, ");\n");
    mt_sb_printf(sb, "        cudaError_t e = cudaDeviceSynchronize();\n"
                     "        if (e != cudaSuccess) { failures++; printf(\"FAIL %s: %%s\\n\", "
                     "cudaGetErrorString(e)); }\n        else {\n", c->name);
    for (int k = 0; k < c->nbuf; k++) {
        if (!c->out[k]) continue;
        mt_dtype t = c->buf[k]->dtype;
        mt_sb_printf(sb, "            compare(\"%s\", \"%s\", (char *)b[%d] + %lld, %zu, %lld, %zu, %d, %d);\n",
                     c->name, c->buf[k]->name, k, (long long)c->shift[k], off[k], (long long)c->len[k],
                     mt_dtype_size(t), cmp_kind(t), c->ulps[k]);
    }
    mt_sb_puts(sb, "        }\n");
    for (int k = 0; k < c->nbuf; k++) mt_sb_printf(sb, "        cudaFree(b[%d]);\n", k);
    mt_sb_puts(sb, "    }\n");
}

/* Writes dir/gpucheck.cu and dir/gpucheck.bin. */
static void write_program(const char *dir, const char *tu) {
    FILE *bin = fopen(mt_arena_printf(A, "%s/gpucheck.bin", dir), "wb");
    assert_non_null(bin);
    mt_sb sb;
    mt_sb_init(&sb, A);
    mt_sb_puts(&sb, tu);
    mt_sb_puts(&sb, harness_head);
    size_t pos = 0;
    for (int i = 0; i < nchecks; i++) {
        check *c = &checks[i];
        size_t off[MAXB];
        for (int k = 0; k < c->nbuf; k++) {
            size_t bytes = (size_t)c->len[k] * mt_dtype_size(c->buf[k]->dtype);
            off[k] = pos;
            assert_int_equal(fwrite(c->data[k], 1, bytes, bin), bytes);
            pos += bytes;
        }
        put_check(&sb, c, c->kernel->name, off);
    }
    mt_sb_puts(&sb, harness_tail);
    fclose(bin);
    FILE *cu = fopen(mt_arena_printf(A, "%s/gpucheck.cu", dir), "wb");
    assert_non_null(cu);
    fputs(mt_sb_str(&sb), cu);
    fclose(cu);
}

static const char *dir;      /* where the program is */
static const char *nvcc;     /* NULL: none (why in no_nvcc) */
static const char *no_nvcc;
static bool keep;            /* MT_CUDA_GPU_DIR: leave the files */

/* Builds the checks, runs them on the CPU and writes the program. */
static int setup(void **state) {
    (void)state;
    A = mt_arena_create();
    if (!A) return -1;
    rng_state = 12345;
    build_ints("i64", MT_INT64);
    build_ints("i32", MT_INT32);
    build_ints("i8", MT_INT8);
    build_ints("u8", MT_UINT8);
    build_float_to_int();
    build_float_casts();
    build_float_arith("f32", MT_FLOAT32);
    build_float_arith("f64", MT_FLOAT64);
    build_float_arith("f16", MT_FLOAT16);
    build_intrinsics("intrin_f32", MT_FLOAT32);
    build_intrinsics("intrin_f64", MT_FLOAT64);
    build_intrinsics("intrin_f16", MT_FLOAT16);
    build_whole_kernels();
    static const mt_dtype t4[] = {MT_FLOAT32, MT_INT32}, t2[] = {MT_FLOAT64, MT_INT64},
                          t2f[] = {MT_FLOAT32, MT_INT64};
    build_vectors("vec4", 4, t4, 0);
    build_vectors("vec4_unaligned", 4, t4, 0x15); /* x, k and fma_like shifted */
    build_vectors("vec2", 2, t2, 0);
    build_vectors("vec2_unaligned", 2, t2, 0x2a); /* y, s and sel shifted */
    build_vectors("vec2_f32", 2, t2f, 0x1);

    char err[256];
    mt_jit *jit = mt_jit_create(err, sizeof err);
    if (!jit) {
        printf("no JIT: %s\n", err);
        return -1;
    }
    for (int i = 0; i < nchecks; i++)
        if (checks[i].cpu) run_cpu(jit, &checks[i]);
    mt_jit_destroy(jit);

    mt_tfunc *hosts[24], *kernels[24];
    int nh = 0;
    for (int i = 0; i < nchecks; i++) {
        kernels[i] = checks[i].kernel;
        if (checks[i].host) hosts[nh++] = checks[i].host;
    }
    const char *tu = emit(hosts, nh, kernels, nchecks);

    nvcc = find_nvcc(&no_nvcc);
    const char *env = getenv("MT_CUDA_GPU_DIR");
    keep = env && *env;
    dir = keep ? env : mkdtemp(mt_arena_strdup(A, "/tmp/mt_cuda_gpu_XXXXXX"));
    if (!dir) return -1;
    mkdir(dir, 0777);
    write_program(dir, tu);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    if (!keep && dir) {
        const char *files[] = {"gpucheck", "gpucheck.cu", "gpucheck.bin", "gpucheck_emu",
                               "build.log", "run.log"};
        for (int k = 0; k < MT_ARRAY_LEN(files); k++)
            unlink(mt_arena_printf(A, "%s/%s", dir, files[k]));
        rmdir(dir);
    }
    mt_arena_destroy(A);
    return 0;
}

/* Runs cmd (a build), failing the test with its output when it fails. */
static void build(const char *cmd) {
    if (system(mt_arena_printf(A, "%s > '%s/build.log' 2>&1", cmd, dir)) != 0)
        fail_msg("%s\nfailed:\n%s", cmd, read_file(mt_arena_printf(A, "%s/build.log", dir)));
}

/* Runs dir/exe on the data: its exit status; its output printed. */
static int run_program(const char *exe) {
    int rc = system(mt_arena_printf(A, "'%s/%s' '%s/gpucheck.bin' > '%s/run.log' 2>&1", dir, exe,
                                    dir, dir));
    const char *log = read_file(mt_arena_printf(A, "%s/run.log", dir));
    printf("%s", log ? log : "");
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* The C++ compiler: $CXX, else c++ on PATH (NULL: none). */
static const char *find_cxx(void) {
    const char *env = getenv("CXX");
    if (env && *env) return env;
    return system("command -v c++ > /dev/null 2>&1") == 0 ? "c++" : NULL;
}

static void test_emulated_matches_cpu(void **state) {
    (void)state;
    const char *cxx = find_cxx();
    if (!nvcc || !cxx) { /* nvcc: its cuda_fp16.h */
        printf("[  SKIPPED ] cannot emulate CUDA: %s\n", !nvcc ? no_nvcc : "no C++ compiler");
        skip();
    }
    const char *src = getenv("MT_SOURCE_DIR");
    const char *bin = strrchr(nvcc, '/');
    build(mt_arena_printf(A, "%s -std=c++17 -O1 -ffp-contract=off -w -I'%.*s/../include' "
                             "-include '%s/tests/codegen/cuda_c_emulate.h' -x c++ "
                             "'%s/gpucheck.cu' -o '%s/gpucheck_emu' -lpthread -lm",
                          cxx, bin ? (int)(bin - nvcc) : 1, bin ? nvcc : ".", src ? src : ".",
                          dir, dir));
    if (run_program("gpucheck_emu") != 0) fail_msg("the emulated results differ from the CPU's");
}

static void test_gpu_matches_cpu(void **state) {
    (void)state;
    if (!nvcc) {
        printf("[  SKIPPED ] cannot compile CUDA: %s\n", no_nvcc);
        skip();
    }
    build(mt_arena_printf(A, "'%s' -O2 -fmad=false -gencode arch=compute_80,code=sm_80 "
                             "-gencode arch=compute_90,code=sm_90 -o '%s/gpucheck' '%s/gpucheck.cu'",
                          nvcc, dir, dir));
    int rc = run_program("gpucheck");
    if (rc == 77) {
        printf("[  SKIPPED ] no CUDA device to run on\n");
        skip();
    }
    if (rc != 0) fail_msg("the GPU's results differ from the CPU's");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_emulated_matches_cpu),
        cmocka_unit_test(test_gpu_matches_cpu),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
