#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: 2026 The Threading authors
#
# Checks that the pool's fork() child handlers ask the Swift runtime for no type it has not made yet
# (`make fork-check`; see `ForkRegistry` for why a child handler that does so can hang for ever). Runs the in-process
# fork tests of the debug build (where every generic call goes through its unspecialized entry point, so any such
# request shows) under gdb, follows each test's forked child and stops it at the runtime's metadata allocator and
# at its mangled-name lookups. Fails if the child reaches one of them before it exits (printing the stack), or if no
# child ran. Installs gdb with apt-get when it is missing and we may (root, or passwordless sudo); otherwise stops
# with one line saying what to install. Expects `swift build --build-tests` (or `make test`) to have run.
# Where gdb cannot trace a process at all (ptrace refused), prints "NOT RUN" with gdb's reason and exits 0.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
binary="$(swift build --show-bin-path)/ThreadingPackageTests.xctest"
# The tests whose child runs the handlers of a busy pool; one gdb run each, following the test's first fork.
tests=(
    "ForkHandlerTests/aChildThatOnlyExitsGetsPastTheForkHandlersWhileEverythingIsBusy"
    "CLockTests/aLockHeldAcrossForkIsUnlockedInTheChild"
    "CLockTests/aRecursiveLockHeldAcrossForkNestsAndIsReleasedInTheChild"
)

if ! command -v gdb >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO="none"; fi
    fi
    if [ "$SUDO" != "none" ] && command -v apt-get >/dev/null 2>&1; then
        echo "gdb is missing: installing it with apt-get" >&2
        log="$(mktemp "${TMPDIR:-/tmp}/fork-check-tools.XXXXXX")"
        export DEBIAN_FRONTEND=noninteractive
        $SUDO apt-get update -qq >>"$log" 2>&1 || true
        $SUDO apt-get install -y -qq gdb >>"$log" 2>&1 || true
    fi
    command -v gdb >/dev/null 2>&1 || { echo "fork-check: gdb is missing (Debian/Ubuntu: apt-get install gdb)" >&2; exit 1; }
fi
[ -x "$binary" ] || { echo "fork-check: $binary is missing: run swift build --build-tests first" >&2; exit 1; }
# gdb needs ptrace. Where the machine refuses it (a container without CAP_SYS_PTRACE, kernel.yama.ptrace_scope=3),
# the check cannot run: say so plainly and stop without failing the build (the fork tests themselves still run in
# `make test`).
if ! probe="$(gdb -q -batch -ex run --args /bin/true 2>&1)" || ! grep -q "exited normally" <<<"$probe"; then
    echo "fork-check: NOT RUN: gdb cannot run a process on this machine (ptrace refused?):"
    grep -v "^warning: " <<<"$probe" | tail -3
    exit 0
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/fork-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cat >"$work/commands" <<'GDB'
set pagination off
set breakpoint pending on
set detach-on-fork on
set follow-fork-mode child
catch fork
run
delete 1
break swift::MetadataAllocator::Allocate
break swift_getTypeByMangledName
break swift_getTypeByMangledNameInContext
break swift_getTypeByMangledNameInContext2
break swift_getTypeByMangledNameInContextInMetadataState
break swift_getTypeByMangledNameInContextInMetadataState2
commands 2-7
echo FORK-CHECK: the child asked the runtime for a type\n
bt 12
kill
quit 1
end
continue
GDB

failed=0
for test in "${tests[@]}"; do
    out="$work/out"
    status=0
    timeout 600 gdb -q -batch -x "$work/commands" --args "$binary" --testing-library swift-testing --filter "$test" \
        >"$out" 2>&1 || status=$?
    if grep -q "FORK-CHECK:" "$out"; then
        echo "fork-check: $test: a child handler asked the runtime for a type:"
        grep -A14 "FORK-CHECK:" "$out" | grep -v "^During symbol"
        failed=1
    elif ! grep -q "Inferior 2 (process [0-9]*) exited normally" "$out"; then
        echo "fork-check: $test: no forked child ran to its end under gdb (gdb status $status):"
        grep -v "^During symbol\|^warning: \|^\[New Thread\|^\[Thread .* exited\]" "$out" | tail -20
        failed=1
    else
        echo "fork-check: $test: the child got past the fork handlers without asking the runtime for a type"
    fi
done
exit $failed
