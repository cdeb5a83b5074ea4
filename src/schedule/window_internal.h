/*
 * window_internal.h -- what the conv and pool rules share
 * (window_common.c): matching a window read of an NCHW input as
 * legalize_conv.c writes it, and copying the input rows an output row
 * needs into a zero- (or -inf-) padded local buffer split by column phase.
 * Used by rule_conv.c and rule_pool.c. Not a public API.
 *
 * A window read is
 *
 *     x[n, ch, oh * sh + kh * dh - ph, ow * sw + kw * dw - pw]
 *
 * and, on an axis with padding, the index clamped to [0, size - 1] under
 * `T.Select(<both bounds of each padded axis>, x[...], fill)`.
 */
#ifndef MT_SCHEDULE_WINDOW_INTERNAL_H
#define MT_SCHEDULE_WINDOW_INTERNAL_H

#include "schedule/matmul_internal.h"

typedef struct win {
    /* given by the caller before win_match */
    int64_t OH, OW, KH, KW;     /* output plane and kernel */
    /* matched */
    mt_tbuffer *x;              /* the input: NCHW, constant dims but the batch */
    int64_t C, H, W;
    int64_t s[2], p[2], d[2];   /* stride, padding, dilation (h, w) */
    const mt_texpr *load;       /* the load of x (its batch and channel indices are the caller's to check) */
    const mt_texpr *fill;       /* the select's other arm; NULL without a select */
    /* packed rows (win_pack_layout) */
    int64_t wq, wp;             /* columns per phase, per packed row */
} win;

/* Matches X as a window read over the iteration variables oh, kh (height)
 * and ow, kw (width); `others` may not appear in the spatial indices. */
bool win_match(win *w, const mt_texpr *X, mt_tvar *oh, mt_tvar *kh, mt_tvar *ow, mt_tvar *kw,
               mt_tvar *const *others, int nothers);

/* The largest column stride the window rules take (a window matched with
 * one output column takes stride 1, whatever was written): win_pack makes
 * code for each phase of it. */
enum { WIN_MAX_COL_STRIDE = 64 };

/* Do rows have to be packed (padding, or a column stride)? */
bool win_needs_pack(const win *w);
/* Sets wq and wp, the packed row's shape. */
void win_pack_layout(win *w);

/* Copies the KH input rows of output row oh for channels ch0 .. ch0 + nch
 * of image n into xp ([ch - ch0][kh][wp]), padded with fill. */
mt_tstmt *win_pack(win *w, mm *c, mt_tbuffer *xp, mt_texpr *n, mt_texpr *ch0, int64_t nch, mt_texpr *oh,
                   mt_texpr *fill);

/* The input for output columns ow0 + off .. (lanes of them) at kernel
 * (kh, kw) and channel ch (relative to the packed ch0): from xp when
 * packed, else from x in place (channel ch absolute, image n, row oh). */
mt_texpr *win_input(win *w, mm *c, mt_tbuffer *xp, mt_texpr *n, mt_texpr *ch, mt_texpr *oh, mt_texpr *kh,
                    int64_t kw, mt_texpr *ow0, int off, int lanes);

#endif
