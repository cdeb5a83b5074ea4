/*
 * knobs.h -- the tunable constants of the CPU schedule rules, as data.
 *
 * A rule that writes lowered TIR with fixed sizes (a register tile of 8 x
 * 32, column blocks of 512, 4 accumulators, chunks of 64 KiB) reads each
 * size through mt_knob_get() instead of a constant of its own. With no knobs
 * given the rule makes exactly the choice it always made (often one
 * computed from the target and the shapes: "default" below means that
 * choice, not a fixed number). With knobs given -- from a tuning log
 * (schedule/tuning.h) or by the tuner itself (src/tune.c) -- the rule uses
 * those values.
 *
 * Each rule declares its knobs in one table (knobs.c): the name, the range
 * of values that give a correct kernel, and the candidates the tuner tries
 * (its search space). mt_knobs_check validates given knobs against the
 * table, so that a bad value from a log is an error naming the knob, never
 * a wrong kernel; a value in range only changes speed.
 *
 * Given knobs travel on the function (mt_tfunc.knobs) with the name of the
 * rule they are for: a rule reads them only when the name is its own, so a
 * record tuned for the matmul rule is ignored by any other rule that ends
 * up matching the function. The scheduled function shows the knobs it was
 * given as its T.func_attr "knobs" ("mr=4 nc=256"; mt_knobs_mark).
 */
#ifndef MT_SCHEDULE_KNOBS_H
#define MT_SCHEDULE_KNOBS_H

#include <stddef.h>
#include <stdint.h>

#include "tir/tir.h"

enum { MT_KNOBS_MAX = 16, MT_KNOB_MAX_CANDIDATES = 12 };

/* One knob's value. */
typedef struct mt_knob {
    const char *name;
    int64_t value;
} mt_knob;

/* Values for the knobs of one rule (a subset of its table). */
typedef struct mt_knobs {
    const char *rule;        /* the rule's pass name: "schedule_matmul", ... */
    mt_knob kv[MT_KNOBS_MAX];
    int n;
} mt_knobs;

/* One knob of a rule's table. */
typedef struct mt_knob_def {
    const char *name;
    int64_t lo, hi;          /* every value in [lo, hi] gives a correct kernel */
    bool pow2;               /* ... that is also a power of two */
    int ncand;               /* the tuner's candidates: */
    int64_t cand[MT_KNOB_MAX_CANDIDATES];
    const char *doc;         /* one line for docs/schedule.md and the tests */
} mt_knob_def;

/* A rule's table. */
typedef struct mt_rule_knobs {
    const char *rule;
    const mt_knob_def *defs;
    int n;
} mt_rule_knobs;

/* The rules that have knobs, for messages. */
#define MT_KNOB_RULES "schedule_matmul, schedule_reduce, schedule_conv, schedule, gpu_matmul, gpu_gemv, gpu_reduce_rows, gpu_argreduce_rows"

/* The table of rule `rule` (a pass name), or NULL when it has no knobs. */
const mt_rule_knobs *mt_knob_space(const char *rule);

/* NULL when k is valid for its rule (a known rule, known knob names, each
 * once, values in range); else a message naming the rule or the knob,
 * written into buf. */
const char *mt_knobs_check(const mt_knobs *k, char *buf, size_t cap);

/* Sets (or replaces) knob name in k. False when k is full. */
bool mt_knobs_set(mt_knobs *k, const char *name, int64_t value);

/* The value of knob name of rule for f: f's given value when f carries
 * knobs for this rule and names this knob, else dflt. */
int64_t mt_knob_get(const mt_tfunc *f, const char *rule, const char *name, int64_t dflt);
/* The value of name in k (any rule), or dflt when k is NULL or lacks it. */
int64_t mt_knobs_value(const mt_knobs *k, const char *name, int64_t dflt);

/* Is the knob given (f carries knobs for rule that name it)? */
bool mt_knob_given(const mt_tfunc *f, const char *rule, const char *name);

/* "mr=4 nc=256" (names in table order; "" for no knobs). */
const char *mt_knobs_str(mt_arena *a, const mt_knobs *k);

/* g (a rule's result for f) with the T.func_attr "knobs" of the knobs f
 * carries for rule; g itself when it carries none. g must be the rule's own
 * copy (its attrs are replaced, not modified). */
mt_tfunc *mt_knobs_mark(mt_arena *a, mt_tfunc *g, const mt_tfunc *f, const char *rule);

/* g->chosen = a copy of k (the values the rule chose; mt_tfunc.chosen;
 * k->n may be 0: a rule with no choice to show); returns g. */
mt_tfunc *mt_knobs_chose(mt_arena *a, mt_tfunc *g, const mt_knobs *k);

/* k as the schedule step that gives it back: `sch.apply_rule("rule",
 * mr=6, nc=256)`, in the order of the rule's table. */
const char *mt_knobs_call(mt_arena *a, const mt_knobs *k);

#endif
