/* eval.h: the value of a line's tree. */
#ifndef EVAL_H
#define EVAL_H

#include "ast.h"
#include "symtab.h"

/* Evaluates the tree; an assignment stores its value in the table.
 * Returns 1, or 0 with *error set. */
int eval(const struct ast *tree, struct symtab *table, calc_value *result, struct calc_error *error);

#endif
