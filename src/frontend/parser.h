/*
 * parser.h -- tokens to AST, by recursive descent.
 */
#ifndef MT_FRONTEND_PARSER_H
#define MT_FRONTEND_PARSER_H

#include <stddef.h>

#include "frontend/ast.h"
#include "frontend/lexer.h"

typedef struct mt_parse_limits {
    mt_lex_limits lex;
    int max_depth; /* nesting of expressions/statements; 0 = default (200) */
} mt_parse_limits;

/* Parses a whole source into an AST_MODULE. Errors go through mt_fail with
 * the place they were found. lim may be NULL. */
mt_ast *mt_parse(mt_arena *a, const char *src, size_t len, const mt_parse_limits *lim);

#endif
