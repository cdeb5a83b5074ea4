/*
 * ptrmap.h -- a map from pointers to ints in an arena.
 *
 * The graph passes ask "how many uses does this value have?" and "is this
 * function called?" for every binding; answered by scanning the function
 * each time, that is quadratic in the bindings. A pointer map built in one
 * walk answers in O(1): open addressing with linear probing on a hash of the
 * pointer, load at most one half, grown by doubling into a new arena block.
 * Entries are never removed (a count may go to zero). A zero-filled map is
 * empty and ready.
 */
#ifndef MT_SUPPORT_PTRMAP_H
#define MT_SUPPORT_PTRMAP_H

#include "support/arena.h"

typedef struct mt_ptrmap_slot {
    const void *key; /* NULL: empty */
    int value;
} mt_ptrmap_slot;

typedef struct mt_ptrmap {
    mt_ptrmap_slot *slots;
    int cap, len;
} mt_ptrmap;

/* The value of key, 0 when absent. key must not be NULL. */
int mt_ptrmap_get(const mt_ptrmap *m, const void *key);
/* Adds delta to the value of key (inserting it at 0 first). */
void mt_ptrmap_add(mt_arena *a, mt_ptrmap *m, const void *key, int delta);

#endif
