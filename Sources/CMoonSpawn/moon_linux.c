// See moon_linux.h.
#define _GNU_SOURCE
#include "moon_linux.h"

#include <malloc.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int moon_pipe2(int fds[2], int flags) {
    return pipe2(fds, flags);
}

int moon_become_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1UL, 0UL, 0UL, 0UL);
}

void moon_set_thread_name(const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = '\0';
    pthread_setname_np(pthread_self(), truncated);
}

void moon_trim_heap(void) {
    malloc_trim(0);
}
