#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: 2026 The Threading authors
"""Writes every generated benchmark text of the repository from the committed results.

Usage (from the repository root):
    swift run --package-path benchmarks -c release bench --output benchmarks/results --seconds 0.5 --repeat 5
    for f in locks once threadlocal queues rcu handoff threads; do
        swift run --package-path benchmarks -c release bench $f --output benchmarks/results/$f --seconds 0.5 --repeat 5
    done
    python3 benchmarks/update_benchmarks_md.py            # rewrite the generated texts
    python3 benchmarks/update_benchmarks_md.py --check    # fail when a committed copy differs (CI)

What it writes, from report.json/report.txt of the results folder and its subfolders:
- `benchmarks/results/TABLES.md`, the whole file: the machine and build of every run, the headline table, the targets
  (ratios of this run against their goals), every study's summary lines, charts and full table, and the 16-CPU runs
  (`many-cores-16/<family>/`, `http-16/`).
- the decision table, from its source `benchmarks/decision-table.md`, between the `<!-- decision-table:begin -->` and
  `<!-- decision-table:end -->` markers of README.md and of the Locks article: both copies are the same bytes, and
  nobody edits them by hand (edit the source, then run this script).
- one figure line per question of BENCHMARKS.md, between `<!-- figure:<row>:begin -->` and `<!-- figure:<row>:end -->`:
  the figure column of that row of the decision table, so a figure is written in one place.

A figure in the source is either text (a measurement that is no committed report, such as interleaved rounds, with
its date and machine) or a placeholder computed from a committed report, so that it moves when the results do:
    {{r DIR STUDY T A B}}            ratio of strategy A over strategy B at T threads, "4.14x"
    {{range DIR STUDY T1,T2,.. A B}} the lowest and the highest of those ratios, "0.54x to 0.92x"
    {{list DIR STUDY T1,T2,.. A B}}  each of them, "0.95x, 0.93x, 0.87x, 1.20x"
    {{name DIR STUDY T X}}           the strategy's display name, "NSRecursiveLock"
DIR is the report's folder under benchmarks/results (`.` for the cache study), STUDY a study id of its report.json.
A and B are strategy ids, or `ours*` (the best valid strategy of ours), `peer*` (the best valid peer) or `lock*`
(the best valid lock of any library, ours included, other than A). Every ratio is ours / peer in ops/s from the same
run, so above 1 means ours is ahead.
"""
import difflib
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
TABLES = os.path.join(RESULTS, "TABLES.md")
DECISIONS = os.path.join(ROOT, "benchmarks", "decision-table.md")
# The files that carry the decision table between its markers, and the page that carries the figure lines.
TABLE_COPIES = ("README.md", os.path.join("Sources", "Threading", "Threading.docc", "Locks.md"))
PAGE = "BENCHMARKS.md"
# The 2-CPU families of the machine table: each subfolder of the results with a report.json of its own.
SIXTEEN_CPUS = ("many-cores-16", "http-16")
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
# Every lock of any library, ours included (`lock*` in a placeholder): the cache study's and `bench locks`' ids.
LOCKS = {"mutexlock", "mutexlock-membarrier", "lockedvalue", "recursivelock", "rwlock", "spinlock", "monitor",
         "semaphore", "nslock", "nsrecursivelock", "sync-mutex", "nio-lock", "nio-locked-value-box",
         "nio-lockedvaluebox", "pthread-rwlock", "pthread-mutex", "pthread-recursive-mutex", "dispatch-semaphore"}


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
    """The machine-and-build table: the default study's run, then each family's run."""
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


def read(path):
    with open(path) as f:
        return f.read()


def load_json(path):
    with open(path) as f:
        return json.load(f)


def family_section(heading, folder, sub, level="##"):
    """One run's section of TABLES.md: command, machine, summary lines, charts, full table."""
    rel = os.path.relpath(folder, RESULTS)
    prefix = "" if rel == "." else rel + "/"
    out = [f"{level} {heading}", "", f"Produced by `{sub['command']}` on {sub['date']}.", "", provenance(sub), "",
           "```"]
    out += [s["summary"] for s in sub["studies"]]
    out += ["```", ""]
    # The blocked-queues census counts threads: it has no chart.
    for s in sub["studies"]:
        if any(c.get("census") for c in s["results"]):
            continue
        if os.path.isfile(os.path.join(folder, f"{s['id']}-ratio.svg")):
            out += [f"![{s['title']}: ours over the best peer]({prefix}{s['id']}-ratio.svg)", ""]
        if os.path.isfile(os.path.join(folder, f"{s['id']}.svg")):
            out += [f"![{s['title']}: throughput by family]({prefix}{s['id']}.svg)", ""]
    out += ["<details><summary>full table</summary>", "", "```", read(os.path.join(folder, "report.txt")).rstrip(),
            "```", "", "</details>", ""]
    return out


def tables_md():
    """The whole of benchmarks/results/TABLES.md."""
    report = load_json(os.path.join(RESULTS, "report.json"))
    families = []
    for family in sorted(os.listdir(RESULTS)):
        if family in SIXTEEN_CPUS or not os.path.isfile(os.path.join(RESULTS, family, "report.json")):
            continue
        families.append((family, load_json(os.path.join(RESULTS, family, "report.json"))))
    out = ["<!-- Generated by benchmarks/update_benchmarks_md.py from the reports of this folder: do not edit. -->", "",
           "# Benchmark results: the full tables", "",
           "Every table of the committed runs, generated from the `report.json` and `report.txt` files of this folder. "
           "What each run answers, and what its figures mean, is on [BENCHMARKS.md](../../BENCHMARKS.md); how the "
           "figures are taken is under \"Methodology\" there.", "",
           "## Machines and builds", "",
           "The 2-CPU runs: a release build on a virtual machine shared with other work (a load average above 2 "
           "means the study's own threads or other processes competed for the cores). The 16-CPU runs are listed "
           "under [16 CPUs](#16-cpus).", ""]
    out += machine_table(report, families)
    out += ["", "## Headline: the cache study", "",
            "The best strategy of ours over the best valid peer at each thread count, same run.", ""]
    out += headline_table(report)
    out += ["", "## Targets", "",
            "The ratios of these runs against the project's goals for each primitive.", "",
            "| target | measured | verdict | strategies |", "|---|---|---|---|"]
    for goal, value, verdict, who in goals(with_family_studies(report)):
        out.append(f"| {goal} | {value} | {verdict} | {who} |")
    out += [""]
    out += family_section("bench (the cache study)", RESULTS, report)
    for family, sub in families:
        out += family_section(f"bench {family}", os.path.join(RESULTS, family), sub)
    out += ["## 16 CPUs", "",
            "`scripts/bench-many-cores.sh` on a 16-CPU machine (`many-cores-16/`; its `machine.txt` describes the "
            "machine), and `bench http` on the same machine (`http-16/`, whose README gives the rounds). A second "
            "run of the plan, kept as text tables only, is in `many-cores-16-second-run/`.", ""]
    many = os.path.join(RESULTS, "many-cores-16")
    for family in sorted(os.listdir(many)) if os.path.isdir(many) else []:
        folder = os.path.join(many, family)
        if os.path.isfile(os.path.join(folder, "report.json")):
            out += family_section(f"16 CPUs: bench {family}", folder, load_json(os.path.join(folder, "report.json")),
                                  "###")
    http = os.path.join(RESULTS, "http-16")
    if os.path.isfile(os.path.join(http, "report.json")):
        out += family_section("16 CPUs: bench http", http, load_json(os.path.join(http, "report.json")), "###")
    return "\n".join(out).rstrip() + "\n"


# The decision table.

class Reports:
    """The committed reports, loaded once, for the placeholders."""

    def __init__(self):
        self.cache = {}

    def study(self, folder, sid):
        if folder not in self.cache:
            path = os.path.join(RESULTS, folder, "report.json")
            if not os.path.isfile(path):
                raise SystemExit(f"update_benchmarks_md: no report {os.path.relpath(path, ROOT)}")
            self.cache[folder] = {s["id"]: s for s in load_json(path)["studies"]}
        studies = self.cache[folder]
        if sid not in studies:
            raise SystemExit(f"update_benchmarks_md: no study {sid} in {folder}/report.json")
        return studies[sid]

    def cell(self, study, t, which, other=None):
        c = cells(study, t)
        if which == "ours*":
            found = best(study, t, "ours")
        elif which == "peer*":
            found = best(study, t, "peer")
        elif which == "lock*":
            pool = [x for x in c.values() if x["id"] in LOCKS and x["id"] != other]
            found = max(pool, key=lambda x: x["opsPerSecond"]) if pool else None
        else:
            found = c.get(which)
        if found is None:
            raise SystemExit(f"update_benchmarks_md: no valid {which} at {t} threads in {study['id']}")
        return found


def shown(value):
    return f"{value:.1f}x" if value >= 10 else f"{value:.2f}x"


def expand(text, reports):
    """Replaces each {{...}} placeholder of a figure with the value computed from the committed reports."""
    def one(match):
        op, *args = match.group(1).split()
        if op == "name":
            folder, sid, t, x = args
            study = reports.study(folder, sid)
            return reports.cell(study, int(t), x)["strategy"]
        folder, sid, threads, a, b = args
        study = reports.study(folder, sid)
        values = []
        for t in (int(t) for t in threads.split(",")):
            ours = reports.cell(study, t, a)
            values.append(ratio(ours, reports.cell(study, t, b, other=ours["id"])))
        if op == "r":
            return shown(values[0])
        if op == "range":
            return f"{shown(min(values))} to {shown(max(values))}"
        if op == "list":
            return ", ".join(shown(v) for v in values)
        raise SystemExit(f"update_benchmarks_md: unknown placeholder {{{{{match.group(1)}}}}}")
    return re.sub(r"\{\{([^}]*)\}\}", one, text)


def decision_rows():
    """The rows of benchmarks/decision-table.md: blocks of `key: value` lines, one block per `## <id>`."""
    rows, current, key = [], None, None
    for line in read(DECISIONS).splitlines():
        if line.startswith("## "):
            current = {"id": line[3:].strip()}
            rows.append(current)
            key = None
        elif current is None or line.startswith("<!--") or not line.strip():
            continue
        elif re.match(r"^(workload|strategy|why|figure):", line):
            key, value = line.split(":", 1)
            current[key] = value.strip()
        elif key:
            current[key] += " " + line.strip()
    for row in rows:
        missing = [k for k in ("workload", "strategy", "why", "figure") if k not in row]
        if missing:
            raise SystemExit(f"update_benchmarks_md: row {row['id']} of {DECISIONS} lacks {', '.join(missing)}")
    return rows


def decision_table(rows):
    out = ["| workload | strategy | why | the figure behind it |", "|---|---|---|---|"]
    out += [f"| {r['workload']} | {r['strategy']} | {r['why']} | {r['figure']} |" for r in rows]
    return out


def replace_between(text, name, lines, path):
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if begin not in text or end not in text:
        raise SystemExit(f"update_benchmarks_md: {path} lacks the {begin} ... {end} markers")
    start, stop = text.index(begin) + len(begin), text.index(end)
    return text[:start] + "\n" + "\n".join(lines) + "\n" + text[stop:]


def generated():
    """Every generated file's expected text: {path relative to the root: text}."""
    reports = Reports()
    rows = decision_rows()
    for row in rows:
        row["figure"] = expand(row["figure"], reports)
    files = {os.path.relpath(TABLES, ROOT): tables_md()}
    table = decision_table(rows)
    for path in TABLE_COPIES:
        files[path] = replace_between(read(os.path.join(ROOT, path)), "decision-table", table, path)
    page = read(os.path.join(ROOT, PAGE))
    for name in re.findall(r"<!-- figure:([\w-]+):begin -->", page):
        row = next((r for r in rows if r["id"] == name), None)
        if row is None:
            raise SystemExit(f"update_benchmarks_md: {PAGE} names figure:{name}, which {DECISIONS} lacks")
        page = replace_between(page, f"figure:{name}", [f"**The figure** (the decision table's): {row['figure']}"],
                               PAGE)
    files[PAGE] = page
    return files


def main(argv):
    check = "--check" in argv
    unknown = [a for a in argv if a != "--check"]
    if unknown:
        raise SystemExit(f"usage: {sys.argv[0]} [--check]")
    stale = []
    for path, text in generated().items():
        full = os.path.join(ROOT, path)
        current = read(full) if os.path.isfile(full) else ""
        if current == text:
            continue
        if check:
            stale.append(path)
            diff = difflib.unified_diff(current.splitlines(), text.splitlines(), f"{path} (committed)",
                                        f"{path} (generated)", n=0, lineterm="")
            print("\n".join(list(diff)[:40]))
        else:
            with open(full, "w") as f:
                f.write(text)
            print(f"updated {path}")
    if stale:
        print(f"update_benchmarks_md --check: {len(stale)} file(s) differ from what the committed results and "
              f"benchmarks/decision-table.md generate: {', '.join(stale)}. Run python3 benchmarks/update_benchmarks_md.py "
              "and commit the result.", file=sys.stderr)
        return 1
    if check:
        print("update_benchmarks_md --check: the generated tables, the decision tables and the figure lines match")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
