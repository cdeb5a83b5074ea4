/*
 * cnum.c -- formatting and reading numbers in the C locale (cnum.h).
 */
#define _GNU_SOURCE /* strtod_l, newlocale, uselocale */
#include "support/cnum.h"

#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* The C locale, created once (0 if newlocale failed: the host's is used). */
static locale_t c_locale(void) {
    static locale_t cached;
    locale_t l = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (l) return l;
    locale_t fresh = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!fresh) return (locale_t)0;
    locale_t expected = 0;
    if (__atomic_compare_exchange_n(&cached, &expected, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return fresh;
    freelocale(fresh);
    return expected;
}

int mt_c_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap) {
    locale_t c = c_locale();
    locale_t old = c ? uselocale(c) : (locale_t)0;
    int r = vsnprintf(buf, n, fmt, ap);
    if (c) uselocale(old);
    return r;
}

int mt_c_snprintf(char *buf, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = mt_c_vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return r;
}

double mt_c_strtod(const char *s, char **end) {
    locale_t c = c_locale();
    return c ? strtod_l(s, end, c) : strtod(s, end);
}
