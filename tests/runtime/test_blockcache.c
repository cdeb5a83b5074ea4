/*
 * test_blockcache.c -- the device blocks kept for reuse
 * (src/runtime/blockcache.c): a block comes back only for its exact size
 * and stream (any stream when it has an event), the taker's stream's
 * first, then the most recently kept; past its count and byte limits the least recently kept are
 * evicted; drain empties it; threads taking and putting at once never hand
 * one block out twice.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "runtime/blockcache.h"

static const int S1 = 1, S2 = 2; /* two streams: only their addresses matter */
static int EV;                    /* an event: only its address matters */

static mt_cached_block blk(uint64_t ptr, size_t size, const void *stream) {
    return (mt_cached_block){ptr, size, stream, NULL};
}

static void put_ok(mt_blockcache *c, mt_cached_block b) {
    mt_cached_block out[MT_BLOCKCACHE_MAX + 1];
    assert_int_equal(mt_blockcache_put(c, b, out), 0);
}

static void test_exact_size_and_stream(void **state) {
    (void)state;
    mt_blockcache c;
    mt_blockcache_init(&c, 1 << 20);
    mt_cached_block p;
    assert_false(mt_blockcache_take(&c, 256, &S1, &p));
    put_ok(&c, blk(0x1000, 256, &S1));
    put_ok(&c, blk(0x2000, 512, &S1));
    put_ok(&c, blk(0x3000, 256, &S2));
    assert_false(mt_blockcache_take(&c, 768, &S1, &p)); /* no size but the exact one */
    assert_true(mt_blockcache_take(&c, 256, &S2, &p));
    assert_int_equal(p.ptr, 0x3000);
    assert_false(mt_blockcache_take(&c, 256, &S2, &p)); /* not S1's block */
    assert_true(mt_blockcache_take(&c, 256, &S1, &p));
    assert_int_equal(p.ptr, 0x1000);
    assert_int_equal(c.bytes, 512);
    put_ok(&c, blk(0x4000, 512, &S1));
    assert_true(mt_blockcache_take(&c, 512, &S1, &p));
    assert_int_equal(p.ptr, 0x4000); /* the most recently kept */
    mt_cached_block out[MT_BLOCKCACHE_MAX];
    assert_int_equal(mt_blockcache_drain(&c, out, MT_BLOCKCACHE_MAX), 1);
    assert_int_equal(out[0].ptr, 0x2000);
    assert_int_equal(c.bytes, 0);
    assert_int_equal(c.n, 0);
    mt_blockcache_destroy(&c);
}

/* A block with an event goes to any stream, with its event; one of the
 * taker's stream goes first. */
static void test_event_any_stream(void **state) {
    (void)state;
    mt_blockcache c;
    mt_blockcache_init(&c, 1 << 20);
    mt_cached_block b = blk(0x1000, 256, &S1), p;
    b.event = &EV;
    put_ok(&c, b);
    assert_false(mt_blockcache_take(&c, 512, &S2, &p));
    assert_true(mt_blockcache_take(&c, 256, &S2, &p));
    assert_int_equal(p.ptr, 0x1000);
    assert_ptr_equal(p.event, &EV);
    assert_ptr_equal(p.stream, &S1);
    /* the taker's own stream's block first, though another's is more recent */
    mt_cached_block own = blk(0x2000, 256, &S2), other = blk(0x3000, 256, &S1);
    own.event = other.event = &EV;
    put_ok(&c, own);
    put_ok(&c, other);
    assert_true(mt_blockcache_take(&c, 256, &S2, &p));
    assert_int_equal(p.ptr, 0x2000);
    assert_true(mt_blockcache_take(&c, 256, &S2, &p));
    assert_int_equal(p.ptr, 0x3000);
    mt_blockcache_destroy(&c);
}

/* Past the bytes or the count, the least recently kept go. */
static void test_limits(void **state) {
    (void)state;
    mt_blockcache c;
    mt_cached_block out[MT_BLOCKCACHE_MAX + 1], p;
    mt_blockcache_init(&c, 1000);
    put_ok(&c, blk(1, 600, &S1));
    put_ok(&c, blk(2, 300, &S1));
    assert_int_equal(mt_blockcache_put(&c, blk(3, 600, &S1), out), 1); /* past the bytes: 1 goes */
    assert_int_equal(out[0].ptr, 1);
    assert_int_equal(c.bytes, 900);
    assert_int_equal(mt_blockcache_put(&c, blk(4, 2000, &S1), out), 1); /* larger than the cache */
    assert_int_equal(out[0].ptr, 4);
    assert_int_equal(mt_blockcache_put(&c, blk(5, 1000, &S1), out), 2); /* everything goes, oldest first */
    assert_int_equal(out[0].ptr, 2);
    assert_int_equal(out[1].ptr, 3);
    assert_true(mt_blockcache_take(&c, 1000, &S1, &p));
    assert_int_equal(p.ptr, 5);
    mt_blockcache_destroy(&c);
    mt_blockcache_init(&c, (size_t)1 << 40);
    for (int i = 0; i < MT_BLOCKCACHE_MAX; i++) put_ok(&c, blk((uint64_t)i + 1, 256, &S1));
    assert_true(mt_blockcache_take(&c, 256, &S1, &p)); /* the newest, and the order stays */
    assert_int_equal(p.ptr, MT_BLOCKCACHE_MAX);
    put_ok(&c, blk(998, 256, &S1));
    assert_int_equal(mt_blockcache_put(&c, blk(999, 256, &S1), out), 1); /* past the count */
    assert_int_equal(out[0].ptr, 1);
    mt_cached_block all[MT_BLOCKCACHE_MAX];
    assert_int_equal(mt_blockcache_drain(&c, all, 1), 1); /* at most cap at a time */
    assert_int_equal(mt_blockcache_drain(&c, all, MT_BLOCKCACHE_MAX), MT_BLOCKCACHE_MAX - 1);
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
            mt_cached_block out[MT_BLOCKCACHE_MAX + 1];
            if (mt_blockcache_put(&shared_cache, blk(p, 256, &S1), out) != 0) return (void *)2; /* never full */
        } else {
            mt_cached_block b;
            if (have < OWN && mt_blockcache_take(&shared_cache, 256, &S1, &b)) {
                if (__atomic_fetch_add(&holders[b.ptr], 1, __ATOMIC_RELAXED) != 0) return (void *)1;
                mine[have++] = b.ptr;
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
        cmocka_unit_test(test_event_any_stream),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
