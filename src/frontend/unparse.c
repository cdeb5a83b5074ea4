/*
 * unparse.c -- an expression back to source text, for diagnostics.
 *
 * A value the compiler made for a subexpression has no name the user wrote
 * (the graph calls it lv, lv1, ...), so a message about it quotes the
 * expression instead: "'a * 2.0' is float32 but 'b' is int64". The text is
 * rebuilt from the AST, not cut from the source: it is the expression as
 * Python would print it, with the parentheses its precedence needs and no
 * others, whatever spacing and comments the source had.
 *
 * Precedence follows Python's grammar, loosest first: conditional
 * expression, or, and, not, comparisons, |, ^, &, shifts, + -, * / // % @,
 * unary - + ~, **, then primaries (calls, attributes, subscripts, atoms). A
 * child is parenthesized when it binds looser than its place requires; **
 * groups to the right, the other binary operators to the left.
 *
 * The text is cut at a budget (with "..." at the end) and the walk stops
 * there, so quoting the head of a long chain costs the budget, not the
 * chain. The parser bounds the AST's depth, which bounds the recursion.
 */
#include "frontend/ast.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/cnum.h"
#include "support/strbuf.h"

enum { P_IFEXP = 1, P_OR, P_AND, P_NOT, P_CMP, P_BOR, P_BXOR, P_BAND, P_SHIFT, P_ADD, P_MUL,
       P_UNARY, P_POW, P_PRIMARY };

typedef struct unparser {
    mt_sb sb;
    size_t budget; /* characters wanted; the walk stops past it */
} unparser;

static bool full(const unparser *u) { return u->sb.len > u->budget; }

static int binop_prec(mt_tok_kind op) {
    switch (op) {
    case TK_PIPE: return P_BOR;
    case TK_CARET: return P_BXOR;
    case TK_AMP: return P_BAND;
    case TK_LSHIFT: case TK_RSHIFT: return P_SHIFT;
    case TK_PLUS: case TK_MINUS: return P_ADD;
    case TK_DSTAR: return P_POW;
    default: return P_MUL;
    }
}

static int prec(const mt_ast *e) {
    switch (e->kind) {
    case AST_IFEXP: case AST_LAMBDA: return P_IFEXP;
    case AST_BOOLOP: return e->op == TK_OR ? P_OR : P_AND;
    case AST_UNARY: return e->op == TK_NOT ? P_NOT : P_UNARY;
    case AST_COMPARE: return P_CMP;
    case AST_BINOP: return binop_prec(e->op);
    default: return P_PRIMARY;
    }
}

static void expr(unparser *u, const mt_ast *e, int need);

static void list(unparser *u, const mt_ast_list *l) {
    for (int i = 0; i < l->len && !full(u); i++) {
        if (i) mt_sb_puts(&u->sb, ", ");
        expr(u, l->data[i], P_IFEXP);
    }
}

/* the shortest %g text that reads back as the same double, with a '.' or
 * an exponent so that it stays a float literal: 2.0, 0.1, 1e-07 */
static void float_text(unparser *u, double v) {
    char buf[40];
    if (isinf(v) || isnan(v)) {
        mt_sb_puts(&u->sb, isnan(v) ? "nan" : "inf");
        return;
    }
    for (int digits = 1; digits <= 17; digits++) {
        mt_c_snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (mt_c_strtod(buf, NULL) == v) break;
    }
    mt_sb_puts(&u->sb, buf);
    if (!strpbrk(buf, ".e")) mt_sb_puts(&u->sb, ".0");
}

static void string_text(unparser *u, const char *s) {
    mt_sb_putc(&u->sb, '"');
    for (; *s && !full(u); s++) {
        if (*s == '"' || *s == '\\') mt_sb_putc(&u->sb, '\\');
        if (*s == '\n') mt_sb_puts(&u->sb, "\\n");
        else mt_sb_putc(&u->sb, *s);
    }
    mt_sb_putc(&u->sb, '"');
}

static void binop(unparser *u, const mt_ast *e) {
    int p = binop_prec(e->op);
    bool right = e->op == TK_DSTAR; /* a ** b ** c is a ** (b ** c); -x ** 2 is -(x ** 2) */
    expr(u, e->lhs, right ? p + 1 : p);
    mt_sb_printf(&u->sb, " %s ", mt_tok_kind_str(e->op));
    expr(u, e->rhs, right ? P_UNARY : p + 1);
}

static void compare(unparser *u, const mt_ast *e) {
    expr(u, e->lhs, P_CMP + 1);
    for (int i = 0; i < e->items.len && !full(u); i++) {
        bool neg = e->cmp_neg && e->cmp_neg[i];
        const char *op = mt_tok_kind_str(e->cmp_ops[i]);
        if (neg) mt_sb_printf(&u->sb, e->cmp_ops[i] == TK_IS ? " %s not " : " not %s ", op);
        else mt_sb_printf(&u->sb, " %s ", op);
        expr(u, e->items.data[i], P_CMP + 1);
    }
}

static void call(unparser *u, const mt_ast *e) {
    expr(u, e->lhs, P_PRIMARY);
    mt_sb_putc(&u->sb, '(');
    list(u, &e->items);
    for (int i = 0; i < e->kw.len && !full(u); i++) {
        if (i || e->items.len) mt_sb_puts(&u->sb, ", ");
        mt_sb_printf(&u->sb, "%s=", e->kw.data[i]->name);
        expr(u, e->kw.data[i]->lhs, P_IFEXP);
    }
    mt_sb_putc(&u->sb, ')');
}

static void subscript(unparser *u, const mt_ast *e) {
    expr(u, e->lhs, P_PRIMARY);
    mt_sb_putc(&u->sb, '[');
    if (e->rhs->kind == AST_TUPLE && e->rhs->items.len > 0) list(u, &e->rhs->items);
    else expr(u, e->rhs, P_IFEXP);
    mt_sb_putc(&u->sb, ']');
}

static void slice(unparser *u, const mt_ast *e) {
    if (e->lhs) expr(u, e->lhs, P_IFEXP);
    mt_sb_putc(&u->sb, ':');
    if (e->rhs) expr(u, e->rhs, P_IFEXP);
    if (e->cond) {
        mt_sb_putc(&u->sb, ':');
        expr(u, e->cond, P_IFEXP);
    }
}

static void boolop(unparser *u, const mt_ast *e) {
    for (int i = 0; i < e->items.len && !full(u); i++) {
        if (i) mt_sb_puts(&u->sb, e->op == TK_OR ? " or " : " and ");
        expr(u, e->items.data[i], prec(e) + 1);
    }
}

static void ifexp(unparser *u, const mt_ast *e) {
    expr(u, e->lhs, P_OR);
    mt_sb_puts(&u->sb, " if ");
    expr(u, e->cond, P_OR);
    mt_sb_puts(&u->sb, " else ");
    expr(u, e->rhs, P_IFEXP);
}

static void lambda(unparser *u, const mt_ast *e) {
    mt_sb_puts(&u->sb, e->items.len ? "lambda " : "lambda");
    for (int i = 0; i < e->items.len; i++) mt_sb_printf(&u->sb, "%s%s", i ? ", " : "", e->items.data[i]->name);
    mt_sb_puts(&u->sb, ": ");
    expr(u, e->lhs, P_IFEXP);
}

static void atom(unparser *u, const mt_ast *e) {
    switch (e->kind) {
    case AST_NAME: mt_sb_puts(&u->sb, e->name); break;
    case AST_INT: mt_sb_printf(&u->sb, "%lld", (long long)e->ival); break;
    case AST_FLOAT: float_text(u, e->fval); break;
    case AST_STR: string_text(u, e->str); break;
    case AST_BOOL: mt_sb_puts(&u->sb, e->ival ? "True" : "False"); break;
    case AST_NONE: mt_sb_puts(&u->sb, "None"); break;
    case AST_ELLIPSIS: mt_sb_puts(&u->sb, "..."); break;
    case AST_STARRED: mt_sb_putc(&u->sb, '*'); expr(u, e->lhs, P_BOR); break;
    case AST_ATTR: expr(u, e->lhs, P_PRIMARY); mt_sb_printf(&u->sb, ".%s", e->name); break;
    case AST_CALL: call(u, e); break;
    case AST_SUBSCRIPT: subscript(u, e); break;
    case AST_SLICE: slice(u, e); break;
    case AST_LIST: mt_sb_putc(&u->sb, '['); list(u, &e->items); mt_sb_putc(&u->sb, ']'); break;
    case AST_TUPLE:
        mt_sb_putc(&u->sb, '(');
        list(u, &e->items);
        mt_sb_puts(&u->sb, e->items.len == 1 ? ",)" : ")");
        break;
    default: mt_sb_puts(&u->sb, "..."); break; /* dicts, keywords: not in messages */
    }
}

/* e where the context binds at `need`: parenthesized when e binds looser */
static void expr(unparser *u, const mt_ast *e, int need) {
    if (full(u)) return;
    bool paren = prec(e) < need;
    if (paren) mt_sb_putc(&u->sb, '(');
    switch (e->kind) {
    case AST_BINOP: binop(u, e); break;
    case AST_COMPARE: compare(u, e); break;
    case AST_BOOLOP: boolop(u, e); break;
    case AST_IFEXP: ifexp(u, e); break;
    case AST_LAMBDA: lambda(u, e); break;
    case AST_UNARY:
        mt_sb_puts(&u->sb, e->op == TK_NOT ? "not " : mt_tok_kind_str(e->op));
        expr(u, e->lhs, prec(e));
        break;
    default: atom(u, e); break;
    }
    if (paren) mt_sb_putc(&u->sb, ')');
}

const char *mt_ast_unparse(mt_arena *a, const mt_ast *e, size_t max_len) {
    unparser u = {.budget = max_len};
    mt_sb_init(&u.sb, a);
    expr(&u, e, P_IFEXP);
    if (u.sb.len <= max_len) return mt_sb_str(&u.sb);
    /* cut at the budget, then "..." */
    char *s = (char *)mt_sb_str(&u.sb);
    size_t cut = max_len > 3 ? max_len - 3 : 0;
    memcpy(s + cut, "...", 4);
    return s;
}
