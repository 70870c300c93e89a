// See moon_linux.h.
#define _GNU_SOURCE
#include "moon_linux.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/vfs.h>
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

int moon_is_writable_tmpfs(const char *path) {
    struct statfs info;
    const long tmpfs_magic = 0x01021994;  // TMPFS_MAGIC, linux/magic.h
    if (statfs(path, &info) != 0 || (long)info.f_type != tmpfs_magic) return 0;
    return access(path, W_OK | X_OK) == 0;
}

/// Where forwarded signals go (the write end of the event loop's pipe).
static volatile int forward_fd = -1;

// Only async-signal-safe calls: one write, errno kept. A full pipe drops
// the byte: signals are coalesced anyway, and what is queued already
// makes the loop stop the run.
static void forward_signal(int number) {
    int saved = errno;
    unsigned char byte = (unsigned char)number;
    ssize_t written = write(forward_fd, &byte, 1);
    (void)written;
    errno = saved;
}

int moon_forward_signals(int fd, const int *signals, int count) {
    forward_fd = fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = forward_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < count; i++) {
        if (sigaction(signals[i], &action, NULL) != 0) return errno;
        sigaddset(&set, signals[i]);
    }
    // moon may have been started with them blocked (a parent's thread
    // that blocks them, as Dispatch's do, passes its mask on): unblocked
    // here, in the calling thread, they reach the handler.
    return pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}
