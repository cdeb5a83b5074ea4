/*
 * bench.c -- minitriton's CPU benchmark (run it with scripts/bench.sh).
 *
 * One run measures the machine's references and minitriton against them, in
 * the same process, because the machine is shared and noisy: absolute
 * figures move by 10 % and more between runs, ratios measured together move
 * much less.
 *
 *   1. Memory bandwidth: a STREAM-like add c = a + b over three 64 MiB
 *      arrays, on 1 and 2 threads (pthreads), best of several passes. Bytes
 *      are counted as STREAM counts them: every array once (reads and the
 *      write; not the write-allocate read of c).
 *   2. The fp32 FMA peak on 1 and 2 threads (fma_peak.c): what matmul's and
 *      the MLP's GFLOP/s are also shown against.
 *   3. OpenBLAS sgemm at N = 1024 and 2048 on 1 and 2 threads, and the MLP
 *      784-128-10 at batch 4096 done the NumPy way (two sgemm calls, bias and
 *      relu in C). OpenBLAS is loaded with dlopen, so building this program
 *      does not need it; without it those rows say why they are missing.
 *      Then NumPy's MLP at batch 4096 and 1 (numpy_ref.c runs numpy_mlp.py in
 *      a python3 with OPENBLAS_NUM_THREADS = 1 and 2): the MLP goal is to be
 *      faster than NumPy, whose time moves with the host.
 *   4. minitriton on the kernels of the performance issue, each in a context
 *      with num_threads = 1 and one with num_threads = 2: the time of
 *      mt_kernel_run (median of the repetitions after a warm-up), its rate,
 *      the reference (for memory-bound kernels the floor: the bytes that
 *      must move divided by the bandwidth; for matmul OpenBLAS), the ratio,
 *      and the goal. A row alternates its reference and the kernel in
 *      blocks of back-to-back runs (time_pair) and compares their medians,
 *      so that both see the same load on the machine; pauses between blocks
 *      let spinning worker threads (OpenBLAS's are told to sleep at once;
 *      minitriton's spin at most 5 us) go to sleep before the other side
 *      runs. Each result is spot-checked
 *      against a scalar reference in double: a kernel that computes the wrong
 *      thing is marked WRONG, whatever its speed.
 *      Also the MLP with gelu in place of relu at batch 4096, timed alone (no
 *      reference, no goal): the run time of a matmul whose epilogue runs in
 *      the rule's loop over the tile (docs/schedule.md, issue 17).
 *   5. Compile latency per kernel (and, in five fresh processes started for
 *      it, `mt_bench --first-compile I`, a default context and the first
 *      compile): the first compile in the process, in the 1-thread context
 *      (the first one also pays for LLVM's one-time work), a warm compile
 *      (the same source again in a context with the default thread count
 *      and the cache off; median of 3, with its phases from
 *      mt_kernel_compile_times), and a cached compile (the same source and
 *      options again in the same context; median of many). The table also
 *      has kernels that are only compiled, never run: matmul 64x128x32
 *      alone and with a bias and relu, gelu, sigmoid, tanh, exp or
 *      tanh(.) * 2 + 1 after it, and 1024^3 with gelu and with the chain
 *      (an epilogue of expanded math once cost 5x the matmul's compile).
 *   6. The disk cache on the MLP: `mt_bench --disk-compile I DIR` (a fresh
 *      process, a default context over the cache directory DIR, one compile)
 *      once over an empty directory (the cold compile, which writes the
 *      entry), then DISK_RUNS times finding it (disk hits: median and
 *      fastest, with phases), then DISK_RUNS fresh contexts in this process.
 *
 * Inputs live in three 64 MiB buffers filled once (huge pages where the
 * kernel gives them: a fresh 64 MiB buffer costs 165 ms of page faults with
 * 4 KiB pages) and every kernel wraps views of them; results are written
 * into caller-provided tensors, so no allocation is timed. The whole run
 * takes one to three minutes (more when the machine is busy); each
 * measurement stops after a time budget.
 *
 * Output: Markdown tables on stdout (docs/performance.md quotes them),
 * progress on stderr. `mt_bench NAME` runs only the kernels whose name
 * contains NAME (the references are still measured).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "fma_peak.h"
#include "numpy_ref.h"
#include "stream.h"
#include "minitriton.h"

/* ---- time and statistics ---------------------------------------------------- */

static void die(const char *what) {
    fprintf(stderr, "mt_bench: %s\n", what);
    exit(1);
}

/* ---- buffers ------------------------------------------------------------------ */

#define BIG_N ((int64_t)16 * 1024 * 1024) /* floats in each big buffer: 64 MiB */

static float *big_alloc(void) {
    size_t bytes = (size_t)BIG_N * sizeof(float);
    float *p = aligned_alloc(2u << 20, bytes);
    if (!p) die("out of memory");
    madvise(p, bytes, MADV_HUGEPAGE);
    return p;
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

/* Uniform in [-1, 1). */
static float frand(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)(rng_state >> 40) * 0x1p-23f - 1.0f;
}

static float *small_alloc(int64_t n, float scale) {
    float *p = aligned_alloc(64, (size_t)((n * 4 + 63) / 64 * 64));
    if (!p) die("out of memory");
    for (int64_t i = 0; i < n; i++) p[i] = frand() * scale;
    return p;
}

static float *A, *B, *C; /* the three big buffers */

/* ---- memory bandwidth (STREAM add) ------------------------------------------- */

enum { STREAM_PASSES = 12 };

/* One pass of c = a + b on `threads` threads (stream.c; creating a thread
 * costs microseconds, a pass milliseconds). */
static void stream_once(void *p) { stream_add_pass(C, A, B, BIG_N, *(int *)p); }

/* Best-of bandwidth in GB/s of c = a + b on `threads` threads (the first
 * pass is a warm-up). */
static double stream_add(int threads) { return stream_add_gbs(C, A, B, BIG_N, threads, STREAM_PASSES); }

/* ---- OpenBLAS ------------------------------------------------------------------ */

enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);

static struct {
    void *lib;
    sgemm_fn sgemm;
    void (*set_threads)(int);
    char *(*config)(void);
    char *(*corename)(void);
    char why[512]; /* why it is missing */
} blas;

static void blas_load(void) {
    const char *names[] = {"libopenblas.so.0", "libopenblas.so", "libopenblasp.so.0"};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !blas.lib; i++)
        blas.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!blas.lib) {
        snprintf(blas.why, sizeof blas.why,
                 "OpenBLAS not found (%s); install libopenblas-dev (scripts/bench.sh does)",
                 dlerror());
        return;
    }
    blas.sgemm = (sgemm_fn)dlsym(blas.lib, "cblas_sgemm");
    blas.set_threads = (void (*)(int))dlsym(blas.lib, "openblas_set_num_threads");
    blas.config = (char *(*)(void))dlsym(blas.lib, "openblas_get_config");
    blas.corename = (char *(*)(void))dlsym(blas.lib, "openblas_get_corename");
    if (!blas.sgemm || !blas.set_threads) {
        snprintf(blas.why, sizeof blas.why, "libopenblas lacks cblas_sgemm or openblas_set_num_threads");
        dlclose(blas.lib);
        blas.lib = NULL;
    }
}

/* ---- timing a piece of work ------------------------------------------------------- */

typedef void (*work_fn)(void *);

/* Median seconds of fn(arg) after `warm` warm-up calls: at least min_reps
 * repetitions, then until budget_s has passed or max_reps are done. */
static double time_work(work_fn fn, void *arg, int warm, int min_reps, int max_reps,
                        double budget_s) {
    for (int i = 0; i < warm; i++) fn(arg);
    double *t = malloc(sizeof *t * (size_t)max_reps);
    if (!t) die("out of memory");
    int n = 0;
    double start = now_s();
    while (n < max_reps && (n < min_reps || now_s() - start < budget_s)) {
        double t0 = now_s();
        fn(arg);
        t[n++] = now_s() - t0;
    }
    double m = median(t, n);
    free(t);
    return m;
}

typedef struct sgemm_arg {
    int n;
} sgemm_arg;

static void run_sgemm(void *p) {
    int n = ((sgemm_arg *)p)->n;
    blas.sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, n, n, n, 1.0f, A, n, B, n, 0.0f,
               C, n);
}

/* ---- the MLP's weights and the NumPy-style reference ------------------------------ */

enum { MLP_IN = 784, MLP_HID = 128, MLP_OUT = 10, MLP_BATCH = 4096 };
static float *W0, *B0, *W1, *B1, *H, *BIAS; /* BIAS: matmul+bias+relu's (2048,) */
static float X1[MLP_IN], OUT1[MLP_OUT];     /* batch 1 */

static void run_blas_mlp(void *p) {
    (void)p;
    blas.sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_TRANS, MLP_BATCH, MLP_HID, MLP_IN, 1.0f, A,
               MLP_IN, W0, MLP_IN, 0.0f, H, MLP_HID);
    for (int r = 0; r < MLP_BATCH; r++)
        for (int j = 0; j < MLP_HID; j++) {
            float v = H[r * MLP_HID + j] + B0[j];
            H[r * MLP_HID + j] = v > 0 ? v : 0;
        }
    blas.sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_TRANS, MLP_BATCH, MLP_OUT, MLP_HID, 1.0f, H,
               MLP_HID, W1, MLP_HID, 0.0f, C, MLP_OUT);
    for (int r = 0; r < MLP_BATCH; r++)
        for (int j = 0; j < MLP_OUT; j++) C[r * MLP_OUT + j] += B1[j];
}

/* ---- the minitriton kernels --------------------------------------------------------- */

typedef enum kind {
    K_ADD,   /* add chain: goal >= 90 % of bandwidth */
    K_EXP,   /* exp chain: goal >= 75 % of bandwidth */
    K_SMAX,  /* softmax: goal <= 2x the floor */
    K_LNORM, /* layer_norm: goal <= 2x the floor */
    K_MM,    /* matmul: goal >= 90 % of OpenBLAS at the same N and threads */
    K_MMBR,  /* matmul + bias + relu: >= 90 % of OpenBLAS sgemm alone */
    K_MLP,   /* MLP batch 4096: < 3.9 ms (NumPy + SkylakeX BLAS, 2 threads) */
    K_MLP1,  /* MLP batch 1 per call: <= 3 us */
    K_MLPG,  /* the MLP with gelu, batch 4096: timed alone, no goal */
    K_COMPILE, /* compiled only: a row of the compile-latency table */
} kind;

typedef struct kspec {
    const char *name;
    kind kind;
    const char *src;
    int n; /* matmul size */
} kspec;

#define F32(shape) "Tensor(" shape ", \"float32\")"

static const kspec KERNELS[] = {
    {"add chain 16M (a + b + a)", K_ADD,
     "def add_chain(a: " F32("(16777216,)") ", b: " F32("(16777216,)") "):\n"
     "    out = a + b\n"
     "    out = out + a\n"
     "    return out\n", 0},
    {"exp chain 16M (exp(a) * b + 1)", K_EXP,
     "def exp_chain(a: " F32("(16777216,)") ", b: " F32("(16777216,)") "):\n"
     "    return exp(a) * b + 1.0\n", 0},
    {"softmax 4096x4096", K_SMAX,
     "def row_softmax(x: " F32("(4096, 4096)") "):\n"
     "    return softmax(x, axis=-1)\n", 0},
    {"layer_norm 4096x4096", K_LNORM,
     "def lnorm(x: " F32("(4096, 4096)") ", g: " F32("(4096,)") ", b: " F32("(4096,)") "):\n"
     "    return layer_norm(x, g, b)\n", 0},
    {"matmul 1024^3", K_MM,
     "def mm1024(a: " F32("(1024, 1024)") ", b: " F32("(1024, 1024)") "):\n"
     "    return a @ b\n", 1024},
    {"matmul 2048^3", K_MM,
     "def mm2048(a: " F32("(2048, 2048)") ", b: " F32("(2048, 2048)") "):\n"
     "    return a @ b\n", 2048},
    {"matmul 2048^3 + bias + relu", K_MMBR,
     "def mm_bias_relu(a: " F32("(2048, 2048)") ", b: " F32("(2048, 2048)")
     ", bias: " F32("(2048,)") "):\n"
     "    return relu(a @ b + bias)\n", 2048},
    {"MLP 784-128-10, batch 4096", K_MLP,
     "def mlp(x: " F32("(4096, 784)") ", w0: " F32("(128, 784)") ", b0: " F32("(128,)")
     ", w1: " F32("(10, 128)") ", b1: " F32("(10,)") "):\n"
     "    return relu(x @ w0.T + b0) @ w1.T + b1\n", 0},
    {"MLP 784-128-10, batch 1", K_MLP1,
     "def mlp1(x: " F32("(1, 784)") ", w0: " F32("(128, 784)") ", b0: " F32("(128,)")
     ", w1: " F32("(10, 128)") ", b1: " F32("(10,)") "):\n"
     "    return relu(x @ w0.T + b0) @ w1.T + b1\n", 0},
    {"MLP 784-128-10 with gelu, batch 4096", K_MLPG,
     "def mlp_gelu(x: " F32("(4096, 784)") ", w0: " F32("(128, 784)") ", b0: " F32("(128,)")
     ", w1: " F32("(10, 128)") ", b1: " F32("(10,)") "):\n"
     "    return gelu(x @ w0.T + b0) @ w1.T + b1\n", 0},
    /* compile only (issue 17): matmul with epilogues of expanded math */
#define MM_EPI(name, m, n, k, body)                                                              \
    {name, K_COMPILE,                                                                             \
     "def mm_epi(x: " F32("(" #m ", " #k ")") ", w: " F32("(" #k ", " #n ")") ", b: " F32("(" #n ",)") \
     "):\n    return " body "\n", 0}
    {"matmul 64x128x32 (compile only)", K_COMPILE,
     "def mm_small(x: " F32("(64, 32)") ", w: " F32("(32, 128)") "):\n    return x @ w\n", 0},
    MM_EPI("matmul 64x128x32 + bias + relu", 64, 128, 32, "relu(x @ w + b)"),
    MM_EPI("matmul 64x128x32 + bias + gelu", 64, 128, 32, "gelu(x @ w + b)"),
    MM_EPI("matmul 64x128x32 + bias + sigmoid", 64, 128, 32, "sigmoid(x @ w + b)"),
    MM_EPI("matmul 64x128x32 + bias + tanh", 64, 128, 32, "tanh(x @ w + b)"),
    MM_EPI("matmul 64x128x32 + bias + exp", 64, 128, 32, "exp(x @ w + b)"),
    MM_EPI("matmul 64x128x32, tanh(. + bias) * 2 + 1", 64, 128, 32, "tanh(x @ w + b) * 2.0 + 1.0"),
    MM_EPI("matmul 1024^3 + bias + gelu", 1024, 1024, 1024, "gelu(x @ w + b)"),
    MM_EPI("matmul 1024^3, tanh(. + bias) * 2 + 1", 1024, 1024, 1024, "tanh(x @ w + b) * 2.0 + 1.0"),
#undef MM_EPI
};
enum { NKERNELS = sizeof KERNELS / sizeof KERNELS[0] };

static mt_tensor *wrap(float *p, int ndim, int64_t d0, int64_t d1) {
    int64_t shape[2] = {d0, d1};
    mt_tensor *t = mt_tensor_wrap(p, MT_FLOAT32, ndim, shape, NULL);
    if (!t) die("mt_tensor_wrap failed");
    return t;
}

/* The arguments and the result of one kernel, as views of the buffers. */
typedef struct kargs {
    mt_tensor *args[5];
    int nargs;
    mt_tensor *out;
    mt_kernel *k;
} kargs;

static void make_args(const kspec *s, kargs *ka) {
    memset(ka, 0, sizeof *ka);
    switch (s->kind) {
    case K_ADD:
    case K_EXP:
        ka->args[0] = wrap(A, 1, BIG_N, 0);
        ka->args[1] = wrap(B, 1, BIG_N, 0);
        ka->nargs = 2;
        ka->out = wrap(C, 1, BIG_N, 0);
        break;
    case K_SMAX:
        ka->args[0] = wrap(A, 2, 4096, 4096);
        ka->nargs = 1;
        ka->out = wrap(C, 2, 4096, 4096);
        break;
    case K_LNORM:
        ka->args[0] = wrap(A, 2, 4096, 4096);
        ka->args[1] = wrap(B, 1, 4096, 0);        /* gamma: the first row of B */
        ka->args[2] = wrap(B + 4096, 1, 4096, 0); /* beta: the second */
        ka->nargs = 3;
        ka->out = wrap(C, 2, 4096, 4096);
        break;
    case K_MM:
    case K_MMBR:
        ka->args[0] = wrap(A, 2, s->n, s->n);
        ka->args[1] = wrap(B, 2, s->n, s->n);
        ka->nargs = 2;
        if (s->kind == K_MMBR) ka->args[ka->nargs++] = wrap(BIAS, 1, s->n, 0);
        ka->out = wrap(C, 2, s->n, s->n);
        break;
    case K_COMPILE: break;
    case K_MLP:
    case K_MLPG:
    case K_MLP1: {
        bool big = s->kind != K_MLP1;
        int64_t batch = big ? MLP_BATCH : 1;
        ka->args[0] = wrap(big ? A : X1, 2, batch, MLP_IN);
        ka->args[1] = wrap(W0, 2, MLP_HID, MLP_IN);
        ka->args[2] = wrap(B0, 1, MLP_HID, 0);
        ka->args[3] = wrap(W1, 2, MLP_OUT, MLP_HID);
        ka->args[4] = wrap(B1, 1, MLP_OUT, 0);
        ka->nargs = 5;
        ka->out = wrap(big ? C : OUT1, 2, batch, MLP_OUT);
        break;
    }
    }
}

static void free_args(kargs *ka) {
    for (int i = 0; i < ka->nargs; i++) mt_tensor_release(ka->args[i]);
    mt_tensor_release(ka->out);
}

static void run_kernel(void *p) {
    kargs *ka = p;
    mt_diag d;
    if (mt_kernel_run(ka->k, ka->args, ka->nargs, &ka->out, 1, &d) != MT_OK) {
        fprintf(stderr, "mt_bench: run of %s failed:\n%s\n", mt_kernel_name(ka->k), d.text);
        exit(1);
    }
}

/* ---- spot checks against scalar references in double ---------------------------- */

static bool close_to(double got, double want, double tol) {
    return fabs(got - want) <= tol && !isnan(got);
}

static bool check_softmax_row(int64_t r) {
    const float *x = A + r * 4096, *y = C + r * 4096;
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < 4096; j++) mx = fmax(mx, x[j]);
    for (int j = 0; j < 4096; j++) sum += exp(x[j] - mx);
    for (int j = 0; j < 4096; j++) {
        double want = exp(x[j] - mx) / sum;
        if (!close_to(y[j], want, 1e-4 * want + 1e-9)) return false;
    }
    return true;
}

static bool check_lnorm_row(int64_t r) {
    const float *x = A + r * 4096, *y = C + r * 4096, *g = B, *b = B + 4096;
    double mean = 0, var = 0;
    for (int j = 0; j < 4096; j++) mean += x[j];
    mean /= 4096;
    for (int j = 0; j < 4096; j++) var += (x[j] - mean) * (x[j] - mean);
    var /= 4096;
    double inv = 1 / sqrt(var + 1e-5);
    for (int j = 0; j < 4096; j++)
        if (!close_to(y[j], (x[j] - mean) * inv * g[j] + b[j], 1e-4)) return false;
    return true;
}

static bool check_mm_at(int n, int64_t i, int64_t j, bool bias_relu) {
    double acc = 0, mag = 0;
    for (int64_t k = 0; k < n; k++) {
        acc += (double)A[i * n + k] * B[k * n + j];
        mag += fabs((double)A[i * n + k] * B[k * n + j]);
    }
    if (bias_relu) acc = fmax(acc + BIAS[j], 0);
    return close_to(C[i * n + j], acc, 1e-5 * mag + 1e-5);
}

static bool check_mlp_row(const float *x, const float *out, bool gelu) {
    double h[MLP_HID];
    for (int j = 0; j < MLP_HID; j++) {
        double acc = B0[j];
        for (int k = 0; k < MLP_IN; k++) acc += (double)x[k] * W0[j * MLP_IN + k];
        h[j] = gelu ? 0.5 * acc * (1 + erf(acc / sqrt(2.0))) : acc > 0 ? acc : 0;
    }
    for (int j = 0; j < MLP_OUT; j++) {
        double acc = B1[j];
        for (int k = 0; k < MLP_HID; k++) acc += h[k] * W1[j * MLP_HID + k];
        if (!close_to(out[j], acc, 1e-4 * fmax(1, fabs(acc)))) return false;
    }
    return true;
}

/* Did the last run compute the right thing? (A sample of the result.) */
static bool check_result(const kspec *s) {
    switch (s->kind) {
    case K_ADD:
    case K_EXP:
        for (int q = 0; q <= 32; q++) {
            int64_t i = q < 32 ? (int64_t)q * 524309 % BIG_N : BIG_N - 1;
            double want = s->kind == K_ADD ? (double)((A[i] + B[i]) + A[i])
                                           : exp((double)A[i]) * B[i] + 1;
            if (!close_to(C[i], want, 1e-5 * fmax(1, fabs(want)))) return false;
        }
        return true;
    case K_SMAX: return check_softmax_row(0) && check_softmax_row(1234) && check_softmax_row(4095);
    case K_LNORM: return check_lnorm_row(0) && check_lnorm_row(2047) && check_lnorm_row(4095);
    case K_MM:
    case K_MMBR:
        for (int q = 0; q < 16; q++) {
            int64_t i = (q * 7919) % s->n, j = (q * 104729 + 13) % s->n;
            if (!check_mm_at(s->n, i, j, s->kind == K_MMBR)) return false;
        }
        return check_mm_at(s->n, s->n - 1, s->n - 1, s->kind == K_MMBR);
    case K_MLP:
    case K_MLPG: {
        bool g = s->kind == K_MLPG;
        for (int r = 0; r < MLP_BATCH; r += 1021)
            if (!check_mlp_row(A + (int64_t)r * MLP_IN, C + (int64_t)r * MLP_OUT, g)) return false;
        return check_mlp_row(A + (int64_t)(MLP_BATCH - 1) * MLP_IN, C + (int64_t)(MLP_BATCH - 1) * MLP_OUT, g);
    }
    case K_MLP1: return check_mlp_row(X1, OUT1, false);
    case K_COMPILE: return true;
    }
    return false;
}

/* ---- results --------------------------------------------------------------------- */

typedef struct kresult {
    double first_ms;      /* the first compile of this kernel in the process */
    mt_compile_times warm;/* phases of the median warm compile */
    double warm_ms;       /* median wall time of a warm compile */
    double cached_us;     /* median wall time of a cached compile */
    double time_s[2];     /* median run time at 1 and 2 threads */
    double ref[2];        /* the row's reference, measured just before it: GB/s
                           * for memory-bound kernels, else seconds of BLAS */
    bool ok[2];           /* the spot check passed */
    bool compiled[2];
} kresult;

static double bw_gbs[2];                   /* bandwidth at 1 and 2 threads */
static double peak_gf[2];                  /* fp32 FMA peak at 1 and 2 threads */
static double blas_s[2][2];                /* [N=1024|2048][threads-1] sgemm seconds */
static double blas_mlp_s[2];               /* NumPy-style MLP on OpenBLAS */
static numpy_mlp_ref np_ref[2];            /* NumPy's own MLP at 1 and 2 threads */
static bool np_ok;
static char np_why[640];
static kresult results[NKERNELS];
static const char *only; /* run only the kernels whose name contains this */

static bool selected(int i) { return !only || strstr(KERNELS[i].name, only); }

static double kernel_bytes(const kspec *s) {
    switch (s->kind) {
    case K_ADD:
    case K_EXP: return 3.0 * (double)BIG_N * 4;  /* a, b in; out */
    case K_SMAX:
    case K_LNORM: return 2.0 * (double)BIG_N * 4; /* x in; out (gamma, beta: 32 KiB) */
    default: return 0;
    }
}

static double kernel_flops(const kspec *s) {
    switch (s->kind) {
    case K_MM: return 2.0 * s->n * s->n * s->n;
    case K_MMBR: return 2.0 * s->n * s->n * s->n + 2.0 * s->n * s->n;
    case K_MLP:
    case K_MLPG: return 2.0 * MLP_BATCH * (MLP_IN * MLP_HID + MLP_HID * MLP_OUT);
    case K_MLP1: return 2.0 * (MLP_IN * MLP_HID + MLP_HID * MLP_OUT);
    default: return 0;
    }
}

static void fmt_time(char *buf, size_t cap, double s) {
    if (s < 1e-3) snprintf(buf, cap, "%.2f µs", s * 1e6);
    else snprintf(buf, cap, "%.2f ms", s * 1e3);
}

static void print_row(const kspec *s, const kresult *r, int ti) {
    int threads = ti + 1;
    char tbuf[32], rate[32] = "", ref[48] = "–", vs[48] = "–", goal[48] = "", met[16] = "–";
    double t = r->time_s[ti];
    if (!r->compiled[ti]) {
        printf("| %s | %d | did not compile | | | | | |\n", s->name, threads);
        return;
    }
    fmt_time(tbuf, sizeof tbuf, t);
    double bytes = kernel_bytes(s), flops = kernel_flops(s);
    if (bytes > 0) snprintf(rate, sizeof rate, "%.1f GB/s", bytes / t / 1e9);
    else snprintf(rate, sizeof rate, "%.1f GFLOP/s (%.0f %% of peak)", flops / t / 1e9,
                  flops / t / 1e9 / peak_gf[ti] * 100);
    bool pass = false, judged = true;
    switch (s->kind) {
    case K_ADD:
    case K_EXP: {
        double floor = bytes / (r->ref[ti] * 1e9), frac = floor / t;
        double want = s->kind == K_ADD ? 0.90 : 0.75;
        snprintf(ref, sizeof ref, "floor %.2f ms", floor * 1e3);
        snprintf(vs, sizeof vs, "%.0f %% of bw", frac * 100);
        snprintf(goal, sizeof goal, "≥ %.0f %% of bw", want * 100);
        pass = frac >= want;
        break;
    }
    case K_SMAX:
    case K_LNORM: {
        double floor = bytes / (r->ref[ti] * 1e9);
        snprintf(ref, sizeof ref, "floor %.2f ms", floor * 1e3);
        snprintf(vs, sizeof vs, "%.1fx floor", t / floor);
        snprintf(goal, sizeof goal, "≤ 2x floor");
        pass = t / floor <= 2.0;
        break;
    }
    case K_MM:
    case K_MMBR: {
        snprintf(goal, sizeof goal, s->kind == K_MM ? "≥ 90 %% of BLAS" : "≥ 90 %% of BLAS sgemm");
        double bt = r->ref[ti];
        if (bt <= 0) {
            judged = false;
            break;
        }
        snprintf(ref, sizeof ref, "BLAS %.2f ms", bt * 1e3);
        snprintf(vs, sizeof vs, "%.0f %% of BLAS", bt / t * 100);
        pass = bt / t >= 0.90;
        break;
    }
    case K_MLP:
        /* faster than NumPy measured in this run (3.9 ms was NumPy's time on
         * an earlier Zen 5 host; without NumPy, that figure) */
        if (np_ok) snprintf(goal, sizeof goal, "< NumPy %.2f ms (2 threads)", np_ref[1].batch4096_s * 1e3);
        else snprintf(goal, sizeof goal, "< 3.9 ms (2 threads)");
        if (r->ref[ti] > 0) {
            snprintf(ref, sizeof ref, "BLAS MLP %.2f ms", r->ref[ti] * 1e3);
            snprintf(vs, sizeof vs, "%.2fx BLAS MLP", t / r->ref[ti]);
        }
        judged = threads == 2;
        pass = t < (np_ok ? np_ref[1].batch4096_s : 3.9e-3);
        break;
    case K_MLP1:
        snprintf(goal, sizeof goal, "≤ 3 µs");
        if (np_ok) {
            snprintf(ref, sizeof ref, "NumPy %.2f µs", np_ref[ti].batch1_s * 1e6);
            snprintf(vs, sizeof vs, "%.2fx NumPy", t / np_ref[ti].batch1_s);
        }
        pass = t <= 3e-6;
        break;
    case K_MLPG: /* for run time before and after changes to the epilogue (issue 17) */
        snprintf(goal, sizeof goal, "–");
        judged = false;
        break;
    case K_COMPILE: return;
    }
    if (!r->ok[ti]) snprintf(met, sizeof met, "WRONG");
    else if (judged) snprintf(met, sizeof met, "%s", pass ? "yes" : "no");
    printf("| %s | %d | %s | %s | %s | %s | %s | %s |\n", s->name, threads, tbuf, rate, ref, vs,
           goal, met);
}

/* ---- main -------------------------------------------------------------------------- */


static mt_context *make_ctx(int threads, int cache_entries, double *ms) {
    mt_context_options co = {0};
    co.num_threads = threads;
    co.cache_entries = cache_entries;
    co.cache_dir = ""; /* no disk cache: these rows time LLVM (the disk cache has its own) */
    double t0 = now_s();
    mt_context *ctx = mt_context_create(&co);
    if (ms) *ms = (now_s() - t0) * 1e3;
    if (!ctx) die("mt_context_create failed");
    return ctx;
}

static mt_kernel *compile(mt_context *ctx, const kspec *s, double *ms) {
    mt_diag d;
    double t0 = now_s();
    mt_kernel *k = mt_jit_compile(ctx, s->src, NULL, &d);
    if (ms) *ms = (now_s() - t0) * 1e3;
    if (!k) fprintf(stderr, "mt_bench: %s does not compile:\n%s\n", s->name, d.text);
    return k;
}

/* Lets the threads of OpenBLAS and of minitriton's parallel loops go to
 * sleep (both spin a while after their last work), so that they do not take
 * a core from what is measured next. */
static void settle(void) { usleep(200 * 1000); }

/* Median seconds of the reference ref(ref_arg) and of fn(arg), measured in
 * alternating blocks so that both see the same load on the machine. A block
 * is one untimed call, then `per` timed calls back to back, as a host calls
 * a kernel in a loop: the untimed call wakes the worker threads (waking an
 * idle vCPU here takes up to 2 ms, which would land on the first call of a
 * block; docs/performance.md). A pause after each block lets one side's idle
 * workers go to sleep before the other side runs. At least min_reps timed
 * calls each, then until budget_s or max_reps. */
static void time_pair(work_fn ref, void *ref_arg, work_fn fn, void *arg, int per, int min_reps,
                      int max_reps, double budget_s, double *ref_s, double *fn_s) {
    double *t = malloc(sizeof *t * (size_t)max_reps * 2);
    if (!t) die("out of memory");
    double *tr = t + max_reps;
    int n = 0;
    double start = now_s();
    while (n + per <= max_reps && (n < min_reps || now_s() - start < budget_s)) {
        ref(ref_arg);
        for (int i = 0; i < per; i++) {
            double t0 = now_s();
            ref(ref_arg);
            tr[n + i] = now_s() - t0;
        }
        usleep(10 * 1000);
        fn(arg);
        for (int i = 0; i < per; i++) {
            double t0 = now_s();
            fn(arg);
            t[n + i] = now_s() - t0;
        }
        usleep(10 * 1000);
        n += per;
    }
    *fn_s = median(t, n);
    *ref_s = median(tr, n);
    free(t);
}

/* Times kernel run ka at `threads` threads, alternating with its reference:
 * a STREAM pass for the memory-bound kernels (r->ref: GB/s), OpenBLAS for
 * matmul and the MLP (r->ref: seconds). */
static void time_row(const kspec *s, kargs *ka, kresult *r, int threads) {
    int ti = threads - 1;
    switch (s->kind) {
    case K_ADD:
    case K_EXP:
    case K_SMAX:
    case K_LNORM: {
        double ref_s;
        time_pair(stream_once, &threads, run_kernel, ka, 3, 9, 201, 1.0, &ref_s, &r->time_s[ti]);
        r->ref[ti] = 3.0 * (double)BIG_N * sizeof(float) / ref_s / 1e9;
        return;
    }
    case K_MM:
    case K_MMBR:
    case K_MLP: {
        if (!blas.lib) break;
        /* OpenBLAS's idle workers sleep at once (OPENBLAS_THREAD_TIMEOUT, set
         * in main), so they do not spin through the kernel's turn */
        blas.set_threads(threads);
        sgemm_arg sa = {s->n};
        if (s->kind == K_MLP)
            time_pair(run_blas_mlp, NULL, run_kernel, ka, 5, 20, 500, 1.0, &r->ref[ti], &r->time_s[ti]);
        else
            time_pair(run_sgemm, &sa, run_kernel, ka, 3, 6, 99, s->n > 1024 ? 3.0 : 1.0,
                      &r->ref[ti], &r->time_s[ti]);
        blas.set_threads(1);
        return;
    }
    case K_MLP1:
        r->time_s[ti] = time_work(run_kernel, ka, 1000, 20000, 200000, 0.3);
        return;
    case K_MLPG:
        r->time_s[ti] = time_work(run_kernel, ka, 2, 20, 500, 1.0);
        return;
    case K_COMPILE: return;
    }
    r->time_s[ti] = time_work(run_kernel, ka, 1, 5, 200, 1.0);
}

/* Compiles and times every kernel in ctx (threads 1 or 2). */
static void bench_context(mt_context *ctx, int threads, bool record_first) {
    for (int i = 0; i < NKERNELS; i++) {
        if (!selected(i)) continue;
        const kspec *s = &KERNELS[i];
        kresult *r = &results[i];
        double ms;
        kargs ka;
        if (s->kind == K_COMPILE) { /* compile-latency rows only */
            if (!record_first) continue;
            mt_kernel *k = compile(ctx, s, &ms);
            r->first_ms = ms;
            r->compiled[0] = r->ok[0] = k != NULL;
            mt_kernel_release(k);
            continue;
        }
        make_args(s, &ka);
        ka.k = compile(ctx, s, &ms);
        if (record_first) r->first_ms = ms;
        if (ka.k) {
            fprintf(stderr, "  %-30s %d thread%s ...\n", s->name, threads, threads > 1 ? "s" : "");
            r->compiled[threads - 1] = true;
            memset(C, 0, (size_t)BIG_N * 4);
            run_kernel(&ka);
            r->ok[threads - 1] = check_result(s);
            time_row(s, &ka, r, threads);
            mt_kernel_release(ka.k);
            settle();
        }
        free_args(&ka);
    }
}

/* `mt_bench --first-compile I`: what a fresh process pays for its first
 * kernel: creates a context and compiles kernel I, prints "ctx_ms compile_ms"
 * and exits. The main run starts itself this way (first_compiles). */
static int first_compile_child(const char *arg) {
    int i = atoi(arg);
    if (i < 0 || i >= NKERNELS) return 2;
    double ctx_ms, ms;
    mt_context *ctx = make_ctx(0, -1, &ctx_ms); /* the default: all cores */
    mt_kernel *k = compile(ctx, &KERNELS[i], &ms);
    if (!k) return 1;
    printf("%.3f %.3f\n", ctx_ms, ms);
    mt_kernel_release(k);
    mt_context_destroy(ctx);
    return 0;
}

/* `mt_bench --disk-compile I DIR`: a fresh process's first compile of
 * kernel I in a default context over the disk cache DIR; prints "ctx_ms
 * compile_ms disk" (disk: mt_compile_times.disk) and the phases. */
static int disk_compile_child(const char *arg, const char *dir) {
    int i = atoi(arg);
    if (i < 0 || i >= NKERNELS) return 2;
    mt_context_options co = {0};
    co.cache_entries = -1;
    co.cache_dir = dir;
    double t0 = now_s();
    mt_context *ctx = mt_context_create(&co);
    double ctx_ms = (now_s() - t0) * 1e3, ms;
    if (!ctx) return 1;
    mt_kernel *k = compile(ctx, &KERNELS[i], &ms);
    if (!k) return 1;
    mt_compile_times t;
    mt_kernel_compile_times(k, &t);
    printf("%.3f %.3f %d %.3f %.3f %.3f %.3f\n", ctx_ms, ms, t.disk, t.frontend_ms + t.graph_ms,
           t.tir_ms, t.disk_read_ms, t.jit_ms);
    mt_kernel_release(k);
    mt_context_destroy(ctx);
    return 0;
}

enum { DISK_RUNS = 11 };

/* The disk cache on kernel i: one cold compile in a fresh process over an
 * empty directory (a miss that writes the entry), then DISK_RUNS fresh
 * processes that find it (medians), then DISK_RUNS fresh contexts in this
 * process over it. */
typedef struct disk_result {
    bool ok;
    double cold_ms, cold_ctx_ms;      /* the miss (LLVM), in its process */
    double hit_ms, hit_ctx_ms;        /* a new process: compile, and context creation */
    double hit_min_ms, hit_inproc_min_ms; /* the fastest (on a busy machine, the one least
                                           * disturbed) */
    double hit_front_ms, hit_tir_ms, hit_read_ms, hit_jit_ms; /* its phases (medians) */
    double hit_inproc_ms;             /* a fresh context in this process (median) */
    char why[160];
} disk_result;

static bool disk_child(const char *self, int i, const char *dir, double v[7]) {
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "'%s' --disk-compile %d '%s'", self, i, dir);
    FILE *p = popen(cmd, "r");
    if (!p) return false;
    int got = fscanf(p, "%lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                     &v[6]);
    return pclose(p) == 0 && got == 7;
}

static void disk_latency(const char *self, int i, disk_result *r) {
    memset(r, 0, sizeof *r);
    char dir[] = "/tmp/mt-bench-disk-XXXXXX";
    if (!mkdtemp(dir) || strchr(self, '\'')) {
        snprintf(r->why, sizeof r->why, "no temporary directory");
        return;
    }
    double v[7], ms[DISK_RUNS], cms[DISK_RUNS], ph[4][DISK_RUNS];
    if (!disk_child(self, i, dir, v) || v[2] != MT_DISK_MISS) {
        snprintf(r->why, sizeof r->why, "the cold compile did not write an entry");
        goto done;
    }
    r->cold_ctx_ms = v[0];
    r->cold_ms = v[1];
    for (int q = 0; q < DISK_RUNS; q++) {
        if (!disk_child(self, i, dir, v) || v[2] != MT_DISK_HIT) {
            snprintf(r->why, sizeof r->why, "a compile in a new process was not a disk hit");
            goto done;
        }
        cms[q] = v[0];
        ms[q] = v[1];
        for (int f = 0; f < 4; f++) ph[f][q] = v[3 + f];
    }
    r->hit_ctx_ms = median(cms, DISK_RUNS);
    r->hit_ms = median(ms, DISK_RUNS);
    r->hit_min_ms = ms[0];
    for (int q = 1; q < DISK_RUNS; q++)
        if (ms[q] < r->hit_min_ms) r->hit_min_ms = ms[q];
    r->hit_front_ms = median(ph[0], DISK_RUNS);
    r->hit_tir_ms = median(ph[1], DISK_RUNS);
    r->hit_read_ms = median(ph[2], DISK_RUNS);
    r->hit_jit_ms = median(ph[3], DISK_RUNS);
    for (int q = 0; q < DISK_RUNS; q++) {
        mt_context_options co = {0};
        co.cache_entries = -1;
        co.cache_dir = dir;
        mt_context *ctx = mt_context_create(&co);
        if (!ctx) die("mt_context_create failed");
        mt_kernel *k = compile(ctx, &KERNELS[i], &ms[q]);
        mt_compile_times t;
        if (!k || mt_kernel_compile_times(k, &t) != MT_OK || t.disk != MT_DISK_HIT) {
            snprintf(r->why, sizeof r->why, "a compile in a fresh context was not a disk hit");
            mt_kernel_release(k);
            mt_context_destroy(ctx);
            goto done;
        }
        mt_kernel_release(k);
        mt_context_destroy(ctx);
    }
    r->hit_inproc_ms = median(ms, DISK_RUNS);
    r->hit_inproc_min_ms = ms[0];
    for (int q = 1; q < DISK_RUNS; q++)
        if (ms[q] < r->hit_inproc_min_ms) r->hit_inproc_min_ms = ms[q];
    r->ok = true;
done:;
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "mt_bench: could not remove %s\n", dir);
}

enum { FIRST_RUNS = 5 };

/* Context creation and the first compile of kernel i in FIRST_RUNS fresh
 * processes (this program again, --first-compile): medians in ms; false
 * when a child failed. */
static bool first_compiles(const char *self, int i, double *ctx_ms, double *ms) {
    double c[FIRST_RUNS], f[FIRST_RUNS];
    for (int r = 0; r < FIRST_RUNS; r++) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "'%s' --first-compile %d", self, i);
        FILE *p = popen(cmd, "r");
        if (!p) return false;
        int got = fscanf(p, "%lf %lf", &c[r], &f[r]);
        if (pclose(p) != 0 || got != 2) return false;
    }
    *ctx_ms = median(c, FIRST_RUNS);
    *ms = median(f, FIRST_RUNS);
    return true;
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "--first-compile")) return first_compile_child(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "--disk-compile")) return disk_compile_child(argv[2], argv[3]);
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
        fprintf(stderr, "usage: mt_bench [NAME]   (NAME: run only the kernels whose name "
                        "contains it, e.g. softmax)\n");
        return 2;
    }
    if (argc == 2) only = argv[1];
    time_t now = time(NULL);
    char date[64], cpu[256];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M %Z", localtime(&now));
    bench_cpu_model(cpu, sizeof cpu);
    const char *coretype = getenv("OPENBLAS_CORETYPE");

    A = big_alloc();
    B = big_alloc();
    C = big_alloc();
    for (int64_t i = 0; i < BIG_N; i++) {
        A[i] = frand();
        B[i] = frand();
        C[i] = 0;
    }
    W0 = small_alloc(MLP_HID * MLP_IN, 0.05f);
    B0 = small_alloc(MLP_HID, 0.1f);
    W1 = small_alloc(MLP_OUT * MLP_HID, 0.1f);
    B1 = small_alloc(MLP_OUT, 0.1f);
    H = small_alloc(MLP_BATCH * MLP_HID, 0);
    BIAS = small_alloc(2048, 1.0f);
    for (int i = 0; i < MLP_IN; i++) X1[i] = frand();

    /* 1. bandwidth */
    fprintf(stderr, "mt_bench: memory bandwidth ...\n");
    for (int t = 0; t < 2; t++) bw_gbs[t] = stream_add(t + 1);
    fprintf(stderr, "mt_bench: fp32 FMA peak ...\n");
    for (int t = 0; t < 2; t++) peak_gf[t] = fma_peak_gflops(t + 1);

    /* 2. OpenBLAS */
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0); /* idle workers sleep after 2^4 cycles */
    blas_load();
    if (blas.lib) {
        fprintf(stderr, "mt_bench: OpenBLAS sgemm ...\n");
        for (int t = 0; t < 2; t++) {
            blas.set_threads(t + 1);
            for (int q = 0; q < 2; q++) {
                sgemm_arg sa = {q ? 2048 : 1024};
                blas_s[q][t] = time_work(run_sgemm, &sa, 1, 5, 100, q ? 1.0 : 0.5);
            }
            blas_mlp_s[t] = time_work(run_blas_mlp, NULL, 2, 10, 500, 0.5);
        }
        blas.set_threads(1);
        settle();
    }
    fprintf(stderr, "mt_bench: NumPy MLP ...\n");
    np_ok = numpy_mlp_measure(1, &np_ref[0], np_why, sizeof np_why) &&
            numpy_mlp_measure(2, &np_ref[1], np_why, sizeof np_why);
    settle();

    /* 3. minitriton; contexts one after the other, so that a context's idle
     * workers cannot disturb the other's runs */
    double ctx_first_ms, ctx_warm_ms;
    fprintf(stderr, "mt_bench: minitriton ...\n");
    mt_context *ctx1 = make_ctx(1, 0, &ctx_first_ms);
    bench_context(ctx1, 1, true);
    mt_context *ctx2 = make_ctx(2, 0, &ctx_warm_ms);
    bench_context(ctx2, 2, false);
    mt_context_destroy(ctx2);

    /* 4. compile latency: warm (cache off) and cached (ctx1 still holds
     * every kernel in its cache) */
    fprintf(stderr, "mt_bench: compile latency ...\n");
    mt_context *ctxw = make_ctx(0, -1, NULL); /* the default (all cores), cache off */
    for (int i = 0; i < NKERNELS; i++) {
        kresult *r = &results[i];
        if (!r->compiled[0]) continue;
        double wall[3];
        mt_compile_times ph[3];
        for (int q = 0; q < 3; q++) {
            mt_kernel *k = compile(ctxw, &KERNELS[i], &wall[q]);
            if (!k) die("a kernel compiled once and then not");
            mt_kernel_compile_times(k, &ph[q]);
            mt_kernel_release(k);
        }
        int lo = 0, hi = 0;
        for (int q = 1; q < 3; q++) {
            if (wall[q] < wall[lo]) lo = q;
            if (wall[q] > wall[hi]) hi = q;
        }
        int mid = 3 - lo - hi;
        if (lo == hi) mid = 0;
        r->warm_ms = wall[mid];
        r->warm = ph[mid];
        enum { NC = 2000 };
        static double cached[NC];
        for (int q = 0; q < NC; q++) {
            double ms;
            mt_kernel *k = compile(ctx1, &KERNELS[i], &ms);
            mt_kernel_release(k);
            cached[q] = ms * 1e3;
        }
        r->cached_us = median(cached, NC);
    }
    mt_cache_stats cs;
    mt_context_cache_stats(ctx1, &cs);
    /* the first kernel of the table (or of the selection) in fresh processes */
    int first_i = -1;
    for (int i = 0; i < NKERNELS && first_i < 0; i++)
        if (results[i].compiled[0]) first_i = i;
    double fresh_ctx_ms = 0, fresh_ms = 0;
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    bool fresh = first_i >= 0 && sl > 0 && strchr(self, '\'') == NULL &&
                 (self[sl] = 0, first_compiles(self, first_i, &fresh_ctx_ms, &fresh_ms));
    mt_context_destroy(ctxw);
    mt_context_destroy(ctx1);
    /* the disk cache on the MLP */
    disk_result disk = {0};
    int mlp_i = -1;
    for (int i = 0; i < NKERNELS && mlp_i < 0; i++)
        if (KERNELS[i].kind == K_MLP && results[i].compiled[0]) mlp_i = i;
    if (mlp_i >= 0 && sl > 0) {
        self[sl] = 0;
        fprintf(stderr, "mt_bench: disk cache ...\n");
        disk_latency(self, mlp_i, &disk);
    }

    /* ---- report ---- */
    printf("# minitriton benchmark\n\n");
    printf("- date: %s\n- machine: %s, %ld online CPUs\n- minitriton %s\n", date, cpu,
           sysconf(_SC_NPROCESSORS_ONLN), mt_version());
    if (blas.lib)
        printf("- OpenBLAS: %s; core %s (OPENBLAS_CORETYPE=%s)\n",
               blas.config ? blas.config() : "?", blas.corename ? blas.corename() : "?",
               coretype ? coretype : "unset");
    else
        printf("- OpenBLAS: skipped: %s\n", blas.why);
    printf("- times are medians of repetitions after a warm-up; each row alternates its "
           "reference (a STREAM pass or OpenBLAS) with the kernel and compares the medians; the "
           "table below is the first measurement of each reference\n\n");

    printf("## References\n\n| what | 1 thread | 2 threads |\n| --- | --- | --- |\n");
    printf("| STREAM add c = a + b, 3 x 64 MiB (best of %d) | %.1f GB/s | %.1f GB/s |\n",
           STREAM_PASSES - 1, bw_gbs[0], bw_gbs[1]);
    printf("| fp32 FMA peak (%d-bit FMAs on registers, fma_peak.c) | %.0f GFLOP/s | %.0f GFLOP/s |\n",
           fma_peak_vector_bits(), peak_gf[0], peak_gf[1]);
    double mlp_flops = kernel_flops(&(kspec){.kind = K_MLP});
    printf("| MLP 784-128-10 batch 4096 at that peak (%.0f MFLOP): the floor | %.2f ms | %.2f ms |\n",
           mlp_flops / 1e6, mlp_flops / peak_gf[0] / 1e6, mlp_flops / peak_gf[1] / 1e6);
    if (blas.lib) {
        for (int q = 0; q < 2; q++) {
            double n = q ? 2048 : 1024, fl = 2 * n * n * n;
            printf("| OpenBLAS sgemm N=%.0f | %.2f ms, %.0f GFLOP/s | %.2f ms, %.0f GFLOP/s |\n", n,
                   blas_s[q][0] * 1e3, fl / blas_s[q][0] / 1e9, blas_s[q][1] * 1e3,
                   fl / blas_s[q][1] / 1e9);
        }
        printf("| MLP 784-128-10 batch 4096, NumPy-style on OpenBLAS | %.2f ms | %.2f ms |\n",
               blas_mlp_s[0] * 1e3, blas_mlp_s[1] * 1e3);
    } else {
        printf("| OpenBLAS | skipped | %s |\n", blas.why);
    }
    if (np_ok) {
        printf("| NumPy %s MLP 784-128-10 batch 4096 (python3, its BLAS) | %.2f ms | %.2f ms |\n",
               np_ref[0].version, np_ref[0].batch4096_s * 1e3, np_ref[1].batch4096_s * 1e3);
        printf("| NumPy %s MLP 784-128-10 batch 1, per call | %.2f µs | %.2f µs |\n",
               np_ref[0].version, np_ref[0].batch1_s * 1e6, np_ref[1].batch1_s * 1e6);
    } else {
        printf("| NumPy MLP | skipped | %s |\n", np_why);
    }

    printf("\n## Kernels\n\n");
    printf("| kernel | threads | time | rate | reference | vs reference | goal | met |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < NKERNELS; i++)
        for (int t = 0; t < 2; t++)
            if (selected(i) && KERNELS[i].kind != K_COMPILE) print_row(&KERNELS[i], &results[i], t);

    printf("\n## Compile latency\n\n");
    printf("Context creation (LLVM target and ORC JIT): %.1f ms the first in the process, %.1f ms "
           "the second. First: this kernel's first compile in the process, in the 1-thread "
           "context (LLVM on one thread; the first row also pays LLVM's one-time work). Warm: the "
           "same source again in a context with the default thread count and the cache off "
           "(median of 3), with its phases and the threads LLVM ran on (one per module, a kernel "
           "function's or a parallel loop body's, up to the context's threads). Cached: the "
           "same source and options again in the same context (median of 2000; %lld hits in "
           "all).\n\n",
           ctx_first_ms, ctx_warm_ms, (long long)cs.hits);
    if (fresh)
        printf("A fresh process (median of %d, each started for this; the default context, all "
               "cores): context creation %.1f ms, then the first compile (%s) %.1f ms.\n\n",
               FIRST_RUNS, fresh_ctx_ms, KERNELS[first_i].name, fresh_ms);
    printf("| kernel | first | warm | cached | frontend | graph | TIR | IR gen | LLVM opt | JIT "
           "codegen | LLVM threads |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < NKERNELS; i++) {
        const kresult *r = &results[i];
        if (!selected(i)) continue;
        if (!r->compiled[0]) {
            printf("| %s | did not compile | | | | | | | | | |\n", KERNELS[i].name);
            continue;
        }
        const mt_compile_times *w = &r->warm;
        printf("| %s | %.1f ms | %.1f ms | %.2f µs | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %d |\n",
               KERNELS[i].name, r->first_ms, r->warm_ms, r->cached_us, w->frontend_ms,
               w->graph_ms, w->tir_ms, w->irgen_ms, w->opt_ms, w->jit_ms, w->llvm_threads);
    }
    printf("\n(phase columns in ms, of the warm compile)\n");

    if (mlp_i >= 0) {
        printf("\n## Disk cache (the MLP)\n\n");
        if (!disk.ok) {
            printf("not measured: %s\n", disk.why);
        } else {
            printf("A cold compile in a fresh process over an empty cache directory (a miss: "
                   "LLVM runs, the entry is written), then %d fresh processes that find the "
                   "entry (median and fastest; the phases are each one's median; context "
                   "creation apart), then %d fresh contexts in this process. Goal: a disk hit "
                   "in a new process <= 3 ms. On a busy machine the median carries the time "
                   "slices lost to other processes (4 and 8 ms steps); the fastest is the "
                   "undisturbed cost.\n\n",
                   DISK_RUNS, DISK_RUNS);
            printf("| compile | median ms | fastest ms | front (parse, graph) | TIR | disk read "
                   "(key, verify) | JIT link | goal |\n| --- | --- | --- | --- | --- | --- | "
                   "--- | --- |\n");
            printf("| cold, new process (context %.1f ms) | %.1f | | | | | | |\n",
                   disk.cold_ctx_ms, disk.cold_ms);
            printf("| disk hit, new process (context %.1f ms) | %.2f | %.2f | %.2f | %.2f | %.2f | "
                   "%.2f | <= 3 ms: %s |\n",
                   disk.hit_ctx_ms, disk.hit_ms, disk.hit_min_ms, disk.hit_front_ms,
                   disk.hit_tir_ms, disk.hit_read_ms, disk.hit_jit_ms,
                   disk.hit_ms <= 3 ? "met" : disk.hit_min_ms <= 3 ? "met undisturbed" : "not met");
            printf("| disk hit, fresh context in this process | %.2f | %.2f | | | | | |\n",
                   disk.hit_inproc_ms, disk.hit_inproc_min_ms);
        }
    }

    free(A), free(B), free(C), free(W0), free(B0), free(W1), free(B1), free(H), free(BIAS);
    if (blas.lib) dlclose(blas.lib);
    return 0;
}
