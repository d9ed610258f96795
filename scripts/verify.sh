#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: 2026 The Threading authors
#
# Checks the Promela models under formal/ with SPIN (`make verify`): every model must verify with zero errors and
# every mutant (a fence or a step removed) must be refuted with a trail. Prints one line per run with the states
# explored and the verdict; exits non-zero when a model fails or a mutant passes. Installs spin and a C compiler
# with apt-get when they are missing and we may (root, or passwordless sudo); otherwise, or when apt-get fails,
# stops with one line saying what to install. Works in a temporary folder: no pan files are left in the tree.
#
# VERIFY_ONLY=<regex>   run only the lines whose "model file: name" matches (e.g. VERIFY_ONLY=^lock.pml)
# VERIFY_TRAILS=1       print the last steps of each mutant's counterexample (spin -t)
# VERIFY_KEEP=1         keep the temporary folder (its path is printed)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
models="$root/formal"

have_tools() {
    command -v spin >/dev/null 2>&1 && command -v "${CC:-cc}" >/dev/null 2>&1
}

ensure_tools() {
    have_tools && return 0
    local hint="install spin and gcc (Debian/Ubuntu: apt-get install spin gcc)"
    if command -v apt-get >/dev/null 2>&1; then
        local SUDO=""
        if [ "$(id -u)" -ne 0 ]; then
            if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO="none"; fi
        fi
        if [ "$SUDO" != "none" ]; then
            echo "spin or a C compiler is missing: installing them with apt-get" >&2
            export DEBIAN_FRONTEND=noninteractive
            local log
            log="$(mktemp "${TMPDIR:-/tmp}/verify-tools.XXXXXX" 2>/dev/null || echo /dev/null)"
            # A failure here (no network, locked dpkg, unknown package) must not end the script before its message.
            $SUDO apt-get update -qq >>"$log" 2>&1 || true
            local packages=(spin)
            command -v "${CC:-cc}" >/dev/null 2>&1 || packages+=(gcc)
            $SUDO apt-get install -y -qq "${packages[@]}" >>"$log" 2>&1 || true
            if have_tools; then
                [ "$log" = /dev/null ] || rm -f "$log"
                return 0
            fi
            [ "$log" = /dev/null ] || hint="$hint (apt-get could not install them; its output is in $log)"
        fi
    fi
    echo "error: the formal models need spin (>= 6) and a C compiler: $hint" >&2
    exit 1
}

ensure_tools

work="$(mktemp -d "${TMPDIR:-/tmp}/threading-verify.XXXXXX")"
if [ "${VERIFY_KEEP:-0}" = 1 ]; then
    echo "work folder: $work"
else
    trap 'rm -rf "$work"' EXIT
fi

# Each pan run: at most this many seconds, this much memory (MiB), this search depth.
PAN_SECONDS="${PAN_SECONDS:-300}"
PAN_MEMORY_MB="${PAN_MEMORY_MB:-2048}"
PAN_DEPTH="${PAN_DEPTH:-200000}"

bad=0
runs=0

# check NAME MODEL MODE EXPECT [SPIN -D FLAGS...]
#   MODE: safety (assertions + invalid end states), bitstate (the same checks as a bitstate search: a 256 MiB hash
#   array instead of stored states, for configurations whose full state space needs gigabytes; it may miss states,
#   so a pass says "no error found", not "verified"), ltl (the model's `ltl` claims, -a, weak fairness) or np
#   (non-progress cycles, -l, weak fairness). EXPECT: pass (zero errors) or fail (errors > 0 and a trail).
check() {
    local name="$1" model="$2" mode="$3" expect="$4"
    shift 4
    if [ -n "${VERIFY_ONLY:-}" ] && ! [[ "$model: $name" =~ $VERIFY_ONLY ]]; then return 0; fi
    runs=$((runs + 1))
    local dir="$work/$runs-${name//[^A-Za-z0-9_.-]/_}"
    mkdir -p "$dir"
    cp "$models/$model" "$dir/"
    local ccflags=(-O2 -w -DVECTORSZ=4096 "-DMEMLIM=$PAN_MEMORY_MB" -DNFAIR=4)
    local panflags=("-m$PAN_DEPTH" -c1)
    case "$mode" in
        safety) ccflags+=(-DSAFETY -DNOCLAIM) ;;
        bitstate) ccflags+=(-DSAFETY -DNOCLAIM -DBITSTATE) panflags+=(-w31) ;;
        ltl) panflags+=(-a -f) ;;
        np) ccflags+=(-DNP -DNOCLAIM) panflags+=(-l -f) ;;
        *) echo "verify.sh: unknown mode $mode" >&2; exit 2 ;;
    esac
    local verdict stored="?" transitions="?" errors=""
    if ! (cd "$dir" && spin -a "$@" "$model" >spin.log 2>&1); then
        verdict="FAILED (spin -a: $(grep -m1 -i error "$dir/spin.log" || tail -n1 "$dir/spin.log"))"
    elif ! (cd "$dir" && "${CC:-cc}" "${ccflags[@]}" -o pan pan.c >cc.log 2>&1); then
        verdict="FAILED (cc: $(head -n1 "$dir/cc.log"))"
    else
        (cd "$dir" && timeout "$PAN_SECONDS" ./pan "${panflags[@]}" >pan.log 2>&1) || true
        errors="$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$dir/pan.log" | head -n1)"
        stored="$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$dir/pan.log" | head -n1)"
        transitions="$(sed -n 's/^ *\([0-9.e+]*\) transitions.*/\1/p' "$dir/pan.log" | head -n1)"
        local truncated=""
        grep -q "max search depth too small" "$dir/pan.log" && truncated=yes
        grep -q "out of memory" "$dir/pan.log" && truncated=yes
        if [ -z "$errors" ]; then
            verdict="FAILED (pan did not finish: $(tail -n1 "$dir/pan.log"))"
        elif [ "$expect" = pass ]; then
            if [ "$errors" = 0 ] && [ -z "$truncated" ] && [ "$mode" = bitstate ]; then
                verdict="no error found (bitstate search)"
            elif [ "$errors" = 0 ] && [ -z "$truncated" ]; then
                verdict="verified"
            elif [ "$errors" = 0 ]; then
                verdict="FAILED (search incomplete: depth or memory limit)"
            else
                verdict="FAILED ($errors error(s): $(grep -m1 '^pan:1:' "$dir/pan.log" || echo see pan output))"
            fi
        else
            if [ "$errors" != 0 ] && [ -f "$dir/$model.trail" ]; then
                verdict="refuted ($(grep -m1 '^pan:1:' "$dir/pan.log" | sed 's/^pan:1: //; s/ (at depth.*//'))"
                if [ "${VERIFY_TRAILS:-0}" = 1 ]; then
                    (cd "$dir" && spin -t -p -g "$@" "$model" 2>&1 | tail -n 25 | sed 's/^/    /')
                fi
            else
                verdict="FAILED (the mutant was not refuted: the model can no longer fail)"
            fi
        fi
    fi
    case "$verdict" in FAILED*) bad=$((bad + 1)) ;; esac
    printf '%-44s %-6s %-4s %11s stored %12s transitions  %s\n' "$name" "$mode" "$expect" "$stored" "$transitions" \
        "$verdict"
}

start=$(date +%s)

# The futex lock (formal/lock.pml): the default (exchange) mode, the membarrier mode, and their mutants.
check "lock exchange" lock.pml safety pass -DRMW_UNLOCK
check "lock exchange" lock.pml ltl pass -DRMW_UNLOCK
check "lock exchange 2 threads x 2 rounds, 2 spins" lock.pml safety pass -DRMW_UNLOCK -DNTHREADS=2 -DROUNDS=2 -DSPINS=2
# Three threads, two rounds each: the smallest configuration in which MUTANT_LEAVE_AFTER_RELEASE loses a wake-up (about
# 135 million states, 7 GB stored even compressed: a bitstate search here; exhaustive by hand with -DCOLLAPSE, see
# formal/README.md).
check "lock exchange 3 threads x 2 rounds" lock.pml bitstate pass -DRMW_UNLOCK -DROUNDS=2
check "lock exchange 3 threads x 2 rounds, hand-off" lock.pml bitstate pass -DRMW_UNLOCK -DROUNDS=2 -DHANDOFF
check "lock exchange, split spin and sleep" lock.pml safety pass -DRMW_UNLOCK -DSPLIT
check "lock exchange, a deadline passes" lock.pml safety pass -DRMW_UNLOCK -DTIMEOUTS=1
check "lock exchange, a deadline passes" lock.pml ltl pass -DRMW_UNLOCK -DTIMEOUTS=1
check "lock exchange, hand-off" lock.pml safety pass -DRMW_UNLOCK -DHANDOFF
check "lock exchange, hand-off" lock.pml ltl pass -DRMW_UNLOCK -DHANDOFF
check "lock exchange, hand-off, a deadline passes" lock.pml safety pass -DRMW_UNLOCK -DHANDOFF -DTIMEOUTS=1
check "lock membarrier" lock.pml safety pass
check "lock membarrier" lock.pml ltl pass
check "lock membarrier 2 threads x 2 rounds" lock.pml safety pass -DNTHREADS=2 -DROUNDS=2
check "lock membarrier 3 threads x 2 rounds" lock.pml bitstate pass -DROUNDS=2
check "lock membarrier, a deadline passes" lock.pml safety pass -DTIMEOUTS=1
check "lock membarrier, hand-off" lock.pml safety pass -DHANDOFF
check "lock exchange, forked child" lock.pml safety pass -DRMW_UNLOCK -DFORKED
check "lock exchange, forked child" lock.pml ltl pass -DRMW_UNLOCK -DFORKED
check "lock membarrier, forked child" lock.pml safety pass -DFORKED
check "lock MUTANT_FORKED_KEEP" lock.pml safety fail -DRMW_UNLOCK -DFORKED -DMUTANT_FORKED_KEEP
check "lock MUTANT_KEEP_SPINNING" lock.pml safety fail -DRMW_UNLOCK -DMUTANT_KEEP_SPINNING
check "lock MUTANT_LATE_SEQUENCE" lock.pml safety fail -DRMW_UNLOCK -DMUTANT_LATE_SEQUENCE
check "lock MUTANT_NO_SEQUENCE" lock.pml safety fail -DRMW_UNLOCK -DMUTANT_NO_SEQUENCE
check "lock MUTANT_WAKE_UNCOUNTED 2 threads x 2 rounds" lock.pml safety fail -DRMW_UNLOCK -DMUTANT_WAKE_UNCOUNTED -DNTHREADS=2 -DROUNDS=2
check "lock MUTANT_RMW_RELAXED" lock.pml safety fail -DMUTANT_RMW_RELAXED
check "lock MUTANT_KEEP_WAKING" lock.pml ltl fail -DRMW_UNLOCK -DMUTANT_KEEP_WAKING
check "lock MUTANT_NO_BARRIER" lock.pml safety fail -DMUTANT_NO_BARRIER
check "lock MUTANT_NO_BARRIER" lock.pml ltl fail -DMUTANT_NO_BARRIER
check "lock MUTANT_HEIR_UNBOUNDED" lock.pml safety fail -DHANDOFF -DMUTANT_HEIR_UNBOUNDED
check "lock MUTANT_LEAVE_KEEP_WAKING" lock.pml safety fail -DRMW_UNLOCK -DMUTANT_LEAVE_KEEP_WAKING
check "lock MUTANT_LEAVE_AFTER_RELEASE 3 threads x 2 rounds" lock.pml safety fail -DRMW_UNLOCK -DROUNDS=2 -DMUTANT_LEAVE_AFTER_RELEASE

# The flat RCU table (formal/rcu_flat.pml).
check "rcu_flat" rcu_flat.pml safety pass
check "rcu_flat" rcu_flat.pml ltl pass
check "rcu_flat MUTANT_RELEASE_ACTIVE" rcu_flat.pml safety fail -DMUTANT_RELEASE_ACTIVE -DNO_RECLAIM
check "rcu_flat MUTANT_NO_WAIT" rcu_flat.pml safety fail -DMUTANT_NO_WAIT -DNO_RECLAIM
check "rcu_flat MUTANT_NO_GRACE" rcu_flat.pml safety fail -DMUTANT_NO_GRACE

# The pool's parker with help offers (formal/parker.pml).
check "parker" parker.pml safety pass
check "parker" parker.pml ltl pass
check "parker 3 barriers, 2 spin rounds" parker.pml safety pass -DNITEMS=3 -DSPIN_ROUNDS=2
check "parker MUTANT_NO_ANNOUNCE" parker.pml safety fail -DMUTANT_NO_ANNOUNCE
check "parker MUTANT_NO_ANNOUNCE" parker.pml ltl fail -DMUTANT_NO_ANNOUNCE
check "parker MUTANT_OFFER_NO_WAKE" parker.pml safety fail -DMUTANT_OFFER_NO_WAKE

# The pool scheduler: local queues, injection, stealing, parking (formal/scheduler.pml).
check "scheduler 2 workers, 2 injected + 1 local" scheduler.pml safety pass
check "scheduler 2 workers, 2 injected + 1 local" scheduler.pml ltl pass
check "scheduler 2 workers, 3 injected, no timeout" scheduler.pml safety pass -DINJECT=3 -DTIMEOUTS=0
check "scheduler MUTANT_NO_RECHECK" scheduler.pml safety fail -DMUTANT_NO_RECHECK
check "scheduler MUTANT_NO_RECHECK" scheduler.pml ltl fail -DMUTANT_NO_RECHECK
check "scheduler MUTANT_STORE_AFTER_UNLOCK" scheduler.pml safety fail -DMUTANT_STORE_AFTER_UNLOCK
check "scheduler MUTANT_STORE_AFTER_UNLOCK" scheduler.pml ltl fail -DMUTANT_STORE_AFTER_UNLOCK
check "scheduler MUTANT_STEAL_NO_LOCK" scheduler.pml safety fail -DMUTANT_STEAL_NO_LOCK

# The concurrent queue's barrier grant with striped readers (formal/barrier.pml).
check "barrier 1 striped reader, sync+async barrier" barrier.pml safety pass
check "barrier 1 striped reader, sync+async barrier" barrier.pml ltl pass
check "barrier 2 striped readers, sync barrier" barrier.pml safety pass -DNREADERS=2 -DNASYNC=0
check "barrier MUTANT_NO_RECHECK" barrier.pml safety fail -DMUTANT_NO_RECHECK
check "barrier MUTANT_LEAVE_NO_PUMP" barrier.pml safety fail -DMUTANT_LEAVE_NO_PUMP
check "barrier MUTANT_LEAVE_NO_PUMP" barrier.pml ltl fail -DMUTANT_LEAVE_NO_PUMP
check "barrier MUTANT_IGNORE_ITEMS" barrier.pml safety fail -DMUTANT_IGNORE_ITEMS

# WorkGroup notification and waiting (formal/workgroup.pml).
check "workgroup" workgroup.pml safety pass
check "workgroup" workgroup.pml ltl pass
check "workgroup MUTANT_NOTIFY_NO_LOCK" workgroup.pml safety fail -DMUTANT_NOTIFY_NO_LOCK
check "workgroup MUTANT_WAKE_EARLY" workgroup.pml safety fail -DMUTANT_WAKE_EARLY
check "workgroup MUTANT_WAKE_EARLY" workgroup.pml ltl fail -DMUTANT_WAKE_EARLY

# The semaphore's wait/post protocol (glibc's sem_t scheme, which sem.c implements; formal/semaphore.pml).
check "semaphore 2 waiters" semaphore.pml safety pass
check "semaphore 2 waiters" semaphore.pml ltl pass
check "semaphore 3 waiters" semaphore.pml safety pass -DNWAITERS=3
check "semaphore 2 waiters, deadline" semaphore.pml safety pass -DTIMEOUTS=1
check "semaphore 2 waiters, deadline" semaphore.pml ltl pass -DTIMEOUTS=1
check "semaphore 3 waiters, deadline" semaphore.pml safety pass -DNWAITERS=3 -DTIMEOUTS=1
check "semaphore MUTANT_WAKE_ON_ZERO" semaphore.pml safety fail -DMUTANT_WAKE_ON_ZERO
check "semaphore MUTANT_WAKE_ON_ZERO" semaphore.pml ltl fail -DMUTANT_WAKE_ON_ZERO

# The futex condition's wait and signal (formal/condition.pml).
check "condition 1 waiter, signal" condition.pml safety pass
check "condition 1 waiter, signal" condition.pml ltl pass
check "condition 1 waiter, signal under the lock" condition.pml safety pass -DSIGNAL_UNDER_LOCK
check "condition 2 waiters, broadcast" condition.pml safety pass -DNWAITERS=2
check "condition 2 waiters, broadcast" condition.pml ltl pass -DNWAITERS=2
check "condition 3 waiters, broadcast under the lock" condition.pml safety pass -DNWAITERS=3 -DSIGNAL_UNDER_LOCK
check "condition MUTANT_CHECK_FIRST" condition.pml safety fail -DMUTANT_CHECK_FIRST
check "condition MUTANT_PLAIN_INCREMENT" condition.pml safety fail -DMUTANT_PLAIN_INCREMENT
check "condition MUTANT_NO_REGISTER" condition.pml safety fail -DMUTANT_NO_REGISTER
check "condition MUTANT_NO_REGISTER" condition.pml ltl fail -DMUTANT_NO_REGISTER

# The reader-writer lock's bias (formal/rwlock.pml).
check "rwlock 2 readers, 1 writer" rwlock.pml safety pass
check "rwlock preferring writers" rwlock.pml safety pass -DPREFER_WRITERS=1
check "rwlock 2 writers, 1 round" rwlock.pml safety pass -DNWRITERS=2 -DROUNDS=1
check "rwlock 3 readers, 1 writer, 1 round" rwlock.pml safety pass -DNREADERS=3 -DROUNDS=1
check "rwlock a writer gives up, 1 round" rwlock.pml safety pass -DTIMEOUTS=1 -DROUNDS=1
check "rwlock MUTANT_NO_RECHECK" rwlock.pml safety fail -DMUTANT_NO_RECHECK
check "rwlock MUTANT_NO_SCAN" rwlock.pml safety fail -DMUTANT_NO_SCAN
check "rwlock MUTANT_KEEP_REVOKED" rwlock.pml safety fail -DMUTANT_KEEP_REVOKED -DTIMEOUTS=1
check "rwlock MUTANT_NO_DRAIN_WAKE" rwlock.pml safety fail -DMUTANT_NO_DRAIN_WAKE
check "rwlock MUTANT_KEEP_BIAS" rwlock.pml safety fail -DMUTANT_KEEP_BIAS
check "rwlock MUTANT_EARLY_HANDOVER" rwlock.pml safety fail -DMUTANT_EARLY_HANDOVER

end=$(date +%s)
echo "verify: $runs run(s), $bad failed, $((end - start)) s"
[ "$bad" = 0 ]
