/*
 * test_disk_cache.c -- the disk cache of compiled code (docs/api.md, "The
 * disk cache"; src/support/diskcache.c, src/codegen/compile.c).
 *
 * A compile in a fresh context over the same directory is a disk hit: LLVM
 * does not run, and the kernel computes the same results from the same
 * scheduled TIR, with the LLVM and assembly dumps still there. A different
 * source, option or target text misses. A damaged entry (truncated, a
 * flipped byte, another magic or format version, empty) is never loaded:
 * it is rebuilt. Writers in several contexts at once leave valid entries;
 * the directory stays under its bound; the cache turns off by option and by
 * environment variable; an unwritable directory only costs the write. The
 * cross-process hit is tests/cache.cmake's (mtc run twice). Every directory
 * is a fresh one under /tmp, removed at the end; the suite runs with
 * MINITRITON_CACHE_DIR=off, so a context without cache_dir has no disk
 * cache. Linked statically: it also checks BLAKE2s against RFC 7693.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/blake2s.h"
#include "codegen/nvrtc.h"
#include "support/diskcache.h"
#include "test_util.h"

static const char *ADD =
    "def add(a: Tensor((4,), \"float32\"), b: Tensor((4,), \"float32\")):\n"
    "    return a * b + a\n";

static const char *ADD2 =
    "def add(a: Tensor((4,), \"float32\"), b: Tensor((4,), \"float32\")):\n"
    "    return a * b - a\n";

static const char *MLP =
    "def mlp(x: Tensor((\"batch\", 784), \"float32\"), w0: Tensor((784, 128), \"float32\"),\n"
    "        b0: Tensor((128,), \"float32\"), w1: Tensor((128, 10), \"float32\"),\n"
    "        b1: Tensor((10,), \"float32\")):\n"
    "    h = relu(x @ w0 + b0)\n"
    "    return softmax(h @ w1 + b1, axis=-1)\n";

/* ---- helpers ------------------------------------------------------------------ */

static char *make_dir(void) {
    char *d = strdup("/tmp/mt-disk-cache-test-XXXXXX");
    assert_non_null(d);
    assert_non_null(mkdtemp(d));
    return d;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_dir(char *d) {
    nftw(d, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(d);
}

static mt_context *ctx_in(const char *dir, int threads, int64_t max_bytes) {
    mt_context_options co = {0};
    co.num_threads = threads;
    co.cache_dir = dir;
    co.cache_max_bytes = max_bytes;
    mt_context *ctx = mt_context_create(&co);
    assert_non_null(ctx);
    return ctx;
}

static mt_kernel *compile_in(mt_context *ctx, const char *src, const mt_compile_options *o) {
    mt_diag d;
    mt_kernel *k = mt_jit_compile(ctx, src, o, &d);
    if (!k) fail_msg("compile failed:\n%s", d.text);
    return k;
}

static mt_compile_times times_of(const mt_kernel *k) {
    mt_compile_times t;
    assert_int_equal(mt_kernel_compile_times(k, &t), MT_OK);
    return t;
}

static mt_disk_cache_stats dstats(mt_context *ctx) {
    mt_disk_cache_stats s;
    assert_int_equal(mt_context_disk_cache_stats(ctx, &s), MT_OK);
    return s;
}

/* One compile of src in a fresh context over dir: what the disk cache did. */
static int disk_outcome(const char *dir, const char *src, float *out3) {
    mt_context *ctx = ctx_in(dir, 0, 0);
    mt_kernel *k = compile_in(ctx, src, NULL);
    int d = times_of(k).disk;
    if (out3) {
        float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, out[4] = {0};
        int64_t shape[1] = {4};
        mt_tensor *args[2] = {mt_tensor_wrap(a, MT_FLOAT32, 1, shape, NULL),
                              mt_tensor_wrap(b, MT_FLOAT32, 1, shape, NULL)};
        mt_tensor *res = mt_tensor_wrap(out, MT_FLOAT32, 1, shape, NULL);
        mt_diag dg;
        if (mt_kernel_run(k, args, 2, &res, 1, &dg) != MT_OK) fail_msg("run failed: %s", dg.text);
        mt_tensor_release(res);
        mt_tensor_release(args[0]);
        mt_tensor_release(args[1]);
        *out3 = out[3];
    }
    mt_kernel_release(k);
    mt_context_destroy(ctx);
    return d;
}

/* The entry files (*.mtc) in dir: how many, their total size, and the path
 * of the last one found (malloc'ed, when `last`). Fails on a leftover
 * temporary file. */
static int entries(const char *dir, int64_t *bytes, char **last) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    if (bytes) *bytes = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!strncmp(e->d_name, ".tmp-", 5)) fail_msg("a temporary file is left: %s", e->d_name);
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 4, ".mtc")) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        if (bytes) *bytes += st.st_size;
        if (last) {
            free(*last);
            *last = strdup(path);
        }
        n++;
    }
    closedir(d);
    return n;
}

static int64_t file_size(const char *path) {
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

/* ---- BLAKE2s ---------------------------------------------------------------------- */

static void hexof(const uint8_t *d, char *out) {
    for (int i = 0; i < 32; i++) sprintf(out + 2 * i, "%02x", d[i]);
}

static void test_blake2s_vectors(void **s) {
    (void)s;
    uint8_t d[32];
    char h[65];
    mt_blake2s_hash("abc", 3, d); /* RFC 7693, appendix B */
    hexof(d, h);
    assert_string_equal(h, "508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982");
    mt_blake2s_hash("", 0, d);
    hexof(d, h);
    assert_string_equal(h, "69217a3079908094e11121d042354a7c1f55b6482ca1a51e1b250dfd1ed0eef9");
    /* 64 bytes exactly (one block, the final one), and streamed in pieces */
    uint8_t buf[200];
    for (int i = 0; i < 200; i++) buf[i] = (uint8_t)i;
    uint8_t whole[32], parts[32];
    for (size_t n = 63; n <= 200; n += 137 / 2) {
        mt_blake2s_hash(buf, n, whole);
        mt_blake2s st;
        mt_blake2s_init(&st);
        for (size_t i = 0; i < n; i += 7) mt_blake2s_update(&st, buf + i, n - i < 7 ? n - i : 7);
        mt_blake2s_final(&st, parts);
        assert_memory_equal(whole, parts, 32);
    }
    mt_blake2s_hash(buf, 64, d); /* hashlib.blake2s(bytes(range(64))) */
    hexof(d, h);
    assert_string_equal(h, "56f34e8b96557e90c1f24b52d0c89d51086acf1b00f634cf1dde9233b8eaaa3e");
}

/* ---- hits and misses --------------------------------------------------------------- */

static void mlp_args(mt_tensor **args, float *storage[5]) {
    static const int64_t shapes[5][2] = {{3, 784}, {784, 128}, {128, 0}, {128, 10}, {10, 0}};
    for (int i = 0; i < 5; i++) {
        int nd = shapes[i][1] ? 2 : 1;
        args[i] = mt_tensor_create(MT_FLOAT32, nd, shapes[i]);
        assert_non_null(args[i]);
        float *p = mt_tensor_data(args[i]);
        int64_t n = shapes[i][0] * (nd == 2 ? shapes[i][1] : 1);
        for (int64_t j = 0; j < n; j++) p[j] = (float)((j * 7 + i * 13) % 17 - 8) * 0.01f;
        storage[i] = p;
    }
}

static void run_mlp(mt_kernel *k, float out[30]) {
    mt_tensor *args[5];
    float *st[5];
    mlp_args(args, st);
    mt_tensor *res = NULL;
    mt_diag d;
    if (mt_kernel_run(k, args, 5, &res, 1, &d) != MT_OK) fail_msg("run failed: %s", d.text);
    memcpy(out, mt_tensor_data(res), 30 * sizeof(float));
    mt_tensor_release(res);
    for (int i = 0; i < 5; i++) mt_tensor_release(args[i]);
}

static void test_hit_in_fresh_context(void **s) {
    (void)s;
    char *dir = make_dir();
    mt_context *c1 = ctx_in(dir, 0, 0);
    mt_kernel *k1 = compile_in(c1, MLP, NULL);
    mt_compile_times t1 = times_of(k1);
    assert_int_equal(t1.disk, MT_DISK_MISS);
    assert_true(t1.opt_ms > 0);
    assert_int_equal(dstats(c1).writes, 1);
    assert_int_equal(dstats(c1).misses, 1);
    assert_string_equal(dstats(c1).dir, dir);
    assert_int_equal(entries(dir, NULL, NULL), 1);

    mt_context *c2 = ctx_in(dir, 0, 0);
    mt_kernel *k2 = compile_in(c2, MLP, NULL);
    mt_compile_times t2 = times_of(k2);
    assert_int_equal(t2.disk, MT_DISK_HIT);
    assert_true(t2.opt_ms == 0 && t2.irgen_ms == 0); /* LLVM did not run */
    assert_true(t2.disk_read_ms > 0);
    assert_int_equal(dstats(c2).hits, 1);
    assert_int_equal(dstats(c2).writes, 0);
    /* the same scheduled TIR, the same LLVM text (the names come from the
     * key), assembly, and results */
    assert_string_equal(mt_kernel_dump(k1, MT_STAGE_TIR_SCHED), mt_kernel_dump(k2, MT_STAGE_TIR_SCHED));
    const char *ir1 = mt_kernel_dump(k1, MT_STAGE_LLVM), *ir2 = mt_kernel_dump(k2, MT_STAGE_LLVM);
    assert_non_null(ir1);
    assert_non_null(ir2);
    assert_string_equal(ir1, ir2);
    const char *asm1 = mt_kernel_dump(k1, MT_STAGE_ASM), *asm2 = mt_kernel_dump(k2, MT_STAGE_ASM);
    assert_non_null(asm1);
    assert_non_null(asm2);
    assert_string_equal(asm1, asm2);
    float o1[30], o2[30];
    run_mlp(k1, o1);
    run_mlp(k2, o2);
    assert_memory_equal(o1, o2, sizeof o1);
    float rowsum = 0;
    for (int j = 0; j < 10; j++) rowsum += o2[j];
    assert_true(rowsum > 0.999f && rowsum < 1.001f); /* a softmax row */
    mt_kernel_release(k1);
    mt_kernel_release(k2);
    mt_context_destroy(c1);
    mt_context_destroy(c2);
    remove_dir(dir);
}

static void test_differences_miss(void **s) {
    (void)s;
    char *dir = make_dir();
    float r;
    assert_int_equal(disk_outcome(dir, ADD, &r), MT_DISK_MISS);
    assert_true(r == 4 * 40 + 4);
    assert_int_equal(disk_outcome(dir, ADD, &r), MT_DISK_HIT);
    assert_true(r == 4 * 40 + 4);
    /* another source */
    assert_int_equal(disk_outcome(dir, ADD2, &r), MT_DISK_MISS);
    assert_true(r == 4 * 40 - 4);
    assert_int_equal(disk_outcome(dir, ADD2, &r), MT_DISK_HIT);
    assert_true(r == 4 * 40 - 4);
    /* the filename and the pass dumps cannot change code: not in the key */
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.filename = "/elsewhere/add.py";
    o.dump_after = "simplify";
    mt_context *c0 = ctx_in(dir, 0, 0);
    mt_kernel *k0 = compile_in(c0, ADD, &o);
    assert_int_equal(times_of(k0).disk, MT_DISK_HIT);
    assert_non_null(mt_kernel_pass_dump(k0, "simplify"));
    mt_kernel_release(k0);
    mt_context_destroy(c0);
    /* another option */
    mt_compile_options_init(&o);
    o.opt_level = 1;
    mt_context *c = ctx_in(dir, 0, 0);
    mt_kernel *k = compile_in(c, ADD, &o);
    assert_int_equal(times_of(k).disk, MT_DISK_MISS);
    mt_kernel_release(k);
    mt_context_destroy(c);
    /* another target text: the number of cores is part of it (in a
     * directory of its own, which no default context has written to) */
    char *dir2 = make_dir();
    mt_context *c1 = ctx_in(dir2, 1, 0), *c3 = ctx_in(dir2, 3, 0);
    k = compile_in(c1, ADD, NULL);
    assert_int_equal(times_of(k).disk, MT_DISK_MISS);
    mt_kernel_release(k);
    k = compile_in(c3, ADD, NULL);
    assert_int_equal(times_of(k).disk, MT_DISK_MISS);
    mt_kernel_release(k);
    mt_context_destroy(c1);
    mt_context_destroy(c3);
    assert_int_equal(entries(dir2, NULL, NULL), 2);
    remove_dir(dir2);
    remove_dir(dir);
}

/* The same code compiled twice in one context while the first kernel
 * lives (the in-memory cache off): the second cannot take the key's names,
 * and compiles without the disk cache; once the first is gone, it hits. */
static void test_same_context_twice(void **s) {
    (void)s;
    char *dir = make_dir();
    mt_context_options co = {0};
    co.cache_entries = -1;
    co.cache_dir = dir;
    mt_context *ctx = mt_context_create(&co);
    assert_non_null(ctx);
    mt_kernel *k1 = compile_in(ctx, ADD, NULL);
    assert_int_equal(times_of(k1).disk, MT_DISK_MISS);
    mt_kernel *k2 = compile_in(ctx, ADD, NULL);
    assert_ptr_not_equal(k1, k2);
    assert_int_equal(times_of(k2).disk, MT_DISK_OFF);
    mt_kernel_release(k1);
    mt_kernel *k3 = compile_in(ctx, ADD, NULL);
    assert_int_equal(times_of(k3).disk, MT_DISK_HIT);
    assert_string_equal(mt_kernel_dump(k2, MT_STAGE_TIR_SCHED), mt_kernel_dump(k3, MT_STAGE_TIR_SCHED));
    mt_kernel_release(k2);
    mt_kernel_release(k3);
    mt_context_destroy(ctx);
    remove_dir(dir);
}

/* ---- damaged entries ---------------------------------------------------------------- */

typedef enum { TRUNCATE, FLIP_MIDDLE, FLIP_LAST, MAGIC, VERSION, EMPTY, GARBAGE } damage;

static void spoil(const char *path, damage how) {
    int64_t size = file_size(path);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char byte;
    off_t at = how == FLIP_MIDDLE ? size / 2 : how == FLIP_LAST ? size - 1 : how == MAGIC ? 0 : 8;
    switch (how) {
    case TRUNCATE: assert_int_equal(ftruncate(fd, size - size / 3), 0); break;
    case EMPTY: assert_int_equal(ftruncate(fd, 0), 0); break;
    case GARBAGE:
        assert_int_equal(ftruncate(fd, 0), 0);
        assert_int_equal(write(fd, "not an entry at all", 19), 19);
        break;
    default:
        assert_int_equal(pread(fd, &byte, 1, at), 1);
        byte ^= how == VERSION ? 0x02 : 0x40;
        assert_int_equal(pwrite(fd, &byte, 1, at), 1);
    }
    close(fd);
}

static void test_damaged_entries_rebuilt(void **s) {
    (void)s;
    static const damage hows[] = {TRUNCATE, FLIP_MIDDLE, FLIP_LAST, MAGIC, VERSION, EMPTY, GARBAGE};
    char *dir = make_dir();
    float r;
    assert_int_equal(disk_outcome(dir, ADD, &r), MT_DISK_MISS);
    char *path = NULL;
    assert_int_equal(entries(dir, NULL, &path), 1);
    int64_t good = file_size(path);
    for (size_t i = 0; i < sizeof hows / sizeof hows[0]; i++) {
        spoil(path, hows[i]);
        mt_context *ctx = ctx_in(dir, 0, 0);
        mt_kernel *k = compile_in(ctx, ADD, NULL);
        if (times_of(k).disk != MT_DISK_MISS) fail_msg("damage %d was loaded", (int)hows[i]);
        mt_disk_cache_stats st = dstats(ctx);
        assert_int_equal(st.corrupt, 1);
        assert_int_equal(st.hits, 0);
        assert_int_equal(st.writes, 1); /* rebuilt */
        mt_kernel_release(k);
        mt_context_destroy(ctx);
        assert_int_equal(file_size(path), good);
        assert_int_equal(disk_outcome(dir, ADD, &r), MT_DISK_HIT);
        assert_true(r == 4 * 40 + 4);
    }
    free(path);
    remove_dir(dir);
}

/* An entry that verifies but cannot be used (what only a writer with a bug
 * could make): its first blob says another layout, or its object files are
 * not object files. The compile goes on without it, counts an error, and
 * the entry is replaced (first case) or deleted (second: the JIT refused it,
 * and this compile made its code under other names). */
static void key_of(const char *path, uint8_t key[32]) {
    const char *name = strrchr(path, '/') + 1;
    for (int i = 0; i < 32; i++) {
        unsigned v;
        assert_int_equal(sscanf(name + 2 * i, "%2x", &v), 1);
        key[i] = (uint8_t)v;
    }
}

static void test_verified_but_unusable(void **s) {
    (void)s;
    char *dir = make_dir();
    float r;
    assert_int_equal(disk_outcome(dir, ADD, &r), MT_DISK_MISS);
    char *path = NULL;
    assert_int_equal(entries(dir, NULL, &path), 1);
    uint8_t key[32];
    key_of(path, key);
    mt_diskcache *dc = mt_diskcache_open(dir, 0);
    assert_non_null(dc);
    mt_diskcache_entry good;
    assert_int_equal(mt_diskcache_get(dc, key, &good), 1);
    assert_true(good.nblobs >= 3 && good.nblobs % 2 == 1);

    /* another layout in the first blob */
    uint8_t meta[16];
    memcpy(meta, good.blobs[0].data, 16);
    meta[0] ^= 1;
    mt_diskcache_blob bad[64];
    assert_true(good.nblobs <= 64);
    for (int i = 0; i < good.nblobs; i++) bad[i] = good.blobs[i];
    bad[0] = (mt_diskcache_blob){meta, 16};
    assert_int_equal(mt_diskcache_put(dc, key, bad, good.nblobs), 0);
    mt_context *ctx = ctx_in(dir, 0, 0);
    mt_kernel *k = compile_in(ctx, ADD, NULL);
    assert_int_equal(times_of(k).disk, MT_DISK_MISS); /* rebuilt */
    assert_int_equal(dstats(ctx).errors, 1);
    mt_kernel_release(k);
    mt_context_destroy(ctx);
    assert_int_equal(disk_outcome(dir, ADD, &r), MT_DISK_HIT);
    assert_true(r == 4 * 40 + 4);

    /* object files that are not: the JIT refuses them */
    static const char junk[] = "this is not an ELF object file, whatever the checksum says";
    for (int i = 0; i < good.nblobs; i++) bad[i] = good.blobs[i];
    int nu = (good.nblobs - 1) / 2;
    for (int i = 1; i <= nu; i++) bad[i] = (mt_diskcache_blob){junk, sizeof junk};
    assert_int_equal(mt_diskcache_put(dc, key, bad, good.nblobs), 0);
    ctx = ctx_in(dir, 0, 0);
    k = compile_in(ctx, ADD, NULL);
    assert_int_equal(times_of(k).disk, MT_DISK_OFF); /* compiled without it */
    assert_int_equal(dstats(ctx).errors, 1);
    assert_non_null(mt_kernel_dump(k, MT_STAGE_ASM));
    mt_kernel_release(k);
    mt_context_destroy(ctx);
    assert_int_equal(entries(dir, NULL, NULL), 0); /* deleted */
    assert_int_equal(disk_outcome(dir, ADD, &r), MT_DISK_MISS);
    assert_true(r == 4 * 40 + 4);
    assert_int_equal(disk_outcome(dir, ADD, &r), MT_DISK_HIT);
    assert_true(r == 4 * 40 + 4);

    mt_diskcache_entry_free(&good);
    mt_diskcache_close(dc);
    free(path);
    remove_dir(dir);
}

/* ---- writers at once ------------------------------------------------------------------- */

typedef struct writer_arg {
    const char *dir;
    int id;
    int ok;
} writer_arg;

static const char *SOURCES[3];

static void *writer(void *p) {
    writer_arg *w = p;
    mt_context_options co = {0};
    co.num_threads = 2;
    co.cache_dir = w->dir;
    mt_context *ctx = mt_context_create(&co);
    w->ok = ctx != NULL;
    for (int i = 0; ctx && i < 3; i++) {
        mt_kernel *k = mt_jit_compile(ctx, SOURCES[(i + w->id) % 3], NULL, NULL);
        w->ok &= k != NULL;
        mt_kernel_release(k);
    }
    mt_context_destroy(ctx);
    return NULL;
}

static void test_concurrent_writers(void **s) {
    (void)s;
    SOURCES[0] = ADD, SOURCES[1] = ADD2, SOURCES[2] = MLP;
    char *dir = make_dir();
    enum { N = 4 };
    pthread_t t[N];
    writer_arg w[N];
    for (int i = 0; i < N; i++) {
        w[i] = (writer_arg){dir, i, 0};
        assert_int_equal(pthread_create(&t[i], NULL, writer, &w[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        assert_true(w[i].ok);
    }
    assert_int_equal(entries(dir, NULL, NULL), 3); /* and no temporary file left */
    for (int i = 0; i < 3; i++) {
        mt_context *ctx = ctx_in(dir, 2, 0);
        mt_kernel *k = compile_in(ctx, SOURCES[i], NULL);
        assert_int_equal(times_of(k).disk, MT_DISK_HIT);
        assert_int_equal(dstats(ctx).corrupt, 0);
        mt_kernel_release(k);
        mt_context_destroy(ctx);
    }
    remove_dir(dir);
}

/* ---- the bound -------------------------------------------------------------------------- */

static void test_eviction_keeps_bound(void **s) {
    (void)s;
    char *dir = make_dir();
    assert_int_equal(disk_outcome(dir, ADD, NULL), MT_DISK_MISS);
    int64_t one;
    assert_int_equal(entries(dir, &one, NULL), 1);
    int64_t bound = one * 5 / 2; /* room for two entries of that size */
    int64_t evicted = 0;
    char src[256];
    for (int i = 0; i < 6; i++) {
        snprintf(src, sizeof src,
                 "def add(a: Tensor((4,), \"float32\"), b: Tensor((4,), \"float32\")):\n"
                 "    return a * b + %d.0\n", i);
        mt_context *ctx = ctx_in(dir, 0, bound);
        mt_kernel *k = compile_in(ctx, src, NULL);
        assert_int_equal(times_of(k).disk, MT_DISK_MISS);
        evicted += dstats(ctx).evictions;
        assert_int_equal(dstats(ctx).max_bytes, bound);
        mt_kernel_release(k);
        mt_context_destroy(ctx);
        int64_t total;
        entries(dir, &total, NULL);
        if (total > bound) fail_msg("%lld bytes in the cache, bound %lld", (long long)total, (long long)bound);
    }
    assert_true(evicted >= 4);
    /* the newest stays: it hits */
    mt_context *ctx = ctx_in(dir, 0, bound);
    mt_kernel *k = compile_in(ctx, src, NULL);
    assert_int_equal(times_of(k).disk, MT_DISK_HIT);
    mt_kernel_release(k);
    mt_context_destroy(ctx);
    remove_dir(dir);
}

/* ---- off, and failures ------------------------------------------------------------------- */

static void test_disabled(void **s) {
    (void)s;
    char *dir = make_dir();
    /* the option "" */
    mt_context *ctx = ctx_in("", 0, 0);
    assert_null(dstats(ctx).dir);
    mt_kernel *k = compile_in(ctx, ADD, NULL);
    assert_int_equal(times_of(k).disk, MT_DISK_OFF);
    mt_kernel_release(k);
    mt_context_destroy(ctx);
    /* a negative bound */
    ctx = ctx_in(dir, 0, -1);
    assert_null(dstats(ctx).dir);
    mt_context_destroy(ctx);
    /* the environment: off (as this suite runs), a directory, XDG, HOME */
    const char *env = getenv("MINITRITON_CACHE_DIR");
    char *saved = env ? strdup(env) : NULL;
    static const char *const offs[] = {"off", "0", ""};
    for (int i = 0; i < 3; i++) {
        setenv("MINITRITON_CACHE_DIR", offs[i], 1);
        ctx = mt_context_create(NULL);
        assert_null(dstats(ctx).dir);
        k = compile_in(ctx, ADD, NULL);
        assert_int_equal(times_of(k).disk, MT_DISK_OFF);
        mt_kernel_release(k);
        mt_context_destroy(ctx);
    }
    assert_int_equal(entries(dir, NULL, NULL), 0);
    setenv("MINITRITON_CACHE_DIR", dir, 1);
    ctx = mt_context_create(NULL);
    assert_string_equal(dstats(ctx).dir, dir);
    assert_int_equal(dstats(ctx).max_bytes, (int64_t)256 << 20);
    mt_context_destroy(ctx);
    /* an explicit cache_dir wins over the environment */
    ctx = ctx_in("", 0, 0);
    assert_null(dstats(ctx).dir);
    mt_context_destroy(ctx);
    unsetenv("MINITRITON_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char *sx = xdg ? strdup(xdg) : NULL, *sh = home ? strdup(home) : NULL;
    setenv("XDG_CACHE_HOME", "/nonexistent/xdg", 1);
    ctx = mt_context_create(NULL); /* nothing is made before a write */
    assert_string_equal(dstats(ctx).dir, "/nonexistent/xdg/minitriton");
    mt_context_destroy(ctx);
    setenv("XDG_CACHE_HOME", "relative", 1); /* not absolute: ignored */
    setenv("HOME", "/nonexistent/home", 1);
    ctx = mt_context_create(NULL);
    assert_string_equal(dstats(ctx).dir, "/nonexistent/home/.cache/minitriton");
    mt_context_destroy(ctx);
    if (sx) setenv("XDG_CACHE_HOME", sx, 1);
    else unsetenv("XDG_CACHE_HOME");
    if (sh) setenv("HOME", sh, 1);
    else unsetenv("HOME");
    if (saved) setenv("MINITRITON_CACHE_DIR", saved, 1);
    else setenv("MINITRITON_CACHE_DIR", "off", 1);
    free(sx);
    free(sh);
    free(saved);
    remove_dir(dir);
}

static void test_unwritable_dir(void **s) {
    (void)s;
    char *dir = make_dir();
    /* a directory under a regular file cannot be made, even by root */
    char file[512], bad[600];
    snprintf(file, sizeof file, "%s/file", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(bad, sizeof bad, "%s/sub/cache", file);
    float r;
    for (int i = 0; i < 2; i++) {
        mt_context *ctx = ctx_in(bad, 0, 0);
        mt_kernel *k = compile_in(ctx, ADD, NULL);
        assert_int_equal(times_of(k).disk, MT_DISK_UNSAVED);
        mt_disk_cache_stats st = dstats(ctx);
        assert_int_equal(st.errors, 1);
        assert_int_equal(st.writes, 0);
        mt_kernel_release(k);
        mt_context_destroy(ctx);
    }
    assert_int_equal(disk_outcome(bad, ADD, &r), MT_DISK_UNSAVED);
    assert_true(r == 4 * 40 + 4);
    /* the cache directory is a file */
    assert_int_equal(disk_outcome(file, ADD, &r), MT_DISK_UNSAVED);
    assert_true(r == 4 * 40 + 4);
    remove_dir(dir);
}


/* Target cuda (not emulated): the program's cubin is kept too, so a second
 * compile in a fresh context runs neither LLVM nor NVRTC and gives the same
 * CUDA dump (with ptxas's report). Needs NVRTC (the CUDA toolkit), not a
 * GPU; without NVRTC it says so and is skipped. */
static void test_cubin_cached(void **s) {
    char why[256];
    if (!mt_nvrtc_available(why, sizeof why)) {
        print_message("skipped: no NVRTC here (%s)\n", why);
        skip();
    }
    char *dir = make_dir();
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    o.arch = "sm_90";
    const char *src = "def f(x: Tensor((\"n\",), \"float32\")):\n    return softmax(exp(x) * 2.0, axis=-1)\n";
    mt_context *a = ctx_in(dir, 0, 0), *b = ctx_in(dir, 0, 0);
    mt_kernel *ka = compile_in(a, src, &o), *kb = compile_in(b, src, &o);
    assert_true(times_of(ka).nvrtc_ms > 0);
    assert_true(times_of(kb).nvrtc_ms == 0);             /* NVRTC did not run */
    assert_int_equal(times_of(kb).disk, MT_DISK_HIT);
    assert_string_equal(mt_kernel_dump(ka, MT_STAGE_CUDA), mt_kernel_dump(kb, MT_STAGE_CUDA));
    assert_non_null(strstr(mt_kernel_dump(kb, MT_STAGE_CUDA), "// ptxas ("));
    mt_kernel_release(ka);
    mt_kernel_release(kb);
    mt_context_destroy(a);
    mt_context_destroy(b);
    remove_dir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blake2s_vectors),
        cmocka_unit_test(test_hit_in_fresh_context),
        cmocka_unit_test(test_differences_miss),
        cmocka_unit_test(test_same_context_twice),
        cmocka_unit_test(test_damaged_entries_rebuilt),
        cmocka_unit_test(test_verified_but_unusable),
        cmocka_unit_test(test_concurrent_writers),
        cmocka_unit_test(test_eviction_keeps_bound),
        cmocka_unit_test(test_disabled),
        cmocka_unit_test(test_unwritable_dir),
        cmocka_unit_test(test_cubin_cached),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
