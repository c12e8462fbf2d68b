# Parley: `make run` (the daemon on this machine's sound devices) and `make test`.
# Every target installs the Debian packages it needs first (apt-get, as root or through sudo).

SWIFT       ?= swift
PREFIX      ?= /usr/local
CONFIG      ?= config/parley.toml
DEMO_INPUT  ?= /usr/share/pocketsphinx/test/data/goforward.raw

DEBS := pkg-config libpocketsphinx-dev pocketsphinx pocketsphinx-en-us pocketsphinx-testdata \
        libespeak-ng-dev espeak-ng espeak-ng-data libasound2-dev libasound2-plugins alsa-utils \
        libsqlite3-dev apertium apertium-eng-spa apertium-apy sox pulseaudio pulseaudio-utils

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build release run demo test bench man completions clean

all: build

## deps: install the Debian packages that are missing (nothing happens when all are there)
deps:
	@missing=$$(for p in $(DEBS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing Debian packages:" $$missing; \
		$(SUDO) apt-get update -q && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

## run: start parleyd with config/parley.toml on the default sound devices
run: release
	@$(SWIFT) build -c release --show-bin-path >/dev/null
	@bin=$$($(SWIFT) build -c release --show-bin-path); \
	$$bin/parleyd --config $(CONFIG); rc=$$?; \
	if [ $$rc = 3 ]; then echo "make run: no usable microphone or speaker here; \`make demo\` runs a real recording through Parley without a sound card."; fi; \
	exit $$rc

## demo: run a real recording (pocketsphinx-testdata's goforward) through file mode and print the turn
demo: release
	@mkdir -p out
	@bin=$$($(SWIFT) build -c release --show-bin-path); \
	$$bin/parleyd --config config/demo.toml --input $(DEMO_INPUT) --output out/demo.wav && \
	echo "The spoken translation is in out/demo.wav (play it with: aplay out/demo.wav)."

## test: every test, unit and end to end, against the real engines
test: deps
	$(SWIFT) build --build-tests
	PARLEY_BIN_DIR=$$($(SWIFT) build --show-bin-path) $(SWIFT) test --skip-build

## man, completions: generated from the argument parser into out/man and out/completions
man: build
	$(SWIFT) build --product generate-manual
	@mkdir -p out/man
	bin=$$($(SWIFT) build --show-bin-path); $$bin/generate-manual $$bin/parley -o out/man && $$bin/generate-manual $$bin/parleyd -o out/man

completions: build
	@mkdir -p out/completions
	bin=$$($(SWIFT) build --show-bin-path); for shell in bash zsh fish; do $$bin/parley --generate-completion-script $$shell > out/completions/parley.$$shell; done

## bench: measurements for docs/benchmarks.md, on a release build
bench: release
	bench/idle-cpu.sh $$($(SWIFT) build -c release --show-bin-path) 20
	bench/latency.py $$($(SWIFT) build -c release --show-bin-path)

clean:
	rm -rf .build out
