/*
 * blockcache.h -- the blocks a device keeps for reuse instead of giving them
 * back to the driver (device_cuda.c): cuMemFree waits for the whole device
 * and cuMemAlloc costs tens of microseconds, so a run that allocated its
 * intermediate buffers afresh each time spent more in the driver than in
 * its kernels.
 *
 * A block is cached with the size it was allocated with and the stream its
 * last user queued work on; it is handed out again only for the same size
 * and the same stream, where stream order makes the reuse safe (work queued
 * on the block by its previous user runs before work queued by the next).
 * At most MT_BLOCKCACHE_MAX blocks and max_bytes bytes are kept; put refuses
 * beyond that and the caller frees the block. Thread-safe.
 */
#ifndef MT_RUNTIME_BLOCKCACHE_H
#define MT_RUNTIME_BLOCKCACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { MT_BLOCKCACHE_MAX = 64 };

typedef struct mt_cached_block {
    uint64_t ptr;
    size_t size;
    const void *stream;
} mt_cached_block;

typedef struct mt_blockcache {
    pthread_mutex_t lock;
    mt_cached_block b[MT_BLOCKCACHE_MAX];
    int n;
    size_t bytes, max_bytes;
} mt_blockcache;

void mt_blockcache_init(mt_blockcache *c, size_t max_bytes);
void mt_blockcache_destroy(mt_blockcache *c); /* the blocks must have been drained */

/* A cached block of exactly size bytes last used on stream: true and *ptr. */
bool mt_blockcache_take(mt_blockcache *c, size_t size, const void *stream, uint64_t *ptr);

/* Keeps the block; false when the cache is full (the caller frees it). */
bool mt_blockcache_put(mt_blockcache *c, uint64_t ptr, size_t size, const void *stream);

/* Removes up to cap blocks into out (to free them); returns how many. */
int mt_blockcache_drain(mt_blockcache *c, mt_cached_block *out, int cap);

#endif
