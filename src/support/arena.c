/*
 * arena.c -- a bump allocator over a list of malloc'd chunks. Chunks grow
 * geometrically (64 KiB up to 1 MiB); a request larger than a chunk gets a
 * chunk of its own.
 */
#include "support/arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/diag.h"

typedef struct chunk {
    struct chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
} chunk;

struct mt_arena {
    chunk *head;
    size_t next_size;
    size_t total;
};

mt_arena *mt_arena_create(void) {
    mt_arena *a = calloc(1, sizeof *a);
    if (a) a->next_size = 64 * 1024;
    return a;
}

void mt_arena_destroy(mt_arena *a) {
    if (!a) return;
    for (chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(a);
}

void *mt_arena_alloc(mt_arena *a, size_t size) {
    size = (size + 15) & ~(size_t)15;
    if (size == 0) size = 16;
    chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t want = a->next_size;
        if (want < size) want = size;
        if (want > SIZE_MAX - sizeof(chunk)) mt_fail_noloc(MT_ERR_NOMEM, "out of memory");
        c = malloc(sizeof(chunk) + want);
        if (!c) mt_fail_noloc(MT_ERR_NOMEM, "out of memory (arena chunk of %zu bytes)", want);
        c->size = want;
        c->used = 0;
        c->next = a->head;
        a->head = c;
        if (a->next_size < (1u << 20)) a->next_size *= 2;
    }
    void *p = c->data + c->used;
    c->used += size;
    a->total += size;
    memset(p, 0, size);
    return p;
}

char *mt_arena_strndup(mt_arena *a, const char *s, size_t n) {
    char *p = mt_arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *mt_arena_strdup(mt_arena *a, const char *s) { return mt_arena_strndup(a, s, strlen(s)); }

char *mt_arena_vprintf(mt_arena *a, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) n = 0;
    char *p = mt_arena_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *mt_arena_printf(mt_arena *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *p = mt_arena_vprintf(a, fmt, ap);
    va_end(ap);
    return p;
}

size_t mt_arena_bytes(const mt_arena *a) { return a->total; }

void mt_vec_grow_(mt_arena *a, void **data, int *cap, size_t elem) {
    int ncap = *cap ? *cap * 2 : 8;
    void *nd = mt_arena_alloc(a, elem * (size_t)ncap);
    if (*cap) memcpy(nd, *data, elem * (size_t)*cap);
    *data = nd;
    *cap = ncap;
}
