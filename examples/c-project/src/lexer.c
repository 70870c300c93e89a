#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lexer.h"

void lexer_init(struct lexer *lexer, const char *text)
{
    lexer->text = text;
    lexer->position = 0;
}

static int is_name_start(char c)
{
    return isalpha((unsigned char)c) || c == '_';
}

static int lex_name(struct lexer *lexer, struct token *token, struct calc_error *error)
{
    const char *start = lexer->text + lexer->position;
    size_t length = 0;
    while (is_name_start(start[length]) || isdigit((unsigned char)start[length]))
        length++;
    lexer->position += (int)length;
    if (length >= CALC_NAME_MAX)
        return calc_fail(error, token->column, "name longer than %d characters", CALC_NAME_MAX - 1);
    memcpy(token->name, start, length);
    token->name[length] = '\0';
    token->kind = TOKEN_NAME;
    return 1;
}

static int lex_number(struct lexer *lexer, struct token *token, struct calc_error *error)
{
    const char *start = lexer->text + lexer->position;
    char *end;
    token->number = strtod(start, &end);
    lexer->position += (int)(end - start);
    /* "2x" is more likely a missing '*' than two tokens. */
    if (is_name_start(*end))
        return calc_fail(error, token->column, "a number cannot be followed by a name; write '*' between them");
    token->kind = TOKEN_NUMBER;
    return 1;
}

int lexer_next(struct lexer *lexer, struct token *token, struct calc_error *error)
{
    const char *text = lexer->text;
    while (text[lexer->position] == ' ' || text[lexer->position] == '\t')
        lexer->position++;
    token->column = lexer->position + 1;
    char c = text[lexer->position];
    if (c == '\0' || c == '#') {
        token->kind = TOKEN_END;
        return 1;
    }
    if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)text[lexer->position + 1])))
        return lex_number(lexer, token, error);
    if (is_name_start(c))
        return lex_name(lexer, token, error);
    static const struct { char c; enum token_kind kind; } symbols[] = {
        {'+', TOKEN_PLUS},   {'-', TOKEN_MINUS},  {'*', TOKEN_STAR},  {'/', TOKEN_SLASH},
        {'%', TOKEN_PERCENT}, {'^', TOKEN_CARET}, {'(', TOKEN_LPAREN}, {')', TOKEN_RPAREN},
        {',', TOKEN_COMMA},  {'=', TOKEN_ASSIGN},
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        if (symbols[i].c == c) {
            lexer->position++;
            token->kind = symbols[i].kind;
            return 1;
        }
    }
    if (isprint((unsigned char)c))
        return calc_fail(error, token->column, "unexpected character '%c'", c);
    return calc_fail(error, token->column, "unexpected byte 0x%02x", (unsigned char)c);
}

const char *token_describe(enum token_kind kind)
{
    switch (kind) {
    case TOKEN_END: return "the end of the line";
    case TOKEN_NUMBER: return "a number";
    case TOKEN_NAME: return "a name";
    case TOKEN_PLUS: return "'+'";
    case TOKEN_MINUS: return "'-'";
    case TOKEN_STAR: return "'*'";
    case TOKEN_SLASH: return "'/'";
    case TOKEN_PERCENT: return "'%'";
    case TOKEN_CARET: return "'^'";
    case TOKEN_LPAREN: return "'('";
    case TOKEN_RPAREN: return "')'";
    case TOKEN_COMMA: return "','";
    case TOKEN_ASSIGN: return "'='";
    }
    return "a token";
}
