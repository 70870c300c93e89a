// moon's portable spawner: glibc's posix_spawn (a process group of its own, every
// signal at its default, an empty mask, descriptors 0-2 and no other, the
// working directory), then pidfd_open, so the event loop can watch the
// child's exit with poll like any other descriptor.
#define _GNU_SOURCE
#include "moon_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/// The file actions and attributes of one spawn; `moved` holds copies of
/// sources below 3 (see `add_standard_descriptors`) to close afterwards.
struct spawn_setup {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int moved[3];
};

/// Descriptors 0, 1 and 2 from the request. A source below 3 (moon started
/// with a standard descriptor closed) is first copied to 3 or above, so no
/// dup2 overwrites a source still to be copied, and none is a no-op that
/// would leave O_CLOEXEC set.
static int add_standard_descriptors(struct spawn_setup *setup, const struct moon_spawn_request *request) {
    int sources[3] = {request->stdin_fd, request->stdout_fd, request->stderr_fd};
    for (int i = 0; i < 3; i++) {
        if (sources[i] < 3) {
            int copy = fcntl(sources[i], F_DUPFD_CLOEXEC, 3);
            if (copy < 0) return errno;
            setup->moved[i] = copy;
            sources[i] = copy;
        }
    }
    for (int i = 0; i < 3; i++) {
        int error = posix_spawn_file_actions_adddup2(&setup->actions, sources[i], i);
        if (error) return error;
    }
    return 0;
}

static int prepare(struct spawn_setup *setup, const struct moon_spawn_request *request) {
    int error = 0;
    // First, while the terminal's descriptor is still the one moon holds:
    // glibc runs it in the child after setpgid, with every signal blocked,
    // so the child's group is in the foreground before it can read.
    if (request->foreground_fd >= 0)
        error = posix_spawn_file_actions_addtcsetpgrp_np(&setup->actions, request->foreground_fd);
    if (!error) error = add_standard_descriptors(setup, request);
    // Nothing else reaches the child, O_CLOEXEC or not.
    if (!error) error = posix_spawn_file_actions_addclosefrom_np(&setup->actions, 3);
    if (!error && request->directory) error = posix_spawn_file_actions_addchdir_np(&setup->actions, request->directory);
    if (error) return error;

    // Every signal at its default, even one moon ignores (SIGPIPE), so no
    // handler of moon's runs in the child and the node starts as from a
    // shell; an empty mask, whatever the spawning thread blocks. The set is
    // filled by hand: sigfillset leaves out glibc's internal signals (32,
    // 33), which its posix_spawn would then leave ignored in the child.
    sigset_t all, none;
    memset(&all, 0xff, sizeof all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    sigemptyset(&none);
    short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
    if ((error = posix_spawnattr_setflags(&setup->attributes, flags))) return error;
    if ((error = posix_spawnattr_setpgroup(&setup->attributes, 0))) return error;
    if ((error = posix_spawnattr_setsigdefault(&setup->attributes, &all))) return error;
    return posix_spawnattr_setsigmask(&setup->attributes, &none);
}

/// Writes "0" (the calling thread) to a cgroup's `tasks` file; true when it moved.
static int write_zero(int fd) {
    ssize_t written;
    do {
        written = pwrite(fd, "0", 1, 0);
    } while (written < 0 && errno == EINTR);
    return written == 1;
}

/// pidfd_open(2) through syscall: the glibc wrapper is newer than the call.
static int open_pidfd(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int moon_spawn(struct moon_spawn_request *request, pid_t *pid, int *pidfd) {
    struct spawn_setup setup = {.moved = {-1, -1, -1}};
    if (posix_spawn_file_actions_init(&setup.actions)) return ENOMEM;
    if (posix_spawnattr_init(&setup.attributes)) {
        posix_spawn_file_actions_destroy(&setup.actions);
        return ENOMEM;
    }
    pid_t child = -1;
    int error = prepare(&setup, request);
    // The child is made with the calling thread's cgroups: for the moment
    // of the spawn, this thread alone sits in the node's (cgroup v1 lets a
    // thread move alone, and "0" takes no lock on moon's other threads).
    request->cgroup_entered = 0;
    if (!error && request->cgroup_fd >= 0 && request->home_fd >= 0 && write_zero(request->cgroup_fd))
        request->cgroup_entered = 1;
    // On failure of the child's setup or execve, glibc has reaped it.
    if (!error) error = posix_spawn(&child, request->path, &setup.actions, &setup.attributes, request->argv, request->envp);
    // posix_spawn runs no code of ours in the child: the group is armed
    // here, first thing, a moment after the child started.
    if (!error) {
        for (int i = 0; i < 2; i++) {
            if (request->death_fds[i] >= 0) fcntl(request->death_fds[i], F_SETOWN, -child);
        }
    }
    if (request->cgroup_entered == 1 && !write_zero(request->home_fd)) request->cgroup_entered = -1;
    posix_spawn_file_actions_destroy(&setup.actions);
    posix_spawnattr_destroy(&setup.attributes);
    for (int i = 0; i < 3; i++) {
        if (setup.moved[i] >= 0) close(setup.moved[i]);
    }
    if (error) return error;

    // The child is unreaped, so its pid cannot be recycled before this.
    int descriptor = open_pidfd(child);
    if (descriptor < 0) {
        error = errno;
        kill(-child, SIGKILL);
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        return error;
    }
    *pid = child;
    *pidfd = descriptor;
    return 0;
}
