#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: 2026 The Threading authors
#
# Builds the DocC catalog (`make docs`): the toolchain's own `docc` (next to `swift`; no plugin dependency, so nothing
# reaches a consumer's graph) over the public symbol graph of the Threading module. Any warning fails the build.
# Writes .build/docs/Threading.doccarchive; `docc preview` or any static server can show it.
set -euo pipefail
cd "$(dirname "$0")/.."

toolchain="$(dirname "$(readlink -f "$(command -v swift)")")"
docc="${DOCC:-$toolchain/docc}"
[ -x "$docc" ] || { echo "build-docs: no docc next to swift ($toolchain); set DOCC=/path/to/docc" >&2; exit 1; }

# A scratch path of its own, so the symbol-graph flags do not invalidate the regular build. It lives inside .build/:
# CThreading's target path is the package root, so a scratch folder anywhere else in it would count as part of that
# target and SwiftPM 6.3 then fails the next build in it with "unknown build description".
scratch=.build/docs-scratch
# The graphs are written whenever the module is (re)built, so a build with nothing to do keeps the current ones.
graphs="$scratch/symbol-graphs"
mkdir -p "$graphs"
build_symbol_graphs() {
    mkdir -p "$graphs"
    swift build --scratch-path "$scratch" --target Threading \
        -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs" \
        -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public >"$scratch/build.log" 2>&1 ||
        { cat "$scratch/build.log" >&2; exit 1; }
}
build_symbol_graphs
# A module that was up to date while its graphs were gone: build it again from scratch.
if [ ! -f "$graphs/Threading.symbols.json" ]; then
    rm -rf "$scratch"
    build_symbol_graphs
fi
# Only the Threading module's graphs (and its extensions of other modules' types), not CThreading's.
find "$graphs" -name '*.symbols.json' ! -name 'Threading.symbols.json' ! -name 'Threading@*.symbols.json' -delete

output=.build/docs/Threading.doccarchive
mkdir -p .build/docs
log="$scratch/docc.log"
status=0
"$docc" convert Sources/Threading/Threading.docc \
    --additional-symbol-graph-dir "$graphs" \
    --fallback-display-name Threading \
    --fallback-bundle-identifier org.threading.Threading \
    --output-path "$output" >"$log" 2>&1 || status=$?
cat "$log"
warnings=$(grep -c "warning:" "$log" || true)
errors=$(grep -c "error:" "$log" || true)
echo "build-docs: $warnings warnings, $errors errors -> $output"
[ "$status" -eq 0 ] && [ "$warnings" -eq 0 ] && [ "$errors" -eq 0 ]
