/*
 * npy.c -- NumPy .npy reader and writer (see npy.h).
 *
 * The format (numpy/lib/format.py, "NEP 1"):
 *
 *     "\x93NUMPY"  major  minor  HEADER_LEN  HEADER  DATA
 *
 * HEADER_LEN is a little-endian uint16 in version 1.0 and a uint32 in 2.0 and
 * 3.0 (3.0 only allows UTF-8 in the header; nothing we accept differs). HEADER
 * is the repr of a Python dict with exactly three keys, padded with spaces and
 * ended by '\n':
 *
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 *
 * The reader is written to be fed arbitrary bytes (a fuzzer runs on
 * mt_npy_parse): every read is bounds-checked against the buffer, the dict is
 * parsed by a small hand-written scanner over [p, end) with no recursion and
 * no allocation, integers are accumulated with overflow checks, and the data
 * size is computed with checked multiplication before anything is allocated.
 * A header is accepted when numpy.load would accept it, with two deliberate
 * narrowings: keys and values must be the literal forms numpy writes
 * (strings without escapes, True/False, a tuple of non-negative ints with an
 * optional Python 2 'L' suffix), and bytes after the data are an error rather
 * than ignored (a mismatch in size almost always means a wrong file).
 *
 * The file reader reads the fixed prefix, then exactly the header, then,
 * after comparing the file size (when it is a regular file) with what the
 * header announces, the data straight into the new tensor: a lying header
 * cannot make it allocate more than the file holds.
 *
 * The writer always emits version 1.0 (a header of at most a few hundred
 * bytes for rank <= 8) padded so that the data starts at a multiple of 64.
 *
 * bfloat16. NumPy has no bfloat16; ml_dtypes adds one, and np.save writes
 * an array of it with the descr '<V2' (its dtype.str: a legacy user dtype
 * is saved as raw 2-byte records), which np.load reads back as void.
 * That is our convention: '<V2' (and '|V2', numpy's own spelling of a
 * 2-byte void) is read as bfloat16 and bfloat16 is written as '<V2', so
 * a file round-trips through mtc and through NumPy alike; the descr
 * 'bfloat16' (what writing str(a.dtype) gives) is read too. A NumPy user
 * reads one with np.load(f).view(ml_dtypes.bfloat16), or without
 * ml_dtypes as float32: (np.load(f).view('<u2').astype('<u4') << 16).view('<f4'),
 * and writes one with np.save(f, a.astype(ml_dtypes.bfloat16)).
 */
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char MAGIC[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* The descr numpy writes for each dtype, and the element sizes (local, so
 * that this file needs nothing from the library but the tensor functions). */
static const char *const DESCR[] = {
    [MT_BOOL] = "|b1",  [MT_INT8] = "|i1",    [MT_UINT8] = "|u1",
    [MT_INT32] = "<i4", [MT_INT64] = "<i8",   [MT_FLOAT16] = "<f2",
    [MT_FLOAT32] = "<f4", [MT_FLOAT64] = "<f8",   [MT_BFLOAT16] = "<V2",
};
static const char *const DTNAME[] = {
#define MT_X_(name, text, size) [name] = text,
    MT_DTYPE_LIST(MT_X_)
#undef MT_X_
};
static const size_t DTSIZE[] = {
#define MT_X_(name, text, size) [name] = size,
    MT_DTYPE_LIST(MT_X_)
#undef MT_X_
};

const char *mt_npy_descr(mt_dtype dt) {
    return (unsigned)dt < (unsigned)MT_DTYPE_COUNT_ ? DESCR[dt] : NULL;
}

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Prefixes an existing message with "path: ". */
static void prefix_err(char *err, size_t errlen, const char *path) {
    if (!err || errlen == 0) return;
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", err);
    snprintf(err, errlen, "%s: %s", path, tmp);
}

/* "(2, 3)", "(3,)", "()" into buf. */
static void shape_str(char *buf, size_t cap, int ndim, const int64_t *shape) {
    size_t n = 0;
    n += (size_t)snprintf(buf + n, cap - n, "(");
    for (int i = 0; i < ndim && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (n < cap) n += (size_t)snprintf(buf + n, cap - n, ndim == 1 ? ",)" : ")");
}

/* ---- the header dict scanner ------------------------------------------ */

typedef struct scan {
    const char *p;   /* next byte */
    const char *end; /* one past the header */
    char *err;       /* message buffer (may be NULL) */
    size_t errlen;   /* its size */
} scan;

static void skip_ws(scan *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

/* Printable description of the byte at p, for "found ..." in messages. */
static const char *found(const scan *s, char *buf, size_t cap) {
    if (s->p >= s->end) return "end of header";
    unsigned char c = (unsigned char)*s->p;
    if (c >= 0x20 && c < 0x7f) snprintf(buf, cap, "'%c'", c);
    else snprintf(buf, cap, "byte 0x%02x", c);
    return buf;
}

static int expect_char(scan *s, char c, const char *what) {
    skip_ws(s);
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return 0;
    }
    char b[16];
    seterr(s->err, s->errlen, "malformed header: expected '%c' %s, found %s", c, what,
           found(s, b, sizeof b));
    return -1;
}

/* string := '...' | "..." without escapes; copied into out (cap bytes). */
static int scan_string(scan *s, char *out, size_t cap, const char *what) {
    skip_ws(s);
    char b[16];
    if (s->p >= s->end || (*s->p != '\'' && *s->p != '"')) {
        seterr(s->err, s->errlen, "malformed header: expected a string %s, found %s", what,
               found(s, b, sizeof b));
        return -1;
    }
    char q = *s->p++;
    size_t n = 0;
    while (s->p < s->end && *s->p != q) {
        unsigned char c = (unsigned char)*s->p;
        if (c == '\\' || c == '\n' || c < 0x20) {
            seterr(s->err, s->errlen, "malformed header: unsupported character in a string %s",
                   what);
            return -1;
        }
        if (n + 1 >= cap) {
            seterr(s->err, s->errlen, "malformed header: string %s is too long", what);
            return -1;
        }
        out[n++] = (char)c;
        s->p++;
    }
    if (s->p >= s->end) {
        seterr(s->err, s->errlen, "malformed header: unterminated string %s", what);
        return -1;
    }
    s->p++;
    out[n] = 0;
    return 0;
}

/* A bare word (True, False, ...) into out. */
static void scan_word(scan *s, char *out, size_t cap) {
    size_t n = 0;
    while (s->p < s->end && ((*s->p >= 'A' && *s->p <= 'Z') || (*s->p >= 'a' && *s->p <= 'z') ||
                             (*s->p >= '0' && *s->p <= '9') || *s->p == '_')) {
        if (n + 1 < cap) out[n++] = *s->p;
        s->p++;
    }
    out[n] = 0;
}

/* shape := '(' [ int (',' int)* [','] ] ')', a 1-tuple needing its comma. */
static int scan_shape(scan *s, int *ndim, int64_t *shape) {
    char b[16];
    if (expect_char(s, '(', "to open the shape tuple") < 0) return -1;
    int n = 0;
    bool comma = false; /* a comma followed the last int */
    for (;;) {
        skip_ws(s);
        if (s->p < s->end && *s->p == ')') {
            s->p++;
            break;
        }
        if (n > 0 && !comma) {
            seterr(s->err, s->errlen, "malformed header: expected ',' or ')' in shape, found %s",
                   found(s, b, sizeof b));
            return -1;
        }
        if (s->p < s->end && *s->p == '-') {
            seterr(s->err, s->errlen, "negative dimension in shape");
            return -1;
        }
        if (s->p >= s->end || *s->p < '0' || *s->p > '9') {
            seterr(s->err, s->errlen, "malformed header: expected a dimension in shape, found %s",
                   found(s, b, sizeof b));
            return -1;
        }
        int64_t v = 0;
        while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
            if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *s->p - '0', &v)) {
                seterr(s->err, s->errlen, "dimension %d of shape is too large", n);
                return -1;
            }
            s->p++;
        }
        if (s->p < s->end && (*s->p == 'L' || *s->p == 'l')) s->p++; /* Python 2 long */
        if (n >= MT_MAX_RANK) {
            seterr(s->err, s->errlen, "rank above %d is not supported", MT_MAX_RANK);
            return -1;
        }
        shape[n++] = v;
        skip_ws(s);
        comma = s->p < s->end && *s->p == ',';
        if (comma) s->p++;
    }
    if (n == 1 && !comma) {
        seterr(s->err, s->errlen, "malformed header: shape is not a tuple (a 1-tuple is '(n,)')");
        return -1;
    }
    *ndim = n;
    return 0;
}

/* Maps a descr string to a dtype, or says why not. */
static int parse_descr(const char *d, mt_dtype *out, char *err, size_t errlen) {
    char order = '=';
    const char *t = d;
    if (*t == '<' || *t == '>' || *t == '|' || *t == '=') order = *t++;
    char kind = *t;
    size_t size = 0;
    const char *q = kind ? t + 1 : t;
    bool digits = *q != 0;
    for (; *q; q++) {
        if (*q < '0' || *q > '9' || size > 1000) {
            digits = false;
            break;
        }
        size = size * 10 + (size_t)(*q - '0');
    }
    if (kind == 'O') {
        seterr(err, errlen, "object arrays ('%s') are not supported", d);
        return -1;
    }
    int dt = -1;
    if (strcmp(d, "bfloat16") == 0) dt = MT_BFLOAT16;
    else if (digits && kind == 'V' && size == 2 && order != '>') dt = MT_BFLOAT16;
    else if (digits) {
        if (kind == 'f' && size == 2) dt = MT_FLOAT16;
        else if (kind == 'f' && size == 4) dt = MT_FLOAT32;
        else if (kind == 'f' && size == 8) dt = MT_FLOAT64;
        else if (kind == 'i' && size == 1) dt = MT_INT8;
        else if (kind == 'i' && size == 4) dt = MT_INT32;
        else if (kind == 'i' && size == 8) dt = MT_INT64;
        else if (kind == 'u' && size == 1) dt = MT_UINT8;
        else if (kind == 'b' && size == 1) dt = MT_BOOL;
    }
    if (dt < 0) {
        seterr(err, errlen,
               "unsupported dtype '%s' (supported: <f2 <f4 <f8 |i1 <i4 <i8 |u1 |b1, <V2 as bfloat16)", d);
        return -1;
    }
    if (order == '>' && size > 1) {
        seterr(err, errlen,
               "big-endian data ('%s') is not supported; convert with a.astype('<%c%zu')", d,
               kind, size);
        return -1;
    }
    *out = (mt_dtype)dt;
    return 0;
}

/* dict := '{' (key ':' value ',')* [key ':' value] '}' with keys descr,
 * fortran_order and shape, each exactly once. */
static int parse_dict(scan *s, mt_npy_header *hdr) {
    char b[16];
    bool have_descr = false, have_fortran = false, have_shape = false;
    char descr[40];
    char word[16];
    bool fortran = false;
    if (expect_char(s, '{', "at the start of the header dict") < 0) return -1;
    for (;;) {
        skip_ws(s);
        if (s->p < s->end && *s->p == '}') {
            s->p++;
            break;
        }
        char key[24];
        if (scan_string(s, key, sizeof key, "as a header key") < 0) return -1;
        if (expect_char(s, ':', "after a header key") < 0) return -1;
        skip_ws(s);
        bool *seen;
        if (!strcmp(key, "descr")) {
            seen = &have_descr;
            if (s->p < s->end && *s->p == '[') {
                seterr(s->err, s->errlen, "structured dtypes are not supported");
                return -1;
            }
            if (scan_string(s, descr, sizeof descr, "as descr") < 0) return -1;
        } else if (!strcmp(key, "fortran_order")) {
            seen = &have_fortran;
            scan_word(s, word, sizeof word);
            if (!strcmp(word, "True")) fortran = true;
            else if (!strcmp(word, "False")) fortran = false;
            else {
                seterr(s->err, s->errlen,
                       "malformed header: fortran_order must be True or False");
                return -1;
            }
        } else if (!strcmp(key, "shape")) {
            seen = &have_shape;
            if (scan_shape(s, &hdr->ndim, hdr->shape) < 0) return -1;
        } else {
            seterr(s->err, s->errlen, "malformed header: unexpected key '%s'", key);
            return -1;
        }
        if (*seen) {
            seterr(s->err, s->errlen, "malformed header: key '%s' appears twice", key);
            return -1;
        }
        *seen = true;
        skip_ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
        } else if (s->p >= s->end || *s->p != '}') {
            seterr(s->err, s->errlen, "malformed header: expected ',' or '}' in dict, found %s",
                   found(s, b, sizeof b));
            return -1;
        }
    }
    skip_ws(s);
    if (s->p != s->end) {
        seterr(s->err, s->errlen, "malformed header: %s after the dict", found(s, b, sizeof b));
        return -1;
    }
    if (!have_descr || !have_fortran || !have_shape) {
        seterr(s->err, s->errlen, "malformed header: missing key '%s'",
               !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");
        return -1;
    }
    if (parse_descr(descr, &hdr->dtype, s->err, s->errlen) < 0) return -1;
    if (fortran) {
        seterr(s->err, s->errlen,
               "fortran_order is True: Fortran-order arrays are not supported "
               "(save np.ascontiguousarray(a) instead)");
        return -1;
    }
    return 0;
}

/* magic, version, header length: the fixed prefix (10 bytes in 1.0, 12 after). */
static int parse_prefix(const unsigned char *b, size_t len, mt_npy_header *hdr, size_t *fixed,
                        size_t *hlen, char *err, size_t errlen) {
    size_t m = len < sizeof MAGIC ? len : sizeof MAGIC;
    if (len == 0 || memcmp(b, MAGIC, m) != 0) {
        seterr(err, errlen, "not a .npy file (no \\x93NUMPY magic)");
        return -1;
    }
    if (len < 8) {
        seterr(err, errlen, "truncated file: %zu bytes, not even the fixed .npy prefix", len);
        return -1;
    }
    hdr->major = b[6];
    hdr->minor = b[7];
    if (hdr->major < 1 || hdr->major > 3 || hdr->minor != 0) {
        seterr(err, errlen, "unsupported .npy format version %d.%d (1.0, 2.0, 3.0 are read)",
               hdr->major, hdr->minor);
        return -1;
    }
    *fixed = hdr->major == 1 ? 10 : 12;
    if (len < *fixed) {
        seterr(err, errlen, "truncated file: %zu bytes, not even the fixed .npy prefix", len);
        return -1;
    }
    *hlen = (size_t)b[8] | (size_t)b[9] << 8;
    if (hdr->major > 1) *hlen |= (size_t)b[10] << 16 | (size_t)b[11] << 24;
    return 0;
}

int mt_npy_parse_header(const void *bytes, size_t len, mt_npy_header *hdr, char *err,
                        size_t errlen) {
    const unsigned char *b = bytes;
    memset(hdr, 0, sizeof *hdr);
    if (!b) len = 0;
    size_t fixed, hlen;
    if (parse_prefix(b, len, hdr, &fixed, &hlen, err, errlen) < 0) return -1;
    if (hlen > len - fixed) {
        seterr(err, errlen, "truncated header: %zu bytes announced, %zu present", hlen,
               len - fixed);
        return -1;
    }
    scan s = {(const char *)b + fixed, (const char *)b + fixed + hlen, err, errlen};
    if (parse_dict(&s, hdr) < 0) return -1;
    size_t nbytes = DTSIZE[hdr->dtype];
    for (int i = 0; i < hdr->ndim; i++) {
        if (__builtin_mul_overflow(nbytes, (uint64_t)hdr->shape[i], &nbytes) ||
            nbytes > (size_t)INT64_MAX) {
            char sh[256];
            shape_str(sh, sizeof sh, hdr->ndim, hdr->shape);
            seterr(err, errlen, "shape %s is too large (its byte size overflows)", sh);
            return -1;
        }
    }
    hdr->data_offset = fixed + hlen;
    hdr->data_bytes = nbytes;
    return 0;
}

/* The data-size check shared by the memory and file readers. */
static int check_data_size(const mt_npy_header *hdr, size_t have, char *err, size_t errlen) {
    if (have == hdr->data_bytes) return 0;
    char sh[256];
    shape_str(sh, sizeof sh, hdr->ndim, hdr->shape);
    seterr(err, errlen, "data size mismatch: header says %s %s (%zu bytes), file has %zu %s",
           DTNAME[hdr->dtype], sh, hdr->data_bytes, have,
           have < hdr->data_bytes ? "(truncated)" : "(trailing bytes)");
    return -1;
}

int mt_npy_parse(const void *bytes, size_t len, mt_npy_header *hdr, char *err, size_t errlen) {
    if (mt_npy_parse_header(bytes, len, hdr, err, errlen) < 0) return -1;
    return check_data_size(hdr, len - hdr->data_offset, err, errlen);
}

static mt_tensor *new_tensor(const mt_npy_header *hdr, char *err, size_t errlen) {
    mt_tensor *t = mt_tensor_create(hdr->dtype, hdr->ndim, hdr->shape);
    if (!t) seterr(err, errlen, "out of memory for %zu bytes of data", hdr->data_bytes);
    return t;
}

static void normalize_bool(mt_tensor *t, size_t n) {
    unsigned char *d = mt_tensor_data(t);
    for (size_t i = 0; i < n; i++) d[i] = d[i] != 0;
}

mt_tensor *mt_npy_load_mem(const void *bytes, size_t len, char *err, size_t errlen) {
    mt_npy_header hdr;
    if (mt_npy_parse(bytes, len, &hdr, err, errlen) < 0) return NULL;
    mt_tensor *t = new_tensor(&hdr, err, errlen);
    if (!t) return NULL;
    if (hdr.data_bytes)
        memcpy(mt_tensor_data(t), (const char *)bytes + hdr.data_offset, hdr.data_bytes);
    if (hdr.dtype == MT_BOOL) normalize_bool(t, hdr.data_bytes);
    return t;
}

/* Reads up to n bytes; returns the count (short only at EOF or error). */
static size_t read_full(FILE *f, void *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        size_t r = fread((char *)buf + got, 1, n - got, f);
        if (r == 0) break;
        got += r;
    }
    return got;
}

mt_tensor *mt_npy_load(const char *path, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        seterr(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    mt_tensor *t = NULL;
    unsigned char *head = NULL;
    mt_npy_header hdr;
    memset(&hdr, 0, sizeof hdr);
    /* The fixed prefix gives the header length. A valid header is longer than
     * the two bytes by which a 1.0 prefix is shorter than 12, so pre never
     * holds data of a file that parses. */
    unsigned char pre[12];
    size_t npre = read_full(f, pre, sizeof pre), fixed, hlen;
    if (parse_prefix(pre, npre, &hdr, &fixed, &hlen, err, errlen) < 0) goto fail;
    if (hlen > (size_t)1 << 26) {
        seterr(err, errlen, "malformed header: header length %zu is implausibly large", hlen);
        goto fail;
    }
    head = malloc(fixed + hlen);
    if (!head) {
        seterr(err, errlen, "out of memory");
        goto fail;
    }
    size_t have = npre < fixed + hlen ? npre : fixed + hlen;
    memcpy(head, pre, have);
    have += read_full(f, head + have, fixed + hlen - have);
    if (mt_npy_parse_header(head, have, &hdr, err, errlen) < 0) goto fail;
    /* A regular file tells its size: check it before allocating. */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) {
        size_t fsize = (size_t)st.st_size;
        size_t rest = fsize >= hdr.data_offset ? fsize - hdr.data_offset : 0;
        if (check_data_size(&hdr, rest, err, errlen) < 0) goto fail;
    }
    t = new_tensor(&hdr, err, errlen);
    if (!t) goto fail;
    size_t got = read_full(f, mt_tensor_data(t), hdr.data_bytes);
    if (ferror(f)) {
        seterr(err, errlen, "read error: %s", strerror(errno));
        goto fail;
    }
    unsigned char probe;
    size_t more = read_full(f, &probe, 1);
    if (got < hdr.data_bytes || more) {
        check_data_size(&hdr, got + more, err, errlen);
        goto fail;
    }
    if (hdr.dtype == MT_BOOL) normalize_bool(t, hdr.data_bytes);
    free(head);
    fclose(f);
    return t;
fail:
    prefix_err(err, errlen, path);
    mt_tensor_release(t);
    free(head);
    fclose(f);
    return NULL;
}

/* ---- writer -------------------------------------------------------------- */

/* The version 1.0 prefix and header for t into buf (cap >= 512); its length. */
static size_t make_header(const mt_tensor *t, char *buf, size_t cap) {
    char sh[256];
    shape_str(sh, sizeof sh, mt_tensor_ndim(t), mt_tensor_shape(t));
    int n = snprintf(buf + 10, cap - 10, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     DESCR[mt_tensor_dtype(t)], sh);
    size_t total = 10 + (size_t)n + 1;         /* + '\n' */
    size_t padded = (total + 63) & ~(size_t)63;
    memset(buf + 10 + n, ' ', padded - total);
    buf[padded - 1] = '\n';
    size_t hlen = padded - 10;
    memcpy(buf, MAGIC, sizeof MAGIC);
    buf[6] = 1;
    buf[7] = 0;
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    return padded;
}

static int check_writable(const mt_tensor *t, char *err, size_t errlen) {
    if (!t || (unsigned)mt_tensor_dtype(t) >= (unsigned)MT_DTYPE_COUNT_) {
        seterr(err, errlen, "no tensor to write");
        return -1;
    }
    return 0;
}

/* Calls sink(ctx, bytes, n) with the elements of t in C order, in runs as long
 * as the layout allows (the whole buffer when contiguous). */
typedef int (*sink_fn)(void *ctx, const void *bytes, size_t n);

static int for_each_run(const mt_tensor *t, sink_fn sink, void *ctx) {
    int nd = mt_tensor_ndim(t);
    const int64_t *shape = mt_tensor_shape(t), *strides = mt_tensor_strides(t);
    size_t es = DTSIZE[mt_tensor_dtype(t)];
    int64_t numel = mt_tensor_numel(t);
    const char *data = mt_tensor_data(t);
    if (numel == 0) return 0;
    /* Contiguous in C order (length-1 axes ignored)? */
    bool contig = true;
    int64_t expect = 1;
    for (int i = nd - 1; i >= 0; i--) {
        if (shape[i] == 1) continue;
        if (strides[i] != expect) contig = false;
        expect *= shape[i];
    }
    if (contig) return sink(ctx, data, (size_t)numel * es);
    int64_t idx[MT_MAX_RANK] = {0};
    for (int64_t k = 0; k < numel; k++) {
        int64_t off = 0;
        for (int i = 0; i < nd; i++) off += idx[i] * strides[i];
        if (sink(ctx, data + off * (int64_t)es, es) < 0) return -1;
        for (int i = nd - 1; i >= 0; i--) {
            if (++idx[i] < shape[i]) break;
            idx[i] = 0;
        }
    }
    return 0;
}

typedef struct membuf {
    char *p;    /* destination */
    size_t len; /* bytes written */
} membuf;

static int mem_sink(void *ctx, const void *bytes, size_t n) {
    membuf *m = ctx;
    memcpy(m->p + m->len, bytes, n);
    m->len += n;
    return 0;
}

void *mt_npy_encode(const mt_tensor *t, size_t *len, char *err, size_t errlen) {
    if (check_writable(t, err, errlen) < 0) return NULL;
    char head[512];
    size_t hsize = make_header(t, head, sizeof head);
    size_t dbytes = (size_t)mt_tensor_numel(t) * DTSIZE[mt_tensor_dtype(t)];
    if (dbytes > SIZE_MAX - hsize) {
        seterr(err, errlen, "tensor too large to encode");
        return NULL;
    }
    char *buf = malloc(hsize + dbytes);
    if (!buf) {
        seterr(err, errlen, "out of memory for %zu bytes", hsize + dbytes);
        return NULL;
    }
    memcpy(buf, head, hsize);
    membuf m = {buf, hsize};
    for_each_run(t, mem_sink, &m);
    *len = m.len;
    return buf;
}

typedef struct filebuf {
    FILE *f;        /* destination */
    char buf[65536]; /* pending bytes of small runs */
    size_t len;     /* bytes pending */
} filebuf;

static int file_flush(filebuf *fb) {
    if (fb->len && fwrite(fb->buf, 1, fb->len, fb->f) != fb->len) return -1;
    fb->len = 0;
    return 0;
}

static int file_sink(void *ctx, const void *bytes, size_t n) {
    filebuf *fb = ctx;
    if (n > sizeof fb->buf - fb->len) {
        if (file_flush(fb) < 0) return -1;
        if (n > sizeof fb->buf) return fwrite(bytes, 1, n, fb->f) == n ? 0 : -1;
    }
    memcpy(fb->buf + fb->len, bytes, n);
    fb->len += n;
    return 0;
}

int mt_npy_save(const char *path, const mt_tensor *t, char *err, size_t errlen) {
    if (check_writable(t, err, errlen) < 0) {
        prefix_err(err, errlen, path);
        return -1;
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        seterr(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        return -1;
    }
    char head[512];
    size_t hsize = make_header(t, head, sizeof head);
    filebuf *fb = malloc(sizeof *fb);
    bool nomem = !fb;
    int rc = -1;
    if (fb) {
        fb->f = f;
        fb->len = 0;
        rc = fwrite(head, 1, hsize, f) == hsize && for_each_run(t, file_sink, fb) == 0 &&
                     file_flush(fb) == 0
                 ? 0
                 : -1;
        free(fb);
    }
    int saved = errno;
    if (fclose(f) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    if (rc < 0)
        seterr(err, errlen, "%s: write failed: %s", path, nomem ? "out of memory" : strerror(saved));
    return rc;
}
