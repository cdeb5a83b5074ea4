/*
 * diag.c -- error frames and diagnostic rendering (see diag.h).
 */
#include "support/diag.h"
#include "support/cnum.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local mt_errframe *top;

void mt_err_push(mt_errframe *f) {
    f->prev = top;
    f->status = MT_OK;
    f->loc = MT_NOLOC;
    f->msg[0] = 0;
    top = f;
}

void mt_err_pop(mt_errframe *f) {
    if (top == f) top = f->prev;
}

static _Noreturn void fail_raise(mt_status st, mt_loc loc, const char *prefix, const char *fmt,
                            va_list ap) {
    mt_errframe *f = top;
    if (!f) {
        /* A library entry point forgot its frame: a bug that cannot be
         * reported. Trap rather than continue on corrupt state. */
        __builtin_trap();
    }
    f->status = st;
    f->loc = loc;
    int n = prefix ? snprintf(f->msg, sizeof f->msg, "%s", prefix) : 0;
    if (n < 0 || (size_t)n >= sizeof f->msg) n = 0;
    mt_c_vsnprintf(f->msg + n, sizeof f->msg - (size_t)n, fmt, ap);
    top = f->prev;
    longjmp(f->jb, 1);
}

void mt_fail(mt_status st, mt_loc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fail_raise(st, loc, NULL, fmt, ap);
}

void mt_fail_noloc(mt_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fail_raise(st, MT_NOLOC, NULL, fmt, ap);
}

void mt_ice_at(const char *file, int line, const char *fmt, ...) {
    char prefix[160];
    const char *base = strrchr(file, '/');
    snprintf(prefix, sizeof prefix, "internal error at %s:%d: ", base ? base + 1 : file, line);
    va_list ap;
    va_start(ap, fmt);
    fail_raise(MT_ERR_INTERNAL, MT_NOLOC, prefix, fmt, ap);
}

void mt_diag_clear(mt_diag *d) {
    if (!d) return;
    d->status = MT_OK;
    d->line = d->col = 0;
    d->message[0] = 0;
    d->text[0] = 0;
}

/* Copies line `line` (1-based) of src into out, tabs kept; returns its length.
 * Lines end as the lexer ends them: "\n", "\r\n" or a lone "\r". */
static size_t source_line(const char *src, int line, char *out, size_t cap) {
    const char *p = src;
    for (int l = 1; l < line && *p; p++) {
        if (*p == '\r' && p[1] == '\n') p++;
        if (*p == '\n' || *p == '\r') l++;
    }
    size_t n = 0;
    while (p[n] && p[n] != '\n' && p[n] != '\r' && n + 1 < cap) {
        out[n] = p[n];
        n++;
    }
    out[n] = 0;
    return n;
}

void mt_diag_set(mt_diag *d, mt_status st, const char *file, const char *src, mt_loc loc,
                 const char *msg) {
    if (!d) return;
    d->status = st;
    d->line = loc.line;
    d->col = loc.col;
    snprintf(d->message, sizeof d->message, "%s", msg);
    if (!file) file = "<source>";
    int n;
    if (loc.line > 0)
        n = snprintf(d->text, sizeof d->text, "%s:%d:%d: error: %s\n", file, loc.line, loc.col, msg);
    else
        n = snprintf(d->text, sizeof d->text, "%s: error: %s\n", file, msg);
    if (n < 0 || (size_t)n >= sizeof d->text || loc.line <= 0 || !src) return;
    char line[512];
    size_t len = source_line(src, loc.line, line, sizeof line);
    size_t room = sizeof d->text - (size_t)n;
    int m = snprintf(d->text + n, room, "%s\n", line);
    if (m < 0 || (size_t)m >= room) return;
    n += m;
    /* Caret under the column; tabs in the line are echoed so it lines up. */
    size_t col = loc.col > 0 ? (size_t)loc.col - 1 : 0;
    if (col > len) col = len;
    for (size_t i = 0; i < col && (size_t)n + 3 < sizeof d->text; i++)
        d->text[n++] = line[i] == '\t' ? '\t' : ' ';
    if ((size_t)n + 3 < sizeof d->text) {
        d->text[n++] = '^';
        d->text[n++] = '\n';
    }
    d->text[n] = 0;
}

void mt_diag_from_frame(mt_diag *d, const mt_errframe *f, const char *file, const char *src) {
    mt_diag_set(d, f->status, file, src, f->loc, f->msg);
}
