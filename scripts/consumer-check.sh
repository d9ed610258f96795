#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: 2026 The Threading authors
#
# Uses Threading as a new user would: copies this checkout (its working tree, committed or not) into a fresh git
# repository, tags it with the version in Sources/Threading/ThreadingVersion.swift, and builds and runs a tiny package
# that depends on it with `.package(url: "file://...", from: "<version>")` and the `Threading` product. Fails if the
# build reports unsafe flags, if the consumer resolves any package besides Threading, if the program's output is
# wrong, or if the program does not stop with one line when liburcu's layout differs. Then the package traits: for
# each trait alone and for all three, a consumer that enables them must pin exactly that integration's packages in
# its Package.resolved (and a dependency whose trait is off none of its packages); the consumer with all three
# builds and runs a program that uses each integration. Works offline (the integrations' packages resolve from the
# machine's mirrors of their URLs). `KEEP=1` keeps the temporary folder and prints its path.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

fail() { echo "consumer-check: $*" >&2; exit 1; }

version="$(sed -n 's/.*static let string = "\([0-9][0-9.]*\)".*/\1/p' Sources/Threading/ThreadingVersion.swift)"
[ -n "$version" ] || fail "no version in Sources/Threading/ThreadingVersion.swift"

work="$(mktemp -d "${TMPDIR:-/tmp}/threading-consumer.XXXXXX")"
if [ "${KEEP:-0}" = 1 ]; then echo "consumer-check: keeping $work"; else trap 'rm -rf "$work"' EXIT; fi

# 1. A tagged repository holding exactly the files git would commit from this working tree.
clone="$work/Threading"
mkdir -p "$clone"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do
    [ -e "$file" ] || continue  # deleted in the working tree
    mkdir -p "$clone/$(dirname "$file")"
    cp -P "$file" "$clone/$file"
done
git -C "$clone" init -q
git -C "$clone" add -A
git -C "$clone" -c user.name=consumer-check -c user.email=consumer-check@localhost commit -q -m "Threading $version"
git -C "$clone" tag "$version"

# 2. The consumer: one executable that depends on the Threading product by version.
consumer="$work/consumer"
mkdir -p "$consumer/Sources/consumer"
cat >"$consumer/Package.swift" <<MANIFEST
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "consumer",
    dependencies: [.package(url: "file://$clone", from: "$version")],
    targets: [
        .executableTarget(name: "consumer", dependencies: [.product(name: "Threading", package: "Threading")])
    ],
    swiftLanguageModes: [.v6]
)
MANIFEST
cat >"$consumer/Sources/consumer/main.swift" <<'SOURCE'
import Threading

let cache = RCUMap<Int, String>()
let writer = SerialQueue(label: "cache-writer")
writer.sync { for key in 0..<100 { cache.set("v\(key)", forKey: key) } }
let readers = try (0..<4).map { n in
    try PosixThread(name: "reader-\(n)") { (0..<100).compactMap { cache.get($0) }.count }
}
let hits = LockedValue(0, name: "hits")
for reader in readers {
    let seen = reader.join()
    hits.withLock { $0 += seen }
}
print("Threading \(ThreadingVersion.string): \(hits.withLock { $0 }) hits")
SOURCE

# 3. Build, run, and look at what was resolved.
log="$work/build.log"
if ! (cd "$consumer" && swift build 2>&1) >"$log"; then
    cat "$log" >&2
    fail "the consumer does not build"
fi
if grep -qiE "unsafe (build )?flags" "$log"; then
    cat "$log" >&2
    fail "the build reports unsafe flags"
fi
output="$(cd "$consumer" && swift run --skip-build consumer)"
[ "$output" = "Threading $version: 400 hits" ] || fail "unexpected output: $output"

[ -f "$consumer/Package.resolved" ] || fail "no Package.resolved"
pins="$(sed -n 's/^ *"identity" *: *"\([^"]*\)".*/\1/p' "$consumer/Package.resolved" | sort | tr '\n' ' ')"
[ "$pins" = "threading " ] || fail "Package.resolved pins more than Threading: $pins"
grep -q "\"version\" : \"$version\"" "$consumer/Package.resolved" || fail "Threading is not pinned at $version"
dependencies="$(cd "$consumer" && swift package show-dependencies --format flatlist 2>/dev/null || true)"
[ -z "$dependencies" ] || [ "$(echo "$dependencies" | sort -u)" = "threading" ] ||
    fail "show-dependencies lists more than Threading: $dependencies"

# 4. The liburcu check, end to end: a preloaded object that takes the place of liburcu's grace-period state with
# another size (as a liburcu with another layout would) must stop the program before its first RCU use, with status 1
# and one line.
toolchain="$(dirname "$(readlink -f "$(command -v swift)")")"
printf 'struct imposter { char bytes[4096]; } urcu_memb_gp __attribute__((aligned(128)));\n' >"$work/imposter.c"
"$toolchain/clang" -shared -fPIC -o "$work/libimposter.so" "$work/imposter.c"
set +e
mismatch="$(LD_PRELOAD="$work/libimposter.so" "$consumer/.build/debug/consumer" 2>&1)"
code=$?
set -e
[ "$code" -eq 1 ] || fail "with another liburcu layout the program exited with $code: $mismatch"
[ "$(printf '%s\n' "$mismatch" | wc -l)" -eq 1 ] || fail "the liburcu mismatch took more than one line: $mismatch"
case "$mismatch" in
"Threading: the liburcu loaded at run time"*"does not match"*) ;;
*) fail "unexpected liburcu mismatch line: $mismatch" ;;
esac

echo "consumer-check: $output"
echo "consumer-check: Package.resolved pins: $pins(Threading $version, tag $version); no unsafe flags"
echo "consumer-check: with another liburcu layout: $mismatch"

# 5. The package traits. Each consumer depends on Threading alone (plus, for the one that builds, the integrations'
# own products it calls), with `traits:`; what it pins is what a user's Package.resolved would get.
# trait_consumer DIR "TRAITS" "EXTRA DEPENDENCIES" "EXTRA PRODUCTS": writes the consumer's manifest.
trait_consumer() {
    mkdir -p "$1/Sources/consumer"
    cat >"$1/Package.swift" <<MANIFEST
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "consumer",
    dependencies: [.package(url: "file://$clone", from: "$version", traits: [$2])$3],
    targets: [
        .executableTarget(
            name: "consumer",
            dependencies: [.product(name: "Threading", package: "Threading")$4]
        )
    ],
    swiftLanguageModes: [.v6]
)
MANIFEST
    echo 'import Threading' >"$1/Sources/consumer/main.swift"
}
# resolved_pins DIR: the identities pinned in DIR's Package.resolved, sorted, space-separated.
resolved_pins() {
    [ -f "$1/Package.resolved" ] || fail "no Package.resolved in $1"
    sed -n 's/^ *"identity" *: *"\([^"]*\)".*/\1/p' "$1/Package.resolved" | sort | tr '\n' ' '
}
logging_pins="swift-log"
metrics_pins="swift-metrics"
lifecycle_pins="swift-async-algorithms swift-collections swift-log swift-service-lifecycle"
all_pins="swift-async-algorithms swift-collections swift-log swift-metrics swift-service-lifecycle"
for combination in \
    "LoggingSupport:$logging_pins" \
    "MetricsSupport:$metrics_pins" \
    "ServiceLifecycleSupport:$lifecycle_pins" \
    "LoggingSupport,MetricsSupport,ServiceLifecycleSupport:$all_pins"; do
    traits="${combination%%:*}"
    expected="$(printf '%s\n' threading ${combination#*:} | sort | tr '\n' ' ')"
    dir="$work/consumer-$(echo "$traits" | tr ',' '-')"
    trait_consumer "$dir" "$(echo "\"$traits\"" | sed 's/,/", "/g')" "" ""
    (cd "$dir" && swift package resolve >"$dir.log" 2>&1) || { cat "$dir.log" >&2; fail "traits $traits: no resolve"; }
    got="$(resolved_pins "$dir")"
    [ "$got" = "$expected" ] || fail "traits $traits: Package.resolved pins $got; expected $expected"
    echo "consumer-check: traits $traits: Package.resolved pins: $got"
done

# The consumer with every trait builds and runs a program that uses the three integrations.
all="$work/consumer-all-build"
trait_consumer "$all" '"LoggingSupport", "MetricsSupport", "ServiceLifecycleSupport"' \
    ', .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"), .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"), .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0")' \
    ', .product(name: "Logging", package: "swift-log"), .product(name: "Metrics", package: "swift-metrics"), .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")'
cat >"$all/Sources/consumer/main.swift" <<'SOURCE'
import Logging
import Metrics
import ServiceLifecycle
import Threading

RuntimeObservation.log(to: Logger(label: "threading"))
let pool = WorkerPool(label: "consumer")
let metrics = WorkerPoolMetrics(pools: [pool])
metrics.poll()
let service = WorkerPoolService(pool)
_ = ServiceGroup(services: [service, metrics], logger: Logger(label: "group"))
let running = Task { try await service.run() }
try await pool.run { print("Threading with every trait: ran on \(pool.label)") }
running.cancel()
try await running.value
print("Threading with every trait: the pool is shut down: \(pool.isShutDown)")
SOURCE
if ! (cd "$all" && swift build 2>&1) >"$all.log"; then
    cat "$all.log" >&2
    fail "the consumer with every trait does not build"
fi
got="$(resolved_pins "$all")"
expected="$(printf '%s\n' threading $all_pins | sort | tr '\n' ' ')"
[ "$got" = "$expected" ] || fail "every trait, built: Package.resolved pins $got; expected $expected"
traits_output="$(cd "$all" && swift run --skip-build consumer 2>"$all.stderr")"
[ "$traits_output" = "$(printf 'Threading with every trait: ran on consumer\nThreading with every trait: the pool is shut down: true')" ] ||
    fail "unexpected output with every trait: $traits_output"
grep "worker pool drained and stopped" "$all.stderr" | grep -q "pool=consumer" ||
    fail "the pool service logged no shutdown through swift-log: $(cat "$all.stderr")"
echo "consumer-check: every trait, built and run: $(echo "$traits_output" | tr '\n' ';')"
