/*
 * ptrmap.c -- the pointer map (see ptrmap.h).
 */
#include "support/ptrmap.h"

#include <stdint.h>

static size_t hash(const void *p) {
    uint64_t h = (uint64_t)(uintptr_t)p;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull; /* the finalizer of MurmurHash3 */
    h ^= h >> 33;
    return (size_t)h;
}

/* The slot of key, or the empty one where it would go (cap > len). */
static mt_ptrmap_slot *slot_of(const mt_ptrmap *m, const void *key) {
    size_t mask = (size_t)m->cap - 1;
    for (size_t i = hash(key) & mask;; i = (i + 1) & mask)
        if (!m->slots[i].key || m->slots[i].key == key) return &m->slots[i];
}

int mt_ptrmap_get(const mt_ptrmap *m, const void *key) {
    return m->cap ? slot_of(m, key)->value : 0;
}

void mt_ptrmap_add(mt_arena *a, mt_ptrmap *m, const void *key, int delta) {
    if (2 * (m->len + 1) > m->cap) {
        mt_ptrmap g = {NULL, m->cap ? 2 * m->cap : 64, m->len};
        g.slots = MT_NEW_ARRAY(a, mt_ptrmap_slot, g.cap); /* zero-filled */
        for (int i = 0; i < m->cap; i++)
            if (m->slots[i].key) *slot_of(&g, m->slots[i].key) = m->slots[i];
        *m = g;
    }
    mt_ptrmap_slot *s = slot_of(m, key);
    if (!s->key) {
        s->key = key;
        m->len++;
    }
    s->value += delta;
}
