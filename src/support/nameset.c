/*
 * nameset.c -- the name set and fresh names (see nameset.h).
 *
 * fresh(base) must give the same name as "the first of base, base_1, base_2,
 * ... not in the set". Names are never removed, so once base_k was found
 * taken it stays taken: the slot of `base` keeps in `next` the first k not
 * yet tried, and the search resumes there. Each candidate costs one hash
 * probe sequence, and each k is tried once per base over the set's life.
 */
#include "support/nameset.h"

#include <stdint.h>
#include <string.h>

static uint64_t hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The slot holding name, or the empty slot where it would go (cap > len). */
static mt_nameset_slot *slot_of(const mt_nameset *s, const char *name) {
    size_t mask = (size_t)s->cap - 1;
    for (size_t i = (size_t)hash(name) & mask;; i = (i + 1) & mask)
        if (!s->slots[i].name || strcmp(s->slots[i].name, name) == 0) return &s->slots[i];
}

bool mt_nameset_has(const mt_nameset *s, const char *name) {
    return s->cap && slot_of(s, name)->name != NULL;
}

static mt_nameset_slot *add(mt_arena *a, mt_nameset *s, const char *name) {
    if (2 * (s->len + 1) > s->cap) {
        mt_nameset g = {NULL, s->cap ? 2 * s->cap : 64, s->len};
        g.slots = MT_NEW_ARRAY(a, mt_nameset_slot, g.cap); /* zero-filled */
        for (int i = 0; i < s->cap; i++)
            if (s->slots[i].name) *slot_of(&g, s->slots[i].name) = s->slots[i];
        *s = g;
    }
    mt_nameset_slot *sl = slot_of(s, name);
    if (!sl->name) {
        sl->name = name;
        sl->next = 1;
        s->len++;
    }
    return sl;
}

void mt_nameset_add(mt_arena *a, mt_nameset *s, const char *name) { add(a, s, name); }

int mt_nameset_get(const mt_nameset *s, const char *name) {
    return s->cap ? slot_of(s, name)->value : 0; /* an empty slot holds 0 */
}

void mt_nameset_put(mt_arena *a, mt_nameset *s, const char *name, int value) {
    add(a, s, name)->value = value;
}

const char *mt_nameset_fresh(mt_arena *a, mt_nameset *s, const char *base) {
    if (!mt_nameset_has(s, base)) {
        const char *n = mt_arena_strdup(a, base);
        add(a, s, n);
        return n;
    }
    int k = slot_of(s, base)->next;
    const char *n;
    for (;; k++) {
        n = mt_arena_printf(a, "%s_%d", base, k);
        if (!mt_nameset_has(s, n)) break;
    }
    slot_of(s, base)->next = k + 1;
    add(a, s, n);
    return n;
}
