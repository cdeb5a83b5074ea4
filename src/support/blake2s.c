/*
 * blake2s.c -- BLAKE2s-256 as RFC 7693 specifies it (blake2s.h).
 *
 * Ten rounds of the G mixing function over a 4x4 state of 32-bit words,
 * message words permuted by the SIGMA table each round; the counter t and
 * the final-block flag f0 enter the state through the IV. The last block is
 * compressed only in final() (it must carry the flag), so update() keeps a
 * full block buffered until more input arrives. Words are read and written
 * little-endian byte by byte, so the digest is the same on any host.
 */
#include "support/blake2s.h"

#include <string.h>

static const uint32_t iv[8] = {0x6A09E667u, 0xBB67AE85u, 0x3C6EF372u, 0xA54FF53Au,
                               0x510E527Fu, 0x9B05688Cu, 0x1F83D9ABu, 0x5BE0CD19u};

static const uint8_t sigma[10][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static uint32_t load32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#define G(a, b, c, d, x, y)                                                                    \
    do {                                                                                       \
        v[a] = v[a] + v[b] + (x);                                                              \
        v[d] = rotr(v[d] ^ v[a], 16);                                                          \
        v[c] = v[c] + v[d];                                                                    \
        v[b] = rotr(v[b] ^ v[c], 12);                                                          \
        v[a] = v[a] + v[b] + (y);                                                              \
        v[d] = rotr(v[d] ^ v[a], 8);                                                           \
        v[c] = v[c] + v[d];                                                                    \
        v[b] = rotr(v[b] ^ v[c], 7);                                                           \
    } while (0)

static void compress(mt_blake2s *s, const uint8_t *block, int last) {
    uint32_t m[16], v[16];
    for (int i = 0; i < 16; i++) m[i] = load32(block + 4 * i);
    for (int i = 0; i < 8; i++) {
        v[i] = s->h[i];
        v[i + 8] = iv[i];
    }
    v[12] ^= s->t[0];
    v[13] ^= s->t[1];
    if (last) v[14] = ~v[14];
    for (int r = 0; r < 10; r++) {
        const uint8_t *z = sigma[r];
        G(0, 4, 8, 12, m[z[0]], m[z[1]]);
        G(1, 5, 9, 13, m[z[2]], m[z[3]]);
        G(2, 6, 10, 14, m[z[4]], m[z[5]]);
        G(3, 7, 11, 15, m[z[6]], m[z[7]]);
        G(0, 5, 10, 15, m[z[8]], m[z[9]]);
        G(1, 6, 11, 12, m[z[10]], m[z[11]]);
        G(2, 7, 8, 13, m[z[12]], m[z[13]]);
        G(3, 4, 9, 14, m[z[14]], m[z[15]]);
    }
    for (int i = 0; i < 8; i++) s->h[i] ^= v[i] ^ v[i + 8];
}

static void count(mt_blake2s *s, uint32_t n) {
    s->t[0] += n;
    if (s->t[0] < n) s->t[1]++;
}

void mt_blake2s_init(mt_blake2s *s) {
    memset(s, 0, sizeof *s);
    memcpy(s->h, iv, sizeof iv);
    s->h[0] ^= 0x01010000u ^ MT_BLAKE2S_BYTES; /* depth 1, fanout 1, no key, 32-byte digest */
}

void mt_blake2s_update(mt_blake2s *s, const void *data, size_t len) {
    const uint8_t *p = data;
    while (len > 0) {
        if (s->buflen == 64) { /* more input: the buffered block is not the last */
            count(s, 64);
            compress(s, s->buf, 0);
            s->buflen = 0;
        }
        if (s->buflen == 0 && len > 64) { /* whole blocks straight from the input */
            count(s, 64);
            compress(s, p, 0);
            p += 64;
            len -= 64;
            continue;
        }
        size_t take = 64 - s->buflen < len ? 64 - s->buflen : len;
        memcpy(s->buf + s->buflen, p, take);
        s->buflen += take;
        p += take;
        len -= take;
    }
}

void mt_blake2s_final(mt_blake2s *s, uint8_t out[MT_BLAKE2S_BYTES]) {
    count(s, (uint32_t)s->buflen);
    memset(s->buf + s->buflen, 0, 64 - s->buflen);
    compress(s, s->buf, 1);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(s->h[i] >> (8 * j));
}

void mt_blake2s_hash(const void *data, size_t len, uint8_t out[MT_BLAKE2S_BYTES]) {
    mt_blake2s s;
    mt_blake2s_init(&s);
    mt_blake2s_update(&s, data, len);
    mt_blake2s_final(&s, out);
}
