/*
 * cache.h -- a context's in-memory cache of compiled kernels.
 *
 * mt_jit_compile of a source with options it has already compiled in the
 * same context returns the kernel it made then (one more reference) instead
 * of compiling again. The key is the source and every field of
 * mt_compile_options (the filename too: diagnostics and dumps mention it),
 * and the text of the host target the context compiles for (target/target.h:
 * CPU, vector width, cores, caches), so that a key says everything the
 * kernel was made for. A key is compared whole, not
 * only by its hash: a hash collision cannot return the wrong kernel.
 *
 * The cache is bounded (the least recently used entry goes when it is full)
 * and thread-safe (one mutex; lookups and inserts are short, compilation runs
 * outside it). Each entry holds one reference on its kernel, and a kernel
 * holds one on its context: that cycle is broken by mt_cache_close, which
 * api.c calls when the host destroys the context, so that the context lives
 * exactly as long as the host's handle and the kernels the host still holds.
 *
 * Only successful compilations are cached; a failing source is compiled (and
 * diagnosed) again each time.
 */
#ifndef MT_CACHE_H
#define MT_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "minitriton.h"

typedef struct mt_cache mt_cache;

/* What identifies a compilation: the options and source serialized into one
 * byte string (malloc'd), and its hash. */
typedef struct mt_cache_key {
    uint64_t hash;
    unsigned char *bytes;
    size_t len;
} mt_cache_key;

/* Default number of entries (mt_context_options.cache_entries = 0). */
#define MT_CACHE_DEFAULT_ENTRIES 256

/* A cache of at most `capacity` kernels; NULL when out of memory. A capacity
 * <= 0 makes a cache that never keeps anything (lookups miss, inserts hand
 * the kernel back). */
mt_cache *mt_cache_create(int capacity);

/* Releases every entry's kernel reference, then frees the cache. */
void mt_cache_destroy(mt_cache *c);

/* Releases every entry's kernel reference and keeps nothing from then on
 * (lookups miss, inserts hand the kernel back). The references are dropped
 * after the mutex is let go (a kernel's last release frees its JIT code). */
void mt_cache_close(mt_cache *c);

/* Builds the key of (source, opts, the tuning log's text or NULL); opts
 * must not be NULL (pass the defaults). 0, or -1 when out of memory. */
int mt_cache_key_init(mt_cache_key *key, const char *source, const mt_compile_options *opts,
                      const char *target, const char *tuning);
void mt_cache_key_free(mt_cache_key *key);

/* The cached kernel for key with one new reference, or NULL. Counts a hit or
 * a miss. */
mt_kernel *mt_cache_lookup(mt_cache *c, const mt_cache_key *key);

/* Offers k (a kernel the caller holds one reference on) under key. Returns
 * the kernel to hand out, with the caller's reference: k itself, or, when
 * another thread inserted the same key meanwhile, that kernel (k's reference
 * is then released), so that every caller gets the same kernel. The key's
 * bytes are taken over when inserted (key->bytes becomes NULL); the caller
 * still calls mt_cache_key_free. */
mt_kernel *mt_cache_insert(mt_cache *c, mt_cache_key *key, mt_kernel *k);

/* Counters for mt_context_cache_stats. */
void mt_cache_get_stats(mt_cache *c, mt_cache_stats *out);

#endif
