/*
 * dot.c -- the graph as Graphviz, each fusion group a cluster.
 *
 * Printed after fuse_ops, when every binding knows its group and still
 * names its op (fuse_tir then replaces a group by one call). One digraph
 * for the program: per graph function a cluster holding its parameters
 * (ellipses), its bindings (boxes: the op and the value's type) and its
 * results (a "return" node); the bindings of one fusion group sit in a
 * filled cluster labelled with the kernel they become (fused_add_relu);
 * if/for blocks are dashed clusters around their bodies. An edge runs from
 * the binding (or parameter) that defines a value to each binding using
 * it, labelled with the value's name (for a value the compiler named, the
 * expression the user wrote); constants are not drawn. Node names
 * are n0, n1, ... so that user names never need quoting; labels are
 * escaped. Edges come after all nodes, outside every cluster.
 *
 *     mtc --emit dot k.py | dot -Tsvg > k.svg
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "frontend/ast.h"
#include "graph/graph.h"
#include "support/ptrmap.h"
#include "support/cnum.h"
#include "support/strbuf.h"

typedef struct dotter {
    mt_arena *a;
    mt_sb sb;
    mt_sb edges;       /* written after every node: an edge inside a cluster
                          would pull its ends into that cluster */
    mt_ptrmap node_of; /* value -> 1 + node number of its definition */
    int nodes, clusters;
    int indent;
} dotter;

static void line(dotter *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(dotter *d, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    mt_c_vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    mt_sb_indent(&d->sb, d->indent);
    mt_sb_puts(&d->sb, buf);
    mt_sb_putc(&d->sb, '\n');
}

/* s escaped for a double-quoted dot string */
static const char *esc(dotter *d, const char *s) {
    mt_sb sb;
    mt_sb_init(&sb, d->a);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') mt_sb_putc(&sb, '\\');
        mt_sb_putc(&sb, *s);
    }
    return mt_sb_str(&sb);
}

/* a value as the user wrote it: its name, or a temporary's expression */
static const char *value_text(dotter *d, const mt_gvar *v) {
    return esc(d, v->temp && v->expr ? mt_ast_unparse(d->a, v->expr, 24) : v->name);
}

static const char *type_text(dotter *d, const mt_gvar *v) {
    return mt_arena_printf(d->a, "%s %s", mt_dtype_str(v->type.dtype), mt_shape_str(d->a, &v->type));
}

/* a new node defining the values outs[0, n) */
static int node(dotter *d, mt_gvar *const *outs, int n) {
    int id = d->nodes++;
    for (int i = 0; i < n; i++) /* set, not add: the map only adds */
        mt_ptrmap_add(d->a, &d->node_of, outs[i], id + 1 - mt_ptrmap_get(&d->node_of, outs[i]));
    return id;
}

static void edges(dotter *d, mt_gvar *const *args, int nargs, int to) {
    for (int i = 0; i < nargs; i++) {
        int from = args[i] && !args[i]->is_const ? mt_ptrmap_get(&d->node_of, args[i]) - 1 : -1;
        if (from >= 0) mt_sb_printf(&d->edges, "  n%d -> n%d [label=\"%s\"];\n", from, to, value_text(d, args[i]));
    }
}

static const char *op_name(const mt_gbinding *b) {
    if (b->kind == MT_CALL_TO_DEVICE) return "to_device";
    if (b->kind == MT_CALL_EXTERN) return b->ext->name;
    return b->op ? b->op->name : b->callee->name;
}

static void binding(dotter *d, const mt_gbinding *b) {
    int id = node(d, b->outs, b->nouts);
    const char *label = op_name(b);
    for (int i = 0; i < b->nouts; i++)
        label = b->outs[i]->temp
                    ? mt_arena_printf(d->a, "%s\\n%s", label, type_text(d, b->outs[i]))
                    : mt_arena_printf(d->a, "%s\\n%s: %s", label, esc(d, b->outs[i]->name), type_text(d, b->outs[i]));
    line(d, "n%d [label=\"%s\"];", id, label);
    edges(d, b->args, b->nargs, id);
}

/* the name fuse_tir gives the group's kernel: fused_<op1>_<op2>_... */
static const char *group_name(dotter *d, mt_gbinding *const *bs, int n) {
    const char *name = "fused";
    for (int i = 0; i < n; i++) name = mt_arena_printf(d->a, "%s_%s", name, op_name(bs[i]));
    return name;
}

/* The bindings of a block; those of one group (consecutive or not) in one
 * cluster, placed where the group's first member is. */
static void bindings(dotter *d, const mt_gblock *blk) {
    bool *done = MT_NEW_ARRAY(d->a, bool, blk->nbindings > 0 ? blk->nbindings : 1);
    mt_gbinding **members = MT_NEW_ARRAY(d->a, mt_gbinding *, blk->nbindings > 0 ? blk->nbindings : 1);
    for (int i = 0; i < blk->nbindings; i++) {
        if (done[i]) continue;
        int g = blk->bindings[i]->group, n = 0;
        for (int j = i; j < blk->nbindings; j++)
            if (j == i || (g >= 0 && blk->bindings[j]->group == g)) {
                members[n++] = blk->bindings[j];
                done[j] = true;
            }
        if (n == 1) {
            binding(d, members[0]);
            continue;
        }
        line(d, "subgraph cluster_%d {", d->clusters++);
        d->indent += 2;
        line(d, "label=\"%s\"; style=\"rounded,filled\"; fillcolor=\"#eef3fb\";", esc(d, group_name(d, members, n)));
        for (int k = 0; k < n; k++) binding(d, members[k]);
        d->indent -= 2;
        line(d, "}");
    }
}

static void body(dotter *d, const mt_gbody *b);

/* a dashed node for a value that control flow defines, fed from srcs */
static void joined(dotter *d, mt_gvar *v, mt_gvar *const *srcs, int nsrcs, const char *how) {
    int id = node(d, &v, 1);
    line(d, "n%d [shape=ellipse, style=dashed, label=\"%s\\n%s\"];", id, esc(d, v->name), how);
    edges(d, srcs, nsrcs, id);
}

static void if_block(dotter *d, const mt_gblock *blk) {
    line(d, "label=\"if %s\"; style=dashed;", esc(d, blk->cond->name));
    body(d, &blk->then_body);
    if (blk->else_body.nblocks) {
        line(d, "subgraph cluster_%d {", d->clusters++);
        d->indent += 2;
        line(d, "label=\"else\"; style=dashed;");
        body(d, &blk->else_body);
        d->indent -= 2;
        line(d, "}");
    }
    for (int k = 0; k < blk->nmerged; k++) {
        mt_gvar *srcs[2] = {blk->then_vals[k], blk->else_vals[k]};
        joined(d, blk->merged[k], srcs, 2, "if");
    }
}

static void loop_block(dotter *d, const mt_gblock *blk) {
    line(d, "label=\"for %s in range(...)\"; style=dashed;", esc(d, blk->ivar->name));
    mt_gvar *bounds[3] = {blk->start, blk->stop, blk->step};
    joined(d, blk->ivar, bounds, 3, "loop index");
    int *ids = MT_NEW_ARRAY(d->a, int, blk->ncarried > 0 ? blk->ncarried : 1);
    for (int k = 0; k < blk->ncarried; k++) {
        joined(d, blk->carried[k], &blk->carried_init[k], 1, "carried");
        ids[k] = mt_ptrmap_get(&d->node_of, blk->carried[k]) - 1;
    }
    body(d, &blk->body);
    for (int k = 0; k < blk->ncarried; k++) edges(d, &blk->carried_next[k], 1, ids[k]);
}

static void control(dotter *d, const mt_gblock *blk) {
    line(d, "subgraph cluster_%d {", d->clusters++);
    d->indent += 2;
    if (blk->kind == MT_GBLOCK_IF) {
        if_block(d, blk);
    } else if (blk->kind == MT_GBLOCK_LOOP) {
        loop_block(d, blk);
    } else {
        int id = d->nodes++;
        line(d, "label=\"assert\"; style=dashed;");
        line(d, "n%d [label=\"assert\\n%s\", shape=note];", id, esc(d, blk->message ? blk->message : ""));
        edges(d, &blk->cond, 1, id);
    }
    d->indent -= 2;
    line(d, "}");
}

static void body(dotter *d, const mt_gbody *b) {
    for (int i = 0; i < b->nblocks; i++) {
        const mt_gblock *blk = b->blocks[i];
        if (blk->kind == MT_GBLOCK_BINDINGS) bindings(d, blk);
        else control(d, blk);
    }
}

static void function(dotter *d, const mt_gfunc *f) {
    line(d, "subgraph cluster_%d {", d->clusters++);
    d->indent += 2;
    line(d, "label=\"%s\"; style=solid;", esc(d, f->name));
    for (int i = 0; i < f->nparams; i++) {
        int id = node(d, &f->params[i], 1);
        line(d, "n%d [shape=ellipse, label=\"%s\\n%s\"];", id, esc(d, f->params[i]->name),
             type_text(d, f->params[i]));
    }
    body(d, &f->body);
    int ret = d->nodes++;
    line(d, "n%d [shape=ellipse, label=\"return\"];", ret);
    edges(d, f->outputs, f->noutputs, ret);
    d->indent -= 2;
    line(d, "}");
}

const char *mt_gmodule_dot(mt_arena *a, const mt_gmodule *m) {
    dotter d;
    memset(&d, 0, sizeof d);
    d.a = a;
    mt_sb_init(&d.sb, a);
    mt_sb_init(&d.edges, a);
    line(&d, "digraph minitriton {");
    d.indent = 2;
    line(&d, "node [shape=box, fontname=\"monospace\", fontsize=10];");
    line(&d, "edge [fontname=\"monospace\", fontsize=9];");
    for (int i = 0; i < m->nfuncs; i++) function(&d, m->funcs[i]);
    mt_sb_puts(&d.sb, mt_sb_str(&d.edges));
    d.indent = 0;
    line(&d, "}");
    return mt_sb_str(&d.sb);
}
