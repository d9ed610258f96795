#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: 2026 The Threading authors
#
# Makes sure liburcu's development files (memb flavour + lock-free hash table) are present before a build.
# Installs liburcu-dev with apt-get when it is missing and we may (root, or passwordless sudo); otherwise, or when
# apt-get fails, stops with one line saying what to install (apt-get's own output goes to a log file, not the
# terminal).
set -euo pipefail

# Succeeds when `name` (a file name, glob characters allowed) exists in at least one of the directories given after it
# (glob characters allowed too).
found_in() {
    local name="$1"
    shift
    local dir
    for dir in "$@"; do
        compgen -G "$dir/$name" >/dev/null && return 0
    done
    return 1
}

have_urcu() {
    if command -v pkg-config >/dev/null 2>&1; then
        pkg-config --exists liburcu-memb liburcu-cds && return 0
    fi
    # Without pkg-config (or without its .pc files), look for the headers and the linkable libraries (the
    # unversioned .so symlinks come with the -dev package) where Debian/Ubuntu, Fedora and /usr/local put them.
    local includes=(/usr/include /usr/include/* /usr/local/include)
    local libs=(/usr/lib /usr/lib/* /usr/lib64 /usr/local/lib /usr/local/lib/* /usr/local/lib64)
    found_in urcu/urcu-memb.h "${includes[@]}" || return 1
    found_in urcu/rculfhash.h "${includes[@]}" || return 1
    found_in liburcu-memb.so "${libs[@]}" || return 1
    found_in liburcu-cds.so "${libs[@]}" || return 1
    found_in liburcu-common.so "${libs[@]}" || return 1
}

have_urcu && exit 0

hint="install liburcu-dev (Debian/Ubuntu) or userspace-rcu-devel (Fedora)"
if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO="none"; fi
    fi
    if [ "$SUDO" != "none" ]; then
        echo "liburcu-dev is missing: installing it with apt-get" >&2
        export DEBIAN_FRONTEND=noninteractive
        log="$(mktemp "${TMPDIR:-/tmp}/ensure-liburcu.XXXXXX" 2>/dev/null || echo /dev/null)"
        # A failure here (no network, locked dpkg, unknown package) must not end the script before its message.
        $SUDO apt-get update -qq >>"$log" 2>&1 || true
        $SUDO apt-get install -y -qq liburcu-dev pkg-config >>"$log" 2>&1 || true
        if have_urcu; then
            [ "$log" = /dev/null ] || rm -f "$log"
            exit 0
        fi
        [ "$log" = /dev/null ] || hint="$hint (apt-get could not install it; its output is in $log)"
    fi
fi

echo "error: liburcu (memb flavour and liburcu-cds, >= 0.13) is required: $hint" >&2
exit 1
