#!/usr/bin/env bash
# Install the Debian packages Kiln needs to build, test and benchmark.
# As root it installs what is missing with apt-get; otherwise it prints the
# exact command to run. Safe to run repeatedly: it does nothing when all is there.
set -euo pipefail

PKGS=(build-essential pkg-config clang libclang-rt-14-dev
      libopenmpi-dev openmpi-bin
      libsnappy-dev libcmocka-dev zlib1g-dev libzstd-dev liblz4-dev
      libcurl4-openssl-dev libjansson-dev
      curl redis-tools python3 nodejs npm)

# Extra packages when asked: deps.sh --bench (the peer harnesses of `make
# bench`), deps.sh --browser (headless Chromium for the status-page test).
for arg in "$@"; do
  case $arg in
  --bench) PKGS+=(librocksdb-dev libleveldb-dev redis-server redis-tools wrk) ;;
  --browser) PKGS+=(chromium) ;;
  esac
done

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "kiln: missing packages: ${missing[*]}" >&2
  echo "run: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi

echo "kiln: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
