/*
 * diskcache.c -- the on-disk store of cache entries (diskcache.h).
 *
 * Layout. One file per key, <dir>/<64 hex digits of the key>.mtc, so a
 * lookup is one open() and never a directory scan. A file is
 *
 *     offset  size  field
 *     0       8     magic "MTCACHE\0"
 *     8       4     format version (MT_DISKCACHE_FORMAT), little-endian
 *     12      4     number of blobs n
 *     16      8     payload bytes: everything after the header
 *     24      32    the key
 *     56      32    checksum: BLAKE2s-256 of the whole file with this field zeroed
 *     88      8n    the blobs' lengths
 *     88+8n   ...   the blobs, one after another
 *
 * all integers little-endian. A reader takes the whole file into memory and
 * believes nothing before it has checked the magic, the version, the key,
 * that the header's sizes add up to the file's size exactly, and the
 * checksum: a truncated file, a flipped byte, an entry of another format or
 * another key is a miss (counted as corrupt) and is rebuilt by the caller,
 * whose write replaces it. A corrupt file is not deleted: by the time we
 * unlinked its path another process might have renamed a good entry there.
 * (An entry that verifies but that the caller cannot use, which only a
 * writer with a bug could make, is deleted with mt_diskcache_remove: losing
 * a good entry to that race costs one compile.)
 *
 * Writing. The entry is written to a temporary file in the same directory
 * (".tmp-<key prefix>-<pid>-<n>", O_EXCL, mode 0644 under the umask), and
 * then renamed to its name: rename within a directory is atomic, so another
 * process sees the old entry, the new one or none, never a partial one. Two
 * processes writing the same key both rename; the last wins, and both wrote
 * the same bytes anyway (the key says what they are). Any failure (no such
 * directory and none can be made, no space, a short write) unlinks the
 * temporary file and counts an error; the caller goes on without the cache.
 * No fsync: after a power cut an entry may be empty or partial, which the
 * checksum turns into a miss.
 *
 * Bound and eviction. After each write the directory is scanned: entries
 * (*.mtc) are summed, and while the sum exceeds the bound the least recently
 * used go, oldest modification time first (a hit sets an entry's time to
 * now: the time is the recency, whatever the file system does with atimes).
 * Temporary files more than an hour old (a writer that died) go too. Races
 * with other processes are harmless: an unlink that finds nothing was done
 * by someone else, and an entry evicted while another process reads it is
 * still read whole (the open file outlives the name). The scan costs a
 * stat per entry, paid only on a write, which follows a compile that took
 * LLVM far longer.
 */
#define _GNU_SOURCE
#include "support/diskcache.h"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "support/blake2s.h"

#define MT_DISKCACHE_FORMAT 1u
#define HEADER_BYTES 88
#define MAX_BLOBS 4096
#define MAX_ENTRY_BYTES ((uint64_t)1 << 30) /* a file larger than this is not one of ours */
#define STALE_TMP_SECONDS 3600

static const char magic[8] = {'M', 'T', 'C', 'A', 'C', 'H', 'E', 0};

struct mt_diskcache {
    char *dir;
    int64_t max_bytes;
    atomic_int_least64_t hits, misses, writes, errors, corrupt, evictions;
    atomic_uint tmp_seq; /* makes this process's temporary names unique */
};

/* ---- the directory ----------------------------------------------------------- */

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static char *join(const char *a, const char *b) {
    size_t n = strlen(a) + strlen(b) + 2;
    char *d = malloc(n);
    if (d) snprintf(d, n, "%s/%s", a, b);
    return d;
}

char *mt_diskcache_resolve_dir(const char *option) {
    if (option) return option[0] ? dup_str(option) : NULL;
    const char *env = getenv("MINITRITON_CACHE_DIR");
    if (env) {
        if (!env[0] || !strcmp(env, "off") || !strcmp(env, "0")) return NULL;
        return dup_str(env);
    }
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/') return join(xdg, "minitriton");
    const char *home = getenv("HOME");
    if (home && home[0]) return join(home, ".cache/minitriton");
    return NULL;
}

mt_diskcache *mt_diskcache_open(const char *dir, int64_t max_bytes) {
    if (!dir || !dir[0] || max_bytes < 0) return NULL;
    mt_diskcache *dc = calloc(1, sizeof *dc);
    if (!dc) return NULL;
    dc->dir = dup_str(dir);
    if (!dc->dir) {
        free(dc);
        return NULL;
    }
    /* a trailing slash would double in the paths */
    for (size_t n = strlen(dc->dir); n > 1 && dc->dir[n - 1] == '/'; n--) dc->dir[n - 1] = 0;
    dc->max_bytes = max_bytes ? max_bytes : MT_DISKCACHE_DEFAULT_MAX_BYTES;
    return dc;
}

void mt_diskcache_close(mt_diskcache *dc) {
    if (!dc) return;
    free(dc->dir);
    free(dc);
}

const char *mt_diskcache_dir(const mt_diskcache *dc) { return dc ? dc->dir : NULL; }
int64_t mt_diskcache_max_bytes(const mt_diskcache *dc) { return dc ? dc->max_bytes : 0; }

void mt_diskcache_get_counts(const mt_diskcache *dc, mt_diskcache_counts *out) {
    memset(out, 0, sizeof *out);
    if (!dc) return;
    out->hits = atomic_load(&dc->hits);
    out->misses = atomic_load(&dc->misses);
    out->writes = atomic_load(&dc->writes);
    out->errors = atomic_load(&dc->errors);
    out->corrupt = atomic_load(&dc->corrupt);
    out->evictions = atomic_load(&dc->evictions);
}

void mt_diskcache_count_error(mt_diskcache *dc) {
    if (dc) atomic_fetch_add(&dc->errors, 1);
}

static void hex(char *out, const uint8_t *p, size_t n) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = 0;
}

char *mt_diskcache_entry_path(const mt_diskcache *dc, const uint8_t key[MT_DISKCACHE_KEY_BYTES]) {
    if (!dc) return NULL;
    char name[2 * MT_DISKCACHE_KEY_BYTES + 8];
    hex(name, key, MT_DISKCACHE_KEY_BYTES);
    strcat(name, ".mtc");
    return join(dc->dir, name);
}

/* mkdir -p path (0700 for the directories it makes). 0 when it exists. */
static int make_dirs(const char *path) {
    struct stat st;
    if (stat(path, &st) == 0) return S_ISDIR(st.st_mode) ? 0 : -1;
    char *p = dup_str(path);
    if (!p) return -1;
    int rc = 0;
    for (char *s = p + 1; rc == 0; s++) {
        if (*s != '/' && *s != 0) continue;
        char c = *s;
        *s = 0;
        if (mkdir(p, 0700) != 0 && errno != EEXIST) rc = -1;
        *s = c;
        if (!c) break;
    }
    free(p);
    return rc == 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

/* ---- little-endian fields -------------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static uint64_t get64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* The checksum of a whole file image (its checksum field read as zeros). */
static void checksum(const uint8_t *file, size_t len, uint8_t out[32]) {
    static const uint8_t zeros[32];
    mt_blake2s s;
    mt_blake2s_init(&s);
    mt_blake2s_update(&s, file, 56);
    mt_blake2s_update(&s, zeros, 32);
    mt_blake2s_update(&s, file + HEADER_BYTES, len - HEADER_BYTES);
    mt_blake2s_final(&s, out);
}

/* ---- the library's identity ---------------------------------------------------------- */

typedef struct id_search {
    uintptr_t addr;    /* an address in this library's code */
    mt_blake2s *hash;
    bool found;
} id_search;

/* dl_iterate_phdr's callback: the build-id note of the object holding addr. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    id_search *q = data;
    bool mine = false;
    for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        mine = ph->p_type == PT_LOAD && q->addr >= lo && q->addr < lo + ph->p_memsz;
    }
    if (!mine) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while (p + 12 <= end) {
            uint32_t namesz, descsz, type;
            memcpy(&namesz, p, 4);
            memcpy(&descsz, p + 4, 4);
            memcpy(&type, p + 8, 4);
            size_t name_pad = (namesz + 3u) & ~3u, desc_pad = (descsz + 3u) & ~3u;
            if ((size_t)(end - p) < 12 + name_pad + desc_pad) break;
            if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 && !memcmp(p + 12, "GNU", 4)) {
                mt_blake2s_update(q->hash, p + 12 + name_pad, descsz);
                q->found = true;
                return 1;
            }
            p += 12 + name_pad + desc_pad;
        }
    }
    return 1; /* our object, without a build-id */
}

static uint8_t self_id[32];
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

static void compute_self_id(void) {
    mt_blake2s s;
    mt_blake2s_init(&s);
    id_search q = {(uintptr_t)(void *)&mt_diskcache_self_id, &s, false};
    dl_iterate_phdr(find_build_id, &q);
    Dl_info info;
    struct stat st;
    if (!q.found && dladdr((void *)&mt_diskcache_self_id, &info) && info.dli_fname &&
        stat(info.dli_fname, &st) == 0) {
        mt_blake2s_update(&s, info.dli_fname, strlen(info.dli_fname));
        int64_t facts[3] = {(int64_t)st.st_size, (int64_t)st.st_mtim.tv_sec, (int64_t)st.st_mtim.tv_nsec};
        mt_blake2s_update(&s, facts, sizeof facts);
    }
    mt_blake2s_final(&s, self_id);
}

void mt_diskcache_self_id(uint8_t out[32]) {
    pthread_once(&self_once, compute_self_id);
    memcpy(out, self_id, 32);
}

/* ---- reading ------------------------------------------------------------------------ */

/* Reads all of fd (size bytes) into a new buffer; NULL on any failure. */
static uint8_t *read_all(int fd, size_t size) {
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) return NULL;
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            free(buf);
            return NULL;
        }
        got += (size_t)r;
    }
    return buf;
}

/* Checks the image of a file and points the entry's blobs into it; false
 * when anything is wrong. */
static bool parse(uint8_t *file, size_t len, const uint8_t key[32], mt_diskcache_entry *out) {
    if (len < HEADER_BYTES || memcmp(file, magic, 8) != 0) return false;
    if (get32(file + 8) != MT_DISKCACHE_FORMAT) return false;
    uint32_t n = get32(file + 12);
    uint64_t payload = get64(file + 16);
    if (n > MAX_BLOBS || payload != len - HEADER_BYTES || payload < (uint64_t)8 * n) return false;
    if (memcmp(file + 24, key, 32) != 0) return false;
    uint8_t sum[32];
    checksum(file, len, sum);
    if (memcmp(file + 56, sum, 32) != 0) return false;
    const uint8_t *table = file + HEADER_BYTES;
    uint64_t at = HEADER_BYTES + (uint64_t)8 * n, total = at;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t l = get64(table + 8 * i);
        if (l > len - total) return false;
        total += l;
    }
    if (total != len) return false;
    mt_diskcache_blob *blobs = malloc(sizeof *blobs * (n ? n : 1));
    if (!blobs) return false;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t l = get64(table + 8 * i);
        blobs[i].data = file + at;
        blobs[i].len = (size_t)l;
        at += l;
    }
    out->mem = file;
    out->blobs = blobs;
    out->nblobs = (int)n;
    return true;
}

int mt_diskcache_get(mt_diskcache *dc, const uint8_t key[MT_DISKCACHE_KEY_BYTES],
                     mt_diskcache_entry *out) {
    memset(out, 0, sizeof *out);
    if (!dc) return 0;
    char *path = mt_diskcache_entry_path(dc, key);
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0) {
        if (path && errno != ENOENT && errno != ENOTDIR) atomic_fetch_add(&dc->errors, 1);
        atomic_fetch_add(&dc->misses, 1);
        free(path);
        return 0;
    }
    struct stat st;
    uint8_t *file = NULL;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
              (uint64_t)st.st_size <= MAX_ENTRY_BYTES &&
              (file = read_all(fd, (size_t)st.st_size)) != NULL &&
              parse(file, (size_t)st.st_size, key, out);
    if (ok) {
        futimens(fd, NULL); /* recency for eviction; a read-only cache simply keeps its times */
        atomic_fetch_add(&dc->hits, 1);
    } else {
        free(file);
        atomic_fetch_add(&dc->corrupt, 1);
        atomic_fetch_add(&dc->misses, 1);
    }
    close(fd);
    free(path);
    return ok;
}

void mt_diskcache_remove(mt_diskcache *dc, const uint8_t key[MT_DISKCACHE_KEY_BYTES]) {
    char *path = mt_diskcache_entry_path(dc, key);
    if (path) unlink(path);
    free(path);
}

void mt_diskcache_entry_free(mt_diskcache_entry *e) {
    if (!e) return;
    free(e->mem);
    free(e->blobs);
    memset(e, 0, sizeof *e);
}

/* ---- writing --------------------------------------------------------------------------- */

static int write_all(int fd, const uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

typedef struct file_info {
    char *name;
    struct timespec mtime;
    int64_t size;
} file_info;

static int older_first(const void *a, const void *b) {
    const file_info *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec) return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

static bool ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && memcmp(s + n - t, tail, t) == 0;
}

/* Deletes the least recently used entries while the directory holds more
 * than the bound, and stale temporary files. */
static void evict(mt_diskcache *dc) {
    DIR *d = opendir(dc->dir);
    if (!d) return;
    int dfd = dirfd(d);
    file_info *files = NULL;
    size_t n = 0, cap = 0;
    int64_t total = 0;
    time_t now = time(NULL);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        bool entry = ends_with(e->d_name, ".mtc"), tmp = !strncmp(e->d_name, ".tmp-", 5);
        if (!entry && !tmp) continue;
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
        if (tmp) {
            if (now - st.st_mtime > STALE_TMP_SECONDS) unlinkat(dfd, e->d_name, 0);
            continue;
        }
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 64;
            file_info *nf = realloc(files, nc * sizeof *nf);
            if (!nf) break;
            files = nf;
            cap = nc;
        }
        files[n].name = dup_str(e->d_name);
        if (!files[n].name) break;
        files[n].mtime = st.st_mtim;
        files[n].size = (int64_t)st.st_size;
        total += files[n].size;
        n++;
    }
    if (total > dc->max_bytes && n > 0) {
        qsort(files, n, sizeof *files, older_first);
        for (size_t i = 0; i < n && total > dc->max_bytes; i++) {
            if (unlinkat(dfd, files[i].name, 0) == 0) atomic_fetch_add(&dc->evictions, 1);
            total -= files[i].size; /* gone, by us or by another process */
        }
    }
    for (size_t i = 0; i < n; i++) free(files[i].name);
    free(files);
    closedir(d);
}

int mt_diskcache_put(mt_diskcache *dc, const uint8_t key[MT_DISKCACHE_KEY_BYTES],
                     const mt_diskcache_blob *blobs, int nblobs) {
    if (!dc) return -1;
    if (nblobs < 0 || nblobs > MAX_BLOBS) {
        atomic_fetch_add(&dc->errors, 1);
        return -1;
    }
    uint64_t len = HEADER_BYTES + (uint64_t)8 * (uint64_t)nblobs;
    for (int i = 0; i < nblobs; i++) len += blobs[i].len;
    uint8_t *file = len <= MAX_ENTRY_BYTES ? malloc((size_t)len) : NULL;
    char *path = mt_diskcache_entry_path(dc, key);
    char *tmp = NULL;
    int fd = -1, rc = -1;
    if (!file || !path) goto done;
    memcpy(file, magic, 8);
    put32(file + 8, MT_DISKCACHE_FORMAT);
    put32(file + 12, (uint32_t)nblobs);
    put64(file + 16, len - HEADER_BYTES);
    memcpy(file + 24, key, 32);
    size_t at = HEADER_BYTES + (size_t)8 * (size_t)nblobs;
    for (int i = 0; i < nblobs; i++) {
        put64(file + HEADER_BYTES + 8 * (size_t)i, blobs[i].len);
        if (blobs[i].len) memcpy(file + at, blobs[i].data, blobs[i].len);
        at += blobs[i].len;
    }
    checksum(file, (size_t)len, file + 56);
    if (make_dirs(dc->dir) != 0) goto done;
    char name[64], keyhex[17];
    hex(keyhex, key, 8);
    snprintf(name, sizeof name, ".tmp-%s-%ld-%u", keyhex, (long)getpid(),
             atomic_fetch_add(&dc->tmp_seq, 1));
    tmp = join(dc->dir, name);
    if (!tmp) goto done;
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) goto done;
    if (write_all(fd, file, (size_t)len) != 0) goto done;
    int cr = close(fd);
    fd = -1;
    if (cr != 0 || rename(tmp, path) != 0) goto done;
    rc = 0;
done:
    if (fd >= 0) close(fd);
    if (rc != 0 && tmp) unlink(tmp);
    if (rc == 0) {
        atomic_fetch_add(&dc->writes, 1);
        evict(dc);
    } else {
        atomic_fetch_add(&dc->errors, 1);
    }
    free(tmp);
    free(path);
    free(file);
    return rc;
}
