#include <math.h>
#include <stdio.h>

#include "format.h"

void format_value(double value, char *buffer, size_t size)
{
    if (isnan(value)) {
        snprintf(buffer, size, "nan");
        return;
    }
    if (isinf(value)) {
        snprintf(buffer, size, value < 0 ? "-inf" : "inf");
        return;
    }
    /* -0 (from -0 * 1, or rounding) prints as 0, as a person writes it. */
    if (value == 0)
        value = 0;
    snprintf(buffer, size, "%.12g", value);
}
