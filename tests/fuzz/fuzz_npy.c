/*
 * fuzz_npy.c -- libFuzzer harness over the .npy reader (tools/npy.h).
 *
 * mtc reads .npy files that a user hands it; the reader promises to be safe
 * on arbitrary bytes. Each input goes through the three entry points that
 * look at untrusted bytes:
 *
 *   - mt_npy_parse_header on every prefix length that matters (the whole
 *     input and a cut inside the header), which must agree with itself;
 *   - mt_npy_parse on the whole input;
 *   - mt_npy_load_mem, and when it returns a tensor, a round trip: the
 *     tensor is encoded again (mt_npy_encode), the encoding must parse to the
 *     same dtype and shape, and the data bytes must match the input's (bools
 *     normalized to 0/1).
 *
 * Consistency checks trap, so that libFuzzer saves the input. Errors must be
 * one non-empty line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

static void check_err(const char *err) {
    if (!err[0] || strchr(err, '\n')) {
        fprintf(stderr, "fuzz_npy: bad error message '%s'\n", err);
        __builtin_trap();
    }
}

static int same_header(const mt_npy_header *a, const mt_npy_header *b) {
    if (a->dtype != b->dtype || a->ndim != b->ndim || a->data_bytes != b->data_bytes) return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char err[256];
    mt_npy_header h1, h2;

    /* The header parser needs only a prefix; a shorter prefix must not read
     * past its end either. */
    err[0] = 0;
    int hdr_ok = mt_npy_parse_header(data, size, &h1, err, sizeof err) == 0;
    if (!hdr_ok) check_err(err);
    if (hdr_ok) {
        if (h1.ndim < 0 || h1.ndim > MT_MAX_RANK || h1.data_offset > size) __builtin_trap();
        for (int i = 0; i < h1.ndim; i++)
            if (h1.shape[i] < 0) __builtin_trap();
        size_t cut = h1.data_offset > 0 ? h1.data_offset - 1 : 0;
        uint8_t *prefix = malloc(cut ? cut : 1);
        if (prefix) {
            memcpy(prefix, data, cut);
            if (mt_npy_parse_header(prefix, cut, &h2, err, sizeof err) == 0) __builtin_trap();
            free(prefix);
        }
    }

    err[0] = 0;
    int whole_ok = mt_npy_parse(data, size, &h2, err, sizeof err) == 0;
    if (!whole_ok) check_err(err);
    if (whole_ok && (!hdr_ok || !same_header(&h1, &h2) ||
                     h2.data_offset + h2.data_bytes != size))
        __builtin_trap();

    err[0] = 0;
    mt_tensor *t = mt_npy_load_mem(data, size, err, sizeof err);
    if (!t) {
        check_err(err);
        if (whole_ok && h2.data_bytes < ((size_t)1 << 30)) __builtin_trap();
        return 0;
    }
    if (!whole_ok) __builtin_trap();
    size_t len = 0;
    void *enc = mt_npy_encode(t, &len, err, sizeof err);
    if (!enc) __builtin_trap();
    mt_npy_header h3;
    if (mt_npy_parse(enc, len, &h3, err, sizeof err) != 0 || !same_header(&h2, &h3))
        __builtin_trap();
    const uint8_t *in = data + h2.data_offset, *out = (const uint8_t *)enc + h3.data_offset;
    for (size_t i = 0; i < h2.data_bytes; i++) {
        uint8_t want = h2.dtype == MT_BOOL ? in[i] != 0 : in[i];
        if (out[i] != want) __builtin_trap();
    }
    free(enc);
    mt_tensor_release(t);
    return 0;
}
