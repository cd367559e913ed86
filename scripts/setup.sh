#!/usr/bin/env bash
# Installs tessera's dependencies (Debian packages only) and builds it.
# Idempotent: packages already present are not reinstalled, the build is incremental.
#   bash scripts/setup.sh [BUILD_DIR]      (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}

packages=(
  build-essential cmake pkg-config
  libopenmpi-dev openmpi-bin
  libopencv-dev libtbb-dev libboost-program-options-dev
  libgtest-dev libbenchmark-dev libsqlite3-dev sqlite3 nlohmann-json3-dev
  iproute2 util-linux python3
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
echo "setup: built into $build_dir/ (programs in $build_dir/bin)" >&2
