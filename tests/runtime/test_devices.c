/*
 * test_devices.c -- the device interface (src/runtime/device.h) on its own:
 * device names, the test device's memory (copies in every direction, bounds,
 * a host dereference of its addresses faulting, every block given back),
 * launches that translate pointers (direct and libffi calls), modules of
 * host code, tensors on devices and copies between them, and the public
 * mt_tensor_device. The plans that run on these devices are in
 * test_hetero.c.
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
#include "runtime/pool.h"
#include "runtime/tensor.h"

static mt_dev *new_test_device(int id) {
    mt_dev_err e = {{0}};
    mt_dev *d = mt_dev_test_create(id, &e);
    if (!d) fail_msg("test device: %s", e.msg);
    return d;
}

static int64_t live_blocks(mt_dev *d) {
    mt_dev_test_stats s;
    mt_dev_test_get_stats(d, &s);
    return s.live_blocks;
}

static void test_names(void **state) {
    (void)state;
    char b[32];
    assert_string_equal(mt_device_str((mt_device){MT_DEVICE_CPU, 0}, b, sizeof b), "cpu");
    assert_string_equal(mt_device_str((mt_device){0, 0}, b, sizeof b), "cpu");
    assert_string_equal(mt_device_str((mt_device){MT_DEVICE_CUDA, 1}, b, sizeof b), "cuda:1");
    assert_string_equal(mt_device_str((mt_device){MT_DEVICE_TEST, 0}, b, sizeof b), "test:0");
    assert_string_equal(mt_device_str((mt_device){7, 2}, b, sizeof b), "device7:2");
    char tiny[4];
    assert_string_equal(mt_device_str((mt_device){MT_DEVICE_CUDA, 1}, tiny, sizeof tiny), "cud");
    assert_true(mt_device_eq((mt_device){0, 0}, (mt_device){MT_DEVICE_CPU, 0}));
    assert_false(mt_device_eq((mt_device){MT_DEVICE_TEST, 0}, (mt_device){MT_DEVICE_TEST, 1}));
    assert_false(mt_device_is_cpu((mt_device){MT_DEVICE_TEST, 0}));
}

/* Host -> device -> device -> host, at offsets inside blocks; ranges that
 * leave a block and host addresses are refused. */
static void test_memory_round_trip(void **state) {
    (void)state;
    mt_dev *d = new_test_device(0);
    const mt_dev_ops *o = d->ops;
    mt_dev_err e;
    void *a, *b;
    size_t ca, cb;
    assert_int_equal(o->alloc(d, 1000, &a, &ca, &e), MT_OK);
    assert_int_equal(o->alloc(d, 0, &b, &cb, &e), MT_OK); /* zero bytes: still a block */
    assert_true(ca >= 1000 && cb > 0);
    assert_int_equal(live_blocks(d), 2);
    unsigned char src[1000], back[1000];
    for (int i = 0; i < 1000; i++) src[i] = (unsigned char)(i * 7 + 3);
    assert_int_equal(o->copy_h2d(d, a, src, sizeof src, &e), MT_OK);
    assert_int_equal(o->copy_d2d(d, b, (char *)a + 100, 64, &e), MT_OK); /* interior source */
    memset(back, 0, sizeof back);
    assert_int_equal(o->copy_d2h(d, back, b, 64, &e), MT_OK);
    assert_memory_equal(back, src + 100, 64);
    assert_int_equal(o->copy_d2h(d, back, a, sizeof back, &e), MT_OK);
    assert_memory_equal(back, src, sizeof src);
    /* overlapping copy inside one block: memmove semantics */
    assert_int_equal(o->copy_d2d(d, (char *)a + 1, a, 100, &e), MT_OK);
    assert_int_equal(o->copy_d2h(d, back, a, 101, &e), MT_OK);
    assert_int_equal(back[0], src[0]);
    assert_memory_equal(back + 1, src, 100);
    /* past the block's end, and host memory as a device address */
    assert_int_equal(o->copy_d2h(d, back, (char *)a + ca - 8, 16, &e), MT_ERR_INVALID_ARG);
    assert_non_null(strstr(e.msg, "is not memory of test:0"));
    assert_int_equal(o->copy_h2d(d, src, back, 8, &e), MT_ERR_INVALID_ARG);
    assert_int_equal(o->sync(d, &e), MT_OK);
    o->free(d, b, cb);
    o->free(d, a, ca);
    assert_int_equal(live_blocks(d), 0);
    mt_dev_test_stats s;
    mt_dev_test_get_stats(d, &s);
    assert_int_equal(s.allocs, 2);
    assert_int_equal(s.syncs, 1);
    assert_int_equal(s.copies, 6); /* the refused ones do not count */
    mt_dev_release(d);
}

static void read_byte(void *p) {
    volatile unsigned char x = *(volatile unsigned char *)p;
    (void)x;
}

static void write_byte(void *p) { *(volatile unsigned char *)p = 1; }

/* The address a test device hands out is not host memory: reading or
 * writing it faults, while the device's own copy of the same byte works. */
static void test_host_deref_faults(void **state) {
    (void)state;
    mt_dev *d = new_test_device(0);
    mt_dev_err e;
    void *a;
    size_t cap;
    assert_int_equal(d->ops->alloc(d, 64, &a, &cap, &e), MT_OK);
    unsigned char v = 42, back = 0;
    assert_int_equal(d->ops->copy_h2d(d, (char *)a + 5, &v, 1, &e), MT_OK);
    assert_true(faults(read_byte, (char *)a + 5));
    assert_true(faults(write_byte, a));
    assert_int_equal(d->ops->copy_d2h(d, &back, (char *)a + 5, 1, &e), MT_OK);
    assert_int_equal(back, 42);
    unsigned char host = 0; /* the guard itself: host memory does not fault */
    assert_false(faults(read_byte, &host));
    d->ops->free(d, a, cap);
    mt_dev_release(d);
}

/* ---- launches ----------------------------------------------------------------- */

static const void *seen_x, *seen_y;

/* A kernel with the calling convention codegen gives: y = 2 x + n. */
static void k_twice_plus_n(const float *x, float *y, int64_t n) {
    seen_x = x;
    seen_y = y;
    for (int64_t i = 0; i < n; i++) y[i] = 2 * x[i] + (float)n;
}

/* 13 buffers and a scalar: past the direct call, through libffi. */
static void k_sum13(const int64_t *a0, const int64_t *a1, const int64_t *a2, const int64_t *a3,
                    const int64_t *a4, const int64_t *a5, const int64_t *a6, const int64_t *a7,
                    const int64_t *a8, const int64_t *a9, const int64_t *a10, const int64_t *a11,
                    int64_t *out, int64_t k) {
    *out = k + *a0 + *a1 + *a2 + *a3 + *a4 + *a5 + *a6 + *a7 + *a8 + *a9 + *a10 + *a11;
}

static void test_launch_translates(void **state) {
    (void)state;
    mt_dev *d = new_test_device(3);
    mt_dev_err e;
    void *x, *y;
    size_t cx, cy;
    assert_int_equal(d->ops->alloc(d, 4 * 8, &x, &cx, &e), MT_OK);
    assert_int_equal(d->ops->alloc(d, 4 * 8, &y, &cy, &e), MT_OK);
    float in[8] = {0, 1, 2, 3, 4, 5, 6, 7}, out[8];
    assert_int_equal(d->ops->copy_h2d(d, x, in, sizeof in, &e), MT_OK);
    /* the second half of x into the start of y: an interior pointer */
    uint64_t args[3] = {(uintptr_t)((float *)x + 4), (uintptr_t)y, 4};
    mt_dev_launch l = {.fn = (void *)k_twice_plus_n, .name = "twice", .nptrs = 2, .nscalars = 1,
                       .args = args};
    assert_int_equal(d->ops->launch(d, &l, &e), MT_OK);
    assert_ptr_not_equal(seen_x, (float *)x + 4); /* the kernel saw the aliases */
    assert_ptr_not_equal(seen_y, y);
    assert_int_equal(d->ops->copy_d2h(d, out, y, 4 * sizeof(float), &e), MT_OK);
    for (int i = 0; i < 4; i++) assert_true(out[i] == 2 * in[4 + i] + 4);
    /* a host address among the arguments is refused before the kernel runs */
    seen_x = NULL;
    args[0] = (uintptr_t)in;
    assert_int_equal(d->ops->launch(d, &l, &e), MT_ERR_INVALID_ARG);
    assert_non_null(strstr(e.msg, "kernel 'twice' launched on test:3: argument 0"));
    assert_null(seen_x);
    d->ops->free(d, x, cx);
    d->ops->free(d, y, cy);
    mt_dev_test_stats s;
    mt_dev_test_get_stats(d, &s);
    assert_int_equal(s.launches, 1);
    mt_dev_release(d);
}

static void test_launch_libffi(void **state) {
    (void)state;
    mt_dev *t = new_test_device(0), *devs[2] = {mt_dev_cpu_heap(), t};
    for (int which = 0; which < 2; which++) {
        mt_dev *d = devs[which];
        mt_dev_err e;
        void *buf;
        size_t cap;
        assert_int_equal(d->ops->alloc(d, 13 * 8, &buf, &cap, &e), MT_OK);
        int64_t vals[13];
        for (int i = 0; i < 13; i++) vals[i] = i < 12 ? (int64_t)1 << i : 0;
        assert_int_equal(d->ops->copy_h2d(d, buf, vals, sizeof vals, &e), MT_OK);
        uint64_t args[14];
        for (int i = 0; i < 13; i++) args[i] = (uintptr_t)((int64_t *)buf + i);
        args[13] = 1000000;
        mt_dev_launch l = {.fn = (void *)k_sum13, .name = "sum13", .nptrs = 13, .nscalars = 1,
                           .args = args};
        assert_int_equal(d->ops->launch(d, &l, &e), MT_OK);
        int64_t got = 0;
        assert_int_equal(d->ops->copy_d2h(d, &got, (int64_t *)buf + 12, 8, &e), MT_OK);
        assert_int_equal(got, 1000000 + 4095);
        d->ops->free(d, buf, cap);
    }
    assert_int_equal(live_blocks(t), 0);
    mt_dev_release(t);
}

/* ---- modules ------------------------------------------------------------------- */

static void test_host_modules(void **state) {
    (void)state;
    mt_dev *t = new_test_device(0), *devs[2] = {mt_dev_cpu_heap(), t};
    char n0[] = "twice", n1[] = "sum13"; /* the names are copied at load */
    const char *names[2] = {n0, n1};
    void *addrs[2] = {(void *)k_twice_plus_n, (void *)k_sum13};
    mt_dev_image img = {.format = MT_IMAGE_HOST, .nsymbols = 2, .names = names, .addrs = addrs};
    for (int which = 0; which < 2; which++) {
        mt_dev *d = devs[which];
        mt_dev_err e;
        mt_dev_module *m;
        void *fn;
        assert_int_equal(d->ops->load(d, &img, &m, &e), MT_OK);
        n1[0] = 'X';
        assert_int_equal(d->ops->function(d, m, "sum13", &fn, &e), MT_OK);
        n1[0] = 's';
        assert_ptr_equal(fn, (void *)k_sum13);
        assert_int_equal(d->ops->function(d, m, "twice", &fn, &e), MT_OK);
        assert_ptr_equal(fn, (void *)k_twice_plus_n);
        assert_int_equal(d->ops->function(d, m, "none", &fn, &e), MT_ERR_INVALID_ARG);
        assert_string_equal(e.msg, "the module has no function 'none'");
        d->ops->unload(d, m);
        mt_dev_image ptx = {.format = MT_IMAGE_PTX, .data = ".version 8.0", .size = 13};
        assert_int_equal(d->ops->load(d, &ptx, &m, &e), MT_ERR_UNSUPPORTED);
        assert_null(m);
        assert_non_null(strstr(e.msg, "runs host code only, not PTX"));
    }
    mt_dev_release(t);
}

/* ---- tensors ------------------------------------------------------------------- */

static void test_tensor_device(void **state) {
    (void)state;
    int64_t shape[2] = {3, 5};
    mt_tensor *c = mt_tensor_create(MT_FLOAT32, 2, shape);
    float host[15] = {0};
    mt_tensor *w = mt_tensor_wrap(host, MT_FLOAT32, 2, shape, NULL);
    mt_device dc = mt_tensor_device(c), dw = mt_tensor_device(w), dn = mt_tensor_device(NULL);
    assert_int_equal(dc.type, MT_DEVICE_CPU);
    assert_int_equal(dc.id, 0);
    assert_int_equal(dw.type, MT_DEVICE_CPU);
    assert_int_equal(dn.type, 0);
    mt_tensor_release(c);
    mt_tensor_release(w);
}

/* Host -> test:0 -> test:0 -> test:1 -> CPU pool tensor -> host, checking the
 * bytes at the end and that the device tensors' data faults on the host. */
static void test_tensor_copies(void **state) {
    (void)state;
    mt_dev *t0 = new_test_device(0), *t1 = new_test_device(1);
    mt_pool *pool = mt_pool_create(0);
    mt_dev *cpu = mt_dev_cpu_create(pool);
    int64_t shape[2] = {4, 33};
    mt_tensor *h = mt_tensor_create(MT_INT32, 2, shape);
    mt_tensor *back = mt_tensor_create(MT_INT32, 2, shape);
    int32_t *hp = mt_tensor_data(h);
    for (int i = 0; i < 4 * 33; i++) hp[i] = i * 31 - 7;
    mt_tensor *a = mt_tensor_create_on(t0, MT_INT32, 2, shape);
    mt_tensor *b = mt_tensor_create_on(t0, MT_INT32, 2, shape);
    mt_tensor *c = mt_tensor_create_on(t1, MT_INT32, 2, shape);
    mt_tensor *p = mt_tensor_create_on(cpu, MT_INT32, 2, shape);
    assert_true(a && b && c && p);
    assert_int_equal(mt_tensor_device(a).type, MT_DEVICE_TEST);
    assert_int_equal(mt_tensor_device(c).id, 1);
    assert_int_equal(mt_tensor_device(p).type, MT_DEVICE_CPU);
    assert_true(faults(read_byte, mt_tensor_data(a)));
    mt_dev_err e;
    assert_int_equal(mt_tensor_copy(a, h, &e), MT_OK);
    assert_int_equal(mt_tensor_copy(b, a, &e), MT_OK);
    assert_int_equal(mt_tensor_copy(c, b, &e), MT_OK); /* two devices: through the host */
    assert_int_equal(mt_tensor_copy(p, c, &e), MT_OK);
    assert_int_equal(mt_tensor_copy(back, p, &e), MT_OK);
    assert_memory_equal(mt_tensor_data(back), hp, sizeof(int32_t) * 4 * 33);
    int64_t other[2] = {33, 4};
    mt_tensor *x = mt_tensor_create(MT_INT32, 2, other);
    assert_int_equal(mt_tensor_copy(x, a, &e), MT_ERR_INVALID_ARG);
    mt_pool_stats ps;
    mt_pool_get_stats(pool, &ps);
    assert_true(ps.live_bytes >= sizeof(int32_t) * 4 * 33);
    assert_int_equal(live_blocks(t0), 2);
    /* the devices' owners let go first: the tensors keep them alive */
    mt_dev_release(t0);
    mt_dev_release(t1);
    mt_dev_release(cpu);
    mt_pool_close(pool);
    assert_int_equal(mt_tensor_copy(back, a, &e), MT_OK);
    assert_memory_equal(mt_tensor_data(back), hp, sizeof(int32_t) * 4 * 33);
    mt_tensor *all[] = {h, back, a, b, c, p, x};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) mt_tensor_release(all[i]);
}

/* ---- threads ------------------------------------------------------------------- */

typedef struct worker {
    mt_dev *d;
    int seed;
    int ok;
} worker;

static void *churn(void *arg) {
    worker *w = arg;
    mt_dev_err e;
    w->ok = 1;
    for (int it = 0; it < 200; it++) {
        size_t n = (size_t)(64 + (w->seed * 131 + it * 17) % 9000), cap;
        void *p;
        if (w->d->ops->alloc(w->d, n, &p, &cap, &e) != MT_OK) return w->ok = 0, NULL;
        unsigned char v = (unsigned char)(it + w->seed), got = 0;
        if (w->d->ops->copy_h2d(w->d, (char *)p + n - 1, &v, 1, &e) != MT_OK ||
            w->d->ops->copy_d2h(w->d, &got, (char *)p + n - 1, 1, &e) != MT_OK || got != v)
            w->ok = 0;
        w->d->ops->free(w->d, p, cap);
    }
    return NULL;
}

/* Several threads allocate, copy and free on one device at once. */
static void test_threads(void **state) {
    (void)state;
    mt_dev *d = new_test_device(0);
    enum { N = 4 };
    pthread_t th[N];
    worker w[N];
    for (int i = 0; i < N; i++) {
        w[i] = (worker){d, i, 0};
        assert_int_equal(pthread_create(&th[i], NULL, churn, &w[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].ok, 1);
    }
    assert_int_equal(live_blocks(d), 0);
    mt_dev_release(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_memory_round_trip),
        cmocka_unit_test(test_host_deref_faults),
        cmocka_unit_test(test_launch_translates),
        cmocka_unit_test(test_launch_libffi),
        cmocka_unit_test(test_host_modules),
        cmocka_unit_test(test_tensor_device),
        cmocka_unit_test(test_tensor_copies),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
