/*
 * pool.h -- the context's memory pool for intermediates and results.
 *
 * The executor takes every buffer it allocates during a run from the pool
 * of the kernel's context: one arena block for the intermediates and
 * constants (runtime/memplan.h), and a tensor per result the caller did not
 * provide, whose release gives the memory back to the pool. Intermediates are released at the end of the run; results are handed
 * to the caller and come back when the caller releases them, so a host that
 * runs a kernel in a loop and releases the previous result reuses the same
 * pages instead of faulting in fresh ones (10 us per 4 KiB page on the
 * project machine). Memory is not zeroed.
 *
 * Lifetime: the context owns the pool and closes it when it is destroyed,
 * which frees every cached block. Tensors still alive (results the host
 * keeps) hold a reference on the pool; their blocks go straight back to the
 * system when released, and the pool's header is freed with the last one.
 * All functions are thread-safe. See pool.c for size classes and limits.
 */
#ifndef MT_RUNTIME_POOL_H
#define MT_RUNTIME_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "minitriton.h"

typedef struct mt_pool mt_pool;

/* A new, empty pool; NULL when out of memory. max_cached: bytes of free
 * blocks kept for reuse (0 = the default, 1 GiB). */
mt_pool *mt_pool_create(size_t max_cached);

/* The owner is done with the pool: frees the cached blocks; tensors still
 * out keep working and free their memory when released. NULL is a no-op. */
void mt_pool_close(mt_pool *p);

/* A contiguous tensor of the given type whose data (64-byte aligned, 2 MiB
 * aligned and backed by transparent huge pages from 2 MiB on, not zeroed)
 * comes from the pool and goes back to it when the tensor's last reference
 * is released. NULL when the shape is invalid or memory runs out. */
mt_tensor *mt_pool_tensor(mt_pool *p, mt_dtype dtype, int ndim, const int64_t *shape);

/* Raw blocks (what mt_pool_tensor uses): at least n bytes, *cap set to the
 * block's real size, which mt_pool_free must be given back. */
void *mt_pool_alloc(mt_pool *p, size_t n, size_t *cap);
void mt_pool_free(mt_pool *p, void *ptr, size_t cap);

typedef struct mt_pool_stats {
    int64_t hits;         /* allocations served from the cache */
    int64_t misses;       /* allocations that went to the system */
    size_t cached_bytes;  /* free blocks held now */
    size_t live_bytes;    /* blocks handed out and not returned */
} mt_pool_stats;

void mt_pool_get_stats(mt_pool *p, mt_pool_stats *out);

#endif
