/* format.h: a number as the calculator prints it. */
#ifndef FORMAT_H
#define FORMAT_H

#include <stddef.h>

/* At most 12 significant digits, so 0.1 + 0.2 prints as 0.3; no "-0". */
void format_value(double value, char *buffer, size_t size);

#endif
