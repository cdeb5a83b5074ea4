/*
 * test_ops_conv.c -- conv2d, max_pool2d, avg_pool2d, adaptive_avg_pool2d and
 * flatten through the public API, against plain C references computed in
 * double, on odd shapes (tails of every register tile of the CPU conv rule,
 * padding, strides, dilation, groups, depthwise, batch 1 and 3, a symbolic
 * batch), with bias + relu fused.
 *
 * Bounds (|got - want| <= acc * scale): conv2d accumulates K = C/groups *
 * KH * KW products in order (the CPU rule with fused multiply-adds, which
 * only removes roundings): float32 acc = (K + 2) * 6e-8, float64 (K + 2) *
 * 1.2e-16, scale = sum |x * w| over the window (+ |bias|). max_pool2d and
 * flatten are exact. avg_pool2d / adaptive_avg_pool2d sum n elements and
 * divide once: acc = (n + 2) * 6e-8 (float32), scale = the mean of |x|.
 */
#include <math.h>
#include <stdbool.h>

#include "test_util.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double rnd(void) { /* uniform in [-2, 2) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / (double)(1ull << 53) * 4.0 - 2.0;
}

static double get(const mt_tensor *t, int64_t i) {
    return mt_tensor_dtype(t) == MT_FLOAT32 ? ((const float *)mt_tensor_data(t))[i]
                                             : ((const double *)mt_tensor_data(t))[i];
}

static mt_tensor *rand_tensor(mt_dtype dt, int ndim, const int64_t *dims) {
    mt_tensor *t = mt_tensor_create(dt, ndim, dims);
    assert_non_null(t);
    for (int64_t i = 0; i < mt_tensor_numel(t); i++) {
        double v = rnd();
        if (dt == MT_FLOAT32) ((float *)mt_tensor_data(t))[i] = (float)v;
        else ((double *)mt_tensor_data(t))[i] = v;
    }
    return t;
}

static mt_tensor *run(mt_kernel *k, mt_tensor *const *args, int nargs) {
    mt_tensor *out = NULL;
    mt_diag d;
    if (test_kernel_run(k, args, nargs, &out, 1, &d) != MT_OK) fail_msg("run failed: %s", d.text);
    return out;
}

static void check(const mt_tensor *got, const double *want, const double *scale, int64_t n, double acc,
                  const char *what) {
    assert_int_equal(mt_tensor_numel(got), n);
    for (int64_t i = 0; i < n; i++) {
        double g = get(got, i), w = want[i], lim = acc * (scale ? scale[i] : 0);
        if (isnan(w) && isnan(g)) continue;
        if (!(fabs(g - w) <= lim))
            fail_msg("%s: element %lld: got %.9g, want %.9g (limit %.3g)", what, (long long)i, g, w, lim);
    }
}

static const char *dt_name(mt_dtype dt) { return dt == MT_FLOAT32 ? "float32" : "float64"; }
static double unit(mt_dtype dt) { return dt == MT_FLOAT32 ? 6e-8 : 1.2e-16; }

/* ---- conv2d ------------------------------------------------------------------ */

typedef struct conv_case {
    int64_t n, c, h, w, o, kh, kw;
    int64_t s[2], p[2], d[2], g;
    bool bias_relu;   /* relu(conv2d(x, w) + b.reshape(o, 1, 1)) */
    bool sym_batch;   /* x's batch is the symbol "n" */
    mt_dtype dt;
    const char *knobs; /* given to schedule_conv when not NULL */
} conv_case;

static int64_t out_dim(int64_t n, int64_t k, int64_t s, int64_t p, int64_t d) {
    return (n + 2 * p - d * (k - 1) - 1) / s + 1;
}

static void ref_conv(const conv_case *t, const mt_tensor *x, const mt_tensor *w, const mt_tensor *b,
                     double *want, double *scale) {
    int64_t oh = out_dim(t->h, t->kh, t->s[0], t->p[0], t->d[0]), ow = out_dim(t->w, t->kw, t->s[1], t->p[1], t->d[1]);
    int64_t cpg = t->c / t->g, opg = t->o / t->g, i = 0;
    for (int64_t n = 0; n < t->n; n++)
        for (int64_t o = 0; o < t->o; o++)
            for (int64_t y = 0; y < oh; y++)
                for (int64_t z = 0; z < ow; z++, i++) {
                    double s = 0, m = 0;
                    for (int64_t c = 0; c < cpg; c++)
                        for (int64_t ky = 0; ky < t->kh; ky++)
                            for (int64_t kx = 0; kx < t->kw; kx++) {
                                int64_t iy = y * t->s[0] + ky * t->d[0] - t->p[0];
                                int64_t ix = z * t->s[1] + kx * t->d[1] - t->p[1];
                                if (iy < 0 || iy >= t->h || ix < 0 || ix >= t->w) continue;
                                int64_t xc = o / opg * cpg + c;
                                double p = get(x, ((n * t->c + xc) * t->h + iy) * t->w + ix) *
                                           get(w, ((o * cpg + c) * t->kh + ky) * t->kw + kx);
                                s += p;
                                m += fabs(p);
                            }
                    if (b) {
                        s += get(b, o);
                        m += fabs(get(b, o));
                        s = s > 0 ? s : 0;
                    }
                    want[i] = s;
                    scale[i] = m;
                }
}

static void run_conv(const conv_case *t) {
    char src[1024], batch[16], bias[64] = "";
    const char *dt = dt_name(t->dt);
    snprintf(batch, sizeof batch, t->sym_batch ? "\"n\"" : "%lld", (long long)t->n);
    if (t->bias_relu) snprintf(bias, sizeof bias, ", b: Tensor((%lld,), \"%s\")", (long long)t->o, dt);
    int len = snprintf(src, sizeof src,
                       "def f(x: Tensor((%s, %lld, %lld, %lld), \"%s\"), w: Tensor((%lld, %lld, %lld, %lld), \"%s\")%s):\n"
                       "    y = conv2d(x, w, stride=(%lld, %lld), padding=(%lld, %lld), dilation=(%lld, %lld), groups=%lld)\n",
                       batch, (long long)t->c, (long long)t->h, (long long)t->w, dt, (long long)t->o,
                       (long long)(t->c / t->g), (long long)t->kh, (long long)t->kw, dt, bias, (long long)t->s[0],
                       (long long)t->s[1], (long long)t->p[0], (long long)t->p[1], (long long)t->d[0],
                       (long long)t->d[1], (long long)t->g);
    if (t->bias_relu)
        len += snprintf(src + len, sizeof src - (size_t)len, "    y = relu(y + reshape(b, (%lld, 1, 1)))\n",
                        (long long)t->o);
    len += snprintf(src + len, sizeof src - (size_t)len, "    return y\n");
    if (t->knobs)
        snprintf(src + len, sizeof src - (size_t)len, "@T.schedule(\"%s\")\ndef s(sch):\n    sch.apply_rule(\"schedule_conv\", %s)\n",
                 t->bias_relu ? "fused_conv2d_reshape_add_relu" : "conv2d", t->knobs);
    mt_kernel *k = compile_ok(src);
    int64_t xd[4] = {t->n, t->c, t->h, t->w}, wd[4] = {t->o, t->c / t->g, t->kh, t->kw}, bd[1] = {t->o};
    mt_tensor *args[3] = {rand_tensor(t->dt, 4, xd), rand_tensor(t->dt, 4, wd), NULL};
    if (t->bias_relu) args[2] = rand_tensor(t->dt, 1, bd);
    mt_tensor *out = run(k, args, t->bias_relu ? 3 : 2);
    int64_t oh = out_dim(t->h, t->kh, t->s[0], t->p[0], t->d[0]), ow = out_dim(t->w, t->kw, t->s[1], t->p[1], t->d[1]);
    int64_t n = t->n * t->o * oh * ow;
    assert_int_equal(mt_tensor_ndim(out), 4);
    assert_int_equal(mt_tensor_shape(out)[2], oh);
    assert_int_equal(mt_tensor_shape(out)[3], ow);
    double *want = malloc(sizeof(double) * (size_t)(n + 1)), *scale = malloc(sizeof(double) * (size_t)(n + 1));
    ref_conv(t, args[0], args[1], args[2], want, scale);
    int64_t kk = t->c / t->g * t->kh * t->kw;
    check(out, want, scale, n, (double)(kk + 2) * unit(t->dt), src);
    free(want);
    free(scale);
    for (int i = 0; i < 3; i++) mt_tensor_release(args[i]);
    mt_tensor_release(out);
    mt_kernel_release(k);
}

#define C(...) (&(conv_case){__VA_ARGS__})

/* The odd shapes: 1x3x7x9, 5 out channels, stride 2, padding 1,
 * dilation 2; batch 1 and 3. */
static void test_conv_odd(void **state) {
    (void)state;
    for (int64_t n = 1; n <= 3; n += 2) {
        run_conv(C(n, 3, 7, 9, 5, 3, 3, {2, 2}, {1, 1}, {2, 2}, 1, false, false, MT_FLOAT32));
        run_conv(C(n, 3, 7, 9, 5, 3, 3, {2, 2}, {1, 1}, {2, 2}, 1, true, false, MT_FLOAT32));
        run_conv(C(n, 3, 7, 9, 5, 3, 3, {1, 1}, {0, 0}, {1, 1}, 1, false, false, MT_FLOAT32));
    }
    run_conv(C(1, 3, 7, 9, 5, 2, 3, {1, 2}, {0, 1}, {2, 1}, 1, false, false, MT_FLOAT32));
    run_conv(C(2, 3, 7, 9, 5, 3, 3, {2, 2}, {1, 1}, {2, 2}, 1, true, false, MT_FLOAT64));
    /* strides wider than the input (one output along the axis: stride 1 to
     * the rule; a fuzz_graph finding packed rows 7777771 wide), a column
     * stride of 64 (the widest the rule packs) and of 65 (the default
     * schedule) */
    run_conv(C(1, 3, 8, 8, 5, 3, 3, {7777771, 7777771}, {0, 0}, {1, 1}, 1, false, false, MT_FLOAT32));
    run_conv(C(2, 3, 9, 300, 4, 3, 3, {2, 64}, {1, 1}, {1, 1}, 1, true, false, MT_FLOAT32));
    run_conv(C(2, 3, 8, 200, 4, 3, 3, {1, 65}, {0, 0}, {1, 1}, 1, false, false, MT_FLOAT32));
}

/* groups = channels (depthwise, and with a channel multiplier of 2), and
 * groups = 2. */
static void test_conv_groups(void **state) {
    (void)state;
    for (int64_t n = 1; n <= 3; n += 2) {
        run_conv(C(n, 4, 7, 9, 4, 3, 3, {1, 1}, {1, 1}, {1, 1}, 4, false, false, MT_FLOAT32));
        run_conv(C(n, 4, 7, 9, 8, 3, 3, {2, 2}, {1, 1}, {2, 2}, 4, true, false, MT_FLOAT32));
        run_conv(C(n, 6, 7, 9, 4, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2, false, false, MT_FLOAT32));
    }
}

/* Larger layers: every tail of the CPU rule's tiles (out channels not a
 * multiple of its rows, widths not a multiple of its vectors), 1x1
 * (pointwise) and 3x3 with padding, strided, a symbolic batch. */
static void test_conv_tiles(void **state) {
    (void)state;
    run_conv(C(1, 8, 13, 21, 12, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, true, false, MT_FLOAT32));
    run_conv(C(2, 16, 10, 12, 24, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1, true, false, MT_FLOAT32));
    run_conv(C(1, 5, 17, 35, 7, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, false, false, MT_FLOAT32));
    run_conv(C(1, 6, 19, 40, 9, 5, 5, {2, 2}, {2, 2}, {1, 1}, 1, false, false, MT_FLOAT32));
    run_conv(C(2, 7, 9, 30, 13, 1, 1, {2, 2}, {0, 0}, {1, 1}, 1, false, false, MT_FLOAT32));
    run_conv(C(3, 4, 11, 23, 10, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, true, true, MT_FLOAT32));
    run_conv(C(1, 8, 12, 20, 11, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, true, false, MT_FLOAT64));
    run_conv(C(1, 32, 14, 14, 32, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, true, false, MT_FLOAT32));
}

/* 1x1 convolutions (on the CPU the matmul rule's schedule through views
 * of the planes: rule_conv.c) at odd sizes: 1, 3, 7, 17 and 65 channels in
 * and out, planes from 1 x 1 to 17 x 65, batch 1 and 3, with bias + relu
 * and without; strided, a symbolic batch, float64, and a depth over 1024
 * (K blocks, partial sums in the output). */
static void test_conv_pointwise(void **state) {
    (void)state;
    static const int64_t ch[5] = {1, 3, 7, 17, 65};
    static const int64_t hw[4][2] = {{1, 1}, {3, 7}, {7, 17}, {17, 65}};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++) {
            const int64_t *p = hw[(i + j) % 4];
            int64_t n = (i + j) % 2 ? 3 : 1;
            run_conv(C(n, ch[i], p[0], p[1], ch[j], 1, 1, {1, 1}, {0, 0}, {1, 1}, 1, true, false, MT_FLOAT32));
            if (i == j) run_conv(C(4 - n, ch[i], p[1], p[0], ch[j], 1, 1, {1, 1}, {0, 0}, {1, 1}, 1, false, false, MT_FLOAT32));
        }
    run_conv(C(3, 17, 17, 65, 7, 1, 1, {2, 2}, {0, 0}, {1, 1}, 1, true, false, MT_FLOAT32));
    run_conv(C(1, 65, 7, 17, 33, 1, 1, {1, 2}, {0, 0}, {1, 1}, 1, true, false, MT_FLOAT32));
    run_conv(C(3, 7, 7, 17, 65, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1, true, true, MT_FLOAT32));
    run_conv(C(3, 7, 17, 65, 17, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1, true, true, MT_FLOAT32));
    run_conv(C(3, 17, 3, 7, 65, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1, true, false, MT_FLOAT64));
    run_conv(C(2, 1100, 3, 7, 40, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1, true, false, MT_FLOAT32));
    /* the matmul rule's column blocks (the plane 128 columns or more) read
     * in place with the next block prefetched a line a k step (the
     * default), copied into panels with and without the prefetch, and in
     * place without it */
    static const char *const knobs[] = {"pack_b=1", "prefetch=0", "prefetch=0, pack_b=0", "mr=4, nv=1"};
    for (int q = 0; q < 4 && !test_gpu_target(); q++) {
        run_conv(C(3, 17, 17, 65, 65, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1, q % 2 == 0, false, MT_FLOAT32, knobs[q]));
        run_conv(C(2, 7, 9, 30, 13, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1, q % 2 == 1, false, MT_FLOAT64, knobs[q]));
    }
}

/* relu(conv2d(x, w) + b + x): a residual read at the output's plane, the
 * input itself. */
static void test_conv_pointwise_residual(void **state) {
    (void)state;
    conv_case t = {3, 17, 7, 17, 17, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1, false, false, MT_FLOAT32};
    mt_kernel *k = compile_ok("def f(x: Tensor((3, 17, 7, 17), \"float32\"), w: Tensor((17, 17, 1, 1), \"float32\"),"
                              " b: Tensor((17, 1, 1), \"float32\")):\n"
                              "    return relu(conv2d(x, w) + b + x)\n");
    int64_t xd[4] = {3, 17, 7, 17}, wd[4] = {17, 17, 1, 1}, bd[3] = {17, 1, 1};
    mt_tensor *args[3] = {rand_tensor(MT_FLOAT32, 4, xd), rand_tensor(MT_FLOAT32, 4, wd),
                          rand_tensor(MT_FLOAT32, 3, bd)};
    mt_tensor *out = run(k, args, 3);
    int64_t n = 3 * 17 * 7 * 17;
    double *want = malloc(sizeof(double) * (size_t)n), *scale = malloc(sizeof(double) * (size_t)n);
    ref_conv(&t, args[0], args[1], NULL, want, scale);
    for (int64_t i = 0; i < n; i++) {
        double bx = get(args[2], i / (7 * 17) % 17), xv = get(args[0], i);
        want[i] += bx + xv;
        want[i] = want[i] > 0 ? want[i] : 0;
        scale[i] += fabs(bx) + fabs(xv);
    }
    check(out, want, scale, n, 21 * 6e-8, "relu(conv2d(x, w) + b + x)");
    free(want);
    free(scale);
    for (int i = 0; i < 3; i++) mt_tensor_release(args[i]);
    mt_tensor_release(out);
    mt_kernel_release(k);
}

/* conv2d + bias + relu is one kernel (graph-opt). */
static void test_conv_fused(void **state) {
    (void)state;
    mt_kernel *k = compile_ok("def f(x: Tensor((1, 3, 8, 8), \"float32\"), w: Tensor((4, 3, 3, 3), \"float32\"),"
                              " b: Tensor((4, 1, 1), \"float32\")):\n"
                              "    return relu(conv2d(x, w, padding=1) + b)\n");
    const char *g = mt_kernel_dump(k, MT_STAGE_GRAPH_OPT);
    assert_non_null(strstr(g, "R.call_tir(cls.fused_conv2d_add_relu, (x, w, b)"));
    assert_null(strstr(g, "cls.relu"));
    mt_kernel_release(k);
}

/* On the CPU the conv rule schedules conv2d with its epilogue (register
 * tiles of T.fma, rows packed when padded); a conv whose input is computed
 * in front of it (a prologue fused in) is left to the default schedule,
 * and both compute the same. */
static void test_conv_rule(void **state) {
    (void)state;
    skip_if_gpu_target("the CPU's scheduled TIR");
    const char *head = "def f(x: Tensor((2, 5, 9, 11), \"float32\"), w: Tensor((7, 5, 3, 3), \"float32\"),"
                       " b: Tensor((7, 1, 1), \"float32\")):\n";
    char ruled[512], plain[512];
    snprintf(ruled, sizeof ruled, "%s    return relu(conv2d(x, w, padding=1) + b)\n", head);
    snprintf(plain, sizeof plain, "%s    return relu(conv2d(x * 1.0, w, padding=1) + b)\n", head);
    mt_kernel *k1 = compile_ok(ruled), *k2 = compile_ok(plain);
    const char *s1 = mt_kernel_dump(k1, MT_STAGE_TIR_SCHED), *s2 = mt_kernel_dump(k2, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(s1, "T.fma("));
    assert_non_null(strstr(s1, "xp = T.alloc_buffer("));
    assert_null(strstr(s2, "T.fma("));
    int64_t xd[4] = {2, 5, 9, 11}, wd[4] = {7, 5, 3, 3}, bd[3] = {7, 1, 1};
    mt_tensor *args[3] = {rand_tensor(MT_FLOAT32, 4, xd), rand_tensor(MT_FLOAT32, 4, wd),
                          rand_tensor(MT_FLOAT32, 3, bd)};
    mt_tensor *o1 = run(k1, args, 3), *o2 = run(k2, args, 3);
    int64_t n = mt_tensor_numel(o1);
    for (int64_t i = 0; i < n; i++)
        if (fabs(get(o1, i) - get(o2, i)) > 1e-5 * (1 + fabs(get(o2, i))))
            fail_msg("element %lld: rule %.9g, default %.9g", (long long)i, get(o1, i), get(o2, i));
    for (int i = 0; i < 3; i++) mt_tensor_release(args[i]);
    mt_tensor_release(o1);
    mt_tensor_release(o2);
    mt_kernel_release(k1);
    mt_kernel_release(k2);
}

/* On the CPU a 1x1 conv (one group) takes the matmul rule's schedule
 * (input blocks read in place, the next one prefetched; B_pack with
 * pack_b=1 or prefetch=0) and a grouped 1x1 the conv rule's direct path
 * (xcol); both as the double reference (test_conv_pointwise). */
static void test_conv_pointwise_rule(void **state) {
    (void)state;
    skip_if_gpu_target("the CPU's scheduled TIR");
    static const char *const src[2] = {
        "def f(x: Tensor((2, 16, 10, 13), \"float32\"), w: Tensor((24, 16, 1, 1), \"float32\")):\n"
        "    return relu(conv2d(x, w))\n",
        "def f(x: Tensor((2, 16, 10, 13), \"float32\"), w: Tensor((24, 8, 1, 1), \"float32\")):\n"
        "    return relu(conv2d(x, w, groups=2))\n"};
    for (int g = 0; g < 2; g++) {
        mt_kernel *k = compile_ok(src[g]);
        const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        assert_non_null(strstr(t, "T.fma("));
        assert_null(strstr(t, "B_pack = T.alloc_buffer("));
        /* the 1x1 layer's items prefetch the next item's block of x */
        assert_true((strstr(t, "T.prefetch(x[") != NULL) == (g == 0));
        assert_true((strstr(t, "xcol = T.alloc_buffer(") != NULL) == (g == 1));
        mt_kernel_release(k);
    }
    /* the conv rule's knob prefetch: printed, and 0 turns it off */
    mt_kernel *k = compile_ok(src[0]);
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "pointwise=1, prefetch=1, pack_b=0"));
    /* spread over the tile's k loop: the prefetch inside it */
    const char *kl = strstr(t, "for kk in range(");
    if (!kl || !strstr(kl, "T.prefetch(x[")) fail_msg("no prefetch in the k loop:\n%s", t);
    mt_kernel_release(k);
    /* prefetch=0: the blocks copied (pack_b=1 by default), no prefetch;
     * pack_b=1 with the prefetch */
    static const char *const edit[2] = {"prefetch=0", "pack_b=1"};
    for (int e = 0; e < 2; e++) {
        char s2[1024];
        snprintf(s2, sizeof s2, "%s\n@T.schedule(\"fused_conv2d_relu\")\ndef s(sch):\n    sch.apply_rule(\"schedule_conv\", %s)\n",
                 src[0], edit[e]);
        k = compile_ok(s2);
        t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        if ((strstr(t, "T.prefetch(") != NULL) != (e == 1) || !strstr(t, "B_pack = T.alloc_buffer("))
            fail_msg("%s:\n%s", edit[e], t);
        mt_kernel_release(k);
    }
}

/* ---- pools ---------------------------------------------------------------------- */

typedef enum pool_kind { MAXP, AVGP, ADAPT } pool_kind;

typedef struct pool_case {
    pool_kind kind;
    int64_t n, c, h, w;
    int64_t k[2], s[2], p[2]; /* s {0, 0}: stride=None; ADAPT: k is output_size */
} pool_case;

static void ref_pool(const pool_case *t, const mt_tensor *x, int64_t oh, int64_t ow, double *want, double *scale) {
    int64_t i = 0;
    const int64_t *s = t->s[0] ? t->s : t->k;
    for (int64_t nc = 0; nc < t->n * t->c; nc++)
        for (int64_t y = 0; y < oh; y++)
            for (int64_t z = 0; z < ow; z++, i++) {
                int64_t y0, y1, z0, z1;
                if (t->kind == ADAPT) {
                    y0 = y * t->h / oh, y1 = ((y + 1) * t->h + oh - 1) / oh;
                    z0 = z * t->w / ow, z1 = ((z + 1) * t->w + ow - 1) / ow;
                } else {
                    y0 = y * s[0] - t->p[0], y1 = y0 + t->k[0];
                    z0 = z * s[1] - t->p[1], z1 = z0 + t->k[1];
                }
                double m = -INFINITY, sum = 0, mag = 0;
                for (int64_t iy = y0; iy < y1; iy++)
                    for (int64_t ix = z0; ix < z1; ix++) {
                        if (iy < 0 || iy >= t->h || ix < 0 || ix >= t->w) continue;
                        double v = get(x, (nc * t->h + iy) * t->w + ix);
                        if (v > m || isnan(v)) m = isnan(m) ? m : v;
                        sum += v;
                        mag += fabs(v);
                    }
                double cnt = (double)((y1 - y0) * (z1 - z0));
                want[i] = t->kind == MAXP ? m : sum / cnt;
                scale[i] = mag / cnt;
            }
}

static void run_pool(const pool_case *t) {
    static const char *const names[] = {"max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"};
    char src[512], args[128];
    if (t->kind == ADAPT)
        snprintf(args, sizeof args, "(%lld, %lld)", (long long)t->k[0], (long long)t->k[1]);
    else if (t->s[0])
        snprintf(args, sizeof args, "(%lld, %lld), stride=(%lld, %lld), padding=(%lld, %lld)", (long long)t->k[0],
                 (long long)t->k[1], (long long)t->s[0], (long long)t->s[1], (long long)t->p[0], (long long)t->p[1]);
    else
        snprintf(args, sizeof args, "kernel_size=(%lld, %lld), padding=(%lld, %lld)", (long long)t->k[0],
                 (long long)t->k[1], (long long)t->p[0], (long long)t->p[1]);
    snprintf(src, sizeof src, "def f(x: Tensor((%lld, %lld, %lld, %lld), \"float32\")):\n    return %s(x, %s)\n",
             (long long)t->n, (long long)t->c, (long long)t->h, (long long)t->w, names[t->kind], args);
    mt_kernel *k = compile_ok(src);
    int64_t xd[4] = {t->n, t->c, t->h, t->w};
    mt_tensor *x = rand_tensor(MT_FLOAT32, 4, xd);
    if (t->kind == MAXP) ((float *)mt_tensor_data(x))[5] = NAN; /* propagates, as NumPy's max */
    mt_tensor *out = run(k, &x, 1);
    int64_t oh = mt_tensor_shape(out)[2], ow = mt_tensor_shape(out)[3];
    if (t->kind != ADAPT) {
        const int64_t *s = t->s[0] ? t->s : t->k;
        assert_int_equal(oh, (t->h + 2 * t->p[0] - t->k[0]) / s[0] + 1);
        assert_int_equal(ow, (t->w + 2 * t->p[1] - t->k[1]) / s[1] + 1);
    }
    int64_t n = t->n * t->c * oh * ow;
    double *want = malloc(sizeof(double) * (size_t)n), *scale = malloc(sizeof(double) * (size_t)n);
    ref_pool(t, x, oh, ow, want, scale);
    int64_t win = t->kind == ADAPT ? (t->h / oh + 2) * (t->w / ow + 2) : t->k[0] * t->k[1];
    check(out, want, scale, n, t->kind == MAXP ? 0 : (double)(win + 2) * 6e-8, src);
    free(want);
    free(scale);
    mt_tensor_release(x);
    mt_tensor_release(out);
    mt_kernel_release(k);
}

#define P(...) (&(pool_case){__VA_ARGS__})

static void test_max_pool(void **state) {
    (void)state;
    run_pool(P(MAXP, 1, 3, 7, 9, {2, 2}, {0, 0}, {0, 0}));
    run_pool(P(MAXP, 3, 3, 7, 9, {3, 3}, {2, 2}, {1, 1}));
    run_pool(P(MAXP, 2, 5, 8, 11, {2, 3}, {1, 2}, {1, 0}));
    run_pool(P(MAXP, 2, 3, 9, 37, {3, 3}, {1, 1}, {0, 0}));  /* in place, vector tails */
    run_pool(P(MAXP, 1, 2, 12, 45, {3, 3}, {2, 2}, {1, 1}));
    run_pool(P(MAXP, 1, 2, 12, 45, {3, 2}, {3, 3}, {1, 1}));
}

/* Padded elements count in the average (count_include_pad=True). */
static void test_avg_pool(void **state) {
    (void)state;
    run_pool(P(AVGP, 1, 3, 7, 9, {2, 2}, {0, 0}, {0, 0}));
    run_pool(P(AVGP, 3, 3, 7, 9, {3, 3}, {2, 2}, {1, 1}));
    run_pool(P(AVGP, 2, 5, 8, 11, {2, 3}, {1, 2}, {1, 0}));
    run_pool(P(AVGP, 2, 3, 9, 37, {3, 3}, {1, 1}, {0, 0}));
    run_pool(P(AVGP, 1, 2, 12, 45, {3, 3}, {2, 2}, {1, 1}));
}

/* On the CPU the pool rule takes a pool with its elementwise epilogue
 * (rows packed when padded or strided); results as the double reference. */
static void test_pool_rule(void **state) {
    (void)state;
    static const char *const src[2] = {
        "def f(x: Tensor((2, 3, 11, 19), \"float32\")):\n    return relu(max_pool2d(x, 3, stride=2, padding=1) * 2.0 - 0.5)\n",
        "def f(x: Tensor((2, 3, 11, 19), \"float32\")):\n    return relu(avg_pool2d(x, 3, stride=2, padding=1) * 2.0 - 0.5)\n"};
    for (int kind = 0; kind < 2; kind++) {
        mt_kernel *k = compile_ok(src[kind]);
        if (!test_gpu_target()) {
            const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
            assert_non_null(strstr(t, "xp = T.alloc_buffer("));
            assert_null(strstr(t, "T.block"));
        }
        int64_t xd[4] = {2, 3, 11, 19};
        mt_tensor *x = rand_tensor(MT_FLOAT32, 4, xd);
        mt_tensor *out = run(k, &x, 1);
        pool_case t = {kind ? AVGP : MAXP, 2, 3, 11, 19, {3, 3}, {2, 2}, {1, 1}};
        int64_t n = mt_tensor_numel(out);
        double *want = malloc(sizeof(double) * (size_t)n), *scale = malloc(sizeof(double) * (size_t)n);
        ref_pool(&t, x, 6, 10, want, scale);
        for (int64_t i = 0; i < n; i++) {
            want[i] = want[i] * 2.0 - 0.5;
            want[i] = want[i] > 0 ? want[i] : 0;
        }
        check(out, want, scale, n, 11 * 6e-8 * 2 + 3e-7, src[kind]); /* the sum, *2 - 0.5 rounded */
        free(want);
        free(scale);
        mt_tensor_release(x);
        mt_tensor_release(out);
        mt_kernel_release(k);
    }
}

/* PyTorch's bins: uneven (7 -> 3, 9 -> 4), even, global, larger than the input. */
static void test_adaptive_avg_pool(void **state) {
    (void)state;
    run_pool(P(ADAPT, 1, 3, 7, 9, {3, 4}, {0, 0}, {0, 0}));
    run_pool(P(ADAPT, 3, 3, 8, 8, {2, 4}, {0, 0}, {0, 0}));
    run_pool(P(ADAPT, 2, 5, 7, 9, {1, 1}, {0, 0}, {0, 0}));
    run_pool(P(ADAPT, 1, 2, 3, 5, {4, 7}, {0, 0}, {0, 0}));
}

/* ---- flatten -------------------------------------------------------------------- */

static void run_flatten(const char *call, int ndim, const int64_t *want) {
    char src[256];
    snprintf(src, sizeof src, "def f(x: Tensor((2, 3, 4, 5), \"float32\")):\n    return %s\n", call);
    mt_kernel *k = compile_ok(src);
    int64_t xd[4] = {2, 3, 4, 5};
    mt_tensor *x = rand_tensor(MT_FLOAT32, 4, xd);
    mt_tensor *out = run(k, &x, 1);
    assert_int_equal(mt_tensor_ndim(out), ndim);
    for (int d = 0; d < ndim; d++) assert_int_equal(mt_tensor_shape(out)[d], want[d]);
    assert_memory_equal(mt_tensor_data(out), mt_tensor_data(x), sizeof(float) * 120);
    mt_tensor_release(x);
    mt_tensor_release(out);
    mt_kernel_release(k);
}

static void test_flatten(void **state) {
    (void)state;
    run_flatten("flatten(x)", 2, (const int64_t[]){2, 60});
    run_flatten("flatten(x, 0)", 1, (const int64_t[]){120});
    run_flatten("flatten(x, start_dim=1, end_dim=2)", 3, (const int64_t[]){2, 12, 5});
    run_flatten("flatten(x, -2, -1)", 3, (const int64_t[]){2, 3, 20});
    run_flatten("flatten(x, 2, 2)", 4, (const int64_t[]){2, 3, 4, 5});
    run_flatten("transpose(reshape(flatten(transpose(x, (0, 1, 3, 2)), 2), (2, 3, 5, 4)), (0, 1, 3, 2))",
                4, (const int64_t[]){2, 3, 4, 5});
}

/* A symbolic dim merged with dims of 1 stays that symbol. */
static void test_flatten_symbolic(void **state) {
    (void)state;
    mt_kernel *k = compile_ok("def f(x: Tensor((\"n\", 1, 3, 1), \"float32\")):\n    return flatten(x, 0, 1)\n");
    int64_t xd[4] = {4, 1, 3, 1};
    mt_tensor *x = rand_tensor(MT_FLOAT32, 4, xd);
    mt_tensor *out = run(k, &x, 1);
    assert_int_equal(mt_tensor_ndim(out), 3);
    assert_int_equal(mt_tensor_shape(out)[0], 4);
    assert_memory_equal(mt_tensor_data(out), mt_tensor_data(x), sizeof(float) * 12);
    mt_tensor_release(x);
    mt_tensor_release(out);
    mt_kernel_release(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_odd),       cmocka_unit_test(test_conv_groups),
        cmocka_unit_test(test_conv_tiles),     cmocka_unit_test(test_conv_fused),
        cmocka_unit_test(test_conv_rule),      cmocka_unit_test(test_conv_pointwise),
        cmocka_unit_test(test_conv_pointwise_residual), cmocka_unit_test(test_conv_pointwise_rule),
        cmocka_unit_test(test_max_pool),       cmocka_unit_test(test_avg_pool),
        cmocka_unit_test(test_adaptive_avg_pool), cmocka_unit_test(test_pool_rule),
        cmocka_unit_test(test_flatten),
        cmocka_unit_test(test_flatten_symbolic),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
