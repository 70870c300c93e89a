# moon — build, test, run. `make run` and `make test` are the two commands a
# new user needs; everything else is for contributors.

SWIFT      ?= swift
PREFIX     ?= /usr/local
BINDIR      = $(PREFIX)/bin
MANDIR      = $(PREFIX)/share/man
DEBUG_BIN   = .build/debug/moon
RELEASE_BIN = .build/release/moon

.PHONY: all deps test-deps test-slurm fuzz build release run test tsan install man completions bench clean schema

all: build

# libyaml is moon's YAML parser (a system library found through pkg-config);
# SQLite holds its state (.moon/state.db, through GRDB). Install them when
# missing: with apt-get as root, else print the command and stop.
deps:
	@if ! pkg-config --exists sqlite3 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing libsqlite3-dev (moon keeps its state in SQLite)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q libsqlite3-dev pkg-config >/dev/null || \
	    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libsqlite3-dev pkg-config >/dev/null; }; \
	  else \
	    echo "moon needs SQLite. Install it with:  sudo apt-get install libsqlite3-dev pkg-config"; exit 1; \
	  fi; \
	fi
	@if ! pkg-config --exists yaml-0.1 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing libyaml-dev (moon parses YAML with libyaml)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q libyaml-dev pkg-config >/dev/null || \
	    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libyaml-dev pkg-config >/dev/null; }; \
	  else \
	    echo "moon needs libyaml. Install it with:  sudo apt-get install libyaml-dev pkg-config"; exit 1; \
	  fi; \
	fi

# What only the tests need: tmux (terminal tests read the screen through it),
# Graphviz (`moon graph --format dot` is checked by `dot`), and Python's
# jsonschema and PyYAML (the schemas are checked by a real validator).
# Missing ones are installed when possible; tests that still lack them say so.
test-deps:
	@missing=""; command -v tmux >/dev/null 2>&1 || missing="$$missing tmux"; \
	command -v dot >/dev/null 2>&1 || missing="$$missing graphviz"; \
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

# The Swift runtime and Foundation linked in (--static-swift-stdlib): peak
# RSS is ~4.5 MB lower on every run (fewer shared-library pages touched at
# startup), for a larger binary and a slower build. A position-dependent
# executable (-no-pie): the ~90,000 pointers of that code are not relocated
# at every start, ~3.5 MB lower peak RSS and ~0.4 ms sooner; the price is no
# address randomisation of moon's own code. Only the symbols shared
# libraries need are exported (--no-export-dynamic: 588 instead of 14,000),
# ~0.4 ms less of the dynamic loader's work. libstdc++ and libgcc are
# linked in too (the C++ of the Swift runtime and ICU): loading
# libstdc++.so and resolving its 440 type-info relocations, symbol by
# symbol, was ~0.6 ms of every start. The Swift driver asks for `-lstdc++`
# itself; a directory holding only libstdc++.a, searched first, makes that
# the static one (where the compiler cannot find libstdc++.a, the shared
# one is used as before). See docs/decisions.md.
STATIC_LIBS  = $(CURDIR)/.build/static-libs
RELEASE_FLAGS ?= --static-swift-stdlib -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xlinker --no-export-dynamic \
	-Xswiftc -Xclang-linker -Xswiftc -static-libgcc -Xlinker -L$(STATIC_LIBS)

release: deps
	@mkdir -p $(STATIC_LIBS); lib=$$(cc -print-file-name=libstdc++.a 2>/dev/null || clang -print-file-name=libstdc++.a 2>/dev/null); \
	case "$$lib" in /*) ln -sf "$$lib" $(STATIC_LIBS)/libstdc++.a ;; *) rm -f $(STATIC_LIBS)/libstdc++.a ;; esac
	$(SWIFT) build -c release $(RELEASE_FLAGS)

# Runs the quickstart graph with a release build.
run: release
	$(RELEASE_BIN) run examples/quickstart.yaml

# The whole suite: unit tests of every stage and end-to-end tests of the
# built binary (which find it in .build/debug). When it fails, the failed
# expectations are printed again at the end: CI keeps only the log's tail.
test: deps test-deps
	$(SWIFT) build
	@{ $(SWIFT) test 2>&1; echo $$? > .build/test.status; } | tee .build/test.log; \
	status=$$(cat .build/test.status); \
	if [ "$$status" != 0 ]; then \
	  echo "=== make test failed ($$status); the failures (full log: .build/test.log) ==="; \
	  grep -E -A6 'recorded an issue|error: |Fatal error|crashed|exited with' .build/test.log | grep -v '^. Test .* started\.$$' | head -80; \
	  exit $$status; \
	fi

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
# from fuzz/corpus; crashes go to .build-fuzz/artifacts/.
FUZZ_SECONDS ?= 60
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run.sh

# Speed against ninja and make on the same generated graphs (see bench/).
bench: release
	@command -v ninja >/dev/null || python3 -m pip install -q ninja
	python3 bench/bench.py $(RELEASE_BIN)
	python3 bench/uptodate.py $(RELEASE_BIN)

clean:
	rm -rf .build .build-tsan
