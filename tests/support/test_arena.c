/*
 * test_arena.c -- the arena (src/support/arena.c): zero-filled, aligned
 * memory, and chunks kept from a destroyed arena for the next one on the
 * same thread, which must hand out zeroed memory again (a kept chunk is the
 * previous arena's, written all over).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>

#include <cmocka.h>

#include "support/arena.h"

static bool all_zero(const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

/* Fills an arena with 3 MiB in pieces of every size class, each written
 * all over, and destroys it; the next arena's memory is zero and aligned. */
static void fill_and_destroy(void) {
    mt_arena *a = mt_arena_create();
    assert_non_null(a);
    for (size_t total = 0, n = 1; total < (3u << 20); total += n, n = n * 3 % 70001 + 1) {
        unsigned char *p = mt_arena_alloc(a, n);
        memset(p, 0xab, n);
    }
    mt_arena_destroy(a);
}

static void test_reused_chunks_are_zero(void **state) {
    for (int round = 0; round < 4; round++) {
        fill_and_destroy();
        mt_arena *a = mt_arena_create();
        for (size_t total = 0, n = 7; total < (4u << 20); total += n, n = n * 5 % 90001 + 1) {
            unsigned char *p = mt_arena_alloc(a, n);
            assert_int_equal((uintptr_t)p % 16, 0);
            assert_true(all_zero(p, n));
            memset(p, 0xcd, n);
        }
        char *s = mt_arena_printf(a, "%d-%s", round, "x");
        assert_string_equal(s, round == 0 ? "0-x" : round == 1 ? "1-x" : round == 2 ? "2-x" : "3-x");
        mt_arena_destroy(a);
    }
}

/* A request larger than any kept chunk gets a chunk of its own. */
static void test_large_request_after_reuse(void **state) {
    fill_and_destroy();
    mt_arena *a = mt_arena_create();
    unsigned char *p = mt_arena_alloc(a, 12u << 20);
    assert_true(all_zero(p, 12u << 20));
    memset(p, 1, 12u << 20);
    mt_arena_destroy(a);
    a = mt_arena_create();
    p = mt_arena_alloc(a, 5u << 20);
    assert_true(all_zero(p, 5u << 20));
    mt_arena_destroy(a);
    mt_arena_release_kept(); /* then fresh chunks again */
    mt_arena_release_kept();
    a = mt_arena_create();
    p = mt_arena_alloc(a, 100);
    assert_true(all_zero(p, 100));
    mt_arena_destroy(a);
}

/* Arenas on threads that end: each thread's kept chunks are freed with it
 * (the ASan build's LeakSanitizer would report them otherwise). */
static void *worker(void *arg) {
    (void)arg;
    fill_and_destroy();
    fill_and_destroy();
    return NULL;
}

static void test_threads(void **state) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&t[i], NULL, worker, NULL), 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reused_chunks_are_zero),
        cmocka_unit_test(test_large_request_after_reuse),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
