/*
 * test_npy.c -- the .npy reader and writer (tools/npy.c).
 *
 * Round trips every dtype at ranks 0..3 through memory and through a file;
 * checks the exact header the writer emits (numpy's layout, padded to 64);
 * reads hand-written 2.0 and 3.0 headers and the spellings numpy may use;
 * checks every rejection with its message; and runs every truncation of a
 * valid file and a few thousand random mutations through the parser (under
 * ASan these are the fuzzer's smoke test). numpy is not needed: the expected
 * bytes are written out here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"
#include "runtime/tensor.h"

static const mt_dtype ALL[] = {MT_BOOL,    MT_INT8,    MT_UINT8,   MT_INT32,
                               MT_INT64,   MT_FLOAT16, MT_FLOAT32, MT_FLOAT64, MT_BFLOAT16};
static const size_t SIZE[] = {1, 1, 1, 4, 8, 2, 4, 8, 2};

/* A temporary file name, unlinked by the caller. */
static void tmpname(char *buf, size_t cap) {
    snprintf(buf, cap, "/tmp/test_npy_XXXXXX");
    int fd = mkstemp(buf);
    assert_true(fd >= 0);
    close(fd);
}

static void write_bytes(const char *path, const void *b, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

/* A file: magic, version, header text (when pad > 0, padded with spaces and
 * a final '\n' to a multiple of `pad` bytes with the prefix; else as is),
 * then data. malloc'd. */
static unsigned char *make_file(int major, const char *header, size_t pad, const void *data,
                                size_t ndata, size_t *len) {
    size_t fixed = major == 1 ? 10 : 12;
    size_t hlen = strlen(header);
    if (pad > 0) hlen = (fixed + hlen + 1 + pad - 1) / pad * pad - fixed;
    unsigned char *b = malloc(fixed + hlen + ndata + 1);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)major;
    b[7] = 0;
    b[8] = hlen & 0xff;
    b[9] = (hlen >> 8) & 0xff;
    if (major > 1) {
        b[10] = (hlen >> 16) & 0xff;
        b[11] = (hlen >> 24) & 0xff;
    }
    memset(b + fixed, ' ', hlen);
    memcpy(b + fixed, header, strlen(header));
    if (pad > 0) b[fixed + hlen - 1] = '\n';
    if (ndata) memcpy(b + fixed + hlen, data, ndata);
    *len = fixed + hlen + ndata;
    return b;
}

/* A pattern that differs per byte and stays a valid bool (0/1) for MT_BOOL. */
static void fill(mt_tensor *t) {
    unsigned char *p = mt_tensor_data(t);
    size_t n = t->nbytes;
    for (size_t i = 0; i < n; i++)
        p[i] = t->dtype == MT_BOOL ? (unsigned char)(i % 3 == 0) : (unsigned char)(i * 37 + 11);
}

static void assert_same(const mt_tensor *a, const mt_tensor *b) {
    assert_int_equal(mt_tensor_dtype(a), mt_tensor_dtype(b));
    assert_int_equal(mt_tensor_ndim(a), mt_tensor_ndim(b));
    for (int i = 0; i < mt_tensor_ndim(a); i++)
        assert_int_equal(mt_tensor_shape(a)[i], mt_tensor_shape(b)[i]);
    assert_int_equal(a->nbytes, b->nbytes);
    if (a->nbytes) assert_memory_equal(mt_tensor_data(a), mt_tensor_data(b), a->nbytes);
}

static void round_trip_every_dtype_and_rank(void **state) {
    const int64_t shape[3] = {2, 3, 5};
    char path[64];
    tmpname(path, sizeof path);
    for (size_t d = 0; d < sizeof ALL / sizeof ALL[0]; d++) {
        for (int nd = 0; nd <= 3; nd++) {
            mt_tensor *t = mt_tensor_create(ALL[d], nd, shape);
            fill(t);
            char err[256] = "";
            size_t len = 0;
            unsigned char *b = mt_npy_encode(t, &len, err, sizeof err);
            assert_non_null(b);
            mt_npy_header h;
            assert_int_equal(mt_npy_parse(b, len, &h, err, sizeof err), 0);
            assert_int_equal(h.major, 1);
            assert_int_equal(h.data_offset % 64, 0);
            assert_int_equal(h.data_bytes, t->nbytes);
            mt_tensor *u = mt_npy_load_mem(b, len, err, sizeof err);
            assert_non_null(u);
            assert_same(t, u);
            mt_tensor_release(u);

            assert_int_equal(mt_npy_save(path, t, err, sizeof err), 0);
            u = mt_npy_load(path, err, sizeof err);
            if (!u) fail_msg("%s", err);
            assert_same(t, u);
            /* The file is byte-identical to the encoding. */
            FILE *f = fopen(path, "rb");
            unsigned char *fb = malloc(len + 1);
            assert_int_equal(fread(fb, 1, len + 1, f), len);
            fclose(f);
            assert_memory_equal(fb, b, len);
            free(fb);
            mt_tensor_release(u);
            free(b);
            mt_tensor_release(t);
        }
    }
    unlink(path);
}

static void header_is_numpys(void **state) {
    struct {
        mt_dtype dt;
        int nd;
        int64_t shape[3];
        const char *text;
    } cases[] = {
        {MT_FLOAT32, 2, {2, 3}, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"},
        {MT_INT64, 1, {7}, "{'descr': '<i8', 'fortran_order': False, 'shape': (7,), }"},
        {MT_BOOL, 0, {0}, "{'descr': '|b1', 'fortran_order': False, 'shape': (), }"},
        {MT_INT8, 3, {1, 0, 2}, "{'descr': '|i1', 'fortran_order': False, 'shape': (1, 0, 2), }"},
        {MT_UINT8, 1, {1}, "{'descr': '|u1', 'fortran_order': False, 'shape': (1,), }"},
        {MT_FLOAT16, 1, {1}, "{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }"},
        {MT_FLOAT64, 1, {1}, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }"},
        {MT_INT32, 1, {1}, "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }"},
        /* what np.save writes for ml_dtypes' bfloat16: the convention both ways */
        {MT_BFLOAT16, 1, {2}, "{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mt_tensor *t = mt_tensor_create(cases[c].dt, cases[c].nd, cases[c].shape);
        size_t len;
        char err[128];
        unsigned char *b = mt_npy_encode(t, &len, err, sizeof err);
        assert_memory_equal(b, "\x93NUMPY\x01\x00", 8);
        size_t hlen = b[8] | (size_t)b[9] << 8;
        assert_int_equal((10 + hlen) % 64, 0);
        size_t tl = strlen(cases[c].text);
        assert_memory_equal(b + 10, cases[c].text, tl);
        for (size_t i = 10 + tl; i < 9 + hlen; i++) assert_int_equal(b[i], ' ');
        assert_int_equal(b[9 + hlen], '\n');
        assert_int_equal(len, 10 + hlen + t->nbytes);
        free(b);
        mt_tensor_release(t);
    }
}

static void writes_strided_in_c_order(void **state) {
    int32_t buf[6] = {0, 1, 2, 3, 4, 5}; /* 2x3, written as its 3x2 transpose */
    int64_t shape[2] = {3, 2}, str[2] = {1, 3};
    mt_tensor *t = mt_tensor_wrap(buf, MT_INT32, 2, shape, str);
    size_t len;
    char err[128];
    unsigned char *b = mt_npy_encode(t, &len, err, sizeof err);
    mt_tensor *u = mt_npy_load_mem(b, len, err, sizeof err);
    assert_non_null(u);
    const int32_t want[6] = {0, 3, 1, 4, 2, 5};
    assert_memory_equal(mt_tensor_data(u), want, sizeof want);
    char path[64];
    tmpname(path, sizeof path);
    assert_int_equal(mt_npy_save(path, t, err, sizeof err), 0);
    mt_tensor *v = mt_npy_load(path, err, sizeof err);
    assert_non_null(v);
    assert_memory_equal(mt_tensor_data(v), want, sizeof want);
    unlink(path);
    mt_tensor_release(v);
    mt_tensor_release(u);
    mt_tensor_release(t);
    free(b);
}

static void reads_version_2_and_3(void **state) {
    const int64_t data[2] = {-5, 1234567890123};
    for (int major = 2; major <= 3; major++) {
        size_t len;
        /* Keys out of order, double quotes, no trailing comma, no padding. */
        unsigned char *b = make_file(
            major, "{\"shape\": (2,), 'fortran_order': False, 'descr': '<i8'}\n", 0, data,
            sizeof data, &len);
        char err[256] = "";
        mt_tensor *t = mt_npy_load_mem(b, len, err, sizeof err);
        if (!t) fail_msg("%s", err);
        assert_int_equal(mt_tensor_dtype(t), MT_INT64);
        assert_int_equal(mt_tensor_ndim(t), 1);
        assert_int_equal(mt_tensor_shape(t)[0], 2);
        assert_memory_equal(mt_tensor_data(t), data, sizeof data);
        mt_tensor_release(t);
        free(b);
    }
}

static void reads_other_spellings(void **state) {
    struct {
        const char *descr;
        mt_dtype dt;
    } cases[] = {
        {"<i1", MT_INT8}, {"i1", MT_INT8},     {"|i1", MT_INT8},  {">i1", MT_INT8},
        {"<u1", MT_UINT8}, {"<b1", MT_BOOL},   {"=f4", MT_FLOAT32}, {"|f8", MT_FLOAT64},
        {"<f2", MT_FLOAT16}, {"=i4", MT_INT32},
        {"<V2", MT_BFLOAT16}, {"|V2", MT_BFLOAT16}, {"bfloat16", MT_BFLOAT16},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char h[128];
        snprintf(h, sizeof h, "{'descr':'%s','fortran_order':False,'shape':(1L, 2L)}",
                 cases[c].descr);
        unsigned char data[16] = {1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0};
        size_t len;
        unsigned char *b = make_file(1, h, 64, data, 2 * SIZE[cases[c].dt], &len);
        char err[256] = "";
        mt_tensor *t = mt_npy_load_mem(b, len, err, sizeof err);
        if (!t) fail_msg("%s: %s", cases[c].descr, err);
        assert_int_equal(mt_tensor_dtype(t), cases[c].dt);
        mt_tensor_release(t);
        free(b);
    }
}

static void normalizes_bools(void **state) {
    unsigned char data[3] = {0, 2, 255};
    size_t len;
    unsigned char *b =
        make_file(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", 64, data, 3,
                  &len);
    char err[128];
    mt_tensor *t = mt_npy_load_mem(b, len, err, sizeof err);
    assert_non_null(t);
    const unsigned char want[3] = {0, 1, 1};
    assert_memory_equal(mt_tensor_data(t), want, 3);
    mt_tensor_release(t);
    free(b);
}

/* Each case: a header, the data size to append, the message expected. */
static void rejects_with_message(void **state) {
    struct {
        const char *header;
        size_t ndata;
        const char *msg;
    } cases[] = {
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, "big-endian"},
        {"{'descr': '>i8', 'fortran_order': False, 'shape': (), }", 8, "big-endian"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16, "fortran_order"},
        {"{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", 8, "object arrays"},
        {"{'descr': '<i2', 'fortran_order': False, 'shape': (1,), }", 2, "unsupported dtype '<i2'"},
        {"{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }", 4, "unsupported dtype '<u4'"},
        {"{'descr': '|V4', 'fortran_order': False, 'shape': (1,), }", 4, "unsupported dtype '|V4'"},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 8, "unsupported dtype"},
        {"{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", 12, "unsupported dtype"},
        {"{'descr': '<f', 'fortran_order': False, 'shape': (1,), }", 4, "unsupported dtype"},
        {"{'descr': '', 'fortran_order': False, 'shape': (1,), }", 4, "unsupported dtype"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 4, "structured"},
        {"{'descr': '<f4', 'fortran_order': False}", 4, "missing key 'shape'"},
        {"{'fortran_order': False, 'shape': ()}", 4, "missing key 'descr'"},
        {"{'descr': '<f4', 'shape': ()}", 4, "missing key 'fortran_order'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}", 4, "twice"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", 4, "unexpected key 'x'"},
        {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': ()}", 4, "True or False"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3)}", 12, "not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [3]}", 12, "expected '('"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-3,)}", 0, "negative dimension"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3 4)}", 0, "expected ',' or ')'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (,)}", 0, "expected a dimension"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 0,
         "too large"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", 0,
         "overflows"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}", 4,
         "rank above 8"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': ()} x", 4, "after the dict"},
        {"{'descr': '<f4' 'fortran_order': False, 'shape': ()}", 4, "expected ',' or '}'"},
        {"{'descr' '<f4', 'fortran_order': False, 'shape': ()}", 4, "expected ':'"},
        {"{'descr': '<f4, 'fortran_order': False, 'shape': ()}", 4, "malformed header"},
        {"{descr: '<f4', 'fortran_order': False, 'shape': ()}", 4, "expected a string"},
        {"{'descr': '<\\x66\\x34', 'fortran_order': False, 'shape': ()}", 4, "unsupported char"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (), ", 4, "malformed header"},
        {"['descr', '<f4']", 4, "expected '{'"},
        {"", 4, "expected '{'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20,
         "data size mismatch: header says float32 (2, 3) (24 bytes), file has 20 (truncated)"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 28,
         "data size mismatch: header says float32 (2, 3) (24 bytes), file has 28 (trailing"},
        {"{'descr': '|b1', 'fortran_order': False, 'shape': (), }", 0, "data size mismatch"},
    };
    unsigned char zeros[64] = {0};
    char path[64];
    tmpname(path, sizeof path);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t len;
        unsigned char *b = make_file(1, cases[c].header, 128, zeros, cases[c].ndata, &len);
        char err[256] = "";
        mt_npy_header h;
        assert_int_equal(mt_npy_parse(b, len, &h, err, sizeof err), -1);
        if (!strstr(err, cases[c].msg))
            fail_msg("case %zu: got \"%s\", want \"%s\"", c, err, cases[c].msg);
        assert_null(mt_npy_load_mem(b, len, err, sizeof err));
        /* The file reader says the same, after the path. */
        write_bytes(path, b, len);
        err[0] = 0;
        assert_null(mt_npy_load(path, err, sizeof err));
        if (strncmp(err, path, strlen(path)) != 0 || !strstr(err, cases[c].msg))
            fail_msg("file case %zu: got \"%s\"", c, err);
        free(b);
    }
    unlink(path);
}

static void rejects_bad_prefix(void **state) {
    char err[256];
    mt_npy_header h;
    assert_int_equal(mt_npy_parse("PK\x03\x04", 4, &h, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a .npy file"));
    assert_int_equal(mt_npy_parse("", 0, &h, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a .npy file"));
    assert_int_equal(mt_npy_parse(NULL, 0, &h, err, sizeof err), -1);
    assert_int_equal(mt_npy_parse("\x93NUM", 4, &h, err, sizeof err), -1);
    assert_non_null(strstr(err, "truncated file"));
    assert_int_equal(mt_npy_parse("\x93NUMPY\x04\x00\x10\x00", 10, &h, err, sizeof err), -1);
    assert_non_null(strstr(err, "version 4.0"));
    assert_int_equal(mt_npy_parse("\x93NUMPY\x01\x01\x10\x00", 10, &h, err, sizeof err), -1);
    assert_non_null(strstr(err, "version 1.1"));
    assert_int_equal(mt_npy_parse("\x93NUMPY\x01\x00\x10\x00{", 11, &h, err, sizeof err), -1);
    assert_non_null(strstr(err, "truncated header: 16 bytes announced, 1 present"));
    assert_int_equal(mt_npy_parse("\x93NUMPY\x02\x00\x10\x00", 10, &h, err, sizeof err), -1);
    assert_non_null(strstr(err, "truncated file"));
    assert_int_equal(mt_npy_parse("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14, &h, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "truncated header"));
    /* err may be NULL. */
    assert_int_equal(mt_npy_parse("x", 1, &h, NULL, 0), -1);
    /* A missing file. */
    assert_null(mt_npy_load("/nonexistent/dir/x.npy", err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/dir/x.npy: cannot open"));
}

/* Every proper prefix of a valid file is rejected, from memory and from a file. */
static void rejects_every_truncation(void **state) {
    int64_t shape[2] = {3, 4};
    mt_tensor *t = mt_tensor_create(MT_FLOAT64, 2, shape);
    fill(t);
    size_t len;
    char err[256];
    unsigned char *b = mt_npy_encode(t, &len, err, sizeof err);
    char path[64];
    tmpname(path, sizeof path);
    for (size_t n = 0; n < len; n++) {
        /* A copy of exactly n bytes so that ASan sees reads past them. */
        unsigned char *p = malloc(n ? n : 1);
        memcpy(p, b, n);
        err[0] = 0;
        assert_null(mt_npy_load_mem(p, n, err, sizeof err));
        assert_true(err[0] != 0);
        if (n >= 128) assert_non_null(strstr(err, "(truncated)"));
        else if (n >= 10) assert_non_null(strstr(err, "truncated header"));
        if (n % 7 == 0 || n < 140) {
            write_bytes(path, p, n);
            assert_null(mt_npy_load(path, err, sizeof err));
            assert_true(err[0] != 0);
        }
        free(p);
    }
    unlink(path);
    free(b);
    mt_tensor_release(t);
}

/* Random mutations of valid files never crash and either load a tensor that
 * matches the header or fail with a message. */
static void survives_mutations(void **state) {
    uint64_t x = 0x9e3779b97f4a7c15ull;
    int64_t shape[2] = {2, 3};
    for (int iter = 0; iter < 20000; iter++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        mt_tensor *t = mt_tensor_create(ALL[x % 8], (int)((x >> 8) % 3), shape);
        size_t len;
        char err[256];
        unsigned char *b = mt_npy_encode(t, &len, err, sizeof err);
        int nmut = 1 + (int)((x >> 16) % 4);
        for (int m = 0; m < nmut; m++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t at = (x >> 3) % len;
            unsigned char v = (unsigned char)(x >> 40);
            /* Bias towards bytes that matter: header punctuation and digits. */
            static const char interesting[] = "{}():,'\"0123456789<>|=TFLfiub \n\x93";
            if (x & 1) v = (unsigned char)interesting[(x >> 48) % (sizeof interesting - 1)];
            b[at] = v;
        }
        size_t cut = (x >> 20) % 8 == 0 ? (x >> 24) % (len + 1) : len;
        unsigned char *p = malloc(cut ? cut : 1);
        memcpy(p, b, cut);
        err[0] = 0;
        mt_tensor *u = mt_npy_load_mem(p, cut, err, sizeof err);
        if (u) {
            mt_npy_header h;
            assert_int_equal(mt_npy_parse(p, cut, &h, err, sizeof err), 0);
            assert_int_equal(u->nbytes, h.data_bytes);
            mt_tensor_release(u);
        } else {
            assert_true(err[0] != 0);
        }
        free(p);
        free(b);
        mt_tensor_release(t);
    }
}

static void save_errors(void **state) {
    int64_t shape[1] = {2};
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, 1, shape);
    char err[256];
    assert_int_equal(mt_npy_save("/nonexistent/dir/x.npy", t, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot create"));
    assert_int_equal(mt_npy_save("/tmp/never.npy", NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "no tensor"));
    size_t len;
    assert_null(mt_npy_encode(NULL, &len, err, sizeof err));
    mt_tensor_release(t);
    assert_string_equal(mt_npy_descr(MT_FLOAT16), "<f2");
    assert_null(mt_npy_descr(MT_DTYPE_COUNT_));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_every_dtype_and_rank),
        cmocka_unit_test(header_is_numpys),
        cmocka_unit_test(writes_strided_in_c_order),
        cmocka_unit_test(reads_version_2_and_3),
        cmocka_unit_test(reads_other_spellings),
        cmocka_unit_test(normalizes_bools),
        cmocka_unit_test(rejects_with_message),
        cmocka_unit_test(rejects_bad_prefix),
        cmocka_unit_test(rejects_every_truncation),
        cmocka_unit_test(survives_mutations),
        cmocka_unit_test(save_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
