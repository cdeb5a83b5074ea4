/*
 * diag.h -- how deep code reports errors.
 *
 * The library never exits or aborts. A public API function opens an error
 * frame (MT_TRY); code below it that finds an error calls mt_fail (a user
 * error at a source location) or mt_ice (a broken internal invariant), which
 * longjmps back to the frame with status, location and message. The API
 * function then renders a GCC-style diagnostic and returns the status.
 *
 * Because of the longjmp, everything allocated between MT_TRY and mt_fail must
 * live in an arena (arena.h) or be registered for cleanup by the frame's owner.
 *
 *     mt_errframe f;
 *     if (MT_TRY(&f)) {
 *         ... work that may mt_fail ...
 *         mt_err_pop(&f);
 *     } else {
 *         mt_err_pop(&f);   // f.status, f.loc, f.msg say what happened
 *     }
 *
 * Frames nest and are per thread.
 */
#ifndef MT_SUPPORT_DIAG_H
#define MT_SUPPORT_DIAG_H

#include <setjmp.h>

#include "minitriton.h"

/* A place in the source: 1-based line and column; line 0 means "nowhere". */
typedef struct mt_loc {
    int line, col;
} mt_loc;

static inline mt_loc mt_loc_make(int line, int col) {
    mt_loc l = {line, col};
    return l;
}
#define MT_NOLOC (mt_loc_make(0, 0))

typedef struct mt_errframe {
    jmp_buf jb;
    struct mt_errframe *prev;
    mt_status status;
    mt_loc loc;
    char msg[512];
} mt_errframe;

void mt_err_push(mt_errframe *f);
void mt_err_pop(mt_errframe *f);
#define MT_TRY(f) (mt_err_push(f), setjmp((f)->jb) == 0)

/* Report a user error at `loc` (MT_NOLOC when there is none). */
_Noreturn void mt_fail(mt_status st, mt_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
_Noreturn void mt_fail_noloc(mt_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Report an internal error (MT_ERR_INTERNAL) with the C place it failed. */
_Noreturn void mt_ice_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define mt_ice(...) mt_ice_at(__FILE__, __LINE__, __VA_ARGS__)
#define MT_ASSERT(cond)                                                       \
    do {                                                                      \
        if (!(cond)) mt_ice_at(__FILE__, __LINE__, "assertion failed: %s", #cond); \
    } while (0)

/* Fill `d` with status, place, message and the rendered text:
 * "file:line:col: error: msg\n<source line>\n<spaces>^\n". `src` may be NULL
 * (no source line shown), as may `file` ("<source>"). d may be NULL. */
void mt_diag_set(mt_diag *d, mt_status st, const char *file, const char *src,
                 mt_loc loc, const char *msg);
void mt_diag_clear(mt_diag *d);
/* The same for an error frame that caught something. */
void mt_diag_from_frame(mt_diag *d, const mt_errframe *f, const char *file, const char *src);

#endif
