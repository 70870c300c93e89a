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
    /// Two descriptors (or -1) whose owner becomes the child's process group
    /// (F_SETOWN), the ends of moon's death pipe (DeathPipe.swift): armed
    /// before the child execs where the spawner runs code in the child, so
    /// no node runs a moment unprotected; right after the spawn otherwise.
    int death_fds[2];
    /// A terminal (or -1) whose foreground process group becomes the
    /// child's before it execs: an interactive node (TerminalUse.swift).
    int foreground_fd;
    /// A cgroup v1 `tasks` file (or -1) to start the child in, and the
    /// `tasks` file of moon's own cgroup: the spawning thread moves itself
    /// into the first (writing "0", which moves only the calling thread),
    /// spawns, and moves back, so the child starts there before it execs
    /// (posix_spawn runs no code of ours in the child).
    int cgroup_fd;
    int home_fd;
    /// Set by `moon_spawn`: 1 when the child started in the cgroup, 0 when
    /// the thread could not enter it (the child starts in moon's), -1 when
    /// the thread could not move back (moon should use cgroups no more).
    int cgroup_entered;
};

/// Starts `request` in a new process group (pgid = pid), with every signal's
/// disposition at its default, an empty signal mask, descriptors 0-2 from the
/// request and no other descriptor. Returns 0 and sets `*pid` and `*pidfd`
/// (O_CLOEXEC), or returns an errno: from the spawn (EAGAIN, EMFILE,
/// ENOMEM...) or from the child's setup or execve (ENOENT, EACCES, ETXTBSY,
/// chdir's errors...), in which case the child has already been reaped.
int moon_spawn(struct moon_spawn_request *request, pid_t *pid, int *pidfd);

#endif
