#ifndef MOON_SPAWN_H
#define MOON_SPAWN_H

#include <sys/types.h>

/// What `moon_spawn` starts: see moon_spawn.c.
struct moon_spawn_request {
    /// The file to execute (execve: no PATH search).
    const char *path;
    /// NULL-terminated argument and environment vectors.
    char *const *argv;
    char *const *envp;
    /// The child's working directory, or NULL to keep moon's.
    const char *directory;
    /// Descriptors the child gets as 0, 1 and 2 (they may be O_CLOEXEC).
    int stdin_fd;
    int stdout_fd;
    int stderr_fd;
};

/// Starts `request` in a new process group (pgid = pid), with every signal's
/// disposition at its default, an empty signal mask, descriptors 0-2 from the
/// request and no other descriptor. Returns 0 and sets `*pid` and `*pidfd`
/// (O_CLOEXEC), or returns an errno: from clone (EAGAIN, EMFILE, ENOMEM...)
/// or from the child's setup or execve (ENOENT, EACCES, ETXTBSY, chdir's
/// errors...), in which case the child has already been reaped.
int moon_spawn(const struct moon_spawn_request *request, pid_t *pid, int *pidfd);

/// Call after changing a signal's disposition to or from SIG_IGN once
/// `moon_spawn` has run: it notes the signals moon ignores at its first
/// spawn, to reset only those in each child (the kernel resets the handled
/// ones), and looks again at the next spawn after this call.
void moon_spawn_forget_signals(void);

/// From now on, spawns use plain clone and reset all 64 signals in the
/// child, as where clone3 is refused (older kernels, seccomp filters such
/// as container runtimes' defaults). For the tests of that path.
void moon_spawn_use_plain_clone(void);

#endif
