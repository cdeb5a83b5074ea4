/*
 * test_tensor.c -- the tensor API (src/runtime/tensor.c): creation limits,
 * zero fill and alignment, wrapping with and without strides, contiguity,
 * the overflow checks and the atomic reference count.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>

#include "runtime/tensor.h"

#ifdef __SANITIZE_ADDRESS__
/* The allocation-failure test asks for 2^61 bytes: ASan must return NULL for
 * it as libc does, not stop the program. */
const char *__asan_default_options(void);
__attribute__((visibility("default"), used)) const char *__asan_default_options(void) {
    return "allocator_may_return_null=1";
}
#endif

static const mt_dtype ALL[] = {MT_BOOL,    MT_INT8,    MT_UINT8,   MT_INT32,
                               MT_INT64,   MT_FLOAT16, MT_FLOAT32, MT_FLOAT64};
static const size_t SIZE[] = {1, 1, 1, 4, 8, 2, 4, 8};

static void create_every_dtype_and_rank(void **state) {
    int64_t shape[MT_MAX_RANK] = {2, 3, 1, 2, 1, 1, 2, 1};
    for (size_t d = 0; d < sizeof ALL / sizeof ALL[0]; d++) {
        for (int nd = 0; nd <= MT_MAX_RANK; nd++) {
            mt_tensor *t = mt_tensor_create(ALL[d], nd, shape);
            assert_non_null(t);
            assert_int_equal(mt_tensor_dtype(t), ALL[d]);
            assert_int_equal(mt_tensor_ndim(t), nd);
            int64_t numel = 1;
            for (int i = 0; i < nd; i++) numel *= shape[i];
            assert_int_equal(mt_tensor_numel(t), numel);
            assert_int_equal(t->nbytes, (size_t)numel * SIZE[d]);
            assert_non_null(mt_tensor_data(t));
            assert_int_equal((uintptr_t)mt_tensor_data(t) % 64, 0);
            const unsigned char *p = mt_tensor_data(t);
            for (size_t i = 0; i < t->nbytes; i++) assert_int_equal(p[i], 0);
            /* C-contiguous strides. */
            int64_t s = 1;
            for (int i = nd - 1; i >= 0; i--) {
                assert_int_equal(mt_tensor_strides(t)[i], s);
                assert_int_equal(mt_tensor_shape(t)[i], shape[i]);
                s *= shape[i];
            }
            assert_true(mt_tensor_is_contiguous(t));
            assert_true(t->owns_data);
            mt_tensor_release(t);
        }
    }
}

static void create_rejects_bad_arguments(void **state) {
    int64_t shape[MT_MAX_RANK + 1] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    assert_null(mt_tensor_create(MT_FLOAT32, MT_MAX_RANK + 1, shape));
    assert_null(mt_tensor_create(MT_FLOAT32, -1, shape));
    assert_null(mt_tensor_create(MT_FLOAT32, 1, NULL));
    assert_null(mt_tensor_create((mt_dtype)MT_DTYPE_COUNT_, 1, shape));
    assert_null(mt_tensor_create((mt_dtype)-1, 1, shape));
    int64_t neg[2] = {2, -1};
    assert_null(mt_tensor_create(MT_FLOAT32, 2, neg));
    /* rank 0 needs no shape. */
    mt_tensor *t = mt_tensor_create(MT_INT32, 0, NULL);
    assert_non_null(t);
    assert_int_equal(mt_tensor_numel(t), 1);
    mt_tensor_release(t);
}

static void create_rejects_overflow(void **state) {
    int64_t big[2] = {(int64_t)1 << 32, (int64_t)1 << 32};
    assert_null(mt_tensor_create(MT_INT8, 2, big));   /* numel = 2^64 */
    int64_t big2[1] = {INT64_MAX};
    assert_null(mt_tensor_create(MT_FLOAT32, 1, big2)); /* numel fits, bytes do not */
    int64_t big3[1] = {INT64_MAX / 4 + 1};
    assert_null(mt_tensor_create(MT_FLOAT32, 1, big3));
    size_t n = 7;
    assert_false(mt_shape_nbytes(MT_FLOAT32, 1, big3, &n));
    assert_int_equal(n, 7); /* untouched on failure */
    int64_t ok[1] = {INT64_MAX / 4};
    assert_true(mt_shape_nbytes(MT_FLOAT32, 1, ok, &n));
    assert_int_equal(n, (size_t)(INT64_MAX / 4) * 4);
    /* Allocation failure (no machine has 2^61 bytes) gives NULL, no crash. */
    int64_t huge[1] = {(int64_t)1 << 61};
    assert_null(mt_tensor_create(MT_INT8, 1, huge));
}

static void zero_size_dims(void **state) {
    int64_t shape[3] = {4, 0, 5};
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, 3, shape);
    assert_non_null(t);
    assert_non_null(mt_tensor_data(t));
    assert_int_equal(mt_tensor_numel(t), 0);
    assert_int_equal(t->nbytes, 0);
    assert_true(mt_tensor_is_contiguous(t));
    mt_tensor_release(t);
    /* A zero dim makes the byte count 0 whatever the other dims. */
    int64_t z[2] = {0, INT64_MAX};
    size_t n = 1;
    assert_true(mt_shape_nbytes(MT_FLOAT64, 2, z, &n));
    assert_int_equal(n, 0);
}

static void wrap_borrows(void **state) {
    float buf[6] = {1, 2, 3, 4, 5, 6};
    int64_t shape[2] = {2, 3};
    mt_tensor *t = mt_tensor_wrap(buf, MT_FLOAT32, 2, shape, NULL);
    assert_non_null(t);
    assert_ptr_equal(mt_tensor_data(t), buf);
    assert_false(t->owns_data);
    assert_int_equal(mt_tensor_strides(t)[0], 3);
    assert_int_equal(mt_tensor_strides(t)[1], 1);
    assert_true(mt_tensor_is_contiguous(t));
    mt_tensor_release(t); /* must not free buf (ASan would catch it) */
    assert_true(buf[5] == 6.0f);

    /* Strides are kept as given: the transpose of buf. */
    int64_t tshape[2] = {3, 2}, tstr[2] = {1, 3};
    t = mt_tensor_wrap(buf, MT_FLOAT32, 2, tshape, tstr);
    assert_non_null(t);
    assert_int_equal(mt_tensor_strides(t)[0], 1);
    assert_int_equal(mt_tensor_strides(t)[1], 3);
    assert_false(mt_tensor_is_contiguous(t));
    mt_tensor_release(t);

    /* Broadcast (stride 0) is representable and not contiguous. */
    int64_t bshape[2] = {4, 3}, bstr[2] = {0, 1};
    t = mt_tensor_wrap(buf, MT_FLOAT32, 2, bshape, bstr);
    assert_non_null(t);
    assert_false(mt_tensor_is_contiguous(t));
    mt_tensor_release(t);
}

static void wrap_rejects_bad_arguments(void **state) {
    int64_t shape[1] = {3};
    assert_null(mt_tensor_wrap(NULL, MT_FLOAT32, 1, shape, NULL));
    int64_t zero[1] = {0};
    mt_tensor *t = mt_tensor_wrap(NULL, MT_FLOAT32, 1, zero, NULL);
    assert_non_null(t); /* nothing to point at: NULL data is fine */
    mt_tensor_release(t);
    char b;
    int64_t neg[1] = {-3};
    assert_null(mt_tensor_wrap(&b, MT_INT8, 1, neg, NULL));
    int64_t big[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
    assert_null(mt_tensor_wrap(&b, MT_INT8, 2, big, NULL));
    assert_null(mt_tensor_wrap(&b, MT_INT8, MT_MAX_RANK + 1, big, NULL));
}

static void contiguity_ignores_unit_axes(void **state) {
    char buf[64];
    int64_t shape[3] = {2, 1, 4}, str[3] = {4, 999, 1};
    mt_tensor *t = mt_tensor_wrap(buf, MT_INT8, 3, shape, str);
    assert_true(mt_tensor_is_contiguous(t));
    mt_tensor_release(t);
    int64_t str2[3] = {8, 4, 1}; /* padded rows */
    t = mt_tensor_wrap(buf, MT_INT8, 3, shape, str2);
    assert_false(mt_tensor_is_contiguous(t));
    mt_tensor_release(t);
    int64_t one[2] = {1, 1}, s1[2] = {-5, 7};
    t = mt_tensor_wrap(buf, MT_INT8, 2, one, s1);
    assert_true(mt_tensor_is_contiguous(t));
    mt_tensor_release(t);
}

static void refcount_and_null(void **state) {
    int64_t shape[1] = {8};
    mt_tensor *t = mt_tensor_create(MT_INT64, 1, shape);
    mt_tensor_retain(t);
    mt_tensor_retain(t);
    assert_int_equal(atomic_load(&t->refs), 3);
    mt_tensor_release(t);
    mt_tensor_release(t);
    assert_int_equal(atomic_load(&t->refs), 1);
    mt_tensor_release(t); /* frees; ASan/LSan checks the rest */

    mt_tensor_release(NULL);
    mt_tensor_retain(NULL);
    assert_null(mt_tensor_data(NULL));
    assert_null(mt_tensor_shape(NULL));
    assert_null(mt_tensor_strides(NULL));
    assert_int_equal(mt_tensor_ndim(NULL), -1);
    assert_int_equal(mt_tensor_numel(NULL), -1);
    assert_int_equal(mt_tensor_dtype(NULL), MT_DTYPE_COUNT_);
    assert_false(mt_tensor_is_contiguous(NULL));
}

static void *churn(void *arg) {
    mt_tensor *t = arg;
    for (int i = 0; i < 100000; i++) {
        mt_tensor_retain(t);
        mt_tensor_release(t);
    }
    mt_tensor_release(t); /* the reference the spawner took for us */
    return NULL;
}

static void refcount_is_atomic(void **state) {
    int64_t shape[1] = {16};
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, 1, shape);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        mt_tensor_retain(t);
        assert_int_equal(pthread_create(&th[i], NULL, churn, t), 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&t->refs), 1);
    mt_tensor_release(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(create_every_dtype_and_rank),
        cmocka_unit_test(create_rejects_bad_arguments),
        cmocka_unit_test(create_rejects_overflow),
        cmocka_unit_test(zero_size_dims),
        cmocka_unit_test(wrap_borrows),
        cmocka_unit_test(wrap_rejects_bad_arguments),
        cmocka_unit_test(contiguity_ignores_unit_axes),
        cmocka_unit_test(refcount_and_null),
        cmocka_unit_test(refcount_is_atomic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
