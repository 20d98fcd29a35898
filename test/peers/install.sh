#!/usr/bin/env bash
# The peers' own integration targets, at the reference's versions (test/bench/install.sh pins them),
# from their PyPI source distributions (CI reaches PyPI, not GitHub), unpacked outside the repo:
#   ${KPLAY_PEERS_DIR:-~/.cache/kplay-bench/peers}/kubernetes.core-6.2.0/tests/integration/targets
#       (the `ansible` 12.3.0 sdist bundles kubernetes.core 6.2.0 with its tests)
#   ${KPLAY_PEERS_DIR:-~/.cache/kplay-bench/peers}/ansible-core-2.19.14/test/integration/targets
# Idempotent: a second run takes a second. Their code is not ours to ship: nothing here is committed.
set -euo pipefail
PEERS="${KPLAY_PEERS_DIR:-$HOME/.cache/kplay-bench/peers}"
mkdir -p "$PEERS"

# fetch SPEC (a pip requirement) → the path of its sdist in $PEERS/dl
fetch_sdist() {
  local spec="$1" name="$2"
  local found
  found="$(ls "$PEERS/dl/$name"-*.tar.gz 2>/dev/null | head -1 || true)"
  if [ -z "$found" ]; then
    mkdir -p "$PEERS/dl"
    python3 -m pip download -q --no-deps --no-binary :all: "$spec" -d "$PEERS/dl" >&2
    found="$(ls "$PEERS/dl/$name"-*.tar.gz | head -1)"
  fi
  echo "$found"
}

# unpack MEMBER of TARBALL (its first path component stripped) into DEST, once
unpack() {
  local tarball="$1" member="$2" dest="$3"
  [ -f "$dest/.unpacked" ] && return 0
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  tar -xzf "$tarball" -C "$dest.tmp" --strip-components=1 --wildcards "*/$member"
  touch "$dest.tmp/.unpacked"
  rm -rf "$dest" && mv "$dest.tmp" "$dest"
}

KCORE="$PEERS/kubernetes.core-6.2.0"
if [ ! -f "$KCORE/.unpacked" ]; then
  unpack "$(fetch_sdist 'ansible==12.3.0' ansible)" 'ansible_collections/kubernetes/core/tests/integration' "$KCORE.bundle"
  rm -rf "$KCORE" && mv "$KCORE.bundle/ansible_collections/kubernetes/core" "$KCORE" && touch "$KCORE/.unpacked" && rm -rf "$KCORE.bundle"
fi
echo "peers install: kubernetes.core 6.2.0 targets at $KCORE/tests/integration/targets"

ACORE="$PEERS/ansible-core-2.19.14"
unpack "$(fetch_sdist 'ansible-core==2.19.14' ansible_core)" 'test/integration' "$ACORE"
echo "peers install: ansible-core 2.19.14 targets at $ACORE/test/integration/targets"
