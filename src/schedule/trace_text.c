/*
 * trace_text.c -- a recorded trace (trace.h) printed as a `@T.schedule`
 * that replays it: each step becomes the call of user_sched.h's language
 * that makes the same change, after the get_block / get_loops calls that
 * name the loops and blocks it uses, found in the function the step was
 * applied to. A loop is named through the first block under it, which must
 * be the only block of its name then; a split by a factor that is not a
 * constant, and a rewrite a rule made outside the primitives (a note),
 * cannot be written: the text then ends with a comment saying so.
 */
#include <string.h>

#include "schedule/block_util.h"
#include "schedule/trace.h"
#include "schedule/user_sched.h"
#include "support/common.h"

typedef struct printer {
    mt_usched u;
    mt_arena *a;
    const char *why; /* set: the step that cannot be written */
} printer;

static const mt_tstmt *first_block(const mt_tstmt *s) {
    if (!s) return NULL;
    if (s->kind == TS_BLOCK) return s;
    if (s->kind == TS_SEQ) {
        for (int i = 0; i < s->nstmts; i++) {
            const mt_tstmt *b = first_block(s->stmts[i]);
            if (b) return b;
        }
        return NULL;
    }
    if (s->kind == TS_IF) {
        const mt_tstmt *b = first_block(s->then_s);
        return b ? b : first_block(s->else_s);
    }
    return first_block(s->body);
}

static int count_blocks(const mt_tstmt *s, const char *name) {
    if (!s) return 0;
    int n = s->kind == TS_BLOCK && s->name && strcmp(s->name, name) == 0;
    if (s->kind == TS_SEQ)
        for (int i = 0; i < s->nstmts; i++) n += count_blocks(s->stmts[i], name);
    else if (s->kind == TS_IF) n += count_blocks(s->then_s, name) + count_blocks(s->else_s, name);
    else n += count_blocks(s->body, name);
    return n;
}

static bool cannot(printer *p, const char *why) {
    p->why = why;
    return false;
}

/* The handle of block `name` of f, after a get_block when it has none. */
static bool name_block(printer *p, const mt_tfunc *f, const char *name, int *h) {
    *h = mt_usched_find_block(&p->u, name);
    if (*h >= 0) return true;
    if (count_blocks(f->body, name) != 1)
        return cannot(p, mt_arena_printf(p->a, "block '%s' is not the only block of its name", name));
    *h = mt_usched_block_handle(&p->u, name);
    mt_usched_line(&p->u, mt_arena_printf(p->a, "%s = sch.get_block(\"%s\")", mt_usched_block_name(&p->u, *h), name));
    return true;
}

/* The handle of loop v of f, after get_loops of the first block under it
 * when it has none. */
static bool name_loop(printer *p, const mt_tfunc *f, mt_tvar *v, int *h) {
    *h = mt_usched_find_loop(&p->u, v);
    if (*h >= 0) return true;
    mt_sched tmp;
    mt_sched_init(&tmp, p->a, (mt_tfunc *)f);
    const mt_tstmt *b = first_block(mt_sched_get_loop(&tmp, v)->body);
    if (!b || !b->name) return cannot(p, mt_arena_printf(p->a, "loop '%s' has no block under it", v->name));
    int bh, hs[MT_USCHED_MAX], n = 0;
    if (!name_block(p, f, b->name, &bh)) return false;
    mt_blk_stmts path = mt_blk_path_to(p->a, f->body, b);
    for (int i = 0; i < path.len; i++) {
        if (path.data[i]->kind != TS_FOR) continue;
        if (n == MT_USCHED_MAX) return cannot(p, "a block under more than 16 loops");
        hs[n++] = mt_usched_loop_handle(&p->u, path.data[i]->var);
    }
    mt_usched_line(&p->u, mt_arena_printf(p->a, "%s%s = sch.get_loops(%s)", mt_usched_loop_list(&p->u, hs, n),
                                          n == 1 ? "," : "", mt_usched_block_name(&p->u, bh)));
    *h = mt_usched_find_loop(&p->u, v);
    return *h >= 0;
}

static bool name_loops(printer *p, const mt_sched_step *st, int *h) {
    for (int i = 0; i < st->nloops; i++)
        if (!name_loop(p, st->before, st->loops[i], &h[i])) return false;
    return true;
}

static const char *scope_str(mt_scope s) {
    return s == MT_SCOPE_SHARED ? "shared" : s == MT_SCOPE_LOCAL ? "local" : "global";
}

/* The index of buffer `buf` among block `block`'s reads in f, or -1. */
static int read_index(printer *p, const mt_tfunc *f, const char *block, const char *buf) {
    mt_sched tmp;
    mt_sched_init(&tmp, p->a, (mt_tfunc *)f);
    mt_blk_stmts path;
    if (!mt_blk_find_block(&tmp, "cache_read", block, &path)) return -1;
    const mt_tstmt *b = path.data[path.len - 1];
    for (int i = 0; i < b->nreads; i++)
        if (strcmp(b->reads[i].buf->name, buf) == 0) return i;
    return -1;
}

/* Does sch.bind derive the step's thread count from the loop's extent (a
 * constant, or F of a clamped T.min(F, ..)), as user_sched.c does? */
static bool bind_replays(printer *p, const mt_sched_step *st) {
    mt_sched tmp;
    mt_sched_init(&tmp, p->a, (mt_tfunc *)st->before);
    const mt_texpr *e = mt_sched_get_loop(&tmp, st->loops[0])->extent;
    int64_t n;
    return mt_arith_const_bound(e, &n) && n == st->threads;
}

static const char *loop_names(printer *p, const int *h, int n) { return mt_usched_loop_list(&p->u, h, n); }

/* One step as a line of the schedule. */
static bool print_step(printer *p, const mt_sched_step *st) {
    mt_arena *a = p->a;
    int h[MT_STEP_MAX_LOOPS], b = -1;
    if (!st->prim) return cannot(p, st->note);
    if (st->nloops > MT_USCHED_MAX) return cannot(p, "a step over more than 16 loops");
    if (!name_loops(p, st, h) || (st->block && !name_block(p, st->before, st->block, &b))) return false;
    const char *bn = b >= 0 ? mt_usched_block_name(&p->u, b) : "", *line = NULL, *p0 = st->prim;
    int64_t f;
    if (!strcmp(p0, "split")) {
        if (!mt_te_is_const_int(st->factor, &f))
            return cannot(p, mt_arena_printf(a, "loop '%s' is split by %s, not a constant", st->loops[0]->name,
                                             mt_texpr_print(a, st->factor)));
        int o[2] = {mt_usched_loop_handle(&p->u, st->outs[0]), mt_usched_loop_handle(&p->u, st->outs[1])};
        line = mt_arena_printf(a, "%s = sch.split(%s, factors=[None, %lld])", loop_names(p, o, 2),
                               loop_names(p, h, 1), (long long)f);
    } else if (!strcmp(p0, "fuse")) {
        int o = mt_usched_loop_handle(&p->u, st->outs[0]);
        line = mt_arena_printf(a, "%s = sch.fuse(%s)", loop_names(p, &o, 1), loop_names(p, h, 2));
    } else if (!strcmp(p0, "reorder")) {
        int r[2] = {h[1], h[0]};
        line = mt_arena_printf(a, "sch.reorder(%s)", loop_names(p, r, 2));
    } else if (!strcmp(p0, "bind")) {
        if (!strncmp(st->str, "threadIdx.", 10) && !bind_replays(p, st))
            return cannot(p, mt_arena_printf(a, "loop '%s' runs on %lld threads, not its extent's number",
                                             st->loops[0]->name, (long long)st->threads));
        line = mt_arena_printf(a, "sch.bind(%s, \"%s\")", loop_names(p, h, 1), st->str);
    } else if (!strcmp(p0, "cache_read") || !strcmp(p0, "cache_write")) {
        int idx = p0[6] == 'r' ? read_index(p, st->before, st->block, st->str) : 0;
        if (idx < 0) return cannot(p, "a cache_read of a buffer its block's T.reads do not name");
        int m = mt_usched_block_handle(&p->u, st->made);
        line = mt_arena_printf(a, "%s = sch.%s(%s, %d, \"%s\")", mt_usched_block_name(&p->u, m), p0, bn, idx,
                               scope_str(st->scope));
    } else if (!strcmp(p0, "decompose_reduction")) {
        mt_usched_rename_block(&p->u, st->block, st->str);
        int m = mt_usched_block_handle(&p->u, st->made);
        line = mt_arena_printf(a, "%s = sch.decompose_reduction(%s, %s)", mt_usched_block_name(&p->u, m), bn,
                               loop_names(p, h, 1));
    } else if (!strcmp(p0, "rfactor")) {
        int m = mt_usched_block_handle(&p->u, st->made);
        line = mt_arena_printf(a, st->nloops == 1 ? "%s = sch.rfactor(%s)" : "%s = sch.rfactor([%s])",
                               mt_usched_block_name(&p->u, m), loop_names(p, h, st->nloops));
    } else if (!strcmp(p0, "transform_layout")) {
        line = mt_arena_printf(a, "sch.transform_layout(%s, \"%s\", %s)", bn, st->str, mt_index_map_text(a, st->map));
    } else if (st->block) { /* compute_inline, compute_at, reverse_* */
        line = st->nloops ? mt_arena_printf(a, "sch.%s(%s, %s)", p0, bn, loop_names(p, h, 1))
                          : mt_arena_printf(a, "sch.%s(%s)", p0, bn);
    } else { /* parallel, vectorize, unroll */
        line = mt_arena_printf(a, "sch.%s(%s)", p0, loop_names(p, h, 1));
    }
    mt_usched_line(&p->u, line);
    return true;
}

const char *mt_sched_trace_text(mt_arena *a, const mt_tfunc *f, bool *replayable) {
    if (!f->trace) return NULL;
    int n = 0;
    for (const mt_sched_step *st = f->trace; st; st = st->prev) n++;
    const mt_sched_step **steps = MT_NEW_ARRAY(a, const mt_sched_step *, n);
    mt_sched_trace_steps(f, steps, n);
    printer p = {.a = a};
    mt_usched_init(&p.u, a, (mt_tfunc *)steps[0]->before);
    for (int i = 0; i < n && print_step(&p, steps[i]); i++) {
    }
    if (p.why) mt_usched_line(&p.u, mt_arena_printf(a, "# and more that a schedule cannot say: %s", p.why));
    if (replayable) *replayable = !p.why;
    return mt_usched_text(&p.u, f->name, false);
}
