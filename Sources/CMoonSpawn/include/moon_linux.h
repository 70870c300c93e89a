#ifndef MOON_LINUX_H
#define MOON_LINUX_H

// Linux calls Swift's Glibc module does not import: GNU extensions (it is
// built without _GNU_SOURCE) and a variadic one. Plain C wrappers, linked
// like any function (no dlsym, which finds nothing in a static executable).

/// pipe2(2): fills fds[0] (read end) and fds[1] (write end).
int moon_pipe2(int fds[2], int flags);

/// prctl(PR_SET_CHILD_SUBREAPER, 1): orphans of moon's nodes re-parent to it.
int moon_become_subreaper(void);

/// pthread_setname_np on the calling thread (at most 15 bytes are kept).
void moon_set_thread_name(const char *name);

/// malloc_trim(0): hands freed heap pages back to the system.
void moon_trim_heap(void);

#endif
