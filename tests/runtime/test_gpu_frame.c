/*
 * test_gpu_frame.c -- the GPU frame of a host function (src/runtime/
 * gpu_launch.c): the buffers the generated code allocates go back to the
 * device with the capacity the device gave them (so that it can keep them
 * for the next run's allocation of that size; a capacity of 0 once made
 * every such buffer a driver allocation per run), in any order; past
 * MT_GPU_FRAME_LIVE live blocks the extra ones go back with 0; a failed
 * allocation is recorded with its message and returns NULL; outside a frame
 * nothing is called.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/gpu_launch.h"

enum { MAXB = 4 * MT_GPU_FRAME_LIVE };

/* A fake device: block i is the address of slot[i], with capacity (i + 1) * 512. */
typedef struct fake {
    char slot[MAXB];
    int n, frees;
    size_t freed_cap[MAXB];
    void *freed_ptr[MAXB];
    int fail; /* the next allocation fails */
} fake;

static mt_status fake_alloc(void *dev, int64_t bytes, void **out, size_t *cap, char *msg, int msglen) {
    fake *f = dev;
    if (f->fail || f->n == MAXB) {
        snprintf(msg, (size_t)msglen, "out of fake memory (%lld bytes)", (long long)bytes);
        return MT_ERR_NOMEM;
    }
    *out = &f->slot[f->n];
    *cap = (size_t)(f->n + 1) * 512;
    f->n++;
    return MT_OK;
}

static void fake_free(void *dev, void *ptr, size_t cap) {
    fake *f = dev;
    f->freed_ptr[f->frees] = ptr;
    f->freed_cap[f->frees++] = cap;
}

static void push(mt_gpu_frame *fr, fake *dev) {
    memset(fr, 0, sizeof *fr);
    fr->dev = dev;
    fr->alloc = fake_alloc;
    fr->free = fake_free;
    mt_gpu_frame_push(fr);
}

static void test_capacities_come_back(void **state) {
    (void)state;
    static fake dev;
    memset(&dev, 0, sizeof dev);
    mt_gpu_frame fr;
    push(&fr, &dev);
    void *a = mt_gpu_alloc(100, 4), *b = mt_gpu_alloc(3, 8), *c = mt_gpu_alloc(1, 1);
    assert_ptr_equal(a, &dev.slot[0]);
    mt_gpu_free(b); /* out of order */
    mt_gpu_free(a);
    mt_gpu_free(c);
    mt_gpu_frame_pop(&fr);
    assert_int_equal(dev.frees, 3);
    assert_ptr_equal(dev.freed_ptr[0], &dev.slot[1]);
    assert_int_equal(dev.freed_cap[0], 1024);
    assert_int_equal(dev.freed_cap[1], 512);
    assert_int_equal(dev.freed_cap[2], 1536);
    assert_int_equal(fr.status, MT_OK);
}

static void test_past_the_table(void **state) {
    (void)state;
    static fake dev;
    memset(&dev, 0, sizeof dev);
    mt_gpu_frame fr;
    push(&fr, &dev);
    void *p[MT_GPU_FRAME_LIVE + 2];
    for (int i = 0; i < MT_GPU_FRAME_LIVE + 2; i++) p[i] = mt_gpu_alloc(16, 4);
    for (int i = MT_GPU_FRAME_LIVE + 1; i >= 0; i--) mt_gpu_free(p[i]);
    mt_gpu_frame_pop(&fr);
    assert_int_equal(dev.frees, MT_GPU_FRAME_LIVE + 2);
    assert_int_equal(dev.freed_cap[0], 0); /* the two past the table: unknown */
    assert_int_equal(dev.freed_cap[1], 0);
    for (int i = 2; i < MT_GPU_FRAME_LIVE + 2; i++)
        assert_int_equal(dev.freed_cap[i], (size_t)(MT_GPU_FRAME_LIVE + 1 - i + 1) * 512);
    /* the table emptied: a block allocated now has room again */
    push(&fr, &dev);
    void *q = mt_gpu_alloc(1, 4);
    mt_gpu_free(q);
    mt_gpu_frame_pop(&fr);
    assert_int_equal(dev.freed_cap[dev.frees - 1], (size_t)dev.n * 512);
}

static void test_failure_and_no_frame(void **state) {
    (void)state;
    static fake dev;
    memset(&dev, 0, sizeof dev);
    mt_gpu_frame fr;
    push(&fr, &dev);
    dev.fail = 1;
    assert_null(mt_gpu_alloc(8, 4));
    assert_int_equal(fr.status, MT_ERR_NOMEM);
    assert_non_null(strstr(fr.msg, "out of fake memory (32 bytes)"));
    dev.fail = 0;
    assert_null(mt_gpu_alloc(8, 4)); /* after a failure: nothing more */
    assert_int_equal(dev.n, 0);
    mt_gpu_frame_pop(&fr);
    assert_null(mt_gpu_alloc(8, 4)); /* no frame */
    mt_gpu_free(&dev.slot[0]);
    assert_int_equal(dev.frees, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacities_come_back),
        cmocka_unit_test(test_past_the_table),
        cmocka_unit_test(test_failure_and_no_frame),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
