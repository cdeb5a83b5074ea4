/*
 * test_blockcache.c -- the device blocks kept for reuse
 * (src/runtime/blockcache.c): a block comes back only for its exact size
 * and stream, the most recently kept first; the cache refuses past its
 * count and byte limits; drain empties it; threads taking and putting at
 * once never hand one block out twice.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "runtime/blockcache.h"

static const int S1 = 1, S2 = 2; /* two streams: only their addresses matter */

static void test_exact_size_and_stream(void **state) {
    (void)state;
    mt_blockcache c;
    mt_blockcache_init(&c, 1 << 20);
    uint64_t p = 0;
    assert_false(mt_blockcache_take(&c, 256, &S1, &p));
    assert_true(mt_blockcache_put(&c, 0x1000, 256, &S1));
    assert_true(mt_blockcache_put(&c, 0x2000, 512, &S1));
    assert_true(mt_blockcache_put(&c, 0x3000, 256, &S2));
    assert_false(mt_blockcache_take(&c, 768, &S1, &p)); /* no size but the exact one */
    assert_true(mt_blockcache_take(&c, 256, &S2, &p));
    assert_int_equal(p, 0x3000);
    assert_false(mt_blockcache_take(&c, 256, &S2, &p)); /* not S1's block */
    assert_true(mt_blockcache_take(&c, 256, &S1, &p));
    assert_int_equal(p, 0x1000);
    assert_int_equal(c.bytes, 512);
    assert_true(mt_blockcache_put(&c, 0x4000, 512, &S1));
    assert_true(mt_blockcache_take(&c, 512, &S1, &p));
    assert_int_equal(p, 0x4000); /* the most recently kept */
    mt_cached_block out[MT_BLOCKCACHE_MAX];
    assert_int_equal(mt_blockcache_drain(&c, out, MT_BLOCKCACHE_MAX), 1);
    assert_int_equal(out[0].ptr, 0x2000);
    assert_int_equal(c.bytes, 0);
    assert_int_equal(c.n, 0);
    mt_blockcache_destroy(&c);
}

static void test_limits(void **state) {
    (void)state;
    mt_blockcache c;
    mt_blockcache_init(&c, 1000);
    assert_true(mt_blockcache_put(&c, 1, 600, &S1));
    assert_false(mt_blockcache_put(&c, 2, 600, &S1)); /* past the bytes */
    assert_true(mt_blockcache_put(&c, 3, 400, &S1));
    assert_false(mt_blockcache_put(&c, 4, 1, &S1));
    mt_cached_block out[2];
    assert_int_equal(mt_blockcache_drain(&c, out, 1), 1); /* at most cap at a time */
    assert_int_equal(mt_blockcache_drain(&c, out, 2), 1);
    mt_blockcache_destroy(&c);
    mt_blockcache_init(&c, (size_t)1 << 40);
    for (int i = 0; i < MT_BLOCKCACHE_MAX; i++) assert_true(mt_blockcache_put(&c, (uint64_t)i + 1, 256, &S1));
    assert_false(mt_blockcache_put(&c, 999, 256, &S1)); /* past the count */
    mt_cached_block all[MT_BLOCKCACHE_MAX];
    assert_int_equal(mt_blockcache_drain(&c, all, MT_BLOCKCACHE_MAX), MT_BLOCKCACHE_MAX);
    mt_blockcache_destroy(&c);
}

/* Each thread owns 8 distinct blocks and cycles them through the cache:
 * a block taken by two threads at once would show as a count off. */
enum { THREADS = 4, ROUNDS = 20000, OWN = 8 };
static mt_blockcache shared_cache;
static int holders[THREADS * OWN + 1];

static void *churn(void *arg) {
    int t = (int)(intptr_t)arg;
    uint64_t mine[OWN];
    int have = OWN;
    for (int i = 0; i < OWN; i++) mine[i] = (uint64_t)(t * OWN + i + 1);
    for (int r = 0; r < ROUNDS; r++) {
        if (have > 0 && (r & 1)) {
            uint64_t p = mine[--have];
            __atomic_fetch_sub(&holders[p], 1, __ATOMIC_RELAXED);
            if (!mt_blockcache_put(&shared_cache, p, 256, &S1)) {
                __atomic_fetch_add(&holders[p], 1, __ATOMIC_RELAXED);
                mine[have++] = p;
            }
        } else {
            uint64_t p;
            if (have < OWN && mt_blockcache_take(&shared_cache, 256, &S1, &p)) {
                if (__atomic_fetch_add(&holders[p], 1, __ATOMIC_RELAXED) != 0) return (void *)1;
                mine[have++] = p;
            }
        }
    }
    return NULL;
}

static void test_threads(void **state) {
    (void)state;
    mt_blockcache_init(&shared_cache, (size_t)1 << 30);
    for (int i = 1; i <= THREADS * OWN; i++) holders[i] = 1;
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, churn, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++) {
        void *bad;
        pthread_join(th[t], &bad);
        assert_null(bad);
    }
    mt_cached_block out[MT_BLOCKCACHE_MAX];
    int n = mt_blockcache_drain(&shared_cache, out, MT_BLOCKCACHE_MAX);
    for (int i = 0; i < n; i++) holders[out[i].ptr]++;
    for (int i = 1; i <= THREADS * OWN; i++) assert_int_equal(holders[i], 1);
    mt_blockcache_destroy(&shared_cache);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_size_and_stream),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
