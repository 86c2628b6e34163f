#!/usr/bin/env bash
# Install the Debian packages Kiln needs to build, test and benchmark, then
# the npm packages of tests/rest-client (a stock HBase REST client library the
# tests drive kiln-server with) from package-lock.json.
# As root it installs what is missing with apt-get; otherwise it prints the
# exact command to run. Safe to run repeatedly: it does nothing when all is there.
set -euo pipefail

PKGS=(build-essential pkg-config clang libclang-rt-14-dev python3-protobuf protobuf-compiler
      libopenmpi-dev openmpi-bin
      libsnappy-dev libcmocka-dev zlib1g-dev libzstd-dev liblz4-dev
      libcurl4-openssl-dev libjansson-dev
      curl redis-tools python3 nodejs npm iproute2)

# Extra packages when asked: deps.sh --bench (the peer harnesses of `make
# bench`), deps.sh --browser (headless Chromium for the status-page test).
for arg in "$@"; do
  case $arg in
  --bench) PKGS+=(librocksdb-dev libleveldb-dev redis-server redis-tools wrk) ;;
  --browser) PKGS+=(chromium) ;;
  esac
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)

# The stock HBase REST client of tests/serving/stock_client_test.sh: the npm
# package pinned by tests/rest-client/package-lock.json, installed into
# tests/rest-client/node_modules (not tracked) from the npm registry. A
# failure here does not stop a build; that test then fails, saying why.
rest_client() {
  local dir=$ROOT/tests/rest-client
  [ -f "$dir/node_modules/hbase/package.json" ] && return 0
  command -v npm >/dev/null || { echo "kiln: npm is missing: the stock REST client test will fail" >&2; return 0; }
  echo "kiln: installing the npm packages of tests/rest-client" >&2
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
    echo "kiln: npm ci in tests/rest-client failed: the stock REST client test will fail" >&2
  return 0
}

# One dpkg-query for all of them: every compile waits for this script, so a
# rebuild with nothing missing should cost it next to nothing.
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${PKGS[@]}" 2>/dev/null |
            awk '/ install ok installed$/ { print $1 }' || true)
missing=()
for p in "${PKGS[@]}"; do
  # Node from another packager (nodesource's nodejs carries npm) will do.
  case $p in
  nodejs) command -v node >/dev/null && continue ;;
  npm) command -v npm >/dev/null && continue ;;
  esac
  if ! grep -qxF -- "$p" <<<"$installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  rest_client
  exit $?
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
rest_client
