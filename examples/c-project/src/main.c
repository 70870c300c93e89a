/* calc: a line-oriented calculator.
 *
 *   usage: calc [FILE]      (standard input without FILE, or with -)
 *
 * Each line is an expression (2 * (3 + 4)), or NAME = expression; '#'
 * starts a comment. A result is printed on standard output, an error as
 * "FILE:LINE:COLUMN: error: MESSAGE" on standard error, and reading goes
 * on. Exit status: 0, 1 when a line had an error, 2 when the input cannot
 * be read. */
#include <stdio.h>
#include <string.h>

#include "calc.h"
#include "eval.h"
#include "format.h"
#include "symtab.h"

#define LINE_MAX_BYTES 1024

static void report(const char *file, int line, const struct calc_error *error)
{
    /* Results and errors stay in input order when both go to one file. */
    fflush(stdout);
    fprintf(stderr, "%s:%d:%d: error: %s\n", file, line, error->column, error->message);
}

/* Evaluates one line and prints its result; 0 on an error. */
static int run_line(const char *text, const char *file, int line, struct symtab *table)
{
    struct calc_error error = {0};
    struct ast *tree = parse_line(text, &error);
    calc_value value;
    int ok = error.column == 0 && (tree == NULL || eval(tree, table, &value, &error));
    if (!ok) {
        report(file, line, &error);
    } else if (tree != NULL) {
        char number[64];
        format_value(value, number, sizeof number);
        if (tree->kind == AST_ASSIGN)
            printf("%s = %s\n", tree->name, number);
        else
            printf("%s\n", number);
    }
    ast_free(tree);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc > 2 || (argc == 2 && strcmp(argv[1], "--help") == 0)) {
        fputs("usage: calc [FILE]\n", argc > 2 ? stderr : stdout);
        return argc > 2 ? 2 : 0;
    }
    const char *file = "<stdin>";
    FILE *input = stdin;
    if (argc == 2 && strcmp(argv[1], "-") != 0) {
        file = argv[1];
        input = fopen(file, "r");
        if (input == NULL) {
            perror(file);
            return 2;
        }
    }

    struct symtab table;
    symtab_init(&table);
    symtab_set(&table, "pi", 3.14159265358979323846, 1);
    symtab_set(&table, "e", 2.71828182845904523536, 1);

    char text[LINE_MAX_BYTES];
    int line = 0, failed = 0;
    while (fgets(text, sizeof text, input) != NULL) {
        line++;
        size_t length = strlen(text);
        if (length == sizeof text - 1 && text[length - 1] != '\n' && !feof(input)) {
            struct calc_error error = {.column = 1};
            snprintf(error.message, sizeof error.message, "line longer than %d bytes", LINE_MAX_BYTES - 2);
            report(file, line, &error);
            failed = 1;
            int c;
            while ((c = getc(input)) != EOF && c != '\n')
                continue;
            continue;
        }
        text[strcspn(text, "\r\n")] = '\0';
        if (!run_line(text, file, line, &table))
            failed = 1;
    }
    if (ferror(input)) {
        perror(file);
        return 2;
    }
    return failed;
}
