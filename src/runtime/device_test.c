/*
 * device_test.c -- the test device: host code run against memory that the
 * host cannot touch (see device.h).
 *
 * What it is for. Programs that move values between the CPU and another
 * device (copies inserted by the compiler, results left on the device,
 * control flow reading a flag that lives there) must be tested on machines
 * without a GPU. The test device makes every mistake of such a program
 * visible: a device address that host code dereferences -- a missing copy,
 * an executor that reads a device scalar directly -- faults at once, and a
 * host address given to a device kernel or copy is refused with an error.
 *
 * How. Each allocation is its own memfd, mapped twice: once PROT_NONE,
 * whose address is the one handed out (the "device address": reading or
 * writing it from the host is a SIGSEGV), and once read-write, the alias
 * the device itself works through. Copies translate the device side of the
 * copy to the alias; a launch translates every pointer argument (an
 * address anywhere inside a block, so arena slots at offsets work) and then
 * calls the host-compiled kernel with the aliases, exactly like the CPU
 * device (mt_dev_host_call). An address in no block is refused. Sizes are
 * rounded up to whole pages (at least one), and the fd is closed once both
 * mappings exist, so nothing but the two mappings stays behind until free.
 *
 * Book-keeping. The blocks are kept sorted by device address under one
 * mutex: alloc and free insert and remove (O(n), n is a run's arena or
 * two and the live tensors), translation is a binary search. The copies and
 * the kernel run outside the lock. Every block holds a reference on the
 * device, so test tensors outlive the test's own reference; destroy runs
 * with the last one. The counters (mt_dev_test_get_stats) let tests check
 * that every block came back and that work ran on the device.
 *
 * AddressSanitizer and valgrind do not track mmap'd memory, so the only
 * check there is the fault itself; tests observe it with a SIGSEGV handler
 * (tests/runtime/test_devices.c).
 */
#define _GNU_SOURCE
#include "runtime/device.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct block {
    char *dev;      /* the address handed out (PROT_NONE) */
    char *rw;       /* the read-write alias of the same pages */
    size_t len;     /* both mappings' length: whole pages */
} block;

typedef struct test_dev {
    mt_dev base;
    pthread_mutex_t mu;     /* guards everything below */
    size_t page;            /* the system's page size */
    block *blocks;          /* live blocks, sorted by dev */
    int n, cap;
    mt_dev_test_stats stats;
} test_dev;

/* The index of the first block whose address is above p (td->mu held). */
static int first_above(const test_dev *td, const char *p) {
    int lo = 0, hi = td->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (td->blocks[mid].dev <= p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The index of the block holding [p, p + n), or -1 (td->mu held). */
static int find_block(const test_dev *td, const char *p, size_t n) {
    int lo = first_above(td, p);
    if (lo == 0) return -1;
    const block *b = &td->blocks[lo - 1];
    size_t at = (size_t)(p - b->dev);
    return at < b->len && n <= b->len - at ? lo - 1 : -1;
}

/* The read-write alias of device range [p, p + n). */
static mt_status translate(test_dev *td, const void *p, size_t n, char **rw, mt_dev_err *e) {
    pthread_mutex_lock(&td->mu);
    int i = find_block(td, p, n);
    if (i >= 0) *rw = td->blocks[i].rw + ((const char *)p - td->blocks[i].dev);
    pthread_mutex_unlock(&td->mu);
    if (i >= 0) return MT_OK;
    return mt_dev_fail(e, MT_ERR_INVALID_ARG, "%p (%zu bytes) is not memory of test:%d", p, n,
                       (int)td->base.where.id);
}

/* Maps a fresh memfd of len bytes twice; false with e set on failure. */
static bool map_block(block *b, size_t len, mt_dev_err *e) {
    int fd = memfd_create("mt-test-device", MFD_CLOEXEC);
    if (fd < 0) return mt_dev_fail(e, MT_ERR_NOMEM, "memfd_create: %s", strerror(errno)), false;
    b->rw = b->dev = MAP_FAILED;
    if (ftruncate(fd, (off_t)len) == 0) {
        b->rw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        b->dev = mmap(NULL, len, PROT_NONE, MAP_SHARED, fd, 0);
    }
    int saved = errno;
    close(fd);
    if (b->rw != MAP_FAILED && b->dev != MAP_FAILED) {
        b->len = len;
        return true;
    }
    if (b->rw != MAP_FAILED) munmap(b->rw, len);
    if (b->dev != MAP_FAILED) munmap(b->dev, len);
    mt_dev_fail(e, MT_ERR_NOMEM, "cannot map %zu bytes of test device memory: %s", len,
                strerror(saved));
    return false;
}

static mt_status test_alloc(mt_dev *d, size_t n, void **ptr, size_t *cap, mt_dev_err *e) {
    test_dev *td = (test_dev *)d;
    *ptr = NULL;
    if (n > ((size_t)1 << 62)) return mt_dev_fail(e, MT_ERR_NOMEM, "%zu bytes is too large", n);
    size_t len = n ? (n + td->page - 1) / td->page * td->page : td->page;
    block b;
    if (!map_block(&b, len, e)) return MT_ERR_NOMEM;
    pthread_mutex_lock(&td->mu);
    if (td->n == td->cap) {
        int cap2 = td->cap ? 2 * td->cap : 16;
        block *nb = realloc(td->blocks, sizeof *nb * (size_t)cap2);
        if (!nb) {
            pthread_mutex_unlock(&td->mu);
            munmap(b.rw, len);
            munmap(b.dev, len);
            return mt_dev_fail(e, MT_ERR_NOMEM, "out of memory");
        }
        td->blocks = nb;
        td->cap = cap2;
    }
    int at = first_above(td, b.dev);
    memmove(td->blocks + at + 1, td->blocks + at, sizeof b * (size_t)(td->n - at));
    td->blocks[at] = b;
    td->n++;
    td->stats.allocs++;
    td->stats.live_blocks++;
    pthread_mutex_unlock(&td->mu);
    mt_dev_retain(d);
    *ptr = b.dev;
    *cap = len;
    return MT_OK;
}

static void test_free(mt_dev *d, void *ptr, size_t cap) {
    test_dev *td = (test_dev *)d;
    if (!ptr) return;
    pthread_mutex_lock(&td->mu);
    int i = find_block(td, ptr, 0);
    block b = {0};
    if (i >= 0 && td->blocks[i].dev == ptr) {
        b = td->blocks[i];
        memmove(td->blocks + i, td->blocks + i + 1, sizeof b * (size_t)(td->n - i - 1));
        td->n--;
        td->stats.live_blocks--;
    }
    pthread_mutex_unlock(&td->mu);
    if (!b.dev) return; /* not a block of this device: nothing to give back */
    munmap(b.rw, b.len);
    munmap(b.dev, b.len);
    mt_dev_release(d);
}

static void count(test_dev *td, int64_t *counter) {
    pthread_mutex_lock(&td->mu);
    (*counter)++;
    pthread_mutex_unlock(&td->mu);
}

/* Between host memory and the device range [p, p + n), either way. */
static mt_status copy_host(mt_dev *d, const void *p, char *host, size_t n, bool to_device,
                           mt_dev_err *e) {
    test_dev *td = (test_dev *)d;
    char *rw;
    if (translate(td, p, n, &rw, e) != MT_OK) return MT_ERR_INVALID_ARG;
    if (n) memcpy(to_device ? rw : host, to_device ? host : rw, n);
    count(td, &td->stats.copies);
    return MT_OK;
}

static mt_status test_h2d(mt_dev *d, void *dst, const void *src, size_t n, mt_dev_err *e) {
    return copy_host(d, dst, (char *)src, n, true, e); /* src is only read */
}

static mt_status test_d2h(mt_dev *d, void *dst, const void *src, size_t n, mt_dev_err *e) {
    return copy_host(d, src, dst, n, false, e);
}

static mt_status test_d2d(mt_dev *d, void *dst, const void *src, size_t n, mt_dev_err *e) {
    test_dev *td = (test_dev *)d;
    char *to, *from;
    if (translate(td, dst, n, &to, e) != MT_OK || translate(td, src, n, &from, e) != MT_OK)
        return MT_ERR_INVALID_ARG;
    if (n && to != from) memmove(to, from, n);
    count(td, &td->stats.copies);
    return MT_OK;
}

static mt_status test_sync(mt_dev *d, mt_dev_err *e) {
    count((test_dev *)d, &((test_dev *)d)->stats.syncs);
    return MT_OK;
}

enum { MAX_LAUNCH_ARGS = 512 };

/* Every pointer argument to its alias, then the host call. */
static mt_status test_launch(mt_dev *d, const mt_dev_launch *l, mt_dev_err *e) {
    test_dev *td = (test_dev *)d;
    int n = l->nptrs + l->nscalars;
    if (n > MAX_LAUNCH_ARGS) return mt_dev_fail(e, MT_ERR_LIMIT, "a launch with %d arguments", n);
    uint64_t words[MAX_LAUNCH_ARGS];
    memcpy(words, l->args, sizeof *words * (size_t)n);
    for (int i = 0; i < l->nptrs; i++) {
        char *rw;
        if (!words[i]) continue;
        if (translate(td, (const void *)(uintptr_t)words[i], 0, &rw, e) != MT_OK)
            return mt_dev_fail(e, MT_ERR_INVALID_ARG,
                               "kernel '%s' launched on test:%d: argument %d (%p) is not memory "
                               "of that device",
                               l->name ? l->name : "?", (int)d->where.id, i,
                               (void *)(uintptr_t)words[i]);
        words[i] = (uint64_t)(uintptr_t)rw;
    }
    count(td, &td->stats.launches);
    return mt_dev_host_call(l->fn, words, l->nptrs, l->nscalars, l->host_cif, e);
}

static void test_destroy(mt_dev *d) {
    test_dev *td = (test_dev *)d;
    for (int i = 0; i < td->n; i++) { /* none: every block holds a reference */
        munmap(td->blocks[i].rw, td->blocks[i].len);
        munmap(td->blocks[i].dev, td->blocks[i].len);
    }
    free(td->blocks);
    pthread_mutex_destroy(&td->mu);
    free(td);
}

#define TEST_DEVICE_OPS                \
    .host_memory = false,              \
    .alloc = test_alloc,               \
    .free = test_free,                 \
    .copy_h2d = test_h2d,              \
    .copy_d2h = test_d2h,              \
    .copy_d2d = test_d2d,              \
    .sync = test_sync,                 \
    .load = mt_dev_host_load,          \
    .function = mt_dev_host_function,  \
    .unload = mt_dev_host_unload,      \
    .launch = test_launch,             \
    .new_tensor = NULL,                \
    .destroy = test_destroy

static const mt_dev_ops test_ops = {.kind = "test", TEST_DEVICE_OPS};
/* The same device answering to cuda:N: the GPU of emulated kernels. */
static const mt_dev_ops emulated_ops = {.kind = "emulated cuda", TEST_DEVICE_OPS};

static mt_dev *create(const mt_dev_ops *ops, mt_device where, mt_dev_err *e);

mt_dev *mt_dev_test_create(int id, mt_dev_err *e) {
    return create(&test_ops, (mt_device){MT_DEVICE_TEST, id}, e);
}

mt_dev *mt_dev_emulated_gpu_create(int ordinal, mt_dev_err *e) {
    return create(&emulated_ops, (mt_device){MT_DEVICE_CUDA, ordinal}, e);
}

static mt_dev *create(const mt_dev_ops *ops, mt_device where, mt_dev_err *e) {
    test_dev *td = calloc(1, sizeof *td);
    if (!td) return mt_dev_fail(e, MT_ERR_NOMEM, "out of memory"), NULL;
    if (pthread_mutex_init(&td->mu, NULL)) {
        free(td);
        return mt_dev_fail(e, MT_ERR_NOMEM, "cannot create a mutex"), NULL;
    }
    long page = sysconf(_SC_PAGESIZE);
    td->page = page > 0 ? (size_t)page : 4096;
    td->base.ops = ops;
    td->base.where = where;
    atomic_init(&td->base.refs, 1);
    return &td->base;
}

void mt_dev_test_get_stats(mt_dev *d, mt_dev_test_stats *out) {
    test_dev *td = (test_dev *)d;
    memset(out, 0, sizeof *out);
    if (!d || (d->ops != &test_ops && d->ops != &emulated_ops)) return;
    pthread_mutex_lock(&td->mu);
    *out = td->stats;
    pthread_mutex_unlock(&td->mu);
}
