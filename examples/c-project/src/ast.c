#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"

static struct ast *ast_new(enum ast_kind kind, int column)
{
    struct ast *tree = calloc(1, sizeof *tree);
    if (tree == NULL) {
        /* A line's tree is a few hundred bytes; without them nothing else will work either. */
        fputs("calc: out of memory\n", stderr);
        exit(2);
    }
    tree->kind = kind;
    tree->column = column;
    return tree;
}

struct ast *ast_number(calc_value number, int column)
{
    struct ast *tree = ast_new(AST_NUMBER, column);
    tree->number = number;
    return tree;
}

struct ast *ast_name(enum ast_kind kind, const char *name, int column)
{
    struct ast *tree = ast_new(kind, column);
    snprintf(tree->name, sizeof tree->name, "%s", name);
    return tree;
}

struct ast *ast_operator(enum ast_kind kind, char op, struct ast *left, struct ast *right, int column)
{
    struct ast *tree = ast_new(kind, column);
    tree->op = op;
    tree->left = left;
    tree->right = right;
    return tree;
}

void ast_free(struct ast *tree)
{
    if (tree == NULL)
        return;
    ast_free(tree->left);
    ast_free(tree->right);
    for (int i = 0; i < tree->arg_count; i++)
        ast_free(tree->args[i]);
    free(tree);
}
