#include "support/strbuf.h"
#include "support/cnum.h"

#include <stdio.h>
#include <string.h>

void mt_sb_init(mt_sb *sb, mt_arena *arena) {
    sb->arena = arena;
    sb->buf = NULL;
    sb->len = sb->cap = 0;
}

static void reserve(mt_sb *sb, size_t extra) {
    if (sb->len + extra + 1 <= sb->cap) return;
    size_t ncap = sb->cap ? sb->cap * 2 : 256;
    while (ncap < sb->len + extra + 1) ncap *= 2;
    char *nb = mt_arena_alloc(sb->arena, ncap);
    if (sb->len) memcpy(nb, sb->buf, sb->len);
    sb->buf = nb;
    sb->cap = ncap;
}

void mt_sb_putn(mt_sb *sb, const char *s, size_t n) {
    reserve(sb, n);
    memcpy(sb->buf + sb->len, s, n);
    sb->len += n;
    sb->buf[sb->len] = 0;
}

void mt_sb_putc(mt_sb *sb, char c) { mt_sb_putn(sb, &c, 1); }
void mt_sb_puts(mt_sb *sb, const char *s) { mt_sb_putn(sb, s, strlen(s)); }

void mt_sb_printf(mt_sb *sb, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = mt_c_vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n > 0) {
        reserve(sb, (size_t)n);
        mt_c_vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
        sb->len += (size_t)n;
    }
    va_end(ap);
}

void mt_sb_indent(mt_sb *sb, int spaces) {
    static const char blanks[] = "                                                                ";
    for (; spaces > 0; spaces -= (int)sizeof blanks - 1)
        mt_sb_putn(sb, blanks, spaces < (int)sizeof blanks - 1 ? (size_t)spaces : sizeof blanks - 1);
}

const char *mt_sb_str(mt_sb *sb) { return sb->buf ? sb->buf : ""; }
