#include <string.h>

#include "symtab.h"

void symtab_init(struct symtab *table)
{
    table->count = 0;
}

const struct symtab_entry *symtab_find(const struct symtab *table, const char *name)
{
    for (int i = 0; i < table->count; i++)
        if (strcmp(table->entries[i].name, name) == 0)
            return &table->entries[i];
    return NULL;
}

enum symtab_result symtab_set(struct symtab *table, const char *name, double value, int constant)
{
    struct symtab_entry *entry = (struct symtab_entry *)symtab_find(table, name);
    if (entry != NULL) {
        if (entry->constant)
            return SYMTAB_CONSTANT;
        entry->value = value;
        return SYMTAB_OK;
    }
    size_t length = strlen(name);
    if (length >= SYMTAB_NAME_MAX)
        return SYMTAB_NAME_TOO_LONG;
    if (table->count == SYMTAB_MAX)
        return SYMTAB_FULL;
    entry = &table->entries[table->count++];
    memcpy(entry->name, name, length + 1);
    entry->value = value;
    entry->constant = constant;
    return SYMTAB_OK;
}
