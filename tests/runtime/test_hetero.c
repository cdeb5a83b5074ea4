/*
 * test_hetero.c -- heterogeneous programs: hand-made plans (runtime/executor.h)
 * whose values live on the CPU and on the test device (device_test.c), run
 * by the executor.
 *
 * The kernels are plain C functions with the calling convention codegen
 * gives kernels (`void f(T *p0, ..., int64_t n)`), so a kernel "on the test
 * device" is host code that the test device launches on the read-write
 * aliases of its memory: had the executor passed it a host address, the
 * launch would be refused; had it run a CPU kernel on a test address, or
 * read a test scalar itself, the process would fault. What is checked:
 * values copied CPU -> test -> CPU with kernels on both; results left on the
 * test device; if and loop on scalars that live there; an assertion there;
 * arguments and result slots on the wrong device refused with a message
 * naming both; a plan missing a copy refused by mt_plan_prepare; a device
 * the run cannot find; zeroed device fields meaning the CPU; several threads
 * running one plan; every block given back to the pool and the device.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fault_guard.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "runtime/memplan.h"
#include "runtime/pool.h"
#include "runtime/tensor.h"

static const mt_device CPU = {MT_DEVICE_CPU, 0}, TEST = {MT_DEVICE_TEST, 0};

/* ---- kernels ------------------------------------------------------------------ */

static void k_scale2(const float *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = 2 * x[i];
}

static void k_add1(const float *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = x[i] + 1;
}

static void k_positive(const float *x, uint8_t *flag, int64_t n) { *flag = n > 0 && x[0] > 0; }

/* ---- plans by hand ------------------------------------------------------------- */

enum { MAXV = 16, MAXC = 8, MAXI = 32, MAXBLOCKS = 256 };

typedef struct hplan {
    mt_plan p;
    mt_plan_value vals[MAXV];
    mt_plan_call calls[MAXC];
    int call_args[MAXC][4];
    int call_syms[MAXC][1];
    mt_instr code[MAXI];
    int results[4];
    const char *sym_names[1];
    void *blocks[MAXBLOCKS]; /* what mt_plan_prepare allocated */
    int nblocks;
} hplan;

static hplan *plan_new(void) {
    hplan *h = calloc(1, sizeof *h);
    h->p.values = h->vals;
    h->p.calls = h->calls;
    h->p.instrs = h->code;
    h->p.results = h->results;
    h->sym_names[0] = "n";
    h->p.sym_names = h->sym_names;
    h->p.nsyms = 1;
    return h;
}

static void *plan_alloc(void *ctx, size_t n) {
    hplan *h = ctx;
    if (h->nblocks == MAXBLOCKS) fail_msg("too many plan allocations");
    return h->blocks[h->nblocks++] = calloc(1, n);
}

static void plan_free(hplan *h) {
    for (int i = 0; i < h->nblocks; i++) free(h->blocks[i]);
    free(h);
}

/* A value: rank 1 of length n (the symbol), or rank 0 when scalar. */
static int value(hplan *h, const char *name, mt_value_kind kind, mt_dtype dt, bool scalar,
                 mt_device dev) {
    int id = h->p.nvalues++;
    mt_plan_value *v = &h->vals[id];
    v->kind = kind;
    v->name = name;
    v->dtype = dt;
    v->ndim = scalar ? 0 : 1;
    v->dims[0] = (mt_plan_dim){0, 0};
    v->device = dev;
    if (kind == MT_VAL_PARAM) v->param = h->p.nparams++;
    return id;
}

static int iconst(hplan *h, const char *name, int64_t c, mt_device dev) {
    int id = value(h, name, MT_VAL_CONST, MT_INT64, true, dev);
    h->vals[id].iconst = c;
    return id;
}

/* An instruction; returns its index. */
static int emit(hplan *h, mt_instr_kind kind, int a, int b, int c) {
    int i = h->p.ninstrs++;
    h->code[i] = (mt_instr){.kind = kind, .a = a, .b = b, .c = c};
    return i;
}

/* A call of fn(in, out, n) on dev. */
static int call(hplan *h, void (*fn)(void), const char *name, mt_device dev, int in, int out) {
    int c = h->p.ncalls++;
    mt_plan_call *k = &h->calls[c];
    k->fn = (void *)fn;
    k->name = name;
    k->device = dev;
    k->nargs = 2;
    k->args = h->call_args[c];
    k->args[0] = in;
    k->args[1] = out;
    k->nsyms = 1;
    k->syms = h->call_syms[c];
    k->syms[0] = 0;
    return emit(h, MT_I_CALL, c, 0, 0);
}

#define CALL(h, fn, dev, in, out) call(h, (void (*)(void))fn, #fn + 2, dev, in, out)

static void result(hplan *h, int id) { h->results[h->p.nresults++] = id; }

static void prepare_ok(hplan *h) {
    mt_run_error err;
    mt_status st = mt_plan_prepare(&h->p, plan_alloc, h, &err);
    if (st != MT_OK) fail_msg("mt_plan_prepare: %s", err.msg);
}

/* ---- the run's environment ------------------------------------------------------- */

static mt_dev *tdev;     /* test:0 */
static mt_pool *pool;    /* the CPU device's */
static mt_dev *cpu;
static mt_dev_list devices;
static mt_run_env env;

static int setup(void **state) {
    (void)state;
    mt_dev_err e;
    tdev = mt_dev_test_create(0, &e);
    pool = mt_pool_create(0);
    cpu = mt_dev_cpu_create(pool);
    static mt_dev *list[1];
    list[0] = tdev;
    devices = (mt_dev_list){1, list};
    env = (mt_run_env){.cpu = cpu, .find_device = mt_dev_list_find, .find_ctx = &devices};
    return tdev && pool && cpu ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    mt_dev_release(tdev);
    mt_dev_release(cpu);
    mt_pool_close(pool);
    return 0;
}

static mt_dev_test_stats stats(void) {
    mt_dev_test_stats s;
    mt_dev_test_get_stats(tdev, &s);
    return s;
}

/* Nothing of a run is left: no test block, no pool block. */
static void assert_all_returned(void) {
    assert_int_equal(stats().live_blocks, 0);
    mt_pool_stats ps;
    mt_pool_get_stats(pool, &ps);
    assert_int_equal(ps.live_bytes, 0);
}

static mt_tensor *host_vec(int64_t n, float first) {
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, 1, &n);
    float *p = mt_tensor_data(t);
    for (int64_t i = 0; i < n; i++) p[i] = first + 0.5f * (float)i;
    return t;
}

static void read_float(void *p) {
    volatile float f = *(volatile float *)p;
    (void)f;
}

/* The floats of a tensor on any device, in a host copy (released by the caller). */
static mt_tensor *to_host(const mt_tensor *t) {
    mt_tensor *h = mt_tensor_create(t->dtype, t->ndim, t->shape);
    mt_dev_err e;
    if (mt_tensor_copy(h, t, &e) != MT_OK) fail_msg("copy to the host: %s", e.msg);
    return h;
}

static void assert_floats(const mt_tensor *t, const mt_tensor *x, float mul, float add) {
    mt_tensor *h = to_host(t);
    const float *got = mt_tensor_data(h), *in = mt_tensor_data(x);
    for (int64_t i = 0; i < mt_tensor_numel(x); i++)
        if (got[i] != in[i] * mul + add)
            fail_msg("element %lld: %g, want %g", (long long)i, got[i], in[i] * mul + add);
    mt_tensor_release(h);
}

/* ---- programs ------------------------------------------------------------------- */

/* c = (2 a on the test device) + 1 on the CPU:
 *   a_t <- a; scale2@test(a_t, b_t); b <- b_t; add1@cpu(b, c) */
static hplan *chain_plan(void) {
    hplan *h = plan_new();
    int a = value(h, "a", MT_VAL_PARAM, MT_FLOAT32, false, CPU);
    int at = value(h, "a_t", MT_VAL_TEMP, MT_FLOAT32, false, TEST);
    int bt = value(h, "b_t", MT_VAL_TEMP, MT_FLOAT32, false, TEST);
    int b = value(h, "b", MT_VAL_TEMP, MT_FLOAT32, false, CPU);
    int c = value(h, "c", MT_VAL_TEMP, MT_FLOAT32, false, CPU);
    emit(h, MT_I_COPY, at, a, 0);
    CALL(h, k_scale2, TEST, at, bt);
    emit(h, MT_I_COPY, b, bt, 0);
    CALL(h, k_add1, CPU, b, c);
    result(h, c);
    prepare_ok(h);
    return h;
}

static void test_copy_chain(void **state) {
    (void)state;
    hplan *h = chain_plan();
    assert_int_equal(h->p.ndevices, 2);
    assert_int_equal(h->p.mem->narenas, 2);
    char *text = mt_memplan_print(h->p.mem, &h->p, plan_alloc, h);
    assert_non_null(strstr(text, "#   on test:0"));
    assert_non_null(strstr(text, "a_t"));
    int64_t lens[3] = {1000, 7, 0}; /* symbolic: laid out per run */
    for (int k = 0; k < 3; k++) {
        mt_dev_test_stats before = stats();
        mt_tensor *x = host_vec(lens[k], -3), *out = NULL;
        mt_run_error err;
        assert_int_equal(mt_plan_run(&h->p, &env, &x, 1, &out, 1, &err), MT_OK);
        assert_int_equal(mt_tensor_device(out).type, MT_DEVICE_CPU);
        assert_floats(out, x, 2, 1);
        assert_int_equal(stats().launches, before.launches + 1);
        assert_true(stats().copies >= before.copies + (lens[k] ? 2 : 0)); /* 0 bytes: none */
        assert_true(stats().syncs > before.syncs);
        mt_tensor_release(out);
        mt_tensor_release(x);
        assert_all_returned();
    }
    plan_free(h);
}

/* All on the test device: b = scale2@test(a); returns b (and a). */
static hplan *device_plan(bool return_a) {
    hplan *h = plan_new();
    int a = value(h, "a", MT_VAL_PARAM, MT_FLOAT32, false, TEST);
    int b = value(h, "b", MT_VAL_TEMP, MT_FLOAT32, false, TEST);
    CALL(h, k_scale2, TEST, a, b);
    result(h, b);
    if (return_a) result(h, a);
    prepare_ok(h);
    return h;
}

/* Results on the test device: a new one, the caller's, and a parameter
 * returned (a copy on the device). */
static void test_results_on_device(void **state) {
    (void)state;
    hplan *h = device_plan(true);
    int64_t n = 300;
    mt_tensor *x = host_vec(n, 1), *xt = mt_tensor_create_on(tdev, MT_FLOAT32, 1, &n);
    mt_dev_err e;
    assert_int_equal(mt_tensor_copy(xt, x, &e), MT_OK);
    mt_tensor *outs[2] = {NULL, NULL};
    mt_run_error err;
    assert_int_equal(mt_plan_run(&h->p, &env, &xt, 1, outs, 2, &err), MT_OK);
    assert_int_equal(mt_tensor_device(outs[0]).type, MT_DEVICE_TEST);
    assert_int_equal(mt_tensor_device(outs[1]).type, MT_DEVICE_TEST);
    assert_true(faults(read_float, mt_tensor_data(outs[0]))); /* not host memory */
    assert_floats(outs[0], x, 2, 0);
    assert_floats(outs[1], x, 1, 0);
    assert_ptr_not_equal(mt_tensor_data(outs[1]), mt_tensor_data(xt));
    mt_tensor_release(outs[0]);
    mt_tensor_release(outs[1]);
    /* the caller's slot on the CPU is refused; on the device it is written */
    mt_tensor *hostslot = mt_tensor_create(MT_FLOAT32, 1, &n);
    outs[0] = hostslot;
    outs[1] = NULL;
    assert_int_equal(mt_plan_run(&h->p, &env, &xt, 1, outs, 2, &err), MT_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "result 0 is on cpu but the kernel returns it on test:0");
    assert_int_equal(err.result, 0);
    mt_tensor *devslot = mt_tensor_create_on(tdev, MT_FLOAT32, 1, &n);
    outs[0] = devslot;
    assert_int_equal(mt_plan_run(&h->p, &env, &xt, 1, outs, 2, &err), MT_OK);
    assert_ptr_equal(outs[0], devslot);
    assert_floats(devslot, x, 2, 0);
    mt_tensor_release(outs[1]);
    mt_tensor *all[] = {x, xt, hostslot, devslot};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) mt_tensor_release(all[i]);
    assert_all_returned();
    plan_free(h);
}

/* The start of a program that tests a flag computed on the test device:
 *   x_t <- x; positive@test(x_t, flag_t)
 * with x (the parameter), flag_t and out (a CPU result) set. */
static hplan *flag_plan(int *x, int *flag, int *out) {
    hplan *h = plan_new();
    *x = value(h, "x", MT_VAL_PARAM, MT_FLOAT32, false, CPU);
    int xt = value(h, "x_t", MT_VAL_TEMP, MT_FLOAT32, false, TEST);
    *flag = value(h, "flag_t", MT_VAL_TEMP, MT_BOOL, true, TEST);
    *out = value(h, "out", MT_VAL_TEMP, MT_FLOAT32, false, CPU);
    emit(h, MT_I_COPY, xt, *x, 0);
    CALL(h, k_positive, TEST, xt, *flag);
    result(h, *out);
    return h;
}

/* if on a flag computed on the test device:
 *   (flag_plan); if flag_t: scale2@cpu(x, out) else: add1@cpu(x, out) */
static void test_if_on_device(void **state) {
    (void)state;
    int x, flag, out;
    hplan *h = flag_plan(&x, &flag, &out);
    int jelse = emit(h, MT_I_JUMP_IF_NOT, flag, 0, 0);
    CALL(h, k_scale2, CPU, x, out);
    int jend = emit(h, MT_I_JUMP, 0, 0, 0);
    h->code[jelse].target = CALL(h, k_add1, CPU, x, out);
    h->code[jend].target = h->p.ninstrs;
    prepare_ok(h);
    for (int sign = -1; sign <= 1; sign += 2) {
        mt_tensor *in = host_vec(50, 3.0f * (float)sign), *o = NULL;
        mt_run_error err;
        assert_int_equal(mt_plan_run(&h->p, &env, &in, 1, &o, 1, &err), MT_OK);
        if (sign > 0) assert_floats(o, in, 2, 0);
        else assert_floats(o, in, 1, 1);
        mt_tensor_release(o);
        mt_tensor_release(in);
    }
    assert_all_returned();
    plan_free(h);
}

/* A loop whose counter, bound and step live on the test device, the bound
 * a rank-0 argument there:
 *   out <- x; i <- 0; while i < steps: scale2@cpu(out, tmp); out <- tmp; i += 1 */
static void test_loop_on_device(void **state) {
    (void)state;
    hplan *h = plan_new();
    int x = value(h, "x", MT_VAL_PARAM, MT_FLOAT32, false, CPU);
    int steps = value(h, "steps", MT_VAL_PARAM, MT_INT64, true, TEST);
    int out = value(h, "out", MT_VAL_TEMP, MT_FLOAT32, false, CPU);
    int tmp = value(h, "tmp", MT_VAL_TEMP, MT_FLOAT32, false, CPU);
    int i = value(h, "i", MT_VAL_TEMP, MT_INT64, true, TEST);
    int zero = iconst(h, "zero", 0, TEST), one = iconst(h, "one", 1, TEST);
    emit(h, MT_I_COPY, out, x, 0);
    emit(h, MT_I_COPY, i, zero, 0);
    int test = emit(h, MT_I_LOOP_TEST, i, steps, one);
    CALL(h, k_scale2, CPU, out, tmp);
    emit(h, MT_I_COPY, out, tmp, 0);
    emit(h, MT_I_LOOP_STEP, i, 0, one);
    h->code[emit(h, MT_I_JUMP, 0, 0, 0)].target = test;
    h->code[test].target = h->p.ninstrs;
    result(h, out);
    prepare_ok(h);
    mt_tensor *st = mt_tensor_create_on(tdev, MT_INT64, 0, NULL);
    for (int64_t k = 0; k <= 3; k += 3) {
        mt_dev_err e;
        assert_int_equal(tdev->ops->copy_h2d(tdev, mt_tensor_data(st), &k, sizeof k, &e), MT_OK);
        mt_tensor *args[2] = {host_vec(64, -1), st}, *o = NULL;
        mt_dev_test_stats before = stats();
        mt_run_error err;
        assert_int_equal(mt_plan_run(&h->p, &env, args, 2, &o, 1, &err), MT_OK);
        assert_floats(o, args[0], k == 3 ? 8 : 1, 0);
        /* every test, step and the counter's init went through the device */
        assert_true(stats().copies >= before.copies + 1 + 3 * (k + 1) + 2 * k);
        assert_int_equal(stats().launches, before.launches);
        mt_tensor_release(o);
        mt_tensor_release(args[0]);
    }
    mt_tensor_release(st);
    assert_all_returned();
    plan_free(h);
}

/* An assertion on a flag that lives on the test device. */
static void test_assert_on_device(void **state) {
    (void)state;
    int x, flag, out;
    hplan *h = flag_plan(&x, &flag, &out);
    int at = emit(h, MT_I_ASSERT, flag, 0, 0);
    h->code[at].message = "x[0] must be positive";
    h->code[at].line = 4;
    h->code[at].col = 5;
    CALL(h, k_scale2, CPU, x, out);
    prepare_ok(h);
    mt_tensor *neg = host_vec(8, -2), *pos = host_vec(8, 2), *o = NULL;
    mt_run_error err;
    assert_int_equal(mt_plan_run(&h->p, &env, &neg, 1, &o, 1, &err), MT_ERR_RUNTIME);
    assert_string_equal(err.msg, "assertion failed: x[0] must be positive");
    assert_int_equal(err.line, 4);
    assert_int_equal(err.col, 5);
    assert_null(o);
    assert_int_equal(mt_plan_run(&h->p, &env, &pos, 1, &o, 1, &err), MT_OK);
    assert_floats(o, pos, 2, 0);
    mt_tensor_release(o);
    mt_tensor_release(neg);
    mt_tensor_release(pos);
    assert_all_returned();
    plan_free(h);
}

/* An argument on another device than its parameter's is refused, naming
 * both; nothing runs. */
static void test_wrong_device_argument(void **state) {
    (void)state;
    hplan *on_test = device_plan(false), *on_cpu = chain_plan();
    int64_t n = 16;
    mt_tensor *x = host_vec(n, 0), *xt = mt_tensor_create_on(tdev, MT_FLOAT32, 1, &n), *o = NULL;
    mt_dev_test_stats before = stats();
    mt_run_error err;
    assert_int_equal(mt_plan_run(&on_test->p, &env, &x, 1, &o, 1, &err), MT_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "argument 'a' is on cpu but the kernel expects it on test:0");
    assert_int_equal(err.param, 0);
    assert_int_equal(mt_plan_run(&on_cpu->p, &env, &xt, 1, &o, 1, &err), MT_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "argument 'a' is on test:0 but the kernel expects it on cpu");
    assert_null(o);
    assert_int_equal(stats().launches, before.launches);
    assert_int_equal(stats().allocs, before.allocs);
    mt_tensor_release(x);
    mt_tensor_release(xt);
    assert_all_returned();
    plan_free(on_test);
    plan_free(on_cpu);
}

static void *seen_arg;

static void launch_on_cpu(void *p) {
    uint64_t args[3] = {(uintptr_t)p, (uintptr_t)p, 4};
    mt_dev_launch l = {.fn = (void *)k_scale2, .name = "scale2", .nptrs = 2, .nscalars = 1,
                       .args = args};
    mt_dev *c = mt_dev_cpu_heap();
    seen_arg = p;
    c->ops->launch(c, &l, NULL);
}

/* A CPU kernel given a test-device value (the copy missing) is refused
 * when the plan is prepared; run anyway, it would fault (shown by launching
 * the kernel on the CPU with a test address). */
static void test_missing_copy(void **state) {
    (void)state;
    hplan *h = plan_new();
    int a = value(h, "a", MT_VAL_PARAM, MT_FLOAT32, false, CPU);
    int at = value(h, "a_t", MT_VAL_TEMP, MT_FLOAT32, false, TEST);
    int b = value(h, "b", MT_VAL_TEMP, MT_FLOAT32, false, CPU);
    emit(h, MT_I_COPY, at, a, 0);
    CALL(h, k_scale2, CPU, at, b);
    result(h, b);
    mt_run_error err;
    assert_int_equal(mt_plan_prepare(&h->p, plan_alloc, h, &err), MT_ERR_INTERNAL);
    assert_string_equal(err.msg,
                        "kernel 'scale2' runs on cpu but its argument 'a_t' is on test:0: the plan "
                        "lacks a copy");
    plan_free(h);
    /* the converse: a test-device kernel given a CPU value */
    h = plan_new();
    a = value(h, "a", MT_VAL_PARAM, MT_FLOAT32, false, CPU);
    at = value(h, "a_t", MT_VAL_TEMP, MT_FLOAT32, false, TEST);
    CALL(h, k_scale2, TEST, a, at);
    result(h, at);
    assert_int_equal(mt_plan_prepare(&h->p, plan_alloc, h, &err), MT_ERR_INTERNAL);
    assert_string_equal(err.msg,
                        "kernel 'scale2' runs on test:0 but its argument 'a' is on cpu: the plan "
                        "lacks a copy");
    plan_free(h);
    int64_t n = 4;
    mt_tensor *t = mt_tensor_create_on(tdev, MT_FLOAT32, 1, &n);
    assert_true(faults(launch_on_cpu, mt_tensor_data(t)));
    assert_ptr_equal(seen_arg, mt_tensor_data(t));
    mt_tensor_release(t);
}

/* Devices the run cannot find, and plans the executor refuses. */
static void test_device_errors(void **state) {
    (void)state;
    hplan *h = chain_plan();
    mt_tensor *x = host_vec(4, 0), *o = NULL;
    mt_run_error err;
    mt_run_env cpu_only = {.cpu = cpu};
    assert_int_equal(mt_plan_run(&h->p, &cpu_only, &x, 1, &o, 1, &err), MT_ERR_UNAVAILABLE);
    assert_string_equal(err.msg, "the kernel runs on test:0: this run has no device test:0");
    assert_int_equal(mt_plan_run(&h->p, NULL, &x, 1, &o, 1, &err), MT_ERR_UNAVAILABLE);
    mt_dev_list none = {0, NULL};
    mt_run_env empty = {.cpu = cpu, .find_device = mt_dev_list_find, .find_ctx = &none};
    assert_int_equal(mt_plan_run(&h->p, &empty, &x, 1, &o, 1, &err), MT_ERR_UNAVAILABLE);
    assert_string_equal(err.msg, "the kernel runs on test:0: no device test:0 here");
    assert_null(o);
    plan_free(h);
    /* an unprepared plan, a CPU other than cpu:0, more devices than a plan takes */
    h = plan_new();
    int a = value(h, "a", MT_VAL_PARAM, MT_FLOAT32, false, CPU);
    result(h, a);
    assert_int_equal(mt_plan_run(&h->p, &env, &x, 1, &o, 1, &err), MT_ERR_INTERNAL);
    h->vals[a].device = (mt_device){MT_DEVICE_CPU, 1};
    assert_int_equal(mt_plan_prepare(&h->p, plan_alloc, h, &err), MT_ERR_INTERNAL);
    assert_string_equal(err.msg, "the plan names cpu:1: the CPU is cpu:0");
    h->vals[a].device = CPU;
    for (int d = 0; d < MT_PLAN_MAX_DEVICES; d++)
        value(h, "v", MT_VAL_TEMP, MT_FLOAT32, false, (mt_device){MT_DEVICE_TEST, d});
    assert_int_equal(mt_plan_prepare(&h->p, plan_alloc, h, &err), MT_ERR_LIMIT);
    plan_free(h);
    mt_tensor_release(x);
    assert_all_returned();
}

/* A plan made before devices existed (every device field zero) runs on
 * the CPU alone. */
static void test_zero_device_is_cpu(void **state) {
    (void)state;
    hplan *h = plan_new();
    mt_device zero = {0, 0};
    int a = value(h, "a", MT_VAL_PARAM, MT_FLOAT32, false, zero);
    int b = value(h, "b", MT_VAL_TEMP, MT_FLOAT32, false, zero);
    int c = value(h, "c", MT_VAL_TEMP, MT_FLOAT32, false, zero);
    CALL(h, k_scale2, zero, a, b);
    CALL(h, k_add1, zero, b, c);
    result(h, c);
    prepare_ok(h);
    assert_int_equal(h->p.ndevices, 1);
    assert_int_equal(h->p.mem->narenas, 1);
    mt_tensor *x = host_vec(33, 1), *o = NULL;
    mt_run_error err;
    mt_dev_test_stats before = stats();
    assert_int_equal(mt_plan_run(&h->p, NULL, &x, 1, &o, 1, &err), MT_OK); /* the heap CPU */
    assert_floats(o, x, 2, 1);
    assert_int_equal(stats().allocs, before.allocs);
    mt_tensor_release(o);
    mt_tensor_release(x);
    plan_free(h);
}

typedef struct job {
    const mt_plan *p;
    int seed;
    int ok;
} job;

static void *run_many(void *arg) {
    job *j = arg;
    j->ok = 1;
    for (int it = 0; it < 50; it++) {
        mt_tensor *x = host_vec(1 + (j->seed * 37 + it) % 500, (float)it), *o = NULL;
        mt_run_error err;
        if (mt_plan_run(j->p, &env, &x, 1, &o, 1, &err) != MT_OK) j->ok = 0;
        const float *in = mt_tensor_data(x), *got = o ? mt_tensor_data(o) : NULL;
        for (int64_t i = 0; got && i < mt_tensor_numel(x); i++)
            if (got[i] != 2 * in[i] + 1) j->ok = 0;
        mt_tensor_release(o);
        mt_tensor_release(x);
    }
    return NULL;
}

/* One plan run from several threads at once over the same devices. */
static void test_threads(void **state) {
    (void)state;
    hplan *h = chain_plan();
    enum { N = 4 };
    pthread_t th[N];
    job jobs[N];
    for (int i = 0; i < N; i++) {
        jobs[i] = (job){&h->p, i, 0};
        assert_int_equal(pthread_create(&th[i], NULL, run_many, &jobs[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(jobs[i].ok, 1);
    }
    assert_all_returned();
    plan_free(h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_chain),
        cmocka_unit_test(test_results_on_device),
        cmocka_unit_test(test_if_on_device),
        cmocka_unit_test(test_loop_on_device),
        cmocka_unit_test(test_assert_on_device),
        cmocka_unit_test(test_wrong_device_argument),
        cmocka_unit_test(test_missing_copy),
        cmocka_unit_test(test_device_errors),
        cmocka_unit_test(test_zero_device_is_cpu),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
