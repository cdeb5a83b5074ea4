/*
 * ast.h -- the syntax tree of a kernel source.
 *
 * One node struct for every kind (as in chibicc): each kind uses the fields
 * listed beside it below and leaves the others zero. Lists are arena arrays.
 * The tree is what was written: no names are resolved here (that is the
 * builder's job, graph/builder.c), so every Python construct the parser knows
 * gets a node, and later stages report what they do not support.
 *
 *   kind            fields used
 *   --------------- ------------------------------------------------------------
 *   AST_MODULE      body: the top-level statements; str: module docstring or NULL
 *   AST_FUNCDEF     name; items: AST_PARAM list; kw: decorators (expressions);
 *                   body; rhs: return annotation or NULL; str: docstring or NULL
 *   AST_PARAM       name; lhs: annotation or NULL; rhs: default value or NULL
 *   AST_ASSIGN      items: targets (a = b = c has two), rhs: value
 *   AST_AUGASSIGN   op: TK_PLUSEQ..; lhs: target; rhs: value
 *   AST_RETURN      lhs: value or NULL (a tuple for `return a, b`)
 *   AST_PASS, AST_BREAK, AST_CONTINUE   (nothing)
 *   AST_EXPR_STMT   lhs: the expression (a docstring is not one: see FUNCDEF, MODULE)
 *   AST_IF          cond; body; orelse (elif chains nest an AST_IF in orelse)
 *   AST_FOR         lhs: target; rhs: iterable; body; orelse
 *   AST_WHILE       cond; body; orelse
 *   AST_WITH        items: AST_WITHITEM list; body
 *   AST_WITHITEM    lhs: context expression; rhs: `as` target or NULL
 *   AST_ASSERT      cond; rhs: message or NULL
 *   AST_UNSUPPORTED name: the keyword (import, class, ...) of a statement the
 *                   language does not have; the parser skips its line
 *   -- expressions --
 *   AST_NAME        name
 *   AST_INT         ival
 *   AST_FLOAT       fval
 *   AST_STR         str (decoded; adjacent literals concatenated)
 *   AST_BOOL        ival (0 or 1)
 *   AST_NONE        (nothing)
 *   AST_BINOP       op: TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_DSLASH,
 *                   TK_PERCENT, TK_DSTAR, TK_AT, TK_LSHIFT, TK_RSHIFT, TK_AMP,
 *                   TK_PIPE, TK_CARET; lhs; rhs
 *   AST_UNARY       op: TK_MINUS, TK_PLUS, TK_NOT, TK_TILDE; lhs: operand
 *   AST_BOOLOP      op: TK_AND or TK_OR; items: operands (>= 2)
 *   AST_COMPARE     lhs: first operand; items: the other operands; cmp_ops:
 *                   one operator per item (TK_LT TK_LE TK_GT TK_GE TK_EQ TK_NE
 *                   TK_IN TK_IS); cmp_neg[i] = 1 for `not in` and `is not`
 *   AST_IFEXP       cond; lhs: value if true; rhs: value if false
 *   AST_CALL        lhs: callee; items: positional args; kw: AST_KEYWORD list
 *   AST_KEYWORD     name; lhs: value
 *   AST_ATTR        lhs: object; name: attribute
 *   AST_SUBSCRIPT   lhs: object; rhs: index (a TUPLE for x[a, b])
 *   AST_SLICE       lhs: lower, rhs: upper, cond: step (each may be NULL)
 *   AST_TUPLE       items (parenthesized or not)
 *   AST_LIST        items
 *   AST_DICT        items: keys; kw: values (same length)
 *   AST_STARRED     lhs: operand (*x)
 *   AST_ELLIPSIS    (nothing): the literal `...`, as in x[..., 0]
 *   AST_LAMBDA      items: AST_PARAM list (names only); lhs: the body. The
 *                   language takes it only as a schedule's index map
 *                   (sch.transform_layout); everywhere else it is refused
 *
 * loc is the node's first token, except AST_BINOP, AST_COMPARE and AST_BOOLOP,
 * whose loc is their (first) operator, and AST_CALL / AST_SUBSCRIPT / AST_ATTR,
 * whose loc is the '(' / '[' / '.', which is where errors about them point.
 */
#ifndef MT_FRONTEND_AST_H
#define MT_FRONTEND_AST_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "frontend/token.h"
#include "support/arena.h"

#define MT_AST_LIST(X)                                                        \
    X(AST_MODULE) X(AST_FUNCDEF) X(AST_PARAM) X(AST_ASSIGN) X(AST_AUGASSIGN)  \
    X(AST_RETURN) X(AST_PASS) X(AST_BREAK) X(AST_CONTINUE) X(AST_EXPR_STMT)   \
    X(AST_IF) X(AST_FOR) X(AST_WHILE) X(AST_WITH) X(AST_WITHITEM)             \
    X(AST_ASSERT) X(AST_UNSUPPORTED)                                          \
    X(AST_NAME) X(AST_INT) X(AST_FLOAT) X(AST_STR) X(AST_BOOL) X(AST_NONE)    \
    X(AST_BINOP) X(AST_UNARY) X(AST_BOOLOP) X(AST_COMPARE) X(AST_IFEXP)       \
    X(AST_CALL) X(AST_KEYWORD) X(AST_ATTR) X(AST_SUBSCRIPT) X(AST_SLICE)      \
    X(AST_TUPLE) X(AST_LIST) X(AST_DICT) X(AST_STARRED) X(AST_ELLIPSIS)      \
    X(AST_LAMBDA)

typedef enum mt_ast_kind {
#define MT_X_(k) k,
    MT_AST_LIST(MT_X_)
#undef MT_X_
    AST_COUNT_
} mt_ast_kind;

typedef struct mt_ast mt_ast;

typedef struct mt_ast_list {
    mt_ast **data;
    int len, cap;
} mt_ast_list;

struct mt_ast {
    mt_ast_kind kind;
    mt_loc loc;
    mt_tok_kind op;        /* operator, see table */
    const char *name;      /* identifier, attribute, keyword or function name */
    const char *str;       /* string literal value; FUNCDEF / MODULE docstring */
    int64_t ival;          /* INT, BOOL */
    double fval;           /* FLOAT */
    mt_ast *lhs, *rhs, *cond;
    mt_ast_list items;     /* args, elements, operands, params, targets */
    mt_ast_list kw;        /* keywords, decorators, dict values */
    mt_ast_list body;      /* statement bodies */
    mt_ast_list orelse;    /* else branches */
    mt_tok_kind *cmp_ops;  /* COMPARE: one per item */
    uint8_t *cmp_neg;      /* COMPARE: 1 where the operator is `is not` */
};

const char *mt_ast_kind_str(mt_ast_kind k);

/* Is decorator d `@T.<name>` or `@T.<name>(...)`? Does def carry one?
 * (Inline: the TIR parser uses them without linking the frontend.) */
static inline bool mt_ast_is_decorator(const mt_ast *d, const char *name) {
    if (d->kind == AST_CALL) d = d->lhs;
    return d->kind == AST_ATTR && strcmp(d->name, name) == 0 && d->lhs->kind == AST_NAME &&
           strcmp(d->lhs->name, "T") == 0;
}

static inline bool mt_ast_has_decorator(const mt_ast *def, const char *name) {
    for (int i = 0; i < def->kw.len; i++)
        if (mt_ast_is_decorator(def->kw.data[i], name)) return true;
    return false;
}

/* def's decorator `@T.<name>...` (the first), or NULL. */
static inline const mt_ast *mt_ast_decorator(const mt_ast *def, const char *name) {
    for (int i = 0; i < def->kw.len; i++)
        if (mt_ast_is_decorator(def->kw.data[i], name)) return def->kw.data[i];
    return NULL;
}

/* The one argument of def's `@T.<name>(arg)`, or NULL (no such decorator,
 * or not called with exactly one positional argument). */
static inline const mt_ast *mt_ast_decorator_arg(const mt_ast *def, const char *name) {
    const mt_ast *d = mt_ast_decorator(def, name);
    return d && d->kind == AST_CALL && d->items.len == 1 && !d->kw.len ? d->items.data[0] : NULL;
} /* "AST_BINOP" -> "BinOp"-style name */
mt_ast *mt_ast_new(mt_arena *a, mt_ast_kind kind, mt_loc loc);
void mt_ast_push(mt_arena *a, mt_ast_list *l, mt_ast *n);

/* An indented tree, one node per line with its place, two spaces per level:
 *   Module
 *     FunctionDef add @1:1
 *       Param a @1:9
 *         Call @1:18
 *           Name Tensor @1:12
 *           ...
 *       Assign @2:5
 *         Name out @2:5
 *         BinOp + @2:13 ...
 * A line is "Kind [detail] @line:col"; a few label lines without a place
 * ("decorators:", "returns:", "default:", "else:", "doc ...", "<none>")
 * separate children that could otherwise be confused. The full format is in
 * docs/frontend.md. Stable text: golden tests compare it. */
const char *mt_ast_print(mt_arena *a, const mt_ast *module);

/* The expression e as source text ("a * 2.0", "softmax(x - m, axis=-1)"),
 * with the parentheses its precedence needs; cut to max_len characters
 * ending in "..." when longer. For messages about values without a name
 * (unparse.c). */
const char *mt_ast_unparse(mt_arena *a, const mt_ast *e, size_t max_len);

#endif
