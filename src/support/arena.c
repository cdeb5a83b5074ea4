/*
 * arena.c -- a bump allocator over a list of malloc'd chunks. Chunks grow
 * geometrically (64 KiB up to 1 MiB); a request larger than a chunk gets a
 * chunk of its own.
 *
 * Chunks are kept for the next arena. A compilation allocates megabytes
 * (the MLP's front half 3.4 MB), and malloc hands chunks of 1 MiB out as
 * fresh mmaps and unmaps them on free: each compile paid a page fault per
 * 4 KiB it touched, about a fifth of the MLP's front half in the release
 * build (docs/robustness.md, "Fuzzing"). mt_arena_destroy now keeps up to
 * CACHE_BYTES of chunks in a list per thread (no lock; a host that forks
 * cannot inherit one held), which the next arena made on that thread takes
 * from, smallest fitting chunk first; a thread's list is freed when it
 * exits (and the calling thread's when the library is unloaded: drop_key). Under AddressSanitizer a kept chunk is poisoned until taken again,
 * so a pointer into a destroyed arena is still reported while its chunk
 * waits (no longer after a later arena took it).
 */
#include "support/arena.h"
#include "support/cnum.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/diag.h"

#include "support/asan.h"

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

/* ---- chunks kept for the next arena ------------------------------------ */

enum { CACHE_BYTES = 8 << 20 }; /* per thread: more than a large compile's arena */

typedef struct kept {
    chunk *head; /* chunks not in use, each poisoned under ASan */
    size_t bytes;
} kept;

static pthread_key_t kept_key;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;
static int kept_ok; /* the key exists */

static void free_kept(void *p) {
    kept *k = p;
    for (chunk *c = k->head, *n; c; c = n) {
        n = c->next;
        MT_UNPOISON(c->data, c->size);
        free(c);
    }
    free(k);
}

static void make_key(void) { kept_ok = pthread_key_create(&kept_key, free_kept) == 0; }

/* When the library is unloaded (a host's dlclose), the key goes with it:
 * a thread ending later must not call free_kept, which is unmapped by
 * then. This thread's chunks are freed; other threads' stay allocated. */
__attribute__((destructor)) static void drop_key(void) {
    if (!kept_ok) return;
    kept *k = pthread_getspecific(kept_key);
    pthread_key_delete(kept_key);
    kept_ok = 0;
    if (k) free_kept(k);
}

/* This thread's kept chunks (NULL when they cannot be had: no key, no memory). */
static kept *this_thread(bool make) {
    pthread_once(&kept_once, make_key);
    if (!kept_ok) return NULL;
    kept *k = pthread_getspecific(kept_key);
    if (!k && make && (k = calloc(1, sizeof *k)) && pthread_setspecific(kept_key, k) != 0) {
        free(k);
        k = NULL;
    }
    return k;
}

/* The smallest kept chunk of at least want bytes, taken off the list, or NULL. */
static chunk *take(size_t want) {
    kept *k = this_thread(false);
    if (!k) return NULL;
    chunk **best = NULL;
    for (chunk **p = &k->head; *p; p = &(*p)->next)
        if ((*p)->size >= want && (!best || (*p)->size < (*best)->size)) best = p;
    if (!best) return NULL;
    chunk *c = *best;
    *best = c->next;
    k->bytes -= c->size;
    MT_UNPOISON(c->data, c->size);
    return c;
}

/* Keeps c for a later arena, or frees it when this thread keeps enough. */
static void give_back(chunk *c) {
    kept *k = this_thread(true);
    if (!k || c->size > CACHE_BYTES - k->bytes) {
        free(c);
        return;
    }
    MT_POISON(c->data, c->size);
    c->next = k->head;
    k->head = c;
    k->bytes += c->size;
}

void mt_arena_release_kept(void) {
    kept *k = this_thread(false);
    if (!k) return;
    for (chunk *c = k->head, *n; c; c = n) {
        n = c->next;
        MT_UNPOISON(c->data, c->size);
        free(c);
    }
    k->head = NULL;
    k->bytes = 0;
}

/* ---- arenas ----------------------------------------------------------------- */

mt_arena *mt_arena_create(void) {
    mt_arena *a = calloc(1, sizeof *a);
    if (a) a->next_size = 64 * 1024;
    return a;
}

void mt_arena_destroy(mt_arena *a) {
    if (!a) return;
    for (chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        give_back(c);
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
        c = take(want);
        if (!c) {
            c = malloc(sizeof(chunk) + want);
            if (!c) mt_fail_noloc(MT_ERR_NOMEM, "out of memory (arena chunk of %zu bytes)", want);
            c->size = want;
        }
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
    int n = mt_c_vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) n = 0;
    char *p = mt_arena_alloc(a, (size_t)n + 1);
    mt_c_vsnprintf(p, (size_t)n + 1, fmt, ap);
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
