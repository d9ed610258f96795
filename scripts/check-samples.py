#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: 2026 The Threading authors
"""Compiles every ```swift block of README.md, the DocC articles and the doc comments of Sources/Threading against
the library, in Swift 6 mode.

`make samples` runs it; CI too. Each block becomes one module of a scratch package in .build/samples/ that depends
on this checkout by path: its `import` lines go to the top of the file, the rest becomes the body of a function
(`async throws` when it awaits), so fragments compile as written. Names a fragment uses but does not define (the
`url` it downloads, the `Pixels` type it decodes) come from an HTML comment right above the block, which neither
GitHub nor DocC renders:

    <!-- sample-context
    struct Pixels { ... }
    -->

Context goes at file scope, before the function. A sample in a doc comment (`/// ```swift`) is read the same way
with the `/// ` taken off each line, its context from a `/// <!-- sample-context` comment right above it. The advice of every `noasync` message in the sources (the form it
gives for top-level code, else its one code span) is compiled the same way, as top-level code of one `main.swift`.
A block whose first line is `// main.swift` is top-level code: it
becomes the `main.swift` of an executable target as written, so it checks what compiles there (top-level code
picks a synchronous overload over an async one of the same name, so `noasync` advice must name a form of its own).
A block whose first line is `// Package.swift` is a manifest fragment: it is placed in `Package(name:...)` and evaluated with `swift package dump-package`. A block that must not
compile is fenced as ```swift-nocompile (none is, today). Errors point at the Markdown file and line.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRATCH = os.path.join(ROOT, ".build", "samples")
FILES = ["README.md"] + sorted(glob.glob("Sources/Threading/Threading.docc/*.md"))
# The doc comments' samples: what Xcode's quick help and the DocC symbol pages show.
SOURCES = sorted(glob.glob("Sources/Threading/**/*.swift", recursive=True))


DOC_COMMENT = re.compile(r"^\s*/// ?")


def source_lines(path):
    """The lines of `path` as a reader sees them: a Markdown file as it is; a Swift file's doc comments with the
    `/// ` taken off (every other line blank, so that no code of the file reads as a fence)."""
    lines = open(os.path.join(ROOT, path), encoding="utf-8").read().split("\n")
    if not path.endswith(".swift"):
        return lines
    return [DOC_COMMENT.sub("", line, count=1) if DOC_COMMENT.match(line) else "" for line in lines]


def blocks(path):
    """Yields (line of the first code line, code, context) for each ```swift block of `path`."""
    lines = source_lines(path)
    index = 0
    while index < len(lines):
        if lines[index].strip() == "```swift":
            context = []
            back = index - 1
            if back >= 0 and lines[back].strip() == "-->":
                start = back
                while start >= 0 and not lines[start].strip().startswith("<!-- sample-context"):
                    start -= 1
                if start >= 0:
                    context = lines[start + 1:back]
            end = index + 1
            while not lines[end].strip().startswith("```"):
                end += 1
            yield index + 2, lines[index + 1:end], context
            index = end
        index += 1


def swift_module(path, line, code, context):
    if code and code[0].strip() == "// main.swift":
        out = ["import Threading"] + context + [f'#sourceLocation(file: "{path}", line: {line})'] + code
        return "\n".join(out + [""])
    imports = ["import Threading"]
    body = []
    for text in code:
        imported = re.match(r"^\s*(import \w+)\s*(//.*)?$", text)
        if imported:
            if imported.group(1) not in imports:
                imports.append(imported.group(1))
            body.append("")  # keep the line numbers
        else:
            body.append(text)
    effects = "async throws" if re.search(r"\bawait\b", "\n".join(code)) else "throws"
    out = imports + ["", "// Context for the sample (from its sample-context comment)."] + context
    out += [f"func sample() {effects} {{", f'#sourceLocation(file: "{path}", line: {line})']
    out += body + ["#sourceLocation()", "}", ""]
    return "\n".join(out)


# What the advice of the `noasync` messages names, declared as a user's top-level code would have it.
ADVICE_CONTEXT = """let thread = try PosixThread { 1 }
let semaphore = Semaphore(value: 1)
let group = WorkGroup()
let item = WorkItem {}
let once = Once()
let queue = SerialQueue(label: "advice")
let jobQueue = JobQueue(name: "advice")
let job = jobQueue.addJob { _ in }
let pool = WorkerPool(label: "advice")
let timeout = Duration.seconds(1)"""


def noasync_advice():
    """Yields (path, line, statement) for the advice of every `noasync` message in Sources/Threading: the form it
    gives for top-level code when it gives one, else its only code span."""
    for path in sorted(glob.glob("Sources/Threading/**/*.swift", recursive=True)):
        text = open(os.path.join(ROOT, path), encoding="utf-8").read()
        for match in re.finditer(r"noasync,\s*message:\s*\"([^\"]*)\"", text):
            message = match.group(1)
            line = text.count("\n", 0, match.start()) + 1
            top = re.search(r"top-level code[^`]*`([^`]+)`", message)
            spans = re.findall(r"`([^`]+)`", message)
            if top:
                yield path, line, top.group(1)
            elif len(spans) == 1:
                yield path, line, spans[0]
            else:
                yield path, line, None


def advice_module():
    """The top-level `main.swift` that makes every `noasync` advice one statement (see the module docs)."""
    out = ["import Threading", "", ADVICE_CONTEXT, ""]
    problems = []
    for path, line, statement in noasync_advice():
        if statement is None:
            problems.append(f"{path}:{line}: the noasync message names no single form to compile")
            continue
        assign = "" if re.match(r"(for|let|var|if|while)\b", statement) else "_ = "
        out += [f'#sourceLocation(file: "{path}", line: {line})', assign + statement, "#sourceLocation()"]
    return "\n".join(out + [""]), problems


# The package traits of Package.swift, and the packages (and products) of the integrations they enable.
TRAITS = '"LoggingSupport", "MetricsSupport", "ServiceLifecycleSupport"'
INTEGRATIONS = (
    ', .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0")'
    ', .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0")'
    ', .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0")'
)
INTEGRATION_PRODUCTS = (
    ', .product(name: "Logging", package: "swift-log"), .product(name: "Metrics", package: "swift-metrics")'
    ', .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")'
)


def main():
    shutil.rmtree(os.path.join(SCRATCH, "Sources"), ignore_errors=True)
    os.makedirs(SCRATCH, exist_ok=True)
    targets, manifests, count = [], [], 0
    for path in FILES + SOURCES:
        for line, code, context in blocks(path):
            count += 1
            if code and code[0].strip() == "// Package.swift":
                manifests.append((path, line, code))
                continue
            name = "Sample%02d" % count
            top_level = code[0].strip() == "// main.swift"
            os.makedirs(os.path.join(SCRATCH, "Sources", name))
            file_name = "main.swift" if top_level else "sample.swift"
            with open(os.path.join(SCRATCH, "Sources", name, file_name), "w", encoding="utf-8") as out:
                out.write(swift_module(path, line, code, context))
            targets.append((name, top_level))
    advice, problems = advice_module()
    os.makedirs(os.path.join(SCRATCH, "Sources", "NoasyncAdvice"))
    with open(os.path.join(SCRATCH, "Sources", "NoasyncAdvice", "main.swift"), "w", encoding="utf-8") as out:
        out.write(advice)
    targets.append(("NoasyncAdvice", True))
    for problem in problems:
        print(problem, file=sys.stderr)
    # Every trait is on, so the samples of the integrations (the "Running in a service" article) compile too; the
    # integrations' packages are named so that a sample may import their modules, as a service would.
    target_lines = ",\n".join(
        f'        .{"executableTarget" if top_level else "target"}(name: "{name}", '
        'dependencies: [.product(name: "Threading", package: "Threading")' + INTEGRATION_PRODUCTS + '])'
        for name, top_level in targets
    )
    with open(os.path.join(SCRATCH, "Package.swift"), "w", encoding="utf-8") as out:
        out.write(
            "// swift-tools-version:6.1\nimport PackageDescription\n\n"
            "let package = Package(\n"
            '    name: "Samples",\n'
            f'    dependencies: [.package(name: "Threading", path: "{ROOT}", traits: [{TRAITS}]){INTEGRATIONS}],\n'
            f"    targets: [\n{target_lines}\n    ],\n"
            "    swiftLanguageModes: [.v6]\n)\n"
        )
    failed = bool(problems)
    result = subprocess.run(["swift", "build", "--package-path", SCRATCH], capture_output=True, text=True)
    if result.returncode != 0:
        print(result.stdout + result.stderr, file=sys.stderr)
        failed = True
    for path, line, code in manifests:
        folder = os.path.join(SCRATCH, "manifest-%d" % line)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        with open(os.path.join(folder, "Package.swift"), "w", encoding="utf-8") as out:
            out.write("// swift-tools-version:6.1\nimport PackageDescription\n\nlet package = Package(\n")
            out.write('    name: "MyServer",\n' + "\n".join(code[1:]) + "\n)\n")
        check = subprocess.run(["swift", "package", "dump-package"], cwd=folder, capture_output=True, text=True)
        if check.returncode != 0:
            print(f"{path}:{line}: the manifest fragment does not compile\n{check.stderr}", file=sys.stderr)
            failed = True
    print(f"check-samples: {count} samples ({len(targets)} Swift, {len(manifests)} manifest) from {len(FILES)} "
          f"documents and the doc comments of {len(SOURCES)} source files: "
          + ("FAILED" if failed else "all compile"))
    return 1 if failed else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
