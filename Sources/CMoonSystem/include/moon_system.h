#ifndef MOON_SYSTEM_H
#define MOON_SYSTEM_H

// Linux calls Swift's Glibc module does not import: GNU extensions (it is
// built without _GNU_SOURCE) and a variadic one. Plain C wrappers, linked
// like any function (no dlsym, which finds nothing in a static executable).

/// pipe2(2): fills fds[0] (read end) and fds[1] (write end).
int moon_pipe2(int fds[2], int flags);

/// prctl(PR_SET_CHILD_SUBREAPER, 1): orphans of moon's nodes re-parent to it.
int moon_become_subreaper(void);

/// pthread_setname_np on the calling thread (at most 15 bytes are kept).
void moon_set_thread_name(const char *name);

/// pthread_create of a detached thread; with `elsewhere`, one allowed only
/// on the CPUs the caller may use other than the one it is on (a new
/// thread otherwise tends to wait on its creator's CPU). 0, or an errno
/// (EAGAIN: no other CPU).
int moon_start_thread(void *(*body)(void *), void *context, int elsewhere);

/// 1 when `path` is a directory on a memory file system (tmpfs) that this
/// process may create entries in, else 0.
int moon_is_writable_tmpfs(const char *path);

/// The magic number of the file system `fd` is on (`f_type` of fstatfs),
/// or -1 when it cannot be had.
long moon_file_system_type(int fd);

/// Has each of `signals` (count of them) write its number, as one byte,
/// to `fd` (a non-blocking pipe's write end) from a signal handler, in
/// whatever thread it is delivered: moon's event loop reads the pipe. They
/// are unblocked in the calling thread. Returns 0, or the errno of the call
/// that failed.
int moon_forward_signals(int fd, const int *signals, int count);

/// The number of CPUs this process may use: those of its affinity mask
/// (which cpusets restrict), capped by a cgroup CPU quota (v2 `cpu.max`,
/// v1 `cpu.cfs_quota_us`), rounded up; at least 1: as nproc(1) and ninja
/// count. (Foundation's `activeProcessorCount` ignores the affinity mask.)
int moon_cpu_count(void);

#endif
