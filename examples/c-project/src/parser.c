/* A recursive-descent parser of one line:
 *
 *   line    := NAME '=' expr | expr | (nothing)
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '/' | '%') unary)*
 *   unary   := ('-' | '+') unary | power
 *   power   := primary ('^' unary)?          right-associative; -2^2 is -4
 *   primary := NUMBER | NAME | NAME '(' [expr (',' expr)*] ')' | '(' expr ')'
 */
#include <stddef.h>

#include "ast.h"
#include "lexer.h"

/* Deep enough for any line a person writes, shallow enough for any stack. */
#define MAX_DEPTH 200

struct parser {
    struct lexer lexer;
    struct token token; /* the current token, not yet consumed */
    struct calc_error *error;
    int depth;
};

static int advance(struct parser *parser)
{
    return lexer_next(&parser->lexer, &parser->token, parser->error);
}

static int expect(struct parser *parser, enum token_kind kind)
{
    if (parser->token.kind != kind)
        return calc_fail(parser->error, parser->token.column, "expected %s, found %s",
                         token_describe(kind), token_describe(parser->token.kind));
    return advance(parser);
}

static struct ast *expr(struct parser *parser);
static struct ast *unary(struct parser *parser);

static struct ast *call(struct parser *parser, struct ast *tree)
{
    if (!advance(parser)) /* the '(' */
        return tree;
    if (parser->token.kind == TOKEN_RPAREN) {
        advance(parser);
        return tree;
    }
    for (;;) {
        if (tree->arg_count == AST_MAX_ARGS) {
            calc_fail(parser->error, parser->token.column, "a function takes at most %d arguments", AST_MAX_ARGS);
            return tree;
        }
        struct ast *arg = expr(parser);
        if (arg == NULL)
            return tree;
        tree->args[tree->arg_count++] = arg;
        if (parser->token.kind != TOKEN_COMMA)
            break;
        if (!advance(parser))
            return tree;
    }
    expect(parser, TOKEN_RPAREN);
    return tree;
}

static struct ast *primary(struct parser *parser)
{
    struct token token = parser->token;
    switch (token.kind) {
    case TOKEN_NUMBER:
        advance(parser);
        return ast_number(token.number, token.column);
    case TOKEN_NAME:
        if (!advance(parser))
            return NULL;
        if (parser->token.kind == TOKEN_LPAREN)
            return call(parser, ast_name(AST_CALL, token.name, token.column));
        return ast_name(AST_VARIABLE, token.name, token.column);
    case TOKEN_LPAREN: {
        if (!advance(parser))
            return NULL;
        struct ast *inner = expr(parser);
        if (inner != NULL)
            expect(parser, TOKEN_RPAREN);
        return inner;
    }
    default:
        calc_fail(parser->error, token.column, "expected a number, a name or '(', found %s",
                  token_describe(token.kind));
        return NULL;
    }
}

static struct ast *power(struct parser *parser)
{
    struct ast *base = primary(parser);
    if (base == NULL || parser->error->column != 0 || parser->token.kind != TOKEN_CARET)
        return base;
    int column = parser->token.column;
    if (!advance(parser))
        return base;
    return ast_operator(AST_BINARY, '^', base, unary(parser), column);
}

static struct ast *unary(struct parser *parser)
{
    if (++parser->depth > MAX_DEPTH) {
        calc_fail(parser->error, parser->token.column, "expression nested too deeply");
        return NULL;
    }
    struct ast *tree;
    struct token token = parser->token;
    if (token.kind == TOKEN_MINUS || token.kind == TOKEN_PLUS) {
        if (!advance(parser))
            return NULL;
        tree = ast_operator(AST_UNARY, token.kind == TOKEN_MINUS ? '-' : '+', unary(parser), NULL, token.column);
    } else {
        tree = power(parser);
    }
    parser->depth--;
    return tree;
}

/* One left-associative level: operands from `operand`, operators from `ops`. */
static struct ast *binary_level(struct parser *parser, struct ast *(*operand)(struct parser *),
                                const enum token_kind *kinds, const char *ops)
{
    struct ast *tree = operand(parser);
    while (tree != NULL && parser->error->column == 0) {
        int found = -1;
        for (int i = 0; ops[i] != '\0'; i++)
            if (parser->token.kind == kinds[i])
                found = i;
        if (found < 0)
            break;
        int column = parser->token.column;
        if (!advance(parser))
            break;
        tree = ast_operator(AST_BINARY, ops[found], tree, operand(parser), column);
    }
    return tree;
}

static struct ast *term(struct parser *parser)
{
    static const enum token_kind kinds[] = {TOKEN_STAR, TOKEN_SLASH, TOKEN_PERCENT};
    return binary_level(parser, unary, kinds, "*/%");
}

static struct ast *expr(struct parser *parser)
{
    if (++parser->depth > MAX_DEPTH) {
        calc_fail(parser->error, parser->token.column, "expression nested too deeply");
        return NULL;
    }
    static const enum token_kind kinds[] = {TOKEN_PLUS, TOKEN_MINUS};
    struct ast *tree = binary_level(parser, term, kinds, "+-");
    parser->depth--;
    return tree;
}

struct ast *parse_line(const char *line, struct calc_error *error)
{
    struct parser parser = {.error = error};
    lexer_init(&parser.lexer, line);
    if (!advance(&parser) || parser.token.kind == TOKEN_END)
        return NULL;

    struct ast *tree = NULL;
    if (parser.token.kind == TOKEN_NAME) {
        /* NAME '=' needs one token of look-ahead: lex it from a copy. */
        struct lexer ahead = parser.lexer;
        struct token next;
        struct calc_error ignored = {0};
        if (lexer_next(&ahead, &next, &ignored) && next.kind == TOKEN_ASSIGN) {
            tree = ast_name(AST_ASSIGN, parser.token.name, parser.token.column);
            parser.lexer = ahead;
            if (advance(&parser))
                tree->left = expr(&parser);
        }
    }
    if (tree == NULL && error->column == 0)
        tree = expr(&parser);
    if (error->column == 0 && parser.token.kind != TOKEN_END)
        calc_fail(error, parser.token.column, "unexpected %s after the expression", token_describe(parser.token.kind));
    if (error->column != 0) {
        ast_free(tree);
        return NULL;
    }
    return tree;
}
