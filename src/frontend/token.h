/*
 * token.h -- token kinds of the kernel language (a Python subset).
 *
 * Keywords are every Python keyword, so that a Python keyword used as a name
 * is reported as such even when minitriton does not support the construct.
 */
#ifndef MT_FRONTEND_TOKEN_H
#define MT_FRONTEND_TOKEN_H

#include <stdint.h>

#include "support/diag.h"

/* X(kind, spelling) */
#define MT_TOKEN_LIST(X)                                                     \
    X(TK_EOF, "end of file") X(TK_NEWLINE, "newline") X(TK_INDENT, "indent") \
    X(TK_DEDENT, "dedent") X(TK_NAME, "name") X(TK_INT, "integer")           \
    X(TK_FLOAT, "float") X(TK_STRING, "string")                              \
    /* keywords */                                                           \
    X(TK_DEF, "def") X(TK_RETURN, "return") X(TK_IF, "if") X(TK_ELIF, "elif") \
    X(TK_ELSE, "else") X(TK_FOR, "for") X(TK_IN, "in") X(TK_WHILE, "while")  \
    X(TK_WITH, "with") X(TK_AS, "as") X(TK_PASS, "pass") X(TK_AND, "and")    \
    X(TK_OR, "or") X(TK_NOT, "not") X(TK_IS, "is") X(TK_NONE, "None")        \
    X(TK_TRUE, "True") X(TK_FALSE, "False") X(TK_ASSERT, "assert")           \
    X(TK_BREAK, "break") X(TK_CONTINUE, "continue") X(TK_LAMBDA, "lambda")   \
    X(TK_IMPORT, "import") X(TK_FROM, "from") X(TK_CLASS, "class")           \
    X(TK_GLOBAL, "global") X(TK_NONLOCAL, "nonlocal") X(TK_YIELD, "yield")   \
    X(TK_DEL, "del") X(TK_TRY, "try") X(TK_EXCEPT, "except")                 \
    X(TK_FINALLY, "finally") X(TK_RAISE, "raise") X(TK_ASYNC, "async")       \
    X(TK_AWAIT, "await")                                                     \
    /* operators and delimiters */                                           \
    X(TK_PLUS, "+") X(TK_MINUS, "-") X(TK_STAR, "*") X(TK_SLASH, "/")        \
    X(TK_DSLASH, "//") X(TK_PERCENT, "%") X(TK_DSTAR, "**") X(TK_AT, "@")    \
    X(TK_LSHIFT, "<<") X(TK_RSHIFT, ">>") X(TK_AMP, "&") X(TK_PIPE, "|")     \
    X(TK_CARET, "^") X(TK_TILDE, "~") X(TK_LT, "<") X(TK_GT, ">")            \
    X(TK_LE, "<=") X(TK_GE, ">=") X(TK_EQ, "==") X(TK_NE, "!=")              \
    X(TK_ASSIGN, "=") X(TK_PLUSEQ, "+=") X(TK_MINUSEQ, "-=")                 \
    X(TK_STAREQ, "*=") X(TK_SLASHEQ, "/=") X(TK_DSLASHEQ, "//=")             \
    X(TK_PERCENTEQ, "%=") X(TK_DSTAREQ, "**=") X(TK_ATEQ, "@=")              \
    X(TK_AMPEQ, "&=") X(TK_PIPEEQ, "|=") X(TK_CARETEQ, "^=")                 \
    X(TK_LSHIFTEQ, "<<=") X(TK_RSHIFTEQ, ">>=") X(TK_WALRUS, ":=")           \
    X(TK_LPAREN, "(") X(TK_RPAREN, ")") X(TK_LBRACKET, "[")                  \
    X(TK_RBRACKET, "]") X(TK_LBRACE, "{") X(TK_RBRACE, "}") X(TK_COMMA, ",") \
    X(TK_COLON, ":") X(TK_DOT, ".") X(TK_SEMI, ";") X(TK_ARROW, "->")        \
    X(TK_ELLIPSIS, "...")

typedef enum mt_tok_kind {
#define MT_X_(k, s) k,
    MT_TOKEN_LIST(MT_X_)
#undef MT_X_
    TK_COUNT_
} mt_tok_kind;

const char *mt_tok_kind_str(mt_tok_kind k); /* "+", "def", "name", ... */

typedef struct mt_token {
    mt_tok_kind kind;
    mt_loc loc;        /* where the token starts */
    const char *text;  /* points into the source */
    int len;           /* bytes of source text */
    int64_t ival;      /* TK_INT value */
    double fval;       /* TK_FLOAT value */
    const char *str;   /* TK_NAME: the name; TK_STRING: the decoded value (arena) */
} mt_token;

#endif
