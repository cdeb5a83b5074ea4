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

bool mt_blockcache_take(mt_blockcache *c, size_t size, const void *stream, uint64_t *ptr) {
    bool found = false;
    pthread_mutex_lock(&c->lock);
    for (int i = c->n - 1; i >= 0 && !found; i--) /* the most recently kept first */
        if (c->b[i].size == size && c->b[i].stream == stream) {
            *ptr = c->b[i].ptr;
            c->bytes -= size;
            c->b[i] = c->b[--c->n];
            found = true;
        }
    pthread_mutex_unlock(&c->lock);
    return found;
}

bool mt_blockcache_put(mt_blockcache *c, uint64_t ptr, size_t size, const void *stream) {
    bool kept = false;
    pthread_mutex_lock(&c->lock);
    if (c->n < MT_BLOCKCACHE_MAX && size <= c->max_bytes - c->bytes) {
        c->b[c->n++] = (mt_cached_block){ptr, size, stream};
        c->bytes += size;
        kept = true;
    }
    pthread_mutex_unlock(&c->lock);
    return kept;
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
