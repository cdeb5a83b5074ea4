/*
 * test_tir_shuffle.c -- the warp shuffle T.shfl_xor (tir.h, IN_SHFL_XOR):
 *
 *  - printed and parsed back (tir/printer.c, tir/from_ast.c), typed like
 *    its value (float32, float64, float16, int32, int64);
 *  - the verifier's rule (tir/verify.c): only the whole value of a store
 *    directly in a phase of a GPU kernel, through sequences and lets; each
 *    place it refuses, with a message that says where (outside a GPU
 *    kernel, outside the phases, under an if, a loop, an allocation, in a
 *    phase whose extent the warp does not divide, not the whole value) and
 *    bad immediates and dtypes;
 *  - the emulation (passes/tir/emulate_gpu.c) leaves no shuffle behind,
 *    and what it gives is well formed.
 *
 * The numbers the emulation gives for shuffles are checked end to end in
 * test_gpu_emulation (the row rules against the CPU).
 */
#include "tir/tir_test.h"

#include <stdlib.h>

#include "frontend/parser.h"
#include "passes/tir/tir_passes.h"
#include "target/target.h"
#include "tir/from_ast.h"
#include "tir/verify.h"

/* A kernel: `pre` lines in the blockIdx loop before the phase, `body`
 * lines in the phase (indented by the caller to 12 spaces), of dtype dt. */
static const char *kernel(const char *attr, const char *dt, int threads, const char *pre, const char *body) {
    return mt_arena_printf(A,
                           "@T.prim_func\n"
                           "def k(x: T.Buffer((64,), \"%s\"), y: T.Buffer((64,), \"%s\")):\n"
                           "%s"
                           "    for bx in T.thread_binding(1, thread=\"blockIdx.x\"):\n"
                           "        v = T.alloc_buffer((1,), \"%s\", scope=\"local\")\n"
                           "        s = T.alloc_buffer((1,), \"%s\", scope=\"local\")\n"
                           "%s"
                           "        for tx in T.thread_binding(%d, thread=\"threadIdx.x\"):\n"
                           "%s",
                           dt, dt, attr, dt, dt, pre, threads, body);
}

static const char *const CUDA_ATTR = "    T.func_attr({\"kind\": \"cuda_kernel\"})\n";

/* Parses src; the function, or NULL with *err the message. */
static mt_tfunc *parse(const char *src, const char **err) {
    mt_errframe f;
    if (MT_TRY(&f)) {
        mt_ast *m = mt_parse(A, src, strlen(src), NULL);
        int n;
        mt_tfunc **fs = mt_tir_from_module(A, m, &n);
        mt_err_pop(&f);
        assert_int_equal(n, 1);
        return fs[0];
    }
    mt_err_pop(&f);
    *err = mt_arena_printf(A, "%s", f.msg);
    return NULL;
}

static const char *const VALID_BODY =
    "            v[0] = x[tx]\n"
    "            lane = tx %% 32\n"
    "            s[0] = T.shfl_xor(v[0], 16, 32)\n"
    "            v[0] = v[0] + s[0]\n"
    "            s[0] = T.shfl_xor(v[0], 4, 8)\n"
    "            y[tx] = v[0] + s[0] + T.Cast(\"%s\", lane)\n";

static void test_print_parse(void **state) {
    (void)state;
    static const char *const dts[] = {"float32", "float64", "float16", "int32", "int64"};
    for (int i = 0; i < 5; i++) {
        const char *src = kernel(CUDA_ATTR, dts[i], 64, "", mt_arena_printf(A, VALID_BODY, dts[i]));
        const char *err = NULL;
        mt_tfunc *f = parse(src, &err);
        if (!f) fail_msg("%s: %s\n%s", dts[i], err, src);
        const char *text = mt_tfunc_print(A, f);
        assert_non_null(strstr(text, "s[0] = T.shfl_xor(v[0], 16, 32)"));
        assert_non_null(strstr(text, "s[0] = T.shfl_xor(v[0], 4, 8)"));
        mt_tfunc *g = parse(text, &err);
        if (!g) fail_msg("%s: the printed kernel does not parse back: %s\n%s", dts[i], err, text);
        ASSERT_TEXT(mt_tfunc_print(A, g), text);
    }
    mt_texpr *x = F(1.0), *sh = mt_te_shfl_xor(A, x, 2, 32);
    assert_int_equal(sh->dtype, MT_FLOAT32);
    assert_true(mt_texpr_has_shuffle(sh) && !mt_texpr_has_shuffle(x));
    ASSERT_TEXT(mt_texpr_print(A, sh), "T.shfl_xor(1.0, 2, 32)");
}

typedef struct refusal {
    const char *attr, *dt;
    int threads;
    const char *pre, *body, *want;
} refusal;

static void test_refusals(void **state) {
    (void)state;
    static const refusal cases[] = {
        {"", "float32", 64, "", "            s[0] = T.shfl_xor(x[tx], 1, 32)\n", "outside a GPU kernel"},
        {NULL, "float32", 64, "        s[0] = T.shfl_xor(x[0], 1, 32)\n", "            y[tx] = s[0]\n",
         "outside the phases of its kernel"},
        {NULL, "float32", 64, "", "            if tx < 32:\n                s[0] = T.shfl_xor(x[tx], 1, 32)\n",
         "under an if inside its phase"},
        {NULL, "float32", 64, "", "            for i in range(2):\n                s[0] = T.shfl_xor(x[tx], 1, 32)\n",
         "under a loop inside its phase"},
        {NULL, "float32", 64, "",
         "            w = T.alloc_buffer((1,), \"float32\", scope=\"local\")\n"
         "            w[0] = T.shfl_xor(x[tx], 1, 32)\n",
         "under an allocation inside its phase"},
        {NULL, "float32", 48, "", "            s[0] = T.shfl_xor(x[tx], 1, 32)\n", "multiple of the warp (32)"},
        {NULL, "float32", 64, "", "            s[0] = x[tx] + T.shfl_xor(x[tx], 1, 32)\n",
         "not the whole value of a store"},
        {NULL, "float32", 64, "", "            y[T.shfl_xor(tx, 1, 32)] = x[tx]\n", "not the whole value of a store"},
        {NULL, "float32", 64, "", "            s[0] = T.shfl_xor(x[tx], 1, 64)\n", "of width 64"},
        {NULL, "float32", 64, "", "            s[0] = T.shfl_xor(x[tx], 3, 32)\n", "of lane mask 3"},
        {NULL, "float32", 64, "", "            s[0] = T.shfl_xor(x[tx], 8, 8)\n", "of lane mask 8"},
        {NULL, "int8", 64, "", "            s[0] = T.shfl_xor(x[tx], 1, 32)\n", "of a int8 value"},
        {NULL, "float32", 64, "", "            s[0] = T.shfl_xor(T.shfl_xor(x[tx], 1, 32), 2, 32)\n",
         "holds another shuffle"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const refusal *c = &cases[i];
        const char *src = kernel(c->attr ? c->attr : CUDA_ATTR, c->dt, c->threads, c->pre, c->body);
        const char *err = NULL;
        if (parse(src, &err)) fail_msg("case %zu is accepted:\n%s", i, src);
        if (!strstr(err, c->want)) fail_msg("case %zu: '%s' is not in: %s\n%s", i, c->want, err, src);
        if (!strstr(err, "ill-formed loop function 'k'")) fail_msg("case %zu: %s", i, err);
    }
}

/* The emulation splits the phase at each shuffle: none is left, and the
 * result is well formed (flat form) for the host. */
static void test_emulation_splits(void **state) {
    (void)state;
    const char *err = NULL;
    mt_tfunc *f = parse(kernel(CUDA_ATTR, "float32", 64, "", mt_arena_printf(A, VALID_BODY, "float32")), &err);
    if (!f) fail_msg("%s", err);
    mt_target_desc *gpu = MT_NEW(A, mt_target_desc), *host = MT_NEW(A, mt_target_desc);
    assert_true(mt_target_cuda(gpu, "sm_90"));
    *host = *mt_target_default_cpu();
    f->target = gpu;
    assert_null(mt_tir_verify(A, f, MT_TIR_FLAT));
    TIR_GUARD();
    mt_tfunc *g = mt_tir_emulate_gpu(A, f, host);
    TIR_GUARD_END();
    assert_false(mt_tstmt_has_shuffle(g->body));
    const char *msg = mt_tir_verify(A, g, MT_TIR_FLAT);
    if (msg) fail_msg("%s", msg);
    const char *text = mt_tfunc_print(A, g);
    if (getenv("MT_SHOW")) printf("%s\n", text);
    /* the partner of lane tx for mask 16: tx + 16 - (tx // 16 % 2) * 32 */
    assert_non_null(strstr(text, "shfl_scratch[tx] = v[(0 * 64 + tx) * 1 + 0]"));
    assert_non_null(strstr(text, "shfl_scratch[tx + 16 - tx // 16 % 2 * 32]"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TIR_TEST(test_print_parse),
        TIR_TEST(test_refusals),
        TIR_TEST(test_emulation_splits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
