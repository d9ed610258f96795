# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: 2026 The Threading authors
#
# The two commands of the README: `make test` and `make bench`. Both install liburcu-dev first when missing.
# `make verify` checks the SPIN models of formal/ (installs spin and a C compiler first when missing).
# The library is the root package; the benchmark and its tests are the nested package in `benchmarks/`, the runnable
# examples (lessons, the Hummingbird server, the C example) and their tests the one in `examples/` (so that their
# dependencies never reach a package that depends on Threading).

SWIFT ?= swift
# Extra flags for `swift test` / `swift build` (CI passes -Xswiftc -warnings-as-errors).
SWIFT_FLAGS ?=
# Warnings for the C targets. They live here and in CI, not in Package.swift: SwiftPM refuses `unsafeFlags` in a
# package that is used as a versioned dependency.
C_WARNINGS ?= -Xcc -Wall -Xcc -Wextra -Xcc -Werror=implicit-function-declaration
# Extra C flags for the root package only; CI passes `-Xcc -Werror` so that any C warning fails it. (SwiftPM 6.3 stops
# with an internal error on `-Xcc -Werror` in a package with remote dependencies, such as the nested one.)
C_STRICT ?=
# Arguments for the benchmark, e.g. `make bench ARGS="--quick"`.
ARGS ?=
# Seconds the soak runs (`make soak SOAK_SECONDS=600`); `make torture` runs it for 60 s.
SOAK_SECONDS ?= 600
BENCHMARKS = --package-path benchmarks
EXAMPLES = --package-path examples

.PHONY: deps test bench examples http-server build release torture soak docs samples consumer-check verify lint check-layers install \
	c-example fork-check traits

deps:
	@./scripts/ensure-liburcu.sh

# Every test: the library's (root package), then the benchmark's and the examples' (nested packages).
test: deps
	$(SWIFT) test $(C_WARNINGS) $(C_STRICT) $(SWIFT_FLAGS)
	$(SWIFT) test $(BENCHMARKS) $(C_WARNINGS) $(SWIFT_FLAGS)
	$(SWIFT) test $(EXAMPLES) $(C_WARNINGS) $(SWIFT_FLAGS)

# The cache-contention study with every peer: `swift run --package-path benchmarks -c release bench`.
bench: deps
	$(SWIFT) run $(BENCHMARKS) -c release $(C_WARNINGS) $(SWIFT_FLAGS) bench $(ARGS)

# The runnable lessons: `make examples ARGS=--list`, `make examples ARGS=tickets`.
examples: deps
	$(SWIFT) run $(EXAMPLES) $(C_WARNINGS) $(SWIFT_FLAGS) examples $(ARGS)

# The example Hummingbird server in release, which `bench http` loads (a first build takes several minutes):
# `make http-server`, then `make bench ARGS=http`.
http-server: deps
	$(SWIFT) build $(EXAMPLES) -c release $(C_WARNINGS) $(SWIFT_FLAGS) --product hummingbird-server

build: deps
	$(SWIFT) build $(C_WARNINGS) $(C_STRICT) $(SWIFT_FLAGS)

release: deps
	$(SWIFT) build -c release $(C_WARNINGS) $(C_STRICT) $(SWIFT_FLAGS)

# The DocC catalog, with zero warnings allowed (writes .build/docs/Threading.doccarchive).
docs: deps
	./scripts/build-docs.sh

# Compiles every ```swift block of README.md, the DocC articles and the doc comments against the library, in Swift 6
# mode.
samples: deps
	./scripts/check-samples.py

# Depends on a tagged clone of this checkout by version, as a user would, and checks what it resolves and builds:
# with no trait Threading alone, with each trait (and all three) exactly that integration's packages.
consumer-check: deps
	./scripts/consumer-check.sh

# The integrations (package traits, off by default; `make test` covers no trait): the whole suite with all three
# traits on, then each trait alone built with the tests and its integration suites run (one scratch path for the
# three, so only the Threading targets rebuild between them). No C_STRICT: SwiftPM 6.3 stops with an internal error
# on `-Xcc -Werror` in a graph with remote packages; `make test` checks the C warnings.
TRAITS ?= LoggingSupport MetricsSupport ServiceLifecycleSupport
INTEGRATION_SUITES = LoggingObserverTests|WorkerPoolMetricsTests|WorkerPoolMetricsCrashTests|WorkerPoolServiceTests
traits: deps
	$(SWIFT) test --scratch-path .build/traits-all --enable-all-traits $(C_WARNINGS) $(SWIFT_FLAGS)
	set -e; for trait in $(TRAITS); do \
		$(SWIFT) build --build-tests --scratch-path .build/traits --traits $$trait $(C_WARNINGS) $(SWIFT_FLAGS); \
		$(SWIFT) test --skip-build --scratch-path .build/traits --traits $$trait --filter '$(INTEGRATION_SUITES)'; \
	done

# The torture suites in their long mode (rcutorture-style RCU, every lock, queues, job DAGs, a 60 s soak) and the
# blocking pool's steady-load thread census (it needs the machine to itself); each torture suite
# prints a `torture ...:` summary line with its figures. Replay a failure with TORTURE_SEED=<seed from the line>.
torture: deps
	$(SWIFT) test $(C_WARNINGS) $(SWIFT_FLAGS) -Xswiftc -DTHREADING_LONG_TESTS --filter "Torture|BlockingTests"

# The soak alone, for SOAK_SECONDS: a mixed load in five stretches (the first a warm-up) in a process of its own;
# after the warm-up the live heap (mallinfo2) may grow by 160 KiB at most and the trimmed resident set by 8 MiB.
soak: deps
	SOAK_SECONDS=$(SOAK_SECONDS) $(SWIFT) test $(C_WARNINGS) $(SWIFT_FLAGS) -Xswiftc -DTHREADING_LONG_TESTS --filter SoakTorture

# The Promela models of formal/ checked with SPIN: every model must verify and every mutant must be refuted (see
# formal/README.md). A few minutes on two cores.
verify:
	@./scripts/verify.sh

# The pool's fork() child handlers ask the Swift runtime for no type it has not made yet: the in-process fork tests
# of the debug build under gdb (installs gdb first when missing; see scripts/fork-handlers-check.sh).
fork-check: deps
	$(SWIFT) build --build-tests $(C_WARNINGS) $(C_STRICT) $(SWIFT_FLAGS)
	@./scripts/fork-handlers-check.sh

# The C layer as a product for C and C++ servers, without SwiftPM: libcthreading.a, the headers of include/ (under
# include/cthreading/) and cthreading.pc, under PREFIX (DESTDIR honoured).
PREFIX ?= /usr/local
install: deps
	./scripts/c-package.sh install $(PREFIX)

# Installs the C layer into .build/c-prefix and builds and runs examples/c/counters.c against it with pkg-config.
c-example: deps
	./scripts/c-package.sh example

# The arrows between the layers of Sources/Threading point one way: no file names a type of a layer above its own
# (the table in ARCHITECTURE.md, "## Layers", is the input); first the checker's own test on a small tree. Seconds,
# no build.
check-layers:
	python3 scripts/check-layers.py --self-test
	python3 scripts/check-layers.py

# The formatting rules of .swift-format (NIO style), checked over every Swift file; `swift format format -i -r
# Sources Tests benchmarks examples` applies them.
lint:
	$(SWIFT) format lint --strict --recursive Sources Tests benchmarks examples
