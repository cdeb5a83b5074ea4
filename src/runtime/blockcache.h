/*
 * blockcache.h -- the blocks a device keeps for reuse instead of giving them
 * back to the driver (device_cuda.c): cuMemFree waits for the whole device
 * and cuMemAlloc costs tens of microseconds, so a run that allocated its
 * intermediate buffers afresh each time spent more in the driver than in
 * its kernels.
 *
 * A block is cached with the size it was allocated with, the stream its
 * last user queued work on, and optionally an event recorded on that
 * stream after that work. It is handed out again only for the same size,
 * and either for the same stream (stream order makes the reuse safe: work
 * queued by its previous user runs before work queued by the next) or,
 * when it has an event, for any stream (the taker makes its stream wait for
 * the event first). The device decides which blocks get an event; the cache
 * only stores it.
 *
 * At most MT_BLOCKCACHE_MAX blocks and max_bytes bytes are kept: a put
 * beyond that evicts the least recently kept blocks, which the caller
 * frees. Thread-safe.
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
    void *event; /* an event after the last user's work on stream, or NULL */
} mt_cached_block;

typedef struct mt_blockcache {
    pthread_mutex_t lock;
    mt_cached_block b[MT_BLOCKCACHE_MAX]; /* the least recently kept first */
    int n;
    size_t bytes, max_bytes;
} mt_blockcache;

void mt_blockcache_init(mt_blockcache *c, size_t max_bytes);
void mt_blockcache_destroy(mt_blockcache *c); /* the blocks must have been drained */

/* A cached block of exactly size bytes last used on stream, else one
 * holding an event (each time the most recently kept): true and *out. */
bool mt_blockcache_take(mt_blockcache *c, size_t size, const void *stream, mt_cached_block *out);

/* Keeps b, evicting the least recently kept blocks until it fits; returns
 * how many blocks went into evicted (at most MT_BLOCKCACHE_MAX + 1: b
 * itself when it is larger than max_bytes), which the caller frees. */
int mt_blockcache_put(mt_blockcache *c, mt_cached_block b, mt_cached_block *evicted);

/* Removes up to cap blocks into out (to free them); returns how many. */
int mt_blockcache_drain(mt_blockcache *c, mt_cached_block *out, int cap);

#endif
