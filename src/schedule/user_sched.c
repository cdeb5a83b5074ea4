/*
 * user_sched.c -- the primitives of user schedules behind handles, with the
 * trace of what was applied (user_sched.h).
 *
 * Each operation: resolve its handles (a loop handle must still name a loop
 * of the function: `loop_var`), run the primitive of primitives.h on u->s,
 * and on success give out handles for what the step made and append the
 * step to the trace. Names in the trace are Python identifiers made from
 * the loop variables' and blocks' names, unique within the trace.
 */
#include "schedule/user_sched.h"

#include <ctype.h>
#include <stdarg.h>
#include <string.h>

#include "schedule/block_util.h"
#include "support/common.h"
#include "tir/arith.h"


void mt_usched_init(mt_usched *u, mt_arena *a, mt_tfunc *f) {
    memset(u, 0, sizeof *u);
    mt_sched_init(&u->s, a, f);
    u->s.user = true;
    mt_sb_init(&u->trace, a);
}

static bool fail(mt_usched *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(mt_usched *u, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    u->error = mt_arena_vprintf(u->s.arena, fmt, ap);
    va_end(ap);
    return false;
}

/* The primitive failed: its reason becomes u's. */
static bool refused(mt_usched *u) { return fail(u, "%s", u->s.error ? u->s.error : "refused"); }

/* ---- trace names ------------------------------------------------------------ */

static bool name_used(const mt_usched *u, const char *n) {
    for (int i = 0; i < u->names.len; i++)
        if (strcmp(u->names.data[i], n) == 0) return true;
    return strcmp(n, "sch") == 0 || strcmp(n, "T") == 0 || strcmp(n, "None") == 0;
}

/* A fresh identifier made from `base`: letters, digits and '_' kept, others
 * '_'; a leading digit prefixed; a suffix _2, _3 .. where taken. */
static const char *fresh_name(mt_usched *u, const char *prefix, const char *base) {
    mt_arena *a = u->s.arena;
    char *s = mt_arena_printf(a, "%s%s", prefix, base && *base ? base : "x");
    for (char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_') *p = '_';
    if (isdigit((unsigned char)s[0])) s = mt_arena_printf(a, "_%s", s);
    const char *n = s;
    for (int k = 2; name_used(u, n); k++) n = mt_arena_printf(a, "%s_%d", s, k);
    MT_VEC_PUSH(a, &u->names, n);
    return n;
}

const char *mt_usched_loop_name(const mt_usched *u, int loop) {
    return loop >= 0 && loop < u->loops.len ? u->loops.data[loop].name : "?";
}

const char *mt_usched_block_name(const mt_usched *u, int block) {
    return block >= 0 && block < u->blocks.len ? u->blocks.data[block].name : "?";
}

static void step(mt_usched *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void step(mt_usched *u, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    mt_sb_puts(&u->trace, "    ");
    mt_sb_puts(&u->trace, mt_arena_vprintf(u->s.arena, fmt, ap));
    mt_sb_putc(&u->trace, '\n');
    va_end(ap);
    u->nsteps++;
}

const char *mt_usched_text(mt_usched *u, const char *func, bool by_name) {
    mt_sb sb;
    mt_sb_init(&sb, u->s.arena);
    if (by_name) mt_sb_printf(&sb, "@T.schedule(%s)\n", func);
    else mt_sb_printf(&sb, "@T.schedule(\"%s\")\n", func);
    mt_usched tmp = {.s = u->s, .names = u->names};
    mt_sb_printf(&sb, "def %s(sch):\n", fresh_name(&tmp, "schedule_", func));
    const char *body = mt_sb_str(&u->trace);
    mt_sb_puts(&sb, *body ? body : "    pass\n");
    return mt_sb_str(&sb);
}

/* ---- handles -------------------------------------------------------------- */

static int loop_handle(mt_usched *u, mt_tvar *v) {
    for (int i = 0; i < u->loops.len; i++)
        if (u->loops.data[i].var == v) return i;
    mt_usched_loop h = {v, fresh_name(u, "", v->name)};
    MT_VEC_PUSH(u->s.arena, &u->loops, h);
    return u->loops.len - 1;
}

static int block_handle(mt_usched *u, const char *block) {
    for (int i = 0; i < u->blocks.len; i++)
        if (strcmp(u->blocks.data[i].block, block) == 0) return i;
    mt_usched_block h = {block, fresh_name(u, "b_", block)};
    MT_VEC_PUSH(u->s.arena, &u->blocks, h);
    return u->blocks.len - 1;
}


/* The variable of loop handle h, which must still name one loop. */
static bool loop_var(mt_usched *u, const char *prim, int h, mt_tvar **out) {
    if (h < 0 || h >= u->loops.len) return fail(u, "%s: not a loop", prim);
    mt_tvar *v = u->loops.data[h].var;
    int n = mt_sched_loop_count(&u->s, v);
    if (n == 1) {
        *out = v;
        return true;
    }
    for (int i = 0; i < u->gone.len; i++)
        if (u->gone.data[i].var == v)
            return fail(u, "%s: loop '%s' no longer exists: %s replaced it", prim, u->loops.data[h].name,
                        u->gone.data[i].by);
    return fail(u, "%s: loop '%s' no longer exists", prim, u->loops.data[h].name);
}

static bool block_of(mt_usched *u, const char *prim, int h, const char **out) {
    if (h < 0 || h >= u->blocks.len) return fail(u, "%s: not a block", prim);
    *out = u->blocks.data[h].block;
    return true;
}

static void mark_gone(mt_usched *u, const mt_tvar *v, const char *prim) {
    mt_usched_gone g = {v, mt_arena_printf(u->s.arena, "%s (step %d)", prim, u->nsteps + 1)};
    MT_VEC_PUSH(u->s.arena, &u->gone, g);
}

/* Every handle naming block `from` names `to` now. */
static void rename_block(mt_usched *u, const char *from, const char *to) {
    for (int i = 0; i < u->blocks.len; i++)
        if (strcmp(u->blocks.data[i].block, from) == 0) u->blocks.data[i].block = to;
}

static const char *loop_list(mt_usched *u, const int *h, int n) {
    mt_sb sb;
    mt_sb_init(&sb, u->s.arena);
    for (int i = 0; i < n; i++) mt_sb_printf(&sb, "%s%s", i ? ", " : "", mt_usched_loop_name(u, h[i]));
    return mt_sb_str(&sb);
}

/* ---- blocks and loops --------------------------------------------------------- */

typedef struct block_names {
    mt_sb sb;
    int n;
} block_names;

static void name_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    block_names *b = v->ctx;
    if (s->kind == TS_BLOCK && s->name) mt_sb_printf(&b->sb, "%s'%s'", b->n++ ? ", " : "", s->name);
    mt_tvisit_stmt_children(v, s);
}

/* "'add', 'exp'": the blocks of the function, for messages. */
static const char *all_blocks(mt_usched *u) {
    block_names b = {.n = 0};
    mt_sb_init(&b.sb, u->s.arena);
    mt_tvisitor v = {mt_tvisit_no_expr, name_stmt, &b};
    if (u->s.func->body) mt_tvisit_stmt(&v, u->s.func->body);
    return b.n ? mt_sb_str(&b.sb) : "none";
}

bool mt_usched_get_block(mt_usched *u, const char *name, int *block) {
    mt_blk_stmts path;
    if (!mt_blk_find_block(&u->s, "get_block", name, &path))
        return fail(u, "%s (the blocks of '%s': %s)", u->s.error, u->s.func->name, all_blocks(u));
    int known = u->blocks.len;
    *block = block_handle(u, path.data[path.len - 1]->name);
    if (*block == known) step(u, "%s = sch.get_block(\"%s\")", u->blocks.data[*block].name, name);
    return true;
}

bool mt_usched_get_loops(mt_usched *u, int block, int *loops, int *n) {
    const char *name = NULL;
    mt_blk_stmts path;
    if (!block_of(u, "get_loops", block, &name)) return false;
    if (!mt_blk_find_block(&u->s, "get_loops", name, &path)) return refused(u);
    *n = 0;
    for (int i = 0; i < path.len; i++) {
        if (path.data[i]->kind != TS_FOR) continue;
        if (*n == MT_USCHED_MAX) return fail(u, "get_loops: block '%s' is under more than %d loops", name, MT_USCHED_MAX);
        loops[(*n)++] = loop_handle(u, path.data[i]->var);
    }
    if (*n == 0) step(u, "sch.get_loops(%s)", u->blocks.data[block].name);
    else if (*n == 1) step(u, "%s, = sch.get_loops(%s)", loop_list(u, loops, 1), u->blocks.data[block].name);
    else step(u, "%s = sch.get_loops(%s)", loop_list(u, loops, *n), u->blocks.data[block].name);
    return true;
}

/* ---- split ------------------------------------------------------------------ */

/* The factors with a None (0) filled in from the loop's constant extent. */
static bool split_factors(mt_usched *u, const mt_tstmt *l, const int64_t *f, int n, int64_t *out) {
    int none = -1;
    int64_t prod = 1, ext;
    for (int i = 0; i < n; i++) {
        out[i] = f[i];
        if (f[i] == 0 && none >= 0) return fail(u, "split: more than one factor is None");
        if (f[i] == 0) none = i;
        else if (f[i] < 0) return fail(u, "split: factor %lld is not positive", (long long)f[i]);
        else if (prod > INT64_MAX / f[i]) return fail(u, "split: the factors' product is too large");
        else prod *= f[i];
    }
    bool econst = mt_te_is_const_int(l->extent, &ext);
    if (none > 0 && !econst)
        return fail(u, "split: loop '%s' has extent %s, not a constant: only the first factor may be None",
                    l->var->name, mt_texpr_print(u->s.arena, l->extent));
    if (none > 0) out[none] = (ext + prod - 1) / prod > 0 ? (ext + prod - 1) / prod : 1;
    if (none < 0 && econst && prod < ext)
        return fail(u, "split: the factors' product %lld is less than the extent %lld of loop '%s'",
                    (long long)prod, (long long)ext, l->var->name);
    if (none < 0 && !econst)
        return fail(u, "split: loop '%s' has extent %s, not a constant: make the first factor None",
                    l->var->name, mt_texpr_print(u->s.arena, l->extent));
    return true;
}

static const char *factor_list(mt_usched *u, const int64_t *f, int n) {
    mt_sb sb;
    mt_sb_init(&sb, u->s.arena);
    for (int i = 0; i < n; i++) {
        if (i) mt_sb_puts(&sb, ", ");
        if (f[i]) mt_sb_printf(&sb, "%lld", (long long)f[i]);
        else mt_sb_puts(&sb, "None");
    }
    return mt_sb_str(&sb);
}

bool mt_usched_split(mt_usched *u, int loop, const int64_t *factors, int n, int *out) {
    mt_tvar *v = NULL;
    int64_t f[MT_USCHED_MAX];
    if (!loop_var(u, "split", loop, &v)) return false;
    if (n < 2 || n > MT_USCHED_MAX) return fail(u, "split: give 2 to %d factors, not %d", MT_USCHED_MAX, n);
    if (!split_factors(u, mt_sched_get_loop(&u->s, v), factors, n, f)) return false;
    mt_sched save = u->s;
    mt_tvar *parts[MT_USCHED_MAX], *cur = v;
    for (int i = n - 1; i >= 1; i--) { /* from the inside: each split peels the innermost part */
        mt_tvar *outer, *inner;
        if (!mt_sched_split(&u->s, cur, mt_te_i64(u->s.arena, f[i]), &outer, &inner)) {
            const char *why = u->s.error;
            u->s = save;
            return fail(u, "%s", why);
        }
        parts[i] = inner;
        cur = outer;
    }
    parts[0] = cur;
    mark_gone(u, v, "split");
    for (int i = 0; i < n; i++) out[i] = loop_handle(u, parts[i]);
    step(u, "%s = sch.split(%s, factors=[%s])", loop_list(u, out, n), u->loops.data[loop].name,
         factor_list(u, factors, n));
    return true;
}

/* ---- fuse, reorder ------------------------------------------------------------- */

bool mt_usched_fuse(mt_usched *u, const int *loops, int n, int *out) {
    if (n < 2 || n > MT_USCHED_MAX) return fail(u, "fuse: give 2 to %d loops, not %d", MT_USCHED_MAX, n);
    mt_tvar *vs[MT_USCHED_MAX];
    for (int i = 0; i < n; i++)
        if (!loop_var(u, "fuse", loops[i], &vs[i])) return false;
    mt_sched save = u->s;
    mt_tvar *cur = vs[0];
    for (int i = 1; i < n; i++)
        if (!mt_sched_fuse(&u->s, cur, vs[i], &cur)) {
            const char *why = u->s.error;
            u->s = save;
            return fail(u, "%s", why);
        }
    for (int i = 0; i < n; i++) mark_gone(u, vs[i], "fuse");
    *out = loop_handle(u, cur);
    step(u, "%s = sch.fuse(%s)", u->loops.data[*out].name, loop_list(u, loops, n));
    return true;
}

/* The loops from `outer` down to `inner` along the path to a block
 * (outer first); false unless inner is under outer. */
static bool chain(mt_usched *u, mt_tvar *outer, mt_tvar *inner, mt_tvar **out, int *n) {
    const mt_tstmt *lo = mt_sched_get_loop(&u->s, outer), *li = mt_sched_get_loop(&u->s, inner);
    mt_blk_stmts p = mt_blk_path_to(u->s.arena, lo, li);
    *n = 0;
    for (int i = 0; i < p.len; i++) {
        if (p.data[i]->kind != TS_FOR) continue;
        if (*n == 64) return false;
        out[(*n)++] = p.data[i]->var;
    }
    return *n > 0 && out[*n - 1] == inner;
}

/* The outermost (*top) and innermost (*bottom) of vs[], which must all lie
 * on one path of nested loops. */
static bool nest_order(mt_usched *u, mt_tvar *const *vs, int n, mt_tvar **top, mt_tvar **bottom) {
    *top = *bottom = vs[0];
    for (int i = 1; i < n; i++) {
        mt_tvar *c[64];
        int nc;
        if (chain(u, *top, vs[i], c, &nc)) {
            if (chain(u, *bottom, vs[i], c, &nc)) *bottom = vs[i];
        } else if (chain(u, vs[i], *top, c, &nc)) {
            *top = vs[i];
        } else {
            return fail(u, "reorder: loops '%s' and '%s' are not in one nest", (*top)->name, vs[i]->name);
        }
    }
    return true;
}

static int index_of(mt_tvar *const *vs, int n, const mt_tvar *v) {
    for (int i = 0; i < n; i++)
        if (vs[i] == v) return i;
    return -1;
}

/* Bubble the chain into the wanted order by swapping neighbours. */
static bool reorder_chain(mt_usched *u, mt_tvar **c, int nc, mt_tvar *const *vs, int n) {
    mt_tvar *want[64];
    int k = 0;
    for (int i = 0; i < nc; i++) want[i] = index_of(vs, n, c[i]) >= 0 ? vs[k++] : c[i];
    for (int i = 0; i < nc; i++)
        for (int j = 0; j + 1 < nc - i; j++)
            if (index_of(want, nc, c[j]) > index_of(want, nc, c[j + 1])) {
                if (!mt_sched_reorder(&u->s, c[j], c[j + 1])) return false;
                mt_tvar *t = c[j];
                c[j] = c[j + 1], c[j + 1] = t;
            }
    return true;
}

bool mt_usched_reorder(mt_usched *u, const int *loops, int n) {
    if (n < 2 || n > MT_USCHED_MAX) return fail(u, "reorder: give 2 to %d loops, not %d", MT_USCHED_MAX, n);
    mt_tvar *vs[MT_USCHED_MAX], *top, *bottom, *c[64];
    for (int i = 0; i < n; i++) {
        if (!loop_var(u, "reorder", loops[i], &vs[i])) return false;
        for (int j = 0; j < i; j++)
            if (vs[j] == vs[i]) return fail(u, "reorder: loop '%s' is named twice", u->loops.data[loops[i]].name);
    }
    if (!nest_order(u, vs, n, &top, &bottom)) return false;
    int nc;
    if (!chain(u, top, bottom, c, &nc)) return fail(u, "reorder: the loops are not in one nest");
    for (int i = 0; i < n; i++) /* a loop beside the path from top to bottom */
        if (index_of(c, nc, vs[i]) < 0)
            return fail(u, "reorder: loops '%s' and '%s' are not in one nest", bottom->name, vs[i]->name);
    mt_sched save = u->s;
    if (!reorder_chain(u, c, nc, vs, n)) {
        const char *why = u->s.error;
        u->s = save;
        return fail(u, "%s", why);
    }
    step(u, "sch.reorder(%s)", loop_list(u, loops, n));
    return true;
}

/* ---- loop annotations ---------------------------------------------------------- */

typedef bool (*annotate_fn)(mt_sched *, mt_tvar *);

static bool annotate(mt_usched *u, const char *prim, int loop, annotate_fn fn) {
    mt_tvar *v = NULL;
    if (!loop_var(u, prim, loop, &v)) return false;
    if (!fn(&u->s, v)) return refused(u);
    step(u, "sch.%s(%s)", prim, u->loops.data[loop].name);
    return true;
}

bool mt_usched_parallel(mt_usched *u, int loop) { return annotate(u, "parallel", loop, mt_sched_parallel); }
bool mt_usched_vectorize(mt_usched *u, int loop) { return annotate(u, "vectorize", loop, mt_sched_vectorize); }
bool mt_usched_unroll(mt_usched *u, int loop) { return annotate(u, "unroll", loop, mt_sched_unroll); }

/* How many threads a loop bound to threadIdx runs: its constant extent, or
 * F of a split's clamped tail T.min(F, ..). */
static bool thread_count(mt_usched *u, const mt_tstmt *l, int64_t *n) {
    const mt_texpr *e = l->extent;
    if (mt_arith_const_bound(e, n)) return true;
    return fail(u, "bind: loop '%s' has extent %s; a loop bound to threadIdx needs a constant one "
                   "(split it by a constant first)", l->var->name, mt_texpr_print(u->s.arena, e));
}

bool mt_usched_bind(mt_usched *u, int loop, const char *tag) {
    mt_tvar *v = NULL;
    if (!loop_var(u, "bind", loop, &v)) return false;
    const mt_target_desc *t = mt_tfunc_target(u->s.func);
    if (t->kind != MT_TARGET_CUDA)
        return fail(u, "bind: kernel '%s' runs on the CPU; blockIdx and threadIdx are for GPU kernels",
                    u->s.func->name);
    const mt_tstmt *l = mt_sched_get_loop(&u->s, v);
    int64_t threads = 1;
    if (strncmp(tag, "threadIdx.", 10) == 0) {
        if (!thread_count(u, l, &threads)) return false;
        if (threads > t->max_threads_per_block)
            return fail(u, "bind: loop '%s' runs %lld threads; a block has at most %d on %s", v->name,
                        (long long)threads, t->max_threads_per_block, mt_target_str(t, (char[64]){0}, 64));
    }
    if (!mt_sched_bind(&u->s, v, tag, threads)) return refused(u);
    step(u, "sch.bind(%s, \"%s\")", u->loops.data[loop].name, tag);
    return true;
}

/* ---- block primitives ---------------------------------------------------------- */

bool mt_usched_compute_at(mt_usched *u, int block, int loop) {
    const char *b = NULL;
    mt_tvar *v = NULL;
    if (!block_of(u, "compute_at", block, &b) || !loop_var(u, "compute_at", loop, &v)) return false;
    if (!mt_sched_compute_at(&u->s, b, v)) return refused(u);
    step(u, "sch.compute_at(%s, %s)", u->blocks.data[block].name, u->loops.data[loop].name);
    return true;
}

bool mt_usched_compute_inline(mt_usched *u, int block) {
    const char *b = NULL;
    if (!block_of(u, "compute_inline", block, &b)) return false;
    if (!mt_sched_compute_inline(&u->s, b)) return refused(u);
    step(u, "sch.compute_inline(%s)", u->blocks.data[block].name);
    return true;
}

bool mt_usched_use_fma(mt_usched *u, int block) {
    const char *b = NULL;
    if (!block_of(u, "use_fma", block, &b)) return false;
    if (!mt_sched_use_fma(&u->s, b)) return refused(u);
    step(u, "sch.use_fma(%s)", u->blocks.data[block].name);
    return true;
}

static bool parse_scope(mt_usched *u, const char *prim, const char *scope, mt_scope *out) {
    static const char *const names[] = {"global", "shared", "local"};
    for (int i = 0; i < 3; i++)
        if (scope && strcmp(scope, names[i]) == 0) {
            *out = (mt_scope)i;
            return true;
        }
    return fail(u, "%s: unknown storage scope '%s' (global, shared or local)", prim, scope ? scope : "");
}

/* The name of the buffer a block reads (region `index` of its T.reads) or
 * writes (of its T.writes). */
static bool region_buffer(mt_usched *u, const char *prim, const char *b, bool reads, int index, const char **buf) {
    mt_blk_stmts path;
    if (!mt_blk_find_block(&u->s, prim, b, &path)) return refused(u);
    const mt_tstmt *blk = path.data[path.len - 1];
    int n = reads ? blk->nreads : blk->nwrites;
    const mt_tregion *r = reads ? blk->reads : blk->writes;
    if (index < 0 || index >= n)
        return fail(u, "%s: block '%s' %s %d buffer%s: index %d is out of range", prim, b, reads ? "reads" : "writes",
                    n, n == 1 ? "" : "s", index);
    *buf = r[index].buf->name;
    return true;
}

bool mt_usched_cache_read(mt_usched *u, int block, int index, const char *scope, int *out) {
    const char *b = NULL, *buf = NULL, *made = NULL;
    mt_scope sc = MT_SCOPE_GLOBAL;
    if (!block_of(u, "cache_read", block, &b) || !parse_scope(u, "cache_read", scope, &sc) ||
        !region_buffer(u, "cache_read", b, true, index, &buf))
        return false;
    if (!mt_sched_cache_read(&u->s, b, buf, sc, &made)) return refused(u);
    *out = block_handle(u, made);
    step(u, "%s = sch.cache_read(%s, %d, \"%s\")", u->blocks.data[*out].name, u->blocks.data[block].name, index,
         scope);
    return true;
}

bool mt_usched_transform_layout(mt_usched *u, int block, const char *buffer, char rw, int index,
                                const mt_index_map *map) {
    const char *b = NULL;
    if (!block_of(u, "transform_layout", block, &b) ||
        (!buffer && !region_buffer(u, "transform_layout", b, rw == 'r', index, &buffer)))
        return false;
    if (!mt_sched_transform_layout(&u->s, b, buffer, map)) return refused(u);
    step(u, "sch.transform_layout(%s, \"%s\", %s)", u->blocks.data[block].name, buffer,
         mt_index_map_text(u->s.arena, map));
    return true;
}

bool mt_usched_cache_write(mt_usched *u, int block, int index, const char *scope, int *out) {
    const char *b = NULL, *buf = NULL, *made = NULL;
    mt_scope sc = MT_SCOPE_GLOBAL;
    if (!block_of(u, "cache_write", block, &b) || !parse_scope(u, "cache_write", scope, &sc) ||
        !region_buffer(u, "cache_write", b, false, index, &buf))
        return false;
    if (!mt_sched_cache_write(&u->s, b, sc, &made)) return refused(u);
    *out = made ? block_handle(u, made) : block;
    step(u, "%s = sch.cache_write(%s, %d, \"%s\")", u->blocks.data[*out].name, u->blocks.data[block].name, index,
         scope);
    return true;
}

bool mt_usched_reverse_compute_at(mt_usched *u, int block, int loop) {
    const char *b = NULL;
    mt_tvar *v = NULL;
    if (!block_of(u, "reverse_compute_at", block, &b) || !loop_var(u, "reverse_compute_at", loop, &v)) return false;
    if (!mt_sched_reverse_compute_at(&u->s, b, v)) return refused(u);
    step(u, "sch.reverse_compute_at(%s, %s)", u->blocks.data[block].name, u->loops.data[loop].name);
    return true;
}

bool mt_usched_reverse_compute_inline(mt_usched *u, int block) {
    const char *b = NULL;
    if (!block_of(u, "reverse_compute_inline", block, &b)) return false;
    if (!mt_sched_reverse_compute_inline(&u->s, b)) return refused(u);
    step(u, "sch.reverse_compute_inline(%s)", u->blocks.data[block].name);
    return true;
}

bool mt_usched_decompose_reduction(mt_usched *u, int block, int loop, int *init) {
    const char *b = NULL;
    mt_tvar *v = NULL;
    if (!block_of(u, "decompose_reduction", block, &b) || !loop_var(u, "decompose_reduction", loop, &v))
        return false;
    if (!mt_sched_decompose_reduction(&u->s, b, v)) return refused(u);
    const char *bname = u->blocks.data[block].name;
    rename_block(u, b, u->s.renamed);
    *init = block_handle(u, u->s.made);
    step(u, "%s = sch.decompose_reduction(%s, %s)", u->blocks.data[*init].name, bname,
         u->loops.data[loop].name);
    return true;
}

/* The one block under loop l with a reduce variable l drives (NULL:
 * none, or several). */
typedef struct red_finder {
    const mt_tstmt *loop, *found;
    int count;
} red_finder;

static void red_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    red_finder *r = v->ctx;
    if (s->kind == TS_BLOCK && mt_blk_loop_binds(s, r->loop, MT_ITER_REDUCE)) {
        r->found = s;
        r->count++;
    }
    mt_tvisit_stmt_children(v, s);
}

static const mt_tstmt *reduction_under(const mt_tstmt *l) {
    red_finder r = {l, NULL, 0};
    mt_tvisitor v = {mt_tvisit_no_expr, red_stmt, &r};
    mt_tvisit_stmt(&v, l->body);
    return r.count == 1 ? r.found : NULL;
}

bool mt_usched_rfactor(mt_usched *u, const int *loops, int n, int *rf) {
    if (n < 1 || n > MT_USCHED_MAX) return fail(u, "rfactor: give 1 to %d loops, not %d", MT_USCHED_MAX, n);
    mt_tvar *vs[MT_USCHED_MAX];
    for (int i = 0; i < n; i++)
        if (!loop_var(u, "rfactor", loops[i], &vs[i])) return false;
    const mt_tstmt *b = reduction_under(mt_sched_get_loop(&u->s, vs[0]));
    if (!b || !b->name)
        return fail(u, "rfactor: loop '%s' drives the reduce variable of no block, or of several",
                    u->loops.data[loops[0]].name);
    const char *name = b->name;
    if (!mt_sched_rfactor(&u->s, name, vs, n)) return refused(u);
    *rf = block_handle(u, u->s.made);
    if (n == 1) step(u, "%s = sch.rfactor(%s)", u->blocks.data[*rf].name, loop_list(u, loops, 1));
    else step(u, "%s = sch.rfactor([%s])", u->blocks.data[*rf].name, loop_list(u, loops, n));
    return true;
}

/* ---- for trace_text.c: naming without applying ------------------------------ */

int mt_usched_loop_handle(mt_usched *u, mt_tvar *v) { return loop_handle(u, v); }

int mt_usched_find_loop(const mt_usched *u, const mt_tvar *v) {
    for (int i = 0; i < u->loops.len; i++)
        if (u->loops.data[i].var == v) return i;
    return -1;
}

int mt_usched_block_handle(mt_usched *u, const char *block) { return block_handle(u, block); }

int mt_usched_find_block(const mt_usched *u, const char *block) {
    for (int i = 0; i < u->blocks.len; i++)
        if (strcmp(u->blocks.data[i].block, block) == 0) return i;
    return -1;
}

void mt_usched_rename_block(mt_usched *u, const char *from, const char *to) { rename_block(u, from, to); }

void mt_usched_line(mt_usched *u, const char *text) { step(u, "%s", text); }

const char *mt_usched_loop_list(mt_usched *u, const int *h, int n) { return loop_list(u, h, n); }
