/*
 * test_tir_wmma.c -- the tensor-core intrinsics T.wmma_fill, T.wmma_load_a,
 * T.wmma_load_b, T.wmma_mma and T.wmma_store on fragment buffers (scopes
 * wmma.matrix_a, wmma.matrix_b, wmma.accumulator; tir.h):
 *
 *  - printed and parsed back (tir/printer.c, tir/from_ast.c);
 *  - the verifier's rules (tir/verify.c): the whole value of a T.evaluate
 *    in a phase of a GPU kernel, reached through sequences, lets and loops
 *    of constant bounds (not an if, nor a loop of variable bounds, nor a
 *    phase the warp does not divide); addresses of the right scope and
 *    dtype, fragments at multiples of 256, an aligned ldm; fragments
 *    allocated in the kernel outside its phases and touched by nothing
 *    else;
 *  - the emulation (passes/tir/emulate_gpu.c) leaves no intrinsic and no
 *    fragment behind (a copy of each fragment per thread, loops for each
 *    operation), and gives a well-formed function;
 *  - the CUDA C (codegen/cuda_c.c): the WMMA API's calls.
 *
 * The same kernel of bfloat16 (fragments and tiles): verified for sm_80,
 * emulated, printed with __nv_bfloat16 fragments; refused with float16
 * and bfloat16 mixed in one intrinsic, and on a target whose tensor cores
 * take no bfloat16.
 *
 * The numbers of whole matmuls on tensor cores are checked end to end in
 * test_gpu_matmul (against a double reference, emulated; on the GPU with
 * MT_TEST_TARGET=cuda).
 */
#include "tir/tir_test.h"

#include <stdlib.h>

#include "codegen/cuda_c.h"
#include "frontend/parser.h"
#include "support/strbuf.h"
#include "passes/tir/tir_passes.h"
#include "target/target.h"
#include "tir/from_ast.h"
#include "tir/verify.h"

/* One warp's 16 x 16 x 16 product y = x @ w (x row-major, staged k-major
 * in xs with rows of 24; w row-major): `frag` lines allocate the
 * fragments (8 spaces), `body` is the second phase's (12 spaces). */
static const char *kernel(const char *attr, int threads, const char *frag, const char *body) {
    return mt_arena_printf(A,
                           "@T.prim_func\n"
                           "def k(x: T.Buffer((256,), \"float16\"), w: T.Buffer((256,), \"float16\"), "
                           "y: T.Buffer((256,), \"float32\")):\n"
                           "%s"
                           "    for bx in T.thread_binding(1, thread=\"blockIdx.x\"):\n"
                           "        xs = T.alloc_buffer((384,), \"float16\", scope=\"shared\")\n"
                           "        ws = T.alloc_buffer((256,), \"float16\", scope=\"shared\")\n"
                           "        cs = T.alloc_buffer((256,), \"float32\", scope=\"shared\")\n"
                           "%s"
                           "        for tx in T.thread_binding(%d, thread=\"threadIdx.x\"):\n"
                           "            for e in range(8):\n"
                           "                if tx < 32:\n"
                           "                    xs[tx %% 16 * 24 + (e * 2 + tx // 16)] = x[(e * 2 + tx // 16) * 16 + tx %% 16]\n"
                           "                    ws[e * 32 + tx] = w[e * 32 + tx]\n"
                           "        for tx in T.thread_binding(%d, thread=\"threadIdx.x\"):\n"
                           "%s",
                           attr, frag, threads, threads, body);
}

static const char *const CUDA_ATTR = "    T.func_attr({\"kind\": \"cuda_kernel\"})\n";

static const char *const FRAGS =
    "        acc = T.alloc_buffer((256,), \"float32\", scope=\"wmma.accumulator\")\n"
    "        a = T.alloc_buffer((256,), \"float16\", scope=\"wmma.matrix_a\")\n"
    "        b = T.alloc_buffer((256,), \"float16\", scope=\"wmma.matrix_b\")\n";

static const char *const VALID_BODY =
    "            T.evaluate(T.wmma_fill(acc[0], 0.0))\n"
    "            for kk in range(1):\n"
    "                T.evaluate(T.wmma_load_a(a[kk * 256], xs[kk * 16], 24))\n"
    "                T.evaluate(T.wmma_load_b(b[0], ws[0], 16))\n"
    "                T.evaluate(T.wmma_mma(acc[0], a[0], b[0]))\n"
    "            T.evaluate(T.wmma_store(cs[0], acc[0], 16))\n"
    "            for e in range(8):\n"
    "                if tx < 32:\n"
    "                    y[e * 32 + tx] = cs[e * 32 + tx]\n";

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

static void test_print_parse(void **state) {
    (void)state;
    const char *src = kernel(CUDA_ATTR, 32, FRAGS, VALID_BODY), *err = NULL;
    mt_tfunc *f = parse(src, &err);
    if (!f) fail_msg("%s\n%s", err, src);
    const char *text = mt_tfunc_print(A, f);
    static const char *const want[] = {
        "acc = T.alloc_buffer((256,), \"float32\", scope=\"wmma.accumulator\")",
        "a = T.alloc_buffer((256,), \"float16\", scope=\"wmma.matrix_a\")",
        "T.evaluate(T.wmma_fill(acc[0], 0.0))",
        "T.evaluate(T.wmma_load_a(a[kk * 256], xs[kk * 16], 24))",
        "T.evaluate(T.wmma_mma(acc[0], a[0], b[0]))",
        "T.evaluate(T.wmma_store(cs[0], acc[0], 16))",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(text, want[i])) fail_msg("'%s' is not in:\n%s", want[i], text);
    mt_tfunc *g = parse(text, &err);
    if (!g) fail_msg("the printed kernel does not parse back: %s\n%s", err, text);
    ASSERT_TEXT(mt_tfunc_print(A, g), text);
    assert_true(mt_tstmt_has_wmma(f->body));
    assert_string_equal(mt_scope_str(MT_SCOPE_WMMA_B), "wmma.matrix_b");
}

typedef struct refusal {
    const char *attr;
    int threads;
    const char *frag, *body, *want;
} refusal;

static void test_refusals(void **state) {
    (void)state;
    static const char *const ACC16 = "        acc = T.alloc_buffer((256,), \"float16\", scope=\"wmma.accumulator\")\n";
    static const char *const ACC_A32 = "        acc = T.alloc_buffer((256,), \"float32\", scope=\"wmma.accumulator\")\n"
                                       "        a = T.alloc_buffer((256,), \"float32\", scope=\"wmma.matrix_a\")\n";
    static const char *const FRAGS_BF16 = "        acc = T.alloc_buffer((256,), \"float32\", scope=\"wmma.accumulator\")\n"
                                          "        a = T.alloc_buffer((256,), \"bfloat16\", scope=\"wmma.matrix_a\")\n";
    static const char *const FRAGS_MIXED = "        acc = T.alloc_buffer((256,), \"float32\", scope=\"wmma.accumulator\")\n"
                                           "        a = T.alloc_buffer((256,), \"float16\", scope=\"wmma.matrix_a\")\n"
                                           "        b = T.alloc_buffer((256,), \"bfloat16\", scope=\"wmma.matrix_b\")\n";
    static const char *const ACC_ODD = "        acc = T.alloc_buffer((200,), \"float32\", scope=\"wmma.accumulator\")\n";
    static const char *const ACC512 = "        acc = T.alloc_buffer((512,), \"float32\", scope=\"wmma.accumulator\")\n"
                                      "        a = T.alloc_buffer((256,), \"float16\", scope=\"wmma.matrix_a\")\n";
    static const refusal cases[] = {
        {"", 32, FRAGS, "            T.evaluate(T.wmma_fill(acc[0], 0.0))\n", "allocated outside a GPU kernel"},
        {NULL, 32, FRAGS, "            if tx < 16:\n                T.evaluate(T.wmma_fill(acc[0], 0.0))\n",
         "under an if inside its phase"},
        {NULL, 32, FRAGS, "            for i in range(tx // 16):\n                T.evaluate(T.wmma_fill(acc[0], 0.0))\n",
         "under a loop of variable bounds"},
        {NULL, 48, FRAGS, "            T.evaluate(T.wmma_fill(acc[0], 0.0))\n", "multiple of the warp (32)"},
        {NULL, 32, FRAGS, "            y[tx] = T.Cast(\"float32\", T.wmma_fill(acc[0], 0.0))\n",
         "not the whole value of a T.evaluate"},
        {NULL, 32, FRAGS, "            T.evaluate(T.wmma_load_a(b[0], xs[0], 24))\n",
         "a wmma.matrix_a buffer of float16 or bfloat16 expected"},
        {NULL, 32, FRAGS, "            T.evaluate(T.wmma_load_a(a[0], x[0], 16))\n",
         "a shared buffer of float16 or bfloat16 expected"},
        {NULL, 32, FRAGS, "            T.evaluate(T.wmma_store(xs[0], acc[0], 16))\n",
         "a shared buffer of float32 expected"},
        {NULL, 32, FRAGS, "            T.evaluate(T.wmma_mma(acc[0], a[0], a[0]))\n",
         "a wmma.matrix_b buffer of float16 or bfloat16 expected"},
        {NULL, 32, ACC512, "            T.evaluate(T.wmma_fill(acc[8], 0.0))\n", "not the first of a fragment"},
        /* (an operand reaching past its buffer is the front end's error:
         * tests/errors/corpus/pf_wmma_*_oob.py) */
        {NULL, 32, FRAGS, "            T.evaluate(T.wmma_load_a(a[0], xs[0], 20))\n", "a multiple of 8"},
        {NULL, 32, FRAGS, "            T.evaluate(T.wmma_store(cs[0], acc[0], 8))\n", "of at least 16"},
        {NULL, 32, FRAGS, "            T.evaluate(T.wmma_load_a(a[0], xs[0] + T.float16(1.0), 24))\n",
         "is not an address"},
        {NULL, 32, FRAGS, "            T.evaluate(T.wmma_fill(acc[0], cs[0]))\n", "a float32 value that reads no memory"},
        {NULL, 32, FRAGS, "            y[tx] = acc[tx]\n", "load from fragment 'acc' outside a wmma intrinsic"},
        {NULL, 32, FRAGS, "            acc[tx] = 0.0\n", "store to fragment 'acc' outside a wmma intrinsic"},
        {NULL, 32, "",
         "            f = T.alloc_buffer((256,), \"float32\", scope=\"wmma.accumulator\")\n"
         "            T.evaluate(T.wmma_fill(f[0], 0.0))\n",
         "allocated inside a phase"},
        {NULL, 32, ACC16, "            T.evaluate(T.wmma_fill(acc[0], 0.0))\n", "is float16 (float32 expected)"},
        {NULL, 32, ACC_A32, "            T.evaluate(T.wmma_fill(acc[0], 0.0))\n",
         "fragment 'a' of scope wmma.matrix_a is float32 (float16 or bfloat16 expected)"},
        {NULL, 32, FRAGS_BF16, "            T.evaluate(T.wmma_load_a(a[0], xs[0], 24))\n",
         "T.wmma_load_a of 'a' (bfloat16) and 'xs' (float16): the tensor cores take one input dtype"},
        {NULL, 32, FRAGS_MIXED, "            T.evaluate(T.wmma_mma(acc[0], a[0], b[0]))\n",
         "T.wmma_mma of 'a' (float16) and 'b' (bfloat16): the tensor cores take one input dtype"},
        {NULL, 32, ACC_ODD, "            T.evaluate(T.wmma_fill(acc[0], 0.0))\n", "a constant multiple of 256"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const refusal *c = &cases[i];
        const char *src = kernel(c->attr ? c->attr : CUDA_ATTR, c->threads, c->frag, c->body);
        const char *err = NULL;
        if (parse(src, &err)) fail_msg("case %zu is accepted:\n%s", i, src);
        if (!strstr(err, c->want)) fail_msg("case %zu: '%s' is not in: %s\n%s", i, c->want, err, src);
        if (!strstr(err, "ill-formed loop function 'k'")) fail_msg("case %zu: %s", i, err);
    }
}

static mt_tfunc *valid_kernel(const mt_target_desc **gpu) {
    const char *err = NULL;
    mt_tfunc *f = parse(kernel(CUDA_ATTR, 32, FRAGS, VALID_BODY), &err);
    if (!f) fail_msg("%s", err);
    mt_target_desc *t = MT_NEW(A, mt_target_desc);
    assert_true(mt_target_cuda(t, "sm_80"));
    assert_int_equal(t->mma_m * t->mma_n * t->mma_k, 16 * 16 * 16);
    f->target = *gpu = t;
    assert_null(mt_tir_verify(A, f, MT_TIR_FLAT));
    return f;
}

/* The emulation: every lane does the warp's operation on its own copy of
 * the fragments, with loops; nothing of the wmma kind is left. */
static void test_emulation(void **state) {
    (void)state;
    const mt_target_desc *gpu;
    mt_tfunc *f = valid_kernel(&gpu);
    mt_target_desc *host = MT_NEW(A, mt_target_desc);
    *host = *mt_target_default_cpu();
    TIR_GUARD();
    mt_tfunc *g = mt_tir_emulate_gpu(A, f, host);
    TIR_GUARD_END();
    assert_false(mt_tstmt_has_wmma(g->body));
    const char *msg = mt_tir_verify(A, g, MT_TIR_FLAT);
    if (msg) fail_msg("%s", msg);
    const char *text = mt_tfunc_print(A, g);
    if (getenv("MT_SHOW")) printf("%s\n", text);
    assert_null(strstr(text, "wmma"));
    /* a copy of each fragment per thread (32 x 256), and the product's loop nest */
    assert_non_null(strstr(text, "acc = T.alloc_buffer((8192,), \"float32\", scope=\"local\")"));
    assert_non_null(strstr(text, "T.Cast(\"float32\", a["));
    assert_non_null(strstr(text, "wk in T.grid(16, 16, 16):"));
}

/* The CUDA C: fragments and the WMMA API's calls, a store between warp
 * barriers, the shared tiles 32-byte aligned. */
static void test_cuda_c(void **state) {
    (void)state;
    const mt_target_desc *gpu;
    mt_tfunc *f = valid_kernel(&gpu);
    const char *text = mt_cuda_c_emit(A, NULL, 0, &f, 1);
    if (getenv("MT_SHOW")) printf("%s\n", text);
    static const char *const want[] = {
        "#include <mma.h>\nnamespace wmma = nvcuda::wmma;\n",
        "__shared__ __align__(32) __half xs[384];",
        "__shared__ __align__(32) float cs[256];",
        "wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[1];",
        "wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::col_major> a[1];",
        "wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b[1];",
        "wmma::fill_fragment(acc[0], 0.0f);",
        "wmma::load_matrix_sync(a[kk], &xs[kk * 16], 24);",
        "wmma::load_matrix_sync(b[0], &ws[0], 16);",
        "wmma::mma_sync(acc[0], a[0], b[0], acc[0]);",
        "__syncwarp();\n    wmma::store_matrix_sync(&cs[0], acc[0], 16, wmma::mem_row_major);\n"
        "    __syncwarp();",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(text, want[i])) fail_msg("'%s' is not in:\n%s", want[i], text);
}

/* s with every "float16" made "bfloat16". */
static const char *to_bf16(const char *s) {
    mt_sb b;
    mt_sb_init(&b, A);
    for (const char *p = s; *p;) {
        if (strncmp(p, "\"float16\"", 9) == 0) {
            mt_sb_puts(&b, "\"bfloat16\"");
            p += 9;
        } else {
            mt_sb_putc(&b, *p++);
        }
    }
    return mt_sb_str(&b);
}

/* bfloat16 fragments and tiles: verified for sm_80, emulated (the product
 * of the widened values), printed as __nv_bfloat16 fragments; refused on a
 * target whose tensor cores take no bfloat16. */
static void test_bf16(void **state) {
    (void)state;
    const char *src = to_bf16(kernel(CUDA_ATTR, 32, FRAGS, VALID_BODY)), *err = NULL;
    assert_non_null(strstr(src, "scope=\"wmma.matrix_b\""));
    assert_null(strstr(src, "\"float16\""));
    mt_tfunc *f = parse(src, &err);
    if (!f) fail_msg("%s\n%s", err, src);
    mt_target_desc *t = MT_NEW(A, mt_target_desc);
    assert_true(mt_target_cuda(t, "sm_80"));
    assert_true(t->mma_bf16);
    f->target = t;
    const char *msg = mt_tir_verify(A, f, MT_TIR_FLAT);
    if (msg) fail_msg("%s\n%s", msg, src);
    const char *text = mt_cuda_c_emit(A, NULL, 0, &f, 1);
    static const char *const want[] = {
        "#include <cuda_bf16.h>\n#include <mma.h>\n",
        "__shared__ __align__(32) __nv_bfloat16 xs[384];",
        "wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::col_major> a[1];",
        "wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b[1];",
        "wmma::mma_sync(acc[0], a[0], b[0], acc[0]);",
        "xs[mt_floormod_i64(tx, 16) * 24 + (e * 2 + mt_floordiv_i64(tx, 16))] = x[(e * 2 + "
        "mt_floordiv_i64(tx, 16)) * 16 + mt_floormod_i64(tx, 16)];", /* a copy: the bits themselves */
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(text, want[i])) fail_msg("'%s' is not in:\n%s", want[i], text);
    assert_null(strstr(text, "__half"));
    mt_target_desc *host = MT_NEW(A, mt_target_desc);
    *host = *mt_target_default_cpu();
    TIR_GUARD();
    mt_tfunc *g = mt_tir_emulate_gpu(A, f, host);
    TIR_GUARD_END();
    assert_false(mt_tstmt_has_wmma(g->body));
    msg = mt_tir_verify(A, g, MT_TIR_FLAT);
    if (msg) fail_msg("%s", msg);
    assert_non_null(strstr(mt_tfunc_print(A, g), "a = T.alloc_buffer((8192,), \"bfloat16\", scope=\"local\")"));

    mt_tfunc *h = parse(src, &err);
    mt_target_desc *old = MT_NEW(A, mt_target_desc);
    *old = *t;
    old->mma_bf16 = false; /* tensor cores of float16 only (as sm_70's) */
    h->target = old;
    msg = mt_tir_verify(A, h, MT_TIR_FLAT);
    if (!msg || !strstr(msg, "fragment 'a' of bfloat16: the target (sm_80) has no bfloat16 tensor cores"))
        fail_msg("not refused as expected: %s", msg ? msg : "(accepted)");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TIR_TEST(test_print_parse),
        TIR_TEST(test_refusals),
        TIR_TEST(test_emulation),
        TIR_TEST(test_cuda_c),
        TIR_TEST(test_bf16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
