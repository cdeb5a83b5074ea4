/*
 * sweep.c -- mt_sweep, the shape sweep: minitriton against NumPy (on
 * OpenBLAS) and OpenBLAS itself, over many shapes of each op family, measured
 * in the same run (run it with scripts/bench.sh --sweep).
 *
 * The cases are the table CASES below and nowhere else: each is an
 * expression over float32 inputs a, b, c with their shapes. minitriton
 * compiles `def k(a: Tensor(...), ...): return EXPR`; the NumPy side
 * (numpy_sweep.py, one child /usr/bin/python3 per thread count, with
 * OPENBLAS_NUM_THREADS set to it) evaluates the same text with the kernel
 * language's library written the NumPy way (softmax, sum, concat, ...). A
 * matmul case also names the cblas_sgemm call(s) that compute it, and
 * OpenBLAS (dlopen, as in mt_bench) is timed on them directly.
 *
 * Inputs are filled on both sides by the same formula (input j, flat index
 * i: a hash of i and j, uniform in [-0.5, 0.5)), so the results must agree:
 * the child sends its result at 33 sample indices, with each sample's
 * magnitude (the expression over the inputs' absolute values, in float64),
 * and a result of ours that differs there by more than float32 rounding of
 * that magnitude is marked WRONG, whatever its speed (check()).
 *
 * Timing: minitriton's run writes into a caller-provided result tensor (the
 * one the first run returned), so no allocation is timed; NumPy allocates
 * its result, as its users' code does, and a view (a.T, a slice,
 * broadcast_to) is copied, since minitriton's result is a new array. Each
 * case alternates blocks: NumPy, OpenBLAS (matmul), minitriton, three
 * rounds; a block is one untimed call (left out for calls over 20 ms) and
 * then as many timed calls as fit in a time budget (at least one); each
 * side's time is the median of all its timed calls. Pauses between blocks
 * let the other side's idle threads go to sleep (150 ms after a NumPy matmul
 * on several threads: NumPy's OpenBLAS spins its idle threads for about
 * 0.1 s; mt_sweep's own OpenBLAS is told to sleep at once, as in mt_bench).
 *
 * Memory-bound cases (every family but matmul, and matmuls under 4 flop per
 * byte) show their rate as a share of STREAM add's bandwidth (stream.c, as
 * mt_bench), measured by a pass before each of the case's rounds (the best
 * of the three): bytes moved / time / bandwidth, the bytes being each input
 * read once and the result written once, as STREAM counts them.
 *
 * Output: Markdown tables per family on stdout, progress on stderr, then a
 * summary per thread count: the geometric mean of NumPy time / ours, the
 * worst case, the cases slower than NumPy (the schedule rules' work list),
 * the memory-bound cases larger than L2 and their bandwidth shares.
 *
 *   mt_sweep [--quick] [--threads 2|1|1,2] [NAME]
 *
 * --quick: a subset (the cases marked quick) with shorter blocks, about half
 * a minute on an idle machine;
 * --threads: the thread counts (default 2, the goals' count); NAME: only
 * the cases whose text (expression and shapes) contains NAME.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "minitriton.h"
#include "stream.h"

#ifndef MT_SWEEP_NUMPY_SCRIPT
#define MT_SWEEP_NUMPY_SCRIPT "bench/numpy_sweep.py"
#endif

static void die(const char *what) {
    fprintf(stderr, "mt_sweep: %s\n", what);
    exit(1);
}

/* ---- the cases ------------------------------------------------------------------- */

typedef enum family { F_MM, F_BATCH, F_ROW, F_RED, F_INJ, F_EW, NFAMILIES } family;

static const char *const FAMILY_TITLE[NFAMILIES] = {
    "Matmul", "Batched matmul and operand layouts", "Row ops (softmax, log_softmax, layer_norm)",
    "Reductions", "Injective (transpose, concat, slicing, broadcast_to)",
    "Elementwise with broadcasting",
};

typedef struct scase {
    family fam;
    const char *shapes; /* the float32 inputs a, b, c, ...: "64x4096,4096x4096" */
    const char *expr;   /* the kernel's result, the same text in NumPy */
    bool quick;         /* in --quick */
    /* matmul: the sgemm call(s), C (m x n) = op(A) (m x k) op(B) (k x n), as
     * many as batch (0: none); shared: B is one matrix for every batch, one
     * call with m * batch rows */
    int batch, m, n, k;
    bool ta, tb, shared;
} scase;

#define MM(sh, e, q, bt, m, n, k, ta, tb, shared) {F_MM, sh, e, q, bt, m, n, k, ta, tb, shared}
#define MMB(sh, e, q, bt, m, n, k, ta, tb, shared) {F_BATCH, sh, e, q, bt, m, n, k, ta, tb, shared}
#define ROW(sh, e, q) {F_ROW, sh, e, q, 0, 0, 0, 0, 0, 0, 0}
#define RED(sh, e, q) {F_RED, sh, e, q, 0, 0, 0, 0, 0, 0, 0}
#define INJ(sh, e, q) {F_INJ, sh, e, q, 0, 0, 0, 0, 0, 0, 0}
#define EW(sh, e, q) {F_EW, sh, e, q, 0, 0, 0, 0, 0, 0, 0}
/* a @ b with a M x K, b K x N */
#define AB(M, K, N, q) MM(#M "x" #K "," #K "x" #N, "a @ b", q, 1, M, N, K, 0, 0, 0)
/* the row ops on rows x len */
#define ROWS(R, L, q)                                             \
    ROW(#R "x" #L, "softmax(a, axis=-1)", q),                     \
    ROW(#R "x" #L, "log_softmax(a, axis=-1)", q),                 \
    ROW(#R "x" #L "," #L "," #L, "layer_norm(a, b, c)", q)

static const scase CASES[] = {
    /* matmul: tiny, skinny (M = 1 .. 64, N and K up to 8192), square, odd */
    AB(3, 5, 7, false),
    AB(8, 8, 8, true),
    AB(16, 16, 16, false),
    AB(33, 17, 65, true),
    AB(1, 4096, 4096, true),
    AB(2, 4096, 4096, false),
    AB(4, 4096, 4096, false),
    AB(8, 4096, 4096, false),
    AB(16, 4096, 4096, false),
    AB(64, 4096, 4096, false),
    AB(1, 8192, 8192, false),
    AB(8, 8192, 8192, false),
    AB(64, 8192, 8192, false),
    AB(1, 8192, 1000, false),
    AB(16, 1000, 8192, false),
    AB(64, 64, 64, true),
    AB(128, 128, 128, false),
    AB(256, 256, 256, true),
    AB(257, 257, 257, true),
    AB(512, 512, 512, true),
    AB(1000, 1000, 1000, false),
    AB(1024, 1024, 1024, false),
    AB(2048, 2048, 2048, false),
    AB(257, 4097, 1000, false),
    AB(4097, 257, 1000, false),
    AB(1000, 1000, 4097, false),
    /* batched matmul */
    MMB("16x256x64,16x64x256", "a @ b", true, 16, 256, 256, 64, 0, 0, 0),
    MMB("256x32x32,256x32x32", "a @ b", true, 256, 32, 32, 32, 0, 0, 0),
    MMB("64x128x128,64x128x128", "a @ b", true, 64, 128, 128, 128, 0, 0, 0),
    MMB("8x512x512,8x512x512", "a @ b", false, 8, 512, 512, 512, 0, 0, 0),
    MMB("32x1x1024,32x1024x1024", "a @ b", false, 32, 1, 1024, 1024, 0, 0, 0),
    MMB("8x512x1024,1024x1024", "a @ b", false, 8, 512, 1024, 1024, 0, 0, 1),
    /* each layout of the operands: W and W.T */
    /* (a @ b at 1x4096 is in the matmul table) */
    MMB("1x4096,4096x4096", "a @ b.T", true, 1, 1, 4096, 4096, 0, 1, 0),
    MMB("64x1024,1024x1024", "a @ b", false, 1, 64, 1024, 1024, 0, 0, 0),
    MMB("64x1024,1024x1024", "a @ b.T", true, 1, 64, 1024, 1024, 0, 1, 0),
    MMB("1024x64,1024x1024", "a.T @ b", true, 1, 64, 1024, 1024, 1, 0, 0),
    MMB("1024x64,1024x1024", "a.T @ b.T", false, 1, 64, 1024, 1024, 1, 1, 0),
    MMB("1024x1024,1024x1024", "a @ b.T", false, 1, 1024, 1024, 1024, 0, 1, 0),
    MMB("1024x1024,1024x1024", "a.T @ b", false, 1, 1024, 1024, 1024, 1, 0, 0),
    MMB("1024x1024,1024x1024", "a.T @ b.T", false, 1, 1024, 1024, 1024, 1, 1, 0),
    MMB("257x1000,4097x1000", "a @ b.T", false, 1, 257, 4097, 1000, 0, 1, 0),
    /* row ops: row lengths 3 .. 32768, row counts 1 .. 65536 */
    ROWS(1, 3, false),
    ROWS(1, 32768, true),
    ROWS(65536, 3, true),
    ROWS(65536, 32, false),
    ROWS(8192, 128, false),
    ROWS(4096, 1000, true),
    ROWS(2048, 4097, false),
    ROWS(256, 32768, false),
    /* reductions over every axis of 2-D and 3-D tensors */
    RED("4096x4096", "sum(a, axis=0)", true),
    RED("4096x4096", "sum(a, axis=1)", true),
    RED("4096x4096", "sum(a)", false),
    RED("4096x4096", "max(a, axis=0)", false),
    RED("4096x4096", "max(a, axis=1)", false),
    RED("4096x4096", "mean(a, axis=1)", false),
    RED("4096x4096", "argmax(a, axis=1)", true),
    RED("65536x16", "argmax(a, axis=1)", false),
    RED("256x256x256", "argmin(a, axis=2)", false),
    RED("65536x16", "sum(a, axis=0)", false),
    RED("65536x16", "sum(a, axis=1)", true),
    RED("16x65536", "sum(a, axis=0)", false),
    RED("16x65536", "sum(a, axis=1)", false),
    RED("1000x257", "sum(a, axis=0)", false),
    RED("1000x257", "sum(a, axis=1)", true),
    RED("256x256x256", "sum(a, axis=0)", false),
    RED("256x256x256", "sum(a, axis=1)", true),
    RED("256x256x256", "sum(a, axis=2)", false),
    RED("256x256x256", "sum(a, axis=(0, 2))", false),
    RED("256x256x256", "max(a, axis=2)", false),
    RED("64x1000x33", "sum(a, axis=0)", false),
    RED("64x1000x33", "sum(a, axis=1)", false),
    RED("64x1000x33", "sum(a, axis=2)", false),
    /* injective copies */
    INJ("64x64", "a.T", false),
    INJ("1000x257", "a.T", true),
    INJ("4096x4096", "a.T", false),
    INJ("256x256x256", "transpose(a, (0, 2, 1))", true),
    INJ("256x256x256", "transpose(a, (2, 0, 1))", false),
    INJ("64x512x512", "transpose(a, (1, 0, 2))", false),
    INJ("2048x4096,2048x4096", "concat((a, b), axis=0)", false),
    INJ("4096x2048,4096x2048", "concat((a, b), axis=1)", true),
    INJ("64x512x256,64x512x256", "concat((a, b), axis=2)", false),
    INJ("4096x4096", "a[:, 1:-1]", true),
    INJ("4096x4096", "a[::2]", false),
    INJ("4096x4096", "a[:, ::2]", false),
    INJ("4096x4096", "a[1:3000]", false),
    INJ("4096", "broadcast_to(a, (4096, 4096))", true),
    INJ("4096x1", "broadcast_to(a, (4096, 4096))", false),
    INJ("512x512", "broadcast_to(a, (64, 512, 512))", false),
    /* elementwise with broadcasting */
    EW("1000,1000", "a + b", true),
    EW("64x64,64", "a + b", false),
    EW("256x1024,1024", "a + b", true),
    EW("16777216,16777216", "a + b", true),
    EW("4096x4096,4096", "a + b", true),
    EW("4096x4096,4096x1", "a * b", false),
    EW("256x1x256,1x256x256", "a + b", false),
    EW("4096x4096,4096,4096x1", "a * b + c", false),
    EW("4096x4096,4096x4096", "exp(a) * b + 1.0", false),
    EW("4096x4096", "where(a > 0, a, 0.1 * a)", false),
    EW("4096x4096", "sigmoid(a)", false),
    EW("4096x4096,4096", "relu(a + b)", true),
};
enum { NCASES = sizeof CASES / sizeof CASES[0], MAXIN = 4, MAXDIM = 8 };

typedef struct shape {
    int ndim;
    int64_t d[MAXDIM];
} shape;

/* Parses "64x4096,4096" into shapes; the count. */
static int parse_shapes(const char *text, shape *out) {
    int n = 0;
    const char *p = text;
    while (*p && n < MAXIN) {
        shape *s = &out[n++];
        s->ndim = 0;
        if (*p == '-') p++;
        else
            for (;;) {
                char *end;
                s->d[s->ndim++] = strtoll(p, &end, 10);
                p = end;
                if (*p != 'x') break;
                p++;
            }
        if (*p == ',') p++;
    }
    return n;
}

static int64_t numel(const shape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++) n *= s->d[i];
    return n;
}

/* The kernel's source: def k(a: Tensor((64, 4096), "float32"), ...): return EXPR */
static void case_source(const scase *c, char *buf, size_t cap) {
    shape sh[MAXIN];
    int n = parse_shapes(c->shapes, sh);
    size_t len = (size_t)snprintf(buf, cap, "def k(");
    for (int i = 0; i < n; i++) {
        len += (size_t)snprintf(buf + len, cap - len, "%s%c: Tensor((", i ? ", " : "", 'a' + i);
        for (int j = 0; j < sh[i].ndim; j++)
            len += (size_t)snprintf(buf + len, cap - len, "%s%lld", j ? ", " : "",
                                    (long long)sh[i].d[j]);
        len += (size_t)snprintf(buf + len, cap - len, "%s), \"float32\")", sh[i].ndim == 1 ? "," : "");
    }
    snprintf(buf + len, cap - len, "):\n    return %s\n", c->expr);
}

static double case_flops(const scase *c) {
    return c->batch ? 2.0 * c->batch * c->m * c->n * c->k : 0;
}

/* ---- inputs ---------------------------------------------------------------------- */

/* Input `seed` at flat index i, as numpy_sweep.py's fill(). */
static float fill_value(int64_t i, int seed) {
    uint64_t h = (((uint64_t)i + (uint64_t)seed * 1000003u) * 2654435761u) & 0xffffffffu;
    return (float)((double)h / 4294967296.0 - 0.5);
}

static float *fill(int64_t n, int seed) {
    size_t bytes = (size_t)((n * 4 + 4095) / 4096 * 4096);
    float *p = aligned_alloc(4096, bytes ? bytes : 4096);
    if (!p) die("out of memory");
    if (bytes >= (2u << 20)) madvise(p, bytes, MADV_HUGEPAGE);
    for (int64_t i = 0; i < n; i++) p[i] = fill_value(i, seed);
    return p;
}

/* ---- OpenBLAS (dlopen, as in mt_bench) ------------------------------------------- */

enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);
typedef void (*sgemv_fn)(int, int, int, int, float, const float *, int, const float *, int, float,
                         float *, int);

static struct {
    void *lib;
    sgemm_fn sgemm;
    sgemv_fn sgemv;
    void (*set_threads)(int);
    char *(*config)(void);
    char *(*corename)(void);
    char why[512];
} blas;

static void blas_load(void) {
    const char *names[] = {"libopenblas.so.0", "libopenblas.so", "libopenblasp.so.0"};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !blas.lib; i++)
        blas.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!blas.lib) {
        snprintf(blas.why, sizeof blas.why, "OpenBLAS not found (%s); install libopenblas-dev",
                 dlerror());
        return;
    }
    blas.sgemm = (sgemm_fn)dlsym(blas.lib, "cblas_sgemm");
    blas.sgemv = (sgemv_fn)dlsym(blas.lib, "cblas_sgemv");
    blas.set_threads = (void (*)(int))dlsym(blas.lib, "openblas_set_num_threads");
    blas.config = (char *(*)(void))dlsym(blas.lib, "openblas_get_config");
    blas.corename = (char *(*)(void))dlsym(blas.lib, "openblas_get_corename");
    if (!blas.sgemm || !blas.sgemv || !blas.set_threads) {
        snprintf(blas.why, sizeof blas.why,
                 "libopenblas lacks cblas_sgemm, cblas_sgemv or openblas_set_num_threads");
        dlclose(blas.lib);
        blas.lib = NULL;
    }
}

/* The case's product with OpenBLAS: a and b as the kernel's inputs, c a
 * buffer of the result's size. A row vector times a matrix (M = 1) is
 * cblas_sgemv, as NumPy calls it; the rest cblas_sgemm. */
static void blas_run(const scase *s, const float *a, const float *b, float *c) {
    int M = s->m, N = s->n, K = s->k, lda = s->ta ? M : K, ldb = s->tb ? K : N;
    int ta = s->ta ? CBLAS_TRANS : CBLAS_NO_TRANS, tb = s->tb ? CBLAS_TRANS : CBLAS_NO_TRANS;
    if (M == 1 && !s->shared) {
        /* c = b^T a (b stored K x N) or b a (b stored N x K) */
        for (int i = 0; i < s->batch; i++)
            blas.sgemv(CBLAS_ROW_MAJOR, s->tb ? CBLAS_NO_TRANS : CBLAS_TRANS, s->tb ? N : K,
                       s->tb ? K : N, 1.0f, b + (int64_t)i * K * N, ldb, a + (int64_t)i * K, 1,
                       0.0f, c + (int64_t)i * N, 1);
        return;
    }
    if (s->shared) {
        blas.sgemm(CBLAS_ROW_MAJOR, ta, tb, M * s->batch, N, K, 1.0f, a, lda, b, ldb, 0.0f, c, N);
        return;
    }
    for (int i = 0; i < s->batch; i++)
        blas.sgemm(CBLAS_ROW_MAJOR, ta, tb, M, N, K, 1.0f, a + (int64_t)i * M * K, lda,
                   b + (int64_t)i * K * N, ldb, 0.0f, c + (int64_t)i * M * N, N);
}

/* ---- the NumPy child (numpy_sweep.py) -------------------------------------------- */

typedef struct pychild {
    pid_t pid;
    FILE *to, *from;
    bool ok;
    char *line; /* the last answer */
    size_t cap;
    char why[512];
} pychild;

static const char *python(void) {
    const char *p = getenv("MT_BENCH_PYTHON");
    if (p && *p) return p;
    return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

static bool py_start(pychild *p, int threads) {
    memset(p, 0, sizeof *p);
    const char *py = python(), *script = MT_SWEEP_NUMPY_SCRIPT;
    if (access(script, R_OK) != 0) {
        snprintf(p->why, sizeof p->why, "%s not found", script);
        return false;
    }
    int in[2], out[2];
    if (pipe(in) || pipe(out)) die("pipe failed");
    fflush(NULL);
    p->pid = fork();
    if (p->pid < 0) die("fork failed");
    if (p->pid == 0) {
        char n[16];
        snprintf(n, sizeof n, "%d", threads);
        setenv("OPENBLAS_NUM_THREADS", n, 1);
        /* mt_sweep's setting for its own OpenBLAS: NumPy runs with OpenBLAS's
         * default, as its users do */
        unsetenv("OPENBLAS_THREAD_TIMEOUT");
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        execlp(py, py, script, (char *)NULL);
        fprintf(stderr, "mt_sweep: cannot run %s\n", py);
        _exit(127);
    }
    close(in[0]), close(out[1]);
    p->to = fdopen(in[1], "w");
    p->from = fdopen(out[0], "r");
    if (!p->to || !p->from) die("fdopen failed");
    p->ok = true;
    return true;
}

/* Sends one request line; the answer line (without its newline) or NULL
 * when the child has gone. */
static const char *py_ask(pychild *p, const char *fmt, ...) {
    if (!p->ok) return NULL;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(p->to, fmt, ap);
    va_end(ap);
    fputc('\n', p->to);
    fflush(p->to);
    ssize_t n = getline(&p->line, &p->cap, p->from);
    if (n <= 0) {
        p->ok = false;
        snprintf(p->why, sizeof p->why, "%s %s exited (python3-numpy installed?)", python(),
                 MT_SWEEP_NUMPY_SCRIPT);
        return NULL;
    }
    p->line[strcspn(p->line, "\n")] = 0;
    return p->line;
}

static void py_stop(pychild *p) {
    if (p->pid <= 0) return;
    if (p->ok) {
        fprintf(p->to, "quit\n");
        fflush(p->to);
    }
    fclose(p->to);
    fclose(p->from);
    waitpid(p->pid, NULL, 0);
    free(p->line);
    p->pid = 0;
}

/* ---- results ---------------------------------------------------------------------- */

typedef enum status { ST_SKIP, ST_OK, ST_NOCOMPILE, ST_WRONG, ST_RUNFAIL } status;

typedef struct result {
    status st;
    double mt_s, np_s, blas_s; /* medians; 0 when not measured */
    int64_t out_n;             /* elements of the result */
    double stream_gbs;         /* memory-bound: STREAM add measured between its blocks */
    char note[160];            /* why not measured, or the NumPy error */
} result;

enum { MAXTHREADS = 2 };
static result results[NCASES][MAXTHREADS];
static int nthreads_list, threads_list[MAXTHREADS];
static double stream_gbs[MAXTHREADS]; /* at the start of the run */
static float *stream_buf[3];          /* STREAM's arrays, kept for the per-case passes */
static int64_t l2_bytes, l3_bytes;
static bool quick;
static const char *only;

static bool selected(int i) {
    if (quick && !CASES[i].quick) return false;
    if (!only) return true;
    char text[256];
    snprintf(text, sizeof text, "%s %s", CASES[i].expr, CASES[i].shapes);
    return strstr(text, only) != NULL;
}

static void sanitize(char *s) {
    for (; *s; s++)
        if (*s == '|' || *s == '\n') *s = *s == '|' ? '/' : ' ';
}

/* ---- timing --------------------------------------------------------------------------- */

typedef struct samples {
    double *t;
    int n, cap;
} samples;

static void push(samples *s, double t) {
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->t = realloc(s->t, sizeof *s->t * (size_t)s->cap);
        if (!s->t) die("out of memory");
    }
    s->t[s->n++] = t;
}

static int reps_for(double est_s, double block_s) {
    if (est_s <= 0) return 1;
    double r = block_s / est_s;
    return r < 1 ? 1 : r > 2000 ? 2000 : (int)r;
}

/* Reads "t T1 T2 ..." into s; false on anything else. */
static bool parse_times(const char *line, samples *s) {
    if (!line || strncmp(line, "t ", 2)) return false;
    const char *p = line + 2;
    char *end;
    for (double v = strtod(p, &end); end != p; v = strtod(p, &end)) {
        push(s, v);
        p = end;
    }
    return true;
}

typedef struct mtrun {
    mt_kernel *k;
    mt_tensor *args[MAXIN];
    int nargs;
    mt_tensor *out;
} mtrun;

static bool mt_once(mtrun *r, char *why, size_t cap) {
    mt_diag d;
    if (mt_kernel_run(r->k, r->args, r->nargs, &r->out, 1, &d) != MT_OK) {
        snprintf(why, cap, "run failed: %.140s", d.message);
        return false;
    }
    return true;
}

enum { ROUNDS = 3 };

/* ---- one case ------------------------------------------------------------------------ */

static double out_value(const mt_tensor *t, int64_t i) {
    const void *p = mt_tensor_data(t);
    switch (mt_tensor_dtype(t)) {
    case MT_FLOAT32: return ((const float *)p)[i];
    case MT_FLOAT64: return ((const double *)p)[i];
    case MT_INT64: return (double)((const int64_t *)p)[i];
    case MT_INT32: return ((const int32_t *)p)[i];
    default: return NAN;
    }
}

/* Compares our result with NumPy's answer "ok N V0 .. V32 M0 .. M32" at the
 * sample indices of numpy_sweep.py's sample_indices(). A value passes within
 * 2e-3 of itself, 2e-4 of the largest sample, or 1e-6 (8 float32 epsilons)
 * of its magnitude Mk (for a sum, the sum of |x|): float32 rounding, on our
 * side or NumPy's, stays well within these. An integer result (argmax's
 * index) must be equal. */
static bool check(const mt_tensor *out, const char *answer, char *why, size_t cap) {
    const char *p = answer + 3;
    char *end;
    long long n = strtoll(p, &end, 10);
    if (n != mt_tensor_numel(out)) {
        snprintf(why, cap, "result has %lld elements, NumPy's %lld", (long long)mt_tensor_numel(out), n);
        return false;
    }
    double want[33], mag[33], scale = 0;
    p = end;
    for (int k = 0; k < 66; k++) {
        double v = strtod(p, &end);
        if (end == p) {
            snprintf(why, cap, "cannot read NumPy's answer");
            return false;
        }
        p = end;
        if (k < 33) want[k] = v, scale = fmax(scale, fabs(v));
        else mag[k - 33] = v;
    }
    for (int k = 0; k < 33; k++) {
        int64_t i = k < 32 ? (int64_t)(((uint64_t)k * 2654435761u + 12345u) % (uint64_t)n) : n - 1;
        double got = out_value(out, i);
        bool exact = mt_tensor_dtype(out) == MT_INT64 || mt_tensor_dtype(out) == MT_INT32; /* argmax: an index */
        double tol = exact ? 0 : 2e-3 * fabs(want[k]) + 2e-4 * scale + 1e-6 * mag[k] + 1e-30;
        if (!(fabs(got - want[k]) <= tol)) {
            snprintf(why, cap, "at flat index %lld: %.7g, NumPy %.7g", (long long)i, got, want[k]);
            return false;
        }
    }
    return true;
}

enum { STREAM_N = 16 << 20 }; /* floats in each STREAM array: 64 MiB */

static bool memory_bound(int ci, int ti);

/* Compiles, checks and times case ci at threads list entry ti. */
static void run_case(int ci, int ti, mt_context *ctx, pychild *py, float **in, shape *sh, int nin,
                     float *blas_out, double block_s) {
    const scase *c = &CASES[ci];
    result *r = &results[ci][ti];
    int threads = threads_list[ti];
    char src[1024];
    case_source(c, src, sizeof src);
    mt_diag d;
    mtrun run = {0};
    run.k = mt_jit_compile(ctx, src, NULL, &d);
    if (!run.k) {
        r->st = ST_NOCOMPILE;
        snprintf(r->note, sizeof r->note, "%.150s", d.message);
        sanitize(r->note);
        return;
    }
    run.nargs = nin;
    for (int i = 0; i < nin; i++) {
        run.args[i] = mt_tensor_wrap(in[i], MT_FLOAT32, sh[i].ndim, sh[i].d, NULL);
        if (!run.args[i]) die("mt_tensor_wrap failed");
    }
    r->st = ST_OK;
    if (!mt_once(&run, r->note, sizeof r->note)) {
        r->st = ST_RUNFAIL;
        sanitize(r->note);
        goto done;
    }
    r->out_n = mt_tensor_numel(run.out);
    /* the NumPy side: its inputs, its result's samples */
    const char *ans = py_ask(py, "case %s %s", c->shapes, c->expr);
    bool np = ans && !strncmp(ans, "ok ", 3);
    if (!np) {
        snprintf(r->note, sizeof r->note, "NumPy: %.150s", ans ? ans : py->why);
        sanitize(r->note);
    } else if (!check(run.out, ans, r->note, sizeof r->note)) {
        r->st = ST_WRONG;
        sanitize(r->note);
    }
    bool use_blas = c->batch && blas.lib;
    if (use_blas) blas.set_threads(threads);

    /* estimates: one timed call each (after the warm-up above) */
    double t0 = now_s();
    mt_once(&run, r->note, sizeof r->note);
    double est_mt = now_s() - t0, est_np = 0, est_blas = 0;
    samples smt = {0}, snp = {0}, sbl = {0};
    if (np) {
        samples e = {0};
        if (parse_times(py_ask(py, "time 1 1"), &e) && e.n) est_np = e.t[0];
        free(e.t);
    }
    if (use_blas) {
        blas_run(c, in[0], in[1], blas_out);
        t0 = now_s();
        blas_run(c, in[0], in[1], blas_out);
        est_blas = now_s() - t0;
    }
    int rm = reps_for(est_mt, block_s), rn = reps_for(est_np, block_s),
        rb = reps_for(est_blas, block_s);
    /* a block's untimed first call wakes idle worker threads; a call over
     * 20 ms does not need it */
    bool wm = est_mt < 0.02, wn = est_np < 0.02, wb = est_blas < 0.02;
    bool np_spins = c->batch && threads > 1; /* NumPy's OpenBLAS threads spin a while */
    bool mem = memory_bound(ci, ti);
    double best_stream = 1e30;
    for (int round = 0; round < ROUNDS; round++) {
        if (mem) { /* the bandwidth now, for the share of STREAM */
            t0 = now_s();
            stream_add_pass(stream_buf[2], stream_buf[0], stream_buf[1], STREAM_N, threads);
            double t = now_s() - t0;
            if (t < best_stream) best_stream = t;
            usleep(10 * 1000);
        }
        if (np) {
            if (!parse_times(py_ask(py, "time %d %d", rn, wn), &snp)) {
                np = false;
                snprintf(r->note, sizeof r->note, "NumPy: %.150s", py->ok ? py->line : py->why);
                sanitize(r->note);
            }
            usleep(np_spins ? 150 * 1000 : 10 * 1000);
        }
        if (use_blas) {
            if (wb) blas_run(c, in[0], in[1], blas_out);
            for (int i = 0; i < rb; i++) {
                t0 = now_s();
                blas_run(c, in[0], in[1], blas_out);
                push(&sbl, now_s() - t0);
            }
            usleep(10 * 1000);
        }
        if (wm) mt_once(&run, r->note, sizeof r->note);
        for (int i = 0; i < rm; i++) {
            t0 = now_s();
            mt_once(&run, r->note, sizeof r->note);
            push(&smt, now_s() - t0);
        }
        usleep(10 * 1000);
    }
    r->mt_s = median(smt.t, smt.n);
    r->np_s = np && snp.n ? median(snp.t, snp.n) : 0;
    r->blas_s = use_blas && sbl.n ? median(sbl.t, sbl.n) : 0;
    r->stream_gbs = mem ? 3.0 * STREAM_N * sizeof(float) / best_stream / 1e9 : 0;
    free(smt.t), free(snp.t), free(sbl.t);
    if (use_blas) blas.set_threads(1);
done:
    for (int i = 0; i < nin; i++) mt_tensor_release(run.args[i]);
    if (run.out) mt_tensor_release(run.out);
    mt_kernel_release(run.k);
}

/* Bytes a case must move: every input read once, the result written once. */
static double case_bytes(int ci, int ti) {
    shape sh[MAXIN];
    int n = parse_shapes(CASES[ci].shapes, sh);
    double b = 0;
    for (int i = 0; i < n; i++) b += 4.0 * (double)numel(&sh[i]);
    return b + 4.0 * (double)results[ci][ti].out_n;
}

/* Memory-bound: every family but matmul, and a matmul under 4 flop/byte
 * (M up to about 8: below the machine balance of 2 cores, ~7 flop/byte). */
static bool memory_bound(int ci, int ti) {
    double fl = case_flops(&CASES[ci]);
    return fl == 0 || fl / case_bytes(ci, ti) < 4.0;
}

/* Larger than the L2 of the cores it runs on. */
static bool beyond_l2(int ci, int ti) {
    return case_bytes(ci, ti) > (double)l2_bytes * threads_list[ti];
}

/* Larger than twice the L3: its bytes come from memory. */
static bool beyond_l3(int ci, int ti) { return case_bytes(ci, ti) > 2.0 * (double)l3_bytes; }

static bool measured(const result *r) { return r->st == ST_OK && r->np_s > 0 && r->mt_s > 0; }

/* ---- report ------------------------------------------------------------------------ */

static void fmt_time(char *buf, size_t cap, double s) {
    if (s <= 0) snprintf(buf, cap, "–");
    else if (s < 1e-3) snprintf(buf, cap, "%.2f µs", s * 1e6);
    else snprintf(buf, cap, "%.2f ms", s * 1e3);
}

static void case_label(int ci, char *buf, size_t cap) {
    const scase *c = &CASES[ci];
    char sh[96];
    snprintf(sh, sizeof sh, "%s", c->shapes);
    for (char *p = sh; *p; p++)
        if (*p == ',') *p = ' ';
    snprintf(buf, cap, "`%s` %s", c->expr, sh);
}

static void print_row(int ci, int ti) {
    const result *r = &results[ci][ti];
    char label[192], tm[32], tn[32], tb[32], vs[32] = "–", vb[32] = "–", rate[48] = "–",
                                                 bw[32] = "–", chk[200];
    case_label(ci, label, sizeof label);
    if (r->st == ST_NOCOMPILE) {
        printf("| %s | %d | did not compile | | | | | | | %s |\n", label, threads_list[ti], r->note);
        return;
    }
    if (r->st == ST_RUNFAIL) {
        printf("| %s | %d | run failed | | | | | | | %s |\n", label, threads_list[ti], r->note);
        return;
    }
    fmt_time(tm, sizeof tm, r->mt_s);
    fmt_time(tn, sizeof tn, r->np_s);
    fmt_time(tb, sizeof tb, r->blas_s);
    if (r->np_s > 0) snprintf(vs, sizeof vs, "%s%.2fx%s", r->np_s < r->mt_s ? "**" : "",
                              r->np_s / r->mt_s, r->np_s < r->mt_s ? "**" : "");
    if (r->blas_s > 0) snprintf(vb, sizeof vb, "%.2fx", r->blas_s / r->mt_s);
    double fl = case_flops(&CASES[ci]), by = case_bytes(ci, ti);
    if (fl > 0) snprintf(rate, sizeof rate, "%.1f GFLOP/s", fl / r->mt_s / 1e9);
    else snprintf(rate, sizeof rate, "%.1f GB/s", by / r->mt_s / 1e9);
    if (memory_bound(ci, ti)) {
        double share = by / r->mt_s / 1e9 / r->stream_gbs * 100;
        if (beyond_l2(ci, ti)) snprintf(bw, sizeof bw, "%.0f %%", share);
        else snprintf(bw, sizeof bw, "(%.0f %%)", share);
        if (fl > 0) {
            size_t l = strlen(rate);
            snprintf(rate + l, sizeof rate - l, ", %.1f GB/s", by / r->mt_s / 1e9);
        }
    }
    if (r->st == ST_WRONG) snprintf(chk, sizeof chk, "**WRONG**: %s", r->note);
    else if (r->note[0]) snprintf(chk, sizeof chk, "unchecked: %s", r->note);
    else snprintf(chk, sizeof chk, "ok");
    printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", label, threads_list[ti], tm,
           tn, vs, tb, vb, rate, bw, chk);
}

static int cmp_ratio(const void *a, const void *b) {
    const int *x = a, *y = b; /* packed ci * MAXTHREADS + ti */
    const result *rx = &results[*x / MAXTHREADS][*x % MAXTHREADS],
                 *ry = &results[*y / MAXTHREADS][*y % MAXTHREADS];
    double p = rx->np_s / rx->mt_s, q = ry->np_s / ry->mt_s;
    return p < q ? -1 : p > q;
}

static void print_summary(int ti) {
    int threads = threads_list[ti], nmeas = 0, nslow = 0, nwrong = 0, nnoc = 0, nfail = 0,
        nunchecked = 0, nblas = 0, worst = -1, wblas = -1, nbw = 0, nbw80 = 0, ndw = 0, ndw80 = 0;
    double lsum = 0, lblas = 0, shares[NCASES], dshares[NCASES];
    for (int ci = 0; ci < NCASES; ci++) {
        if (!selected(ci)) continue;
        const result *r = &results[ci][ti];
        if (r->st == ST_NOCOMPILE) nnoc++;
        if (r->st == ST_WRONG) nwrong++;
        if (r->st == ST_RUNFAIL) nfail++;
        if (r->st == ST_OK && !measured(r)) nunchecked++;
        if (!measured(r)) continue;
        double ratio = r->np_s / r->mt_s;
        nmeas++;
        lsum += log(ratio);
        if (ratio < 1) nslow++;
        if (worst < 0 || ratio < results[worst][ti].np_s / results[worst][ti].mt_s) worst = ci;
        if (r->blas_s > 0) {
            nblas++;
            lblas += log(r->blas_s / r->mt_s);
            if (wblas < 0 || r->blas_s / r->mt_s < results[wblas][ti].blas_s / results[wblas][ti].mt_s)
                wblas = ci;
        }
        if (memory_bound(ci, ti) && beyond_l2(ci, ti)) {
            double sh = case_bytes(ci, ti) / r->mt_s / 1e9 / r->stream_gbs;
            shares[nbw++] = sh;
            if (sh >= 0.8) nbw80++;
            if (beyond_l3(ci, ti)) {
                dshares[ndw++] = sh;
                if (sh >= 0.8) ndw80++;
            }
        }
    }
    char label[192];
    printf("\n### Summary, %d thread%s\n\n", threads, threads > 1 ? "s" : "");
    printf("- cases measured (compiled, right, NumPy measured): %d; did not compile: %d; WRONG: "
           "%d; run failed: %d; right but without NumPy's time: %d\n",
           nmeas, nnoc, nwrong, nfail, nunchecked);
    if (nmeas) {
        printf("- **geometric mean of NumPy time / minitriton time: %.2fx** (goal ≥ 2x)\n",
               exp(lsum / nmeas));
        case_label(worst, label, sizeof label);
        printf("- worst: %s, %.2fx NumPy\n", label,
               results[worst][ti].np_s / results[worst][ti].mt_s);
        printf("- **slower than NumPy: %d of %d** (goal: none)\n", nslow, nmeas);
    }
    if (nblas) {
        case_label(wblas, label, sizeof label);
        printf("- matmul against OpenBLAS called directly (%d cases): geometric mean of BLAS time "
               "/ minitriton time %.2fx; worst %s, %.2fx\n",
               nblas, exp(lblas / nblas), label, results[wblas][ti].blas_s / results[wblas][ti].mt_s);
    }
    if (nbw) {
        double med = median(shares, nbw);
        printf("- memory-bound cases larger than L2 (bytes moved > %d x %lld KiB): %d; share of "
               "STREAM add (measured beside each case): min %.0f %%, median %.0f %%, max %.0f %%; "
               "**≥ 80 %%: %d of %d** (goal: all)\n",
               threads, (long long)(l2_bytes >> 10), nbw, shares[0] * 100, med * 100,
               shares[nbw - 1] * 100, nbw80, nbw);
    }
    if (ndw) {
        double med = median(dshares, ndw);
        printf("- of those, larger than twice the L3 (%lld MiB: from memory): %d; share of STREAM "
               "add: min %.0f %%, median %.0f %%, max %.0f %%; ≥ 80 %%: %d of %d\n",
               (long long)(2 * l3_bytes >> 20), ndw, dshares[0] * 100, med * 100,
               dshares[ndw - 1] * 100, ndw80, ndw);
    }
    if (nmeas) {
        printf("\n| family | cases | geometric mean of NumPy / ours | slower than NumPy | worst |\n"
               "| --- | --- | --- | --- | --- |\n");
        for (int f = 0; f < NFAMILIES; f++) {
            int n = 0, slow = 0, w = -1;
            double ls = 0;
            for (int ci = 0; ci < NCASES; ci++) {
                const result *r = &results[ci][ti];
                if (CASES[ci].fam != (family)f || !selected(ci) || !measured(r)) continue;
                double ratio = r->np_s / r->mt_s;
                n++;
                ls += log(ratio);
                slow += ratio < 1;
                if (w < 0 || ratio < results[w][ti].np_s / results[w][ti].mt_s) w = ci;
            }
            if (!n) continue;
            case_label(w, label, sizeof label);
            printf("| %s | %d | %.2fx | %d | %s, %.2fx |\n", FAMILY_TITLE[f], n, exp(ls / n), slow,
                   label, results[w][ti].np_s / results[w][ti].mt_s);
        }
    }
    if (nslow) {
        int idx[NCASES], n = 0;
        for (int ci = 0; ci < NCASES; ci++)
            if (selected(ci) && measured(&results[ci][ti]) &&
                results[ci][ti].np_s < results[ci][ti].mt_s)
                idx[n++] = ci * MAXTHREADS + ti;
        qsort(idx, (size_t)n, sizeof *idx, cmp_ratio);
        printf("\nSlower than NumPy on %d thread%s (the work list), slowest first:\n\n", threads,
               threads > 1 ? "s" : "");
        printf("| case | family | minitriton | NumPy | NumPy / ours |\n| --- | --- | --- | --- | --- |\n");
        for (int q = 0; q < n; q++) {
            int ci = idx[q] / MAXTHREADS;
            const result *r = &results[ci][ti];
            char tm[32], tn[32];
            fmt_time(tm, sizeof tm, r->mt_s);
            fmt_time(tn, sizeof tn, r->np_s);
            case_label(ci, label, sizeof label);
            printf("| %s | %s | %s | %s | %.2fx |\n", label, FAMILY_TITLE[CASES[ci].fam], tm, tn,
                   r->np_s / r->mt_s);
        }
    }
    if (nwrong + nnoc + nfail) {
        printf("\nDid not compile, failed or WRONG on %d thread%s:\n\n", threads, threads > 1 ? "s" : "");
        for (int ci = 0; ci < NCASES; ci++) {
            const result *r = &results[ci][ti];
            if (!selected(ci) || (r->st != ST_WRONG && r->st != ST_NOCOMPILE && r->st != ST_RUNFAIL))
                continue;
            case_label(ci, label, sizeof label);
            printf("- %s: %s: %s\n", label,
                   r->st == ST_WRONG ? "WRONG" : r->st == ST_NOCOMPILE ? "did not compile" : "run failed",
                   r->note);
        }
    }
}

/* ---- main ------------------------------------------------------------------------------ */


static void loadavg(char *buf, size_t cap) {
    snprintf(buf, cap, "?");
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return;
    double a, b, c;
    if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(buf, cap, "%.2f, %.2f, %.2f", a, b, c);
    fclose(f);
}

/* Cache level `level`'s size in bytes (L2 per core; L3 shared): sysfs's, as
 * lscpu reads it (glibc's sysconf gave 256 MiB for a 32 MiB L3 in a VM),
 * else sysconf's, else `dflt`. */
static int64_t cache_size(int level, int64_t dflt) {
    for (int idx = 0; idx < 8; idx++) {
        char path[96], type[32] = "";
        int lv = 0;
        long k = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", idx);
        FILE *f = fopen(path, "r");
        if (!f) break;
        if (fscanf(f, "%d", &lv) != 1) lv = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", idx);
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%31s", type) != 1) type[0] = 0;
            fclose(f);
        }
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
        if (lv == level && strcmp(type, "Instruction") && (f = fopen(path, "r"))) {
            if (fscanf(f, "%ldK", &k) != 1) k = 0;
            fclose(f);
            if (k > 0) return (int64_t)k << 10;
        }
    }
    long v = sysconf(level == 2 ? _SC_LEVEL2_CACHE_SIZE : _SC_LEVEL3_CACHE_SIZE);
    return v > 0 ? v : dflt;
}

static void usage(void) {
    fprintf(stderr, "usage: mt_sweep [--quick] [--threads 2|1|1,2] [NAME]\n"
                    "  --quick    a subset with shorter timing blocks (under a minute)\n"
                    "  --threads  the thread counts to run (default 2)\n"
                    "  NAME       only the cases whose expression and shapes contain NAME\n");
    exit(2);
}

int main(int argc, char **argv) {
    nthreads_list = 1;
    threads_list[0] = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            const char *t = argv[++i];
            if (!strcmp(t, "1") || !strcmp(t, "2")) nthreads_list = 1, threads_list[0] = atoi(t);
            else if (!strcmp(t, "1,2")) nthreads_list = 2, threads_list[0] = 1, threads_list[1] = 2;
            else usage();
        } else if (argv[i][0] == '-' || only) usage();
        else only = argv[i];
    }
    signal(SIGPIPE, SIG_IGN);
    time_t now = time(NULL);
    char date[64], cpu[256], load0[64], load1[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M %Z", gmtime(&now));
    bench_cpu_model(cpu, sizeof cpu);
    loadavg(load0, sizeof load0);
    l2_bytes = cache_size(2, (int64_t)1 << 20);
    l3_bytes = cache_size(3, (int64_t)32 << 20);
    double block_s = quick ? 0.02 : 0.05;

    /* 1. STREAM add over three 64 MiB arrays */
    fprintf(stderr, "mt_sweep: memory bandwidth ...\n");
    for (int i = 0; i < 3; i++) stream_buf[i] = fill(STREAM_N, i + 1);
    for (int ti = 0; ti < nthreads_list; ti++)
        stream_gbs[ti] = stream_add_gbs(stream_buf[2], stream_buf[0], stream_buf[1], STREAM_N,
                                        threads_list[ti], 12);

    /* 2. OpenBLAS, NumPy children, contexts */
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0); /* mt_sweep's OpenBLAS: idle workers sleep at once */
    blas_load();
    pychild py[MAXTHREADS];
    mt_context *ctx[MAXTHREADS];
    char npver[64] = "?";
    for (int ti = 0; ti < nthreads_list; ti++) {
        if (!py_start(&py[ti], threads_list[ti]))
            fprintf(stderr, "mt_sweep: no NumPy: %s\n", py[ti].why);
        const char *v = py_ask(&py[ti], "version");
        if (v && !strncmp(v, "ok ", 3)) snprintf(npver, sizeof npver, "%s", v + 3);
        mt_context_options co = {0};
        co.num_threads = threads_list[ti];
        ctx[ti] = mt_context_create(&co);
        if (!ctx[ti]) die("mt_context_create failed");
    }

    /* 3. the cases */
    double t_start = now_s();
    for (int ci = 0; ci < NCASES; ci++) {
        if (!selected(ci)) continue;
        const scase *c = &CASES[ci];
        shape sh[MAXIN];
        int nin = parse_shapes(c->shapes, sh);
        float *in[MAXIN];
        for (int i = 0; i < nin; i++) in[i] = fill(numel(&sh[i]), i + 1);
        float *blas_out = c->batch && blas.lib ? fill((int64_t)c->batch * c->m * c->n, 0) : NULL;
        for (int ti = 0; ti < nthreads_list; ti++) {
            fprintf(stderr, "  %-32s %-28s %d thread%s ...\n", c->expr, c->shapes, threads_list[ti],
                    threads_list[ti] > 1 ? "s" : "");
            run_case(ci, ti, ctx[ti], &py[ti], in, sh, nin, blas_out, block_s);
        }
        for (int i = 0; i < nin; i++) free(in[i]);
        free(blas_out);
    }
    double elapsed = now_s() - t_start;
    for (int ti = 0; ti < nthreads_list; ti++) {
        py_stop(&py[ti]);
        mt_context_destroy(ctx[ti]);
    }
    loadavg(load1, sizeof load1);

    /* ---- report ---- */
    printf("# minitriton shape sweep\n\n");
    printf("- date: %s\n- machine: %s, %ld online CPUs, L2 %lld KiB per core, L3 %lld MiB\n"
           "- minitriton %s\n",
           date, cpu, sysconf(_SC_NPROCESSORS_ONLN), (long long)(l2_bytes >> 10),
           (long long)(l3_bytes >> 20), mt_version());
    const char *coretype = getenv("OPENBLAS_CORETYPE");
    if (blas.lib)
        printf("- OpenBLAS: %s; core %s (OPENBLAS_CORETYPE=%s)\n", blas.config ? blas.config() : "?",
               blas.corename ? blas.corename() : "?", coretype ? coretype : "unset");
    else
        printf("- OpenBLAS: skipped: %s\n", blas.why);
    printf("- NumPy %s in %s (OPENBLAS_NUM_THREADS = the row's threads)\n", npver, python());
    printf("- command: mt_sweep");
    for (int i = 1; i < argc; i++) printf(" %s", argv[i]);
    printf("; the cases took %.0f s\n", elapsed);
    printf("- load average (1, 5, 15 min) before: %s; after: %s\n", load0, load1);
    for (int ti = 0; ti < nthreads_list; ti++)
        printf("- STREAM add c = a + b, 3 x 64 MiB, %d thread%s (best of 11, at the start): %.1f GB/s\n",
               threads_list[ti], threads_list[ti] > 1 ? "s" : "", stream_gbs[ti]);
    printf("\nColumns: minitriton's and NumPy's median time per call (alternating blocks, the "
           "same inputs); NumPy / ours (> 1: minitriton is faster; **bold** when slower); "
           "OpenBLAS: cblas_sgemm (cblas_sgemv when M = 1) called directly for the same product (a "
           "loop over the batch; one call when the batch shares its matrix b); "
           "rate: GFLOP/s (matmul) or GB/s (bytes moved: inputs once, result once); of STREAM: "
           "that rate as a share of STREAM add's bandwidth on as many threads (the best of the three "
           "passes run between the case's blocks), for memory-bound cases (in parentheses when "
           "the bytes fit in the L2 of those cores; over 100 %% when they fit in L3); check: the "
           "result against NumPy's at 33 sample indices (within float32 rounding of the "
           "sample's magnitude; WRONG otherwise).\n");
    for (int f = 0; f < NFAMILIES; f++) {
        bool any = false;
        for (int ci = 0; ci < NCASES; ci++) any |= CASES[ci].fam == (family)f && selected(ci);
        if (!any) continue;
        printf("\n## %s\n\n", FAMILY_TITLE[f]);
        printf("| case | threads | minitriton | NumPy | NumPy / ours | OpenBLAS | BLAS / ours | "
               "rate | of STREAM | check |\n");
        printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
        for (int ci = 0; ci < NCASES; ci++)
            if (CASES[ci].fam == (family)f && selected(ci))
                for (int ti = 0; ti < nthreads_list; ti++) print_row(ci, ti);
    }
    printf("\n## Summary\n");
    for (int ti = 0; ti < nthreads_list; ti++) print_summary(ti);
    for (int i = 0; i < 3; i++) free(stream_buf[i]);
    if (blas.lib) dlclose(blas.lib);
    return 0;
}
