/*
 * blockcache.c -- the device blocks kept for reuse (blockcache.h).
 */
#include "runtime/blockcache.h"

#include <string.h>

void mt_blockcache_init(mt_blockcache *c, size_t max_bytes) {
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    c->max_bytes = max_bytes;
}

void mt_blockcache_destroy(mt_blockcache *c) { pthread_mutex_destroy(&c->lock); }

/* Removes entry i, keeping the order of the others. The lock is held. */
static mt_cached_block remove_at(mt_blockcache *c, int i) {
    mt_cached_block b = c->b[i];
    memmove(&c->b[i], &c->b[i + 1], (size_t)(c->n - i - 1) * sizeof c->b[0]);
    c->n--;
    c->bytes -= b.size;
    return b;
}

/* The most recently kept block of this size and stream, else of this size
 * with an event (another stream's: the taker's stream will wait for it, so
 * one of its own, which needs no wait and ties it to no other stream's
 * work, goes first); -1 if none. The lock is held. */
static int find(const mt_blockcache *c, size_t size, const void *stream) {
    int other = -1;
    for (int i = c->n - 1; i >= 0; i--) {
        if (c->b[i].size != size) continue;
        if (c->b[i].stream == stream) return i;
        if (c->b[i].event && other < 0) other = i;
    }
    return other;
}

bool mt_blockcache_take(mt_blockcache *c, size_t size, const void *stream, mt_cached_block *out) {
    pthread_mutex_lock(&c->lock);
    int i = find(c, size, stream);
    if (i >= 0) *out = remove_at(c, i);
    pthread_mutex_unlock(&c->lock);
    return i >= 0;
}

int mt_blockcache_put(mt_blockcache *c, mt_cached_block b, mt_cached_block *evicted) {
    if (b.size > c->max_bytes) {
        evicted[0] = b;
        return 1;
    }
    int k = 0;
    pthread_mutex_lock(&c->lock);
    while (c->n == MT_BLOCKCACHE_MAX || b.size > c->max_bytes - c->bytes) evicted[k++] = remove_at(c, 0);
    c->b[c->n++] = b;
    c->bytes += b.size;
    pthread_mutex_unlock(&c->lock);
    return k;
}

int mt_blockcache_drain(mt_blockcache *c, mt_cached_block *out, int cap) {
    pthread_mutex_lock(&c->lock);
    int k = 0;
    while (c->n > 0 && k < cap) {
        out[k] = c->b[--c->n];
        c->bytes -= out[k].size;
        k++;
    }
    pthread_mutex_unlock(&c->lock);
    return k;
}
