/* calc.h: what the stages of the calculator share: the number type, the
 * error a stage reports, and the length of a name. */
#ifndef CALC_H
#define CALC_H

typedef double calc_value;

/* The longest variable or function name, with its NUL. */
#define CALC_NAME_MAX 32

struct calc_error {
    int column; /* 1-based; 0 while the line has no error */
    char message[128];
};

/* Records the first error of a line and ignores later ones, which usually
 * follow from it. Returns 0, so that a failing stage can return it. */
int calc_fail(struct calc_error *error, int column, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

#endif
