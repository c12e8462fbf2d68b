#!/usr/bin/env bash
# `make install` into a staging folder honours PREFIX and DESTDIR, installs every piece with the
# binaries stripped, points the unit at the installed binary, and never overwrites a config the
# user has edited; `make uninstall` removes it all again but an edited config.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
fail() { echo "check-install: $*" >&2; exit 1; }
# What `make` would build, from the debug build (the tests do not build a release).
make -C "$root" --no-print-directory man completions >"$stage.log" 2>&1 || { cat "$stage.log" >&2; fail "make man completions failed"; }
install_once() { make -C "$root" --no-print-directory install PREFIX=/usr DESTDIR="$stage" CONFIGURATION=debug >"$stage.log" 2>&1 || { cat "$stage.log" >&2; fail "make install failed"; }; }

install_once
for file in usr/bin/parleyd usr/bin/parley etc/parley/parley.toml \
  usr/lib/systemd/system/parleyd.service usr/lib/systemd/system/parleyd.socket usr/lib/sysusers.d/parley.conf \
  usr/lib/tmpfiles.d/parley.conf \
  usr/share/man/man1/parley.1 usr/share/man/man8/parleyd.8 usr/share/man/man5/parley.toml.5 \
  usr/share/bash-completion/completions/parley usr/share/zsh/site-functions/_parley \
  usr/share/fish/vendor_completions.d/parley.fish usr/share/doc/parley/raspberry-pi.md; do
  [ -s "$stage/$file" ] || fail "$file was not installed"
done
[ -x "$stage/usr/bin/parleyd" ] || fail "parleyd is not executable"
# Stripped: no symbol table left (the build's own binaries keep theirs). readelf's output is read
# whole first: under pipefail, `readelf | grep -q` fails at random when grep quits before readelf
# has written its last lines (SIGPIPE).
has_symtab() { local sections; sections=$(readelf -S --wide "$1") && grep -q '\.symtab' <<<"$sections"; }
for binary in parleyd parley; do
  has_symtab "$stage/usr/bin/$binary" && fail "the installed $binary is not stripped"
  has_symtab "$root/.build/debug/$binary" || fail "the built $binary has no symbols to strip?"
done
# The Spanish model, beside the project's licence, and a config that hears it where it was installed.
for file in NOTICE es.lm.bin es.dict acoustic/mdef acoustic/feat.params acoustic/means acoustic/sendump; do
  [ -s "$stage/usr/share/parley/models/es/$file" ] || fail "the Spanish model's $file was not installed"
done
[ -s "$stage/usr/share/parley/LICENSE" ] || fail "the project's LICENSE was not installed beside the model"
grep -qx 'acoustic_model = "/usr/share/parley/models/es/acoustic"' "$stage/etc/parley/parley.toml" ||
  fail "the installed config does not point at the installed Spanish model"
"$stage/usr/bin/parley" --version >/dev/null || fail "the installed parley does not run"
grep -qx 'ExecStart=/usr/bin/parleyd --config /etc/parley/parley.toml' "$stage/usr/lib/systemd/system/parleyd.service" ||
  fail "the unit's ExecStart does not point at the installed parleyd"
grep -qE '@(bindir|sysconfdir)@' "$stage/usr/lib/systemd/system/parleyd.service" && fail "the unit still has @placeholders@"
[ -n "$(find "$stage" -path "$stage/usr/local*")" ] && fail "PREFIX=/usr was ignored (files under usr/local)"

# A config the user edited survives a reinstall; the new default goes next to it.
echo '# edited by the user' >> "$stage/etc/parley/parley.toml"
install_once
grep -q '^# edited by the user' "$stage/etc/parley/parley.toml" || fail "make install overwrote an edited config"
cmp -s "$root/out/parley.toml" "$stage/etc/parley/parley.toml.dist" || fail "the new default config was not put in parley.toml.dist"

# make uninstall removes everything but the edited config; with the default config, that goes too.
uninstall() { make -C "$root" --no-print-directory uninstall PREFIX=/usr DESTDIR="$stage" >"$stage.log" 2>&1 || { cat "$stage.log" >&2; fail "make uninstall failed"; }; }
uninstall
left=$(cd "$stage" && find . -type f | sort)
[ "$left" = "./etc/parley/parley.toml" ] || fail "make uninstall left these (or removed the edited config): $left"
grep -q "kept your edited" "$stage.log" || fail "make uninstall did not say it kept the edited config"
install_once
uninstall
left=$(cd "$stage" && find . -type f | sort)
[ "$left" = "./etc/parley/parley.toml" ] || fail "a second make uninstall left: $left"
rm "$stage/etc/parley/parley.toml"
install_once
uninstall
left=$(cd "$stage" && find . -type f)
[ -z "$left" ] || fail "make uninstall of an unedited install left: $left"
rm -f "$stage.log"
echo "check-install: make install PREFIX=/usr DESTDIR=... installs everything, stripped, and keeps an edited config; make uninstall removes it"
