/*
 * blake2s.h -- BLAKE2s-256 (RFC 7693), the disk cache's key and checksum.
 *
 * A strong 256-bit hash, small (one compression function over 64-byte
 * blocks of 32-bit words) and fast enough for what it hashes here (the
 * TIR text of a program, and the object files of a cache entry: a few
 * hundred KB at several hundred MB/s). Unkeyed, 32-byte digests only.
 *
 *     mt_blake2s st;
 *     mt_blake2s_init(&st);
 *     mt_blake2s_update(&st, data, len);   // any number of times
 *     uint8_t digest[MT_BLAKE2S_BYTES];
 *     mt_blake2s_final(&st, digest);
 */
#ifndef MT_SUPPORT_BLAKE2S_H
#define MT_SUPPORT_BLAKE2S_H

#include <stddef.h>
#include <stdint.h>

#define MT_BLAKE2S_BYTES 32

typedef struct mt_blake2s {
    uint32_t h[8];      /* chaining value */
    uint32_t t[2];      /* bytes hashed so far (64-bit counter) */
    uint8_t buf[64];    /* the block not yet compressed */
    size_t buflen;      /* bytes in buf (a full block is kept until more comes: the last is final) */
} mt_blake2s;

void mt_blake2s_init(mt_blake2s *s);
void mt_blake2s_update(mt_blake2s *s, const void *data, size_t len);
void mt_blake2s_final(mt_blake2s *s, uint8_t out[MT_BLAKE2S_BYTES]);
/* The digest of one buffer. */
void mt_blake2s_hash(const void *data, size_t len, uint8_t out[MT_BLAKE2S_BYTES]);

#endif
