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

# A scratch path of its own: the symbol-graph flags would otherwise invalidate the regular build. Started afresh each
# time (about 15 s): SwiftPM 6.3 fails a second `--target` build in the same scratch path with "unknown build
# description".
scratch=.build-docs
graphs="$scratch/symbol-graphs"
rm -rf "$scratch"
mkdir -p "$graphs"
swift build --scratch-path "$scratch" --target Threading \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs" \
    -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public >"$scratch/build.log" 2>&1 ||
    { cat "$scratch/build.log" >&2; exit 1; }
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
