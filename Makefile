# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: 2026 The Threading authors
#
# The two commands of the README: `make test` and `make bench`. Both install liburcu-dev first when missing.

SWIFT ?= swift
# Extra flags for `swift test` / `swift build` (CI passes -Xswiftc -warnings-as-errors).
SWIFT_FLAGS ?=
# Arguments for the benchmark, e.g. `make bench ARGS="--quick"`.
ARGS ?=

.PHONY: deps test bench build release torture

deps:
	@./scripts/ensure-liburcu.sh

test: deps
	$(SWIFT) test $(SWIFT_FLAGS)

bench: deps
	$(SWIFT) run -c release $(SWIFT_FLAGS) bench $(ARGS)

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

release: deps
	$(SWIFT) build -c release $(SWIFT_FLAGS)
