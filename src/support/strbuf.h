/*
 * strbuf.h -- a growable string in an arena, for printers and dumps.
 */
#ifndef MT_SUPPORT_STRBUF_H
#define MT_SUPPORT_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

#include "support/arena.h"

typedef struct mt_sb {
    mt_arena *arena;
    char *buf;
    size_t len, cap;
} mt_sb;

void mt_sb_init(mt_sb *sb, mt_arena *arena);
void mt_sb_putc(mt_sb *sb, char c);
void mt_sb_puts(mt_sb *sb, const char *s);
void mt_sb_putn(mt_sb *sb, const char *s, size_t n);
void mt_sb_printf(mt_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mt_sb_indent(mt_sb *sb, int spaces);
const char *mt_sb_str(mt_sb *sb); /* NUL-terminated; "" when empty */

#endif
