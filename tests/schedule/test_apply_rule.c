/*
 * test_apply_rule.c -- `sch.apply_rule(rule, knob=value, ...)` and
 * mt_schedule_apply_rule (src/schedule/user_rule.c): the default rules
 * that write lowered loops (matmul with its GEMV schedules, row
 * reductions) printed by `--emit schedule` as that step with the values
 * they chose; pasted back it gives the same code; an edited knob changes
 * the code and not the numbers; refusals name the rule or the knob.
 *
 * Numerics: an edited knob reorders the matmul's sums (other tiles, other
 * K blocks), so results are compared with the default's within
 * 4 K u max|a||b| (u = 2^-24); the softmax within 4 N u.
 */
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

#define skip_unless_cpu()                                                              \
    do {                                                                               \
        if (test_gpu_target()) {                                                       \
            print_message("skipped under target cuda: the knob rules are the CPU's\n"); \
            skip();                                                                    \
        }                                                                              \
    } while (0)

static const char mm_src[] = "def mm(a: Tensor((100, 300), \"float32\"), b: Tensor((300, 200), \"float32\")):\n"
                             "    return relu(a @ b)\n";

/* src followed by the "as a schedule" texts of its schedule dump. */
static char *with_printed_schedules(const char *src, mt_kernel *k, int *n) {
    const char *how = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
    size_t cap = strlen(src) + strlen(how) + 8;
    char *out = malloc(cap);
    snprintf(out, cap, "%s\n", src);
    *n = 0;
    for (const char *p = how; (p = strstr(p, ", as a schedule:\n")); ++*n) {
        p += strlen(", as a schedule:\n");
        const char *end = strstr(p, "\n# ");
        strncat(out, p, end ? (size_t)(end - p + 1) : strlen(p));
    }
    return out;
}

/* text without its "knobs": "..." attribute (apply_rule's function shows
 * the knobs it was given; the default rule's shows none). */
static char *without_knobs(const char *text) {
    char *out = strdup(text), *p;
    while ((p = strstr(out, "\"knobs\": \""))) {
        char *q = strchr(p + 10, '"');
        q = q ? q + 1 : p + strlen(p);
        if (!strncmp(q, ", ", 2)) q += 2;
        memmove(p, q, strlen(q) + 1);
    }
    return out;
}

/* The printed schedule of src names rule and, pasted back, gives the same
 * scheduled TIR. */
static void replays_opts(const char *src, const char *rule, const mt_compile_options *o) {
    mt_kernel *k = compile_ok_opts(src, o);
    const char *how = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
    char want[128];
    snprintf(want, sizeof want, "    sch.apply_rule(\"%s\"", rule);
    if (!strstr(how, want)) fail_msg("no %s in the schedule dump:\n%s", want, how);
    int n;
    char *again = with_printed_schedules(src, k, &n);
    mt_kernel *k2 = compile_ok_opts(again, o);
    assert_non_null(strstr(mt_kernel_dump(k2, MT_STAGE_SCHEDULE), "the source's schedule"));
    char *x = without_knobs(mt_kernel_dump(k, MT_STAGE_TIR_SCHED)), *y = without_knobs(mt_kernel_dump(k2, MT_STAGE_TIR_SCHED));
    if (strcmp(x, y) != 0) fail_msg("the replayed schedule gives other code:\n%s\n--- default:\n%s\n--- replayed:\n%s", again, x, y);
    free(x), free(y), free(again);
    mt_kernel_release(k2);
    mt_kernel_release(k);
}

static void replays(const char *src, const char *rule) { replays_opts(src, rule, NULL); }

static mt_compile_options emulated(void) {
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    o.emulate = 1;
    return o;
}

static void test_replay(void **state) {
    (void)state;
    skip_unless_cpu();
    replays(mm_src, "schedule_matmul");
    /* few rows: the GEMV schedule's knobs; symbolic rows: both schedules */
    replays("def f(x: Tensor((2, 512), \"float32\"), w: Tensor((512, 1024), \"float32\")):\n    return x @ w\n",
            "schedule_matmul");
    replays("def f(x: Tensor((\"n\", 64), \"float32\"), w: Tensor((64, 96), \"float32\")):\n    return x @ w\n",
            "schedule_matmul");
    replays("def f(x: Tensor((64, 1000), \"float32\")):\n    return softmax(x, axis=-1)\n", "schedule_reduce");
    replays("def f(x: Tensor((33, 7), \"float64\")):\n    return log_softmax(x, axis=-1)\n", "schedule_reduce");
    /* argmax: the vector scan and, for short rows, the serial one */
    replays("def f(x: Tensor((64, 1000), \"float32\")):\n    return argmax(x, axis=-1)\n", "schedule_reduce");
    replays("def f(x: Tensor((64, 10), \"float64\")):\n    return argmin(x, axis=-1)\n", "schedule_reduce");
    /* conv2d: the direct rule (3x3, padding) and a 1x1 layer through the matmul rule */
    replays("def f(x: Tensor((1, 5, 12, 12), \"float32\"), w: Tensor((13, 5, 3, 3), \"float32\")):\n"
            "    return relu(conv2d(x, w, padding=1))\n",
            "schedule_conv");
    replays("def f(x: Tensor((2, 16, 9, 9), \"float32\"), w: Tensor((20, 16, 1, 1), \"float32\")):\n"
            "    return conv2d(x, w)\n",
            "schedule_conv");
}

/* The conv rule's knobs change its code: other tiles, and a 1x1 layer as
 * a direct convolution (its input columns copied to xcol) instead of the
 * matmul's register tiles (their broadcasts aik). */
static void test_conv_knobs(void **state) {
    (void)state;
    skip_unless_cpu();
    static const char conv1[] = "def f(x: Tensor((2, 16, 16, 16), \"float32\"), w: Tensor((20, 16, 1, 1), \"float32\")):\n"
                                "    return conv2d(x, w)\n";
    static const char *const edits[] = {"mr=4, nv=1", "pointwise=0", "parallel=0"};
    static const char *const want[] = {"\"knobs\": \"mr=4 nv=1\"", "\"knobs\": \"pointwise=0\"", "\"knobs\": \"parallel=0\""};
    mt_kernel *k0 = compile_ok(conv1);
    const char *t0 = mt_kernel_dump(k0, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(t0, "aik"));
    assert_null(strstr(t0, "xcol"));
    assert_non_null(strstr(t0, "T.launch"));
    for (int i = 0; i < 3; i++) {
        char src[1024];
        snprintf(src, sizeof src, "%s\n@T.schedule(\"conv2d\")\ndef s(sch):\n    sch.apply_rule(\"schedule_conv\", %s)\n",
                 conv1, edits[i]);
        mt_kernel *k = compile_ok(src);
        const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        if (!strstr(t, want[i])) fail_msg("%s: no %s in\n%s", edits[i], want[i], t);
        char *bare = without_knobs(t);
        assert_string_not_equal(bare, t0);
        free(bare);
        if (i == 1) assert_true(strstr(t, "xcol") && !strstr(t, "aik"));
        if (i == 2) assert_null(strstr(t, "T.launch"));
        mt_kernel_release(k);
    }
    mt_kernel_release(k0);
}

static mt_tensor *filled(int64_t r, int64_t c, unsigned seed) {
    int64_t shape[2] = {r, c};
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, 2, shape);
    float *p = mt_tensor_data(t);
    for (int64_t i = 0; i < r * c; i++) p[i] = (float)((i * 7919 + seed * 104729) % 1000) / 250.0f - 2.0f;
    return t;
}

static mt_tensor *run2(mt_kernel *k, mt_tensor *a, mt_tensor *b) {
    mt_tensor *args[2] = {a, b}, *out = NULL;
    mt_diag d;
    if (test_kernel_run(k, args, b ? 2 : 1, &out, 1, &d) != MT_OK) fail_msg("run: %s", d.text);
    return out;
}

/* mr=4, nc=64, kc=128 (K = 300 > 2 kc: K blocks), serial: other code, the
 * default's numbers within the tolerance. */
static void test_edited_knobs(void **state) {
    (void)state;
    skip_unless_cpu();
    char src[1024];
    snprintf(src, sizeof src,
             "%s\n@T.schedule(\"fused_matmul_relu\")\ndef s(sch):\n"
             "    sch.apply_rule(\"schedule_matmul\", mr=4, nc=64, kc=128, parallel=0)\n",
             mm_src);
    mt_kernel *k0 = compile_ok(mm_src), *k1 = compile_ok(src);
    const char *t1 = mt_kernel_dump(k1, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(t1, "\"knobs\": \"mr=4 kc=128 nc=64 parallel=0\""));
    assert_null(strstr(t1, "T.parallel"));
    char *bare = without_knobs(t1);
    assert_string_not_equal(bare, mt_kernel_dump(k0, MT_STAGE_TIR_SCHED));
    free(bare);
    assert_non_null(strstr(mt_kernel_dump(k1, MT_STAGE_SCHEDULE),
                           "    sch.apply_rule(\"schedule_matmul\", mr=4, kc=128, nc=64, parallel=0)\n"));
    mt_tensor *a = filled(100, 300, 1), *b = filled(300, 200, 2);
    mt_tensor *y0 = run2(k0, a, b), *y1 = run2(k1, a, b);
    const float *p0 = mt_tensor_data(y0), *p1 = mt_tensor_data(y1);
    double tol = 4.0 * 300 * 0x1p-24 * 2.0 * 2.0;
    for (int64_t i = 0; i < 100 * 200; i++)
        if (fabs((double)p0[i] - (double)p1[i]) > tol) fail_msg("[%lld] %g vs %g", (long long)i, p0[i], p1[i]);
    mt_tensor_release(y0), mt_tensor_release(y1), mt_tensor_release(a), mt_tensor_release(b);
    mt_kernel_release(k0), mt_kernel_release(k1);
}

/* The refusals, each placed at apply_rule or at what follows it. */
static void refused(const char *schedule, const char *want) {
    char src[2048];
    snprintf(src, sizeof src, "%s\n@T.schedule(\"fused_matmul_relu\")\ndef s(sch):\n%s", mm_src, schedule);
    mt_diag d = compile_err(src);
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    if (!strstr(d.text, want)) fail_msg("want '%s' in:\n%s", want, d.text);
}

static void test_refusals(void **state) {
    (void)state;
    skip_unless_cpu();
    refused("    sch.apply_rule(\"schedule_gemm\")\n", "apply_rule: no rule named 'schedule_gemm'");
    refused("    sch.apply_rule(\"schedule_matmul\", mx=4)\n", "apply_rule: rule schedule_matmul has no knob 'mx'");
    refused("    sch.apply_rule(\"schedule_matmul\", mr=0)\n", "knob 'mr' of rule schedule_matmul: 0 is not in 1..16");
    refused("    sch.apply_rule(\"schedule_reduce\")\n", "apply_rule: rule schedule_reduce does not take kernel");
    refused("    sch.apply_rule(\"schedule_matmul\")\n    b = sch.get_block(\"matmul\")\n",
            "get_block: rule schedule_matmul has scheduled the kernel already");
    refused("    b = sch.get_block(\"matmul\")\n    i, j, k = sch.get_loops(b)\n    sch.split(i, factors=[None, 4])\n"
            "    sch.apply_rule(\"schedule_matmul\")\n",
            "apply_rule: rule schedule_matmul does not take kernel");
}

/* A rule of the other target is refused: a CPU rule on a GPU kernel
 * (emulated) and a GPU rule on a CPU kernel. */
static void test_other_target(void **state) {
    (void)state;
    skip_unless_cpu();
    char src[1024];
    snprintf(src, sizeof src, "%s\n@T.schedule(\"fused_matmul_relu\")\ndef s(sch):\n"
             "    sch.apply_rule(\"schedule_matmul\")\n", mm_src);
    mt_compile_options o = emulated();
    mt_diag d;
    mt_kernel *k = mt_jit_compile(test_ctx, src, &o, &d);
    assert_null(k);
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    if (!strstr(d.text, "apply_rule: kernel 'fused_matmul_relu' runs on the GPU; rule schedule_matmul is for the CPU's"))
        fail_msg("%s", d.text);
    refused("    sch.apply_rule(\"gpu_matmul\", tile=64)\n",
            "apply_rule: kernel 'fused_matmul_relu' runs on the CPU; rule gpu_matmul is for the GPU's kernels");
}

/* Compiles src with o (the emulated GPU), runs it on a (and b), the
 * inputs moved to the kernel's device and the result back to the host. */
static mt_tensor *run_opts(const char *src, const mt_compile_options *o, mt_tensor *a, mt_tensor *b, char **tir) {
    mt_kernel *k = compile_ok_opts(src, o);
    if (tir) *tir = strdup(mt_kernel_dump(k, MT_STAGE_TIR_SCHED));
    mt_tensor *in[2] = {a, b}, *dev[2] = {NULL, NULL}, *out = NULL, *host = NULL;
    mt_diag d;
    int n = b ? 2 : 1;
    for (int i = 0; i < n; i++)
        if (mt_kernel_tensor_to(k, in[i], mt_kernel_param_device(k, i), &dev[i], &d) != MT_OK) fail_msg("%s", d.text);
    if (mt_kernel_run(k, dev, n, &out, 1, &d) != MT_OK) fail_msg("run: %s", d.text);
    if (mt_kernel_tensor_to(k, out, (mt_device){MT_DEVICE_CPU, 0}, &host, &d) != MT_OK) fail_msg("%s", d.text);
    for (int i = 0; i < n; i++) mt_tensor_release(dev[i]);
    if (host != out) mt_tensor_release(out);
    mt_kernel_release(k);
    return host;
}

/* base, and base with `sch.apply_rule(rule, edit)` on its kernel, both run
 * in the emulation on a (and b): the edit must change the code; the two
 * results come back in y0 (the default's) and y1 to be compared. */
static void run_edited(const char *base, const char *kernel, const char *rule, const char *edit,
                       const mt_compile_options *o, mt_tensor *a, mt_tensor *b, mt_tensor **y0, mt_tensor **y1) {
    char src[1024], *t0, *t1;
    snprintf(src, sizeof src, "%s\n@T.schedule(\"%s\")\ndef s(sch):\n    sch.apply_rule(\"%s\", %s)\n", base, kernel, rule,
             edit);
    *y0 = run_opts(base, o, a, b, &t0), *y1 = run_opts(src, o, a, b, &t1);
    char *bare = without_knobs(t1);
    if (!strcmp(bare, t0)) fail_msg("%s %s changed nothing", rule, edit);
    free(bare), free(t0), free(t1);
}

/* The GPU rules' knobs, in the emulation: printed, replayed; the matmul's
 * tile changes the code, not a bit of the result (without split-K each
 * element sums k in order with fused multiply-adds whatever the tile), its
 * split_k the order of the sums (within 4 K u sum |a b|); the row rule's
 * threads and warp_rows reassociate the sums (within 4 N u). */
static void test_gpu_knobs(void **state) {
    (void)state;
    mt_compile_options o = emulated();
    replays_opts(mm_src, "gpu_matmul", &o);
    const char *sm = "def f(x: Tensor((64, 1000), \"float32\")):\n    return softmax(x, axis=-1)\n";
    const char *short_rows = "def f(x: Tensor((16384, 32), \"float32\")):\n    return softmax(x, axis=-1)\n";
    replays_opts(sm, "gpu_reduce_rows", &o);
    replays_opts(short_rows, "gpu_reduce_rows", &o);

    char src[1024], *t0, *t1;
    snprintf(src, sizeof src,
             "%s\n@T.schedule(\"fused_matmul_relu\")\ndef s(sch):\n    sch.apply_rule(\"gpu_matmul\", tile=128, split_k=1)\n",
             mm_src);
    mt_tensor *a = filled(100, 300, 3), *b = filled(300, 200, 4);
    mt_tensor *y0 = run_opts(mm_src, &o, a, b, &t0), *y1 = run_opts(src, &o, a, b, &t1);
    assert_non_null(strstr(t1, "\"knobs\": \"tile=128 split_k=1\""));
    char *bare = without_knobs(t1);
    assert_string_not_equal(bare, t0);
    free(bare);
    assert_memory_equal(mt_tensor_data(y0), mt_tensor_data(y1), sizeof(float) * 100 * 200);
    mt_tensor_release(y1);
    free(t1);
    /* tile=128 alone: 2 blocks for 132 SMs, so K in 4 splits (9 or 10 steps of 8) */
    snprintf(src, sizeof src, "%s\n@T.schedule(\"fused_matmul_relu\")\ndef s(sch):\n    sch.apply_rule(\"gpu_matmul\", tile=128)\n",
             mm_src);
    y1 = run_opts(src, &o, a, b, &t1);
    assert_non_null(strstr(t1, "C_part = T.alloc_buffer((80000,)"));
    const float *p0 = mt_tensor_data(y0), *p1 = mt_tensor_data(y1);
    for (int64_t i = 0; i < 100 * 200; i++) /* |a|, |b| <= 2 */
        if (fabs((double)p0[i] - (double)p1[i]) > 4.0 * 300 * 0x1p-24 * 2.0 * 2.0 * 300)
            fail_msg("split_k: [%lld] %g vs %g", (long long)i, p0[i], p1[i]);
    mt_tensor_release(y0), mt_tensor_release(y1), mt_tensor_release(a), mt_tensor_release(b);
    free(t0), free(t1);

    /* GEMV: both layouts replayed; other blocks and slices, the same sums
     * up to their order (within 4 K u sum |x w|) */
    const char *gv_t = "def f(x: Tensor((2, 300), \"float32\"), w: Tensor((200, 300), \"float32\")):\n    return x @ w.T\n";
    const char *gv = "def f(x: Tensor((2, 300), \"float32\"), w: Tensor((300, 200), \"float32\")):\n    return x @ w\n";
    replays_opts(gv_t, "gpu_gemv", &o);
    replays_opts(gv, "gpu_gemv", &o);
    static const char *const gedits[] = {"threads=64", "slices=4", "threads=1024, slices=1"};
    for (int e = 0; e < 3; e++) {
        mt_tensor *x = filled(2, 300, 6), *w = filled(300, 200, 7);
        run_edited(gv, "matmul", "gpu_gemv", gedits[e], &o, x, w, &y0, &y1);
        const float *p0 = mt_tensor_data(y0), *p1 = mt_tensor_data(y1);
        for (int64_t i = 0; i < 2 * 200; i++)
            if (fabs((double)p0[i] - (double)p1[i]) > 4.0 * 300 * 0x1p-24 * 2.0 * 2.0 * 300)
                fail_msg("%s: [%lld] %g vs %g", gedits[e], (long long)i, p0[i], p1[i]);
        mt_tensor_release(y0), mt_tensor_release(y1), mt_tensor_release(x), mt_tensor_release(w);
    }

    /* argmax: a block per row and a warp's lanes per row, replayed; other
     * blocks, or no warp rows, the same indices */
    const char *am = "def f(x: Tensor((64, 1000), \"float32\")):\n    return argmax(x, axis=-1)\n";
    const char *am_short = "def f(x: Tensor((16384, 32), \"float32\")):\n    return argmax(x, axis=-1)\n";
    replays_opts(am, "gpu_argreduce_rows", &o);
    replays_opts(am_short, "gpu_argreduce_rows", &o);
    /* softmax rows: other blocks, or no warp rows, within 4 N u */
    static const char *const edits[] = {"threads=32", "threads=512", "warp_rows=0"};
    for (int r = 0; r < 2; r++)
        for (int e = 0; e < 3; e++) {
            int64_t rows = e < 2 ? 64 : 16384, n = e < 2 ? 1000 : 32;
            mt_tensor *x = filled(rows, n, 8);
            if (r == 0) {
                run_edited(e < 2 ? am : am_short, "argmax", "gpu_argreduce_rows", edits[e], &o, x, NULL, &y0, &y1);
                assert_memory_equal(mt_tensor_data(y0), mt_tensor_data(y1), sizeof(int64_t) * (size_t)rows);
            } else {
                run_edited(e < 2 ? sm : short_rows, "softmax", "gpu_reduce_rows", edits[e], &o, x, NULL, &y0, &y1);
                const float *p0 = mt_tensor_data(y0), *p1 = mt_tensor_data(y1);
                for (int64_t i = 0; i < rows * n; i++)
                    if (fabs((double)p0[i] - (double)p1[i]) > 4.0 * (double)n * 0x1p-24 * fabs((double)p0[i]) + 1e-30)
                        fail_msg("%s: [%lld] %g vs %g", edits[e], (long long)i, p0[i], p1[i]);
            }
            mt_tensor_release(y0), mt_tensor_release(y1), mt_tensor_release(x);
        }
}

/* The same from C: the knobs by name; a primitive after it is refused. */
static mt_status cb(mt_schedule *sch, void *user) {
    int *seen = user;
    const char *names[2] = {"mr", "parallel"};
    int64_t values[2] = {2, 0};
    if (mt_schedule_apply_rule(sch, "schedule_matmul", names, values, 2) != MT_OK) return MT_ERR_INVALID_ARG;
    int b;
    seen[0] = mt_schedule_get_block(sch, "matmul", &b) == MT_ERR_INVALID_ARG &&
              strstr(mt_schedule_error(sch), "rule schedule_matmul has scheduled the kernel already") != NULL;
    seen[1] = strstr(mt_schedule_trace(sch), "    sch.apply_rule(\"schedule_matmul\", mr=2, parallel=0)\n") != NULL;
    const char *bad[1] = {"lanes"};
    seen[2] = mt_schedule_apply_rule(sch, "schedule_reduce", bad, values, 1) == MT_ERR_INVALID_ARG;
    return MT_OK;
}

static void test_c_api(void **state) {
    (void)state;
    skip_unless_cpu();
    int seen[3] = {0, 0, 0};
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.schedule = cb;
    o.schedule_user = seen;
    mt_kernel *k = compile_ok_opts(mm_src, &o);
    assert_true(seen[0] && seen[1] && seen[2]);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "\"knobs\": \"mr=2 parallel=0\""));
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "# fused_matmul_relu: the schedule callback"));
    mt_kernel_release(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay),
        cmocka_unit_test(test_edited_knobs),
        cmocka_unit_test(test_conv_knobs),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_other_target),
        cmocka_unit_test(test_gpu_knobs),
        cmocka_unit_test(test_c_api),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
