/*
 * tune_bench.c -- autotuning against the default schedules, in one run
 * (scripts/bench.sh --tune; docs/performance.md, "Autotuning").
 *
 * For each workload: mt_tune (64 trials or 60 s, the budget of issue #18)
 * into one log, then the default kernel and the tuned one (compiled with
 * the log) are timed alternately, 11 rounds; each round's time is the
 * fastest of 15 samples of about 1 ms of warm runs, and the table shows the fastest
 * round (as the tuner times: other processes on a shared machine only add
 * time, so the fastest is the repeatable estimate).
 * A kernel whose record keeps the default is the same code as the
 * default: its ratio is the measurement's noise. The workloads are shapes where the default rules are not at
 * their best -- small and odd matmuls, skinny ones, softmax over narrow
 * rows -- and matmul 1024, where the default is tuned by hand and the
 * tuned kernel must stay within 5 %.
 *
 *   mt_tune_bench [--trials N] [--seconds S] [--log FILE] [NAME]
 *
 * NAME keeps the workloads whose name contains it. Markdown on stdout,
 * progress on stderr.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "minitriton.h"

typedef struct workload {
    const char *name;
    const char *src;
} workload;

#define MATMUL(m, k, n)                                                                   \
    "def mm(a: Tensor(shape=(" #m ", " #k "), dtype=\"float32\"), b: Tensor(shape=(" #k ", " #n \
    "), dtype=\"float32\")):\n    return a @ b\n"
#define BMM(b, m, k, n)                                                                              \
    "def bmm(a: Tensor(shape=(" #b ", " #m ", " #k "), dtype=\"float32\"), b: Tensor(shape=(" #b ", " #k \
    ", " #n "), dtype=\"float32\")):\n    return a @ b\n"
#define SOFTMAX(r, c)                                                    \
    "def sm(x: Tensor(shape=(" #r ", " #c "), dtype=\"float32\")):\n" \
    "    return softmax(x, axis=-1)\n"
#define ADD(n)                                                                                \
    "def add(x: Tensor(shape=(" #n ",), dtype=\"float32\"), y: Tensor(shape=(" #n ",), dtype=\"float32\")):\n" \
    "    return x * y + x\n"

static const workload workloads[] = {
    {"matmul 32x32x32", MATMUL(32, 32, 32)},
    {"matmul 64x64x64", MATMUL(64, 64, 64)},
    {"matmul 100x100x100", MATMUL(100, 100, 100)},
    {"matmul 257x257x257", MATMUL(257, 257, 257)},
    {"matmul 1000x1000x1000", MATMUL(1000, 1000, 1000)},
    {"skinny matmul 16x1024x1024", MATMUL(16, 1024, 1024)},
    {"skinny matmul 48x1024x1024", MATMUL(48, 1024, 1024)},
    {"skinny matmul 64x2048x512", MATMUL(64, 2048, 512)},
    {"batched matmul 64x32x32x32", BMM(64, 32, 32, 32)},
    {"softmax 16384x3", SOFTMAX(16384, 3)},
    {"softmax 8192x7", SOFTMAX(8192, 7)},
    {"softmax 8192x20", SOFTMAX(8192, 20)},
    {"softmax 4096x100", SOFTMAX(4096, 100)},
    {"elementwise 100000", ADD(100000)},
    {"matmul 1024x1024x1024", MATMUL(1024, 1024, 1024)},
};

enum { ROUNDS = 11, SAMPLES = 15 };

typedef struct io {
    mt_tensor *args[4], *out[4];
    int nargs, nres;
} io;

static void make_io(mt_kernel *k, io *x) {
    x->nargs = mt_kernel_num_params(k);
    x->nres = mt_kernel_num_results(k);
    for (int i = 0; i < x->nargs; i++) {
        int64_t shape[8];
        int nd = mt_kernel_param_ndim(k, i);
        for (int d = 0; d < nd; d++) shape[d] = mt_kernel_param_dim(k, i, d);
        x->args[i] = mt_tensor_create(MT_FLOAT32, nd, shape);
        float *p = mt_tensor_data(x->args[i]);
        for (int64_t j = 0; j < mt_tensor_numel(x->args[i]); j++) p[j] = (float)((j * 37 + i) % 101) / 50.0f - 1.0f;
    }
    for (int i = 0; i < x->nres; i++) {
        int64_t shape[8];
        int nd = mt_kernel_result_ndim(k, i);
        for (int d = 0; d < nd; d++) shape[d] = mt_kernel_result_dim(k, i, d);
        x->out[i] = mt_tensor_create(MT_FLOAT32, nd, shape);
    }
}

static void free_io(io *x) {
    for (int i = 0; i < x->nargs; i++) mt_tensor_release(x->args[i]);
    for (int i = 0; i < x->nres; i++) mt_tensor_release(x->out[i]);
}

static double run_ms(mt_kernel *k, io *x, int reps) {
    double t0 = now_s();
    for (int i = 0; i < reps; i++)
        if (mt_kernel_run(k, x->args, x->nargs, x->out, x->nres, NULL) != MT_OK) {
            fprintf(stderr, "run failed\n");
            exit(1);
        }
    return (now_s() - t0) * 1e3 / reps;
}

/* The fastest of SAMPLES samples of about 1 ms of warm runs. */
static double measure(mt_kernel *k, io *x) {
    run_ms(k, x, 1);
    double one = run_ms(k, x, 1);
    int reps = one >= 1.0 ? 1 : one < 1e-3 ? 1000 : (int)(1.0 / one);
    double best = 1e30;
    for (int i = 0; i < SAMPLES; i++) {
        double t = run_ms(k, x, reps);
        if (t < best) best = t;
    }
    return best;
}

/* The fastest round. */
static double fastest(const double *t) {
    double m = t[0];
    for (int r = 1; r < ROUNDS; r++)
        if (t[r] < m) m = t[r];
    return m;
}

static const char *tuned_knobs;
static char knobs_buf[512];

static void on_tuned(void *user, const mt_tune_result *r) {
    (void)user;
    size_t n = strlen(knobs_buf);
    snprintf(knobs_buf + n, sizeof knobs_buf - n, "%s%s", n ? "; " : "", r->knobs[0] ? r->knobs : "(default)");
    tuned_knobs = knobs_buf;
    fprintf(stderr, "  %s (%s): %d trials, %s\n", r->func, r->rule, r->trials, r->knobs[0] ? r->knobs : "(default)");
}

static mt_kernel *compile(mt_context *ctx, const char *src, const char *log) {
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.tuning_log = log;
    mt_diag d;
    mt_kernel *k = mt_jit_compile(ctx, src, &o, &d);
    if (!k) {
        fputs(d.text, stderr);
        exit(1);
    }
    return k;
}

/* k's scheduled TIR without the "knobs" attribute (free it). */
static char *sched_code(mt_kernel *k) {
    const char *s = mt_kernel_dump(k, MT_STAGE_TIR_SCHED), *key = "\"knobs\": \"";
    char *out = malloc(strlen(s) + 1), *o = out;
    while (*s) {
        const char *q = strstr(s, key);
        size_t n = q ? (size_t)(q - s) : strlen(s);
        memcpy(o, s, n);
        o += n;
        if (!q) break;
        const char *e = strchr(q + strlen(key), '"');
        s = e ? e + 1 : q + strlen(q);
        if (!strncmp(s, ", ", 2)) s += 2;
    }
    *o = 0;
    return out;
}

static void bench_one(mt_context *ctx, const workload *w, const mt_tune_options *to) {
    fprintf(stderr, "%s: tuning\n", w->name);
    tuned_knobs = NULL;
    knobs_buf[0] = 0;
    double t0 = now_s();
    mt_diag d;
    if (mt_tune(ctx, w->src, NULL, to, &d) != MT_OK) {
        fputs(d.text, stderr);
        exit(1);
    }
    double tune_s = now_s() - t0;
    mt_kernel *k0 = compile(ctx, w->src, NULL), *k1 = compile(ctx, w->src, to->log);
    io x;
    make_io(k0, &x);
    /* a record that keeps the default compiles to the default's code: the
     * same kernel, timed once (two copies of one code differ only by where
     * they and their buffers lie, and by the machine's noise) */
    char *c0 = sched_code(k0), *c1 = sched_code(k1);
    bool same = !strcmp(c0, c1);
    free(c0);
    free(c1);
    double t_def[ROUNDS], t_tun[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        t_def[r] = measure(k0, &x);
        t_tun[r] = same ? t_def[r] : measure(k1, &x);
    }
    double md = fastest(t_def), mtu = fastest(t_tun);
    printf("| %s | %.4f | %.4f | %.2fx%s | %.0f | %s |\n", w->name, md, mtu, md / mtu, same ? " (same code)" : "",
           tune_s, tuned_knobs ? tuned_knobs : "");
    fflush(stdout);
    free_io(&x);
    mt_kernel_release(k0);
    mt_kernel_release(k1);
}

int main(int argc, char **argv) {
    mt_tune_options to;
    mt_tune_options_init(&to);
    const char *filter = NULL, *log = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--trials") && i + 1 < argc) to.trials = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) to.seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--log") && i + 1 < argc) log = argv[++i];
        else filter = argv[i];
    }
    char tmp[64];
    snprintf(tmp, sizeof tmp, "/tmp/mt_tune_bench_%ld.jsonl", (long)getpid());
    to.log = log ? log : tmp;
    to.report = on_tuned;
    mt_context *ctx = mt_context_create(NULL);
    if (!ctx) return 1;
    char cpu[256];
    bench_cpu_model(cpu, sizeof cpu);
    printf("Autotuning: %s, %ld online CPUs; mt_tune with %d trials or %.0f s per kernel; "
           "times in ms, the fastest of %d rounds of the fastest of %d samples, default and tuned alternately.\n\n",
           cpu, sysconf(_SC_NPROCESSORS_ONLN), to.trials, to.seconds, ROUNDS, SAMPLES);
    printf("| workload | default ms | tuned ms | speedup | tuning s | knobs |\n");
    printf("| --- | ---: | ---: | ---: | ---: | --- |\n");
    for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++)
        if (!filter || strstr(workloads[i].name, filter)) bench_one(ctx, &workloads[i], &to);
    mt_context_destroy(ctx);
    if (!log) remove(tmp);
    return 0;
}
