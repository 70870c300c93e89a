/* symtab.h: the variables a session has set, and its constants. A fixed
 * table: a calculator session names a handful of variables. */
#ifndef SYMTAB_H
#define SYMTAB_H

#define SYMTAB_MAX 64
#define SYMTAB_NAME_MAX 32

struct symtab_entry {
    char name[SYMTAB_NAME_MAX];
    double value;
    int constant;
};

struct symtab {
    int count;
    struct symtab_entry entries[SYMTAB_MAX];
};

enum symtab_result { SYMTAB_OK, SYMTAB_FULL, SYMTAB_CONSTANT, SYMTAB_NAME_TOO_LONG };

void symtab_init(struct symtab *table);
const struct symtab_entry *symtab_find(const struct symtab *table, const char *name);
enum symtab_result symtab_set(struct symtab *table, const char *name, double value, int constant);

#endif
