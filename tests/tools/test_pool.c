/*
 * test_pool.c -- the run-time memory pool (src/runtime/pool.c): size
 * classes and reuse, huge-page alignment, the cache limit, tensors that
 * outlive the pool's owner, and many threads at once.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/pool.h"
#include "runtime/tensor.h"

static void test_reuse(void **state) {
    mt_pool *p = mt_pool_create(0);
    assert_non_null(p);
    size_t cap;
    void *x = mt_pool_alloc(p, 1000, &cap);
    assert_non_null(x);
    assert_int_equal(cap, 1024);
    assert_int_equal((uintptr_t)x % 64, 0);
    memset(x, 1, cap);
    mt_pool_free(p, x, cap);
    size_t cap2;
    void *y = mt_pool_alloc(p, 1020, &cap2); /* same class */
    assert_ptr_equal(x, y);
    assert_int_equal(cap2, cap);
    mt_pool_stats st;
    mt_pool_get_stats(p, &st);
    assert_int_equal(st.hits, 1);
    assert_int_equal(st.misses, 1);
    assert_int_equal(st.live_bytes, cap);
    assert_int_equal(st.cached_bytes, 0);
    mt_pool_free(p, y, cap2);
    /* a different class misses */
    void *z = mt_pool_alloc(p, 5000, &cap);
    mt_pool_get_stats(p, &st);
    assert_int_equal(st.misses, 2);
    mt_pool_free(p, z, cap);
    mt_pool_close(p);
}

static void test_classes(void **state) {
    mt_pool *p = mt_pool_create(0);
    static const size_t sizes[] = {0, 1, 63, 64, 65, 100, 4096, 5000, 1 << 20, (2 << 20) - 1,
                                   2 << 20, (2 << 20) + 1, 5 << 20, 64 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t cap;
        void *x = mt_pool_alloc(p, sizes[i], &cap);
        assert_non_null(x);
        assert_true(cap >= sizes[i] && cap >= 64);
        assert_true(cap <= sizes[i] + sizes[i] / 4 + 64 || cap - sizes[i] < (2 << 20));
        if (cap >= (2 << 20)) {
            assert_int_equal((uintptr_t)x % (2 << 20), 0);
            assert_int_equal(cap % (2 << 20), 0);
        }
        memset(x, 0xab, cap);
        mt_pool_free(p, x, cap);
        size_t cap2;
        void *y = mt_pool_alloc(p, sizes[i], &cap2);
        assert_ptr_equal(x, y);
        mt_pool_free(p, y, cap2);
    }
    mt_pool_close(p);
}

static void test_limit(void **state) {
    mt_pool *p = mt_pool_create(3 << 20);
    size_t c1, c2, c3;
    void *a = mt_pool_alloc(p, 2 << 20, &c1);
    void *b = mt_pool_alloc(p, 1 << 20, &c2);
    void *c = mt_pool_alloc(p, 2 << 20, &c3);
    mt_pool_free(p, a, c1);
    mt_pool_free(p, b, c2);
    mt_pool_stats st;
    mt_pool_get_stats(p, &st);
    assert_int_equal(st.cached_bytes, c1 + c2);
    mt_pool_free(p, c, c3); /* over the limit: the cache is emptied first */
    mt_pool_get_stats(p, &st);
    assert_int_equal(st.cached_bytes, c3);
    assert_int_equal(st.live_bytes, 0);
    mt_pool_close(p);
}

static void test_tensor_outlives_pool(void **state) {
    mt_pool *p = mt_pool_create(0);
    int64_t shape[2] = {3, 1000};
    mt_tensor *t = mt_pool_tensor(p, MT_FLOAT32, 2, shape);
    assert_non_null(t);
    assert_int_equal(mt_tensor_numel(t), 3000);
    assert_true(mt_tensor_is_contiguous(t));
    float *d = mt_tensor_data(t);
    for (int i = 0; i < 3000; i++) d[i] = (float)i;
    mt_tensor *u = mt_pool_tensor(p, MT_INT8, 0, NULL); /* rank 0 */
    assert_non_null(u);
    mt_tensor_release(u); /* back to the cache */
    mt_pool_close(p);     /* frees the cache; t keeps the pool alive */
    assert_true(d[2999] == 2999.0f);
    mt_tensor_release(t); /* the last block: frees the pool too (ASan/LSan check) */
    int64_t bad = -1;
    p = mt_pool_create(0);
    assert_null(mt_pool_tensor(p, MT_FLOAT32, 1, &bad));
    mt_pool_close(p);
}

static void *churn(void *p_) {
    mt_pool *p = p_;
    for (int i = 0; i < 2000; i++) {
        int64_t n = 1 + (i * 37) % 3000;
        mt_tensor *t = mt_pool_tensor(p, MT_FLOAT32, 1, &n);
        if (!t) return (void *)1;
        float *d = mt_tensor_data(t);
        for (int64_t k = 0; k < n; k++) d[k] = (float)k;
        for (int64_t k = 0; k < n; k++)
            if (d[k] != (float)k) return (void *)1;
        mt_tensor_release(t);
    }
    return NULL;
}

static void test_threads(void **state) {
    mt_pool *p = mt_pool_create(0);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&th[i], NULL, churn, p), 0);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th[i], &r);
        assert_null(r);
    }
    mt_pool_stats st;
    mt_pool_get_stats(p, &st);
    assert_int_equal(st.live_bytes, 0);
    assert_true(st.hits > st.misses);
    mt_pool_close(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse),
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_tensor_outlives_pool),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
