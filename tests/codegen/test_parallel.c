/*
 * test_parallel.c -- the runtime parallel-for (src/runtime/parallel.c) and
 * the code generated for parallel loops (split_host_device outlines them,
 * src/codegen/llvm.c generates the launches: closures, captures, nesting,
 * parts), on hand-built lowered TIR run through the JIT and compared with C
 * references.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "codegen/cg_util.h"
#include "runtime/parallel.h"
#include "support/diag.h"
#include "tir/tir.h"

static mt_jit *jit;
static mt_arena *A;
static mt_thread_pool *pool4; /* the main thread's current pool: 4 threads */

/* ---- the runtime call ------------------------------------------------------- */

enum { MAXN = 5000 };

typedef struct cover {
    int hits[MAXN];        /* times each iteration ran */
    int calls;             /* body calls */
    int64_t min_len;       /* shortest range */
    pthread_mutex_t mu;
} cover;

static void cover_body(int64_t b, int64_t e, void *c_) {
    cover *c = c_;
    pthread_mutex_lock(&c->mu);
    c->calls++;
    if (c->min_len < 0 || e - b < c->min_len) c->min_len = e - b;
    for (int64_t i = b; i < e; i++) c->hits[i]++;
    pthread_mutex_unlock(&c->mu);
}

static void run_cover(int64_t n, int threads, cover *c) {
    memset(c->hits, 0, sizeof c->hits);
    c->calls = 0;
    c->min_len = -1;
    int prev = mt_parallel_set_num_threads(threads);
    mt_parallel_for(n, cover_body, c);
    assert_int_equal(mt_parallel_set_num_threads(prev), threads > 0 ? threads : 0);
}

/* Body calls of a region: [0, n) in min(n, threads) ranges, each cut into
 * at most 8 chunks (parallel.c), one call per chunk; one call when serial. */
static int64_t expected_calls(int64_t n, int64_t threads) {
    if (n <= 0) return 0;
    int64_t t = threads < n ? threads : n, calls = 0;
    if (t == 1) return 1;
    for (int64_t r = 0; r < t; r++) {
        int64_t len = n / t + (r < n % t);
        calls += len < 8 ? len : 8;
    }
    return calls;
}

static void test_runtime_cover(void **state) {
    cover c;
    pthread_mutex_init(&c.mu, NULL);
    static const int64_t ns[] = {0, 1, 2, 3, 7, 100, 1000, 4097};
    static const int ts[] = {1, 2, 3, 8, 0};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (size_t t = 0; t < sizeof ts / sizeof ts[0]; t++) {
            run_cover(ns[i], ts[t], &c);
            for (int64_t k = 0; k < ns[i]; k++) assert_int_equal(c.hits[k], 1);
            int64_t th = ts[t] == 0 ? 4 : ts[t]; /* 0: the pool's size */
            assert_int_equal(c.calls, expected_calls(ns[i], th));
            if (ns[i] > 0) assert_true(c.min_len >= 1);
        }
    run_cover(-5, 2, &c);
    assert_int_equal(c.calls, 0);
    pthread_mutex_destroy(&c.mu);
}

/* A body that calls mt_parallel_for again: the inner call must stay on the
 * calling thread (one body call over the whole range). */
typedef struct nested {
    cover inner[8];
    int next;
    pthread_mutex_t mu;
} nested;

static void nested_body(int64_t b, int64_t e, void *n_) {
    nested *n = n_;
    pthread_mutex_lock(&n->mu);
    cover *c = &n->inner[n->next++];
    pthread_mutex_unlock(&n->mu);
    for (int64_t i = b; i < e; i++) {
        mt_parallel_for(10, cover_body, c);
    }
}

static void test_runtime_nested(void **state) {
    nested *n = calloc(1, sizeof *n);
    pthread_mutex_init(&n->mu, NULL);
    for (int i = 0; i < 8; i++) {
        pthread_mutex_init(&n->inner[i].mu, NULL);
        n->inner[i].min_len = -1;
    }
    int prev = mt_parallel_set_num_threads(4);
    mt_parallel_for(4, nested_body, n);
    mt_parallel_set_num_threads(prev);
    assert_true(n->next >= 1 && n->next <= 4);
    for (int i = 0; i < n->next; i++) {
        assert_true(n->inner[i].calls >= 1);
        assert_int_equal(n->inner[i].min_len, 10); /* serial: the whole range at once */
    }
    for (int i = 0; i < 8; i++) pthread_mutex_destroy(&n->inner[i].mu);
    pthread_mutex_destroy(&n->mu);
    free(n);
}

/* Two host threads with different counts and pools at the same time: each
 * sees its own. */
typedef struct host {
    int threads;
    int calls[50];
} host;

static void count_body(int64_t b, int64_t e, void *c_) {
    (void)b, (void)e;
    __atomic_add_fetch((int *)c_, 1, __ATOMIC_RELAXED);
}

static void *host_main(void *h_) {
    host *h = h_;
    mt_thread_pool *p = mt_thread_pool_create(h->threads);
    assert_non_null(p);
    assert_null(mt_parallel_set_pool(p)); /* a new thread has no pool */
    mt_parallel_set_num_threads(h->threads);
    for (int r = 0; r < 50; r++) mt_parallel_for(1000, count_body, &h->calls[r]);
    assert_ptr_equal(mt_parallel_set_pool(NULL), p);
    assert_int_equal(mt_thread_pool_started(p), h->threads - 1);
    mt_thread_pool_destroy(p);
    return NULL;
}

static void test_runtime_thread_counts(void **state) {
    host h1 = {1, {0}}, h3 = {3, {0}};
    pthread_t t1, t3;
    assert_int_equal(pthread_create(&t1, NULL, host_main, &h1), 0);
    assert_int_equal(pthread_create(&t3, NULL, host_main, &h3), 0);
    pthread_join(t1, NULL);
    pthread_join(t3, NULL);
    for (int r = 0; r < 50; r++) {
        assert_int_equal(h1.calls[r], 1);
        assert_int_equal(h3.calls[r], expected_calls(1000, 3));
    }
    assert_int_equal(mt_parallel_set_num_threads(0), 0); /* this thread untouched */
}

/* ---- the pool ------------------------------------------------------------------ */

/* Adds one to out[i] for each iteration i: every element must end at 1. */
static void add_one_body(int64_t b, int64_t e, void *c_) {
    int *out = c_;
    for (int64_t i = b; i < e; i++) out[i]++;
}

/* Many regions of every size on one pool: the same workers serve them all,
 * every iteration runs once per region. */
static void test_pool_reuse(void **state) {
    enum { N = 257, RUNS = 20000 };
    int *out = calloc(N, sizeof *out);
    for (int r = 0; r < RUNS; r++) mt_parallel_for(1 + r % N, add_one_body, out);
    /* element i ran in every region whose n = 1 + r % N exceeds i */
    for (int i = 0; i < N; i++) {
        int want = 0;
        for (int r = 0; r < RUNS; r++) want += 1 + r % N > i;
        assert_int_equal(out[i], want);
    }
    assert_int_equal(mt_thread_pool_size(pool4), 4);
    assert_int_equal(mt_thread_pool_started(pool4), 3);
    free(out);
}

/* A late worker costs only the chunks it did not get to: the first chunk
 * that runs on another thread than the caller sleeps 100 ms, and meanwhile
 * the caller, done with its own range, takes every other chunk of the
 * region from the backs of the other ranges. */
typedef struct late {
    pthread_t caller;
    int caller_calls, other_calls;
    int hits[64];
    pthread_mutex_t mu;
} late;

static void late_body(int64_t b, int64_t e, void *l_) {
    late *l = l_;
    pthread_mutex_lock(&l->mu);
    bool mine = pthread_equal(pthread_self(), l->caller);
    int other = mine ? 0 : l->other_calls++;
    l->caller_calls += mine;
    for (int64_t i = b; i < e; i++) l->hits[i]++;
    pthread_mutex_unlock(&l->mu);
    if (!mine && other == 0) usleep(100 * 1000);
}

static void test_late_worker(void **state) {
    late l = {.caller = pthread_self()};
    pthread_mutex_init(&l.mu, NULL);
    int prev = mt_parallel_set_num_threads(2);
    mt_parallel_for(64, late_body, &l); /* 2 ranges of 32, 8 chunks of 4 each */
    mt_parallel_set_num_threads(prev);
    for (int i = 0; i < 64; i++) assert_int_equal(l.hits[i], 1);
    assert_true(l.other_calls <= 1); /* the sleeper's one chunk, or none at all */
    assert_int_equal(l.caller_calls + l.other_calls, 16);
    pthread_mutex_destroy(&l.mu);
}

/* Without a current pool a loop runs serially: one body call. */
static void test_no_pool(void **state) {
    cover *c = calloc(1, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    assert_ptr_equal(mt_parallel_set_pool(NULL), pool4);
    assert_int_equal(mt_parallel_num_threads(), 1);
    run_cover(1000, 4, c);
    assert_int_equal(c->calls, 1);
    assert_int_equal(c->min_len, 1000);
    assert_null(mt_parallel_set_pool(pool4));
    assert_int_equal(mt_parallel_num_threads(), 4);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* Four host threads on one pool at once: one runs each region on the pool,
 * the others run theirs serially; every iteration of every region runs
 * exactly once and nothing deadlocks. */
typedef struct sharer {
    mt_thread_pool *pool;
    int threads;
    int out[3001];
} sharer;

static void *sharer_main(void *s_) {
    sharer *s = s_;
    mt_parallel_set_pool(s->pool);
    mt_parallel_set_num_threads(s->threads);
    for (int r = 0; r < 500; r++) mt_parallel_for(3001, add_one_body, s->out);
    mt_parallel_set_pool(NULL);
    return NULL;
}

static void test_pool_shared(void **state) {
    mt_thread_pool *p = mt_thread_pool_create(3);
    sharer *s = calloc(4, sizeof *s);
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        s[i].pool = p;
        s[i].threads = i + 1;
        assert_int_equal(pthread_create(&t[i], NULL, sharer_main, &s[i]), 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3001; k++) assert_int_equal(s[i].out[k], 500);
    mt_thread_pool_destroy(p);
    free(s);
}

/* Pools created and destroyed: never started, started and idle (workers
 * asleep), started and destroyed right after a region (workers spinning). */
static void test_pool_lifecycle(void **state) {
    mt_thread_pool *prev = mt_parallel_set_pool(NULL);
    int *out = calloc(100, sizeof *out);
    for (int i = 0; i < 200; i++) {
        mt_thread_pool *p = mt_thread_pool_create(1 + i % 5);
        assert_non_null(p);
        assert_int_equal(mt_thread_pool_started(p), 0);
        if (i % 3) {
            mt_parallel_set_pool(p);
            mt_parallel_for(100, add_one_body, out);
            mt_parallel_set_pool(NULL);
            assert_int_equal(mt_thread_pool_started(p), i % 5);
            if (i % 50 == 1) usleep(20000); /* long enough for the workers to sleep */
        }
        mt_thread_pool_destroy(p);
    }
    for (int k = 0; k < 100; k++) assert_int_equal(out[k], 133);
    mt_thread_pool_destroy(NULL);
    mt_thread_pool *c = mt_thread_pool_create(0);
    assert_int_equal(mt_thread_pool_size(c), mt_parallel_num_cpus());
    mt_thread_pool_destroy(c);
    mt_parallel_set_pool(prev);
    free(out);
}

/* After a region the workers poll for 2 ms at most (a spin of a few
 * microseconds, then polls that yield the CPU), then sleep: the process
 * uses (almost) no CPU while it waits. */
static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec +
           1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static void test_pool_idle_sleeps(void **state) {
    int *out = calloc(100, sizeof *out);
    mt_parallel_for(100, add_one_body, out); /* workers started, now idle */
    usleep(5000);
    double c0 = cpu_seconds();
    usleep(200000);
    double used = cpu_seconds() - c0;
    /* three spinning workers would use up to 0.6 s of CPU here */
    if (used > 0.02) fail_msg("idle pool used %.3f s of CPU in 0.2 s", used);
    free(out);
}

/* A worker that finds itself on the CPU of the thread that started the
 * region moves to another CPU it may use, and keeps its affinity
 * (parallel.c, leave_caller_cpu). The caller pins itself to one CPU; a
 * first region puts the worker on that same CPU (its body narrows its own
 * affinity to it, then widens it again: the thread stays where it is); in
 * the next region, right after or after a pause that lets the worker fall
 * asleep, the worker's chunks must (almost) never run on the caller's CPU,
 * and its affinity is the one it was created with. */
typedef struct colo {
    pthread_t caller;
    int caller_cpu;
    bool park;       /* this region: move the worker to the caller's CPU */
    int worker_chunks, on_caller_cpu, mask_changed;
    cpu_set_t mask;  /* the affinity the worker was created with */
} colo;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void colo_body(int64_t b, int64_t e, void *c_) {
    colo *c = c_;
    (void)b, (void)e;
    bool worker = !pthread_equal(pthread_self(), c->caller);
    if (worker && c->park) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(c->caller_cpu, &one);
        pthread_setaffinity_np(pthread_self(), sizeof one, &one);
        pthread_setaffinity_np(pthread_self(), sizeof c->mask, &c->mask);
        return;
    }
    if (worker) { /* chunks run one at a time per thread: no lock needed */
        c->worker_chunks++;
        c->on_caller_cpu += sched_getcpu() == c->caller_cpu;
        cpu_set_t now;
        if (pthread_getaffinity_np(pthread_self(), sizeof now, &now) != 0 || !CPU_EQUAL(&now, &c->mask))
            c->mask_changed++;
    }
    double t0 = now_ms();
    while (now_ms() - t0 < 0.5) {
    }
}

static void test_worker_leaves_caller_cpu(void **state) {
    colo c = {.caller = pthread_self()};
    assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof c.mask, &c.mask), 0);
    if (CPU_COUNT(&c.mask) < 2) {
        printf("skipped: one CPU available, nowhere to move to\n");
        skip();
    }
    mt_thread_pool *prev = mt_parallel_set_pool(NULL);
    mt_thread_pool *p = mt_thread_pool_create(2);
    mt_parallel_set_pool(p);
    int nt = mt_parallel_set_num_threads(2);
    int *out = calloc(2, sizeof *out);
    mt_parallel_for(2, add_one_body, out); /* the worker starts with the caller's affinity */
    free(out);
    c.caller_cpu = sched_getcpu();
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(c.caller_cpu, &one);
    assert_int_equal(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
    for (int r = 0; r < 20; r++) {
        c.park = true;
        mt_parallel_for(2, colo_body, &c); /* 2 chunks: one per thread, or both the caller's */
        c.park = false;
        if (r % 2) usleep(4000); /* past the worker's polling: asleep */
        mt_parallel_for(16, colo_body, &c);
    }
    assert_int_equal(pthread_setaffinity_np(pthread_self(), sizeof c.mask, &c.mask), 0);
    mt_parallel_set_num_threads(nt);
    mt_parallel_set_pool(prev);
    mt_thread_pool_destroy(p);
    assert_true(c.worker_chunks > 0);
    assert_int_equal(c.mask_changed, 0);
    if (c.on_caller_cpu * 10 > c.worker_chunks)
        fail_msg("%d of %d worker chunks ran on the caller's CPU", c.on_caller_cpu, c.worker_chunks);
}

/* ---- generated code --------------------------------------------------------- */

static mt_texpr *I(int64_t v) { return mt_te_i64(A, v); }
static mt_texpr *V(mt_tvar *v) { return mt_te_var(A, v); }
static mt_texpr *ld(mt_tbuffer *b, mt_texpr *i) { return mt_te_load(A, b, &i, 1); }
static mt_tstmt *st(mt_tbuffer *b, mt_texpr *i, mt_texpr *v) { return mt_ts_store(A, b, &i, 1, v); }
static mt_texpr *bin(mt_texpr_kind k, mt_texpr *x, mt_texpr *y) { return mt_te_bin(A, k, x, y); }
static mt_tbuffer *buf1(const char *name, mt_texpr *n) {
    return mt_tbuffer_new(A, name, MT_FLOAT32, 1, &n);
}
static mt_tvar *ivar(const char *name) { return mt_tvar_new(A, name, MT_INT64); }
static mt_tstmt *loop(mt_tvar *i, mt_texpr *min, mt_texpr *ext, mt_for_kind k, mt_tstmt *body) {
    return mt_ts_for(A, i, min, ext, k, body);
}

/* Compiles f at opt on `threads` threads: on more than one, each parallel
 * loop's body is a module of its own (docs/codegen.md). */
static mt_codegen_out compile_t(mt_tfunc *f, int opt, int threads) {
    mt_codegen_out out;
    memset(&out, 0, sizeof out);
    mt_errframe fr;
    if (MT_TRY(&fr)) {
        cg_compile(jit, A, &f, 1, opt, threads, &out);
        mt_err_pop(&fr);
    } else {
        mt_err_pop(&fr);
        fail_msg("%s", fr.msg);
    }
    char err[256];
    const char *ir = mt_jit_ir_text(A, cg_parts(&out), out.nparts, err, sizeof err);
    if (!ir) fail_msg("%s", err);
    if (getenv("DUMPIR") && strstr(ir, getenv("DUMPIR"))) fputs(ir, stderr);
    return out;
}
static mt_codegen_out compile(mt_tfunc *f, int opt) { return compile_t(f, opt, 2); }

static const int64_t sizes[] = {0, 1, 7, 1000, 4097, (1 << 20) + 3};

/* for c in T.parallel(ceildiv(n, 512)):
 *     for i in range(min(512, n - c * 512)):
 *         out[c * 512 + i] = a[c * 512 + i] * alpha + b[c * 512 + i]
 * with a scalar param alpha (captured by value) and n (a sym var). */
static void test_chunked_loop(void **state) {
    mt_tvar *n = ivar("n"), *c = ivar("c"), *i = ivar("i");
    mt_tvar *alpha = mt_tvar_new(A, "alpha", MT_FLOAT32);
    mt_tbuffer *a = buf1("a", V(n)), *b = buf1("b", V(n)), *o = buf1("out", V(n));
    mt_texpr *idx = bin(TE_ADD, bin(TE_MUL, V(c), I(512)), V(i));
    mt_tstmt *inner = loop(i, I(0), bin(TE_MIN, I(512), bin(TE_SUB, V(n), bin(TE_MUL, V(c), I(512)))),
                           MT_FOR_SERIAL,
                           st(o, idx, bin(TE_ADD, bin(TE_MUL, ld(a, idx), V(alpha)), ld(b, idx))));
    mt_tstmt *outer = loop(c, I(0), bin(TE_FLOORDIV, bin(TE_ADD, V(n), I(511)), I(512)),
                           MT_FOR_PARALLEL, inner);
    mt_tfunc *f = mt_tfunc_new(A, "chunked");
    mt_tfunc_add_param(A, f, a, NULL);
    mt_tfunc_add_param(A, f, b, NULL);
    mt_tfunc_add_param(A, f, NULL, alpha);
    mt_tfunc_add_param(A, f, o, NULL);
    f->sym_vars = MT_NEW_ARRAY(A, mt_tvar *, 1);
    f->sym_vars[0] = n;
    f->nsym = 1;
    f->num_outputs = 1;
    f->body = outer;
    for (int run = 0; run < 3; run++) {
        /* opt 0 and 3 on 2 threads (the loop body in a module of its own),
         * opt 3 on one thread (one module) */
        int opt = run == 0 ? 0 : 3, threads = run == 2 ? 1 : 2;
        mt_codegen_out r = compile_t(f, opt, threads);
        assert_int_equal(r.nparts, threads == 1 ? 1 : 2);
        const char *ir = cg_ir_text(A, &r);
        if (opt == 0) {
            assert_non_null(strstr(ir, "call void @mt_parallel_for("));
            /* the outlined loop keeps noalias on the buffers */
            assert_non_null(strstr(ir, "define internal void @"));
            assert_non_null(strstr(ir, "_par0(i64 %begin, i64 %end"));
            assert_non_null(strstr(ir, "ptr noalias nocapture align 4 %a"));
            /* the body is exported from its part, the kernel calls it */
            const char *body = strstr(ir, "_par0.body(i64");
            assert_non_null(body);
            const char *def = body; /* back to the start of its line */
            while (def > ir && def[-1] != '\n') def--;
            assert_true(strncmp(def, "define void @", 13) == 0);
        }
        if (threads == 1) assert_non_null(strstr(ir, "define internal void @"));
        void (*fn)(const float *, const float *, float, float *, int64_t) =
            (void (*)(const float *, const float *, float, float *, int64_t))r.fn_addrs[0];
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int th = 1; th <= 3; th++) {
                int64_t N = sizes[s];
                float *av = malloc(sizeof(float) * (size_t)(N + 1));
                float *bv = malloc(sizeof(float) * (size_t)(N + 1));
                float *ov = malloc(sizeof(float) * (size_t)(N + 1));
                for (int64_t k = 0; k < N; k++) {
                    av[k] = (float)(k % 97) * 0.5f - 3;
                    bv[k] = (float)(k % 13);
                }
                ov[N] = 42.0f; /* one past the end: must stay */
                int prev = mt_parallel_set_num_threads(th);
                fn(av, bv, 1.5f, ov, N);
                mt_parallel_set_num_threads(prev);
                for (int64_t k = 0; k < N; k++) assert_true(ov[k] == av[k] * 1.5f + bv[k]);
                assert_true(ov[N] == 42.0f);
                free(av), free(bv), free(ov);
            }
        mt_jit_module_release(r.module);
    }
}

/* Captures of every kind, a nested parallel loop (runs serially), a
 * parallel loop with min != 0 inside a serial loop, a let outside and an
 * allocation inside the parallel body:
 *
 *   for r in range(2):                       # serial
 *       s = r * 10                           # let, captured
 *       for p in T.parallel(3, 3 + m):        # min 3
 *           tmp = alloc((4,))                 # per iteration, inside the body
 *           for q in T.parallel(4):           # nested: serial
 *               tmp[q] = float(p + q + s)
 *           out[r * (m + 3) + p] = tmp[0] + tmp[3]
 */
static void test_captures_and_nesting(void **state) {
    mt_tvar *m = ivar("m"), *r = ivar("r"), *s = ivar("s"), *p = ivar("p"), *q = ivar("q");
    mt_texpr *rows = bin(TE_ADD, V(m), I(3));
    mt_tbuffer *o = buf1("out", bin(TE_MUL, I(2), rows));
    mt_texpr *four = I(4);
    mt_tbuffer *tmp = mt_tbuffer_new(A, "tmp", MT_FLOAT32, 1, &four);
    mt_tstmt *fill = loop(q, I(0), I(4), MT_FOR_PARALLEL,
                          st(tmp, V(q), mt_te_cast(A, MT_FLOAT32,
                                                   bin(TE_ADD, bin(TE_ADD, V(p), V(q)), V(s)))));
    mt_tstmt *use = st(o, bin(TE_ADD, bin(TE_MUL, V(r), rows), V(p)),
                       bin(TE_ADD, ld(tmp, I(0)), ld(tmp, I(3))));
    mt_tstmt *pair[2] = {fill, use};
    mt_tstmt *pbody = mt_ts_alloc(A, tmp, mt_ts_seq(A, pair, 2));
    mt_tstmt *ploop = loop(p, I(3), V(m), MT_FOR_PARALLEL, pbody);
    mt_tstmt *body = loop(r, I(0), I(2), MT_FOR_SERIAL,
                          mt_ts_let(A, s, bin(TE_MUL, V(r), I(10)), ploop));
    mt_tfunc *f = mt_tfunc_new(A, "caps");
    mt_tfunc_add_param(A, f, o, NULL);
    f->sym_vars = MT_NEW_ARRAY(A, mt_tvar *, 1);
    f->sym_vars[0] = m;
    f->nsym = 1;
    f->num_outputs = 1;
    f->body = body;
    mt_codegen_out res = compile(f, 0);
    /* one outlined loop: the nested parallel loop is not outlined again */
    const char *ir = cg_ir_text(A, &res);
    assert_non_null(strstr(ir, "_par0("));
    assert_null(strstr(ir, "_par1("));
    mt_jit_module_release(res.module);
    for (int threads = 1; threads <= 2; threads++) {
        res = compile_t(f, 3, threads);
        assert_int_equal(res.nparts, threads); /* one part for the one outlined loop */
        void (*fn)(float *, int64_t) = (void (*)(float *, int64_t))res.fn_addrs[0];
        for (int64_t M = 0; M <= 9; M += 3) {
            int64_t R = M + 3;
            float *ov = calloc((size_t)(2 * R), sizeof(float));
            int prev = mt_parallel_set_num_threads(2);
            fn(ov, M);
            mt_parallel_set_num_threads(prev);
            for (int64_t rr = 0; rr < 2; rr++)
                for (int64_t pp = 0; pp < R; pp++) {
                    float want = pp >= 3 ? (float)(pp + rr * 10) + (float)(pp + 3 + rr * 10) : 0.0f;
                    assert_true(ov[rr * R + pp] == want);
                }
            free(ov);
        }
        mt_jit_module_release(res.module);
    }
}


/* ---- review: parts ------------------------------------------------------------ */

/* Compiles fs[0..n) on `threads`; the status (MT_OK and *out, or the error). */
static mt_status try_compile_n(mt_tfunc **fs, int n, int threads, mt_codegen_out *out,
                               char *msg, size_t len) {
    mt_codegen_in in = cg_split(A, fs, n, 3, threads);
    return cg_try(jit, A, &in, out, msg, len);
}

/* Lets of every compute type (bool i1, int8/uint8 i8, int32, float16 as
 * float, float64) outside a parallel loop, captured by it, plus math calls
 * (exp/tanh/erf) and a heap allocation (symbolic size: mt_kernel_malloc)
 * inside the body; the kernel's own allocation of constant size too.
 *
 *   let fl = n > 5; let c8 = int8(n); let u8 = uint8(n + 200); let w = int32(n * 3)
 *   let h = float16(float(n) * 0.1); let d = float64(n) * 0.5
 *   for c in T.parallel(n):
 *       tmp = alloc((n,))        # heap
 *       for i in range(n): tmp[i] = float(i + c)
 *       out[c] = tmp[n - 1] + (fl ? 1 : 0) + c8 + u8 + w + h + d + exp(0.25) + tanh(0.5) + erf(0.5)
 */
static mt_tfunc *typed_caps(const char *name) {
    mt_tvar *n = ivar("n"), *c = ivar("c"), *i = ivar("i");
    mt_tvar *fl = mt_tvar_new(A, "fl", MT_BOOL), *c8 = mt_tvar_new(A, "c8", MT_INT8);
    mt_tvar *u8 = mt_tvar_new(A, "u8", MT_UINT8), *w = mt_tvar_new(A, "w", MT_INT32);
    mt_tvar *h = mt_tvar_new(A, "h", MT_FLOAT16), *d = mt_tvar_new(A, "d", MT_FLOAT64);
    mt_tbuffer *o = buf1("out", V(n));
    mt_texpr *nv = V(n);
    mt_tbuffer *tmp = mt_tbuffer_new(A, "tmp", MT_FLOAT32, 1, &nv);
    mt_tstmt *fill = loop(i, I(0), V(n), MT_FOR_SERIAL,
                          st(tmp, V(i), mt_te_cast(A, MT_FLOAT32, bin(TE_ADD, V(i), V(c)))));
#define F32(x) mt_te_cast(A, MT_FLOAT32, (x))
    mt_texpr *q = mt_te_float(A, MT_FLOAT32, 0.25), *hf = mt_te_float(A, MT_FLOAT32, 0.5);
    mt_texpr *v = ld(tmp, bin(TE_SUB, V(n), I(1)));
    v = bin(TE_ADD, v, mt_te_select(A, V(fl), mt_te_float(A, MT_FLOAT32, 1), mt_te_float(A, MT_FLOAT32, 0)));
    v = bin(TE_ADD, v, F32(V(c8)));
    v = bin(TE_ADD, v, F32(V(u8)));
    v = bin(TE_ADD, v, F32(V(w)));
    v = bin(TE_ADD, v, F32(V(h)));
    v = bin(TE_ADD, v, F32(V(d)));
    v = bin(TE_ADD, v, mt_te_call(A, IN_EXP, &q, 1));
    v = bin(TE_ADD, v, mt_te_call(A, IN_TANH, &hf, 1));
    v = bin(TE_ADD, v, mt_te_call(A, IN_ERF, &hf, 1));
    mt_tstmt *pair[2] = {fill, st(o, V(c), v)};
    mt_tstmt *pl = loop(c, I(0), V(n), MT_FOR_PARALLEL, mt_ts_alloc(A, tmp, mt_ts_seq(A, pair, 2)));
    mt_tstmt *body = pl;
    body = mt_ts_let(A, d, bin(TE_MUL, mt_te_cast(A, MT_FLOAT64, V(n)), mt_te_float(A, MT_FLOAT64, 0.5)), body);
    body = mt_ts_let(A, h, mt_te_cast(A, MT_FLOAT16, bin(TE_MUL, F32(V(n)), mt_te_float(A, MT_FLOAT32, 0.1))), body);
    body = mt_ts_let(A, w, mt_te_cast(A, MT_INT32, bin(TE_MUL, V(n), I(3))), body);
    body = mt_ts_let(A, u8, mt_te_cast(A, MT_UINT8, bin(TE_ADD, V(n), I(200))), body);
    body = mt_ts_let(A, c8, mt_te_cast(A, MT_INT8, V(n)), body);
    body = mt_ts_let(A, fl, bin(TE_GT, V(n), I(5)), body);
#undef F32
    mt_tfunc *f = mt_tfunc_new(A, name);
    mt_tfunc_add_param(A, f, o, NULL);
    f->sym_vars = MT_NEW_ARRAY(A, mt_tvar *, 1);
    f->sym_vars[0] = n;
    f->nsym = 1;
    f->num_outputs = 1;
    f->body = body;
    return f;
}

static void test_typed_captures(void **state) {
    mt_tfunc *f = typed_caps("typed");
    float res[2][2][40]; /* [threads - 1][case] */
    memset(res, 0, sizeof res);
    for (int threads = 1; threads <= 2; threads++) {
        mt_codegen_out r = compile_t(f, 3, threads);
        assert_int_equal(r.nparts, threads);
        void (*fn)(float *, int64_t) = (void (*)(float *, int64_t))r.fn_addrs[0];
        for (int k = 0; k < 2; k++) {
            int64_t N = k ? 37 : 4;
            fn(res[threads - 1][k], N);
            float want0 = (float)(N - 1) + (N > 5) + (float)(int8_t)N + (float)(uint8_t)(N + 200) +
                          (float)(N * 3) + (float)(_Float16)((float)N * 0.1f) + (float)((double)N * 0.5);
            want0 += expf(0.25f) + tanhf(0.5f) + erff(0.5f);
            if (fabsf(res[threads - 1][k][0] - want0) > 1e-3f)
                fail_msg("threads %d N %d: %g, want %g", threads, (int)N, res[threads - 1][k][0], want0);
        }
        mt_jit_module_release(r.module);
    }
    assert_memory_equal(res[0], res[1], sizeof res[0]); /* bit for bit */
}

/* A let of a vector value captured by a parallel loop: the parallel body
 * gets a vector param (mt_tparam.lanes 4, `<4 x float>` in the closure), in
 * the kernel's module on one thread and in a part of its own on two. */
static void test_vector_capture(void **state) {
    mt_tvar *c = ivar("c"), *vv = mt_tvar_new(A, "vv", MT_FLOAT32);
    mt_tbuffer *o = buf1("out", I(64));
    mt_texpr *bc = mt_te_broadcast(A, mt_te_float(A, MT_FLOAT32, 2), 4);
    mt_texpr *vref = V(vv);
    vref->lanes = 4;
    mt_texpr *idx = mt_te_ramp(A, bin(TE_MUL, V(c), I(4)), I(1), 4);
    mt_tstmt *pl = loop(c, I(0), I(16), MT_FOR_PARALLEL, mt_ts_store(A, o, &idx, 1, vref));
    mt_tfunc *f = mt_tfunc_new(A, "veccap");
    mt_tfunc_add_param(A, f, o, NULL);
    f->num_outputs = 1;
    f->body = mt_ts_let(A, vv, bc, pl);
    for (int threads = 1; threads <= 2; threads++) {
        mt_codegen_out r;
        char msg[512];
        mt_status s = try_compile_n(&f, 1, threads, &r, msg, sizeof msg);
        if (s != MT_OK) fail_msg("threads %d: %s", threads, msg);
        float out[64];
        ((void (*)(float *))r.fn_addrs[0])(out);
        for (int k = 0; k < 64; k++) assert_true(out[k] == 2.0f);
        mt_jit_module_release(r.module);
    }
}

/* An error in the kernel after its parts were made (a block after two good
 * parallel loops), and in a second kernel after the first kernel's parts:
 * the compile fails, every part is disposed (ASan checks), the JIT works. */
static mt_tfunc *par_kernel(const char *name, int nloops, bool bad_tail) {
    mt_tbuffer *o = buf1("out", I(64));
    mt_tstmt **s = MT_NEW_ARRAY(A, mt_tstmt *, nloops + 1);
    for (int k = 0; k < nloops; k++) {
        mt_tvar *i = ivar("i");
        s[k] = loop(i, I(0), I(64), MT_FOR_PARALLEL,
                    st(o, V(i), bin(TE_ADD, mt_te_cast(A, MT_FLOAT32, V(i)), mt_te_float(A, MT_FLOAT32, k))));
    }
    if (bad_tail) {
        s[nloops] = mt_ts_block(A, "left_in_kernel");
        s[nloops]->body = mt_ts_eval(A, I(0));
    }
    mt_tfunc *f = mt_tfunc_new(A, name);
    mt_tfunc_add_param(A, f, o, NULL);
    f->num_outputs = 1;
    f->body = mt_ts_seq(A, s, nloops + (bad_tail ? 1 : 0));
    return f;
}

static void test_error_after_parts(void **state) {
    for (int threads = 1; threads <= 3; threads++) {
        mt_tfunc *one = par_kernel("k_bad", 2, true);
        mt_codegen_out r;
        char msg[512];
        assert_int_equal(try_compile_n(&one, 1, threads, &r, msg, sizeof msg), MT_ERR_INTERNAL);
        assert_non_null(strstr(msg, "left_in_kernel"));
        /* 5 good parts in the first kernel (more than the first 4 slots of
         * the parts array), then the bad kernel */
        mt_tfunc *two[2] = {par_kernel("k_good", 5, false), par_kernel("k_bad", 1, true)};
        assert_int_equal(try_compile_n(two, 2, threads, &r, msg, sizeof msg), MT_ERR_INTERNAL);
        assert_non_null(strstr(msg, "left_in_kernel"));
    }
    mt_tfunc *ok[2] = {par_kernel("k_a", 5, false), par_kernel("k_b", 3, false)};
    mt_codegen_out r;
    char msg[512];
    assert_int_equal(try_compile_n(ok, 2, 2, &r, msg, sizeof msg), MT_OK);
    assert_int_equal(r.nparts, 2 + 5 + 3);
    float out[64];
    ((void (*)(float *))r.fn_addrs[1])(out);
    assert_true(out[10] == 12.0f);
    mt_jit_module_release(r.module);
}

/* What codegen refuses: a parallel loop left (split_host_device did not
 * run), a launched function that is not given as a device function, a
 * device function nobody launches, and a launch of another kind. */
static mt_status try_in(const mt_codegen_in *in, char *msg, size_t len) {
    mt_codegen_out out;
    mt_status st = cg_try(jit, A, in, &out, msg, len);
    if (st == MT_OK) mt_jit_module_release(out.module);
    return st;
}

static void test_launch_errors(void **state) {
    mt_tfunc *f = par_kernel("k", 1, false);
    mt_tsplit sp;
    mt_tir_split_host_device(A, &f, 1, &sp);
    char msg[512];
    for (int threads = 1; threads <= 2; threads++) {
        mt_codegen_in raw = {&f, 1, NULL, 0, 3, threads};
        assert_int_equal(try_in(&raw, msg, sizeof msg), MT_ERR_INTERNAL);
        assert_non_null(strstr(msg, "parallel loop over 'i' in k: split_host_device must run first"));
        mt_codegen_in nodev = {sp.host, 1, NULL, 0, 3, threads};
        assert_int_equal(try_in(&nodev, msg, sizeof msg), MT_ERR_INTERNAL);
        assert_non_null(strstr(msg, "'k_par0' is launched but not given as a device function"));
        mt_codegen_in unlaunched = {&f, 1, sp.device, 1, 3, threads};
        assert_int_equal(try_in(&unlaunched, msg, sizeof msg), MT_ERR_INTERNAL);
        assert_non_null(strstr(msg, "device function 'k_par0' is launched 0 times"));
        mt_tfunc *gpu = MT_NEW(A, mt_tfunc); /* k_par0 of another kind */
        *gpu = *sp.device[0];
        gpu->attrs = NULL, gpu->nattrs = 0;
        mt_tfunc_set_attr(A, gpu, MT_ATTR_KIND, "cuda_kernel");
        mt_tstmt *l = mt_ts_copy(A, sp.host[0]->body);
        l->launch = MT_NEW(A, mt_tlaunch);
        *l->launch = *sp.host[0]->body->launch;
        l->launch->callee = gpu;
        mt_tfunc *host = mt_tfunc_with_body(A, sp.host[0], l);
        mt_codegen_in kind = {&host, 1, &gpu, 1, 3, threads};
        assert_int_equal(try_in(&kind, msg, sizeof msg), MT_ERR_INTERNAL);
        assert_non_null(strstr(msg, "k launches 'k_par0' of kind 'cuda_kernel'"));
        mt_codegen_in good = {sp.host, 1, sp.device, 1, 3, threads};
        assert_int_equal(try_in(&good, msg, sizeof msg), MT_OK);
    }
}

/* ---- fixtures ---------------------------------------------------------------- */

static int setup(void **state) {
    char err[256];
    jit = mt_jit_create(err, sizeof err);
    A = mt_arena_create();
    pool4 = mt_thread_pool_create(4);
    mt_parallel_set_pool(pool4);
    return jit && A && pool4 ? 0 : -1;
}

static int teardown(void **state) {
    mt_jit_destroy(jit);
    mt_arena_destroy(A);
    mt_parallel_set_pool(NULL);
    mt_thread_pool_destroy(pool4);
    return 0;
}

/* An internal error while generating a parallel loop's body in a part of
 * its own (a block left in the lowered TIR, after one good parallel loop):
 * the compile fails with it and disposes the parts already made (the ASan
 * build checks the leak). */
static void test_error_in_part(void **state) {
    mt_tvar *i = ivar("i"), *j = ivar("j");
    mt_tbuffer *o = buf1("out", I(64));
    mt_tstmt *good = loop(i, I(0), I(64), MT_FOR_PARALLEL, st(o, V(i), mt_te_float(A, MT_FLOAT32, 1)));
    mt_tstmt *blk = mt_ts_block(A, "left_in_part");
    blk->body = mt_ts_eval(A, I(0));
    mt_tstmt *bad = loop(j, I(0), I(64), MT_FOR_PARALLEL, blk);
    mt_tstmt *both[2] = {good, bad};
    mt_tfunc *f = mt_tfunc_new(A, "two_loops");
    mt_tfunc_add_param(A, f, o, NULL);
    f->num_outputs = 1;
    f->body = mt_ts_seq(A, both, 2);
    for (int threads = 1; threads <= 2; threads++) {
        mt_codegen_out out;
        mt_errframe fr;
        if (MT_TRY(&fr)) {
            cg_compile(jit, A, &f, 1, 3, threads, &out);
            mt_err_pop(&fr);
            fail_msg("a block inside a parallel loop compiled");
        }
        mt_err_pop(&fr);
        assert_int_equal(fr.status, MT_ERR_INTERNAL);
        assert_non_null(strstr(fr.msg, "left_in_part"));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runtime_cover),
        cmocka_unit_test(test_runtime_nested),
        cmocka_unit_test(test_runtime_thread_counts),
        cmocka_unit_test(test_pool_reuse),
        cmocka_unit_test(test_late_worker),
        cmocka_unit_test(test_no_pool),
        cmocka_unit_test(test_pool_shared),
        cmocka_unit_test(test_pool_lifecycle),
        cmocka_unit_test(test_pool_idle_sleeps),
        cmocka_unit_test(test_worker_leaves_caller_cpu),
        cmocka_unit_test(test_chunked_loop),
        cmocka_unit_test(test_captures_and_nesting),
        cmocka_unit_test(test_error_in_part),
        cmocka_unit_test(test_typed_captures),
        cmocka_unit_test(test_vector_capture),
        cmocka_unit_test(test_error_after_parts),
        cmocka_unit_test(test_launch_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
