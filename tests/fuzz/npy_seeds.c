/*
 * npy_seeds.c -- writes the seed corpus of fuzz_npy into a directory.
 *
 *     npy_seeds DIR
 *
 * The seeds are what numpy.save writes (mt_npy_encode produces the same
 * bytes): every dtype at ranks 0 to 3 with a few elements, an empty array,
 * a rank-8 array; then the same header in format versions 2.0 and 3.0 (a
 * 4-byte header length), and the spellings numpy also accepts for a header
 * ('<i1', '=f4', a Python 2 'L' suffix on a dim). Mutating valid files
 * reaches the parser's deep paths far sooner than random bytes do.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

static const char *dir;
static int count;

static void put(const char *name, const void *bytes, size_t len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "npy_seeds: cannot write %s\n", path);
        exit(1);
    }
    count++;
}

/* A format 1.0 file with the given header dict and data. */
static void put_raw(const char *name, int major, const char *dict, const void *data, size_t n) {
    unsigned char buf[1024];
    size_t hl = strlen(dict), fixed = major == 1 ? 10 : 12, pos = 0;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    if (major == 1) {
        buf[8] = (unsigned char)(hl & 0xff);
        buf[9] = (unsigned char)(hl >> 8);
    } else {
        for (int i = 0; i < 4; i++) buf[8 + i] = (unsigned char)(hl >> (8 * i));
    }
    pos = fixed;
    memcpy(buf + pos, dict, hl);
    pos += hl;
    memcpy(buf + pos, data, n);
    put(name, buf, pos + n);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: npy_seeds DIR\n");
        return 2;
    }
    dir = argv[1];
    static const int64_t shapes[4][3] = {{0}, {3}, {2, 3}, {2, 1, 2}};
    unsigned char payload[64];
    for (int i = 0; i < 64; i++) payload[i] = (unsigned char)(i * 37 + 1);
    for (int dt = 0; dt < MT_DTYPE_COUNT_; dt++) {
        for (int rank = 0; rank <= 3; rank++) {
            mt_tensor *t = mt_tensor_create((mt_dtype)dt, rank, shapes[rank]);
            if (!t) return 1;
            size_t nbytes = (size_t)mt_tensor_numel(t) * mt_dtype_size((mt_dtype)dt);
            memcpy(mt_tensor_data(t), payload, nbytes);
            size_t len;
            char err[256];
            void *b = mt_npy_encode(t, &len, err, sizeof err);
            if (!b) {
                fprintf(stderr, "npy_seeds: %s\n", err);
                return 1;
            }
            char name[64];
            snprintf(name, sizeof name, "%s_rank%d", mt_dtype_str((mt_dtype)dt), rank);
            put(name, b, len);
            free(b);
            mt_tensor_release(t);
        }
    }
    int64_t empty[2] = {0, 5}, r8[8] = {1, 2, 1, 1, 2, 1, 1, 1};
    mt_tensor *ts[2] = {mt_tensor_create(MT_FLOAT32, 2, empty), mt_tensor_create(MT_INT8, 8, r8)};
    const char *names[2] = {"empty", "rank8"};
    for (int i = 0; i < 2; i++) {
        size_t len;
        void *b = mt_npy_encode(ts[i], &len, NULL, 0);
        if (!b) return 1;
        put(names[i], b, len);
        free(b);
        mt_tensor_release(ts[i]);
    }
    put_raw("v2", 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", payload, 8);
    put_raw("v3", 3, "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 1), }\n", payload, 8);
    put_raw("i1", 1, "{'descr': '<i1', 'fortran_order': False, 'shape': (3,), }\n", payload, 3);
    put_raw("eq_f4", 1, "{'descr': '=f4', 'shape': (2, 2), 'fortran_order': False}\n", payload, 16);
    put_raw("long_dim", 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (4L,), }\n", payload, 4);
    put_raw("fortran", 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (1,), }\n", payload, 8);
    put_raw("big_endian", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }\n", payload, 4);
    printf("npy_seeds: %d files in %s\n", count, dir);
    return 0;
}
