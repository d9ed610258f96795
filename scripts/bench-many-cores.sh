#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: 2026 The Threading authors
#
# The scaling families on a many-core machine, ready to run: builds a release `bench` with the Swift standard library
# (Foundation and Dispatch included) and liburcu linked statically, so the binary runs on a machine with no Swift
# toolchain and no liburcu installed (it needs only glibc, libstdc++ and libgcc_s), then runs the cache study (the
# Int cache, and the String-keyed one when the bench has `--shape`), locks, queues and pool-async at 1, 2, 4, 8 and
# 16 threads, writing every report into one folder. The full plan, String-keyed cache included, took 202 s on a
# 16-CPU machine and 209 s on 2 CPUs (the time is the cells' fixed durations, whatever the core count).
#
#   scripts/bench-many-cores.sh                       build here, then run the full plan here
#   scripts/bench-many-cores.sh --build-only          build; the folder it names (bench + this script) is what to copy
#   ./bench-many-cores.sh --bench ./bench             on the big machine, in the copied folder: run the plan
#   scripts/bench-many-cores.sh --quick               threads 1,2 and short runs: a check that everything works
#
# Options: --threads LIST (default 1,2,4,8,16), --out DIR (default bench-results/many-cores-<host>-<time>),
# --bench PATH (run that binary, build nothing), --build-only, --quick.
#
# liburcu: the package links liburcu-memb, liburcu-cds and liburcu-common by name (`-lurcu-memb` ...: its
# linkerSettings, plus pkg-config's liburcu-cds, whose `-L` SwiftPM puts first on the link line). The build gives
# SwiftPM a liburcu-cds.pc (through PKG_CONFIG_PATH) whose libdir is a folder holding only the three static archives,
# so that folder is searched first and those names resolve to the `.a` files (GNU ld takes the first folder that has
# the library, and in it the shared object only if there is one). The script then checks with ldd that no Swift
# runtime library and no liburcu is left as a dynamic dependency.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
threads="1,2,4,8,16"
out=""
bench=""
build_only=0
quick=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --threads) threads="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --bench) bench="$2"; shift 2 ;;
        --build-only) build_only=1; shift ;;
        --quick) quick=1; shift ;;
        -h | --help) sed -n '5,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-many-cores: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if [[ $quick == 1 && $threads == "1,2,4,8,16" ]]; then threads="1,2"; fi
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="${out:-bench-results/many-cores-$(hostname -s 2>/dev/null || echo host)-$stamp}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# The folder of liburcu's static archives: where pkg-config says liburcu lives, else the usual library folders.
find_urcu_archives() {
    local dirs=()
    if command -v pkg-config >/dev/null 2>&1; then
        local libdir
        libdir="$(pkg-config --variable=libdir liburcu-cds 2>/dev/null || true)"
        [[ -n $libdir ]] && dirs+=("$libdir")
    fi
    dirs+=(/usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib /usr/local/lib64)
    local dir
    for dir in "${dirs[@]}"; do
        if [[ -f $dir/liburcu-memb.a && -f $dir/liburcu-cds.a && -f $dir/liburcu-common.a ]]; then
            echo "$dir"
            return 0
        fi
    done
    return 1
}

build() {
    # The bench package's own build folder: the compiled modules of a plain release build are reused and only the
    # link differs (the static standard library and archives are linker flags), so this takes a minute after
    # `swift build -c release`. It leaves the static binary as benchmarks/.build/release/bench too.
    local scratch="${MANY_CORES_SCRATCH:-$root/benchmarks/.build}"
    local archives
    if ! archives="$(find_urcu_archives)"; then
        echo "bench-many-cores: liburcu's static archives (liburcu-memb.a, liburcu-cds.a, liburcu-common.a) were" \
            "not found: install liburcu-dev (Debian/Ubuntu) or userspace-rcu-devel (Fedora)" >&2
        exit 1
    fi
    local static_dir="$scratch/urcu-static-archives"
    mkdir -p "$static_dir/pkgconfig"
    local name
    for name in liburcu-memb liburcu-cds liburcu-common; do ln -sf "$archives/$name.a" "$static_dir/$name.a"; done
    # SwiftPM puts pkg-config's `-L` for liburcu-cds ahead of everything else on the link line: a liburcu-cds.pc
    # whose libdir is the archives' folder makes that folder the first one searched for every -lurcu-* name.
    local pc_file
    pc_file="$(pkg-config --variable=pcfiledir liburcu-cds 2>/dev/null || true)/liburcu-cds.pc"
    if [[ -f $pc_file ]]; then
        sed "s|^libdir=.*|libdir=$static_dir|" "$pc_file" >"$static_dir/pkgconfig/liburcu-cds.pc"
    else
        printf 'libdir=%s\nName: liburcu-cds\nDescription: liburcu-cds (static)\nVersion: 0\nLibs: -L%s %s\nCflags:\n' \
            "$static_dir" "$static_dir" "-lurcu-common -lurcu-cds" >"$static_dir/pkgconfig/liburcu-cds.pc"
    fi
    echo "bench-many-cores: building a static release bench (liburcu from $archives; several minutes)" >&2
    PKG_CONFIG_PATH="$static_dir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
        swift build --package-path "$root/benchmarks" -c release --product bench --static-swift-stdlib \
        --scratch-path "$scratch" -Xlinker -L"$static_dir" >"$out/build.log" 2>&1 || {
        tail -n 30 "$out/build.log" >&2
        echo "bench-many-cores: the build failed (log: $out/build.log)" >&2
        exit 1
    }
    cp "$scratch/release/bench" "$out/bench"
    cp "${BASH_SOURCE[0]}" "$out/bench-many-cores.sh"
    chmod +x "$out/bench-many-cores.sh"
    bench="$out/bench"
    # Nothing of the toolchain or liburcu may be left to load at run time.
    ldd "$bench" >"$out/ldd.txt" 2>&1 || true
    if grep -E 'libswift|libFoundation|libdispatch|libBlocksRuntime|liburcu|not found' "$out/ldd.txt" >&2; then
        echo "bench-many-cores: the binary still needs the libraries above (see $out/ldd.txt)" >&2
        exit 1
    fi
    echo "bench-many-cores: $bench needs only: $(awk '{print $1}' "$out/ldd.txt" | tr '\n' ' ')" >&2
}

if [[ -z $bench ]]; then build; fi
if [[ $build_only == 1 ]]; then
    echo "bench-many-cores: copy $out (bench, bench-many-cores.sh) to the big machine and run" \
        "./bench-many-cores.sh --bench ./bench there" >&2
    exit 0
fi
[[ -x $bench ]] || { echo "bench-many-cores: no bench binary at '$bench'" >&2; exit 1; }

# Run settings: the full plan keeps every family's defaults except the durations (0.1 s runs, 0.02 s warm-up, 3
# repeats) and the cache's read ratios (0.95 and 0.5), which keeps five thread counts under ten minutes in all.
if [[ $quick == 1 ]]; then
    settings=(--seconds 0.02 --warmup 0.01 --repeat 1)
else
    settings=(--seconds 0.1 --warmup 0.02 --repeat 3)
fi
cache_extra=(--read-ratio 0.95,0.5)
if "$bench" cache --help 2>/dev/null | grep -q -- '--shape'; then cache_extra+=(--shape int,string); fi

{
    echo "host: $(hostname 2>/dev/null || echo '?')"
    echo "date: $stamp"
    echo "cpus: $(nproc 2>/dev/null || echo '?')"
    echo "kernel: $(uname -srm)"
    echo "threads: $threads"
    echo "settings: ${settings[*]}; cache: ${cache_extra[*]}"
} >"$out/machine.txt"

families=(cache locks queues pool-async)
run_family() {
    local family="$1"
    local extra=()
    [[ $family == cache ]] && extra=("${cache_extra[@]}")
    local started ended
    started=$(date +%s%N)
    "$bench" "$family" --threads "$threads" "${settings[@]}" "${extra[@]}" --quiet \
        --output "$out/$family" >"$out/$family.txt" 2>"$out/$family.err" || {
        echo "bench-many-cores: $family failed (see $out/$family.err)" >&2
        return 1
    }
    ended=$(date +%s%N)
    echo "$family $(((ended - started) / 1000000000))" >>"$out/durations.txt"
    grep -h '^SUMMARY' "$out/$family.txt" || true
}

# The plan's estimate: each family's cells grow with the number of thread counts (the queues' one-pair cases and
# its census do not, so this errs on the long side).
count=$(tr ',' '\n' <<<"$threads" | grep -c .)
echo "bench-many-cores: threads $threads, families ${families[*]}; results in $out" >&2
failed=0
: >"$out/durations.txt"
for family in "${families[@]}"; do
    echo "bench-many-cores: $family ..." >&2
    run_family "$family" || failed=1
done
total=$(awk '{ sum += $2 } END { printf "%.0f", sum }' "$out/durations.txt")
echo "bench-many-cores: done in ${total} s ($count thread counts); per family: $(tr '\n' ' ' <"$out/durations.txt")" >&2
exit $failed
