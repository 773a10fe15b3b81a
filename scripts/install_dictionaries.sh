#!/usr/bin/env bash
# Install the FreeDict bilingual dictionaries (Debian packages) used for translation detection.
# The direct pairs without English (deu-spa, fra-spa, fra-ita, ita-spa) beat a pivot through
# English on the real Gutenberg translations (docs/EVALUATION.md, issue 12).
# Idempotent; uses sudo when not root. Without apt it says so and carries on: bookdup then
# finds editions and partial duplicates but no translations.
set -euo pipefail
PACKAGES="dict-freedict-eng-deu dict-freedict-deu-eng dict-freedict-eng-fra dict-freedict-fra-eng
dict-freedict-eng-spa dict-freedict-spa-eng dict-freedict-eng-ita dict-freedict-ita-eng
dict-freedict-deu-fra dict-freedict-fra-deu dict-freedict-deu-ita dict-freedict-ita-deu
dict-freedict-spa-deu dict-freedict-deu-spa dict-freedict-fra-spa dict-freedict-fra-ita
dict-freedict-ita-spa"
missing=""
for p in $PACKAGES; do
  f="/usr/share/dictd/freedict-${p#dict-freedict-}.index"
  [ -f "$f" ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null; then
  echo "warning: no apt-get; FreeDict dictionaries missing:$missing (translations disabled)" >&2
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "warning: not root and no sudo; cannot install$missing (translations disabled)" >&2
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y -q $missing >/dev/null 2>&1 || {
  $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y -q $missing >/dev/null
}
echo "installed:$missing"
