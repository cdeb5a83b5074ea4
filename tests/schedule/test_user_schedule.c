/*
 * test_user_schedule.c -- user schedules (docs/schedule.md, "User
 * schedules"): @T.schedule in the source on a loop function and on a
 * compiler-made kernel, the C API's compile callback, the "schedule" dump
 * and its round trip (the printed schedule pasted back gives the same
 * code), refusals placed at the primitive. Numerics against plain C loops
 * in double: a schedule reorders loops but not a reduction's order over k
 * (every primitive used here keeps it), so the float32 results are checked
 * to 1e-4 relative.
 *
 * CPU schedules (parallel, vectorize) are for target cpu; GPU schedules
 * (bind) for target cuda: each test runs under its target and is skipped,
 * saying why, under the other (this suite also runs emulated:
 * test_user_schedule_gpu_emulated).
 */
#include <math.h>
#include <stdbool.h>
#include <unistd.h>
#include <stdlib.h>

#include <dirent.h>

#include "matmul_check.h"

#define skip_unless_cpu()                                                                  \
    do {                                                                                   \
        if (test_gpu_target()) {                                                           \
            print_message("skipped under target cuda: a CPU schedule (parallel, vectorize)\n"); \
            skip();                                                                        \
        }                                                                                  \
    } while (0)

/* A hand-written matmul, M x K times K x N, and a schedule for it. */
static char *matmul_src(int m, int n, int k, const char *schedule) {
    static char buf[4096];
    snprintf(buf, sizeof buf,
             "@T.prim_func\n"
             "def mm(A: T.Buffer((%d, %d), \"float32\"), B: T.Buffer((%d, %d), \"float32\"),\n"
             "       C: T.Buffer((%d, %d), \"float32\")):\n"
             "    for i, j, k in T.grid(%d, %d, %d):\n"
             "        with T.block(\"C\"):\n"
             "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
             "            with T.init():\n"
             "                C[vi, vj] = T.float32(0)\n"
             "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"
             "\n%s",
             m, k, k, n, m, n, m, n, k, schedule);
    return buf;
}

static const char tiled[] =
    "@T.schedule(mm)\n"
    "def schedule_mm(sch):\n"
    "    blk = sch.get_block(\"C\")\n"
    "    i, j, k = sch.get_loops(blk)\n"
    "    i0, i1 = sch.split(i, factors=[None, 4])\n"
    "    j0, j1 = sch.split(j, factors=[None, 16])\n"
    "    sch.reorder(i0, j0, k, i1, j1)\n"
    "    init = sch.decompose_reduction(blk, k)\n"
    "    sch.parallel(i0)\n"
    "    sch.unroll(i1)\n"
    "    sch.vectorize(j1)\n";

/* The tutorial's schedule on odd shapes (split tails in i and j). */
static void test_matmul_schedule(void **state) {
    (void)state;
    skip_unless_cpu();
    int shapes[][3] = {{64, 64, 64}, {67, 45, 31}, {1, 17, 3}, {5, 100, 257}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        mt_kernel *k = compile_ok(matmul_src(shapes[s][0], shapes[s][1], shapes[s][2], tiled));
        const char *how = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
        assert_non_null(strstr(how, "# mm: the source's schedule\n@T.schedule(mm)\n"));
        assert_non_null(strstr(how, "    i_0, i_1 = sch.split(i, factors=[None, 4])\n"));
        assert_non_null(strstr(how, "    b_C_init = sch.decompose_reduction(b_C, k)\n"));
        const char *code = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        if (shapes[s][0] % 4 == 0) assert_non_null(strstr(code, "T.unroll(4)")); /* else a tail: T.min */
        check_matmul(k, shapes[s][0], shapes[s][1], shapes[s][2]);
        mt_kernel_release(k);
    }
}

/* Without a schedule the default rules take the loop function. */
static void test_default_rule_named(void **state) {
    (void)state;
    mt_kernel *k = compile_ok(matmul_src(32, 32, 32, ""));
    const char *how = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
    assert_non_null(strstr(how, "# mm: the default rule "));
    mt_kernel_release(k);
}

/* The "schedule" dump pasted back into the source gives the same code. */
static void test_round_trip(void **state) {
    (void)state;
    skip_unless_cpu();
    mt_kernel *k = compile_ok(matmul_src(40, 48, 24, tiled));
    const char *how = strchr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), '\n') + 1; /* past "# mm: ..." */
    char *src = strdup(matmul_src(40, 48, 24, how));
    mt_kernel *k2 = compile_ok(src);
    assert_string_equal(mt_kernel_dump(k2, MT_STAGE_TIR_SCHED), mt_kernel_dump(k, MT_STAGE_TIR_SCHED));
    assert_string_equal(mt_kernel_dump(k2, MT_STAGE_SCHEDULE), mt_kernel_dump(k, MT_STAGE_SCHEDULE));
    free(src);
    mt_kernel_release(k2);
    mt_kernel_release(k);
}

/* A kernel the compiler made, named as in the dumps. */
static const char fused_src[] =
    "def main(a: Tensor((64, 100), \"float32\"), b: Tensor((64, 100), \"float32\")):\n"
    "    return a + b * 2.0\n"
    "\n"
    "@T.schedule(\"fused_multiply_add\")\n"
    "def s(sch):\n"
    "    i, j = sch.get_loops(sch.get_block(\"add\"))\n"
    "    f = sch.fuse(i, j)\n"
    "    o, inner = sch.split(f, factors=[None, 64])\n"
    "    sch.parallel(o)\n"
    "    sch.vectorize(inner)\n";

static void check_fused(mt_kernel *k) {
    int64_t sh[2] = {64, 100};
    mt_tensor *args[2] = {tensor_f32(2, sh, 3), tensor_f32(2, sh, 4)};
    mt_tensor *out = run1(k, args, 2);
    for (int i = 0; i < 6400; i++) assert_true(F(out)[i] == F(args[0])[i] + F(args[1])[i] * 2.0f);
    mt_tensor_release(args[0]);
    mt_tensor_release(args[1]);
    mt_tensor_release(out);
}

static void test_compiler_made_kernel(void **state) {
    (void)state;
    skip_unless_cpu();
    mt_kernel *k = compile_ok(fused_src);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE),
                           "    i0_i1_fused = sch.fuse(i0, i1)\n"));
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "T.launch(\"fused_multiply_add_par0\""));
    check_fused(k);
    mt_kernel_release(k);
}

/* A compiler-made matmul scheduled from primitives alone: tiles of 6 x 16
 * over 100 x 37 (tails in both), B packed per column panel (cache_read +
 * compute_at; compact_buffers makes the copy one contiguous K x 16 panel
 * per iteration), its update one FMA (use_fma). Every tile but the last of
 * a panel is an unrolled register tile (partition_tails peels the last). */
static const char mm_tiles_src[] =
    "def main(a: Tensor((100, 50), \"float32\"), b: Tensor((50, 37), \"float32\")):\n"
    "    return a @ b\n"
    "\n"
    "@T.schedule(\"matmul\")\n"
    "def s(sch):\n"
    "    blk = sch.get_block(\"matmul\")\n"
    "    i, k, j = sch.get_loops(blk)\n"
    "    i0, i1 = sch.split(i, factors=[None, 6])\n"
    "    j0, j1 = sch.split(j, factors=[None, 16])\n"
    "    sch.reorder(j0, i0, k, i1, j1)\n"
    "    sch.use_fma(blk)\n"
    "    pack = sch.cache_read(blk, 1, \"global\")\n"
    "    sch.compute_at(pack, j0)\n"
    "    init = sch.decompose_reduction(blk, k)\n"
    "    sch.parallel(j0)\n"
    "    sch.unroll(i1)\n"
    "    sch.vectorize(j1)\n";

static void test_split_tail_tiles(void **state) {
    (void)state;
    skip_unless_cpu();
    mt_kernel *k = compile_ok(mm_tiles_src);
    const char *code = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(code, "T.unroll(6)"));  /* 16 full tiles of rows */
    assert_non_null(strstr(code, "T.unroll(4)"));  /* and the last, 100 = 16 * 6 + 4 */
    assert_null(strstr(code, "T.unroll(T.min"));
    assert_non_null(strstr(code, "T.fma("));
    assert_non_null(strstr(code, "T.Ramp("));      /* the panel's columns are vectors */
    /* compact_buffers: the copy of B is one 50 x 16 panel per iteration of j0 */
    assert_non_null(strstr(code, "        b_global = T.alloc_buffer((800,), \"float32\")\n"));
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "    sch.use_fma(b_matmul)\n"));
    check_matmul(k, 100, 37, 50);
    /* the printed schedule replays to the same code */
    const char *how = strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "@T.schedule");
    assert_non_null(how);
    char src[4096];
    snprintf(src, sizeof src, "def main(a: Tensor((100, 50), \"float32\"), b: Tensor((50, 37), \"float32\")):\n"
                              "    return a @ b\n\n%s", how);
    mt_kernel *k2 = compile_ok(src);
    assert_string_equal(mt_kernel_dump(k2, MT_STAGE_TIR_SCHED), code);
    mt_kernel_release(k2);
    mt_kernel_release(k);
}

/* compute_at under a K block of a column split three ways: the copy's
 * region along the columns, (j0 * 2 + j1) * 16 + j2 under j0, is the
 * interval [j0 * 32, + 32); compact_buffers makes it a 32 x 32 block per
 * (j0, k0) (its readers' offsets distributed to j0 * 32 as well). */
static const char mm_blocks_src[] =
    "def main(a: Tensor((60, 64), \"float32\"), b: Tensor((64, 64), \"float32\")):\n"
    "    return a @ b\n"
    "\n"
    "@T.schedule(\"matmul\")\n"
    "def s(sch):\n"
    "    blk = sch.get_block(\"matmul\")\n"
    "    i, k, j = sch.get_loops(blk)\n"
    "    i0, i1 = sch.split(i, factors=[None, 6])\n"
    "    j0, j1, j2 = sch.split(j, factors=[None, 2, 16])\n"
    "    k0, k1 = sch.split(k, factors=[None, 32])\n"
    "    sch.reorder(j0, k0, i0, j1, k1, i1, j2)\n"
    "    sch.use_fma(blk)\n"
    "    pack = sch.cache_read(blk, 1, \"global\")\n"
    "    sch.compute_at(pack, k0)\n"
    "    sch.decompose_reduction(blk, k0)\n"
    "    sch.parallel(j0)\n"
    "    sch.unroll(i1)\n"
    "    sch.vectorize(j2)\n";

static void test_compute_at_split_columns(void **state) {
    (void)state;
    skip_unless_cpu();
    mt_kernel *k = compile_ok(mm_blocks_src);
    const char *code = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(code, "b_global = T.alloc_buffer((1024,), \"float32\")"));
    check_matmul(k, 60, 64, 64);
    mt_kernel_release(k);
}

static void expect_error(const char *src, mt_status st, const char *where_what);

/* The same schedule on shapes its splits do not divide (100 columns: the
 * last panel of 32 has 4; 70 rows of b: the last K block 6): the inner
 * split loops' extents are clamped by the outer ones (the vectors' by j1),
 * so the region under j0 is read as the interval of the loops' constant
 * bounds, [j0 * 32, + 32), cut to the copy's own range: the copy of the
 * last panel is 3 columns, and the values are the plain matmul's; the
 * copy is still one 32 x 32 block per (j0, k0) (compact_buffers). The
 * same cut is made for reverse_compute_at only when another dim tells the
 * iterations apart (a consumer of a superset could otherwise read what a
 * later iteration writes): here none does, refused. */
static void test_compute_at_split_tails(void **state) {
    (void)state;
    skip_unless_cpu();
    char src[2048];
    snprintf(src, sizeof src, "%s", mm_blocks_src);
    char *p = strstr(src, "(60, 64)");
    memcpy(p, "(61, 70)", 8);
    p = strstr(src, "(64, 64)");
    memcpy(p, "(70, 99)", 8);
    mt_kernel *k = compile_ok(src);
    const char *code = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(code, "T.grid(T.min(32, 70 - i1_0 * 32), T.min(32, 99 - i2_0_0 * 2 * 16))"));
    /* compact_buffers: the box runs to the ends of b's dims, a 32 x 32 block */
    assert_non_null(strstr(code, "b_global = T.alloc_buffer((1024,), \"float32\")"));
    check_matmul(k, 61, 99, 70);
    mt_kernel_release(k);

    static const char rev[] =
        "def main(a: Tensor((61, 70), \"float32\"), b: Tensor((70, 99), \"float32\")):\n"
        "    return relu(a @ b)\n"
        "\n"
        "@T.schedule(\"fused_matmul_relu\")\n"
        "def s(sch):\n"
        "    blk = sch.get_block(\"matmul\")\n"
        "    i, k, j = sch.get_loops(blk)\n"
        "    j0, j1, j2 = sch.split(j, factors=[None, 2, 16])\n"
        "    sch.reorder(j0, i, k, j1, j2)\n"
        "    sch.reverse_compute_at(sch.get_block(\"relu\"), j0)\n";
    expect_error(rev, MT_ERR_INVALID_ARG, "10:9: error: reverse_compute_at: the loops of block 'matmul' under loop 'i2_0_0' have extents that "
                                            "depend on each other (a split's clamped tail), and no dim of 'lv' tells the "
                                            "iterations of loop 'i2_0_0' (and of the loops around it) apart");
}

/* A 3 x 3 box filter in two stages, Halide's blur: t = x * 2, then y =
 * the sum of t over a 3 x 3 window. compute_at(t, j0) under tiles of 8
 * rows x 16 columns of y: the consumer reads t at nine indices, whose
 * regions are one 8 x 16 interval shifted by 0..2 in each dim, so the
 * region is their hull, 10 x 18; compact_buffers makes t one tile per
 * iteration, so parallel takes the tiles although their halos overlap. */
static const char blur_src[] =
    "@T.prim_func\n"
    "def blur(x: T.Buffer((34, 50), \"float32\"), y: T.Buffer((32, 48), \"float32\")):\n"
    "    t = T.alloc_buffer((34, 50), \"float32\")\n"
    "    for i, j in T.grid(34, 50):\n"
    "        with T.block(\"t\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            t[vi, vj] = x[vi, vj] * T.float32(2)\n"
    "    for i, j in T.grid(32, 48):\n"
    "        with T.block(\"y\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            y[vi, vj] = (t[vi, vj] + t[vi, vj + 1] + t[vi, vj + 2]\n"
    "                         + t[vi + 1, vj] + t[vi + 1, vj + 1] + t[vi + 1, vj + 2]\n"
    "                         + t[vi + 2, vj] + t[vi + 2, vj + 1] + t[vi + 2, vj + 2])\n"
    "\n"
    "@T.schedule(blur)\n"
    "def s(sch):\n"
    "    b = sch.get_block(\"y\")\n"
    "    i, j = sch.get_loops(b)\n"
    "    i0, i1 = sch.split(i, factors=[None, 8])\n"
    "    j0, j1 = sch.split(j, factors=[None, 16])\n"
    "    sch.reorder(i0, j0, i1, j1)\n"
    "    sch.compute_at(sch.get_block(\"t\"), j0)\n"
    "    sch.parallel(i0)\n"
    "    sch.vectorize(j1)\n";

static void test_compute_at_stencil(void **state) {
    (void)state;
    skip_unless_cpu();
    mt_kernel *k = compile_ok(blur_src);
    const char *code = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    if (!strstr(code, "t = T.alloc_buffer((180,), \"float32\")")) fail_msg("t is not one 10 x 18 tile:\n%s", code);
    int64_t sh[2] = {34, 50};
    mt_tensor *a = tensor_f32(2, sh, 5), *out = NULL;
    mt_diag d;
    if (test_kernel_run(k, &a, 1, &out, 1, &d) != MT_OK) fail_msg("run failed:\n%s", d.text);
    for (int i = 0; i < 32; i++)
        for (int j = 0; j < 48; j++) {
            double want = 0, mag = 0;
            for (int di = 0; di < 3; di++)
                for (int dj = 0; dj < 3; dj++) {
                    double v = (double)F(a)[(i + di) * 50 + j + dj] * 2.0;
                    want += v, mag += fabs(v);
                }
            if (!(fabs(F(out)[i * 48 + j] - want) <= 1e-6 * mag))
                fail_msg("y[%d, %d]: got %.9g, want %.9g", i, j, F(out)[i * 48 + j], want);
        }
    mt_tensor_release(a);
    mt_tensor_release(out);
    mt_kernel_release(k);
    /* taps whose regions are not one interval shifted: refused */
    char src[sizeof blur_src + 160];
    snprintf(src, sizeof src, "%s", blur_src);
    char *tap = strstr(src, "t[vi + 2, vj + 2]");
    memcpy(tap, "t[vi + 2, 0]     ", strlen("t[vi + 2, vj + 2]"));
    expect_error(src, MT_ERR_INVALID_ARG, "compute_at: block 'y' reads 't' at indices whose regions along dim 1 "
                                          "are not the same interval shifted by a constant");
    /* 33 rows of y: the last tile of rows is clamped, so the halos of
     * neighbouring tiles need not become tiles of their own: parallel
     * refuses (serial, the values are right: test_compute_at_split_tails) */
    snprintf(src, sizeof src, "%s", blur_src);
    for (char *p = src; (p = strstr(p, "34, 50")); p++) memcpy(p, "35, 50", 6);
    for (char *p = src; (p = strstr(p, "32, 48")); p++) memcpy(p, "33, 48", 6);
    expect_error(src, MT_ERR_INVALID_ARG, "parallel: iterations of loop 'i_0' may touch the same elements of 't'");
    /* a later step that keeps compact_buffers from making t a tile per
     * iteration (t's loops fused: its index through // and %) is refused
     * there: the threads would share the halos */
    snprintf(src, sizeof src, "%s    a0, a1, ti, tj = sch.get_loops(sch.get_block(\"t\"))\n    sch.fuse(ti, tj)\n",
             blur_src);
    expect_error(src, MT_ERR_INVALID_ARG,
                 "26:9: error: fuse (loop 'i_0' is parallel): iterations of loop 'i_0' may touch the same elements of 't'");    /* a producer compact_buffers leaves whole (a reduce loop that indexes
     * nothing): its halos would be written by two threads, mid-reduction */
    expect_error("@T.prim_func\n"
                 "def f(x: T.Buffer((4098, 64), \"float32\"), y: T.Buffer((4096,), \"float32\")):\n"
                 "    t = T.alloc_buffer((4098,), \"float32\")\n"
                 "    for i, k in T.grid(4098, 64):\n"
                 "        with T.block(\"t\"):\n"
                 "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
                 "            t[vi] = x[vi, vk] * T.float32(2)\n"
                 "    for i in range(4096):\n"
                 "        with T.block(\"y\"):\n"
                 "            vi = T.axis.remap(\"S\", [i])\n"
                 "            y[vi] = t[vi] + t[vi + 1] + t[vi + 2]\n"
                 "\n"
                 "@T.schedule(f)\n"
                 "def s(sch):\n"
                 "    i, = sch.get_loops(sch.get_block(\"y\"))\n"
                 "    i0, i1 = sch.split(i, factors=[None, 4])\n"
                 "    sch.compute_at(sch.get_block(\"t\"), i0)\n"
                 "    sch.parallel(i0)\n",
                 MT_ERR_INVALID_ARG, "parallel: iterations of loop 'i_0' may touch the same elements of 't'");
}

/* rfactor from a schedule, on a dot product. */
static void test_rfactor(void **state) {
    (void)state;
    skip_unless_cpu();
    mt_kernel *k = compile_ok(
        "def main(x: Tensor((1000,), \"float32\"), y: Tensor((1000,), \"float32\")):\n"
        "    return sum(x * y)\n"
        "\n"
        "@T.schedule(\"fused_multiply_sum\")\n"
        "def s(sch):\n"
        "    i, = sch.get_loops(sch.get_block(\"sum\"))\n"
        "    io, ii = sch.split(i, factors=[None, 8])\n"
        "    rf = sch.rfactor(ii)\n"
        "    sch.vectorize(sch.get_loops(rf)[1])\n");
    const char *how = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
    assert_non_null(strstr(how, "    b_sum_rf = sch.rfactor(i0_1)\n"));
    int64_t sh[1] = {1000};
    mt_tensor *args[2] = {tensor_f32(1, sh, 5), tensor_f32(1, sh, 6)};
    mt_tensor *out = run1(k, args, 2);
    double ref = 0, mag = 0;
    for (int i = 0; i < 1000; i++) {
        ref += (double)F(args[0])[i] * F(args[1])[i];
        mag += fabs((double)F(args[0])[i] * F(args[1])[i]);
    }
    assert_true(fabs(F(out)[0] - ref) <= 1e-4 * mag);
    mt_tensor_release(args[0]);
    mt_tensor_release(args[1]);
    mt_tensor_release(out);
    mt_kernel_release(k);
}

/* A block the source already names C_init: decompose_reduction names its
 * new block C_init_1 (never a name the function has), the schedule's
 * handles follow, and the printed schedule says so. */
static void test_taken_names(void **state) {
    (void)state;
    skip_unless_cpu();
    mt_kernel *k = compile_ok(
        "@T.prim_func\n"
        "def f(A: T.Buffer((8, 8), \"float32\"), C: T.Buffer((8,), \"float32\")):\n"
        "    D = T.alloc_buffer((8,), \"float32\")\n"
        "    for i in range(8):\n"
        "        with T.block(\"C_init\"):\n"
        "            vi = T.axis.remap(\"S\", [i])\n"
        "            D[vi] = A[vi, 0] * T.float32(2)\n"
        "    for i, k in T.grid(8, 8):\n"
        "        with T.block(\"C\"):\n"
        "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
        "            with T.init():\n"
        "                C[vi] = D[vi]\n"
        "            C[vi] = C[vi] + A[vi, vk]\n"
        "\n"
        "@T.schedule(f)\n"
        "def s(sch):\n"
        "    b = sch.get_block(\"C\")\n"
        "    i, k = sch.get_loops(b)\n"
        "    init = sch.decompose_reduction(b, k)\n"
        "    io, ii = sch.split(sch.get_loops(b)[1], factors=[None, 4])\n"
        "    mine = sch.get_block(\"C_init\")\n");
    const char *code = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    const char *how = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
    assert_non_null(strstr(how, "b_C_init_1 = sch.decompose_reduction(b_C, k)\n"));
    assert_non_null(strstr(how, "sch.split(k, factors=[None, 4])\n"));
    (void)code;
    int64_t sh[2] = {8, 8};
    mt_tensor *a = tensor_f32(2, sh, 3);
    mt_tensor *out = run1(k, &a, 1);
    for (int i = 0; i < 8; i++) {
        double ref = 2.0 * F(a)[i * 8];
        for (int j = 0; j < 8; j++) ref += F(a)[i * 8 + j];
        assert_true(fabs(F(out)[i] - ref) <= 1e-5 * (1 + fabs(ref)));
    }
    mt_tensor_release(a);
    mt_tensor_release(out);
    mt_kernel_release(k);
}

/* Buffers a primitive makes never take a name the function has: g already
 * allocates A_local (cache_read's name for A's "local" copy), E_shared
 * (cache_write's for E's "shared" one) and, inside block D, C_rf (rfactor's
 * for C's partial results). The new buffers are A_local_1, E_shared_1 and
 * C_rf_1; the user's keep their names in the dump; the second cache_read
 * copies the user's A_local (read index 1), not the one the first made;
 * the printed schedule pasted back and the printed function parsed back
 * give the same code; and the numbers are those of plain C loops. */
static const char taken_buffers_src[] =
    "@T.prim_func\n"
    "def g(A: T.Buffer((16, 8), \"float32\"), E: T.Buffer((16,), \"float32\")):\n"
    "    A_local = T.alloc_buffer((16, 8), \"float32\")\n"
    "    C = T.alloc_buffer((16,), \"float32\")\n"
    "    D = T.alloc_buffer((16,), \"float32\")\n"
    "    E_shared = T.alloc_buffer((16,), \"float32\")\n"
    "    for i, j in T.grid(16, 8):\n"
    "        with T.block(\"L\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            A_local[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "    for i, k in T.grid(16, 8):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            with T.init():\n"
    "                C[vi] = T.float32(0)\n"
    "            C[vi] = C[vi] + A[vi, vk] * A_local[vi, vk]\n"
    "    for i in range(16):\n"
    "        with T.block(\"D\"):\n"
    "            vi = T.axis.remap(\"S\", [i])\n"
    "            C_rf = T.alloc_buffer((1,), \"float32\")\n"
    "            C_rf[0] = C[vi] + T.float32(1)\n"
    "            D[vi] = C_rf[0] * T.float32(3)\n"
    "    for i in range(16):\n"
    "        with T.block(\"S\"):\n"
    "            vi = T.axis.remap(\"S\", [i])\n"
    "            E_shared[vi] = D[vi] + A[vi, 0]\n"
    "    for i in range(16):\n"
    "        with T.block(\"E\"):\n"
    "            vi = T.axis.remap(\"S\", [i])\n"
    "            E[vi] = E_shared[vi] * T.float32(0.5)\n"
    "\n";

/* k's E for A (16 x 8, or flat: 128). */
static void check_taken_buffers(mt_kernel *k, bool flat) {
    int64_t sh[2] = {16, 8}, flat_sh[1] = {128};
    mt_tensor *a = flat ? tensor_f32(1, flat_sh, 9) : tensor_f32(2, sh, 9);
    mt_tensor *out = run1(k, &a, 1);
    for (int i = 0; i < 16; i++) {
        double c = 0, mag = 0;
        for (int j = 0; j < 8; j++) {
            double x = F(a)[i * 8 + j];
            c += x * (x * 2.0);
            mag += fabs(x * x * 2.0);
        }
        double ref = ((c + 1.0) * 3.0 + F(a)[i * 8]) * 0.5;
        if (fabs(F(out)[i] - ref) > 1e-5 * (mag * 3.0 + fabs(ref) + 1))
            fail_msg("E[%d] = %g, want %g", i, F(out)[i], ref);
    }
    mt_tensor_release(a);
    mt_tensor_release(out);
}

static void test_taken_buffer_names(void **state) {
    (void)state;
    skip_unless_cpu();
    char src[8192];
    snprintf(src, sizeof src, "%s%s", taken_buffers_src,
             "@T.schedule(g)\n"
             "def s(sch):\n"
             "    c = sch.get_block(\"C\")\n"
             "    i, k = sch.get_loops(c)\n"
             "    ko, ki = sch.split(k, factors=[None, 4])\n"
             "    rf = sch.rfactor(ki)\n"
             "    al = sch.cache_read(rf, 0, \"local\")\n"
             "    sh = sch.cache_read(rf, 1, \"shared\")\n"
             "    ew = sch.cache_write(sch.get_block(\"E\"), 0, \"shared\")\n");
    mt_kernel *k = compile_ok(src);
    const char *code = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    const char *want[] = { /* tir-sched: lowered, flat */
        "    C_rf_1 = T.alloc_buffer((64,), \"float32\")\n",
        "    A_local_1 = T.alloc_buffer((128,), \"float32\", scope=\"local\")\n",
        "    A_local_shared = T.alloc_buffer((128,), \"float32\", scope=\"shared\")\n",
        "    E_shared_1 = T.alloc_buffer((16,), \"float32\", scope=\"shared\")\n",
        "        C_rf = T.alloc_buffer((1,), \"float32\")\n", /* the user's, in block D */
        "        A_local_1[ax0 * 8 + ax1] = A[ax0 * 8 + ax1]\n",
        "        A_local_shared[ax0_1 * 8 + ax1_1] = A_local[ax0_1 * 8 + ax1_1]\n", /* the user's A_local */
        "A_local_1[i_1 * 8 + (k_0 * 4 + k_1)] * A_local_shared[i_1 * 8 + (k_0 * 4 + k_1)]\n",
        "        E[ax0_2] = E_shared_1[ax0_2]\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(code, want[i])) fail_msg("want '%s' in:\n%s", want[i], code);
    const char *how = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
    assert_non_null(strstr(how, "    b_C_rf = sch.rfactor(k_1)\n"));
    assert_non_null(strstr(how, "    b_A_local_1 = sch.cache_read(b_C_rf, 0, \"local\")\n"));
    assert_non_null(strstr(how, "    b_A_local_shared = sch.cache_read(b_C_rf, 1, \"shared\")\n"));
    assert_non_null(strstr(how, "    b_E_shared_1 = sch.cache_write(b_E, 0, \"shared\")\n"));
    check_taken_buffers(k, false);
    /* the printed schedule pasted back: the same code */
    char *again = malloc(16384);
    snprintf(again, 16384, "%s%s", taken_buffers_src, strchr(how, '\n') + 1);
    mt_kernel *k2 = compile_ok(again);
    assert_string_equal(mt_kernel_dump(k2, MT_STAGE_TIR_SCHED), code);
    mt_kernel_release(k2);
    /* the printed function parsed back: it prints the same (no schedule
     * applies to it) and computes the same */
    snprintf(again, 16384, "%s", code);
    mt_kernel *k3 = compile_ok(again);
    assert_string_equal(mt_kernel_dump(k3, MT_STAGE_TIR), code);
    check_taken_buffers(k3, true);
    mt_kernel_release(k3);
    free(again);
    mt_kernel_release(k);
}

/* compute_inline and compute_at from a schedule, on a loop function of two
 * stages: B = A * 2 then C = B + 1 (B inlined), and D = exp(A) then E =
 * D * 3 with D computed per row of E. */
static void test_compute_inline_at(void **state) {
    (void)state;
    skip_unless_cpu();
    mt_kernel *k = compile_ok(
        "@T.prim_func\n"
        "def two(A: T.Buffer((8, 33), \"float32\"), C: T.Buffer((8, 33), \"float32\"),\n"
        "        E: T.Buffer((8, 33), \"float32\")):\n"
        "    B = T.alloc_buffer((8, 33), \"float32\")\n"
        "    D = T.alloc_buffer((8, 33), \"float32\")\n"
        "    for i, j in T.grid(8, 33):\n"
        "        with T.block(\"B\"):\n"
        "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
        "            B[vi, vj] = A[vi, vj] * T.float32(2)\n"
        "    for i, j in T.grid(8, 33):\n"
        "        with T.block(\"C\"):\n"
        "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
        "            C[vi, vj] = B[vi, vj] + T.float32(1)\n"
        "    for i, j in T.grid(8, 33):\n"
        "        with T.block(\"D\"):\n"
        "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
        "            D[vi, vj] = T.exp(A[vi, vj])\n"
        "    for i, j in T.grid(8, 33):\n"
        "        with T.block(\"E\"):\n"
        "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
        "            E[vi, vj] = D[vi, vj] * T.float32(3)\n"
        "\n"
        "@T.schedule(two)\n"
        "def s(sch):\n"
        "    sch.compute_inline(sch.get_block(\"B\"))\n"
        "    i, j = sch.get_loops(sch.get_block(\"E\"))\n"
        "    sch.compute_at(sch.get_block(\"D\"), i)\n");
    const char *how = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
    assert_non_null(strstr(how, "    sch.compute_inline(b_B)\n"));
    assert_non_null(strstr(how, "    sch.compute_at(b_D, i)\n"));
    int64_t sh[2] = {8, 33};
    mt_tensor *a = tensor_f32(2, sh, 7), *outs[2] = {NULL, NULL};
    mt_diag d;
    if (test_kernel_run(k, &a, 1, outs, 2, &d) != MT_OK) fail_msg("run failed:\n%s", d.text);
    for (int i = 0; i < 8 * 33; i++) {
        assert_true(F(outs[0])[i] == F(a)[i] * 2.0f + 1.0f);
        assert_true(fabs(F(outs[1])[i] - exp((double)F(a)[i]) * 3.0) <= 1e-5 * exp((double)F(a)[i]) * 3.0);
    }
    mt_tensor_release(a);
    mt_tensor_release(outs[0]);
    mt_tensor_release(outs[1]);
    mt_kernel_release(k);
}

/* reverse_compute_inline, cache_read + compute_at, cache_write +
 * reverse_compute_at, and the schedule dump pasted back. */
static const char stages_src[] =
    "@T.prim_func\n"
    "def two(A: T.Buffer((8, 33), \"float32\"), C: T.Buffer((8, 33), \"float32\"),\n"
    "        E: T.Buffer((8, 33), \"float32\")):\n"
    "    B = T.alloc_buffer((8, 33), \"float32\")\n"
    "    D = T.alloc_buffer((8, 33), \"float32\")\n"
    "    for i, j in T.grid(8, 33):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            B[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "    for i, j in T.grid(8, 33):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            C[vi, vj] = B[vi, vj] + T.float32(1)\n"
    "    for i, j in T.grid(8, 33):\n"
    "        with T.block(\"D\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            D[vi, vj] = T.exp(A[vi, vj])\n"
    "    for i, j in T.grid(8, 33):\n"
    "        with T.block(\"E\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            E[vi, vj] = D[vi, vj] * T.float32(3)\n"
    "\n";

static void check_stages(mt_kernel *k) {
    int64_t sh[2] = {8, 33};
    mt_tensor *a = tensor_f32(2, sh, 7), *outs[2] = {NULL, NULL};
    mt_diag d;
    if (test_kernel_run(k, &a, 1, outs, 2, &d) != MT_OK) fail_msg("run failed:\n%s", d.text);
    for (int i = 0; i < 8 * 33; i++) {
        assert_true(F(outs[0])[i] == F(a)[i] * 2.0f + 1.0f);
        double e = exp((double)F(a)[i]) * 3.0;
        assert_true(fabs(F(outs[1])[i] - e) <= 1e-5 * e);
    }
    mt_tensor_release(a);
    mt_tensor_release(outs[0]);
    mt_tensor_release(outs[1]);
}

static void test_cache_and_reverse(void **state) {
    (void)state;
    skip_unless_cpu();
    char src[8192];
    snprintf(src, sizeof src, "%s%s", stages_src,
             "@T.schedule(two)\n"
             "def s(sch):\n"
             "    sch.reverse_compute_inline(sch.get_block(\"C\"))\n"
             "    i, j = sch.get_loops(sch.get_block(\"D\"))\n"
             "    ac = sch.cache_read(sch.get_block(\"D\"), 0, \"global\")\n"
             "    sch.compute_at(ac, i)\n"
             "    ew = sch.cache_write(sch.get_block(\"E\"), 0, \"global\")\n"
             "    k, l = sch.get_loops(sch.get_block(\"E\"))\n"
             "    sch.reverse_compute_at(ew, k)\n");
    mt_kernel *k = compile_ok(src);
    const char *how = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
    assert_non_null(strstr(how, "    sch.reverse_compute_inline(b_C)\n"));
    assert_non_null(strstr(how, "    b_A_global = sch.cache_read(b_D, 0, \"global\")\n"));
    assert_non_null(strstr(how, "    b_E_global = sch.cache_write(b_E, 0, \"global\")\n"));
    assert_non_null(strstr(how, "    sch.reverse_compute_at(b_E_global, i_2)\n"));
    check_stages(k);
    /* pasted back: the same code */
    char *again = malloc(16384);
    snprintf(again, 16384, "%s%s", stages_src, strchr(how, '\n') + 1);
    mt_kernel *k2 = compile_ok(again);
    assert_string_equal(mt_kernel_dump(k2, MT_STAGE_TIR_SCHED), mt_kernel_dump(k, MT_STAGE_TIR_SCHED));
    free(again);
    mt_kernel_release(k2);
    mt_kernel_release(k);
}

/* The schedule dump of the default rules made of primitives, pasted back
 * into the source, gives the same code: for every golden program and
 * example, each kernel printed "as a schedule" (not "in part"). */
/* text without the "schedule": "<rule>" attribute the GPU rules set (a
 * user schedule's function has none), nor the "knobs" attribute of a
 * function apply_rule scheduled (the default rule's has none). */
static void strip_attr(char *out, const char *key) {
    char *p;
    size_t n = strlen(key);
    while ((p = strstr(out, key))) {
        char *q = strchr(p + n, '"');
        q = q ? q + 1 : p + strlen(p);
        if (!strncmp(q, ", ", 2)) q += 2;
        memmove(p, q, strlen(q) + 1);
    }
}

static char *without_rule_attr(const char *text) {
    char *out = strdup(text);
    strip_attr(out, "\"schedule\": \"");
    strip_attr(out, "\"knobs\": \"");
    return out;
}

static int replay_source(const char *name, const char *src) {
    mt_compile_options o = test_target_options(NULL);
    mt_diag d;
    mt_kernel *k = mt_jit_compile(test_ctx, src, &o, &d);
    if (!k) return 0; /* some goldens need an entry or a device: not this test's business */
    const char *how = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
    size_t cap = strlen(src) + strlen(how) + 64;
    char *again = malloc(cap);
    snprintf(again, cap, "%s\n", src);
    int n = 0;
    for (const char *p = how; (p = strstr(p, ", as a schedule:\n")); n++) {
        p += strlen(", as a schedule:\n");
        const char *end = strstr(p, "\n# ");
        size_t len = end ? (size_t)(end - p + 1) : strlen(p);
        strncat(again, p, len);
    }
    if (n) {
        mt_kernel *k2 = mt_jit_compile(test_ctx, again, &o, &d);
        if (!k2) fail_msg("%s: the schedule dump does not compile back:\n%s\n%s", name, d.text, again);
        char *x = without_rule_attr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED));
        char *y = without_rule_attr(mt_kernel_dump(k2, MT_STAGE_TIR_SCHED));
        bool same = strcmp(x, y) == 0;
        free(x), free(y);
        if (!same)
            fail_msg("%s: the replayed schedule gives other code:\n%s", name, again);
        mt_kernel_release(k2);
    }
    free(again);
    mt_kernel_release(k);
    return n;
}

static void test_default_rule_traces(void **state) {
    (void)state;
    const char *root = getenv("MT_SOURCE_DIR");
    static const char *const dirs[] = {"tests/golden", "examples/kernels", "tests/gpu"};
    int replayed = 0;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", root ? root : ".", dirs[i]);
        DIR *dp = opendir(dir);
        if (!dp) fail_msg("cannot open %s", dir);
        for (struct dirent *e; (e = readdir(dp));) {
            size_t len = strlen(e->d_name);
            if (len <= 3 || strcmp(e->d_name + len - 3, ".py") != 0 || !strcmp(e->d_name, "compare.py")) continue;
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            char *src = test_read_file(path);
            if (!src) fail_msg("cannot read %s", path);
            if (!strstr(src, "@T.schedule")) replayed += replay_source(e->d_name, src);
            free(src);
        }
        closedir(dp);
    }
    /* and kernels no golden has: transposes whose tiles' loops are fused
     * and cut into chunks (the race check reads the digits of the fused
     * index), matmuls and row reductions the rules schedule with primitives */
    static const char *const more[] = {
        "def f(a: Tensor((64, 96, 128), \"float32\")):\n    return transpose(a, (2, 0, 1))\n",
        "def f(a: Tensor((\"n\", 64, 96), \"float32\")):\n    return transpose(a, (2, 0, 1))\n",
        "def f(a: Tensor((4096, 4096), \"float32\")):\n    return a.T\n",
        "def f(a: Tensor((1000, 257), \"float32\")):\n    return a.T\n",
        "def f(a: Tensor((2048, 2048), \"float32\"), b: Tensor((2048, 2048), \"float32\")):\n    return a @ b\n",
        "def f(a: Tensor((144, 64), \"float64\"), b: Tensor((64, 48), \"float64\")):\n    return a @ b\n",
        "def f(a: Tensor((300, 1000), \"float32\")):\n    return sum(a, axis=-1)\n",
        "def f(a: Tensor((8, 64, 100), \"float32\")):\n    return mean(a, axis=-1, keepdims=True)\n",
        "def f(a: Tensor((1000, 7), \"float64\")):\n    return max(a, axis=-1)\n",
    };
    int extra = 0;
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) extra += replay_source(more[i], more[i]);
    print_message("%d kernels' default schedules replayed\n", replayed + extra);
    assert_true(replayed >= 10);
    if (!test_gpu_target() && extra != (int)(sizeof more / sizeof more[0]))
        fail_msg("expected every extra kernel's schedule printed as primitives (%d of %d)", extra,
                 (int)(sizeof more / sizeof more[0]));
}

/* A schedule of loop function mm names the functions made from mm, not
 * another loop function whose name starts with "mm_". */
static void test_names_by_def(void **state) {
    (void)state;
    skip_unless_cpu();
    mt_kernel *k = compile_ok(
        "@T.prim_func\n"
        "def mm(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"float32\")):\n"
        "    for i in range(4):\n"
        "        with T.block(\"C\"):\n"
        "            vi = T.axis.spatial(4, i)\n"
        "            B[vi] = A[vi] * T.float32(2)\n"
        "\n"
        "@T.prim_func\n"
        "def mm_2(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"float32\")):\n"
        "    for i in range(4):\n"
        "        with T.block(\"D\"):\n"
        "            vi = T.axis.spatial(4, i)\n"
        "            B[vi] = A[vi] * T.float32(3)\n"
        "\n"
        "@T.schedule(mm)\n"
        "def s(sch):\n"
        "    i, = sch.get_loops(sch.get_block(\"C\"))\n"
        "    sch.unroll(i)\n"
        "\n"
        "def main(a: Tensor((4,), \"float32\")):\n"
        "    return mm_2(a)\n");
    assert_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "the source's schedule"));
    mt_kernel_release(k);
}

/* get_block's func_name= names the function as the decorator does: the
 * loop function's name as written, for each of the functions made from it
 * (scale for n = 64 and scale_1 for n = 48); a kernel's name, for a
 * string-named schedule. */
static void test_get_block_func_name(void **state) {
    (void)state;
    skip_unless_cpu();
    mt_kernel *k = compile_ok(
        "@T.prim_func\n"
        "def scale(A: T.Buffer((\"n\",), \"float32\"), B: T.Buffer((\"n\",), \"float32\")):\n"
        "    for i in range(n):\n"
        "        with T.block(\"B\"):\n"
        "            vi = T.axis.spatial(n, i)\n"
        "            B[vi] = A[vi] * T.float32(2)\n"
        "\n"
        "@T.schedule(scale)\n"
        "def s(sch):\n"
        "    b = sch.get_block(\"B\", func_name=\"scale\")\n"
        "    i, = sch.get_loops(b)\n"
        "    io, ii = sch.split(i, factors=[None, 16])\n"
        "    sch.unroll(ii)\n"
        "\n"
        "def main(x: Tensor((64,), \"float32\"), y: Tensor((48,), \"float32\")):\n"
        "    a = scale(x)\n"
        "    b = scale(y)\n"
        "    return a, b\n");
    const char *how = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
    assert_non_null(strstr(how, "# scale: the source's schedule\n"));
    assert_non_null(strstr(how, "# scale_1: the source's schedule\n"));
    int64_t sx[1] = {64}, sy[1] = {48};
    mt_tensor *args[2] = {tensor_f32(1, sx, 1), tensor_f32(1, sy, 2)}, *outs[2] = {NULL, NULL};
    mt_diag d;
    if (test_kernel_run(k, args, 2, outs, 2, &d) != MT_OK) fail_msg("run failed:\n%s", d.text);
    for (int i = 0; i < 64; i++) assert_true(F(outs[0])[i] == F(args[0])[i] * 2.0f);
    for (int i = 0; i < 48; i++) assert_true(F(outs[1])[i] == F(args[1])[i] * 2.0f);
    for (int i = 0; i < 2; i++) mt_tensor_release(args[i]), mt_tensor_release(outs[i]);
    mt_kernel_release(k);
    /* a string-named schedule: the kernel's name */
    char src[2048];
    snprintf(src, sizeof src, "%s", fused_src);
    char *at = strstr(src, "sch.get_block(\"add\")");
    assert_non_null(at);
    const char *tail = strchr(strstr(fused_src, "sch.get_block(\"add\")"), ')') + 1;
    snprintf(at, sizeof src - (size_t)(at - src), "sch.get_block(\"add\", func_name=\"fused_multiply_add\")%s", tail);
    k = compile_ok(src);
    check_fused(k);
    mt_kernel_release(k);
}

static void expect_error(const char *src, mt_status st, const char *where_what) {
    mt_diag d = compile_err(src);
    assert_int_equal(d.status, st);
    if (!strstr(d.text, where_what)) fail_msg("want '%s' in:\n%s", where_what, d.text);
}

/* Mistakes are placed where the user wrote them. */
static void test_errors(void **state) {
    (void)state;
    skip_unless_cpu();
    expect_error(matmul_src(8, 8, 8,
                            "@T.schedule(mm)\n"
                            "def s(sch):\n"
                            "    i, j, k = sch.get_loops(sch.get_block(\"C\"))\n"
                            "    a, b = sch.split(i, factors=[None, 2])\n"
                            "    sch.parallel(i)\n"),
                 MT_ERR_INVALID_ARG, "15:9: error: parallel: loop 'i' no longer exists: split (step 3) replaced it");
    expect_error(matmul_src(8, 8, 8,
                            "@T.schedule(mm)\n"
                            "def s(sch):\n"
                            "    sch.get_block(\"D\")\n"),
                 MT_ERR_INVALID_ARG, "get_block: no block named 'D' (the blocks of 'mm': 'C')");
    expect_error(matmul_src(8, 8, 8,
                            "@T.schedule(mm)\n"
                            "def s(sch):\n"
                            "    i, j, k = sch.get_loops(sch.get_block(\"C\"))\n"
                            "    sch.parallel(k)\n"),
                 MT_ERR_INVALID_ARG, "parallel: loop 'k' drives reduce variable 'vk' of block 'C'");
    expect_error(matmul_src(8, 8, 8,
                            "@T.schedule(\"nope\")\n"
                            "def s(sch):\n"
                            "    pass\n"),
                 MT_ERR_NAME, "no kernel named 'nope' in this program (its kernels: mm)");
    expect_error(matmul_src(8, 8, 8,
                            "@T.schedule(mm)\n"
                            "def s(sch):\n"
                            "    sch.splitt(1)\n"),
                 MT_ERR_NAME, "'splitt' is not a schedule primitive");
    expect_error(matmul_src(8, 8, 8,
                            "@T.schedule(mm)\n"
                            "def s(sch):\n"
                            "    b = sch.get_block(\"C\")\n"
                            "    sch.use_fma(b)\n"
                            "    sch.use_fma(b)\n"),
                 MT_ERR_INVALID_ARG,
                 "15:9: error: use_fma: block 'C' has no float32 or float64 multiply-add (x + a * b) to fuse");
}

/* ---- the C API --------------------------------------------------------------- */

typedef struct cb_state {
    int calls;
    bool fail;
    mt_status refusal;   /* what a refused primitive returned */
    char error[256];
} cb_state;

/* The fused elementwise kernel: use_fma, fuse its loops, split by 64,
 * parallel, vectorize; first a refused step (vectorize the outer loop). */
static mt_status schedule_cb(mt_schedule *sch, void *user) {
    cb_state *s = user;
    s->calls++;
    if (s->fail) return MT_ERR_INVALID_ARG;
    if (strcmp(mt_schedule_kernel_name(sch), "fused_multiply_add") != 0) return MT_OK;
    int blk, loops[4], n, fused, parts[2];
    if (mt_schedule_get_block(sch, "add", &blk) != MT_OK) return MT_ERR_INTERNAL;
    if (mt_schedule_get_loops(sch, blk, loops, 4, &n) != MT_OK || n != 2) return MT_ERR_INTERNAL;
    s->refusal = mt_schedule_vectorize(sch, loops[0]);
    snprintf(s->error, sizeof s->error, "%s", mt_schedule_error(sch) ? mt_schedule_error(sch) : "");
    if (mt_schedule_use_fma(sch, blk) != MT_OK) return MT_ERR_INTERNAL; /* a + b * 2.0: exact either way */
    if (mt_schedule_fuse(sch, loops, 2, &fused) != MT_OK) return MT_ERR_INTERNAL;
    int64_t factors[2] = {0, 64};
    if (mt_schedule_split(sch, fused, factors, 2, parts) != MT_OK) return MT_ERR_INTERNAL;
    if (mt_schedule_parallel(sch, parts[0]) != MT_OK) return MT_ERR_INTERNAL;
    return mt_schedule_vectorize(sch, parts[1]);
}

static void test_c_api(void **state) {
    (void)state;
    skip_unless_cpu();
    cb_state s = {0};
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.schedule = schedule_cb;
    o.schedule_user = &s;
    const char *src = "def main(a: Tensor((64, 100), \"float32\"), b: Tensor((64, 100), \"float32\")):\n"
                      "    return a + b * 2.0\n";
    mt_kernel *k = compile_ok_opts(src, &o);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.refusal, MT_ERR_INVALID_ARG);
    assert_string_equal(s.error, "vectorize: loop 'i0' is not innermost");
    const char *how = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
    assert_non_null(strstr(how, "# fused_multiply_add: the schedule callback\n"));
    assert_non_null(strstr(how, "    sch.vectorize(i0_i1_fused_1)\n"));
    assert_non_null(strstr(how, "    sch.use_fma(b_add)\n"));
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "T.fma("));
    check_fused(k);
    /* not from the context's cache: the callback runs again */
    mt_kernel *k2 = compile_ok_opts(src, &o);
    assert_int_equal(s.calls, 2);
    mt_kernel_release(k2);
    mt_kernel_release(k);

    s.fail = true;
    mt_diag d;
    assert_null(mt_jit_compile(test_ctx, src, &o, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    assert_non_null(strstr(d.text, "the schedule callback failed on kernel 'fused_multiply_add'"));
    assert_int_equal(mt_schedule_parallel(NULL, 0), MT_ERR_INVALID_ARG);
}

/* The block primitives from C, as test_cache_and_reverse does them from
 * the source (the callback sees the kernel after inline_producers, which
 * already folded B into C and D into E); a refusal leaves the kernel as it
 * was. */
static mt_status stages_cb(mt_schedule *sch, void *user) {
    char *trace = user;
    int c, e, ac, cw, loops[4], n;
    /* the callback sees the function after inline_producers: B is already
     * in C and D in E */
    if (mt_schedule_get_block(sch, "C", &c) || mt_schedule_reverse_compute_inline(sch, c) != MT_ERR_INVALID_ARG ||
        !strstr(mt_schedule_error(sch), "no producer to inline into"))
        return MT_ERR_INTERNAL;
    if (mt_schedule_get_block(sch, "E", &e) || mt_schedule_get_loops(sch, e, loops, 4, &n) || n != 2)
        return MT_ERR_INTERNAL;
    if (mt_schedule_cache_read(sch, e, 0, "global", &ac) || mt_schedule_compute_at(sch, ac, loops[0]))
        return MT_ERR_INTERNAL;
    if (mt_schedule_cache_write(sch, c, 0, "global", &cw)) return MT_ERR_INTERNAL;
    if (mt_schedule_get_loops(sch, c, loops, 4, &n) || mt_schedule_reverse_compute_at(sch, cw, loops[0]))
        return MT_ERR_INTERNAL;
    if (mt_schedule_get_loops(sch, c, loops, 1, &n) != MT_ERR_INVALID_ARG) return MT_ERR_INTERNAL; /* max 1 < 2 loops */
    snprintf(trace, 4096, "%s", mt_schedule_trace(sch));
    return MT_OK;
}

static void test_c_api_blocks(void **state) {
    (void)state;
    skip_unless_cpu();
    char trace[4096] = "";
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.schedule = stages_cb;
    o.schedule_user = trace;
    mt_kernel *k = compile_ok_opts(stages_src, &o);
    assert_null(strstr(trace, "reverse_compute_inline"));
    assert_non_null(strstr(trace, "    b_A_global = sch.cache_read(b_E, 0, \"global\")\n"));
    assert_non_null(strstr(trace, "    b_C_global = sch.cache_write(b_C, 0, \"global\")\n"));
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "# two: the schedule callback\n"));
    check_stages(k);
    mt_kernel_release(k);
}

/* A source schedule wins over a tuning log's record for the same kernel. */
static void test_precedence_over_log(void **state) {
    (void)state;
    skip_unless_cpu();
    char log[] = "/tmp/mt_user_schedule_XXXXXX";
    int fd = mkstemp(log);
    assert_true(fd >= 0);
    close(fd);
    const char *prog = "def main(a: Tensor((64, 100), \"float32\"), b: Tensor((64, 100), \"float32\")):\n"
                       "    return a + b * 2.0\n";
    mt_tune_options t;
    mt_tune_options_init(&t);
    t.log = log, t.trials = 2, t.seconds = 5;
    mt_diag d;
    if (mt_tune(test_ctx, prog, NULL, &t, &d) != MT_OK) fail_msg("mt_tune: %s", d.text);
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.tuning_log = log;
    mt_kernel *k = compile_ok_opts(prog, &o);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "# fused_multiply_add: the default rule schedule"));
    mt_kernel_release(k);
    k = compile_ok_opts(fused_src, &o); /* the same kernel, with a schedule in the source */
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "# fused_multiply_add: the source's schedule\n"));
    assert_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "\"knobs\""));
    check_fused(k);
    mt_kernel_release(k);
    unlink(log);
}

/* ---- GPU schedules ------------------------------------------------------------ */

static void test_gpu_bind(void **state) {
    (void)state;
    if (!test_gpu_target()) {
        print_message("skipped under target cpu: a GPU schedule (bind); see test_user_schedule_gpu_emulated\n");
        skip();
    }
    mt_kernel *k = compile_ok(
        "def main(a: Tensor((64, 100), \"float32\"), b: Tensor((64, 100), \"float32\")):\n"
        "    return a + b * 2.0\n"
        "\n"
        "@T.schedule(\"fused_multiply_add\")\n"
        "def s(sch):\n"
        "    i, j = sch.get_loops(sch.get_block(\"add\"))\n"
        "    f = sch.fuse(i, j)\n"
        "    bx, tx = sch.split(f, factors=[None, 128])\n"
        "    sch.bind(bx, \"blockIdx.x\")\n"
        "    sch.bind(tx, \"threadIdx.x\")\n");
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "T.thread_binding"));
    check_fused(k);
    mt_kernel_release(k);
    expect_error("def main(a: Tensor((64, 100), \"float32\")):\n"
                 "    return a * 2.0\n"
                 "@T.schedule(\"multiply\")\n"
                 "def s(sch):\n"
                 "    i, j = sch.get_loops(sch.get_block(\"multiply\"))\n"
                 "    sch.unroll(j)\n",
                 MT_ERR_INVALID_ARG, "its schedule must bind loops to blockIdx and threadIdx");
}

/* Runs k (8 x 8 A in, its 8 row sums out) on A[i] = i % m - off and
 * checks each sum exactly (small integers); releases k. */
static void expect_row_sums(mt_kernel *k, int m, float off) {
    int64_t shape[2] = {8, 8};
    mt_tensor *a = mt_tensor_create(MT_FLOAT32, 2, shape), *out = NULL;
    float *x = mt_tensor_data(a);
    for (int i = 0; i < 64; i++) x[i] = (float)(i % m) - off;
    assert_int_equal(mt_kernel_run(k, &a, 1, &out, 1, NULL), MT_OK);
    for (int i = 0; i < 8; i++) {
        float want = 0;
        for (int j = 0; j < 8; j++) want += x[i * 8 + j];
        assert_true(((float *)mt_tensor_data(out))[i] == want);
    }
    mt_tensor_release(out);
    mt_tensor_release(a);
    mt_kernel_release(k);
}

/* T.init runs before the first reduce iteration, whichever way the reduce
 * variable is bound to its loop (`7 - k` once ran it at k == 7, the last). */
static void test_reversed_reduce_init(void **state) {
    (void)state;
    skip_unless_cpu();
    mt_kernel *k = compile_ok("@T.prim_func\n"
                              "def f(A: T.Buffer((8, 8), \"float32\"), C: T.Buffer((8,), \"float32\")):\n"
                              "    for i, k in T.grid(8, 8):\n"
                              "        with T.block(\"C\"):\n"
                              "            vi = T.axis.spatial(8, i)\n"
                              "            vk = T.axis.reduce(8, 7 - k)\n"
                              "            with T.init():\n"
                              "                C[vi] = T.float32(0)\n"
                              "            C[vi] = C[vi] + A[vi, vk]\n");
    expect_row_sums(k, 7, 2.0f);
    /* bound through a let: the init still runs once per row (it ran at every k) */
    k = compile_ok("@T.prim_func\n"
                   "def f(A: T.Buffer((8, 8), \"float32\"), C: T.Buffer((8,), \"float32\")):\n"
                   "    for i, k in T.grid(8, 8):\n"
                   "        t = k\n"
                   "        with T.block(\"C\"):\n"
                   "            vi = T.axis.spatial(8, i)\n"
                   "            vk = T.axis.reduce(8, t)\n"
                   "            with T.init():\n"
                   "                C[vi] = T.float32(0)\n"
                   "            C[vi] = C[vi] + A[vi, vk]\n");
    expect_row_sums(k, 5, 1.0f);
}

/* Row sums of 37 x n (float32, seed 7) by k, against double loops: every
 * row within 1e-5 of the sum of magnitudes (the lanes reassociate it). */
static void expect_sums_of_rows(mt_kernel *k, int64_t n) {
    int64_t sh[2] = {37, n};
    mt_tensor *x = tensor_f32(2, sh, 7);
    mt_tensor *out = run1(k, &x, 1);
    for (int64_t r = 0; r < 37; r++) {
        double s = 0, mag = 0;
        for (int64_t j = 0; j < n; j++) s += F(x)[r * n + j], mag += fabs(F(x)[r * n + j]);
        if (!(fabs(F(out)[r] - s) <= 1e-5 * mag + 1e-30))
            fail_msg("n = %lld, row %lld: %.9g vs %.9g", (long long)n, (long long)r, F(out)[r], s);
    }
    mt_tensor_release(x);
    mt_tensor_release(out);
    mt_kernel_release(k);
}

static char *row_sum_src(int64_t n, const char *body) {
    static char buf[4096];
    snprintf(buf, sizeof buf,
             "def main(x: Tensor((37, %lld), \"float32\")):\n"
             "    return sum(x, axis=-1)\n"
             "\n@T.schedule(\"sum\")\ndef s(sch):\n%s",
             (long long)n, body);
    return buf;
}

/* vectorize on a reduce loop folds the lanes (its init decomposed first);
 * the per-row partial results of rfactor with their zeros and combination
 * moved into the row (compute_at with several consumers, reverse_compute_at
 * past the zeros), which the row-reduction rule's trace is made of; row
 * lengths with tails of 0 to 15 and shorter than a vector. Refusals: an
 * init inside the loop; zeros moved where the iterations share the partial
 * results (they would be zeroed again); an update in place whose regions
 * overlap. */
static void test_reduce_lanes(void **state) {
    (void)state;
    skip_unless_cpu();
    static const int64_t ns[] = {1, 7, 16, 17, 64, 100, 1000};
    static const char folded[] = "    b = sch.get_block(\"sum\")\n"
                                 "    i, j = sch.get_loops(b)\n"
                                 "    sch.decompose_reduction(b, j)\n"
                                 "    sch.vectorize(j)\n";
    static const char per_row[] = "    b = sch.get_block(\"sum\")\n"
                                  "    i, j = sch.get_loops(b)\n"
                                  "    j0, j1, j2 = sch.split(j, factors=[None, 2, 8])\n"
                                  "    sch.rfactor([j1, j2])\n"
                                  "    sch.reverse_compute_at(b, i)\n"
                                  "    sch.compute_at(sch.get_block(\"sum_rf_init\"), i)\n"
                                  "    sch.parallel(i)\n"
                                  "    sch.unroll(j1)\n"
                                  "    sch.vectorize(j2)\n"
                                  "    i_, c0, c1 = sch.get_loops(b)\n"
                                  "    c = sch.fuse(c0, c1)\n"
                                  "    sch.decompose_reduction(b, c)\n"
                                  "    sch.vectorize(c)\n";
    for (size_t q = 0; q < sizeof ns / sizeof *ns; q++) {
        mt_kernel *k = compile_ok(row_sum_src(ns[q], folded));
        if (ns[q] >= 16) assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "lv_lanes"));
        expect_sums_of_rows(k, ns[q]);
        if (ns[q] < 16) continue;
        k = compile_ok(row_sum_src(ns[q], per_row));
        const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        /* the partial results a 16-float local per row, inside the parallel body */
        if (!strstr(t, "lv_rf = T.alloc_buffer((16,), \"float32\")") || !strstr(t, "parallel_body"))
            fail_msg("n = %lld:\n%s", (long long)ns[q], t);
        expect_sums_of_rows(k, ns[q]);
    }
    /* a max written as the plain select (NaN skipped, not propagated): the
     * lanes start from the element, not from a first vector with a NaN */
    mt_kernel *k = compile_ok("@T.prim_func\n"
                   "def rmax(x: T.Buffer((4, 64), \"float32\"), y: T.Buffer((4,), \"float32\")):\n"
                   "    for i, k in T.grid(4, 64):\n"
                   "        with T.block(\"m\"):\n"
                   "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
                   "            with T.init():\n"
                   "                y[vi] = T.float32(0)\n"
                   "            y[vi] = T.Select(x[vi, vk] > y[vi], x[vi, vk], y[vi])\n"
                   "\n@T.schedule(rmax)\ndef s(sch):\n"
                   "    b = sch.get_block(\"m\")\n"
                   "    i, k = sch.get_loops(b)\n"
                   "    sch.decompose_reduction(b, k)\n"
                   "    sch.vectorize(k)\n");
    int64_t sh[2] = {4, 64};
    mt_tensor *x = tensor_f32(2, sh, 3);
    float *xs = mt_tensor_data(x);
    xs[0] = NAN, xs[64 + 5] = NAN, xs[128 + 17] = NAN;
    mt_tensor *y = run1(k, &x, 1);
    for (int r = 0; r < 4; r++) {
        float want = 0;
        for (int j = 0; j < 64; j++)
            if (F(x)[r * 64 + j] > want) want = F(x)[r * 64 + j];
        if (F(y)[r] != want) fail_msg("row %d: %g vs %g", r, F(y)[r], want);
    }
    mt_tensor_release(x);
    mt_tensor_release(y);
    mt_kernel_release(k);
    /* a producer writing more than the consumer reads (rows written in
     * reverse order, 8 columns of which b reads 4): b runs only its own
     * instances, the columns cut to 4 (it wrote B[r, 4..7], out of B, before) */
    k = compile_ok("@T.prim_func\n"
                   "def sub(A: T.Buffer((3, 8), \"float32\"), B: T.Buffer((3, 4), \"float32\")):\n"
                   "    X = T.alloc_buffer((3, 8), \"float32\")\n"
                   "    for r, j in T.grid(3, 8):\n"
                   "        with T.block(\"o\"):\n"
                   "            vr = T.axis.spatial(3, 2 - r)\n"
                   "            vj = T.axis.spatial(8, j)\n"
                   "            X[vr, vj] = A[vr, vj] * T.float32(2)\n"
                   "    for r, j in T.grid(3, 4):\n"
                   "        with T.block(\"b\"):\n"
                   "            vr, vj = T.axis.remap(\"SS\", [r, j])\n"
                   "            B[vr, vj] = X[vr, vj] + T.float32(1)\n"
                   "\n@T.schedule(sub)\ndef s(sch):\n"
                   "    r, j = sch.get_loops(sch.get_block(\"o\"))\n"
                   "    sch.reverse_compute_at(sch.get_block(\"b\"), r)\n");
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "range(4)"));
    int64_t sa[2] = {3, 8};
    x = tensor_f32(2, sa, 9);
    y = run1(k, &x, 1);
    for (int r = 0; r < 3; r++)
        for (int j = 0; j < 4; j++) assert_true(F(y)[r * 4 + j] == F(x)[r * 8 + j] * 2.0f + 1.0f);
    mt_tensor_release(x);
    mt_tensor_release(y);
    mt_kernel_release(k);
    /* (review) a reduction consumer moved under the inner loop of a split
     * of a symbolic row loop: its rows i0 * 4 + i1 are apart (a mixed radix) */
    k = compile_ok("@T.prim_func\n"
                   "def k12(A: T.Buffer((\"n\", 8), \"float32\"), R: T.Buffer((\"n\",), \"float32\")):\n"
                   "    X = T.alloc_buffer((n, 8), \"float32\")\n"
                   "    for i, j in T.grid(n, 8):\n"
                   "        with T.block(\"X\"):\n"
                   "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
                   "            X[vi, vj] = A[vi, vj] * T.float32(2)\n"
                   "    for i, k in T.grid(n, 8):\n"
                   "        with T.block(\"R\"):\n"
                   "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
                   "            with T.init():\n"
                   "                R[vi] = T.float32(0)\n"
                   "            R[vi] = R[vi] + X[vi, vk]\n"
                   "\n@T.schedule(k12)\ndef s(sch):\n"
                   "    i, j = sch.get_loops(sch.get_block(\"X\"))\n"
                   "    i0, i1 = sch.split(i, factors=[None, 4])\n"
                   "    sch.reverse_compute_at(sch.get_block(\"R\"), i1)\n"
                   "    sch.parallel(i0)\n");
    int64_t sn[2] = {13, 8};
    x = tensor_f32(2, sn, 4);
    y = run1(k, &x, 1);
    for (int r = 0; r < 13; r++) {
        double want = 0;
        for (int j = 0; j < 8; j++) want += 2.0 * F(x)[r * 8 + j];
        assert_true(fabs(F(y)[r] - want) <= 1e-5 * (1 + fabs(want)));
    }
    mt_tensor_release(x);
    mt_tensor_release(y);
    mt_kernel_release(k);
    expect_error(row_sum_src(64, "    b = sch.get_block(\"sum\")\n"
                                 "    i, j = sch.get_loops(b)\n"
                                 "    sch.vectorize(j)\n"),
                 MT_ERR_INVALID_ARG, "8:9: error: vectorize: block 'sum' reduces over loop 'i1' with its init inside: "
                                     "decompose_reduction first");
    expect_error("def main(x: Tensor((1000,), \"float32\")):\n"
                 "    return sum(x)\n"
                 "\n@T.schedule(\"sum\")\ndef s(sch):\n"
                 "    i, = sch.get_loops(sch.get_block(\"sum\"))\n"
                 "    i0, i1 = sch.split(i, factors=[None, 16])\n"
                 "    sch.rfactor(i1)\n"
                 "    sch.reverse_compute_at(sch.get_block(\"sum\"), i0)\n",
                 MT_ERR_INVALID_ARG, "reverse_compute_at: loop 'i0_0' binds a reduce variable of block 'sum_rf'");
    /* the zeros of X moved into the loop that accumulates into X */
    expect_error("@T.prim_func\n"
                 "def f(A: T.Buffer((4, 8), \"float32\"), Y: T.Buffer((8,), \"float32\")):\n"
                 "    X = T.alloc_buffer((8,), \"float32\")\n"
                 "    for j in range(8):\n"
                 "        with T.block(\"z\"):\n"
                 "            vj = T.axis.spatial(8, j)\n"
                 "            X[vj] = T.float32(0)\n"
                 "    for i in range(4):\n"
                 "        for j in range(8):\n"
                 "            with T.block(\"acc\"):\n"
                 "                vi = T.axis.reduce(4, i)\n"
                 "                vj = T.axis.spatial(8, j)\n"
                 "                X[vj] = X[vj] + A[vi, vj]\n"
                 "        for j in range(8):\n"
                 "            with T.block(\"y\"):\n"
                 "                vj = T.axis.spatial(8, j)\n"
                 "                Y[vj] = X[vj]\n"
                 "\n@T.schedule(f)\ndef s(sch):\n"
                 "    i, j = sch.get_loops(sch.get_block(\"acc\"))\n"
                 "    sch.compute_at(sch.get_block(\"z\"), i)\n",
                 MT_ERR_INVALID_ARG, "22:9: error: compute_at: 'X' is touched by blocks 'acc' and 'y', and the regions of "
                                     "it that the iterations of loop 'i' (or of the loops around it) touch may overlap");
    expect_error("@T.prim_func\n"
                 "def f(A: T.Buffer((8,), \"float32\"), X: T.Buffer((8,), \"float32\")):\n"
                 "    for i, j in T.grid(4, 8):\n"
                 "        with T.block(\"p\"):\n"
                 "            vj = T.axis.spatial(8, j)\n"
                 "            X[vj] = A[vj] * T.float32(2)\n"
                 "    for j in range(8):\n"
                 "        with T.block(\"q\"):\n"
                 "            vj = T.axis.spatial(8, j)\n"
                 "            X[vj] = X[vj] + T.float32(1)\n"
                 "\n@T.schedule(f)\ndef s(sch):\n"
                 "    i, j = sch.get_loops(sch.get_block(\"p\"))\n"
                 "    sch.reverse_compute_at(sch.get_block(\"q\"), i)\n",
                 MT_ERR_INVALID_ARG, "reverse_compute_at: block 'q' updates 'X' in place, and the regions of it");
}

/* Loop function src, scheduled by sched, for target cuda (the CUDA C
 * only: no GPU needed). */
static mt_kernel *cuda_compile(const char *src, const char *sched, mt_diag *d) {
    char text[2048];
    snprintf(text, sizeof text, "%s@T.schedule(f)\ndef s(sch):\n%s", src, sched);
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    return mt_jit_compile(test_ctx, text, &o, d);
}

/* (review) one thread tag over phases of different extents: a copy into
 * shared memory over 8 threads, the compute over 48: the launch takes the
 * widest and guards the copy (it took the first, 8, and code generation
 * failed with an internal error). CUDA C only: no GPU needed. */
static void test_gpu_bind_widest_phase(void **state) {
    (void)state;
    static const char src[] =
        "@T.prim_func\n"
        "def f(A: T.Buffer((24, 48), \"float32\"), B: T.Buffer((48, 48), \"float32\"), C: T.Buffer((24, 48), \"float32\")):\n"
        "    for i, j, k in T.grid(24, 48, 48):\n"
        "        with T.block(\"C\"):\n"
        "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
        "            with T.init():\n"
        "                C[vi, vj] = T.float32(0)\n"
        "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";
    mt_diag d;
    mt_kernel *k = cuda_compile(src,
                                "    c = sch.get_block(\"C\")\n"
                                "    i, j, k = sch.get_loops(c)\n"
                                "    i0, i1 = sch.split(i, factors=[None, 4])\n"
                                "    k0, k1 = sch.split(k, factors=[None, 8])\n"
                                "    sch.reorder(i0, k0, i1, j, k1)\n"
                                "    sa = sch.cache_read(c, 0, \"shared\")\n"
                                "    sch.compute_at(sa, k0)\n"
                                "    _, _, a0, a1 = sch.get_loops(sa)\n"
                                "    sch.bind(i0, \"blockIdx.x\")\n"
                                "    sch.bind(i1, \"threadIdx.y\")\n"
                                "    sch.bind(j, \"threadIdx.x\")\n"
                                "    sch.bind(a0, \"threadIdx.y\")\n"
                                "    sch.bind(a1, \"threadIdx.x\")\n",
                                &d);
    if (!k) fail_msg("%s", d.text);
    const char *cu = mt_kernel_dump(k, MT_STAGE_CUDA);
    if (!strstr(cu, "__launch_bounds__(192)") || !strstr(cu, "< 8)")) fail_msg("unexpected:\n%s", cu);
    mt_kernel_release(k);
    /* the widest of each tag multiplied past the target's 1024 threads
     * (x: 256 and 4, y: 4 and 64): refused at the bind that makes it so */
    static const char big[] =
        "@T.prim_func\n"
        "def f(A: T.Buffer((8, 128), \"float32\"), B: T.Buffer((128, 256), \"float32\"), C: T.Buffer((8, 256), \"float32\")):\n"
        "    for i, j, k in T.grid(8, 256, 128):\n"
        "        with T.block(\"C\"):\n"
        "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
        "            with T.init():\n"
        "                C[vi, vj] = T.float32(0)\n"
        "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";
    assert_null(cuda_compile(big,
                             "    c = sch.get_block(\"C\")\n"
                             "    i, j, k = sch.get_loops(c)\n"
                             "    i0, i1 = sch.split(i, factors=[None, 4])\n"
                             "    k0, k1 = sch.split(k, factors=[None, 64])\n"
                             "    sch.reorder(i0, k0, i1, j, k1)\n"
                             "    sa = sch.cache_read(c, 0, \"shared\")\n"
                             "    sch.compute_at(sa, k0)\n"
                             "    _, _, a0, a1 = sch.get_loops(sa)\n"
                             "    sch.bind(i0, \"blockIdx.x\")\n"
                             "    sch.bind(i1, \"threadIdx.y\")\n"
                             "    sch.bind(j, \"threadIdx.x\")\n"
                             "    sch.bind(a0, \"threadIdx.x\")\n"
                             "    sch.bind(a1, \"threadIdx.y\")\n",
                             &d));
    if (!strstr(d.text, "23:9: error: bind: the kernel's blocks would have 256 x 64 x 1 threads"))
        fail_msg("unexpected:\n%s", d.text);
}

/* A loop function scheduled with bind(i, t0), bind(j, t1) for target cuda. */
static mt_kernel *bound_for_cuda(const char *t0, const char *t1, mt_diag *d) {
    char sched[512];
    snprintf(sched, sizeof sched, "    i, j = sch.get_loops(sch.get_block(\"c\"))\n%s%s",
             t0 ? (t0[0] == 'b' ? "    sch.bind(i, \"blockIdx.x\")\n" : "    sch.bind(i, \"threadIdx.x\")\n") : "",
             t1 ? (t1[0] == 'b' ? "    sch.bind(j, \"blockIdx.x\")\n" : "    sch.bind(j, \"threadIdx.x\")\n") : "");
    return cuda_compile("@T.prim_func\n"
                        "def f(A: T.Buffer((8, 16), \"float32\"), C: T.Buffer((8, 16), \"float32\")):\n"
                        "    for i, j in T.grid(8, 16):\n"
                        "        with T.block(\"c\"):\n"
                        "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
                        "            C[vi, vj] = A[vi, vj] * T.float32(3)\n",
                        sched, d);
}

/* bind's nesting rules: a block index inside a thread index, or one tag
 * twice on a path, is refused at the bind; thread indices with no block
 * index around them are one block (they were an internal error). */
static void test_gpu_bind_nesting(void **state) {
    (void)state;
    mt_diag d;
    mt_kernel *k = bound_for_cuda(NULL, "t", &d);
    if (!k) fail_msg("%s", d.text);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_CUDA), "grid=(1, 1, 1) block=(16, 1, 1)"));
    mt_kernel_release(k);
    assert_null(bound_for_cuda("t", "b", &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    assert_non_null(strstr(d.text, "a block index cannot be inside a thread index"));
    assert_null(bound_for_cuda("t", "t", &d));
    assert_non_null(strstr(d.text, "which is bound to threadIdx.x already"));
    k = bound_for_cuda("b", "t", &d);
    if (!k) fail_msg("%s", d.text);
    mt_kernel_release(k);
    /* loops bound in the source, a block between them: the GPU fallback
     * leaves them as written (it wrapped them in a block of one thread,
     * and the CUDA C printer stopped on the 32-thread loop inside) */
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    k = mt_jit_compile(test_ctx,
                       "@T.prim_func\n"
                       "def f(A: T.Buffer((256,), \"float32\"), B: T.Buffer((256,), \"float32\")):\n"
                       "    for bx in T.thread_binding(8, thread=\"blockIdx.x\"):\n"
                       "        with T.block(\"blk\"):\n"
                       "            vb = T.axis.spatial(8, bx)\n"
                       "            for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
                       "                B[vb * 32 + tx] = A[vb * 32 + tx]\n",
                       &o, &d);
    if (!k) fail_msg("%s", d.text);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_CUDA), "grid=(8, 1, 1) block=(32, 1, 1)"));
    mt_kernel_release(k);
}

/* parallel reads a let's variable in an index as its value: `base = vi *
 * 4; X[base + vj]` splits X among the iterations of i (it was refused as an
 * index it could not read); `base = vi // 2` does not (two iterations store
 * X[base + vj]) and is refused. */
static void test_parallel_let(void **state) {
    (void)state;
    skip_unless_cpu();
    static const char *const src =
        "@T.prim_func\n"
        "def f(A: T.Buffer((64,), \"float32\"), X: T.Buffer((64,), \"float32\")):\n"
        "    for i, j in T.grid(16, 4):\n"
        "        with T.block(\"a\"):\n"
        "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
        "            base = vi %s\n"
        "            X[base + vj] = A[base + vj] * T.float32(2)\n"
        "\n"
        "@T.schedule(f)\n"
        "def s(sch):\n"
        "    i, j = sch.get_loops(sch.get_block(\"a\"))\n"
        "    sch.parallel(i)\n";
    char buf[1024];
    snprintf(buf, sizeof buf, src, "* 4");
    mt_kernel *k = compile_ok(buf);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "T.launch("));
    int64_t n = 64;
    mt_tensor *a = tensor_f32(1, &n, 1);
    mt_tensor *x = run1(k, &a, 1);
    for (int i = 0; i < 64; i++) assert_true(F(x)[i] == 2 * F(a)[i]);
    mt_tensor_release(x);
    mt_tensor_release(a);
    mt_kernel_release(k);
    snprintf(buf, sizeof buf, src, "// 2");
    mt_diag d = compile_err(buf);
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    if (!strstr(d.text, "12:9: error: parallel: iterations of loop 'i' may touch the same elements of 'X'"))
        fail_msg("got: %s", d.text);
}

/* bind, like parallel, refuses a loop whose iterations may touch the same
 * elements (they run at once on the GPU): two iterations storing one
 * element, one iteration reading what the next writes, and (at the
 * compute_at that makes it) a producer moved under the bound loop later. */
static void test_gpu_bind_race(void **state) {
    (void)state;
    mt_diag d;
    static const char *const halves =
        "@T.prim_func\n"
        "def f(A: T.Buffer((16,), \"float32\"), C: T.Buffer((8,), \"float32\")):\n"
        "    for i in range(16):\n"
        "        with T.block(\"c\"):\n"
        "            vi = T.axis.spatial(16, i)\n"
        "            C[vi // 2] = A[vi]\n";
    assert_null(cuda_compile(halves, "    i, = sch.get_loops(sch.get_block(\"c\"))\n    sch.bind(i, \"threadIdx.x\")\n", &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    assert_non_null(strstr(d.text, "bind: iterations of loop 'i' may touch the same elements of 'C' (written by block 'c')"));
    static const char *const shifted =
        "@T.prim_func\n"
        "def f(A: T.Buffer((17,), \"float32\"), C: T.Buffer((16,), \"float32\")):\n"
        "    X = T.alloc_buffer((17,), \"float32\")\n"
        "    for i in range(16):\n"
        "        with T.block(\"x\"):\n"
        "            vi = T.axis.spatial(16, i)\n"
        "            X[vi] = A[vi] * T.float32(2)\n"
        "        with T.block(\"c\"):\n"
        "            vi = T.axis.spatial(16, i)\n"
        "            C[vi] = X[vi + 1]\n";
    assert_null(cuda_compile(shifted, "    i, = sch.get_loops(sch.get_block(\"c\"))\n    sch.bind(i, \"blockIdx.x\")\n", &d));
    assert_non_null(strstr(d.text, "bind: iterations of loop 'i' may touch the same elements of 'X'"));
    /* bound first, then a producer moved under the bound loop: its
     * neighbouring threads would compute X[i + j] at once */
    static const char *const stencil =
        "@T.prim_func\n"
        "def f(B: T.Buffer((80, 20), \"float32\"), Y: T.Buffer((64, 16), \"float32\")):\n"
        "    X = T.alloc_buffer((80,), \"float32\")\n"
        "    for j, k in T.grid(80, 20):\n"
        "        with T.block(\"p\"):\n"
        "            vj, vk = T.axis.remap(\"SR\", [j, k])\n"
        "            with T.init():\n"
        "                X[vj] = T.float32(0)\n"
        "            X[vj] = X[vj] + B[vj, vk]\n"
        "    for i, j in T.grid(64, 16):\n"
        "        with T.block(\"c\"):\n"
        "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
        "            Y[vi, vj] = X[vi + vj]\n";
    assert_null(cuda_compile(stencil, "    i, j = sch.get_loops(sch.get_block(\"c\"))\n    sch.bind(i, \"threadIdx.x\")\n"
                                      "    sch.compute_at(sch.get_block(\"p\"), j)\n", &d));
    assert_non_null(strstr(d.text, "compute_at (loop 'i' is threadIdx.x): iterations of loop 'i' may touch the same "
                                   "elements of 'X'"));
    /* (review) two phases of one thread variable over other ranges: block l's
     * second phase writes X[l * 4 + 4 ..], block l + 1's first the same */
    static const char *const phases =
        "@T.prim_func\n"
        "def f(A: T.Buffer((20,), \"float32\"), X: T.Buffer((20,), \"float32\")):\n"
        "    for l in range(4):\n"
        "        for tx in T.thread_binding(0, 4, thread=\"threadIdx.x\"):\n"
        "            with T.block(\"a\"):\n"
        "                vl = T.axis.spatial(4, l)\n"
        "                vt = T.axis.spatial(8, tx)\n"
        "                X[vl * 4 + vt] = A[vl * 4 + vt]\n"
        "        for tx in T.thread_binding(4, 8, thread=\"threadIdx.x\"):\n"
        "            with T.block(\"b\"):\n"
        "                vl = T.axis.spatial(4, l)\n"
        "                vt = T.axis.spatial(8, tx)\n"
        "                X[vl * 4 + vt] = A[vl * 4 + vt] + T.float32(1)\n";
    assert_null(cuda_compile(phases, "    l = sch.get_loops(sch.get_block(\"a\"))[0]\n    sch.bind(l, \"blockIdx.x\")\n", &d));
    assert_non_null(strstr(d.text, "bind: iterations of loop 'l' may touch the same elements of 'X'"));
    /* (review) a shared buffer allocated under the thread loop is one for
     * all the block's threads */
    static const char *const shared =
        "@T.prim_func\n"
        "def f(A: T.Buffer((128,), \"float32\"), X: T.Buffer((128,), \"float32\")):\n"
        "    for b in range(4):\n"
        "        for t in range(32):\n"
        "            s = T.alloc_buffer((1,), \"float32\", scope=\"shared\")\n"
        "            with T.block(\"a\"):\n"
        "                vb = T.axis.spatial(4, b)\n"
        "                vt = T.axis.spatial(32, t)\n"
        "                s[0] = A[vb * 32 + vt]\n"
        "                X[vb * 32 + vt] = s[0] * T.float32(2)\n";
    assert_null(cuda_compile(shared, "    b, t = sch.get_loops(sch.get_block(\"a\"))\n    sch.bind(b, \"blockIdx.x\")\n"
                                     "    sch.bind(t, \"threadIdx.x\")\n", &d));
    assert_non_null(strstr(d.text, "bind: iterations of loop 't' may touch the same elements of 's'"));
    /* a bound loop keeps its place (reorder would put threadIdx outside blockIdx) */
    static const char *const plain =
        "@T.prim_func\n"
        "def f(A: T.Buffer((64, 32), \"float32\"), C: T.Buffer((64, 32), \"float32\")):\n"
        "    for i, j in T.grid(64, 32):\n"
        "        with T.block(\"a\"):\n"
        "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
        "            C[vi, vj] = A[vi, vj] + T.float32(1)\n";
    assert_null(cuda_compile(plain, "    i, j = sch.get_loops(sch.get_block(\"a\"))\n    sch.bind(i, \"blockIdx.x\")\n"
                                    "    sch.bind(j, \"threadIdx.x\")\n    sch.reorder(j, i)\n", &d));
    assert_non_null(strstr(d.text, "reorder: loop 'i' is bound to blockIdx.x: a bound loop keeps its place"));
    /* split in pairs, each iteration of the outer loop stores its own element: bound */
    mt_kernel *k = cuda_compile(halves, "    i, = sch.get_loops(sch.get_block(\"c\"))\n    i0, i1 = sch.split(i, factors=[None, 2])\n"
                             "    sch.bind(i0, \"threadIdx.x\")\n", &d);
    if (!k) fail_msg("%s", d.text);
    mt_kernel_release(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_schedule),     cmocka_unit_test(test_default_rule_named),
        cmocka_unit_test(test_round_trip),          cmocka_unit_test(test_compiler_made_kernel),
        cmocka_unit_test(test_rfactor),             cmocka_unit_test(test_split_tail_tiles),
        cmocka_unit_test(test_compute_at_split_columns),
        cmocka_unit_test(test_compute_at_split_tails),
        cmocka_unit_test(test_compute_at_stencil),
        cmocka_unit_test(test_taken_names),             cmocka_unit_test(test_taken_buffer_names),
        cmocka_unit_test(test_get_block_func_name),     cmocka_unit_test(test_compute_inline_at),
        cmocka_unit_test(test_cache_and_reverse),   cmocka_unit_test(test_errors),
        cmocka_unit_test(test_c_api),               cmocka_unit_test(test_c_api_blocks),
        cmocka_unit_test(test_precedence_over_log), cmocka_unit_test(test_names_by_def),
        cmocka_unit_test(test_default_rule_traces),               cmocka_unit_test(test_gpu_bind),
        cmocka_unit_test(test_gpu_bind_nesting),   cmocka_unit_test(test_gpu_bind_race),
        cmocka_unit_test(test_parallel_let),
        cmocka_unit_test(test_reversed_reduce_init),
        cmocka_unit_test(test_reduce_lanes),
        cmocka_unit_test(test_gpu_bind_widest_phase),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
