#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: 2026 The Threading authors
#
# The C layer as a product for C and C++ servers, without SwiftPM: builds libcthreading.a from Sources/CThreading
# and installs it with the headers of include/ and a pkg-config file (cthreading.pc).
# Usage: scripts/c-package.sh install PREFIX      (honours DESTDIR, CC, CFLAGS)
#        scripts/c-package.sh example             (installs into .build/c-prefix, then builds and runs the C example
#                                                  of examples/c against it through pkg-config, as a user would)
set -euo pipefail
cd "$(dirname "$0")/.."

CC="${CC:-cc}"
CFLAGS="${CFLAGS:--O2 -g}"
VERSION="$(sed -n 's/^## \([0-9][0-9.]*\)$/\1/p' CHANGELOG.md | head -n 1)"

build_library() {
    local out="$1"
    local objects="$out/objects"
    rm -rf "$objects"
    mkdir -p "$objects"
    local urcu_cflags
    urcu_cflags="$(pkg-config --cflags liburcu-cds)"
    for source in Sources/CThreading/*.c; do
        # shellcheck disable=SC2086
        "$CC" -std=gnu11 $CFLAGS -fPIC -Wall -Wextra -Werror -Iinclude -ISources/CThreading $urcu_cflags \
            -c "$source" -o "$objects/$(basename "${source%.c}").o"
    done
    rm -f "$out/libcthreading.a"
    ar rcs "$out/libcthreading.a" "$objects"/*.o
}

install_to() {
    local prefix="$1"
    local root="${DESTDIR:-}$prefix"
    local build=".build/c-layer"
    build_library "$build"
    install -d "$root/lib/pkgconfig" "$root/include/cthreading"
    install -m 644 "$build/libcthreading.a" "$root/lib/"
    install -m 644 include/*.h "$root/include/cthreading/"
    sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$VERSION|g" cthreading.pc.in >"$root/lib/pkgconfig/cthreading.pc"
    echo "installed libcthreading.a, include/cthreading/*.h and lib/pkgconfig/cthreading.pc under $root"
}

case "${1:-}" in
install)
    [ -n "${2:-}" ] || { echo "usage: $0 install PREFIX" >&2; exit 2; }
    install_to "$2"
    ;;
example)
    prefix="$PWD/.build/c-prefix"
    rm -rf "$prefix"
    install_to "$prefix"
    export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    # shellcheck disable=SC2046
    "$CC" -std=gnu11 -O2 -Wall -Wextra -Werror examples/c/counters.c -o .build/c-layer/counters \
        $(pkg-config --cflags --libs --static cthreading)
    .build/c-layer/counters
    # The headers are C++-compatible too.
    if command -v c++ >/dev/null; then
        # shellcheck disable=SC2046
        echo '#include "CThreading.h"' | c++ -std=c++17 -Wall -Wextra -Werror -x c++ -fsyntax-only - \
            $(pkg-config --cflags cthreading)
        echo "the installed headers also compile as C++17"
    fi
    ;;
*)
    echo "usage: $0 install PREFIX | example" >&2
    exit 2
    ;;
esac
