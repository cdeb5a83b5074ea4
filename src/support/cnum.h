/*
 * cnum.h -- numbers as text in the C locale ("1.5", never "1,5"), whatever
 * LC_NUMERIC the host program set with setlocale: the text the library
 * writes and reads back (the printers, CUDA C, tuning logs, diagnostics,
 * the lexer's literals) must not depend on it. Under a German locale a
 * printf'd 2.5 is "2,5", which CUDA C reads as the comma operator.
 *
 * Each switches the calling thread to the C locale for the one call
 * (uselocale), so it is thread safe and leaves the host's locale alone.
 */
#ifndef MT_SUPPORT_CNUM_H
#define MT_SUPPORT_CNUM_H

#include <stdarg.h>
#include <stddef.h>

int mt_c_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
int mt_c_snprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
double mt_c_strtod(const char *s, char **end);

#endif
