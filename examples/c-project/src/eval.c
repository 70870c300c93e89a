#include <math.h>
#include <string.h>

#include "eval.h"

/* A name the parser accepts must fit in the table. */
_Static_assert(SYMTAB_NAME_MAX >= CALC_NAME_MAX, "symtab names are shorter than calc names");

struct function {
    const char *name;
    int arity;
    double (*apply)(const double *args);
};

static double f_sqrt(const double *a) { return sqrt(a[0]); }
static double f_abs(const double *a) { return fabs(a[0]); }
static double f_floor(const double *a) { return floor(a[0]); }
static double f_round(const double *a) { return round(a[0]); }
static double f_min(const double *a) { return a[0] < a[1] ? a[0] : a[1]; }
static double f_max(const double *a) { return a[0] > a[1] ? a[0] : a[1]; }
static double f_hypot(const double *a) { return hypot(a[0], a[1]); }

static const struct function functions[] = {
    {"sqrt", 1, f_sqrt}, {"abs", 1, f_abs},   {"floor", 1, f_floor}, {"round", 1, f_round},
    {"min", 2, f_min},   {"max", 2, f_max},   {"hypot", 2, f_hypot},
};

static int eval_call(const struct ast *tree, struct symtab *table, calc_value *result, struct calc_error *error)
{
    const struct function *function = NULL;
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++)
        if (strcmp(functions[i].name, tree->name) == 0)
            function = &functions[i];
    if (function == NULL)
        return calc_fail(error, tree->column, "unknown function '%s'", tree->name);
    if (tree->arg_count != function->arity)
        return calc_fail(error, tree->column, "%s takes %d argument%s, not %d", function->name,
                         function->arity, function->arity == 1 ? "" : "s", tree->arg_count);
    double args[AST_MAX_ARGS];
    for (int i = 0; i < tree->arg_count; i++)
        if (!eval(tree->args[i], table, &args[i], error))
            return 0;
    if (function->apply == f_sqrt && args[0] < 0)
        return calc_fail(error, tree->column, "the square root of a negative number");
    *result = function->apply(args);
    return 1;
}

static int eval_binary(const struct ast *tree, struct symtab *table, calc_value *result, struct calc_error *error)
{
    calc_value left, right;
    if (!eval(tree->left, table, &left, error) || !eval(tree->right, table, &right, error))
        return 0;
    switch (tree->op) {
    case '+': *result = left + right; return 1;
    case '-': *result = left - right; return 1;
    case '*': *result = left * right; return 1;
    case '/':
        if (right == 0)
            return calc_fail(error, tree->column, "division by zero");
        *result = left / right;
        return 1;
    case '%':
        if (right == 0)
            return calc_fail(error, tree->column, "remainder of a division by zero");
        *result = fmod(left, right);
        return 1;
    case '^': *result = pow(left, right); return 1;
    }
    return calc_fail(error, tree->column, "unknown operator '%c'", tree->op);
}

static int eval_assign(const struct ast *tree, struct symtab *table, calc_value *result, struct calc_error *error)
{
    if (!eval(tree->left, table, result, error))
        return 0;
    switch (symtab_set(table, tree->name, *result, 0)) {
    case SYMTAB_OK: return 1;
    case SYMTAB_CONSTANT: return calc_fail(error, tree->column, "'%s' is a constant", tree->name);
    case SYMTAB_FULL: return calc_fail(error, tree->column, "more than %d variables", SYMTAB_MAX);
    case SYMTAB_NAME_TOO_LONG: return calc_fail(error, tree->column, "name too long: '%s'", tree->name);
    }
    return 0;
}

int eval(const struct ast *tree, struct symtab *table, calc_value *result, struct calc_error *error)
{
    switch (tree->kind) {
    case AST_NUMBER:
        *result = tree->number;
        return 1;
    case AST_VARIABLE: {
        const struct symtab_entry *entry = symtab_find(table, tree->name);
        if (entry == NULL)
            return calc_fail(error, tree->column, "unknown variable '%s'", tree->name);
        *result = entry->value;
        return 1;
    }
    case AST_UNARY:
        if (!eval(tree->left, table, result, error))
            return 0;
        if (tree->op == '-')
            *result = -*result;
        return 1;
    case AST_BINARY:
        return eval_binary(tree, table, result, error);
    case AST_CALL:
        return eval_call(tree, table, result, error);
    case AST_ASSIGN:
        return eval_assign(tree, table, result, error);
    }
    return calc_fail(error, tree->column, "unknown expression");
}
