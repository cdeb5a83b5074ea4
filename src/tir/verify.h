/*
 * verify.h -- is a loop function well formed? (tir/verify.c)
 *
 * The verifier checks one function against the invariants of the form it
 * claims to be in, so that a pass that breaks the IR is caught right after
 * it runs (src/pipeline.c does this after every TIR pass in debug builds
 * and when MT_VERIFY_TIR=1) instead of as a crash or wrong code in a later
 * pass or in codegen. docs/tir.md lists every rule.
 *
 * The forms nest: what is valid lowered is valid in block form, and what
 * is valid flat is valid lowered.
 */
#ifndef MT_TIR_VERIFY_H
#define MT_TIR_VERIFY_H

#include "tir/tir.h"

typedef enum mt_tir_form {
    MT_TIR_BLOCK,   /* after legalization, fusion, inline_producers, scheduling:
                       blocks and f->allocs allowed, buffers n-dimensional */
    MT_TIR_LOWERED, /* after lower_blocks: no TS_BLOCK, f->nallocs == 0 */
    MT_TIR_FLAT,    /* after flatten_buffers: lowered, every buffer one-dimensional,
                       one int64 index per access (what codegen takes) */
} mt_tir_form;

/* NULL when f is well formed in `form`; else a message (in a) that says
 * what is wrong, in which function and where: the source place of the
 * nearest statement that has one ("at 3:5") and the statement, printed.
 * Whatever f holds (missing fields, unknown kinds), it reports and never
 * crashes or calls mt_ice; only running out of memory in `a` is mt_fail's. */
const char *mt_tir_verify(mt_arena *a, const mt_tfunc *f, mt_tir_form form);

/* The same check for a diagnostic on what the user wrote (tir/from_ast.c):
 * NULL when f is well formed; else the full message, with the bare reason
 * in *what and the place of the statement it names in *loc (line 0: none). */
const char *mt_tir_verify_ex(mt_arena *a, const mt_tfunc *f, mt_tir_form form, const char **what,
                             mt_loc *loc);

const char *mt_tir_form_str(mt_tir_form form); /* "block", "lowered", "flat" */

#endif
