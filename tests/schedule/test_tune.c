/*
 * test_tune.c -- knobs, tuning logs and mt_tune (docs/schedule.md "Tuning").
 *
 *  - knobs: validation names the rule or the knob; every candidate value of
 *    every knob (and each range's ends) gives the default's results.
 *  - logs: malformed lines are diagnosed at FILE:LINE:COL; a round trip
 *    (tune, then compile with the log) applies the record's knobs, seen in
 *    the tir-sched dump, with the default's results; a record for another
 *    rule is ignored; the log's content keys the compile cache; a log that
 *    is a symbolic link stays one.
 *  - workloads: the same function in two programs has one key.
 *  - mt_tune refuses symbolic dims and target cuda.
 */
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_internal.h"
#include "schedule/knobs.h"
#include "schedule/tuning.h"
#include "test_util.h"

static const char *MM =
    "def mm(a: Tensor(shape=(37, 45), dtype=\"float32\"), b: Tensor(shape=(45, 29), dtype=\"float32\")):\n"
    "    return a @ b\n";
/* few rows: the gemv schedule (M < 16) */
static const char *SKINNY =
    "def mm(a: Tensor(shape=(12, 70), dtype=\"float32\"), b: Tensor(shape=(70, 53), dtype=\"float32\")):\n"
    "    return a @ b\n";
static const char *SOFTMAX =
    "def sm(x: Tensor(shape=(37, 45), dtype=\"float32\")):\n"
    "    return softmax(x, axis=-1)\n";
static const char *ARGMAX =
    "def am(x: Tensor(shape=(37, 45), dtype=\"float32\")):\n"
    "    return argmax(x, axis=-1)\n";
/* conv2d: a 3x3 layer with padding (channel and column tails), and a 1x1
 * layer (a matmul per image unless pointwise=0) */
static const char *CONV3 =
    "def cv(x: Tensor(shape=(2, 5, 11, 11), dtype=\"float32\"), w: Tensor(shape=(13, 5, 3, 3), dtype=\"float32\"),\n"
    "       b: Tensor(shape=(13, 1, 1), dtype=\"float32\")):\n"
    "    return relu(conv2d(x, w, padding=1) + b)\n";
static const char *CONV1 =
    "def cv(x: Tensor(shape=(2, 16, 9, 9), dtype=\"float32\"), w: Tensor(shape=(20, 16, 1, 1), dtype=\"float32\")):\n"
    "    return conv2d(x, w)\n";
static const char *EWISE =
    "def ew(x: Tensor(shape=(300, 301), dtype=\"float32\"), y: Tensor(shape=(300, 301), dtype=\"float32\")):\n"
    "    return x * y + x\n";

/* ---- helpers -------------------------------------------------------------------- */

static char log_path[64];

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static mt_kernel *compile_log(mt_context *ctx, const char *src, const char *log_text, mt_diag *diag) {
    mt_compile_options o;
    mt_compile_options_init(&o);
    if (log_text) {
        write_file(log_path, log_text);
        o.tuning_log = log_path;
    }
    return mt_jit_compile(ctx, src, &o, diag);
}

/* The workload of the program's first tunable function. */
static mt_workload first_workload(mt_context *ctx, const char *src) {
    mt_diag d;
    mt_kernel *k = mt_jit_compile_tuning(ctx, src, NULL, NULL, NULL, MT_COMPILE_UNCACHED | MT_COMPILE_WORKLOADS, &d);
    assert_non_null(k);
    const mt_workload *ws;
    int n = mt_kernel_workloads(k, &ws);
    mt_workload w;
    memset(&w, 0, sizeof w);
    for (int i = 0; i < n; i++)
        if (ws[i].rule) {
            w = ws[i];
            break;
        }
    assert_non_null(w.rule);
    static char target[256], rule[64];
    snprintf(target, sizeof target, "%s", w.target);
    snprintf(rule, sizeof rule, "%s", w.rule);
    w.target = target, w.rule = rule, w.func = NULL;
    mt_kernel_release(k);
    return w;
}

static char *record_line(const mt_workload *w, const char *rule, const char *knobs) {
    static char buf[1024];
    snprintf(buf, sizeof buf, "{\"workload\": \"%s\", \"target\": \"%s\", \"rule\": \"%s\", \"knobs\": {%s}}\n",
             w->key, w->target, rule, knobs);
    return buf;
}

/* Runs k on fixed inputs; the first result (release it). */
static mt_tensor *run(mt_kernel *k) {
    int n = mt_kernel_num_params(k);
    mt_tensor *args[4];
    for (int i = 0; i < n; i++) {
        int64_t shape[4];
        int nd = mt_kernel_param_ndim(k, i);
        for (int d = 0; d < nd; d++) shape[d] = mt_kernel_param_dim(k, i, d);
        args[i] = mt_tensor_create(MT_FLOAT32, nd, shape);
        float *p = mt_tensor_data(args[i]);
        for (int64_t j = 0; j < mt_tensor_numel(args[i]); j++) p[j] = (float)((j * 7 + i * 3) % 11) / 5.0f - 1.0f;
    }
    mt_tensor *out = NULL;
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, args, n, &out, 1, &d), MT_OK);
    for (int i = 0; i < n; i++) mt_tensor_release(args[i]);
    return out;
}

static void assert_close(const mt_tensor *x, const mt_tensor *y) {
    assert_int_equal(mt_tensor_numel(x), mt_tensor_numel(y));
    const float *p = mt_tensor_data(x), *q = mt_tensor_data(y);
    for (int64_t i = 0; i < mt_tensor_numel(x); i++)
        if (fabsf(p[i] - q[i]) > 1e-4f * (1 + fabsf(q[i]))) fail_msg("element %lld: %g vs %g", (long long)i, p[i], q[i]);
}

static void assert_contains(const char *text, const char *what) {
    if (!text || !strstr(text, what)) fail_msg("'%s' not found in:\n%s", what, text ? text : "(null)");
}

/* ---- knobs ------------------------------------------------------------------------ */

static void check_msg(mt_knobs *k, const char *want) {
    char buf[200];
    const char *m = mt_knobs_check(k, buf, sizeof buf);
    if (!want) {
        assert_null(m);
        return;
    }
    assert_non_null(m);
    assert_contains(m, want);
}

static void test_knob_validation(void **state) {
    (void)state;
    mt_knobs k = {"schedule_matmul", {{"mr", 4}, {"nc", 256}}, 2};
    check_msg(&k, NULL);
    k.kv[0].value = 99;
    check_msg(&k, "knob 'mr' of rule schedule_matmul: 99 is not in 1..16");
    k.kv[0].name = "tile";
    check_msg(&k, "rule schedule_matmul has no knob 'tile'");
    mt_knobs r = {"schedule_reduce", {{"lanes", 6}}, 1};
    check_msg(&r, "knob 'lanes' of rule schedule_reduce: 6 is not a power of two in 1..64");
    mt_knobs u = {"schedule_pool", {{"x", 1}}, 0};
    check_msg(&u, "rule 'schedule_pool' has no knobs");
    mt_knobs d = {"schedule", {{"parallel", 0}, {"parallel", 1}}, 2};
    check_msg(&d, "knob 'parallel' given twice");
}

/* Every candidate (and both ends of the range, up to a size that compiles
 * quickly) of every knob of rule gives the default's results on src. */
static void every_value(const char *src, const char *rule) {
    mt_context *ctx = mt_context_create(NULL);
    mt_workload w = first_workload(ctx, src);
    assert_string_equal(w.rule, rule);
    mt_diag d;
    mt_kernel *k0 = compile_log(ctx, src, NULL, &d);
    assert_non_null(k0);
    mt_tensor *ref = run(k0);
    const mt_rule_knobs *sp = mt_knob_space(rule);
    for (int i = 0; i < sp->n; i++) {
        const mt_knob_def *def = &sp->defs[i];
        int64_t vals[MT_KNOB_MAX_CANDIDATES + 2];
        int nv = 0;
        for (int c = 0; c < def->ncand; c++) vals[nv++] = def->cand[c];
        vals[nv++] = def->lo;
        if (def->hi <= 64) vals[nv++] = def->hi;
        for (int v = 0; v < nv; v++) {
            char knobs[96];
            snprintf(knobs, sizeof knobs, "\"%s\": %lld", def->name, (long long)vals[v]);
            mt_kernel *k = compile_log(ctx, src, record_line(&w, rule, knobs), &d);
            if (!k) fail_msg("%s: %s", knobs, d.text);
            mt_tensor *out = run(k);
            assert_close(out, ref);
            mt_tensor_release(out);
            mt_kernel_release(k);
        }
    }
    mt_tensor_release(ref);
    mt_kernel_release(k0);
    mt_context_destroy(ctx);
}

static void test_every_matmul_knob(void **state) {
    (void)state;
    every_value(MM, "schedule_matmul");
    every_value(SKINNY, "schedule_matmul");
}

static void test_every_reduce_knob(void **state) {
    (void)state;
    every_value(SOFTMAX, "schedule_reduce");
    every_value(ARGMAX, "schedule_reduce");
}

static void test_every_conv_knob(void **state) {
    (void)state;
    every_value(CONV3, "schedule_conv");
    every_value(CONV1, "schedule_conv");
}

static void test_every_default_knob(void **state) {
    (void)state;
    every_value(EWISE, "schedule");
}

/* ---- logs --------------------------------------------------------------------------- */

static void expect_log_error(mt_context *ctx, const char *text, int line, const char *msg) {
    mt_diag d;
    mt_kernel *k = compile_log(ctx, MM, text, &d);
    assert_null(k);
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    assert_int_equal(d.line, line);
    char where[96];
    snprintf(where, sizeof where, "%s:%d:", log_path, line);
    assert_contains(d.text, where);
    assert_contains(d.text, msg);
}

static void test_malformed_lines(void **state) {
    (void)state;
    mt_context *ctx = mt_context_create(NULL);
    mt_workload w = first_workload(ctx, MM);
    char good[1024], text[4096];
    snprintf(good, sizeof good, "%s", record_line(&w, "schedule_matmul", "\"mr\": 4"));
    snprintf(text, sizeof text, "%s\n%snot json\n", good, good);
    expect_log_error(ctx, text, 4, "'{' expected");
    snprintf(text, sizeof text, "%s{\"workload\": \"%s\", \"target\": \"x\", \"rule\": \"schedule\"}\n", good, w.key);
    expect_log_error(ctx, text, 2, "the record has no \"knobs\"");
    expect_log_error(ctx, record_line(&w, "schedule_matmul", "\"mr\": 4.5"), 1, "an integer knob value expected");
    expect_log_error(ctx, record_line(&w, "schedule_matmul", "\"mr\": 0"), 1, "knob 'mr' of rule schedule_matmul");
    expect_log_error(ctx, record_line(&w, "schedule_matmul", "\"tiles\": 2"), 1, "has no knob 'tiles'");
    expect_log_error(ctx, "{\"workload\": \"abc\"}\n", 1, "workload is not a key of 32 hex digits");
    /* a knob or a member given twice (the last one won, silently) */
    expect_log_error(ctx, record_line(&w, "schedule_matmul", "\"mr\": 4, \"mr\": 2"), 1, "knob 'mr' given twice");
    snprintf(text, sizeof text, "{\"rule\": \"x\", %s", good + 1);
    expect_log_error(ctx, text, 1, "\"rule\" given twice");
    expect_log_error(ctx, record_line(&w, "schedule_matmul", "\"mr\": 99999999999999999999999"), 1,
                     "a knob value beyond 64 bits");
    snprintf(text, sizeof text, "%s trailing", good);
    /* the newline of good ends line 1: " trailing" is line 2 */
    expect_log_error(ctx, text, 2, "'{' expected");
    /* a missing file */
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.tuning_log = "/nonexistent/log.jsonl";
    mt_diag d;
    assert_null(mt_jit_compile(ctx, MM, &o, &d));
    assert_int_equal(d.status, MT_ERR_IO);
    assert_contains(d.text, "cannot read tuning log");
    /* a NUL byte (which ended the text early: the rest was ignored) */
    FILE *f = fopen(log_path, "wb");
    assert_non_null(f);
    fputs(good, f);
    fputs("\n", f);
    fputc(0, f);
    fputs("rest\n", f);
    fclose(f);
    o.tuning_log = log_path;
    assert_null(mt_jit_compile(ctx, MM, &o, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    assert_contains(d.text, ":3:1: error: tuning log: a NUL byte"); /* good, an empty line, the NUL */
    mt_context_destroy(ctx);
}

/* kc and nc at the top of their range with a symbolic K and N: the packed
 * block is clamped (it asked for 4 TiB, and every run failed). */
static void test_huge_pack_knobs(void **state) {
    (void)state;
    static const char *sym = "def mm(a: Tensor((\"m\", \"k\"), \"float32\"), b: Tensor((\"k\", \"n\"), \"float32\")):\n"
                             "    return a @ b\n";
    mt_context *ctx = mt_context_create(NULL);
    mt_workload w = first_workload(ctx, sym);
    mt_diag d;
    mt_kernel *k = compile_log(ctx, sym, record_line(&w, "schedule_matmul", "\"kc\": 1048576, \"nc\": 1048576"), &d);
    if (!k) fail_msg("%s", d.text);
    int64_t sa[2] = {64, 40}, sb[2] = {40, 24};
    mt_tensor *args[2] = {mt_tensor_create(MT_FLOAT32, 2, sa), mt_tensor_create(MT_FLOAT32, 2, sb)}, *out = NULL;
    for (int i = 0; i < 2; i++)
        for (int64_t j = 0; j < mt_tensor_numel(args[i]); j++) ((float *)mt_tensor_data(args[i]))[j] = (float)(j % 5);
    assert_int_equal(mt_kernel_run(k, args, 2, &out, 1, &d), MT_OK);
    const float *A = mt_tensor_data(args[0]), *B = mt_tensor_data(args[1]), *C = mt_tensor_data(out);
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 24; j++) {
            double s = 0;
            for (int q = 0; q < 40; q++) s += (double)A[i * 40 + q] * B[q * 24 + j];
            assert_true(C[i * 24 + j] == (float)s);
        }
    mt_tensor_release(out), mt_tensor_release(args[0]), mt_tensor_release(args[1]);
    mt_kernel_release(k);
    mt_context_destroy(ctx);
}

/* Tune (a tiny budget), compile with the log: its knobs are applied, the
 * results are the default's. */
static void test_round_trip(void **state) {
    (void)state;
    mt_context *ctx = mt_context_create(NULL);
    unlink(log_path);
    mt_tune_options to;
    mt_tune_options_init(&to);
    to.log = log_path;
    to.trials = 3;
    to.seconds = 20;
    mt_diag d;
    assert_int_equal(mt_tune(ctx, MM, NULL, &to, &d), MT_OK);
    char *text = test_read_file(log_path);
    assert_non_null(text);
    mt_workload w = first_workload(ctx, MM);
    assert_contains(text, w.key);
    assert_contains(text, "\"rule\": \"schedule_matmul\"");
    assert_contains(text, "\"default_ms\": ");
    /* tuning again replaces the record: still one line */
    assert_int_equal(mt_tune(ctx, MM, NULL, &to, &d), MT_OK);
    char *again = test_read_file(log_path);
    assert_non_null(strchr(again, '\n'));
    assert_null(strchr(strchr(again, '\n') + 1, '\n'));
    /* a record with knobs of our own, appended after the tuned one: replaces it */
    char log2[4096];
    snprintf(log2, sizeof log2, "%s%s", again, record_line(&w, "schedule_matmul", "\"mr\": 4, \"parallel\": 0"));
    mt_kernel *k0 = compile_log(ctx, MM, NULL, &d);
    mt_kernel *k1 = compile_log(ctx, MM, log2, &d);
    assert_non_null(k1);
    assert_contains(mt_kernel_dump(k1, MT_STAGE_TIR_SCHED), "\"knobs\": \"mr=4 parallel=0\"");
    assert_null(strstr(mt_kernel_dump(k0, MT_STAGE_TIR_SCHED), "\"knobs\""));
    mt_tensor *r0 = run(k0), *r1 = run(k1);
    assert_close(r1, r0);
    mt_tensor_release(r0);
    mt_tensor_release(r1);
    mt_kernel_release(k0);
    mt_kernel_release(k1);
    free(text);
    free(again);
    mt_context_destroy(ctx);
}

/* A log that is a symbolic link stays one: the file it points at is
 * rewritten, keeping its permissions; a link (here a chain of two, the
 * first relative) to nothing yet creates its target. A log that is not a
 * regular file is refused before any tuning. */
static void test_log_link(void **state) {
    (void)state;
    mt_context *ctx = mt_context_create(NULL);
    char target[96], link[96], link2[96];
    snprintf(target, sizeof target, "%s.target", log_path);
    snprintf(link, sizeof link, "%s.link", log_path);
    snprintf(link2, sizeof link2, "%s.link2", log_path);
    unlink(target);
    unlink(link);
    unlink(link2);
    assert_int_equal(symlink(target, link2), 0);
    assert_int_equal(symlink(strrchr(link2, '/') + 1, link), 0); /* relative to /tmp */
    mt_tune_options to;
    mt_tune_options_init(&to);
    to.log = link;
    to.trials = 2;
    to.seconds = 20;
    mt_diag d;
    struct stat st;
    for (int round = 0; round < 2; round++) {
        assert_int_equal(mt_tune(ctx, MM, NULL, &to, &d), MT_OK);
        assert_int_equal(lstat(link, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        char *text = test_read_file(target);
        assert_non_null(text);
        assert_contains(text, "\"rule\": \"schedule_matmul\"");
        free(text);
        if (round == 0) assert_int_equal(chmod(target, 0640), 0);
    }
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(lstat(link2, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    unlink(link);
    unlink(link2);
    unlink(target);
    to.log = "/tmp";
    assert_int_equal(mt_tune(ctx, MM, NULL, &to, &d), MT_ERR_IO);
    assert_non_null(strstr(d.text, "not a regular file"));
    mt_context_destroy(ctx);
}

/* A record whose rule is not the one that matches is ignored. */
static void test_other_rule_ignored(void **state) {
    (void)state;
    mt_context *ctx = mt_context_create(NULL);
    mt_workload w = first_workload(ctx, MM);
    mt_diag d;
    mt_kernel *k = compile_log(ctx, MM, record_line(&w, "schedule_reduce", "\"lanes\": 4"), &d);
    assert_non_null(k);
    assert_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "\"knobs\""));
    mt_kernel_release(k);
    mt_context_destroy(ctx);
}

/* With and without a log, and with two logs: three kernels; the same log twice: one. */
static void test_cache_key(void **state) {
    (void)state;
    mt_context *ctx = mt_context_create(NULL);
    mt_workload w = first_workload(ctx, MM);
    mt_diag d;
    mt_kernel *k0 = compile_log(ctx, MM, NULL, &d);
    mt_kernel *k1 = compile_log(ctx, MM, record_line(&w, "schedule_matmul", "\"mr\": 2"), &d);
    mt_kernel *k2 = compile_log(ctx, MM, record_line(&w, "schedule_matmul", "\"mr\": 2"), &d);
    mt_kernel *k3 = compile_log(ctx, MM, record_line(&w, "schedule_matmul", "\"mr\": 3"), &d);
    assert_true(k0 != k1);
    assert_ptr_equal(k1, k2);
    assert_true(k3 != k1);
    assert_contains(mt_kernel_dump(k3, MT_STAGE_TIR_SCHED), "\"knobs\": \"mr=3\"");
    mt_kernel_release(k0);
    mt_kernel_release(k1);
    mt_kernel_release(k2);
    mt_kernel_release(k3);
    mt_context_destroy(ctx);
}

/* The same function, other names, another program around it: one key. */
static void test_workload_key(void **state) {
    (void)state;
    mt_context *ctx = mt_context_create(NULL);
    const char *other =
        "def g(x: Tensor(shape=(37, 45), dtype=\"float32\"), y: Tensor(shape=(45, 29), dtype=\"float32\"),\n"
        "      z: Tensor(shape=(8,), dtype=\"float32\")):\n"
        "    u = z * 2.0\n"
        "    return x @ y, u\n";
    mt_workload w1 = first_workload(ctx, MM);
    mt_diag d;
    mt_kernel *k = mt_jit_compile_tuning(ctx, other, NULL, NULL, NULL, MT_COMPILE_UNCACHED | MT_COMPILE_WORKLOADS, &d);
    assert_non_null(k);
    const mt_workload *ws;
    int n = mt_kernel_workloads(k, &ws), found = 0;
    for (int i = 0; i < n; i++) found += !strcmp(ws[i].key, w1.key);
    assert_int_equal(found, 1);
    mt_kernel_release(k);
    mt_context_destroy(ctx);
}

static void test_tune_refuses(void **state) {
    (void)state;
    mt_context *ctx = mt_context_create(NULL);
    mt_tune_options to;
    mt_tune_options_init(&to);
    to.log = log_path;
    mt_diag d;
    const char *sym = "def f(a: Tensor(shape=(\"n\", 8), dtype=\"float32\"), b: Tensor(shape=(8, 8), dtype=\"float32\")):\n"
                      "    return a @ b\n";
    assert_int_equal(mt_tune(ctx, sym, NULL, &to, &d), MT_ERR_UNSUPPORTED);
    assert_contains(d.message, "symbolic dim 'n'");
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    o.emulate = 1;
    assert_int_equal(mt_tune(ctx, MM, &o, &to, &d), MT_ERR_UNAVAILABLE);
    assert_contains(d.message, "the emulation's timings say nothing about a GPU");
    to.trials = 0;
    assert_int_equal(mt_tune(ctx, MM, NULL, &to, &d), MT_ERR_INVALID_ARG);
    mt_context_destroy(ctx);
}

/* A log's record for a GPU rule applies to the GPU kernel (here in the
 * emulation: the workload's target is the GPU's, so no CPU record can
 * match it), and the kernel shows the knob. */
static void test_gpu_log(void **state) {
    (void)state;
    mt_context *ctx = mt_context_create(NULL);
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    o.emulate = 1;
    mt_diag d;
    mt_kernel *k = mt_jit_compile_tuning(ctx, MM, &o, NULL, NULL, MT_COMPILE_UNCACHED | MT_COMPILE_WORKLOADS, &d);
    assert_non_null(k);
    const mt_workload *ws;
    int n = mt_kernel_workloads(k, &ws), found = -1;
    for (int i = 0; i < n; i++)
        if (ws[i].rule && !strcmp(ws[i].rule, "gpu_matmul")) found = i;
    if (found < 0) fail_msg("no gpu_matmul workload");
    assert_non_null(strstr(ws[found].target, "cuda"));
    write_file(log_path, record_line(&ws[found], "gpu_matmul", "\"tile\": 64"));
    mt_kernel_release(k);
    o.tuning_log = log_path;
    k = mt_jit_compile(ctx, MM, &o, &d);
    if (!k) fail_msg("%s", d.text);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "\"knobs\": \"tile=64\""));
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "# matmul: the default rule gpu_matmul, knobs tile=64"));
    mt_kernel_release(k);
    mt_context_destroy(ctx);
}

/* Target cuda without the emulation measures on the GPU: where there is
 * one (scripts/gpu_check.sh runs this suite there) it tunes and writes a
 * record for the GPU row rule; without one it is MT_ERR_UNAVAILABLE, as
 * any run on the GPU would be. */
static void test_gpu_tune(void **state) {
    (void)state;
    mt_context *ctx = mt_context_create(NULL);
    mt_tune_options to;
    mt_tune_options_init(&to);
    to.log = log_path;
    to.trials = 4;
    to.seconds = 10;
    remove(log_path);
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    mt_diag d;
    const char *sm = "def f(x: Tensor((4096, 1024), \"float32\")):\n    return softmax(x, axis=-1)\n";
    mt_status st = mt_tune(ctx, sm, &o, &to, &d);
    if (st == MT_OK) {
        char *text = test_read_file(log_path);
        assert_non_null(text);
        print_message("tuned on the GPU: %s", text);
        assert_non_null(strstr(text, "\"rule\": \"gpu_reduce_rows\""));
        free(text);
    } else {
        print_message("no GPU here (%s): tuning for target cuda is unavailable, as it should be\n", d.message);
        assert_int_equal(st, MT_ERR_UNAVAILABLE);
    }
    mt_context_destroy(ctx);
}

int main(void) {
    snprintf(log_path, sizeof log_path, "/tmp/mt_test_tune_%ld.jsonl", (long)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_knob_validation),  cmocka_unit_test(test_every_matmul_knob),
        cmocka_unit_test(test_every_reduce_knob), cmocka_unit_test(test_every_default_knob),
        cmocka_unit_test(test_every_conv_knob),
        cmocka_unit_test(test_malformed_lines),
        cmocka_unit_test(test_huge_pack_knobs),  cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_log_link),
        cmocka_unit_test(test_other_rule_ignored), cmocka_unit_test(test_cache_key),
        cmocka_unit_test(test_workload_key),     cmocka_unit_test(test_tune_refuses),
        cmocka_unit_test(test_gpu_log),          cmocka_unit_test(test_gpu_tune),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(log_path);
    return rc;
}
