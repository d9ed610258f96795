// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 The Threading authors

import CTestSupport
import CThreading
import Glibc

/// Gives up root for good (`setgroups`, `setgid`/`setuid` to `nobody`, 65534, which drops every capability), so
/// that `RLIMIT_NPROC` applies: root ignores it (`CAP_SYS_RESOURCE`). A no-op when not root. Call it only in a
/// single-threaded child process (glibc's `setuid` did not reach every thread of the test process). Returns false
/// (and says why on stderr) if root cannot be dropped.
func faultDropRoot() -> Bool {
    guard getuid() == 0 || geteuid() == 0 else { return true }
    guard setgroups(0, nil) == 0, setgid(65534) == 0, setuid(65534) == 0 else {
        faultLog("fault injection: cannot drop root (setgid/setuid 65534): errno \(errno)\n")
        return false
    }
    return true
}

/// Makes the system refuse every new thread of this process from now on, honestly: `RLIMIT_NPROC` lowered to the
/// number of threads the process has (the process must not be root: see ``faultDropRoot()``). Returns false (and
/// says why on stderr) if the limit cannot be put in place.
func faultRefuseNewThreads() -> Bool {
    guard getuid() != 0 else {
        faultLog("fault injection: still root, RLIMIT_NPROC would be ignored\n")
        return false
    }
    let threads = faultThreadCount()
    guard threads > 0 else { return false }
    var limit = rlimit(rlim_cur: rlim_t(threads), rlim_max: rlim_t(threads))
    guard setrlimit(Int32(__RLIMIT_NPROC.rawValue), &limit) == 0 else {
        faultLog("fault injection: setrlimit(RLIMIT_NPROC) failed: errno \(errno)\n")
        return false
    }
    return true
}

/// Runs `body` in a forked child process and returns its exit status: `body`'s result, or 70 + the signal that
/// killed it, or 99 if it did not finish within `seconds` (it is then killed). The child exits with `_exit`. With
/// `quiet` (the default) it forks once the process's other threads sleep (``faultWaitUntilQuiet()``); a test of a
/// fork while everything is busy passes false.
func faultRunForked(seconds: UInt64 = 90, quiet: Bool = true, _ body: () -> Int32) -> Int32 {
    if quiet { faultWaitUntilQuiet() }
    let pid = fork()
    if pid == 0 { _exit(body()) }
    guard pid > 0 else { return 98 }
    return faultWaitForChild(pid, seconds: seconds)
}

/// Waits for the forked child `pid` to exit, at most `seconds` (then kills it): its exit code, 70 + the signal
/// that ended it, or 99 when it hung.
func faultWaitForChild(_ pid: pid_t, seconds: UInt64) -> Int32 {
    var status: Int32 = 0
    let deadline = cthr_clock_now_ns() + seconds * 1_000_000_000
    while waitpid(pid, &status, WNOHANG) == 0 {
        if cthr_clock_now_ns() > deadline {
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
            faultLog("fault: the forked child hung\n")
            return 99
        }
        _ = cthr_sleep_ns(2_000_000)
    }
    if status & 0x7f != 0 { return 70 + (status & 0x7f) }
    return (status >> 8) & 0xff
}

/// Waits (at most ten seconds) until no other thread of this process runs: none running or runnable at two looks a
/// millisecond apart. The Swift runtime is not fork-safe (see the Misuse article): a thread of the parent that is
/// making a type's metadata or a generic witness table at the fork (which a debug build does on a path's first run)
/// leaves its lock held in the child, and the child's first use of that cache waits for ever. The scenarios that
/// fork test what the library does in the child, so they fork once the process's other threads (the pool's
/// workers, the watchdog's first round) have gone to sleep, as the article tells a program that forks to do. On a
/// machine whose every core is busy with other processes, a thread preempted in its first round can stay runnable
/// for more than a second (a grandchild hung that way in a loaded run, after one second of waiting): hence the ten.
func faultWaitUntilQuiet() {
    let deadline = cthr_clock_deadline_after(10_000_000_000)
    var quietLooks = 0
    while quietLooks < 2 && cthr_clock_now_ns() < deadline {
        quietLooks = cthr_test_busy_threads() == 0 ? quietLooks + 1 : 0
        _ = cthr_sleep_ns(1_000_000)
    }
}

/// The number of threads of this process (`Threads:` in `/proc/self/status`), or 0 if it cannot be read.
func faultThreadCount() -> Int {
    guard let file = fopen("/proc/self/status", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix("Threads:") {
            return Int(String(text.filter { $0.isNumber })) ?? 0
        }
    }
    return 0
}

/// The kernel's state letter for the thread `tid` of this process (`R` running, `S` asleep, ...), "?" when unknown.
func faultThreadState(_ tid: Int32) -> String {
    String(Character(Unicode.Scalar(UInt8(bitPattern: cthr_test_thread_state(tid)))))
}

/// What the kernel says of the thread `tid` of this process: its state and the kernel function it sleeps in
/// (`/proc/self/task/<tid>/wchan`), for a test that found a thread not where it should be.
func faultDescribeThread(_ tid: Int32) -> String {
    guard tid > 0 else { return "the thread has not recorded its id" }
    var channel = "unknown"
    if let file = fopen("/proc/self/task/\(tid)/wchan", "r") {
        var line = [CChar](repeating: 0, count: 256)
        if fgets(&line, Int32(line.count), file) != nil {
            channel = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        fclose(file)
    }
    return "state \(faultThreadState(tid)), waiting in '\(channel)'"
}

extension String {
    /// How many times `needle` occurs.
    func occurrences(of needle: String) -> Int {
        ranges(of: needle).count
    }
}

/// Writes `message` to stderr (file descriptor 2) without touching the C `stderr` global.
func faultLog(_ message: String) {
    message.utf8CString.withUnsafeBufferPointer { bytes in
        _ = write(2, bytes.baseAddress, bytes.count - 1)
    }
}

/// Whether this process runs under ThreadSanitizer, where the tests whose forked child starts threads do not run.
///
/// TSan does not support a child forked from a multi-threaded process: by default it kills the child as soon as it
/// starts a thread (`die_after_fork`, exit code 66). With `die_after_fork=0` the child runs, but these tests hung
/// there now and then, each child waiting in the Swift runtime's `swift_once` slow path. One cause was the
/// runtime's stale thread id in a forked child, which the library now repairs (`Sources/CThreading/fork_ids.c`).
/// Tried again after that fix (`die_after_fork=0`, 17 runs of the fork tests): 2 children still hung, one of them
/// the only thread of its child, in the once of the runtime's table of prespecialized generic metadata
/// (`swift_getCanonicalPrespecializedGenericMetadata`): a thread of the parent was inside that once at the fork,
/// the hazard any child of a multi-threaded Swift process runs (the fork article says so), which TSan's slowness
/// makes frequent. The same tests run in every other configuration: the debug suite, AddressSanitizer, the suite
/// with every trait, the loaded-machine run, and under gdb (`scripts/fork-handlers-check.sh`).
let faultForkBlockedBySanitizer: Bool = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
