/*
 * tuning.h -- tuning logs: reading, writing and applying them (tuning.c).
 *
 * A tuning log is JSON lines, one record per workload and target:
 *
 *   {"workload": "5f1c...", "target": "cpu -mcpu=znver5 ...", "func": "fused_matmul_add",
 *    "rule": "schedule_matmul", "knobs": {"mr": 4, "parallel": 0}, "ms": 0.012, "default_ms": 0.019}
 *
 * workload is mt_workload_key of the loop function as the schedule rules
 * see it (block form, after inline_producers): a hash of its canonical
 * text, so the same function in two programs has the same key whatever its
 * name and its buffers' names. target is mt_target_str of its target. func
 * and the times are for people (and mtc's report); knobs are the values
 * the rule named by rule uses (schedule/knobs.h); {} means the rule's own
 * choices were the fastest found.
 *
 * Applying (mt_tuning_apply, called by the pipeline before the rules): a
 * function whose key and target are in the log carries the record's knobs;
 * the rule that then matches uses them only if it is the record's rule (a
 * record for the matmul rule means nothing to the reduce rule).
 */
#ifndef MT_SCHEDULE_TUNING_H
#define MT_SCHEDULE_TUNING_H

#include "schedule/knobs.h"
#include "support/arena.h"
#include "tir/tir.h"

enum { MT_WORKLOAD_KEY_CHARS = 32 }; /* hex digits of a workload key (128 bits) */

typedef struct mt_tuning_record {
    char workload[MT_WORKLOAD_KEY_CHARS + 1];
    const char *target;
    const char *func;
    mt_knobs knobs;          /* knobs.rule is the record's rule */
    double ms, default_ms;   /* measured (-1: not given) */
    int line;                /* in the file it was read from (0: made here) */
} mt_tuning_record;

typedef struct mt_tuning_log {
    const char *file;        /* for diagnostics */
    mt_tuning_record *recs;
    int n, cap;
    int *slot, nslot;        /* index + 1 of the record of each (workload, target), by hash
                              * (open addressing, at most half full): a log of 40,000
                              * records took 14 s to read with a linear search per line */
} mt_tuning_log;

/* An error found reading a log: message and place (1-based line, column). */
typedef struct mt_tuning_error {
    int line, col;
    char msg[200];
} mt_tuning_error;

/* Parses text (the whole file) into log (allocated in a). False with *err
 * filled at the first malformed line: not JSON of the format above, a
 * missing or mistyped field, an invalid knob (knobs.h). Empty lines are
 * skipped; a later record for the same workload and target replaces an
 * earlier one. */
bool mt_tuning_parse(mt_arena *a, const char *text, const char *file, mt_tuning_log *log,
                     mt_tuning_error *err);

/* Adds rec to log, replacing the record with the same workload and target. */
void mt_tuning_put(mt_arena *a, mt_tuning_log *log, const mt_tuning_record *rec);

/* The record of (workload, target), or NULL. */
const mt_tuning_record *mt_tuning_find(const mt_tuning_log *log, const char *workload,
                                       const char *target);

/* One record as one JSON line, with its newline. */
const char *mt_tuning_record_json(mt_arena *a, const mt_tuning_record *rec);

/* The workload key of f (block form): 32 hex digits into out. */
void mt_workload_key(mt_arena *a, const mt_tfunc *f, char out[MT_WORKLOAD_KEY_CHARS + 1]);

/* A loop function of a compiled program as the tuner sees it: its name,
 * key and target, and the rule that scheduled it (NULL: none changed it). */
typedef struct mt_workload {
    const char *func;
    char key[MT_WORKLOAD_KEY_CHARS + 1];
    const char *target;
    const char *rule;
} mt_workload;

/* f with the knobs of its record in log (f itself when log is NULL or has
 * none for it, or the record's knobs are empty). */
mt_tfunc *mt_tuning_apply(mt_arena *a, mt_tfunc *f, const mt_tuning_log *log);

#endif
