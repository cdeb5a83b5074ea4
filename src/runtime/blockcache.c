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

bool mt_blockcache_take(mt_blockcache *c, size_t size, const void *stream, mt_cached_block *out) {
    bool found = false;
    pthread_mutex_lock(&c->lock);
    for (int i = c->n - 1; i >= 0 && !found; i--) /* the most recently kept first */
        if (c->b[i].size == size && (c->b[i].stream == stream || c->b[i].event)) {
            *out = remove_at(c, i);
            found = true;
        }
    pthread_mutex_unlock(&c->lock);
    return found;
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
