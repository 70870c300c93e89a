#include <stdarg.h>
#include <stdio.h>

#include "calc.h"

int calc_fail(struct calc_error *error, int column, const char *format, ...)
{
    if (error->column != 0)
        return 0;
    error->column = column > 0 ? column : 1;
    va_list args;
    va_start(args, format);
    vsnprintf(error->message, sizeof error->message, format, args);
    va_end(args);
    return 0;
}
