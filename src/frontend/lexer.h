/*
 * lexer.h -- source text to tokens.
 */
#ifndef MT_FRONTEND_LEXER_H
#define MT_FRONTEND_LEXER_H

#include <stddef.h>

#include "frontend/token.h"
#include "support/arena.h"

typedef struct mt_lex_limits {
    size_t max_source_bytes; /* 0 = default (16 MiB) */
    int max_tokens;          /* 0 = default (1,000,000) */
    int max_indent_depth;    /* 0 = default (100) */
} mt_lex_limits;

/* Tokenizes src[0..len). Returns an arena array ending with TK_EOF; *ntok gets
 * its length (including EOF). Errors go through mt_fail (MT_ERR_SYNTAX, or
 * MT_ERR_LIMIT for the limits). lim may be NULL. */
mt_token *mt_lex(mt_arena *a, const char *src, size_t len, const mt_lex_limits *lim, int *ntok);

#endif
