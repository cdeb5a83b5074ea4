/*
 * test_ops_shape.c -- the shape ops end to end: reshape, transpose,
 * expand_dims, squeeze, broadcast_to, concat and x[...] slicing, compiled
 * through the public API and run, against a plain C reference of each op's
 * index mapping.
 *
 * Shape ops only move elements, so every comparison is exact (bytewise per
 * element). Inputs hold distinct values (element i of argument k is a
 * function of i and k), so reading a wrong element shows. reshape,
 * expand_dims and squeeze keep the row-major order: the output's bytes are
 * the input's. The others are checked element by element through a reference
 * index map written here independently of the compiler (Python's
 * slice.indices, NumPy's broadcasting and concatenation).
 *
 * Every op runs on float32, int32, int8 and float64; shapes cover rank 0, 1
 * and 4, dims of size 1 and empty results; symbolic dims are compiled once
 * and run at several sizes; chains check that shape ops fuse with their
 * neighbours into one kernel.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "test_util.h"

typedef struct shp {
    int ndim;
    int64_t d[8];
} shp;

static const mt_dtype dtypes[] = {MT_FLOAT32, MT_INT32, MT_INT8, MT_FLOAT64};
enum { NDTYPES = sizeof dtypes / sizeof dtypes[0] };

static int64_t numel(const shp *s) {
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++) n *= s->d[i];
    return n;
}

/* "(2, 3)", "(2,)", "()": a shape as kernel source. */
static const char *src_shape(char *buf, size_t cap, const shp *s) {
    size_t n = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < s->ndim; i++) n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)s->d[i]);
    snprintf(buf + n, cap - n, s->ndim == 1 ? ",)" : ")");
    return buf;
}

static shp shape_of(const mt_tensor *t) {
    shp s = {mt_tensor_ndim(t), {0}};
    for (int i = 0; i < s.ndim; i++) s.d[i] = mt_tensor_shape(t)[i];
    return s;
}

/* A tensor whose element i is distinct from its neighbours and from the
 * elements of the other arguments (salt). */
static mt_tensor *filled(mt_dtype dt, const shp *s, int salt) {
    mt_tensor *t = mt_tensor_create(dt, s->ndim, s->d);
    assert_non_null(t);
    int64_t n = numel(s);
    void *p = mt_tensor_data(t);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = i + 1000 * salt;
        switch (dt) {
        case MT_FLOAT32: ((float *)p)[i] = (float)v + 0.5f; break;
        case MT_FLOAT64: ((double *)p)[i] = (double)v + 0.25; break;
        case MT_INT32: ((int32_t *)p)[i] = (int32_t)(v * 3 - 7); break;
        case MT_INT8: ((int8_t *)p)[i] = (int8_t)((i * 37 + salt * 11) % 127 - 63); break;
        default: fail_msg("dtype not handled in the test");
        }
    }
    return t;
}

static const void *elem(const mt_tensor *t, int64_t i) {
    return (const char *)mt_tensor_data(t) + (size_t)i * mt_dtype_size(mt_tensor_dtype(t));
}

static void unravel(const shp *s, int64_t flat, int64_t *idx) {
    for (int d = s->ndim - 1; d >= 0; d--) {
        idx[d] = flat % s->d[d];
        flat /= s->d[d];
    }
}

static int64_t ravel(const shp *s, const int64_t *idx) {
    int64_t f = 0;
    for (int d = 0; d < s->ndim; d++) f = f * s->d[d] + idx[d];
    return f;
}

static void expect_shape(const mt_tensor *t, const shp *want) {
    shp got = shape_of(t);
    char g[128], w[128];
    if (got.ndim != want->ndim || memcmp(got.d, want->d, sizeof(int64_t) * (size_t)want->ndim) != 0)
        fail_msg("result shape %s, want %s", src_shape(g, sizeof g, &got), src_shape(w, sizeof w, want));
}

static mt_tensor *run(mt_kernel *k, mt_tensor **args, int nargs) {
    mt_tensor *out = NULL;
    mt_diag d;
    if (test_kernel_run(k, args, nargs, &out, 1, &d) != MT_OK) fail_msg("run failed: %s", d.text);
    return out;
}

/* The output holds the input's elements in the same row-major order. */
static void expect_same_bytes(const mt_tensor *out, const mt_tensor *in) {
    assert_int_equal(mt_tensor_numel(out), mt_tensor_numel(in));
    size_t es = mt_dtype_size(mt_tensor_dtype(in));
    for (int64_t i = 0; i < mt_tensor_numel(in); i++)
        if (memcmp(elem(out, i), elem(in, i), es) != 0) fail_msg("element %lld differs", (long long)i);
}

/* out[o] == in[map(o)] for every output index o. */
typedef void (*index_map)(const void *ctx, const int64_t *out_idx, int64_t *in_idx);

static void expect_gather(const mt_tensor *out, const mt_tensor *in, index_map f, const void *ctx) {
    shp so = shape_of(out), si = shape_of(in);
    size_t es = mt_dtype_size(mt_tensor_dtype(in));
    for (int64_t i = 0; i < numel(&so); i++) {
        int64_t oi[8], ii[8] = {0};
        unravel(&so, i, oi);
        f(ctx, oi, ii);
        for (int d = 0; d < si.ndim; d++)
            if (ii[d] < 0 || ii[d] >= si.d[d]) fail_msg("reference index out of range (test bug)");
        if (memcmp(elem(out, i), elem(in, ravel(&si, ii)), es) != 0)
            fail_msg("element %lld differs from input element %lld", (long long)i, (long long)ravel(&si, ii));
    }
}

/* Compiles `def f(x: Tensor(in, dt)): out = <expr>; return out`, runs it on
 * a filled x and returns the result (x in *xp). */
static mt_tensor *run_unary(const char *expr, const shp *in, mt_dtype dt, mt_tensor **xp) {
    char sh[128], src[1024];
    snprintf(src, sizeof src, "def f(x: Tensor(%s, \"%s\")):\n    out = %s\n    return out\n",
             src_shape(sh, sizeof sh, in), mt_dtype_str(dt), expr);
    mt_kernel *k = compile_ok(src);
    mt_tensor *x = filled(dt, in, 1);
    mt_tensor *out = run(k, &x, 1);
    assert_int_equal(mt_tensor_dtype(out), dt);
    mt_kernel_release(k);
    *xp = x;
    return out;
}

/* Counts occurrences of needle in text. */
static int count(const char *text, const char *needle) {
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* ---- reshape, expand_dims, squeeze: the row-major order is kept ------------ */

typedef struct order_case {
    shp in;
    const char *expr;
    shp out;
} order_case;

static const order_case order_cases[] = {
    {{3, {2, 3, 4}}, "reshape(x, (6, 4))", {2, {6, 4}}},
    {{3, {2, 3, 4}}, "reshape(x, (4, -1))", {2, {4, 6}}},
    {{3, {2, 3, 4}}, "reshape(x, (3, 2, 4))", {3, {3, 2, 4}}},
    {{3, {2, 3, 4}}, "reshape(x, shape=(-1,))", {1, {24}}},
    {{1, {24}}, "reshape(x, (2, 3, 4))", {3, {2, 3, 4}}},
    {{4, {2, 3, 4, 5}}, "reshape(x, (5, 4, 3, 2))", {4, {5, 4, 3, 2}}},
    {{4, {2, 3, 4, 5}}, "reshape(x, (6, 1, 20))", {3, {6, 1, 20}}},
    {{3, {2, 1, 3}}, "reshape(x, (3, 2))", {2, {3, 2}}},
    {{4, {4, 1, 1, 6}}, "reshape(x, (2, 12))", {2, {2, 12}}},
    {{2, {5, 7}}, "reshape(x, (7, 5))", {2, {7, 5}}},
    {{1, {1}}, "reshape(x, ())", {0, {0}}},
    {{0, {0}}, "reshape(x, (1, 1, 1))", {3, {1, 1, 1}}},
    {{0, {0}}, "reshape(x, -1)", {1, {1}}},
    {{2, {1, 1}}, "reshape(x, (1,))", {1, {1}}},
    {{2, {3, 5}}, "reshape(x, (3, 5))", {2, {3, 5}}},
    {{2, {2, 3}}, "expand_dims(x, 0)", {3, {1, 2, 3}}},
    {{2, {2, 3}}, "expand_dims(x, axis=-1)", {3, {2, 3, 1}}},
    {{2, {2, 3}}, "expand_dims(x, (0, 2))", {4, {1, 2, 1, 3}}},
    {{2, {2, 3}}, "expand_dims(x, (-1, -3))", {4, {2, 1, 3, 1}}},
    {{0, {0}}, "expand_dims(x, 0)", {1, {1}}},
    {{1, {5}}, "expand_dims(x, (0, 1, 3))", {4, {1, 1, 5, 1}}},
    {{4, {1, 2, 1, 3}}, "squeeze(x)", {2, {2, 3}}},
    {{4, {1, 2, 1, 3}}, "squeeze(x, 2)", {3, {1, 2, 3}}},
    {{4, {1, 2, 1, 3}}, "squeeze(x, axis=(0, -2))", {2, {2, 3}}},
    {{1, {1}}, "squeeze(x)", {0, {0}}},
    {{2, {1, 1}}, "squeeze(x, 0)", {1, {1}}},
    {{2, {3, 4}}, "squeeze(x)", {2, {3, 4}}},
    {{0, {0}}, "squeeze(x)", {0, {0}}},
};

static void test_order_kept(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof order_cases / sizeof order_cases[0]; i++)
        for (int t = 0; t < NDTYPES; t++) {
            const order_case *c = &order_cases[i];
            mt_tensor *x, *out = run_unary(c->expr, &c->in, dtypes[t], &x);
            expect_shape(out, &c->out);
            expect_same_bytes(out, x);
            mt_tensor_release(out);
            mt_tensor_release(x);
        }
}

/* ---- transpose ---------------------------------------------------------------- */

typedef struct perm_ctx {
    int n;
    int perm[8]; /* output dim d is input dim perm[d] */
} perm_ctx;

static void perm_map(const void *ctx, const int64_t *o, int64_t *in) {
    const perm_ctx *p = ctx;
    for (int d = 0; d < p->n; d++) in[p->perm[d]] = o[d];
}

typedef struct transpose_case {
    shp in;
    const char *expr;
    perm_ctx perm;
} transpose_case;

static const transpose_case transpose_cases[] = {
    {{1, {7}}, "transpose(x)", {1, {0}}},
    {{2, {3, 5}}, "transpose(x)", {2, {1, 0}}},
    {{2, {1, 4}}, "transpose(x, (1, 0))", {2, {1, 0}}},
    {{3, {2, 3, 4}}, "transpose(x, (1, 0, 2))", {3, {1, 0, 2}}},
    {{3, {2, 3, 4}}, "transpose(x, axes=(2, 0, 1))", {3, {2, 0, 1}}},
    {{3, {2, 3, 4}}, "transpose(x, (-1, 0, -2))", {3, {2, 0, 1}}},
    {{3, {2, 3, 4}}, "transpose(x, None)", {3, {2, 1, 0}}},
    {{4, {2, 1, 3, 5}}, "transpose(x, (3, 1, 0, 2))", {4, {3, 1, 0, 2}}},
    {{4, {2, 3, 4, 5}}, "transpose(x, (0, 1, 2, 3))", {4, {0, 1, 2, 3}}},
    {{0, {0}}, "transpose(x)", {0, {0}}},
    /* at least a cache line of elements along both the read's and the
     * write's contiguous axes: the CPU rule tiles these (tails included) */
    {{2, {17, 33}}, "transpose(x)", {2, {1, 0}}},
    {{3, {9, 70, 130}}, "transpose(x, (2, 0, 1))", {3, {2, 0, 1}}},
    {{3, {5, 40, 19}}, "transpose(x, (0, 2, 1))", {3, {0, 2, 1}}},
    {{4, {2, 17, 3, 20}}, "transpose(x, (0, 3, 2, 1))", {4, {0, 3, 2, 1}}},
    /* powers of two (whole tiles, aligned rows) and odd sizes (tails), for
     * the vectorized tiles of the CPU rule */
    {{3, {4, 64, 64}}, "transpose(x, (0, 2, 1))", {3, {0, 2, 1}}},
    {{3, {32, 16, 48}}, "transpose(x, (2, 0, 1))", {3, {2, 0, 1}}},
    {{2, {64, 128}}, "transpose(x)", {2, {1, 0}}},
    {{3, {3, 33, 47}}, "transpose(x, (0, 2, 1))", {3, {0, 2, 1}}},
    {{3, {31, 5, 17}}, "transpose(x, (2, 0, 1))", {3, {2, 0, 1}}},
    /* more tiles along the read rows than a band (256 bytes of a row): bands */
    {{2, {32, 512}}, "transpose(x)", {2, {1, 0}}},
    {{3, {2, 16, 1024}}, "transpose(x, (0, 2, 1))", {3, {0, 2, 1}}},
};

static void test_transpose(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof transpose_cases / sizeof transpose_cases[0]; i++)
        for (int t = 0; t < NDTYPES; t++) {
            const transpose_case *c = &transpose_cases[i];
            shp want = {c->in.ndim, {0}};
            for (int d = 0; d < want.ndim; d++) want.d[d] = c->in.d[c->perm.perm[d]];
            mt_tensor *x, *out = run_unary(c->expr, &c->in, dtypes[t], &x);
            expect_shape(out, &want);
            expect_gather(out, x, perm_map, &c->perm);
            mt_tensor_release(out);
            mt_tensor_release(x);
        }
}

/* ---- broadcast_to ----------------------------------------------------------- */

typedef struct bcast_ctx {
    shp in, out;
} bcast_ctx;

static void bcast_map(const void *ctx, const int64_t *o, int64_t *in) {
    const bcast_ctx *b = ctx;
    for (int d = 0; d < b->in.ndim; d++)
        in[d] = b->in.d[d] == 1 ? 0 : o[b->out.ndim - b->in.ndim + d];
}

static const bcast_ctx bcast_cases[] = {
    {{1, {3}}, {2, {2, 3}}},
    {{2, {1, 3}}, {3, {4, 2, 3}}},
    {{2, {2, 1}}, {2, {2, 5}}},
    {{0, {0}}, {2, {2, 2}}},
    {{2, {1, 1}}, {3, {3, 1, 4}}},
    {{4, {2, 1, 3, 1}}, {4, {2, 4, 3, 5}}},
    {{2, {3, 4}}, {2, {3, 4}}},
};

static void test_broadcast_to(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof bcast_cases / sizeof bcast_cases[0]; i++)
        for (int t = 0; t < NDTYPES; t++) {
            const bcast_ctx *c = &bcast_cases[i];
            char sh[128], expr[256];
            snprintf(expr, sizeof expr, "broadcast_to(x, %s)", src_shape(sh, sizeof sh, &c->out));
            mt_tensor *x, *out = run_unary(expr, &c->in, dtypes[t], &x);
            expect_shape(out, &c->out);
            expect_gather(out, x, bcast_map, c);
            mt_tensor_release(out);
            mt_tensor_release(x);
        }
    mt_diag d = compile_err("def f(x: Tensor((1,), \"float32\")):\n    return broadcast_to(x, ())\n");
    assert_int_equal(d.status, MT_ERR_SHAPE);
}

/* ---- concat -------------------------------------------------------------------- */

typedef struct concat_case {
    int n;
    shp in[4];
    int axis; /* as written in the source; may be negative */
} concat_case;

static const concat_case concat_cases[] = {
    {2, {{2, {2, 3}}, {2, {4, 3}}}, 0},
    {3, {{2, {2, 3}}, {2, {2, 2}}, {2, {2, 1}}}, 1},
    {3, {{2, {2, 3}}, {2, {2, 2}}, {2, {2, 1}}}, -1},
    {1, {{3, {2, 3, 4}}}, 1},
    {2, {{1, {5}}, {1, {1}}}, 0},
    {4, {{1, {1}}, {1, {1}}, {1, {3}}, {1, {1}}}, 0},
    {2, {{4, {2, 1, 3, 2}}, {4, {2, 2, 3, 2}}}, 1},
    {2, {{3, {2, 3, 4}}, {3, {2, 3, 1}}}, 2},
    {3, {{2, {2, 3}}, {2, {0, 3}}, {2, {1, 3}}}, 0},
    /* along the last axis, wider than a vector: the CPU rule's loop is
     * partitioned at each boundary into plain copies (odd widths: tails;
     * powers of two: whole vectors) */
    {2, {{2, {3, 37}}, {2, {3, 50}}}, 1},
    {3, {{3, {2, 5, 64}}, {3, {2, 5, 32}}, {3, {2, 5, 16}}}, 2},
    {2, {{2, {9, 16}}, {2, {9, 1}}}, -1},
};

static void test_concat(void **state) {
    (void)state;
    for (size_t ci = 0; ci < sizeof concat_cases / sizeof concat_cases[0]; ci++)
        for (int t = 0; t < NDTYPES; t++) {
            const concat_case *c = &concat_cases[ci];
            mt_dtype dt = dtypes[t];
            char src[1024], sh[128];
            size_t len = (size_t)snprintf(src, sizeof src, "def f(");
            for (int k = 0; k < c->n; k++)
                len += (size_t)snprintf(src + len, sizeof src - len, "%sx%d: Tensor(%s, \"%s\")", k ? ", " : "", k,
                                        src_shape(sh, sizeof sh, &c->in[k]), mt_dtype_str(dt));
            len += (size_t)snprintf(src + len, sizeof src - len, "):\n    out = concat([");
            for (int k = 0; k < c->n; k++) len += (size_t)snprintf(src + len, sizeof src - len, "%sx%d", k ? ", " : "", k);
            snprintf(src + len, sizeof src - len, "], axis=%d)\n    return out\n", c->axis);
            mt_kernel *kern = compile_ok(src);
            mt_tensor *xs[4];
            for (int k = 0; k < c->n; k++) xs[k] = filled(dt, &c->in[k], k + 1);
            mt_tensor *out = run(kern, xs, c->n);
            int ax = c->axis < 0 ? c->axis + c->in[0].ndim : c->axis;
            shp want = c->in[0];
            want.d[ax] = 0;
            for (int k = 0; k < c->n; k++) want.d[ax] += c->in[k].d[ax];
            expect_shape(out, &want);
            size_t es = mt_dtype_size(dt);
            for (int64_t i = 0; i < numel(&want); i++) {
                int64_t idx[8];
                unravel(&want, i, idx);
                int k = 0;
                while (idx[ax] >= c->in[k].d[ax]) idx[ax] -= c->in[k++].d[ax];
                if (memcmp(elem(out, i), elem(xs[k], ravel(&c->in[k], idx)), es) != 0)
                    fail_msg("case %d, element %lld differs", (int)ci, (long long)i);
            }
            mt_tensor_release(out);
            for (int k = 0; k < c->n; k++) mt_tensor_release(xs[k]);
            mt_kernel_release(kern);
        }
}

/* What the CPU rule makes of them: a concat along the last axis is one
 * vectorized loop that the partition pass cuts into plain contiguous
 * copies, one per input, with no select left; a transpose's tile is a
 * vectorized loop that loads each output row along the input (a strided
 * T.Ramp), which transpose_tiles makes 16 row loads and 64 shuffles, and
 * stores it whole, its outer part inside the loops outside the tile (the
 * reads run in order), in bands of 256 bytes of a row when a row has more. */
static void test_injective_schedules(void **state) {
    (void)state;
    skip_if_gpu_target("checks the CPU schedule of concat and transpose");
    mt_kernel *k = compile_ok("def f(a: Tensor((4, 40), \"float32\"), b: Tensor((4, 24), \"float32\"), "
                              "c: Tensor((4, 64), \"float32\")):\n"
                              "    return concat((a, b, c), axis=1)\n");
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "sch.vectorize(i1)"));
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    if (strstr(t, "T.Select") || count(t, "T.Ramp(") != 6) fail_msg("concat not partitioned:\n%s", t);
    mt_kernel_release(k);
    k = compile_ok("def f(a: Tensor((8, 48, 64), \"float32\")):\n    return transpose(a, (0, 2, 1))\n");
    const char *sch = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
    if (!strstr(sch, "sch.reorder(i2_0, i1_0, i1_1)") || !strstr(sch, "sch.vectorize(i2_1)"))
        fail_msg("transpose schedule:\n%s", sch);
    t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    if (strstr(t, ", 64, 16)]") || count(t, "T.Shuffle(") != 64 || count(t, ", 1, 16)]") != 32)
        fail_msg("a tile not as 16 row loads, 64 shuffles and 16 stores:\n%s", t);
    mt_kernel_release(k);
    /* sizes that are not multiples of 16: the whole tiles still shuffled */
    k = compile_ok("def f(a: Tensor((1000, 257), \"float32\")):\n    return a.T\n");
    t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    if (count(t, "T.Shuffle(") != 64) fail_msg("the whole tiles of 1000 x 257 not shuffled:\n%s", t);
    mt_kernel_release(k);
    /* 32 tiles along the read rows: eight bands of 4 (256 bytes of a row each) */
    k = compile_ok("def f(a: Tensor((32, 512), \"float32\")):\n    return a.T\n");
    sch = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
    if (!strstr(sch, "i0_0_0, i0_0_1 = sch.split(i0_0, factors=[None, 4])") || !strstr(sch, "sch.reorder(i0_0_0, i1_0)"))
        fail_msg("transpose bands:\n%s", sch);
    mt_kernel_release(k);
}

/* The same tensor twice. */
static void test_concat_same_input(void **state) {
    (void)state;
    shp in = {2, {2, 3}}, want = {2, {2, 6}};
    mt_tensor *x, *out = run_unary("concat((x, x), axis=1)", &in, MT_INT32, &x);
    expect_shape(out, &want);
    for (int64_t r = 0; r < 2; r++)
        for (int64_t j = 0; j < 6; j++)
            assert_int_equal(((int32_t *)mt_tensor_data(out))[r * 6 + j], ((int32_t *)mt_tensor_data(x))[r * 3 + j % 3]);
    mt_tensor_release(out);
    mt_tensor_release(x);
}

/* ---- slicing ---------------------------------------------------------------------- */

/* Python's slice.indices, written again for the reference. */
static void py_slice(int64_t len, const int64_t *b, const int64_t *e, int64_t step, int64_t *start, int64_t *n) {
    int64_t lo, hi, s, t;
    if (step > 0) {
        lo = 0;
        hi = len;
    } else {
        lo = -1;
        hi = len - 1;
    }
    if (!b) s = step > 0 ? lo : hi;
    else s = *b < 0 ? (*b + len < lo ? lo : *b + len) : (*b > hi ? hi : *b);
    if (!e) t = step > 0 ? hi : lo;
    else t = *e < 0 ? (*e + len < lo ? lo : *e + len) : (*e > hi ? hi : *e);
    *start = s;
    if (step > 0) *n = t > s ? (t - s + step - 1) / step : 0;
    else *n = s > t ? (s - t - step - 1) / -step : 0;
}

/* One subscript entry: an integer index or a slice. */
typedef struct sub {
    bool index;
    int64_t i;            /* index */
    bool has_b, has_e;
    int64_t b, e, step;   /* slice; step 0 means omitted (1) */
} sub;

typedef struct slice_case {
    shp in;
    const char *expr;
    int n;
    sub s[4];
} slice_case;

typedef struct slice_ctx {
    shp in;
    int64_t start[8], step[8];
    bool keep[8];
} slice_ctx;

static void slice_map(const void *ctx, const int64_t *o, int64_t *in) {
    const slice_ctx *s = ctx;
    for (int d = 0, od = 0; d < s->in.ndim; d++)
        in[d] = s->keep[d] ? s->start[d] + o[od++] * s->step[d] : s->start[d];
}

#define IDX(v) {true, v, false, false, 0, 0, 0}
#define SL(hb, b, he, e, st) {false, 0, hb, he, b, e, st}
#define ALL SL(false, 0, false, 0, 0)

static const slice_case slice_cases[] = {
    {{3, {4, 3, 5}}, "x[1:3, :, ::2]", 3, {SL(true, 1, true, 3, 0), ALL, SL(false, 0, false, 0, 2)}},
    {{3, {4, 3, 5}}, "x[0]", 1, {IDX(0)}},
    {{2, {4, 3}}, "x[-1]", 1, {IDX(-1)}},
    {{2, {4, 3}}, "x[-1, 1:]", 2, {IDX(-1), SL(true, 1, false, 0, 0)}},
    {{1, {7}}, "x[::-1]", 1, {SL(false, 0, false, 0, -1)}},
    {{2, {4, 6}}, "x[:, ::-2]", 2, {ALL, SL(false, 0, false, 0, -2)}},
    {{1, {7}}, "x[5:1:-1]", 1, {SL(true, 5, true, 1, -1)}},
    {{1, {7}}, "x[-2:-9:-3]", 1, {SL(true, -2, true, -9, -3)}},
    {{1, {7}}, "x[10:]", 1, {SL(true, 10, false, 0, 0)}},
    {{1, {7}}, "x[1:-1]", 1, {SL(true, 1, true, -1, 0)}},
    {{1, {7}}, "x[-100:100]", 1, {SL(true, -100, true, 100, 0)}},
    {{2, {3, 4}}, "x[:0]", 1, {SL(false, 0, true, 0, 0)}},
    {{2, {3, 4}}, "x[1, 2]", 2, {IDX(1), IDX(2)}},
    {{4, {2, 3, 1, 4}}, "x[1, :, 0, 1::2]", 4, {IDX(1), ALL, IDX(0), SL(true, 1, false, 0, 2)}},
    {{1, {5}}, "x[3]", 1, {IDX(3)}},
};

static void test_strided_slice(void **state) {
    (void)state;
    for (size_t ci = 0; ci < sizeof slice_cases / sizeof slice_cases[0]; ci++)
        for (int t = 0; t < NDTYPES; t++) {
            const slice_case *c = &slice_cases[ci];
            slice_ctx sc = {c->in, {0}, {0}, {false}};
            shp want = {0, {0}};
            for (int d = 0; d < c->in.ndim; d++) {
                int64_t len = c->in.d[d];
                sc.keep[d] = true;
                sc.step[d] = 1;
                if (d >= c->n) {
                    want.d[want.ndim++] = len;
                    continue;
                }
                const sub *s = &c->s[d];
                if (s->index) {
                    sc.keep[d] = false;
                    sc.start[d] = s->i < 0 ? s->i + len : s->i;
                    continue;
                }
                int64_t step = s->step ? s->step : 1, n;
                py_slice(len, s->has_b ? &s->b : NULL, s->has_e ? &s->e : NULL, step, &sc.start[d], &n);
                sc.step[d] = step;
                want.d[want.ndim++] = n;
            }
            mt_tensor *x, *out = run_unary(c->expr, &c->in, dtypes[t], &x);
            expect_shape(out, &want);
            expect_gather(out, x, slice_map, &sc);
            mt_tensor_release(out);
            mt_tensor_release(x);
        }
}

/* ---- symbolic dims: one kernel, several sizes ----------------------------------- */

static void check_symbolic(const char *src, int nparams, const shp *(*shapes)(int64_t n, int k),
                           void (*check)(mt_tensor *const *xs, const mt_tensor *out, int64_t n)) {
    mt_kernel *k = compile_ok(src);
    static const int64_t sizes[] = {1, 2, 3, 7, 16};
    for (int si = 0; si < 5; si++) {
        mt_tensor *xs[4];
        for (int p = 0; p < nparams; p++) xs[p] = filled(MT_FLOAT32, shapes(sizes[si], p), p + 1);
        mt_tensor *out = run(k, xs, nparams);
        check(xs, out, sizes[si]);
        mt_tensor_release(out);
        for (int p = 0; p < nparams; p++) mt_tensor_release(xs[p]);
    }
    mt_kernel_release(k);
}

static shp sym_buf[4];

/* (n, 2, 3) -> transpose (n, 3, 2) -> reshape (n, 6) */
static const shp *sh_n23(int64_t n, int k) {
    shp s = {3, {n, 2, 3}};
    sym_buf[k] = s;
    return &sym_buf[k];
}
static void ck_transpose_reshape(mt_tensor *const *xs, const mt_tensor *out, int64_t n) {
    shp want = {2, {n, 6}};
    expect_shape(out, &want);
    const float *x = mt_tensor_data(xs[0]), *y = mt_tensor_data(out);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < 6; j++) assert_true(y[i * 6 + j] == x[i * 6 + (j % 2) * 3 + j / 2]);
}

static void ck_n6(mt_tensor *const *xs, const mt_tensor *out, int64_t n) {
    shp want = {2, {n, 6}};
    expect_shape(out, &want);
    expect_same_bytes(out, xs[0]);
}

/* (2, n) -> reshape (n, 2): one group, flat index divided by n */
static const shp *sh_2n(int64_t n, int k) {
    shp s = {2, {2, n}};
    sym_buf[k] = s;
    return &sym_buf[k];
}
static void ck_flat(mt_tensor *const *xs, const mt_tensor *out, int64_t n) {
    shp want = {2, {n, 2}};
    expect_shape(out, &want);
    expect_same_bytes(out, xs[0]);
}

/* (n, 4) -> reshape (-1, 2, 2) -> expand_dims 1 -> squeeze -> (n, 2, 2) */
static const shp *sh_n4(int64_t n, int k) {
    shp s = {2, {n, 4}};
    sym_buf[k] = s;
    return &sym_buf[k];
}
static void ck_n22(mt_tensor *const *xs, const mt_tensor *out, int64_t n) {
    shp want = {3, {n, 2, 2}};
    expect_shape(out, &want);
    expect_same_bytes(out, xs[0]);
}

/* x (1, 4), y (n,): broadcast_to(x, (n, 4)) + reshape(y, (n, 1)) */
static const shp *sh_bc(int64_t n, int k) {
    shp s0 = {2, {1, 4}}, s1 = {1, {n}};
    sym_buf[k] = k == 0 ? s0 : s1;
    return &sym_buf[k];
}
static void ck_bc(mt_tensor *const *xs, const mt_tensor *out, int64_t n) {
    shp want = {2, {n, 4}};
    expect_shape(out, &want);
    const float *x = mt_tensor_data(xs[0]), *y = mt_tensor_data(xs[1]), *o = mt_tensor_data(out);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < 4; j++) assert_true(o[i * 4 + j] == x[j] + y[i]);
}

/* a (n, 2), b (n, 3): concat axis 1, then [:, ::2]-free slicing of the full dim */
static const shp *sh_cat(int64_t n, int k) {
    shp s0 = {2, {n, 2}}, s1 = {2, {n, 3}};
    sym_buf[k] = k == 0 ? s0 : s1;
    return &sym_buf[k];
}
static void ck_cat(mt_tensor *const *xs, const mt_tensor *out, int64_t n) {
    shp want = {2, {n, 5}};
    expect_shape(out, &want);
    const float *a = mt_tensor_data(xs[0]), *b = mt_tensor_data(xs[1]), *o = mt_tensor_data(out);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < 5; j++) assert_true(o[i * 5 + j] == (j < 2 ? a[i * 2 + j] : b[i * 3 + j - 2]));
}

/* (n, 3) -> transpose -> (3, n) -> reshape (3, 1, n) */
static const shp *sh_n3(int64_t n, int k) {
    shp s = {2, {n, 3}};
    sym_buf[k] = s;
    return &sym_buf[k];
}
static void ck_tn(mt_tensor *const *xs, const mt_tensor *out, int64_t n) {
    shp want = {3, {3, 1, n}};
    expect_shape(out, &want);
    const float *x = mt_tensor_data(xs[0]), *o = mt_tensor_data(out);
    for (int64_t j = 0; j < 3; j++)
        for (int64_t i = 0; i < n; i++) assert_true(o[j * n + i] == x[i * 3 + j]);
}

static void test_symbolic(void **state) {
    (void)state;
    check_symbolic("def f(x: Tensor((\"n\", 2, 3), \"float32\")):\n"
                   "    return reshape(transpose(x, (0, 2, 1)), (\"n\", 6))\n",
                   1, sh_n23, ck_transpose_reshape);
    check_symbolic("def f(x: Tensor((\"n\", 2, 3), \"float32\")):\n    return reshape(x, (x.shape[0], -1))\n", 1,
                   sh_n23, ck_n6);
    check_symbolic("def f(x: Tensor((2, \"n\"), \"float32\")):\n    return reshape(x, (\"n\", 2))\n", 1, sh_2n, ck_flat);
    check_symbolic("def f(x: Tensor((\"n\", 4), \"float32\")):\n"
                   "    y = expand_dims(reshape(x, (-1, 2, 2)), 1)\n"
                   "    return squeeze(y, 1)\n",
                   1, sh_n4, ck_n22);
    check_symbolic("def f(x: Tensor((1, 4), \"float32\"), y: Tensor((\"n\",), \"float32\")):\n"
                   "    return broadcast_to(x, (\"n\", 4)) + reshape(y, (\"n\", 1))\n",
                   2, sh_bc, ck_bc);
    check_symbolic("def f(a: Tensor((\"n\", 2), \"float32\"), b: Tensor((\"n\", 3), \"float32\")):\n"
                   "    return concat([a, b], axis=-1)\n",
                   2, sh_cat, ck_cat);
    check_symbolic("def f(x: Tensor((\"n\", 3), \"float32\")):\n    return reshape(x.T, (3, 1, \"n\"))\n",
                   1, sh_n3, ck_tn);
}

/* ---- chains fuse into one kernel -------------------------------------------------- */

static void test_chains(void **state) {
    (void)state;
    /* transpose -> reshape -> elementwise, int32 (exact) */
    const char *src = "def f(x: Tensor((2, 3, 4), \"int32\")):\n"
                      "    y = reshape(transpose(x, (2, 0, 1)), (4, 6))\n"
                      "    out = y * 3 + 1\n"
                      "    return out\n";
    mt_kernel *k = compile_ok(src);
    assert_int_equal(count(mt_kernel_dump(k, MT_STAGE_GRAPH_OPT), "R.call_tir("), 1);
    assert_int_equal(count(mt_kernel_dump(k, MT_STAGE_TIR), "T.alloc_buffer"), 0);
    shp in = {3, {2, 3, 4}};
    mt_tensor *x = filled(MT_INT32, &in, 1);
    mt_tensor *out = run(k, &x, 1);
    const int32_t *xv = mt_tensor_data(x), *ov = mt_tensor_data(out);
    for (int64_t r = 0; r < 4; r++)
        for (int64_t c = 0; c < 6; c++) /* y[r, c] = x[c / 3, c % 3, r] */
            assert_int_equal(ov[r * 6 + c], xv[(c / 3) * 12 + (c % 3) * 4 + r] * 3 + 1);
    mt_tensor_release(out);
    mt_tensor_release(x);
    mt_kernel_release(k);

    /* elementwise producer -> reshape -> broadcast consumer, float32 (exact: *2, +x) */
    src = "def f(x: Tensor((6, 4), \"float32\"), b: Tensor((4,), \"float32\")):\n"
          "    y = expand_dims(reshape(x * 2.0, (2, 3, 4)), 0)\n"
          "    out = squeeze(y, 0) + b\n"
          "    return out\n";
    k = compile_ok(src);
    assert_int_equal(count(mt_kernel_dump(k, MT_STAGE_GRAPH_OPT), "R.call_tir("), 1);
    assert_int_equal(count(mt_kernel_dump(k, MT_STAGE_TIR), "T.alloc_buffer"), 0);
    shp sx = {2, {6, 4}}, sb = {1, {4}};
    mt_tensor *args[2] = {filled(MT_FLOAT32, &sx, 1), filled(MT_FLOAT32, &sb, 2)};
    out = run(k, args, 2);
    shp want = {3, {2, 3, 4}};
    expect_shape(out, &want);
    const float *xf = mt_tensor_data(args[0]), *bf = mt_tensor_data(args[1]), *of = mt_tensor_data(out);
    for (int64_t i = 0; i < 24; i++) assert_true(of[i] == xf[i] * 2.0f + bf[i % 4]);
    mt_tensor_release(out);
    mt_tensor_release(args[0]);
    mt_tensor_release(args[1]);
    mt_kernel_release(k);

    /* concat of fused producers, then transpose, float64 */
    src = "def f(a: Tensor((2, 3), \"float64\"), b: Tensor((2, 2), \"float64\")):\n"
          "    out = transpose(concat((a + a, b * 2.0), axis=1))\n"
          "    return out\n";
    k = compile_ok(src);
    assert_int_equal(count(mt_kernel_dump(k, MT_STAGE_GRAPH_OPT), "R.call_tir("), 1);
    assert_int_equal(count(mt_kernel_dump(k, MT_STAGE_TIR), "T.alloc_buffer"), 0);
    shp sa = {2, {2, 3}}, sbb = {2, {2, 2}};
    mt_tensor *cargs[2] = {filled(MT_FLOAT64, &sa, 1), filled(MT_FLOAT64, &sbb, 2)};
    out = run(k, cargs, 2);
    shp cw = {2, {5, 2}};
    expect_shape(out, &cw);
    const double *ad = mt_tensor_data(cargs[0]), *bd = mt_tensor_data(cargs[1]), *od = mt_tensor_data(out);
    for (int64_t j = 0; j < 5; j++)
        for (int64_t i = 0; i < 2; i++)
            assert_true(od[j * 2 + i] == (j < 3 ? ad[i * 3 + j] + ad[i * 3 + j] : bd[i * 2 + j - 3] * 2.0));
    mt_tensor_release(out);
    mt_tensor_release(cargs[0]);
    mt_tensor_release(cargs[1]);
    mt_kernel_release(k);
}

/* A literal alone as the operand of a shape op. */
static void test_literal_operand(void **state) {
    (void)state;
    mt_kernel *k = compile_ok("def f(x: Tensor((2, 3), \"int32\")):\n    return x + broadcast_to(7, (2, 3))\n");
    shp in = {2, {2, 3}};
    mt_tensor *x = filled(MT_INT32, &in, 1);
    mt_tensor *out = run(k, &x, 1);
    for (int i = 0; i < 6; i++)
        assert_int_equal(((int32_t *)mt_tensor_data(out))[i], ((int32_t *)mt_tensor_data(x))[i] + 7);
    mt_tensor_release(out);
    mt_tensor_release(x);
    mt_kernel_release(k);
}

/* Tensors with no elements. */
static void test_zero_size(void **state) {
    (void)state;
    static const order_case cases[] = {
        {{2, {0, 3}}, "reshape(x, (3, 0))", {2, {3, 0}}},
        {{2, {0, 3}}, "reshape(x, (-1, 3))", {2, {0, 3}}},
        {{2, {0, 3}}, "transpose(x)", {2, {3, 0}}},
        {{2, {0, 3}}, "concat((x, x), axis=0)", {2, {0, 3}}},
        {{2, {1, 0}}, "broadcast_to(x, (4, 0))", {2, {4, 0}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mt_tensor *x, *out = run_unary(cases[i].expr, &cases[i].in, MT_FLOAT32, &x);
        expect_shape(out, &cases[i].out);
        mt_tensor_release(out);
        mt_tensor_release(x);
    }
    mt_diag d = compile_err("def f(x: Tensor((0, 3), \"float32\")):\n    return reshape(x, (-1, 0))\n");
    assert_int_equal(d.status, MT_ERR_SHAPE);
}

/* The legalized reshape reads each group of dims on its own. */
static void test_reshape_tir(void **state) {
    (void)state;
    mt_kernel *k = compile_ok("def f(x: Tensor((2, 3, 4), \"float32\")):\n    return reshape(x, (6, 4))\n");
    const char *tir = mt_kernel_dump(k, MT_STAGE_TIR);
    if (!strstr(tir, "] = x[v0 // 3, v0 % 3, v1]"))
        fail_msg("unexpected TIR:\n%s", tir);
    mt_kernel_release(k);
}

/* Slicing with symbolic dims, and slices fused into a chain. */
static void test_slice_symbolic_and_chain(void **state) {
    (void)state;
    mt_kernel *k = compile_ok("def f(y: Tensor((\"n\", 5), \"int32\")):\n"
                              "    out = (y * 2)[:, 1:4][:, ::-1] + 1\n"
                              "    return out\n");
    assert_int_equal(count(mt_kernel_dump(k, MT_STAGE_GRAPH_OPT), "R.call_tir("), 1);
    assert_int_equal(count(mt_kernel_dump(k, MT_STAGE_TIR), "T.alloc_buffer"), 0);
    static const int64_t sizes[] = {1, 2, 5, 9};
    for (int si = 0; si < 4; si++) {
        int64_t n = sizes[si];
        shp in = {2, {n, 5}}, want = {2, {n, 3}};
        mt_tensor *y = filled(MT_INT32, &in, 1);
        mt_tensor *out = run(k, &y, 1);
        expect_shape(out, &want);
        const int32_t *yv = mt_tensor_data(y), *ov = mt_tensor_data(out);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < 3; j++) assert_int_equal(ov[i * 3 + j], yv[i * 5 + 3 - j] * 2 + 1);
        mt_tensor_release(out);
        mt_tensor_release(y);
    }
    mt_kernel_release(k);

    k = compile_ok("def f(x: Tensor((4, \"n\"), \"float32\")):\n    return reshape(x[-1], (1, \"n\"))\n");
    for (int64_t n = 1; n < 6; n += 2) {
        shp in = {2, {4, n}}, want = {2, {1, n}};
        mt_tensor *x = filled(MT_FLOAT32, &in, 1);
        mt_tensor *out = run(k, &x, 1);
        expect_shape(out, &want);
        for (int64_t j = 0; j < n; j++)
            assert_true(((float *)mt_tensor_data(out))[j] == ((float *)mt_tensor_data(x))[3 * n + j]);
        mt_tensor_release(out);
        mt_tensor_release(x);
    }
    mt_kernel_release(k);
}

/* ---- errors that are easier to state here than in the corpus ------------------- */

static void expect_error(const char *src, mt_status st, const char *msg) {
    mt_diag d = compile_err(src);
    if (d.status != st || strcmp(d.message, msg) != 0)
        fail_msg("got %s: %s\nwant %s: %s", mt_status_str(d.status), d.message, mt_status_str(st), msg);
}

static void test_errors(void **state) {
    (void)state;
    expect_error("def f(x: Tensor((\"n\", 4), \"float32\")):\n    return reshape(x, (-1,))\n", MT_ERR_SHAPE,
                 "cannot reshape 'x' of shape (n, 4) into shape (-1,): the -1 would be 4*n, which is not a single dimension");
    expect_error("def f(x: Tensor((\"n\", 4), \"float32\"), y: Tensor((\"m\",), \"float32\")):\n"
                 "    return reshape(x, (\"m\", 4))\n",
                 MT_ERR_SHAPE,
                 "cannot reshape 'x' of shape (n, 4) into shape (m, 4) (4*n elements into 4*m)");
    expect_error("def f(x: Tensor((\"n\", 4), \"float32\")):\n    return squeeze(x, 0)\n", MT_ERR_SHAPE,
                 "cannot squeeze axis 0 of 'x' (shape (n, 4)): its size is n, not 1");
    expect_error("def f(x: Tensor((2, 3), \"float32\")):\n    return expand_dims(x, (0, 1, 2, 3, 4, 5, 6))\n",
                 MT_ERR_LIMIT, "tensor rank 9 exceeds the limit of 8 dimensions");
    expect_error("def f(x: Tensor((2, 3), \"float32\")):\n    return expand_dims(x, None)\n", MT_ERR_TYPE,
                 "'expand_dims' needs an axis (an integer or a tuple), not None");
    expect_error("def f(x: Tensor((2, 3), \"float32\")):\n    return transpose(x, (0, 2))\n", MT_ERR_SHAPE,
                 "axis 2 is out of range for a tensor of rank 2 in 'transpose'");
    expect_error("def f(x: Tensor((2, 3), \"float32\")):\n    return concat(x)\n", MT_ERR_TYPE,
                 "'xs' of 'concat' must be a list of tensors");
    expect_error("def f(x: Tensor((2, 3), \"float32\")):\n    return concat([])\n", MT_ERR_TYPE,
                 "'concat' needs at least one tensor");
    expect_error("def f(x: Tensor((2, 3), \"float32\")):\n    return concat((x, x), axis=2)\n", MT_ERR_SHAPE,
                 "axis 2 is out of range for a tensor of rank 2 in 'concat'");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_kept),     cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_broadcast_to),   cmocka_unit_test(test_concat),
        cmocka_unit_test(test_concat_same_input), cmocka_unit_test(test_injective_schedules), cmocka_unit_test(test_strided_slice),
        cmocka_unit_test(test_slice_symbolic_and_chain),
        cmocka_unit_test(test_symbolic),       cmocka_unit_test(test_chains),
        cmocka_unit_test(test_literal_operand), cmocka_unit_test(test_zero_size),
        cmocka_unit_test(test_reshape_tir),    cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
