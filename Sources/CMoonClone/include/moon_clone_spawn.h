#ifndef MOON_CLONE_SPAWN_H
#define MOON_CLONE_SPAWN_H

#include "moon_spawn.h"

/// `moon_spawn`'s contract (moon_spawn.h), kept with clone3 on x86_64: see
/// moon_clone_spawn.c.
int moon_clone_spawn(const struct moon_spawn_request *request, pid_t *pid, int *pidfd);

/// Call after changing a signal's disposition to or from SIG_IGN once
/// `moon_clone_spawn` has run: it notes the signals moon ignores at its
/// first spawn, to reset only those in each child (the kernel resets the
/// handled ones), and looks again at the next spawn after this call.
void moon_clone_spawn_forget_signals(void);

/// From now on, spawns use plain clone and reset all 64 signals in the
/// child, as where clone3 is refused (older kernels, seccomp filters such
/// as container runtimes' defaults). For the tests of that path.
void moon_clone_spawn_use_plain_clone(void);

#endif
