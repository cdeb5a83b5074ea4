/*
 * leading_checks.h -- the bounds checks in front of a function's loop nest,
 * set aside while a schedule rule matches the nest and put back after
 * (leading_checks.c).
 */
#ifndef MT_SCHEDULE_LEADING_CHECKS_H
#define MT_SCHEDULE_LEADING_CHECKS_H

#include "tir/tir.h"

/* f without the T.check_bounds statements that open its body (*checks,
 * *n: them, in order), or f itself (*n = 0) when there are none or f is
 * not for the CPU. */
mt_tfunc *mt_checks_peel(mt_arena *a, mt_tfunc *f, mt_tstmt ***checks, int *n);

/* g, what a rule made of f's peeled copy, with the checks back in front;
 * their loads of f's parameters become loads of g's (flat, row-major, when
 * the rule flattened them). NULL when that is not possible (g's parameters
 * do not match f's, or a check reads something else): the caller keeps f. */
mt_tfunc *mt_checks_restore(mt_arena *a, const mt_tfunc *f, mt_tfunc *g, mt_tstmt *const *checks, int n);

#endif
