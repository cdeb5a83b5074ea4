/*
 * tune.c -- exercise 2 of the tutorial (docs/tutorial.md, "13. Tuning"):
 * tune a kernel on this machine, then compare the tuned kernel with the
 * default one -- same results, less time.
 *
 *     example_tune [TRIALS] [LOG]      (defaults: 64, tuned.jsonl)
 *
 * The kernel is a softmax over rows of 7: the default row-reduction
 * schedule reads a row with 4 accumulators of a full vector register each,
 * far wider than the row; the tuner finds narrower vectors and fewer
 * accumulators (docs/performance.md, "Autotuning").
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "minitriton.h"

static const char *source =
    "def softmax_rows(x: Tensor(shape=(8192, 7), dtype=\"float32\")):\n"
    "    return softmax(x, axis=-1)\n";

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The fastest of 20 runs, in ms. */
static double time_ms(mt_kernel *k, mt_tensor *x, mt_tensor *out) {
    double best = 1e30;
    for (int i = 0; i < 20; i++) {
        double t0 = now_ms();
        mt_kernel_run(k, &x, 1, &out, 1, NULL);
        double t = now_ms() - t0;
        if (t < best) best = t;
    }
    return best;
}

static void report(void *user, const mt_tune_result *r) {
    (void)user;
    printf("tuned %s (%s) in %d trials: %s\n", r->func, r->rule, r->trials, r->knobs[0] ? r->knobs : "the default");
}

int main(int argc, char **argv) {
    mt_context *ctx = mt_context_create(NULL);
    if (!ctx) return 1;
    mt_tune_options to;
    mt_tune_options_init(&to);
    to.trials = argc > 1 ? atoi(argv[1]) : 64;
    to.log = argc > 2 ? argv[2] : "tuned.jsonl";
    to.report = report;
    mt_diag diag;
    mt_compile_options opts;
    mt_compile_options_init(&opts);
    if (mt_tune(ctx, source, &opts, &to, &diag) != MT_OK) {
        fputs(diag.text, stderr);
        return 1;
    }
    mt_kernel *def = mt_jit_compile(ctx, source, &opts, &diag);
    opts.tuning_log = to.log;
    mt_kernel *tuned = mt_jit_compile(ctx, source, &opts, &diag);
    if (!def || !tuned) {
        fputs(diag.text, stderr);
        return 1;
    }
    int64_t shape[2] = {8192, 7};
    mt_tensor *x = mt_tensor_create(MT_FLOAT32, 2, shape);
    mt_tensor *y0 = mt_tensor_create(MT_FLOAT32, 2, shape), *y1 = mt_tensor_create(MT_FLOAT32, 2, shape);
    float *px = mt_tensor_data(x);
    for (int i = 0; i < 8192 * 7; i++) px[i] = (float)(i % 13) / 4.0f - 1.5f;
    double t0 = time_ms(def, x, y0), t1 = time_ms(tuned, x, y1);
    float worst = 0, *a = mt_tensor_data(y0), *b = mt_tensor_data(y1);
    for (int i = 0; i < 8192 * 7; i++) {
        float d = a[i] > b[i] ? a[i] - b[i] : b[i] - a[i];
        if (d > worst) worst = d;
    }
    printf("default %.4f ms, tuned %.4f ms (%.2fx); largest difference %.1e\n", t0, t1, t0 / t1, worst);
    mt_tensor_release(x);
    mt_tensor_release(y0);
    mt_tensor_release(y1);
    mt_kernel_release(def);
    mt_kernel_release(tuned);
    mt_context_destroy(ctx);
    return worst < 1e-5f ? 0 : 1;
}
