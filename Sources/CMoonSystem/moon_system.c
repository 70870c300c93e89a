// See moon_system.h.
#define _GNU_SOURCE
#include "moon_system.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
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

int moon_start_thread(void *(*body)(void *), void *context, int elsewhere) {
    pthread_attr_t attr;
    int failed = pthread_attr_init(&attr);
    if (failed) return failed;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (elsewhere) {
        cpu_set_t set;
        int here = sched_getcpu();
        if (sched_getaffinity(0, sizeof set, &set) != 0) {
            failed = errno;
        } else {
            if (here >= 0 && here < CPU_SETSIZE) CPU_CLR(here, &set);
            failed = CPU_COUNT(&set) == 0 ? EAGAIN : pthread_attr_setaffinity_np(&attr, sizeof set, &set);
        }
    }
    if (!failed) {
        pthread_t thread;
        failed = pthread_create(&thread, &attr, body, context);
    }
    pthread_attr_destroy(&attr);
    return failed;
}

int moon_is_writable_tmpfs(const char *path) {
    struct statfs info;
    const long tmpfs_magic = 0x01021994;  // TMPFS_MAGIC, linux/magic.h
    if (statfs(path, &info) != 0 || (long)info.f_type != tmpfs_magic) return 0;
    return access(path, W_OK | X_OK) == 0;
}

long moon_file_system_type(int fd) {
    struct statfs info;
    return fstatfs(fd, &info) == 0 ? (long)info.f_type : -1;
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

/// Reads up to `size - 1` bytes of a small file into `buffer`, NUL-ended;
/// 0 when it cannot be read.
static int read_small_file(const char *path, char *buffer, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t count = read(fd, buffer, size - 1);
    close(fd);
    if (count <= 0) return 0;
    buffer[count] = '\0';
    return 1;
}

/// The CPUs a cgroup CPU quota allows (quota / period, rounded up), or 0
/// without a quota: cgroup v2's `cpu.max` ("QUOTA PERIOD" or "max
/// PERIOD"), else cgroup v1's `cpu.cfs_quota_us` (-1: none) and
/// `cpu.cfs_period_us`, as a container sees them at /sys/fs/cgroup.
static long cgroup_cpu_limit(void) {
    char text[128];
    long long quota = -1, period = 0;
    if (read_small_file("/sys/fs/cgroup/cpu.max", text, sizeof text)) {
        if (strncmp(text, "max", 3) == 0) return 0;
        char *end;
        quota = strtoll(text, &end, 10);
        period = strtoll(end, NULL, 10);
    } else if (read_small_file("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", text, sizeof text)) {
        quota = strtoll(text, NULL, 10);
        if (quota > 0 && read_small_file("/sys/fs/cgroup/cpu/cpu.cfs_period_us", text, sizeof text)) {
            period = strtoll(text, NULL, 10);
        }
    }
    if (quota <= 0 || period <= 0) return 0;
    return (long)((quota + period - 1) / period);
}

int moon_cpu_count(void) {
    cpu_set_t set;
    long count = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0) count = CPU_COUNT(&set);
    if (count < 1) count = sysconf(_SC_NPROCESSORS_ONLN);
    if (count < 1) count = 1;
    long limit = cgroup_cpu_limit();
    if (limit > 0 && limit < count) count = limit;
    return (int)count;
}
