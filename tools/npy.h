/*
 * npy.h -- NumPy .npy files to and from mt_tensor (for mtc and the tests; not
 * part of the library).
 *
 * Reading accepts format versions 1.0, 2.0 and 3.0, little-endian (or
 * byte-order-free) data in C order, with the dtypes minitriton has:
 *
 *     <f2 <f4 <f8  |i1 <i4 <i8  |u1  |b1      (also '<i1', '=f4', ...)
 *     <V2 (and |V2, 'bfloat16') as bfloat16, which is written as <V2: what
 *     np.save writes for ml_dtypes' bfloat16 (npy.c says more)
 *
 * and rejects, with a message saying why, everything else: big-endian data,
 * fortran_order True, object/structured/other dtypes, a malformed or truncated
 * header, a rank above MT_MAX_RANK, a shape whose byte size overflows, and a
 * data section whose size is not exactly what the header says.
 *
 * Writing produces format 1.0 with the header padded to a multiple of 64
 * bytes (as numpy.save does); a non-contiguous tensor is written in C order.
 *
 * Every function that can fail takes `err`/`errlen` (either may be NULL/0)
 * and fills it with a one-line message without a trailing newline; the file
 * functions prefix it with the path ("x.npy: unsupported dtype '<i2' ...").
 */
#ifndef MT_TOOLS_NPY_H
#define MT_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "minitriton.h"

/* What a .npy header says. */
typedef struct mt_npy_header {
    int major;                     /* format version: 1, 2 or 3 */
    int minor;                     /* always 0 */
    mt_dtype dtype;                /* element type */
    int ndim;                      /* 0..MT_MAX_RANK */
    int64_t shape[MT_MAX_RANK];    /* dims, each >= 0 */
    size_t data_offset;            /* bytes before the data (magic + header) */
    size_t data_bytes;             /* numel * element size */
} mt_npy_header;

/* Parses magic, version and header dict from the first `len` bytes of a file
 * (a prefix is enough: the data is not looked at). 0 on success, -1 on error.
 * Safe on arbitrary bytes. */
int mt_npy_parse_header(const void *bytes, size_t len, mt_npy_header *hdr, char *err,
                        size_t errlen);

/* Parses a whole file held in memory: the header, and the data size against
 * len (neither short nor trailing bytes allowed). 0 on success, -1 on error.
 * Safe on arbitrary bytes. */
int mt_npy_parse(const void *bytes, size_t len, mt_npy_header *hdr, char *err, size_t errlen);

/* A new tensor (refcount 1, owned, contiguous) from a whole file in memory,
 * or NULL with err. Bool bytes are normalized to 0/1. */
mt_tensor *mt_npy_load_mem(const void *bytes, size_t len, char *err, size_t errlen);

/* The same from a file (or a pipe). */
mt_tensor *mt_npy_load(const char *path, char *err, size_t errlen);

/* The .npy file of `t` in a malloc'd buffer (free() it), its size in *len;
 * NULL with err on failure. */
void *mt_npy_encode(const mt_tensor *t, size_t *len, char *err, size_t errlen);

/* Writes `t` to `path` (created or truncated). 0 on success, -1 on error. */
int mt_npy_save(const char *path, const mt_tensor *t, char *err, size_t errlen);

/* The descr numpy writes for a dtype ("<f4", "|b1", ...), or NULL. */
const char *mt_npy_descr(mt_dtype dt);

#endif
