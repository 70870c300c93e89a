/* lexer.h: a line of input as tokens. */
#ifndef LEXER_H
#define LEXER_H

#include "calc.h"

enum token_kind {
    TOKEN_END,
    TOKEN_NUMBER,
    TOKEN_NAME,
    TOKEN_PLUS,
    TOKEN_MINUS,
    TOKEN_STAR,
    TOKEN_SLASH,
    TOKEN_PERCENT,
    TOKEN_CARET,
    TOKEN_LPAREN,
    TOKEN_RPAREN,
    TOKEN_COMMA,
    TOKEN_ASSIGN,
};

struct token {
    enum token_kind kind;
    int column; /* 1-based */
    calc_value number;
    char name[CALC_NAME_MAX];
};

struct lexer {
    const char *text;
    int position;
};

void lexer_init(struct lexer *lexer, const char *text);

/* Reads the next token; a '#' ends the line as its end does. Returns 0
 * with *error set on a character that starts no token. */
int lexer_next(struct lexer *lexer, struct token *token, struct calc_error *error);

/* How an error message names a kind of token: "')'", "a number". */
const char *token_describe(enum token_kind kind);

#endif
