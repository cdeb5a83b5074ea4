/*
 * trace_text.c -- a recorded trace (trace.h) printed as a `@T.schedule`
 * that replays it: each step becomes the call of user_sched.h's language
 * that makes the same change, after the get_block / get_loops calls that
 * name the loops and blocks it uses, found in the function the step was
 * applied to. Runs of steps that one call makes are printed as that call:
 * splits of each other's outer loop as one split with all the factors, and
 * swaps of neighbouring loops of one nest as one reorder of those loops in
 * their final order. A loop is named through the first block under it, which must
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

/* ---- runs of steps as one call ------------------------------------------------ */

static bool is_prim(const mt_sched_step *st, const char *prim) { return st->prim && strcmp(st->prim, prim) == 0; }

/* Splits from steps[0], each of the one before's outer loop by a constant:
 * `sch.split(j, factors=[None, F3, F2, F1])` makes them (user_sched.c
 * peels the factors from the inside, as these did). How many (1: none
 * follow). */
static int split_run(const mt_sched_step *const *st, int n) {
    int k = 1;
    int64_t f;
    if (!mt_te_is_const_int(st[0]->factor, &f)) return 1;
    while (k < n && k + 1 < MT_USCHED_MAX && is_prim(st[k], "split") && st[k]->loops[0] == st[k - 1]->outs[0] &&
           mt_te_is_const_int(st[k]->factor, &f))
        k++;
    return k;
}

static bool print_split_run(printer *p, const mt_sched_step *const *st, int n) {
    int h, o[MT_USCHED_MAX];
    if (!name_loop(p, st[0]->before, st[0]->loops[0], &h)) return false;
    mt_sb fs;
    mt_sb_init(&fs, p->a);
    mt_sb_puts(&fs, "None");
    o[0] = mt_usched_loop_handle(&p->u, st[n - 1]->outs[0]);
    for (int q = 0; q < n; q++) {
        int64_t f;
        mt_te_is_const_int(st[n - 1 - q]->factor, &f);
        mt_sb_printf(&fs, ", %lld", (long long)f);
        o[q + 1] = mt_usched_loop_handle(&p->u, st[n - 1 - q]->outs[1]);
    }
    mt_usched_line(&p->u, mt_arena_printf(p->a, "%s = sch.split(%s, factors=[%s])", loop_names(p, o, n + 1),
                                          loop_names(p, &h, 1), mt_sb_str(&fs)));
    return true;
}

/* The loops a run of reorders from steps[0] swapped, in their order in
 * `after` (the function after the run), when they lie on one path of
 * nested loops (then `sch.reorder` of them in that order makes the same
 * nest: the swaps moved them only past each other); how many, 0 if not. */
static int reorder_set(printer *p, const mt_sched_step *const *st, int n, const mt_tfunc *after, mt_tvar **out) {
    int m = 0, depth[MT_USCHED_MAX];
    mt_sched tmp;
    mt_sched_init(&tmp, p->a, (mt_tfunc *)after);
    for (int q = 0; q < n; q++)
        for (int l = 0; l < 2; l++) {
            mt_tvar *v = st[q]->loops[l];
            int at = 0;
            while (at < m && out[at] != v) at++;
            if (at < m) continue;
            if (m == MT_USCHED_MAX) return 0;
            mt_blk_stmts path = mt_blk_path_to(p->a, after->body, mt_sched_get_loop(&tmp, v));
            int d = 0;
            for (int i = 0; i < path.len; i++) d += path.data[i]->kind == TS_FOR;
            for (at = m++; at > 0 && depth[at - 1] > d; at--) out[at] = out[at - 1], depth[at] = depth[at - 1];
            out[at] = v, depth[at] = d;
        }
    for (int i = 0; i + 1 < m; i++)
        if (mt_blk_path_to(p->a, mt_sched_get_loop(&tmp, out[i]), mt_sched_get_loop(&tmp, out[i + 1])).len == 0)
            return 0;
    return m;
}

static bool print_reorder_run(printer *p, const mt_sched_step *const *st, int m, mt_tvar *const *vs) {
    int h[MT_USCHED_MAX];
    for (int i = 0; i < m; i++)
        if (!name_loop(p, st[0]->before, vs[i], &h[i])) return false;
    mt_usched_line(&p->u, mt_arena_printf(p->a, "sch.reorder(%s)", loop_names(p, h, m)));
    return true;
}

/* Steps from steps[i] printed as one call or one each; how many printed
 * (0: one that cannot be written). */
static int print_steps(printer *p, const mt_sched_step *const *steps, int i, int n, const mt_tfunc *f) {
    const mt_sched_step *const *st = steps + i;
    int k = 1;
    if (is_prim(st[0], "split") && (k = split_run(st, n - i)) > 1) return print_split_run(p, st, k) ? k : 0;
    if (is_prim(st[0], "reorder")) {
        while (i + k < n && is_prim(st[k], "reorder")) k++;
        mt_tvar *vs[MT_USCHED_MAX];
        int m = k > 1 ? reorder_set(p, st, k, i + k < n ? st[k]->before : f, vs) : 0;
        if (m) return print_reorder_run(p, st, m, vs) ? k : 0;
    }
    return print_step(p, st[0]) ? 1 : 0;
}

const char *mt_sched_trace_text(mt_arena *a, const mt_tfunc *f, bool *replayable) {
    if (!f->trace) return NULL;
    int n = 0;
    for (const mt_sched_step *st = f->trace; st; st = st->prev) n++;
    const mt_sched_step **steps = MT_NEW_ARRAY(a, const mt_sched_step *, n);
    mt_sched_trace_steps(f, steps, n);
    printer p = {.a = a};
    mt_usched_init(&p.u, a, (mt_tfunc *)steps[0]->before);
    for (int i = 0, k; i < n && (k = print_steps(&p, steps, i, n, f)) > 0; i += k) {
    }
    if (p.why) mt_usched_line(&p.u, mt_arena_printf(a, "# and more that a schedule cannot say: %s", p.why));
    if (replayable) *replayable = !p.why;
    return mt_usched_text(&p.u, f->name, false);
}
