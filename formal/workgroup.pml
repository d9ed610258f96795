/* SPDX-License-Identifier: MIT */
/* SPDX-FileCopyrightText: 2026 The Threading authors */

/*
 * WorkGroup notification and waiting: Sources/Threading/Queues/WorkGroup.swift (enter, leave, wait, notify).
 *
 * Modelled steps:
 *   enter()   count.add(1) (no lock).
 *   leave()   under the group's RuntimeLock: old = count.load(); count.subtract(1); when old == 1 take the
 *             notification list and empty it; unlock; when old == 1 count.wake(Int32.max), then submit what was
 *             taken.
 *   notify()  under the lock: count.load() == 0: unlock and submit at once; else append to the list; unlock.
 *   wait()    (no timeout) count.load() == 0: return; else loop: value = count.load(); 0: return; futex wait
 *             while the count equals `value` (compares and sleeps atomically); `PoolCore.willBlock` is not modelled.
 * Scenario: two tasks entered before they start (as `async(group:)` does) and leave; a thread calls notify() and
 * another waits, concurrently; with LATE = 1 one more piece of work enters and leaves at any time (the group is
 * reused: the count may leave zero again).
 *
 * Properties: no lost notify (the notification is submitted exactly once: assertion at the end); it is not
 * submitted before the two tasks entered before notify() have left (assertion); no lost wake-up (the waiter
 * returns: no invalid end state, LTL `progress` under weak fairness); the waiter returns only after a zero count
 * was reached (assertion).
 *
 * Variants (-D):
 *   MUTANT_NOTIFY_NO_LOCK   notify() checks the count and appends without the lock: must fail (lost notify)
 *   MUTANT_WAKE_EARLY       leave() wakes the waiters before it decrements: must fail (lost wake-up)
 */

#ifndef LATE
#define LATE 1
#endif

byte count = 0;
bit glock = 0;
byte listed = 0;          /* notifications in the list */
byte fired = 0;           /* notifications submitted */
byte tasks_left = 0;      /* of the two tasks entered before notify() */
bit reached_zero = 0;     /* a leave took the count to zero */
bit asleep = 0;           /* the waiter sleeps on the count's futex */
bit returned = 0;
byte done = 0;

inline lock() { atomic { !glock -> glock = 1 } }
inline unlock() { glock = 0 }

inline submit() {
    atomic {
        assert(tasks_left == 2);
        fired++
    }
}

inline leave(task) {
    lock();
    old = count;
    assert(old > 0);
#ifdef MUTANT_WAKE_EARLY
    if
    :: old == 1 -> asleep = 0
    :: else
    fi;
#endif
    atomic {
        count--;
        tasks_left = tasks_left + task;
        if
        :: count == 0 -> reached_zero = 1
        :: else
        fi
    };
    taken = 0;
    if
    :: old == 1 -> taken = listed; listed = 0
    :: else
    fi;
    unlock();
    if
    :: old == 1 ->
#ifndef MUTANT_WAKE_EARLY
        asleep = 0;  /* count.wake(Int32.max) */
#endif
        if
        :: taken > 0 -> submit()
        :: else
        fi
    :: else
    fi
}

proctype Task() {
    byte old, taken;
    leave(1);
    done++
}

proctype Late() {
    byte old, taken;
    count++;  /* enter(): the group is reused */
    leave(0);
    done++
}

proctype Notifier() {
#ifndef MUTANT_NOTIFY_NO_LOCK
    lock();
#endif
    if
    :: count == 0 ->
#ifndef MUTANT_NOTIFY_NO_LOCK
        unlock();
#endif
        submit()
    :: else ->
        listed++;
#ifndef MUTANT_NOTIFY_NO_LOCK
        unlock()
#endif
    fi;
    done++
}

proctype Waiter() {
    byte value;
    if
    :: count == 0 -> goto out
    :: else
    fi;
    do
    :: value = count;
        if
        :: value == 0 -> break
        :: else ->
            /* count.wait(expected: value) */
            atomic {
                if
                :: count == value -> asleep = 1
                :: else
                fi
            };
            !asleep
        fi
    od;
out:
    assert(reached_zero);
    returned = 1;
    done++
}

init {
    /* two enter() calls, then the tasks start */
    count = 2;
    atomic {
        run Task();
        run Task();
        run Notifier();
        run Waiter();
#if LATE
        run Late()
#endif
    };
    (done == 4 + LATE);
    assert(fired == 1)
}

ltl progress { <> (returned && done == 4 + LATE) }
