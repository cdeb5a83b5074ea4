/*
 * memplan.h -- static memory planning of a plan's intermediates.
 *
 * Built once per compiled kernel (mt_plan_prepare), used by every run. The
 * values a run allocates itself -- intermediates the caller never sees, and
 * the rank-0 constants -- get one live interval each over the program (the
 * instruction indices that touch them, widened to whole loop regions), and an
 * offset in one arena per run, so values whose intervals are disjoint share
 * storage. Results (the caller's tensors, or new tensors handed to it) and
 * parameters are never in the arena. A plan whose values live on several
 * devices has one arena per device (its slots share storage only with slots
 * of the same device). See memplan.c for the algorithm.
 */
#ifndef MT_RUNTIME_MEMPLAN_H
#define MT_RUNTIME_MEMPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_plan;

typedef struct mt_memplan {
    int n;               /* planned values ("slots") */
    int *value;          /* slot -> the plan's value id */
    int *slot_of;        /* value id -> slot, or -1 when not in the arena */
    int *start, *end;    /* live interval of each slot: instruction indices, inclusive */
    bool is_static;      /* every slot has a constant size: offsets fixed at compile time */
    size_t *bytes;       /* static: each slot's exact size in bytes */
    size_t *size;        /* static: the size it takes in the arena (a multiple of 64, >= 64) */
    size_t *offset;      /* static: its offset in the arena (a multiple of 64) */
    int narenas;         /* one arena per device of the plan (mt_plan.devices) */
    int *arena;          /* slot -> its arena: the index of its value's device */
    size_t *arena_size;  /* static: each arena's size in bytes (0: no slot there) */
    size_t arena_bytes;  /* static: all arenas' sizes together */
    size_t unplanned_bytes; /* static: the sum of the sizes (what one buffer each would take) */
} mt_memplan;

/* Plans p's arenas (after mt_plan_prepare numbered its devices). Memory
 * comes from alloc(ctx, n) (zeroed; the plan's own arena). Returns NULL
 * only when alloc does. */
mt_memplan *mt_memplan_build(const struct mt_plan *p, void *(*alloc)(void *ctx, size_t n),
                             void *ctx);

/* The slot's size in the arena for an exact byte count: rounded up to 64. */
size_t mt_memplan_round(size_t bytes);

/* Greedy placement: slots by decreasing size, each at the lowest 64-aligned
 * offset that does not overlap a slot placed before it in the same arena
 * (m->arena; NULL: all in one) whose interval overlaps its own. size[] in,
 * offset[] out (both per slot); scratch holds 2 * m->n ints. Returns the
 * largest arena's size, or SIZE_MAX when one would not fit in a size_t (the
 * offsets are then meaningless). */
size_t mt_memplan_assign(const mt_memplan *m, const size_t *size, size_t *offset, int *scratch);

/* Each arena's size after mt_memplan_assign: out[a] for a < m->narenas. */
void mt_memplan_arena_sizes(const mt_memplan *m, const size_t *size, const size_t *offset,
                            size_t *out);

/* True when slot i is live at instruction pc. */
static inline bool mt_memplan_live(const mt_memplan *m, int i, int pc) {
    return m->start[i] <= pc && pc <= m->end[i];
}

/* The plan as text (the "plan" stage): one line per slot with its value,
 * type, size, offset and live interval, and the arena's size. */
char *mt_memplan_print(const mt_memplan *m, const struct mt_plan *p,
                       void *(*alloc)(void *ctx, size_t n), void *ctx);

#endif
