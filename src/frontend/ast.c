/*
 * ast.c -- AST node construction and the AST printer (see ast.h).
 *
 * The printer writes one node per line, indented two spaces per level of
 * nesting, as "Kind [detail] @line:col". Children come in a fixed order per
 * kind (the order of the fields in ast.h's table). Where two children could
 * be confused -- a decorator and a return annotation are both expressions, a
 * default and an annotation too, and the body of an `if` is followed by an
 * optional `else` list -- a label line without a place introduces the second
 * group: "decorators:", "returns:", "default:", "else:". A docstring prints
 * as a `doc "..."` line. A slice prints "<none>" for an absent bound that is
 * followed by a present one, so x[:3] and x[3:] differ. Strings print with C
 * escapes inside double quotes; floats print as the shortest %g form that
 * reads back to the same double, always with a '.' or an exponent.
 *
 * The format is stable: golden tests compare it, and docs/frontend.md
 * describes every line.
 */
#include "frontend/ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/cnum.h"
#include "support/strbuf.h"

static const char *const kind_names[] = {
    [AST_MODULE] = "Module",       [AST_FUNCDEF] = "FunctionDef", [AST_PARAM] = "Param",
    [AST_ASSIGN] = "Assign",       [AST_AUGASSIGN] = "AugAssign", [AST_RETURN] = "Return",
    [AST_PASS] = "Pass",           [AST_BREAK] = "Break",         [AST_CONTINUE] = "Continue",
    [AST_EXPR_STMT] = "Expr",      [AST_IF] = "If",               [AST_FOR] = "For",
    [AST_WHILE] = "While",         [AST_WITH] = "With",           [AST_WITHITEM] = "WithItem",
    [AST_ASSERT] = "Assert",       [AST_UNSUPPORTED] = "Unsupported",
    [AST_NAME] = "Name",           [AST_INT] = "Int",             [AST_FLOAT] = "Float",
    [AST_STR] = "Str",             [AST_BOOL] = "Bool",           [AST_NONE] = "None",
    [AST_BINOP] = "BinOp",         [AST_UNARY] = "UnaryOp",       [AST_BOOLOP] = "BoolOp",
    [AST_COMPARE] = "Compare",     [AST_IFEXP] = "IfExp",         [AST_CALL] = "Call",
    [AST_KEYWORD] = "Keyword",     [AST_ATTR] = "Attribute",      [AST_SUBSCRIPT] = "Subscript",
    [AST_SLICE] = "Slice",         [AST_TUPLE] = "Tuple",         [AST_LIST] = "List",
    [AST_DICT] = "Dict",           [AST_STARRED] = "Starred",     [AST_ELLIPSIS] = "Ellipsis",
    [AST_LAMBDA] = "Lambda",
};
_Static_assert(sizeof kind_names / sizeof kind_names[0] == AST_COUNT_,
               "every AST kind needs a printed name");

const char *mt_ast_kind_str(mt_ast_kind k) {
    if ((unsigned)k >= (unsigned)AST_COUNT_ || !kind_names[k]) return "?";
    return kind_names[k];
}

mt_ast *mt_ast_new(mt_arena *a, mt_ast_kind kind, mt_loc loc) {
    mt_ast *n = MT_NEW(a, mt_ast);
    n->kind = kind;
    n->loc = loc;
    return n;
}

void mt_ast_push(mt_arena *a, mt_ast_list *l, mt_ast *n) { MT_VEC_PUSH(a, l, n); }

/* ---- printing ---------------------------------------------------------------- */

static void put_quoted(mt_sb *sb, const char *s) {
    mt_sb_putc(sb, '"');
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '\n': mt_sb_puts(sb, "\\n"); break;
        case '\t': mt_sb_puts(sb, "\\t"); break;
        case '\r': mt_sb_puts(sb, "\\r"); break;
        case '\\': mt_sb_puts(sb, "\\\\"); break;
        case '"': mt_sb_puts(sb, "\\\""); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                mt_sb_printf(sb, "\\x%02x", *p);
            else
                mt_sb_putc(sb, (char)*p);
        }
    }
    mt_sb_putc(sb, '"');
}

/* Shortest %g text that reads back as v; '.' as the decimal point whatever
 * the host's locale, and a ".0" where it would otherwise look like an int. */
static void put_float(mt_sb *sb, double v) {
    char buf[64];
    for (int prec = 15; prec <= 17; prec++) {
        mt_c_snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (mt_c_strtod(buf, NULL) == v) break;
    }
    for (char *p = buf; *p; p++)
        if (*p == ',') *p = '.';
    mt_sb_puts(sb, buf);
    if (!strpbrk(buf, ".eninf")) mt_sb_puts(sb, ".0");
}

static const char *cmp_str(mt_tok_kind op, int neg) {
    if (op == TK_IN) return neg ? "not in" : "in";
    if (op == TK_IS) return neg ? "is not" : "is";
    return mt_tok_kind_str(op);
}

static void print_node(mt_sb *sb, const mt_ast *n, int depth);

static void label(mt_sb *sb, const char *text, int depth) {
    mt_sb_indent(sb, 2 * depth);
    mt_sb_puts(sb, text);
    mt_sb_putc(sb, '\n');
}

static void print_list(mt_sb *sb, const mt_ast_list *l, int depth) {
    for (int i = 0; i < l->len; i++) print_node(sb, l->data[i], depth);
}

static void print_opt(mt_sb *sb, const mt_ast *n, int depth) {
    if (n) print_node(sb, n, depth);
}

static void print_doc(mt_sb *sb, const char *doc, int depth) {
    if (!doc) return;
    mt_sb_indent(sb, 2 * depth);
    mt_sb_puts(sb, "doc ");
    put_quoted(sb, doc);
    mt_sb_putc(sb, '\n');
}

static void print_orelse(mt_sb *sb, const mt_ast *n, int depth) {
    if (!n->orelse.len) return;
    label(sb, "else:", depth);
    print_list(sb, &n->orelse, depth + 1);
}

/* The header line: kind, detail, place. */
static void print_head(mt_sb *sb, const mt_ast *n) {
    mt_sb_puts(sb, mt_ast_kind_str(n->kind));
    switch (n->kind) {
    case AST_FUNCDEF: case AST_PARAM: case AST_UNSUPPORTED: case AST_NAME:
    case AST_KEYWORD: case AST_ATTR:
        mt_sb_printf(sb, " %s", n->name ? n->name : "?");
        break;
    case AST_AUGASSIGN: case AST_BINOP: case AST_UNARY: case AST_BOOLOP:
        mt_sb_printf(sb, " %s", mt_tok_kind_str(n->op));
        break;
    case AST_INT:
        mt_sb_printf(sb, " %lld", (long long)n->ival);
        break;
    case AST_FLOAT:
        mt_sb_putc(sb, ' ');
        put_float(sb, n->fval);
        break;
    case AST_STR:
        mt_sb_putc(sb, ' ');
        put_quoted(sb, n->str);
        break;
    case AST_BOOL:
        mt_sb_puts(sb, n->ival ? " True" : " False");
        break;
    case AST_COMPARE:
        for (int i = 0; i < n->items.len; i++)
            mt_sb_printf(sb, " %s", cmp_str(n->cmp_ops ? n->cmp_ops[i] : TK_EQ,
                                             n->cmp_neg ? n->cmp_neg[i] : 0));
        break;
    default:
        break;
    }
    if (n->kind != AST_MODULE) mt_sb_printf(sb, " @%d:%d", n->loc.line, n->loc.col);
    mt_sb_putc(sb, '\n');
}

static void print_node(mt_sb *sb, const mt_ast *n, int depth) {
    mt_sb_indent(sb, 2 * depth);
    print_head(sb, n);
    int d = depth + 1;
    switch (n->kind) {
    case AST_MODULE:
        print_doc(sb, n->str, d);
        print_list(sb, &n->body, d);
        break;
    case AST_FUNCDEF:
        if (n->kw.len) {
            label(sb, "decorators:", d);
            print_list(sb, &n->kw, d + 1);
        }
        print_list(sb, &n->items, d);
        if (n->rhs) {
            label(sb, "returns:", d);
            print_node(sb, n->rhs, d + 1);
        }
        print_doc(sb, n->str, d);
        print_list(sb, &n->body, d);
        break;
    case AST_PARAM:
        print_opt(sb, n->lhs, d);
        if (n->rhs) {
            label(sb, "default:", d);
            print_node(sb, n->rhs, d + 1);
        }
        break;
    case AST_ASSIGN:
        print_list(sb, &n->items, d);
        print_opt(sb, n->rhs, d);
        break;
    case AST_IF:
    case AST_WHILE:
        print_opt(sb, n->cond, d);
        print_list(sb, &n->body, d);
        print_orelse(sb, n, d);
        break;
    case AST_FOR:
        print_opt(sb, n->lhs, d);
        print_opt(sb, n->rhs, d);
        print_list(sb, &n->body, d);
        print_orelse(sb, n, d);
        break;
    case AST_WITH:
        print_list(sb, &n->items, d);
        print_list(sb, &n->body, d);
        break;
    case AST_ASSERT:
        print_opt(sb, n->cond, d);
        print_opt(sb, n->rhs, d);
        break;
    case AST_IFEXP:
        print_opt(sb, n->cond, d);
        print_opt(sb, n->lhs, d);
        print_opt(sb, n->rhs, d);
        break;
    case AST_CALL:
        print_opt(sb, n->lhs, d);
        print_list(sb, &n->items, d);
        print_list(sb, &n->kw, d);
        break;
    case AST_COMPARE:
        print_opt(sb, n->lhs, d);
        print_list(sb, &n->items, d);
        break;
    case AST_SLICE: {
        const mt_ast *parts[3] = {n->lhs, n->rhs, n->cond};
        int last = 2;
        while (last >= 0 && !parts[last]) last--;
        for (int i = 0; i <= last; i++) {
            if (parts[i])
                print_node(sb, parts[i], d);
            else
                label(sb, "<none>", d);
        }
        break;
    }
    case AST_DICT:
        for (int i = 0; i < n->items.len; i++) {
            print_node(sb, n->items.data[i], d);
            if (i < n->kw.len) print_node(sb, n->kw.data[i], d);
        }
        break;
    case AST_LAMBDA:
        print_list(sb, &n->items, d);
        print_opt(sb, n->lhs, d);
        break;
    default: /* the generic order: lhs, rhs, items, body */
        print_opt(sb, n->lhs, d);
        print_opt(sb, n->rhs, d);
        print_list(sb, &n->items, d);
        print_list(sb, &n->body, d);
        break;
    }
}

const char *mt_ast_print(mt_arena *a, const mt_ast *module) {
    mt_sb sb;
    mt_sb_init(&sb, a);
    if (module) print_node(&sb, module, 0);
    return mt_sb_str(&sb);
}
