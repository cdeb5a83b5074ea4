/*
 * parser.c -- tokens to AST by recursive descent (see parser.h, ast.h and
 * docs/frontend.md).
 *
 * The lexer has already turned the whole source into an array of tokens,
 * ending in TK_EOF, with NEWLINE / INDENT / DEDENT carrying the block
 * structure and brackets already checked for balance. The parser walks that
 * array with one token of lookahead (two in one place: `name =` in a call).
 *
 * There is one function per grammar rule, with the rule in a comment above
 * it, in the style of chibicc. The grammar is Python's, cut down to what a
 * kernel needs but with every Python statement recognized, so that what lies
 * outside the language gets a precise message rather than "invalid syntax".
 * Binary operators from `|` down to `*` are parsed by precedence climbing over
 * one table (binary_prec); the levels above (lambda, if-else, or, and, not,
 * comparisons) and below (unary, `**`, trailers) are rules of their own,
 * which keeps Python's quirks in plain sight: `not` binds looser than `==`,
 * comparisons chain (a < b < c is one COMPARE), and `**` binds tighter than a
 * unary minus on its left but looser than one on its right (-2**-1 is
 * -(2**(-1))).
 *
 * Depth. Every place where the grammar can nest without bound (opening
 * brackets, unary operators, the right side of `**`, the else branch of a
 * conditional expression, indented blocks) goes through enter()/leave(),
 * which count levels against mt_parse_limits.max_depth. So do the links of
 * left-deep chains that the parser builds in a loop -- `a + b + c`, trailers
 * `x.a[0](1)`, `elif` -- because each link nests the tree one level deeper
 * even though the parser does not recurse: the limit bounds the height of
 * the AST, which keeps every recursive walk of it (the printer, the builder)
 * inside the C stack too. A hostile input fails with MT_ERR_LIMIT instead of
 * overflowing the stack. There is no need to undo the count on error:
 * mt_fail longjmps out of the whole parse.
 *
 * Constructs of Python that the language lacks. Statements that start with a
 * keyword (import, from, class, global, nonlocal, del, try, raise, yield,
 * async, await) become AST_UNSUPPORTED nodes named by the keyword;
 * the parser skips the rest of their logical line, and for the compound ones
 * (class, try with its except/else/finally clauses, async) their indented
 * block too. The builder reports them where they are. Expressions that have
 * no node (yield, :=, comprehensions, sets, ** unpacking, annotated
 * assignment) fail right here with MT_ERR_UNSUPPORTED and "... are not
 * supported in minitriton kernels".
 *
 * All nodes live in the arena; the parser allocates nothing else.
 */
#include "frontend/parser.h"

#include <stdbool.h>
#include <string.h>

#include "support/strbuf.h"

#define DEFAULT_MAX_DEPTH 200

typedef struct parser {
    mt_arena *arena;
    mt_token *tok;   /* the token array, ending in TK_EOF */
    int ntok;        /* its length */
    int pos;         /* index of the current token */
    int depth;       /* current nesting, counted by enter() */
    int max_depth;   /* limit on depth */
} parser;

/* ---- tokens ------------------------------------------------------------------ */

static mt_token *peek(parser *p) { return &p->tok[p->pos]; }

static mt_token *peek2(parser *p) {
    return p->pos + 1 < p->ntok ? &p->tok[p->pos + 1] : &p->tok[p->ntok - 1];
}

static bool at(parser *p, mt_tok_kind k) { return p->tok[p->pos].kind == k; }

static mt_token *next(parser *p) {
    mt_token *t = &p->tok[p->pos];
    if (t->kind != TK_EOF) p->pos++;
    return t;
}

static bool accept(parser *p, mt_tok_kind k) {
    if (!at(p, k)) return false;
    next(p);
    return true;
}

/* How a token is named in messages: "')'", "'foo'", "end of line". */
static const char *describe(parser *p, const mt_token *t) {
    switch (t->kind) {
    case TK_NEWLINE: return "end of line";
    case TK_EOF: return "end of file";
    case TK_INDENT: return "an indented block";
    case TK_DEDENT: return "the end of the indented block";
    case TK_STRING: return "a string";
    case TK_NAME:
    case TK_INT:
    case TK_FLOAT:
        if (t->len > 40) return mt_arena_printf(p->arena, "'%.40s...'", t->text);
        return mt_arena_printf(p->arena, "'%.*s'", t->len, t->text);
    default: return mt_arena_printf(p->arena, "'%s'", mt_tok_kind_str(t->kind));
    }
}

static _Noreturn void fail_at(parser *p, const mt_token *t, const char *what) {
    mt_fail(MT_ERR_SYNTAX, t->loc, "%s, found %s", what, describe(p, t));
}

/* Consumes a token of kind k, or fails at the current one with `msg`. */
static mt_token *expect(parser *p, mt_tok_kind k, const char *msg) {
    if (!at(p, k)) mt_fail(MT_ERR_SYNTAX, peek(p)->loc, "%s", msg);
    return next(p);
}

/* Consumes the closer of a bracket opened at `open`; `what` says what else
 * could have come ("',' or ')'"). */
static void expect_closer(parser *p, mt_tok_kind k, const mt_token *open, const char *what) {
    if (accept(p, k)) return;
    mt_token *t = peek(p);
    mt_fail(MT_ERR_SYNTAX, t->loc, "expected %s (to close '%s' at %d:%d), found %s", what,
            mt_tok_kind_str(open->kind), open->loc.line, open->loc.col, describe(p, t));
}

static _Noreturn void unsupported(const mt_token *t, const char *what) {
    mt_fail(MT_ERR_UNSUPPORTED, t->loc, "%s not supported in minitriton kernels", what);
}

/* One level deeper, for the construct that starts at `loc`. */
static void enter(parser *p, mt_loc loc) {
    if (++p->depth > p->max_depth)
        mt_fail(MT_ERR_LIMIT, loc, "nesting too deep (more than %d levels)", p->max_depth);
}

static void leave(parser *p) { p->depth--; }

static mt_ast *new_node(parser *p, mt_ast_kind kind, mt_loc loc) {
    return mt_ast_new(p->arena, kind, loc);
}

static void push(parser *p, mt_ast_list *l, mt_ast *n) { mt_ast_push(p->arena, l, n); }

/* Whether t can begin an expression (to tell a trailing comma from a list). */
static bool starts_expr(const mt_token *t) {
    switch (t->kind) {
    case TK_NAME: case TK_INT: case TK_FLOAT: case TK_STRING: case TK_NONE: case TK_TRUE:
    case TK_FALSE: case TK_ELLIPSIS: case TK_LPAREN: case TK_LBRACKET: case TK_LBRACE:
    case TK_MINUS: case TK_PLUS: case TK_TILDE: case TK_NOT: case TK_LAMBDA: case TK_AWAIT:
    case TK_YIELD: case TK_STAR:
        return true;
    default:
        return false;
    }
}

static mt_ast *test(parser *p);
static mt_ast *expr(parser *p);
static mt_ast *star_or_test(parser *p);
static void stmt(parser *p, mt_ast_list *out);

/* ---- atoms ------------------------------------------------------------------- */

static _Noreturn void comprehension(const mt_token *t) { unsupported(t, "comprehensions are"); }

/* strings: STRING+    (adjacent literals concatenate) */
static mt_ast *strings(parser *p) {
    mt_ast *n = new_node(p, AST_STR, peek(p)->loc);
    if (!at(p, TK_STRING) || peek2(p)->kind != TK_STRING) {
        n->str = next(p)->str;
        return n;
    }
    mt_sb sb;
    mt_sb_init(&sb, p->arena);
    while (at(p, TK_STRING)) mt_sb_puts(&sb, next(p)->str);
    n->str = mt_sb_str(&sb);
    return n;
}

/* paren: '(' ')' | '(' star_or_test ')' | '(' star_or_test (',' star_or_test)* [','] ')' */
static mt_ast *paren(parser *p) {
    mt_token *open = next(p);
    enter(p, open->loc);
    if (accept(p, TK_RPAREN)) {
        leave(p);
        return new_node(p, AST_TUPLE, open->loc);
    }
    mt_ast *first = star_or_test(p);
    if (at(p, TK_FOR)) comprehension(peek(p));
    if (!at(p, TK_COMMA)) {
        expect_closer(p, TK_RPAREN, open, "')'");
        leave(p);
        return first;
    }
    mt_ast *t = new_node(p, AST_TUPLE, open->loc);
    push(p, &t->items, first);
    while (accept(p, TK_COMMA) && !at(p, TK_RPAREN)) push(p, &t->items, star_or_test(p));
    expect_closer(p, TK_RPAREN, open, "',' or ')'");
    leave(p);
    return t;
}

/* list: '[' [star_or_test (',' star_or_test)* [',']] ']' */
static mt_ast *list(parser *p) {
    mt_token *open = next(p);
    enter(p, open->loc);
    mt_ast *l = new_node(p, AST_LIST, open->loc);
    while (!at(p, TK_RBRACKET)) {
        push(p, &l->items, star_or_test(p));
        if (l->items.len == 1 && at(p, TK_FOR)) comprehension(peek(p));
        if (!accept(p, TK_COMMA)) break;
    }
    expect_closer(p, TK_RBRACKET, open, "',' or ']'");
    leave(p);
    return l;
}

/* dict: '{' [test ':' test (',' test ':' test)* [',']] '}' */
static mt_ast *dict(parser *p) {
    mt_token *open = next(p);
    enter(p, open->loc);
    mt_ast *d = new_node(p, AST_DICT, open->loc);
    while (!at(p, TK_RBRACE)) {
        if (at(p, TK_DSTAR)) unsupported(peek(p), "dict unpacking ('**') is");
        push(p, &d->items, test(p));
        if (d->items.len == 1 && at(p, TK_FOR)) comprehension(peek(p));
        if (!at(p, TK_COLON)) {
            if (d->items.len == 1 && (at(p, TK_COMMA) || at(p, TK_RBRACE)))
                mt_fail(MT_ERR_UNSUPPORTED, open->loc,
                        "set literals are not supported in minitriton kernels");
            fail_at(p, peek(p), "expected ':' after dict key");
        }
        next(p);
        push(p, &d->kw, test(p));
        if (d->items.len == 1 && at(p, TK_FOR)) comprehension(peek(p));
        if (!accept(p, TK_COMMA)) break;
    }
    expect_closer(p, TK_RBRACE, open, "',' or '}'");
    leave(p);
    return d;
}

/* atom: NAME | INT | FLOAT | strings | 'None' | 'True' | 'False' | '...'
 *     | paren | list | dict */
static mt_ast *atom(parser *p) {
    mt_token *t = peek(p);
    mt_ast *n;
    switch (t->kind) {
    case TK_NAME:
        n = new_node(p, AST_NAME, t->loc);
        n->name = t->str;
        break;
    case TK_INT:
        n = new_node(p, AST_INT, t->loc);
        n->ival = t->ival;
        break;
    case TK_FLOAT:
        n = new_node(p, AST_FLOAT, t->loc);
        n->fval = t->fval;
        break;
    case TK_STRING:
        return strings(p);
    case TK_NONE:
        n = new_node(p, AST_NONE, t->loc);
        break;
    case TK_TRUE:
    case TK_FALSE:
        n = new_node(p, AST_BOOL, t->loc);
        n->ival = t->kind == TK_TRUE;
        break;
    case TK_ELLIPSIS:
        n = new_node(p, AST_ELLIPSIS, t->loc);
        break;
    case TK_LPAREN:
        return paren(p);
    case TK_LBRACKET:
        return list(p);
    case TK_LBRACE:
        return dict(p);
    case TK_YIELD:
        unsupported(t, "'yield' expressions are");
    case TK_LAMBDA:
        unsupported(t, "lambda expressions are");
    default:
        fail_at(p, t, "expected an expression");
    }
    next(p);
    return n;
}

/* ---- trailers ---------------------------------------------------------------- */

/* arguments: '(' [argument (',' argument)* [',']] ')'
 * argument:  test | NAME '=' test | '*' test */
static void arguments(parser *p, mt_ast *call) {
    mt_token *open = next(p); /* primary() counted the level */
    while (!at(p, TK_RPAREN)) {
        mt_token *start = peek(p);
        if (at(p, TK_DSTAR)) unsupported(start, "'**' arguments are");
        if (at(p, TK_STAR)) {
            next(p);
            mt_ast *s = new_node(p, AST_STARRED, start->loc);
            s->lhs = test(p);
            push(p, &call->items, s);
        } else if (at(p, TK_NAME) && peek2(p)->kind == TK_ASSIGN) {
            mt_ast *k = new_node(p, AST_KEYWORD, start->loc);
            k->name = next(p)->str;
            next(p);
            for (int i = 0; i < call->kw.len; i++)
                if (strcmp(call->kw.data[i]->name, k->name) == 0)
                    mt_fail(MT_ERR_SYNTAX, start->loc, "keyword argument repeated: '%s'", k->name);
            k->lhs = test(p);
            push(p, &call->kw, k);
        } else {
            mt_ast *e = test(p);
            if (at(p, TK_ASSIGN))
                mt_fail(MT_ERR_SYNTAX, start->loc,
                        "expression cannot contain assignment, perhaps you meant \"==\"?");
            if (at(p, TK_FOR)) comprehension(peek(p));
            if (call->kw.len)
                mt_fail(MT_ERR_SYNTAX, start->loc, "positional argument follows keyword argument");
            push(p, &call->items, e);
        }
        if (!accept(p, TK_COMMA)) break;
    }
    expect_closer(p, TK_RPAREN, open, "',' or ')'");
}

/* subscript: test | [test] ':' [test] [':' [test]] */
static mt_ast *subscript(parser *p) {
    mt_token *start = peek(p);
    mt_ast *lower = NULL;
    if (!at(p, TK_COLON)) {
        lower = star_or_test(p);
        if (!at(p, TK_COLON)) return lower;
    }
    next(p);
    mt_ast *s = new_node(p, AST_SLICE, start->loc);
    s->lhs = lower;
    if (!at(p, TK_COLON) && !at(p, TK_COMMA) && !at(p, TK_RBRACKET)) s->rhs = test(p);
    if (accept(p, TK_COLON) && !at(p, TK_COMMA) && !at(p, TK_RBRACKET)) s->cond = test(p);
    return s;
}

/* subscripts: '[' subscript (',' subscript)* [','] ']'
 * One subscript is the index itself; several (or one with a comma) make a
 * TUPLE placed at the first one. */
static mt_ast *subscripts(parser *p, mt_ast *obj) {
    mt_token *open = next(p); /* primary() counted the level */
    mt_ast *n = new_node(p, AST_SUBSCRIPT, open->loc);
    n->lhs = obj;
    mt_token *first = peek(p);
    mt_ast *idx = subscript(p);
    if (at(p, TK_COMMA)) {
        mt_ast *t = new_node(p, AST_TUPLE, first->loc);
        push(p, &t->items, idx);
        while (accept(p, TK_COMMA) && !at(p, TK_RBRACKET)) push(p, &t->items, subscript(p));
        idx = t;
    }
    expect_closer(p, TK_RBRACKET, open, "',' or ']'");
    n->rhs = idx;
    return n;
}

/* primary: atom trailer*
 * trailer: arguments | subscripts | '.' NAME */
static mt_ast *primary(parser *p) {
    if (at(p, TK_AWAIT)) unsupported(peek(p), "'await' expressions are");
    mt_ast *e = atom(p);
    for (int links = 0;; links++) {
        mt_token *t = peek(p);
        if (t->kind == TK_LPAREN || t->kind == TK_LBRACKET || t->kind == TK_DOT)
            enter(p, t->loc); /* each trailer nests what came before */
        if (t->kind == TK_LPAREN) {
            mt_ast *c = new_node(p, AST_CALL, t->loc);
            c->lhs = e;
            arguments(p, c);
            e = c;
        } else if (t->kind == TK_LBRACKET) {
            e = subscripts(p, e);
        } else if (t->kind == TK_DOT) {
            next(p);
            if (!at(p, TK_NAME)) fail_at(p, peek(p), "expected an attribute name after '.'");
            mt_ast *a = new_node(p, AST_ATTR, t->loc);
            a->lhs = e;
            a->name = next(p)->str;
            e = a;
        } else {
            p->depth -= links;
            return e;
        }
    }
}

/* ---- operators --------------------------------------------------------------- */

static mt_ast *factor(parser *p);

/* power: primary ['**' factor] */
static mt_ast *power(parser *p) {
    mt_ast *e = primary(p);
    if (!at(p, TK_DSTAR)) return e;
    mt_token *op = next(p);
    enter(p, op->loc);
    mt_ast *b = new_node(p, AST_BINOP, op->loc);
    b->op = TK_DSTAR;
    b->lhs = e;
    b->rhs = factor(p);
    leave(p);
    return b;
}

/* factor: ('+' | '-' | '~') factor | power */
static mt_ast *factor(parser *p) {
    mt_token *t = peek(p);
    if (t->kind != TK_PLUS && t->kind != TK_MINUS && t->kind != TK_TILDE) return power(p);
    next(p);
    enter(p, t->loc);
    mt_ast *u = new_node(p, AST_UNARY, t->loc);
    u->op = t->kind;
    u->lhs = factor(p);
    leave(p);
    return u;
}

/* Binding power of the binary operators between comparisons and unary
 * operators, loosest first, as in Python; 0 for anything else. */
static int binary_prec(mt_tok_kind k) {
    switch (k) {
    case TK_PIPE: return 1;
    case TK_CARET: return 2;
    case TK_AMP: return 3;
    case TK_LSHIFT: case TK_RSHIFT: return 4;
    case TK_PLUS: case TK_MINUS: return 5;
    case TK_STAR: case TK_SLASH: case TK_DSLASH: case TK_PERCENT: case TK_AT: return 6;
    default: return 0;
    }
}

/* binary: factor (binop factor)*, left associative, by precedence climbing:
 *   expr: xor ('|' xor)*      xor: and ('^' and)*      and: shift ('&' shift)*
 *   shift: arith (('<<'|'>>') arith)*     arith: term (('+'|'-') term)*
 *   term: factor (('*'|'/'|'//'|'%'|'@') factor)* */
static mt_ast *binary(parser *p, int min_prec) {
    mt_ast *lhs = factor(p);
    for (int links = 0;; links++) {
        mt_token *op = peek(p);
        int prec = binary_prec(op->kind);
        if (prec == 0 || prec < min_prec) {
            p->depth -= links;
            return lhs;
        }
        next(p);
        enter(p, op->loc); /* the chain so far becomes a child: one level deeper */
        mt_ast *b = new_node(p, AST_BINOP, op->loc);
        b->op = op->kind;
        b->lhs = lhs;
        b->rhs = binary(p, prec + 1);
        lhs = b;
    }
}

/* expr: binary at the loosest level ('|') */
static mt_ast *expr(parser *p) { return binary(p, 1); }

/* comparison: expr (comp_op expr)*
 * comp_op: '<' | '>' | '==' | '>=' | '<=' | '!=' | 'in' | 'not' 'in' | 'is' | 'is' 'not' */
static mt_ast *comparison(parser *p) {
    mt_ast *e = expr(p);
    mt_ast *c = NULL;
    MT_VEC(mt_tok_kind) ops = {0};
    MT_VEC(uint8_t) negs = {0};
    for (;;) {
        mt_token *t = peek(p);
        mt_tok_kind k = t->kind;
        uint8_t neg = 0;
        switch (k) {
        case TK_LT: case TK_GT: case TK_EQ: case TK_GE: case TK_LE: case TK_NE: case TK_IN:
            next(p);
            break;
        case TK_NOT:
            if (peek2(p)->kind != TK_IN) goto done;
            next(p);
            next(p);
            k = TK_IN;
            neg = 1;
            break;
        case TK_IS:
            next(p);
            neg = accept(p, TK_NOT);
            break;
        default:
            goto done;
        }
        if (!c) {
            c = new_node(p, AST_COMPARE, t->loc);
            c->lhs = e;
        }
        MT_VEC_PUSH(p->arena, &ops, k);
        MT_VEC_PUSH(p->arena, &negs, neg);
        push(p, &c->items, expr(p));
    }
done:
    if (!c) return e;
    c->cmp_ops = ops.data;
    c->cmp_neg = negs.data;
    return c;
}

/* not_test: 'not' not_test | comparison */
static mt_ast *not_test(parser *p) {
    if (!at(p, TK_NOT)) return comparison(p);
    mt_token *t = next(p);
    enter(p, t->loc);
    mt_ast *u = new_node(p, AST_UNARY, t->loc);
    u->op = TK_NOT;
    u->lhs = not_test(p);
    leave(p);
    return u;
}

/* and_test: not_test ('and' not_test)*    or_test: and_test ('or' and_test)*
 * A chain of one operator is one BOOLOP with all its operands. */
static mt_ast *bool_chain(parser *p, mt_tok_kind op) {
    mt_ast *e = op == TK_OR ? bool_chain(p, TK_AND) : not_test(p);
    if (!at(p, op)) return e;
    mt_ast *b = new_node(p, AST_BOOLOP, peek(p)->loc);
    b->op = op;
    push(p, &b->items, e);
    while (accept(p, op)) push(p, &b->items, op == TK_OR ? bool_chain(p, TK_AND) : not_test(p));
    return b;
}

/* lambda: 'lambda' [NAME (',' NAME)*] ':' test   (a schedule's index map;
 * the builders refuse it everywhere else) */
static mt_ast *lambda(parser *p) {
    mt_token *start = next(p);
    mt_ast *n = new_node(p, AST_LAMBDA, start->loc);
    while (!at(p, TK_COLON)) {
        if (n->items.len) expect(p, TK_COMMA, "expected ',' or ':' in the lambda's parameters");
        mt_token *t = expect(p, TK_NAME, "a lambda's parameters are names");
        for (int i = 0; i < n->items.len; i++)
            if (strcmp(n->items.data[i]->name, t->str) == 0)
                mt_fail(MT_ERR_SYNTAX, t->loc, "duplicate parameter '%s' in lambda", t->str);
        mt_ast *param = new_node(p, AST_PARAM, t->loc);
        param->name = t->str;
        push(p, &n->items, param);
    }
    next(p);
    enter(p, start->loc);
    n->lhs = test(p);
    leave(p);
    return n;
}

/* test: or_test ['if' or_test 'else' test] | lambda */
static mt_ast *test(parser *p) {
    mt_token *start = peek(p);
    if (start->kind == TK_LAMBDA) return lambda(p);
    if (start->kind == TK_YIELD) unsupported(start, "'yield' expressions are");
    mt_ast *e = bool_chain(p, TK_OR);
    if (at(p, TK_WALRUS)) unsupported(peek(p), "assignment expressions (':=') are");
    if (!at(p, TK_IF)) return e;
    next(p);
    mt_ast *n = new_node(p, AST_IFEXP, start->loc);
    n->lhs = e;
    n->cond = bool_chain(p, TK_OR);
    mt_token *els = expect(p, TK_ELSE, "expected 'else' after 'if' expression");
    enter(p, els->loc);
    n->rhs = test(p);
    leave(p);
    return n;
}

/* star_or_test: '*' expr | test */
static mt_ast *star_or_test(parser *p) {
    if (!at(p, TK_STAR)) return test(p);
    mt_token *t = next(p);
    mt_ast *s = new_node(p, AST_STARRED, t->loc);
    s->lhs = expr(p);
    return s;
}

/* testlist: star_or_test (',' star_or_test)* [',']
 * exprlist: (expr | '*' expr) (',' (expr | '*' expr))* [',']   (when `targets`)
 * One element without a comma is that element; otherwise a TUPLE. */
static mt_ast *testlist(parser *p, bool targets) {
    mt_token *start = peek(p);
    mt_ast *first;
    if (targets && !at(p, TK_STAR))
        first = expr(p);
    else
        first = star_or_test(p);
    if (!at(p, TK_COMMA)) return first;
    mt_ast *t = new_node(p, AST_TUPLE, start->loc);
    push(p, &t->items, first);
    while (accept(p, TK_COMMA) && starts_expr(peek(p))) {
        if (targets && !at(p, TK_STAR))
            push(p, &t->items, expr(p));
        else
            push(p, &t->items, star_or_test(p));
    }
    return t;
}

/* ---- statements ---------------------------------------------------------------- */

/* A target of `=`, `for` or `as`: a name, attribute or subscript, or a tuple,
 * list or starred of targets. */
static void check_target(parser *p, mt_ast *e) {
    switch (e->kind) {
    case AST_NAME: case AST_ATTR: case AST_SUBSCRIPT:
        return;
    case AST_TUPLE: case AST_LIST:
        for (int i = 0; i < e->items.len; i++) check_target(p, e->items.data[i]);
        return;
    case AST_STARRED:
        check_target(p, e->lhs);
        return;
    default:
        mt_fail(MT_ERR_SYNTAX, e->loc, "invalid assignment target");
    }
}

static bool at_stmt_end(parser *p) { return at(p, TK_NEWLINE) || at(p, TK_SEMI) || at(p, TK_EOF); }

/* Skips to the end of the logical line (leaving the NEWLINE). */
static void skip_line(parser *p) {
    while (!at(p, TK_NEWLINE) && !at(p, TK_EOF)) next(p);
}

/* Skips the rest of a compound statement: its line and its indented block. */
static void skip_block(parser *p) {
    skip_line(p);
    accept(p, TK_NEWLINE);
    if (!accept(p, TK_INDENT)) return;
    for (int level = 1; level > 0 && !at(p, TK_EOF);) {
        mt_token *t = next(p);
        if (t->kind == TK_INDENT) level++;
        if (t->kind == TK_DEDENT) level--;
    }
}

/* unsupported_stmt: ('import' | 'from' | 'global' | ...) <rest of the line>
 *                 | ('class' | 'try' | 'async') <rest of the line> [block]
 *                   {('except' | 'finally' | 'else') <line> [block]}   (try) */
static mt_ast *unsupported_stmt(parser *p) {
    mt_token *t = next(p);
    mt_ast *n = new_node(p, AST_UNSUPPORTED, t->loc);
    n->name = mt_tok_kind_str(t->kind);
    if (t->kind != TK_CLASS && t->kind != TK_TRY && t->kind != TK_ASYNC) {
        skip_line(p);
        return n;
    }
    skip_block(p);
    if (t->kind == TK_TRY)
        while (at(p, TK_EXCEPT) || at(p, TK_FINALLY) || at(p, TK_ELSE)) skip_block(p);
    return n;
}

/* assert_stmt: 'assert' test [',' test] */
static mt_ast *assert_stmt(parser *p) {
    mt_ast *n = new_node(p, AST_ASSERT, next(p)->loc);
    n->cond = test(p);
    if (accept(p, TK_COMMA)) n->rhs = test(p);
    return n;
}

/* return_stmt: 'return' [testlist] */
static mt_ast *return_stmt(parser *p) {
    mt_ast *n = new_node(p, AST_RETURN, next(p)->loc);
    if (!at_stmt_end(p)) n->lhs = testlist(p, false);
    return n;
}

static bool is_augassign(mt_tok_kind k) {
    switch (k) {
    case TK_PLUSEQ: case TK_MINUSEQ: case TK_STAREQ: case TK_SLASHEQ: case TK_DSLASHEQ:
    case TK_PERCENTEQ: case TK_DSTAREQ: case TK_ATEQ: case TK_AMPEQ: case TK_PIPEEQ:
    case TK_CARETEQ: case TK_LSHIFTEQ: case TK_RSHIFTEQ:
        return true;
    default:
        return false;
    }
}

/* expr_stmt: testlist (augassign testlist | ('=' testlist)*)
 * augassign: '+=' | '-=' | '*=' | '/=' | '//=' | '%=' | '**=' | '@=' | '&=' | '|='
 *          | '^=' | '<<=' | '>>=' */
static mt_ast *expr_stmt(parser *p) {
    mt_token *start = peek(p);
    mt_ast *e = testlist(p, false);
    mt_token *t = peek(p);
    if (is_augassign(t->kind)) {
        if (e->kind != AST_NAME && e->kind != AST_ATTR && e->kind != AST_SUBSCRIPT)
            mt_fail(MT_ERR_SYNTAX, e->loc, "invalid augmented assignment target");
        next(p);
        mt_ast *n = new_node(p, AST_AUGASSIGN, start->loc);
        n->op = t->kind;
        n->lhs = e;
        n->rhs = testlist(p, false);
        return n;
    }
    if (t->kind == TK_COLON)
        unsupported(t, "variable annotations are");
    if (t->kind != TK_ASSIGN) {
        mt_ast *n = new_node(p, AST_EXPR_STMT, start->loc);
        n->lhs = e;
        return n;
    }
    mt_ast *n = new_node(p, AST_ASSIGN, start->loc);
    while (accept(p, TK_ASSIGN)) {
        check_target(p, e);
        push(p, &n->items, e);
        e = testlist(p, false);
    }
    n->rhs = e;
    return n;
}

/* small_stmt: 'pass' | 'break' | 'continue' | return_stmt | assert_stmt
 *           | unsupported_stmt | expr_stmt */
static mt_ast *small_stmt(parser *p) {
    mt_token *t = peek(p);
    switch (t->kind) {
    case TK_PASS:
        next(p);
        return new_node(p, AST_PASS, t->loc);
    case TK_BREAK:
        next(p);
        return new_node(p, AST_BREAK, t->loc);
    case TK_CONTINUE:
        next(p);
        return new_node(p, AST_CONTINUE, t->loc);
    case TK_RETURN:
        return return_stmt(p);
    case TK_ASSERT:
        return assert_stmt(p);
    case TK_IMPORT: case TK_FROM: case TK_GLOBAL: case TK_NONLOCAL: case TK_DEL:
    case TK_RAISE: case TK_YIELD: case TK_AWAIT:
        return unsupported_stmt(p);
    default:
        return expr_stmt(p);
    }
}

/* simple_stmts: small_stmt (';' small_stmt)* [';'] NEWLINE */
static void simple_stmts(parser *p, mt_ast_list *out) {
    for (;;) {
        push(p, out, small_stmt(p));
        if (!accept(p, TK_SEMI) || at(p, TK_NEWLINE) || at(p, TK_EOF)) break;
    }
    if (accept(p, TK_NEWLINE) || at(p, TK_EOF)) return;
    fail_at(p, peek(p), "expected end of line after statement");
}

/* suite: simple_stmts | NEWLINE INDENT stmt+ DEDENT
 * `after` names the statement, for "expected an indented block after 'if'". */
static void suite(parser *p, mt_ast_list *out, const char *after) {
    if (!accept(p, TK_NEWLINE)) {
        simple_stmts(p, out);
        return;
    }
    if (!at(p, TK_INDENT))
        mt_fail(MT_ERR_SYNTAX, peek(p)->loc, "expected an indented block after '%s'", after);
    enter(p, next(p)->loc);
    while (!at(p, TK_DEDENT) && !at(p, TK_EOF)) stmt(p, out);
    accept(p, TK_DEDENT);
    leave(p);
}

/* A colon that ends a compound statement's header. */
static void colon(parser *p, const char *msg) { expect(p, TK_COLON, msg); }

/* if_stmt: 'if' test ':' suite ('elif' test ':' suite)* ['else' ':' suite]
 * An elif becomes an AST_IF alone in the orelse of the one before. */
static mt_ast *if_stmt(parser *p) {
    mt_ast *n = new_node(p, AST_IF, next(p)->loc);
    n->cond = test(p);
    colon(p, "expected ':' after 'if' condition");
    suite(p, &n->body, "if");
    mt_ast *last = n;
    int links = 0;
    for (; at(p, TK_ELIF); links++) {
        mt_token *kw = next(p);
        enter(p, kw->loc); /* each elif nests in the orelse of the one before */
        mt_ast *e = new_node(p, AST_IF, kw->loc);
        e->cond = test(p);
        colon(p, "expected ':' after 'elif' condition");
        suite(p, &e->body, "elif");
        push(p, &last->orelse, e);
        last = e;
    }
    if (accept(p, TK_ELSE)) {
        colon(p, "expected ':' after 'else'");
        suite(p, &last->orelse, "else");
    }
    p->depth -= links;
    return n;
}

/* else_clause: ['else' ':' suite]   (of for and while) */
static void else_clause(parser *p, mt_ast *n) {
    if (!accept(p, TK_ELSE)) return;
    colon(p, "expected ':' after 'else'");
    suite(p, &n->orelse, "else");
}

/* while_stmt: 'while' test ':' suite ['else' ':' suite] */
static mt_ast *while_stmt(parser *p) {
    mt_ast *n = new_node(p, AST_WHILE, next(p)->loc);
    n->cond = test(p);
    colon(p, "expected ':' after 'while' condition");
    suite(p, &n->body, "while");
    else_clause(p, n);
    return n;
}

/* for_stmt: 'for' exprlist 'in' testlist ':' suite ['else' ':' suite] */
static mt_ast *for_stmt(parser *p) {
    mt_ast *n = new_node(p, AST_FOR, next(p)->loc);
    n->lhs = testlist(p, true);
    check_target(p, n->lhs);
    if (!at(p, TK_IN)) fail_at(p, peek(p), "expected 'in' after 'for' target");
    next(p);
    n->rhs = testlist(p, false);
    colon(p, "expected ':' after 'for' iterable");
    suite(p, &n->body, "for");
    else_clause(p, n);
    return n;
}

/* Whether the '(' at the current token is closed by a ')' right before a
 * ':', as in `with (a as b, c):` (brackets are balanced: the lexer checked). */
static bool parenthesized_items(parser *p) {
    if (!at(p, TK_LPAREN) || peek2(p)->kind == TK_RPAREN) return false;
    int level = 0;
    for (int i = p->pos; i < p->ntok; i++) {
        mt_tok_kind k = p->tok[i].kind;
        if (k == TK_LPAREN || k == TK_LBRACKET || k == TK_LBRACE) level++;
        if ((k == TK_RPAREN || k == TK_RBRACKET || k == TK_RBRACE) && --level == 0)
            return i + 1 < p->ntok && p->tok[i + 1].kind == TK_COLON;
    }
    return false;
}

/* with_item: test ['as' expr] */
static mt_ast *with_item(parser *p) {
    mt_ast *w = new_node(p, AST_WITHITEM, peek(p)->loc);
    w->lhs = test(p);
    if (accept(p, TK_AS)) {
        w->rhs = expr(p);
        check_target(p, w->rhs);
    }
    return w;
}

/* with_stmt: 'with' '(' with_item (',' with_item)* [','] ')' ':' suite
 *          | 'with' with_item (',' with_item)* ':' suite
 * The first form (Python 3.9+) is taken when the parenthesis closes right
 * before the ':'; `with (a, b) as c:` is the second, with a tuple. */
static mt_ast *with_stmt(parser *p) {
    mt_ast *n = new_node(p, AST_WITH, next(p)->loc);
    if (parenthesized_items(p)) {
        mt_token *open = next(p);
        enter(p, open->loc);
        do push(p, &n->items, with_item(p));
        while (accept(p, TK_COMMA) && !at(p, TK_RPAREN));
        expect_closer(p, TK_RPAREN, open, "',' or ')'");
        leave(p);
    } else {
        do push(p, &n->items, with_item(p));
        while (accept(p, TK_COMMA));
    }
    colon(p, "expected ':' after 'with' items");
    suite(p, &n->body, "with");
    return n;
}

/* param: NAME [':' test] ['=' test] */
static mt_ast *param(parser *p, mt_ast *fn) {
    mt_token *t = peek(p);
    if (t->kind == TK_STAR && peek2(p)->kind != TK_NAME)
        unsupported(t, "keyword-only markers ('*') are");
    if (t->kind == TK_STAR || t->kind == TK_DSTAR)
        unsupported(t, "'*args' and '**kwargs' parameters are");
    if (t->kind == TK_SLASH) unsupported(t, "positional-only markers ('/') are");
    if (t->kind != TK_NAME) fail_at(p, t, "expected a parameter name");
    next(p);
    for (int i = 0; i < fn->items.len; i++)
        if (strcmp(fn->items.data[i]->name, t->str) == 0)
            mt_fail(MT_ERR_SYNTAX, t->loc, "duplicate parameter '%s' in function definition",
                    t->str);
    mt_ast *n = new_node(p, AST_PARAM, t->loc);
    n->name = t->str;
    if (accept(p, TK_COLON)) n->lhs = test(p);
    if (accept(p, TK_ASSIGN)) n->rhs = test(p);
    return n;
}

/* Moves a leading string statement of `body` into *doc. */
static void take_docstring(mt_ast_list *body, const char **doc) {
    if (!body->len) return;
    mt_ast *s = body->data[0];
    if (s->kind != AST_EXPR_STMT || s->lhs->kind != AST_STR) return;
    *doc = s->lhs->str;
    memmove(body->data, body->data + 1, sizeof(mt_ast *) * (size_t)(body->len - 1));
    body->len--;
}

/* funcdef: 'def' NAME '(' [param (',' param)* [',']] ')' ['->' test] ':' suite */
static mt_ast *funcdef(parser *p, mt_ast_list decorators) {
    mt_ast *n = new_node(p, AST_FUNCDEF, next(p)->loc);
    n->kw = decorators;
    if (!at(p, TK_NAME)) fail_at(p, peek(p), "expected a function name after 'def'");
    n->name = next(p)->str;
    if (!at(p, TK_LPAREN)) fail_at(p, peek(p), "expected '(' after the function name");
    mt_token *open = next(p);
    bool seen_default = false;
    while (!at(p, TK_RPAREN)) {
        mt_ast *prm = param(p, n);
        if (prm->rhs)
            seen_default = true;
        else if (seen_default)
            mt_fail(MT_ERR_SYNTAX, prm->loc, "parameter without a default follows parameter with a default");
        push(p, &n->items, prm);
        if (!accept(p, TK_COMMA)) break;
    }
    expect_closer(p, TK_RPAREN, open, "',' or ')'");
    if (accept(p, TK_ARROW)) n->rhs = test(p);
    colon(p, "expected ':' after the function signature");
    suite(p, &n->body, "def");
    take_docstring(&n->body, &n->str);
    return n;
}

/* decorated: ('@' test NEWLINE)+ funcdef */
static void decorated(parser *p, mt_ast_list *out) {
    mt_ast_list decorators = {0};
    while (accept(p, TK_AT)) {
        push(p, &decorators, test(p));
        if (!accept(p, TK_NEWLINE)) fail_at(p, peek(p), "expected end of line after decorator");
    }
    if (at(p, TK_DEF))
        push(p, out, funcdef(p, decorators));
    else if (at(p, TK_CLASS) || at(p, TK_ASYNC))
        push(p, out, unsupported_stmt(p));
    else
        fail_at(p, peek(p), "expected 'def' after decorator");
}

/* stmt: funcdef | decorated | if_stmt | while_stmt | for_stmt | with_stmt
 *     | unsupported_stmt | simple_stmts */
static void stmt(parser *p, mt_ast_list *out) {
    mt_token *t = peek(p);
    switch (t->kind) {
    case TK_DEF: push(p, out, funcdef(p, (mt_ast_list){0})); return;
    case TK_AT: decorated(p, out); return;
    case TK_IF: push(p, out, if_stmt(p)); return;
    case TK_WHILE: push(p, out, while_stmt(p)); return;
    case TK_FOR: push(p, out, for_stmt(p)); return;
    case TK_WITH: push(p, out, with_stmt(p)); return;
    case TK_CLASS: case TK_TRY: case TK_ASYNC:
        push(p, out, unsupported_stmt(p));
        return;
    case TK_INDENT: mt_fail(MT_ERR_SYNTAX, t->loc, "unexpected indent");
    case TK_DEDENT: mt_fail(MT_ERR_SYNTAX, t->loc, "unexpected dedent");
    case TK_ELIF: mt_fail(MT_ERR_SYNTAX, t->loc, "'elif' without a matching 'if'");
    case TK_ELSE: mt_fail(MT_ERR_SYNTAX, t->loc, "'else' without a matching 'if', 'for' or 'while'");
    case TK_EXCEPT:
    case TK_FINALLY:
        mt_fail(MT_ERR_SYNTAX, t->loc, "'%s' without a matching 'try'", mt_tok_kind_str(t->kind));
    default: simple_stmts(p, out); return;
    }
}

/* module: stmt* EOF */
mt_ast *mt_parse(mt_arena *a, const char *src, size_t len, const mt_parse_limits *lim) {
    parser p = {0};
    p.arena = a;
    p.tok = mt_lex(a, src, len, lim ? &lim->lex : NULL, &p.ntok);
    p.max_depth = lim && lim->max_depth > 0 ? lim->max_depth : DEFAULT_MAX_DEPTH;
    mt_ast *m = mt_ast_new(a, AST_MODULE, mt_loc_make(1, 1));
    while (!at(&p, TK_EOF)) {
        if (accept(&p, TK_NEWLINE)) continue;
        stmt(&p, &m->body);
    }
    take_docstring(&m->body, &m->str);
    return m;
}
