#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: 2026 The Threading authors
#
# Makes sure liburcu's development files (memb flavour + lock-free hash table) are present before a build.
# Installs liburcu-dev with apt-get when it is missing and we may (root, or passwordless sudo); otherwise stops
# with one line saying what to install.
set -euo pipefail

have_urcu() {
    if command -v pkg-config >/dev/null 2>&1; then
        pkg-config --exists liburcu-memb liburcu-cds && return 0
    fi
    # Without pkg-config, look for the headers and the libraries where Debian/Ubuntu put them.
    compgen -G "/usr/include/*/urcu/urcu-memb.h" >/dev/null || [ -f /usr/include/urcu/urcu-memb.h ] || return 1
    compgen -G "/usr/lib/*/liburcu-memb.so" >/dev/null || [ -f /usr/lib/liburcu-memb.so ] || return 1
}

have_urcu && exit 0

if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO="none"; fi
    fi
    if [ "$SUDO" != "none" ]; then
        echo "liburcu-dev is missing: installing it with apt-get" >&2
        export DEBIAN_FRONTEND=noninteractive
        $SUDO apt-get update -qq >/dev/null
        $SUDO apt-get install -y -qq liburcu-dev pkg-config >/dev/null
        have_urcu && exit 0
    fi
fi

echo "error: liburcu (memb flavour, >= 0.13) is required: install liburcu-dev (Debian/Ubuntu) or userspace-rcu-devel (Fedora)" >&2
exit 1
