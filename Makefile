# moon — build, test, run. `make run` and `make test` are the two commands a
# new user needs (`make test-unit` for the fast half); everything else is for
# contributors.

SWIFT      ?= swift
PREFIX     ?= /usr/local
BINDIR      = $(PREFIX)/bin
MANDIR      = $(PREFIX)/share/man
DEBUG_BIN   = .build/debug/moon
RELEASE_BIN = .build/release/moon

.PHONY: all deps test-deps test-slurm fuzz build build-tests release run test test-unit test-e2e test-release test-e2e-only tsan install man completions bench clean schema

all: build

# libyaml is moon's YAML parser (a system library found through pkg-config);
# SQLite holds its state (.moon/state.db, through GRDB); OpenSSL 3 speaks
# TLS to an https:// remote cache. Install them when missing: with apt-get
# as root, else print the command and stop.
# $(call need-library,PKG-CONFIG NAME,DEBIAN PACKAGE,WHAT,WHY): the library, or
# its installation (as root, with apt-get), or the command that installs it.
define need-library
	@if ! pkg-config --exists $(1) 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing $(2) ($(4))"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(2) pkg-config >/dev/null || \
	    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(2) pkg-config >/dev/null; }; \
	  else \
	    echo "moon needs $(3). Install it with:  sudo apt-get install $(2) pkg-config"; exit 1; \
	  fi; \
	fi
endef

deps:
	$(call need-library,sqlite3,libsqlite3-dev,SQLite,moon keeps its state in SQLite)
	$(call need-library,yaml-0.1,libyaml-dev,libyaml,moon parses YAML with libyaml)
	$(call need-library,openssl,libssl-dev,OpenSSL 3,moon speaks TLS to https:// remote caches with OpenSSL)

# What only the tests need: tmux (terminal tests read the screen through it),
# Graphviz (`moon graph --format dot` is checked by `dot`), nginx (the remote
# cache's server in the end-to-end tests), openssl (they make a CA and
# certificates for nginx's TLS; Python's asyncio fronts a test server with
# TLS), a C compiler
# (examples/c-project is built end to end), zsh and fish (their completion
# of node names is driven in the real shells), Chromium (`moon trace`'s HTML
# timeline is rendered headless), and Python's jsonschema and PyYAML (the
# schemas are checked by a real validator).
# Missing ones are installed when possible; tests that still lack them say so.
test-deps:
	@missing=""; command -v tmux >/dev/null 2>&1 || missing="$$missing tmux"; \
	command -v dot >/dev/null 2>&1 || missing="$$missing graphviz"; \
	command -v cc >/dev/null 2>&1 || missing="$$missing gcc libc6-dev"; \
	command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing="$$missing nginx"; \
	command -v openssl >/dev/null 2>&1 || missing="$$missing openssl"; \
	command -v zsh >/dev/null 2>&1 || missing="$$missing zsh"; \
	command -v fish >/dev/null 2>&1 || missing="$$missing fish"; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing$$missing (for the tests)"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing >/dev/null 2>&1 || \
	  { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing >/dev/null 2>&1; } || \
	  echo "note: could not install$$missing; the tests that need them will say so"; \
	fi
	@python3 -c 'import jsonschema, yaml' 2>/dev/null || python3 -m pip install -q jsonschema pyyaml >/dev/null 2>&1 || \
	  echo "note: python3 jsonschema/pyyaml are missing; schema tests will be skipped"

build: deps
	$(SWIFT) build

# A static executable (-static-executable): the Swift runtime, Foundation,
# libstdc++, SQLite, libyaml and glibc linked in, so a start does no
# dynamic loader work and touches fewer shared pages. The linker warns that
# glibc's getaddrinfo/getpwuid load NSS modules at run time: they need the
# glibc moon was built with, the one on the machine that built it.
# Position-dependent (-no-pie): nothing of moon's code is relocated at
# start. Cross-module optimisation: the reactive core's generics are
# specialised for the runner's types. Exclusivity is checked at compile
# time only: the debug build the tests run checks it at run time too, and
# the release build skips the run-time bookkeeping of every class property
# access. Concrete generic types (a dictionary of GRDB's, a set of ints)
# are made through their metadata accessors, not by demangling their
# names: the name's generic requirements cost the runtime a scan of every
# conformance record the first time each is met. Every function in a
# section of its own, and the functions a start runs laid out side by side
# (scripts/text-order.txt, made by scripts/text-order.py; lld, the
# toolchain's linker, takes the list): a start touches fewer pages of code.
# Reasons: docs/decisions.md ("Building"); figures: docs/performance.md.
RELEASE_FLAGS ?= -Xswiftc -static-executable -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xswiftc -cross-module-optimization \
	-Xswiftc -enforce-exclusivity=unchecked -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors \
	-Xswiftc -Xfrontend -Xswiftc -function-sections -Xswiftc -use-ld=lld \
	-Xlinker '--symbol-ordering-file=$(CURDIR)/scripts/text-order.txt' -Xlinker --no-warn-symbol-ordering

# The linker writes the executable through a mapping, in pieces: the file
# ends up in a dozen extents, and a start reads it back in small folios,
# with about 40 more page faults (a no-op and a one-node run take 15-20%
# longer than from a copy). The release target rewrites it as one
# sequential copy, the form `make install` gives it too.
# The static link's warnings about those glibc functions (getaddrinfo,
# getpwuid, dlopen, ...; the comment above says why they are harmless),
# and glibc's about the toolchain's own Foundation using mktemp (it picks
# names its own way), are left out, dozens of lines on every link, and
# counted in one line. Every other line (moon's own use of mktemp
# included), and the build's exit status, pass through.
STATIC_GLIBC_WARNING = warning: Using '[^']*' in statically linked applications requires at runtime the shared libraries from the glibc version used for linking|/swift_static/linux/libFoundation[A-Za-z]*[.]a[(].*: warning: the use of .mktemp. is dangerous, better use .mkstemp. or .mkdtemp.$$

release: deps
	@mkdir -p .build; { $(SWIFT) build -c release $(RELEASE_FLAGS) 2>&1; echo $$? > .build/release.status; } | \
	awk -v pattern="$(STATIC_GLIBC_WARNING)" ' \
	  $$0 ~ pattern { hidden++; held = ""; next } \
	  { if (held != "") print held; held = "" } \
	  /: in function .*:$$/ { held = $$0; next } \
	  { print; fflush() } \
	  END { if (held != "") print held; \
	        if (hidden) print "(left out: " hidden " warnings of the static linker about glibc functions; harmless, see the Makefile above RELEASE_FLAGS and release)" }'; \
	status=$$(cat .build/release.status); [ "$$status" = 0 ] || exit $$status; \
	cp $(RELEASE_BIN) $(RELEASE_BIN).copy && mv -f $(RELEASE_BIN).copy $(RELEASE_BIN)

# Runs the quickstart graph with a release build.
run: release
	$(RELEASE_BIN) run examples/quickstart.yaml

# The tests. `test-unit`: every stage's unit tests, with nothing installed
# beyond what moon builds with. `test-e2e`: the end-to-end tests of the
# built binary (Tests/MoonCLITests, which find it in .build/debug), with
# what only they need (test-deps). `test`: both (CI), the unit tests first:
# in one `swift test` the end-to-end tests, which block while moon runs,
# hold every thread of the test pool and the unit tests wait behind them.
# Each word of swift_test's argument is one `swift test` (its arguments
# joined by `=`); all of them run, and when one fails, the failed tests and
# their expectations are printed again at the end (scripts/test-failures.sh;
# compiler errors only when no test ran): CI keeps only the log's tail (the
# whole log: .build/test.log).
define swift_test
	@mkdir -p .build; : > .build/test.log; status=0; \
	for phase in $(1); do \
	  { $(SWIFT) test $$phase 2>&1; echo $$? > .build/test.status; } | tee -a .build/test.log; \
	  [ "$$status" != 0 ] || status=$$(cat .build/test.status); \
	done; \
	if [ "$$status" != 0 ]; then \
	  echo "=== make $@ failed ($$status); the failures (full log: .build/test.log) ==="; \
	  scripts/test-failures.sh .build/test.log; \
	  exit $$status; \
	fi
endef

# Builds moon and its tests, and fails when the compiler warned about
# moon's own code (Sources/, Tests/, and what their macros expand to; a
# dependency's warnings do not count).
# It reads what this build compiled: every file on a clean build, as CI's.
build-tests: deps
	@mkdir -p .build; { $(SWIFT) build --build-tests 2>&1; echo $$? > .build/build.status; } | tee .build/build.log; \
	status=$$(cat .build/build.status); [ "$$status" = 0 ] || exit $$status; \
	{ grep -E '^$(CURDIR)/(Sources|Tests)/[^:]+:[0-9]+:[0-9]+: warning: ' .build/build.log; \
	  awk '/^macro expansion [^:]+:[0-9]+:[0-9]+: warning: /{ w = $$0; getline origin; print origin " " w }' .build/build.log \
	    | grep -E '$(CURDIR)/(Sources|Tests)/'; } | sort -u > .build/warnings.txt; \
	if [ -s .build/warnings.txt ]; then \
	  echo "=== the compiler warned $$(wc -l < .build/warnings.txt) times about moon's own code (.build/warnings.txt) ==="; \
	  cat .build/warnings.txt; exit 1; \
	fi

test: deps test-deps build-tests
	$(call swift_test,--skip=MoonCLITests --filter=MoonCLITests)

test-unit: deps
	$(call swift_test,--skip=MoonCLITests)

test-e2e: deps test-deps
	$(SWIFT) build
	$(call swift_test,--filter=MoonCLITests)

# The end-to-end suite against the release build, the binary users get:
# static glibc, no run-time exclusivity checks and its own speed can fail
# where the debug build passes (NSS lookups crash a static binary).
test-release: release test-deps build-tests
	MOON_BIN=$(CURDIR)/$(RELEASE_BIN) $(MAKE) --no-print-directory test-e2e-only

test-e2e-only:
	$(call swift_test,--filter=MoonCLITests)

# The Slurm end-to-end tests on a real one-node cluster (root), stopped however they end.
test-slurm: deps
	$(SWIFT) build
	@[ "$$(id -u)" = 0 ] || { echo "test-slurm needs root to start a local Slurm cluster"; exit 1; }; \
	SLURM_CPUS=8 scripts/slurm/start-slurm.sh || exit 1; status=0; \
	$(SWIFT) test --filter Slurm || status=$$?; scripts/slurm/stop-slurm.sh; exit $$status

# The reactive core and the runner under the thread sanitizer.
tsan: deps
	$(SWIFT) test --scratch-path .build-tsan --sanitize=thread --filter 'MoonCommandTests|MoonProcessTests|MoonRunTests'

# Regenerates schema/moon-graph.schema.json from the code (the test suite checks they agree).
schema: build
	$(DEBUG_BIN) schema > schema/moon-graph.schema.json

man: deps
	$(SWIFT) package plugin generate-manual
	cp .build/plugins/GenerateManual/outputs/moon/moon.1 man/moon.1
	echo >> man/moon.1

completions: release
	mkdir -p .build/completions
	$(RELEASE_BIN) --generate-completion-script bash > .build/completions/moon.bash
	$(RELEASE_BIN) --generate-completion-script zsh  > .build/completions/_moon
	$(RELEASE_BIN) --generate-completion-script fish > .build/completions/moon.fish

install: release completions
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5
	install -m 755 $(RELEASE_BIN) $(DESTDIR)$(BINDIR)/moon
	install -m 644 man/moon.1 $(DESTDIR)$(MANDIR)/man1/moon.1
	install -m 644 man/moon.yaml.5 $(DESTDIR)$(MANDIR)/man5/moon.yaml.5
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 644 .build/completions/moon.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/moon
	install -m 644 .build/completions/_moon $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_moon
	install -m 644 .build/completions/moon.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/moon.fish

# libFuzzer + AddressSanitizer over the YAML loader and graph decoder, seeded
# from fuzz/corpus; crashes go to .build-fuzz/artifacts/. Then the shell-value
# fuzzer (fuzz/shell-values.py): random shell text around ${{ }} with values
# that would create a mark file if run, through the built moon, sh and bash;
# a mark is a failure (.build-fuzz/shell-artifacts/). Each gets FUZZ_SECONDS.
# The shell-value fuzzer starts from FUZZ_SEED, fixed so that a CI run
# repeats a sequence known to pass; FUZZ_SEED=random explores new ones.
FUZZ_SECONDS ?= 60
FUZZ_SEED ?= 7
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run.sh
	$(SWIFT) build --product moon
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/shell-values.py $(if $(filter random,$(FUZZ_SEED)),,--seed $(FUZZ_SEED))

# Speed against ninja, make and Snakemake on the same generated graphs (see bench/).
bench: release
	@command -v ninja >/dev/null || python3 -m pip install -q ninja
	@# The restore floor of bench/cache.py hashes with OpenSSL's SHA-256 (as fast as moon's) when its headers are there.
	@[ -e /usr/include/openssl/sha.h ] || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q libssl-dev >/dev/null 2>&1; } || \
	  echo "note: no libssl-dev; bench/cache.py's restore floor uses its own, slower SHA-256"
	python3 bench/bench.py $(RELEASE_BIN)
	python3 bench/uptodate.py $(RELEASE_BIN)
	python3 bench/cproject.py $(RELEASE_BIN)
	python3 bench/cache.py $(RELEASE_BIN)
	python3 bench/watch.py $(RELEASE_BIN)
	python3 bench/pipeline.py $(RELEASE_BIN)

clean:
	rm -rf .build .build-tsan
