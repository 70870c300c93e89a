#ifndef MOON_CFUZZDRIVER_H
#define MOON_CFUZZDRIVER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for programs that own `main` (compiler-rt,
/// FuzzerInterface.h). Linked in by `--sanitize=fuzzer`.
int LLVMFuzzerRunDriver(int *argc, char ***argv,
                        int (*UserCb)(const uint8_t *Data, size_t Size));
#endif
