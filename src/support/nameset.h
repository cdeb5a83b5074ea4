/*
 * nameset.h -- a set of names in an arena, and fresh names from it.
 *
 * The compiler names things after what the source calls them: `out`, then
 * `out_1`, `out_2`, ... each time `out` is rebound; `add`, `add_1`, ... for
 * loop functions. A plain list searched for every candidate makes naming
 * cubic in the number of bindings (a loop unrolled 4096 times took minutes),
 * so the names live in an open-addressing hash set (FNV-1a, linear probing,
 * load at most one half, grown by doubling into a new arena block) and every
 * base name remembers the first suffix still worth trying. Naming n values
 * is then O(n) expected, whatever the source does.
 *
 * A zero-filled mt_nameset is empty and ready. Names are not copied: they
 * must live as long as the set (in the same arena).
 */
#ifndef MT_SUPPORT_NAMESET_H
#define MT_SUPPORT_NAMESET_H

#include <stdbool.h>

#include "support/arena.h"

typedef struct mt_nameset_slot {
    const char *name; /* NULL: empty */
    int next;         /* first k for which name_k may be free (fresh names) */
    int value;        /* the caller's int for this name (mt_nameset_get/put) */
} mt_nameset_slot;

typedef struct mt_nameset {
    mt_nameset_slot *slots;
    int cap, len;
} mt_nameset;

bool mt_nameset_has(const mt_nameset *s, const char *name);
/* Adds name (no-op when present). */
void mt_nameset_add(mt_arena *a, mt_nameset *s, const char *name);
/* `base` when free, else base_1, base_2, ...: the first free one, which is
 * added and returned (allocated in a). */
const char *mt_nameset_fresh(mt_arena *a, mt_nameset *s, const char *base);

/* An int kept with each name, for use as a map (the builder's symbol
 * table): get is 0 for a name never put; put adds the name when absent. */
int mt_nameset_get(const mt_nameset *s, const char *name);
void mt_nameset_put(mt_arena *a, mt_nameset *s, const char *name, int value);

#endif
