/*
 * test_matmul_prims.c -- the matmul rule's packed schedule as a trace of
 * primitives (src/schedule/rule_matmul_prims.c), through the public API.
 *
 * Which form: a plain a @ b whose constant shape is whole tiles and blocks
 * with more than 128 rows takes the primitives (the "schedule" dump is
 * split / reorder / cache_read / ... steps, the K blocks' init under `if
 * k0 == 0`), and so does an elementwise epilogue with K one block (moved
 * under each register tile); few rows, a row tail, a column tail, an
 * epilogue after K blocks or with long math (gelu), or the knob
 * primitives=0 take the lowered form (one apply_rule step). Numerics of each against C
 * loops in double (|got - want| <= 1e-5 (float32) or 1e-13 (float64) of
 * the sum of |a_ik b_kj|: every element sums k in order with fused
 * multiply-adds, whichever form). The printed schedule, pasted back,
 * gives the same code; knobs (mr, nc, kc, parallel) change the trace's
 * factors and keep the values.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static const char *src_of(char *buf, size_t cap, const char *dt, int m, int k, int n, const char *extra) {
    snprintf(buf, cap,
             "def mm(a: Tensor((%d, %d), \"%s\"), b: Tensor((%d, %d), \"%s\")):\n"
             "    return a @ b\n%s",
             m, k, dt, k, n, dt, extra);
    return buf;
}

static const char *src_tr(char *buf, size_t cap, const char *dt, int m, int k, int n) {
    snprintf(buf, cap,
             "def mm(a: Tensor((%d, %d), \"%s\"), bt: Tensor((%d, %d), \"%s\")):\n"
             "    return a @ bt.T\n",
             m, k, dt, n, k, dt);
    return buf;
}

static double val(int64_t i, unsigned seed) { return (double)((i * 7919 + seed * 104729) % 1000) / 250.0 - 2.0; }

static mt_tensor *input(mt_dtype dt, int64_t r, int64_t c, unsigned seed) {
    int64_t sh[2] = {r, c};
    mt_tensor *t = mt_tensor_create(dt, 2, sh);
    assert_non_null(t);
    for (int64_t i = 0; i < r * c; i++) {
        if (dt == MT_FLOAT64) ((double *)mt_tensor_data(t))[i] = val(i, seed);
        else ((float *)mt_tensor_data(t))[i] = (float)val(i, seed);
    }
    return t;
}

/* b given as its transpose bt (n x kk), for a @ bt.T: the same values. */
static mt_tensor *input_tr(mt_dtype dt, int64_t kk, int64_t n, unsigned seed) {
    int64_t sh[2] = {n, kk};
    mt_tensor *t = mt_tensor_create(dt, 2, sh);
    assert_non_null(t);
    for (int64_t j = 0; j < n; j++)
        for (int64_t q = 0; q < kk; q++) {
            if (dt == MT_FLOAT64) ((double *)mt_tensor_data(t))[j * kk + q] = val(q * n + j, seed);
            else ((float *)mt_tensor_data(t))[j * kk + q] = (float)val(q * n + j, seed);
        }
    return t;
}

/* k computes a @ b (m x kk by kk x n; tr: a @ bt.T, bt n x kk), checked
 * at every element. */
static void check_as(mt_kernel *kn, mt_dtype dt, int m, int kk, int n, bool tr, const char *what) {
    mt_tensor *args[2] = {input(dt, m, kk, 1), tr ? input_tr(dt, kk, n, 2) : input(dt, kk, n, 2)}, *out = NULL;
    mt_diag d;
    if (test_kernel_run(kn, args, 2, &out, 1, &d) != MT_OK) fail_msg("%s: run failed:\n%s", what, d.text);
    double tol = dt == MT_FLOAT64 ? 1e-13 : 1e-5;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double want = 0, mag = 0;
            for (int q = 0; q < kk; q++) {
                double p = val((int64_t)i * kk + q, 1) * val((int64_t)q * n + j, 2);
                if (dt == MT_FLOAT32) p = (double)(float)val((int64_t)i * kk + q, 1) * (float)val((int64_t)q * n + j, 2);
                want += p, mag += fabs(p);
            }
            int64_t at = (int64_t)i * n + j;
            double got = dt == MT_FLOAT64 ? ((double *)mt_tensor_data(out))[at] : ((float *)mt_tensor_data(out))[at];
            if (!(fabs(got - want) <= tol * mag + 1e-30))
                fail_msg("%s [%d, %d]: got %.17g, want %.17g", what, i, j, got, want);
        }
    mt_tensor_release(args[0]);
    mt_tensor_release(args[1]);
    mt_tensor_release(out);
}

static void check(mt_kernel *kn, mt_dtype dt, int m, int kk, int n, const char *what) {
    check_as(kn, dt, m, kk, n, false, what);
}

static bool primitives(mt_kernel *kn) { return strstr(mt_kernel_dump(kn, MT_STAGE_SCHEDULE), "sch.decompose_reduction(") != NULL; }

/* Whole column blocks: the primitives, float32 and float64 (8 lanes a
 * vector: panels of 16), K whole or in blocks (K > 2 x 512; 1100 = 2 x
 * 512 and a last block of 76), the rows whole tiles or with a tail of 1
 * to 7 rows (the split's last tile, peeled), N in column blocks of whole
 * tiles that divide it. The copy of B is one K block deep
 * (compact_buffers), also when the last block is shorter. */
static void test_primitive_shapes(void **st) {
    (void)st;
    if (test_gpu_target()) skip();
    static const struct { const char *dt; int m, k, n; bool kblocks, tr; } c[] = {
        {"float32", 144, 64, 96, false, false}, {"float32", 288, 256, 256, false, false},
        {"float32", 144, 1536, 64, true, false}, {"float64", 144, 64, 48, false, false},
        {"float64", 144, 1536, 32, true, false}, {"float32", 145, 64, 96, false, false},
        {"float32", 151, 256, 256, false, false}, {"float32", 149, 1536, 64, true, false},
        {"float64", 147, 64, 48, false, false}, {"float32", 144, 1100, 64, true, false},
        {"float64", 149, 1100, 48, true, false},
        {"float32", 144, 2048, 768, true, false}, /* N = 768 > the block nc = 512: two blocks of 384 (even_blocks) */
        /* a @ bt.T: bt's block copied in squares of vl x vl (transpose_tiles) */
        {"float32", 144, 64, 96, false, true}, {"float32", 151, 1100, 64, true, true},
        {"float64", 145, 64, 48, false, true}, {"float32", 144, 40, 64, false, true}, /* K = 40: a partial square */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char src[512], what[96];
        snprintf(what, sizeof what, "%s %d x %d x %d%s", c[i].dt, c[i].m, c[i].k, c[i].n, c[i].tr ? " (b.T)" : "");
        mt_kernel *kn = compile_ok(c[i].tr ? src_tr(src, sizeof src, c[i].dt, c[i].m, c[i].k, c[i].n)
                                           : src_of(src, sizeof src, c[i].dt, c[i].m, c[i].k, c[i].n, ""));
        const char *sch = mt_kernel_dump(kn, MT_STAGE_SCHEDULE), *tir = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED);
        if (!primitives(kn) || strstr(sch, "apply_rule") || !strstr(sch, "sch.transform_layout("))
            fail_msg("%s: expected the packed schedule as primitives:\n%s", what, sch);
        /* the K blocks start from zero at the first block only */
        if (c[i].kblocks != (strstr(tir, "== 0:") != NULL)) fail_msg("%s: the init of the K blocks:\n%s", what, tir);
        const char *pack = strstr(tir, "_global = T.alloc_buffer((");
        if (c[i].kblocks && (!pack || atol(strchr(pack, '(') + 2) > 512 * c[i].n))
            fail_msg("%s: the copy of B is not one K block:\n%s", what, tir);
        if (c[i].tr && c[i].k % 16 == 0 && !strstr(tir, "T.Shuffle("))
            fail_msg("%s: the copy of bt is not transposed in registers:\n%s", what, tir);
        check_as(kn, strcmp(c[i].dt, "float64") == 0 ? MT_FLOAT64 : MT_FLOAT32, c[i].m, c[i].k, c[i].n, c[i].tr, what);
        /* the printed schedule, pasted back, gives the same code */
        char again[16384];
        snprintf(again, sizeof again, "%s\n%s", src, strchr(sch, '\n') + 1);
        mt_kernel *k2 = compile_ok(again);
        assert_string_equal(mt_kernel_dump(k2, MT_STAGE_TIR_SCHED), tir);
        mt_kernel_release(k2);
        mt_kernel_release(kn);
    }
}

/* What the primitives do not say exactly: the lowered form. */
static void test_lowered_shapes(void **st) {
    (void)st;
    if (test_gpu_target()) skip();
    static const struct { int m, k, n; const char *extra; } c[] = {
        {128, 64, 96, ""},                      /* few rows (up to 128): the copy of B decides */
        {144, 64, 100, ""},                     /* a column tail */
        {144, 1000, 64, ""},                    /* K in one block: whole tiles, the primitives */
        {144, 64, 96, "\n@T.schedule(\"matmul\")\ndef s(sch):\n    sch.apply_rule(\"schedule_matmul\", primitives=0)\n"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char src[512], what[96];
        snprintf(what, sizeof what, "%d x %d x %d%s", c[i].m, c[i].k, c[i].n, c[i].extra[0] ? " primitives=0" : "");
        mt_kernel *kn = compile_ok(src_of(src, sizeof src, "float32", c[i].m, c[i].k, c[i].n, c[i].extra));
        bool want = i == 2; /* K = 1000 is one block */
        if (primitives(kn) != want)
            fail_msg("%s: expected the %s form:\n%s", what, want ? "primitive" : "lowered",
                     mt_kernel_dump(kn, MT_STAGE_SCHEDULE));
        check(kn, MT_FLOAT32, c[i].m, c[i].k, c[i].n, what);
        mt_kernel_release(kn);
    }
}

/* An elementwise epilogue, K one block: the epilogue block moved under
 * each register tile (reverse_compute_at), after its k loop. Each case:
 * the source's expression, the extra parameter r (NULL: none; "row": n
 * values, "full": m x n), the dtype, the shape, and which form. */
typedef struct epi_case {
    const char *expr, *r, *dt;
    int m, k, n;
    bool prims;
    bool tr; /* the source's b is bt (n x k), the expression reads bt.T */
} epi_case;

static double epi_ref(const epi_case *c, double s, int i, int j) {
    double r = !c->r ? 0 : strcmp(c->r, "row") == 0 ? val(j, 3) : val((int64_t)i * c->n + j, 3);
    if (c->dt[5] == '3') r = (float)r;
    if (strstr(c->expr, "gelu")) return 0.5 * s * (1 + erf(s / sqrt(2.0)));
    if (strstr(c->expr, "relu")) return s + r > 0 ? s + r : 0;
    return s * 2.0 + r; /* (a @ b) * 2.0 + r */
}

static void check_epi(mt_kernel *kn, const epi_case *c, const char *what) {
    mt_dtype dt = c->dt[5] == '6' ? MT_FLOAT64 : MT_FLOAT32;
    bool row = c->r && strcmp(c->r, "row") == 0;
    mt_tensor *args[3] = {input(dt, c->m, c->k, 1), c->tr ? input_tr(dt, c->k, c->n, 2) : input(dt, c->k, c->n, 2), NULL};
    mt_tensor *out = NULL;
    if (c->r) args[2] = row ? input(dt, 1, c->n, 3) : input(dt, c->m, c->n, 3);
    if (row) { /* a vector of n */
        int64_t sh[1] = {c->n};
        mt_tensor *v = mt_tensor_create(dt, 1, sh);
        memcpy(mt_tensor_data(v), mt_tensor_data(args[2]), (size_t)c->n * mt_dtype_size(dt));
        mt_tensor_release(args[2]);
        args[2] = v;
    }
    mt_diag d;
    if (test_kernel_run(kn, args, c->r ? 3 : 2, &out, 1, &d) != MT_OK) fail_msg("%s: run failed:\n%s", what, d.text);
    double tol = dt == MT_FLOAT64 ? 1e-13 : 1e-5;
    for (int i = 0; i < c->m; i++)
        for (int j = 0; j < c->n; j++) {
            double sum = 0, mag = 0;
            for (int q = 0; q < c->k; q++) {
                double a = val((int64_t)i * c->k + q, 1), b = val((int64_t)q * c->n + j, 2);
                double p = dt == MT_FLOAT32 ? (double)(float)a * (float)b : a * b;
                sum += p, mag += fabs(p);
            }
            double want = epi_ref(c, sum, i, j), r = c->r ? fabs(epi_ref(c, 0, i, j)) : 0;
            int64_t at = (int64_t)i * c->n + j;
            double got = dt == MT_FLOAT64 ? ((double *)mt_tensor_data(out))[at] : ((float *)mt_tensor_data(out))[at];
            if (!(fabs(got - want) <= tol * (2 * mag + r) + 1e-30))
                fail_msg("%s [%d, %d]: got %.17g, want %.17g", what, i, j, got, want);
        }
    for (int i = 0; i < 3; i++) mt_tensor_release(args[i]);
    mt_tensor_release(out);
}

static void test_epilogues(void **st) {
    (void)st;
    if (test_gpu_target()) skip();
    static const epi_case c[] = {
        {"relu(a @ b + r)", "row", "float32", 144, 64, 96, true},
        {"relu(a @ b + r)", "row", "float32", 288, 256, 256, true},
        {"(a @ b) * 2.0 + r", "full", "float64", 144, 64, 48, true},
        {"relu(a @ b)", NULL, "float32", 144, 1000, 64, true},   /* K = 1000: one block */
        {"relu(a @ b + r)", "row", "float32", 144, 1536, 64, false}, /* K blocks: the epilogue at the last one */
        {"gelu(a @ b)", NULL, "float32", 144, 64, 96, false},    /* long math: one copy, in a loop */
        {"relu(a @ b + r)", "row", "float32", 145, 64, 96, true},    /* a row tail */
        {"(a @ b) * 2.0 + r", "full", "float32", 151, 256, 64, true}, /* a tail of 7 rows */
        {"relu(a @ bt.T + r)", "row", "float32", 147, 128, 96, true, true}, /* a linear layer */
        {"(a @ bt.T) * 2.0 + r", "full", "float64", 144, 64, 48, true, true},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char src[1024], r[96] = "", what[128];
        if (c[i].r && strcmp(c[i].r, "full") == 0) snprintf(r, sizeof r, ", r: Tensor((%d, %d), \"%s\")", c[i].m, c[i].n, c[i].dt);
        else if (c[i].r) snprintf(r, sizeof r, ", r: Tensor((%d,), \"%s\")", c[i].n, c[i].dt);
        snprintf(src, sizeof src, "def mm(a: Tensor((%d, %d), \"%s\"), %s: Tensor((%d, %d), \"%s\")%s):\n    return %s\n",
                 c[i].m, c[i].k, c[i].dt, c[i].tr ? "bt" : "b", c[i].tr ? c[i].n : c[i].k, c[i].tr ? c[i].k : c[i].n,
                 c[i].dt, r, c[i].expr);
        snprintf(what, sizeof what, "%s %s %d x %d x %d", c[i].expr, c[i].dt, c[i].m, c[i].k, c[i].n);
        mt_kernel *kn = compile_ok(src);
        const char *sch = mt_kernel_dump(kn, MT_STAGE_SCHEDULE);
        if (primitives(kn) != c[i].prims || (c[i].prims && !strstr(sch, "sch.reverse_compute_at(")))
            fail_msg("%s: expected the %s form:\n%s", what, c[i].prims ? "primitive" : "lowered", sch);
        /* the tile of C a buffer of the tile's size (at most 16 x 64), not the matmul's */
        const char *tile = strstr(mt_kernel_dump(kn, MT_STAGE_TIR_SCHED), c[i].tr ? "lv1 = T.alloc_buffer(("
                                                                                   : "lv = T.alloc_buffer((");
        if (c[i].prims && (!tile || atol(strchr(tile, '(') + 2) > 16 * 64))
            fail_msg("%s: no tile of C:\n%s", what, mt_kernel_dump(kn, MT_STAGE_TIR_SCHED));
        check_epi(kn, &c[i], what);
        if (c[i].prims) { /* the printed schedule replays */
            char again[8192];
            snprintf(again, sizeof again, "%s\n%s", src, strchr(sch, '\n') + 1);
            mt_kernel *k2 = compile_ok(again);
            assert_string_equal(mt_kernel_dump(k2, MT_STAGE_TIR_SCHED), mt_kernel_dump(kn, MT_STAGE_TIR_SCHED));
            mt_kernel_release(k2);
        }
        mt_kernel_release(kn);
    }
}

/* The printed schedule pasted back gives the same code; so do knobs. */
static void test_replay_and_knobs(void **st) {
    (void)st;
    if (test_gpu_target()) skip();
    char src[4096];
    mt_kernel *kn = compile_ok(src_of(src, sizeof src, "float32", 144, 1536, 64, ""));
    const char *how = strchr(mt_kernel_dump(kn, MT_STAGE_SCHEDULE), '\n') + 1; /* past "# matmul: ..." */
    char *again = malloc(strlen(src) + strlen(how) + 2);
    sprintf(again, "%s\n%s", src, how);
    mt_kernel *k2 = compile_ok(again);
    assert_string_equal(mt_kernel_dump(k2, MT_STAGE_TIR_SCHED), mt_kernel_dump(kn, MT_STAGE_TIR_SCHED));
    free(again);
    mt_kernel_release(k2);
    mt_kernel_release(kn);
    /* knobs keep the primitive form (its buffer b_global, not the lowered
     * form's B_pack) with their factors; parallel=0 runs on one thread */
    static const char *const knobs[] = {"mr=4", "nc=32", "kc=256", "parallel=0"};
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
        char extra[256];
        snprintf(extra, sizeof extra, "\n@T.schedule(\"matmul\")\ndef s(sch):\n    sch.apply_rule(\"schedule_matmul\", %s)\n",
                 knobs[i]);
        kn = compile_ok(src_of(src, sizeof src, "float32", 144, 1536, 64, extra));
        const char *tir = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED);
        if (!strstr(tir, "b_global") || (i == 3 && strstr(tir, "T.launch(")))
            fail_msg("%s: expected the primitive form:\n%s", knobs[i], tir);
        check(kn, MT_FLOAT32, 144, 1536, 64, knobs[i]);
        mt_kernel_release(kn);
    }
}

/* A loop function whose epilogue runs its loops (j, i): the lowered form
 * (the primitives vectorize the inner loop of the epilogue, which must be
 * the columns), and the same values as plain loops. */
static void test_epilogue_columns_outer(void **st) {
    (void)st;
    if (test_gpu_target()) skip();
    static const char src[] =
        "@T.prim_func\n"
        "def mm(A: T.Buffer((144, 64), \"float32\"), B: T.Buffer((64, 96), \"float32\"), R: T.Buffer((96, 144), \"float32\"),"
        " O: T.Buffer((144, 96), \"float32\")):\n"
        "    C = T.alloc_buffer((144, 96), \"float32\")\n"
        "    for i, k, j in T.grid(144, 64, 96):\n"
        "        with T.block(\"C\"):\n"
        "            vi, vk, vj = T.axis.remap(\"SRS\", [i, k, j])\n"
        "            with T.init():\n"
        "                C[vi, vj] = T.float32(0)\n"
        "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"
        "    for j, i in T.grid(96, 144):\n"
        "        with T.block(\"E\"):\n"
        "            vi = T.axis.spatial(144, i)\n"
        "            vj = T.axis.spatial(96, j)\n"
        "            O[vi, vj] = T.max(C[vi, vj], T.float32(0)) * R[vj, vi]\n\n"
        "@T.prim_func\n"
        "def ref(A: T.Buffer((144, 64), \"float32\"), B: T.Buffer((64, 96), \"float32\"), R: T.Buffer((96, 144), \"float32\"),"
        " O: T.Buffer((144, 96), \"float32\")):\n"
        "    for i in range(144):\n"
        "        for j in range(96):\n"
        "            O[i, j] = T.float32(0)\n"
        "            for k in range(64):\n"
        "                O[i, j] = O[i, j] + A[i, k] * B[k, j]\n"
        "            O[i, j] = T.max(O[i, j], T.float32(0)) * R[j, i]\n\n"
        "def main(a: Tensor((144, 64), \"float32\"), b: Tensor((64, 96), \"float32\"), r: Tensor((96, 144), \"float32\")):\n"
        "    return mm(a, b, r), ref(a, b, r)\n";
    mt_kernel *kn = compile_ok(src);
    const char *sch = mt_kernel_dump(kn, MT_STAGE_SCHEDULE);
    if (strstr(sch, "sch.reverse_compute_at(")) fail_msg("expected the lowered form for mm:\n%s", sch);
    mt_tensor *args[3] = {input(MT_FLOAT32, 144, 64, 1), input(MT_FLOAT32, 64, 96, 2), input(MT_FLOAT32, 96, 144, 3)};
    mt_tensor *outs[2] = {NULL, NULL};
    mt_diag d;
    if (test_kernel_run(kn, args, 3, outs, 2, &d) != MT_OK) fail_msg("run failed:\n%s", d.text);
    const float *got = mt_tensor_data(outs[0]), *want = mt_tensor_data(outs[1]);
    for (int i = 0; i < 144 * 96; i++)
        if (!(fabsf(got[i] - want[i]) <= 1e-4f * (1 + fabsf(want[i])))) fail_msg("[%d]: got %g, want %g", i, got[i], want[i]);
    for (int i = 0; i < 3; i++) mt_tensor_release(args[i]);
    for (int i = 0; i < 2; i++) mt_tensor_release(outs[i]);
    mt_kernel_release(kn);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_primitive_shapes),
        cmocka_unit_test(test_lowered_shapes),
        cmocka_unit_test(test_replay_and_knobs),
        cmocka_unit_test(test_epilogues),
        cmocka_unit_test(test_epilogue_columns_outer),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
