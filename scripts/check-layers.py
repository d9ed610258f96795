#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: 2026 The Threading authors
"""Checks that the arrows between the layers of Sources/Threading point one way.

The layers are the table in ARCHITECTURE.md ("## Layers": the rows of `| Layer | Folders and files | ... |`, the
highest layer first). A Swift file may name what its own layer and the layers below it declare; naming a type (or a
top-level function or constant) declared in a layer above is an error, printed as `file:line: names Type (Layer)`.
Comments and the text of string literals are not read (an interpolation is). The deliberate back edges the page
documents and the edges not yet removed are listed, per layer, in the table's "May also name" column (a name listed there
that no file of the layer still names from above is an error too, so the list only shrinks). Every Swift file must
belong to a row.

Exit status: 0 when every arrow points down, 1 when one does not, 2 when the table cannot be read.
`--self-test` checks the checker on a small tree of its own (what it must find, what it must not count).
"""

import os
import re
import sys


def fail_table(message):
    print(f"check-layers: {message}", file=sys.stderr)
    sys.exit(2)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def read_table(table_page):
    """The layers, highest first: a list of (name, rank, [folder or file patterns], {exception names})."""
    with open(table_page, encoding="utf-8") as page:
        text = page.read()
    section = re.search(r"^## Layers\n(.*?)(?=^## )", text, re.S | re.M)
    if not section:
        fail_table("ARCHITECTURE.md has no '## Layers' section")
    rows = []
    in_table = False
    for line in section.group(1).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.startswith("|") else None
        if cells is None:
            if in_table:
                break
            continue
        if not in_table:
            if cells and cells[0] == "Layer":
                in_table = True
            continue
        if set(cells[0]) <= set("-: "):
            continue
        paths = re.findall(r"`([^`]+)`", cells[1])
        exceptions = set(re.findall(r"`([^`]+)`", cells[3])) if len(cells) > 3 else set()
        rows.append((cells[0], paths, exceptions))
    if not rows:
        fail_table("no rows in the layer table of ARCHITECTURE.md")
    layers = []
    for index, (name, paths, exceptions) in enumerate(rows):
        layers.append((name, len(rows) - index, paths, exceptions))
    return layers


def layer_of(relative, layers):
    """The layer of a file (its path relative to Sources/Threading): the row whose path is the longest prefix."""
    best = None
    for layer in layers:
        for path in layer[2]:
            matches = relative == path if not path.endswith("/") else relative.startswith(path)
            if matches and (best is None or len(path) > best[0]):
                best = (len(path), layer)
    return best[1] if best else None


IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def tokens(source):
    """The code of a Swift file as (line, token) pairs: identifiers and braces; comments and string text skipped."""
    out = []
    line = 1
    i = 0
    n = len(source)
    # A stack of modes: "code" (with the parenthesis depth of an interpolation) or "string" (with its delimiter).
    stack = [["code", 0]]
    while i < n:
        mode = stack[-1]
        c = source[i]
        if c == "\n":
            line += 1
        if mode[0] == "string":
            delim = mode[1]
            if c == "\\":
                hashes = delim[: len(delim) - len(delim.lstrip("#"))]
                if source.startswith("\\" + hashes + "(", i):
                    stack.append(["code", 1])
                    i += 1 + len(hashes) + 1
                    continue
                if not hashes:
                    if i + 1 < n and source[i + 1] == "\n":
                        line += 1
                    i += 2
                    continue
            if source.startswith(delim, i):
                stack.pop()
                i += len(delim)
                continue
            i += 1
            continue
        # code
        if source.startswith("//", i):
            end = source.find("\n", i)
            i = n if end < 0 else end
            continue
        if source.startswith("/*", i):
            depth = 0
            while i < n:
                if source.startswith("/*", i):
                    depth += 1
                    i += 2
                elif source.startswith("*/", i):
                    depth -= 1
                    i += 2
                    if depth == 0:
                        break
                else:
                    if source[i] == "\n":
                        line += 1
                    i += 1
            continue
        match = re.match(r'(#*)("""|")', source[i:i + 8])
        if match and (match.group(1) == "" or source[i + len(match.group(1))] == '"'):
            hashes, quote = match.group(1), match.group(2)
            stack.append(["string", quote + hashes])
            i += len(hashes) + len(quote)
            continue
        if c == "(" and len(stack) > 1:
            mode[1] += 1
        elif c == ")" and len(stack) > 1:
            mode[1] -= 1
            if mode[1] == 0:
                stack.pop()
                i += 1
                continue
        if c in "{}":
            out.append((line, c))
            i += 1
            continue
        if c == "." and i + 1 < n and (source[i + 1].isalpha() or source[i + 1] == "_"):
            # A member (`.current`, `.drain`): not a top-level name; skip it.
            ident = IDENT.match(source, i + 1)
            i = ident.end()
            continue
        ident = IDENT.match(source, i)
        if ident and (i == 0 or not (source[i - 1].isalnum() or source[i - 1] == "_")):
            out.append((line, ident.group(0)))
            i = ident.end()
            continue
        i += 1
    return out


DECLARATION = {"class", "struct", "enum", "actor", "protocol", "typealias", "func", "let", "var"}


def declarations(toks):
    """The names a file declares at its top level (types, functions, constants)."""
    names = set()
    depth = 0
    previous = None
    for _, token in toks:
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
        elif depth == 0 and previous in DECLARATION and IDENT.fullmatch(token):
            names.add(token)
        previous = token
    return names


def check(root):
    """The failures of the tree at `root` (its ARCHITECTURE.md and Sources/Threading), and the number of files."""
    sources = os.path.join(root, "Sources", "Threading")
    layers = read_table(os.path.join(root, "ARCHITECTURE.md"))
    files = []
    for directory, _, names in os.walk(sources):
        for name in sorted(names):
            if name.endswith(".swift"):
                path = os.path.join(directory, name)
                files.append((os.path.relpath(path, sources), path))
    files.sort()
    parsed = {}
    declared = {}
    unplaced = []
    for relative, path in files:
        layer = layer_of(relative, layers)
        if layer is None:
            unplaced.append(relative)
            continue
        with open(path, encoding="utf-8") as handle:
            toks = tokens(handle.read())
        parsed[relative] = (layer, toks)
        for name in declarations(toks):
            declared.setdefault(name, []).append((relative, layer))
    failures = []
    for relative in unplaced:
        failures.append(f"Sources/Threading/{relative}: in no row of the layer table of ARCHITECTURE.md")
    used = set()
    for relative, (layer, toks) in parsed.items():
        seen = set()
        for line, token in toks:
            for owner, owner_layer in declared.get(token, ()):
                if owner_layer[1] > layer[1] and token in layer[3]:
                    used.add((layer[0], token))
                elif owner_layer[1] > layer[1] and (line, token) not in seen:
                    seen.add((line, token))
                    failures.append(
                        f"Sources/Threading/{relative}:{line}: names {token} "
                        f"(declared in {owner}, layer {owner_layer[0]}, above this file's layer {layer[0]})"
                    )
    for layer in layers:
        for name in sorted(layer[3]):
            if (layer[0], name) not in used:
                failures.append(
                    f"ARCHITECTURE.md: layer {layer[0]} may also name {name}, but no file of it names it from above "
                    "any more: take it off the table"
                )
    return failures, len(parsed), len(layers)


SELF_TEST_TABLE = """## Layers

| Layer | Folders and files | Holds | May also name |
|---|---|---|---|
| High | `High/` | x | |
| Low | `Low/` | x | `Allowed` |

## Next
"""

SELF_TEST_FILES = {
    "High/Upper.swift": "struct Upper {}\nstruct Allowed {}\nfunc upperHelper() {}\n",
    "Low/Fine.swift": (
        "// Upper in a comment\n/* Upper in a block /* nested */ comment */\n"
        'let text = "Upper in a string"\nlet raw = #"Upper in a raw string"#\n'
        "struct Fine { let a: Allowed? = nil; func f(x: Fine) { _ = x.upperHelper } }\n"
    ),
    "Low/Bad.swift": 'struct Bad {\n    var u: Upper?\n    let t = "\\(upperHelper())"\n}\n',
}


def self_test():
    """Checks the checker on a small tree: the arrows it must find, and the names it must not count."""
    import tempfile

    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "ARCHITECTURE.md"), "w", encoding="utf-8") as page:
            page.write(SELF_TEST_TABLE)
        for relative, text in SELF_TEST_FILES.items():
            path = os.path.join(root, "Sources", "Threading", relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
        failures, _, _ = check(root)
        expected = [
            "Sources/Threading/Low/Bad.swift:2: names Upper",
            "Sources/Threading/Low/Bad.swift:3: names upperHelper",
        ]
        found = [failure.split(" (declared")[0] for failure in failures]
        if found != expected:
            print("check-layers self-test failed: expected", expected, "found", failures)
            return 1
        os.remove(os.path.join(root, "Sources", "Threading", "Low", "Bad.swift"))
        with open(os.path.join(root, "Sources", "Threading", "Low", "Fine.swift"), "w", encoding="utf-8") as handle:
            handle.write("struct Fine {}\n")
        failures, _, _ = check(root)
        if len(failures) != 1 or "may also name Allowed" not in failures[0]:
            print("check-layers self-test failed: an unused exception must fail, found", failures)
            return 1
    print("check-layers self-test: passed")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    failures, files, layers = check(ROOT)
    for failure in failures:
        print(failure)
    if failures:
        print(f"check-layers: {len(failures)} arrow(s) point up (the table: ARCHITECTURE.md, '## Layers')")
        return 1
    print(f"check-layers: {files} files, every arrow points down ({layers} layers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
