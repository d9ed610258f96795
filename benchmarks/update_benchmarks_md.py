#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: 2026 The Threading authors
"""Pastes the latest bench results into BENCHMARKS.md.

Usage (from the repository root):
    swift run --package-path benchmarks -c release bench --output benchmarks/results
    for f in locks once threadlocal queues rcu handoff threads; do
        swift run --package-path benchmarks -c release bench $f --output benchmarks/results/$f --seconds 0.5 --repeat 5
    done
    python3 benchmarks/update_benchmarks_md.py [benchmarks/results]

Reads report.json and report.txt from the results folder, computes the target ratios from the JSON (the
per-primitive targets from the locks, once, threadlocal and handoff subfolders' report.json; a target whose family is
missing is listed as "not measured"), adds each family found in a subfolder (report.json + report.txt), and replaces
everything between the `<!-- results:begin -->` and `<!-- results:end -->` markers of BENCHMARKS.md, and the machine
table and the headline table between their own markers (`machine`, `headline`). Every ratio is
ours / peer in ops/s from the same run, so above 1 means ours is ahead (the rows marked "/ours" say otherwise).
Each run's header names the machine and the build the report recorded ("not recorded" for a field an older report
lacks).
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "benchmarks", "results")
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
# The families whose report.json the targets read (subfolders of the results folder).
GOAL_FAMILIES = ("locks", "once", "threadlocal", "handoff")
# Each primitive against its closest peer, one row per thread count: (family, ours, peer, the row's text,
# goal); a goal of None is information only. Every family measures ops/s, so the ratio is ours / peer.
PRIMITIVE_GOALS = (
    ("locks", "recursivelock", "nsrecursivelock", "RecursiveLock >= NSRecursiveLock", 1.0),
    ("locks", "recursivelock", "pthread-recursive-mutex", "RecursiveLock >= pthread_mutex (recursive)", 1.0),
    ("locks", "rwlock", "pthread-rwlock", "ReadWriteLock write >= pthread_rwlock write", 1.0),
    ("locks", "semaphore", "dispatch-semaphore", "Semaphore >= DispatchSemaphore", 1.0),
    ("locks", "spinlock", "mutexlock", "SpinLock >= MutexLock", 1.0),
    ("locks", "lockedvalue", "nio-lockedvaluebox", "LockedValue >= NIOLockedValueBox", 1.0),
    ("locks", "lockedvalue", "sync-mutex", "LockedValue >= Synchronization.Mutex", 1.0),
    ("once", "once", "pthread-once", "Once >= pthread_once", 1.0),
    ("once", "once", "static-let", "Once >= Swift static let", 1.0),
    ("threadlocal", "threadlocal", "pthread-getspecific", "ThreadLocal >= pthread_getspecific", 1.0),
    ("threadlocal", "threadlocal", "nio-tsv", "ThreadLocal >= NIO ThreadSpecificVariable", 1.0),
    ("handoff", "semaphore", "dispatch-semaphore", "Semaphore pair >= DispatchSemaphore pair", 1.0),
    ("handoff", "condition", "pthread-cond", "ConditionVariable >= pthread_cond", 1.0),
    ("handoff", "condition", "nscondition", "ConditionVariable >= NSCondition", 1.0),
    ("handoff", "monitor", "nsconditionlock", "Monitor >= NSConditionLock", 1.0),
)
# SpinLock is expected level with MutexLock uncontended only: its contended rows are information.
UNCONTENDED_ONLY = {("locks", "spinlock", "mutexlock")}


def cells(study, threads):
    return {c["id"]: c for c in study["results"] if c["threads"] == threads and c["valid"]}


def best(study, threads, kind, ids=None):
    pool = [c for c in cells(study, threads).values() if c["kind"] == kind and (ids is None or c["id"] in ids)]
    return max(pool, key=lambda c: c["opsPerSecond"]) if pool else None


def ratio(a, b):
    return a["opsPerSecond"] / b["opsPerSecond"] if a and b and b["opsPerSecond"] > 0 else None


def fmt(value, goal, higher=True):
    if value is None:
        return "not measured", "n/a"
    if goal is None:
        return f"{value:.2f}x", "information"
    ok = value >= goal if higher else value <= goal
    shown = f"{value:.3f}x" if abs(value - goal) < 0.01 else f"{value:.2f}x"
    return shown, "met" if ok else "NOT met"


def threads_label(family, t):
    """"1 thread", "4 threads"; the handoff family's threads come in pairs."""
    label = f"{t} thread{'' if t == 1 else 's'}"
    if family == "handoff":
        label += f" ({max(t // 2, 1)} pair{'' if t // 2 <= 1 else 's'})"
    return label


def primitive_goals(studies):
    """Each primitive against each of its peers at every thread count of its family's run."""
    rows = []
    for family, ours, peer, text, goal in PRIMITIVE_GOALS:
        study = studies.get(family)
        if not study:
            rows.append((f"`bench {family}`: {text}", *fmt(None, goal), f"no {family}/report.json"))
            continue
        for t in study["threads"]:
            c = cells(study, t)
            row_goal = goal if (family, ours, peer) not in UNCONTENDED_ONLY or t == 1 else None
            shown = text if row_goal is not None else text.replace(" >= ", " vs ")
            value, verdict = fmt(ratio(c.get(ours), c.get(peer)), row_goal)
            rows.append((f"{study['title']}, {threads_label(family, t)}: {shown}", value, verdict, ""))
    return rows


def goals(report):
    studies = {s["id"]: s for s in report["studies"]}
    rows = []
    for sid, goal in (("cache-r95", 3.0), ("cache-r100", 4.0)):
        study = studies.get(sid)
        if not study:
            continue
        for t in [t for t in study["threads"] if t >= 2]:
            ours, peer = best(study, t, "ours"), best(study, t, "peer")
            value, verdict = fmt(ratio(ours, peer), goal)
            who = f"{ours['strategy']} vs {peer['strategy']}" if ours and peer else ""
            rows.append((f"{study['title']}, {t} threads: best ours >= {goal:g}x best peer", value, verdict, who))
    # NIOLockedValueBox is "nio-locked-value-box" in the cache study and "nio-lockedvaluebox" in bench locks.
    lock_peers = {"nslock", "nsrecursivelock", "sync-mutex", "nio-lock", "nio-locked-value-box", "nio-lockedvaluebox",
                  "dispatch-semaphore", "pthread-rwlock", "pthread-mutex"}
    for sid in ("cache-r95", "cache-r50", "cache-r100", "locks"):
        study = studies.get(sid)
        if not study:
            continue
        for t in study["threads"]:
            mine = cells(study, t).get("mutexlock")
            peer = best(study, t, "peer", lock_peers)
            value, verdict = fmt(ratio(mine, peer), 1.0)
            who = f"vs {peer['strategy']}" if peer else ""
            rows.append((f"{study['title']}, {t} thread{'' if t == 1 else 's'}: MutexLock >= best peer lock", value, verdict, who))
    # Every primitive at least its closest peer (bench locks, once, threadlocal, handoff), and ReadWriteLock at least
    # 2x pthread_rwlock on read-mostly work (cache study, 95 % and 100 % reads).
    rows += primitive_goals(studies)
    for sid in ("cache-r95", "cache-r100"):
        study = studies.get(sid)
        if not study:
            continue
        for t in [t for t in study["threads"] if t >= 2]:
            c = cells(study, t)
            value, verdict = fmt(ratio(c.get("rwlock"), c.get("pthread-rwlock")), 2.0)
            rows.append((f"{study['title']}, {t} threads: ReadWriteLock >= 2x pthread_rwlock", value, verdict, ""))
    for sid in ("cache-r95", "cache-r50", "cache-r100"):
        study = studies.get(sid)
        if not study:
            continue
        for t in [t for t in study["threads"] if t >= 2]:
            c = cells(study, t)
            value, verdict = fmt(ratio(c.get("serialqueue-sync"), c.get("dispatch-serial-sync")), 10.0)
            rows.append((f"{study['title']}, {t} threads: SerialQueue sync >= 10x DispatchQueue serial sync",
                         value, verdict, ""))
            value, verdict = fmt(ratio(c.get("mutexlock"), c.get("serialqueue-sync")), 3.0, higher=False)
            rows.append((f"{study['title']}, {t} threads: SerialQueue sync within 3x of MutexLock (MutexLock/ours)",
                         value, verdict, ""))
            value, verdict = fmt(ratio(c.get("concurrentqueue-barrier"), c.get("dispatch-concurrent-barrier")), 5.0)
            rows.append((f"{study['title']}, {t} threads: ConcurrentQueue+barrier >= 5x Dispatch's",
                         value, verdict, ""))
    for sid in ("cache-r95", "cache-r50", "cache-r100"):
        study = studies.get(sid)
        if not study or 1 not in study["threads"]:
            continue
        ours, floor = best(study, 1, "ours"), cells(study, 1).get("cas-spin")
        slower = ratio(floor, ours)
        value, verdict = fmt(slower, 1.1, higher=False)
        who = f"{ours['strategy']} vs C CAS spin" if ours else ""
        rows.append((f"{study['title']}, 1 thread: best ours within 1.1x of the CAS floor (floor/ours)",
                     value, verdict, who))
    return rows


def provenance(report):
    """The machine and build lines of a report; a field an older report lacks is said to be not recorded."""
    cpus = report["cpus"]
    machine = f"{report.get('cpuModel') or 'CPU model not recorded'}, {cpus} CPU{'' if cpus == 1 else 's'}, " \
              f"{report['system']}"
    build = f"{report['build']} build, commit {report.get('commit') or 'not recorded'}, " \
            f"Swift {report.get('swiftVersion') or 'not recorded'}, Threading {report['version']}"
    load = report.get("loadAverage") or "not recorded"
    return f"Machine: {machine}; load average {load}. Build: {build}."


def machine_table(report, families):
    """The machine-and-build table of BENCHMARKS.md: the default study's run, then each family's run."""
    def row(name, r):
        cpus = r["cpus"]
        return (f"| {name} | {r.get('cpuModel') or 'not recorded'} | {cpus} | {r.get('kernel') or r['system']} | "
                f"{r['build']}, Swift {r.get('swiftVersion') or 'not recorded'}, commit "
                f"{r.get('commit') or 'not recorded'} | {r['date']} | {r.get('loadAverage') or 'not recorded'} |")
    out = ["| run | CPU model | CPUs | kernel | build | date | load average |", "|---|---|---|---|---|---|---|",
           row("`bench` (cache study)", report)]
    out += [row(f"`bench {name}`", sub) for name, sub in families]
    return out


def headline_table(report):
    """Best of ours over the best peer, per read ratio and thread count, from the default study."""
    studies = [s for s in report["studies"] if s["family"] == "cache"]
    if not studies:
        return ["(no cache study in this report)"]
    threads = studies[0]["threads"]
    out = ["| keys, reads | " + " | ".join(f"{t} thread{'' if t == 1 else 's'}" for t in threads) + " |",
           "|---|" + "---|" * len(threads)]
    for s in studies:
        cells_text = []
        for t in threads:
            ours, peer = best(s, t, "ours"), best(s, t, "peer")
            value = ratio(ours, peer)
            cells_text.append(f"**{value:.2f}x** {ours['strategy']} vs {peer['strategy']}" if value else "n/a")
        reads = float(s["parameters"].get("read ratio", "nan")) * 100
        # The shape: `Int` keys and values (the flat table) or `String` keys and class values (a page cache).
        keys = "`String` keys" if s["parameters"].get("shape") == "string" else "`Int` keys"
        out.append(f"| {keys}, {reads:.0f} % | " + " | ".join(cells_text) + " |")
    return out


def replace_between(text, name, lines):
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if begin not in text:
        return text
    start, stop = text.index(begin) + len(begin), text.index(end)
    return text[:start] + "\n" + "\n".join(lines) + "\n" + text[stop:]


def with_family_studies(report, families=GOAL_FAMILIES):
    """The report with the studies of each family subfolder's report.json (when present) appended, for goals()."""
    merged = dict(report)
    merged["studies"] = list(report["studies"])
    for family in families:
        path = os.path.join(RESULTS, family, "report.json")
        if os.path.isfile(path):
            with open(path) as f:
                merged["studies"] += json.load(f)["studies"]
    return merged


def main():
    with open(os.path.join(RESULTS, "report.json")) as f:
        report = json.load(f)
    with open(os.path.join(RESULTS, "report.txt")) as f:
        table = f.read()
    rel = os.path.relpath(RESULTS, ROOT)
    out = [BEGIN, "", f"Produced by `{report['command']}` on {report['date']}.", "", provenance(report), "",
           "### Targets (ratios from this run)", "",
           "| target | measured | verdict | strategies |", "|---|---|---|---|"]
    # The MutexLock and per-primitive targets also cover `bench locks`, `once`, `threadlocal` and `handoff`, whose
    # results live in their own subfolders.
    for goal, value, verdict, who in goals(with_family_studies(report)):
        out.append(f"| {goal} | {value} | {verdict} | {who} |")
    out += ["", "### Summary lines", "", "```"]
    out += [s["summary"] for s in report["studies"]]
    out += ["```", "", "### Charts", ""]
    for s in report["studies"]:
        if os.path.isfile(os.path.join(RESULTS, f"{s['id']}-ratio.svg")):
            out += [f"![{s['title']}: ours over the best peer]({rel}/{s['id']}-ratio.svg)", ""]
        out += [f"![{s['title']}: throughput by family]({rel}/{s['id']}.svg)", ""]
    out += ["### Full table", "", "```", table.rstrip(), "```", ""]
    families = []
    for family in sorted(os.listdir(RESULTS)):
        folder = os.path.join(RESULTS, family)
        if not os.path.isfile(os.path.join(folder, "report.json")):
            continue
        with open(os.path.join(folder, "report.json")) as f:
            sub = json.load(f)
        families.append((family, sub))
        with open(os.path.join(folder, "report.txt")) as f:
            sub_table = f.read()
        out += [f"### `bench {family}`", "", f"Produced by `{sub['command']}` on {sub['date']}.", "",
                provenance(sub), "", "```"]
        out += [s["summary"] for s in sub["studies"]]
        out += ["```", ""]
        # The blocked-queues census counts threads: it has no chart.
        for s in sub["studies"]:
            if any(c.get("census") for c in s["results"]):
                continue
            if os.path.isfile(os.path.join(folder, f"{s['id']}-ratio.svg")):
                out += [f"![{s['title']}: ours over the best peer]({rel}/{family}/{s['id']}-ratio.svg)", ""]
            out += [f"![{s['title']}]({rel}/{family}/{s['id']}.svg)", ""]
        out += ["<details><summary>full table</summary>", "", "```", sub_table.rstrip(), "```", "", "</details>", ""]
    out += [END]
    path = os.path.join(ROOT, "BENCHMARKS.md")
    with open(path) as f:
        text = f.read()
    start, stop = text.index(BEGIN), text.index(END) + len(END)
    text = text[:start] + "\n".join(out) + text[stop:]
    text = replace_between(text, "machine", machine_table(report, families))
    text = replace_between(text, "headline", headline_table(report))
    with open(path, "w") as f:
        f.write(text)
    print(f"updated {path} from {RESULTS}")


if __name__ == "__main__":
    main()
