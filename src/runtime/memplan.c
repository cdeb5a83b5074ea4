/*
 * memplan.c -- liveness and arena offsets of a plan's intermediates (see
 * memplan.h).
 *
 * Which values. Intermediates (MT_VAL_TEMP) that are not results, and
 * constants. A result's storage is the caller's tensor or a new tensor handed
 * to the caller, so it never shares memory with anything; parameters are the
 * caller's.
 *
 * Liveness. The program is a straight line of instructions with jumps. A
 * slot's interval starts as [first, last] instruction that names it (a
 * kernel call's argument or output, a copy's source or destination, a jump
 * condition, a loop's counter, bound or step, an assertion). Forward jumps
 * (if/else) only skip instructions, so along any run a value is written and
 * read inside that interval. A backward jump (a loop's back edge from s to
 * t) makes everything in [t, s] run again: a slot whose interval meets
 * [t, s] is widened to cover all of it (a value read at the top of the body
 * and written at the bottom lives across iterations; one made and used
 * inside the body is conservatively kept for the whole loop). Widening
 * repeats until nothing changes (nested loops). Constants are written
 * before the program and read by the result copies after it: live over
 * [0, ninstrs].
 *
 * Intervals are closed, so a kernel's inputs and outputs always overlap (the
 * instruction that reads one and writes the other is in both): no kernel is
 * ever run in place on shared storage, and a copy's source and destination
 * never share.
 *
 * Placement (mt_memplan_assign). Greedy by size, first fit: slots sorted by
 * decreasing size (then by start, then id), each placed at the lowest
 * offset, aligned to 64, that does not overlap any already-placed slot whose
 * interval overlaps its own: a merge sort, then one walk per slot over the
 * slots placed before it, kept in offset order. O(n^2) for n slots (a few
 * microseconds for the tens of values a plan has; a program unrolled to
 * thousands of values once took most of its compile time in a cubic version). When every slot has a
 * constant shape this runs once, here; otherwise the executor runs it per
 * run with the sizes of that run's symbolic dims (executor.c).
 *
 * Devices. A slot is in the arena of its value's device; slots of
 * different arenas never conflict, so one placement pass lays out every
 * arena at once, each from offset 0.
 */
#include "runtime/memplan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/executor.h"
#include "runtime/tensor.h"

size_t mt_memplan_round(size_t bytes) {
    if (bytes == 0) return 64;
    return (bytes + 63) / 64 * 64;
}

static void touch(int *start, int *end, const int *slot_of, int v, int pc) {
    int s = slot_of[v];
    if (s < 0) return;
    if (start[s] < 0 || pc < start[s]) start[s] = pc;
    if (pc > end[s]) end[s] = pc;
}

static void intervals(const mt_plan *p, mt_memplan *m) {
    for (int i = 0; i < m->n; i++) m->start[i] = m->end[i] = -1;
    for (int pc = 0; pc < p->ninstrs; pc++) {
        const mt_instr *in = &p->instrs[pc];
        switch (in->kind) {
        case MT_I_CALL: {
            const mt_plan_call *c = &p->calls[in->a];
            for (int q = 0; q < c->nargs; q++) touch(m->start, m->end, m->slot_of, c->args[q], pc);
            break;
        }
        case MT_I_COPY:
            touch(m->start, m->end, m->slot_of, in->a, pc);
            touch(m->start, m->end, m->slot_of, in->b, pc);
            break;
        case MT_I_LOOP_TEST: /* counter, bound, step */
            touch(m->start, m->end, m->slot_of, in->a, pc);
            touch(m->start, m->end, m->slot_of, in->b, pc);
            touch(m->start, m->end, m->slot_of, in->c, pc);
            break;
        case MT_I_LOOP_STEP: /* counter, step */
            touch(m->start, m->end, m->slot_of, in->a, pc);
            touch(m->start, m->end, m->slot_of, in->c, pc);
            break;
        case MT_I_JUMP_IF_NOT:
        case MT_I_ASSERT: touch(m->start, m->end, m->slot_of, in->a, pc); break;
        case MT_I_JUMP: break;
        }
    }
    for (int i = 0; i < m->n; i++) {
        if (p->values[m->value[i]].kind == MT_VAL_CONST) {
            m->start[i] = 0;
            m->end[i] = p->ninstrs;
        } else if (m->start[i] < 0) {
            m->start[i] = m->end[i] = 0; /* never named: still allocated, briefly */
        }
    }
    /* loops: widen to every back edge's region the interval meets */
    for (bool changed = true; changed;) {
        changed = false;
        for (int pc = 0; pc < p->ninstrs; pc++) {
            const mt_instr *in = &p->instrs[pc];
            if (in->kind != MT_I_JUMP && in->kind != MT_I_JUMP_IF_NOT && in->kind != MT_I_LOOP_TEST)
                continue;
            int t = in->target;
            if (t > pc) continue;
            for (int i = 0; i < m->n; i++) {
                if (m->end[i] < t || m->start[i] > pc) continue;
                if (m->start[i] > t) m->start[i] = t, changed = true;
                if (m->end[i] < pc) m->end[i] = pc, changed = true;
            }
        }
    }
}

static bool overlaps(const mt_memplan *m, int i, int j) {
    return m->start[i] <= m->end[j] && m->start[j] <= m->end[i] &&
           (!m->arena || m->arena[i] == m->arena[j]);
}

/* The placement order: larger first, then earlier start, then lower id (a
 * total order, so the result does not depend on the sort). */
static bool goes_before(const mt_memplan *m, const size_t *size, int i, int j) {
    if (size[i] != size[j]) return size[i] > size[j];
    if (m->start[i] != m->start[j]) return m->start[i] < m->start[j];
    return i < j;
}

/* Sorts order[0, n) by goes_before: bottom-up merge sort through tmp. */
static void sort_slots(const mt_memplan *m, const size_t *size, int *order, int *tmp, int n) {
    int *src = order, *dst = tmp;
    for (int w = 1; w < n; w *= 2) {
        for (int lo = 0; lo < n; lo += 2 * w) {
            int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                dst[k++] = goes_before(m, size, src[b], src[a]) ? src[b++] : src[a++];
            while (a < mid) dst[k++] = src[a++];
            while (b < hi) dst[k++] = src[b++];
        }
        int *t = src;
        src = dst;
        dst = t;
    }
    if (src != order) memcpy(order, src, sizeof *order * (size_t)n);
}

size_t mt_memplan_assign(const mt_memplan *m, const size_t *size, size_t *offset, int *scratch) {
    int n = m->n, *order = scratch, *byoff = scratch + n;
    for (int k = 0; k < n; k++) order[k] = k;
    sort_slots(m, size, order, byoff, n);
    /* byoff[0, k): the slots placed so far by offset (ties in placement
     * order); a slot's place is found by one walk over those it meets */
    size_t total = 0;
    for (int k = 0; k < n; k++) {
        int i = order[k];
        size_t at = 0, end; /* placed slots end below SIZE_MAX (checked when placed) */
        for (int q = 0; q < k; q++) {
            int j = byoff[q];
            if (!overlaps(m, i, j)) continue;
            if (__builtin_add_overflow(at, size[i], &end)) return SIZE_MAX;
            if (end <= offset[j]) break;
            if (offset[j] + size[j] > at) at = offset[j] + size[j];
        }
        /* sizes come from run-time dims: an arena past SIZE_MAX must not wrap */
        if (__builtin_add_overflow(at, size[i], &end) || end == SIZE_MAX) return SIZE_MAX;
        offset[i] = at;
        if (end > total) total = end;
        int lo = 0, hi = k; /* insert after every placed slot at or below `at` */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (offset[byoff[mid]] <= at) lo = mid + 1;
            else hi = mid;
        }
        memmove(byoff + lo + 1, byoff + lo, sizeof *byoff * (size_t)(k - lo));
        byoff[lo] = i;
    }
    return total;
}

void mt_memplan_arena_sizes(const mt_memplan *m, const size_t *size, const size_t *offset,
                            size_t *out) {
    for (int a = 0; a < m->narenas; a++) out[a] = 0;
    for (int i = 0; i < m->n; i++) {
        int a = m->arena ? m->arena[i] : 0;
        if (offset[i] + size[i] > out[a]) out[a] = offset[i] + size[i];
    }
}

/* The slot's exact size when its shape is constant; false otherwise. */
static bool const_bytes(const mt_plan_value *v, size_t *out) {
    int64_t shape[MT_MAX_RANK];
    for (int d = 0; d < v->ndim; d++) {
        if (v->dims[d].sym >= 0) return false;
        shape[d] = v->dims[d].value;
    }
    return mt_shape_nbytes(v->dtype, v->ndim, shape, out);
}

mt_memplan *mt_memplan_build(const mt_plan *p, void *(*alloc)(void *ctx, size_t n), void *ctx) {
    mt_memplan *m = alloc(ctx, sizeof *m);
    if (!m) return NULL;
    int nv = p->nvalues > 0 ? p->nvalues : 1;
    m->slot_of = alloc(ctx, sizeof(int) * (size_t)nv);
    m->value = alloc(ctx, sizeof(int) * (size_t)nv);
    if (!m->slot_of || !m->value) return NULL;
    for (int i = 0; i < p->nvalues; i++) {
        const mt_plan_value *v = &p->values[i];
        bool result = false;
        for (int r = 0; r < p->nresults; r++) result |= p->results[r] == i;
        bool planned = v->kind == MT_VAL_CONST || (v->kind == MT_VAL_TEMP && !result);
        m->slot_of[i] = planned ? m->n : -1;
        if (planned) m->value[m->n++] = i;
    }
    size_t ns = (size_t)(m->n > 0 ? m->n : 1);
    m->narenas = p->ndevices > 0 ? p->ndevices : 1;
    m->start = alloc(ctx, sizeof(int) * ns);
    m->end = alloc(ctx, sizeof(int) * ns);
    m->arena = alloc(ctx, sizeof(int) * ns);
    m->bytes = alloc(ctx, sizeof(size_t) * ns);
    m->size = alloc(ctx, sizeof(size_t) * ns);
    m->offset = alloc(ctx, sizeof(size_t) * ns);
    m->arena_size = alloc(ctx, sizeof(size_t) * (size_t)m->narenas);
    int *scratch = alloc(ctx, sizeof(int) * 2 * ns);
    if (!m->start || !m->end || !m->arena || !m->bytes || !m->size || !m->offset ||
        !m->arena_size || !scratch)
        return NULL;
    for (int i = 0; i < m->n; i++) m->arena[i] = p->values[m->value[i]].dev;
    intervals(p, m);
    m->is_static = true;
    for (int i = 0; i < m->n && m->is_static; i++)
        m->is_static = const_bytes(&p->values[m->value[i]], &m->bytes[i]);
    if (m->is_static) {
        for (int i = 0; i < m->n; i++) {
            m->size[i] = mt_memplan_round(m->bytes[i]);
            if (__builtin_add_overflow(m->unplanned_bytes, m->size[i], &m->unplanned_bytes))
                m->unplanned_bytes = SIZE_MAX;
        }
        if (mt_memplan_assign(m, m->size, m->offset, scratch) == SIZE_MAX) {
            m->arena_bytes = SIZE_MAX; /* the run fails with MT_ERR_NOMEM */
            for (int a = 0; a < m->narenas; a++) m->arena_size[a] = SIZE_MAX;
            return m;
        }
        mt_memplan_arena_sizes(m, m->size, m->offset, m->arena_size);
        for (int a = 0; a < m->narenas; a++)
            if (__builtin_add_overflow(m->arena_bytes, m->arena_size[a], &m->arena_bytes))
                m->arena_bytes = SIZE_MAX;
    }
    return m;
}

/* ---- printing ------------------------------------------------------------ */

typedef struct sbuf {
    char *s;
    size_t len, cap;
    bool oom;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...) {
    if (b->oom) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 1024) + (size_t)n;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->oom = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *mt_memplan_print(const mt_memplan *m, const mt_plan *p, void *(*alloc)(void *ctx, size_t n),
                       void *ctx) {
    sbuf b = {0};
    put(&b, "# memory plan: %d value%s in %s per run; the program has %d instruction%s\n", m->n,
        m->n == 1 ? "" : "s", m->narenas > 1 ? "one arena per device" : "one arena", p->ninstrs,
        p->ninstrs == 1 ? "" : "s");
    if (m->is_static)
        put(&b, "# arena: %zu bytes (one buffer per value: %zu bytes)\n", m->arena_bytes,
            m->unplanned_bytes);
    else
        put(&b, "# arena: planned per run (symbolic shapes); offsets below are not fixed\n");
    for (int a = 0; m->narenas > 1 && a < m->narenas; a++) {
        char dev[32];
        mt_device_str(p->devices[a], dev, sizeof dev);
        if (m->is_static) put(&b, "#   on %s: %zu bytes\n", dev, m->arena_size[a]);
        else put(&b, "#   on %s\n", dev);
    }
    put(&b, "# %-20s %-24s %12s %12s  live\n", "value", "type", "bytes", "offset");
    for (int i = 0; i < m->n; i++) {
        const mt_plan_value *v = &p->values[m->value[i]];
        char type[128];
        size_t n = (size_t)snprintf(type, sizeof type, "%s(", mt_dtype_str(v->dtype));
        for (int d = 0; d < v->ndim && n < sizeof type; d++) {
            if (v->dims[d].sym >= 0)
                n += (size_t)snprintf(type + n, sizeof type - n, "%s%s", d ? ", " : "",
                                      p->sym_names[v->dims[d].sym]);
            else
                n += (size_t)snprintf(type + n, sizeof type - n, "%s%lld", d ? ", " : "",
                                      (long long)v->dims[d].value);
        }
        if (n < sizeof type) snprintf(type + n, sizeof type - n, ")");
        const char *name = v->name ? v->name : "?";
        char where[40] = "";
        if (m->narenas > 1) {
            char dev[32];
            mt_device_str(p->devices[m->arena[i]], dev, sizeof dev);
            snprintf(where, sizeof where, " on %s", dev);
        }
        if (m->is_static)
            put(&b, "  %-20s %-24s %12zu %12zu  [%d, %d]%s%s\n", name, type, m->bytes[i],
                m->offset[i], m->start[i], m->end[i],
                v->kind == MT_VAL_CONST ? " const" : "", where);
        else
            put(&b, "  %-20s %-24s %12s %12s  [%d, %d]%s%s\n", name, type, "-", "-", m->start[i],
                m->end[i], v->kind == MT_VAL_CONST ? " const" : "", where);
    }
    if (b.oom || !b.s) {
        free(b.s);
        return NULL;
    }
    char *out = alloc(ctx, b.len + 1);
    if (out) memcpy(out, b.s, b.len + 1);
    free(b.s);
    return out;
}
