/*
 * test_transform_layout.c -- sch.transform_layout (src/schedule/
 * primitives_layout.c) from a source and from C: the matmul's packed B
 * kept as 16-column panels, compacted per block (compact_buffers through
 * the map's // and %), numerics against C loops in double on shapes with
 * tails; a transposed cache; the printed schedule replayed; refusals. The
 * placed diagnostics of malformed maps are in the error corpus
 * (tests/errors/corpus/sch_transform_layout_*.py). CPU schedules run under
 * target cpu, GPU ones (bind, a shared cache) under target cuda: this suite
 * also runs emulated (test_transform_layout_gpu_emulated), each test skipped,
 * saying why, under the other target.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matmul_check.h"

#define skip_unless_gpu()                                                                               \
    do {                                                                                                \
        if (!test_gpu_target()) {                                                                       \
            print_message("skipped under target cpu: a GPU schedule (bind); see "                        \
                          "test_transform_layout_gpu_emulated\n");                                        \
            skip();                                                                                     \
        }                                                                                               \
    } while (0)

#define skip_unless_cpu() skip_if_gpu_target("a CPU schedule (parallel, vectorize)")

/* The matmul blocked as the default rule blocks it: kc x nc blocks of B,
 * each packed as nc / 16 panels of kc x 16 (the map), 6 x 16 tiles. */
static char *blocked_src(int m, int n, int k, int kc, int nc, const char *map) {
    static char buf[4096];
    snprintf(buf, sizeof buf,
             "def main(a: Tensor((%d, %d), \"float32\"), b: Tensor((%d, %d), \"float32\")):\n"
             "    return a @ b\n"
             "\n"
             "@T.schedule(\"matmul\")\n"
             "def s(sch):\n"
             "    blk = sch.get_block(\"matmul\")\n"
             "    i, k, j = sch.get_loops(blk)\n"
             "    j0, j1, j2 = sch.split(j, factors=[None, %d, 16])\n"
             "    k0, k1 = sch.split(k, factors=[None, %d])\n"
             "    i0, i1 = sch.split(i, factors=[None, 6])\n"
             "    sch.reorder(j0, k0, i0, j1, k1, i1, j2)\n"
             "    sch.use_fma(blk)\n"
             "    pack = sch.cache_read(blk, 1, \"global\")\n"
             "    sch.compute_at(pack, k0)\n"
             "    sch.transform_layout(pack, \"b_global\", %s)\n"
             "    _, _, pk, pj = sch.get_loops(pack)\n"
             "    pj0, pj1 = sch.split(pj, factors=[None, 16])\n"
             "    sch.reorder(pj0, pk, pj1)\n"
             "    sch.vectorize(pj1)\n"
             "    sch.decompose_reduction(blk, k0)\n"
             "    sch.parallel(j0)\n"
             "    sch.unroll(i1)\n"
             "    sch.vectorize(j2)\n",
             m, k, k, n, nc / 16, kc, map);
    return buf;
}

#define PANELS "lambda k, j: (j // 16, k, j % 16)"

/* Panels of one block: the packed buffer is the kc x nc block (compacted
 * through the map's // and %), not all of B; exact tiles, row tails, K
 * block tails (compute_at takes no column tail under a three-way split of
 * the columns: test_c_api has one). */
static void test_blocked_matmul(void **state) {
    (void)state;
    skip_unless_cpu();
    int shapes[][5] = {{96, 256, 512, 256, 128}, {67, 128, 300, 128, 64}, {5, 64, 33, 16, 32}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2], kc = shapes[s][3], nc = shapes[s][4];
        mt_kernel *kern = compile_ok(blocked_src(m, n, k, kc, nc, PANELS));
        const char *how = mt_kernel_dump(kern, MT_STAGE_SCHEDULE);
        assert_non_null(strstr(how, "    sch.transform_layout(b_b_global, \"b_global\", " PANELS ")\n"));
        char want[128];
        snprintf(want, sizeof want, "b_global = T.alloc_buffer((%d,), \"float32\")", kc * nc);
        const char *code = mt_kernel_dump(kern, MT_STAGE_TIR_SCHED);
        if (!strstr(code, want)) fail_msg("want '%s' in:\n%s", want, code);
        check_matmul(kern, m, n, k);
        mt_kernel_release(kern);
    }
}

/* The printed schedule, pasted back, gives the same code. */
static void test_round_trip(void **state) {
    (void)state;
    skip_unless_cpu();
    char *src = strdup(blocked_src(30, 64, 64, 32, 32, PANELS));
    mt_kernel *k = compile_ok(src);
    const char *how = strchr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), '\n') + 1; /* past "# matmul: ..." */
    char *again = malloc(strlen(src) + strlen(how) + 1);
    strcpy(again, src);
    strcpy(strstr(again, "@T.schedule"), how);
    mt_kernel *k2 = compile_ok(again);
    assert_string_equal(mt_kernel_dump(k2, MT_STAGE_TIR_SCHED), mt_kernel_dump(k, MT_STAGE_TIR_SCHED));
    assert_string_equal(mt_kernel_dump(k2, MT_STAGE_SCHEDULE), mt_kernel_dump(k, MT_STAGE_SCHEDULE));
    check_matmul(k2, 30, 64, 64);
    free(again);
    free(src);
    mt_kernel_release(k2);
    mt_kernel_release(k);
}

/* Other maps on the same schedule: an equivalent one written otherwise,
 * a padded one (panels of 24 columns over a 16-column split: the image is
 * not a box, every place still distinct), the identity, a transpose, a
 * flattening and a skew (two parameters in one output) keep the results. */
static void test_other_maps(void **state) {
    (void)state;
    skip_unless_cpu();
    const char *maps[] = {"lambda k, j: (j // 16, k, j - j // 16 * 16)",
                          "lambda k, j: (j // 24, k, j % 24)", "lambda k, j: (k, j)",
                          "lambda k, j: (j, k)", "lambda k, j: (k * 48 + j,)",
                          "lambda k, j: (k, (j + k) % 48)"};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) {
        mt_kernel *k = compile_ok(blocked_src(13, 48, 40, 16, 48, maps[i]));
        check_matmul(k, 13, 48, 40);
        mt_kernel_release(k);
    }
}

/* The default rule's threads, with primitives: each block of B packed by
 * all the threads (the panel loop parallel: the panel index j // 32
 * of the block's region j0 * nc + pj0 * 32 + pj1 splits b_global among
 * them, the region's offset a multiple of the panel), then its row tiles
 * on the threads. Row, column and K tails. */
static void test_parallel_panels(void **state) {
    (void)state;
    skip_unless_cpu();
    int shapes[][5] = {{96, 256, 512, 256, 128}, {67, 160, 300, 128, 64}, {29, 96, 40, 16, 64}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int m = shapes[i][0], n = shapes[i][1], k = shapes[i][2], kc = shapes[i][3], nc = shapes[i][4];
        char src[4096];
        snprintf(src, sizeof src,
                 "def main(a: Tensor((%d, %d), \"float32\"), b: Tensor((%d, %d), \"float32\")):\n"
                 "    return a @ b\n\n@T.schedule(\"matmul\")\ndef s(sch):\n"
                 "    blk = sch.get_block(\"matmul\")\n"
                 "    i, k, j = sch.get_loops(blk)\n"
                 "    j0, j1, j2, j3 = sch.split(j, factors=[None, %d, 2, 16])\n"
                 "    k0, k1 = sch.split(k, factors=[None, %d])\n"
                 "    i0, i1 = sch.split(i, factors=[None, 8])\n"
                 "    sch.reorder(j0, k0, i0, j1, k1, i1, j2, j3)\n"
                 "    sch.use_fma(blk)\n"
                 "    pack = sch.cache_read(blk, 1, \"global\")\n"
                 "    sch.compute_at(pack, k0)\n"
                 "    sch.transform_layout(pack, \"b_global\", lambda k, j: (j // 32, k, j %% 32))\n"
                 "    _, _, pk, pj = sch.get_loops(pack)\n"
                 "    pj0, pj1 = sch.split(pj, factors=[None, 32])\n"
                 "    sch.reorder(pj0, pk, pj1)\n"
                 "    sch.vectorize(pj1)\n"
                 "    sch.parallel(pj0)\n"
                 "    sch.decompose_reduction(blk, k0)\n"
                 "    sch.parallel(i0)\n"
                 "    sch.unroll(i1)\n"
                 "    sch.unroll(j2)\n"
                 "    sch.vectorize(j3)\n",
                 m, k, k, n, nc / 32, kc);
        mt_kernel *kern = compile_ok(src);
        const char *code = mt_kernel_dump(kern, MT_STAGE_TIR_SCHED), *p = strstr(code, "T.launch(");
        if (!p || !strstr(p + 1, "T.launch(")) fail_msg("expected the pack and the row tiles on threads:\n%s", code);
        check_matmul(kern, m, n, k);
        mt_kernel_release(kern);
    }
}

/* A cache_write's copy, transposed: the block stores C^T, the copy reads it
 * back. */
static void test_transposed_cache(void **state) {
    (void)state;
    skip_unless_cpu();
    const char *src = "def main(a: Tensor((33, 20), \"float32\"), b: Tensor((33, 20), \"float32\")):\n"
                      "    return a + b\n"
                      "\n"
                      "@T.schedule(\"add\")\n"
                      "def s(sch):\n"
                      "    blk = sch.get_block(\"add\")\n"
                      "    c = sch.cache_write(blk, 0, \"global\")\n"
                      "    sch.transform_layout(blk, (\"write\", 0), lambda i, j: (j, i))\n";
    mt_kernel *k = compile_ok(src);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE),
                           "sch.transform_layout(b_add, \"lv_global\", lambda i, j: (j, i))"));
    int64_t shape[2] = {33, 20};
    mt_tensor *args[2] = {tensor_f32(2, shape, 3), tensor_f32(2, shape, 4)}, *out = run1(k, args, 2);
    for (int i = 0; i < 33 * 20; i++) assert_float_equal(F(out)[i], F(args[0])[i] + F(args[1])[i], 0);
    mt_tensor_release(args[0]);
    mt_tensor_release(args[1]);
    mt_tensor_release(out);
    mt_kernel_release(k);
}

/* ---- random maps against a plain check -------------------------------------------- */

/* One output of a random map: a form over i and j with a constant c. */
typedef struct rform {
    int kind, c;
} rform;

enum { RF_I, RF_J, RF_IDIV, RF_IMOD, RF_JDIV, RF_JMOD, RF_FLAT, RF_SKEW, RF_REV, RF_SUM, RF_COUNT };

static long long rform_at(rform f, long long i, long long j, long long cols) {
    switch (f.kind) {
    case RF_I: return i;
    case RF_J: return j;
    case RF_IDIV: return i / f.c;
    case RF_IMOD: return i % f.c;
    case RF_JDIV: return j / f.c;
    case RF_JMOD: return j % f.c;
    case RF_FLAT: return i * cols + j;
    case RF_SKEW: return (i + j) % f.c;
    case RF_REV: return f.c - 1 - i;
    default: return i + j;
    }
}

static const char *rform_text(rform f, char *buf, size_t n) {
    switch (f.kind) {
    case RF_I: return "i";
    case RF_J: return "j";
    case RF_IDIV: snprintf(buf, n, "i // %d", f.c); break;
    case RF_IMOD: snprintf(buf, n, "i %% %d", f.c); break;
    case RF_JDIV: snprintf(buf, n, "j // %d", f.c); break;
    case RF_JMOD: snprintf(buf, n, "j %% %d", f.c); break;
    case RF_FLAT: snprintf(buf, n, "i * %d + j", f.c); break;
    case RF_SKEW: snprintf(buf, n, "(i + j) %% %d", f.c); break;
    case RF_REV: snprintf(buf, n, "%d - 1 - i", f.c); break;
    default: return "i + j";
    }
    return buf;
}

/* Does the map put every (i, j) of rows x cols at a distinct place >= 0,
 * within 64 times the elements? Checked by brute force. */
static bool rmap_ok(const rform *f, int nf, int rows, int cols) {
    long long ext[3] = {1, 1, 1}, size = 1;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            for (int o = 0; o < nf; o++) {
                long long v = rform_at(f[o], i, j, cols);
                if (v < 0) return false;
                if (v + 1 > ext[o]) ext[o] = v + 1;
            }
    for (int o = 0; o < nf; o++) size *= ext[o];
    if (size > 64LL * rows * cols) return false;
    unsigned char *seen = calloc((size_t)size, 1);
    bool ok = true;
    for (int i = 0; i < rows && ok; i++)
        for (int j = 0; j < cols && ok; j++) {
            long long k = 0;
            for (int o = 0; o < nf; o++) k = k * ext[o] + rform_at(f[o], i, j, cols);
            ok = !seen[k];
            seen[k] = 1;
        }
    free(seen);
    return ok;
}

/* 300 random maps on a cache_write's copy of a + b: the compile succeeds
 * exactly when the brute-force check says the map is one-to-one and in
 * range, and then the results are a + b; otherwise it is a placed refusal
 * of transform_layout. Never a wrong kernel. */
static void test_random_maps(void **state) {
    (void)state;
    skip_unless_cpu();
    unsigned seed = 12345;
    int accepted = 0, refused = 0;
    for (int iter = 0; iter < 300; iter++) {
        seed = seed * 1103515245u + 12345u;
        int rows = 1 + (int)(seed >> 16) % 12, cols = 1 + (int)(seed >> 8) % 12, nf = 1 + (int)(seed >> 4) % 3;
        rform f[3];
        char text[256] = "", part[64], buf[48];
        for (int o = 0; o < nf; o++) {
            seed = seed * 1103515245u + 12345u;
            f[o].kind = (int)(seed >> 16) % RF_COUNT;
            f[o].c = f[o].kind == RF_FLAT ? cols : f[o].kind == RF_REV ? rows + (int)(seed >> 8) % 3 : 1 + (int)(seed >> 8) % 8;
            snprintf(part, sizeof part, "%s%s", o ? ", " : "", rform_text(f[o], buf, sizeof buf));
            strcat(text, part);
        }
        char src[1024];
        snprintf(src, sizeof src,
                 "def main(a: Tensor((%d, %d), \"float32\"), b: Tensor((%d, %d), \"float32\")):\n"
                 "    return a + b\n"
                 "\n"
                 "@T.schedule(\"add\")\n"
                 "def s(sch):\n"
                 "    blk = sch.get_block(\"add\")\n"
                 "    sch.cache_write(blk, 0, \"global\")\n"
                 "    sch.transform_layout(blk, (\"write\", 0), lambda i, j: (%s,))\n",
                 rows, cols, rows, cols, text);
        if (!rmap_ok(f, nf, rows, cols)) {
            mt_diag d = compile_err(src);
            if (d.status != MT_ERR_INVALID_ARG || !strstr(d.text, "error: transform_layout: "))
                fail_msg("map (%s) on %d x %d: want a refusal, got:\n%s", text, rows, cols, d.text);
            refused++;
            continue;
        }
        mt_kernel *k = compile_ok(src);
        int64_t shape[2] = {rows, cols};
        mt_tensor *args[2] = {tensor_f32(2, shape, 7), tensor_f32(2, shape, 8)}, *out = run1(k, args, 2);
        for (int e = 0; e < rows * cols; e++)
            if (F(out)[e] != F(args[0])[e] + F(args[1])[e])
                fail_msg("map (%s) on %d x %d: element %d is %g, want %g", text, rows, cols, e, F(out)[e],
                         F(args[0])[e] + F(args[1])[e]);
        mt_tensor_release(args[0]);
        mt_tensor_release(args[1]);
        mt_tensor_release(out);
        mt_kernel_release(k);
        accepted++;
    }
    print_message("random maps: %d accepted, %d refused\n", accepted, refused);
    assert_true(accepted > 50 && refused > 50); /* both sides exercised */
}

/* ---- GPU kernels (emulated) -------------------------------------------------- */


/* A shared cache of a row of a, transposed, under the block loop: compact_buffers
 * makes it one __shared__ array per block (a function-level allocation of
 * scope shared would be global memory). */
static void test_gpu_shared_cache(void **state) {
    (void)state;
    skip_unless_gpu();
    mt_kernel *k = compile_ok("def main(a: Tensor((40, 32), \"float32\"), b: Tensor((40, 32), \"float32\")):\n"
                               "    return a + b\n"
                               "\n"
                               "@T.schedule(\"add\")\n"
                               "def s(sch):\n"
                               "    blk = sch.get_block(\"add\")\n"
                               "    i, j = sch.get_loops(blk)\n"
                               "    c = sch.cache_read(blk, 0, \"shared\")\n"
                               "    sch.compute_at(c, i)\n"
                               "    sch.transform_layout(c, \"a_shared\", lambda i, j: (j, i))\n"
                               "    _, cj = sch.get_loops(c)\n"
                               "    sch.bind(i, \"blockIdx.x\")\n"
                               "    sch.bind(j, \"threadIdx.x\")\n"
                               "    sch.bind(cj, \"threadIdx.x\")\n");
    const char *cuda = mt_kernel_dump(k, MT_STAGE_CUDA);
    if (!strstr(cuda, "__shared__ __align__(16) float a_shared[32];")) fail_msg("no shared array in:\n%s", cuda);
    assert_null(strstr(cuda, "float *__restrict__ a_shared"));
    int64_t shape[2] = {40, 32};
    mt_tensor *args[2] = {tensor_f32(2, shape, 5), tensor_f32(2, shape, 6)}, *out = run1(k, args, 2);
    for (int i = 0; i < 40 * 32; i++) assert_float_equal(F(out)[i], F(args[0])[i] + F(args[1])[i], 0);
    mt_tensor_release(args[0]);
    mt_tensor_release(args[1]);
    mt_tensor_release(out);
    mt_kernel_release(k);
}

/* A row of A per block in shared memory, as big as the buffer's row: the
 * allocation moves into the block though it does not shrink; the matmul's
 * numerics. */
static void test_gpu_shared_rows(void **state) {
    (void)state;
    skip_unless_gpu();
    mt_kernel *k = compile_ok("def main(a: Tensor((24, 64), \"float32\"), b: Tensor((64, 64), \"float32\")):\n"
                               "    return a @ b\n"
                               "\n"
                               "@T.schedule(\"matmul\")\n"
                               "def s(sch):\n"
                               "    blk = sch.get_block(\"matmul\")\n"
                               "    i, k, j = sch.get_loops(blk)\n"
                               "    sch.reorder(i, j, k)\n"
                               "    c = sch.cache_read(blk, 0, \"shared\")\n"
                               "    sch.compute_at(c, i)\n"
                               "    _, ck = sch.get_loops(c)\n"
                               "    sch.bind(i, \"blockIdx.x\")\n"
                               "    sch.bind(j, \"threadIdx.x\")\n"
                               "    sch.bind(ck, \"threadIdx.x\")\n");
    const char *cuda = mt_kernel_dump(k, MT_STAGE_CUDA);
    if (!strstr(cuda, "__shared__ __align__(16) float a_shared[64];")) fail_msg("no shared array in:\n%s", cuda);
    check_matmul(k, 24, 64, 64);
    mt_kernel_release(k);
}

/* The K split of panel_src: kc-deep blocks, the K-block loop outside the
 * threads. */
static const char *k_split_text(int kc) {
    static char buf[160];
    snprintf(buf, sizeof buf,
             "    k0, k1 = sch.split(k, factors=[None, %d])\n"
             "    sch.reorder(j0, k0, j1, i, k1)\n",
             kc);
    return buf;
}

/* A block's column panel of B in shared memory, K x 32 (kc 0), or kc x 32
 * refilled every K block (kc > 0: the barrier at the end of each
 * iteration keeps the next copy from overwriting what threads still
 * read). */
static const char *panel_src(int k, int kc) {
    static char buf[1024];
    snprintf(buf, sizeof buf,
             "def main(a: Tensor((8, %d), \"float32\"), b: Tensor((%d, 64), \"float32\")):\n"
             "    return a @ b\n"
             "\n"
             "@T.schedule(\"matmul\")\n"
             "def s(sch):\n"
             "    blk = sch.get_block(\"matmul\")\n"
             "    i, k, j = sch.get_loops(blk)\n"
             "    j0, j1 = sch.split(j, factors=[None, 32])\n"
             "%s"
             "    c = sch.cache_read(blk, 1, \"shared\")\n"
             "    sch.compute_at(c, %s)\n"
             "    cj = sch.get_loops(c)[-1]\n"
             "    sch.bind(j0, \"blockIdx.x\")\n"
             "    sch.bind(j1, \"threadIdx.x\")\n"
             "    sch.bind(cj, \"threadIdx.x\")\n",
             k, k,
             kc ? k_split_text(kc) : "    sch.reorder(j0, j1, i, k)\n", kc ? "k0" : "j0");
    return buf;
}

/* The panel as each block's __shared__ array at K = 64 (8 KiB) and per K
 * block of 16; at K = 512 (64 KiB, more than a kernel's 48 KiB of static
 * shared memory) it stays a global buffer, one panel per block; the
 * results are right every way. */
static void test_gpu_shared_panels(void **state) {
    (void)state;
    skip_unless_gpu();
    struct {
        int k, kc;
        const char *want;
    } cases[] = {
        {64, 0, "__shared__ __align__(16) float b_shared[2048];"},
        {512, 0, "float *__restrict__ b_shared"},
        {128, 16, "__shared__ __align__(16) float b_shared[512];"},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        mt_kernel *k = compile_ok(panel_src(cases[t].k, cases[t].kc));
        const char *cuda = mt_kernel_dump(k, MT_STAGE_CUDA);
        if (!strstr(cuda, cases[t].want)) fail_msg("want '%s' in:\n%s", cases[t].want, cuda);
        check_matmul(k, 8, 64, cases[t].k);
        mt_kernel_release(k);
    }
}

/* ---- from C ------------------------------------------------------------------ */

typedef struct cb_state {
    const char *map;     /* the map to try first */
    mt_status first;     /* what it returned */
    char error[320];     /* and the reason */
} cb_state;

/* Panels of B from C: the map under test first (it may be refused, which
 * changes nothing), then the panel map. */
static mt_status panels_cb(mt_schedule *sch, void *user) {
    cb_state *s = user;
    int blk, loops[3], n, pack, js[2];
    if (mt_schedule_get_block(sch, "matmul", &blk) != MT_OK) return MT_ERR_INTERNAL;
    if (mt_schedule_get_loops(sch, blk, loops, 3, &n) != MT_OK || n != 3) return MT_ERR_INTERNAL;
    int64_t f16[2] = {0, 16};
    if (mt_schedule_split(sch, loops[2], f16, 2, js) != MT_OK) return MT_ERR_INTERNAL;
    int order[4] = {js[0], loops[0], loops[1], js[1]};
    if (mt_schedule_reorder(sch, order, 4) != MT_OK) return MT_ERR_INTERNAL;
    if (mt_schedule_cache_read(sch, blk, 1, "global", &pack) != MT_OK) return MT_ERR_INTERNAL;
    if (mt_schedule_compute_at(sch, pack, js[0]) != MT_OK) return MT_ERR_INTERNAL;
    s->first = mt_schedule_transform_layout(sch, pack, "b_global", s->map);
    snprintf(s->error, sizeof s->error, "%s", mt_schedule_error(sch) ? mt_schedule_error(sch) : "");
    if (s->first == MT_OK) return MT_OK;
    return mt_schedule_transform_layout(sch, pack, "b_global", "lambda k, j: (j // 8, k, j % 8)");
}

static void test_c_api(void **state) {
    (void)state;
    skip_unless_cpu();
    const char *src = "def main(a: Tensor((20, 24), \"float32\"), b: Tensor((24, 40), \"float32\")):\n"
                      "    return a @ b\n";
    struct {
        const char *map;
        mt_status st;
        const char *error;
    } cases[] = {
        {"lambda k, j: (j // 16, k, j % 16)", MT_OK, ""},
        {"lambda k, j: (j // 2, k)", MT_ERR_INVALID_ARG,
         "transform_layout: the index map sends j = 0 and j = 1 to the same place; it must be one-to-one"},
        {"lambda k, j: (j, k - 1)", MT_ERR_INVALID_ARG,
         "transform_layout: output 1 of the index map (k - 1) is -1 at k = 0; a place in a buffer is never negative"},
        {"lambda k, j: (j + k,)", MT_ERR_INVALID_ARG,
         "transform_layout: the index map sends (k, j) = (0, 1) and (k, j) = (1, 0) to the same place"},
        {"lambda k: k", MT_ERR_INVALID_ARG, "transform_layout: the index map takes 1 parameter; 'b_global' has 2 dims"},
        {"lambda k, j: (k, j", MT_ERR_SYNTAX, "transform_layout: index map, column 19: unexpected end of file"},
        {"k + 1", MT_ERR_TYPE, "transform_layout: the index map is one lambda"},
        {"lambda k, j: (k, j ** 2)", MT_ERR_UNSUPPORTED, "index map, column 20: an index map is built from"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cb_state s = {cases[i].map, MT_OK, ""};
        mt_compile_options o;
        mt_compile_options_init(&o);
        o.schedule = panels_cb;
        o.schedule_user = &s;
        mt_kernel *k = compile_ok_opts(src, &o);
        const char *how = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
        if (cases[i].st == MT_OK) {
            assert_int_equal(s.first, MT_OK);
            assert_non_null(strstr(how, "sch.transform_layout(b_b_global, \"b_global\", lambda k, j: (j // 16, k, "
                                        "j % 16))"));
        } else {
            assert_non_null(strstr(how, "sch.transform_layout(b_b_global, \"b_global\", lambda k, j: (j // 8, k, "
                                        "j % 8))"));
            if (s.first != MT_ERR_INVALID_ARG || !strstr(s.error, cases[i].error))
                fail_msg("map '%s': got %s '%s', want '%s'", cases[i].map, mt_status_str(s.first), s.error,
                         cases[i].error);
        }
        check_matmul(k, 20, 40, 24);
        mt_kernel_release(k);
    }
    assert_int_equal(mt_schedule_transform_layout(NULL, 0, "b", "lambda i: i"), MT_ERR_INVALID_ARG);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocked_matmul), cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_other_maps),     cmocka_unit_test(test_transposed_cache),
        cmocka_unit_test(test_random_maps),     cmocka_unit_test(test_gpu_shared_cache), cmocka_unit_test(test_gpu_shared_rows),
        cmocka_unit_test(test_gpu_shared_panels),
        cmocka_unit_test(test_c_api),           cmocka_unit_test(test_parallel_panels),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
