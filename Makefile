# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: 2026 The Threading authors
#
# The two commands of the README: `make test` and `make bench`. Both install liburcu-dev first when missing.
# `make verify` checks the SPIN models of formal/ (installs spin and a C compiler first when missing).

SWIFT ?= swift
# Extra flags for `swift test` / `swift build` (CI passes -Xswiftc -warnings-as-errors).
SWIFT_FLAGS ?=
# Arguments for the benchmark, e.g. `make bench ARGS="--quick"`.
ARGS ?=
# Seconds the soak runs (`make soak SOAK_SECONDS=600`); `make torture` runs it for 60 s.
SOAK_SECONDS ?= 600

.PHONY: deps test bench build release torture soak verify

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

# The torture suites in their long mode (rcutorture-style RCU, every lock, queues, job DAGs, a 60 s soak); each
# prints a `torture ...:` summary line with its figures. Replay a failure with TORTURE_SEED=<seed from the line>.
torture: deps
	$(SWIFT) test $(SWIFT_FLAGS) -Xswiftc -DTHREADING_LONG_TESTS --filter Torture

# The soak alone, for SOAK_SECONDS: a mixed load in five stretches (the first a warm-up) in a process of its own;
# after the warm-up the live heap (mallinfo2) may grow by 160 KiB at most and the trimmed resident set by 8 MiB.
soak: deps
	SOAK_SECONDS=$(SOAK_SECONDS) $(SWIFT) test $(SWIFT_FLAGS) -Xswiftc -DTHREADING_LONG_TESTS --filter SoakTorture

# The Promela models of formal/ checked with SPIN: every model must verify and every mutant must be refuted (see
# formal/README.md). A few minutes on two cores.
verify:
	@./scripts/verify.sh
