// moon's fast spawner on x86_64: clone3(CLONE_VM | CLONE_VFORK |
// CLONE_PIDFD | CLONE_CLEAR_SIGHAND) and a few system calls in the child,
// instead of glibc's posix_spawn (CMoonSpawn, the portable default), whose
// child sets all 64 signals one system call each. Why it is kept: on the
// 1000-node graphs of `make bench` it takes about 5% off moon's wall and CPU
// time (docs/decisions.md, "Spawner").
//
// The child shares moon's memory until it execs (CLONE_VM; the calling
// thread sleeps meanwhile, CLONE_VFORK), so it may only make system calls:
// no malloc, no locks, no moon signal handler. The kernel resets every
// handled signal to its default in the child (CLONE_CLEAR_SIGHAND, Linux
// 5.5), so no handler of moon's can ever run there; the child then only
// resets the signals moon ignores (an ignored signal stays ignored across
// execve). Where clone3 or that flag is missing (older kernels, seccomp
// filters that refuse clone3), or under ThreadSanitizer, it falls back to
// clone and resets all 64 signals itself, with every signal blocked until
// then. It makes raw system calls only (`syscall`), never a libc wrapper a
// sanitizer may intercept with code that touches shared state.
#define _GNU_SOURCE
#include "moon_clone_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

/// The kernel's `struct sigaction` (x86_64, aarch64): SIG_DFL needs no
/// restorer, and the raw call also reaches glibc's internal signals 32 and
/// 33, which its `sigaction` refuses.
struct kernel_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    uint64_t mask;
};

/// The highest signal number (the kernel's _NSIG is 64 on x86_64, aarch64).
#define LAST_SIGNAL 64

struct child_context {
    const struct moon_spawn_request *request;
    /// The signals the child sets to their default (bit n-1: signal n):
    /// all of them after plain clone, only the ignored ones after clone3
    /// with CLONE_CLEAR_SIGHAND.
    uint64_t reset;
    /// Written by the child when it fails, read by the parent once the
    /// child is gone (shared memory: CLONE_VM).
    volatile int error;
};

static long raw_sigmask(int how, const uint64_t *set, uint64_t *old) {
    return syscall(SYS_rt_sigprocmask, how, set, old, sizeof(uint64_t));
}

// Under ThreadSanitizer (`make tsan`): its `clone` interceptor treats the
// call as a fork and aborts on CLONE_VM, so the spawn calls glibc's
// `__clone` (the same function; `clone` is its weak alias), and the child's
// code, which runs on the parent's memory while the parent sleeps, is not
// instrumented.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MOON_UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define MOON_UNDER_TSAN 1
#endif
#ifdef MOON_UNDER_TSAN
extern int __clone(int (*fn)(void *), void *stack, int flags, void *arg, ...);
#define MOON_CLONE __clone
#define MOON_CHILD_ATTRIBUTES __attribute__((no_sanitize("thread")))
#else
#define MOON_CLONE clone
#define MOON_CHILD_ATTRIBUTES
#endif

MOON_CHILD_ATTRIBUTES
static _Noreturn void fail(struct child_context *context, int code) {
    context->error = code ? code : ECHILD;
    for (;;) syscall(SYS_exit_group, 127);
}

MOON_CHILD_ATTRIBUTES
static int child_main(void *argument) {
    struct child_context *context = argument;
    const struct moon_spawn_request *request = context->request;

    // Every signal to its default, as POSIX_SPAWN_SETSIGDEF with a full
    // set did: a handler of moon's must never run here, and a signal moon
    // ignores (SIGPIPE) must not stay ignored in the node. After clone3
    // the kernel has reset the handled ones: `reset` holds only the
    // ignored ones, usually one or two. Unconditional sets: querying first
    // would double the calls.
    static const struct kernel_sigaction default_action;  // (static: no memset call)
    for (int sig = 1; sig <= LAST_SIGNAL; sig++) {
        if (!(context->reset & ((uint64_t)1 << (sig - 1)))) continue;
        syscall(SYS_rt_sigaction, sig, &default_action, NULL, sizeof(uint64_t));
    }

    if (syscall(SYS_setpgid, 0, 0) != 0) fail(context, errno);
    // The death pipe is armed for this group before any code of the node
    // runs: F_SETOWN sets the owner of the open file, which moon shares.
    // (A refusal leaves the node to moon's own cleanup, as a spawn without
    // a death pipe.)
    long group = syscall(SYS_getpid);
    for (int i = 0; i < 2; i++) {
        if (request->death_fds[i] >= 0) syscall(SYS_fcntl, request->death_fds[i], F_SETOWN, -group);
    }

    // 0, 1 and 2 from the request. A source below 3 (moon started with a
    // standard descriptor closed) is first moved out of the way, so no
    // dup3 overwrites a source still to be copied, and none would be a
    // no-op that leaves O_CLOEXEC set. (dup3 always gets two different
    // descriptors then; aarch64 has no dup2 system call.)
    int sources[3] = {request->stdin_fd, request->stdout_fd, request->stderr_fd};
    for (int i = 0; i < 3; i++) {
        if (sources[i] < 3) {
            long moved = syscall(SYS_fcntl, sources[i], F_DUPFD, 3);
            if (moved < 0) fail(context, errno);
            sources[i] = (int)moved;
        }
    }
    for (int i = 0; i < 3; i++) {
        if (syscall(SYS_dup3, sources[i], i, 0) < 0) fail(context, errno);
    }
    // Nothing else reaches the node, O_CLOEXEC or not.
    if (syscall(SYS_close_range, 3U, ~0U, 0) != 0) {
        // Linux < 5.9: one by one, up to the descriptor limit.
        struct rlimit limit;
        long last = 65536;
        if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &limit) == 0 && limit.rlim_cur < (rlim_t)last) last = (long)limit.rlim_cur;
        for (long fd = 3; fd < last; fd++) syscall(SYS_close, fd);
    }

    if (request->directory && syscall(SYS_chdir, request->directory) != 0) fail(context, errno);

    uint64_t none = 0;
    raw_sigmask(SIG_SETMASK, &none, NULL);
    syscall(SYS_execve, request->path, request->argv, request->envp);
    fail(context, errno);
}

/// Every signal but SIGKILL and SIGSTOP, which cannot be caught or ignored.
static const uint64_t all_resettable = ~(uint64_t)0 & ~((uint64_t)1 << (SIGKILL - 1)) & ~((uint64_t)1 << (SIGSTOP - 1));

/// The signals moon ignores, as found at the first spawn (bit n-1: signal
/// n), or `unknown_signals`. Querying all 64 at every spawn would cost what
/// it saves; moon sets its dispositions before it spawns anything and calls
/// `moon_clone_spawn_forget_signals` when it changes them.
static const uint64_t unknown_signals = ~(uint64_t)0;
static _Atomic uint64_t ignored_signals = ~(uint64_t)0;

void moon_clone_spawn_forget_signals(void) {
    atomic_store(&ignored_signals, unknown_signals);
}

__attribute__((unused)) static uint64_t current_ignored_signals(void) {
    uint64_t known = atomic_load(&ignored_signals);
    if (known != unknown_signals) return known;
    uint64_t ignored = 0;
    for (int sig = 1; sig <= LAST_SIGNAL; sig++) {
        struct kernel_sigaction action;
        if (syscall(SYS_rt_sigaction, sig, NULL, &action, sizeof(uint64_t)) == 0 && action.handler == SIG_IGN) {
            ignored |= (uint64_t)1 << (sig - 1);
        }
    }
    atomic_store(&ignored_signals, ignored);
    return ignored;
}

#if defined(__x86_64__) && !defined(MOON_UNDER_TSAN)
#define MOON_HAS_CLONE3 1

#ifndef CLONE_CLEAR_SIGHAND
#define CLONE_CLEAR_SIGHAND 0x100000000ULL
#endif

/// The kernel's `struct clone_args` up to `tls` (CLONE_ARGS_SIZE_VER0).
struct moon_clone_args {
    uint64_t flags;
    uint64_t pidfd;
    uint64_t child_tid;
    uint64_t parent_tid;
    uint64_t exit_signal;
    uint64_t stack;
    uint64_t stack_size;
    uint64_t tls;
};

/// clone3 calling `function(argument)` in the child on the stack the
/// arguments name, as glibc's internal `__clone3` does (glibc exports no
/// clone3): a C function cannot make this call itself, since the child
/// returns from it on another stack. Returns the child's pid or -errno.
/// (x86_64 System V: the four arguments arrive in rdi, rsi, rdx, rcx; the
/// system call clobbers only rcx and r11, so rdx and r8 reach the child.)
__attribute__((naked, noinline)) static long moon_clone3(struct moon_clone_args *arguments, size_t size,
                                                         int (*function)(void *), void *argument) {
    __asm__ volatile(
        "mov %rcx, %r8\n\t"       // the argument, kept across the call
        "mov $435, %eax\n\t"      // SYS_clone3
        "syscall\n\t"
        "test %rax, %rax\n\t"
        "jz 1f\n\t"
        "ret\n"                    // parent: the pid, or -errno
        "1:\n\t"                  // child, on its own stack
        "xor %ebp, %ebp\n\t"      // the outermost frame
        "and $-16, %rsp\n\t"
        "mov %r8, %rdi\n\t"
        "call *%rdx\n\t"
        "mov %eax, %edi\n\t"      // (child_main never returns)
        "mov $231, %eax\n\t"      // SYS_exit_group
        "syscall\n\t"
        "hlt");
}

/// Whether clone3 with CLONE_CLEAR_SIGHAND may work here: cleared for good
/// once the kernel (or a seccomp filter) has refused it.
static _Atomic int clone3_usable = 1;
#endif

void moon_clone_spawn_use_plain_clone(void) {
#ifdef MOON_HAS_CLONE3
    atomic_store(&clone3_usable, 0);
#endif
}

int moon_clone_spawn(const struct moon_spawn_request *request, pid_t *pid, int *pidfd) {
    // The child's stack: part of this frame, which stays untouched while
    // this thread sleeps in clone (as musl's posix_spawn does). The child
    // only makes system calls: 16 KiB is ample.
    _Alignas(16) char stack[16384];
    struct child_context context = {.request = request, .error = 0};

    // All signals blocked around clone: after plain clone, so none is
    // handled in the child before its dispositions are reset; after
    // clone3, so none arrives before the child is in its own group (raw
    // call: glibc's sigprocmask leaves its internal signals unblocked).
    uint64_t all = ~(uint64_t)0, old = 0;
    raw_sigmask(SIG_BLOCK, &all, &old);
    int descriptor = -1;
    pid_t child = -1;
    int clone_error = 0;
    int cloned = 0;
#ifdef MOON_HAS_CLONE3
    if (atomic_load(&clone3_usable)) {
        context.reset = current_ignored_signals();
        struct moon_clone_args arguments = {
            .flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD | CLONE_CLEAR_SIGHAND,
            .pidfd = (uint64_t)(uintptr_t)&descriptor,
            .exit_signal = SIGCHLD,
            .stack = (uint64_t)(uintptr_t)stack,
            .stack_size = sizeof stack,
        };
        long result = moon_clone3(&arguments, sizeof arguments, child_main, &context);
        if (result >= 0) {
            child = (pid_t)result;
            cloned = 1;
        } else if (result == -ENOSYS || result == -EINVAL || result == -EPERM) {
            // No clone3, no CLONE_CLEAR_SIGHAND, or a filter against them:
            // plain clone from now on.
            atomic_store(&clone3_usable, 0);
        } else {
            child = -1;
            clone_error = (int)-result;
            cloned = 1;
        }
    }
#endif
    if (!cloned) {
        context.reset = all_resettable;
        child = MOON_CLONE(child_main, stack + sizeof stack, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD,
                           &context, &descriptor);
        clone_error = errno;
    }
    raw_sigmask(SIG_SETMASK, &old, NULL);

    if (child < 0) return clone_error ? clone_error : EAGAIN;
    if (context.error != 0) {
        // The child exited (127) without exec'ing: reap it here, so no
        // zombie is left to anyone.
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        if (descriptor >= 0) close(descriptor);
        return context.error;
    }
    *pid = child;
    *pidfd = descriptor;
    return 0;
}
