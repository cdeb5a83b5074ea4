/*
 * cache.c -- the context's in-memory cache of compiled kernels (cache.h).
 *
 * A key is the compile options and the source serialized into one byte
 * string: a tag, the content of the tuning log by its BLAKE2s digest (not its path: the same
 * file edited is another compilation), the integer options, the string options (each
 * with a presence byte and a length, so NULL and "" differ and no two lists
 * of strings serialize alike), then the source. Its 64-bit hash picks the
 * candidates; the whole string decides. A NULL filename is keyed as
 * "<source>", the name the compiler uses for it.
 *
 * The table is a plain array of at most `capacity` entries searched
 * linearly: at 256 entries a lookup compares 256 hashes, a fraction of a
 * microsecond, far below the hash of a typical source. Each entry carries the
 * tick of its last use; a full cache evicts the entry with the smallest.
 *
 * Kernel references are never dropped while the mutex is held: dropping a
 * kernel's last reference frees its JIT code (under the JIT's lock) and may
 * free its context, so entries are detached under the mutex and released
 * after it.
 */
#include "cache.h"

#include "support/blake2s.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The key covers every field of mt_compile_options. A new field must be
 * serialized in mt_cache_key_init (or two compilations that differ only in
 * it would share a kernel); this mirror of the struct fails the build until
 * it is. */
typedef struct options_mirror_ {
    const char *filename, *entry;
    int target, opt_level, unroll_threshold;
    const char *dump_after;
    const char *arch;
    int emulate;
    const void *params; /* not in the key: a compile with bound parameters is not cached */
    int nparams;
    int check_bounds;
    void *schedule, *schedule_user; /* not in the key: a compile with a callback is not cached */
    const char *tuning_log; /* keyed by the log's content, not its path */
} options_mirror_;
_Static_assert(sizeof(mt_compile_options) == sizeof(options_mirror_) &&
                   offsetof(mt_compile_options, arch) == offsetof(options_mirror_, arch) &&
                   offsetof(mt_compile_options, emulate) == offsetof(options_mirror_, emulate) &&
                   offsetof(mt_compile_options, nparams) == offsetof(options_mirror_, nparams) &&
                   offsetof(mt_compile_options, check_bounds) == offsetof(options_mirror_, check_bounds) &&
                   offsetof(mt_compile_options, schedule_user) == offsetof(options_mirror_, schedule_user) &&
                   offsetof(mt_compile_options, tuning_log) == offsetof(options_mirror_, tuning_log),
               "mt_compile_options changed: add the new field to the cache key (src/cache.c)");

typedef struct entry {
    mt_cache_key key;
    mt_kernel *kernel; /* one reference, the cache's */
    uint64_t used;     /* tick of the last lookup or insert */
} entry;

struct mt_cache {
    pthread_mutex_t lock;
    entry *entries;
    int n, capacity;
    uint64_t tick;
    int64_t hits, misses, evictions;
};

mt_cache *mt_cache_create(int capacity) {
    mt_cache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->capacity = capacity > 0 ? capacity : 0;
    if (c->capacity) {
        c->entries = calloc((size_t)c->capacity, sizeof *c->entries);
        if (!c->entries) {
            free(c);
            return NULL;
        }
    }
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

/* Releases the detached entries[0..n). */
static void release_entries(entry *es, int n) {
    for (int i = 0; i < n; i++) {
        mt_kernel_release(es[i].kernel);
        mt_cache_key_free(&es[i].key);
    }
}

void mt_cache_close(mt_cache *c) {
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    entry *old = c->entries;
    int n = c->n;
    c->entries = NULL;
    c->n = 0;
    c->capacity = 0;
    pthread_mutex_unlock(&c->lock);
    release_entries(old, n);
    free(old);
}

void mt_cache_destroy(mt_cache *c) {
    if (!c) return;
    release_entries(c->entries, c->n);
    free(c->entries);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* ---- keys ------------------------------------------------------------------ */

/* A fast 64-bit hash (8 bytes a step, multiply-xorshift mixing); equality of
 * keys is decided by memcmp, so it only has to spread well. */
static uint64_t hash_bytes(const unsigned char *p, size_t n) {
    const uint64_t m = UINT64_C(0xff51afd7ed558ccd);
    uint64_t h = UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)n;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        h = (h ^ v) * m;
        h ^= h >> 32;
    }
    uint64_t v = 0;
    memcpy(&v, p, n);
    h = (h ^ v) * m;
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return h;
}

typedef struct writer {
    unsigned char *p;
    size_t len;
} writer;

static void put(writer *w, const void *data, size_t n) {
    if (w->p) memcpy(w->p + w->len, data, n);
    w->len += n;
}

static void put_int(writer *w, int v) {
    int32_t x = (int32_t)v;
    put(w, &x, sizeof x);
}

static void put_str(writer *w, const char *s) {
    unsigned char present = s != NULL;
    put(w, &present, 1);
    if (!s) return;
    uint64_t n = strlen(s);
    put(w, &n, sizeof n);
    put(w, s, (size_t)n);
}

/* s by its BLAKE2s digest (a tuning log may be megabytes, and each key
 * of the memory cache is kept with its kernel). */
static void put_digest(writer *w, const char *s) {
    unsigned char present = s != NULL;
    put(w, &present, 1);
    if (!s) return;
    uint8_t d[MT_BLAKE2S_BYTES];
    if (w->p) { /* measuring needs only the length */
        mt_blake2s st;
        mt_blake2s_init(&st);
        mt_blake2s_update(&st, s, strlen(s));
        mt_blake2s_final(&st, d);
    }
    put(w, d, sizeof d);
}

/* Serializes into w (w->p NULL: only measures). */
static void serialize(writer *w, const char *source, const mt_compile_options *o,
                      const char *target, const char *tuning) {
    put(w, "mtk4", 4);
    put_digest(w, tuning);
    put_str(w, target);
    put_str(w, o->arch);
    put_int(w, (int)o->target);
    put_int(w, o->emulate != 0);
    put_int(w, o->opt_level);
    put_int(w, o->unroll_threshold);
    put_str(w, o->filename ? o->filename : "<source>");
    put_str(w, o->entry);
    put_str(w, o->dump_after);
    put_int(w, o->check_bounds != 0);
    put(w, source, strlen(source));
}

int mt_cache_key_init(mt_cache_key *key, const char *source, const mt_compile_options *opts,
                      const char *target, const char *tuning) {
    memset(key, 0, sizeof *key);
    writer w = {NULL, 0};
    serialize(&w, source, opts, target, tuning);
    key->bytes = malloc(w.len);
    if (!key->bytes) return -1;
    key->len = w.len;
    w.p = key->bytes;
    w.len = 0;
    serialize(&w, source, opts, target, tuning);
    key->hash = hash_bytes(key->bytes, key->len);
    return 0;
}

void mt_cache_key_free(mt_cache_key *key) {
    if (!key) return;
    free(key->bytes);
    key->bytes = NULL;
    key->len = 0;
}

static bool key_eq(const mt_cache_key *a, const mt_cache_key *b) {
    return a->hash == b->hash && a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

/* ---- lookup and insert ------------------------------------------------------ */

/* The entry with key, or -1. Called with the mutex held. */
static int find(const mt_cache *c, const mt_cache_key *key) {
    for (int i = 0; i < c->n; i++)
        if (key_eq(&c->entries[i].key, key)) return i;
    return -1;
}

mt_kernel *mt_cache_lookup(mt_cache *c, const mt_cache_key *key) {
    if (!c || !key->bytes) return NULL;
    pthread_mutex_lock(&c->lock);
    mt_kernel *k = NULL;
    int i = find(c, key);
    if (i >= 0) {
        k = c->entries[i].kernel;
        mt_kernel_retain(k);
        c->entries[i].used = ++c->tick;
        c->hits++;
    } else {
        c->misses++;
    }
    pthread_mutex_unlock(&c->lock);
    return k;
}

mt_kernel *mt_cache_insert(mt_cache *c, mt_cache_key *key, mt_kernel *k) {
    if (!c || !key->bytes || !k) return k;
    entry evicted;
    bool have_evicted = false;
    mt_kernel *out = k, *drop = NULL;
    pthread_mutex_lock(&c->lock);
    if (!c->capacity) { /* off, or closed */
        pthread_mutex_unlock(&c->lock);
        return k;
    }
    int i = find(c, key);
    if (i >= 0) {
        /* Another thread compiled the same source meanwhile: hand out its
         * kernel, so that all callers share one. */
        out = c->entries[i].kernel;
        mt_kernel_retain(out);
        c->entries[i].used = ++c->tick;
        drop = k;
    } else {
        int slot = c->n;
        if (c->n == c->capacity) {
            slot = 0;
            for (int j = 1; j < c->n; j++)
                if (c->entries[j].used < c->entries[slot].used) slot = j;
            evicted = c->entries[slot];
            have_evicted = true;
            c->evictions++;
        } else {
            c->n++;
        }
        entry *e = &c->entries[slot];
        e->key = *key;
        key->bytes = NULL; /* the entry owns them now */
        key->len = 0;
        e->kernel = k;
        mt_kernel_retain(k);
        e->used = ++c->tick;
    }
    pthread_mutex_unlock(&c->lock);
    if (have_evicted) release_entries(&evicted, 1);
    if (drop) mt_kernel_release(drop);
    return out;
}

void mt_cache_get_stats(mt_cache *c, mt_cache_stats *out) {
    memset(out, 0, sizeof *out);
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    out->hits = c->hits;
    out->misses = c->misses;
    out->evictions = c->evictions;
    out->entries = c->n;
    out->capacity = c->capacity;
    pthread_mutex_unlock(&c->lock);
}
