/*
 * pool.c -- a caching allocator for the executor's buffers (see pool.h).
 *
 * Size classes. A request is rounded up to a class: 64, 128, 192 bytes, then
 * four classes per power of two (2^k, 1.25 * 2^k, 1.5 * 2^k, 1.75 * 2^k), so
 * a block wastes at most a fifth of itself; classes from 2 MiB on are
 * further rounded up to a multiple of 2 MiB (every such multiple is itself
 * a class). Each class has a free list, so a freed block serves the next
 * request of the same class exactly, which is what a kernel run in a loop
 * asks for.
 *
 * Blocks. Below 2 MiB: aligned_alloc(64). From 2 MiB: an anonymous mmap,
 * trimmed to 2 MiB alignment, with madvise(MADV_HUGEPAGE): the first touch of
 * a fresh 64 MiB buffer costs 3.6 ms with huge pages instead of 165 ms of 4 KiB
 * page faults on the project machine; a reused block costs nothing.
 *
 * Limits. Free blocks are kept up to max_cached bytes (1 GiB by default).
 * Caching a block that would go over the limit first returns every cached
 * block to the system: a workload whose sizes keep changing (symbolic dims)
 * does not hoard stale classes, and a steady one settles on its own set.
 *
 * Threads. One mutex guards the lists and counters; system calls (mmap,
 * munmap, malloc, free) happen outside it. The pool's reference count is one
 * for the owner plus one per block handed out, so blocks released after
 * mt_pool_close (results the host keeps longer than its context) are
 * returned to the system and the last one frees the pool.
 *
 * Under AddressSanitizer cached blocks are poisoned, so a use of a released
 * tensor's memory is still reported although the memory stays mapped.
 */
#define _GNU_SOURCE
#include "runtime/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "runtime/tensor.h"

#include "support/asan.h"

#define HUGE_SIZE ((size_t)2 << 20)
#define DEFAULT_MAX_CACHED ((size_t)1 << 30)

enum { NCLASS = 4 * 64 + 4 };

typedef struct node {
    void *ptr;          /* a free block ... */
    size_t size;        /* ... of this class size */
    struct node *next;
} node;

struct mt_pool {
    pthread_mutex_t mu;     /* guards everything below but refs */
    atomic_int refs;        /* the owner's, plus one per block handed out */
    bool closed;            /* the owner is gone: nothing is cached any more */
    size_t max_cached;      /* bytes of free blocks kept at most */
    size_t cached;          /* bytes of free blocks kept now */
    size_t live;            /* bytes handed out */
    int64_t hits, misses;
    node *lists[NCLASS];    /* free blocks per class */
};

/* The class of n bytes (n >= 1): its index and size. 0 when n is too large.
 * Sizes are multiples of 64 (aligned_alloc wants a multiple of the
 * alignment): 64, 128, 192, then four per power of two from 256 on. */
static size_t class_of(size_t n, int *idx) {
    if (n > ((size_t)1 << 62)) return 0;
    if (n <= 256) {
        size_t size = n <= 64 ? 64 : (n + 63) / 64 * 64;
        *idx = (int)(size / 64) - 1; /* 0..3; 4 * k + m is >= 32 for k >= 8 */
        if (size == 256) *idx = 4 * 8;
        return size;
    }
    int k = 63 - __builtin_clzll((unsigned long long)n);
    size_t base = (size_t)1 << k, step = base / 4;
    size_t m = (n - base + step - 1) / step; /* 0..4 */
    size_t size = base + m * step;
    if (size >= HUGE_SIZE) size = (size + HUGE_SIZE - 1) / HUGE_SIZE * HUGE_SIZE;
    /* the index of `size` itself, which is a class size */
    k = 63 - __builtin_clzll((unsigned long long)size);
    base = (size_t)1 << k;
    *idx = 4 * k + (int)((size - base) / (base / 4));
    return size;
}

static void *sys_alloc(size_t size) {
    if (size < HUGE_SIZE) return aligned_alloc(64, size);
    size_t len = size + HUGE_SIZE;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    char *q = (char *)(((uintptr_t)p + HUGE_SIZE - 1) & ~(uintptr_t)(HUGE_SIZE - 1));
    if (q > p) munmap(p, (size_t)(q - p));
    size_t tail = (size_t)(p + len - (q + size));
    if (tail) munmap(q + size, tail);
    madvise(q, size, MADV_HUGEPAGE); /* advice: no huge pages is not an error */
    return q;
}

static void sys_free(void *ptr, size_t size) {
    if (size < HUGE_SIZE) free(ptr);
    else munmap(ptr, size);
}

mt_pool *mt_pool_create(size_t max_cached) {
    mt_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    if (pthread_mutex_init(&p->mu, NULL)) {
        free(p);
        return NULL;
    }
    atomic_init(&p->refs, 1);
    p->max_cached = max_cached ? max_cached : DEFAULT_MAX_CACHED;
    return p;
}

static void unref(mt_pool *p) {
    if (atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1) return;
    pthread_mutex_destroy(&p->mu);
    free(p);
}

/* Unlinks every cached block (under the lock); free_chain frees them. */
static node *take_all(mt_pool *p) {
    node *all = NULL;
    for (int i = 0; i < NCLASS; i++)
        while (p->lists[i]) {
            node *n = p->lists[i];
            p->lists[i] = n->next;
            n->next = all;
            all = n;
        }
    p->cached = 0;
    return all;
}

static void free_chain(node *n) {
    while (n) {
        node *next = n->next;
        MT_UNPOISON(n->ptr, n->size);
        sys_free(n->ptr, n->size);
        free(n);
        n = next;
    }
}

void mt_pool_close(mt_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->closed = true;
    node *all = take_all(p);
    pthread_mutex_unlock(&p->mu);
    free_chain(all);
    unref(p);
}

void *mt_pool_alloc(mt_pool *p, size_t n, size_t *cap) {
    int idx;
    size_t size = class_of(n ? n : 1, &idx);
    if (!size || idx >= NCLASS) return NULL;
    pthread_mutex_lock(&p->mu);
    node *nd = p->lists[idx];
    if (nd) {
        p->lists[idx] = nd->next;
        p->cached -= size;
        p->hits++;
    } else {
        p->misses++;
    }
    p->live += size;
    pthread_mutex_unlock(&p->mu);
    void *ptr;
    if (nd) {
        ptr = nd->ptr;
        free(nd);
        MT_UNPOISON(ptr, size);
    } else if (!(ptr = sys_alloc(size))) {
        pthread_mutex_lock(&p->mu);
        p->live -= size;
        pthread_mutex_unlock(&p->mu);
        return NULL;
    }
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
    *cap = size;
    return ptr;
}

void mt_pool_free(mt_pool *p, void *ptr, size_t cap) {
    if (!ptr) return;
    node *nd = malloc(sizeof *nd), *evicted = NULL;
    int idx = -1; /* cap is a class size (mt_pool_alloc), so class_of sets it */
    class_of(cap, &idx);
    pthread_mutex_lock(&p->mu);
    p->live -= cap;
    bool keep = nd && !p->closed && cap <= p->max_cached && idx >= 0 && idx < NCLASS;
    if (keep) {
        if (p->cached + cap > p->max_cached) evicted = take_all(p);
        nd->ptr = ptr;
        nd->size = cap;
        nd->next = p->lists[idx];
        p->lists[idx] = nd;
        p->cached += cap;
        MT_POISON(ptr, cap);
    }
    pthread_mutex_unlock(&p->mu);
    free_chain(evicted);
    if (!keep) {
        free(nd);
        sys_free(ptr, cap);
    }
    unref(p);
}

static void give_back(void *owner, void *data, size_t capacity) {
    mt_pool_free(owner, data, capacity);
}

mt_tensor *mt_pool_tensor(mt_pool *p, mt_dtype dtype, int ndim, const int64_t *shape) {
    size_t nbytes, cap;
    if (!mt_shape_nbytes(dtype, ndim, shape, &nbytes)) return NULL;
    void *data = mt_pool_alloc(p, nbytes, &cap);
    if (!data) return NULL;
    mt_tensor *t = mt_tensor_adopt(data, dtype, ndim, shape, give_back, p, cap);
    if (!t) mt_pool_free(p, data, cap);
    return t;
}

void mt_pool_get_stats(mt_pool *p, mt_pool_stats *out) {
    pthread_mutex_lock(&p->mu);
    out->hits = p->hits;
    out->misses = p->misses;
    out->cached_bytes = p->cached;
    out->live_bytes = p->live;
    pthread_mutex_unlock(&p->mu);
}
