/*
 * test_gpu_emulation.c -- target cuda run under emulation (compile option
 * emulate: the GPU-scheduled kernels run on the CPU under the CUDA execution
 * model, arguments and results on the context's emulated GPU, cuda:0),
 * against the same programs compiled for the CPU.
 *
 *  (a) random fused programs: a seeded generator writes small programs that
 *      mix elementwise ops, row and column broadcasts, reductions over axis
 *      -1 and axis 0, softmax, layer_norm, matmul and transposes over a
 *      symbolic dim n; each is compiled for the CPU and for cuda + emulate
 *      and run at n = 1, 7, 1000, 4097 on the same inputs, and the results
 *      compared (tolerances at check_output);
 *  (b) `with device(...)` programs under cuda + emulate: numbers, and that
 *      each result lives where the program computes it;
 *  (c) arguments and result slots on the wrong device are refused, naming
 *      both devices;
 *  (d) the scheduled TIR of target cuda (`mtc --emit tir-sched`): the GPU
 *      rules, the thread bindings, one launch for an elementwise chain.
 */
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "test_util.h"

static const mt_device CPU = {MT_DEVICE_CPU, 0}, GPU = {MT_DEVICE_CUDA, 0};


static bool dev_is(mt_device d, mt_device want) { return d.type == want.type && d.id == want.id; }

static mt_kernel *compile_for(const char *src, bool gpu, mt_diag *d) {
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.filename = "gen.py";
    if (gpu) {
        o.target = MT_TARGET_CUDA;
        o.emulate = 1;
    }
    return mt_jit_compile(test_ctx, src, &o, d);
}

static mt_kernel *compile_gpu(const char *src) {
    mt_diag d;
    mt_kernel *k = compile_for(src, true, &d);
    if (!k) fail_msg("cuda + emulate compile failed:\n%s\nsource:\n%s", d.text, src);
    return k;
}

/* A host copy of t (any device k's runs know). */
static mt_tensor *to_host(mt_kernel *k, const mt_tensor *t) {
    mt_tensor *h = NULL;
    mt_diag d;
    if (mt_kernel_tensor_to(k, t, CPU, &h, &d) != MT_OK) fail_msg("to host: %s", d.text);
    return h;
}

static mt_tensor *to_dev(mt_kernel *k, const mt_tensor *t, mt_device where) {
    mt_tensor *h = NULL;
    mt_diag d;
    if (mt_kernel_tensor_to(k, t, where, &h, &d) != MT_OK) fail_msg("to device: %s", d.text);
    return h;
}

/* ---- data ----------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnext(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double runif(double lo, double hi) { return lo + (double)(rnext() >> 11) / (double)(1ull << 53) * (hi - lo); }
static int rint_below(int n) { return (int)(rnext() % (uint64_t)n); }

static mt_tensor *rand_f32(int ndim, const int64_t *dims, double lo, double hi) {
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, ndim, dims);
    assert_non_null(t);
    float *p = mt_tensor_data(t);
    for (int64_t i = 0; i < mt_tensor_numel(t); i++) p[i] = (float)runif(lo, hi);
    return t;
}

static double fget(const mt_tensor *t, int64_t i) { return ((const float *)mt_tensor_data(t))[i]; }

/* ---- (a) random fused programs ------------------------------------------------
 *
 * Two layouts of the values (every generated value is a full (A, B) tensor):
 *   ROWS  A = n (symbolic), B = D (constant): softmax / layer_norm / the
 *         axis -1 reductions work on rows of D, the axis 0 ones on columns
 *         of n, matmul(t, w) on (D, D) weights;
 *   COLS  A = R (constant), B = n: the rows are n long (the GPU's block per
 *         row loops over them), the axis 0 reductions are over R;
 *         matmul goes through transposes: transpose(matmul(transpose(t), w)).
 * Parameters: x, y (A, B) in [-2, 2); r (B,) a row to broadcast; c (A, 1)
 * a column; g (B,) a layer_norm scale in [0.5, 1.5); w (W, W) in
 * [-0.5, 0.5) with W the constant dim.
 *
 * Each statement applies one op to earlier values: its first operand is
 * mostly the value just made (chains, which fuse), the other a recent one;
 * half the ops are elementwise, a third the row and column work
 * (reductions, softmax, layer_norm), the rest matmul and transposes. The generator tracks a bound on each value's
 * magnitude and squashes a value with tanh before it could overflow exp or
 * grow without bound, so that every result is finite and O(1)..O(100).
 * Results: the last value, a value from the middle (a fused group with two
 * outputs), and a reduction of the last value (sum / mean / max / min over
 * either axis, keepdims or not, or a matmul of it with its transpose). */

enum { ROWS, COLS };

typedef enum gop {
    G_ADD, G_SUB, G_MUL, G_DIV, G_EXP, G_TANH, G_SIGMOID, G_RELU, G_WHERE_GT, G_WHERE_NEG,
    G_ROW_ADD, G_ROW_MUL, G_COL_MUL, G_COL_SUB, G_ROW_MEAN, G_ROW_MAX, G_COL_MEAN, G_COL_MAX,
    G_SOFTMAX, G_SOFTMAX0, G_LAYER_NORM, G_MATMUL, G_T_SOFTMAX, G_T_COL,
    G_COUNT_
} gop;

typedef enum gred { R_SUM_LAST, R_SUM_0, R_MEAN_0, R_MAX_LAST, R_MIN_0, R_MEAN_LAST_KEEP, R_GRAM, R_COUNT_ } gred;

typedef struct prog {
    int layout;
    int64_t cdim;       /* D (ROWS) or R (COLS) */
    int nvals;          /* x, y, t0 .. */
    double mag[32];     /* a bound on |value| */
    int mid;            /* the middle value returned */
    gred red;
    char src[8192];
    size_t len;
} prog;

static void emit(prog *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(prog *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    p->len += (size_t)vsnprintf(p->src + p->len, sizeof p->src - p->len, fmt, ap);
    va_end(ap);
    assert_true(p->len < sizeof p->src);
}

static const char *vname(int v, char *buf) {
    if (v < 2) sprintf(buf, "%s", v == 0 ? "x" : "y");
    else sprintf(buf, "t%d", v - 2);
    return buf;
}

/* An operand: one of the last three values mostly, any value sometimes. */
static int pick(const prog *p) {
    int n = p->nvals;
    if (n > 3 && rint_below(4) != 0) return n - 1 - rint_below(3);
    return rint_below(n);
}

static void gen_program(prog *p, int layout, int64_t cdim, int nsteps) {
    memset(p, 0, sizeof *p);
    p->layout = layout;
    p->cdim = cdim;
    char A[32], B[32];
    if (layout == ROWS) snprintf(A, sizeof A, "\"n\""), snprintf(B, sizeof B, "%lld", (long long)cdim);
    else snprintf(A, sizeof A, "%lld", (long long)cdim), snprintf(B, sizeof B, "\"n\"");
    emit(p,
         "def f(x: Tensor((%s, %s), \"float32\"), y: Tensor((%s, %s), \"float32\"), r: Tensor((%s,), \"float32\"),\n"
         "      c: Tensor((%s, 1), \"float32\"), g: Tensor((%s,), \"float32\"), w: Tensor((%lld, %lld), \"float32\")):\n",
         A, B, A, B, B, A, B, (long long)cdim, (long long)cdim);
    p->nvals = 2;
    p->mag[0] = p->mag[1] = 2;
    for (int s = 0; s < nsteps; s++) {
        /* a chain, mostly: the first operand is the last value */
        int a = rint_below(4) ? p->nvals - 1 : pick(p), b = pick(p);
        double ma = p->mag[a], mb = p->mag[b], m;
        char an[16], bn[16], e[512];
        vname(a, an);
        vname(b, bn);
        /* half elementwise, a third the row and column work, the rest
         * matmul and transposes */
        int dice = rint_below(12);
        gop op = dice < 6 ? (gop)rint_below(G_ROW_MEAN)
               : dice < 10 ? (gop)(G_ROW_MEAN + rint_below(G_MATMUL - G_ROW_MEAN))
                           : (gop)(G_MATMUL + rint_below(G_COUNT_ - G_MATMUL));
        /* the products and exp only of values small enough */
        if ((op == G_MUL && ma * mb > 60) || (op == G_EXP && ma > 3) || (op == G_MATMUL && ma * (double)cdim * 0.5 > 60) ||
            (op == G_ROW_MUL && ma > 30) || (op == G_COL_MUL && ma > 30))
            op = G_TANH;
        switch (op) {
        case G_ADD: snprintf(e, sizeof e, "%s + %s", an, bn); m = ma + mb; break;
        case G_SUB: snprintf(e, sizeof e, "%s - %s", an, bn); m = ma + mb; break;
        case G_MUL: snprintf(e, sizeof e, "%s * %s", an, bn); m = ma * mb; break;
        case G_DIV: snprintf(e, sizeof e, "%s / (2.0 + tanh(%s))", an, bn); m = ma; break;
        case G_EXP: snprintf(e, sizeof e, "exp(%s)", an); m = exp(ma); break;
        case G_TANH: snprintf(e, sizeof e, "tanh(%s)", an); m = 1; break;
        case G_SIGMOID: snprintf(e, sizeof e, "sigmoid(%s)", an); m = 1; break;
        case G_RELU: snprintf(e, sizeof e, "relu(%s)", an); m = ma; break;
        case G_WHERE_GT: snprintf(e, sizeof e, "where(%s > %s, %s, %s * 0.5)", an, bn, an, bn); m = fmax(ma, mb); break;
        case G_WHERE_NEG: snprintf(e, sizeof e, "where(%s < 0.0, %s, %s)", an, bn, an); m = fmax(ma, mb); break;
        case G_ROW_ADD: snprintf(e, sizeof e, "%s + r", an); m = ma + 2; break;
        case G_ROW_MUL: snprintf(e, sizeof e, "%s * r", an); m = ma * 2; break;
        case G_COL_MUL: snprintf(e, sizeof e, "c * %s", an); m = ma * 2; break;
        case G_COL_SUB: snprintf(e, sizeof e, "%s - c", an); m = ma + 2; break;
        case G_ROW_MEAN: snprintf(e, sizeof e, "%s - mean(%s, axis=-1, keepdims=True)", an, bn); m = ma + mb; break;
        case G_ROW_MAX: snprintf(e, sizeof e, "%s - max(%s, axis=-1, keepdims=True)", an, bn); m = ma + mb; break;
        case G_COL_MEAN: snprintf(e, sizeof e, "%s * 0.5 + mean(%s, axis=0, keepdims=True)", an, bn); m = ma * 0.5 + mb; break;
        case G_COL_MAX: snprintf(e, sizeof e, "max(%s, axis=0, keepdims=True) - %s", an, bn); m = ma + mb; break;
        case G_SOFTMAX: snprintf(e, sizeof e, "softmax(%s)", an); m = 1; break;
        case G_SOFTMAX0: snprintf(e, sizeof e, "softmax(%s, axis=0)", an); m = 1; break;
        /* Normalizing divides by the row's standard deviation: a row of
         * (nearly) equal values (softmax over an axis of 1, a saturated
         * sigmoid, t - max(t) of a tiny spread) amplifies rounding noise
         * up to 1 / sqrt(eps) = 316 times, beyond any float32 tolerance, on
         * the CPU and on the GPU alike, differently. Adding x (uniform, a
         * standard deviation of 1.15 in every row longer than one) keeps
         * the input's spread. |normalized| <= sqrt(row length); g < 1.5,
         * r < 2: a heuristic bound of 8. */
        case G_LAYER_NORM: snprintf(e, sizeof e, "layer_norm(%s * 0.5 + x, g, r)", an); m = 8; break;
        case G_MATMUL:
            if (p->layout == ROWS) snprintf(e, sizeof e, "matmul(%s, w)", an);
            else snprintf(e, sizeof e, "transpose(matmul(transpose(%s), w))", an);
            m = ma * (double)cdim * 0.5;
            break;
        case G_T_SOFTMAX: snprintf(e, sizeof e, "transpose(softmax(transpose(%s)))", an); m = 1; break;
        case G_T_COL: snprintf(e, sizeof e, "transpose(transpose(%s) * transpose(c))", an); m = ma * 2; break;
        default: fail_msg("op %d", op); return;
        }
        emit(p, "    t%d = %s\n", p->nvals - 2, e);
        p->mag[p->nvals++] = m;
        if (m > 60) { /* squash */
            emit(p, "    t%d = tanh(t%d * %.6g)\n", p->nvals - 2, p->nvals - 3, 2.0 / m);
            p->mag[p->nvals++] = 1;
        }
    }
    char ln[16];
    vname(p->nvals - 1, ln);
    p->mid = 2 + rint_below(p->nvals - 2);
    p->red = (gred)rint_below(R_COUNT_);
    static const char *const red_fmt[] = {"sum(%s, axis=-1)", "sum(%s, axis=0)", "mean(%s, axis=0)",
                                          "max(%s, axis=-1)", "min(%s, axis=0)",
                                          "mean(%s, axis=-1, keepdims=True)", NULL};
    char red[64];
    if (p->red == R_GRAM)
        snprintf(red, sizeof red, p->layout == ROWS ? "matmul(transpose(%s), %s)" : "matmul(%s, transpose(%s))", ln, ln);
    else
        snprintf(red, sizeof red, red_fmt[p->red], ln);
    char mn[16];
    emit(p, "    red = %s\n    return %s, %s, red\n", red, ln, vname(p->mid, mn));
}

/* The inputs of one run at size n. */
static void gen_inputs(const prog *p, int64_t n, mt_tensor **args) {
    int64_t A = p->layout == ROWS ? n : p->cdim, B = p->layout == ROWS ? p->cdim : n;
    int64_t full[2] = {A, B}, row[1] = {B}, col[2] = {A, 1}, w[2] = {p->cdim, p->cdim};
    args[0] = rand_f32(2, full, -2, 2);
    args[1] = rand_f32(2, full, -2, 2);
    args[2] = rand_f32(1, row, -2, 2);
    args[3] = rand_f32(2, col, -2, 2);
    args[4] = rand_f32(1, row, 0.5, 1.5);
    args[5] = rand_f32(2, w, -0.5, 0.5);
}

/* Tolerances. The CPU result is the reference; float32 throughout.
 *  - elementwise results (the last and middle values): relative 1e-5 with
 *    an absolute floor of 1e-5 (|got - cpu| <= 1e-5 * max(1, |cpu|)): each
 *    op rounds once on both, and the reductions inside (mean, max, softmax's
 *    sum, layer_norm's moments) differ only in their order of summation,
 *    an error well under 1e-6 for the O(1) values the generator keeps;
 *  - the reduction of the last value over L elements (sum, mean, the gram
 *    matrix t^T t): additionally (L + 1) * 1.2e-7 * S + 1e-5 * P, where S
 *    is the sum of the magnitudes of its terms (the CPU's serial sum errs by
 *    up to about L * 6e-8 * S, Higham, the GPU's tree by less) and P the
 *    sum of what the terms may differ by, from the elementwise part, over
 *    1e-5: max(1, |t_j|) for a sum, max(1, |t_r|) |t_q| + |t_r| max(1, |t_q|)
 *    for a gram entry (a row of equal values minus its mean is ~1e-8 on
 *    the CPU and exactly 0 on the GPU, element by element within the floor,
 *    and a sum of 1000 of them differs by 1e-5); a mean divides both by L;
 *  - max / min: exact reductions of values that agree within 1e-5. */
static int check_output(const prog *p, int64_t n, int out, const mt_tensor *cpu, const mt_tensor *gpu,
                        const mt_tensor *last) {
    int nd = mt_tensor_ndim(cpu);
    if (nd != mt_tensor_ndim(gpu) || mt_tensor_numel(cpu) != mt_tensor_numel(gpu)) {
        print_error("n=%lld result %d: shapes differ\n", (long long)n, out);
        return 1;
    }
    for (int d = 0; d < nd; d++)
        if (mt_tensor_shape(cpu)[d] != mt_tensor_shape(gpu)[d]) {
            print_error("n=%lld result %d: dim %d differs\n", (long long)n, out, d);
            return 1;
        }
    int64_t cnt = mt_tensor_numel(cpu);
    int64_t A = mt_tensor_shape(last)[0], B = mt_tensor_shape(last)[1];
    for (int64_t i = 0; i < cnt; i++) {
        double c = fget(cpu, i), g = fget(gpu, i), tol = 1e-5 * fmax(1, fabs(c));
        if (out == 2 && p->red != R_MAX_LAST && p->red != R_MIN_0) {
            double S = 0, P = 0;
            int64_t L = 0;
            const float *t = mt_tensor_data(last);
            switch (p->red) {
            case R_SUM_LAST: case R_MEAN_LAST_KEEP:
                for (int64_t j = 0; j < B; j++) S += fabs(t[i * B + j]), P += fmax(1, fabs(t[i * B + j]));
                L = B;
                break;
            case R_SUM_0: case R_MEAN_0:
                for (int64_t j = 0; j < A; j++) S += fabs(t[j * B + i]), P += fmax(1, fabs(t[j * B + i]));
                L = A;
                break;
            case R_GRAM: { /* ROWS: (B, B) over A rows; COLS: (A, A) over B columns */
                int64_t W = p->layout == ROWS ? B : A, r = i / W, q = i % W;
                L = p->layout == ROWS ? A : B;
                for (int64_t j = 0; j < L; j++) {
                    double u = p->layout == ROWS ? t[j * B + r] : t[r * B + j];
                    double v = p->layout == ROWS ? t[j * B + q] : t[q * B + j];
                    S += fabs(u * v);
                    P += fmax(1, fabs(u)) * fabs(v) + fabs(u) * fmax(1, fabs(v));
                }
                break;
            }
            default: break;
            }
            if ((p->red == R_MEAN_LAST_KEEP || p->red == R_MEAN_0) && L) S /= (double)L, P /= (double)L;
            tol += (double)(L + 1) * 1.2e-7 * S + 1e-5 * P;
        }
        if (!(fabs(g - c) <= tol) && !(isnan(c) && isnan(g))) {
            print_error("n=%lld result %d element %lld: cpu %.9g, gpu (emulated) %.9g, tolerance %.3g\n",
                        (long long)n, out, (long long)i, c, g, tol);
            return 1;
        }
    }
    return 0;
}

/* Runs p at size n on the CPU kernel and the emulated one; 0 when they agree. */
static int run_both(const prog *p, mt_kernel *kc, mt_kernel *kg, int64_t n) {
    mt_tensor *args[6], *gargs[6], *rc[3] = {NULL, NULL, NULL}, *rg[3] = {NULL, NULL, NULL};
    gen_inputs(p, n, args);
    for (int i = 0; i < 6; i++) gargs[i] = to_dev(kg, args[i], mt_kernel_param_device(kg, i));
    mt_diag d;
    int bad = 0;
    if (mt_kernel_run(kc, args, 6, rc, 3, &d) != MT_OK) {
        print_error("n=%lld: the CPU run failed: %s\n", (long long)n, d.text);
        bad = 1;
    } else if (mt_kernel_run(kg, gargs, 6, rg, 3, &d) != MT_OK) {
        print_error("n=%lld: the emulated run failed: %s\n", (long long)n, d.text);
        bad = 1;
    } else {
        mt_tensor *h[3];
        for (int i = 0; i < 3; i++) {
            if (!dev_is(mt_tensor_device(rg[i]), GPU)) {
                print_error("n=%lld: result %d is not on cuda:0\n", (long long)n, i);
                bad = 1;
            }
            h[i] = to_host(kg, rg[i]);
        }
        for (int i = 0; i < 3 && !bad; i++) bad = check_output(p, n, i, rc[i], h[i], rc[0]);
        for (int i = 0; i < 3; i++) mt_tensor_release(h[i]);
    }
    for (int i = 0; i < 3; i++) mt_tensor_release(rc[i]), mt_tensor_release(rg[i]);
    for (int i = 0; i < 6; i++) mt_tensor_release(args[i]), mt_tensor_release(gargs[i]);
    return bad;
}

/* A row of many inputs (17): the row rule caches what fits in its register
 * budget and reads the rest from memory; the emulation keeps a copy per
 * thread of every cached row. Same results as the CPU. */
static void test_many_row_inputs(void **s) {
    (void)s;
    enum { NIN = 17 };
    char src[2048] = "def f(", *p = src + strlen(src);
    for (int i = 0; i < NIN; i++)
        p += sprintf(p, "x%d: Tensor((64, 1000), \"float32\")%s", i, i + 1 < NIN ? ", " : "):\n    return softmax(");
    for (int i = 0; i < NIN; i++) p += sprintf(p, "x%d%s", i, i + 1 < NIN ? " + " : ", axis=-1)\n");
    mt_diag d;
    mt_kernel *kc = compile_for(src, false, &d), *kg = compile_for(src, true, &d);
    if (!kc || !kg) fail_msg("compile: %s\n%s", d.text, src);
    int64_t xd[2] = {64, 1000};
    mt_tensor *args[NIN], *gargs[NIN], *rc = NULL, *rg = NULL;
    for (int i = 0; i < NIN; i++) args[i] = rand_f32(2, xd, -1, 1), gargs[i] = to_dev(kg, args[i], GPU);
    if (mt_kernel_run(kc, args, NIN, &rc, 1, &d) != MT_OK) fail_msg("cpu run: %s", d.text);
    if (mt_kernel_run(kg, gargs, NIN, &rg, 1, &d) != MT_OK) fail_msg("emulated run: %s", d.text);
    mt_tensor *h = to_host(kg, rg);
    for (int64_t i = 0; i < mt_tensor_numel(h); i++) {
        double c = fget(rc, i), g = fget(h, i);
        if (!(fabs(g - c) <= 1e-4 * fabs(c) + 1e-30)) fail_msg("element %lld: cpu %.9g, emulated %.9g", (long long)i, c, g);
    }
    mt_tensor_release(h), mt_tensor_release(rc), mt_tensor_release(rg);
    for (int i = 0; i < NIN; i++) mt_tensor_release(args[i]), mt_tensor_release(gargs[i]);
    mt_kernel_release(kc);
    mt_kernel_release(kg);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 36 programs (~6 s in RelWithDebInfo). MT_GEN_PROGRAMS and MT_GEN_SEED
 * override the count and the first seed (to soak the generator, or to
 * replay one program: its seed is printed on failure); MT_GEN_SHOW=1 prints
 * each program with its count of GPU kernel launches. */
static void test_random_programs(void **s) {
    (void)s;
    const char *env = getenv("MT_GEN_PROGRAMS");
    int nprog = env ? atoi(env) : 36;
    env = getenv("MT_GEN_SEED");
    uint64_t seed0 = env ? strtoull(env, NULL, 0) : 1;
    static const int64_t sizes[] = {1, 7, 1000, 4097};
    static const int64_t rows_d[] = {1, 5, 16, 33}, cols_r[] = {1, 3, 8};
    int failed = 0;
    double t0 = now_s();
    for (int pi = 0; pi < nprog; pi++) {
        uint64_t seed = seed0 + (uint64_t)pi;
        rng_state = 0x9E3779B97F4A7C15ull ^ (seed * 0x2545F4914F6CDD1Dull);
        rnext();
        prog p;
        int layout = rint_below(2) ? ROWS : COLS;
        int64_t cdim = layout == ROWS ? rows_d[rint_below(4)] : cols_r[rint_below(3)];
        gen_program(&p, layout, cdim, 3 + rint_below(5));
        mt_diag d;
        mt_kernel *kc = compile_for(p.src, false, &d);
        if (!kc) fail_msg("program %d (seed %llu) does not compile for the CPU (a test bug):\n%s\n%s", pi,
                          (unsigned long long)seed, d.text, p.src);
        mt_kernel *kg = compile_for(p.src, true, &d);
        if (kg && getenv("MT_GEN_SHOW")) { /* the programs and their GPU schedules */
            const char *t = mt_kernel_dump(kg, MT_STAGE_TIR_SCHED);
            int launches = 0, rows = 0;
            for (const char *q = t; (q = strstr(q, "T.launch(")); q++) launches++;
            for (const char *q = t; (q = strstr(q, "\"gpu_reduce_rows\"")); q++) rows++;
            print_message("program %d (seed %llu): %d launches, %d by gpu_reduce_rows\n%s\n", pi,
                          (unsigned long long)seed, launches, rows, p.src);
        }
        int bad = 0;
        if (!kg) {
            print_error("cuda + emulate compile failed: %s\n", d.text);
            bad = 1;
        }
        for (size_t si = 0; kg && si < sizeof sizes / sizeof sizes[0] && !bad; si++) bad = run_both(&p, kc, kg, sizes[si]);
        if (bad) {
            print_error("program %d (MT_GEN_SEED=%llu MT_GEN_PROGRAMS=1):\n%s\n", pi, (unsigned long long)seed, p.src);
            failed++;
        }
        mt_kernel_release(kc);
        mt_kernel_release(kg);
    }
    print_message("%d random programs x %zu sizes in %.2f s, %d differ\n", nprog, sizeof sizes / sizeof sizes[0],
                  now_s() - t0, failed);
    assert_int_equal(failed, 0);
}

/* The row rule at its edges (gpu_reduce.c). A block per row of N threads
 * T = N / 4 rounded down to a power of two, from 32 to 512: one element
 * (T = 32), 7, 31, exactly T (32), 33, 8 per thread (255: 32), exactly 4
 * per thread (256: 64), 1000, 1024 (256), 2048 (512, 4 each) and 4097
 * (512 and a tail), on 1 or 3 rows. A warp per row when N <= 1024 and the
 * rows give 8 warps per SM of sm_90 (132 SMs): G = N / 4 rounded down to a
 * power of two of at most 32 lanes a row, 128 / G rows a block; on just
 * enough rows plus one (the last block's groups past M compute nothing).
 * Every op the rule takes, on constant rows, against the CPU: 1e-5 *
 * max(1, |cpu|) as check_output's, plus (N + 8) * 1.2e-7 times the same
 * for the sums inside (the serial sum's bound, test_ops_nn.c; every sum
 * here is of positive terms, or softmax's or layer_norm's, whose relative
 * error the result inherits); softmax's values (<= 1, some tiny) are held
 * to the relative part alone. */
static void run_rows(int64_t N, int64_t M, bool warp) {
    char src[1024];
    snprintf(src, sizeof src,
             "def f(x: Tensor((%lld, %lld), \"float32\"), g: Tensor((%lld,), \"float32\"),"
             " b: Tensor((%lld,), \"float32\")):\n"
             "    return softmax(x), log_softmax(x * 2.0), layer_norm(x, g, b), sum(x * x, axis=-1),"
             " max(x, axis=-1), mean(exp(x), axis=-1, keepdims=True), min(x - b, axis=-1)\n",
             (long long)M, (long long)N, (long long)N, (long long)N);
    mt_diag d;
    mt_kernel *kc = compile_for(src, false, &d), *kg = compile_for(src, true, &d);
    if (!kc || !kg) fail_msg("compile: %s\n%s", d.text, src);
    const char *sched = mt_kernel_dump(kg, MT_STAGE_TIR_SCHED);
    if ((strstr(sched, "a warp per row") != NULL) != warp)
        fail_msg("N=%lld M=%lld: %s a warp per row:\n%s", (long long)N, (long long)M, warp ? "not" : "", sched);
    rng_state = 0x1234567ull + (uint64_t)N;
    int64_t xd[2] = {M, N}, vd[1] = {N};
    mt_tensor *args[3] = {rand_f32(2, xd, -3, 3), rand_f32(1, vd, 0.5, 1.5), rand_f32(1, vd, -1, 1)}, *gargs[3];
    for (int i = 0; i < 3; i++) gargs[i] = to_dev(kg, args[i], GPU);
    mt_tensor *rc[7] = {NULL}, *rg[7] = {NULL};
    if (mt_kernel_run(kc, args, 3, rc, 7, &d) != MT_OK) fail_msg("cpu run: %s", d.text);
    if (mt_kernel_run(kg, gargs, 3, rg, 7, &d) != MT_OK) fail_msg("emulated run: %s\n%s", d.text, src);
    for (int r = 0; r < 7; r++) {
        mt_tensor *h = to_host(kg, rg[r]);
        for (int64_t i = 0; i < mt_tensor_numel(h); i++) {
            double c = fget(rc[r], i), gv = fget(h, i), sum_err = (double)(N + 8) * 1.2e-7;
            double tol = (1e-5 + sum_err) * fmax(1, fabs(c));
            if (r == 0) tol = (1e-5 + sum_err) * fabs(c) + 1e-30; /* softmax: relative */
            if (!(fabs(gv - c) <= tol))
                fail_msg("N=%lld M=%lld result %d element %lld: cpu %.9g, gpu (emulated) %.9g\n%s", (long long)N,
                         (long long)M, r, (long long)i, c, gv, src);
        }
        mt_tensor_release(h);
        mt_tensor_release(rc[r]);
        mt_tensor_release(rg[r]);
    }
    for (int i = 0; i < 3; i++) mt_tensor_release(args[i]), mt_tensor_release(gargs[i]);
    mt_kernel_release(kc);
    mt_kernel_release(kg);
}

static void test_row_lengths(void **s) {
    (void)s;
    static const int64_t lens[] = {1, 7, 31, 32, 33, 255, 256, 1000, 1024, 2048, 4097};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        int64_t N = lens[li], G = 1;
        run_rows(N, li % 2 ? 1 : 3, false);
        while (G * 2 <= 32 && G * 2 * 4 <= N) G *= 2;
        if (N <= 1024) run_rows(N, 8 * 132 * 32 / G + 1, true);
    }
}

/* argmax / argmin over the last axis (gpu_argreduce.c), a block or a warp
 * per row as the row rule chooses, against the CPU, index for index: rows
 * of few distinct values (ties: the first index wins), rows with NaNs
 * (the first NaN's index), rows of -inf only (index 0) and rows with
 * +inf. */
static void fill_arg_rows(mt_tensor *t, int64_t M, int64_t N) {
    float *p = mt_tensor_data(t);
    for (int64_t r = 0; r < M; r++)
        for (int64_t j = 0; j < N; j++) {
            float v = (float)rint_below(5) - 2.0f;
            if (r % 5 == 1 && rint_below(7) == 0) v = NAN;
            if (r % 5 == 2) v = -INFINITY;
            if (r % 5 == 3 && rint_below(9) == 0) v = rint_below(2) ? INFINITY : -INFINITY;
            p[r * N + j] = v;
        }
}

static void run_arg_rows(int64_t N, int64_t M, bool warp) {
    char src[512];
    snprintf(src, sizeof src,
             "def f(x: Tensor((%lld, %lld), \"float32\"), y: Tensor((%lld, %lld), \"int32\")):\n"
             "    return argmax(x, axis=-1), argmin(x, axis=-1), argmax(x * -1.0, axis=-1, keepdims=True),"
             " argmin(y, axis=1), argmax(y, axis=-1)\n",
             (long long)M, (long long)N, (long long)M, (long long)N);
    mt_diag d;
    mt_kernel *kc = compile_for(src, false, &d), *kg = compile_for(src, true, &d);
    if (!kc || !kg) fail_msg("compile: %s\n%s", d.text, src);
    const char *sched = mt_kernel_dump(kg, MT_STAGE_TIR_SCHED);
    if (!strstr(sched, warp ? "gpu_argreduce_rows (a warp per row)" : "\"gpu_argreduce_rows\""))
        fail_msg("N=%lld M=%lld: not the %s argreduce rule:\n%s", (long long)N, (long long)M, warp ? "warp" : "block",
                 sched);
    rng_state = 0x7654321ull + (uint64_t)(N * 31 + M);
    int64_t xd[2] = {M, N};
    mt_tensor *args[2] = {mt_tensor_create(MT_FLOAT32, 2, xd), mt_tensor_create(MT_INT32, 2, xd)}, *gargs[2];
    fill_arg_rows(args[0], M, N);
    int32_t *yi = mt_tensor_data(args[1]);
    for (int64_t i = 0; i < M * N; i++) yi[i] = rint_below(4) - (i % 3 == 0 ? 2147483647 : 0);
    for (int i = 0; i < 2; i++) gargs[i] = to_dev(kg, args[i], GPU);
    mt_tensor *rc[5] = {NULL}, *rg[5] = {NULL};
    if (mt_kernel_run(kc, args, 2, rc, 5, &d) != MT_OK) fail_msg("cpu run: %s", d.text);
    if (mt_kernel_run(kg, gargs, 2, rg, 5, &d) != MT_OK) fail_msg("emulated run: %s\n%s", d.text, src);
    for (int r = 0; r < 5; r++) {
        mt_tensor *h = to_host(kg, rg[r]);
        const int64_t *c = mt_tensor_data(rc[r]), *gv = mt_tensor_data(h);
        for (int64_t i = 0; i < mt_tensor_numel(h); i++)
            if (c[i] != gv[i])
                fail_msg("N=%lld M=%lld result %d row %lld: cpu %lld, gpu (emulated) %lld\n%s", (long long)N,
                         (long long)M, r, (long long)i, (long long)c[i], (long long)gv[i], src);
        mt_tensor_release(h);
        mt_tensor_release(rc[r]);
        mt_tensor_release(rg[r]);
    }
    for (int i = 0; i < 2; i++) mt_tensor_release(args[i]), mt_tensor_release(gargs[i]);
    mt_kernel_release(kc);
    mt_kernel_release(kg);
}

static void test_argreduce_rows(void **s) {
    (void)s;
    static const int64_t lens[] = {1, 7, 31, 32, 33, 1000, 1024, 4097};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        int64_t N = lens[li], G = 1;
        run_arg_rows(N, li % 2 ? 1 : 7, false);
        while (G * 2 <= 32 && G * 2 * 4 <= N) G *= 2;
        if (N <= 1024) run_arg_rows(N, 8 * 132 * 32 / G + 3, true);
    }
}

/* ---- (b) device placement under cuda + emulate ----------------------------------
 *
 * Under target cuda the program's default device is the GPU: parameters,
 * and the ops outside any `with device`, are on cuda:0 (docs/language.md,
 * "with device"). A result computed on a device stays there. */

/* x * 2.0 (+ 1 when sum(x) > 0), then k times y = y * 0.5 + i: what FLOW
 * and FLOW_CPU compute. */
static void flow_ref(const float *x, int64_t n, int64_t k, double *want) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i];
    for (int64_t i = 0; i < n; i++) {
        double y = (double)x[i] * 2.0 + (s > 0 ? 1.0 : 0.0);
        for (int64_t j = 0; j < k; j++) y = y * 0.5 + (double)j;
        want[i] = y;
    }
}

/* Runs a FLOW-like kernel (x: (n,), k: int64) with arguments moved to their
 * parameters' devices; checks the numbers, and that the result is on the
 * device mt_kernel_result_device names, which must be `want_dev`. */
static void run_flow(mt_kernel *k, int64_t n, int64_t kk, double sign, mt_device want_dev) {
    mt_tensor *x = mt_tensor_create(MT_FLOAT32, 1, &n), *kt = mt_tensor_create(MT_INT64, 0, NULL);
    float *px = mt_tensor_data(x);
    for (int64_t i = 0; i < n; i++) px[i] = (float)(sign * (0.5 + (double)(i % 7)) - (double)(i % 3) * 0.25);
    *(int64_t *)mt_tensor_data(kt) = kk;
    mt_tensor *args[2] = {to_dev(k, x, mt_kernel_param_device(k, 0)), to_dev(k, kt, mt_kernel_param_device(k, 1))};
    mt_tensor *res[1] = {NULL};
    mt_diag d;
    if (mt_kernel_run(k, args, 2, res, 1, &d) != MT_OK) fail_msg("run: %s", d.text);
    assert_true(dev_is(mt_kernel_result_device(k, 0), want_dev));
    assert_true(dev_is(mt_tensor_device(res[0]), want_dev));
    mt_tensor *h = to_host(k, res[0]);
    double *want = malloc(sizeof(double) * (size_t)(n + 1));
    flow_ref(px, n, kk, want);
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(fget(h, i) - want[i]) <= 1e-5 * (1 + fabs(want[i]))))
            fail_msg("n=%lld k=%lld element %lld: got %.9g, want %.9g", (long long)n, (long long)kk, (long long)i,
                     fget(h, i), want[i]);
    free(want);
    mt_tensor_release(h);
    mt_tensor_release(res[0]);
    for (int i = 0; i < 2; i++) mt_tensor_release(args[i]);
    mt_tensor_release(x);
    mt_tensor_release(kt);
}

/* A condition computed on the GPU (read by the executor on the host), an if
 * and a run-time loop whose body runs on the GPU with the loop counter. */
static const char *FLOW =
    "def f(x: Tensor((\"n\",), \"float32\"), k: int64):\n"
    "    pos = sum(x) > 0.0\n"
    "    y = x * 2.0\n"
    "    if pos:\n"
    "        y = y + 1.0\n"
    "    for i in range(k):\n"
    "        y = y * 0.5 + i\n"
    "    return y\n";

static void test_flow_on_gpu(void **s) {
    (void)s;
    mt_kernel *k = compile_gpu(FLOW);
    assert_true(dev_is(mt_kernel_param_device(k, 0), GPU));
    static const int64_t sizes[] = {1, 7, 1000, 4097};
    for (int i = 0; i < 4; i++) {
        run_flow(k, sizes[i], 3, 1.0, GPU);  /* then-branch; the loop runs */
        run_flow(k, sizes[i], 0, -1.0, GPU); /* else-branch; the loop does not */
    }
    mt_kernel_release(k);
}

/* T.Shuffle in a GPU kernel: CUDA C takes its lanes one by one, a one-lane
 * shuffle (a scalar) and one inside a vector expression included (an
 * internal error in cuda_c: a shuffle of one lane was returned as it was). */
static const char *SHUF =
    "@T.prim_func\n"
    "def g(x: T.Buffer((64,), \"float32\"), y: T.Buffer((64,), \"float32\"), z: T.Buffer((16,), \"float32\")):\n"
    "    for t in T.thread_binding(16, thread=\"threadIdx.x\"):\n"
    "        r0 = x[T.Ramp(t * 4, 1, 4)]\n"
    "        y[T.Ramp(t * 4, 1, 4)] = T.Shuffle([r0], [3, 2, 1, 0]) + T.Shuffle([r0], [0])\n"
    "        z[t] = T.Shuffle([r0], [2]) + 1.0\n";

static void test_shuffle_lanes(void **s) {
    (void)s;
    mt_kernel *k = compile_gpu(SHUF);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_CUDA), "__global__"));
    int64_t n = 64;
    mt_tensor *x = rand_f32(1, &n, -2, 2), *xd = to_dev(k, x, GPU), *res[2] = {NULL, NULL};
    mt_diag d;
    if (mt_kernel_run(k, &xd, 1, res, 2, &d) != MT_OK) fail_msg("run: %s", d.text);
    mt_tensor *y = to_host(k, res[0]), *z = to_host(k, res[1]);
    for (int t = 0; t < 16; t++) {
        for (int l = 0; l < 4; l++) assert_true(fget(y, t * 4 + l) == (float)(fget(x, t * 4 + 3 - l) + fget(x, t * 4)));
        assert_true(fget(z, t) == (float)(fget(x, t * 4 + 2) + 1.0));
    }
    mt_tensor_release(y), mt_tensor_release(z), mt_tensor_release(xd), mt_tensor_release(x);
    for (int i = 0; i < 2; i++) mt_tensor_release(res[i]);
    mt_kernel_release(k);
}

/* A loop function without thread bindings in a cuda program runs on the
 * host; its vector store compiled (the streaming-store check divided by
 * the cuda target's cache line size, 0: SIGFPE). */
static void test_host_vector_store(void **s) {
    (void)s;
    const char *src = "@T.prim_func\n"
                      "def tr(x: T.Buffer((16,), \"float32\"), y: T.Buffer((16,), \"float32\")):\n"
                      "    y[T.Ramp(0, 1, 16)] = x[T.Ramp(0, 1, 16)] * 2.0\n";
    mt_compile_options o; /* the real target (compiled, not run: no GPU needed) */
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    mt_diag dc;
    mt_kernel *kc = mt_jit_compile(test_ctx, src, &o, &dc);
    if (!kc) fail_msg("target cuda: %s", dc.text);
    mt_kernel_release(kc);
    mt_kernel *k = compile_gpu(src);
    int64_t n = 16;
    mt_tensor *x = rand_f32(1, &n, -2, 2), *xd = to_dev(k, x, mt_kernel_param_device(k, 0)), *res = NULL;
    mt_diag d;
    if (mt_kernel_run(k, &xd, 1, &res, 1, &d) != MT_OK) fail_msg("run: %s", d.text);
    mt_tensor *y = to_host(k, res);
    for (int i = 0; i < 16; i++) assert_true(fget(y, i) == fget(x, i) * 2.0f);
    mt_tensor_release(y), mt_tensor_release(res), mt_tensor_release(xd), mt_tensor_release(x);
    mt_kernel_release(k);
}

/* with device("gpu") in a cuda program: the default device named; results
 * stay on the GPU and the numbers are right. */
static const char *GPU_WITH =
    "def f(a: Tensor((\"n\",), \"float32\"), b: Tensor((\"n\",), \"float32\")):\n"
    "    c = a + b\n"
    "    with device(\"gpu\"):\n"
    "        d = c * 2.0\n"
    "    e = d + a\n"
    "    return e, d\n";

static void test_gpu_with_in_cuda_program(void **s) {
    (void)s;
    mt_kernel *k = compile_gpu(GPU_WITH);
    for (int i = 0; i < 2; i++) {
        assert_true(dev_is(mt_kernel_param_device(k, i), GPU));
        assert_true(dev_is(mt_kernel_result_device(k, i), GPU));
    }
    int64_t n = 1000;
    mt_tensor *a = rand_f32(1, &n, -2, 2), *b = rand_f32(1, &n, -2, 2);
    mt_tensor *args[2] = {to_dev(k, a, GPU), to_dev(k, b, GPU)}, *res[2] = {NULL, NULL};
    mt_diag d;
    if (mt_kernel_run(k, args, 2, res, 2, &d) != MT_OK) fail_msg("run: %s", d.text);
    mt_tensor *e = to_host(k, res[0]), *dd = to_host(k, res[1]);
    for (int i = 0; i < 2; i++) assert_true(dev_is(mt_tensor_device(res[i]), GPU));
    for (int64_t i = 0; i < n; i++) {
        double c = (double)(float)(fget(a, i) + fget(b, i)), dv = c * 2.0, ev = dv + fget(a, i);
        assert_true(fabs(fget(dd, i) - dv) <= 1e-6 * (1 + fabs(dv)));
        assert_true(fabs(fget(e, i) - ev) <= 1e-6 * (1 + fabs(ev)));
    }
    mt_tensor_release(e);
    mt_tensor_release(dd);
    for (int i = 0; i < 2; i++) mt_tensor_release(res[i]), mt_tensor_release(args[i]);
    mt_tensor_release(a);
    mt_tensor_release(b);
    mt_kernel_release(k);
}

/* In a cuda program, `with device("gpu")` names the program's default
 * device, so, as `device("cpu")` in a CPU program (test_devices.c,
 * test_cpu_with_is_plain), it changes nothing: no copies (a cuda:0 ->
 * cuda:0 copy split the chain into three kernels when the builder took the
 * CPU for the default device of target cuda). */
static void test_gpu_with_is_plain(void **s) {
    (void)s;
    mt_kernel *k = compile_gpu(GPU_WITH);
    const char *opt = mt_kernel_dump(k, MT_STAGE_GRAPH_OPT);
    assert_null(strstr(opt, "to_vdevice"));
    assert_null(strstr(opt, "vdevice="));
    mt_kernel_release(k);
}

/* GPU, CPU, GPU: c on the GPU, d and e on the CPU, g on the GPU; the
 * copies in the graph; results where computed. */
static const char *CPU_WITH =
    "def f(a: Tensor((\"n\",), \"float32\"), b: Tensor((\"n\",), \"float32\")):\n"
    "    c = a + b\n"
    "    with device(\"cpu\"):\n"
    "        d = c * 2.0\n"
    "        e = d + a\n"
    "    g = softmax(e - 1.0)\n"
    "    return g, d\n";

/* The ops inside `with device("cpu")` of a cuda program run on the CPU,
 * with the copies in the graph, and result d (computed on the CPU) is
 * returned there. */
static void test_cpu_with_in_cuda_program(void **s) {
    (void)s;
    mt_kernel *k = compile_gpu(CPU_WITH);
    const char *opt = mt_kernel_dump(k, MT_STAGE_GRAPH_OPT);
    assert_non_null(strstr(opt, "R.to_vdevice(c, \"cpu\")"));
    assert_non_null(strstr(opt, "R.to_vdevice(e, \"cuda:0\")"));
    assert_true(dev_is(mt_kernel_param_device(k, 0), GPU));
    assert_true(dev_is(mt_kernel_result_device(k, 0), GPU)); /* g */
    assert_true(dev_is(mt_kernel_result_device(k, 1), CPU)); /* d */
    static const int64_t sizes[] = {1, 7, 1000, 4097};
    for (int si = 0; si < 4; si++) {
        int64_t n = sizes[si];
        mt_tensor *a = rand_f32(1, &n, -2, 2), *b = rand_f32(1, &n, -2, 2);
        mt_tensor *args[2] = {to_dev(k, a, GPU), to_dev(k, b, GPU)}, *res[2] = {NULL, NULL};
        mt_diag d;
        if (mt_kernel_run(k, args, 2, res, 2, &d) != MT_OK) fail_msg("run: %s", d.text);
        assert_true(dev_is(mt_tensor_device(res[0]), GPU));
        assert_true(dev_is(mt_tensor_device(res[1]), CPU));
        mt_tensor *g = to_host(k, res[0]);
        double *e = malloc(sizeof(double) * (size_t)n), m = -INFINITY, sum = 0;
        for (int64_t i = 0; i < n; i++) {
            double c = (double)(float)(fget(a, i) + fget(b, i)), dv = (double)(float)(c * 2.0);
            assert_true(fabs(fget(res[1], i) - dv) <= 1e-6 * (1 + fabs(dv)));
            e[i] = (double)(float)(dv + fget(a, i)) - 1.0;
            m = fmax(m, e[i]);
        }
        for (int64_t i = 0; i < n; i++) sum += exp(e[i] - m);
        for (int64_t i = 0; i < n; i++) {
            double want = exp(e[i] - m) / sum;
            assert_true(fabs(fget(g, i) - want) <= 1e-5 * want + 1e-30);
        }
        free(e);
        mt_tensor_release(g);
        for (int i = 0; i < 2; i++) mt_tensor_release(res[i]), mt_tensor_release(args[i]);
        mt_tensor_release(a);
        mt_tensor_release(b);
    }
    mt_kernel_release(k);
}

/* FLOW with its reductions and its loop body on the CPU, its if on the
 * GPU: the condition crosses from the CPU, the carried y between the two. */
static const char *FLOW_CPU =
    "def f(x: Tensor((\"n\",), \"float32\"), k: int64):\n"
    "    with device(\"cpu\"):\n"
    "        pos = sum(x) > 0.0\n"
    "        y = x * 2.0\n"
    "    if pos:\n"
    "        y = y + 1.0\n"
    "    for i in range(k):\n"
    "        with device(\"cpu\"):\n"
    "            y = y * 0.5 + i\n"
    "    y = y * 1.0\n"
    "    return y\n";

/* Control flow mixing the two devices: the graph copies x to the CPU. */
static void test_flow_mixed(void **s) {
    (void)s;
    mt_kernel *k = compile_gpu(FLOW_CPU);
    const char *opt = mt_kernel_dump(k, MT_STAGE_GRAPH_OPT);
    assert_non_null(strstr(opt, "vdevice=\"cpu\""));
    assert_non_null(strstr(opt, "R.to_vdevice(x, \"cpu\")"));
    static const int64_t sizes[] = {1, 7, 1000, 4097};
    for (int i = 0; i < 4; i++) {
        run_flow(k, sizes[i], 3, 1.0, GPU);
        run_flow(k, sizes[i], 0, -1.0, GPU);
    }
    mt_kernel_release(k);
}

/* Two emulated kernels share the context's emulated GPU: one's result is
 * the other's argument as it is, no trip through the host; a tensor keeps
 * the device alive after its kernel is released. */
static void test_kernels_share_the_gpu(void **s) {
    (void)s;
    mt_kernel *k1 = compile_gpu("def f(a: Tensor((\"n\",), \"float32\")):\n    return exp(a) * 0.5\n");
    mt_kernel *k2 = compile_gpu("def g(b: Tensor((\"n\",), \"float32\")):\n    return softmax(b - 1.0)\n");
    int64_t n = 4097;
    mt_tensor *a = rand_f32(1, &n, -2, 2), *ga = to_dev(k1, a, GPU), *r1 = NULL, *r2 = NULL;
    mt_diag d;
    assert_int_equal(mt_kernel_run(k1, &ga, 1, &r1, 1, &d), MT_OK);
    mt_kernel_release(k1);
    assert_int_equal(mt_kernel_run(k2, &r1, 1, &r2, 1, &d), MT_OK);
    mt_tensor *h = to_host(k2, r2);
    double m = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, exp((double)fget(a, i)) * 0.5 - 1.0);
    for (int64_t i = 0; i < n; i++) sum += exp(exp((double)fget(a, i)) * 0.5 - 1.0 - m);
    for (int64_t i = 0; i < n; i++) {
        double want = exp(exp((double)fget(a, i)) * 0.5 - 1.0 - m) / sum;
        if (!(fabs(fget(h, i) - want) <= 1e-5 * want)) fail_msg("element %lld: %.9g vs %.9g", (long long)i, fget(h, i), want);
    }
    mt_tensor_release(h);
    mt_tensor_release(r2);
    mt_tensor_release(r1);
    mt_tensor_release(ga);
    mt_tensor_release(a);
    mt_kernel_release(k2);
}

/* ---- (c) arguments on the wrong device ------------------------------------------ */

static void test_wrong_device(void **s) {
    (void)s;
    mt_kernel *k = compile_gpu("def f(a: Tensor((\"n\",), \"float32\"), b: Tensor((\"n\",), \"float32\")):\n"
                               "    return a * b + 1.0\n");
    int64_t n = 7;
    mt_tensor *a = rand_f32(1, &n, -2, 2), *b = rand_f32(1, &n, -2, 2);
    mt_tensor *ga = to_dev(k, a, GPU), *gb = to_dev(k, b, GPU);
    mt_diag d;
    /* host tensors for GPU parameters */
    mt_tensor *host[2] = {a, b}, *res[1] = {NULL};
    assert_int_equal(mt_kernel_run(k, host, 2, res, 1, &d), MT_ERR_INVALID_ARG);
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    assert_string_equal(d.message, "argument 'a' is on cpu but the kernel expects it on cuda:0");
    assert_null(res[0]);
    mt_tensor *mixed[2] = {ga, b};
    assert_int_equal(mt_kernel_run(k, mixed, 2, res, 1, &d), MT_ERR_INVALID_ARG);
    assert_string_equal(d.message, "argument 'b' is on cpu but the kernel expects it on cuda:0");
    /* a host tensor as the result slot of a GPU result */
    mt_tensor *good[2] = {ga, gb}, *slot[1] = {mt_tensor_create(MT_FLOAT32, 1, &n)};
    assert_int_equal(mt_kernel_run(k, good, 2, slot, 1, &d), MT_ERR_INVALID_ARG);
    assert_string_equal(d.message, "result 0 is on cpu but the kernel returns it on cuda:0");
    mt_tensor_release(slot[0]);
    /* the right devices run */
    assert_int_equal(mt_kernel_run(k, good, 2, res, 1, &d), MT_OK);
    mt_tensor_release(res[0]);
    res[0] = NULL;
    /* a GPU tensor for a CPU kernel's parameter */
    mt_diag dc;
    mt_kernel *kc = compile_for("def f(a: Tensor((\"n\",), \"float32\"), b: Tensor((\"n\",), \"float32\")):\n"
                                "    return a * b + 1.0\n", false, &dc);
    assert_non_null(kc);
    assert_int_equal(mt_kernel_run(kc, good, 2, res, 1, &d), MT_ERR_INVALID_ARG);
    assert_string_equal(d.message, "argument 'a' is on cuda:0 but the kernel expects it on cpu");
    /* devices a kernel's runs do not have */
    mt_tensor *t = NULL;
    assert_int_equal(mt_kernel_tensor_to(k, a, (mt_device){MT_DEVICE_CUDA, 1}, &t, &d), MT_ERR_UNAVAILABLE);
    assert_null(t);
    assert_non_null(strstr(d.message, "cuda:1"));
    assert_int_equal(mt_kernel_tensor_to(kc, a, GPU, &t, &d), MT_ERR_UNAVAILABLE);
    assert_non_null(strstr(d.message, "cuda:0"));
    mt_kernel_release(kc);
    mt_tensor_release(ga);
    mt_tensor_release(gb);
    mt_tensor_release(a);
    mt_tensor_release(b);
    mt_kernel_release(k);
}

/* ---- (d) the scheduled TIR of target cuda ----------------------------------------- */

static int count(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* What `mtc --target cuda --emit tir-sched` prints (the same text). */
static void test_tir_sched_softmax(void **s) {
    (void)s;
    mt_kernel *k = compile_gpu("def f(x: Tensor((\"n\", \"d\"), \"float32\")):\n    return softmax(x)\n");
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(t);
    assert_non_null(strstr(t, "\"schedule\": \"gpu_reduce_rows\""));
    assert_non_null(strstr(t, "T.thread_binding(n, thread=\"blockIdx.x\")"));     /* a block per row */
    assert_non_null(strstr(t, "T.thread_binding(256, thread=\"threadIdx.x\")"));  /* symbolic row: 256 */
    assert_non_null(strstr(t, "scope=\"shared\""));
    assert_non_null(strstr(t, "\"kind\": \"cuda_kernel\""));
    assert_int_equal(count(t, "T.launch("), 1);
    mt_kernel_release(k);
    /* the same under emulation (the dump is the GPU schedule, before
     * emulate_gpu), and the threads follow the row length: 1000 / 4 -> 128 */
    k = compile_gpu("def f(x: Tensor((3, 1000), \"float32\")):\n    return softmax(x)\n");
    t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(t, "gpu_reduce_rows"));
    assert_non_null(strstr(t, "T.thread_binding(128, thread=\"threadIdx.x\")"));
    mt_kernel_release(k);
}

static void test_tir_sched_elementwise_chain(void **s) {
    (void)s;
    mt_kernel *k = compile_gpu("def f(a: Tensor((\"n\", 16), \"float32\"), b: Tensor((16,), \"float32\")):\n"
                               "    c = a * b + 1.0\n    d = exp(c) - a\n    return tanh(d) * sigmoid(c)\n");
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_int_equal(count(t, "T.launch("), 1);
    assert_int_equal(count(t, "\"kind\": \"cuda_kernel\""), 1);
    assert_non_null(strstr(t, "\"schedule\": \"gpu_fallback\""));
    assert_non_null(strstr(t, "thread=\"blockIdx.x\""));
    assert_non_null(strstr(t, "thread=\"threadIdx.x\""));
    mt_kernel_release(k);
}

/* ---- (e) large elementwise nests: a vector step per thread -------------------------
 *
 * gpu_fallback gives each thread 16 consecutive bytes (a float4, double2,
 * ...) where every buffer is walked along the nest with 4- or 8-byte
 * elements: the CUDA text loads and stores through mt_load_<type> /
 * mt_store_<type>, and the emulated results are the CPU's, bit for bit.
 * Broadcasts, 2-byte elements and nests under the size where threads take
 * several elements keep scalar accesses. */
static bool whole_values; /* floats: small integers (then sums are exact in any order) */

static void fill_random(mt_tensor *t) {
    uint8_t *p = mt_tensor_data(t);
    int64_t n = mt_tensor_numel(t);
    switch (mt_tensor_dtype(t)) {
    case MT_FLOAT32:
        for (int64_t i = 0; i < n; i++)
            ((float *)p)[i] = whole_values ? (float)(rint_below(7) - 3) : (float)runif(-3, 3);
        break;
    case MT_FLOAT64:
        for (int64_t i = 0; i < n; i++) ((double *)p)[i] = whole_values ? rint_below(7) - 3 : runif(-3, 3);
        break;
    case MT_INT32: for (int64_t i = 0; i < n; i++) ((int32_t *)p)[i] = (int32_t)rnext(); break;
    case MT_INT64: for (int64_t i = 0; i < n; i++) ((int64_t *)p)[i] = (int64_t)rnext(); break;
    case MT_BFLOAT16: /* small integers, exact: the high half of a float32 */
        for (int64_t i = 0; i < n; i++) {
            float v = (float)(rint_below(64) - 32);
            uint32_t bits;
            memcpy(&bits, &v, 4);
            uint16_t h = (uint16_t)(bits >> 16);
            memcpy(p + 2 * i, &h, 2);
        }
        break;
    case MT_BOOL: case MT_INT8: case MT_UINT8: for (int64_t i = 0; i < n; i++) p[i] = (uint8_t)rint_below(2); break;
    default: /* float16: small integers, exact */
        for (int64_t i = 0; i < n; i++) {
            _Float16 h = (_Float16)(rint_below(64) - 32);
            memcpy(p + 2 * i, &h, 2);
        }
    }
}

/* Threads per block of the kernel of cuda text cu that reads parameter a
 * (the pass over the input), or 0 when none does. */
static int threads_reading_a(const char *cu) {
    int threads = 0;
    for (const char *l = strstr(cu, "// launch "); l; l = strstr(l + 1, "// launch ")) {
        const char *sig = strstr(l, "extern \"C\"");
        const char *end = sig ? strchr(sig, '{') : NULL;
        if (!end) break;
        const char *a = strstr(sig, "*__restrict__ a,"), *a2 = strstr(sig, "*__restrict__ a)");
        if ((a && a < end) || (a2 && a2 < end)) {
            const char *b = strstr(l, "block=(");
            int t = b ? atoi(b + 7) : 0;
            if (threads == 0 || t < threads) threads = t;
        }
    }
    return threads;
}

/* Element i of t as a double (16-bit floats widened). */
static double elem(const mt_tensor *t, int64_t i) {
    const uint8_t *p = mt_tensor_data(t);
    switch (mt_tensor_dtype(t)) {
    case MT_FLOAT32: return ((const float *)p)[i];
    case MT_FLOAT64: return ((const double *)p)[i];
    case MT_FLOAT16: {
        _Float16 h;
        memcpy(&h, p + 2 * i, 2);
        return (double)h;
    }
    case MT_BFLOAT16: {
        uint32_t bits = (uint32_t)(p[2 * i] | p[2 * i + 1] << 8) << 16;
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    case MT_INT32: return ((const int32_t *)p)[i];
    case MT_INT64: return (double)((const int64_t *)p)[i];
    default: return p[i];
    }
}

/* Result r of the CPU (c) and of the emulated GPU (g) agree as (f) says. */
static void check_same(const char *what, int r, const mt_tensor *c, const mt_tensor *g) {
    mt_dtype t = mt_tensor_dtype(c);
    double rtol = t == MT_FLOAT16 ? 0x1p-10 : t == MT_BFLOAT16 ? 0x1p-7 : 1e-4;
    bool exact = !(t == MT_FLOAT32 || t == MT_FLOAT64 || t == MT_FLOAT16 || t == MT_BFLOAT16);
    assert_int_equal(mt_tensor_numel(c), mt_tensor_numel(g));
    for (int64_t i = 0; i < mt_tensor_numel(c); i++) {
        double x = elem(c, i), y = elem(g, i);
        bool ok = exact ? x == y : isnan(x) ? isnan(y) : fabs(x - y) <= 1e-4 + rtol * fabs(x);
        if (!ok) fail_msg("%s: result %d element %lld: cpu %.9g, gpu (emulated) %.9g", what, r, (long long)i, x, y);
    }
}

/* Runs kc (the CPU) and kg (cuda emulated) on the same random inputs, a
 * symbolic dim n, and compares each result: bit for bit, or as
 * check_same does. */
static void run_cpu_and_emulated(const char *what, mt_kernel *kc, mt_kernel *kg, int64_t n, bool bits) {
    mt_diag d;
    int np = mt_kernel_num_params(kc), nr = mt_kernel_num_results(kc);
    mt_tensor *args[8], *gargs[8], *rc[16] = {NULL}, *rg[16] = {NULL};
    assert_true(np <= 8 && nr <= 16);
    for (int i = 0; i < np; i++) {
        int64_t dims[MT_MAX_RANK];
        for (int ax = 0; ax < mt_kernel_param_ndim(kc, i); ax++) {
            dims[ax] = mt_kernel_param_dim(kc, i, ax);
            if (dims[ax] < 0) dims[ax] = n;
        }
        args[i] = mt_tensor_create(mt_kernel_param_dtype(kc, i), mt_kernel_param_ndim(kc, i), dims);
        fill_random(args[i]);
        gargs[i] = to_dev(kg, args[i], GPU);
    }
    if (mt_kernel_run(kc, args, np, rc, nr, &d) != MT_OK) fail_msg("%s: cpu run: %s", what, d.text);
    if (mt_kernel_run(kg, gargs, np, rg, nr, &d) != MT_OK) fail_msg("%s: emulated run: %s", what, d.text);
    for (int r = 0; r < nr; r++) {
        mt_tensor *h = to_host(kg, rg[r]);
        size_t bytes = (size_t)mt_tensor_numel(h) * mt_dtype_size(mt_tensor_dtype(h));
        if (!bits) check_same(what, r, rc[r], h);
        else if (memcmp(mt_tensor_data(h), mt_tensor_data(rc[r]), bytes) != 0)
            fail_msg("result %d: the emulated GPU's differs from the CPU's\n%s", r, what);
        mt_tensor_release(h);
        mt_tensor_release(rc[r]);
        mt_tensor_release(rg[r]);
    }
    for (int i = 0; i < np; i++) mt_tensor_release(args[i]), mt_tensor_release(gargs[i]);
}

static void run_large(const char *src, const char *want, const char *not_want) {
    mt_diag d;
    mt_kernel *kc = compile_for(src, false, &d), *kg = compile_for(src, true, &d);
    if (!kc || !kg) fail_msg("compile: %s\n%s", d.text, src);
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    mt_kernel *kt = mt_jit_compile(test_ctx, src, &o, &d); /* the CUDA text: not emulated */
    if (!kt) fail_msg("compile: %s\n%s", d.text, src);
    const char *cu = mt_kernel_dump(kt, MT_STAGE_CUDA);
    if (want && !strstr(cu, want)) fail_msg("no %s in the CUDA C of\n%s\n%s", want, src, cu);
    if (not_want && strstr(cu, not_want)) fail_msg("%s in the CUDA C of\n%s\n%s", not_want, src, cu);
    if (want && strcmp(want, "_rf") == 0 && threads_reading_a(cu) != 256)
        fail_msg("a kernel reads a with %d threads a block, not 256:\n%s\n%s", threads_reading_a(cu), src, cu);
    run_cpu_and_emulated(src, kc, kg, 3000, true);
    mt_kernel_release(kc);
    mt_kernel_release(kg);
    mt_kernel_release(kt);
}

static void test_large_elementwise(void **s) {
    (void)s;
    rng_state = 0x5eed1234ull;
#define T2(shape, t1, t2) "def f(a: Tensor(" shape ", \"" t1 "\"), b: Tensor(" shape ", \"" t2 "\")):\n"
    run_large(T2("(1024, 512)", "float32", "float32") "    return exp(a) * b + 1.0\n", "mt_store_float4", NULL);
    run_large(T2("(1024, 512)", "float64", "float64") "    return a * b - a\n", "mt_load_double2", NULL);
    run_large(T2("(1024, 512)", "int32", "int32") "    return a * 3 + b, a - b\n", "mt_store_int4", NULL);
    run_large(T2("(512, 512)", "int64", "int64") "    return a + b\n", "mt_load_longlong2", NULL);
    run_large(T2("(1024, 512)", "float64", "float32") "    return a * b.astype(\"float64\")\n",
              "mt_load_float2", "float4");
    /* a row broadcast, 2-byte elements, a size under the threshold: no vectors */
    run_large(T2("(1024, 512)", "float32", "float32") "    return a + b[0]\n", NULL, "mt_load_");
    run_large(T2("(1024, 512)", "float16", "float16") "    return a + b\n", NULL, "mt_load_");
    run_large(T2("(1000, 1000)", "float32", "float32") "    return a * b\n", NULL, "mt_load_");
#undef T2
}

/* ---- (f) the programs of tests/gpu: every op of the language ------------------------
 *
 * Each program of tests/gpu (the ops_ ones cover every library function;
 * the others the GPU rules' shapes; mixed.py, which places its parts on
 * devices itself, is (b)'s), compiled for the CPU and for cuda emulated, run
 * on the same random inputs at n = 1 and 1000 (the programs' symbolic
 * dim), the results compared as tests/gpu/compare.py does on a GPU:
 * floats within 1e-4 + 1e-4 |cpu| (float16 / bfloat16 results within
 * their unit in the last place), NaN where the CPU has NaN, the rest
 * exactly. */
static void run_program(const char *name, const char *src, int64_t n) {
    mt_diag d;
    mt_kernel *kc = compile_for(src, false, &d);
    if (!kc) fail_msg("%s: CPU compile: %s", name, d.text);
    mt_kernel *kg = compile_for(src, true, &d);
    if (!kg) fail_msg("%s: cuda compile: %s", name, d.text);
    char what[256];
    snprintf(what, sizeof what, "%s n=%lld", name, (long long)n);
    run_cpu_and_emulated(what, kc, kg, n, false);
    mt_kernel_release(kc);
    mt_kernel_release(kg);
}

static void test_gpu_programs(void **s) {
    (void)s;
    rng_state = 0x600dcafeull;
    const char *src_dir = getenv("MT_SOURCE_DIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/gpu", src_dir ? src_dir : ".");
    DIR *dp = opendir(dir);
    if (!dp) fail_msg("cannot open %s", dir);
    int count = 0;
    for (struct dirent *e; (e = readdir(dp));) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".py") != 0 || strcmp(e->d_name, "compare.py") == 0 ||
            strcmp(e->d_name, "mixed.py") == 0)
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *src = test_read_file(path);
        if (!src) fail_msg("cannot read %s", path);
        static const int64_t ns[] = {1, 1000};
        for (int k = 0; k < 2; k++) run_program(e->d_name, src, ns[k]);
        free(src);
        count++;
    }
    closedir(dp);
    assert_true(count >= 15);
}

/* Reductions with few outputs: split across threads (gpu_default.c, step
 * 0: partial results through rfactor, `<B>_rf` in the kernels; the kernel
 * that reads the input has blocks of 256 threads), the same results as the
 * CPU's (whole values: exact sums in any order): cyclic partials where a
 * count divides the length, chunks where none does (3000 x 1001 has
 * 125125 = 3003000 / 24; a symbolic length gets chunks). Many outputs and
 * short reductions: a thread per output. */
static void test_split_reductions(void **s) {
    (void)s;
    rng_state = 0xabcdef12ull;
    whole_values = true;
#define T1(shape, t) "def f(a: Tensor(" shape ", \"" t "\")):\n"
    run_large(T1("(1024, 512)", "float32") "    return sum(a), max(a), mean(a)\n", "_rf", NULL);
    run_large(T1("(65536, 8)", "float32") "    return sum(a, axis=0), min(a, axis=0, keepdims=True)\n", "_rf",
              NULL);
    run_large(T1("(256, 64, 64)", "float64") "    return mean(a, axis=(0, 2))\n", "_rf", NULL);
    run_large(T1("(3000, 1001)", "float32") "    return sum(a * 2.0 + 1.0)\n", "_rf", NULL); /* tails */
    run_large(T1("(1000, 700)", "int32") "    return sum(a)\n", "_rf", NULL);
    run_large(T1("(1009, 1013)", "float32") "    return sum(a)\n", "_rf", NULL); /* no divisor: chunks */
    run_large(T1("(4096, 300)", "int64") "    return max(a, axis=0)\n", "_rf", NULL);
    run_large(T1("(4096, 4096)", "float32") "    return sum(a, axis=0)\n", "_rf", NULL); /* 32 partials each */
    run_large(T1("(1100, 8192)", "float32") "    return sum(a, axis=0)\n", NULL, "_rf"); /* 8192 outputs */
    run_large(T1("(64, 1000)", "float32") "    return sum(a)\n", "_rf", NULL);
    run_large(T1("(32, 32)", "float32") "    return sum(a)\n", NULL, "_rf"); /* 1024: one thread */
    /* symbolic: a block's worth of partials (1024), each a chunk of the elements */
    run_large("def f(a: Tensor((\"n\", 512), \"float32\")):\n    return sum(a)\n", "_rf", NULL);
    run_large("def f(a: Tensor((\"n\", 10), \"float32\")):\n    return max(a, axis=0)\n", "_rf", NULL);
#undef T1
    whole_values = false;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_programs),
        cmocka_unit_test(test_row_lengths), cmocka_unit_test(test_many_row_inputs),
        cmocka_unit_test(test_argreduce_rows),
        cmocka_unit_test(test_flow_on_gpu),
        cmocka_unit_test(test_shuffle_lanes),
        cmocka_unit_test(test_host_vector_store),
        cmocka_unit_test(test_gpu_with_in_cuda_program),
        cmocka_unit_test(test_gpu_with_is_plain),
        cmocka_unit_test(test_cpu_with_in_cuda_program),
        cmocka_unit_test(test_flow_mixed),
        cmocka_unit_test(test_kernels_share_the_gpu),
        cmocka_unit_test(test_wrong_device),
        cmocka_unit_test(test_tir_sched_softmax),
        cmocka_unit_test(test_tir_sched_elementwise_chain),
        cmocka_unit_test(test_large_elementwise),
        cmocka_unit_test(test_split_reductions),
        cmocka_unit_test(test_gpu_programs),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
