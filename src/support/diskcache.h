/*
 * diskcache.h -- a directory of verified, size-bounded cache entries shared
 * by processes: the store under the disk cache of compiled kernels.
 *
 * An entry is a list of byte strings (blobs) under a 32-byte key (the
 * caller's hash of everything the blobs depend on). It knows nothing of
 * what the blobs are: codegen/compile.c keeps a program's object files and
 * bitcode in them. See diskcache.c for the file format and the rules that
 * make it safe between processes.
 *
 *     char *dir = mt_diskcache_resolve_dir(opts->cache_dir);  // NULL: off
 *     mt_diskcache *dc = dir ? mt_diskcache_open(dir, 0) : NULL;
 *     mt_diskcache_entry e;
 *     if (mt_diskcache_get(dc, key, &e)) { use e.blobs[0..e.nblobs); mt_diskcache_entry_free(&e); }
 *     else { ...; mt_diskcache_put(dc, key, blobs, n); }
 *     mt_diskcache_close(dc);
 *
 * Nothing here prints or fails the caller: an unreadable, corrupt or
 * unwritable entry is a miss or a skipped write, counted in the stats.
 * Thread-safe (the counters are atomic; the rest is the file system's).
 */
#ifndef MT_SUPPORT_DISKCACHE_H
#define MT_SUPPORT_DISKCACHE_H

#include <stddef.h>
#include <stdint.h>

#define MT_DISKCACHE_KEY_BYTES 32
/* The bound when mt_diskcache_open is given 0. */
#define MT_DISKCACHE_DEFAULT_MAX_BYTES ((int64_t)256 << 20)

typedef struct mt_diskcache mt_diskcache;

typedef struct mt_diskcache_blob {
    const void *data;
    size_t len;
} mt_diskcache_blob;

/* An entry read back: blobs point into mem (malloc'ed). */
typedef struct mt_diskcache_entry {
    void *mem;
    mt_diskcache_blob *blobs;
    int nblobs;
} mt_diskcache_entry;

/* Counters since open. */
typedef struct mt_diskcache_counts {
    int64_t hits, misses, writes, errors, corrupt, evictions;
} mt_diskcache_counts;

/* The cache directory for the option `option` (malloc'ed), or NULL when the
 * disk cache is off: option "" -> off; another option -> that directory;
 * NULL -> $MINITRITON_CACHE_DIR ("", "off", "0": off), else
 * $XDG_CACHE_HOME/minitriton (an absolute XDG_CACHE_HOME only), else
 * $HOME/.cache/minitriton, else off. */
char *mt_diskcache_resolve_dir(const char *option);

/* A store over directory `dir` (made, with its parents, at the first
 * write), holding at most max_bytes of entries (0: the default; < 0: NULL,
 * off). NULL when off or out of memory. */
mt_diskcache *mt_diskcache_open(const char *dir, int64_t max_bytes);
void mt_diskcache_close(mt_diskcache *dc);

const char *mt_diskcache_dir(const mt_diskcache *dc);
int64_t mt_diskcache_max_bytes(const mt_diskcache *dc);

/* 1 and the entry of key in *out (free with mt_diskcache_entry_free), its
 * modification time set to now (the recency eviction goes by); 0 when there
 * is none or it does not verify (wrong magic, version or key, a size that
 * disagrees, a checksum that does not match): a miss. dc NULL: 0. */
int mt_diskcache_get(mt_diskcache *dc, const uint8_t key[MT_DISKCACHE_KEY_BYTES],
                     mt_diskcache_entry *out);
void mt_diskcache_entry_free(mt_diskcache_entry *e);

/* Writes the entry of key atomically (a temporary file in the directory,
 * then rename over any entry of that key), then evicts the least recently
 * used entries while the directory holds more than the bound. 0, or -1 when
 * it could not be written (counted as an error; the directory is left
 * without a partial entry). */
int mt_diskcache_put(mt_diskcache *dc, const uint8_t key[MT_DISKCACHE_KEY_BYTES],
                     const mt_diskcache_blob *blobs, int nblobs);

/* Deletes the entry of key: one that verified but could not be used (the
 * next writer makes it afresh). */
void mt_diskcache_remove(mt_diskcache *dc, const uint8_t key[MT_DISKCACHE_KEY_BYTES]);

/* The path of key's entry (malloc'ed): for tests that damage entries. */
char *mt_diskcache_entry_path(const mt_diskcache *dc, const uint8_t key[MT_DISKCACHE_KEY_BYTES]);

/* The identity of the code this library was built from, for keys: the
 * BLAKE2s of the GNU build-id of the ELF object holding this function (the
 * shared library, or the program it is linked into), else of that file's
 * path, size and modification time, else of the library version. A
 * rebuilt library does not read the entries of the one before. */
void mt_diskcache_self_id(uint8_t out[32]);

void mt_diskcache_get_counts(const mt_diskcache *dc, mt_diskcache_counts *out);
/* Counts an error the caller met using an entry (one that verified but
 * could not be used). */
void mt_diskcache_count_error(mt_diskcache *dc);

#endif
