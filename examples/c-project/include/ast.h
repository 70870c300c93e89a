/* ast.h: the tree of one line, and the parser that builds it. */
#ifndef AST_H
#define AST_H

#include "calc.h"

enum ast_kind { AST_NUMBER, AST_VARIABLE, AST_UNARY, AST_BINARY, AST_CALL, AST_ASSIGN };

#define AST_MAX_ARGS 4

struct ast {
    enum ast_kind kind;
    int column;               /* where the error about this node points */
    char op;                  /* AST_UNARY, AST_BINARY: '+', '-', '*', '/', '%', '^' */
    calc_value number;        /* AST_NUMBER */
    char name[CALC_NAME_MAX]; /* AST_VARIABLE, AST_CALL, AST_ASSIGN */
    struct ast *left;         /* AST_UNARY's operand, AST_ASSIGN's value */
    struct ast *right;
    int arg_count;            /* AST_CALL */
    struct ast *args[AST_MAX_ARGS];
};

struct ast *ast_number(calc_value number, int column);
struct ast *ast_name(enum ast_kind kind, const char *name, int column);
struct ast *ast_operator(enum ast_kind kind, char op, struct ast *left, struct ast *right, int column);
void ast_free(struct ast *tree);

/* Parses one line. NULL with error->column set on a syntax error; NULL
 * with no error for a line with nothing on it (blank, or a comment). */
struct ast *parse_line(const char *line, struct calc_error *error);

#endif
