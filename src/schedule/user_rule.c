/*
 * user_rule.c -- `sch.apply_rule(rule, knob=value, ...)`: a default rule
 * with knobs, as one step of a user schedule (user_sched.h).
 *
 * The rules that write their loops in lowered form (the matmul rule with
 * its GEMV schedules, the row-reduction rule, their GPU versions) are not
 * made of primitives,
 * so what they chose cannot be written as splits and reorders. Their
 * choices are knobs (knobs.h), and this step gives them back: it runs the
 * named rule on the function as scheduled so far with the knobs given (the
 * rest the rule's own), as a tuning log's record would. `mtc --emit
 * schedule` prints a kernel such a rule scheduled as this step with every
 * value the rule chose (mt_tfunc.chosen), so the text replays it exactly
 * and each number can be edited. The rules with knobs of the kernel's
 * target (the CPU's four, the GPU matmul, GEMV, row and argmax rules); the function
 * must be one the rule takes (else a refusal saying so); after it the
 * function is in lowered form and no primitive applies.
 */
#include <string.h>

#include "schedule/gpu_rules.h"
#include "schedule/knobs.h"
#include "schedule/leading_checks.h"
#include "schedule/schedule.h"
#include "schedule/user_sched.h"
#include "support/common.h"

typedef mt_tfunc *(*rule_fn)(mt_arena *a, mt_tfunc *f);

static const struct {
    const char *name;
    rule_fn fn;
    mt_target target; /* the kernels it schedules */
} rules[] = {
    {"schedule_matmul", mt_schedule_matmul_pass, MT_TARGET_CPU},
    {"schedule_reduce", mt_schedule_reduce_pass, MT_TARGET_CPU},
    {"schedule_conv", mt_schedule_conv_pass, MT_TARGET_CPU},
    {"schedule", mt_schedule_default_cpu, MT_TARGET_CPU},
    {"gpu_matmul", mt_schedule_gpu_matmul, MT_TARGET_CUDA},
    {"gpu_gemv", mt_schedule_gpu_gemv, MT_TARGET_CUDA},
    {"gpu_reduce_rows", mt_schedule_gpu_reduce, MT_TARGET_CUDA},
    {"gpu_argreduce_rows", mt_schedule_gpu_argreduce, MT_TARGET_CUDA},
};

/* The rule's entry, or -1. */
static int rule_of(const char *name) {
    for (int i = 0; name && i < (int)(sizeof rules / sizeof rules[0]); i++)
        if (strcmp(rules[i].name, name) == 0) return i;
    return -1;
}

static bool refuse(mt_usched *u, const char *why) {
    u->error = why;
    return false;
}

/* The rule on f with its leading bounds checks set aside (as the pipeline
 * runs the rules: leading_checks.h); NULL when the rule leaves f alone. */
static mt_tfunc *run_rule(mt_arena *a, rule_fn fn, mt_tfunc *f) {
    mt_tstmt **checks;
    int nc;
    mt_tfunc *bare = mt_checks_peel(a, f, &checks, &nc);
    mt_tfunc *g = fn(a, bare);
    if (g == bare) return NULL;
    return mt_checks_restore(a, f, g, checks, nc); /* NULL when they cannot go back */
}

bool mt_usched_apply_rule(mt_usched *u, const char *rule, const mt_knobs *given) {
    mt_arena *a = u->s.arena;
    mt_tfunc *f = u->s.func;
    int r = rule_of(rule);
    if (r < 0)
        return refuse(u, mt_arena_printf(a, "apply_rule: no rule named '%s' (the rules with knobs: %s)",
                                         rule ? rule : "", MT_KNOB_RULES));
    if (u->lowered) return refuse(u, mt_arena_printf(a, "apply_rule: rule %s has scheduled the kernel already", u->lowered));
    if (mt_tfunc_target(f)->kind != rules[r].target)
        return refuse(u, mt_arena_printf(a, "apply_rule: kernel '%s' runs on the %s; rule %s is for the %s's kernels",
                                         f->name, mt_tfunc_target(f)->kind == MT_TARGET_CPU ? "CPU" : "GPU",
                                         rules[r].name, rules[r].target == MT_TARGET_CPU ? "CPU" : "GPU"));
    mt_knobs *k = MT_NEW(a, mt_knobs);
    *k = *given;
    k->rule = rules[r].name;
    char buf[256];
    const char *bad = mt_knobs_check(k, buf, sizeof buf);
    if (bad) return refuse(u, mt_arena_printf(a, "apply_rule: %s", bad));
    mt_tfunc *with = MT_NEW(a, mt_tfunc);
    *with = *f;
    with->knobs = k;
    mt_tfunc *g = run_rule(a, rules[r].fn, with);
    if (!g)
        return refuse(u, mt_arena_printf(a, "apply_rule: rule %s does not take kernel '%s' as it is scheduled so far "
                                            "(the rule takes only what it would schedule by default)",
                                         k->rule, f->name));
    u->s.func = g;
    u->lowered = k->rule;
    mt_usched_line(u, mt_knobs_call(a, k));
    return true;
}
