/*
 * conv_bench.c -- conv2d against oneDNN, measured in the same run
 * (scripts/bench.sh --conv).
 *
 * The rows are ResNet-50's layers at 56 x 56: a 3x3 convolution 64 -> 64
 * with padding 1, and the bottleneck's 1x1 convolutions 256 -> 64 and
 * 64 -> 256, at batch 1 and 32 (`--quick`: batch 8 instead of 32), plus
 * the 3x3 and the 1x1 256 -> 64 layers with their bias and relu fused. float32, NCHW input and output, OIHW weight. Each row runs
 * with 2 threads (`--threads N` for another count; with 1 the clock is the
 * thread's CPU time, which both sides then run on) and shows:
 *
 *   - minitriton: the median of mt_kernel_run (the conv rule,
 *     src/schedule/rule_conv.c), in ms and GFLOP/s (2 * N * O * OH * OW *
 *     C/groups * KH * KW flops);
 *   - oneDNN (libdnnl, the C API of dnnl.h), its threads set to the row's
 *     through OpenMP (its runtime in Debian's build), in two forms:
 *       plain:   the convolution primitive on the same NCHW / OIHW buffers
 *                (what oneDNN runs when handed plain layouts);
 *       blocked: the primitive with layouts of its own choosing (format
 *                `any`: nChw8c on AVX2), the reorders into and out of them
 *                done once outside the timing -- oneDNN's best case, not a
 *                like-for-like call;
 *     and our speed as a share of each (ratio = their time / ours, each
 *     against our median from the same alternating blocks; the minitriton
 *     column shows the one measured against the plain form).
 *
 * The kernel and oneDNN alternate in blocks of back-to-back calls (untimed
 * calls for 5 ms, at least one, then 5 timed ones, a 10 ms pause between
 * blocks), and the
 * medians are compared, so that both see the same load on this shared
 * machine. Each result is checked against oneDNN's (and, at batch 1 without
 * oneDNN, a double reference at sampled points): WRONG when it differs.
 *
 * Built without oneDNN (dnnl.h not found by CMake) it still runs and prints
 * "oneDNN missing" in the reference columns. Output: a Markdown table on
 * stdout (docs/performance.md quotes it), progress on stderr.
 * `mt_conv_bench NAME` runs the rows whose name contains NAME.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "minitriton.h"

#ifdef MT_HAVE_DNNL
#include <dnnl.h>
#endif

static void die(const char *what) {
    fprintf(stderr, "mt_conv_bench: %s\n", what);
    exit(1);
}

typedef struct row {
    const char *name;
    int64_t n, c, h, w, o, k, pad;
    bool bias_relu;
} row;

static const row ROWS[] = {
    {"3x3 64->64 56x56 b1", 1, 64, 56, 56, 64, 3, 1, false},
    {"3x3 64->64 56x56 b1 +bias+relu", 1, 64, 56, 56, 64, 3, 1, true},
    {"1x1 256->64 56x56 b1", 1, 256, 56, 56, 64, 1, 0, false},
    {"1x1 256->64 56x56 b1 +bias+relu", 1, 256, 56, 56, 64, 1, 0, true},
    {"1x1 64->256 56x56 b1", 1, 64, 56, 56, 256, 1, 0, false},
    {"3x3 64->64 56x56 bB", 32, 64, 56, 56, 64, 3, 1, false},
    {"1x1 256->64 56x56 bB", 32, 256, 56, 56, 64, 1, 0, false},
    {"1x1 64->256 56x56 bB", 32, 64, 56, 56, 256, 1, 0, false},
};
enum { NROWS = sizeof ROWS / sizeof ROWS[0], PER = 5 };

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static float frand(void) { /* uniform in [-1, 1) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)(rng_state >> 40) * 0x1p-23f - 1.0f;
}

/* n random floats; from 2 MiB on in huge pages, as NumPy allocates its
 * arrays (and mt_tensor_create its tensors); both sides run on them. */
static float *rand_buf(int64_t n) {
    size_t huge = (size_t)2 << 20, bytes = (size_t)((n * 4 + 63) / 64 * 64);
    bool big = bytes >= huge;
    if (big) bytes = (bytes + huge - 1) / huge * huge;
    float *p = aligned_alloc(big ? huge : 64, bytes);
    if (!p) die("out of memory");
    if (big) madvise(p, bytes, MADV_HUGEPAGE);
    for (int64_t i = 0; i < n; i++) p[i] = frand();
    return p;
}

typedef struct shape {
    int64_t n, c, h, w, o, k, pad, oh, ow;
} shape;

static shape shape_of(const row *r, int64_t batch) {
    shape s = {batch, r->c, r->h, r->w, r->o, r->k, r->pad, 0, 0};
    s.oh = s.h + 2 * s.pad - s.k + 1;
    s.ow = s.w + 2 * s.pad - s.k + 1;
    return s;
}

/* ---- minitriton ----------------------------------------------------------------- */

typedef struct ours {
    mt_kernel *k;
    mt_tensor *args[3];
    mt_tensor *out;
} ours;

static void ours_make(ours *o, mt_context *ctx, const row *r, const shape *s, float *x, float *w, float *b,
                      float *y) {
    char src[1024], bias[64] = "";
    if (r->bias_relu) snprintf(bias, sizeof bias, ", b: Tensor((%lld, 1, 1), \"float32\")", (long long)s->o);
    snprintf(src, sizeof src,
             "def f(x: Tensor((%lld, %lld, %lld, %lld), \"float32\"), w: Tensor((%lld, %lld, %lld, %lld), \"float32\")%s):\n"
             "    y = conv2d(x, w, padding=%lld)\n%s    return y\n",
             (long long)s->n, (long long)s->c, (long long)s->h, (long long)s->w, (long long)s->o, (long long)s->c,
             (long long)s->k, (long long)s->k, bias,
             (long long)s->pad, r->bias_relu ? "    y = relu(y + b)\n" : "");
    mt_diag d;
    o->k = mt_jit_compile(ctx, src, NULL, &d);
    if (!o->k) {
        fprintf(stderr, "%s\n", d.text);
        die("compile failed");
    }
    int64_t xd[4] = {s->n, s->c, s->h, s->w}, wd[4] = {s->o, s->c, s->k, s->k}, bd[3] = {s->o, 1, 1},
            yd[4] = {s->n, s->o, s->oh, s->ow};
    o->args[0] = mt_tensor_wrap(x, MT_FLOAT32, 4, xd, NULL);
    o->args[1] = mt_tensor_wrap(w, MT_FLOAT32, 4, wd, NULL);
    o->args[2] = r->bias_relu ? mt_tensor_wrap(b, MT_FLOAT32, 3, bd, NULL) : NULL;
    o->out = mt_tensor_wrap(y, MT_FLOAT32, 4, yd, NULL);
}

static void ours_run(void *p) {
    ours *o = p;
    mt_diag d;
    int nargs = o->args[2] ? 3 : 2;
    if (mt_kernel_run(o->k, o->args, nargs, &o->out, 1, &d) != MT_OK) {
        fprintf(stderr, "%s\n", d.text);
        die("run failed");
    }
}

static void ours_free(ours *o) {
    for (int i = 0; i < 3; i++)
        if (o->args[i]) mt_tensor_release(o->args[i]);
    mt_tensor_release(o->out);
    mt_kernel_release(o->k);
}

/* ---- oneDNN ------------------------------------------------------------------------ */

#ifdef MT_HAVE_DNNL
typedef struct ref {
    dnnl_engine_t eng;
    dnnl_stream_t st;
    dnnl_primitive_t conv;
    dnnl_memory_t src, wei, bia, dst;   /* what the primitive runs on */
    dnnl_memory_t usr_dst;              /* blocked: the NCHW result */
    dnnl_primitive_t back;              /* blocked: dst -> usr_dst */
    bool ok;
} ref;

#define DN(call)                                                   \
    do {                                                           \
        if ((call) != dnnl_success) die("oneDNN call failed: " #call); \
    } while (0)

static dnnl_memory_t mem(ref *r, const dnnl_memory_desc_t *md, void *p) {
    dnnl_memory_t m;
    DN(dnnl_memory_create(&m, md, r->eng, p ? p : DNNL_MEMORY_ALLOCATE));
    return m;
}

/* m's data in the layout md (a reorder when it differs), as a new memory. */
static dnnl_memory_t reordered(ref *r, dnnl_memory_t m, const dnnl_memory_desc_t *md) {
    const dnnl_memory_desc_t *have;
    DN(dnnl_memory_get_memory_desc(m, &have));
    if (dnnl_memory_desc_equal(have, md)) return m;
    dnnl_memory_t out = mem(r, md, NULL);
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t p;
    DN(dnnl_reorder_primitive_desc_create(&pd, have, r->eng, md, r->eng, NULL));
    DN(dnnl_primitive_create(&p, pd));
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, m}, {DNNL_ARG_TO, out}};
    DN(dnnl_primitive_execute(p, r->st, 2, args));
    DN(dnnl_stream_wait(r->st));
    dnnl_primitive_destroy(p);
    dnnl_primitive_desc_destroy(pd);
    return out;
}

static void ref_make(ref *r, const row *rw, const shape *s, bool blocked, float *x, float *w, float *b, float *y) {
    memset(r, 0, sizeof *r);
    DN(dnnl_engine_create(&r->eng, dnnl_cpu, 0));
    DN(dnnl_stream_create(&r->st, r->eng, dnnl_stream_default_flags));
    dnnl_dims_t xd = {s->n, s->c, s->h, s->w}, wd = {s->o, s->c, s->k, s->k}, bd = {s->o},
                yd = {s->n, s->o, s->oh, s->ow}, st = {1, 1}, pad = {s->pad, s->pad};
    dnnl_memory_desc_t ux, uw, ub, uy, cx, cw, cy;
    DN(dnnl_memory_desc_init_by_tag(&ux, 4, xd, dnnl_f32, dnnl_nchw));
    DN(dnnl_memory_desc_init_by_tag(&uw, 4, wd, dnnl_f32, dnnl_oihw));
    DN(dnnl_memory_desc_init_by_tag(&ub, 1, bd, dnnl_f32, dnnl_x));
    DN(dnnl_memory_desc_init_by_tag(&uy, 4, yd, dnnl_f32, dnnl_nchw));
    dnnl_format_tag_t any = dnnl_format_tag_any;
    DN(dnnl_memory_desc_init_by_tag(&cx, 4, xd, dnnl_f32, blocked ? any : dnnl_nchw));
    DN(dnnl_memory_desc_init_by_tag(&cw, 4, wd, dnnl_f32, blocked ? any : dnnl_oihw));
    DN(dnnl_memory_desc_init_by_tag(&cy, 4, yd, dnnl_f32, blocked ? any : dnnl_nchw));
    dnnl_convolution_desc_t cd;
    DN(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &cx, &cw,
                                          rw->bias_relu ? &ub : NULL, &cy, st, pad, pad));
    dnnl_primitive_attr_t attr;
    DN(dnnl_primitive_attr_create(&attr));
    if (rw->bias_relu) {
        dnnl_post_ops_t po;
        DN(dnnl_post_ops_create(&po));
        DN(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
        DN(dnnl_primitive_attr_set_post_ops(attr, po));
        dnnl_post_ops_destroy(po);
    }
    dnnl_primitive_desc_t pd;
    if (dnnl_primitive_desc_create(&pd, &cd, attr, r->eng, NULL) != dnnl_success) {
        dnnl_primitive_attr_destroy(attr);
        return; /* r->ok stays false */
    }
    dnnl_primitive_attr_destroy(attr);
    DN(dnnl_primitive_create(&r->conv, pd));
    dnnl_memory_t mx = mem(r, &ux, x), mw = mem(r, &uw, w);
    r->src = reordered(r, mx, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0));
    r->wei = reordered(r, mw, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0));
    if (r->src != mx) dnnl_memory_destroy(mx);
    if (r->wei != mw) dnnl_memory_destroy(mw);
    r->bia = rw->bias_relu ? mem(r, &ub, b) : NULL;
    const dnnl_memory_desc_t *ydesc = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    r->usr_dst = mem(r, &uy, y);
    if (dnnl_memory_desc_equal(ydesc, &uy)) {
        r->dst = r->usr_dst;
    } else {
        r->dst = mem(r, ydesc, NULL);
        dnnl_primitive_desc_t bpd;
        DN(dnnl_reorder_primitive_desc_create(&bpd, ydesc, r->eng, &uy, r->eng, NULL));
        DN(dnnl_primitive_create(&r->back, bpd));
        dnnl_primitive_desc_destroy(bpd);
    }
    dnnl_primitive_desc_destroy(pd);
    r->ok = true;
}

static void ref_run(void *p) {
    ref *r = p;
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, r->src}, {DNNL_ARG_WEIGHTS, r->wei}, {DNNL_ARG_DST, r->dst},
                               {DNNL_ARG_BIAS, r->bia}};
    DN(dnnl_primitive_execute(r->conv, r->st, r->bia ? 4 : 3, args));
    DN(dnnl_stream_wait(r->st));
}

/* The blocked result into the NCHW buffer (outside the timing). */
static void ref_finish(ref *r) {
    if (!r->back) return;
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, r->dst}, {DNNL_ARG_TO, r->usr_dst}};
    DN(dnnl_primitive_execute(r->back, r->st, 2, args));
    DN(dnnl_stream_wait(r->st));
}

static void ref_free(ref *r) {
    if (!r->ok) return;
    dnnl_primitive_destroy(r->conv);
    if (r->back) dnnl_primitive_destroy(r->back);
    dnnl_memory_destroy(r->src);
    dnnl_memory_destroy(r->wei);
    if (r->bia) dnnl_memory_destroy(r->bia);
    if (r->dst != r->usr_dst) dnnl_memory_destroy(r->dst);
    dnnl_memory_destroy(r->usr_dst);
    dnnl_stream_destroy(r->st);
    dnnl_engine_destroy(r->eng);
}

/* oneDNN's threads: OpenMP's, through the runtime libdnnl loaded. */
static void ref_threads(int n) {
    void (*set)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    if (set) set(n);
}

static const char *ref_version(void) {
    static char buf[32];
    const dnnl_version_t *v = dnnl_version();
    snprintf(buf, sizeof buf, "%d.%d.%d", v->major, v->minor, v->patch);
    return buf;
}
#endif

/* ---- timing --------------------------------------------------------------------------- */

typedef void (*work_fn)(void *);

/* The clock: wall time, or with one thread the calling thread's CPU time
 * (both sides then run on it alone), which leaves out the time the thread
 * was descheduled on this shared machine. */
static bool cpu_clock;
static double tick(void) {
    if (!cpu_clock) return now_s();
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Untimed calls of fn for WARM_S at least (one at least): after the pause
 * between blocks the second vCPU of this VM takes about 2 ms to run a
 * woken worker again (docs/performance.md, "Waking workers"), so one
 * untimed call of a 0.2 ms kernel left the block's timed calls to one
 * thread; a loop of calls does not pay that. */
enum { WARM_MS = 5 };
static void warm(work_fn fn, void *arg) {
    double t0 = now_s();
    do fn(arg);
    while (now_s() - t0 < WARM_MS * 1e-3);
}

/* Medians of ref and fn, alternating in blocks of PER timed calls after
 * warm()'s untimed ones, a 10 ms pause between blocks; at least min_reps
 * each, then until budget_s. ref NULL: fn alone. */
static void time_pair(work_fn ref_fn, void *ref_arg, work_fn fn, void *arg, int min_reps, double budget_s,
                      double *ref_s, double *fn_s) {
    enum { MAXR = 400 };
    double t[MAXR], tr[MAXR];
    int n = 0;
    double start = now_s();
    while (n + PER <= MAXR && (n < min_reps || now_s() - start < budget_s)) {
        if (ref_fn) {
            warm(ref_fn, ref_arg);
            for (int i = 0; i < PER; i++) {
                double t0 = tick();
                ref_fn(ref_arg);
                tr[n + i] = tick() - t0;
            }
            usleep(10 * 1000);
        }
        warm(fn, arg);
        for (int i = 0; i < PER; i++) {
            double t0 = tick();
            fn(arg);
            t[n + i] = tick() - t0;
        }
        usleep(10 * 1000);
        n += PER;
    }
    *fn_s = median(t, n);
    *ref_s = ref_fn ? median(tr, n) : 0;
}

/* ---- checking ------------------------------------------------------------------------- */

/* |a - b| <= 1e-4 * (1 + |b|) everywhere (float32 sums of 576..2304
 * products in different orders). */
static bool same(const float *a, const float *b, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (!(fabsf(a[i] - b[i]) <= 1e-4f * (1 + fabsf(b[i])))) return false;
    return true;
}

/* A double reference at 64 sampled output points (when oneDNN is missing). */
static bool sampled(const shape *s, const float *x, const float *w, const float *b, bool relu, const float *y) {
    int64_t total = s->n * s->o * s->oh * s->ow;
    for (int q = 0; q < 64; q++) {
        int64_t i = (int64_t)(((uint64_t)q * 2654435761u) % (uint64_t)total);
        int64_t ow = i % s->ow, oh = i / s->ow % s->oh, o = i / (s->ow * s->oh) % s->o, n = i / (s->ow * s->oh * s->o);
        double acc = b ? b[o] : 0;
        for (int64_t c = 0; c < s->c; c++)
            for (int64_t kh = 0; kh < s->k; kh++)
                for (int64_t kw = 0; kw < s->k; kw++) {
                    int64_t ih = oh + kh - s->pad, iw = ow + kw - s->pad;
                    if (ih < 0 || ih >= s->h || iw < 0 || iw >= s->w) continue;
                    acc += (double)x[((n * s->c + c) * s->h + ih) * s->w + iw] * w[((o * s->c + c) * s->k + kh) * s->k + kw];
                }
        if (relu && acc < 0) acc = 0;
        if (!(fabs(y[i] - acc) <= 1e-4 * (1 + fabs(acc)))) return false;
    }
    return true;
}

/* ---- main ------------------------------------------------------------------------------- */

static void fmt_ratio(char *buf, size_t cap, double ref_s, double ours_s, bool ok) {
    if (!ok) snprintf(buf, cap, "oneDNN missing");
    else snprintf(buf, cap, "%.2f ms, **%.2f**", ref_s * 1e3, ref_s / ours_s);
}

int main(int argc, char **argv) {
    int threads = 2;
    bool quick = false;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else only = argv[i];
    }
    int64_t big_batch = quick ? 8 : 32;
    cpu_clock = threads == 1;
    char cpu[256], date[64];
    bench_cpu_model(cpu, sizeof cpu);
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    double load[1] = {0};
    getloadavg(load, 1);
    printf("# conv2d: minitriton against oneDNN\n\n");
    printf("%s, %s, %d thread%s, load %.1f at the start; float32 NCHW / OIHW; medians of blocks of %d calls (%s).\n",
           date, cpu, threads, threads > 1 ? "s" : "", load[0], PER, cpu_clock ? "thread CPU time" : "wall time");
#ifdef MT_HAVE_DNNL
    printf("oneDNN %s (libdnnl, OpenMP threads = %d). ratio = oneDNN's time / ours (> 1: we are faster).\n\n",
           ref_version(), threads);
    ref_threads(threads);
#else
    printf("oneDNN missing: built without dnnl.h (install libdnnl-dev and rebuild); minitriton alone.\n\n");
#endif
    printf("| layer | batch | minitriton | GFLOP/s | oneDNN plain (NCHW) | oneDNN blocked (its layouts) | check |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- |\n");
    mt_context_options co = {0};
    co.num_threads = threads;
    mt_context *ctx = mt_context_create(&co);
    if (!ctx) die("no context");
    for (int i = 0; i < NROWS; i++) {
        const row *r = &ROWS[i];
        if (only && !strstr(r->name, only)) continue;
        shape s = shape_of(r, r->n == 1 ? 1 : big_batch);
        fprintf(stderr, "mt_conv_bench: %s (batch %lld)\n", r->name, (long long)s.n);
        int64_t nx = s.n * s.c * s.h * s.w, nw = s.o * s.c * s.k * s.k, ny = s.n * s.o * s.oh * s.ow;
        float *x = rand_buf(nx), *w = rand_buf(nw), *b = rand_buf(s.o), *y = rand_buf(ny), *yr = rand_buf(ny);
        double flops = 2.0 * (double)ny * (double)(s.c * s.k * s.k);
        ours o;
        ours_make(&o, ctx, r, &s, x, w, b, y);
        double t_ours = 0, t_plain = 0, t_blk = 0, t_op = 0, t_ob = 0;
        bool ok_plain = false, ok_blk = false, right = true;
        int min_reps = s.n > 1 ? 10 : 40;
        double budget = s.n > 1 ? 4.0 : 2.0;
#ifdef MT_HAVE_DNNL
        for (int blocked = 0; blocked < 2; blocked++) {
            ref rf;
            ref_make(&rf, r, &s, blocked, x, w, b, yr);
            if (!rf.ok) continue;
            time_pair(ref_run, &rf, ours_run, &o, min_reps, budget, blocked ? &t_blk : &t_plain,
                      blocked ? &t_ob : &t_op);
            ref_finish(&rf);
            right = right && same(y, yr, ny);
            if (blocked) ok_blk = true;
            else ok_plain = true;
            ref_free(&rf);
        }
#endif
        t_ours = ok_plain ? t_op : t_ob;
        if (!ok_plain && !ok_blk) {
            double unused;
            time_pair(NULL, NULL, ours_run, &o, min_reps, budget, &unused, &t_ours);
            right = s.n > 1 || sampled(&s, x, w, r->bias_relu ? b : NULL, r->bias_relu, y);
        }
        char cp[64], cb[64];
        fmt_ratio(cp, sizeof cp, t_plain, t_op, ok_plain); /* each against ours in the same blocks */
        fmt_ratio(cb, sizeof cb, t_blk, t_ob, ok_blk);
        printf("| %s | %lld | %.2f ms | %.0f | %s | %s | %s |\n", r->name, (long long)s.n, t_ours * 1e3,
               flops / t_ours * 1e-9, cp, cb, right ? "ok" : "**WRONG**");
        fflush(stdout);
        ours_free(&o);
        free(x), free(w), free(b), free(y), free(yr);
    }
    mt_context_destroy(ctx);
    struct utsname u;
    if (uname(&u) == 0) printf("\nMachine: %s %s, %ld CPUs online.\n", u.sysname, u.release, sysconf(_SC_NPROCESSORS_ONLN));
    return 0;
}
