/*
 * mtc_print.h -- what mtc.c takes from mtc_print.c: a growable string, the
 * 16-bit float conversions, and NumPy-style printing of a tensor.
 */
#ifndef MT_TOOLS_MTC_PRINT_H
#define MT_TOOLS_MTC_PRINT_H

#include <stddef.h>
#include <stdint.h>

#include "minitriton.h"

/* mtc's exit statuses (docs/mtc.md). */
enum { EXIT_OK = 0, EXIT_COMPILE = 1, EXIT_USAGE = 2, EXIT_RUNTIME = 3 };

/* A growable string. Out of memory exits with EXIT_RUNTIME. */
typedef struct sbuf {
    char *p;    /* NUL-terminated text (NULL until the first append) */
    size_t len; /* bytes used, not counting the NUL */
    size_t cap; /* bytes allocated */
} sbuf;

void sb_grow(sbuf *s, size_t extra);
void sb_putn(sbuf *s, const char *t, size_t n);
void sb_puts(sbuf *s, const char *t);
void sb_free(sbuf *s);
const char *sb_str(const sbuf *s);

/* calloc, exiting with EXIT_RUNTIME when out of memory. */
void *xcalloc(size_t n, size_t size);

/* d rounded to the nearest float16 / bfloat16 (ties to even), as bits. */
uint16_t double_to_half(double d);
uint16_t double_to_bf16(double d);

/* Appends to out the text print(np.array(...)) would give for t, without
 * the newline. */
void format_array(const mt_tensor *t, sbuf *out);

#endif
