/*
 * test_tir_roundtrip.c -- every TIR dump parses back to what prints it.
 *
 * The compiler prints its loop functions in the @T.prim_func syntax of the
 * language (tir/printer.c), and tir/from_ast.c reads that syntax. For each
 * program -- every golden kernel (tests/golden/NAME.py), the example kernels,
 * the GPU test programs (tests/gpu/NAME.py) and a few more op families below
 * -- the TIR printed at the stages "tir" (block form, after
 * inline_producers) and "tir-sched" (scheduled, lowered and split into
 * host and device functions) is parsed, every loop function in it is built
 * and printed again, and the text must be the very same. Both for the CPU
 * and for target cuda (emulated: the GPU schedules' thread bindings,
 * shared and local buffers, launches).
 *
 * The test also checks what a parse gives: the number of functions, and
 * that a mangled dump (a buffer renamed in one place) is refused.
 */
#include <dirent.h>

#include "test_util.h"

#include "frontend/parser.h"
#include "support/diag.h"
#include "tir/from_ast.h"

/* Programs of op families the golden kernels do not cover. */
static const char *const extra_programs[] = {
    "def f(x: Tensor((4, 16), \"float32\")):\n"
    "    return softmax(x)\n",
    "def f(x: Tensor((\"n\", 32), \"float32\"), g: Tensor((32,), \"float32\"), b: Tensor((32,), \"float32\")):\n"
    "    return layer_norm(x, g, b)\n",
    "def f(x: Tensor((8, 5, 3), \"float32\")):\n"
    "    a = argmax(x, axis=1)\n"
    "    m = mean(x, axis=(0, 2), keepdims=True)\n"
    "    return a, m\n",
    "def f(a: Tensor((33, 17), \"float32\"), b: Tensor((17, 9), \"float32\")):\n"
    "    return relu(a @ b) * 2.0\n",
    "def f(x: Tensor((6, 4), \"float64\"), y: Tensor((6, 4), \"int32\")):\n"
    "    z = where(x > 0.5, exp(x), tanh(x))\n"
    "    w = y // 3 + y % 5\n"
    "    return z, w, x[1:5, ::2], concat((x, x), axis=1)\n",
    "def f(x: Tensor((2, 3, 4), \"float16\"), y: Tensor((2, 3, 4), \"uint8\")):\n"
    "    return transpose(x, (2, 0, 1)) * 0.5, reshape(y, (6, 4)), sum(y.astype(\"int64\"), axis=0)\n",
    "def f(x: Tensor((\"n\", \"m\"), \"float32\")):\n"
    "    return max(x, axis=1), gelu(x, approximate=\"tanh\"), sigmoid(x) - erf(x)\n",
    "def f(x: Tensor((5, 7), \"float32\"), w: Tensor((3, 7), \"float32\"), b: Tensor((3,), \"float32\")):\n"
    "    h = log_softmax(linear(x, w, b))\n"
    "    return h.T, expand_dims(squeeze(broadcast_to(b, (1, 3)), axis=0), 1), prod(x, axis=0), argmin(x, axis=1)\n",
    "def f(x: Tensor((6,), \"float32\"), i: Tensor((6,), \"int8\"), flag: bool):\n"
    "    y = power(abs(x), 1.5) + floor(x) - ceil(x) * round(x) + sign(x)\n"
    "    z = zeros((2, 3)) + full((2, 3), 2.5) + ones((2, 3), \"float32\")\n"
    "    c = (x > 0.0) == (i.astype(\"float32\") < 1.0)\n"
    "    if flag:\n"
    "        y = y * 2.0\n"
    "    return y, z, c, minimum(i, i * 2), x.astype(\"float16\").astype(\"uint8\")\n",
    "def f(x: Tensor((\"n\", 64), \"float32\"), w: Tensor((64, 64), \"float32\")):\n"
    "    for k in range(3):\n"
    "        x = relu(x @ w) + x\n"
    "    return mean(x, axis=-1, keepdims=True), min(x, axis=0)\n",
};

static const char *const extra_names[] = {"softmax", "layer_norm", "argmax_mean", "matmul_relu",
                                           "where_div_slice_concat", "transpose_reshape_sum", "max_gelu_erf",
                                           "linear_log_softmax_shapes", "math_creation_compare",
                                           "mlp_loop_reduce"};

/* The dump text parsed, each loop function built and printed again (as
 * the pipeline joins them: one blank line between). NULL and *err on a
 * failure. */
static char *reprint(mt_arena *a, const char *text, const char **err) {
    mt_errframe f;
    if (MT_TRY(&f)) {
        mt_ast *m = mt_parse(a, text, strlen(text), NULL);
        int n;
        mt_tfunc **fs = mt_tir_from_module(a, m, &n);
        size_t len = 0;
        char *out = malloc(1);
        out[0] = 0;
        for (int i = 0; i < n; i++) {
            const char *s = mt_tfunc_print(a, fs[i]);
            out = realloc(out, len + strlen(s) + 2);
            if (i) out[len++] = '\n';
            strcpy(out + len, s);
            len += strlen(s);
        }
        mt_err_pop(&f);
        return out;
    }
    mt_err_pop(&f);
    *err = mt_arena_printf(a, "%d:%d: %s", f.loc.line, f.loc.col, f.msg);
    return NULL;
}

/* First differing line, for the failure message. */
static void show_diff(const char *want, const char *got) {
    int line = 1;
    const char *w = want, *g = got;
    while (*w && *w == *g) {
        if (*w == '\n') line++;
        w++, g++;
    }
    const char *ws = w, *gs = g;
    while (ws > want && ws[-1] != '\n') ws--;
    while (gs > got && gs[-1] != '\n') gs--;
    printf("  first difference at line %d:\n  dump:   %.*s\n  parsed: %.*s\n", line,
           (int)strcspn(ws, "\n"), ws, (int)strcspn(gs, "\n"), gs);
}

static int nchecked;

/* 0 when both TIR dumps of src round-trip; prints what failed. */
static int check_source(const char *name, const char *src, bool cuda) {
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.filename = name;
    if (cuda) o.target = MT_TARGET_CUDA, o.emulate = 1;
    mt_diag d;
    mt_kernel *k = mt_jit_compile(test_ctx, src, &o, &d);
    if (!k) {
        printf("FAIL %s%s: does not compile:\n%s", name, cuda ? " (cuda)" : "", d.text);
        return 1;
    }
    int fails = 0;
    mt_stage stages[2] = {MT_STAGE_TIR, MT_STAGE_TIR_SCHED};
    for (int i = 0; i < 2; i++) {
        const char *dump = mt_kernel_dump(k, stages[i]);
        if (!dump || !*dump) continue;
        mt_arena *a = mt_arena_create();
        const char *err = NULL;
        char *got = reprint(a, dump, &err);
        const char *stage = i ? "tir-sched" : "tir";
        if (!got) {
            printf("FAIL %s%s %s: does not parse back: %s\n--- dump ---\n%s", name, cuda ? " (cuda)" : "",
                   stage, err, dump);
            fails++;
        } else if (strcmp(got, dump) != 0) {
            printf("FAIL %s%s %s: prints differently after parsing\n", name, cuda ? " (cuda)" : "", stage);
            show_diff(dump, got);
            fails++;
        }
        nchecked++;
        free(got);
        mt_arena_destroy(a);
    }
    mt_kernel_release(k);
    return fails;
}

static int check_dir(const char *sub, bool cuda, int *n) {
    const char *root = getenv("MT_SOURCE_DIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", root ? root : ".", sub);
    DIR *dp = opendir(dir);
    if (!dp) fail_msg("cannot open %s", dir);
    int fails = 0;
    for (struct dirent *e; (e = readdir(dp));) {
        size_t len = strlen(e->d_name);
        if (len <= 3 || strcmp(e->d_name + len - 3, ".py") != 0) continue;
        if (!strcmp(e->d_name, "compare.py")) continue; /* the GPU script's checker, not a kernel */
        if (!cuda && !strcmp(e->d_name, "mixed.py")) continue; /* needs device("gpu"): cuda only */
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *src = test_read_file(path);
        if (!src) fail_msg("cannot read %s", path);
        if (cuda && strstr(src, "@T.schedule(")) { /* a schedule is for one target: the CPU's here */
            printf("round trip (cuda): %s left out: its schedule is a CPU schedule\n", e->d_name);
            free(src);
            continue;
        }
        fails += check_source(e->d_name, src, cuda);
        free(src);
        (*n)++;
    }
    closedir(dp);
    return fails;
}

static void run_all(bool cuda) {
    int n = 0, fails = 0;
    nchecked = 0;
    fails += check_dir("tests/golden", cuda, &n);
    fails += check_dir("examples/kernels", cuda, &n);
    fails += check_dir("tests/gpu", cuda, &n);
    for (int i = 0; i < (int)(sizeof extra_programs / sizeof extra_programs[0]); i++, n++)
        fails += check_source(extra_names[i], extra_programs[i], cuda);
    printf("TIR round trip%s: %d programs, %d dumps, %d failed\n", cuda ? " (cuda)" : "", n, nchecked, fails);
    assert_true(n >= 20);
    assert_true(nchecked >= 2 * n - 2);
    assert_int_equal(fails, 0);
}

static void test_roundtrip_cpu(void **state) {
    (void)state;
    run_all(false);
}

static void test_roundtrip_cuda(void **state) {
    (void)state;
    run_all(true);
}

/* A dump with one buffer renamed where it is used is refused at that place. */
static void test_mangled_refused(void **state) {
    (void)state;
    const char *src =
        "@T.prim_func\n"
        "def f(a: T.Buffer((4,), \"float32\"), b: T.Buffer((4,), \"float32\")):\n"
        "    for i in range(4):\n"
        "        b[i] = c[i] * 2.0\n";
    mt_arena *a = mt_arena_create();
    const char *err = NULL;
    char *got = reprint(a, src, &err);
    assert_null(got);
    assert_string_equal(err, "4:16: unknown name 'c'");
    mt_arena_destroy(a);
}

/* Statements carry the places they were written at (what the verifier and
 * later passes name), and symbolic dims and outputs are what the text says. */
static void test_places_and_signature(void **state) {
    (void)state;
    const char *src =
        "@T.prim_func\n"
        "def f(a: T.Buffer((\"n\", 4), \"float32\"), b: T.Buffer((\"n\", 4), \"float32\")):\n"
        "    for i, j in T.grid(n, 4):\n"
        "        with T.block(\"s\"):\n"
        "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
        "            b[vi, vj] = a[vi, vj] * 2.0\n";
    mt_arena *a = mt_arena_create();
    mt_errframe fr;
    if (!MT_TRY(&fr)) {
        mt_err_pop(&fr);
        fail_msg("%d:%d: %s", fr.loc.line, fr.loc.col, fr.msg);
    }
    mt_ast *m = mt_parse(a, src, strlen(src), NULL);
    int n;
    mt_tfunc **fs = mt_tir_from_module(a, m, &n);
    mt_err_pop(&fr);
    assert_int_equal(n, 1);
    const mt_tfunc *f = fs[0];
    assert_int_equal(f->loc.line, 2);
    assert_int_equal(f->nsym, 1);
    assert_string_equal(f->sym_vars[0]->name, "n");
    assert_int_equal(f->num_outputs, 1);
    const mt_tstmt *outer = f->body, *inner = outer->body, *blk = inner->body, *st = blk->body;
    assert_int_equal(outer->kind, TS_FOR);
    assert_int_equal(outer->loc.line, 3);
    assert_int_equal(outer->loc.col, 5);
    assert_int_equal(inner->kind, TS_FOR);
    assert_int_equal(blk->kind, TS_BLOCK);
    assert_int_equal(blk->loc.line, 4);
    assert_int_equal(blk->nreads, 1); /* inferred */
    assert_int_equal(blk->nwrites, 1);
    assert_ptr_equal(blk->writes[0].buf, f->params[1].buf);
    assert_int_equal(st->kind, TS_STORE);
    assert_int_equal(st->loc.line, 6);
    assert_int_equal(st->loc.col, 13);
    mt_arena_destroy(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_cpu),
        cmocka_unit_test(test_roundtrip_cuda),
        cmocka_unit_test(test_mangled_refused),
        cmocka_unit_test(test_places_and_signature),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
